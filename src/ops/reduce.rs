//! The reductions: ReduceSum-1, ReduceProd-1, ReduceMean-1, ReduceMax-1, ReduceMin-1,
//! ReduceL1-4, ReduceL2-4, ReduceLogicalAnd-1, ReduceLogicalOr-1 — one table row each (at the end
//! of this file), one op type for all.
//!
//! Spec: <https://docs.openvino.ai/2026/documentation/openvino-ir-format/operation-sets/operation-specs/reduction/reduce-sum-1.html>
//! (and the other `reduce-*` pages).
//!
//! Ports: `data` and `axes` (an integer scalar or 1-D tensor; negative counts from the end;
//! repeated axes count once, as in OpenVINO; empty: no reduction, the output is the input).
//! Attribute `keep_dims` (default false): reduced dims stay as 1s.
//!
//! Types and decisions (the row's type set; others are refused, E502):
//! * integers (Sum, Prod, Mean, Max, Min, L1): exact with two's complement wrap-around for Sum,
//!   Prod and L1; Mean is the exact mean truncated toward zero (OpenVINO's reference divides a
//!   sum that has already wrapped: ovir does not copy that).
//! * floats: Sum, Mean, L1 and L2 accumulate in f64 by pairwise summation (the same bits at
//!   any thread count and on any vector unit) and round once to the type; Prod multiplies in
//!   f64 in order and rounds once; f16 and bf16 the same way. Max and Min propagate NaN (numpy
//!   `max`; OpenVINO's reference skips NaN); max(−0, +0) is +0, min is −0. L2 is for floats.
//! * boolean: LogicalAnd (all) and LogicalOr (any).
//! * no elements to reduce: Sum and L1 give 0, Prod 1, LogicalAnd true, LogicalOr false; Mean
//!   of floats 0/0 = NaN, and of integers, Max and Min have no value: an error (E507; OpenVINO
//!   returns 0 or the type's lowest value).
//!
//! Bounds of shape values pass through Sum, Max, Min and Mean (and Prod of non-negative ones),
//! as OpenVINO's `evaluate_lower`/`evaluate_upper` do.

use super::{Arity, AttrError, Attrs, EvalCx, EvalError, InferCx, Op, OpDef};
use crate::num::{Cast, Num};
use crate::shape::{Dim, PartialShape, TensorType};
use crate::tensor::{Element, Tensor, TypeSet};

/// What a reduction computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Sum,
    Prod,
    Mean,
    Max,
    Min,
    L1,
    L2,
    All,
    Any,
}

#[derive(Clone, Debug)]
pub struct Reduce {
    pub def: &'static OpDef,
    pub kind: Kind,
    pub types: TypeSet,
    pub keep_dims: bool,
}

/// Normalised, sorted, distinct axes of a tensor of `rank`.
fn axes_of(values: &[i64], rank: usize) -> Result<Vec<usize>, String> {
    let mut out = Vec::new();
    for &a in values {
        let k = super::normalize_axis(a, rank)
            .ok_or_else(|| format!("axis {a} is out of range for rank {rank}"))?;
        if !out.contains(&k) {
            out.push(k);
        }
    }
    out.sort_unstable();
    Ok(out)
}

impl Reduce {
    fn out_dims<D: Copy>(&self, dims: &[D], axes: &[usize], one: D) -> Vec<D> {
        dims.iter()
            .enumerate()
            .filter_map(|(k, &d)| match (axes.contains(&k), self.keep_dims) {
                (false, _) => Some(d),
                (true, true) => Some(one),
                (true, false) => None,
            })
            .collect()
    }
}

impl Op for Reduce {
    fn def(&self) -> Option<&'static OpDef> {
        Some(self.def)
    }

    fn infer(&self, cx: &mut InferCx<'_>) -> Option<Vec<TensorType>> {
        let (data, axes) = (cx.input(0), cx.input(1));
        let ty = data.element_type;
        cx.require(0..1, self.types)?;
        cx.require(1..2, TypeSet::INT)?;
        if let Some(r) = axes.shape.rank()
            && r > 1
        {
            return cx.invalid(1, format!("the axes must be a scalar or 1-D, not rank {r}"));
        }
        let Some(dims) = data.shape.dims() else {
            return Some(vec![TensorType::new(ty, PartialShape::dynamic_rank())]);
        };
        let Some(values) = cx.ints(1) else {
            let shape = if self.keep_dims {
                PartialShape::new(vec![Dim::DYNAMIC; dims.len()])
            } else {
                PartialShape::dynamic_rank()
            };
            return Some(vec![TensorType::new(ty, shape)]);
        };
        match axes_of(&values, dims.len()) {
            Ok(axes) => Some(vec![TensorType::new(
                ty,
                PartialShape::new(self.out_dims(dims, &axes, Dim::fixed(1))),
            )]),
            Err(reason) => cx.invalid(1, reason),
        }
    }

    fn eval(&self, cx: &EvalCx<'_>) -> Result<Vec<Tensor>, EvalError> {
        let data = cx.tensor(0)?;
        let values = cx.ints(1)?;
        let shape = data.shape().to_vec();
        let axes = axes_of(&values, shape.len()).map_err(EvalError::Invalid)?;
        let out_shape = self.out_dims(&shape, &axes, 1);
        let ty = data.element_type();
        cx.reserve(ty, out_shape.iter().product())?;
        // The reduced axes are brought together in a copy of the input.
        cx.reserve_bytes("copy of the input", data.bytes())?;
        let reduced = if axes.is_empty() {
            Ok(Some((*data).clone()))
        } else {
            crate::dispatch!(any: ty, T => reduce::<T>(&data, &axes, &out_shape, self.kind).map(Some), _ => Ok(None))
        };
        match reduced? {
            Some(t) => Ok(vec![t]),
            None => Err(EvalError::UnsupportedType {
                op: self.def.name.into(),
                ty,
            }),
        }
    }

    fn moves(&self, input: usize) -> bool {
        input == 0
            && matches!(
                self.kind,
                Kind::Sum | Kind::Max | Kind::Min | Kind::Mean | Kind::Prod
            )
    }

    fn bounds_need_nonnegative(&self) -> bool {
        self.kind == Kind::Prod
    }
}

