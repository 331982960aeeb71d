//! Op semantics as tables (OpenVINO `op_reference` style): inputs, attributes, expected output.

// The literals are the values from the semantics reference, written as measured.
#![allow(clippy::excessive_precision)]

use ndarray::{ArrayD, IxDyn};
use ovir::broadcast::AutoBroadcast;
use ovir::half::{bf16, f16};
use ovir::ops::EvalError;
use ovir::ops::binary::Binary;
use ovir::ops::binary::arith::{Divide, Subtract};
use ovir::ops::convert::Convert;
use ovir::{Element, ElementType, Tensor};

fn t<T: Element>(shape: &[usize], v: &[T]) -> Tensor {
    T::wrap(ArrayD::from_shape_vec(IxDyn(shape), v.to_vec()).unwrap())
}

fn v<T: Element>(x: &Tensor) -> Vec<T> {
    T::view(x).unwrap().iter().copied().collect()
}

const NUMPY: AutoBroadcast = AutoBroadcast::Numpy;

fn div(py: bool) -> Binary<Divide> {
    Binary::new(NUMPY, Divide { pythondiv: py })
}

fn sub() -> Binary<Subtract> {
    Binary::new(NUMPY, Subtract)
}

#[test]
fn integer_division_floor_and_trunc() {
    let a = t::<i32>(&[7], &[7, 7, -7, -7, 0, 1, -1]);
    let b = t::<i32>(&[7], &[3, -3, 2, -2, 5, -5, 5]);
    assert_eq!(
        v::<i32>(&div(true).eval_tensors(&a, &b).unwrap()),
        [2, -3, -4, 3, 0, -1, -1]
    );
    assert_eq!(
        v::<i32>(&div(false).eval_tensors(&a, &b).unwrap()),
        [2, -2, -3, 3, 0, 0, 0]
    );
    for (py, want) in [(true, -4i64), (false, -3)] {
        let r = div(py)
            .eval_tensors(&t::<i64>(&[], &[-10]), &t::<i64>(&[], &[3]))
            .unwrap();
        assert_eq!(v::<i64>(&r), [want]);
    }
    // Unsigned: the plain quotient either way.
    for py in [true, false] {
        let r = div(py)
            .eval_tensors(
                &t::<u32>(&[3], &[4_000_000_000, 4_294_967_295, 16_777_217]),
                &t::<u32>(&[3], &[2, 2, 1]),
            )
            .unwrap();
        assert_eq!(v::<u32>(&r), [2_000_000_000, 2_147_483_647, 16_777_217]);
    }
    // Exact beyond 2^53 and 2^24 (OpenVINO's CPU plugin divides through f32).
    let r = div(true)
        .eval_tensors(
            &t::<i64>(&[2], &[9_007_199_254_740_993, i64::MAX]),
            &t::<i64>(&[2], &[1, 1]),
        )
        .unwrap();
    assert_eq!(v::<i64>(&r), [9_007_199_254_740_993, i64::MAX]);
    let r = div(true)
        .eval_tensors(
            &t::<i32>(&[2], &[16_777_217, 2_147_483_647]),
            &t::<i32>(&[2], &[1, 1]),
        )
        .unwrap();
    assert_eq!(v::<i32>(&r), [16_777_217, 2_147_483_647]);
}

#[test]
fn integer_division_errors_name_the_element() {
    let a = t::<i32>(&[2, 2], &[1, 2, 3, 4]);
    let b = t::<i32>(&[2, 2], &[1, 1, 0, 1]);
    assert_eq!(
        div(true).eval_tensors(&a, &b),
        Err(EvalError::DivisionByZero { index: vec![1, 0] })
    );
    let a = t::<i8>(&[3], &[5, -128, -128]);
    let b = t::<i8>(&[1], &[-1]);
    assert_eq!(
        div(false).eval_tensors(&a, &b),
        Err(EvalError::DivisionOverflow { index: vec![1] })
    );
    assert_eq!(
        div(true).eval_tensors(&t::<i64>(&[], &[i64::MIN]), &t::<i64>(&[], &[-1])),
        Err(EvalError::DivisionOverflow { index: vec![] })
    );
    assert_eq!(
        div(true).eval_tensors(&t::<u8>(&[1], &[7]), &t::<u8>(&[1], &[0])),
        Err(EvalError::DivisionByZero { index: vec![0] })
    );
}

