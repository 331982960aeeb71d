//! Transpose-1: reorders the dims of `arg` by `input_order`.
//!
//! Spec: <https://docs.openvino.ai/2026/documentation/openvino-ir-format/operation-sets/operation-specs/movement/transpose-1.html>
//!
//! Ports: `arg` (any type, any rank) and `input_order` (a 1-D integer tensor holding every axis
//! `0..rank` once, or empty: the dims reversed); output dim `k` is `arg`'s dim
//! `input_order[k]`. No attributes.
//!
//! Decisions: an order that is not a permutation of `0..rank` (a repeated axis, an axis out of
//! range, a negative one: the spec asks for "every integer in the range [0, n-1]" and OpenVINO
//! refuses the others) is an invalid input naming the order. Inference permutes the dims
//! (intervals move with their dims) when the order is known; when it is not, the output has
//! the input's rank and dynamic dims. The bounds of shape values pass through.
//!
//! Execution copies elements exactly. Dims that stay next to each other in the same order are
//! merged first; when the last dim stays last, each output row is a run copied from the input;
//! otherwise the two innermost dims are transposed in blocks (so that both the reads and
//! the writes stay within a few cache lines), in parallel over the output.

use super::{Arity, AttrError, Attrs, EvalCx, EvalError, InferCx, Op, OpDef};
use crate::shape::{Dim, PartialShape, TensorType};
use std::mem::MaybeUninit;

use crate::tensor::{Element, Tensor, TypeSet};

#[derive(Clone, Debug, PartialEq)]
pub struct Transpose;

pub const DEF: OpDef = OpDef {
    name: "Transpose",
    version: 1,
    inputs: Arity::exactly(2),
    outputs: Arity::exactly(1),
    parse,
};

fn parse(_: &Attrs) -> Result<Box<dyn Op>, Vec<AttrError>> {
    Ok(Box::new(Transpose))
}

/// The order as axes of a tensor of `rank` (empty: reversed); why not, if it is no
/// permutation.
pub fn permutation(order: &[i64], rank: usize) -> Result<Vec<usize>, String> {
    if order.is_empty() {
        return Ok((0..rank).rev().collect());
    }
    if order.len() != rank {
        return Err(format!(
            "the order {order:?} has {} axes but the input has rank {rank}",
            order.len()
        ));
    }
    let mut seen = vec![false; rank];
    let mut out = Vec::with_capacity(rank);
    for &a in order {
        let k = usize::try_from(a)
            .ok()
            .filter(|&k| k < rank)
            .ok_or_else(|| format!("the order {order:?} holds {a}, not an axis 0..{rank}"))?;
        if std::mem::replace(&mut seen[k], true) {
            return Err(format!("the order {order:?} holds axis {a} twice"));
        }
        out.push(k);
    }
    Ok(out)
}

impl Op for Transpose {
    fn def(&self) -> Option<&'static OpDef> {
        Some(&DEF)
    }

    fn infer(&self, cx: &mut InferCx<'_>) -> Option<Vec<TensorType>> {
        cx.require(1..2, TypeSet::INT)?;
        let (data, order) = (cx.input(0), cx.input(1));
        let ty = data.element_type;
        if let Some(r) = order.shape.rank()
            && r != 1
        {
            return cx.invalid(1, format!("the order must be 1-D, not rank {r}"));
        }
        let dynamic = |rank: Option<usize>| {
            Some(vec![TensorType::new(
                ty,
                rank.map_or_else(PartialShape::dynamic_rank, |r| {
                    PartialShape::new(vec![Dim::DYNAMIC; r])
                }),
            )])
        };
        let Some(dims) = data.shape.dims() else {
            // The rank is the order's length, when that is known and not 0.
            let n = order
                .shape
                .dims()
                .and_then(|d| d.first().and_then(|d| d.get_static()));
            return dynamic(n.filter(|&n| n > 0).and_then(|n| usize::try_from(n).ok()));
        };
        let Some(values) = cx.ints(1) else {
            return dynamic(Some(dims.len()));
        };
        match permutation(&values, dims.len()) {
            Ok(p) => Some(vec![TensorType::new(
                ty,
                PartialShape::new(p.iter().map(|&k| dims[k]).collect()),
            )]),
            Err(reason) => cx.invalid(1, reason),
        }
    }

    fn eval(&self, cx: &EvalCx<'_>) -> Result<Vec<Tensor>, EvalError> {
        // Read in place: a tensor, or bytes (a lent input, a Const's).
        let data = cx.value(0);
        let shape = data.shape();
        let perm = permutation(&cx.ints(1)?, shape.len()).map_err(EvalError::Invalid)?;
        cx.reserve(data.element_type(), data.len())?;
        let out: Vec<usize> = perm.iter().map(|&k| shape[k]).collect();
        let moved = crate::dispatch!(any: data.element_type(), T => {
            crate::ops::kernel::value_data::<T>(data).and_then(|d| permuted(&d, shape, &perm, &out))
        }, _ => None);
        match moved {
            Some(t) => Ok(vec![t]),
            // Types no tensor holds (a packed Const): the error reading one as a tensor gives.
            None => cx
                .tensor(0)
                .and_then(|t| transposed(&t, &perm))
                .map(|t| vec![t]),
        }
    }

    fn moves(&self, input: usize) -> bool {
        input == 0
    }
}

