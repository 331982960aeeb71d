//! NonZero-3: the coordinates of the non-zero elements of a tensor.
//!
//! Spec: <https://docs.openvino.ai/2026/documentation/openvino-ir-format/operation-sets/operation-specs/condition/nonzero-3.html>
//!
//! Ports: `data` (any type ovir computes, boolean included); one output of `output_type` and
//! shape `[rank(data), count]`, `count` the number of non-zero elements: column `c` holds the
//! coordinates of the `c`-th non-zero element in row-major order (row `j` its coordinate along
//! axis `j`), as in OpenVINO's reference (`reference/non_zero.hpp`) and numpy's
//! `np.array(np.nonzero(x))`. Attribute `output_type`: `i64` (the default) or `i32`; any
//! other value is an attribute error.
//!
//! Decisions:
//! * An element is non-zero when it compares unequal to zero in its type: **NaN is non-zero**,
//!   −0.0 is zero (IEEE equality, as the reference's `arg[i] != 0`, C++'s and numpy's
//!   `astype(bool)`); `true` is non-zero.
//! * **A scalar gives `[0, count]`** (count 0 or 1, no elements either way), the spec's
//!   `[rank(data), num_non_zero]`. OpenVINO's evaluate gives `[1, 1]` holding 0 for a non-zero
//!   scalar (an ONNX test's expectation) and `[0, 0]` for a zero one, and its shape inference
//!   `[?, ?]`: not copied.
//! * With `output_type="i32"`, a coordinate that does not fit i32 is an error (OpenVINO
//!   wraps it).
//!
//! Inference: a dynamic rank gives `[?, ?]`; a rank r gives `[r, 0..n]` with n the largest
//! element count the data's dims allow (unbounded if a dim is); a known value (a small Const or
//! what is computed from Consts) gives the exact count, and the output's value is then folded.
//!
//! Execution counts the non-zero elements (in parallel over fixed chunks), checks the output
//! (and the list of positions it is built from) against the memory budget, lists the flat
//! positions of the non-zero elements in order, then writes each row of coordinates from them.
//! The result does not depend on the thread count.

use rayon::prelude::*;

use super::{Arity, AttrError, Attrs, EvalCx, EvalError, InferCx, Op, OpDef};
use crate::dtype::ElementType;
use crate::shape::{Dim, PartialShape, TensorType};
use crate::tensor::{Element, Tensor, TypeSet};

#[derive(Clone, Debug, PartialEq)]
pub struct NonZero {
    /// i32 or i64.
    pub output_type: ElementType,
}

pub const DEF: OpDef = OpDef {
    name: "NonZero",
    version: 3,
    inputs: Arity::exactly(1),
    outputs: Arity::exactly(1),
    parse,
};

fn parse(a: &Attrs) -> Result<Box<dyn Op>, Vec<AttrError>> {
    let (output_type,) = crate::attrs_all!(a.parse_or("output_type", ElementType::I64, |t| {
        match super::parse_element_type(t)? {
            t @ (ElementType::I32 | ElementType::I64) => Ok(t),
            _ => Err("NonZero's output_type is i32 or i64".into()),
        }
    }))?;
    Ok(Box::new(NonZero {
        output_type: output_type.unwrap_or(ElementType::I64),
    }))
}

/// Elements per chunk of the parallel passes (fixed, so the work split does not depend on the
/// thread count; the result never does).
const CHUNK: usize = 1 << 16;

/// Whether `x` is not zero in its type (IEEE equality for floats: NaN is non-zero, −0 zero).
fn non_zero<T: Element>(x: T) -> bool {
    x != T::default()
}

/// The number of non-zero elements of `t`.
fn count(t: &Tensor) -> Option<usize> {
    fn go<T: Element>(t: &Tensor) -> Option<usize> {
        let v = crate::ops::kernel::contiguous::<T>(t)?;
        Some(
            v.par_chunks(CHUNK)
                .map(|c| c.iter().filter(|&&x| non_zero(x)).count())
                .sum(),
        )
    }
    crate::dispatch!(any: t.element_type(), T => go::<T>(t), _ => None)
}

