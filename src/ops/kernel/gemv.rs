//! One row times a matrix, `c = a · B`, in the summation order of the GEMM crate
//! (`matrixmultiply`), so that a MatMul with one row gives the bits the crate would give:
//! `K` in blocks of [`KC`] from the start; within a block, each output one chain of fused
//! multiply-adds over `k` in order, from +0; the blocks' sums added in order to the result
//! (the first block's taken as it is).
//!
//! Why: with one row, the crate still packs the whole of `B` before it multiplies (a fully
//! connected layer of 1000 × 2048 copies 8 MB for 2 M multiply-adds, and reads it twice).
//! Here `B` is read once, where it lies:
//! * `B` row-major (`[K, N]`): the rows of a block stream through, each output column one
//!   vector lane of a row of partial sums;
//! * `B` transposed (`[N, K]`, a fully connected layer's weights): 16 outputs at a time,
//!   squares of 16 × 16 of `B` transposed in registers ([`Lane::transpose`]) so that each
//!   `k` is one vector multiply-add for 16 outputs.
//!
//! Only where the CPU has fused multiply-adds (the crate's kernels then use them too); the
//! caller takes the crate otherwise.

use super::lanes::{LANES, Lane, Square};
use super::simd::{Simd, vectorised_for};
use crate::num::Float;

/// A float of the GEMM crate: its fused multiply-add as the instruction (`Float::mul_add` is
/// the `libm` crate's, a call, which the vectorised loops cannot inline).
pub(crate) trait Fused: Float + Lane {
    /// `self · a + b`, rounded once.
    fn fused(self, a: Self, b: Self) -> Self;
}

macro_rules! fused {
    ($($t:ty)*) => {$(
        impl Fused for $t {
            #[inline(always)]
            fn fused(self, a: $t, b: $t) -> $t {
                <$t>::mul_add(self, a, b)
            }
        }
    )*};
}
fused!(f32 f64);

/// The GEMM crate's K block (`matrixmultiply`'s `S_KC` and `D_KC`).
pub(crate) const KC: usize = 256;

/// Columns per part of a row-major `B`: the partial sums of a block stay in the L1 cache.
const ROW_PART: usize = 512;