/// `t` with its dims reordered: output dim `k` is `t`'s dim `perm[k]` (a permutation).
pub fn transposed(t: &Tensor, perm: &[usize]) -> Result<Tensor, EvalError> {
    transposed_as(t, t.shape(), perm)
}

/// `t`'s elements read as a tensor of `shape` (as many elements, row-major: a reshape that
/// copies nothing), with those dims reordered by `perm` (a permutation of `shape`'s axes).
pub fn transposed_as(t: &Tensor, shape: &[usize], perm: &[usize]) -> Result<Tensor, EvalError> {
    if shape.iter().try_fold(1usize, |n, &d| n.checked_mul(d)) != Some(t.len())
        || perm.len() != shape.len()
        || perm.iter().any(|&k| k >= shape.len())
    {
        return Err(EvalError::Internal("a transpose of another shape"));
    }
    let out: Vec<usize> = perm.iter().map(|&k| shape[k]).collect();
    crate::dispatch!(any: t.element_type(), T => {
        crate::ops::kernel::contiguous::<T>(t).and_then(|d| permuted(&d, shape, perm, &out))
    }, _ => None)
    .ok_or(EvalError::Internal("a transpose of its own shape"))
}

/// Row-major `data` of `shape` with its dims reordered by `perm`, as a tensor of shape `out`.
fn permuted<T: Element>(
    data: &[T],
    shape: &[usize],
    perm: &[usize],
    out: &[usize],
) -> Option<Tensor> {
    let moved = permute(data, shape, perm);
    ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(out), moved)
        .ok()
        .map(T::wrap)
}

/// Dims of the input after merging, in input order (`size`), and the output's order of them.
struct Merged {
    size: Vec<usize>,
    order: Vec<usize>,
}

/// Drops dims of 1 and merges input dims that stay adjacent and in order in the output: the
/// same copy over fewer, longer dims.
fn merge(shape: &[usize], perm: &[usize]) -> Merged {
    // Output positions of the dims that are not 1, as input axes.
    let kept: Vec<usize> = perm.iter().copied().filter(|&k| shape[k] != 1).collect();
    // Groups of input axes, in output order: a run of consecutive input axes.
    let mut groups: Vec<(usize, usize)> = Vec::new(); // (first input axis, last input axis)
    for &k in &kept {
        match groups.last_mut() {
            Some((_, last)) if next_kept(shape, *last) == Some(k) => *last = k,
            _ => groups.push((k, k)),
        }
    }
    // The groups in input order give the merged input dims.
    let mut by_input: Vec<usize> = (0..groups.len()).collect();
    by_input.sort_by_key(|&g| groups[g].0);
    let size: Vec<usize> = by_input
        .iter()
        .map(|&g| (groups[g].0..=groups[g].1).map(|k| shape[k]).product())
        .collect();
    let mut rank_of = vec![0; groups.len()];
    for (r, &g) in by_input.iter().enumerate() {
        rank_of[g] = r;
    }
    Merged {
        size,
        order: (0..groups.len()).map(|g| rank_of[g]).collect(),
    }
}

/// The next input axis after `k` whose dim is not 1.
fn next_kept(shape: &[usize], k: usize) -> Option<usize> {
    (k + 1..shape.len()).find(|&j| shape[j] != 1)
}

