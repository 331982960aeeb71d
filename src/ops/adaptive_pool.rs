//! AdaptiveAvgPool-8 and AdaptiveMaxPool-8: pooling over bins that divide each spatial dim
//! into a given number of outputs.
//!
//! Spec: <https://docs.openvino.ai/2026/documentation/openvino-ir-format/operation-sets/operation-specs/pooling/adaptive-avg-pool-8.html>
//! and <https://docs.openvino.ai/2026/documentation/openvino-ir-format/operation-sets/operation-specs/pooling/adaptive-max-pool-8.html>.
//!
//! Ports: `data` of rank 3, 4 or 5 (`[N, C, spatial…]`; f16, bf16, f32, f64, as the spec's
//! "floating-point type"; others are refused, E502) and `output_shape` (i32 or i64, 1-D, one
//! output size per spatial dim; usually a Const). The first output has the data's type and
//! shape `[N, C, output_shape…]`. AdaptiveMaxPool has a second output of the same shape: the
//! index of each maximum in the flattened spatial plane of its `(n, c)` (the spec's range
//! `[0, D·H·W)`, as OpenVINO's reference and CPU plugin compute it), of type
//! `index_element_type` (`i32` or `i64`, the default; anything else is an attribute error).
//!
//! Bins: along a spatial dim of `in` elements pooled to `out`, output `i` covers
//! `floor(i·in/out) ..< ceil((i + 1)·in/out)` (the spec's formulas; computed exactly in
//! integers, where OpenVINO's reference takes the ceiling of a double). Bins may overlap, and
//! `out > in` repeats elements.
//!
//! Decisions:
//! * A negative output size is an invalid input (E507). An output size of 0 gives an empty
//!   output. A spatial dim of 0 with a positive output size is an invalid input (the bins
//!   would be empty; OpenVINO's reference fails an assertion there).
//! * Average: the bin's elements are summed in f64 in a fixed order: row by row in row-major
//!   order (a row is the bin's range along the last dim, contiguous), the elements of a row of
//!   at most 16 one after the other, a longer row by 16 accumulators folded by halves (as
//!   `mvn.rs`'s leaves are) and its sum then added; the total is divided by the count in f64
//!   and rounded once to the type. Each term passes through at most `k` additions (`k = m` for
//!   a bin of `m` elements in rows of at most 16, `⌈w/16⌉ + r + 4` for `r` rows of `w > 16`),
//!   so an f32 output is within half an ulp of the exact mean plus `(k + 1)·2^-53·mean(|x|)`
//!   (tested against a double-double reference; measured within 0.5 ulp + 10^-6); NaN and
//!   ±inf follow IEEE sums (inf − inf is NaN).
//! * Maximum: **NaN propagates**, as numpy's `max` and `argmax` do: a bin holding a NaN gives
//!   its first NaN (in row-major order) and that NaN's index. Otherwise the greatest value,
//!   **ties to the first in row-major order** (−0 and +0 tie, so the first of them is kept);
//!   the value is copied bit for bit. OpenVINO's reference and CPU plugin agree on ties and
//!   −0, but skip a NaN unless it opens the bin (`>` is false against NaN): not copied.
//! * With `index_element_type="i32"`, a spatial plane of more than 2^31 elements is an error
//!   (an index would not fit).
//!
//! Inference: a data rank other than 3, 4 or 5, an `output_shape` that is not 1-D or whose
//! length is not the number of spatial dims are invalid inputs. The output is `[N, C]` of the
//! data (intervals pass through) followed by the output sizes: their values when known, their
//! bounds as interval dims when they come from shapes (ShapeOf), `?` otherwise. When the
//! data's rank is unknown but `output_shape`'s length `k` is, the output has rank `k + 2`.
//!
//! Execution: each output element is computed on its own (its bin read in place), in
//! contiguous parts of the output in parallel when the work (outputs × the largest bin)
//! exceeds 64K elements, so the bits do not depend on the thread count.

use rayon::prelude::*;

use super::kernel::{PARALLEL_MIN, contiguous, tensor_from};
use super::mvn::{LANES, Real, lanes_sum};
use super::{Arity, AttrError, Attrs, EvalCx, EvalError, InferCx, Op, OpDef};
use crate::dtype::ElementType;
use crate::error::ErrorKind;
use crate::shape::{Dim, PartialShape, TensorType};
use crate::tensor::{Element, Tensor, TypeSet};

#[derive(Clone, Debug, PartialEq)]
pub struct AdaptivePool {
    /// `None` for AdaptiveAvgPool; for AdaptiveMaxPool the type of the indices (i32 or i64).
    pub max_indices: Option<ElementType>,
}

pub const ADAPTIVE_AVG_POOL_8: OpDef = OpDef {
    name: "AdaptiveAvgPool",
    version: 8,
    inputs: Arity::exactly(2),
    outputs: Arity::exactly(1),
    parse: parse_avg,
};

pub const ADAPTIVE_MAX_POOL_8: OpDef = OpDef {
    name: "AdaptiveMaxPool",
    version: 8,
    inputs: Arity::exactly(2),
    outputs: Arity::exactly(2),
    parse: parse_max,
};

