//! The fast path that fills the [`document`](super::document) structs from quick-xml events.
//!
//! quick-xml's serde deserializer is the schema and the reference for these structs (the test
//! `fast_reader_matches_serde` compares the two on every sample and on edge cases), but it
//! costs about four times as much as walking the events: on a 100k-layer IR that is the
//! difference between meeting the load-time target and missing it by 3×. So loading walks the
//! events of each layer and edge span directly and borrows every string from the file text.

use std::borrow::Cow;

use quick_xml::XmlVersion;
use quick_xml::events::attributes::Attribute;
use quick_xml::events::{BytesStart, Event};

use super::document::{Data, Edge, Layer, Port, PortList};

type Reader<'a> = quick_xml::Reader<&'a [u8]>;

/// Re-borrows `s` from `xml` when it is a slice of it, so the value lives as long as the text.
fn rebind<'a>(xml: &'a str, s: &str) -> Option<&'a str> {
    let start = (s.as_ptr() as usize).checked_sub(xml.as_ptr() as usize)?;
    xml.get(start..start.checked_add(s.len())?)
}

fn value<'a>(xml: &'a str, a: &Attribute<'_>) -> Result<Cow<'a, str>, String> {
    let v = a
        .normalized_value(XmlVersion::Implicit1_0)
        .map_err(|e| format!("attribute `{}`: {e}", a.key.as_ref()))?;
    Ok(match v {
        Cow::Borrowed(s) => rebind(xml, s).map_or_else(|| Cow::Owned(s.to_owned()), Cow::Borrowed),
        Cow::Owned(s) => Cow::Owned(s),
    })
}

/// Calls `f(key, value)` for every attribute of a start tag.
fn attrs<'a>(
    xml: &'a str,
    e: &BytesStart<'_>,
    mut f: impl FnMut(Cow<'a, str>, Cow<'a, str>),
) -> Result<(), String> {
    for a in e.attributes() {
        let a = a.map_err(|e| e.to_string())?;
        let v = value(xml, &a)?;
        let k = a.key.as_ref();
        f(
            rebind(xml, k).map_or_else(|| Cow::Owned(k.to_owned()), Cow::Borrowed),
            v,
        );
    }
    Ok(())
}

fn next<'a>(r: &mut Reader<'a>) -> Result<Event<'a>, String> {
    r.read_event().map_err(|e| e.to_string())
}

/// Skips the rest of an element whose start tag was just read.
fn skip(r: &mut Reader<'_>, e: &BytesStart<'_>) -> Result<(), String> {
    r.read_to_end(e.name())
        .map(|_| ())
        .map_err(|e| e.to_string())
}

/// Reads one `<layer>` element (the whole text of `xml`, which starts at byte `base` of the
/// file: port offsets are given in file bytes).
pub fn layer(xml: &str, base: usize) -> Result<Layer<'_>, String> {
    let mut r = Reader::from_str(xml);
    let mut layer = Layer {
        id: None,
        name: None,
        ty: None,
        version: None,
        output_names: None,
        data: None,
        input: None,
        output: None,
    };
    let empty = loop {
        match next(&mut r)? {
            Event::Start(e) => break (e, false),
            Event::Empty(e) => break (e, true),
            Event::Eof => return Err("no <layer> element".into()),
            _ => {}
        }
    };
    attrs(xml, &empty.0, |k, v| match &*k {
        "id" => layer.id = Some(v),
        "name" => layer.name = Some(v),
        "type" => layer.ty = Some(v),
        "version" => layer.version = Some(v),
        "output_names" => layer.output_names = Some(v),
        _ => {}
    })?;
    if empty.1 {
        return Ok(layer);
    }
    loop {
        let (e, is_empty) = match next(&mut r)? {
            Event::Start(e) => (e, false),
            Event::Empty(e) => (e, true),
            Event::End(_) | Event::Eof => return Ok(layer),
            _ => continue,
        };
        match e.name().as_ref() {
            "data" => {
                if layer.data.is_some() {
                    return Err("duplicate field `data`".into());
                }
                let mut pairs = Vec::new();
                attrs(xml, &e, |k, v| pairs.push((k, v)))?;
                if !is_empty {
                    skip(&mut r, &e)?;
                }
                layer.data = Some(Data::from_pairs(pairs));
            }
            name @ ("input" | "output") => {
                let slot = if name == "input" {
                    &mut layer.input
                } else {
                    &mut layer.output
                };
                if slot.is_some() {
                    return Err(format!("duplicate field `{name}`"));
                }
                *slot = Some(if is_empty {
                    PortList::default()
                } else {
                    ports(xml, &mut r, base)?
                });
            }
            _ => {
                if !is_empty {
                    skip(&mut r, &e)?;
                }
            }
        }
    }
}