/// A plane is transposed in blocks of `BLOCK` input columns (a cache line of f32) by `ROWS`
/// input rows: each input line is read once and used whole, and the block's output (`BLOCK`
/// rows of `ROWS`) stays in L1. Square blocks of 16 × 16 read 16 rows a power of two apart,
/// which fall in one cache set: the NCHW → NHWC transpose of `[64,64,64,64]` took 18 ms.
const BLOCK: usize = 16;
const ROWS: usize = 256;

/// One block of a plane transpose: `dst[c * ob + i] = src[c + i * fr]` for `c` in `c0..c1`
/// and `i` in `i0..i1`. Each input row of the block is read as one slice, and the writes go
/// through raw pointers after one bounds check for the block (element by element with checked
/// indexing, the keys' transpose of an attention block took twice as long).
#[inline(always)]
fn block<T: Copy>(
    src: &[T],
    dst: &mut [MaybeUninit<T>],
    (c0, c1): (usize, usize),
    (i0, i1): (usize, usize),
    (fr, ob): (usize, usize),
) {
    if c1 <= c0 || i1 <= i0 {
        return;
    }
    // The block's last write, checked once for all of them.
    let last = (c1 - 1) * ob + (i1 - 1);
    assert!(last < dst.len(), "a transpose block beyond its output");
    let out = dst.as_mut_ptr();
    for i in i0..i1 {
        let row = &src[c0 + i * fr..c1 + i * fr];
        for (k, &v) in row.iter().enumerate() {
            // SAFETY: (c0 + k) * ob + i <= last < dst.len() (checked above).
            unsafe { (*out.add((c0 + k) * ob + i)).write(v) };
        }
    }
}