fn parse_avg(_: &Attrs) -> Result<Box<dyn Op>, Vec<AttrError>> {
    Ok(Box::new(AdaptivePool { max_indices: None }))
}

fn parse_max(a: &Attrs) -> Result<Box<dyn Op>, Vec<AttrError>> {
    let t = a
        .parse_or("index_element_type", ElementType::I64, |t| {
            super::parse_index_type(t, "AdaptiveMaxPool")
        })
        .map_err(|e| vec![e])?;
    Ok(Box::new(AdaptivePool {
        max_indices: Some(t),
    }))
}

impl AdaptivePool {
    fn name(&self) -> &'static str {
        if self.max_indices.is_some() {
            "AdaptiveMaxPool"
        } else {
            "AdaptiveAvgPool"
        }
    }

    /// The outputs of element type `ty` and shape `shape`.
    fn outputs(&self, ty: ElementType, shape: PartialShape) -> Vec<TensorType> {
        let mut out = vec![TensorType::new(ty, shape.clone())];
        if let Some(i) = self.max_indices {
            out.push(TensorType::new(i, shape));
        }
        out
    }
}

fn rank_error(rank: usize) -> String {
    format!("the data must have rank 3, 4 or 5 ([N, C] and 1 to 3 spatial dims), not rank {rank}")
}

fn empty_bins(axis: usize, size: impl std::fmt::Display) -> String {
    format!(
        "the data's spatial dim {axis} (axis {}) is 0, but its output size is {size}: the bins would be empty",
        axis + 2
    )
}

impl Op for AdaptivePool {
    fn def(&self) -> Option<&'static OpDef> {
        Some(if self.max_indices.is_some() {
            &ADAPTIVE_MAX_POOL_8
        } else {
            &ADAPTIVE_AVG_POOL_8
        })
    }

    fn infer(&self, cx: &mut InferCx<'_>) -> Option<Vec<TensorType>> {
        cx.require(0..1, TypeSet::FLOAT)?;
        cx.require(1..2, TypeSet::INT)?;
        let (data, sizes) = (cx.input(0), cx.input(1));
        if !matches!(
            sizes.element_type,
            ElementType::I32 | ElementType::I64 | ElementType::Dynamic
        ) {
            cx.report_input(
                1,
                ErrorKind::UnsupportedElementType {
                    op: self.name().into(),
                    ty: sizes.element_type,
                },
            );
            return None;
        }
        let len = match sizes.shape.dims() {
            Some(&[d]) => d.get_static(),
            Some(_) => {
                return cx.invalid(
                    1,
                    format!("the output shape must be 1-D, not of shape {}", sizes.shape),
                );
            }
            None => None,
        };
        let (n, c, spatial) = match data.shape.dims() {
            Some(dims) => {
                if !(3..=5).contains(&dims.len()) {
                    return cx.invalid(0, rank_error(dims.len()));
                }
                if let Some(k) = len
                    && k != (dims.len() - 2) as u64
                {
                    return cx.invalid(
                        1,
                        format!(
                            "the output shape has {k} sizes, but the data has {} spatial dims",
                            dims.len() - 2
                        ),
                    );
                }
                (dims[0], dims[1], Some(&dims[2..]))
            }
            None => (Dim::DYNAMIC, Dim::DYNAMIC, None),
        };
        let k = match (spatial, len) {
            (Some(s), _) => s.len(),
            (None, Some(k)) if (1..=3).contains(&k) => k as usize,
            (None, Some(k)) => {
                return cx.invalid(
                    1,
                    format!(
                        "the output shape has {k} sizes; the data can have 1 to 3 spatial dims"
                    ),
                );
            }
            (None, None) => {
                return Some(self.outputs(data.element_type, PartialShape::dynamic_rank()));
            }
        };
        let mut dims = vec![n, c];
        match sizes.int_bounds() {
            Some(b) if b.len() == k => {
                for i in 0..k {
                    if b.hi[i] < 0 {
                        return cx.invalid(1, format!("output size {i} is negative ({})", b.hi[i]));
                    }
                    let d = b.dim(i).unwrap_or(Dim::DYNAMIC);
                    if let Some(s) = spatial
                        && s[i].max() == Some(0)
                        && d.min() > 0
                    {
                        return cx.invalid(0, empty_bins(i, d));
                    }
                    dims.push(d);
                }
            }
            Some(b) => {
                return cx.invalid(
                    1,
                    format!(
                        "the output shape has {} sizes, but the data has {k} spatial dims",
                        b.len()
                    ),
                );
            }
            None => dims.extend(std::iter::repeat_n(Dim::DYNAMIC, k)),
        }
        Some(self.outputs(data.element_type, PartialShape::new(dims)))
    }

    fn eval(&self, cx: &EvalCx<'_>) -> Result<Vec<Tensor>, EvalError> {
        let data = cx.tensor(0)?;
        let ty = data.element_type();
        let shape = data.shape().to_vec();
        if !(3..=5).contains(&shape.len()) {
            return Err(EvalError::Invalid(rank_error(shape.len())));
        }
        let k = shape.len() - 2;
        let size_shape = cx.value(1).shape().to_vec();
        if size_shape != [k] {
            return Err(EvalError::Invalid(format!(
                "the output shape must be 1-D with one size per spatial dim ({k}), not of shape {size_shape:?}"
            )));
        }
        let mut out_shape = shape[..2].to_vec();
        for (i, v) in cx.ints(1)?.into_iter().enumerate() {
            let size = usize::try_from(v)
                .map_err(|_| EvalError::Invalid(format!("output size {i} is negative ({v})")))?;
            if shape[2 + i] == 0 && size > 0 {
                return Err(EvalError::Invalid(empty_bins(i, size)));
            }
            out_shape.push(size);
        }
        let total = out_shape
            .iter()
            .try_fold(1usize, |a, &d| a.checked_mul(d))
            .ok_or_else(|| {
                EvalError::Invalid(format!(
                    "the output shape {out_shape:?} has too many elements"
                ))
            })?;
        let plane: usize = shape[2..].iter().product();
        let mut bytes = ty.storage_bytes(total as u64).unwrap_or(u64::MAX);
        if let Some(it) = self.max_indices {
            if it == ElementType::I32 && plane > 1 << 31 {
                return Err(EvalError::Invalid(format!(
                    "the data's spatial plane of {plane} elements holds indices that do not fit index_element_type i32"
                )));
            }
            bytes = bytes.saturating_add(it.storage_bytes(total as u64).unwrap_or(u64::MAX));
        }
        cx.reserve_bytes("output", bytes)?;
        let g = Bins::new(&shape, &out_shape);
        crate::dispatch!(float: ty, T => self.run::<T>(&data, &g, &out_shape),
            _ => Err(EvalError::UnsupportedType { op: self.name().into(), ty }))
    }
}

