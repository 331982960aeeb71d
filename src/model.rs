//! [`Model`]: the library's entry point.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::error::{Error, ErrorKind, Location};
use crate::graph::Graph;
use crate::weights::Weights;

/// How to load a model.
#[derive(Clone, Debug, Default)]
pub struct LoadOptions {
    /// The weights file; by default the `.bin` beside the `.xml`.
    pub weights: Option<PathBuf>,
    /// The memory budget of runs in bytes (see [`Model::memory_limit`]); by default the
    /// machine's physical memory.
    pub max_memory: Option<u64>,
}

/// A loaded and validated OpenVINO IR model.
///
/// ```no_run
/// let model = ovir::Model::load("ir_samples/seed_numpy/model.xml")?;
/// println!("{} inputs, {} outputs", model.graph().inputs.len(), model.graph().outputs.len());
/// # Ok::<(), ovir::Error>(())
/// ```
#[derive(Debug)]
pub struct Model {
    graph: Graph,
    memory_limit: u64,
    /// The constant subgraphs, computed at the first run.
    folded: std::sync::OnceLock<crate::exec::Folded>,
}

impl Model {
    /// Loads `xml` and the `.bin` beside it.
    pub fn load(xml: impl AsRef<Path>) -> Result<Model, Error> {
        Model::load_with(xml, &LoadOptions::default())
    }

    /// Loads `xml` with options. Every error found in the file is returned at once
    /// (see [`Error::iter`]).
    pub fn load_with(xml: impl AsRef<Path>, options: &LoadOptions) -> Result<Model, Error> {
        let xml = xml.as_ref();
        let file: Arc<Path> = Arc::from(xml);
        let bytes = std::fs::read(xml).map_err(|source| {
            Error::new(ErrorKind::Io {
                path: file.clone(),
                source,
            })
        })?;
        let weights_path: Arc<Path> = match &options.weights {
            Some(p) => Arc::from(p.as_path()),
            None => Arc::from(xml.with_extension("bin").as_path()),
        };
        let weights = Weights::open(weights_path.clone())?;
        Model::build(file, &bytes, weights_path, weights, options)
    }

    /// A model from bytes in memory: the `.xml` text and the `.bin` contents (`None`: no
    /// weights). `name` names the model in messages, as its path would; the weights are
    /// called `name` with the extension `.bin`.
    ///
    /// ```
    /// let xml = std::fs::read("ir_samples/seed_numpy/model.xml")?;
    /// let model = ovir::Model::from_bytes("seed.xml", &xml, None, &Default::default())?;
    /// assert_eq!(model.graph().outputs.len(), 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_bytes(
        name: impl AsRef<Path>,
        xml: &[u8],
        weights: Option<Vec<u8>>,
        options: &LoadOptions,
    ) -> Result<Model, Error> {
        let file: Arc<Path> = Arc::from(name.as_ref());
        let weights_path: Arc<Path> = Arc::from(name.as_ref().with_extension("bin").as_path());
        let weights = weights.map(|b| Weights::from_bytes(weights_path.clone(), b));
        Model::build(file, xml, weights_path, weights, options)
    }

    fn build(
        file: Arc<Path>,
        bytes: &[u8],
        weights_path: Arc<Path>,
        weights: Option<Weights>,
        options: &LoadOptions,
    ) -> Result<Model, Error> {
        let text = match std::str::from_utf8(bytes) {
            Ok(t) => t,
            Err(e) => {
                let valid = std::str::from_utf8(&bytes[..e.valid_up_to()]).unwrap_or_default();
                let source = crate::ir::Source::new(file.clone(), valid);
                return Err(Error::at(
                    ErrorKind::Xml {
                        message: "the file is not valid UTF-8".into(),
                    },
                    Location {
                        pos: Some(source.pos(valid.len())),
                        ..Location::file(&file)
                    },
                ));
            }
        };
        let graph = crate::graph::build(file, text, weights_path, weights)?;
        Ok(Model {
            graph,
            memory_limit: options
                .max_memory
                .unwrap_or_else(crate::memory::default_limit),
            folded: std::sync::OnceLock::new(),
        })
    }

    /// The memory budget of runs, in bytes: every tensor a run makes (outputs of layers,
    /// copies of Consts) is checked against it, with the inputs, before it is allocated; a run
    /// that would exceed it fails with E604 instead of exhausting the machine.
    pub fn memory_limit(&self) -> u64 {
        self.memory_limit
    }

    pub fn set_memory_limit(&mut self, bytes: u64) {
        self.memory_limit = bytes;
    }

    pub fn graph(&self) -> &Graph {
        &self.graph
    }

    /// The values of the model's constant subgraphs (every layer computed from Consts only),
    /// computed once, at the first run, and kept for every run.
    pub fn folded(&self) -> Result<&crate::exec::Folded, Error> {
        if let Some(f) = self.folded.get() {
            return Ok(f);
        }
        let f = crate::exec::fold::fold(&self.graph, self.memory_limit)?;
        Ok(self.folded.get_or_init(|| f))
    }

    /// Infers every port's element type and shape; returns them with every finding (errors
    /// and warnings, as `ovir check` reports them).
    pub fn infer(&self) -> (crate::shape::Inferred, Vec<crate::error::Diagnostic>) {
        crate::shape::infer(&self.graph, &[])
    }
}
