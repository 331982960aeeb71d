//! `ovir diff`: compare two `.npy` files or folders of them.

use std::path::PathBuf;

use clap::Args;
use ovir::io::compare::{self, Report, Tolerance};

use super::{ARRAY_LIMIT, ExitStatus, Format, print_stdout};

/// Tolerances, shared by `diff` and `run --expect`.
#[derive(Debug, Args)]
pub struct ToleranceArgs {
    /// Floats within `atol + rtol * |A|` of A count as equal (A is the reference).
    #[arg(long, default_value_t = 0.0, value_name = "X", value_parser = non_negative, allow_hyphen_values = true)]
    pub atol: f64,
    /// Relative tolerance, see --atol.
    #[arg(long, default_value_t = 0.0, value_name = "Y", value_parser = non_negative, allow_hyphen_values = true)]
    pub rtol: f64,
    /// Floats at most N steps apart in their own type (units in the last place) count as
    /// equal.
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub ulps: u64,
    /// NaN differs from NaN (by default two NaNs are equal). Integers and booleans always
    /// compare exactly.
    #[arg(long)]
    pub nan_differs: bool,
    /// How many differing elements to list per tensor.
    #[arg(long, default_value_t = 5, value_name = "N")]
    pub show: usize,
}

impl ToleranceArgs {
    pub fn tolerance(&self) -> Tolerance {
        Tolerance {
            atol: self.atol,
            rtol: self.rtol,
            ulps: self.ulps,
            nan_differs: self.nan_differs,
        }
    }
}

fn non_negative(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(x) if x >= 0.0 => Ok(x),
        Ok(_) => Err("must be a number ≥ 0".into()),
        Err(e) => Err(e.to_string()),
    }
}

#[derive(Debug, Args)]
pub struct DiffArgs {
    /// The reference: an .npy file or a folder of them.
    pub a: PathBuf,
    /// What to compare with it: an .npy file or a folder (files matched by relative path; a
    /// file against a folder is compared with the folder's file of the same name).
    pub b: PathBuf,
    #[command(flatten)]
    pub tolerance: ToleranceArgs,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

/// Prints a comparison report and maps it to the exit status: 0 same, 1 different, 2 a file
/// could not be read.
pub fn finish(report: &Report, format: Format) -> ExitStatus {
    let text = match format {
        Format::Text => report.to_string(),
        Format::Json => match serde_json::to_string_pretty(report) {
            Ok(s) => s + "\n",
            Err(e) => {
                eprintln!("error: {e}");
                return ExitStatus::Error;
            }
        },
    };
    let printed = print_stdout(&text);
    if printed != ExitStatus::Success || report.unreadable() {
        ExitStatus::Error
    } else if report.same {
        ExitStatus::Success
    } else {
        ExitStatus::Findings
    }
}

pub fn diff(args: &DiffArgs) -> ExitStatus {
    let tol = args.tolerance.tolerance();
    let report =
        match compare::compare_paths(&args.a, &args.b, &tol, args.tolerance.show, ARRAY_LIMIT) {
            Ok(r) => r,
            Err(e) => {
                eprintln!("error: cannot read {e}");
                return ExitStatus::Error;
            }
        };
    if report.tensors.is_empty() {
        eprintln!(
            "error: no .npy files in {} or {}",
            args.a.display(),
            args.b.display()
        );
        return ExitStatus::Error;
    }
    finish(&report, args.format)
}
