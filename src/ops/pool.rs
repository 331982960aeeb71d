//! MaxPool-1, MaxPool-8, MaxPool-14, AvgPool-1, AvgPool-14 and AvgPool-16: the maximum or the
//! average of a window sliding over the spatial axes of `[N, C, spatial…]` data.
//!
//! Specs: <https://docs.openvino.ai/2026/documentation/openvino-ir-format/operation-sets/operation-specs/pooling/max-pool-1.html>,
//! <https://docs.openvino.ai/2026/documentation/openvino-ir-format/operation-sets/operation-specs/pooling/max-pool-8.html>,
//! <https://docs.openvino.ai/2026/documentation/openvino-ir-format/operation-sets/operation-specs/pooling/max-pool-14.html>,
//! <https://docs.openvino.ai/2026/documentation/openvino-ir-format/operation-sets/operation-specs/pooling/avg-pool-1.html>
//! <https://docs.openvino.ai/2026/documentation/openvino-ir-format/operation-sets/operation-specs/pooling/avg-pool-14.html>
//! and AvgPool-16's page (AvgPool-14 with `dilations`).
//!
//! Ports: one `data` input of rank `k + 2` for a `kernel` of `k` (1 to 3) values. MaxPool takes
//! any numeric type (the spec's "floating point or integer type"), AvgPool the floating-point
//! types (f16, bf16, f32, f64); others are refused (E502). AvgPool-14's spec also lists integer
//! types, but OpenVINO's reference averages them inconsistently (sums in the type, truncating
//! division, rounding only for i8/u8), so ovir does not guess a meaning. The first output has
//! the data's type; MaxPool-8 and -14 have a second output of the same shape: the indices of
//! the maxima, of type `index_element_type` (`i32` or `i64`, the default).
//!
//! Attributes: `kernel` (required, 1 to 3 values of at least 1), `strides` (required; empty
//! means 1s, as OpenVINO reads it), `pads_begin`, `pads_end`, `auto_pad`, `rounding_type`
//! (`floor`, the default, or `ceil`; `ceil_torch` only for the version-14 ops) and, for
//! MaxPool-8/14, `dilations` (1s when left out), `axis` (default 0, in `[-(k+2), k+1]`) and
//! `index_element_type`; AvgPool's `exclude-pad` (a boolean; true when left out, as
//! OpenVINO's default) and AvgPool-16's `dilations`. The lists must have one value per kernel
//! value (pads may be empty: zeros). A `dilations` attribute on MaxPool-1 or AvgPool-1/14 is
//! ignored (OpenVINO does not read it; it must still be a list of integers). Window geometry, output dims and `same_*` pads
//! are [`spatial`](super::spatial)'s rules (OpenVINO's pooling shape inference): along an axis
//! of `X` elements, output `o`'s window covers the padded positions `o·s + t·d` for taps
//! `t < K`, the data being positions `p_b ..< p_b + X`.
//!
//! Decisions:
//! * **Maximum**: only data elements are candidates (the padding never wins). **NaN
//!   propagates**: a window holding a NaN gives its first NaN (in window order: row-major over
//!   the taps) and that NaN's index. Otherwise the greatest value, **ties to the first in
//!   window order** (−0 and +0 tie); the value is copied bit for bit, so integers are exact.
//!   OpenVINO's reference agrees on ties but skips a NaN unless it opens the window, and starts
//!   from the type's lowest finite value, so a window of −inf gives −FLT_MAX there and −inf
//!   here.
//! * A window with no data element (ceil rounding can place the last window in or past the end
//!   padding; pads may exceed the kernel): the type's **lowest finite value** (−FLT_MAX, the
//!   integer minimum) and the index of its plane's first element, as OpenVINO's reference
//!   gives (the spec's −inf padding would give −inf).
//! * **Indices** (MaxPool-8/14): the position of the maximum in the data flattened to 1-D,
//!   taken modulo the product of the data's dims from `axis` on, as OpenVINO's reference
//!   computes them: with axis 0 an index into the whole tensor, with axis 2 into the `(n, c)`
//!   spatial plane (a later axis keeps the index's remainder). With `index_element_type="i32"`,
//!   an index range beyond 2^31 is an error (OpenVINO wraps).
//! * **Average**: the window's data elements are summed in f64 from +0 in a fixed order (each
//!   column of the window, along the last axis, over the window's rows in row-major order; then
//!   those column sums left to right), divided in f64 (f64 data) or multiplied by the f64
//!   reciprocal of the divisor (narrower types), and rounded once to the type (OpenVINO's
//!   reference sums in the type itself, from +0: a window of −0s gives +0 in both). Each term
//!   passes through at most `m = r + w` additions for a window of `r` rows and `w` columns,
//!   so an f32 output is within half an ulp of the exact value plus
//!   `(m + 3)·2^-53·Σ|x|/divisor` (tested against a double-double reference:
//!   within 0.5 ulp + 10^-6). The divisor is OpenVINO's reference's: with `exclude-pad` false
//!   and some pad non-zero (after `auto_pad`), the kernel's size `K₀·K₁·K₂` for every window,
//!   even one reaching past the end padding (ceil rounding); otherwise the number of data
//!   elements in the window. A window with no data element gives 0. With `exclude-pad` true,
//!   explicit pads must be smaller than the kernel (OpenVINO's check: a window could lie
//!   entirely in the padding), an attribute error.
//! * A batch or channel count of 0 gives an empty output (OpenVINO refuses it).
//!
//! Inference: a data rank other than `k + 2` is an invalid input (E507); the output is
//! `[N, C]` of the data followed by [`Window::forward`]'s dims (intervals pass through,
//! `same_*` on a dim that is not static gives `?`); a dynamic rank gives `k + 2` dynamic dims.
//!
//! Execution of MaxPool's maxima over 2D (or 1D) planes without NaN or −0, where every window
//! holds a data element: for each output row, the maxima over the window's rows column by
//! column, then that row copied with its padding (−∞, or an integer type's minimum) into the
//! row's stride phases and every window's maximum taken a tap at a time over the row, each
//! tap a fixed offset (vectorised, in register blocks; with no NaN and no −0, equal values
//! have equal bits and the order of the taps cannot show). The check for NaN and −0 reads
//! each data row as the maxima first read it.
//! Otherwise: per `(n, c)` plane through precomputed per-axis tap ranges (no padding tests in
//! the loops), separably, a segment of an output row at a time: first the column maxima or
//! sums over the window's rows, for the columns the segment's windows cover (contiguous rows,
//! vectorised), then each window over its columns (for the windows with all their taps in the
//! data and strides 1 and 2, a tap at a time over the segment, vectorised). Taken column by
//! column, a maximum could be another of equal values (−0 for 0) or another NaN than window
//! order gives: a segment whose rows hold a NaN or a −0 is computed window by window in
//! window order instead (the indices of MaxPool-8/14 always are). Indices that no layer reads
//! ([`EvalCx::output_unread`]) are not computed. Outputs are computed in contiguous parts in
//! parallel when the work (outputs × kernel size) exceeds 64K elements, so the bits do not
//! depend on the thread count.

use std::mem::MaybeUninit;
use std::ops::Range;

use super::adaptive_pool::for_parts;
use super::kernel::phases::{Phases, Window2, copy_every, sweep};
use super::kernel::{contiguous, tensor_from, vectorised};
use super::mvn::Real;
use super::spatial::{Rounding, Rule, Window, parse_list};
use super::{Arity, AttrError, Attrs, EvalCx, EvalError, InferCx, Op, OpDef};
use crate::dtype::ElementType;
use crate::shape::{Dim, PartialShape, TensorType};
use crate::tensor::{Element, Tensor, TypeSet};

/// What a pooling layer computes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Kind {
    /// MaxPool; for versions 8 and 14 the index type and the (normalized) axis.
    Max {
        indices: Option<(ElementType, usize)>,
    },
    /// AvgPool.
    Avg { exclude_pad: bool },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pool {
    pub version: u32,
    pub kind: Kind,
    /// One value (at least 1) per spatial axis, 1 to 3 of them.
    pub kernel: Vec<u64>,
    /// Validated against the kernel's length; `dilations` only for MaxPool-8/14 and AvgPool-16.
    pub window: Window,
    pub rounding: Rounding,
}

pub const MAX_POOL_1: OpDef = OpDef {
    name: "MaxPool",
    version: 1,
    inputs: Arity::exactly(1),
    outputs: Arity::exactly(1),
    parse: parse_max_1,
};

pub const MAX_POOL_8: OpDef = OpDef {
    version: 8,
    outputs: Arity::exactly(2),
    parse: parse_max_8,
    ..MAX_POOL_1
};

pub const MAX_POOL_14: OpDef = OpDef {
    version: 14,
    parse: parse_max_14,
    ..MAX_POOL_8
};

pub const AVG_POOL_1: OpDef = OpDef {
    name: "AvgPool",
    version: 1,
    inputs: Arity::exactly(1),
    outputs: Arity::exactly(1),
    parse: parse_avg_1,
};

pub const AVG_POOL_14: OpDef = OpDef {
    version: 14,
    parse: parse_avg_14,
    ..AVG_POOL_1
};

pub const AVG_POOL_16: OpDef = OpDef {
    version: 16,
    parse: parse_avg_16,
    ..AVG_POOL_1
};

fn parse_max_1(a: &Attrs) -> Result<Box<dyn Op>, Vec<AttrError>> {
    parse(a, 1, true)
}

fn parse_max_8(a: &Attrs) -> Result<Box<dyn Op>, Vec<AttrError>> {
    parse(a, 8, true)
}

fn parse_max_14(a: &Attrs) -> Result<Box<dyn Op>, Vec<AttrError>> {
    parse(a, 14, true)
}

fn parse_avg_1(a: &Attrs) -> Result<Box<dyn Op>, Vec<AttrError>> {
    parse(a, 1, false)
}

fn parse_avg_14(a: &Attrs) -> Result<Box<dyn Op>, Vec<AttrError>> {
    parse(a, 14, false)
}

fn parse_avg_16(a: &Attrs) -> Result<Box<dyn Op>, Vec<AttrError>> {
    parse(a, 16, false)
}

fn parse_kernel(text: &str) -> Result<Vec<u64>, String> {
    let k = parse_list(text)?;
    if !(1..=3).contains(&k.len()) {
        return Err(format!(
            "expected 1 to 3 values (one per spatial axis), not {}",
            k.len()
        ));
    }
    if let Some(i) = k.iter().position(|&v| v == 0) {
        return Err(format!("must be at least 1, but is 0 on spatial axis {i}"));
    }
    Ok(k)
}

fn parse(a: &Attrs, version: u32, max: bool) -> Result<Box<dyn Op>, Vec<AttrError>> {
    Ok(Box::new(parse_pool(a, version, max)?))
}

