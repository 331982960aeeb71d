//! Convert-1: element type conversion.
//!
//! Spec: <https://docs.openvino.ai/2026/documentation/openvino-ir-format/operation-sets/operation-specs/type/convert-1.html>
//!
//! Attributes: `destination_type` (mandatory; a concrete element type name, any case).
//! Ports: one input, one output of the input's shape.
//!
//! `ov.save_model` writes every f32 Const as an f16 Const followed by a Convert to f32 (with a
//! `decompression` rt_info marker), so Convert is needed to run almost any saved model.
//!
//! Types: between any two of f16, bf16, f32, f64, i8, i16, i32, i64, u8, u16, u32, u64.
//! * integer → integer: two's complement wrap-around ("congruent modulo 2^N", as the spec says
//!   for negative values to unsigned types).
//! * integer or float → float: rounded once to nearest even (to f16 and bf16 through an f32
//!   rounded to odd, which makes the second rounding exact).
//! * float → integer: truncated toward zero. Out-of-range values saturate to the type's minimum
//!   or maximum, and NaN becomes 0. (The spec leaves these undefined; OpenVINO's x86 reference
//!   returns INT_MIN-like garbage. Saturation is portable and what Rust's `as` does.)
//! * float → float widening is exact; ±inf, NaN and −0 are kept.

use half::{bf16, f16};

use super::{AttrError, Attrs, EvalError, Op, OpDef};
use crate::dtype::ElementType;
use crate::tensor::{Element, Tensor};

/// A value on its way between element types: every integer fits an i128 and every float an f64
/// exactly.
#[derive(Clone, Copy, Debug)]
pub enum Num {
    Int(i128),
    Float(f64),
}

/// Conversion to and from [`Num`].
pub trait ConvertElem: Element {
    fn to_num(self) -> Num;
    fn from_num(n: Num) -> Self;
}

macro_rules! ints {
    ($($t:ty)*) => {$(
        impl ConvertElem for $t {
            fn to_num(self) -> Num {
                Num::Int(self as i128)
            }
            fn from_num(n: Num) -> Self {
                match n {
                    // Keeps the low bits: wrap-around.
                    Num::Int(i) => i as $t,
                    // Truncates; saturates out of range; NaN is 0.
                    Num::Float(f) => f as $t,
                }
            }
        }
    )*};
}
ints!(i8 i16 i32 i64 u8 u16 u32 u64);

impl ConvertElem for f32 {
    fn to_num(self) -> Num {
        Num::Float(self as f64)
    }
    fn from_num(n: Num) -> Self {
        match n {
            Num::Int(i) => i as f32,
            Num::Float(f) => f as f32,
        }
    }
}

impl ConvertElem for f64 {
    fn to_num(self) -> Num {
        Num::Float(self)
    }
    fn from_num(n: Num) -> Self {
        match n {
            Num::Int(i) => i as f64,
            Num::Float(f) => f,
        }
    }
}

/// `n` as an f32 rounded to odd: truncated toward zero, with the last bit set if inexact. A
/// later rounding to a format with at least two fewer significand bits is then exact.
fn f32_round_odd(n: Num) -> f32 {
    let (f, exact) = match n {
        Num::Int(i) => {
            let f = i as f32;
            (f, f.is_finite() && f as i128 == i)
        }
        Num::Float(x) => {
            let f = x as f32;
            (f, x.is_nan() || f as f64 == x)
        }
    };
    if exact {
        return f;
    }
    let magnitude_too_big = match n {
        Num::Int(i) => f.is_infinite() || (f as i128).unsigned_abs() > i.unsigned_abs(),
        Num::Float(x) => f.is_infinite() || (f as f64).abs() > x.abs(),
    };
    let t = if magnitude_too_big {
        f32::from_bits(f.to_bits() - 1)
    } else {
        f
    };
    f32::from_bits(t.to_bits() | 1)
}

impl ConvertElem for f16 {
    fn to_num(self) -> Num {
        Num::Float(self.to_f64())
    }
    fn from_num(n: Num) -> Self {
        f16::from_f32(f32_round_odd(n))
    }
}

impl ConvertElem for bf16 {
    fn to_num(self) -> Num {
        Num::Float(self.to_f64())
    }
    fn from_num(n: Num) -> Self {
        bf16::from_f32(f32_round_odd(n))
    }
}

/// Converts every element of `t` to `D`.
fn convert_to<S: ConvertElem, D: ConvertElem>(t: &Tensor) -> Option<Tensor> {
    let v = S::view(t)?;
    Some(D::wrap(v.mapv(|x| D::from_num(x.to_num()))))
}

fn from_source<S: ConvertElem>(t: &Tensor, to: ElementType) -> Option<Tensor> {
    crate::dispatch!(to, D => convert_to::<S, D>(t), _ => None)
}

impl Convert {
    /// The input converted to `destination_type`.
    pub fn eval(&self, t: &Tensor) -> Result<Tensor, EvalError> {
        let to = self.destination_type;
        let unsupported = |ty| EvalError::UnsupportedType { op: "Convert", ty };
        crate::dispatch!(t.element_type(), S => from_source::<S>(t, to).ok_or(unsupported(to)), _ => Err(unsupported(t.element_type())))
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Convert {
    pub destination_type: ElementType,
}

pub const DEF: OpDef = OpDef {
    name: "Convert",
    aliases: &[],
    max_opset: 17,
    inputs: 1,
    outputs: 1,
    parse,
};

fn parse(a: &Attrs) -> Result<Op, Vec<AttrError>> {
    let destination_type = a
        .parse_required("destination_type", |t| {
            match super::parse_element_type(t)? {
                ElementType::Dynamic => {
                    Err("a conversion needs a concrete destination type".into())
                }
                t => Ok(t),
            }
        })
        .map_err(|e| vec![e])?;
    Ok(Op::Convert(Convert { destination_type }))
}
