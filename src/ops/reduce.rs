//! The reductions: ReduceSum-1, ReduceProd-1, ReduceMean-1, ReduceMax-1, ReduceMin-1,
//! ReduceL1-4, ReduceL2-4, ReduceLogicalAnd-1, ReduceLogicalOr-1 — one table row each (at the end
//! of this file), one op type for all.
//!
//! Spec: <https://docs.openvino.ai/2026/documentation/openvino-ir-format/operation-sets/operation-specs/reduction/reduce-sum-1.html>
//! (and the other `reduce-*` pages).
//!
//! Ports: `data` and `axes` (an integer scalar or 1-D tensor; negative counts from the end;
//! repeated axes count once, as in OpenVINO; empty: no reduction, the output is the input).
//! Attribute `keep_dims` (default false): reduced dims stay as 1s.
//!
//! Types and decisions (the row's type set; others are refused, E502):
//! * integers (Sum, Prod, Mean, Max, Min, L1): exact with two's complement wrap-around for Sum,
//!   Prod and L1; Mean is the exact mean truncated toward zero (OpenVINO's reference divides a
//!   sum that has already wrapped: ovir does not copy that).
//! * floats: Sum, Mean, L1 and L2 accumulate in f64 in the fixed order below and round once to
//!   the type (f16 and bf16 too; Mean divides the f64 sum by n, L2 takes its square root, in
//!   f64); Prod multiplies in f64 in the same fixed order and rounds once. A NaN result is the
//!   type's canonical quiet NaN. A sum of only −0 terms is −0 (IEEE); no terms sum to +0. Max
//!   and Min propagate NaN (numpy `max`; OpenVINO's reference skips NaN); max(−0, +0) is +0,
//!   min is −0. L2 is for floats (f64 data beyond about 1e154 in magnitude overflows its
//!   squares, as in OpenVINO).
//! * boolean: LogicalAnd (all) and LogicalOr (any).
//! * no elements to reduce: Sum and L1 give 0, Prod 1, LogicalAnd true, LogicalOr false, Max
//!   and Min their identities (floats −∞ and +∞, integers the type's lowest and highest value,
//!   as ONNX defines them; OpenVINO's CPU plugin gives the lowest finite float for Max and +∞
//!   for Min); Mean of floats 0/0 = NaN, and of integers has no value: an error (E507).
//!
//! Summation order (floats; [`tree`], [`leaf_of`], [`col_leaf`]): an output's `n` terms, in the
//! row-major order of their coordinates along the reduced axes, are cut into leaves of [`LEAF`]
//! (128) terms; term `i` of a leaf goes to accumulator `i mod` [`LANES`] (8), each accumulator
//! adds its terms in order starting from −0 (from 1 for Prod), and the accumulators are folded
//! by halves (`a[k] += a[k + 4]`, then `+ 2`, `+ 1`). The `m` leaf sums are combined by a fixed
//! tree: `T(m) = T(h) + T(m − h)` over the first `h` leaves and the rest, `h` the largest power
//! of two below `m`. The order is a function of `n` alone: not of the thread count (threads
//! split outputs, or whole subtrees of that tree), nor of the vector unit (LLVM neither
//! reorders nor contracts float operations, and the lanes are explicit), nor of the layout (a
//! group read as a contiguous row, as a column or through a strided walk gives the same bits:
//! tested). Max, Min and the integer kinds are exact, so their order does not matter.
//!
//! Error bound: each term passes through at most `d = 15 + 3 + ⌈log2 ⌈n/128⌉⌉` rounded f64
//! additions (15 in its accumulator, 3 folds, the tree's depth), so the f64 sum `ŝ` of terms
//! `t_i` satisfies `|ŝ − Σt_i| ≤ d·2^-53·Σ|t_i|` (to first order): for f32, f16 and bf16 data
//! (whose terms, squares included, are exact in f64) the result is the exact value rounded once
//! to the type, within half an ulp, plus at most `d·2^-53·Σ|t_i|` (`d ≤ 41` below 2^30 terms:
//! `2^-47.6·Σ|t_i|`, against pairwise f32 summation's `log2(n)·2^-24·Σ|t_i|`); for f64 data the
//! bound is `d·2^-53·Σ|t_i|` itself, pairwise summation's `O(log n)` with a block of 16. Mean
//! adds one rounding of the division (2^-53 relative), L2 half that for the square root. Tested
//! against double-double references (f32, f16 and f64 data; lengths 1 to 100000; mixed signs
//! and magnitudes). Products round `n − 1` times in f64 in any order: `(n−1)·2^-53` relative
//! (intermediate overflow and underflow of f64 aside).
//!
//! Execution (no copy of the input; only the output is reserved in the memory budget): dims
//! of 1 are dropped and neighbouring kept or reduced dims merged ([`Plan`]). When the last
//! merged run is reduced ([`Walk::Rows`]), each output's terms are contiguous segments: one
//! segment (`[outer, n] → [outer]`) for a reduction over the innermost axes, e.g. ReduceMean
//! over the last axis of `[1, 128, 768]`, reduced 8 lanes at a time in registers (an output
//! of at most one leaf's terms straight from the data, its 8 accumulators one wide register:
//! through the generic leaf walk the compiler kept them in four narrow ones); several
//! segments (e.g. over N, H and W of NCHW) walked in turn, a leaf that spans segments gathered
//! into a leaf-sized buffer. When the last run is kept ([`Walk::Cols`]: `[outer, n, inner] →
//! [outer, inner]`, e.g. over the channels of NCHW, or several reduced runs in between), up to
//! [`CW`] (256) neighbouring outputs are reduced together: each row of the data is added
//! elementwise into 8 × 256 accumulators (vectorised across the columns), and rows a few ahead
//! are prefetched (they lie far apart). The outputs are split into contiguous parts for rayon
//! above [`PARALLEL_MIN`] elements of input; an output whose reduction alone reads more than
//! that is split further into subtrees of the leaf tree (`rayon::join`), so that one huge
//! reduction (a ReduceSum of everything) runs in parallel too, with the same bits. Loops are
//! compiled for the widest vector unit the CPU has ([`vectorised`]). A tensor not in row-major
//! order (ovir makes none) is copied first, within the budget.
//!
//! Bounds of shape values pass through Sum, Max, Min and Mean (and Prod of non-negative ones),
//! as OpenVINO's `evaluate_lower`/`evaluate_upper` do.

use std::marker::PhantomData;

use rayon::prelude::*;

use super::kernel::{PARALLEL_MIN, tensor_from, vectorised};
use super::{Arity, AttrError, Attrs, EvalCx, EvalError, InferCx, Op, OpDef};
use crate::num::{Cast, Int, Num};
use crate::shape::{Dim, PartialShape, TensorType};
use crate::tensor::{Element, Tensor, TypeSet};

/// What a reduction computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Sum,
    Prod,
    Mean,
    Max,
    Min,
    L1,
    L2,
    All,
    Any,
}

#[derive(Clone, Debug)]
pub struct Reduce {
    pub def: &'static OpDef,
    pub kind: Kind,
    pub types: TypeSet,
    pub keep_dims: bool,
}

/// Normalised, sorted, distinct axes of a tensor of `rank`.
fn axes_of(values: &[i64], rank: usize) -> Result<Vec<usize>, String> {
    let mut out = Vec::new();
    for &a in values {
        let k = super::normalize_axis(a, rank)
            .ok_or_else(|| format!("axis {a} is out of range for rank {rank}"))?;
        if !out.contains(&k) {
            out.push(k);
        }
    }
    out.sort_unstable();
    Ok(out)
}

impl Reduce {
    fn out_dims<D: Copy>(&self, dims: &[D], axes: &[usize], one: D) -> Vec<D> {
        dims.iter()
            .enumerate()
            .filter_map(|(k, &d)| match (axes.contains(&k), self.keep_dims) {
                (false, _) => Some(d),
                (true, true) => Some(one),
                (true, false) => None,
            })
            .collect()
    }
}

impl Op for Reduce {
    fn def(&self) -> Option<&'static OpDef> {
        Some(self.def)
    }

    fn infer(&self, cx: &mut InferCx<'_>) -> Option<Vec<TensorType>> {
        let (data, axes) = (cx.input(0), cx.input(1));
        let ty = data.element_type;
        cx.require(0..1, self.types)?;
        cx.require(1..2, TypeSet::INT)?;
        if let Some(r) = axes.shape.rank()
            && r > 1
        {
            return cx.invalid(1, format!("the axes must be a scalar or 1-D, not rank {r}"));
        }
        let Some(dims) = data.shape.dims() else {
            return Some(vec![TensorType::new(ty, PartialShape::dynamic_rank())]);
        };
        let Some(values) = cx.ints(1) else {
            let shape = if self.keep_dims {
                PartialShape::new(vec![Dim::DYNAMIC; dims.len()])
            } else {
                PartialShape::dynamic_rank()
            };
            return Some(vec![TensorType::new(ty, shape)]);
        };
        match axes_of(&values, dims.len()) {
            Ok(axes) => Some(vec![TensorType::new(
                ty,
                PartialShape::new(self.out_dims(dims, &axes, Dim::fixed(1))),
            )]),
            Err(reason) => cx.invalid(1, reason),
        }
    }

    fn eval(&self, cx: &EvalCx<'_>) -> Result<Vec<Tensor>, EvalError> {
        let data = cx.tensor(0)?;
        let values = cx.ints(1)?;
        let shape = data.shape().to_vec();
        let axes = axes_of(&values, shape.len()).map_err(EvalError::Invalid)?;
        let out_shape = self.out_dims(&shape, &axes, 1);
        let ty = data.element_type();
        // A dim of 0 may stand beside dims whose product overflows: such an output is refused
        // by the budget (it could not be allocated).
        let outs = checked_product(&out_shape);
        cx.reserve(ty, outs.unwrap_or(usize::MAX))?;
        if axes.is_empty() {
            return Ok(vec![(*data).clone()]);
        }
        if !crate::dispatch!(any: ty, T => T::view(&data).is_some_and(|v| v.is_standard_layout()), _ => true)
        {
            // Only a tensor not in row-major order is copied (ovir makes none).
            cx.reserve_bytes("copy of the input", data.bytes())?;
        }
        let reduced = crate::dispatch!(any: ty, T => reduce::<T>(&data, &axes, &out_shape, self.kind).map(Some), _ => Ok(None));
        match reduced? {
            Some(t) => Ok(vec![t]),
            None => Err(EvalError::UnsupportedType {
                op: self.def.name.into(),
                ty,
            }),
        }
    }

    fn moves(&self, input: usize) -> bool {
        input == 0
            && matches!(
                self.kind,
                Kind::Sum | Kind::Max | Kind::Min | Kind::Mean | Kind::Prod
            )
    }

    fn bounds_need_nonnegative(&self) -> bool {
        self.kind == Kind::Prod
    }
}

/// The product of `dims`, `None` on overflow (0 if any is 0).
fn checked_product(dims: &[usize]) -> Option<usize> {
    if dims.contains(&0) {
        return Some(0);
    }
    dims.iter().try_fold(1usize, |a, &d| a.checked_mul(d))
}

