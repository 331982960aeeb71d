//! LRN-1: local response normalisation. Each element is divided by a power of the sum of the
//! squares in a window around it: `y = x / (bias + alpha/size^n · S)^beta`, `S` the sum of
//! `x²` over the window, `n` the number of axes.
//!
//! Spec: <https://docs.openvino.ai/2026/documentation/openvino-ir-format/operation-sets/operation-specs/normalization/lrn-1.html>
//!
//! Ports: `data` (f16, bf16, f32, f64; others are refused, E502) and `axes` (any integer type,
//! 1-D: the axes the window spans; usually a Const). One output of the data's type and shape.
//! Attributes, all required: `alpha`, `beta`, `bias` (doubles in OpenVINO, and in ovir: not
//! rounded to f32; finite) and `size` (an integer ≥ 1).
//!
//! The window of an element spans, along each axis `a` of `axes`, the coordinates
//! `max(0, i − h) ..= min(dim_a − 1, i + h)` with `h = ⌊(size − 1)/2⌋`, and only the element's
//! own coordinate along the other axes (the zero padding of the spec: positions outside the
//! data add nothing). The divisor's scale is `alpha / size^n`, as both the spec and OpenVINO's
//! reference have it: `n` counts the axes, and `size` is the attribute, not the (clipped)
//! window length.
//!
//! Decisions:
//! * **An even `size` spans `size − 1` elements per axis** (`h = (size − 1)/2` on each side),
//!   as OpenVINO's reference (`lrn.hpp`) and its CPU plugin compute it (checked with OpenVINO
//!   2026.4: `size` 2 sums the element alone, `size` 4 three elements). For odd sizes every
//!   reading agrees. The spec's slice `b − size/2 : b + size/2 + 1` would span `size + 1`
//!   elements, against its own "side length `size`"; ONNX's LRN spans exactly `size`,
//!   asymmetrically (OpenVINO's ONNX frontend passes `size` on unchanged).
//! * Axes must lie in `0..rank` and be distinct (E507, at inference when the rank and values
//!   are known, and at execution). **Negative axes are refused**: the spec speaks of indices
//!   of dims, OpenVINO reads the axes as unsigned and its CPU plugin refuses `-1`. **A
//!   repeated axis is refused** (OpenVINO's axis set counts it once, its CPU plugin refuses
//!   it; ovir refuses repeated axes everywhere, as in MVN and NormalizeL2). Empty axes are
//!   allowed: each window is the element itself and the scale is `alpha`.
//! * The spec asks for a positive `beta`; ovir takes any finite `alpha`, `beta` and `bias`
//!   (the formula is defined for all; OpenVINO checks nothing), and `size ≥ 1` (0 is an
//!   attribute error: the spec asks for a positive integer). A negative base with a
//!   non-integral `beta` gives NaN, a zero base ±inf (NaN for `x = 0`), by IEEE `pow`.
//! * Arithmetic: `S` is summed in f64 (each square of an f32, f16 or bf16 exact), the window's
//!   elements in row-major order one after the other; then `d = bias + (alpha/size^n)·S`
//!   (`size^n` by repeated f64 products) and `y = x / d^beta` in f64, rounded once to the type.
//!   `d^beta` is `libm::pow` (a pure-Rust pow, the same bits on every machine), or exactly
//!   `d` for `beta = 1`, `sqrt(d)` for 0.5 and `sqrt(d)·sqrt(sqrt(d))` for 0.75 (AlexNet's and
//!   GoogLeNet's value; about 30 times faster than pow here). A −0 base is read as +0 so that
//!   every form agrees.
//! * Accuracy: for a window of `m` elements, `S` is within `(m − 1)·2^-53` relatively, and
//!   the result within `(|beta|·(m + 1) + 3)·2^-53` when `alpha` and `bias` are ≥ 0 (no
//!   cancellation in the base): f32, f16 and bf16 outputs are within half an ulp of the exact
//!   value plus `(|beta|·(m + 1) + 3)·2^-29` ulp (tested against a float64 reference for every
//!   form of `beta`, across channels, over spatial axes and over all axes: within 0.5 + 10^-6
//!   ulp), and f64 outputs within that many units of 2^-53 relatively (a few ulp).
//!
//! Inference: the output is the data's type and shape (dynamic rank and interval dims pass
//! through). The axes must be 1-D and no longer than the data's rank.
//!
//! Execution: the output is split into contiguous parts computed in parallel (above 64K
//! elements); each element's sum and result depend only on its window, so the bits do not
//! depend on the split. Within a part, outputs are computed up to 256 side by side, vectorised
//! for the widest vector unit: across the dims after the last axis (e.g. H·W for the channels
//! of NCHW), each window position adding one contiguous run of squares to the sums; or, when
//! the last axis is the last dim (spatial windows), along that dim, each line of the window
//! squared once into a zero-padded buffer and added as shifted runs (the same terms in the same
//! order, so the same bits: tested). The work is the data's size times the window's (`size^n`
//! at most): the sums are not slid, which would lose accuracy. Speed (f32 `[1, 96, 55, 55]`,
//! size 5, one thread, measured on a shared and busy machine): across channels 0.74 ms with
//! beta 0.75 and 24 ms with a general beta (libm's pow); over H and W 4.2 ms with beta 0.75.

