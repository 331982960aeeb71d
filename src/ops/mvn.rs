//! MVN-1 (OpenVINO's `MVN` of opset2 to opset5, listed in its opset table as version 2) and
//! MVN-6: mean-variance normalisation over a set of axes. This file also holds what the
//! normalisations share with Softmax and NormalizeL2 (`softmax.rs`, `normalize_l2.rs`): the
//! fixed-order summation, the layouts of the groups, and the parallel drivers.
//!
//! Spec: <https://docs.openvino.ai/2026/documentation/openvino-ir-format/operation-sets/operation-specs/normalization/mvn-1.html>
//! and <https://docs.openvino.ai/2026/documentation/openvino-ir-format/operation-sets/operation-specs/normalization/mvn-6.html>.
//!
//! Ports: MVN-1 takes `data` only; MVN-6 takes `data` and `axes` (1-D, i32 or i64; negative
//! counts from the end). One output of the data's type and shape. `data` is any float type
//! (f16, bf16, f32, f64; others are refused, E502).
//!
//! Each group (the elements that share every coordinate outside the axes) is normalised:
//! `o = x − mean`, and with `normalize_variance`, `o = (x − mean) / sqrt(var + eps)` (MVN-1,
//! and MVN-6 with `eps_mode="inside_sqrt"`) or `(x − mean) / (sqrt(var) + eps)` (MVN-6
//! `outside_sqrt`), `var` the mean of the squared deviations (the population variance).
//!
//! Attributes (as OpenVINO's `visit_attributes` names them):
//! * MVN-1: `eps` (double, required), `normalize_variance` (required), and either
//!   `across_channels` or `reduction_axes` (a comma-separated list, negative counting from the
//!   end). OpenVINO itself writes both (`reduction_axes` as computed from `across_channels`,
//!   or empty): a non-empty `reduction_axes` decides and `across_channels` is then ignored, as
//!   in OpenVINO; an empty or missing one means axes `1..rank` with `across_channels="true"`
//!   (a layer norm over each sample) and `2..rank` with `"false"` (each sample's channels
//!   apart). `across_channels` is then required (OpenVINO leaves the value undefined).
//! * MVN-6: `eps` (float: the value is rounded to f32 as OpenVINO stores it),
//!   `normalize_variance` and `eps_mode` (`inside_sqrt` / `outside_sqrt`, any case: OpenVINO
//!   writes `INSIDE_SQRT`), all required.
//!
//! Decisions:
//! * `eps` must be a finite number ≥ 0 (the spec says positive; OpenVINO checks nothing; 0 is
//!   accepted since models carry it, and a constant group then gives 0/0 = NaN).
//! * Axes: out of range and repeated axes are invalid inputs (E507), at inference when the
//!   rank and the axes are known and at execution (the specs ask for unique axes; OpenVINO
//!   counts a repeated axis once). Empty axes normalise each element alone: `x − x = 0`
//!   (NaN for ±inf and NaN), as OpenVINO's reference does.
//! * Arithmetic: the mean and the variance are accumulated in f64 for every type, in two passes
//!   (the mean, then the sum of squared deviations from it: the textbook `E[x²] − E[x]²` loses
//!   every digit of the variance when the mean is large against the spread, and can go
//!   negative), by the fixed summation order below; the output is computed in f64 and rounded
//!   once to the type (f32, f16, bf16: `(x − mean) · (1/σ)`; f64: `(x − mean) / σ`). So the
//!   squares of f16, bf16 and f32 data cannot overflow (OpenVINO's reference sums in the
//!   type). IEEE rules otherwise: a NaN or infinity in a group makes its outputs NaN (or ±inf
//!   without `normalize_variance`). Not covered: f64 data beyond about 1e154 in magnitude,
//!   whose squares overflow.
//! * Accuracy (tested against a double-double reference over groups of 1 to 4099 elements,
//!   means up to 1000 σ): f32 outputs are within half an ulp of the exact result plus an
//!   absolute error of at most `2^-40 · (1 + |mean|/σ)` (asserted); measured, every output was
//!   the correctly rounded result (at most 0.49999 ulp). f64 outputs are within a few units
//!   of `2^-52 · (1 + |mean|/σ)`.
//!
//! Summation order (shared with Softmax and NormalizeL2; `tree_sum`): a group's `n` terms,
//! in the row-major order of their coordinates along the reduced axes, are cut into leaves of
//! `LEAF` terms; term `i` of a leaf goes to accumulator `i mod` `LANES`, each accumulator
//! adds its terms in order from 0, and the accumulators are folded by halves (`a[k] += a[k +
//! 8]`, then `+ 4`, `+ 2`, `+ 1`); the leaves' sums are combined as a binary counter combines
//! (two sums of the same number of leaves are added as soon as both exist; what is left at the
//! end is added from the latest to the earliest). The order is a function of `n` only, so the
//! bits do not depend on the thread count, the vector unit or the layout (a group read as a
//! contiguous row and the same group read as a column of a larger array give the same bits:
//! tested), and the error bound is pairwise summation's, `O(LEAF/LANES + log2(n/LEAF))`
//! roundings, each of 2^-53 relative.
//!
//! Inference: the output is the data's type and shape (dynamic rank and interval dims pass
//! through). MVN-6's axes must be 1-D and, when the data's rank is known, not longer than it;
//! when their values are known too, they are checked as above.
//!
//! Execution: the groups' layout decides the loops (`Layout`): groups that are contiguous
//! rows are computed row by row, in parallel over parts of at least 16K elements; groups that
//! are columns (the axes one run of dims followed by kept dims, e.g. over the channels of NCHW)
//! 16 columns at a time, vectorised across the columns, in parallel over those strips; any
//! other set of axes through a copy of the data with the reduced axes last (within the memory
//! budget). f32 rows have their own kernel (`RowsF32`), written over the 16-lane blocks of
//! [`blocks`] on the widest vector unit, with the operations of the general row loop in the
//! same order (so the same bits in every layout: tested), and an output that is not
//! zero-filled first; the other types and layouts are auto-vectorised. Speed (AMD EPYC Zen 4,
//! 2 cores, AVX-512, `benches/compare.py`): `[8,128,768]` over the last axis 0.164 ms at 1
//! thread and 0.084 at 2 (OpenVINO 0.23 at both); before the f32 kernel, 0.41 and 0.25.

use std::marker::PhantomData;
use std::mem::MaybeUninit;

use half::{bf16, f16};
use rayon::prelude::*;

use super::kernel::{PARALLEL_MIN, vectorised};
use super::{Arity, AttrError, Attrs, EvalCx, EvalError, InferCx, Op, OpDef};
use crate::dtype::ElementType;
use crate::error::ErrorKind;
use crate::num::{Cast, Num};
use crate::shape::TensorType;
use crate::tensor::{Element, Tensor, TypeSet};

// ---------------------------------------------------------------------------------------------
// Shared with Softmax and NormalizeL2.

/// A float element type the normalisations compute on: read as f64, written by one rounding
/// from f64.
pub(crate) trait Real: Element + Cast {
    /// Whether the type is f64: the last step then divides, where narrower types multiply by
    /// the reciprocal (whose f64 rounding is far below their ulp).
    const WIDE: bool;
    /// The value as f64 (exact).
    fn wide(self) -> f64;
    /// `v` rounded once to the type (to nearest even).
    fn narrow(v: f64) -> Self;
}

impl Real for f32 {
    const WIDE: bool = false;
    #[inline(always)]
    fn wide(self) -> f64 {
        self as f64
    }
    #[inline(always)]
    fn narrow(v: f64) -> Self {
        v as f32
    }
}

impl Real for f64 {
    const WIDE: bool = true;
    #[inline(always)]
    fn wide(self) -> f64 {
        self
    }
    #[inline(always)]
    fn narrow(v: f64) -> Self {
        v
    }
}

macro_rules! narrow_real {
    ($($t:ty)*) => {$(
        impl Real for $t {
            const WIDE: bool = false;
            #[inline(always)]
            fn wide(self) -> f64 {
                <$t>::to_f64(self)
            }
            #[inline(always)]
            fn narrow(v: f64) -> Self {
                // Through an f32 rounded to odd: one rounding in effect.
                <$t as Cast>::from_num(Num::Float(v))
            }
        }
    )*};
}
narrow_real!(f16 bf16);

/// Terms per leaf of the summation tree.
pub(crate) const LEAF: usize = 256;
/// Accumulators per leaf.
pub(crate) const LANES: usize = 16;
/// Columns computed side by side in the column layout.
pub(crate) const W: usize = 16;

/// The sum of a group's `n` terms in the fixed order described in the module's doc: `leaf(at,
/// len)` gives the sum of the terms `at..at + len` (at most [`LEAF`] of them, `at` a multiple
/// of `LEAF`), as [`lanes_sum`] or [`col_tree`] computes it; `add` adds two partial sums.
/// Written without recursion, so that it inlines into the vector unit's code with `leaf`.
#[inline(always)]
pub(crate) fn tree_sum<S: Copy>(
    n: usize,
    mut leaf: impl FnMut(usize, usize) -> S,
    add: impl Fn(S, S) -> S,
) -> S {
    if n <= LEAF {
        return leaf(0, n);
    }
    // The pending sums, earliest first, with the number of leaves each holds as a power of
    // two: at most one per bit of the leaf count. Left uninitialised (filling it cost a tenth
    // of MVN's time on rows of 768): entries `0..top` are written before they are read.
    let mut sums = [const { std::mem::MaybeUninit::<S>::uninit() }; 64];
    let mut levels = [0u32; 64];
    let mut top = 0;
    let mut at = 0;
    while at < n {
        let len = (n - at).min(LEAF);
        let mut s = leaf(at, len);
        let mut level = 0;
        while top > 0 && levels[top - 1] == level {
            top -= 1;
            // SAFETY: entries below `top` were written.
            s = add(unsafe { sums[top].assume_init() }, s);
            level += 1;
        }
        sums[top].write(s);
        levels[top] = level;
        top += 1;
        at += len;
    }
    // SAFETY: as above (`top ≥ 1`: there was at least one leaf).
    let mut s = unsafe { sums[top - 1].assume_init() };
    for k in (0..top - 1).rev() {
        // SAFETY: as above.
        s = add(unsafe { sums[k].assume_init() }, s);
    }
    s
}

/// The accumulators of a leaf folded by halves: `a[k] += a[k + 8]`, then `+ 4`, `+ 2`, `+ 1`.
#[inline(always)]
pub(crate) fn fold(mut a: [f64; LANES]) -> f64 {
    let mut half = LANES / 2;
    while half > 0 {
        for k in 0..half {
            a[k] += a[k + half];
        }
        half /= 2;
    }
    a[0]
}

/// One leaf's sum of `term(x)` over `xs`: term `i` into accumulator `i mod LANES`, then
/// [`fold`]ed.
#[inline(always)]
pub(crate) fn lanes_sum<A: Copy>(xs: &[A], mut term: impl FnMut(A) -> f64) -> f64 {
    let mut acc = [0.0f64; LANES];
    let mut chunks = xs.chunks_exact(LANES);
    for c in &mut chunks {
        for (a, &x) in acc.iter_mut().zip(c) {
            *a += term(x);
        }
    }
    for (a, &x) in acc.iter_mut().zip(chunks.remainder()) {
        *a += term(x);
    }
    fold(acc)
}

/// The accumulators of one leaf of [`W`] columns: `[lane][column]`.
pub(crate) type ColLanes = [[f64; W]; LANES];

