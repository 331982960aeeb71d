//! Subtract-1: elementwise `a - b` with broadcasting.
//!
//! Spec: <https://docs.openvino.ai/2026/documentation/openvino-ir-format/operation-sets/operation-specs/arithmetic/subtract-1.html>
//!
//! Attributes: `auto_broadcast` (`none`/`explicit`, `numpy`, `pdpd`; any case; default
//! `numpy`) and, for pdpd, `auto_broadcast.auto_broadcast_axis` (−1 or a dimension index).
//! Ports: two inputs of the same element type, one output.
//!
//! Decisions: a pdpd op without an axis uses the spec's −1 (OpenVINO's loader uses 0; `check`
//! warns). Any other `auto_broadcast` value is an error.
//!
//! Types: f16, bf16, f32, f64, i8, i16, i32, i64, u8, u16, u32, u64. Integers wrap (two's
//! complement; OpenVINO's CPU plugin saturates u8/i8 — ovir follows the reference). f32 and f64
//! are IEEE subtraction; f16 and bf16 are computed in f32 and rounded once to the element type,
//! to nearest even (the CPU plugin's choice; the reference's bf16 rounding quirk is not copied).

use half::{bf16, f16};

use super::kernel::{self, Out, Src};
use super::{AttrError, Attrs, Elementwise, EvalError, Op, OpDef};
use crate::broadcast::AutoBroadcast;
use crate::tensor::{Element, Tensor};

/// Subtraction of one element type.
pub trait SubtractElem: Element {
    fn sub(a: Self, b: Self) -> Self;

    /// The loop over one run (vectorised by the compiler; f16/bf16 through f32 blocks).
    #[inline(always)]
    fn run(a: Src<'_, Self>, b: Src<'_, Self>, out: Out<'_, Self>) {
        kernel::map(a, b, out, Self::sub);
    }
}

macro_rules! wrapping {
    ($($t:ty)*) => {$(
        impl SubtractElem for $t {
            fn sub(a: Self, b: Self) -> Self {
                a.wrapping_sub(b)
            }
        }
    )*};
}
wrapping!(i8 i16 i32 i64 u8 u16 u32 u64);

macro_rules! wide {
    ($($t:ty)*) => {$(
        impl SubtractElem for $t {
            fn sub(a: Self, b: Self) -> Self {
                a - b
            }
        }
    )*};
}
wide!(f32 f64);

macro_rules! narrow {
    ($($t:ty)*) => {$(
        impl SubtractElem for $t {
            fn sub(a: Self, b: Self) -> Self {
                <$t>::from_f32(a.to_f32() - b.to_f32())
            }
            #[inline(always)]
            fn run(a: Src<'_, Self>, b: Src<'_, Self>, out: Out<'_, Self>) {
                kernel::through_f32(a, b, out, |x, y| x - y);
            }
        }
    )*};
}
narrow!(f16 bf16);

impl Subtract {
    /// `a - b`.
    pub fn eval(&self, a: &Tensor, b: &Tensor) -> Result<Tensor, EvalError> {
        Elementwise::Subtract.eval(self.auto_broadcast, a, b)
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Subtract {
    pub auto_broadcast: AutoBroadcast,
}

pub const DEF: OpDef = OpDef {
    name: "Subtract",
    aliases: &[],
    max_opset: 16,
    inputs: 2,
    outputs: 1,
    parse,
};

fn parse(a: &Attrs) -> Result<Op, Vec<AttrError>> {
    let auto_broadcast = a.auto_broadcast().map_err(|e| vec![e])?;
    Ok(Op::Subtract(Subtract { auto_broadcast }))
}
