//! Numeric classes of the element types, and conversions of one value between them.
//!
//! Ops are generic over these classes instead of listing types: [`Int`] (the eight integer
//! types), [`Float`] (f32, f64: native IEEE arithmetic) and [`Narrow`](crate::ops::kernel::Narrow)
//! (f16, bf16: computed through f32). [`Cast`] converts one value of any element type to any
//! other through [`Num`], exactly where the destination can hold it (the rules are Convert-1's,
//! see `ops/convert.rs`).

use half::{bf16, f16};

use crate::tensor::Element;

/// A value on its way between element types: every integer fits an i128 and every float an f64
/// exactly.
#[derive(Clone, Copy, Debug)]
pub enum Num {
    Int(i128),
    Float(f64),
}

/// Conversion of one element to and from [`Num`].
pub trait Cast: Element {
    fn to_num(self) -> Num;
    /// The value converted as Convert-1 converts it: integers wrap, floats truncate toward
    /// zero and saturate (NaN is 0) into integers, and round once to nearest even into floats;
    /// to boolean, anything but zero is true (NaN too).
    fn from_num(n: Num) -> Self;
}

macro_rules! int_cast {
    ($($t:ty)*) => {$(
        impl Cast for $t {
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
int_cast!(i8 i16 i32 i64 u8 u16 u32 u64);

impl Cast for bool {
    fn to_num(self) -> Num {
        Num::Int(self as i128)
    }
    fn from_num(n: Num) -> Self {
        match n {
            Num::Int(i) => i != 0,
            // NaN != 0, so NaN is true (C++ `static_cast<bool>`, numpy `astype(bool)`).
            Num::Float(f) => f != 0.0,
        }
    }
}

impl Cast for f32 {
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

impl Cast for f64 {
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
pub fn f32_round_odd(n: Num) -> f32 {
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

impl Cast for f16 {
    fn to_num(self) -> Num {
        Num::Float(self.to_f64())
    }
    fn from_num(n: Num) -> Self {
        f16::from_f32(f32_round_odd(n))
    }
}

impl Cast for bf16 {
    fn to_num(self) -> Num {
        Num::Float(self.to_f64())
    }
    fn from_num(n: Num) -> Self {
        bf16::from_f32(f32_round_odd(n))
    }
}

/// The integer element types, with the operations integer kernels use.
pub trait Int: Cast + Copy + PartialOrd + Default {
    const ZERO: Self;
    const ONE: Self;
    const MIN: Self;
    const MAX: Self;
    /// -1, for signed types.
    const MINUS_ONE: Option<Self>;
    const SIGNED: bool;
    fn wrapping_add(self, b: Self) -> Self;
    fn wrapping_sub(self, b: Self) -> Self;
    fn wrapping_mul(self, b: Self) -> Self;
    fn checked_div(self, b: Self) -> Option<Self>;
    fn wrapping_rem(self, b: Self) -> Self;
    fn is_negative(self) -> bool;
    /// The value as an i128 (exact).
    fn to_i128(self) -> i128;
    /// The value as an f32 (exact below 2^24, see [`below_2_24`](Int::below_2_24)).
    fn to_f32(self) -> f32;
    /// The value as an f64 (exact below 2^53).
    fn to_f64(self) -> f64;
    /// # Safety
    /// `q` must be an integer within the type's range.
    unsafe fn from_f32_unchecked(q: f32) -> Self;
    /// # Safety
    /// `q` must be an integer within the type's range.
    unsafe fn from_f64_unchecked(q: f64) -> Self;
    /// Whether |self| < 2^24 (exact in f32).
    fn below_2_24(self) -> bool;
    /// Whether |self| < 2^53 (exact in f64).
    fn below_2_53(self) -> bool;
}

macro_rules! int_class {
    ($($t:ty: $signed:expr, $minus_one:expr, |$v:ident| $below24:expr, |$w:ident| $below53:expr;)*) => {$(
        impl Int for $t {
            const ZERO: Self = 0;
            const ONE: Self = 1;
            const MIN: Self = <$t>::MIN;
            const MAX: Self = <$t>::MAX;
            const MINUS_ONE: Option<Self> = $minus_one;
            const SIGNED: bool = $signed;
            #[inline(always)]
            fn wrapping_add(self, b: Self) -> Self {
                <$t>::wrapping_add(self, b)
            }
            #[inline(always)]
            fn wrapping_sub(self, b: Self) -> Self {
                <$t>::wrapping_sub(self, b)
            }
            #[inline(always)]
            fn wrapping_mul(self, b: Self) -> Self {
                <$t>::wrapping_mul(self, b)
            }
            #[inline(always)]
            fn checked_div(self, b: Self) -> Option<Self> {
                <$t>::checked_div(self, b)
            }
            #[inline(always)]
            fn wrapping_rem(self, b: Self) -> Self {
                <$t>::wrapping_rem(self, b)
            }
            #[inline(always)]
            #[allow(unused_comparisons)]
            fn is_negative(self) -> bool {
                self < 0
            }
            #[inline(always)]
            fn to_i128(self) -> i128 {
                self as i128
            }
            #[inline(always)]
            fn to_f32(self) -> f32 {
                self as f32
            }
            #[inline(always)]
            fn to_f64(self) -> f64 {
                self as f64
            }
            #[inline(always)]
            unsafe fn from_f32_unchecked(q: f32) -> Self {
                // SAFETY: the caller guarantees an in-range integer.
                unsafe { q.to_int_unchecked() }
            }
            #[inline(always)]
            unsafe fn from_f64_unchecked(q: f64) -> Self {
                // SAFETY: the caller guarantees an in-range integer.
                unsafe { q.to_int_unchecked() }
            }
            #[inline(always)]
            fn below_2_24(self) -> bool {
                let $v = self;
                $below24
            }
            #[inline(always)]
            fn below_2_53(self) -> bool {
                let $w = self;
                $below53
            }
        }
    )*};
}
int_class! {
    i8: true, Some(-1), |_v| true, |_w| true;
    i16: true, Some(-1), |_v| true, |_w| true;
    i32: true, Some(-1), |v| v.unsigned_abs() < 1 << 24, |_w| true;
    i64: true, Some(-1), |v| v.unsigned_abs() < 1 << 24, |w| w.unsigned_abs() < 1 << 53;
    u8: false, None, |_v| true, |_w| true;
    u16: false, None, |_v| true, |_w| true;
    u32: false, None, |v| v < 1 << 24, |_w| true;
    u64: false, None, |v| v < 1 << 24, |w| w < 1 << 53;
}

/// f32 and f64: IEEE arithmetic in the type itself.
pub trait Float:
    Cast
    + Copy
    + PartialOrd
    + std::ops::Add<Output = Self>
    + std::ops::Sub<Output = Self>
    + std::ops::Mul<Output = Self>
    + std::ops::Div<Output = Self>
    + std::ops::Neg<Output = Self>
    + std::ops::Rem<Output = Self>
{
    const ZERO: Self;
    const ONE: Self;
    const NAN: Self;
    /// Whether the type is f64.
    const DOUBLE: bool;
    fn of_f64(v: f64) -> Self;
    fn as_f64(self) -> f64;
    fn is_nan(self) -> bool;
    fn is_infinite(self) -> bool;
    fn is_sign_negative(self) -> bool;
    fn abs(self) -> Self;
    fn copysign(self, sign: Self) -> Self;
    fn floor(self) -> Self;
    fn ceil(self) -> Self;
    fn trunc(self) -> Self;
    /// Rounds half away from zero (`round` mode `half_away_from_zero`).
    fn round_away(self) -> Self;
    /// Rounds half to even (`round` mode `half_to_even`).
    fn round_even(self) -> Self;
    /// Correctly rounded square root (IEEE).
    fn sqrt(self) -> Self;
    /// Elementary functions from the `libm` crate (a port of musl's: the same bits on every
    /// machine, f64 within 1 ulp); f32 computed in f64 and rounded once.
    fn exp(self) -> Self;
    fn exp_m1(self) -> Self;
    fn ln(self) -> Self;
    fn ln_1p(self) -> Self;
    fn sin(self) -> Self;
    fn cos(self) -> Self;
    fn tan(self) -> Self;
    fn asin(self) -> Self;
    fn acos(self) -> Self;
    fn atan(self) -> Self;
    fn sinh(self) -> Self;
    fn cosh(self) -> Self;
    fn tanh(self) -> Self;
    fn asinh(self) -> Self;
    fn acosh(self) -> Self;
    fn atanh(self) -> Self;
    fn erf(self) -> Self;
    fn erfc(self) -> Self;
    /// `self · a + b` rounded once (`fma`, from the `libm` crate: correctly rounded with or
    /// without an FMA unit).
    fn mul_add(self, a: Self, b: Self) -> Self;
    /// C `pow` from the `libm` crate (the same bits on every machine); f32 computed in f64
    /// and rounded once (correctly rounded but for double-rounding ties).
    fn powf(self, e: Self) -> Self;
}

macro_rules! float_class {
    ($($t:ident: $pow:path;)*) => {$(
        impl Float for $t {
            const ZERO: Self = 0.0;
            const ONE: Self = 1.0;
            const NAN: Self = $t::NAN;
            const DOUBLE: bool = std::mem::size_of::<$t>() == 8;
            #[inline(always)]
            fn of_f64(v: f64) -> Self {
                v as $t
            }
            #[inline(always)]
            fn as_f64(self) -> f64 {
                self as f64
            }
            #[inline(always)]
            fn is_nan(self) -> bool {
                $t::is_nan(self)
            }
            #[inline(always)]
            fn is_infinite(self) -> bool {
                $t::is_infinite(self)
            }
            #[inline(always)]
            fn is_sign_negative(self) -> bool {
                $t::is_sign_negative(self)
            }
            #[inline(always)]
            fn abs(self) -> Self {
                $t::abs(self)
            }
            #[inline(always)]
            fn copysign(self, sign: Self) -> Self {
                $t::copysign(self, sign)
            }
            #[inline(always)]
            fn floor(self) -> Self {
                $t::floor(self)
            }
            #[inline(always)]
            fn ceil(self) -> Self {
                $t::ceil(self)
            }
            #[inline(always)]
            fn trunc(self) -> Self {
                $t::trunc(self)
            }
            #[inline(always)]
            fn round_away(self) -> Self {
                $t::round(self)
            }
            #[inline(always)]
            fn round_even(self) -> Self {
                $t::round_ties_even(self)
            }
            #[inline(always)]
            fn sqrt(self) -> Self {
                $t::sqrt(self)
            }
            #[inline(always)]
            fn powf(self, e: Self) -> Self {
                $pow(self, e)
            }
            #[inline(always)]
            fn mul_add(self, a: Self, b: Self) -> Self {
                fma_of!($t)(self, a, b)
            }
            elementary!($t: exp exp exp_m1 expm1 ln log ln_1p log1p sin sin cos cos tan tan
                asin asin acos acos atan atan sinh sinh cosh cosh tanh tanh asinh asinh
                atanh atanh erf erf erfc erfc);
            #[inline(always)]
            fn acosh(self) -> Self {
                // The libm crate's acosh (0.2.16) returns finite values for some x in
                // (-2^26, -2]; acosh is NaN below 1.
                if self < 1.0 {
                    <$t>::NAN
                } else {
                    libm::acosh(self as f64) as $t
                }
            }
        }
    )*};
}

/// The `libm` crate's fused multiply-add for each float type.
macro_rules! fma_of {
    (f32) => {
        libm::fmaf
    };
    (f64) => {
        libm::fma
    };
}

/// The elementary functions of [`Float`]: f64 by the `libm` function, f32 through it.
macro_rules! elementary {
    (f64: $($name:ident $libm:ident)*) => {$(
        #[inline(always)]
        fn $name(self) -> Self {
            libm::$libm(self)
        }
    )*};
    (f32: $($name:ident $libm:ident)*) => {$(
        #[inline(always)]
        fn $name(self) -> Self {
            libm::$libm(self as f64) as f32
        }
    )*};
}
/// f32 `pow` through f64.
#[inline(always)]
fn powf_f32(a: f32, e: f32) -> f32 {
    libm::pow(a as f64, e as f64) as f32
}

float_class! {
    f32: powf_f32;
    f64: libm::pow;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn booleans_convert_like_cpp_casts() {
        assert!(!bool::from_num(Num::Int(0)));
        assert!(bool::from_num(Num::Int(-3)));
        assert!(bool::from_num(Num::Int(256)));
        assert!(!bool::from_num(Num::Float(-0.0)));
        assert!(bool::from_num(Num::Float(f64::NAN)));
        assert!(bool::from_num(Num::Float(1e-300)));
        assert_eq!(f32::from_num(true.to_num()), 1.0);
        assert_eq!(i8::from_num(false.to_num()), 0);
    }
}
