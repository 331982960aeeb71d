//! Gather-1, Gather-7 and Gather-8: slices of `data` along `axis` picked by `indices`.
//!
//! Spec: <https://docs.openvino.ai/2026/documentation/openvino-ir-format/operation-sets/operation-specs/movement/gather-8.html>
//! (and `gather-7`, `gather-1`).
//!
//! Ports: `data` (any type), `indices` (any integer type, any rank), `axis` (an integer scalar
//! or one-element tensor; negative counts from the end); one output of shape
//! `data.shape[:axis] + indices.shape[batch_dims:] + data.shape[axis + 1:]`.
//! Attributes: Gather-7 and Gather-8 take `batch_dims` (default 0; negative counts from the
//! indices' rank); the first `batch_dims` dims of data and indices are batches.
//!
//! Indices: Gather-8 accepts `-dim..dim` (negative ones count from the end) and fills the
//! output with zeros for an index outside that range, as its spec says. Gather-1 and Gather-7
//! define only `0..dim`: any other index is an error naming the layer and the first offending
//! index (OpenVINO's reference reads a negative one from the end and leaves others undefined).
//!
//! Inference: the axis must be known (a Const, or computed from Consts) for the output's dims;
//! otherwise they are dynamic. Bounds of shape values pass through the data input.
//!
//! Execution: the data is read where it lies (a Const's table is not copied); each output row
//! (the `inner` elements after the axis, for one pick) is one copy, and an output of at least
//! [`PARALLEL_MIN`](super::kernel::PARALLEL_MIN) elements is written in parallel parts of
//! whole rows ([`in_parts`]).

use std::mem::MaybeUninit;

use super::kernel::in_parts;
use super::{Arity, AttrError, Attrs, EvalCx, EvalError, InferCx, Op, OpDef};
use crate::shape::{Dim, PartialShape, TensorType};
use crate::tensor::{Element, Tensor, TypeSet};

#[derive(Clone, Debug, PartialEq)]
pub struct Gather {
    pub version: u32,
    pub batch_dims: i64,
}

pub const DEF_1: OpDef = OpDef {
    name: "Gather",
    version: 1,
    inputs: Arity::exactly(3),
    outputs: Arity::exactly(1),
    parse: parse_1,
};

pub const DEF_7: OpDef = OpDef {
    version: 7,
    parse: parse_7,
    ..DEF_1
};

pub const DEF_8: OpDef = OpDef {
    version: 8,
    parse: parse_8,
    ..DEF_1
};

fn parse_1(_: &Attrs) -> Result<Box<dyn Op>, Vec<AttrError>> {
    Ok(Box::new(Gather {
        version: 1,
        batch_dims: 0,
    }))
}

fn parse_batch(a: &Attrs, version: u32) -> Result<Box<dyn Op>, Vec<AttrError>> {
    let batch_dims = a
        .parse_or("batch_dims", 0, super::parse_i64)
        .map_err(|e| vec![e])?;
    Ok(Box::new(Gather {
        version,
        batch_dims,
    }))
}

fn parse_7(a: &Attrs) -> Result<Box<dyn Op>, Vec<AttrError>> {
    parse_batch(a, 7)
}

fn parse_8(a: &Attrs) -> Result<Box<dyn Op>, Vec<AttrError>> {
    parse_batch(a, 8)
}

/// The axis and batch dims, normalized, for data of rank `data_rank` and indices of rank
/// `indices_rank`.
fn normalize(
    axis: i64,
    batch_dims: i64,
    data_rank: usize,
    indices_rank: usize,
) -> Result<(usize, usize), String> {
    let axis_n = super::normalize_axis(axis, data_rank)
        .ok_or_else(|| format!("axis {axis} is out of range for data of rank {data_rank}"))?;
    let b = if batch_dims < 0 {
        batch_dims + indices_rank as i64
    } else {
        batch_dims
    };
    let limit = data_rank.min(indices_rank) as i64;
    if b < 0 || b > limit || b as usize > axis_n {
        return Err(format!(
            "batch_dims {batch_dims} is out of range (0 to min(data rank, indices rank) = {limit}, and at most the axis {axis_n})"
        ));
    }
    Ok((axis_n, b as usize))
}

