//! Softmax-1, Softmax-8 and LogSoftmax-5: `e^x / Σ e^x` and its logarithm along one axis.
//!
//! Spec: <https://docs.openvino.ai/2026/documentation/openvino-ir-format/operation-sets/operation-specs/activation/softmax-8.html>
//! (and `softmax-1`, `log-soft-max-5`).
//!
//! Ports: one input of a float type (f16, bf16, f32, f64: the types OpenVINO evaluates; others
//! are refused, E502); one output of its type and shape. Attribute `axis` (default 1):
//! Softmax-1 takes `0..rank` only (OpenVINO reads it as an unsigned number: a negative one is
//! an attribute error); Softmax-8 and LogSoftmax-5 also take `-rank..0`, counting from the end.
//! An axis out of range for the data's rank is an invalid input (E507), at inference when the
//! rank is known and at execution; a scalar has no axis.
//!
//! Computation, per group (the elements along the axis that share every other coordinate),
//! with `m` the group's maximum: `d = x − m`; `e = e^d`; `S = Σ e` in f64, by the fixed
//! summation order of `mvn.rs` (`tree_sum`). Softmax is `e / S`. LogSoftmax is `d − L` with
//! `L = ln S`, from the sum `T` of the terms below the maximum and the count `k` of the
//! elements equal to it (whose `e` is exactly 1): `L = log1p(T)` for `k = 1` (`ln k +
//! log1p(T/k)` otherwise: with `S` near 1 the logarithm keeps the digits of `T`), in f64.
//! * f32 (the vectorised kernels below, on the widest vector unit): `d` rounded to f32 with its
//!   rounding error `dl` (TwoSum: exact), and `e = e^(d + dl)` in f32 lanes: `d + dl = n ln2 +
//!   r`, `n` the nearest integer to `d / ln2` and `r` (|r| ≤ 0.35) rounded once, `e^r = w0 +
//!   c0` (`w0 = 1 + r` rounded, `c0` its rounding error plus `r² P(r)` with the fit of the
//!   crate's f32 Exp, `unary/single.rs`), the two added with one rounding, times `2^n` (exact).
//!   Where `d < −87` (`2^n` or the result would not be a normal f32) the element is computed
//!   apart: 0 at or below −104 (below 2^-150, half the least f32: 0 in every result), else
//!   `libm::exp` of the exact difference, rounded once. The f32 `e` are summed in f64. Softmax
//!   multiplies by `1/S` split in two f32 (`e · hi + e · lo` in one fused step: one rounding);
//!   LogSoftmax is `(x − m) − L` in f64, rounded once.
//!   Accuracy, traded for speed: `e` is within `2^-24 + 2^-25 + 2^-29` of `e^d` relatively
//!   (its last rounding, the reduced argument's, the fit), `S` likewise, so a Softmax output is
//!   within 3.6 ulp by this analysis and a LogSoftmax output within 2.1 ulp; measured against
//!   float64 over 11.8 million outputs (rows of 1 to 4097 elements, scales 1e-3 to 1e4, with
//!   −inf among them, large offsets, repeated values; as rows and as columns): at most 1.69 ulp
//!   (Softmax) and 1.61 ulp (LogSoftmax); the tests assert 2 ulp. (The previous f32 path
//!   computed `e` in f64, within 0.50 ulp, at twice the time and more; OpenVINO's CPU plugin
//!   computes in f32 with an approximate `exp`, up to 5 ulp measured on Exp, and OpenVINO's
//!   reference sums in the element type.)
//! * f16, bf16: `d` in f64 (exact but for values more than 2^29 apart) and `e^d` in f64 to
//!   about 2^-48 relatively (`exp_wide`: `d = n ln2 + r` with `r` in `(−ln2, 0]`, `e^r = 1 +
//!   expm1(r)` by the crate's branch-free [`vector::expm1_neg`], times `2^n`), auto-vectorised;
//!   Softmax multiplies by `1/S`. Everything before the last rounding is f64: within half an
//!   ulp plus about 2^-20 ulp of the exact value (tested: the float64 result rounded once).
//! * f64: `d` with its rounding error `dl` (TwoSum), `e = exp(d) · (1 + dl)` with `libm`'s
//!   `exp` (`log1p` and `log` for `L`: the same bits on every machine), `e / S`, `(d − L) +
//!   dl`: within a few ulp.
//!
//! Special values (numpy's and OpenVINO's reference's results, by the same formula): a NaN in
//! a group makes the whole group NaN; so does `+inf` (`inf − inf`; the limit, 1 at the
//! infinities, is not taken); a group of only `−inf` is NaN (`−inf − −inf`); `−inf` among
//! finite values gives 0 (LogSoftmax `−inf`). A group of one element gives 1 (LogSoftmax 0);
//! equal elements give `1/n` (`−ln n`). Large values are fine (the maximum is subtracted).
//!
//! Determinism: the maximum is exact, the exponential and every other step are IEEE
//! operations with one defined result (the f32 kernels' vector units included: see
//! `mvn::blocks`), and the sum's order depends only on the group's length, so the bits are the
//! same at any thread count, on any vector unit (AVX-512, AVX2, the baseline: tested), and
//! whether the groups are rows (the axis last) or columns (tested).
//!
//! Execution: with the axis last, rows, in parallel over parts of at least 16K elements: per
//! row the maximum and minimum in one pass (the minimum says whether any element falls below
//! the f32 form's range: else the exponential pass runs without those checks), the
//! exponentials and their sum in one pass (Softmax writes them to the output), then the
//! outputs. Otherwise the data is `[outer, n, inner]`: f32 columns are taken in panels of up to
//! 256 (a scratch buffer of `n` × the panel's width per thread, about 64 KiB, checked against
//! the memory budget with the output), each panel's rows read once into the buffer (the next
//! panel's prefetched), computed there 16 columns at a time (a column per lane) and written
//! once; the other types compute 16 columns side by side in place, with `n × 16` f64 of
//! scratch. The f32 output is not zero-filled first. Speed (AMD EPYC Zen 4, 2 cores, AVX-512,
//! `benches/compare.py`): `[1,12,128,128]` over the last axis 0.075 ms at 1 thread and 0.039 at
//! 2 (OpenVINO 0.090 and 0.063; before these kernels 0.24 and 0.13); `[64,64,64,64]` over axis
//! 1 14.6 and 7.4 ms (OpenVINO 19.8 and 13.2; before, 24.2 and 13.1).

use half::{bf16, f16};

use std::mem::MaybeUninit;

use rayon::prelude::*;

use super::mvn::blocks::{self, Unit};
use super::mvn::{
    LANES, Real, RowsF32, Scatter, W, col_tree, fold, for_columns, for_rows, rows_f32, tree_sum,
};
use super::unary::vector;
use super::{Arity, AttrError, Attrs, EvalCx, EvalError, InferCx, Op, OpDef};
use crate::shape::TensorType;
use crate::tensor::{Tensor, TypeSet};

#[derive(Clone, Debug, PartialEq)]
pub struct Softmax {
    /// 1 or 8 (Softmax), 5 (LogSoftmax).
    pub version: u32,
    pub axis: i64,
}

pub const SOFTMAX_1: OpDef = OpDef {
    name: "Softmax",
    version: 1,
    inputs: Arity::exactly(1),
    outputs: Arity::exactly(1),
    parse: parse_1,
};

pub const SOFTMAX_8: OpDef = OpDef {
    version: 8,
    parse: parse_8,
    ..SOFTMAX_1
};

pub const LOG_SOFTMAX_5: OpDef = OpDef {
    name: "LogSoftmax",
    version: 5,
    inputs: Arity::exactly(1),
    outputs: Arity::exactly(1),
    parse: parse_5,
};

fn parse_1(a: &Attrs) -> Result<Box<dyn Op>, Vec<AttrError>> {
    let axis = a
        .parse_or("axis", 1, |t| match super::parse_i64(t)? {
            v if v < 0 => Err(format!(
                "Softmax-1 takes an axis of 0 or more, not {v} (Softmax-8 counts negative axes from the end)"
            )),
            v => Ok(v),
        })
        .map_err(|e| vec![e])?;
    Ok(Box::new(Softmax { version: 1, axis }))
}

fn parse_signed(a: &Attrs, version: u32) -> Result<Box<dyn Op>, Vec<AttrError>> {
    let axis = a
        .parse_or("axis", 1, super::parse_i64)
        .map_err(|e| vec![e])?;
    Ok(Box::new(Softmax { version, axis }))
}

fn parse_8(a: &Attrs) -> Result<Box<dyn Op>, Vec<AttrError>> {
    parse_signed(a, 8)
}

fn parse_5(a: &Attrs) -> Result<Box<dyn Op>, Vec<AttrError>> {
    parse_signed(a, 5)
}

