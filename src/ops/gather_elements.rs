//! GatherElements-6: each output element is the data element that one index picks along one
//! axis, the other coordinates staying as they are.
//!
//! Spec: <https://docs.openvino.ai/2026/documentation/openvino-ir-format/operation-sets/operation-specs/movement/gather-elements-6.html>
//!
//! Ports: `data` (any type, rank ≥ 1), `indices` (`i32` or `i64`, the data's rank); one output of
//! the data's type and the indices' shape. Attribute: `axis` (required; `-r..r` for data of rank
//! `r`, negative counts from the end). For an output position `p`,
//! `out[p] = data[p with p[axis] replaced by indices[p]]`. The indices' dims equal the data's
//! except along the axis, where they may be larger or smaller (the output follows the indices).
//!
//! Decisions:
//! * Indices must lie in `0..s`, `s` the data's dim along the axis (the spec's range). Any other
//!   index, negative ones included, is an error naming its position in the indices and its
//!   value. OpenVINO's reference throws on them too (ONNX reads negative indices from the end;
//!   GatherElements-6 does not).
//! * A missing `axis` is an attribute error (the spec marks it required; OpenVINO would keep 0).
//! * Indices of another integer type than `i32`/`i64` are refused (E502), as OpenVINO's type
//!   check refuses them.
//! * An axis out of range for the data's rank, ranks that differ, a scalar, and a dim of the
//!   indices other than the axis that differs from the data's are invalid inputs (E507).
//!
//! Inference follows OpenVINO's `shape_infer`: a dynamic data rank gives the indices' shape;
//! a dynamic indices rank gives the data's shape with a dynamic axis dim; otherwise every dim
//! but the axis is the intersection of the data's and the indices' (intervals merge: data
//! `[4,2..8,?]` and indices `[1,?,3..5]` along axis 0 give `[1,2..8,3..5]`), the axis dim is the
//! indices'. When the indices' value is known (and small, at most 4096 elements), an index
//! that is out of range for every size the data's axis dim may take is reported at inference.
//! Small known values fold (generic constant folding); bounds of shape values pass through the
//! data input (the op only moves elements).
//!
//! Execution: the output buffer is checked against the memory budget, then filled in row-major
//! order of the indices, in parallel for large outputs (each element independent, so the
//! result does not depend on the thread count); the error reported is the first offending
//! index in row-major order whatever the split. One dispatch on the data's element type; `i64`
//! indices are read in place, `i32` ones widened once (within the budget).

use std::borrow::Cow;

use super::{Arity, AttrError, Attrs, EvalCx, EvalError, InferCx, Op, OpDef};
use crate::dtype::ElementType;
use crate::error::ErrorKind;
use crate::shape::{Dim, PartialShape, TensorType};
use crate::tensor::{Element, Tensor, TypeSet};

#[derive(Clone, Debug, PartialEq)]
pub struct GatherElements {
    pub axis: i64,
}

pub const DEF: OpDef = OpDef {
    name: "GatherElements",
    version: 6,
    inputs: Arity::exactly(2),
    outputs: Arity::exactly(1),
    parse,
};

fn parse(a: &Attrs) -> Result<Box<dyn Op>, Vec<AttrError>> {
    let (axis,) = crate::attrs_all!(a.parse_required("axis", super::parse_i64))?;
    Ok(Box::new(GatherElements {
        axis: axis.unwrap_or(0),
    }))
}

/// Where index `v` points along a dim of `n` elements: `0..n` as it is, and `-n..0` counted
/// from the end when `negative` indices are allowed; `None` for any other.
pub(crate) fn resolve(v: i64, n: u64, negative: bool) -> Option<u64> {
    let (v, n) = (i128::from(v), i128::from(n));
    let p = if v < 0 && negative { v + n } else { v };
    (0..n).contains(&p).then_some(p as u64)
}

/// Whether index `v` is out of range for every size that `dim` may take.
pub(crate) fn surely_out(v: i64, dim: Dim, negative: bool) -> bool {
    resolve(v, dim.max().unwrap_or(u64::MAX), negative).is_none()
}

