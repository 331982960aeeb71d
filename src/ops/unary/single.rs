//! Single-precision forms of Exp, Sigmoid, Swish, Tanh, Erf, both Gelu forms, SoftPlus, Mish,
//! Elu and Selu: the f32 rule of these rows (and HSigmoid's and HSwish's, which compute in f64:
//! see [`hsigmoid`]). Each is straight-line f32 arithmetic (no calls,
//! no branches, selects instead) that the compiler vectorises eight lanes to an AVX2 register,
//! sixteen to an AVX-512 one, or, for the forms that look coefficients up per lane (Erf, Gelu,
//! Tanh: piecewise polynomials; Mish: 2^(j/32)), that is written over [`Lanes`] and run on the
//! unit's vector type;
//! within 1 ulp of the exact result (`cargo bench --bench accuracy` measures every f32 input;
//! docs/accuracy.md).
//!
//! Determinism: only IEEE operations with one defined result are used (add, multiply, divide,
//! fused multiply-add, comparisons, bit moves), so a form gives the same bits on every vector
//! unit, in scalar code and at any thread count. `mul_add` is one instruction where FMA exists,
//! a correctly rounded library call where it does not: the same value either way.
//!
//! Accuracy: `e^t = 2^n · e^s` with `s = t − n ln2`, |s| ≤ ln2/2. The reduced argument is
//! carried as a pair (its rounding error kept), `e^s` as `w + c` with `w = 1 + s` rounded and
//! `c` the rest (the rounding error of `w`, the low part of `s`, and `s² P(s)`), so the only
//! rounding of the size of the result's ulp is the last one. Sigmoid and Swish keep `e^t` as
//! that pair through `1 + e^t` and correct their quotient with its exact residual (fused
//! multiply-add), so the exponential's own error enters once, at about 2^-27 relatively.
//!
//! Lane forms: Exp, Sigmoid, Swish, Gelu's tanh form, SoftPlus and Mish also have a form for
//! the common range (|x| ≤ 87 or less, where e^±x is a normal f32: one power-of-two factor, no
//! clamps, the reduced argument rounded once), which the vectorised loop runs for every
//! element, taking the full form only for elements outside that range
//! ([`super::Unary::single_lane`]). The rule of a row is the lane form where it applies and the
//! full form elsewhere, in the loop and one element at a time alike.

use super::LaneForm;
use super::lanes::Lanes;
use super::piecewise::{self, HI, LO, M, Q, R};

/// log2(e).
const LOG2_E: f32 = std::f32::consts::LOG2_E;
/// 1.5 · 2^23: added to a value below 2^22 in magnitude, rounds it to an integer, which then
/// sits in the low mantissa bits.
const SHIFT: f32 = 12_582_912.0;
/// ln 2 split in two: the high part has 16 significant bits, so `n · LN2_HI` is exact for
/// |n| < 2^8 and `t − n · LN2_HI` is exact near t = n ln 2 (Cody and Waite).
const LN2_HI: f32 = f32::from_bits(0x3f31_7200);
const LN2_LO: f32 = f32::from_bits(0x35bf_be8e);

/// `(e^s − 1 − s) / s²` on |s| ≤ 0.3467: a weighted least-squares fit in f32 coefficients
/// (constant term first), error below 2^-29 of e^s.
const EXPM1_TAIL: [f32; 6] = [
    0.5,
    f32::from_bits(0x3e2a_aaaa),
    f32::from_bits(0x3d2a_aa40),
    f32::from_bits(0x3c08_88f1),
    f32::from_bits(0x3ab6_cb34),
    f32::from_bits(0x394f_e503),
];

/// Horner's rule with fused steps; `c` from the constant term up.
#[inline(always)]
fn poly<V: Lanes, const N: usize>(x: V, c: &[f32; N]) -> V {
    let mut acc = V::splat(c[N - 1]);
    let mut i = N - 1;
    while i > 0 {
        i -= 1;
        acc = acc.mul_add(x, V::splat(c[i]));
    }
    acc
}

/// `a + b` as `hi + lo` (exact, any order of magnitude: 2Sum).
#[inline(always)]
fn two_sum(a: f32, b: f32) -> (f32, f32) {
    let s = a + b;
    let v = s - a;
    (s, (a - (s - v)) + (b - v))
}

/// `a · b` as its rounding and the exact rest (a fused step; exact unless subnormal). These two
/// use f32's own `mul_add` (one instruction where FMA exists): the generic helpers of `own.rs`
/// go through [`crate::num::Float`], whose f32 fused step is a library call, and the forms ran
/// 25 times slower with them.
#[inline(always)]
fn two_prod(a: f32, b: f32) -> (f32, f32) {
    let p = a * b;
    (p, a.mul_add(b, -p))
}

/// `v` in every lane.
#[inline(always)]
fn s<V: Lanes>(v: f32) -> V {
    V::splat(v)
}

/// `e^(t + lo)` as `(w + c) · 2^n`: `w + c` is `e^s` (w its f32 rounding, |c| at most half
/// an ulp of w).
#[derive(Clone, Copy)]
struct ExpParts {
    w: f32,
    c: f32,
    n: i32,
}

/// `e^(t + lo)`, for `lo` below an ulp of `t` (the low part of an exact product). `t` is
/// clamped to `low..=89` (and `lo` dropped there): `low` is −104 where e^t is the result (0
/// below), −200 where it is multiplied by an f32 (Swish's x e^t, 0 below for any x); NaN stays
/// NaN (`w` and `c` are NaN).
#[inline(always)]
fn exp_parts(t: f32, lo: f32, low: f32) -> ExpParts {
    // `lo` enters as a subtraction of its negation: with `lo` = 0, `x − 0` is `x` for every x
    // (−0 included), so the step folds away, where `x + 0` would not.
    let inside = t >= low && t <= 89.0;
    let neg_lo = if inside { -lo } else { 0.0 };
    exp_core(t.clamp(low, 89.0), neg_lo)
}

/// [`exp_parts`] for `low ≤ t ≤ 89` (not checked), the low part given negated.
#[inline(always)]
fn exp_core(t: f32, neg_lo: f32) -> ExpParts {
    let k = t.mul_add(LOG2_E, SHIFT);
    let n = k - SHIFT;
    // s = t − n ln2 as the pair (sh, sl): the first step is exact, the second's rounding
    // error is recovered (Fast2Sum; |n · LN2_LO| ≤ 4.2e-4 is below |s1| wherever it matters).
    let s1 = (-n).mul_add(LN2_HI, t);
    let m = n * LN2_LO;
    let sh = s1 - m;
    let sl = ((s1 - sh) - m) - neg_lo;
    let s = sh + sl;
    let tail = (s * s).mul_add(poly(s, &EXPM1_TAIL), sl);
    // e^s = 1 + sh + tail: 1 + sh split exactly (Fast2Sum, |sh| < 1), the low parts
    // gathered, and the sum split again so that |c| is at most half an ulp of w.
    let w0 = 1.0 + sh;
    let c0 = ((1.0 - w0) + sh) + tail;
    let w = w0 + c0;
    let c = (w0 - w) + c0;
    // n from k's pattern (k − SHIFT is n in its low bits).
    let n = (k.to_bits() as i32).wrapping_sub(SHIFT.to_bits() as i32);
    ExpParts { w, c, n }
}

/// 2^n as two normal f32 factors, for n in −152..=129 (what `exp_parts` gives for t ≥ −104).
#[inline(always)]
fn pow2(n: i32) -> (f32, f32) {
    // Wrapping: a NaN's pattern gives any n, and a NaN result whatever the factors.
    let h = n >> 1;
    let a = f32::from_bits((h.wrapping_add(127) as u32) << 23);
    let b = f32::from_bits((n.wrapping_sub(h).wrapping_add(127) as u32) << 23);
    (a, b)
}

/// [`pow2`] for any n, clamped to −155..=129: a value below 8 times 2^−155 rounds to 0, one
/// of at least 1/2 times 2^129 overflows, as it should.
#[inline(always)]
fn pow2_clamped(n: i32) -> (f32, f32) {
    pow2(n.clamp(-155, 129))
}

/// The largest |t| the lane forms take: e^−87 is a normal f32 (e^−87.3 is the smallest).
const LANE_MAX: f32 = 87.0;