impl Softmax {
    fn log(&self) -> bool {
        self.version == 5
    }

    /// The axis for data of rank `rank`, or why it does not fit.
    fn axis(&self, rank: usize) -> Result<usize, String> {
        super::normalize_axis(self.axis, rank).ok_or_else(|| {
            let name = self.def().map_or("Softmax", |d| d.name);
            if rank == 0 {
                format!(
                    "{name} needs data of rank 1 or more, not a scalar (axis {})",
                    self.axis
                )
            } else {
                format!(
                    "axis {} is out of range for data of rank {rank} ({}..{})",
                    self.axis,
                    if self.version == 1 { 0 } else { -(rank as i64) },
                    rank - 1
                )
            }
        })
    }
}

impl Op for Softmax {
    fn def(&self) -> Option<&'static OpDef> {
        Some(match self.version {
            1 => &SOFTMAX_1,
            5 => &LOG_SOFTMAX_5,
            _ => &SOFTMAX_8,
        })
    }

    fn infer(&self, cx: &mut InferCx<'_>) -> Option<Vec<TensorType>> {
        cx.require(0..1, TypeSet::FLOAT)?;
        let data = cx.input(0);
        if let Some(rank) = data.shape.rank()
            && let Err(reason) = self.axis(rank)
        {
            return cx.invalid(0, reason);
        }
        Some(vec![TensorType::new(data.element_type, data.shape.clone())])
    }

    fn eval(&self, cx: &EvalCx<'_>) -> Result<Vec<Tensor>, EvalError> {
        let data = cx.tensor(0)?;
        let ty = data.element_type();
        let shape = data.shape();
        let axis = self.axis(shape.len()).map_err(EvalError::Invalid)?;
        cx.reserve(ty, data.len())?;
        if data.is_empty() {
            return Ok(vec![(*data).clone()]);
        }
        // Not empty: every product is at most the length.
        let n = shape[axis];
        let inner: usize = shape[axis + 1..].iter().product();
        let (log, op) = (self.log(), self.def().map_or("Softmax", |d| d.name));
        if ty == crate::dtype::ElementType::F32 {
            return run_f32(cx, &data, n, inner, log).map(|t| vec![t]);
        }
        crate::dispatch!(float: ty, T => run::<T>(cx, &data, n, inner, log).map(|t| vec![t]),
            _ => Err(EvalError::UnsupportedType { op: op.into(), ty }))
    }
}

/// Softmax (or LogSoftmax) of `x` (not empty) along an axis of `n` with `inner` elements
/// after it.
fn run<T: SoftElem>(
    cx: &EvalCx<'_>,
    x: &Tensor,
    n: usize,
    inner: usize,
    log: bool,
) -> Result<Tensor, EvalError> {
    let width = if inner == 1 { 1 } else { W };
    let threads = rayon::current_num_threads() as u64;
    let scratch = (n as u64)
        .saturating_mul(width as u64 * 8)
        .saturating_mul(threads);
    // With the output: both are held at once.
    cx.reserve_bytes(
        "the output and Softmax's scratch space",
        scratch.saturating_add(x.bytes()),
    )?;
    let data = super::kernel::contiguous::<T>(x).ok_or(EvalError::Internal("the data's type"))?;
    let mut out = vec![T::default(); data.len()];
    if inner == 1 {
        for_rows(
            &data,
            &mut out,
            n,
            Vec::new,
            #[inline(always)]
            |xr, or, e| softmax_row(log, xr, or, e),
        );
    } else {
        for_columns(
            &data,
            &mut out,
            (n, inner),
            Vec::new,
            #[inline(always)]
            |slab, c0, w, e, o, base| softmax_cols(log, slab, (inner, c0, w), e, o, base),
        );
    }
    super::kernel::tensor_from(x.shape(), out)
}

/// A data type of Softmax: how it forms `x − m` and `e^(x − m)`, in f64.
pub(crate) trait SoftElem: Real {
    /// `x − m` rounded to f64 and its rounding error (0 where the difference is infinite).
    fn diff(x: Self, m: Self) -> (f64, f64);
    /// `e^d` for `d ≤ 0` (or NaN).
    fn exp(d: f64) -> f64;
    /// `a > b` (false where either is NaN).
    #[inline(always)]
    fn above(a: Self, b: Self) -> bool {
        a.wide() > b.wide()
    }
}

macro_rules! narrow_soft {
    ($($t:ty)*) => {$(
        impl SoftElem for $t {
            #[inline(always)]
            fn diff(x: Self, m: Self) -> (f64, f64) {
                // Exact but where the two are more than 2^29 apart in magnitude (then the
                // error is below 2^-53 of the difference).
                (x.wide() - m.wide(), 0.0)
            }
            #[inline(always)]
            fn exp(d: f64) -> f64 {
                exp_wide(d)
            }
            #[inline(always)]
            fn above(a: Self, b: Self) -> bool {
                a > b
            }
        }
    )*};
}
narrow_soft!(f32 f16 bf16);

impl SoftElem for f64 {
    /// TwoSum: the error is exact.
    #[inline(always)]
    fn diff(x: f64, m: f64) -> (f64, f64) {
        let b = -m;
        let d = x + b;
        let bb = d - x;
        let dl = (x - (d - bb)) + (b - bb);
        (d, if d.is_finite() { dl } else { 0.0 })
    }
    #[inline(always)]
    fn exp(d: f64) -> f64 {
        libm::exp(d)
    }
    #[inline(always)]
    fn above(a: Self, b: Self) -> bool {
        a > b
    }
}

/// ln 2 split in two: the high part has 32 significant bits, so `n · LN2_HI` is exact for the
/// n here and `d − n · LN2_HI` is exact near `d = n ln2` (Cody and Waite).
const LN2_HI: f64 = f64::from_bits(0x3fe6_2e42_fee0_0000);
const LN2_LO: f64 = 1.908_214_929_270_587_7e-10;
/// 1.5 · 2^52: added to an integer-valued f64 of magnitude below 2^51, puts it in the low
/// bits of the pattern.
const SHIFT: f64 = 6_755_399_441_055_744.0;
/// Below this difference the result is 0: `e^-110 < 2^-158`, below half the least f32
/// (every result of the narrow types is at most `e^d`).
const EXP_LOW: f64 = -110.0;

/// `e^d` for `d ≤ 0` in f64, to about 2^-48 relatively, for the narrow types (whose results
/// are rounded to 24 bits or fewer): `d = n ln2 + r` with `n = ⌈d / ln2⌉` and `r` in
/// `(−ln2, 0]`, `e^r = 1 + expm1(r)` by the crate's branch-free [`vector::expm1_neg`] (within
/// 2^-47 of `e^r − 1`, which is at most 1/2 in size here), times `2^n` (exact). Below
/// [`EXP_LOW`]: 0. Straight-line arithmetic, vectorised by the compiler; only IEEE operations
/// with one defined result, so the same bits on every vector unit.
#[inline(always)]
fn exp_wide(d: f64) -> f64 {
    // Below EXP_LOW (−inf included) the steps give anything (NaN, garbage exponents): the
    // last select gives 0 there.
    let low = d < EXP_LOW;
    let n = (d * std::f64::consts::LOG2_E).ceil();
    let r = (-n).mul_add(LN2_LO, (-n).mul_add(LN2_HI, d));
    let r = if r > 0.0 { 0.0 } else { r };
    let e = 1.0 + vector::expm1_neg(r);
    // 2^n, n in −159..=0 here, from the pattern of n + SHIFT.
    let scale = f64::from_bits((n + SHIFT).to_bits().wrapping_add(1023) << 52);
    if low { 0.0 } else { e * scale }
}

/// `e · (1 + dl)`: the exponential of the exact difference to first order (`dl` is below
/// 2^-43 where `e` is not 0 for f64, and 0 for the narrow types).
#[inline(always)]
fn corrected<T: SoftElem>(e: f64, dl: f64) -> f64 {
    if T::WIDE { e + e * dl } else { e }
}

/// `ln(k + t)`, `k ≥ 1` elements equal to the maximum and `t` the sum of the others' terms.
#[inline(always)]
fn log_sum(k: usize, t: f64) -> f64 {
    if k == 1 {
        libm::log1p(t)
    } else {
        let k = k as f64;
        libm::log(k) + libm::log1p(t / k)
    }
}

/// The larger of two values; NaN never wins (NaN is looked for apart).
#[inline(always)]
fn larger<T: SoftElem>(a: T, b: T) -> T {
    if T::above(b, a) { b } else { a }
}

/// One element of [`exp_leaf`] (and of the column leaves): `e^(v − m)` to `o`, its term
/// added to `s`, and `c` counting it if `v = m`.
#[inline(always)]
fn exp_step<T: SoftElem>(s: &mut f64, c: &mut usize, v: T, m: T, o: &mut f64) {
    let (d, dl) = T::diff(v, m);
    let e = T::exp(d);
    *o = e;
    let top = d == 0.0;
    *s += if top { 0.0 } else { corrected::<T>(e, dl) };
    *c += top as usize;
}

