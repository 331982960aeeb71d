//! Tile-1: the data repeated along each axis.
//!
//! Spec: <https://docs.openvino.ai/2026/documentation/openvino-ir-format/operation-sets/operation-specs/movement/tile-1.html>
//!
//! Ports: `data` (any type), `repeats` (a 1-D integer tensor; no element negative); one output
//! of the data's type. No attributes. A `repeats` shorter than the data's rank is padded with
//! 1s at the front; a longer one pads the data's shape with 1s at the front; output dim `k` is
//! data dim `k` times `repeats[k]` (a 0 gives an empty output).
//!
//! Decisions: a negative repeat is an error (E507), as is a `repeats` that is not 1-D.
//!
//! Inference: a known `repeats` gives exact dims (interval data dims times it), bounds of it
//! interval dims, and an unknown `repeats` of known length the output's rank with dynamic dims
//! (a data dim of 0 stays 0). Bounds of shape values pass through the data input. Execution
//! checks the output against the memory budget first, then writes each innermost row as a
//! slice and each repetition of a block as a copy of the block already written.

use super::{Arity, AttrError, Attrs, EvalCx, EvalError, InferCx, Op, OpDef};
use crate::shape::{Dim, PartialShape, TensorType};
use crate::tensor::{Element, Tensor, TypeSet};

#[derive(Clone, Debug, PartialEq)]
pub struct Tile;

pub const DEF: OpDef = OpDef {
    name: "Tile",
    version: 1,
    inputs: Arity::exactly(2),
    outputs: Arity::exactly(1),
    parse,
};

fn parse(_: &Attrs) -> Result<Box<dyn Op>, Vec<AttrError>> {
    Ok(Box::new(Tile))
}

/// `a` padded at the front with `fill` to `rank` elements (at least `a` itself).
fn pad_front<T: Copy>(a: &[T], rank: usize, fill: T) -> Vec<T> {
    let mut v = vec![fill; rank.saturating_sub(a.len())];
    v.extend_from_slice(a);
    v
}

/// The axes of a tile as (data dim, repeats): those of (1, 1) dropped and neighbours that both
/// repeat once merged. Every axis left has a product of at least 2, so a tile of `n` elements
/// has at most log2(n) of them (the copy recurses once per axis).
fn coalesce(dims: &[usize], repeats: &[usize]) -> Vec<(usize, usize)> {
    let mut axes: Vec<(usize, usize)> = Vec::new();
    for (&n, &r) in dims.iter().zip(repeats) {
        if n == 1 && r == 1 {
            continue;
        }
        if r == 1
            && let Some(last) = axes.last_mut()
            && last.1 == 1
        {
            last.0 = last.0.saturating_mul(n);
            continue;
        }
        axes.push((n, r));
    }
    axes
}

/// Appends the tile of the data block at `at` (of `src`) over `axes[k..]`: the innermost rows
/// as slices, each further repetition of a block copied from the first (doubling), so the
/// work is a few large copies. `None` if an index leaves `src` (never, for consistent shapes).
fn fill<T: Copy>(
    out: &mut Vec<T>,
    src: &[T],
    axes: &[(usize, usize)],
    strides: &[usize],
    k: usize,
    at: usize,
) -> Option<()> {
    let Some(&(n, repeats)) = axes.get(k) else {
        // No axis left: one element.
        out.push(*src.get(at)?);
        return Some(());
    };
    let start = out.len();
    if k + 1 == axes.len() {
        out.extend_from_slice(src.get(at..at.checked_add(n)?)?);
    } else {
        let stride = *strides.get(k)?;
        for i in 0..n {
            fill(out, src, axes, strides, k + 1, at + i * stride)?;
        }
    }
    let len = out.len() - start;
    let mut have = 1;
    while have < repeats {
        let more = have.min(repeats - have);
        out.extend_from_within(start..start + more * len);
        have += more;
    }
    Some(())
}

