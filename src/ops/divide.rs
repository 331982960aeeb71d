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

use super::kernel::{self, BLOCK, Out, RunResult, Src};
use super::{AttrError, Attrs, ElemError, Elementwise, EvalError, Op, OpDef};
use crate::broadcast::AutoBroadcast;
use crate::tensor::{Element, Tensor};

/// Division of one element type.
pub trait DivideElem: Element {
    /// One quotient, checked (the reference every fast path must agree with).
    fn div(a: Self, b: Self, pythondiv: bool) -> Result<Self, ElemError>;

    /// The loop over one run. On failure, the offset of the first failing element.
    fn run(a: Src<'_, Self>, b: Src<'_, Self>, out: Out<'_, Self>, pythondiv: bool) -> RunResult;
}

/// Integers divided exactly through floats, since `idiv` has no vector form. The quotient of
/// two integers below 2^53 in magnitude, computed in f64, is correctly rounded and cannot cross
/// an integer: its distance to the nearest integer, if it is not one, is at least 1/|b|, more
/// than its rounding error (at most |a/b|·2^-53 < 1/|b|). So truncating or flooring it gives
/// the exact integer quotient. The same argument in f32 holds below 2^24 (twice the lanes, and
/// a faster divider).
///
/// Each block divides in f32 when all its values are below 2^24, else in f64 when all are below
/// 2^53 (always, for types of at most 32 bits), else (i64, u64) element by element, checked.
/// With AVX2 or AVX-512 (detected at run time by [`kernel::map`]) the float loops are vector
/// divisions.
pub trait FloatDiv: Element + PartialEq {
    const MIN: Self;
    const ZERO: Self;
    const ONE: Self;
    /// -1, or `None` for unsigned types.
    const MINUS_ONE: Option<Self>;
    fn to_f64(self) -> f64;
    /// # Safety
    /// `q` must be an integer within the type's range.
    unsafe fn from_f64(q: f64) -> Self;
    fn to_f32(self) -> f32;
    /// # Safety
    /// As for `from_f64`.
    unsafe fn from_f32(q: f32) -> Self;
    /// Whether |self| < 2^24.
    fn below_2_24(self) -> bool;
    /// Whether |self| < 2^53.
    fn below_2_53(self) -> bool;
}

macro_rules! float_div {
    ($($t:ty, $m1:expr, |$v:ident| $below:expr, |$w:ident| $below53:expr;)*) => {$(
        impl FloatDiv for $t {
            const MIN: Self = <$t>::MIN;
            const ZERO: Self = 0;
            const ONE: Self = 1;
            const MINUS_ONE: Option<Self> = $m1;
            #[inline(always)]
            fn to_f64(self) -> f64 {
                self as f64
            }
            #[inline(always)]
            unsafe fn from_f64(q: f64) -> Self {
                // SAFETY: the caller guarantees an in-range integer.
                unsafe { q.to_int_unchecked() }
            }
            #[inline(always)]
            fn to_f32(self) -> f32 {
                self as f32
            }
            #[inline(always)]
            unsafe fn from_f32(q: f32) -> Self {
                // SAFETY: the caller guarantees an in-range integer.
                unsafe { q.to_int_unchecked() }
            }
            #[inline(always)]
            fn below_2_24(self) -> bool {
                let $v = self;
                $below
            }
            #[inline(always)]
            fn below_2_53(self) -> bool {
                let $w = self;
                $below53
            }
        }
    )*};
}
float_div! {
    i8, Some(-1), |_v| true, |_w| true;
    i16, Some(-1), |_v| true, |_w| true;
    i32, Some(-1), |v| v.unsigned_abs() < 1 << 24, |_w| true;
    i64, Some(-1), |v| v.unsigned_abs() < 1 << 24, |w| w.unsigned_abs() < 1 << 53;
    u8, None, |_v| true, |_w| true;
    u16, None, |_v| true, |_w| true;
    u32, None, |v| v < 1 << 24, |_w| true;
    u64, None, |v| v < 1 << 24, |w| w < 1 << 53;
}

/// The first element of a block that cannot be divided: a zero divisor, or MIN / -1.
#[cold]
fn first_bad<T: FloatDiv>(a: Src<'_, T>, b: Src<'_, T>, len: usize) -> Option<(usize, ElemError)> {
    (0..len).find_map(|i| {
        let (p, q) = (a.get(i), b.get(i));
        if q == T::ZERO {
            Some((i, ElemError::DivisionByZero))
        } else if Some(q) == T::MINUS_ONE && p == T::MIN {
            Some((i, ElemError::Overflow))
        } else {
            None
        }
    })
}

/// What a pass of [`div_block`] found in its block, as bits (an integer, so that the loop's
/// reduction over it vectorises).
#[derive(Clone, Copy, Default, PartialEq, Eq)]
struct Found(u8);

impl Found {
    /// A zero divisor or MIN / -1: the block fails.
    const BAD: u8 = 1;
    /// A value of at least 2^24 in magnitude: f32 is not exact for the block.
    const BEYOND_F32: u8 = 2;
    /// A value of at least 2^53 in magnitude (i64, u64): neither is f64.
    const BEYOND_F64: u8 = 4;

