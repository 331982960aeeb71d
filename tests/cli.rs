//! The command line's contract: exit codes, usage errors, `--weights`.

mod common;

use common::ovir;

#[test]
fn no_arguments_is_a_usage_error() {
    let out = ovir(&[]);
    assert!(out.starts_with("exit code: 2\n"), "{out}");
    assert!(out.contains("Usage: ovir <COMMAND>"), "{out}");
}

#[test]
fn unknown_subcommand_is_a_usage_error() {
    let out = ovir(&["frobnicate"]);
    assert!(out.starts_with("exit code: 2\n"), "{out}");
}

#[test]
fn missing_model_file() {
    insta::assert_snapshot!(ovir(&["info", "ir_samples/no_such_dir/model.xml"]));
}

#[test]
fn weights_flag_overrides_the_default_bin() {
    // missing_bin.xml's Const needs 12 bytes at offset 0; short_bin.bin has exactly 12.
    let out = ovir(&[
        "info",
        "ir_samples/bad/missing_bin.xml",
        "--weights",
        "ir_samples/bad/short_bin.bin",
    ]);
    assert!(out.starts_with("exit code: 0\n"), "{out}");
    assert!(
        out.contains("weights     ir_samples/bad/short_bin.bin (12 bytes)"),
        "{out}"
    );
}

#[test]
fn bad_format_value() {
    let out = ovir(&[
        "info",
        "ir_samples/seed_numpy/model.xml",
        "--format",
        "yaml",
    ]);
    assert!(out.starts_with("exit code: 2\n"), "{out}");
    assert!(out.contains("invalid value 'yaml'"), "{out}");
}

#[test]
fn version_flag() {
    let out = ovir(&["--version"]);
    assert!(out.starts_with("exit code: 0\n"), "{out}");
    assert!(
        out.contains(concat!("ovir ", env!("CARGO_PKG_VERSION"))),
        "{out}"
    );
}
