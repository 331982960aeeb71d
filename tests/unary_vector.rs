//! The vectorised f32 path of the transcendental rows gives exactly the bits of the scalar
//! rule on every input tried: a spread of a million f32 bit patterns, every special value, and
//! values next to each row's thresholds. The scalar rule is the row's single-precision form
//! evaluated one element at a time (Exp, Sigmoid, Swish, Tanh, Erf, both Gelu forms, SoftPlus,
//! Mish, Elu, Selu: the vectorised loop runs their lane forms and takes the full form for the
//! elements those do not cover) or, for Elu and Selu with parameters that do not split into
//! f32 pairs, their float rule in f64, rounded once (which their f64 vector form must
//! reproduce). `cargo bench --bench accuracy -- --exhaustive` checks all 2^32 inputs against
//! the exact results.

use ndarray::{ArrayD, IxDyn};
use ovir::Element;
use ovir::ops::unary::own::{Elu, Gelu, Gelu7, Selu, Swish};
use ovir::ops::unary::table::{Erf, Exp, Mish, Sigmoid, SoftPlus, Tanh};
use ovir::ops::unary::{Unary, UnaryOp};

/// Inputs: every 4093rd bit pattern, the specials, and dense runs around the points where
/// the forms switch regions or clamp.
fn inputs() -> Vec<f32> {
    let mut xs: Vec<f32> = (0..=u32::MAX / 4093)
        .map(|i| f32::from_bits(i * 4093))
        .collect();
    let specials = [
        0.0,
        -0.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        -f32::NAN,
        f32::MIN_POSITIVE,
        -f32::MIN_POSITIVE,
        f32::from_bits(1),
        f32::from_bits(0x8000_0001),
        f32::MAX,
        f32::MIN,
    ];
    xs.extend(specials);
    for edge in [
        1.0f32,
        std::f32::consts::SQRT_2,
        6.0,
        15.5,
        20.0,
        88.72,
        -103.97,
        -110.0,
        -200.0,
        -87.3,
        17.0,
        1e5,
        708.0,
        700.0,
        3.0,
        0.5,
        10.0,
        0.875,
        3.92,
        4.0,
        // Erf's scaled range ends at 2^-60.
        8.673_617e-19,
        // The lane forms' range (|x| ≤ 87, Swish's result from 2^-100) and Tanh's clamp.
        87.0,
        7.888_609e-31,
        9.5,
        9.02,
        // Erf's clamp and its intervals' ends (0.255 wide).
        3.95,
        0.1275,
        1.4025,
        // Gelu: its clamp (15), lowest input (−13), where x Φ(−x) leaves x (12), the
        // intervals' ends (eighth octaves of |x| + 1) and where x/2 becomes subnormal.
        1.5,
        12.0,
        13.0,
        14.5,
        15.0,
        0.125,
        0.25,
        3.0,
        0.75,
        1.25,
        1.75,
        2.5,
        10.0,
        2.350_989e-38,
        // SoftPlus's lane form ends (16, −80), Mish's (9.5, −65); then the far ends of the
        // exponential's range.
        16.0,
        80.0,
        9.5,
        65.0,
        700.5,
        745.0,
        103.0,
    ] {
        for s in [edge, -edge] {
            let b = s.to_bits();
            xs.extend((b.saturating_sub(300)..b.saturating_add(300)).map(f32::from_bits));
        }
    }
    xs
}

/// The single-precision form on one element, out of line (so that it is compiled as scalar
/// code, not in the vectorised loop).
#[inline(never)]
fn scalar<K: Unary>(k: K, x: f32) -> f32 {
    k.single(std::hint::black_box(x))
}

/// The row's f32 rule on one element: its single-precision form, or the f64 rule rounded.
fn rule<K: Unary>(k: K, x: f32) -> f32 {
    if K::SINGLE {
        scalar(k, x)
    } else {
        k.float(x as f64) as f32
    }
}

