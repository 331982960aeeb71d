//! BatchNormInference-1 and BatchNormInference-5: each element normalised by its channel's
//! mean and variance, then scaled and shifted: `y = γ·(x − mean)/sqrt(var + ε) + β`.
//!
//! Spec: <https://docs.openvino.ai/2026/documentation/openvino-ir-format/operation-sets/operation-specs/normalization/batch-norm-inference-1.html>
//! and <https://docs.openvino.ai/2026/documentation/openvino-ir-format/operation-sets/operation-specs/normalization/batch-norm-inference-5.html>.
//!
//! Ports: five inputs of one float type (f16, bf16, f32, f64; others are refused, E502; two
//! different types are E501): `data` (rank ≥ 2, the channels on axis 1) and the per-channel
//! `gamma`, `beta`, `mean` and `variance` (each 1-D, one value per channel). **The versions
//! differ only in the order of the ports**: BatchNormInference-1 takes `gamma, beta, data, mean,
//! variance`, BatchNormInference-5 `data, gamma, beta, mean, variance` (as OpenVINO's
//! `v0::BatchNormInference` and `v5::BatchNormInference` do). One output of the data's type and
//! shape. Attribute: `epsilon` (required; OpenVINO stores a double, and so does ovir).
//!
//! Decisions:
//! * `epsilon` must be a finite number ≥ 0 (the spec says positive; OpenVINO checks ≥ 0, and
//!   0 is accepted). A negative `var + ε` gives NaN for the channel, a zero one ±inf (NaN
//!   where `x = mean` or `γ = 0`), as IEEE arithmetic and OpenVINO's reference give.
//! * A channel count of 0 is an invalid input (E507): the spec asks for at least one, and
//!   OpenVINO's shape inference refuses 0.
//! * Arithmetic: per channel, `s = γ / sqrt(var + ε)` is computed once in f64; each element is
//!   `(x − mean)·s + β` in f64 (three IEEE operations, no fused multiply-add, so the bits are
//!   the same on every vector unit and at any thread count), rounded once to the type
//!   (f16 and bf16 through an f32 rounded to odd: one rounding in effect). Subtracting the mean
//!   before scaling keeps `x ≈ mean` accurate, where a folded `x·s + (β − mean·s)` would cancel.
//! * Accuracy: with `p = γ·(x − mean)/sqrt(var + ε)` and `y = p + β` the exact result, an f32,
//!   f16 or bf16 output is within **half an ulp of `y` plus `2^-50·(|p| + |β|)`** (tested
//!   against a double-double reference; the second term is below 2^-26 ulp unless `p` and `β`
//!   nearly cancel). f64 outputs are within about `2^-50·(|p| + |β|)` (a few ulp) of `y`. Not
//!   covered: f64 values beyond about 1e300, where `s` or the products may overflow.
//!
//! Inference: the output is the data's type and shape, with the channel dim (axis 1) merged
//! with the per-channel inputs' lengths (intervals intersect, as OpenVINO merges them); a
//! per-channel input that is not 1-D, or whose length cannot match the channel dim, is E507
//! at its own port.
//!
//! Execution: the output is split into contiguous parts computed in parallel (above 64K
//! elements); each part walks its runs of one channel (the spatial elements of an `(n, c)`
//! plane) with the channel's mean, scale and shift, vectorised for the widest vector unit. Each
//! element's result depends only on itself, so the split does not change a bit.

use std::mem::MaybeUninit;
use std::sync::Arc;

use super::kernel::{contiguous, in_parts, tensor_from, vectorised};
use super::mvn::Real;
use super::{Arity, AttrError, Attrs, EvalCx, EvalError, InferCx, Op, OpDef};
use crate::dtype::ElementType;
use crate::error::ErrorKind;
use crate::shape::{Dim, PartialShape, TensorType};
use crate::tensor::{Tensor, TypeSet};

#[derive(Clone, Debug, PartialEq)]
pub struct BatchNorm {
    /// 1 or 5: the order of the input ports.
    pub version: u32,
    /// Finite, at least 0.
    pub epsilon: f64,
}

