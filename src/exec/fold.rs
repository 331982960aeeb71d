//! Constant subgraphs, computed once per model: every live layer whose inputs all come from
//! Consts (through other such layers) — the f16 → f32 Converts of compressed weights, shape
//! arithmetic, decoded u4 weights — is evaluated at the model's first run, and the values that
//! non-constant layers read are kept for every later run (as OpenVINO folds constants when it
//! compiles a model). Consts themselves stay where they are, in the mapped weights file.
//!
//! Layers that read constant inputs beside others prepare what they can from them here too
//! ([`Op::prepare`](crate::ops::Op::prepare): MatMul packs constant weights in its GEMM's
//! panels), kept for every run as OpenVINO's CPU plugin keeps its repacked weights.

use std::sync::Arc;

use super::{Values, eval_node};
use crate::error::Error;
use crate::graph::Graph;
use crate::memory::Budget;
use crate::ops::{Prepared, Role};
use crate::tensor::{Tensor, Value};

/// The kept values of a model's constant subgraphs.
#[derive(Debug, Default)]
pub struct Folded {
    /// Per node: whether execution takes its value from here instead of computing it.
    covered: Vec<bool>,
    /// The outputs of covered layers that other layers read.
    kept: Vec<(usize, Vec<Option<Arc<Tensor>>>)>,
    /// What layers prepared from their constant inputs, by node.
    prepared: Vec<(usize, Prepared)>,
    bytes: u64,
}

impl Folded {
    /// Whether layer `node` is computed here rather than at each run.
    pub fn covers(&self, node: usize) -> bool {
        self.covered.get(node).copied().unwrap_or(false)
    }

    /// What layer `node` prepared from its constant inputs ([`Op::prepare`](crate::ops::Op::prepare)).
    pub fn prepared(&self, node: usize) -> Option<&Prepared> {
        self.prepared
            .binary_search_by_key(&node, |(n, _)| *n)
            .ok()
            .map(|k| &self.prepared[k].1)
    }

    /// Bytes the kept values and prepared data take.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Puts the kept values where execution reads its layers' values.
    pub(super) fn seed(&self, values: &mut Values<'_>) {
        for (node, outs) in &self.kept {
            for (port, t) in outs.iter().enumerate() {
                if let Some(t) = t {
                    values[*node][port] = Some(Value::Tensor(t.clone()));
                }
            }
        }
    }
}

/// Computes the constant subgraphs of `g` within a memory budget of `limit` bytes.
pub fn fold(g: &Graph, limit: u64) -> Result<Folded, Error> {
    let n = g.nodes.len();
    let live: Vec<bool> = g.dead_mask().into_iter().map(|d| !d).collect();
    // A layer is constant if it is a Const, or a computation whose inputs are all constant.
    let mut constant = vec![false; n];
    let mut covered = vec![false; n];
    for &i in &g.order {
        let node = &g.nodes[i];
        constant[i] = live[i]
            && match node.op.role() {
                Role::Constant(_) => true,
                Role::Compute => {
                    node.op.folds()
                        && !node.inputs.is_empty()
                        && node.inputs.iter().all(|p| constant[p.source.node])
                }
                _ => false,
            };
        covered[i] = constant[i] && matches!(node.op.role(), Role::Compute);
    }
    // Computations that read a constant input beside others may prepare something from it.
    let reads_constant = |i: usize| {
        let node = &g.nodes[i];
        live[i]
            && !constant[i]
            && matches!(node.op.role(), Role::Compute)
            && node.inputs.iter().any(|p| constant[p.source.node])
    };
    if !covered.iter().any(|&c| c) && !(0..n).any(reads_constant) {
        return Ok(Folded::default());
    }
    let mut values: Values = g
        .nodes
        .iter()
        .map(|n| vec![None; n.outputs.len()])
        .collect();
    let mut budget = Budget { limit, in_use: 0 };
    for &i in &g.order {
        if !constant[i] {
            continue;
        }
        let node = &g.nodes[i];
        match node.op.role() {
            Role::Constant(c) => {
                values[i][0] = Some(Value::Mapped(super::const_bytes(g, i, c)?));
            }
            _ => {
                let out = eval_node(g, i, &values, &budget, 0, None)?;
                for (port, t) in out.into_iter().enumerate() {
                    budget.add(t.bytes());
                    values[i][port] = Some(Value::Tensor(Arc::new(t)));
                }
            }
        }
    }
    // What the computations reading constants prepare from them (in node order).
    let mut prepared = Vec::new();
    let mut bytes = 0;
    for i in (0..n).filter(|&i| reads_constant(i)) {
        let node = &g.nodes[i];
        let inputs: Vec<Option<Value<'_>>> = node
            .inputs
            .iter()
            .map(|p| {
                let src = p.source;
                constant[src.node]
                    .then(|| values[src.node].get(src.port).cloned().flatten())
                    .flatten()
            })
            .collect();
        if let Some(p) = node.op.prepare(&inputs, &budget) {
            budget.add(p.bytes());
            bytes += p.bytes();
            prepared.push((i, p));
        }
    }
    // Keep what non-constant layers read.
    let mut kept = Vec::new();
    for (i, node) in g.nodes.iter().enumerate() {
        if !covered[i] {
            continue;
        }
        let outs: Vec<Option<Arc<Tensor>>> = node
            .outputs
            .iter()
            .enumerate()
            .map(|(port, p)| {
                let read = p.consumers.iter().any(|&(c, _)| live[c] && !constant[c]);
                match (&values[i][port], read) {
                    (Some(Value::Tensor(t)), true) => {
                        bytes += t.bytes();
                        Some(t.clone())
                    }
                    _ => None,
                }
            })
            .collect();
        if outs.iter().any(Option::is_some) {
            kept.push((i, outs));
        }
    }
    Ok(Folded {
        covered,
        kept,
        prepared,
        bytes,
    })
}
