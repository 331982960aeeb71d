//! Layers ovir does not implement: an OpenVINO op version it has no code for yet, or an op of a
//! custom opset (`version="extension"`, an internal or plugin opset). Such a layer loads as an
//! opaque node: structural checks apply to it as to any layer (ids, edges, ports, cycles), and
//! its outputs are what its `<port>`s declare — the `precision` and `<dim>`s OpenVINO wrote —
//! so that inference goes on downstream of it. `check` lists opaque layers in a summary (errors
//! with `--deny-unknown`); `run` refuses a model with a live one before reading any input.
//!
//! How ports are read: `precision` gives the element type (`dynamic` when it is missing or
//! `UNSPECIFIED`); each `<dim>` a dimension, `-1` a dynamic one. OpenVINO writes no `<dim>` for
//! a scalar and none for a dynamic rank, so a port without `<dim>`s is read as a dynamic rank
//! (it may be a scalar): downstream inference then knows less, never something wrong.

use super::{Arity, EvalCx, EvalError, InferCx, Op, OpDef, Role};
use crate::dtype::ElementType;
use crate::shape::{Dim, PartialShape, TensorType};
use crate::tensor::Tensor;

/// A layer ovir cannot compute.
#[derive(Clone, Debug, PartialEq)]
pub struct Opaque {
    /// The layer's `type`, as written.
    pub ty: String,
    /// The layer's `version`, as written.
    pub version: String,
    /// The OpenVINO op version the layer names (type as the opset table spells it, version),
    /// when it is one (not for a custom opset).
    pub op: Option<(&'static str, u32)>,
}

impl Opaque {
    /// `Gather-8`, or `MyOp (extension)` for a custom opset.
    pub fn title(&self) -> String {
        match self.op {
            Some((name, v)) => format!("{name}-{v}"),
            None => format!("{} ({})", self.ty, self.version),
        }
    }
}

impl Op for Opaque {
    fn def(&self) -> Option<&'static OpDef> {
        None
    }

    fn name(&self) -> &str {
        &self.ty
    }

    fn role(&self) -> Role<'_> {
        Role::Opaque(self)
    }

    fn arity(&self) -> (Arity, Arity) {
        (Arity::ANY, Arity::ANY)
    }

    fn infer(&self, cx: &mut InferCx<'_>) -> Option<Vec<TensorType>> {
        Some(cx.declared_outputs().iter().map(declared_type).collect())
    }

    fn eval(&self, _: &EvalCx<'_>) -> Result<Vec<Tensor>, EvalError> {
        Err(EvalError::Invalid(format!(
            "ovir does not implement {}",
            self.title()
        )))
    }

    fn folds(&self) -> bool {
        false
    }
}

/// The type a `<port>` declares (see the module docs).
pub fn declared_type(p: &crate::graph::PortDecl) -> TensorType {
    let ty = p.precision.unwrap_or(ElementType::Dynamic);
    let shape = if p.dims.is_empty() {
        PartialShape::dynamic_rank()
    } else {
        PartialShape::new(
            p.dims
                .iter()
                .map(|d| d.map_or(Dim::DYNAMIC, Dim::fixed))
                .collect(),
        )
    };
    TensorType::new(ty, shape)
}
