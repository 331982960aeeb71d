//! Stage 3: shapes. [`dim`] holds dimensions (static, interval, dynamic) and partial shapes;
//! [`types`] what inference knows of a value (type, shape, small values, bounds); [`infer`]
//! infers every port and checks the declared `<dim>`s.

pub mod dim;
pub mod infer;
pub mod types;

pub use dim::{Dim, DimRule, PartialShape, ShapeParseError};
pub use infer::{Inferred, infer};
pub use types::TensorType;
