//! A 2D plane copied with its padding into the planes of the strides' phases, so that each tap
//! of a sliding window is one fixed offset from every output: the flat sweeps of the depthwise
//! convolution and of MaxPool.
//!
//! At strides `sh`, `sw`, phase `(a, b)` holds the padded plane's rows `a, a + sh, …` and
//! columns `b, b + sw, …` (at stride 1 the one phase is the padded plane). Output `(oh, ow)`
//! meets each tap at `q + offset` for `q = oh·wq + ow`, so a sweep over every `q` from the
//! first output's to the last's computes all outputs with no border cases (the positions
//! between output rows are computed too, then dropped).

/// The dims of a 2D window over a plane, each `[rows, columns]`, pads at the beginning.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Window2 {
    pub input: [usize; 2],
    pub kernel: [usize; 2],
    pub output: [usize; 2],
    pub stride: [usize; 2],
    pub dilation: [usize; 2],
    pub pad: [usize; 2],
}

impl Window2 {
    /// Whether a copy of `len` elements (or positions) of a plane stays within bounds: at
    /// most the input and output planes and 64 Ki more. Huge pads, strides or dilations pass
    /// it; the caller then takes a path without the copy.
    pub(crate) fn copy_fits(&self, len: usize) -> bool {
        let planes =
            (self.input[0] * self.input[1]).saturating_add(self.output[0] * self.output[1]);
        len <= planes.saturating_add(1 << 16)
    }
}

/// The layout of a plane's phase copy: `sh·sw` phase planes of `hq` rows of `wq`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Phases {
    w: Window2,
    hq: usize,
    wq: usize,
}

impl Phases {
    /// The layout for `w` (at least one output), or `None` where the copy would hold more than
    /// the input and output planes and 64 Ki elements (huge pads or strides), or the sizes
    /// overflow. Strides must be at least 1.
    pub(crate) fn new(w: Window2) -> Option<Phases> {
        // Enough for the data at its pads, and for every tap of every output.
        let extent = |a: usize| -> Option<usize> {
            let data = w.pad[a].checked_add(w.input[a])?.div_ceil(w.stride[a]);
            let reach = w.kernel[a].checked_sub(1)?.checked_mul(w.dilation[a])? / w.stride[a];
            Some(data.max(w.output[a].checked_add(reach)?))
        };
        let (hq, wq) = (extent(0)?, extent(1)?);
        let len = w.stride[0]
            .checked_mul(w.stride[1])?
            .checked_mul(hq)?
            .checked_mul(wq)?;
        (w.copy_fits(len) && w.output[0] > 0 && w.output[1] > 0).then_some(Phases { w, hq, wq })
    }

    /// Phase planes, and the rows and columns of each.
    pub(crate) fn dims(&self) -> (usize, usize, usize) {
        (self.w.stride[0] * self.w.stride[1], self.hq, self.wq)
    }

    /// Elements of the copy.
    pub(crate) fn len(&self) -> usize {
        let (phases, hq, wq) = self.dims();
        phases * hq * wq
    }

    /// Positions `q` a sweep covers: from the first output's to the last's.
    pub(crate) fn sums(&self) -> usize {
        (self.w.output[0] - 1) * self.wq + self.w.output[1]
    }

    /// Elements of a sweep's scratch: the copy and the sums.
    pub(crate) fn scratch(&self) -> usize {
        self.len() + self.hq * self.wq
    }

    /// Each tap's offset in the copy, in window order (rows, then columns).
    pub(crate) fn offsets(&self) -> impl Iterator<Item = usize> + '_ {
        let ([kh, kw], [dh, dw], [sh, sw]) = (self.w.kernel, self.w.dilation, self.w.stride);
        let phase = self.hq * self.wq;
        (0..kh).flat_map(move |a| {
            (0..kw).map(move |b| {
                let (r, c) = (a * dh, b * dw);
                ((r % sh) * sw + c % sw) * phase + (r / sh) * self.wq + c / sw
            })
        })
    }

    /// Copies `plane` (`input` rows of `input` columns) into `buf` as the phase planes, each
    /// value through `wide`, the padding `pad`. The padding is written only when `buf` is not
    /// yet the layout's size: every plane's data lands on the same elements, so between planes
    /// of one layout the padding stays.
    #[inline(always)]
    pub(crate) fn fill<S: Copy, A: Copy>(
        &self,
        plane: &[S],
        pad: A,
        buf: &mut Vec<A>,
        wide: impl Fn(S) -> A + Copy,
    ) {
        if buf.len() != self.len() {
            buf.clear();
            buf.resize(self.len(), pad);
        }
        self.fill_data(plane, buf, wide);
    }

    /// The data part of [`fill`](Self::fill): `plane`'s values into their places in `buf`
    /// (the copy's [`len`](Self::len) at least), the padding's elements left as they are.
    #[inline(always)]
    pub(crate) fn fill_data<S: Copy, A: Copy>(
        &self,
        plane: &[S],
        buf: &mut [A],
        wide: impl Fn(S) -> A + Copy,
    ) {
        let ([_, iw], [ph, _], [sh, sw]) = (self.w.input, self.w.pad, self.w.stride);
        let phase = self.hq * self.wq;
        // One strided copy per row and column phase; the divisions once per phase, not per
        // row.
        for (c0, col, n) in self.column_phases() {
            // Padded row pr = r + ph is row pr / sh of row phase pr % sh.
            let (mut ra, mut rq) = (ph % sh, ph / sh);
            for src in plane.chunks_exact(iw) {
                let at = ra * sw * phase + rq * self.wq + col;
                copy_every(&src[c0..], &mut buf[at..at + n], sw, wide);
                ra += 1;
                if ra == sh {
                    (ra, rq) = (0, rq + 1);
                }
            }
        }
    }

    /// For each column phase `b` (the columns `c` with `c + pw ≡ b` modulo the stride) that
    /// holds data: the first such column `c0`, where a data row's copy starts in its phase row
    /// (`col`, from the start of the first phase's row) and how many columns it has (`n`).
    pub(crate) fn column_phases(&self) -> impl Iterator<Item = (usize, usize, usize)> + use<> {
        let ([_, iw], [_, pw], [_, sw]) = (self.w.input, self.w.pad, self.w.stride);
        let phase = self.hq * self.wq;
        (0..sw).filter_map(move |b| {
            let c0 = (b + sw - pw % sw) % sw;
            (c0 < iw).then(|| (c0, b * phase + (c0 + pw) / sw, (iw - c0).div_ceil(sw)))
        })
    }

    /// The output rows among a sweep's sums (`sums()` of them).
    pub(crate) fn rows<'a, A>(&self, sums: &'a [A]) -> impl Iterator<Item = &'a [A]> {
        let ow = self.w.output[1];
        sums.chunks(self.wq).map(move |r| &r[..ow])
    }
}

