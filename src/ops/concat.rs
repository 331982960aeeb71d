//! Concat-1: joins its inputs along an axis.
//!
//! Spec: <https://docs.openvino.ai/2026/documentation/openvino-ir-format/operation-sets/operation-specs/movement/concat-1.html>
//!
//! Attributes: `axis` (mandatory; negative counts from the end). Ports: one or more inputs of
//! one element type and rank, equal in every dim but `axis`; one output whose `axis` dim is the
//! sum of theirs.
//!
//! Types: any (the elements are copied exactly). Inference merges the other dims (intervals
//! intersect) and sums the axis dims (intervals add); the bounds of shape values pass through.

use super::{Arity, AttrError, Attrs, EvalCx, EvalError, InferCx, Op, OpDef};
use crate::dtype::ElementType;
use crate::error::ErrorKind;
use crate::shape::{Dim, PartialShape, TensorType};
use crate::tensor::{Element, Tensor};

#[derive(Clone, Debug, PartialEq)]
pub struct Concat {
    pub axis: i64,
}

pub const DEF: OpDef = OpDef {
    name: "Concat",
    version: 1,
    inputs: Arity::at_least(1),
    outputs: Arity::exactly(1),
    parse,
};

fn parse(a: &Attrs) -> Result<Box<dyn Op>, Vec<AttrError>> {
    let axis = a
        .parse_required("axis", super::parse_i64)
        .map_err(|e| vec![e])?;
    Ok(Box::new(Concat { axis }))
}

impl Op for Concat {
    fn def(&self) -> Option<&'static OpDef> {
        Some(&DEF)
    }

    fn infer(&self, cx: &mut InferCx<'_>) -> Option<Vec<TensorType>> {
        let inputs = cx.inputs();
        let mut ty = ElementType::Dynamic;
        for t in inputs {
            ty = match (ty, t.element_type) {
                (ElementType::Dynamic, x) => x,
                (x, ElementType::Dynamic) => x,
                (x, y) if x == y => x,
                (x, y) => {
                    cx.report(ErrorKind::ElementTypeMismatch { a: x, b: y });
                    return None;
                }
            };
        }
        let Some(rank) = inputs.iter().find_map(|t| t.shape.rank()) else {
            return Some(vec![TensorType::new(ty, PartialShape::dynamic_rank())]);
        };
        let Some(axis) = super::normalize_axis(self.axis, rank) else {
            return cx.invalid(
                0,
                format!("axis {} is out of range for rank {rank}", self.axis),
            );
        };
        let mut out: Vec<Dim> = vec![Dim::DYNAMIC; rank];
        let mut sum = Dim::fixed(0);
        for (i, t) in inputs.iter().enumerate() {
            let Some(dims) = t.shape.dims() else {
                sum = Dim::interval(sum.min(), None).unwrap_or(Dim::DYNAMIC);
                continue;
            };
            if dims.len() != rank {
                return cx.invalid(
                    i,
                    format!(
                        "input {i} has rank {} but input 0 has rank {rank}: Concat needs one rank",
                        dims.len()
                    ),
                );
            }
            for (k, &d) in dims.iter().enumerate() {
                if k == axis {
                    sum = sum.plus(d);
                    continue;
                }
                match out[k].merge(d) {
                    Some(m) => out[k] = m,
                    None => {
                        return cx.invalid(
                            i,
                            format!(
                                "at axis {k}, input {i}'s dim {d} differs from the others' {}",
                                out[k]
                            ),
                        );
                    }
                }
            }
        }
        out[axis] = sum;
        Some(vec![TensorType::new(ty, PartialShape::new(out))])
    }

    fn eval(&self, cx: &EvalCx<'_>) -> Result<Vec<Tensor>, EvalError> {
        let shapes: Vec<&[usize]> = (0..cx.len()).map(|i| cx.value(i).shape()).collect();
        let ty = cx.value(0).element_type();
        let rank = shapes[0].len();
        let axis = super::normalize_axis(self.axis, rank)
            .ok_or_else(|| EvalError::Invalid(format!("axis {} is out of range", self.axis)))?;
        let fits = shapes.iter().all(|s| {
            s.len() == rank
                && s.iter()
                    .zip(shapes[0])
                    .enumerate()
                    .all(|(k, (a, b))| k == axis || a == b)
        }) && (0..cx.len()).all(|i| cx.value(i).element_type() == ty);
        if !fits {
            return Err(EvalError::Invalid(format!(
                "the inputs {shapes:?} do not concatenate along axis {axis}"
            )));
        }
        let mut out_shape = shapes[0].to_vec();
        out_shape[axis] = shapes
            .iter()
            .try_fold(0usize, |n, s| n.checked_add(s[axis]))
            .ok_or_else(|| EvalError::Invalid("the output is too large".into()))?;
        let total = out_shape
            .iter()
            .try_fold(1usize, |n, &d| n.checked_mul(d))
            .ok_or_else(|| EvalError::Invalid("the output is too large".into()))?;
        cx.reserve(ty, total)?;
        let outer: usize = out_shape[..axis].iter().product();
        // Each input's run of elements per outer index.
        let runs: Vec<usize> = shapes.iter().map(|s| s[axis..].iter().product()).collect();
        fn go<T: Element>(
            cx: &EvalCx<'_>,
            runs: &[usize],
            outer: usize,
            total: usize,
            shape: &[usize],
        ) -> Option<Tensor> {
            let data: Vec<_> = (0..cx.len())
                .map(|i| crate::ops::kernel::value_data::<T>(cx.value(i)))
                .collect::<Option<_>>()?;
            let srcs: Vec<&[T]> = data.iter().map(|d| &d[..]).collect();
            let out = concatenated(&srcs, runs, outer, total);
            ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(shape), out)
                .ok()
                .map(T::wrap)
        }
        crate::dispatch!(any: ty, T => go::<T>(cx, &runs, outer, total, &out_shape), _ => None)
            .map(|t| vec![t])
            .ok_or(EvalError::Internal("Concat's inputs"))
    }

    fn moves(&self, _: usize) -> bool {
        true
    }
}

