//! Planes side by side: up to `L` 2D planes copied with their padding into one buffer of
//! `[A; L]` elements, plane `c` in lane `c`, so that a sliding window runs over `L` planes at
//! once with one vector per position and tap, whatever the strides (the depthwise
//! convolution over many small planes, where a plane at a time costs more in its set-up and
//! borders than in its sums).
//!
//! The buffer holds the padded plane only as far as the taps reach: `(o − 1)·s + (k − 1)·d + 1`
//! rows and columns. Output `(oh, ow)` meets tap `(i, j)` at element
//! `(oh·sh + i·dh)·cols + ow·sw + j·dw`, so every tap is one fixed offset from the output's
//! own position.

use super::phases::Window2;
use super::simd::Simd;

/// Planes per block: one AVX-512 register of f32 per position.
pub(crate) const LANES: usize = 16;

/// A square of `LANES × LANES` values.
pub(crate) type Square<A> = [[A; LANES]; LANES];

/// An element the lanes hold, and how a square of them is transposed on a vector unit.
pub(crate) trait Lane: Copy {
    /// `m` transposed (`[j][i]` is `m[i][j]`), on `unit` where it has a way (only to be called
    /// inside [`vectorised_for`](super::simd::vectorised_for), with the unit it passed).
    #[inline(always)]
    fn transpose(m: &Square<Self>, unit: Simd) -> Square<Self> {
        let _ = unit;
        plain_transpose(m)
    }
}

/// [`Lane::transpose`] element by element.
#[inline(always)]
fn plain_transpose<A: Copy>(m: &Square<A>) -> Square<A> {
    std::array::from_fn(|j| std::array::from_fn(|i| m[i][j]))
}

macro_rules! plain_lane {
    ($($t:ty)*) => {$( impl Lane for $t {} )*};
}
plain_lane!(f64 i8 i16 i32 i64 u8 u16 u32 u64);

impl Lane for f32 {
    #[inline(always)]
    fn transpose(m: &Square<f32>, unit: Simd) -> Square<f32> {
        #[cfg(target_arch = "x86_64")]
        if unit == Simd::Avx512 {
            // SAFETY: the caller runs inside `vectorised_for`'s AVX-512 copy, which has the
            // features.
            return unsafe { x86::transpose(m) };
        }
        let _ = unit;
        plain_transpose(m)
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    use super::{LANES, Square};

    /// The 16 × 16 transpose in registers: pairs of rows interleaved, then fours, then the
    /// 128-bit quarters moved twice.
    ///
    /// # Safety
    /// AVX-512F must be present.
    #[inline(always)]
    pub(super) unsafe fn transpose(m: &Square<f32>) -> Square<f32> {
        // SAFETY: each row is 16 f32 (one register); the caller guarantees AVX-512F.
        unsafe {
            let zero = _mm512_setzero_ps();
            let mut r = [zero; LANES];
            for (r, row) in r.iter_mut().zip(m) {
                *r = _mm512_loadu_ps(row.as_ptr());
            }
            // Per 128-bit quarter: rows 2i, 2i+1 as [a0 b0 a1 b1] and [a2 b2 a3 b3].
            let mut t = [zero; LANES];
            for i in 0..LANES / 2 {
                t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
                t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
            }
            // u[4g + k]: in quarter q, column 4q + k of rows 4g .. 4g + 4.
            let mut u = [zero; LANES];
            for g in 0..LANES / 4 {
                let t = &t[4 * g..4 * g + 4];
                u[4 * g] = _mm512_shuffle_ps::<0x44>(t[0], t[2]);
                u[4 * g + 1] = _mm512_shuffle_ps::<0xEE>(t[0], t[2]);
                u[4 * g + 2] = _mm512_shuffle_ps::<0x44>(t[1], t[3]);
                u[4 * g + 3] = _mm512_shuffle_ps::<0xEE>(t[1], t[3]);
            }
            let mut out = [[0f32; LANES]; LANES];
            for k in 0..4 {
                // Quarters 0 and 2, then 1 and 3, of row groups 0, 1 and of 2, 3.
                let a0 = _mm512_shuffle_f32x4::<0x88>(u[k], u[4 + k]);
                let a1 = _mm512_shuffle_f32x4::<0xDD>(u[k], u[4 + k]);
                let b0 = _mm512_shuffle_f32x4::<0x88>(u[8 + k], u[12 + k]);
                let b1 = _mm512_shuffle_f32x4::<0xDD>(u[8 + k], u[12 + k]);
                let rows = [
                    (k, _mm512_shuffle_f32x4::<0x88>(a0, b0)),
                    (8 + k, _mm512_shuffle_f32x4::<0xDD>(a0, b0)),
                    (4 + k, _mm512_shuffle_f32x4::<0x88>(a1, b1)),
                    (12 + k, _mm512_shuffle_f32x4::<0xDD>(a1, b1)),
                ];
                for (j, v) in rows {
                    _mm512_storeu_ps(out[j].as_mut_ptr(), v);
                }
            }
            out
        }
    }
}

/// The layout of [`Lanes::fill`]'s copy: `rows × cols` positions of the padded plane.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Lanes {
    w: Window2,
    rows: usize,
    cols: usize,
}

