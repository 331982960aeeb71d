//! Result: a model output.
//!
//! Spec: <https://docs.openvino.ai/2026/documentation/openvino-ir-format/operation-sets/operation-specs/infrastructure/result-1.html>
//!
//! No `<data>` attributes. Ports: one input, no outputs. In IR v11 the layer may carry
//! `output_names` (comma separated, `\,` escapes a comma): the output's tensor names.
//!
//! Decisions: an output is named by the first of its `output_names` (v11), else the first
//! tensor name of the producing port, else the Result layer's name.

use super::{AttrError, Attrs, Op, OpDef};

#[derive(Clone, Debug, PartialEq)]
pub struct ResultOp;

pub const DEF: OpDef = OpDef {
    name: "Result",
    aliases: &[],
    max_opset: 16,
    inputs: 1,
    outputs: 0,
    parse,
};

fn parse(_: &Attrs) -> Result<Op, Vec<AttrError>> {
    Ok(Op::Result(ResultOp))
}