/// One leaf of a row: the exponentials of `xs` less `m` into `es`, the sum of their terms (in
/// the order of [`lanes_sum`](super::mvn::lanes_sum)) and the count of elements equal to `m`,
/// in one pass.
#[inline(always)]
fn exp_leaf<T: SoftElem>(xs: &[T], es: &mut [f64], m: T) -> (f64, usize) {
    let mut acc = [0.0f64; LANES];
    let mut cnt = [0usize; LANES];
    let mut cx = xs.chunks_exact(LANES);
    let mut ce = es.chunks_exact_mut(LANES);
    for (a, o) in (&mut cx).zip(&mut ce) {
        for (((s, c), &v), o) in acc.iter_mut().zip(cnt.iter_mut()).zip(a).zip(o) {
            exp_step(s, c, v, m, o);
        }
    }
    for (((s, c), &v), o) in acc
        .iter_mut()
        .zip(cnt.iter_mut())
        .zip(cx.remainder())
        .zip(ce.into_remainder())
    {
        exp_step(s, c, v, m, o);
    }
    (fold(acc), cnt.iter().sum())
}

/// One group that is a contiguous row; `e` is scratch space.
#[inline(always)]
fn softmax_row<T: SoftElem>(log: bool, x: &[T], out: &mut [T], e: &mut Vec<f64>) {
    let n = x.len();
    // The maximum, NaN noted apart.
    let mut lanes = [x[0]; LANES];
    let mut nan = false;
    let mut chunks = x.chunks_exact(LANES);
    for c in &mut chunks {
        for (a, &v) in lanes.iter_mut().zip(c) {
            *a = larger(*a, v);
            nan |= v.wide().is_nan();
        }
    }
    for (a, &v) in lanes.iter_mut().zip(chunks.remainder()) {
        *a = larger(*a, v);
        nan |= v.wide().is_nan();
    }
    let m = lanes.iter().fold(x[0], |a, &b| larger(a, b));
    if nan || !m.wide().is_finite() {
        out.fill(T::narrow(f64::NAN));
        return;
    }
    if e.len() < n {
        e.resize(n, 0.0);
    }
    let e = &mut e[..n];
    let mut k = 0;
    let t = tree_sum(
        n,
        #[inline(always)]
        |at, len| {
            let (s, c) = exp_leaf(&x[at..at + len], &mut e[at..at + len], m);
            k += c;
            s
        },
        |a, b| a + b,
    );
    if log {
        let l = log_sum(k, t);
        for (o, &v) in out.iter_mut().zip(x.iter()) {
            let (d, dl) = T::diff(v, m);
            *o = T::narrow((d - l) + dl);
        }
    } else {
        let s = k as f64 + t;
        let inv = 1.0 / s;
        for ((o, &v), &ev) in out.iter_mut().zip(x.iter()).zip(e.iter()) {
            // (For the narrow types the difference is not needed: no correction.)
            let c = corrected::<T>(ev, T::diff(v, m).1);
            *o = T::narrow(if T::WIDE { c / s } else { c * inv });
        }
    }
}

/// The `w` columns from `c0` of a slab `[n, inner]` (`cols = (inner, c0, w)`), written to
/// `out` at `base + j·inner + c0 + c`; `e` is scratch space.
#[inline(always)]
fn softmax_cols<T: SoftElem>(
    log: bool,
    slab: &[T],
    (inner, c0, w): (usize, usize, usize),
    e: &mut Vec<f64>,
    out: &Scatter<'_, T>,
    base: usize,
) {
    let n = slab.len() / inner;
    let row = |j: usize| &slab[j * inner + c0..j * inner + c0 + w];
    let mut m = [T::default(); W];
    m[..w].copy_from_slice(row(0));
    let mut bad = [false; W];
    for j in 0..n {
        for ((a, b), &v) in m.iter_mut().zip(bad.iter_mut()).zip(row(j)) {
            *a = larger(*a, v);
            *b |= v.wide().is_nan();
        }
    }
    // Columns with a NaN or an infinite maximum are NaN: computed with 0 for the maximum
    // (harmlessly), then overwritten.
    for (a, b) in m.iter_mut().zip(bad.iter_mut()) {
        *b |= !a.wide().is_finite();
        if *b {
            *a = T::default();
        }
    }
    if e.len() < n * W {
        e.resize(n * W, 0.0);
    }
    let mut k = [0usize; W];
    let t = col_tree(
        n,
        #[inline(always)]
        |at, len, acc| {
            for j in at..at + len {
                for ((((s, c), &v), &mc), o) in acc[(j - at) % LANES]
                    .iter_mut()
                    .zip(k.iter_mut())
                    .zip(row(j))
                    .zip(&m)
                    .zip(&mut e[j * W..j * W + w])
                {
                    exp_step(s, c, v, mc, o);
                }
            }
        },
    );
    let mut buf = [T::default(); W];
    let nan = T::narrow(f64::NAN);
    if log {
        let mut l = [0.0; W];
        for ((lc, &kc), (&tc, &b)) in l.iter_mut().zip(&k).zip(t.iter().zip(&bad)).take(w) {
            *lc = if b { f64::NAN } else { log_sum(kc, tc) };
        }
        for j in 0..n {
            for (((o, &v), &mc), &lc) in buf.iter_mut().zip(row(j)).zip(&m).zip(&l) {
                let (d, dl) = T::diff(v, mc);
                *o = T::narrow((d - lc) + dl);
            }
            put_row(&mut buf[..w], &bad, nan, out, base + j * inner + c0);
        }
    } else {
        let s = std::array::from_fn::<f64, W, _>(|c| k[c] as f64 + t[c]);
        let inv = s.map(|v| 1.0 / v);
        for j in 0..n {
            for ((o, &v), ((&mc, &ev), (&sc, &ic))) in buf
                .iter_mut()
                .zip(row(j))
                .zip(m.iter().zip(&e[j * W..j * W + w]).zip(s.iter().zip(&inv)))
            {
                let c = corrected::<T>(ev, T::diff(v, mc).1);
                *o = T::narrow(if T::WIDE { c / sc } else { c * ic });
            }
            put_row(&mut buf[..w], &bad, nan, out, base + j * inner + c0);
        }
    }
}

/// One row of a strip of columns written out, NaN in the columns marked bad.
#[inline(always)]
fn put_row<T: Copy>(buf: &mut [T], bad: &[bool; W], nan: T, out: &Scatter<'_, T>, at: usize) {
    for (o, &b) in buf.iter_mut().zip(bad) {
        if b {
            *o = nan;
        }
    }
    // SAFETY: this strip's own elements (`for_columns`).
    unsafe { out.put(at, buf) };
}

// ---------------------------------------------------------------------------------------------
// f32: the exponential in f32 lanes.

/// log2(e), 1.5 · 2^23 (added to a value below 2^22, rounds it to an integer held in the low
/// bits of the pattern), and ln 2 split in two (the high part has 16 significant bits: `n ·
/// LN2_HI` is exact for |n| < 2^8): the constants of the crate's f32 `Exp`
/// (`unary/single.rs`).
const LOG2_E_F: f32 = std::f32::consts::LOG2_E;
const SHIFT_F: f32 = 12_582_912.0;
const LN2_HI_F: f32 = f32::from_bits(0x3f31_7200);
const LN2_LO_F: f32 = f32::from_bits(0x35bf_be8e);
/// `(e^s − 1 − s) / s²` on |s| ≤ 0.3467, constant term first: the fit of `unary/single.rs`
/// (error below 2^-29 of e^s).
const EXPM1_TAIL: [f32; 6] = [
    0.5,
    f32::from_bits(0x3e2a_aaaa),
    f32::from_bits(0x3d2a_aa40),
    f32::from_bits(0x3c08_88f1),
    f32::from_bits(0x3ab6_cb34),
    f32::from_bits(0x394f_e503),
];
/// The lane form takes `d ≥ EXP_MIN`, where `2^n` (n ≥ −126) and `e^d` (≥ 1.6e-38) are normal
/// f32.
const EXP_MIN: f32 = -87.0;
/// At or below this difference the result is 0: `e^-103.97` is 2^-150, half the least f32.
const EXP_ZERO: f32 = -104.0;

