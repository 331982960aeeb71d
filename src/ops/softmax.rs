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
//! summation order of `mvn.rs` (`tree_sum`), the `k` elements equal to `m` (whose `e` is
//! exactly 1) counted apart: `S = k + T`. Softmax is `e / S`, LogSoftmax `d − L` with `L = ln
//! S = log1p(T)` for `k = 1` (`ln k + log1p(T/k)` otherwise: with `S` near 1 the logarithm
//! keeps the digits of `T`), each computed in f64 and rounded once to the type.
//! * f32, f16, bf16: `d` in f64 (exact but for values more than 2^29 apart) and `e^d` in f64
//!   to about 2^-48 relatively (`exp_wide`: `d = n ln2 + r` with `r` in `(−ln2, 0]`, `e^r =
//!   1 + expm1(r)` by the crate's branch-free [`vector::expm1_neg`], times `2^n`), vectorised;
//!   Softmax multiplies by `1/S`. Everything before the last rounding is f64, so each output
//!   is within half an ulp plus about 2^-20 ulp of the exact value (measured against float64
//!   over rows of 1 to 4097 elements, scales 1e-3 to 1e4, with −inf among them, large
//!   offsets, repeated values: at most 0.50 ulp for both ops, as rows and as columns).
//!   OpenVINO's reference computes `exp(x − m)` and the sum in the element type; its CPU
//!   plugin approximates `exp` (up to 5 ulp measured on Exp).
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
//! operations with one defined result, and the sum's order depends only on the group's length,
//! so the bits are the same at any thread count, on any vector unit, and whether the groups
//! are rows (the axis last) or columns (tested).
//!
//! Execution: with the axis last, row by row, in parallel over rows: the maximum; the
//! exponentials into a scratch row with the sum and the count, in one vectorised pass; then
//! the outputs. Otherwise the data is `[outer, n, inner]` and 16 columns are computed side by
//! side, vectorised across the columns, in parallel over those strips (no transposed copy).
//! The scratch space (a row, or `n × 16` values, of f64 per thread) is checked against the
//! memory budget with the output. Speed, measured on a copy of the row loops compiled alone
//! (AMD EPYC Zen 4, one thread, 2^24 f32 in rows of 1000): 15 ms with AVX-512, 26 ms with
//! AVX2; as columns (`[.., 1000, 64]`) 22 ms; of which the exponential pass is 11.5 ms (its
//! reduction done twice, ours and `expm1_neg`'s: a dedicated f64 form would take 7.5 ms).

use half::{bf16, f16};

use super::mvn::{LANES, Real, Scatter, W, col_tree, fold, for_columns, for_rows, tree_sum};
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
        0.0,
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

    fn f32s(t: &Tensor) -> Vec<f32> {
        t.view::<f32>().unwrap().iter().copied().collect()
    }

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
            for (k, (&g, &w)) in got.iter().zip(&want).enumerate() {
                assert!(ulps_f32(g, w) <= 0.5, "{o:?} element {k}: {g} vs {w}");
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
            (&[0.0, -104.0], &[1.0, 0.0], &[-0.0, -104.0]),
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

    /// Random rows of many lengths and scales: the largest error in ulps of f32 against the
    /// float64 result, for Softmax and LogSoftmax, as rows and as columns (the same bits).
    #[test]
    fn f32_accuracy_against_float64() {
        let mut rng = Rng(42);
        let mut worst = [0.0f64; 2];
        for &n in &[1usize, 2, 3, 5, 16, 17, 31, 100, 255, 256, 257, 1000, 4097] {
            for &scale in &[1e-3, 0.1, 1.0, 5.0, 20.0, 100.0, 1e4] {
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
                            assert_eq!(g.to_bits(), gc[3 * k].to_bits(), "row and column differ");
                            let u = ulps_f32(g, w);
                            assert!(u.is_finite(), "n {n} scale {scale}: {g} vs {w}");
                            worst[slot] = worst[slot].max(u);
                        }
                    }
                }
            }
        }
        eprintln!(
            "Softmax f32: worst {} ulp; LogSoftmax f32: worst {} ulp",
            worst[0], worst[1]
        );
        assert!(worst[0] <= 0.501 && worst[1] <= 0.501, "{worst:?}");
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
        // The output (256 KiB) and a scratch row of 256 f64 per thread; as columns, 256 × 16
        // f64 per thread.
        let x = t(&[256, 256], vec![0f32; 1 << 16]);
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(3)
            .build()
            .unwrap();
        for (axis, scratch) in [(1, 3 * 256 * 8), (0, 3 * 256 * 16 * 8)] {
            let need = (1 << 18) + scratch;
            let go = |limit| {
                pool.install(|| eval_for_test(&op(8, axis), std::slice::from_ref(&x), limit))
            };
            assert!(matches!(go(need - 1), Err(EvalError::Memory(_))));
            assert!(go(need).is_ok());
        }
    }
}