impl Lanes {
    /// The layout for `w` (at least one output), or `None` where the copy would hold more
    /// than the input and output planes and 64 Ki positions (huge pads, strides or
    /// dilations), or the sizes overflow.
    pub(crate) fn new(w: Window2) -> Option<Lanes> {
        let extent = |a: usize| -> Option<usize> {
            let reach = w.kernel[a].checked_sub(1)?.checked_mul(w.dilation[a])?;
            w.output[a]
                .checked_sub(1)?
                .checked_mul(w.stride[a])?
                .checked_add(reach)?
                .checked_add(1)
        };
        let (rows, cols) = (extent(0)?, extent(1)?);
        let len = rows.checked_mul(cols)?;
        w.copy_fits(len).then_some(Lanes { w, rows, cols })
    }

    /// Positions of the copy (each `L` elements).
    pub(crate) fn len(&self) -> usize {
        self.rows * self.cols
    }

    /// Output positions of a plane.
    pub(crate) fn outputs(&self) -> usize {
        self.w.output[0] * self.w.output[1]
    }

    /// Each tap's offset in the copy, in window order (rows, then columns).
    pub(crate) fn offsets(&self) -> impl Iterator<Item = usize> + '_ {
        let ([kh, kw], [dh, dw]) = (self.w.kernel, self.w.dilation);
        (0..kh).flat_map(move |i| (0..kw).map(move |j| i * dh * self.cols + j * dw))
    }

    /// Copies `planes` (`count` whole input planes, one after the other, `1 ≤ count ≤
    /// LANES`) into `buf`, plane `c` in lane `c`, each value through `wide`. The padding is
    /// written (as `pad`, in every lane) only when `buf` is not yet the layout's size: every
    /// block of planes lands on the same positions, so between blocks of one layout the
    /// padding stays. Lanes past the planes hold any of the planes' values. Planes that land
    /// whole in the copy go in squares of `LANES` positions transposed on `unit` (only to be
    /// called inside [`vectorised_for`](super::simd::vectorised_for), with the unit it passed).
    #[inline(always)]
    pub(crate) fn fill<S: Copy, A: Lane>(
        &self,
        planes: &[S],
        count: usize,
        pad: A,
        buf: &mut Vec<[A; LANES]>,
        wide: impl Fn(S) -> A + Copy,
        unit: Simd,
    ) {
        let ([ih, iw], [ph, pw]) = (self.w.input, self.w.pad);
        if buf.len() != self.len() {
            buf.clear();
            buf.resize(self.len(), [pad; LANES]);
        }
        let in_plane = ih * iw;
        if in_plane == 0 || count == 0 {
            return;
        }
        let planes = &planes[..count * in_plane];
        // The data rows and columns that land in the copy (past its end no tap reaches).
        let (h, w) = (
            ih.min(self.rows.saturating_sub(ph)),
            iw.min(self.cols.saturating_sub(pw)),
        );
        if (h, w) == (ih, iw) && in_plane >= LANES {
            // Squares of positions `f0..f0 + LANES` of every plane (the last one overlapping
            // the one before it); lane `c` past the planes reads the last plane.
            let mut f0 = 0;
            while f0 < in_plane {
                let f = f0.min(in_plane - LANES);
                let mut square: Square<A> = [[pad; LANES]; LANES];
                for (c, row) in square.iter_mut().enumerate() {
                    let src = &planes[c.min(count - 1) * in_plane + f..][..LANES];
                    for (d, &v) in row.iter_mut().zip(src) {
                        *d = wide(v);
                    }
                }
                let square = A::transpose(&square, unit);
                let (mut r, mut col) = (f / iw, f % iw);
                for v in square {
                    buf[(r + ph) * self.cols + col + pw] = v;
                    col += 1;
                    if col == iw {
                        (r, col) = (r + 1, 0);
                    }
                }
                f0 = f + LANES;
            }
            return;
        }
        for (c, plane) in planes.chunks_exact(in_plane).enumerate() {
            for (r, src) in plane.chunks_exact(iw).take(h).enumerate() {
                let at = (r + ph) * self.cols + pw;
                for (d, &v) in buf[at..at + w].iter_mut().zip(&src[..w]) {
                    d[c] = wide(v);
                }
            }
        }
    }

    /// The windows of every output position over the copy `buf`: `step` (which updates each
    /// lane's sum from its weight and value) folded over `taps` (offset into the copy, each
    /// lane's weight, one per tap in [`offsets`](Self::offsets)' order) in order from `init`
    /// in every lane, handed to `emit` a block of positions at a time with the first one's
    /// index in the plane (row by row): [`LANES`] positions at a time where the plane has as
    /// many, so that a block is a [`Square`]. The last block may overlap the one before it
    /// (its positions handed again, with the same values). The taps of a kernel row that
    /// lies in the padding for every position of a block are skipped: `step` over the
    /// padding must leave the sums as they are (a sum from +0 plus `w·0` for finite `w`).
    #[inline(always)]
    pub(crate) fn sweep<A: Copy, W: Copy>(
        &self,
        buf: &[[A; LANES]],
        taps: &[(usize, [W; LANES])],
        init: A,
        step: impl Fn(&mut [A; LANES], &[W; LANES], &[A; LANES]) + Copy,
        emit: impl FnMut(usize, &[[A; LANES]]),
    ) {
        match self.outputs() {
            LANES.. => self.blocks::<A, W, LANES>(buf, taps, init, step, emit),
            8.. => self.blocks::<A, W, 8>(buf, taps, init, step, emit),
            4.. => self.blocks::<A, W, 4>(buf, taps, init, step, emit),
            2.. => self.blocks::<A, W, 2>(buf, taps, init, step, emit),
            _ => self.blocks::<A, W, 1>(buf, taps, init, step, emit),
        }
    }

    /// [`sweep`](Self::sweep) in blocks of `N` positions (at most the plane's outputs), each
    /// computed in parts of at most 8 (which the compiler keeps in registers).
    #[inline(always)]
    fn blocks<A: Copy, W: Copy, const N: usize>(
        &self,
        buf: &[[A; LANES]],
        taps: &[(usize, [W; LANES])],
        init: A,
        step: impl Fn(&mut [A; LANES], &[W; LANES], &[A; LANES]) + Copy,
        mut emit: impl FnMut(usize, &[[A; LANES]]),
    ) {
        let n = self.outputs();
        let ow_n = self.w.output[1];
        let [sh, sw] = self.w.stride;
        let kw = self.w.kernel[1];
        // The kernel rows that reach data from output row `r` (both ends fall as `r` grows).
        let ([ih, _], [ph, _], [dh, _]) = (self.w.input, self.w.pad, self.w.dilation);
        let reach = |r: usize| {
            let top = r * sh;
            let lo = ph.saturating_sub(top).div_ceil(dh);
            let hi = (ih + ph).saturating_sub(top).div_ceil(dh);
            (lo, hi.min(self.w.kernel[0]))
        };
        let whole = taps.len() == self.w.kernel[0] * kw;
        let mut p0 = 0;
        while p0 < n {
            // The last block ends at the last position.
            let first = p0.min(n - N);
            // Where each output (row by row) meets the first tap.
            let mut q = [0usize; N];
            let (mut r, mut col) = (first / ow_n, first % ow_n);
            for q in &mut q {
                *q = r * sh * self.cols + col * sw;
                col += 1;
                if col == ow_n {
                    (r, col) = (r + 1, 0);
                }
            }
            // The block's rows reach the kernel rows of its last row's first through its
            // first row's last.
            let taps = if whole {
                let (lo, _) = reach((first + N - 1) / ow_n);
                let (_, hi) = reach(first / ow_n);
                &taps[(lo * kw).min(hi * kw)..hi * kw]
            } else {
                taps
            };
            let mut acc = [[init; LANES]; N];
            // With column stride 1 and the block within one output row, its positions lie
            // side by side in the copy: each tap's values are one slice.
            let run = sw == 1 && first % ow_n + N <= ow_n;
            if N >= 8 {
                for (acc, q) in acc.chunks_exact_mut(8).zip(q.chunks_exact(8)) {
                    let acc: &mut [[A; LANES]; 8] = acc.try_into().expect("8");
                    let q: &[usize; 8] = q.try_into().expect("8");
                    if run {
                        part_run::<A, W, 8>(buf, taps, step, q[0], acc);
                    } else {
                        part::<A, W, 8>(buf, taps, step, q, acc);
                    }
                }
            } else if run {
                part_run::<A, W, N>(buf, taps, step, q[0], &mut acc);
            } else {
                part::<A, W, N>(buf, taps, step, &q, &mut acc);
            }
            emit(first, &acc);
            p0 = first + N;
        }
    }
}

