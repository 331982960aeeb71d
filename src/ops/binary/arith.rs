//! The table of the binary arithmetic family (see [`super`] for what every row gets: attribute
//! `auto_broadcast` none/numpy/pdpd, inference, kernels on the twelve numeric types, fusion).
//!
//! A row: the Rust type and the name of its definition, the layer type and op version, the
//! integer rule (two's complement wrap-around; an `Err` for a case the op leaves undefined),
//! the float rule (IEEE in the type; f16 and bf16 computed in f32 and rounded once), and the
//! rule on interval bounds (i128, saturating; `None` where the corners of the inputs'
//! intervals do not bound the result). Divide has its own attribute (`m_pythondiv`) and
//! integer kernel, in [`super::divide`]: it is listed under `own`. Adding a row registers the
//! op (`FAMILY` is in [`REGISTRY`]).
//!
//! [`REGISTRY`]: crate::ops::REGISTRY
//!
//! Spec pages: <https://docs.openvino.ai/2026/documentation/openvino-ir-format/operation-sets/operation-specs/arithmetic/subtract-1.html>
//! (and `add-1`, `multiply-1`, `divide-1`, `maximum-1`, `minimum-1`, `squared-difference-1`,
//! `power-1`, `floormod-1`, `mod-1`). Decisions: a pdpd op without an axis uses the spec's −1
//! (OpenVINO's loader uses 0; `check` warns); integers wrap (OpenVINO's CPU plugin saturates
//! u8/i8: ovir follows the reference); f16 and bf16 round to nearest even (the CPU plugin's
//! choice; the reference's bf16 rounding quirk is not copied).
//!
//! * Maximum, Minimum: a NaN operand gives NaN (numpy's `maximum`/`minimum`; OpenVINO's
//!   reference uses `std::max`, whose result depends on the order of the operands);
//!   max(−0, +0) = +0 and min(−0, +0) = −0 in either order.
//! * FloorMod: the floored remainder, with the divisor's sign (numpy `remainder`; a zero
//!   remainder takes the divisor's sign too); Mod: the truncated remainder, with the
//!   dividend's sign (C `fmod`). A float divisor 0 gives NaN; an integer divisor 0 is an error
//!   (E601); the minimum signed value mod −1 is 0.
//! * Power: floats by C `pow` (the `libm` crate: the same bits on every machine; pow(x, ±0) = 1
//!   and pow(1, y) = 1 even for a NaN y); integers with an exponent ≥ 0 exactly, wrapping
//!   (0^0 = 1); a negative integer exponent is an error (E606, numpy's rule: the result is not
//!   an integer, OpenVINO's reference gives 0 or garbage).

pub use super::divide::Divide;
use super::divide::{checked_rem, int_rem_run};
use super::{Arith, ArithVisitor, Binary};
use crate::num::{Float, Int};
use crate::ops::{AttrError, Attrs, ElemError, OpDef};

super::arith_table! {
    rows {
        /// Subtract-1: `a - b`.
        Subtract SUBTRACT: "Subtract"-1,
            int |a, b| Ok(a.wrapping_sub(b)),
            float |a, b| a - b,
            bounds |a, b| Some(a.saturating_sub(b));
        /// Add-1: `a + b`.
        Add ADD: "Add"-1,
            int |a, b| Ok(a.wrapping_add(b)),
            float |a, b| a + b,
            bounds |a, b| Some(a.saturating_add(b));
        /// Multiply-1: `a * b`.
        Multiply MULTIPLY: "Multiply"-1,
            int |a, b| Ok(a.wrapping_mul(b)),
            float |a, b| a * b,
            bounds |a, b| Some(a.saturating_mul(b));
        /// Maximum-1: the larger operand; NaN if either is NaN; max(−0, +0) = +0.
        Maximum MAXIMUM: "Maximum"-1,
            int |a, b| Ok(if a < b { b } else { a }),
            float |a, b| float_max(a, b),
            bounds |a, b| Some(a.max(b));
        /// Minimum-1: the smaller operand; NaN if either is NaN; min(−0, +0) = −0.
        Minimum MINIMUM: "Minimum"-1,
            int |a, b| Ok(if b < a { b } else { a }),
            float |a, b| float_min(a, b),
            bounds |a, b| Some(a.min(b));
        /// SquaredDifference-1: `(a - b)²`.
        SquaredDifference SQUARED_DIFFERENCE: "SquaredDifference"-1,
            int |a, b| { let d = a.wrapping_sub(b); Ok(d.wrapping_mul(d)) },
            float |a, b| { let d = a - b; d * d },
            bounds |_a, _b| None;
        /// FloorMod-1: the floored remainder (the divisor's sign).
        FloorMod FLOOR_MOD: "FloorMod"-1, chains: false,
            int |a, b| checked_rem(a, b, true),
            float |a, b| float_floor_mod(a, b),
            bounds |_a, _b| None,
            runs |a, b, out| int_rem_run(a, b, out, true);
        /// Mod-1: the truncated remainder (the dividend's sign).
        Mod MOD: "Mod"-1, chains: false,
            int |a, b| checked_rem(a, b, false),
            float |a, b| a % b,
            bounds |_a, _b| None,
            runs |a, b, out| int_rem_run(a, b, out, false);
        /// Power-1: `a` to the power `b`.
        Power POWER: "Power"-1, chains: false,
            int |a, b| int_pow(a, b),
            float |a, b| a.powf(b),
            bounds |_a, _b| None;
    }
    own { Divide }
}

/// numpy's `maximum`: NaN wins, then the larger, then +0 over −0.
#[inline(always)]
fn float_max<F: Float>(a: F, b: F) -> F {
    if a.is_nan() || b.is_nan() {
        a + b
    } else if a > b {
        a
    } else if b > a || a.is_sign_negative() {
        // Larger, or equal with `a` −0 (then `b` is ±0 and at least as large).
        b
    } else {
        a
    }
}

/// numpy's `minimum`: NaN wins, then the smaller, then −0 over +0.
#[inline(always)]
fn float_min<F: Float>(a: F, b: F) -> F {
    if a.is_nan() || b.is_nan() {
        a + b
    } else if a < b {
        a
    } else if b < a {
        b
    } else if a.is_sign_negative() {
        a
    } else {
        b
    }
}

/// numpy's `remainder` on floats: `fmod`, moved into the divisor's sign; a zero result takes
/// the divisor's sign; a zero divisor gives NaN.
#[inline(always)]
fn float_floor_mod<F: Float>(a: F, b: F) -> F {
    let r = a % b;
    if r == F::ZERO {
        F::ZERO.copysign(b)
    } else if r.is_sign_negative() != b.is_sign_negative() && !r.is_nan() {
        r + b
    } else {
        r
    }
}

/// `a` to the integer power `b ≥ 0` by squaring, wrapping; a negative `b` is an error.
#[inline(always)]
fn int_pow<T: Int>(a: T, b: T) -> Result<T, ElemError> {
    if b.is_negative() {
        return Err(ElemError::Undefined("a negative exponent"));
    }
    let mut e = b.to_i128() as u128;
    let (mut base, mut acc) = (a, T::ONE);
    while e > 0 {
        if e & 1 == 1 {
            acc = acc.wrapping_mul(base);
        }
        base = base.wrapping_mul(base);
        e >>= 1;
    }
    Ok(acc)
}
