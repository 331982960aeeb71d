//! Stage 2: [`IrDocument`](crate::ir::IrDocument) → [`Graph`]: layers become nodes with parsed
//! ops, edges are bound to port positions, the graph is checked for structural errors and put
//! in topological order.

mod build;
pub mod names;

use std::path::Path;
use std::sync::Arc;

pub use build::build;

use crate::dtype::ElementType;
use crate::error::{LayerRef, LineCol, Location, OpaqueUse, PortDir, PortRef};
use crate::ops::{Op, Role};
use crate::weights::Weights;

/// IR format version (`<net version="...">`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
pub struct IrVersion(pub u32);

/// A validated graph.
#[derive(Debug)]
pub struct Graph {
    pub file: Arc<Path>,
    pub version: IrVersion,
    /// The `name` attribute of `<net>`.
    pub name: Option<String>,
    /// Layers in XML order.
    pub nodes: Vec<Node>,
    /// Node indices in topological order (inputs before their users; ties in XML order).
    pub order: Vec<usize>,
    /// Parameter nodes in XML order: the model inputs.
    pub inputs: Vec<usize>,
    /// Result nodes in XML order: the model outputs.
    pub outputs: Vec<usize>,
    /// Nodes that feed no Result (Parameters excluded), in XML order.
    pub dead: Vec<usize>,
    /// Parameters that feed no Result, in XML order (still model inputs).
    pub unused_inputs: Vec<usize>,
    /// Layers whose op ovir does not implement (opaque), in XML order.
    pub opaque: Vec<usize>,
    /// The weights file, if it exists.
    pub weights: Option<Arc<Weights>>,
    /// Where the weights file is (or would be).
    pub weights_path: Arc<Path>,
    /// The net-level `<rt_info>`, flattened.
    pub rt_info: Vec<(String, String)>,
}

/// One layer.
#[derive(Debug)]
pub struct Node {
    pub id: u64,
    pub name: String,
    pub op: Box<dyn Op>,
    /// Position of the `<layer>` start tag.
    pub pos: LineCol,
    pub inputs: Vec<InputPort>,
    pub outputs: Vec<OutputPort>,
    /// For a Result in IR v11: the `output_names` attribute, split.
    pub output_names: Vec<String>,
}

/// What a `<port>` declares.
#[derive(Clone, Debug, PartialEq)]
pub struct PortDecl {
    pub id: u64,
    /// The `precision` attribute, if written.
    pub precision: Option<ElementType>,
    /// The `<dim>`s; `None` is `-1` (dynamic).
    pub dims: Vec<Option<u64>>,
    /// Position of the `<port>` start tag.
    pub pos: LineCol,
}

/// Where a value comes from: an output port (by position) of a node.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Src {
    pub node: usize,
    pub port: usize,
}

#[derive(Debug)]
pub struct InputPort {
    pub decl: PortDecl,
    pub source: Src,
}

#[derive(Debug)]
pub struct OutputPort {
    pub decl: PortDecl,
    /// Tensor names from the `names` attribute (`\,` unescaped).
    pub names: Vec<String>,
    /// (node, input position) of every consumer.
    pub consumers: Vec<(usize, usize)>,
}

impl Node {
    /// The Parameter, if this layer is a model input.
    pub fn parameter(&self) -> Option<&crate::ops::parameter::Parameter> {
        match self.op.role() {
            Role::Input(p) => Some(p),
            _ => None,
        }
    }

    /// The opaque op, if ovir does not implement this layer's.
    pub fn opaque(&self) -> Option<&crate::ops::opaque::Opaque> {
        match self.op.role() {
            Role::Opaque(o) => Some(o),
            _ => None,
        }
    }

    pub fn layer_ref(&self) -> LayerRef {
        LayerRef {
            id: self.id.to_string(),
            name: self.name.clone(),
            ty: self.op.name().to_owned(),
        }
    }

    pub fn port_ref(&self, dir: PortDir, index: usize) -> Option<PortRef> {
        let decl = match dir {
            PortDir::Input => &self.inputs.get(index)?.decl,
            PortDir::Output => &self.outputs.get(index)?.decl,
        };
        Some(PortRef {
            dir,
            index,
            id: decl.id.to_string(),
        })
    }
}

impl Graph {
    /// Per node, whether it is dead (feeds no Result).
    pub fn dead_mask(&self) -> Vec<bool> {
        let mut dead = vec![false; self.nodes.len()];
        for &i in &self.dead {
            dead[i] = true;
        }
        dead
    }

    /// The layers ovir does not implement among those `keep` accepts, grouped by op, in XML
    /// order of their first.
    pub fn opaque_uses(&self, keep: impl Fn(usize) -> bool) -> Vec<OpaqueUse> {
        let mut uses: Vec<OpaqueUse> = Vec::new();
        for &i in self.opaque.iter().filter(|&&i| keep(i)) {
            let n = &self.nodes[i];
            let Some(o) = n.opaque() else { continue };
            let title = o.title();
            match uses.iter_mut().find(|u| u.op == title) {
                Some(u) => u.count += 1,
                None => uses.push(OpaqueUse {
                    op: title,
                    count: 1,
                    first: Some(n.pos),
                    first_layer: n.layer_ref(),
                    first_node: i,
                }),
            }
        }
        uses
    }

    /// The location of a node (and optionally one of its ports) for diagnostics.
    pub fn locate(&self, node: usize, port: Option<(PortDir, usize)>) -> Location {
        let n = &self.nodes[node];
        let mut at = Location {
            file: self.file.clone(),
            pos: Some(n.pos),
            layer: Some(n.layer_ref()),
            port: None,
        };
        if let Some((dir, index)) = port {
            let decl = match dir {
                PortDir::Input => n.inputs.get(index).map(|p| &p.decl),
                PortDir::Output => n.outputs.get(index).map(|p| &p.decl),
            };
            if let Some(d) = decl {
                at.pos = Some(d.pos);
            }
            at.port = n.port_ref(dir, index);
        }
        at
    }

    /// The tensor names an input can be bound by, best first: the Parameter's tensor names,
    /// then its layer name.
    pub fn input_names(&self, input: usize) -> Vec<&str> {
        let node = &self.nodes[self.inputs[input]];
        let mut names: Vec<&str> = node
            .outputs
            .first()
            .map(|p| p.names.iter().map(String::as_str).collect())
            .unwrap_or_default();
        if !names.contains(&node.name.as_str()) {
            names.push(&node.name);
        }
        names
    }

    /// The name of an output: the first of the Result's `output_names` (v11), else the first
    /// tensor name of the producing port, else the Result layer's name.
    pub fn output_name(&self, output: usize) -> &str {
        let node = &self.nodes[self.outputs[output]];
        if let Some(n) = node.output_names.first() {
            return n;
        }
        if let Some(src) = node.inputs.first().map(|p| p.source)
            && let Some(n) = self.nodes[src.node].outputs[src.port].names.first()
        {
            return n;
        }
        &node.name
    }

    /// The source feeding a Result.
    pub fn output_source(&self, output: usize) -> Src {
        self.nodes[self.outputs[output]].inputs[0].source
    }
}