pub const BATCH_NORM_INFERENCE_1: OpDef = OpDef {
    name: "BatchNormInference",
    version: 1,
    inputs: Arity::exactly(5),
    outputs: Arity::exactly(1),
    parse: parse_1,
};

pub const BATCH_NORM_INFERENCE_5: OpDef = OpDef {
    version: 5,
    parse: parse_5,
    ..BATCH_NORM_INFERENCE_1
};

/// The per-channel inputs, in the order [`BatchNorm::ports`] lists them after the data.
const NAMES: [&str; 4] = ["gamma", "beta", "mean", "variance"];

fn parse_epsilon(text: &str) -> Result<f64, String> {
    let v: f64 = text
        .trim()
        .parse()
        .map_err(|_| "expected a number".to_owned())?;
    if !v.is_finite() || v < 0.0 {
        return Err(format!("epsilon must be a finite number ≥ 0, not {v}"));
    }
    Ok(v)
}

fn parse(a: &Attrs, version: u32) -> Result<Box<dyn Op>, Vec<AttrError>> {
    let epsilon = a
        .parse_required("epsilon", parse_epsilon)
        .map_err(|e| vec![e])?;
    Ok(Box::new(BatchNorm { version, epsilon }))
}

fn parse_1(a: &Attrs) -> Result<Box<dyn Op>, Vec<AttrError>> {
    parse(a, 1)
}

fn parse_5(a: &Attrs) -> Result<Box<dyn Op>, Vec<AttrError>> {
    parse(a, 5)
}

impl BatchNorm {
    /// The ports of `data`, `gamma`, `beta`, `mean` and `variance`.
    fn ports(&self) -> [usize; 5] {
        if self.version == 1 {
            [2, 0, 1, 3, 4]
        } else {
            [0, 1, 2, 3, 4]
        }
    }
}

impl Op for BatchNorm {
    fn def(&self) -> Option<&'static OpDef> {
        Some(if self.version == 1 {
            &BATCH_NORM_INFERENCE_1
        } else {
            &BATCH_NORM_INFERENCE_5
        })
    }

    fn infer(&self, cx: &mut InferCx<'_>) -> Option<Vec<TensorType>> {
        cx.require(0..5, TypeSet::FLOAT)?;
        let ports = self.ports();
        let mut ty = ElementType::Dynamic;
        for &i in &ports {
            let t = cx.input(i).element_type;
            ty = match (ty, t) {
                (ElementType::Dynamic, x) | (x, ElementType::Dynamic) => x,
                (x, y) if x == y => x,
                (a, b) => {
                    cx.report_input(i, ErrorKind::ElementTypeMismatch { a, b });
                    return None;
                }
            };
        }
        let data = cx.input(ports[0]);
        let mut channels = Dim::DYNAMIC;
        if let Some(dims) = data.shape.dims() {
            if dims.len() < 2 {
                return cx.invalid(
                    ports[0],
                    format!(
                        "the data must have rank ≥ 2 (its axis 1 is the channels), not rank {}",
                        dims.len()
                    ),
                );
            }
            channels = dims[1];
        }
        for (k, name) in NAMES.iter().enumerate() {
            let port = ports[k + 1];
            let shape = &cx.input(port).shape;
            let Some(dims) = shape.dims() else {
                continue;
            };
            if dims.len() != 1 {
                return cx.invalid(
                    port,
                    format!("{name} must be 1-D (one value per channel), not of shape {shape}"),
                );
            }
            match channels.merge(dims[0]) {
                Some(d) => channels = d,
                None => {
                    let before = if k == 0 {
                        String::new()
                    } else {
                        format!(" and the lengths of {}", NAMES[..k].join(", "))
                    };
                    return cx.invalid(
                        port,
                        format!(
                            "{name} has {} elements, but the channel count is {channels} (from \
                             the data's axis 1{before})",
                            dims[0]
                        ),
                    );
                }
            }
        }
        if channels.max() == Some(0) {
            return cx.invalid(
                ports[0],
                "the channel count (the data's axis 1) is 0; it must be at least 1",
            );
        }
        let shape = match data.shape.dims() {
            Some(dims) => {
                let mut dims = dims.to_vec();
                dims[1] = channels;
                PartialShape::new(dims)
            }
            None => PartialShape::dynamic_rank(),
        };
        Some(vec![TensorType::new(ty, shape)])
    }

    fn eval(&self, cx: &EvalCx<'_>) -> Result<Vec<Tensor>, EvalError> {
        let ports = self.ports();
        let data = cx.tensor(ports[0])?;
        let ty = data.element_type();
        let shape = data.shape();
        if shape.len() < 2 {
            return Err(EvalError::Invalid(format!(
                "the data must have rank ≥ 2 (its axis 1 is the channels), not shape {shape:?}"
            )));
        }
        let c = shape[1];
        if c == 0 {
            return Err(EvalError::Invalid(
                "the channel count (the data's axis 1) is 0; it must be at least 1".into(),
            ));
        }
        let params: Vec<Arc<Tensor>> = ports[1..]
            .iter()
            .map(|&i| cx.tensor(i))
            .collect::<Result<_, _>>()?;
        for (name, t) in NAMES.iter().zip(&params) {
            if t.element_type() != ty {
                return Err(EvalError::Types(ty, t.element_type()));
            }
            if t.shape() != [c] {
                return Err(EvalError::Invalid(format!(
                    "{name} must be 1-D with one value per channel ({c}), not of shape {:?}",
                    t.shape()
                )));
            }
        }
        cx.reserve(ty, data.len())?;
        crate::dispatch!(float: ty, T => normalize::<T>(&data, &params, self.epsilon).map(|t| vec![t]),
            _ => Err(EvalError::UnsupportedType { op: "BatchNormInference".into(), ty }))
    }
}

