//! `ovir diff`, `ovir run --expect` and `ovir run --dump-all`: reports pinned as snapshots.

mod common;

use std::path::{Path, PathBuf};

use common::{ovir, ovir_in, root, scratch};
use ndarray::{ArrayD, IxDyn};
use ovir::Tensor;
use ovir::io::npy;

fn t<T: ovir::Element>(shape: &[usize], v: Vec<T>) -> Tensor {
    T::wrap(ArrayD::from_shape_vec(IxDyn(shape), v).unwrap())
}

fn save(dir: &Path, name: &str, tensor: &Tensor) {
    let path = dir.join(name);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, npy::to_bytes(tensor)).unwrap();
}

/// Folders `a/` and `b/` under a scratch folder, filled by `fill`.
fn pair(test: &str, fill: impl FnOnce(&Path, &Path)) -> PathBuf {
    let dir = scratch("diff", test);
    let (a, b) = (dir.join("a"), dir.join("b"));
    std::fs::create_dir_all(&a).unwrap();
    std::fs::create_dir_all(&b).unwrap();
    fill(&a, &b);
    dir
}

fn x() -> Tensor {
    t(&[2, 3], vec![1.0f32, 2.0, 3.0, 4.0, 5.0, f32::NAN])
}

#[test]
fn diff_equal() {
    let dir = pair("equal", |a, b| {
        for d in [a, b] {
            save(d, "x.npy", &x());
            save(d, "sub/i.npy", &t(&[3], vec![1i64, -2, i64::MIN]));
            save(d, "z.npy", &t(&[2], vec![0.0f32, 1.0]));
        }
        // -0.0 equals 0.0.
        save(b, "z.npy", &t(&[2], vec![-0.0f32, 1.0]));
    });
    insta::assert_snapshot!(ovir_in(&dir, &["diff", "a", "b"]));
}

#[test]
fn diff_within_tolerance() {
    let dir = pair("tolerance", |a, b| {
        save(a, "x.npy", &t(&[3], vec![1.0f32, 100.0, 1e-9]));
        save(
            b,
            "x.npy",
            &t(&[3], vec![1.0f32 + f32::EPSILON, 100.001, 2e-9]),
        );
    });
    let exact = ovir_in(&dir, &["diff", "a", "b"]);
    let close = ovir_in(
        &dir,
        &["diff", "a", "b", "--rtol", "1e-5", "--atol", "1e-8"],
    );
    let ulps = ovir_in(&dir, &["diff", "a/x.npy", "b/x.npy", "--ulps", "1"]);
    insta::assert_snapshot!(format!("{exact}\n{close}\n{ulps}"));
}

#[test]
fn diff_dtype_and_shape_mismatch() {
    let dir = pair("dtype_shape", |a, b| {
        save(a, "dtype.npy", &x());
        save(b, "dtype.npy", &t(&[2, 3], vec![1.0f64; 6]));
        save(a, "shape.npy", &x());
        save(b, "shape.npy", &t(&[3, 2], vec![1.0f32; 6]));
    });
    insta::assert_snapshot!(ovir_in(&dir, &["diff", "a", "b"]));
}

#[test]
fn diff_nan_handling() {
    let dir = pair("nan", |a, b| {
        save(a, "x.npy", &t(&[3], vec![f32::NAN, 1.0, f32::INFINITY]));
        save(
            b,
            "x.npy",
            &t(&[3], vec![f32::NAN, f32::NAN, f32::INFINITY]),
        );
        save(a, "y.npy", &t(&[2], vec![f32::NAN, f32::INFINITY]));
        save(b, "y.npy", &t(&[2], vec![f32::NAN, f32::INFINITY]));
    });
    let default = ovir_in(&dir, &["diff", "a", "b", "--atol", "100"]);
    let strict = ovir_in(&dir, &["diff", "a", "b", "--nan-differs"]);
    insta::assert_snapshot!(format!("{default}\n{strict}"));
}

#[test]
fn diff_missing_and_extra_files() {
    let dir = pair("missing", |a, b| {
        save(a, "both.npy", &x());
        save(b, "both.npy", &x());
        save(a, "only_a.npy", &x());
        save(b, "deep/only_b.npy", &x());
        std::fs::write(b.join("notes.txt"), "not compared").unwrap();
    });
    insta::assert_snapshot!(ovir_in(&dir, &["diff", "a", "b"]));
}

#[test]
fn diff_integers_booleans_and_mismatch_listing() {
    let dir = pair("exact", |a, b| {
        save(a, "i.npy", &t(&[2, 4], (0..8).collect::<Vec<i32>>()));
        save(b, "i.npy", &t(&[2, 4], vec![0, 1, 2, 4, 4, 6, 6, 8]));
        save(a, "u.npy", &t(&[1], vec![u64::MAX]));
        save(b, "u.npy", &t(&[1], vec![0u64]));
    });
    // numpy's bool: descr '|b1', one byte per value.
    let bools = |v: Vec<u8>| {
        let mut bytes = npy::to_bytes(&t(&[3], v));
        let at = bytes.windows(3).position(|w| w == b"|u1").unwrap();
        bytes[at..at + 3].copy_from_slice(b"|b1");
        bytes
    };
    std::fs::write(dir.join("a/b.npy"), bools(vec![1, 0, 1])).unwrap();
    std::fs::write(dir.join("b/b.npy"), bools(vec![1, 0, 0])).unwrap();
    let text = ovir_in(&dir, &["diff", "a", "b", "--show", "2", "--atol", "5"]);
    let json = ovir_in(&dir, &["diff", "a/b.npy", "b", "--format", "json"]);
    insta::assert_snapshot!(format!("{text}\n{json}"));
}

