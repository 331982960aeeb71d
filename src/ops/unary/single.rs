//! Single-precision forms of Exp, Sigmoid and Swish: the f32 rule of these rows. Each is
//! straight-line f32 arithmetic (no calls, no branches, selects instead) that the compiler
//! vectorises eight lanes to an AVX2 register, sixteen to an AVX-512 one, within 1 ulp of the
//! exact result (`cargo bench --bench accuracy` measures every f32 input; docs/accuracy.md).
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
fn poly<const N: usize>(x: f32, c: &[f32; N]) -> f32 {
    let mut acc = c[N - 1];
    let mut i = N - 1;
    while i > 0 {
        i -= 1;
        acc = acc.mul_add(x, c[i]);
    }
    acc
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
    let t = t.clamp(low, 89.0);
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

/// `e^x`. The reduced argument is rounded once here (no low part to carry): its error, at
/// most 2^-26, costs a quarter of an ulp at worst, and the result stays within 0.8 ulp.
#[inline(always)]
pub fn exp(x: f32) -> f32 {
    // (`clamp` keeps a NaN.)
    let t = x.clamp(-104.0, 89.0);
    let k = t.mul_add(LOG2_E, SHIFT);
    let n = k - SHIFT;
    let s = (-n).mul_add(LN2_LO, (-n).mul_add(LN2_HI, t));
    let tail = (s * s) * poly(s, &EXPM1_TAIL);
    let w0 = 1.0 + s;
    let w = w0 + (((1.0 - w0) + s) + tail);
    let n = (k.to_bits() as i32).wrapping_sub(SHIFT.to_bits() as i32);
    let (a, b) = pow2(n);
    (w * a) * b
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
fn quotient(zh: f32, zl: f32, nh: f32, nl: f32) -> (f32, f32, f32) {
    // 1 + z as the pair (dh, dl), exactly but for zl's own rounding.
    let dh = 1.0 + zh;
    let dl = ((1.0 - dh) + zh) + zl;
    let r = 1.0 / dh;
    let q = nh * r;
    let rem = (-q).mul_add(dh, nh);
    let rem = (-q).mul_add(dl, rem + nl);
    (q, rem, r)
}

/// `1 / (1 + e^−x)`: [`sigmoid_parts`] with the numerator scaled in place (a subnormal result
/// is rounded from the scaled e^x, within 0.75 ulp), which saves the separate scaling.
#[inline(always)]
pub fn sigmoid(x: f32) -> f32 {
    let neg = x < 0.0;
    let e = exp_parts(if neg { x } else { -x }, 0.0, -104.0);
    let (a, b) = pow2(e.n);
    let zh = (e.w * a) * b;
    let zl = (e.c * a) * b;
    let (nh, nl) = if neg { (zh, zl) } else { (1.0, 0.0) };
    let (q, rem, r) = quotient(zh, zl, nh, nl);
    rem.mul_add(r, q)
}

/// `x · sigmoid(β x)`, a zero of x's sign where the sigmoid is 0 (so that x = −∞ gives −0,
/// the limit, as the f64 rule does).
#[inline(always)]
pub fn swish(x: f32, beta: f32) -> f32 {
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
    // xs (q + rem r) with xs q split exactly: one rounding of the result's size.
    let ph = xs * q;
    let pl = xs.mul_add(q, -ph);
    let y = xs.mul_add(rem * r, pl) + ph;
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

#[cfg(test)]
mod tests {
    use super::*;

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
        let cases: [(&str, f64, f64); 4] = [
            ("exp", worst(exp, libm::exp, -87.0, 88.7), 0.75),
            ("exp near 0", worst(exp, libm::exp, -1e-3, 1e-3), 0.75),
            ("sigmoid", worst(sigmoid, sigmoid64, -87.0, 30.0), 0.85),
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
    fn specials_and_limits() {
        assert_eq!(exp(0.0), 1.0);
        assert_eq!(exp(f32::INFINITY), f32::INFINITY);
        assert_eq!(exp(89.0), f32::INFINITY);
        assert!(ulps(exp(88.72283), libm::exp(88.72283f32 as f64)) < 0.75);
        assert_eq!(exp(f32::NEG_INFINITY), 0.0);
        assert_eq!(exp(-103.0), f32::from_bits(1));
        assert_eq!(exp(-104.0), 0.0);
        assert!(exp(f32::NAN).is_nan() && sigmoid(f32::NAN).is_nan());
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
}