/// One channel's constants: `y = (x − mean)·scale + shift`.
#[derive(Clone, Copy, Debug)]
struct Channel {
    mean: f64,
    scale: f64,
    shift: f64,
}

/// The per-channel constants from gamma, beta, mean and variance (checked: 1-D of `T`).
fn channels<T: Real>(params: &[Arc<Tensor>], eps: f64) -> Result<Vec<Channel>, EvalError> {
    let read = |t: &Tensor| -> Result<Vec<f64>, EvalError> {
        Ok(T::view(t)
            .ok_or(EvalError::Internal("a per-channel input's type"))?
            .iter()
            .map(|v| v.wide())
            .collect())
    };
    let [g, b, m, v] = [
        read(&params[0])?,
        read(&params[1])?,
        read(&params[2])?,
        read(&params[3])?,
    ];
    Ok((0..g.len())
        .map(|k| Channel {
            mean: m[k],
            scale: g[k] / (v[k] + eps).sqrt(),
            shift: b[k],
        })
        .collect())
}

/// The output for data `x` of type `T` (rank ≥ 2, at least one channel).
fn normalize<T: Real>(x: &Tensor, params: &[Arc<Tensor>], eps: f64) -> Result<Tensor, EvalError> {
    let ch = channels::<T>(params, eps)?;
    let shape = x.shape();
    let data = contiguous::<T>(x).ok_or(EvalError::Internal("the data's type"))?;
    let len = data.len();
    if len == 0 {
        return tensor_from(shape, Vec::<T>::new());
    }
    // Not 0: the data is not empty.
    let inner: usize = shape[2..].iter().product();
    let mut out: Vec<T> = Vec::with_capacity(len);
    in_parts(
        &mut out.spare_capacity_mut()[..len],
        1,
        |start, part| {
            fill(&data[start..start + part.len()], part, start, inner, &ch);
            None::<()>
        },
        |_| 0u8,
    );
    // SAFETY: `fill` wrote every element of every part, and the parts cover the output.
    unsafe { out.set_len(len) };
    tensor_from(shape, out)
}

