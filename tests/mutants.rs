//! Structured fuzzing inside `cargo test`: every valid sample in `ir_samples/`, mutated where IR
//! files go wrong in practice (attribute values, dims, edges, Const offsets and sizes, element
//! types, whole lines, the weights), is loaded, checked and run on small random inputs. Each must
//! end in a result or an error, never a panic. The cases come from a fixed seed, so a failure
//! reproduces; `OVIR_MUTANTS=N` runs N cases (default 3000), `OVIR_MUTANTS_SEED` another seed.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

use ovir::io::random::{self, Rng};
use ovir::{LoadOptions, Model};

struct Sample {
    name: String,
    xml: String,
    bin: Option<Vec<u8>>,
}

fn samples() -> Vec<Sample> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .expect("ir_samples is readable")
            .map(|e| e.expect("a directory entry").path())
            .collect();
        entries.sort();
        for p in entries {
            if p.is_dir() {
                walk(&p, out);
            } else if p.file_name().is_some_and(|n| n == "model.xml") {
                out.push(p);
            }
        }
    }
    let mut paths = Vec::new();
    walk(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("ir_samples"),
        &mut paths,
    );
    paths
        .into_iter()
        .map(|p| Sample {
            name: p.display().to_string(),
            xml: std::fs::read_to_string(&p).expect("a sample is UTF-8"),
            bin: std::fs::read(p.with_extension("bin")).ok(),
        })
        .collect()
}

fn pick<'a, T>(rng: &mut Rng, items: &'a [T]) -> Option<&'a T> {
    if items.is_empty() {
        None
    } else {
        Some(&items[(rng.next_u64() % items.len() as u64) as usize])
    }
}

fn below(rng: &mut Rng, n: usize) -> usize {
    (rng.next_u64() % n.max(1) as u64) as usize
}

/// Values that have broken readers: empty, signs, overflow, separators, intervals, junk.
const VALUES: &[&str] = &[
    "",
    "0",
    "1",
    "-1",
    "2",
    "7",
    "-9223372036854775808",
    "9223372036854775807",
    "18446744073709551615",
    "18446744073709551616",
    "99999999999999999999999",
    "4294967296",
    "1,2",
    "1,,2",
    ",",
    "?",
    "-1..5",
    "5..2",
    "1..",
    "..3",
    "1.5",
    "1e30",
    "nan",
    "numpy",
    "none",
    "pdpd",
    "NUMPY",
    "true",
    "false",
    "True",
    "abc",
    "&amp;",
    "&#0;",
    "\u{2603}",
];
const TYPES: &[&str] = &[
    "f32",
    "f16",
    "bf16",
    "f64",
    "i8",
    "i16",
    "i32",
    "i64",
    "u8",
    "u16",
    "u32",
    "u64",
    "u1",
    "u4",
    "i4",
    "boolean",
    "string",
    "dynamic",
    "undefined",
    "FP32",
    "FP16",
    "I64",
    "U8",
    "BOOL",
    "f8e4m3",
    "x",
];
const DIMS: &[&str] = &[
    "0",
    "1",
    "2",
    "3",
    "-1",
    "?",
    "-2",
    "",
    "1..3",
    "4..2",
    "1000000",
    "4294967297",
    "9223372036854775807",
    "18446744073709551615",
    "abc",
];

/// The byte ranges of every attribute value (`name="VALUE"`) whose name satisfies `want`.
fn attribute_values(xml: &str, want: impl Fn(&str) -> bool) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let bytes = xml.as_bytes();
    let mut at = 0;
    while let Some(i) = xml[at..].find("=\"") {
        let eq = at + i;
        let name_start = xml[..eq]
            .rfind(|c: char| c.is_whitespace() || c == '<')
            .map_or(0, |s| s + 1);
        let start = eq + 2;
        let Some(len) = xml[start..].find('"') else {
            break;
        };
        if want(&xml[name_start..eq]) && bytes[start..start + len].is_ascii() {
            spans.push((start, start + len));
        }
        at = start + len + 1;
    }
    spans
}