/// The range an index along a dim of `size` may take, as messages write it.
pub(crate) fn allowed(size: Dim, negative: bool) -> String {
    let lo = if negative { "-s" } else { "0" };
    match (size.get_static(), size.max()) {
        (Some(n), _) if negative => format!("-{n} ≤ index < {n}"),
        (Some(n), _) => format!("0 ≤ index < {n}"),
        (None, Some(m)) => format!("{lo} ≤ index < s, the dim s being at most {m}"),
        (None, None) => format!("{lo} ≤ index < s, s the dim"),
    }
}

/// The elements of integer tensor `t` as i64s, row-major: borrowed when they already are,
/// widened otherwise (within the budget). A u64 above `i64::MAX` becomes `i64::MAX`, out of
/// range of every dim; messages read the value as written with [`index_text`].
pub(crate) fn index_values<'t>(
    cx: &EvalCx<'_>,
    t: &'t Tensor,
) -> Result<Cow<'t, [i64]>, EvalError> {
    if t.element_type() != ElementType::I64 {
        cx.reserve_bytes(
            "the indices as 64-bit integers",
            (t.len() as u64).saturating_mul(8),
        )?;
    }
    if t.element_type() == ElementType::I64 {
        return crate::ops::kernel::contiguous::<i64>(t)
            .ok_or(EvalError::Internal("the indices' type"));
    }
    fn go<T: Element + crate::num::Int>(t: &Tensor) -> Option<Cow<'_, [i64]>> {
        let v = T::view(t)?;
        Some(Cow::Owned(
            v.iter()
                .map(|&x| i64::try_from(x.to_i128()).unwrap_or(i64::MAX))
                .collect(),
        ))
    }
    crate::dispatch!(int: t.element_type(), T => go::<T>(t), _ => None).ok_or_else(|| {
        EvalError::Invalid(format!(
            "the indices must be integers, not {}",
            t.element_type()
        ))
    })
}

/// Element `flat` (row-major) of integer tensor `t`, as written (for messages).
pub(crate) fn index_text(t: &Tensor, flat: usize) -> String {
    fn go<T: Element + crate::num::Int>(t: &Tensor, flat: usize) -> Option<String> {
        T::view(t)?
            .iter()
            .nth(flat)
            .map(|x| x.to_i128().to_string())
    }
    crate::dispatch!(int: t.element_type(), T => go::<T>(t, flat), _ => None)
        .unwrap_or_else(|| "?".into())
}

/// The dims of a static shape of at most [`VALUE_LIMIT`](crate::shape::types::VALUE_LIMIT)
/// elements: indices whose value inference checks (larger Consts are not decoded by `check`).
pub(crate) fn small_static(shape: &PartialShape) -> Option<Vec<usize>> {
    let dims = shape.to_tensor_dims()?;
    (product(&dims)? <= crate::shape::types::VALUE_LIMIT).then_some(dims)
}

/// The product of `dims`: 0 if any is 0 (whatever the others), `None` if it overflows.
pub(crate) fn product(dims: &[usize]) -> Option<usize> {
    if dims.contains(&0) {
        return Some(0);
    }
    dims.iter().try_fold(1usize, |n, &d| n.checked_mul(d))
}

impl GatherElements {
    /// The normalized axis and the output dims for data of `dd` and indices of `di` (both of
    /// known rank; intervals allowed), or why they do not fit: the checks inference and
    /// execution share.
    fn check(&self, dd: &[Dim], di: &[Dim]) -> Result<(usize, Vec<Dim>), (usize, String)> {
        let axis = self.axis(dd.len())?;
        if di.len() != dd.len() {
            return Err((
                1,
                format!(
                    "the indices have rank {}, the data rank {}: GatherElements needs equal ranks",
                    di.len(),
                    dd.len()
                ),
            ));
        }
        let mut dims = Vec::with_capacity(dd.len());
        for (k, (&d, &i)) in dd.iter().zip(di).enumerate() {
            if k == axis {
                dims.push(i);
                continue;
            }
            match d.merge(i) {
                Some(m) => dims.push(m),
                None => {
                    return Err((
                        1,
                        format!(
                            "dim {k} of the indices ({i}) differs from the data's ({d}); only the axis {axis} may differ"
                        ),
                    ));
                }
            }
        }
        Ok((axis, dims))
    }