/// Elements `start..start + x.len()` of the output (`x` the data's same elements), each run of
/// one channel (`inner` elements of an `(n, c)` plane) with that channel's constants.
#[inline(always)]
fn fill<T: Real>(x: &[T], out: &mut [MaybeUninit<T>], start: usize, inner: usize, ch: &[Channel]) {
    vectorised(
        #[inline(always)]
        || {
            let mut at = 0;
            while at < x.len() {
                let pos = start + at;
                let Channel { mean, scale, shift } = ch[(pos / inner) % ch.len()];
                let run = (inner - pos % inner).min(x.len() - at);
                for (o, &v) in out[at..at + run].iter_mut().zip(&x[at..at + run]) {
                    o.write(T::narrow((v.wide() - mean) * scale + shift));
                }
                at += run;
            }
        },
    )
}

#[cfg(test)]
mod tests {
    use half::{bf16, f16};

    use super::*;
    use crate::num::{Cast, Num};
    use crate::ops::context::{
        eval_for_test, inferred_shape_for_test, parsed_for_test, tensor_for_test,
    };
    use crate::ops::mvn::tests::{Dd, Rng, ulp_f32, ulps_f32};
    use crate::tensor::Element;

    fn t<T: Element>(shape: &[usize], v: Vec<T>) -> Tensor {
        tensor_for_test(shape, v)
    }

    fn op(version: u32, epsilon: f64) -> BatchNorm {
        BatchNorm { version, epsilon }
    }

    /// Runs BatchNormInference-5 (`v5` true) or -1 on data and [gamma, beta, mean, variance],
    /// placed on the version's ports.
    fn run(v5: bool, eps: f64, x: Tensor, p: [Tensor; 4]) -> Result<Tensor, EvalError> {
        let [g, b, m, v] = p;
        let (o, inputs) = if v5 {
            (op(5, eps), vec![x, g, b, m, v])
        } else {
            (op(1, eps), vec![g, b, x, m, v])
        };
        eval_for_test(&o, &inputs, 1 << 28)
    }

    use crate::ops::context::f32s_for_test as f32s;

    fn vec1(v: &[f32]) -> Tensor {
        t(&[v.len()], v.to_vec())
    }

    /// Hand-checked: x of [2, 2, 2] (n, c, w); channel 0: γ 2, β 1, mean 1, var 3 (+ε 1 → σ 2);
    /// channel 1: γ −1, β 0.5, mean −2, var 0.25 (+ε 0 → σ 0.5).
    #[test]
    fn table() {
        let x = || {
            t(
                &[2, 2, 2],
                vec![1f32, 5.0, -2.0, -1.5, 3.0, -3.0, 0.0, -2.0],
            )
        };
        let cases: Vec<(f64, [Tensor; 4], Vec<f32>)> = vec![
            (
                1.0,
                [
                    vec1(&[2.0, -1.0]),
                    vec1(&[1.0, 0.5]),
                    vec1(&[1.0, -2.0]),
                    vec1(&[3.0, -0.75]),
                ],
                // c0: 2·(x−1)/2 + 1 = x; c1: −(x+2)/0.5 + 0.5 = −2x − 3.5
                vec![1.0, 5.0, 0.5, -0.5, 3.0, -3.0, -3.5, 0.5],
            ),
            (
                0.0,
                [
                    vec1(&[1.0, 1.0]),
                    vec1(&[0.0, 0.0]),
                    vec1(&[0.0, 0.0]),
                    vec1(&[1.0, 4.0]),
                ],
                // c0: x; c1: x/2
                vec![1.0, 5.0, -1.0, -0.75, 3.0, -3.0, 0.0, -1.0],
            ),
        ];
        for (eps, p, want) in cases {
            for v5 in [true, false] {
                let [g, b, m, v] = &p;
                let got = run(v5, eps, x(), [g.clone(), b.clone(), m.clone(), v.clone()]).unwrap();
                assert_eq!(got.shape(), [2, 2, 2]);
                assert_eq!(f32s(&got), want, "v5 {v5}, eps {eps}");
            }
        }
        // Rank 2 (no spatial dims): [N, C].
        let got = run(
            true,
            0.0,
            t(&[2, 3], vec![1f32, 2.0, 3.0, 4.0, 5.0, 6.0]),
            [
                vec1(&[1.0, 2.0, 3.0]),
                vec1(&[0.0, 1.0, 0.0]),
                vec1(&[1.0, 1.0, 1.0]),
                vec1(&[1.0, 1.0, 4.0]),
            ],
        )
        .unwrap();
        assert_eq!(f32s(&got), [0.0, 3.0, 3.0, 3.0, 9.0, 7.5]);
    }

