//! Identity-16: its output is its input.
//!
//! Spec: <https://docs.openvino.ai/2026/documentation/openvino-ir-format/operation-sets/operation-specs/movement/identity-16.html>
//!
//! Ports: one input of any type and shape; one output of the same type, shape and elements.
//! No attributes. Execution hands the input's buffer on (shared, no copy: [`Op::view`]);
//! values and bounds of shape values pass through inference.

use super::{Arity, AttrError, Attrs, EvalCx, EvalError, InferCx, Op, OpDef};
use crate::shape::TensorType;
use crate::tensor::Tensor;

#[derive(Clone, Debug, PartialEq)]
pub struct Identity;

pub const DEF: OpDef = OpDef {
    name: "Identity",
    version: 16,
    inputs: Arity::exactly(1),
    outputs: Arity::exactly(1),
    parse,
};

fn parse(_: &Attrs) -> Result<Box<dyn Op>, Vec<AttrError>> {
    Ok(Box::new(Identity))
}

impl Op for Identity {
    fn def(&self) -> Option<&'static OpDef> {
        Some(&DEF)
    }

    fn infer(&self, cx: &mut InferCx<'_>) -> Option<Vec<TensorType>> {
        Some(vec![cx.input(0).clone()])
    }

    fn eval(&self, cx: &EvalCx<'_>) -> Result<Vec<Tensor>, EvalError> {
        let data = cx.tensor(0)?;
        cx.reserve(data.element_type(), data.len())?;
        Ok(vec![(*data).clone()])
    }

    fn moves(&self, input: usize) -> bool {
        input == 0
    }

    fn view_like(&self) -> bool {
        true
    }

    fn view(&self, cx: &EvalCx<'_>) -> Option<Result<Vec<usize>, EvalError>> {
        Some(Ok(cx.value(0).shape().to_vec()))
    }
}