#[test]
fn diff_cannot_run() {
    let dir = pair("cannot_run", |a, b| {
        save(a, "x.npy", &x());
        std::fs::write(b.join("x.npy"), b"\x93NUMPY junk").unwrap();
    });
    let unreadable = ovir_in(&dir, &["diff", "a", "b"]);
    let missing = ovir_in(&dir, &["diff", "a", "nowhere"]);
    let empty = pair("cannot_run_empty", |_, _| {});
    let nothing = ovir_in(&empty, &["diff", "a", "b"]);
    let usage = ovir_in(&dir, &["diff", "a", "b", "--rtol", "-1"]);
    insta::assert_snapshot!(format!("{unreadable}\n{missing}\n{nothing}\n{usage}"));
}

#[test]
fn expect_passes_on_every_shipped_sample() {
    for sample in [
        "sub_div_f32",
        "int_divide",
        "multi_output",
        "ops/divide_bf16_numpy_floor",
    ] {
        let dir = format!("ir_samples/{sample}");
        let out = ovir(&[
            "run",
            &format!("{dir}/model.xml"),
            "--inputs",
            &format!("{dir}/inputs"),
            "--expect",
            &format!("{dir}/expected"),
        ]);
        assert!(out.starts_with("exit code: 0\n"), "{out}");
    }
}

#[test]
fn expect_failures() {
    let dir = scratch("diff", "expect");
    let sample = root().join("ir_samples/int_divide");
    // Expected files as `-o` writes them, then altered: one value, one missing, one extra.
    let expected = dir.join("expected");
    let wrote = ovir(&[
        "run",
        "ir_samples/int_divide/model.xml",
        "--inputs",
        "ir_samples/int_divide/inputs",
        "-o",
        expected.to_str().unwrap(),
    ]);
    assert!(wrote.starts_with("exit code: 0\n"), "{wrote}");
    let floor = npy::read(&expected.join("floor.npy"), 1 << 20).unwrap();
    let mut v = floor.view::<i32>().unwrap().to_owned();
    v[[2]] += 1;
    save(&expected, "floor.npy", &v.into());
    std::fs::remove_file(expected.join("trunc.npy")).unwrap();
    save(&expected, "stale.npy", &x());
    std::fs::copy(sample.join("model.xml"), dir.join("model.xml")).unwrap();
    std::fs::create_dir_all(dir.join("inputs")).unwrap();
    for f in ["a.npy", "b.npy"] {
        std::fs::copy(sample.join("inputs").join(f), dir.join("inputs").join(f)).unwrap();
    }
    insta::assert_snapshot!(ovir_in(
        &dir,
        &[
            "run",
            "model.xml",
            "--inputs",
            "inputs",
            "--expect",
            "expected"
        ]
    ));
}

#[test]
fn dump_all_then_diff_finds_where_runs_part() {
    let dir = scratch("diff", "dump");
    let sample = root().join("ir_samples/sub_div_f16_compressed");
    for f in ["model.xml", "model.bin"] {
        std::fs::copy(sample.join(f), dir.join(f)).unwrap();
    }
    std::fs::create_dir_all(dir.join("in1")).unwrap();
    let a = t(&[2, 3], vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]);
    let b = t(&[2, 3], vec![0.5f32; 6]);
    save(&dir, "in1/a.npy", &a);
    save(&dir, "in1/b.npy", &b);
    save(&dir, "in2/a.npy", &a);
    save(
        &dir,
        "in2/b.npy",
        &t(&[2, 3], vec![0.5f32, 0.5, 0.5, 0.5, 0.25, 0.5]),
    );
    let run1 = ovir_in(
        &dir,
        &["run", "model.xml", "--inputs", "in1", "--dump-all", "d1"],
    );
    let run2 = ovir_in(
        &dir,
        &["run", "model.xml", "--inputs", "in2", "--dump-all", "d2"],
    );
    assert!(run1.starts_with("exit code: 0\n") && run2.starts_with("exit code: 0\n"));
    let manifest = std::fs::read_to_string(dir.join("d1/manifest.json")).unwrap();
    let diff = ovir_in(&dir, &["diff", "d1", "d2"]);
    insta::assert_snapshot!(format!("{manifest}\n{diff}"));
}

#[test]
fn dump_all_keeps_what_was_computed_when_the_run_fails() {
    let dir = scratch("diff", "dump_fail");
    let sample = root().join("ir_samples/int_divide");
    std::fs::copy(sample.join("model.xml"), dir.join("model.xml")).unwrap();
    save(&dir, "in/a.npy", &t(&[7], vec![1i32; 7]));
    save(&dir, "in/b.npy", &t(&[7], vec![1i32, 1, 1, 0, 1, 1, 1]));
    let out = ovir_in(
        &dir,
        &["run", "model.xml", "--inputs", "in", "--dump-all", "d"],
    );
    assert!(out.starts_with("exit code: 2\n"), "{out}");
    assert!(out.contains("error[E601]"), "{out}");
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("d/manifest.json")).unwrap())
            .unwrap();
    assert_eq!(manifest["complete"], false);
    let files: Vec<&str> = manifest["layers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["file"].as_str().unwrap())
        .collect();
    assert_eq!(files, ["a.0.npy", "b.0.npy"]);
    for f in files {
        assert!(dir.join("d").join(f).is_file());
    }
}
