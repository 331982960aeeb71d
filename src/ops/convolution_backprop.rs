//! ConvolutionBackpropData-1 and GroupConvolutionBackpropData-1: the transposed convolution
//! (the gradient of a convolution with respect to its data).
//!
//! Specs: <https://docs.openvino.ai/2026/documentation/openvino-ir-format/operation-sets/operation-specs/convolution/convolution-backprop-data-1.html>
//! and <https://docs.openvino.ai/2026/documentation/openvino-ir-format/operation-sets/operation-specs/convolution/group-convolution-backprop-data-1.html>.
//!
//! Ports: `data` `[N, C_IN, x…]` of rank 3, 4 or 5 and `filters` of one numeric type
//! (boolean is refused, E502) — ConvolutionBackpropData's filters `[C_IN, C_OUT, k…]`, the
//! group form's `[G, C_IN/G, C_OUT/G, k…]`; an optional `output_shape` (port 2: a 1-D tensor of
//! any integer type, one value per spatial axis). One output `[N, C_OUT, y…]` of the inputs'
//! type, where `out[n, g·C_OUT/G + m, y] = Σ data[n, g·C_IN/G + c, x] · filters[g, c, m, t]`
//! over the group's input channels `c`, the kernel taps `t` and the data positions `x` with
//! `x·s + t·d = y + p_b` (each axis), `p_b` the begin pad.
//!
//! Attributes: `strides`, `dilations` (required), `pads_begin`, `pads_end`, `auto_pad` as a
//! Convolution's, and `output_padding` (default zeros; empty or one value per spatial axis).
//! The output's spatial dims are `output_shape`'s values when it is given, else
//! `(x − 1)·s + (k − 1)·d + 1 − p_b − p_e + output_padding` with the pads of `explicit` and
//! none for the other modes (see [`spatial`](super::spatial) for both and for the begin pad
//! `output_shape` implies).
//!
//! Decisions, as OpenVINO (its shape inference, reference and CPU plugin) where the spec is
//! silent or differs:
//! * with `output_shape` and `explicit`, the begin pads are the attribute's and the output
//!   is cut or extended with zeros at the end to the given size (the spec says the pads are
//!   ignored and computed as for `same_lower`; OpenVINO reads them); `valid` uses begin pads 0;
//! * `same_*` without `output_shape` uses no pads (the spec: "if auto_pads != None, pads = 0");
//! * `output_padding` is not bounded by the stride (OpenVINO does not check it): it extends
//!   the output at the end, where products still land when the end pad is positive;
//! * checks as Convolution's (ranks, channels `data C == filters dim 0` or `== G · filters
//!   dim 1`, attribute lengths, strides and dilations ≥ 1, an empty kernel), plus
//!   `output_shape` 1-D with one non-negative value per spatial axis; a computed output dim
//!   below 0 for every value the inputs allow is an error (OpenVINO gives a dynamic dim);
//! * inference reads `output_shape`'s value, or the bounds of a shape computed from ShapeOf,
//!   as interval dims; unknown values give dynamic dims. It does not fold constant inputs.
//!
//! Execution (each output element's sum runs in one order fixed by the geometry, so the bits
//! do not depend on the thread count or the vector unit):
//! * **f32 and f64** through the GEMM of [`matmul`](super::matmul): per image and group, a
//!   tile of data positions at a time (about 1 MiB of columns), the columns
//!   `filtersᵀ · data` — one row per output channel and tap, each the sum over the group's
//!   input channels — then added into the output (col2im) tap after tap. Parts (image, group,
//!   and blocks of output channels when those are too few for the threads) own their output
//!   planes and run in parallel. An element's sum: over the tiles in order, the taps in order,
//!   each a GEMM sum (K blocks of 256).
//! * **one input channel per group** (depthwise): a direct scatter, one output plane per rayon
//!   task: for each tap and data row, the products added into the output row they land on,
//!   multiplied then added (no fused multiply-add);
//! * **f16 and bf16**: as f32 (the inputs widened exactly) and rounded once;
//! * **integers**: the direct scatter, exact with two's complement wrap-around.
//!
//! Accuracy of f32 (f64 alike, u = 2^-24 or 2^-53) against the exact sum, relative to
//! `Σ|w·x|`: GEMM `(min(C, 256) + ⌈C/256⌉ + taps + 1)·u` for `C` input channels per group;
//! direct `(taps + 1)·u`; the tests measure both against a float64 reference. The output and
//! the scratch (the columns of every thread, f32 copies for f16/bf16) are checked against the
//! memory budget before anything is allocated.

use rayon::prelude::*;

use super::convolution::{
    Acc, channel_blocks, dims_or_dynamic, meet, one_type, out_channels, span, spatial_rank,
    tile_width,
};
use super::spatial::{Window, check_len, dilated, parse_list};
use super::{Arity, AttrError, Attrs, EvalCx, EvalError, InferCx, Op, OpDef};
use crate::ops::kernel::{tensor_from, value_data, vectorised};
use crate::ops::matmul::{Gemm, narrow, widen};
use crate::shape::{Dim, PartialShape, TensorType};
use crate::tensor::{Element, Tensor, TypeSet};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConvolutionBackprop {
    pub window: Window,
    /// Empty: zeros.
    pub output_padding: Vec<u64>,
    /// GroupConvolutionBackpropData: filters `[G, C_IN/G, C_OUT/G, k…]`.
    pub grouped: bool,
}

pub const CONVOLUTION_BACKPROP_DATA: OpDef = OpDef {
    name: "ConvolutionBackpropData",
    version: 1,
    inputs: Arity::range(2, 3),
    outputs: Arity::exactly(1),
    parse: parse_plain,
};

pub const GROUP_CONVOLUTION_BACKPROP_DATA: OpDef = OpDef {
    name: "GroupConvolutionBackpropData",
    parse: parse_group,
    ..CONVOLUTION_BACKPROP_DATA
};

fn parse_plain(a: &Attrs) -> Result<Box<dyn Op>, Vec<AttrError>> {
    parse(a, false)
}

fn parse_group(a: &Attrs) -> Result<Box<dyn Op>, Vec<AttrError>> {
    parse(a, true)
}

fn parse(a: &Attrs, grouped: bool) -> Result<Box<dyn Op>, Vec<AttrError>> {
    let window = Window::parse(a, true);
    let output_padding = a.parse_or("output_padding", Vec::new(), parse_list);
    match (window, output_padding) {
        (Ok(window), Ok(output_padding)) => Ok(Box::new(ConvolutionBackprop {
            window,
            output_padding,
            grouped,
        })),
        (w, p) => {
            let mut errors = w.err().unwrap_or_default();
            errors.extend(p.err());
            Err(errors)
        }
    }
}

/// What is known of the `output_shape` input's values.
#[derive(Clone, Debug)]
enum OutputShape {
    /// No third input.
    Absent,
    /// Given, its length unknown.
    Unknown,
    /// One dim per spatial axis (dynamic where a value is unknown).
    Dims(Vec<Dim>),
}