/// The sums of up to [`W`] columns of `n` terms each, in the order of [`tree_sum`]:
/// `leaf(at, len, acc)` adds row `j` (`at ≤ j < at + len`) of every column into `acc[(j −
/// at) % LANES]`; the accumulators are folded column by column as [`fold`] does.
#[inline(always)]
pub(crate) fn col_tree(n: usize, mut leaf: impl FnMut(usize, usize, &mut ColLanes)) -> [f64; W] {
    tree_sum(
        n,
        #[inline(always)]
        |at, len| {
            let mut acc = [[0.0f64; W]; LANES];
            leaf(at, len, &mut acc);
            let mut half = LANES / 2;
            while half > 0 {
                for k in 0..half {
                    let (lo, hi) = acc.split_at_mut(half);
                    for (a, &b) in lo[k].iter_mut().zip(&hi[k]) {
                        *a += b;
                    }
                }
                half /= 2;
            }
            acc[0]
        },
        #[inline(always)]
        |a, b| {
            let mut s = a;
            for (x, &y) in s.iter_mut().zip(&b) {
                *x += y;
            }
            s
        },
    )
}

/// Blocks of 16 lanes on each vector unit, for the f32 kernels of the normalisations (MVN's
/// rows here, Softmax's in `softmax.rs`), written once over [`Unit`](blocks::Unit).
///
/// The compiler's own vectorisation of these loops was unreliable (the f64 sums came out two
/// lanes wide, a lookup in a block as a gather), so the kernels are written with explicit
/// vectors: a block is one `__m512` (and two `__m512d` in f64) on AVX-512, two `__m256` (four
/// `__m256d`) on AVX2, and arrays of 16 on the baseline. Lane `i` of a block is element `i`,
/// so a block's f64 lanes are the 16 accumulators of the summation order above as they are.
///
/// Determinism: every operation is an IEEE operation with one defined result, or a bit move,
/// done lane by lane; the baseline uses the same operations one lane at a time (`mul_add` is
/// the correctly rounded fused step there too, a library call), so every unit gives the same
/// bits. Tests run the kernels on each unit the CPU has and compare.
pub(crate) mod blocks {
    /// A vector unit's blocks of 16 lanes: `F` holds 16 f32, `D` 16 f64, `M` 16 flags.
    pub(crate) trait Unit: Copy {
        type F: Copy;
        type D: Copy;
        type M: Copy;
        /// 16 values from `p`.
        ///
        /// # Safety
        /// `p` must be readable for 16 f32.
        unsafe fn load(p: *const f32) -> Self::F;
        /// The lanes to `p`.
        ///
        /// # Safety
        /// `p` must be writable for 16 f32.
        unsafe fn store(p: *mut f32, v: Self::F);
        fn splat(v: f32) -> Self::F;
        fn add(a: Self::F, b: Self::F) -> Self::F;
        fn sub(a: Self::F, b: Self::F) -> Self::F;
        fn mul(a: Self::F, b: Self::F) -> Self::F;
        /// `a · b + c`, rounded once.
        fn fma(a: Self::F, b: Self::F, c: Self::F) -> Self::F;
        /// `c − a · b`, rounded once.
        fn fnma(a: Self::F, b: Self::F, c: Self::F) -> Self::F;
        /// `b` where `b > a`, else `a` (`maxps` with `b` first).
        fn larger(a: Self::F, b: Self::F) -> Self::F;
        /// `b` where `b < a`, else `a` (`minps` with `b` first).
        fn smaller(a: Self::F, b: Self::F) -> Self::F;
        /// `a ≥ b` (false where either is NaN).
        fn ge(a: Self::F, b: Self::F) -> Self::M;
        /// `a < b` (false where either is NaN).
        fn lt(a: Self::F, b: Self::F) -> Self::M;
        /// `a = b` (false where either is NaN).
        fn eq(a: Self::F, b: Self::F) -> Self::M;
        /// Where `a` is NaN.
        fn nan(a: Self::F) -> Self::M;
        fn and(a: Self::M, b: Self::M) -> Self::M;
        fn or(a: Self::M, b: Self::M) -> Self::M;
        /// No flag set.
        fn none() -> Self::M;
        /// Whether a flag is set.
        fn any(m: Self::M) -> bool;
        /// How many flags are set.
        fn count(m: Self::M) -> u32;
        /// `a` where the flag is set, `b` elsewhere.
        fn select(m: Self::M, a: Self::F, b: Self::F) -> Self::F;
        /// `2^n` for `k = n + 1.5 · 2^23` (n in −126..=127 in its low bits): the pattern
        /// shifted into the exponent, plus the pattern of 1.
        fn pow2(k: Self::F) -> Self::F;
        fn dsplat(v: f64) -> Self::D;
        /// The lanes as f64 (exact).
        fn widen(a: Self::F) -> Self::D;
        /// The lanes rounded to f32 (to nearest even).
        fn narrow(a: Self::D) -> Self::F;
        fn dadd(a: Self::D, b: Self::D) -> Self::D;
        fn dsub(a: Self::D, b: Self::D) -> Self::D;
        fn dmul(a: Self::D, b: Self::D) -> Self::D;
        fn lanes(a: Self::F) -> [f32; 16];
        fn dlanes(a: Self::D) -> [f64; 16];
        fn dfrom(a: [f64; 16]) -> Self::D;
        #[inline(always)]
        fn from(a: [f32; 16]) -> Self::F {
            // SAFETY: 16 f32.
            unsafe { Self::load(a.as_ptr()) }
        }
        #[inline(always)]
        fn dzero() -> Self::D {
            Self::dsplat(0.0)
        }
    }

    /// The baseline: arrays, lane by lane.
    #[derive(Clone, Copy)]
    pub(crate) struct Scalar;

    #[inline(always)]
    fn map<R>(f: impl Fn(usize) -> R) -> [R; 16] {
        std::array::from_fn(f)
    }

    impl Unit for Scalar {
        type F = [f32; 16];
        type D = [f64; 16];
        type M = [bool; 16];
        #[inline(always)]
        unsafe fn load(p: *const f32) -> [f32; 16] {
            // SAFETY: the caller's.
            unsafe { std::ptr::read_unaligned(p as *const [f32; 16]) }
        }
        #[inline(always)]
        unsafe fn store(p: *mut f32, v: [f32; 16]) {
            // SAFETY: the caller's.
            unsafe { std::ptr::write_unaligned(p as *mut [f32; 16], v) }
        }
        #[inline(always)]
        fn splat(v: f32) -> [f32; 16] {
            [v; 16]
        }
        #[inline(always)]
        fn add(a: [f32; 16], b: [f32; 16]) -> [f32; 16] {
            map(|i| a[i] + b[i])
        }
        #[inline(always)]
        fn sub(a: [f32; 16], b: [f32; 16]) -> [f32; 16] {
            map(|i| a[i] - b[i])
        }
        #[inline(always)]
        fn mul(a: [f32; 16], b: [f32; 16]) -> [f32; 16] {
            map(|i| a[i] * b[i])
        }
        #[inline(always)]
        fn fma(a: [f32; 16], b: [f32; 16], c: [f32; 16]) -> [f32; 16] {
            map(|i| a[i].mul_add(b[i], c[i]))
        }
        #[inline(always)]
        fn fnma(a: [f32; 16], b: [f32; 16], c: [f32; 16]) -> [f32; 16] {
            map(|i| (-a[i]).mul_add(b[i], c[i]))
        }
        #[inline(always)]
        fn larger(a: [f32; 16], b: [f32; 16]) -> [f32; 16] {
            map(|i| if b[i] > a[i] { b[i] } else { a[i] })
        }
        #[inline(always)]
        fn smaller(a: [f32; 16], b: [f32; 16]) -> [f32; 16] {
            map(|i| if b[i] < a[i] { b[i] } else { a[i] })
        }
        #[inline(always)]
        fn ge(a: [f32; 16], b: [f32; 16]) -> [bool; 16] {
            map(|i| a[i] >= b[i])
        }
        #[inline(always)]
        fn lt(a: [f32; 16], b: [f32; 16]) -> [bool; 16] {
            map(|i| a[i] < b[i])
        }
        #[inline(always)]
        fn eq(a: [f32; 16], b: [f32; 16]) -> [bool; 16] {
            map(|i| a[i] == b[i])
        }
        #[inline(always)]
        fn nan(a: [f32; 16]) -> [bool; 16] {
            map(|i| a[i].is_nan())
        }
        #[inline(always)]
        fn and(a: [bool; 16], b: [bool; 16]) -> [bool; 16] {
            map(|i| a[i] & b[i])
        }
        #[inline(always)]
        fn or(a: [bool; 16], b: [bool; 16]) -> [bool; 16] {
            map(|i| a[i] | b[i])
        }
        #[inline(always)]
        fn none() -> [bool; 16] {
            [false; 16]
        }
        #[inline(always)]
        fn any(m: [bool; 16]) -> bool {
            m.iter().any(|&b| b)
        }
        #[inline(always)]
        fn count(m: [bool; 16]) -> u32 {
            m.iter().map(|&b| b as u32).sum()
        }
        #[inline(always)]
        fn select(m: [bool; 16], a: [f32; 16], b: [f32; 16]) -> [f32; 16] {
            map(|i| if m[i] { a[i] } else { b[i] })
        }
        #[inline(always)]
        fn pow2(k: [f32; 16]) -> [f32; 16] {
            map(|i| f32::from_bits((k[i].to_bits() << 23).wrapping_add(1f32.to_bits())))
        }
        #[inline(always)]
        fn dsplat(v: f64) -> [f64; 16] {
            [v; 16]
        }
        #[inline(always)]
        fn widen(a: [f32; 16]) -> [f64; 16] {
            map(|i| a[i] as f64)
        }
        #[inline(always)]
        fn narrow(a: [f64; 16]) -> [f32; 16] {
            map(|i| a[i] as f32)
        }
        #[inline(always)]
        fn dadd(a: [f64; 16], b: [f64; 16]) -> [f64; 16] {
            map(|i| a[i] + b[i])
        }
        #[inline(always)]
        fn dsub(a: [f64; 16], b: [f64; 16]) -> [f64; 16] {
            map(|i| a[i] - b[i])
        }
        #[inline(always)]
        fn dmul(a: [f64; 16], b: [f64; 16]) -> [f64; 16] {
            map(|i| a[i] * b[i])
        }
        #[inline(always)]
        fn lanes(a: [f32; 16]) -> [f32; 16] {
            a
        }
        #[inline(always)]
        fn dlanes(a: [f64; 16]) -> [f64; 16] {
            a
        }
        #[inline(always)]
        fn dfrom(a: [f64; 16]) -> [f64; 16] {
            a
        }
    }

    /// AVX-512 and AVX2 (with FMA). Their methods are only called from code compiled for the
    /// unit (`on_unit` checks the CPU first): each `unsafe` block below relies on that, and
    /// loads and stores on their callers' guarantees.
    #[cfg(target_arch = "x86_64")]
    pub(crate) mod x86 {
        use super::Unit;
        use std::arch::x86_64::*;

        #[derive(Clone, Copy)]
        pub(crate) struct Avx512;
        #[derive(Clone, Copy)]
        pub(crate) struct Avx2;

