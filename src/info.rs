//! A summary of a loaded model: what `ovir info` prints.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::dtype::ElementType;
use crate::error::LayerRef;
use crate::graph::Graph;
use crate::shape::Inferred;

#[derive(Debug, Serialize)]
pub struct Info {
    pub file: String,
    pub ir_version: u32,
    pub name: Option<String>,
    /// The OpenVINO version that wrote the file, from the net-level `<rt_info>`.
    pub producer: Option<String>,
    pub weights: WeightsInfo,
    pub inputs: Vec<TensorInfo>,
    pub outputs: Vec<TensorInfo>,
    /// Number of layers.
    pub layers: usize,
    /// Layers per op type and version (`Subtract-1`, `Gather-8`; `MyOp (extension)` for a
    /// custom opset), by name, and whether ovir runs it.
    pub ops: Vec<OpCount>,
    pub dead_layers: Vec<LayerRef>,
    /// Inputs that feed no Result (they are still inputs of the model).
    pub unused_inputs: Vec<String>,
}

/// How many layers use one op version, and whether ovir runs it.
#[derive(Debug, Serialize)]
pub struct OpCount {
    pub op: String,
    pub layers: usize,
    pub runs: bool,
}

#[derive(Debug, Serialize)]
pub struct WeightsInfo {
    pub path: String,
    /// File size, or `None` if there is no weights file.
    pub bytes: Option<u64>,
}

#[derive(Debug, Serialize)]
pub struct TensorInfo {
    /// The name the tensor is bound or written by.
    pub name: String,
    /// Every tensor name of the port.
    pub names: Vec<String>,
    /// The Parameter or Result layer.
    pub layer: String,
    /// Element type: the Parameter's for inputs; inferred for outputs (`None` if inference
    /// failed: `ovir check` says why).
    pub element_type: Option<ElementType>,
    /// Partial shape: the Parameter's for inputs; inferred for outputs (`?` if inference failed).
    pub shape: String,
}

impl Info {
    /// The summary of a graph; output types come from `inferred` (see [`crate::shape::infer`]).
    pub fn new(g: &Graph, inferred: &Inferred) -> Info {
        let inputs = g
            .inputs
            .iter()
            .enumerate()
            .map(|(i, &n)| {
                let node = &g.nodes[n];
                let (element_type, shape) = match node.parameter() {
                    Some(p) => (Some(p.element_type), p.shape.to_string()),
                    None => (None, String::new()),
                };
                TensorInfo {
                    name: g
                        .input_names(i)
                        .first()
                        .map_or_else(String::new, |s| s.to_string()),
                    names: node
                        .outputs
                        .first()
                        .map(|p| p.names.clone())
                        .unwrap_or_default(),
                    layer: node.name.clone(),
                    element_type,
                    shape,
                }
            })
            .collect();
        let outputs = g
            .outputs
            .iter()
            .enumerate()
            .map(|(i, &n)| {
                let node = &g.nodes[n];
                let src = g.output_source(i);
                let producer = &g.nodes[src.node].outputs[src.port];
                let names = if node.output_names.is_empty() {
                    producer.names.clone()
                } else {
                    node.output_names.clone()
                };
                let t = inferred.output(g, i);
                TensorInfo {
                    name: g.output_name(i).to_owned(),
                    names,
                    layer: node.name.clone(),
                    element_type: t.map(|t| t.element_type),
                    shape: t.map_or_else(|| "?".to_owned(), |t| t.shape.to_string()),
                }
            })
            .collect();
        let mut counts: BTreeMap<String, (usize, bool)> = BTreeMap::new();
        for n in &g.nodes {
            let (title, runs) = match (n.op.def(), n.opaque()) {
                (_, Some(o)) => (o.title(), false),
                (Some(d), None) => (format!("{}-{}", n.op.name(), d.version), true),
                (None, None) => (n.op.name().to_owned(), false),
            };
            counts.entry(title).or_insert((0, runs)).0 += 1;
        }
        let ops = counts
            .into_iter()
            .map(|(op, (layers, runs))| OpCount { op, layers, runs })
            .collect();
        let producer = g
            .rt_info
            .iter()
            .find(|(k, _)| k == "OpenVINO Runtime" || k == "Runtime_version")
            .map(|(_, v)| v.clone());
        Info {
            file: g.file.display().to_string(),
            ir_version: g.version.0,
            name: g.name.clone(),
            producer,
            weights: WeightsInfo {
                path: g.weights_path.display().to_string(),
                bytes: g.weights.as_ref().map(|w| w.len()),
            },
            inputs,
            outputs,
            layers: g.nodes.len(),
            ops,
            dead_layers: g.dead.iter().map(|&i| g.nodes[i].layer_ref()).collect(),
            unused_inputs: g
                .unused_inputs
                .iter()
                .map(|&i| g.nodes[i].name.clone())
                .collect(),
        }
    }
}