/// `data` of shape `dims` (padded to the output's rank) tiled by `repeats` into `out` of
/// `total` elements (within the budget).
fn tile<T: Element>(
    data: &Tensor,
    dims: &[usize],
    repeats: &[usize],
    out: &[usize],
    total: usize,
) -> Result<Tensor, EvalError> {
    let src =
        crate::ops::kernel::contiguous::<T>(data).ok_or(EvalError::Internal("Tile's data type"))?;
    let mut v: Vec<T> = Vec::with_capacity(total);
    if total > 0 {
        let axes = coalesce(dims, repeats);
        let mut strides = vec![1usize; axes.len()];
        for k in (0..axes.len().saturating_sub(1)).rev() {
            strides[k] = strides[k + 1].saturating_mul(axes[k + 1].0);
        }
        fill(&mut v, &src, &axes, &strides, 0, 0).ok_or(EvalError::Internal("Tile's copy"))?;
        if v.len() != total {
            return Err(EvalError::Internal("Tile's output size"));
        }
    }
    ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(out), v)
        .map(T::wrap)
        .map_err(|_| EvalError::Invalid(format!("the output shape {out:?} is too large")))
}

impl Op for Tile {
    fn def(&self) -> Option<&'static OpDef> {
        Some(&DEF)
    }

    fn infer(&self, cx: &mut InferCx<'_>) -> Option<Vec<TensorType>> {
        cx.require(1..2, TypeSet::INT)?;
        let (data, repeats) = (cx.input(0), cx.input(1));
        let ty = data.element_type;
        if let Some(r) = repeats.shape.rank()
            && r != 1
        {
            return cx.invalid(1, format!("repeats must be 1-D, not rank {r}"));
        }
        let unknown = || Some(vec![TensorType::new(ty, PartialShape::dynamic_rank())]);
        let reps = match super::broadcast::int_dims(repeats, "repeats") {
            Ok(Some(r)) => r,
            Ok(None) => return unknown(),
            Err(reason) => return cx.invalid(1, reason),
        };
        let Some(dims) = data.shape.dims() else {
            return unknown();
        };
        let rank = dims.len().max(reps.len());
        let d = pad_front(dims, rank, Dim::fixed(1));
        let r = pad_front(&reps, rank, Dim::fixed(1));
        let out = d.iter().zip(&r).map(|(&a, &b)| a.times(b)).collect();
        Some(vec![TensorType::new(ty, PartialShape::new(out))])
    }

    fn eval(&self, cx: &EvalCx<'_>) -> Result<Vec<Tensor>, EvalError> {
        let data = cx.tensor(0)?;
        let ty = data.element_type();
        let rank = cx.value(1).shape().len();
        if rank != 1 {
            return Err(EvalError::Invalid(format!(
                "repeats must be 1-D, not rank {rank}"
            )));
        }
        let repeats = cx
            .ints(1)?
            .iter()
            .enumerate()
            .map(|(k, &r)| {
                usize::try_from(r).map_err(|_| {
                    EvalError::Invalid(if r < 0 {
                        format!("repeats element {k} is {r}; it cannot be negative")
                    } else {
                        format!("repeats element {k} is {r}, beyond this machine's sizes")
                    })
                })
            })
            .collect::<Result<Vec<usize>, _>>()?;
        let rank = data.shape().len().max(repeats.len());
        let dims = pad_front(data.shape(), rank, 1);
        let reps = pad_front(&repeats, rank, 1);
        let out: Option<Vec<usize>> = dims
            .iter()
            .zip(&reps)
            .map(|(&d, &r)| d.checked_mul(r))
            .collect();
        let total = out.as_deref().and_then(super::broadcast::elements);
        let (Some(out), Some(total)) = (out, total) else {
            // More elements than memory can address: over any budget.
            cx.reserve(ty, usize::MAX)?;
            return Err(EvalError::Invalid(format!(
                "tiling {:?} by {repeats:?} gives more elements than memory can address",
                data.shape()
            )));
        };
        cx.reserve(ty, total)?;
        crate::dispatch!(any: ty, T => tile::<T>(&data, &dims, &reps, &out, total), _ => Err(EvalError::UnsupportedType {
            op: "Tile".into(),
            ty,
        }))
        .map(|t| vec![t])
    }

    fn moves(&self, input: usize) -> bool {
        input == 0
    }
}

#[cfg(test)]
mod tests {

    use half::f16;

    use super::*;
    use crate::dtype::ElementType;

    use crate::shape::types::{Bounds, UNBOUNDED};

    fn t<T: Element>(shape: &[usize], v: Vec<T>) -> Tensor {
        crate::ops::context::tensor_for_test(shape, v)
    }

    fn ints(v: &[i64]) -> Tensor {
        t(&[v.len()], v.to_vec())
    }

    fn run(inputs: &[Tensor], limit: u64) -> Result<Tensor, EvalError> {
        crate::ops::context::eval_for_test(&Tile, inputs, limit)
    }

