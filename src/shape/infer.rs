//! Stage 3: element types, shapes and small values of every port, inferred in topological
//! order by each layer's op ([`Op::infer`](crate::ops::Op::infer)), and every declared `<dim>`
//! and `precision` compared with them. Every finding is collected.
//!
//! Values: when every input of a layer has a known value and its outputs are small
//! ([`VALUE_LIMIT`]), the op is evaluated on them (constant folding of shape subgraphs); when a
//! data-movement op's input has interval bounds instead ([`Op::moves`](crate::ops::Op::moves)),
//! it is evaluated on the lower and on the upper bounds, as OpenVINO's `evaluate_lower` and
//! `evaluate_upper` do.

use std::sync::Arc;

use crate::dtype::ElementType;
use crate::error::{Diagnostic, Error, ErrorKind, PortDir};
use crate::graph::{Graph, PortDecl};
use crate::memory::Budget;
use crate::ops::{EvalCx, InferCx, Role};
use crate::shape::PartialShape;
pub use crate::shape::types::TensorType;
use crate::shape::types::{Bounds, UNBOUNDED, VALUE_LIMIT, int_values, saturated_ints_tensor};
use crate::tensor::{Tensor, TypeSet, Value};

/// Inferred types of every output port (unknown where an error upstream left them so).
#[derive(Debug, Default)]
pub struct Inferred {
    /// Per node, its outputs' types, set once when the node is inferred (so that a node's
    /// inputs can be read while later nodes are set).
    nodes: Vec<std::cell::OnceCell<Vec<TensorType>>>,
}

impl Inferred {
    /// The inferred type of output `port` of node `node`.
    pub fn port(&self, node: usize, port: usize) -> Option<&TensorType> {
        self.nodes.get(node)?.get()?.get(port)
    }

    /// The inferred type of model output `i` (the value its Result consumes).
    pub fn output(&self, g: &Graph, i: usize) -> Option<&TensorType> {
        let src = g.output_source(i);
        self.port(src.node, src.port)
    }
}

/// Element types ovir's kernels compute with.
pub fn runnable(t: ElementType) -> bool {
    TypeSet::ANY.contains(t)
}

fn finding(g: &Graph, node: usize, port: Option<(PortDir, usize)>, kind: ErrorKind) -> Diagnostic {
    let e = Error::at(kind, g.locate(node, port));
    if e.kind().is_warning() {
        Diagnostic::warning(e)
    } else {
        Diagnostic::error(e)
    }
}

/// Infers every port's type. `overrides` specialise inputs: (input index, name, shape), e.g.
/// from `--shape`. Returns the types and every finding (errors and warnings), in graph order.
pub fn infer(
    g: &Graph,
    overrides: &[(usize, String, PartialShape)],
) -> (Inferred, Vec<Diagnostic>) {
    let out = Inferred {
        nodes: (0..g.nodes.len())
            .map(|_| std::cell::OnceCell::new())
            .collect(),
    };
    let mut found = Vec::new();
    let mut local = Vec::new();
    // Reused for every node (one allocation, not one per node).
    let mut inputs: Vec<&TensorType> = Vec::new();
    for &i in &g.order {
        let node = &g.nodes[i];
        inputs.clear();
        for p in &node.inputs {
            match out.port(p.source.node, p.source.port) {
                Some(t) => inputs.push(t),
                None => break,
            }
        }
        // An input left unknown by an error upstream stops only this branch.
        if inputs.len() != node.inputs.len() {
            continue;
        }
        let (mut shape_override, mut declared) = (None, Vec::new());
        match node.op.role() {
            Role::Input(_) if !overrides.is_empty() => {
                shape_override = g
                    .inputs
                    .iter()
                    .position(|&n| n == i)
                    .and_then(|k| overrides.iter().find(|(o, _, _)| *o == k))
                    .map(|(_, name, shape)| (name.as_str(), shape));
            }
            Role::Opaque(_) => {
                declared = node
                    .outputs
                    .iter()
                    .map(|p| p.decl.clone())
                    .collect::<Vec<PortDecl>>();
            }
            _ => {}
        }
        let mut cx = InferCx {
            op: node.op.name(),
            inputs: &inputs,
            declared_outputs: &declared,
            outputs: node.outputs.len(),
            shape_override,
            weights: g.weights.as_ref(),
            findings: &mut local,
        };
        let result = node.op.infer(&mut cx);
        for (kind, port) in local.drain(..) {
            found.push(finding(g, i, port, kind));
        }
        let Some(mut types) = result else { continue };
        fold(g, i, &inputs, &mut types, &mut found);
        types.truncate(node.outputs.len());
        let _ = out.nodes[i].set(types);
    }

    // Declared port dims and precisions against the inferred types (an opaque layer's outputs
    // are what it declares).
    for (i, node) in g.nodes.iter().enumerate() {
        for (j, p) in node.inputs.iter().enumerate() {
            if let Some(t) = out.port(p.source.node, p.source.port) {
                compare_declared(g, i, (PortDir::Input, j), &p.decl, t, &mut found);
            }
        }
        if node.opaque().is_some() {
            continue;
        }
        for (k, p) in node.outputs.iter().enumerate() {
            if let Some(t) = out.port(i, k) {
                compare_declared(g, i, (PortDir::Output, k), &p.decl, t, &mut found);
            }
        }
    }

    for &i in &g.dead {
        found.push(finding(g, i, None, ErrorKind::DeadLayer));
    }
    for &i in &g.unused_inputs {
        found.push(finding(g, i, None, ErrorKind::UnusedInput));
    }
    (out, found)
}

