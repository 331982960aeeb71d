//! Stage 1: XML text → [`IrDocument`]. Structure only, no meaning: values stay as written.
//!
//! [`scan`] finds the span of every `<layer>` and `<edge>`; each span is then deserialized with
//! serde ([`document`]) in parallel, so every item carries its byte offset and every serde error
//! its position ([`source`] turns offsets into line:col).

pub mod document;
pub mod scan;
pub mod source;

use std::path::Path;
use std::sync::Arc;

use quick_xml::events::Event;
use rayon::prelude::*;

pub use document::{Data, Edge, Layer, LayerHead, NetAttrs, Port, PortList};
pub use source::{LineIndex, Source};

use crate::error::{Error, ErrorKind, LayerRef};

/// An item of the document and the byte offset of its start tag.
#[derive(Debug)]
pub struct At<T> {
    /// Byte offset of the element's start tag.
    pub offset: usize,
    /// Byte offset just after the element's end.
    pub end: usize,
    pub value: T,
    /// The element did not deserialize (an error was recorded); only its start tag's
    /// attributes are known.
    pub broken: bool,
}

/// A parsed IR document.
#[derive(Debug)]
pub struct IrDocument<'a> {
    pub source: Source<'a>,
    pub net: NetAttrs,
    pub net_offset: usize,
    pub layers_section: Option<usize>,
    pub edges_section: Option<usize>,
    pub layers: Vec<At<Layer<'a>>>,
    pub edges: Vec<At<Edge<'a>>>,
    /// The net-level `<rt_info>` flattened to `(key, value)` pairs (`a.b` for nested entries;
    /// `<info name="k" value="v"/>` gives `k`).
    pub rt_info: Vec<(String, String)>,
    /// Errors in single layers or edges, with the byte offsets they occurred at; the rest of
    /// the document is still usable.
    pub errors: Vec<(usize, Error)>,
}

/// Parses the XML text of an IR file. Structural XML errors are fatal; errors inside single
/// layers or edges are collected in [`IrDocument::errors`].
pub fn parse(file: Arc<Path>, text: &str) -> Result<IrDocument<'_>, Error> {
    let source = Source::new(file, text);
    let sk = scan::scan(text).map_err(|e| {
        let kind = match e.kind {
            scan::ScanErrorKind::Malformed { message, opened_at } => ErrorKind::Xml {
                message: match opened_at {
                    Some(o) => {
                        let p = source.pos(o);
                        format!("{message} (opened at line {}, column {})", p.line, p.col)
                    }
                    None => message,
                },
            },
            scan::ScanErrorKind::NotNet(found) => ErrorKind::NotAnIr { found },
        };
        Error::at(kind, source.locate(e.offset, None))
    })?;

    let net_tag = &text[sk.net_tag.start..sk.net_tag.end];
    let net: NetAttrs = de_start_tag(net_tag).map_err(|message| {
        Error::at(
            ErrorKind::Structure {
                element: "net",
                message,
            },
            source.locate(sk.net_tag.start, None),
        )
    })?;

    let mut errors = Vec::new();
    if let Some((name, first, second)) = sk.duplicate_section {
        errors.push((
            second,
            Error::at(
                ErrorKind::DuplicateSection {
                    name: name.to_owned(),
                    first_line: source.pos(first).line,
                },
                source.locate(second, None),
            ),
        ));
    }

    let layers: Vec<(At<Layer>, Option<Error>)> = sk
        .layers
        .par_iter()
        .map(|span| {
            let xml = &text[span.start..span.end];
            match quick_xml::de::from_str::<Layer>(xml) {
                Ok(value) => (
                    At {
                        offset: span.start,
                        end: span.end,
                        value,
                        broken: false,
                    },
                    None,
                ),
                Err(e) => {
                    // Keep what the start tag says (id, name, type) so that edges to this layer
                    // still resolve and the error names the layer.
                    let head = start_tag(xml)
                        .and_then(|t| de_start_tag::<LayerHead>(t).ok())
                        .unwrap_or_default();
                    let layer = LayerRef {
                        id: head.id.clone().unwrap_or_else(|| "?".into()),
                        name: head.name.clone().unwrap_or_default(),
                        ty: head.ty.clone().unwrap_or_else(|| "?".into()),
                    };
                    let err = Error::at(
                        ErrorKind::Structure {
                            element: "layer",
                            message: e.to_string(),
                        },
                        source.locate(span.start, Some(layer)),
                    );
                    (
                        At {
                            offset: span.start,
                            end: span.end,
                            value: head.into_layer(),
                            broken: true,
                        },
                        Some(err),
                    )
                }
            }
        })
        .collect();
    let mut layer_items = Vec::with_capacity(layers.len());
    for (item, err) in layers {
        if let Some(e) = err {
            errors.push((item.offset, e));
        }
        layer_items.push(item);
    }

    let edges: Vec<Result<At<Edge>, (usize, Error)>> = sk
        .edges
        .par_iter()
        .map(|span| {
            let xml = &text[span.start..span.end];
            quick_xml::de::from_str::<Edge>(xml)
                .map(|value| At {
                    offset: span.start,
                    end: span.end,
                    value,
                    broken: false,
                })
                .map_err(|e| {
                    let kind = ErrorKind::Structure {
                        element: "edge",
                        message: e.to_string(),
                    };
                    (span.start, Error::at(kind, source.locate(span.start, None)))
                })
        })
        .collect();
    let mut edge_items = Vec::with_capacity(edges.len());
    for e in edges {
        match e {
            Ok(item) => edge_items.push(item),
            Err(err) => errors.push(err),
        }
    }

    let rt_info = sk
        .rt_info
        .map(|s| flatten_rt_info(&text[s.start..s.end]))
        .unwrap_or_default();

    Ok(IrDocument {
        net,
        net_offset: sk.net_tag.start,
        layers_section: sk.layers_section,
        edges_section: sk.edges_section,
        layers: layer_items,
        edges: edge_items,
        rt_info,
        errors,
        source,
    })
}