use std::mem::MaybeUninit;

use super::kernel::{contiguous, in_parts, tensor_from, vectorised};
use super::mvn::Real;
use super::{Arity, AttrError, Attrs, EvalCx, EvalError, InferCx, Op, OpDef};
use crate::shape::TensorType;
use crate::tensor::{Tensor, TypeSet};

#[derive(Clone, Debug, PartialEq)]
pub struct Lrn {
    pub alpha: f64,
    pub beta: f64,
    pub bias: f64,
    /// At least 1.
    pub size: u64,
}

pub const LRN_1: OpDef = OpDef {
    name: "LRN",
    version: 1,
    inputs: Arity::exactly(2),
    outputs: Arity::exactly(1),
    parse,
};

fn parse_finite(text: &str) -> Result<f64, String> {
    let v: f64 = text
        .trim()
        .parse()
        .map_err(|_| "expected a number".to_owned())?;
    if v.is_finite() {
        Ok(v)
    } else {
        Err(format!("expected a finite number, not {v}"))
    }
}

fn parse_size(text: &str) -> Result<u64, String> {
    match super::parse_u64(text)? {
        0 => Err("size must be at least 1".into()),
        n => Ok(n),
    }
}

fn parse(a: &Attrs) -> Result<Box<dyn Op>, Vec<AttrError>> {
    let (alpha, beta, bias, size) = crate::attrs_all!(
        a.parse_required("alpha", parse_finite),
        a.parse_required("beta", parse_finite),
        a.parse_required("bias", parse_finite),
        a.parse_required("size", parse_size),
    )?;
    let (Some(alpha), Some(beta), Some(bias), Some(size)) = (alpha, beta, bias, size) else {
        return Err(Vec::new());
    };
    Ok(Box::new(Lrn {
        alpha,
        beta,
        bias,
        size,
    }))
}

/// The axes `values` for data of rank `rank`: each in `0..rank`, distinct; in the order given.
fn axes_of(values: &[i64], rank: usize) -> Result<Vec<usize>, String> {
    let mut out: Vec<usize> = Vec::with_capacity(values.len());
    for (i, &a) in values.iter().enumerate() {
        if a < 0 {
            return Err(format!(
                "axis {a} (axes[{i}]) is negative: LRN's axes are indices 0..{rank} of the data's dims (OpenVINO reads them as unsigned)"
            ));
        }
        let k = usize::try_from(a)
            .ok()
            .filter(|&k| k < rank)
            .ok_or_else(|| {
                format!("axis {a} (axes[{i}]) is out of range for data of rank {rank}")
            })?;
        if let Some(j) = out.iter().position(|&b| b == k) {
            return Err(format!(
                "axis {a} (axes[{i}]) repeats axes[{j}]; the axes must be distinct"
            ));
        }
        out.push(k);
    }
    Ok(out)
}

impl Op for Lrn {
    fn def(&self) -> Option<&'static OpDef> {
        Some(&LRN_1)
    }

    fn infer(&self, cx: &mut InferCx<'_>) -> Option<Vec<TensorType>> {
        cx.require(0..1, TypeSet::FLOAT)?;
        cx.require(1..2, TypeSet::INT)?;
        let (data, axes) = (cx.input(0), cx.input(1));
        let out = vec![TensorType::new(data.element_type, data.shape.clone())];
        let Some(adims) = axes.shape.dims() else {
            return Some(out);
        };
        if adims.len() != 1 {
            return cx.invalid(
                1,
                format!("the axes must be 1-D, not of shape {}", axes.shape),
            );
        }
        let Some(rank) = data.shape.rank() else {
            return Some(out);
        };
        if adims[0].min() > rank as u64 {
            return cx.invalid(
                1,
                format!("{} axes are more than the data's rank {rank}", adims[0]),
            );
        }
        if let Some(values) = cx.ints(1)
            && let Err(reason) = axes_of(&values, rank)
        {
            return cx.invalid(1, reason);
        }
        Some(out)
    }

    fn eval(&self, cx: &EvalCx<'_>) -> Result<Vec<Tensor>, EvalError> {
        let data = cx.tensor(0)?;
        let ty = data.element_type();
        let axes_shape = cx.value(1).shape().to_vec();
        if axes_shape.len() != 1 {
            return Err(EvalError::Invalid(format!(
                "the axes must be 1-D, not of shape {axes_shape:?}"
            )));
        }
        let axes = axes_of(&cx.ints(1)?, data.shape().len()).map_err(EvalError::Invalid)?;
        cx.reserve(ty, data.len())?;
        if data.is_empty() {
            return Ok(vec![(*data).clone()]);
        }
        crate::dispatch!(float: ty, T => self.run::<T>(&data, &axes).map(|t| vec![t]),
            _ => Err(EvalError::UnsupportedType { op: "LRN".into(), ty }))
    }
}

