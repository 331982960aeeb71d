//! `ovir run`: compute a model's outputs from `.npy` inputs (or random ones).

use std::path::{Path, PathBuf};

use clap::Args;
use ovir::check::parse_shape_arg;
use ovir::io::{npy, random, text};
use ovir::ops::Op;
use ovir::shape::PartialShape;
use ovir::{ElementType, InputKey, Severity, Tensor};

use super::report::{render, render_errors};
use super::{ARRAY_LIMIT, ExitStatus, load_model, print_stdout};

#[derive(Debug, Args)]
pub struct RunArgs {
    /// The model's .xml file.
    pub model: PathBuf,
    /// The weights file (default: the .bin beside the .xml).
    #[arg(long, value_name = "BIN")]
    pub weights: Option<PathBuf>,
    /// An input: `NAME=FILE.npy` binds by tensor or layer name; a bare `FILE.npy` binds by
    /// position (the n-th bare file to the n-th input). The .npy dtype must be the input's
    /// element type; for bf16 inputs give a float32 .npy (it is rounded to nearest even).
    #[arg(short = 'i', long = "input", value_name = "[NAME=]FILE.npy")]
    pub inputs: Vec<String>,
    /// A folder holding `<input name>.npy` for every input.
    #[arg(long = "inputs", value_name = "DIR")]
    pub input_dir: Option<PathBuf>,
    /// Run on random inputs (floats in [-8, 8), non-zero integers) instead of files.
    #[arg(long)]
    pub random_inputs: bool,
    /// Seed for --random-inputs.
    #[arg(long, default_value_t = 0, requires = "random_inputs")]
    pub seed: u64,
    /// Write each output to `DIR/<output name>.npy` (bf16 as float32), atomically. Without it,
    /// outputs are printed as text.
    #[arg(short = 'o', long = "output-dir", value_name = "DIR")]
    pub output_dir: Option<PathBuf>,
    /// The shape of a dynamic input for --random-inputs, e.g. `--shape x=[1,3,8]` (repeatable).
    #[arg(long, value_name = "NAME=SHAPE", value_parser = parse_shape_arg)]
    pub shape: Vec<(String, PartialShape)>,
    /// Print every value; by default tensors of more than 1000 elements are summarised (first
    /// and last rows and columns, element count, min, max and a digest).
    #[arg(long)]
    pub full: bool,
}

fn fail(msg: impl std::fmt::Display) -> ExitStatus {
    eprintln!("error: {msg}");
    ExitStatus::Error
}

/// A `.npy` file as an input of element type `want` (float32 files feed bf16 inputs).
fn load_input(path: &Path, want: Option<ElementType>) -> Result<Tensor, String> {
    let t = npy::read(path, ARRAY_LIMIT).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(npy::for_input(t, want))
}

/// A concrete shape for a random input: `--shape` if given, else the partial shape with each
/// dynamic dim at its lower bound (at least 1).
fn random_shape(
    name: &str,
    declared: &PartialShape,
    given: Option<&PartialShape>,
) -> Result<Vec<usize>, String> {
    let shape = given.unwrap_or(declared);
    let dims = shape.dims().ok_or_else(|| {
        format!("input {name:?} has a dynamic rank; give its shape with --shape {name}=[...]")
    })?;
    Ok(dims
        .iter()
        .map(|d| d.get_static().unwrap_or_else(|| d.min().max(1)) as usize)
        .collect())
}

