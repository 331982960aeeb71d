//! Divide-1: elementwise `a / b` with broadcasting.
//!
//! Spec: <https://docs.openvino.ai/2026/documentation/openvino-ir-format/operation-sets/operation-specs/arithmetic/divide-1.html>
//!
//! Attributes: `auto_broadcast` as for Subtract (default `numpy`), and `m_pythondiv` (also
//! read as `pythondiv`): `true`/`false`/`1`/`0` in any case, default `true`. With `true`,
//! integer division floors (Python's `//`); with `false` it truncates toward zero. It has no
//! effect on floating-point types.
//! Ports: two inputs of the same element type, one output.
//!
//! Decisions: any other `m_pythondiv` value (`yes`, empty) is an error; OpenVINO silently keeps
//! the default. Writing both `m_pythondiv` and `pythondiv` is an error.
//!
//! Types: f16, bf16, f32, f64, i8, i16, i32, i64, u8, u16, u32, u64.
//! * Floats: IEEE true division (never `a * (1/b)`); x/0 is ±inf, 0/0 NaN. f16 and bf16 are
//!   computed in f32 and rounded once, to nearest even.
//! * Signed integers: floor division with `m_pythondiv` (−10/3 = −4), truncation without
//!   (−10/3 = −3). Unsigned: the plain quotient either way.
//! * Integer division by zero, and the minimum signed value divided by −1, are errors naming
//!   the first offending output element (OpenVINO's reference throws or dies with SIGFPE; its
//!   CPU plugin returns garbage).

use half::{bf16, f16};

use super::{AttrError, Attrs, ElemError, EvalError, Op, OpDef};
use crate::broadcast::AutoBroadcast;
use crate::tensor::{Element, Tensor};

/// Division of one element type.
pub trait DivideElem: Element {
    fn div(a: Self, b: Self, pythondiv: bool) -> Result<Self, ElemError>;
}

macro_rules! signed {
    ($($t:ty)*) => {$(
        impl DivideElem for $t {
            fn div(a: Self, b: Self, pythondiv: bool) -> Result<Self, ElemError> {
                if b == 0 {
                    return Err(ElemError::DivisionByZero);
                }
                let q = a.checked_div(b).ok_or(ElemError::Overflow)?;
                // checked_div succeeded, so the remainder cannot overflow either.
                if pythondiv && a.wrapping_rem(b) != 0 && ((a < 0) != (b < 0)) {
                    Ok(q - 1)
                } else {
                    Ok(q)
                }
            }
        }
    )*};
}
signed!(i8 i16 i32 i64);

macro_rules! unsigned {
    ($($t:ty)*) => {$(
        impl DivideElem for $t {
            fn div(a: Self, b: Self, _: bool) -> Result<Self, ElemError> {
                a.checked_div(b).ok_or(ElemError::DivisionByZero)
            }
        }
    )*};
}
unsigned!(u8 u16 u32 u64);

impl DivideElem for f32 {
    fn div(a: Self, b: Self, _: bool) -> Result<Self, ElemError> {
        Ok(a / b)
    }
}

impl DivideElem for f64 {
    fn div(a: Self, b: Self, _: bool) -> Result<Self, ElemError> {
        Ok(a / b)
    }
}

impl DivideElem for f16 {
    fn div(a: Self, b: Self, _: bool) -> Result<Self, ElemError> {
        Ok(f16::from_f32(a.to_f32() / b.to_f32()))
    }
}

impl DivideElem for bf16 {
    fn div(a: Self, b: Self, _: bool) -> Result<Self, ElemError> {
        Ok(bf16::from_f32(a.to_f32() / b.to_f32()))
    }
}

impl Divide {
    /// `a / b`.
    pub fn eval(&self, a: &Tensor, b: &Tensor) -> Result<Tensor, EvalError> {
        fn go<T: DivideElem>(
            spec: AutoBroadcast,
            py: bool,
            a: &Tensor,
            b: &Tensor,
        ) -> Result<Tensor, EvalError> {
            super::binary::<T>(spec, a, b, |x, y| T::div(x, y, py))
        }
        if a.element_type() != b.element_type() {
            return Err(EvalError::Types(a.element_type(), b.element_type()));
        }
        crate::dispatch!(a.element_type(), T => go::<T>(self.auto_broadcast, self.pythondiv, a, b), _ => Err(EvalError::UnsupportedType { op: "Divide", ty: a.element_type() }))
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Divide {
    pub auto_broadcast: AutoBroadcast,
    pub pythondiv: bool,
}

pub const DEF: OpDef = OpDef {
    name: "Divide",
    aliases: &[],
    max_opset: 16,
    inputs: 2,
    outputs: 1,
    parse,
};

fn parse(a: &Attrs) -> Result<Op, Vec<AttrError>> {
    let auto_broadcast = a.auto_broadcast();
    let pythondiv = a.bool_or(&["m_pythondiv", "pythondiv"], true);
    match (auto_broadcast, pythondiv) {
        (Ok(auto_broadcast), Ok(pythondiv)) => Ok(Op::Divide(Divide {
            auto_broadcast,
            pythondiv,
        })),
        (b, p) => Err(b.err().into_iter().chain(p.err()).collect()),
    }
}