/// The bins of every spatial dim, the spatial dims padded to three with leading dims of 1.
struct Bins {
    /// `(start, end)` of each output along each spatial dim.
    bins: [Vec<(usize, usize)>; 3],
    /// The data's spatial dims.
    dims: [usize; 3],
    /// Elements of a spatial plane of the data, and of the output.
    plane: usize,
    out_plane: usize,
    /// The output's spatial dims.
    out: [usize; 3],
    /// The element count of the largest bin (at least 1).
    largest: usize,
}

impl Bins {
    /// For data of `shape` (rank 3 to 5) pooled to `out_shape` (a positive output size only
    /// over a positive spatial dim).
    fn new(shape: &[usize], out_shape: &[usize]) -> Bins {
        let pad = 5 - shape.len();
        let mut dims = [1; 3];
        let mut out = [1; 3];
        dims[pad..].copy_from_slice(&shape[2..]);
        out[pad..].copy_from_slice(&out_shape[2..]);
        let bins = std::array::from_fn(|a| {
            let (n, m) = (dims[a] as u128, out[a] as u128);
            (0..out[a] as u128)
                .map(|i| ((i * n / m) as usize, ((i + 1) * n).div_ceil(m) as usize))
                .collect::<Vec<_>>()
        });
        let largest = bins
            .iter()
            .map(|b: &Vec<(usize, usize)>| b.iter().map(|(s, e)| e - s).max().unwrap_or(0))
            .fold(1usize, |a, b| a.saturating_mul(b.max(1)));
        Bins {
            bins,
            dims,
            plane: dims.iter().product(),
            out_plane: out.iter().product(),
            out,
            largest,
        }
    }

    /// Output element `e`'s plane's first element in the data, and its bin along each dim (the
    /// tests' reference for [`each`](Bins::each)).
    #[cfg(test)]
    fn bin(&self, e: usize) -> (usize, [(usize, usize); 3]) {
        let (p, q) = (e / self.out_plane, e % self.out_plane);
        let (i, j, k) = (
            q / (self.out[1] * self.out[2]),
            (q / self.out[2]) % self.out[1],
            q % self.out[2],
        );
        (
            p * self.plane,
            [self.bins[0][i], self.bins[1][j], self.bins[2][k]],
        )
    }

    /// `f(base, bin)` (the bin's plane's first element in the data, and its range along each
    /// dim) for output elements `first..first + count`, in
    /// order, stepping the coordinates instead of dividing for each element.
    #[inline(always)]
    fn each(&self, first: usize, count: usize, mut f: impl FnMut(usize, [(usize, usize); 3])) {
        if count == 0 {
            return;
        }
        let (mut base, q) = (
            (first / self.out_plane) * self.plane,
            first % self.out_plane,
        );
        let mut at = [
            q / (self.out[1] * self.out[2]),
            (q / self.out[2]) % self.out[1],
            q % self.out[2],
        ];
        for _ in 0..count {
            f(base, std::array::from_fn(|a| self.bins[a][at[a]]));
            at[2] += 1;
            if at[2] == self.out[2] {
                at[2] = 0;
                at[1] += 1;
                if at[1] == self.out[1] {
                    at[1] = 0;
                    at[0] += 1;
                    if at[0] == self.out[0] {
                        at[0] = 0;
                        base += self.plane;
                    }
                }
            }
        }
    }

