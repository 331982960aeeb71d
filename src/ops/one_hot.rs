//! OneHot-1 and OneHot-16: a new axis of `depth` elements for each index, `on_value` where
//! the index points and `off_value` elsewhere.
//!
//! Spec: <https://docs.openvino.ai/2026/documentation/openvino-ir-format/operation-sets/operation-specs/sequence/one-hot-16.html>
//! (and `one-hot-1`).
//!
//! Ports: `indices` (i32 or i64, any rank), `depth` (a scalar of i32 or i64), `on_value` and
//! `off_value` (scalars of one type, any type ovir computes); one output of that type whose
//! shape is the indices' with a new dim `depth` inserted at `axis`:
//! `output[..., d, ...] = on_value if indices[...] == d else off_value`. Attributes: `axis`
//! (required; negative counts from the end of the output's dims, `-r-1..=r` for indices of
//! rank r) and, for OneHot-16, `negative_indices_mode`: `ignore_negative` (the default; what
//! OpenVINO writes) or `normalize`, in any case; the spec's spelling `ignore-negative` is read
//! too.
//!
//! Indices: one in `0..depth` selects its position; any other gives a row of `off_value`
//! (the spec: an index ≥ depth is "well-formed"). In OneHot-16's `normalize` mode an index in
//! `-depth..0` counts from the end (`depth + index`).
//!
//! Decisions:
//! * **A negative index in OneHot-1 gives a row of `off_value`**: the OneHot-1 page calls it
//!   undefined, but the OneHot-16 page defines OneHot-1 as its `ignore_negative` mode, and
//!   OpenVINO's reference ignores negative indices.
//! * **depth 0 gives an empty output** (OpenVINO checks only that depth is not negative; the
//!   spec says "positive"); **a negative depth is an error** (E507), as in OpenVINO.
//! * `depth`, `on_value` and `off_value` must be scalars (rank 0), as OpenVINO's shape
//!   inference requires; `on_value` and `off_value` of different types are an error (E501).
//! * Index types are the spec's (i32, i64); OpenVINO also reads other integer types.
//!
//! Inference: the depth's value gives the new dim, its bounds an interval dim, and otherwise
//! it is `?`; a dynamic rank of the indices gives a dynamic rank.
//!
//! Execution: depth is user data, so the output's size (indices × depth) is computed with
//! checked arithmetic and checked against the memory budget before anything is allocated; the
//! output is filled with `off_value` and each index then writes its `on_value`. Values are
//! copied bit for bit.

use super::{Arity, AttrError, Attrs, EvalCx, EvalError, InferCx, Op, OpDef};
use crate::dtype::ElementType;
use crate::error::ErrorKind;
use crate::num::{Cast, Num};
use crate::shape::types::UNBOUNDED;
use crate::shape::{Dim, PartialShape, TensorType};
use crate::tensor::{Element, Tensor, TypeSet};

/// What OneHot-16 does with a negative index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NegativeIndices {
    /// A row of `off_value` (OneHot-1's behaviour).
    Ignore,
    /// `-depth..0` counts from the end.
    Normalize,
}

