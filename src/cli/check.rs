//! `ovir check`: every finding in every file, as text, JSON or GitHub annotations.

use std::fmt::Write;
use std::path::PathBuf;

use clap::{Args, ValueEnum};
use ovir::check::parse_shape_arg;
use ovir::shape::PartialShape;
use ovir::{CheckOptions, FileReport, Severity, check_file_keeping};
use serde::Serialize;

use super::{ExitStatus, print_stdout};
use ovir::report::{check_text, context};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum CheckFormat {
    /// `file:line:col: error[CODE]: ...`, one finding per line.
    #[default]
    Text,
    /// One JSON document (schema in docs/cli.md).
    Json,
    /// GitHub Actions workflow commands (`::error file=...::...`).
    Github,
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// IR files to check (.xml; the .bin beside each is used).
    #[arg(required = true, value_name = "MODEL.xml")]
    pub models: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = CheckFormat::Text)]
    pub format: CheckFormat,
    /// Exit with 1 when there are warnings, too.
    #[arg(long)]
    pub deny_warnings: bool,
    /// Specialise a dynamic input before checking, e.g. `--shape x=[1,3,?]` (repeatable; the
    /// name is any tensor name of the input, or its layer name).
    #[arg(long, value_name = "NAME=SHAPE", value_parser = parse_shape_arg)]
    pub shape: Vec<(String, PartialShape)>,
    /// The weights file (default: the .bin beside each .xml). With several models, give one
    /// --weights per model, in the same order.
    #[arg(long, value_name = "BIN")]
    pub weights: Vec<PathBuf>,
    /// Report layers whose op ovir does not implement as errors (E208), for CI that wants
    /// full coverage; by default they are listed in a summary and do not fail the check.
    #[arg(long)]
    pub deny_unknown: bool,
}

pub fn check(args: &CheckArgs) -> ExitStatus {
    if !args.weights.is_empty() && args.weights.len() != args.models.len() {
        eprintln!(
            "error: {} --weights for {} models: give one --weights per model, in the same order",
            args.weights.len(),
            args.models.len()
        );
        return ExitStatus::Error;
    }
    let mut reports: Vec<FileReport> = Vec::with_capacity(args.models.len());
    // The last model is kept until the process exits and never freed: freeing a large graph
    // takes about a tenth of `check`'s time and the operating system reclaims it anyway. The
    // others are freed as the next one loads, so many files never hold more than two at once.
    let mut last = None;
    for (k, m) in args.models.iter().enumerate() {
        let options = CheckOptions {
            shapes: args.shape.clone(),
            weights: args.weights.get(k).cloned(),
            deny_unknown: args.deny_unknown,
        };
        let (report, checked) = check_file_keeping(m, &options);
        reports.push(report);
        last = checked;
    }
    std::mem::forget(last);
    // A --shape name that no model has is a usage error: nothing is reported.
    let unmatched =
        ovir::check::unmatched_shapes(args.shape.iter().map(|(n, _)| n.as_str()), &reports);
    if !unmatched.is_empty() {
        for n in &unmatched {
            eprintln!("error: --shape {n}: no input of the checked models has this name");
        }
        return ExitStatus::Error;
    }
    let (errors, warnings) = reports.iter().fold((0, 0), |(e, w), r| {
        (e + r.count(Severity::Error), w + r.count(Severity::Warning))
    });
    let text = match args.format {
        CheckFormat::Text => check_text(&reports, errors, warnings),
        CheckFormat::Json => json(&reports, errors, warnings),
        CheckFormat::Github => github(&reports),
    };
    let printed = print_stdout(&text);
    if printed != ExitStatus::Success || reports.iter().any(|r| r.unreadable) {
        ExitStatus::Error
    } else if errors > 0 || (args.deny_warnings && warnings > 0) {
        ExitStatus::Findings
    } else {
        ExitStatus::Success
    }
}

/// The JSON document (`docs/cli.md` documents it; bump `version` on any breaking change).
#[derive(Serialize)]
struct JsonReport<'a> {
    version: u32,
    files: Vec<String>,
    diagnostics: Vec<JsonDiagnostic<'a>>,
    /// Op types ovir does not implement, per file (empty with --deny-unknown).
    unimplemented: Vec<JsonOpaque<'a>>,
    summary: JsonSummary,
}