#[test]
fn float_division_is_ieee() {
    let a = t::<f32>(&[5], &[123456.789, 10.0, 1.0, -1.0, 0.0]);
    let b = t::<f32>(&[5], &[1.1, 3.0, 0.0, 0.0, 0.0]);
    let r = v::<f32>(&div(true).eval_tensors(&a, &b).unwrap());
    assert_eq!(r[0], 112233.4453125);
    assert_eq!(r[1], 10.0f32 / 3.0);
    assert_eq!(r[2], f32::INFINITY);
    assert_eq!(r[3], f32::NEG_INFINITY);
    assert!(r[4].is_nan());
    let r = v::<f64>(
        &div(false)
            .eval_tensors(
                &t::<f64>(&[2], &[1.0, 1e300]),
                &t::<f64>(&[2], &[3.0, 1e-300]),
            )
            .unwrap(),
    );
    assert_eq!(r, [1.0 / 3.0, f64::INFINITY]);
    // x / -0 is -inf.
    let r = v::<f32>(
        &div(true)
            .eval_tensors(&t::<f32>(&[1], &[1.0]), &t::<f32>(&[1], &[-0.0]))
            .unwrap(),
    );
    assert_eq!(r, [f32::NEG_INFINITY]);
}

#[test]
fn half_precision_rounds_once_to_nearest_even() {
    let r = v::<f16>(
        &div(true)
            .eval_tensors(
                &t::<f16>(&[5], &[1.0, 2.0, 1.0, 0.0, 60000.0].map(f16::from_f32)),
                &t::<f16>(&[5], &[3.0, 3.0, 0.0, 0.0, 0.5].map(f16::from_f32)),
            )
            .unwrap(),
    );
    assert_eq!(r[0].to_bits(), 0x3555); // 0.33325
    assert_eq!(r[1].to_bits(), 0x3955); // 0.6665
    assert!(r[2].is_infinite() && r[3].is_nan() && r[4].is_infinite());
    // bf16: true round-to-nearest-even (1/3 -> 0.333984375), not the reference's quirk.
    let r = v::<bf16>(
        &div(true)
            .eval_tensors(
                &t::<bf16>(&[1], &[bf16::from_f32(1.0)]),
                &t::<bf16>(&[1], &[bf16::from_f32(3.0)]),
            )
            .unwrap(),
    );
    assert_eq!(r[0].to_f32(), 0.333984375);
    // f16 overflow and subnormals.
    let r = v::<f16>(
        &sub()
            .eval_tensors(
                &t::<f16>(&[2], &[f16::MAX, f16::from_bits(0x0002)]),
                &t::<f16>(&[2], &[-f16::MAX, f16::from_bits(0x0001)]),
            )
            .unwrap(),
    );
    assert!(r[0].is_infinite());
    assert_eq!(r[1].to_bits(), 0x0001);
}

#[test]
fn subtraction_wraps() {
    assert_eq!(
        v::<u8>(
            &sub()
                .eval_tensors(
                    &t::<u8>(&[4], &[0, 5, 255, 10]),
                    &t::<u8>(&[4], &[1, 10, 0, 255])
                )
                .unwrap()
        ),
        [255, 251, 255, 11]
    );
    assert_eq!(
        v::<i8>(
            &sub()
                .eval_tensors(
                    &t::<i8>(&[3], &[-128, 127, 0]),
                    &t::<i8>(&[3], &[1, -1, -128])
                )
                .unwrap()
        ),
        [127, -128, -128]
    );
    assert_eq!(
        v::<i32>(
            &sub()
                .eval_tensors(
                    &t::<i32>(&[2], &[i32::MIN, i32::MAX]),
                    &t::<i32>(&[2], &[1, -1])
                )
                .unwrap()
        ),
        [i32::MAX, i32::MIN]
    );
    assert_eq!(
        v::<u64>(
            &sub()
                .eval_tensors(&t::<u64>(&[1], &[0]), &t::<u64>(&[1], &[1]))
                .unwrap()
        ),
        [u64::MAX]
    );
    assert_eq!(
        v::<i16>(
            &sub()
                .eval_tensors(&t::<i16>(&[2], &[-32768, 100]), &t::<i16>(&[2], &[1, 200]))
                .unwrap()
        ),
        [32767, -100]
    );
    let r = v::<f64>(
        &sub()
            .eval_tensors(
                &t::<f64>(&[2], &[0.1, 1e300]),
                &t::<f64>(&[2], &[0.2, -1e300]),
            )
            .unwrap(),
    );
    assert_eq!(r, [0.1 - 0.2, 2e300]);
}