/// The byte ranges of every element's text `<TAG>TEXT</TAG>`.
fn element_texts(xml: &str, tag: &str) -> Vec<(usize, usize)> {
    let (open, close) = (format!("<{tag}>"), format!("</{tag}>"));
    let mut spans = Vec::new();
    let mut at = 0;
    while let Some(i) = xml[at..].find(&open) {
        let start = at + i + open.len();
        let Some(len) = xml[start..].find(&close) else {
            break;
        };
        spans.push((start, start + len));
        at = start + len;
    }
    spans
}

fn replace(xml: &mut String, span: Option<&(usize, usize)>, with: &str) -> bool {
    match span {
        Some(&(s, e)) => {
            xml.replace_range(s..e, with);
            true
        }
        None => false,
    }
}

/// Lines, with their end offsets, of the part of `xml` between `from` and `to` markers.
fn lines_between(xml: &str, from: &str, to: &str) -> Vec<(usize, usize)> {
    let (Some(s), Some(e)) = (xml.find(from), xml.rfind(to)) else {
        return Vec::new();
    };
    let mut spans = Vec::new();
    let mut at = s + from.len();
    while let Some(i) = xml[at..e.max(at)].find('\n') {
        spans.push((at, at + i + 1));
        at += i + 1;
    }
    spans
}

/// One mutation; returns what it did (for the failure message).
fn mutate(rng: &mut Rng, xml: &mut String, bin: &mut Option<Vec<u8>>) -> String {
    match below(rng, 9) {
        0 => {
            let spans = attribute_values(xml, |_| true);
            let v = *pick(rng, VALUES).unwrap_or(&"");
            let span = pick(rng, &spans).copied();
            replace(xml, span.as_ref(), v);
            format!("attribute value at {span:?} := {v:?}")
        }
        1 => {
            let spans = element_texts(xml, "dim");
            let v = *pick(rng, DIMS).unwrap_or(&"");
            let span = pick(rng, &spans).copied();
            replace(xml, span.as_ref(), v);
            format!("dim at {span:?} := {v:?}")
        }
        2 => {
            let names = ["from-layer", "from-port", "to-layer", "to-port"];
            let spans = attribute_values(xml, |n| names.contains(&n));
            let v = below(rng, 12).to_string();
            let span = pick(rng, &spans).copied();
            replace(xml, span.as_ref(), &v);
            format!("edge end at {span:?} := {v}")
        }
        3 => {
            let spans = attribute_values(xml, |n| n == "offset" || n == "size");
            let span = pick(rng, &spans).copied();
            let v = match below(rng, 4) {
                0 => pick(rng, VALUES).map_or(String::new(), |s| s.to_string()),
                1 => (bin.as_ref().map_or(0, Vec::len) + below(rng, 3)).to_string(),
                _ => below(rng, 64).to_string(),
            };
            replace(xml, span.as_ref(), &v);
            format!("offset/size at {span:?} := {v:?}")
        }
        4 => {
            let names = ["element_type", "precision", "destination_type"];
            let spans = attribute_values(xml, |n| names.contains(&n));
            let v = *pick(rng, TYPES).unwrap_or(&"");
            let span = pick(rng, &spans).copied();
            replace(xml, span.as_ref(), v);
            format!("type at {span:?} := {v:?}")
        }
        5 => {
            let names = [
                "auto_broadcast",
                "m_pythondiv",
                "axis",
                "shape",
                "type",
                "version",
            ];
            let spans = attribute_values(xml, |n| names.contains(&n));
            let v = *pick(rng, VALUES).unwrap_or(&"");
            let span = pick(rng, &spans).copied();
            replace(xml, span.as_ref(), v);
            format!("op attribute at {span:?} := {v:?}")
        }
        6 => {
            let lines = if below(rng, 2) == 0 {
                lines_between(xml, "<edges>", "</edges>")
            } else {
                lines_between(xml, "<layers>", "</layers>")
            };
            let Some(&(s, e)) = pick(rng, &lines) else {
                return "no line".into();
            };
            if below(rng, 2) == 0 {
                xml.replace_range(s..e, "");
                format!("deleted line {s}..{e}")
            } else {
                let line = xml[s..e].to_string();
                xml.insert_str(e, &line);
                format!("duplicated line {s}..{e}")
            }
        }
        7 => {
            let mut cut = below(rng, xml.len());
            while !xml.is_char_boundary(cut) {
                cut -= 1;
            }
            xml.truncate(cut);
            format!("truncated at {cut}")
        }
        _ => match bin {
            Some(b) if !b.is_empty() => {
                if below(rng, 2) == 0 {
                    let n = below(rng, b.len());
                    b.truncate(n);
                    format!("weights truncated to {n}")
                } else {
                    let i = below(rng, b.len());
                    b[i] = [0x00, 0xff, 0x80, 0x7f][below(rng, 4)];
                    format!("weights byte {i} changed")
                }
            }
            _ => {
                *bin = None;
                "weights removed".into()
            }
        },
    }
}

