//! Rendering findings for the terminal: `file:line:col: error[CODE]: layer ..: message`.

use std::fmt::Write;

use ovir::{Error, Severity};

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