#[test]
fn broadcasting_modes() {
    // The seed example: [8,1,6,1] - [7,1,5] -> [8,7,6,5].
    let a: Vec<f32> = (0..48).map(|x| x as f32).collect();
    let b: Vec<f32> = (0..35).map(|x| x as f32 * 0.5).collect();
    let r = sub()
        .eval_tensors(&t(&[8, 1, 6, 1], &a), &t(&[7, 1, 5], &b))
        .unwrap();
    assert_eq!(r.shape(), [8, 7, 6, 5]);
    let r = v::<f32>(&r);
    for i in 0..8 {
        for j in 0..7 {
            for k in 0..6 {
                for l in 0..5 {
                    assert_eq!(
                        r[((i * 7 + j) * 6 + k) * 5 + l],
                        a[i * 6 + k] - b[j * 5 + l]
                    );
                }
            }
        }
    }
    // pdpd, axis 1: B[3,4] applies at A[:, j, k, :].
    let a: Vec<i32> = (0..120).collect();
    let b: Vec<i32> = (0..12).map(|x| x * 1000).collect();
    let pd = Binary::new(
        AutoBroadcast::Pdpd {
            axis: 1,
            axis_given: true,
        },
        Subtract,
    );
    let r = v::<i32>(
        &pd.eval_tensors(&t(&[2, 3, 4, 5], &a), &t(&[3, 4], &b))
            .unwrap(),
    );
    for i in 0..2 {
        for j in 0..3 {
            for k in 0..4 {
                for l in 0..5 {
                    let x = ((i * 3 + j) * 4 + k) * 5 + l;
                    assert_eq!(r[x], a[x] - b[j * 4 + k]);
                }
            }
        }
    }
    // pdpd trailing 1s of B are dropped: B[4,1] at axis -1 (= 2) applies B[k] at A[:,:,k,:].
    let pd = Binary::new(
        AutoBroadcast::Pdpd {
            axis: -1,
            axis_given: true,
        },
        Subtract,
    );
    let b4: Vec<i32> = vec![1, 2, 3, 4];
    let r = v::<i32>(
        &pd.eval_tensors(&t(&[2, 3, 4, 5], &a), &t(&[4, 1], &b4))
            .unwrap(),
    );
    assert_eq!(r[5], a[5] - 2);
    // none requires equal shapes; zero-size dims broadcast like numpy.
    let none = Binary::new(AutoBroadcast::None, Subtract);
    assert!(matches!(
        none.eval_tensors(&t::<f32>(&[2], &[1.0, 2.0]), &t::<f32>(&[1], &[1.0])),
        Err(EvalError::Shapes { .. })
    ));
    let r = sub()
        .eval_tensors(&t::<f32>(&[1], &[1.0]), &t::<f32>(&[0], &[]))
        .unwrap();
    assert_eq!(r.shape(), [0]);
    // Rank 0 with rank 8.
    let r = sub()
        .eval_tensors(
            &t::<u16>(&[], &[10]),
            &t::<u16>(&[1, 1, 1, 1, 1, 1, 1, 2], &[3, 4]),
        )
        .unwrap();
    assert_eq!(r.shape(), [1, 1, 1, 1, 1, 1, 1, 2]);
    assert_eq!(v::<u16>(&r), [7, 6]);
}

#[test]
fn mismatched_types_are_refused() {
    let e = sub().eval_tensors(&t::<f32>(&[1], &[1.0]), &t::<i32>(&[1], &[1]));
    assert_eq!(e, Err(EvalError::Types(ElementType::F32, ElementType::I32)));
}

fn convert(to: ElementType, x: &Tensor) -> Tensor {
    Convert {
        destination_type: to,
    }
    .eval_tensor(x)
    .unwrap()
}