    /// The axis for data of rank `rank` (at least 1).
    fn axis(&self, rank: usize) -> Result<usize, (usize, String)> {
        if rank == 0 {
            return Err((
                0,
                "GatherElements needs data of rank 1 or more, not a scalar".into(),
            ));
        }
        super::normalize_axis(self.axis, rank).ok_or_else(|| {
            (
                0,
                format!(
                    "axis {} is out of range for data of rank {rank} (-{rank}..{rank})",
                    self.axis
                ),
            )
        })
    }
}

/// The message for index `v` at indices position `at`, out of range along data axis `axis` of
/// size `size`.
fn out_of_range(v: &str, at: &[usize], axis: usize, size: Dim) -> String {
    format!(
        "index {v} at indices position {at:?} is out of range for axis {axis} of the data, of size {size}: GatherElements-6 takes {}",
        allowed(size, false)
    )
}

impl Op for GatherElements {
    fn def(&self) -> Option<&'static OpDef> {
        Some(&DEF)
    }

    fn infer(&self, cx: &mut InferCx<'_>) -> Option<Vec<TensorType>> {
        let (data, indices) = (cx.input(0), cx.input(1));
        cx.require(1..2, TypeSet::INT)?;
        let it = indices.element_type;
        if !matches!(
            it,
            ElementType::I32 | ElementType::I64 | ElementType::Dynamic
        ) {
            cx.report_input(
                1,
                ErrorKind::UnsupportedElementType {
                    op: "GatherElements".into(),
                    ty: it,
                },
            );
            return None;
        }
        let ty = data.element_type;
        if indices.shape.rank() == Some(0) {
            return cx.invalid(
                1,
                "GatherElements needs indices of rank 1 or more, not a scalar",
            );
        }
        let Some(dd) = data.shape.dims() else {
            return Some(vec![TensorType::new(ty, indices.shape.clone())]);
        };
        let Some(di) = indices.shape.dims() else {
            return match self.axis(dd.len()) {
                Ok(axis) => {
                    let mut dims = dd.to_vec();
                    dims[axis] = Dim::DYNAMIC;
                    Some(vec![TensorType::new(ty, PartialShape::new(dims))])
                }
                Err((port, reason)) => cx.invalid(port, reason),
            };
        };
        let (axis, dims) = match self.check(dd, di) {
            Ok(v) => v,
            Err((port, reason)) => return cx.invalid(port, reason),
        };
        if let Some(ishape) = small_static(&indices.shape)
            && let Some(values) = cx.ints(1)
            && let Some(flat) = values.iter().position(|&v| surely_out(v, dd[axis], false))
        {
            let at = crate::tensor::unravel(flat, &ishape);
            return cx.invalid(
                1,
                out_of_range(&values[flat].to_string(), &at, axis, dd[axis]),
            );
        }
        Some(vec![TensorType::new(ty, PartialShape::new(dims))])
    }

    fn eval(&self, cx: &EvalCx<'_>) -> Result<Vec<Tensor>, EvalError> {
        let data = cx.tensor(0)?;
        let indices = cx.tensor(1)?;
        let (ds, is) = (data.shape(), indices.shape());
        let (axis, _) = self
            .check(
                PartialShape::of_tensor(ds).dims().unwrap_or_default(),
                PartialShape::of_tensor(is).dims().unwrap_or_default(),
            )
            .map_err(|(_, reason)| EvalError::Invalid(reason))?;
        let ty = data.element_type();
        let n = indices.len();
        cx.reserve(ty, n)?;
        let idx = index_values(cx, &indices)?;
        // The indices have elements: every dim of theirs is at least 1, so are the data's but
        // the axis, and the products below are at most the sizes of the two tensors.
        let geometry = Geometry {
            rows: is[axis],
            size: ds[axis],
            inner: ds[axis + 1..].iter().product(),
        };
        let out = crate::dispatch!(any: ty, T => gather::<T>(&data, &idx, geometry, is), _ => {
            return Err(EvalError::UnsupportedType { op: "GatherElements".into(), ty });
        })?;
        out.map(|t| vec![t]).map_err(|flat| {
            let at = crate::tensor::unravel(flat, is);
            EvalError::Invalid(out_of_range(
                &index_text(&indices, flat),
                &at,
                axis,
                Dim::fixed(ds[axis] as u64),
            ))
        })
    }

    fn moves(&self, input: usize) -> bool {
        input == 0
    }
}

/// The output read as `[outer, rows, inner]` and the data as `[outer, size, inner]`.
#[derive(Clone, Copy)]
struct Geometry {
    rows: usize,
    size: usize,
    inner: usize,
}