impl Op for Gather {
    fn def(&self) -> Option<&'static OpDef> {
        Some(match self.version {
            1 => &DEF_1,
            7 => &DEF_7,
            _ => &DEF_8,
        })
    }

    fn infer(&self, cx: &mut InferCx<'_>) -> Option<Vec<TensorType>> {
        let (data, indices, axis) = (cx.input(0), cx.input(1), cx.input(2));
        cx.require(1..3, TypeSet::INT)?;
        let ty = data.element_type;
        if let Some(r) = axis.shape.rank()
            && r > 1
        {
            return cx.invalid(2, format!("the axis must be a scalar or 1-D, not rank {r}"));
        }
        let (Some(dd), Some(di)) = (data.shape.dims(), indices.shape.dims()) else {
            return Some(vec![TensorType::new(ty, PartialShape::dynamic_rank())]);
        };
        let out_rank = (dd.len() + di.len()).checked_sub(1 + self.batch_dims.max(0) as usize);
        let axis_value = match cx.ints(2).as_deref() {
            Some([a]) => Some(*a),
            Some(v) => return cx.invalid(2, format!("the axis holds {} values, not one", v.len())),
            None => None,
        };
        let Some(a) = axis_value else {
            let shape = match (self.batch_dims < 0, out_rank) {
                (false, Some(r)) => PartialShape::new(vec![Dim::DYNAMIC; r]),
                _ => PartialShape::dynamic_rank(),
            };
            return Some(vec![TensorType::new(ty, shape)]);
        };
        let (axis, b) = match normalize(a, self.batch_dims, dd.len(), di.len()) {
            Ok(v) => v,
            Err(reason) => return cx.invalid(2, reason),
        };
        let mut dims: Vec<Dim> = Vec::new();
        for k in 0..axis {
            if k < b {
                match dd[k].merge(di[k]) {
                    Some(m) => dims.push(m),
                    None => {
                        return cx.invalid(
                            1,
                            format!(
                                "batch dim {k} of the indices ({}) differs from the data's ({})",
                                di[k], dd[k]
                            ),
                        );
                    }
                }
            } else {
                dims.push(dd[k]);
            }
        }
        dims.extend_from_slice(&di[b..]);
        dims.extend_from_slice(&dd[axis + 1..]);
        Some(vec![TensorType::new(ty, PartialShape::new(dims))])
    }

    fn eval(&self, cx: &EvalCx<'_>) -> Result<Vec<Tensor>, EvalError> {
        // The data is read where it lies (a Const's table is not copied).
        let data = cx.value(0);
        let indices = cx.ints(1)?;
        let axis = match cx.ints(2)?.as_slice() {
            &[a] => a,
            _ => return Err(EvalError::Invalid("the axis is not one integer".into())),
        };
        let ishape = cx.value(1).shape().to_vec();
        let dshape = data.shape().to_vec();
        let (axis, b) = normalize(axis, self.batch_dims, dshape.len(), ishape.len())
            .map_err(EvalError::Invalid)?;
        if dshape[..b] != ishape[..b] {
            return Err(EvalError::Invalid(format!(
                "the batch dims of data {dshape:?} and indices {ishape:?} differ"
            )));
        }
        let n = dshape[axis];
        // Every index resolved to a position along the axis, or `None` for zeros (Gather-8).
        let mut picks = Vec::with_capacity(indices.len());
        for (flat, &i) in indices.iter().enumerate() {
            let n_i = n as i64;
            let pick = if (0..n_i).contains(&i) {
                Some(i as usize)
            } else if self.version >= 8 && (-n_i..0).contains(&i) {
                Some((i + n_i) as usize)
            } else if self.version >= 8 {
                None
            } else {
                return Err(EvalError::Invalid(format!(
                    "index {i} at indices element {:?} is out of range 0..{n} (Gather-{} defines no other)",
                    crate::tensor::unravel(flat, &ishape),
                    self.version
                )));
            };
            picks.push(pick);
        }
        let outer: usize = dshape[b..axis].iter().product();
        let batch: usize = dshape[..b].iter().product();
        let inner: usize = dshape[axis + 1..].iter().product();
        let per_batch = picks.len() / batch.max(1);
        let mut out_shape: Vec<usize> = dshape[..axis].to_vec();
        out_shape.extend_from_slice(&ishape[b..]);
        out_shape.extend_from_slice(&dshape[axis + 1..]);
        let total = out_shape
            .iter()
            .try_fold(1usize, |n, &d| n.checked_mul(d))
            .ok_or_else(|| {
                EvalError::Invalid(format!("the output shape {out_shape:?} is too large"))
            })?;
        cx.reserve(data.element_type(), total)?;
        fn go<T: Element + Default>(
            data: &crate::tensor::Value<'_>,
            picks: &[Option<usize>],
            (batch, outer, n, inner, per_batch): (usize, usize, usize, usize, usize),
            out_shape: &[usize],
        ) -> Option<Tensor> {
            let v = crate::ops::kernel::value_data::<T>(data)?;
            let total: usize = out_shape.iter().product();
            let rows = batch * outer * per_batch;
            if rows.checked_mul(inner)? != total {
                return None;
            }
            // Output elements from `start` (whole rows of `inner` elements: the data's row at
            // the pick, or zeros); `Some` if a row is not in the data (not expected: the picks
            // are checked).
            let fill = |start: usize, dst: &mut [MaybeUninit<T>]| -> Option<()> {
                for (r, row) in (start / inner..).zip(dst.chunks_exact_mut(inner)) {
                    let (bt, o, q) = (
                        r / (outer * per_batch),
                        r / per_batch % outer,
                        r % per_batch,
                    );
                    match picks[bt * per_batch + q] {
                        Some(k) => {
                            let base = (bt * outer + o) * n * inner + k * inner;
                            let Some(src) = v.get(base..base + inner) else {
                                return Some(());
                            };
                            // SAFETY: `src` and `row` hold `inner` elements each (`row` is
                            // one of `dst`'s chunks of `inner`); `MaybeUninit<T>` has `T`'s
                            // layout, and the input is not the output.
                            unsafe {
                                std::ptr::copy_nonoverlapping(
                                    src.as_ptr(),
                                    row.as_mut_ptr() as *mut T,
                                    inner,
                                )
                            };
                        }
                        None => row.fill(MaybeUninit::new(T::default())),
                    }
                }
                None
            };
            let mut out: Vec<T> = Vec::with_capacity(total);
            let dst = &mut out.spare_capacity_mut()[..total];
            // Parts of whole rows (an empty output has no rows: nothing to fill).
            if total > 0 && in_parts(dst, inner, fill, |_| ()).is_some() {
                return None;
            }
            // SAFETY: every element was written: each output row by `fill` (checked: `total`
            // is `rows · inner`, parts hold whole rows, and a part that stopped early refused
            // the whole).
            unsafe { out.set_len(total) };
            ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(out_shape), out)
                .ok()
                .map(T::wrap)
        }
        let dims = (batch, outer, n, inner, per_batch);
        crate::dispatch!(any: data.element_type(), T => go::<T>(data, &picks, dims, &out_shape), _ => None)
            .map(|t| vec![t])
            .ok_or(EvalError::Internal("Gather's output size"))
    }

    fn moves(&self, input: usize) -> bool {
        input == 0
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::memory::Budget;
    use crate::ops::context::{f32s_for_test, tensor_for_test};
    use crate::tensor::Value;

    /// Gather-8 with a batch dim, an outer dim and indices out of range (zeros), large enough to
    /// be copied in parallel parts: the elements of a plain loop over the definition, at 1 and
    /// 3 threads (parts end on row boundaries whatever the count), and below the threshold.
    #[test]
    fn parallel_parts_give_the_definitions_elements() {
        for (rows, inner) in [(70, 600), (5, 30_001), (9, 7)] {
            let (batch, outer, n) = (2, 3, 40);
            let data: Vec<f32> = (0..batch * outer * n * inner).map(|i| i as f32).collect();
            let idx: Vec<i64> = (0..batch * rows)
                .map(|i| (i as i64 * 17) % 91 - 45)
                .collect();
            let mut want = Vec::new();
            for bt in 0..batch {
                for o in 0..outer {
                    for &i in &idx[bt * rows..(bt + 1) * rows] {
                        let k = if i < 0 { i + n as i64 } else { i };
                        for e in 0..inner {
                            want.push(if (0..n as i64).contains(&k) {
                                data[((bt * outer + o) * n + k as usize) * inner + e]
                            } else {
                                0.0
                            });
                        }
                    }
                }
            }
            let values = [
                Value::Tensor(Arc::new(tensor_for_test(&[batch, outer, n, inner], data))),
                Value::Tensor(Arc::new(tensor_for_test(&[batch, rows], idx))),
                Value::Tensor(Arc::new(tensor_for_test(&[], vec![2i64]))),
            ];
            let op = Gather {
                version: 8,
                batch_dims: 1,
            };
            let budget = Budget {
                limit: u64::MAX,
                in_use: 0,
            };
            for threads in [1, 3] {
                let pool = rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .build()
                    .unwrap();
                let out = pool
                    .install(|| op.eval(&EvalCx::new(&values, budget)))
                    .unwrap();
                assert_eq!(out[0].shape(), &[batch, outer, rows, inner][..]);
                assert!(
                    f32s_for_test(&out[0]) == want,
                    "{rows} × {inner}, {threads} threads"
                );
            }
        }
    }
}