/// 2^-100.
const TWO_M100: f32 = 1.0 / (1u64 << 50) as f32 / (1u64 << 50) as f32;

/// `e^t = (w + c) · 2^n` for −87 ≤ t ≤ 88 (not checked; 2^n is then normal): returns `w`, `c`
/// (|c| at most half an ulp of w) and `2^n`. The reduced argument is rounded once, an error of
/// at most 2^-26 relatively, which the forms built on it can take (measured within 0.84 ulp).
#[inline(always)]
fn exp_pair<V: Lanes>(t: V) -> (V, V, V) {
    let (w0, c0, k) = exp_reduced(t);
    // The sum split again.
    let w = w0 + c0;
    let c = (w0 - w) + c0;
    (w, c, pow2_of(k))
}

/// [`exp_pair`] scaled: e^t as the pair `(w · 2^n, c · 2^n)`, for the forms that need no
/// step before the power of two (Swish's adds its argument's low part first).
#[inline(always)]
fn exp_z(t: f32) -> (f32, f32) {
    let (w, c, scale) = exp_pair(t);
    (w * scale, c * scale)
}

/// 2^n, a normal f32 (−126 ≤ n ≤ 127), from k's pattern: its low bits hold n, which the shift
/// moves into the exponent.
#[inline(always)]
fn pow2_of<V: Lanes>(k: V) -> V {
    k.shl_add::<23>(1.0f32.to_bits())
}

/// Where Tanh's argument is clamped: tanh rounds to 1 from 9.02 on, and the form's value at 9.5
/// (the centre of an interval) does.
const TANH_TOP: f32 = 9.5;
/// [`piecewise::TANH`] rotated as Gelu's table ([`GELU_H_AT`]: the same intervals).
static TANH_ROTATED: [[f32; 32]; piecewise::TANH.len()] = rotated(piecewise::TANH, GELU_H_AT);

/// `tanh x`, for `N` lanes at once: a polynomial of degree 6 on one of 32 intervals of
/// u = |x| (clamped to 9.5, where tanh rounds to 1), chosen per lane from the pattern of u + 1
/// (the eighth octaves, as Gelu's H: [`piecewise::TANH`]), computed as a pair and rounded
/// once, with x's sign. The first interval is centred on 0, so that tanh u ≈ u keeps its
/// relative precision for tiny u (a subnormal x comes through). NaN stays NaN (as `x + x`).
/// No exponential and no division, where the form it replaces, (1 − z)/(1 + z) with z = e^−2|x|
/// as a pair and the quotient corrected by its residual, had both: 1.4 times faster. Within
/// 0.514 ulp (measured on every f32).
#[inline(always)]
pub fn tanh_lanes<V: Lanes>(x: V) -> V {
    let u = x.abs_below(s(TANH_TOP));
    let k = (u + s(1.0)).shr_add::<20>(0);
    let (hh, hl) = piece(k, u, &TANH_ROTATED);
    let y = (hh + hl).or_bits(x.and_bits(0x8000_0000));
    // (`abs_below` gives NaN or 9.5 for NaN, depending on the unit: the choice makes it NaN.)
    V::select(x.le(x), y, x + x)
}

/// Tanh as a [`LaneForm`] (it applies everywhere).
#[derive(Clone, Copy, Debug)]
pub struct TanhForm;

impl LaneForm for TanhForm {
    #[inline(always)]
    fn lanes<V: Lanes>(self, x: V) -> (V, V::Mask) {
        (tanh_lanes(x), V::always())
    }
}

/// [`tanh_lanes`] on one value.
#[inline(always)]
pub fn tanh(x: f32) -> f32 {
    tanh_lanes(x)
}

/// [`exp`] for −87 ≤ x ≤ 88 (not checked; the second value says whether x is there), where
/// 2^n is one normal factor: the same value as [`exp`] (w · 2^n is exact, or rounded once
/// where it is subnormal, either way), without the clamp and the split power of two.
#[inline(always)]
pub fn exp_lane(x: f32) -> (f32, bool) {
    let (w0, c0, k) = exp_reduced(x);
    ((w0 + c0) * pow2_of(k), (-87.0..=88.0).contains(&x))
}

/// `e^x`. The reduced argument is rounded once here (no low part to carry): its error, at
/// most 2^-26, costs a quarter of an ulp at worst, and the result stays within 0.8 ulp.
#[inline(always)]
pub fn exp(x: f32) -> f32 {
    // (`clamp` keeps a NaN.)
    let (w0, c0, k) = exp_reduced(x.clamp(-104.0, 89.0));
    let n = (k.to_bits() as i32).wrapping_sub(SHIFT.to_bits() as i32);
    let (a, b) = pow2(n);
    ((w0 + c0) * a) * b
}

/// `e^t = (w0 + c0) · 2^n` with the reduced argument rounded once, for [`exp`], [`exp_lane`]
/// and [`exp_pair`]: `w0 = 1 + s` rounded, `c0` its rounding error (exact, Fast2Sum) plus the
/// rest of e^s, and `k`, whose pattern holds n in its low bits.
#[inline(always)]
fn exp_reduced<V: Lanes>(t: V) -> (V, V, V) {
    let k = t.mul_add(s(LOG2_E), s(SHIFT));
    let n = k - s(SHIFT);
    let r = (-n).mul_add(s(LN2_LO), (-n).mul_add(s(LN2_HI), t));
    let tail = (r * r) * poly(r, &EXPM1_TAIL);
    let w0 = s::<V>(1.0) + r;
    (w0, ((s::<V>(1.0) - w0) + r) + tail, k)
}

/// `sigmoid(th + tl) = (q + rem · r) · 2^n`: `q` a quotient rounded, `rem` its residual, `r`
/// the reciprocal of the denominator's high part. The power of two is kept apart, so that a
/// product with the sigmoid (Swish) is not lost where the sigmoid alone underflows.
#[inline(always)]
fn sigmoid_parts(th: f32, tl: f32) -> (f32, f32, f32, i32) {
    // z = e^−|t| ≤ 1; σ = 1/(1 + z) for t ≥ 0, z/(1 + z) for t < 0 (NaN takes the first).
    let neg = th < 0.0;
    let (u, ul) = if neg { (th, tl) } else { (-th, -tl) };
    let e = exp_parts(u, ul, -200.0);
    let (a, b) = pow2_clamped(e.n);
    let zh = (e.w * a) * b;
    let zl = (e.c * a) * b;
    // The numerator without its power of two: e^s or 1.
    let (nh, nl) = if neg { (e.w, e.c) } else { (1.0, 0.0) };
    let (q, rem, r) = quotient(zh, zl, nh, nl);
    (q, rem, r, if neg { e.n } else { 0 })
}

/// `(nh + nl) / (1 + zh + zl)` as `q + rem · r`: `q` the quotient rounded, `rem` its residual
/// (exact but for the low parts' own rounding), `r` the reciprocal of the denominator's high
/// part.
#[inline(always)]
fn quotient<V: Lanes>(zh: V, zl: V, nh: V, nl: V) -> (V, V, V) {
    // 1 + z as the pair (dh, dl), exactly but for zl's own rounding.
    let one = s::<V>(1.0);
    let dh = one + zh;
    let dl = ((one - dh) + zh) + zl;
    let r = dh.recip();
    let q = nh * r;
    let rem = (-q).mul_add(dh, nh);
    let rem = (-q).mul_add(dl, rem + nl);
    (q, rem, r)
}

/// `1 / (1 + e^−x)` for |x| ≤ 87 (not checked; the second value says whether x is there):
/// e^−|x| as [`exp_pair`] (normal, so its power of two is one factor), `1 + e^−|x|` as a pair,
/// and the quotient corrected by its residual. Within 0.81 ulp (measured on every f32).
#[inline(always)]
pub fn sigmoid_lane(x: f32) -> (f32, bool) {
    let neg = x < 0.0;
    let (zh, zl) = exp_z(-x.abs());
    let (nh, nl) = if neg { (zh, zl) } else { (1.0, 0.0) };
    let (q, rem, r) = quotient(zh, zl, nh, nl);
    (rem.mul_add(r, q), x.abs() <= LANE_MAX)
}