        impl Unit for Avx512 {
            type F = __m512;
            type D = [__m512d; 2];
            type M = __mmask16;
            #[inline(always)]
            unsafe fn load(p: *const f32) -> __m512 {
                unsafe { _mm512_loadu_ps(p) }
            }
            #[inline(always)]
            unsafe fn store(p: *mut f32, v: __m512) {
                unsafe { _mm512_storeu_ps(p, v) }
            }
            #[inline(always)]
            fn splat(v: f32) -> __m512 {
                unsafe { _mm512_set1_ps(v) }
            }
            #[inline(always)]
            fn add(a: __m512, b: __m512) -> __m512 {
                unsafe { _mm512_add_ps(a, b) }
            }
            #[inline(always)]
            fn sub(a: __m512, b: __m512) -> __m512 {
                unsafe { _mm512_sub_ps(a, b) }
            }
            #[inline(always)]
            fn mul(a: __m512, b: __m512) -> __m512 {
                unsafe { _mm512_mul_ps(a, b) }
            }
            #[inline(always)]
            fn fma(a: __m512, b: __m512, c: __m512) -> __m512 {
                unsafe { _mm512_fmadd_ps(a, b, c) }
            }
            #[inline(always)]
            fn fnma(a: __m512, b: __m512, c: __m512) -> __m512 {
                unsafe { _mm512_fnmadd_ps(a, b, c) }
            }
            #[inline(always)]
            fn larger(a: __m512, b: __m512) -> __m512 {
                unsafe { _mm512_max_ps(b, a) }
            }
            #[inline(always)]
            fn smaller(a: __m512, b: __m512) -> __m512 {
                unsafe { _mm512_min_ps(b, a) }
            }
            #[inline(always)]
            fn ge(a: __m512, b: __m512) -> __mmask16 {
                unsafe { _mm512_cmp_ps_mask::<_CMP_GE_OQ>(a, b) }
            }
            #[inline(always)]
            fn lt(a: __m512, b: __m512) -> __mmask16 {
                unsafe { _mm512_cmp_ps_mask::<_CMP_LT_OQ>(a, b) }
            }
            #[inline(always)]
            fn eq(a: __m512, b: __m512) -> __mmask16 {
                unsafe { _mm512_cmp_ps_mask::<_CMP_EQ_OQ>(a, b) }
            }
            #[inline(always)]
            fn nan(a: __m512) -> __mmask16 {
                unsafe { _mm512_cmp_ps_mask::<_CMP_UNORD_Q>(a, a) }
            }
            #[inline(always)]
            fn and(a: __mmask16, b: __mmask16) -> __mmask16 {
                a & b
            }
            #[inline(always)]
            fn or(a: __mmask16, b: __mmask16) -> __mmask16 {
                a | b
            }
            #[inline(always)]
            fn none() -> __mmask16 {
                0
            }
            #[inline(always)]
            fn any(m: __mmask16) -> bool {
                m != 0
            }
            #[inline(always)]
            fn count(m: __mmask16) -> u32 {
                m.count_ones()
            }
            #[inline(always)]
            fn select(m: __mmask16, a: __m512, b: __m512) -> __m512 {
                unsafe { _mm512_mask_blend_ps(m, b, a) }
            }
            #[inline(always)]
            fn pow2(k: __m512) -> __m512 {
                unsafe {
                    let v = _mm512_slli_epi32::<23>(_mm512_castps_si512(k));
                    _mm512_castsi512_ps(_mm512_add_epi32(v, _mm512_set1_epi32(0x3f80_0000)))
                }
            }
            #[inline(always)]
            fn dsplat(v: f64) -> [__m512d; 2] {
                unsafe { [_mm512_set1_pd(v); 2] }
            }
            #[inline(always)]
            fn widen(a: __m512) -> [__m512d; 2] {
                unsafe {
                    [
                        _mm512_cvtps_pd(_mm512_castps512_ps256(a)),
                        _mm512_cvtps_pd(_mm512_extractf32x8_ps::<1>(a)),
                    ]
                }
            }
            #[inline(always)]
            fn narrow(a: [__m512d; 2]) -> __m512 {
                unsafe {
                    let lo = _mm512_castps256_ps512(_mm512_cvtpd_ps(a[0]));
                    _mm512_insertf32x8::<1>(lo, _mm512_cvtpd_ps(a[1]))
                }
            }
            #[inline(always)]
            fn dadd(a: [__m512d; 2], b: [__m512d; 2]) -> [__m512d; 2] {
                unsafe { [_mm512_add_pd(a[0], b[0]), _mm512_add_pd(a[1], b[1])] }
            }
            #[inline(always)]
            fn dsub(a: [__m512d; 2], b: [__m512d; 2]) -> [__m512d; 2] {
                unsafe { [_mm512_sub_pd(a[0], b[0]), _mm512_sub_pd(a[1], b[1])] }
            }
            #[inline(always)]
            fn dmul(a: [__m512d; 2], b: [__m512d; 2]) -> [__m512d; 2] {
                unsafe { [_mm512_mul_pd(a[0], b[0]), _mm512_mul_pd(a[1], b[1])] }
            }
            #[inline(always)]
            fn lanes(a: __m512) -> [f32; 16] {
                let mut v = [0f32; 16];
                unsafe { _mm512_storeu_ps(v.as_mut_ptr(), a) };
                v
            }
            #[inline(always)]
            fn dlanes(a: [__m512d; 2]) -> [f64; 16] {
                let mut v = [0f64; 16];
                unsafe {
                    _mm512_storeu_pd(v.as_mut_ptr(), a[0]);
                    _mm512_storeu_pd(v.as_mut_ptr().add(8), a[1]);
                }
                v
            }
            #[inline(always)]
            fn dfrom(a: [f64; 16]) -> [__m512d; 2] {
                unsafe {
                    [
                        _mm512_loadu_pd(a.as_ptr()),
                        _mm512_loadu_pd(a.as_ptr().add(8)),
                    ]
                }
            }
        }

        impl Unit for Avx2 {
            type F = [__m256; 2];
            type D = [__m256d; 4];
            type M = [__m256; 2];
            #[inline(always)]
            unsafe fn load(p: *const f32) -> [__m256; 2] {
                unsafe { [_mm256_loadu_ps(p), _mm256_loadu_ps(p.add(8))] }
            }
            #[inline(always)]
            unsafe fn store(p: *mut f32, v: [__m256; 2]) {
                unsafe {
                    _mm256_storeu_ps(p, v[0]);
                    _mm256_storeu_ps(p.add(8), v[1]);
                }
            }
            #[inline(always)]
            fn splat(v: f32) -> [__m256; 2] {
                unsafe { [_mm256_set1_ps(v); 2] }
            }
            #[inline(always)]
            fn add(a: [__m256; 2], b: [__m256; 2]) -> [__m256; 2] {
                unsafe { [_mm256_add_ps(a[0], b[0]), _mm256_add_ps(a[1], b[1])] }
            }
            #[inline(always)]
            fn sub(a: [__m256; 2], b: [__m256; 2]) -> [__m256; 2] {
                unsafe { [_mm256_sub_ps(a[0], b[0]), _mm256_sub_ps(a[1], b[1])] }
            }
            #[inline(always)]
            fn mul(a: [__m256; 2], b: [__m256; 2]) -> [__m256; 2] {
                unsafe { [_mm256_mul_ps(a[0], b[0]), _mm256_mul_ps(a[1], b[1])] }
            }
            #[inline(always)]
            fn fma(a: [__m256; 2], b: [__m256; 2], c: [__m256; 2]) -> [__m256; 2] {
                unsafe {
                    [
                        _mm256_fmadd_ps(a[0], b[0], c[0]),
                        _mm256_fmadd_ps(a[1], b[1], c[1]),
                    ]
                }
            }
            #[inline(always)]
            fn fnma(a: [__m256; 2], b: [__m256; 2], c: [__m256; 2]) -> [__m256; 2] {
                unsafe {
                    [
                        _mm256_fnmadd_ps(a[0], b[0], c[0]),
                        _mm256_fnmadd_ps(a[1], b[1], c[1]),
                    ]
                }
            }
            #[inline(always)]
            fn larger(a: [__m256; 2], b: [__m256; 2]) -> [__m256; 2] {
                unsafe { [_mm256_max_ps(b[0], a[0]), _mm256_max_ps(b[1], a[1])] }
            }
            #[inline(always)]
            fn smaller(a: [__m256; 2], b: [__m256; 2]) -> [__m256; 2] {
                unsafe { [_mm256_min_ps(b[0], a[0]), _mm256_min_ps(b[1], a[1])] }
            }
            #[inline(always)]
            fn ge(a: [__m256; 2], b: [__m256; 2]) -> [__m256; 2] {
                unsafe {
                    [
                        _mm256_cmp_ps::<_CMP_GE_OQ>(a[0], b[0]),
                        _mm256_cmp_ps::<_CMP_GE_OQ>(a[1], b[1]),
                    ]
                }
            }
            #[inline(always)]
            fn lt(a: [__m256; 2], b: [__m256; 2]) -> [__m256; 2] {
                unsafe {
                    [
                        _mm256_cmp_ps::<_CMP_LT_OQ>(a[0], b[0]),
                        _mm256_cmp_ps::<_CMP_LT_OQ>(a[1], b[1]),
                    ]
                }
            }
            #[inline(always)]
            fn eq(a: [__m256; 2], b: [__m256; 2]) -> [__m256; 2] {
                unsafe {
                    [
                        _mm256_cmp_ps::<_CMP_EQ_OQ>(a[0], b[0]),
                        _mm256_cmp_ps::<_CMP_EQ_OQ>(a[1], b[1]),
                    ]
                }
            }
            #[inline(always)]
            fn nan(a: [__m256; 2]) -> [__m256; 2] {
                unsafe {
                    [
                        _mm256_cmp_ps::<_CMP_UNORD_Q>(a[0], a[0]),
                        _mm256_cmp_ps::<_CMP_UNORD_Q>(a[1], a[1]),
                    ]
                }
            }
            #[inline(always)]
            fn and(a: [__m256; 2], b: [__m256; 2]) -> [__m256; 2] {
                unsafe { [_mm256_and_ps(a[0], b[0]), _mm256_and_ps(a[1], b[1])] }
            }
            #[inline(always)]
            fn or(a: [__m256; 2], b: [__m256; 2]) -> [__m256; 2] {
                unsafe { [_mm256_or_ps(a[0], b[0]), _mm256_or_ps(a[1], b[1])] }
            }
            #[inline(always)]
            fn none() -> [__m256; 2] {
                unsafe { [_mm256_setzero_ps(); 2] }
            }
            #[inline(always)]
            fn any(m: [__m256; 2]) -> bool {
                unsafe { _mm256_movemask_ps(_mm256_or_ps(m[0], m[1])) != 0 }
            }
            #[inline(always)]
            fn count(m: [__m256; 2]) -> u32 {
                unsafe {
                    (_mm256_movemask_ps(m[0]) as u32).count_ones()
                        + (_mm256_movemask_ps(m[1]) as u32).count_ones()
                }
            }
            #[inline(always)]
            fn select(m: [__m256; 2], a: [__m256; 2], b: [__m256; 2]) -> [__m256; 2] {
                unsafe {
                    [
                        _mm256_blendv_ps(b[0], a[0], m[0]),
                        _mm256_blendv_ps(b[1], a[1], m[1]),
                    ]
                }
            }
            #[inline(always)]
            fn pow2(k: [__m256; 2]) -> [__m256; 2] {
                unsafe {
                    let one = _mm256_set1_epi32(0x3f80_0000);
                    let f = |v: __m256| {
                        let v = _mm256_slli_epi32::<23>(_mm256_castps_si256(v));
                        _mm256_castsi256_ps(_mm256_add_epi32(v, one))
                    };
                    [f(k[0]), f(k[1])]
                }
            }
            #[inline(always)]
            fn dsplat(v: f64) -> [__m256d; 4] {
                unsafe { [_mm256_set1_pd(v); 4] }
            }
            #[inline(always)]
            fn widen(a: [__m256; 2]) -> [__m256d; 4] {
                unsafe {
                    [
                        _mm256_cvtps_pd(_mm256_castps256_ps128(a[0])),
                        _mm256_cvtps_pd(_mm256_extractf128_ps::<1>(a[0])),
                        _mm256_cvtps_pd(_mm256_castps256_ps128(a[1])),
                        _mm256_cvtps_pd(_mm256_extractf128_ps::<1>(a[1])),
                    ]
                }
            }
            #[inline(always)]
            fn narrow(a: [__m256d; 4]) -> [__m256; 2] {
                unsafe {
                    let j = |l: __m256d, h: __m256d| {
                        let lo = _mm256_castps128_ps256(_mm256_cvtpd_ps(l));
                        _mm256_insertf128_ps::<1>(lo, _mm256_cvtpd_ps(h))
                    };
                    [j(a[0], a[1]), j(a[2], a[3])]
                }
            }
            #[inline(always)]
            fn dadd(a: [__m256d; 4], b: [__m256d; 4]) -> [__m256d; 4] {
                unsafe { std::array::from_fn(|i| _mm256_add_pd(a[i], b[i])) }
            }
            #[inline(always)]
            fn dsub(a: [__m256d; 4], b: [__m256d; 4]) -> [__m256d; 4] {
                unsafe { std::array::from_fn(|i| _mm256_sub_pd(a[i], b[i])) }
            }
            #[inline(always)]
            fn dmul(a: [__m256d; 4], b: [__m256d; 4]) -> [__m256d; 4] {
                unsafe { std::array::from_fn(|i| _mm256_mul_pd(a[i], b[i])) }
            }
            #[inline(always)]
            fn lanes(a: [__m256; 2]) -> [f32; 16] {
                let mut v = [0f32; 16];
                unsafe {
                    _mm256_storeu_ps(v.as_mut_ptr(), a[0]);
                    _mm256_storeu_ps(v.as_mut_ptr().add(8), a[1]);
                }
                v
            }
            #[inline(always)]
            fn dlanes(a: [__m256d; 4]) -> [f64; 16] {
                let mut v = [0f64; 16];
                for (k, &q) in a.iter().enumerate() {
                    unsafe { _mm256_storeu_pd(v.as_mut_ptr().add(4 * k), q) };
                }
                v
            }
            #[inline(always)]
            fn dfrom(a: [f64; 16]) -> [__m256d; 4] {
                unsafe { std::array::from_fn(|k| _mm256_loadu_pd(a.as_ptr().add(4 * k))) }
            }
        }
    }