    fn has(self, bit: u8) -> bool {
        self.0 & bit != 0
    }

    /// What two parts of a block found together.
    fn merge(self, other: Found) -> Found {
        Found(self.0 | other.0)
    }
}

/// One quotient for [`div_block`], through f64 if `wide` else f32, with `found` updated. An
/// element that cannot be divided, or is too large for the float, is computed as 0 / 1
/// instead, so that every conversion back is in range.
#[inline(always)]
fn quotient<T: FloatDiv>(found: Found, x: T, y: T, floor: bool, wide: bool) -> (Found, T) {
    let fails = (y == T::ZERO) | ((Some(y) == T::MINUS_ONE) & (x == T::MIN));
    let beyond_f32 = !(x.below_2_24() & y.below_2_24());
    let beyond_f64 = !(x.below_2_53() & y.below_2_53());
    let found = Found(
        found.0
            | (fails as u8 * Found::BAD)
            | (beyond_f32 as u8 * Found::BEYOND_F32)
            | (beyond_f64 as u8 * Found::BEYOND_F64),
    );
    let skip = fails | if wide { beyond_f64 } else { beyond_f32 };
    let (x, y) = if skip { (T::ZERO, T::ONE) } else { (x, y) };
    // SAFETY: x and y are exact in the float and y divides x without overflow, so the rounded
    // quotient is an integer in the type's range.
    let q = unsafe {
        if wide {
            let q = x.to_f64() / y.to_f64();
            T::from_f64(if floor { q.floor() } else { q.trunc() })
        } else {
            let q = x.to_f32() / y.to_f32();
            T::from_f32(if floor { q.floor() } else { q.trunc() })
        }
    };
    (found, q)
}

/// One vectorised pass over a block: every quotient through f64 (`WIDE`) or f32, and what the
/// block holds that this pass could not divide.
#[inline(always)]
fn div_block<T: FloatDiv, const WIDE: bool>(
    a: Src<'_, T>,
    b: Src<'_, T>,
    out: Out<'_, T>,
    floor: bool,
) -> Found {
    let none = Found::default();
    if floor {
        kernel::map_fold(
            a,
            b,
            out,
            none,
            |f, x, y| quotient(f, x, y, true, WIDE),
            Found::merge,
        )
    } else {
        kernel::map_fold(
            a,
            b,
            out,
            none,
            |f, x, y| quotient(f, x, y, false, WIDE),
            Found::merge,
        )
    }
}

/// Divides block by block, each through f32 in one pass that also checks it. A block that
/// fails is scanned for its first failing element; one with values too large for f32 is
/// divided again through f64, and one with values too large for f64 (i64, u64) element by
/// element.
fn int_run<T: FloatDiv + DivideElem>(
    a: Src<'_, T>,
    b: Src<'_, T>,
    mut out: Out<'_, T>,
    floor: bool,
) -> RunResult {
    let mut at = 0;
    while at < out.len() {
        let len = BLOCK.min(out.len() - at);
        let (x, y) = (a.sub(at, len), b.sub(at, len));
        let mut o = out.part(at, len);
        let mut found = div_block::<T, false>(x, y, o.part(0, len), floor);
        if found.has(Found::BAD)
            && let Some((i, e)) = first_bad(x, y, len)
        {
            return Err((at + i, e));
        }
        if found.has(Found::BEYOND_F32) {
            found = div_block::<T, true>(x, y, o.part(0, len), floor);
        }
        if found.has(Found::BEYOND_F64) {
            for (i, o) in o.data.iter_mut().enumerate() {
                o.write(T::div(x.get(i), y.get(i), floor).map_err(|e| (at + i, e))?);
            }
        }
        at += len;
    }
    Ok(())
}

/// An integer type's loop: [`int_run`] (for unsigned types flooring and truncating agree).
macro_rules! int_run {
    () => {
        #[inline(always)]
        fn run(
            a: Src<'_, Self>,
            b: Src<'_, Self>,
            out: Out<'_, Self>,
            pythondiv: bool,
        ) -> RunResult {
            int_run(a, b, out, pythondiv)
        }
    };
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
            int_run!();
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
            int_run!();
        }
    )*};
}
unsigned!(u8 u16 u32 u64);