/// Reduces `t` over `axes` (sorted, distinct, at least one) into `out_shape`.
fn reduce<T: Reducible>(
    t: &Tensor,
    axes: &[usize],
    out_shape: &[usize],
    kind: Kind,
) -> Result<Tensor, EvalError> {
    let x = super::kernel::contiguous::<T>(t).ok_or(EvalError::Internal("the data's type"))?;
    let shape = t.shape();
    let reduced: Vec<bool> = (0..shape.len()).map(|k| axes.contains(&k)).collect();
    let plan = Plan::new(shape, &reduced)
        .ok_or_else(|| EvalError::Invalid("the output's size overflows".into()))?;
    let mut out = vec![T::default(); plan.outs];
    T::run(kind, &x, &plan, &mut out).map_err(EvalError::Invalid)?;
    tensor_from(out_shape, out)
}

// ---------------------------------------------------------------------------------------------
// The layout of a reduction.

/// Terms per leaf of the summation tree (a multiple of [`LANES`]).
const LEAF: usize = 128;
/// Accumulators per leaf.
const LANES: usize = 8;
/// Outputs reduced side by side when the last dims are kept.
const CW: usize = 256;
/// Elements of input above which one output's reduction is split into subtrees.
const GRAIN: usize = PARALLEL_MIN;

/// How the terms of each output lie in the data (row-major), after dims of 1 are dropped and
/// neighbouring dims of the same kind (kept or reduced) merged into runs.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Plan {
    /// Terms per output.
    n: usize,
    /// Outputs.
    outs: usize,
    /// (size, stride) of the kept runs, outermost first (without the last run in
    /// [`Walk::Cols`]): output (or group of columns) `o` starts at `offset(o, kept)`.
    kept: Vec<(usize, usize)>,
    /// (size, stride) of the reduced runs, outermost first (without the last run in
    /// [`Walk::Rows`]).
    red: Vec<(usize, usize)>,
    walk: Walk,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Walk {
    /// The last run is reduced: term `i` of an output is element `i mod seg` of its segment
    /// `offset(i / seg, red)`.
    Rows { seg: usize },
    /// The last run (`inner` elements) is kept: output `o` is column `o mod inner` of group
    /// `o / inner`, and its term `j` lies at row `offset(j, red)`.
    Cols { inner: usize },
}

/// Where coordinate `i` (row-major over `runs`) lies.
#[inline(always)]
fn offset(i: usize, runs: &[(usize, usize)]) -> usize {
    match runs {
        [] => 0,
        [(_, stride)] => i * stride,
        _ => {
            let (mut i, mut off) = (i, 0);
            for &(size, stride) in runs.iter().rev() {
                off += (i % size) * stride;
                i /= size;
            }
            off
        }
    }
}

impl Plan {
    /// The plan for data of `shape` reduced over the axes marked in `reduced`; `None` if the
    /// number of outputs overflows.
    fn new(shape: &[usize], reduced: &[bool]) -> Option<Plan> {
        let pick = |r: bool| -> Vec<usize> {
            shape
                .iter()
                .zip(reduced)
                .filter(|p| *p.1 == r)
                .map(|p| *p.0)
                .collect()
        };
        let outs = checked_product(&pick(false))?;
        // With outputs, an overflowing `n` would be more elements than the data holds.
        let n = if outs == 0 {
            0
        } else {
            checked_product(&pick(true))?
        };
        if outs == 0 || n == 0 {
            return Some(Plan {
                n,
                outs,
                kept: Vec::new(),
                red: Vec::new(),
                walk: Walk::Rows { seg: n },
            });
        }
        // The data is not empty: every product below is at most its length.
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
        let mut strided = vec![(false, 0, 0); runs.len()];
        let mut stride = 1;
        for k in (0..runs.len()).rev() {
            strided[k] = (runs[k].0, runs[k].1, stride);
            stride *= runs[k].1;
        }
        let of = |r: bool, v: &[(bool, usize, usize)]| -> Vec<(usize, usize)> {
            v.iter().filter(|p| p.0 == r).map(|p| (p.1, p.2)).collect()
        };
        let (walk, kept, red) = match strided.split_last() {
            None => (Walk::Rows { seg: 1 }, Vec::new(), Vec::new()),
            Some((&(true, seg, _), rest)) => (Walk::Rows { seg }, of(false, rest), of(true, rest)),
            Some((&(false, inner, _), rest)) => {
                (Walk::Cols { inner }, of(false, rest), of(true, rest))
            }
        };
        Some(Plan {
            n,
            outs,
            kept,
            red,
            walk,
        })
    }
}

// ---------------------------------------------------------------------------------------------
// What a reduction computes, as accumulators.

/// A reduction of terms of type `T`: each of the [`LANES`] accumulators (`L`) starts at `ZERO`
/// and takes terms with `add`; a leaf's accumulators are folded with `merge` into a leaf sum
/// (`S`, through `leaf`), leaf sums are combined with `join`, and `finish` gives the output of
/// `n` terms. Never constructed: a family of functions.
trait Fold: 'static {
    type T: Element;
    type L: Copy + Send + Sync;
    type S: Copy + Send + Sync;
    const ZERO: Self::L;
    fn add(l: Self::L, x: Self::T) -> Self::L;
    fn merge(a: Self::L, b: Self::L) -> Self::L;
    fn leaf(l: Self::L) -> Self::S;
    fn join(a: Self::S, b: Self::S) -> Self::S;
    fn finish(s: Self::S, n: usize) -> Self::T;
}

/// A key that orders a float type's values as IEEE's total order does (−0 below +0).
trait Key: Copy + Ord + Send + Sync + 'static {
    const MIN: Self;
    const MAX: Self;
}

macro_rules! keys {
    ($($t:ty)*) => {$(
        impl Key for $t {
            const MIN: Self = <$t>::MIN;
            const MAX: Self = <$t>::MAX;
        }
    )*};
}
keys!(i16 i32 i64);

/// A float element type: read exactly as f64, written by one rounding from f64.
trait Real: Element + Cast {
    type Key: Key;
    /// The canonical quiet NaN.
    const NAN: Self;
    /// The value as f64 (exact).
    fn wide(self) -> f64;
    /// `v` rounded once to the type (to nearest even).
    fn narrow(v: f64) -> Self;
    /// The value's key, or `nan` for a NaN (no other value has the key `Key::MIN` or
    /// `Key::MAX`: those are NaN bit patterns).
    fn key(self, nan: Self::Key) -> Self::Key;
    /// The value of a key that is not `nan`'s.
    fn of_key(k: Self::Key) -> Self;
}

/// An f16 (as its bits) widened to f32, exactly, in arithmetic the compiler vectorises:
/// finite values scaled from their bits by 2^112, infinities and NaNs rebuilt.
#[inline(always)]
fn f16_to_f32(h: u16) -> f32 {
    let abs = (h & 0x7fff) as u32;
    let sign = ((h & 0x8000) as u32) << 16;
    let v = if abs >= 0x7c00 {
        f32::from_bits(0x7f80_0000 | ((abs & 0x3ff) << 13))
    } else {
        // 2^112 = 2^(127 − 15): exact, subnormal f16s included.
        f32::from_bits(abs << 13) * f32::from_bits(0x7780_0000)
    };
    f32::from_bits(v.to_bits() | sign)
}

macro_rules! reals {
    ($($t:ty: $bits:ty, $key:ty, $inf:expr, |$w:ident| $wide:expr, |$v:ident| $narrow:expr;)*) => {$(
        impl Real for $t {
            type Key = $key;
            const NAN: Self = <$t>::NAN;
            #[inline(always)]
            fn wide(self) -> f64 {
                let $w = self;
                $wide
            }
            #[inline(always)]
            fn narrow($v: f64) -> Self {
                $narrow
            }
            #[inline(always)]
            fn key(self, nan: $key) -> $key {
                let b = self.to_bits();
                if b & !(1 << (<$bits>::BITS - 1)) > $inf {
                    return nan;
                }
                let i = b as $key;
                // Negative values: every bit but the sign flipped, so that more negative
                // values get smaller keys (−0 is −1, just below +0).
                i ^ (((i >> (<$bits>::BITS - 1)) as $bits) >> 1) as $key
            }
            #[inline(always)]
            fn of_key(k: $key) -> Self {
                // The map is its own inverse.
                let i = k ^ (((k >> (<$bits>::BITS - 1)) as $bits) >> 1) as $key;
                <$t>::from_bits(i as $bits)
            }
        }
    )*};
}
reals! {
    f32: u32, i32, 0x7f80_0000, |x| x as f64, |v| v as f32;
    f64: u64, i64, 0x7ff0_0000_0000_0000, |x| x, |v| v;
    half::f16: u16, i16, 0x7c00, |x| f16_to_f32(x.to_bits()) as f64,
        |v| <half::f16 as Cast>::from_num(Num::Float(v));
    half::bf16: u16, i16, 0x7f80, |x| f32::from_bits((x.to_bits() as u32) << 16) as f64,
        |v| <half::bf16 as Cast>::from_num(Num::Float(v));
}

const SUM: u8 = 0;
const MEAN: u8 = 1;
const L1: u8 = 2;
const L2: u8 = 3;
const PROD: u8 = 4;

/// Float Sum, Mean, L1, L2 and Prod (`K`), in f64.
struct Sums<T, const K: u8>(PhantomData<T>);

impl<T: Real, const K: u8> Fold for Sums<T, K> {
    type T = T;
    type L = f64;
    type S = f64;
    // −0 is the identity of addition (−0 + −0 = −0).
    const ZERO: f64 = if K == PROD { 1.0 } else { -0.0 };
    #[inline(always)]
    fn add(l: f64, x: T) -> f64 {
        let v = x.wide();
        match K {
            L1 => l + v.abs(),
            L2 => l + v * v,
            PROD => l * v,
            _ => l + v,
        }
    }
    #[inline(always)]
    fn merge(a: f64, b: f64) -> f64 {
        if K == PROD { a * b } else { a + b }
    }
    #[inline(always)]
    fn leaf(l: f64) -> f64 {
        l
    }
    #[inline(always)]
    fn join(a: f64, b: f64) -> f64 {
        Self::merge(a, b)
    }
    #[inline(always)]
    fn finish(s: f64, n: usize) -> T {
        let v = match (K, n) {
            (MEAN, 0) => f64::NAN,
            (MEAN, _) => s / n as f64,
            (PROD, _) => s,
            (_, 0) => 0.0,
            (L2, _) => s.sqrt(),
            _ => s,
        };
        if v.is_nan() { T::NAN } else { T::narrow(v) }
    }
}

/// Float Max (`MAX`) and Min, on total-order keys with NaN mapped to the extreme key.
struct Extreme<T, const MAX: bool>(PhantomData<T>);

impl<T: Real, const MAX: bool> Extreme<T, MAX> {
    const NAN_KEY: T::Key = if MAX {
        <T::Key as Key>::MAX
    } else {
        <T::Key as Key>::MIN
    };
}