/// `e^(x − m)` lane by lane, from `d = x − m` rounded to f32 and its rounding error `dl`
/// (TwoSum: exact, `neg_m` is `−m`), as `e^d · e^dl`: `d + dl = n ln2 + r` with `n` the
/// nearest integer to `d / ln2` and `r` (|r| ≤ 0.35) rounded once (`dl` enters it), `e^r` as
/// `w0 + c0` (`w0 = 1 + r` rounded, `c0` its rounding error and `r² P(r)`) and rounded once
/// when the two are added, times `2^n` (exact). Returns `e` and `d`.
///
/// `CAREFUL`: the lanes below [`EXP_MIN`] (where the form does not hold) are 0, and those in
/// (`EXP_ZERO`, `EXP_MIN`), whose result is a subnormal f32, are computed one at a time in
/// f64 (`libm::exp` of the exact difference, rounded once). Without it the caller guarantees
/// that no lane is below `EXP_MIN`.
#[inline(always)]
fn exp_block<U: Unit, const CAREFUL: bool>(x: U::F, m: U::F, neg_m: U::F) -> (U::F, U::F) {
    let s = U::splat;
    let d = U::sub(x, m);
    let bb = U::sub(d, x);
    let dl = U::add(U::sub(x, U::sub(d, bb)), U::sub(neg_m, bb));
    let k = U::fma(d, s(LOG2_E_F), s(SHIFT_F));
    let n = U::sub(k, s(SHIFT_F));
    let r = U::fnma(n, s(LN2_LO_F), U::add(U::fnma(n, s(LN2_HI_F), d), dl));
    let mut p = s(EXPM1_TAIL[5]);
    for &c in EXPM1_TAIL[..5].iter().rev() {
        p = U::fma(p, r, s(c));
    }
    let one = s(1.0);
    let w0 = U::add(one, r);
    let c0 = U::add(U::add(U::sub(one, w0), r), U::mul(U::mul(r, r), p));
    let e = U::mul(U::add(w0, c0), U::pow2(k));
    if !CAREFUL {
        return (e, d);
    }
    let e = U::select(U::ge(d, s(EXP_MIN)), e, s(0.0));
    let tiny = U::and(U::lt(d, s(EXP_MIN)), U::lt(s(EXP_ZERO), d));
    if !U::any(tiny) {
        return (e, d);
    }
    let (mut ev, xv, mv, dv) = (U::lanes(e), U::lanes(x), U::lanes(m), U::lanes(d));
    for i in 0..16 {
        if dv[i] < EXP_MIN && dv[i] > EXP_ZERO {
            ev[i] = libm::exp(xv[i] as f64 - mv[i] as f64) as f32;
        }
    }
    (U::from(ev), d)
}

/// `(1/S)` as two f32, the high part and the rest, so that `e · hi + e · lo` (one fused step)
/// is `e / S` with one rounding of the result's size.
#[inline(always)]
fn split_inverse(s: f64) -> (f32, f32) {
    let inv = 1.0 / s;
    let hi = inv as f32;
    (hi, (inv - hi as f64) as f32)
}

/// `e · (hi + lo)`, rounded once.
#[inline(always)]
fn scale<U: Unit>(e: U::F, hi: U::F, lo: U::F) -> U::F {
    U::fma(e, hi, U::mul(e, lo))
}

/// `(x − m) − L` in f64, rounded once (LogSoftmax's output).
#[inline(always)]
fn log_out<U: Unit>(x: U::F, m: U::D, l: U::D) -> U::F {
    U::narrow(U::dsub(U::dsub(U::widen(x), m), l))
}

/// Softmax (`LOG` false) or LogSoftmax of f32 rows.
struct SoftRows {
    log: bool,
}

impl RowsF32 for SoftRows {
    #[inline(always)]
    fn rows<U: Unit>(&self, x: &[f32], out: &mut [MaybeUninit<f32>], n: usize) {
        for (xr, or) in x.chunks_exact(n).zip(out.chunks_exact_mut(n)) {
            if self.log {
                soft_row::<U, true>(xr, or);
            } else {
                soft_row::<U, false>(xr, or);
            }
        }
    }
}

/// Softmax (not LogSoftmax) of f32 rows of `n` elements of `x` into `out` (as long as `x`), on
/// this thread and the widest vector unit: the bits of [`Softmax`] over a last axis of `n`.
/// For ops that compose Softmax with others in one pass (ScaledDotProductAttention).
pub(crate) fn softmax_rows_f32(x: &[f32], out: &mut [MaybeUninit<f32>], n: usize) {
    struct Rows<'a> {
        x: &'a [f32],
        out: &'a mut [MaybeUninit<f32>],
        n: usize,
    }
    impl blocks::Task for Rows<'_> {
        type Out = ();
        #[inline(always)]
        fn run<U: Unit>(self) {
            SoftRows { log: false }.rows::<U>(self.x, self.out, self.n)
        }
    }
    blocks::on_unit(Rows { x, out, n })
}

/// One row: the maximum `m` (and the minimum, and whether a NaN is there) in one pass; the
/// exponentials and their sum (Softmax: into the output; LogSoftmax: the sum of the terms
/// below the maximum and the count of those equal to it); then the outputs.
#[inline(always)]
fn soft_row<U: Unit, const LOG: bool>(x: &[f32], out: &mut [MaybeUninit<f32>]) {
    let n = x.len();
    let mut blocks = x.chunks_exact(LANES);
    let first = U::splat(x[0]);
    let (mut top, mut low, mut nan) = (first, first, U::none());
    let mut scan = |v: U::F| {
        top = U::larger(top, v);
        low = U::smaller(low, v);
        nan = U::or(nan, U::nan(v));
    };
    for b in &mut blocks {
        // SAFETY: 16 elements.
        scan(unsafe { U::load(b.as_ptr()) });
    }
    if !blocks.remainder().is_empty() {
        let mut pad = [x[0]; 16];
        pad[..blocks.remainder().len()].copy_from_slice(blocks.remainder());
        scan(U::from(pad));
    }
    let (t, l) = (U::lanes(top), U::lanes(low));
    let m = fold_by(t, |a, b| if b > a { b } else { a });
    let lo = fold_by(l, |a, b| if b < a { b } else { a });
    if U::any(nan) || !m.is_finite() {
        out.fill(MaybeUninit::new(f32::NAN));
        return;
    }
    // Whether some lane falls below the lane form's range (f32 subtraction is monotonic).
    let below = lo - m;
    let careful = below < EXP_MIN || below.is_nan();
    let mut k = 0usize;
    let t = if careful {
        tree_sum(
            n,
            #[inline(always)]
            |at, len| f32_leaf::<U, LOG, true>(&x[at..at + len], &mut out[at..at + len], m, &mut k),
            |a, b| a + b,
        )
    } else {
        tree_sum(
            n,
            #[inline(always)]
            |at, len| {
                f32_leaf::<U, LOG, false>(&x[at..at + len], &mut out[at..at + len], m, &mut k)
            },
            |a, b| a + b,
        )
    };
    let mut xs = x.chunks_exact(LANES);
    let mut os = out.chunks_exact_mut(LANES);
    if LOG {
        let l = log_sum(k, t);
        let (mv, lv) = (U::dsplat(m as f64), U::dsplat(l));
        for (xb, ob) in (&mut xs).zip(&mut os) {
            // SAFETY: 16 elements each.
            let y = log_out::<U>(unsafe { U::load(xb.as_ptr()) }, mv, lv);
            unsafe { U::store(ob.as_mut_ptr() as *mut f32, y) };
        }
        for (o, &v) in os.into_remainder().iter_mut().zip(xs.remainder()) {
            o.write(((v as f64 - m as f64) - l) as f32);
        }
    } else {
        let (hi, lo) = split_inverse(t);
        let (hv, lv) = (U::splat(hi), U::splat(lo));
        for ob in &mut os {
            let p = ob.as_mut_ptr() as *mut f32;
            // SAFETY: 16 elements, written by the exponential pass.
            unsafe { U::store(p, scale::<U>(U::load(p), hv, lv)) };
        }
        for o in os.into_remainder() {
            // SAFETY: written by the exponential pass.
            let e = unsafe { o.assume_init() };
            o.write(e.mul_add(hi, e * lo));
        }
    }
}

/// Lanes folded by halves (`a[k] = f(a[k], a[k + 8])`, then `+ 4`, `+ 2`, `+ 1`).
#[inline(always)]
fn fold_by(mut a: [f32; 16], f: impl Fn(f32, f32) -> f32) -> f32 {
    let mut half = 8;
    while half > 0 {
        for k in 0..half {
            a[k] = f(a[k], a[k + half]);
        }
        half /= 2;
    }
    a[0]
}

