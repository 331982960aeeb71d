//! Squeeze-1 and Unsqueeze-1: remove or insert dims of size 1.
//!
//! Spec: <https://docs.openvino.ai/2026/documentation/openvino-ir-format/operation-sets/operation-specs/shape/squeeze-1.html>
//! and `unsqueeze-1`.
//!
//! Squeeze: `data` and optionally `axes` (an integer scalar or 1-D tensor; negative counts
//! from the end). With axes, those dims are removed and each must be 1 (a dynamic dim that may
//! be 1 is taken to be 1); without, every dim that is statically 1 is removed (and a dynamic
//! dim that may be 1 makes the output rank unknown). Unsqueeze: `data` and `axes` (indices
//! into the output, negative counting from the output's end); a dim of 1 is inserted at each.
//! Repeated axes count once, as in OpenVINO. No attributes. Types: any.

use super::{Arity, AttrError, Attrs, EvalCx, EvalError, InferCx, Op, OpDef};
use crate::shape::{Dim, PartialShape, TensorType};
use crate::tensor::{Tensor, TypeSet};

#[derive(Clone, Debug, PartialEq)]
pub struct Squeeze {
    /// Unsqueeze rather than Squeeze.
    pub unsqueeze: bool,
}

pub const SQUEEZE: OpDef = OpDef {
    name: "Squeeze",
    version: 1,
    inputs: Arity::range(1, 2),
    outputs: Arity::exactly(1),
    parse: parse_squeeze,
};

pub const UNSQUEEZE: OpDef = OpDef {
    name: "Unsqueeze",
    version: 1,
    inputs: Arity::exactly(2),
    outputs: Arity::exactly(1),
    parse: parse_unsqueeze,
};

fn parse_squeeze(_: &Attrs) -> Result<Box<dyn Op>, Vec<AttrError>> {
    Ok(Box::new(Squeeze { unsqueeze: false }))
}

fn parse_unsqueeze(_: &Attrs) -> Result<Box<dyn Op>, Vec<AttrError>> {
    Ok(Box::new(Squeeze { unsqueeze: true }))
}

/// The output dims, or why there are none. `axes == None`: Squeeze of every 1; `Ok(None)`:
/// the output rank cannot be known.
fn output_dims(
    unsqueeze: bool,
    dims: &[Dim],
    axes: Option<&[i64]>,
) -> Result<Option<Vec<Dim>>, String> {
    if unsqueeze {
        let axes = axes.unwrap_or_default();
        let mut set: Vec<usize> = Vec::new();
        let mut rank = dims.len() + axes.len();
        // Repeated axes count once: the output rank is the input's plus the distinct axes.
        let mut distinct: Vec<i64> = Vec::new();
        for &a in axes {
            let n = super::normalize_axis(a, rank)
                .map(|x| x as i64)
                .unwrap_or(a);
            if !distinct.contains(&n) {
                distinct.push(n);
            }
        }
        rank = dims.len() + distinct.len();
        for &a in axes {
            let k = super::normalize_axis(a, rank)
                .ok_or_else(|| format!("axis {a} is out of range for the output rank {rank}"))?;
            if !set.contains(&k) {
                set.push(k);
            }
        }
        let mut src = dims.iter();
        return Ok(Some(
            (0..rank)
                .map(|k| {
                    if set.contains(&k) {
                        Dim::fixed(1)
                    } else {
                        src.next().copied().unwrap_or(Dim::fixed(1))
                    }
                })
                .collect(),
        ));
    }
    let Some(axes) = axes else {
        if dims.iter().any(|d| !d.is_static() && d.contains(1)) {
            return Ok(None);
        }
        return Ok(Some(
            dims.iter()
                .copied()
                .filter(|d| d.get_static() != Some(1))
                .collect(),
        ));
    };
    let mut remove = Vec::new();
    for &a in axes {
        let k = super::normalize_axis(a, dims.len())
            .ok_or_else(|| format!("axis {a} is out of range for rank {}", dims.len()))?;
        if !dims[k].contains(1) {
            return Err(format!("axis {a} has dim {}, not 1", dims[k]));
        }
        remove.push(k);
    }
    Ok(Some(
        dims.iter()
            .enumerate()
            .filter(|(k, _)| !remove.contains(k))
            .map(|(_, &d)| d)
            .collect(),
    ))
}

impl Squeeze {
    /// The output's shape for `data` and the axes input's value, if any.
    fn shape(&self, cx: &EvalCx<'_>, data: &[usize]) -> Result<Vec<usize>, EvalError> {
        let axes = if cx.len() > 1 {
            Some(cx.ints(1)?)
        } else {
            None
        };
        let dims = PartialShape::of_tensor(data);
        output_dims(
            self.unsqueeze,
            dims.dims().unwrap_or_default(),
            axes.as_deref(),
        )
        .map_err(EvalError::Invalid)?
        .and_then(|out| PartialShape::new(out).to_tensor_dims())
        .ok_or(EvalError::Internal("a squeeze of a static shape"))
    }
}

impl Op for Squeeze {
    fn def(&self) -> Option<&'static OpDef> {
        Some(if self.unsqueeze { &UNSQUEEZE } else { &SQUEEZE })
    }

    fn infer(&self, cx: &mut InferCx<'_>) -> Option<Vec<TensorType>> {
        let data = cx.input(0);
        let ty = data.element_type;
        cx.require(1..2, TypeSet::INT)?;
        if cx.has_input(1)
            && let Some(r) = cx.input(1).shape.rank()
            && r > 1
        {
            return cx.invalid(1, format!("the axes must be a scalar or 1-D, not rank {r}"));
        }
        let axes = if cx.has_input(1) {
            match cx.ints(1) {
                Some(v) => Some(v),
                None => return Some(vec![TensorType::new(ty, PartialShape::dynamic_rank())]),
            }
        } else {
            None
        };
        let Some(dims) = data.shape.dims() else {
            return Some(vec![TensorType::new(ty, PartialShape::dynamic_rank())]);
        };
        match output_dims(self.unsqueeze, dims, axes.as_deref()) {
            Ok(Some(d)) => Some(vec![TensorType::new(ty, PartialShape::new(d))]),
            Ok(None) => Some(vec![TensorType::new(ty, PartialShape::dynamic_rank())]),
            Err(reason) => cx.invalid(if cx.has_input(1) { 1 } else { 0 }, reason),
        }
    }

    fn eval(&self, cx: &EvalCx<'_>) -> Result<Vec<Tensor>, EvalError> {
        let data = cx.tensor(0)?;
        let shape = self.shape(cx, data.shape())?;
        cx.reserve(data.element_type(), data.len())?;
        super::reshape::reshaped(&data, &shape).map(|t| vec![t])
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
