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
    // Most real models use ops ovir does not implement yet: they check around them.
    assert!(opaque > 0);
}

#[test]
fn check_summarises_unimplemented_ops_and_can_deny_them() {
    let model = "ir_samples/real/blocks/mha_dynamic/model.xml";
    insta::assert_snapshot!("check_mha_dynamic", ovir(&["check", model]));
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
    let model = "ir_samples/real/blocks/decoder_dynamic/model.xml";
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
    for op in [
        "MatMul-1",
        "Swish-4",
        "ScaledDotProductAttention-13",
        "Transpose-1",
    ] {
        assert!(out.contains(op), "{op} is not named: {out}");
    }
    assert!(!out.contains("no_such_file"), "{out}");
    assert!(!out_dir.exists(), "run left {}", out_dir.display());
    insta::assert_snapshot!("run_refuses_decoder", out);
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