/// Reads a layer's attributes (every problem at once), then checks them against each other.
fn parse_pool(a: &Attrs, version: u32, max: bool) -> Result<Pool, Vec<AttrError>> {
    let indexed = max && version >= 8;
    let mut errors = Vec::new();
    fn keep<T>(errors: &mut Vec<AttrError>, r: Result<T, AttrError>) -> Option<T> {
        r.map_err(|e| errors.push(e)).ok()
    }
    let kernel = keep(&mut errors, a.parse_required("kernel", parse_kernel));
    let rounding = keep(
        &mut errors,
        a.parse_or(
            "rounding_type",
            Rounding::Floor,
            |t| match Rounding::parse(t)? {
                Rounding::CeilTorch if version < 14 => Err(format!(
                    "ceil_torch is not an option of version {version}; expected floor or ceil"
                )),
                r => Ok(r),
            },
        ),
    );
    let index_type = if indexed {
        keep(
            &mut errors,
            a.parse_or("index_element_type", ElementType::I64, |t| {
                super::parse_index_type(t, "MaxPool")
            }),
        )
    } else {
        Some(ElementType::I64)
    };
    let axis = if indexed {
        keep(&mut errors, a.parse_or("axis", 0, super::parse_i64))
    } else {
        Some(0)
    };
    let exclude_pad = if max {
        Some(false)
    } else {
        keep(&mut errors, a.bool_or(&["exclude-pad"], true))
    };
    let window = Window::parse(a, false).map_err(|e| errors.extend(e)).ok();
    let (
        Some(kernel),
        Some(rounding),
        Some(index_type),
        Some(axis),
        Some(exclude_pad),
        Some(mut window),
    ) = (kernel, rounding, index_type, axis, exclude_pad, window)
    else {
        return Err(errors);
    };
    // Checks of the attributes against each other: the kernel gives the spatial rank.
    let k = kernel.len();
    // Dilations: MaxPool-8/14 and AvgPool-16.
    if !(indexed || (!max && version >= 16)) {
        window.dilations = None;
    }
    if window.strides.is_empty() {
        window.strides = vec![1; k];
    }
    if let Err(e) = window.validate(k) {
        let name = e.split(' ').next().unwrap_or("strides").to_owned();
        errors.push(a.invalid(&name, format!("{e} (as many as the kernel has values)")));
    }
    let axis = match super::normalize_axis(axis, k + 2) {
        Some(v) => v,
        None => {
            errors.push(a.invalid(
                "axis",
                format!(
                    "the data has rank {} (the kernel has {k} values), so the axis is in [{}, {}]",
                    k + 2,
                    -(k as i64 + 2),
                    k + 1
                ),
            ));
            0
        }
    };
    if !max && exclude_pad && window.auto_pad == super::spatial::AutoPad::Explicit {
        for (name, pads) in [
            ("pads_begin", &window.pads_begin),
            ("pads_end", &window.pads_end),
        ] {
            if let Some(i) = (0..pads.len().min(k)).find(|&i| pads[i] >= kernel[i]) {
                errors.push(a.invalid(
                    name,
                    format!(
                        "{name} is {} on spatial axis {i}, not less than the kernel's {}: with exclude-pad a window could lie entirely in the padding",
                        pads[i], kernel[i]
                    ),
                ));
            }
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    let kind = if max {
        Kind::Max {
            indices: indexed.then_some((index_type, axis)),
        }
    } else {
        Kind::Avg { exclude_pad }
    };
    Ok(Pool {
        version,
        kind,
        kernel,
        window,
        rounding,
    })
}

impl Pool {
    fn op_name(&self) -> &'static str {
        match self.kind {
            Kind::Max { .. } => "MaxPool",
            Kind::Avg { .. } => "AvgPool",
        }
    }

    fn rank_error(&self, rank: usize) -> String {
        let k = self.kernel.len();
        format!(
            "the data has rank {rank}, but {} with a kernel of {k} value{} takes data of rank {} ([N, C] and {k} spatial axes)",
            self.op_name(),
            if k == 1 { "" } else { "s" },
            k + 2
        )
    }

    /// The output shape from the data's, with every check.
    fn shape(&self, data: &PartialShape) -> Result<PartialShape, String> {
        let k = self.kernel.len();
        let Some(dims) = data.dims() else {
            return Ok(PartialShape::new(vec![Dim::DYNAMIC; k + 2]));
        };
        if dims.len() != k + 2 {
            return Err(self.rank_error(dims.len()));
        }
        let mut out = dims[..2].to_vec();
        for (i, &kernel) in self.kernel.iter().enumerate() {
            let axis = self.window.forward(
                Rule::Pooling(self.rounding),
                i,
                dims[2 + i],
                Dim::fixed(kernel),
            )?;
            out.push(axis.out);
        }
        Ok(PartialShape::new(out))
    }

    /// The outputs of element type `ty` and shape `shape`.
    fn outputs(&self, ty: ElementType, shape: PartialShape) -> Vec<TensorType> {
        let mut out = vec![TensorType::new(ty, shape.clone())];
        if let Kind::Max {
            indices: Some((it, _)),
        } = self.kind
        {
            out.push(TensorType::new(it, shape));
        }
        out
    }
}

impl Op for Pool {
    fn def(&self) -> Option<&'static OpDef> {
        Some(match (&self.kind, self.version) {
            (Kind::Max { .. }, 1) => &MAX_POOL_1,
            (Kind::Max { .. }, 8) => &MAX_POOL_8,
            (Kind::Max { .. }, _) => &MAX_POOL_14,
            (Kind::Avg { .. }, 1) => &AVG_POOL_1,
            (Kind::Avg { .. }, 14) => &AVG_POOL_14,
            (Kind::Avg { .. }, _) => &AVG_POOL_16,
        })
    }

    fn infer(&self, cx: &mut InferCx<'_>) -> Option<Vec<TensorType>> {
        let types = match self.kind {
            Kind::Max { .. } => TypeSet::NUMERIC,
            Kind::Avg { .. } => TypeSet::FLOAT,
        };
        cx.require(0..1, types)?;
        let data = cx.input(0);
        match self.shape(&data.shape) {
            Ok(s) => Some(self.outputs(data.element_type, s)),
            Err(why) => cx.invalid(0, why),
        }
    }

    fn eval(&self, cx: &EvalCx<'_>) -> Result<Vec<Tensor>, EvalError> {
        let data = cx.tensor(0)?;
        let ty = data.element_type();
        let g = Geometry::new(self, data.shape())?;
        let mut bytes = ty.storage_bytes(g.total as u64).unwrap_or(u64::MAX);
        // Indices that nothing reads are not computed: an empty tensor stands in for them.
        let indices = match self.kind {
            Kind::Max { indices: Some(_) } if cx.output_unread(1) => None,
            Kind::Max { indices } => indices,
            Kind::Avg { .. } => None,
        };
        if indices.is_none()
            && let Kind::Max { .. } = self.kind
            && let Some(layout) = max_layout(&g)
        {
            // Each thread's row copy, sums and column maxima (see `max_planes`).
            let each = ty
                .storage_bytes(max_scratch(&g, &layout) as u64)
                .unwrap_or(u64::MAX);
            bytes = bytes.saturating_add(each.saturating_mul(rayon::current_num_threads() as u64));
        }
        if let Some((it, _)) = indices {
            if it == ElementType::I32 && g.index_range > 1 << 31 {
                return Err(EvalError::Invalid(format!(
                    "the indices range over {} elements (the data's dims from the axis on), more than index_element_type i32 holds",
                    g.index_range
                )));
            }
            bytes = bytes.saturating_add(it.storage_bytes(g.total as u64).unwrap_or(u64::MAX));
        }
        cx.reserve_bytes("output", bytes)?;
        let unsupported = || EvalError::UnsupportedType {
            op: self.op_name().into(),
            ty,
        };
        match self.kind {
            Kind::Max { indices: declared } => crate::dispatch!(numeric: ty, T => {
                let x = contiguous::<T>(&data).ok_or_else(unsupported)?;
                match (indices, declared) {
                    (None, None) => Ok(vec![max_values::<T>(&x, &g)?]),
                    (None, Some((it, _))) => Ok(vec![
                        max_values::<T>(&x, &g)?,
                        Tensor::from_le_bytes(it, &[0], &[]).ok_or(EvalError::Internal("an empty tensor"))?,
                    ]),
                    (Some((ElementType::I32, _)), _) => max_indexed::<T, i32>(&x, &g, |i| i as i32),
                    (Some(_), _) => max_indexed::<T, i64>(&x, &g, |i| i as i64),
                }
            }, _ => Err(unsupported())),
            Kind::Avg { exclude_pad } => crate::dispatch!(float: ty, T => {
                let x = contiguous::<T>(&data).ok_or_else(unsupported)?;
                Ok(vec![average::<T>(&x, &g, exclude_pad)?])
            }, _ => Err(unsupported())),
        }
    }
}

/// The valid taps of one output index along one axis: the data position of the first and
/// how many there are (0: the window has no data element along this axis).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Span {
    start: usize,
    taps: usize,
}

/// The spans of the `out` output indices of an axis of `x` data elements, kernel `k`,
/// stride `s`, dilation `d` and begin pad `pb`: taps `t < k` with `pb ≤ o·s + t·d < pb + x`.
fn spans(x: usize, out: usize, k: usize, s: usize, d: usize, pb: usize) -> Vec<Span> {
    let (x, k, s, d, pb) = (x as u128, k as u128, s as u128, d as u128, pb as u128);
    (0..out as u128)
        .map(|o| {
            let at = o * s;
            let lo = if at >= pb { 0 } else { (pb - at).div_ceil(d) }.min(k);
            let hi = if at >= pb + x {
                0
            } else {
                (pb + x - at).div_ceil(d)
            }
            .min(k);
            if hi > lo {
                Span {
                    // Below `x`, so it fits.
                    start: (at + lo * d - pb) as usize,
                    taps: (hi - lo) as usize,
                }
            } else {
                Span::default()
            }
        })
        .collect()
}

/// A run's geometry, the spatial axes padded to three with leading axes of 1.
struct Geometry {
    input: [usize; 3],
    out: [usize; 3],
    dilation: [usize; 3],
    kernel: [usize; 3],
    stride: [usize; 3],
    /// The output indices along the last axis whose windows have all their taps in the data.
    full: Range<usize>,
    /// The valid taps of every output index of every axis (empty when the output is).
    spans: [Vec<Span>; 3],
    /// Elements of a spatial plane of the data, and of the output.
    plane: usize,
    out_plane: usize,
    /// The kernel's element count.
    kernel_size: usize,
    /// Whether some pad is non-zero (after `auto_pad`).
    padded: bool,
    /// The begin pads (after `auto_pad`).
    pad: [usize; 3],
    out_shape: Vec<usize>,
    total: usize,
    /// MaxPool-8/14: indices are taken modulo this (the data's dims from the axis on).
    index_range: usize,
}

impl Geometry {
    fn new(op: &Pool, shape: &[usize]) -> Result<Geometry, EvalError> {
        let k = op.kernel.len();
        if shape.len() != k + 2 {
            return Err(EvalError::Invalid(op.rank_error(shape.len())));
        }
        let lead = 3 - k;
        let too_large = || EvalError::Invalid("the pooling's geometry is too large".into());
        let mut input = [1; 3];
        let mut out = [1; 3];
        let mut kernel = [1; 3];
        let mut stride = [1; 3];
        let mut dilation = [1; 3];
        let mut pad = [0usize; 3];
        let mut padded = false;
        for i in 0..k {
            let a = lead + i;
            let kd = usize::try_from(op.kernel[i]).map_err(|_| too_large())?;
            let axis = op
                .window
                .forward_static(Rule::Pooling(op.rounding), i, shape[2 + i], kd)
                .map_err(EvalError::Invalid)?;
            input[a] = shape[2 + i];
            out[a] = axis.out;
            kernel[a] = kd;
            stride[a] = usize::try_from(op.window.stride(i)).map_err(|_| too_large())?;
            dilation[a] = usize::try_from(op.window.dilation(i)).map_err(|_| too_large())?;
            pad[a] = usize::try_from(axis.pad_begin).map_err(|_| too_large())?;
            padded |= axis.pad_begin != 0 || axis.pad_end != 0;
        }
        let mut out_shape = shape[..2].to_vec();
        out_shape.extend_from_slice(&out[lead..]);
        let total = out_shape
            .iter()
            .try_fold(1usize, |a, &d| a.checked_mul(d))
            .ok_or_else(|| {
                EvalError::Invalid(format!(
                    "the output shape {out_shape:?} has too many elements"
                ))
            })?;
        let index_range = match op.kind {
            Kind::Max {
                indices: Some((_, axis)),
            } => shape[axis..].iter().product(),
            _ => 1,
        };
        // The spans only for an output that has elements (each output dim is then at most the
        // output's size, which the budget bounds).
        let spans = std::array::from_fn(|a| {
            if total == 0 {
                Vec::new()
            } else {
                spans(input[a], out[a], kernel[a], stride[a], dilation[a], pad[a])
            }
        });
        let full = {
            let row = &spans[2];
            let i0 = row
                .iter()
                .position(|s| s.taps == kernel[2])
                .unwrap_or(row.len());
            i0..i0 + row[i0..].iter().take_while(|s| s.taps == kernel[2]).count()
        };
        Ok(Geometry {
            full,
            input,
            out,
            dilation,
            kernel,
            stride,
            spans,
            plane: input.iter().product(),
            out_plane: out.iter().product(),
            kernel_size: kernel.iter().product(),
            padded,
            pad,
            out_shape,
            total,
            index_range,
        })
    }

    /// `f(plane, rows, outputs, at)` for output elements `first..first + count`, a segment of
    /// an output row (along the last axis) at a time: the index of the `(n, c)` plane, the
    /// offsets in the plane of the window's rows (data elements along the first two axes; none
    /// when the window has no data element there), the segment's indices along the last axis,
    /// and the segment's first element counted from `first`.
    #[inline(always)]
    fn each_segment(
        &self,
        first: usize,
        count: usize,
        mut f: impl FnMut(usize, &[usize], Range<usize>, usize),
    ) {
        let [_, in1, in2] = self.input;
        let [out0, out1, out2] = self.out;
        if count == 0 || out2 == 0 {
            return;
        }
        let mut rows = Vec::new();
        let (mut e, end) = (first, first + count);
        // The plane, the output row in it (along the first two axes: `(r0, r1)`) and the
        // index along the last axis of element `e`; divided out once, then counted on.
        let (p, q) = (e / self.out_plane, e % self.out_plane);
        let (mut p, mut r0, mut r1, mut l0) = (p, q / out2 / out1, q / out2 % out1, q % out2);
        while e < end {
            let l1 = out2.min(l0 + (end - e));
            if l0 == 0 || e == first {
                let (s0, s1) = (self.spans[0][r0], self.spans[1][r1]);
                rows.clear();
                for z in 0..s0.taps {
                    let z = s0.start + z * self.dilation[0];
                    for y in 0..s1.taps {
                        rows.push((z * in1 + s1.start + y * self.dilation[1]) * in2);
                    }
                }
            }
            f(p, &rows, l0..l1, e - first);
            e += l1 - l0;
            l0 = 0;
            r1 += 1;
            if r1 == out1 {
                r1 = 0;
                r0 += 1;
                if r0 == out0 {
                    r0 = 0;
                    p += 1;
                }
            }
        }
    }
}

/// An element type MaxPool computes on.
trait Pooled: Element + PartialOrd {
    /// The lowest finite value (a window without data elements gives it).
    const LOWEST: Self;
    /// The value no other is below (−∞ for floats): padding that never wins a maximum.
    const BOTTOM: Self;
    fn nan(self) -> bool;
    /// A NaN or −0: a value whose place in the window can change the maximum's bits
    /// among equal values (the separable path of [`max_values`] leaves them to
    /// [`window_max`]).
    fn odd(self) -> bool;
    /// Whether `self` replaces `best` (not a NaN) as the maximum: greater, or a NaN.
    #[inline(always)]
    fn above(self, best: Self) -> bool {
        self > best || self.nan()
    }
}