/// Columns computed side by side.
const COLS: usize = 256;

/// The largest `h` of the line mode (its padded line takes `COLS + 2h` f64s a part).
const LINE_HALF: usize = 4096;

/// Where the windows lie in a non-empty tensor. The output is cut into rows of `row_len`
/// elements computed side by side (the columns); row `r` is `(outer, j)`, `j` the row-major
/// index into `block`, the dims whose window positions an odometer walks.
///
/// * Column mode: `block` is the dims from the first to the last axis, and the columns are
///   the dims after it: every column has a window of the same shape, and each window position
///   adds one contiguous run of squares to the columns' sums.
/// * Line mode, when the last axis is the data's last dim (and `h` at most [`LINE_HALF`]):
///   `block` stops before that dim and the columns are the positions along it; each window
///   position of `block` is a line of the data, whose squares, padded with `h` zeros on each
///   side, are added to the sums as `2h + 1` shifted runs. Adding +0 to a sum of squares
///   changes nothing, so each sum takes its terms in the same order (row-major over the
///   window) as in column mode: the same bits.
struct Geometry {
    block: Vec<usize>,
    /// Whether each dim of `block` is one of the axes.
    reduced: Vec<bool>,
    /// The step of each dim of `block`, in elements.
    strides: Vec<usize>,
    /// The product of `block`.
    mid: usize,
    row_len: usize,
    /// Elements on each side of the centre, along an axis.
    half: usize,
    /// In line mode, `half` bounded by the line's length (a longer reach only adds zeros).
    line: Option<usize>,
}

impl Geometry {
    fn new(shape: &[usize], axes: &[usize], size: u64) -> Geometry {
        let half = usize::try_from((size - 1) / 2).unwrap_or(usize::MAX);
        let (first, mut last) = match (axes.iter().min(), axes.iter().max()) {
            (Some(&a), Some(&b)) => (a, b + 1),
            // No axes: one row of every element, each its own window.
            _ => (0, 0),
        };
        let mut line = None;
        if last == shape.len() && last > 0 && half.min(shape[last - 1]) <= LINE_HALF {
            line = Some(half.min(shape[last - 1]));
            last -= 1;
        }
        let block = shape[first..last].to_vec();
        let reduced = (first..last).map(|a| axes.contains(&a)).collect();
        let row_len: usize = shape[last..].iter().product();
        let mut strides = vec![0; block.len()];
        let mut step = row_len;
        for (s, &d) in strides.iter_mut().zip(&block).rev() {
            *s = step;
            step *= d;
        }
        Geometry {
            mid: block.iter().product(),
            block,
            reduced,
            strides,
            row_len,
            half,
            line,
        }
    }
}

/// One part's scratch: the window's first coordinate and length along each dim of the block,
/// the odometer over the window, the sums, and the padded line of the line mode.
struct Scratch {
    lo: Vec<usize>,
    len: Vec<usize>,
    at: Vec<usize>,
    acc: [f64; COLS],
    pad: Vec<f64>,
}

impl Lrn {
    fn run<T: Real>(&self, x: &Tensor, axes: &[usize]) -> Result<Tensor, EvalError> {
        let shape = x.shape();
        let data = contiguous::<T>(x).ok_or(EvalError::Internal("the data's type"))?;
        let g = Geometry::new(shape, axes, self.size);
        let mut power = 1.0f64;
        for _ in 0..axes.len() {
            power *= self.size as f64;
        }
        let form = Form {
            scale: self.alpha / power,
            bias: self.bias,
            beta: self.beta,
        };
        let len = data.len();
        let mut out: Vec<T> = Vec::with_capacity(len);
        in_parts(
            &mut out.spare_capacity_mut()[..len],
            1,
            |start, part| {
                let n = g.block.len();
                let mut s = Scratch {
                    lo: vec![0; n],
                    len: vec![0; n],
                    at: vec![0; n],
                    acc: [0.0; COLS],
                    pad: vec![0.0; g.line.map_or(0, |h| COLS + 2 * h)],
                };
                vectorised(
                    #[inline(always)]
                    || {
                        let mut pos = start;
                        let end = start + part.len();
                        while pos < end {
                            let (r, c0) = (pos / g.row_len, pos % g.row_len);
                            let c1 = g.row_len.min(c0 + (end - pos));
                            let o = &mut part[pos - start..pos - start + (c1 - c0)];
                            row(&data, o, &g, &form, r, c0, &mut s);
                            pos += c1 - c0;
                        }
                    },
                );
                None::<()>
            },
            |_| 0u8,
        );
        // SAFETY: `row` wrote every element of every part, and the parts cover the output.
        unsafe { out.set_len(len) };
        tensor_from(shape, out)
    }
}

