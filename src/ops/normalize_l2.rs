//! NormalizeL2-1: each element divided by the L2 norm of its group along `axes`.
//!
//! Spec: <https://docs.openvino.ai/2026/documentation/openvino-ir-format/operation-sets/operation-specs/normalization/normalize-l2-1.html>
//!
//! Ports: `data` (f16, bf16, f32, f64; others are refused, E502) and `axes` (any integer type, a
//! scalar or 1-D; negative counts from the end); one output of the data's type and shape.
//! Attributes (both required): `eps` (float: rounded to f32 as OpenVINO stores it; a finite
//! number ≥ 0) and `eps_mode` (`add` or `max`, any case). Each element `x` of a group becomes
//! `x / sqrt(S + eps)` (`add`) or `x / sqrt(max(S, eps))` (`max`), `S` the sum of the squares
//! of the group's elements (the group: the elements that share every coordinate outside the
//! axes).
//!
//! Decisions:
//! * Empty `axes`: the spec's particular case, "each element divided by itself, 1 for all
//!   non-zero elements": 1 for every element but ±0, which give +0 (OpenVINO's reference);
//!   ±inf give 1 as non-zero elements; NaN gives NaN (the reference gives 1, since it only
//!   tests for 0: not copied). Axes whose dims are all 1 are not empty axes: each group is
//!   one element and the formula applies (`x / sqrt(x² + eps)`).
//! * Axes out of range and repeated axes are invalid inputs (E507; the spec asks for unique
//!   axes, OpenVINO counts a repeated one once), at inference when the rank and the values are
//!   known and at execution.
//! * Arithmetic: `S` is accumulated in f64 for every type (each square exact for f32, f16 and
//!   bf16), in the fixed summation order of `mvn.rs` (`tree_sum`; the same bits at any
//!   thread count, on any vector unit, in any layout of the groups); the quotient is computed
//!   in f64 and rounded once (f64: `x / sqrt(..)`; narrower types `x · (1/sqrt(..))`, whose f64
//!   error is far below their ulp). So f16, bf16 and f32 squares neither overflow nor
//!   underflow (OpenVINO's reference squares and sums in the type). f32 results are within
//!   half an ulp of the exact value plus about 2^-29 ulp (tested against a double-double
//!   reference). NaN in a group gives NaN (`max` included: the NaN sum wins); a zero group with
//!   `eps` 0 gives 0/0 = NaN. Not covered: f64 data beyond about 1e154, whose squares overflow
//!   (the group then gives 0).
//!
//! Inference: the output is the data's type and shape; the axes must be a scalar or 1-D.
//!
//! Execution: the groups' layout decides the loops, as for MVN (`mvn.rs`): rows, columns 16 at
//! a time (the channel axis of NCHW), or a copy of the data with the axes last.

use super::mvn::{
    GroupKernel, LANES, Layout, Real, Scatter, axes_of, col_tree, general_copies, lanes_sum,
    layout, mask, parse_eps, run_groups, tree_sum,
};
use super::{Arity, AttrError, Attrs, EvalCx, EvalError, InferCx, Op, OpDef};
use crate::shape::TensorType;
use crate::tensor::{Tensor, TypeSet};

#[derive(Clone, Debug, PartialEq)]
pub struct NormalizeL2 {
    /// At least 0, finite, an f32 value.
    pub eps: f64,
    /// `eps_mode="add"` (else `max`).
    pub add: bool,
}

pub const NORMALIZE_L2_1: OpDef = OpDef {
    name: "NormalizeL2",
    version: 1,
    inputs: Arity::exactly(2),
    outputs: Arity::exactly(1),
    parse,
};

fn parse_mode(text: &str) -> Result<bool, String> {
    let t = text.trim();
    if t.eq_ignore_ascii_case("add") {
        Ok(true)
    } else if t.eq_ignore_ascii_case("max") {
        Ok(false)
    } else {
        Err("expected add or max".into())
    }
}