/// The sigmoid: [`sigmoid_lane`] where it applies, [`sigmoid_full`] beyond (|x| > 87, NaN).
#[inline(always)]
pub fn sigmoid(x: f32) -> f32 {
    match sigmoid_lane(x) {
        (y, true) => y,
        _ => sigmoid_full(x),
    }
}

/// `1 / (1 + e^−x)` for any x: [`sigmoid_parts`] with the numerator scaled in place (a
/// subnormal result is rounded from the scaled e^x, within 0.75 ulp), which saves the separate
/// scaling.
#[inline(always)]
fn sigmoid_full(x: f32) -> f32 {
    let neg = x < 0.0;
    let e = exp_parts(if neg { x } else { -x }, 0.0, -104.0);
    let (a, b) = pow2(e.n);
    let zh = (e.w * a) * b;
    let zl = (e.c * a) * b;
    let (nh, nl) = if neg { (zh, zl) } else { (1.0, 0.0) };
    let (q, rem, r) = quotient(zh, zl, nh, nl);
    rem.mul_add(r, q)
}

/// `x · sigmoid(β x)` where |β x| ≤ 87 and the result is at least 2^-100 in magnitude (not
/// checked; the second value says whether both hold): β x as an exact pair, whose low part
/// enters e^(β x) as the factor 1 + low, then [`sigmoid_lane`]'s steps, and x times the
/// corrected quotient with one rounding of the result's size. Within 0.84 ulp (measured on
/// every f32 for β = 1, 1.702 and −0.5).
#[inline(always)]
pub fn swish_lane(x: f32, beta: f32) -> (f32, bool) {
    let th = beta * x;
    let tl = beta.mul_add(x, -th);
    swish_steps(x, th, Some(tl))
}

/// [`swish_lane`] for β = 1 (Swish's default): β x is x exactly, the pair's low part is 0 and
/// its steps go. The same values as `swish_lane(x, 1.0)`.
#[inline(always)]
pub fn swish1_lane(x: f32) -> (f32, bool) {
    swish_steps(x, x, None)
}

/// [`swish_lane`] from β x as `th` and its low part `tl` (`None`: 0, no steps for it).
#[inline(always)]
fn swish_steps(x: f32, th: f32, tl: Option<f32>) -> (f32, bool) {
    let neg = th < 0.0;
    // e^(−|β x|) as the pair (w + c) · scale. The low part enters as −|th|'s: tl's sign flipped
    // where th's sign bit is clear (bit moves, not a choice between (th, tl) and (−th, −tl):
    // that choice led the compiler to compute the exponential for both and choose after).
    let (w, c, scale) = exp_pair(-th.abs());
    let c = match tl {
        // e^(u + ul) = e^u (1 + ul) to far below an ulp (|ul| < 2^-17).
        Some(tl) => f32::from_bits(tl.to_bits() ^ (!th.to_bits() & 0x8000_0000)).mul_add(w, c),
        None => c,
    };
    let (zh, zl) = (w * scale, c * scale);
    let (nh, nl) = if neg { (zh, zl) } else { (1.0, 0.0) };
    let (y, ph) = times_quotient(x, quotient(zh, zl, nh, nl));
    (y, th.abs() <= LANE_MAX && ph.abs() >= TWO_M100)
}

/// `x (q + rem · r)` (a quotient from [`quotient`]) with `x q` split exactly, so that one
/// rounding of the result's size is left; and `x q` rounded.
#[inline(always)]
fn times_quotient<V: Lanes>(x: V, (q, rem, r): (V, V, V)) -> (V, V) {
    let ph = x * q;
    let pl = x.mul_add(q, -ph);
    (x.mul_add(rem * r, pl) + ph, ph)
}

/// 2√(2/π) and 2√(2/π) · 0.044715 as pairs of f32 (the high part the f32 rounding).
const GELU_T1: (f32, f32) = (f32::from_bits(0x3fcc_422a), f32::from_bits(0xb342_bc9b));
const GELU_T3: (f32, f32) = (f32::from_bits(0x3d92_2279), f32::from_bits(0x3124_d8b5));

/// Gelu's tanh form `x/2 (1 + tanh u)`, u = √(2/π)(x + 0.044715 x³), as `x · sigmoid(2u)`
/// (the same function) through [`swish_lane`]'s steps, for −9.6 ≲ x (2u ≥ −87) and where
/// the result is at least 2^-100 in magnitude (the second value says whether both hold; the
/// row's f64 rule is the result elsewhere); from 2u > 87 on, x itself (x · sigmoid(2u) is x
/// within 2^-125). 2u = x (c1 + c3 x²) is formed as a pair to about 2^-46 relatively (x²
/// split exactly, c3 x² and c1 + c3 x² summed as pairs, the product with x split): the
/// sigmoid's relative slope is up to 1, so an argument rounded once would cost up to 87 · 2^-24
/// of the result at 2u = −87. Within 0.86 ulp (measured on every f32).
#[inline(always)]
pub fn gelu_tanh_lane(x: f32) -> (f32, bool) {
    let (c1, c1l) = GELU_T1;
    let (c3, c3l) = GELU_T3;
    let (x2, x2l) = two_prod(x, x);
    let p = c3 * x2;
    let pl = c3.mul_add(x2l, c3l.mul_add(x2, c3.mul_add(x2, -p)));
    // c1 + p by 2Sum (p exceeds c1 from |x| ≈ 4.7).
    let (g, ge) = two_sum(c1, p);
    let gl = ge + (pl + c1l);
    let th = x * g;
    let tl = x.mul_add(gl, x.mul_add(g, -th));
    let (y, applies) = swish_steps(x, th, Some(tl));
    let above = th > LANE_MAX;
    (if above { x } else { y }, applies || above)
}

/// Mish `x · tanh(ln(1 + e^x))` for `N` lanes at once, for x ≥ −65 and |x| ≥ 2^-100 (the mask
/// says where; the row's f64 rule is the result elsewhere: below −65 and for tiny x the result
/// nears the subnormal range, where the low parts of the last steps would be lost):
/// `tanh(ln(1 + z)) = M / (1 + M)` with z = e^x and `M = z (1 + z/2)` (no logarithm).
///
/// * z as a pair by Gelu's reduction: x = (n + j/32) ln 2 + r with |r| ≤ ln 2/64, 2^(j/32) a
///   pair (w, w') from [`piecewise::EXP2_32`], e^r = 1 + ρ ([`piecewise::EXP_TAIL`]);
///   w + (w ρ + w') summed by Fast2Sum and scaled by 2^n (w' ρ, below 2^-30 of z, left out).
/// * `1 + z/2` as a pair (its rounding error exact by Fast2Sum, which holds for every z below
///   2^25, 1 being a power of two: for z/2 ≥ 1 both of its steps are exact), M as a pair from
///   the exact product and the cross terms, the quotient corrected by its residual as the
///   sigmoid's, and x times it with one rounding of the result's size.
///
/// From x = 9.5 on the result is x (`1/(1 + M) < 2^-26`). Within 0.542 ulp (measured on every
/// f32; 0.809 with [`exp_pair`]'s reduction, rounded once, 2^-26). The table's reduction leaves
/// e^r to a polynomial of degree 3, where [`exp_pair`]'s (|r| ≤ ln 2/2) needs degree 7: the row
/// runs 8% faster so.
#[inline(always)]
pub fn mish_lanes<V: Lanes>(x: V) -> (V, V::Mask) {
    let ky = x.mul_add(s(LOG2_E), s(SHIFT_32));
    let y = ky - s(SHIFT_32);
    let r = y.mul_add(s(-LN2_HI), x);
    let r = y.mul_add(s(-LN2_LO), r);
    let rho = (r * r).mul_add(
        r.mul_add(s(piecewise::EXP_TAIL[1]), s(piecewise::EXP_TAIL[0])),
        r,
    );
    let w = ky.lookup(&piecewise::EXP2_32[0]);
    let c = w.mul_add(rho, ky.lookup(&piecewise::EXP2_32[1]));
    let z = w + c;
    let (zh, zl) = (z.scale_pow2(y), ((w - z) + c).scale_pow2(y));
    let one = s::<V>(1.0);
    let h = s::<V>(0.5) * zh;
    let gh = one + h;
    let gl = s::<V>(0.5).mul_add(zl, (one - gh) + h);
    let mh = zh * gh;
    let ml = zh.mul_add(gl, zl.mul_add(gh, zh.mul_add(gh, -mh)));
    let (v, _) = times_quotient(x, quotient(mh, ml, mh, ml));
    (
        V::select(s::<V>(9.5).lt(x), x, v),
        V::both(s::<V>(-65.0).le(x), s::<V>(TWO_M100).le(x.abs())),
    )
}

