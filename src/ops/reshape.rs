//! Reshape-1: the data with a new shape, read from the second input.
//!
//! Spec: <https://docs.openvino.ai/2026/documentation/openvino-ir-format/operation-sets/operation-specs/shape/reshape-1.html>
//!
//! Attributes: `special_zero` (mandatory boolean): a 0 in the target shape copies the input's
//! dim at the same index (else 0 is a zero-size dim). Ports: `data` (any type), `shape` (a 1-D
//! integer tensor); one output.
//!
//! The target may hold one `-1`, the dim that makes the element count match. Inference reads
//! the target's value, or the bounds of its elements (a shape computed from ShapeOf of dynamic
//! dims): a bounded element gives an interval dim, and `-1` gives the interval of element
//! counts that can match. Decisions: a fully static reshape whose counts differ, two `-1`s, or
//! a value below −1 is an error.

use super::{Arity, AttrError, Attrs, EvalCx, EvalError, InferCx, Op, OpDef};
use crate::shape::{Dim, PartialShape, TensorType};
use crate::tensor::{Element, Tensor, TypeSet};

#[derive(Clone, Debug, PartialEq)]
pub struct Reshape {
    pub special_zero: bool,
}

pub const DEF: OpDef = OpDef {
    name: "Reshape",
    version: 1,
    inputs: Arity::exactly(2),
    outputs: Arity::exactly(1),
    parse,
};

fn parse(a: &Attrs) -> Result<Box<dyn Op>, Vec<AttrError>> {
    if a.get("special_zero").is_none() {
        return Err(vec![a.required("special_zero").unwrap_err()]);
    }
    let special_zero = a.bool_or(&["special_zero"], false).map_err(|e| vec![e])?;
    Ok(Box::new(Reshape { special_zero }))
}

/// The output dims for input dims `input` and target elements `target` (each an interval of
/// values, exact ones for a known target).
fn output_dims(
    input: Option<&[Dim]>,
    target: &[(i64, i64)],
    special_zero: bool,
) -> Result<Vec<Dim>, String> {
    const UNBOUNDED: i64 = crate::shape::types::UNBOUNDED;
    let mut dims = Vec::with_capacity(target.len());
    let mut minus_one = None;
    for (k, &(lo, hi)) in target.iter().enumerate() {
        if lo == hi {
            match lo {
                -1 => {
                    if minus_one.replace(k).is_some() {
                        return Err("the target shape holds -1 more than once".into());
                    }
                    dims.push(Dim::DYNAMIC);
                }
                0 if special_zero => match input {
                    Some(d) if k < d.len() => dims.push(d[k]),
                    Some(d) => {
                        return Err(format!(
                            "target element {k} is 0 (special_zero copies input dim {k}), but the input has rank {}",
                            d.len()
                        ));
                    }
                    None => dims.push(Dim::DYNAMIC),
                },
                v if v < -1 => return Err(format!("target element {k} is {v}, below -1")),
                v => dims.push(Dim::fixed(v as u64)),
            }
        } else if lo >= 0 || (lo == -1 && !special_zero) {
            // An interval of sizes (a bound of -1 is treated as unknown).
            let hi = (hi != UNBOUNDED).then_some(hi.max(0) as u64);
            dims.push(Dim::interval(lo.max(0) as u64, hi).unwrap_or(Dim::DYNAMIC));
        } else {
            dims.push(Dim::DYNAMIC);
        }
    }
    if let Some(k) = minus_one {
        let count = input.map(|d| d.iter().fold(Dim::fixed(1), |a, &b| a.times(b)));
        let others = dims
            .iter()
            .enumerate()
            .filter(|&(i, _)| i != k)
            .fold(Dim::fixed(1), |a, (_, &b)| a.times(b));
        dims[k] = match count {
            Some(c) => divide(c, others).ok_or_else(|| {
                format!("the input's {c} elements cannot be reshaped into {others} times a -1 dim")
            })?,
            None => Dim::DYNAMIC,
        };
    } else if let Some(d) = input
        && let (Some(a), Some(b)) = (
            d.iter()
                .map(|x| x.get_static())
                .collect::<Option<Vec<u64>>>(),
            dims.iter()
                .map(|x| x.get_static())
                .collect::<Option<Vec<u64>>>(),
        )
    {
        let (na, nb) = (
            a.iter().try_fold(1u64, |x, &y| x.checked_mul(y)),
            b.iter().try_fold(1u64, |x, &y| x.checked_mul(y)),
        );
        if na != nb {
            return Err(format!(
                "the input has {} elements but the target shape {b:?} has {}",
                na.map_or("too many".into(), |n| n.to_string()),
                nb.map_or("too many".into(), |n| n.to_string())
            ));
        }
    }
    Ok(dims)
}