fn parse(a: &Attrs) -> Result<Box<dyn Op>, Vec<AttrError>> {
    let (eps, add) = crate::attrs_all!(
        a.parse_required("eps", |t| parse_eps(t, true)),
        a.parse_required("eps_mode", parse_mode),
    )?;
    Ok(Box::new(NormalizeL2 {
        eps: eps.unwrap_or_default(),
        add: add.unwrap_or(true),
    }))
}

impl Op for NormalizeL2 {
    fn def(&self) -> Option<&'static OpDef> {
        Some(&NORMALIZE_L2_1)
    }

    fn infer(&self, cx: &mut InferCx<'_>) -> Option<Vec<TensorType>> {
        cx.require(0..1, TypeSet::FLOAT)?;
        cx.require(1..2, TypeSet::INT)?;
        let (data, axes) = (cx.input(0), cx.input(1));
        let out = vec![TensorType::new(data.element_type, data.shape.clone())];
        if let Some(r) = axes.shape.rank()
            && r > 1
        {
            return cx.invalid(1, format!("the axes must be a scalar or 1-D, not rank {r}"));
        }
        if let (Some(rank), Some(values)) = (data.shape.rank(), cx.ints(1))
            && let Err(reason) = axes_of(&values, rank)
        {
            return cx.invalid(1, reason);
        }
        Some(out)
    }

    fn eval(&self, cx: &EvalCx<'_>) -> Result<Vec<Tensor>, EvalError> {
        let data = cx.tensor(0)?;
        let ty = data.element_type();
        let axes_shape = cx.tensor(1)?.shape().to_vec();
        if axes_shape.len() > 1 {
            return Err(EvalError::Invalid(format!(
                "the axes must be a scalar or 1-D, not of shape {axes_shape:?}"
            )));
        }
        let shape = data.shape();
        let axes = axes_of(&cx.ints(1)?, shape.len()).map_err(EvalError::Invalid)?;
        cx.reserve(ty, data.len())?;
        if data.is_empty() {
            return Ok(vec![(*data).clone()]);
        }
        if axes.is_empty() {
            return crate::dispatch!(float: ty, T => Ok(vec![each_by_itself::<T>(&data)?]),
                _ => Err(EvalError::UnsupportedType { op: "NormalizeL2".into(), ty }));
        }
        let layout: Layout = layout(shape, &mask(&axes, shape.len()));
        cx.reserve_bytes(
            "the output and copies of the data",
            general_copies(&layout, &data),
        )?;
        crate::dispatch!(float: ty, T => run_groups::<T, _>(self, &data, &layout).map(|t| vec![t]),
            _ => Err(EvalError::UnsupportedType { op: "NormalizeL2".into(), ty }))
    }
}

/// Empty axes: 1 for every element but ±0 (+0) and NaN (NaN).
fn each_by_itself<T: Real>(x: &Tensor) -> Result<Tensor, EvalError> {
    let v = T::view(x).ok_or(EvalError::Internal("the data's type"))?;
    let (zero, one, nan) = (T::narrow(0.0), T::narrow(1.0), T::narrow(f64::NAN));
    Ok(T::wrap(v.mapv(|e| {
        let w = e.wide();
        if w == 0.0 {
            zero
        } else if w.is_nan() {
            nan
        } else {
            one
        }
    })))
}

impl NormalizeL2 {
    /// The divisor and its reciprocal for a sum of squares `s`.
    #[inline(always)]
    fn norm(&self, s: f64) -> (f64, f64) {
        let arg = if self.add {
            s + self.eps
        } else if s.is_nan() || s > self.eps {
            s
        } else {
            self.eps
        };
        let n = arg.sqrt();
        (n, 1.0 / n)
    }
}

/// `x / norm` in f64, rounded once.
#[inline(always)]
fn divided<T: Real>(x: T, norm: f64, inv: f64) -> T {
    let v = x.wide();
    T::narrow(if T::WIDE { v / norm } else { v * inv })
}

