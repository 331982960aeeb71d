//! Shapes: dimensions with dynamic and interval values, and (later) shape inference.

pub mod dim;

pub use dim::{Dim, PartialShape, ShapeParseError};
