//! A single-precision GEMM for the convolution: `C = A · B`, `A` read where it lies (row-major
//! with a row stride, the filters), `B` packed by the caller in column panels (the gathered
//! columns), or its rows read where they lie, each at its own offset (the implicit
//! convolution's rows of a padded copy of the data), or packed from there a block at a time
//! (a MatMul's weights).
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
//! already a copy; packing them again took a quarter of a ResNet's time. For the same reason
//! MatMul's f32 products with one input readable in place come here too, summed in the
//! crate's blocked order instead ([`Panels::blocked`]: the crate's bits).

use super::simd::Simd;

/// Rows of `A` (and `C`) per micro-tile.
const MR: usize = 8;
/// Steps of `k` per block: a `KC × NR` panel block stays in the L1 cache while the rows pass.
/// Also the block of [`Panels::blocked`]'s sums, which must be the GEMM crate's (256).
const KC: usize = 256;
/// Rows of `A` per block: `MC × KC` of `A` stays in the L2 cache while the panels pass.
const MC: usize = 256;
/// Bytes of panel blocks that the row blocks of `A` pass in turn (within the L1 cache).
const L1_PANELS: usize = 32 << 10;
/// Bytes of `B`'s panel blocks that [`Panels::gemm_rows`] packs at a time (within the L2
/// cache, beside a block of `A`).
const COPIED: usize = 256 << 10;
/// The widest panel (AVX-512's two registers of 16 lanes).
pub(crate) const MAX_NR: usize = 32;

/// The vector unit the GEMM runs on and the width of its column panels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Panels {
    unit: Simd,
    /// Sums in blocks ([`Panels::blocked`]).
    blocks: bool,
    /// [`Panels::gemm_rows`] packs blocks of `B` ([`Panels::copying`]).
    copies: bool,
}

impl Panels {
    /// For the widest unit this CPU has ([`simd`](super::simd::simd)).
    pub(crate) fn detect() -> Panels {
        #[cfg(target_arch = "x86_64")]
        let unit = super::simd::simd();
        #[cfg(not(target_arch = "x86_64"))]
        let unit = Simd::None;
        Panels {
            unit,
            blocks: false,
            copies: false,
        }
    }

    /// The same GEMM with every element summed in blocks of [`KC`] steps of `k` (from step
    /// 0): each block one fused multiply-add chain from `+0`, the blocks' sums added in order
    /// (`c = s_0`, then `c = s_b + c`). That is the order of the GEMM crate's `sgemm` (its K
    /// block is 256, its kernels fused, its later blocks added to `C`), so MatMul computes on
    /// this GEMM and on the crate to the same bits (tested against the crate).
    pub(crate) fn blocked(self) -> Panels {
        Panels {
            blocks: true,
            ..self
        }
    }

    /// The same GEMM with [`gemm_rows`](Self::gemm_rows) packing blocks of `B`'s rows before
    /// the micro-tiles read them ([`copied`](Self::copied)), rather than reading them where
    /// they lie: for rows far apart (a MatMul's weights, a power of two apart, share a few sets
    /// of the L1 cache and would be fetched again for every tile of rows of `A`), and for
    /// any width (the last panel reads only the `n` columns). The same bits.
    pub(crate) fn copying(self) -> Panels {
        Panels {
            copies: true,
            ..self
        }
    }

    /// `f32` elements of the buffer that [`gemm_rows`](Self::gemm_rows) packs into in each
    /// thread when [`copying`](Self::copying) (kept by the thread between calls).
    pub(crate) fn copied_len(self, k: usize, n: usize) -> usize {
        self.packed_len(KC.min(k), self.copy_group().min(n))
    }

