//! Building a [`Graph`] from an [`IrDocument`], collecting every structural error.

use std::borrow::Cow;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::path::Path;
use std::sync::Arc;

use super::names::split_names;
use super::{Graph, InputPort, IrVersion, Node, OutputPort, PortDecl, Src};
use crate::dtype::ElementType;
use crate::error::{Error, ErrorKind, LayerRef, LineCol, Location, PortDir, PortRef};
use rayon::prelude::*;

use crate::ir::{At, LayerItem, Port, Source};
use crate::ops::{self, Attrs, Op, Resolved, Role};
use crate::shape::dim::MAX_DIM;
use crate::weights::Weights;

/// A layer while the graph is being built; fields are optional where the file may be wrong.
struct Pending {
    id: Option<u64>,
    name: String,
    ty: Cow<'static, str>,
    op: Option<Box<dyn Op>>,
    offset: usize,
    pos: LineCol,
    /// The element did not deserialize: its ports are unknown.
    broken: bool,
    /// The declared port counts do not fit the op (reported once).
    bad_arity: bool,
    /// Another layer has the same id, so edges cannot address this one.
    shadowed: bool,
    inputs: Vec<PendingPort>,
    outputs: Vec<PendingPort>,
    output_names: Vec<String>,
}

struct PendingPort {
    id: Option<u64>,
    precision: Option<ElementType>,
    dims: Vec<Option<u64>>,
    pos: LineCol,
    names: Vec<String>,
    /// For inputs: the source and the offset of the edge that set it.
    source: Option<(Src, usize)>,
    /// For inputs: an edge names this port but its source could not be resolved (that error
    /// is reported, so a missing input is not reported again).
    claimed: bool,
    /// For outputs: (node, input position) of every consumer.
    consumers: Vec<(usize, usize)>,
}

impl Pending {
    /// The op's role, once the layer's op is known.
    fn role(&self) -> Option<Role<'_>> {
        self.op.as_ref().map(|o| o.role())
    }

    fn layer_ref(&self) -> LayerRef {
        LayerRef {
            id: self.id.map_or_else(|| "?".to_owned(), |i| i.to_string()),
            name: self.name.clone(),
            ty: self.ty.to_string(),
        }
    }

    fn ports(&self, dir: PortDir) -> &[PendingPort] {
        match dir {
            PortDir::Input => &self.inputs,
            PortDir::Output => &self.outputs,
        }
    }

    fn port_ref(&self, dir: PortDir, index: usize) -> PortRef {
        PortRef {
            dir,
            index,
            id: self.ports(dir)[index]
                .id
                .map_or_else(|| "?".to_owned(), |i| i.to_string()),
        }
    }
}

/// Layer id → node index. IR files number layers 0..n, so a table usually beats hashing.
enum IdIndex {
    Dense(Vec<u32>),
    Sparse(HashMap<u64, usize>),
}

impl IdIndex {
    const NONE: u32 = u32::MAX;

    fn new(nodes: &[Pending]) -> IdIndex {
        let max = nodes.iter().filter_map(|n| n.id).max().unwrap_or(0);
        let dense = nodes.len() < Self::NONE as usize && max < 2 * nodes.len() as u64 + 1024;
        if dense {
            IdIndex::Dense(vec![Self::NONE; max as usize + 1])
        } else {
            IdIndex::Sparse(HashMap::with_capacity(nodes.len()))
        }
    }

    fn get(&self, id: u64) -> Option<usize> {
        match self {
            IdIndex::Dense(t) => t
                .get(usize::try_from(id).ok()?)
                .filter(|&&i| i != Self::NONE)
                .map(|&i| i as usize),
            IdIndex::Sparse(m) => m.get(&id).copied(),
        }
    }

    fn insert(&mut self, id: u64, node: usize) {
        match self {
            // `new` sized the table for every id and `node` fits in u32.
            IdIndex::Dense(t) => t[id as usize] = node as u32,
            IdIndex::Sparse(m) => {
                m.insert(id, node);
            }
        }
    }
}

/// Collected errors, each with the byte offset it sorts by.
struct Errors<'s, 'a> {
    source: &'s Source<'a>,
    list: Vec<(usize, Error)>,
}

impl Errors<'_, '_> {
    fn at(&mut self, offset: usize, layer: Option<LayerRef>, kind: ErrorKind) {
        let at = self.source.locate(offset, layer);
        self.list.push((offset, Error::at(kind, at)));
    }