    /// A tensor as its type, shape and bytes (NaNs and −0 compared bit for bit).
    fn bits(t: &Tensor) -> (ElementType, Vec<usize>, Vec<u8>) {
        (t.element_type(), t.shape().to_vec(), t.to_le_bytes())
    }

    #[test]
    fn eval_table() {
        let nan = f16::from_bits(0x7e01);
        let cases: Vec<(Tensor, &[i64], Tensor)> = vec![
            (
                t(&[2, 2], vec![1f32, 2., 3., 4.]),
                &[2, 2],
                t(
                    &[4, 4],
                    vec![
                        1f32, 2., 1., 2., 3., 4., 3., 4., 1., 2., 1., 2., 3., 4., 3., 4.,
                    ],
                ),
            ),
            // repeats shorter than the rank: padded with 1s at the front
            (
                t(&[2, 3], vec![1i64, 2, 3, 4, 5, 6]),
                &[2],
                t(&[2, 6], vec![1i64, 2, 3, 1, 2, 3, 4, 5, 6, 4, 5, 6]),
            ),
            // repeats longer than the rank: the data's shape padded with 1s at the front
            (
                t(&[2], vec![1u8, 2]),
                &[2, 1, 3],
                t(&[2, 1, 6], [1u8, 2].repeat(6)),
            ),
            // a 0 repeat: an empty output
            (
                t(&[2, 3], vec![1f32; 6]),
                &[0, 1],
                t(&[0, 3], Vec::<f32>::new()),
            ),
            (
                t(&[2, 1], vec![true, false]),
                &[1, 3],
                t(&[2, 3], vec![true, true, true, false, false, false]),
            ),
            (
                t(&[2], vec![f16::NEG_ZERO, nan]),
                &[3],
                t(&[6], [f16::NEG_ZERO, nan].repeat(3)),
            ),
            (t(&[], vec![5i32]), &[], t(&[], vec![5i32])),
            (t(&[], vec![5i32]), &[3], t(&[3], vec![5i32; 3])),
            (
                t(&[0, 2], Vec::<i8>::new()),
                &[3, 3],
                t(&[0, 6], Vec::<i8>::new()),
            ),
            // repeats of 1: the data as it is
            (
                t(&[2, 2], vec![1u16, 2, 3, 4]),
                &[1, 1, 1],
                t(&[1, 2, 2], vec![1u16, 2, 3, 4]),
            ),
        ];
        for (k, (data, repeats, want)) in cases.iter().enumerate() {
            let got = run(&[data.clone(), ints(repeats)], 1 << 20)
                .unwrap_or_else(|e| panic!("case {k}: {e}"));
            assert_eq!(bits(&got), bits(want), "case {k}");
        }
    }