/// The divisor's constants.
struct Form {
    scale: f64,
    bias: f64,
    beta: f64,
}

impl Form {
    /// `out = x / (bias + scale·s)^beta` in f64, rounded once, for each `x` and sum `s` (the
    /// form of the power chosen once for the run).
    #[inline(always)]
    fn finish<T: Real>(&self, out: &mut [MaybeUninit<T>], x: &[T], sums: &[f64]) {
        #[inline(always)]
        fn each<T: Real>(
            f: &Form,
            out: &mut [MaybeUninit<T>],
            x: &[T],
            sums: &[f64],
            power: impl Fn(f64) -> f64,
        ) {
            for ((o, &v), &s) in out.iter_mut().zip(x).zip(sums) {
                // + 0: a −0 base becomes +0, so that pow and the square roots agree on it.
                let d = f.bias + f.scale * s + 0.0;
                o.write(T::narrow(v.wide() / power(d)));
            }
        }
        if self.beta == 1.0 {
            each(self, out, x, sums, |d| d)
        } else if self.beta == 0.5 {
            each(self, out, x, sums, f64::sqrt)
        } else if self.beta == 0.75 {
            each(self, out, x, sums, |d| {
                let r = d.sqrt();
                r * r.sqrt()
            })
        } else {
            each(self, out, x, sums, |d| libm::pow(d, self.beta))
        }
    }
}

/// Columns `c0..c0 + out.len()` of row `r`.
#[inline(always)]
fn row<T: Real>(
    x: &[T],
    out: &mut [MaybeUninit<T>],
    g: &Geometry,
    form: &Form,
    r: usize,
    c0: usize,
    s: &mut Scratch,
) {
    let Scratch {
        lo,
        len,
        at,
        acc,
        pad,
    } = s;
    let (o, mut j) = (r / g.mid, r % g.mid);
    // The window along each dim of the block, from the row's coordinates.
    for k in (0..g.block.len()).rev() {
        let (d, i) = (g.block[k], j % g.block[k]);
        j /= g.block[k];
        if g.reduced[k] {
            lo[k] = i.saturating_sub(g.half);
            len[k] = d.min(i.saturating_add(g.half).saturating_add(1)) - lo[k];
        } else {
            (lo[k], len[k]) = (i, 1);
        }
    }
    let base = o * g.mid * g.row_len + lo.iter().zip(&g.strides).map(|(l, t)| l * t).sum::<usize>();
    let own = r * g.row_len;
    let mut c = c0;
    for chunk in out.chunks_mut(COLS) {
        let w = chunk.len();
        let acc = &mut acc[..w];
        acc.fill(0.0);
        at.fill(0);
        let mut off = base;
        loop {
            match g.line {
                Some(h) => add_line(&x[off..off + g.row_len], c, h, pad, acc),
                None => {
                    for (a, &v) in acc.iter_mut().zip(&x[off + c..off + c + w]) {
                        let t = v.wide();
                        *a += t * t;
                    }
                }
            }
            // The next window position, in row-major order.
            let mut k = g.block.len();
            let more = loop {
                if k == 0 {
                    break false;
                }
                k -= 1;
                at[k] += 1;
                off += g.strides[k];
                if at[k] < len[k] {
                    break true;
                }
                off -= len[k] * g.strides[k];
                at[k] = 0;
            };
            if !more {
                break;
            }
        }
        form.finish(chunk, &x[own + c..own + c + w], acc);
        c += w;
    }
}

/// Adds to `acc[q]` the squares of `line` at positions `c + q − h ..= c + q + h`, in
/// ascending order, positions outside the line as +0.
#[inline(always)]
fn add_line<T: Real>(line: &[T], c: usize, h: usize, pad: &mut [f64], acc: &mut [f64]) {
    let w = acc.len();
    let pad = &mut pad[..w + 2 * h];
    // pad[p] is position c − h + p.
    for (p, v) in pad.iter_mut().enumerate() {
        *v = match line.get((c + p).wrapping_sub(h)) {
            Some(e) => {
                let t = e.wide();
                t * t
            }
            None => 0.0,
        };
    }
    for d in 0..=2 * h {
        for (a, &v) in acc.iter_mut().zip(&pad[d..d + w]) {
            *a += v;
        }
    }
}