impl GroupKernel for NormalizeL2 {
    #[inline(always)]
    fn row<T: Real>(&self, x: &[T], out: &mut [T]) {
        let s = tree_sum(
            x.len(),
            #[inline(always)]
            |at, len| {
                lanes_sum(&x[at..at + len], |v| {
                    let w = v.wide();
                    w * w
                })
            },
            |a, b| a + b,
        );
        let (norm, inv) = self.norm(s);
        for (o, &v) in out.iter_mut().zip(x) {
            *o = divided(v, norm, inv);
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
        let s = col_tree(
            n,
            #[inline(always)]
            |at, len, acc| {
                for j in at..at + len {
                    for (a, &v) in acc[(j - at) % LANES].iter_mut().zip(row(j)) {
                        let w = v.wide();
                        *a += w * w;
                    }
                }
            },
        );
        let norms = s.map(|s| self.norm(s));
        let mut buf = [T::default(); super::mvn::W];
        for j in 0..n {
            for ((o, &v), &(norm, inv)) in buf.iter_mut().zip(row(j)).zip(&norms) {
                *o = divided(v, norm, inv);
            }
            // SAFETY: this strip's own elements (`for_columns`).
            unsafe { out.put(base + j * inner + c0, &buf[..w]) };
        }
    }
}

#[cfg(test)]
mod tests {
    use half::{bf16, f16};

    use super::*;
    use crate::dtype::ElementType;
    use crate::num::{Cast, Num};
    use crate::ops::context::{eval_for_test, inferred_shape_for_test, tensor_for_test};
    use crate::ops::mvn::tests::{Dd, Rng, ulps_f32};
    use crate::shape::PartialShape;
    use crate::tensor::Element;

    fn t<T: Element>(shape: &[usize], v: Vec<T>) -> Tensor {
        tensor_for_test(shape, v)
    }

    fn op(eps: f64, add: bool) -> NormalizeL2 {
        NormalizeL2 { eps, add }
    }

    fn run(o: &NormalizeL2, x: Tensor, axes: Tensor) -> Result<Tensor, EvalError> {
        eval_for_test(o, &[x, axes], 1 << 26)
    }

    fn axes(v: &[i64]) -> Tensor {
        t(&[v.len()], v.to_vec())
    }

    use crate::ops::context::f32s_for_test as f32s;

    /// Hand-computed (numpy: `x / np.sqrt(np.maximum((x**2).sum(axes, keepdims=True), eps))`
    /// or `+ eps`).
    #[test]
    fn table() {
        let x = || t(&[2, 2], vec![3f32, 4.0, 0.0, -5.0]);
        let cases: Vec<(NormalizeL2, Tensor, Vec<f64>)> = vec![
            // rows: norms 5 and 5
            (op(0.0, true), axes(&[1]), vec![0.6, 0.8, 0.0, -1.0]),
            (op(1e-6, false), axes(&[-1]), vec![0.6, 0.8, 0.0, -1.0]),
            // a scalar axis
            (op(0.0, true), t(&[], vec![1i32]), vec![0.6, 0.8, 0.0, -1.0]),
            // columns: norms 3 and sqrt(41)
            (
                op(0.0, false),
                axes(&[0]),
                vec![1.0, 4.0 / 41f64.sqrt(), 0.0, -5.0 / 41f64.sqrt()],
            ),
            // all: norm sqrt(50)
            (
                op(0.0, true),
                axes(&[1, 0]),
                [3.0, 4.0, 0.0, -5.0]
                    .iter()
                    .map(|v| v / 50f64.sqrt())
                    .collect(),
            ),
            // eps added: sqrt(25 + 11) = 6
            (
                op(11.0, true),
                axes(&[1]),
                vec![0.5, 4.0 / 6.0, 0.0, -5.0 / 6.0],
            ),
            // eps as the maximum: sqrt(max(25, 100)) = 10
            (op(100.0, false), axes(&[1]), vec![0.3, 0.4, 0.0, -0.5]),
            // no axes: each element by itself
            (op(0.0, true), axes(&[]), vec![1.0, 1.0, 0.0, 1.0]),
            (
                op(5.0, false),
                t(&[0], Vec::<u8>::new()),
                vec![1.0, 1.0, 0.0, 1.0],
            ),
        ];
        for (o, a, want) in cases {
            let got = f32s(&run(&o, x(), a).unwrap());
            for (k, (&g, &w)) in got.iter().zip(&want).enumerate() {
                assert!(ulps_f32(g, w) <= 0.5, "{o:?} element {k}: {g} vs {w}");
            }
        }
    }

