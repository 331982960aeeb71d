//! Result-1: a model output.
//!
//! Spec: <https://docs.openvino.ai/2026/documentation/openvino-ir-format/operation-sets/operation-specs/infrastructure/result-1.html>
//!
//! No `<data>` attributes. Ports: one input, no outputs. In IR v11 the layer may carry
//! `output_names` (comma separated, `\,` escapes a comma): the output's tensor names.
//!
//! Decisions: an output is named by the first of its `output_names` (v11), else the first
//! tensor name of the producing port, else the Result layer's name.

use super::{Arity, AttrError, Attrs, EvalCx, EvalError, InferCx, Op, OpDef, Role};
use crate::shape::TensorType;
use crate::tensor::Tensor;

#[derive(Clone, Debug, PartialEq)]
pub struct ResultOp;

pub const DEF: OpDef = OpDef {
    name: "Result",
    version: 1,
    inputs: Arity::exactly(1),
    outputs: Arity::exactly(0),
    parse,
};

fn parse(_: &Attrs) -> Result<Box<dyn Op>, Vec<AttrError>> {
    Ok(Box::new(ResultOp))
}

impl Op for ResultOp {
    fn def(&self) -> Option<&'static OpDef> {
        Some(&DEF)
    }

    fn role(&self) -> Role<'_> {
        Role::Output
    }

    fn infer(&self, _: &mut InferCx<'_>) -> Option<Vec<TensorType>> {
        Some(Vec::new())
    }

    fn eval(&self, _: &EvalCx<'_>) -> Result<Vec<Tensor>, EvalError> {
        Ok(Vec::new())
    }

    fn folds(&self) -> bool {
        false
    }
}
