//! Select-1: `cond ? then : else`, elementwise, with three-way broadcasting.
//!
//! Spec: <https://docs.openvino.ai/2026/documentation/openvino-ir-format/operation-sets/operation-specs/condition/select-1.html>
//!
//! Inputs: `cond` (`boolean`), `then` and `else` (one element type, any). Attribute
//! `auto_broadcast`: `none` (all three shapes equal), `numpy` (default: the three shapes
//! broadcast together), `pdpd` (`else` and then `cond` broadcast onto `then`'s shape, at the
//! axis given). The output has `then`'s element type. The chosen element is copied bit for bit
//! (NaN payloads, −0).

use super::logic::same_type;
use super::{Arity, AttrError, Attrs, EvalCx, EvalError, InferCx, Op, OpDef};
use crate::broadcast::{self, AutoBroadcast};
use crate::dtype::ElementType;
use crate::error::ErrorKind;
use crate::shape::TensorType;
use crate::tensor::{Element, Tensor, TypeSet};

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Select {
    pub auto_broadcast: AutoBroadcast,
}

pub const DEF: OpDef = OpDef {
    name: "Select",
    version: 1,
    inputs: Arity::exactly(3),
    outputs: Arity::exactly(1),
    parse,
};

fn parse(a: &Attrs) -> Result<Box<dyn Op>, Vec<AttrError>> {
    Ok(Box::new(Select {
        auto_broadcast: a.auto_broadcast().map_err(|e| vec![e])?,
    }))
}

impl Select {
    /// The output shape and each input's strides into it, for static shapes.
    fn layout(&self, shapes: [&[usize]; 3]) -> Option<(Vec<usize>, [Vec<usize>; 3])> {
        let [c, t, e] = shapes;
        let (out, aligned): (Vec<usize>, [Vec<usize>; 3]) = match self.auto_broadcast {
            AutoBroadcast::None => {
                if c != t || t != e {
                    return None;
                }
                (t.to_vec(), [c.to_vec(), t.to_vec(), e.to_vec()])
            }
            AutoBroadcast::Numpy => (
                broadcast::numpy_shapes(&[c, t, e])?,
                [c.to_vec(), t.to_vec(), e.to_vec()],
            ),
            AutoBroadcast::Pdpd { axis, .. } => {
                let rank = t.len();
                let e = broadcast::pdpd_b_as_numpy(rank, e, axis)?;
                let c = broadcast::pdpd_b_as_numpy(rank, c, axis)?;
                (t.to_vec(), [c, t.to_vec(), e])
            }
        };
        let strides = [
            broadcast::strides_into(&aligned[0], &out)?,
            broadcast::strides_into(&aligned[1], &out)?,
            broadcast::strides_into(&aligned[2], &out)?,
        ];
        Some((out, strides))
    }

    /// The op on tensors.
    pub fn eval_tensors(&self, c: &Tensor, t: &Tensor, e: &Tensor) -> Result<Tensor, EvalError> {
        let ty = t.element_type();
        if ty != e.element_type() {
            return Err(EvalError::Types(ty, e.element_type()));
        }
        if c.element_type() != ElementType::Boolean {
            return Err(EvalError::Types(c.element_type(), ElementType::Boolean));
        }
        let (out, strides) = self
            .layout([c.shape(), t.shape(), e.shape()])
            .ok_or_else(|| {
                EvalError::Invalid(format!(
                    "the shapes {:?}, {:?} and {:?} do not broadcast",
                    c.shape(),
                    t.shape(),
                    e.shape()
                ))
            })?;
        crate::dispatch!(any: ty, T => select::<T>(c, t, e, &out, &strides),
            _ => Err(EvalError::UnsupportedType { op: "Select".into(), ty }))
    }
}

fn select<T: Element>(
    c: &Tensor,
    t: &Tensor,
    e: &Tensor,
    out: &[usize],
    strides: &[Vec<usize>; 3],
) -> Result<Tensor, EvalError> {
    let k = crate::ops::kernel::contiguous::<bool>(c);
    let x = crate::ops::kernel::contiguous::<T>(t);
    let y = crate::ops::kernel::contiguous::<T>(e);
    let (Some(k), Some(x), Some(y)) = (k, x, y) else {
        return Err(EvalError::Internal("Select's inputs changed type"));
    };
    let mut data: Vec<T> = Vec::with_capacity(out.iter().product());
    broadcast::walk(
        out,
        [&strides[0], &strides[1], &strides[2]],
        |_, len, [oc, ot, oe], [sc, st, se]| {
            for i in 0..len {
                data.push(if k[oc + i * sc] {
                    x[ot + i * st]
                } else {
                    y[oe + i * se]
                });
            }
        },
    );
    crate::ops::kernel::tensor_from::<T>(out, data)
}

impl Op for Select {
    fn def(&self) -> Option<&'static OpDef> {
        Some(&DEF)
    }

    fn infer(&self, cx: &mut InferCx<'_>) -> Option<Vec<TensorType>> {
        cx.require(0..1, TypeSet::BOOLEAN)?;
        cx.require(1..3, TypeSet::ANY)?;
        let (c, t, e) = (cx.input(0), cx.input(1), cx.input(2));
        let ty = same_type(cx, t.element_type, e.element_type)?;
        let spec = self.auto_broadcast;
        let te = spec.infer(&t.shape, &e.shape);
        let shape = te.and_then(|te| match spec {
            AutoBroadcast::Numpy | AutoBroadcast::None => spec.infer(&c.shape, &te),
            AutoBroadcast::Pdpd { .. } => spec.infer(&te, &c.shape),
        });
        match shape {
            Ok(shape) => Some(vec![TensorType::new(ty, shape)]),
            Err(err) => {
                cx.report(ErrorKind::InvalidInput {
                    reason: format!(
                        "cond {}, then {} and else {} do not broadcast: {}",
                        c.shape, t.shape, e.shape, err.reason
                    ),
                });
                None
            }
        }
    }

    fn eval(&self, cx: &EvalCx<'_>) -> Result<Vec<Tensor>, EvalError> {
        let (c, t, e) = (cx.tensor(0)?, cx.tensor(1)?, cx.tensor(2)?);
        if let Some((out, _)) = self.layout([c.shape(), t.shape(), e.shape()]) {
            cx.reserve(t.element_type(), out.iter().product())?;
        }
        Ok(vec![self.eval_tensors(&c, &t, &e)?])
    }
}
