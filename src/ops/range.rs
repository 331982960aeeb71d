//! Range-1 and Range-4: the 1-D sequence `start, start + step, ...` up to `stop` (excluded),
//! numpy's `arange`.
//!
//! Spec: <https://docs.openvino.ai/2026/documentation/openvino-ir-format/operation-sets/operation-specs/generation/range-4.html>
//! (and `range-1`).
//!
//! Ports: `start`, `stop`, `step`: scalars (rank 0: OpenVINO's shape inference refuses a
//! one-element 1-D input, "'start' input is not a scalar", and its maintainers declined to
//! relax it); one 1-D output. Range-1: the three inputs have one numeric type, the output's.
//! Range-4: `output_type` (mandatory; any numeric type), inputs of any numeric types.
//!
//! The count, as OpenVINO's shape inference (`range_shape_inference.hpp`) computes it:
//! `ceil(|stop − start| / |step|)`, or 0 when `step` points away from `stop` (`start >= stop`
//! for a positive step, `start <= stop` for a negative one).
//! * Float output: in f64, from the inputs' values as f64 (Range-4 does not first cast them to
//!   `output_type`, as OpenVINO does not).
//! * Integer output: Range-4 truncates each input toward zero first (the spec's "rounding
//!   toward zero"; OpenVINO `std::trunc`s the f64s). ovir then counts exactly in integers,
//!   where OpenVINO counts in f64: the two agree whenever the values are below 2^53.
//!
//! Values: element k is `start + k·step`.
//! * Integers: exact. A value the output type cannot hold is an error (OpenVINO casts out of
//!   range, undefined for a float input, and wraps when accumulating); only the values the
//!   output holds are checked, so u8 output from 10 to 0 by −2 is `[10, 8, 6, 4, 2]`. A
//!   truncated input beyond ±2^127 is an error (no integer output type comes near it).
//! * Floats: as OpenVINO's reference (`reference/range.hpp`), `start` and `step` are first
//!   cast to the output type (rounded to nearest, an f32 from f64 as `static_cast<float>`),
//!   then `start + T(k) · step` is computed in the output type: `k` rounded to T, a product and
//!   a sum, each rounded (no fused multiply-add). The spec's `val[i+1] = val[i] + step`
//!   accumulation is silent on rounding and OpenVINO does not accumulate. f16 and bf16 (which
//!   OpenVINO's reference does not compute) are computed in f32 from the cast start and step,
//!   and rounded once to the type.
//!
//! Errors: `step` 0 (after truncation, for Range-4 with integer output: the spec leaves it
//! undefined); a NaN or infinite input (OpenVINO: "'start' cannot be nan or infinite"); more
//! than 2^63 − 1 elements (OpenVINO casts the count to u32). Execution checks the output
//! against the memory budget before allocating it (`Range(0, 1e18, 1)` is a budget error).
//!
//! Inference: the output is `[count]` when all three values are known (and folded when small),
//! else `[?]`; a known input is checked as above.

use super::{Arity, AttrError, Attrs, EvalCx, EvalError, InferCx, Op, OpDef};
use crate::dtype::ElementType;
use crate::error::ErrorKind;
use crate::num::{Cast, Int, Num};
use crate::shape::dim::MAX_DIM;
use crate::shape::{Dim, PartialShape, TensorType};
use crate::tensor::{Tensor, TypeSet};

#[derive(Clone, Debug, PartialEq)]
pub struct Range {
    /// Range-4's `output_type`; `None` for Range-1 (the inputs' type).
    pub output_type: Option<ElementType>,
}

pub const RANGE_1: OpDef = OpDef {
    name: "Range",
    version: 1,
    inputs: Arity::exactly(3),
    outputs: Arity::exactly(1),
    parse: parse_1,
};

pub const RANGE_4: OpDef = OpDef {
    version: 4,
    parse: parse_4,
    ..RANGE_1
};

fn parse_1(_: &Attrs) -> Result<Box<dyn Op>, Vec<AttrError>> {
    Ok(Box::new(Range { output_type: None }))
}

fn parse_4(a: &Attrs) -> Result<Box<dyn Op>, Vec<AttrError>> {
    let output_type = a
        .parse_required("output_type", |t| match super::parse_element_type(t)? {
            t @ (ElementType::Boolean | ElementType::String | ElementType::Dynamic) => Err(
                format!("Range's output_type is a numeric element type, not {t}"),
            ),
            t => Ok(t),
        })
        .map_err(|e| vec![e])?;
    Ok(Box::new(Range {
        output_type: Some(output_type),
    }))
}