    /// Zero and negative variances, NaN and infinite inputs: IEEE arithmetic.
    #[test]
    fn specials() {
        let nan = f32::NAN;
        let x = t(
            &[1, 4, 2],
            vec![1f32, 2.0, 1.0, 2.0, 3.0, nan, 1.0, f32::INFINITY],
        );
        let got = f32s(
            &run(
                true,
                0.0,
                x,
                [
                    vec1(&[1.0, 0.0, 1.0, 1.0]),
                    vec1(&[0.0, 0.0, 0.0, 5.0]),
                    vec1(&[1.0, 1.0, 0.0, 0.0]),
                    // c0: var 0 (x = mean → NaN, else +inf); c1: γ 0, var 0 → NaN;
                    // c2: var −1 → NaN; c3: inf input → inf
                    vec1(&[0.0, 0.0, -1.0, 1.0]),
                ],
            )
            .unwrap(),
        );
        assert!(got[0].is_nan(), "{got:?}");
        assert_eq!(got[1], f32::INFINITY);
        assert!(got[2].is_nan() && got[3].is_nan() && got[4].is_nan() && got[5].is_nan());
        assert_eq!(got[6], 6.0);
        assert_eq!(got[7], f32::INFINITY);
        // Empty data (a zero batch, a zero spatial dim): an empty output.
        for shape in [[0usize, 2, 3], [2, 2, 0]] {
            let p = || vec1(&[1.0, 1.0]);
            let got = run(
                true,
                1e-5,
                t(&shape, Vec::<f32>::new()),
                [p(), p(), p(), p()],
            );
            assert_eq!(got.unwrap().shape(), shape);
        }
        // No cancellation when x ≈ mean at a large magnitude: (x − mean) first. (A folded
        // x·s + (β − mean·s) gives 0.25 here.)
        let got = run(
            true,
            0.0,
            t(&[1, 1], vec![1e16f64 + 2.0]),
            [
                t(&[1], vec![1f64]),
                t(&[1], vec![0f64]),
                t(&[1], vec![1e16f64]),
                t(&[1], vec![100f64]),
            ],
        )
        .unwrap();
        assert_eq!(got.view::<f64>().unwrap()[[0, 0]], 2.0 * 0.1);
    }

    /// The exact result of one element (double-double).
    fn reference(x: f64, g: f64, b: f64, m: f64, v: f64, eps: f64) -> (f64, f64) {
        let d = |a: f64| Dd(a, 0.0);
        let sigma = d(v).add(d(eps)).sqrt();
        let p = d(g).mul(d(x).add(d(m).neg())).div(sigma);
        (p.add(d(b)).0, p.0)
    }

