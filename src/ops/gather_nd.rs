//! GatherND-5 and GatherND-8: slices of `data` picked by tuples of indices along its leading
//! (non-batch) dims.
//!
//! Spec: <https://docs.openvino.ai/2026/documentation/openvino-ir-format/operation-sets/operation-specs/movement/gather-nd-8.html>
//! (and `gather-nd-5`).
//!
//! Ports: `data` (any type, rank ≥ 1), `indices` (any integer type, rank ≥ 1); one output of the
//! data's type. Attribute: `batch_dims` (`b`, default 0, `0 ≤ b < min(data rank, indices
//! rank)`): the first `b` dims of data and indices are batches. The indices' last dim `k` is
//! the length of each index tuple (`b + k ≤ data rank`); the tuple at indices position
//! `[n..., i...]` (`n` the batch coordinates) picks the slice `data[n..., tuple, :, ...]` of
//! shape `data.shape[b + k:]`. Output shape (GatherND-8):
//! `indices.shape[:b] + indices.shape[b:-1] + data.shape[b + k:]`. GatherND-5 gives the same
//! elements in the same order, but when `b > 1` its output's leading dim is the product of the
//! batch dims: `[prod(indices.shape[:b])] + indices.shape[b:-1] + data.shape[b + k:]` (the
//! spec's own note calls this shape "incorrect" and points to GatherND-8; OpenVINO's shape
//! inference computes it).
//!
//! Decisions:
//! * Indices: GatherND-8 takes `-s..s` for a data dim of size `s` (negative counts from the
//!   end, as its spec says since OpenVINO 2025.3); GatherND-5's spec defines only `0..s`. Any
//!   other index is an error naming its position in the indices and its value (OpenVINO's
//!   reference reads a negative GatherND-5 index from the end too, and does not check the
//!   range at all: it reads out of bounds).
//! * Batch dims of data and indices must be equal, as OpenVINO's shape inference (a merge) and
//!   reference require. The spec pages say "broadcastable", but their output formula takes the
//!   indices' batch dims, which contradicts broadcasting a data batch dim; nothing in OpenVINO
//!   broadcasts them.
//! * A negative `batch_dims` is an attribute error (OpenVINO's is unsigned). A `batch_dims`
//!   not below both ranks, a scalar, tuples longer than the data's dims after the batches, and
//!   differing batch dims are invalid inputs (E507).
//! * `k = 0` (an empty tuple) picks the whole batch's data, as the shape formula says.
//!
//! Inference: OpenVINO's `shape_infer`, on intervals: the batch dims are the intersection of the
//! data's and the indices' (GatherND-5 multiplies them when `b > 1`, interval arithmetic), the
//! rest come from the indices and the data. The output rank is unknown (`...`) unless both
//! ranks and `k` are known; an interval `k` whose least value is already too long is reported.
//! When the indices' value is known (and small, at most 4096 elements), an index out of range
//! for every size its data dim may take is reported at inference. Small known values fold
//! (generic constant folding); bounds of shape values pass through the data input (the op
//! only moves elements).
//!
//! Execution: every index is checked first (the first offending one in row-major order is
//! named, even when the output is empty), the output is checked against the memory budget, the
//! offset of each tuple's slice is computed, then the slices are copied, in parallel for large
//! outputs (each slice independent, so the result does not depend on the thread count). One
//! dispatch on the data's element type; `i64` indices are read in place, other integer types
//! widened once (within the budget).

use super::gather_elements::{
    allowed, index_text, index_values, product, resolve, small_static, surely_out,
};
use super::{Arity, AttrError, Attrs, EvalCx, EvalError, InferCx, Op, OpDef};
use crate::shape::{Dim, PartialShape, TensorType};
use crate::tensor::{Element, Tensor, TypeSet};

#[derive(Clone, Debug, PartialEq)]
pub struct GatherNd {
    /// 5 or 8.
    pub version: u32,
    pub batch_dims: u64,
}

pub const GATHER_ND_5: OpDef = OpDef {
    name: "GatherND",
    version: 5,
    inputs: Arity::exactly(2),
    outputs: Arity::exactly(1),
    parse: parse_5,
};

pub const GATHER_ND_8: OpDef = OpDef {
    version: 8,
    parse: parse_8,
    ..GATHER_ND_5
};