#[cfg(test)]
mod tests {
    use half::{bf16, f16};

    use super::*;
    use crate::dtype::ElementType;
    use crate::num::{Cast, Num};
    use crate::ops::context::{
        eval_for_test, inferred_shape_for_test, parsed_for_test, tensor_for_test,
    };
    use crate::ops::mvn::tests::{Rng, ulps_f32};
    use crate::shape::PartialShape;
    use crate::tensor::Element;

    fn t<T: Element>(shape: &[usize], v: Vec<T>) -> Tensor {
        tensor_for_test(shape, v)
    }

    fn op(alpha: f64, beta: f64, bias: f64, size: u64) -> Lrn {
        Lrn {
            alpha,
            beta,
            bias,
            size,
        }
    }

    fn axes(v: &[i64]) -> Tensor {
        t(&[v.len()], v.to_vec())
    }

    fn run(o: &Lrn, x: Tensor, a: &[i64]) -> Result<Tensor, EvalError> {
        eval_for_test(o, &[x, axes(a)], 1 << 28)
    }

    use crate::ops::context::f32s_for_test as f32s;

    /// Hand-computed on x = [1, 2, 3, 4] along axis 1 of [1, 4].
    #[test]
    fn table() {
        let x = || t(&[1, 4], vec![1f32, 2.0, 3.0, 4.0]);
        // (op, axes, expected): the sums of squares are written out.
        let cases: Vec<(Lrn, &[i64], [f64; 4])> = vec![
            // size 3, scale 3/3 = 1: sums 5, 14, 29, 25.
            (
                op(3.0, 1.0, 1.0, 3),
                &[1],
                [1.0 / 6.0, 2.0 / 15.0, 3.0 / 30.0, 4.0 / 26.0],
            ),
            // size 4 spans 3 (as size 3), scale 4/4 = 1.
            (
                op(4.0, 1.0, 1.0, 4),
                &[1],
                [1.0 / 6.0, 2.0 / 15.0, 3.0 / 30.0, 4.0 / 26.0],
            ),
            // size 2 spans the element alone, scale 2/2: x / (1 + x²).
            (
                op(2.0, 1.0, 1.0, 2),
                &[1],
                [1.0 / 2.0, 2.0 / 5.0, 3.0 / 10.0, 4.0 / 17.0],
            ),
            // size 5: sums 14, 30, 30, 29 (clipped at both ends); beta 0.5, scale 5/5.
            (
                op(5.0, 0.5, 2.0, 5),
                &[1],
                [
                    1.0 / 16f64.sqrt(),
                    2.0 / 32f64.sqrt(),
                    3.0 / 32f64.sqrt(),
                    4.0 / 31f64.sqrt(),
                ],
            ),
            // A large size covers the whole axis: sum 30; beta 2, scale 1/1001 · 1001.
            (
                op(1001.0, 2.0, 0.0, 1001),
                &[1],
                [1.0 / 900.0, 2.0 / 900.0, 3.0 / 900.0, 4.0 / 900.0],
            ),
            // Along axis 0 (of dim 1): each element alone, scale 3/3.
            (
                op(3.0, 0.75, 1.0, 3),
                &[0],
                [
                    1.0 / 2f64.powf(0.75),
                    2.0 / 5f64.powf(0.75),
                    3.0 / 10f64.powf(0.75),
                    4.0 / 17f64.powf(0.75),
                ],
            ),
            // No axes: each element alone, scale alpha (size^0 = 1).
            (
                op(0.5, 1.0, 1.0, 7),
                &[],
                [1.0 / 1.5, 2.0 / 3.0, 3.0 / 5.5, 4.0 / 9.0],
            ),
            // Two axes of [1, 4]: a 3×3 window over both, scale 9/9 (axis 0 adds nothing).
            (
                op(9.0, 1.0, 1.0, 3),
                &[1, 0],
                [1.0 / 6.0, 2.0 / 15.0, 3.0 / 30.0, 4.0 / 26.0],
            ),
        ];
        for (o, a, want) in cases {
            let got = f32s(&run(&o, x(), a).unwrap());
            for (k, (&g, &w)) in got.iter().zip(&want).enumerate() {
                assert!(ulps_f32(g, w) <= 0.5, "{o:?} {a:?} element {k}: {g} vs {w}");
            }
        }
        // A 2-D window: x of [1, 1, 3, 3] = 1..9 over axes 2, 3, size 3, scale 9/9, bias 0,
        // beta 1: the centre's window is everything (sum 285), a corner's 4 elements.
        let x = t(&[1, 1, 3, 3], (1..=9).map(|v| v as f32).collect());
        let got = f32s(&run(&op(9.0, 1.0, 0.0, 3), x, &[2, 3]).unwrap());
        assert_eq!(got[4], (5.0f64 / 285.0) as f32);
        assert_eq!(got[0], (1.0f64 / (1.0 + 4.0 + 16.0 + 25.0)) as f32);
        assert_eq!(
            got[5],
            (6.0f64 / (4.0 + 9.0 + 25.0 + 36.0 + 64.0 + 81.0)) as f32
        );
    }