/// Mish as a [`LaneForm`].
#[derive(Clone, Copy, Debug)]
pub struct MishForm;

impl LaneForm for MishForm {
    #[inline(always)]
    fn lanes<V: Lanes>(self, x: V) -> (V, V::Mask) {
        mish_lanes(x)
    }
}

/// Mish: [`mish_lanes`] on one value where it applies, the f64 rule rounded once elsewhere
/// (below −65, |x| < 2^-100 and NaN).
#[inline(always)]
pub fn mish(x: f32) -> f32 {
    match mish_lanes(x) {
        (y, true) => y,
        _ => super::double::mish(x as f64) as f32,
    }
}

/// `(atanh √v / √v − 1) / v = 1/3 + v/5 + v²/7 + …` on 0 ≤ v ≤ 1/9: a weighted least-squares
/// fit in f32 coefficients (constant term first), within 2^-25 of it relatively. With
/// `t = 2z / (2 + z)` and `v = t²/4`, `ln(1 + z) = 2 atanh(t/2) = t + t v Q(v)`, the second
/// term at most a 26th of the sum for 0 < z ≤ 1.
const LOG1P_ODD: [f32; 5] = [
    f32::from_bits(0x3eaa_aaab),
    f32::from_bits(0x3e4c_cc68),
    f32::from_bits(0x3e12_64f1),
    f32::from_bits(0x3dde_3be3),
    f32::from_bits(0x3dee_0111),
];

/// SoftPlus `ln(1 + e^x) = max(x, 0) + ln(1 + z)`, z = e^−|x|, for x ≥ −80 (the second value
/// says whether x is there; below, the result is e^x within 2^-115 of it, [`softplus`] takes
/// it from [`exp`]). z comes from [`exp_pair`] (a normal f32 for |x| ≤ 87; beyond, the
/// lane's value is not used), `t = z / (1 + z/2)` is a quotient corrected by its residual
/// ([`quotient`]; no logarithm, no table), the series in `v = t²/4` adds at most a 26th of t
/// ([`LOG1P_ODD`], fitted by `benches/fit_tables.py --log1p`), and `max(x, 0) + t` is summed
/// exactly (Fast2Sum, the larger term first) with the low parts added before the last
/// rounding. From x = 16 on the result is x (ln(1 + e^−x) is below half an ulp of x). Above
/// x = −80 the low part of z is not lost to the subnormal range. Within 0.78 ulp (measured on
/// every f32, the worst below −80, in Exp's form).
#[inline(always)]
pub fn softplus_lane(x: f32) -> (f32, bool) {
    let (zh, zl) = exp_z(-x.abs());
    let (q, rem, r) = quotient(0.5 * zh, 0.5 * zl, zh, zl);
    let v = (q * q) * 0.25;
    let tail = (q * v).mul_add(poly(v, &LOG1P_ODD), rem * r);
    // max(x, 0) + q by Fast2Sum (both are at least 0; NaN's lane is not used).
    let m = if x > 0.0 { x } else { 0.0 };
    let (big, small) = if m > q { (m, q) } else { (q, m) };
    let hi = big + small;
    let y = hi + (((big - hi) + small) + tail);
    let above = x > 16.0;
    (if above { x } else { y }, x >= -80.0)
}

/// SoftPlus: [`softplus_lane`] where it applies, e^x below x = −80 (`ln(1 + z) = z (1 − z/2
/// + …)`, z < 2^-115: the same rounding as z's) and NaN.
#[inline(always)]
pub fn softplus(x: f32) -> f32 {
    match softplus_lane(x) {
        (y, true) => y,
        _ => exp(x),
    }
}

/// Swish: [`swish_lane`] where it applies, [`swish_full`] beyond.
#[inline(always)]
pub fn swish(x: f32, beta: f32) -> f32 {
    match swish_lane(x, beta) {
        (y, true) => y,
        _ => swish_full(x, beta),
    }
}

/// `x · sigmoid(β x)` for any x and β, a zero of x's sign where the sigmoid is 0 (so that
/// x = −∞ gives −0, the limit, as the f64 rule does).
#[inline(always)]
fn swish_full(x: f32, beta: f32) -> f32 {
    // β x as an exact pair (its low part dropped where the product is not finite).
    let th = beta * x;
    let tl = beta.mul_add(x, -th);
    let tl = if th.is_finite() { tl } else { 0.0 };
    let (q, rem, r, n) = sigmoid_parts(th, tl);
    // x = xs · 2^ex exactly, |xs| < 4 (|xs| ≥ 1 unless x is subnormal), so that x times the
    // sigmoid's mantissa neither overflows nor underflows; the powers of two come last.
    let field = ((x.to_bits() >> 23) & 0xff) as i32;
    let ex = (field - 127).clamp(-126, 126);
    let xs = x * f32::from_bits(((127 - ex) as u32) << 23);
    let (y, ph) = times_quotient(xs, (q, rem, r));
    let (a, b) = pow2_clamped(ex + n);
    let y = (y * a) * b;
    if ph == 0.0 {
        // x = ±0 (ph is 0 for no other x): the zero of x's sign, which the sum above loses.
        ph
    } else if !x.is_infinite() {
        y
    } else if th == f32::NEG_INFINITY {
        0.0f32.copysign(x)
    } else if th.is_nan() {
        th
    } else {
        // ∞ times a positive sigmoid.
        x
    }
}

/// A parameter of Elu or Selu (an f64 attribute or input) as an f32 pair `hi + lo`, within
/// 2^-48 of it relatively, where its magnitude is between 2^-60 and 2^60 (so that no product
/// of the forms below overflows or loses its low part to the subnormal range); `None`
/// elsewhere (0, NaN, ±∞, extreme values: such rows run their f64 rule).
pub fn split_param(v: f64) -> Option<(f32, f32)> {
    let a = v.abs();
    let lo_end = 1.0 / (1u64 << 60) as f64;
    let hi_end = (1u64 << 60) as f64;
    if !(lo_end..=hi_end).contains(&a) {
        return None;
    }
    let hi = v as f32;
    Some((hi, (v - hi as f64) as f32))
}

/// [`EXPM1_TAIL`] without its constant term: `(e^s − 1 − s − s²/2) / s³`.
const EXPM1_CUBIC: [f32; 5] = [
    EXPM1_TAIL[1],
    EXPM1_TAIL[2],
    EXPM1_TAIL[3],
    EXPM1_TAIL[4],
    EXPM1_TAIL[5],
];

/// `e^t − 1` for t ≤ 0, with t clamped to −87 (below, e^t is under 2^-125: what is added to
/// −1 no longer changes any rounding; a NaN becomes 0, its result the caller's), as a pair
/// `h + l`, |l| below an ulp of h. t is reduced to `n ln2 + s`, s an exact pair (sh, sl) (Cody and Waite, the second step's
/// rounding error recovered). `e^s − 1 = a + rest` with `a = sh + sh²/2` summed exactly (sh²
/// split by a fused step, Fast2Sum) and `rest` the small terms (the low parts, sh·sl and
/// s³ Q(s)), so that no rounding of more than 2^-31 of e^s − 1 happens before the last. Then
/// `e^s = w0 + c` (w0 = 1 + a rounded, Fast2Sum) and `2^n w0 − 1` is summed exactly
/// (Fast2Sum: 2^n w0 ≤ 1), its error and `2^n c` the low part (for n ≤ −1 the result is at
/// least 0.29 in size); for n = 0 the pair is `(a, rest)`.
#[inline(always)]
fn expm1_neg_pair(x: f32) -> (f32, f32) {
    // Two selects.
    let t = if x < -87.0 { -87.0 } else { x };
    let t = if t < 0.0 { t } else { 0.0 };
    let k = t.mul_add(LOG2_E, SHIFT);
    let n = k - SHIFT;
    let s1 = (-n).mul_add(LN2_HI, t);
    let m = n * LN2_LO;
    let sh = s1 - m;
    let sl = (s1 - sh) - m;
    let (s2h, s2l) = two_prod(sh, sh);
    let q = 0.5 * s2h;
    let a = sh + q;
    let b = q - (a - sh);
    let low = sh.mul_add(sl, sl + 0.5f32.mul_add(s2l, b));
    let rest = (s2h * sh).mul_add(poly(sh, &EXPM1_CUBIC), low);
    let w0 = 1.0 + a;
    let c = ((1.0 - w0) + a) + rest;
    // 2^n is normal: n ≥ −126 for t ≥ −87.
    let scale = pow2_of(k);
    let p = scale * w0;
    let h = p - 1.0;
    let l = (p - (h + 1.0)) + scale * c;
    // For n = 0, (a, rest) itself: through w0, the low part would be up to an ulp of h, and
    // its rounding a quarter of an ulp of the result (e^t − 1 near −2^-24).
    let near = n == 0.0;
    (if near { a } else { h }, if near { rest } else { l })
}

