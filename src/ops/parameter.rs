//! Parameter-1: a model input.
//!
//! Spec: <https://docs.openvino.ai/2026/documentation/openvino-ir-format/operation-sets/operation-specs/infrastructure/parameter-1.html>
//!
//! Attributes (`<data>`, mandatory): `shape` (partial shape: `1,3,?,2..8`, `...` for a dynamic
//! rank, empty for a scalar) and `element_type` (any element type name, any case).
//! Ports: no inputs, one output.
//!
//! Decisions: the shape grammar is strict (see [`crate::shape::dim`]): OpenVINO's lenient
//! readings of `-2`, `3..1` or overflowing numbers are errors. A `--shape` given to `check` or
//! `run` must fit the declared shape and refines it.

use super::{Arity, AttrError, Attrs, EvalCx, EvalError, InferCx, Op, OpDef, Role};
use crate::dtype::ElementType;
use crate::error::ErrorKind;
use crate::shape::{PartialShape, TensorType};
use crate::tensor::Tensor;

#[derive(Clone, Debug, PartialEq)]
pub struct Parameter {
    pub shape: PartialShape,
    pub element_type: ElementType,
}

pub const DEF: OpDef = OpDef {
    name: "Parameter",
    version: 1,
    inputs: Arity::exactly(0),
    outputs: Arity::exactly(1),
    parse,
};

fn parse(a: &Attrs) -> Result<Box<dyn Op>, Vec<AttrError>> {
    let shape = a.parse_required("shape", |t| PartialShape::parse(t).map_err(|e| e.reason));
    let element_type = a.parse_required("element_type", super::parse_element_type);
    let (shape, element_type) = crate::attrs_all!(shape, element_type)?;
    Ok(Box::new(Parameter {
        shape: shape.unwrap_or_else(PartialShape::dynamic_rank),
        element_type: element_type.unwrap_or(ElementType::Dynamic),
    }))
}

impl Op for Parameter {
    fn def(&self) -> Option<&'static OpDef> {
        Some(&DEF)
    }

    fn role(&self) -> Role<'_> {
        Role::Input(self)
    }

    fn infer(&self, cx: &mut InferCx<'_>) -> Option<Vec<TensorType>> {
        let mut shape = self.shape.clone();
        if let Some((name, given)) = cx.shape_override() {
            match crate::broadcast::merge(&self.shape, given) {
                Ok(s) if s.rank() == given.rank() || self.shape.rank().is_none() => shape = s,
                _ => cx.report(ErrorKind::ShapeOverride {
                    name: name.to_owned(),
                    given: given.to_string(),
                    declared: self.shape.to_string(),
                }),
            }
        }
        Some(vec![TensorType::new(self.element_type, shape)])
    }

    fn eval(&self, _: &EvalCx<'_>) -> Result<Vec<Tensor>, EvalError> {
        // Execution binds inputs itself (`Role::Input`).
        Err(EvalError::Internal("a Parameter is not evaluated"))
    }

    fn folds(&self) -> bool {
        false
    }
}
