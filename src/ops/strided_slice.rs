//! StridedSlice-1: a strided slice of the data, numpy's `a[b0:e0:s0, ..., np.newaxis, k, ...]`.
//!
//! Spec: <https://docs.openvino.ai/2026/documentation/openvino-ir-format/operation-sets/operation-specs/movement/strided-slice-1.html>
//!
//! Ports: `data` (any type), `begin`, `end` and optionally `stride` (1-D integer tensors of one
//! length; no stride is 0). Attributes: `begin_mask`, `end_mask` (required), `new_axis_mask`,
//! `shrink_axis_mask`, `ellipsis_mask` (lists of 0 and 1, padded with 0s; at most one
//! ellipsis).
//!
//! Decisions: the slicing is numpy's, as OpenVINO 2026.4's reference computes it (measured:
//! `a[::-1]` with both masks is the whole axis reversed, `a[2:2]` is empty — where the spec
//! page's prose says otherwise); begin and end clamp silently; a shrunk index out of range is
//! an error (E507). Inference needs begin, end and stride known; for a dynamic dim it gives the
//! interval of sizes the slice can have. Bounds of shape values pass through the data input.

use super::{Arity, AttrError, Attrs, EvalCx, EvalError, InferCx, Op, OpDef};
use crate::shape::dim::MAX_DIM;
use crate::shape::{Dim, PartialShape, TensorType};
use crate::tensor::{Element, Tensor, TypeSet};

#[derive(Clone, Debug, PartialEq)]
pub struct StridedSlice {
    pub begin_mask: Vec<bool>,
    pub end_mask: Vec<bool>,
    pub new_axis_mask: Vec<bool>,
    pub shrink_axis_mask: Vec<bool>,
    pub ellipsis_mask: Vec<bool>,
}

pub const DEF: OpDef = OpDef {
    name: "StridedSlice",
    version: 1,
    inputs: Arity::range(3, 4),
    outputs: Arity::exactly(1),
    parse,
};

fn mask(text: &str) -> Result<Vec<bool>, String> {
    super::parse_i64_list(text)?
        .into_iter()
        .map(|v| match v {
            0 => Ok(false),
            1 => Ok(true),
            _ => Err(format!("a mask holds 0s and 1s, not {v}")),
        })
        .collect()
}

fn parse(a: &Attrs) -> Result<Box<dyn Op>, Vec<AttrError>> {
    let (begin_mask, end_mask, new_axis_mask, shrink_axis_mask, ellipsis_mask) = crate::attrs_all!(
        a.parse_required("begin_mask", mask),
        a.parse_required("end_mask", mask),
        a.parse_or("new_axis_mask", Vec::new(), mask),
        a.parse_or("shrink_axis_mask", Vec::new(), mask),
        a.parse_or("ellipsis_mask", Vec::new(), mask),
    )?;
    let ellipsis_mask = ellipsis_mask.unwrap_or_default();
    if ellipsis_mask.iter().filter(|&&b| b).count() > 1 {
        return Err(vec![
            a.invalid("ellipsis_mask", "at most one ellipsis is allowed"),
        ]);
    }
    Ok(Box::new(StridedSlice {
        begin_mask: begin_mask.unwrap_or_default(),
        end_mask: end_mask.unwrap_or_default(),
        new_axis_mask: new_axis_mask.unwrap_or_default(),
        shrink_axis_mask: shrink_axis_mask.unwrap_or_default(),
        ellipsis_mask,
    }))
}

/// What one output dim is.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Axis {
    /// A new dim of 1.
    New,
    /// Input axis `axis` at one index (the dim is removed).
    Index { axis: usize, at: i64 },
    /// Input axis `axis` sliced: python's `begin:end:stride` (`None` for a masked bound).
    Slice {
        axis: usize,
        begin: Option<i64>,
        end: Option<i64>,
        stride: i64,
    },
}

/// The first index and the element count of `begin:end:stride` on a dim of `n` (numpy).
pub(crate) fn range(n: u64, begin: Option<i64>, end: Option<i64>, stride: i64) -> (i64, u64) {
    let n = n.min(MAX_DIM) as i64;
    let adjust = |v: i64| if v < 0 { v.saturating_add(n) } else { v };
    if stride > 0 {
        let b = begin.map_or(0, |v| adjust(v).clamp(0, n));
        let e = end.map_or(n, |v| adjust(v).clamp(0, n));
        let count = if e > b {
            ((e - b) as u64).div_ceil(stride as u64)
        } else {
            0
        };
        (b, count)
    } else {
        let b = begin.map_or(n - 1, |v| adjust(v).clamp(-1, n - 1));
        let e = end.map_or(-1, |v| adjust(v).clamp(-1, n - 1));
        let count = if b > e {
            ((b - e) as u64).div_ceil(stride.unsigned_abs())
        } else {
            0
        };
        (b, count)
    }
}

