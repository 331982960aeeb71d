//! Members of the unary family with attributes or parameter inputs: Clamp-1, Elu-1, Gelu-2,
//! Gelu-7, Round-5, Swish-4, Selu-1, HardSigmoid-1.
//!
//! Decisions:
//! * Clamp: `min` and `max` (both required, `min ≤ max`, as OpenVINO checks) apply to floats in
//!   the float type, to integers as `⌈min⌉` and `⌊max⌋` (OpenVINO's rule); NaN stays NaN.
//! * Gelu-2 is the erf form; Gelu-7 takes `approximation_mode` = `erf` (default) or `tanh`
//!   (any case). The erf form is computed as `x/2 · erfc(−x/√2)`, which is `x/2 · (1 + erf(x/√2))`
//!   without its cancellation for negative x; the tanh form as `x / (1 + e^−2u)`,
//!   `u = √(2/π)(x + 0.044715x³)`, which is `x/2 · (1 + tanh u)`.
//! * Round-5: `mode` = `half_to_even` or `half_away_from_zero` (required, as OpenVINO requires
//!   it); integers unchanged.
//! * Swish-4: `x · sigmoid(β x)`, β from the optional second input (a one-element tensor), 1
//!   without it. Selu-1: `λ x` for x > 0, else `λ α (e^x − 1)`, α and λ from inputs 1 and 2.
//!   HardSigmoid-1: `max(0, min(1, α x + β))`, α and β from inputs 1 and 2. Elu-1:
//!   `x` for x > 0, else `α (e^x − 1)`, α the attribute `alpha`.

use super::double::{GELU_K, SQRT_2_OVER_PI};
use super::{
    Unary, UnaryLink, double, double_lanes_map, double_map, lanes_map, no_int, single, vector,
};
use crate::num::{Float, Int, Num};
use crate::ops::kernel::{Out, Src};
use crate::ops::{Arity, AttrError, Attrs, ElemError};
use crate::tensor::TypeSet;

fn parse_f64(text: &str) -> Result<f64, String> {
    let v: f64 = text
        .trim()
        .parse()
        .map_err(|_| "expected a number".to_owned())?;
    if v.is_nan() {
        return Err("NaN is not a valid value".into());
    }
    Ok(v)
}

/// Clamp-1: `min(max(x, min), max)`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Clamp {
    pub min: f64,
    pub max: f64,
}

impl Unary for Clamp {
    const NAME: &'static str = "Clamp";
    const VERSION: u32 = 1;
    const TYPES: TypeSet = TypeSet::NUMERIC;
    const EXACT: bool = true;

    fn link(self) -> Option<UnaryLink> {
        Some(UnaryLink::Clamp(self))
    }

    fn parse(a: &Attrs) -> Result<Self, Vec<AttrError>> {
        let min = a.parse_required("min", parse_f64);
        let max = a.parse_required("max", parse_f64);
        match (min, max) {
            (Ok(min), Ok(max)) if min <= max => Ok(Clamp { min, max }),
            (Ok(_), Ok(_)) => Err(vec![a.invalid("max", "must not be below `min`")]),
            (min, max) => Err(min.err().into_iter().chain(max.err()).collect()),
        }
    }

    #[inline(always)]
    fn int<T: Int>(self, x: T) -> Result<T, ElemError> {
        // Bounds as integers: ⌈min⌉ and ⌊max⌋ (f64 → i128 saturates).
        let (lo, hi) = (self.min.ceil() as i128, self.max.floor() as i128);
        let v = x.to_i128();
        Ok(if v < lo {
            T::from_num(Num::Int(lo.max(T::MIN.to_i128())))
        } else if v > hi {
            T::from_num(Num::Int(hi.min(T::MAX.to_i128())))
        } else {
            x
        })
    }

    #[inline(always)]
    fn float<F: Float>(self, x: F) -> F {
        let (lo, hi) = (F::of_f64(self.min), F::of_f64(self.max));
        if x < lo {
            lo
        } else if x > hi {
            hi
        } else {
            x
        }
    }
}

/// Elu-1: `x` for x > 0, else `α (e^x − 1)`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Elu {
    pub alpha: f64,
}

impl Unary for Elu {
    const NAME: &'static str = "Elu";
    const VERSION: u32 = 1;
    const TYPES: TypeSet = TypeSet::FLOAT;
    const EXACT: bool = false;

    fn parse(a: &Attrs) -> Result<Self, Vec<AttrError>> {
        Ok(Elu {
            alpha: a.parse_required("alpha", parse_f64).map_err(|e| vec![e])?,
        })
    }

    fn int<T: Int>(self, _: T) -> Result<T, ElemError> {
        no_int()
    }