    #[test]
    fn specials() {
        let inf = f32::INFINITY;
        let nan = f32::NAN;
        // Empty axes.
        let got = f32s(
            &run(
                &op(0.0, true),
                t(&[5], vec![-0.0, inf, -inf, nan, -2.0]),
                axes(&[]),
            )
            .unwrap(),
        );
        assert_eq!(
            got[..3].iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
            [0, 1f32.to_bits(), 1f32.to_bits()]
        );
        assert!(got[3].is_nan());
        assert_eq!(got[4], 1.0);
        // Axes of dims 1: x / sqrt(x² + eps).
        let got = f32s(&run(&op(0.0, true), t(&[2, 1], vec![-2f32, 0.5]), axes(&[1])).unwrap());
        assert_eq!(got, [-1.0, 1.0]);
        // NaN in a group, with either mode.
        for add in [true, false] {
            let got = f32s(
                &run(
                    &op(1e-30, add),
                    t(&[2, 2], vec![nan, 1.0, 3.0, 4.0]),
                    axes(&[1]),
                )
                .unwrap(),
            );
            assert!(got[0].is_nan() && got[1].is_nan(), "{got:?}");
            assert_eq!(&got[2..], [0.6, 0.8]);
        }
        // A zero group: 0 with eps, 0/0 with eps 0.
        let got = f32s(&run(&op(1e-12, false), t(&[2], vec![0f32, -0.0]), axes(&[0])).unwrap());
        assert_eq!(
            got.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
            [0, (-0f32).to_bits()]
        );
        let got = f32s(&run(&op(0.0, true), t(&[2], vec![0f32, 0.0]), axes(&[0])).unwrap());
        assert!(got.iter().all(|v| v.is_nan()));
        // Large and tiny f32 values: no overflow or underflow in the squares.
        let got = f32s(&run(&op(0.0, true), t(&[2], vec![3e38f32, f32::MAX]), axes(&[0])).unwrap());
        let n = ((3e38f32 as f64).powi(2) + (f32::MAX as f64).powi(2)).sqrt();
        assert!(ulps_f32(got[0], 3e38f32 as f64 / n) <= 0.5, "{got:?}");
        let got = f32s(&run(&op(0.0, true), t(&[2], vec![3e-45f32, 4e-45]), axes(&[0])).unwrap());
        let (a, b) = (3e-45f32 as f64, 4e-45f32 as f64);
        assert!(
            ulps_f32(got[0], a / (a * a + b * b).sqrt()) <= 0.5,
            "{got:?}"
        );
        // Empty data.
        assert_eq!(
            run(&op(0.0, true), t(&[0, 4], Vec::<f32>::new()), axes(&[1]))
                .unwrap()
                .shape(),
            [0, 4]
        );
    }

    /// The exact result of one group from a double-double sum of squares.
    fn reference(xs: &[f64], eps: f64, add: bool) -> Vec<f64> {
        let s = xs
            .iter()
            .fold(Dd(0.0, 0.0), |a, &x| a.add(Dd(x, 0.0).mul(Dd(x, 0.0))));
        let arg = if add {
            s.add(Dd(eps, 0.0))
        } else if s.0 > eps {
            s
        } else {
            Dd(eps, 0.0)
        };
        let norm = arg.sqrt();
        xs.iter().map(|&x| Dd(x, 0.0).div(norm).0).collect()
    }