    /// `row(start)` for the first element of each row of the bin (its offset in the plane), in
    /// row-major order, until `row` returns false; each row is the bin's last-dim range.
    #[inline(always)]
    fn rows(&self, bin: &[(usize, usize); 3], mut row: impl FnMut(usize) -> bool) {
        let [(d0, d1), (h0, h1), (w0, _)] = *bin;
        for d in d0..d1 {
            for h in h0..h1 {
                if !row((d * self.dims[1] + h) * self.dims[2] + w0) {
                    return;
                }
            }
        }
    }
}

/// `f(first, values, indices)` over consecutive parts of the outputs (as long as each other),
/// in parallel when the work (outputs × `per` elements read each) is large enough; each output
/// element is computed alone, so the parts do not change the results.
pub(crate) fn for_parts<A: Send, B: Send>(
    a: &mut [A],
    b: &mut [B],
    per: usize,
    f: impl Fn(usize, &mut [A], &mut [B]) + Sync + Send,
) {
    let n = a.len();
    let threads = rayon::current_num_threads();
    if n.saturating_mul(per) < PARALLEL_MIN || threads <= 1 || n < 2 {
        f(0, a, b);
        return;
    }
    let size = n
        .div_ceil(threads * 4)
        .max((PARALLEL_MIN / 4).div_ceil(per))
        .max(1);
    a.par_chunks_mut(size)
        .zip(b.par_chunks_mut(size))
        .enumerate()
        .for_each(|(i, (x, y))| f(i * size, x, y));
}

impl AdaptivePool {
    fn run<T: Real>(
        &self,
        x: &Tensor,
        g: &Bins,
        out_shape: &[usize],
    ) -> Result<Vec<Tensor>, EvalError> {
        let data = contiguous::<T>(x).ok_or(EvalError::Internal("the data's type"))?;
        match self.max_indices {
            None => Ok(vec![average::<T>(&data, g, out_shape)?]),
            Some(ElementType::I32) => maximum::<T, i32>(&data, g, out_shape, |i| i as i32),
            Some(_) => maximum::<T, i64>(&data, g, out_shape, |i| i as i64),
        }
    }
}

fn average<T: Real>(x: &[T], g: &Bins, out_shape: &[usize]) -> Result<Tensor, EvalError> {
    let total: usize = out_shape.iter().product();
    let mut out: Vec<T> = Vec::with_capacity(total);
    let mut none = vec![(); total];
    for_parts(
        &mut out.spare_capacity_mut()[..total],
        &mut none,
        g.largest,
        |first, part, _| {
            let mut outs = part.iter_mut();
            g.each(first, outs.len(), |base, bin| {
                let Some(o) = outs.next() else { return };
                let w = bin[2].1 - bin[2].0;
                let mut sum = 0.0f64;
                g.rows(&bin, |at| {
                    let r = &x[base + at..base + at + w];
                    if w <= LANES {
                        for v in r {
                            sum += v.wide();
                        }
                    } else {
                        sum += lanes_sum(r, |v: T| v.wide());
                    }
                    true
                });
                let count = bin.iter().map(|(s, e)| e - s).product::<usize>();
                o.write(T::narrow(sum / count as f64));
            });
        },
    );
    // SAFETY: every element of every part was written, and the parts cover the output.
    unsafe { out.set_len(total) };
    tensor_from(out_shape, out)
}