fn parse_batch_dims(text: &str) -> Result<u64, String> {
    match super::parse_i64(text)? {
        v if v < 0 => Err(format!("batch_dims must be 0 or more, not {v}")),
        v => Ok(v as u64),
    }
}

fn parse(a: &Attrs, version: u32) -> Result<Box<dyn Op>, Vec<AttrError>> {
    let (batch_dims,) = crate::attrs_all!(a.parse_or("batch_dims", 0, parse_batch_dims))?;
    Ok(Box::new(GatherNd {
        version,
        batch_dims: batch_dims.unwrap_or(0),
    }))
}

fn parse_5(a: &Attrs) -> Result<Box<dyn Op>, Vec<AttrError>> {
    parse(a, 5)
}

fn parse_8(a: &Attrs) -> Result<Box<dyn Op>, Vec<AttrError>> {
    parse(a, 8)
}

impl GatherNd {
    fn b(&self) -> usize {
        usize::try_from(self.batch_dims).unwrap_or(usize::MAX)
    }

    /// Whether negative indices count from the end (GatherND-8).
    fn negative(&self) -> bool {
        self.version >= 8
    }

    /// The output dims for data of `dd` and indices of `di` (`None`: a dynamic rank; intervals
    /// allowed), or the port and why they do not fit: the checks inference and execution share.
    fn shape(
        &self,
        dd: Option<&[Dim]>,
        di: Option<&[Dim]>,
    ) -> Result<Option<Vec<Dim>>, (usize, String)> {
        let b = self.b();
        for (port, dims, what) in [(0, dd, "data"), (1, di, "indices")] {
            let Some(r) = dims.map(<[Dim]>::len) else {
                continue;
            };
            if r == 0 {
                return Err((
                    port,
                    format!("GatherND needs {what} of rank 1 or more, not a scalar"),
                ));
            }
            if r <= b {
                return Err((
                    port,
                    format!("batch_dims {b} must be less than the {what} rank {r}"),
                ));
            }
        }
        let (Some(dd), Some(di)) = (dd, di) else {
            return Ok(None);
        };
        let mut batch = Vec::with_capacity(b);
        for k in 0..b {
            match dd[k].merge(di[k]) {
                Some(m) => batch.push(m),
                None => {
                    return Err((
                        1,
                        format!(
                            "batch dim {k} of the indices ({}) differs from the data's ({}); GatherND needs them equal",
                            di[k], dd[k]
                        ),
                    ));
                }
            }
        }
        let last = di[di.len() - 1];
        let room = dd.len() - b;
        if last.min() > room as u64 {
            return Err((
                1,
                format!(
                    "the index tuples have {last} elements (the indices' last dim), more than the data's {room} dims after its {b} batch dims"
                ),
            ));
        }
        let Some(k) = last.get_static() else {
            return Ok(None);
        };
        let k = k as usize;
        let mut dims = if self.version < 8 && b > 1 {
            vec![batch.iter().fold(Dim::fixed(1), |p, &d| p.times(d))]
        } else {
            batch
        };
        dims.extend_from_slice(&di[b..di.len() - 1]);
        dims.extend_from_slice(&dd[b + k..]);
        Ok(Some(dims))
    }

    /// The message for index `v` at indices position `at`, out of range for data dim `dim` of
    /// size `size`.
    fn out_of_range(&self, v: &str, at: &[usize], dim: usize, size: Dim) -> String {
        format!(
            "index {v} at indices position {at:?} is out of range for dim {dim} of the data, of size {size}: GatherND-{} takes {}",
            self.version,
            allowed(size, self.negative())
        )
    }
}

