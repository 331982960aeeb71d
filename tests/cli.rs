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

fn temp_dir(tag: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("ovir-test-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn run_prints_outputs_as_text() {
    insta::assert_snapshot!(ovir(&[
        "run",
        "ir_samples/int_divide/model.xml",
        "--inputs",
        "ir_samples/int_divide/inputs"
    ]));
}

#[test]
fn run_binds_bare_files_by_position() {
    let by_dir = ovir(&[
        "run",
        "ir_samples/int_divide/model.xml",
        "--inputs",
        "ir_samples/int_divide/inputs",
    ]);
    let by_pos = ovir(&[
        "run",
        "ir_samples/int_divide/model.xml",
        "-i",
        "ir_samples/int_divide/inputs/a.npy",
        "-i",
        "ir_samples/int_divide/inputs/b.npy",
    ]);
    let by_name = ovir(&[
        "run",
        "ir_samples/int_divide/model.xml",
        "--input",
        "b=ir_samples/int_divide/inputs/b.npy",
        "-i",
        "a=ir_samples/int_divide/inputs/a.npy",
    ]);
    assert_eq!(by_dir, by_pos);
    assert_eq!(by_dir, by_name);
}

#[test]
fn run_writes_npy_outputs() {
    let dir = temp_dir("out");
    let out = ovir(&[
        "run",
        "ir_samples/int_divide/model.xml",
        "--inputs",
        "ir_samples/int_divide/inputs",
        "-o",
        dir.to_str().unwrap(),
    ]);
    assert!(out.starts_with("exit code: 0\n"), "{out}");
    for (file, expected) in [("floor.npy", "floor.npy"), ("trunc.npy", "trunc.npy")] {
        let got = std::fs::read(dir.join(file)).unwrap();
        let want = std::fs::read(
            common::root()
                .join("ir_samples/int_divide/expected")
                .join(expected),
        )
        .unwrap();
        let (g, w) = (
            ovir::io::npy::read_bytes(&got, u64::MAX).unwrap(),
            ovir::io::npy::read_bytes(&want, u64::MAX).unwrap(),
        );
        assert_eq!(g, w, "{file}");
    }
    let leftovers: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn run_refuses_a_wrong_input_type() {
    let out = ovir(&[
        "run",
        "ir_samples/int_divide/model.xml",
        "-i",
        "a=ir_samples/sub_div_f32/inputs/a.npy",
        "-i",
        "b=ir_samples/int_divide/inputs/b.npy",
    ]);
    assert!(out.starts_with("exit code: 2\n"), "{out}");
    assert!(out.contains("error[E613]"), "{out}");
    assert!(
        out.contains("input \"a\" must be i32, but the given tensor is f32"),
        "{out}"
    );
}

#[test]
fn run_reports_division_by_zero_with_the_element() {
    let dir = temp_dir("zero");
    let zeros = ovir::Tensor::from(
        ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(&[7]), vec![1i32, 1, 1, 0, 1, 1, 1])
            .unwrap(),
    );
    let b = dir.join("b.npy");
    std::fs::write(&b, ovir::io::npy::to_bytes(&zeros)).unwrap();
    let out = ovir(&[
        "run",
        "ir_samples/int_divide/model.xml",
        "-i",
        "a=ir_samples/int_divide/inputs/a.npy",
        "-i",
        &format!("b={}", b.display()),
    ]);
    assert!(out.starts_with("exit code: 2\n"), "{out}");
    assert!(out.contains("error[E601]: layer 2 \"trunc_div\" (Divide): integer division by zero at output element [3]"), "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn run_random_inputs_are_deterministic() {
    let a = ovir(&[
        "run",
        "ir_samples/seed_numpy/model.xml",
        "--random-inputs",
        "--seed",
        "7",
    ]);
    let b = ovir(&[
        "run",
        "ir_samples/seed_numpy/model.xml",
        "--random-inputs",
        "--seed",
        "7",
    ]);
    let c = ovir(&[
        "run",
        "ir_samples/seed_numpy/model.xml",
        "--random-inputs",
        "--seed",
        "8",
    ]);
    assert!(a.starts_with("exit code: 0\n"), "{a}");
    assert_eq!(a, b);
    assert_ne!(a, c);
    let dynamic = ovir(&["run", "ir_samples/dynamic/model.xml", "--random-inputs"]);
    assert!(
        dynamic.contains("input \"c\" has a dynamic rank; give its shape with --shape c=[...]"),
        "{dynamic}"
    );
    let shaped = ovir(&[
        "run",
        "ir_samples/dynamic/model.xml",
        "--random-inputs",
        "--shape",
        "c=[2,1,3]",
    ]);
    assert!(shaped.contains("out: f32 [2,1,3]"), "{shaped}");
}

#[test]
fn run_warns_about_declared_dims_and_still_runs() {
    let out = ovir(&[
        "run",
        "ir_samples/bad/declared_dims_lie.xml",
        "--random-inputs",
    ]);
    assert!(out.starts_with("exit code: 0\n"), "{out}");
    assert!(out.contains("warning: 2 ports of"), "{out}");
    assert!(!out.contains("error"), "{out}");
    assert!(out.contains("out: f32 [2,3]"), "{out}");
}

#[test]
fn bench_reports_latency_in_milliseconds() {
    let out = ovir(&[
        "bench",
        "ir_samples/int_divide/model.xml",
        "-n",
        "20",
        "--threads",
        "1",
        "--format",
        "json",
    ]);
    let (head, rest) = out.split_once("----- stdout -----\n").unwrap();
    assert_eq!(head, "exit code: 0\n", "{out}");
    let json = rest.split("----- stderr -----").next().unwrap();
    let v: serde_json::Value = serde_json::from_str(json).unwrap();
    assert_eq!(v["iterations"], 20);
    assert_eq!(v["threads"], 1);
    let l = &v["latency"];
    let (min, median, p90, max) = (
        l["min_ms"].as_f64().unwrap(),
        l["median_ms"].as_f64().unwrap(),
        l["p90_ms"].as_f64().unwrap(),
        l["max_ms"].as_f64().unwrap(),
    );
    assert!(
        0.0 < min && min <= median && median <= p90 && p90 <= max,
        "{l}"
    );
    assert!(v["throughput_per_s"].as_f64().unwrap() > 0.0);
    // Files as inputs, text output.
    let text = ovir(&[
        "bench",
        "ir_samples/int_divide/model.xml",
        "--inputs",
        "ir_samples/int_divide/inputs",
        "-n",
        "3",
    ]);
    assert!(text.contains("runs: 3 in "), "{text}");
    assert!(text.contains("latency (ms): min "), "{text}");
    // A run that fails is reported once, with its code.
    let dir = temp_dir("bench_zero");
    let zeros: ovir::Tensor = ndarray::Array1::<i32>::zeros(7).into_dyn().into();
    std::fs::write(dir.join("b.npy"), ovir::io::npy::to_bytes(&zeros)).unwrap();
    let b = format!("b={}", dir.join("b.npy").display());
    let zero = ovir(&[
        "bench",
        "ir_samples/int_divide/model.xml",
        "-i",
        "a=ir_samples/int_divide/inputs/a.npy",
        "-i",
        &b,
        "-n",
        "3",
    ]);
    assert!(zero.starts_with("exit code: 2\n"), "{zero}");
    assert_eq!(zero.matches("error[E601]").count(), 1, "{zero}");
    let _ = std::fs::remove_dir_all(&dir);
    let usage = ovir(&["bench", "ir_samples/int_divide/model.xml", "-t", "0"]);
    assert!(
        usage.contains("--time must be a positive number"),
        "{usage}"
    );
}

#[test]
fn memory_budget_is_checked_before_allocating() {
    // [100000,1] - [1,100000]: a 37 GiB output from 0.8 MB of inputs.
    insta::assert_snapshot!(ovir(&[
        "run",
        "ir_samples/hostile/broadcast_bomb.xml",
        "--random-inputs",
        "--max-memory",
        "1G",
    ]));
    // Inputs count too, before they are made.
    insta::assert_snapshot!(ovir(&[
        "run",
        "ir_samples/hostile/broadcast_bomb.xml",
        "--random-inputs",
        "--max-memory",
        "100K",
    ]));
    // An input file larger than the budget is refused before it is read.
    let dir = temp_dir("budget_npy");
    let big = dir.join("big.npy");
    std::fs::write(&big, vec![0u8; 3 << 20]).unwrap();
    let a = format!("a={}", big.display());
    let text = ovir(&[
        "run",
        "ir_samples/int_divide/model.xml",
        "-i",
        &a,
        "--max-memory",
        "1M",
    ]);
    assert!(
        text.starts_with("exit code: 2\n") && text.contains("more than the limit of 1048576"),
        "{text}"
    );
    let _ = std::fs::remove_dir_all(&dir);
    // With the machine's default budget it is still refused, never allocated.
    let text = ovir(&[
        "run",
        "ir_samples/hostile/broadcast_bomb.xml",
        "--random-inputs",
    ]);
    assert!(
        text.starts_with("exit code: 2\n") && text.contains("error[E604]"),
        "{text}"
    );
}

// What a new user hit (issue 17), each pinned.

#[test]
fn check_shape_specialising_a_dynamic_rank_finds_no_false_rank_errors() {
    // c is `...`: its ports (and those downstream) are written with no <dim>, which is not
    // rank 0.
    let out = ovir(&["check", "ir_samples/dynamic/model.xml", "--shape", "c=[3]"]);
    assert!(out.starts_with("exit code: 0\n"), "{out}");
    assert!(!out.contains("E505"), "{out}");
}

#[test]
fn check_takes_weights_one_per_model() {
    let one = ovir(&[
        "check",
        "ir_samples/bad/missing_bin.xml",
        "--weights",
        "ir_samples/bad/short_bin.bin",
    ]);
    assert!(one.starts_with("exit code: 0\n"), "{one}");
    let two = ovir(&[
        "check",
        "ir_samples/bad/missing_bin.xml",
        "ir_samples/seed_numpy/model.xml",
        "--weights",
        "ir_samples/bad/short_bin.bin",
        "--weights",
        "ir_samples/seed_numpy/model.bin",
    ]);
    assert!(two.starts_with("exit code: 0\n"), "{two}");
    let mismatched = ovir(&[
        "check",
        "ir_samples/bad/missing_bin.xml",
        "ir_samples/seed_numpy/model.xml",
        "--weights",
        "ir_samples/bad/short_bin.bin",
    ]);
    assert!(mismatched.starts_with("exit code: 2\n"), "{mismatched}");
    assert!(
        mismatched.contains("one --weights per model"),
        "{mismatched}"
    );
}

#[test]
fn check_with_an_unknown_shape_name_reports_nothing_but_the_usage_error() {
    for format in ["text", "json"] {
        let out = ovir(&[
            "check",
            "ir_samples/dynamic/model.xml",
            "--shape",
            "zz=[3]",
            "--format",
            format,
        ]);
        assert!(
            out.starts_with("exit code: 2\n----- stdout -----\n----- stderr -----\n"),
            "{out}"
        );
        assert!(out.contains("--shape zz: no input"), "{out}");
    }
}

#[test]
fn info_on_a_model_with_shape_errors_prints_the_summary_and_exits_0() {
    let out = ovir(&["info", "ir_samples/bad/shape_numpy_mismatch.xml"]);
    assert!(out.starts_with("exit code: 0\n"), "{out}");
    assert!(out.contains("#0  out  ?  ?"), "{out}");
    assert!(out.contains("run `ovir check"), "{out}");
}

#[test]
fn run_without_inputs_says_how_to_give_them() {
    let out = ovir(&["run", "ir_samples/int_divide/model.xml"]);
    assert!(out.starts_with("exit code: 2\n"), "{out}");
    assert!(out.contains("error[E611]"), "{out}");
    assert!(
        out.contains("-i NAME=FILE.npy")
            && out.contains("--inputs DIR")
            && out.contains("--random-inputs"),
        "{out}"
    );
}

#[test]
fn run_random_inputs_fill_what_files_do_not_give() {
    let dir = temp_dir("some_inputs");
    std::fs::copy("ir_samples/int_divide/inputs/a.npy", dir.join("a.npy")).unwrap();
    let out = ovir(&[
        "run",
        "ir_samples/int_divide/model.xml",
        "--inputs",
        dir.to_str().unwrap(),
        "--random-inputs",
    ]);
    // b has no file: it is made up.
    assert!(out.starts_with("exit code: 0\n"), "{out}");
    let without = ovir(&[
        "run",
        "ir_samples/int_divide/model.xml",
        "--inputs",
        dir.to_str().unwrap(),
    ]);
    assert!(without.starts_with("exit code: 2\n"), "{without}");
    assert!(without.contains("no file for input \"b\""), "{without}");
    let out = ovir(&[
        "run",
        "ir_samples/int_divide/model.xml",
        "-i",
        &format!("a={}", dir.join("a.npy").display()),
        "--random-inputs",
    ]);
    assert!(out.starts_with("exit code: 0\n"), "{out}");
    let twice = ovir(&[
        "run",
        "ir_samples/int_divide/model.xml",
        "-i",
        &format!("a={}", dir.join("a.npy").display()),
        "-i",
        &format!("a={}", dir.join("a.npy").display()),
        "--random-inputs",
    ]);
    assert!(twice.starts_with("exit code: 2\n"), "{twice}");
    assert!(twice.contains("is given twice: by -i a="), "{twice}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn run_names_an_unknown_shape_name_before_anything_else() {
    let out = ovir(&[
        "run",
        "ir_samples/dynamic/model.xml",
        "--random-inputs",
        "--shape",
        "zz=[3]",
    ]);
    assert!(out.starts_with("exit code: 2\n"), "{out}");
    assert!(
        out.contains("--shape zz: the model has no input of this name"),
        "{out}"
    );
    assert!(!out.contains("\"c\""), "{out}");
}

#[test]
fn run_input_over_the_memory_budget_is_e604() {
    let out = ovir(&[
        "run",
        "ir_samples/int_divide/model.xml",
        "--inputs",
        "ir_samples/int_divide/inputs",
        "--max-memory",
        "10",
    ]);
    assert!(out.starts_with("exit code: 2\n"), "{out}");
    assert!(out.contains("error[E604]"), "{out}");
}

#[test]
fn run_refuses_a_model_with_type_errors_and_shows_them_as_errors() {
    let out = ovir(&["run", "ir_samples/bad/type_mismatch.xml", "--random-inputs"]);
    assert!(out.starts_with("exit code: 2\n"), "{out}");
    assert!(out.contains("error[E501]"), "{out}");
    assert!(!out.contains("warning[E"), "{out}");
}

#[test]
fn bench_per_layer_names_every_step() {
    let model = "ir_samples/real/blocks/layernorm_static/model.xml";
    let out = ovir(&["bench", model, "-n", "4", "--per-layer", "--format", "json"]);
    let (head, rest) = out.split_once("----- stdout -----\n").unwrap();
    assert_eq!(head, "exit code: 0\n", "{out}");
    let json = rest.split("----- stderr -----").next().unwrap();
    let v: serde_json::Value = serde_json::from_str(json).unwrap();
    let steps = v["steps"].as_array().unwrap();
    // Execution order, the fused chain as one step named by its last layer.
    let names: Vec<(&str, &str, u64)> = steps
        .iter()
        .map(|s| {
            assert!(s["mean_ms"].as_f64().unwrap() >= 0.0, "{s}");
            (
                s["layer"].as_str().unwrap(),
                s["op_type"].as_str().unwrap(),
                s["layers"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        names,
        [
            ("ln/ReduceMean", "ReduceMean", 1),
            ("ln/Subtract", "Subtract", 1),
            ("ln/Power", "Power", 1),
            ("ln/ReduceMean2", "ReduceMean", 1),
            ("ln/AddBeta", "Add+Sqrt+Divide+Multiply+Add", 5),
        ]
    );
    let text = ovir(&["bench", model, "-n", "2", "--per-layer"]);
    assert!(
        text.contains("slowest steps (mean ms per run; 5 steps, 9 layers):"),
        "{text}"
    );
    assert!(
        text.contains("%  ln/AddBeta  [Add+Sqrt+Divide+Multiply+Add]"),
        "{text}"
    );
    assert!(text.contains("by layer type (mean ms per run):"), "{text}");
    assert!(text.contains("%  ReduceMean ×2"), "{text}");
    // Without the flag, no steps.
    let plain = ovir(&["bench", model, "-n", "2", "--format", "json"]);
    assert!(!plain.contains("\"steps\""), "{plain}");
}

#[test]
fn bench_refuses_zero_threads() {
    let out = ovir(&["bench", "ir_samples/int_divide/model.xml", "--threads", "0"]);
    assert!(out.starts_with("exit code: 2\n"), "{out}");
    assert!(out.contains("--threads must be at least 1"), "{out}");
}

/// A Const `run` cannot hold as a tensor: the message says which type, never a wrong reason
/// ("too large") or a warning code.
#[test]
fn run_names_const_types_it_does_not_compute() {
    let dir = temp_dir("const-types");
    for (ty, precision, shape, want) in [
        (
            "string",
            "STRING",
            1,
            "ovir does not compute with string Consts",
        ),
        (
            "u4",
            "U4",
            4,
            "does not compute anything but a Convert on u4",
        ),
    ] {
        let xml = format!(
            r#"<?xml version="1.0"?>
<net name="m" version="11">
	<layers>
		<layer id="0" name="w" type="Const" version="opset1">
			<data element_type="{ty}" shape="{shape}" offset="0" size="2" />
			<output><port id="0" precision="{precision}"><dim>{shape}</dim></port></output>
		</layer>
		<layer id="1" name="out" type="Result" version="opset1">
			<input><port id="0" precision="{precision}"><dim>{shape}</dim></port></input>
		</layer>
	</layers>
	<edges><edge from-layer="0" from-port="0" to-layer="1" to-port="0" /></edges>
</net>
"#
        );
        let path = dir.join(format!("{ty}.xml"));
        std::fs::write(&path, xml).unwrap();
        std::fs::write(dir.join(format!("{ty}.bin")), [0x21, 0x43]).unwrap();
        let out = ovir(&["run", path.to_str().unwrap()]);
        assert!(out.starts_with("exit code: 2\n"), "{out}");
        assert!(out.contains("error[E603]") && out.contains(want), "{out}");
    }
}
