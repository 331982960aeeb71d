//! The accuracy of ovir's f32 elementwise functions, in units in the last place (ulps) of the
//! exact result.
//!
//! ```text
//! cargo bench --bench accuracy                        # every function, 2^24 inputs each
//! cargo bench --bench accuracy -- --exhaustive exp    # all 2^32 f32 bit patterns
//! cargo bench --bench accuracy -- --stride 4096       # fewer inputs (CI)
//! ```
//!
//! The inputs are f32 bit patterns: every one (`--exhaustive`), or every `stride`-th (default
//! 256, so 2^24 values spread over every exponent and sign), NaNs included. ovir computes them
//! through its kernels (`UnaryOp::eval_tensor`, in blocks of 2^20). The reference is the
//! function in f64 from the system's C library (glibc, called directly: an implementation
//! independent of the `libm` crate ovir uses), in formulas that lose no digits (erfc where
//! `1 + erf` cancels, `log1p`, `expm1`); its error, a few f64 ulps, is about 2^-28 of an f32
//! ulp. The error of a result is `|ovir − reference| / ulp(reference)`, where `ulp` is the
//! spacing of f32 values at the reference (at the largest finite f32 for a reference beyond
//! it). A correctly rounded result is within 0.5 ulp; the bound ovir promises is 1.
//!
//! Output: one row per function (inputs, the largest error, how many results are not the
//! reference rounded to nearest, NaN mismatches, seconds), and exit code 1 if any function
//! exceeds 1 ulp or gives NaN where the reference does not (or the opposite).

use std::time::Instant;

use ndarray::{ArrayD, IxDyn};
use ovir::ops::unary::table::*;
use ovir::ops::unary::{Unary, UnaryOp};
use ovir::{Element, Tensor};
use rayon::prelude::*;

mod c {
    unsafe extern "C" {
        pub safe fn exp(x: f64) -> f64;
        pub safe fn expm1(x: f64) -> f64;
        pub safe fn log(x: f64) -> f64;
        pub safe fn log1p(x: f64) -> f64;
        pub safe fn sin(x: f64) -> f64;
        pub safe fn cos(x: f64) -> f64;
        pub safe fn tan(x: f64) -> f64;
        pub safe fn asin(x: f64) -> f64;
        pub safe fn acos(x: f64) -> f64;
        pub safe fn atan(x: f64) -> f64;
        pub safe fn sinh(x: f64) -> f64;
        pub safe fn cosh(x: f64) -> f64;
        pub safe fn tanh(x: f64) -> f64;
        pub safe fn asinh(x: f64) -> f64;
        pub safe fn acosh(x: f64) -> f64;
        pub safe fn atanh(x: f64) -> f64;
        pub safe fn erf(x: f64) -> f64;
        pub safe fn erfc(x: f64) -> f64;
        pub safe fn sqrt(x: f64) -> f64;
    }
}

/// Selu's constants (those of its paper) as f32 models carry them (ONNX's defaults).
const SELU_ALPHA: f64 = 1.673_263_192_176_818_8;
const SELU_LAMBDA: f64 = 1.050_701_022_148_132_3;

fn selu(x: f64) -> f64 {
    if x > 0.0 || x.is_nan() {
        SELU_LAMBDA * x
    } else {
        SELU_LAMBDA * SELU_ALPHA * c::expm1(x)
    }
}

fn sigmoid(x: f64) -> f64 {
    if x < 0.0 {
        let e = c::exp(x);
        e / (1.0 + e)
    } else {
        1.0 / (1.0 + c::exp(-x))
    }
}

fn softplus(x: f64) -> f64 {
    x.max(0.0) + c::log1p(c::exp(-x.abs()))
}

/// `x · g(x)` with the limit −0 at −∞ (where g vanishes).
fn times(x: f64, g: f64) -> f64 {
    if g == 0.0 { 0.0f64.copysign(x) } else { x * g }
}

fn hsigmoid(x: f64) -> f64 {
    (x + 3.0).clamp(0.0, 6.0) / 6.0
}

