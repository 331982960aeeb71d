//! TopK-1, TopK-3 and TopK-11: the `k` largest or smallest elements of each slice along an
//! axis, and their indices.
//!
//! Spec: <https://docs.openvino.ai/2026/documentation/openvino-ir-format/operation-sets/operation-specs/sort/top-k-11.html>
//! (and `top-k-3`, `top-k-1`).
//!
//! Ports: `data` (rank ≥ 1; TopK-3 and TopK-11: any numeric type; TopK-1, whose page says
//! "arbitrary tensor": any type ovir computes, boolean included), `k` (a scalar, rank 0;
//! TopK-3 and TopK-11: any integer type; TopK-1: i8, i32 or i64, as OpenVINO checks). Two
//! outputs of the data's shape with dim `axis` replaced by `k`: the values (the data's type)
//! and their indices along the axis (`index_element_type`). Attributes: `axis` (required;
//! negative counts from the end), `mode` (required: `max` or `min`), `sort` (required:
//! `value`, `index` or `none`), `index_element_type` (`i32`, the default, or `i64`), and for
//! TopK-11 `stable` (default false). Enum values are read in any case, as OpenVINO reads them.
//!
//! Order: the elements of a slice are ranked by value (descending for `max`, ascending for
//! `min`), **equal values by their index, lower first**; the top `k` of that ranking are
//! selected. `sort="value"` writes them in ranking order; `sort="index"` in ascending index
//! order. This is OpenVINO's reference comparator (value, then index); it is what
//! `stable="true"` asks for, and ovir uses it for every version and every `stable`, so the
//! output is always deterministic.
//!
//! Decisions:
//! * **`sort="none"` writes the ranking order** (as `sort="value"`): the spec leaves the order
//!   undefined; OpenVINO's reference leaves `nth_element`'s order.
//! * **NaN ranks above +∞** (numpy's sort order; all NaNs equal, so ties among them go by
//!   index): `max` selects NaNs first, `min` last. −0 and +0 are equal. OpenVINO's reference
//!   compares with `>`/`<`, which order nothing against NaN (its result then depends on the
//!   sort algorithm): not copied. Values are copied bit for bit (a NaN keeps its payload).
//! * **k larger than the axis dim is an error** (E507): TopK-11's spec allows `1..=dim` and
//!   leaves the rest undefined; TopK-1/3 say nothing. OpenVINO's shape inference gives the
//!   dim `k` and its reference then fails ("'K' exceeds the dimension of top_k_axis"), as its
//!   CPU plugin does. **A negative k is an error** (OpenVINO's too).
//! * **k = 0 gives empty outputs** (dim 0), as OpenVINO's shape inference says; its reference
//!   instead returns the whole axis, contradicting its own inferred shape: not copied.
//! * `stable="true"` with `sort="none"` is an attribute error, as in OpenVINO.
//! * With `index_element_type="i32"`, an axis longer than 2^31 is an error (an index would not
//!   fit).
//!
//! Inference: a dynamic rank gives dynamic-rank outputs. The axis dim becomes `k` when k's
//! value is known (an error if it exceeds the data dim's upper bound), the interval
//! `max(k_min, 0)..min(k_max, dim_max)` when k has bounds (a shape value), and `0..dim_max`
//! when k is unknown (OpenVINO's last rule; for bounded k it uses the looser
//! `min(dim_min, k_min)` as the lower end). Small known inputs are folded.
//!
//! Execution: each slice's elements are gathered with their indices and a key that orders the
//! type's values exactly (integers as themselves, floats by the order above), the top `k` are
//! found by selection (`select_nth_unstable`, O(dim)) and sorted (O(k log k)); the comparison
//! is a total order, so the result does not depend on the algorithm or the thread count. The
//! outputs (and one work buffer a thread) are checked against the memory budget first; the
//! outer slices run in parallel when the data is large.

use rayon::prelude::*;

use super::{Arity, AttrError, Attrs, EvalCx, EvalError, InferCx, Op, OpDef};
use crate::dtype::ElementType;
use crate::error::ErrorKind;
use crate::num::{Cast, Num};
use crate::shape::types::UNBOUNDED;
use crate::shape::{Dim, PartialShape, TensorType};
use crate::tensor::{Element, Tensor, TypeSet};

/// Which end of the ranking is selected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Max,
    Min,
}

/// The order the selected elements are written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sort {
    Value,
    Index,
    None,
}

fn parse_mode(text: &str) -> Result<Mode, String> {
    match text.trim() {
        t if t.eq_ignore_ascii_case("max") => Ok(Mode::Max),
        t if t.eq_ignore_ascii_case("min") => Ok(Mode::Min),
        _ => Err("expected max or min".into()),
    }
}

