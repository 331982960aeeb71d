//! DepthToSpace-1 and SpaceToDepth-1: move blocks of elements between the channel dim and the
//! spatial dims.
//!
//! Spec: <https://docs.openvino.ai/2026/documentation/openvino-ir-format/operation-sets/operation-specs/movement/depth-to-space-1.html>
//! and <https://docs.openvino.ai/2026/documentation/openvino-ir-format/operation-sets/operation-specs/movement/space-to-depth-1.html>.
//!
//! Ports: `data` (any type, rank ≥ 3: `[N, C, D1, ..., DK]`); one output of the data's type.
//! Attributes: `block_size` (default 1, at least 1) and `mode` (required, any case, as
//! OpenVINO reads enum names): `blocks_first` or `depth_first`.
//!
//! * DepthToSpace: the output is `[N, C / bs^K, D1·bs, ..., DK·bs]`; C must be divisible by
//!   `bs^K`. `blocks_first` reads the channel index as `[bs, ..., bs, C / bs^K]`,
//!   `depth_first` as `[C / bs^K, bs, ..., bs]`.
//! * SpaceToDepth, its inverse: the output is `[N, C·bs^K, D1 / bs, ..., DK / bs]`; each
//!   spatial dim must be divisible by `bs`. The new channel index is
//!   `[bs, ..., bs, C]` (`blocks_first`) or `[C, bs, ..., bs]` (`depth_first`).
//!
//! Each is the spec's reshape → transpose → reshape, with the spec's formulas (the same as
//! OpenVINO's reference kernels, `reference/depth_to_space.cpp` and `space_to_depth.cpp`).
//!
//! Decisions: a `block_size` below 1 is an attribute error (OpenVINO refuses 0 when it builds
//! the node: "the divisor must not be 0", "the block size must be greater than 0"); a missing
//! or unknown `mode` is an attribute error. A rank below 3, a C (DepthToSpace) or spatial dim
//! (SpaceToDepth) that is not divisible, and a `bs^K` beyond 2^63 − 1 (OpenVINO computes it
//! with `std::pow` in floating point and casts it: undefined there) are invalid inputs (E507).
//!
//! Inference: a dynamic rank stays dynamic; otherwise the rank is the input's. Static dims
//! are computed exactly. An interval dim is multiplied as an interval (unbounded beyond
//! 2^63 − 1) and divided to the interval of the quotients of the multiples it holds
//! (`ceil(min / d)..=floor(max / d)`, as OpenVINO's `Dimension::operator/`; an unbounded max
//! stays unbounded); an interval that holds no multiple is an invalid input, as OpenVINO's
//! `check_divided_result` says. Bounds of shape values pass through (the op only moves
//! elements).
//!
//! Execution checks the output against the memory budget, then runs the Transpose kernel
//! ([`transposed_as`](crate::ops::transpose::transposed_as)) on the input read under the
//! split shape (no copy); the result is reshaped to the output shape without a copy. A block size of 1 moves
//! nothing (the output is a copy of the input).

use super::{Arity, AttrError, Attrs, EvalCx, EvalError, InferCx, Op, OpDef};
use crate::ops::reshape::reshaped;
use crate::ops::transpose::transposed_as;
use crate::shape::dim::MAX_DIM;
use crate::shape::{Dim, PartialShape, TensorType};
use crate::tensor::Tensor;

/// How the channel index is split between the new depth and the block coordinates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// The block coordinates first, then the depth: `[bs, ..., bs, depth]`.
    BlocksFirst,
    /// The depth first, then the block coordinates: `[depth, bs, ..., bs]`.
    DepthFirst,
}

/// Which way the elements move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    DepthToSpace,
    SpaceToDepth,
}

/// DepthToSpace-1 or SpaceToDepth-1 with its attributes.
#[derive(Clone, Debug, PartialEq)]
pub struct BlockMove {
    pub direction: Direction,
    /// At least 1.
    pub block_size: u64,
    pub mode: Mode,
}

pub const DEPTH_TO_SPACE: OpDef = OpDef {
    name: "DepthToSpace",
    version: 1,
    inputs: Arity::exactly(1),
    outputs: Arity::exactly(1),
    parse: parse_depth_to_space,
};

pub const SPACE_TO_DEPTH: OpDef = OpDef {
    name: "SpaceToDepth",
    parse: parse_space_to_depth,
    ..DEPTH_TO_SPACE
};