    #[test]
    fn specials() {
        let x = || t(&[1, 3], vec![0f32, 2.0, -2.0]);
        // A zero base: x / 0 (0/0 = NaN for x = 0), with every form of beta.
        for beta in [1.0, 0.5, 0.75, 0.6] {
            let got = f32s(&run(&op(0.0, beta, 0.0, 1), x(), &[1]).unwrap());
            assert!(got[0].is_nan(), "{beta}");
            assert_eq!(got[1..], [f32::INFINITY, f32::NEG_INFINITY], "{beta}");
        }
        // A −0 base (bias −0, and alpha·S an underflowing −0): read as +0, so x / +0 = +inf
        // with every form of beta (a square root alone would give −0 and −inf).
        for beta in [1.0, 0.5, 0.75, 0.6] {
            let got = f32s(
                &run(
                    &op(-1e-300, beta, -0.0, 1),
                    t(&[1, 1], vec![1e-30f32]),
                    &[0],
                )
                .unwrap(),
            );
            assert_eq!(got, [f32::INFINITY], "{beta}");
        }
        // A negative base: NaN for a non-integral beta, the power for an integral one.
        let got = f32s(&run(&op(0.0, 0.75, -1.0, 1), x(), &[1]).unwrap());
        assert!(got.iter().all(|v| v.is_nan()));
        let got = f32s(&run(&op(0.0, 2.0, -2.0, 1), x(), &[1]).unwrap());
        assert_eq!(got, [0.0, 0.5, -0.5]);
        // NaN and inf in a window reach its neighbours.
        let got = f32s(
            &run(
                &op(1.0, 1.0, 1.0, 3),
                t(&[1, 5], vec![1f32, f32::NAN, 1.0, 1.0, f32::INFINITY]),
                &[1],
            )
            .unwrap(),
        );
        assert!(got[0].is_nan() && got[1].is_nan() && got[2].is_nan());
        assert_eq!(got[3], 0.0);
        assert!(got[4].is_nan());
        // Large f32 values: the squares do not overflow in f64.
        let got = f32s(&run(&op(1.0, 0.5, 0.0, 1), t(&[1, 1], vec![3e38f32]), &[1]).unwrap());
        assert_eq!(got, [1.0]);
        // Empty data.
        let got = run(
            &op(1.0, 1.0, 1.0, 3),
            t(&[2, 0, 3], Vec::<f32>::new()),
            &[1],
        )
        .unwrap();
        assert_eq!(got.shape(), [2, 0, 3]);
    }

    /// A float64 reference, straight from the spec's formula (with OpenVINO's window).
    fn reference(o: &Lrn, shape: &[usize], x: &[f64], axes: &[usize]) -> Vec<f64> {
        let h = ((o.size - 1) / 2) as usize;
        let n: usize = shape.iter().product();
        let scale = o.alpha / (o.size as f64).powi(axes.len() as i32);
        let coords: Vec<Vec<usize>> = (0..n).map(|i| crate::tensor::unravel(i, shape)).collect();
        (0..n)
            .map(|i| {
                let idx = &coords[i];
                let mut s = 0.0;
                for (j, jdx) in coords.iter().enumerate() {
                    let inside = (0..shape.len()).all(|a| {
                        if axes.contains(&a) {
                            jdx[a] + h >= idx[a] && jdx[a] <= idx[a] + h
                        } else {
                            jdx[a] == idx[a]
                        }
                    });
                    if inside {
                        s += x[j] * x[j];
                    }
                }
                x[i] / (o.bias + scale * s).powf(o.beta)
            })
            .collect()
    }