/// The inputs `srcs` (each `outer` runs of `runs[i]` elements) interleaved run by run: `total`
/// elements, copied in parallel pieces (plain copies: the same result at any thread count).
fn concatenated<T: Copy + Send + Sync>(
    srcs: &[&[T]],
    runs: &[usize],
    outer: usize,
    total: usize,
) -> Vec<T> {
    use rayon::prelude::*;
    /// Elements per parallel piece.
    const PIECE: usize = 1 << 16;
    let row: usize = runs.iter().sum();
    let mut out: Vec<T> = Vec::with_capacity(total);
    if row == 0 || outer == 0 {
        return out;
    }
    // Where each input's run starts within an output row.
    let starts: Vec<usize> = runs
        .iter()
        .scan(0, |at, &n| {
            let s = *at;
            *at += n;
            Some(s)
        })
        .collect();
    out.spare_capacity_mut()[..total]
        .par_chunks_mut(PIECE)
        .enumerate()
        .for_each(|(piece, dst)| {
            let first = piece * PIECE;
            let mut done = 0;
            while done < dst.len() {
                let pos = first + done;
                let (o, within) = (pos / row, pos % row);
                // The input whose run holds `within` (the last that starts at or before it and
                // is not empty).
                let i = (0..runs.len())
                    .rev()
                    .find(|&i| starts[i] <= within && runs[i] > 0)
                    .unwrap_or(0);
                let skip = within - starts[i];
                let len = (runs[i] - skip).min(dst.len() - done);
                let src = &srcs[i][o * runs[i] + skip..o * runs[i] + skip + len];
                for (d, s) in dst[done..done + len].iter_mut().zip(src) {
                    d.write(*s);
                }
                done += len;
            }
        });
    // SAFETY: every one of the `total` elements was written above (the pieces cover the
    // output, and each output row is the inputs' runs, which fill it).
    unsafe { out.set_len(total) };
    out
}

#[cfg(test)]
mod piece_tests {
    use super::concatenated;

    #[test]
    fn pieces_cover_every_layout() {
        // Runs of several inputs (some empty), across piece boundaries, for many row counts.
        for (runs, outer) in [
            (vec![3usize, 0, 5], 7usize),
            (vec![70_000, 1], 3),
            (vec![1, 1, 1], 100_000),
            (vec![200_000], 1),
            (vec![0, 0], 5),
        ] {
            let srcs: Vec<Vec<u32>> = runs
                .iter()
                .enumerate()
                .map(|(i, &n)| {
                    (0..n * outer)
                        .map(|k| (i as u32) << 24 | k as u32)
                        .collect()
                })
                .collect();
            let refs: Vec<&[u32]> = srcs.iter().map(|v| &v[..]).collect();
            let total = runs.iter().sum::<usize>() * outer;
            let got = concatenated(&refs, &runs, outer, total);
            let mut want = Vec::new();
            for o in 0..outer {
                for (s, &n) in srcs.iter().zip(&runs) {
                    want.extend_from_slice(&s[o * n..(o + 1) * n]);
                }
            }
            assert!(got == want, "runs {runs:?} × {outer}");
        }
    }
}