#[test]
fn conversions() {
    let f = t::<f32>(&[7], &[3.7, -3.7, f32::NAN, 1e10, -1e10, 300.0, -0.0]);
    assert_eq!(
        v::<i32>(&convert(ElementType::I32, &f)),
        [3, -3, 0, i32::MAX, i32::MIN, 300, 0]
    );
    assert_eq!(
        v::<u8>(&convert(ElementType::U8, &f)),
        [3, 0, 0, 255, 0, 255, 0]
    );
    assert_eq!(
        v::<i64>(&convert(ElementType::I64, &f)),
        [3, -3, 0, 10_000_000_000, -10_000_000_000, 300, 0]
    );
    // Integers wrap.
    let i = t::<i32>(&[3], &[-1, 300, i32::MIN]);
    assert_eq!(v::<u8>(&convert(ElementType::U8, &i)), [255, 44, 0]);
    assert_eq!(
        v::<u64>(&convert(ElementType::U64, &i)),
        [u64::MAX, 300, (i32::MIN as i64) as u64]
    );
    assert_eq!(
        v::<i16>(&convert(ElementType::I16, &t::<u64>(&[1], &[u64::MAX]))),
        [-1]
    );
    // f16 decompression is exact; rounding to f16 and bf16 happens once.
    let h = t::<f16>(
        &[3],
        &[
            f16::from_f32(1.5),
            f16::NEG_INFINITY,
            f16::from_bits(0x8000),
        ],
    );
    let r = v::<f32>(&convert(ElementType::F32, &h));
    assert_eq!(r[0], 1.5);
    assert_eq!(r[1], f32::NEG_INFINITY);
    assert!(r[2] == 0.0 && r[2].is_sign_negative());
    // 1 + 2^-11 + 2^-40 is just above the f16 midpoint between 1 and 1 + 2^-10: it rounds up.
    // (Truncating f64 to f32 first, as half's own f64 path does, would round it down.)
    let x = 1.0 + 2f64.powi(-11) + 2f64.powi(-40);
    assert_eq!(
        v::<f16>(&convert(ElementType::F16, &t::<f64>(&[1], &[x])))[0].to_bits(),
        0x3C01
    );
    let y = 1.0 + 2f64.powi(-8) + 2f64.powi(-40);
    assert_eq!(
        v::<bf16>(&convert(ElementType::Bf16, &t::<f64>(&[1], &[y])))[0].to_bits(),
        0x3F81
    );
    // An exact midpoint rounds to even.
    let m = 1.0 + 2f64.powi(-11);
    assert_eq!(
        v::<f16>(&convert(ElementType::F16, &t::<f64>(&[1], &[m])))[0].to_bits(),
        0x3C00
    );
    // Large integers to bf16 round once.
    let big = (1i64 << 40) + (1i64 << 32) + 1; // just above the midpoint of two bf16 values
    assert_eq!(
        v::<bf16>(&convert(ElementType::Bf16, &t::<i64>(&[1], &[big])))[0].to_f64(),
        ((1i64 << 40) + (1i64 << 33)) as f64
    );
    assert_eq!(
        v::<f32>(&convert(ElementType::F32, &t::<i64>(&[1], &[i64::MAX]))),
        [9.223372e18]
    );
    assert_eq!(
        v::<f16>(&convert(ElementType::F16, &t::<i32>(&[1], &[100_000])))[0],
        f16::INFINITY
    );
}