macro_rules! pooled {
    (int: $($t:ty)*) => {$(
        impl Pooled for $t {
            const LOWEST: Self = <$t>::MIN;
            const BOTTOM: Self = <$t>::MIN;
            #[inline(always)]
            fn nan(self) -> bool {
                false
            }
            #[inline(always)]
            fn odd(self) -> bool {
                false
            }
        }
    )*};
    (float: $($t:ty, $negative_zero:expr)*) => {$(
        impl Pooled for $t {
            const LOWEST: Self = <$t>::MIN;
            const BOTTOM: Self = <$t>::NEG_INFINITY;
            #[inline(always)]
            fn nan(self) -> bool {
                self.is_nan()
            }
            #[inline(always)]
            fn odd(self) -> bool {
                // Branch-free, so that the scan vectorises.
                #[allow(clippy::eq_op)]
                let nan = self != self;
                nan | (self.to_bits() == $negative_zero)
            }
        }
    )*};
}
pooled!(int: i8 i16 i32 i64 u8 u16 u32 u64);
pooled!(float: f32, 1 << 31 f64, 1 << 63 half::f16, 1 << 15 half::bf16, 1 << 15);

/// The maximum of a window (rows `rows` of the plane `x`, taps `s` along the last axis,
/// dilation `d`): the first NaN, else the first greatest value; `LOWEST` when empty.
#[inline(always)]
fn window_max<T: Pooled>(x: &[T], rows: &[usize], s: Span, d: usize) -> T {
    let (Some(&r0), true) = (rows.first(), s.taps > 0) else {
        return T::LOWEST;
    };
    let mut best = x[r0 + s.start];
    if best.nan() {
        return best;
    }
    let len = (s.taps - 1) * d + 1;
    for &r in rows {
        let row = &x[r + s.start..r + s.start + len];
        if d == 1 {
            for &v in row {
                if v.above(best) {
                    if v.nan() {
                        return v;
                    }
                    best = v;
                }
            }
        } else {
            for &v in row.iter().step_by(d) {
                if v.above(best) {
                    if v.nan() {
                        return v;
                    }
                    best = v;
                }
            }
        }
    }
    best
}

/// [`window_max`] with the position of the maximum in the plane (0 for an empty window).
#[inline(always)]
fn window_argmax<T: Pooled>(x: &[T], rows: &[usize], s: Span, d: usize) -> (T, usize) {
    let (Some(&r0), true) = (rows.first(), s.taps > 0) else {
        return (T::LOWEST, 0);
    };
    let mut at = r0 + s.start;
    let mut best = x[at];
    if best.nan() {
        return (best, at);
    }
    for &r in rows {
        let first = r + s.start;
        for (j, &v) in x[first..first + (s.taps - 1) * d + 1]
            .iter()
            .step_by(d)
            .enumerate()
        {
            if v.above(best) {
                at = first + j * d;
                if v.nan() {
                    return (v, at);
                }
                best = v;
            }
        }
    }
    (best, at)
}

/// The maxima of the windows, a segment of an output row at a time and separably: first the
/// column maxima of the window's rows over the columns the segment's windows cover (a
/// contiguous, vectorised pass), then each window's maximum over its columns
/// ([`fold_columns`]). Taken in this order, equal values of different bits (−0 and 0) and
/// NaNs would come out otherwise than the windows' first greatest value or first NaN: a
/// segment that meets one is computed window by window with [`window_max`] instead.
fn max_values<T: Pooled>(x: &[T], g: &Geometry) -> Result<Tensor, EvalError> {
    if let Some(layout) = max_layout(g) {
        return max_planes(x, g, &layout);
    }
    by_segments(
        x,
        g,
        #[inline(always)]
        |plane, rows, ls, outs, (columns, scratch): &mut (Vec<T>, Vec<T>)| {
            max_segment(g, plane, rows, ls, outs, columns, scratch)
        },
    )
}

/// The layout of [`max_planes`] for `g` (the phases of one row of the data), if it is 2D (the
/// first of the three axes trivial) and every window has a data element (the padding then
/// only ever loses).
fn max_layout(g: &Geometry) -> Option<Phases> {
    let trivial = g.input[0] == 1 && g.out[0] == 1 && g.kernel[0] == 1;
    let nonempty = |a: usize| g.spans[a].iter().all(|s| s.taps > 0);
    if !trivial || g.total == 0 || !nonempty(1) || !nonempty(2) {
        return None;
    }
    Phases::new(Window2 {
        input: [1, g.input[2]],
        kernel: [1, g.kernel[2]],
        output: [1, g.out[2]],
        stride: [1, g.stride[2]],
        dilation: [1, g.dilation[2]],
        pad: [0, g.pad[2]],
    })
}

/// Elements of [`max_planes`]' scratch per thread: a row's phase copy and sums, and the
/// column maxima.
fn max_scratch(g: &Geometry, layout: &Phases) -> usize {
    layout.scratch().saturating_add(g.input[2])
}

/// Whether `rows` holds a NaN or a −0 ([`Pooled::odd`]).
#[inline(always)]
fn odd_rows<T: Pooled>(rows: &[T]) -> bool {
    rows.iter().fold(false, |a, v| a | v.odd())
}

/// `out[j]` = the maximum of `x[r + j]` over the row offsets `r` in `rows` (at least one), in
/// blocks of 16 held in registers through the rows (the last block overlapping the one before
/// it).
#[inline(always)]
fn column_max<T: Pooled>(x: &[T], rows: &[usize], out: &mut [T]) {
    const L: usize = 16;
    let n = out.len();
    if n < L {
        for (j, o) in out.iter_mut().enumerate() {
            *o = rows[1..]
                .iter()
                .fold(x[rows[0] + j], |a, &r| max_of(a, x[r + j]));
        }
        return;
    }
    for j in (0..n - L + 1).step_by(L) {
        column_block::<T, L>(x, rows, j, &mut out[j..j + L]);
    }
    if !n.is_multiple_of(L) {
        column_block::<T, L>(x, rows, n - L, &mut out[n - L..]);
    }
}

/// The greater of `a` and `v` (`a` when neither is).
#[inline(always)]
fn max_of<T: Pooled>(a: T, v: T) -> T {
    if v > a { v } else { a }
}

/// Columns `j..j + L` of [`column_max`].
#[inline(always)]
fn column_block<T: Pooled, const L: usize>(x: &[T], rows: &[usize], j: usize, out: &mut [T]) {
    let mut acc: [T; L] = x[rows[0] + j..][..L].try_into().expect("L elements");
    for &r in &rows[1..] {
        let v: &[T; L] = x[r + j..][..L].try_into().expect("L elements");
        for (a, &v) in acc.iter_mut().zip(v) {
            *a = max_of(*a, v);
        }
    }
    out.copy_from_slice(&acc);
}

/// [`max_values`] a plane at a time, separably: each window's maximum is the same whatever
/// the order of its taps when the plane holds no NaN and no −0 (equal values then have equal
/// bits), and the padding is below every value. So for each output row, the maxima over the
/// window's rows are taken column by column (vectorised; each data row checked for NaN and
/// −0 when first read), then the windows' maxima over those, through the row's phase copy
/// with its padding ([`sweep`]: vectorised, no border cases). A plane with a NaN or a −0
/// goes a row segment at a time instead ([`max_segment`]).
fn max_planes<T: Pooled>(x: &[T], g: &Geometry, layout: &Phases) -> Result<Tensor, EvalError> {
    let total = g.total;
    let [_, height, width] = g.input;
    let (ow, dh) = (g.out[2], g.dilation[1]);
    let mut out: Vec<T> = Vec::with_capacity(total);
    let mut planes: Vec<&mut [MaybeUninit<T>]> = out.spare_capacity_mut()[..total]
        .chunks_mut(g.out_plane)
        .collect();
    let mut none = vec![(); planes.len()];
    let taps: Vec<(usize, ())> = layout.offsets().map(|t| (t, ())).collect();
    let pieces: Vec<(usize, usize, usize)> = layout.column_phases().collect();
    let sw = g.stride[2];
    let max = |a: T, (), v: T| max_of(a, v);
    for_parts(
        &mut planes,
        &mut none,
        g.out_plane.saturating_mul(g.kernel_size),
        |first, part, _| {
            // The row copy's padding is written once: each row's data lands on the same
            // elements.
            let (mut buf, mut col) = (vec![T::BOTTOM; layout.len()], vec![T::BOTTOM; width]);
            let mut acc = vec![T::BOTTOM; layout.sums()];
            let mut rows = Vec::new();
            let (mut columns, mut scratch) = (Vec::new(), Vec::new());
            vectorised(
                #[inline(always)]
                || {
                    for (k, o) in part.iter_mut().enumerate() {
                        let p = first + k;
                        let plane = &x[p * g.plane..(p + 1) * g.plane];
                        // The rows below `checked` were checked, 8 rows or more at a time
                        // (so that the check vectorises), as the maxima come to them.
                        let (mut odd, mut checked) = (false, 0);
                        for (oh, o_row) in o.chunks_mut(ow).enumerate() {
                            let s = g.spans[1][oh];
                            rows.clear();
                            for t in 0..s.taps {
                                let r = s.start + t * dh;
                                if r >= checked {
                                    let end = (r + 8).min(height);
                                    odd |= odd_rows(&plane[checked * width..end * width]);
                                    checked = end;
                                }
                                rows.push(r * width);
                            }
                            if odd {
                                break;
                            }
                            column_max(plane, &rows, &mut col);
                            for &(c0, at, n) in &pieces {
                                copy_every(&col[c0..], &mut buf[at..at + n], sw, |v| v);
                            }
                            sweep(&buf, &taps, T::BOTTOM, max, &mut acc);
                            // SAFETY: `T` and `MaybeUninit<T>` have the same layout; the
                            // output row gets its `ow` sums.
                            unsafe {
                                std::ptr::copy_nonoverlapping(
                                    acc.as_ptr(),
                                    o_row.as_mut_ptr() as *mut T,
                                    ow,
                                )
                            };
                        }
                        if odd {
                            g.each_segment(
                                p * g.out_plane,
                                g.out_plane,
                                #[inline(always)]
                                |_, rows, ls, at| {
                                    let outs = &mut o[at..at + ls.len()];
                                    max_segment(
                                        g,
                                        plane,
                                        rows,
                                        ls,
                                        outs,
                                        &mut columns,
                                        &mut scratch,
                                    )
                                },
                            );
                        }
                    }
                },
            );
        },
    );
    drop(planes);
    // SAFETY: every plane was written whole (each output row from its row of sums, or, for a
    // plane with a NaN or a −0, by the segments, which cover the plane).
    unsafe { out.set_len(total) };
    tensor_from(&g.out_shape, out)
}

/// The output of `segment(plane, rows, ls, outs, buffers)` over every row segment
/// ([`each_row_segment`]), computed in parallel parts, each part with its own `buffers`.
#[inline(always)]
fn by_segments<T: Sync, O: Element, B: Default>(
    x: &[T],
    g: &Geometry,
    segment: impl Fn(&[T], &[usize], Range<usize>, &mut [MaybeUninit<O>], &mut B) + Sync + Send,
) -> Result<Tensor, EvalError> {
    let total = g.total;
    let mut out: Vec<O> = Vec::with_capacity(total);
    let mut none = vec![(); total];
    for_parts(
        &mut out.spare_capacity_mut()[..total],
        &mut none,
        g.kernel_size,
        |first, part, _| {
            let mut buffers = B::default();
            each_row_segment(
                g,
                x,
                first,
                part,
                #[inline(always)]
                |plane, rows, ls, outs| segment(plane, rows, ls, outs, &mut buffers),
            );
        },
    );
    // SAFETY: every element of every part was written, and the parts cover the output.
    unsafe { out.set_len(total) };
    tensor_from(&g.out_shape, out)
}

/// `segment(plane, rows, ls, outs)` for the output part `part` (its first element `first`),
/// a segment of an output row at a time ([`Geometry::each_segment`]): the data plane, the
/// offsets of the windows' rows in it, the segment's indices along the last axis and its
/// outputs. Compiled for the widest vector unit (`segment` must be `#[inline(always)]`).
#[inline(always)]
fn each_row_segment<T, O>(
    g: &Geometry,
    x: &[T],
    first: usize,
    part: &mut [MaybeUninit<O>],
    mut segment: impl FnMut(&[T], &[usize], Range<usize>, &mut [MaybeUninit<O>]),
) {
    let n = part.len();
    vectorised(
        #[inline(always)]
        || {
            g.each_segment(
                first,
                n,
                #[inline(always)]
                |p, rows, ls, at| {
                    let plane = &x[p * g.plane..(p + 1) * g.plane];
                    let outs = &mut part[at..at + ls.len()];
                    segment(plane, rows, ls, outs)
                },
            )
        },
    );
}

