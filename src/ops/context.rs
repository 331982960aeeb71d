//! What an op sees when it infers ([`InferCx`]) and when it evaluates ([`EvalCx`]).

use std::sync::Arc;

use super::EvalError;
use crate::dtype::ElementType;
use crate::error::{ErrorKind, PortDir};
use crate::graph::PortDecl;
use crate::memory::Budget;
use crate::shape::{PartialShape, TensorType};
use crate::tensor::{Tensor, Value};
use crate::weights::Weights;

/// A finding of inference, at the layer or one of its ports.
pub type Finding = (ErrorKind, Option<(PortDir, usize)>);

/// The inputs of a layer at inference, and where its findings go.
pub struct InferCx<'a> {
    pub(crate) inputs: &'a [&'a TensorType],
    pub(crate) declared_outputs: &'a [PortDecl],
    /// How many outputs the layer has (its `<output>` ports).
    pub(crate) outputs: usize,
    pub(crate) shape_override: Option<(&'a str, &'a PartialShape)>,
    pub(crate) weights: Option<&'a Arc<Weights>>,
    pub(crate) findings: &'a mut Vec<Finding>,
}

impl<'a> InferCx<'a> {
    /// The type of input `i` (the op's arity was checked when the graph was built).
    pub fn input(&self, i: usize) -> &'a TensorType {
        self.inputs[i]
    }

    pub fn inputs(&self) -> &'a [&'a TensorType] {
        self.inputs
    }

    /// The known value of integer input `i`, as i64s.
    pub fn ints(&self, i: usize) -> Option<Vec<i64>> {
        self.inputs.get(i)?.int_values()
    }

    /// Whether input `i` is connected (optional inputs may be absent).
    pub fn has_input(&self, i: usize) -> bool {
        i < self.inputs.len()
    }

    /// How many outputs the layer has (its `<output>` ports; the op's arity was checked).
    pub fn outputs(&self) -> usize {
        self.outputs
    }

    /// The `<port>`s the layer declares for its outputs (an opaque layer's outputs are these).
    pub fn declared_outputs(&self) -> &'a [PortDecl] {
        self.declared_outputs
    }

    /// A shape the user gave this layer (`--shape NAME=SHAPE` on a Parameter), with the name
    /// it was given by.
    pub fn shape_override(&self) -> Option<(&'a str, &'a PartialShape)> {
        self.shape_override
    }

    /// The weights file, if there is one (Consts read small values from it).
    pub fn weights(&self) -> Option<&'a Arc<Weights>> {
        self.weights
    }

    /// Reports a finding about the layer (an error or a warning, as its code says).
    pub fn report(&mut self, kind: ErrorKind) {
        self.findings.push((kind, None));
    }

    /// Reports a finding about input port `i`.
    pub fn report_input(&mut self, i: usize, kind: ErrorKind) {
        self.findings.push((kind, Some((PortDir::Input, i))));
    }

    /// Reports that input `i`'s element type is not one the op accepts; `None` to return.
    pub fn unsupported_type<T>(&mut self, op: &str, i: usize, ty: ElementType) -> Option<T> {
        self.report_input(
            i,
            ErrorKind::UnsupportedElementType {
                op: op.to_owned(),
                ty,
            },
        );
        None
    }

    /// Reports an invalid input (a value or shape the op cannot take); `None` to return.
    pub fn invalid<T>(&mut self, i: usize, reason: impl Into<String>) -> Option<T> {
        self.report_input(
            i,
            ErrorKind::InvalidInput {
                reason: reason.into(),
            },
        );
        None
    }
}

/// The inputs of a layer at execution, and the memory budget its outputs must fit.
pub struct EvalCx<'a> {
    pub(crate) inputs: &'a [Value<'a>],
    pub(crate) budget: Budget,
}

impl<'a> EvalCx<'a> {
    pub fn new(inputs: &'a [Value<'a>], budget: Budget) -> EvalCx<'a> {
        EvalCx { inputs, budget }
    }

    /// Input `i` as it is held (a tensor, or a Const's bytes in the weights file).
    pub fn value(&self, i: usize) -> &'a Value<'a> {
        &self.inputs[i]
    }

    pub fn len(&self) -> usize {
        self.inputs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.inputs.is_empty()
    }

    /// Input `i` as a tensor (a Const's bytes are copied, within the budget).
    pub fn tensor(&self, i: usize) -> Result<Arc<Tensor>, EvalError> {
        let v = &self.inputs[i];
        if let Value::Mapped(_) = v {
            self.reserve_bytes("copy of the Const", v.bytes())?;
        }
        v.to_tensor().ok_or_else(|| EvalError::UnsupportedType {
            op: "a tensor".into(),
            ty: v.element_type(),
        })
    }

    /// Checks that an output of `elements` elements of `ty` fits the budget, before it is
    /// allocated.
    pub fn reserve(&self, ty: ElementType, elements: usize) -> Result<(), EvalError> {
        let needed = ty.storage_bytes(elements as u64).unwrap_or(u64::MAX);
        self.reserve_bytes("output", needed)
    }

    /// Checks that `needed` more bytes fit the budget.
    pub fn reserve_bytes(&self, what: &'static str, needed: u64) -> Result<(), EvalError> {
        self.budget
            .check(what, needed)
            .map_err(|_| EvalError::Memory {
                what,
                needed,
                in_use: self.budget.in_use,
                limit: self.budget.limit,
            })
    }
}
