//! The fast kernels (coalesced broadcast runs, vector loops, f16/bf16 through f32 blocks,
//! integer division through f64, parallel chunks) agree bit for bit with the element-by-element
//! reference: `broadcast::binary_map` applying each op's checked scalar function.

use ndarray::{ArrayD, IxDyn};
use ovir::broadcast::{AutoBroadcast, BinaryError, binary_map};
use ovir::half::{bf16, f16};
use ovir::ops::EvalError;
use ovir::ops::binary::arith::{Add, Divide, Multiply, Subtract};
use ovir::ops::binary::{ArithElem, Binary};
use ovir::{Element, Tensor};
use proptest::prelude::*;

/// Bits of any element, for exact comparison (any NaN equals any NaN).
trait Bits: Element {
    fn key(self) -> u64;
}
macro_rules! int_bits { ($($t:ty)*) => {$( impl Bits for $t { fn key(self) -> u64 { self as u64 } } )*}; }
int_bits!(i8 i16 i32 i64 u8 u16 u32 u64);
impl Bits for f32 {
    fn key(self) -> u64 {
        if self.is_nan() {
            u64::MAX
        } else {
            self.to_bits() as u64
        }
    }
}
impl Bits for f64 {
    fn key(self) -> u64 {
        if self.is_nan() {
            u64::MAX
        } else {
            self.to_bits()
        }
    }
}
impl Bits for f16 {
    fn key(self) -> u64 {
        if self.is_nan() {
            u64::MAX
        } else {
            self.to_bits() as u64
        }
    }
}
impl Bits for bf16 {
    fn key(self) -> u64 {
        if self.is_nan() {
            u64::MAX
        } else {
            self.to_bits() as u64
        }
    }
}

/// Values from raw bits: every pattern, so specials, MIN, 0 and -1 all occur.
trait FromBits: Bits {
    fn from_u64(x: u64) -> Self;
}
macro_rules! from_bits_int { ($($t:ty)*) => {$( impl FromBits for $t { fn from_u64(x: u64) -> Self { x as $t } } )*}; }
from_bits_int!(i8 i16 i32 i64 u8 u16 u32 u64);
impl FromBits for f32 {
    fn from_u64(x: u64) -> Self {
        f32::from_bits(x as u32)
    }
}
impl FromBits for f64 {
    fn from_u64(x: u64) -> Self {
        f64::from_bits(x)
    }
}
impl FromBits for f16 {
    fn from_u64(x: u64) -> Self {
        f16::from_bits(x as u16)
    }
}
impl FromBits for bf16 {
    fn from_u64(x: u64) -> Self {
        bf16::from_bits(x as u16)
    }
}

/// Small values (so division has interesting quotients and zeros) or raw bit patterns.
fn value<T: FromBits>(raw: u64, small: bool) -> T {
    if small {
        // -4..=4 in the type (wrapping for unsigned).
        let v = (raw % 9) as i64 - 4;
        T::from_u64(v as u64)
    } else {
        T::from_u64(raw)
    }
}

fn tensor<T: FromBits>(shape: &[usize], raw: &[u64], small: bool) -> Tensor {
    let n: usize = shape.iter().product();
    let v: Vec<T> = (0..n)
        .map(|i| {
            value::<T>(
                raw[i % raw.len()].rotate_left(i as u32 * 7) ^ i as u64,
                small,
            )
        })
        .collect();
    T::wrap(ArrayD::from_shape_vec(IxDyn(shape), v).unwrap())
}

fn keys<T: Bits>(t: &Tensor) -> Vec<u64> {
    T::view(t).unwrap().iter().map(|&x| x.key()).collect()
}

type Reference = Result<Vec<u64>, (Vec<usize>, bool)>;

fn reference<T: Bits>(
    spec: AutoBroadcast,
    a: &Tensor,
    b: &Tensor,
    f: impl FnMut(T, T) -> Result<T, ovir::ops::ElemError>,
) -> Option<Reference> {
    let plan = ovir::broadcast::Plan::new(spec, a.shape(), b.shape())?;
    match binary_map(spec, T::view(a).unwrap(), T::view(b).unwrap(), &plan.out, f) {
        Ok(r) => Some(Ok(r.iter().map(|&x| x.key()).collect())),
        Err(BinaryError::At { flat, error }) => Some(Err((
            ovir::tensor::unravel(flat, &plan.out),
            error == ovir::ops::ElemError::DivisionByZero,
        ))),
        Err(BinaryError::Shapes) => None,
    }
}