impl Op for GatherNd {
    fn def(&self) -> Option<&'static OpDef> {
        Some(if self.version >= 8 {
            &GATHER_ND_8
        } else {
            &GATHER_ND_5
        })
    }

    fn infer(&self, cx: &mut InferCx<'_>) -> Option<Vec<TensorType>> {
        let (data, indices) = (cx.input(0), cx.input(1));
        cx.require(1..2, TypeSet::INT)?;
        let ty = data.element_type;
        let dims = match self.shape(data.shape.dims(), indices.shape.dims()) {
            Ok(Some(dims)) => dims,
            Ok(None) => return Some(vec![TensorType::new(ty, PartialShape::dynamic_rank())]),
            Err((port, reason)) => return cx.invalid(port, reason),
        };
        // Known indices against the data's dims (both ranks are known here).
        if let (Some(ishape), Some(dd)) = (small_static(&indices.shape), data.shape.dims())
            && let Some(values) = cx.ints(1)
            && let Some(&k) = ishape.last()
            && k > 0
        {
            let b = self.b();
            let bad = values
                .iter()
                .enumerate()
                .find(|&(flat, &v)| surely_out(v, dd[b + flat % k], self.negative()));
            if let Some((flat, v)) = bad {
                let at = crate::tensor::unravel(flat, &ishape);
                let dim = b + flat % k;
                return cx.invalid(1, self.out_of_range(&v.to_string(), &at, dim, dd[dim]));
            }
        }
        Some(vec![TensorType::new(ty, PartialShape::new(dims))])
    }

    fn eval(&self, cx: &EvalCx<'_>) -> Result<Vec<Tensor>, EvalError> {
        let data = cx.tensor(0)?;
        let indices = cx.tensor(1)?;
        let (ds, is) = (data.shape(), indices.shape());
        let (pd, pi) = (PartialShape::of_tensor(ds), PartialShape::of_tensor(is));
        self.shape(pd.dims(), pi.dims())
            .map_err(|(_, reason)| EvalError::Invalid(reason))?;
        // Checked above: b < both ranks, and b + k ≤ the data's rank.
        let (b, ri) = (self.b(), is.len());
        let k = is[ri - 1];
        let too_large = || {
            EvalError::Invalid(format!(
                "the output of GatherND on data {ds:?} and indices {is:?} is too large"
            ))
        };
        let mut out_shape = if self.version < 8 && b > 1 {
            vec![product(&is[..b]).ok_or_else(too_large)?]
        } else {
            is[..b].to_vec()
        };
        out_shape.extend_from_slice(&is[b..ri - 1]);
        out_shape.extend_from_slice(&ds[b + k..]);
        let total = product(&out_shape).ok_or_else(too_large)?;

        let idx = index_values(cx, &indices)?;
        let negative = self.negative();
        if k > 0
            && let Some(flat) = idx
                .iter()
                .enumerate()
                .position(|(flat, &v)| resolve(v, ds[b + flat % k] as u64, negative).is_none())
        {
            let dim = b + flat % k;
            return Err(EvalError::Invalid(self.out_of_range(
                &index_text(&indices, flat),
                &crate::tensor::unravel(flat, is),
                dim,
                Dim::fixed(ds[dim] as u64),
            )));
        }
        let ty = data.element_type();
        cx.reserve(ty, total)?;
        if total == 0 {
            let empty = crate::dispatch!(any: ty, T => super::kernel::tensor_from::<T>(&out_shape, Vec::new()), _ => {
                return Err(EvalError::UnsupportedType { op: "GatherND".into(), ty });
            })?;
            return Ok(vec![empty]);
        }
        // The output has elements: so do the batch and slice dims, and every tuple was checked
        // against a dim of at least 1, so the data has elements and the products of its dims
        // below are at most its size.
        let slice = product(&ds[b + k..]).ok_or_else(too_large)?;
        let per_batch = product(&is[b..ri - 1]).ok_or_else(too_large)?;
        let batch_stride = product(&ds[b..]).ok_or_else(too_large)?;
        let strides: Vec<usize> = (0..k)
            .map(|c| product(&ds[b + c + 1..]).ok_or_else(too_large))
            .collect::<Result<_, _>>()?;
        let tuples = total / slice;
        cx.reserve_bytes("the slice offsets", (tuples as u64).saturating_mul(8))?;
        let offsets: Vec<usize> = (0..tuples)
            .map(|t| {
                let tuple = &idx[t * k..(t + 1) * k];
                let within: usize = tuple
                    .iter()
                    .zip(&strides)
                    .enumerate()
                    .map(|(c, (&v, &s))| {
                        resolve(v, ds[b + c] as u64, negative).unwrap_or(0) as usize * s
                    })
                    .sum();
                (t / per_batch) * batch_stride + within
            })
            .collect();
        let out = crate::dispatch!(any: ty, T => copy_slices::<T>(&data, &offsets, slice, &out_shape), _ => {
            return Err(EvalError::UnsupportedType { op: "GatherND".into(), ty });
        })?;
        Ok(vec![out])
    }

    fn moves(&self, input: usize) -> bool {
        input == 0
    }
}