/// The number of elements of a static shape, if it is one.
fn static_len(shape: &PartialShape) -> Option<usize> {
    shape
        .to_tensor_dims()?
        .iter()
        .try_fold(1usize, |n, &d| n.checked_mul(d))
}

/// Values of small outputs computed from known inputs, and bounds through data movement.
fn fold(
    g: &Graph,
    i: usize,
    inputs: &[&TensorType],
    types: &mut [TensorType],
    found: &mut Vec<Diagnostic>,
) {
    // Most layers of a large model have no known input (checked first: it is cheap).
    if !inputs.iter().any(|t| t.has_value() || t.bounds.is_some()) {
        return;
    }
    let op = &g.nodes[i].op;
    if !op.folds() || types.is_empty() {
        return;
    }
    // Every input with bounds but no value must be one the op only moves, and every other input
    // must be known.
    let bounded = |t: &TensorType| !t.has_value() && t.bounds.is_some();
    let known = inputs.iter().all(|t| t.has_value());
    if !known
        && !inputs
            .iter()
            .enumerate()
            .all(|(k, t)| t.has_value() || (bounded(t) && op.moves(k)))
    {
        return;
    }
    let small = types
        .iter()
        .all(|t| static_len(&t.shape).is_some_and(|n| n <= VALUE_LIMIT));
    if !small {
        return;
    }
    let budget = Budget {
        limit: u64::MAX,
        in_use: 0,
    };
    if known {
        let values: Vec<Value<'_>> = inputs
            .iter()
            .filter_map(|t| t.value().cloned().map(Value::Tensor))
            .collect();
        match op.eval(&EvalCx::new(&values, budget)) {
            Ok(outs) if outs.len() == types.len() => {
                for (t, v) in types.iter_mut().zip(outs) {
                    if v.element_type() == t.element_type {
                        *t = TensorType::of_value(v);
                    }
                }
            }
            Ok(_) => {}
            Err(e) => found.push(finding(g, i, None, e.into_kind())),
        }
        return;
    }
    // Bounds (the inputs were checked above).
    let usable = inputs.iter().any(|t| bounded(t));
    let nonnegative = !op.bounds_need_nonnegative()
        || inputs.iter().filter(|t| bounded(t)).all(|t| {
            t.bounds
                .as_deref()
                .is_some_and(|b| b.lo.iter().all(|&v| v >= 0))
        });
    if !usable || !nonnegative {
        return;
    }
    let side = |upper: bool| -> Option<Vec<Tensor>> {
        let values: Vec<Value<'_>> = inputs
            .iter()
            .map(|t| match t.value() {
                Some(v) => Some(Value::Tensor(v.clone())),
                None => {
                    let b = t.bounds.as_deref()?;
                    let values = if upper { &b.hi } else { &b.lo };
                    saturated_ints_tensor(t.element_type, &t.shape, values)
                        .map(|x| Value::Tensor(Arc::new(x)))
                }
            })
            .collect::<Option<_>>()?;
        op.eval(&EvalCx::new(&values, budget)).ok()
    };
    let (Some(lo), Some(hi)) = (side(false), side(true)) else {
        return;
    };
    for ((t, l), h) in types.iter_mut().zip(lo).zip(hi) {
        if !TypeSet::INT.contains(t.element_type) || l.element_type() != t.element_type {
            continue;
        }
        let max = type_max(t.element_type);
        let (Some(lo), Some(hi)) = (int_values(&l), int_values(&h)) else {
            continue;
        };
        let hi = hi
            .into_iter()
            .map(|v| if Some(v) == max { UNBOUNDED } else { v })
            .collect();
        *t = Bounds { lo, hi }.into_type(t.element_type, PartialShape::of_tensor(l.shape()));
    }
}