impl StridedSlice {
    /// The plan of every output dim for input rank `rank`, from known begin/end/stride.
    fn plan(
        &self,
        rank: usize,
        begin: &[i64],
        end: &[i64],
        stride: &[i64],
    ) -> Result<Vec<Axis>, String> {
        let m = begin.len();
        if end.len() != m || stride.len() != m {
            return Err(format!(
                "begin, end and stride must have one length, not {}, {} and {}",
                m,
                end.len(),
                stride.len()
            ));
        }
        if let Some(k) = stride.iter().position(|&s| s == 0) {
            return Err(format!("stride element {k} is 0"));
        }
        let bit = |mask: &[bool], i: usize| mask.get(i).copied().unwrap_or(false);
        let consumed = (0..m)
            .filter(|&i| !bit(&self.new_axis_mask, i) && !bit(&self.ellipsis_mask, i))
            .count();
        if consumed > rank {
            return Err(format!(
                "the slice addresses {consumed} dims, but the input has rank {rank}"
            ));
        }
        // An input axis kept whole.
        let whole = |axis| Axis::Slice {
            axis,
            begin: None,
            end: None,
            stride: 1,
        };
        let mut out = Vec::new();
        let mut axis = 0;
        for i in 0..m {
            if bit(&self.new_axis_mask, i) {
                out.push(Axis::New);
            } else if bit(&self.ellipsis_mask, i) {
                out.extend((axis..axis + rank - consumed).map(whole));
                axis += rank - consumed;
            } else if bit(&self.shrink_axis_mask, i) {
                out.push(Axis::Index { axis, at: begin[i] });
                axis += 1;
            } else {
                out.push(Axis::Slice {
                    axis,
                    begin: (!bit(&self.begin_mask, i)).then_some(begin[i]),
                    end: (!bit(&self.end_mask, i)).then_some(end[i]),
                    stride: stride[i],
                });
                axis += 1;
            }
        }
        out.extend((axis..rank).map(whole));
        Ok(out)
    }
}

/// Index `at` of a dim of `n` (negative counts from the end), if it is in range.
fn index(at: i64, n: u64) -> Option<i64> {
    let n = n.min(MAX_DIM) as i64;
    let k = if at < 0 { at + n } else { at };
    (0..n).contains(&k).then_some(k)
}

/// The output dims of `plan` on input dims `dims` (intervals: the sizes the slice can have).
fn out_dims(plan: &[Axis], dims: &[Dim]) -> Result<Vec<Dim>, String> {
    let mut out = Vec::new();
    for a in plan {
        match *a {
            Axis::New => out.push(Dim::fixed(1)),
            Axis::Index { axis, at } => {
                if let Some(n) = dims[axis].get_static()
                    && index(at, n).is_none()
                {
                    return Err(format!("the index {at} is out of range for a dim of {n}"));
                }
            }
            Axis::Slice {
                axis,
                begin,
                end,
                stride,
            } => {
                // A masked bound as the sentinel that means the same (the whole axis that
                // way); on an interval dim, the least and greatest counts over it (the count
                // may shrink as the dim grows: `-3:2` takes 2 of 3 and none of 5).
                let forward = stride > 0;
                let cut = super::slice::Cut {
                    start: begin.unwrap_or(if forward { 0 } else { i64::MAX }),
                    stop: end.unwrap_or(if forward { i64::MAX } else { i64::MIN }),
                    step: stride,
                };
                out.push(super::slice::sliced(dims[axis], cut));
            }
        }
    }
    Ok(out)
}