/// The flat positions of the non-zero elements of `t`, in order (after a budget check of
/// `extra` more bytes plus the positions themselves).
fn positions(
    t: &Tensor,
    cx: &EvalCx<'_>,
    extra: impl Fn(usize) -> u64,
) -> Result<Vec<usize>, EvalError> {
    fn go<T: Element>(
        t: &Tensor,
        cx: &EvalCx<'_>,
        extra: &dyn Fn(usize) -> u64,
    ) -> Option<Result<Vec<usize>, EvalError>> {
        let v = crate::ops::kernel::contiguous::<T>(t)?;
        let counts: Vec<usize> = v
            .par_chunks(CHUNK)
            .map(|c| c.iter().filter(|&&x| non_zero(x)).count())
            .collect();
        let total: usize = counts.iter().sum();
        let own = (total as u64).saturating_mul(std::mem::size_of::<usize>() as u64);
        if let Err(e) = cx.reserve_bytes("NonZero's output", own.saturating_add(extra(total))) {
            return Some(Err(e));
        }
        let mut out = vec![0usize; total];
        // Each chunk of the input fills its own run of `out`.
        let mut parts: Vec<&mut [usize]> = Vec::with_capacity(counts.len());
        let mut rest = out.as_mut_slice();
        for &n in &counts {
            let (head, tail) = rest.split_at_mut(n);
            parts.push(head);
            rest = tail;
        }
        v.par_chunks(CHUNK)
            .zip(parts)
            .enumerate()
            .for_each(|(k, (c, part))| {
                let base = k * CHUNK;
                let found = c
                    .iter()
                    .enumerate()
                    .filter(|(_, x)| non_zero(**x))
                    .map(|(i, _)| base + i);
                for (slot, p) in part.iter_mut().zip(found) {
                    *slot = p;
                }
            });
        Some(Ok(out))
    }
    crate::dispatch!(any: t.element_type(), T => go::<T>(t, cx, &extra), _ => None).unwrap_or(Err(
        EvalError::UnsupportedType {
            op: "NonZero".into(),
            ty: t.element_type(),
        },
    ))
}

/// The output, `[rank, count]` rows of coordinates, from the flat positions of the non-zero
/// elements of data of `shape`.
fn coordinates<U: Element>(
    shape: &[usize],
    positions: &[usize],
    to: impl Fn(usize) -> U + Sync,
) -> Result<Tensor, EvalError> {
    let rank = shape.len();
    let count = positions.len();
    let mut out = vec![U::default(); rank * count];
    if count > 0 {
        // Row-major strides of the data (each at most its element count).
        let mut strides = vec![1usize; rank];
        for j in (0..rank.saturating_sub(1)).rev() {
            strides[j] = strides[j + 1] * shape[j + 1];
        }
        for (j, row) in out.chunks_mut(count).enumerate() {
            let (stride, dim) = (strides[j], shape[j]);
            row.par_chunks_mut(CHUNK)
                .zip(positions.par_chunks(CHUNK))
                .for_each(|(o, p)| {
                    for (o, &p) in o.iter_mut().zip(p) {
                        *o = to(p / stride % dim);
                    }
                });
        }
    }
    crate::ops::kernel::tensor_from(&[rank, count], out)
}