impl<T: Real, const MAX: bool> Fold for Extreme<T, MAX> {
    type T = T;
    type L = T::Key;
    type S = T::Key;
    const ZERO: T::Key = if MAX {
        <T::Key as Key>::MIN
    } else {
        <T::Key as Key>::MAX
    };
    #[inline(always)]
    fn add(l: T::Key, x: T) -> T::Key {
        Self::merge(l, x.key(Self::NAN_KEY))
    }
    #[inline(always)]
    fn merge(a: T::Key, b: T::Key) -> T::Key {
        if MAX { a.max(b) } else { a.min(b) }
    }
    #[inline(always)]
    fn leaf(l: T::Key) -> T::Key {
        l
    }
    #[inline(always)]
    fn join(a: T::Key, b: T::Key) -> T::Key {
        Self::merge(a, b)
    }
    #[inline(always)]
    fn finish(s: T::Key, _n: usize) -> T {
        if s == Self::NAN_KEY {
            T::NAN
        } else {
            T::of_key(s)
        }
    }
}

/// |x|, wrapping (for the minimum signed value); the identity for unsigned types.
#[inline(always)]
fn abs<T: Int>(x: T) -> T {
    if x.is_negative() {
        T::ZERO.wrapping_sub(x)
    } else {
        x
    }
}

/// Integer Sum, L1 and Prod (`K`), wrapping in the type.
struct Wrapping<T, const K: u8>(PhantomData<T>);

impl<T: Int, const K: u8> Fold for Wrapping<T, K> {
    type T = T;
    type L = T;
    type S = T;
    const ZERO: T = if K == PROD { T::ONE } else { T::ZERO };
    #[inline(always)]
    fn add(l: T, x: T) -> T {
        match K {
            L1 => l.wrapping_add(abs(x)),
            PROD => l.wrapping_mul(x),
            _ => l.wrapping_add(x),
        }
    }
    #[inline(always)]
    fn merge(a: T, b: T) -> T {
        if K == PROD {
            a.wrapping_mul(b)
        } else {
            a.wrapping_add(b)
        }
    }
    #[inline(always)]
    fn leaf(l: T) -> T {
        l
    }
    #[inline(always)]
    fn join(a: T, b: T) -> T {
        Self::merge(a, b)
    }
    #[inline(always)]
    fn finish(s: T, _n: usize) -> T {
        s
    }
}

/// Integer Max (`MAX`) and Min.
struct IntExtreme<T, const MAX: bool>(PhantomData<T>);

impl<T: Int + Send + Sync, const MAX: bool> Fold for IntExtreme<T, MAX> {
    type T = T;
    type L = T;
    type S = T;
    const ZERO: T = if MAX { T::MIN } else { T::MAX };
    #[inline(always)]
    fn add(l: T, x: T) -> T {
        Self::merge(l, x)
    }
    #[inline(always)]
    fn merge(a: T, b: T) -> T {
        if (b > a) == MAX { b } else { a }
    }
    #[inline(always)]
    fn leaf(l: T) -> T {
        l
    }
    #[inline(always)]
    fn join(a: T, b: T) -> T {
        Self::merge(a, b)
    }
    #[inline(always)]
    fn finish(s: T, _n: usize) -> T {
        s
    }
}

/// An integer type's exact sums: accumulators wide enough for a leaf's terms (i64 for types of
/// up to 32 bits: a leaf's lane holds 16 terms), i128 for the tree.
trait MeanInt: Int + Send + Sync {
    type W: Copy + Send + Sync + std::ops::Add<Output = Self::W> + Into<i128>;
    const W0: Self::W;
    fn widen(self) -> Self::W;
}

macro_rules! mean_ints {
    ($($t:ty: $w:ty;)*) => {$(
        impl MeanInt for $t {
            type W = $w;
            const W0: $w = 0;
            #[inline(always)]
            fn widen(self) -> $w {
                self as $w
            }
        }
    )*};
}
mean_ints! {
    i8: i64; i16: i64; i32: i64; u8: i64; u16: i64; u32: i64; i64: i128; u64: i128;
}

/// Integer Mean: the exact sum (i128), divided truncating toward zero.
struct IntMean<T>(PhantomData<T>);

impl<T: MeanInt> Fold for IntMean<T> {
    type T = T;
    type L = T::W;
    type S = i128;
    const ZERO: T::W = T::W0;
    #[inline(always)]
    fn add(l: T::W, x: T) -> T::W {
        l + x.widen()
    }
    #[inline(always)]
    fn merge(a: T::W, b: T::W) -> T::W {
        a + b
    }
    #[inline(always)]
    fn leaf(l: T::W) -> i128 {
        l.into()
    }
    #[inline(always)]
    fn join(a: i128, b: i128) -> i128 {
        a + b
    }
    #[inline(always)]
    fn finish(s: i128, n: usize) -> T {
        // `n > 0` (checked before); the mean lies in the type's range.
        T::from_num(Num::Int(s / n.max(1) as i128))
    }
}

/// LogicalAnd (`ALL`) and LogicalOr.
struct Logical<const ALL: bool>;

impl<const ALL: bool> Fold for Logical<ALL> {
    type T = bool;
    type L = bool;
    type S = bool;
    const ZERO: bool = ALL;
    #[inline(always)]
    fn add(l: bool, x: bool) -> bool {
        Self::merge(l, x)
    }
    #[inline(always)]
    fn merge(a: bool, b: bool) -> bool {
        if ALL { a & b } else { a | b }
    }
    #[inline(always)]
    fn leaf(l: bool) -> bool {
        l
    }
    #[inline(always)]
    fn join(a: bool, b: bool) -> bool {
        Self::merge(a, b)
    }
    #[inline(always)]
    fn finish(s: bool, _n: usize) -> bool {
        s
    }
}

// ---------------------------------------------------------------------------------------------
// The fixed summation order, and the loops.

/// One leaf's sum of `xs` (at most [`LEAF`] terms): term `i` into accumulator `i mod LANES`,
/// each in order, then the accumulators folded by halves.
#[inline(always)]
fn leaf_of<F: Fold>(xs: &[F::T]) -> F::S {
    let mut acc = [F::ZERO; LANES];
    let mut chunks = xs.chunks_exact(LANES);
    for c in &mut chunks {
        // As one array (not lane by lane through iterators), so that the compiler keeps the
        // accumulators in one wide register where the unit has it.
        let c: &[F::T; LANES] = c.try_into().expect("chunks of LANES");
        acc = std::array::from_fn(|j| F::add(acc[j], c[j]));
    }
    for (a, &x) in acc.iter_mut().zip(chunks.remainder()) {
        *a = F::add(*a, x);
    }
    let mut half = LANES / 2;
    while half > 0 {
        for k in 0..half {
            acc[k] = F::merge(acc[k], acc[k + half]);
        }
        half /= 2;
    }
    F::leaf(acc[0])
}

/// The largest power of two below `m` (`m ≥ 2`).
fn below_pow2(m: usize) -> usize {
    1 << (usize::BITS - 1 - (m - 1).leading_zeros())
}

/// The sum of leaves `first..first + m` (`m ≥ 1`) by the tree `T(m) = T(h) + T(m − h)`,
/// computed as a binary counter does: two sums of the same power-of-two number of leaves are
/// joined as soon as both exist, and what is left at the end is joined from the latest to the
/// earliest (the same tree: its left parts are the perfect trees of the powers of two in `m`,
/// largest first).
#[inline(always)]
fn seq_tree<S: Copy>(
    first: usize,
    m: usize,
    fill: S,
    mut leaf: impl FnMut(usize) -> S,
    join: impl Fn(S, S) -> S,
) -> S {
    if m == 1 {
        return leaf(first);
    }
    // At most one pending sum per bit of `m`, plus the one being added.
    let mut stack = [fill; usize::BITS as usize + 1];
    let mut levels = [0u32; usize::BITS as usize + 1];
    let mut top = 0;
    for k in first..first + m {
        let mut s = leaf(k);
        let mut level = 0;
        while top > 0 && levels[top - 1] == level {
            top -= 1;
            s = join(stack[top], s);
            level += 1;
        }
        stack[top] = s;
        levels[top] = level;
        top += 1;
    }
    let mut s = stack[top - 1];
    for k in (0..top - 1).rev() {
        s = join(stack[k], s);
    }
    s
}

/// Whether leaves of `per_leaf` elements each, `m` of them, are worth splitting between
/// threads.
fn split(m: usize, per_leaf: usize) -> bool {
    m >= 2 && m.saturating_mul(per_leaf) > GRAIN && rayon::current_num_threads() > 1
}

/// [`seq_tree`], with its subtrees computed in parallel while they read more than [`GRAIN`]
/// elements (the same tree, so the same bits). `start(first)` gives the function that sums
/// leaves `first`, `first + 1`, … in turn.
fn tree<S: Copy + Send + Sync, C: FnMut(usize) -> S>(
    first: usize,
    m: usize,
    per_leaf: usize,
    fill: S,
    start: &(impl Fn(usize) -> C + Sync),
    join: &(impl Fn(S, S) -> S + Sync),
) -> S {
    if split(m, per_leaf) {
        let h = below_pow2(m);
        let (a, b) = rayon::join(
            || tree(first, h, per_leaf, fill, start, join),
            || tree(first + h, m - h, per_leaf, fill, start, join),
        );
        return join(a, b);
    }
    vectorised(
        #[inline(always)]
        || seq_tree(first, m, fill, start(first), join),
    )
}

/// The data as [`Walk::Rows`] reads it.
struct RowSrc<'a, T> {
    x: &'a [T],
    n: usize,
    seg: usize,
    red: &'a [(usize, usize)],
}

impl<T: Element> RowSrc<'_, T> {
    /// The function that sums leaf `first`, then `first + 1`, … (called in that order) of the
    /// output whose data starts at `base`.
    #[inline(always)]
    fn leaves<F: Fold<T = T>>(&self, base: usize, first: usize) -> impl FnMut(usize) -> F::S {
        // Where the next leaf starts: segment `q`, element `r`.
        let at = first * LEAF;
        let (mut q, mut r) = if self.red.is_empty() {
            (0, at)
        } else {
            (at / self.seg, at % self.seg)
        };
        #[inline(always)]
        move |k| {
            let len = LEAF.min(self.n - k * LEAF);
            let s = if r + len <= self.seg {
                let o = base + offset(q, self.red) + r;
                leaf_of::<F>(&self.x[o..o + len])
            } else {
                // The leaf spans segments: gathered.
                let mut buf = [T::default(); LEAF];
                let (mut i, mut q, mut r) = (0, q, r);
                while i < len {
                    let take = (self.seg - r).min(len - i);
                    let o = base + offset(q, self.red) + r;
                    buf[i..i + take].copy_from_slice(&self.x[o..o + take]);
                    i += take;
                    q += 1;
                    r = 0;
                }
                leaf_of::<F>(&buf[..len])
            };
            r += len;
            if r >= self.seg {
                // `seg ≥ 1`: the outputs have terms.
                q += r / self.seg;
                r %= self.seg;
            }
            s
        }
    }
}

