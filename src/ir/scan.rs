//! A fast structural pass over the XML text.
//!
//! quick-xml's serde deserializer reports no positions, and IR files are large. So the reader
//! first walks the raw bytes once (with `memchr`) to check that the document is well nested and
//! to find the byte span of the `<net>` start tag, of every `<layer>` in `<layers>` and of every
//! `<edge>` in `<edges>`. Each span is then deserialized on its own with serde (in parallel),
//! so every layer and edge, and every serde error, has an exact position.
//!
//! Comments, processing instructions and CDATA are skipped. A `<!DOCTYPE>` is refused: IR never
//! has one, and refusing it rules out entity-expansion attacks.

use memchr::{memchr, memchr3, memmem};

/// A byte range `start..end` of the text.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Span {
    pub start: usize,
    pub end: usize,
}

/// The sections of `<net>` that ovir reads, as spans of the text.
#[derive(Debug, Default)]
pub struct Skeleton {
    /// The `<net ...>` start tag, including `<` and `>`.
    pub net_tag: Span,
    /// Whether the `<net>` start tag is self-closing (an empty net).
    pub net_empty: bool,
    /// Start of the `<layers>` start tag, if present.
    pub layers_section: Option<usize>,
    /// Start of the `<edges>` start tag, if present.
    pub edges_section: Option<usize>,
    /// Every `<layer>` element inside `<layers>`, in document order.
    pub layers: Vec<Span>,
    /// Every `<edge>` element inside `<edges>`, in document order.
    pub edges: Vec<Span>,
    /// The net-level `<rt_info>` element, if present.
    pub rt_info: Option<Span>,
    /// A `<layers>`/`<edges>`/`<rt_info>` section that appears twice: (name, first, second).
    pub duplicate_section: Option<(&'static str, usize, usize)>,
}

/// A structural XML error at a byte offset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScanError {
    pub offset: usize,
    pub kind: ScanErrorKind,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScanErrorKind {
    /// Not well-formed XML, or XML that ovir refuses (DOCTYPE). `opened_at` is the offset of
    /// the start tag an error refers to.
    Malformed {
        message: String,
        opened_at: Option<usize>,
    },
    /// Well-formed, but the root element is not `<net>`.
    NotNet(String),
}

fn malformed(offset: usize, msg: impl Into<String>) -> ScanError {
    ScanError {
        offset,
        kind: ScanErrorKind::Malformed {
            message: msg.into(),
            opened_at: None,
        },
    }
}

fn malformed_at(offset: usize, message: String, opened_at: usize) -> ScanError {
    ScanError {
        offset,
        kind: ScanErrorKind::Malformed {
            message,
            opened_at: Some(opened_at),
        },
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Section {
    Layers,
    Edges,
    Other,
}

/// Finds `needle` in `hay[from..]` and returns the index just after it.
fn find_after(hay: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    memmem::find(&hay[from..], needle).map(|i| from + i + needle.len())
}

fn is_name_end(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\n' | b'/' | b'>')
}

/// Walks the document; see the module docs.
pub fn scan(text: &str) -> Result<Skeleton, ScanError> {
    scan_with(text, &mut |_| {})
}

/// [`scan`], calling `on_layer` with the span of each `<layer>` as soon as it ends, so the
/// caller can start reading layers while the scan goes on.
pub fn scan_with(text: &str, on_layer: &mut dyn FnMut(Span)) -> Result<Skeleton, ScanError> {
    let b = text.as_bytes();
    let mut sk = Skeleton::default();
    // Open elements: (name, start offset). Names borrow from the text.
    let mut stack: Vec<(&str, usize)> = Vec::with_capacity(16);
    let mut section = Section::Other;
    let mut root_seen = false;
    let mut i = if b.starts_with(b"\xEF\xBB\xBF") { 3 } else { 0 };

    while let Some(rel) = memchr(b'<', &b[i..]) {
        let lt = i + rel;
        if stack.is_empty()
            && let Some(pos) = b[i..lt].iter().position(|c| !c.is_ascii_whitespace())
        {
            return Err(malformed(i + pos, "text outside the root element"));
        }
        let next = b.get(lt + 1).copied();
        match next {
            Some(b'?') => {
                i = find_after(b, lt + 2, b"?>")
                    .ok_or_else(|| malformed(lt, "unterminated processing instruction `<?`"))?;
            }
            Some(b'!') => {
                let rest = &b[lt + 1..];
                if rest.starts_with(b"!--") {
                    i = find_after(b, lt + 4, b"-->")
                        .ok_or_else(|| malformed(lt, "unterminated comment `<!--`"))?;
                } else if rest.starts_with(b"![CDATA[") {
                    if stack.is_empty() {
                        return Err(malformed(lt, "CDATA outside the root element"));
                    }
                    i = find_after(b, lt + 9, b"]]>")
                        .ok_or_else(|| malformed(lt, "unterminated CDATA section"))?;
                } else if rest.starts_with(b"!DOCTYPE") {
                    return Err(malformed(
                        lt,
                        "a <!DOCTYPE> declaration is not allowed in IR (ovir does not expand DTD entities)",
                    ));
                } else {
                    return Err(malformed(lt, "`<!` starts no comment or CDATA section"));
                }
            }
            Some(b'/') => {
                // End tags are short: a plain loop beats a memchr call.
                let gt = b[lt + 2..]
                    .iter()
                    .position(|&c| c == b'>')
                    .map(|g| lt + 2 + g)
                    .ok_or_else(|| malformed(lt, "unterminated end tag"))?;
                let name = text[lt + 2..gt].trim_end();
                let Some((open, open_at)) = stack.pop() else {
                    return Err(malformed(lt, format!("end tag </{name}> has no start tag")));
                };
                if open != name {
                    return Err(malformed_at(
                        lt,
                        format!("end tag </{name}> does not match the start tag <{open}>"),
                        open_at,
                    ));
                }
                let end = gt + 1;
                if close_element(&mut sk, &mut section, &stack, open, open_at, end) {
                    on_layer(Span {
                        start: open_at,
                        end,
                    });
                }
                i = end;
            }
            _ => {
                let name_start = lt + 1;
                let name_len = b[name_start..]
                    .iter()
                    .position(|&c| is_name_end(c))
                    .ok_or_else(|| malformed(lt, "unterminated start tag"))?;
                if name_len == 0 {
                    return Err(malformed(lt, "`<` is not followed by an element name"));
                }
                let name = &text[name_start..name_start + name_len];
                // Find the closing `>`, skipping quoted attribute values (which may contain `>`).
                // Most tags in an IR (`<dim>`, `<port ...>`) are short: try the next byte first.
                let mut j = name_start + name_len;
                let gt = if b[j] == b'>' {
                    j
                } else if b[j] == b'/' && b.get(j + 1) == Some(&b'>') {
                    j + 1
                } else {
                    loop {
                        let k = memchr3(b'"', b'\'', b'>', &b[j..])
                            .map(|k| j + k)
                            .ok_or_else(|| {
                                malformed(lt, format!("unterminated start tag <{name}"))
                            })?;
                        if b[k] == b'>' {
                            break k;
                        }
                        let close = memchr(b[k], &b[k + 1..]).ok_or_else(|| {
                            malformed(k, format!("unterminated attribute value in <{name}"))
                        })?;
                        j = k + 1 + close + 1;
                    }
                };
                let self_closing = b[gt - 1] == b'/';
                if stack.is_empty() {
                    if root_seen {
                        return Err(malformed(lt, format!("a second root element <{name}>")));
                    }
                    root_seen = true;
                    if name != "net" {
                        return Err(ScanError {
                            offset: lt,
                            kind: ScanErrorKind::NotNet(name.to_owned()),
                        });
                    }
                    sk.net_tag = Span {
                        start: lt,
                        end: gt + 1,
                    };
                    sk.net_empty = self_closing;
                } else if stack.len() == 1 {
                    section = open_section(&mut sk, name, lt);
                }
                if self_closing {
                    if close_element(&mut sk, &mut section, &stack, name, lt, gt + 1) {
                        on_layer(Span {
                            start: lt,
                            end: gt + 1,
                        });
                    }
                } else {
                    stack.push((name, lt));
                }
                i = gt + 1;
            }
        }
    }
    if let Some(pos) = b[i..].iter().position(|c| !c.is_ascii_whitespace()) {
        return Err(malformed(i + pos, "text outside the root element"));
    }
    if let Some((name, at)) = stack.pop() {
        return Err(malformed_at(
            b.len(),
            format!("<{name}> is never closed"),
            at,
        ));
    }
    if !root_seen {
        return Err(malformed(0, "the document has no root element"));
    }
    Ok(sk)
}

/// Called for each start tag directly inside `<net>`.
fn open_section(sk: &mut Skeleton, name: &str, at: usize) -> Section {
    let (slot, which, section) = match name {
        "layers" => (&mut sk.layers_section, "layers", Section::Layers),
        "edges" => (&mut sk.edges_section, "edges", Section::Edges),
        _ => return Section::Other,
    };
    match slot {
        Some(first) => {
            if sk.duplicate_section.is_none() {
                sk.duplicate_section = Some((which, *first, at));
            }
            // Read only the first section, as OpenVINO does; the duplicate is reported.
            Section::Other
        }
        None => {
            *slot = Some(at);
            section
        }
    }
}

/// Called when an element ends; `stack` holds its ancestors. Returns whether it was a layer.
fn close_element(
    sk: &mut Skeleton,
    section: &mut Section,
    stack: &[(&str, usize)],
    name: &str,
    start: usize,
    end: usize,
) -> bool {
    let span = Span { start, end };
    match stack.len() {
        1 => {
            if name == "rt_info" && sk.rt_info.is_none() {
                sk.rt_info = Some(span);
            }
            *section = Section::Other;
        }
        2 => match (*section, name) {
            (Section::Layers, "layer") => {
                sk.layers.push(span);
                return true;
            }
            (Section::Edges, "edge") => sk.edges.push(span),
            _ => {}
        },
        _ => {}
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> String {
        match scan(text) {
            Ok(_) => "ok".into(),
            Err(e) => match e.kind {
                ScanErrorKind::Malformed { message, opened_at } => match opened_at {
                    Some(o) => format!("{}: {message} (opened at {o})", e.offset),
                    None => format!("{}: {message}", e.offset),
                },
                ScanErrorKind::NotNet(n) => format!("{}: not net: {n}", e.offset),
            },
        }
    }

    #[test]
    fn finds_layers_and_edges() {
        let text = r#"<?xml version="1.0"?>
<!-- a comment with <layer> inside -->
<net name="x" version="11">
  <layers>
    <layer id="0" name="a>b" type="Parameter"><data shape="1"/></layer>
    <layer id='1' name="r" type="Result"/>
    <junk><layer id="9"/></junk>
  </layers>
  <edges><edge from-layer="0" from-port="0" to-layer="1" to-port="0"/></edges>
  <rt_info><x value="1"/></rt_info>
</net>
"#;
        let sk = scan(text).unwrap();
        assert_eq!(sk.layers.len(), 2);
        assert!(text[sk.layers[0].start..sk.layers[0].end].starts_with("<layer id=\"0\""));
        assert!(text[sk.layers[0].start..sk.layers[0].end].ends_with("</layer>"));
        assert_eq!(
            &text[sk.layers[1].start..sk.layers[1].end],
            "<layer id='1' name=\"r\" type=\"Result\"/>"
        );
        assert_eq!(sk.edges.len(), 1);
        assert!(sk.rt_info.is_some());
        assert!(text[sk.net_tag.start..sk.net_tag.end].starts_with("<net name"));
    }

    #[test]
    fn structural_errors() {
        let table = [
            ("<net></net>", "ok"),
            ("<net/>", "ok"),
            ("<model/>", "0: not net: model"),
            (
                "<net><a></b></net>",
                "8: end tag </b> does not match the start tag <a> (opened at 5)",
            ),
            ("<net><a>", "8: <a> is never closed (opened at 5)"),
            ("<net></net><net/>", "11: a second root element <net>"),
            ("x<net/>", "0: text outside the root element"),
            ("<net/>x", "6: text outside the root element"),
            ("", "0: the document has no root element"),
            (
                "<net a=\"1></net>",
                "7: unterminated attribute value in <net",
            ),
            ("<net", "0: unterminated start tag"),
            (
                "<!DOCTYPE net [<!ENTITY a \"b\">]><net/>",
                "0: a <!DOCTYPE> declaration is not allowed in IR (ovir does not expand DTD entities)",
            ),
            ("<net><!-- x </net>", "5: unterminated comment `<!--`"),
            ("</net>", "0: end tag </net> has no start tag"),
            (
                "<net>< a/></net>",
                "5: `<` is not followed by an element name",
            ),
        ];
        for (text, want) in table {
            assert_eq!(err(text), want, "{text:?}");
        }
    }

    #[test]
    fn duplicate_sections_are_noted() {
        let sk = scan("<net><layers/><layers><layer/></layers></net>").unwrap();
        assert_eq!(sk.duplicate_section, Some(("layers", 5, 14)));
        assert!(sk.layers.is_empty());
    }
}