fn fast_result<T: Bits>(r: Result<Tensor, EvalError>) -> Option<Reference> {
    match r {
        Ok(t) => Some(Ok(keys::<T>(&t))),
        Err(EvalError::DivisionByZero { index }) => Some(Err((index, true))),
        Err(EvalError::DivisionOverflow { index }) => Some(Err((index, false))),
        Err(_) => None,
    }
}

fn check<T: FromBits + ArithElem>(
    spec: AutoBroadcast,
    sa: &[usize],
    sb: &[usize],
    raw: &[u64],
    small: bool,
) -> Result<(), TestCaseError> {
    let a = tensor::<T>(sa, raw, small);
    let b = tensor::<T>(
        sb,
        &raw.iter().map(|x| x.wrapping_mul(31)).collect::<Vec<_>>(),
        small,
    );
    let sub = Binary::new(spec, Subtract);
    prop_assert_eq!(
        fast_result::<T>(sub.eval_tensors(&a, &b)),
        reference::<T>(spec, &a, &b, |x, y| T::scalar(Subtract, x, y)),
        "subtract {:?} {:?} {:?}",
        T::TYPE,
        sa,
        sb
    );
    let add = Binary::new(spec, Add);
    prop_assert_eq!(
        fast_result::<T>(add.eval_tensors(&a, &b)),
        reference::<T>(spec, &a, &b, |x, y| T::scalar(Add, x, y)),
        "add {:?} {:?} {:?}",
        T::TYPE,
        sa,
        sb
    );
    let mul = Binary::new(spec, Multiply);
    prop_assert_eq!(
        fast_result::<T>(mul.eval_tensors(&a, &b)),
        reference::<T>(spec, &a, &b, |x, y| T::scalar(Multiply, x, y)),
        "multiply {:?} {:?} {:?}",
        T::TYPE,
        sa,
        sb
    );
    for py in [true, false] {
        let div = Binary::new(spec, Divide { pythondiv: py });
        prop_assert_eq!(
            fast_result::<T>(div.eval_tensors(&a, &b)),
            reference::<T>(spec, &a, &b, |x, y| {
                T::scalar(Divide { pythondiv: py }, x, y)
            }),
            "divide {:?} py={} {:?} {:?}",
            T::TYPE,
            py,
            sa,
            sb
        );
    }
    Ok(())
}

