//! Const (also spelled Constant): a tensor stored in the weights file.
//!
//! Spec: <https://docs.openvino.ai/2026/documentation/openvino-ir-format/operation-sets/operation-specs/infrastructure/constant-1.html>
//!
//! Attributes (`<data>`, all mandatory): `element_type` (a concrete element type), `shape`
//! (static dims, comma separated; empty for a scalar), `offset` and `size` (bytes in the
//! `.bin`, unsigned 64-bit). Ports: no inputs, one output.
//!
//! Decisions: data are raw little-endian bytes at any alignment, read in place from the
//! memory-mapped `.bin` (zero-copy). `offset + size` must lie inside the file and `size` must be
//! at least `ceil(elements × bits / 8)`; extra bytes are ignored, as in OpenVINO. A Const with
//! no bytes to read does not need the `.bin` at all. Sub-byte types are packed as OpenVINO
//! packs them; `string` Consts are read but have no size check here.

use super::{AttrError, Attrs, Op, OpDef};
use crate::dtype::ElementType;
use crate::shape::PartialShape;

#[derive(Clone, Debug, PartialEq)]
pub struct Const {
    pub element_type: ElementType,
    pub shape: Vec<u64>,
    pub offset: u64,
    pub size: u64,
}

impl Const {
    /// Number of elements, or `None` if it overflows 64 bits.
    pub fn elements(&self) -> Option<u64> {
        self.shape
            .iter()
            .try_fold(1u64, |acc, &d| acc.checked_mul(d))
    }
}

pub const DEF: OpDef = OpDef {
    name: "Const",
    aliases: &["Constant"],
    max_opset: 16,
    inputs: 0,
    outputs: 1,
    parse,
};

fn parse_static_shape(text: &str) -> Result<Vec<u64>, String> {
    let shape = PartialShape::parse(text).map_err(|e| e.reason)?;
    shape
        .to_static()
        .ok_or_else(|| format!("a Const shape must be static, but {shape} is not"))
}

fn parse_concrete_type(text: &str) -> Result<ElementType, String> {
    match super::parse_element_type(text)? {
        ElementType::Dynamic => Err("a Const needs a concrete element type".into()),
        t => Ok(t),
    }
}

fn parse(a: &Attrs) -> Result<Op, Vec<AttrError>> {
    let element_type = a.parse_required("element_type", parse_concrete_type);
    let shape = a.parse_required("shape", parse_static_shape);
    let offset = a.parse_required("offset", super::parse_u64);
    let size = a.parse_required("size", super::parse_u64);
    match (element_type, shape, offset, size) {
        (Ok(element_type), Ok(shape), Ok(offset), Ok(size)) => Ok(Op::Const(Const {
            element_type,
            shape,
            offset,
            size,
        })),
        (t, s, o, z) => Err([t.err(), s.err(), o.err(), z.err()]
            .into_iter()
            .flatten()
            .collect()),
    }
}
