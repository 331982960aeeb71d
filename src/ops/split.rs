//! Split-1 and VariadicSplit-1: cut the data along an axis into several outputs.
//!
//! Spec: <https://docs.openvino.ai/2026/documentation/openvino-ir-format/operation-sets/operation-specs/movement/split-1.html>
//! and `variadic-split-1`.
//!
//! Split: attribute `num_splits` (mandatory, positive); ports `data` (any type) and `axis` (an
//! integer scalar; negative counts from the end); `num_splits` outputs, each with the axis dim
//! divided by `num_splits` (which must divide it). VariadicSplit: ports `data`, `axis` and
//! `split_lengths` (a 1-D integer tensor, one element may be −1: the rest); one output per
//! length. Inference needs the axis (and lengths) known for the outputs' dims.

use super::{Arity, AttrError, Attrs, EvalCx, EvalError, InferCx, Op, OpDef};
use crate::shape::{Dim, PartialShape, TensorType};
use crate::tensor::{Element, Tensor, TypeSet};

#[derive(Clone, Debug, PartialEq)]
pub struct Split {
    /// `Some(n)` for Split-1; `None` for VariadicSplit-1.
    pub num_splits: Option<usize>,
}

pub const SPLIT: OpDef = OpDef {
    name: "Split",
    version: 1,
    inputs: Arity::exactly(2),
    outputs: Arity::at_least(1),
    parse: parse_split,
};

pub const VARIADIC_SPLIT: OpDef = OpDef {
    name: "VariadicSplit",
    version: 1,
    inputs: Arity::exactly(3),
    outputs: Arity::at_least(1),
    parse: parse_variadic,
};

fn parse_split(a: &Attrs) -> Result<Box<dyn Op>, Vec<AttrError>> {
    let n = a
        .parse_required("num_splits", |t| match super::parse_u64(t)? {
            0 => Err("num_splits must be at least 1".into()),
            n => usize::try_from(n).map_err(|_| "num_splits is too large".into()),
        })
        .map_err(|e| vec![e])?;
    Ok(Box::new(Split {
        num_splits: Some(n),
    }))
}

fn parse_variadic(_: &Attrs) -> Result<Box<dyn Op>, Vec<AttrError>> {
    Ok(Box::new(Split { num_splits: None }))
}

/// The length of each output along the axis (as dims), for an axis dim `d`.
fn lengths(num_splits: Option<usize>, d: Dim, split: Option<&[i64]>) -> Result<Vec<Dim>, String> {
    if let Some(n) = num_splits {
        let n64 = n as u64;
        return match d.get_static() {
            Some(v) if v % n64 != 0 => Err(format!(
                "the axis dim {v} is not divisible by num_splits {n}"
            )),
            Some(v) => Ok(vec![Dim::fixed(v / n64); n]),
            None => {
                let part = Dim::interval(d.min().div_ceil(n64), d.max().map(|m| m / n64))
                    .unwrap_or(Dim::DYNAMIC);
                Ok(vec![part; n])
            }
        };
    }
    let split = split.unwrap_or_default();
    let mut minus_one = None;
    let mut sum = 0u64;
    for (k, &v) in split.iter().enumerate() {
        match v {
            -1 if minus_one.replace(k).is_some() => {
                return Err("split_lengths holds -1 more than once".into());
            }
            -1 => {}
            v if v < 0 => return Err(format!("split_lengths element {k} is {v}, below -1")),
            v => sum = sum.saturating_add(v as u64),
        }
    }
    let mut out: Vec<Dim> = split.iter().map(|&v| Dim::fixed(v.max(0) as u64)).collect();
    match (minus_one, d.get_static()) {
        (Some(k), Some(total)) => {
            out[k] = Dim::fixed(total.checked_sub(sum).ok_or_else(|| {
                format!("split_lengths sum to {sum}, more than the axis dim {total}")
            })?);
        }
        (Some(k), None) => {
            out[k] = Dim::interval(
                d.min().saturating_sub(sum),
                d.max().map(|m| m.saturating_sub(sum)),
            )
            .unwrap_or(Dim::DYNAMIC);
        }
        (None, Some(total)) if total != sum => {
            return Err(format!(
                "split_lengths sum to {sum}, but the axis dim is {total}"
            ));
        }
        _ => {}
    }
    Ok(out)
}

