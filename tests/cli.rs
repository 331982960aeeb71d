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

#[test]
fn check_reports_every_file_at_once() {
    insta::assert_snapshot!(ovir(&[
        "check",
        "ir_samples/bad/type_mismatch.xml",
        "ir_samples/seed_numpy/model.xml",
        "ir_samples/bad/unknown_port.xml",
    ]));
}

#[test]
fn check_with_a_missing_file_could_not_run() {
    let out = ovir(&[
        "check",
        "ir_samples/bad/type_mismatch.xml",
        "no/such/model.xml",
    ]);
    assert!(out.starts_with("exit code: 2\n"), "{out}");
    assert!(
        out.contains("E501"),
        "the other file is still checked: {out}"
    );
    assert!(
        out.contains("error[E100]: cannot read no/such/model.xml"),
        "{out}"
    );
}

#[test]
fn check_deny_warnings() {
    let plain = ovir(&["check", "ir_samples/dead_branch/model.xml"]);
    assert!(plain.starts_with("exit code: 0\n"), "{plain}");
    let denied = ovir(&[
        "check",
        "ir_samples/dead_branch/model.xml",
        "--deny-warnings",
    ]);
    assert!(denied.starts_with("exit code: 1\n"), "{denied}");
}

#[test]
fn check_shape_specialises_dynamic_inputs() {
    // a is [?,3]: [4,3] fits, [4,5] does not.
    let fits = ovir(&[
        "check",
        "ir_samples/dynamic/model.xml",
        "--shape",
        "a=[4,3]",
    ]);
    assert!(fits.starts_with("exit code: 0\n"), "{fits}");
    insta::assert_snapshot!(ovir(&[
        "check",
        "ir_samples/dynamic/model.xml",
        "--shape",
        "a=[4,5]"
    ]));
}

#[test]
fn check_shape_usage_errors() {
    let unknown = ovir(&[
        "check",
        "ir_samples/dynamic/model.xml",
        "--shape",
        "nope=[1]",
    ]);
    assert!(unknown.starts_with("exit code: 2\n"), "{unknown}");
    assert!(unknown.contains("--shape nope: no input"), "{unknown}");
    let syntax = ovir(&[
        "check",
        "ir_samples/dynamic/model.xml",
        "--shape",
        "a=[1,x]",
    ]);
    assert!(syntax.starts_with("exit code: 2\n"), "{syntax}");
    let no_eq = ovir(&["check", "ir_samples/dynamic/model.xml", "--shape", "a"]);
    assert!(no_eq.starts_with("exit code: 2\n"), "{no_eq}");
}

#[test]
fn check_needs_a_file() {
    let out = ovir(&["check"]);
    assert!(out.starts_with("exit code: 2\n"), "{out}");
}
