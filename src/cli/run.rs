//! `ovir run`: compute a model's outputs from `.npy` inputs (or random ones).

use std::path::{Path, PathBuf};

use clap::Args;
use ovir::check::parse_shape_arg;
use ovir::io::dump::Dump;
use ovir::io::{compare, npy, random, text};
use ovir::shape::PartialShape;
use ovir::{ElementType, InputKey, Severity, Tensor};

use super::diff::{ToleranceArgs, finish};
use ovir::memory::Budget;
use ovir::report::{render, render_errors};

use super::{ARRAY_LIMIT, ExitStatus, Format, load_model, print_stdout};

/// Where inputs come from (shared by `run` and `bench`).
#[derive(Debug, Args)]
pub struct InputArgs {
    /// An input: `NAME=FILE.npy` binds by tensor or layer name; a bare `FILE.npy` binds by
    /// position (the n-th bare file to the n-th input). The .npy dtype must be the input's
    /// element type; for bf16 inputs give a float32 .npy (it is rounded to nearest even).
    #[arg(short = 'i', long = "input", value_name = "[NAME=]FILE.npy")]
    pub inputs: Vec<String>,
    /// A folder holding `<input name>.npy` for every input (for the inputs it has, with
    /// --random-inputs).
    #[arg(long = "inputs", value_name = "DIR")]
    pub input_dir: Option<PathBuf>,
    /// Run on random inputs (floats in [-8, 8), non-zero integers, booleans) for every input
    /// not given by -i or --inputs.
    #[arg(long)]
    pub random_inputs: bool,
    /// Seed for random inputs (default 0).
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    /// The shape of a dynamic input for --random-inputs, e.g. `--shape x=[1,3,8]` (repeatable).
    #[arg(long, value_name = "NAME=SHAPE", value_parser = parse_shape_arg)]
    pub shape: Vec<(String, PartialShape)>,
    /// Memory budget for inputs and every tensor the run makes, e.g. `512M`, `8G` (default:
    /// the machine's physical memory). Checked before allocating; exceeding it is error E604.
    #[arg(long, value_name = "SIZE", value_parser = ovir::memory::parse_size)]
    pub max_memory: Option<u64>,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// The model's .xml file.
    pub model: PathBuf,
    /// The weights file (default: the .bin beside the .xml).
    #[arg(long, value_name = "BIN")]
    pub weights: Option<PathBuf>,
    #[command(flatten)]
    pub input: InputArgs,
    /// Write each output to `DIR/<output name>.npy` (bf16 as float32), atomically. Without it,
    /// outputs are printed as text.
    #[arg(short = 'o', long = "output-dir", value_name = "DIR")]
    pub output_dir: Option<PathBuf>,
    /// Print every value; by default tensors of more than 1000 elements are summarised (first
    /// and last rows and columns, element count, min, max and a digest).
    #[arg(long)]
    pub full: bool,
    /// Compare the outputs with the .npy files in DIR (as `-o` names them; DIR is the
    /// reference) instead of printing them: exit 0 same, 1 different, 2 could not run.
    #[arg(long, value_name = "DIR")]
    pub expect: Option<PathBuf>,
    #[command(flatten)]
    pub tolerance: ToleranceArgs,
    /// Also write every layer's output as it is computed, to `DIR/<layer name>.<output
    /// index>.npy`, with `DIR/manifest.json` listing them in execution order (`ovir diff` of
    /// two such folders then lists the first layer where they part first).
    #[arg(long, value_name = "DIR")]
    pub dump_all: Option<PathBuf>,
}

fn fail(msg: impl std::fmt::Display) -> ExitStatus {
    eprintln!("error: {msg}");
    ExitStatus::Error
}

/// A `.npy` file as an input of element type `want` (float32 files feed bf16 inputs). An
/// array larger than what is left of the memory budget is refused before it is read (E604).
fn load_input(
    path: &Path,
    want: Option<ElementType>,
    budget: &mut Budget,
) -> Result<Tensor, ExitStatus> {
    let left = budget.limit.saturating_sub(budget.in_use).min(ARRAY_LIMIT);
    let t = npy::read(path, left).map_err(|e| match npy::data_bytes(path) {
        Some(needed) if needed > left && left < ARRAY_LIMIT => {
            let kind = ovir::ErrorKind::MemoryBudget(ovir::memory::OverBudget {
                what: "input",
                needed,
                in_use: budget.in_use,
                limit: budget.limit,
            });
            let at = ovir::Location::file(&std::sync::Arc::from(path));
            eprint!("{}", render_errors(&ovir::Error::at(kind, at)));
            ExitStatus::Error
        }
        _ => fail(format!("{}: {e}", path.display())),
    })?;
    let t = npy::for_input(t, want);
    budget.add(t.bytes());
    Ok(t)
}

