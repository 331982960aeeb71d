//! The table of the unary family (see [`super`] for what every row gets).
//!
//! A row: the Rust type and the name of its definition, the layer type and op version, the
//! element types the spec allows, whether the float rule is exact in f32, the integer rule
//! (wrapping; an `Err` for a case the op leaves undefined) and the float rule. Members with
//! attributes or parameter inputs (Clamp, Elu, Gelu, Round, Swish, Selu, HardSigmoid) are in
//! [`super::own`] and listed under `own`. Adding a row registers the op (`FAMILY` is in
//! [`REGISTRY`](crate::ops::REGISTRY)).
//!
//! Spec pages: `operation-specs/arithmetic/*` and `operation-specs/activation/*` of
//! <https://docs.openvino.ai/2026/documentation/openvino-ir-format/operation-sets/operation-specs.html>.
//!
//! Decisions (docs/ops.md has them all):
//! * Abs and Negative of the minimum signed value wrap to itself (two's complement, as C++ and
//!   numpy compute them); Negative of an unsigned value wraps (0 − x).
//! * Sign: −1, 0 or 1 in the input's type; NaN stays NaN and ±0 keeps its sign (numpy).
//! * Ceiling, Floor, Round: integers are returned unchanged.
//! * Sqrt of an integer: the square root rounded to the nearest integer, halves up (Sqrt-1's
//!   integer rule, computed exactly); of a negative integer: an error (E606).
//! * Relu: `max(x, 0)`; NaN stays NaN (as numpy's `maximum(x, 0)`), −0 gives +0.
//! * The elementary functions and activations on floats are the exact functions of the spec's
//!   formula, correctly rounded but for a fraction of an ulp: f32 in f64 (the `libm` crate)
//!   and rounded once, rewritten where the textbook formula loses digits (SoftPlus as
//!   `max(x, 0) + log1p(exp(−|x|))`, Gelu with `erfc` where `1 + erf` cancels).

use super::{Unary, UnaryOp, no_int, unary_table};
use crate::num::{Float, Int};
use crate::ops::{AttrError, Attrs, ElemError, OpDef};
use crate::tensor::TypeSet;

pub use super::own::{Clamp, Elu, Gelu, Gelu7, HardSigmoid, Round, Selu, Swish};

