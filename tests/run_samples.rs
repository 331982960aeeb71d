//! Every sample with `inputs/` runs and matches `expected/` bit for bit (expected values come
//! from OpenVINO's reference evaluation, see ir_samples/generate.py), or, where the folder has a
//! `tolerance.txt` saying `ulps N` (transcendental functions against a correctly rounded
//! reference, ONNX tests computed in float32 by numpy), within N units in the last place, or
//! `close RTOL ATOL` (ONNX tests whose numpy formulas cancel or sum in another order:
//! normalisations, attention), each element within `ATOL + RTOL·|expected|`. Each sample also
//! runs on its inputs lent as bytes ([`Model::run_values`]) and layer by layer
//! ([`Model::run_observed`]), which must give the same bits.

use std::path::Path;

use ovir::io::npy;
use ovir::{InputKey, Model, Tensor, Value};

/// Bit-equal, except that any NaN equals any NaN (payloads are not specified).
fn same_bits(a: &Tensor, b: &Tensor) -> bool {
    if a.to_le_bytes() == b.to_le_bytes() {
        return true;
    }
    fn floats<T: ovir::Element + Into<f64>>(a: &Tensor, b: &Tensor) -> Option<bool> {
        let (x, y) = (a.view::<T>()?, b.view::<T>()?);
        Some(x.iter().zip(y.iter()).all(|(&p, &q)| {
            let (p, q): (f64, f64) = (p.into(), q.into());
            (p.is_nan() && q.is_nan()) || p.to_bits() == q.to_bits()
        }))
    }
    match a {
        Tensor::F32(_) => floats::<f32>(a, b).unwrap_or(false),
        Tensor::F64(_) => floats::<f64>(a, b).unwrap_or(false),
        Tensor::F16(_) => floats::<ovir::half::f16>(a, b).unwrap_or(false),
        _ => false,
    }
}

/// The distance in units in the last place between two floats of one type, as their positions
/// on the ordered line of that type's values (±0 are one point; NaN is only near NaN).
fn ulps(a: &Tensor, b: &Tensor) -> Option<u64> {
    fn order(bits: u64, sign: u64) -> i128 {
        if bits & sign != 0 {
            -((bits & !sign) as i128)
        } else {
            bits as i128
        }
    }
    fn dist<T: ovir::Element + Into<f64>>(
        a: &Tensor,
        b: &Tensor,
        bits: impl Fn(T) -> u64,
        sign: u64,
    ) -> Option<u64> {
        let (x, y) = (a.view::<T>()?, b.view::<T>()?);
        x.iter().zip(y.iter()).try_fold(0u64, |m, (&p, &q)| {
            let (pf, qf): (f64, f64) = (p.into(), q.into());
            if pf.is_nan() || qf.is_nan() {
                return (pf.is_nan() && qf.is_nan()).then_some(m);
            }
            let d = (order(bits(p), sign) - order(bits(q), sign)).unsigned_abs() as u64;
            Some(m.max(d))
        })
    }
    match a {
        Tensor::F32(_) => dist::<f32>(a, b, |v| v.to_bits() as u64, 1 << 31),
        Tensor::F64(_) => dist::<f64>(a, b, |v| v.to_bits(), 1 << 63),
        Tensor::F16(_) => dist::<ovir::half::f16>(a, b, |v| v.to_bits() as u64, 1 << 15),
        _ => None,
    }
}

/// How far outputs may be from the expected ones.
#[derive(Clone, Copy, Debug)]
enum Tolerance {
    Ulps(u64),
    Close { rtol: f64, atol: f64 },
}

fn parse_tolerance(text: &str) -> Option<Tolerance> {
    let words: Vec<&str> = text.split_whitespace().collect();
    match words.as_slice() {
        ["ulps", n] => n.parse().ok().map(Tolerance::Ulps),
        ["close", r, a] => Some(Tolerance::Close {
            rtol: r.parse().ok()?,
            atol: a.parse().ok()?,
        }),
        _ => None,
    }
}

/// The first element (flat index, got, want) outside `atol + rtol·|want|` (NaN only matches
/// NaN, an infinity only itself), or `None`.
fn not_close(a: &Tensor, b: &Tensor, rtol: f64, atol: f64) -> Option<(usize, f64, f64)> {
    let as_f64 = |t: &Tensor| -> Vec<f64> {
        match t {
            Tensor::F32(x) => x.iter().map(|&v| v as f64).collect(),
            Tensor::F64(x) => x.iter().copied().collect(),
            Tensor::F16(x) => x.iter().map(|v| v.to_f64()).collect(),
            _ => Vec::new(),
        }
    };
    let (x, y) = (as_f64(a), as_f64(b));
    if x.len() != a.len() {
        return Some((0, f64::NAN, f64::NAN));
    }
    x.iter().zip(&y).enumerate().find_map(|(i, (&g, &w))| {
        let ok = if g.is_nan() || w.is_nan() {
            g.is_nan() && w.is_nan()
        } else if g.is_infinite() || w.is_infinite() {
            g == w
        } else {
            (g - w).abs() <= atol + rtol * w.abs()
        };
        (!ok).then_some((i, g, w))
    })
}

