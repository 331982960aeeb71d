//! `ovir run --dump-all`: every layer output as `<layer>.<output index>.npy`, and
//! `manifest.json` listing them in execution order (written also when the run fails part-way,
//! marked incomplete). `ovir diff` reads the manifest to list two dumps in execution order.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::npy::{self, UniqueNames};
use crate::error::{Error, ErrorKind};
use crate::exec::Produced;

/// The manifest's file name.
pub const MANIFEST: &str = "manifest.json";

/// `manifest.json`.
#[derive(Debug, Serialize, Deserialize)]
pub struct Manifest {
    pub version: u32,
    pub model: String,
    /// False when the run stopped at an error: the layers listed are those computed before.
    pub complete: bool,
    /// In execution order.
    pub layers: Vec<Layer>,
}

/// One dumped layer output.
#[derive(Debug, Serialize, Deserialize)]
pub struct Layer {
    pub file: String,
    pub layer: String,
    pub id: u64,
    pub r#type: String,
    pub port: usize,
    pub port_id: Option<u64>,
    /// The layer's element type (bf16 files hold float32).
    pub dtype: String,
    pub shape: Vec<usize>,
}

/// Writes layer outputs into a folder as the run produces them.
pub struct Dump {
    dir: PathBuf,
    names: UniqueNames,
    layers: Vec<Layer>,
}

fn write_error(path: &Path, source: std::io::Error) -> Error {
    Error::new(ErrorKind::Write {
        path: path.into(),
        source,
    })
}

impl Dump {
    /// Creates the folder if needed.
    pub fn create(dir: &Path) -> Result<Dump, Error> {
        std::fs::create_dir_all(dir).map_err(|e| write_error(dir, e))?;
        Ok(Dump {
            dir: dir.to_owned(),
            names: UniqueNames::default(),
            layers: Vec::new(),
        })
    }

    /// Writes one layer output (atomically) and records it.
    pub fn record(&mut self, p: Produced<'_>) -> Result<(), Error> {
        let node = p.node;
        let stem = npy::safe_stem(&node.name).unwrap_or_else(|| format!("layer_{}", node.id));
        let file = self.names.claim(format!("{stem}.{}.npy", p.port), || {
            format!("{stem}_{}.{}.npy", node.id, p.port)
        });
        let path = self.dir.join(&file);
        npy::write_atomic_with(&path, |w| npy::write(p.tensor, w))
            .map_err(|e| write_error(&path, e))?;
        self.layers.push(Layer {
            file,
            layer: node.name.clone(),
            id: node.id,
            r#type: node.op.name().to_owned(),
            port: p.port,
            port_id: node.outputs.get(p.port).map(|o| o.decl.id),
            dtype: p.tensor.element_type().to_string(),
            shape: p.tensor.shape().to_vec(),
        });
        Ok(())
    }

    /// Writes the manifest (atomically).
    pub fn finish(self, model: &Path, complete: bool) -> Result<(), Error> {
        let manifest = Manifest {
            version: 1,
            model: model.display().to_string(),
            complete,
            layers: self.layers,
        };
        let path = self.dir.join(MANIFEST);
        let text = serde_json::to_string_pretty(&manifest).unwrap_or_default() + "\n";
        npy::write_atomic(&path, text.as_bytes()).map_err(|e| write_error(&path, e))
    }
}

/// The files of a dump folder in execution order, if it has a readable manifest.
pub fn order(dir: &Path) -> Option<Vec<String>> {
    let text = std::fs::read_to_string(dir.join(MANIFEST)).ok()?;
    let m: Manifest = serde_json::from_str(&text).ok()?;
    Some(m.layers.into_iter().map(|l| l.file).collect())
}
