//! ovir: an OpenVINO IR interpreter.
//!
//! The pipeline runs one way: [`ir`] (XML → serde structs) → [`graph`] (edges bound, order,
//! structural errors) → [`shape`] (dims and inference) → execution. [`Model`] ties them together.

pub mod broadcast;
pub mod check;
pub mod dtype;
pub mod error;
pub mod exec;
pub mod graph;
pub mod info;
pub mod io;
pub mod ir;
pub mod memory;
pub mod model;
pub mod num;
pub mod ops;
pub mod report;
pub mod shape;
pub mod tensor;
pub mod weights;

pub use check::{CheckOptions, Checked, FileReport, check_file, check_file_keeping};
pub use dtype::ElementType;
pub use error::{
    Diagnostic, Error, ErrorKind, LayerRef, Location, OpaqueUse, PortDir, PortRef, Severity,
};
pub use exec::{InputKey, Output, Produced, Profile, StepTime};
pub use half;
pub use model::{LoadOptions, Model};
pub use tensor::{Element, Tensor, TypeSet, Value};
