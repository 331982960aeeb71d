//! Interpolate-1, Interpolate-4 and Interpolate-11: resizing some axes of a tensor by nearest,
//! linear, cubic or Pillow-style interpolation.
//!
//! Spec: <https://docs.openvino.ai/2026/documentation/openvino-ir-format/operation-sets/operation-specs/image/interpolate-11.html>
//! (and `interpolate-4`, `interpolate-1`). The facts beyond the spec pages are OpenVINO's: its
//! reference kernels (`reference/interpolate.hpp`, `interpolate_pil.hpp`), its shape inference
//! (`interpolate_shape_inference.hpp`) and its conversion of Interpolate-1 to Interpolate-4.
//!
//! Ports. Interpolate-4: `data`, `sizes` (i32, i64, u32, u64), `scales` (f16, bf16, f32),
//! optional `axes` (i32, i64, u32, u64; default `0..rank`). Interpolate-11: `data`,
//! `scales_or_sizes` (a scales type in `scales` mode, a sizes type in `sizes` mode), optional
//! `axes`. Interpolate-1: `data`, `target_spatial_shape` (any integer type), the axes an
//! attribute. One output of the data's type. Data types: f16, bf16, f32, i8, u8, i32, i64 for
//! Interpolate-4/11 and f16, bf16, f32 for Interpolate-1 (the types OpenVINO's validation takes;
//! the spec says "any numeric type", OpenVINO refuses the others, E502).
//!
//! Output shape: every axis is first padded (`pads_begin[k] + dim + pads_end[k]`; the pad lists
//! are cut or zero-filled to the rank, as OpenVINO does). In `sizes` mode axis `axes[i]` becomes
//! `sizes[i]`; in `scales` mode it becomes OpenVINO's `trunc(f32(dim) · (scales[i] + 1e-6))`
//! computed in f32 (the spec writes `floor(scale · dim)`; the epsilon makes `3 · (1/3)` give 1),
//! and stays the dim when the scale is exactly 1. Interval dims are scaled at both ends, an
//! unbounded end stays unbounded; sizes given as bounds (from ShapeOf) give interval dims.
//! Unknown axes give a shape of the data's rank with every dim dynamic; unknown sizes or scales
//! make the interpolated dims dynamic.
//!
//! Decisions (each pinned by a test):
//! * `sizes`/`scales` may hold more elements than there are axes (OpenVINO's check is `≥`):
//!   the extra ones are ignored; fewer is an error (E507) naming the port.
//! * Axes must lie in `0..rank` and must not repeat (the spec's "indices of different
//!   dimensions"; OpenVINO does not check repeats, and a negative axis crashes it): E507.
//! * A negative or NaN scale, a negative size, and a scaled dim beyond 2^63 − 1 are errors.
//! * An interpolated axis whose padded input is empty while its output is not is an error: there
//!   is nothing to interpolate from (OpenVINO reads out of bounds).
//! * `bilinear_pillow` and `bicubic_pillow` (Interpolate-11 only; Interpolate-4 refuses them at
//!   parse, as OpenVINO does) need exactly two axes, `[H, W]`, checked when the axes are known.
//! * Interpolate-1 maps onto Interpolate-4 as OpenVINO's conversion does: `sizes` mode,
//!   `nearest_mode = simple`, `cube_coeff = −0.75`, coordinates `align_corners` if
//!   `align_corners` (default true, as the spec says), else `asymmetric`, except that `linear`
//!   takes `half_pixel` when every pad is 0 and the data is not 4-D resized on axes {2, 3};
//!   `linear` runs as `linear_onnx` below rank 5 and as `linear` at rank 5, and is refused above
//!   (OpenVINO fails there). Its `axes` are read as a set (sorted, repeats merged: OpenVINO's
//!   `AxisSet`), `target_spatial_shape` values mapped to them in sorted order; `linear_onnx` is
//!   taken as OpenVINO takes it, `area` is refused (OpenVINO cannot run it). A nonzero pad on an
//!   axis not in `axes` is refused: OpenVINO's Interpolate-1 shape inference ignores it while
//!   its conversion pads the output, so the two disagree.
//! * Enum attributes are read in any case, as OpenVINO reads them; `cube_coeff` must be finite.
//! * The input that gives the shape (`sizes`, `scales`, `scales_or_sizes`,
//!   `target_spatial_shape`) and `axes` must be 1-D (OpenVINO checks the same, but for
//!   Interpolate-1); in Interpolate-4 the other of `sizes`/`scales` is not read, only its type
//!   checked, as OpenVINO does.
//!
//! Computation: exactly OpenVINO's reference formulas, in its order and its f32 arithmetic, so
//! that results are the reference's bit for bit (checked against OpenVINO 2026.4's evaluation).
//! Each output axis's source coordinate is computed in f32 from the output coordinate, the axis
//! scale (the given scale in `scales` mode, `f32(size) / f32(padded dim)` in `sizes` mode) and
//! the two lengths, by the `coordinate_transformation_mode` formula; a scale of exactly 1 or equal
//! lengths leave the coordinate as it is.
//! * `nearest`: the source index by `nearest_mode` (`round_prefer_floor`: a coordinate at
//!   exactly `k + 0.5` goes to `k`, else to the nearest, halves away from zero;
//!   `round_prefer_ceil`: nearest, halves away from zero; `floor`; `ceil`; `simple`: `ceil` on an
//!   axis whose scale is below 1, else truncation), clamped to the axis. Elements are copied.
//! * `linear_onnx`: per axis, the coordinate clamped to `[0, len − 1]`, `i1 = trunc`, `i2 =
//!   min(i1 + 1, len − 1)`, weights `|c − i2|` for `i1` and `|c − i1|` for `i2` (0.5 each when
//!   `i1 = i2`); the sum over the `2^k` corners with the first axis outermost, each weight the
//!   product of the per-axis weights left to right. The reference accepts only the trailing
//!   spatial axes (`{0,1}` of 2-D, `{0,1,2}` of 3-D, `{2,…}` or all axes of 4-D and up) and,
//!   viewing the data as 5-D, interpolates its last three axes, or only the last two when its
//!   axes 1 and 2 keep their lengths. ovir takes any axes, in ascending order, and leaves out the
//!   same ones: a listed axis that keeps its length when it lies before the last three, or is the
//!   third from last and the axis before it (if any) keeps its length too. (An axis left out
//!   changes no value, but the 0.5/0.5 weights at its end would round the sum differently.) For
//!   5-D data resized on axes {2, 3, 4} with axis 2 unchanged, OpenVINO's reference takes the
//!   scales and lengths of the wrong axes (axis 3 gets axis 2's); ovir uses each axis's own.
//! * `cubic`: per axis `i0 = floor(c)`, `s = c − i0`, the reference's four Keys coefficients in
//!   `cube_coeff` of `|s|` (its f32 expressions), the taps `i0 − 1 … i0 + 2` clamped; the sum over
//!   the `4^k` taps, axes in the given order, the first outermost.
//! * `linear`: the reference's triangle filter: per axis `a = scale` when `antialias` is set and
//!   some scale is below 1, else 1; radius `r = 2` if the scale is above 1, else `ceil(2 / a)`;
//!   the taps `round(c) − r … round(c) + r` that lie in the axis; each weight `a ·
//!   max(0, 1 − |a · (c − tap)|)` (their product starting from the product of the `a`s); the
//!   result `Σ w·x / Σ w`, 0 when `Σ w = 0`.
//! * `bilinear_pillow`, `bicubic_pillow` (Pillow 9.4's `Resample.c`, as the reference): the
//!   image `[axes[0], axes[1]]` (height, width, in that order whatever their positions) of each
//!   slice resized horizontally then vertically (a pass is skipped when its length does not
//!   change) with normalised f64 filter coefficients (support 1 or 2, the bicubic's `a` being
//!   `cube_coeff`), the intermediate rows held in the computation type (f32 for f16 and bf16).
//!   The scales and coordinate mode do not take part. (OpenVINO's reference crashes on axes
//!   given width first when the data has other axes.)
//!
//! Types: f16 and bf16 are widened to f32, computed as f32 and rounded once to nearest even at
//! the end (the reference's own path for them; Pillow's intermediate rounds to f32 first, as
//! there). OpenVINO's reference evaluation rounds that last f32 → bf16 step by its Convert,
//! which rounds some values more than half an ulp above a bf16 down (1 + 0.75 ulp gives 1):
//! ovir's bf16 results are OpenVINO's f32 results rounded to nearest even (tested over
//! thousands of cases). f32, i8 and u8 are computed in f32 as the reference does. i32 and i64
//! (which the reference does not evaluate) use the same f32 weights, with the products and sums
//! in f64. Integer results: `linear` rounds `Σ w·x / Σ w` half away from zero; `linear_onnx`
//! and `cubic` truncate toward zero (the reference's `static_cast`); Pillow rounds half away
//! from zero and clamps to the type (as the reference); out-of-range values saturate and NaN
//! gives 0. There OpenVINO's `static_cast` is undefined and on x86 wraps: its `cubic` overshoot
//! of −22.1 on u8 gives 234 where ovir gives 0.
//!
//! Accuracy: the reference's f32 arithmetic: an output that sums `n` products is within about
//! `n + 2` f32 roundings of `Σ|c·x|` of the exact weighted sum of the rounded weights (divided
//! by `Σ c` for `linear`); a test checks this against float64, and others check the bits
//! against values computed by OpenVINO 2026.4's evaluation.
//!
//! Execution: per-axis tables (source offsets and weights per output position) are built once;
//! the output is split into parts of whole rows (the innermost axis), computed in parallel by
//! rayon when large, each element by the fixed order above, so the bits do not depend on the
//! thread count. Nearest copies whole rows when the innermost axis is not resized and repeats
//! the previous row when two rows read the same source (2× upsampling writes each source row
//! twice without recomputing it); `linear_onnx` and `cubic` on the two innermost axes run
//! unrolled loops of 2 × 2 and 4 × 4 taps per element; `linear` on finite data leaves out its
//! taps of weight 0 (the same bits: see `separable`). The output, the padded copy of the input (made only when a pad
//! is not 0), the tables and Pillow's intermediate rows are checked against the memory budget
//! before they are allocated.

use std::fmt;
use std::mem::MaybeUninit;
use std::ops::{Add, Div, Mul};

use half::{bf16, f16};
use rayon::prelude::*;

use super::{Arity, AttrError, Attrs, EvalCx, EvalError, InferCx, Op, OpDef};
use crate::dtype::ElementType;
use crate::error::ErrorKind;
use crate::shape::dim::MAX_DIM;
use crate::shape::types::Bounds;
use crate::shape::{Dim, PartialShape, TensorType};
use crate::tensor::{Element, Tensor};

pub const INTERPOLATE_1: OpDef = OpDef {
    name: "Interpolate",
    version: 1,
    inputs: Arity::exactly(2),
    outputs: Arity::exactly(1),
    parse: parse_1,
};

pub const INTERPOLATE_4: OpDef = OpDef {
    version: 4,
    inputs: Arity::range(3, 4),
    parse: parse_4,
    ..INTERPOLATE_1
};

pub const INTERPOLATE_11: OpDef = OpDef {
    version: 11,
    inputs: Arity::range(2, 3),
    parse: parse_11,
    ..INTERPOLATE_1
};

/// The interpolation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Nearest,
    Linear,
    LinearOnnx,
    Cubic,
    BilinearPillow,
    BicubicPillow,
}

/// How an output coordinate maps to a source coordinate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transform {
    HalfPixel,
    PytorchHalfPixel,
    Asymmetric,
    TfHalfPixelForNn,
    AlignCorners,
}

/// How `nearest` rounds a source coordinate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rounding {
    RoundPreferFloor,
    RoundPreferCeil,
    Floor,
    Ceil,
    Simple,
}

/// Which input gives the interpolated dims.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShapeCalc {
    Sizes,
    Scales,
}

/// The mode of Interpolate-1.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode1 {
    Nearest,
    Linear,
    LinearOnnx,
    Cubic,
}

const MODES: &[(&str, Mode)] = &[
    ("nearest", Mode::Nearest),
    ("linear", Mode::Linear),
    ("linear_onnx", Mode::LinearOnnx),
    ("cubic", Mode::Cubic),
    ("bilinear_pillow", Mode::BilinearPillow),
    ("bicubic_pillow", Mode::BicubicPillow),
];

const TRANSFORMS: &[(&str, Transform)] = &[
    ("half_pixel", Transform::HalfPixel),
    ("pytorch_half_pixel", Transform::PytorchHalfPixel),
    ("asymmetric", Transform::Asymmetric),
    ("tf_half_pixel_for_nn", Transform::TfHalfPixelForNn),
    ("align_corners", Transform::AlignCorners),
];

const ROUNDINGS: &[(&str, Rounding)] = &[
    ("round_prefer_floor", Rounding::RoundPreferFloor),
    ("round_prefer_ceil", Rounding::RoundPreferCeil),
    ("floor", Rounding::Floor),
    ("ceil", Rounding::Ceil),
    ("simple", Rounding::Simple),
];

const SHAPE_CALCS: &[(&str, ShapeCalc)] =
    &[("sizes", ShapeCalc::Sizes), ("scales", ShapeCalc::Scales)];

const MODES_1: &[(&str, Mode1)] = &[
    ("nearest", Mode1::Nearest),
    ("linear", Mode1::Linear),
    ("linear_onnx", Mode1::LinearOnnx),
    ("cubic", Mode1::Cubic),
];

/// The value of `table` named `text` (any case).
fn pick<T: Copy>(text: &str, table: &[(&str, T)]) -> Result<T, String> {
    let t = text.trim();
    table
        .iter()
        .find(|(name, _)| t.eq_ignore_ascii_case(name))
        .map(|&(_, v)| v)
        .ok_or_else(|| {
            let names: Vec<&str> = table.iter().map(|(n, _)| *n).collect();
            format!("expected one of {}", names.join(", "))
        })
}