/// Checks that every coordinate of the non-zero elements at `positions` in data of `shape` fits
/// i32 (only a dim above 2^31 can hold one that does not).
fn check_i32(shape: &[usize], positions: &[usize]) -> Result<(), EvalError> {
    let limit = i32::MAX as usize;
    let mut stride = 1usize;
    for j in (0..shape.len()).rev() {
        let dim = shape[j];
        if dim > limit + 1
            && let Some(&p) = positions.iter().find(|&&p| p / stride % dim > limit)
        {
            return Err(EvalError::Invalid(format!(
                "the non-zero element at {:?} has coordinate {} along axis {j}, which does not fit output_type i32",
                crate::tensor::unravel(p, shape),
                p / stride % dim
            )));
        }
        stride = stride.saturating_mul(dim);
    }
    Ok(())
}

impl Op for NonZero {
    fn def(&self) -> Option<&'static OpDef> {
        Some(&DEF)
    }

    fn infer(&self, cx: &mut InferCx<'_>) -> Option<Vec<TensorType>> {
        cx.require(0..1, TypeSet::ANY)?;
        let data = cx.input(0);
        let Some(dims) = data.shape.dims() else {
            let shape = PartialShape::new(vec![Dim::DYNAMIC; 2]);
            return Some(vec![TensorType::new(self.output_type, shape)]);
        };
        let rank = Dim::fixed(dims.len() as u64);
        let known = data.value().and_then(|v| count(v));
        let count = match known {
            Some(n) => Dim::fixed(n as u64),
            None => {
                let max = data.shape.elements().and_then(|e| e.max());
                Dim::interval(0, max).unwrap_or(Dim::DYNAMIC)
            }
        };
        let shape = PartialShape::new(vec![rank, count]);
        Some(vec![TensorType::new(self.output_type, shape)])
    }

    fn eval(&self, cx: &EvalCx<'_>) -> Result<Vec<Tensor>, EvalError> {
        let data = cx.tensor(0)?;
        let shape = data.shape().to_vec();
        let rank = shape.len();
        let out_type = self.output_type;
        let extra = |count: usize| {
            (rank as u64)
                .checked_mul(count as u64)
                .and_then(|n| out_type.storage_bytes(n))
                .unwrap_or(u64::MAX)
        };
        let positions = positions(&data, cx, extra)?;
        if out_type == ElementType::I32 {
            check_i32(&shape, &positions)?;
        }
        let out = if out_type == ElementType::I32 {
            coordinates(&shape, &positions, |c| c as i32)?
        } else {
            coordinates(&shape, &positions, |c| c as i64)?
        };
        Ok(vec![out])
    }
}

#[cfg(test)]
mod tests {
    use half::{bf16, f16};

    use super::*;
    use crate::ops::context::{eval_for_test, inferred_shape_for_test, tensor_for_test};

    fn op(output_type: ElementType) -> NonZero {
        NonZero { output_type }
    }

    fn run(x: &Tensor, output_type: ElementType, limit: u64) -> Result<Tensor, EvalError> {
        eval_for_test(&op(output_type), std::slice::from_ref(x), limit)
    }

    /// The output as (shape, i64 values).
    fn got(x: &Tensor) -> (Vec<usize>, Vec<i64>) {
        let out = run(x, ElementType::I64, 1 << 30).unwrap();
        assert_eq!(out.element_type(), ElementType::I64);
        (
            out.shape().to_vec(),
            crate::shape::types::int_values(&out).unwrap(),
        )
    }