/// Outputs `o0..o0 + out.len()` of a [`Walk::Rows`] plan.
fn rows_range<F: Fold>(
    src: &RowSrc<'_, F::T>,
    kept: &[(usize, usize)],
    o0: usize,
    out: &mut [F::T],
) {
    let n = src.n;
    let m = n.div_ceil(LEAF);
    let fill = F::leaf(F::ZERO);
    if split(m, LEAF) {
        for (i, y) in out.iter_mut().enumerate() {
            let base = offset(o0 + i, kept);
            let s = tree(
                0,
                m,
                LEAF,
                fill,
                &|first| src.leaves::<F>(base, first),
                &|a, b| F::join(a, b),
            );
            *y = F::finish(s, n);
        }
        return;
    }
    if m == 1 && n <= src.seg {
        // One leaf per output, contiguous (a reduction over a short last axis).
        return vectorised(
            #[inline(always)]
            || {
                for (i, y) in out.iter_mut().enumerate() {
                    let base = offset(o0 + i, kept);
                    *y = F::finish(leaf_of::<F>(&src.x[base..base + n]), n);
                }
            },
        );
    }
    vectorised(
        #[inline(always)]
        || {
            for (i, y) in out.iter_mut().enumerate() {
                let base = offset(o0 + i, kept);
                let s = seq_tree(
                    0,
                    m,
                    fill,
                    src.leaves::<F>(base, 0),
                    #[inline(always)]
                    |a, b| F::join(a, b),
                );
                *y = F::finish(s, n);
            }
        },
    )
}

/// The data as [`Walk::Cols`] reads it.
struct ColSrc<'a, T> {
    x: &'a [T],
    n: usize,
    red: &'a [(usize, usize)],
}

/// Rows ahead whose data a column leaf prefetches.
const PF: usize = 8;

/// Leaf `k` of the `w` columns starting at `base`: row `j` of the leaf is added elementwise
/// into accumulator row `j mod LANES` of `acc` (`LANES × w`; the first row of each
/// accumulator row is added to `ZERO` as it is stored), and the accumulator rows are folded
/// column by column in the order [`leaf_of`] folds (`((a0 + a4) + (a2 + a6)) + ((a1 + a5) +
/// (a3 + a7))`) into `dst` (`w`).
#[inline(always)]
fn col_leaf<F: Fold>(
    src: &ColSrc<'_, F::T>,
    base: usize,
    w: usize,
    k: usize,
    acc: &mut [F::L],
    dst: &mut [F::S],
) {
    let at = k * LEAF;
    let len = LEAF.min(src.n - at);
    let acc = &mut acc[..LANES * w];
    if len < LANES {
        acc[len * w..].fill(F::ZERO);
    }
    for j in 0..len {
        let o = base + offset(at + j, src.red);
        if at + j + PF < src.n {
            // The rows are far apart: the hardware prefetchers do not see them coming.
            let p = base + offset(at + j + PF, src.red);
            super::kernel::simd::prefetch(&src.x[p..p + w]);
        }
        let row = &src.x[o..o + w];
        let lane = &mut acc[(j % LANES) * w..][..w];
        if j < LANES {
            for (a, &x) in lane.iter_mut().zip(row) {
                *a = F::add(F::ZERO, x);
            }
        } else {
            for (a, &x) in lane.iter_mut().zip(row) {
                *a = F::add(*a, x);
            }
        }
    }
    const { assert!(LANES == 8) };
    let (a, rest) = acc.split_at(w);
    let (b, rest) = rest.split_at(w);
    let (c, rest) = rest.split_at(w);
    let (d, rest) = rest.split_at(w);
    let (e, rest) = rest.split_at(w);
    let (f, rest) = rest.split_at(w);
    let (g, h) = rest.split_at(w);
    for q in 0..w {
        let m = |x: F::L, y: F::L| F::merge(x, y);
        let s = m(
            m(m(a[q], e[q]), m(c[q], g[q])),
            m(m(b[q], f[q]), m(d[q], h[q])),
        );
        dst[q] = F::leaf(s);
    }
}

/// Slots of `w` sums [`col_seq_tree`] needs for `m` leaves.
fn col_slots(m: usize) -> usize {
    (usize::BITS - m.leading_zeros()) as usize + 1
}

/// [`seq_tree`] for `w` columns: leaves `first..first + m` of the columns at `base`, into
/// `dst`; `acc` holds `LANES × w` accumulators and `stack` [`col_slots`]`(m) × w` sums.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn col_seq_tree<F: Fold>(
    src: &ColSrc<'_, F::T>,
    base: usize,
    w: usize,
    (first, m): (usize, usize),
    acc: &mut [F::L],
    stack: &mut [F::S],
    levels: &mut [u32],
    dst: &mut [F::S],
) {
    let mut top = 0;
    for k in first..first + m {
        col_leaf::<F>(src, base, w, k, acc, &mut stack[top * w..]);
        let mut cur = top;
        let mut level = 0;
        while cur > 0 && levels[cur - 1] == level {
            let (lo, hi) = stack.split_at_mut(cur * w);
            for (a, &b) in lo[(cur - 1) * w..].iter_mut().zip(&hi[..w]) {
                *a = F::join(*a, b);
            }
            cur -= 1;
            level += 1;
        }
        levels[cur] = level;
        top = cur + 1;
    }
    for k in (0..top - 1).rev() {
        let (lo, hi) = stack.split_at_mut((k + 1) * w);
        for (a, &b) in lo[k * w..].iter_mut().zip(&hi[..w]) {
            *a = F::join(*a, b);
        }
    }
    dst[..w].copy_from_slice(&stack[..w]);
}

/// Scratch space of a column task: accumulators, pending sums, their levels, the sums.
struct ColScratch<F: Fold> {
    acc: Vec<F::L>,
    stack: Vec<F::S>,
    levels: Vec<u32>,
    sums: Vec<F::S>,
}

impl<F: Fold> ColScratch<F> {
    fn new(w: usize, m: usize) -> Self {
        let fill = F::leaf(F::ZERO);
        ColScratch {
            acc: vec![F::ZERO; LANES * w],
            stack: vec![fill; col_slots(m) * w],
            levels: vec![0; col_slots(m)],
            sums: vec![fill; w],
        }
    }
}

/// The sums of leaves `first..first + m` of the `w` columns at `base`, into `dst`, with
/// subtrees computed in parallel while they read more than [`GRAIN`] elements.
fn col_tree<F: Fold>(
    src: &ColSrc<'_, F::T>,
    base: usize,
    w: usize,
    (first, m): (usize, usize),
    dst: &mut [F::S],
) {
    if split(m, LEAF * w) {
        let h = below_pow2(m);
        let mut right = vec![F::leaf(F::ZERO); w];
        rayon::join(
            || col_tree::<F>(src, base, w, (first, h), dst),
            || col_tree::<F>(src, base, w, (first + h, m - h), &mut right),
        );
        for (a, &b) in dst[..w].iter_mut().zip(&right) {
            *a = F::join(*a, b);
        }
        return;
    }
    let mut s = ColScratch::<F>::new(w, m);
    vectorised(
        #[inline(always)]
        || {
            col_seq_tree::<F>(
                src,
                base,
                w,
                (first, m),
                &mut s.acc,
                &mut s.stack,
                &mut s.levels,
                dst,
            )
        },
    )
}

/// Outputs `o0..o0 + out.len()` of a [`Walk::Cols`] plan, up to [`CW`] columns at a time
/// (the strips only group columns: each column's sum is the same whatever its strip).
fn cols_range<F: Fold>(
    src: &ColSrc<'_, F::T>,
    (inner, kept): (usize, &[(usize, usize)]),
    o0: usize,
    out: &mut [F::T],
) {
    let n = src.n;
    let m = n.div_ceil(LEAF);
    let width = CW.min(inner).min(out.len());
    let end = o0 + out.len();
    if split(m, LEAF * width) {
        let mut sums = vec![F::leaf(F::ZERO); width];
        let mut o = o0;
        while o < end {
            let (g, c) = (o / inner, o % inner);
            let w = width.min(inner - c).min(end - o);
            col_tree::<F>(src, offset(g, kept) + c, w, (0, m), &mut sums);
            for (y, &s) in out[o - o0..][..w].iter_mut().zip(&sums) {
                *y = F::finish(s, n);
            }
            o += w;
        }
        return;
    }
    let mut s = ColScratch::<F>::new(width, m);
    vectorised(
        #[inline(always)]
        || {
            let mut o = o0;
            while o < end {
                let (g, c) = (o / inner, o % inner);
                let w = width.min(inner - c).min(end - o);
                col_seq_tree::<F>(
                    src,
                    offset(g, kept) + c,
                    w,
                    (0, m),
                    &mut s.acc,
                    &mut s.stack,
                    &mut s.levels,
                    &mut s.sums,
                );
                for (y, &v) in out[o - o0..][..w].iter_mut().zip(&s.sums) {
                    *y = F::finish(v, n);
                }
                o += w;
            }
        },
    )
}

/// Reduces `x` as `plan` says into `out` (`plan.outs` elements), in parallel over contiguous
/// parts of the outputs when there is enough work.
fn run<F: Fold>(x: &[F::T], plan: &Plan, out: &mut [F::T]) {
    let n = plan.n;
    if n == 0 {
        out.fill(F::finish(F::leaf(F::ZERO), 0));
        return;
    }
    let range = |o0: usize, o: &mut [F::T]| match plan.walk {
        Walk::Rows { seg } => {
            let src = RowSrc {
                x,
                n,
                seg,
                red: &plan.red,
            };
            rows_range::<F>(&src, &plan.kept, o0, o)
        }
        Walk::Cols { inner } => {
            let src = ColSrc {
                x,
                n,
                red: &plan.red,
            };
            cols_range::<F>(&src, (inner, &plan.kept), o0, o)
        }
    };
    let total = plan.outs.saturating_mul(n);
    let threads = rayon::current_num_threads();
    if total < PARALLEL_MIN || threads <= 1 || plan.outs == 1 {
        range(0, out);
        return;
    }
    let parts = (threads * 4).min(total / (PARALLEL_MIN / 4)).max(1);
    let mut chunk = plan.outs.div_ceil(parts);
    if let Walk::Cols { inner } = plan.walk {
        // Whole strips where the parts allow.
        chunk = chunk.next_multiple_of(CW.min(inner));
    }
    out.par_chunks_mut(chunk)
        .enumerate()
        .for_each(|(i, o)| range(i * chunk, o));
}

/// An element type reductions compute on.
trait Reducible: Element {
    /// Reduces `x` as `plan` says into `out` (`plan.outs` elements); a kind the type does not
    /// have, or an output of no terms that has no value, is an error.
    fn run(kind: Kind, x: &[Self], plan: &Plan, out: &mut [Self]) -> Result<(), String>;

    /// The reduction of one run of terms.
    #[cfg(test)]
    fn reduce(kind: Kind, run: &[Self]) -> Result<Self, String> {
        let plan = Plan::new(&[run.len()], &[true]).ok_or("overflow")?;
        let mut out = [Self::default()];
        Self::run(kind, run, &plan, &mut out)?;
        Ok(out[0])
    }
}

fn no_value(kind: Kind) -> String {
    format!("{kind:?} of no elements has no value (an axis reduced has size 0)")
}