    fn at_loc(&mut self, offset: usize, at: Location, kind: ErrorKind) {
        self.list.push((offset, Error::at(kind, at)));
    }
}

/// Reads the IR text of `file` and builds and validates the graph. `weights` is the opened
/// weights file, if it exists at `weights_path`. All errors found are returned together.
pub fn build(
    file: Arc<Path>,
    text: &str,
    weights_path: Arc<Path>,
    weights: Option<Weights>,
) -> Result<Graph, Error> {
    // Layers are read and understood on worker threads while the scan goes on.
    let (mut doc, read) = crate::ir::parse_with(file, text, |source, mut item| {
        let mut local = Errors {
            source,
            list: Vec::new(),
        };
        let broken = match item.error.take() {
            Some(e) => {
                local.list.push((item.offset, e));
                true
            }
            None => false,
        };
        let p = pending_layer(&item, broken, &mut local);
        (p, local.list)
    })?;
    let errors = std::mem::take(&mut doc.errors);
    let doc = &doc;
    let source = &doc.source;
    let version = match doc.net.version.as_deref() {
        Some("10") => IrVersion(10),
        Some("11") => IrVersion(11),
        Some(other) => {
            return Err(Error::at(
                ErrorKind::UnsupportedVersion {
                    found: other.to_owned(),
                },
                source.locate(doc.net_offset, None),
            ));
        }
        None => {
            return Err(Error::at(
                ErrorKind::MissingAttribute {
                    element: "net",
                    name: "version".into(),
                },
                source.locate(doc.net_offset, None),
            ));
        }
    };
    let mut errs = Errors {
        source,
        list: Vec::new(),
    };
    errs.list.extend(errors);
    if doc.layers_section.is_none() {
        errs.at(
            doc.net_offset,
            None,
            ErrorKind::MissingSection { name: "layers" },
        );
    }

    // Layers.
    // (Collected in place: the list of read layers becomes the list of nodes.)
    let mut nodes: Vec<Pending> = read
        .into_iter()
        .map(|(mut p, list)| {
            if version.0 < 11 {
                // IR v10 has no `output_names`; OpenVINO ignores the attribute there.
                p.output_names.clear();
            }
            errs.list.extend(list);
            p
        })
        .collect();

    // Layer ids.
    let mut by_id = IdIndex::new(&nodes);
    let mut shadowed = Vec::new();
    for (i, n) in nodes.iter().enumerate() {
        let Some(id) = n.id else { continue };
        if let Some(first) = by_id.get(id) {
            shadowed.push(i);
            errs.at(
                n.offset,
                Some(n.layer_ref()),
                ErrorKind::DuplicateLayerId {
                    id: id.to_string(),
                    first_line: nodes[first].pos.line,
                },
            );
        } else {
            by_id.insert(id, i);
        }
    }

    for i in shadowed {
        nodes[i].shadowed = true;
    }

    // Edges.
    let edges: Vec<Result<At<crate::ir::Edge>, Error>> = (0..doc.edge_spans.len())
        .into_par_iter()
        .map(|i| doc.edge(i))
        .collect();
    for (i, edge) in edges.into_iter().enumerate() {
        match edge {
            Ok(edge) => bind_edge(&edge, &by_id, &mut nodes, &mut errs),
            Err(e) => errs.list.push((doc.edge_spans[i].start, e)),
        }
    }

    // Every input of a well-formed layer must be fed.
    for n in &nodes {
        if n.broken || n.bad_arity || n.shadowed || n.op.is_none() {
            continue;
        }
        for (index, p) in n.inputs.iter().enumerate() {
            let ambiguous = n.inputs.iter().filter(|q| q.id == p.id).count() > 1;
            if p.source.is_none() && !p.claimed && !ambiguous {
                let at = source
                    .locate(0, Some(n.layer_ref()))
                    .with_port(n.port_ref(PortDir::Input, index));
                let at = Location {
                    pos: Some(p.pos),
                    ..at
                };
                errs.at_loc(n.offset, at, ErrorKind::MissingInput);
            }
        }
    }

    let outputs: Vec<usize> = (0..nodes.len())
        .filter(|&i| matches!(nodes[i].role(), Some(Role::Output)))
        .collect();
    let inputs: Vec<usize> = (0..nodes.len())
        .filter(|&i| matches!(nodes[i].role(), Some(Role::Input(_))))
        .collect();
    if outputs.is_empty() && doc.layers_section.is_some() {
        errs.at(doc.net_offset, None, ErrorKind::NoResult);
    }

    check_weights(&nodes, &weights_path, weights.as_ref(), &mut errs);

    let order = topological_order(&nodes, &mut errs);

    if !errs.list.is_empty() {
        let mut list = errs.list;
        list.sort_by_key(|(offset, _)| *offset);
        return Err(Error::from_list(list.into_iter().map(|(_, e)| e).collect()));
    }

    let (dead, unused_inputs) = dead_nodes(&nodes, &outputs);
    for i in 0..nodes.len() {
        for j in 0..nodes[i].inputs.len() {
            if let Some((src, _)) = nodes[i].inputs[j].source {
                nodes[src.node].outputs[src.port].consumers.push((i, j));
            }
        }
    }
    // In place, like the list above.
    let nodes = nodes
        .into_iter()
        .map(finish_node)
        .collect::<Option<Vec<Node>>>()
        .ok_or_else(|| {
            Error::at(
                ErrorKind::Structure {
                    element: "net",
                    message: "internal error: a layer was left incomplete without an error".into(),
                },
                Location::file(&source.file),
            )
        })?;

    let opaque = (0..nodes.len())
        .filter(|&i| matches!(nodes[i].op.role(), Role::Opaque(_)))
        .collect();
    Ok(Graph {
        file: source.file.clone(),
        version,
        name: doc.net.name.clone(),
        nodes,
        opaque,
        order,
        inputs,
        outputs,
        dead,
        unused_inputs,
        weights: weights.map(Arc::new),
        weights_path,
        rt_info: doc.rt_info.clone(),
    })
}