/// Reads the `<port>`s of an `<input>` or `<output>` whose start tag was just read.
fn ports<'a>(xml: &'a str, r: &mut Reader<'a>, base: usize) -> Result<PortList<'a>, String> {
    let mut list = PortList::default();
    loop {
        // With whitespace kept as text events, the reader stands at `<` before a start tag.
        let before = usize::try_from(r.buffer_position()).unwrap_or(0);
        let (e, is_empty) = match next(r)? {
            Event::Start(e) => (e, false),
            Event::Empty(e) => (e, true),
            Event::End(_) | Event::Eof => return Ok(list),
            _ => continue,
        };
        if e.name().as_ref() != "port" {
            if !is_empty {
                skip(r, &e)?;
            }
            continue;
        }
        let mut port = Port {
            id: None,
            precision: None,
            names: None,
            dim: Vec::new(),
            offset: base + before,
        };
        attrs(xml, &e, |k, v| match &*k {
            "id" => port.id = Some(v),
            "precision" => port.precision = Some(v),
            "names" => port.names = Some(v),
            _ => {}
        })?;
        if !is_empty {
            loop {
                let (c, c_empty) = match next(r)? {
                    Event::Start(c) => (c, false),
                    Event::Empty(c) => (c, true),
                    Event::End(_) | Event::Eof => break,
                    _ => continue,
                };
                if c.name().as_ref() == "dim" {
                    port.dim.push(if c_empty {
                        Cow::Borrowed("")
                    } else {
                        text(xml, r)?
                    });
                } else if !c_empty {
                    skip(r, &c)?;
                }
            }
        }
        list.port.push(port);
    }
}

/// The text of an element whose start tag was just read, up to its end tag.
fn text<'a>(xml: &'a str, r: &mut Reader<'a>) -> Result<Cow<'a, str>, String> {
    let mut out: Option<Cow<'a, str>> = None;
    let mut push = |s: Cow<'a, str>| match &mut out {
        None => out = Some(s),
        Some(acc) => acc.to_mut().push_str(&s),
    };
    loop {
        match next(r)? {
            Event::Text(t) => push(match t.xml10_content() {
                Cow::Borrowed(s) => {
                    rebind(xml, s).map_or_else(|| Cow::Owned(s.to_owned()), Cow::Borrowed)
                }
                Cow::Owned(s) => Cow::Owned(s),
            }),
            Event::CData(t) => push(Cow::Owned(t.xml10_content().into_owned())),
            Event::GeneralRef(g) => {
                let name = g.xml10_content();
                let resolved = match g.resolve_char_ref() {
                    Ok(Some(c)) => c.to_string(),
                    _ => quick_xml::escape::resolve_predefined_entity(&name)
                        .map(str::to_owned)
                        .ok_or_else(|| format!("unknown entity `&{name};`"))?,
                };
                push(Cow::Owned(resolved));
            }
            Event::Start(e) => {
                return Err(format!(
                    "unexpected element <{}> in text",
                    e.name().as_ref()
                ));
            }
            Event::End(_) | Event::Eof => return Ok(out.unwrap_or(Cow::Borrowed(""))),
            _ => {}
        }
    }
}

/// Reads one `<edge>` element.
pub fn edge(xml: &str) -> Result<Edge<'_>, String> {
    let mut r = Reader::from_str(xml);
    loop {
        match next(&mut r)? {
            Event::Start(e) | Event::Empty(e) => {
                let mut edge = Edge {
                    from_layer: None,
                    from_port: None,
                    to_layer: None,
                    to_port: None,
                };
                attrs(xml, &e, |k, v| match &*k {
                    "from-layer" => edge.from_layer = Some(v),
                    "from-port" => edge.from_port = Some(v),
                    "to-layer" => edge.to_layer = Some(v),
                    "to-port" => edge.to_port = Some(v),
                    _ => {}
                })?;
                return Ok(edge);
            }
            Event::Eof => return Err("no <edge> element".into()),
            _ => {}
        }
    }
}
