//! A single-precision GEMM for the convolution: `C = A · B`, `A` read where it lies (row-major
//! with a row stride, the filters), `B` packed by the caller in column panels (the gathered
//! columns, which the convolution must copy anyway).
//!
//! Every element of `C` is one chain of fused multiply-adds over `k` in order, started from
//! `+0`: `c = fma(a[i,K-1], b[K-1,j], … fma(a[i,0], b[0,j], +0))`. Blocking over `k` keeps
//! the running sum in `C` between blocks (stored and reloaded as the same `f32`), so neither
//! the blocking, nor the panel width of the vector unit, nor how a caller splits `C` between
//! threads changes a bit: AVX-512, AVX2 and the plain code (`f32::mul_add`, a correctly
//! rounded fused multiply-add everywhere) give the same result. The error of each element is
//! that of recursive summation with one rounding per step: at most `K·u·Σ|a·b|`
//! (`u = 2^-24`, to first order).
//!
//! Why not the GEMM crate (`matrixmultiply`) that MatMul uses: it packs both operands at each
//! call, and for a convolution the filters are the same at every call while the columns are
//! already a copy; packing them again took a quarter of a ResNet's time.

use super::simd::Simd;

/// Rows of `A` (and `C`) per micro-tile.
const MR: usize = 8;
/// Steps of `k` per block: a `KC × NR` panel block stays in the L1 cache while the rows pass.
const KC: usize = 256;
/// Rows of `A` per block: `MC × KC` of `A` stays in the L2 cache while the panels pass.
const MC: usize = 256;
/// Bytes of panel blocks that the row blocks of `A` pass in turn (within the L1 cache).
const L1_PANELS: usize = 32 << 10;
/// The widest panel (AVX-512's two registers of 16 lanes).
pub(crate) const MAX_NR: usize = 32;

/// The vector unit the GEMM runs on and the width of its column panels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Panels {
    unit: Simd,
}

impl Panels {
    /// For the widest unit this CPU has ([`simd`](super::simd::simd)).
    pub(crate) fn detect() -> Panels {
        #[cfg(target_arch = "x86_64")]
        let unit = super::simd::simd();
        #[cfg(not(target_arch = "x86_64"))]
        let unit = Simd::None;
        Panels { unit }
    }

    /// Columns per panel.
    pub(crate) fn width(self) -> usize {
        match self.unit {
            Simd::Avx512 => 32,
            _ => 16,
        }
    }

    /// `f32` elements of `B` packed: `k` rows of `n` columns in whole panels (saturating: a
    /// size no budget allows).
    pub(crate) fn packed_len(self, k: usize, n: usize) -> usize {
        n.div_ceil(self.width())
            .saturating_mul(self.width())
            .saturating_mul(k)
    }

    /// `C[m × n]` (row stride `ldc`) `= A[m × k]` (row stride `lda`) `· B`, where `b` holds
    /// `B[k × n]` packed: panel `j` (columns `j·w .. j·w + w`, `w` the [`width`](Self::width))
    /// at `b[j·k·w ..]`, row `p` of the panel at `+ p·w`, the columns past `n` of the last
    /// panel anything (their sums are dropped). `k = 0` gives zeros.
    ///
    /// # Safety
    /// `a` must be readable at `i·lda + p` for `i < m`, `p < k`; `c` writable at `i·ldc + j`
    /// for `i < m`, `j < n`, and no other thread may touch those elements meanwhile.
    #[allow(clippy::too_many_arguments)]
    pub(crate) unsafe fn gemm(
        self,
        m: usize,
        n: usize,
        k: usize,
        a: *const f32,
        lda: usize,
        b: &[f32],
        c: *mut f32,
        ldc: usize,
    ) {
        assert!(
            b.len() >= self.packed_len(k, n),
            "packed B holds its panels"
        );
        let s = Shape { m, n, k, lda, ldc };
        if k == 0 {
            for i in 0..m {
                // SAFETY: the caller's bounds on `c`.
                unsafe { std::ptr::write_bytes(c.add(i * ldc), 0, n) };
            }
            return;
        }
        // SAFETY: the caller's bounds; `b` holds its panels (asserted); each unit runs only
        // where it was detected.
        unsafe {
            match self.unit {
                #[cfg(target_arch = "x86_64")]
                Simd::Avx512 => x86::gemm_avx512(s, a, b.as_ptr(), c),
                #[cfg(target_arch = "x86_64")]
                Simd::Avx2 => x86::gemm_avx2(s, a, b.as_ptr(), c),
                _ => drive::<16>(s, a, b.as_ptr(), c, plain_tile::<16>, plain_tile::<16>),
            }
        }
    }
}

