//! Rendering errors for the terminal: `file:line:col: error[CODE]: layer ..: message`.

use std::fmt::Write;

use ovir::Error;

/// One line per error (rustc / ruff style), with a `help:` line where there is a hint.
pub fn render_errors(err: &Error) -> String {
    let mut out = String::new();
    for e in err.iter() {
        let mut head = String::new();
        let mut context = Vec::new();
        if let Some(at) = e.location() {
            let _ = write!(head, "{}", at.file.display());
            if let Some(p) = at.pos {
                let _ = write!(head, ":{}:{}", p.line, p.col);
            }
            head.push_str(": ");
            if let Some(l) = &at.layer {
                context.push(l.to_string());
            }
            if let Some(p) = &at.port {
                context.push(p.to_string());
            }
        }
        let _ = write!(out, "{head}error[{}]: ", e.code());
        if !context.is_empty() {
            let _ = write!(out, "{}: ", context.join(", "));
        }
        let _ = writeln!(out, "{}", e.kind());
        if let Some(h) = e.kind().hint() {
            let _ = writeln!(out, "  help: {h}");
        }
    }
    out
}