/// The elements of `data` (of `shape`) with the dims reordered by `perm`, row-major.
fn permute<T: Copy + Send + Sync>(data: &[T], shape: &[usize], perm: &[usize]) -> Vec<T> {
    let n = data.len();
    let m = merge(shape, perm);
    let r = m.size.len();
    if r <= 1 || n == 0 {
        return data.to_vec();
    }
    // Input strides of the merged dims; the output's dims, their input strides (`from`) and
    // their output strides.
    let mut stride = vec![1usize; r];
    for k in (0..r - 1).rev() {
        stride[k] = stride[k + 1] * m.size[k + 1];
    }
    let dims: Vec<usize> = m.order.iter().map(|&k| m.size[k]).collect();
    let from: Vec<usize> = m.order.iter().map(|&k| stride[k]).collect();
    let mut ostride = vec![1usize; r];
    for k in (0..r - 1).rev() {
        ostride[k] = ostride[k + 1] * dims[k + 1];
    }
    // The input offset of output index `j` over output dims `ks` (row-major over them), and
    // its output offset.
    let offsets = |mut j: usize, ks: std::ops::Range<usize>| {
        let (mut at, mut o) = (0, 0);
        for k in ks.rev() {
            let d = j % dims[k];
            at += d * from[k];
            o += d * ostride[k];
            j /= dims[k];
        }
        (at, o)
    };
    let mut out: Vec<T> = Vec::with_capacity(n);
    let spare = &mut out.spare_capacity_mut()[..n];
    // Where the input's last dim (stride 1) goes in the output.
    let b = m.order.iter().position(|&k| k == r - 1).unwrap_or(r - 1);
    if b == r - 1 {
        // It stays last: every output row is a run of the input.
        let row = dims[r - 1];
        crate::ops::kernel::in_parts(
            spare,
            row,
            |at, o| {
                for (j, dst) in o.chunks_exact_mut(row).enumerate() {
                    let (src, _) = offsets(at / row + j, 0..r - 1);
                    for (d, &s) in dst.iter_mut().zip(&data[src..src + row]) {
                        d.write(s);
                    }
                }
                None::<()>
            },
            |_| (),
        );
    } else {
        // The output's dims from `b` on form contiguous spans (one per index of the dims
        // before `b`); within a span, each index of the dims between `b` and the last holds
        // a plane of `cols × rows` transposed from the input in blocks.
        let span: usize = dims[b..].iter().product();
        let mids: usize = dims[b + 1..r - 1].iter().product();
        let (cols, rows) = (dims[b], dims[r - 1]);
        let (ob, fr) = (ostride[b], from[r - 1]);
        crate::ops::kernel::in_parts(
            spare,
            span,
            |at, o| {
                for (sp, part) in o.chunks_exact_mut(span).enumerate() {
                    let (base, _) = offsets(at / span + sp, 0..b);
                    for mi in 0..mids {
                        let (mb, mo) = offsets(mi, b + 1..r - 1);
                        let (src, dst) = (&data[base + mb..], &mut part[mo..]);
                        for c0 in (0..cols).step_by(BLOCK) {
                            let c1 = (c0 + BLOCK).min(cols);
                            for i0 in (0..rows).step_by(ROWS) {
                                let i1 = (i0 + ROWS).min(rows);
                                block(src, dst, (c0, c1), (i0, i1), (fr, ob));
                            }
                        }
                    }
                }
                None::<()>
            },
            |_| (),
        );
    }
    // SAFETY: the parts are whole rows (spans) and every element of each was written: the
    // dims before the last (before `b`), and within a span every index of the others.
    unsafe { out.set_len(n) };
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::{ArrayD, IxDyn};

    /// The transpose by definition: output index `o` reads input index `i` with
    /// `i[perm[k]] = o[k]`.
    fn naive(data: &[u32], shape: &[usize], perm: &[usize]) -> Vec<u32> {
        let a = ArrayD::from_shape_vec(IxDyn(shape), data.to_vec()).unwrap();
        a.permuted_axes(IxDyn(perm)).iter().copied().collect()
    }

    fn perms(n: usize) -> Vec<Vec<usize>> {
        if n == 0 {
            return vec![vec![]];
        }
        let mut out = Vec::new();
        for p in perms(n - 1) {
            for at in 0..=p.len() {
                let mut q = p.clone();
                q.insert(at, n - 1);
                out.push(q);
            }
        }
        out
    }

    #[test]
    fn every_permutation_of_small_shapes_matches_the_definition() {
        for shape in [
            vec![2, 3, 4],
            vec![1, 5, 1, 7],
            vec![3, 1, 2, 17],
            vec![33, 2, 19],
            vec![1, 1],
            vec![4, 0, 3],
            vec![2, 2, 2, 2, 3],
        ] {
            let n: usize = shape.iter().product();
            let data: Vec<u32> = (0..n as u32).collect();
            for p in perms(shape.len()) {
                assert_eq!(
                    permute(&data, &shape, &p),
                    naive(&data, &shape, &p),
                    "shape {shape:?}, perm {p:?}"
                );
            }
        }
    }

    #[test]
    fn large_transposes_in_parallel_parts_match() {
        // More than one part, blocks with ragged edges.
        for (shape, p) in [
            (vec![2, 129, 301], vec![0, 2, 1]),
            (vec![1, 128, 12, 64], vec![0, 2, 1, 3]),
            (vec![1, 12, 128, 64], vec![0, 1, 3, 2]),
            (vec![700, 300], vec![1, 0]),
        ] {
            let n: usize = shape.iter().product();
            let data: Vec<u32> = (0..n as u32)
                .map(|x| x.wrapping_mul(2_654_435_761))
                .collect();
            assert_eq!(permute(&data, &shape, &p), naive(&data, &shape, &p));
        }
    }

    #[test]
    fn orders_that_are_no_permutation_are_refused() {
        assert_eq!(permutation(&[], 3).unwrap(), [2, 1, 0]);
        assert_eq!(permutation(&[2, 0, 1], 3).unwrap(), [2, 0, 1]);
        for bad in [&[0, 0, 1][..], &[0, 1], &[0, 1, 3], &[-1, 0, 1]] {
            assert!(permutation(bad, 3).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn every_type_is_copied_bit_for_bit() {
        use half::f16;
        let x = f16::from_bits(0x7e01); // a NaN with a payload
        let t = f16::wrap(ArrayD::from_shape_vec(IxDyn(&[2, 1]), vec![x, f16::ONE]).unwrap());
        let out = transposed(&t, &[1, 0]).unwrap();
        assert_eq!(out.shape(), [1, 2]);
        let v: Vec<u16> = f16::view(&out)
            .unwrap()
            .iter()
            .map(|v| v.to_bits())
            .collect();
        assert_eq!(v, [0x7e01, 0x3c00]);
        let b = bool::wrap(
            ArrayD::from_shape_vec(IxDyn(&[2, 2]), vec![true, false, false, true]).unwrap(),
        );
        let out = transposed(&b, &[1, 0]).unwrap();
        assert_eq!(
            bool::view(&out)
                .unwrap()
                .iter()
                .copied()
                .collect::<Vec<_>>(),
            [true, false, false, true]
        );
    }
}
