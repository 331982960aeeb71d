//! Findings as text, as `ovir` prints them: `file:line:col: error[CODE]: layer ..: message`
//! (the CLI's stderr and `ovir check`'s text format; the Python package's exceptions).

use std::fmt::Write;

use crate::check::FileReport;
use crate::error::{Error, Severity};

/// One line per finding (rustc / ruff style), with a `help:` line where there is a hint.
pub fn render<'a>(findings: impl IntoIterator<Item = (Severity, &'a Error)>) -> String {
    let mut out = String::new();
    for (severity, e) in findings {
        if let Some(at) = e.location() {
            let _ = write!(out, "{}", at.file.display());
            if let Some(p) = at.pos {
                let _ = write!(out, ":{}:{}", p.line, p.col);
            }
            out.push_str(": ");
        }
        let _ = write!(out, "{severity}[{}]: ", e.code());
        let context = context(e);
        if !context.is_empty() {
            let _ = write!(out, "{context}: ");
        }
        let _ = writeln!(out, "{}", e.kind());
        if let Some(h) = e.kind().hint() {
            let _ = writeln!(out, "  help: {h}");
        }
    }
    out
}

/// `layer 2 "sub" (Subtract), input port #1 (id 1)`, or empty.
pub fn context(e: &Error) -> String {
    let Some(at) = e.location() else {
        return String::new();
    };
    let mut parts = Vec::new();
    if let Some(l) = &at.layer {
        parts.push(l.to_string());
    }
    if let Some(p) = &at.port {
        parts.push(p.to_string());
    }
    parts.join(", ")
}

/// Every error of a failed load, as errors.
pub fn render_errors(err: &Error) -> String {
    render(err.iter().map(|e| (Severity::Error, e)))
}

fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{n} {word}s")
    }
}

/// `ovir check`'s text report of `reports`: every finding, the op types ovir does not
/// implement, and the closing count.
pub fn check_text(reports: &[FileReport], errors: usize, warnings: usize) -> String {
    let mut out = render(
        reports
            .iter()
            .flat_map(|r| r.diagnostics.iter().map(|d| (d.severity, &d.error))),
    );
    for r in reports.iter().filter(|r| !r.opaque.is_empty()) {
        let layers: usize = r.opaque.iter().map(|u| u.count).sum();
        let _ = writeln!(
            out,
            "{}: note: {} of {} ovir does not implement; their outputs were taken as declared:",
            r.file.display(),
            plural(layers, "layer"),
            plural(r.opaque.len(), "op type"),
        );
        let w = r.opaque.iter().map(|u| u.op.len()).max().unwrap_or(0);
        let wc = r
            .opaque
            .iter()
            .map(|u| u.count.to_string().len())
            .max()
            .unwrap_or(0);
        for u in &r.opaque {
            let at = u
                .first
                .map_or_else(String::new, |p| format!("line {}:{}, ", p.line, p.col));
            let _ = writeln!(
                out,
                "  {:<w$}  {:>wc$}  first at {at}{}",
                u.op, u.count, u.first_layer
            );
        }
    }
    let files = plural(reports.len(), "file");
    let unknown: usize = reports.iter().map(|r| r.opaque.len()).sum();
    let files = if unknown > 0 {
        format!(
            "{files}; op types ovir does not implement are listed above, --deny-unknown makes them errors"
        )
    } else {
        files
    };
    if errors == 0 && warnings == 0 {
        let _ = writeln!(out, "All checks passed ({files}).");
    } else {
        let _ = writeln!(
            out,
            "Found {} and {} in {files}.",
            plural(errors, "error"),
            plural(warnings, "warning")
        );
    }
    out
}
