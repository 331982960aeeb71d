//! Stage 3: element types and shapes of every port, inferred in topological order, and every
//! declared `<dim>` and `precision` compared with them. Every finding is collected.

use crate::broadcast::AutoBroadcast;
use crate::dtype::ElementType;
use crate::error::{Diagnostic, Error, ErrorKind, PortDir};
use crate::graph::{Graph, PortDecl};
use crate::ops::Op;
use crate::shape::PartialShape;

/// The type of a value flowing along an edge.
#[derive(Clone, Debug, PartialEq)]
pub struct TensorType {
    pub element_type: ElementType,
    pub shape: PartialShape,
}

/// Inferred types of every output port (`None` where an error upstream left it unknown).
#[derive(Debug, Default)]
pub struct Inferred {
    pub outputs: Vec<Vec<Option<TensorType>>>,
}

impl Inferred {
    /// The inferred type of model output `i` (the value its Result consumes).
    pub fn output(&self, g: &Graph, i: usize) -> Option<&TensorType> {
        let src = g.output_source(i);
        self.outputs.get(src.node)?.get(src.port)?.as_ref()
    }
}

/// Element types ovir's kernels run (Subtract, Divide, Convert).
pub fn runnable(t: ElementType) -> bool {
    use ElementType::*;
    matches!(
        t,
        F16 | Bf16 | F32 | F64 | I8 | I16 | I32 | I64 | U8 | U16 | U32 | U64
    )
}

/// Infers every port's type. `overrides` specialise inputs: (input index, shape), e.g. from
/// `--shape`. Returns the types and every finding (errors and warnings), in graph order.
pub fn infer(
    g: &Graph,
    overrides: &[(usize, String, PartialShape)],
) -> (Inferred, Vec<Diagnostic>) {
    let mut out = Inferred {
        outputs: g
            .nodes
            .iter()
            .map(|n| vec![None; n.outputs.len()])
            .collect(),
    };
    let mut found = Vec::new();
    let err = |g: &Graph, node: usize, port: Option<(PortDir, usize)>, kind: ErrorKind| {
        let at = g.locate(node, port);
        let e = Error::at(kind, at);
        if e.kind().is_warning() {
            Diagnostic::warning(e)
        } else {
            Diagnostic::error(e)
        }
    };

    for &i in &g.order {
        let node = &g.nodes[i];
        let input = |j: usize| -> Option<&TensorType> {
            let src = node.inputs.get(j)?.source;
            out.outputs[src.node][src.port].as_ref()
        };
        let result: Option<TensorType> = match &node.op {
            Op::Parameter(p) => {
                let mut shape = p.shape.clone();
                let pos = g.inputs.iter().position(|&n| n == i);
                if let Some((_, name, given)) = overrides.iter().find(|(k, _, _)| Some(*k) == pos) {
                    match crate::broadcast::merge(&p.shape, given) {
                        Ok(s) if s.rank() == given.rank() || p.shape.rank().is_none() => shape = s,
                        _ => found.push(err(
                            g,
                            i,
                            None,
                            ErrorKind::ShapeOverride {
                                name: name.clone(),
                                given: given.to_string(),
                                declared: p.shape.to_string(),
                            },
                        )),
                    }
                }
                Some(TensorType {
                    element_type: p.element_type,
                    shape,
                })
            }
            Op::Const(c) => Some(TensorType {
                element_type: c.element_type,
                shape: PartialShape::fixed(&c.shape),
            }),
            Op::Convert(c) => input(0).map(|t| {
                for ty in [t.element_type, c.destination_type] {
                    if ty != ElementType::Boolean && ty != ElementType::Dynamic && !runnable(ty) {
                        found.push(err(
                            g,
                            i,
                            None,
                            ErrorKind::CannotRunType { op: "Convert", ty },
                        ));
                    }
                }
                TensorType {
                    element_type: c.destination_type,
                    shape: t.shape.clone(),
                }
            }),
            Op::Result(_) => None,
            Op::Subtract(s) => input(0).zip(input(1)).and_then(|(a, b)| {
                binary(g, i, "Subtract", s.auto_broadcast, a, b, &mut found, &err)
            }),
            Op::Divide(d) => input(0).zip(input(1)).and_then(|(a, b)| {
                binary(g, i, "Divide", d.auto_broadcast, a, b, &mut found, &err)
            }),
        };
        if let (Some(t), Some(slot)) = (result, out.outputs[i].first_mut()) {
            *slot = Some(t);
        }
    }

    // Declared port dims and precisions against the inferred types.
    for (i, node) in g.nodes.iter().enumerate() {
        for (j, p) in node.inputs.iter().enumerate() {
            if let Some(t) = out.outputs[p.source.node][p.source.port].as_ref() {
                compare_declared(g, i, (PortDir::Input, j), &p.decl, t, &mut found, &err);
            }
        }
        for (k, p) in node.outputs.iter().enumerate() {
            if let Some(t) = out.outputs[i][k].as_ref() {
                compare_declared(g, i, (PortDir::Output, k), &p.decl, t, &mut found, &err);
            }
        }
    }

    for &i in &g.dead {
        found.push(err(g, i, None, ErrorKind::DeadLayer));
    }
    for &i in &g.unused_inputs {
        found.push(err(g, i, None, ErrorKind::UnusedInput));
    }
    (out, found)
}