/// A layer type as nodes keep it: the opset table's static spelling when it is the file's
/// (no allocation per layer; `resolved` saves a second search), else the file's.
fn type_name(ty: &str, resolved: Option<&Resolved>) -> Cow<'static, str> {
    let known = match resolved {
        Some(Resolved::Op(d)) if d.name == ty => Some(d.name),
        Some(Resolved::Unimplemented { name, .. }) if *name == ty => Some(*name),
        _ => ops::static_name(ty),
    };
    match known {
        Some(name) => Cow::Borrowed(name),
        None => Cow::Owned(ty.to_owned()),
    }
}

fn pending_layer(item: &LayerItem, broken: bool, errs: &mut Errors) -> Pending {
    let layer = &item.layer;
    let source = errs.source;
    let mut n = Pending {
        id: None,
        name: layer.name.as_deref().unwrap_or("").to_owned(),
        ty: Cow::Borrowed("?"),
        op: None,
        offset: item.offset,
        pos: source.pos(item.offset),
        broken,
        bad_arity: false,
        shadowed: false,
        inputs: Vec::new(),
        outputs: Vec::new(),
        output_names: Vec::new(),
    };
    let missing = |name: &str| ErrorKind::MissingAttribute {
        element: "layer",
        name: name.to_owned(),
    };
    match layer.id.as_deref() {
        None => errs.at(item.offset, Some(n.layer_ref()), missing("id")),
        Some(text) => match ops::parse_u64(text) {
            Ok(id) => n.id = Some(id),
            Err(reason) => errs.at(
                item.offset,
                Some(n.layer_ref()),
                ErrorKind::InvalidAttribute {
                    element: "layer",
                    name: "id".into(),
                    value: text.to_owned(),
                    reason,
                },
            ),
        },
    }
    if broken {
        return n;
    }
    if layer.name.is_none() {
        errs.at(item.offset, Some(n.layer_ref()), missing("name"));
    }
    match (layer.ty.as_deref(), layer.version.as_deref()) {
        (None, _) => errs.at(item.offset, Some(n.layer_ref()), missing("type")),
        (Some(ty), None) => {
            n.ty = type_name(ty, None);
            errs.at(item.offset, Some(n.layer_ref()), missing("version"));
        }
        (Some(ty), Some(version)) => {
            let resolved = ops::resolve(ty, version);
            n.ty = type_name(ty, Some(&resolved));
            let opaque = |op| -> Box<dyn Op> {
                Box::new(ops::opaque::Opaque {
                    ty: ty.to_owned(),
                    version: version.to_owned(),
                    op,
                })
            };
            let error = match resolved {
                Resolved::Op(def) => match (def.parse)(&Attrs::new(layer.data.as_ref())) {
                    Ok(op) => {
                        n.op = Some(op);
                        None
                    }
                    Err(list) => {
                        for e in list {
                            let kind = match e.value {
                                None => ErrorKind::MissingAttribute {
                                    element: "data",
                                    name: e.name,
                                },
                                Some(value) => ErrorKind::InvalidAttribute {
                                    element: "data",
                                    name: e.name,
                                    value,
                                    reason: e.reason,
                                },
                            };
                            errs.at(item.offset, Some(n.layer_ref()), kind);
                        }
                        None
                    }
                },
                Resolved::Unimplemented { name, version: v } => {
                    n.op = Some(opaque(Some((name, v))));
                    None
                }
                Resolved::Custom => {
                    n.op = Some(opaque(None));
                    None
                }
                Resolved::NoSuchOpset => Some(ErrorKind::NoSuchOpset {
                    version: version.to_owned(),
                    max: ops::MAX_OPSET,
                }),
                Resolved::NotInOpset {
                    known: Some((name, first, last)),
                } => Some(ErrorKind::UnsupportedOpset {
                    ty: name,
                    version: version.to_owned(),
                    first,
                    last,
                }),
                Resolved::NotInOpset { known: None } => Some(ErrorKind::UnsupportedOp {
                    ty: ty.to_owned(),
                    version: version.to_owned(),
                }),
            };
            if let Some(kind) = error {
                errs.at(item.offset, Some(n.layer_ref()), kind);
            }
        }
    }
    if let Some(names) = layer.output_names.as_deref() {
        n.output_names = split_names(names);
    }

    // Ports.
    let no_ports = Vec::new();
    let in_list = layer.input.as_ref().map_or(&no_ports, |l| &l.port);
    let out_list = layer.output.as_ref().map_or(&no_ports, |l| &l.port);
    for (dir, list) in [(PortDir::Input, in_list), (PortDir::Output, out_list)] {
        for (index, port) in list.iter().enumerate() {
            let offset = port.offset;
            let p = pending_port(port, dir, index, offset, &n, errs);
            match dir {
                PortDir::Input => n.inputs.push(p),
                PortDir::Output => n.outputs.push(p),
            }
        }
        // Port ids must be unique within a list, or edges are ambiguous.
        let ports = n.ports(dir);
        for (index, p) in ports.iter().enumerate() {
            if let Some(id) = p.id
                && ports[..index].iter().any(|q| q.id == Some(id))
            {
                let at = Location {
                    pos: Some(p.pos),
                    ..source.locate(0, Some(n.layer_ref()))
                }
                .with_port(n.port_ref(dir, index));
                errs.at_loc(
                    item.offset,
                    at,
                    ErrorKind::DuplicatePortId {
                        dir,
                        id: id.to_string(),
                    },
                );
            }
        }
    }
    if let Some(op) = &n.op {
        let (ins, outs) = op.arity();
        for (dir, expected, found) in [
            (PortDir::Input, ins, n.inputs.len()),
            (PortDir::Output, outs, n.outputs.len()),
        ] {
            if !expected.contains(found) {
                n.bad_arity = true;
                errs.at(
                    item.offset,
                    Some(n.layer_ref()),
                    ErrorKind::PortCount {
                        op: op.name().to_owned(),
                        dir,
                        expected: expected.to_string(),
                        found,
                    },
                );
            }
        }
    }
    n
}