    #[inline(always)]
    fn float<F: Float>(self, x: F) -> F {
        if x > F::ZERO || x.is_nan() {
            x
        } else {
            F::of_f64(self.alpha) * x.exp_m1()
        }
    }

    const SINGLE: bool = true;

    /// [`single::elu_one`] for α = 1 (the default), [`single::elu`] where α splits into an
    /// f32 pair ([`single::split_param`]; its low part 0 for α an f32), else the f64 rule
    /// rounded once.
    #[inline(always)]
    fn single(self, x: f32) -> f32 {
        match single::split_param(self.alpha) {
            Some((1.0, 0.0)) => single::elu_one(x),
            Some((alpha, 0.0)) => single::elu::<false>(x, (alpha, 0.0), 1.0),
            Some(alpha) => single::elu::<true>(x, alpha, 1.0),
            None => self.float(x as f64) as f32,
        }
    }

    /// [`single`](Unary::single)'s choice, made once.
    #[inline(always)]
    fn single_run(self, a: Src<'_, f32>, out: Out<'_, f32>) {
        match single::split_param(self.alpha) {
            Some((1.0, 0.0)) => super::single_map(
                a,
                out,
                #[inline(always)]
                |x| (single::elu_one(x), true),
                single::elu_one,
            ),
            Some((alpha, 0.0)) => super::single_map(
                a,
                out,
                #[inline(always)]
                move |x| (single::elu::<false>(x, (alpha, 0.0), 1.0), true),
                move |x| single::elu::<false>(x, (alpha, 0.0), 1.0),
            ),
            Some(alpha) => super::single_map(
                a,
                out,
                #[inline(always)]
                move |x| (single::elu::<true>(x, alpha, 1.0), true),
                move |x| single::elu::<true>(x, alpha, 1.0),
            ),
            None => self.vector_run(a, out),
        }
    }

    #[inline(always)]
    fn vector(self, x: f64) -> f64 {
        vector::elu(x, self.alpha, 1.0)
    }

    #[inline(always)]
    fn double(self, x: f64) -> f64 {
        // Both sides computed, then chosen (a select keeps the loop vectorised).
        // (At ±0 the float rule's α · expm1(±0) is α · ±0.)
        let neg = double::scaled_expm1(x.min(0.0), (self.alpha, 0.0));
        if x < 0.0 {
            neg
        } else if x == 0.0 {
            self.alpha * x
        } else {
            x
        }
    }
}

/// `a · b` as an unevaluated sum `hi + lo` (exact: `lo` is the product's rounding error).
#[inline(always)]
fn two_prod<F: Float>(a: F, b: F) -> (F, F) {
    let p = a * b;
    (p, a.mul_add(b, -p))
}

/// `a + b` as `hi + lo` (exact, any order of magnitude).
#[inline(always)]
fn two_sum<F: Float>(a: F, b: F) -> (F, F) {
    let s = a + b;
    let v = s - a;
    (s, (a - (s - v)) + (b - v))
}

/// `(hi + lo) · (c_hi + c_lo)` to about twice the type's precision.
#[inline(always)]
fn dd_mul<F: Float>((hi, lo): (F, F), c_hi: F, c_lo: F) -> (F, F) {
    let (p, e) = two_prod(hi, c_hi);
    (p, e + hi * c_lo + lo * c_hi)
}

/// 1/√2 as `hi + lo` (√(2/π) and 0.044715 likewise are in [`double`]).
const FRAC_1_SQRT_2: (f64, f64) = (std::f64::consts::FRAC_1_SQRT_2, -4.833_646_656_726_457e-17);

/// `x/2 · (1 + erf(x/√2))`, as `x/2 · erfc(−x/√2)`. The argument `z = −x/√2` is carried to
/// twice the precision (`z + dz`) and erfc corrected to first order,
/// `erfc(z + dz) ≈ erfc(z) − dz · 2/√π · e^(−z²)`: where the result is tiny (x ≪ 0) erfc's
/// relative slope is about 2z, so an argument rounded once would cost 2z² ulps.
#[inline(always)]
pub(super) fn gelu_erf<F: Float>(x: F) -> F {
    let (c_hi, c_lo) = (F::of_f64(FRAC_1_SQRT_2.0), F::of_f64(FRAC_1_SQRT_2.1));
    let (p, dp) = dd_mul((x, F::ZERO), c_hi, c_lo);
    let (z, dz) = (-p, -dp);
    let mut e = z.erfc();
    if z.abs() < F::of_f64(27.0) && dz != F::ZERO {
        let two_over_sqrt_pi = F::of_f64(std::f64::consts::FRAC_2_SQRT_PI);
        e = e - dz * two_over_sqrt_pi * (-(z * z)).exp();
    }
    super::table::times(F::of_f64(0.5) * x, e)
}