fn parse_depth_to_space(a: &Attrs) -> Result<Box<dyn Op>, Vec<AttrError>> {
    parse(a, Direction::DepthToSpace)
}

fn parse_space_to_depth(a: &Attrs) -> Result<Box<dyn Op>, Vec<AttrError>> {
    parse(a, Direction::SpaceToDepth)
}

fn parse_block_size(text: &str) -> Result<u64, String> {
    match super::parse_i64(text)? {
        v if v < 1 => Err(format!("block_size must be at least 1, not {v}")),
        v => Ok(v as u64),
    }
}

fn parse_mode(text: &str) -> Result<Mode, String> {
    let t = text.trim();
    if t.eq_ignore_ascii_case("blocks_first") {
        Ok(Mode::BlocksFirst)
    } else if t.eq_ignore_ascii_case("depth_first") {
        Ok(Mode::DepthFirst)
    } else {
        Err("expected blocks_first or depth_first".into())
    }
}

fn parse(a: &Attrs, direction: Direction) -> Result<Box<dyn Op>, Vec<AttrError>> {
    let (block_size, mode) = crate::attrs_all!(
        a.parse_or("block_size", 1, parse_block_size),
        a.parse_required("mode", parse_mode),
    )?;
    Ok(Box::new(BlockMove {
        direction,
        block_size: block_size.unwrap_or(1),
        mode: mode.unwrap_or(Mode::BlocksFirst),
    }))
}

/// The interval of `d / by` over the multiples of `by` that `d` holds
/// (`ceil(min / by)..=floor(max / by)`); `None` when it holds none. `by` is at least 1.
pub(crate) fn divide(d: Dim, by: u64) -> Option<Dim> {
    let by = by.max(1);
    Dim::interval(d.min().div_ceil(by), d.max().map(|m| m / by))
}

/// Why `d` cannot be divided by `by` (which [`divide`] refused): `what` names the dim.
pub(crate) fn not_divisible(what: &str, d: Dim, by: &str) -> String {
    if d.is_static() {
        format!("{what} {d} is not divisible by {by}")
    } else {
        format!("{what} {d} holds no multiple of {by}")
    }
}

/// `1 spatial dim`, `2 spatial dims`.
fn spatial_dims(k: usize) -> String {
    format!("{k} spatial dim{}", if k == 1 { "" } else { "s" })
}