    #[test]
    fn spec_example_and_numpy_table() {
        // The spec's example.
        let x = tensor_for_test(&[2, 2], vec![1i32, 0, 1, 1]);
        assert_eq!(got(&x), (vec![2, 3], vec![0, 1, 1, 0, 0, 1]));
        // The reference's comment: [[[0, 2], [0, 0], [3, 4]], [[5, 0], [6, 0], [7, 8]]].
        let x = tensor_for_test(&[2, 3, 2], vec![0u8, 2, 0, 0, 3, 4, 5, 0, 6, 0, 7, 8]);
        assert_eq!(
            got(&x),
            (
                vec![3, 7],
                vec![
                    0, 0, 0, 1, 1, 1, 1, //
                    0, 2, 2, 0, 1, 2, 2, //
                    1, 0, 1, 0, 0, 0, 1,
                ]
            )
        );
        // 1-D: the positions themselves (np.nonzero).
        let x = tensor_for_test(&[6], vec![0i64, -3, 0, 0, 9, i64::MIN]);
        assert_eq!(got(&x), (vec![1, 3], vec![1, 4, 5]));
        // All zero: [rank, 0].
        let x = tensor_for_test(&[2, 3], vec![0i16; 6]);
        assert_eq!(got(&x), (vec![2, 0], vec![]));
        // Empty data.
        let x = tensor_for_test(&[3, 0, 4], Vec::<f32>::new());
        assert_eq!(got(&x), (vec![3, 0], vec![]));
        // All non-zero, 3-D with a dim of 1.
        let x = tensor_for_test(&[2, 1, 2], vec![1u64, 2, 3, 4]);
        assert_eq!(
            got(&x),
            (vec![3, 4], vec![0, 0, 1, 1, 0, 0, 0, 0, 0, 1, 0, 1])
        );
    }

    /// Scalars follow the spec's `[rank(data), count]`: `[0, count]`, no elements.
    #[test]
    fn scalars_give_rank_zero_rows() {
        let x = tensor_for_test(&[], vec![5.0f32]);
        assert_eq!(got(&x), (vec![0, 1], vec![]));
        let x = tensor_for_test(&[], vec![0u8]);
        assert_eq!(got(&x), (vec![0, 0], vec![]));
    }

    /// NaN is non-zero, −0 is zero, in every float type; booleans: `true` is non-zero.
    #[test]
    fn nan_is_non_zero_and_negative_zero_is_zero() {
        let want = (vec![1, 3], vec![1, 2, 4]);
        let f = [0.0f32, f32::NAN, -1.5, -0.0, f32::INFINITY];
        assert_eq!(got(&tensor_for_test(&[5], f.to_vec())), want);
        let d: Vec<f64> = f.iter().map(|&x| x as f64).collect();
        assert_eq!(got(&tensor_for_test(&[5], d)), want);
        let h: Vec<f16> = f.iter().map(|&x| f16::from_f32(x)).collect();
        assert_eq!(got(&tensor_for_test(&[5], h)), want);
        let b: Vec<bf16> = f.iter().map(|&x| bf16::from_f32(x)).collect();
        assert_eq!(got(&tensor_for_test(&[5], b)), want);
        // A negative NaN and the smallest subnormal are non-zero too.
        let x = tensor_for_test(
            &[3],
            vec![f32::from_bits(0xffc0_0001), f32::from_bits(1), -0.0],
        );
        assert_eq!(got(&x), (vec![1, 2], vec![0, 1]));
        let x = tensor_for_test(&[2, 2], vec![false, true, true, false]);
        assert_eq!(got(&x), (vec![2, 2], vec![0, 1, 1, 0]));
    }

    #[test]
    fn output_type_i32() {
        let x = tensor_for_test(&[2, 2], vec![1i32, 0, 1, 1]);
        let out = run(&x, ElementType::I32, 1 << 20).unwrap();
        assert_eq!(out, tensor_for_test(&[2, 3], vec![0i32, 1, 1, 0, 0, 1]));
    }

    /// A large input crosses several chunks: the result equals a plain loop.
    #[test]
    fn large_inputs_match_a_plain_loop() {
        let shape = [3, 700, 97];
        let n: usize = shape.iter().product();
        let v: Vec<i32> = (0..n)
            .map(|i| if (i * 7919) % 13 < 4 { i as i32 } else { 0 })
            .collect();
        let flat: Vec<usize> = (0..n).filter(|&i| v[i] != 0).collect();
        let mut want = Vec::new();
        for (j, stride) in [700 * 97, 97, 1].into_iter().enumerate() {
            want.extend(flat.iter().map(|&p| (p / stride % shape[j]) as i64));
        }
        let x = tensor_for_test(&shape, v);
        assert_eq!(got(&x), (vec![3, flat.len()], want));
    }