impl ConvolutionBackprop {
    fn op_name(&self) -> &'static str {
        if self.grouped {
            "GroupConvolutionBackpropData"
        } else {
            "ConvolutionBackpropData"
        }
    }

    fn filter_extra(&self) -> usize {
        if self.grouped { 3 } else { 2 }
    }

    fn output_padding(&self, i: usize) -> u64 {
        self.output_padding.get(i).copied().unwrap_or(0)
    }

    /// The output shape, with every check; an error names the port.
    fn shape(
        &self,
        data: &PartialShape,
        filters: &PartialShape,
        output: &OutputShape,
    ) -> Result<PartialShape, (usize, String)> {
        let extra = self.filter_extra();
        let given = match output {
            OutputShape::Dims(d) => Some(d.len()),
            _ => None,
        };
        let Some(spatial) = spatial_rank(
            self.op_name(),
            data.rank(),
            filters.rank(),
            extra,
            given.or(self.window.spatial_hint()),
        )?
        else {
            return Ok(PartialShape::dynamic_rank());
        };
        if let Some(n) = given
            && n != spatial
        {
            return Err((
                2,
                format!("output_shape has {n} values but the data has {spatial} spatial axes"),
            ));
        }
        self.window.validate(spatial).map_err(|e| (0, e))?;
        check_len("output_padding", &self.output_padding, spatial, true).map_err(|e| (0, e))?;
        let d = dims_or_dynamic(data, 2 + spatial);
        let f = dims_or_dynamic(filters, extra + spatial);
        let channels = out_channels(self.grouped, d[1], &f, 1, 2)?;
        let mut out = vec![d[0], channels];
        for i in 0..spatial {
            let (x, k) = (d[2 + i], f[extra + i]);
            let dim = match output {
                OutputShape::Absent => self
                    .window
                    .backward(i, x, k, self.output_padding(i))
                    .map_err(|e| (0, e))?,
                given => {
                    dilated(k, self.window.dilation(i), i).map_err(|e| (0, e))?;
                    match given {
                        OutputShape::Dims(o) => o[i],
                        _ => Dim::DYNAMIC,
                    }
                }
            };
            out.push(dim);
        }
        Ok(PartialShape::new(out))
    }

    /// The geometry of a run on static shapes and `output_shape` values.
    fn geometry(
        &self,
        data: &[usize],
        filters: &[usize],
        output: Option<&[usize]>,
    ) -> Result<Geometry, EvalError> {
        let given = match output {
            Some(o) => OutputShape::Dims(o.iter().map(|&v| Dim::fixed(v as u64)).collect()),
            None => OutputShape::Absent,
        };
        let out_shape = self
            .shape(
                &PartialShape::of_tensor(data),
                &PartialShape::of_tensor(filters),
                &given,
            )
            .map_err(|(_, e)| EvalError::Invalid(e))?
            .to_tensor_dims()
            .ok_or(EvalError::Internal("the backprop's output shape"))?;
        let spatial = data.len() - 2;
        let extra = self.filter_extra();
        let (groups, cig, cog) = if self.grouped {
            (filters[0], filters[1], filters[2])
        } else {
            (1, filters[0], filters[1])
        };
        let mut g = Geometry {
            batch: data[0],
            groups,
            cig,
            cog,
            input: [1; 3],
            kernel: [1; 3],
            output: [1; 3],
            stride: [1; 3],
            dilation: [1; 3],
            pad: [0; 3],
            out_shape,
        };
        let too_large = || EvalError::Invalid("the backprop's geometry is too large".into());
        for i in 0..spatial {
            let a = 3 - spatial + i;
            let (x, k, y) = (data[2 + i], filters[extra + i], g.out_shape[2 + i]);
            let (s, d) = (self.window.stride(i), self.window.dilation(i));
            let pad = self.window.backward_pad_begin(
                i,
                x,
                k,
                output.map(|o| o[i]),
                self.output_padding(i),
            );
            // Every index the loops form, `x·s + t·d − p`, must fit an isize.
            let reach = (x.saturating_sub(1) as u128) * s as u128
                + (k.saturating_sub(1) as u128) * d as u128;
            if reach > isize::MAX as u128 || pad > isize::MAX as u64 {
                return Err(too_large());
            }
            g.input[a] = x;
            g.kernel[a] = k;
            g.output[a] = y;
            g.stride[a] = usize::try_from(s).map_err(|_| too_large())?;
            g.dilation[a] = usize::try_from(d).map_err(|_| too_large())?;
            g.pad[a] = pad as usize;
        }
        Ok(g)
    }
}

impl Op for ConvolutionBackprop {
    fn def(&self) -> Option<&'static OpDef> {
        Some(if self.grouped {
            &GROUP_CONVOLUTION_BACKPROP_DATA
        } else {
            &CONVOLUTION_BACKPROP_DATA
        })
    }

    fn infer(&self, cx: &mut InferCx<'_>) -> Option<Vec<TensorType>> {
        cx.require(0..2, TypeSet::NUMERIC)?;
        cx.require(2..3, TypeSet::INT)?;
        let ty = one_type(cx, self.op_name())?;
        let (d, f) = (cx.input(0), cx.input(1));
        let output = if cx.has_input(2) {
            let o = cx.input(2);
            if let Some(r) = o.shape.rank()
                && r != 1
            {
                return cx.invalid(2, format!("output_shape must be 1-D, not of rank {r}"));
            }
            if let Some(b) = o.int_bounds() {
                let mut dims = Vec::with_capacity(b.len());
                for i in 0..b.len() {
                    match b.dim(i) {
                        Some(d) => dims.push(d),
                        None => {
                            return cx.invalid(
                                2,
                                format!("output_shape element {i} is negative ({})", b.hi[i]),
                            );
                        }
                    }
                }
                OutputShape::Dims(dims)
            } else {
                match o.shape.dims().and_then(|d| d[0].get_static()) {
                    Some(n) if (1..=3).contains(&n) => {
                        OutputShape::Dims(vec![Dim::DYNAMIC; n as usize])
                    }
                    Some(n) => {
                        return cx.invalid(
                            2,
                            format!("output_shape has {n} values; there are 1 to 3 spatial axes"),
                        );
                    }
                    None => OutputShape::Unknown,
                }
            }
        } else {
            OutputShape::Absent
        };
        match self.shape(&d.shape, &f.shape, &output) {
            Ok(s) => Some(vec![TensorType::new(ty, s)]),
            Err((port, why)) => cx.invalid(port, why),
        }
    }

    fn folds(&self) -> bool {
        false
    }

    fn eval(&self, cx: &EvalCx<'_>) -> Result<Vec<Tensor>, EvalError> {
        let (vd, vf) = (cx.value(0), cx.value(1));
        let ty = vd.element_type();
        if vf.element_type() != ty {
            return Err(EvalError::Types(ty, vf.element_type()));
        }
        let output = if cx.len() > 2 {
            let values = cx.ints(2)?;
            if cx.value(2).shape().len() != 1 {
                return Err(EvalError::Invalid("output_shape must be 1-D".into()));
            }
            let dims = values
                .iter()
                .enumerate()
                .map(|(i, &v)| {
                    usize::try_from(v).map_err(|_| {
                        EvalError::Invalid(format!("output_shape element {i} is {v}, below 0"))
                    })
                })
                .collect::<Result<Vec<usize>, EvalError>>()?;
            Some(dims)
        } else {
            None
        };
        let g = self.geometry(vd.shape(), vf.shape(), output.as_deref())?;
        let unsupported = || EvalError::UnsupportedType {
            op: self.op_name().into(),
            ty,
        };
        crate::dispatch!(numeric: ty, T => {
            let x = value_data::<T>(vd).ok_or_else(unsupported)?;
            let w = value_data::<T>(vf).ok_or_else(unsupported)?;
            let out = T::backprop(cx, &g, &x, &w)?;
            Ok(vec![tensor_from(&g.out_shape, out)?])
        }, _ => Err(unsupported()))
    }
}