fn pending_port(
    port: &Port,
    dir: PortDir,
    index: usize,
    offset: usize,
    n: &Pending,
    errs: &mut Errors,
) -> PendingPort {
    let source = errs.source;
    let pos = source.pos(offset);
    let at = || {
        Location {
            pos: Some(pos),
            ..source.locate(0, Some(n.layer_ref()))
        }
        .with_port(PortRef {
            dir,
            index,
            id: port.id.as_deref().unwrap_or("?").to_owned(),
        })
    };
    let invalid = |name: &str, value: &str, reason: String| ErrorKind::InvalidAttribute {
        element: "port",
        name: name.to_owned(),
        value: value.to_owned(),
        reason,
    };
    let mut p = PendingPort {
        id: None,
        precision: None,
        dims: Vec::with_capacity(port.dim.len()),
        pos,
        names: Vec::new(),
        source: None,
        claimed: false,
        consumers: Vec::new(),
    };
    match port.id.as_deref() {
        None => errs.at_loc(
            offset,
            at(),
            ErrorKind::MissingAttribute {
                element: "port",
                name: "id".into(),
            },
        ),
        Some(text) => match ops::parse_u64(text) {
            Ok(id) => p.id = Some(id),
            Err(reason) => errs.at_loc(offset, at(), invalid("id", text, reason)),
        },
    }
    match port.precision.as_deref() {
        None if dir == PortDir::Output => errs.at_loc(
            offset,
            at(),
            ErrorKind::MissingAttribute {
                element: "port",
                name: "precision".into(),
            },
        ),
        None => {}
        Some(text) => match ElementType::parse_precision(text) {
            Some(t) => p.precision = Some(t),
            None => errs.at_loc(
                offset,
                at(),
                invalid(
                    "precision",
                    text,
                    "not an element type or legacy precision name (FP32, I64, BOOL, ...)".into(),
                ),
            ),
        },
    }
    for text in &port.dim {
        match parse_port_dim(text) {
            Ok(d) => p.dims.push(d),
            Err(reason) => errs.at_loc(
                offset,
                at(),
                ErrorKind::InvalidDim {
                    value: text.to_string(),
                    reason: reason.to_owned(),
                },
            ),
        }
    }
    if dir == PortDir::Output
        && let Some(names) = port.names.as_deref()
    {
        p.names = split_names(names);
    }
    p
}