fn run_sample(dir: &Path) -> Result<(), String> {
    let tolerance = match std::fs::read_to_string(dir.join("tolerance.txt")) {
        Ok(text) => Some(parse_tolerance(&text).ok_or_else(|| {
            format!("tolerance.txt: expected `ulps N` or `close RTOL ATOL`, found {text:?}")
        })?),
        Err(_) => None,
    };
    let model = Model::load(dir.join("model.xml")).map_err(|e| e.to_string())?;
    let g = model.graph();
    let mut inputs: Vec<(InputKey, Tensor)> = Vec::new();
    // A model without inputs has no inputs/ folder (git keeps no empty folders).
    let files = std::fs::read_dir(dir.join("inputs")).into_iter().flatten();
    for entry in files {
        let path = entry.map_err(|e| e.to_string())?.path();
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        // A float32 file feeds a bf16 input, as `ovir run` does it.
        let want = (0..g.inputs.len())
            .find(|&i| g.input_names(i).contains(&name.as_str()))
            .and_then(|i| g.nodes[g.inputs[i]].parameter().map(|p| p.element_type));
        let t = npy::read(&path, u64::MAX).map_err(|e| e.to_string())?;
        inputs.push((InputKey::Name(name), npy::for_input(t, want)));
    }
    // The same inputs lent as bytes (read in place, or copied once by layers that need a
    // tensor) give the same bits.
    let bytes: Vec<Vec<u8>> = inputs.iter().map(|(_, t)| t.to_le_bytes()).collect();
    let lent = inputs.iter().zip(&bytes).map(|((k, t), b)| {
        let v = Value::borrowed(t.element_type(), t.shape(), b).expect("bytes of a tensor");
        (k.clone(), v)
    });
    let from_lent = model
        .run_values(lent)
        .map_err(|e| format!("lent inputs: {e}"))?;
    // Layer by layer (no fusion, no folded constants, no weights prepared by their layers:
    // MatMul's packed constant B) give the same bits too.
    let plain = model
        .run_observed(inputs.clone(), |_| Ok(()))
        .map_err(|e| format!("layer by layer: {e}"))?;
    let outputs = model.run(inputs).map_err(|e| e.to_string())?;
    for (a, b) in outputs.iter().zip(&from_lent) {
        if a.tensor.to_le_bytes() != b.tensor.to_le_bytes() || a.tensor.shape() != b.tensor.shape()
        {
            return Err(format!("output {}: lent inputs give other values", a.name));
        }
    }
    for (a, b) in outputs.iter().zip(&plain) {
        if !same_bits(&a.tensor, &b.tensor) || a.tensor.shape() != b.tensor.shape() {
            return Err(format!(
                "output {}: layer by layer gives other values",
                a.name
            ));
        }
    }
    // expected/ holds what `ovir run -o` writes: one file per output, named by the output.
    let files = npy::output_file_names(outputs.iter().map(|o| o.name.as_str()));
    let present = std::fs::read_dir(dir.join("expected"))
        .map_err(|e| e.to_string())?
        .count();
    if present != files.len() {
        return Err(format!(
            "expected/ has {present} files for {} outputs",
            files.len()
        ));
    }
    for (k, (out, file)) in outputs.iter().zip(&files).enumerate() {
        let want = npy::read(&dir.join("expected").join(file), u64::MAX)
            .map_err(|e| format!("expected/{file}: {e}"))?;
        // Compared as .npy stores it (bf16 as float32).
        let got = npy::as_stored(&out.tensor);
        if got.element_type() != want.element_type() || got.shape() != want.shape() {
            return Err(format!(
                "output {k} ({}): got {} {:?}, expected {} {:?}",
                out.name,
                got.element_type(),
                got.shape(),
                want.element_type(),
                want.shape()
            ));
        }
        if let Some(Tolerance::Close { rtol, atol }) = tolerance {
            match not_close(&got, &want, rtol, atol) {
                None => continue,
                Some((i, g, w)) => {
                    return Err(format!(
                        "output {k} ({}): element {i} is {g}, expected {w} (tolerance {rtol} relative, {atol} absolute)",
                        out.name
                    ));
                }
            }
        }
        if let Some(Tolerance::Ulps(n)) = tolerance
            && !same_bits(&got, &want)
        {
            match ulps(&got, &want) {
                Some(d) if d <= n => continue,
                d => {
                    return Err(format!(
                        "output {k} ({}): values differ by {d:?} ulps (tolerance {n}):\n got {got:?}\nwant {want:?}",
                        out.name
                    ));
                }
            }
        }
        if !same_bits(&got, &want) {
            return Err(format!(
                "output {k} ({}): values differ:\n got {got:?}\nwant {want:?}",
                out.name
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
        .filter(|p| p.join("expected").is_dir())
        .collect();
    dirs.sort();
    dirs
}

/// Runs every sample folder under `ir_samples/<sub>` (at least `at_least` of them).
fn run_all(sub: &str, at_least: usize) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("ir_samples")
        .join(sub);
    let dirs = sample_dirs(&root);
    assert!(
        dirs.len() >= at_least,
        "only {} samples under ir_samples/{sub}",
        dirs.len()
    );
    let failures: Vec<String> = dirs
        .iter()
        .filter_map(|d| run_sample(d).err().map(|e| format!("{}: {e}", d.display())))
        .collect();
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn every_sample_matches_its_expected_outputs() {
    run_all("", 13);
}

/// The ONNX backend node tests of the elementwise and data-movement ops ovir runs, converted
/// by `ov.convert_model`; expected outputs are the ONNX tests' own (onnx_node/SKIPPED.md lists
/// those left out, and why).
#[test]
fn onnx_node_tests() {
    run_all("onnx_node", 970);
}

/// Every elementwise op on every type it allows (binary ops under none/numpy/pdpd), and Convert
/// between every pair of types, on edge values (ir_samples/ops, expected from the spec in numpy
/// and mpmath).
#[test]
fn op_matrix() {
    run_all("ops", 1250);
}
