//! Divide-1: elementwise `a / b` with broadcasting (a row of the arithmetic family with its own
//! attribute and integer kernel).
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
//!
//! Integers divided exactly through floats, since `idiv` has no vector form. The quotient of
//! two integers below 2^53 in magnitude, computed in f64, is correctly rounded and cannot cross
//! an integer: its distance to the nearest integer, if it is not one, is at least 1/|b|, more
//! than its rounding error (at most |a/b|·2^-53 < 1/|b|). So truncating or flooring it gives
//! the exact integer quotient. The same argument in f32 holds below 2^24 (twice the lanes, and
//! a faster divider).
//!
//! Each block divides in f32 when all its values are below 2^24, else in f64 when all are below
//! 2^53 (always, for types of at most 32 bits), else (i64, u64) element by element, checked.
//! With AVX2 or AVX-512 (detected at run time by [`kernel::map`]) the float loops are vector
//! divisions.

use super::Arith;
use crate::num::{Float, Int};
use crate::ops::kernel::{self, BLOCK, Out, RunResult, Src};
use crate::ops::{AttrError, Attrs, ElemError};

/// Divide-1's own attribute.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Divide {
    /// `m_pythondiv`: floor (true) or truncating (false) integer division.
    pub pythondiv: bool,
}

impl Default for Divide {
    fn default() -> Self {
        Divide { pythondiv: true }
    }
}

impl Arith for Divide {
    const NAME: &'static str = "Divide";
    const VERSION: u32 = 1;

    fn parse(a: &Attrs) -> Result<Self, Vec<AttrError>> {
        let pythondiv = a
            .bool_or(&["m_pythondiv", "pythondiv"], true)
            .map_err(|e| vec![e])?;
        Ok(Divide { pythondiv })
    }

    #[inline(always)]
    fn int<T: Int>(self, a: T, b: T) -> Result<T, ElemError> {
        checked_div(a, b, self.pythondiv)
    }

    #[inline(always)]
    fn int_run<T: Int>(self, a: Src<'_, T>, b: Src<'_, T>, out: Out<'_, T>) -> RunResult {
        int_run(a, b, out, self.pythondiv)
    }

    #[inline(always)]
    fn float<F: Float>(self, a: F, b: F) -> F {
        a / b
    }

    fn corner(self, a: i128, b: i128) -> Option<i128> {
        if b == 0 {
            return None;
        }
        let q = a / b;
        Some(if self.pythondiv && a % b != 0 && ((a < 0) != (b < 0)) {
            q - 1
        } else {
            q
        })
    }

    fn corners_bound(self, b_lo: i128, b_hi: i128) -> bool {
        !(b_lo <= 0 && 0 <= b_hi)
    }
}

/// One quotient, checked: the reference every fast path agrees with. Signed: floor division
/// when `floor` (Python's `//`), else truncation; unsigned: the plain quotient.
#[inline(always)]
pub fn checked_div<T: Int>(a: T, b: T, floor: bool) -> Result<T, ElemError> {
    if b == T::ZERO {
        return Err(ElemError::DivisionByZero);
    }
    let q = a.checked_div(b).ok_or(ElemError::Overflow)?;
    // checked_div succeeded, so the remainder cannot overflow either.
    if floor && a.wrapping_rem(b) != T::ZERO && (a.is_negative() != b.is_negative()) {
        Ok(q.wrapping_sub(T::ONE))
    } else {
        Ok(q)
    }
}

/// One remainder, checked: the reference every fast path agrees with. With `floor` it takes
/// the divisor's sign (FloorMod, numpy's `remainder`), else the dividend's (Mod, C's `%`); a
/// zero divisor is an error, and MIN by −1 is 0.
#[inline(always)]
pub fn checked_rem<T: Int>(a: T, b: T, floor: bool) -> Result<T, ElemError> {
    if b == T::ZERO {
        return Err(ElemError::DivisionByZero);
    }
    let r = a.wrapping_rem(b);
    if floor && r != T::ZERO && r.is_negative() != b.is_negative() {
        Ok(r.wrapping_add(b))
    } else {
        Ok(r)
    }
}