/// The dims and row strides of one GEMM.
#[derive(Clone, Copy)]
struct Shape {
    m: usize,
    n: usize,
    k: usize,
    lda: usize,
    ldc: usize,
}

/// A micro-tile: `rows ≤ MR` rows of `C` (stride `ldc`) and one panel's `NR` columns, `kc`
/// steps of `k` from `a` (stride `lda`) and the panel block `b`; `first`: start from `+0`
/// rather than from `C`.
type Tile = unsafe fn(
    rows: usize,
    kc: usize,
    a: *const f32,
    lda: usize,
    b: *const f32,
    c: *mut f32,
    ldc: usize,
    first: bool,
);

/// The loops around the micro-tile (`NR` the panel width): blocks of `MC` rows, of `KC`
/// steps, then chunks of panels (as many as fit `L1_PANELS`: one or two of `KC` steps, a
/// dozen or more for a short `k`), each `MR` rows and each panel of the chunk. A panel wider
/// than what is left of `C` runs on a spare tile, whose valid columns are copied in and out,
/// and with `half` (a micro-tile of the panel's first `NR / 2` columns) when those are
/// enough.
///
/// # Safety
/// As [`Panels::gemm`], with `b` holding the panels of `NR` columns.
#[inline(always)]
unsafe fn drive<const NR: usize>(
    s: Shape,
    a: *const f32,
    b: *const f32,
    c: *mut f32,
    tile: Tile,
    half: Tile,
) {
    let panels = s.n.div_ceil(NR);
    let mut spare = [0f32; MR * MAX_NR];
    for m0 in (0..s.m).step_by(MC) {
        let m1 = (m0 + MC).min(s.m);
        for k0 in (0..s.k).step_by(KC) {
            let kc = KC.min(s.k - k0);
            let first = k0 == 0;
            // Panels per chunk: as many as fit [`L1_PANELS`] bytes, so that each row block
            // of `A` passes a chunk (still in the L1 cache) and the rows of `C` are written
            // a chunk's width at a time rather than one panel's.
            let chunk = (L1_PANELS / (kc * NR * 4)).max(1);
            for j0 in (0..panels).step_by(chunk) {
                for i0 in (m0..m1).step_by(MR) {
                    let rows = MR.min(m1 - i0);
                    for j in j0..(j0 + chunk).min(panels) {
                        let cols = NR.min(s.n - j * NR);
                        // SAFETY: panel `j`'s rows `k0..k0 + kc` lie in `b` (the caller's
                        // packing); rows `i0..i0 + rows` of `a` from step `k0`, and of `c`
                        // from column `j·NR`, are within the caller's bounds.
                        unsafe {
                            let bp = b.add(j * s.k * NR + k0 * NR);
                            let ap = a.add(i0 * s.lda + k0);
                            let cp = c.add(i0 * s.ldc + j * NR);
                            if cols == NR {
                                tile(rows, kc, ap, s.lda, bp, cp, s.ldc, first);
                            } else {
                                let t = if cols <= NR / 2 { half } else { tile };
                                let at = (ap, bp, cp);
                                on_spare::<NR>(t, rows, cols, kc, at, s, first, &mut spare);
                            }
                        }
                    }
                }
            }
        }
    }
}

/// The micro-tile `t` on the `cols < NR` valid columns of a panel (rows of `C` at `cp`,
/// stride `s.ldc`) through the spare tile: those columns copied in (unless `first`) and out.
///
/// # Safety
/// As [`Tile`]'s bounds for `ap` and `bp`; `cp` writable at `r·s.ldc + j` for `r < rows`,
/// `j < cols`.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn on_spare<const NR: usize>(
    t: Tile,
    rows: usize,
    cols: usize,
    kc: usize,
    (ap, bp, cp): (*const f32, *const f32, *mut f32),
    s: Shape,
    first: bool,
    spare: &mut [f32; MR * MAX_NR],
) {
    let sp = spare.as_mut_ptr();
    // SAFETY: the caller's bounds; the spare tile holds `rows × NR` at stride `NR`.
    unsafe {
        if !first {
            for r in 0..rows {
                std::ptr::copy_nonoverlapping(cp.add(r * s.ldc), sp.add(r * NR), cols);
            }
        }
        t(rows, kc, ap, s.lda, bp, sp, NR, first);
        for r in 0..rows {
            std::ptr::copy_nonoverlapping(sp.add(r * NR), cp.add(r * s.ldc), cols);
        }
    }
}