fn parse_sort(text: &str) -> Result<Sort, String> {
    match text.trim() {
        t if t.eq_ignore_ascii_case("value") => Ok(Sort::Value),
        t if t.eq_ignore_ascii_case("index") => Ok(Sort::Index),
        t if t.eq_ignore_ascii_case("none") => Ok(Sort::None),
        _ => Err("expected value, index or none".into()),
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct TopK {
    /// 1, 3 or 11.
    pub version: u32,
    pub axis: i64,
    pub mode: Mode,
    pub sort: Sort,
    /// i32 or i64.
    pub index_element_type: ElementType,
    /// TopK-11's attribute (ovir's order is stable whatever it says).
    pub stable: bool,
}

pub const TOP_K_1: OpDef = OpDef {
    name: "TopK",
    version: 1,
    inputs: Arity::exactly(2),
    outputs: Arity::exactly(2),
    parse: parse_1,
};

pub const TOP_K_3: OpDef = OpDef {
    version: 3,
    parse: parse_3,
    ..TOP_K_1
};

pub const TOP_K_11: OpDef = OpDef {
    version: 11,
    parse: parse_11,
    ..TOP_K_1
};

fn parse_1(a: &Attrs) -> Result<Box<dyn Op>, Vec<AttrError>> {
    parse(a, 1)
}

fn parse_3(a: &Attrs) -> Result<Box<dyn Op>, Vec<AttrError>> {
    parse(a, 3)
}

fn parse_11(a: &Attrs) -> Result<Box<dyn Op>, Vec<AttrError>> {
    parse(a, 11)
}

fn parse(a: &Attrs, version: u32) -> Result<Box<dyn Op>, Vec<AttrError>> {
    let stable = if version >= 11 {
        a.bool_or(&["stable"], false)
    } else {
        Ok(false)
    };
    let (axis, mode, sort, index_element_type, stable) = crate::attrs_all!(
        a.parse_required("axis", super::parse_i64),
        a.parse_required("mode", parse_mode),
        a.parse_required("sort", parse_sort),
        a.parse_or("index_element_type", ElementType::I32, |t| {
            super::parse_index_type(t, "TopK")
        }),
        stable,
    )?;
    let (Some(axis), Some(mode), Some(sort), Some(index_element_type), Some(stable)) =
        (axis, mode, sort, index_element_type, stable)
    else {
        return Err(Vec::new());
    };
    if stable && sort == Sort::None {
        return Err(vec![a.invalid(
            "stable",
            "a stable TopK needs sort=\"value\" or sort=\"index\", not \"none\"",
        )]);
    }
    Ok(Box::new(TopK {
        version,
        axis,
        mode,
        sort,
        index_element_type,
        stable,
    }))
}

/// The types `k` may have: TopK-1 takes i8, i32 and i64 (OpenVINO's `k_type_check`).
fn k_type_allowed(version: u32, ty: ElementType) -> bool {
    version != 1 || matches!(ty, ElementType::I8 | ElementType::I32 | ElementType::I64)
}

impl TopK {
    /// The normalized axis of data of rank `rank`, or why there is none.
    fn axis(&self, rank: usize) -> Result<usize, String> {
        if rank == 0 {
            return Err("TopK needs data of rank 1 or more, not a scalar".into());
        }
        super::normalize_axis(self.axis, rank).ok_or_else(|| {
            format!(
                "axis {} is out of range for data of rank {rank} (-{rank}..{rank})",
                self.axis
            )
        })
    }
}

/// `k` too large for the axis: the message inference and execution share.
fn k_exceeds(k: i64, axis: usize, dim: impl std::fmt::Display) -> String {
    format!("k {k} exceeds the data's dim {dim} along axis {axis}")
}

fn k_negative(k: i64) -> String {
    format!("k is {k}; it must be 0 or more")
}

/// The rank of `x`'s values: integers (and booleans) as themselves; floats in numpy's sort
/// order, −0 equal to +0 and every NaN above +∞.
fn key<T: Cast>(x: T) -> i128 {
    match x.to_num() {
        Num::Int(i) => i,
        Num::Float(f) if f.is_nan() => i64::MAX as i128,
        Num::Float(f) => {
            // +0 for −0; then the bits as a signed integer, negatives flipped, are in order.
            let bits = (f + 0.0).to_bits() as i64;
            (if bits < 0 { bits ^ i64::MAX } else { bits }) as i128
        }
    }
}

/// The shape of a slice problem: `outer` blocks of `n` positions along the axis, each
/// position `inner` elements apart; `k` selected.
#[derive(Clone, Copy, Debug)]
struct Geometry {
    outer: usize,
    n: usize,
    inner: usize,
    k: usize,
}

/// Computes the values and indices of every slice (`g.k ≥ 1`, no dim 0).
fn top<T: Cast, U: Element>(
    data: &[T],
    g: Geometry,
    mode: Mode,
    sort: Sort,
    index: impl Fn(usize) -> U + Sync,
    parallel: bool,
) -> (Vec<T>, Vec<U>) {
    let block = g.k * g.inner;
    let mut values = vec![T::default(); g.outer * block];
    let mut indices = vec![U::default(); g.outer * block];
    let rank = |a: &(i128, usize), b: &(i128, usize)| match mode {
        Mode::Max => b.0.cmp(&a.0).then(a.1.cmp(&b.1)),
        Mode::Min => a.0.cmp(&b.0).then(a.1.cmp(&b.1)),
    };
    let one_block = |ws: &mut Vec<(i128, usize)>, o: usize, vals: &mut [T], idx: &mut [U]| {
        let src = &data[o * g.n * g.inner..(o + 1) * g.n * g.inner];
        for i in 0..g.inner {
            ws.clear();
            ws.extend((0..g.n).map(|p| (key(src[p * g.inner + i]), p)));
            if g.k < g.n {
                ws.select_nth_unstable_by(g.k - 1, rank);
                ws.truncate(g.k);
            }
            match sort {
                Sort::Value | Sort::None => ws.sort_unstable_by(rank),
                Sort::Index => ws.sort_unstable_by_key(|e| e.1),
            }
            for (j, &(_, p)) in ws.iter().enumerate() {
                vals[j * g.inner + i] = src[p * g.inner + i];
                idx[j * g.inner + i] = index(p);
            }
        }
    };
    if parallel {
        values
            .par_chunks_mut(block)
            .zip(indices.par_chunks_mut(block))
            .enumerate()
            .for_each_init(
                || Vec::with_capacity(g.n),
                |ws, (o, (v, x))| one_block(ws, o, v, x),
            );
    } else {
        let mut ws = Vec::with_capacity(g.n);
        let blocks = values.chunks_mut(block).zip(indices.chunks_mut(block));
        for (o, (v, x)) in blocks.enumerate() {
            one_block(&mut ws, o, v, x);
        }
    }
    (values, indices)
}

impl Op for TopK {
    fn def(&self) -> Option<&'static OpDef> {
        Some(match self.version {
            1 => &TOP_K_1,
            3 => &TOP_K_3,
            _ => &TOP_K_11,
        })
    }

    fn infer(&self, cx: &mut InferCx<'_>) -> Option<Vec<TensorType>> {
        let data_types = if self.version == 1 {
            TypeSet::ANY
        } else {
            TypeSet::NUMERIC
        };
        cx.require(0..1, data_types)?;
        cx.require(1..2, TypeSet::INT)?;
        let (data, k) = (cx.input(0), cx.input(1));
        if !k_type_allowed(self.version, k.element_type) {
            cx.report_input(
                1,
                ErrorKind::UnsupportedElementType {
                    op: "TopK-1".into(),
                    ty: k.element_type,
                },
            );
            return None;
        }
        if let Some(r) = k.shape.rank()
            && r != 0
        {
            return cx.invalid(1, format!("k must be a scalar (rank 0), not rank {r}"));
        }
        let outputs = |shape: PartialShape| {
            Some(vec![
                TensorType::new(data.element_type, shape.clone()),
                TensorType::new(self.index_element_type, shape),
            ])
        };
        let Some(dims) = data.shape.dims() else {
            return outputs(PartialShape::dynamic_rank());
        };
        let axis = match self.axis(dims.len()) {
            Ok(a) => a,
            Err(reason) => return cx.invalid(0, reason),
        };
        let d = dims[axis];
        let bounds = k.int_bounds();
        let dim = match bounds.as_deref() {
            Some(b) if b.len() == 1 => {
                let (lo, hi) = (b.lo[0], b.hi[0]);
                if hi < 0 {
                    return cx.invalid(1, k_negative(hi));
                }
                if lo > 0 && d.max().is_some_and(|m| lo as u64 > m) {
                    let reason = if lo == hi {
                        k_exceeds(lo, axis, d)
                    } else {
                        format!("k (at least {lo}) exceeds the data's dim {d} along axis {axis}")
                    };
                    return cx.invalid(1, reason);
                }
                let hi = (hi != UNBOUNDED).then_some(hi as u64);
                let upper = match (hi, d.max()) {
                    (Some(a), Some(b)) => Some(a.min(b)),
                    (a, b) => a.or(b),
                };
                // Not empty: lo ≤ hi, and a positive lo is at most the dim's upper bound.
                Dim::interval(lo.max(0) as u64, upper).unwrap_or(Dim::DYNAMIC)
            }
            Some(b) => {
                return cx.invalid(1, format!("k holds {} values, not one", b.len()));
            }
            None => Dim::interval(0, d.max()).unwrap_or(Dim::DYNAMIC),
        };
        let mut out = dims.to_vec();
        out[axis] = dim;
        outputs(PartialShape::new(out))
    }

    fn eval(&self, cx: &EvalCx<'_>) -> Result<Vec<Tensor>, EvalError> {
        let data = cx.tensor(0)?;
        let k_rank = cx.value(1).shape().len();
        if k_rank != 0 {
            return Err(EvalError::Invalid(format!(
                "k must be a scalar (rank 0), not rank {k_rank}"
            )));
        }
        let k = match cx.ints(1)?.as_slice() {
            &[k] => k,
            _ => return Err(EvalError::Invalid("k is not one integer".into())),
        };
        let shape = data.shape().to_vec();
        let axis = self.axis(shape.len()).map_err(EvalError::Invalid)?;
        let n = shape[axis];
        if k < 0 {
            return Err(EvalError::Invalid(k_negative(k)));
        }
        if k as u64 > n as u64 {
            return Err(EvalError::Invalid(k_exceeds(k, axis, n)));
        }
        let k = k as usize;
        let idx_ty = self.index_element_type;
        if idx_ty == ElementType::I32 && k > 0 && n - 1 > i32::MAX as usize {
            return Err(EvalError::Invalid(format!(
                "the data's dim {n} along axis {axis} holds indices that do not fit index_element_type i32"
            )));
        }
        let mut out_shape = shape.clone();
        out_shape[axis] = k;
        // At most the data's element count (k ≤ n).
        let total: usize = out_shape.iter().product();
        let g = Geometry {
            outer: shape[..axis].iter().product(),
            n,
            inner: shape[axis + 1..].iter().product(),
            k,
        };
        let parallel = g.outer > 1 && data.len() >= crate::ops::kernel::PARALLEL_MIN;
        let threads = if parallel {
            rayon::current_num_threads().min(g.outer)
        } else {
            1
        };
        let ty = data.element_type();
        let work = (n as u64)
            .saturating_mul(std::mem::size_of::<(i128, usize)>() as u64)
            .saturating_mul(threads as u64);
        let needed = ty
            .storage_bytes(total as u64)
            .zip(idx_ty.storage_bytes(total as u64))
            .map_or(u64::MAX, |(a, b)| a.saturating_add(b))
            .saturating_add(if total == 0 { 0 } else { work });
        cx.reserve_bytes("TopK's outputs", needed)?;
        fn go<T: Cast>(
            data: &Tensor,
            g: Geometry,
            op: &TopK,
            parallel: bool,
            out_shape: &[usize],
        ) -> Option<Result<Vec<Tensor>, EvalError>> {
            let v = crate::ops::kernel::contiguous::<T>(data)?;
            let total = g.outer * g.k * g.inner;
            let out = |values: Vec<T>, indices: Tensor| {
                Ok(vec![
                    crate::ops::kernel::tensor_from(out_shape, values)?,
                    indices,
                ])
            };
            Some(if total == 0 {
                match op.index_element_type {
                    ElementType::I32 => {
                        crate::ops::kernel::tensor_from(out_shape, Vec::<i32>::new())
                            .and_then(|i| out(Vec::new(), i))
                    }
                    _ => crate::ops::kernel::tensor_from(out_shape, Vec::<i64>::new())
                        .and_then(|i| out(Vec::new(), i)),
                }
            } else if op.index_element_type == ElementType::I32 {
                let (values, indices) = top(&v, g, op.mode, op.sort, |p| p as i32, parallel);
                crate::ops::kernel::tensor_from(out_shape, indices).and_then(|i| out(values, i))
            } else {
                let (values, indices) = top(&v, g, op.mode, op.sort, |p| p as i64, parallel);
                crate::ops::kernel::tensor_from(out_shape, indices).and_then(|i| out(values, i))
            })
        }
        crate::dispatch!(any: ty, T => go::<T>(&data, g, self, parallel, &out_shape), _ => None)
            .unwrap_or(Err(EvalError::UnsupportedType {
                op: "TopK".into(),
                ty,
            }))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use half::{bf16, f16};

    use super::*;
    use crate::memory::Budget;
    use crate::ops::context::{infer_for_test, tensor_for_test};
    use crate::shape::types::Bounds;
    use crate::tensor::Value;

    fn op(version: u32, axis: i64, mode: Mode, sort: Sort) -> TopK {
        TopK {
            version,
            axis,
            mode,
            sort,
            index_element_type: ElementType::I32,
            stable: false,
        }
    }

    fn k_of(k: i64) -> Tensor {
        tensor_for_test(&[], vec![k])
    }

    fn run(op: &TopK, x: &Tensor, k: &Tensor, limit: u64) -> Result<Vec<Tensor>, EvalError> {
        let values = [
            Value::Tensor(Arc::new(x.clone())),
            Value::Tensor(Arc::new(k.clone())),
        ];
        op.eval(&EvalCx::new(&values, Budget { limit, in_use: 0 }))
    }

    /// Values as f64 bits-agnostic text (NaN printed as NaN, −0 as -0) and indices as i64.
    fn show(out: &[Tensor]) -> (Vec<usize>, Vec<String>, Vec<i64>) {
        assert_eq!(out.len(), 2);
        assert_eq!(out[0].shape(), out[1].shape());
        let values: Vec<String> = crate::dispatch!(any: out[0].element_type(), T => {
            out[0].view::<T>().unwrap().iter().map(|v| format!("{v:?}")).collect()
        }, _ => unreachable!());
        (
            out[0].shape().to_vec(),
            values,
            crate::shape::types::int_values(&out[1]).unwrap(),
        )
    }

    fn strs(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    /// A row: mode, sort, k, then the values and indices numpy gives for
    /// `x = [5, 3, 1, 2, 5, 5]` (a stable argsort of `-x` or `x`, first k, then by index for
    /// `sort="index"`).
    type Row = (Mode, Sort, i64, &'static [i32], &'static [i64]);

    const SPEC_EXAMPLE: &[Row] = &[
        (Mode::Max, Sort::Value, 3, &[5, 5, 5], &[0, 4, 5]),
        (Mode::Max, Sort::None, 3, &[5, 5, 5], &[0, 4, 5]),
        (Mode::Max, Sort::Index, 4, &[5, 3, 5, 5], &[0, 1, 4, 5]),
        (Mode::Max, Sort::Value, 4, &[5, 5, 5, 3], &[0, 4, 5, 1]),
        (Mode::Min, Sort::Value, 4, &[1, 2, 3, 5], &[2, 3, 1, 0]),
        (Mode::Min, Sort::None, 4, &[1, 2, 3, 5], &[2, 3, 1, 0]),
        // The spec's stable example.
        (Mode::Min, Sort::Index, 4, &[5, 3, 1, 2], &[0, 1, 2, 3]),
        (Mode::Min, Sort::Value, 1, &[1], &[2]),
        (
            Mode::Max,
            Sort::Value,
            6,
            &[5, 5, 5, 3, 2, 1],
            &[0, 4, 5, 1, 3, 2],
        ),
        (
            Mode::Min,
            Sort::Index,
            6,
            &[5, 3, 1, 2, 5, 5],
            &[0, 1, 2, 3, 4, 5],
        ),
        (Mode::Min, Sort::Value, 0, &[], &[]),
    ];

    #[test]
    fn spec_example_table() {
        let x = tensor_for_test(&[6], vec![5i32, 3, 1, 2, 5, 5]);
        for version in [1, 3, 11] {
            for &(mode, sort, k, values, indices) in SPEC_EXAMPLE {
                let out = run(&op(version, 0, mode, sort), &x, &k_of(k), 1 << 20).unwrap();
                assert_eq!(out[0], tensor_for_test(&[k as usize], values.to_vec()));
                assert_eq!(
                    out[1],
                    tensor_for_test(&[k as usize], indices.iter().map(|&i| i as i32).collect())
                );
            }
        }
    }

    /// A row: axis, mode, sort, k, the output's shape, values and indices.
    type AxisCase = (
        i64,
        Mode,
        Sort,
        i64,
        &'static [usize],
        &'static [i64],
        &'static [i64],
    );

    #[test]
    fn axes_of_higher_rank() {
        let x = tensor_for_test(&[2, 3], vec![1i64, 4, 2, 3, 0, 5]);
        let cases: &[AxisCase] = &[
            (
                0,
                Mode::Max,
                Sort::Value,
                1,
                &[1, 3],
                &[3, 4, 5],
                &[1, 0, 1],
            ),
            (
                -2,
                Mode::Min,
                Sort::Value,
                1,
                &[1, 3],
                &[1, 0, 2],
                &[0, 1, 0],
            ),
            (
                1,
                Mode::Max,
                Sort::Value,
                2,
                &[2, 2],
                &[4, 2, 5, 3],
                &[1, 2, 2, 0],
            ),
            (
                -1,
                Mode::Min,
                Sort::Index,
                2,
                &[2, 2],
                &[1, 2, 3, 0],
                &[0, 2, 0, 1],
            ),
            (
                1,
                Mode::Min,
                Sort::Value,
                3,
                &[2, 3],
                &[1, 2, 4, 0, 3, 5],
                &[0, 2, 1, 1, 0, 2],
            ),
        ];
        for &(axis, mode, sort, k, shape, values, indices) in cases {
            let out = run(&op(3, axis, mode, sort), &x, &k_of(k), 1 << 20).unwrap();
            let want = |v: &[i64]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
            assert_eq!(
                show(&out),
                (shape.to_vec(), want(values), indices.to_vec()),
                "{axis} {mode:?} {sort:?} {k}"
            );
        }
        // [[[3, 8], [1, 9], [2, 7]], [[6, 0], [6, 5], [4, 5]]], axis 1, max, k 2: each of the
        // four slices along the middle axis separately.
        let x = tensor_for_test(&[2, 3, 2], vec![3u8, 8, 1, 9, 2, 7, 6, 0, 6, 5, 4, 5]);
        let out = run(&op(11, 1, Mode::Max, Sort::Value), &x, &k_of(2), 1 << 20).unwrap();
        assert_eq!(
            out[0],
            tensor_for_test(&[2, 2, 2], vec![3u8, 9, 2, 8, 6, 5, 6, 5])
        );
        assert_eq!(
            out[1],
            tensor_for_test(&[2, 2, 2], vec![0i32, 1, 2, 0, 0, 1, 1, 2])
        );
        let out = run(&op(11, 1, Mode::Min, Sort::Index), &x, &k_of(2), 1 << 20).unwrap();
        assert_eq!(
            out[0],
            tensor_for_test(&[2, 2, 2], vec![1u8, 8, 2, 7, 6, 0, 4, 5])
        );
        assert_eq!(
            out[1],
            tensor_for_test(&[2, 2, 2], vec![1i32, 0, 2, 2, 0, 0, 2, 1])
        );
    }

    /// NaN ranks above +∞ (numpy's sort order), ties by index; ±0 are equal and copied bit for
    /// bit.
    #[test]
    fn nan_and_signed_zero_order() {
        let x = [
            1.0f32,
            f32::NAN,
            f32::INFINITY,
            f32::NEG_INFINITY,
            -f32::NAN,
            0.0,
        ];
        let cases: &[(Mode, i64, &[&str], &[i64])] = &[
            (Mode::Max, 3, &["NaN", "NaN", "inf"], &[1, 4, 2]),
            (Mode::Min, 3, &["-inf", "0.0", "1.0"], &[3, 5, 0]),
            (
                Mode::Min,
                6,
                &["-inf", "0.0", "1.0", "inf", "NaN", "NaN"],
                &[3, 5, 0, 2, 1, 4],
            ),
        ];
        let as_f64: Vec<f64> = x.iter().map(|&v| v as f64).collect();
        let as_f16: Vec<f16> = x.iter().map(|&v| f16::from_f32(v)).collect();
        let as_bf16: Vec<bf16> = x.iter().map(|&v| bf16::from_f32(v)).collect();
        for t in [
            tensor_for_test(&[6], x.to_vec()),
            tensor_for_test(&[6], as_f64),
            tensor_for_test(&[6], as_f16),
            tensor_for_test(&[6], as_bf16),
        ] {
            for &(mode, k, values, indices) in cases {
                let out = run(&op(11, 0, mode, Sort::Value), &t, &k_of(k), 1 << 20).unwrap();
                assert_eq!(
                    show(&out),
                    (vec![k as usize], strs(values), indices.to_vec()),
                    "{mode:?} on {}",
                    t.element_type()
                );
            }
        }
        // The NaN's payload and sign are kept.
        let nan = f32::from_bits(0xffc0_1234);
        let t = tensor_for_test(&[3], vec![2.0f32, nan, 3.0]);
        let out = run(&op(1, 0, Mode::Max, Sort::Value), &t, &k_of(1), 1 << 20).unwrap();
        assert_eq!(out[0].to_le_bytes(), nan.to_le_bytes());
        // −0 and +0 are equal: ties by index, each element copied as it is.
        let t = tensor_for_test(&[3], vec![-0.0f32, -1.0, 0.0]);
        let out = run(&op(3, 0, Mode::Max, Sort::Value), &t, &k_of(2), 1 << 20).unwrap();
        assert_eq!(show(&out), (vec![2], strs(&["-0.0", "0.0"]), vec![0, 2]));
        let out = run(&op(3, 0, Mode::Min, Sort::Value), &t, &k_of(2), 1 << 20).unwrap();
        assert_eq!(show(&out), (vec![2], strs(&["-1.0", "-0.0"]), vec![1, 0]));
    }

    /// Integers compare exactly at their extremes; TopK-1 orders booleans too.
    #[test]
    fn integer_extremes_and_booleans() {
        let t = tensor_for_test(&[4], vec![u64::MAX, 0, 1 << 63, u64::MAX - 1]);
        let out = run(&op(3, 0, Mode::Max, Sort::Value), &t, &k_of(2), 1 << 20).unwrap();
        assert_eq!(show(&out).2, vec![0, 3]);
        assert_eq!(out[0], tensor_for_test(&[2], vec![u64::MAX, u64::MAX - 1]));
        let t = tensor_for_test(&[4], vec![i64::MIN + 1, i64::MAX, i64::MIN, -1]);
        let out = run(&op(3, 0, Mode::Min, Sort::Value), &t, &k_of(2), 1 << 20).unwrap();
        assert_eq!(out[0], tensor_for_test(&[2], vec![i64::MIN, i64::MIN + 1]));
        let t = tensor_for_test(&[3], vec![-128i8, 127, 0]);
        let out = run(&op(3, 0, Mode::Max, Sort::Index), &t, &k_of(2), 1 << 20).unwrap();
        assert_eq!(out[0], tensor_for_test(&[2], vec![127i8, 0]));
        let t = tensor_for_test(&[4], vec![false, true, false, true]);
        let out = run(&op(1, 0, Mode::Max, Sort::Value), &t, &k_of(3), 1 << 20).unwrap();
        assert_eq!(out[0], tensor_for_test(&[3], vec![true, true, false]));
        assert_eq!(show(&out).2, vec![1, 3, 0]);
    }

    #[test]
    fn index_element_type_i64() {
        let mut o = op(11, 0, Mode::Max, Sort::Value);
        o.index_element_type = ElementType::I64;
        let t = tensor_for_test(&[3], vec![1u16, 3, 2]);
        let out = run(&o, &t, &tensor_for_test(&[], vec![2u8]), 1 << 20).unwrap();
        assert_eq!(out[1], tensor_for_test(&[2], vec![1i64, 2]));
    }

    #[test]
    fn empty_outputs() {
        // k = 0, and an empty slice count.
        let t = tensor_for_test(&[2, 3], vec![1.0f32; 6]);
        let out = run(&op(11, 1, Mode::Max, Sort::Value), &t, &k_of(0), 1 << 20).unwrap();
        assert_eq!((out[0].shape(), out[1].shape()), (&[2, 0][..], &[2, 0][..]));
        assert_eq!(out[1].element_type(), ElementType::I32);
        let t = tensor_for_test(&[0, 3], Vec::<f32>::new());
        let out = run(&op(11, 1, Mode::Max, Sort::Value), &t, &k_of(2), 1 << 20).unwrap();
        assert_eq!(out[0].shape(), &[0, 2]);
        // An empty axis takes only k = 0.
        let t = tensor_for_test(&[2, 0], Vec::<f32>::new());
        let out = run(&op(11, 1, Mode::Max, Sort::Value), &t, &k_of(0), 1 << 20).unwrap();
        assert_eq!(out[0].shape(), &[2, 0]);
    }

    #[test]
    fn invalid_inputs_are_errors() {
        let x = tensor_for_test(&[2, 3], vec![1i32; 6]);
        let o = op(11, 1, Mode::Max, Sort::Value);
        for (o, x, k, want) in [
            (&o, &x, k_of(4), "k 4 exceeds the data's dim 3 along axis 1"),
            (&o, &x, k_of(-1), "k is -1; it must be 0 or more"),
            (
                &o,
                &x,
                tensor_for_test(&[1], vec![2i64]),
                "k must be a scalar (rank 0), not rank 1",
            ),
            (
                &op(11, 2, Mode::Max, Sort::Value),
                &x,
                k_of(1),
                "axis 2 is out of range for data of rank 2 (-2..2)",
            ),
            (
                &op(11, -3, Mode::Max, Sort::Value),
                &x,
                k_of(1),
                "axis -3 is out of range",
            ),
            (
                &o,
                &tensor_for_test(&[], vec![1i32]),
                k_of(1),
                "TopK needs data of rank 1 or more, not a scalar",
            ),
            (
                &o,
                &tensor_for_test(&[2, 0], Vec::<i32>::new()),
                k_of(1),
                "k 1 exceeds the data's dim 0 along axis 1",
            ),
        ] {
            match run(o, x, &k, 1 << 20) {
                Err(EvalError::Invalid(m)) => assert!(m.contains(want), "{m}"),
                other => panic!("expected {want:?}, got {other:?}"),
            }
        }
        let huge = tensor_for_test(&[], vec![u64::MAX]);
        assert!(run(&o, &x, &huge, 1 << 20).is_err());
    }

    #[test]
    fn outputs_over_the_budget_are_refused() {
        let x = tensor_for_test(&[4, 1000], vec![1.0f32; 4000]);
        let o = op(11, 1, Mode::Max, Sort::Value);
        // Values 4 × 500 × 4 bytes, indices as many, a work buffer of 1000 entries.
        let needed = 8000 + 8000 + 1000 * std::mem::size_of::<(i128, usize)>() as u64;
        assert!(matches!(
            run(&o, &x, &k_of(500), needed - 1),
            Err(EvalError::Memory(_))
        ));
        assert!(run(&o, &x, &k_of(500), needed).is_ok());
    }

    /// A plain model of the rule: a stable sort of each slice by value (NaN largest), the first
    /// k, then by index for `sort="index"`.
    fn model(
        x: &[f32],
        shape: &[usize],
        axis: usize,
        k: usize,
        mode: Mode,
        sort: Sort,
    ) -> (Vec<u32>, Vec<i32>) {
        let outer: usize = shape[..axis].iter().product();
        let n = shape[axis];
        let inner: usize = shape[axis + 1..].iter().product();
        let mut values = vec![0u32; outer * k * inner];
        let mut indices = vec![0i32; outer * k * inner];
        let total = |a: f32, b: f32| match (a.is_nan(), b.is_nan()) {
            (true, true) => std::cmp::Ordering::Equal,
            (true, false) => std::cmp::Ordering::Greater,
            (false, true) => std::cmp::Ordering::Less,
            _ => a.partial_cmp(&b).unwrap(),
        };
        for o in 0..outer {
            for i in 0..inner {
                let at = |p: usize| x[(o * n + p) * inner + i];
                let mut order: Vec<usize> = (0..n).collect();
                order.sort_by(|&a, &b| match mode {
                    Mode::Max => total(at(b), at(a)),
                    Mode::Min => total(at(a), at(b)),
                });
                order.truncate(k);
                if sort == Sort::Index {
                    order.sort();
                }
                for (j, &p) in order.iter().enumerate() {
                    values[(o * k + j) * inner + i] = at(p).to_bits();
                    indices[(o * k + j) * inner + i] = p as i32;
                }
            }
        }
        (values, indices)
    }

    /// Random shapes, axes, k, modes and orders (small integers for many ties, NaNs, ±0),
    /// sequential and parallel, against the model.
    #[test]
    fn random_cases_match_the_model() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = move |m: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % m as u64) as usize
        };
        for case in 0..300 {
            let mut shape: Vec<usize> = (0..1 + next(3)).map(|_| 1 + next(6)).collect();
            if case % 50 == 0 {
                // Large enough for the parallel path.
                shape = vec![64, 40, 30];
            }
            let rank = shape.len();
            let len: usize = shape.iter().product();
            let x: Vec<f32> = (0..len)
                .map(|_| match next(12) {
                    0 => f32::NAN,
                    1 => -0.0,
                    2 => 0.0,
                    v => (v as f32 - 6.0) * 0.5,
                })
                .collect();
            let axis = next(rank);
            let k = next(shape[axis] + 1);
            let mode = if next(2) == 0 { Mode::Max } else { Mode::Min };
            let sort = [Sort::Value, Sort::Index, Sort::None][next(3)];
            let t = tensor_for_test(&shape, x.clone());
            let out = run(
                &op(11, axis as i64 - rank as i64 * next(2) as i64, mode, sort),
                &t,
                &k_of(k as i64),
                1 << 30,
            )
            .unwrap();
            let (values, indices) = model(&x, &shape, axis, k, mode, sort);
            let got: Vec<u32> = out[0]
                .view::<f32>()
                .unwrap()
                .iter()
                .map(|v| v.to_bits())
                .collect();
            assert_eq!(
                got, values,
                "case {case}: {shape:?} axis {axis} k {k} {mode:?} {sort:?}"
            );
            assert_eq!(
                crate::shape::types::int_values(&out[1]).unwrap(),
                indices.iter().map(|&i| i as i64).collect::<Vec<_>>()
            );
        }
    }

    fn parsed(version: u32, attrs: &[(&str, &str)]) -> Result<String, Vec<String>> {
        let def = match version {
            1 => &TOP_K_1,
            3 => &TOP_K_3,
            _ => &TOP_K_11,
        };
        crate::ops::context::parsed_for_test(def, attrs)
    }

    #[test]
    fn parse_table() {
        let base = [("axis", "-1"), ("mode", "max"), ("sort", "value")];
        let want = |version, mode, sort, idx, stable| {
            Ok(format!(
                "{:?}",
                TopK {
                    version,
                    axis: -1,
                    mode,
                    sort,
                    index_element_type: idx,
                    stable,
                }
            ))
        };
        assert_eq!(
            parsed(1, &base),
            want(1, Mode::Max, Sort::Value, ElementType::I32, false)
        );
        assert_eq!(
            parsed(3, &base),
            want(3, Mode::Max, Sort::Value, ElementType::I32, false)
        );
        assert_eq!(
            parsed(11, &base),
            want(11, Mode::Max, Sort::Value, ElementType::I32, false)
        );
        assert_eq!(
            parsed(
                11,
                &[
                    ("axis", "-1"),
                    ("mode", "MIN"),
                    ("sort", "Index"),
                    ("index_element_type", "i64"),
                    ("stable", "true")
                ]
            ),
            want(11, Mode::Min, Sort::Index, ElementType::I64, true)
        );
        assert_eq!(
            parsed(3, &[("axis", "-1"), ("mode", "max"), ("sort", "none")]),
            want(3, Mode::Max, Sort::None, ElementType::I32, false)
        );
        // TopK-1 and TopK-3 have no `stable`.
        assert_eq!(
            parsed(
                3,
                &[
                    ("axis", "-1"),
                    ("mode", "max"),
                    ("sort", "value"),
                    ("stable", "maybe")
                ]
            ),
            want(3, Mode::Max, Sort::Value, ElementType::I32, false)
        );
        assert_eq!(
            parsed(11, &[("axis", "0"), ("mode", "max"), ("sort", "none"), ("stable", "true")]),
            Err(vec!["stable Some(\"true\"): a stable TopK needs sort=\"value\" or sort=\"index\", not \"none\"".into()])
        );
        // Every problem at once.
        assert_eq!(
            parsed(
                11,
                &[
                    ("mode", "largest"),
                    ("sort", "value"),
                    ("index_element_type", "u8"),
                    ("stable", "yes")
                ]
            ),
            Err(vec![
                "axis None: ".into(),
                "mode Some(\"largest\"): expected max or min".into(),
                "index_element_type Some(\"u8\"): TopK's index_element_type is i32 or i64".into(),
                "stable Some(\"yes\"): expected true, false, 1 or 0".into(),
            ])
        );
        assert_eq!(
            parsed(1, &[("axis", "x"), ("mode", "max")]),
            Err(vec![
                "axis Some(\"x\"): expected an integer".into(),
                "sort None: ".into()
            ])
        );
    }

    /// Inference: both outputs' shapes (equal) and types, or the findings.
    fn infer(o: &TopK, data: &TensorType, k: &TensorType) -> Result<String, String> {
        match infer_for_test(o, &[data, k]) {
            (Some(out), _) => {
                assert_eq!(out.len(), 2);
                assert_eq!(out[0].shape, out[1].shape);
                assert_eq!(out[0].element_type, data.element_type);
                assert_eq!(out[1].element_type, o.index_element_type);
                Ok(out[0].shape.to_string())
            }
            (None, findings) => Err(findings
                .iter()
                .map(|(k, port)| format!("{port:?} {k}"))
                .collect::<Vec<_>>()
                .join("; ")),
        }
    }

    fn ty(et: ElementType, shape: &str) -> TensorType {
        TensorType::new(et, PartialShape::parse(shape).unwrap())
    }

    fn k_known(k: i64) -> TensorType {
        TensorType::of_value(k_of(k))
    }

    fn k_bounds(lo: i64, hi: i64) -> TensorType {
        Bounds {
            lo: vec![lo],
            hi: vec![hi],
        }
        .into_type(ElementType::I64, PartialShape::new(vec![]))
    }

    #[test]
    fn infer_table() {
        let f = |s| ty(ElementType::F32, s);
        let unknown = ty(ElementType::I32, "");
        let o = op(11, 1, Mode::Max, Sort::Value);
        let cases: Vec<(TensorType, TensorType, &str)> = vec![
            (f("2,10,3"), k_known(4), "[2,4,3]"),
            (f("2,10,3"), k_known(10), "[2,10,3]"),
            (f("2,10,3"), k_known(0), "[2,0,3]"),
            (f("2,?,3"), k_known(4), "[2,4,3]"),
            (f("?,2..12"), k_known(6), "[?,6]"),
            (f("2,10,3"), unknown.clone(), "[2,..10,3]"),
            (f("2,?,3"), unknown.clone(), "[2,?,3]"),
            (f("2,4..8"), unknown.clone(), "[2,..8]"),
            (f("2,5..,3"), unknown.clone(), "[2,?,3]"),
            (f("2,10"), k_bounds(3, 20), "[2,3..10]"),
            (f("2,30"), k_bounds(3, 20), "[2,3..20]"),
            (f("2,?"), k_bounds(3, UNBOUNDED), "[2,3..]"),
            (f("2,15.."), k_bounds(-2, 20), "[2,..20]"),
            (f("..."), k_known(3), "[...]"),
            (f("..."), ty(ElementType::I32, "..."), "[...]"),
            (f("2,10"), ty(ElementType::I32, "..."), "[2,..10]"),
        ];
        for (data, k, want) in cases {
            assert_eq!(
                infer(&o, &data, &k).as_deref(),
                Ok(want),
                "{} {:?}",
                data.shape,
                k.int_bounds()
            );
        }
        // Negative axes; TopK-1 on booleans.
        let o = op(1, -1, Mode::Min, Sort::Index);
        assert_eq!(
            infer(&o, &ty(ElementType::Boolean, "4,5"), &k_known(2)).as_deref(),
            Ok("[4,2]")
        );
    }

    #[test]
    fn infer_refuses() {
        let f = |s| ty(ElementType::F32, s);
        let o = op(11, 1, Mode::Max, Sort::Value);
        for (o, data, k, want) in [
            (&o, f("2,10"), k_known(11), "Some((Input, 1))"),
            (
                &o,
                f("2,10"),
                k_known(11),
                "k 11 exceeds the data's dim 10 along axis 1",
            ),
            (
                &o,
                f("2,..10"),
                k_known(11),
                "k 11 exceeds the data's dim ..10 along axis 1",
            ),
            (
                &o,
                f("2,10"),
                k_bounds(11, 20),
                "k (at least 11) exceeds the data's dim 10",
            ),
            (&o, f("2,10"), k_known(-1), "k is -1; it must be 0 or more"),
            (
                &o,
                f("2,10"),
                k_bounds(-5, -1),
                "k is -1; it must be 0 or more",
            ),
            (
                &o,
                f("2,10"),
                ty(ElementType::I32, "1"),
                "k must be a scalar (rank 0), not rank 1",
            ),
            (
                &o,
                f(""),
                k_known(1),
                "TopK needs data of rank 1 or more, not a scalar",
            ),
            (
                &op(3, 2, Mode::Max, Sort::Value),
                f("2,10"),
                k_known(1),
                "axis 2 is out of range for data of rank 2",
            ),
            (
                &o,
                f("2,10"),
                ty(ElementType::F32, ""),
                "TopK does not accept f32",
            ),
            (
                &op(3, 0, Mode::Max, Sort::Value),
                ty(ElementType::Boolean, "2"),
                k_known(1),
                "TopK does not accept boolean",
            ),
            (
                &op(1, 0, Mode::Max, Sort::Value),
                f("2"),
                ty(ElementType::U8, ""),
                "TopK-1 does not accept u8",
            ),
            (
                &op(1, 0, Mode::Max, Sort::Value),
                f("2"),
                ty(ElementType::I16, ""),
                "TopK-1 does not accept i16",
            ),
        ] {
            match infer(o, &data, &k) {
                Err(m) => assert!(m.contains(want), "{m}"),
                Ok(s) => panic!("expected {want:?}, got {s}"),
            }
        }
        // TopK-3 takes any integer k.
        let o = op(3, 0, Mode::Max, Sort::Value);
        assert_eq!(
            infer(&o, &f("5"), &ty(ElementType::U8, "")).as_deref(),
            Ok("[..5]")
        );
        assert_eq!(
            infer(
                &op(1, 0, Mode::Max, Sort::Value),
                &f("5"),
                &ty(ElementType::I8, "")
            )
            .as_deref(),
            Ok("[..5]")
        );
    }
}
