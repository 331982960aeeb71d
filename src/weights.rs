//! The `.bin` weights file, memory-mapped and read in place.

use std::fs::File;
use std::path::Path;
use std::sync::Arc;

use memmap2::Mmap;

use crate::error::{Error, ErrorKind};

/// A weights file mapped into memory (or bytes given in memory). Const data are slices of it
/// (no copy, any alignment).
#[derive(Debug)]
pub struct Weights {
    path: Arc<Path>,
    data: Data,
}

#[derive(Debug)]
enum Data {
    Empty,
    Mapped(Mmap),
    Owned(Vec<u8>),
}

impl Weights {
    /// Maps `path`. `Ok(None)` if the file does not exist (a model whose Consts need no bytes
    /// runs without one).
    pub fn open(path: Arc<Path>) -> Result<Option<Weights>, Error> {
        let io_err = |source| {
            Error::new(ErrorKind::Io {
                path: path.clone(),
                source,
            })
        };
        let file = match File::open(&path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io_err(e)),
        };
        let len = file.metadata().map_err(io_err)?.len();
        let data = if len == 0 {
            Data::Empty
        } else {
            // SAFETY: the map is read-only. Like every reader of memory-mapped files, ovir
            // assumes the file is not truncated while a model uses it.
            Data::Mapped(unsafe { Mmap::map(&file) }.map_err(io_err)?)
        };
        Ok(Some(Weights { path, data }))
    }

    /// Weights held in memory; `path` names them in messages.
    pub fn from_bytes(path: Arc<Path>, bytes: Vec<u8>) -> Weights {
        Weights {
            path,
            data: Data::Owned(bytes),
        }
    }

    fn all(&self) -> &[u8] {
        match &self.data {
            Data::Empty => &[],
            Data::Mapped(m) => m,
            Data::Owned(v) => v,
        }
    }

    pub fn path(&self) -> &Arc<Path> {
        &self.path
    }

    pub fn len(&self) -> u64 {
        self.all().len() as u64
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The bytes `offset..offset + size`, or `None` if they are not all in the file.
    pub fn bytes(&self, offset: u64, size: u64) -> Option<&[u8]> {
        if size == 0 {
            return Some(&[]);
        }
        let data = self.all();
        let start = usize::try_from(offset).ok()?;
        let end = start.checked_add(usize::try_from(size).ok()?)?;
        data.get(start..end)
    }
}