/// A port `<dim>`: a non-negative integer, or -1 for a dynamic dimension.
fn parse_port_dim(text: &str) -> Result<Option<u64>, &'static str> {
    let t = text.trim();
    if t == "-1" {
        return Ok(None);
    }
    if t.is_empty() {
        return Err("a dimension is empty");
    }
    if t.starts_with('-') {
        return Err("a dimension must be a non-negative integer or -1 (dynamic)");
    }
    if !t.bytes().all(|b| b.is_ascii_digit()) {
        return Err("port dims are integers; write -1 for a dynamic dimension");
    }
    match t.parse::<u64>() {
        Ok(v) if v <= MAX_DIM => Ok(Some(v)),
        _ => Err("the dimension is too large (the limit is 2^63-1)"),
    }
}

fn bind_edge(
    edge: &At<crate::ir::Edge>,
    by_id: &IdIndex,
    nodes: &mut [Pending],
    errs: &mut Errors,
) {
    let e = &edge.value;
    let mut fields = [None; 4];
    let mut ok = true;
    for (slot, (name, value)) in fields.iter_mut().zip([
        ("from-layer", &e.from_layer),
        ("from-port", &e.from_port),
        ("to-layer", &e.to_layer),
        ("to-port", &e.to_port),
    ]) {
        match value.as_deref() {
            None => {
                ok = false;
                errs.at(
                    edge.offset,
                    None,
                    ErrorKind::MissingAttribute {
                        element: "edge",
                        name: name.to_owned(),
                    },
                );
            }
            Some(text) => match ops::parse_u64(text) {
                Ok(v) => *slot = Some(v),
                Err(reason) => {
                    ok = false;
                    errs.at(
                        edge.offset,
                        None,
                        ErrorKind::InvalidAttribute {
                            element: "edge",
                            name: name.to_owned(),
                            value: text.to_owned(),
                            reason,
                        },
                    );
                }
            },
        }
    }
    let [
        Some(from_layer),
        Some(from_port),
        Some(to_layer),
        Some(to_port),
    ] = fields
    else {
        // The edge is reported; do not report the input it meant to feed as missing too.
        if let [_, _, Some(to_layer), Some(to_port)] = fields
            && let Some(to) = by_id.get(to_layer)
            && let Some(p) = nodes[to].inputs.iter_mut().find(|p| p.id == Some(to_port))
        {
            p.claimed = true;
        }
        return;
    };
    if !ok {
        return;
    }
    let from = by_id.get(from_layer);
    let to = by_id.get(to_layer);
    let target_ref = to.map(|t| nodes[t].layer_ref());
    if from.is_none() {
        errs.at(
            edge.offset,
            target_ref.clone(),
            ErrorKind::UnknownLayer {
                end: "from-layer",
                id: from_layer.to_string(),
            },
        );
    }
    if to.is_none() {
        errs.at(
            edge.offset,
            from.map(|f| nodes[f].layer_ref()),
            ErrorKind::UnknownLayer {
                end: "to-layer",
                id: to_layer.to_string(),
            },
        );
    }
    let find = |node: &Pending, dir: PortDir, id: u64| {
        node.ports(dir).iter().position(|p| p.id == Some(id))
    };
    let (Some(from), Some(to)) = (from, to) else {
        if let Some(to) = to
            && let Some(i) = find(&nodes[to], PortDir::Input, to_port)
        {
            nodes[to].inputs[i].claimed = true;
        }
        return;
    };
    let unknown = |node: &Pending, dir: PortDir, id: u64| ErrorKind::UnknownPort {
        dir,
        id: id.to_string(),
        layer: node.layer_ref(),
        available: node
            .ports(dir)
            .iter()
            .filter_map(|p| p.id.map(|i| i.to_string()))
            .collect(),
    };
    let in_index = if nodes[to].broken {
        None
    } else {
        let found = find(&nodes[to], PortDir::Input, to_port);
        if found.is_none() {
            errs.at(
                edge.offset,
                target_ref.clone(),
                unknown(&nodes[to], PortDir::Input, to_port),
            );
        }
        found
    };
    let out_index = if nodes[from].broken {
        None
    } else {
        let found = find(&nodes[from], PortDir::Output, from_port);
        if found.is_none() {
            errs.at(
                edge.offset,
                target_ref.clone(),
                unknown(&nodes[from], PortDir::Output, from_port),
            );
        }
        found
    };
    if let (None, Some(i)) = (out_index, in_index) {
        nodes[to].inputs[i].claimed = true;
    }
    let (Some(out_index), Some(in_index)) = (out_index, in_index) else {
        return;
    };
    let describe = |node: &Pending, port: usize, edge_offset: usize| {
        format!(
            "{}, output port id {} (edge at line {})",
            node.layer_ref(),
            node.outputs[port].id.unwrap_or_default(),
            errs.source.pos(edge_offset).line
        )
    };
    if let Some((first, first_edge)) = nodes[to].inputs[in_index].source {
        let kind = ErrorKind::InputFedTwice {
            first: describe(&nodes[first.node], first.port, first_edge),
            second: describe(&nodes[from], out_index, edge.offset),
        };
        let at = errs
            .source
            .locate(edge.offset, target_ref)
            .with_port(nodes[to].port_ref(PortDir::Input, in_index));
        errs.at_loc(edge.offset, at, kind);
        return;
    }
    nodes[to].inputs[in_index].source = Some((
        Src {
            node: from,
            port: out_index,
        },
        edge.offset,
    ));
}

