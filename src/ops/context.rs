//! What an op sees when it infers ([`InferCx`]) and when it evaluates ([`EvalCx`]).

use std::sync::Arc;

use super::EvalError;
use crate::dtype::ElementType;
use crate::error::{ErrorKind, PortDir};
use crate::graph::PortDecl;
use crate::memory::Budget;
use crate::shape::{PartialShape, TensorType};
use crate::tensor::{Tensor, TypeSet, Value};
use crate::weights::Weights;

/// A finding of inference, at the layer or one of its ports.
pub type Finding = (ErrorKind, Option<(PortDir, usize)>);

/// The inputs of a layer at inference, and where its findings go.
pub struct InferCx<'a> {
    /// The layer's op name, for findings.
    pub(crate) op: &'a str,
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

    /// Checks that inputs `inputs` (those connected) have element types in `set` (or
    /// `dynamic`); reports the first that does not (E502) and gives `None` to return.
    pub fn require(&mut self, inputs: std::ops::Range<usize>, set: TypeSet) -> Option<()> {
        for i in inputs.take_while(|&i| i < self.inputs.len()) {
            let ty = self.inputs[i].element_type;
            if ty != ElementType::Dynamic && !set.contains(ty) {
                self.report_input(
                    i,
                    ErrorKind::UnsupportedElementType {
                        op: self.op.to_owned(),
                        ty,
                    },
                );
                return None;
            }
        }
        Some(())
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

/// Runs `op`'s inference on `inputs` as a layer of one output (for the ops' tests): the
/// outputs, and the findings.
#[cfg(test)]
pub(crate) fn infer_for_test(
    op: &dyn super::Op,
    inputs: &[&TensorType],
) -> (Option<Vec<TensorType>>, Vec<Finding>) {
    let mut findings = Vec::new();
    let name = op.name().to_owned();
    let mut cx = InferCx {
        op: &name,
        inputs,
        declared_outputs: &[],
        outputs: 1,
        shape_override: None,
        weights: None,
        findings: &mut findings,
    };
    let out = op.infer(&mut cx);
    (out, findings)
}

/// Runs `op` on `inputs` under a budget of `limit` bytes (for the ops' tests): its first
/// output.
#[cfg(test)]
pub(crate) fn eval_for_test(
    op: &dyn super::Op,
    inputs: &[Tensor],
    limit: u64,
) -> Result<Tensor, EvalError> {
    let values: Vec<Value<'_>> = inputs
        .iter()
        .map(|x| Value::Tensor(Arc::new(x.clone())))
        .collect();
    let cx = EvalCx::new(&values, Budget { limit, in_use: 0 });
    op.eval(&cx).map(|mut v| v.remove(0))
}

/// A layer's `<data>` attributes from `(name, value)` pairs (for the ops' tests): parse with
/// `Attrs::new(Some(&data))`.
#[cfg(test)]
pub(crate) fn attrs_for_test<'a>(attrs: &[(&'a str, &'a str)]) -> crate::ir::Data<'a> {
    use std::borrow::Cow;
    let mut pairs: Vec<(Cow<'a, str>, Cow<'a, str>)> = attrs
        .iter()
        .map(|&(k, v)| (Cow::Borrowed(k), Cow::Borrowed(v)))
        .collect();
    pairs.sort();
    crate::ir::Data(pairs)
}

/// `n` pseudo-random f32s uniform in `[lo, hi)` from `seed` (xorshift; 24-bit steps, so
/// `lo + u·(hi − lo)` is exact for the power-of-two widths the tests use).
#[cfg(test)]
pub(crate) fn uniform_for_test(n: usize, seed: u64, lo: f32, hi: f32) -> Vec<f32> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 40) as f32 / (1u64 << 24) as f32 * (hi - lo) + lo
        })
        .collect()
}

/// The op a layer of `def` with these attributes parses to, as its `Debug` text, or each
/// attribute error as `name value: reason` (for the ops' parse tables).
#[cfg(test)]
pub(crate) fn parsed_for_test(
    def: &super::OpDef,
    attrs: &[(&str, &str)],
) -> Result<String, Vec<String>> {
    let data = attrs_for_test(attrs);
    (def.parse)(&super::Attrs::new(Some(&data)))
        .map(|o| format!("{o:?}"))
        .map_err(|errors| {
            errors
                .iter()
                .map(|e| format!("{} {:?}: {}", e.name, e.value, e.reason))
                .collect()
        })
}

/// The output shape `op` infers from `inputs`, as text, or its findings (for the ops' tests).
#[cfg(test)]
pub(crate) fn inferred_shape_for_test(
    op: &dyn super::Op,
    inputs: &[&TensorType],
) -> Result<String, String> {
    inferred_for_test(op, inputs, |out| out[0].shape.to_string())
}

/// Every output `op` infers from `inputs` as `type[shape]`, separated by spaces, or its
/// findings (for the ops' tests).
#[cfg(test)]
pub(crate) fn inferred_types_for_test(
    op: &dyn super::Op,
    inputs: &[&TensorType],
) -> Result<String, String> {
    inferred_for_test(op, inputs, |out| {
        out.iter()
            .map(|t| format!("{}{}", t.element_type, t.shape))
            .collect::<Vec<_>>()
            .join(" ")
    })
}

