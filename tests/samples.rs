//! `ovir info` and `ovir check` over every shipped sample, and over every broken one.

mod common;

use common::{ovir, rel};

/// The stdout part of an `ovir(...)` rendering.
fn stdout(out: &str) -> &str {
    out.split_once("----- stdout -----\n")
        .and_then(|(_, rest)| rest.split_once("----- stderr -----"))
        .map_or("", |(s, _)| s)
}

#[test]
fn info_text_of_every_sample() {
    insta::glob!("../ir_samples", "*/model.xml", |path| {
        let path = rel(path);
        insta::assert_snapshot!(ovir(&["info", &path]));
    });
}

#[test]
fn info_json_of_every_sample() {
    insta::glob!("../ir_samples", "*/model.xml", |path| {
        let path = rel(path);
        let out = ovir(&["info", &path, "--format", "json"]);
        serde_json::from_str::<serde_json::Value>(stdout(&out))
            .expect("info --format json prints JSON");
        insta::assert_snapshot!(out);
    });
}

#[test]
fn every_valid_sample_checks_without_errors() {
    insta::glob!("../ir_samples", "*/model.xml", |path| {
        let path = rel(path);
        let out = ovir(&["check", &path]);
        assert!(out.starts_with("exit code: 0\n"), "{out}");
        // dead_branch and opaque_layer print a note on their opaque layers first.
        if !path.contains("dead_branch") && !path.contains("opaque_layer") {
            assert!(stdout(&out).starts_with("All checks passed"), "{out}");
        }
    });
}

#[test]
fn info_of_every_broken_sample() {
    insta::glob!("../ir_samples/bad", "*.xml", |path| {
        let path = rel(path);
        insta::assert_snapshot!(ovir(&["info", &path]));
    });
}

#[test]
fn check_of_every_broken_sample_in_every_format() {
    insta::glob!("../ir_samples/bad", "*.xml", |path| {
        let path = rel(path);
        let text = ovir(&["check", &path]);
        let json = ovir(&["check", &path, "--format", "json"]);
        let github = ovir(&["check", &path, "--format", "github"]);
        let denied = ovir(&["check", &path, "--deny-warnings"]);
        assert!(
            denied.starts_with("exit code: 1\n"),
            "every broken sample has a finding: {denied}"
        );
        let doc: serde_json::Value =
            serde_json::from_str(stdout(&json)).expect("check --format json prints JSON");
        assert!(
            !doc["diagnostics"]
                .as_array()
                .expect("a diagnostics list")
                .is_empty()
        );
        insta::assert_snapshot!(format!(
            "{text}\n===== json =====\n{json}\n===== github =====\n{github}"
        ));
    });
}
