//! Concat-1: joins its inputs along an axis.
//!
//! Spec: <https://docs.openvino.ai/2026/documentation/openvino-ir-format/operation-sets/operation-specs/movement/concat-1.html>
//!
//! Attributes: `axis` (mandatory; negative counts from the end). Ports: one or more inputs of
//! one element type and rank, equal in every dim but `axis`; one output whose `axis` dim is the
//! sum of theirs.
//!
//! Types: any (the elements are copied exactly). Inference merges the other dims (intervals
//! intersect) and sums the axis dims (intervals add); the bounds of shape values pass through.

use super::{Arity, AttrError, Attrs, EvalCx, EvalError, InferCx, Op, OpDef};
use crate::dtype::ElementType;
use crate::error::ErrorKind;
use crate::shape::{Dim, PartialShape, TensorType};
use crate::tensor::{Element, Tensor};

#[derive(Clone, Debug, PartialEq)]
pub struct Concat {
    pub axis: i64,
}

pub const DEF: OpDef = OpDef {
    name: "Concat",
    version: 1,
    inputs: Arity::at_least(1),
    outputs: Arity::exactly(1),
    parse,
};

fn parse(a: &Attrs) -> Result<Box<dyn Op>, Vec<AttrError>> {
    let axis = a
        .parse_required("axis", super::parse_i64)
        .map_err(|e| vec![e])?;
    Ok(Box::new(Concat { axis }))
}

impl Op for Concat {
    fn def(&self) -> Option<&'static OpDef> {
        Some(&DEF)
    }

    fn infer(&self, cx: &mut InferCx<'_>) -> Option<Vec<TensorType>> {
        let inputs = cx.inputs();
        let mut ty = ElementType::Dynamic;
        for t in inputs {
            ty = match (ty, t.element_type) {
                (ElementType::Dynamic, x) => x,
                (x, ElementType::Dynamic) => x,
                (x, y) if x == y => x,
                (x, y) => {
                    cx.report(ErrorKind::ElementTypeMismatch { a: x, b: y });
                    return None;
                }
            };
        }
        let Some(rank) = inputs.iter().find_map(|t| t.shape.rank()) else {
            return Some(vec![TensorType::new(ty, PartialShape::dynamic_rank())]);
        };
        let Some(axis) = super::normalize_axis(self.axis, rank) else {
            return cx.invalid(
                0,
                format!("axis {} is out of range for rank {rank}", self.axis),
            );
        };
        let mut out: Vec<Dim> = vec![Dim::DYNAMIC; rank];
        let mut sum = Dim::fixed(0);
        for (i, t) in inputs.iter().enumerate() {
            let Some(dims) = t.shape.dims() else {
                sum = Dim::interval(sum.min(), None).unwrap_or(Dim::DYNAMIC);
                continue;
            };
            if dims.len() != rank {
                return cx.invalid(
                    i,
                    format!(
                        "input {i} has rank {} but input 0 has rank {rank}: Concat needs one rank",
                        dims.len()
                    ),
                );
            }
            for (k, &d) in dims.iter().enumerate() {
                if k == axis {
                    sum = sum.plus(d);
                    continue;
                }
                match out[k].merge(d) {
                    Some(m) => out[k] = m,
                    None => {
                        return cx.invalid(
                            i,
                            format!(
                                "at axis {k}, input {i}'s dim {d} differs from the others' {}",
                                out[k]
                            ),
                        );
                    }
                }
            }
        }
        out[axis] = sum;
        Some(vec![TensorType::new(ty, PartialShape::new(out))])
    }

    fn eval(&self, cx: &EvalCx<'_>) -> Result<Vec<Tensor>, EvalError> {
        let tensors = (0..cx.len())
            .map(|i| cx.tensor(i))
            .collect::<Result<Vec<_>, _>>()?;
        let first = &tensors[0];
        let ty = first.element_type();
        let rank = first.shape().len();
        let axis = super::normalize_axis(self.axis, rank)
            .ok_or_else(|| EvalError::Invalid(format!("axis {} is out of range", self.axis)))?;
        let total: usize = tensors.iter().map(|t| t.len()).sum();
        cx.reserve(ty, total)?;
        fn go<T: Element>(ts: &[std::sync::Arc<Tensor>], axis: usize) -> Option<Tensor> {
            let views: Vec<_> = ts.iter().map(|t| T::view(t)).collect::<Option<_>>()?;
            ndarray::concatenate(ndarray::Axis(axis), &views)
                .ok()
                .map(T::wrap)
        }
        crate::dispatch!(any: ty, T => go::<T>(&tensors, axis), _ => None)
            .map(|t| vec![t])
            .ok_or_else(|| {
                EvalError::Invalid(format!(
                    "the inputs {:?} do not concatenate along axis {axis}",
                    tensors
                        .iter()
                        .map(|t| t.shape().to_vec())
                        .collect::<Vec<_>>()
                ))
            })
    }

    fn moves(&self, _: usize) -> bool {
        true
    }
}
