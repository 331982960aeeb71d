//! Branch-free double-precision forms of the transcendental rules, for f32 data: Elu and Selu
//! where their parameters do not split into f32 pairs, and `e^t − 1`, which they are built
//! from. Each is straight-line arithmetic (no calls, no branches, selects instead) that the
//! compiler vectorises, accurate to far better than [`BOUND`] relative to the exact value.
//! [`settle`] rounds such a value to f32 and says whether the bound settles the rounding;
//! [`super::UnaryElem`] for f32 recomputes the rare elements it does not settle by the row's
//! scalar rule, so that every result is the one the scalar rule gives, only faster.
//!
//! Determinism: only IEEE operations with one defined result are used (add, multiply, divide,
//! fused multiply-add, comparisons, bit moves), so the bits are the same on every vector unit
//! and at any thread count. `mul_add` is one instruction where FMA exists, a correctly rounded
//! library call where it does not: the same value either way.

/// The relative error bound of every form here (2^-40). The forms are within a few units of
/// 2^-47 (e^t − 1 at t = −ln2/2, its worst place); the bound leaves a factor of 16 at least.
pub const BOUND: f64 = 1.0 / (1u64 << 40) as f64;

/// `v` rounded to f32, and whether a value within [`BOUND`] of `v` (relatively) could round
/// differently (then the exact value's rounding is not settled by `v`).
#[inline(always)]
pub fn settle(v: f64) -> (f32, bool) {
    let lo = (v * (1.0 - BOUND)) as f32;
    let hi = (v * (1.0 + BOUND)) as f32;
    (v as f32, lo.to_bits() != hi.to_bits())
}

/// Horner's rule with fused steps; `c` from the constant term up.
#[inline(always)]
pub(super) fn poly<const N: usize>(x: f64, c: &[f64; N]) -> f64 {
    let mut acc = c[N - 1];
    let mut i = N - 1;
    while i > 0 {
        i -= 1;
        acc = acc.mul_add(x, c[i]);
    }
    acc
}

pub(super) const LOG2_E: f64 = std::f64::consts::LOG2_E;
/// ln 2 split in two: the high part has 32 significant bits, so that `n · LN2_HI` is exact
/// for |n| < 2^21 and `t − n · LN2_HI` is exact near t = n ln 2 (Cody and Waite).
const LN2_HI: f64 = f64::from_bits(0x3fe6_2e42_fee0_0000);
const LN2_LO: f64 = 1.908_214_929_270_587_7e-10;
/// 1.5 · 2^52: adding it rounds to an integer, which then sits in the low mantissa bits.
pub(super) const SHIFT: f64 = 6_755_399_441_055_744.0;

/// `(e^r − 1 − r) / r²` for |r| ≤ ln2/2: a least-squares fit of degree 8 on Chebyshev nodes
/// (constant term first), within 2^-49.4 of e^r (2^-47.7 of e^r − 1 at r = −ln2/2, the
/// worst place for expm1; tiny near 0, where the term is multiplied by r²). Taylor's series
/// to the same accuracy needs degree 11: three more steps in every f64 form.
const EXPM1: [f64; 9] = [
    0.500_000_000_000_000_7,
    0.166_666_666_666_482_44,
    0.041_666_666_666_618_11,
    0.008_333_333_353_760_216,
    0.001_388_888_891_997_702_7,
    0.000_198_412_086_705_949_57,
    2.480_151_708_823_255_2e-5,
    2.762_515_006_329_900_5e-6,
    2.762_208_592_281_046_6e-7,
];

/// `e^t = 2^n (1 + p)`: returns `(2^n, p)`, with `p = e^r − 1`, `t = n ln2 + r`,
/// |r| ≤ ln2/2. For −708 ≤ t ≤ 709 (callers clamp).
#[inline(always)]
fn exp_parts(t: f64) -> (f64, f64) {
    let k = t.mul_add(LOG2_E, SHIFT);
    let n = k - SHIFT;
    let r = (-n).mul_add(LN2_LO, (-n).mul_add(LN2_HI, t));
    let p = (r * r).mul_add(poly(r, &EXPM1), r);
    // The low 12 bits of k's pattern hold n; n + 1023 shifted into the exponent is 2^n.
    let scale = f64::from_bits(k.to_bits().wrapping_add(1023) << 52);
    (scale, p)
}

/// `e^t − 1` for t ≤ 0: `2^n p + (2^n − 1)`, one rounding; for n = 0 that is `p` itself (no
/// cancellation near 0), and below −ln2/2 the result is at least 0.29 in size. `t = −0`
/// gives +0 (callers that must keep the sign handle zero themselves).
#[inline(always)]
pub fn expm1_neg(t: f64) -> f64 {
    let t = if t < -708.0 { -708.0 } else { t };
    let (s, p) = exp_parts(t);
    s.mul_add(p, s - 1.0)
}

/// `α (e^x − 1)` for x < 0 and `x` above (Elu, α its attribute; Selu with α the product λα,
/// the positive side scaled by λ): the zeros are `α · ±0`, as the float rule gives.
#[inline(always)]
pub fn elu(x: f64, alpha: f64, lambda: f64) -> f64 {
    let neg = alpha * expm1_neg(if x < 0.0 { x } else { 0.0 });
    if x < 0.0 {
        neg
    } else if x == 0.0 {
        alpha * x
    } else {
        lambda * x
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The largest relative error of `f` against `reference` (both in f64) over f32 inputs
    /// spread across `lo..hi`.
    fn max_rel(f: fn(f64) -> f64, reference: fn(f64) -> f64, lo: f32, hi: f32) -> f64 {
        let mut worst = 0.0f64;
        let steps = 200_000;
        for i in 0..=steps {
            let x = (lo as f64 + (hi as f64 - lo as f64) * i as f64 / steps as f64) as f32 as f64;
            let (y, r) = (f(x), reference(x));
            if r != 0.0 && r.is_finite() {
                worst = worst.max(((y - r) / r).abs());
            }
        }
        worst
    }

    #[test]
    fn forms_are_far_inside_the_bound() {
        // libm is within about 1 ulp (2^-52) of the exact value: a form within 2^-46 of it is
        // within the bound with room to spare.
        let tight = 1.0 / (1u64 << 46) as f64;
        type Case = (&'static str, fn(f64) -> f64, fn(f64) -> f64, f32, f32);
        let cases: [Case; 2] = [
            ("expm1", expm1_neg, libm::expm1, -800.0, 0.0),
            ("expm1 near 0", expm1_neg, libm::expm1, -1e-3, 0.0),
        ];
        for (name, f, r, lo, hi) in cases {
            let e = max_rel(f, r, lo, hi);
            assert!(e < tight, "{name}: relative error {e:e}");
        }
    }

    #[test]
    fn limits_and_specials() {
        assert_eq!(elu(-0.0, 1.0, 1.0).to_bits(), (-0.0f64).to_bits());
        assert_eq!(elu(f64::NEG_INFINITY, 2.0, 1.0), -2.0);
        assert_eq!(elu(f64::INFINITY, 2.0, 3.0), f64::INFINITY);
    }

    #[test]
    fn settle_flags_only_values_near_a_rounding_boundary() {
        let one_and_half_ulp = 1.0 + 1.5 * f32::EPSILON as f64;
        assert!(settle(one_and_half_ulp).1);
        assert!(!settle(1.0 + 1.2 * f32::EPSILON as f64).1);
        assert!(settle(f32::MAX as f64 + (2f64.powi(103) - 2f64.powi(60))).1);
        assert!(!settle(f64::INFINITY).1 && !settle(0.0).1 && !settle(f64::NAN).1);
    }
}