fn check<K: Unary>(k: K) {
    let xs = inputs();
    let n = xs.len();
    let t = f32::wrap(ArrayD::from_shape_vec(IxDyn(&[n]), xs).unwrap());
    let out = UnaryOp::new(k).eval_tensor(&t).unwrap();
    let (xs, got) = (t.view::<f32>().unwrap(), out.view::<f32>().unwrap());
    let mut bad = 0;
    for (&x, &y) in xs.iter().zip(got.iter()) {
        let want = rule(k, x);
        let same = want.to_bits() == y.to_bits() || (want.is_nan() && y.is_nan());
        if !same {
            if bad < 5 {
                eprintln!("{k:?}({x:e} = {:#010x}): {y:e}, want {want:e}", x.to_bits());
            }
            bad += 1;
        }
    }
    assert_eq!(
        bad, 0,
        "{k:?}: {bad} of {n} results differ from the scalar rule"
    );
}

#[test]
fn exp() {
    check(Exp);
}

#[test]
fn tanh() {
    check(Tanh);
}

#[test]
fn erf() {
    check(Erf);
}

#[test]
fn sigmoid() {
    check(Sigmoid);
}

#[test]
fn swish() {
    for beta in [1.0, 0.5, -1.0, 0.0, 1.702, 1e30, 1e-3, f64::NAN] {
        check(Swish { beta });
    }
}

#[test]
fn gelu() {
    check(Gelu);
    check(Gelu7 { tanh: false });
    check(Gelu7 { tanh: true });
}

/// SoftPlus, Mish, Elu and Selu through their single-precision form, or (Elu, Selu) their
/// f64 vector form where a parameter does not split into an f32 pair (0, ±∞, NaN, 1e300).
#[test]
fn softplus_mish_elu_selu() {
    check(SoftPlus);
    check(Mish);
    for alpha in [
        1.0,
        0.3,
        2.5,
        0.0,
        -1.0,
        0.1,
        1e300,
        f64::INFINITY,
        f64::NAN,
    ] {
        check(Elu { alpha });
    }
    for (alpha, lambda) in [
        (1.673_263_242_354_377_3, 1.050_700_987_355_480_5),
        (1.673_263_192_176_818_8, 1.050_701_022_148_132_3),
        (2.0, 0.5),
        (1e200, 1e200),
        (-1.0, 3.0),
    ] {
        check(Selu { alpha, lambda });
    }
}

/// The repeated-value path (a broadcast scalar) and a block boundary agree with the rest.
#[test]
fn repeated_and_unaligned() {
    let x = 0.3f32;
    for n in [1, 255, 256, 257, 1000] {
        let t = f32::wrap(ArrayD::from_elem(IxDyn(&[n]), x));
        let out = UnaryOp::new(Erf).eval_tensor(&t).unwrap();
        let want = rule(Erf, x);
        assert!(out.view::<f32>().unwrap().iter().all(|&y| y == want));
    }
}

/// The error of `got` in ulps of f32 at the reference (the spacing at the largest finite f32
/// beyond it).
fn ulps(got: f32, exact: f64) -> f64 {
    let near = (exact as f32).abs().min(f32::MAX);
    let ulp = if near == f32::MAX {
        near - f32::from_bits(near.to_bits() - 1)
    } else {
        f32::from_bits(near.to_bits() + 1) - near
    };
    (got as f64 - exact).abs() / ulp as f64
}