/// `x/2 · (1 + tanh(√(2/π)(x + 0.044715x³)))`, as `x / (1 + e^−2u)`. `u` is carried to twice
/// the precision (`u + du`) and `e^(−2u − 2du) ≈ e^(−2u)(1 − 2du)`: where the result is tiny
/// (x ≪ 0, u ≈ −300 at x = −20) an argument rounded once would cost 2|u| ulps.
#[inline(always)]
fn gelu_tanh<F: Float>(x: F) -> F {
    if x.is_nan() || x.abs() > F::of_f64(1e5) {
        // Beyond ±1e5 the result is x, or a zero of x's sign, to far below an ulp (and x³
        // would overflow the double-precision steps).
        return if x > F::ZERO || x.is_nan() {
            x
        } else {
            F::ZERO.copysign(x)
        };
    }
    let x2 = two_prod(x, x);
    let x3 = dd_mul(x2, x, F::ZERO);
    let kx3 = dd_mul(x3, F::of_f64(GELU_K.0), F::of_f64(GELU_K.1));
    let (s, ds) = two_sum(x, kx3.0);
    let (u, du) = dd_mul(
        (s, ds + kx3.1),
        F::of_f64(SQRT_2_OVER_PI.0),
        F::of_f64(SQRT_2_OVER_PI.1),
    );
    let two = F::of_f64(2.0);
    if u < F::ZERO {
        // x · t / (1 + t), t = e^2u ≤ 1: e^−2u would overflow before the result underflows.
        let t = (two * u).exp();
        let t = t + t * two * du;
        super::table::times(x, t / (F::ONE + t))
    } else {
        let e = (-(two * u)).exp();
        x / (F::ONE + (e - e * two * du))
    }
}

/// Gelu-2: the erf form.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Gelu;

impl Unary for Gelu {
    const NAME: &'static str = "Gelu";
    const VERSION: u32 = 2;
    const TYPES: TypeSet = TypeSet::FLOAT;
    const EXACT: bool = false;

    fn parse(_: &Attrs) -> Result<Self, Vec<AttrError>> {
        Ok(Gelu)
    }

    fn int<T: Int>(self, _: T) -> Result<T, ElemError> {
        no_int()
    }

    #[inline(always)]
    fn float<F: Float>(self, x: F) -> F {
        gelu_erf(x)
    }

    #[inline(always)]
    fn double(self, x: f64) -> f64 {
        double::gelu_erf(x)
    }

    #[inline(always)]
    fn double_run(self, a: Src<'_, f64>, out: Out<'_, f64>) {
        Gelu7 { tanh: false }.double_run(a, out)
    }

    const SINGLE: bool = true;

    #[inline(always)]
    fn single(self, x: f32) -> f32 {
        single::gelu(x)
    }

    #[inline(always)]
    fn single_run(self, a: Src<'_, f32>, out: Out<'_, f32>) {
        Gelu7 { tanh: false }.single_run(a, out)
    }
}

/// Gelu-7: the erf or the tanh form (`approximation_mode`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Gelu7 {
    pub tanh: bool,
}

impl Unary for Gelu7 {
    const NAME: &'static str = "Gelu";
    const VERSION: u32 = 7;
    const TYPES: TypeSet = TypeSet::FLOAT;
    const EXACT: bool = false;

    fn parse(a: &Attrs) -> Result<Self, Vec<AttrError>> {
        let tanh = a
            .parse_or("approximation_mode", false, |t| {
                match t.trim().to_ascii_lowercase().as_str() {
                    "erf" => Ok(false),
                    "tanh" => Ok(true),
                    _ => Err("expected erf or tanh".into()),
                }
            })
            .map_err(|e| vec![e])?;
        Ok(Gelu7 { tanh })
    }

    fn int<T: Int>(self, _: T) -> Result<T, ElemError> {
        no_int()
    }

    #[inline(always)]
    fn float<F: Float>(self, x: F) -> F {
        if self.tanh { gelu_tanh(x) } else { gelu_erf(x) }
    }

    #[inline(always)]
    fn double(self, x: f64) -> f64 {
        if self.tanh {
            double::gelu_tanh(x)
        } else {
            double::gelu_erf(x)
        }
    }