macro_rules! wide {
    ($($t:ty)*) => {$(
        impl DivideElem for $t {
            fn div(a: Self, b: Self, _: bool) -> Result<Self, ElemError> {
                Ok(a / b)
            }
            #[inline(always)]
            fn run(a: Src<'_, Self>, b: Src<'_, Self>, out: Out<'_, Self>, _: bool) -> RunResult {
                kernel::map(a, b, out, |x, y| x / y);
                Ok(())
            }
        }
    )*};
}
wide!(f32 f64);

macro_rules! narrow {
    ($($t:ty)*) => {$(
        impl DivideElem for $t {
            fn div(a: Self, b: Self, _: bool) -> Result<Self, ElemError> {
                Ok(<$t>::from_f32(a.to_f32() / b.to_f32()))
            }
            #[inline(always)]
            fn run(a: Src<'_, Self>, b: Src<'_, Self>, out: Out<'_, Self>, _: bool) -> RunResult {
                kernel::through_f32(a, b, out, |x, y| x / y);
                Ok(())
            }
        }
    )*};
}
narrow!(f16 bf16);

impl Divide {
    /// `a / b`.
    pub fn eval(&self, a: &Tensor, b: &Tensor) -> Result<Tensor, EvalError> {
        Elementwise::Divide {
            pythondiv: self.pythondiv,
        }
        .eval(self.auto_broadcast, a, b)
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

#[cfg(test)]
mod tests {
    use std::mem::MaybeUninit;

    use super::*;

    /// The vector loop (f32 or f64 per block) against the checked quotient, element by element,
    /// with plain and with streamed stores (which fold what each block holds line by line).
    fn agrees<T: FloatDiv + DivideElem>(a: &[T], b: &[T]) {
        for (floor, stream) in [(true, false), (false, false), (true, true), (false, true)] {
            let mut out = vec![MaybeUninit::uninit(); a.len()];
            let o = Out {
                data: &mut out,
                stream,
            };
            int_run(Src::Slice(a), Src::Slice(b), o, floor).unwrap();
            for (i, o) in out.iter().enumerate() {
                // SAFETY: the run succeeded, so it wrote every element.
                let got = unsafe { o.assume_init() };
                let want = T::div(a[i], b[i], floor).unwrap();
                assert_eq!(got, want, "{:?} / {:?}, floor {floor}", a[i], b[i]);
            }
        }
    }

    /// Dividends within `±limit` just either side of multiples of each divisor (where a wrongly
    /// rounded quotient would cross an integer), in all four sign combinations.
    fn near_multiples(limit: i64, divisors: impl IntoIterator<Item = i64>) -> (Vec<i64>, Vec<i64>) {
        let (mut a, mut b) = (Vec::new(), Vec::new());
        for d in divisors {
            for k in [limit / d, limit / d - 1, limit / d / 2 + 1] {
                for r in -2..=2 {
                    let x = k.saturating_mul(d).saturating_add(r).clamp(-limit, limit);
                    for (p, q) in [(x, d), (-x, d), (x, -d), (-x, -d)] {
                        a.push(p);
                        b.push(q);
                    }
                }
            }
        }
        (a, b)
    }

    #[test]
    fn f32_blocks_are_exact_up_to_2_24() {
        // Dividends just inside the f32 limit, and either side of multiples of the divisor
        // (where a wrongly rounded quotient would cross an integer).
        const LIMIT: i64 = (1 << 24) - 1;
        let (a, b) = near_multiples(
            LIMIT,
            (1..=400).chain([1000, 4095, 4097, 65535, 65537, 1 << 20, LIMIT - 1]),
        );
        let narrow = |v: Vec<i64>| -> Vec<i32> { v.into_iter().map(|x| x as i32).collect() };
        let (a, b) = (narrow(a), narrow(b));
        agrees::<i32>(&a, &b);
        // The same after a block that needed f64: each block chooses its own path.
        let big = vec![i32::MAX - 5; BLOCK];
        agrees::<i32>(&[&big[..], &a].concat(), &[&big[..], &b].concat());
        // Above the limit the block goes through f64.
        agrees::<i32>(&[i32::MAX, i32::MIN + 1], &[3, 7]);
        // Just above it, where f32 would be wrong: 2^25 + 1 is not an f32.
        agrees::<i32>(&[(1 << 25) + 1, -(1 << 25) - 3, 1 << 24], &[2, 2, 3]);
        let ua: Vec<u32> = a.iter().map(|x| x.unsigned_abs()).collect();
        let ub: Vec<u32> = b.iter().map(|x| x.unsigned_abs()).collect();
        agrees::<u32>(&ua, &ub);
    }

    /// The one-pass f32 block notes a failure even in a block that also needs f64, and names
    /// the first failing element of the block.
    #[test]
    fn blocks_with_large_values_still_fail_at_the_first_bad_element() {
        let fails = |a: &[i32], b: &[i32]| {
            let [plain, streamed] = [false, true].map(|stream| {
                let mut out = vec![MaybeUninit::uninit(); a.len()];
                let o = Out {
                    data: &mut out,
                    stream,
                };
                int_run(Src::Slice(a), Src::Slice(b), o, true).unwrap_err()
            });
            assert_eq!(plain, streamed);
            plain
        };
        let big = i32::MAX;
        assert_eq!(
            fails(&[big, 5, i32::MIN, 1], &[3, 1, -1, 0]),
            (2, ElemError::Overflow)
        );
        assert_eq!(
            fails(&[1, big, 9], &[0, 0, 1]),
            (0, ElemError::DivisionByZero)
        );
        let mut a = vec![big; 3000];
        let mut b = vec![-7; 3000];
        b[2500] = 0;
        a[2900] = i32::MIN;
        b[2900] = -1;
        assert_eq!(fails(&a, &b), (2500, ElemError::DivisionByZero));
        b[2500] = 2;
        assert_eq!(fails(&a, &b), (2900, ElemError::Overflow));
        b[2900] = 3;
        agrees::<i32>(&a, &b);
    }

    /// i64 and u64 blocks go through f32 below 2^24, f64 below 2^53, and are divided element
    /// by element above; each boundary near multiples of the divisor, where a wrongly rounded
    /// quotient would cross an integer.
    #[test]
    fn i64_and_u64_blocks_are_exact_on_every_path() {
        for limit in [(1i64 << 24) - 1, (1i64 << 53) - 1, i64::MAX] {
            let divisors = [
                1,
                2,
                3,
                7,
                10,
                1000,
                65537,
                (1 << 31) - 1,
                1 << 40,
                limit - 1,
            ];
            let (a, b) = near_multiples(limit, divisors);
            agrees::<i64>(&a, &b);
            let ua: Vec<u64> = a.iter().map(|x| x.unsigned_abs()).collect();
            let ub: Vec<u64> = b.iter().map(|x| x.unsigned_abs()).collect();
            agrees::<u64>(&ua, &ub);
        }
        // 2^25 + 1 is not an f32; 2^53 + 1 and 2^64 - 1 are not f64s.
        agrees::<i64>(&[(1 << 25) + 1, -(1 << 25) - 3, 1 << 24], &[2, 2, 3]);
        agrees::<i64>(
            &[
                (1 << 53) + 1,
                -(1 << 53) - 3,
                1 << 53,
                i64::MIN + 1,
                i64::MAX,
                i64::MIN,
            ],
            &[2, 2, 3, 7, -1, 3],
        );
        agrees::<u64>(&[(1 << 25) + 1, (1 << 25) + 3], &[2, 2]);
        agrees::<u64>(&[(1 << 53) + 1, u64::MAX, u64::MAX - 1], &[2, 3, u64::MAX]);
        let mut out = vec![MaybeUninit::uninit(); 3];
        let r = int_run(
            Src::Slice(&[5, i64::MAX, i64::MIN]),
            Src::Repeat(-1i64),
            Out::new(&mut out),
            true,
        );
        assert_eq!(r, Err((2, ElemError::Overflow)));
    }

    #[test]
    fn every_i16_and_u16_dividend_divides_exactly() {
        let a: Vec<i16> = (i16::MIN + 1..=i16::MAX).collect();
        for d in [
            1i16, -1, 2, -2, 3, -3, 7, 10, -10, 127, 255, 256, 1000, -4097, 32767, -32767,
        ] {
            agrees::<i16>(&a, &vec![d; a.len()]);
        }
        let a: Vec<u16> = (0..=u16::MAX).collect();
        for d in [1u16, 2, 3, 7, 255, 256, 1000, 40000, 65535] {
            agrees::<u16>(&a, &vec![d; a.len()]);
        }
    }
}