#[test]
fn add_and_multiply_wrap_and_round_once() {
    use ovir::ops::binary::arith::{Add, Multiply};
    let add = Binary::new(NUMPY, Add);
    let mul = Binary::new(NUMPY, Multiply);
    // Integers wrap (OpenVINO's CPU plugin saturates u8/i8; its reference wraps: 250 + 10 = 4).
    let r = add
        .eval_tensors(&t::<u8>(&[2], &[250, 255]), &t::<u8>(&[2], &[10, 1]))
        .unwrap();
    assert_eq!(v::<u8>(&r), [4, 0]);
    let r = mul
        .eval_tensors(&t::<i8>(&[2], &[-128, 100]), &t::<i8>(&[1], &[-1]))
        .unwrap();
    assert_eq!(v::<i8>(&r), [-128, -100]);
    let r = mul
        .eval_tensors(&t::<i64>(&[1], &[i64::MAX]), &t::<i64>(&[1], &[2]))
        .unwrap();
    assert_eq!(v::<i64>(&r), [-2]);
    // f16: computed in f32 and rounded once (65504 is f16's largest; 65520 rounds to inf).
    let r = add
        .eval_tensors(
            &t::<f16>(&[2], &[f16::from_f32(65504.0), f16::from_f32(1.0)]),
            &t::<f16>(&[2], &[f16::from_f32(16.0), f16::from_f32(0.0004883)]),
        )
        .unwrap();
    assert_eq!(v::<f16>(&r)[0], f16::INFINITY);
    assert_eq!(v::<f16>(&r)[1], f16::from_f32(1.0f32 + 0.0004883));
    // bf16: nearest even (1/3 rounds up to 0.333984375; OpenVINO's reference gives 0.33203125).
    let third = bf16::from_f32(1.0 / 3.0);
    assert_eq!(third.to_f32(), 0.333984375);
    let r = mul
        .eval_tensors(
            &t::<bf16>(&[1], &[bf16::from_f32(1.0)]),
            &t::<bf16>(&[1], &[third]),
        )
        .unwrap();
    assert_eq!(v::<bf16>(&r), [third]);
    // IEEE: -0 + -0 is -0, inf * 0 is NaN.
    let r = add
        .eval_tensors(&t::<f32>(&[1], &[-0.0]), &t::<f32>(&[1], &[-0.0]))
        .unwrap();
    assert!(v::<f32>(&r)[0].is_sign_negative());
    let r = mul
        .eval_tensors(&t::<f64>(&[1], &[f64::INFINITY]), &t::<f64>(&[1], &[0.0]))
        .unwrap();
    assert!(v::<f64>(&r)[0].is_nan());
}

#[test]
fn maximum_and_minimum_propagate_nan_and_order_zeros() {
    use ovir::ops::binary::arith::{Maximum, Minimum};
    let max = Binary::new(NUMPY, Maximum);
    let min = Binary::new(NUMPY, Minimum);
    let a = t::<f32>(&[5], &[f32::NAN, 1.0, -0.0, 0.0, -3.0]);
    let b = t::<f32>(&[5], &[1.0, f32::NAN, 0.0, -0.0, f32::NEG_INFINITY]);
    let hi = v::<f32>(&max.eval_tensors(&a, &b).unwrap());
    let lo = v::<f32>(&min.eval_tensors(&a, &b).unwrap());
    assert!(hi[0].is_nan() && hi[1].is_nan() && lo[0].is_nan() && lo[1].is_nan());
    // max(-0, +0) = +0 and min(-0, +0) = -0, whatever the order.
    assert!(hi[2].is_sign_positive() && hi[3].is_sign_positive());
    assert!(lo[2].is_sign_negative() && lo[3].is_sign_negative());
    assert_eq!((hi[4], lo[4]), (-3.0, f32::NEG_INFINITY));
    let r = max
        .eval_tensors(&t::<i8>(&[2], &[-128, 5]), &t::<i8>(&[1], &[-1]))
        .unwrap();
    assert_eq!(v::<i8>(&r), [-1, 5]);
}

#[test]
fn remainders_floored_and_truncated() {
    use ovir::ops::binary::arith::{FloorMod, Mod};
    let fm = Binary::new(NUMPY, FloorMod);
    let md = Binary::new(NUMPY, Mod);
    let a = t::<i32>(&[6], &[7, -7, 7, -7, i32::MIN, 0]);
    let b = t::<i32>(&[6], &[3, 3, -3, -3, -1, -5]);
    assert_eq!(
        v::<i32>(&fm.eval_tensors(&a, &b).unwrap()),
        [1, 2, -2, -1, 0, 0]
    );
    assert_eq!(
        v::<i32>(&md.eval_tensors(&a, &b).unwrap()),
        [1, -1, 1, -1, 0, 0]
    );
    // Integer divisor 0 names the element.
    let zero = t::<u8>(&[2], &[4, 0]);
    let e = fm.eval_tensors(&t::<u8>(&[1], &[9]), &zero).unwrap_err();
    assert!(matches!(e, EvalError::DivisionByZero { index } if index == [1]));
    let e = md.eval_tensors(&t::<u8>(&[1], &[9]), &zero).unwrap_err();
    assert!(matches!(e, EvalError::DivisionByZero { index } if index == [1]));
    // Floats: the divisor's sign (a zero remainder too) and fmod's; divisor 0 gives NaN.
    let a = t::<f64>(&[4], &[7.5, -7.5, -1.0, 3.0]);
    let b = t::<f64>(&[4], &[2.0, 2.0, -1.0, 0.0]);
    let f = v::<f64>(&fm.eval_tensors(&a, &b).unwrap());
    assert_eq!(&f[..2], [1.5, 0.5]);
    assert!(f[2] == 0.0 && f[2].is_sign_negative() && f[3].is_nan());
    let m = v::<f64>(&md.eval_tensors(&a, &b).unwrap());
    assert_eq!(&m[..2], [1.5, -1.5]);
    assert!(m[2] == 0.0 && m[2].is_sign_negative() && m[3].is_nan());
}