/// A run's geometry, its spatial axes as three (`[1, 1, W]` for 1D, `[1, H, W]` for 2D):
/// `input` the data's, `output` the result's.
#[derive(Clone, Debug)]
struct Geometry {
    batch: usize,
    groups: usize,
    cig: usize,
    cog: usize,
    input: [usize; 3],
    kernel: [usize; 3],
    output: [usize; 3],
    stride: [usize; 3],
    dilation: [usize; 3],
    pad: [usize; 3],
    out_shape: Vec<usize>,
}

impl Geometry {
    fn in_plane(&self) -> usize {
        self.input.iter().product()
    }

    fn out_plane(&self) -> usize {
        self.output.iter().product()
    }

    fn taps(&self) -> usize {
        self.kernel.iter().product()
    }

    fn output_len(&self) -> Result<usize, EvalError> {
        self.out_shape
            .iter()
            .try_fold(1usize, |n, &d| n.checked_mul(d))
            .ok_or_else(|| EvalError::Invalid("the backprop's output is too large".into()))
    }

    /// The output index along axis `a` that data index `x` and tap `t` land on, if inside.
    #[inline(always)]
    fn at(&self, a: usize, x: usize, t: usize) -> Option<usize> {
        meet(
            x,
            t,
            self.stride[a],
            self.dilation[a],
            self.pad[a],
            self.output[a],
        )
    }

    /// For tap `t` of the last axis: its offset `t·d − p` and the data indices `lo..hi` whose
    /// `x·s + offset` lands in the output.
    #[inline(always)]
    fn row_span(&self, t: usize) -> (isize, usize, usize) {
        span(
            t,
            self.stride[2],
            self.dilation[2],
            self.pad[2],
            self.output[2],
            self.input[2],
        )
    }

    fn check(&self, x: usize, w: usize) -> Result<(), EvalError> {
        let want_x = [self.batch, self.groups, self.cig, self.in_plane()]
            .iter()
            .try_fold(1usize, |n, &d| n.checked_mul(d));
        let want_w = [self.groups, self.cig, self.cog, self.taps()]
            .iter()
            .try_fold(1usize, |n, &d| n.checked_mul(d));
        if want_x != Some(x) || want_w != Some(w) {
            return Err(EvalError::Internal(
                "the backprop's inputs do not hold their shapes",
            ));
        }
        Ok(())
    }
}

