//! Every sample with `inputs/` runs and matches `expected/` bit for bit (expected values come
//! from OpenVINO's reference evaluation, see ir_samples/generate.py).

use std::path::Path;

use ovir::io::npy;
use ovir::{InputKey, Model, Tensor};

fn run_sample(dir: &Path) -> Result<(), String> {
    let model = Model::load(dir.join("model.xml")).map_err(|e| e.to_string())?;
    let mut inputs: Vec<(InputKey, Tensor)> = Vec::new();
    for entry in std::fs::read_dir(dir.join("inputs")).map_err(|e| e.to_string())? {
        let path = entry.map_err(|e| e.to_string())?.path();
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        inputs.push((
            InputKey::Name(name),
            npy::read(&path, u64::MAX).map_err(|e| e.to_string())?,
        ));
    }
    let outputs = model.run(inputs).map_err(|e| e.to_string())?;
    for (k, out) in outputs.iter().enumerate() {
        let want = npy::read(
            &dir.join("expected").join(format!("output{k}.npy")),
            u64::MAX,
        )
        .map_err(|e| e.to_string())?;
        if out.tensor.element_type() != want.element_type() || out.tensor.shape() != want.shape() {
            return Err(format!(
                "output {k} ({}): got {} {:?}, expected {} {:?}",
                out.name,
                out.tensor.element_type(),
                out.tensor.shape(),
                want.element_type(),
                want.shape()
            ));
        }
        if out.tensor.to_le_bytes() != want.to_le_bytes() {
            return Err(format!(
                "output {k} ({}): values differ:\n got {:?}\nwant {:?}",
                out.name, out.tensor, want
            ));
        }
    }
    Ok(())
}

fn sample_dirs(root: &Path) -> Vec<std::path::PathBuf> {
    let mut dirs: Vec<_> = std::fs::read_dir(root)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("inputs").is_dir())
        .collect();
    dirs.sort();
    dirs
}

#[test]
fn every_sample_matches_its_expected_outputs() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("ir_samples");
    let dirs = sample_dirs(&root);
    assert!(dirs.len() >= 13, "only {} samples have inputs", dirs.len());
    let failures: Vec<String> = dirs
        .iter()
        .filter_map(|d| run_sample(d).err().map(|e| format!("{}: {e}", d.display())))
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The ONNX backend node tests for Sub and Div, converted by `ov.convert_model`; expected
/// outputs are the ONNX tests' own.
#[test]
fn onnx_node_tests_for_sub_and_div() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("ir_samples/onnx_node");
    let dirs = sample_dirs(&root);
    assert!(dirs.len() >= 19, "only {} ONNX node tests", dirs.len());
    let failures: Vec<String> = dirs
        .iter()
        .filter_map(|d| run_sample(d).err().map(|e| format!("{}: {e}", d.display())))
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