/// One leaf of a row (`x`, at most [`LEAF`](super::mvn::LEAF) elements): Softmax writes the
/// exponentials to `out` and returns their sum; LogSoftmax returns the sum of those below the
/// maximum and counts the others into `k`. The blocks' lanes are the accumulators of
/// [`lanes_sum`](super::mvn::lanes_sum)'s order; the last elements (fewer than 16) go through
/// one more block padded with −inf (terms of 0, which leave the sums as they are).
#[inline(always)]
fn f32_leaf<U: Unit, const LOG: bool, const CAREFUL: bool>(
    x: &[f32],
    out: &mut [MaybeUninit<f32>],
    m: f32,
    k: &mut usize,
) -> f64 {
    let (mv, neg) = (U::splat(m), U::splat(-m));
    let mut acc = U::dzero();
    let mut add = |e: U::F, d: U::F| {
        if LOG {
            let top = U::eq(d, U::splat(0.0));
            *k += U::count(top) as usize;
            acc = U::dadd(acc, U::widen(U::select(top, U::splat(0.0), e)));
        } else {
            acc = U::dadd(acc, U::widen(e));
        }
    };
    let mut xs = x.chunks_exact(LANES);
    let mut os = out.chunks_exact_mut(LANES);
    for (xb, ob) in (&mut xs).zip(&mut os) {
        // SAFETY: 16 elements each.
        let (e, d) = exp_block::<U, CAREFUL>(unsafe { U::load(xb.as_ptr()) }, mv, neg);
        if !LOG {
            unsafe { U::store(ob.as_mut_ptr() as *mut f32, e) };
        }
        add(e, d);
    }
    let rest = xs.remainder();
    if !rest.is_empty() {
        let mut pad = [f32::NEG_INFINITY; 16];
        pad[..rest.len()].copy_from_slice(rest);
        let (e, d) = exp_block::<U, true>(U::from(pad), mv, neg);
        if !LOG {
            for (o, &v) in os.into_remainder().iter_mut().zip(&U::lanes(e)) {
                o.write(v);
            }
        }
        add(e, d);
    }
    fold(U::dlanes(acc))
}

/// Softmax (`LOG` false) or LogSoftmax of f32 columns: the data is `[outer, n, inner]`.
/// Columns are taken in panels of up to `16 · strips` side by side: the panel's rows are read
/// once (contiguous runs of the rows, with the next panel's prefetched) into a scratch buffer
/// laid out strip by strip, each strip of 16 columns is computed there (a column per lane),
/// and the panel's rows are written once. (Computing a strip in place, `n` rows apart, left
/// most of the time waiting on memory: rows 16 KiB apart fall in the same cache sets.)
struct SoftCols<'a> {
    log: bool,
    x: &'a [f32],
    n: usize,
    inner: usize,
    /// Columns per panel.
    width: usize,
}

/// Strips of 16 columns per panel at most, and the panel's scratch space in f32: 16 strips,
/// or as many as keep the buffer near 64 KiB.
fn panel_strips(n: usize) -> usize {
    (1024 / n.max(1)).clamp(1, 16)
}

impl SoftCols<'_> {
    /// The panel from column `c0` of slab `o` (`cols` columns), written to `out`; `buf` is
    /// scratch space.
    #[inline(always)]
    fn panel<U: Unit>(&self, o: usize, c0: usize, out: &Scatter<'_, f32>, buf: &mut Vec<f32>) {
        if self.log {
            self.panel_in::<U, true>(o, c0, out, buf)
        } else {
            self.panel_in::<U, false>(o, c0, out, buf)
        }
    }

    #[inline(always)]
    fn panel_in<U: Unit, const LOG: bool>(
        &self,
        o: usize,
        c0: usize,
        out: &Scatter<'_, f32>,
        buf: &mut Vec<f32>,
    ) {
        let (n, inner) = (self.n, self.inner);
        let base = o * n * inner;
        let slab = &self.x[base..base + n * inner];
        let cols = (inner - c0).min(self.width);
        let strips = cols.div_ceil(W);
        if buf.len() < strips * n * W {
            buf.resize(strips * n * W, 0.0);
        }
        let more = c0 + cols < inner;
        // Pass 1: the rows into the buffer, with each strip's maximum, minimum and NaN.
        let mut state = [(U::splat(0.0), U::splat(0.0), U::none()); 16];
        for j in 0..n {
            let row = &slab[j * inner + c0..j * inner + c0 + cols];
            if more {
                for s in 0..strips {
                    let at = j * inner + c0 + cols + W * s;
                    prefetch(slab.as_ptr().wrapping_add(at), out.address(base + at));
                }
            }
            for (s, (top, low, nan)) in state.iter_mut().enumerate().take(strips) {
                let part = &row[W * s..(W * s + W).min(cols)];
                let v = if part.len() == W {
                    // SAFETY: 16 elements.
                    unsafe { U::load(part.as_ptr()) }
                } else {
                    let mut pad = [0f32; W];
                    pad[..part.len()].copy_from_slice(part);
                    U::from(pad)
                };
                let at = (s * n + j) * W;
                // SAFETY: `at + 16 ≤ strips · n · 16 ≤ buf.len()`.
                unsafe { U::store(buf[at..at + W].as_mut_ptr(), v) };
                if j == 0 {
                    (*top, *low) = (v, v);
                }
                *top = U::larger(*top, v);
                *low = U::smaller(*low, v);
                *nan = U::or(*nan, U::nan(v));
            }
        }
        // Pass 2: each strip in the buffer.
        for (s, &(top, low, nan)) in state.iter().enumerate().take(strips) {
            strip::<U, LOG>(&mut buf[s * n * W..(s + 1) * n * W], top, low, nan);
        }
        // Pass 3: the rows out.
        for j in 0..n {
            for s in 0..strips {
                let w = (cols - W * s).min(W);
                let at = (s * n + j) * W;
                // SAFETY: these columns are this task's own (`for_panels`).
                unsafe { out.put(base + j * inner + c0 + W * s, &buf[at..at + w]) };
            }
        }
    }
}

/// One strip of 16 columns in the buffer (`n` rows of 16): its maximum `top`, minimum `low`
/// and NaN flags in; the outputs out, in place.
#[inline(always)]
fn strip<U: Unit, const LOG: bool>(b: &mut [f32], top: U::F, low: U::F, nan: U::M) {
    let n = b.len() / W;
    // Columns with a NaN or an infinite maximum are NaN: computed with 0 for the maximum
    // (harmlessly), then overwritten.
    let bad = U::or(nan, U::nan(U::sub(top, top)));
    let zero = U::splat(0.0);
    let m = U::select(bad, zero, top);
    let d = U::sub(U::select(bad, zero, low), m);
    // (`d` is −inf where the minimum is, and 0 in the bad columns.)
    let careful = U::any(U::lt(d, U::splat(EXP_MIN)));
    let t = if careful {
        strip_sums::<U, LOG, true>(b, m)
    } else {
        strip_sums::<U, LOG, false>(b, m)
    };
    let nanv = U::splat(f32::NAN);
    let ptr = b.as_mut_ptr();
    let bad_l = U::lanes(U::select(bad, U::splat(1.0), zero));
    if LOG {
        let (sum, k) = (U::dlanes(t.0), U::dlanes(t.1));
        let l: [f64; 16] = std::array::from_fn(|c| {
            if bad_l[c] != 0.0 {
                f64::NAN
            } else {
                log_sum(k[c] as usize, sum[c])
            }
        });
        let (mw, lv) = (U::widen(m), U::dfrom(l));
        for j in 0..n {
            // SAFETY: row `j` of the strip.
            unsafe {
                let p = ptr.add(j * W);
                U::store(p, log_out::<U>(U::load(p), mw, lv));
            }
        }
    } else {
        let sum = U::dlanes(t.0);
        let parts: [(f32, f32); 16] = std::array::from_fn(|c| split_inverse(sum[c]));
        let hv = U::from(std::array::from_fn(|c| parts[c].0));
        let lv = U::from(std::array::from_fn(|c| parts[c].1));
        for j in 0..n {
            // SAFETY: row `j` of the strip.
            unsafe {
                let p = ptr.add(j * W);
                U::store(p, U::select(bad, nanv, scale::<U>(U::load(p), hv, lv)));
            }
        }
    }
}

/// The sums of a strip's columns in the order of [`col_tree`](super::mvn::col_tree) (row `j`
/// of a leaf into accumulator `j mod 16`, the accumulators folded by halves): Softmax, the
/// exponentials (written over the data) and nothing; LogSoftmax, the terms below the
/// maximum and the counts of those equal to it.
#[inline(always)]
fn strip_sums<U: Unit, const LOG: bool, const CAREFUL: bool>(
    b: &mut [f32],
    m: U::F,
) -> (U::D, U::D) {
    let n = b.len() / W;
    let neg = U::sub(U::splat(0.0), m);
    let ptr = b.as_mut_ptr();
    let mut count = U::dzero();
    let sum = tree_sum(
        n,
        #[inline(always)]
        |at, len| {
            let mut acc = [U::dzero(); LANES];
            for j in at..at + len {
                // SAFETY: row `j < n` of the strip.
                let p = unsafe { ptr.add(j * W) };
                let (e, d) = exp_block::<U, CAREFUL>(unsafe { U::load(p) }, m, neg);
                let a = &mut acc[(j - at) % LANES];
                if LOG {
                    let top = U::eq(d, U::splat(0.0));
                    count = U::dadd(
                        count,
                        U::widen(U::select(top, U::splat(1.0), U::splat(0.0))),
                    );
                    *a = U::dadd(*a, U::widen(U::select(top, U::splat(0.0), e)));
                } else {
                    unsafe { U::store(p, e) };
                    *a = U::dadd(*a, U::widen(e));
                }
            }
            let mut half = LANES / 2;
            while half > 0 {
                for k in 0..half {
                    acc[k] = U::dadd(acc[k], acc[k + half]);
                }
                half /= 2;
            }
            acc[0]
        },
        U::dadd,
    );
    (sum, count)
}

