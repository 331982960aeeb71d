//! The `ovir` binary: parse arguments, call the library, map the result to an exit code.

mod cli;

/// Loading an IR allocates many small strings and lists in parallel; mimalloc makes that
/// about 1.8× faster than the system allocator (see `benches/load.rs`).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    ExitCode::from(cli::run(cli) as u8)
}