/// Const data must lie in the weights file and be large enough for the Const's shape.
fn check_weights(
    nodes: &[Pending],
    weights_path: &Arc<Path>,
    weights: Option<&Weights>,
    errs: &mut Errors,
) {
    let mut missing: Option<(usize, usize)> = None; // (first node, count)
    for (i, n) in nodes.iter().enumerate() {
        let Some(Role::Constant(c)) = n.role() else {
            continue;
        };
        match c.elements().map(|e| (e, c.element_type.storage_bytes(e))) {
            None => errs.at(
                n.offset,
                Some(n.layer_ref()),
                ErrorKind::ConstTooLarge {
                    shape: crate::shape::PartialShape::fixed(&c.shape).to_string(),
                },
            ),
            Some((elements, Some(needed))) if c.size < needed => errs.at(
                n.offset,
                Some(n.layer_ref()),
                ErrorKind::WeightsTooSmall {
                    size: c.size,
                    elements,
                    element_type: c.element_type,
                    needed,
                },
            ),
            Some((_, None)) if c.element_type != ElementType::String => errs.at(
                n.offset,
                Some(n.layer_ref()),
                ErrorKind::ConstTooLarge {
                    shape: crate::shape::PartialShape::fixed(&c.shape).to_string(),
                },
            ),
            _ => {}
        }
        if c.size == 0 {
            continue;
        }
        match weights {
            None => {
                let m = missing.get_or_insert((i, 0));
                m.1 += 1;
            }
            Some(w) => {
                let end = u128::from(c.offset) + u128::from(c.size);
                if end > u128::from(w.len()) {
                    errs.at(
                        n.offset,
                        Some(n.layer_ref()),
                        ErrorKind::WeightsOutOfRange {
                            path: w.path().clone(),
                            offset: c.offset,
                            size: c.size,
                            end,
                            file_len: w.len(),
                        },
                    );
                }
            }
        }
    }
    if let Some((first, count)) = missing {
        let n = &nodes[first];
        errs.at(
            n.offset,
            Some(n.layer_ref()),
            ErrorKind::WeightsMissing {
                path: weights_path.clone(),
                count,
            },
        );
    }
}