/// The inputs' names, by port.
const PORTS: [&str; 3] = ["start", "stop", "step"];

/// Whether OpenVINO counts a range of `t` in integers (`is_integral_number`: its inputs are
/// truncated first).
fn integral(t: ElementType) -> bool {
    use ElementType as E;
    TypeSet::INT.contains(t) || matches!(t, E::I4 | E::U1 | E::U2 | E::U3 | E::U4 | E::U6)
}

/// The values of a range: `first + k·step` for k in `0..count`.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Seq {
    Int { first: i128, step: i128 },
    Float { first: f64, step: f64 },
}

/// A range ready to fill.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Plan {
    count: u64,
    seq: Seq,
}

/// An invalid input: its port and why.
type Fault = (usize, String);

/// Checks one input's value on its own: finite, and a non-zero step (in the output's terms).
fn check_one(port: usize, v: Num, integral: bool) -> Result<(), Fault> {
    let name = PORTS[port];
    if let Num::Float(f) = v
        && !f.is_finite()
    {
        return Err((port, format!("`{name}` is {f}: Range needs finite values")));
    }
    if port == 2 {
        let zero = match v {
            Num::Int(i) => i == 0,
            Num::Float(f) if integral => f.trunc() == 0.0,
            Num::Float(f) => f == 0.0,
        };
        if zero {
            let why = match v {
                Num::Float(f) if f != 0.0 => format!(" ({f} truncated to an integer)"),
                _ => String::new(),
            };
            return Err((port, format!("`step` is 0{why}: the range would never end")));
        }
    }
    Ok(())
}

/// An integer-output input truncated toward zero, exact in an i128.
fn truncated(port: usize, v: Num) -> Result<i128, Fault> {
    match v {
        Num::Int(i) => Ok(i),
        Num::Float(f) => {
            let t = f.trunc();
            // 2^127: every integral f64 below it is exact in an i128.
            if t.abs() < 1.7014118346046923e38 {
                Ok(t as i128)
            } else {
                Err((
                    port,
                    format!(
                        "`{}` is {f}, beyond any integer range (±2^127)",
                        PORTS[port]
                    ),
                ))
            }
        }
    }
}

/// The smallest and largest values of integer type `t`, if ovir computes it.
fn int_limits(t: ElementType) -> Option<(i128, i128)> {
    crate::dispatch!(int: t, T => Some((<T as Int>::MIN.to_i128(), <T as Int>::MAX.to_i128())), _ => None)
}

/// The count and values of the range of `start`, `stop`, `step` (`v`) with output type `out`.
fn plan(v: [Num; 3], out: ElementType) -> Result<Plan, Fault> {
    let integral = integral(out);
    for (port, &x) in v.iter().enumerate() {
        check_one(port, x, integral)?;
    }
    let too_many = |count: String| {
        (
            1,
            format!("the range has {count} elements, more than a dimension holds (2^63 - 1)"),
        )
    };
    if integral {
        let [start, stop, step] = [
            truncated(0, v[0])?,
            truncated(1, v[1])?,
            truncated(2, v[2])?,
        ];
        let count = if (step > 0 && start >= stop) || (step < 0 && start <= stop) {
            0
        } else {
            stop.abs_diff(start).div_ceil(step.unsigned_abs())
        };
        if count > MAX_DIM as u128 {
            return Err(too_many(count.to_string()));
        }
        if count > 0
            && let Some((lo, hi)) = int_limits(out)
        {
            // The values run monotonically from the first to the last.
            let last = (count as i128 - 1)
                .checked_mul(step)
                .and_then(|d| d.checked_add(start));
            let fits = |x: i128| (lo..=hi).contains(&x);
            if !fits(start) || !last.is_some_and(fits) {
                let last = last.map_or("beyond ±2^127".to_owned(), |l| l.to_string());
                return Err((
                    0,
                    format!(
                        "the range's values run from {start} to {last}, beyond {out} ({lo} to {hi})"
                    ),
                ));
            }
        }
        return Ok(Plan {
            count: count as u64,
            seq: Seq::Int { first: start, step },
        });
    }
    let [start, stop, step] = v.map(|x| match x {
        Num::Int(i) => i as f64,
        Num::Float(f) => f,
    });
    let span = if (step > 0.0 && start >= stop) || (step < 0.0 && start <= stop) {
        0.0
    } else {
        stop - start
    };
    // Infinite when `stop - start` overflows f64. (2^63 − 1 rounds up to 2^63 in f64.)
    let count = (span.abs() / step.abs()).ceil();
    if !count.is_finite() || count >= MAX_DIM as f64 {
        let about = if count.is_finite() {
            format!("about {count:e}")
        } else {
            "infinitely many".to_owned()
        };
        return Err(too_many(about));
    }
    Ok(Plan {
        count: count as u64,
        seq: Seq::Float { first: start, step },
    })
}