    #[test]
    fn f32_accuracy_against_a_double_double_reference() {
        let mut rng = Rng(5);
        let (n, c, hw) = (3, 40, 37);
        let mut worst: f64 = 0.0;
        let mut worst_well_conditioned: f64 = 0.0;
        for &scale in &[1e-15, 1e-3, 1.0, 1e4, 1e15] {
            let x: Vec<f32> = (0..n * c * hw)
                .map(|_| (scale * rng.normal()) as f32)
                .collect();
            let par = |s: f64, rng: &mut Rng| -> Vec<f32> {
                (0..c).map(|_| (s * rng.normal()) as f32).collect()
            };
            let g = par(1.0, &mut rng);
            let b = par(scale, &mut rng);
            let m = par(scale, &mut rng);
            let v: Vec<f32> = (0..c)
                .map(|_| (scale * scale * (0.1 + rng.unit())) as f32)
                .collect();
            let eps = 1e-5 * scale * scale;
            let got = f32s(
                &run(
                    true,
                    eps,
                    t(&[n, c, hw], x.clone()),
                    [vec1(&g), vec1(&b), vec1(&m), vec1(&v)],
                )
                .unwrap(),
            );
            for (i, &y) in got.iter().enumerate() {
                let k = (i / hw) % c;
                let (want, p) = reference(
                    x[i] as f64,
                    g[k] as f64,
                    b[k] as f64,
                    m[k] as f64,
                    v[k] as f64,
                    eps,
                );
                let err = ulps_f32(y, want);
                let bound = 0.5 + 2f64.powi(-50) * (p.abs() + (b[k] as f64).abs()) / ulp_f32(want);
                assert!(
                    err <= bound,
                    "element {i}: {y} vs {want}: {err} ulp > {bound}"
                );
                worst = worst.max(err - bound + 0.5);
                if p.abs() + (b[k] as f64).abs() <= 4.0 * want.abs() {
                    worst_well_conditioned = worst_well_conditioned.max(err);
                }
            }
        }
        eprintln!(
            "BatchNormInference f32: {worst_well_conditioned} ulp at worst without cancellation (|p| + |β| ≤ 4|y|); {worst} ulp at worst for the error less the cancellation allowance"
        );
        assert!(
            worst_well_conditioned <= 0.5 + 1e-6,
            "{worst_well_conditioned}"
        );
    }

    #[test]
    fn other_types() {
        let mut rng = Rng(9);
        let (c, hw) = (5, 30);
        let xs: Vec<f64> = (0..2 * c * hw).map(|_| 3.0 * rng.normal()).collect();
        let gs: Vec<f64> = (0..c).map(|_| rng.normal()).collect();
        let bs: Vec<f64> = (0..c).map(|_| rng.normal()).collect();
        let ms: Vec<f64> = (0..c).map(|_| rng.normal()).collect();
        let vs: Vec<f64> = (0..c).map(|_| 0.5 + rng.unit()).collect();
        let eps = 1e-3;
        fn typed<T: Element>(v: &[f64], f: impl Fn(f64) -> T) -> Tensor {
            tensor_for_test(&[v.len()], v.iter().map(|&a| f(a)).collect())
        }
        // f64: within 2^-50·(|p| + |β|) of the exact value.
        let p = [
            typed(&gs, |a| a),
            typed(&bs, |a| a),
            typed(&ms, |a| a),
            typed(&vs, |a| a),
        ];
        let got = run(true, eps, t(&[2, c, hw], xs.clone()), p).unwrap();
        for (i, &y) in got.view::<f64>().unwrap().iter().enumerate() {
            let k = (i / hw) % c;
            let (want, p) = reference(xs[i], gs[k], bs[k], ms[k], vs[k], eps);
            assert!(
                (y - want).abs() <= 2f64.powi(-50) * (p.abs() + bs[k].abs()),
                "{y} {want}"
            );
        }
        // f16 and bf16: the correctly rounded exact value.
        macro_rules! narrow {
            ($t:ty) => {{
                let r = |v: &[f64]| -> Vec<f64> {
                    v.iter().map(|&a| <$t>::from_f64(a).to_f64()).collect()
                };
                let (x, g, b, m, v) = (r(&xs), r(&gs), r(&bs), r(&ms), r(&vs));
                let p = [
                    typed(&g, <$t>::from_f64),
                    typed(&b, <$t>::from_f64),
                    typed(&m, <$t>::from_f64),
                    typed(&v, <$t>::from_f64),
                ];
                let xt = t(&[2, c, hw], x.iter().map(|&a| <$t>::from_f64(a)).collect());
                let got = run(false, eps, xt, p).unwrap();
                for (i, &y) in got.view::<$t>().unwrap().iter().enumerate() {
                    let k = (i / hw) % c;
                    let (want, _) = reference(x[i], g[k], b[k], m[k], v[k], eps);
                    assert_eq!(y, <$t as Cast>::from_num(Num::Float(want)), "element {i}");
                }
            }};
        }
        narrow!(f16);
        narrow!(bf16);
    }

