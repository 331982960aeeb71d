//! Select-1: `cond ? then : else`, elementwise, with three-way broadcasting.
//!
//! Spec: <https://docs.openvino.ai/2026/documentation/openvino-ir-format/operation-sets/operation-specs/condition/select-1.html>
//!
//! Inputs: `cond` (`boolean`), `then` and `else` (one element type, any). Attribute
//! `auto_broadcast`: `none` (all three shapes equal), `numpy` (default: the three shapes
//! broadcast together), `pdpd` (`else` and then `cond` broadcast onto `then`'s shape, at the
//! axis given). The output has `then`'s element type. The chosen element is copied bit for bit
//! (NaN payloads, −0).
//!
//! Each input is broadcast into the output tile by tile and the tiles chosen between, in
//! parallel chunks. Select may end a fused group: `then` and `else` computed by float chains
//! of the group as they are needed (`Select(m, x·s + b, y)` in one pass).

use super::binary::Fusable;
use super::kernel::{self, Broadcasted, Selected};
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
    /// The output shape and each input's shape aligned for numpy broadcasting into it (`pdpd`
    /// shapes made numpy's), for static shapes; `None` if they do not broadcast.
    pub fn aligned(&self, shapes: [&[usize]; 3]) -> Option<(Vec<usize>, [Vec<usize>; 3])> {
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
        aligned
            .iter()
            .all(|a| broadcast::strides_into(a, &out).is_some())
            .then_some((out, aligned))
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
        let (out, aligned) = self
            .aligned([c.shape(), t.shape(), e.shape()])
            .ok_or_else(|| {
                EvalError::Invalid(format!(
                    "the shapes {:?}, {:?} and {:?} do not broadcast",
                    c.shape(),
                    t.shape(),
                    e.shape()
                ))
            })?;
        crate::dispatch!(any: ty, T => select::<T>(c, t, e, &out, &aligned),
            _ => Err(EvalError::UnsupportedType { op: "Select".into(), ty }))
    }
}

/// Select over tensors: each broadcast into the output tile by tile and the tiles chosen
/// between ([`kernel::Selected`]), in parallel chunks, a large output streamed.
fn select<T: Element>(
    c: &Tensor,
    t: &Tensor,
    e: &Tensor,
    out: &[usize],
    aligned: &[Vec<usize>; 3],
) -> Result<Tensor, EvalError> {
    let k = kernel::contiguous::<bool>(c);
    let x = kernel::contiguous::<T>(t);
    let y = kernel::contiguous::<T>(e);
    let (Some(k), Some(x), Some(y)) = (k, x, y) else {
        return Err(EvalError::Internal("Select's inputs changed type"));
    };
    let bad = || EvalError::Internal("Select's shapes do not broadcast");
    let cond = Broadcasted::new(&k, &aligned[0], out).ok_or_else(bad)?;
    let then = Broadcasted::new(&x, &aligned[1], out).ok_or_else(bad)?;
    let other = Broadcasted::new(&y, &aligned[2], out).ok_or_else(bad)?;
    let source = Selected {
        cond: &cond,
        then: &then,
        other: &other,
    };
    kernel::tensor_from::<T>(out, kernel::sourced(out.iter().product(), &source))
}

/// Select ends a fused group: its `then` and `else` may be parts of the group (a float chain
/// computed tile by tile), its `cond` a tensor or a Convert; it has no step kernel.
impl Fusable for Select {
    fn auto_broadcast(&self) -> AutoBroadcast {
        self.auto_broadcast
    }

    fn data_inputs(&self) -> usize {
        3
    }

    fn operands(
        &self,
        [cond, then, other]: [kernel::Operand; 3],
    ) -> ([kernel::Operand; 2], Option<kernel::Operand>) {
        ([then, other], Some(cond))
    }

    fn selects(&self) -> Option<&Select> {
        Some(self)
    }
}

impl Op for Select {
    fn def(&self) -> Option<&'static OpDef> {
        Some(&DEF)
    }

    fn fusable(&self) -> Option<&dyn Fusable> {
        Some(self)
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
        if let Some((out, _)) = self.aligned([c.shape(), t.shape(), e.shape()]) {
            cx.reserve(t.element_type(), out.iter().product())?;
        }
        Ok(vec![self.eval_tensors(&c, &t, &e)?])
    }
}