fn shapes() -> impl Strategy<Value = (Vec<usize>, Vec<usize>)> {
    // Broadcast-compatible pairs: each axis of b is the same as a's, 1, or missing.
    prop::collection::vec((0usize..6, 0u8..3, 0u8..3), 0..5).prop_map(|axes| {
        let a: Vec<usize> = axes
            .iter()
            .map(|&(d, ka, _)| if ka == 0 { 1 } else { d })
            .collect();
        let b: Vec<usize> = axes
            .iter()
            .map(|&(d, _, kb)| if kb == 0 { 1 } else { d })
            .collect();
        let drop = axes
            .first()
            .map_or(0, |&(_, _, k)| (k as usize).min(b.len()));
        (a, b[drop.min(b.len())..].to_vec())
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn fast_kernels_match_the_reference(
        (sa, sb) in shapes(),
        raw in prop::collection::vec(any::<u64>(), 1..8),
        small in any::<bool>(),
    ) {
        let spec = AutoBroadcast::Numpy;
        check::<f32>(spec, &sa, &sb, &raw, small)?;
        check::<f64>(spec, &sa, &sb, &raw, small)?;
        check::<f16>(spec, &sa, &sb, &raw, small)?;
        check::<bf16>(spec, &sa, &sb, &raw, small)?;
        check::<i8>(spec, &sa, &sb, &raw, small)?;
        check::<i16>(spec, &sa, &sb, &raw, small)?;
        check::<i32>(spec, &sa, &sb, &raw, small)?;
        check::<i64>(spec, &sa, &sb, &raw, small)?;
        check::<u8>(spec, &sa, &sb, &raw, small)?;
        check::<u16>(spec, &sa, &sb, &raw, small)?;
        check::<u32>(spec, &sa, &sb, &raw, small)?;
        check::<u64>(spec, &sa, &sb, &raw, small)?;
    }
}

/// The element named by the error of floor division `a / b` (numpy broadcasting), and whether
/// it is a division by zero (else MIN / -1).
fn division_error(a: &Tensor, b: &Tensor) -> (Vec<usize>, bool) {
    let div = Binary::new(AutoBroadcast::Numpy, Divide { pythondiv: true });
    match div.eval_tensors(a, b) {
        Err(EvalError::DivisionByZero { index }) => (index, true),
        Err(EvalError::DivisionOverflow { index }) => (index, false),
        other => panic!("{other:?}"),
    }
}

/// Large enough for parallel chunks and many blocks: still exact, and the error named is the
/// first in row-major order even when later chunks fail too.
#[test]
fn parallel_chunks_are_exact_and_report_the_first_failure() {
    let shape = [3, 70_000];
    let raw: Vec<u64> = (0..97)
        .map(|i| 0x9E37_79B9_7F4A_7C15u64.wrapping_mul(i + 1))
        .collect();
    for small in [false, true] {
        check::<f32>(AutoBroadcast::Numpy, &shape, &shape, &raw, small).unwrap();
        check::<f16>(AutoBroadcast::Numpy, &shape, &[70_000], &raw, small).unwrap();
        check::<i32>(AutoBroadcast::Numpy, &shape, &[3, 1], &raw, small).unwrap();
        check::<u8>(AutoBroadcast::Numpy, &shape, &shape, &raw, small).unwrap();
    }
    let a = Tensor::from(ArrayD::from_elem(IxDyn(&shape), 7i32));
    let mut bv = ArrayD::from_elem(IxDyn(&shape), 2i32);
    bv[[2, 5]] = 0;
    bv[[1, 69_999]] = 0;
    bv[[0, 150]] = 0;
    assert_eq!(division_error(&a, &Tensor::from(bv)), (vec![0, 150], true));
    let mut av = ArrayD::from_elem(IxDyn(&shape), 7i32);
    av[[1, 3]] = i32::MIN;
    let m1 = Tensor::from(ArrayD::from_elem(IxDyn(&[1]), -1i32));
    assert_eq!(division_error(&Tensor::from(av), &m1), (vec![1, 3], false));
}

/// A lone op whose broadcast operand changes only every 64 or more elements is computed run by
/// run; above 8 MiB each run is written with non-temporal stores, its part lines at either end
/// plainly. Still exact, and still the first failure.
#[test]
fn long_broadcast_runs_are_exact_and_report_the_first_failure() {
    let raw: Vec<u64> = (0..61)
        .map(|i| 0xD1B5_4A32_D192_ED03u64.wrapping_mul(i + 3))
        .collect();
    let spec = AutoBroadcast::Numpy;
    // Runs of 1000 against a stepping B (10 MB of f32 output: streamed).
    check::<f32>(spec, &[40, 64, 1000], &[40, 1, 1000], &raw, false).unwrap();
    // Runs of 70 against one B value each, and B's runs against a repeated A.
    check::<f64>(spec, &[300, 70], &[300, 1], &raw, false).unwrap();
    check::<f32>(spec, &[300, 1], &[300, 70], &raw, true).unwrap();
    // Runs of 9000, streamed, for a type whose division checks.
    check::<i32>(spec, &[256, 9000], &[256, 1], &raw, true).unwrap();
    let shape = [256, 9000];
    let a = Tensor::from(ArrayD::from_elem(IxDyn(&shape), 7i32));
    let mut bv = ArrayD::from_elem(IxDyn(&[256, 1]), 2i32);
    bv[[200, 0]] = 0;
    bv[[3, 0]] = 0;
    assert_eq!(division_error(&a, &Tensor::from(bv)), (vec![3, 0], true));
    let mut av = ArrayD::from_elem(IxDyn(&shape), 7i32);
    av[[100, 4500]] = i32::MIN;
    av[[180, 7]] = i32::MIN;
    let m1 = Tensor::from(ArrayD::from_elem(IxDyn(&[256, 1]), -1i32));
    assert_eq!(
        division_error(&Tensor::from(av), &m1),
        (vec![100, 4500], false)
    );
}

/// Outputs of 8 MiB or more are written with non-temporal stores, straight from the vector
/// loops (a cache line at a time for the integer types, 16 lanes at a time for f16): still
/// exact, and the error named is still the first.
#[test]
fn streamed_outputs_are_exact_and_report_the_first_failure() {
    let raw: Vec<u64> = (0..83)
        .map(|i| 0xA076_1D64_78BD_642Fu64.wrapping_mul(i + 5))
        .collect();
    let spec = AutoBroadcast::Numpy;
    // 8.4 MB of i32 (same shape: one pass per chunk) and of f16 (one repeated operand).
    check::<i32>(spec, &[2100, 1001], &[2100, 1001], &raw, true).unwrap();
    check::<f16>(spec, &[2100, 2001], &[1], &raw, false).unwrap();
    let shape = [2100, 1001];
    let a = Tensor::from(ArrayD::from_elem(IxDyn(&shape), 7i32));
    let mut bv = ArrayD::from_elem(IxDyn(&shape), 2i32);
    bv[[2000, 17]] = 0;
    bv[[1500, 999]] = 0;
    assert_eq!(
        division_error(&a, &Tensor::from(bv)),
        (vec![1500, 999], true)
    );
}