/// Reduces `t` over `axes` (sorted, distinct, at least one) into `out_shape`.
fn reduce<T: Element + Reducible>(
    t: &Tensor,
    axes: &[usize],
    out_shape: &[usize],
    kind: Kind,
) -> Result<Tensor, EvalError> {
    let v = T::view(t).ok_or(EvalError::Internal("the data's type"))?;
    let rank = v.ndim();
    // The kept axes first, in order, then the reduced ones: each output element reduces one
    // contiguous run of the permuted copy.
    let perm: Vec<usize> = (0..rank)
        .filter(|k| !axes.contains(k))
        .chain(axes.iter().copied())
        .collect();
    let n: usize = axes.iter().map(|&a| v.shape()[a]).product();
    let permuted = v.permuted_axes(perm).as_standard_layout().into_owned();
    let data = permuted
        .as_slice()
        .ok_or(EvalError::Internal("a standard layout"))?;
    let count: usize = out_shape.iter().product();
    let mut out = Vec::with_capacity(count);
    for k in 0..count {
        let run = &data[k * n..(k + 1) * n];
        out.push(T::reduce(kind, run).map_err(EvalError::Invalid)?);
    }
    ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(out_shape), out)
        .map(T::wrap)
        .map_err(|_| EvalError::Internal("the reduced shape"))
}

/// An element type reductions compute on.
trait Reducible: Sized {
    fn reduce(kind: Kind, run: &[Self]) -> Result<Self, String>;
}

fn no_value(kind: Kind) -> String {
    format!("{kind:?} of no elements has no value (an axis reduced has size 0)")
}

macro_rules! int_reduce {
    ($($t:ty)*) => {$(
        impl Reducible for $t {
            fn reduce(kind: Kind, run: &[Self]) -> Result<Self, String> {
                Ok(match kind {
                    Kind::Sum => run.iter().fold(0 as $t, |a, &b| a.wrapping_add(b)),
                    Kind::Prod => run.iter().fold(1 as $t, |a, &b| a.wrapping_mul(b)),
                    Kind::L1 => run.iter().fold(0 as $t, |a, &b| a.wrapping_add(abs(b))),
                    Kind::Mean => {
                        if run.is_empty() {
                            return Err(no_value(kind));
                        }
                        let sum: i128 = run.iter().map(|&x| x as i128).sum();
                        (sum / run.len() as i128) as $t
                    }
                    Kind::Max => *run.iter().max().ok_or_else(|| no_value(kind))?,
                    Kind::Min => *run.iter().min().ok_or_else(|| no_value(kind))?,
                    Kind::L2 | Kind::All | Kind::Any => return Err(format!("{kind:?} of integers")),
                })
            }
        }
    )*};
}
int_reduce!(i8 i16 i32 i64 u8 u16 u32 u64);

/// |x|, wrapping (for the minimum signed value); the identity for unsigned types.
#[allow(unused_comparisons)]
fn abs<T: crate::num::Int>(x: T) -> T {
    if x.is_negative() {
        T::ZERO.wrapping_sub(x)
    } else {
        x
    }
}

/// Pairwise sum of `n` terms `f(i)`: halves recursively below, a plain loop for short runs.
fn pairwise(n: usize, f: &impl Fn(usize) -> f64, at: usize) -> f64 {
    if n <= 64 {
        return (at..at + n).map(f).sum();
    }
    let h = n / 2;
    pairwise(h, f, at) + pairwise(n - h, f, at + h)
}