type MakeFinding = dyn Fn(&Graph, usize, Option<(PortDir, usize)>, ErrorKind) -> Diagnostic;

#[allow(clippy::too_many_arguments)]
fn binary(
    g: &Graph,
    i: usize,
    op: &'static str,
    spec: AutoBroadcast,
    a: &TensorType,
    b: &TensorType,
    found: &mut Vec<Diagnostic>,
    err: &MakeFinding,
) -> Option<TensorType> {
    let ty = match (a.element_type, b.element_type) {
        (x, y) if x == y => x,
        (ElementType::Dynamic, y) => y,
        (x, ElementType::Dynamic) => x,
        (x, y) => {
            found.push(err(
                g,
                i,
                None,
                ErrorKind::ElementTypeMismatch { a: x, b: y },
            ));
            return None;
        }
    };
    match ty {
        ElementType::Boolean | ElementType::String => {
            found.push(err(
                g,
                i,
                None,
                ErrorKind::UnsupportedElementType { op, ty },
            ));
            return None;
        }
        ElementType::Dynamic => {}
        t if !runnable(t) => found.push(err(g, i, None, ErrorKind::CannotRunType { op, ty: t })),
        _ => {}
    }
    if let AutoBroadcast::Pdpd {
        axis_given: false, ..
    } = spec
    {
        let consequence = match (a.shape.rank(), b.shape.rank()) {
            (Some(ra), Some(rb)) if ra == rb => {
                "both readings give the same result here".to_owned()
            }
            (Some(ra), Some(rb)) => match crate::broadcast::pdpd(&a.shape, &b.shape, 0) {
                Ok(_) => format!(
                    "the readings differ here: OpenVINO aligns B at axis 0, ovir at axis {}",
                    ra.saturating_sub(rb)
                ),
                Err(_) => "OpenVINO would reject this model (B does not fit at axis 0)".to_owned(),
            },
            _ => "the readings may differ (a rank is dynamic)".to_owned(),
        };
        found.push(err(g, i, None, ErrorKind::PdpdAxisMissing { consequence }));
    }
    match spec.infer(&a.shape, &b.shape) {
        Ok(shape) => Some(TensorType {
            element_type: ty,
            shape,
        }),
        Err(e) => {
            let mode = match spec {
                AutoBroadcast::None => "none".to_owned(),
                AutoBroadcast::Numpy => "numpy".to_owned(),
                AutoBroadcast::Pdpd { axis, .. } => format!("pdpd (axis {axis})"),
            };
            let reason = match e.axis {
                Some(ax) => format!("at output axis {ax}, {}", e.reason),
                None => e.reason,
            };
            found.push(err(
                g,
                i,
                None,
                ErrorKind::IncompatibleShapes {
                    mode,
                    a: a.shape.to_string(),
                    b: b.shape.to_string(),
                    axis: e.axis,
                    reason,
                },
            ));
            None
        }
    }
}

fn show_declared(dims: &[Option<u64>]) -> String {
    let parts: Vec<String> = dims
        .iter()
        .map(|d| d.map_or_else(|| "-1".to_owned(), |v| v.to_string()))
        .collect();
    format!("[{}]", parts.join(","))
}

#[allow(clippy::too_many_arguments)]
fn compare_declared(
    g: &Graph,
    node: usize,
    port: (PortDir, usize),
    decl: &PortDecl,
    t: &TensorType,
    found: &mut Vec<Diagnostic>,
    err: &MakeFinding,
) {
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
