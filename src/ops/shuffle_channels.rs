//! ShuffleChannels-1: interleaves the groups of one axis of the data.
//!
//! Spec: <https://docs.openvino.ai/2026/documentation/openvino-ir-format/operation-sets/operation-specs/movement/shuffle-channels-1.html>
//!
//! Ports: `data` (any type, rank ≥ 1); one output of the data's type and shape. Attributes:
//! `axis` (default 1; negative counts from the end) and `group` (default 1, at least 1). The
//! data is read as `[outer, group, C / group, inner]` (C the `axis` dim, `outer` the product
//! of the dims before it, `inner` of those after it), the two middle dims are transposed
//! (`[0, 2, 1, 3]`), and the result is read back in the data's shape: output channel
//! `j·group + g` is input channel `g·(C / group) + j`. This is OpenVINO's reference kernel
//! (`reference/shuffle_channels.cpp`) and the spec's formula.
//!
//! Decisions: a `group` below 1 is an attribute error (OpenVINO's shape inference refuses it
//! whatever the data: "the 'group' parameter must be greater or equal to 1"). An axis out of
//! range, a scalar `data`, and a C not divisible by `group` are invalid inputs (E507); C may be
//! smaller than `group` only when it is 0 (the spec's range `[1, C]` is not enforced by
//! OpenVINO, which checks only divisibility).
//!
//! Inference: the output has the input's shape (a dynamic rank stays dynamic; interval dims
//! stay as they are, as in OpenVINO). A static C must be divisible by `group`; an interval C
//! that holds no multiple of `group` is an invalid input too (OpenVINO does not check
//! intervals; every value such a dim takes fails at execution). Bounds of shape values pass
//! through (the op only moves elements).
//!
//! Execution checks the output against the memory budget, then runs the Transpose kernel
//! ([`transposed_as`](crate::ops::transpose::transposed_as)) on the input read as 4-D (no
//! copy); the result is reshaped to the data's shape without a copy. A group of 1 or of the whole axis moves
//! nothing (the output is a copy of the input).

use super::depth_to_space::{divide, not_divisible};
use super::{Arity, AttrError, Attrs, EvalCx, EvalError, InferCx, Op, OpDef};
use crate::ops::transpose::transposed_as;
use crate::shape::{Dim, PartialShape, TensorType};
use crate::tensor::Tensor;

#[derive(Clone, Debug, PartialEq)]
pub struct ShuffleChannels {
    pub axis: i64,
    /// At least 1.
    pub group: u64,
}

pub const DEF: OpDef = OpDef {
    name: "ShuffleChannels",
    version: 1,
    inputs: Arity::exactly(1),
    outputs: Arity::exactly(1),
    parse,
};

fn parse_group(text: &str) -> Result<u64, String> {
    match super::parse_i64(text)? {
        v if v < 1 => Err(format!("group must be at least 1, not {v}")),
        v => Ok(v as u64),
    }
}

fn parse(a: &Attrs) -> Result<Box<dyn Op>, Vec<AttrError>> {
    let (axis, group) = crate::attrs_all!(
        a.parse_or("axis", 1, super::parse_i64),
        a.parse_or("group", 1, parse_group),
    )?;
    Ok(Box::new(ShuffleChannels {
        axis: axis.unwrap_or(1),
        group: group.unwrap_or(1),
    }))
}

impl ShuffleChannels {
    /// The shuffled axis of data of `dims` (intervals allowed), or why the data does not fit:
    /// the checks inference and execution share.
    fn check(&self, dims: &[Dim]) -> Result<usize, String> {
        let rank = dims.len();
        if rank == 0 {
            return Err("ShuffleChannels needs data of rank 1 or more, not a scalar".into());
        }
        let axis = super::normalize_axis(self.axis, rank).ok_or_else(|| {
            format!(
                "axis {} is out of range for data of rank {rank} (-{rank}..{rank})",
                self.axis
            )
        })?;
        let c = dims[axis];
        if divide(c, self.group).is_none() {
            return Err(not_divisible(
                &format!("the channel dim (axis {axis})"),
                c,
                &format!("group {}", self.group),
            ));
        }
        Ok(axis)
    }
}