    /// A computation generic over the unit, run by [`on_unit`].
    pub(crate) trait Task {
        type Out;
        fn run<U: Unit>(self) -> Self::Out;
    }

    #[cfg(target_arch = "x86_64")]
    #[inline]
    #[target_feature(enable = "avx512f,avx512vl,avx512bw,avx512dq,avx2,fma")]
    pub(crate) unsafe fn on_avx512<T: Task>(t: T) -> T::Out {
        t.run::<x86::Avx512>()
    }

    #[cfg(target_arch = "x86_64")]
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    pub(crate) unsafe fn on_avx2<T: Task>(t: T) -> T::Out {
        t.run::<x86::Avx2>()
    }

    /// `t` on the widest unit this CPU has (as the crate's other kernels pick it: the
    /// environment variable `OVIR_SIMD` caps it).
    #[inline(always)]
    pub(crate) fn on_unit<T: Task>(t: T) -> T::Out {
        #[cfg(target_arch = "x86_64")]
        {
            use crate::ops::kernel::simd::{Simd, simd};
            match simd() {
                // SAFETY: the features were detected.
                Simd::Avx512 => return unsafe { on_avx512(t) },
                // SAFETY: as above.
                Simd::Avx2 => return unsafe { on_avx2(t) },
                Simd::None => {}
            }
        }
        t.run::<Scalar>()
    }
}

/// Where the elements of each group lie in the data (row-major), for a non-empty tensor.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Layout {
    /// Each group is `n` consecutive elements.
    Rows { n: usize },
    /// The data is `[outer, n, inner]` and each group a column: group `(o, i)` is the
    /// elements `o·n·inner + j·inner + i`, `j < n`.
    Columns {
        outer: usize,
        n: usize,
        inner: usize,
    },
    /// Anything else: the data with its axes permuted by `perm` (the kept axes, then the
    /// reduced ones, each in order) is in rows of `n`.
    General { perm: Vec<usize>, n: usize },
}

/// The layout of the groups of a non-empty tensor of `shape` reduced over the axes marked in
/// `reduced`: dims of 1 are left out and neighbouring dims of the same kind merged.
pub(crate) fn layout(shape: &[usize], reduced: &[bool]) -> Layout {
    // (reduced, size) runs. The tensor is not empty, so every product is at most its length.
    let mut runs: Vec<(bool, usize)> = Vec::new();
    for (&d, &r) in shape.iter().zip(reduced) {
        if d == 1 {
            continue;
        }
        match runs.last_mut() {
            Some((kind, size)) if *kind == r => *size *= d,
            _ => runs.push((r, d)),
        }
    }
    let n: usize = runs.iter().filter(|r| r.0).map(|r| r.1).product();
    let reduced_runs: Vec<usize> = (0..runs.len()).filter(|&k| runs[k].0).collect();
    match reduced_runs.as_slice() {
        [] => Layout::Rows { n: 1 },
        [k] if *k + 1 == runs.len() => Layout::Rows { n },
        [k] if *k + 2 == runs.len() => Layout::Columns {
            outer: runs[..*k].iter().map(|r| r.1).product(),
            n,
            inner: runs[k + 1].1,
        },
        _ => {
            let perm = (0..shape.len())
                .filter(|&a| !reduced[a])
                .chain((0..shape.len()).filter(|&a| reduced[a]))
                .collect();
            Layout::General { perm, n }
        }
    }
}

/// The axes `values` of data of rank `rank`, normalised (negative ones count from the end),
/// in the order given; an axis out of range or given twice is an error naming it.
pub(crate) fn axes_of(values: &[i64], rank: usize) -> Result<Vec<usize>, String> {
    let mut out: Vec<usize> = Vec::with_capacity(values.len());
    for (i, &a) in values.iter().enumerate() {
        let k = super::normalize_axis(a, rank).ok_or_else(|| {
            if rank == 0 {
                format!("axis {a} is out of range for a scalar (it has no axes)")
            } else {
                format!(
                    "axis {a} is out of range for data of rank {rank} (-{rank}..{})",
                    rank - 1
                )
            }
        })?;
        if let Some(j) = out.iter().position(|&b| b == k) {
            return Err(format!(
                "axis {a} (axes[{i}]) repeats axes[{j}] = {} (both are axis {k} of data of rank {rank}); the axes must be distinct",
                values[j]
            ));
        }
        out.push(k);
    }
    Ok(out)
}

/// The axes marked, for data of rank `rank`.
pub(crate) fn mask(axes: &[usize], rank: usize) -> Vec<bool> {
    (0..rank).map(|k| axes.contains(&k)).collect()
}

/// A mandatory boolean attribute.
pub(crate) fn required_bool(a: &Attrs, name: &str) -> Result<bool, AttrError> {
    a.required(name)?;
    a.bool_or(&[name], false)
}

/// An `eps` attribute: a finite number ≥ 0 (rounded to f32 when `single`, as OpenVINO
/// stores a `float` attribute).
pub(crate) fn parse_eps(text: &str, single: bool) -> Result<f64, String> {
    let v: f64 = text
        .trim()
        .parse()
        .map_err(|_| "expected a number".to_owned())?;
    if !v.is_finite() || v < 0.0 {
        return Err(format!("eps must be a finite number ≥ 0, not {v}"));
    }
    if single && (v as f32).is_infinite() {
        return Err("eps does not fit in f32".into());
    }
    Ok(if single { v as f32 as f64 } else { v })
}

/// An output written by tasks that each own a distinct set of its elements (the columns of
/// [`for_columns`]), through a raw pointer.
pub(crate) struct Scatter<'a, O> {
    ptr: *mut O,
    len: usize,
    _out: PhantomData<&'a mut [O]>,
}

// SAFETY: a `Scatter` is only a way to write to a `&mut [O]` from several threads, each
// writing its own elements (see `put`); sending or sharing it sends the writes of `O`s.
unsafe impl<O: Send> Send for Scatter<'_, O> {}
// SAFETY: as above.
unsafe impl<O: Send> Sync for Scatter<'_, O> {}

impl<'a, O: Copy> Scatter<'a, O> {
    pub(crate) fn new(out: &'a mut [O]) -> Scatter<'a, O> {
        Scatter {
            ptr: out.as_mut_ptr(),
            len: out.len(),
            _out: PhantomData,
        }
    }

    /// An output not yet written: `put` only writes (and `O: Copy` has no drop).
    pub(crate) fn uninit(out: &'a mut [MaybeUninit<O>]) -> Scatter<'a, O> {
        Scatter {
            ptr: out.as_mut_ptr() as *mut O,
            len: out.len(),
            _out: PhantomData,
        }
    }

    /// Where element `at` lies (not checked; for prefetching, which never faults).
    #[inline(always)]
    pub(crate) fn address(&self, at: usize) -> *const O {
        self.ptr.wrapping_add(at)
    }

    /// Writes `v` to elements `at..at + v.len()` (checked to be in bounds).
    ///
    /// # Safety
    /// No other thread may read or write those elements while the `Scatter` exists.
    #[inline(always)]
    pub(crate) unsafe fn put(&self, at: usize, v: &[O]) {
        assert!(
            at <= self.len && v.len() <= self.len - at,
            "a column write out of the output's bounds"
        );
        // SAFETY: in bounds (checked above); the output is borrowed mutably for 'a, so only
        // the tasks holding this `Scatter` touch it, and the caller guarantees that none
        // touches these elements meanwhile.
        unsafe { std::ptr::copy_nonoverlapping(v.as_ptr(), self.ptr.add(at), v.len()) }
    }
}

/// How many parts to cut work of `elements` elements into for `threads` threads: about four
/// a thread, none below `PARALLEL_MIN / 4` elements; 1 below [`PARALLEL_MIN`] or with one
/// thread.
fn parts(elements: usize, threads: usize) -> usize {
    if elements < PARALLEL_MIN || threads <= 1 {
        1
    } else {
        (threads * 4).min(elements / (PARALLEL_MIN / 4)).max(1)
    }
}

/// `row(x_row, out_row, scratch)` for each row of `n` elements (`n ≥ 1`), in parallel when
/// there is enough work; `scratch()` makes a task's scratch space. Each row's result depends
/// only on its own elements, so the bits do not depend on how the rows are shared out.
pub(crate) fn for_rows<T: Sync, O: Send, S>(
    x: &[T],
    out: &mut [O],
    n: usize,
    scratch: impl Fn() -> S + Sync + Send,
    row: impl Fn(&[T], &mut [O], &mut S) + Sync + Send,
) {
    let groups = x.len() / n;
    let parts = parts(x.len(), rayon::current_num_threads()).min(groups);
    let run = |xc: &[T], oc: &mut [O], s: &mut S| {
        vectorised(
            #[inline(always)]
            || {
                for (xr, or) in xc.chunks_exact(n).zip(oc.chunks_exact_mut(n)) {
                    row(xr, or, s);
                }
            },
        )
    };
    if parts <= 1 {
        run(x, out, &mut scratch());
        return;
    }
    let rows = groups.div_ceil(parts);
    x.par_chunks(rows * n)
        .zip(out.par_chunks_mut(rows * n))
        .for_each_init(&scratch, |s, (xc, oc)| run(xc, oc, s));
}

/// A kernel over contiguous rows of f32 on a vector unit, for [`rows_f32`].
pub(crate) trait RowsF32: Sync {
    /// Every row of `n` elements of `x` into the same places of `out` (as long as `x`), each
    /// element written. Implementations are `#[inline(always)]`, so that they compile for the
    /// unit's function.
    fn rows<U: blocks::Unit>(&self, x: &[f32], out: &mut [MaybeUninit<f32>], n: usize);
}

/// `kernel` over f32 data `x` (not empty) in rows of `n`: in parallel as [`for_rows`] (parts
/// of at least `PARALLEL_MIN / 4` elements), each part on the widest vector unit; the output,
/// of `x`'s shape, is never filled with zeros first.
pub(crate) fn rows_f32<K: RowsF32>(kernel: &K, x: &Tensor, n: usize) -> Result<Tensor, EvalError> {
    struct Part<'a, K> {
        kernel: &'a K,
        x: &'a [f32],
        out: &'a mut [MaybeUninit<f32>],
        n: usize,
    }
    impl<K: RowsF32> blocks::Task for Part<'_, K> {
        type Out = ();
        #[inline(always)]
        fn run<U: blocks::Unit>(self) {
            self.kernel.rows::<U>(self.x, self.out, self.n)
        }
    }
    let data = super::kernel::contiguous::<f32>(x).ok_or(EvalError::Internal("the data's type"))?;
    let len = data.len();
    let mut out: Vec<f32> = Vec::with_capacity(len);
    let spare = &mut out.spare_capacity_mut()[..len];
    let groups = len / n;
    let parts = parts(len, rayon::current_num_threads()).min(groups);
    if parts <= 1 {
        blocks::on_unit(Part {
            kernel,
            x: &data,
            out: spare,
            n,
        });
    } else {
        let rows = groups.div_ceil(parts);
        data.par_chunks(rows * n)
            .zip(spare.par_chunks_mut(rows * n))
            .for_each(|(x, out)| blocks::on_unit(Part { kernel, x, out, n }));
    }
    // SAFETY: the kernel wrote every element of every row, and the rows cover the data.
    unsafe { out.set_len(len) };
    super::kernel::tensor_from(x.shape(), out)
}