/// A concrete shape for a random input: `--shape` if given, else the partial shape with each
/// dynamic dim at its lower bound (at least 1).
fn random_shape(
    name: &str,
    declared: &PartialShape,
    given: Option<&PartialShape>,
) -> Result<Vec<usize>, String> {
    let dims = random::dims(given.unwrap_or(declared)).ok_or_else(|| {
        format!("input {name:?} has a dynamic rank; give its shape with --shape {name}=[...]")
    })?;
    Ok(dims.into_iter().map(|d| d as usize).collect())
}

pub fn run(args: &RunArgs) -> ExitStatus {
    let model = match load_model(&args.model, args.weights.as_deref(), args.input.max_memory) {
        Ok(m) => m,
        Err(status) => return status,
    };
    if let Err(status) = ready(&model, &args.input) {
        return status;
    }
    let bound = match gather(&model, &args.input, args.input.random_inputs) {
        Ok(b) => b,
        Err(status) => return status,
    };
    let run = match &args.dump_all {
        Some(dir) => dump_all(&model, bound, dir),
        None => model.run(bound),
    };
    let outputs = match run {
        Ok(o) => o,
        Err(e) => {
            eprint!("{}", render_errors(&e));
            return ExitStatus::Error;
        }
    };
    let files = npy::output_file_names(outputs.iter().map(|o| o.name.as_str()));

    if let Some(dir) = &args.output_dir {
        if let Err(e) = std::fs::create_dir_all(dir) {
            return fail(format!(
                "cannot create the output folder {}: {e}",
                dir.display()
            ));
        }
        for (o, file) in outputs.iter().zip(&files) {
            let path = dir.join(file);
            if let Err(e) = npy::write_atomic_with(&path, |w| npy::write(&o.tensor, w)) {
                return fail(format!("cannot write {}: {e}", path.display()));
            }
        }
    }
    match &args.expect {
        Some(dir) => expect(args, dir, &outputs),
        None if args.output_dir.is_some() => ExitStatus::Success,
        None => {
            let options = text::TextOptions { full: args.full };
            let text: String = outputs
                .iter()
                .map(|o| text::render(&o.name, &o.tensor, options))
                .collect();
            print_stdout(&text)
        }
    }
}

/// Whether the model can run, before any input is read: every live layer is one ovir runs
/// (else E605), inference finds no error (declared-dim mismatches excepted: OpenVINO ignores
/// declared dims, so they are printed and the run goes on), and the input flags fit together.
pub fn ready(model: &ovir::Model, args: &InputArgs) -> Result<(), ExitStatus> {
    if let Err(e) = model.runnable() {
        eprint!("{}", render_errors(&e));
        return Err(ExitStatus::Error);
    }
    let g = model.graph();
    for (n, _) in &args.shape {
        if !(0..g.inputs.len()).any(|i| g.input_names(i).contains(&n.as_str())) {
            return Err(fail(format!(
                "--shape {n}: the model has no input of this name"
            )));
        }
    }
    if args.seed.is_some() && !args.random_inputs {
        return Err(fail("--seed needs --random-inputs"));
    }
    let (_, findings) = model.infer();
    // Declared port dims that differ from the inferred shapes: OpenVINO ignores them, and so
    // does a run (`check` reports each).
    let declared = |d: &&ovir::Diagnostic| d.error.kind().is_declared_mismatch();
    let errors: Vec<_> = findings
        .iter()
        .filter(|d| d.severity == Severity::Error && !declared(d))
        .collect();
    if !errors.is_empty() {
        eprint!("{}", render(errors.iter().map(|d| (d.severity, &d.error))));
        eprintln!(
            "error: the model has {} type or shape error{} (above); it cannot run",
            errors.len(),
            if errors.len() == 1 { "" } else { "s" }
        );
        return Err(ExitStatus::Error);
    }
    let warnings: Vec<_> = findings
        .iter()
        .filter(|d| d.severity == Severity::Warning && !declared(d))
        .filter(|d| !matches!(d.error.code(), "W301" | "W302"))
        .collect();
    if !warnings.is_empty() {
        eprint!(
            "{}",
            render(warnings.iter().map(|d| (d.severity, &d.error)))
        );
    }
    let ports = findings.iter().filter(declared).count();
    if ports > 0 {
        eprintln!(
            "warning: {ports} port{} of {} declare{} dims or a precision other than inferred; OpenVINO ignores them and so does the run (`ovir check {}` lists them)",
            if ports == 1 { "" } else { "s" },
            g.file.display(),
            if ports == 1 { "s" } else { "" },
            g.file.display()
        );
    }
    Ok(())
}