fn parse_negative_mode(text: &str) -> Result<NegativeIndices, String> {
    let t = text.trim();
    if t.eq_ignore_ascii_case("ignore_negative") || t.eq_ignore_ascii_case("ignore-negative") {
        Ok(NegativeIndices::Ignore)
    } else if t.eq_ignore_ascii_case("normalize") {
        Ok(NegativeIndices::Normalize)
    } else {
        Err("expected ignore_negative or normalize".into())
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct OneHot {
    /// 1 or 16.
    pub version: u32,
    pub axis: i64,
    pub negative: NegativeIndices,
}

pub const ONE_HOT_1: OpDef = OpDef {
    name: "OneHot",
    version: 1,
    inputs: Arity::exactly(4),
    outputs: Arity::exactly(1),
    parse: parse_1,
};

pub const ONE_HOT_16: OpDef = OpDef {
    version: 16,
    parse: parse_16,
    ..ONE_HOT_1
};

fn parse_1(a: &Attrs) -> Result<Box<dyn Op>, Vec<AttrError>> {
    let axis = a
        .parse_required("axis", super::parse_i64)
        .map_err(|e| vec![e])?;
    Ok(Box::new(OneHot {
        version: 1,
        axis,
        negative: NegativeIndices::Ignore,
    }))
}

fn parse_16(a: &Attrs) -> Result<Box<dyn Op>, Vec<AttrError>> {
    let (axis, negative) = crate::attrs_all!(
        a.parse_required("axis", super::parse_i64),
        a.parse_or(
            "negative_indices_mode",
            NegativeIndices::Ignore,
            parse_negative_mode
        ),
    )?;
    let (Some(axis), Some(negative)) = (axis, negative) else {
        return Err(Vec::new());
    };
    Ok(Box::new(OneHot {
        version: 16,
        axis,
        negative,
    }))
}

/// The spec's index and depth types.
fn index_type(ty: ElementType) -> bool {
    matches!(ty, ElementType::I32 | ElementType::I64)
}

impl OneHot {
    /// The new axis's position for indices of rank `rank`, or why there is none.
    fn axis(&self, rank: usize) -> Result<usize, String> {
        let r = rank + 1;
        super::normalize_axis(self.axis, r).ok_or_else(|| {
            format!(
                "axis {} is out of range for an output of rank {r} (-{r}..{r})",
                self.axis
            )
        })
    }

    /// The position `index` selects in `0..depth`, if any.
    fn resolve(&self, index: i64, depth: i64) -> Option<usize> {
        if (0..depth).contains(&index) {
            Some(index as usize)
        } else if self.negative == NegativeIndices::Normalize && (-depth..0).contains(&index) {
            Some((index + depth) as usize)
        } else {
            None
        }
    }
}

fn negative_depth(d: i64) -> String {
    format!("depth is {d}; it must be 0 or more")
}

/// The one-hot output of `indices` (flat), with the new axis between `outer` and `inner`
/// blocks of the indices, `depth` long.
fn one_hot<T: Element>(
    op: &OneHot,
    indices: &Tensor,
    (outer, depth, inner): (usize, usize, usize),
    (on, off): (T, T),
    out_shape: &[usize],
) -> Option<Result<Tensor, EvalError>> {
    fn go<I: Cast, T: Element>(
        op: &OneHot,
        indices: &Tensor,
        (outer, depth, inner): (usize, usize, usize),
        (on, off): (T, T),
        out_shape: &[usize],
    ) -> Option<Result<Tensor, EvalError>> {
        let idx = crate::ops::kernel::contiguous::<I>(indices)?;
        let mut out = vec![off; outer * depth * inner];
        let d = depth as i64;
        for o in 0..outer {
            for i in 0..inner {
                let Num::Int(v) = idx[o * inner + i].to_num() else {
                    return None;
                };
                if let Some(p) = op.resolve(v as i64, d) {
                    out[(o * depth + p) * inner + i] = on;
                }
            }
        }
        Some(crate::ops::kernel::tensor_from(out_shape, out))
    }
    match indices.element_type() {
        ElementType::I32 => go::<i32, T>(op, indices, (outer, depth, inner), (on, off), out_shape),
        ElementType::I64 => go::<i64, T>(op, indices, (outer, depth, inner), (on, off), out_shape),
        _ => None,
    }
}

impl Op for OneHot {
    fn def(&self) -> Option<&'static OpDef> {
        Some(if self.version == 1 {
            &ONE_HOT_1
        } else {
            &ONE_HOT_16
        })
    }

    fn infer(&self, cx: &mut InferCx<'_>) -> Option<Vec<TensorType>> {
        for i in 0..2 {
            let ty = cx.input(i).element_type;
            if ty != ElementType::Dynamic && !index_type(ty) {
                cx.report_input(
                    i,
                    ErrorKind::UnsupportedElementType {
                        op: "OneHot".into(),
                        ty,
                    },
                );
                return None;
            }
        }
        cx.require(2..4, TypeSet::ANY)?;
        let (indices, depth, on, off) = (cx.input(0), cx.input(1), cx.input(2), cx.input(3));
        let out_ty = match (on.element_type, off.element_type) {
            (a, ElementType::Dynamic) => a,
            (ElementType::Dynamic, b) => b,
            (a, b) if a == b => a,
            (a, b) => {
                cx.report_input(3, ErrorKind::ElementTypeMismatch { a, b });
                return None;
            }
        };
        for (i, name) in [(1, "depth"), (2, "on_value"), (3, "off_value")] {
            if let Some(r) = cx.input(i).shape.rank()
                && r != 0
            {
                return cx.invalid(i, format!("{name} must be a scalar (rank 0), not rank {r}"));
            }
        }
        let new_dim = match depth.int_bounds().as_deref() {
            Some(b) if b.len() == 1 => {
                let (lo, hi) = (b.lo[0], b.hi[0]);
                if hi < 0 {
                    return cx.invalid(1, negative_depth(hi));
                }
                let hi = (hi != UNBOUNDED).then_some(hi as u64);
                Dim::interval(lo.max(0) as u64, hi).unwrap_or(Dim::DYNAMIC)
            }
            _ => Dim::DYNAMIC,
        };
        let Some(dims) = indices.shape.dims() else {
            return Some(vec![TensorType::new(out_ty, PartialShape::dynamic_rank())]);
        };
        let axis = match self.axis(dims.len()) {
            Ok(a) => a,
            Err(reason) => return cx.invalid(0, reason),
        };
        let mut out = dims.to_vec();
        out.insert(axis, new_dim);
        Some(vec![TensorType::new(out_ty, PartialShape::new(out))])
    }

    fn eval(&self, cx: &EvalCx<'_>) -> Result<Vec<Tensor>, EvalError> {
        let (on, off) = (cx.tensor(2)?, cx.tensor(3)?);
        let ty = on.element_type();
        if off.element_type() != ty {
            return Err(EvalError::Types(ty, off.element_type()));
        }
        for (i, name) in [(1, "depth"), (2, "on_value"), (3, "off_value")] {
            let r = cx.value(i).shape().len();
            if r != 0 {
                return Err(EvalError::Invalid(format!(
                    "{name} must be a scalar (rank 0), not rank {r}"
                )));
            }
        }
        let depth = match cx.ints(1)?.as_slice() {
            &[d] => d,
            _ => return Err(EvalError::Invalid("depth is not one integer".into())),
        };
        if depth < 0 {
            return Err(EvalError::Invalid(negative_depth(depth)));
        }
        let indices = cx.tensor(0)?;
        let ishape = indices.shape().to_vec();
        let axis = self.axis(ishape.len()).map_err(EvalError::Invalid)?;
        let too_large = || {
            EvalError::Invalid(format!(
                "the output of {} indices × depth {depth} elements is too large",
                indices.len()
            ))
        };
        let depth_n = usize::try_from(depth).map_err(|_| too_large())?;
        let total = indices.len().checked_mul(depth_n).ok_or_else(too_large)?;
        cx.reserve(ty, total)?;
        let mut out_shape = ishape.clone();
        out_shape.insert(axis, depth_n);
        let dims = (
            ishape[..axis].iter().product(),
            depth_n,
            ishape[axis..].iter().product(),
        );
        fn scalar<T: Element>(t: &Tensor) -> Option<T> {
            T::view(t)?.iter().next().copied()
        }
        crate::dispatch!(any: ty, T => {
            match (scalar::<T>(&on), scalar::<T>(&off)) {
                (Some(a), Some(b)) => one_hot(self, &indices, dims, (a, b), &out_shape),
                _ => None,
            }
        }, _ => None)
        .unwrap_or_else(|| {
            Err(EvalError::UnsupportedType {
                op: "OneHot".into(),
                ty: indices.element_type(),
            })
        })
        .map(|t| vec![t])
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use half::f16;

    use super::*;
    use crate::memory::Budget;
    use crate::ops::context::{infer_for_test, tensor_for_test};
    use crate::shape::types::Bounds;
    use crate::tensor::Value;

    fn op(version: u32, axis: i64, negative: NegativeIndices) -> OneHot {
        OneHot {
            version,
            axis,
            negative,
        }
    }

    fn scalar<T: Element>(v: T) -> Tensor {
        tensor_for_test(&[], vec![v])
    }

    fn run(o: &OneHot, inputs: [Tensor; 4], limit: u64) -> Result<Tensor, EvalError> {
        let values: Vec<Value<'_>> = inputs
            .into_iter()
            .map(|t| Value::Tensor(Arc::new(t)))
            .collect();
        o.eval(&EvalCx::new(&values, Budget { limit, in_use: 0 }))
            .map(|mut v| v.remove(0))
    }

    /// i64 indices of `shape`, depth, on 1 and off 0 as i32: the output's shape and values.
    fn hot(o: &OneHot, shape: &[usize], indices: &[i64], depth: i64) -> (Vec<usize>, Vec<i32>) {
        let out = run(
            o,
            [
                tensor_for_test(shape, indices.to_vec()),
                scalar(depth),
                scalar(1i32),
                scalar(0i32),
            ],
            1 << 20,
        )
        .unwrap();
        (
            out.shape().to_vec(),
            out.view::<i32>().unwrap().iter().copied().collect(),
        )
    }

    #[test]
    fn spec_examples() {
        // OneHot-1, axis -1: [0, 3, 1, 2], depth 3, on 1, off 2.
        let out = run(
            &op(1, -1, NegativeIndices::Ignore),
            [
                tensor_for_test(&[4], vec![0i32, 3, 1, 2]),
                scalar(3i32),
                scalar(1i32),
                scalar(2i32),
            ],
            1 << 20,
        )
        .unwrap();
        assert_eq!(
            out,
            tensor_for_test(&[4, 3], vec![1i32, 2, 2, 2, 2, 2, 2, 1, 2, 2, 2, 1])
        );
        // OneHot-16 normalize, axis -1: [0, -5, -2, 2], depth 3, on 1, off 2.
        let out = run(
            &op(16, -1, NegativeIndices::Normalize),
            [
                tensor_for_test(&[4], vec![0i64, -5, -2, 2]),
                scalar(3i64),
                scalar(1i32),
                scalar(2i32),
            ],
            1 << 20,
        )
        .unwrap();
        assert_eq!(
            out,
            tensor_for_test(&[4, 3], vec![1i32, 2, 2, 2, 2, 2, 2, 1, 2, 2, 2, 1])
        );
        // Axis 1: [[0, 3, 1], [1, 2, 4]], depth 3.
        assert_eq!(
            hot(
                &op(1, 1, NegativeIndices::Ignore),
                &[2, 3],
                &[0, 3, 1, 1, 2, 4],
                3
            ),
            (
                vec![2, 3, 3],
                vec![1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0]
            )
        );
    }

    /// A row: version, axis, mode, 1-D indices, depth, the output's shape and values.
    type Case = (
        u32,
        i64,
        NegativeIndices,
        &'static [i64],
        i64,
        &'static [usize],
        &'static [i32],
    );

    /// `np.eye(depth)[indices]` moved to each axis, by hand.
    #[test]
    fn axes_and_negative_indices() {
        let ignore = NegativeIndices::Ignore;
        let normalize = NegativeIndices::Normalize;
        let cases: &[Case] = &[
            // Axis 0 of a 1-D input: the rows are the depth.
            (
                1,
                0,
                ignore,
                &[2, 0, -1],
                3,
                &[3, 3],
                &[0, 1, 0, 0, 0, 0, 1, 0, 0],
            ),
            (
                1,
                -2,
                ignore,
                &[2, 0, -1],
                3,
                &[3, 3],
                &[0, 1, 0, 0, 0, 0, 1, 0, 0],
            ),
            (
                1,
                1,
                ignore,
                &[2, 0, -1],
                3,
                &[3, 3],
                &[0, 0, 1, 1, 0, 0, 0, 0, 0],
            ),
            (
                16,
                1,
                ignore,
                &[2, 0, -1],
                3,
                &[3, 3],
                &[0, 0, 1, 1, 0, 0, 0, 0, 0],
            ),
            (
                16,
                1,
                normalize,
                &[2, 0, -1],
                3,
                &[3, 3],
                &[0, 0, 1, 1, 0, 0, 0, 0, 1],
            ),
            (
                16,
                1,
                normalize,
                &[-3, -4, 3],
                3,
                &[3, 3],
                &[1, 0, 0, 0, 0, 0, 0, 0, 0],
            ),
            (
                16,
                -1,
                normalize,
                &[i64::MIN, i64::MAX, -1],
                2,
                &[3, 2],
                &[0, 0, 0, 0, 0, 1],
            ),
            // A scalar index.
            (1, 0, ignore, &[1], 4, &[4], &[0, 1, 0, 0]),
            // Depth 0: empty.
            (1, 0, ignore, &[1, 2], 0, &[0, 2], &[]),
            // Depth 1.
            (1, -1, ignore, &[0, 1], 1, &[2, 1], &[1, 0]),
        ];
        for &(version, axis, mode, indices, depth, shape, want) in cases {
            let ishape: &[usize] = if indices.len() == 1 && depth == 4 {
                &[]
            } else {
                &[indices.len()][..]
            };
            let ishape = ishape.to_vec();
            assert_eq!(
                hot(&op(version, axis, mode), &ishape, indices, depth),
                (shape.to_vec(), want.to_vec()),
                "{version} {axis} {mode:?} {indices:?} {depth}"
            );
        }
        // 3-D output, new axis in the middle of [2, 2]: out[a, d, b].
        assert_eq!(
            hot(&op(1, 1, ignore), &[2, 2], &[1, 0, 2, 1], 3),
            (vec![2, 3, 2], vec![0, 1, 1, 0, 0, 0, 0, 0, 0, 1, 1, 0])
        );
        assert_eq!(
            hot(&op(1, 2, ignore), &[2, 2], &[1, 0, 2, 1], 3),
            (vec![2, 2, 3], vec![0, 1, 0, 1, 0, 0, 0, 0, 1, 0, 1, 0])
        );
        // Empty indices.
        assert_eq!(
            hot(&op(1, 0, ignore), &[0, 3], &[], 5),
            (vec![5, 0, 3], vec![])
        );
    }

    /// on/off values of any type, copied bit for bit.
    #[test]
    fn any_value_type() {
        let nan = f16::from_bits(0xfe01);
        let out = run(
            &op(1, -1, NegativeIndices::Ignore),
            [
                tensor_for_test(&[2], vec![1i32, 0]),
                scalar(2i32),
                scalar(nan),
                scalar(f16::NEG_ZERO),
            ],
            1 << 20,
        )
        .unwrap();
        assert_eq!(
            out.to_le_bytes(),
            tensor_for_test(&[2, 2], vec![f16::NEG_ZERO, nan, nan, f16::NEG_ZERO]).to_le_bytes()
        );
        let out = run(
            &op(16, 0, NegativeIndices::Ignore),
            [
                tensor_for_test(&[2], vec![1i64, 5]),
                scalar(2i32),
                scalar(true),
                scalar(false),
            ],
            1 << 20,
        )
        .unwrap();
        assert_eq!(
            out,
            tensor_for_test(&[2, 2], vec![false, false, true, false])
        );
        let out = run(
            &op(1, 0, NegativeIndices::Ignore),
            [
                tensor_for_test(&[1], vec![0i32]),
                scalar(1i64),
                scalar(u64::MAX),
                scalar(7u64),
            ],
            1 << 20,
        )
        .unwrap();
        assert_eq!(out, tensor_for_test(&[1, 1], vec![u64::MAX]));
    }

    #[test]
    fn errors_and_the_budget() {
        let o = op(1, -1, NegativeIndices::Ignore);
        let idx = || tensor_for_test(&[3], vec![0i32, 1, 2]);
        let cases: Vec<([Tensor; 4], &str)> = vec![
            (
                [idx(), scalar(-1i32), scalar(1.0f32), scalar(0.0f32)],
                "depth is -1; it must be 0 or more",
            ),
            (
                [
                    idx(),
                    tensor_for_test(&[1], vec![3i32]),
                    scalar(1.0f32),
                    scalar(0.0f32),
                ],
                "depth must be a scalar (rank 0), not rank 1",
            ),
            (
                [
                    idx(),
                    scalar(3i32),
                    tensor_for_test(&[1], vec![1.0f32]),
                    scalar(0.0f32),
                ],
                "on_value must be a scalar (rank 0), not rank 1",
            ),
            // 3 × (2^63 − 1) elements: the product overflows.
            (
                [idx(), scalar(i64::MAX), scalar(1u8), scalar(0u8)],
                "too large",
            ),
        ];
        for (inputs, want) in cases {
            match run(&o, inputs, 1 << 20) {
                Err(EvalError::Invalid(m)) => assert!(m.contains(want), "{m}"),
                other => panic!("expected {want:?}, got {other:?}"),
            }
        }
        assert_eq!(
            run(
                &o,
                [idx(), scalar(3i32), scalar(1.0f32), scalar(0u8)],
                1 << 20
            ),
            Err(EvalError::Types(ElementType::F32, ElementType::U8))
        );
        match run(
            &op(1, 2, NegativeIndices::Ignore),
            [idx(), scalar(3i32), scalar(1u8), scalar(0u8)],
            1 << 20,
        ) {
            Err(EvalError::Invalid(m)) => {
                assert_eq!(m, "axis 2 is out of range for an output of rank 2 (-2..2)")
            }
            other => panic!("{other:?}"),
        }
        // A huge depth that does not overflow is refused by the budget before any allocation.
        let huge = run(
            &o,
            [idx(), scalar(1i64 << 40), scalar(1u8), scalar(0u8)],
            1 << 30,
        );
        assert!(matches!(huge, Err(EvalError::Memory(_))), "{huge:?}");
        // 3 × 1000 f32 = 12000 bytes.
        let inputs = || [idx(), scalar(1000i32), scalar(1.0f32), scalar(0.0f32)];
        assert!(matches!(
            run(&o, inputs(), 11_999),
            Err(EvalError::Memory(_))
        ));
        assert!(run(&o, inputs(), 12_000).is_ok());
    }

    fn parsed(version: u32, attrs: &[(&str, &str)]) -> Result<String, Vec<String>> {
        let def = if version == 1 {
            &ONE_HOT_1
        } else {
            &ONE_HOT_16
        };
        crate::ops::context::parsed_for_test(def, attrs)
    }

    #[test]
    fn parse_table() {
        let ok = |v, a, m| Ok(format!("{:?}", op(v, a, m)));
        assert_eq!(
            parsed(1, &[("axis", "-1")]),
            ok(1, -1, NegativeIndices::Ignore)
        );
        // OneHot-1 has no negative_indices_mode.
        assert_eq!(
            parsed(1, &[("axis", "2"), ("negative_indices_mode", "normalize")]),
            ok(1, 2, NegativeIndices::Ignore)
        );
        assert_eq!(
            parsed(16, &[("axis", "0")]),
            ok(16, 0, NegativeIndices::Ignore)
        );
        for (text, mode) in [
            ("normalize", NegativeIndices::Normalize),
            ("NORMALIZE", NegativeIndices::Normalize),
            ("ignore_negative", NegativeIndices::Ignore),
            ("ignore-negative", NegativeIndices::Ignore),
        ] {
            assert_eq!(
                parsed(16, &[("axis", "0"), ("negative_indices_mode", text)]),
                ok(16, 0, mode)
            );
        }
        assert_eq!(parsed(1, &[]), Err(vec!["axis None: ".into()]));
        assert_eq!(
            parsed(16, &[("negative_indices_mode", "wrap")]),
            Err(vec![
                "axis None: ".into(),
                "negative_indices_mode Some(\"wrap\"): expected ignore_negative or normalize"
                    .into()
            ])
        );
    }

    fn ty(et: ElementType, shape: &str) -> TensorType {
        TensorType::new(et, PartialShape::parse(shape).unwrap())
    }

    fn infer(o: &OneHot, inputs: [&TensorType; 4]) -> Result<String, String> {
        match infer_for_test(o, &inputs) {
            (Some(out), _) => Ok(format!("{} {}", out[0].element_type, out[0].shape)),
            (None, findings) => Err(findings
                .iter()
                .map(|(k, port)| format!("{port:?} {k}"))
                .collect::<Vec<_>>()
                .join("; ")),
        }
    }

    #[test]
    fn infer_table() {
        let o = |axis| op(16, axis, NegativeIndices::Normalize);
        let i64s = |s| ty(ElementType::I64, s);
        let depth5 = TensorType::of_value(scalar(5i32));
        let depth_unknown = ty(ElementType::I32, "");
        let depth_bounds = Bounds {
            lo: vec![2],
            hi: vec![9],
        }
        .into_type(ElementType::I64, PartialShape::new(vec![]));
        let depth_open = Bounds {
            lo: vec![2],
            hi: vec![UNBOUNDED],
        }
        .into_type(ElementType::I64, PartialShape::new(vec![]));
        let (on, off) = (ty(ElementType::F16, ""), ty(ElementType::F16, ""));
        let dyn_on = ty(ElementType::Dynamic, "");
        for (axis, indices, depth, want) in [
            (-1, i64s("2,3"), &depth5, "f16 [2,3,5]"),
            (0, i64s("2,3"), &depth5, "f16 [5,2,3]"),
            (1, i64s("2,3"), &depth5, "f16 [2,5,3]"),
            (-3, i64s("2,3"), &depth5, "f16 [5,2,3]"),
            (0, i64s(""), &depth5, "f16 [5]"),
            (-1, i64s("?,2..4"), &depth5, "f16 [?,2..4,5]"),
            (-1, i64s("2"), &depth_unknown, "f16 [2,?]"),
            (-1, i64s("2"), &depth_bounds, "f16 [2,2..9]"),
            (-1, i64s("2"), &depth_open, "f16 [2,2..]"),
            (7, i64s("..."), &depth5, "f16 [...]"),
        ] {
            assert_eq!(
                infer(&o(axis), [&indices, depth, &on, &off]).as_deref(),
                Ok(want),
                "{axis} {}",
                indices.shape
            );
        }
        // The output type from whichever value type is known.
        assert_eq!(
            infer(&o(0), [&i64s("2"), &depth5, &dyn_on, &off]).as_deref(),
            Ok("f16 [5,2]")
        );
    }

    #[test]
    fn infer_refuses() {
        let o = op(1, -1, NegativeIndices::Ignore);
        let i32s = |s| ty(ElementType::I32, s);
        let f = |s| ty(ElementType::F32, s);
        let depth = TensorType::of_value(scalar(3i64));
        let cases: Vec<([TensorType; 4], &str)> = vec![
            (
                [i32s("2"), TensorType::of_value(scalar(-2i32)), f(""), f("")],
                "depth is -2; it must be 0 or more",
            ),
            (
                [i32s("2"), i32s("1"), f(""), f("")],
                "depth must be a scalar (rank 0), not rank 1",
            ),
            (
                [i32s("2"), depth.clone(), f("1"), f("")],
                "on_value must be a scalar (rank 0), not rank 1",
            ),
            (
                [i32s("2"), depth.clone(), f(""), f("?")],
                "off_value must be a scalar",
            ),
            (
                [i32s("2"), depth.clone(), f(""), ty(ElementType::F16, "")],
                "the inputs' element types differ: f32 and f16",
            ),
            (
                [ty(ElementType::U8, "2"), depth.clone(), f(""), f("")],
                "OneHot does not accept u8",
            ),
            (
                [i32s("2"), ty(ElementType::I16, ""), f(""), f("")],
                "OneHot does not accept i16",
            ),
            (
                [
                    i32s("2"),
                    depth.clone(),
                    ty(ElementType::U4, ""),
                    ty(ElementType::U4, ""),
                ],
                "OneHot does not accept u4",
            ),
        ];
        for (inputs, want) in &cases {
            let [a, b, c, d] = inputs;
            match infer(&o, [a, b, c, d]) {
                Err(m) => assert!(m.contains(want), "{m}"),
                Ok(s) => panic!("expected {want:?}, got {s}"),
            }
        }
        let o3 = op(1, 3, NegativeIndices::Ignore);
        match infer(&o3, [&i32s("2,3"), &depth, &f(""), &f("")]) {
            Err(m) => assert!(
                m.contains("axis 3 is out of range for an output of rank 3 (-3..3)"),
                "{m}"
            ),
            Ok(s) => panic!("{s}"),
        }
    }
}