/// The output of shape `shape` (the indices'), or the row-major position of the first index out
/// of range.
fn gather<T: Element>(
    data: &Tensor,
    idx: &[i64],
    g: Geometry,
    shape: &[usize],
) -> Result<Result<Tensor, usize>, EvalError> {
    let v =
        super::kernel::contiguous::<T>(data).ok_or(EvalError::Internal("GatherElements' data"))?;
    let n = idx.len();
    let mut out = vec![T::default(); n];
    if n > 0 {
        let size = g.size as u64;
        let block = g.size * g.inner;
        let failed = super::kernel::in_parts(
            &mut out,
            1,
            |start, part| {
                // Position `start` as (outer, row, i): counters from there on.
                let mut i = start % g.inner;
                let mut row = (start / g.inner) % g.rows;
                let mut base = (start / g.inner / g.rows) * block;
                for (j, o) in part.iter_mut().enumerate() {
                    let Some(p) = resolve(idx[start + j], size, false) else {
                        return Some(start + j);
                    };
                    *o = v[base + p as usize * g.inner + i];
                    i += 1;
                    if i == g.inner {
                        i = 0;
                        row += 1;
                        if row == g.rows {
                            row = 0;
                            base += block;
                        }
                    }
                }
                None
            },
            |&flat| flat,
        );
        if let Some(flat) = failed {
            return Ok(Err(flat));
        }
    }
    super::kernel::tensor_from(shape, out).map(Ok)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::context::{eval_for_test, infer_for_test, tensor_for_test};
    use crate::shape::types::Bounds;

    fn t<T: Element>(shape: &[usize], v: Vec<T>) -> Tensor {
        tensor_for_test(shape, v)
    }

    fn op(axis: i64) -> GatherElements {
        GatherElements { axis }
    }

    fn run(axis: i64, data: &Tensor, indices: &Tensor) -> Result<Tensor, EvalError> {
        eval_for_test(&op(axis), &[data.clone(), indices.clone()], 1 << 24)
    }

    /// `0, 1, 2, ...` as i64 in `shape`.
    fn iota(shape: &[usize]) -> Tensor {
        let n: usize = shape.iter().product();
        t(shape, (0..n as i64).collect())
    }

    /// A row: data shape (filled with 0, 1, 2, ...), axis, indices shape and values, and the
    /// output (the indices' shape).
    type Row = (
        &'static [usize],
        i64,
        &'static [usize],
        &'static [i64],
        &'static [i64],
    );

    /// The spec's examples, and cases computed by hand from the spec's formula (what numpy's
    /// `take_along_axis(arange(n).reshape(data_shape), indices, axis)` gives).
    const TABLE: &[Row] = &[
        // Spec example 1 (data [[1,2],[3,4]] is arange + 1).
        (&[2, 2], 0, &[2, 2], &[0, 1, 0, 0], &[0, 3, 0, 1]),
        // Spec example 2 (data [[1,7],[4,3]] is not arange: see `spec_examples`).
        // Spec example 3 shape: fewer rows along the axis.
        (
            &[3, 3],
            0,
            &[2, 3],
            &[1, 0, 1, 1, 2, 0],
            &[3, 1, 5, 3, 7, 2],
        ),
        (&[5], 0, &[3], &[4, 0, 4], &[4, 0, 4]),
        (&[5], -1, &[0], &[], &[]),
        (
            &[2, 3],
            1,
            &[2, 4],
            &[2, 2, 0, 1, 0, 1, 2, 2],
            &[2, 2, 0, 1, 3, 4, 5, 5],
        ),
        (&[2, 3], -1, &[2, 1], &[1, 2], &[1, 5]),
        // np.take_along_axis(np.arange(24).reshape(2,3,4), idx, 1), idx of shape (2,2,4)
        (
            &[2, 3, 4],
            1,
            &[2, 2, 4],
            &[2, 0, 1, 1, 0, 0, 2, 2, 1, 2, 0, 0, 2, 1, 1, 0],
            &[8, 1, 6, 7, 0, 1, 10, 11, 16, 21, 14, 15, 20, 17, 18, 15],
        ),
        // Axis 0 of a 3-D tensor, one row picked per column.
        (
            &[2, 3, 4],
            -3,
            &[1, 3, 4],
            &[1, 0, 1, 0, 0, 1, 0, 1, 1, 1, 0, 0],
            &[12, 1, 14, 3, 4, 17, 6, 19, 20, 21, 10, 11],
        ),
        // Axis 2 (the last).
        (
            &[2, 2, 3],
            2,
            &[2, 2, 2],
            &[2, 0, 1, 1, 0, 0, 2, 2],
            &[2, 0, 4, 4, 6, 6, 11, 11],
        ),
        // An empty dim elsewhere: nothing to gather.
        (&[2, 0, 3], 0, &[4, 0, 3], &[], &[]),
    ];

    #[test]
    fn eval_table() {
        for (k, &(dshape, axis, ishape, indices, want)) in TABLE.iter().enumerate() {
            let got = run(axis, &iota(dshape), &t(ishape, indices.to_vec()))
                .unwrap_or_else(|e| panic!("case {k}: {e}"));
            assert_eq!(got, t(ishape, want.to_vec()), "case {k}");
            // i32 indices give the same.
            let i32s: Vec<i32> = indices.iter().map(|&v| v as i32).collect();
            let got = run(axis, &iota(dshape), &t(ishape, i32s)).unwrap();
            assert_eq!(got, t(ishape, want.to_vec()), "case {k} with i32 indices");
        }
    }

    #[test]
    fn spec_examples() {
        let data = t(&[2, 2], vec![1.0f32, 7.0, 4.0, 3.0]);
        let indices = t(&[2, 3], vec![1i32, 1, 0, 1, 0, 1]);
        assert_eq!(
            run(1, &data, &indices).unwrap(),
            t(&[2, 3], vec![7.0f32, 7.0, 1.0, 3.0, 4.0, 3.0])
        );
        let data = t(&[3, 3], (1..=9).collect::<Vec<i32>>());
        let indices = t(&[2, 3], vec![1i64, 0, 1, 1, 2, 0]);
        assert_eq!(
            run(0, &data, &indices).unwrap(),
            t(&[2, 3], vec![4, 2, 6, 4, 8, 3])
        );
    }

    #[test]
    fn every_type_moves_bit_for_bit() {
        fn on<T: Element>(f: impl Fn(usize) -> T) {
            let data = t(&[2, 3], (0..6).map(&f).collect());
            let indices = t(&[2, 2], vec![2i64, 0, 1, 1]);
            let want = t(&[2, 2], [2, 0, 4, 4].map(&f).to_vec());
            let got = run(1, &data, &indices).unwrap();
            assert_eq!(got.to_le_bytes(), want.to_le_bytes(), "{}", T::TYPE);
            assert_eq!(got.shape(), [2, 2]);
        }
        on(|i| half::f16::from_bits(0x7e01 + i as u16));
        on(|i| half::bf16::from_f32(i as f32 - 2.5));
        on(|i| if i == 2 { -0.0f32 } else { i as f32 });
        on(|i| i as f64 * 1e300);
        on(|i| i as i8 - 100);
        on(|i| u64::MAX / 7 * i as u64);
        on(|i| i % 2 == 0);
        on(|i| i as u16 * 1000);
    }

    /// Larger than the parallel threshold: the same as an element-by-element loop.
    #[test]
    fn large_outputs_are_exact() {
        let (outer, size, rows, inner) = (3usize, 7usize, 50_000usize, 2usize);
        let data = iota(&[outer, size, inner]);
        let n = outer * rows * inner;
        let idx: Vec<i64> = (0..n).map(|f| ((f * 31 + f / 5) % size) as i64).collect();
        let got = run(1, &data, &t(&[outer, rows, inner], idx.clone())).unwrap();
        let want: Vec<i64> = (0..n)
            .map(|f| {
                let (o, i) = (f / (rows * inner), f % inner);
                ((o * size + idx[f] as usize) * inner + i) as i64
            })
            .collect();
        assert_eq!(got, t(&[outer, rows, inner], want));
        // The first bad index in row-major order is named, whatever the split.
        let mut bad = idx.clone();
        bad[n - 3] = 7;
        bad[200_001] = -1;
        let e = run(1, &data, &t(&[outer, rows, inner], bad)).unwrap_err();
        let at = crate::tensor::unravel(200_001, &[outer, rows, inner]);
        assert_eq!(
            e.to_string(),
            format!(
                "index -1 at indices position {at:?} is out of range for axis 1 of the data, of size 7: GatherElements-6 takes 0 ≤ index < 7"
            )
        );
    }

    #[test]
    fn invalid_inputs_are_errors() {
        let data = iota(&[2, 3]);
        let cases: Vec<(i64, Tensor, &str)> = vec![
            (
                1,
                t(&[2, 2], vec![0i64, 3, 1, 1]),
                "index 3 at indices position [0, 1] is out of range for axis 1 of the data, of size 3: GatherElements-6 takes 0 ≤ index < 3",
            ),
            (
                0,
                t(&[1, 3], vec![0i32, -1, 1]),
                "index -1 at indices position [0, 1] is out of range for axis 0 of the data, of size 2",
            ),
            (
                0,
                t(&[1, 3], vec![0i64, i64::MIN, 1]),
                "index -9223372036854775808 at indices position [0, 1]",
            ),
            (
                2,
                t(&[2, 3], vec![0i64; 6]),
                "axis 2 is out of range for data of rank 2 (-2..2)",
            ),
            (
                -3,
                t(&[2, 3], vec![0i64; 6]),
                "axis -3 is out of range for data of rank 2 (-2..2)",
            ),
            (
                0,
                t(&[6], vec![0i64; 6]),
                "the indices have rank 1, the data rank 2: GatherElements needs equal ranks",
            ),
            (
                0,
                t(&[2, 2], vec![0i64; 4]),
                "dim 1 of the indices (2) differs from the data's (3); only the axis 0 may differ",
            ),
        ];
        for (axis, indices, want) in cases {
            let e = run(axis, &data, &indices).unwrap_err();
            assert!(e.to_string().contains(want), "{e} / {want}");
            // Inference sees the same (the indices' value known).
            let (out, findings) = infer_for_test(
                &op(axis),
                &[
                    &TensorType::new(ElementType::F32, PartialShape::of_tensor(data.shape())),
                    &TensorType::of_value(indices.clone()),
                ],
            );
            assert!(out.is_none(), "{want}");
            assert!(
                findings.iter().any(|(k, _)| k.to_string().contains(want)),
                "{findings:?} / {want}"
            );
        }
        // An empty data axis: any index is out of range.
        let e = run(0, &t(&[0, 2], Vec::<u8>::new()), &t(&[1, 2], vec![0i64, 0])).unwrap_err();
        assert!(e.to_string().contains("of size 0"), "{e}");
        // A scalar.
        let e = run(0, &t(&[], vec![1u8]), &t(&[], vec![0i64])).unwrap_err();
        assert!(e.to_string().contains("not a scalar"), "{e}");
        // u64 indices beyond i64 (refused by inference, named as written by execution).
        let e = run(0, &iota(&[2]), &t(&[1], vec![u64::MAX])).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("index 18446744073709551615 at indices position [0]"),
            "{e}"
        );
    }

    #[test]
    fn outputs_over_budget_are_refused_before_allocation() {
        let data = iota(&[4, 4]);
        let indices = t(&[1000, 4], vec![1i32; 4000]);
        let e = eval_for_test(&op(0), &[data.clone(), indices.clone()], 20_000).unwrap_err();
        assert!(matches!(e, EvalError::Memory(_)), "{e:?}");
        // The output (32 000 bytes) and the widened i32 indices (32 000) fit.
        assert!(eval_for_test(&op(0), &[data, indices], 70_000).is_ok());
    }

    fn parsed(attrs: &[(&str, &str)]) -> Result<String, Vec<String>> {
        crate::ops::context::parsed_for_test(&DEF, attrs)
    }

    #[test]
    fn parse_table() {
        assert_eq!(parsed(&[("axis", "1")]), Ok(format!("{:?}", op(1))));
        assert_eq!(parsed(&[("axis", "-2")]), Ok(format!("{:?}", op(-2))));
        assert_eq!(parsed(&[]), Err(vec!["axis None: ".into()]));
        assert_eq!(
            parsed(&[("axis", "x")]),
            Err(vec!["axis Some(\"x\"): expected an integer".into()])
        );
    }

    fn infer(axis: i64, data: &str, indices: &str, ity: ElementType) -> Result<String, String> {
        let d = TensorType::new(ElementType::Bf16, PartialShape::parse(data).unwrap());
        let i = TensorType::new(ity, PartialShape::parse(indices).unwrap());
        match infer_for_test(&op(axis), &[&d, &i]) {
            (Some(out), _) => {
                assert_eq!(out[0].element_type, ElementType::Bf16);
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
        use ElementType::{I32, I64};
        for (axis, data, indices, want) in [
            (1, "3,7,5", "3,10,5", "[3,10,5]"),
            (0, "4,4,?", "1,?,5", "[1,4,5]"),
            (0, "4,2..8,?", "1,?,3..5", "[1,2..8,3..5]"),
            (-1, "2..6,3", "4..9,?", "[4..6,?]"),
            (1, "2,?", "?,1..", "[2,1..]"),
            (0, "...", "2,3", "[2,3]"),
            (0, "...", "...", "[...]"),
            (1, "2,3,4", "...", "[2,?,4]"),
            (-1, "2,3", "2,0", "[2,0]"),
        ] {
            assert_eq!(
                infer(axis, data, indices, I64).as_deref(),
                Ok(want),
                "{data} {indices}"
            );
            assert_eq!(infer(axis, data, indices, I32).as_deref(), Ok(want));
        }
        for (axis, data, indices, ity, want) in [
            (
                0,
                "2,3",
                "2,4",
                I64,
                "dim 1 of the indices (4) differs from the data's (3)",
            ),
            (
                0,
                "2,3..5",
                "2,6..",
                I64,
                "dim 1 of the indices (6..) differs",
            ),
            (
                0,
                "2,3",
                "2,3,1",
                I64,
                "the indices have rank 3, the data rank 2",
            ),
            (
                2,
                "2,3",
                "2,3",
                I64,
                "axis 2 is out of range for data of rank 2",
            ),
            (5, "2,3", "...", I64, "axis 5 is out of range"),
            (0, "", "1", I64, "data of rank 1 or more, not a scalar"),
            (0, "...", "", I64, "indices of rank 1 or more, not a scalar"),
            (
                0,
                "2",
                "2",
                ElementType::U8,
                "GatherElements does not accept u8 inputs",
            ),
            (0, "2", "2", ElementType::I16, "does not accept i16"),
            (0, "2", "2", ElementType::F32, "does not accept f32"),
        ] {
            let got = infer(axis, data, indices, ity).unwrap_err();
            assert!(got.contains(want), "{got} / {want}");
        }
    }

    /// Known indices are checked against the data's axis dim, intervals included: only an
    /// index out of range for every size it may take is reported.
    #[test]
    fn known_indices_are_checked_at_inference() {
        let check = |data: &str, idx: Vec<i64>| {
            let d = TensorType::new(ElementType::F32, PartialShape::parse(data).unwrap());
            let i = TensorType::of_value(t(&[1, idx.len()], idx));
            infer_for_test(&op(1), &[&d, &i])
        };
        assert!(check("1,2..5", vec![4, 0]).0.is_some());
        assert!(check("1,?", vec![1_000_000]).0.is_some());
        let (out, findings) = check("1,2..5", vec![0, 5]);
        assert!(out.is_none());
        assert_eq!(
            findings[0].0.to_string(),
            "index 5 at indices position [0, 1] is out of range for axis 1 of the data, of size 2..5: GatherElements-6 takes 0 ≤ index < s, the dim s being at most 5"
        );
        assert!(check("1,?", vec![-1]).0.is_none());
    }

    /// What constant folding computes: the op on known values.
    #[test]
    fn known_values_fold_and_bounds_pass_through_the_data() {
        assert!(op(0).moves(0) && !op(0).moves(1));
        // Bounds of a shape value [2..4, 3, 1..] gathered by [2, 0]: evaluated on each side.
        let b = Bounds {
            lo: vec![2, 3, 1],
            hi: vec![4, 3, crate::shape::types::UNBOUNDED],
        };
        let idx = t(&[2], vec![2i64, 0]);
        let lo = run(0, &t(&[3], b.lo.clone()), &idx).unwrap();
        let hi = run(0, &t(&[3], b.hi.clone()), &idx).unwrap();
        assert_eq!(lo, t(&[2], vec![1i64, 2]));
        assert_eq!(hi, t(&[2], vec![crate::shape::types::UNBOUNDED, 4]));
    }
}