#[test]
fn power_of_integers_wraps_and_refuses_negative_exponents() {
    use ovir::ops::binary::arith::{Power, SquaredDifference};
    let pow = Binary::new(NUMPY, Power);
    let r = pow
        .eval_tensors(
            &t::<i32>(&[5], &[2, -3, 0, 7, i32::MIN]),
            &t::<i32>(&[5], &[31, 3, 0, 12, 2]),
        )
        .unwrap();
    assert_eq!(v::<i32>(&r), [i32::MIN, -27, 1, 7i32.wrapping_pow(12), 0]);
    let e = pow
        .eval_tensors(&t::<i64>(&[3], &[2, 2, 2]), &t::<i64>(&[3], &[1, 0, -1]))
        .unwrap_err();
    assert!(matches!(e, EvalError::Undefined { index, .. } if index == [2]));
    // Floats follow C pow: pow(x, 0) = 1 and pow(1, NaN) = 1.
    let r = pow
        .eval_tensors(
            &t::<f32>(&[3], &[f32::NAN, 1.0, 2.0]),
            &t::<f32>(&[3], &[0.0, f32::NAN, 0.5]),
        )
        .unwrap();
    assert_eq!(v::<f32>(&r), [1.0, 1.0, std::f32::consts::SQRT_2]);
    let sq = Binary::new(NUMPY, SquaredDifference);
    let r = sq
        .eval_tensors(&t::<u8>(&[2], &[1, 20]), &t::<u8>(&[2], &[3, 4]))
        .unwrap();
    assert_eq!(v::<u8>(&r), [4, 0]);
}

fn unary<K: ovir::ops::unary::Unary>(k: K, x: &Tensor) -> Result<Tensor, EvalError> {
    ovir::ops::unary::UnaryOp::new(k).eval_tensor(x)
}

