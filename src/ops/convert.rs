//! Convert-1: element type conversion.
//!
//! Spec: <https://docs.openvino.ai/2026/documentation/openvino-ir-format/operation-sets/operation-specs/type/convert-1.html>
//!
//! Attributes: `destination_type` (mandatory; a concrete element type name, any case).
//! Ports: one input, one output of the input's shape.
//!
//! `ov.save_model` writes every f32 Const as an f16 Const followed by a Convert to f32 (with a
//! `decompression` rt_info marker), so Convert is needed to run almost any saved model.

use super::{AttrError, Attrs, Op, OpDef};
use crate::dtype::ElementType;

#[derive(Clone, Debug, PartialEq)]
pub struct Convert {
    pub destination_type: ElementType,
}

pub const DEF: OpDef = OpDef {
    name: "Convert",
    aliases: &[],
    max_opset: 17,
    inputs: 1,
    outputs: 1,
    parse,
};

fn parse(a: &Attrs) -> Result<Op, Vec<AttrError>> {
    let destination_type = a
        .parse_required("destination_type", |t| {
            match super::parse_element_type(t)? {
                ElementType::Dynamic => {
                    Err("a conversion needs a concrete destination type".into())
                }
                t => Ok(t),
            }
        })
        .map_err(|e| vec![e])?;
    Ok(Op::Convert(Convert { destination_type }))
}