/// One leaf's sum of `term` over the blocks of `x` (f32, widened), in the order of
/// [`lanes_sum`]: the blocks' lanes are the accumulators; the last elements (fewer than 16)
/// are added one at a time by `scalar`, which must compute what `term` computes in a lane.
#[inline(always)]
pub(crate) fn blocks_sum<U: blocks::Unit>(
    x: &[f32],
    term: impl Fn(U::D) -> U::D,
    scalar: impl Fn(f64) -> f64,
) -> f64 {
    let mut acc = U::dzero();
    let mut chunks = x.chunks_exact(LANES);
    for c in &mut chunks {
        // SAFETY: 16 elements.
        let v = U::widen(unsafe { U::load(c.as_ptr()) });
        acc = U::dadd(acc, term(v));
    }
    let mut a = U::dlanes(acc);
    for (s, &v) in a.iter_mut().zip(chunks.remainder()) {
        *s += scalar(v as f64);
    }
    fold(a)
}

/// `col(slab, c0, w, scratch, out, base)` for each strip of `w ≤ W` columns starting at
/// column `c0` of each slab `[n, inner]` of data `[outer, n, inner]`; the strip writes its
/// elements `base + j·inner + c0 + c` of `out` (`base` the slab's offset) through the
/// [`Scatter`], and only those. In parallel over the strips when there is enough work; each
/// column's result depends only on its own elements.
pub(crate) fn for_columns<T: Sync, O: Send + Copy, S>(
    x: &[T],
    out: &mut [O],
    (n, inner): (usize, usize),
    scratch: impl Fn() -> S + Sync + Send,
    col: impl Fn(&[T], usize, usize, &mut S, &Scatter<'_, O>, usize) + Sync + Send,
) {
    let slab = n * inner;
    let outer = x.len() / slab;
    let strips = inner.div_ceil(W);
    let tasks = outer * strips;
    let out = Scatter::new(out);
    let task = |t: usize, s: &mut S| {
        let (o, c0) = (t / strips, (t % strips) * W);
        let w = (inner - c0).min(W);
        let base = o * slab;
        vectorised(
            #[inline(always)]
            || {
                // A full strip with its width a constant, so that the loops over the columns
                // compile to whole vectors (the strips at the end of a row take the general
                // form).
                if w == W {
                    col(&x[base..base + slab], c0, W, s, &out, base)
                } else {
                    col(&x[base..base + slab], c0, w, s, &out, base)
                }
            },
        )
    };
    let parts = parts(x.len(), rayon::current_num_threads()).min(tasks);
    if parts <= 1 {
        let mut s = scratch();
        for t in 0..tasks {
            task(t, &mut s);
        }
        return;
    }
    (0..tasks)
        .into_par_iter()
        .with_min_len(tasks.div_ceil(parts))
        .for_each_init(&scratch, |s, t| task(t, s));
}

/// The normalisations computed group by group: MVN and NormalizeL2 give their row and column
/// kernels, [`run_groups`] the loops.
pub(crate) trait GroupKernel: Sync {
    /// One group that is a contiguous row.
    fn row<T: Real>(&self, x: &[T], out: &mut [T]);
    /// The `w` columns from `c0` of a slab `[n, inner]`, written to `out` at `base + j·inner
    /// + c0 + c`.
    fn cols<T: Real>(
        &self,
        slab: &[T],
        inner: usize,
        c0: usize,
        w: usize,
        out: &Scatter<'_, T>,
        base: usize,
    );
}

/// `kernel` over every group of `x` (of `shape`, not empty) in `layout`.
pub(crate) fn run_groups<T: Real, K: GroupKernel>(
    kernel: &K,
    x: &Tensor,
    layout: &Layout,
) -> Result<Tensor, EvalError> {
    let view = T::view(x).ok_or(EvalError::Internal("the data's type"))?;
    let shape = view.shape().to_vec();
    let len = view.len();
    let data = super::kernel::contiguous::<T>(x).ok_or(EvalError::Internal("the data's type"))?;
    let mut out = vec![T::default(); len];
    match layout {
        Layout::Rows { n } => for_rows(
            &data,
            &mut out,
            *n,
            || (),
            #[inline(always)]
            |xr, or, _| kernel.row(xr, or),
        ),
        Layout::Columns { n, inner, .. } => for_columns(
            &data,
            &mut out,
            (*n, *inner),
            || (),
            #[inline(always)]
            |slab, c0, w, _, o, base| kernel.cols(slab, *inner, c0, w, o, base),
        ),
        Layout::General { perm, n } => {
            let permuted = view.permuted_axes(perm.as_slice());
            let pshape = permuted.shape().to_vec();
            let px = permuted.as_standard_layout().into_owned();
            let xs = px
                .as_slice()
                .ok_or(EvalError::Internal("a standard layout"))?;
            for_rows(
                xs,
                &mut out,
                *n,
                || (),
                #[inline(always)]
                |xr, or, _| kernel.row(xr, or),
            );
            drop(px);
            let mut inverse = vec![0; perm.len()];
            for (k, &p) in perm.iter().enumerate() {
                inverse[p] = k;
            }
            let y = ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(&pshape), out)
                .map_err(|_| EvalError::Internal("the permuted shape"))?;
            let back = y.permuted_axes(inverse).as_standard_layout().into_owned();
            return Ok(T::wrap(back));
        }
    }
    super::kernel::tensor_from(&shape, out)
}

/// The bytes the output takes, with the data's two copies (the permuted data and the permuted
/// output) when the groups are in no simple layout, for the memory budget.
pub(crate) fn general_copies(layout: &Layout, data: &Tensor) -> u64 {
    let copies = match layout {
        Layout::General { .. } => 2,
        _ => 0,
    };
    data.bytes().saturating_mul(1 + copies)
}

// ---------------------------------------------------------------------------------------------
// MVN.

/// Where MVN-1 takes its axes from.
#[derive(Clone, Debug, PartialEq)]
pub enum MvnAxes {
    /// MVN-1's `reduction_axes` (non-empty).
    Listed(Vec<i64>),
    /// MVN-1's `across_channels`: axes `1..rank` when true, `2..rank` when false.
    AcrossChannels(bool),
    /// MVN-6's `axes` input.
    Input,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Mvn {
    pub axes: MvnAxes,
    pub normalize_variance: bool,
    /// At least 0, finite.
    pub eps: f64,
    /// Whether `eps` is added inside the square root.
    pub inside_sqrt: bool,
}

pub const MVN_2: OpDef = OpDef {
    name: "MVN",
    version: 2,
    inputs: Arity::exactly(1),
    outputs: Arity::exactly(1),
    parse: parse_2,
};

pub const MVN_6: OpDef = OpDef {
    name: "MVN",
    version: 6,
    inputs: Arity::exactly(2),
    outputs: Arity::exactly(1),
    parse: parse_6,
};

fn parse_2(a: &Attrs) -> Result<Box<dyn Op>, Vec<AttrError>> {
    let listed = a.parse_or("reduction_axes", Vec::new(), super::parse_i64_list);
    let across = match a.get("across_channels") {
        Some(_) => a.bool_or(&["across_channels"], true).map(Some),
        None => Ok(None),
    };
    let (listed, across, normalize_variance, eps) = crate::attrs_all!(
        listed,
        across,
        required_bool(a, "normalize_variance"),
        a.parse_required("eps", |t| parse_eps(t, false)),
    )?;
    let (listed, across) = (listed.unwrap_or_default(), across.flatten());
    let axes = match (listed.is_empty(), across) {
        (false, _) => MvnAxes::Listed(listed),
        (true, Some(c)) => MvnAxes::AcrossChannels(c),
        (true, None) => {
            return Err(vec![AttrError {
                name: "across_channels".into(),
                value: None,
                reason: "either across_channels or a non-empty reduction_axes is required".into(),
            }]);
        }
    };
    Ok(Box::new(Mvn {
        axes,
        normalize_variance: normalize_variance.unwrap_or_default(),
        eps: eps.unwrap_or_default(),
        inside_sqrt: true,
    }))
}

fn parse_eps_mode(text: &str) -> Result<bool, String> {
    let t = text.trim();
    if t.eq_ignore_ascii_case("inside_sqrt") {
        Ok(true)
    } else if t.eq_ignore_ascii_case("outside_sqrt") {
        Ok(false)
    } else {
        Err("expected inside_sqrt or outside_sqrt".into())
    }
}

fn parse_6(a: &Attrs) -> Result<Box<dyn Op>, Vec<AttrError>> {
    let (normalize_variance, eps, inside) = crate::attrs_all!(
        required_bool(a, "normalize_variance"),
        a.parse_required("eps", |t| parse_eps(t, true)),
        a.parse_required("eps_mode", parse_eps_mode),
    )?;
    Ok(Box::new(Mvn {
        axes: MvnAxes::Input,
        normalize_variance: normalize_variance.unwrap_or_default(),
        eps: eps.unwrap_or_default(),
        inside_sqrt: inside.unwrap_or(true),
    }))
}

/// Whether an axes input's element type is one MVN-6 takes (i32, i64; `dynamic` is let
/// through).
fn axes_type_ok(ty: ElementType) -> bool {
    matches!(
        ty,
        ElementType::I32 | ElementType::I64 | ElementType::Dynamic
    )
}

impl Mvn {
    /// The reduced axes of data of rank `rank`, from the attributes or `values` (MVN-6's
    /// input), or why they do not fit the data.
    fn axes(&self, rank: usize, values: Option<&[i64]>) -> Result<Vec<usize>, String> {
        match &self.axes {
            MvnAxes::Listed(v) => axes_of(v, rank).map_err(|e| format!("reduction_axes: {e}")),
            MvnAxes::AcrossChannels(c) => Ok((if *c { 1 } else { 2 }..rank).collect()),
            MvnAxes::Input => axes_of(values.unwrap_or_default(), rank),
        }
    }
}

impl Op for Mvn {
    fn def(&self) -> Option<&'static OpDef> {
        Some(match self.axes {
            MvnAxes::Input => &MVN_6,
            _ => &MVN_2,
        })
    }

    fn infer(&self, cx: &mut InferCx<'_>) -> Option<Vec<TensorType>> {
        cx.require(0..1, TypeSet::FLOAT)?;
        let data = cx.input(0);
        let out = vec![TensorType::new(data.element_type, data.shape.clone())];
        let rank = data.shape.rank();
        if self.axes != MvnAxes::Input {
            if let Some(rank) = rank
                && let Err(reason) = self.axes(rank, None)
            {
                return cx.invalid(0, reason);
            }
            return Some(out);
        }
        let axes = cx.input(1);
        if !axes_type_ok(axes.element_type) {
            cx.report_input(
                1,
                ErrorKind::UnsupportedElementType {
                    op: "MVN".into(),
                    ty: axes.element_type,
                },
            );
            return None;
        }
        if let Some(r) = axes.shape.rank()
            && r != 1
        {
            return cx.invalid(1, format!("the axes must be 1-D, not rank {r}"));
        }
        if let (Some(rank), Some(len)) = (
            rank,
            axes.shape
                .dims()
                .and_then(|d| d.first())
                .and_then(|d| d.get_static()),
        ) && len > rank as u64
        {
            return cx.invalid(
                1,
                format!(
                    "{len} axes for data of rank {rank}: the axes must be distinct axes of the data"
                ),
            );
        }
        if let (Some(rank), Some(values)) = (rank, cx.ints(1))
            && let Err(reason) = self.axes(rank, Some(&values))
        {
            return cx.invalid(1, reason);
        }
        Some(out)
    }