/// The micro-tile in plain code: `f32::mul_add` (a fused multiply-add, correctly rounded).
///
/// # Safety
/// As [`Tile`]'s bounds.
#[allow(clippy::too_many_arguments)]
unsafe fn plain_tile<const NR: usize>(
    rows: usize,
    kc: usize,
    a: *const f32,
    lda: usize,
    b: *const f32,
    c: *mut f32,
    ldc: usize,
    first: bool,
) {
    let mut acc = [[0f32; NR]; MR];
    for (i, row) in acc.iter_mut().enumerate().take(rows) {
        if !first {
            // SAFETY: row `i < rows` of the tile lies in `c`.
            row.copy_from_slice(unsafe { std::slice::from_raw_parts(c.add(i * ldc), NR) });
        }
    }
    for p in 0..kc {
        // SAFETY: step `p < kc` of the panel block and of each row lie in `b` and `a`.
        let bv = unsafe { std::slice::from_raw_parts(b.add(p * NR), NR) };
        for (i, row) in acc.iter_mut().enumerate().take(rows) {
            let av = unsafe { *a.add(i * lda + p) };
            for (o, &x) in row.iter_mut().zip(bv) {
                *o = av.mul_add(x, *o);
            }
        }
    }
    for (i, row) in acc.iter().enumerate().take(rows) {
        // SAFETY: as above.
        unsafe { std::ptr::copy_nonoverlapping(row.as_ptr(), c.add(i * ldc), NR) };
    }
}

