//! ShapeOf-1 and ShapeOf-3: the shape of the input as a 1-D integer tensor.
//!
//! Spec: <https://docs.openvino.ai/2026/documentation/openvino-ir-format/operation-sets/operation-specs/shape/shape-of-3.html>
//! (ShapeOf-1: no attributes, output i64; ShapeOf-3: `output_type` i32 or i64, default i64).
//! Ports: one input of any element type (only its shape is read), one output.
//!
//! Inference: the output is `[rank]` (`[?]` for a dynamic rank); its value is known when the
//! input's shape is static, and otherwise each element carries the interval of its dim
//! (OpenVINO's `evaluate_lower`/`evaluate_upper`), so that shapes computed from it infer
//! exactly. Decisions: a dim that does not fit i32 under `output_type="i32"` is an error
//! (OpenVINO wraps it).

use super::{Arity, AttrError, Attrs, EvalCx, EvalError, InferCx, Op, OpDef};
use crate::dtype::ElementType;
use crate::shape::types::{Bounds, ints_tensor};
use crate::shape::{Dim, PartialShape, TensorType};
use crate::tensor::Tensor;

#[derive(Clone, Debug, PartialEq)]
pub struct ShapeOf {
    pub output_type: ElementType,
    pub version: u32,
}

pub const DEF_1: OpDef = OpDef {
    name: "ShapeOf",
    version: 1,
    inputs: Arity::exactly(1),
    outputs: Arity::exactly(1),
    parse: parse_1,
};

pub const DEF_3: OpDef = OpDef {
    version: 3,
    parse: parse_3,
    ..DEF_1
};

fn parse_1(_: &Attrs) -> Result<Box<dyn Op>, Vec<AttrError>> {
    Ok(Box::new(ShapeOf {
        output_type: ElementType::I64,
        version: 1,
    }))
}

fn parse_3(a: &Attrs) -> Result<Box<dyn Op>, Vec<AttrError>> {
    let output_type = a
        .parse_or(
            "output_type",
            ElementType::I64,
            |t| match super::parse_element_type(t)? {
                t @ (ElementType::I32 | ElementType::I64) => Ok(t),
                _ => Err("ShapeOf's output_type is i32 or i64".into()),
            },
        )
        .map_err(|e| vec![e])?;
    Ok(Box::new(ShapeOf {
        output_type,
        version: 3,
    }))
}

impl Op for ShapeOf {
    fn def(&self) -> Option<&'static OpDef> {
        Some(if self.version == 1 { &DEF_1 } else { &DEF_3 })
    }

    fn infer(&self, cx: &mut InferCx<'_>) -> Option<Vec<TensorType>> {
        let input = cx.input(0);
        let Some(dims) = input.shape.dims() else {
            return Some(vec![TensorType::new(
                self.output_type,
                PartialShape::new(vec![Dim::DYNAMIC]),
            )]);
        };
        let shape = PartialShape::fixed(&[dims.len() as u64]);
        if self.output_type == ElementType::I32
            && let Some(d) = dims.iter().find(|d| d.min() > i32::MAX as u64)
        {
            return cx.invalid(0, format!("the dim {d} does not fit output_type i32"));
        }
        // Exact bounds (a static shape) are the value itself.
        Some(vec![
            Bounds::of_dims(dims).into_type(self.output_type, shape),
        ])
    }

    fn eval(&self, cx: &EvalCx<'_>) -> Result<Vec<Tensor>, EvalError> {
        let shape = cx.value(0).shape();
        let values: Vec<i64> = shape
            .iter()
            .map(|&d| i64::try_from(d).unwrap_or(i64::MAX))
            .collect();
        let out = PartialShape::fixed(&[shape.len() as u64]);
        ints_tensor(self.output_type, &out, &values)
            .map(|t| vec![t])
            .ok_or_else(|| {
                EvalError::Invalid(format!(
                    "the shape {shape:?} does not fit output_type {}",
                    self.output_type
                ))
            })
    }
}