impl BlockMove {
    fn op_def(&self) -> &'static OpDef {
        match self.direction {
            Direction::DepthToSpace => &DEPTH_TO_SPACE,
            Direction::SpaceToDepth => &SPACE_TO_DEPTH,
        }
    }

    /// `block_size^k`, the number of elements of a block over `k` spatial dims, or why it
    /// is too large (beyond 2^63 − 1).
    fn volume(&self, k: usize) -> Result<u64, String> {
        let bs = self.block_size;
        let v = if bs == 1 {
            Some(1)
        } else {
            u32::try_from(k)
                .ok()
                .and_then(|k| bs.checked_pow(k))
                .filter(|&v| v <= MAX_DIM)
        };
        v.ok_or_else(|| {
            format!(
                "block_size^{k} (block_size {bs}, {}) exceeds 2^63 - 1",
                spatial_dims(k)
            )
        })
    }

    /// The output dims for input dims `dims` (intervals allowed), or why the input does not
    /// fit: the checks inference and execution share.
    fn out_dims(&self, dims: &[Dim]) -> Result<Vec<Dim>, String> {
        let rank = dims.len();
        if rank < 3 {
            return Err(format!(
                "{} needs data of rank 3 or more ([N, C, D1, ...]), not rank {rank}",
                self.op_def().name
            ));
        }
        let k = rank - 2;
        let bs = self.block_size;
        let v = self.volume(k)?;
        let mut out = dims.to_vec();
        match self.direction {
            Direction::DepthToSpace => {
                out[1] = divide(dims[1], v).ok_or_else(|| {
                    not_divisible(
                        "the channel dim (axis 1)",
                        dims[1],
                        &format!(
                            "block_size^{k} = {v} (block_size {bs}, {})",
                            spatial_dims(k)
                        ),
                    )
                })?;
                for d in &mut out[2..] {
                    *d = d.times(Dim::fixed(bs));
                }
            }
            Direction::SpaceToDepth => {
                out[1] = dims[1].times(Dim::fixed(v));
                for (axis, d) in dims.iter().enumerate().skip(2) {
                    out[axis] = divide(*d, bs).ok_or_else(|| {
                        not_divisible(
                            &format!("the spatial dim (axis {axis})"),
                            *d,
                            &format!("block_size {bs}"),
                        )
                    })?;
                }
            }
        }
        Ok(out)
    }

    /// For an input of `shape`: the split shape it is reshaped to, the transpose's
    /// permutation of it, and the output shape; or why the input does not fit.
    fn plan(&self, shape: &[usize]) -> Result<Plan, String> {
        self.out_dims(PartialShape::of_tensor(shape).dims().unwrap_or_default())?;
        let too_large = || {
            format!(
                "{} of {shape:?} by block_size {} gives dims beyond this machine's sizes",
                self.op_def().name,
                self.block_size
            )
        };
        let bs = usize::try_from(self.block_size).map_err(|_| too_large())?;
        let k = shape.len() - 2;
        let v = usize::try_from(self.volume(k)?).map_err(|_| too_large())?;
        let (n, c, spatial) = (shape[0], shape[1], &shape[2..]);
        let blocks = std::iter::repeat_n(bs, k);
        let (split, out): (Vec<usize>, Option<Vec<usize>>) = match self.direction {
            Direction::DepthToSpace => {
                let split = match self.mode {
                    // [N, bs, ..., bs, C / bs^K, D1, ..., DK]
                    Mode::BlocksFirst => [n]
                        .into_iter()
                        .chain(blocks)
                        .chain([c / v])
                        .chain(spatial.iter().copied())
                        .collect(),
                    // [N, C / bs^K, bs, ..., bs, D1, ..., DK]
                    Mode::DepthFirst => [n, c / v]
                        .into_iter()
                        .chain(blocks)
                        .chain(spatial.iter().copied())
                        .collect(),
                };
                let out = [Some(n), Some(c / v)]
                    .into_iter()
                    .chain(spatial.iter().map(|&d| d.checked_mul(bs)))
                    .collect();
                (split, out)
            }
            Direction::SpaceToDepth => {
                // [N, C, D1 / bs, bs, ..., DK / bs, bs] in either mode
                let split = [n, c]
                    .into_iter()
                    .chain(spatial.iter().flat_map(|&d| [d / bs, bs]))
                    .collect();
                let out = [Some(n), c.checked_mul(v)]
                    .into_iter()
                    .chain(spatial.iter().map(|&d| Some(d / bs)))
                    .collect();
                (split, out)
            }
        };
        let odd = (1..=k).map(|i| 2 * i + 1);
        let even = (1..=k).map(|i| 2 * i);
        let perm = match (self.direction, self.mode) {
            // [0, K + 1, K + 2, 1, K + 3, 2, ..., 2K + 1, K]
            (Direction::DepthToSpace, Mode::BlocksFirst) => [0, k + 1]
                .into_iter()
                .chain((1..=k).flat_map(|i| [k + 1 + i, i]))
                .collect(),
            // [0, 1, K + 2, 2, K + 3, 3, ..., 2K + 1, K + 1]
            (Direction::DepthToSpace, Mode::DepthFirst) => [0, 1]
                .into_iter()
                .chain((1..=k).flat_map(|i| [k + 1 + i, i + 1]))
                .collect(),
            // [0, 3, 5, ..., 2K + 1, 1, 2, 4, ..., 2K]
            (Direction::SpaceToDepth, Mode::BlocksFirst) => {
                [0].into_iter().chain(odd).chain([1]).chain(even).collect()
            }
            // [0, 1, 3, 5, ..., 2K + 1, 2, 4, ..., 2K]
            (Direction::SpaceToDepth, Mode::DepthFirst) => {
                [0, 1].into_iter().chain(odd).chain(even).collect()
            }
        };
        Ok(Plan {
            split,
            perm,
            out: out.ok_or_else(too_large)?,
        })
    }
}

/// How an input moves: reshaped to `split`, transposed by `perm`, reshaped to `out`.
#[derive(Debug, PartialEq)]
struct Plan {
    split: Vec<usize>,
    perm: Vec<usize>,
    out: Vec<usize>,
}

