//! Constant-1 (written `Const` in IR files, also `Constant`): a tensor stored in the weights
//! file.
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
//! no bytes to read does not need the `.bin` at all. Sub-byte and 8-bit float types (u1, u4,
//! i4, nf4, f8e4m3, f8e5m2, …) stay packed as OpenVINO packs them until a Convert decodes
//! them; `boolean` is one byte per element, any non-zero byte true; `string` Consts are read
//! but have no size check here. Inference carries the value of a Const of up to
//! [`VALUE_LIMIT`](crate::shape::types::VALUE_LIMIT) elements.

use super::{Arity, AttrError, Attrs, EvalCx, EvalError, InferCx, Op, OpDef, Role};
use crate::dtype::ElementType;
use crate::shape::types::VALUE_LIMIT;
use crate::shape::{PartialShape, TensorType};
use crate::tensor::Tensor;

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

    /// The bytes its elements take (packed), or `None` on overflow or for `string`.
    pub fn needed_bytes(&self) -> Option<u64> {
        self.element_type.storage_bytes(self.elements()?)
    }
}

pub const DEF: OpDef = OpDef {
    name: "Constant",
    version: 1,
    inputs: Arity::exactly(0),
    outputs: Arity::exactly(1),
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

fn parse(a: &Attrs) -> Result<Box<dyn Op>, Vec<AttrError>> {
    let element_type = a.parse_required("element_type", parse_concrete_type);
    let shape = a.parse_required("shape", parse_static_shape);
    let offset = a.parse_required("offset", super::parse_u64);
    let size = a.parse_required("size", super::parse_u64);
    let (element_type, shape, offset, size) = crate::attrs_all!(element_type, shape, offset, size)?;
    Ok(Box::new(Const {
        element_type: element_type.unwrap_or(ElementType::Dynamic),
        shape: shape.unwrap_or_default(),
        offset: offset.unwrap_or_default(),
        size: size.unwrap_or_default(),
    }))
}

impl Op for Const {
    fn def(&self) -> Option<&'static OpDef> {
        Some(&DEF)
    }

    /// IR files spell the type `Const`.
    fn name(&self) -> &str {
        "Const"
    }

    fn role(&self) -> Role<'_> {
        Role::Constant(self)
    }

    fn infer(&self, cx: &mut InferCx<'_>) -> Option<Vec<TensorType>> {
        let shape = PartialShape::fixed(&self.shape);
        let small = self.elements().is_some_and(|n| n <= VALUE_LIMIT as u64);
        let readable = match (self.needed_bytes(), cx.weights()) {
            (Some(0), _) => true,
            (Some(needed), Some(w)) => w.bytes(self.offset, needed).is_some(),
            _ => false,
        };
        let t = if small && readable && crate::tensor::TypeSet::ANY.contains(self.element_type) {
            // Decoded from the mapped bytes if something reads the value.
            TensorType::of_const(self.element_type, shape, cx.weights().cloned(), self.offset)
        } else {
            TensorType::new(self.element_type, shape)
        };
        Some(vec![t])
    }

    fn eval(&self, _: &EvalCx<'_>) -> Result<Vec<Tensor>, EvalError> {
        // Execution reads Consts in place (`Role::Constant`).
        Err(EvalError::Internal("a Const is not evaluated"))
    }
}