    fn eval(&self, cx: &EvalCx<'_>) -> Result<Vec<Tensor>, EvalError> {
        let data = cx.tensor(0)?;
        let ty = data.element_type();
        let values = match self.axes {
            MvnAxes::Input => {
                let t = cx.tensor(1)?;
                if t.shape().len() != 1 {
                    return Err(EvalError::Invalid(format!(
                        "the axes must be 1-D, not of shape {:?}",
                        t.shape()
                    )));
                }
                Some(cx.ints(1)?)
            }
            _ => None,
        };
        let shape = data.shape();
        let axes = self
            .axes(shape.len(), values.as_deref())
            .map_err(EvalError::Invalid)?;
        cx.reserve(ty, data.len())?;
        if data.is_empty() {
            return Ok(vec![(*data).clone()]);
        }
        let layout = layout(shape, &mask(&axes, shape.len()));
        cx.reserve_bytes(
            "the output and copies of the data",
            general_copies(&layout, &data),
        )?;
        if let (ElementType::F32, Layout::Rows { n }) = (ty, &layout) {
            return rows_f32(self, &data, *n).map(|t| vec![t]);
        }
        crate::dispatch!(float: ty, T => run_groups::<T, _>(self, &data, &layout).map(|t| vec![t]),
            _ => Err(EvalError::UnsupportedType { op: "MVN".into(), ty }))
    }
}

impl Mvn {
    /// σ, the divisor, and its reciprocal, for a variance `var`.
    #[inline(always)]
    fn sigma(&self, var: f64) -> (f64, f64) {
        let s = if self.inside_sqrt {
            (var + self.eps).sqrt()
        } else {
            var.sqrt() + self.eps
        };
        (s, 1.0 / s)
    }
}

/// `(x − mean) / σ` in f64, rounded once: divided for f64, multiplied by the reciprocal for
/// the narrower types.
#[inline(always)]
fn scaled<T: Real>(d: f64, sigma: f64, inv: f64) -> T {
    T::narrow(if T::WIDE { d / sigma } else { d * inv })
}

/// f32 rows on a vector unit: the same operations in the same order as [`GroupKernel::row`]
/// (so the same bits as the column and general layouts), with the passes written over blocks.
impl RowsF32 for Mvn {
    #[inline(always)]
    fn rows<U: blocks::Unit>(&self, x: &[f32], out: &mut [MaybeUninit<f32>], n: usize) {
        for (xr, or) in x.chunks_exact(n).zip(out.chunks_exact_mut(n)) {
            let sum = tree_sum(
                n,
                #[inline(always)]
                |at, len| blocks_sum::<U>(&xr[at..at + len], |v| v, |v| v),
                |a, b| a + b,
            );
            let mean = sum / n as f64;
            let (m, mv) = (mean, U::dsplat(mean));
            let inv = if self.normalize_variance {
                let squares = tree_sum(
                    n,
                    #[inline(always)]
                    |at, len| {
                        blocks_sum::<U>(
                            &xr[at..at + len],
                            |v| {
                                let d = U::dsub(v, mv);
                                U::dmul(d, d)
                            },
                            |v| (v - m) * (v - m),
                        )
                    },
                    |a, b| a + b,
                );
                Some(self.sigma(squares / n as f64).1)
            } else {
                None
            };
            let iv = U::dsplat(inv.unwrap_or(1.0));
            let mut xs = xr.chunks_exact(LANES);
            let mut os = or.chunks_exact_mut(LANES);
            for (xb, ob) in (&mut xs).zip(&mut os) {
                // SAFETY: 16 elements each.
                let d = U::dsub(U::widen(unsafe { U::load(xb.as_ptr()) }), mv);
                let y = if inv.is_some() { U::dmul(d, iv) } else { d };
                unsafe { U::store(ob.as_mut_ptr() as *mut f32, U::narrow(y)) };
            }
            for (o, &v) in os.into_remainder().iter_mut().zip(xs.remainder()) {
                let d = v as f64 - mean;
                o.write(inv.map_or(d, |r| d * r) as f32);
            }
        }
    }
}

impl GroupKernel for Mvn {
    #[inline(always)]
    fn row<T: Real>(&self, x: &[T], out: &mut [T]) {
        let n = x.len();
        let sum = tree_sum(
            n,
            #[inline(always)]
            |at, len| lanes_sum(&x[at..at + len], |v| v.wide()),
            |a, b| a + b,
        );
        let mean = sum / n as f64;
        if !self.normalize_variance {
            for (o, &v) in out.iter_mut().zip(x) {
                *o = T::narrow(v.wide() - mean);
            }
            return;
        }
        let squares = tree_sum(
            n,
            #[inline(always)]
            |at, len| {
                lanes_sum(&x[at..at + len], |v| {
                    let d = v.wide() - mean;
                    d * d
                })
            },
            |a, b| a + b,
        );
        let (sigma, inv) = self.sigma(squares / n as f64);
        for (o, &v) in out.iter_mut().zip(x) {
            *o = scaled(v.wide() - mean, sigma, inv);
        }
    }