macro_rules! int_reducible {
    ($($t:ty)*) => {$(
        impl Reducible for $t {
            fn run(kind: Kind, x: &[Self], plan: &Plan, out: &mut [Self]) -> Result<(), String> {
                if plan.n == 0 && plan.outs > 0 && kind == Kind::Mean {
                    return Err(no_value(kind));
                }
                // Max and Min of nothing: their identities, the type's lowest and highest.
                if plan.n == 0 && matches!(kind, Kind::Max | Kind::Min) {
                    out.fill(if kind == Kind::Max { <$t>::MIN } else { <$t>::MAX });
                    return Ok(());
                }
                match kind {
                    Kind::Sum => run::<Wrapping<$t, SUM>>(x, plan, out),
                    Kind::L1 => run::<Wrapping<$t, L1>>(x, plan, out),
                    Kind::Prod => run::<Wrapping<$t, PROD>>(x, plan, out),
                    Kind::Mean => run::<IntMean<$t>>(x, plan, out),
                    Kind::Max => run::<IntExtreme<$t, true>>(x, plan, out),
                    Kind::Min => run::<IntExtreme<$t, false>>(x, plan, out),
                    Kind::L2 | Kind::All | Kind::Any => return Err(format!("{kind:?} of integers")),
                }
                Ok(())
            }
        }
    )*};
}
int_reducible!(i8 i16 i32 i64 u8 u16 u32 u64);

macro_rules! float_reducible {
    ($($t:ty)*) => {$(
        impl Reducible for $t {
            fn run(kind: Kind, x: &[Self], plan: &Plan, out: &mut [Self]) -> Result<(), String> {
                // Max and Min of nothing: their identities, −∞ and +∞.
                if plan.n == 0 && matches!(kind, Kind::Max | Kind::Min) {
                    let v = if kind == Kind::Max { f64::NEG_INFINITY } else { f64::INFINITY };
                    out.fill(<$t>::from_num(Num::Float(v)));
                    return Ok(());
                }
                match kind {
                    Kind::Sum => run::<Sums<$t, SUM>>(x, plan, out),
                    Kind::Mean => run::<Sums<$t, MEAN>>(x, plan, out),
                    Kind::L1 => run::<Sums<$t, L1>>(x, plan, out),
                    Kind::L2 => run::<Sums<$t, L2>>(x, plan, out),
                    Kind::Prod => run::<Sums<$t, PROD>>(x, plan, out),
                    Kind::Max => run::<Extreme<$t, true>>(x, plan, out),
                    Kind::Min => run::<Extreme<$t, false>>(x, plan, out),
                    Kind::All | Kind::Any => return Err(format!("{kind:?} of floats")),
                }
                Ok(())
            }
        }
    )*};
}
float_reducible!(f32 f64 half::f16 half::bf16);

impl Reducible for bool {
    fn run(kind: Kind, x: &[Self], plan: &Plan, out: &mut [Self]) -> Result<(), String> {
        match kind {
            Kind::All => run::<Logical<true>>(x, plan, out),
            Kind::Any => run::<Logical<false>>(x, plan, out),
            _ => return Err(format!("{kind:?} of booleans")),
        }
        Ok(())
    }
}

macro_rules! rows {
    ($($const:ident: $name:literal-$version:literal, $kind:ident, $types:expr;)*) => {
        $(
            pub const $const: OpDef = OpDef {
                name: $name,
                version: $version,
                inputs: Arity::exactly(2),
                outputs: Arity::exactly(1),
                parse: |a: &Attrs| -> Result<Box<dyn Op>, Vec<AttrError>> {
                    let keep_dims = a.bool_or(&["keep_dims"], false).map_err(|e| vec![e])?;
                    Ok(Box::new(Reduce {
                        def: &$const,
                        kind: Kind::$kind,
                        types: $types,
                        keep_dims,
                    }))
                },
            };
        )*
        /// Every reduction's definition, for the registry.
        pub const FAMILY: &[&OpDef] = &[$(&$const),*];
    };
}