    #[inline(always)]
    // Closures marked to be inlined: a function item passed as the form stayed a call outside
    // the vector unit's code (78 ms per million elements, against 8).
    #[allow(clippy::redundant_closure)]
    fn double_run(self, a: Src<'_, f64>, out: Out<'_, f64>) {
        if self.tanh {
            double_map(
                a,
                out,
                #[inline(always)]
                |x| double::gelu_tanh(x),
            );
        } else {
            double_lanes_map(
                a,
                out,
                #[inline(always)]
                |x| double::gelu_erf_lanes::<{ double::GELU_LANES }>(x),
            );
        }
    }

    /// Both forms' f32 rules are single-precision forms: [`single::gelu`] and
    /// [`single::gelu_tanh_lane`] (with the f64 rule rounded once where that does not apply).
    const SINGLE: bool = true;

    #[inline(always)]
    fn single(self, x: f32) -> f32 {
        if self.tanh {
            match single::gelu_tanh_lane(x) {
                (y, true) => y,
                _ => self.float(x as f64) as f32,
            }
        } else {
            single::gelu(x)
        }
    }

    /// The form is chosen once per run (a choice per element keeps the loop scalar).
    #[inline(always)]
    #[allow(clippy::redundant_closure)]
    fn single_run(self, a: Src<'_, f32>, out: Out<'_, f32>) {
        if self.tanh {
            super::single_map(
                a,
                out,
                #[inline(always)]
                |x| single::gelu_tanh_lane(x),
                move |x| self.single(x),
            );
        } else {
            lanes_map(a, out, single::GeluForm, single::gelu);
        }
    }
}

/// Round-5: to the nearest integer, halves to even or away from zero.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Round {
    pub half_to_even: bool,
}

impl Unary for Round {
    const NAME: &'static str = "Round";
    const VERSION: u32 = 5;
    const TYPES: TypeSet = TypeSet::NUMERIC;
    const EXACT: bool = true;

    fn link(self) -> Option<UnaryLink> {
        Some(UnaryLink::Round(self))
    }

    fn parse(a: &Attrs) -> Result<Self, Vec<AttrError>> {
        let half_to_even = a
            .parse_required("mode", |t| match t.trim().to_ascii_lowercase().as_str() {
                "half_to_even" => Ok(true),
                "half_away_from_zero" => Ok(false),
                _ => Err("expected half_to_even or half_away_from_zero".into()),
            })
            .map_err(|e| vec![e])?;
        Ok(Round { half_to_even })
    }

    #[inline(always)]
    fn int<T: Int>(self, x: T) -> Result<T, ElemError> {
        Ok(x)
    }

    #[inline(always)]
    fn float<F: Float>(self, x: F) -> F {
        if self.half_to_even {
            x.round_even()
        } else {
            x.round_away()
        }
    }
}

/// Swish-4: `x · sigmoid(β x)`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Swish {
    pub beta: f64,
}

impl Unary for Swish {
    const NAME: &'static str = "Swish";
    const VERSION: u32 = 4;
    const TYPES: TypeSet = TypeSet::FLOAT;
    const EXACT: bool = false;
    const PARAMS: Arity = Arity::range(0, 1);

    fn parse(_: &Attrs) -> Result<Self, Vec<AttrError>> {
        Ok(Swish { beta: 1.0 })
    }

    fn with_params(self, p: &[f64]) -> Self {
        Swish {
            beta: p.first().copied().unwrap_or(1.0),
        }
    }

    fn int<T: Int>(self, _: T) -> Result<T, ElemError> {
        no_int()
    }

    #[inline(always)]
    fn float<F: Float>(self, x: F) -> F {
        super::table::times(x, super::table::sigmoid(F::of_f64(self.beta) * x))
    }

    const SINGLE: bool = true;

    #[inline(always)]
    fn single(self, x: f32) -> f32 {
        single::swish(x, self.beta as f32)
    }

    #[inline(always)]
    fn single_lane(self, x: f32) -> (f32, bool) {
        single::swish_lane(x, self.beta as f32)
    }

    /// β = 1 (the default) through [`single::swish1_lane`], chosen once per run.
    #[inline(always)]
    fn single_run(self, a: Src<'_, f32>, out: Out<'_, f32>) {
        if self.beta as f32 == 1.0 {
            // A closure, not the fn item: inlined into the vector unit's function, where a fn
            // item passed as the form is called out of line (its fused steps library calls).
            #[allow(clippy::redundant_closure)]
            super::single_map(
                a,
                out,
                #[inline(always)]
                |x| single::swish1_lane(x),
                move |x| single::swish(x, 1.0),
            );
        } else {
            super::single_map(
                a,
                out,
                #[inline(always)]
                move |x| single::swish_lane(x, self.beta as f32),
                move |x| self.single(x),
            );
        }
    }