/// One row segment of [`max_values`]; `columns` and `scratch` are buffers.
#[inline(always)]
fn max_segment<T: Pooled>(
    g: &Geometry,
    plane: &[T],
    rows: &[usize],
    ls: Range<usize>,
    outs: &mut [MaybeUninit<T>],
    columns: &mut Vec<T>,
    scratch: &mut Vec<T>,
) {
    let d = g.dilation[2];
    let (Some(&r0), Some(c)) = (rows.first(), covered(&g.spans[2][ls.clone()], d)) else {
        outs.iter_mut().for_each(|o| {
            o.write(T::LOWEST);
        });
        return;
    };
    columns.clear();
    columns.extend_from_slice(&plane[r0 + c.start..r0 + c.end]);
    let mut odd = columns.iter().fold(false, |a, v| a | v.odd());
    for &r in &rows[1..] {
        for (c, &v) in columns.iter_mut().zip(&plane[r + c.start..r + c.end]) {
            odd |= v.odd();
            *c = max_of(*c, v);
        }
    }
    if odd {
        for (o, s) in outs.iter_mut().zip(&g.spans[2][ls]) {
            o.write(window_max(plane, rows, *s, d));
        }
        return;
    }
    fold_columns(g, ls, columns, c.start, T::LOWEST, max_of, scratch);
    for (o, &v) in outs.iter_mut().zip(scratch.iter()) {
        o.write(v);
    }
}

/// The columns (along the last axis) that the windows of `spans` cover, `d` apart; `None`
/// when they have no data element.
#[inline(always)]
fn covered(spans: &[Span], d: usize) -> Option<Range<usize>> {
    let end = |s: &Span| s.start + (s.taps - 1) * d + 1;
    if d == 1 {
        // Undilated, windows without data taps are only at the ends of a row, and the
        // first and last of the others start and end furthest.
        let a = spans.iter().find(|s| s.taps > 0)?;
        let b = spans.iter().rfind(|s| s.taps > 0)?;
        return Some(a.start..end(b));
    }
    // Dilated, a window's first data tap can come after the next one's.
    spans
        .iter()
        .filter(|s| s.taps > 0)
        .fold(None, |c: Option<Range<usize>>, s| {
            Some(c.map_or(s.start..end(s), |c| c.start.min(s.start)..c.end.max(end(s))))
        })
}

/// The folds of the outputs `ls` of a row segment, into `folded` (one per output): each
/// window's column values `cols` (column `c0` first) over its taps folded with `f` in order
/// (`empty` for a window without any). Returns the outputs (counted from the segment's start)
/// whose windows have all their taps in the data, a run in the middle of the row: they go a
/// tap at a time over the run, so that the loops vectorise for strides 1 and 2.
#[inline(always)]
fn fold_columns<A: Copy>(
    g: &Geometry,
    ls: Range<usize>,
    cols: &[A],
    c0: usize,
    empty: A,
    f: impl Fn(A, A) -> A,
    folded: &mut Vec<A>,
) -> Range<usize> {
    let (k, d) = (g.kernel[2], g.dilation[2]);
    let spans = &g.spans[2][ls.clone()];
    let (i0, i1) = (
        g.full.start.clamp(ls.start, ls.end) - ls.start,
        g.full.end.clamp(ls.start, ls.end) - ls.start,
    );
    let one = |s: &Span| {
        if s.taps == 0 {
            empty
        } else {
            let from = s.start - c0;
            let taps = &cols[from..=from + (s.taps - 1) * d];
            taps.iter()
                .step_by(d)
                .skip(1)
                .fold(taps[0], |a, &v| f(a, v))
        }
    };
    folded.clear();
    folded.resize(spans.len(), empty);
    let run = i1 - i0;
    if run > 1 && matches!(g.stride[2], 1 | 2) {
        let from = &cols[spans[i0].start - c0..];
        let acc = &mut folded[i0..i1];
        match g.stride[2] {
            1 => strided_fold::<A, 1>(from, k, d, &f, acc),
            _ => strided_fold::<A, 2>(from, k, d, &f, acc),
        }
    } else {
        for (a, s) in folded[i0..i1].iter_mut().zip(&spans[i0..i1]) {
            *a = one(s);
        }
    }
    for i in (0..i0).chain(i1..spans.len()) {
        folded[i] = one(&spans[i]);
    }
    i0..i1
}

/// `acc[o]` = `cols[o·S + t·d]` folded with `f` over the `k` taps `t` in order (`cols`
/// holds them all): a tap at a time over every output, so that the loops vectorise.
#[inline(always)]
fn strided_fold<A: Copy, const S: usize>(
    cols: &[A],
    k: usize,
    d: usize,
    f: impl Fn(A, A) -> A,
    acc: &mut [A],
) {
    // The whole chunks of `S`, and the last output on its own (its chunk may be cut short).
    let Some((last, most)) = acc.split_last_mut() else {
        return;
    };
    let at = most.len() * S;
    for (a, c) in most.iter_mut().zip(cols.chunks_exact(S)) {
        *a = c[0];
    }
    *last = cols[at];
    for t in 1..k {
        let from = &cols[t * d..];
        for (a, c) in most.iter_mut().zip(from.chunks_exact(S)) {
            *a = f(*a, c[0]);
        }
        *last = f(*last, from[at]);
    }
}

fn max_indexed<T: Pooled, I: Element>(
    x: &[T],
    g: &Geometry,
    index: fn(usize) -> I,
) -> Result<Vec<Tensor>, EvalError> {
    let total = g.total;
    let mut out: Vec<T> = Vec::with_capacity(total);
    let mut idx: Vec<I> = Vec::with_capacity(total);
    let (d, m) = (g.dilation[2], g.index_range.max(1));
    for_parts(
        &mut out.spare_capacity_mut()[..total],
        &mut idx.spare_capacity_mut()[..total],
        g.kernel_size,
        |first, vals: &mut [MaybeUninit<T>], inds: &mut [MaybeUninit<I>]| {
            g.each_segment(first, vals.len(), |p, rows, ls, at| {
                let plane = &x[p * g.plane..(p + 1) * g.plane];
                // The plane's first element's index, modulo the range (its flat index fits a
                // usize: the data is in memory).
                let base = (p * g.plane) % m;
                let n = ls.len();
                let outs = vals[at..at + n].iter_mut().zip(&mut inds[at..at + n]);
                for ((o, oi), s) in outs.zip(&g.spans[2][ls]) {
                    let (v, sp) = window_argmax(plane, rows, *s, d);
                    o.write(v);
                    // `base < m` and `sp <` the plane: no overflow.
                    oi.write(index((base + sp) % m));
                }
            });
        },
    );
    // SAFETY: every element of every part was written, and the parts cover the outputs.
    unsafe {
        out.set_len(total);
        idx.set_len(total);
    }
    Ok(vec![
        tensor_from(&g.out_shape, out)?,
        tensor_from(&g.out_shape, idx)?,
    ])
}

/// The averages of the windows, separably as [`max_values`]: per row segment, the f64 sums
/// of each column over the window's rows (in row order), then each window's sum of its
/// columns in order ([`fold_columns`]), divided (f64) or multiplied by the reciprocal and
/// rounded once.
fn average<T: Real>(x: &[T], g: &Geometry, exclude_pad: bool) -> Result<Tensor, EvalError> {
    // OpenVINO's divisor: the kernel's size when the padding counts (and there is some).
    let whole = (!exclude_pad && g.padded).then_some(g.kernel_size);
    by_segments(
        x,
        g,
        #[inline(always)]
        |plane, rows, ls, outs, (columns, scratch): &mut (Vec<f64>, Vec<f64>)| {
            average_segment(g, whole, plane, rows, ls, outs, columns, scratch)
        },
    )
}