/// The one value of a numeric scalar tensor.
fn scalar(t: &Tensor) -> Option<Num> {
    fn go<T: Cast>(t: &Tensor) -> Option<Num> {
        T::view(t)?.iter().next().map(|&x| x.to_num())
    }
    crate::dispatch!(numeric: t.element_type(), T => go::<T>(t), _ => None)
}

/// The range's `count` values as a tensor of `out` (`None` for a type ovir does not compute).
fn fill(out: ElementType, count: usize, seq: Seq) -> Option<Tensor> {
    fn ints<T: Int>(count: usize, first: i128, step: i128) -> Vec<T> {
        // Every value fits (`plan` checked the first and the last), so wrapping arithmetic in
        // T is exact; a step beyond T (u8 counting down) wraps to the same result.
        let (mut x, d) = (T::from_num(Num::Int(first)), T::from_num(Num::Int(step)));
        let mut v = Vec::with_capacity(count);
        for _ in 0..count {
            v.push(x);
            x = x.wrapping_add(d);
        }
        v
    }
    /// f16 and bf16: in f32 from the start and step cast to `T`, rounded once to `T`.
    fn narrow<T: Cast>(
        count: usize,
        first: f64,
        step: f64,
        widen: fn(T) -> f32,
        round: fn(f32) -> T,
    ) -> Vec<T> {
        let s = widen(T::from_num(Num::Float(first)));
        let d = widen(T::from_num(Num::Float(step)));
        (0..count).map(|k| round(s + k as f32 * d)).collect()
    }
    let shape = [count];
    match seq {
        Seq::Int { first, step } => crate::dispatch!(int: out, T => {
            super::kernel::tensor_from(&shape, ints::<T>(count, first, step)).ok()
        }, _ => None),
        Seq::Float { first, step } => match out {
            ElementType::F64 => {
                let v = (0..count).map(|k| first + k as f64 * step).collect();
                super::kernel::tensor_from::<f64>(&shape, v).ok()
            }
            ElementType::F32 => {
                let (s, d) = (first as f32, step as f32);
                let v = (0..count).map(|k| s + k as f32 * d).collect();
                super::kernel::tensor_from::<f32>(&shape, v).ok()
            }
            ElementType::F16 => {
                let v = narrow(count, first, step, half::f16::to_f32, half::f16::from_f32);
                super::kernel::tensor_from(&shape, v).ok()
            }
            ElementType::Bf16 => {
                let v = narrow(count, first, step, half::bf16::to_f32, half::bf16::from_f32);
                super::kernel::tensor_from(&shape, v).ok()
            }
            _ => None,
        },
    }
}

impl Range {
    /// The output type, when the inputs' types are known or it is Range-4's.
    fn out_type(&self, types: [ElementType; 3]) -> Result<ElementType, (ElementType, ElementType)> {
        if let Some(t) = self.output_type {
            return Ok(t);
        }
        let mut ty = ElementType::Dynamic;
        for t in types {
            ty = match (ty, t) {
                (ElementType::Dynamic, x) | (x, ElementType::Dynamic) => x,
                (x, y) if x == y => x,
                (x, y) => return Err((x, y)),
            };
        }
        Ok(ty)
    }
}