impl Op for Split {
    fn def(&self) -> Option<&'static OpDef> {
        Some(if self.num_splits.is_some() {
            &SPLIT
        } else {
            &VARIADIC_SPLIT
        })
    }

    fn arity(&self) -> (Arity, Arity) {
        match self.num_splits {
            Some(n) => (Arity::exactly(2), Arity::exactly(n)),
            None => (Arity::exactly(3), Arity::at_least(1)),
        }
    }

    fn infer(&self, cx: &mut InferCx<'_>) -> Option<Vec<TensorType>> {
        cx.require(1..3, TypeSet::INT)?;
        let data = cx.input(0);
        let ty = data.element_type;
        let outputs = cx.outputs();
        let declared_lengths = if self.num_splits.is_none() {
            cx.input(2).shape.dims().and_then(|d| match d {
                [n] => n.get_static(),
                _ => None,
            })
        } else {
            None
        };
        if let Some(n) = declared_lengths
            && n != outputs as u64
        {
            return cx.invalid(
                2,
                format!("split_lengths has {n} elements, but the layer has {outputs} outputs"),
            );
        }
        let unknown = |shape: PartialShape| vec![TensorType::new(ty, shape); outputs];
        let axis = match cx.ints(1).as_deref() {
            Some([a]) => *a,
            Some(_) => return cx.invalid(1, "the axis must hold one value"),
            None => {
                let shape = data
                    .shape
                    .rank()
                    .map_or_else(PartialShape::dynamic_rank, |r| {
                        PartialShape::new(vec![Dim::DYNAMIC; r])
                    });
                return Some(unknown(shape));
            }
        };
        let Some(dims) = data.shape.dims() else {
            return Some(unknown(PartialShape::dynamic_rank()));
        };
        let Some(axis) = super::normalize_axis(axis, dims.len()) else {
            return cx.invalid(
                1,
                format!("axis {axis} is out of range for rank {}", dims.len()),
            );
        };
        let split = if self.num_splits.is_none() {
            match cx.ints(2) {
                Some(v) => Some(v),
                None => {
                    let mut d = dims.to_vec();
                    d[axis] = Dim::DYNAMIC;
                    return Some(unknown(PartialShape::new(d)));
                }
            }
        } else {
            None
        };
        match lengths(self.num_splits, dims[axis], split.as_deref()) {
            Ok(parts) => Some(
                parts
                    .into_iter()
                    .map(|p| {
                        let mut d = dims.to_vec();
                        d[axis] = p;
                        TensorType::new(ty, PartialShape::new(d))
                    })
                    .collect(),
            ),
            Err(reason) => cx.invalid(if self.num_splits.is_some() { 0 } else { 2 }, reason),
        }
    }

    fn eval(&self, cx: &EvalCx<'_>) -> Result<Vec<Tensor>, EvalError> {
        let data = cx.tensor(0)?;
        let axis = match cx.ints(1)?.as_slice() {
            &[a] => a,
            _ => return Err(EvalError::Invalid("the axis must hold one value".into())),
        };
        let shape = data.shape().to_vec();
        let axis = super::normalize_axis(axis, shape.len())
            .ok_or_else(|| EvalError::Invalid(format!("axis {axis} is out of range")))?;
        let split = if self.num_splits.is_none() {
            Some(cx.ints(2)?)
        } else {
            None
        };
        let parts = lengths(
            self.num_splits,
            Dim::fixed(shape[axis] as u64),
            split.as_deref(),
        )
        .map_err(EvalError::Invalid)?;
        cx.reserve(data.element_type(), data.len())?;
        fn go<T: Element>(t: &Tensor, axis: usize, parts: &[usize]) -> Option<Vec<Tensor>> {
            let v = T::view(t)?;
            let mut at = 0;
            let mut out = Vec::with_capacity(parts.len());
            for &len in parts {
                let s = v.slice_axis(ndarray::Axis(axis), ndarray::Slice::from(at..at + len));
                out.push(T::wrap(s.to_owned()));
                at += len;
            }
            Some(out)
        }
        let parts: Vec<usize> = parts
            .iter()
            .map(|d| d.get_static().unwrap_or(0) as usize)
            .collect();
        crate::dispatch!(any: data.element_type(), T => go::<T>(&data, axis, &parts), _ => None)
            .ok_or(EvalError::Internal("Split's outputs"))
    }

    fn moves(&self, input: usize) -> bool {
        input == 0
    }
}