    #[inline(always)]
    fn cols<T: Real>(
        &self,
        slab: &[T],
        inner: usize,
        c0: usize,
        w: usize,
        out: &Scatter<'_, T>,
        base: usize,
    ) {
        let n = slab.len() / inner;
        let row = |j: usize| &slab[j * inner + c0..j * inner + c0 + w];
        let sum = col_tree(
            n,
            #[inline(always)]
            |at, len, acc| {
                for j in at..at + len {
                    for (a, &v) in acc[(j - at) % LANES].iter_mut().zip(row(j)) {
                        *a += v.wide();
                    }
                }
            },
        );
        let mean = sum.map(|s| s / n as f64);
        let mut buf = [T::default(); W];
        if !self.normalize_variance {
            for j in 0..n {
                for ((o, &v), &m) in buf.iter_mut().zip(row(j)).zip(&mean) {
                    *o = T::narrow(v.wide() - m);
                }
                // SAFETY: this strip's own elements (`for_columns`).
                unsafe { out.put(base + j * inner + c0, &buf[..w]) };
            }
            return;
        }
        let squares = col_tree(
            n,
            #[inline(always)]
            |at, len, acc| {
                for j in at..at + len {
                    for ((a, &v), &m) in acc[(j - at) % LANES].iter_mut().zip(row(j)).zip(&mean) {
                        let d = v.wide() - m;
                        *a += d * d;
                    }
                }
            },
        );
        let sigma_inv = squares.map(|s| self.sigma(s / n as f64));
        for j in 0..n {
            for (((o, &v), &m), &(s, r)) in buf.iter_mut().zip(row(j)).zip(&mean).zip(&sigma_inv) {
                *o = scaled(v.wide() - m, s, r);
            }
            // SAFETY: this strip's own elements (`for_columns`).
            unsafe { out.put(base + j * inner + c0, &buf[..w]) };
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::ops::context::{eval_for_test, inferred_shape_for_test, tensor_for_test};
    use crate::shape::PartialShape;

    fn t<T: Element>(shape: &[usize], v: Vec<T>) -> Tensor {
        tensor_for_test(shape, v)
    }

    /// A deterministic stream of pseudo-random numbers (SplitMix64).
    pub(crate) struct Rng(pub u64);

    impl Rng {
        pub(crate) fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        }
        /// Uniform in [0, 1).
        pub(crate) fn unit(&mut self) -> f64 {
            (self.next() >> 11) as f64 / (1u64 << 53) as f64
        }
        /// Roughly normal (sum of uniforms), mean 0, deviation 1.
        pub(crate) fn normal(&mut self) -> f64 {
            (0..12).map(|_| self.unit()).sum::<f64>() - 6.0
        }
    }

    /// `kernel` over `x` in rows of `n` on every vector unit this CPU has, the baseline
    /// first (whatever `OVIR_SIMD` says).
    pub(crate) fn rows_on_every_unit<K: RowsF32>(kernel: &K, x: &[f32], n: usize) -> Vec<Vec<f32>> {
        use blocks::{Scalar, Task, Unit};
        struct On<'a, K> {
            kernel: &'a K,
            x: &'a [f32],
            n: usize,
        }
        impl<K: RowsF32> Task for On<'_, K> {
            type Out = Vec<f32>;
            fn run<U: Unit>(self) -> Vec<f32> {
                let mut out = vec![MaybeUninit::new(f32::from_bits(0x7fc0_dead)); self.x.len()];
                self.kernel.rows::<U>(self.x, &mut out, self.n);
                // SAFETY: initialised above (and every element written by the kernel).
                out.iter().map(|v| unsafe { v.assume_init() }).collect()
            }
        }
        let on = || On { kernel, x, n };
        let mut all = vec![on().run::<Scalar>()];
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::is_x86_feature_detected as has;
            if has!("avx2") && has!("fma") {
                // SAFETY: the features were detected.
                all.push(unsafe { blocks::on_avx2(on()) });
            }
            if has!("avx512f") && has!("avx512vl") && has!("avx512bw") && has!("avx512dq") {
                // SAFETY: as above.
                all.push(unsafe { blocks::on_avx512(on()) });
            }
        }
        all
    }

    /// The f32 row kernel gives the same bits on every vector unit, and the same as the
    /// general (auto-vectorised) row loop; rows of many lengths (the tails of the blocks and
    /// leaves), with and without the variance, with NaN and infinities.
    #[test]
    fn same_bits_on_every_vector_unit() {
        let mut rng = Rng(13);
        for &n in &[1usize, 5, 16, 17, 255, 256, 257, 768, 1000, 4099] {
            let rows = 3;
            let mut x: Vec<f32> = (0..rows * n)
                .map(|_| (7.0 + 3.0 * rng.normal()) as f32)
                .collect();
            if n > 3 {
                x[n + 2] = f32::NAN;
                x[2 * n + 3] = f32::INFINITY;
            }
            for (nv, inside) in [(true, true), (true, false), (false, true)] {
                let op = mvn6(nv, 1e-5, inside);
                let all = rows_on_every_unit(&op, &x, n);
                let mut generic = vec![0f32; x.len()];
                for (xr, or) in x.chunks_exact(n).zip(generic.chunks_exact_mut(n)) {
                    op.row(xr, or);
                }
                for got in &all {
                    let (a, b): (Vec<u32>, Vec<u32>) = (
                        got.iter().map(|v| v.to_bits()).collect(),
                        generic.iter().map(|v| v.to_bits()).collect(),
                    );
                    assert_eq!(a, b, "n {n}, normalize_variance {nv}");
                }
            }
        }
    }

    /// A double-double value and the exact operations the references use.
    #[derive(Clone, Copy, Debug)]
    pub(crate) struct Dd(pub f64, pub f64);

    impl Dd {
        pub(crate) fn add(self, b: Dd) -> Dd {
            let s = self.0 + b.0;
            let v = s - self.0;
            let e = (self.0 - (s - v)) + (b.0 - v) + self.1 + b.1;
            let h = s + e;
            Dd(h, e - (h - s))
        }
        pub(crate) fn neg(self) -> Dd {
            Dd(-self.0, -self.1)
        }
        pub(crate) fn mul(self, b: Dd) -> Dd {
            let p = self.0 * b.0;
            let e = self.0.mul_add(b.0, -p) + (self.0 * b.1 + self.1 * b.0);
            let h = p + e;
            Dd(h, e - (h - p))
        }
        pub(crate) fn div(self, b: Dd) -> Dd {
            let q = self.0 / b.0;
            let r = self.add(b.mul(Dd(q, 0.0)).neg());
            let q2 = r.0 / b.0;
            let h = q + q2;
            Dd(h, q2 - (h - q))
        }
        pub(crate) fn sqrt(self) -> Dd {
            if self.0 <= 0.0 {
                return Dd(self.0.sqrt(), 0.0);
            }
            let s = self.0.sqrt();
            let r = self.add(Dd(s, 0.0).mul(Dd(s, 0.0)).neg());
            let c = r.0 / (2.0 * s);
            let h = s + c;
            Dd(h, c - (h - s))
        }
    }

    /// The ulp of f32 at `want` (in the binade of the f32 nearest to it; the smaller one where
    /// a binade boundary lies between them).
    pub(crate) fn ulp_f32(want: f64) -> f64 {
        let a = (want as f32).abs().max(f32::MIN_POSITIVE);
        let up = (f32::from_bits(a.to_bits() + 1) - a) as f64;
        if want.abs() < a as f64 {
            up.min((a - f32::from_bits(a.to_bits() - 1)) as f64)
        } else {
            up
        }
    }

    /// The ulps of f32 between `got` and the exact value `want` (an f64 carrying it to far
    /// better than an f32 ulp).
    pub(crate) fn ulps_f32(got: f32, want: f64) -> f64 {
        if got.is_nan() || want.is_nan() {
            return if got.is_nan() && want.is_nan() {
                0.0
            } else {
                f64::INFINITY
            };
        }
        if got as f64 == want {
            return 0.0;
        }
        (got as f64 - want).abs() / ulp_f32(want)
    }

    fn mvn6(normalize_variance: bool, eps: f64, inside_sqrt: bool) -> Mvn {
        Mvn {
            axes: MvnAxes::Input,
            normalize_variance,
            eps,
            inside_sqrt,
        }
    }

    fn run6(op: &Mvn, x: Tensor, axes: &[i64]) -> Result<Tensor, EvalError> {
        let a = t(&[axes.len()], axes.to_vec());
        eval_for_test(op, &[x, a], 1 << 26)
    }

    use crate::ops::context::f32s_for_test as f32s;

    fn close(got: &[f32], want: &[f64], tol: f64) {
        assert_eq!(got.len(), want.len());
        for (k, (&g, &w)) in got.iter().zip(want).enumerate() {
            assert!(
                (g as f64 - w).abs() <= tol * (1.0 + w.abs()) || (g.is_nan() && w.is_nan()),
                "element {k}: got {g}, want {w}"
            );
        }
    }

    /// Hand-computed (numpy: `(x - x.mean(axes, keepdims=True)) / np.sqrt(x.var(axes,
    /// keepdims=True) + eps)`).
    #[test]
    fn table() {
        let x: Vec<f32> = vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
        let s15 = (1.5f64).sqrt();
        // (axes, normalize_variance, eps, inside_sqrt, expected)
        type Case = (&'static [i64], bool, f64, bool, Vec<f64>);
        let cases: &[Case] = &[
            // rows of 3: mean 2 and 5, var 2/3
            (&[1], true, 0.0, true, vec![-s15, 0.0, s15, -s15, 0.0, s15]),
            (
                &[-1],
                false,
                0.0,
                true,
                vec![-1.0, 0.0, 1.0, -1.0, 0.0, 1.0],
            ),
            // columns of 2: mean 2.5, 3.5, 4.5, var 2.25
            (&[0], true, 0.0, true, vec![-1.0, -1.0, -1.0, 1.0, 1.0, 1.0]),
            // eps inside: var 2.25 + 1.75 = 4, σ = 2
            (
                &[0],
                true,
                1.75,
                true,
                vec![-0.75, -0.75, -0.75, 0.75, 0.75, 0.75],
            ),
            // eps outside: σ = 1.5 + 0.5 = 2
            (
                &[-2],
                true,
                0.5,
                false,
                vec![-0.75, -0.75, -0.75, 0.75, 0.75, 0.75],
            ),
            // all: mean 3.5, var 35/12
            (
                &[0, 1],
                true,
                0.0,
                true,
                [1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0]
                    .iter()
                    .map(|v| (v - 3.5) / (35.0f64 / 12.0).sqrt())
                    .collect(),
            ),
            (
                &[1, 0],
                false,
                0.0,
                true,
                vec![-2.5, -1.5, -0.5, 0.5, 1.5, 2.5],
            ),
            // no axes: each element alone
            (&[], true, 1e-9, true, vec![0.0; 6]),
        ];
        for (axes, nv, eps, inside, want) in cases {
            let got = run6(&mvn6(*nv, *eps, *inside), t(&[2, 3], x.clone()), axes).unwrap();
            close(&f32s(&got), want, 1e-6);
        }
    }

    #[test]
    fn mvn1_axes_from_the_attributes() {
        let x: Vec<f32> = (0..24).map(|i| ((i * 7) % 11) as f32).collect();
        let shape = [2usize, 3, 4];
        let op = |axes| Mvn {
            axes,
            normalize_variance: true,
            eps: 1e-9,
            inside_sqrt: true,
        };
        let run = |o: &Mvn| f32s(&eval_for_test(o, &[t(&shape, x.clone())], 1 << 20).unwrap());
        let via6 = |axes: &[i64]| {
            f32s(&run6(&mvn6(true, 1e-9, true), t(&shape, x.clone()), axes).unwrap())
        };
        assert_eq!(run(&op(MvnAxes::AcrossChannels(true))), via6(&[1, 2]));
        assert_eq!(run(&op(MvnAxes::AcrossChannels(false))), via6(&[2]));
        assert_eq!(run(&op(MvnAxes::Listed(vec![0, -1]))), via6(&[0, 2]));
        // Rank 2 without across_channels: no axes.
        let y = eval_for_test(
            &op(MvnAxes::AcrossChannels(false)),
            &[t(&[2, 2], vec![1f32, 2.0, 3.0, 4.0])],
            1 << 20,
        )
        .unwrap();
        assert_eq!(f32s(&y), vec![0.0; 4]);
    }

    #[test]
    fn specials() {
        let op = mvn6(true, 1e-5, true);
        let y = f32s(
            &run6(
                &op,
                t(&[2, 3], vec![1f32, f32::NAN, 3.0, 1.0, 2.0, 3.0]),
                &[1],
            )
            .unwrap(),
        );
        assert!(y[..3].iter().all(|v| v.is_nan()));
        assert!(y[3..].iter().all(|v| v.is_finite()));
        let y = f32s(&run6(&op, t(&[3], vec![1f32, f32::INFINITY, 3.0]), &[0]).unwrap());
        assert!(y.iter().all(|v| v.is_nan()));
        // Without the variance: x − inf.
        let y = f32s(
            &run6(
                &mvn6(false, 0.0, true),
                t(&[2], vec![1f32, f32::INFINITY]),
                &[0],
            )
            .unwrap(),
        );
        assert_eq!(y[0], f32::NEG_INFINITY);
        assert!(y[1].is_nan());
        // A constant group: 0 (eps > 0), 0/0 = NaN with eps 0.
        let y = f32s(&run6(&op, t(&[3], vec![7f32; 3]), &[0]).unwrap());
        assert_eq!(y, vec![0.0; 3]);
        let y = f32s(&run6(&mvn6(true, 0.0, false), t(&[3], vec![7f32; 3]), &[0]).unwrap());
        assert!(y.iter().all(|v| v.is_nan()));
        // f32 values whose squares overflow f32 are fine in f64.
        let y = f32s(&run6(&op, t(&[2], vec![-3e38f32, 3e38]), &[0]).unwrap());
        assert_eq!(y, vec![-1.0, 1.0]);
        // Empty data.
        let y = run6(&op, t(&[0, 3], Vec::<f32>::new()), &[1]).unwrap();
        assert_eq!(y.shape(), [0, 3]);
        let y = run6(&op, t(&[2, 0], Vec::<f32>::new()), &[1]).unwrap();
        assert_eq!(y.shape(), [2, 0]);
    }

    /// The exact normalisation of one group, from a double-double mean and variance.
    fn reference(xs: &[f64], eps: f64, inside: bool) -> Vec<f64> {
        let n = xs.len() as f64;
        let sum = xs.iter().fold(Dd(0.0, 0.0), |a, &x| a.add(Dd(x, 0.0)));
        let mean = sum.div(Dd(n, 0.0));
        let sq = xs.iter().fold(Dd(0.0, 0.0), |a, &x| {
            let d = Dd(x, 0.0).add(mean.neg());
            a.add(d.mul(d))
        });
        let var = sq.div(Dd(n, 0.0));
        let sigma = if inside {
            var.add(Dd(eps, 0.0)).sqrt()
        } else {
            var.sqrt().add(Dd(eps, 0.0))
        };
        xs.iter()
            .map(|&x| Dd(x, 0.0).add(mean.neg()).div(sigma).0)
            .collect()
    }

    /// f32 MVN against the double-double reference over groups of several sizes and
    /// offsets; prints the largest errors measured.
    #[test]
    fn f32_accuracy_against_a_double_double_reference() {
        let mut rng = Rng(7);
        let mut worst_ulps = 0.0f64;
        let mut worst_abs = 0.0f64;
        let mut worst_small = 0.0f64;
        for &n in &[1usize, 2, 3, 15, 16, 17, 100, 255, 256, 257, 1000, 4099] {
            for &(offset, spread) in &[
                (0.0, 1.0),
                (3.0, 1.0),
                (1e3, 1.0),
                (-50.0, 1e-2),
                (0.0, 1e20),
            ] {
                for inside in [true, false] {
                    let xs: Vec<f32> = (0..n)
                        .map(|_| (offset + spread * rng.normal()) as f32)
                        .collect();
                    let op = mvn6(true, 1e-6, inside);
                    let y = f32s(&run6(&op, t(&[1, n], xs.clone()), &[1]).unwrap());
                    let w = reference(
                        &xs.iter().map(|&v| v as f64).collect::<Vec<_>>(),
                        op.eps,
                        inside,
                    );
                    let ratio = 1.0 + (offset / spread).abs();
                    for (&g, &r) in y.iter().zip(&w) {
                        // The error beyond the last rounding's half ulp.
                        let abs = ((g as f64 - r).abs() - 0.5 * ulp_f32(r)).max(0.0) / ratio;
                        worst_abs = worst_abs.max(abs);
                        assert!(abs <= 2f64.powi(-40), "n {n}: {g} vs {r}");
                        let u = ulps_f32(g, r);
                        if r.abs() >= 2f64.powi(-10) {
                            worst_ulps = worst_ulps.max(u);
                        } else {
                            worst_small = worst_small.max(u);
                        }
                    }
                }
            }
        }
        eprintln!(
            "MVN f32: worst {worst_ulps} ulp where |y| ≥ 2^-10, {worst_small} ulp below; worst \
             error beyond half an ulp, over 1 + |mean|/σ: {worst_abs:e}"
        );
        assert!(worst_ulps <= 0.5 + 1e-6, "{worst_ulps}");
    }

    #[test]
    fn f64_and_narrow_types() {
        let mut rng = Rng(3);
        let xs: Vec<f64> = (0..300).map(|_| 5.0 + rng.normal()).collect();
        let op = mvn6(true, 1e-9, true);
        let y = run6(&op, t(&[1, 300], xs.clone()), &[-1]).unwrap();
        let want = reference(&xs, op.eps, true);
        for (&g, &w) in y.view::<f64>().unwrap().iter().zip(&want) {
            assert!((g - w).abs() <= 1e-15 * 6.0, "{g} {w}");
        }
        // f16 and bf16: computed in f64, rounded once.
        let h: Vec<f16> = xs.iter().map(|&v| f16::from_f64(v)).collect();
        let y = run6(&op, t(&[300], h.clone()), &[0]).unwrap();
        let want = reference(
            &h.iter().map(|v| v.to_f64()).collect::<Vec<_>>(),
            op.eps,
            true,
        );
        for (&g, &w) in y.view::<f16>().unwrap().iter().zip(&want) {
            assert_eq!(g, <f16 as Cast>::from_num(Num::Float(w)), "{w}");
        }
        let b: Vec<bf16> = xs.iter().map(|&v| bf16::from_f64(v * 1e30)).collect();
        let y = run6(&op, t(&[300], b.clone()), &[0]).unwrap();
        let want = reference(
            &b.iter().map(|v| v.to_f64()).collect::<Vec<_>>(),
            op.eps,
            true,
        );
        for (&g, &w) in y.view::<bf16>().unwrap().iter().zip(&want) {
            assert_eq!(g, <bf16 as Cast>::from_num(Num::Float(w)), "{w}");
        }
    }

    #[test]
    fn layouts() {
        assert_eq!(
            layout(&[2, 3, 4], &[false, true, true]),
            Layout::Rows { n: 12 }
        );
        assert_eq!(
            layout(&[2, 3, 4], &[false, false, false]),
            Layout::Rows { n: 1 }
        );
        assert_eq!(
            layout(&[2, 3, 4], &[false, true, false]),
            Layout::Columns {
                outer: 2,
                n: 3,
                inner: 4
            }
        );
        assert_eq!(
            layout(&[2, 3, 1, 4], &[true, true, true, false]),
            Layout::Columns {
                outer: 1,
                n: 6,
                inner: 4
            }
        );
        assert_eq!(
            layout(&[1, 3, 4, 1], &[false, false, true, true]),
            Layout::Rows { n: 4 }
        );
        assert_eq!(
            layout(&[2, 3, 4], &[true, false, true]),
            Layout::General {
                perm: vec![1, 0, 2],
                n: 8
            }
        );
    }

    /// The same groups in every layout give the same bits; so do 1 and 4 threads.
    #[test]
    fn same_bits_in_every_layout_and_at_any_thread_count() {
        let mut rng = Rng(11);
        let (a, b, c) = (16usize, 700usize, 40usize);
        let x: Vec<f32> = (0..a * b * c)
            .map(|_| (2.0 + rng.normal()) as f32)
            .collect();
        let arr = ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(&[a, b, c]), x).unwrap();
        let op = mvn6(true, 1e-5, true);
        let pool = |k| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(k)
                .build()
                .unwrap()
        };
        // Groups along axis 1: columns.
        let cols =
            |k: usize| pool(k).install(|| run6(&op, Tensor::F32(arr.clone()), &[1]).unwrap());
        let one = cols(1);
        assert_eq!(one.to_le_bytes(), cols(4).to_le_bytes());
        // The same groups as rows (axis 1 moved last), and in the general layout (with a
        // reduced axis of 1 put in front: [1, a, b, c] over axes 0 and 2).
        let moved = arr
            .view()
            .permuted_axes(vec![0, 2, 1])
            .as_standard_layout()
            .into_owned();
        let rows =
            |k: usize| pool(k).install(|| run6(&op, Tensor::F32(moved.clone()), &[2]).unwrap());
        let r1 = rows(1);
        assert_eq!(r1.to_le_bytes(), rows(4).to_le_bytes());
        let back = r1
            .view::<f32>()
            .unwrap()
            .permuted_axes(vec![0, 2, 1])
            .as_standard_layout()
            .into_owned();
        assert_eq!(Tensor::F32(back).to_le_bytes(), one.to_le_bytes());
        // The same groups in the general layout: axis 1 split in two ([a, 2, b/2, c]), the
        // halves apart ([2, a, b/2, c]), reduced over axes 0 and 2.
        let split = arr
            .clone()
            .into_shape_with_order(ndarray::IxDyn(&[a, 2, b / 2, c]))
            .unwrap();
        let apart = split
            .view()
            .permuted_axes(vec![1, 0, 2, 3])
            .as_standard_layout()
            .into_owned();
        assert!(matches!(
            layout(apart.shape(), &[true, false, true, false]),
            Layout::General { .. }
        ));
        let general =
            |k: usize| pool(k).install(|| run6(&op, Tensor::F32(apart.clone()), &[0, 2]).unwrap());
        let g1 = general(1);
        assert_eq!(g1.to_le_bytes(), general(4).to_le_bytes());
        let back = g1
            .view::<f32>()
            .unwrap()
            .permuted_axes(vec![1, 0, 2, 3])
            .as_standard_layout()
            .into_owned()
            .into_shape_with_order(ndarray::IxDyn(&[a, b, c]))
            .unwrap();
        assert_eq!(Tensor::F32(back).to_le_bytes(), one.to_le_bytes());
    }

    fn parsed(def: &OpDef, attrs: &[(&str, &str)]) -> Result<String, Vec<String>> {
        let data = crate::ops::context::attrs_for_test(attrs);
        (def.parse)(&Attrs::new(Some(&data)))
            .map(|o| format!("{o:?}"))
            .map_err(|e| {
                e.iter()
                    .map(|e| format!("{}: {}", e.name, e.reason))
                    .collect()
            })
    }

    #[test]
    fn parse_table() {
        let ok6 = |nv, eps, inside| Ok(format!("{:?}", mvn6(nv, eps, inside)));
        assert_eq!(
            parsed(
                &MVN_6,
                &[
                    ("eps", "9.9999997473787516e-06"),
                    ("normalize_variance", "true"),
                    ("eps_mode", "INSIDE_SQRT")
                ]
            ),
            ok6(true, 1e-5f32 as f64, true)
        );
        assert_eq!(
            parsed(
                &MVN_6,
                &[
                    ("eps", "1e-5"),
                    ("normalize_variance", "false"),
                    ("eps_mode", "outside_sqrt")
                ]
            ),
            ok6(false, 1e-5f32 as f64, false)
        );
        assert_eq!(
            parsed(&MVN_6, &[("eps", "-1"), ("eps_mode", "both")]),
            Err(vec![
                "normalize_variance: ".into(),
                "eps: eps must be a finite number ≥ 0, not -1".into(),
                "eps_mode: expected inside_sqrt or outside_sqrt".into(),
            ])
        );
        assert_eq!(
            parsed(
                &MVN_6,
                &[
                    ("eps", "1e39"),
                    ("normalize_variance", "1"),
                    ("eps_mode", "inside_sqrt")
                ]
            ),
            Err(vec!["eps: eps does not fit in f32".into()])
        );
        let ok2 = |axes, nv, eps| {
            Ok(format!(
                "{:?}",
                Mvn {
                    axes,
                    normalize_variance: nv,
                    eps,
                    inside_sqrt: true
                }
            ))
        };
        // What OpenVINO writes: both, reduction_axes deciding.
        assert_eq!(
            parsed(
                &MVN_2,
                &[
                    ("across_channels", "false"),
                    ("eps", "1e-9"),
                    ("normalize_variance", "true"),
                    ("reduction_axes", "1,2,3")
                ]
            ),
            ok2(MvnAxes::Listed(vec![1, 2, 3]), true, 1e-9)
        );
        assert_eq!(
            parsed(
                &MVN_2,
                &[
                    ("across_channels", "true"),
                    ("eps", "1e-9"),
                    ("normalize_variance", "false"),
                    ("reduction_axes", "")
                ]
            ),
            ok2(MvnAxes::AcrossChannels(true), false, 1e-9)
        );
        assert_eq!(
            parsed(
                &MVN_2,
                &[
                    ("eps", "0.001"),
                    ("normalize_variance", "true"),
                    ("reduction_axes", "-1")
                ]
            ),
            ok2(MvnAxes::Listed(vec![-1]), true, 0.001)
        );
        assert_eq!(
            parsed(&MVN_2, &[("eps", "0.001"), ("normalize_variance", "true")]),
            Err(vec![
                "across_channels: either across_channels or a non-empty reduction_axes is required"
                    .into()
            ])
        );
        assert_eq!(
            parsed(
                &MVN_2,
                &[
                    ("across_channels", "maybe"),
                    ("eps", "nan"),
                    ("normalize_variance", "true"),
                    ("reduction_axes", "1,x")
                ]
            ),
            Err(vec![
                "reduction_axes: expected an integer".into(),
                "across_channels: expected true, false, 1 or 0".into(),
                "eps: eps must be a finite number ≥ 0, not NaN".into(),
            ])
        );
    }

    fn infer6(
        data: &str,
        ty: ElementType,
        axes: &str,
        values: Option<&[i64]>,
    ) -> Result<String, String> {
        let d = TensorType::new(ty, PartialShape::parse(data).unwrap());
        let a = match values {
            Some(v) => TensorType::of_value(t(&[v.len()], v.to_vec())),
            None => TensorType::new(ElementType::I64, PartialShape::parse(axes).unwrap()),
        };
        inferred_shape_for_test(&mvn6(true, 1e-5, true), &[&d, &a])
    }

    #[test]
    fn infer_table() {
        let f = ElementType::F32;
        assert_eq!(
            infer6("1,3,?,2..8", f, "2", None).as_deref(),
            Ok("[1,3,?,2..8]")
        );
        assert_eq!(infer6("...", f, "3", None).as_deref(), Ok("[...]"));
        assert_eq!(infer6("2,3,4", f, "?", None).as_deref(), Ok("[2,3,4]"));
        assert_eq!(
            infer6("2,?,4", f, "", Some(&[-1, 1])).as_deref(),
            Ok("[2,?,4]")
        );
        assert_eq!(infer6("...", f, "", Some(&[7])).as_deref(), Ok("[...]"));
        let err = |r: Result<String, String>, want: &str| {
            let m = r.unwrap_err();
            assert!(m.contains(want), "{m}");
        };
        err(
            infer6("2,3", ElementType::I32, "1", None),
            "does not accept i32",
        );
        err(
            infer6("2,3..5", f, "", Some(&[2])),
            "axis 2 is out of range for data of rank 2 (-2..1)",
        );
        err(
            infer6("2,3..5", f, "", Some(&[1, -1])),
            "axis -1 (axes[1]) repeats axes[0] = 1",
        );
        err(infer6("2,?", f, "3", None), "3 axes for data of rank 2");
        err(
            infer6("2,3", f, "1,1", None),
            "the axes must be 1-D, not rank 2",
        );
        assert_eq!(infer6("2,3", f, "", Some(&[])).as_deref(), Ok("[2,3]"));
        // MVN-1's attribute axes against the data's rank (any interval dims).
        let op = Mvn {
            axes: MvnAxes::Listed(vec![3]),
            normalize_variance: true,
            eps: 0.0,
            inside_sqrt: true,
        };
        let d = TensorType::new(f, PartialShape::parse("1,2..4,?").unwrap());
        err(
            inferred_shape_for_test(&op, &[&d]),
            "reduction_axes: axis 3 is out of range for data of rank 3",
        );
        let d = TensorType::new(f, PartialShape::parse("1,2..4,?,5").unwrap());
        assert_eq!(
            inferred_shape_for_test(&op, &[&d]).as_deref(),
            Ok("[1,2..4,?,5]")
        );
        // The axes' type.
        let d = TensorType::new(f, PartialShape::parse("2").unwrap());
        let a = TensorType::new(ElementType::U8, PartialShape::parse("1").unwrap());
        err(
            inferred_shape_for_test(&mvn6(true, 0.0, true), &[&d, &a]),
            "does not accept u8",
        );
    }

    #[test]
    fn invalid_axes_at_execution_and_the_budget() {
        let op = mvn6(true, 1e-5, true);
        for (axes, want) in [
            (
                &[3i64][..],
                "axis 3 is out of range for data of rank 2 (-2..1)",
            ),
            (&[-3][..], "axis -3 is out of range"),
            (&[0, -2][..], "repeats axes[0] = 0"),
        ] {
            match run6(&op, t(&[2, 2], vec![0f32; 4]), axes) {
                Err(EvalError::Invalid(m)) => assert!(m.contains(want), "{m}"),
                other => panic!("{other:?}"),
            }
        }
        let x = t(&[256, 256], vec![0f32; 1 << 16]);
        let a = t(&[1], vec![1i64]);
        assert!(matches!(
            eval_for_test(&op, &[x.clone(), a.clone()], 200_000),
            Err(EvalError::Memory(_))
        ));
        assert!(eval_for_test(&op, &[x.clone(), a], 300_000).is_ok());
        // The general layout copies the data twice more.
        let x3 = t(&[64, 16, 64], vec![0f32; 1 << 16]);
        let a = t(&[2], vec![0i64, 2]);
        assert!(matches!(
            eval_for_test(&op, &[x3.clone(), a.clone()], 500_000),
            Err(EvalError::Memory(_))
        ));
        assert!(eval_for_test(&op, &[x3, a], 800_000).is_ok());
    }
}