    #[test]
    fn f32_accuracy_against_a_double_double_reference() {
        let mut rng = Rng(17);
        let mut worst = 0.0f64;
        for &n in &[1usize, 2, 7, 16, 33, 256, 257, 1000, 5000] {
            for &scale in &[1e-30, 1e-3, 1.0, 1e3, 1e30] {
                let xs: Vec<f32> = (0..n).map(|_| (scale * rng.normal()) as f32).collect();
                let o = op(1e-12, false);
                // As rows and as columns: the same bits.
                let got = f32s(&run(&o, t(&[1, n], xs.clone()), axes(&[1])).unwrap());
                let cols: Vec<f32> = xs.iter().flat_map(|&v| [v, v]).collect();
                let got_c = f32s(&run(&o, t(&[n, 2], cols), axes(&[0])).unwrap());
                let want = reference(
                    &xs.iter().map(|&v| v as f64).collect::<Vec<_>>(),
                    o.eps,
                    false,
                );
                for (k, (&g, &w)) in got.iter().zip(&want).enumerate() {
                    assert_eq!(g.to_bits(), got_c[2 * k].to_bits());
                    worst = worst.max(ulps_f32(g, w));
                }
            }
        }
        eprintln!("NormalizeL2 f32: worst {worst} ulp");
        assert!(worst <= 0.5 + 1e-6, "{worst}");
    }

    #[test]
    fn other_types_and_thread_counts() {
        let mut rng = Rng(23);
        let xs: Vec<f64> = (0..400).map(|_| rng.normal()).collect();
        let o = op(1e-10f32 as f64, true);
        let want = reference(&xs, o.eps, true);
        let got = run(&o, t(&[400], xs.clone()), axes(&[0])).unwrap();
        for (&g, &w) in got.view::<f64>().unwrap().iter().zip(&want) {
            assert!((g - w).abs() <= 2.0 * f64::EPSILON * w.abs(), "{g} {w}");
        }
        let h: Vec<f16> = xs.iter().map(|&v| f16::from_f64(v)).collect();
        let want = reference(
            &h.iter().map(|v| v.to_f64()).collect::<Vec<_>>(),
            o.eps,
            true,
        );
        let got = run(&o, t(&[400], h), axes(&[-1])).unwrap();
        for (&g, &w) in got.view::<f16>().unwrap().iter().zip(&want) {
            assert_eq!(g, <f16 as Cast>::from_num(Num::Float(w)));
        }
        let b: Vec<bf16> = xs.iter().map(|&v| bf16::from_f64(v)).collect();
        let want = reference(
            &b.iter().map(|v| v.to_f64()).collect::<Vec<_>>(),
            o.eps,
            true,
        );
        let got = run(&o, t(&[400], b), axes(&[0])).unwrap();
        for (&g, &w) in got.view::<bf16>().unwrap().iter().zip(&want) {
            assert_eq!(g, <bf16 as Cast>::from_num(Num::Float(w)));
        }
        // 1 and 4 threads: rows, columns (NCHW over C) and the general layout.
        let x: Vec<f32> = (0..4 * 64 * 32 * 16).map(|_| rng.normal() as f32).collect();
        let x = t(&[4, 64, 32, 16], x);
        let pool = |k| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(k)
                .build()
                .unwrap()
        };
        for a in [&[1i64][..], &[2, 3], &[0, 2], &[-1, 1]] {
            let go =
                |k: usize| pool(k).install(|| run(&o, x.clone(), axes(a)).unwrap().to_le_bytes());
            assert_eq!(go(1), go(4), "{a:?}");
        }
    }