/// Calls `$f::<R>` with `R` the row count (1 to 8), a constant to the micro-tile.
macro_rules! by_rows {
    ($f:ident, $rows:expr, $($arg:expr),*) => {
        match $rows {
            8 => $f::<8>($($arg),*),
            7 => $f::<7>($($arg),*),
            6 => $f::<6>($($arg),*),
            5 => $f::<5>($($arg),*),
            4 => $f::<4>($($arg),*),
            3 => $f::<3>($($arg),*),
            2 => $f::<2>($($arg),*),
            _ => $f::<1>($($arg),*),
        }
    };
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    use super::{MR, Shape, drive};

    /// The AVX-512 GEMM: panels of 32 columns, `R × 2` registers of sums.
    #[target_feature(enable = "avx512f,avx512vl,avx512bw,avx512dq,avx2,fma")]
    pub(super) unsafe fn gemm_avx512(s: Shape, a: *const f32, b: *const f32, c: *mut f32) {
        // SAFETY: the caller's bounds; the features are enabled here.
        unsafe { drive::<32>(s, a, b, c, tile_avx512, half_avx512) }
    }

    /// The AVX2 GEMM: panels of 16 columns, `R × 2` registers of sums.
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn gemm_avx2(s: Shape, a: *const f32, b: *const f32, c: *mut f32) {
        // SAFETY: as above.
        unsafe { drive::<16>(s, a, b, c, tile_avx2, half_avx2) }
    }

    #[target_feature(enable = "avx512f,avx512vl,avx512bw,avx512dq,avx2,fma")]
    #[allow(clippy::too_many_arguments)]
    unsafe fn tile_avx512(
        rows: usize,
        kc: usize,
        a: *const f32,
        lda: usize,
        b: *const f32,
        c: *mut f32,
        ldc: usize,
        first: bool,
    ) {
        // SAFETY: the caller's bounds (`Tile`).
        unsafe { by_rows!(rows_avx512, rows, kc, a, lda, b, c, ldc, first) }
    }

    #[target_feature(enable = "avx2,fma")]
    #[allow(clippy::too_many_arguments)]
    unsafe fn tile_avx2(
        rows: usize,
        kc: usize,
        a: *const f32,
        lda: usize,
        b: *const f32,
        c: *mut f32,
        ldc: usize,
        first: bool,
    ) {
        // SAFETY: the caller's bounds (`Tile`); AVX2's 16 registers hold at most 6 rows of
        // sums, so 7 and 8 rows run as 6 and the rest.
        unsafe {
            if rows > 6 {
                rows_avx2::<6>(kc, a, lda, b, c, ldc, first);
                let (a, c) = (a.add(6 * lda), c.add(6 * ldc));
                return tile_avx2(rows - 6, kc, a, lda, b, c, ldc, first);
            }
            by_rows!(rows_avx2, rows, kc, a, lda, b, c, ldc, first)
        }
    }

    /// The first 16 columns of a 32-column panel: `R` registers of sums.
    #[target_feature(enable = "avx512f,avx512vl,avx512bw,avx512dq,avx2,fma")]
    #[allow(clippy::too_many_arguments)]
    unsafe fn half_avx512(
        rows: usize,
        kc: usize,
        a: *const f32,
        lda: usize,
        b: *const f32,
        c: *mut f32,
        ldc: usize,
        first: bool,
    ) {
        // SAFETY: the caller's bounds (`Tile`).
        unsafe { by_rows!(one_avx512, rows, kc, a, lda, b, c, ldc, first) }
    }

    /// The first 8 columns of a 16-column panel: `R` registers of sums.
    #[target_feature(enable = "avx2,fma")]
    #[allow(clippy::too_many_arguments)]
    unsafe fn half_avx2(
        rows: usize,
        kc: usize,
        a: *const f32,
        lda: usize,
        b: *const f32,
        c: *mut f32,
        ldc: usize,
        first: bool,
    ) {
        // SAFETY: the caller's bounds (`Tile`).
        unsafe { by_rows!(one_avx2, rows, kc, a, lda, b, c, ldc, first) }
    }

    #[inline]
    #[target_feature(enable = "avx512f,avx512vl,avx512bw,avx512dq,avx2,fma")]
    unsafe fn one_avx512<const R: usize>(
        kc: usize,
        a: *const f32,
        lda: usize,
        b: *const f32,
        c: *mut f32,
        ldc: usize,
        first: bool,
    ) {
        // SAFETY: `R` rows of 16 columns of `c`, `kc` steps of `R` rows of `a` and of the
        // panel block `b` (32 per step, the first 16 read) are within the caller's bounds.
        unsafe {
            let mut acc = [_mm512_setzero_ps(); R];
            if !first {
                for (i, v) in acc.iter_mut().enumerate() {
                    *v = _mm512_loadu_ps(c.add(i * ldc));
                }
            }
            for p in 0..kc {
                let b0 = _mm512_loadu_ps(b.add(p * 32));
                for (i, v) in acc.iter_mut().enumerate() {
                    *v = _mm512_fmadd_ps(_mm512_set1_ps(*a.add(i * lda + p)), b0, *v);
                }
            }
            for (i, v) in acc.iter().enumerate() {
                _mm512_storeu_ps(c.add(i * ldc), *v);
            }
        }
    }

    #[inline]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn one_avx2<const R: usize>(
        kc: usize,
        a: *const f32,
        lda: usize,
        b: *const f32,
        c: *mut f32,
        ldc: usize,
        first: bool,
    ) {
        // SAFETY: `R` rows of 8 columns of `c`, `kc` steps of `R` rows of `a` and of the
        // panel block `b` (16 per step, the first 8 read) are within the caller's bounds.
        unsafe {
            let mut acc = [_mm256_setzero_ps(); R];
            if !first {
                for (i, v) in acc.iter_mut().enumerate() {
                    *v = _mm256_loadu_ps(c.add(i * ldc));
                }
            }
            for p in 0..kc {
                let b0 = _mm256_loadu_ps(b.add(p * 16));
                for (i, v) in acc.iter_mut().enumerate() {
                    *v = _mm256_fmadd_ps(_mm256_set1_ps(*a.add(i * lda + p)), b0, *v);
                }
            }
            for (i, v) in acc.iter().enumerate() {
                _mm256_storeu_ps(c.add(i * ldc), *v);
            }
        }
    }

    const _: () = assert!(MR == 8);

    #[inline]
    #[target_feature(enable = "avx512f,avx512vl,avx512bw,avx512dq,avx2,fma")]
    unsafe fn rows_avx512<const R: usize>(
        kc: usize,
        a: *const f32,
        lda: usize,
        b: *const f32,
        c: *mut f32,
        ldc: usize,
        first: bool,
    ) {
        // SAFETY: `R` rows of 32 columns of `c`, `kc` steps of `R` rows of `a` and of the
        // panel block `b` (32 per step) are within the caller's bounds.
        unsafe {
            let mut lo = [_mm512_setzero_ps(); R];
            let mut hi = [_mm512_setzero_ps(); R];
            if !first {
                for i in 0..R {
                    lo[i] = _mm512_loadu_ps(c.add(i * ldc));
                    hi[i] = _mm512_loadu_ps(c.add(i * ldc + 16));
                }
            }
            for p in 0..kc {
                let b0 = _mm512_loadu_ps(b.add(p * 32));
                let b1 = _mm512_loadu_ps(b.add(p * 32 + 16));
                for i in 0..R {
                    let x = _mm512_set1_ps(*a.add(i * lda + p));
                    lo[i] = _mm512_fmadd_ps(x, b0, lo[i]);
                    hi[i] = _mm512_fmadd_ps(x, b1, hi[i]);
                }
            }
            for i in 0..R {
                _mm512_storeu_ps(c.add(i * ldc), lo[i]);
                _mm512_storeu_ps(c.add(i * ldc + 16), hi[i]);
            }
        }
    }

    #[inline]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn rows_avx2<const R: usize>(
        kc: usize,
        a: *const f32,
        lda: usize,
        b: *const f32,
        c: *mut f32,
        ldc: usize,
        first: bool,
    ) {
        // SAFETY: `R` rows of 16 columns of `c`, `kc` steps of `R` rows of `a` and of the
        // panel block `b` (16 per step) are within the caller's bounds.
        unsafe {
            let mut lo = [_mm256_setzero_ps(); R];
            let mut hi = [_mm256_setzero_ps(); R];
            if !first {
                for i in 0..R {
                    lo[i] = _mm256_loadu_ps(c.add(i * ldc));
                    hi[i] = _mm256_loadu_ps(c.add(i * ldc + 8));
                }
            }
            for p in 0..kc {
                let b0 = _mm256_loadu_ps(b.add(p * 16));
                let b1 = _mm256_loadu_ps(b.add(p * 16 + 8));
                for i in 0..R {
                    let x = _mm256_set1_ps(*a.add(i * lda + p));
                    lo[i] = _mm256_fmadd_ps(x, b0, lo[i]);
                    hi[i] = _mm256_fmadd_ps(x, b1, hi[i]);
                }
            }
            for i in 0..R {
                _mm256_storeu_ps(c.add(i * ldc), lo[i]);
                _mm256_storeu_ps(c.add(i * ldc + 8), hi[i]);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::context::uniform_for_test;

    /// Packs row-major `B[k × n]` in panels of `w` columns (the padding columns 0).
    fn pack(b: &[f32], k: usize, n: usize, w: usize) -> Vec<f32> {
        let mut out = vec![0f32; n.div_ceil(w) * w * k];
        for p in 0..k {
            for j in 0..n {
                out[(j / w) * k * w + p * w + j % w] = b[p * n + j];
            }
        }
        out
    }

    /// The definition: one fused multiply-add chain per element, in order, from +0.
    fn chain(a: &[f32], b: &[f32], m: usize, n: usize, k: usize) -> Vec<f32> {
        let mut c = vec![0f32; m * n];
        for i in 0..m {
            for j in 0..n {
                c[i * n + j] = (0..k).fold(0f32, |s, p| a[i * k + p].mul_add(b[p * n + j], s));
            }
        }
        c
    }

    fn units() -> Vec<Panels> {
        let best = Panels::detect().unit;
        [Simd::None, Simd::Avx2, Simd::Avx512]
            .into_iter()
            .filter(|&u| u <= best)
            .map(|unit| Panels { unit })
            .collect()
    }

    #[test]
    fn every_unit_gives_the_fused_chain_bit_for_bit() {
        // Partial tiles and panels, several K and M blocks, and k = 0.
        let dims = [
            (1, 1, 1),
            (7, 33, 5),
            (6, 32, 256),
            (13, 17, 257),
            (250, 70, 600),
            // Several chunks of panels (short k), the last one partial.
            (13, 645, 27),
            (9, 300, 1),
            (5, 3, 0),
        ];
        for (t, &(m, n, k)) in dims.iter().enumerate() {
            let a = uniform_for_test(m * k, 3 * t as u64 + 1, -1.0, 1.0);
            let b = uniform_for_test(k * n, 3 * t as u64 + 2, -1.0, 1.0);
            let want = chain(&a, &b, m, n, k);
            for u in units() {
                // C sits in a wider matrix (row stride n + 3) whose other columns stay put.
                let ldc = n + 3;
                let mut c = vec![7f32; m * ldc];
                let packed = pack(&b, k, n, u.width());
                // SAFETY: `a` is m × k, `c` m × ldc, `packed` holds the panels.
                unsafe { u.gemm(m, n, k, a.as_ptr(), k, &packed, c.as_mut_ptr(), ldc) };
                for i in 0..m {
                    let row = &c[i * ldc..(i + 1) * ldc];
                    let got: Vec<u32> = row[..n].iter().map(|v| v.to_bits()).collect();
                    let exp: Vec<u32> = want[i * n..(i + 1) * n]
                        .iter()
                        .map(|v| v.to_bits())
                        .collect();
                    assert_eq!(got, exp, "{m}×{n}×{k} {u:?} row {i}");
                    assert!(row[n..].iter().all(|&v| v == 7.0), "{u:?} wrote past n");
                }
            }
        }
    }
}