#[derive(Serialize)]
struct JsonOpaque<'a> {
    file: String,
    op: &'a str,
    layers: usize,
    line: Option<u32>,
    col: Option<u32>,
    first_layer: &'a ovir::LayerRef,
}

#[derive(Serialize)]
struct JsonDiagnostic<'a> {
    file: String,
    line: Option<u32>,
    col: Option<u32>,
    severity: Severity,
    code: &'static str,
    message: String,
    hint: Option<String>,
    /// The axis a shape finding is about.
    axis: Option<usize>,
    layer: Option<&'a ovir::LayerRef>,
    port: Option<&'a ovir::PortRef>,
}

#[derive(Serialize)]
struct JsonSummary {
    files: usize,
    errors: usize,
    warnings: usize,
}

fn json(reports: &[FileReport], errors: usize, warnings: usize) -> String {
    let doc = JsonReport {
        version: 1,
        files: reports
            .iter()
            .map(|r| r.file.display().to_string())
            .collect(),
        diagnostics: reports
            .iter()
            .flat_map(|r| {
                r.diagnostics.iter().map(move |d| {
                    let at = d.error.location();
                    JsonDiagnostic {
                        file: at.map_or_else(
                            || r.file.display().to_string(),
                            |a| a.file.display().to_string(),
                        ),
                        line: at.and_then(|a| a.pos).map(|p| p.line),
                        col: at.and_then(|a| a.pos).map(|p| p.col),
                        severity: d.severity,
                        code: d.error.code(),
                        message: d.error.kind().to_string(),
                        hint: d.error.kind().hint(),
                        axis: d.error.kind().axis(),
                        layer: at.and_then(|a| a.layer.as_ref()),
                        port: at.and_then(|a| a.port.as_ref()),
                    }
                })
            })
            .collect(),
        unimplemented: reports
            .iter()
            .flat_map(|r| {
                r.opaque.iter().map(move |u| JsonOpaque {
                    file: r.file.display().to_string(),
                    op: &u.op,
                    layers: u.count,
                    line: u.first.map(|p| p.line),
                    col: u.first.map(|p| p.col),
                    first_layer: &u.first_layer,
                })
            })
            .collect(),
        summary: JsonSummary {
            files: reports.len(),
            errors,
            warnings,
        },
    };
    serde_json::to_string_pretty(&doc)
        .map_or_else(|e| format!("{{\"error\": \"{e}\"}}"), |s| s + "\n")
}

/// Escapes the message part of a workflow command.
fn gh_data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// Escapes a property value of a workflow command.
fn gh_prop(s: &str) -> String {
    gh_data(s).replace(':', "%3A").replace(',', "%2C")
}

fn github(reports: &[FileReport]) -> String {
    let mut out = String::new();
    for r in reports {
        for d in &r.diagnostics {
            let level = match d.severity {
                Severity::Error => "error",
                Severity::Warning => "warning",
            };
            let at = d.error.location();
            let file = at.map_or_else(
                || r.file.display().to_string(),
                |a| a.file.display().to_string(),
            );
            let mut props = format!("file={}", gh_prop(&file));
            if let Some(p) = at.and_then(|a| a.pos) {
                let _ = write!(props, ",line={},col={}", p.line, p.col);
            }
            let _ = write!(
                props,
                ",title={}",
                gh_prop(&format!("ovir {}", d.error.code()))
            );
            let ctx = context(&d.error);
            let mut msg = if ctx.is_empty() {
                d.error.kind().to_string()
            } else {
                format!("{ctx}: {}", d.error.kind())
            };
            if let Some(h) = d.error.kind().hint() {
                let _ = write!(msg, "\nhelp: {h}");
            }
            let _ = writeln!(out, "::{level} {props}::{}", gh_data(&msg));
        }
        for u in &r.opaque {
            let mut props = format!("file={}", gh_prop(&r.file.display().to_string()));
            if let Some(p) = u.first {
                let _ = write!(props, ",line={},col={}", p.line, p.col);
            }
            let _ = write!(props, ",title={}", gh_prop("ovir: not implemented"));
            let msg = format!(
                "{}: ovir does not implement {} ({} layer{}); checked around them from their declared outputs",
                u.first_layer,
                u.op,
                u.count,
                if u.count == 1 { "" } else { "s" }
            );
            let _ = writeln!(out, "::notice {props}::{}", gh_data(&msg));
        }
    }
    out
}