/// Kahn's algorithm, taking ready nodes in XML order. Reports every cycle once.
fn topological_order(nodes: &[Pending], errs: &mut Errors) -> Vec<usize> {
    let n = nodes.len();
    let mut indegree = vec![0usize; n];
    let mut users: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (i, node) in nodes.iter().enumerate() {
        for p in &node.inputs {
            if let Some((src, _)) = p.source {
                indegree[i] += 1;
                users[src.node].push(i);
            }
        }
    }
    let mut ready: BinaryHeap<Reverse<usize>> =
        (0..n).filter(|&i| indegree[i] == 0).map(Reverse).collect();
    let mut order = Vec::with_capacity(n);
    while let Some(Reverse(i)) = ready.pop() {
        order.push(i);
        for &u in &users[i] {
            indegree[u] -= 1;
            if indegree[u] == 0 {
                ready.push(Reverse(u));
            }
        }
    }
    if order.len() < n {
        // Every node left has a predecessor that is also left, so walking back through
        // sources always ends on a cycle.
        let mut walked = vec![0usize; n]; // 0 = not yet, else the walk number
        let mut walk = 0;
        for start in 0..n {
            if indegree[start] == 0 || walked[start] != 0 {
                continue;
            }
            walk += 1;
            let mut path = Vec::new();
            let mut cur = start;
            loop {
                if walked[cur] == walk {
                    let from = path.iter().position(|&p| p == cur).unwrap_or(0);
                    let mut cycle: Vec<usize> = path[from..].to_vec();
                    cycle.reverse(); // data flows along the reversed walk
                    let first = cycle
                        .iter()
                        .enumerate()
                        .min_by_key(|(_, i)| **i)
                        .map_or(0, |(k, _)| k);
                    cycle.rotate_left(first);
                    let head = cycle[0];
                    errs.at(
                        nodes[head].offset,
                        Some(nodes[head].layer_ref()),
                        ErrorKind::Cycle {
                            cycle: cycle
                                .iter()
                                .chain(std::iter::once(&head))
                                .map(|&i| nodes[i].layer_ref())
                                .collect(),
                        },
                    );
                    break;
                }
                if walked[cur] != 0 {
                    break;
                }
                walked[cur] = walk;
                path.push(cur);
                let next = nodes[cur]
                    .inputs
                    .iter()
                    .filter_map(|p| p.source.map(|(s, _)| s.node))
                    .find(|&s| indegree[s] > 0);
                match next {
                    Some(s) => cur = s,
                    None => break,
                }
            }
        }
    }
    order
}

/// Nodes from which no Result can be reached: (non-Parameters, Parameters).
fn dead_nodes(nodes: &[Pending], outputs: &[usize]) -> (Vec<usize>, Vec<usize>) {
    let mut live = vec![false; nodes.len()];
    let mut stack: Vec<usize> = outputs.to_vec();
    while let Some(i) = stack.pop() {
        if std::mem::replace(&mut live[i], true) {
            continue;
        }
        stack.extend(
            nodes[i]
                .inputs
                .iter()
                .filter_map(|p| p.source.map(|(s, _)| s.node)),
        );
    }
    (0..nodes.len())
        .filter(|&i| !live[i])
        .partition(|&i| !matches!(nodes[i].role(), Some(Role::Input(_))))
}

fn finish_port(p: PendingPort) -> Option<PortDecl> {
    Some(PortDecl {
        id: p.id?,
        precision: p.precision,
        dims: p.dims,
        pos: p.pos,
    })
}

fn finish_node(n: Pending) -> Option<Node> {
    let inputs = n
        .inputs
        .into_iter()
        .map(|p| {
            let source = p.source?.0;
            Some(InputPort {
                decl: finish_port(p)?,
                source,
            })
        })
        .collect::<Option<Vec<_>>>()?;
    let outputs = n
        .outputs
        .into_iter()
        .map(|mut p| {
            let names = std::mem::take(&mut p.names);
            let consumers = std::mem::take(&mut p.consumers);
            Some(OutputPort {
                decl: finish_port(p)?,
                names,
                consumers,
            })
        })
        .collect::<Option<Vec<_>>>()?;
    Some(Node {
        id: n.id?,
        name: n.name,
        op: n.op?,
        pos: n.pos,
        inputs,
        outputs,
        output_names: n.output_names,
    })
}