/// The start tag at the beginning of an element's text.
fn start_tag(xml: &str) -> Option<&str> {
    let b = xml.as_bytes();
    let mut j = 0;
    loop {
        let k = memchr::memchr3(b'"', b'\'', b'>', &b[j..])? + j;
        if b[k] == b'>' {
            return Some(&xml[..=k]);
        }
        j = k + 1 + memchr::memchr(b[k], &b[k + 1..])? + 1;
    }
}

/// Deserializes the attributes of a start tag (`<x a="1">` or `<x a="1"/>`).
fn de_start_tag<T: serde::de::DeserializeOwned>(tag: &str) -> Result<T, String> {
    let result = if tag.ends_with("/>") {
        quick_xml::de::from_str(tag)
    } else {
        quick_xml::de::from_str(&format!("{}/>", &tag[..tag.len() - 1]))
    };
    result.map_err(|e| e.to_string())
}

/// Flattens the net-level `<rt_info>` into key/value pairs.
fn flatten_rt_info(xml: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut reader = quick_xml::Reader::from_str(xml);
    let mut path: Vec<String> = Vec::new();
    loop {
        let (e, empty) = match reader.read_event() {
            Ok(Event::Start(e)) => (e, false),
            Ok(Event::Empty(e)) => (e, true),
            Ok(Event::End(_)) => {
                path.pop();
                continue;
            }
            Ok(Event::Eof) | Err(_) => break,
            Ok(_) => continue,
        };
        let tag = e.name().as_ref().to_owned();
        let mut name = None;
        let mut value = None;
        for a in e.attributes().flatten() {
            let v = a
                .normalized_value(quick_xml::XmlVersion::Implicit1_0)
                .map(|v| v.into_owned())
                .unwrap_or_else(|_| a.value.to_string());
            match a.key.as_ref() {
                "name" => name = Some(v),
                "value" => value = Some(v),
                _ => {}
            }
        }
        let key = if tag == "info" {
            name.unwrap_or(tag)
        } else {
            tag
        };
        if !path.is_empty() || key != "rt_info" {
            if let Some(v) = value {
                let full = path
                    .iter()
                    .skip(1)
                    .chain(std::iter::once(&key))
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(".");
                out.push((full, v));
            }
        }
        if !empty {
            path.push(key);
        }
    }
    out
}
