//! The command line: argument definitions and one module per subcommand.

pub mod bench;
pub mod check;
pub mod diff;
pub mod info;
pub mod run;

use std::io::Write;

use clap::{Parser, Subcommand, ValueEnum};

/// ovir — an OpenVINO IR interpreter.
#[derive(Debug, Parser)]
#[command(name = "ovir", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Summarise a model: IR version, inputs, outputs, op histogram, weights, dead layers.
    Info(info::InfoArgs),
    /// Validate IR files: every problem in every file at once (exit 0 clean, 1 findings,
    /// 2 could not run).
    Check(check::CheckArgs),
    /// Run a model on .npy inputs (or random ones) and print or write its outputs.
    Run(run::RunArgs),
    /// Compare .npy files or folders of them (exit 0 same within tolerance, 1 different,
    /// 2 could not run).
    Diff(diff::DiffArgs),
    /// Measure a model's latency and throughput on repeated runs (like OpenVINO's
    /// benchmark_app).
    Bench(bench::BenchArgs),
}

/// Arrays read from .npy files larger than this are refused (bytes).
pub const ARRAY_LIMIT: u64 = 16 << 30;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum Format {
    #[default]
    Text,
    Json,
}

/// The exit status contract: 0 ok, 1 findings or a failed comparison (`check`, `diff`),
/// 2 could not run (unreadable or invalid input, usage errors).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExitStatus {
    Success = 0,
    Findings = 1,
    Error = 2,
}

pub fn run(cli: Cli) -> ExitStatus {
    match cli.command {
        Command::Info(args) => info::info(&args),
        Command::Check(args) => check::check(&args),
        Command::Run(args) => run::run(&args),
        Command::Diff(args) => diff::diff(&args),
        Command::Bench(args) => bench::bench(&args),
    }
}

/// Loads a model, or prints every error in it and says the command could not run.
pub fn load_model(
    model: &std::path::Path,
    weights: Option<&std::path::Path>,
    max_memory: Option<u64>,
) -> Result<ovir::Model, ExitStatus> {
    let options = ovir::LoadOptions {
        weights: weights.map(|w| w.to_owned()),
        max_memory,
    };
    ovir::Model::load_with(model, &options).map_err(|e| {
        eprint!("{}", ovir::report::render_errors(&e));
        ExitStatus::Error
    })
}

/// Writes to stdout. A closed pipe (`ovir info m.xml | head`) is not an error.
pub fn print_stdout(text: &str) -> ExitStatus {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
        Ok(()) => ExitStatus::Success,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitStatus::Success,
        Err(e) => {
            eprintln!("error: cannot write to stdout: {e}");
            ExitStatus::Error
        }
    }
}