#[derive(Debug, Default)]
struct Outcomes {
    not_loaded: usize,
    findings: usize,
    ran: usize,
    run_failed: usize,
    not_run: usize,
}

/// Loads, checks and runs one mutant; `Err` if anything panicked.
fn exercise(xml: &str, bin: Option<Vec<u8>>, seed: u64, seen: &mut Outcomes) {
    let options = LoadOptions {
        max_memory: Some(64 << 20),
        ..LoadOptions::default()
    };
    let model = match Model::from_bytes("mutant.xml", xml.as_bytes(), bin, &options) {
        Ok(m) => m,
        Err(e) => {
            for e in e.iter() {
                assert!(!e.to_string().is_empty());
            }
            seen.not_loaded += 1;
            return;
        }
    };
    let (_, found) = model.infer();
    for d in &found {
        assert!(!d.error.to_string().is_empty());
    }
    if found.iter().any(|d| d.severity == ovir::Severity::Error) {
        seen.findings += 1;
    }
    let Some(inputs) = random::inputs(model.graph(), &mut Rng::new(seed), 1 << 16) else {
        seen.not_run += 1;
        return;
    };
    match model.run(inputs) {
        Ok(outputs) => {
            for o in outputs {
                ovir::io::text::render(&o.name, &o.tensor, Default::default());
            }
            seen.ran += 1;
        }
        Err(e) => {
            assert!(!e.to_string().is_empty());
            seen.run_failed += 1;
        }
    }
}

#[test]
fn mutated_samples_never_panic() {
    let env = |name: &str, default: u64| {
        std::env::var(name)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    let cases = env("OVIR_MUTANTS", 3000);
    let seed = env("OVIR_MUTANTS_SEED", 7);
    let samples = samples();
    assert!(samples.len() > 20, "the samples are found");
    let mut rng = Rng::new(seed);
    let mut seen = Outcomes::default();
    for case in 0..cases {
        let sample = pick(&mut rng, &samples).expect("samples");
        let (mut xml, mut bin) = (sample.xml.clone(), sample.bin.clone());
        let done: Vec<String> = (0..1 + below(&mut rng, 3))
            .map(|_| mutate(&mut rng, &mut xml, &mut bin))
            .collect();
        let result = catch_unwind(AssertUnwindSafe(|| exercise(&xml, bin, case, &mut seen)));
        if result.is_err() {
            let keep = std::env::temp_dir().join(format!("ovir-mutant-{seed}-{case}.xml"));
            let _ = std::fs::write(&keep, &xml);
            panic!(
                "case {case} (seed {seed}) panicked: {} mutated by {done:?}; the mutant is in {}",
                sample.name,
                keep.display()
            );
        }
    }
    eprintln!("{cases} mutants: {seen:?}");
    // Every outcome is reached, so the mutations neither all break the reader nor all miss.
    if cases >= 1000 {
        assert!(seen.not_loaded > cases as usize / 20, "{seen:?}");
        assert!(
            seen.findings > 0 && seen.ran > cases as usize / 20,
            "{seen:?}"
        );
        assert!(seen.run_failed > 0, "{seen:?}");
    }
}