#[cfg(test)]
fn inferred_for_test(
    op: &dyn super::Op,
    inputs: &[&TensorType],
    text: impl FnOnce(&[TensorType]) -> String,
) -> Result<String, String> {
    match infer_for_test(op, inputs) {
        (Some(out), _) => Ok(text(&out)),
        (None, findings) => Err(findings
            .iter()
            .map(|(k, port)| format!("{port:?} {k}"))
            .collect::<Vec<_>>()
            .join("; ")),
    }
}

/// The values of an f32 tensor in row-major order (for the ops' tests).
#[cfg(test)]
pub(crate) fn f32s_for_test(t: &Tensor) -> Vec<f32> {
    t.view::<f32>()
        .expect("an f32 tensor")
        .iter()
        .copied()
        .collect()
}

/// A tensor of `shape` holding `v`, row-major (for the ops' tests).
#[cfg(test)]
pub(crate) fn tensor_for_test<T: crate::tensor::Element>(shape: &[usize], v: Vec<T>) -> Tensor {
    T::wrap(
        ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(shape), v).expect("a test tensor's shape"),
    )
}

/// What an op made once per model from its constant inputs ([`Op::prepare`](super::Op::prepare)):
/// kept beside the model's folded constants and handed to the layer at every run
/// ([`EvalCx::prepared`]).
pub struct Prepared {
    data: Box<dyn std::any::Any + Send + Sync>,
    bytes: u64,
}

impl Prepared {
    /// `data`, which holds `bytes` bytes (counted against the model's memory budget).
    pub fn new<T: std::any::Any + Send + Sync>(data: T, bytes: u64) -> Prepared {
        Prepared {
            data: Box::new(data),
            bytes,
        }
    }

    pub fn bytes(&self) -> u64 {
        self.bytes
    }
}

impl std::fmt::Debug for Prepared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Prepared({} bytes)", self.bytes)
    }
}

/// The inputs of a layer at execution, and the memory budget its outputs must fit.
pub struct EvalCx<'a> {
    pub(crate) inputs: &'a [Value<'a>],
    pub(crate) budget: Budget,
    /// Bit `i`: output `i` is read by nothing.
    pub(crate) unread: u64,
    /// What the op prepared from its constant inputs, if anything.
    pub(crate) prepared: Option<&'a Prepared>,
}

impl<'a> EvalCx<'a> {
    pub fn new(inputs: &'a [Value<'a>], budget: Budget) -> EvalCx<'a> {
        EvalCx {
            inputs,
            budget,
            unread: 0,
            prepared: None,
        }
    }

    /// The same inputs and budget, with what the op prepared for this layer.
    pub fn with_prepared(self, prepared: Option<&'a Prepared>) -> EvalCx<'a> {
        EvalCx { prepared, ..self }
    }

    /// What the op prepared for this layer from its constant inputs
    /// ([`Op::prepare`](super::Op::prepare)), if it did and it is a `T`.
    pub fn prepared<T: std::any::Any>(&self) -> Option<&'a T> {
        self.prepared.and_then(|p| p.data.downcast_ref::<T>())
    }

    /// The same inputs and budget, with the outputs of the bits of `mask` (bit `i` for output
    /// `i`) read by nothing.
    pub fn unread(self, mask: u64) -> EvalCx<'a> {
        EvalCx {
            unread: mask,
            ..self
        }
    }

    /// Whether nothing reads output `i` (no layer, no Result, no observer of the run): an op
    /// may then leave it uncomputed and give an empty tensor of its type in its place.
    pub fn output_unread(&self, i: usize) -> bool {
        i < 64 && self.unread >> i & 1 == 1
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
        tensor_of(&self.inputs[i], &self.budget)
    }

    /// The elements of integer input `i` as i64s (inference checked its type).
    pub fn ints(&self, i: usize) -> Result<Vec<i64>, EvalError> {
        crate::shape::types::int_values(&*self.tensor(i)?)
            .ok_or_else(|| EvalError::Invalid(format!("input {i} is not integers")))
    }

    /// Checks that an output of `elements` elements of `ty` fits the budget, before it is
    /// allocated.
    pub fn reserve(&self, ty: ElementType, elements: usize) -> Result<(), EvalError> {
        let needed = ty.storage_bytes(elements as u64).unwrap_or(u64::MAX);
        self.reserve_bytes("output", needed)
    }

    /// Checks that `needed` more bytes fit the budget.
    pub fn reserve_bytes(&self, what: &'static str, needed: u64) -> Result<(), EvalError> {
        self.budget.check(what, needed).map_err(EvalError::Memory)
    }
}

/// A value as a tensor: a tensor as it is, a Const's bytes copied (within `budget`). Execution
/// and ops read values through this one function.
pub fn tensor_of(v: &Value<'_>, budget: &Budget) -> Result<Arc<Tensor>, EvalError> {
    if let Value::Mapped(m) = v {
        // A borrowed input's copy is made once, at its first read.
        let (what, made) = match m.copy {
            Some(kept) => ("copy of the input", kept.get().is_some()),
            None => ("copy of the Const", false),
        };
        if !made {
            budget.check(what, v.bytes()).map_err(EvalError::Memory)?;
        }
    }
    // Packed weight types (u4, nf4, ...) stay as the Const's bytes: only Convert decodes them.
    v.to_tensor().ok_or_else(|| EvalError::UnsupportedType {
        op: "anything but a Convert".into(),
        ty: v.element_type(),
    })
}