/// The dim `d` such that `others × d` can be `count` (intervals): `None` when no size fits.
fn divide(count: Dim, others: Dim) -> Option<Dim> {
    if let (Some(c), Some(o)) = (count.get_static(), others.get_static()) {
        if o == 0 {
            return (c == 0).then_some(Dim::DYNAMIC);
        }
        return (c % o == 0).then_some(Dim::fixed(c / o));
    }
    if others.min() == 0 {
        return Some(Dim::DYNAMIC);
    }
    let lo = match others.max() {
        Some(m) if m > 0 => count.min().div_ceil(m),
        _ => 0,
    };
    let hi = count.max().map(|m| m / others.min());
    Some(Dim::interval(lo, hi).unwrap_or(Dim::DYNAMIC))
}

impl Op for Reshape {
    fn def(&self) -> Option<&'static OpDef> {
        Some(&DEF)
    }

    fn infer(&self, cx: &mut InferCx<'_>) -> Option<Vec<TensorType>> {
        let (data, target) = (cx.input(0), cx.input(1));
        cx.require(1..2, TypeSet::INT)?;
        let ty = data.element_type;
        if let Some(r) = target.shape.rank()
            && r != 1
        {
            return cx.invalid(1, format!("the target shape must be 1-D, not rank {r}"));
        }
        let Some(bounds) = target.int_bounds() else {
            // The target's length is the output's rank (a rank beyond any real model's is read as
            // unknown, not allocated).
            let shape = match target.shape.dims() {
                Some([d]) => match d.get_static() {
                    Some(n) if n <= 1024 => PartialShape::new(vec![Dim::DYNAMIC; n as usize]),
                    _ => PartialShape::dynamic_rank(),
                },
                _ => PartialShape::dynamic_rank(),
            };
            return Some(vec![TensorType::new(ty, shape)]);
        };
        let target: Vec<(i64, i64)> = bounds
            .lo
            .iter()
            .copied()
            .zip(bounds.hi.iter().copied())
            .collect();
        match output_dims(data.shape.dims(), &target, self.special_zero) {
            Ok(dims) => Some(vec![TensorType::new(ty, PartialShape::new(dims))]),
            Err(reason) => cx.invalid(1, reason),
        }
    }

    fn eval(&self, cx: &EvalCx<'_>) -> Result<Vec<Tensor>, EvalError> {
        let data = cx.tensor(0)?;
        let shape = self.shape(cx, data.shape())?;
        cx.reserve(data.element_type(), data.len())?;
        reshaped(&data, &shape).map(|t| vec![t])
    }

    fn view_like(&self) -> bool {
        true
    }

    fn view(&self, cx: &EvalCx<'_>) -> Option<Result<Vec<usize>, EvalError>> {
        Some(self.shape(cx, cx.value(0).shape()))
    }

    fn moves(&self, input: usize) -> bool {
        input == 0
    }
}

impl Reshape {
    /// The output's shape for `data` and the target input's value.
    fn shape(&self, cx: &EvalCx<'_>, data: &[usize]) -> Result<Vec<usize>, EvalError> {
        let target = cx.ints(1)?;
        let input = PartialShape::of_tensor(data);
        let exact: Vec<(i64, i64)> = target.iter().map(|&v| (v, v)).collect();
        let dims =
            output_dims(input.dims(), &exact, self.special_zero).map_err(EvalError::Invalid)?;
        PartialShape::new(dims)
            .to_tensor_dims()
            .ok_or(EvalError::Internal(
                "a reshape of static shapes gave a dynamic one",
            ))
    }
}

/// `t`'s elements in row-major order with a new shape of as many elements.
pub fn reshaped(t: &Tensor, shape: &[usize]) -> Result<Tensor, EvalError> {
    fn go<T: Element>(t: &Tensor, shape: &[usize]) -> Option<Tensor> {
        let v = crate::ops::kernel::contiguous::<T>(t)?.into_owned();
        ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(shape), v)
            .ok()
            .map(T::wrap)
    }
    crate::dispatch!(any: t.element_type(), T => go::<T>(t, shape), _ => None).ok_or_else(|| {
        EvalError::Invalid(format!("{:?} cannot be reshaped to {shape:?}", t.shape()))
    })
}