/// The single-precision forms are within 1 ulp of the f64 rule (itself within about 2^-28 ulp
/// of the exact value) on the same inputs, Swish with every β tried (β as an f32, which f32
/// data gives it).
#[test]
fn single_forms_within_an_ulp() {
    fn worst<K: Unary>(k: K) -> (f64, f32) {
        let mut w = (0.0, 0.0);
        for x in inputs() {
            let (got, want) = (scalar(k, x), k.float(x as f64));
            if want.is_nan() || got.is_nan() {
                assert!(
                    want.is_nan() && got.is_nan(),
                    "{k:?}({x:e}): {got:e}, want {want:e}"
                );
                continue;
            }
            if want.is_infinite() || got.is_infinite() {
                assert_eq!(got, want as f32, "{k:?}({x:e})");
                continue;
            }
            if want == 0.0 {
                assert_eq!(
                    got.is_sign_negative(),
                    want.is_sign_negative(),
                    "{k:?}({x:e}): {got:e}, want {want:e}"
                );
            }
            let e = ulps(got, want);
            if e > w.0 {
                w = (e, x);
            }
        }
        w
    }
    let mut rows = vec![
        (format!("{:?}", Exp), worst(Exp)),
        (format!("{:?}", Sigmoid), worst(Sigmoid)),
        (format!("{:?}", Tanh), worst(Tanh)),
        (format!("{:?}", Erf), worst(Erf)),
        (format!("{:?}", Gelu), worst(Gelu)),
        (format!("{:?}", SoftPlus), worst(SoftPlus)),
        (format!("{:?}", Mish), worst(Mish)),
        (
            format!("{:?}", Gelu7 { tanh: true }),
            worst(Gelu7 { tanh: true }),
        ),
        (
            format!("{:?}", Elu { alpha: 0.1 }),
            worst(Elu { alpha: 0.1 }),
        ),
    ];
    for beta in [1.0f32, 0.5, -1.0, 0.0, 1.702, 1e30, 1e-3, -7.5] {
        let k = Swish { beta: beta as f64 };
        rows.push((format!("{k:?}"), worst(k)));
    }
    for (name, (e, x)) in rows {
        assert!(e <= 1.0, "{name}: {e} ulps at {x:e}");
    }
}

/// f16 and bf16 data take the row's f32 rule on the widened value, rounded once: every one
/// of the 2^16 bit patterns of each, through the kernel (widened by blocks, the row's
/// vectorised f32 loop, rounded back) against the rule one element at a time.
fn check_narrow<K: Unary>(k: K) {
    use ovir::half::{bf16, f16};
    let hs: Vec<f16> = (0..=u16::MAX).map(f16::from_bits).collect();
    let bs: Vec<bf16> = (0..=u16::MAX).map(bf16::from_bits).collect();
    let n = hs.len();
    let th = f16::wrap(ArrayD::from_shape_vec(IxDyn(&[n]), hs.clone()).unwrap());
    let tb = bf16::wrap(ArrayD::from_shape_vec(IxDyn(&[n]), bs.clone()).unwrap());
    let op = UnaryOp::new(k);
    let (oh, ob) = (op.eval_tensor(&th).unwrap(), op.eval_tensor(&tb).unwrap());
    let (gh, gb) = (oh.view::<f16>().unwrap(), ob.view::<bf16>().unwrap());
    let mut bad = 0;
    for ((&x, &y), (&u, &v)) in hs.iter().zip(gh.iter()).zip(bs.iter().zip(gb.iter())) {
        let (wh, wb) = (
            f16::from_f32(rule(k, x.to_f32())),
            bf16::from_f32(rule(k, u.to_f32())),
        );
        let same_h = wh.to_bits() == y.to_bits() || (wh.is_nan() && y.is_nan());
        let same_b = wb.to_bits() == v.to_bits() || (wb.is_nan() && v.is_nan());
        if !(same_h && same_b) {
            if bad < 5 {
                eprintln!("{k:?}: f16 {x} -> {y}, want {wh}; bf16 {u} -> {v}, want {wb}");
            }
            bad += 1;
        }
    }
    assert_eq!(
        bad, 0,
        "{k:?}: {bad} narrow results differ from the f32 rule"
    );
}

#[test]
fn narrow_types() {
    check_narrow(Exp);
    check_narrow(Tanh);
    check_narrow(Erf);
    check_narrow(Sigmoid);
    check_narrow(SoftPlus);
    check_narrow(Mish);
    check_narrow(Gelu);
    check_narrow(Gelu7 { tanh: true });
    check_narrow(Swish { beta: 1.0 });
    check_narrow(Elu { alpha: 0.3 });
}
