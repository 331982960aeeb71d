//! The table of the binary arithmetic family (see [`super`] for what every row gets: attribute
//! `auto_broadcast` none/numpy/pdpd, inference, kernels on the twelve numeric types, fusion).
//!
//! A row: the Rust type, the layer type and op version, the integer rule (two's complement
//! wrap-around), the float rule (IEEE in the type; f16 and bf16 computed in f32 and rounded
//! once), and the rule on interval bounds (i128, saturating). Divide has its own attribute
//! (`m_pythondiv`) and integer kernel, in [`super::divide`].
//!
//! Spec pages: <https://docs.openvino.ai/2026/documentation/openvino-ir-format/operation-sets/operation-specs/arithmetic/subtract-1.html>
//! (and `add-1`, `multiply-1`, `divide-1`). Decisions: a pdpd op without an axis uses the
//! spec's −1 (OpenVINO's loader uses 0; `check` warns); integers wrap (OpenVINO's CPU plugin
//! saturates u8/i8: ovir follows the reference); f16 and bf16 round to nearest even (the CPU
//! plugin's choice; the reference's bf16 rounding quirk is not copied).

pub use super::divide::Divide;
use super::{Arith, Binary};
use crate::num::{Float, Int};
use crate::ops::{AttrError, Attrs, ElemError, OpDef};

macro_rules! rows {
    ($(
        $(#[$doc:meta])*
        $ty:ident $const:ident: $name:literal-$version:literal,
            int |$a:ident, $b:ident| $int:expr,
            float |$fa:ident, $fb:ident| $float:expr,
            bounds |$ba:ident, $bb:ident| $bounds:expr;
    )*) => {$(
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
        pub struct $ty;

        impl Arith for $ty {
            const NAME: &'static str = $name;
            const VERSION: u32 = $version;

            fn parse(_: &Attrs) -> Result<Self, Vec<AttrError>> {
                Ok($ty)
            }

            #[inline(always)]
            fn int<T: Int>(self, $a: T, $b: T) -> Result<T, ElemError> {
                Ok($int)
            }

            #[inline(always)]
            fn float<F: Float>(self, $fa: F, $fb: F) -> F {
                $float
            }

            fn corner(self, $ba: i128, $bb: i128) -> Option<i128> {
                Some($bounds)
            }
        }

        pub const $const: OpDef = Binary::<$ty>::DEF;
    )*};
}

rows! {
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

/// Divide-1: `a / b` (see [`super::divide`]).
pub const DIVIDE: OpDef = Binary::<Divide>::DEF;