/// `dst[j] = wide(src[j·step])` for every `j < dst.len()` (`dst` must not need more of `src`
/// than it has). At step 2, in whole pairs and the last element on its own, so that the loop
/// vectorises.
#[inline(always)]
pub(crate) fn copy_every<S: Copy, A: Copy>(
    src: &[S],
    dst: &mut [A],
    step: usize,
    wide: impl Fn(S) -> A,
) {
    match step {
        1 => {
            for (d, &v) in dst.iter_mut().zip(src) {
                *d = wide(v);
            }
        }
        2 => {
            let Some((last, most)) = dst.split_last_mut() else {
                return;
            };
            *last = wide(src[most.len() * 2]);
            for (d, c) in most.iter_mut().zip(src.chunks_exact(2)) {
                *d = wide(c[0]);
            }
        }
        _ => {
            for (d, &v) in dst.iter_mut().zip(src.iter().step_by(step)) {
                *d = wide(v);
            }
        }
    }
}

/// `out[q]` = `step` folded over `taps` (offset into `xp`, weight) in order from `init`, at
/// `xp[q + offset]`, for every `q < out.len()`: in blocks of vectors held in registers through
/// all the taps (the last block overlapping the one before it), the few left one by one.
#[inline(always)]
pub(crate) fn sweep<A: Copy, W: Copy>(
    xp: &[A],
    taps: &[(usize, W)],
    init: A,
    step: impl Fn(A, W, A) -> A + Copy,
    out: &mut [A],
) {
    let done = match out.len() {
        32.. => blocks::<A, W, 16, 2>(xp, taps, init, step, out),
        16.. => blocks::<A, W, 16, 1>(xp, taps, init, step, out),
        8.. => blocks::<A, W, 8, 1>(xp, taps, init, step, out),
        4.. => blocks::<A, W, 4, 1>(xp, taps, init, step, out),
        _ => 0,
    };
    for (q, s) in out.iter_mut().enumerate().skip(done) {
        *s = taps
            .iter()
            .fold(init, |acc, &(off, w)| step(acc, w, xp[q + off]));
    }
}

/// Every element of `out` (at least `N·L` of them) in blocks of `N` vectors of `L` lanes, the
/// last block overlapping the one before it. Returns `out.len()`.
#[inline(always)]
fn blocks<A: Copy, W: Copy, const L: usize, const N: usize>(
    xp: &[A],
    taps: &[(usize, W)],
    init: A,
    step: impl Fn(A, W, A) -> A + Copy,
    out: &mut [A],
) -> usize {
    let (b, len) = (N * L, out.len());
    let mut q = 0;
    while q + b <= len {
        block::<A, W, L, N>(xp, taps, init, step, q, &mut out[q..q + b]);
        q += b;
    }
    if q < len {
        block::<A, W, L, N>(xp, taps, init, step, len - b, &mut out[len - b..]);
    }
    len
}

/// Elements `q0..q0 + N·L` of [`blocks`], in `N` vectors of registers.
#[inline(always)]
fn block<A: Copy, W: Copy, const L: usize, const N: usize>(
    xp: &[A],
    taps: &[(usize, W)],
    init: A,
    step: impl Fn(A, W, A) -> A,
    q0: usize,
    out: &mut [A],
) {
    let mut acc = [[init; L]; N];
    for &(off, w) in taps {
        let src = &xp[q0 + off..q0 + off + N * L];
        for (a, src) in acc.iter_mut().zip(src.chunks_exact(L)) {
            let src: &[A; L] = src.try_into().expect("L elements");
            for (a, &v) in a.iter_mut().zip(src) {
                *a = step(*a, w, v);
            }
        }
    }
    for (a, o) in acc.iter().zip(out.chunks_exact_mut(L)) {
        o.copy_from_slice(a);
    }
}
