//! Parameter: a model input.
//!
//! Spec: <https://docs.openvino.ai/2026/documentation/openvino-ir-format/operation-sets/operation-specs/infrastructure/parameter-1.html>
//!
//! Attributes (`<data>`, mandatory): `shape` (partial shape: `1,3,?,2..8`, `...` for a dynamic
//! rank, empty for a scalar) and `element_type` (any element type name, any case).
//! Ports: no inputs, one output.
//!
//! Decisions: the shape grammar is strict (see [`crate::shape::dim`]): OpenVINO's lenient
//! readings of `-2`, `3..1` or overflowing numbers are errors.

use super::{AttrError, Attrs, Op, OpDef};
use crate::dtype::ElementType;
use crate::shape::PartialShape;

#[derive(Clone, Debug, PartialEq)]
pub struct Parameter {
    pub shape: PartialShape,
    pub element_type: ElementType,
}

pub const DEF: OpDef = OpDef {
    name: "Parameter",
    aliases: &[],
    max_opset: 17,
    inputs: 0,
    outputs: 1,
    parse,
};

fn parse(a: &Attrs) -> Result<Op, Vec<AttrError>> {
    let shape = a.parse_required("shape", |t| PartialShape::parse(t).map_err(|e| e.reason));
    let element_type = a.parse_required("element_type", super::parse_element_type);
    match (shape, element_type) {
        (Ok(shape), Ok(element_type)) => Ok(Op::Parameter(Parameter {
            shape,
            element_type,
        })),
        (s, t) => Err(s.err().into_iter().chain(t.err()).collect()),
    }
}