/// Output plane `out` (one image, output channel `m` of group `grp`): the products of the
/// group's data channels `xs` and their taps scattered onto the output rows they land on.
#[inline(always)]
fn plane<S: Copy, A: Acc>(
    g: &Geometry,
    xs: &[S],
    w: &[A],
    grp: usize,
    m: usize,
    out: &mut [A],
    wide: impl Fn(S) -> A + Copy,
) {
    out.fill(A::ZERO);
    let [xd_n, xh_n, xw_n] = g.input;
    let [kd_n, kh_n, kw_n] = g.kernel;
    let [_, oh_n, ow_n] = g.output;
    let sw = g.stride[2];
    let (in_plane, taps) = (g.in_plane(), g.taps());
    for c in 0..g.cig {
        let xc = &xs[c * in_plane..(c + 1) * in_plane];
        let wk = &w[((grp * g.cig + c) * g.cog + m) * taps..][..taps];
        let mut tap = wk.iter();
        for kd in 0..kd_n {
            for kh in 0..kh_n {
                for kw in 0..kw_n {
                    let Some(&wv) = tap.next() else { return };
                    let (off, lo, hi) = g.row_span(kw);
                    if lo >= hi {
                        continue;
                    }
                    let start = ((lo * sw) as isize + off) as usize;
                    for xd in 0..xd_n {
                        let Some(yd) = g.at(0, xd, kd) else { continue };
                        for xh in 0..xh_n {
                            let Some(yh) = g.at(1, xh, kh) else { continue };
                            let row = &xc[(xd * xh_n + xh) * xw_n..][lo..hi];
                            let orow = &mut out[(yd * oh_n + yh) * ow_n..][..ow_n];
                            if sw == 1 {
                                let dst = &mut orow[start..start + (hi - lo)];
                                for (o, &v) in dst.iter_mut().zip(row) {
                                    *o = o.mac(wv, wide(v));
                                }
                            } else {
                                for (j, &v) in row.iter().enumerate() {
                                    let o = &mut orow[start + j * sw];
                                    *o = o.mac(wv, wide(v));
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// Every output plane, in parallel, each compiled for the widest vector unit (multiplies
/// and adds round the same on every unit).
fn scatter<S: Copy + Sync, A: Acc>(
    g: &Geometry,
    x: &[S],
    w: &[A],
    out: &mut [A],
    wide: impl Fn(S) -> A + Copy + Sync,
) {
    let size = g.out_plane();
    if size == 0 || out.is_empty() {
        return;
    }
    let channels = g.groups * g.cog;
    let group_len = g.cig * g.in_plane();
    out.par_chunks_mut(size).enumerate().for_each(|(idx, o)| {
        let (n, co) = (idx / channels, idx % channels);
        let (grp, m) = (co / g.cog, co % g.cog);
        let xs = &x[(n * g.groups + grp) * group_len..][..group_len];
        vectorised(
            #[inline(always)]
            || plane(g, xs, w, grp, m, o, wide),
        );
    });
}

/// An element type the backprop computes on.
trait Backprop: Element {
    fn backprop(
        cx: &EvalCx<'_>,
        g: &Geometry,
        x: &[Self],
        w: &[Self],
    ) -> Result<Vec<Self>, EvalError>;
}

/// One part of a GEMM run: image `n`, group `g`, output channels `m0..m1` of the group (whose
/// output planes it owns).
#[derive(Clone, Copy, Debug)]
struct Part {
    n: usize,
    g: usize,
    m0: usize,
    m1: usize,
}

/// The tile of data positions (from the geometry only; its columns aim at
/// [`SCRATCH_BYTES`](super::convolution::SCRATCH_BYTES)) and the parts: images and groups,
/// and blocks of output channels when those are fewer than twice the threads (the bits depend
/// on neither: each output element's sum runs over the tiles, then the taps, in order).
fn plan(g: &Geometry, elem: usize) -> (usize, Vec<Part>) {
    let tile = tile_width(g.cog * g.taps(), elem, 16, g.in_plane());
    let base = g.batch * g.groups;
    let blocks = channel_blocks(base, g.cog, g.cog);
    let mut parts = Vec::new();
    for n in 0..g.batch {
        for grp in 0..g.groups {
            for &(m0, m1) in &blocks {
                parts.push(Part { n, g: grp, m0, m1 });
            }
        }
    }
    (tile, parts)
}

/// Adds the columns of data positions `x0..x1` (`col`: row `(m, t)` for the part's output
/// channels `m` and taps `t`) into the part's output planes `out`, tap after tap.
fn col2im<F: Gemm>(g: &Geometry, col: &[F], x0: usize, x1: usize, channels: usize, out: &mut [F]) {
    let width = x1 - x0;
    let plane = g.out_plane();
    let [_, xh_n, xw_n] = g.input;
    let [kd_n, kh_n, kw_n] = g.kernel;
    let [_, oh_n, ow_n] = g.output;
    let sw = g.stride[2];
    let rows_of_plane = xh_n * xw_n;
    let mut crows = col.chunks_exact(width);
    for m in 0..channels {
        let op = &mut out[m * plane..(m + 1) * plane];
        for kd in 0..kd_n {
            for kh in 0..kh_n {
                for kw in 0..kw_n {
                    let Some(crow) = crows.next() else { return };
                    let (off, vlo, vhi) = g.row_span(kw);
                    let mut xp = x0;
                    while xp < x1 {
                        let (xd, rem) = (xp / rows_of_plane, xp % rows_of_plane);
                        let (xh, xw0) = (rem / xw_n, rem % xw_n);
                        let xw1 = xw_n.min(xw0 + (x1 - xp));
                        let (lo, hi) = (vlo.clamp(xw0, xw1), vhi.clamp(xw0, xw1));
                        if let (Some(yd), Some(yh), true) =
                            (g.at(0, xd, kd), g.at(1, xh, kh), lo < hi)
                        {
                            let orow = &mut op[(yd * oh_n + yh) * ow_n..][..ow_n];
                            let src = &crow[xp - x0 + (lo - xw0)..][..hi - lo];
                            let start = ((lo * sw) as isize + off) as usize;
                            if sw == 1 {
                                for (o, &v) in orow[start..start + (hi - lo)].iter_mut().zip(src) {
                                    *o = *o + v;
                                }
                            } else {
                                for (j, &v) in src.iter().enumerate() {
                                    let o = &mut orow[start + j * sw];
                                    *o = *o + v;
                                }
                            }
                        }
                        xp += xw1 - xw0;
                    }
                }
            }
        }
    }
}

/// The float backprop through the GEMM: per part, for each tile of data positions, the
/// columns `filtersᵀ · data` (rows: output channel and tap; the sum over the group's input
/// channels) and then their scatter onto the output. `extra`: bytes the caller holds besides.
fn gemm_backprop<F: Gemm>(
    cx: &EvalCx<'_>,
    g: &Geometry,
    x: &[F],
    w: &[F],
    extra: u64,
) -> Result<Vec<F>, EvalError> {
    let n = g.output_len()?;
    let size = std::mem::size_of::<F>();
    let (tile, parts) = plan(g, size);
    let taps = g.taps();
    let widest = parts.iter().map(|p| p.m1 - p.m0).max().unwrap_or(0);
    let scratch = (rayon::current_num_threads().min(parts.len()) as u64)
        .saturating_mul((widest * taps) as u64)
        .saturating_mul(tile as u64)
        .saturating_mul(size as u64);
    cx.reserve_bytes(
        "the output and the backprop's scratch",
        (n as u64)
            .saturating_mul(size as u64)
            .saturating_add(scratch)
            .saturating_add(extra),
    )?;
    g.check(x.len(), w.len())?;
    let zero = <F as crate::num::Float>::ZERO;
    let mut out = vec![zero; n];
    let (plane, in_plane) = (g.out_plane(), g.in_plane());
    if n == 0 || g.cig == 0 || in_plane == 0 {
        return Ok(out);
    }
    let rows_total = g.cog * taps;
    // Each part's output planes, in order.
    let mut owned = Vec::with_capacity(parts.len());
    let mut rest: &mut [F] = &mut out;
    for p in &parts {
        let (mine, next) = rest.split_at_mut((p.m1 - p.m0) * plane);
        owned.push((*p, mine));
        rest = next;
    }
    owned
        .into_par_iter()
        .for_each_init(Vec::<F>::new, |buf, (p, o)| {
            let rows = (p.m1 - p.m0) * taps;
            let xg = &x[(p.n * g.groups + p.g) * g.cig * in_plane..][..g.cig * in_plane];
            let wg = &w[p.g * g.cig * rows_total..][..g.cig * rows_total];
            let mut x0 = 0;
            while x0 < in_plane {
                let x1 = (x0 + tile).min(in_plane);
                let width = x1 - x0;
                if buf.len() < rows * width {
                    buf.resize(rows * width, zero);
                }
                let col = &mut buf[..rows * width];
                // SAFETY: `check` verified the buffers: the filters of group `g` are
                // `cig × (cog·taps)` (read transposed from column `m0·taps`, `rows` rows), the
                // group's data `cig × in_plane` (columns `x0..x1`), and `col` holds
                // `rows × width`.
                unsafe {
                    F::gemm(
                        rows,
                        g.cig,
                        width,
                        wg.as_ptr().add(p.m0 * taps),
                        (1, rows_total),
                        xg.as_ptr().add(x0),
                        (in_plane, 1),
                        col.as_mut_ptr(),
                        width,
                    )
                };
                col2im(g, col, x0, x1, p.m1 - p.m0, o);
                x0 = x1;
            }
        });
    Ok(out)
}

/// The direct scatter in the type itself (integers, and floats with one input channel per
/// group).
fn direct_backprop<T: Element + Acc>(
    cx: &EvalCx<'_>,
    g: &Geometry,
    x: &[T],
    w: &[T],
) -> Result<Vec<T>, EvalError> {
    let n = g.output_len()?;
    cx.reserve(T::TYPE, n)?;
    g.check(x.len(), w.len())?;
    let mut out = vec![<T as Acc>::ZERO; n];
    scatter(g, x, w, &mut out, |v| v);
    Ok(out)
}

macro_rules! native {
    ($($t:ty)*) => {$(
        impl Backprop for $t {
            fn backprop(
                cx: &EvalCx<'_>,
                g: &Geometry,
                x: &[$t],
                w: &[$t],
            ) -> Result<Vec<$t>, EvalError> {
                if g.cig != 1 {
                    return gemm_backprop(cx, g, x, w, 0);
                }
                direct_backprop(cx, g, x, w)
            }
        }
    )*};
}
native!(f32 f64);

macro_rules! direct {
    ($($t:ty)*) => {$(
        impl Backprop for $t {
            fn backprop(
                cx: &EvalCx<'_>,
                g: &Geometry,
                x: &[$t],
                w: &[$t],
            ) -> Result<Vec<$t>, EvalError> {
                direct_backprop(cx, g, x, w)
            }
        }
    )*};
}
direct!(i8 i16 i32 i64 u8 u16 u32 u64);

macro_rules! widened {
    ($($t:ty)*) => {$(
        impl Backprop for $t {
            fn backprop(
                cx: &EvalCx<'_>,
                g: &Geometry,
                x: &[$t],
                w: &[$t],
            ) -> Result<Vec<$t>, EvalError> {
                let n = g.output_len()?;
                g.check(x.len(), w.len())?;
                // The output in the type, the f32 filters (and data, for the GEMM).
                let copies = (n as u64)
                    .saturating_mul(2)
                    .saturating_add((w.len() as u64).saturating_mul(4));
                let wide = if g.cig == 1 {
                    cx.reserve_bytes(
                        "the output and f32 copies of the filters and output",
                        copies.saturating_add((n as u64).saturating_mul(4)),
                    )?;
                    let mut wide = vec![0f32; n];
                    scatter(g, x, &widen(w), &mut wide, |v: $t| v.to_f32());
                    wide
                } else {
                    let copies = copies.saturating_add((x.len() as u64).saturating_mul(4));
                    cx.reserve_bytes("f32 copies of the data and filters", copies)?;
                    gemm_backprop(cx, g, &widen(x), &widen(w), copies)?
                };
                Ok(narrow(&wide))
            }
        }
    )*};
}
widened!(half::f16 half::bf16);

#[cfg(test)]
mod tests {
    use half::{bf16, f16};

    use super::*;
    use crate::dtype::ElementType;
    use crate::ops::context::{
        eval_for_test, inferred_shape_for_test, parsed_for_test, tensor_for_test, uniform_for_test,
    };
    use crate::ops::matmul::bits_at_thread_counts;
    use crate::ops::spatial::AutoPad;
    use crate::shape::types::Bounds;

    fn op(
        grouped: bool,
        s: &[u64],
        d: &[u64],
        pb: &[u64],
        pe: &[u64],
        ap: AutoPad,
        op_: &[u64],
    ) -> ConvolutionBackprop {
        ConvolutionBackprop {
            window: Window {
                strides: s.to_vec(),
                dilations: Some(d.to_vec()),
                pads_begin: pb.to_vec(),
                pads_end: pe.to_vec(),
                auto_pad: ap,
            },
            output_padding: op_.to_vec(),
            grouped,
        }
    }

    #[test]
    fn parse_table() {
        let attrs = [
            ("strides", "2,2"),
            ("dilations", "1,1"),
            ("pads_begin", "1,1"),
            ("pads_end", "1,1"),
            ("output_padding", "1,0"),
        ];
        let want = |grouped| {
            Ok(format!(
                "{:?}",
                op(
                    grouped,
                    &[2, 2],
                    &[1, 1],
                    &[1, 1],
                    &[1, 1],
                    AutoPad::Explicit,
                    &[1, 0]
                )
            ))
        };
        assert_eq!(
            parsed_for_test(&CONVOLUTION_BACKPROP_DATA, &attrs),
            want(false)
        );
        assert_eq!(
            parsed_for_test(&GROUP_CONVOLUTION_BACKPROP_DATA, &attrs),
            want(true)
        );
        assert_eq!(
            parsed_for_test(
                &CONVOLUTION_BACKPROP_DATA,
                &[("dilations", "1"), ("output_padding", "a")]
            ),
            Err(vec![
                "strides None: ".to_string(),
                "output_padding Some(\"a\"): expected non-negative integers separated by commas"
                    .to_string()
            ])
        );
    }

    fn ty(s: &str) -> TensorType {
        TensorType::new(ElementType::F32, PartialShape::parse(s).unwrap())
    }

    fn infer(
        o: &ConvolutionBackprop,
        data: &str,
        filters: &str,
        out: Option<TensorType>,
    ) -> Result<String, String> {
        let (d, f) = (ty(data), ty(filters));
        match out {
            Some(o3) => inferred_shape_for_test(o, &[&d, &f, &o3]),
            None => inferred_shape_for_test(o, &[&d, &f]),
        }
    }

    fn shape_value(v: &[i64]) -> TensorType {
        TensorType::of_value(tensor_for_test(&[v.len()], v.to_vec()))
    }

    #[test]
    fn infer_table() {
        use AutoPad::*;
        let s2 = op(false, &[2, 2], &[1, 1], &[1, 1], &[1, 1], Explicit, &[0, 0]);
        let op2 = op(false, &[3, 3], &[1, 1], &[0, 0], &[0, 0], Explicit, &[2, 2]);
        let valid = op(false, &[1, 1], &[1, 1], &[1, 1], &[1, 1], Valid, &[0, 0]);
        let g1 = op(true, &[2], &[1], &[1], &[1], Explicit, &[]);
        let g2 = op(true, &[2, 2], &[1, 1], &[1, 1], &[1, 1], Explicit, &[]);
        let g3 = op(
            true,
            &[2, 2, 2],
            &[1, 1, 1],
            &[1, 1, 1],
            &[1, 1, 1],
            Explicit,
            &[],
        );
        let ok: Vec<(ConvolutionBackprop, &str, &str, Option<TensorType>, &str)> = vec![
            // The spec's examples.
            (
                s2.clone(),
                "[1,20,224,224]",
                "[20,10,3,3]",
                None,
                "[1,10,447,447]",
            ),
            (op2.clone(), "[1,20,2,2]", "[20,10,3,3]", None, "[1,10,8,8]"),
            (
                valid.clone(),
                "[1,20,224,224]",
                "[20,10,3,3]",
                Some(shape_value(&[450, 450])),
                "[1,10,450,450]",
            ),
            (g1.clone(), "[1,20,224]", "[4,5,2,3]", None, "[1,8,447]"),
            (
                g2.clone(),
                "[1,20,224,224]",
                "[4,5,2,3,3]",
                None,
                "[1,8,447,447]",
            ),
            (
                g3.clone(),
                "[1,20,224,224,224]",
                "[4,5,2,3,3,3]",
                None,
                "[1,8,447,447,447]",
            ),
            // Dynamic and interval dims.
            (
                s2.clone(),
                "[?,20,?,1..4]",
                "[20,10,3,3]",
                None,
                "[?,10,1..,1..7]",
            ),
            (s2.clone(), "...", "[20,10,3,3]", None, "[?,10,1..,1..]"),
            (s2.clone(), "[1,20,5,5]", "...", None, "[1,?,7..,7..]"),
            (s2.clone(), "...", "...", None, "[?,?,?,?]"),
            (g2.clone(), "[1,?,5,5]", "[4,5,2,3,3]", None, "[1,8,9,9]"),
            (g2.clone(), "[1,20,5,5]", "[?,5,2,3,3]", None, "[1,8,9,9]"),
            (
                g2.clone(),
                "[1,10..20,5,5]",
                "[?,5,2,3,3]",
                None,
                "[1,4..8,9,9]",
            ),
            // output_shape: a value, bounds, a static length, an unknown length.
            (
                s2.clone(),
                "[1,20,5,5]",
                "[20,10,3,3]",
                Some(shape_value(&[10, 11])),
                "[1,10,10,11]",
            ),
            (
                s2.clone(),
                "[1,20,5,5]",
                "[20,10,3,3]",
                Some(
                    Bounds {
                        lo: vec![4, 9],
                        hi: vec![8, 9],
                    }
                    .into_type(ElementType::I64, PartialShape::fixed(&[2])),
                ),
                "[1,10,4..8,9]",
            ),
            (
                s2.clone(),
                "[1,20,5,5]",
                "[20,10,3,3]",
                Some(TensorType::new(ElementType::I32, PartialShape::fixed(&[2]))),
                "[1,10,?,?]",
            ),
            (
                s2.clone(),
                "...",
                "...",
                Some(TensorType::new(
                    ElementType::I32,
                    PartialShape::parse("[?]").unwrap(),
                )),
                "[?,?,?,?]",
            ),
            (
                op(false, &[2], &[1], &[], &[], SameUpper, &[]),
                "...",
                "...",
                Some(TensorType::new(
                    ElementType::I32,
                    PartialShape::parse("[?]").unwrap(),
                )),
                "[?,?,?]",
            ),
            (
                op(false, &[2], &[1], &[], &[], SameUpper, &[]),
                "...",
                "...",
                Some(shape_value(&[9])),
                "[?,?,9]",
            ),
        ];
        for (o, d, f, out, want) in ok {
            assert_eq!(infer(&o, d, f, out).as_deref(), Ok(want), "{d} {f}");
        }
        let bad: Vec<(ConvolutionBackprop, &str, &str, Option<TensorType>, &str)> = vec![
            (
                s2.clone(),
                "[1,20,5,5]",
                "[10,20,3,3]",
                None,
                "the data has 20 channels but the filters take 10 input channels (filters dim 0)",
            ),
            (
                s2.clone(),
                "[1,20,5]",
                "[20,10,3,3]",
                None,
                "needs filters of rank 3",
            ),
            (
                s2.clone(),
                "[1,20,5,5]",
                "[20,10,3,3]",
                Some(shape_value(&[10])),
                "output_shape has 1 values but the data has 2 spatial axes",
            ),
            (
                s2.clone(),
                "[1,20,5,5]",
                "[20,10,3,3]",
                Some(shape_value(&[10, -1])),
                "output_shape element 1 is negative",
            ),
            (
                s2.clone(),
                "[1,20,5,5]",
                "[20,10,3,3]",
                Some(TensorType::new(
                    ElementType::I32,
                    PartialShape::fixed(&[2, 1]),
                )),
                "output_shape must be 1-D",
            ),
            (
                s2.clone(),
                "[1,20,5,5]",
                "[20,10,3,3]",
                Some(TensorType::new(ElementType::I32, PartialShape::fixed(&[7]))),
                "output_shape has 7 values",
            ),
            (
                s2.clone(),
                "[1,20,5,5]",
                "[20,10,3,3]",
                Some(TensorType::new(ElementType::F32, PartialShape::fixed(&[2]))),
                "Some((Input, 2)) ConvolutionBackpropData does not accept f32 inputs",
            ),
            (
                op(false, &[2, 2], &[1, 1], &[], &[], Explicit, &[1]),
                "[1,20,5,5]",
                "[20,10,3,3]",
                None,
                "output_padding has 1 value but the data has 2 spatial axes",
            ),
            (
                op(false, &[1, 1], &[1, 1], &[2, 2], &[2, 2], Explicit, &[]),
                "[1,20,1,5]",
                "[20,10,3,3]",
                None,
                "the output of spatial axis 0 would be 3",
            ),
            (
                op(false, &[0, 1], &[1, 1], &[], &[], Explicit, &[]),
                "[1,20,5,5]",
                "[20,10,3,3]",
                None,
                "strides must be at least 1",
            ),
            (
                s2.clone(),
                "[1,20,5,5]",
                "[20,10,0,3]",
                Some(shape_value(&[10, 11])),
                "the kernel is empty",
            ),
            (
                g2.clone(),
                "[1,20,5,5]",
                "[3,5,2,3,3]",
                None,
                "the data has 20 channels, which is not the groups (3, filters dim 0) times the input channels per group (5, filters dim 1)",
            ),
            (
                g2.clone(),
                "[1,20,5,5]",
                "[4,5,2,3]",
                None,
                "needs filters of rank 5",
            ),
        ];
        for (o, d, f, out, why) in bad {
            match infer(&o, d, f, out) {
                Ok(s) => panic!("{d} {f}: inferred {s}, wanted an error"),
                Err(e) => assert!(e.contains(why), "{d} {f}: {e}"),
            }
        }
    }

    fn run<T: Element>(
        o: &ConvolutionBackprop,
        ds: &[usize],
        x: Vec<T>,
        fs: &[usize],
        w: Vec<T>,
        out: Option<&[i64]>,
    ) -> Result<(Vec<usize>, Vec<T>), EvalError> {
        let mut inputs = vec![tensor_for_test(ds, x), tensor_for_test(fs, w)];
        if let Some(v) = out {
            inputs.push(tensor_for_test(&[v.len()], v.to_vec()));
        }
        let got = eval_for_test(o, &inputs, u64::MAX)?;
        Ok((
            got.shape().to_vec(),
            T::view(&got).unwrap().iter().copied().collect(),
        ))
    }

    #[test]
    fn small_cases_by_hand() {
        use AutoPad::*;
        // [1,2,3,4] with the kernel [1,10,100]; the results of OpenVINO's CPU plugin.
        let x = || vec![1f32, 2., 3., 4.];
        let w = || vec![1f32, 10., 100.];
        let one = |o: &ConvolutionBackprop, out: Option<&[i64]>| {
            run(o, &[1, 1, 4], x(), &[1, 1, 3], w(), out).unwrap().1
        };
        let e = |s, pb, pe, op_: u64| op(false, &[s], &[1], &[pb], &[pe], Explicit, &[op_]);
        assert_eq!(one(&e(1, 0, 0, 0), None), [1., 12., 123., 234., 340., 400.]);
        assert_eq!(
            one(&e(2, 1, 0, 0), None),
            [10., 102., 20., 203., 30., 304., 40., 400.]
        );
        assert_eq!(
            one(&e(2, 0, 0, 1), None),
            [1., 10., 102., 20., 203., 30., 304., 40., 400., 0.]
        );
        assert_eq!(
            one(&e(1, 1, 0, 0), Some(&[6])),
            [12., 123., 234., 340., 400., 0.]
        );
        assert_eq!(
            one(&e(1, 0, 0, 0), Some(&[8])),
            [1., 12., 123., 234., 340., 400., 0., 0.]
        );
        let a = |ap| op(false, &[1], &[1], &[1], &[1], ap, &[]);
        assert_eq!(
            one(&a(Valid), Some(&[6])),
            [1., 12., 123., 234., 340., 400.]
        );
        assert_eq!(
            one(&a(SameUpper), Some(&[5])),
            [12., 123., 234., 340., 400.]
        );
        assert_eq!(one(&a(SameLower), Some(&[5])), [1., 12., 123., 234., 340.]);
        assert_eq!(
            one(&a(SameUpper), Some(&[8])),
            [1., 12., 123., 234., 340., 400., 0., 0.]
        );
        assert_eq!(one(&a(SameUpper), None), [1., 12., 123., 234., 340., 400.]);
        // Dilation 2: the taps land 0, 2, 4 past x.
        let d2 = op(false, &[1], &[2], &[0], &[0], Explicit, &[]);
        assert_eq!(one(&d2, None), [1., 2., 13., 24., 130., 240., 300., 400.]);
        // Two input channels summed; groups of one channel each.
        let o = op(false, &[1], &[1], &[0], &[0], Explicit, &[]);
        let got = run(
            &o,
            &[1, 2, 2],
            vec![1f32, 2., 10., 20.],
            &[2, 1, 2],
            vec![1., 1., 1., -1.],
            None,
        )
        .unwrap();
        assert_eq!(got, (vec![1, 1, 3], vec![11., 13., -18.]));
        let g = op(true, &[1], &[1], &[0], &[0], Explicit, &[]);
        let got = run(
            &g,
            &[1, 2, 2],
            vec![1f32, 2., 10., 20.],
            &[2, 1, 1, 2],
            vec![1., 1., 1., -1.],
            None,
        )
        .unwrap();
        assert_eq!(got, (vec![1, 2, 3], vec![1., 3., 2., 10., 10., -20.]));
        // Integers wrap.
        let got = run(&o, &[1, 1, 1], vec![100i8], &[1, 1, 2], vec![3i8, 1], None).unwrap();
        assert_eq!(got.1, [44, 100]);
        // Errors at execution.
        for (ds, xs, out, why) in [
            (
                &[1, 1, 4],
                x(),
                Some(&[-1][..]),
                "output_shape element 0 is -1",
            ),
            (&[1, 1, 4], x(), Some(&[4, 4]), "output_shape has 2 values"),
            (&[1, 2, 4], vec![0f32; 8], None, "channels"),
        ] {
            let err = run(&e(1, 0, 0, 0), ds, xs, &[1, 1, 3], w(), out).unwrap_err();
            assert!(err.to_string().contains(why), "{err}");
        }
    }

    /// A geometry of the reference comparisons.
    struct Case {
        op: ConvolutionBackprop,
        data: Vec<usize>,
        filters: Vec<usize>,
        output: Option<Vec<i64>>,
    }

    #[rustfmt::skip]
    fn cases() -> Vec<Case> {
        use AutoPad::*;
        let c = |grouped,
                 s: &[u64],
                 d: &[u64],
                 pb: &[u64],
                 pe: &[u64],
                 ap,
                 op_: &[u64],
                 data: &[usize],
                 filters: &[usize],
                 output: Option<&[i64]>| Case {
            op: op(grouped, s, d, pb, pe, ap, op_),
            data: data.to_vec(),
            filters: filters.to_vec(),
            output: output.map(<[i64]>::to_vec),
        };
        vec![
            c(false, &[1], &[1], &[0], &[0], Explicit, &[], &[2, 3, 7], &[3, 2, 3], None),
            c(false, &[3], &[2], &[2], &[1], Explicit, &[2], &[1, 2, 6], &[2, 3, 3], None),
            c(false, &[2], &[1], &[1], &[1], SameUpper, &[1], &[1, 2, 6], &[2, 3, 4], Some(&[11])),
            c(true, &[2], &[1], &[0], &[0], SameLower, &[], &[1, 4, 5], &[2, 2, 3, 3], Some(&[10])),
            c(false, &[2, 2], &[1, 1], &[1, 1], &[1, 1], Explicit, &[1, 1], &[1, 3, 5, 4], &[3, 2, 3, 3], None),
            c(false, &[2, 3], &[2, 1], &[0, 2], &[1, 0], Explicit, &[0, 2], &[2, 2, 4, 3], &[2, 3, 2, 4], None),
            c(false, &[1, 2], &[1, 1], &[3, 0], &[0, 0], Explicit, &[], &[1, 2, 4, 4], &[2, 2, 3, 2], Some(&[9, 5])),
            c(false, &[2, 2], &[1, 1], &[], &[], Valid, &[], &[1, 2, 3, 4], &[2, 3, 3, 3], Some(&[6, 12])),
            c(true, &[2, 2], &[1, 1], &[], &[], SameUpper, &[], &[1, 6, 4, 5], &[3, 2, 2, 4, 4], Some(&[8, 10])),
            c(true, &[1, 1], &[2, 2], &[1, 1], &[1, 1], Explicit, &[], &[2, 3, 4, 4], &[3, 1, 1, 3, 3], None),
            c(false, &[2, 1, 2], &[1, 2, 1], &[1, 0, 0], &[0, 1, 1], Explicit, &[1, 0, 0], &[1, 2, 3, 3, 4], &[2, 2, 2, 3, 3], None),
            c(true, &[2, 2, 2], &[1, 1, 1], &[], &[], SameLower, &[], &[1, 4, 2, 3, 3], &[2, 2, 1, 3, 3, 3], Some(&[4, 6, 5])),
            // 11550 data positions: two tiles of columns (three in f64).
            c(false, &[2, 3], &[2, 1], &[0, 2], &[1, 0], Explicit, &[0, 2], &[1, 2, 110, 105], &[2, 3, 2, 4], None),
        ]
    }

    /// The float64 reference by the definition: every product of data and filters added to
    /// the output element it lands on; each output and its `Σ|w·x|`.
    fn reference(c: &Case, x: &[f64], w: &[f64], out_shape: &[usize]) -> (Vec<f64>, Vec<f64>) {
        let spatial = c.data.len() - 2;
        let extra = if c.op.grouped { 3 } else { 2 };
        let (groups, cig, cog) = if c.op.grouped {
            (c.filters[0], c.filters[1], c.filters[2])
        } else {
            (1, c.filters[0], c.filters[1])
        };
        let (xsp, ksp, osp) = (&c.data[2..], &c.filters[extra..], &out_shape[2..]);
        let (in_plane, taps, plane) = (
            xsp.iter().product::<usize>(),
            ksp.iter().product::<usize>(),
            osp.iter().product::<usize>(),
        );
        // The begin pads, from the spec's formulas (OpenVINO's reading for explicit).
        let pads: Vec<i64> = (0..spatial)
            .map(|i| {
                let (s, d) = (
                    c.op.window.strides[i] as i64,
                    c.op.window.dilations.as_ref().unwrap()[i] as i64,
                );
                let op_ = c.op.output_padding.get(i).copied().unwrap_or(0) as i64;
                match (c.op.window.auto_pad, &c.output) {
                    (AutoPad::Explicit, _) => c.op.window.pads_begin[i] as i64,
                    (_, None) | (AutoPad::Valid, _) => 0,
                    (ap, Some(o)) => {
                        let total = ((xsp[i] as i64 - 1) * s + (ksp[i] as i64 - 1) * d + 1 - o[i]
                            + op_)
                            .max(0);
                        if ap == AutoPad::SameUpper {
                            total - total / 2
                        } else {
                            total / 2
                        }
                    }
                }
            })
            .collect();
        let mut vals = vec![0f64; out_shape.iter().product()];
        let mut abs = vals.clone();
        for n in 0..c.data[0] {
            for grp in 0..groups {
                for ci in 0..cig {
                    for m in 0..cog {
                        for p in 0..in_plane {
                            let xi = crate::tensor::unravel(p, xsp);
                            let xv = x[((n * groups + grp) * cig + ci) * in_plane + p];
                            for t in 0..taps {
                                let ti = crate::tensor::unravel(t, ksp);
                                let mut flat = 0usize;
                                let mut inside = true;
                                for i in 0..spatial {
                                    let (s, d) = (
                                        c.op.window.strides[i] as i64,
                                        c.op.window.dilations.as_ref().unwrap()[i] as i64,
                                    );
                                    let y = xi[i] as i64 * s + ti[i] as i64 * d - pads[i];
                                    inside &= y >= 0 && (y as usize) < osp[i];
                                    flat = flat * osp[i] + y.max(0) as usize;
                                }
                                if inside {
                                    let wv = w[((grp * cig + ci) * cog + m) * taps + t];
                                    let at = ((n * groups + grp) * cog + m) * plane + flat;
                                    vals[at] += xv * wv;
                                    abs[at] += (xv * wv).abs();
                                }
                            }
                        }
                    }
                }
            }
        }
        (vals, abs)
    }

    #[test]
    fn floats_match_the_float64_reference() {
        for (idx, c) in cases().iter().enumerate() {
            let (nx, nw) = (c.data.iter().product(), c.filters.iter().product());
            let x = uniform_for_test(nx, 3 * idx as u64 + 1, -1.0, 1.0);
            let w = uniform_for_test(nw, 3 * idx as u64 + 2, -1.0, 1.0);
            let out = c.output.as_deref();
            let (shape, got) = run(&c.op, &c.data, x.clone(), &c.filters, w.clone(), out).unwrap();
            // The inferred shape is the computed one.
            let mut inputs = vec![
                TensorType::new(ElementType::F32, PartialShape::of_tensor(&c.data)),
                TensorType::new(ElementType::F32, PartialShape::of_tensor(&c.filters)),
            ];
            if let Some(o) = out {
                inputs.push(shape_value(o));
            }
            let refs: Vec<&TensorType> = inputs.iter().collect();
            assert_eq!(
                inferred_shape_for_test(&c.op, &refs),
                Ok(PartialShape::of_tensor(&shape).to_string()),
                "case {idx}"
            );
            let f64s = |v: &[f32]| v.iter().map(|&a| a as f64).collect::<Vec<_>>();
            let (want, abs) = reference(c, &f64s(&x), &f64s(&w), &shape);
            let cig = c.filters[if c.op.grouped { 1 } else { 0 }];
            let taps: usize = c.filters[if c.op.grouped { 3 } else { 2 }..]
                .iter()
                .product();
            // Direct (one input channel per group): recursive summation; else the GEMM's
            // blocked sums over the channels, then the taps.
            let units = if cig == 1 {
                (taps + 1) as f64
            } else {
                (cig.min(256) + cig.div_ceil(256) + taps + 1) as f64
            };
            for (j, ((&g, &r), &a)) in got.iter().zip(&want).zip(&abs).enumerate() {
                assert!(
                    (g as f64 - r).abs() <= units * 2f64.powi(-24) * a,
                    "case {idx} f32 element {j}: {g} vs {r}"
                );
            }
            let (_, got64) = run(&c.op, &c.data, f64s(&x), &c.filters, f64s(&w), out).unwrap();
            for (j, ((&g, &r), &a)) in got64.iter().zip(&want).zip(&abs).enumerate() {
                assert!(
                    (g - r).abs() <= units * 2f64.powi(-53) * a,
                    "case {idx} f64 element {j}: {g} vs {r}"
                );
            }
            // f16 and bf16: the f32 computation on the widened inputs, rounded once.
            let what = format!("case {idx} f16");
            rounded_once(c, &x, &w, f16::from_f32, f16::to_f32, &what);
            let what = format!("case {idx} bf16");
            rounded_once(c, &x, &w, bf16::from_f32, bf16::to_f32, &what);
            // Integers: small values, exact.
            let small = |v: &[f32]| {
                v.iter()
                    .map(|&a| (a * 8.0).floor() as i64)
                    .collect::<Vec<_>>()
            };
            let (xi, wi) = (small(&x), small(&w));
            let fi = |v: &[i64]| v.iter().map(|&a| a as f64).collect::<Vec<_>>();
            let (want_i, _) = reference(c, &fi(&xi), &fi(&wi), &shape);
            let (_, got_i) = run(
                &c.op,
                &c.data,
                xi.iter().map(|&v| v as i16).collect(),
                &c.filters,
                wi.iter().map(|&v| v as i16).collect(),
                out,
            )
            .unwrap();
            assert_eq!(
                got_i,
                want_i.iter().map(|&v| v as i64 as i16).collect::<Vec<_>>(),
                "case {idx} i16"
            );
        }
    }

    /// A narrow float type (`narrow` from f32, `wide` back): the run on `x` and `w` rounded to
    /// it gives the f32 run on the same values, rounded once.
    fn rounded_once<H: Element>(
        c: &Case,
        x: &[f32],
        w: &[f32],
        narrow: fn(f32) -> H,
        wide: fn(H) -> f32,
        what: &str,
    ) {
        let (xh, wh): (Vec<H>, Vec<H>) = (
            x.iter().map(|&v| narrow(v)).collect(),
            w.iter().map(|&v| narrow(v)).collect(),
        );
        let widened = |v: &[H]| v.iter().map(|&a| wide(a)).collect::<Vec<f32>>();
        let out = c.output.as_deref();
        let (_, want) = run(&c.op, &c.data, widened(&xh), &c.filters, widened(&wh), out).unwrap();
        let (_, got) = run(&c.op, &c.data, xh, &c.filters, wh, out).unwrap();
        let want: Vec<H> = want.iter().map(|&v| narrow(v)).collect();
        assert_eq!(got, want, "{what}");
    }

    #[test]
    fn the_same_bits_at_any_thread_count() {
        // The GEMM (one tile, several tiles, output-channel blocks) and the direct scatter.
        let all = cases();
        for idx in [5, 9, 12] {
            let c = &all[idx];
            let (nx, nw) = (c.data.iter().product(), c.filters.iter().product());
            let x = uniform_for_test(nx, 11, -1.0, 1.0);
            let w = uniform_for_test(nw, 12, -1.0, 1.0);
            let out = c.output.as_deref();
            let runs = bits_at_thread_counts(&[1, 2, 4], || {
                run(&c.op, &c.data, x.clone(), &c.filters, w.clone(), out)
                    .unwrap()
                    .1
            });
            assert!(runs[1] == runs[0] && runs[2] == runs[0], "case {idx}");
        }
    }

    #[test]
    fn sizes_are_checked_before_allocating() {
        let o = op(false, &[1, 1], &[1, 1], &[], &[], AutoPad::Explicit, &[]);
        let x = tensor_for_test(&[1, 1, 4, 4], vec![1f32; 16]);
        let w = tensor_for_test(&[1, 1, 3, 3], vec![1f32; 9]);
        let big = tensor_for_test(&[2], vec![100_000i64, 100_000]);
        let err = eval_for_test(&o, &[x, w, big], 1 << 30).unwrap_err();
        assert!(matches!(err, EvalError::Memory(_)), "{err}");
        let xh = tensor_for_test(&[1, 1, 4, 4], vec![f16::ONE; 16]);
        let wh = tensor_for_test(&[1, 1, 3, 3], vec![f16::ONE; 9]);
        let err = eval_for_test(&o, &[xh.clone(), wh.clone()], 64).unwrap_err();
        assert!(matches!(err, EvalError::Memory(_)), "{err}");
        assert!(eval_for_test(&o, &[xh, wh], 1 << 20).is_ok());
    }
}
