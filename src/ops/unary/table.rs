//! The table of the unary family (see [`super`] for what every row gets).
//!
//! A row: the Rust type and the name of its definition, the layer type and op version, the
//! element types the spec allows, whether the float rule is exact in f32 (`typed`: not exact,
//! but cheap enough per element that its f32 and f64 rules run as steps of a register-held
//! chain, a convolution's epilogue among them), the integer rule (wrapping; an `Err` for a
//! case the op leaves undefined) and the float rule. Members with
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

use super::{Unary, UnaryOp, double, no_int, single, unary_table};
use crate::num::{Float, Int};
use crate::ops::binary::ArithVisitor;
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
        Negative NEGATIVE: "Negative"-1, SIGNED, exact: true,
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
            float |x| x.exp(),
            single |x| single::exp(x),
            lane |x| single::exp_lane(x);
        /// Log-1: the natural logarithm.
        Log LOG: "Log"-1, NUMERIC, exact: false,
            int |x| int_round(x, Float::ln),
            float |x| x.ln();
        /// Sin-1.
        Sin SIN: "Sin"-1, NUMERIC, exact: false,
            int |x| int_trig(x, 0),
            float |x| x.sin();
        /// Cos-1.
        Cos COS: "Cos"-1, NUMERIC, exact: false,
            int |x| int_trig(x, 1),
            float |x| x.cos();
        /// Tan-1.
        Tan TAN: "Tan"-1, NUMERIC, exact: false,
            int |x| int_trig(x, 2),
            float |x| x.tan();
        /// Asin-1.
        Asin ASIN: "Asin"-1, NUMERIC, exact: false,
            int |x| int_round(x, Float::asin),
            float |x| x.asin();
        /// Acos-1.
        Acos ACOS: "Acos"-1, NUMERIC, exact: false,
            int |x| int_round(x, Float::acos),
            float |x| x.acos();
        /// Atan-1.
        Atan ATAN: "Atan"-1, NUMERIC, exact: false,
            int |x| int_round(x, Float::atan),
            float |x| x.atan();
        /// Sinh-1.
        Sinh SINH: "Sinh"-1, NUMERIC, exact: false,
            int |x| int_round(x, Float::sinh),
            float |x| x.sinh();
        /// Cosh-1.
        Cosh COSH: "Cosh"-1, NUMERIC, exact: false,
            int |x| int_round(x, Float::cosh),
            float |x| x.cosh();
        /// Tanh-1.
        Tanh TANH: "Tanh"-1, NUMERIC, exact: false,
            int |x| int_round(x, Float::tanh),
            float |x| x.tanh(),
            single |x| single::tanh(x),
            lanes single::TanhForm,
            double |x| double::tanh(x);
        /// Asinh-3 (OpenVINO names it Asinh-4: the version of opset4, where it first appears).
        Asinh ASINH: "Asinh"-4, NUMERIC, exact: false,
            int |x| int_round(x, Float::asinh),
            float |x| x.asinh();
        /// Acosh-3 (OpenVINO names it Acosh-4).
        Acosh ACOSH: "Acosh"-4, NUMERIC, exact: false,
            int |x| int_round(x, Float::acosh),
            float |x| x.acosh();
        /// Atanh-3 (OpenVINO names it Atanh-4).
        Atanh ATANH: "Atanh"-4, NUMERIC, exact: false,
            int |x| Ok(int_atanh(x)),
            float |x| x.atanh();
        /// Erf-1: the Gauss error function.
        Erf ERF: "Erf"-1, NUMERIC, exact: false,
            int |x| int_round(x, Float::erf),
            float |x| x.erf(),
            single |x| single::erf(x),
            lanes single::ErfForm;
        /// Sigmoid-1: `1 / (1 + e^−x)`.
        Sigmoid SIGMOID: "Sigmoid"-1, FLOAT, exact: false,
            int |x| no_int(),
            float |x| sigmoid(x),
            single |x| single::sigmoid(x),
            lane |x| single::sigmoid_lane(x),
            double |x| double::sigmoid(x);
        /// HSigmoid-5: `min(max(x + 3, 0), 6) / 6`.
        HSigmoid HSIGMOID: "HSigmoid"-5, FLOAT, exact: typed,
            int |x| no_int(),
            float |x| hsigmoid(x),
            single |x| single::hsigmoid(x);
        /// HSwish-4: `x · min(max(x + 3, 0), 6) / 6`.
        HSwish HSWISH: "HSwish"-4, FLOAT, exact: typed,
            int |x| no_int(),
            float |x| times(x, hsigmoid(x)),
            single |x| single::hswish(x),
            double |x| double::hswish(x);
        /// SoftPlus-4: `ln(1 + e^x)`.
        SoftPlus SOFTPLUS: "SoftPlus"-4, FLOAT, exact: false,
            int |x| no_int(),
            float |x| softplus(x),
            single |x| single::softplus(x),
            lane |x| single::softplus_lane(x);
        /// SoftSign-9: `x / (1 + |x|)`.
        SoftSign SOFTSIGN: "SoftSign"-9, FLOAT, exact: false,
            int |x| no_int(),
            float |x| x / (F::ONE + x.abs());
        /// Mish-4: `x · tanh(ln(1 + e^x))`.
        Mish MISH: "Mish"-4, FLOAT, exact: false,
            int |x| no_int(),
            float |x| times(x, softplus(x).tanh()),
            single |x| single::mish(x),
            lanes single::MishForm,
            double |x| double::mish(x);
    }
    own { Clamp, Elu, Gelu, Gelu7, Round, Swish, Selu, HardSigmoid }
    // The exact ones among them (their `Unary::link`).
    own_links { Clamp, Round }
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