/// The slices of `slice` elements of `data` at `offsets`, one after the other, as a tensor of
/// `shape`.
fn copy_slices<T: Element>(
    data: &Tensor,
    offsets: &[usize],
    slice: usize,
    shape: &[usize],
) -> Result<Tensor, EvalError> {
    let v = super::kernel::contiguous::<T>(data).ok_or(EvalError::Internal("GatherND's data"))?;
    let mut out = vec![T::default(); offsets.len() * slice];
    super::kernel::in_parts(
        &mut out,
        slice,
        |start, part| {
            let first = start / slice;
            for (j, o) in part.chunks_mut(slice).enumerate() {
                let at = offsets[first + j];
                o.copy_from_slice(&v[at..at + slice]);
            }
            None::<()>
        },
        |_| (),
    );
    super::kernel::tensor_from(shape, out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dtype::ElementType;
    use crate::ops::context::{eval_for_test, infer_for_test, tensor_for_test};

    fn t<T: Element>(shape: &[usize], v: Vec<T>) -> Tensor {
        tensor_for_test(shape, v)
    }

    fn op(version: u32, batch_dims: u64) -> GatherNd {
        GatherNd {
            version,
            batch_dims,
        }
    }

    fn run(version: u32, b: u64, data: &Tensor, indices: &Tensor) -> Result<Tensor, EvalError> {
        eval_for_test(&op(version, b), &[data.clone(), indices.clone()], 1 << 26)
    }

    /// `first, first + 1, ...` as i32 in `shape`.
    fn iota(shape: &[usize], first: i32) -> Tensor {
        let n: usize = shape.iter().product();
        t(shape, (first..first + n as i32).collect())
    }

    /// A row: batch_dims, data shape (filled with `1, 2, 3, ...`), indices shape and values, the
    /// output's values, its shape in GatherND-8 and in GatherND-5.
    type Row = (
        u64,
        &'static [usize],
        &'static [usize],
        &'static [i64],
        &'static [i32],
        &'static [usize],
        &'static [usize],
    );

    /// The spec's examples 1 to 7 (data `1, 2, 3, ...` as there), then cases computed by hand
    /// from the spec's formula.
    const TABLE: &[Row] = &[
        (0, &[2, 2], &[2, 2], &[0, 0, 1, 0], &[1, 3], &[2], &[2]),
        (
            0,
            &[2, 2],
            &[2, 1],
            &[1, 0],
            &[3, 4, 1, 2],
            &[2, 2],
            &[2, 2],
        ),
        (
            0,
            &[2, 2],
            &[2, 1, 1],
            &[1, 0],
            &[3, 4, 1, 2],
            &[2, 1, 2],
            &[2, 1, 2],
        ),
        (1, &[2, 2], &[2, 1], &[1, 0], &[2, 3], &[2], &[2]),
        (
            1,
            &[2, 3, 4],
            &[2, 1],
            &[1, 0],
            &[5, 6, 7, 8, 13, 14, 15, 16],
            &[2, 4],
            &[2, 4],
        ),
        (
            2,
            &[2, 3, 4],
            &[2, 3, 1, 1],
            &[1, 0, 2, 0, 2, 2],
            &[2, 5, 11, 13, 19, 23],
            &[2, 3, 1],
            &[6, 1],
        ),
        (
            3,
            &[1, 2, 2, 4],
            &[1, 2, 2, 1],
            &[1, 0, 3, 2],
            &[2, 5, 12, 15],
            &[1, 2, 2],
            &[4],
        ),
        // A full tuple on 3-D data: single elements.
        (
            0,
            &[2, 3, 4],
            &[2, 3],
            &[1, 2, 3, 0, 1, 1],
            &[24, 6],
            &[2],
            &[2],
        ),
        // A 2-tuple on 3-D data: rows, with leading dims.
        (
            0,
            &[2, 3, 4],
            &[1, 2, 2],
            &[1, 0, 0, 2],
            &[13, 14, 15, 16, 9, 10, 11, 12],
            &[1, 2, 4],
            &[1, 2, 4],
        ),
        // An empty tuple: the whole (batch of) data, once per tuple.
        (
            0,
            &[2, 2],
            &[3, 0],
            &[],
            &[1, 2, 3, 4, 1, 2, 3, 4, 1, 2, 3, 4],
            &[3, 2, 2],
            &[3, 2, 2],
        ),
        (
            1,
            &[2, 3],
            &[2, 0],
            &[],
            &[1, 2, 3, 4, 5, 6],
            &[2, 3],
            &[2, 3],
        ),
        // No tuples.
        (0, &[2, 2], &[0, 2], &[], &[], &[0], &[0]),
        // Empty slices: the indices are still checked (see `errors`).
        (0, &[2, 0], &[2, 1], &[1, 0], &[], &[2, 0], &[2, 0]),
        // Batch 1 with two tuples per batch, v5 and v8 alike when b = 1.
        (
            1,
            &[2, 3],
            &[2, 2, 1],
            &[2, 0, 1, 1],
            &[3, 1, 5, 5],
            &[2, 2],
            &[2, 2],
        ),
    ];

    #[test]
    fn eval_table() {
        for (row, &(b, dshape, ishape, indices, want, shape8, shape5)) in TABLE.iter().enumerate() {
            let data = iota(dshape, 1);
            for (version, shape) in [(8, shape8), (5, shape5)] {
                let got = run(version, b, &data, &t(ishape, indices.to_vec()))
                    .unwrap_or_else(|e| panic!("row {row} v{version}: {e}"));
                assert_eq!(got, t(shape, want.to_vec()), "row {row} v{version}");
                // Any integer type of indices gives the same.
                let u8s: Vec<u8> = indices.iter().map(|&v| v as u8).collect();
                let got = run(version, b, &data, &t(ishape, u8s)).unwrap();
                assert_eq!(got, t(shape, want.to_vec()), "row {row} v{version} u8");
            }
        }
    }

    #[test]
    fn negative_indices_count_from_the_end_in_gather_nd_8_only() {
        let data = iota(&[2, 3], 0);
        let indices = t(&[2, 2], vec![-1i64, -3, 0, -1]);
        assert_eq!(run(8, 0, &data, &indices).unwrap(), t(&[2], vec![3, 2]));
        let e = run(5, 0, &data, &indices).unwrap_err();
        assert_eq!(
            e.to_string(),
            "index -1 at indices position [0, 0] is out of range for dim 0 of the data, of size 2: GatherND-5 takes 0 ≤ index < 2"
        );
        // Batched: the tuple indexes the dims after the batch.
        let indices = t(&[2, 1], vec![-1i32, -3]);
        assert_eq!(run(8, 1, &data, &indices).unwrap(), t(&[2], vec![2, 3]));
        // -s is the first; -s - 1 is out of range.
        let e = run(8, 1, &data, &t(&[2, 1], vec![0i8, -4])).unwrap_err();
        assert_eq!(
            e.to_string(),
            "index -4 at indices position [1, 0] is out of range for dim 1 of the data, of size 3: GatherND-8 takes -3 ≤ index < 3"
        );
    }

    #[test]
    fn every_type_moves_bit_for_bit() {
        fn on<T: Element>(f: impl Fn(usize) -> T) {
            let data = t(&[2, 3], (0..6).map(&f).collect());
            let indices = t(&[3, 1], vec![1i64, 0, 1]);
            let want = t(&[3, 3], [3, 4, 5, 0, 1, 2, 3, 4, 5].map(&f).to_vec());
            for version in [5, 8] {
                let got = run(version, 0, &data, &indices).unwrap();
                assert_eq!(got.to_le_bytes(), want.to_le_bytes(), "{}", T::TYPE);
                assert_eq!(got.shape(), [3, 3]);
            }
        }
        on(|i| half::f16::from_bits(0x7e01 + i as u16));
        on(|i| half::bf16::from_f32(i as f32 - 2.5));
        on(|i| if i == 3 { -0.0f32 } else { f32::NAN });
        on(|i| i as f64 * 1e300);
        on(|i| i as i8 - 100);
        on(|i| i as i16 * -1000);
        on(|i| u64::MAX / 7 * i as u64);
        on(|i| i % 2 == 0);
    }

    /// Larger than the parallel threshold: the same as a slice-by-slice loop.
    #[test]
    fn large_outputs_are_exact() {
        // Batches 3, data dims after them [5, 6, 7]; tuples of 2, slices of 7.
        let (batch, tuples) = (3usize, 4000usize);
        let data = iota(&[batch, 5, 6, 7], 0);
        let idx: Vec<i64> = (0..batch * tuples)
            .flat_map(|t| [(t * 7 % 5) as i64, (t * 11 % 6) as i64 - 6 * (t % 2) as i64])
            .collect();
        let indices = t(&[batch, tuples, 2], idx.clone());
        let want: Vec<i32> = (0..batch * tuples)
            .flat_map(|t| {
                let (i, j) = (idx[2 * t] as usize, idx[2 * t + 1].rem_euclid(6) as usize);
                let at = ((t / tuples * 5 + i) * 6 + j) * 7;
                (at..at + 7).map(|v| v as i32)
            })
            .collect();
        let got = run(8, 1, &data, &indices).unwrap();
        assert_eq!(got, t(&[batch, tuples, 7], want));
        // The first bad index in row-major order is named.
        let mut bad = idx.clone();
        bad[9_001] = 6;
        bad[15_000] = 5;
        let e = run(8, 1, &data, &t(&[batch, tuples, 2], bad)).unwrap_err();
        let at = crate::tensor::unravel(9_001, &[batch, tuples, 2]);
        assert_eq!(
            e.to_string(),
            format!(
                "index 6 at indices position {at:?} is out of range for dim 2 of the data, of size 6: GatherND-8 takes -6 ≤ index < 6"
            )
        );
    }

    #[test]
    fn errors() {
        let data = iota(&[2, 3], 0);
        let cases: Vec<(u32, u64, Tensor, &str)> = vec![
            (
                8,
                0,
                t(&[1, 2], vec![0i64, 3]),
                "index 3 at indices position [0, 1] is out of range for dim 1 of the data, of size 3: GatherND-8 takes -3 ≤ index < 3",
            ),
            (
                5,
                0,
                t(&[1, 2], vec![0i32, 3]),
                "index 3 at indices position [0, 1] is out of range for dim 1 of the data, of size 3: GatherND-5 takes 0 ≤ index < 3",
            ),
            (
                8,
                0,
                t(&[1, 1], vec![i64::MIN]),
                "index -9223372036854775808 at indices position [0, 0]",
            ),
            (
                8,
                0,
                t(&[1, 3], vec![0i64, 0, 0]),
                "the index tuples have 3 elements (the indices' last dim), more than the data's 2 dims after its 0 batch dims",
            ),
            (
                8,
                1,
                t(&[2, 2], vec![0i64; 4]),
                "the index tuples have 2 elements (the indices' last dim), more than the data's 1 dims after its 1 batch dims",
            ),
            (
                8,
                1,
                t(&[3, 1], vec![0i64; 3]),
                "batch dim 0 of the indices (3) differs from the data's (2); GatherND needs them equal",
            ),
            (
                5,
                1,
                t(&[1, 1], vec![0i64]),
                "batch dim 0 of the indices (1) differs from the data's (2)",
            ),
            (
                8,
                2,
                t(&[2, 3, 1], vec![0i64; 6]),
                "batch_dims 2 must be less than the data rank 2",
            ),
            (
                8,
                1,
                t(&[2], vec![0i64; 2]),
                "batch_dims 1 must be less than the indices rank 1",
            ),
            (
                8,
                0,
                t(&[], vec![0i64]),
                "GatherND needs indices of rank 1 or more",
            ),
            (
                8,
                u64::MAX,
                t(&[2, 1], vec![0i64; 2]),
                "must be less than the data rank 2",
            ),
        ];
        for (version, b, indices, want) in cases {
            let e = run(version, b, &data, &indices).unwrap_err();
            assert!(e.to_string().contains(want), "{e} / {want}");
            // Inference sees the same (the indices' value known).
            let (out, findings) = infer_for_test(
                &op(version, b),
                &[
                    &TensorType::new(ElementType::I32, PartialShape::of_tensor(data.shape())),
                    &TensorType::of_value(indices),
                ],
            );
            assert!(out.is_none(), "{want}");
            assert!(
                findings.iter().any(|(k, _)| k.to_string().contains(want)),
                "{findings:?} / {want}"
            );
        }
        // Scalar data.
        let e = run(8, 0, &t(&[], vec![1u8]), &t(&[1], vec![0i64])).unwrap_err();
        assert!(e.to_string().contains("data of rank 1 or more"), "{e}");
        // The output is empty, but the indices are still checked.
        let e = run(
            8,
            0,
            &t(&[2, 0], Vec::<f32>::new()),
            &t(&[1, 1], vec![2i64]),
        )
        .unwrap_err();
        assert!(
            e.to_string()
                .starts_with("index 2 at indices position [0, 0]"),
            "{e}"
        );
        // An empty dim indexed: every index is out of range.
        let e = run(
            8,
            0,
            &t(&[0, 2], Vec::<f32>::new()),
            &t(&[1, 1], vec![0i64]),
        )
        .unwrap_err();
        assert!(e.to_string().contains("of size 0"), "{e}");
        // u64 beyond i64, named as written.
        let e = run(8, 0, &data, &t(&[1, 1], vec![u64::MAX])).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("index 18446744073709551615 at indices position [0, 0]"),
            "{e}"
        );
    }

    /// Huge dims of empty tensors do not overflow; large outputs are refused before allocation.
    #[test]
    fn sizes_and_budget() {
        let huge = 1usize << 30;
        // Indices of no elements but huge leading dims, data with an empty slice: empty output.
        let data = t(&[2, 0], Vec::<f32>::new());
        let indices = t(&[huge, huge, 0], Vec::<i64>::new());
        let got = run(8, 0, &data, &indices).unwrap();
        assert_eq!(got.shape(), [huge, huge, 2, 0]);
        // The same with a non-empty slice: the output is too large.
        let data = t(&[16, 16], vec![1.0f32; 256]);
        let e = run(8, 0, &data, &indices).unwrap_err();
        assert!(e.to_string().contains("too large"), "{e}");
        // Over the budget.
        let data = iota(&[4, 1000], 0);
        let indices = t(&[100, 1], vec![1i64; 100]);
        let e = eval_for_test(&op(8, 0), &[data.clone(), indices.clone()], 100_000).unwrap_err();
        assert!(matches!(e, EvalError::Memory(_)), "{e:?}");
        assert!(eval_for_test(&op(8, 0), &[data, indices], 500_000).is_ok());
    }

    fn parsed(def: &OpDef, attrs: &[(&str, &str)]) -> Result<String, Vec<String>> {
        crate::ops::context::parsed_for_test(def, attrs)
    }

    #[test]
    fn parse_table() {
        for (def, version) in [(&GATHER_ND_5, 5), (&GATHER_ND_8, 8)] {
            let ok = |b| Ok(format!("{:?}", op(version, b)));
            assert_eq!(parsed(def, &[]), ok(0));
            assert_eq!(parsed(def, &[("batch_dims", "2")]), ok(2));
            assert_eq!(
                parsed(def, &[("batch_dims", "-1")]),
                Err(vec![
                    "batch_dims Some(\"-1\"): batch_dims must be 0 or more, not -1".into()
                ])
            );
            assert_eq!(
                parsed(def, &[("batch_dims", "one")]),
                Err(vec!["batch_dims Some(\"one\"): expected an integer".into()])
            );
        }
        assert_eq!(
            op(5, 0).def().map(OpDef::title).as_deref(),
            Some("GatherND-5")
        );
        assert_eq!(
            op(8, 0).def().map(OpDef::title).as_deref(),
            Some("GatherND-8")
        );
    }

    fn infer(
        version: u32,
        b: u64,
        data: &str,
        indices: &str,
        ity: ElementType,
    ) -> Result<String, String> {
        let d = TensorType::new(ElementType::F16, PartialShape::parse(data).unwrap());
        let i = TensorType::new(ity, PartialShape::parse(indices).unwrap());
        match infer_for_test(&op(version, b), &[&d, &i]) {
            (Some(out), _) => {
                assert_eq!(out[0].element_type, ElementType::F16);
                Ok(out[0].shape.to_string())
            }
            (None, findings) => Err(findings
                .iter()
                .map(|(k, port)| format!("{port:?} {k}"))
                .collect::<Vec<_>>()
                .join("; ")),
        }
    }

    #[test]
    fn infer_table() {
        // (batch_dims, data, indices, GatherND-8's output, GatherND-5's)
        for (b, data, indices, want8, want5) in [
            // The spec's IR examples.
            (
                0,
                "1000,256,10,15",
                "25,125,3",
                "[25,125,15]",
                "[25,125,15]",
            ),
            (2, "30,2,100,35", "30,2,3,1", "[30,2,3,35]", "[60,3,35]"),
            (3, "1,64,64,320", "1,64,64,1,1", "[1,64,64,1]", "[4096,1]"),
            // Intervals: batch dims merge, the rest pass through.
            (1, "2..4,?,5", "?,3..6,1", "[2..4,3..6,5]", "[2..4,3..6,5]"),
            (2, "2..3,4..5,7", "?,2..,1", "[2..3,4..5]", "[8..15]"),
            (2, "?,3,7", "2..,?,0", "[2..,3,7]", "[6..,7]"),
            (0, "?,?,?", "4..,2", "[4..,?]", "[4..,?]"),
            // Empty tuples.
            (0, "2,3", "4,0", "[4,2,3]", "[4,2,3]"),
            // Unknown ranks or tuple length: unknown output rank.
            (0, "...", "2,3", "[...]", "[...]"),
            (0, "2,3", "...", "[...]", "[...]"),
            (0, "2,3", "4,?", "[...]", "[...]"),
            (0, "2,3", "4,1..2", "[...]", "[...]"),
        ] {
            for (version, want) in [(8, want8), (5, want5)] {
                for ity in [ElementType::I64, ElementType::I32, ElementType::U8] {
                    assert_eq!(
                        infer(version, b, data, indices, ity).as_deref(),
                        Ok(want),
                        "v{version} {b} {data} {indices}"
                    );
                }
            }
        }
        for (b, data, indices, want) in [
            (0, "2,3", "1,3", "the index tuples have 3 elements"),
            (0, "2,3", "1,3..5", "the index tuples have 3..5 elements"),
            (1, "2,3", "?,2", "the index tuples have 2 elements"),
            (
                1,
                "2..3,3",
                "4..,1",
                "batch dim 0 of the indices (4..) differs from the data's (2..3)",
            ),
            (1, "2,3", "3,?", "batch dim 0 of the indices (3) differs"),
            (
                1,
                "2",
                "...",
                "batch_dims 1 must be less than the data rank 1",
            ),
            (
                2,
                "...",
                "2,?",
                "batch_dims 2 must be less than the indices rank 2",
            ),
            (
                0,
                "",
                "...",
                "(Input, 0)) GatherND needs data of rank 1 or more, not a scalar",
            ),
            (
                0,
                "...",
                "",
                "GatherND needs indices of rank 1 or more, not a scalar",
            ),
        ] {
            for version in [5, 8] {
                let got = infer(version, b, data, indices, ElementType::I64).unwrap_err();
                assert!(got.contains(want), "{got} / {want}");
            }
        }
        let got = infer(8, 0, "2", "1", ElementType::F32).unwrap_err();
        assert!(got.contains("GatherND does not accept f32 inputs"), "{got}");
        let got = infer(8, 0, "2", "1", ElementType::Boolean).unwrap_err();
        assert!(got.contains("does not accept boolean"), "{got}");
    }

    /// Known indices are checked against the data's dims, intervals included: only an index out
    /// of range for every size its dim may take is reported.
    #[test]
    fn known_indices_are_checked_at_inference() {
        let check = |version: u32, data: &str, idx: Vec<i64>| {
            let d = TensorType::new(ElementType::F32, PartialShape::parse(data).unwrap());
            let i = TensorType::of_value(t(&[1, idx.len()], idx));
            infer_for_test(&op(version, 0), &[&d, &i])
        };
        assert!(check(8, "2..4,3", vec![3, 0]).0.is_some());
        assert!(check(8, "2..4,3", vec![-4, -3]).0.is_some());
        assert!(check(8, "?,3", vec![1 << 40, 2]).0.is_some());
        assert!(check(5, "?,3", vec![-1, 2]).0.is_none());
        assert!(check(8, "?,3", vec![-1, 3]).0.is_none());
        let (out, findings) = check(8, "2..4,3", vec![-5, 0]);
        assert!(out.is_none());
        assert_eq!(
            findings[0].0.to_string(),
            "index -5 at indices position [0, 0] is out of range for dim 0 of the data, of size 2..4: GatherND-8 takes -s ≤ index < s, the dim s being at most 4"
        );
        let (out, _) = check(8, "2..4,3", vec![4, 0]);
        assert!(out.is_none());
    }

    #[test]
    fn bounds_pass_through_the_data() {
        let o = op(8, 0);
        assert!(o.moves(0) && !o.moves(1));
        // Bounds [2..4, 3, 1..] of a shape value, gathered by [[2], [0]]: each side evaluated.
        let idx = t(&[2, 1], vec![2i64, 0]);
        let lo = run(8, 0, &t(&[3], vec![2i64, 3, 1]), &idx).unwrap();
        let hi = run(8, 0, &t(&[3], vec![4i64, 3, i64::MAX]), &idx).unwrap();
        assert_eq!(lo, t(&[2], vec![1i64, 2]));
        assert_eq!(hi, t(&[2], vec![i64::MAX, 4]));
    }
}