/// [`elu`] for α = 1 (Elu's default): `e^x − 1` for x < 0, as its pair summed, and x
/// itself elsewhere (±0 and NaN included, as α · x is for α = 1). The same values as
/// `elu::<false>(x, (1.0, 0.0), 1.0)` with fewer steps.
#[inline(always)]
pub fn elu_one(x: f32) -> f32 {
    let (h, l) = expm1_neg_pair(x);
    if x < 0.0 { h + l } else { x }
}

/// Elu's and Selu's single-precision form: `α (e^x − 1)` for x < 0 with α as the pair `alpha`
/// (Elu's α, Selu's λα; `LOW` false: its low part is 0, and the steps for it go), `λ x` for
/// x > 0 (Elu: λ = 1), and `α · x` at ±0 and NaN (the zero of the f64 rule's sign; NaN stays
/// NaN). e^x − 1 is [`expm1_neg_pair`] of x clamped to −87 (below, e^x is under 2^-125 of the
/// result: what is added to −1 no longer changes its rounding), and its product with α is
/// summed from exact parts, so that one rounding of the result's size is left (with α an f32,
/// where the result is subnormal, two: the high product's and the sum's; with a pair, the
/// product is formed scaled by 2^64 there and rounded once to the subnormal grid, after
/// the sum's rounding to 24 bits).
#[inline(always)]
pub fn elu<const LOW: bool>(x: f32, alpha: (f32, f32), lambda: f32) -> f32 {
    let (h, l) = expm1_neg_pair(x);
    let (ah, al) = alpha;
    let neg = if LOW {
        // The pair e^x − 1 scaled by 2^64 where it is tiny (the result too, then: |α| ≤ 2^60),
        // so that the product's low part is not lost to the subnormal range; the scaling back
        // is the one rounding to a subnormal.
        // (Factors chosen, then multiplied: a choice between scaled and unscaled values led
        // the compiler to form the product for both.)
        let tiny = x > -TWO_M60;
        let up = if tiny { TWO_64 } else { 1.0 };
        let down = if tiny { TWO_M64 } else { 1.0 };
        let (h, l) = (h * up, l * up);
        let (ph, pl) = two_prod(ah, h);
        (ph + (pl + ah.mul_add(l, al * (h + l)))) * down
    } else {
        let (ph, pl) = two_prod(ah, h);
        ph + ah.mul_add(l, pl)
    };
    if x < 0.0 {
        neg
    } else if x > 0.0 {
        lambda * x
    } else {
        ah * x
    }
}

/// 2^-60 and 2^-64.
const TWO_M60: f32 = 1.0 / (1u64 << 60) as f32;
const TWO_M64: f32 = 1.0 / TWO_64;

/// 2/√π split in two (the high part its f32 rounding).
const FRAC_2_SQRT_PI_HI: f32 = f32::from_bits(0x3f90_6ebb);
const FRAC_2_SQRT_PI_LO: f32 = f32::from_bits(0xb37b_d649);

/// 2^64.
const TWO_64: f32 = (1u64 << 63) as f32 * 2.0;

/// `F(m + t)` for the interval of a table chosen by `k`'s low bits, `a` the argument
/// (`t = a − m`, exact: each interval lies within a factor of 2 of its point m, or has m = 0),
/// as a pair `(s, l)`: `F(m) + F'(m) t` summed exactly (the product split, Fast2Sum: |F(m)|
/// is the larger term in every interval), `l` the rest (the pair's low parts and `t R(t)`).
/// Where F changes by a large fraction across an interval (Erf near 0.13: by half), rounding
/// `F'(m) t` would cost half an ulp of the result; so it is not rounded.
#[inline(always)]
fn piece<V: Lanes, const K: usize, const ROWS: usize>(
    k: V,
    a: V,
    table: &[[f32; K]; ROWS],
) -> (V, V) {
    let t = a - k.lookup(&table[M]);
    let mut r = k.lookup(&table[ROWS - 1]);
    for i in (R..ROWS - 1).rev() {
        r = r.mul_add(t, k.lookup(&table[i]));
    }
    let inner = t.mul_add(r, k.lookup(&table[LO]));
    let (c, q) = (k.lookup(&table[HI]), k.lookup(&table[Q]));
    let p = t * q;
    let pe = t.mul_add(q, -p);
    let sum = c + p;
    let se = (c - sum) + p;
    (sum, se + (pe + inner))
}

/// 1 / 0.255: Erf's intervals are 0.255 wide, centred on i · 0.255 ([`piecewise::ERF`]).
const ERF_INV_WIDTH: f32 = 1.0 / 0.255;

/// Where Erf's argument is clamped: erf(3.95) rounds to 1, and 3.95 / 0.255 < 15.5 (the last
/// interval).
const ERF_TOP: f32 = 3.95;

/// `erf x`, for `N` lanes at once: a polynomial of degree 6 on one of 16 intervals of |x|
/// (clamped to 3.95, where erf rounds to 1), chosen per lane by the index `round(|x| / 0.255)`
/// (which [`SHIFT`] leaves in the low bits), with x's sign. Below 2^-60 in magnitude,
/// `x · 2/√π` computed scaled by 2^64, so that the low part of the product is not lost to the
/// subnormal range. ±0 and NaN come through. Within 0.75 ulp (measured on every f32).
#[inline(always)]
pub fn erf_lanes<V: Lanes>(x: V) -> V {
    let u = x.abs();
    let a = u.at_most(ERF_TOP);
    let k = a.mul_add(s(ERF_INV_WIDTH), s(SHIFT));
    let (hi, lo) = piece(k, a, &piecewise::ERF);
    let us = u * s(TWO_64);
    let tiny = us.mul_add(s(FRAC_2_SQRT_PI_HI), us * s(FRAC_2_SQRT_PI_LO)) * s(1.0 / TWO_64);
    let y = V::select(u.lt(s(1.0 / (1u64 << 60) as f32)), tiny, hi + lo);
    y.or_bits(x.and_bits(0x8000_0000))
}

/// Erf as a [`LaneForm`] (it applies everywhere).
#[derive(Clone, Copy, Debug)]
pub struct ErfForm;

impl LaneForm for ErfForm {
    #[inline(always)]
    fn lanes<V: Lanes>(self, x: V) -> (V, V::Mask) {
        (erf_lanes(x), V::always())
    }
}

/// Gelu's erf form as a [`LaneForm`].
#[derive(Clone, Copy, Debug)]
pub struct GeluForm;

impl LaneForm for GeluForm {
    #[inline(always)]
    fn lanes<V: Lanes>(self, x: V) -> (V, V::Mask) {
        gelu_lanes(x)
    }
}

/// [`erf_lanes`] on one value.
#[inline(always)]
pub fn erf(x: f32) -> f32 {
    erf_lanes(x)
}