#[test]
fn exact_unary_ops_on_integers_and_floats() {
    use ovir::ops::unary::table::*;
    let i = t::<i8>(&[5], &[-128, -3, 0, 5, 127]);
    assert_eq!(v::<i8>(&unary(Abs, &i).unwrap()), [-128, 3, 0, 5, 127]);
    assert_eq!(
        v::<i8>(&unary(Negative, &i).unwrap()),
        [-128, 3, 0, -5, -127]
    );
    assert_eq!(v::<i8>(&unary(Sign, &i).unwrap()), [-1, -1, 0, 1, 1]);
    assert_eq!(v::<i8>(&unary(Relu, &i).unwrap()), [0, 0, 0, 5, 127]);
    assert_eq!(v::<i8>(&unary(Floor, &i).unwrap()), v::<i8>(&i));
    // Negative-1 takes signed types only.
    assert!(unary(Negative, &t::<u8>(&[2], &[0, 3])).is_err());
    // Elementary functions of integers: rounded to nearest, halves away from zero; a result
    // that is not a number or does not fit is an error.
    let x = t::<i32>(&[4], &[0, 1, 2, 100]);
    assert_eq!(v::<i32>(&unary(Tanh, &x).unwrap()), [0, 1, 1, 1]);
    assert_eq!(
        v::<i32>(&unary(Log, &t::<i32>(&[2], &[1, 100])).unwrap()),
        [0, 5]
    );
    let e = unary(Log, &x).unwrap_err();
    assert!(matches!(e, EvalError::Undefined { index, .. } if index == [0]));
    let e = unary(Cosh, &t::<i8>(&[2], &[1, 10])).unwrap_err();
    assert!(matches!(e, EvalError::Undefined { index, .. } if index == [1]));
    assert_eq!(
        v::<i8>(&unary(Atanh, &t::<i8>(&[3], &[-3, 0, 2])).unwrap()),
        [-128, 0, 127]
    );
    // Sqrt of integers: rounded half up; of a negative one: an error naming the element.
    let s = t::<i32>(&[6], &[0, 2, 3, 6, 12, i32::MAX]);
    assert_eq!(v::<i32>(&unary(Sqrt, &s).unwrap()), [0, 1, 2, 2, 3, 46341]);
    let e = unary(Sqrt, &t::<i64>(&[3], &[4, 9, -1])).unwrap_err();
    assert!(matches!(e, EvalError::Undefined { index, .. } if index == [2]));
    // Floats: NaN stays NaN, signed zeros kept by Sign, Relu(-0) = +0.
    let f = t::<f32>(&[4], &[f32::NAN, -0.0, -2.5, 2.5]);
    let sg = v::<f32>(&unary(Sign, &f).unwrap());
    assert!(sg[0].is_nan() && sg[1] == 0.0 && sg[1].is_sign_negative());
    assert_eq!(&sg[2..], [-1.0, 1.0]);
    let r = v::<f32>(&unary(Relu, &f).unwrap());
    assert!(r[0].is_nan() && r[1] == 0.0 && r[1].is_sign_positive());
    let even = v::<f32>(&unary(Round { half_to_even: true }, &f).unwrap());
    let away = v::<f32>(
        &unary(
            Round {
                half_to_even: false,
            },
            &f,
        )
        .unwrap(),
    );
    assert_eq!(&even[2..], [-2.0, 2.0]);
    assert_eq!(&away[2..], [-3.0, 3.0]);
    // Clamp on integers: ⌈min⌉ and ⌊max⌋.
    let c = Clamp {
        min: -1.5,
        max: 2.5,
    };
    let r = unary(c, &t::<i32>(&[4], &[-5, -1, 2, 9])).unwrap();
    assert_eq!(v::<i32>(&r), [-1, -1, 2, 2]);
    // A float-only op refuses integers.
    assert!(unary(Exp, &i).is_err());
}

#[test]
fn transcendental_ops_round_the_exact_value_once() {
    use ovir::ops::unary::table::*;
    let xs = [-20.0f32, -5.0, -1e-6, 0.0, 1e-6, 0.5, 3.0, 30.0];
    let x = t::<f32>(&[xs.len()], &xs);
    let check = |name: &str, got: Tensor, want: &dyn Fn(f64) -> f64| {
        for (g, &x) in v::<f32>(&got).iter().zip(&xs) {
            let w = want(x as f64) as f32;
            assert!(
                g.to_bits() == w.to_bits() || (g.is_nan() && w.is_nan()),
                "{name}({x}) = {g}, want {w}"
            );
        }
    };
    check("exp", unary(Exp, &x).unwrap(), &f64::exp);
    check("tanh", unary(Tanh, &x).unwrap(), &f64::tanh);
    check("sigmoid", unary(Sigmoid, &x).unwrap(), &|x| {
        1.0 / (1.0 + (-x).exp())
    });
    // erf(1e-6) = 1.1284e-6 (OpenVINO's CPU plugin gives 1.192e-6).
    let e = v::<f32>(&unary(Erf, &x).unwrap());
    assert_eq!(e[2], -1.128_379_2e-6);
    // Gelu(−5) = −1.4333e-6 (the plugin gives −1.19e-6).
    let g = v::<f32>(&unary(Gelu, &x).unwrap());
    assert!((g[1] - -1.433_3e-6).abs() < 1e-10, "{}", g[1]);
    let sp = v::<f32>(&unary(SoftPlus, &x).unwrap());
    assert_eq!(sp[7], 30.0);
    assert_eq!(sp[0], 2.061_153_6e-9);
    // acosh below 1 is NaN (the libm crate's own acosh gives finite values in (-2^26, -2]).
    let a = v::<f32>(&unary(Acosh, &t::<f32>(&[3], &[-6540.0, 0.5, 1.0])).unwrap());
    assert!(a[0].is_nan() && a[1].is_nan() && a[2] == 0.0);
    let a = v::<f64>(&unary(Acosh, &t::<f64>(&[1], &[-3.0])).unwrap());
    assert!(a[0].is_nan());
    // f16: computed in f32, rounded once.
    let h = t::<f16>(&[1], &[f16::from_f32(1.0)]);
    assert_eq!(
        v::<f16>(&unary(Exp, &h).unwrap()),
        [f16::from_f32(std::f32::consts::E)]
    );
}