    #[test]
    fn f32_accuracy_against_a_float64_reference() {
        let mut rng = Rng(31);
        let shape = [2, 7, 5, 6];
        let n: usize = shape.iter().product();
        let mut worst: f64 = 0.0;
        for (a, size) in [
            (&[1usize][..], 5u64),
            (&[1], 4),
            (&[2, 3], 3),
            (&[3, 2], 5),
            (&[1, 3], 3),
            (&[0], 3),
            (&[0, 1, 2, 3], 3),
            (&[], 1),
        ] {
            for (beta, bias) in [(0.75, 1.0), (0.5, 2.0), (1.0, 0.5), (0.6, 1.0), (2.5, 1.0)] {
                let x: Vec<f32> = (0..n).map(|_| (4.0 * rng.normal()) as f32).collect();
                let o = op(1e-2 * (1.0 + rng.unit()), beta, bias, size);
                let ai: Vec<i64> = a.iter().map(|&v| v as i64).collect();
                let got = f32s(&run(&o, t(&shape, x.clone()), &ai).unwrap());
                let want = reference(
                    &o,
                    &shape,
                    &x.iter().map(|&v| v as f64).collect::<Vec<_>>(),
                    a,
                );
                for (k, (&g, &w)) in got.iter().zip(&want).enumerate() {
                    let e = ulps_f32(g, w);
                    assert!(
                        e <= 0.5 + 1e-6,
                        "axes {a:?} beta {beta} element {k}: {g} vs {w}"
                    );
                    worst = worst.max(e);
                }
            }
        }
        eprintln!("LRN f32: worst {worst} ulp");
    }

    #[test]
    fn other_types() {
        let mut rng = Rng(4);
        let shape = [1, 6, 3, 4];
        let n: usize = shape.iter().product();
        let xs: Vec<f64> = (0..n).map(|_| 2.0 * rng.normal()).collect();
        let o = op(1e-1, 0.75, 1.0, 3);
        let want = reference(&o, &shape, &xs, &[1]);
        let got = run(&o, t(&shape, xs.clone()), &[1]).unwrap();
        for (&g, &w) in got.view::<f64>().unwrap().iter().zip(&want) {
            assert!((g - w).abs() <= 8.0 * f64::EPSILON * w.abs(), "{g} {w}");
        }
        macro_rules! narrow {
            ($t:ty) => {{
                let h: Vec<$t> = xs.iter().map(|&v| <$t>::from_f64(v)).collect();
                let want = reference(
                    &o,
                    &shape,
                    &h.iter().map(|v| v.to_f64()).collect::<Vec<_>>(),
                    &[2, 3],
                );
                let got = run(&o, t(&shape, h), &[2, 3]).unwrap();
                for (&g, &w) in got.view::<$t>().unwrap().iter().zip(&want) {
                    assert_eq!(g, <$t as Cast>::from_num(Num::Float(w)));
                }
            }};
        }
        narrow!(f16);
        narrow!(bf16);
    }