/// The largest value of an integer type, as an i64 (`None` for u64, whose maximum is larger).
fn type_max(t: ElementType) -> Option<i64> {
    crate::dispatch!(int: t, T => i64::try_from(crate::num::Int::to_i128(<T as crate::num::Int>::MAX)).ok(), _ => None)
}

fn show_declared(dims: &[Option<u64>]) -> String {
    let parts: Vec<String> = dims
        .iter()
        .map(|d| d.map_or_else(|| "-1".to_owned(), |v| v.to_string()))
        .collect();
    format!("[{}]", parts.join(","))
}

fn compare_declared(
    g: &Graph,
    node: usize,
    port: (PortDir, usize),
    decl: &PortDecl,
    t: &TensorType,
    found: &mut Vec<Diagnostic>,
) {
    let err = finding;
    if let Some(p) = decl.precision
        && p != ElementType::Dynamic
        && t.element_type != ElementType::Dynamic
        && p != t.element_type
    {
        found.push(err(
            g,
            node,
            Some(port),
            ErrorKind::PrecisionMismatch {
                declared: p,
                inferred: t.element_type,
            },
        ));
    }
    let declared = || show_declared(&decl.dims);
    if decl.dims.is_empty() {
        // OpenVINO writes no <dim> for a scalar and none for a dynamic rank: nothing to compare.
        return;
    }
    let Some(dims) = t.shape.dims() else {
        // OpenVINO writes a dynamic rank as no dims at all.
        if decl.dims.iter().any(Option::is_some) {
            found.push(err(
                g,
                node,
                Some(port),
                ErrorKind::DeclaredStaticVsDynamic {
                    at: "everywhere".into(),
                    declared: declared(),
                    inferred: t.shape.to_string(),
                },
            ));
        }
        return;
    };
    if dims.len() != decl.dims.len() {
        found.push(err(
            g,
            node,
            Some(port),
            ErrorKind::DeclaredRankMismatch {
                declared: declared(),
                declared_rank: decl.dims.len(),
                inferred: t.shape.to_string(),
                inferred_rank: dims.len(),
            },
        ));
        return;
    }
    let mut warn_axis = None;
    for (axis, (&d, &inf)) in decl.dims.iter().zip(dims).enumerate() {
        let Some(d) = d else { continue };
        if inf.get_static() == Some(d) {
            continue;
        }
        if inf.is_static() || !inf.contains(d) {
            found.push(err(
                g,
                node,
                Some(port),
                ErrorKind::DeclaredDimMismatch {
                    axis,
                    declared: declared(),
                    inferred: t.shape.to_string(),
                },
            ));
            return;
        }
        warn_axis.get_or_insert(axis);
    }
    if let Some(axis) = warn_axis {
        found.push(err(
            g,
            node,
            Some(port),
            ErrorKind::DeclaredStaticVsDynamic {
                at: format!("at axis {axis}"),
                declared: declared(),
                inferred: t.shape.to_string(),
            },
        ));
    }
}