/// Whether this CPU runs the path (one with fused multiply-adds in its vector unit).
pub(crate) fn available() -> bool {
    #[cfg(target_arch = "x86_64")]
    return super::simd::simd() != Simd::None;
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// `c[j] = Σ_k a[k] · B[k, j0 + j]` for `j < c.len()`, `B[k, j]` at `b[k·rsb + j·csb]`, one
/// of the strides 1, in the crate's order. `a` holds `K` values; `b` every element addressed.
pub(crate) fn row_times<T: Fused>(
    a: &[T],
    b: &[T],
    (rsb, csb): (usize, usize),
    j0: usize,
    c: &mut [T],
) {
    vectorised_for(
        #[inline(always)]
        |unit| {
            if csb == 1 {
                for (p, c) in c.chunks_mut(ROW_PART).enumerate() {
                    rows(a, b, rsb, j0 + p * ROW_PART, c)
                }
            } else {
                columns(a, b, csb, j0, c, unit, KC)
            }
        },
    )
}

/// `c[j] = Σ_k a[k] · B[j0 + j, k]` for `j < c.len()`, `B[j, k]` at `b[j·csb + k]`, each
/// output one chain of fused multiply-adds over the whole of `k` in order from +0: the order
/// of the convolution's [`gemm`](super::gemm), for a convolution with one output position.
pub(crate) fn chain_times<T: Fused>(a: &[T], b: &[T], csb: usize, j0: usize, c: &mut [T]) {
    vectorised_for(
        #[inline(always)]
        |unit| columns(a, b, csb, j0, c, unit, usize::MAX),
    )
}

/// A block's sums into the results: the first block's as they are, the others added.
#[inline(always)]
fn settle<T: Fused>(first: bool, c: &mut [T], part: &[T]) {
    for (c, &p) in c.iter_mut().zip(part) {
        *c = settled(first, *c, p);
    }
}

/// One block's sum into one result: [`settle`] for a single output.
#[inline(always)]
fn settled<T: Fused>(first: bool, total: T, part: T) -> T {
    if first { part } else { total + part }
}

/// `B` row-major: each block's rows added into a row of partial sums.
#[inline(always)]
fn rows<T: Fused>(a: &[T], b: &[T], rsb: usize, j0: usize, c: &mut [T]) {
    let n = c.len();
    let mut part = [T::ZERO; ROW_PART];
    let part = &mut part[..n];
    for (blk, ks) in a.chunks(KC).enumerate() {
        part.fill(T::ZERO);
        let k0 = blk * KC;
        for (i, &ak) in ks.iter().enumerate() {
            let row = &b[(k0 + i) * rsb + j0..][..n];
            for (p, &bv) in part.iter_mut().zip(row) {
                *p = ak.fused(bv, *p);
            }
        }
        settle(blk == 0, c, part);
    }
}

/// `B` transposed (output `j`'s values contiguous, `csb` apart): [`LANES`] outputs at a
/// time, the last group overlapping the one before it; fewer outputs than that one at a time.
/// `K` in blocks of `kc`.
#[inline(always)]
fn columns<T: Fused>(a: &[T], b: &[T], csb: usize, j0: usize, c: &mut [T], unit: Simd, kc: usize) {
    let n = c.len();
    if n < LANES {
        for (j, c) in c.iter_mut().enumerate() {
            let col = &b[(j0 + j) * csb..];
            let mut total = T::ZERO;
            for (blk, ks) in a.chunks(kc).enumerate() {
                let k0 = blk * kc;
                let mut acc = T::ZERO;
                for (i, &ak) in ks.iter().enumerate() {
                    acc = ak.fused(col[k0 + i], acc);
                }
                total = settled(blk == 0, total, acc);
            }
            *c = total;
        }
        return;
    }
    let mut at = 0;
    loop {
        let js = at.min(n - LANES);
        let base = (j0 + js) * csb;
        let mut total = [T::ZERO; LANES];
        for (blk, ks) in a.chunks(kc).enumerate() {
            let k0 = blk * kc;
            let mut acc = [T::ZERO; LANES];
            let mut squares = ks.chunks_exact(LANES);
            for (s, ak) in squares.by_ref().enumerate() {
                let k = k0 + s * LANES;
                let square: Square<T> = std::array::from_fn(|r| {
                    b[base + r * csb + k..][..LANES]
                        .try_into()
                        .expect("LANES values")
                });
                let t = T::transpose(&square, unit);
                for (&ak, t) in ak.iter().zip(&t) {
                    for (acc, &v) in acc.iter_mut().zip(t) {
                        *acc = ak.fused(v, *acc);
                    }
                }
            }
            let rest = squares.remainder();
            let k = k0 + ks.len() - rest.len();
            for (i, &ak) in rest.iter().enumerate() {
                for (r, acc) in acc.iter_mut().enumerate() {
                    *acc = ak.fused(b[base + r * csb + k + i], *acc);
                }
            }
            settle(blk == 0, &mut total, &acc);
        }
        c[js..js + LANES].copy_from_slice(&total);
        if js + LANES == n {
            return;
        }
        at += LANES;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::matmul::Gemm;

    fn values(n: usize, seed: u64) -> Vec<f32> {
        let mut s = seed;
        (0..n)
            .map(|_| {
                s = s
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                ((s >> 40) as f32 / (1u64 << 24) as f32 - 0.5) * 8.0
            })
            .collect()
    }

    /// Against the crate itself: every K around the block size, outputs fewer than the lanes,
    /// a multiple of them and between, both layouts of `B`, a column offset; bit for bit, in
    /// f32 and f64.
    #[test]
    fn gives_the_crates_bits() {
        if !available() {
            return;
        }
        compare::<f32>(|v| v);
        compare::<f64>(|v| v as f64);
    }

    /// Against one fused chain over the whole of `k` per output, bit for bit: `k` around the
    /// crate's block (no blocks here), outputs fewer than the lanes and around them.
    #[test]
    fn chains_over_all_k() {
        if !available() {
            return;
        }
        for k in [1, 5, 16, 17, 255, 256, 257, 600] {
            for n in [1, 7, 16, 33, 100] {
                let a = values(k, k as u64);
                let b = values(k * (n + 3), (k * n) as u64);
                let mut got = vec![1f32; n];
                chain_times(&a, &b, k, 2, &mut got);
                for (j, g) in got.iter().enumerate() {
                    let row = &b[(j + 2) * k..][..k];
                    let want = a.iter().zip(row).fold(0f32, |s, (&x, &y)| x.mul_add(y, s));
                    assert_eq!(g.to_bits(), want.to_bits(), "k {k} n {n} j {j}");
                }
            }
        }
    }

    fn compare<T: Gemm>(of: impl Fn(f32) -> T) {
        for k in [1, 5, 16, 17, 255, 256, 257, 600, 1024] {
            for n in [1, 7, 16, 33, 100, 513, 1030] {
                let a: Vec<T> = values(k, k as u64).into_iter().map(&of).collect();
                let b: Vec<T> = values(k * (n + 3), (k * n) as u64)
                    .into_iter()
                    .map(&of)
                    .collect();
                for (strides, j0) in [((n + 3, 1), 2), ((1, k), 3)] {
                    let mut want = vec![T::ZERO; n];
                    // SAFETY: B's elements for columns j0..j0 + n lie in `b` (n + 3 columns).
                    unsafe {
                        T::gemm(
                            1,
                            k,
                            n,
                            a.as_ptr(),
                            (k, 1),
                            b.as_ptr().add(j0 * if strides.1 == 1 { 1 } else { k }),
                            strides,
                            want.as_mut_ptr(),
                            n,
                        )
                    };
                    let mut got = vec![T::ONE; n];
                    row_times(&a, &b, strides, j0, &mut got);
                    let same = got
                        .iter()
                        .zip(&want)
                        .all(|(g, w)| g.as_f64().to_bits() == w.as_f64().to_bits());
                    assert!(same, "k {k} n {n} strides {strides:?}");
                }
            }
        }
    }
}