unary_table! {
    rows {
        /// Abs-1: `|x|` (MIN stays MIN).
        Abs ABS: "Abs"-1, NUMERIC, exact: true,
            int |x| Ok(if x.is_negative() { T::ZERO.wrapping_sub(x) } else { x }),
            float |x| x.abs();
        /// Negative-1: `−x`, wrapping.
        Negative NEGATIVE: "Negative"-1, NUMERIC, exact: true,
            int |x| Ok(T::ZERO.wrapping_sub(x)),
            float |x| -x;
        /// Sign-1: −1, 0 or 1.
        Sign SIGN: "Sign"-1, NUMERIC, exact: true,
            int |x| Ok(if x.is_negative() {
                T::ZERO.wrapping_sub(T::ONE)
            } else if x == T::ZERO {
                T::ZERO
            } else {
                T::ONE
            }),
            float |x| if x.is_nan() || x == F::ZERO { x } else { F::ONE.copysign(x) };
        /// Ceiling-1: the smallest integer not below `x`.
        Ceiling CEILING: "Ceiling"-1, NUMERIC, exact: true,
            int |x| Ok(x),
            float |x| x.ceil();
        /// Floor-1: the largest integer not above `x`.
        Floor FLOOR: "Floor"-1, NUMERIC, exact: true,
            int |x| Ok(x),
            float |x| x.floor();
        /// Sqrt-1: the square root (IEEE, correctly rounded; integers rounded half up).
        Sqrt SQRT: "Sqrt"-1, NUMERIC, exact: true,
            int |x| int_sqrt(x),
            float |x| x.sqrt();
        /// Relu-1: `max(x, 0)`.
        Relu RELU: "Relu"-1, NUMERIC, exact: true,
            int |x| Ok(if x.is_negative() { T::ZERO } else { x }),
            float |x| if x > F::ZERO || x.is_nan() { x } else { F::ZERO };
        /// Exp-1: `e^x`.
        Exp EXP: "Exp"-1, FLOAT, exact: false,
            int |x| no_int(),
            float |x| x.exp();
        /// Log-1: the natural logarithm.
        Log LOG: "Log"-1, FLOAT, exact: false,
            int |x| no_int(),
            float |x| x.ln();
        /// Sin-1.
        Sin SIN: "Sin"-1, FLOAT, exact: false,
            int |x| no_int(),
            float |x| x.sin();
        /// Cos-1.
        Cos COS: "Cos"-1, FLOAT, exact: false,
            int |x| no_int(),
            float |x| x.cos();
        /// Tan-1.
        Tan TAN: "Tan"-1, FLOAT, exact: false,
            int |x| no_int(),
            float |x| x.tan();
        /// Asin-1.
        Asin ASIN: "Asin"-1, FLOAT, exact: false,
            int |x| no_int(),
            float |x| x.asin();
        /// Acos-1.
        Acos ACOS: "Acos"-1, FLOAT, exact: false,
            int |x| no_int(),
            float |x| x.acos();
        /// Atan-1.
        Atan ATAN: "Atan"-1, FLOAT, exact: false,
            int |x| no_int(),
            float |x| x.atan();
        /// Sinh-1.
        Sinh SINH: "Sinh"-1, FLOAT, exact: false,
            int |x| no_int(),
            float |x| x.sinh();
        /// Cosh-1.
        Cosh COSH: "Cosh"-1, FLOAT, exact: false,
            int |x| no_int(),
            float |x| x.cosh();
        /// Tanh-1.
        Tanh TANH: "Tanh"-1, FLOAT, exact: false,
            int |x| no_int(),
            float |x| x.tanh();
        /// Asinh-3 (OpenVINO names it Asinh-4: the version of opset4, where it first appears).
        Asinh ASINH: "Asinh"-4, FLOAT, exact: false,
            int |x| no_int(),
            float |x| x.asinh();
        /// Acosh-3 (OpenVINO names it Acosh-4).
        Acosh ACOSH: "Acosh"-4, FLOAT, exact: false,
            int |x| no_int(),
            float |x| x.acosh();
        /// Atanh-3 (OpenVINO names it Atanh-4).
        Atanh ATANH: "Atanh"-4, FLOAT, exact: false,
            int |x| no_int(),
            float |x| x.atanh();
        /// Erf-1: the Gauss error function.
        Erf ERF: "Erf"-1, FLOAT, exact: false,
            int |x| no_int(),
            float |x| x.erf();
        /// Sigmoid-1: `1 / (1 + e^−x)`.
        Sigmoid SIGMOID: "Sigmoid"-1, FLOAT, exact: false,
            int |x| no_int(),
            float |x| sigmoid(x);
        /// HSigmoid-5: `min(max(x + 3, 0), 6) / 6`.
        HSigmoid HSIGMOID: "HSigmoid"-5, FLOAT, exact: false,
            int |x| no_int(),
            float |x| hsigmoid(x);
        /// HSwish-4: `x · min(max(x + 3, 0), 6) / 6`.
        HSwish HSWISH: "HSwish"-4, FLOAT, exact: false,
            int |x| no_int(),
            float |x| x * hsigmoid(x);
        /// SoftPlus-4: `ln(1 + e^x)`.
        SoftPlus SOFTPLUS: "SoftPlus"-4, FLOAT, exact: false,
            int |x| no_int(),
            float |x| softplus(x);
        /// SoftSign-9: `x / (1 + |x|)`.
        SoftSign SOFTSIGN: "SoftSign"-9, FLOAT, exact: false,
            int |x| no_int(),
            float |x| x / (F::ONE + x.abs());
        /// Mish-4: `x · tanh(ln(1 + e^x))`.
        Mish MISH: "Mish"-4, FLOAT, exact: false,
            int |x| no_int(),
            float |x| x * softplus(x).tanh();
    }
    own { Clamp, Elu, Gelu, Gelu7, Round, Swish, Selu, HardSigmoid }
}

/// The square root of an integer rounded to the nearest integer, halves up (a negative
/// integer is an error): `r = ⌊√x⌋`, plus one when `x ≥ (r + ½)²`, that is `4x ≥ (2r + 1)²`.
#[inline(always)]
fn int_sqrt<T: Int>(x: T) -> Result<T, ElemError> {
    if x.is_negative() {
        return Err(ElemError::Undefined(
            "the square root of a negative integer",
        ));
    }
    let v = x.to_i128() as u128;
    let r = v.isqrt();
    let up = 4 * v >= (2 * r + 1) * (2 * r + 1);
    let r = if up { r + 1 } else { r };
    // r ≤ √MAX + 1, which every type holds.
    Ok(T::from_num(crate::num::Num::Int(r as i128)))
}

/// `1 / (1 + e^−x)`.
#[inline(always)]
pub fn sigmoid<F: Float>(x: F) -> F {
    F::ONE / (F::ONE + (-x).exp())
}

/// `min(max(x + 3, 0), 6) / 6`.
#[inline(always)]
fn hsigmoid<F: Float>(x: F) -> F {
    let three = F::of_f64(3.0);
    let six = F::of_f64(6.0);
    let t = x + three;
    let c = if t > six {
        six
    } else if t > F::ZERO || t.is_nan() {
        t
    } else {
        F::ZERO
    };
    c / six
}

/// `ln(1 + e^x)` as `max(x, 0) + ln(1 + e^−|x|)` (no overflow, no cancellation).
#[inline(always)]
fn softplus<F: Float>(x: F) -> F {
    if x.is_nan() {
        return x;
    }
    let m = if x > F::ZERO { x } else { F::ZERO };
    m + (-x.abs()).exp().ln_1p()
}