    #[test]
    fn parse_table() {
        let parsed = |attrs: &[(&str, &str)]| -> Result<String, Vec<String>> {
            let data = crate::ops::context::attrs_for_test(attrs);
            (NORMALIZE_L2_1.parse)(&Attrs::new(Some(&data)))
                .map(|o| format!("{o:?}"))
                .map_err(|e| {
                    e.iter()
                        .map(|e| format!("{}: {}", e.name, e.reason))
                        .collect()
                })
        };
        assert_eq!(
            parsed(&[("eps", "1e-8"), ("eps_mode", "add")]),
            Ok(format!("{:?}", op(1e-8f32 as f64, true)))
        );
        assert_eq!(
            parsed(&[("eps", "0"), ("eps_mode", "MAX")]),
            Ok(format!("{:?}", op(0.0, false)))
        );
        assert_eq!(
            parsed(&[("eps", "-1e-8"), ("eps_mode", "sum")]),
            Err(vec![
                "eps: eps must be a finite number ≥ 0, not -0.00000001".into(),
                "eps_mode: expected add or max".into()
            ])
        );
        assert_eq!(parsed(&[]), Err(vec!["eps: ".into(), "eps_mode: ".into()]));
    }

    #[test]
    fn infer_and_invalid_axes() {
        let d = |s: &str| TensorType::new(ElementType::F16, PartialShape::parse(s).unwrap());
        let known = |v: &[i64]| TensorType::of_value(axes(v));
        let any = |s: &str| TensorType::new(ElementType::I32, PartialShape::parse(s).unwrap());
        let o = op(1e-6, true);
        assert_eq!(
            inferred_shape_for_test(&o, &[&d("2,?,3..4"), &known(&[1])]).as_deref(),
            Ok("[2,?,3..4]")
        );
        assert_eq!(
            inferred_shape_for_test(&o, &[&d("..."), &known(&[5])]).as_deref(),
            Ok("[...]")
        );
        assert_eq!(
            inferred_shape_for_test(&o, &[&d("2,3"), &any("?")]).as_deref(),
            Ok("[2,3]")
        );
        assert_eq!(
            inferred_shape_for_test(&o, &[&d("2,3"), &any("")]).as_deref(),
            Ok("[2,3]")
        );
        for (data, a, want) in [
            (
                "2,?",
                known(&[2]),
                "axis 2 is out of range for data of rank 2 (-2..1)",
            ),
            (
                "2,1..3",
                known(&[-1, 1]),
                "axis 1 (axes[1]) repeats axes[0] = -1",
            ),
            (
                "2,3",
                any("1,2"),
                "the axes must be a scalar or 1-D, not rank 2",
            ),
            ("", known(&[0]), "axis 0 is out of range for a scalar"),
        ] {
            let m = inferred_shape_for_test(&o, &[&d(data), &a]).unwrap_err();
            assert!(m.contains(want), "{m}");
        }
        let m = inferred_shape_for_test(
            &o,
            &[
                &TensorType::new(ElementType::I8, PartialShape::parse("2").unwrap()),
                &known(&[0]),
            ],
        )
        .unwrap_err();
        assert!(m.contains("does not accept i8"), "{m}");
        let m = inferred_shape_for_test(
            &o,
            &[
                &d("2"),
                &TensorType::new(ElementType::F32, PartialShape::parse("1").unwrap()),
            ],
        )
        .unwrap_err();
        assert!(m.contains("does not accept f32"), "{m}");
        for (a, want) in [
            (axes(&[-3]), "axis -3 is out of range for data of rank 2"),
            (axes(&[0, 0]), "repeats axes[0] = 0"),
            (
                t(&[1, 1], vec![0i64]),
                "the axes must be a scalar or 1-D, not of shape [1, 1]",
            ),
        ] {
            match run(&o, t(&[2, 2], vec![1f32; 4]), a) {
                Err(EvalError::Invalid(m)) => assert!(m.contains(want), "{m}"),
                other => panic!("{other:?}"),
            }
        }
        let big = t(&[256, 256], vec![1f32; 1 << 16]);
        assert!(matches!(
            eval_for_test(&o, &[big.clone(), axes(&[1])], 200_000),
            Err(EvalError::Memory(_))
        ));
        assert!(eval_for_test(&o, &[big, axes(&[1])], 300_000).is_ok());
    }
}