pub fn run(args: &RunArgs) -> ExitStatus {
    let model = match load_model(&args.model, args.weights.as_deref()) {
        Ok(m) => m,
        Err(status) => return status,
    };
    let g = model.graph();
    // Declared-dim mismatches and other findings: warnings; the run goes on.
    let (_, findings) = model.infer();
    let warnings: Vec<_> = findings
        .iter()
        .filter(|d| !matches!(d.error.code(), "W301" | "W302"))
        .collect();
    if !warnings.is_empty() {
        eprint!(
            "{}",
            render(warnings.iter().map(|d| (Severity::Warning, &d.error)))
        );
    }
    let element_type = |i: usize| match &g.nodes[g.inputs[i]].op {
        Op::Parameter(p) => Some(p.element_type),
        _ => None,
    };
    let find = |name: &str| (0..g.inputs.len()).find(|&i| g.input_names(i).contains(&name));

    let mut bound: Vec<(InputKey, Tensor)> = Vec::new();
    let mut position = 0;
    for spec in &args.inputs {
        let (key, file) = match spec.split_once('=') {
            Some((name, file)) => (InputKey::Name(name.to_owned()), file),
            None => {
                position += 1;
                (InputKey::Index(position - 1), spec.as_str())
            }
        };
        let index = match &key {
            InputKey::Name(n) => find(n),
            InputKey::Index(i) => Some(*i).filter(|&i| i < g.inputs.len()),
        };
        match load_input(Path::new(file), index.and_then(element_type)) {
            Ok(t) => bound.push((key, t)),
            Err(e) => return fail(e),
        }
    }
    if let Some(dir) = &args.input_dir {
        for i in 0..g.inputs.len() {
            if bound.iter().any(|(k, _)| match k {
                InputKey::Index(j) => *j == i,
                InputKey::Name(n) => find(n) == Some(i),
            }) {
                continue;
            }
            let names = g.input_names(i);
            let Some(path) = names
                .iter()
                .map(|n| dir.join(format!("{n}.npy")))
                .find(|p| p.exists())
            else {
                return fail(format!(
                    "{}: no file for input {:?} (looked for {})",
                    dir.display(),
                    names.first().copied().unwrap_or_default(),
                    names
                        .iter()
                        .map(|n| format!("{n}.npy"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            };
            match load_input(&path, element_type(i)) {
                Ok(t) => bound.push((InputKey::Index(i), t)),
                Err(e) => return fail(e),
            }
        }
    }
    if args.random_inputs {
        let mut rng = random::Rng::new(args.seed);
        for i in 0..g.inputs.len() {
            let names = g.input_names(i);
            let name = names.first().copied().unwrap_or_default();
            let Op::Parameter(p) = &g.nodes[g.inputs[i]].op else {
                continue;
            };
            let given = args
                .shape
                .iter()
                .find(|(n, _)| names.contains(&n.as_str()))
                .map(|(_, s)| s);
            let shape = match random_shape(name, &p.shape, given) {
                Ok(s) => s,
                Err(e) => return fail(e),
            };
            let Some(t) = random::tensor(p.element_type, &shape, &mut rng) else {
                return fail(format!(
                    "input {name:?}: ovir cannot make random {} values",
                    p.element_type
                ));
            };
            bound.push((InputKey::Index(i), t));
        }
    }
    for (n, _) in &args.shape {
        if find(n).is_none() {
            return fail(format!("--shape {n}: the model has no input of this name"));
        }
    }

    let outputs = match model.run(bound) {
        Ok(o) => o,
        Err(e) => {
            eprint!("{}", render_errors(&e));
            return ExitStatus::Error;
        }
    };

    match &args.output_dir {
        Some(dir) => {
            if let Err(e) = std::fs::create_dir_all(dir) {
                return fail(format!("cannot create {}: {e}", dir.display()));
            }
            let mut used = std::collections::HashSet::new();
            for (k, o) in outputs.iter().enumerate() {
                let mut stem: String = o
                    .name
                    .chars()
                    .map(|c| {
                        if matches!(c, '/' | '\\' | '\0') {
                            '_'
                        } else {
                            c
                        }
                    })
                    .collect();
                if stem.is_empty() || stem.starts_with('.') {
                    stem = format!("output_{k}");
                }
                if !used.insert(stem.clone()) {
                    stem = format!("{stem}_{k}");
                    used.insert(stem.clone());
                }
                let path = dir.join(format!("{stem}.npy"));
                if let Err(e) = npy::write_atomic(&path, &npy::to_bytes(&o.tensor)) {
                    return fail(format!("cannot write {}: {e}", path.display()));
                }
            }
            ExitStatus::Success
        }
        None => {
            let text: String = outputs
                .iter()
                .map(|o| text::render(&o.name, &o.tensor, text::TextOptions { full: args.full }))
                .collect();
            print_stdout(&text)
        }
    }
}
