//! `ovir info` over every shipped sample, and the error report of every broken one.

mod common;

use common::{ovir, rel};

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
        // The JSON must parse, whatever the snapshot says.
        let json = out
            .split_once("----- stdout -----\n")
            .and_then(|(_, rest)| rest.split_once("----- stderr -----"))
            .map(|(json, _)| json)
            .unwrap_or_default();
        serde_json::from_str::<serde_json::Value>(json).expect("info --format json prints JSON");
        insta::assert_snapshot!(out);
    });
}

#[test]
fn error_report_of_every_broken_sample() {
    insta::glob!("../ir_samples/bad", "*.xml", |path| {
        let path = rel(path);
        let out = ovir(&["info", &path]);
        assert!(out.starts_with("exit code: 2\n"), "{out}");
        insta::assert_snapshot!(out);
    });
}