    #[test]
    fn same_bits_at_1_and_4_threads() {
        let x = crate::ops::context::uniform_for_test(2 * 16 * 64 * 64, 3, -8.0, 8.0);
        let p = |seed, lo, hi| vec1(&crate::ops::context::uniform_for_test(16, seed, lo, hi));
        let x = t(&[2, 16, 64, 64], x);
        let go = |k: usize| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(k)
                .build()
                .unwrap()
                .install(|| {
                    run(
                        true,
                        1e-5,
                        x.clone(),
                        [
                            p(1, -2.0, 2.0),
                            p(2, -1.0, 1.0),
                            p(3, -1.0, 1.0),
                            p(4, 0.0, 4.0),
                        ],
                    )
                    .unwrap()
                    .to_le_bytes()
                })
        };
        assert_eq!(go(1), go(4));
    }

    #[test]
    fn parse_table() {
        for v in [&BATCH_NORM_INFERENCE_1, &BATCH_NORM_INFERENCE_5] {
            assert_eq!(
                parsed_for_test(v, &[("epsilon", "1e-5")]),
                Ok(format!("{:?}", op(v.version, 1e-5)))
            );
            assert_eq!(
                parsed_for_test(v, &[("epsilon", "0")]),
                Ok(format!("{:?}", op(v.version, 0.0)))
            );
        }
        for (value, reason) in [
            ("-1e-5", "epsilon must be a finite number ≥ 0, not -0.00001"),
            ("inf", "epsilon must be a finite number ≥ 0, not inf"),
            ("NaN", "epsilon must be a finite number ≥ 0, not NaN"),
            ("small", "expected a number"),
        ] {
            assert_eq!(
                parsed_for_test(&BATCH_NORM_INFERENCE_5, &[("epsilon", value)]),
                Err(vec![format!("epsilon Some({value:?}): {reason}")])
            );
        }
        assert_eq!(
            parsed_for_test(&BATCH_NORM_INFERENCE_1, &[]),
            Err(vec!["epsilon None: ".to_owned()])
        );
    }

    fn ty(et: ElementType, s: &str) -> TensorType {
        TensorType::new(et, PartialShape::parse(s).unwrap())
    }

    /// Infers BatchNormInference-5 (`v5`) or -1 from data and the four per-channel shapes.
    fn infer(v5: bool, data: &TensorType, p: [&TensorType; 4]) -> Result<String, String> {
        let [g, b, m, v] = p;
        if v5 {
            inferred_shape_for_test(&op(5, 0.0), &[data, g, b, m, v])
        } else {
            inferred_shape_for_test(&op(1, 0.0), &[g, b, data, m, v])
        }
    }

    #[test]
    fn inference() {
        let f = |s: &str| ty(ElementType::F32, s);
        for v5 in [true, false] {
            for (data, p, want) in [
                ("2,3,4,4", ["3", "3", "3", "3"], "[2,3,4,4]"),
                ("2,?,4", ["3", "?", "3", "3"], "[2,3,4]"),
                ("2,1..8", ["2..", "..5", "?", "..."], "[2,2..5]"),
                ("...", ["4", "4", "4", "4"], "[...]"),
                ("?,?", ["...", "...", "...", "..."], "[?,?]"),
            ] {
                let p = p.map(f);
                assert_eq!(
                    infer(v5, &f(data), [&p[0], &p[1], &p[2], &p[3]]).as_deref(),
                    Ok(want),
                    "{data}"
                );
            }
            // Errors, at the port they name.
            let data_port = if v5 { 0 } else { 2 };
            let port = |k: usize| if v5 { k + 1 } else { [0, 1, 3, 4][k] };
            for (data, p, at, want) in [
                (
                    "5",
                    ["5", "5", "5", "5"],
                    data_port,
                    "the data must have rank ≥ 2 (its axis 1 is the channels), not rank 1",
                ),
                (
                    "2,3",
                    ["4", "4", "4", "4"],
                    port(0),
                    "gamma has 4 elements, but the channel count is 3 (from the data's axis 1)",
                ),
                (
                    "2,?",
                    ["4", "4", "3", "4"],
                    port(2),
                    "mean has 3 elements, but the channel count is 4 (from the data's axis 1 and the lengths of gamma, beta)",
                ),
                (
                    "2,3",
                    ["3", "3", "3", "1,3"],
                    port(3),
                    "variance must be 1-D (one value per channel), not of shape [1,3]",
                ),
                (
                    "2,0,5",
                    ["0", "0", "0", "0"],
                    data_port,
                    "the channel count (the data's axis 1) is 0; it must be at least 1",
                ),
            ] {
                let p = p.map(f);
                let m = infer(v5, &f(data), [&p[0], &p[1], &p[2], &p[3]]).unwrap_err();
                assert!(m.contains(want), "{m}");
                assert!(m.starts_with(&format!("Some((Input, {at}))")), "{m}");
            }
        }
        // Types: floats only, one type for all five (a dynamic type matches any).
        let (dd, dp) = (
            ty(ElementType::Dynamic, "2,3"),
            ty(ElementType::Dynamic, "3"),
        );
        let h = ty(ElementType::F16, "3");
        let out = infer_types(&[&ty(ElementType::F16, "2,3"), &h, &dp, &h, &dp]);
        assert_eq!(out, Ok(ElementType::F16));
        let out = infer_types(&[&dd, &dp, &h, &dp, &ty(ElementType::F32, "3")]);
        assert!(out.unwrap_err().contains("differ: f16 and f32"));
        let i = ty(ElementType::I32, "3");
        let out = infer_types(&[&ty(ElementType::I32, "2,3"), &i, &i, &i, &i]);
        assert!(out.unwrap_err().contains("does not accept i32"));
    }

    fn infer_types(inputs: &[&TensorType]) -> Result<ElementType, String> {
        match crate::ops::context::infer_for_test(&op(5, 0.0), inputs) {
            (Some(out), _) => Ok(out[0].element_type),
            (None, f) => Err(format!("{f:?} {}", f[0].0)),
        }
    }

    #[test]
    fn execution_errors_and_budget() {
        let p = || vec1(&[1.0, 1.0]);
        let x = || t(&[1, 2, 2], vec![1f32; 4]);
        for (inputs, want) in [
            (
                [t(&[2], vec![1f32, 2.0]), p(), p(), p(), p()],
                "the data must have rank ≥ 2",
            ),
            (
                [x(), vec1(&[1.0, 1.0, 1.0]), p(), p(), p()],
                "gamma must be 1-D with one value per channel (2), not of shape [3]",
            ),
            (
                [x(), p(), p(), p(), t(&[1, 2], vec![1f32; 2])],
                "variance must be 1-D with one value per channel (2), not of shape [1, 2]",
            ),
            (
                [
                    t(&[1, 0], Vec::<f32>::new()),
                    vec1(&[]),
                    vec1(&[]),
                    vec1(&[]),
                    vec1(&[]),
                ],
                "the channel count (the data's axis 1) is 0",
            ),
        ] {
            match eval_for_test(&op(5, 0.0), &inputs, 1 << 20) {
                Err(EvalError::Invalid(m)) => assert!(m.contains(want), "{m}"),
                other => panic!("{other:?}"),
            }
        }
        assert_eq!(
            eval_for_test(
                &op(5, 0.0),
                &[x(), p(), p(), t(&[2], vec![1f64, 1.0]), p()],
                1 << 20
            ),
            Err(EvalError::Types(ElementType::F32, ElementType::F64))
        );
        let big = || t(&[1, 2, 256, 128], vec![1f32; 1 << 16]);
        let inputs = [big(), p(), p(), p(), p()];
        assert!(matches!(
            eval_for_test(&op(5, 0.0), &inputs, 200_000),
            Err(EvalError::Memory(_))
        ));
        assert!(eval_for_test(&op(5, 0.0), &inputs, 300_000).is_ok());
    }
}