rows! {
    REDUCE_SUM: "ReduceSum"-1, Sum, TypeSet::NUMERIC;
    REDUCE_PROD: "ReduceProd"-1, Prod, TypeSet::NUMERIC;
    REDUCE_MEAN: "ReduceMean"-1, Mean, TypeSet::NUMERIC;
    REDUCE_MAX: "ReduceMax"-1, Max, TypeSet::NUMERIC;
    REDUCE_MIN: "ReduceMin"-1, Min, TypeSet::NUMERIC;
    REDUCE_L1: "ReduceL1"-4, L1, TypeSet::NUMERIC;
    REDUCE_L2: "ReduceL2"-4, L2, TypeSet::FLOAT;
    REDUCE_LOGICAL_AND: "ReduceLogicalAnd"-1, All, TypeSet::BOOLEAN;
    REDUCE_LOGICAL_OR: "ReduceLogicalOr"-1, Any, TypeSet::BOOLEAN;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::context::{eval_for_test, inferred_shape_for_test, tensor_for_test};
    use half::{bf16, f16};

    /// The float reduction of `n` terms `x(i)`, computed on f64 data.
    fn float_reduce(kind: Kind, n: usize, x: impl Fn(usize) -> f64) -> Result<f64, String> {
        let v: Vec<f64> = (0..n).map(x).collect();
        f64::reduce(kind, &v)
    }

    const NUMERIC_KINDS: [Kind; 7] = [
        Kind::Sum,
        Kind::Prod,
        Kind::Mean,
        Kind::Max,
        Kind::Min,
        Kind::L1,
        Kind::L2,
    ];

    fn op(kind: Kind, keep_dims: bool) -> Reduce {
        let (def, types) = match kind {
            Kind::Sum => (&REDUCE_SUM, TypeSet::NUMERIC),
            Kind::Prod => (&REDUCE_PROD, TypeSet::NUMERIC),
            Kind::Mean => (&REDUCE_MEAN, TypeSet::NUMERIC),
            Kind::Max => (&REDUCE_MAX, TypeSet::NUMERIC),
            Kind::Min => (&REDUCE_MIN, TypeSet::NUMERIC),
            Kind::L1 => (&REDUCE_L1, TypeSet::NUMERIC),
            Kind::L2 => (&REDUCE_L2, TypeSet::FLOAT),
            Kind::All => (&REDUCE_LOGICAL_AND, TypeSet::BOOLEAN),
            Kind::Any => (&REDUCE_LOGICAL_OR, TypeSet::BOOLEAN),
        };
        Reduce {
            def,
            kind,
            types,
            keep_dims,
        }
    }

    fn eval<T: Element>(
        kind: Kind,
        keep_dims: bool,
        shape: &[usize],
        data: Vec<T>,
        axes: &[i64],
        limit: u64,
    ) -> Result<Tensor, EvalError> {
        let x = tensor_for_test(shape, data);
        let a = tensor_for_test(&[axes.len()], axes.to_vec());
        eval_for_test(&op(kind, keep_dims), &[x, a], limit)
    }

    fn values<T: Element>(t: &Tensor) -> Vec<T> {
        t.view::<T>()
            .expect("the output's type")
            .iter()
            .copied()
            .collect()
    }

    /// The flat indices of each output's terms, outputs and terms in row-major order: the
    /// reduction written as the plainest loop.
    fn naive_terms(shape: &[usize], axes: &[usize]) -> Vec<Vec<usize>> {
        let len: usize = shape.iter().product();
        let outs: usize = (0..shape.len())
            .filter(|k| !axes.contains(k))
            .map(|k| shape[k])
            .product();
        let mut terms = vec![Vec::new(); outs];
        for flat in 0..len {
            let (mut rest, mut o, mut scale) = (flat, 0, 1);
            for k in (0..shape.len()).rev() {
                let c = rest % shape[k];
                rest /= shape[k];
                if !axes.contains(&k) {
                    o += c * scale;
                    scale *= shape[k];
                }
            }
            terms[o].push(flat);
        }
        terms
    }

    /// Shapes and axes that take every walk: one segment, segments gathered into leaves,
    /// columns with one and several reduced runs, whole reductions, axes of size 1, several
    /// leaves (powers of two and not).
    const CASES: &[(&[usize], &[i64])] = &[
        (&[3, 5, 7], &[2]),
        (&[3, 5, 7], &[1]),
        (&[3, 5, 7], &[0]),
        (&[3, 5, 7], &[0, 2]),
        (&[3, 5, 7], &[0, 1]),
        (&[3, 5, 7], &[1, 2]),
        (&[3, 5, 7], &[0, 1, 2]),
        (&[3, 5, 7], &[-1, 0]),
        (&[2, 1, 300, 3], &[1]),
        (&[2, 1, 300, 3], &[2]),
        (&[2, 1, 300, 3], &[0, 3]),
        (&[2, 1, 300, 3], &[2, 3]),
        (&[2, 1, 300, 3], &[0, 2]),
        (&[2, 1, 300, 3], &[0, 1, 2, 3]),
        (&[3, 4, 2, 50], &[0, 3]),
        (&[2, 3, 2, 3, 2], &[0, 2, 4]),
        (&[2, 3, 2, 3, 2], &[1, 3]),
        (&[600], &[0]),
        (&[1, 1], &[0]),
        (&[257, 2], &[0]),
        (&[2, 513], &[1]),
    ];

    /// For every case and kind: the op's output equals, bit for bit, the reduction of each
    /// output's terms gathered as one row (the order is the layout's), and `check(kind,
    /// terms, got)` holds (an independent reference).
    fn check_walks<T: Reducible + Cast>(
        kinds: &[Kind],
        make: impl Fn(usize) -> T,
        check: impl Fn(Kind, &[T], T),
    ) {
        for &(shape, axes) in CASES {
            let len: usize = shape.iter().product();
            let data: Vec<T> = (0..len).map(&make).collect();
            let norm = axes_of(axes, shape.len()).unwrap();
            let terms = naive_terms(shape, &norm);
            for &kind in kinds {
                let got = eval(kind, false, shape, data.clone(), axes, u64::MAX)
                    .unwrap_or_else(|e| panic!("{kind:?} {shape:?} {axes:?}: {e:?}"));
                let got = values::<T>(&got);
                assert_eq!(got.len(), terms.len());
                for (o, idx) in terms.iter().enumerate() {
                    let run: Vec<T> = idx.iter().map(|&i| data[i]).collect();
                    let row = T::reduce(kind, &run).unwrap();
                    assert!(
                        bits_eq(row, got[o]),
                        "{kind:?} {shape:?} {axes:?} output {o}: {:?} as a row, {:?} here",
                        row,
                        got[o]
                    );
                    check(kind, &run, got[o]);
                }
            }
        }
    }

    fn bits_eq<T: Element>(a: T, b: T) -> bool {
        let (mut x, mut y) = (Vec::new(), Vec::new());
        a.put_le(&mut x);
        b.put_le(&mut y);
        x == y
    }

    fn as_f64<T: Cast>(x: T) -> f64 {
        match x.to_num() {
            Num::Float(f) => f,
            Num::Int(i) => i as f64,
        }
    }

    fn as_i128<T: Cast>(x: T) -> i128 {
        match x.to_num() {
            Num::Int(i) => i,
            Num::Float(_) => unreachable!(),
        }
    }

    /// Integers: exact, by an independent computation in i128.
    fn int_check<T: Cast>(kind: Kind, run: &[T], got: T) {
        let v: Vec<i128> = run.iter().map(|&x| as_i128(x)).collect();
        let want = match kind {
            Kind::Sum => v.iter().sum::<i128>(),
            Kind::L1 => v.iter().map(|x| x.abs()).sum::<i128>(),
            Kind::Prod => v.iter().fold(1i128, |a, &b| a.wrapping_mul(b)),
            Kind::Mean => v.iter().sum::<i128>() / v.len() as i128,
            Kind::Max => *v.iter().max().unwrap(),
            Kind::Min => *v.iter().min().unwrap(),
            _ => unreachable!(),
        };
        // Wrapped into the type as Convert wraps.
        let want = T::from_num(Num::Int(want));
        assert!(bits_eq(want, got), "{kind:?} of {v:?}: {got:?}");
    }

    /// Floats: Max and Min exact (NaN, ±0 rules), the sums close to a plain f64 loop.
    fn float_check<T: Cast>(kind: Kind, run: &[T], got: T, eps: f64) {
        let v: Vec<f64> = run.iter().map(|&x| as_f64(x)).collect();
        let g = as_f64(got);
        let abs: f64 = v.iter().map(|x| x.abs()).sum();
        let near = |want: f64, scale: f64| {
            assert!(
                (g - want).abs() <= eps * (want.abs() + scale),
                "{kind:?} of {v:?}: {g}, want {want}"
            )
        };
        match kind {
            Kind::Sum => near(v.iter().sum(), abs),
            Kind::L1 => near(abs, 0.0),
            Kind::Mean => near(v.iter().sum::<f64>() / v.len() as f64, abs / v.len() as f64),
            Kind::L2 => near(v.iter().map(|x| x * x).sum::<f64>().sqrt(), 0.0),
            Kind::Prod => {
                let want: f64 = v.iter().product();
                if want.is_finite() && T::from_num(Num::Float(want)).to_num_f64().is_finite() {
                    near(want, 0.0)
                }
            }
            Kind::Max | Kind::Min => {
                let max = kind == Kind::Max;
                let want = if v.iter().any(|x| x.is_nan()) {
                    f64::NAN
                } else {
                    v.iter().copied().fold(v[0], |a, b| {
                        if a == b {
                            if max == a.is_sign_negative() { b } else { a }
                        } else if (b > a) == max {
                            b
                        } else {
                            a
                        }
                    })
                };
                if want.is_nan() {
                    assert!(g.is_nan(), "{kind:?} of {v:?}: {g}");
                } else {
                    assert_eq!(g.to_bits(), want.to_bits(), "{kind:?} of {v:?}");
                }
            }
            _ => unreachable!(),
        }
    }

    trait F64Of {
        fn to_num_f64(self) -> f64;
    }
    impl<T: Cast> F64Of for T {
        fn to_num_f64(self) -> f64 {
            as_f64(self)
        }
    }

    /// Small exact values of mixed signs (multiples of 1/4, |x| ≤ 2.75), some zeros.
    fn small(i: usize) -> f64 {
        (((i * 37 + 11) % 23) as f64 - 11.0) / 4.0
    }

    #[test]
    fn walks_agree_floats() {
        let kinds = NUMERIC_KINDS;
        check_walks::<f32>(
            &kinds,
            |i| small(i) as f32,
            |k, r, g| float_check(k, r, g, 1e-6),
        );
        check_walks::<f64>(&kinds, small, |k, r, g| float_check(k, r, g, 1e-13));
        check_walks::<f16>(
            &kinds,
            |i| f16::from_f64(small(i)),
            |k, r, g| float_check(k, r, g, 1e-3),
        );
        check_walks::<bf16>(
            &kinds,
            |i| bf16::from_f64(small(i)),
            |k, r, g| float_check(k, r, g, 8e-3),
        );
        // NaNs, infinities and signed zeros among the terms.
        let special = [
            0.0,
            -0.0,
            1.5,
            f64::NAN,
            -2.0,
            f64::INFINITY,
            -0.0,
            f64::NEG_INFINITY,
        ];
        check_walks::<f32>(
            &[Kind::Max, Kind::Min],
            |i| special[(i * 7 + i / 5) % special.len()] as f32,
            |k, r, g| float_check(k, r, g, 0.0),
        );
        let zeros = [0.0, -0.0, -0.0, 1.0, -3.0];
        check_walks::<f64>(
            &[Kind::Max, Kind::Min],
            |i| zeros[(i * 3 + i / 7) % zeros.len()],
            |k, r, g| float_check(k, r, g, 0.0),
        );
    }

    #[test]
    fn walks_agree_integers() {
        let kinds = [
            Kind::Sum,
            Kind::Prod,
            Kind::Mean,
            Kind::Max,
            Kind::Min,
            Kind::L1,
        ];
        let g = |i: usize| ((i * 7919 + 13) % 251) as i128 - 125;
        check_walks::<i8>(&kinds, |i| g(i) as i8, int_check);
        check_walks::<u8>(&kinds, |i| g(i) as u8, int_check);
        check_walks::<i16>(&kinds, |i| (g(i) * 200) as i16, int_check);
        check_walks::<i32>(&kinds, |i| (g(i) * 17_000_000) as i32, int_check);
        check_walks::<u32>(&kinds, |i| (g(i) * 34_000_000) as u32, int_check);
        check_walks::<i64>(&kinds, |i| (g(i) << 55) as i64 + i as i64, int_check);
        check_walks::<u64>(&kinds, |i| (g(i) << 56) as u64 | i as u64, int_check);
    }

    #[test]
    fn walks_agree_booleans() {
        for (make, name) in [
            (&(|i: usize| i % 5 != 3) as &dyn Fn(usize) -> bool, "mixed"),
            (&|_| true, "true"),
            (&|_| false, "false"),
            (&|i| i == 599, "one true"),
        ] {
            check_walks::<bool>(&[Kind::All, Kind::Any], make, |k, r, g| {
                let want = match k {
                    Kind::All => r.iter().all(|&b| b),
                    _ => r.iter().any(|&b| b),
                };
                assert_eq!(g, want, "{k:?} {name}");
            });
        }
    }

    #[test]
    fn plans() {
        let p = |shape: &[usize], red: &[bool]| Plan::new(shape, red).unwrap();
        // [outer, n] → [outer].
        let a = p(&[1, 128, 768], &[false, false, true]);
        assert_eq!((a.n, a.outs, a.walk), (768, 128, Walk::Rows { seg: 768 }));
        assert_eq!(
            (a.kept.as_slice(), a.red.as_slice()),
            (&[(128, 768)][..], &[][..])
        );
        // [outer, n, inner] → [outer, inner].
        let b = p(&[2, 16, 8, 8], &[false, true, false, false]);
        assert_eq!((b.n, b.outs, b.walk), (16, 128, Walk::Cols { inner: 64 }));
        assert_eq!(
            (b.kept.as_slice(), b.red.as_slice()),
            (&[(2, 1024)][..], &[(16, 64)][..])
        );
        // Batch and spatial dims of NCHW: segments of H·W, one per image.
        let c = p(&[4, 3, 5, 5], &[true, false, true, true]);
        assert_eq!((c.n, c.outs, c.walk), (100, 3, Walk::Rows { seg: 25 }));
        assert_eq!(
            (c.kept.as_slice(), c.red.as_slice()),
            (&[(3, 25)][..], &[(4, 75)][..])
        );
        // Dims of 1 vanish.
        let d = p(&[1, 6, 1, 1], &[true, false, true, false]);
        assert_eq!((d.n, d.outs, d.walk), (1, 6, Walk::Cols { inner: 6 }));
        // Empty: no walk.
        assert_eq!(p(&[4, 0], &[false, true]).n, 0);
        assert_eq!(p(&[0, 4], &[false, true]).outs, 0);
        // Outputs beyond usize beside a dim of 0 that is reduced: the data is empty.
        assert!(Plan::new(&[0, usize::MAX, 4], &[true, false, false]).is_none());
        assert_eq!(p(&[0, usize::MAX, 4], &[false, true, true]).outs, 0);
    }

    /// A deterministic pseudo-random sequence (splitmix64).
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        }
        /// ±m·2^e, m in [1, 2), e in `lo..=hi`.
        fn mixed(&mut self, lo: i32, hi: i32) -> f64 {
            let r = self.next();
            let m = 1.0 + (r >> 11 & 0xfffff) as f64 / (1 << 20) as f64;
            let e = lo + (r % (hi - lo + 1) as u64) as i32;
            let s = if r >> 63 == 1 { -1.0 } else { 1.0 };
            s * m * 2f64.powi(e)
        }
    }

    /// The sum of `v` in double-double arithmetic (error about n·2^-106·Σ|v|).
    fn dd_sum(v: &[f64]) -> f64 {
        let (mut hi, mut lo) = (0.0f64, 0.0f64);
        for &x in v {
            let s = hi + x;
            let bb = s - hi;
            let e = (hi - (s - bb)) + (x - bb);
            hi = s;
            lo += e;
        }
        hi + lo
    }

    /// The documented bound on the f64 sum's error, relative to Σ|t|: d·2^-53, d = 18 +
    /// ⌈log2 ⌈n/128⌉⌉ (plus a little for second-order terms).
    fn bound(n: usize) -> f64 {
        let m = n.div_ceil(LEAF).max(1);
        let depth = 18 + (usize::BITS - (m - 1).leading_zeros()) as usize * (m > 1) as usize;
        depth as f64 * 2f64.powi(-53) * 1.000_001
    }

    /// Checks Sum, Mean, L1 and L2 of `v` (exact in `T`) against double-double references:
    /// within half an ulp of the result plus the documented bound; `ulp(r)` is the spacing of
    /// `T` above |r|.
    fn check_accuracy<T: Reducible + Cast>(v: &[f64], ulp: impl Fn(T) -> f64) {
        let n = v.len();
        let x: Vec<T> = v.iter().map(|&f| T::from_num(Num::Float(f))).collect();
        for (i, &f) in v.iter().enumerate() {
            assert_eq!(as_f64(x[i]), f, "test data must be exact");
        }
        let abs: Vec<f64> = v.iter().map(|f| f.abs()).collect();
        let sq: Vec<f64> = v.iter().map(|f| f * f).collect();
        let (sum, l1, ss) = (dd_sum(v), dd_sum(&abs), dd_sum(&sq));
        let u = 2f64.powi(-53);
        let cases = [
            (Kind::Sum, sum, bound(n) * l1),
            (
                Kind::Mean,
                sum / n as f64,
                bound(n) * l1 / n as f64 + u * (sum / n as f64).abs(),
            ),
            (Kind::L1, l1, bound(n) * l1),
            (
                Kind::L2,
                ss.sqrt(),
                bound(n) * ss / (2.0 * ss.sqrt()) + u * ss.sqrt(),
            ),
        ];
        for (kind, want, tol) in cases {
            let got = T::reduce(kind, &x).unwrap();
            let g = as_f64(got);
            if T::from_num(Num::Float(want)).to_num_f64().is_infinite() {
                assert_eq!(g, T::from_num(Num::Float(want)).to_num_f64(), "{kind:?}");
                continue;
            }
            let err = (g - want).abs();
            let allowed = 0.5 * ulp(got) + tol;
            assert!(
                err <= allowed,
                "{kind:?} of {n} {:?} terms: {g:e}, want {want:e}: error {err:e} > {allowed:e}",
                T::TYPE
            );
        }
    }

    const LENGTHS: [usize; 6] = [1, 7, 128, 1000, 4099, 100_000];

    #[test]
    fn accuracy_f32() {
        let ulp = |r: f32| {
            let a = r.abs();
            (f32::from_bits(a.to_bits() + 1) - a) as f64
        };
        for n in LENGTHS {
            let mut rng = Rng(n as u64);
            // Mixed signs and magnitudes (2^-30 … 2^30).
            let v: Vec<f64> = (0..n).map(|_| rng.mixed(-30, 30) as f32 as f64).collect();
            check_accuracy::<f32>(&v, ulp);
            // All positive, of similar size: naive f32 summation drifts here.
            let v: Vec<f64> = (0..n)
                .map(|_| rng.mixed(-1, 0).abs() as f32 as f64)
                .collect();
            check_accuracy::<f32>(&v, ulp);
            // Cancelling: each value followed by nearly its negation.
            let v: Vec<f64> = (0..n)
                .map(|i| {
                    let x = rng.mixed(0, 20) as f32 as f64;
                    if i % 2 == 1 {
                        -(x as f32 * 1.000_001) as f64
                    } else {
                        x
                    }
                })
                .collect();
            check_accuracy::<f32>(&v, ulp);
        }
        // Naive f32 summation of a million 0.1s is off by far more than the bound (958):
        // the test can tell.
        let v = vec![0.1f32; 1_000_000];
        let naive: f32 = v.iter().fold(0.0, |a, &b| a + b);
        let exact = dd_sum(&v.iter().map(|&x| x as f64).collect::<Vec<_>>());
        assert!((naive as f64 - exact).abs() > 100.0 * ulp(exact as f32));
        let got = f32::reduce(Kind::Sum, &v).unwrap();
        assert!((got as f64 - exact).abs() <= 0.5 * ulp(got));
    }

    #[test]
    fn accuracy_f16_bf16() {
        let ulp16 = |r: f16| {
            let a = r.to_bits() & 0x7fff;
            (f16::from_bits(a + 1).to_f64() - f16::from_bits(a).to_f64()).abs()
        };
        let ulpb = |r: bf16| {
            let a = r.to_bits() & 0x7fff;
            (bf16::from_bits(a + 1).to_f64() - bf16::from_bits(a).to_f64()).abs()
        };
        for n in LENGTHS {
            let mut rng = Rng(7 * n as u64);
            // f16: magnitudes 2^-14 … 2^2, exact in f16; L1 of the longest overflows (inf).
            let v: Vec<f64> = (0..n)
                .map(|_| f16::from_f64(rng.mixed(-14, 2)).to_f64())
                .collect();
            check_accuracy::<f16>(&v, ulp16);
            let v: Vec<f64> = (0..n)
                .map(|_| bf16::from_f64(rng.mixed(-40, 40)).to_f64())
                .collect();
            check_accuracy::<bf16>(&v, ulpb);
        }
    }

    #[test]
    fn accuracy_f64() {
        for n in LENGTHS {
            let mut rng = Rng(11 * n as u64);
            let v: Vec<f64> = (0..n).map(|_| rng.mixed(-40, 40)).collect();
            // The result is the f64 sum itself: no rounding to a narrower type.
            check_accuracy::<f64>(&v, |_| 0.0);
        }
    }

    #[test]
    fn f16_widening_is_exact() {
        for b in 0..=u16::MAX {
            let h = f16::from_bits(b);
            let w = f16_to_f32(b);
            if h.is_nan() {
                // The payload is kept (a signalling NaN stays one: no matter, NaN results
                // are canonical).
                assert!(w.is_nan(), "{b:#x}");
                assert_eq!(w.to_bits() >> 13 & 0x3ff, b as u32 & 0x3ff, "{b:#x}");
                assert_eq!(w.is_sign_negative(), h.is_sign_negative());
            } else {
                assert_eq!(w.to_bits(), h.to_f32().to_bits(), "{b:#x}");
            }
        }
    }

    #[test]
    fn keys_order_values() {
        let v = [
            f32::NEG_INFINITY,
            -3.5,
            -f32::MIN_POSITIVE,
            -1e-45,
            -0.0,
            0.0,
            1e-45,
            1.0,
            f32::MAX,
            f32::INFINITY,
        ];
        for w in v.windows(2) {
            assert!(w[0].key(0) < w[1].key(0), "{w:?}");
        }
        for &x in &v {
            assert_eq!(f32::of_key(x.key(0)).to_bits(), x.to_bits());
            assert_ne!(x.key(0), i32::MAX);
            assert_ne!(x.key(0), i32::MIN);
        }
        assert_eq!(f32::NAN.key(7), 7);
        assert_eq!((-f32::NAN).key(7), 7);
        assert_eq!(f16::NEG_INFINITY.key(0), i16::MIN + 0x3ff);
        assert_eq!(f16::of_key(f16::from_f32(-2.0).key(0)), f16::from_f32(-2.0));
        assert_eq!(bf16::of_key((-bf16::ZERO).key(0)).to_bits(), 0x8000);
    }

    #[test]
    fn zeros_nans_and_identities() {
        let neg = (-0f32).to_bits();
        // −0 + −0 = −0, in a row and in a column; no terms: +0.
        let y = eval(
            Kind::Sum,
            false,
            &[2, 300],
            vec![-0f32; 600],
            &[1],
            u64::MAX,
        )
        .unwrap();
        assert!(values::<f32>(&y).iter().all(|v| v.to_bits() == neg));
        let y = eval(
            Kind::Sum,
            false,
            &[300, 2],
            vec![-0f32; 600],
            &[0],
            u64::MAX,
        )
        .unwrap();
        assert!(values::<f32>(&y).iter().all(|v| v.to_bits() == neg));
        let y = eval(Kind::Sum, false, &[3, 0], Vec::<f32>::new(), &[1], u64::MAX).unwrap();
        assert_eq!(
            values::<f32>(&y)
                .iter()
                .map(|v| v.to_bits())
                .collect::<Vec<_>>(),
            [0; 3]
        );
        let y = eval(Kind::L2, false, &[3, 0], Vec::<f16>::new(), &[1], u64::MAX).unwrap();
        assert!(values::<f16>(&y).iter().all(|v| v.to_bits() == 0));
        let y = eval(
            Kind::Prod,
            false,
            &[2, 0],
            Vec::<bf16>::new(),
            &[1],
            u64::MAX,
        )
        .unwrap();
        assert!(values::<bf16>(&y).iter().all(|v| v.to_f32() == 1.0));
        let y = eval(
            Kind::Mean,
            false,
            &[2, 0],
            Vec::<f64>::new(),
            &[1],
            u64::MAX,
        )
        .unwrap();
        assert!(values::<f64>(&y).iter().all(|v| v.is_nan()));
        let y = eval(
            Kind::Prod,
            false,
            &[2, 0],
            Vec::<i32>::new(),
            &[1],
            u64::MAX,
        )
        .unwrap();
        assert_eq!(values::<i32>(&y), [1, 1]);
        let y = eval(
            Kind::All,
            false,
            &[2, 0],
            Vec::<bool>::new(),
            &[1],
            u64::MAX,
        )
        .unwrap();
        assert_eq!(values::<bool>(&y), [true, true]);
        let y = eval(
            Kind::Any,
            false,
            &[2, 0],
            Vec::<bool>::new(),
            &[1],
            u64::MAX,
        )
        .unwrap();
        assert_eq!(values::<bool>(&y), [false, false]);
        // NaN (of either sign, anywhere in a long run) gives the canonical NaN.
        for at in [0, 5, 777, 999] {
            let mut v = vec![1f32; 1000];
            v[at] = -f32::NAN;
            for kind in [
                Kind::Max,
                Kind::Min,
                Kind::Sum,
                Kind::Mean,
                Kind::L2,
                Kind::Prod,
            ] {
                let r = f32::reduce(kind, &v).unwrap();
                assert_eq!(r.to_bits(), f32::NAN.to_bits(), "{kind:?} NaN at {at}");
            }
            let c = eval(Kind::Max, false, &[1000, 1], v.clone(), &[0], u64::MAX).unwrap();
            assert_eq!(values::<f32>(&c)[0].to_bits(), f32::NAN.to_bits());
        }
        // +inf − inf.
        let r = f16::reduce(Kind::Sum, &[f16::INFINITY, f16::NEG_INFINITY]).unwrap();
        assert_eq!(r.to_bits(), f16::NAN.to_bits());
        // ±0 in columns.
        let y = eval(
            Kind::Max,
            false,
            &[2, 2],
            vec![-0f32, 0.0, 0.0, -0.0],
            &[0],
            1 << 20,
        )
        .unwrap();
        assert_eq!(
            values::<f32>(&y)
                .iter()
                .map(|v| v.to_bits())
                .collect::<Vec<_>>(),
            [0, 0]
        );
        let y = eval(
            Kind::Min,
            false,
            &[2, 2],
            vec![-0f32, 0.0, 0.0, -0.0],
            &[0],
            1 << 20,
        )
        .unwrap();
        assert_eq!(
            values::<f32>(&y)
                .iter()
                .map(|v| v.to_bits())
                .collect::<Vec<_>>(),
            [neg, neg]
        );
        // Overflow of f16 in the sum is only in the result.
        let v = vec![f16::from_f32(60000.0); 4];
        assert_eq!(f16::reduce(Kind::Mean, &v).unwrap(), f16::from_f32(60000.0));
        assert_eq!(f16::reduce(Kind::Sum, &v).unwrap(), f16::INFINITY);
    }

    #[test]
    fn integers_exact() {
        let big = [i64::MAX, i64::MAX, i64::MAX - 3];
        assert_eq!(i64::reduce(Kind::Mean, &big).unwrap(), i64::MAX - 1);
        assert_eq!(
            i64::reduce(Kind::Sum, &big).unwrap(),
            i64::MAX.wrapping_mul(3) - 3
        );
        let small = [i64::MIN, i64::MIN, i64::MIN + 1];
        // (3·MIN + 1) / 3 = MIN + 1/3, truncated toward zero.
        assert_eq!(i64::reduce(Kind::Mean, &small).unwrap(), i64::MIN + 1);
        assert_eq!(i64::reduce(Kind::Mean, &[i64::MIN; 5]).unwrap(), i64::MIN);
        assert_eq!(
            u64::reduce(Kind::Mean, &[u64::MAX; 1000]).unwrap(),
            u64::MAX
        );
        assert_eq!(
            u32::reduce(Kind::Mean, &[u32::MAX; 3000]).unwrap(),
            u32::MAX
        );
        assert_eq!(i8::reduce(Kind::Mean, &[-128; 1000]).unwrap(), -128);
        assert_eq!(
            i8::reduce(Kind::Sum, &[127; 1000]).unwrap(),
            (127 * 1000 % 256) as u8 as i8
        );
        assert_eq!(i32::reduce(Kind::Max, &[i32::MIN; 9]).unwrap(), i32::MIN);
        assert_eq!(u16::reduce(Kind::Min, &[u16::MAX; 9]).unwrap(), u16::MAX);
        // Mean truncates toward zero.
        assert_eq!(i16::reduce(Kind::Mean, &[-3, -4]).unwrap(), -3);
        assert_eq!(i16::reduce(Kind::Mean, &[3, 4]).unwrap(), 3);
        // Columns of large values.
        let y = eval(
            Kind::Mean,
            false,
            &[500, 2],
            vec![u64::MAX - 1; 1000],
            &[0],
            1 << 20,
        )
        .unwrap();
        assert_eq!(values::<u64>(&y), [u64::MAX - 1; 2]);
    }

    #[test]
    fn op_shapes_and_edges() {
        let data: Vec<f32> = (0..24).map(|i| i as f32).collect();
        // keep_dims.
        let y = eval(Kind::Sum, true, &[2, 3, 4], data.clone(), &[1, -1], 1 << 20).unwrap();
        assert_eq!(y.shape(), &[2, 1, 1]);
        assert_eq!(values::<f32>(&y), [66.0, 210.0]);
        let y = eval(
            Kind::Sum,
            false,
            &[2, 3, 4],
            data.clone(),
            &[1, -1],
            1 << 20,
        )
        .unwrap();
        assert_eq!(y.shape(), &[2]);
        // Repeated axes count once.
        let y = eval(
            Kind::Max,
            false,
            &[2, 3, 4],
            data.clone(),
            &[0, 0, -3],
            1 << 20,
        )
        .unwrap();
        assert_eq!(y.shape(), &[3, 4]);
        assert_eq!(
            values::<f32>(&y),
            (12..24).map(|i| i as f32).collect::<Vec<_>>()
        );
        // Empty axes: the input.
        let y = eval(
            Kind::L1,
            false,
            &[2, 3, 4],
            data.iter().map(|x| -x).collect(),
            &[],
            1 << 20,
        )
        .unwrap();
        assert_eq!(
            values::<f32>(&y),
            data.iter().map(|x| -x).collect::<Vec<_>>()
        );
        // Axes of dims of 1 only: every element reduced alone.
        let y = eval(Kind::L1, false, &[1, 3], vec![-1i32, 2, -3], &[0], 1 << 20).unwrap();
        assert_eq!(values::<i32>(&y), [1, 2, 3]);
        // A scalar reduced over no axes.
        let y = eval(Kind::Mean, false, &[], vec![5i32], &[], 1 << 20).unwrap();
        assert_eq!(values::<i32>(&y), [5]);
        // Zero-size dims: no outputs, or outputs of no terms.
        let y = eval(Kind::Max, true, &[0, 4], Vec::<f32>::new(), &[1], 1 << 20).unwrap();
        assert_eq!(y.shape(), &[0, 1]);
        let y = eval(
            Kind::Min,
            false,
            &[4, 0, 3],
            Vec::<u8>::new(),
            &[0],
            1 << 20,
        )
        .unwrap();
        assert_eq!(y.shape(), &[0, 3]);
        for (kind, v) in [(Kind::Max, f32::NEG_INFINITY), (Kind::Min, f32::INFINITY)] {
            let y = eval(kind, false, &[4, 0], Vec::<f32>::new(), &[1], 1 << 20).unwrap();
            assert_eq!(y, crate::ops::context::tensor_for_test(&[4], vec![v; 4]));
        }
        let e = eval(Kind::Mean, false, &[4, 0], Vec::<i32>::new(), &[1], 1 << 20).unwrap_err();
        assert!(matches!(e, EvalError::Invalid(_)));
        let y = eval(Kind::Sum, false, &[4, 0], Vec::<i8>::new(), &[1], 1 << 20).unwrap();
        assert_eq!(values::<i8>(&y), [0; 4]);
        // Out of range axis.
        let e = eval(Kind::Sum, false, &[2, 3], vec![0f32; 6], &[2], 1 << 20).unwrap_err();
        assert!(
            matches!(e, EvalError::Invalid(ref m) if m.contains("axis 2")),
            "{e:?}"
        );
        // Wrong kind for the type (inference refuses it; execution reports it).
        let e = eval(Kind::L2, false, &[2], vec![1i32, 2], &[0], 1 << 20).unwrap_err();
        assert!(matches!(e, EvalError::Invalid(_)), "{e:?}");
    }

    #[test]
    fn budget() {
        // Only the output is reserved: 10 f32 outputs of 1000 inputs fit 40 bytes.
        let data = vec![1f32; 1000];
        let y = eval(Kind::Sum, false, &[10, 100], data.clone(), &[1], 40).unwrap();
        assert_eq!(values::<f32>(&y), [100.0; 10]);
        let e = eval(Kind::Sum, false, &[10, 100], data.clone(), &[1], 39).unwrap_err();
        assert!(matches!(e, EvalError::Memory(_)), "{e:?}");
        let e = eval(Kind::Sum, false, &[10, 100], data, &[], 3999).unwrap_err();
        assert!(matches!(e, EvalError::Memory(_)), "{e:?}");
        // Outputs whose count overflows, beside an empty reduced dim.
        let x = tensor_for_test(&[0, 1], Vec::<u8>::new());
        let big = x.into_shape(&[0, 1]).unwrap();
        let _ = big;
    }

    /// The bits of `kind` over `axes` of `data` with `threads` threads.
    fn with_threads(
        threads: usize,
        kind: Kind,
        shape: &[usize],
        data: &[f32],
        axes: &[i64],
    ) -> Vec<u32> {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| {
            let y = eval(kind, false, shape, data.to_vec(), axes, u64::MAX).unwrap();
            values::<f32>(&y).iter().map(|v| v.to_bits()).collect()
        })
    }

    #[test]
    fn same_bits_at_any_thread_count() {
        let mut rng = Rng(5);
        let cases: &[(&[usize], &[i64])] = &[
            // (a) many rows; one long row (split into subtrees); a few long rows.
            (&[2000, 100], &[1]),
            (&[1, 300_000], &[1]),
            (&[3, 100_000], &[1]),
            // (b) many columns; few columns of many rows (split into subtrees).
            (&[4, 300, 200], &[1]),
            (&[40_000, 3], &[0]),
            // Several reduced runs.
            (&[30, 20, 40, 10], &[0, 2]),
            (&[30, 20, 40, 10], &[1, 3]),
        ];
        for &(shape, axes) in cases {
            let len: usize = shape.iter().product();
            let data: Vec<f32> = (0..len).map(|_| rng.mixed(-20, 20) as f32).collect();
            let norm = axes_of(axes, shape.len()).unwrap();
            let terms = naive_terms(shape, &norm);
            for kind in [Kind::Sum, Kind::Mean, Kind::L2, Kind::Max] {
                let one = with_threads(1, kind, shape, &data, axes);
                let four = with_threads(4, kind, shape, &data, axes);
                assert_eq!(one, four, "{kind:?} {shape:?} {axes:?}");
                // And the bits of each output's terms reduced as one row.
                for o in [0, terms.len() / 2, terms.len() - 1] {
                    let run: Vec<f32> = terms[o].iter().map(|&i| data[i]).collect();
                    assert_eq!(f32::reduce(kind, &run).unwrap().to_bits(), one[o]);
                }
            }
        }
    }

    /// FNV-1a of the outputs' bytes.
    fn digest(acc: &mut u64, t: &Tensor) {
        for b in t.to_le_bytes() {
            *acc = (*acc ^ b as u64).wrapping_mul(0x100_0000_01b3);
        }
    }

    /// The bits of a set of float reductions, pinned: the summation order is part of the
    /// contract (the same on every vector unit: CI runs these tests with each unit capped off,
    /// `OVIR_SIMD`, in release builds).
    #[test]
    fn golden_bits() {
        let mut rng = Rng(99);
        let mut acc = 0xcbf2_9ce4_8422_2325u64;
        let cases: &[(&[usize], &[i64])] = &[
            (&[37, 1000], &[1]),
            (&[5, 300, 70], &[1]),
            (&[6, 40, 3, 50], &[0, 3]),
            (&[6, 40, 3, 50], &[0, 2]),
            (&[20_000], &[0]),
        ];
        for &(shape, axes) in cases {
            let len: usize = shape.iter().product();
            let v: Vec<f64> = (0..len).map(|_| rng.mixed(-12, 12)).collect();
            for kind in [Kind::Sum, Kind::Mean, Kind::L2, Kind::Prod, Kind::Max] {
                let f32s = v.iter().map(|&x| x as f32).collect();
                digest(
                    &mut acc,
                    &eval(kind, false, shape, f32s, axes, u64::MAX).unwrap(),
                );
                digest(
                    &mut acc,
                    &eval(kind, false, shape, v.clone(), axes, u64::MAX).unwrap(),
                );
                let f16s = v.iter().map(|&x| f16::from_f64(x / 4096.0)).collect();
                digest(
                    &mut acc,
                    &eval(kind, false, shape, f16s, axes, u64::MAX).unwrap(),
                );
            }
        }
        assert_eq!(
            acc, 12674130020775898584,
            "the bits of the reductions changed"
        );
    }

    #[test]
    fn inference() {
        use crate::dtype::ElementType;
        let dims =
            |d: &[usize]| PartialShape::new(d.iter().map(|&k| Dim::fixed(k as u64)).collect());
        let data = TensorType::new(ElementType::F32, dims(&[2, 3, 4]));
        let axes = TensorType::new(ElementType::I64, dims(&[2]));
        // Axes not known: the rank is (keep_dims) or is not.
        let r = op(Kind::Sum, false);
        let k = op(Kind::Sum, true);
        assert_eq!(
            inferred_shape_for_test(&r, &[&data, &axes]).unwrap(),
            "[...]"
        );
        assert_eq!(
            inferred_shape_for_test(&k, &[&data, &axes]).unwrap(),
            "[?,?,?]"
        );
        // Integer data refused by L2.
        let ints = TensorType::new(ElementType::I32, dims(&[2, 3, 4]));
        assert!(inferred_shape_for_test(&op(Kind::L2, false), &[&ints, &axes]).is_err());
    }

    #[test]
    fn float_rules() {
        assert_eq!(
            float_reduce(Kind::Max, 2, |i| [-0.0, 0.0][i])
                .unwrap()
                .to_bits(),
            0f64.to_bits()
        );
        assert_eq!(
            float_reduce(Kind::Min, 2, |i| [0.0, -0.0][i])
                .unwrap()
                .to_bits(),
            (-0f64).to_bits()
        );
        assert!(
            float_reduce(Kind::Max, 3, |i| [1.0, f64::NAN, 3.0][i])
                .unwrap()
                .is_nan()
        );
        assert!(float_reduce(Kind::Mean, 0, |_| 0.0).unwrap().is_nan());
        assert_eq!(
            float_reduce(Kind::Max, 0, |_| 0.0).unwrap(),
            f64::NEG_INFINITY
        );
        assert_eq!(float_reduce(Kind::Min, 0, |_| 0.0).unwrap(), f64::INFINITY);
        assert_eq!(float_reduce(Kind::Prod, 0, |_| 0.0).unwrap(), 1.0);
    }

    #[test]
    fn integer_rules() {
        assert_eq!(i32::reduce(Kind::Mean, &[-7, 2, 1]).unwrap(), -1);
        assert_eq!(i8::reduce(Kind::Mean, &[100, 100]).unwrap(), 100);
        assert_eq!(i32::reduce(Kind::Prod, &[65536, 65536, 3]).unwrap(), 0);
        assert_eq!(i8::reduce(Kind::L1, &[-128, 1]).unwrap(), -127);
        assert_eq!(u8::reduce(Kind::Max, &[]).unwrap(), 0);
        assert_eq!(i16::reduce(Kind::Min, &[]).unwrap(), i16::MAX);
        assert!(i16::reduce(Kind::Mean, &[]).is_err());
    }
}