impl Op for StridedSlice {
    fn def(&self) -> Option<&'static OpDef> {
        Some(&DEF)
    }

    fn infer(&self, cx: &mut InferCx<'_>) -> Option<Vec<TensorType>> {
        cx.require(1..4, TypeSet::INT)?;
        let data = cx.input(0);
        let ty = data.element_type;
        let unknown = || Some(vec![TensorType::new(ty, PartialShape::dynamic_rank())]);
        let (Some(begin), Some(end)) = (cx.ints(1), cx.ints(2)) else {
            return unknown();
        };
        let stride = if cx.has_input(3) {
            match cx.ints(3) {
                Some(s) => s,
                None => return unknown(),
            }
        } else {
            vec![1; begin.len()]
        };
        let Some(dims) = data.shape.dims() else {
            return unknown();
        };
        let plan = match self.plan(dims.len(), &begin, &end, &stride) {
            Ok(p) => p,
            Err(reason) => return cx.invalid(1, reason),
        };
        match out_dims(&plan, dims) {
            Ok(d) => Some(vec![TensorType::new(ty, PartialShape::new(d))]),
            Err(reason) => cx.invalid(1, reason),
        }
    }

    fn eval(&self, cx: &EvalCx<'_>) -> Result<Vec<Tensor>, EvalError> {
        let data = cx.tensor(0)?;
        let (begin, end) = (cx.ints(1)?, cx.ints(2)?);
        let stride = if cx.len() > 3 {
            cx.ints(3)?
        } else {
            vec![1; begin.len()]
        };
        let shape = data.shape().to_vec();
        let plan = self
            .plan(shape.len(), &begin, &end, &stride)
            .map_err(EvalError::Invalid)?;
        let dims = PartialShape::of_tensor(&shape);
        let out = out_dims(&plan, dims.dims().unwrap_or_default()).map_err(EvalError::Invalid)?;
        let total = PartialShape::new(out)
            .to_tensor_dims()
            .and_then(|d| d.iter().try_fold(1usize, |n, &x| n.checked_mul(x)))
            .ok_or(EvalError::Internal("a slice of static dims"))?;
        cx.reserve(data.element_type(), total)?;
        let info: Vec<ndarray::SliceInfoElem> = plan
            .iter()
            .map(|a| match *a {
                Axis::New => ndarray::SliceInfoElem::NewAxis,
                // In range: `out_dims` checked it.
                Axis::Index { axis, at } => ndarray::SliceInfoElem::Index(
                    index(at, shape[axis] as u64).unwrap_or(0) as isize,
                ),
                Axis::Slice {
                    axis,
                    begin,
                    end,
                    stride,
                } => {
                    let (first, count) = range(shape[axis] as u64, begin, end, stride);
                    let count = count as isize;
                    let (first, step) = (first as isize, stride as isize);
                    if count == 0 {
                        ndarray::SliceInfoElem::Slice {
                            start: 0,
                            end: Some(0),
                            step: 1,
                        }
                    } else if step > 0 {
                        ndarray::SliceInfoElem::Slice {
                            start: first,
                            end: Some(first + (count - 1) * step + 1),
                            step,
                        }
                    } else {
                        // ndarray walks a negative step from the end of the range back.
                        ndarray::SliceInfoElem::Slice {
                            start: first + (count - 1) * step,
                            end: Some(first + 1),
                            step,
                        }
                    }
                }
            })
            .collect();
        fn go<T: Element>(t: &Tensor, info: &[ndarray::SliceInfoElem]) -> Option<Tensor> {
            let v = T::view(t)?;
            let s: ndarray::SliceInfo<_, ndarray::IxDyn, ndarray::IxDyn> =
                ndarray::SliceInfo::try_from(info.to_vec()).ok()?;
            Some(T::wrap(v.slice(s).to_owned()))
        }
        crate::dispatch!(any: data.element_type(), T => go::<T>(&data, &info), _ => None)
            .map(|t| vec![t])
            .ok_or(EvalError::Internal("StridedSlice's slice"))
    }

    fn moves(&self, input: usize) -> bool {
        input == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// numpy's slicing, as OpenVINO 2026.4's reference computes it (measured).
    #[test]
    fn ranges_are_numpys() {
        for (n, b, e, s, want) in [
            (4, None, None, -1, (3, 4)),
            (4, Some(2), Some(2), 1, (2, 0)),
            (4, Some(2), Some(3), 1, (2, 1)),
            (4, Some(-1), Some(4), 1, (3, 1)),
            (4, Some(3), Some(0), -1, (3, 3)),
            (4, Some(3), Some(-5), -1, (3, 4)),
            (4, Some(10), Some(20), 1, (4, 0)),
            (4, None, None, -2, (3, 2)),
            (0, None, None, 1, (0, 0)),
            (5, Some(-7), Some(2), 1, (0, 2)),
        ] {
            assert_eq!(range(n, b, e, s), want, "{n} {b:?}:{e:?}:{s}");
        }
    }

    /// On an interval dim the count is not monotone in the dim: `-3:2` takes 2 elements of a
    /// dim of 3 and none of 5 (the bounds were once taken at the interval's ends only).
    #[test]
    fn interval_dims_give_every_count_between() {
        let slice = |begin, end, stride| Axis::Slice {
            axis: 0,
            begin,
            end,
            stride,
        };
        let d = Dim::interval(0, Some(5)).unwrap();
        for (axis, want) in [
            (slice(Some(-3), Some(2), 1), Dim::interval(0, Some(2))),
            (slice(None, None, 1), Some(d)),
            (slice(None, None, -2), Dim::interval(0, Some(3))),
            (slice(Some(1), None, 1), Dim::interval(0, Some(4))),
        ] {
            assert_eq!(
                out_dims(&[axis], &[d]).unwrap(),
                [want.unwrap()],
                "{axis:?}"
            );
        }
        let wide = Dim::interval(2, None).unwrap();
        assert_eq!(
            out_dims(&[slice(None, Some(-1), 1)], &[wide]).unwrap(),
            [Dim::interval(1, None).unwrap()]
        );
    }
}