/// Prefetches the line at `x` (to read) and at `o` (to write), for the next panel.
#[inline(always)]
fn prefetch(x: *const f32, o: *const f32) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch never faults, whatever the address.
    unsafe {
        use std::arch::x86_64::{_MM_HINT_ET1, _MM_HINT_T1, _mm_prefetch};
        _mm_prefetch::<_MM_HINT_T1>(x as *const i8);
        _mm_prefetch::<_MM_HINT_ET1>(o as *const i8);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (x, o);
}

/// f32 Softmax or LogSoftmax of `x` (not empty) along an axis of `n` with `inner` elements
/// after it.
fn run_f32(
    cx: &EvalCx<'_>,
    x: &Tensor,
    n: usize,
    inner: usize,
    log: bool,
) -> Result<Tensor, EvalError> {
    if inner == 1 {
        return rows_f32(&SoftRows { log }, x, n);
    }
    let data = super::kernel::contiguous::<f32>(x).ok_or(EvalError::Internal("the data's type"))?;
    let outer = data.len() / (n * inner);
    let threads = rayon::current_num_threads();
    // Panels as wide as the buffer allows, narrower while there are too few for the threads
    // (a column's result does not depend on its panel).
    let mut strips = panel_strips(n);
    while strips > 1 && outer * inner.div_ceil(W * strips) < 4 * threads {
        strips /= 2;
    }
    let width = W * strips;
    let scratch = (n as u64)
        .saturating_mul((W * strips * 4) as u64)
        .saturating_mul(threads as u64);
    cx.reserve_bytes(
        "the output and Softmax's scratch space",
        scratch.saturating_add(x.bytes()),
    )?;
    let kernel = SoftCols {
        log,
        x: &data,
        n,
        inner,
        width,
    };
    let len = data.len();
    let mut out: Vec<f32> = Vec::with_capacity(len);
    let scatter = Scatter::uninit(&mut out.spare_capacity_mut()[..len]);
    let panels = inner.div_ceil(width);
    let tasks = outer * panels;
    struct Part<'a, 'b> {
        kernel: &'a SoftCols<'a>,
        out: &'a Scatter<'b, f32>,
        tasks: std::ops::Range<usize>,
        panels: usize,
        buf: &'a mut Vec<f32>,
    }
    impl blocks::Task for Part<'_, '_> {
        type Out = ();
        #[inline(always)]
        fn run<U: Unit>(self) {
            for t in self.tasks {
                let (o, c0) = (t / self.panels, (t % self.panels) * self.kernel.width);
                self.kernel.panel::<U>(o, c0, self.out, self.buf);
            }
        }
    }
    let parts = if len < super::kernel::PARALLEL_MIN || threads <= 1 {
        1
    } else {
        (threads * 4).min(tasks)
    };
    let per = tasks.div_ceil(parts);
    (0..parts)
        .into_par_iter()
        .for_each_init(Vec::new, |buf, p| {
            blocks::on_unit(Part {
                kernel: &kernel,
                out: &scatter,
                tasks: p * per..((p + 1) * per).min(tasks),
                panels,
                buf,
            })
        });
    // SAFETY: the panels cover every column of every slab, and each wrote all its rows.
    unsafe { out.set_len(len) };
    super::kernel::tensor_from(x.shape(), out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dtype::ElementType;
    use crate::ops::context::{eval_for_test, inferred_shape_for_test, tensor_for_test};
    use crate::ops::mvn::tests::{Rng, ulps_f32};
    use crate::shape::PartialShape;
    use crate::tensor::Element;

    fn t<T: Element>(shape: &[usize], v: Vec<T>) -> Tensor {
        tensor_for_test(shape, v)
    }

    fn op(version: u32, axis: i64) -> Softmax {
        Softmax { version, axis }
    }

    fn run(o: &Softmax, x: Tensor) -> Result<Tensor, EvalError> {
        eval_for_test(o, &[x], 1 << 28)
    }

    use crate::ops::context::f32s_for_test as f32s;

    /// Softmax (`log` false) or LogSoftmax of one row in float64.
    fn reference(xs: &[f32], log: bool) -> Vec<f64> {
        let x: Vec<f64> = xs.iter().map(|&v| v as f64).collect();
        if x.iter().any(|v| v.is_nan()) {
            return vec![f64::NAN; x.len()];
        }
        let m = x.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        if !m.is_finite() {
            return vec![f64::NAN; x.len()];
        }
        let k = x.iter().filter(|&&v| v == m).count() as f64;
        let others: f64 = x.iter().filter(|&&v| v != m).map(|&v| (v - m).exp()).sum();
        if log {
            let l = if k == 1.0 {
                others.ln_1p()
            } else {
                k.ln() + (others / k).ln_1p()
            };
            x.iter().map(|&v| (v - m) - l).collect()
        } else {
            x.iter().map(|&v| (v - m).exp() / (k + others)).collect()
        }
    }

    /// Hand-computed (numpy: `e = np.exp(x - x.max(axis, keepdims=True)); e / e.sum(axis,
    /// keepdims=True)`, and its log).
    #[test]
    fn table() {
        let x = t(&[2, 3], vec![1f32, 2.0, 3.0, 1.0, 1.0, 1.0]);
        let (e1, e2) = (1f64.exp(), 2f64.exp());
        let s = 1.0 + e1 + e2;
        let rows = vec![1.0 / s, e1 / s, e2 / s, 1.0 / 3.0, 1.0 / 3.0, 1.0 / 3.0];
        // Along axis 0: the columns [1, 1], [2, 1], [3, 1].
        let (a, b) = (1.0 / (1.0 + (-1f64).exp()), 1.0 / (1.0 + (-2f64).exp()));
        let cols = vec![0.5, a, b, 0.5, 1.0 - a, 1.0 - b];
        let ln = |v: &Vec<f64>| v.iter().map(|x| x.ln()).collect::<Vec<_>>();
        for (o, want) in [
            (op(1, 1), rows.clone()),
            (op(8, -1), rows.clone()),
            (op(8, 0), cols.clone()),
            (op(1, 0), cols.clone()),
            (op(5, 1), ln(&rows)),
            (op(5, -2), ln(&cols)),
        ] {
            let got = f32s(&run(&o, x.clone()).unwrap());
            let bound = if o.version == 5 {
                LOG_BOUND
            } else {
                SOFT_BOUND
            };
            for (k, (&g, &w)) in got.iter().zip(&want).enumerate() {
                assert!(ulps_f32(g, w) <= bound, "{o:?} element {k}: {g} vs {w}");
            }
        }
    }

    #[test]
    fn special_values() {
        let inf = f32::INFINITY;
        let nan = f32::NAN;
        let rows: &[(&[f32], &[f32], &[f32])] = &[
            // (row, softmax, log softmax)
            (&[nan, 1.0, 2.0], &[nan, nan, nan], &[nan, nan, nan]),
            (&[inf, 1.0, -inf], &[nan, nan, nan], &[nan, nan, nan]),
            (&[-inf, -inf], &[nan, nan], &[nan, nan]),
            (&[-inf, 0.0, -inf], &[0.0, 1.0, 0.0], &[-inf, 0.0, -inf]),
            (&[5.0], &[1.0], &[0.0]),
            (&[-inf], &[nan], &[nan]),
            (&[3e38, -3e38], &[1.0, 0.0], &[0.0, -inf]),
            (
                &[1e30, 1e30],
                &[0.5, 0.5],
                &[-std::f32::consts::LN_2, -std::f32::consts::LN_2],
            ),
            (
                &[-0.0, 0.0],
                &[0.5, 0.5],
                &[-std::f32::consts::LN_2, -std::f32::consts::LN_2],
            ),
            (&[0.0, -100.0], &[1.0, 3.7835e-44], &[-3.7835e-44, -100.0]),
            // f32 drops the terms of `d ≤ −104` (below 2^-150, half the least f32) from the
            // sum: the maximum's LogSoftmax is +0, where the exact −6.8e-46 rounds to −0.
            (&[0.0, -104.0], &[1.0, 0.0], &[0.0, -104.0]),
            (&[0.0, -103.9], &[1.0, 1.4e-45], &[-1.4e-45, -103.9]),
        ];
        for &(row, soft, logs) in rows {
            for (version, want) in [(8, soft), (5, logs)] {
                let n = row.len();
                // As a row and as a column.
                let got = f32s(&run(&op(version, -1), t(&[1, n], row.to_vec())).unwrap());
                let col = f32s(&run(&op(version, 0), t(&[n, 1, 1], row.to_vec())).unwrap());
                let col2 = f32s(
                    &run(
                        &op(version, 0),
                        t(&[n, 2], row.iter().flat_map(|&v| [v, v]).collect()),
                    )
                    .unwrap(),
                );
                for (k, &w) in want.iter().enumerate() {
                    for g in [got[k], col[k], col2[2 * k], col2[2 * k + 1]] {
                        assert!(
                            g.to_bits() == w.to_bits() || (g.is_nan() && w.is_nan()),
                            "{version} {row:?}: element {k} is {g}, want {w}"
                        );
                    }
                }
            }
        }
        // Equal elements: 1/n exactly rounded; −ln n.
        let got = f32s(&run(&op(8, 0), t(&[7], vec![2.5f32; 7])).unwrap());
        assert!(got.iter().all(|&v| v == (1.0f64 / 7.0) as f32));
        let got = f32s(&run(&op(5, 0), t(&[7], vec![2.5f32; 7])).unwrap());
        assert!(got.iter().all(|&v| v == (-(7f64.ln())) as f32));
        // Empty data, and an empty axis.
        assert_eq!(
            run(&op(8, 1), t(&[2, 0], Vec::<f32>::new()))
                .unwrap()
                .shape(),
            [2, 0]
        );
        assert_eq!(
            run(&op(8, 0), t(&[0, 3], Vec::<f32>::new()))
                .unwrap()
                .shape(),
            [0, 3]
        );
    }

    /// The bounds asserted on f32 results, in ulps against the float64 result: the largest
    /// errors measured over the rows of `f32_accuracy_against_float64` run for 30 rounds
    /// (`OVIR_SOFTMAX_ROUNDS=30`, 11.8 million outputs: 1.69 ulp for Softmax, 1.61 for
    /// LogSoftmax), with some room.
    const SOFT_BOUND: f64 = 2.0;
    const LOG_BOUND: f64 = 2.0;

    /// Random rows of many lengths and scales: the largest error in ulps of f32 against the
    /// float64 result, for Softmax and LogSoftmax, as rows and as columns (the same bits).
    #[test]
    fn f32_accuracy_against_float64() {
        let mut rng = Rng(42);
        let mut worst = [0.0f64; 2];
        let mut count = 0usize;
        let rounds = std::env::var("OVIR_SOFTMAX_ROUNDS").map_or(3, |v| v.parse().unwrap());
        for _ in 0..rounds {
            for &n in &[
                1usize, 2, 3, 5, 16, 17, 31, 100, 128, 255, 256, 257, 1000, 4097,
            ] {
                for &scale in &[1e-3, 0.1, 1.0, 3.0, 5.0, 20.0, 100.0, 1e4] {
                    for variant in 0..4 {
                        let xs: Vec<f32> = (0..n)
                            .map(|i| {
                                let v = scale * rng.normal();
                                match variant {
                                    1 if i % 7 == 3 => f32::NEG_INFINITY,
                                    2 => (1e30 + v * 1e24) as f32,
                                    3 => (v.round() / 4.0) as f32,
                                    _ => v as f32,
                                }
                            })
                            .collect();
                        for (slot, version) in [(0, 8), (1, 5)] {
                            let want = reference(&xs, version == 5);
                            let got = run(&op(version, 1), t(&[1, n], xs.clone())).unwrap();
                            // The same values as a column of [n, 3].
                            let cols: Vec<f32> = xs.iter().flat_map(|&v| [v, v, v]).collect();
                            let got_c = run(&op(version, 0), t(&[n, 3], cols)).unwrap();
                            let gc = f32s(&got_c);
                            for (k, (&g, &w)) in f32s(&got).iter().zip(&want).enumerate() {
                                assert_eq!(g.to_bits(), gc[3 * k].to_bits(), "row and column");
                                let u = ulps_f32(g, w);
                                assert!(u.is_finite(), "n {n} scale {scale}: {g} vs {w}");
                                worst[slot] = worst[slot].max(u);
                                count += 1;
                            }
                        }
                    }
                }
            }
        }
        eprintln!(
            "Softmax f32: worst {} ulp; LogSoftmax f32: worst {} ulp; {count} outputs",
            worst[0], worst[1]
        );
        assert!(worst[0] <= SOFT_BOUND && worst[1] <= LOG_BOUND, "{worst:?}");
    }

    #[test]
    fn other_types() {
        let mut rng = Rng(5);
        let xs: Vec<f64> = (0..500).map(|_| 3.0 * rng.normal()).collect();
        for version in [8, 5] {
            let log = version == 5;
            // f64 against a float64 computation: a few ulp of f64.
            let got = run(&op(version, 0), t(&[500], xs.clone())).unwrap();
            let m = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let s: f64 = xs.iter().map(|v| (v - m).exp()).sum();
            for (&g, &x) in got.view::<f64>().unwrap().iter().zip(&xs) {
                let w = if log {
                    (x - m) - s.ln()
                } else {
                    (x - m).exp() / s
                };
                assert!(
                    (g - w).abs() <= 8.0 * f64::EPSILON * w.abs().max(1e-300) + 1e-15,
                    "{g} {w}"
                );
            }
            // f16 and bf16: the float64 result rounded once (ties aside).
            let h: Vec<f16> = xs.iter().map(|&v| f16::from_f64(v)).collect();
            let hf: Vec<f32> = h.iter().map(|v| v.to_f32()).collect();
            let want = reference(&hf, log);
            let got = run(&op(version, 0), t(&[500], h)).unwrap();
            for (&g, &w) in got.view::<f16>().unwrap().iter().zip(&want) {
                assert_eq!(g, f16::from_f64(w), "{w}");
            }
            let b: Vec<bf16> = xs.iter().map(|&v| bf16::from_f64(v)).collect();
            let bf: Vec<f32> = b.iter().map(|v| v.to_f32()).collect();
            let want = reference(&bf, log);
            let got = run(&op(version, -1), t(&[1, 500], b)).unwrap();
            for (&g, &w) in got.view::<bf16>().unwrap().iter().zip(&want) {
                assert_eq!(g, bf16::from_f64(w), "{w}");
            }
        }
    }

    /// The same bits with 1 and 4 threads, for rows and columns, on tensors large enough to
    /// split; and the same bits as rows and as columns.
    #[test]
    fn same_bits_at_any_thread_count() {
        let mut rng = Rng(9);
        let pool = |k| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(k)
                .build()
                .unwrap()
        };
        let (a, n, c) = (8usize, 600usize, 40usize);
        let x: Vec<f32> = (0..a * n * c)
            .map(|_| (4.0 * rng.normal()) as f32)
            .collect();
        let arr = ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(&[a, n, c]), x).unwrap();
        let moved = arr
            .view()
            .permuted_axes(vec![0, 2, 1])
            .as_standard_layout()
            .into_owned();
        for version in [8, 5] {
            let cols = |k: usize| {
                pool(k).install(|| run(&op(version, 1), Tensor::F32(arr.clone())).unwrap())
            };
            let rows = |k: usize| {
                pool(k).install(|| run(&op(version, 2), Tensor::F32(moved.clone())).unwrap())
            };
            let (c1, r1) = (cols(1), rows(1));
            assert_eq!(c1.to_le_bytes(), cols(4).to_le_bytes());
            assert_eq!(r1.to_le_bytes(), rows(4).to_le_bytes());
            let back = r1
                .view::<f32>()
                .unwrap()
                .permuted_axes(vec![0, 2, 1])
                .as_standard_layout()
                .into_owned();
            assert_eq!(Tensor::F32(back).to_le_bytes(), c1.to_le_bytes());
        }
    }

    /// Rows of f32 for the layout and unit tests: normal values of several scales, with
    /// masked (−inf) elements, values whose exponential is subnormal (the careful path), and
    /// a row with a NaN and one with +inf.
    fn hard_rows(rows: usize, n: usize, seed: u64) -> Vec<f32> {
        let mut rng = Rng(seed);
        let mut x: Vec<f32> = (0..rows * n)
            .map(|i| {
                let scale = [1.0, 8.0, 40.0][(i / n) % 3];
                let v = (scale * rng.normal()) as f32;
                if i % 11 == 5 { f32::NEG_INFINITY } else { v }
            })
            .collect();
        if rows > 4 && n > 2 {
            x[3 * n + 1] = f32::NAN;
            x[4 * n + 2] = f32::INFINITY;
        }
        x
    }

    /// Every panel of [`SoftCols`] over `x` (`[outer, n, inner]`) on every vector unit this
    /// CPU has, the baseline first.
    fn cols_on_every_unit(
        log: bool,
        x: &[f32],
        n: usize,
        inner: usize,
        width: usize,
    ) -> Vec<Vec<f32>> {
        use blocks::{Scalar, Task};
        struct On<'a> {
            k: &'a SoftCols<'a>,
        }
        impl Task for On<'_> {
            type Out = Vec<f32>;
            fn run<U: Unit>(self) -> Vec<f32> {
                let k = self.k;
                let mut out = vec![0f32; k.x.len()];
                let sc = Scatter::new(&mut out);
                let mut buf = Vec::new();
                let panels = k.inner.div_ceil(k.width);
                for t in 0..k.x.len() / (k.n * k.inner) * panels {
                    k.panel::<U>(t / panels, (t % panels) * k.width, &sc, &mut buf);
                }
                out
            }
        }
        let k = SoftCols {
            log,
            x,
            n,
            inner,
            width,
        };
        let mut all = vec![On { k: &k }.run::<Scalar>()];
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::is_x86_feature_detected as has;
            if has!("avx2") && has!("fma") {
                // SAFETY: the features were detected.
                all.push(unsafe { blocks::on_avx2(On { k: &k }) });
            }
            if has!("avx512f") && has!("avx512vl") && has!("avx512bw") && has!("avx512dq") {
                // SAFETY: as above.
                all.push(unsafe { blocks::on_avx512(On { k: &k }) });
            }
        }
        all
    }

    fn bits(v: &[f32]) -> Vec<u32> {
        v.iter().map(|x| x.to_bits()).collect()
    }

    /// The f32 kernels give the same bits on every vector unit (rows, and columns in panels
    /// of several widths), and the columns the same bits as the rows.
    #[test]
    fn same_bits_on_every_vector_unit() {
        for log in [false, true] {
            for &n in &[1usize, 3, 16, 29, 300] {
                let rows = 40;
                let x = hard_rows(rows, n, 17 + n as u64);
                let by_row = crate::ops::mvn::tests::rows_on_every_unit(&SoftRows { log }, &x, n);
                for r in &by_row[1..] {
                    assert_eq!(bits(r), bits(&by_row[0]), "rows of {n}, log {log}");
                }
                // The same groups as columns: [2, n, 20].
                let mut cols = vec![0f32; x.len()];
                for (g, row) in x.chunks_exact(n).enumerate() {
                    let (o, c) = (g / 20, g % 20);
                    for (j, &v) in row.iter().enumerate() {
                        cols[o * n * 20 + j * 20 + c] = v;
                    }
                }
                for width in [16, 32, 256] {
                    for got in cols_on_every_unit(log, &cols, n, 20, width) {
                        for g in 0..rows {
                            let (o, c) = (g / 20, g % 20);
                            for j in 0..n {
                                let (a, b) = (got[o * n * 20 + j * 20 + c], by_row[0][g * n + j]);
                                assert_eq!(a.to_bits(), b.to_bits(), "n {n} width {width}");
                            }
                        }
                    }
                }
            }
        }
    }

    /// Columns wider than a panel (several panels, the last one partial), at 1 and 4 threads
    /// (which cut the panels differently), give the bits of the same groups as rows.
    #[test]
    fn columns_in_panels_match_rows() {
        let (a, n, c) = (3usize, 5usize, 600usize);
        let x = hard_rows(a * c, n, 23);
        // Group g = (o, col) is row g of `x`; lay it out as [a, n, c].
        let mut cols = vec![0f32; x.len()];
        for (g, row) in x.chunks_exact(n).enumerate() {
            let (o, col) = (g / c, g % c);
            for (j, &v) in row.iter().enumerate() {
                cols[o * n * c + j * c + col] = v;
            }
        }
        let pool = |k| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(k)
                .build()
                .unwrap()
        };
        for version in [8, 5] {
            let rows = f32s(&run(&op(version, -1), t(&[a * c, n], x.clone())).unwrap());
            for threads in [1, 4] {
                let got = pool(threads)
                    .install(|| run(&op(version, 1), t(&[a, n, c], cols.clone())))
                    .unwrap();
                let got = f32s(&got);
                for (g, row) in rows.chunks_exact(n).enumerate() {
                    let (o, col) = (g / c, g % c);
                    for (j, &v) in row.iter().enumerate() {
                        assert_eq!(got[o * n * c + j * c + col].to_bits(), v.to_bits());
                    }
                }
            }
        }
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
        let ok = |v, a| Ok(format!("{:?}", op(v, a)));
        assert_eq!(parsed(&SOFTMAX_1, &[]), ok(1, 1));
        assert_eq!(parsed(&SOFTMAX_1, &[("axis", "3")]), ok(1, 3));
        assert_eq!(
            parsed(&SOFTMAX_1, &[("axis", "-1")]),
            Err(vec!["axis: Softmax-1 takes an axis of 0 or more, not -1 (Softmax-8 counts negative axes from the end)".into()])
        );
        assert_eq!(parsed(&SOFTMAX_8, &[("axis", "-1")]), ok(8, -1));
        assert_eq!(parsed(&SOFTMAX_8, &[]), ok(8, 1));
        assert_eq!(parsed(&LOG_SOFTMAX_5, &[("axis", "-2")]), ok(5, -2));
        assert_eq!(
            parsed(&LOG_SOFTMAX_5, &[("axis", "x")]),
            Err(vec!["axis: expected an integer".into()])
        );
    }

    #[test]
    fn infer_table() {
        let ty = |s: &str, e| TensorType::new(e, PartialShape::parse(s).unwrap());
        let f = ElementType::F32;
        for (o, shape, want) in [
            (op(8, -1), "2,?,1..5", Ok("[2,?,1..5]")),
            (op(1, 1), "...", Ok("[...]")),
            (op(5, -3), "4,5,6", Ok("[4,5,6]")),
            (
                op(8, 3),
                "4,5,6",
                Err("axis 3 is out of range for data of rank 3 (-3..2)"),
            ),
            (
                op(1, 2),
                "4,?",
                Err("axis 2 is out of range for data of rank 2 (0..1)"),
            ),
            (
                op(5, -4),
                "4,..5,6",
                Err("axis -4 is out of range for data of rank 3 (-3..2)"),
            ),
            (
                op(8, 0),
                "",
                Err("Softmax needs data of rank 1 or more, not a scalar (axis 0)"),
            ),
        ] {
            match (inferred_shape_for_test(&o, &[&ty(shape, f)]), want) {
                (Ok(s), Ok(w)) => assert_eq!(s, w),
                (Err(m), Err(w)) => assert!(m.contains(w), "{m}"),
                (got, want) => panic!("{o:?} {shape}: {got:?} vs {want:?}"),
            }
        }
        let m = inferred_shape_for_test(&op(8, 0), &[&ty("2", ElementType::I32)]).unwrap_err();
        assert!(m.contains("does not accept i32"), "{m}");
        // The same checks at execution.
        match run(&op(5, 2), t(&[2, 2], vec![0f32; 4])) {
            Err(EvalError::Invalid(m)) => {
                assert_eq!(m, "axis 2 is out of range for data of rank 2 (-2..1)")
            }
            other => panic!("{other:?}"),
        }
        match run(&op(8, 0), t(&[], vec![1f32])) {
            Err(EvalError::Invalid(m)) => assert!(m.contains("not a scalar"), "{m}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn budget() {
        // f32: rows need only the output (256 KiB); columns a panel's buffer per thread (here
        // one strip of 16 columns: the panels are narrowed to give the 3 threads 4 tasks
        // each), 256 × 16 f32. f64 (the general path): a scratch row of 256 f64 per thread;
        // as columns, 256 × 16 f64 per thread.
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(3)
            .build()
            .unwrap();
        let f = t(&[256, 256], vec![0f32; 1 << 16]);
        let d = t(&[256, 256], vec![0f64; 1 << 16]);
        for (x, axis, need) in [
            (&f, 1, 1 << 18),
            (&f, 0, (1 << 18) + 3 * 256 * 16 * 4),
            (&d, 1, (1 << 19) + 3 * 256 * 8),
            (&d, 0, (1 << 19) + 3 * 256 * 16 * 8),
        ] {
            let go = |limit| {
                pool.install(|| eval_for_test(&op(8, axis), std::slice::from_ref(x), limit))
            };
            assert!(
                matches!(go(need - 1), Err(EvalError::Memory(_))),
                "{axis} {need}"
            );
            assert!(go(need).is_ok());
        }
    }
}