/// The first element of a block that cannot be divided: a zero divisor, or MIN / -1 (for a
/// quotient; the remainder of MIN by -1 is 0).
#[cold]
fn first_bad<T: Int>(
    a: Src<'_, T>,
    b: Src<'_, T>,
    len: usize,
    rem: bool,
) -> Option<(usize, ElemError)> {
    (0..len).find_map(|i| {
        let (p, q) = (a.get(i), b.get(i));
        if q == T::ZERO {
            Some((i, ElemError::DivisionByZero))
        } else if !rem && Some(q) == T::MINUS_ONE && p == T::MIN {
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

/// One quotient for [`div_block`], through f64 if `wide` else f32, with `found` updated; with
/// `rem`, the remainder `x − q·y` of that quotient instead (exact: the true remainder fits the
/// type, and wrapping arithmetic is exact modulo 2^bits). An element that cannot be divided, or
/// is too large for the float, is computed as 0 / 1 instead, so that every conversion back is
/// in range; a remainder by −1 is 0 (MIN by −1 too, whose quotient would overflow).
#[inline(always)]
fn quotient<T: Int>(found: Found, x: T, y: T, floor: bool, wide: bool, rem: bool) -> (Found, T) {
    let by_minus_one = Some(y) == T::MINUS_ONE;
    let fails = (y == T::ZERO) | (!rem & by_minus_one & (x == T::MIN));
    let by_minus_one = rem & by_minus_one;
    let beyond_f32 = !(x.below_2_24() & y.below_2_24());
    let beyond_f64 = !(x.below_2_53() & y.below_2_53());
    let found = Found(
        found.0
            | (fails as u8 * Found::BAD)
            | (beyond_f32 as u8 * Found::BEYOND_F32)
            | (beyond_f64 as u8 * Found::BEYOND_F64),
    );
    let skip = fails | by_minus_one | if wide { beyond_f64 } else { beyond_f32 };
    let (p, d) = if skip { (T::ZERO, T::ONE) } else { (x, y) };
    // SAFETY: x and y are exact in the float and y divides x without overflow, so the rounded
    // quotient is an integer in the type's range.
    let q = unsafe {
        if wide {
            let q = p.to_f64() / d.to_f64();
            T::from_f64_unchecked(if floor { q.floor() } else { q.trunc() })
        } else {
            let q = p.to_f32() / d.to_f32();
            T::from_f32_unchecked(if floor { q.floor() } else { q.trunc() })
        }
    };
    if !rem {
        return (found, q);
    }
    let r = x.wrapping_sub(q.wrapping_mul(y));
    (found, if by_minus_one { T::ZERO } else { r })
}

/// One vectorised pass over a block: every quotient through f64 (`WIDE`) or f32, and what the
/// block holds that this pass could not divide.
#[inline(always)]
fn div_block<T: Int, const WIDE: bool, const REM: bool>(
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
            |f, x, y| quotient(f, x, y, true, WIDE, REM),
            Found::merge,
        )
    } else {
        kernel::map_fold(
            a,
            b,
            out,
            none,
            |f, x, y| quotient(f, x, y, false, WIDE, REM),
            Found::merge,
        )
    }
}

/// Divides block by block, each through f32 in one pass that also checks it. A block that
/// fails is scanned for its first failing element; one with values too large for f32 is
/// divided again through f64, and one with values too large for f64 (i64, u64) element by
/// element.
pub fn int_run<T: Int>(a: Src<'_, T>, b: Src<'_, T>, out: Out<'_, T>, floor: bool) -> RunResult {
    blocks::<T, false>(a, b, out, floor)
}

/// The remainder of [`int_run`]'s quotient, `a − q·b` (FloorMod with a floored quotient, Mod
/// with a truncated one), by the same exact float division block by block. A zero divisor is
/// an error; a remainder by −1 is 0.
pub fn int_rem_run<T: Int>(
    a: Src<'_, T>,
    b: Src<'_, T>,
    out: Out<'_, T>,
    floor: bool,
) -> RunResult {
    blocks::<T, true>(a, b, out, floor)
}

/// [`int_run`] (quotients) or [`int_rem_run`] (remainders, `REM`).
#[inline(always)]
fn blocks<T: Int, const REM: bool>(
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
        let mut found = div_block::<T, false, REM>(x, y, o.part(0, len), floor);
        if found.has(Found::BAD)
            && let Some((i, e)) = first_bad(x, y, len, REM)
        {
            return Err((at + i, e));
        }
        if found.has(Found::BEYOND_F32) {
            found = div_block::<T, true, REM>(x, y, o.part(0, len), floor);
        }
        if found.has(Found::BEYOND_F64) {
            for (i, o) in o.data.iter_mut().enumerate() {
                let (p, q) = (x.get(i), y.get(i));
                let v = if REM {
                    checked_rem(p, q, floor)
                } else {
                    checked_div(p, q, floor)
                };
                o.write(v.map_err(|e| (at + i, e))?);
            }
        }
        at += len;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::mem::MaybeUninit;

    use super::*;

    /// The vector loop (f32 or f64 per block) against the checked quotient and remainder,
    /// element by element, with plain and with streamed stores (which fold what each block
    /// holds line by line).
    fn agrees<T: Int + std::fmt::Debug>(a: &[T], b: &[T]) {
        rem_agrees(a, b);
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
                let want = checked_div(a[i], b[i], floor).unwrap();
                assert_eq!(got, want, "{:?} / {:?}, floor {floor}", a[i], b[i]);
            }
        }
    }

    /// [`agrees`] for remainders (FloorMod with `floor`, Mod without).
    fn rem_agrees<T: Int + std::fmt::Debug>(a: &[T], b: &[T]) {
        for (floor, stream) in [(true, false), (false, false), (true, true), (false, true)] {
            let mut out = vec![MaybeUninit::uninit(); a.len()];
            let o = Out {
                data: &mut out,
                stream,
            };
            int_rem_run(Src::Slice(a), Src::Slice(b), o, floor).unwrap();
            for (i, o) in out.iter().enumerate() {
                // SAFETY: the run succeeded, so it wrote every element.
                let got = unsafe { o.assume_init() };
                let want = checked_rem(a[i], b[i], floor).unwrap();
                assert_eq!(got, want, "{:?} mod {:?}, floor {floor}", a[i], b[i]);
            }
        }
    }

    /// Every i8 and u8 pair's remainder, both kinds; MIN by −1 is 0; a zero divisor fails at
    /// its element.
    #[test]
    fn every_i8_and_u8_remainder_is_exact() {
        let (mut a, mut b) = (Vec::new(), Vec::new());
        for x in i8::MIN..=i8::MAX {
            for y in (i8::MIN..=i8::MAX).filter(|&y| y != 0) {
                a.push(x);
                b.push(y);
            }
        }
        rem_agrees::<i8>(&a, &b);
        let ua: Vec<u8> = a.iter().map(|&x| x as u8).collect();
        let ub: Vec<u8> = b.iter().map(|&x| x as u8).collect();
        rem_agrees::<u8>(&ua, &ub);
        assert_eq!(checked_rem(i32::MIN, -1, true), Ok(0));
        rem_agrees::<i32>(&[i32::MIN, i32::MAX, -7, 7], &[-1, -1, 3, -3]);
        let mut out = vec![MaybeUninit::uninit(); 3];
        let r = int_rem_run(
            Src::Slice(&[5, i64::MIN, 3]),
            Src::Slice(&[-1i64, -1, 0]),
            Out::new(&mut out),
            true,
        );
        assert_eq!(r, Err((2, ElemError::DivisionByZero)));
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