/// Where Gelu's argument is clamped: the form's intervals end at 15 (this is the f32 below
/// it); from 12 on the result is x for x > 0 (x Φ(−x) is below 2^-100 of x).
const GELU_TOP: f32 = f32::from_bits(0x416f_ffff);
/// The form takes x > −13: Gelu(−13) ≈ −7.95e-38 is a normal f32, and the low part of the
/// result's pair is rounded to a grid finer than 1/16 of the result's ulp.
const GELU_LANE_MIN: f32 = -13.0;
/// The pattern of u + 1 shifted right by 20 holds its exponent and three mantissa bits (eighth
/// octaves): the low 5 bits, which a lookup takes, are those of 1's (`GELU_H_AT`) plus the
/// interval. [`piecewise::GELU_H`] rotated by as much, so that no addition makes them 0 at 1.
const GELU_H_AT: usize = (0x3f80_0000 >> 20) & 31;
static GELU_H_ROTATED: [[f32; 32]; piecewise::GELU_H.len()] = rotated(piecewise::GELU_H, GELU_H_AT);

/// The columns of `table` moved `by` places on (circularly).
const fn rotated<const ROWS: usize>(table: [[f32; 32]; ROWS], by: usize) -> [[f32; 32]; ROWS] {
    let mut out = table;
    let mut row = 0;
    while row < ROWS {
        let mut i = 0;
        while i < 32 {
            out[row][(i + by) % 32] = table[row][i];
            i += 1;
        }
        row += 1;
    }
    out
}

/// 1.5 · 2^18: a value of magnitude below 2^17 added to it is rounded to a multiple of 1/32,
/// whose 32 times is left in the low bits of the sum's pattern (which is a multiple of 32).
const SHIFT_32: f32 = 393_216.0;
/// Gelu's erf form `x Φ(x)` (Φ the normal distribution) for −13 < x < +∞ (the second value
/// says for which lanes that holds), for `N` lanes at once, by one form for every lane (no
/// lane set aside for another form, so no branch on the data): with u = |x| and
/// H(u) = u Φ(−u) e^(u²/2) (smooth; H(0) = 0, H → 1/√(2π)), `x Φ(x) = −e^(−u²/2) H(u)` for
/// x < 0 and `x − e^(−u²/2) H(u)` for x ≥ 0 (Φ(x) = 1 − Φ(−x); what is subtracted is at most
/// x/2, so nothing cancels): both are `z − e^(−u²/2) H(u)` with z = max(x, −0).
///
/// * H is a polynomial of degree 5 on one of 32 intervals ([`piecewise::GELU_H`]: the eighth
///   octaves of u + 1, from u's pattern), computed as a pair.
/// * e^(−u²/2) from u²/2 split exactly into (s, l) as `2^n · 2^(j/32) · e^r`: y = n + j/32
///   the multiple of 1/32 nearest −s/ln 2, 2^(j/32) a pair (w, w') from a table
///   ([`piecewise::EXP2_32`]), r = −s − l − y ln 2 (|r| ≤ ln 2/64, rounded twice, 2^-31 at
///   most each time), e^r = 1 + ρ, ρ = r + r² (a + b r) ([`piecewise::EXP_TAIL`]).
/// * Their product (w + w')(1 + ρ)(hh + hl) as a pair: w hh exact, and the rest
///   w (hl + ρ h) + w' h, h = hh + hl rounded (what is left out is below 2^-48 of the
///   product), scaled by 2^n, taken from z by Fast2Sum and rounded once. z is −0 for x < 0
///   and the last sum is written as `d − e` (not `d + (−e)`), so that x = −0 gives −0
///   without a sign step.
///
/// Below −13 the result nears the subnormal range, where the pair's two parts would each be
/// rounded to its spacing (1.006 ulp at worst, measured): those lanes, +∞ (whose Fast2Sum is
/// NaN) and NaN are the rule's. u is clamped below 15 (the tables' end); from 12 the result is
/// x for x > 0.
#[inline(always)]
pub fn gelu_lanes<V: Lanes>(x: V) -> (V, V::Mask) {
    let u = x.abs_below(s(GELU_TOP));
    let k = (u + s(1.0)).shr_add::<20>(0);
    let (hh, hl) = piece(k, u, &GELU_H_ROTATED);
    // u²/2 = sh + sl exactly (u/2 is exact but below 2^-125, where the form's result does not
    // depend on it).
    let half = u * s(0.5);
    let sh = u * half;
    let sl = u.mul_add(half, -sh);
    let ky = sh.mul_add(s(-LOG2_E), s(SHIFT_32));
    let y = ky - s(SHIFT_32);
    let r = y.mul_add(s(-LN2_HI), -sh);
    let r = y.mul_add(s(-LN2_LO), r - sl);
    let rho = (r * r).mul_add(
        r.mul_add(s(piecewise::EXP_TAIL[1]), s(piecewise::EXP_TAIL[0])),
        r,
    );
    let w = ky.lookup(&piecewise::EXP2_32[0]);
    let w_lo = ky.lookup(&piecewise::EXP2_32[1]);
    // (hl is not below an ulp of hh: it holds all of t R(t), up to a few % of H.)
    let h = hh + hl;
    let eh = w * hh;
    let el = w.mul_add(rho.mul_add(h, hl), w.mul_add(hh, -eh));
    let el = w_lo.mul_add(h, el);
    let (ph, pl) = (eh.scale_pow2(y), el.scale_pow2(y));
    let z = x.or_neg_zero();
    let d = z - ph;
    let gelu = d - ((ph - (z - d)) + pl);
    (
        gelu,
        V::both(s::<V>(GELU_LANE_MIN).lt(x), x.lt(s(f32::INFINITY))),
    )
}

/// Gelu's erf form: [`gelu_lanes`] above −13; from −13 down (where the result nears the
/// subnormal range), at +∞ and NaN, the f64 rule rounded once (below −14.5 the result is −0).
#[inline(always)]
pub fn gelu(x: f32) -> f32 {
    match gelu_lanes(x) {
        (y, true) => y,
        _ if x < -14.5 => -0.0,
        _ => super::double::gelu_erf(x as f64) as f32,
    }
}

/// `c / 6` for `c = min(max(x + 3, 0), 6)` of an f32 `x`, as a product by the rounded
/// reciprocal. The division by 6 is the slowest step of HSigmoid and HSwish (an f64 vector
/// division takes about 16 cycles for 8 lanes, a product one), and the f32 results are the
/// same: the product differs from the quotient by at most an f64 ulp, and for every one of
/// the 2^32 f32 inputs both HSigmoid and HSwish round to the same f32 either way (compared
/// once, all of them; the test below compares a sample).
#[inline(always)]
fn sixth(c: f64) -> f64 {
    c * (1.0 / 6.0)
}

/// HSigmoid's f32 rule, `min(max(x + 3, 0), 6) / 6` in f64 rounded once: the float rule's
/// value ([`sixth`]), without a division. The clamp is decided on the f32 input: `x ≥ 3`
/// gives 1 (`6 · fl(1/6)` rounds to 1), `x ≤ −3` gives +0, and between them `x + 3` lies in
/// (0, 6), where the clamp changes nothing; a NaN fails both tests and stays NaN through the
/// middle form. Two selects on the f32 lanes instead of clamps on twice as many f64 ones: the
/// same bits as the clamped form for all 2^32 inputs (compared once; a test compares a
/// sample), in about half the vector work.
#[inline(always)]
pub fn hsigmoid(x: f32) -> f32 {
    let mid = sixth(x as f64 + 3.0) as f32;
    if x >= 3.0 {
        1.0
    } else if x <= -3.0 {
        0.0
    } else {
        mid
    }
}