/// A float reduction in f64, given the values as f64.
fn float_reduce(kind: Kind, n: usize, x: impl Fn(usize) -> f64) -> Result<f64, String> {
    Ok(match kind {
        Kind::Sum => pairwise(n, &x, 0),
        Kind::Mean => pairwise(n, &x, 0) / n as f64,
        Kind::L1 => pairwise(n, &|i| x(i).abs(), 0),
        Kind::L2 => pairwise(n, &|i| x(i) * x(i), 0).sqrt(),
        Kind::Prod => (0..n).map(&x).product(),
        Kind::Max | Kind::Min => {
            if n == 0 {
                return Err(no_value(kind));
            }
            let max = kind == Kind::Max;
            (1..n).map(&x).fold(x(0), |a, b| {
                if a.is_nan() || b.is_nan() {
                    f64::NAN
                } else if a == b {
                    // -0 and +0: max is +0, min is -0.
                    if max == (a.is_sign_negative()) { b } else { a }
                } else if (b > a) == max {
                    b
                } else {
                    a
                }
            })
        }
        Kind::All | Kind::Any => return Err(format!("{kind:?} of floats")),
    })
}

macro_rules! float_reduce {
    ($($t:ty)*) => {$(
        impl Reducible for $t {
            fn reduce(kind: Kind, run: &[Self]) -> Result<Self, String> {
                let v = float_reduce(kind, run.len(), |i| match run[i].to_num() {
                    Num::Float(f) => f,
                    Num::Int(i) => i as f64,
                })?;
                Ok(<$t>::from_num(Num::Float(v)))
            }
        }
    )*};
}
float_reduce!(f32 half::f16 half::bf16);

impl Reducible for f64 {
    fn reduce(kind: Kind, run: &[Self]) -> Result<Self, String> {
        float_reduce(kind, run.len(), |i| run[i])
    }
}

impl Reducible for bool {
    fn reduce(kind: Kind, run: &[Self]) -> Result<Self, String> {
        match kind {
            Kind::All => Ok(run.iter().all(|&b| b)),
            Kind::Any => Ok(run.iter().any(|&b| b)),
            _ => Err(format!("{kind:?} of booleans")),
        }
    }
}

macro_rules! rows {
    ($($const:ident: $name:literal-$version:literal, $kind:ident, $types:expr;)*) => {
        $(
            pub const $const: OpDef = OpDef {
                name: $name,
                version: $version,
                inputs: Arity::exactly(2),
                outputs: Arity::exactly(1),
                parse: |a: &Attrs| -> Result<Box<dyn Op>, Vec<AttrError>> {
                    let keep_dims = a.bool_or(&["keep_dims"], false).map_err(|e| vec![e])?;
                    Ok(Box::new(Reduce {
                        def: &$const,
                        kind: Kind::$kind,
                        types: $types,
                        keep_dims,
                    }))
                },
            };
        )*
        /// Every reduction's definition, for the registry.
        pub const FAMILY: &[&OpDef] = &[$(&$const),*];
    };
}

rows! {
    REDUCE_SUM: "ReduceSum"-1, Sum, TypeSet::NUMERIC;
    REDUCE_PROD: "ReduceProd"-1, Prod, TypeSet::NUMERIC;
    REDUCE_MEAN: "ReduceMean"-1, Mean, TypeSet::NUMERIC;
    REDUCE_MAX: "ReduceMax"-1, Max, TypeSet::NUMERIC;
    REDUCE_MIN: "ReduceMin"-1, Min, TypeSet::NUMERIC;
    REDUCE_L1: "ReduceL1"-4, L1, TypeSet::NUMERIC;
    REDUCE_L2: "ReduceL2"-4, L2, TypeSet::FLOAT;
    REDUCE_LOGICAL_AND: "ReduceLogicalAnd"-1, All, TypeSet::BOOLEAN;
    REDUCE_LOGICAL_OR: "ReduceLogicalOr"-1, Any, TypeSet::BOOLEAN;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float_rules() {
        assert_eq!(
            float_reduce(Kind::Max, 2, |i| [-0.0, 0.0][i])
                .unwrap()
                .to_bits(),
            0f64.to_bits()
        );
        assert_eq!(
            float_reduce(Kind::Min, 2, |i| [0.0, -0.0][i])
                .unwrap()
                .to_bits(),
            (-0f64).to_bits()
        );
        assert!(
            float_reduce(Kind::Max, 3, |i| [1.0, f64::NAN, 3.0][i])
                .unwrap()
                .is_nan()
        );
        assert!(float_reduce(Kind::Mean, 0, |_| 0.0).unwrap().is_nan());
        assert!(float_reduce(Kind::Max, 0, |_| 0.0).is_err());
        assert_eq!(float_reduce(Kind::Prod, 0, |_| 0.0).unwrap(), 1.0);
    }

    #[test]
    fn integer_rules() {
        assert_eq!(i32::reduce(Kind::Mean, &[-7, 2, 1]).unwrap(), -1);
        assert_eq!(i8::reduce(Kind::Mean, &[100, 100]).unwrap(), 100);
        assert_eq!(i32::reduce(Kind::Prod, &[65536, 65536, 3]).unwrap(), 0);
        assert_eq!(i8::reduce(Kind::L1, &[-128, 1]).unwrap(), -127);
        assert!(u8::reduce(Kind::Max, &[]).is_err());
    }
}