    #[test]
    fn same_bits_at_1_and_4_threads() {
        let x = crate::ops::context::uniform_for_test(2 * 32 * 40 * 40, 8, -4.0, 4.0);
        let x = t(&[2, 32, 40, 40], x);
        let o = op(1e-4, 0.75, 1.0, 5);
        let pool = |k| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(k)
                .build()
                .unwrap()
        };
        for a in [&[1i64][..], &[2, 3], &[]] {
            let go = |k: usize| pool(k).install(|| run(&o, x.clone(), a).unwrap().to_le_bytes());
            assert_eq!(go(1), go(4), "{a:?}");
        }
    }

    /// The line mode (the last axis is the last dim) and the column mode (a trailing dim of 1
    /// added) give the same bits; a reach beyond the line is clamped.
    #[test]
    fn line_and_column_modes_agree() {
        for (shape, a, size) in [
            (&[2usize, 3, 9, 11][..], &[2i64, 3][..], 5u64),
            (&[2, 3, 9, 11], &[3], 4),
            (&[2, 3, 9, 11], &[1, 3], 3),
            (&[1, 1, 300], &[2], 9001),
            (&[1, 1, 700], &[2], 31),
        ] {
            let n: usize = shape.iter().product();
            let x = crate::ops::context::uniform_for_test(n, 12, -3.0, 3.0);
            let mut with_one = shape.to_vec();
            with_one.push(1);
            let o = op(0.3, 0.6, 1.0, size);
            let line = run(&o, t(shape, x.clone()), a).unwrap();
            let cols = run(&o, t(&with_one, x), a).unwrap();
            assert_eq!(line.to_le_bytes(), cols.to_le_bytes(), "{shape:?} {a:?}");
        }
        assert_eq!(Geometry::new(&[1, 1, 300], &[2], 9001).line, Some(300));
        assert_eq!(Geometry::new(&[1, 1, 300, 1], &[2], 9001).line, None);
        assert_eq!(Geometry::new(&[1, 9000], &[1], 9001).line, None);
    }

    #[test]
    fn parse_table() {
        assert_eq!(
            parsed_for_test(
                &LRN_1,
                &[
                    ("alpha", "0.0001"),
                    ("beta", "0.75"),
                    ("bias", "1"),
                    ("size", "5")
                ]
            ),
            Ok(format!("{:?}", op(1e-4, 0.75, 1.0, 5)))
        );
        assert_eq!(
            parsed_for_test(
                &LRN_1,
                &[
                    ("alpha", "x"),
                    ("beta", "inf"),
                    ("bias", "1"),
                    ("size", "0")
                ]
            ),
            Err(vec![
                "alpha Some(\"x\"): expected a number".into(),
                "beta Some(\"inf\"): expected a finite number, not inf".into(),
                "size Some(\"0\"): size must be at least 1".into(),
            ])
        );
        assert_eq!(
            parsed_for_test(
                &LRN_1,
                &[("alpha", "1"), ("beta", "1"), ("bias", "1"), ("size", "-3")]
            ),
            Err(vec![
                "size Some(\"-3\"): expected an unsigned integer".into()
            ])
        );
        assert_eq!(
            parsed_for_test(&LRN_1, &[("alpha", "1"), ("beta", "1")]),
            Err(vec!["bias None: ".into(), "size None: ".into()])
        );
    }

    #[test]
    fn inference_and_invalid_axes() {
        let d = |s: &str| TensorType::new(ElementType::F32, PartialShape::parse(s).unwrap());
        let known = |v: &[i64]| TensorType::of_value(axes(v));
        let any = |s: &str| TensorType::new(ElementType::I64, PartialShape::parse(s).unwrap());
        let o = op(1e-4, 0.75, 1.0, 5);
        for (data, a, want) in [
            (d("1,?,3..5,224"), known(&[1]), "[1,?,3..5,224]"),
            (d("..."), known(&[1, 7]), "[...]"),
            (d("2,3"), any("?"), "[2,3]"),
            (d("2,3"), any("..."), "[2,3]"),
            (d("2,3,4"), known(&[]), "[2,3,4]"),
        ] {
            assert_eq!(
                inferred_shape_for_test(&o, &[&data, &a]).as_deref(),
                Ok(want)
            );
        }
        for (data, a, want) in [
            (
                d("2,3"),
                known(&[2]),
                "axis 2 (axes[0]) is out of range for data of rank 2",
            ),
            (
                d("2,3,4"),
                known(&[-1]),
                "axis -1 (axes[0]) is negative: LRN's axes are indices 0..3",
            ),
            (
                d("2,3,4"),
                known(&[1, 2, 1]),
                "axis 1 (axes[2]) repeats axes[0]",
            ),
            (
                d("2,3"),
                any("1,1"),
                "the axes must be 1-D, not of shape [1,1]",
            ),
            (d("2,3"), any(""), "the axes must be 1-D, not of shape []"),
            (d("2,3"), any("3"), "3 axes are more than the data's rank 2"),
        ] {
            let m = inferred_shape_for_test(&o, &[&data, &a]).unwrap_err();
            assert!(m.contains(want), "{m}");
        }
        let m = inferred_shape_for_test(
            &o,
            &[
                &TensorType::new(ElementType::I32, PartialShape::parse("2").unwrap()),
                &known(&[0]),
            ],
        )
        .unwrap_err();
        assert!(m.contains("does not accept i32"), "{m}");
        let m = inferred_shape_for_test(
            &o,
            &[
                &d("2"),
                &TensorType::new(ElementType::F32, PartialShape::parse("1").unwrap()),
            ],
        )
        .unwrap_err();
        assert!(m.contains("does not accept f32"), "{m}");
        // The same checks at execution.
        for (a, want) in [
            (
                axes(&[3]),
                "axis 3 (axes[0]) is out of range for data of rank 2",
            ),
            (axes(&[-2]), "is negative"),
            (axes(&[0, 0]), "repeats axes[0]"),
            (t(&[], vec![1i64]), "the axes must be 1-D, not of shape []"),
        ] {
            match eval_for_test(&o, &[t(&[2, 2], vec![1f32; 4]), a], 1 << 20) {
                Err(EvalError::Invalid(m)) => assert!(m.contains(want), "{m}"),
                other => panic!("{other:?}"),
            }
        }
        // Axes of another integer type.
        let got = eval_for_test(
            &o,
            &[t(&[1, 2], vec![1f32, 2.0]), t(&[1], vec![1u8])],
            1 << 20,
        );
        assert!(got.is_ok());
        let big = t(&[256, 256], vec![1f32; 1 << 16]);
        assert!(matches!(
            eval_for_test(&o, &[big.clone(), axes(&[1])], 200_000),
            Err(EvalError::Memory(_))
        ));
        assert!(eval_for_test(&o, &[big, axes(&[1])], 300_000).is_ok());
    }
}