    /// Columns of `B` per block that [`copied`](Self::copied) packs: whole panels, [`COPIED`]
    /// bytes of [`KC`] steps.
    fn copy_group(self) -> usize {
        (COPIED / (KC * self.width() * 4)).max(1) * self.width()
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

    /// Packs `B[k × cols]` in panels into `out` (at least [`packed_len`](Self::packed_len)
    /// `(k, cols)` elements; the columns past `cols` of the last panel 0) where `B` is the
    /// transpose of a matrix in `src`: column `j` of `B` is that matrix's row `j`, element
    /// `(j, p)` at `src[j·rs + p·cs]` (a MatMul's transposed operand, attention's keys).
    pub(crate) fn pack_transposed(
        self,
        src: &[f32],
        (rs, cs): (usize, usize),
        (k, cols): (usize, usize),
        out: &mut [f32],
    ) {
        let w = self.width();
        for (j, panel) in out
            .chunks_exact_mut(k * w)
            .take(cols.div_ceil(w))
            .enumerate()
        {
            let lanes = w.min(cols - j * w);
            panel.fill(0.0);
            for l in 0..lanes {
                let row = &src[(j * w + l) * rs..];
                for p in 0..k {
                    panel[p * w + l] = row[p * cs];
                }
            }
        }
    }

    /// Row `r` of `B[k × n]` (its `n` columns `v`) into `packed`, `B` in panels as
    /// [`gemm`](Self::gemm) reads them (the columns past `n` of the last panel left as they
    /// are).
    #[inline(always)]
    pub(crate) fn pack_row(self, packed: &mut [f32], k: usize, r: usize, v: &[f32]) {
        match self.width() {
            32 => row_to_panels::<32>(packed, k, r, v),
            _ => row_to_panels::<16>(packed, k, r, v),
        }
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
        let s = Shape {
            m,
            n,
            k,
            lda,
            ldc,
            blocks: self.blocks,
            carry: false,
        };
        // SAFETY: the caller's bounds; `b` holds its panels (asserted).
        unsafe { self.run::<false>(s, a, (b.as_ptr(), std::ptr::null()), c) }
    }

    /// As [`gemm`](Self::gemm), with `B[p, j] = b[offs[p] + j]`: its rows read where they lie
    /// (the implicit convolution's rows of a padded copy, a fixed offset apart for each
    /// tap), none packed; or, [`copying`](Self::copying), packed a block at a time. Read in
    /// place, the last panel reads its whole width: `b` must be readable at `offs[p] + j` for
    /// every `p < k` and `j` below `n` rounded up to a whole [`width`](Self::width) (the sums
    /// of the columns past `n` are dropped); copying, for `j < n`.
    ///
    /// # Safety
    /// As [`gemm`](Self::gemm) for `a` and `c`; `offs` holds `k` offsets, and `b` is readable
    /// as said.
    #[allow(clippy::too_many_arguments)]
    pub(crate) unsafe fn gemm_rows(
        self,
        m: usize,
        n: usize,
        k: usize,
        a: *const f32,
        lda: usize,
        (b, offs): (*const f32, &[usize]),
        c: *mut f32,
        ldc: usize,
    ) {
        assert!(offs.len() >= k, "an offset for each step of k");
        let s = Shape {
            m,
            n,
            k,
            lda,
            ldc,
            blocks: self.blocks,
            carry: false,
        };
        // SAFETY: the caller's bounds.
        unsafe { self.run::<true>(s, a, (b, offs.as_ptr()), c) }
    }

    /// [`gemm_rows`](Self::gemm_rows) through packed blocks of `B`: for each block of [`KC`]
    /// steps (in order), [`COPIED`] bytes of its panels at a time packed in the thread's
    /// scratch ([`with_scratch`](super::with_scratch)) and multiplied as [`gemm`](Self::gemm)
    /// would (`C` carrying the sums of the earlier blocks: the same order as reading the rows
    /// in place).
    ///
    /// # Safety
    /// As [`gemm_rows`](Self::gemm_rows), with `k > 0`.
    unsafe fn copied(
        self,
        s: Shape,
        a: *const f32,
        (b, offs): (*const f32, *const usize),
        c: *mut f32,
    ) {
        let group = self.copy_group();
        super::with_scratch(self.copied_len(s.k, s.n), |buf| {
            for k0 in (0..s.k).step_by(KC) {
                let kc = KC.min(s.k - k0);
                for c0 in (0..s.n).step_by(group) {
                    let nc = group.min(s.n - c0);
                    for p in 0..kc {
                        if p + AHEAD < kc {
                            // SAFETY: as below, for row `k0 + p + AHEAD`.
                            let ahead = unsafe {
                                std::slice::from_raw_parts(
                                    b.add(*offs.add(k0 + p + AHEAD) + c0),
                                    nc,
                                )
                            };
                            super::simd::prefetch(ahead);
                        }
                        // SAFETY: the caller's bounds: row `k0 + p` of `B` holds columns
                        // `c0..c0 + nc`.
                        let row = unsafe {
                            std::slice::from_raw_parts(b.add(*offs.add(k0 + p) + c0), nc)
                        };
                        self.pack_row(buf, kc, p, row);
                    }
                    let sub = Shape {
                        n: nc,
                        k: kc,
                        carry: s.carry || k0 > 0,
                        ..s
                    };
                    // SAFETY: the caller's bounds for the block's steps of `a` and columns of
                    // `c`; `buf` holds the block's panels (`packed_len(kc, nc)` ≤ its length).
                    unsafe {
                        self.run::<false>(
                            sub,
                            a.add(k0),
                            (buf.as_ptr(), std::ptr::null()),
                            c.add(c0),
                        )
                    };
                }
            }
        })
    }

    /// [`drive`] on this unit (zeros for `k = 0`).
    ///
    /// # Safety
    /// As [`drive`].
    unsafe fn run<const ROWS: bool>(
        self,
        s: Shape,
        a: *const f32,
        b: (*const f32, *const usize),
        c: *mut f32,
    ) {
        if s.k == 0 {
            for i in 0..s.m {
                // SAFETY: the caller's bounds on `c`.
                unsafe { std::ptr::write_bytes(c.add(i * s.ldc), 0, s.n) };
            }
            return;
        }
        if ROWS && self.copies {
            // SAFETY: the caller's bounds; `k > 0`.
            return unsafe { self.copied(s, a, b, c) };
        }
        // SAFETY: the caller's bounds; each unit runs only where it was detected.
        unsafe {
            match self.unit {
                #[cfg(target_arch = "x86_64")]
                Simd::Avx512 => x86::gemm_avx512::<ROWS>(s, a, b, c),
                #[cfg(target_arch = "x86_64")]
                Simd::Avx2 => x86::gemm_avx2::<ROWS>(s, a, b, c),
                _ => drive::<16, ROWS>(s, a, b, c, plain_tile::<16, ROWS>, plain_tile::<16, ROWS>),
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
    /// Each block of [`KC`] steps summed from `+0` and added to `C` (rather than the chain
    /// carried on from `C`): [`Panels::blocked`].
    blocks: bool,
    /// `C` holds the sums of earlier steps (its first block is a later one).
    carry: bool,
}

/// A micro-tile: `rows ≤ MR` rows of `C` (stride `ldc`) and one panel's `NR` columns, `kc`
/// steps of `k` from `a` (stride `lda`) and the panel block `b`, from and into `C` as `start`
/// says. Step `p` of the panel block is at `b + p·NR` (packed panels), or, for the tiles of
/// [`Panels::gemm_rows`], at `b + offs[p]`.
type Tile = unsafe fn(
    rows: usize,
    kc: usize,
    a: *const f32,
    lda: usize,
    b: *const f32,
    offs: *const usize,
    c: *mut f32,
    ldc: usize,
    start: Start,
);

/// Where a micro-tile's sums start and where they go.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Start {
    /// From `C` (the chain carried on), stored to `C`.
    Carry,
    /// From `+0`, stored to `C`.
    Zero,
    /// From `+0`, then added to `C` (`c = s + c`: a later block of [`Panels::blocked`]).
    Add,
}

/// Where step `p` of a panel block starts: `b + p·NR` in packed panels (`ROWS` false), or
/// `b + offs[p]` (`ROWS` true).
///
/// # Safety
/// With `ROWS`, `offs` must be readable at `p`.
#[inline(always)]
unsafe fn step<const NR: usize, const ROWS: bool>(
    b: *const f32,
    offs: *const usize,
    p: usize,
) -> *const f32 {
    // SAFETY: the caller's: the offset is readable; the pointer arithmetic stays within the
    // caller's `B` (the tile's bounds).
    unsafe {
        if ROWS {
            b.add(*offs.add(p))
        } else {
            b.add(p * NR)
        }
    }
}

/// The loops around the micro-tile (`NR` the panel width): blocks of `MC` rows, of `KC`
/// steps, then chunks of panels (as many as fit `L1_PANELS`: one or two of `KC` steps, a
/// dozen or more for a short `k`), each `MR` rows and each panel of the chunk. A panel wider
/// than what is left of `C` runs on a spare tile, whose valid columns are copied in and out,
/// and with `half` (a micro-tile of the panel's first `NR / 2` columns) when those are
/// enough.
///
/// # Safety
/// As [`Panels::gemm`], with `b` holding the panels of `NR` columns (`ROWS` false), or as
/// [`Panels::gemm_rows`] with panels `NR` wide (`ROWS` true).
#[inline(always)]
unsafe fn drive<const NR: usize, const ROWS: bool>(
    s: Shape,
    a: *const f32,
    (b, offs): (*const f32, *const usize),
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
            let start = if k0 > 0 || s.carry {
                if s.blocks { Start::Add } else { Start::Carry }
            } else {
                Start::Zero
            };
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
                        // packing, or its rows at `offs` from column `j·NR`); rows
                        // `i0..i0 + rows` of `a` from step `k0`, and of `c` from column
                        // `j·NR`, are within the caller's bounds.
                        unsafe {
                            let (bp, op) = if ROWS {
                                (b.add(j * NR), offs.add(k0))
                            } else {
                                (b.add(j * s.k * NR + k0 * NR), offs)
                            };
                            let ap = a.add(i0 * s.lda + k0);
                            let cp = c.add(i0 * s.ldc + j * NR);
                            if cols == NR {
                                tile(rows, kc, ap, s.lda, bp, op, cp, s.ldc, start);
                            } else {
                                let t = if cols <= NR / 2 { half } else { tile };
                                let at = (ap, (bp, op), cp);
                                on_spare::<NR>(t, rows, cols, kc, at, s, start, &mut spare);
                            }
                        }
                    }
                }
            }
        }
    }
}