/// One row segment of [`average`] (`whole`: the divisor of every window, if one is);
/// `columns` and `scratch` are buffers.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn average_segment<T: Real>(
    g: &Geometry,
    whole: Option<usize>,
    plane: &[T],
    rows: &[usize],
    ls: Range<usize>,
    outs: &mut [MaybeUninit<T>],
    columns: &mut Vec<f64>,
    scratch: &mut Vec<f64>,
) {
    let spans = &g.spans[2][ls.clone()];
    let (Some(&r0), Some(c)) = (rows.first(), covered(spans, g.dilation[2])) else {
        // Without data: the sum is 0, and so is the average (a divisor of 0 included).
        outs.iter_mut().for_each(|o| {
            o.write(T::narrow(0.0));
        });
        return;
    };
    columns.clear();
    // Sums start at +0, as OpenVINO's reference does (a window of −0s averages to +0).
    columns.extend(
        plane[r0 + c.start..r0 + c.end]
            .iter()
            .map(|v| 0.0 + v.wide()),
    );
    for &r in &rows[1..] {
        for (c, v) in columns.iter_mut().zip(&plane[r + c.start..r + c.end]) {
            *c += v.wide();
        }
    }
    // f64 divides by `count`; the narrower types multiply by its reciprocal `inv` (whose f64
    // rounding is far below their ulp), the same one for every window with all its taps.
    let divisor = |taps: usize| whole.unwrap_or(rows.len() * taps);
    let mean = |sum: f64, count: usize, inv: f64| {
        T::narrow(if T::WIDE {
            sum / count as f64
        } else {
            sum * inv
        })
    };
    let add = |a: f64, v: f64| a + v;
    let full = fold_columns(g, ls, columns, c.start, 0.0, add, scratch);
    // Not 0: the window has rows and all its taps.
    let count = divisor(g.kernel[2]);
    let inv = 1.0 / count as f64;
    for (o, &sum) in outs[full.clone()].iter_mut().zip(&scratch[full.clone()]) {
        o.write(mean(sum, count, inv));
    }
    for i in (0..full.start).chain(full.end..outs.len()) {
        let count = divisor(spans[i].taps);
        outs[i].write(if count == 0 {
            T::narrow(0.0)
        } else {
            mean(scratch[i], count, 1.0 / count as f64)
        });
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use half::{bf16, f16};

    use super::*;
    use crate::memory::Budget;
    use crate::num::{Cast, Num};
    use crate::ops::context::{
        attrs_for_test, inferred_types_for_test, parsed_for_test, tensor_for_test, uniform_for_test,
    };
    use crate::ops::mvn::tests::{Dd, Rng, ulps_f32};
    use crate::ops::spatial::AutoPad;
    use crate::tensor::Value;

    fn t<T: Element>(shape: &[usize], v: Vec<T>) -> Tensor {
        tensor_for_test(shape, v)
    }

    fn op(def: &OpDef, attrs: &[(&str, &str)]) -> Box<dyn Op> {
        let data = attrs_for_test(attrs);
        (def.parse)(&Attrs::new(Some(&data))).expect("valid attributes")
    }

    fn run(o: &dyn Op, x: &Tensor, limit: u64) -> Result<Vec<Tensor>, EvalError> {
        let values = [Value::Tensor(Arc::new(x.clone()))];
        o.eval(&EvalCx::new(&values, Budget { limit, in_use: 0 }))
    }

    /// [`run`] with the indices output read by nothing.
    fn run_unindexed(o: &dyn Op, x: &Tensor) -> Vec<Tensor> {
        let values = [Value::Tensor(Arc::new(x.clone()))];
        let budget = Budget {
            limit: 1 << 24,
            in_use: 0,
        };
        o.eval(&EvalCx::new(&values, budget).unread(0b10)).unwrap()
    }

    use crate::ops::context::f32s_for_test as f32s;

    fn ints(t: &Tensor) -> Vec<i64> {
        crate::shape::types::int_values(t).unwrap()
    }

    fn iota(n: usize) -> Vec<f32> {
        (1..=n).map(|v| v as f32).collect()
    }

    /// The examples of the MaxPool-8 spec (values and indices), on every MaxPool version.
    #[test]
    fn max_spec_examples() {
        let a3 = vec![-1f32, 2.0, 3.0, 4.0, 5.0, -6.0, -7.0, 8.0, 9.0];
        let mut two = a3.clone();
        two.extend([2f32, -1.0, 5.0, 6.0, -7.0, 1.0, 8.0, 2.0, -3.0]);
        type Row = (
            Vec<(&'static str, &'static str)>,
            &'static [usize],
            Vec<f32>,
            &'static [usize],
            Vec<f32>,
            Vec<i64>,
        );
        let rows: Vec<Row> = vec![
            (
                vec![
                    ("strides", "1,1"),
                    ("pads_begin", "1,1"),
                    ("pads_end", "1,1"),
                    ("kernel", "2,2"),
                ],
                &[1, 1, 3, 3],
                a3.clone(),
                &[1, 1, 4, 4],
                // The spec writes -6 (index 5) at (1, 3), whose window is {3, -6}.
                vec![
                    -1.0, 2.0, 3.0, 3.0, 4.0, 5.0, 5.0, 3.0, 4.0, 8.0, 9.0, 9.0, -7.0, 8.0, 9.0,
                    9.0,
                ],
                vec![0, 1, 2, 2, 3, 4, 4, 2, 3, 7, 8, 8, 6, 7, 8, 8],
            ),
            (
                vec![("strides", "1"), ("kernel", "3"), ("auto_pad", "valid")],
                &[1, 1, 7],
                vec![-1.0, 2.0, 3.0, 5.0, -7.0, 9.0, 1.0],
                &[1, 1, 5],
                vec![3.0, 5.0, 5.0, 9.0, 9.0],
                vec![2, 3, 3, 5, 5],
            ),
            (
                vec![
                    ("strides", "1,1"),
                    ("kernel", "2,2"),
                    ("auto_pad", "same_lower"),
                ],
                &[1, 1, 3, 3],
                a3.clone(),
                &[1, 1, 3, 3],
                vec![-1.0, 2.0, 3.0, 4.0, 5.0, 5.0, 4.0, 8.0, 9.0],
                vec![0, 1, 2, 3, 4, 4, 3, 7, 8],
            ),
            (
                vec![
                    ("strides", "1,1"),
                    ("kernel", "2,2"),
                    ("auto_pad", "same_upper"),
                ],
                &[1, 2, 3, 3],
                two,
                &[1, 2, 3, 3],
                vec![
                    5.0, 5.0, 3.0, 8.0, 9.0, 9.0, 8.0, 9.0, 9.0, 6.0, 5.0, 5.0, 8.0, 2.0, 1.0, 8.0,
                    2.0, -3.0,
                ],
                vec![
                    4, 4, 2, 7, 8, 8, 7, 8, 8, 12, 11, 11, 15, 16, 14, 15, 16, 17,
                ],
            ),
            (
                vec![
                    ("strides", "2,2"),
                    ("kernel", "2,2"),
                    ("rounding_type", "ceil"),
                    ("auto_pad", "valid"),
                ],
                &[1, 1, 3, 3],
                a3,
                &[1, 1, 2, 2],
                vec![5.0, 3.0, 8.0, 9.0],
                vec![4, 2, 7, 8],
            ),
            (
                vec![
                    ("strides", "1,1"),
                    ("kernel", "2,2"),
                    ("dilations", "2,2"),
                    ("pads_begin", "1,1"),
                    ("pads_end", "1,1"),
                ],
                &[1, 1, 3, 3],
                iota(9),
                &[1, 1, 3, 3],
                vec![5.0, 6.0, 5.0, 8.0, 9.0, 8.0, 5.0, 6.0, 5.0],
                vec![4, 5, 4, 7, 8, 7, 4, 5, 4],
            ),
            (
                vec![("strides", "1,1"), ("kernel", "2,2"), ("axis", "2")],
                &[1, 2, 3, 3],
                iota(18),
                &[1, 2, 2, 2],
                vec![5.0, 6.0, 8.0, 9.0, 14.0, 15.0, 17.0, 18.0],
                vec![4, 5, 7, 8, 4, 5, 7, 8],
            ),
            // The same with axis 0: indices into the whole tensor.
            (
                vec![("strides", "1,1"), ("kernel", "2,2")],
                &[1, 2, 3, 3],
                iota(18),
                &[1, 2, 2, 2],
                vec![5.0, 6.0, 8.0, 9.0, 14.0, 15.0, 17.0, 18.0],
                vec![4, 5, 7, 8, 13, 14, 16, 17],
            ),
        ];
        for (attrs, shape, x, out_shape, values, indices) in rows {
            let x = t(shape, x);
            for def in [&MAX_POOL_8, &MAX_POOL_14] {
                let got = run(&*op(def, &attrs), &x, 1 << 20).unwrap();
                assert_eq!(got.len(), 2);
                assert_eq!(got[0].shape(), out_shape, "{attrs:?}");
                assert_eq!(f32s(&got[0]), values, "{attrs:?}");
                assert_eq!(got[1].element_type(), ElementType::I64);
                assert_eq!(ints(&got[1]), indices, "{attrs:?}");
            }
            if attrs.iter().all(|(n, _)| *n != "dilations" && *n != "axis") {
                let got = run(&*op(&MAX_POOL_1, &attrs), &x, 1 << 20).unwrap();
                assert_eq!(got.len(), 1);
                assert_eq!(f32s(&got[0]), values, "{attrs:?}");
            }
        }
    }

    /// Indices modulo the dims from the axis on, in either index type.
    #[test]
    fn index_axes_and_types() {
        // [2, 2, 3]: planes of 3; the maximum of each plane is its last element.
        let x = t(&[2, 2, 3], iota(12));
        for (axis, want) in [
            ("0", vec![2, 5, 8, 11]),
            ("-3", vec![2, 5, 8, 11]),
            ("1", vec![2, 5, 2, 5]),
            ("2", vec![2, 2, 2, 2]),
            ("-1", vec![2, 2, 2, 2]),
        ] {
            for ty in ["i32", "i64"] {
                let o = op(
                    &MAX_POOL_14,
                    &[
                        ("strides", "1"),
                        ("kernel", "3"),
                        ("axis", axis),
                        ("index_element_type", ty),
                    ],
                );
                let got = run(&*o, &x, 1 << 20).unwrap();
                assert_eq!(got[1].element_type().to_string(), ty);
                assert_eq!(ints(&got[1]), want, "axis {axis}");
                assert_eq!(f32s(&got[0]), [3.0, 6.0, 9.0, 12.0]);
            }
        }
        // Axis 3 of a 4-D tensor keeps the column.
        let o = op(
            &MAX_POOL_8,
            &[("strides", "1,1"), ("kernel", "2,2"), ("axis", "3")],
        );
        let got = run(&*o, &t(&[1, 1, 3, 3], iota(9)), 1 << 20).unwrap();
        assert_eq!(ints(&got[1]), [1, 2, 1, 2]);
    }

    /// AvgPool's divisors: data elements only, or the whole kernel when the padding counts.
    #[test]
    fn average_by_hand() {
        let x5 = t(&[1, 1, 5], iota(5));
        type Row = (&'static OpDef, Vec<(&'static str, &'static str)>, Vec<f32>);
        let rows: Vec<Row> = vec![
            // Windows [pad, 1], [2, 3], [4, 5].
            (
                &AVG_POOL_1,
                vec![
                    ("kernel", "2"),
                    ("strides", "2"),
                    ("pads_begin", "1"),
                    ("pads_end", "1"),
                    ("exclude-pad", "false"),
                ],
                vec![0.5, 2.5, 4.5],
            ),
            (
                &AVG_POOL_14,
                vec![
                    ("kernel", "2"),
                    ("strides", "2"),
                    ("pads_begin", "1"),
                    ("pads_end", "1"),
                    ("exclude-pad", "true"),
                ],
                vec![1.0, 2.5, 4.5],
            ),
            // AvgPool-16's dilations: windows [1, 3], [2, 4], [3, 5]; with a begin pad of 2,
            // stride 3 and exclude-pad off, [pad, 1] (the pad counts) and [2, 4].
            (
                &AVG_POOL_16,
                vec![("kernel", "2"), ("strides", "1"), ("dilations", "2")],
                vec![2.0, 3.0, 4.0],
            ),
            (
                &AVG_POOL_16,
                vec![
                    ("kernel", "2"),
                    ("strides", "3"),
                    ("dilations", "2"),
                    ("pads_begin", "2"),
                    ("pads_end", "0"),
                    ("exclude-pad", "false"),
                ],
                vec![0.5, 3.0],
            ),
            // Ceil without pads: the last window holds one element, divided by 1 either way.
            (
                &AVG_POOL_1,
                vec![
                    ("kernel", "2"),
                    ("strides", "2"),
                    ("rounding_type", "ceil"),
                    ("exclude-pad", "false"),
                ],
                vec![1.5, 3.5, 5.0],
            ),
            // Ceil with an end pad: the last window [5, pad, past the pad] is divided by the
            // kernel (3) when the padding counts, by 1 when it does not.
            (
                &AVG_POOL_1,
                vec![
                    ("kernel", "3"),
                    ("strides", "2"),
                    ("pads_end", "1"),
                    ("rounding_type", "ceil"),
                    ("exclude-pad", "false"),
                ],
                vec![2.0, 4.0, 5.0 / 3.0],
            ),
            (
                &AVG_POOL_14,
                vec![
                    ("kernel", "3"),
                    ("strides", "2"),
                    ("pads_end", "1"),
                    ("rounding_type", "ceil"),
                    ("exclude-pad", "true"),
                ],
                vec![2.0, 4.0, 5.0],
            ),
            // Left out, exclude-pad is true (OpenVINO's default).
            (
                &AVG_POOL_14,
                vec![
                    ("kernel", "2"),
                    ("strides", "2"),
                    ("pads_begin", "1"),
                    ("pads_end", "1"),
                ],
                vec![1.0, 2.5, 4.5],
            ),
            // same_upper: 5 → 3 with pads (0, 1).
            (
                &AVG_POOL_1,
                vec![
                    ("kernel", "2"),
                    ("strides", "2"),
                    ("auto_pad", "same_upper"),
                    ("exclude-pad", "false"),
                ],
                vec![1.5, 3.5, 2.5],
            ),
            (
                &AVG_POOL_1,
                vec![
                    ("kernel", "2"),
                    ("strides", "2"),
                    ("auto_pad", "same_lower"),
                    ("exclude-pad", "false"),
                ],
                vec![0.5, 2.5, 4.5],
            ),
        ];
        for (def, attrs, want) in rows {
            let got = run(&*op(def, &attrs), &x5, 1 << 20).unwrap();
            assert_eq!(got.len(), 1);
            assert_eq!(f32s(&got[0]), want, "{attrs:?}");
        }
        // 2-D, pads 1 all round.
        let x = t(&[1, 1, 3, 3], iota(9));
        let attrs = |ex| {
            vec![
                ("kernel", "2,2"),
                ("strides", "1,1"),
                ("pads_begin", "1,1"),
                ("pads_end", "1,1"),
                ("exclude-pad", ex),
            ]
        };
        let got = run(&*op(&AVG_POOL_1, &attrs("true")), &x, 1 << 20).unwrap();
        assert_eq!(
            f32s(&got[0]),
            [
                1.0, 1.5, 2.5, 3.0, 2.5, 3.0, 4.0, 4.5, 5.5, 6.0, 7.0, 7.5, 7.0, 7.5, 8.5, 9.0
            ]
        );
        let got = run(&*op(&AVG_POOL_1, &attrs("false")), &x, 1 << 20).unwrap();
        assert_eq!(
            f32s(&got[0]),
            [
                0.25, 0.75, 1.25, 0.75, 1.25, 3.0, 4.0, 2.25, 2.75, 6.0, 7.0, 3.75, 1.75, 3.75,
                4.25, 2.25
            ]
        );
    }

    /// Windows without data elements (ceil rounding past the end, pads beyond the kernel).
    #[test]
    fn windows_in_the_padding() {
        // 4 → 3 windows [1, 2], [3, 4], [pad, past]; ceil_torch keeps 2.
        let x = t(&[1, 1, 4], vec![-1f32, -2.0, -3.0, -4.0]);
        let ceil = [
            ("kernel", "2"),
            ("strides", "2"),
            ("pads_end", "1"),
            ("rounding_type", "ceil"),
        ];
        let got = run(&*op(&MAX_POOL_8, &ceil), &x, 1 << 20).unwrap();
        assert_eq!(f32s(&got[0]), [-1.0, -3.0, f32::MIN]);
        assert_eq!(ints(&got[1]), [0, 2, 0]);
        let got = run(&*op(&MAX_POOL_1, &ceil), &x, 1 << 20).unwrap();
        assert_eq!(f32s(&got[0]), [-1.0, -3.0, f32::MIN]);
        let mut torch = ceil.to_vec();
        torch[3].1 = "ceil_torch";
        let got = run(&*op(&MAX_POOL_14, &torch), &x, 1 << 20).unwrap();
        assert_eq!(f32s(&got[0]), [-1.0, -3.0]);
        for ex in ["true", "false"] {
            let mut a = ceil.to_vec();
            a.push(("exclude-pad", ex));
            let got = run(&*op(&AVG_POOL_1, &a), &x, 1 << 20).unwrap();
            assert_eq!(f32s(&got[0]), [-1.5, -3.5, 0.0], "{ex}");
            a[3].1 = "ceil_torch";
            let got = run(&*op(&AVG_POOL_14, &a), &x, 1 << 20).unwrap();
            assert_eq!(f32s(&got[0]), [-1.5, -3.5], "{ex}");
        }
        // Pads larger than the kernel: MaxPool's leading windows are all padding; on an
        // integer type the lowest value is the minimum. The second plane's index is its own
        // first element.
        let x = t(&[1, 2, 2], vec![5i32, 7, -5, -7]);
        let o = op(
            &MAX_POOL_8,
            &[("kernel", "1"), ("strides", "1"), ("pads_begin", "2")],
        );
        let got = run(&*o, &x, 1 << 20).unwrap();
        assert_eq!(
            ints(&got[0]),
            [
                i32::MIN as i64,
                i32::MIN as i64,
                5,
                7,
                i32::MIN as i64,
                i32::MIN as i64,
                -5,
                -7
            ]
        );
        assert_eq!(ints(&got[1]), [0, 0, 0, 1, 2, 2, 2, 3]);
    }

    /// NaN propagates from its first position; ties and ±0 keep the first; the padding never
    /// wins; values bit for bit.
    #[test]
    fn max_specials() {
        let nan = f32::NAN;
        let payload = f32::from_bits(0x7fc0_1234);
        for (x, want_bits, want_idx) in [
            (vec![1.0, nan, 3.0, payload], nan.to_bits(), 1),
            (vec![1.0, payload, 3.0, nan], payload.to_bits(), 1),
            (vec![nan, 1.0], nan.to_bits(), 0),
            (vec![1.0, 2.0, payload], payload.to_bits(), 2),
            (vec![3.0, 1.0, 3.0], 3f32.to_bits(), 0),
            (vec![1.0, 3.0, 3.0], 3f32.to_bits(), 1),
            (vec![-0.0, 0.0], (-0f32).to_bits(), 0),
            (vec![0.0, -0.0], 0, 0),
            (
                vec![f32::NEG_INFINITY, f32::NEG_INFINITY],
                f32::NEG_INFINITY.to_bits(),
                0,
            ),
        ] {
            let n = x.len().to_string();
            let o = op(&MAX_POOL_8, &[("kernel", &n), ("strides", "1")]);
            let m = run(&*o, &t(&[1, 1, x.len()], x.clone()), 1 << 20).unwrap();
            assert_eq!(f32s(&m[0])[0].to_bits(), want_bits, "{x:?}");
            assert_eq!(ints(&m[1]), [want_idx], "{x:?}");
            let o = op(&MAX_POOL_1, &[("kernel", &n), ("strides", "1")]);
            let m = run(&*o, &t(&[1, 1, x.len()], x.clone()), 1 << 20).unwrap();
            assert_eq!(f32s(&m[0])[0].to_bits(), want_bits, "{x:?}");
        }
        // A NaN in a later row of a 2-D window.
        let mut x = vec![1f32; 9];
        x[7] = nan;
        x[4] = 5.0;
        let o = op(&MAX_POOL_8, &[("kernel", "3,3"), ("strides", "1,1")]);
        let m = run(&*o, &t(&[1, 1, 3, 3], x), 1 << 20).unwrap();
        assert!(f32s(&m[0])[0].is_nan());
        assert_eq!(ints(&m[1]), [7]);
        // A NaN the dilation steps over is not in the window.
        let o = op(
            &MAX_POOL_8,
            &[("kernel", "2"), ("strides", "1"), ("dilations", "2")],
        );
        let m = run(&*o, &t(&[1, 1, 3], vec![1f32, nan, 2.0]), 1 << 20).unwrap();
        assert_eq!((f32s(&m[0]), ints(&m[1])), (vec![2.0], vec![2]));
        // Negative data with padding: the padding never wins.
        let o = op(
            &MAX_POOL_8,
            &[
                ("kernel", "3"),
                ("strides", "1"),
                ("pads_begin", "1"),
                ("pads_end", "1"),
            ],
        );
        let m = run(&*o, &t(&[1, 1, 2], vec![-5f32, -3.0]), 1 << 20).unwrap();
        assert_eq!((f32s(&m[0]), ints(&m[1])), (vec![-3.0, -3.0], vec![1, 1]));
        // AvgPool: IEEE sums.
        let o = op(
            &AVG_POOL_1,
            &[("kernel", "2"), ("strides", "1"), ("exclude-pad", "true")],
        );
        let x = t(&[1, 1, 3], vec![1f32, f32::INFINITY, f32::NEG_INFINITY]);
        let a = f32s(&run(&*o, &x, 1 << 20).unwrap()[0]);
        assert_eq!(a[0], f32::INFINITY);
        assert!(a[1].is_nan());
        // Large f32 values: the f64 sum does not overflow.
        let x = t(&[1, 1, 2], vec![f32::MAX, f32::MAX]);
        assert_eq!(f32s(&run(&*o, &x, 1 << 20).unwrap()[0]), [f32::MAX]);
    }

    /// A MaxPool-8 over 2D planes: kernel 1–4, strides 1–3, dilations 1–2, each pad below
    /// `pads`, floor or ceil rounding; and its attributes as text (for messages).
    fn random_max_pool_2d(pick: &mut impl FnMut(u64) -> usize, pads: u64) -> (Pool, String) {
        let mut pair = |most: u64, least: usize| {
            let a = least + pick(most);
            format!("{a},{}", least + pick(most))
        };
        let kernel = pair(4, 1);
        let strides = pair(3, 1);
        let dilations = pair(2, 1);
        let (pb, pe) = (pair(pads, 0), pair(pads, 0));
        let rounding = ["floor", "ceil"][pick(2)];
        let attrs = [
            ("kernel", kernel.as_str()),
            ("strides", strides.as_str()),
            ("dilations", dilations.as_str()),
            ("pads_begin", pb.as_str()),
            ("pads_end", pe.as_str()),
            ("rounding_type", rounding),
        ];
        let data = attrs_for_test(&attrs);
        let pool = parse_pool(&Attrs::new(Some(&data)), 8, true).unwrap();
        (pool, format!("{attrs:?}"))
    }

    /// MaxPool on integers is exact (extremes included).
    #[test]
    fn integer_planes_match_the_reference_loops() {
        // Integer planes are always taken a tap at a time, the padding `MIN`: a window of
        // `MIN`s and padding still gives `MIN`.
        let mut rng = Rng(11);
        let mut pick = |n: u64| (rng.next() % n) as usize;
        for _ in 0..200 {
            let shape = [1, 1 + pick(2), 1 + pick(9), 1 + pick(9)];
            let (pool, attrs) = random_max_pool_2d(&mut pick, 3);
            let n: usize = shape.iter().product();
            let x: Vec<i32> = (0..n)
                .map(|_| match pick(8) {
                    0 => i32::MIN,
                    v => v as i32 * 100 - 400,
                })
                .collect();
            let wide: Vec<f32> = x.iter().map(|&v| v as f32).collect();
            let Some((out_shape, mut vals, _)) = naive(&pool, &shape, &wide) else {
                continue;
            };
            // A window without data gives the type's lowest value.
            for v in vals.iter_mut().filter(|v| **v == f32::MIN) {
                *v = i32::MIN as f32;
            }
            let got = run_unindexed(&pool, &t(&shape, x));
            assert_eq!(got[0].shape(), out_shape, "{attrs} {shape:?}");
            let got: Vec<f32> = got[0]
                .view::<i32>()
                .unwrap()
                .iter()
                .map(|&v| v as f32)
                .collect();
            assert_eq!(got, vals, "{attrs} {shape:?}");
        }
    }

    #[test]
    fn integer_maxima() {
        let attrs = [("kernel", "2"), ("strides", "1")];
        macro_rules! case {
            ($t:ty, $x:expr, $want:expr, $idx:expr) => {{
                let x: Vec<$t> = $x;
                let n = x.len();
                let got = run(
                    &*op(&MAX_POOL_8, &attrs),
                    &t(&[1, 1, n], x.clone()),
                    1 << 20,
                )
                .unwrap();
                let want: Vec<$t> = $want;
                assert_eq!(
                    got[0]
                        .view::<$t>()
                        .unwrap()
                        .iter()
                        .copied()
                        .collect::<Vec<_>>(),
                    want
                );
                assert_eq!(ints(&got[1]), $idx);
                let got = run(&*op(&MAX_POOL_1, &attrs), &t(&[1, 1, n], x), 1 << 20).unwrap();
                assert_eq!(
                    got[0]
                        .view::<$t>()
                        .unwrap()
                        .iter()
                        .copied()
                        .collect::<Vec<_>>(),
                    want
                );
            }};
        }
        case!(
            i8,
            vec![-128, 127, -1, -1],
            vec![127, 127, -1],
            vec![1, 1, 2]
        );
        case!(u8, vec![0, 255, 254, 3], vec![255, 255, 254], vec![1, 1, 2]);
        case!(i16, vec![-3, -3, -4], vec![-3, -3], vec![0, 1]);
        case!(u16, vec![9, 65535, 0], vec![65535, 65535], vec![1, 1]);
        case!(
            i32,
            vec![i32::MIN, i32::MIN + 1],
            vec![i32::MIN + 1],
            vec![1]
        );
        case!(u32, vec![u32::MAX - 1, u32::MAX], vec![u32::MAX], vec![1]);
        case!(
            i64,
            vec![i64::MAX - 1, i64::MAX, i64::MAX - 2],
            vec![i64::MAX, i64::MAX],
            vec![1, 1]
        );
        case!(
            u64,
            vec![u64::MAX, u64::MAX - 1, (1 << 53) + 1],
            vec![u64::MAX, u64::MAX - 1],
            vec![0, 1]
        );
    }

    /// f16 and bf16: MaxPool exact, AvgPool rounded once from the f64 mean.
    #[test]
    fn narrow_floats() {
        let mut rng = Rng(9);
        let xs: Vec<f64> = (0..2 * 3 * 7 * 6).map(|_| rng.normal() * 10.0).collect();
        let shape = [2, 3, 7, 6];
        let attrs = [
            ("kernel", "3,2"),
            ("strides", "2,2"),
            ("pads_begin", "1,0"),
            ("pads_end", "1,1"),
            ("exclude-pad", "true"),
        ];
        let (max, avg) = (op(&MAX_POOL_1, &attrs), op(&AVG_POOL_1, &attrs));
        let want_avg = run(&*avg, &t(&shape, xs.clone()), 1 << 20).unwrap();
        macro_rules! narrow {
            ($t:ty) => {{
                let h: Vec<$t> = xs.iter().map(|&v| <$t>::from_f64(v)).collect();
                let w: Vec<f64> = h.iter().map(|v| v.to_f64()).collect();
                let m64 = run(&*max, &t(&shape, w.clone()), 1 << 20).unwrap();
                let a64 = run(&*avg, &t(&shape, w), 1 << 20).unwrap();
                let m = run(&*max, &t(&shape, h.clone()), 1 << 20).unwrap();
                let a = run(&*avg, &t(&shape, h), 1 << 20).unwrap();
                let m64 = m64[0].view::<f64>().unwrap();
                let a64 = a64[0].view::<f64>().unwrap();
                for (e, &y) in m[0].view::<$t>().unwrap().iter().enumerate() {
                    assert_eq!(y.to_f64(), *m64.iter().nth(e).unwrap());
                }
                for (e, &y) in a[0].view::<$t>().unwrap().iter().enumerate() {
                    // The f64 path's mean is the same sum and division.
                    let mean = *a64.iter().nth(e).unwrap();
                    assert_eq!(y, <$t as Cast>::from_num(Num::Float(mean)));
                }
            }};
        }
        narrow!(f16);
        narrow!(bf16);
        assert_eq!(want_avg[0].shape(), [2, 3, 4, 3]);
    }

    /// OpenVINO's reference loops (every tap of every window tested against the data's bounds)
    /// with ovir's NaN policy: the output shape, the values, and the indices (axis 0).
    fn naive(p: &Pool, shape: &[usize], x: &[f32]) -> Option<(Vec<usize>, Vec<f32>, Vec<usize>)> {
        let k = p.kernel.len();
        let mut ax = vec![(1usize, 1usize, 1usize, 1usize, 1usize, 0i64); 3 - k];
        let mut padded = false;
        let mut out_shape = shape[..2].to_vec();
        for i in 0..k {
            let a = p
                .window
                .forward_static(
                    Rule::Pooling(p.rounding),
                    i,
                    shape[2 + i],
                    p.kernel[i] as usize,
                )
                .ok()?;
            padded |= a.pad_begin + a.pad_end > 0;
            out_shape.push(a.out);
            ax.push((
                shape[2 + i],
                a.out,
                p.kernel[i] as usize,
                p.window.stride(i) as usize,
                p.window.dilation(i) as usize,
                a.pad_begin as i64,
            ));
        }
        let plane: usize = shape[2..].iter().product();
        let (mut vals, mut idx) = (Vec::new(), Vec::new());
        for pl in 0..shape[0] * shape[1] {
            for o0 in 0..ax[0].1 {
                for o1 in 0..ax[1].1 {
                    for o2 in 0..ax[2].1 {
                        let o = [o0, o1, o2];
                        let (mut best, mut at, mut nan) = (None::<f32>, 0usize, false);
                        let (mut sum, mut count) = (0f64, 0usize);
                        for t0 in 0..ax[0].2 {
                            for t1 in 0..ax[1].2 {
                                for t2 in 0..ax[2].2 {
                                    let tap = [t0, t1, t2];
                                    let mut flat = 0usize;
                                    let mut inside = true;
                                    for a in 0..3 {
                                        let pos =
                                            (o[a] * ax[a].3 + tap[a] * ax[a].4) as i64 - ax[a].5;
                                        inside &= pos >= 0 && (pos as usize) < ax[a].0;
                                        flat = flat * ax[a].0 + pos.max(0) as usize;
                                    }
                                    if !inside {
                                        continue;
                                    }
                                    let v = x[pl * plane + flat];
                                    sum += v as f64;
                                    count += 1;
                                    if nan {
                                        continue;
                                    }
                                    if best.is_none_or(|b| v > b || v.is_nan()) {
                                        best = Some(v);
                                        at = flat;
                                        nan = v.is_nan();
                                    }
                                }
                            }
                        }
                        match p.kind {
                            Kind::Max { .. } => {
                                vals.push(best.unwrap_or(f32::MIN));
                                idx.push(pl * plane + at);
                            }
                            Kind::Avg { exclude_pad } => {
                                if !exclude_pad && padded {
                                    count = p.kernel.iter().product::<u64>() as usize;
                                }
                                vals.push(if count == 0 {
                                    0.0
                                } else {
                                    (sum / count as f64) as f32
                                });
                            }
                        }
                    }
                }
            }
        }
        Some((out_shape, vals, idx))
    }

    #[test]
    fn wide_planes_match_the_reference_loops() {
        // Rows of up to 40 (blocks of 16 and a last overlapping one) and up to 40 rows (the
        // NaN and −0 check 8 rows at a time); in two cases of three one NaN or −0 somewhere in
        // the plane, so that a plane can turn to the window-order path after some rows.
        let mut rng = Rng(11);
        let mut pick = |n: u64| (rng.next() % n) as usize;
        let mut checked = 0;
        for case in 0..300 {
            let shape = [1 + pick(2), 1 + pick(3), 1 + pick(40), 1 + pick(40)];
            let (pool, attrs) = random_max_pool_2d(&mut pick, 2);
            let n: usize = shape.iter().product();
            let mut x: Vec<f32> = (0..n).map(|_| (pick(9) as f32 - 4.0) * 0.5).collect();
            let odd = [f32::NAN, -0.0, f32::NAN];
            if case % 3 != 0 {
                x[pick(n as u64)] = odd[case % 3];
            }
            let Some((out_shape, vals, _)) = naive(&pool, &shape, &x) else {
                continue;
            };
            let got = run_unindexed(&pool, &t(&shape, x));
            assert_eq!(got[0].shape(), out_shape, "{attrs} {shape:?}");
            for (e, (&g, &w)) in f32s(&got[0]).iter().zip(&vals).enumerate() {
                assert_eq!(g.to_bits(), w.to_bits(), "{attrs} {shape:?} element {e}");
            }
            checked += 1;
        }
        assert!(checked > 200, "{checked}");
    }

    /// Random geometries (1 to 3 axes, every auto_pad and rounding, dilations, pads beyond the
    /// kernel, NaNs and ties) against [`naive`]: the same bits and indices.
    #[test]
    fn random_geometries_match_the_reference_loops() {
        let mut rng = Rng(5);
        let mut pick = |n: u64| (rng.next() % n) as usize;
        let (mut checked, mut refused) = (0, 0);
        for case in 0..600 {
            let k = 1 + pick(3);
            let list = |f: &mut dyn FnMut() -> usize| {
                (0..k)
                    .map(|_| f().to_string())
                    .collect::<Vec<_>>()
                    .join(",")
            };
            let mut shape = vec![1 + pick(2), 1 + pick(2)];
            shape.extend((0..k).map(|_| 1 + pick(7)));
            let kernel = list(&mut || 1 + pick(4));
            let strides = list(&mut || 1 + pick(3));
            let dilations = list(&mut || 1 + pick(2));
            let pb = list(&mut || pick(3));
            let pe = list(&mut || pick(3));
            let auto_pad = ["explicit", "valid", "same_upper", "same_lower"][pick(4)];
            let rounding = ["floor", "ceil", "ceil_torch"][pick(3)];
            let axis = (pick(2 * (k as u64 + 2)) as i64 - (k as i64 + 2)).to_string();
            let exclude = ["true", "false"][pick(2)];
            let def = [&MAX_POOL_14, &AVG_POOL_14][case % 2];
            let mut attrs = vec![
                ("kernel", kernel.as_str()),
                ("strides", strides.as_str()),
                ("pads_begin", pb.as_str()),
                ("pads_end", pe.as_str()),
                ("auto_pad", auto_pad),
                ("rounding_type", rounding),
            ];
            if case % 2 == 0 {
                attrs.extend([("dilations", dilations.as_str()), ("axis", axis.as_str())]);
            } else {
                attrs.push(("exclude-pad", exclude));
            }
            let data = attrs_for_test(&attrs);
            let Ok(pool) = parse_pool(&Attrs::new(Some(&data)), 14, case % 2 == 0) else {
                // AvgPool with exclude-pad and pads not below the kernel.
                refused += 1;
                continue;
            };
            assert_eq!(pool.def().map(OpDef::title), Some(def.title()));
            let n: usize = shape.iter().product();
            // NaNs of two payloads and −0 among small integers: the maxima's bits depend on
            // the order the window is taken in. Every other MaxPool case has neither (a plane
            // of such values may be taken a tap at a time), but −∞ and the extremes.
            let clean = case % 4 == 0;
            let x: Vec<f32> = (0..n)
                .map(|_| match (pick(40), clean) {
                    (0, false) => f32::NAN,
                    (1, false) => f32::from_bits(0x7fc0_1234),
                    (2 | 3, false) => -0.0,
                    (0, true) => f32::NEG_INFINITY,
                    (1, true) => f32::MIN,
                    (2, true) => f32::MAX,
                    (v, _) => (v % 5) as f32 - 2.0,
                })
                .collect();
            let o: &dyn Op = &pool;
            let got = run(o, &t(&shape, x.clone()), 1 << 24);
            let Some((out_shape, vals, idx)) = naive(&pool, &shape, &x) else {
                assert!(matches!(got, Err(EvalError::Invalid(_))), "{attrs:?}");
                continue;
            };
            let got = got.unwrap();
            assert_eq!(got[0].shape(), out_shape, "{attrs:?} {shape:?}");
            // Maxima bit for bit (the first NaN's payload); a NaN average is any NaN.
            let max = case % 2 == 0;
            let same =
                |a: f32, b: f32| a.to_bits() == b.to_bits() || (!max && a.is_nan() && b.is_nan());
            for (e, (&g, &w)) in f32s(&got[0]).iter().zip(&vals).enumerate() {
                assert!(same(g, w), "{attrs:?} {shape:?} element {e}: {g} vs {w}");
            }
            if let Kind::Max {
                indices: Some((_, axis)),
            } = pool.kind
            {
                // The maxima alone (no indices computed) are the same.
                let alone = run_unindexed(o, &t(&shape, x.clone()));
                assert_eq!(alone[1].len(), 0);
                for (e, (&g, &w)) in f32s(&alone[0]).iter().zip(&vals).enumerate() {
                    assert!(
                        same(g, w),
                        "{attrs:?} {shape:?} element {e} alone: {g} vs {w}"
                    );
                }
                let m: usize = shape[axis..].iter().product();
                let want: Vec<i64> = idx.iter().map(|&i| (i % m) as i64).collect();
                assert_eq!(ints(&got[1]), want, "{attrs:?} {shape:?}");
            }
            checked += 1;
        }
        assert!(checked > 300 && refused > 0, "{checked} {refused}");
    }

    #[test]
    fn f32_average_of_long_rows_against_a_double_double_reference() {
        let mut rng = Rng(71);
        let mut worst: f64 = 0.0;
        for (shape, kernel, strides) in [
            (&[1usize, 4, 40, 40][..], "40,40", "1,1"),
            (&[1, 2, 9, 50], "3,33", "2,5"),
            (&[2, 3, 70], "70", "1"),
            (&[1, 2, 7, 7], "7,7", "1,1"),
        ] {
            for &offset in &[0.0, 100.0] {
                let n: usize = shape.iter().product();
                let x: Vec<f32> = (0..n).map(|_| (offset + rng.normal()) as f32).collect();
                let o = op(
                    &AVG_POOL_1,
                    &[
                        ("kernel", kernel),
                        ("strides", strides),
                        ("exclude-pad", "true"),
                    ],
                );
                let got = f32s(&run(&*o, &t(shape, x.clone()), 1 << 26).unwrap()[0]);
                // The exact means, windows without padding.
                let k: Vec<usize> = kernel.split(',').map(|v| v.parse().unwrap()).collect();
                let s: Vec<usize> = strides.split(',').map(|v| v.parse().unwrap()).collect();
                let (h, w) = if k.len() == 2 {
                    (shape[2], shape[3])
                } else {
                    (1, shape[2])
                };
                let (kh, kw, sh, sw) = if k.len() == 2 {
                    (k[0], k[1], s[0], s[1])
                } else {
                    (1, k[0], 1, s[0])
                };
                let (oh, ow) = ((h - kh) / sh + 1, (w - kw) / sw + 1);
                for (e, &y) in got.iter().enumerate() {
                    let (pl, q) = (e / (oh * ow), e % (oh * ow));
                    let (i, j) = (q / ow, q % ow);
                    let mut sum = Dd(0.0, 0.0);
                    for r in 0..kh {
                        for c in 0..kw {
                            let v = x[pl * h * w + (i * sh + r) * w + j * sw + c];
                            sum = sum.add(Dd(v as f64, 0.0));
                        }
                    }
                    let want = sum.div(Dd((kh * kw) as f64, 0.0)).0;
                    let err = ulps_f32(y, want);
                    worst = worst.max(err);
                }
            }
        }
        assert!(worst <= 0.5 + 1e-6, "{worst}");
    }

    #[test]
    fn same_bits_at_1_and_3_threads() {
        let pool = |k| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(k)
                .build()
                .unwrap()
        };
        type Case = (
            &'static OpDef,
            &'static [usize],
            Vec<(&'static str, &'static str)>,
        );
        let cases: Vec<Case> = vec![
            (
                &MAX_POOL_8,
                &[2, 64, 56, 56],
                vec![
                    ("kernel", "3,3"),
                    ("strides", "2,2"),
                    ("pads_begin", "1,1"),
                    ("pads_end", "1,1"),
                ],
            ),
            (
                &MAX_POOL_1,
                &[1, 64, 57, 57],
                vec![
                    ("kernel", "3,3"),
                    ("strides", "2,2"),
                    ("rounding_type", "ceil"),
                ],
            ),
            (
                &AVG_POOL_14,
                &[1, 32, 28, 28],
                vec![
                    ("kernel", "3,3"),
                    ("strides", "1,1"),
                    ("pads_begin", "1,1"),
                    ("pads_end", "1,1"),
                    ("exclude-pad", "false"),
                ],
            ),
            (
                &AVG_POOL_1,
                &[1, 512, 9, 40],
                vec![
                    ("kernel", "9,40"),
                    ("strides", "1,1"),
                    ("exclude-pad", "true"),
                ],
            ),
            (
                &MAX_POOL_14,
                &[1, 8, 20, 20, 20],
                vec![
                    ("kernel", "3,3,3"),
                    ("strides", "2,2,2"),
                    ("dilations", "1,2,1"),
                    ("auto_pad", "same_upper"),
                ],
            ),
        ];
        for (def, shape, attrs) in cases {
            let n: usize = shape.iter().product();
            let x = t(shape, uniform_for_test(n, 5, -3.0, 3.0));
            let o = op(def, &attrs);
            let go = |k: usize| {
                pool(k).install(|| {
                    run(&*o, &x, 1 << 28)
                        .unwrap()
                        .iter()
                        .map(|t| t.to_le_bytes())
                        .collect::<Vec<_>>()
                })
            };
            assert_eq!(go(1), go(3), "{def:?} {shape:?}");
        }
    }

    #[test]
    fn parse_table() {
        let window =
            |strides: &[u64], dilations: Option<&[u64]>, pb: &[u64], pe: &[u64], ap| Window {
                strides: strides.to_vec(),
                dilations: dilations.map(<[u64]>::to_vec),
                pads_begin: pb.to_vec(),
                pads_end: pe.to_vec(),
                auto_pad: ap,
            };
        let max1 = Pool {
            version: 1,
            kind: Kind::Max { indices: None },
            kernel: vec![3, 3],
            window: window(&[2, 2], None, &[1, 1], &[], AutoPad::Explicit),
            rounding: Rounding::Floor,
        };
        assert_eq!(
            parsed_for_test(
                &MAX_POOL_1,
                &[
                    ("kernel", "3,3"),
                    ("strides", "2,2"),
                    ("pads_begin", "1,1"),
                    ("dilations", "2,2"),
                ]
            ),
            Ok(format!("{max1:?}"))
        );
        let max8 = Pool {
            version: 8,
            kind: Kind::Max {
                indices: Some((ElementType::I32, 3)),
            },
            kernel: vec![2, 2],
            window: window(&[1, 1], Some(&[2, 1]), &[], &[], AutoPad::SameLower),
            rounding: Rounding::Ceil,
        };
        assert_eq!(
            parsed_for_test(
                &MAX_POOL_8,
                &[
                    ("kernel", "2,2"),
                    ("strides", ""),
                    ("dilations", "2,1"),
                    ("auto_pad", "same_lower"),
                    ("rounding_type", "CEIL"),
                    ("index_element_type", "i32"),
                    ("axis", "-1"),
                ]
            ),
            Ok(format!("{max8:?}"))
        );
        let avg14 = Pool {
            version: 14,
            kind: Kind::Avg { exclude_pad: false },
            kernel: vec![2],
            window: window(&[2], None, &[5], &[5], AutoPad::Explicit),
            rounding: Rounding::CeilTorch,
        };
        assert_eq!(
            parsed_for_test(
                &AVG_POOL_14,
                &[
                    ("kernel", "2"),
                    ("strides", "2"),
                    ("pads_begin", "5"),
                    ("pads_end", "5"),
                    ("exclude-pad", "false"),
                    ("rounding_type", "ceil_torch"),
                ]
            ),
            Ok(format!("{avg14:?}"))
        );
        for (def, attrs, want) in [
            (&MAX_POOL_1, vec![("strides", "1")], vec!["kernel None: "]),
            (
                &MAX_POOL_1,
                vec![("kernel", "2,0"), ("strides", "1,1")],
                vec!["kernel Some(\"2,0\"): must be at least 1, but is 0 on spatial axis 1"],
            ),
            (
                &AVG_POOL_1,
                vec![("kernel", "1,1,1,1"), ("strides", "1")],
                vec![
                    "kernel Some(\"1,1,1,1\"): expected 1 to 3 values (one per spatial axis), not 4",
                ],
            ),
            (
                &AVG_POOL_1,
                vec![("kernel", "2,2"), ("strides", "1")],
                vec![
                    "strides Some(\"1\"): strides has 1 value but the data has 2 spatial axes (as many as the kernel has values)",
                ],
            ),
            (
                &MAX_POOL_8,
                vec![("kernel", "2,2"), ("strides", "1,0")],
                vec![
                    "strides Some(\"1,0\"): strides must be at least 1, but is 0 on spatial axis 1 (as many as the kernel has values)",
                ],
            ),
            (
                &MAX_POOL_14,
                vec![("kernel", "2"), ("strides", "1"), ("dilations", "1,1")],
                vec![
                    "dilations Some(\"1,1\"): dilations has 2 values but the data has 1 spatial axis (as many as the kernel has values)",
                ],
            ),
            (
                &MAX_POOL_8,
                vec![("kernel", "2"), ("strides", "1"), ("pads_end", "0,0")],
                vec![
                    "pads_end Some(\"0,0\"): pads_end has 2 values but the data has 1 spatial axis (as many as the kernel has values)",
                ],
            ),
            (
                &MAX_POOL_8,
                vec![
                    ("kernel", "2"),
                    ("strides", "1"),
                    ("rounding_type", "ceil_torch"),
                ],
                vec![
                    "rounding_type Some(\"ceil_torch\"): ceil_torch is not an option of version 8; expected floor or ceil",
                ],
            ),
            (
                &AVG_POOL_1,
                vec![
                    ("kernel", "2"),
                    ("strides", "1"),
                    ("rounding_type", "round"),
                ],
                vec!["rounding_type Some(\"round\"): expected floor, ceil or ceil_torch"],
            ),
            (
                &MAX_POOL_14,
                vec![("kernel", "2,2"), ("strides", "1,1"), ("axis", "4")],
                vec![
                    "axis Some(\"4\"): the data has rank 4 (the kernel has 2 values), so the axis is in [-4, 3]",
                ],
            ),
            (
                &MAX_POOL_14,
                vec![("kernel", "2"), ("strides", "1"), ("axis", "-4")],
                vec![
                    "axis Some(\"-4\"): the data has rank 3 (the kernel has 1 values), so the axis is in [-3, 2]",
                ],
            ),
            (
                &MAX_POOL_8,
                vec![
                    ("kernel", "2"),
                    ("strides", "1"),
                    ("index_element_type", "u8"),
                ],
                vec!["index_element_type Some(\"u8\"): MaxPool's index_element_type is i32 or i64"],
            ),
            (
                &AVG_POOL_14,
                vec![("kernel", "2"), ("strides", "1"), ("exclude-pad", "maybe")],
                vec!["exclude-pad Some(\"maybe\"): expected true, false, 1 or 0"],
            ),
            (
                &AVG_POOL_14,
                vec![
                    ("kernel", "2,3"),
                    ("strides", "1,1"),
                    ("pads_begin", "1,3"),
                    ("pads_end", "2,0"),
                ],
                vec![
                    "pads_begin Some(\"1,3\"): pads_begin is 3 on spatial axis 1, not less than the kernel's 3: with exclude-pad a window could lie entirely in the padding",
                    "pads_end Some(\"2,0\"): pads_end is 2 on spatial axis 0, not less than the kernel's 2: with exclude-pad a window could lie entirely in the padding",
                ],
            ),
            // Several problems at once.
            (
                &MAX_POOL_8,
                vec![("kernel", "x"), ("auto_pad", "same"), ("axis", "z")],
                vec![
                    "kernel Some(\"x\"): expected non-negative integers separated by commas",
                    "axis Some(\"z\"): expected an integer",
                    "strides None: ",
                    "auto_pad Some(\"same\"): expected explicit, notset, valid, same_upper or same_lower",
                ],
            ),
        ] {
            assert_eq!(
                parsed_for_test(def, &attrs),
                Err(want.iter().map(|s| s.to_string()).collect::<Vec<_>>()),
                "{attrs:?}"
            );
        }
        // Pads at least the kernel are fine without exclude-pad, and in MaxPool.
        for (def, ex) in [(&AVG_POOL_1, "false"), (&MAX_POOL_1, "true")] {
            let attrs = [
                ("kernel", "2"),
                ("strides", "1"),
                ("pads_begin", "3"),
                ("exclude-pad", ex),
            ];
            assert!(parsed_for_test(def, &attrs).is_ok());
        }
        // same_* pads are always below the kernel: no check.
        let attrs = [
            ("kernel", "2"),
            ("strides", "1"),
            ("pads_begin", "3"),
            ("auto_pad", "same_upper"),
        ];
        assert!(parsed_for_test(&AVG_POOL_1, &attrs).is_ok());
    }

    /// The inferred outputs (type and shape) as text, or the findings.
    fn infer(o: &dyn Op, ty: ElementType, shape: &str) -> Result<String, String> {
        let data = TensorType::new(ty, PartialShape::parse(shape).unwrap());
        inferred_types_for_test(o, &[&data])
    }

    #[test]
    fn inference() {
        let f = ElementType::F32;
        type Row = (
            &'static OpDef,
            Vec<(&'static str, &'static str)>,
            &'static str,
            &'static str,
        );
        let rows: Vec<Row> = vec![
            // ResNet's stem pool.
            (
                &MAX_POOL_1,
                vec![
                    ("kernel", "3,3"),
                    ("strides", "2,2"),
                    ("pads_begin", "1,1"),
                    ("pads_end", "1,1"),
                ],
                "1,64,112,112",
                "f32[1,64,56,56]",
            ),
            (
                &MAX_POOL_8,
                vec![
                    ("kernel", "2,2"),
                    ("strides", "2,2"),
                    ("pads_begin", "1,1"),
                    ("pads_end", "1,1"),
                ],
                "1,3,32,32",
                "f32[1,3,17,17] i64[1,3,17,17]",
            ),
            (
                &MAX_POOL_14,
                vec![
                    ("kernel", "2,2"),
                    ("strides", "2,2"),
                    ("pads_begin", "1,1"),
                    ("pads_end", "1,1"),
                    ("auto_pad", "valid"),
                    ("index_element_type", "i32"),
                ],
                "1,3,32,32",
                "f32[1,3,16,16] i32[1,3,16,16]",
            ),
            (
                &MAX_POOL_1,
                vec![
                    ("kernel", "2,2"),
                    ("strides", "2,2"),
                    ("auto_pad", "same_upper"),
                ],
                "1,3,31,32",
                "f32[1,3,16,16]",
            ),
            (
                &AVG_POOL_1,
                vec![
                    ("kernel", "3"),
                    ("strides", "1"),
                    ("auto_pad", "same_lower"),
                ],
                "1,1,7",
                "f32[1,1,7]",
            ),
            (
                &AVG_POOL_1,
                vec![("kernel", "3"), ("strides", "2")],
                "1,1,6",
                "f32[1,1,2]",
            ),
            (
                &AVG_POOL_1,
                vec![("kernel", "3"), ("strides", "2"), ("rounding_type", "ceil")],
                "1,1,6",
                "f32[1,1,3]",
            ),
            (
                &AVG_POOL_14,
                vec![
                    ("kernel", "2"),
                    ("strides", "2"),
                    ("pads_end", "1"),
                    ("rounding_type", "ceil"),
                ],
                "1,1,4",
                "f32[1,1,3]",
            ),
            (
                &AVG_POOL_14,
                vec![
                    ("kernel", "2"),
                    ("strides", "2"),
                    ("pads_end", "1"),
                    ("rounding_type", "ceil_torch"),
                ],
                "1,1,4",
                "f32[1,1,2]",
            ),
            (
                &MAX_POOL_8,
                vec![("kernel", "3,3"), ("strides", "1,1"), ("dilations", "2,3")],
                "1,1,7,9",
                "f32[1,1,3,3] i64[1,1,3,3]",
            ),
            // Global average pooling, 3-D pooling.
            (
                &AVG_POOL_1,
                vec![("kernel", "7,7"), ("strides", "1,1")],
                "1,2048,7,7",
                "f32[1,2048,1,1]",
            ),
            (
                &MAX_POOL_1,
                vec![("kernel", "2,2,2"), ("strides", "2,2,2")],
                "2,3,4,5,6",
                "f32[2,3,2,2,3]",
            ),
            // Intervals and dynamic dims.
            (
                &MAX_POOL_1,
                vec![("kernel", "3"), ("strides", "2")],
                "?,3..5,10..20",
                "f32[?,3..5,4..9]",
            ),
            (
                &MAX_POOL_8,
                vec![
                    ("kernel", "3,3"),
                    ("strides", "2,2"),
                    ("auto_pad", "same_upper"),
                ],
                "1,3,?,8",
                "f32[1,3,?,4] i64[1,3,?,4]",
            ),
            (
                &AVG_POOL_1,
                vec![("kernel", "3"), ("strides", "2"), ("rounding_type", "ceil")],
                "1,1,1..10",
                "f32[1,1,1..5]",
            ),
            (
                &MAX_POOL_8,
                vec![("kernel", "3,3"), ("strides", "2,2")],
                "...",
                "f32[?,?,?,?] i64[?,?,?,?]",
            ),
            // An empty batch.
            (
                &MAX_POOL_1,
                vec![("kernel", "3"), ("strides", "2")],
                "0,3,9",
                "f32[0,3,4]",
            ),
        ];
        for (def, attrs, data, want) in rows {
            assert_eq!(
                infer(&*op(def, &attrs), f, data).as_deref(),
                Ok(want),
                "{def:?} {attrs:?} {data}"
            );
        }
        let k2 = [("kernel", "2,2"), ("strides", "1,1")];
        for (def, attrs, data, want) in [
            (
                &MAX_POOL_1,
                &k2[..],
                "1,3,8",
                "Some((Input, 0)) the data has rank 3, but MaxPool with a kernel of 2 values takes data of rank 4 ([N, C] and 2 spatial axes)",
            ),
            (
                &AVG_POOL_14,
                &k2[..],
                "1,3,8,8,8",
                "the data has rank 5, but AvgPool with a kernel of 2 values takes data of rank 4",
            ),
            (
                &MAX_POOL_8,
                &[("kernel", "5"), ("strides", "1"), ("pads_end", "1")][..],
                "1,1,3",
                "Some((Input, 0)) the kernel spans 5 elements after dilation on spatial axis 0, more than the padded data's 4",
            ),
            (
                &MAX_POOL_8,
                &[("kernel", "3"), ("strides", "1"), ("dilations", "3")][..],
                "1,1,6",
                "the kernel spans 7 elements",
            ),
        ] {
            let m = infer(&*op(def, attrs), f, data).unwrap_err();
            assert!(m.contains(want), "{m}");
        }
        // Types: MaxPool any numeric type, AvgPool floats.
        let max = op(&MAX_POOL_8, &k2);
        let avg = op(&AVG_POOL_1, &k2);
        assert_eq!(
            infer(&*max, ElementType::U8, "1,1,3,3").as_deref(),
            Ok("u8[1,1,2,2] i64[1,1,2,2]")
        );
        assert_eq!(
            infer(&*avg, ElementType::Bf16, "1,1,3,3").as_deref(),
            Ok("bf16[1,1,2,2]")
        );
        let m = infer(&*max, ElementType::Boolean, "1,1,3,3").unwrap_err();
        assert!(m.contains("MaxPool does not accept boolean"), "{m}");
        let m = infer(&*avg, ElementType::I32, "1,1,3,3").unwrap_err();
        assert!(m.contains("AvgPool does not accept i32"), "{m}");
    }

    #[test]
    fn execution_errors_and_budget() {
        let o = op(&MAX_POOL_8, &[("kernel", "2,2"), ("strides", "1,1")]);
        for (x, want) in [
            (
                t(&[1, 2, 4], vec![1f32; 8]),
                "the data has rank 3, but MaxPool with a kernel of 2 values takes data of rank 4",
            ),
            (
                t(&[1, 1, 1, 4], vec![1f32; 4]),
                "the kernel spans 2 elements after dilation on spatial axis 0",
            ),
        ] {
            match run(&*o, &x, 1 << 20) {
                Err(EvalError::Invalid(m)) => assert!(m.contains(want), "{m}"),
                other => panic!("{other:?}"),
            }
        }
        // Booleans are refused; an empty batch gives an empty output.
        let got = run(&*o, &t(&[1, 1, 2, 2], vec![true; 4]), 1 << 20);
        assert!(
            matches!(got, Err(EvalError::UnsupportedType { .. })),
            "{got:?}"
        );
        let avg = op(&AVG_POOL_1, &[("kernel", "2,2"), ("strides", "1,1")]);
        let got = run(&*avg, &t(&[1, 1, 2, 2], vec![1i32; 4]), 1 << 20);
        assert!(
            matches!(got, Err(EvalError::UnsupportedType { .. })),
            "{got:?}"
        );
        let got = run(&*o, &t(&[0, 2, 3, 3], Vec::<f32>::new()), 1 << 20).unwrap();
        assert_eq!(got[0].shape(), [0, 2, 2, 2]);
        assert_eq!(got[1].shape(), [0, 2, 2, 2]);
        // The budget counts both outputs: 64K f32 values and 64K i64 indices.
        let big = t(&[1, 4, 128, 128], vec![1f32; 1 << 16]);
        let o = op(&MAX_POOL_8, &[("kernel", "1,1"), ("strides", "1,1")]);
        assert!(matches!(run(&*o, &big, 700_000), Err(EvalError::Memory(_))));
        assert!(run(&*o, &big, 800_000).is_ok());
        // Maxima a plane at a time: each thread's row copy, sums and column maxima too (a row
        // each).
        let o = op(&MAX_POOL_1, &[("kernel", "1,1"), ("strides", "1,1")]);
        let need = 4 * (1 << 16) + rayon::current_num_threads() as u64 * 4 * 3 * 128;
        assert!(matches!(
            run(&*o, &big, need - 1),
            Err(EvalError::Memory(_))
        ));
        assert!(run(&*o, &big, need).is_ok());
        let o = op(&AVG_POOL_1, &[("kernel", "1,1"), ("strides", "1,1")]);
        assert!(matches!(run(&*o, &big, 200_000), Err(EvalError::Memory(_))));
        assert!(run(&*o, &big, 300_000).is_ok());
    }
}