fn name_of<T: PartialEq>(v: &T, table: &[(&'static str, T)]) -> &'static str {
    table.iter().find(|(_, x)| x == v).map_or("?", |(n, _)| n)
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(name_of(self, MODES))
    }
}

/// The attributes of Interpolate-4 and -11 (Interpolate-1's are mapped onto them).
#[derive(Clone, Debug, PartialEq)]
pub struct Attrs4 {
    pub mode: Mode,
    pub shape_calc: ShapeCalc,
    pub transform: Transform,
    pub rounding: Rounding,
    pub antialias: bool,
    pub pads_begin: Vec<u64>,
    pub pads_end: Vec<u64>,
    pub cube_coeff: f64,
}

/// The attributes of Interpolate-1.
#[derive(Clone, Debug, PartialEq)]
pub struct Attrs1 {
    /// Sorted, without repeats.
    pub axes: Vec<u64>,
    pub mode: Mode1,
    pub align_corners: bool,
    pub antialias: bool,
    pub pads_begin: Vec<u64>,
    pub pads_end: Vec<u64>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Interpolate {
    V1(Attrs1),
    V4(Attrs4),
    V11(Attrs4),
}

/// A list of non-negative integers (`pads_begin="0,1"`; empty for none).
fn parse_u64_list(text: &str) -> Result<Vec<u64>, String> {
    let t = text.trim();
    if t.is_empty() {
        return Ok(Vec::new());
    }
    t.split(',')
        .map(|v| super::parse_u64(v).map_err(|e| format!("{e} (each must be ≥ 0)")))
        .collect()
}

fn parse_pads(a: &Attrs) -> (Result<Vec<u64>, AttrError>, Result<Vec<u64>, AttrError>) {
    (
        a.parse_or("pads_begin", Vec::new(), parse_u64_list),
        a.parse_or("pads_end", Vec::new(), parse_u64_list),
    )
}

fn parse_1(a: &Attrs) -> Result<Box<dyn Op>, Vec<AttrError>> {
    let (pads_begin, pads_end) = parse_pads(a);
    let (axes, mode, align_corners, antialias, pads_begin, pads_end) = crate::attrs_all!(
        a.parse_required("axes", |t| {
            let mut v = parse_u64_list(t)?;
            v.sort_unstable();
            v.dedup();
            Ok(v)
        }),
        a.parse_required("mode", |t| {
            if t.trim().eq_ignore_ascii_case("area") {
                return Err("OpenVINO cannot run mode `area` (its reference and its conversion to Interpolate-4 refuse it)".into());
            }
            pick(t, MODES_1)
        }),
        a.bool_or(&["align_corners"], true),
        a.bool_or(&["antialias"], false),
        pads_begin,
        pads_end,
    )?;
    Ok(Box::new(Interpolate::V1(Attrs1 {
        axes: axes.unwrap_or_default(),
        mode: mode.unwrap_or(Mode1::Nearest),
        align_corners: align_corners.unwrap_or(true),
        antialias: antialias.unwrap_or(false),
        pads_begin: pads_begin.unwrap_or_default(),
        pads_end: pads_end.unwrap_or_default(),
    })))
}

fn parse_attrs4(a: &Attrs, version: u32) -> Result<Attrs4, Vec<AttrError>> {
    let (pads_begin, pads_end) = parse_pads(a);
    let (mode, shape_calc, transform, rounding, antialias, pads_begin, pads_end, cube_coeff) = crate::attrs_all!(
        a.parse_required("mode", |t| match pick(t, MODES)? {
            Mode::BilinearPillow | Mode::BicubicPillow if version == 4 => Err(
                "the Pillow modes belong to Interpolate-11; Interpolate-4 takes nearest, linear, linear_onnx or cubic".into()
            ),
            m => Ok(m),
        }),
        a.parse_required("shape_calculation_mode", |t| pick(t, SHAPE_CALCS)),
        a.parse_or("coordinate_transformation_mode", Transform::HalfPixel, |t| pick(t, TRANSFORMS)),
        a.parse_or("nearest_mode", Rounding::RoundPreferFloor, |t| pick(t, ROUNDINGS)),
        a.bool_or(&["antialias"], false),
        pads_begin,
        pads_end,
        a.parse_or("cube_coeff", -0.75, |t| match t.trim().parse::<f64>() {
            Ok(v) if v.is_finite() => Ok(v),
            _ => Err("expected a finite number".into()),
        }),
    )?;
    Ok(Attrs4 {
        mode: mode.unwrap_or(Mode::Nearest),
        shape_calc: shape_calc.unwrap_or(ShapeCalc::Sizes),
        transform: transform.unwrap_or(Transform::HalfPixel),
        rounding: rounding.unwrap_or(Rounding::RoundPreferFloor),
        antialias: antialias.unwrap_or(false),
        pads_begin: pads_begin.unwrap_or_default(),
        pads_end: pads_end.unwrap_or_default(),
        cube_coeff: cube_coeff.unwrap_or(-0.75),
    })
}

fn parse_4(a: &Attrs) -> Result<Box<dyn Op>, Vec<AttrError>> {
    Ok(Box::new(Interpolate::V4(parse_attrs4(a, 4)?)))
}

fn parse_11(a: &Attrs) -> Result<Box<dyn Op>, Vec<AttrError>> {
    Ok(Box::new(Interpolate::V11(parse_attrs4(a, 11)?)))
}

use ElementType as E;

/// Data types of Interpolate-4 and -11 (OpenVINO's validation).
const DATA_TYPES: &[ElementType] = &[E::F16, E::Bf16, E::F32, E::I8, E::U8, E::I32, E::I64];
/// Data types of Interpolate-1: the floats among them (the spec's "floating-point").
const DATA_TYPES_1: &[ElementType] = &[E::F16, E::Bf16, E::F32];
const SIZE_TYPES: &[ElementType] = &[E::I32, E::I64, E::U32, E::U64];
const SCALE_TYPES: &[ElementType] = &[E::F16, E::Bf16, E::F32];
const TARGET_TYPES_1: &[ElementType] =
    &[E::I8, E::I16, E::I32, E::I64, E::U8, E::U16, E::U32, E::U64];

/// What is known of the inputs that give the output shape.
#[derive(Default)]
struct Known {
    /// The `axes` input's values (Interpolate-4/11 with an `axes` input).
    axes: Option<Vec<i64>>,
    /// The sizes' values or bounds (in `sizes` mode).
    sizes: Option<Bounds>,
    /// The scales' values (in `scales` mode).
    scales: Option<Vec<f32>>,
    /// The number of elements of the input read (sizes or scales), if known.
    len: Option<u64>,
    /// Whether the layer has an `axes` input.
    axes_input: bool,
}

/// The interpolation of one evaluation: padded input shape, output shape, axes and scales.
struct Plan {
    attrs: Attrs4,
    /// The data's shape padded.
    input: Vec<usize>,
    output: Vec<usize>,
    axes: Vec<usize>,
    /// The coordinate scale of each axis in `axes`.
    scales: Vec<f32>,
}

impl Interpolate {
    fn version(&self) -> u32 {
        match self {
            Interpolate::V1(_) => 1,
            Interpolate::V4(_) => 4,
            Interpolate::V11(_) => 11,
        }
    }

    /// The Interpolate-4 attributes this layer computes with on data of rank `rank`.
    fn effective(&self, rank: usize) -> Result<Attrs4, String> {
        match self {
            Interpolate::V4(a) | Interpolate::V11(a) => Ok(a.clone()),
            Interpolate::V1(a) => {
                let mode = match a.mode {
                    Mode1::Nearest => Mode::Nearest,
                    Mode1::Cubic => Mode::Cubic,
                    Mode1::LinearOnnx => Mode::LinearOnnx,
                    Mode1::Linear if rank < 5 => Mode::LinearOnnx,
                    Mode1::Linear if rank == 5 => Mode::Linear,
                    Mode1::Linear => {
                        return Err(format!(
                            "Interpolate-1 `linear` runs on data of rank up to 5, not {rank} (OpenVINO converts it to linear_onnx below rank 5 and to linear at rank 5 only)"
                        ));
                    }
                };
                let zero_pads = a.pads_begin.iter().chain(&a.pads_end).all(|&p| p == 0);
                let transform = if a.align_corners {
                    Transform::AlignCorners
                } else if matches!(mode, Mode::LinearOnnx | Mode::Linear)
                    && zero_pads
                    && !(rank == 4 && a.axes == [2, 3])
                {
                    Transform::HalfPixel
                } else {
                    Transform::Asymmetric
                };
                Ok(Attrs4 {
                    mode,
                    shape_calc: ShapeCalc::Sizes,
                    transform,
                    rounding: Rounding::Simple,
                    antialias: a.antialias,
                    pads_begin: a.pads_begin.clone(),
                    pads_end: a.pads_end.clone(),
                    cube_coeff: -0.75,
                })
            }
        }
    }

    /// The shape calculation mode (without the data's rank: Interpolate-1's is `sizes`).
    fn shape_calc(&self) -> ShapeCalc {
        match self {
            Interpolate::V1(_) => ShapeCalc::Sizes,
            Interpolate::V4(a) | Interpolate::V11(a) => a.shape_calc,
        }
    }

    /// The port that gives the interpolated dims, and its name.
    fn shape_port(&self) -> (usize, &'static str) {
        match (self, self.shape_calc()) {
            (Interpolate::V1(_), _) => (1, "target_spatial_shape"),
            (Interpolate::V4(_), ShapeCalc::Sizes) => (1, "sizes"),
            (Interpolate::V4(_), ShapeCalc::Scales) => (2, "scales"),
            (Interpolate::V11(_), _) => (1, "scales_or_sizes"),
        }
    }

    fn axes_port(&self) -> Option<usize> {
        match self {
            Interpolate::V1(_) => None,
            Interpolate::V4(_) => Some(3),
            Interpolate::V11(_) => Some(2),
        }
    }

    /// The element types each port takes, with the port's name.
    fn port_types(&self) -> Vec<(usize, &'static str, &'static [ElementType])> {
        match self {
            Interpolate::V1(_) => vec![
                (0, "data", DATA_TYPES_1),
                (1, "target_spatial_shape", TARGET_TYPES_1),
            ],
            Interpolate::V4(_) => vec![
                (0, "data", DATA_TYPES),
                (1, "sizes", SIZE_TYPES),
                (2, "scales", SCALE_TYPES),
                (3, "axes", SIZE_TYPES),
            ],
            Interpolate::V11(a) => vec![
                (0, "data", DATA_TYPES),
                (
                    1,
                    "scales_or_sizes",
                    if a.shape_calc == ShapeCalc::Scales {
                        SCALE_TYPES
                    } else {
                        SIZE_TYPES
                    },
                ),
                (2, "axes", SIZE_TYPES),
            ],
        }
    }

    /// The 1-D inputs OpenVINO checks: the one read for the shape, and `axes`.
    fn one_d_ports(&self) -> Vec<(usize, &'static str)> {
        let mut v = vec![self.shape_port()];
        if let Some(p) = self.axes_port() {
            v.push((p, "axes"));
        }
        v
    }

    /// The interpolated axes for data of rank `rank`: `None` when the `axes` input's value is
    /// not known.
    fn axes(&self, rank: usize, known: &Known) -> Result<Option<Vec<usize>>, (usize, String)> {
        let (values, port, what): (Vec<i64>, usize, &str) = match self {
            Interpolate::V1(a) => (
                a.axes
                    .iter()
                    .map(|&v| v.min(i64::MAX as u64) as i64)
                    .collect(),
                0,
                "the `axes` attribute",
            ),
            _ => match (self.axes_port(), &known.axes) {
                (Some(p), Some(v)) => (v.clone(), p, "axes"),
                (Some(_), None) if known.axes_input => return Ok(None),
                _ => return Ok(Some((0..rank).collect())),
            },
        };
        let mut seen = vec![false; rank];
        let mut axes = Vec::with_capacity(values.len());
        for (i, &v) in values.iter().enumerate() {
            let a = usize::try_from(v).ok().filter(|&a| a < rank).ok_or_else(|| {
                (
                    port,
                    format!(
                        "{what} element {i} is {v}, out of range for data of rank {rank} (axes are 0..{rank}, non-negative)"
                    ),
                )
            })?;
            if std::mem::replace(&mut seen[a], true) {
                return Err((port, format!("{what} repeats axis {a}")));
            }
            axes.push(a);
        }
        Ok(Some(axes))
    }

    /// The output dims from the data's dims (static at execution), as OpenVINO's shape
    /// inference; errors carry the port they are about.
    fn out_dims(&self, data: &[Dim], known: &Known) -> Result<Vec<Dim>, (usize, String)> {
        let rank = data.len();
        let attrs = self.effective(rank).map_err(|m| (0, m))?;
        let (pb, pe) = pads(&attrs, rank);
        let Some(axes) = self.axes(rank, known)? else {
            return Ok(vec![Dim::DYNAMIC; rank]);
        };
        if let Interpolate::V1(_) = self {
            for k in 0..rank {
                if (pb[k] != 0 || pe[k] != 0) && !axes.contains(&k) {
                    return Err((
                        0,
                        format!(
                            "pads on axis {k}, which is not interpolated: OpenVINO's Interpolate-1 keeps that dim while its conversion to Interpolate-4 pads it; ovir takes pads only on the axes in `axes`"
                        ),
                    ));
                }
            }
        }
        if matches!(attrs.mode, Mode::BilinearPillow | Mode::BicubicPillow) && axes.len() != 2 {
            return Err((
                self.axes_port()
                    .filter(|_| known.axes.is_some())
                    .unwrap_or(0),
                format!(
                    "{} resizes exactly two axes (height, width), not {}",
                    attrs.mode,
                    axes.len()
                ),
            ));
        }
        let padded: Vec<Dim> = data
            .iter()
            .zip(pb.iter().zip(&pe))
            .map(|(&d, (&b, &e))| match b.checked_add(e) {
                Some(0) => d,
                Some(p) if p <= MAX_DIM => d.plus(Dim::fixed(p)),
                _ => Dim::interval(d.min().saturating_add(b).min(MAX_DIM), None)
                    .unwrap_or(Dim::DYNAMIC),
            })
            .collect();
        let mut out = padded.clone();
        let (port, name) = self.shape_port();
        let len = known.len;
        if let Some(n) = len
            && n < axes.len() as u64
        {
            return Err((
                port,
                format!(
                    "`{name}` has {n} elements but there are {} axes: it needs one per axis",
                    axes.len()
                ),
            ));
        }
        match attrs.shape_calc {
            ShapeCalc::Sizes => {
                for (i, &a) in axes.iter().enumerate() {
                    out[a] = match &known.sizes {
                        None => Dim::DYNAMIC,
                        Some(b) => {
                            if b.hi[i] < 0 {
                                return Err((
                                    port,
                                    format!(
                                        "`{name}` element {i} is {}: a size must be ≥ 0",
                                        b.hi[i]
                                    ),
                                ));
                            }
                            b.dim(i).unwrap_or(Dim::DYNAMIC)
                        }
                    };
                }
            }
            ShapeCalc::Scales => {
                for (i, &a) in axes.iter().enumerate() {
                    out[a] = match &known.scales {
                        None => Dim::DYNAMIC,
                        Some(s) => scale_dim(padded[a], s[i]).ok_or_else(|| {
                            (
                                port,
                                format!(
                                    "`{name}` element {i} is {}: a scale must be ≥ 0 and give a dim of at most 2^63 − 1 (axis {a} of dim {})",
                                    s[i], padded[a]
                                ),
                            )
                        })?,
                    };
                }
            }
        }
        for &a in &axes {
            if padded[a].max() == Some(0) && out[a].min() > 0 {
                return Err((
                    0,
                    format!(
                        "axis {a} of the data is empty (padded dim {}), so there is nothing to interpolate its {} output positions from",
                        padded[a], out[a]
                    ),
                ));
            }
        }
        Ok(out)
    }

    /// The plan of an evaluation of `data` of shape `shape`.
    fn plan(&self, shape: &[usize], known: &Known) -> Result<Plan, EvalError> {
        let dims: Vec<Dim> = shape.iter().map(|&d| Dim::fixed(d as u64)).collect();
        let out = self
            .out_dims(&dims, known)
            .map_err(|(_, m)| EvalError::Invalid(m))?;
        let rank = shape.len();
        let attrs = self.effective(rank).map_err(EvalError::Invalid)?;
        let axes = self
            .axes(rank, known)
            .map_err(|(_, m)| EvalError::Invalid(m))?
            .ok_or(EvalError::Internal("Interpolate's axes"))?;
        let (pb, pe) = pads(&attrs, rank);
        let too_large = || {
            EvalError::Invalid(format!(
                "interpolating {shape:?}: a dim exceeds the address space"
            ))
        };
        let input: Vec<usize> = shape
            .iter()
            .zip(pb.iter().zip(&pe))
            .map(|(&d, (&b, &e))| {
                usize::try_from(b)
                    .ok()
                    .and_then(|b| d.checked_add(b))
                    .and_then(|s| usize::try_from(e).ok().and_then(|e| s.checked_add(e)))
            })
            .collect::<Option<_>>()
            .ok_or_else(too_large)?;
        let output: Vec<usize> = out
            .iter()
            .map(|d| d.get_static().and_then(|v| usize::try_from(v).ok()))
            .collect::<Option<_>>()
            .ok_or_else(too_large)?;
        let scales = axes
            .iter()
            .enumerate()
            .map(|(i, &a)| match attrs.shape_calc {
                ShapeCalc::Scales => known.scales.as_ref().map_or(1.0, |s| s[i]),
                ShapeCalc::Sizes => output[a] as f32 / input[a] as f32,
            })
            .collect();
        Ok(Plan {
            attrs,
            input,
            output,
            axes,
            scales,
        })
    }

    /// What inference knows of the shape inputs.
    fn known_infer(&self, cx: &InferCx<'_>) -> Known {
        let (port, _) = self.shape_port();
        let t = cx.input(port);
        let mut k = Known {
            len: match t.shape.dims() {
                Some([d]) => d.get_static(),
                _ => None,
            },
            ..Known::default()
        };
        match self.shape_calc() {
            ShapeCalc::Sizes => {
                k.sizes = t.int_bounds().map(|b| b.into_owned());
                if let Some(b) = &k.sizes {
                    k.len = Some(b.len() as u64);
                }
            }
            ShapeCalc::Scales => {
                k.scales = t.value().and_then(|v| f32_values(v));
                if let Some(s) = &k.scales {
                    k.len = Some(s.len() as u64);
                }
            }
        }
        if let Some(p) = self.axes_port().filter(|&p| cx.has_input(p)) {
            k.axes = cx.ints(p);
            k.axes_input = true;
        }
        k
    }

    /// The shape inputs' values at execution.
    fn known_eval(&self, cx: &EvalCx<'_>) -> Result<Known, EvalError> {
        let one_d = |i: usize, name: &str| {
            let r = cx.value(i).shape().len();
            if r == 1 {
                Ok(())
            } else {
                Err(EvalError::Invalid(format!(
                    "`{name}` must be 1-D, not rank {r}"
                )))
            }
        };
        let (port, name) = self.shape_port();
        one_d(port, name)?;
        let mut k = Known::default();
        match self.shape_calc() {
            ShapeCalc::Sizes => {
                let v = crate::shape::types::int_values(&*cx.tensor(port)?).ok_or_else(|| {
                    EvalError::Invalid(format!("`{name}` must hold integers of at most 64 bits"))
                })?;
                k.len = Some(v.len() as u64);
                k.sizes = Some(Bounds {
                    lo: v.clone(),
                    hi: v,
                });
            }
            ShapeCalc::Scales => {
                let t = cx.tensor(port)?;
                let v = f32_values(&t).ok_or_else(|| EvalError::UnsupportedType {
                    op: format!("Interpolate's `{name}`"),
                    ty: t.element_type(),
                })?;
                k.len = Some(v.len() as u64);
                k.scales = Some(v);
            }
        }
        if let Some(p) = self.axes_port().filter(|&p| p < cx.len()) {
            one_d(p, "axes")?;
            k.axes = Some(cx.ints(p)?);
            k.axes_input = true;
        }
        Ok(k)
    }
}

/// The pads resized to `rank` (cut, or extended with zeros), as OpenVINO does.
fn pads(a: &Attrs4, rank: usize) -> (Vec<u64>, Vec<u64>) {
    let fit = |p: &[u64]| {
        let mut v: Vec<u64> = p.iter().copied().take(rank).collect();
        v.resize(rank, 0);
        v
    };
    (fit(&a.pads_begin), fit(&a.pads_end))
}

/// OpenVINO's scaled dim: `trunc(f32(d) · (s + 1e-6))` in f32, `d` itself for `s == 1`; `None`
/// for a negative or NaN scale or a result beyond [`MAX_DIM`].
fn scaled(d: u64, s: f32) -> Option<u64> {
    if s.is_nan() || s < 0.0 {
        return None;
    }
    if s == 1.0 {
        return Some(d);
    }
    let p = d as f32 * (s + 1.0e-6);
    // 2^63 as f32: the least f32 that does not fit a dim.
    (p < 9.223_372e18).then_some(p as u64)
}

/// A dim (an interval) scaled at both ends; an upper end too large to scale becomes unbounded.
fn scale_dim(d: Dim, s: f32) -> Option<Dim> {
    let lo = scaled(d.min(), s)?;
    let hi = match d.max() {
        None => None,
        Some(m) if m == d.min() => Some(lo),
        Some(m) => scaled(m, s),
    };
    Dim::interval(lo, hi)
}

/// The elements of a float tensor as f32 (f16, bf16 exactly; f64 rounded).
fn f32_values(t: &Tensor) -> Option<Vec<f32>> {
    Some(match t {
        Tensor::F32(a) => a.iter().copied().collect(),
        Tensor::F16(a) => a.iter().map(|v| v.to_f32()).collect(),
        Tensor::Bf16(a) => a.iter().map(|v| v.to_f32()).collect(),
        Tensor::F64(a) => a.iter().map(|&v| v as f32).collect(),
        _ => return None,
    })
}

impl Op for Interpolate {
    fn def(&self) -> Option<&'static OpDef> {
        Some(match self {
            Interpolate::V1(_) => &INTERPOLATE_1,
            Interpolate::V4(_) => &INTERPOLATE_4,
            Interpolate::V11(_) => &INTERPOLATE_11,
        })
    }

    fn infer(&self, cx: &mut InferCx<'_>) -> Option<Vec<TensorType>> {
        for (port, _, types) in self.port_types() {
            if !cx.has_input(port) {
                continue;
            }
            let ty = cx.input(port).element_type;
            if ty != ElementType::Dynamic && !types.contains(&ty) {
                cx.report_input(
                    port,
                    ErrorKind::UnsupportedElementType {
                        op: format!("Interpolate-{}", self.version()),
                        ty,
                    },
                );
                return None;
            }
        }
        for (port, name) in self.one_d_ports() {
            if !cx.has_input(port) {
                continue;
            }
            if let Some(r) = cx.input(port).shape.rank()
                && r != 1
            {
                return cx.invalid(port, format!("`{name}` must be 1-D, not rank {r}"));
            }
        }
        let data = cx.input(0);
        let ty = data.element_type;
        let Some(dims) = data.shape.dims() else {
            return Some(vec![TensorType::new(ty, PartialShape::dynamic_rank())]);
        };
        let known = self.known_infer(cx);
        match self.out_dims(dims, &known) {
            Ok(out) => Some(vec![TensorType::new(ty, PartialShape::new(out))]),
            Err((port, reason)) => cx.invalid(port, reason),
        }
    }

    fn eval(&self, cx: &EvalCx<'_>) -> Result<Vec<Tensor>, EvalError> {
        let data = cx.tensor(0)?;
        let ty = data.element_type();
        let allowed = if let Interpolate::V1(_) = self {
            DATA_TYPES_1
        } else {
            DATA_TYPES
        };
        if !allowed.contains(&ty) {
            return Err(EvalError::UnsupportedType {
                op: format!("Interpolate-{}", self.version()),
                ty,
            });
        }
        let known = self.known_eval(cx)?;
        let plan = self.plan(data.shape(), &known)?;
        let out = match ty {
            E::F32 => run::<f32>(cx, &plan, &data),
            E::F16 => run::<f16>(cx, &plan, &data),
            E::Bf16 => run::<bf16>(cx, &plan, &data),
            E::I8 => run::<i8>(cx, &plan, &data),
            E::U8 => run::<u8>(cx, &plan, &data),
            E::I32 => run::<i32>(cx, &plan, &data),
            E::I64 => run::<i64>(cx, &plan, &data),
            _ => Err(EvalError::UnsupportedType {
                op: format!("Interpolate-{}", self.version()),
                ty,
            }),
        }?;
        Ok(vec![out])
    }

    fn folds(&self) -> bool {
        // Not exact, and its values never feed shapes.
        false
    }
}

/// C++ `std::min` on f32: `b` if `b < a`, else `a` (so a NaN `a` stays).
#[inline(always)]
fn cmin(a: f32, b: f32) -> f32 {
    if b < a { b } else { a }
}

/// C++ `std::max` on f32: `b` if `a < b`, else `a` (so a NaN `b` gives `a`).
#[inline(always)]
fn cmax(a: f32, b: f32) -> f32 {
    if a < b { b } else { a }
}

impl Transform {
    /// The source coordinate of output coordinate `x` (the reference's f32 formulas).
    fn original(self, x: f32, scale: f32, len_out: f32, len_in: f32) -> f32 {
        if scale == 1.0 || len_out == len_in {
            return x;
        }
        match self {
            Transform::HalfPixel => (x + 0.5) / scale - 0.5,
            Transform::PytorchHalfPixel => {
                if len_out > 1.0 {
                    (x + 0.5) / scale - 0.5
                } else {
                    0.0
                }
            }
            Transform::Asymmetric => x / scale,
            Transform::TfHalfPixelForNn => (x + 0.5) / scale,
            Transform::AlignCorners => {
                if len_out == 1.0 {
                    0.0
                } else {
                    x * (len_in - 1.0) / (len_out - 1.0)
                }
            }
        }
    }
}

impl Rounding {
    /// The source index of coordinate `x` (before clamping), `down` when the axis's scale is
    /// below 1. Conversions saturate (NaN gives 0).
    fn pixel(self, x: f32, down: bool) -> i64 {
        match self {
            Rounding::RoundPreferFloor => {
                if x == (x as i64) as f32 + 0.5 {
                    x.floor() as i64
                } else {
                    x.round() as i64
                }
            }
            Rounding::RoundPreferCeil => x.round() as i64,
            Rounding::Floor => x.floor() as i64,
            Rounding::Ceil => x.ceil() as i64,
            Rounding::Simple => {
                if down {
                    x.ceil() as i64
                } else {
                    x as i64
                }
            }
        }
    }
}

/// The reference's cubic coefficients of the four taps around a coordinate with fraction `s`
/// (its f32 expressions, in its order).
fn cubic_coeffs(s: f32, a: f32) -> [f32; 4] {
    let t = s.abs();
    [
        ((a * (t + 1.0) - 5.0 * a) * (t + 1.0) + 8.0 * a) * (t + 1.0) - 4.0 * a,
        ((a + 2.0) * t - (a + 3.0)) * t * t + 1.0,
        ((a + 2.0) * (1.0 - t) - (a + 3.0)) * (1.0 - t) * (1.0 - t) + 1.0,
        ((a * (2.0 - t) - 5.0 * a) * (2.0 - t) + 8.0 * a) * (2.0 - t) - 4.0 * a,
    ]
}

/// The arithmetic of the weighted sums: f32 (the reference's) or f64.
trait Acc:
    Copy + Send + Sync + PartialEq + Add<Output = Self> + Mul<Output = Self> + Div<Output = Self>
{
    const ZERO: Self;
    fn of(w: f32) -> Self;
}

impl Acc for f32 {
    const ZERO: f32 = 0.0;
    #[inline(always)]
    fn of(w: f32) -> f32 {
        w
    }
}

impl Acc for f64 {
    const ZERO: f64 = 0.0;
    #[inline(always)]
    fn of(w: f32) -> f64 {
        w as f64
    }
}

/// A data type of Interpolate: how its values enter the sums and leave them.
trait Sample: Element {
    /// The arithmetic of `linear`, `linear_onnx` and `cubic`.
    type Acc: Acc;
    /// What Pillow's first pass rounds to (the reference's computation type).
    type Mid: Copy + Send + Sync;
    fn load(self) -> Self::Acc;
    /// A `linear_onnx` or `cubic` result: converted (integers truncated).
    fn store(v: Self::Acc) -> Self;
    /// A `linear` result (integers rounded half away from zero).
    fn store_rounded(v: Self::Acc) -> Self;
    /// The value in f64 (exact but for i64 beyond 2^53).
    fn wide(self) -> f64;
    fn mid_wide(m: Self::Mid) -> f64;
    /// A Pillow sum in the computation type (integers rounded half away from zero, clamped).
    fn mid(v: f64) -> Self::Mid;
    fn from_mid(m: Self::Mid) -> Self;
}

impl Sample for f32 {
    type Acc = f32;
    type Mid = f32;
    #[inline(always)]
    fn load(self) -> f32 {
        self
    }
    #[inline(always)]
    fn store(v: f32) -> f32 {
        v
    }
    #[inline(always)]
    fn store_rounded(v: f32) -> f32 {
        v
    }
    fn wide(self) -> f64 {
        self as f64
    }
    fn mid_wide(m: f32) -> f64 {
        m as f64
    }
    fn mid(v: f64) -> f32 {
        v as f32
    }
    fn from_mid(m: f32) -> f32 {
        m
    }
}

macro_rules! narrow_sample {
    ($($t:ty)*) => {$(
        impl Sample for $t {
            type Acc = f32;
            type Mid = f32;
            #[inline(always)]
            fn load(self) -> f32 {
                self.to_f32()
            }
            #[inline(always)]
            fn store(v: f32) -> Self {
                <$t>::from_f32(v)
            }
            #[inline(always)]
            fn store_rounded(v: f32) -> Self {
                <$t>::from_f32(v)
            }
            fn wide(self) -> f64 {
                self.to_f64()
            }
            fn mid_wide(m: f32) -> f64 {
                m as f64
            }
            fn mid(v: f64) -> f32 {
                v as f32
            }
            fn from_mid(m: f32) -> Self {
                <$t>::from_f32(m)
            }
        }
    )*};
}
narrow_sample!(f16 bf16);

/// Pillow's rounding of an integer result: half away from zero (its `x ± 0.5` truncated),
/// saturating.
fn round_up(x: f64) -> i64 {
    (if x >= 0.0 { x + 0.5 } else { x - 0.5 }) as i64
}

macro_rules! int_sample {
    ($($t:ty: $acc:ty;)*) => {$(
        impl Sample for $t {
            type Acc = $acc;
            type Mid = $t;
            #[inline(always)]
            fn load(self) -> $acc {
                self as $acc
            }
            #[inline(always)]
            fn store(v: $acc) -> Self {
                v as $t
            }
            #[inline(always)]
            fn store_rounded(v: $acc) -> Self {
                v.round() as $t
            }
            fn wide(self) -> f64 {
                self as f64
            }
            fn mid_wide(m: $t) -> f64 {
                m as f64
            }
            fn mid(v: f64) -> $t {
                round_up(v).clamp(<$t>::MIN as i64, <$t>::MAX as i64) as $t
            }
            fn from_mid(m: $t) -> Self {
                m
            }
        }
    )*};
}
int_sample! {
    i8: f32;
    u8: f32;
    i32: f64;
    i64: f64;
}

/// Row-major strides of `shape`.
fn strides(shape: &[usize]) -> Vec<usize> {
    let mut s = vec![1usize; shape.len()];
    for k in (0..shape.len().saturating_sub(1)).rev() {
        s[k] = s[k + 1].saturating_mul(shape[k + 1]);
    }
    s
}

/// Calls `part(first_row, rows)` over consecutive parts of `out`, whole rows of `width`
/// elements each: in parallel when the work (`cost` per element) is large and rayon has more
/// than one thread. Every element is computed the same way whatever the split.
fn rows_in_parts<O: Send>(
    out: &mut [O],
    width: usize,
    cost: usize,
    part: impl Fn(usize, &mut [O]) + Sync + Send,
) {
    let threads = rayon::current_num_threads();
    let rows = out.len() / width.max(1);
    let min = super::kernel::PARALLEL_MIN;
    if threads > 1 && rows > 1 && out.len().saturating_mul(cost) >= min {
        let row_cost = width.saturating_mul(cost).max(1);
        let per = rows
            .div_ceil(threads * 4)
            .max((min / 4).div_ceil(row_cost))
            .max(1);
        out.par_chunks_mut(per * width)
            .enumerate()
            .for_each(|(i, o)| part(i * per, o));
    } else {
        part(0, out);
    }
}

/// Advances `coords` (the output coordinates of all axes but the last) to the next row.
fn next_row(coords: &mut [usize], shape: &[usize]) {
    for k in (0..coords.len()).rev() {
        coords[k] += 1;
        if coords[k] < shape[k] {
            return;
        }
        coords[k] = 0;
    }
}

/// Nearest: `offsets[k][o]` is the input offset (index × stride) output position `o` of axis
/// `k` reads.
fn nearest_offsets(plan: &Plan, input: &[usize], output: &[usize]) -> Vec<Vec<usize>> {
    let st = strides(input);
    let a = &plan.attrs;
    (0..input.len())
        .map(|k| {
            let scale = plan
                .axes
                .iter()
                .position(|&x| x == k)
                .map_or(1.0, |i| plan.scales[i]);
            let (lin, lout) = (input[k], output[k]);
            let last = lin as i64 - 1;
            (0..lout)
                .map(|o| {
                    let c = a
                        .transform
                        .original(o as f32, scale, lout as f32, lin as f32);
                    let p = a.rounding.pixel(c, scale < 1.0);
                    // `lin ≥ 1` wherever there is an output position.
                    p.clamp(0, last.max(0)) as usize * st[k]
                })
                .collect()
        })
        .collect()
}

/// Nearest: copies the source element of every output element.
fn run_nearest<T: Copy + Send + Sync>(
    src: &[T],
    output: &[usize],
    offsets: &[Vec<usize>],
    out: &mut [MaybeUninit<T>],
) {
    let last = output.len() - 1;
    let w = output[last];
    let inner = &offsets[last];
    let identity = inner.iter().enumerate().all(|(i, &o)| o == i);
    rows_in_parts(out, w, 1, |first_row, part| {
        let mut coords = crate::tensor::unravel(first_row, &output[..last]);
        let mut prev: Option<usize> = None;
        for r in 0..part.len() / w {
            let base: usize = (0..last).map(|k| offsets[k][coords[k]]).sum();
            let (done, row) = part.split_at_mut(r * w);
            let row = &mut row[..w];
            if prev == Some(base) {
                row.copy_from_slice(&done[(r - 1) * w..]);
            } else if identity {
                for (o, &v) in row.iter_mut().zip(&src[base..base + w]) {
                    o.write(v);
                }
            } else {
                let s = &src[base..];
                for (o, &i) in row.iter_mut().zip(inner) {
                    o.write(s[i]);
                }
            }
            prev = Some(base);
            next_row(&mut coords, output);
        }
    });
}

/// One axis of a separable interpolation: for each output position along data axis `dim`,
/// its taps, as input offsets (index × stride) and weights.
struct AxisTaps {
    dim: usize,
    /// Output position `o`'s taps are `start[o]..start[o + 1]`.
    start: Vec<usize>,
    off: Vec<usize>,
    w: Vec<f32>,
    /// Every position has this many taps.
    fixed: Option<usize>,
}

impl AxisTaps {
    fn new(dim: usize, positions: usize, fixed: Option<usize>) -> AxisTaps {
        let n = positions * fixed.unwrap_or(2);
        let mut start = Vec::with_capacity(positions + 1);
        start.push(0);
        AxisTaps {
            dim,
            start,
            off: Vec::with_capacity(n),
            w: Vec::with_capacity(n),
            fixed,
        }
    }

    fn push(&mut self, off: usize, w: f32) {
        self.off.push(off);
        self.w.push(w);
    }

    /// Ends the taps of the current output position.
    fn close(&mut self) {
        self.start.push(self.off.len());
    }

    #[inline(always)]
    fn taps(&self, o: usize) -> (&[usize], &[f32]) {
        let (a, b) = (self.start[o], self.start[o + 1]);
        (&self.off[a..b], &self.w[a..b])
    }
}

/// A separable interpolation (`linear_onnx`, `cubic`, `linear`): each output element is
/// `Σ c·x` over the grid of its axes' taps (the first axis outermost), `c` the product `c0 ·
/// w_0 · w_1 ⋯` left to right; `linear` divides by `Σ c`.
struct Separable {
    grid: Vec<AxisTaps>,
    c0: f32,
    normalise: bool,
}

/// The `linear` mode's filter: per listed axis `a` and radius `r`, and `c0 = Π a`.
fn linear_filter(plan: &Plan) -> (Vec<f32>, Vec<i64>, f32) {
    let down = plan.scales.iter().any(|&s| s < 1.0);
    let anti = plan.attrs.antialias && down;
    let a: Vec<f32> = plan
        .scales
        .iter()
        .map(|&s| if anti { s } else { 1.0 })
        .collect();
    let r = plan
        .scales
        .iter()
        .zip(&a)
        .map(|(&s, &a)| {
            if s > 1.0 {
                2
            } else {
                (2.0f32 / a).ceil() as i64
            }
        })
        .collect();
    let c0 = a.iter().fold(1.0f32, |p, &a| p * a);
    (a, r, c0)
}

/// The axes `linear_onnx` interpolates, ascending: the listed ones but those the reference
/// leaves out. The reference views the data as 5-D (leading dims of 1) and interpolates its last
/// three axes, or its last two when its axes 1 and 2 keep their lengths; so an axis that keeps
/// its length is left out if it lies before the last three, or is the third from last and the
/// axis before it (if any) keeps its length too.
fn onnx_axes(plan: &Plan) -> Vec<usize> {
    let r = plan.input.len();
    let same = |a: usize| plan.input[a] == plan.output[a];
    let mut act = plan.axes.clone();
    act.sort_unstable();
    act.retain(|&a| {
        let left_out = a + 3 < r || (a + 3 == r && (a == 0 || same(a - 1)));
        !(same(a) && left_out)
    });
    act
}

/// How many taps each output position of each grid axis has (at most), for the budget.
fn tap_counts(plan: &Plan) -> Vec<(usize, usize)> {
    match plan.attrs.mode {
        Mode::LinearOnnx => onnx_axes(plan)
            .into_iter()
            .map(|a| (plan.output[a], 2))
            .collect(),
        Mode::Cubic => plan.axes.iter().map(|&a| (plan.output[a], 4)).collect(),
        Mode::Linear => {
            let (_, r, _) = linear_filter(plan);
            plan.axes
                .iter()
                .zip(r)
                .map(|(&a, r)| {
                    let taps = (r.max(0) as u64).saturating_mul(2).saturating_add(1);
                    (plan.output[a], taps.min(plan.input[a] as u64) as usize)
                })
                .collect()
        }
        _ => Vec::new(),
    }
}

/// The taps of `plan`'s separable mode (`input`, `output` as the kernel sees them). `sparse`
/// (for data without infinities and NaNs) leaves out `linear`'s taps of weight 0: their
/// products are ±0, and adding ±0 to a sum that started at +0 changes no bit (such a sum is
/// never −0), so the result is the same with fewer taps.
fn separable(plan: &Plan, input: &[usize], output: &[usize], sparse: bool) -> Separable {
    let st = strides(input);
    let a = &plan.attrs;
    let scale_of = |ax: usize| {
        plan.axes
            .iter()
            .position(|&x| x == ax)
            .map_or(1.0, |i| plan.scales[i])
    };
    let coord = |ax: usize, o: usize| {
        a.transform
            .original(o as f32, scale_of(ax), output[ax] as f32, input[ax] as f32)
    };
    match a.mode {
        Mode::LinearOnnx => {
            let grid = onnx_axes(plan)
                .into_iter()
                .map(|ax| {
                    let last = input[ax] as i64 - 1;
                    let mut t = AxisTaps::new(ax, output[ax], Some(2));
                    for o in 0..output[ax] {
                        let c = cmax(0.0, cmin(coord(ax, o), last as f32));
                        let i1 = (c as i64).min(last);
                        let i2 = (i1 + 1).min(last);
                        let (mut d1, mut d2) = ((c - i1 as f32).abs(), (c - i2 as f32).abs());
                        if i1 == i2 {
                            (d1, d2) = (0.5, 0.5);
                        }
                        t.push(i1.max(0) as usize * st[ax], d2);
                        t.push(i2.max(0) as usize * st[ax], d1);
                        t.close();
                    }
                    t
                })
                .collect();
            Separable {
                grid,
                c0: 1.0,
                normalise: false,
            }
        }
        Mode::Cubic => {
            let cube = a.cube_coeff as f32;
            let grid = plan
                .axes
                .iter()
                .map(|&ax| {
                    let last = input[ax] as i64 - 1;
                    let mut t = AxisTaps::new(ax, output[ax], Some(4));
                    for o in 0..output[ax] {
                        let c = coord(ax, o);
                        let base = c.floor() as i64;
                        let k = cubic_coeffs(c - base as f32, cube);
                        for (j, &w) in k.iter().enumerate() {
                            let i = base.saturating_add(j as i64 - 1).clamp(0, last.max(0));
                            t.push(i as usize * st[ax], w);
                        }
                        t.close();
                    }
                    t
                })
                .collect();
            Separable {
                grid,
                c0: 1.0,
                normalise: false,
            }
        }
        _ => {
            let (fa, r, c0) = linear_filter(plan);
            let grid = plan
                .axes
                .iter()
                .enumerate()
                .map(|(i, &ax)| {
                    let last = input[ax] as i64 - 1;
                    let mut t = AxisTaps::new(ax, output[ax], None);
                    for o in 0..output[ax] {
                        let c = coord(ax, o);
                        let centre = c.round() as i64;
                        let lo = centre.saturating_sub(r[i]).max(0);
                        let hi = centre.saturating_add(r[i]).min(last);
                        for j in lo..=hi {
                            let dz = c - j as f32;
                            let w = cmax(0.0, 1.0 - (fa[i] * dz).abs());
                            if !(sparse && w == 0.0) {
                                t.push(j as usize * st[ax], w);
                            }
                        }
                        t.close();
                    }
                    t
                })
                .collect();
            Separable {
                grid,
                c0,
                normalise: true,
            }
        }
    }
}

/// `(offset, c0 · Π w)` of every point of the grid of `axes` at output coordinates `coords`,
/// first axis outermost, from input offset `base`.
fn grid_points(
    axes: &[&AxisTaps],
    coords: &[usize],
    base: usize,
    c: f32,
    out: &mut Vec<(usize, f32)>,
) {
    match axes.split_first() {
        None => out.push((base, c)),
        Some((a, rest)) => {
            let (off, w) = a.taps(coords[a.dim]);
            for (&o, &w) in off.iter().zip(w) {
                grid_points(rest, coords, base + o, c * w, out);
            }
        }
    }
}

/// The result of a sum `s` (and weight sum `ws` when normalising).
#[inline(always)]
fn finish<T: Sample>(s: T::Acc, ws: T::Acc, normalise: bool) -> T {
    if !normalise {
        T::store(s)
    } else if ws == T::Acc::ZERO {
        T::default()
    } else {
        T::store_rounded(s / ws)
    }
}

/// The weighted sum over `points`, each combined with the taps `(toff, tw)` of the innermost
/// axis (the last of the grid), in the grid's order.
#[inline(always)]
fn point_sum<T: Sample>(
    src: &[T],
    points: &[(usize, f32)],
    toff: &[usize],
    tw: &[f32],
    normalise: bool,
) -> T {
    let (mut s, mut ws) = (T::Acc::ZERO, T::Acc::ZERO);
    for &(po, pc) in points {
        for (&o, &w) in toff.iter().zip(tw) {
            let c = T::Acc::of(pc * w);
            s = s + c * src[po + o].load();
            if normalise {
                ws = ws + c;
            }
        }
    }
    finish(s, ws, normalise)
}

/// Runs a separable interpolation into `out`.
fn run_separable<T: Sample>(
    src: &[T],
    input: &[usize],
    output: &[usize],
    sep: &Separable,
    out: &mut [MaybeUninit<T>],
) {
    let last = output.len() - 1;
    let w = output[last];
    let st = strides(input);
    let n = sep.grid.len();
    // How the innermost axis is computed: as the grid's last axis (a row of taps per element),
    // not at all (the identity), or within the grid (each element on its own).
    let pos = sep.grid.iter().position(|a| a.dim == last);
    let inner = pos.filter(|&p| p + 1 == n).map(|p| &sep.grid[p]);
    let within = pos.is_some() && inner.is_none();
    let outer: Vec<&AxisTaps> = sep
        .grid
        .iter()
        .filter(|a| inner.is_none_or(|i| a.dim != i.dim))
        .collect();
    let identity: Vec<usize> = (0..last)
        .filter(|&k| sep.grid.iter().all(|a| a.dim != k))
        .collect();
    let cost = sep
        .grid
        .iter()
        .map(|a| a.start.get(1).copied().unwrap_or(1).max(1))
        .fold(1usize, |p, t| p.saturating_mul(t));
    let norm = sep.normalise;
    rows_in_parts(out, w, cost, |first_row, part| {
        let mut coords = crate::tensor::unravel(first_row * w, output);
        let mut points = Vec::new();
        for row in part.chunks_mut(w) {
            let base: usize = identity.iter().map(|&k| coords[k] * st[k]).sum();
            if within {
                for (x, o) in row.iter_mut().enumerate() {
                    coords[last] = x;
                    points.clear();
                    grid_points(&outer, &coords, base, sep.c0, &mut points);
                    o.write(point_sum(src, &points, &[0], &[1.0], norm));
                }
                coords[last] = 0;
            } else {
                points.clear();
                grid_points(&outer, &coords, base, sep.c0, &mut points);
                match inner {
                    None => {
                        // The innermost axis is not interpolated: element x reads x.
                        for (x, o) in row.iter_mut().enumerate() {
                            let (mut s, mut ws) = (T::Acc::ZERO, T::Acc::ZERO);
                            for &(po, pc) in &points {
                                let c = T::Acc::of(pc);
                                s = s + c * src[po + x].load();
                                if norm {
                                    ws = ws + c;
                                }
                            }
                            o.write(finish(s, ws, norm));
                        }
                    }
                    Some(t) if !norm && t.fixed == Some(2) && points.len() == 2 => {
                        fixed_row::<T, 2, 2>(src, &points, t, row);
                    }
                    Some(t) if !norm && t.fixed == Some(4) && points.len() == 4 => {
                        fixed_row::<T, 4, 4>(src, &points, t, row);
                    }
                    Some(t) => {
                        for (x, o) in row.iter_mut().enumerate() {
                            let (toff, tw) = t.taps(x);
                            o.write(point_sum(src, &points, toff, tw, norm));
                        }
                    }
                }
            }
            let (head, _) = coords.split_at_mut(last);
            next_row(head, output);
        }
    });
}

/// A row whose elements each sum `P` grid points times `K` taps of the innermost axis, without
/// normalising (bilinear: 2 × 2; bicubic: 4 × 4): the general loop's arithmetic in the same
/// order, unrolled.
fn fixed_row<T: Sample, const P: usize, const K: usize>(
    src: &[T],
    points: &[(usize, f32)],
    t: &AxisTaps,
    row: &mut [MaybeUninit<T>],
) {
    let points: [(usize, f32); P] = std::array::from_fn(|i| points[i]);
    let rows: [&[T]; P] = points.map(|(p, _)| &src[p..]);
    let taps = t.off.chunks_exact(K).zip(t.w.chunks_exact(K));
    for (o, (off, w)) in row.iter_mut().zip(taps) {
        let mut s = T::Acc::ZERO;
        for (r, &(_, c)) in rows.iter().zip(&points) {
            for k in 0..K {
                s = s + T::Acc::of(c * w[k]) * r[off[k]].load();
            }
        }
        o.write(T::store(s));
    }
}

/// Pillow's coefficients of one axis: per output position the first input index, the count,
/// and `ksize` normalised coefficients.
struct PilAxis {
    ksize: usize,
    bounds: Vec<(usize, usize)>,
    k: Vec<f64>,
}

/// Pillow's (and the reference's) `precompute_coeffs` for an axis of `len_in` resized to
/// `len_out` (≥ 1) by the filter of `support` (1 bilinear, 2 bicubic of parameter `a`).
fn pil_axis(len_in: usize, len_out: usize, bicubic: bool, a: f64) -> PilAxis {
    let filter = |x: f64| {
        let x = x.abs();
        if bicubic {
            if x < 1.0 {
                ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0
            } else if x < 2.0 {
                (((x - 5.0) * x + 8.0) * x - 4.0) * a
            } else {
                0.0
            }
        } else if x < 1.0 {
            1.0 - x
        } else {
            0.0
        }
    };
    let scale = (len_in as f32) as f64 / len_out as f64;
    let filterscale = if scale < 1.0 { 1.0 } else { scale };
    let support = if bicubic { 2.0 } else { 1.0 } * filterscale;
    let ksize = (support.ceil() as usize)
        .saturating_mul(2)
        .saturating_add(1);
    let ss = 1.0 / filterscale;
    let mut bounds = Vec::with_capacity(len_out);
    let mut k = vec![0.0; len_out.saturating_mul(ksize)];
    for xx in 0..len_out {
        let center = (xx as f64 + 0.5) * scale;
        let xmin = ((center - support + 0.5) as i64).max(0);
        let xmax = ((center + support + 0.5) as i64).min(len_in as i64);
        let count = (xmax - xmin).clamp(0, ksize as i64) as usize;
        let kx = &mut k[xx * ksize..xx * ksize + count];
        let mut ww = 0.0;
        for (x, kv) in kx.iter_mut().enumerate() {
            let w = filter(((x as i64 + xmin) as f64 - center + 0.5) * ss);
            *kv = w;
            ww += w;
        }
        if ww != 0.0 {
            for kv in kx.iter_mut() {
                *kv /= ww;
            }
        }
        bounds.push((xmin as usize, count));
    }
    PilAxis { ksize, bounds, k }
}

/// What Pillow needs of the slices: the H and W axes, the others, the coefficient tables and
/// the rows the horizontal pass computes.
struct Pil {
    h: usize,
    w: usize,
    others: Vec<usize>,
    horiz: PilAxis,
    vert: PilAxis,
    need_h: bool,
    need_v: bool,
    /// The input rows the horizontal pass computes: `y_first..y_last`.
    y_first: usize,
    y_last: usize,
}

impl Pil {
    fn new(plan: &Plan) -> Pil {
        let (h, w) = (plan.axes[0], plan.axes[1]);
        let (i, o) = (&plan.input, &plan.output);
        let bicubic = plan.attrs.mode == Mode::BicubicPillow;
        let horiz = pil_axis(i[w], o[w], bicubic, plan.attrs.cube_coeff);
        let vert = pil_axis(i[h], o[h], bicubic, plan.attrs.cube_coeff);
        let y_first = vert.bounds.first().map_or(0, |b| b.0);
        let y_last = vert.bounds.last().map_or(0, |b| b.0 + b.1);
        Pil {
            h,
            w,
            others: (0..i.len()).filter(|&k| k != h && k != w).collect(),
            need_h: o[w] != i[w],
            need_v: o[h] != i[h],
            horiz,
            vert,
            y_first,
            y_last: y_last.max(y_first),
        }
    }

    /// The elements of the intermediate rows of one slice.
    fn temp_len(&self, plan: &Plan) -> usize {
        (self.y_last - self.y_first).saturating_mul(plan.output[self.w])
    }
}

/// Resizes slice `s` (its index among the slices of the other axes) into `dst`, `[H][W]`
/// row-major.
fn pil_slice<T: Sample>(src: &[T], plan: &Plan, p: &Pil, s: usize, dst: &mut [MaybeUninit<T>]) {
    let ist = strides(&plan.input);
    let other_dims: Vec<usize> = p.others.iter().map(|&k| plan.input[k]).collect();
    let coords = crate::tensor::unravel(s, &other_dims);
    let base: usize = p
        .others
        .iter()
        .zip(&coords)
        .map(|(&k, &c)| c * ist[k])
        .sum();
    let (sh, sw) = (ist[p.h], ist[p.w]);
    let (oh, ow) = (plan.output[p.h], plan.output[p.w]);
    let mut temp: Vec<T::Mid> = Vec::new();
    if p.need_h {
        temp.reserve_exact(p.temp_len(plan));
        for y in p.y_first..p.y_last {
            let row = base + y * sh;
            for xx in 0..ow {
                let (xmin, n) = p.horiz.bounds[xx];
                let k = &p.horiz.k[xx * p.horiz.ksize..][..n];
                let mut ss = 0.0;
                for (x, &kv) in k.iter().enumerate() {
                    ss += src[row + (x + xmin) * sw].wide() * kv;
                }
                temp.push(T::mid(ss));
            }
        }
    }
    if p.need_v {
        for yy in 0..oh {
            let (ymin, n) = p.vert.bounds[yy];
            let k = &p.vert.k[yy * p.vert.ksize..][..n];
            for xx in 0..ow {
                let mut ss = 0.0;
                for (y, &kv) in k.iter().enumerate() {
                    let v = if p.need_h {
                        T::mid_wide(temp[(ymin - p.y_first + y) * ow + xx])
                    } else {
                        src[base + (ymin + y) * sh + xx * sw].wide()
                    };
                    ss += v * kv;
                }
                dst[yy * ow + xx].write(T::from_mid(T::mid(ss)));
            }
        }
    } else if p.need_h {
        for (o, &m) in dst.iter_mut().zip(&temp) {
            o.write(T::from_mid(m));
        }
    } else {
        for yy in 0..oh {
            for xx in 0..ow {
                dst[yy * ow + xx].write(src[base + yy * sh + xx * sw]);
            }
        }
    }
}

/// Pillow: every slice resized, in parallel over the slices.
fn run_pillow<T: Sample>(src: &[T], plan: &Plan, p: &Pil, out: &mut [MaybeUninit<T>]) {
    let rank = plan.output.len();
    let (oh, ow) = (plan.output[p.h], plan.output[p.w]);
    let len = oh * ow;
    let parallel =
        rayon::current_num_threads() > 1 && out.len() >= super::kernel::PARALLEL_MIN / 16;
    let go = |chunks: &mut [MaybeUninit<T>]| {
        if parallel {
            chunks
                .par_chunks_mut(len)
                .enumerate()
                .for_each(|(s, d)| pil_slice(src, plan, p, s, d));
        } else {
            for (s, d) in chunks.chunks_mut(len).enumerate() {
                pil_slice(src, plan, p, s, d);
            }
        }
    };
    if p.h + 2 == rank && p.w + 1 == rank {
        go(out);
        return;
    }
    // The slices computed apart, `[slice][H][W]`, then put in place.
    let mut tmp: Vec<MaybeUninit<T>> = Vec::with_capacity(out.len());
    tmp.resize(out.len(), MaybeUninit::uninit());
    go(&mut tmp);
    let ost = strides(&plan.output);
    let other_dims: Vec<usize> = p.others.iter().map(|&k| plan.output[k]).collect();
    for (s, slice) in tmp.chunks(len).enumerate() {
        let coords = crate::tensor::unravel(s, &other_dims);
        let base: usize = p
            .others
            .iter()
            .zip(&coords)
            .map(|(&k, &c)| c * ost[k])
            .sum();
        for yy in 0..oh {
            for xx in 0..ow {
                out[base + yy * ost[p.h] + xx * ost[p.w]] = slice[yy * ow + xx];
            }
        }
    }
}

/// The data padded (`input` is the padded shape).
fn pad_copy<T: Copy + Default>(
    src: &[T],
    shape: &[usize],
    begin: &[u64],
    input: &[usize],
) -> Vec<T> {
    let total: usize = input.iter().product();
    let mut out = vec![T::default(); total];
    let r = shape.len();
    if src.is_empty() {
        return out;
    }
    let w = shape[r - 1];
    let pst = strides(input);
    let mut coords = vec![0usize; r - 1];
    for (row, chunk) in src.chunks(w).enumerate() {
        if row > 0 {
            next_row(&mut coords, shape);
        }
        let mut at = begin[r - 1] as usize;
        for (k, &c) in coords.iter().enumerate() {
            at += (c + begin[k] as usize) * pst[k];
        }
        out[at..at + w].copy_from_slice(chunk);
    }
    out
}

/// Bytes of the scratch space beyond the output: the padded copy, the tables, Pillow's rows.
fn scratch_bytes<T: Sample>(plan: &Plan, padded: bool) -> u64 {
    let size = std::mem::size_of::<T>() as u64;
    let mut b: u64 = 0;
    if padded {
        let n = plan
            .input
            .iter()
            .try_fold(1u64, |p, &d| p.checked_mul(d as u64))
            .unwrap_or(u64::MAX);
        b = n.saturating_mul(size);
    }
    let threads = rayon::current_num_threads() as u64;
    let tables: u64 = match plan.attrs.mode {
        Mode::Nearest => plan.output.iter().map(|&d| d as u64 * 8).sum(),
        Mode::BilinearPillow | Mode::BicubicPillow => {
            let (h, w) = (plan.axes[0], plan.axes[1]);
            let mut t = 0u64;
            for ax in [h, w] {
                let scale = (plan.input[ax] as f64 / plan.output[ax].max(1) as f64).max(1.0);
                let ksize = (2.0 * scale).ceil().min(u32::MAX as f64) as u64 * 2 + 1;
                t = t.saturating_add(
                    (plan.output[ax] as u64)
                        .saturating_mul(ksize.saturating_add(2))
                        .saturating_mul(8),
                );
            }
            // Each thread's intermediate rows; a full copy of the output when H, W are not
            // the innermost axes.
            let rows = (plan.input[h] as u64).saturating_mul(plan.output[w] as u64);
            t = t.saturating_add(
                rows.saturating_mul(threads)
                    .saturating_mul(std::mem::size_of::<T::Mid>() as u64),
            );
            let rank = plan.output.len();
            if !(h + 2 == rank && w + 1 == rank) {
                let n = plan
                    .output
                    .iter()
                    .fold(1u64, |p, &d| p.saturating_mul(d as u64));
                t = t.saturating_add(n.saturating_mul(size));
            }
            t
        }
        _ => tap_counts(plan)
            .into_iter()
            .map(|(n, taps)| {
                (n as u64)
                    .saturating_mul(taps as u64)
                    .saturating_mul(12)
                    .saturating_add(n as u64 * 8 + 8)
            })
            .fold(0, u64::saturating_add),
    };
    b.saturating_add(tables)
}

/// Interpolates `data` by `plan`.
fn run<T: Sample>(cx: &EvalCx<'_>, plan: &Plan, data: &Tensor) -> Result<Tensor, EvalError> {
    let ty = T::TYPE;
    let Some(total) = super::broadcast::elements(&plan.output) else {
        cx.reserve(ty, usize::MAX)?;
        return Err(EvalError::Invalid(format!(
            "the output shape {:?} has more elements than memory can address",
            plan.output
        )));
    };
    let padded = data.shape() != plan.input.as_slice();
    let out_bytes = ty.storage_bytes(total as u64).unwrap_or(u64::MAX);
    cx.reserve_bytes(
        "the output and Interpolate's scratch space",
        out_bytes.saturating_add(scratch_bytes::<T>(plan, padded && total > 0)),
    )?;
    if total == 0 {
        return super::kernel::tensor_from(&plan.output, Vec::<T>::new());
    }
    let src = super::kernel::contiguous::<T>(data)
        .ok_or(EvalError::Internal("Interpolate's data type"))?;
    let src: std::borrow::Cow<[T]> = if padded {
        let begin = pads(&plan.attrs, data.shape().len()).0;
        std::borrow::Cow::Owned(pad_copy(&src, data.shape(), &begin, &plan.input))
    } else {
        src
    };
    // A scalar is computed as one element of an axis that is not interpolated.
    let (input, output) = if plan.input.is_empty() {
        (vec![1], vec![1])
    } else {
        (plan.input.clone(), plan.output.clone())
    };
    let mut out: Vec<T> = Vec::with_capacity(total);
    let buf = &mut out.spare_capacity_mut()[..total];
    match plan.attrs.mode {
        Mode::Nearest => {
            let offsets = nearest_offsets(plan, &input, &output);
            run_nearest(&src, &output, &offsets, buf);
        }
        Mode::BilinearPillow | Mode::BicubicPillow => {
            let p = Pil::new(plan);
            run_pillow(&src, plan, &p, buf);
        }
        _ => {
            let finite = plan.attrs.mode == Mode::Linear
                && src.iter().fold(true, |a, v| a & v.wide().is_finite());
            let sep = separable(plan, &input, &output, finite);
            run_separable(&src, &input, &output, &sep, buf);
        }
    }
    // SAFETY: every kernel writes each of the `total` output elements.
    unsafe { out.set_len(total) };
    super::kernel::tensor_from(&plan.output, out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::context::{
        attrs_for_test, eval_for_test, inferred_shape_for_test, parsed_for_test, tensor_for_test,
        uniform_for_test,
    };

    const BUDGET: u64 = 1 << 30;

    fn op(version: u32, attrs: &[(&str, &str)]) -> Box<dyn Op> {
        let data = attrs_for_test(attrs);
        let a = Attrs::new(Some(&data));
        match version {
            1 => parse_1(&a),
            4 => parse_4(&a),
            _ => parse_11(&a),
        }
        .expect("valid attributes")
    }

    fn t<T: Element>(shape: &[usize], v: Vec<T>) -> Tensor {
        tensor_for_test(shape, v)
    }

    fn i64s(v: &[i64]) -> Tensor {
        t(&[v.len()], v.to_vec())
    }

    fn f32s(v: &[f32]) -> Tensor {
        t(&[v.len()], v.to_vec())
    }

    fn values<T: Element>(x: &Tensor) -> Vec<T> {
        x.view::<T>().expect("the type").iter().copied().collect()
    }

    /// Interpolate-11 in `sizes` mode with `mode` and more attributes.
    fn v11(mode: &str, more: &[(&str, &str)]) -> Box<dyn Op> {
        let mut a = vec![("mode", mode), ("shape_calculation_mode", "sizes")];
        a.extend_from_slice(more);
        op(11, &a)
    }

    fn run11(o: &dyn Op, data: Tensor, sizes: &[i64], axes: &[i64]) -> Tensor {
        eval_for_test(o, &[data, i64s(sizes), i64s(axes)], BUDGET).expect("runs")
    }

    const TRANSFORMS_ALL: [&str; 5] = [
        "half_pixel",
        "pytorch_half_pixel",
        "asymmetric",
        "tf_half_pixel_for_nn",
        "align_corners",
    ];

    #[test]
    fn parse_table() {
        let d4 = "V4(Attrs4 { mode: Nearest, shape_calc: Sizes, transform: HalfPixel, rounding: RoundPreferFloor, antialias: false, pads_begin: [], pads_end: [], cube_coeff: -0.75 })";
        let ok = |v: u32, a: &[(&str, &str)]| {
            let def = match v {
                1 => &INTERPOLATE_1,
                4 => &INTERPOLATE_4,
                _ => &INTERPOLATE_11,
            };
            parsed_for_test(def, a)
        };
        let base = [("mode", "nearest"), ("shape_calculation_mode", "sizes")];
        assert_eq!(ok(4, &base).unwrap(), d4);
        // Any case, as OpenVINO reads the enums.
        assert_eq!(
            ok(
                4,
                &[("mode", "NEAREST"), ("shape_calculation_mode", "Sizes")]
            )
            .unwrap(),
            d4
        );
        let full = ok(
            11,
            &[
                ("mode", "bicubic_pillow"),
                ("shape_calculation_mode", "scales"),
                ("coordinate_transformation_mode", "tf_half_pixel_for_nn"),
                ("nearest_mode", "simple"),
                ("antialias", "true"),
                ("pads_begin", "0,1"),
                ("pads_end", ""),
                ("cube_coeff", "-0.5"),
            ],
        )
        .unwrap();
        assert_eq!(
            full,
            "V11(Attrs4 { mode: BicubicPillow, shape_calc: Scales, transform: TfHalfPixelForNn, rounding: Simple, antialias: true, pads_begin: [0, 1], pads_end: [], cube_coeff: -0.5 })"
        );
        // Interpolate-1: axes a sorted set; align_corners true by default.
        assert_eq!(
            ok(1, &[("axes", "3,2,3"), ("mode", "linear")]).unwrap(),
            "V1(Attrs1 { axes: [2, 3], mode: Linear, align_corners: true, antialias: false, pads_begin: [], pads_end: [] })"
        );
        for (v, attrs, want) in [
            (4, &[("shape_calculation_mode", "sizes")][..], "mode None: "),
            (
                4,
                &[("mode", "nearest")][..],
                "shape_calculation_mode None: ",
            ),
            (
                4,
                &[
                    ("mode", "bilinear_pillow"),
                    ("shape_calculation_mode", "sizes"),
                ][..],
                "mode Some(\"bilinear_pillow\"): the Pillow modes belong to Interpolate-11",
            ),
            (
                11,
                &[("mode", "area"), ("shape_calculation_mode", "sizes")][..],
                "mode Some(\"area\"): expected one of nearest, linear, linear_onnx, cubic, bilinear_pillow, bicubic_pillow",
            ),
            (
                11,
                &[
                    ("mode", "linear"),
                    ("shape_calculation_mode", "sizes"),
                    ("pads_begin", "0,-1"),
                ][..],
                "pads_begin Some(\"0,-1\"): expected an unsigned integer (each must be ≥ 0)",
            ),
            (
                11,
                &[
                    ("mode", "cubic"),
                    ("shape_calculation_mode", "sizes"),
                    ("cube_coeff", "nan"),
                ][..],
                "cube_coeff Some(\"nan\"): expected a finite number",
            ),
            (
                11,
                &[
                    ("mode", "cubic"),
                    ("shape_calculation_mode", "sizes"),
                    ("nearest_mode", "up"),
                ][..],
                "nearest_mode Some(\"up\"): expected one of round_prefer_floor, round_prefer_ceil, floor, ceil, simple",
            ),
            (
                11,
                &[("mode", "cubic"), ("shape_calculation_mode", "size")][..],
                "shape_calculation_mode Some(\"size\"): expected one of sizes, scales",
            ),
            (
                1,
                &[("axes", "2,3"), ("mode", "area")][..],
                "mode Some(\"area\"): OpenVINO cannot run mode `area`",
            ),
            (1, &[("mode", "nearest")][..], "axes None: "),
            (
                1,
                &[("axes", "2"), ("mode", "nearest"), ("align_corners", "yes")][..],
                "align_corners Some(\"yes\"): expected true, false, 1 or 0",
            ),
        ] {
            let errors = ok(v, attrs).expect_err("an attribute error");
            assert!(
                errors.iter().any(|e| e.starts_with(want)),
                "{attrs:?}: {errors:?}"
            );
        }
    }

    /// Every `coordinate_transformation_mode` × `nearest_mode`, down (5 → 3) and up (5 → 8):
    /// the source index of each output position (OpenVINO 2026.4's evaluation).
    #[rustfmt::skip]
    const NEAREST: &[(&str, &str, &[usize], &[usize])] = &[
        ("half_pixel", "round_prefer_floor", &[0, 2, 4], &[0, 0, 1, 2, 2, 3, 4, 4]),
        ("half_pixel", "round_prefer_ceil", &[0, 2, 4], &[0, 0, 1, 2, 2, 3, 4, 4]),
        ("half_pixel", "floor", &[0, 2, 3], &[0, 0, 1, 1, 2, 2, 3, 4]),
        ("half_pixel", "ceil", &[1, 2, 4], &[0, 1, 2, 2, 3, 3, 4, 4]),
        ("half_pixel", "simple", &[1, 2, 4], &[0, 0, 1, 1, 2, 2, 3, 4]),
        ("pytorch_half_pixel", "round_prefer_floor", &[0, 2, 4], &[0, 0, 1, 2, 2, 3, 4, 4]),
        ("pytorch_half_pixel", "round_prefer_ceil", &[0, 2, 4], &[0, 0, 1, 2, 2, 3, 4, 4]),
        ("pytorch_half_pixel", "floor", &[0, 2, 3], &[0, 0, 1, 1, 2, 2, 3, 4]),
        ("pytorch_half_pixel", "ceil", &[1, 2, 4], &[0, 1, 2, 2, 3, 3, 4, 4]),
        ("pytorch_half_pixel", "simple", &[1, 2, 4], &[0, 0, 1, 1, 2, 2, 3, 4]),
        ("asymmetric", "round_prefer_floor", &[0, 2, 3], &[0, 1, 1, 2, 2, 3, 4, 4]),
        ("asymmetric", "round_prefer_ceil", &[0, 2, 3], &[0, 1, 1, 2, 3, 3, 4, 4]),
        ("asymmetric", "floor", &[0, 1, 3], &[0, 0, 1, 1, 2, 3, 3, 4]),
        ("asymmetric", "ceil", &[0, 2, 4], &[0, 1, 2, 2, 3, 4, 4, 4]),
        ("asymmetric", "simple", &[0, 2, 4], &[0, 0, 1, 1, 2, 3, 3, 4]),
        ("tf_half_pixel_for_nn", "round_prefer_floor", &[1, 2, 4], &[0, 1, 2, 2, 3, 3, 4, 4]),
        ("tf_half_pixel_for_nn", "round_prefer_ceil", &[1, 3, 4], &[0, 1, 2, 2, 3, 3, 4, 4]),
        ("tf_half_pixel_for_nn", "floor", &[0, 2, 4], &[0, 0, 1, 2, 2, 3, 4, 4]),
        ("tf_half_pixel_for_nn", "ceil", &[1, 3, 4], &[1, 1, 2, 3, 3, 4, 4, 4]),
        ("tf_half_pixel_for_nn", "simple", &[1, 3, 4], &[0, 0, 1, 2, 2, 3, 4, 4]),
        ("align_corners", "round_prefer_floor", &[0, 2, 4], &[0, 1, 1, 2, 2, 3, 3, 4]),
        ("align_corners", "round_prefer_ceil", &[0, 2, 4], &[0, 1, 1, 2, 2, 3, 3, 4]),
        ("align_corners", "floor", &[0, 2, 4], &[0, 0, 1, 1, 2, 2, 3, 4]),
        ("align_corners", "ceil", &[0, 2, 4], &[0, 1, 2, 2, 3, 3, 4, 4]),
        ("align_corners", "simple", &[0, 2, 4], &[0, 0, 1, 1, 2, 2, 3, 4]),
    ];

    #[test]
    fn nearest_table() {
        let data = f32s(&[10.0, 20.0, 30.0, 40.0, 50.0]);
        for &(tr, rounding, down, up) in NEAREST {
            let o = v11(
                "nearest",
                &[
                    ("coordinate_transformation_mode", tr),
                    ("nearest_mode", rounding),
                ],
            );
            for (size, want) in [(3, down), (8, up)] {
                let got = values::<f32>(&run11(o.as_ref(), data.clone(), &[size], &[0]));
                let want: Vec<f32> = want.iter().map(|&i| (i as f32 + 1.0) * 10.0).collect();
                assert_eq!(got, want, "{tr} {rounding} to {size}");
            }
        }
    }

    /// `round_prefer_floor` sends exactly `k + 0.5` down and `round_prefer_ceil` up (5 → 2,
    /// asymmetric: output 1 reads coordinate `1 / 0.4 = 2.5`).
    #[test]
    fn nearest_halves() {
        let data = f32s(&[0.0, 1.0, 2.0, 3.0, 4.0]);
        for (rounding, want) in [
            ("round_prefer_floor", [0.0, 2.0]),
            ("round_prefer_ceil", [0.0, 3.0]),
        ] {
            let o = v11(
                "nearest",
                &[
                    ("coordinate_transformation_mode", "asymmetric"),
                    ("nearest_mode", rounding),
                ],
            );
            assert_eq!(
                values::<f32>(&run11(o.as_ref(), data.clone(), &[2], &[0])),
                want,
                "{rounding}"
            );
        }
    }

    /// `linear_onnx` on `[[1, 2, 4], [8, 16, 32]]` resized to 3 × 5 in each coordinate mode
    /// (OpenVINO 2026.4's evaluation; the f32 bits).
    const ONNX: &[(&str, [f64; 15])] = &[
        (
            "half_pixel",
            [
                1.0,
                1.4000000953674316,
                2.0,
                3.200000286102295,
                4.0,
                4.5,
                6.300000190734863,
                9.0,
                14.400001525878906,
                18.0,
                8.0,
                11.200000762939453,
                16.0,
                25.60000228881836,
                32.0,
            ],
        ),
        (
            "pytorch_half_pixel",
            [
                1.0,
                1.4000000953674316,
                2.0,
                3.200000286102295,
                4.0,
                4.5,
                6.300000190734863,
                9.0,
                14.400001525878906,
                18.0,
                8.0,
                11.200000762939453,
                16.0,
                25.60000228881836,
                32.0,
            ],
        ),
        (
            "asymmetric",
            [
                1.0,
                1.600000023841858,
                2.4000000953674316,
                3.6000001430511475,
                4.0,
                5.6666669845581055,
                9.066667556762695,
                13.600000381469727,
                20.400001525878906,
                22.666667938232422,
                8.0,
                12.800000190734863,
                19.200000762939453,
                28.80000114440918,
                32.0,
            ],
        ),
        (
            "tf_half_pixel_for_nn",
            [
                4.333333492279053,
                6.3333330154418945,
                10.0,
                13.333333969116211,
                13.333333969116211,
                10.399999618530273,
                15.200000762939453,
                24.0,
                32.0,
                32.0,
                10.399999618530273,
                15.200000762939453,
                24.0,
                32.0,
                32.0,
            ],
        ),
        (
            "align_corners",
            [
                1.0, 1.5, 2.0, 3.0, 4.0, 4.5, 6.75, 9.0, 13.5, 18.0, 8.0, 12.0, 16.0, 24.0, 32.0,
            ],
        ),
    ];

    fn as_f32(v: &[f64]) -> Vec<f32> {
        v.iter().map(|&x| x as f32).collect()
    }

    #[test]
    fn linear_onnx_table() {
        let data = t(&[2, 3], vec![1.0f32, 2.0, 4.0, 8.0, 16.0, 32.0]);
        for (tr, want) in ONNX {
            let o = v11("linear_onnx", &[("coordinate_transformation_mode", tr)]);
            let got = run11(o.as_ref(), data.clone(), &[3, 5], &[0, 1]);
            assert_eq!(got.shape(), &[3, 5]);
            assert_eq!(values::<f32>(&got), as_f32(want), "{tr}");
        }
    }

    /// `cubic` on `[1, 2, 4, 8, 16]` resized to 7 and to 3, `cube_coeff` −0.75 and −0.5.
    const CUBIC: &[(&str, f64, [f64; 7], [f64; 3])] = &[
        (
            "half_pixel",
            -0.75,
            [
                0.9212822914123535,
                1.370262861251831,
                2.4621033668518066,
                4.0,
                6.157434940338135,
                11.778426170349121,
                16.629737854003906,
            ],
            [1.2037055492401123, 4.0, 13.703699111938477],
        ),
        (
            "half_pixel",
            -0.5,
            [
                0.9475219249725342,
                1.448979377746582,
                2.4402313232421875,
                4.0,
                6.507290363311768,
                11.568510055541992,
                16.419824600219727,
            ],
            [1.2222228050231934, 4.0, 13.777776718139648],
        ),
        (
            "pytorch_half_pixel",
            -0.75,
            [
                0.9212822914123535,
                1.370262861251831,
                2.4621033668518066,
                4.0,
                6.157434940338135,
                11.778426170349121,
                16.629737854003906,
            ],
            [1.2037055492401123, 4.0, 13.703699111938477],
        ),
        (
            "pytorch_half_pixel",
            -0.5,
            [
                0.9475219249725342,
                1.448979377746582,
                2.4402313232421875,
                4.0,
                6.507290363311768,
                11.568510055541992,
                16.419824600219727,
            ],
            [1.2222228050231934, 4.0, 13.777776718139648],
        ),
        (
            "asymmetric",
            -0.75,
            [
                1.0,
                1.5174922943115234,
                2.629737615585327,
                4.536443710327148,
                6.912532806396484,
                12.956270217895508,
                16.8746395111084,
            ],
            [1.0, 2.981480598449707, 10.962968826293945],
        ),
        (
            "asymmetric",
            -0.5,
            [
                1.0,
                1.612244963645935,
                2.6822142601013184,
                4.431486129760742,
                7.201167106628418,
                12.921281814575195,
                16.583091735839844,
            ],
            [1.0, 3.1481471061706543, 10.666668891906738],
        ),
        (
            "tf_half_pixel_for_nn",
            -0.75,
            [
                1.217747688293457,
                2.1464109420776367,
                3.249728202819824,
                5.4375,
                9.918732643127441,
                15.55648422241211,
                16.491985321044922,
            ],
            [1.6828711032867432, 5.4375, 16.69445037841797],
        ),
        (
            "tf_half_pixel_for_nn",
            -0.5,
            [
                1.242347240447998,
                2.107325792312622,
                3.4210996627807617,
                5.625,
                9.594022750854492,
                15.66545295715332,
                16.327987670898438,
            ],
            [1.7638885974884033, 5.625, 16.462963104248047],
        ),
        (
            "align_corners",
            -0.75,
            [
                1.0,
                1.4629632234573364,
                2.5185165405273438,
                4.0,
                5.962963104248047,
                10.962968826293945,
                16.0,
            ],
            [1.0, 4.0, 16.0],
        ),
        (
            "align_corners",
            -0.5,
            [
                1.0,
                1.555555820465088,
                2.518521785736084,
                4.0,
                6.296298027038574,
                10.666668891906738,
                16.0,
            ],
            [1.0, 4.0, 16.0],
        ),
    ];

    const RAMP: [f32; 5] = [1.0, 2.0, 4.0, 8.0, 16.0];

    #[test]
    fn cubic_table() {
        for (tr, a, up, down) in CUBIC {
            let coeff = a.to_string();
            let o = v11(
                "cubic",
                &[
                    ("coordinate_transformation_mode", tr),
                    ("cube_coeff", &coeff),
                ],
            );
            let got = run11(o.as_ref(), f32s(&RAMP), &[7], &[0]);
            assert_eq!(values::<f32>(&got), as_f32(up), "{tr} {a} up");
            let got = run11(o.as_ref(), f32s(&RAMP), &[3], &[0]);
            assert_eq!(values::<f32>(&got), as_f32(down), "{tr} {a} down");
        }
    }

    /// `linear` (the triangle filter) on the same ramp: to 3 without and with `antialias`
    /// (which widens the filter when downsampling), and to 8.
    /// Coordinate mode; to 3; to 3 with antialias; to 8.
    type LinearRow = (&'static str, [f64; 3], [f64; 3], [f64; 8]);

    const LINEAR: &[LinearRow] = &[
        (
            "half_pixel",
            [1.3333332538604736, 4.0, 13.333332061767578],
            [1.4285714626312256, 4.44444465637207, 12.571428298950195],
            [1.0, 1.4375, 2.125, 3.375, 5.25, 7.75, 12.5, 16.0],
        ),
        (
            "pytorch_half_pixel",
            [1.3333332538604736, 4.0, 13.333332061767578],
            [1.4285714626312256, 4.44444465637207, 12.571428298950195],
            [1.0, 1.4375, 2.125, 3.375, 5.25, 7.75, 12.5, 16.0],
        ),
        (
            "asymmetric",
            [1.0, 3.3333332538604736, 10.666666030883789],
            [1.2857142686843872, 3.749999523162842, 10.5],
            [1.0, 1.625, 2.5, 3.75, 6.0, 9.0, 14.0, 16.0],
        ),
        (
            "tf_half_pixel_for_nn",
            [1.8333332538604736, 6.0, 16.0],
            [2.058823585510254, 6.375, 14.0],
            [1.3125, 1.9375, 3.125, 4.75, 7.25, 11.5, 16.0, 16.0],
        ),
        (
            "align_corners",
            [1.0, 4.0, 16.0],
            [1.2857142686843872, 4.44444465637207, 13.714285850524902],
            [
                1.0,
                1.5714285373687744,
                2.2857143878936768,
                3.4285714626312256,
                5.142857551574707,
                7.428571701049805,
                11.428571701049805,
                16.0,
            ],
        ),
    ];

    #[test]
    fn linear_table() {
        for (tr, plain, anti, up) in LINEAR {
            for (antialias, size, want) in [
                ("false", 3, &plain[..]),
                ("true", 3, &anti[..]),
                ("false", 8, &up[..]),
                // Upsampling: antialias changes nothing.
                ("true", 8, &up[..]),
            ] {
                let o = v11(
                    "linear",
                    &[
                        ("coordinate_transformation_mode", tr),
                        ("antialias", antialias),
                    ],
                );
                let got = run11(o.as_ref(), f32s(&RAMP), &[size], &[0]);
                assert_eq!(
                    values::<f32>(&got),
                    as_f32(want),
                    "{tr} antialias {antialias} to {size}"
                );
            }
        }
    }

    /// Pillow on `[[1,2,4,8],[3,5,7,9],[0,10,0,10]]` to 5 × 2 and 2 × 6 (the coordinate mode
    /// takes no part).
    const PILLOW: &[(&str, [f64; 10], [f64; 12])] = &[
        (
            "bilinear_pillow",
            [
                1.8571428060531616,
                5.4285712242126465,
                2.885714054107666,
                6.285714149475098,
                4.4285712242126465,
                7.5714287757873535,
                4.3428568840026855,
                6.4571428298950195,
                4.285714149475098,
                5.714285850524902,
            ],
            [
                1.75,
                2.4375,
                3.4583332538604736,
                4.791666507720947,
                6.75,
                8.375,
                1.125,
                4.625,
                7.2083330154418945,
                3.5416665077209473,
                6.125,
                9.625,
            ],
        ),
        (
            "bicubic_pillow",
            [
                1.1748167276382446,
                5.479631423950195,
                2.418109655380249,
                6.600677490234375,
                4.1346940994262695,
                7.8653059005737305,
                4.2459588050842285,
                6.765519618988037,
                4.029879093170166,
                5.7371110916137695,
            ],
            [
                1.7904434204101562,
                2.0437350273132324,
                3.1661131381988525,
                4.847703456878662,
                7.232630252838135,
                8.57572078704834,
                0.4322436451911926,
                4.986386775970459,
                8.106118202209473,
                2.9708468914031982,
                5.974392890930176,
                10.428247451782227,
            ],
        ),
    ];

    #[test]
    fn pillow_table() {
        let data = t(
            &[3, 4],
            vec![
                1.0f32, 2.0, 4.0, 8.0, 3.0, 5.0, 7.0, 9.0, 0.0, 10.0, 0.0, 10.0,
            ],
        );
        for (mode, a, b) in PILLOW {
            for tr in TRANSFORMS_ALL {
                let o = v11(mode, &[("coordinate_transformation_mode", tr)]);
                let got = run11(o.as_ref(), data.clone(), &[5, 2], &[0, 1]);
                assert_eq!(values::<f32>(&got), as_f32(a), "{mode} {tr}");
                let got = run11(o.as_ref(), data.clone(), &[2, 6], &[0, 1]);
                assert_eq!(values::<f32>(&got), as_f32(b), "{mode} {tr}");
            }
            // The axes name height then width: [W, H] resizes the transposed image.
            let o = v11(mode, &[]);
            let tr = t(
                &[4, 3],
                vec![
                    1.0f32, 3.0, 0.0, 2.0, 5.0, 10.0, 4.0, 7.0, 0.0, 8.0, 9.0, 10.0,
                ],
            );
            let got = run11(o.as_ref(), tr, &[5, 2], &[1, 0]);
            assert_eq!(got.shape(), &[2, 5]);
            let g = values::<f32>(&got);
            let transposed: Vec<f32> = (0..10).map(|k| g[(k % 2) * 5 + k / 2]).collect();
            assert_eq!(transposed, as_f32(a), "{mode} on [W, H]");
        }
    }

    /// Integer results, as OpenVINO's reference: `linear` rounds half away from zero,
    /// `linear_onnx` and `cubic` truncate toward zero, Pillow rounds and clamps; values beyond
    /// the type saturate (OpenVINO's cast there is undefined; on x86 it wraps: its `cubic`
    /// gives 234 for −22.1 in u8).
    #[test]
    fn integer_results() {
        let u = t(&[6], vec![0u8, 255, 0, 255, 1, 2]);
        // The f32 results: 63.75, 63.75, 191.5, 1.75.
        let got = run11(v11("linear", &[]).as_ref(), u.clone(), &[4], &[0]);
        assert_eq!(values::<u8>(&got), [64, 64, 192, 2]);
        let u2 = t(&[1, 6], vec![0u8, 255, 0, 255, 1, 2]);
        let got = run11(
            v11("linear_onnx", &[]).as_ref(),
            u2.clone(),
            &[1, 4],
            &[0, 1],
        );
        assert_eq!(values::<u8>(&got), [63, 63, 191, 1]);
        // f32: −22.14, 151.4, 236.1, 18.9, 127.4, 240.7, 41.8, −22.3, 2.09.
        let got = run11(v11("cubic", &[]).as_ref(), u.clone(), &[9], &[0]);
        assert_eq!(values::<u8>(&got), [0, 151, 236, 18, 127, 240, 41, 0, 2]);
        // f32: −25.8, 138.4, 236.1, 18.9, 127.4, 240.7, 41.8, −20.2, 2.10.
        let got = run11(v11("bicubic_pillow", &[]).as_ref(), u2, &[1, 9], &[0, 1]);
        assert_eq!(values::<u8>(&got), [0, 138, 236, 19, 127, 241, 42, 0, 2]);
        // f32: −5, −2.5, −0.83, −4.17, 1, 7 (linear: 7.0000005).
        let i = t(&[1, 4], vec![-5i8, 0, -5, 7]);
        let got = run11(
            v11("linear_onnx", &[]).as_ref(),
            i.clone(),
            &[1, 6],
            &[0, 1],
        );
        assert_eq!(values::<i8>(&got), [-5, -2, 0, -4, 1, 7]);
        let got = run11(v11("linear", &[]).as_ref(), i, &[1, 6], &[0, 1]);
        assert_eq!(values::<i8>(&got), [-5, -3, -1, -4, 1, 7]);
        // i32 and i64: the same rules, summed in f64.
        let w = t(&[1, 4], vec![-5i64, 0, -5, 7]);
        let got = run11(v11("linear_onnx", &[]).as_ref(), w, &[1, 6], &[0, 1]);
        assert_eq!(values::<i64>(&got), [-5, -2, 0, -4, 1, 7]);
        let big = t(&[2], vec![i32::MAX - 1, i32::MAX]);
        let got = run11(v11("linear", &[]).as_ref(), big, &[4], &[0]);
        assert_eq!(
            values::<i32>(&got),
            [i32::MAX - 1, i32::MAX - 1, i32::MAX, i32::MAX]
        );
    }

    /// f16 and bf16 are computed in f32 and rounded once (to nearest even).
    #[test]
    fn narrow_floats_round_once() {
        let h = t(&[1, 3], [0.1f32, 0.2, 0.7].map(f16::from_f32).to_vec());
        let got = run11(v11("linear_onnx", &[]).as_ref(), h, &[1, 5], &[0, 1]);
        // OpenVINO 2026.4's bits.
        let bits: Vec<u16> = values::<f16>(&got).iter().map(|v| v.to_bits()).collect();
        assert_eq!(bits, [11878, 12411, 12902, 14336, 14746]);
        let wide = t(
            &[1, 3],
            [0.1f32, 0.2, 0.7]
                .map(|v| bf16::from_f32(v).to_f32())
                .to_vec(),
        );
        let narrow = t(&[1, 3], [0.1f32, 0.2, 0.7].map(bf16::from_f32).to_vec());
        for mode in ["linear_onnx", "cubic", "linear", "bilinear_pillow"] {
            let o = v11(mode, &[]);
            let w = values::<f32>(&run11(o.as_ref(), wide.clone(), &[1, 7], &[0, 1]));
            let n = values::<bf16>(&run11(o.as_ref(), narrow.clone(), &[1, 7], &[0, 1]));
            let want: Vec<bf16> = w.iter().map(|&v| bf16::from_f32(v)).collect();
            assert_eq!(n, want, "{mode}");
        }
    }

    /// The reference's `linear_onnx` leaves out an unchanged leading spatial axis: here the
    /// first axis of 3-D data (an axis of 0.5 + 0.5 weights at its end would otherwise sum
    /// eight terms of an eighth each and round).
    #[test]
    fn linear_onnx_leaves_out_unchanged_leading_axes() {
        let v = 3.600_576_9f32;
        let data = t(&[2, 2, 1], vec![1.0f32, 2.0, -1.450_223_1, v]);
        let got = run11(
            v11(
                "linear_onnx",
                &[("coordinate_transformation_mode", "tf_half_pixel_for_nn")],
            )
            .as_ref(),
            data.clone(),
            &[2, 1, 1],
            &[0, 1, 2],
        );
        assert_eq!(values::<f32>(&got), [2.0, v]);
        // Eight terms would give 3.6005766.
        let eighth = 0.125f32 * v;
        let eight = (0..8).fold(0.0f32, |s, _| s + eighth);
        assert_ne!(eight, v);
        // 5-D: axes 0 and 1 unchanged are left out, the same result.
        let d5 = t(&[1, 1, 2, 2, 1], values::<f32>(&data));
        let got = run11(
            v11(
                "linear_onnx",
                &[("coordinate_transformation_mode", "tf_half_pixel_for_nn")],
            )
            .as_ref(),
            d5,
            &[1, 1, 2, 1, 1],
            &[0, 1, 2, 3, 4],
        );
        assert_eq!(values::<f32>(&got), [2.0, v]);
        // ovir takes any axes: the middle axis alone of 3-D data.
        let m = t(&[2, 2, 2], (0..8).map(|v| v as f32).collect());
        let got = run11(
            v11(
                "linear_onnx",
                &[("coordinate_transformation_mode", "align_corners")],
            )
            .as_ref(),
            m,
            &[3],
            &[1],
        );
        assert_eq!(
            values::<f32>(&got),
            [0.0, 1.0, 1.0, 2.0, 2.0, 3.0, 4.0, 5.0, 5.0, 6.0, 6.0, 7.0]
        );
    }

    #[test]
    fn scales_mode_and_pads() {
        // Scales: the shape by OpenVINO's rule, the coordinates by the scale given.
        let o = op(
            4,
            &[
                ("mode", "nearest"),
                ("shape_calculation_mode", "scales"),
                ("coordinate_transformation_mode", "asymmetric"),
                ("nearest_mode", "floor"),
            ],
        );
        let data = t(&[1, 1, 3, 5], (0..15).map(|v| v as f32).collect());
        let got = eval_for_test(
            o.as_ref(),
            &[
                data.clone(),
                i64s(&[9, 9]),
                f32s(&[1.0 / 3.0, 0.6]),
                i64s(&[2, 3]),
            ],
            BUDGET,
        )
        .unwrap();
        assert_eq!(got.shape(), &[1, 1, 1, 3]);
        // x / 0.6 = 0, 1.67, 3.33: columns 0, 1, 3.
        assert_eq!(values::<f32>(&got), [0.0, 1.0, 3.0]);
        // Pads: zeros added before interpolating (every axis, interpolated or not).
        let o = op(
            4,
            &[
                ("mode", "nearest"),
                ("shape_calculation_mode", "sizes"),
                ("pads_begin", "1,0"),
                ("pads_end", "0,1,7"),
            ],
        );
        let data = t(&[2, 2], vec![1.0f32, 2.0, 3.0, 4.0]);
        let got = eval_for_test(
            o.as_ref(),
            &[data, i64s(&[3]), f32s(&[1.0]), i64s(&[1])],
            BUDGET,
        )
        .unwrap();
        assert_eq!(got.shape(), &[3, 3]);
        assert_eq!(
            values::<f32>(&got),
            [0.0, 0.0, 0.0, 1.0, 2.0, 0.0, 3.0, 4.0, 0.0]
        );
        // More sizes than axes: the first ones are read.
        let got = run11(
            v11("nearest", &[]).as_ref(),
            f32s(&[1.0, 2.0]),
            &[4, 99],
            &[0],
        );
        assert_eq!(values::<f32>(&got), [1.0, 1.0, 2.0, 2.0]);
        // No axes input: every axis, in order.
        let o = v11(
            "nearest",
            &[
                ("coordinate_transformation_mode", "asymmetric"),
                ("nearest_mode", "floor"),
            ],
        );
        let got = eval_for_test(
            o.as_ref(),
            &[t(&[1, 2], vec![1.0f32, 2.0]), i64s(&[2, 4])],
            BUDGET,
        )
        .unwrap();
        assert_eq!(
            values::<f32>(&got),
            [1.0, 1.0, 2.0, 2.0, 1.0, 1.0, 2.0, 2.0]
        );
    }

    #[test]
    fn scalars_and_empty_outputs() {
        // A scalar has no axes: nearest copies it, cubic sums one term.
        let o = op(4, &[("mode", "cubic"), ("shape_calculation_mode", "sizes")]);
        let s = t(&[], vec![2.5f32]);
        let got = eval_for_test(
            o.as_ref(),
            &[s, t(&[0], Vec::<i64>::new()), t(&[0], Vec::<f32>::new())],
            BUDGET,
        )
        .unwrap();
        assert_eq!((got.shape(), values::<f32>(&got)), (&[][..], vec![2.5]));
        let got = run11(v11("linear", &[]).as_ref(), f32s(&[1.0, 2.0]), &[0], &[0]);
        assert_eq!(got.shape(), &[0]);
        // Empty data resized to zero positions is fine; to some positions, an error.
        let got = run11(
            v11("nearest", &[]).as_ref(),
            t(&[0, 2], Vec::<f32>::new()),
            &[0],
            &[0],
        );
        assert_eq!(got.shape(), &[0, 2]);
        let e = eval_for_test(
            v11("nearest", &[]).as_ref(),
            &[t(&[0, 2], Vec::<f32>::new()), i64s(&[3]), i64s(&[0])],
            BUDGET,
        )
        .unwrap_err();
        assert!(e.to_string().contains("axis 0 of the data is empty"), "{e}");
    }

    #[test]
    fn interpolate_1_maps_onto_interpolate_4() {
        let x = t(&[1, 1, 2, 3], (0..6).map(|v| v as f32).collect());
        let v1 = |attrs: &[(&str, &str)], data: Tensor, target: &[i64]| {
            eval_for_test(op(1, attrs).as_ref(), &[data, i64s(target)], BUDGET).unwrap()
        };
        // 4-D linear on axes {2, 3} without align_corners: asymmetric (OpenVINO's CPU plugin
        // gives these values).
        let got = v1(
            &[
                ("axes", "2,3"),
                ("mode", "linear"),
                ("align_corners", "false"),
            ],
            x.clone(),
            &[4, 5],
        );
        assert_eq!(
            values::<f32>(&got),
            [
                0.0, 0.6, 1.2, 1.8000001, 2.0, 1.5, 2.1, 2.6999998, 3.3000002, 3.5, 3.0, 3.6, 4.2,
                4.8, 5.0, 3.0, 3.6, 4.2, 4.8, 5.0
            ]
        );
        let got = v1(&[("axes", "3,2"), ("mode", "linear")], x.clone(), &[4, 5]);
        assert_eq!(
            values::<f32>(&got),
            [
                0.0, 0.5, 1.0, 1.5, 2.0, 1.0, 1.5, 2.0, 2.5, 3.0, 2.0, 2.5, 3.0, 3.5, 4.0, 3.0,
                3.5, 4.0, 4.5, 5.0
            ]
        );
        let got = v1(
            &[("axes", "2,3"), ("mode", "nearest"), ("align_corners", "0")],
            x.clone(),
            &[4, 5],
        );
        assert_eq!(
            values::<f32>(&got),
            [
                0.0, 0.0, 1.0, 1.0, 2.0, 0.0, 0.0, 1.0, 1.0, 2.0, 3.0, 3.0, 4.0, 4.0, 5.0, 3.0,
                3.0, 4.0, 4.0, 5.0
            ]
        );
        // 3-D linear: half_pixel.
        let x3 = t(&[1, 2, 3], (0..6).map(|v| v as f32).collect());
        let got = v1(
            &[
                ("axes", "1,2"),
                ("mode", "linear"),
                ("align_corners", "false"),
            ],
            x3.clone(),
            &[4, 5],
        );
        let via4 = run11(
            v11("linear_onnx", &[]).as_ref(),
            x3.clone(),
            &[4, 5],
            &[1, 2],
        );
        assert_eq!(values::<f32>(&got), values::<f32>(&via4));
        assert_eq!(
            values::<f32>(&got)[..5],
            [0.0, 0.40000004, 1.0, 1.6000001, 2.0]
        );
        // Cubic: asymmetric, −0.75.
        let got = v1(
            &[
                ("axes", "1,2"),
                ("mode", "cubic"),
                ("align_corners", "false"),
            ],
            x3.clone(),
            &[4, 5],
        );
        let via4 = run11(
            v11("cubic", &[("coordinate_transformation_mode", "asymmetric")]).as_ref(),
            x3,
            &[4, 5],
            &[1, 2],
        );
        assert_eq!(values::<f32>(&got), values::<f32>(&via4));
        // OpenVINO's CPU plugin (its own kernel) gives these to within 3e-6.
        let cpu = [3.28125f32, 3.78525, 4.5532503, 5.12925, 5.3892503];
        for (g, c) in values::<f32>(&got)[15..].iter().zip(cpu) {
            assert!((g - c).abs() < 3e-6, "{g} vs {c}");
        }
        // 5-D linear runs as `linear` (with antialias).
        let x5 = t(&[1, 1, 1, 1, 5], RAMP.to_vec());
        let got = v1(
            &[
                ("axes", "4"),
                ("mode", "linear"),
                ("align_corners", "false"),
                ("antialias", "true"),
            ],
            x5,
            &[3],
        );
        assert_eq!(values::<f32>(&got), as_f32(&LINEAR[0].2));
    }

    fn ty(e: ElementType, shape: &str) -> TensorType {
        TensorType::new(e, PartialShape::parse(shape).unwrap())
    }

    fn known(v: Tensor) -> TensorType {
        TensorType::of_value(v)
    }

    fn shape4(
        o: &dyn Op,
        data: TensorType,
        sizes: TensorType,
        scales: TensorType,
        axes: Option<TensorType>,
    ) -> Result<String, String> {
        let mut inputs = vec![data, sizes, scales];
        inputs.extend(axes);
        let refs: Vec<&TensorType> = inputs.iter().collect();
        inferred_shape_for_test(o, &refs)
    }

    #[test]
    fn shape_inference() {
        let sizes = || {
            op(
                4,
                &[("mode", "linear"), ("shape_calculation_mode", "sizes")],
            )
        };
        let scales = || {
            op(
                4,
                &[("mode", "linear"), ("shape_calculation_mode", "scales")],
            )
        };
        let any_scales = || ty(E::F32, "[2]");
        let any_sizes = || ty(E::I64, "[2]");
        let axes23 = || Some(known(i64s(&[2, 3])));
        let data = || ty(E::F32, "[1,3,?,2..10]");
        for (o, d, sz, sc, ax, want) in [
            (
                sizes(),
                data(),
                known(i64s(&[8, 9])),
                any_scales(),
                axes23(),
                "[1,3,8,9]",
            ),
            // Unknown sizes: dynamic dims on the axes.
            (
                sizes(),
                data(),
                any_sizes(),
                any_scales(),
                axes23(),
                "[1,3,?,?]",
            ),
            // Unknown axes: every dim dynamic.
            (
                sizes(),
                data(),
                known(i64s(&[8, 9])),
                any_scales(),
                Some(ty(E::I64, "[2]")),
                "[?,?,?,?]",
            ),
            (
                sizes(),
                ty(E::F32, "..."),
                known(i64s(&[8, 9])),
                any_scales(),
                axes23(),
                "[...]",
            ),
            // Sizes as bounds (ShapeOf of dynamic dims): interval dims.
            (
                sizes(),
                data(),
                Bounds {
                    lo: vec![2, 4],
                    hi: vec![6, i64::MAX],
                }
                .into_type(E::I64, PartialShape::fixed(&[2])),
                any_scales(),
                axes23(),
                "[1,3,2..6,4..]",
            ),
            // Scales: trunc(dim · (s + 1e-6)), intervals at both ends, unbounded stays.
            (
                scales(),
                data(),
                any_sizes(),
                known(f32s(&[2.0, 1.5])),
                axes23(),
                "[1,3,?,3..15]",
            ),
            (
                scales(),
                ty(E::F32, "[1,3,3,5]"),
                any_sizes(),
                known(f32s(&[1.0 / 3.0, 0.6])),
                axes23(),
                "[1,3,1,3]",
            ),
            (
                scales(),
                ty(E::F32, "[1,3,3,5]"),
                any_sizes(),
                any_scales(),
                axes23(),
                "[1,3,?,?]",
            ),
            // No axes input: all axes; pads on every axis.
            (
                op(
                    4,
                    &[
                        ("mode", "nearest"),
                        ("shape_calculation_mode", "sizes"),
                        ("pads_begin", "1"),
                        ("pads_end", "0,2,9,9,9"),
                    ],
                ),
                ty(E::F32, "[1,3]"),
                known(i64s(&[5, 6])),
                any_scales(),
                None,
                "[5,6]",
            ),
            (
                op(
                    4,
                    &[
                        ("mode", "nearest"),
                        ("shape_calculation_mode", "sizes"),
                        ("pads_begin", "1,0,0"),
                        ("pads_end", "0,2"),
                    ],
                ),
                ty(E::F32, "[1,3,?]"),
                known(i64s(&[4])),
                any_scales(),
                Some(known(i64s(&[2]))),
                "[2,5,4]",
            ),
        ] {
            assert_eq!(shape4(o.as_ref(), d, sz, sc, ax), Ok(want.to_owned()));
        }
        // Interpolate-11 and -1.
        let o = op(
            11,
            &[
                ("mode", "bilinear_pillow"),
                ("shape_calculation_mode", "scales"),
            ],
        );
        let got = inferred_shape_for_test(
            o.as_ref(),
            &[
                &ty(E::U8, "[2,10,20]"),
                &known(f32s(&[0.5, 2.0])),
                &known(i64s(&[1, 2])),
            ],
        );
        assert_eq!(got.as_deref(), Ok("[2,5,40]"));
        let o = op(1, &[("axes", "1"), ("mode", "nearest")]);
        let got = inferred_shape_for_test(
            o.as_ref(),
            &[&ty(E::F16, "[2,10,?]"), &known(t(&[1], vec![7i32]))],
        );
        assert_eq!(got.as_deref(), Ok("[2,7,?]"));
    }

    #[test]
    fn inference_errors_name_the_port() {
        let o = op(
            4,
            &[("mode", "linear"), ("shape_calculation_mode", "sizes")],
        );
        let s2 = || ty(E::F32, "[2]");
        let data = || ty(E::F32, "[1,3,4,4]");
        let cases: Vec<(Vec<TensorType>, &str)> = vec![
            (
                vec![data(), known(i64s(&[8])), s2(), known(i64s(&[2, 3]))],
                "Some((Input, 1)) `sizes` has 1 elements but there are 2 axes",
            ),
            (
                vec![data(), ty(E::I64, "[1]"), s2(), known(i64s(&[2, 3]))],
                "Some((Input, 1)) `sizes` has 1 elements",
            ),
            (
                vec![data(), known(i64s(&[8, 8])), s2(), known(i64s(&[2, 4]))],
                "Some((Input, 3)) axes element 1 is 4, out of range for data of rank 4",
            ),
            (
                vec![data(), known(i64s(&[8, 8])), s2(), known(i64s(&[-1, 2]))],
                "Some((Input, 3)) axes element 0 is -1",
            ),
            (
                vec![data(), known(i64s(&[8, 8])), s2(), known(i64s(&[2, 2]))],
                "Some((Input, 3)) axes repeats axis 2",
            ),
            (
                vec![data(), known(i64s(&[8, -1])), s2(), known(i64s(&[2, 3]))],
                "Some((Input, 1)) `sizes` element 1 is -1: a size must be ≥ 0",
            ),
            (
                vec![data(), ty(E::I64, "[2,1]"), s2(), known(i64s(&[2, 3]))],
                "Some((Input, 1)) `sizes` must be 1-D, not rank 2",
            ),
            (
                vec![ty(E::F64, "[1,3,4,4]"), known(i64s(&[8, 8])), s2()],
                "Some((Input, 0)) Interpolate-",
            ),
            (
                vec![data(), known(i64s(&[8, 8])), ty(E::I32, "[2]")],
                "Some((Input, 2)) Interpolate-",
            ),
            (
                vec![data(), known(f32s(&[8.0, 8.0])), s2()],
                "Some((Input, 1)) Interpolate-",
            ),
            (
                vec![
                    ty(E::F32, "[0,3]"),
                    known(i64s(&[2])),
                    s2(),
                    known(i64s(&[0])),
                ],
                "Some((Input, 0)) axis 0 of the data is empty",
            ),
        ];
        for (inputs, want) in cases {
            let refs: Vec<&TensorType> = inputs.iter().collect();
            let got = inferred_shape_for_test(o.as_ref(), &refs).expect_err("an error");
            assert!(got.starts_with(want), "{got}\nwant {want}");
        }
        let sc = op(
            4,
            &[("mode", "linear"), ("shape_calculation_mode", "scales")],
        );
        for (scales, want) in [
            (-0.5f32, "`scales` element 0 is -0.5"),
            (f32::NAN, "`scales` element 0 is NaN"),
            (
                1e30,
                "`scales` element 0 is 1000000000000000000000000000000",
            ),
        ] {
            let got = inferred_shape_for_test(
                sc.as_ref(),
                &[
                    &data(),
                    &ty(E::I64, "[1]"),
                    &known(f32s(&[scales])),
                    &known(i64s(&[2])),
                ],
            )
            .expect_err("an error");
            assert!(
                got.starts_with(&format!("Some((Input, 2)) {want}")),
                "{got}"
            );
        }
        let p = op(
            11,
            &[
                ("mode", "bicubic_pillow"),
                ("shape_calculation_mode", "sizes"),
            ],
        );
        let got = inferred_shape_for_test(
            p.as_ref(),
            &[&data(), &known(i64s(&[2, 2, 2])), &known(i64s(&[1, 2, 3]))],
        )
        .expect_err("an error");
        assert!(
            got.starts_with("Some((Input, 2)) bicubic_pillow resizes exactly two axes"),
            "{got}"
        );
        let got = inferred_shape_for_test(p.as_ref(), &[&data(), &known(i64s(&[2, 2, 2, 2]))])
            .expect_err("an error");
        assert!(
            got.starts_with(
                "Some((Input, 0)) bicubic_pillow resizes exactly two axes (height, width), not 4"
            ),
            "{got}"
        );
        let v1 = op(
            1,
            &[("axes", "2"), ("mode", "linear"), ("pads_begin", "0,1")],
        );
        let got = inferred_shape_for_test(v1.as_ref(), &[&data(), &known(i64s(&[5]))])
            .expect_err("an error");
        assert!(
            got.starts_with("Some((Input, 0)) pads on axis 1, which is not interpolated"),
            "{got}"
        );
        let got = inferred_shape_for_test(
            op(1, &[("axes", "2"), ("mode", "linear")]).as_ref(),
            &[&ty(E::F32, "[1,1,1,1,1,1]"), &known(i64s(&[5]))],
        )
        .expect_err("an error");
        assert!(got.contains("runs on data of rank up to 5, not 6"), "{got}");
        let got = inferred_shape_for_test(
            op(1, &[("axes", "2"), ("mode", "nearest")]).as_ref(),
            &[&ty(E::U8, "[1,1,4]"), &known(i64s(&[5]))],
        )
        .expect_err("an error");
        assert!(got.starts_with("Some((Input, 0)) Interpolate-"), "{got}");
    }

    #[test]
    fn execution_errors() {
        let o = v11("nearest", &[]);
        let data = t(&[2, 2], vec![1.0f32; 4]);
        let e = eval_for_test(o.as_ref(), &[data.clone(), i64s(&[3]), i64s(&[1])], 16).unwrap_err();
        assert!(matches!(e, EvalError::Memory(_)), "{e:?}");
        let e =
            eval_for_test(o.as_ref(), &[data.clone(), i64s(&[3]), i64s(&[5])], BUDGET).unwrap_err();
        assert!(e.to_string().contains("axes element 0 is 5"), "{e}");
        let e =
            eval_for_test(o.as_ref(), &[data.clone(), i64s(&[]), i64s(&[0])], BUDGET).unwrap_err();
        assert!(
            e.to_string()
                .contains("`scales_or_sizes` has 0 elements but there are 1 axes"),
            "{e}"
        );
        let e = eval_for_test(
            o.as_ref(),
            &[t(&[2], vec![1.0f64, 2.0]), i64s(&[3])],
            BUDGET,
        )
        .unwrap_err();
        assert!(matches!(e, EvalError::UnsupportedType { .. }), "{e:?}");
        let e = eval_for_test(o.as_ref(), &[data, i64s(&[1 << 40, 1 << 40])], BUDGET).unwrap_err();
        assert!(matches!(e, EvalError::Memory(_)), "{e:?}");
    }

    /// `linear` without its zero-weight taps (finite data) gives the bits of every tap, −0s,
    /// zeros and zero weight sums included; data with an infinity or a NaN keeps every tap
    /// (`0 · inf` is a NaN that the sum must carry).
    #[test]
    fn linear_sparse_taps_give_the_same_bits() {
        let input = [1usize, 3, 6, 7];
        let n: usize = input.iter().product();
        let mut x = uniform_for_test(n, 9, -4.0, 4.0);
        for (i, v) in x.iter_mut().enumerate() {
            match i % 7 {
                0 => *v = -0.0,
                3 => *v = 0.0,
                _ => {}
            }
        }
        for (out, antialias, transform) in [
            ([1usize, 3, 12, 14], false, Transform::HalfPixel),
            ([1, 3, 13, 5], false, Transform::Asymmetric),
            ([1, 3, 2, 3], true, Transform::AlignCorners),
            ([1, 3, 4, 20], true, Transform::PytorchHalfPixel),
        ] {
            let attrs = Attrs4 {
                mode: Mode::Linear,
                shape_calc: ShapeCalc::Sizes,
                transform,
                rounding: Rounding::RoundPreferFloor,
                antialias,
                pads_begin: Vec::new(),
                pads_end: Vec::new(),
                cube_coeff: -0.75,
            };
            let plan = Plan {
                attrs: attrs.clone(),
                input: input.to_vec(),
                output: out.to_vec(),
                axes: vec![2, 3],
                scales: vec![out[2] as f32 / 6.0, out[3] as f32 / 7.0],
            };
            let total: usize = out.iter().product();
            let computed = |sparse: bool, x: &[f32]| {
                let sep = separable(&plan, &input, &out, sparse);
                let mut buf = vec![MaybeUninit::<f32>::uninit(); total];
                run_separable(x, &input, &out, &sep, &mut buf);
                // SAFETY: run_separable writes every element.
                buf.iter()
                    .map(|v| unsafe { v.assume_init() }.to_bits())
                    .collect::<Vec<_>>()
            };
            let sparse = separable(&plan, &input, &out, true);
            let dense = separable(&plan, &input, &out, false);
            assert!(sparse.grid[1].w.len() < dense.grid[1].w.len(), "{out:?}");
            assert_eq!(computed(true, &x), computed(false, &x), "{out:?}");
            // Through the op: the same bits as every tap, and with an infinity the NaNs of
            // its zero-weight taps.
            let o = Interpolate::V11(attrs);
            let sizes = [out[2] as i64, out[3] as i64];
            let got = |x: &[f32]| {
                values::<f32>(&run11(&o, t(&input, x.to_vec()), &sizes, &[2, 3]))
                    .iter()
                    .map(|v| v.to_bits())
                    .collect::<Vec<_>>()
            };
            assert_eq!(got(&x), computed(false, &x), "{out:?}");
            let mut y = x.clone();
            y[10] = f32::INFINITY;
            assert_eq!(got(&y), computed(false, &y), "{out:?} with an infinity");
            if !antialias {
                // (Upsampled, the infinity is some output's zero-weight tap.)
                assert_ne!(computed(true, &y), computed(false, &y), "{out:?}");
            }
        }
    }

    /// f32 results against a float64 evaluation of the same f32 weights: within `(n + 2)`
    /// roundings of `Σ|c·x|` (over `Σ c` for `linear`) for a sum of `n` terms.
    #[test]
    fn f32_against_float64() {
        let input = [1usize, 2, 7, 9];
        let n: usize = input.iter().product();
        let x = uniform_for_test(n, 5, -8.0, 8.0);
        let data = t(&input, x.clone());
        for (mode, transform, out, terms) in [
            (
                Mode::LinearOnnx,
                Transform::HalfPixel,
                [1usize, 2, 13, 20],
                4usize,
            ),
            (Mode::LinearOnnx, Transform::AlignCorners, [1, 2, 3, 4], 4),
            (Mode::Cubic, Transform::PytorchHalfPixel, [1, 2, 13, 5], 16),
            (Mode::Linear, Transform::Asymmetric, [1, 2, 4, 20], 25),
        ] {
            let attrs = Attrs4 {
                mode,
                shape_calc: ShapeCalc::Sizes,
                transform,
                rounding: Rounding::RoundPreferFloor,
                antialias: true,
                pads_begin: Vec::new(),
                pads_end: Vec::new(),
                cube_coeff: -0.75,
            };
            let o = Interpolate::V11(attrs.clone());
            let sizes = [out[2] as i64, out[3] as i64];
            let got = values::<f32>(&run11(&o, data.clone(), &sizes, &[2, 3]));
            let plan = Plan {
                attrs,
                input: input.to_vec(),
                output: out.to_vec(),
                axes: vec![2, 3],
                scales: vec![out[2] as f32 / 7.0, out[3] as f32 / 9.0],
            };
            let sep = separable(&plan, &input, &out, false);
            let (ya, xa) = (&sep.grid[0], &sep.grid[1]);
            assert_eq!((ya.dim, xa.dim), (2, 3));
            let mut k = 0;
            for c in 0..2 {
                for oy in 0..out[2] {
                    for ox in 0..out[3] {
                        let (mut s, mut ws, mut mag) = (0.0f64, 0.0f64, 0.0f64);
                        let (yo, yw) = ya.taps(oy);
                        let (xo, xw) = xa.taps(ox);
                        for (&a, &wa) in yo.iter().zip(yw) {
                            for (&b, &wb) in xo.iter().zip(xw) {
                                let w = sep.c0 as f64 * wa as f64 * wb as f64;
                                let v = x[c * 63 + a + b] as f64;
                                s += w * v;
                                ws += w;
                                mag += (w * v).abs();
                            }
                        }
                        let (want, mag) = if sep.normalise && ws == 0.0 {
                            (0.0, 0.0)
                        } else if sep.normalise {
                            (s / ws, mag / ws.abs())
                        } else {
                            (s, mag)
                        };
                        let bound = (terms + 2) as f64 * f32::EPSILON as f64 * mag + 1e-30;
                        let err = (got[k] as f64 - want).abs();
                        assert!(err <= bound, "{mode} {k}: {} vs {want}", got[k]);
                        k += 1;
                    }
                }
            }
        }
    }

    /// 2× nearest upsampling (YOLO's Resize): each output element is its source, whole rows
    /// repeated.
    #[test]
    fn nearest_upsampling_twice() {
        let (c, h, w) = (3usize, 40usize, 50usize);
        let x = uniform_for_test(c * h * w, 3, -1.0, 1.0);
        for (tr, rounding) in [
            ("asymmetric", "floor"),
            ("asymmetric", "round_prefer_floor"),
            ("half_pixel", "round_prefer_floor"),
        ] {
            let o = v11(
                "nearest",
                &[
                    ("coordinate_transformation_mode", tr),
                    ("nearest_mode", rounding),
                ],
            );
            let got = values::<f32>(&run11(
                o.as_ref(),
                t(&[1, c, h, w], x.clone()),
                &[2 * h as i64, 2 * w as i64],
                &[2, 3],
            ));
            let want: Vec<f32> = (0..c * 4 * h * w)
                .map(|i| {
                    let (ci, y, xx) = (i / (4 * h * w), i / (2 * w) % (2 * h), i % (2 * w));
                    x[ci * h * w + y / 2 * w + xx / 2]
                })
                .collect();
            assert_eq!(got, want, "{tr} {rounding}");
        }
    }

    /// The bits are the same at 1 and at 4 threads, for every kernel and layout.
    #[test]
    fn same_bits_at_any_thread_count() {
        let shape = [2usize, 8, 40, 48];
        let n: usize = shape.iter().product();
        let f = t(&shape, uniform_for_test(n, 9, -4.0, 4.0));
        let h = t(
            &shape,
            uniform_for_test(n, 9, -4.0, 4.0)
                .into_iter()
                .map(f16::from_f32)
                .collect(),
        );
        let u = t(
            &shape,
            uniform_for_test(n, 9, 0.0, 256.0)
                .into_iter()
                .map(|v| v as u8)
                .collect(),
        );
        type Case<'a> = (Box<dyn Op>, &'a Tensor, Vec<i64>, Vec<i64>);
        let cases: Vec<Case> = vec![
            (
                v11(
                    "nearest",
                    &[
                        ("coordinate_transformation_mode", "asymmetric"),
                        ("nearest_mode", "floor"),
                    ],
                ),
                &f,
                vec![80, 96],
                vec![2, 3],
            ),
            (v11("nearest", &[]), &u, vec![4, 70], vec![1, 2]),
            (v11("linear_onnx", &[]), &f, vec![80, 96], vec![2, 3]),
            (
                v11(
                    "linear_onnx",
                    &[("coordinate_transformation_mode", "align_corners")],
                ),
                &h,
                vec![61, 33],
                vec![2, 3],
            ),
            (v11("linear_onnx", &[]), &f, vec![5, 61], vec![1, 2]),
            (v11("cubic", &[]), &f, vec![70, 60], vec![2, 3]),
            (v11("cubic", &[]), &u, vec![60, 70], vec![3, 2]),
            (
                v11("linear", &[("antialias", "true")]),
                &f,
                vec![20, 100],
                vec![2, 3],
            ),
            (v11("bilinear_pillow", &[]), &f, vec![70, 30], vec![2, 3]),
            (v11("bicubic_pillow", &[]), &u, vec![70, 30], vec![1, 2]),
        ];
        for (o, data, sizes, axes) in &cases {
            let run = |threads: usize| {
                let pool = rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .build()
                    .unwrap();
                pool.install(|| run11(o.as_ref(), (*data).clone(), sizes, axes))
                    .to_le_bytes()
            };
            assert_eq!(run(1), run(4), "{o:?} {sizes:?} {axes:?}");
        }
    }

    /// Cubic with the axes listed innermost first computes each element on its own (the
    /// products in the listed order): the same values as the other order, to rounding.
    #[test]
    fn cubic_axes_in_either_order() {
        let x = t(&[1, 3, 5, 6], uniform_for_test(90, 4, -2.0, 2.0));
        let o = v11("cubic", &[]);
        let a = values::<f32>(&run11(o.as_ref(), x.clone(), &[9, 4], &[2, 3]));
        let b = values::<f32>(&run11(o.as_ref(), x, &[4, 9], &[3, 2]));
        assert_eq!(a.len(), b.len());
        for (p, q) in a.iter().zip(&b) {
            assert!((p - q).abs() <= 1e-5 * (1.0 + p.abs()), "{p} vs {q}");
        }
    }
}
