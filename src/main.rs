//! The `ovir` binary: parse arguments, call the library, map the result to an exit code.

mod cli;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    ExitCode::from(cli::run(cli) as u8)
}