impl Op for ShuffleChannels {
    fn def(&self) -> Option<&'static OpDef> {
        Some(&DEF)
    }

    fn infer(&self, cx: &mut InferCx<'_>) -> Option<Vec<TensorType>> {
        let data = cx.input(0);
        let out = TensorType::new(data.element_type, data.shape.clone());
        let Some(dims) = data.shape.dims() else {
            return Some(vec![TensorType::new(
                data.element_type,
                PartialShape::dynamic_rank(),
            )]);
        };
        match self.check(dims) {
            Ok(_) => Some(vec![out]),
            Err(reason) => cx.invalid(0, reason),
        }
    }

    fn eval(&self, cx: &EvalCx<'_>) -> Result<Vec<Tensor>, EvalError> {
        let data = cx.tensor(0)?;
        let ty = data.element_type();
        let shape = data.shape();
        let axis = self
            .check(PartialShape::of_tensor(shape).dims().unwrap_or_default())
            .map_err(EvalError::Invalid)?;
        let n = data.len();
        cx.reserve(ty, n)?;
        let c = shape[axis];
        // The group divides c, so it fits usize unless c is 0 (and the data empty).
        let group = usize::try_from(self.group).unwrap_or(usize::MAX);
        if n == 0 || group == 1 || group == c {
            // Nothing moves.
            return Ok(vec![(*data).clone()]);
        }
        // Not empty: every product is at most n. The transpose reads the input as it lies,
        // under the 4-D shape.
        let outer = shape[..axis].iter().product();
        let inner = shape[axis + 1..].iter().product();
        transposed_as(&data, &[outer, group, c / group, inner], &[0, 2, 1, 3])?
            .into_shape(shape)
            .map(|t| vec![t])
            .map_err(|_| EvalError::Internal("ShuffleChannels' output shape"))
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

    use crate::tensor::Element;

    fn t<T: Element>(shape: &[usize], v: Vec<T>) -> Tensor {
        crate::ops::context::tensor_for_test(shape, v)
    }

    /// `0, 1, 2, ...` as i64 in `shape`.
    fn iota(shape: &[usize]) -> Tensor {
        let n: usize = shape.iter().product();
        t(shape, (0..n as i64).collect())
    }

    fn op(axis: i64, group: u64) -> ShuffleChannels {
        ShuffleChannels { axis, group }
    }

    fn run(op: &ShuffleChannels, x: &Tensor, limit: u64) -> Result<Tensor, EvalError> {
        crate::ops::context::eval_for_test(op, std::slice::from_ref(x), limit)
    }

    /// A tensor as its type, shape and bytes (NaNs and −0 compared bit for bit).
    fn bits(t: &Tensor) -> (ElementType, Vec<usize>, Vec<u8>) {
        (t.element_type(), t.shape().to_vec(), t.to_le_bytes())
    }

    /// A row: shape, axis, group, and the output's elements as indices of the input's.
    type Row = (&'static [usize], i64, u64, &'static [i64]);

    /// Computed by numpy from the spec's formula (`reshape(outer, group, C / group, inner)`,
    /// `transpose(0, 2, 1, 3)`, reshape back) on `arange(n).reshape(shape)`.
    const TABLE: &[Row] = &[
        (
            &[1, 6, 2, 2],
            1,
            3,
            &[
                0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19, 4, 5, 6, 7, 12, 13, 14, 15, 20, 21, 22,
                23,
            ],
        ),
        (
            &[1, 6, 2, 2],
            1,
            2,
            &[
                0, 1, 2, 3, 12, 13, 14, 15, 4, 5, 6, 7, 16, 17, 18, 19, 8, 9, 10, 11, 20, 21, 22,
                23,
            ],
        ),
        (
            &[2, 3, 4],
            -1,
            2,
            &[
                0, 2, 1, 3, 4, 6, 5, 7, 8, 10, 9, 11, 12, 14, 13, 15, 16, 18, 17, 19, 20, 22, 21,
                23,
            ],
        ),
        // group = C: nothing moves
        (
            &[2, 3, 4],
            2,
            4,
            &[
                0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22,
                23,
            ],
        ),
        (&[6], 0, 3, &[0, 2, 4, 1, 3, 5]),
        (&[6], -1, 2, &[0, 3, 1, 4, 2, 5]),
        (
            &[4, 2, 3],
            0,
            2,
            &[
                0, 1, 2, 3, 4, 5, 12, 13, 14, 15, 16, 17, 6, 7, 8, 9, 10, 11, 18, 19, 20, 21, 22,
                23,
            ],
        ),
        // group 1: nothing moves
        (&[2, 6], 1, 1, &[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]),
        (
            &[2, 6, 2],
            -2,
            3,
            &[
                0, 1, 4, 5, 8, 9, 2, 3, 6, 7, 10, 11, 12, 13, 16, 17, 20, 21, 14, 15, 18, 19, 22,
                23,
            ],
        ),
        (&[4, 3], -2, 2, &[0, 1, 2, 6, 7, 8, 3, 4, 5, 9, 10, 11]),
        (&[3, 4], -1, 2, &[0, 2, 1, 3, 4, 6, 5, 7, 8, 10, 9, 11]),
        (&[2, 0, 3], 1, 2, &[]),
    ];

    #[test]
    fn eval_table() {
        for (k, &(shape, axis, group, want)) in TABLE.iter().enumerate() {
            let got = run(&op(axis, group), &iota(shape), 1 << 20)
                .unwrap_or_else(|e| panic!("case {k}: {e}"));
            assert_eq!(bits(&got), bits(&t(shape, want.to_vec())), "case {k}");
        }
    }

    /// Every row of the table on one element type: element `i` of the input is `f(i)`.
    fn each_row_on<T: Element>(f: impl Fn(usize) -> T) {
        for (k, &(shape, axis, group, want)) in TABLE.iter().enumerate() {
            let n: usize = shape.iter().product();
            let x = t(shape, (0..n).map(&f).collect());
            let want = t(shape, want.iter().map(|&i| f(i as usize)).collect());
            let got = run(&op(axis, group), &x, 1 << 20).unwrap();
            assert_eq!(bits(&got), bits(&want), "case {k} on {}", T::TYPE);
        }
    }

    #[test]
    fn every_type_moves_bit_for_bit() {
        each_row_on(|i| i as f32 * 0.25 - 2.0);
        each_row_on(|i| (i as i64) * -9_000_000_000);
        each_row_on(|i| (i * 41 % 256) as u8);
        each_row_on(|i| i % 3 == 0);
        each_row_on(|i| match i % 4 {
            0 => f16::from_bits(0x7e00 | i as u16),
            1 => f16::NEG_ZERO,
            _ => f16::from_f32(i as f32),
        });
    }

    /// Shuffling by `group` and then by `C / group` gives the data back.
    #[test]
    fn the_inverse_shuffle_is_by_the_other_factor() {
        for (shape, axis, group) in [
            (&[2, 12, 3][..], 1, 3u64),
            (&[2, 12, 3][..], 1, 4),
            (&[5, 10][..], -1, 2),
            (&[6, 1, 2][..], 0, 3),
        ] {
            let x = iota(shape);
            let c = shape[normalize(axis, shape.len())] as u64;
            let y = run(&op(axis, group), &x, 1 << 20).unwrap();
            assert_ne!(y, x, "{shape:?} {group}");
            assert_eq!(run(&op(axis, c / group), &y, 1 << 20).unwrap(), x);
        }
    }

    fn normalize(axis: i64, rank: usize) -> usize {
        crate::ops::normalize_axis(axis, rank).unwrap()
    }

    /// The op as a layer with these attributes would parse it, as its `Debug` text.
    fn parsed(attrs: &[(&str, &str)]) -> Result<String, Vec<String>> {
        crate::ops::context::parsed_for_test(&DEF, attrs)
    }

    #[test]
    fn parse_table() {
        let ok = |axis, group| Ok(format!("{:?}", op(axis, group)));
        assert_eq!(parsed(&[]), ok(1, 1));
        assert_eq!(parsed(&[("axis", "-2"), ("group", "3")]), ok(-2, 3));
        assert_eq!(parsed(&[("group", "8")]), ok(1, 8));
        assert_eq!(
            parsed(&[("group", "0")]),
            Err(vec![
                "group Some(\"0\"): group must be at least 1, not 0".into()
            ])
        );
        // Every problem at once.
        assert_eq!(
            parsed(&[("group", "-3"), ("axis", "one")]),
            Err(vec![
                "axis Some(\"one\"): expected an integer".into(),
                "group Some(\"-3\"): group must be at least 1, not -3".into(),
            ])
        );
    }

    /// Runs inference: the output shape, or the findings.
    fn infer(op: &ShuffleChannels, shape: &str) -> Result<String, String> {
        let ty = TensorType::new(ElementType::F16, PartialShape::parse(shape).unwrap());
        let (out, findings) = crate::ops::context::infer_for_test(op, &[&ty]);
        match out {
            Some(out) => {
                assert_eq!(out[0].element_type, ElementType::F16);
                Ok(out[0].shape.to_string())
            }
            None => Err(findings
                .iter()
                .map(|(k, port)| format!("{port:?} {k}"))
                .collect::<Vec<_>>()
                .join("; ")),
        }
    }

    #[test]
    fn infer_table() {
        for (axis, group, shape, want) in [
            (1, 3, "1,6,2,2", "[1,6,2,2]"),
            (-1, 2, "?,3,4", "[?,3,4]"),
            (1, 4, "2,?,5", "[2,?,5]"),
            (1, 4, "2,3..9,5", "[2,3..9,5]"),
            (0, 2, "4..", "[4..]"),
            (2, 5, "1,2,0", "[1,2,0]"),
            (5, 2, "...", "[...]"),
            (0, 1, "7", "[7]"),
        ] {
            assert_eq!(
                infer(&op(axis, group), shape).as_deref(),
                Ok(want),
                "{shape}"
            );
        }
    }

    #[test]
    fn invalid_inputs_are_refused_by_inference_and_execution() {
        let cases: &[(i64, u64, &[usize], &str)] = &[
            (
                1,
                4,
                &[1, 6, 2],
                "the channel dim (axis 1) 6 is not divisible by group 4",
            ),
            (
                -1,
                3,
                &[2, 2],
                "the channel dim (axis 1) 2 is not divisible by group 3",
            ),
            (
                2,
                2,
                &[2, 2],
                "axis 2 is out of range for data of rank 2 (-2..2)",
            ),
            (
                -3,
                1,
                &[2, 2],
                "axis -3 is out of range for data of rank 2 (-2..2)",
            ),
            (
                0,
                1,
                &[],
                "ShuffleChannels needs data of rank 1 or more, not a scalar",
            ),
            (
                1,
                u64::MAX >> 1,
                &[1, 3],
                "is not divisible by group 9223372036854775807",
            ),
        ];
        for &(axis, group, shape, want) in cases {
            let o = op(axis, group);
            let text = PartialShape::of_tensor(shape).to_string();
            match infer(&o, text.trim_matches(['[', ']'])) {
                Err(m) => assert!(m.contains(want) && m.contains("Input, 0"), "{m}"),
                Ok(s) => panic!("{shape:?}: expected {want:?}, got {s}"),
            }
            match run(&o, &iota(shape), 1 << 20) {
                Err(EvalError::Invalid(m)) => assert!(m.contains(want), "{m}"),
                other => panic!("{shape:?}: expected {want:?}, got {other:?}"),
            }
        }
        match infer(&op(1, 4), "2,5..7") {
            Err(m) => assert!(
                m.contains("the channel dim (axis 1) 5..7 holds no multiple of group 4"),
                "{m}"
            ),
            Ok(s) => panic!("expected an error, got {s}"),
        }
    }

    /// A huge group divides only an empty axis; outputs over the budget are refused before
    /// they are allocated.
    #[test]
    fn huge_groups_and_over_budget_outputs() {
        let empty = t(&[3, 0, 2], Vec::<u8>::new());
        let got = run(&op(1, u64::MAX >> 1), &empty, 1 << 20).unwrap();
        assert_eq!(got.shape(), [3, 0, 2]);
        let x = iota(&[1, 64, 32, 16]); // 256 KiB of i64
        let got = run(&op(1, 4), &x, 200_000);
        assert!(matches!(got, Err(EvalError::Memory(_))), "{got:?}");
        // The output fits: the transpose reads the input in place (no copy to count).
        assert!(run(&op(1, 4), &x, 300_000).is_ok());
    }
}