    #[inline(always)]
    fn double(self, x: f64) -> f64 {
        double::swish(x, self.beta)
    }
}

/// Selu-1: `λ x` for x > 0, else `λ α (e^x − 1)`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Selu {
    pub alpha: f64,
    pub lambda: f64,
}

impl Unary for Selu {
    const NAME: &'static str = "Selu";
    const VERSION: u32 = 1;
    const TYPES: TypeSet = TypeSet::FLOAT;
    const EXACT: bool = false;
    const PARAMS: Arity = Arity::exactly(2);

    fn parse(_: &Attrs) -> Result<Self, Vec<AttrError>> {
        Ok(Selu {
            alpha: f64::NAN,
            lambda: f64::NAN,
        })
    }

    fn with_params(self, p: &[f64]) -> Self {
        match p {
            [alpha, lambda, ..] => Selu {
                alpha: *alpha,
                lambda: *lambda,
            },
            _ => self,
        }
    }

    fn int<T: Int>(self, _: T) -> Result<T, ElemError> {
        no_int()
    }

    #[inline(always)]
    fn float<F: Float>(self, x: F) -> F {
        let lambda = F::of_f64(self.lambda);
        if x > F::ZERO || x.is_nan() {
            lambda * x
        } else {
            lambda * F::of_f64(self.alpha) * x.exp_m1()
        }
    }

    const SINGLE: bool = true;

    /// [`single::elu`] with λα (rounded once, as the float rule's `λ · α` is) as an f32 pair
    /// and λ an f32 (as it is for f32, f16 and bf16 data, whose parameter inputs have the
    /// data's type), else the f64 rule rounded once.
    #[inline(always)]
    fn single(self, x: f32) -> f32 {
        match self.pairs() {
            Some((scale, lambda)) => single::elu::<true>(x, scale, lambda),
            None => self.float(x as f64) as f32,
        }
    }

    /// [`single`](Unary::single)'s choice, made once.
    #[inline(always)]
    fn single_run(self, a: Src<'_, f32>, out: Out<'_, f32>) {
        match self.pairs() {
            Some((scale, lambda)) => super::single_map(
                a,
                out,
                #[inline(always)]
                move |x| (single::elu::<true>(x, scale, lambda), true),
                move |x| single::elu::<true>(x, scale, lambda),
            ),
            None => self.vector_run(a, out),
        }
    }

    /// λα rounded once, as the float rule's `λ · α` is.
    #[inline(always)]
    fn vector(self, x: f64) -> f64 {
        vector::elu(x, self.lambda * self.alpha, self.lambda)
    }

    #[inline(always)]
    fn double(self, x: f64) -> f64 {
        let neg = double::scaled_expm1(x.min(0.0), double::product(self.lambda, self.alpha));
        if x < 0.0 {
            neg
        } else if x == 0.0 {
            self.lambda * self.alpha * x
        } else {
            self.lambda * x
        }
    }
}

impl Selu {
    /// λα as an f32 pair and λ, where λα splits ([`single::split_param`]) and λ is an f32.
    fn pairs(self) -> Option<((f32, f32), f32)> {
        let lambda = self.lambda as f32;
        (lambda as f64 == self.lambda)
            .then_some(())
            .and(single::split_param(self.lambda * self.alpha))
            .map(|scale| (scale, lambda))
    }
}

/// HardSigmoid-1: `max(0, min(1, α x + β))`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HardSigmoid {
    pub alpha: f64,
    pub beta: f64,
}

impl Unary for HardSigmoid {
    const NAME: &'static str = "HardSigmoid";
    const VERSION: u32 = 1;
    const TYPES: TypeSet = TypeSet::FLOAT;
    const EXACT: bool = false;
    const PARAMS: Arity = Arity::exactly(2);

    fn parse(_: &Attrs) -> Result<Self, Vec<AttrError>> {
        Ok(HardSigmoid {
            alpha: f64::NAN,
            beta: f64::NAN,
        })
    }

    fn with_params(self, p: &[f64]) -> Self {
        match p {
            [alpha, beta, ..] => HardSigmoid {
                alpha: *alpha,
                beta: *beta,
            },
            _ => self,
        }
    }

    fn int<T: Int>(self, _: T) -> Result<T, ElemError> {
        no_int()
    }

    #[inline(always)]
    fn float<F: Float>(self, x: F) -> F {
        // One rounding (the two of `α x + β` cancel badly where the result is near 0).
        let y = F::of_f64(self.alpha).mul_add(x, F::of_f64(self.beta));
        if y > F::ONE {
            F::ONE
        } else if y > F::ZERO || y.is_nan() {
            y
        } else {
            F::ZERO
        }
    }
}
