//! `ovir info`: a summary of a model.

use std::fmt::Write;
use std::path::PathBuf;

use clap::Args;
use ovir::info::Info;

use super::{ExitStatus, Format, load_model, print_stdout};

#[derive(Debug, Args)]
pub struct InfoArgs {
    /// The model's .xml file.
    pub model: PathBuf,
    /// The weights file (default: the .bin beside the .xml).
    #[arg(long, value_name = "BIN")]
    pub weights: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

pub fn info(args: &InfoArgs) -> ExitStatus {
    let model = match load_model(&args.model, args.weights.as_deref(), None) {
        Ok(m) => m,
        Err(status) => return status,
    };
    let (inferred, findings) = model.infer();
    let info = Info::new(model.graph(), &inferred);
    // The process ends next: freeing every node of a large graph would only cost time.
    std::mem::forget(model);
    let text = match args.format {
        Format::Text => render_text(&info),
        Format::Json => match serde_json::to_string_pretty(&info) {
            Ok(s) => s + "\n",
            Err(e) => {
                eprintln!("error: cannot encode JSON: {e}");
                return ExitStatus::Error;
            }
        },
    };
    let status = print_stdout(&text);
    let errors = findings
        .iter()
        .filter(|d| d.severity == ovir::Severity::Error)
        .count();
    if errors > 0 && args.format == Format::Text {
        eprintln!(
            "note: {} in this model; run `ovir check {}` for details",
            if errors == 1 {
                "1 type or shape error".to_owned()
            } else {
                format!("{errors} type or shape errors")
            },
            args.model.display()
        );
    }
    status
}

fn tensor_table(out: &mut String, title: &str, list: &[ovir::info::TensorInfo]) {
    let _ = writeln!(out, "\n{title} ({})", list.len());
    let w_name = list
        .iter()
        .map(|t| t.name.chars().count())
        .max()
        .unwrap_or(0);
    let w_type = list
        .iter()
        .map(|t| t.element_type.map_or(1, |e| e.name().len()))
        .max()
        .unwrap_or(0);
    for (i, t) in list.iter().enumerate() {
        let ty = t.element_type.map_or("?", |e| e.name());
        let _ = write!(
            out,
            "  #{i}  {:<w_name$}  {ty:<w_type$}  {}",
            t.name, t.shape
        );
        let others: Vec<&str> = t
            .names
            .iter()
            .map(String::as_str)
            .filter(|n| *n != t.name)
            .collect();
        if !others.is_empty() {
            let _ = write!(out, "  (also: {})", others.join(", "));
        }
        if t.layer != t.name {
            let _ = write!(out, "  [layer {:?}]", t.layer);
        }
        out.push('\n');
    }
}

fn render_text(info: &Info) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{}", info.file);
    let _ = writeln!(out, "  IR version  {}", info.ir_version);
    if let Some(name) = &info.name {
        let _ = writeln!(out, "  model name  {name}");
    }
    if let Some(p) = &info.producer {
        let _ = writeln!(out, "  written by  OpenVINO {p}");
    }
    let weights = match info.weights.bytes {
        Some(b) => format!("{} ({b} bytes)", info.weights.path),
        None => format!("{} (absent; no Const needs it)", info.weights.path),
    };
    let _ = writeln!(out, "  weights     {weights}");
    tensor_table(&mut out, "inputs", &info.inputs);
    tensor_table(&mut out, "outputs", &info.outputs);
    let opaque: usize = info.ops.iter().filter(|o| !o.runs).map(|o| o.layers).sum();
    if opaque == 0 {
        let _ = writeln!(out, "\nlayers ({}; ovir runs every op)", info.layers);
    } else {
        let _ = writeln!(
            out,
            "\nlayers ({}; {opaque} of op types ovir does not run)",
            info.layers
        );
    }
    let w = info.ops.iter().map(|o| o.op.len()).max().unwrap_or(0);
    let wc = info
        .ops
        .iter()
        .map(|o| o.layers.to_string().len())
        .max()
        .unwrap_or(0);
    for o in &info.ops {
        let note = if o.runs { "" } else { "  not run by ovir" };
        let _ = writeln!(out, "  {:<w$}  {:>wc$}{note}", o.op, o.layers);
    }
    if info.dead_layers.is_empty() {
        let _ = writeln!(out, "\ndead layers: none");
    } else {
        let _ = writeln!(
            out,
            "\ndead layers ({}, feeding no Result)",
            info.dead_layers.len()
        );
        for l in &info.dead_layers {
            let _ = writeln!(out, "  {l}");
        }
    }
    if !info.unused_inputs.is_empty() {
        let _ = writeln!(out, "unused inputs: {}", info.unused_inputs.join(", "));
    }
    out
}
