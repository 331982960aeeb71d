//! Stage 3: shapes. [`dim`] holds dimensions (static, interval, dynamic) and partial shapes;
//! [`infer`] infers every port's element type and shape and checks the declared `<dim>`s.

pub mod dim;
pub mod infer;

pub use dim::{Dim, PartialShape, ShapeParseError};
pub use infer::{Inferred, TensorType, infer};