/// The micro-tile `t` on the `cols < NR` valid columns of a panel (rows of `C` at `cp`,
/// stride `s.ldc`) through the spare tile: those columns copied in (unless the sums start from
/// `+0` alone) and out.
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
    (ap, (bp, op), cp): (*const f32, (*const f32, *const usize), *mut f32),
    s: Shape,
    start: Start,
    spare: &mut [f32; MR * MAX_NR],
) {
    let sp = spare.as_mut_ptr();
    // SAFETY: the caller's bounds; the spare tile holds `rows × NR` at stride `NR`.
    unsafe {
        if start != Start::Zero {
            for r in 0..rows {
                std::ptr::copy_nonoverlapping(cp.add(r * s.ldc), sp.add(r * NR), cols);
            }
        }
        t(rows, kc, ap, s.lda, bp, op, sp, NR, start);
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
unsafe fn plain_tile<const NR: usize, const ROWS: bool>(
    rows: usize,
    kc: usize,
    a: *const f32,
    lda: usize,
    b: *const f32,
    offs: *const usize,
    c: *mut f32,
    ldc: usize,
    start: Start,
) {
    let mut acc = [[0f32; NR]; MR];
    for (i, row) in acc.iter_mut().enumerate().take(rows) {
        if start == Start::Carry {
            // SAFETY: row `i < rows` of the tile lies in `c`.
            row.copy_from_slice(unsafe { std::slice::from_raw_parts(c.add(i * ldc), NR) });
        }
    }
    for p in 0..kc {
        // SAFETY: step `p < kc` of the panel block and of each row lie in `b` and `a`.
        let bv = unsafe { std::slice::from_raw_parts(step::<NR, ROWS>(b, offs, p), NR) };
        for (i, row) in acc.iter_mut().enumerate().take(rows) {
            let av = unsafe { *a.add(i * lda + p) };
            for (o, &x) in row.iter_mut().zip(bv) {
                *o = av.mul_add(x, *o);
            }
        }
    }
    for (i, row) in acc.iter_mut().enumerate().take(rows) {
        if start == Start::Add {
            // SAFETY: as above.
            let old = unsafe { std::slice::from_raw_parts(c.add(i * ldc), NR) };
            for (o, &v) in row.iter_mut().zip(old) {
                *o += v;
            }
        }
        // SAFETY: as above.
        unsafe { std::ptr::copy_nonoverlapping(row.as_ptr(), c.add(i * ldc), NR) };
    }
}

/// Rows of `B` that [`Panels::copied`] asks the cache for ahead of the one it packs (each row's
/// columns a short run, too short for the hardware's prefetcher to see).
const AHEAD: usize = 4;

/// [`Panels::pack_row`] for panels of `NR` columns.
#[inline(always)]
fn row_to_panels<const NR: usize>(packed: &mut [f32], k: usize, r: usize, v: &[f32]) {
    let mut pieces = v.chunks_exact(NR);
    for (j, piece) in pieces.by_ref().enumerate() {
        let dst: &mut [f32; NR] = (&mut packed[(j * k + r) * NR..][..NR]).try_into().unwrap();
        *dst = piece.try_into().unwrap();
    }
    let rest = pieces.remainder();
    if !rest.is_empty() {
        let j = v.len() / NR;
        packed[(j * k + r) * NR..][..rest.len()].copy_from_slice(rest);
    }
}

/// Calls `$f::<R, $g>` with `R` the row count (1 to 8), a constant to the micro-tile.
macro_rules! by_rows {
    ($f:ident, $g:ident, $rows:expr, $($arg:expr),*) => {
        match $rows {
            8 => $f::<8, $g>($($arg),*),
            7 => $f::<7, $g>($($arg),*),
            6 => $f::<6, $g>($($arg),*),
            5 => $f::<5, $g>($($arg),*),
            4 => $f::<4, $g>($($arg),*),
            3 => $f::<3, $g>($($arg),*),
            2 => $f::<2, $g>($($arg),*),
            _ => $f::<1, $g>($($arg),*),
        }
    };
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    use super::{MR, Shape, Start, drive, step};

    /// `B` as packed panels (`offs` unused) or as rows at `offs` ([`super::drive`]).
    type Src = (*const f32, *const usize);

    /// The AVX-512 GEMM: panels of 32 columns, `R × 2` registers of sums.
    #[target_feature(enable = "avx512f,avx512vl,avx512bw,avx512dq,avx2,fma")]
    pub(super) unsafe fn gemm_avx512<const ROWS: bool>(
        s: Shape,
        a: *const f32,
        b: Src,
        c: *mut f32,
    ) {
        // SAFETY: the caller's bounds; the features are enabled here.
        unsafe { drive::<32, ROWS>(s, a, b, c, tile_avx512::<ROWS>, half_avx512::<ROWS>) }
    }

    /// The AVX2 GEMM: panels of 16 columns, `R × 2` registers of sums.
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn gemm_avx2<const ROWS: bool>(s: Shape, a: *const f32, b: Src, c: *mut f32) {
        // SAFETY: as above.
        unsafe { drive::<16, ROWS>(s, a, b, c, tile_avx2::<ROWS>, half_avx2::<ROWS>) }
    }

    #[target_feature(enable = "avx512f,avx512vl,avx512bw,avx512dq,avx2,fma")]
    #[allow(clippy::too_many_arguments)]
    unsafe fn tile_avx512<const ROWS: bool>(
        rows: usize,
        kc: usize,
        a: *const f32,
        lda: usize,
        b: *const f32,
        offs: *const usize,
        c: *mut f32,
        ldc: usize,
        start: Start,
    ) {
        // SAFETY: the caller's bounds (`Tile`).
        unsafe { by_rows!(rows_avx512, ROWS, rows, kc, a, lda, b, offs, c, ldc, start) }
    }

    #[target_feature(enable = "avx2,fma")]
    #[allow(clippy::too_many_arguments)]
    unsafe fn tile_avx2<const ROWS: bool>(
        rows: usize,
        kc: usize,
        a: *const f32,
        lda: usize,
        b: *const f32,
        offs: *const usize,
        c: *mut f32,
        ldc: usize,
        start: Start,
    ) {
        // SAFETY: the caller's bounds (`Tile`); AVX2's 16 registers hold at most 6 rows of
        // sums, so 7 and 8 rows run as 6 and the rest.
        unsafe {
            if rows > 6 {
                rows_avx2::<6, ROWS>(kc, a, lda, b, offs, c, ldc, start);
                let (a, c) = (a.add(6 * lda), c.add(6 * ldc));
                return tile_avx2::<ROWS>(rows - 6, kc, a, lda, b, offs, c, ldc, start);
            }
            by_rows!(rows_avx2, ROWS, rows, kc, a, lda, b, offs, c, ldc, start)
        }
    }

    /// The first 16 columns of a 32-column panel: `R` registers of sums.
    #[target_feature(enable = "avx512f,avx512vl,avx512bw,avx512dq,avx2,fma")]
    #[allow(clippy::too_many_arguments)]
    unsafe fn half_avx512<const ROWS: bool>(
        rows: usize,
        kc: usize,
        a: *const f32,
        lda: usize,
        b: *const f32,
        offs: *const usize,
        c: *mut f32,
        ldc: usize,
        start: Start,
    ) {
        // SAFETY: the caller's bounds (`Tile`).
        unsafe { by_rows!(one_avx512, ROWS, rows, kc, a, lda, b, offs, c, ldc, start) }
    }

    /// The first 8 columns of a 16-column panel: `R` registers of sums.
    #[target_feature(enable = "avx2,fma")]
    #[allow(clippy::too_many_arguments)]
    unsafe fn half_avx2<const ROWS: bool>(
        rows: usize,
        kc: usize,
        a: *const f32,
        lda: usize,
        b: *const f32,
        offs: *const usize,
        c: *mut f32,
        ldc: usize,
        start: Start,
    ) {
        // SAFETY: the caller's bounds (`Tile`).
        unsafe { by_rows!(one_avx2, ROWS, rows, kc, a, lda, b, offs, c, ldc, start) }
    }

    #[inline]
    #[target_feature(enable = "avx512f,avx512vl,avx512bw,avx512dq,avx2,fma")]
    #[allow(clippy::too_many_arguments)]
    unsafe fn one_avx512<const R: usize, const ROWS: bool>(
        kc: usize,
        a: *const f32,
        lda: usize,
        b: *const f32,
        offs: *const usize,
        c: *mut f32,
        ldc: usize,
        start: Start,
    ) {
        // SAFETY: `R` rows of 16 columns of `c`, `kc` steps of `R` rows of `a` and of the
        // panel block `b` (32 per step, the first 16 read) are within the caller's bounds.
        unsafe {
            let mut acc = [_mm512_setzero_ps(); R];
            if start == Start::Carry {
                for (i, v) in acc.iter_mut().enumerate() {
                    *v = _mm512_loadu_ps(c.add(i * ldc));
                }
            }
            for p in 0..kc {
                let b0 = _mm512_loadu_ps(step::<32, ROWS>(b, offs, p));
                for (i, v) in acc.iter_mut().enumerate() {
                    *v = _mm512_fmadd_ps(_mm512_set1_ps(*a.add(i * lda + p)), b0, *v);
                }
            }
            for (i, v) in acc.iter_mut().enumerate() {
                if start == Start::Add {
                    *v = _mm512_add_ps(*v, _mm512_loadu_ps(c.add(i * ldc)));
                }
                _mm512_storeu_ps(c.add(i * ldc), *v);
            }
        }
    }

    #[inline]
    #[target_feature(enable = "avx2,fma")]
    #[allow(clippy::too_many_arguments)]
    unsafe fn one_avx2<const R: usize, const ROWS: bool>(
        kc: usize,
        a: *const f32,
        lda: usize,
        b: *const f32,
        offs: *const usize,
        c: *mut f32,
        ldc: usize,
        start: Start,
    ) {
        // SAFETY: `R` rows of 8 columns of `c`, `kc` steps of `R` rows of `a` and of the
        // panel block `b` (16 per step, the first 8 read) are within the caller's bounds.
        unsafe {
            let mut acc = [_mm256_setzero_ps(); R];
            if start == Start::Carry {
                for (i, v) in acc.iter_mut().enumerate() {
                    *v = _mm256_loadu_ps(c.add(i * ldc));
                }
            }
            for p in 0..kc {
                let b0 = _mm256_loadu_ps(step::<16, ROWS>(b, offs, p));
                for (i, v) in acc.iter_mut().enumerate() {
                    *v = _mm256_fmadd_ps(_mm256_set1_ps(*a.add(i * lda + p)), b0, *v);
                }
            }
            for (i, v) in acc.iter_mut().enumerate() {
                if start == Start::Add {
                    *v = _mm256_add_ps(*v, _mm256_loadu_ps(c.add(i * ldc)));
                }
                _mm256_storeu_ps(c.add(i * ldc), *v);
            }
        }
    }

    const _: () = assert!(MR == 8);

    #[inline]
    #[target_feature(enable = "avx512f,avx512vl,avx512bw,avx512dq,avx2,fma")]
    #[allow(clippy::too_many_arguments)]
    unsafe fn rows_avx512<const R: usize, const ROWS: bool>(
        kc: usize,
        a: *const f32,
        lda: usize,
        b: *const f32,
        offs: *const usize,
        c: *mut f32,
        ldc: usize,
        start: Start,
    ) {
        // SAFETY: `R` rows of 32 columns of `c`, `kc` steps of `R` rows of `a` and of the
        // panel block `b` (32 per step) are within the caller's bounds.
        unsafe {
            let mut lo = [_mm512_setzero_ps(); R];
            let mut hi = [_mm512_setzero_ps(); R];
            if start == Start::Carry {
                for i in 0..R {
                    lo[i] = _mm512_loadu_ps(c.add(i * ldc));
                    hi[i] = _mm512_loadu_ps(c.add(i * ldc + 16));
                }
            }
            for p in 0..kc {
                let bp = step::<32, ROWS>(b, offs, p);
                let b0 = _mm512_loadu_ps(bp);
                let b1 = _mm512_loadu_ps(bp.add(16));
                for i in 0..R {
                    let x = _mm512_set1_ps(*a.add(i * lda + p));
                    lo[i] = _mm512_fmadd_ps(x, b0, lo[i]);
                    hi[i] = _mm512_fmadd_ps(x, b1, hi[i]);
                }
            }
            for i in 0..R {
                if start == Start::Add {
                    lo[i] = _mm512_add_ps(lo[i], _mm512_loadu_ps(c.add(i * ldc)));
                    hi[i] = _mm512_add_ps(hi[i], _mm512_loadu_ps(c.add(i * ldc + 16)));
                }
                _mm512_storeu_ps(c.add(i * ldc), lo[i]);
                _mm512_storeu_ps(c.add(i * ldc + 16), hi[i]);
            }
        }
    }

    #[inline]
    #[target_feature(enable = "avx2,fma")]
    #[allow(clippy::too_many_arguments)]
    unsafe fn rows_avx2<const R: usize, const ROWS: bool>(
        kc: usize,
        a: *const f32,
        lda: usize,
        b: *const f32,
        offs: *const usize,
        c: *mut f32,
        ldc: usize,
        start: Start,
    ) {
        // SAFETY: `R` rows of 16 columns of `c`, `kc` steps of `R` rows of `a` and of the
        // panel block `b` (16 per step) are within the caller's bounds.
        unsafe {
            let mut lo = [_mm256_setzero_ps(); R];
            let mut hi = [_mm256_setzero_ps(); R];
            if start == Start::Carry {
                for i in 0..R {
                    lo[i] = _mm256_loadu_ps(c.add(i * ldc));
                    hi[i] = _mm256_loadu_ps(c.add(i * ldc + 8));
                }
            }
            for p in 0..kc {
                let bp = step::<16, ROWS>(b, offs, p);
                let b0 = _mm256_loadu_ps(bp);
                let b1 = _mm256_loadu_ps(bp.add(8));
                for i in 0..R {
                    let x = _mm256_set1_ps(*a.add(i * lda + p));
                    lo[i] = _mm256_fmadd_ps(x, b0, lo[i]);
                    hi[i] = _mm256_fmadd_ps(x, b1, hi[i]);
                }
            }
            for i in 0..R {
                if start == Start::Add {
                    lo[i] = _mm256_add_ps(lo[i], _mm256_loadu_ps(c.add(i * ldc)));
                    hi[i] = _mm256_add_ps(hi[i], _mm256_loadu_ps(c.add(i * ldc + 8)));
                }
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

    /// `c` (rows of `ldc`, 7 past the first `n` columns) holds `want` (`m × n`) bit for bit.
    fn same_rows(c: &[f32], want: &[f32], (m, n, k): (usize, usize, usize), ldc: usize, u: Panels) {
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

    /// `u`'s GEMM of `a` and `b` packed holds `want`, bit for bit; C sits in a wider matrix
    /// (row stride n + 3) whose other columns stay put.
    fn packed_gives(
        u: Panels,
        (a, b): (&[f32], &[f32]),
        want: &[f32],
        dims: (usize, usize, usize),
    ) {
        let (m, n, k) = dims;
        let ldc = n + 3;
        let mut c = vec![7f32; m * ldc];
        let packed = pack(b, k, n, u.width());
        // SAFETY: `a` is m × k, `c` m × ldc, `packed` holds the panels.
        unsafe { u.gemm(m, n, k, a.as_ptr(), k, &packed, c.as_mut_ptr(), ldc) };
        same_rows(&c, want, dims, ldc, u);
    }

    fn units() -> Vec<Panels> {
        let best = Panels::detect().unit;
        [Simd::None, Simd::Avx2, Simd::Avx512]
            .into_iter()
            .filter(|&u| u <= best)
            .map(|unit| Panels {
                unit,
                blocks: false,
                copies: false,
            })
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
                packed_gives(u, (&a, &b), &want, (m, n, k));
            }
        }
    }

    /// The blocked order: a chain from +0 per block of 256 steps, the blocks added in order;
    /// every unit gives it, and so does the GEMM crate's `sgemm` on this CPU (the order MatMul
    /// has always had).
    #[test]
    fn blocked_sums_are_the_crates_bit_for_bit() {
        let dims = [
            (1, 1, 1),
            (7, 33, 256),
            (13, 17, 257),
            (9, 70, 600),
            (16, 40, 1030),
        ];
        for (t, &(m, n, k)) in dims.iter().enumerate() {
            let a = uniform_for_test(m * k, 7 * t as u64 + 1, -1.0, 1.0);
            let b = uniform_for_test(k * n, 7 * t as u64 + 2, -1.0, 1.0);
            let mut want = vec![0f32; m * n];
            for i in 0..m {
                for j in 0..n {
                    let mut c = 0f32;
                    for k0 in (0..k).step_by(256) {
                        let s = (k0..(k0 + 256).min(k))
                            .fold(0f32, |s, p| a[i * k + p].mul_add(b[p * n + j], s));
                        c = if k0 == 0 { s } else { s + c };
                    }
                    want[i * n + j] = c;
                }
            }
            let mut crate_c = vec![0f32; m * n];
            // SAFETY: a is m × k, b k × n, c m × n, all row-major.
            unsafe {
                let (a, b, c) = (a.as_ptr(), b.as_ptr(), crate_c.as_mut_ptr());
                let (k_, n_) = (k as isize, n as isize);
                matrixmultiply::sgemm(m, k, n, 1.0, a, k_, 1, b, n_, 1, 0.0, c, n_, 1);
            }
            #[cfg(target_arch = "x86_64")]
            if std::arch::is_x86_feature_detected!("fma") {
                let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(&crate_c), bits(&want), "crate {m}×{n}×{k}");
            }
            for u in units() {
                packed_gives(u.blocked(), (&a, &b), &want, (m, n, k));
            }
        }
    }

    /// `B`'s rows read where they lie, at offsets in any order (overlapping, as the taps of a
    /// convolution's padded copy do), or packed a block at a time from there (copying: its
    /// blocks of steps and of columns): the same chain as the packed GEMM, bit for bit.
    #[test]
    fn rows_at_offsets_give_the_fused_chain_bit_for_bit() {
        let dims = [
            (1, 1, 1),
            (7, 33, 5),
            (13, 17, 257),
            (20, 100, 300),
            (9, 645, 27),
            (4, 5, 0),
            (17, 600, 530),
        ];
        for (t, &(m, n, k)) in dims.iter().enumerate() {
            let a = uniform_for_test(m * k, 5 * t as u64 + 1, -1.0, 1.0);
            // A pool of values that the rows read: row `p` starts `(p·37) % 101` in, so rows
            // overlap and go back and forth. Past what any row's `n` columns reach, the pool
            // holds NaN (read by the last panel's columns past `n`, whose sums are dropped).
            let offs: Vec<usize> = (0..k).map(|p| (p * 37) % 101).collect();
            let reach = offs.iter().max().map_or(0, |&o| o + n);
            let mut pool = uniform_for_test(reach + MAX_NR, 5 * t as u64 + 2, -1.0, 1.0);
            pool[reach..].fill(f32::NAN);
            let b: Vec<f32> = (0..k * n).map(|i| pool[offs[i / n] + i % n]).collect();
            let want = chain(&a, &b, m, n, k);
            let units = units().into_iter();
            for u in units.flat_map(|u| [u, u.copying()]) {
                let ldc = n + 3;
                let mut c = vec![7f32; m * ldc];
                // SAFETY: `a` is m × k, `c` m × ldc, and `pool` holds every row's `n` columns
                // and a whole panel more.
                unsafe {
                    let b = (pool.as_ptr(), &offs[..]);
                    u.gemm_rows(m, n, k, a.as_ptr(), k, b, c.as_mut_ptr(), ldc)
                };
                same_rows(&c, &want, (m, n, k), ldc, u);
            }
        }
    }
}