    /// The tile against an element-by-element reference, on shapes that coalesce differently.
    #[test]
    fn tiles_match_a_reference() {
        let cases: [(&[usize], &[i64]); 8] = [
            (&[2, 3, 4], &[1, 2, 3]),
            (&[2, 3, 4], &[5, 1, 2, 3]),
            (&[5, 2, 3, 4], &[1, 2, 3]),
            (&[3, 1, 2], &[2, 4, 1]),
            (&[1, 1, 4], &[3, 1, 1]),
            (&[2, 2, 2, 2], &[1, 2, 1, 2]),
            (&[3, 2], &[1, 1]),
            (&[1], &[7]),
        ];
        for (dshape, repeats) in cases {
            let n: usize = dshape.iter().product();
            let v: Vec<i32> = (0..n as i32).collect();
            let got = run(&[t(dshape, v.clone()), ints(repeats)], 1 << 20).unwrap();
            let rank = dshape.len().max(repeats.len());
            let d = pad_front(dshape, rank, 1);
            let r = pad_front(
                &repeats.iter().map(|&x| x as usize).collect::<Vec<_>>(),
                rank,
                1,
            );
            let out: Vec<usize> = d.iter().zip(&r).map(|(a, b)| a * b).collect();
            let data = ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(&d), v).unwrap();
            let want = ndarray::ArrayD::from_shape_fn(ndarray::IxDyn(&out), |idx| {
                let src: Vec<usize> = (0..rank).map(|k| idx[k] % d[k]).collect();
                data[ndarray::IxDyn(&src)]
            });
            assert_eq!(got, Tensor::from(want), "{dshape:?} by {repeats:?}");
        }
    }

    #[test]
    fn eval_errors() {
        let data = t(&[2], vec![1f32, 2.]);
        for (repeats, want) in [
            (
                ints(&[-1]),
                "repeats element 0 is -1; it cannot be negative",
            ),
            (
                ints(&[2, -3]),
                "repeats element 1 is -3; it cannot be negative",
            ),
            (t(&[1, 1], vec![2i64]), "repeats must be 1-D, not rank 2"),
            (t(&[], vec![2i64]), "repeats must be 1-D, not rank 0"),
        ] {
            match run(&[data.clone(), repeats], 1 << 20) {
                Err(EvalError::Invalid(m)) => assert!(m.contains(want), "{m}"),
                other => panic!("expected {want:?}, got {other:?}"),
            }
        }
    }

    /// The budget is checked before the output is allocated; a count that overflows is over
    /// budget too; neither panics. A long `repeats` of 1s does not recurse deeply.
    #[test]
    fn allocation_bombs_hit_the_budget() {
        let data = t(&[2, 2], vec![1f32; 4]);
        for repeats in [
            vec![1 << 20, 1 << 20],
            vec![i64::MAX, i64::MAX],
            vec![1 << 40, 1 << 40, 1 << 40],
            vec![2; 80],
        ] {
            let got = run(&[data.clone(), ints(&repeats)], 1 << 20);
            assert!(matches!(got, Err(EvalError::Memory(_))), "{got:?}");
        }
        let got = run(&[data.clone(), ints(&[0, i64::MAX, i64::MAX])], 1 << 20);
        assert!(got.is_err() || got.is_ok_and(|t| t.is_empty()));
        let got = run(&[t(&[3], vec![1u8, 2, 3]), ints(&vec![1; 5000])], 1 << 20).unwrap();
        assert_eq!(got.shape().len(), 5000);
        assert_eq!(got.to_le_bytes(), vec![1, 2, 3]);
    }

    /// Runs inference: the output shape, or the findings.
    fn infer(inputs: &[TensorType]) -> Result<String, String> {
        let refs: Vec<&TensorType> = inputs.iter().collect();
        crate::ops::context::inferred_shape_for_test(&Tile, &refs)
    }

    fn ty(shape: &str) -> TensorType {
        TensorType::new(ElementType::F32, PartialShape::parse(shape).unwrap())
    }

    #[test]
    fn infer_table() {
        let known = |v: &[i64]| TensorType::of_value(ints(v));
        let unknown =
            |len: &str| TensorType::new(ElementType::I32, PartialShape::parse(len).unwrap());
        let bounded = |lo: &[i64], hi: &[i64]| {
            Bounds {
                lo: lo.to_vec(),
                hi: hi.to_vec(),
            }
            .into_type(ElementType::I64, PartialShape::fixed(&[lo.len() as u64]))
        };
        let cases: Vec<(TensorType, TensorType, &str)> = vec![
            (ty("2,3,4"), known(&[1, 2, 3]), "[2,6,12]"),
            (ty("2,3,4"), known(&[5, 1, 2, 3]), "[5,2,6,12]"),
            (ty("5,2,3,4"), known(&[1, 2, 3]), "[5,2,6,12]"),
            (ty("?,2..3"), known(&[2, 2]), "[?,4..6]"),
            (ty("2,3"), known(&[0, 1]), "[0,3]"),
            (ty("2,3"), bounded(&[1, 2], &[4, UNBOUNDED]), "[2..8,6..]"),
            (ty("0,3"), unknown("2"), "[0,?]"),
            (ty("3"), unknown("2"), "[?,?]"),
            (ty("3"), unknown("?"), "[...]"),
            (ty("..."), known(&[2]), "[...]"),
        ];
        for (k, (data, repeats, want)) in cases.into_iter().enumerate() {
            assert_eq!(infer(&[data, repeats]).as_deref(), Ok(want), "case {k}");
        }
        for (repeats, want) in [
            (known(&[2, -1]), "Some((Input, 1)) repeats element 1 is -1"),
            (
                unknown("2,2"),
                "Some((Input, 1)) repeats must be 1-D, not rank 2",
            ),
            (
                TensorType::new(ElementType::F32, PartialShape::parse("2").unwrap()),
                "Some((Input, 1))",
            ),
        ] {
            match infer(&[ty("2,3"), repeats]) {
                Err(m) => assert!(m.contains(want), "{m}"),
                Ok(s) => panic!("expected {want:?}, got {s}"),
            }
        }
    }
}