/// HSwish's f32 rule, `x · min(max(x + 3, 0), 6) / 6` in f64 rounded once, as
/// [`hsigmoid`]: `x` itself from 3 up (times a factor of exactly 1), −0 from −3 down (`x`
/// times +0; −∞ too, as the float rule's [`times`](super::table::times) gives), and the f64
/// product between.
#[inline(always)]
pub fn hswish(x: f32) -> f32 {
    let w = x as f64;
    let mid = (w * sixth(w + 3.0)) as f32;
    if x >= 3.0 {
        x
    } else if x <= -3.0 {
        -0.0
    } else {
        mid
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::unary::table::{hard_clamp, times};

    /// The error of `got` in ulps of the f32 nearest `exact`.
    fn ulps(got: f32, exact: f64) -> f64 {
        let near = exact as f32;
        let next = f32::from_bits(near.abs().to_bits() + 1);
        let ulp = (next.abs() - near.abs()) as f64;
        ((got as f64) - exact).abs() / ulp
    }

    fn worst(f: impl Fn(f32) -> f32, exact: impl Fn(f64) -> f64, lo: f32, hi: f32) -> f64 {
        let steps = 400_000;
        let mut w = 0.0f64;
        for i in 0..=steps {
            let x = (lo as f64 + (hi as f64 - lo as f64) * i as f64 / steps as f64) as f32;
            let e = exact(x as f64);
            if e.is_finite() && e.abs() >= f32::MIN_POSITIVE as f64 && e.abs() < f32::MAX as f64 {
                w = w.max(ulps(f(x), e));
            }
        }
        w
    }

    fn sigmoid64(t: f64) -> f64 {
        if t < 0.0 {
            let e = libm::exp(t);
            e / (1.0 + e)
        } else {
            1.0 / (1.0 + libm::exp(-t))
        }
    }

    #[test]
    fn within_an_ulp_across_the_range() {
        // libm's f64 functions are within about 2^-28 f32 ulps of the exact value.
        let gelu64 = |x: f64| x * 0.5 * libm::erfc(-x * std::f64::consts::FRAC_1_SQRT_2);
        let cases: [(&str, f64, f64); 12] = [
            ("gelu", worst(gelu, gelu64, -13.0, 6.0), 0.9),
            (
                "gelu past its parts",
                worst(gelu, gelu64, -14.5, -12.5),
                0.9,
            ),
            ("gelu near 0", worst(gelu, gelu64, -1e-3, 1e-3), 0.9),
            ("erf", worst(erf, libm::erf, -4.0, 4.0), 0.9),
            ("erf near the split", worst(erf, libm::erf, 0.87, 0.88), 0.9),
            ("exp", worst(exp, libm::exp, -87.0, 88.7), 0.75),
            ("exp near 0", worst(exp, libm::exp, -1e-3, 1e-3), 0.75),
            ("sigmoid", worst(sigmoid, sigmoid64, -87.0, 30.0), 0.85),
            (
                "sigmoid past the lane form",
                worst(sigmoid, sigmoid64, -87.3, -86.7),
                0.85,
            ),
            ("tanh", worst(tanh, libm::tanh, -10.0, 10.0), 0.52),
            ("tanh near 0", worst(tanh, libm::tanh, -1e-3, 1e-3), 0.52),
            (
                "swish",
                worst(
                    |x| swish(x, 1.702),
                    |x| x * sigmoid64(1.702f32 as f64 * x),
                    -50.0,
                    50.0,
                ),
                0.9,
            ),
        ];
        for (name, got, bound) in cases {
            assert!(got < bound, "{name}: {got} ulps (bound {bound})");
        }
    }

    #[test]
    fn gelu_tanh_within_an_ulp() {
        let rule = |x: f32| match gelu_tanh_lane(x) {
            (y, true) => y,
            _ => f32::NAN,
        };
        let exact = |x: f64| {
            let u = 0.797_884_560_802_865_4 * (x + 0.044715 * x * x * x);
            x * sigmoid64(2.0 * u)
        };
        for (lo, hi) in [(-9.6, 10.0), (-1e-3, 1e-3), (-9.7, -9.0), (3.0, 6.0)] {
            let w = worst(rule, exact, lo, hi);
            assert!(w < 0.9, "gelu tanh on [{lo}, {hi}]: {w} ulps");
        }
        assert_eq!(gelu_tanh_lane(12.0), (12.0, true));
        assert_eq!(gelu_tanh_lane(f32::INFINITY), (f32::INFINITY, true));
        assert!(!gelu_tanh_lane(-12.0).1 && !gelu_tanh_lane(f32::NAN).1);
        assert!(!gelu_tanh_lane(f32::NEG_INFINITY).1 && !gelu_tanh_lane(1e-35).1);
    }

    #[test]
    fn softplus_within_an_ulp() {
        let exact = |x: f64| x.max(0.0) + libm::log1p(libm::exp(-x.abs()));
        let lane = |x: f32| match softplus_lane(x) {
            (y, true) => y,
            _ => f32::NAN,
        };
        for (lo, hi) in [
            (-80.0, 20.0),
            (-1e-3, 1e-3),
            (-1.0, 1.0),
            (15.0, 17.0),
            (-80.0, -70.0),
        ] {
            let w = worst(lane, exact, lo, hi);
            assert!(w < 0.8, "softplus on [{lo}, {hi}]: {w} ulps");
        }
        let w = worst(softplus, exact, -104.0, -79.0);
        assert!(w < 0.8, "softplus below the lane form: {w} ulps");
        assert_eq!(softplus(f32::INFINITY), f32::INFINITY);
        assert_eq!(softplus(f32::NEG_INFINITY).to_bits(), 0);
        assert_eq!(softplus(-0.0), std::f32::consts::LN_2);
        assert_eq!(softplus(0.0), std::f32::consts::LN_2);
        assert_eq!(softplus(16.5), 16.5);
        assert_eq!(softplus(1e30), 1e30);
        assert!(softplus(f32::NAN).is_nan() && softplus(-f32::NAN).is_nan());
        assert!(!softplus_lane(-80.5).1 && softplus_lane(-80.0).1);
    }

    #[test]
    fn mish_within_an_ulp() {
        let exact = |x: f64| x * libm::tanh(libm::log1p(libm::exp(x)));
        for (lo, hi) in [(-87.0, 12.0), (-1e-3, 1e-3), (-6.0, -4.0), (9.0, 10.0)] {
            let w = worst(mish, exact, lo, hi);
            assert!(w < 0.85, "mish on [{lo}, {hi}]: {w} ulps");
        }
        assert_eq!(mish(-0.0).to_bits(), (-0.0f32).to_bits());
        assert_eq!(mish(0.0).to_bits(), 0.0f32.to_bits());
        assert_eq!(mish(f32::INFINITY), f32::INFINITY);
        assert_eq!(mish(f32::NEG_INFINITY).to_bits(), (-0.0f32).to_bits());
        assert_eq!(mish(20.0), 20.0);
        assert!(mish(f32::NAN).is_nan());
        assert!(mish(-95.0) < 0.0 && mish(-95.0) > -1e-38);
        assert!(!mish_lanes(-65.5).1 && !mish_lanes(-0.0).1 && mish_lanes(-65.0).1);
        assert!(!mish_lanes(1e-31).1 && mish_lanes(1e-30).1 && !mish_lanes(f32::NAN).1);
        let w = worst(mish, exact, 1e-38, 1e-36);
        assert!(w < 0.85, "mish on tiny x: {w} ulps");
    }

    #[test]
    fn elu_and_selu_within_an_ulp() {
        let one = |x| elu::<false>(x, (1.0, 0.0), 1.0);
        let tenth = split_param(0.1).unwrap();
        let elu_tenth = |x| elu::<true>(x, tenth, 1.0);
        // Selu's constants as f32 models carry them, λα as the f64 rule forms it.
        let (a, l) = (1.673_263_2f32 as f64, 1.050_701f32 as f64);
        let scale = split_param(l * a).unwrap();
        let selu = |x| elu::<true>(x, scale, l as f32);
        let selu64 = |x: f64| {
            if x > 0.0 {
                l * x
            } else {
                l * a * libm::expm1(x)
            }
        };
        let cases: [(&str, f64, f64); 7] = [
            ("elu", worst(one, libm::expm1, -90.0, 0.0), 0.6),
            ("elu near 0", worst(one, libm::expm1, -1e-3, 0.0), 0.6),
            ("elu near 2^-24", worst(one, libm::expm1, -2e-7, -1e-8), 0.6),
            (
                "elu, α = 0.1",
                worst(elu_tenth, |x| 0.1 * libm::expm1(x), -20.0, 0.0),
                0.65,
            ),
            ("selu", worst(selu, selu64, -20.0, 20.0), 0.6),
            ("selu near 0", worst(selu, selu64, -1e-3, 1e-3), 0.6),
            ("selu tiny", worst(selu, selu64, -1e-30, 0.0), 0.6),
        ];
        for (name, got, bound) in cases {
            assert!(got < bound, "{name}: {got} ulps (bound {bound})");
        }
        for i in (0..u32::MAX).step_by(997) {
            let x = f32::from_bits(i);
            let (a, b) = (elu_one(x), one(x));
            assert!(
                a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()),
                "{x:e}"
            );
        }
        // Zeros keep the sign of α · x; NaN stays NaN; the ends.
        assert_eq!(one(-0.0).to_bits(), (-0.0f32).to_bits());
        assert_eq!(selu(0.0).to_bits(), 0.0f32.to_bits());
        assert!(one(f32::NAN).is_nan() && selu(f32::NAN).is_nan());
        assert_eq!(one(f32::NEG_INFINITY), -1.0);
        assert_eq!(one(-17.4), -1.0);
        assert_eq!(one(-17.3), -1.0 + f32::EPSILON / 2.0);
        assert_eq!(one(f32::INFINITY), f32::INFINITY);
        assert_eq!(one(f32::MAX), f32::MAX);
        assert_eq!(selu(f32::MAX), f32::INFINITY);
        assert_eq!(selu(f32::NEG_INFINITY), -(l * a) as f32);
        assert_eq!(selu(f32::from_bits(1)), f32::from_bits(1));
        assert_eq!(split_param(0.0), None);
        assert_eq!(split_param(f64::NAN), None);
        assert_eq!(split_param(1e30), None);
    }

    #[test]
    fn specials_and_limits() {
        assert_eq!(exp(0.0), 1.0);
        assert_eq!(gelu(0.0).to_bits(), 0.0f32.to_bits());
        assert_eq!(gelu(-0.0).to_bits(), (-0.0f32).to_bits());
        assert_eq!(gelu(f32::INFINITY), f32::INFINITY);
        assert_eq!(gelu(f32::NEG_INFINITY).to_bits(), (-0.0f32).to_bits());
        assert_eq!(gelu(-20.0).to_bits(), (-0.0f32).to_bits());
        assert!(gelu(f32::NAN).is_nan());
        assert_eq!(gelu(10.0), 10.0);
        assert_eq!(gelu(1e30), 1e30);
        assert_eq!(gelu(f32::MAX), f32::MAX);
        assert_eq!(gelu(1e-30), 5e-31);
        assert!(gelu(-13.5) < 0.0 && gelu(-13.5) > -1e-38);
        assert_eq!(erf(0.0).to_bits(), 0.0f32.to_bits());
        assert_eq!(erf(-0.0).to_bits(), (-0.0f32).to_bits());
        assert_eq!(erf(f32::INFINITY), 1.0);
        assert_eq!(erf(f32::NEG_INFINITY), -1.0);
        assert_eq!(erf(3.92), 1.0);
        assert_eq!(erf(3.9), 1.0 - f32::EPSILON / 2.0);
        assert_eq!(erf(3.5846316e-38), 4.0448236e-38);
        assert!(erf(3.8) < 1.0);
        assert!(erf(f32::NAN).is_nan());
        assert_eq!(
            erf(1e-40),
            (1e-40f32 as f64 * std::f64::consts::FRAC_2_SQRT_PI) as f32
        );
        assert_eq!(
            erf(f32::MIN_POSITIVE),
            (f32::MIN_POSITIVE as f64 * std::f64::consts::FRAC_2_SQRT_PI) as f32
        );
        assert_eq!(exp(f32::INFINITY), f32::INFINITY);
        assert_eq!(exp(89.0), f32::INFINITY);
        assert!(ulps(exp(88.72283), libm::exp(88.72283f32 as f64)) < 0.75);
        assert_eq!(exp(f32::NEG_INFINITY), 0.0);
        assert_eq!(exp(-103.0), f32::from_bits(1));
        assert_eq!(exp(-104.0), 0.0);
        assert!(exp(f32::NAN).is_nan() && sigmoid(f32::NAN).is_nan() && tanh(f32::NAN).is_nan());
        assert_eq!(tanh(-0.0).to_bits(), (-0.0f32).to_bits());
        assert_eq!(tanh(f32::NEG_INFINITY), -1.0);
        assert_eq!(tanh(9.1), 1.0);
        assert!(tanh(9.0) < 1.0);
        assert_eq!(tanh(1e-30), 1e-30);
        assert_eq!(tanh(f32::from_bits(1)), f32::from_bits(1));
        assert!(swish(f32::NAN, 1.0).is_nan() && swish(1.0, f32::NAN).is_nan());
        assert_eq!(sigmoid(0.0), 0.5);
        assert_eq!(sigmoid(-0.0), 0.5);
        assert_eq!(sigmoid(f32::INFINITY), 1.0);
        assert_eq!(sigmoid(f32::NEG_INFINITY), 0.0);
        assert_eq!(sigmoid(20.0), 1.0);
        assert_eq!(swish(f32::INFINITY, 1.0), f32::INFINITY);
        assert_eq!(swish(f32::NEG_INFINITY, 1.0).to_bits(), (-0.0f32).to_bits());
        assert_eq!(swish(f32::NEG_INFINITY, -1.0), f32::NEG_INFINITY);
        assert_eq!(swish(-200.0, 1.0).to_bits(), (-0.0f32).to_bits());
        assert_eq!(swish(3.0, 0.0), 1.5);
        assert_eq!(swish(-0.0, 1.0).to_bits(), (-0.0f32).to_bits());
        assert_eq!(swish(0.0, -2.0).to_bits(), 0.0f32.to_bits());
        assert_eq!(sigmoid(-0.0).to_bits(), 0.5f32.to_bits());
        assert_eq!(swish(1e30, 1e30), 1e30);
        assert_eq!(swish(-1e30, 1e30).to_bits(), (-0.0f32).to_bits());
    }

    /// HSigmoid's and HSwish's f32 forms give the bits of their clamped f64 forms (the clamp
    /// on `x + 3` in f64, then the product by fl(1/6)) for every f32 input: about half a
    /// minute in a release build on two cores (`cargo test --release --lib -- --ignored
    /// hard_forms_every_input`).
    #[test]
    #[ignore = "all 2^32 inputs: run in a release build"]
    fn hard_forms_every_input() {
        use rayon::prelude::*;
        let clamped = |x: f32| {
            let x = x as f64;
            let g = sixth(hard_clamp(x));
            (g as f32, times(x, g) as f32)
        };
        (0..=u16::MAX).into_par_iter().for_each(|hi| {
            for lo in 0..=u16::MAX {
                let x = f32::from_bits(u32::from(hi) << 16 | u32::from(lo));
                let (s, w) = clamped(x);
                assert_eq!(hsigmoid(x).to_bits(), s.to_bits(), "hsigmoid {x:e}");
                assert_eq!(hswish(x).to_bits(), w.to_bits(), "hswish {x:e}");
            }
        });
    }

    /// HSigmoid's and HSwish's f32 forms give the bits of the float rule in f64 (its division
    /// by 6) rounded once: every 4093rd bit pattern, and every 1021st of the range where the
    /// clamp is not flat (|x| ≤ 3), both signs, with the edges.
    #[test]
    fn hard_forms_divide_by_six() {
        let divided = |x: f32| {
            let x = x as f64;
            let q = hard_clamp(x) / 6.0;
            (q as f32, times(x, q) as f32)
        };
        let edges = [
            0.0f32,
            -0.0,
            3.0,
            -3.0,
            6.0,
            -6.0,
            1e-45,
            -1e-45,
            f32::MAX,
            f32::MIN,
        ];
        let specials = [f32::NAN, f32::INFINITY, f32::NEG_INFINITY];
        let sample = (0..=u32::MAX).step_by(4093).map(f32::from_bits);
        let near = (0..=3.0f32.to_bits()).step_by(1021).map(f32::from_bits);
        let xs = sample
            .chain(near.flat_map(|x| [x, -x]))
            .chain(edges)
            .chain(specials);
        for x in xs {
            let (s, w) = divided(x);
            let bits = |v: f32| if v.is_nan() { u32::MAX } else { v.to_bits() };
            assert_eq!(bits(hsigmoid(x)), bits(s), "hsigmoid {x:e}");
            assert_eq!(bits(hswish(x)), bits(w), "hswish {x:e}");
        }
    }
}
