//! The fast IR reader must read exactly what quick-xml's serde deserializer reads from the
//! `ir::document` structs: on every layer and edge of every sample, and on tricky inputs.

use ovir::ir::{Edge, Layer, read, scan};

fn compare_spans(text: &str, what: &str) -> Vec<String> {
    let mut diffs = Vec::new();
    let Ok(sk) = scan::scan(text) else {
        return diffs;
    };
    for span in &sk.layers {
        let xml = &text[span.start..span.end];
        let fast = read::layer(xml, 0).map(|mut l| {
            // serde does not know positions.
            for list in [&mut l.input, &mut l.output].into_iter().flatten() {
                for p in &mut list.port {
                    p.offset = 0;
                }
            }
            l
        });
        let serde = quick_xml::de::from_str::<Layer>(xml);
        match (&fast, &serde) {
            (Ok(a), Ok(b)) if a == b => {}
            (Err(_), Err(_)) => {}
            _ => diffs.push(format!(
                "{what}: layer at byte {}:\n fast:  {fast:?}\n serde: {serde:?}",
                span.start
            )),
        }
    }
    for span in &sk.edges {
        let xml = &text[span.start..span.end];
        let fast = read::edge(xml);
        let serde = quick_xml::de::from_str::<Edge>(xml);
        match (&fast, &serde) {
            (Ok(a), Ok(b)) if a == b => {}
            (Err(_), Err(_)) => {}
            _ => diffs.push(format!(
                "{what}: edge at byte {}:\n fast:  {fast:?}\n serde: {serde:?}",
                span.start
            )),
        }
    }
    diffs
}

#[test]
fn fast_reader_matches_serde_on_every_sample() {
    let mut diffs = Vec::new();
    let mut files = 0;
    for dir in ["ir_samples", "ir_samples/bad"] {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
        let mut paths: Vec<_> = std::fs::read_dir(&root)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .collect();
        paths.sort();
        for p in paths {
            let xml = if p.is_dir() {
                p.join("model.xml")
            } else {
                p.clone()
            };
            if xml.extension().and_then(|e| e.to_str()) != Some("xml") || !xml.exists() {
                continue;
            }
            let text = std::fs::read_to_string(&xml).unwrap();
            files += 1;
            diffs.extend(compare_spans(&text, &xml.display().to_string()));
        }
    }
    assert!(files > 20, "found only {files} sample files");
    assert!(diffs.is_empty(), "{}", diffs.join("\n"));
}

#[test]
fn fast_reader_matches_serde_on_edge_cases() {
    let cases = [
        r#"<net><layers><layer id="1" name="a&amp;b" type="Const" version="opset1"/></layers></net>"#,
        r#"<net><layers><layer id="1" name="tab	and
newline" type="x" version="v"><data a="1" b="&lt;&gt;"/></layer></layers></net>"#,
        r#"<net><layers><layer id="1"><input><port id="0"><dim>1</dim><dim> 2 </dim><dim></dim><dim/></port></input></layer></layers></net>"#,
        r#"<net><layers><layer id="1"><output><port id="0" names="a\,b,c"><rt_info><attribute name="x" value="y"/></rt_info><dim>3</dim></port></output></layer></layers></net>"#,
        r#"<net><layers><layer id="1"><data/><data/></layer></layers></net>"#,
        r#"<net><layers><layer id="1"><input/><input/></layer></layers></net>"#,
        r#"<net><layers><layer id="1"><input></input><output></output></layer></layers></net>"#,
        r#"<net><layers><layer id="1"><rt_info><attribute name="x"/></rt_info><data shape="1"/><unknown><deep/></unknown></layer></layers></net>"#,
        r#"<net><layers><layer id='7' name='single quotes'><data k='v'/></layer></layers></net>"#,
        r#"<net><layers><layer id="1"><input><port id="0"><dim>&#49;&#50;</dim></port></input></layer></layers></net>"#,
        r#"<net><layers><layer id="1"><input><port id="0"><dim><![CDATA[5]]></dim></port></input></layer></layers></net>"#,
        r#"<net><edges><edge from-layer="0" from-port="0" to-layer="1" to-port="0" extra="x"/><edge from-layer="&#48;"/></edges></net>"#,
        r#"<net><layers><layer id="1"><data a="&bogus;"/></layer></layers></net>"#,
    ];
    let mut diffs = Vec::new();
    for (i, c) in cases.iter().enumerate() {
        diffs.extend(compare_spans(c, &format!("case {i}")));
    }
    assert!(diffs.is_empty(), "{}", diffs.join("\n"));
}