fn maximum<T: Real, I: Element>(
    x: &[T],
    g: &Bins,
    out_shape: &[usize],
    index: fn(usize) -> I,
) -> Result<Vec<Tensor>, EvalError> {
    let total: usize = out_shape.iter().product();
    let mut out: Vec<T> = Vec::with_capacity(total);
    let mut idx: Vec<I> = Vec::with_capacity(total);
    for_parts(
        &mut out.spare_capacity_mut()[..total],
        &mut idx.spare_capacity_mut()[..total],
        g.largest,
        |first, vals, inds| {
            let mut outs = vals.iter_mut().zip(inds.iter_mut());
            g.each(first, outs.len(), |base, bin| {
                let Some((o, oi)) = outs.next() else { return };
                let w = bin[2].1 - bin[2].0;
                let mut best: Option<(f64, usize)> = None;
                g.rows(&bin, |at| {
                    for (j, v) in x[base + at..base + at + w].iter().enumerate() {
                        let v = v.wide();
                        match best {
                            Some((b, _)) if !(v.is_nan() || v > b) => {}
                            _ => best = Some((v, at + j)),
                        }
                        if v.is_nan() {
                            return false;
                        }
                    }
                    true
                });
                // Every bin holds at least one element (empty bins were refused).
                let at = best.map_or(0, |(_, at)| at);
                o.write(x[base + at]);
                oi.write(index(at));
            });
        },
    );
    // SAFETY: every element of every part was written, and the parts cover the outputs.
    unsafe {
        out.set_len(total);
        idx.set_len(total);
    }
    Ok(vec![
        tensor_from(out_shape, out)?,
        tensor_from(out_shape, idx)?,
    ])
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use half::{bf16, f16};

    use super::*;
    use crate::memory::Budget;
    use crate::num::{Cast, Num};
    use crate::ops::context::{inferred_types_for_test, parsed_for_test, tensor_for_test};
    use crate::ops::mvn::tests::{Dd, Rng, ulp_f32, ulps_f32};
    use crate::shape::types::Bounds;
    use crate::tensor::Value;

    fn t<T: Element>(shape: &[usize], v: Vec<T>) -> Tensor {
        tensor_for_test(shape, v)
    }

    const AVG: AdaptivePool = AdaptivePool { max_indices: None };
    const MAX: AdaptivePool = AdaptivePool {
        max_indices: Some(ElementType::I64),
    };
    const MAX32: AdaptivePool = AdaptivePool {
        max_indices: Some(ElementType::I32),
    };

    fn run(
        o: &AdaptivePool,
        x: &Tensor,
        sizes: &[i64],
        limit: u64,
    ) -> Result<Vec<Tensor>, EvalError> {
        let values = [
            Value::Tensor(Arc::new(x.clone())),
            Value::Tensor(Arc::new(t(&[sizes.len()], sizes.to_vec()))),
        ];
        o.eval(&EvalCx::new(&values, Budget { limit, in_use: 0 }))
    }

    use crate::ops::context::f32s_for_test as f32s;

    fn ints(t: &Tensor) -> Vec<i64> {
        crate::shape::types::int_values(t).unwrap()
    }

    /// Hand-checked bins and results: (data shape, data, sizes, averages, maxima, indices).
    #[test]
    fn table() {
        type Row = (
            &'static [usize],
            Vec<f32>,
            &'static [i64],
            Vec<f32>,
            Vec<f32>,
            Vec<i64>,
        );
        let iota = |n: usize| (0..n).map(|v| v as f32).collect::<Vec<f32>>();
        let rows: Vec<Row> = vec![
            // 5 → 3: bins [0,2), [1,4), [3,5).
            (
                &[1, 1, 5],
                vec![1.0, 2.0, 3.0, 4.0, 5.0],
                &[3],
                vec![1.5, 3.0, 4.5],
                vec![2.0, 4.0, 5.0],
                vec![1, 3, 4],
            ),
            // 2 → 3 (upsampling): bins [0,1), [0,2), [1,2).
            (
                &[1, 1, 2],
                vec![1.0, 2.0],
                &[3],
                vec![1.0, 1.5, 2.0],
                vec![1.0, 2.0, 2.0],
                vec![0, 1, 1],
            ),
            // 4 → 4: each element alone; 4 → 1: everything.
            (
                &[1, 1, 4],
                vec![3.0, 1.0, 4.0, 1.0],
                &[4],
                vec![3.0, 1.0, 4.0, 1.0],
                vec![3.0, 1.0, 4.0, 1.0],
                vec![0, 1, 2, 3],
            ),
            (
                &[1, 1, 4],
                vec![3.0, 1.0, 4.0, 1.0],
                &[1],
                vec![2.25],
                vec![4.0],
                vec![2],
            ),
            // 3×4 → 2×3: rows [0,2), [1,3); columns [0,2), [1,3), [2,4).
            (
                &[1, 1, 3, 4],
                iota(12),
                &[2, 3],
                vec![2.5, 3.5, 4.5, 6.5, 7.5, 8.5],
                vec![5.0, 6.0, 7.0, 9.0, 10.0, 11.0],
                vec![5, 6, 7, 9, 10, 11],
            ),
            // 2×2×2 → 1×1×1 and 2×1×2: indices flat in the plane.
            (
                &[1, 1, 2, 2, 2],
                iota(8),
                &[1, 1, 1],
                vec![3.5],
                vec![7.0],
                vec![7],
            ),
            (
                &[1, 1, 2, 2, 2],
                iota(8),
                &[2, 1, 2],
                vec![1.0, 2.0, 5.0, 6.0],
                vec![2.0, 3.0, 6.0, 7.0],
                vec![2, 3, 6, 7],
            ),
            // Two batches of two channels: each plane apart, indices within the plane.
            (
                &[2, 2, 3],
                vec![
                    1.0, 5.0, 2.0, 0.0, -1.0, 9.0, 4.0, 4.0, 3.0, -2.0, -3.0, -1.0,
                ],
                &[2],
                vec![3.0, 3.5, -0.5, 4.0, 4.0, 3.5, -2.5, -2.0],
                vec![5.0, 5.0, 0.0, 9.0, 4.0, 4.0, -2.0, -1.0],
                vec![1, 1, 0, 2, 0, 1, 0, 2],
            ),
            // Size 0: an empty output.
            (&[1, 2, 3], iota(6), &[0], vec![], vec![], vec![]),
        ];
        for (shape, x, sizes, avg, max, idx) in rows {
            let x = t(shape, x);
            let mut want_shape = shape[..2].to_vec();
            want_shape.extend(sizes.iter().map(|&s| s as usize));
            let a = run(&AVG, &x, sizes, 1 << 20).unwrap();
            assert_eq!(a.len(), 1);
            assert_eq!(a[0].shape(), want_shape);
            assert_eq!(f32s(&a[0]), avg, "{shape:?} {sizes:?}");
            for o in [MAX, MAX32] {
                let m = run(&o, &x, sizes, 1 << 20).unwrap();
                assert_eq!(m[0].shape(), want_shape);
                assert_eq!(m[1].shape(), want_shape);
                assert_eq!(m[1].element_type(), o.max_indices.unwrap());
                assert_eq!(f32s(&m[0]), max, "{shape:?} {sizes:?}");
                assert_eq!(ints(&m[1]), idx, "{shape:?} {sizes:?}");
            }
        }
    }

    /// NaN propagates from its first position; ties and ±0 keep the first; values bit for bit.
    #[test]
    fn max_specials() {
        let nan = f32::NAN;
        let payload = f32::from_bits(0x7fc0_1234);
        for (x, want_bits, want_idx) in [
            (vec![1.0, nan, 3.0, nan], nan.to_bits(), 1),
            (vec![nan, 1.0], nan.to_bits(), 0),
            (vec![1.0, 2.0, payload], payload.to_bits(), 2),
            (vec![3.0, 1.0, 3.0], 3f32.to_bits(), 0),
            (vec![-0.0, 0.0], (-0f32).to_bits(), 0),
            (vec![0.0, -0.0], 0, 0),
            (
                vec![f32::NEG_INFINITY, f32::NEG_INFINITY],
                f32::NEG_INFINITY.to_bits(),
                0,
            ),
        ] {
            let n = x.len();
            let m = run(&MAX, &t(&[1, 1, n], x.clone()), &[1], 1 << 20).unwrap();
            assert_eq!(f32s(&m[0])[0].to_bits(), want_bits, "{x:?}");
            assert_eq!(ints(&m[1]), [want_idx], "{x:?}");
        }
        // A NaN in a later row of a 2-D bin.
        let mut x = vec![1f32; 9];
        x[7] = nan;
        x[4] = 5.0;
        let m = run(&MAX, &t(&[1, 1, 3, 3], x.clone()), &[1, 1], 1 << 20).unwrap();
        assert!(f32s(&m[0])[0].is_nan());
        assert_eq!(ints(&m[1]), [7]);
        // The average: IEEE sums.
        let a = run(
            &AVG,
            &t(&[1, 1, 3], vec![1f32, f32::INFINITY, f32::NEG_INFINITY]),
            &[2],
            1 << 20,
        )
        .unwrap();
        let got = f32s(&a[0]);
        assert_eq!(got[0], f32::INFINITY);
        assert!(got[1].is_nan());
        // Large f32 values: the f64 sum does not overflow.
        let a = run(
            &AVG,
            &t(&[1, 1, 2], vec![f32::MAX, f32::MAX]),
            &[1],
            1 << 20,
        )
        .unwrap();
        assert_eq!(f32s(&a[0]), [f32::MAX]);
    }

    #[test]
    fn f32_average_against_a_double_double_reference() {
        let mut rng = Rng(71);
        let mut worst: f64 = 0.0;
        for (shape, sizes) in [
            (&[2usize, 3, 37][..], &[5i64][..]),
            (&[1, 2, 19, 23], &[4, 7]),
            (&[1, 2, 9, 10, 11], &[2, 3, 4]),
            (&[1, 1, 300, 200], &[1, 1]),
            (&[1, 1, 40, 40], &[3, 1]),
            (&[1, 1, 5, 6], &[11, 13]),
        ] {
            for &offset in &[0.0, 100.0] {
                let n: usize = shape.iter().product();
                let x: Vec<f32> = (0..n).map(|_| (offset + rng.normal()) as f32).collect();
                let got = f32s(&run(&AVG, &t(shape, x.clone()), sizes, 1 << 26).unwrap()[0]);
                let mut out_shape = shape[..2].to_vec();
                out_shape.extend(sizes.iter().map(|&s| s as usize));
                let g = Bins::new(shape, &out_shape);
                for (e, &y) in got.iter().enumerate() {
                    let (base, bin) = g.bin(e);
                    let (mut s, mut abs, mut m) = (Dd(0.0, 0.0), 0.0, 0usize);
                    g.rows(&bin, |at| {
                        for &v in &x[base + at..base + at + bin[2].1 - bin[2].0] {
                            s = s.add(Dd(v as f64, 0.0));
                            abs += (v as f64).abs();
                            m += 1;
                        }
                        true
                    });
                    let want = s.div(Dd(m as f64, 0.0)).0;
                    let (w, r) = (bin[2].1 - bin[2].0, m / (bin[2].1 - bin[2].0));
                    let k = if w <= 16 { m } else { w.div_ceil(16) + r + 4 };
                    let terms = (k + 1) as f64;
                    let bound = 0.5 + terms * 2f64.powi(-53) * (abs / m as f64) / ulp_f32(want);
                    let err = ulps_f32(y, want);
                    assert!(
                        err <= bound,
                        "{shape:?} → {sizes:?}, element {e}: {y} vs {want}"
                    );
                    worst = worst.max(err);
                }
            }
        }
        eprintln!("AdaptiveAvgPool f32: worst {worst} ulp");
        assert!(worst <= 0.5 + 1e-6, "{worst}");
    }

    #[test]
    fn other_types() {
        let mut rng = Rng(2);
        let xs: Vec<f64> = (0..2 * 3 * 7 * 5).map(|_| rng.normal()).collect();
        let shape = [2, 3, 7, 5];
        let sizes = [3i64, 2];
        let mut out_shape = shape[..2].to_vec();
        out_shape.extend(sizes.iter().map(|&s| s as usize));
        let g = Bins::new(&shape, &out_shape);
        let exact = |x: &[f64], e: usize| -> (f64, f64) {
            let (base, bin) = g.bin(e);
            let (mut s, mut m, mut best) = (Dd(0.0, 0.0), 0usize, f64::NEG_INFINITY);
            g.rows(&bin, |at| {
                for &v in &x[base + at..base + at + bin[2].1 - bin[2].0] {
                    s = s.add(Dd(v, 0.0));
                    m += 1;
                    best = best.max(v);
                }
                true
            });
            (s.div(Dd(m as f64, 0.0)).0, best)
        };
        let got = run(&AVG, &t(&shape, xs.clone()), &sizes, 1 << 20).unwrap();
        for (e, &y) in got[0].view::<f64>().unwrap().iter().enumerate() {
            let (want, _) = exact(&xs, e);
            assert!((y - want).abs() <= 16.0 * f64::EPSILON, "{y} {want}");
        }
        macro_rules! narrow {
            ($t:ty) => {{
                let h: Vec<$t> = xs.iter().map(|&v| <$t>::from_f64(v)).collect();
                let w: Vec<f64> = h.iter().map(|v| v.to_f64()).collect();
                let a = run(&AVG, &t(&shape, h.clone()), &sizes, 1 << 20).unwrap();
                let m = run(&MAX, &t(&shape, h), &sizes, 1 << 20).unwrap();
                let mv = m[0].view::<$t>().unwrap();
                for (e, &y) in a[0].view::<$t>().unwrap().iter().enumerate() {
                    let (mean, best) = exact(&w, e);
                    assert_eq!(y, <$t as Cast>::from_num(Num::Float(mean)));
                    assert_eq!(mv.iter().nth(e).unwrap().to_f64(), best);
                }
            }};
        }
        narrow!(f16);
        narrow!(bf16);
    }

    #[test]
    fn same_bits_at_1_and_4_threads() {
        let pool = |k| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(k)
                .build()
                .unwrap()
        };
        for (shape, sizes) in [
            (&[2usize, 64, 33, 35][..], &[7i64, 5][..]),
            (&[1, 64, 40, 40], &[1, 1]),
            (&[1, 8, 20, 20, 20], &[3, 3, 3]),
        ] {
            let n: usize = shape.iter().product();
            let x = t(
                shape,
                crate::ops::context::uniform_for_test(n, 5, -3.0, 3.0),
            );
            for o in [AVG, MAX] {
                let go = |k: usize| {
                    pool(k).install(|| {
                        run(&o, &x, sizes, 1 << 26)
                            .unwrap()
                            .iter()
                            .map(|t| t.to_le_bytes())
                            .collect::<Vec<_>>()
                    })
                };
                assert_eq!(go(1), go(4), "{shape:?} {o:?}");
            }
        }
    }

    #[test]
    fn parse_table() {
        assert_eq!(
            parsed_for_test(&ADAPTIVE_AVG_POOL_8, &[]),
            Ok(format!("{AVG:?}"))
        );
        assert_eq!(
            parsed_for_test(&ADAPTIVE_MAX_POOL_8, &[]),
            Ok(format!("{MAX:?}"))
        );
        assert_eq!(
            parsed_for_test(&ADAPTIVE_MAX_POOL_8, &[("index_element_type", "i32")]),
            Ok(format!("{MAX32:?}"))
        );
        assert_eq!(
            parsed_for_test(&ADAPTIVE_MAX_POOL_8, &[("index_element_type", "f32")]),
            Err(vec![
                "index_element_type Some(\"f32\"): AdaptiveMaxPool's index_element_type is i32 or i64"
                    .into()
            ])
        );
    }

    fn ty(et: ElementType, s: &str) -> TensorType {
        TensorType::new(et, PartialShape::parse(s).unwrap())
    }

    /// The inferred output shapes (and the index type) as text, or the findings.
    fn infer(o: &AdaptivePool, data: &TensorType, sizes: &TensorType) -> Result<String, String> {
        inferred_types_for_test(o, &[data, sizes])
    }

    #[test]
    fn inference() {
        let f = |s: &str| ty(ElementType::F32, s);
        let known = |v: &[i64]| TensorType::of_value(t(&[v.len()], v.to_vec()));
        let bounded = |lo: &[i64], hi: &[i64]| {
            Bounds {
                lo: lo.to_vec(),
                hi: hi.to_vec(),
            }
            .into_type(ElementType::I64, PartialShape::fixed(&[lo.len() as u64]))
        };
        let unknown = |s: &str| ty(ElementType::I32, s);
        for (o, data, sizes, want) in [
            (AVG, f("1,3,32,32"), known(&[16, 16]), "f32[1,3,16,16]"),
            (
                MAX,
                f("?,2..4,32"),
                known(&[7]),
                "f32[?,2..4,7] i64[?,2..4,7]",
            ),
            (
                MAX32,
                f("1,3,8,8,8"),
                known(&[1, 2, 3]),
                "f32[1,3,1,2,3] i32[1,3,1,2,3]",
            ),
            (AVG, f("1,3,?,?"), unknown("2"), "f32[1,3,?,?]"),
            (AVG, f("1,3,?,?"), unknown("?"), "f32[1,3,?,?]"),
            (
                AVG,
                f("1,3,?,?"),
                bounded(&[1, 0], &[5, i64::MAX]),
                "f32[1,3,1..5,?]",
            ),
            (AVG, f("..."), known(&[4, 5]), "f32[?,?,4,5]"),
            (MAX, f("..."), unknown("3"), "f32[?,?,?,?,?] i64[?,?,?,?,?]"),
            (AVG, f("..."), unknown("?"), "f32[...]"),
            (AVG, f("2,3,0"), known(&[0]), "f32[2,3,0]"),
        ] {
            assert_eq!(infer(&o, &data, &sizes).as_deref(), Ok(want), "{data:?}");
        }
        for (data, sizes, want) in [
            (
                f("1,3"),
                known(&[2]),
                "Some((Input, 0)) the data must have rank 3, 4 or 5",
            ),
            (f("1,3,4,4,4,4"), unknown("4"), "not rank 6"),
            (
                f("1,3,4,4"),
                known(&[2]),
                "Some((Input, 1)) the output shape has 1 sizes, but the data has 2 spatial dims",
            ),
            (
                f("1,3,4,4"),
                unknown("1,2"),
                "the output shape must be 1-D, not of shape [1,2]",
            ),
            (
                f("..."),
                unknown("4"),
                "the output shape has 4 sizes; the data can have 1 to 3 spatial dims",
            ),
            (f("1,3,4"), known(&[-1]), "output size 0 is negative (-1)"),
            (
                f("1,3,0"),
                known(&[2]),
                "Some((Input, 0)) the data's spatial dim 0 (axis 2) is 0, but its output size is 2",
            ),
        ] {
            let m = infer(&AVG, &data, &sizes).unwrap_err();
            assert!(m.contains(want), "{m}");
        }
        // Types: float data; i32 or i64 sizes.
        let m = infer(&AVG, &ty(ElementType::I32, "1,1,4"), &known(&[2])).unwrap_err();
        assert!(m.contains("does not accept i32"), "{m}");
        let m = infer(&MAX, &f("1,1,4"), &TensorType::of_value(t(&[1], vec![2u8]))).unwrap_err();
        assert!(m.contains("AdaptiveMaxPool does not accept u8"), "{m}");
        assert!(
            infer(
                &MAX,
                &f("1,1,4"),
                &TensorType::of_value(t(&[1], vec![2i32]))
            )
            .is_ok()
        );
    }

    #[test]
    fn execution_errors_and_budget() {
        let x = || t(&[1, 2, 4], vec![1f32; 8]);
        for (data, sizes, want) in [
            (
                t(&[2, 4], vec![1f32; 8]),
                t(&[1], vec![1i64]),
                "the data must have rank 3, 4 or 5",
            ),
            (
                x(),
                t(&[2], vec![1i64, 1]),
                "one size per spatial dim (1), not of shape [2]",
            ),
            (x(), t(&[], vec![1i64]), "not of shape []"),
            (x(), t(&[1], vec![-2i64]), "output size 0 is negative (-2)"),
            (
                t(&[1, 2, 0], Vec::<f32>::new()),
                t(&[1], vec![3i64]),
                "the data's spatial dim 0 (axis 2) is 0, but its output size is 3",
            ),
        ] {
            let values = [
                Value::Tensor(Arc::new(data)),
                Value::Tensor(Arc::new(sizes)),
            ];
            let got = MAX.eval(&EvalCx::new(
                &values,
                Budget {
                    limit: 1 << 20,
                    in_use: 0,
                },
            ));
            match got {
                Err(EvalError::Invalid(m)) => assert!(m.contains(want), "{m}"),
                other => panic!("{other:?}"),
            }
        }
        // A zero batch with empty spatial output sizes is fine.
        let got = run(&MAX, &t(&[0, 2, 0], Vec::<f32>::new()), &[0], 1 << 20).unwrap();
        assert_eq!(got[0].shape(), [0, 2, 0]);
        // The budget counts both outputs: 2 × 64K of f32 values and i64 indices.
        let big = t(&[1, 2, 256, 256], vec![1f32; 1 << 17]);
        let sizes = [256i64, 128];
        assert!(matches!(
            run(&MAX, &big, &sizes, 700_000),
            Err(EvalError::Memory(_))
        ));
        assert!(run(&MAX, &big, &sizes, 800_000).is_ok());
        assert!(matches!(
            run(&AVG, &big, &sizes, 200_000),
            Err(EvalError::Memory(_))
        ));
        assert!(run(&AVG, &big, &sizes, 300_000).is_ok());
        // Output sizes beyond the budget, and beyond the address space.
        let got = run(&AVG, &x(), &[i64::MAX], 1 << 20);
        assert!(matches!(got, Err(EvalError::Memory(_))), "{got:?}");
        let got = run(
            &AVG,
            &t(&[1, 2, 1, 1], vec![1f32; 2]),
            &[1 << 40, 1 << 40],
            1 << 20,
        );
        assert!(matches!(got, Err(EvalError::Invalid(m)) if m.contains("too many elements")));
    }
}
