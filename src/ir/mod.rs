//! Stage 1: XML text → [`IrDocument`]. Structure only, no meaning: values stay as written.
//!
//! [`scan`] finds the span of every `<layer>` and `<edge>`; each span is then read into the
//! [`document`] structs in parallel, so every item carries its byte offset and every error its
//! position ([`source`] turns offsets into line:col). The structs are serde structs and quick-xml's
//! deserializer is their reference reader; [`read`] is the fast reader loading uses, tested to
//! agree with serde.

pub mod document;
pub mod read;
pub mod scan;
pub mod source;

use std::path::Path;
use std::sync::Arc;

use quick_xml::events::Event;

pub use document::{Data, Edge, Layer, LayerHead, NetAttrs, Port, PortList};
pub use source::{LineIndex, Source};

use crate::error::{Error, ErrorKind, LayerRef};

/// An item of the document and the byte offset of its start tag.
#[derive(Debug)]
pub struct At<T> {
    /// Byte offset of the element's start tag.
    pub offset: usize,
    pub value: T,
}

/// A layer as read from its span.
#[derive(Debug)]
pub struct LayerItem<'a> {
    pub offset: usize,
    pub layer: Layer<'a>,
    /// The element could not be read (the error is given); only its start tag's attributes
    /// are known, so that edges to it still resolve and errors can name it.
    pub error: Option<Error>,
}

/// A parsed IR document.
#[derive(Debug)]
pub struct IrDocument<'a> {
    pub source: Source<'a>,
    pub net: NetAttrs,
    pub net_offset: usize,
    pub layers_section: Option<usize>,
    pub edges_section: Option<usize>,
    /// Every `<layer>` in `<layers>`, in document order; read one with [`IrDocument::layer`].
    pub layer_spans: Vec<scan::Span>,
    /// Every `<edge>` in `<edges>`, in document order; read one with [`IrDocument::edge`].
    pub edge_spans: Vec<scan::Span>,
    /// The net-level `<rt_info>` flattened to `(key, value)` pairs (`a.b` for nested entries;
    /// `<info name="k" value="v"/>` gives `k`).
    pub rt_info: Vec<(String, String)>,
    /// Errors found while scanning (with the byte offsets they occurred at); the rest of the
    /// document is still usable.
    pub errors: Vec<(usize, Error)>,
}

/// Layers are handed to the per-layer function in batches of this many.
const BATCH: usize = 512;

/// Parses the XML text of an IR file. Structural XML errors are fatal; errors inside single
/// layers or edges are collected in [`IrDocument::errors`] or reported when the layer is read.
pub fn parse(file: Arc<Path>, text: &str) -> Result<IrDocument<'_>, Error> {
    parse_with(file, text, |_, _| ()).map(|(doc, _)| doc)
}

/// [`parse`], and `per_layer` applied to every layer (in document order in the result). The
/// layers are read and handed over on other threads while the structural scan goes on, so
/// reading them costs almost no time beyond the scan.
pub fn parse_with<'a, T, F>(
    file: Arc<Path>,
    text: &'a str,
    per_layer: F,
) -> Result<(IrDocument<'a>, Vec<T>), Error>
where
    T: Send,
    F: Fn(&Source<'a>, LayerItem<'a>) -> T + Sync,
{
    let source = Source::with_lines(file, text, LineIndex::new_parallel(text));
    let batches: std::sync::Mutex<Vec<(usize, Vec<T>)>> = std::sync::Mutex::new(Vec::new());
    let sk = rayon::scope(|scope| {
        let (source, per_layer, batches) = (&source, &per_layer, &batches);
        let mut batch = Vec::with_capacity(BATCH);
        let mut index = 0;
        let mut flush = |batch: Vec<scan::Span>| {
            let k = index;
            index += 1;
            scope.spawn(move |_| {
                let out: Vec<T> = batch
                    .into_iter()
                    .map(|span| per_layer(source, source.read_layer(span)))
                    .collect();
                if let Ok(mut list) = batches.lock() {
                    list.push((k, out));
                }
            });
        };
        let sk = scan::scan_with(text, &mut |span| {
            batch.push(span);
            if batch.len() == BATCH {
                flush(std::mem::replace(&mut batch, Vec::with_capacity(BATCH)));
            }
        });
        if !batch.is_empty() {
            flush(batch);
        }
        sk
    });
    let mut batches = batches.into_inner().unwrap_or_else(|e| e.into_inner());
    batches.sort_by_key(|(k, _)| *k);
    let mut results: Vec<T> = Vec::with_capacity(batches.iter().map(|(_, b)| b.len()).sum());
    for (_, batch) in batches {
        results.extend(batch);
    }
    let sk = sk.map_err(|e| {
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

    let rt_info = sk
        .rt_info
        .map(|s| flatten_rt_info(&text[s.start..s.end]))
        .unwrap_or_default();

    let doc = IrDocument {
        net,
        net_offset: sk.net_tag.start,
        layers_section: sk.layers_section,
        edges_section: sk.edges_section,
        layer_spans: sk.layers,
        edge_spans: sk.edges,
        rt_info,
        errors,
        source,
    };
    Ok((doc, results))
}

impl<'a> IrDocument<'a> {
    /// Reads the `i`-th layer.
    pub fn layer(&self, i: usize) -> LayerItem<'a> {
        self.source.read_layer(self.layer_spans[i])
    }

    /// Reads the `i`-th edge.
    pub fn edge(&self, i: usize) -> Result<At<Edge<'a>>, Error> {
        let span = self.edge_spans[i];
        let text: &'a str = self.source.text;
        read::edge(&text[span.start..span.end])
            .map(|value| At {
                offset: span.start,
                value,
            })
            .map_err(|message| {
                let kind = ErrorKind::Structure {
                    element: "edge",
                    message,
                };
                Error::at(kind, self.source.locate(span.start, None))
            })
    }
}

impl<'a> Source<'a> {
    /// Reads the layer at `span`. A layer that cannot be read keeps what its start tag says.
    pub fn read_layer(&self, span: scan::Span) -> LayerItem<'a> {
        let text: &'a str = self.text;
        let xml = &text[span.start..span.end];
        match read::layer(xml, span.start) {
            Ok(layer) => LayerItem {
                offset: span.start,
                layer,
                error: None,
            },
            Err(message) => {
                let head = start_tag(xml)
                    .and_then(|t| de_start_tag::<LayerHead>(t).ok())
                    .unwrap_or_default();
                let layer = LayerRef {
                    id: head.id.clone().unwrap_or_else(|| "?".into()),
                    name: head.name.clone().unwrap_or_default(),
                    ty: head.ty.clone().unwrap_or_else(|| "?".into()),
                };
                let error = Error::at(
                    ErrorKind::Structure {
                        element: "layer",
                        message,
                    },
                    self.locate(span.start, Some(layer)),
                );
                LayerItem {
                    offset: span.start,
                    layer: head.into_layer(),
                    error: Some(error),
                }
            }
        }
    }
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
        if (!path.is_empty() || key != "rt_info")
            && let Some(v) = value
        {
            let full = path
                .iter()
                .skip(1)
                .chain(std::iter::once(&key))
                .cloned()
                .collect::<Vec<_>>()
                .join(".");
            out.push((full, v));
        }
        if !empty {
            path.push(key);
        }
    }
    out
}