fn gelu_tanh(x: f64) -> f64 {
    // For f32 inputs the cubic and its sum are exact enough in f64 (|x| < 2^128: x³ has 72
    // bits, rounded once; u's error is far below an f32 ulp of the result).
    let u = (2.0 / std::f64::consts::PI).sqrt() * (x + 0.044715 * x * x * x);
    let d = 1.0 + c::exp(-2.0 * u);
    if d.is_infinite() {
        0.0f64.copysign(x)
    } else {
        x / d
    }
}

/// A function under test: its name, ovir's kernel over a tensor, and the reference.
struct Fun {
    name: &'static str,
    ovir: fn(&Tensor) -> Tensor,
    reference: fn(f64) -> f64,
}

fn run<K: Unary>(k: K, t: &Tensor) -> Tensor {
    UnaryOp::new(k)
        .eval_tensor(t)
        .expect("a float kernel cannot fail")
}

macro_rules! funs {
    ($($name:literal: $op:expr, |$x:ident| $reference:expr;)*) => {
        vec![$(Fun {
            name: $name,
            ovir: |t| run($op, t),
            reference: |$x| $reference,
        },)*]
    };
}

fn functions() -> Vec<Fun> {
    funs! {
        "exp": Exp, |x| c::exp(x);
        "log": Log, |x| c::log(x);
        "sin": Sin, |x| c::sin(x);
        "cos": Cos, |x| c::cos(x);
        "tan": Tan, |x| c::tan(x);
        "asin": Asin, |x| c::asin(x);
        "acos": Acos, |x| c::acos(x);
        "atan": Atan, |x| c::atan(x);
        "sinh": Sinh, |x| c::sinh(x);
        "cosh": Cosh, |x| c::cosh(x);
        "tanh": Tanh, |x| c::tanh(x);
        "asinh": Asinh, |x| c::asinh(x);
        "acosh": Acosh, |x| c::acosh(x);
        "atanh": Atanh, |x| c::atanh(x);
        "erf": Erf, |x| c::erf(x);
        "sqrt": Sqrt, |x| c::sqrt(x);
        "sigmoid": Sigmoid, |x| sigmoid(x);
        "hsigmoid": HSigmoid, |x| hsigmoid(x);
        "hswish": HSwish, |x| times(x, hsigmoid(x));
        "softplus": SoftPlus, |x| softplus(x);
        "softsign": SoftSign, |x| x / (1.0 + x.abs());
        "mish": Mish, |x| times(x, c::tanh(softplus(x)));
        "swish": Swish { beta: 1.0 }, |x| times(x, sigmoid(x));
        "elu": Elu { alpha: 1.0 }, |x| if x > 0.0 || x.is_nan() { x } else { c::expm1(x) };
        "elu_0.1": Elu { alpha: 0.1 }, |x| if x > 0.0 || x.is_nan() { x } else { 0.1 * c::expm1(x) };
        "selu": Selu { alpha: SELU_ALPHA, lambda: SELU_LAMBDA }, |x| selu(x);
        "gelu_erf": Gelu, |x| times(0.5 * x, c::erfc(-x * std::f64::consts::FRAC_1_SQRT_2));
        "gelu_tanh": Gelu7 { tanh: true }, |x| if x.is_nan() { x } else { gelu_tanh(x) };
    }
}

/// The f32 ulp at `r` (a finite f64 reference), as an f64.
fn ulp(r: f64) -> f64 {
    let a = r.abs().min(f32::MAX as f64);
    if a < f32::MIN_POSITIVE as f64 {
        return 2f64.powi(-149);
    }
    let e = a.log2().floor() as i32;
    2f64.powi(e - 23)
}

#[derive(Default, Clone, Copy)]
struct Stats {
    inputs: u64,
    max_ulps: f64,
    worst_input: f32,
    not_nearest: u64,
    nan_mismatch: u64,
}

impl Stats {
    fn merge(mut self, o: Stats) -> Stats {
        if o.max_ulps > self.max_ulps {
            self.max_ulps = o.max_ulps;
            self.worst_input = o.worst_input;
        }
        self.inputs += o.inputs;
        self.not_nearest += o.not_nearest;
        self.nan_mismatch += o.nan_mismatch;
        self
    }
}