    #[test]
    fn outputs_over_the_budget_are_refused() {
        let x = tensor_for_test(&[1000], vec![1u8; 1000]);
        // Positions (8 KB) plus the output (8 KB).
        assert!(matches!(
            run(&x, ElementType::I64, 15_000),
            Err(EvalError::Memory(_))
        ));
        assert!(run(&x, ElementType::I64, 17_000).is_ok());
    }

    fn parsed(attrs: &[(&str, &str)]) -> Result<String, Vec<String>> {
        crate::ops::context::parsed_for_test(&DEF, attrs)
    }

    #[test]
    fn parse_table() {
        let ok = |t| Ok(format!("{:?}", op(t)));
        assert_eq!(parsed(&[]), ok(ElementType::I64));
        assert_eq!(parsed(&[("output_type", "i32")]), ok(ElementType::I32));
        assert_eq!(parsed(&[("output_type", "i64")]), ok(ElementType::I64));
        assert_eq!(
            parsed(&[("output_type", "f32")]),
            Err(vec![
                "output_type Some(\"f32\"): NonZero's output_type is i32 or i64".into()
            ])
        );
        assert!(parsed(&[("output_type", "int")]).is_err());
    }

    fn infer(shape: &str) -> Result<String, String> {
        let ty = TensorType::new(ElementType::F32, PartialShape::parse(shape).unwrap());
        inferred_shape_for_test(&op(ElementType::I64), &[&ty])
    }

    #[test]
    fn infer_table() {
        for (shape, want) in [
            ("2,3,4", "[3,..24]"),
            ("5", "[1,..5]"),
            ("", "[0,..1]"),
            ("2,0,7", "[3,0]"),
            ("2,?", "[2,?]"),
            ("2,1..3", "[2,..6]"),
            ("2..4,0..", "[2,?]"),
            ("0,?", "[2,0]"),
            ("...", "[?,?]"),
        ] {
            assert_eq!(infer(shape).as_deref(), Ok(want), "{shape}");
        }
    }

    #[test]
    fn known_values_give_the_exact_count() {
        let v = tensor_for_test(&[2, 3], vec![0.0f32, f32::NAN, 0.0, -0.0, 2.0, 3.0]);
        let ty = TensorType::of_value(v);
        let (out, _) = crate::ops::context::infer_for_test(&op(ElementType::I32), &[&ty]);
        let out = out.unwrap();
        assert_eq!(out[0].shape.to_string(), "[2,3]");
        assert_eq!(out[0].element_type, ElementType::I32);
    }

    #[test]
    fn types() {
        let ty = TensorType::new(ElementType::U4, PartialShape::parse("2").unwrap());
        assert!(inferred_shape_for_test(&op(ElementType::I64), &[&ty]).is_err());
        let ty = TensorType::new(ElementType::Boolean, PartialShape::parse("2").unwrap());
        assert_eq!(
            inferred_shape_for_test(&op(ElementType::I64), &[&ty]).as_deref(),
            Ok("[1,..2]")
        );
        // Coordinates are checked against i32 at execution (a huge dim may hold only zeros
        // beyond 2^31).
        let ty = TensorType::new(
            ElementType::F32,
            PartialShape::parse("3000000000,2").unwrap(),
        );
        assert_eq!(
            inferred_shape_for_test(&op(ElementType::I32), &[&ty]).as_deref(),
            Ok("[2,..6000000000]")
        );
        assert!(check_i32(&[3_000_000_000, 2], &[0, 5, 4_294_967_295]).is_ok());
        let e = check_i32(&[3_000_000_000, 2], &[0, 4_294_967_296]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "the non-zero element at [2147483648, 0] has coordinate 2147483648 along axis 0, which does not fit output_type i32"
        );
    }
}
