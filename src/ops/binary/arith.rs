//! The table of the binary arithmetic family (see [`super`] for what every row gets: attribute
//! `auto_broadcast` none/numpy/pdpd, inference, kernels on the twelve numeric types, fusion).
//!
//! A row: the Rust type and the name of its definition, the layer type and op version, the
//! integer rule (two's complement wrap-around), the float rule (IEEE in the type; f16 and bf16
//! computed in f32 and rounded once), and the rule on interval bounds (i128, saturating).
//! Divide has its own attribute (`m_pythondiv`) and integer kernel, in [`super::divide`]: it
//! is listed under `own`. Adding a row registers the op (`FAMILY` is in [`REGISTRY`]).
//!
//! [`REGISTRY`]: crate::ops::REGISTRY
//!
//! Spec pages: <https://docs.openvino.ai/2026/documentation/openvino-ir-format/operation-sets/operation-specs/arithmetic/subtract-1.html>
//! (and `add-1`, `multiply-1`, `divide-1`). Decisions: a pdpd op without an axis uses the
//! spec's −1 (OpenVINO's loader uses 0; `check` warns); integers wrap (OpenVINO's CPU plugin
//! saturates u8/i8: ovir follows the reference); f16 and bf16 round to nearest even (the CPU
//! plugin's choice; the reference's bf16 rounding quirk is not copied).

pub use super::divide::Divide;
use super::{Arith, ArithVisitor, Binary};
use crate::num::{Float, Int};
use crate::ops::{AttrError, Attrs, ElemError, OpDef};

super::arith_table! {
    rows {
        /// Subtract-1: `a - b`.
        Subtract SUBTRACT: "Subtract"-1,
            int |a, b| a.wrapping_sub(b),
            float |a, b| a - b,
            bounds |a, b| a.saturating_sub(b);
        /// Add-1: `a + b`.
        Add ADD: "Add"-1,
            int |a, b| a.wrapping_add(b),
            float |a, b| a + b,
            bounds |a, b| a.saturating_add(b);
        /// Multiply-1: `a * b`.
        Multiply MULTIPLY: "Multiply"-1,
            int |a, b| a.wrapping_mul(b),
            float |a, b| a * b,
            bounds |a, b| a.saturating_mul(b);
    }
    own { Divide }
}