fn measure(f: &Fun, patterns: &[u32]) -> Stats {
    let xs: Vec<f32> = patterns.iter().map(|&b| f32::from_bits(b)).collect();
    let n = xs.len();
    let t = f32::wrap(ArrayD::from_shape_vec(IxDyn(&[n]), xs).expect("a 1-D shape"));
    let out = (f.ovir)(&t);
    let xs = t.view::<f32>().expect("an f32 input");
    let got = out.view::<f32>().expect("an f32 output");
    let mut s = Stats::default();
    for (&x, &y) in xs.iter().zip(got.iter()) {
        s.inputs += 1;
        let r = (f.reference)(x as f64);
        if r.is_nan() || y.is_nan() {
            if r.is_nan() != y.is_nan() {
                s.nan_mismatch += 1;
            }
            continue;
        }
        let nearest = r as f32;
        if nearest.to_bits() != y.to_bits() && !(nearest == 0.0 && y == 0.0) {
            s.not_nearest += 1;
        }
        let err = if r.is_infinite() || (y.is_infinite() && nearest.is_infinite()) {
            if nearest == y { 0.0 } else { f64::INFINITY }
        } else {
            ((y as f64) - r).abs() / ulp(r)
        };
        if err > s.max_ulps {
            s.max_ulps = err;
            s.worst_input = x;
        }
    }
    s
}

fn main() {
    let mut stride: u64 = 256;
    let mut names: Vec<String> = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--exhaustive" => stride = 1,
            "--stride" => {
                stride = args
                    .next()
                    .and_then(|s| s.parse().ok())
                    .filter(|&s| s >= 1)
                    .unwrap_or_else(|| {
                        eprintln!("--stride takes a positive integer");
                        std::process::exit(2)
                    })
            }
            "--bench" => {}
            name if !name.starts_with('-') => names.push(name.to_owned()),
            other => {
                eprintln!("unknown option {other}");
                std::process::exit(2);
            }
        }
    }
    let all = functions();
    let chosen: Vec<&Fun> = all
        .iter()
        .filter(|f| names.is_empty() || names.iter().any(|n| n == f.name))
        .collect();
    if chosen.is_empty() {
        eprintln!(
            "no such function; the functions: {}",
            all.iter().map(|f| f.name).collect::<Vec<_>>().join(", ")
        );
        std::process::exit(2);
    }
    println!(
        "inputs: every {}f32 bit pattern ({} values), reference: glibc in f64",
        if stride == 1 {
            String::new()
        } else {
            format!("{stride}th ")
        },
        (1u64 << 32).div_ceil(stride)
    );
    println!(
        "{:<10} {:>12} {:>10} {:>14} {:>13} {:>9}  worst input",
        "function", "inputs", "max ulps", "not nearest", "NaN mismatch", "seconds"
    );
    let mut bad = false;
    const BLOCK: u64 = 1 << 20;
    for f in chosen {
        let start = Instant::now();
        let count = (1u64 << 32).div_ceil(stride);
        let s = (0..count.div_ceil(BLOCK))
            .into_par_iter()
            .map(|b| {
                let lo = b * BLOCK;
                let hi = ((b + 1) * BLOCK).min(count);
                let patterns: Vec<u32> = (lo..hi).map(|i| (i * stride) as u32).collect();
                measure(f, &patterns)
            })
            .reduce(Stats::default, Stats::merge);
        bad |= s.max_ulps > 1.0 || s.nan_mismatch > 0;
        println!(
            "{:<10} {:>12} {:>10.3} {:>14} {:>13} {:>9.1}  {:e}",
            f.name,
            s.inputs,
            s.max_ulps,
            s.not_nearest,
            s.nan_mismatch,
            start.elapsed().as_secs_f64(),
            s.worst_input
        );
    }
    if bad {
        eprintln!("a function exceeds 1 ulp or disagrees on NaN");
        std::process::exit(1);
    }
}