#[test]
fn comparisons_are_ieee_and_give_booleans() {
    use ovir::ops::logic;
    let pw = |def: &'static ovir::ops::OpDef| move |a: &Tensor, b: &Tensor| op2(def, a, b);
    let a = t::<f32>(&[4], &[f32::NAN, -0.0, 1.0, 2.0]);
    let b = t::<f32>(&[4], &[f32::NAN, 0.0, 2.0, 1.0]);
    let eq = pw(&logic::EQUAL)(&a, &b).unwrap();
    assert_eq!(eq.element_type(), ElementType::Boolean);
    assert_eq!(v::<bool>(&eq), [false, true, false, false]);
    let ne = pw(&logic::NOT_EQUAL)(&a, &b).unwrap();
    assert_eq!(v::<bool>(&ne), [true, false, true, true]);
    let lt = pw(&logic::LESS)(&a, &b).unwrap();
    assert_eq!(v::<bool>(&lt), [false, false, true, false]);
    let ge = pw(&logic::GREATER_EQUAL)(&a, &b).unwrap();
    assert_eq!(v::<bool>(&ge), [false, true, false, true]);
    // f16 too: NaN unordered, zeros equal.
    let h = |x: &[f32]| {
        t::<f16>(
            &[x.len()],
            &x.iter().map(|&v| f16::from_f32(v)).collect::<Vec<_>>(),
        )
    };
    let eq = pw(&logic::EQUAL)(&h(&[f32::NAN, -0.0]), &h(&[f32::NAN, 0.0])).unwrap();
    assert_eq!(v::<bool>(&eq), [false, true]);
    // Booleans: false < true; logical ops.
    let p = t::<bool>(&[4], &[false, false, true, true]);
    let q = t::<bool>(&[4], &[false, true, false, true]);
    assert_eq!(
        v::<bool>(&pw(&logic::LESS)(&p, &q).unwrap()),
        [false, true, false, false]
    );
    assert_eq!(
        v::<bool>(&pw(&logic::LOGICAL_XOR)(&p, &q).unwrap()),
        [false, true, true, false]
    );
    assert!(pw(&logic::LOGICAL_AND)(&a, &b).is_err());
    // Shifts: out-of-width amounts shift every bit out; a negative amount is an error.
    let x = t::<i8>(&[4], &[-128, -1, 5, 64]);
    let s = t::<i8>(&[4], &[1, 9, 2, 1]);
    assert_eq!(
        v::<i8>(&pw(&logic::BITWISE_LEFT_SHIFT)(&x, &s).unwrap()),
        [0, 0, 20, -128]
    );
    assert_eq!(
        v::<i8>(&pw(&logic::BITWISE_RIGHT_SHIFT)(&x, &s).unwrap()),
        [-64, -1, 1, 32]
    );
    let e = pw(&logic::BITWISE_LEFT_SHIFT)(&x, &t::<i8>(&[1], &[-1])).unwrap_err();
    assert!(matches!(e, EvalError::Undefined { index, .. } if index == [0]));
    let m = t::<u8>(&[2], &[0b1100, 0xff]);
    let n = t::<u8>(&[1], &[0b1010]);
    assert_eq!(
        v::<u8>(&pw(&logic::BITWISE_XOR)(&m, &n).unwrap()),
        [0b0110, 0xf5]
    );
}

/// Runs a registered op with no attributes on tensors, as execution does.
fn op2(def: &ovir::ops::OpDef, a: &Tensor, b: &Tensor) -> Result<Tensor, EvalError> {
    let op = (def.parse)(&ovir::ops::Attrs::new(None)).unwrap();
    let inputs = [
        ovir::tensor::Value::Tensor(std::sync::Arc::new(a.clone())),
        ovir::tensor::Value::Tensor(std::sync::Arc::new(b.clone())),
    ];
    let cx = ovir::ops::EvalCx::new(
        &inputs,
        ovir::memory::Budget {
            limit: 1 << 30,
            in_use: 0,
        },
    );
    op.eval(&cx).map(|mut v| v.remove(0))
}