/// Compares the outputs with `dir`'s files and prints the report.
fn expect(args: &RunArgs, dir: &Path, outputs: &[ovir::Output]) -> ExitStatus {
    let report = match compare::compare_outputs(
        dir,
        outputs,
        format!("outputs of {}", args.model.display()),
        &args.tolerance.tolerance(),
        args.tolerance.show,
        ARRAY_LIMIT,
    ) {
        Ok(r) => r,
        Err(e) => return fail(format!("cannot read {}: {e}", dir.display())),
    };
    finish(&report, Format::Text)
}

/// Runs the model, writing every layer output to `dir` and a manifest of them at the end
/// (also when the run fails part-way, so the layers before the failure can be inspected).
fn dump_all(
    model: &ovir::Model,
    inputs: Vec<(InputKey, Tensor)>,
    dir: &Path,
) -> Result<Vec<ovir::Output>, ovir::Error> {
    let mut dump = Dump::create(dir)?;
    let result = model.run_observed(inputs, |p| dump.record(p));
    dump.finish(&model.graph().file, result.is_ok())?;
    result
}

/// The inputs `args` name, loaded and (with `random`) the rest made up from the seed.
pub fn gather(
    model: &ovir::Model,
    args: &InputArgs,
    random: bool,
) -> Result<Vec<(InputKey, Tensor)>, ExitStatus> {
    let g = model.graph();
    let element_type = |i: usize| g.nodes[g.inputs[i]].parameter().map(|p| p.element_type);
    let find = |name: &str| (0..g.inputs.len()).find(|&i| g.input_names(i).contains(&name));

    let mut bound: Vec<(InputKey, Tensor)> = Vec::new();
    let mut budget = Budget {
        limit: model.memory_limit(),
        in_use: 0,
    };
    let mut position = 0;
    // Which -i gave each input, to name both when one is given twice.
    let mut given: Vec<Option<&str>> = vec![None; g.inputs.len()];
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
        if let Some(i) = index {
            if let Some(first) = given[i] {
                let name = g.input_names(i).first().copied().unwrap_or_default();
                return Err(fail(format!(
                    "input {name:?} is given twice: by -i {first} and by -i {spec}"
                )));
            }
            given[i] = Some(spec);
        }
        bound.push((
            key,
            load_input(Path::new(file), index.and_then(element_type), &mut budget)?,
        ));
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
                if random {
                    // --random-inputs makes up the inputs no file gives.
                    continue;
                }
                return Err(fail(format!(
                    "{}: no file for input {:?} (looked for {})",
                    dir.display(),
                    names.first().copied().unwrap_or_default(),
                    names
                        .iter()
                        .map(|n| format!("{n}.npy"))
                        .collect::<Vec<_>>()
                        .join(", ")
                )));
            };
            bound.push((
                InputKey::Index(i),
                load_input(&path, element_type(i), &mut budget)?,
            ));
        }
    }
    if random {
        let mut rng = random::Rng::new(args.seed.unwrap_or(0));
        for i in 0..g.inputs.len() {
            // Random values for the inputs no file gives.
            if bound.iter().any(|(k, _)| match k {
                InputKey::Index(j) => *j == i,
                InputKey::Name(n) => find(n) == Some(i),
            }) {
                continue;
            }
            let names = g.input_names(i);
            let name = names.first().copied().unwrap_or_default();
            let Some(p) = g.nodes[g.inputs[i]].parameter() else {
                continue;
            };
            let given = args
                .shape
                .iter()
                .find(|(n, _)| names.contains(&n.as_str()))
                .map(|(_, s)| s);
            let shape = match random_shape(name, &p.shape, given) {
                Ok(s) => s,
                Err(e) => return Err(fail(e)),
            };
            let Some(needed) = shape
                .iter()
                .try_fold(1u64, |n, &d| n.checked_mul(d as u64))
                .and_then(|n| p.element_type.storage_bytes(n))
            else {
                return Err(fail(format!(
                    "input {name:?}: shape {} has more elements than ovir can address",
                    ovir::io::text::dims_text(&shape)
                )));
            };
            if let Err(kind) = budget.check("input", needed) {
                return Err(fail(format!("input {name:?}: {kind}")));
            }
            budget.add(needed);
            let Some(t) = random::tensor(p.element_type, &shape, &mut rng) else {
                return Err(fail(format!(
                    "input {name:?}: ovir cannot make random {} values",
                    p.element_type
                )));
            };
            bound.push((InputKey::Index(i), t));
        }
    }
    Ok(bound)
}