impl Op for Range {
    fn def(&self) -> Option<&'static OpDef> {
        Some(if self.output_type.is_none() {
            &RANGE_1
        } else {
            &RANGE_4
        })
    }

    fn infer(&self, cx: &mut InferCx<'_>) -> Option<Vec<TensorType>> {
        cx.require(0..3, TypeSet::NUMERIC)?;
        let inputs = [cx.input(0), cx.input(1), cx.input(2)];
        let ty = match self.out_type(inputs.map(|t| t.element_type)) {
            Ok(t) => t,
            Err((a, b)) => {
                cx.report(ErrorKind::ElementTypeMismatch { a, b });
                return None;
            }
        };
        if ty != ElementType::Dynamic && !TypeSet::ANY.contains(ty) {
            cx.report(ErrorKind::CannotRunType {
                op: "Range".into(),
                ty,
            });
        }
        for (port, t) in inputs.iter().enumerate() {
            if let Some(r) = t.shape.rank()
                && r != 0
            {
                return cx.invalid(
                    port,
                    format!("`{}` must be a scalar (rank 0), not rank {r}", PORTS[port]),
                );
            }
        }
        let values = inputs.map(|t| t.value().and_then(|v| scalar(v)));
        let unknown = || {
            Some(vec![TensorType::new(
                ty,
                PartialShape::new(vec![Dim::DYNAMIC]),
            )])
        };
        if let [Some(start), Some(stop), Some(step)] = values {
            if ty == ElementType::Dynamic {
                return unknown();
            }
            return match plan([start, stop, step], ty) {
                Ok(p) => Some(vec![TensorType::new(ty, PartialShape::fixed(&[p.count]))]),
                Err((port, reason)) => cx.invalid(port, reason),
            };
        }
        // What is known is checked on its own, as OpenVINO does.
        for (port, v) in values.iter().enumerate() {
            if let Some(v) = *v
                && let Err((port, reason)) = check_one(port, v, integral(ty))
            {
                return cx.invalid(port, reason);
            }
        }
        unknown()
    }

    fn eval(&self, cx: &EvalCx<'_>) -> Result<Vec<Tensor>, EvalError> {
        let mut v = [Num::Int(0); 3];
        let mut types = [ElementType::Dynamic; 3];
        for (i, slot) in v.iter_mut().enumerate() {
            let t = cx.tensor(i)?;
            if !t.shape().is_empty() {
                return Err(EvalError::Invalid(format!(
                    "`{}` must be a scalar, not of shape {:?}",
                    PORTS[i],
                    t.shape()
                )));
            }
            types[i] = t.element_type();
            *slot = scalar(&t).ok_or_else(|| EvalError::UnsupportedType {
                op: "Range".into(),
                ty: t.element_type(),
            })?;
        }
        let ty = self
            .out_type(types)
            .map_err(|(a, b)| EvalError::Types(a, b))?;
        let p = plan(v, ty).map_err(|(_, reason)| EvalError::Invalid(reason))?;
        // The budget refuses any count beyond memory, so this conversion holds below it.
        let count = usize::try_from(p.count)
            .map_err(|_| EvalError::Invalid(format!("the range has {} elements", p.count)))?;
        cx.reserve(ty, count)?;
        fill(ty, count, p.seq)
            .map(|t| vec![t])
            .ok_or_else(|| EvalError::UnsupportedType {
                op: "Range".into(),
                ty,
            })
    }

    fn folds(&self) -> bool {
        // A type ovir does not compute would fold into an error: leave it to execution.
        self.output_type.is_none_or(|t| TypeSet::ANY.contains(t))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use half::f16;

    use super::*;
    use crate::memory::Budget;
    use crate::tensor::{Element, Value};

    const ROOMY: Budget = Budget {
        limit: 1 << 30,
        in_use: 0,
    };

    fn scalar_of<T: Element>(x: T) -> Value<'static> {
        Value::Tensor(Arc::new(T::wrap(ndarray::arr0(x).into_dyn())))
    }

    fn run(op: &Range, inputs: [Value<'static>; 3], budget: Budget) -> Result<Tensor, EvalError> {
        op.eval(&EvalCx::new(&inputs, budget))
            .map(|mut v| v.remove(0))
    }

    fn values<T: Element>(t: &Tensor) -> Vec<T> {
        t.view::<T>()
            .expect("the expected type")
            .iter()
            .copied()
            .collect()
    }

    const R1: Range = Range { output_type: None };

    fn r4(t: ElementType) -> Range {
        Range {
            output_type: Some(t),
        }
    }

    /// Range-1 on integers: numpy's `np.arange(start, stop, step)`.
    #[test]
    fn range_1_integers_are_numpys_arange() {
        for (start, stop, step, want) in [
            (2i64, 23, 3, vec![2i64, 5, 8, 11, 14, 17, 20]),
            (23, 2, -3, vec![23, 20, 17, 14, 11, 8, 5]),
            (0, 5, 1, vec![0, 1, 2, 3, 4]),
            (5, 5, 1, vec![]),
            (5, 0, 1, vec![]),
            (0, 5, -1, vec![]),
            (-3, 3, 2, vec![-3, -1, 1]),
            (0, 10, 20, vec![0]),
            (i64::MAX - 2, i64::MAX, 1, vec![i64::MAX - 2, i64::MAX - 1]),
            (
                i64::MIN,
                i64::MAX,
                i64::MAX,
                vec![i64::MIN, -1, i64::MAX - 1],
            ),
        ] {
            let t = run(&R1, [start, stop, step].map(scalar_of), ROOMY).unwrap();
            assert_eq!(t.shape(), &[want.len()]);
            assert_eq!(values::<i64>(&t), want, "arange({start}, {stop}, {step})");
            // The same as i32 where it fits.
            if let (Ok(a), Ok(b), Ok(c)) = (
                i32::try_from(start),
                i32::try_from(stop),
                i32::try_from(step),
            ) {
                let t = run(&R1, [a, b, c].map(scalar_of), ROOMY).unwrap();
                let want32: Vec<i32> = want.iter().map(|&x| x as i32).collect();
                assert_eq!(values::<i32>(&t), want32);
            }
        }
        // u8 near its top: no overflow.
        let t = run(&R1, [250u8, 255, 2].map(scalar_of), ROOMY).unwrap();
        assert_eq!(values::<u8>(&t), vec![250, 252, 254]);
    }

    /// Range-1 on f32: `np.arange(start, stop, step, dtype=np.float32)` (numpy computes
    /// `start + k*step` too).
    #[test]
    fn range_1_floats() {
        for (start, stop, step, want) in [
            (1.0f32, 2.5, 0.5, vec![1.0f32, 1.5, 2.0]),
            (0.0, 1.0, 0.25, vec![0.0, 0.25, 0.5, 0.75]),
            (0.0, 1.0, 0.3, vec![0.0, 0.3, 0.6, 0.90000004]),
            (1.0, -1.0, -0.5, vec![1.0, 0.5, 0.0, -0.5]),
            (0.5, 0.5, 0.1, vec![]),
            (0.0, 1.0, -0.1, vec![]),
            // ceil(0.1 / 0.3) = 1.
            (0.0, 0.1, 0.3, vec![0.0]),
            (-2.5, 0.0, 1.0, vec![-2.5, -1.5, -0.5]),
        ] {
            let t = run(&R1, [start, stop, step].map(scalar_of), ROOMY).unwrap();
            assert_eq!(values::<f32>(&t), want, "arange({start}, {stop}, {step})");
        }
        // f64: 0.1 steps, 10 elements, each Python's `0.0 + k * 0.1`.
        let t = run(&R1, [0.0f64, 1.0, 0.1].map(scalar_of), ROOMY).unwrap();
        let v = values::<f64>(&t);
        assert_eq!(v.len(), 10);
        assert_eq!(v[3], 0.30000000000000004);
        assert_eq!(v[9], 0.9);
        // f16: computed in f32, rounded once.
        let h = |x: f32| f16::from_f32(x);
        let t = run(&R1, [h(0.0), h(1.0), h(0.25)].map(scalar_of), ROOMY).unwrap();
        assert_eq!(values::<f16>(&t), vec![h(0.0), h(0.25), h(0.5), h(0.75)]);
    }

    /// Range-4: the inputs' types differ from the output's.
    #[test]
    fn range_4_casts_to_the_output_type() {
        use ElementType as E;
        let f = |x: f32| scalar_of(x);
        // f32 inputs, i32 output: truncated first (2.7 → 2, 9.9 → 9, 2.5 → 2).
        let t = run(&r4(E::I32), [f(2.7), f(9.9), f(2.5)], ROOMY).unwrap();
        assert_eq!(values::<i32>(&t), vec![2, 4, 6, 8]);
        // Negative values truncate toward zero: -2.7 → -2, -9.9 → -9, -2.5 → -2.
        let t = run(&r4(E::I64), [f(-2.7), f(-9.9), f(-2.5)], ROOMY).unwrap();
        assert_eq!(values::<i64>(&t), vec![-2, -4, -6, -8]);
        // i64 inputs, f32 output.
        let t = run(&r4(E::F32), [0i64, 5, 2].map(scalar_of), ROOMY).unwrap();
        assert_eq!(values::<f32>(&t), vec![0.0, 2.0, 4.0]);
        // Mixed inputs, float output: counted in f64 from the values as they are.
        let t = run(
            &r4(E::F64),
            [scalar_of(1i32), scalar_of(2.5f32), scalar_of(0.5f64)],
            ROOMY,
        )
        .unwrap();
        assert_eq!(values::<f64>(&t), vec![1.0, 1.5, 2.0]);
        // f64 start cast to f32 before computing (0.1 as f32).
        let t = run(&r4(E::F32), [0.1f64, 0.35, 0.1].map(scalar_of), ROOMY).unwrap();
        assert_eq!(values::<f32>(&t), vec![0.1f32, 0.2, 0.3]);
        // u8 output counting down: the step does not fit u8, the values do.
        let t = run(&r4(E::U8), [10i32, 0, -2].map(scalar_of), ROOMY).unwrap();
        assert_eq!(values::<u8>(&t), vec![10, 8, 6, 4, 2]);
        // f16 output from i32 inputs.
        let t = run(&r4(E::F16), [0i32, 3, 1].map(scalar_of), ROOMY).unwrap();
        assert_eq!(
            values::<f16>(&t),
            [0.0, 1.0, 2.0].map(f16::from_f32).to_vec()
        );
        // u64 inputs beyond i64, u64 output.
        let t = run(
            &r4(E::U64),
            [u64::MAX - 3, u64::MAX, 2].map(scalar_of),
            ROOMY,
        )
        .unwrap();
        assert_eq!(values::<u64>(&t), vec![u64::MAX - 3, u64::MAX - 1]);
    }

    #[test]
    fn errors() {
        use ElementType as E;
        let huge = Budget {
            limit: u64::MAX,
            in_use: 0,
        };
        for (op, inputs, want) in [
            (R1, [0i32, 5, 0].map(scalar_of), "`step` is 0"),
            (R1, [0.0f32, 5.0, 0.0].map(scalar_of), "`step` is 0"),
            (
                r4(E::I32),
                [0.0f32, 5.0, 0.5].map(scalar_of),
                "`step` is 0 (0.5 truncated",
            ),
            (r4(E::F32), [0i64, 5, 0].map(scalar_of), "`step` is 0"),
            (
                R1,
                [0.0f32, f32::INFINITY, 1.0].map(scalar_of),
                "`stop` is inf",
            ),
            (R1, [f32::NAN, 1.0, 1.0].map(scalar_of), "`start` is NaN"),
            (
                r4(E::F32),
                [0.0f64, 1.0, f64::NEG_INFINITY].map(scalar_of),
                "`step` is -inf",
            ),
            // The values leave the output type.
            (r4(E::I8), [0i32, 200, 1].map(scalar_of), "beyond i8"),
            (r4(E::U8), [-1i32, 3, 1].map(scalar_of), "beyond u8"),
            // More elements than a dimension holds (f64 span overflows to inf).
            (
                R1,
                [-1e308f64, 1e308, 1e-300].map(scalar_of),
                "more than a dimension holds",
            ),
            (
                R1,
                [i64::MIN, i64::MAX, 1].map(scalar_of),
                "has 18446744073709551615 elements, more than a dimension holds",
            ),
            (
                r4(E::I64),
                [f64::MIN, 0.0, 1.0].map(scalar_of),
                "beyond any integer range",
            ),
        ] {
            let err = run(&op, inputs, huge).unwrap_err().to_string();
            assert!(err.contains(want), "{err:?} lacks {want:?}");
        }
        // Different types to Range-1.
        let err = run(
            &R1,
            [scalar_of(0i32), scalar_of(5i64), scalar_of(1i32)],
            ROOMY,
        )
        .unwrap_err();
        assert_eq!(err, EvalError::Types(E::I32, E::I64));
        // Not a scalar.
        let one = Value::Tensor(Arc::new(Tensor::from(ndarray::arr1(&[5i64]).into_dyn())));
        let err = run(&R1, [scalar_of(0i64), one, scalar_of(1i64)], ROOMY).unwrap_err();
        assert!(err.to_string().contains("must be a scalar"), "{err}");
    }

    /// An allocation bomb ends in the budget error, before anything is allocated.
    #[test]
    fn huge_ranges_are_budget_errors() {
        use ElementType as E;
        for (op, inputs) in [
            (R1, [0i64, 1_000_000_000_000_000_000, 1].map(scalar_of)),
            (R1, [0.0f32, 1e18, 1.0].map(scalar_of)),
            (r4(E::I64), [0.0f64, 1e18, 1.0].map(scalar_of)),
            (r4(E::F64), [0u64, u64::MAX, 3].map(scalar_of)),
        ] {
            let err = run(&op, inputs, ROOMY).unwrap_err();
            assert!(matches!(err, EvalError::Memory(_)), "{err:?}");
        }
    }

    fn infer(op: &Range, inputs: &[&TensorType]) -> (Option<Vec<TensorType>>, Vec<String>) {
        let (out, findings) = crate::ops::context::infer_for_test(op, inputs);
        (out, findings.iter().map(|(k, _)| k.to_string()).collect())
    }

    #[test]
    fn inference() {
        use ElementType as E;
        let known = |x: f32| TensorType::of_value(Tensor::from(ndarray::arr0(x).into_dyn()));
        let param = |t: E| TensorType::new(t, PartialShape::fixed(&[]));
        let (a, b, c) = (known(2.0), known(23.0), known(3.0));
        let (out, _) = infer(&R1, &[&a, &b, &c]);
        let out = out.unwrap();
        assert_eq!(out[0].element_type, E::F32);
        assert_eq!(out[0].shape, PartialShape::fixed(&[7]));
        // Range-4 with integer output truncates: 2.0..23.0 by 3.0 is still 7 elements; by
        // 0.5, an error.
        let (out, _) = infer(&r4(E::I32), &[&a, &b, &c]);
        assert_eq!(out.unwrap()[0].shape, PartialShape::fixed(&[7]));
        let half = known(0.5);
        let (out, found) = infer(&r4(E::I32), &[&a, &b, &half]);
        assert!(
            out.is_none() && found[0].contains("`step` is 0"),
            "{found:?}"
        );
        // An unknown input: [?].
        let p = param(E::F32);
        let (out, _) = infer(&R1, &[&a, &p, &c]);
        assert_eq!(out.unwrap()[0].shape, PartialShape::new(vec![Dim::DYNAMIC]));
        // A known zero step is reported even when the rest is unknown.
        let zero = known(0.0);
        let (out, found) = infer(&R1, &[&p, &p, &zero]);
        assert!(out.is_none() && found[0].contains("`step` is 0"));
        // Not a scalar; types that differ (Range-1).
        let vector = TensorType::new(E::F32, PartialShape::fixed(&[1]));
        let (out, found) = infer(&R1, &[&a, &vector, &c]);
        assert!(
            out.is_none() && found[0].contains("must be a scalar"),
            "{found:?}"
        );
        let int = param(E::I64);
        let (out, found) = infer(&R1, &[&a, &int, &c]);
        assert!(out.is_none() && !found.is_empty());
        // Range-4 takes any mix of numeric types, not booleans.
        let (out, _) = infer(&r4(E::I64), &[&a, &int, &c]);
        assert_eq!(out.unwrap()[0].element_type, E::I64);
        let boolean = param(E::Boolean);
        let (out, _) = infer(&r4(E::I64), &[&a, &boolean, &c]);
        assert!(out.is_none());
    }

    #[test]
    fn output_type_is_a_numeric_type() {
        use std::borrow::Cow;
        let parse = |v: Option<&'static str>| {
            let data = crate::ir::Data(
                v.map(|v| (Cow::Borrowed("output_type"), Cow::Borrowed(v)))
                    .into_iter()
                    .collect(),
            );
            (RANGE_4.parse)(&Attrs::new(Some(&data))).map(|op| op.def().map(|d| d.title()))
        };
        assert_eq!(parse(Some("i32")).unwrap(), Some("Range-4".to_owned()));
        assert!(parse(Some("f16")).is_ok());
        for bad in [Some("boolean"), Some("dynamic"), Some("float"), None] {
            assert_eq!(parse(bad).unwrap_err().len(), 1, "{bad:?}");
        }
        assert_eq!(
            (RANGE_1.parse)(&Attrs::new(None))
                .unwrap()
                .def()
                .map(|d| d.title()),
            Some("Range-1".to_owned())
        );
    }
}
