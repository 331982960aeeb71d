//! The corpus of real IRs (`ir_samples/real/`, written by OpenVINO from real networks and
//! blocks; `ir_samples/real/generate.py --large` adds the large CNNs under `large/`, and
//! `OVIR_REAL_CORPUS=DIR[:DIR...]` adds folders written elsewhere, as `.ci/run` does): every one
//! checks clean — no error, no warning, so every declared dim of every layer ovir implements
//! equals the inferred one — with its unimplemented ops in the summary, and `run` refuses a
//! model with live unimplemented layers before it reads an input.

mod common;

use std::path::{Path, PathBuf};

use common::{ovir, rel, root, scratch};
use ovir::{CheckOptions, check_file};

fn models(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            models(&p, out);
        } else if p.file_name().is_some_and(|n| n == "model.xml") {
            out.push(p);
        }
    }
}

#[test]
fn every_real_ir_checks_clean() {
    let mut all = Vec::new();
    models(&root().join("ir_samples/real"), &mut all);
    if let Some(extra) = std::env::var_os("OVIR_REAL_CORPUS") {
        for dir in std::env::split_paths(&extra) {
            let before = all.len();
            models(&dir, &mut all);
            assert!(
                all.len() > before,
                "OVIR_REAL_CORPUS: no model.xml under {}",
                dir.display()
            );
        }
    }
    all.sort();
    assert!(all.len() >= 200, "the corpus has {} models", all.len());
    let mut failed = Vec::new();
    let mut opaque = 0;
    for m in &all {
        let r = check_file(m, &CheckOptions::default());
        if r.unreadable || !r.diagnostics.is_empty() {
            let first: Vec<String> = r
                .diagnostics
                .iter()
                .take(3)
                .map(|d| d.error.to_string())
                .collect();
            failed.push(format!("{}:\n  {}", rel(m), first.join("\n  ")));
        }
        opaque += r.opaque.len();
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
    // The committed real models no longer hold ops ovir does not implement (the large corpus
    // may); checking around opaque layers is tested on ir_samples/opaque_layer below.
    eprintln!("{opaque} opaque layers in {} real IRs", all.len());
}

#[test]
fn check_summarises_unimplemented_ops_and_can_deny_them() {
    // Every real block now runs: a handwritten model holds an op ovir does not implement.
    let model = "ir_samples/opaque_layer/model.xml";
    insta::assert_snapshot!("check_opaque_layer", ovir(&["check", model]));
    let denied = ovir(&["check", model, "--deny-unknown"]);
    assert!(denied.starts_with("exit code: 1\n"), "{denied}");
    assert!(denied.contains("error[E208]"), "{denied}");
    let json = ovir(&["check", model, "--format", "json"]);
    assert!(json.contains("\"unimplemented\": [\n    {"), "{json}");
}

#[test]
fn info_counts_op_versions_and_says_which_run() {
    insta::assert_snapshot!(
        "info_mha_dynamic",
        ovir(&["info", "ir_samples/real/blocks/mha_dynamic/model.xml"])
    );
}

#[test]
fn run_refuses_unimplemented_ops_before_reading_inputs() {
    let dir = scratch("real_corpus", "run_refuses");
    let out_dir = dir.join("out");
    let model = "ir_samples/opaque_layer/model.xml";
    // The input file does not exist: the refusal comes before it is read.
    let out = ovir(&[
        "run",
        model,
        "-i",
        "no_such_file.npy",
        "-o",
        out_dir.to_str().unwrap(),
    ]);
    assert!(out.starts_with("exit code: 2\n"), "{out}");
    assert!(out.contains("error[E605]"), "{out}");
    assert!(
        out.contains("CTCGreedyDecoder-1"),
        "CTCGreedyDecoder-1 is not named: {out}"
    );
    assert!(!out.contains("no_such_file"), "{out}");
    assert!(!out_dir.exists(), "run left {}", out_dir.display());
    insta::assert_snapshot!("run_refuses_opaque_layer", out);
}

/// Every real IR made only of ops ovir implements runs on random inputs (the outputs are
/// compared with references in later work; here: it runs, or fails with a clear error, never
/// an internal one), and its outputs have the shapes inference gave.
#[test]
fn real_irs_of_implemented_ops_run() {
    let mut all = Vec::new();
    models(&root().join("ir_samples/real"), &mut all);
    all.sort();
    let mut ran = 0;
    let mut failed = Vec::new();
    for m in &all {
        let Ok(model) = ovir::Model::load(m) else {
            failed.push(format!("{}: does not load", rel(m)));
            continue;
        };
        if model.runnable().is_err() {
            continue;
        }
        let mut rng = ovir::io::random::Rng::new(1);
        let Some(inputs) = ovir::io::random::inputs(model.graph(), &mut rng, 1 << 20) else {
            continue;
        };
        match model.run(inputs) {
            Ok(outputs) => {
                ran += 1;
                let (inferred, _) = model.infer();
                for (k, o) in outputs.iter().enumerate() {
                    let t = inferred.output(model.graph(), k);
                    let fits = t.is_some_and(|t| ovir::exec::fits(o.tensor.shape(), &t.shape));
                    if !fits {
                        failed.push(format!(
                            "{}: output {k} has shape {:?}, inferred {:?}",
                            rel(m),
                            o.tensor.shape(),
                            t.map(|t| t.shape.to_string())
                        ));
                    }
                }
            }
            Err(e) if e.to_string().contains("internal error") => {
                failed.push(format!("{}: {e}", rel(m)));
            }
            Err(_) => ran += 1,
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
    assert!(ran >= 40, "only {ran} real IRs run");
}

/// A dead layer (feeding no Result) whose op ovir does not implement does not stop a run.
#[test]
fn dead_unimplemented_layers_do_not_matter() {
    let xml = r#"<?xml version="1.0"?>
<net name="dead_opaque" version="11">
<layers>
<layer id="0" name="x" type="Parameter" version="opset1"><data shape="2" element_type="f32"/><output><port id="0" precision="FP32" names="x"><dim>2</dim></port></output></layer>
<layer id="1" name="neg" type="MyNegative" version="custom_opset"><input><port id="0"><dim>2</dim></port></input><output><port id="1" precision="FP32"><dim>2</dim></port></output></layer>
<layer id="2" name="twice" type="Add" version="opset1"><data auto_broadcast="numpy"/><input><port id="0"><dim>2</dim></port><port id="1"><dim>2</dim></port></input><output><port id="2" precision="FP32" names="y"><dim>2</dim></port></output></layer>
<layer id="3" name="out" type="Result" version="opset1"><input><port id="0"><dim>2</dim></port></input></layer>
</layers>
<edges>
<edge from-layer="0" from-port="0" to-layer="1" to-port="0"/>
<edge from-layer="0" from-port="0" to-layer="2" to-port="0"/>
<edge from-layer="0" from-port="0" to-layer="2" to-port="1"/>
<edge from-layer="2" from-port="2" to-layer="3" to-port="0"/>
</edges>
</net>
"#;
    let model =
        ovir::Model::from_bytes("dead_opaque.xml", xml.as_bytes(), None, &Default::default())
            .unwrap();
    assert!(model.unimplemented().is_empty());
    let x = ndarray::arr1(&[1.5f32, -2.0]).into_dyn();
    let out = model.run([("x", x.into())]).unwrap();
    assert_eq!(
        out[0].tensor.view::<f32>().unwrap().as_slice().unwrap(),
        &[3.0, -4.0]
    );
    // check still lists it (not as an error).
    let dir = scratch("real_corpus", "dead_opaque");
    let path = dir.join("model.xml");
    std::fs::write(&path, xml).unwrap();
    let r = check_file(&path, &CheckOptions::default());
    assert_eq!(r.opaque.len(), 1, "{:?}", r.opaque);
    assert!(r.diagnostics.iter().all(|d| d.error.code() == "W301"));
}