/// The sums of [`Lanes::blocks`] at the `M` positions `q` (`acc` holding `init`).
#[inline(always)]
fn part<A: Copy, W: Copy, const M: usize>(
    buf: &[[A; LANES]],
    taps: &[(usize, [W; LANES])],
    step: impl Fn(&mut [A; LANES], &[W; LANES], &[A; LANES]) + Copy,
    q: &[usize; M],
    acc: &mut [[A; LANES]; M],
) {
    // In registers through the taps.
    let mut sums = *acc;
    for &(off, wv) in taps {
        for (a, &q) in sums.iter_mut().zip(q) {
            step(a, &wv, &buf[q + off]);
        }
    }
    *acc = sums;
}

/// [`part`] at the `M` positions `q0, q0 + 1, …` of the copy: each tap's values one slice
/// (one bounds check, and loads at fixed offsets from one address).
#[inline(always)]
fn part_run<A: Copy, W: Copy, const M: usize>(
    buf: &[[A; LANES]],
    taps: &[(usize, [W; LANES])],
    step: impl Fn(&mut [A; LANES], &[W; LANES], &[A; LANES]) + Copy,
    q0: usize,
    acc: &mut [[A; LANES]; M],
) {
    let mut sums = *acc;
    for &(off, wv) in taps {
        let xs: &[[A; LANES]; M] = buf[q0 + off..][..M].try_into().expect("M");
        for (a, x) in sums.iter_mut().zip(xs) {
            step(a, &wv, x);
        }
    }
    *acc = sums;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::kernel::simd::vectorised_for;

    #[test]
    fn windows_over_lanes_match_each_plane_on_its_own() {
        // Strides, dilations and pads both ways; planes that fill the lanes and that do not;
        // planes of fewer positions than a square (filled lane by lane) and of more (filled
        // in squares, the last overlapping); outputs fewer than a block and not a multiple of
        // one. Each lane gets the window folds of its own plane, the padding counted as
        // zeros, on every vector unit this CPU has.
        let cases = [
            ([7, 7], [3, 3], [1, 1], [1, 1], [1, 1], 3usize),
            ([7, 7], [3, 3], [1, 1], [1, 1], [1, 1], 16),
            ([14, 14], [3, 3], [2, 2], [1, 1], [1, 1], 13),
            ([5, 9], [3, 5], [1, 2], [2, 1], [2, 0], 2),
            ([2, 3], [3, 3], [1, 1], [1, 1], [1, 1], 16),
            ([1, 1], [1, 1], [1, 1], [1, 1], [0, 0], 1),
            ([9, 4], [2, 3], [3, 1], [1, 2], [0, 2], 5),
            // Rows and columns of the data past the taps' reach.
            ([8, 9], [2, 2], [3, 3], [1, 1], [0, 0], 16),
            // Output rows of more than a block: blocks within a row (their positions side by
            // side in the copy, the last one overlapping) and across rows; row stride 2. (No
            // padding rows: a block would skip them, and this fold is not blind to zeros.)
            ([5, 40], [3, 5], [1, 1], [1, 1], [0, 2], 16),
            ([9, 20], [5, 5], [2, 1], [1, 1], [0, 2], 7),
        ];
        let units = [Simd::None, Simd::Avx2, Simd::Avx512];
        for (input, kernel, stride, dilation, pad, planes) in cases {
            let out = |a: usize| {
                (input[a] + 2 * pad[a] - dilation[a] * (kernel[a] - 1) - 1) / stride[a] + 1
            };
            let output = [out(0), out(1)];
            let w = Window2 {
                input,
                kernel,
                output,
                stride,
                dilation,
                pad,
            };
            let lanes = Lanes::new(w).unwrap();
            let plane = input[0] * input[1];
            let x: Vec<f32> = (0..planes * plane)
                .map(|v| ((v * 7919) % 101) as f32 - 50.0)
                .collect();
            let taps = kernel[0] * kernel[1];
            let wk: Vec<f32> = (0..planes * taps)
                .map(|v| ((v * 31) % 13) as f32 - 6.0)
                .collect();
            let tap_list: Vec<(usize, [f32; LANES])> = lanes
                .offsets()
                .enumerate()
                .map(|(t, off)| {
                    let weights = std::array::from_fn(|c| wk[c.min(planes - 1) * taps + t]);
                    (off, weights)
                })
                .collect();
            // An order-sensitive fold, exact in f32 for these small integers.
            let fold = |a: f32, w: f32, v: f32| a * 3.0 + w * v;
            let step = |a: &mut [f32; LANES], w: &[f32; LANES], x: &[f32; LANES]| {
                for ((a, &w), &x) in a.iter_mut().zip(w).zip(x) {
                    *a = fold(*a, w, x);
                }
            };
            for unit in units
                .into_iter()
                .filter(|&u| u <= super::super::simd::simd())
            {
                let mut buf = Vec::new();
                let mut got = vec![vec![None; output[0] * output[1]]; planes];
                vectorised_for(|_| {
                    lanes.fill(&x, planes, 0f32, &mut buf, |v| v, unit);
                    lanes.sweep(&buf, &tap_list, 0f32, step, |p0, block| {
                        for (i, v) in block.iter().enumerate() {
                            for (c, got) in got.iter_mut().enumerate() {
                                let slot = &mut got[p0 + i];
                                assert!(slot.is_none_or(|s| s == v[c]), "an overlap differs");
                                *slot = Some(v[c]);
                            }
                        }
                    });
                });
                for (c, got) in got.iter().enumerate() {
                    for oh in 0..output[0] {
                        for ow in 0..output[1] {
                            let mut acc = 0f32;
                            for i in 0..kernel[0] {
                                for j in 0..kernel[1] {
                                    let r = (oh * stride[0] + i * dilation[0]) as isize
                                        - pad[0] as isize;
                                    let s = (ow * stride[1] + j * dilation[1]) as isize
                                        - pad[1] as isize;
                                    let inside = (0..input[0] as isize).contains(&r)
                                        && (0..input[1] as isize).contains(&s);
                                    let v = if inside {
                                        x[c * plane + r as usize * input[1] + s as usize]
                                    } else {
                                        0.0
                                    };
                                    acc = fold(acc, wk[c * taps + i * kernel[1] + j], v);
                                }
                            }
                            assert_eq!(
                                got[oh * output[1] + ow],
                                Some(acc),
                                "{w:?} {unit:?} plane {c} at {oh},{ow}"
                            );
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn squares_transpose_on_every_unit() {
        let m: Square<f32> = std::array::from_fn(|i| std::array::from_fn(|j| (i * 16 + j) as f32));
        let want: Square<f32> = std::array::from_fn(|j| std::array::from_fn(|i| m[i][j]));
        for unit in [Simd::None, Simd::Avx2, Simd::Avx512] {
            if unit <= super::super::simd::simd() {
                assert_eq!(
                    vectorised_for(|_| f32::transpose(&m, unit)),
                    want,
                    "{unit:?}"
                );
            }
        }
        let n: Square<i16> = std::array::from_fn(|i| std::array::from_fn(|j| (i * 16 + j) as i16));
        assert_eq!(i16::transpose(&n, Simd::None)[3][5], n[5][3]);
    }

    #[test]
    fn copies_are_bounded() {
        let w = |stride: usize| Window2 {
            input: [5, 5],
            kernel: [3, 3],
            output: [2, 2],
            stride: [stride; 2],
            dilation: [1, 1],
            pad: [1, 1],
        };
        assert_eq!(Lanes::new(w(2)).map(|l| l.len()), Some(25));
        assert_eq!(Lanes::new(w(1 << 20)), None);
    }
}