/// An elementary function of an integer (types the spec allows for it, with no integer rule
/// of its own but Sqrt's and Tanh's): the exact function in f64, rounded to the nearest
/// integer, halves away from zero (the spec's "rounded half up" of Sqrt and Tanh, whose
/// results are never negative halves). A result that is not a number (log of 0 or of a
/// negative value, asin of 2) or does not fit the type is an error. i64 and u64 values above
/// 2^53 are rounded to f64 first (but for Sin, Cos and Tan, [`int_trig`]).
#[inline(always)]
fn int_round<T: Int>(x: T, f: impl Fn(f64) -> f64) -> Result<T, ElemError> {
    to_int(f(x.to_f64()))
}

/// Sin (0), Cos (1) or Tan (2) of an integer, rounded as [`int_round`]. An i64 or u64 above
/// 2^53 is split into the f64 nearest it and the (small, exact) rest, and the angle-sum
/// formulas join the two: the periodic functions of a rounded argument would be meaningless.
#[inline(always)]
fn int_trig<T: Int>(x: T, which: u8) -> Result<T, ElemError> {
    let v = x.to_i128();
    let hi = v as f64;
    let lo = (v - hi as i128) as f64;
    let (sh, ch) = (Float::sin(hi), Float::cos(hi));
    let (sl, cl) = (Float::sin(lo), Float::cos(lo));
    let (sin, cos) = (sh * cl + ch * sl, ch * cl - sh * sl);
    to_int(match which {
        0 => sin,
        1 => cos,
        _ => sin / cos,
    })
}

/// `y` rounded to the nearest integer of type T, halves away from zero; an error when it is
/// not a number or does not fit.
#[inline(always)]
fn to_int<T: Int>(y: f64) -> Result<T, ElemError> {
    let y = y.round();
    if y.is_nan() {
        return Err(ElemError::Undefined("a result that is not a number"));
    }
    if y < T::MIN.to_f64() || y > T::MAX.to_f64() || y.is_infinite() {
        return Err(ElemError::Undefined("a result outside the type's range"));
    }
    Ok(T::from_num(crate::num::Num::Int(y as i128)))
}

/// Atanh-3's integer rule: the type's minimum for x ≤ −1, its maximum for x ≥ 1, else
/// atanh(0) = 0.
#[inline(always)]
fn int_atanh<T: Int>(x: T) -> T {
    if x == T::ZERO {
        T::ZERO
    } else if x.is_negative() {
        T::MIN
    } else {
        T::MAX
    }
}

/// `1 / (1 + e^−x)`, as `e^x / (1 + e^x)` for negative x (no overflow of `e^−x` where the
/// result is still a subnormal).
#[inline(always)]
pub fn sigmoid<F: Float>(x: F) -> F {
    if x < F::ZERO {
        let e = x.exp();
        e / (F::ONE + e)
    } else {
        F::ONE / (F::ONE + (-x).exp())
    }
}

/// `x · g` for a factor `g ≥ 0` that vanishes as x → −∞ (Swish, Mish, HSwish, Gelu): where
/// `g` is 0 the product is a zero of x's sign, so that the limit at −∞ is −0, not −∞ · 0 = NaN.
#[inline(always)]
pub fn times<F: Float>(x: F, g: F) -> F {
    if g == F::ZERO {
        F::ZERO.copysign(x)
    } else {
        x * g
    }
}

/// `min(max(x + 3, 0), 6) / 6`.
#[inline(always)]
fn hsigmoid<F: Float>(x: F) -> F {
    hard_clamp(x) / F::of_f64(6.0)
}

/// `min(max(x + 3, 0), 6)` (NaN stays NaN).
#[inline(always)]
pub(super) fn hard_clamp<F: Float>(x: F) -> F {
    let six = F::of_f64(6.0);
    let t = x + F::of_f64(3.0);
    if t > six {
        six
    } else if t > F::ZERO || t.is_nan() {
        t
    } else {
        F::ZERO
    }
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
