//! Snapshotting model outputs with insta, as a user of the library would (docs/snapshots.md):
//! `Display` for `assert_snapshot!`, `Serialize` for `assert_yaml_snapshot!` and
//! `assert_json_snapshot!`.

use std::path::Path;

use ovir::io::npy;
use ovir::{InputKey, Model, Output, Tensor};

/// Runs a shipped sample on its `inputs/*.npy` (bound by file name).
fn run(sample: &str) -> Vec<Output> {
    let dir = Path::new("ir_samples").join(sample);
    let model = Model::load(dir.join("model.xml")).unwrap();
    let mut inputs: Vec<(InputKey, Tensor)> = Vec::new();
    for entry in std::fs::read_dir(dir.join("inputs")).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        inputs.push((name.into(), npy::read(&path, 1 << 20).unwrap()));
    }
    model.run(inputs).unwrap()
}

#[test]
fn text_snapshot() {
    let text: String = run("sub_div_f16_compressed")
        .iter()
        .map(|o| o.to_string())
        .collect();
    insta::assert_snapshot!(text);
}

#[test]
fn yaml_snapshot() {
    insta::assert_yaml_snapshot!(run("ops/divide_f16_none_floor"));
}

#[test]
fn json_snapshot() {
    insta::assert_json_snapshot!(run("int_divide"));
}