impl Op for BlockMove {
    fn def(&self) -> Option<&'static OpDef> {
        Some(self.op_def())
    }

    fn infer(&self, cx: &mut InferCx<'_>) -> Option<Vec<TensorType>> {
        let data = cx.input(0);
        let ty = data.element_type;
        let Some(dims) = data.shape.dims() else {
            return Some(vec![TensorType::new(ty, PartialShape::dynamic_rank())]);
        };
        match self.out_dims(dims) {
            Ok(out) => Some(vec![TensorType::new(ty, PartialShape::new(out))]),
            Err(reason) => cx.invalid(0, reason),
        }
    }

    fn eval(&self, cx: &EvalCx<'_>) -> Result<Vec<Tensor>, EvalError> {
        let data = cx.tensor(0)?;
        let ty = data.element_type();
        let plan = self.plan(data.shape()).map_err(EvalError::Invalid)?;
        let n = data.len();
        cx.reserve(ty, n)?;
        if n == 0 || self.block_size == 1 {
            // Nothing moves: the elements (if any) under the output shape.
            return reshaped(&data, &plan.out).map(|t| vec![t]);
        }
        // The transpose reads the input as it lies, under the split shape.
        transposed_as(&data, &plan.split, &plan.perm)?
            .into_shape(&plan.out)
            .map(|t| vec![t])
            .map_err(|_| EvalError::Internal("a block move's output shape"))
    }

    fn moves(&self, input: usize) -> bool {
        input == 0
    }
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

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

    /// The op as a layer with these attributes would parse it.
    fn parsed(dir: Direction, attrs: &[(&str, &str)]) -> Result<Box<dyn Op>, Vec<AttrError>> {
        let pairs = attrs
            .iter()
            .map(|&(k, v)| (Cow::Borrowed(k), Cow::Borrowed(v)))
            .collect();
        let data = crate::ir::Data::from_pairs(pairs);
        let a = Attrs::new(Some(&data));
        match dir {
            Direction::DepthToSpace => (DEPTH_TO_SPACE.parse)(&a),
            Direction::SpaceToDepth => (SPACE_TO_DEPTH.parse)(&a),
        }
    }

    fn op(direction: Direction, mode: Mode, block_size: u64) -> BlockMove {
        BlockMove {
            direction,
            block_size,
            mode,
        }
    }

    fn run(op: &dyn Op, x: &Tensor, limit: u64) -> Result<Tensor, EvalError> {
        crate::ops::context::eval_for_test(op, std::slice::from_ref(x), limit)
    }

    /// A tensor as its type, shape and bytes (NaNs and −0 compared bit for bit).
    fn bits(t: &Tensor) -> (ElementType, Vec<usize>, Vec<u8>) {
        (t.element_type(), t.shape().to_vec(), t.to_le_bytes())
    }

    use Direction::{DepthToSpace as D2S, SpaceToDepth as S2D};
    use Mode::{BlocksFirst as Blocks, DepthFirst as Depth};

    /// A row: direction, mode, block size, input shape, output shape, and the output's
    /// elements as indices of the input's (`iota` in, this out).
    type Row = (
        Direction,
        Mode,
        u64,
        &'static [usize],
        &'static [usize],
        &'static [i64],
    );

    /// Computed by numpy from the spec's formulas (reshape, transpose, reshape) on
    /// `arange(n).reshape(shape)`.
    const TABLE: &[Row] = &[
        // 4-D
        (
            D2S,
            Blocks,
            2,
            &[1, 8, 2, 3],
            &[1, 2, 4, 6],
            &[
                0, 12, 1, 13, 2, 14, 24, 36, 25, 37, 26, 38, 3, 15, 4, 16, 5, 17, 27, 39, 28, 40,
                29, 41, 6, 18, 7, 19, 8, 20, 30, 42, 31, 43, 32, 44, 9, 21, 10, 22, 11, 23, 33, 45,
                34, 46, 35, 47,
            ],
        ),
        (
            D2S,
            Depth,
            2,
            &[1, 8, 2, 3],
            &[1, 2, 4, 6],
            &[
                0, 6, 1, 7, 2, 8, 12, 18, 13, 19, 14, 20, 3, 9, 4, 10, 5, 11, 15, 21, 16, 22, 17,
                23, 24, 30, 25, 31, 26, 32, 36, 42, 37, 43, 38, 44, 27, 33, 28, 34, 29, 35, 39, 45,
                40, 46, 41, 47,
            ],
        ),
        (
            D2S,
            Blocks,
            3,
            &[1, 18, 1, 2],
            &[1, 2, 3, 6],
            &[
                0, 4, 8, 1, 5, 9, 12, 16, 20, 13, 17, 21, 24, 28, 32, 25, 29, 33, 2, 6, 10, 3, 7,
                11, 14, 18, 22, 15, 19, 23, 26, 30, 34, 27, 31, 35,
            ],
        ),
        (
            D2S,
            Depth,
            3,
            &[1, 18, 1, 2],
            &[1, 2, 3, 6],
            &[
                0, 2, 4, 1, 3, 5, 6, 8, 10, 7, 9, 11, 12, 14, 16, 13, 15, 17, 18, 20, 22, 19, 21,
                23, 24, 26, 28, 25, 27, 29, 30, 32, 34, 31, 33, 35,
            ],
        ),
        // 5-D
        (
            D2S,
            Blocks,
            2,
            &[1, 16, 1, 2, 1],
            &[1, 2, 2, 4, 2],
            &[
                0, 4, 8, 12, 1, 5, 9, 13, 16, 20, 24, 28, 17, 21, 25, 29, 2, 6, 10, 14, 3, 7, 11,
                15, 18, 22, 26, 30, 19, 23, 27, 31,
            ],
        ),
        (
            D2S,
            Depth,
            2,
            &[1, 16, 1, 2, 1],
            &[1, 2, 2, 4, 2],
            &[
                0, 2, 4, 6, 1, 3, 5, 7, 8, 10, 12, 14, 9, 11, 13, 15, 16, 18, 20, 22, 17, 19, 21,
                23, 24, 26, 28, 30, 25, 27, 29, 31,
            ],
        ),
        // 3-D
        (
            D2S,
            Blocks,
            3,
            &[2, 6, 2],
            &[2, 2, 6],
            &[
                0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11, 12, 16, 20, 13, 17, 21, 14, 18, 22, 15, 19,
                23,
            ],
        ),
        (
            D2S,
            Depth,
            3,
            &[2, 6, 2],
            &[2, 2, 6],
            &[
                0, 2, 4, 1, 3, 5, 6, 8, 10, 7, 9, 11, 12, 14, 16, 13, 15, 17, 18, 20, 22, 19, 21,
                23,
            ],
        ),
        // SpaceToDepth: 4-D
        (
            S2D,
            Blocks,
            2,
            &[1, 2, 4, 6],
            &[1, 8, 2, 3],
            &[
                0, 2, 4, 12, 14, 16, 24, 26, 28, 36, 38, 40, 1, 3, 5, 13, 15, 17, 25, 27, 29, 37,
                39, 41, 6, 8, 10, 18, 20, 22, 30, 32, 34, 42, 44, 46, 7, 9, 11, 19, 21, 23, 31, 33,
                35, 43, 45, 47,
            ],
        ),
        (
            S2D,
            Depth,
            2,
            &[1, 2, 4, 6],
            &[1, 8, 2, 3],
            &[
                0, 2, 4, 12, 14, 16, 1, 3, 5, 13, 15, 17, 6, 8, 10, 18, 20, 22, 7, 9, 11, 19, 21,
                23, 24, 26, 28, 36, 38, 40, 25, 27, 29, 37, 39, 41, 30, 32, 34, 42, 44, 46, 31, 33,
                35, 43, 45, 47,
            ],
        ),
        // 5-D
        (
            S2D,
            Blocks,
            2,
            &[1, 2, 2, 2, 4],
            &[1, 16, 1, 1, 2],
            &[
                0, 2, 16, 18, 1, 3, 17, 19, 4, 6, 20, 22, 5, 7, 21, 23, 8, 10, 24, 26, 9, 11, 25,
                27, 12, 14, 28, 30, 13, 15, 29, 31,
            ],
        ),
        (
            S2D,
            Depth,
            2,
            &[1, 2, 2, 2, 4],
            &[1, 16, 1, 1, 2],
            &[
                0, 2, 1, 3, 4, 6, 5, 7, 8, 10, 9, 11, 12, 14, 13, 15, 16, 18, 17, 19, 20, 22, 21,
                23, 24, 26, 25, 27, 28, 30, 29, 31,
            ],
        ),
        // 3-D
        (
            S2D,
            Blocks,
            3,
            &[2, 2, 6],
            &[2, 6, 2],
            &[
                0, 3, 6, 9, 1, 4, 7, 10, 2, 5, 8, 11, 12, 15, 18, 21, 13, 16, 19, 22, 14, 17, 20,
                23,
            ],
        ),
        (
            S2D,
            Depth,
            3,
            &[2, 2, 6],
            &[2, 6, 2],
            &[
                0, 3, 1, 4, 2, 5, 6, 9, 7, 10, 8, 11, 12, 15, 13, 16, 14, 17, 18, 21, 19, 22, 20,
                23,
            ],
        ),
    ];

    #[test]
    fn eval_table() {
        for (k, &(dir, mode, bs, shape, out, want)) in TABLE.iter().enumerate() {
            let got = run(&op(dir, mode, bs), &iota(shape), 1 << 20)
                .unwrap_or_else(|e| panic!("case {k}: {e}"));
            assert_eq!(bits(&got), bits(&t(out, want.to_vec())), "case {k}");
        }
    }

    /// Every row of the table on one element type: element `i` of the input is `f(i)`.
    fn each_row_on<T: Element>(f: impl Fn(usize) -> T) {
        for (k, &(dir, mode, bs, shape, out, want)) in TABLE.iter().enumerate() {
            let n: usize = shape.iter().product();
            let x = t(shape, (0..n).map(&f).collect());
            let want = t(out, want.iter().map(|&i| f(i as usize)).collect());
            let got = run(&op(dir, mode, bs), &x, 1 << 20).unwrap();
            assert_eq!(bits(&got), bits(&want), "case {k} on {}", T::TYPE);
        }
    }

    #[test]
    fn every_type_moves_bit_for_bit() {
        each_row_on(|i| i as f32 * 0.5 - 3.0);
        each_row_on(|i| (i as i64) * -7_000_000_000);
        each_row_on(|i| (i * 37 % 256) as u8);
        each_row_on(|i| i % 3 == 1);
        // NaNs with payloads, −0, infinities.
        each_row_on(|i| match i % 5 {
            0 => f16::from_bits(0x7e00 | i as u16),
            1 => f16::NEG_ZERO,
            2 => f16::INFINITY,
            _ => f16::from_f32(i as f32),
        });
    }

    /// SpaceToDepth undoes DepthToSpace and the other way round, in each mode, on ranks 3 to 6.
    #[test]
    fn round_trips() {
        let cases: [(&[usize], u64); 6] = [
            (&[2, 12, 3, 2], 2),
            (&[1, 27, 2, 1, 3], 3),
            (&[3, 8, 5], 2),
            (&[1, 16, 2, 1, 1, 2], 2),
            (&[2, 5, 4], 1),
            (&[1, 0, 3, 3], 2),
        ];
        for (shape, bs) in cases {
            for mode in [Blocks, Depth] {
                let (d2s, s2d) = (op(D2S, mode, bs), op(S2D, mode, bs));
                let x = iota(shape);
                let space = run(&d2s, &x, 1 << 20).unwrap();
                assert_eq!(run(&s2d, &space, 1 << 20).unwrap(), x, "{shape:?} {mode:?}");
                // An input of the spatial shape goes to depth and back.
                let y = iota(space.shape());
                let depth = run(&s2d, &y, 1 << 20).unwrap();
                assert_eq!(depth.shape(), shape);
                assert_eq!(run(&d2s, &depth, 1 << 20).unwrap(), y, "{shape:?} {mode:?}");
            }
            // The two modes differ whenever the new depth and a block dim are both above 1.
            if bs > 1 && shape[1] > (bs as usize).pow(shape.len() as u32 - 2) {
                let a = run(&op(D2S, Blocks, bs), &iota(shape), 1 << 20).unwrap();
                let b = run(&op(D2S, Depth, bs), &iota(shape), 1 << 20).unwrap();
                assert_ne!(a, b, "{shape:?}");
            }
        }
    }

    #[test]
    fn empty_inputs_take_the_output_shape() {
        let got = run(&op(D2S, Blocks, 2), &iota(&[1, 0, 2, 3]), 1 << 20).unwrap();
        assert_eq!(got.shape(), [1, 0, 4, 6]);
        let got = run(&op(S2D, Depth, 2), &iota(&[0, 3, 2, 4]), 1 << 20).unwrap();
        assert_eq!(got.shape(), [0, 12, 1, 2]);
    }

    #[test]
    fn parse_table() {
        let ok = |dir, attrs: &[(&str, &str)], bs, mode| {
            let got = parsed(dir, attrs).map(|o| format!("{o:?}"));
            assert_eq!(got, Ok(format!("{:?}", op(dir, mode, bs))), "{attrs:?}");
        };
        for dir in [D2S, S2D] {
            ok(
                dir,
                &[("mode", "blocks_first"), ("block_size", "2")],
                2,
                Blocks,
            );
            ok(dir, &[("mode", "depth_first")], 1, Depth);
            ok(
                dir,
                &[("mode", "DEPTH_FIRST"), ("block_size", "4")],
                4,
                Depth,
            );
            ok(dir, &[("mode", " Blocks_First ")], 1, Blocks);
        }
        let errors = |attrs: &[(&str, &str)]| -> Vec<String> {
            parsed(D2S, attrs)
                .err()
                .unwrap_or_default()
                .iter()
                .map(|e| format!("{} {:?}: {}", e.name, e.value, e.reason))
                .collect()
        };
        assert_eq!(errors(&[("block_size", "2")]), ["mode None: "]);
        assert_eq!(
            errors(&[("mode", "blocks")]),
            ["mode Some(\"blocks\"): expected blocks_first or depth_first"]
        );
        assert_eq!(
            errors(&[("mode", "depth_first"), ("block_size", "0")]),
            ["block_size Some(\"0\"): block_size must be at least 1, not 0"]
        );
        // Every problem at once.
        assert_eq!(
            errors(&[("mode", "dcr"), ("block_size", "-2")]),
            [
                "block_size Some(\"-2\"): block_size must be at least 1, not -2",
                "mode Some(\"dcr\"): expected blocks_first or depth_first",
            ]
        );
        assert_eq!(
            errors(&[("mode", "blocks_first"), ("block_size", "two")]),
            ["block_size Some(\"two\"): expected an integer"]
        );
        assert_eq!(
            parsed(S2D, &[("block_size", "0")]).err().map(|e| e.len()),
            Some(2)
        );
    }

    /// Runs inference: the output shape, or the findings.
    fn infer(op: &BlockMove, shape: &str) -> Result<String, String> {
        let ty = TensorType::new(ElementType::F32, PartialShape::parse(shape).unwrap());
        crate::ops::context::inferred_shape_for_test(op, &[&ty])
    }

    #[test]
    fn infer_table() {
        let cases: &[(Direction, u64, &str, &str)] = &[
            (D2S, 2, "1,8,2,3", "[1,2,4,6]"),
            (D2S, 3, "2,54,1,2,3", "[2,2,3,6,9]"),
            (D2S, 2, "5,4,7", "[5,2,14]"),
            (D2S, 1, "1,7,3,3", "[1,7,3,3]"),
            (D2S, 2, "?,8..16,2..3,?", "[?,2..4,4..6,?]"),
            (D2S, 2, "1,6..17,1,2..", "[1,2..4,2,4..]"),
            (D2S, 2, "1,?,2,2", "[1,?,4,4]"),
            (D2S, 2, "1,0,2,2", "[1,0,4,4]"),
            (D2S, 2, "1,..5,2,2", "[1,..1,4,4]"),
            (D2S, 2, "...", "[...]"),
            (S2D, 2, "1,2,4,6", "[1,8,2,3]"),
            (S2D, 3, "2,1,3,6,9", "[2,27,1,2,3]"),
            (S2D, 2, "5,2,14", "[5,4,7]"),
            (S2D, 2, "1,2..3,4..9,?", "[1,8..12,2..4,?]"),
            (S2D, 2, "1,?,3..4,5..", "[1,?,2,3..]"),
            (S2D, 2, "1,2,0,2", "[1,8,0,1]"),
            (S2D, 2, "...", "[...]"),
        ];
        for &(dir, bs, shape, want) in cases {
            for mode in [Blocks, Depth] {
                assert_eq!(
                    infer(&op(dir, mode, bs), shape).as_deref(),
                    Ok(want),
                    "{dir:?} {bs} {shape}"
                );
            }
        }
    }

    #[test]
    fn invalid_inputs_are_refused_by_inference_and_execution() {
        let cases: &[(Direction, u64, &[usize], &str)] = &[
            (
                D2S,
                2,
                &[1, 6, 2, 2],
                "the channel dim (axis 1) 6 is not divisible by block_size^2 = 4 (block_size 2, 2 spatial dims)",
            ),
            (
                D2S,
                3,
                &[1, 7, 2],
                "the channel dim (axis 1) 7 is not divisible by block_size^1 = 3 (block_size 3, 1 spatial dim)",
            ),
            (
                S2D,
                2,
                &[1, 1, 4, 5],
                "the spatial dim (axis 3) 5 is not divisible by block_size 2",
            ),
            (
                S2D,
                3,
                &[1, 1, 2, 3, 3],
                "the spatial dim (axis 2) 2 is not divisible by block_size 3",
            ),
            (
                D2S,
                2,
                &[4, 4],
                "DepthToSpace needs data of rank 3 or more ([N, C, D1, ...]), not rank 2",
            ),
            (
                S2D,
                2,
                &[4],
                "SpaceToDepth needs data of rank 3 or more ([N, C, D1, ...]), not rank 1",
            ),
            (D2S, 2, &[], "not rank 0"),
            // bs^K overflows: even an empty input is refused.
            (
                D2S,
                1 << 32,
                &[1, 0, 1, 1],
                "block_size^2 (block_size 4294967296, 2 spatial dims) exceeds 2^63 - 1",
            ),
            (
                S2D,
                1 << 21,
                &[1, 1, 0, 0, 0],
                "block_size^3 (block_size 2097152, 3 spatial dims) exceeds 2^63 - 1",
            ),
        ];
        for &(dir, bs, shape, want) in cases {
            for mode in [Blocks, Depth] {
                let o = op(dir, mode, bs);
                let text = PartialShape::of_tensor(shape).to_string();
                match infer(&o, text.trim_matches(['[', ']'])) {
                    Err(m) => assert!(m.contains(want) && m.contains("Input, 0"), "{m}"),
                    Ok(s) => panic!("{dir:?} {shape:?}: expected {want:?}, got {s}"),
                }
                match run(&o, &iota(shape), 1 << 20) {
                    Err(EvalError::Invalid(m)) => assert!(m.contains(want), "{m}"),
                    other => panic!("{dir:?} {shape:?}: expected {want:?}, got {other:?}"),
                }
            }
        }
        // bs^K overflows with many spatial dims of 1: 2^65.
        let shape = [1; 67];
        let want = "block_size^65 (block_size 2, 65 spatial dims) exceeds 2^63 - 1";
        assert!(infer(&op(S2D, Depth, 2), &["1"; 67].join(",")).is_err_and(|m| m.contains(want)));
        let got = run(&op(S2D, Depth, 2), &iota(&shape), 1 << 20);
        assert!(
            matches!(&got, Err(EvalError::Invalid(m)) if m.contains(want)),
            "{got:?}"
        );
        // Intervals that hold no multiple.
        for (dir, shape, want) in [
            (
                D2S,
                "1,5..7,2,2",
                "the channel dim (axis 1) 5..7 holds no multiple of block_size^2 = 4",
            ),
            (
                S2D,
                "1,1,4,5..5",
                "the spatial dim (axis 3) 5 is not divisible by block_size 2",
            ),
            (
                S2D,
                "1,1,9..11,4",
                "the spatial dim (axis 2) 9..11 holds no multiple of block_size 4",
            ),
        ] {
            let bs = if shape.contains("9..") { 4 } else { 2 };
            match infer(&op(dir, Blocks, bs), shape) {
                Err(m) => assert!(m.contains(want), "{m}"),
                Ok(s) => panic!("{shape}: expected {want:?}, got {s}"),
            }
        }
    }

    /// Output dims beyond the machine's sizes (possible only for empty inputs) are an error,
    /// never a panic; outputs over the budget are refused before they are allocated.
    #[test]
    fn huge_and_over_budget_outputs() {
        let empty = t(&[1, 0, 1 << 62, 1], Vec::<u8>::new());
        match run(&op(D2S, Blocks, 4), &empty, 1 << 20) {
            Err(EvalError::Invalid(m)) => assert!(m.contains("beyond"), "{m}"),
            other => panic!("{other:?}"),
        }
        let x = iota(&[1, 8, 64, 64]);
        for dir in [D2S, S2D] {
            let got = run(&op(dir, Depth, 2), &x, 200_000);
            assert!(matches!(got, Err(EvalError::Memory(_))), "{got:?}");
            // The output fits: the transpose reads the input in place (no copy to count).
            assert!(run(&op(dir, Depth, 2), &x, 300_000).is_ok());
        }
    }
}
