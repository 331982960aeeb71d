//! `check`: every finding in a file (reading, structure, types, shapes, declared dims), at once.

use std::path::{Path, PathBuf};

use crate::error::{Diagnostic, Error, ErrorKind, OpaqueUse, Severity};
use crate::model::{LoadOptions, Model};
use crate::shape::PartialShape;

/// Options for [`check_file`].
#[derive(Clone, Debug, Default)]
pub struct CheckOptions {
    /// Specialise inputs before checking: (input name, shape), as `--shape NAME=[1,3,?]`.
    pub shapes: Vec<(String, PartialShape)>,
    /// The weights file; by default the `.bin` beside the `.xml`.
    pub weights: Option<PathBuf>,
    /// Report layers whose op ovir does not implement as errors (E208), one per op type at its
    /// first layer, instead of listing them in [`FileReport::opaque`].
    pub deny_unknown: bool,
}

/// The findings for one file, sorted by position.
#[derive(Debug)]
pub struct FileReport {
    pub file: PathBuf,
    pub diagnostics: Vec<Diagnostic>,
    /// The file could not be read at all (missing, unreadable): `check` could not run on it.
    pub unreadable: bool,
    /// `--shape` names that match no input of this file.
    pub unmatched_shapes: Vec<String>,
    /// Layers whose op ovir does not implement (live or dead), by op type: their outputs were
    /// taken as declared. Empty with `deny_unknown` (they are errors then).
    pub opaque: Vec<OpaqueUse>,
}

impl FileReport {
    pub fn count(&self, severity: Severity) -> usize {
        self.diagnostics
            .iter()
            .filter(|d| d.severity == severity)
            .count()
    }
}

/// The shape names (`--shape NAME=...`) that no input of the checked files has, in the order
/// given: a usage error (`check` reports nothing then). A file that could not be read matches
/// every name (it cannot say); when no file could be read, no name is unmatched.
pub fn unmatched_shapes<'a>(
    names: impl IntoIterator<Item = &'a str>,
    reports: &[FileReport],
) -> Vec<&'a str> {
    if reports.iter().all(|r| r.unreadable) {
        return Vec::new();
    }
    names
        .into_iter()
        .filter(|n| {
            reports
                .iter()
                .all(|r| r.unreadable || r.unmatched_shapes.iter().any(|u| u == n))
        })
        .collect()
}

/// Checks one IR file.
pub fn check_file(path: &Path, options: &CheckOptions) -> FileReport {
    check_file_keeping(path, options).0
}

/// What [`check_file_keeping`] checked: the loaded model and its inferred types, when the file
/// could be loaded.
#[derive(Debug)]
pub struct Checked {
    pub model: Model,
    pub inferred: crate::shape::Inferred,
}

/// [`check_file`], also handing back the model and its inferred types instead of freeing them.
/// A process about to exit can skip freeing them (`std::mem::forget`): for a 100k-layer IR that
/// is about a tenth of the time of `check`.
pub fn check_file_keeping(path: &Path, options: &CheckOptions) -> (FileReport, Option<Checked>) {
    let load = LoadOptions {
        weights: options.weights.clone(),
        ..LoadOptions::default()
    };
    let mut report = FileReport {
        file: path.to_owned(),
        diagnostics: Vec::new(),
        unreadable: false,
        unmatched_shapes: Vec::new(),
        opaque: Vec::new(),
    };
    let model = match Model::load_with(path, &load) {
        Ok(m) => m,
        Err(e) => {
            for e in e.into_list() {
                if matches!(e.kind(), ErrorKind::Io { .. }) {
                    report.unreadable = true;
                }
                report.diagnostics.push(Diagnostic::error(e));
            }
            return (report, None);
        }
    };
    let g = model.graph();
    let mut overrides = Vec::new();
    for (name, shape) in &options.shapes {
        match (0..g.inputs.len()).find(|&i| g.input_names(i).contains(&name.as_str())) {
            Some(i) => overrides.push((i, name.clone(), shape.clone())),
            None => report.unmatched_shapes.push(name.clone()),
        }
    }
    let (inferred, mut found) = crate::shape::infer(g, &overrides);
    let opaque = g.opaque_uses(|_| true);
    if options.deny_unknown {
        for u in opaque {
            found.push(Diagnostic::error(Error::at(
                ErrorKind::Unimplemented {
                    op: u.op,
                    count: u.count,
                },
                g.locate(u.first_node, None),
            )));
        }
    } else {
        report.opaque = opaque;
    }
    found.sort_by_key(|d| {
        let pos = d
            .error
            .location()
            .and_then(|l| l.pos)
            .map_or((0, 0), |p| (p.line, p.col));
        (pos.0, pos.1, d.severity)
    });
    report.diagnostics = found;
    (report, Some(Checked { model, inferred }))
}

/// Reads `NAME=SHAPE` (as `--shape` takes it): the shape in the IR grammar, e.g. `x=[1,3,?]`.
pub fn parse_shape_arg(arg: &str) -> Result<(String, PartialShape), String> {
    let (name, shape) = arg
        .split_once('=')
        .ok_or_else(|| format!("expected NAME=SHAPE (e.g. input=[1,3,?]), got {arg:?}"))?;
    if name.is_empty() {
        return Err(format!("the input name is empty in {arg:?}"));
    }
    let shape = PartialShape::parse(shape).map_err(|e| format!("shape {e}"))?;
    Ok((name.to_owned(), shape))
}
