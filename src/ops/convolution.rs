//! Convolution-1 and GroupConvolution-1: 1D, 2D and 3D cross-correlation of `[N, C_IN, spatial…]`
//! data with filters, in groups.
//!
//! Specs: <https://docs.openvino.ai/2026/documentation/openvino-ir-format/operation-sets/operation-specs/convolution/convolution-1.html>
//! and <https://docs.openvino.ai/2026/documentation/openvino-ir-format/operation-sets/operation-specs/convolution/group-convolution-1.html>.
//!
//! Ports: `data` of rank 3, 4 or 5 and `filters` of one numeric type (the spec's "any numeric
//! type"; boolean is refused, E502); one output of that type. Convolution's filters are
//! `[C_OUT, C_IN, k…]`; GroupConvolution's `[G, C_OUT/G, C_IN/G, k…]`, the groups read from
//! the filters (`C_IN` must be `G · C_IN/G`). The output is `[N, C_OUT, o…]`, where
//! `out[n, g·C_OUT/G + m, o] = Σ_{c, t} data[n, g·C_IN/G + c, o·s + t·d − p_b] ·
//! filters[g, m, c, t]` over the input channels `c` of the group and the kernel taps `t`,
//! zero outside the data. The attributes (`strides`, `dilations`, `pads_begin`, `pads_end`,
//! `auto_pad`) and the output dims are [`spatial`](super::spatial)'s rules, as in OpenVINO's
//! shape inference.
//!
//! Decisions: inference checks the ranks (data 3 to 5, filters one more for groups), the
//! channels (`data C == filters dim 1`; GroupConvolution: `data C == G · filters dim 2`, the
//! group count narrowed from the data's channels when those are known), the attribute
//! lengths against the spatial rank and strides and dilations of at least 1 (E507 naming the
//! attribute); an empty kernel, a kernel larger than the padded data, pads that are negative
//! (an attribute error) are refused (see `spatial.rs`). Inference does not fold constant
//! inputs (convolution is neither cheap nor exact).
//!
//! Execution (every path sums each output element's products in one fixed order, the input
//! channels of the group then the kernel taps `kd, kh, kw`, so its bits depend only on the
//! geometry, not on the thread count or the vector unit):
//! * **f32** through the packed GEMM of [`gemm`](crate::ops::kernel::gemm): per image and
//!   group, `out[C_OUT/G × P] = filters[C_OUT/G × K] · cols[K × P]` with `K = C_IN/G · taps`,
//!   `P` the output positions. The columns are gathered (im2col) a tile of output positions
//!   at a time, straight into the column panels the GEMM reads, in a scratch of at most
//!   about 1 MiB per thread, the tile's columns and output rows together within that size
//!   so that the epilogue finds the output in the cache (a 1×1 kernel with stride 1 and no
//!   padding copies the data rows, or, with at most 128 output channels per group, the GEMM
//!   reads them in place; over planes of one position, a squeeze-and-excitation block's,
//!   each output channel's chain is computed 16 channels at a time from the filters
//!   transposed in registers, [`gemv`]); the filters are read where they lie (a Const's
//!   bytes).
//!   With two real axes (or one) and not pointwise, there is no column matrix (an implicit
//!   GEMM): every input plane is copied once with its padding, as the planes of its
//!   strides' phases, so that each tap of every output is a fixed offset in the copy, and
//!   the GEMM reads row `(c, tap)` of a tile's columns where it lies in the copy of plane
//!   `c`; the tiles are whole output rows, their sums computed `wq` a row (the copy's row,
//!   its extra positions dropped) in the scratch and copied to the output. The copies (the
//!   input and its padding, once) count against the budget.
//!   Each output is one fused multiply-add chain over `K` in order, so the bits are the
//!   same on AVX-512, AVX2 and plain code, and on either way to the columns. The parts
//!   (image, group, tile, and output-channel blocks when they are too few for the threads)
//!   run in parallel with rayon, each writing its own output elements.
//! * **f64** alike through the GEMM crate of [`matmul`](super::matmul) (`matrixmultiply`),
//!   the columns gathered in rows (a pointwise convolution reads the data in place);
//! * **depthwise** (one input channel per group and at most 4 output channels per group):
//!   a direct loop, each output `acc + w·x` (multiply, then add: no fused multiply-add, so
//!   the same bits on every CPU) tap after tap from +0. With one output channel per group
//!   and two real axes (MobileNet's and ShuffleNet's 3×3 layers), 16 planes go side by side
//!   ([`lanes`](crate::ops::kernel::lanes)): copied with zeros around them into one buffer,
//!   plane `c` in lane `c` of every position (squares of 16 × 16 transposed in registers),
//!   so that each tap is one vector load and one multiply and add for 16 planes at any
//!   stride, the outputs transposed back to their planes (kernel rows that meet only the
//!   padding for a block of outputs skipped: they would add zeros); blocks of planes in
//!   parallel.
//!   Otherwise output planes in parallel: a 2D plane is copied with zeros around it (as
//!   the planes of its strides' phases), so that every tap is one fixed offset from the
//!   output's index and the sums over the whole plane run in blocks of up to 32 held in
//!   registers through all the taps, across rows, with no border cases. The zeros leave
//!   the bits those of skipping the padding when the weights are finite; otherwise, and
//!   where most rows' taps fall in the padding, each row's interior runs in such blocks and
//!   its borders position by position, taps in the padding skipped. The copy (at most the
//!   input and output planes and 64 Ki elements per thread, 16 times that side by side)
//!   counts against the budget;
//! * **f16 and bf16**: as f32 (inputs widened exactly, the data while gathering the columns),
//!   each output rounded once to the type;
//! * **integers** exact with two's complement wrap-around (the direct loop).
//!
//! Padding is not multiplied in by the direct loop (as OpenVINO's reference skips it) but is
//! by the GEMM: an infinite or NaN weight makes the border outputs it meets NaN there.
//!
//! Accuracy per output element against the exact sum, `Σ|w·x|`-relative (u = 2^-24 or
//! 2^-53): f32 `(K + 1)·u` (the fused chain and depthwise's recursive summation of `K`
//! products); f64 through the crate `(256 + ⌈K/256⌉ + 1)·u` (its K blocks of 256, summed in
//! order). The tests measure both against a float64 reference.
//!
//! The output and the scratch (the columns of every thread, the f32 copies of f16/bf16
//! filters and output) are checked against the memory budget, with overflow-checked sizes,
//! before anything is allocated.

use std::borrow::Cow;
use std::mem::MaybeUninit;

use rayon::prelude::*;

use super::spatial::{Rule, Window};
use super::{Arity, AttrError, Attrs, EvalCx, EvalError, InferCx, Op, OpDef};
use crate::ElementType;
use crate::num::Int;
use crate::ops::kernel::epilogue::Epilogue;
use crate::ops::kernel::gemm::{MAX_NR, Panels};
use crate::ops::kernel::gemv;
use crate::ops::kernel::lanes::{LANES, Lane, Lanes, Square};
use crate::ops::kernel::phases::{Phases, Window2, copy_every, sweep};
use crate::ops::kernel::simd::{Simd, vectorised_for};
use crate::ops::kernel::{tensor_from, value_data, vectorised, with_scratch};
use crate::ops::matmul::{Gemm, Shared, narrow, widen};
use crate::shape::{Dim, PartialShape, TensorType};
use crate::tensor::{Element, Tensor, TypeSet};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Convolution {
    pub window: Window,
    /// GroupConvolution: filters `[G, C_OUT/G, C_IN/G, k…]`.
    pub grouped: bool,
}

pub const CONVOLUTION: OpDef = OpDef {
    name: "Convolution",
    version: 1,
    inputs: Arity::exactly(2),
    outputs: Arity::exactly(1),
    parse: parse_plain,
};

pub const GROUP_CONVOLUTION: OpDef = OpDef {
    name: "GroupConvolution",
    parse: parse_group,
    ..CONVOLUTION
};

fn parse_plain(a: &Attrs) -> Result<Box<dyn Op>, Vec<AttrError>> {
    Ok(Box::new(Convolution {
        window: Window::parse(a, true)?,
        grouped: false,
    }))
}

fn parse_group(a: &Attrs) -> Result<Box<dyn Op>, Vec<AttrError>> {
    Ok(Box::new(Convolution {
        window: Window::parse(a, true)?,
        grouped: true,
    }))
}

/// The number of spatial axes, from the data's rank (`[N, C, spatial…]`), else the filters'
/// (`filter_extra` leading non-spatial dims), else the attributes' `hint`; checks the ranks.
/// `None`: unknown. An error names the port.
pub(crate) fn spatial_rank(
    op: &str,
    data: Option<usize>,
    filters: Option<usize>,
    filter_extra: usize,
    hint: Option<usize>,
) -> Result<Option<usize>, (usize, String)> {
    if let Some(r) = data
        && !(3..=5).contains(&r)
    {
        return Err((
            0,
            format!(
                "the data has rank {r}; {op} takes data of rank 3, 4 or 5 (1 to 3 spatial axes)"
            ),
        ));
    }
    if let Some(f) = filters {
        match data {
            Some(r) if f != r - 2 + filter_extra => {
                return Err((
                    1,
                    format!(
                        "the filters have rank {f}, but data of rank {r} needs filters of rank {}",
                        r - 2 + filter_extra
                    ),
                ));
            }
            None if !(filter_extra + 1..=filter_extra + 3).contains(&f) => {
                return Err((
                    1,
                    format!(
                        "the filters have rank {f}; {op} takes filters of rank {} to {}",
                        filter_extra + 1,
                        filter_extra + 3
                    ),
                ));
            }
            _ => {}
        }
    }
    Ok(data
        .map(|r| r - 2)
        .or(filters.map(|f| f - filter_extra))
        .or(hint))
}

/// The group count: `groups` (a filter dim) narrowed to the values for which `channels`
/// (the data's) is `groups · per_group`; `None` if there are none.
pub(crate) fn group_count(channels: Dim, groups: Dim, per_group: Dim) -> Option<Dim> {
    match per_group.get_static() {
        Some(0) => channels.contains(0).then_some(groups),
        Some(k) => {
            let q = Dim::interval(channels.min().div_ceil(k), channels.max().map(|m| m / k))?;
            groups.merge(q)
        }
        None => channels.merge(groups.times(per_group)).map(|_| groups),
    }
}

/// The dims of a shape, or `n` dynamic dims for a dynamic rank.
pub(crate) fn dims_or_dynamic(s: &PartialShape, n: usize) -> Vec<Dim> {
    s.dims()
        .map_or_else(|| vec![Dim::DYNAMIC; n], <[Dim]>::to_vec)
}

/// The one element type of the data and the filters (ports 0 and 1; a dynamic type takes the
/// other's); `None` once two types are reported.
pub(crate) fn one_type(cx: &mut InferCx<'_>, op: &str) -> Option<ElementType> {
    let (d, f) = (cx.input(0).element_type, cx.input(1).element_type);
    let dynamic = ElementType::Dynamic;
    if d != f && d != dynamic && f != dynamic {
        return cx.invalid(
            1,
            format!("the data is {d} and the filters {f}: {op}'s inputs have one type"),
        );
    }
    Some(if d == dynamic { f } else { d })
}

/// The output channels from the data's channels `c` and the filters' dims `f`, whose input
/// and output channels per group are dims `cin` and `cout` of the grouped form. Grouped: the
/// groups (`f[0]`, narrowed so that `c` is the groups times `f[cin]`) times `f[cout]`;
/// otherwise `f[cout − 1]`, `c` being `f[cin − 1]`. An error names the filters' port.
pub(crate) fn out_channels(
    grouped: bool,
    c: Dim,
    f: &[Dim],
    cin: usize,
    cout: usize,
) -> Result<Dim, (usize, String)> {
    if grouped {
        let groups = group_count(c, f[0], f[cin]).ok_or_else(|| {
            (
                1,
                format!(
                    "the data has {c} channels, which is not the groups ({}, filters dim 0) times the input channels per group ({}, filters dim {cin})",
                    f[0], f[cin]
                ),
            )
        })?;
        Ok(groups.times(f[cout]))
    } else {
        let (cin, cout) = (cin - 1, cout - 1);
        c.merge(f[cin]).ok_or_else(|| {
            (
                1,
                format!(
                    "the data has {c} channels but the filters take {} input channels (filters dim {cin})",
                    f[cin]
                ),
            )
        })?;
        Ok(f[cout])
    }
}

/// Where index `i` and tap `t` meet along an axis of stride `s`, dilation `d` and begin pad
/// `p`: `i·s + t·d − p`, if it lies in `0..extent`.
#[inline(always)]
pub(crate) fn meet(
    i: usize,
    t: usize,
    s: usize,
    d: usize,
    p: usize,
    extent: usize,
) -> Option<usize> {
    let j = (i * s + t * d) as isize - p as isize;
    (j >= 0 && (j as usize) < extent).then_some(j as usize)
}

/// For tap `t` of an axis of stride `s`, dilation `d` and begin pad `p`: its offset `t·d − p`
/// and the indices `lo..hi` (below `count`) whose `i·s + offset` lies in `0..extent`.
#[inline(always)]
pub(crate) fn span(
    t: usize,
    s: usize,
    d: usize,
    p: usize,
    extent: usize,
    count: usize,
) -> (isize, usize, usize) {
    let off = (t * d) as isize - p as isize;
    let lo = if off >= 0 {
        0
    } else {
        off.unsigned_abs().div_ceil(s)
    };
    let last = extent as isize - 1 - off;
    let hi = if last < 0 {
        0
    } else {
        (last as usize / s + 1).min(count)
    };
    (off, lo.min(hi), hi)
}

/// The column scratch a GEMM tile aims at (per thread).
pub(crate) const SCRATCH_BYTES: usize = 1 << 20;

/// The positions of a tile: as many as fill [`SCRATCH_BYTES`] with `rows` elements of `elem`
/// bytes each, at least `fewest`, at most `positions` (and at least 1).
pub(crate) fn tile_width(rows: usize, elem: usize, fewest: usize, positions: usize) -> usize {
    (SCRATCH_BYTES / rows.saturating_mul(elem).max(1))
        .max(fewest)
        .min(positions)
        .max(1)
}

/// The blocks `m0..m1` of the `channels` output channels that each of `base` parts is split
/// into: one block when the parts are at least twice the threads, else enough for that, at
/// most `most` (the bits depend on neither).
pub(crate) fn channel_blocks(base: usize, channels: usize, most: usize) -> Vec<(usize, usize)> {
    let threads = rayon::current_num_threads().max(1);
    let split = if base == 0 || base >= 2 * threads {
        1
    } else {
        (2 * threads).div_ceil(base).min(most).max(1)
    };
    let step = channels.div_ceil(split).max(1);
    let mut blocks = Vec::with_capacity(split);
    let mut m0 = 0;
    while m0 < channels {
        let m1 = (m0 + step).min(channels);
        blocks.push((m0, m1));
        m0 = m1;
    }
    blocks
}

impl Convolution {
    fn op_name(&self) -> &'static str {
        if self.grouped {
            "GroupConvolution"
        } else {
            "Convolution"
        }
    }

    /// Leading non-spatial dims of the filters.
    fn filter_extra(&self) -> usize {
        if self.grouped { 3 } else { 2 }
    }

    /// The output shape from the inputs' shapes, with every check; an error names the port.
    pub(crate) fn shape(
        &self,
        data: &PartialShape,
        filters: &PartialShape,
    ) -> Result<PartialShape, (usize, String)> {
        let extra = self.filter_extra();
        let Some(spatial) = spatial_rank(
            self.op_name(),
            data.rank(),
            filters.rank(),
            extra,
            self.window.spatial_hint(),
        )?
        else {
            return Ok(PartialShape::dynamic_rank());
        };
        self.window.validate(spatial).map_err(|e| (0, e))?;
        let d = dims_or_dynamic(data, 2 + spatial);
        let f = dims_or_dynamic(filters, extra + spatial);
        let channels = out_channels(self.grouped, d[1], &f, 2, 1)?;
        let mut out = vec![d[0], channels];
        for i in 0..spatial {
            let axis = self
                .window
                .forward(Rule::Convolution, i, d[2 + i], f[extra + i])
                .map_err(|e| (0, e))?;
            out.push(axis.out);
        }
        Ok(PartialShape::new(out))
    }

    /// The geometry of a run on static shapes.
    fn geometry(&self, data: &[usize], filters: &[usize]) -> Result<Geometry, EvalError> {
        let out = self
            .shape(
                &PartialShape::of_tensor(data),
                &PartialShape::of_tensor(filters),
            )
            .map_err(|(_, e)| EvalError::Invalid(e))?;
        let out_shape = out
            .to_tensor_dims()
            .ok_or(EvalError::Internal("Convolution's output shape"))?;
        let spatial = data.len() - 2;
        let extra = self.filter_extra();
        let (groups, cog, cig) = if self.grouped {
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
        let too_large = || EvalError::Invalid("the convolution's geometry is too large".into());
        for i in 0..spatial {
            let a = 3 - spatial + i;
            let axis = self
                .window
                .forward_static(Rule::Convolution, i, data[2 + i], filters[extra + i])
                .map_err(EvalError::Invalid)?;
            let (s, d) = (self.window.stride(i), self.window.dilation(i));
            // Every index the loops form, `o·s + t·d − p`, must fit an isize.
            let reach = (axis.out.saturating_sub(1) as u128) * s as u128
                + (filters[extra + i].saturating_sub(1) as u128) * d as u128;
            if reach > isize::MAX as u128 || axis.pad_begin > isize::MAX as u64 {
                return Err(too_large());
            }
            g.input[a] = data[2 + i];
            g.kernel[a] = filters[extra + i];
            g.output[a] = axis.out;
            g.stride[a] = usize::try_from(s).map_err(|_| too_large())?;
            g.dilation[a] = usize::try_from(d).map_err(|_| too_large())?;
            g.pad[a] = axis.pad_begin as usize;
        }
        g.drop_trivial_axes();
        Ok(g)
    }
}

impl Op for Convolution {
    fn def(&self) -> Option<&'static OpDef> {
        Some(if self.grouped {
            &GROUP_CONVOLUTION
        } else {
            &CONVOLUTION
        })
    }

    fn infer(&self, cx: &mut InferCx<'_>) -> Option<Vec<TensorType>> {
        cx.require(0..2, TypeSet::NUMERIC)?;
        let ty = one_type(cx, self.op_name())?;
        let (d, f) = (cx.input(0), cx.input(1));
        match self.shape(&d.shape, &f.shape) {
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
        let g = self.geometry(vd.shape(), vf.shape())?;
        let unsupported = || EvalError::UnsupportedType {
            op: self.op_name().into(),
            ty,
        };
        crate::dispatch!(numeric: ty, T => {
            let x = value_data::<T>(vd).ok_or_else(unsupported)?;
            let w = value_data::<T>(vf).ok_or_else(unsupported)?;
            let out = T::convolve(cx, &g, &x, &w)?;
            Ok(vec![tensor_from(&g.out_shape, out)?])
        }, _ => Err(unsupported()))
    }

    fn takes_epilogue(&self) -> bool {
        true
    }

    /// f32 data and filters: the steps applied to each output plane (the direct path) or
    /// each part's block of rows (the GEMM path) right after it is computed.
    fn eval_then<'a>(
        &self,
        cx: &EvalCx<'_>,
        then: &dyn Fn(&[usize]) -> Option<Epilogue<'a>>,
    ) -> Option<Result<Vec<Tensor>, EvalError>> {
        let (vd, vf) = (cx.value(0), cx.value(1));
        if vd.element_type() != ElementType::F32 || vf.element_type() != ElementType::F32 {
            return None;
        }
        let g = match self.geometry(vd.shape(), vf.shape()) {
            Ok(g) => g,
            Err(e) => return Some(Err(e)),
        };
        // (No taps: the output is zeros, written without a pass the steps could join.)
        if g.k() == 0 || g.output_len().is_none_or(|n| n == 0) {
            return None;
        }
        let epilogue = then(&g.out_shape)?;
        let (x, w) = (value_data::<f32>(vd)?, value_data::<f32>(vf)?);
        let out = float_conv(
            cx,
            &g,
            &x,
            Some(&x),
            || Cow::Borrowed(&w),
            0,
            |v| v,
            Some(&epilogue),
        );
        Some(out.and_then(|out| Ok(vec![tensor_from(&g.out_shape, out)?])))
    }
}

/// A run's geometry, its spatial axes as three (`[1, 1, W]` for 1D, `[1, H, W]` for 2D).
#[derive(Clone, Debug)]
struct Geometry {
    batch: usize,
    groups: usize,
    /// Input and output channels per group.
    cig: usize,
    cog: usize,
    input: [usize; 3],
    kernel: [usize; 3],
    output: [usize; 3],
    stride: [usize; 3],
    dilation: [usize; 3],
    /// The begin pads.
    pad: [usize; 3],
    out_shape: Vec<usize>,
}

impl Geometry {
    /// Moves the axes with one input position, one tap, one output position and no padding
    /// to the front, keeping the others in order. The positions, the taps and their order
    /// are the same (so are the bits), but the last axis is a real one: a `[H, 1]` image with
    /// an `[k, 1]` filter runs as rows `H` long, not as `H` rows of one position.
    fn drop_trivial_axes(&mut self) {
        let trivial = |a: usize| {
            self.input[a] == 1 && self.kernel[a] == 1 && self.output[a] == 1 && self.pad[a] == 0
        };
        let kept: Vec<usize> = (0..3).filter(|&a| !trivial(a)).collect();
        let shift = 3 - kept.len();
        // Axis `b` of the result: a trivial one's values in front, then the kept ones.
        let moved = |v: [usize; 3], none: usize| -> [usize; 3] {
            std::array::from_fn(|b| if b < shift { none } else { v[kept[b - shift]] })
        };
        self.input = moved(self.input, 1);
        self.kernel = moved(self.kernel, 1);
        self.output = moved(self.output, 1);
        self.stride = moved(self.stride, 1);
        self.dilation = moved(self.dilation, 1);
        self.pad = moved(self.pad, 0);
    }

    fn in_plane(&self) -> usize {
        self.input.iter().product()
    }

    fn out_plane(&self) -> usize {
        self.output.iter().product()
    }

    fn taps(&self) -> usize {
        self.kernel.iter().product()
    }

    /// The length of each output element's sum.
    fn k(&self) -> usize {
        self.cig * self.taps()
    }

    /// Elements of the output (its shape's product, which `shape` bounded by 2^63).
    fn output_len(&self) -> Option<usize> {
        self.out_shape
            .iter()
            .try_fold(1usize, |n, &d| n.checked_mul(d))
    }

    /// Depthwise: the direct loop.
    fn depthwise(&self) -> bool {
        self.cig == 1 && self.cog <= 4
    }

    /// A 1×1 kernel with stride 1 and no padding: the data is the column matrix.
    fn pointwise(&self) -> bool {
        self.kernel == [1; 3] && self.stride == [1; 3] && self.pad == [0; 3]
    }

    /// The index along axis `a` that output index `o` and tap `t` meet, if inside the data.
    #[inline(always)]
    fn at(&self, a: usize, o: usize, t: usize) -> Option<usize> {
        meet(
            o,
            t,
            self.stride[a],
            self.dilation[a],
            self.pad[a],
            self.input[a],
        )
    }

    /// The offset along the last axis of tap `t` (`t·d − p`) and the output indices `lo..hi`
    /// whose `o·s + offset` lies in the data.
    #[inline(always)]
    fn row_span(&self, t: usize) -> (isize, usize, usize) {
        span(
            t,
            self.stride[2],
            self.dilation[2],
            self.pad[2],
            self.input[2],
            self.output[2],
        )
    }

    /// Checks that the inputs hold what the shapes say (the kernels index by the geometry).
    fn check(&self, x: usize, w: usize) -> Result<(), EvalError> {
        let want_x = [self.batch, self.groups, self.cig, self.in_plane()]
            .iter()
            .try_fold(1usize, |n, &d| n.checked_mul(d));
        let want_w = [self.groups, self.cog, self.k()]
            .iter()
            .try_fold(1usize, |n, &d| n.checked_mul(d));
        if want_x != Some(x) || want_w != Some(w) {
            return Err(EvalError::Internal(
                "the convolution's inputs do not hold their shapes",
            ));
        }
        Ok(())
    }
}

/// An accumulator of the direct loop: `acc + w·x`, floats multiplied then added (two
/// roundings, the same on every CPU), integers wrapping.
pub(crate) trait Acc: Lane + Send + Sync {
    const ZERO: Self;
    fn mac(self, w: Self, x: Self) -> Self;

    /// Whether adding `w·0` for a tap in the padding leaves every sum as skipping the tap
    /// does. For floats, when the weights are finite: `w·0` is then ±0, and a sum that starts
    /// from +0 is never −0 (round to nearest gives +0 for `+0 + −0` and for exact
    /// cancellation), so adding ±0 returns it unchanged. An infinite or NaN weight makes
    /// `w·0` NaN. For integers, always.
    fn pads_vanish(w: &[Self]) -> bool;

    /// Applies `then` to `out`, positions `p0..` of image `n`, channel `c` (only f32 outputs
    /// take an epilogue).
    #[inline(always)]
    fn finish(_then: &Epilogue<'_>, _out: &mut [Self], _n: usize, _c: usize, _p0: usize) {}

    /// [`mac`](Self::mac) lane by lane, on `unit` where it has a way (only inside
    /// [`vectorised_for`], with the unit it passed).
    #[inline(always)]
    fn mac_lanes(acc: &mut [Self; LANES], w: &[Self; LANES], x: &[Self; LANES], unit: Simd) {
        let _ = unit;
        mac_each(acc, w, x)
    }
}

/// Whether every weight is finite: in chunks without an early exit inside, so that the test
/// is vectorised (a scalar loop with one over a depthwise layer's 5000 weights took 6% of
/// the layer, at every run).
fn all_finite<F: Copy>(w: &[F], finite: impl Fn(F) -> bool + Copy) -> bool {
    w.chunks(512)
        .all(|c| c.iter().fold(true, |ok, &v| ok & finite(v)))
}

/// [`Acc::mac`] lane by lane, in scalar code.
#[inline(always)]
fn mac_each<A: Acc>(acc: &mut [A; LANES], w: &[A; LANES], x: &[A; LANES]) {
    for ((a, &w), &x) in acc.iter_mut().zip(w).zip(x) {
        *a = a.mac(w, x);
    }
}

impl Acc for f32 {
    const ZERO: f32 = 0.0;
    #[inline(always)]
    fn mac(self, w: f32, x: f32) -> f32 {
        self + w * x
    }

    fn pads_vanish(w: &[f32]) -> bool {
        all_finite(w, f32::is_finite)
    }

    #[inline(always)]
    fn finish(then: &Epilogue<'_>, out: &mut [f32], n: usize, c: usize, p0: usize) {
        then.apply(out, n, c, p0)
    }

    #[inline(always)]
    fn mac_lanes(acc: &mut [f32; LANES], w: &[f32; LANES], x: &[f32; LANES], unit: Simd) {
        #[cfg(target_arch = "x86_64")]
        if unit == Simd::Avx512 {
            use std::arch::x86_64::*;
            // SAFETY: 16 f32 each (one register); inside `vectorised_for`'s AVX-512 copy.
            unsafe {
                let (a, w, x) = (
                    _mm512_loadu_ps(acc.as_ptr()),
                    _mm512_loadu_ps(w.as_ptr()),
                    _mm512_loadu_ps(x.as_ptr()),
                );
                // Multiply, then add: the rounding of `mac`.
                _mm512_storeu_ps(acc.as_mut_ptr(), _mm512_add_ps(a, _mm512_mul_ps(w, x)));
            }
            return;
        }
        mac_each(acc, w, x)
    }
}

impl Acc for f64 {
    const ZERO: f64 = 0.0;
    #[inline(always)]
    fn mac(self, w: f64, x: f64) -> f64 {
        self + w * x
    }

    fn pads_vanish(w: &[f64]) -> bool {
        all_finite(w, f64::is_finite)
    }
}

macro_rules! int_acc {
    ($($t:ty)*) => {$(
        impl Acc for $t {
            const ZERO: $t = 0;
            #[inline(always)]
            fn mac(self, w: $t, x: $t) -> $t {
                Int::wrapping_add(self, Int::wrapping_mul(w, x))
            }

            fn pads_vanish(_: &[$t]) -> bool {
                true
            }
        }
    )*};
}
int_acc!(i8 i16 i32 i64 u8 u16 u32 u64);

/// Output plane `out` (one image, one output channel) by the definition: for each of the
/// group's input channels `xs`, each output position gets the products of the taps (weights
/// `wk`) in order, skipping those that fall in the padding; `spans` the last axis's
/// [`row_span`](Geometry::row_span)s. The positions of a row that every tap meets are computed
/// in blocks held in registers ([`Blocks`]), those at the borders one by one.
#[inline(always)]
fn direct_plane<S: Copy, A: Acc>(
    g: &Geometry,
    spans: &[(isize, usize, usize)],
    xs: &[S],
    wk: &[A],
    out: &mut [A],
    wide: impl Fn(S) -> A + Copy,
) {
    let [_, ih_n, iw_n] = g.input;
    let [kd_n, kh_n, kw_n] = g.kernel;
    let [od_n, oh_n, ow_n] = g.output;
    let sw = g.stride[2];
    let (in_plane, taps) = (g.in_plane(), g.taps());
    // Where every tap of the last axis lies in the data.
    let inner_lo = spans.iter().map(|s| s.1).max().unwrap_or(0).min(ow_n);
    let inner_hi = spans.iter().map(|s| s.2).min().unwrap_or(0).max(inner_lo);
    // The data rows that an output row meets, with their taps' weights.
    let mut rows: Vec<(&[S], &[A])> = Vec::with_capacity(kd_n * kh_n);
    for c in 0..g.cig {
        let xc = &xs[c * in_plane..(c + 1) * in_plane];
        let wc = &wk[c * taps..(c + 1) * taps];
        let first = c == 0;
        for od in 0..od_n {
            for oh in 0..oh_n {
                rows.clear();
                for kd in 0..kd_n {
                    let Some(id) = g.at(0, od, kd) else { continue };
                    for kh in 0..kh_n {
                        let Some(ih) = g.at(1, oh, kh) else { continue };
                        let row = &xc[(id * ih_n + ih) * iw_n..][..iw_n];
                        rows.push((row, &wc[(kd * kh_n + kh) * kw_n..][..kw_n]));
                    }
                }
                let orow = &mut out[(od * oh_n + oh) * ow_n..][..ow_n];
                let blocks = Blocks {
                    first,
                    sw,
                    rows: &rows,
                    spans,
                };
                let (lo, hi) = (inner_lo, inner_hi);
                let done = match hi - lo {
                    32.. => blocks.run::<16, 2>(orow, lo, hi, wide),
                    16.. => blocks.run::<16, 1>(orow, lo, hi, wide),
                    8.. => blocks.run::<8, 1>(orow, lo, hi, wide),
                    4.. => blocks.run::<4, 1>(orow, lo, hi, wide),
                    _ => lo,
                };
                for ow in (0..inner_lo).chain(done..ow_n) {
                    let mut acc = if first { A::ZERO } else { orow[ow] };
                    for &(row, wr) in &rows {
                        for (&wv, &(off, t_lo, t_hi)) in wr.iter().zip(spans) {
                            if (t_lo..t_hi).contains(&ow) {
                                acc = acc.mac(wv, wide(row[((ow * sw) as isize + off) as usize]));
                            }
                        }
                    }
                    orow[ow] = acc;
                }
            }
        }
    }
}

/// The interior of an output row in [`direct_plane`]: positions where every tap lies in the
/// data, computed in blocks held in registers through all the taps.
struct Blocks<'a, S, A> {
    /// The sums start from `+0` (the first input channel) rather than from the output.
    first: bool,
    sw: usize,
    rows: &'a [(&'a [S], &'a [A])],
    spans: &'a [(isize, usize, usize)],
}

impl<S: Copy, A: Acc> Blocks<'_, S, A> {
    /// Positions `lo..hi` (at least `N·L`) of `out` in blocks of `N` vectors of `L` lanes; on
    /// the first input channel a last block overlapping the one before it (its positions
    /// computed again, to the same bits). Returns where the positions left to the caller
    /// start.
    #[inline(always)]
    fn run<const L: usize, const N: usize>(
        &self,
        out: &mut [A],
        lo: usize,
        hi: usize,
        wide: impl Fn(S) -> A + Copy,
    ) -> usize {
        let b = N * L;
        let mut o = lo;
        while o + b <= hi {
            self.block::<L, N>(&mut out[o..o + b], o, wide);
            o += b;
        }
        if o < hi && self.first {
            self.block::<L, N>(&mut out[hi - b..hi], hi - b, wide);
            o = hi;
        }
        o
    }

    /// Positions `o0..o0 + N·L`: the sums tap by tap, in `N` vectors of registers.
    #[inline(always)]
    fn block<const L: usize, const N: usize>(
        &self,
        out: &mut [A],
        o0: usize,
        wide: impl Fn(S) -> A + Copy,
    ) {
        let mut acc = [[A::ZERO; L]; N];
        if !self.first {
            for (a, o) in acc.iter_mut().zip(out.chunks_exact(L)) {
                a.copy_from_slice(o);
            }
        }
        let sw = self.sw;
        for &(row, wr) in self.rows {
            for (&wv, &(off, _, _)) in wr.iter().zip(self.spans) {
                let start = ((o0 * sw) as isize + off) as usize;
                if sw == 1 {
                    let src = &row[start..start + N * L];
                    for (a, src) in acc.iter_mut().zip(src.chunks_exact(L)) {
                        let src: &[S; L] = src.try_into().expect("L elements");
                        for (a, &v) in a.iter_mut().zip(src) {
                            *a = a.mac(wv, wide(v));
                        }
                    }
                } else {
                    let src = &row[start..start + (N * L - 1) * sw + 1];
                    for (j, a) in acc.iter_mut().enumerate() {
                        for (i, a) in a.iter_mut().enumerate() {
                            *a = a.mac(wv, wide(src[(j * L + i) * sw]));
                        }
                    }
                }
            }
        }
        for (a, o) in acc.iter().zip(out.chunks_exact_mut(L)) {
            o.copy_from_slice(a);
        }
    }
}

/// The direct convolution's output (`n` elements, the geometry's): planes that pair up side
/// by side ([`side_by_side`]) where the padding vanishes, else every output plane in
/// parallel, each compiled for the widest vector unit (multiplies and adds round the same on
/// every unit).
fn direct<S: Copy + Sync, A: Acc>(
    g: &Geometry,
    x: &[S],
    w: &[A],
    n: usize,
    wide: impl Fn(S) -> A + Copy + Sync,
    then: Option<&Epilogue<'_>>,
) -> Vec<A> {
    let (plane, k) = (g.out_plane(), g.k());
    if plane == 0 || n == 0 || k == 0 {
        return vec![A::ZERO; n];
    }
    // Side by side where the blocks of planes are enough for the threads (fewer would leave
    // threads idle, or lanes empty); both paths give the same bits.
    let planes_n = n / plane;
    let enough = planes_n >= LANES * rayon::current_num_threads();
    if let Some(lanes) = g.lanes().filter(|_| enough && A::pads_vanish(w)) {
        let mut out = Vec::with_capacity(n);
        side_by_side(
            g,
            &lanes,
            x,
            w,
            &mut out.spare_capacity_mut()[..n],
            wide,
            then,
        );
        // SAFETY: `side_by_side` writes every element (each block's planes, every position).
        unsafe { out.set_len(n) };
        return out;
    }
    let mut out = vec![A::ZERO; n];
    planes(g, x, w, &mut out, wide, then);
    out
}

/// [`direct`] a plane at a time.
fn planes<S: Copy + Sync, A: Acc>(
    g: &Geometry,
    x: &[S],
    w: &[A],
    out: &mut [A],
    wide: impl Fn(S) -> A + Copy + Sync,
    then: Option<&Epilogue<'_>>,
) {
    let (plane, k) = (g.out_plane(), g.k());
    let spans: Vec<(isize, usize, usize)> = (0..g.kernel[2]).map(|t| g.row_span(t)).collect();
    let channels = g.groups * g.cog;
    let group_len = g.cig * g.in_plane();
    let flat = g.padded();
    // The taps' offsets in the copy, the same for every plane.
    let offsets: Vec<usize> = flat.iter().flat_map(|l| l.offsets()).collect();
    out.par_chunks_mut(plane).enumerate().for_each_init(
        || (Vec::new(), Vec::new(), Vec::new()),
        |(padded, sums, taps), (idx, o)| {
            let (n, co) = (idx / channels, idx % channels);
            let grp = co / g.cog;
            let xs = &x[(n * g.groups + grp) * group_len..][..group_len];
            let wk = &w[co * k..(co + 1) * k];
            if let Some(layout) = flat.filter(|_| A::pads_vanish(wk)) {
                vectorised(
                    #[inline(always)]
                    || padded_plane(&layout, &offsets, xs, wk, o, wide, [padded, sums], taps),
                );
            } else {
                vectorised(
                    #[inline(always)]
                    || direct_plane(g, &spans, xs, wk, o, wide),
                );
            }
            if let Some(then) = then {
                A::finish(then, o, n, co, 0);
            }
        },
    );
}

impl Geometry {
    /// The 2D window of a run with one input channel per group and two real axes.
    fn plane2(&self) -> Option<Window2> {
        self.window_2d().filter(|_| self.cig == 1)
    }

    /// The 2D window of a run with two real axes (or one).
    fn window_2d(&self) -> Option<Window2> {
        if !(self.input[0] == 1 && self.kernel[0] == 1 && self.output[0] == 1) {
            return None;
        }
        let two = |v: [usize; 3]| [v[1], v[2]];
        Some(Window2 {
            input: two(self.input),
            kernel: two(self.kernel),
            output: two(self.output),
            stride: two(self.stride),
            dilation: two(self.dilation),
            pad: two(self.pad),
        })
    }

    /// [`Self::plane2`], unless most of the rows' taps fall in the padding (a plane 3 high
    /// under a 5×5 filter: the direct loop skips those rows, a padded copy would add their
    /// zeros).
    fn window2(&self) -> Option<Window2> {
        let (oh_n, kh_n) = (self.output[1], self.kernel[1]);
        let rows_in = (0..oh_n)
            .map(|oh| (0..kh_n).filter(|&t| self.at(1, oh, t).is_some()).count())
            .sum::<usize>();
        self.plane2().filter(|_| 4 * rows_in >= 3 * oh_n * kh_n)
    }

    /// The layout of [`implicit_conv`]'s copy of each input plane, where the f32 GEMM takes
    /// that path: two real axes (or one), not pointwise (whose data is its column matrix
    /// already), a copy within [`Phases::new`]'s bounds.
    fn implicit(&self) -> Option<Phases> {
        if self.pointwise() {
            return None;
        }
        self.window_2d().and_then(Phases::new)
    }

    /// The layout of [`padded_plane`]'s copy of a plane, where [`direct`] takes that path.
    fn padded(&self) -> Option<Phases> {
        self.window2().and_then(Phases::new)
    }

    /// The layout of [`side_by_side`]'s copy, where [`direct`] takes that path: one output
    /// channel per input channel (the planes of the data and of the output then pair up),
    /// shallow planes too (a block of outputs skips the kernel rows that meet only padding).
    fn lanes(&self) -> Option<Lanes> {
        self.plane2().filter(|_| self.cog == 1).and_then(Lanes::new)
    }

    /// Elements of the scratch each thread of [`direct`] keeps: [`side_by_side`]'s copy or
    /// [`padded_plane`]'s copy and sums, whichever is larger.
    fn direct_scratch(&self) -> u64 {
        let lanes = self
            .lanes()
            .map_or(0, |l| (l.len() as u64).saturating_mul(LANES as u64));
        lanes.max(self.padded().map_or(0, |l| l.scratch() as u64))
    }
}

/// The direct convolution of planes that pair up (one input and one output channel per
/// group, two real axes) [`LANES`] at a time, to the bits of [`padded_plane`] (its padding
/// counted as zeros, so only where [`Acc::pads_vanish`]): each block's planes copied side by
/// side ([`Lanes`]), every output the chain over the taps from +0 of its lane's weight times
/// the data, computed a vector of planes at a time, then written to its plane. Blocks run in
/// parallel; they may span images (plane `p` is image `p / C`, channel `p % C`, for the data
/// and the output alike).
fn side_by_side<S: Copy + Sync, A: Acc>(
    g: &Geometry,
    lanes: &Lanes,
    x: &[S],
    w: &[A],
    out: &mut [MaybeUninit<A>],
    wide: impl Fn(S) -> A + Copy + Sync,
    then: Option<&Epilogue<'_>>,
) {
    let (plane, in_plane, k, channels) = (g.out_plane(), g.in_plane(), g.k(), g.groups);
    let offsets: Vec<usize> = lanes.offsets().collect();
    out.par_chunks_mut(plane * LANES).enumerate().for_each_init(
        || (Vec::new(), Vec::new()),
        |(buf, taps), (b, o)| {
            let p0 = b * LANES;
            let count = o.len() / plane;
            // Each tap's offset and each lane's weight (0 past the planes), filter by filter.
            taps.clear();
            taps.extend(offsets.iter().map(|&off| (off, [A::ZERO; LANES])));
            for c in 0..count {
                let f = &w[(p0 + c) % channels * k..][..k];
                for (tap, &v) in taps.iter_mut().zip(f) {
                    tap.1[c] = v;
                }
            }
            let xs = &x[p0 * in_plane..(p0 + count) * in_plane];
            vectorised_for(
                #[inline(always)]
                |unit| {
                    lanes.fill(xs, count, A::ZERO, buf, wide, unit);
                    lanes.sweep(
                        buf,
                        taps,
                        A::ZERO,
                        #[inline(always)]
                        |a: &mut [A; LANES], w: &[A; LANES], x: &[A; LANES]| {
                            A::mac_lanes(a, w, x, unit)
                        },
                        #[inline(always)]
                        |at: usize, block: &[[A; LANES]]| {
                            if let Ok(square) = <&Square<A>>::try_from(block) {
                                let planes = A::transpose(square, unit);
                                for (o, v) in o.chunks_exact_mut(plane).zip(&planes) {
                                    for (o, &v) in o[at..at + LANES].iter_mut().zip(v) {
                                        o.write(v);
                                    }
                                }
                                return;
                            }
                            for (c, o) in o.chunks_exact_mut(plane).enumerate() {
                                for (o, v) in o[at..at + block.len()].iter_mut().zip(block) {
                                    o.write(v[c]);
                                }
                            }
                        },
                    );
                },
            );
            if let Some(then) = then {
                // SAFETY: the sweep wrote every position of every plane of the block (the
                // blocks cover the plane), and `MaybeUninit<A>` has `A`'s layout.
                let o = unsafe { &mut *(o as *mut [MaybeUninit<A>] as *mut [A]) };
                for (c, o) in o.chunks_exact_mut(plane).enumerate() {
                    let p = p0 + c;
                    A::finish(then, o, p / channels, p % channels, 0);
                }
            }
        },
    );
}

/// Output plane `out` of a run with one input channel and two real axes ([`direct`]), to the
/// bits of [`direct_plane`] when [`Acc::pads_vanish`]: the plane is copied with zeros around
/// it into `padded` as its phase planes ([`Phases`]), and every output is the chain over the
/// taps from +0 of `padded[q + offset]` times the tap's weight, swept over the plane in
/// blocks of vectors held in registers ([`sweep`]). `padded`, `sums` and `taps` (each tap's
/// offset and weight) are buffers kept between planes.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn padded_plane<S: Copy, A: Acc>(
    layout: &Phases,
    offsets: &[usize],
    xs: &[S],
    wk: &[A],
    out: &mut [A],
    wide: impl Fn(S) -> A + Copy,
    [padded, sums]: [&mut Vec<A>; 2],
    taps: &mut Vec<(usize, A)>,
) {
    layout.fill(xs, A::ZERO, padded, wide);
    taps.clear();
    taps.extend(offsets.iter().copied().zip(wk.iter().copied()));
    // Every sum is written by the sweep.
    if sums.len() != layout.sums() {
        sums.clear();
        sums.resize(layout.sums(), A::ZERO);
    }
    sweep(padded, taps, A::ZERO, |a, w, x| a.mac(w, x), sums);
    let mut at = 0;
    for row in layout.rows(sums) {
        out[at..at + row.len()].copy_from_slice(row);
        at += row.len();
    }
}

/// Rows of the column matrix for output positions `p0..p1` of one image and group (`xs`, its
/// input channels), each assembled in `row` (at least `p1 − p0` long) and handed to `emit`
/// with its index: row `(c, kd, kh, kw)`, column `p` is the data that tap meets at output
/// position `p`, 0 in the padding.
#[allow(clippy::too_many_arguments)]
fn im2col<S: Copy, F: Copy>(
    g: &Geometry,
    xs: &[S],
    p0: usize,
    p1: usize,
    scratch: &mut [F],
    zero: F,
    wide: impl Fn(S) -> F + Copy,
    mut emit: impl FnMut(usize, &[F]),
) {
    let width = p1 - p0;
    let [_, ih_n, iw_n] = g.input;
    let [kd_n, kh_n, kw_n] = g.kernel;
    let [_, oh_n, ow_n] = g.output;
    let sw = g.stride[2];
    let in_plane = g.in_plane();
    let rows_of_plane = oh_n * ow_n;
    let dst_row = &mut scratch[..width];
    // The tile's pieces of output rows, the same for every row of the columns: where each
    // starts in the tile, its `od`, `oh` and its `ow` range.
    let mut pieces = Vec::new();
    let mut p = p0;
    while p < p1 {
        let (od, rem) = (p / rows_of_plane, p % rows_of_plane);
        let (oh, ow0) = (rem / ow_n, rem % ow_n);
        let ow1 = ow_n.min(ow0 + (p1 - p));
        pieces.push((p - p0, od, oh, ow0, ow1));
        p += ow1 - ow0;
    }
    let mut r = 0;
    for c in 0..g.cig {
        let xc = &xs[c * in_plane..(c + 1) * in_plane];
        for kd in 0..kd_n {
            for kh in 0..kh_n {
                for kw in 0..kw_n {
                    let (off, vlo, vhi) = g.row_span(kw);
                    for &(at, od, oh, ow0, ow1) in &pieces {
                        let dst = &mut dst_row[at..at + (ow1 - ow0)];
                        match (g.at(0, od, kd), g.at(1, oh, kh)) {
                            (Some(id), Some(ih)) => {
                                let row = &xc[(id * ih_n + ih) * iw_n..][..iw_n];
                                let lo = vlo.clamp(ow0, ow1);
                                let hi = vhi.clamp(lo, ow1);
                                if lo == hi {
                                    dst.fill(zero);
                                    continue;
                                }
                                dst[..lo - ow0].fill(zero);
                                dst[hi - ow0..].fill(zero);
                                let start = ((lo * sw) as isize + off) as usize;
                                let dst = &mut dst[lo - ow0..hi - ow0];
                                copy_every(&row[start..], dst, sw, wide);
                            }
                            _ => dst.fill(zero),
                        }
                    }
                    emit(r, dst_row);
                    r += 1;
                }
            }
        }
    }
}

/// The fewest output positions in a tile.
const MIN_TILE: usize = 64;

/// One GEMM of the run: image `n`, group `g`, output positions `p0..p1`, output channels
/// `m0..m1` of the group.
#[derive(Clone, Copy, Debug)]
struct Part {
    n: usize,
    g: usize,
    p0: usize,
    p1: usize,
    m0: usize,
    m1: usize,
}

/// The tile width (output positions per part; from the geometry only) and the parts: images,
/// groups and tiles, and blocks of output channels when those are fewer than twice the
/// threads (the bits depend on neither). With `whole_rows`, each tile is whole output rows
/// ([`implicit_conv`]).
fn plan(g: &Geometry, elem: usize, whole_rows: bool) -> (usize, Vec<Part>) {
    let plane = g.out_plane();
    // The columns and the output rows of a part within the scratch size, so that the output
    // is still in the cache for the epilogue and the next layer.
    let mut tile = tile_width(g.k() + g.cog, elem, MIN_TILE, plane);
    let row = g.output[2];
    if whole_rows && row > 0 {
        tile = (tile / row).max(1) * row;
    } else if tile < plane {
        // Whole column panels of the packed GEMM.
        tile = tile / MAX_NR * MAX_NR;
    }
    let tiles = plane.div_ceil(tile);
    let base = g.batch * g.groups * tiles;
    let blocks = channel_blocks(base, g.cog, g.cog.div_ceil(16));
    let mut parts = Vec::with_capacity(base * blocks.len());
    for n in 0..g.batch {
        for grp in 0..g.groups {
            for t in 0..tiles {
                let (p0, p1) = (t * tile, ((t + 1) * tile).min(plane));
                for &(m0, m1) in &blocks {
                    parts.push(Part {
                        n,
                        g: grp,
                        p0,
                        p1,
                        m0,
                        m1,
                    });
                }
            }
        }
    }
    (tile, parts)
}

/// The convolution through the GEMM: each part's columns gathered (or, `in_place`, the data
/// itself for a pointwise convolution) and multiplied by its filter rows into the output.
#[allow(clippy::too_many_arguments)]
fn gemm_conv<S: Copy + Sync, F: Gemm + Acc>(
    g: &Geometry,
    x: &[S],
    in_place: Option<&[F]>,
    w: &[F],
    out: &mut [MaybeUninit<F>],
    parts: &[Part],
    wide: impl Fn(S) -> F + Copy + Sync,
    then: Option<&Epilogue<'_>>,
) {
    let (k, plane, in_plane) = (g.k(), g.out_plane(), g.in_plane());
    let group_len = g.cig * in_plane;
    let c = Shared(out.as_mut_ptr().cast::<F>());
    parts.par_iter().for_each_init(Vec::<F>::new, |buf, p| {
        let width = p.p1 - p.p0;
        let at = (p.n * g.groups + p.g) * group_len;
        let (b, rsb) = match in_place {
            Some(xf) => (xf[at + p.p0..].as_ptr(), in_plane),
            None => {
                let zero = <F as crate::num::Float>::ZERO;
                if buf.len() < (k + 1) * width {
                    buf.resize((k + 1) * width, zero);
                }
                let (col, row) = buf[..(k + 1) * width].split_at_mut(k * width);
                let xs = &x[at..at + group_len];
                im2col(g, xs, p.p0, p.p1, row, zero, wide, |r, v| {
                    col[r * width..(r + 1) * width].copy_from_slice(v)
                });
                (col.as_ptr(), width)
            }
        };
        // SAFETY: `check` verified that the data and filters hold what the geometry says:
        // the filter rows `g·cog + m0..m1` (each `k` long), the `k` column rows of `width`
        // elements (stride `rsb`), and the output rows `m0..m1` of image `n`, group `g`,
        // columns `p0..p1` all lie in their buffers; no two parts share an output element.
        // With β = 0 the GEMM writes those elements without reading them.
        unsafe {
            F::gemm(
                p.m1 - p.m0,
                k,
                width,
                w.as_ptr().add((p.g * g.cog + p.m0) * k),
                (k, 1),
                b,
                (rsb, 1),
                c.get()
                    .add(((p.n * g.groups + p.g) * g.cog + p.m0) * plane + p.p0),
                plane,
            )
        }
        if let Some(then) = then {
            // SAFETY: as for the GEMM: this part's output elements, now written.
            unsafe { finish_part(g, p, c.get(), then) };
        }
    });
}

/// The convolution through the packed GEMM of [`gemm`](crate::ops::kernel::gemm): each part's
/// columns gathered (or, `in_place`, copied from the data for a pointwise convolution) into
/// column panels and multiplied by its filter rows, read where they lie, into the output.
#[allow(clippy::too_many_arguments)]
fn packed_conv<S: Copy + Sync>(
    g: &Geometry,
    x: &[S],
    in_place: Option<&[f32]>,
    w: &[f32],
    out: &mut [MaybeUninit<f32>],
    parts: &[Part],
    wide: impl Fn(S) -> f32 + Copy + Sync,
    then: Option<&Epilogue<'_>>,
) {
    let panels = Panels::detect();
    let (k, plane, in_plane) = (g.k(), g.out_plane(), g.in_plane());
    let group_len = g.cig * in_plane;
    let c = Shared(out.as_mut_ptr().cast::<f32>());
    parts.par_iter().for_each(|p| {
        let width = p.p1 - p.p0;
        let at = (p.n * g.groups + p.g) * group_len;
        // Within the scratch that `float_conv` reserved (`k` rows of the tile in panels, and
        // one row).
        let len = panels.packed_len(k, width);
        with_scratch(len + width, |buf| {
            let (packed, row) = buf.split_at_mut(len);
            // Row `r` of the columns into its place in each panel.
            let mut put = |r: usize, v: &[f32]| panels.pack_row(packed, k, r, v);
            vectorised(
                #[inline(always)]
                || match in_place {
                    Some(xf) => {
                        for r in 0..k {
                            put(r, &xf[at + r * in_plane + p.p0..at + r * in_plane + p.p1]);
                        }
                    }
                    None => im2col(g, &x[at..at + group_len], p.p0, p.p1, row, 0.0, wide, put),
                },
            );
            let packed = &*packed;
            // SAFETY: `check` verified that the filters hold the rows `g·cog + m0..m1`, each
            // `k` long, and that the output rows `m0..m1` of image `n`, group `g`, columns
            // `p0..p1` lie in `out`; `packed` holds the panels; no two parts share an output
            // element. The GEMM writes those elements without reading them.
            unsafe {
                panels.gemm(
                    p.m1 - p.m0,
                    width,
                    k,
                    w.as_ptr().add((p.g * g.cog + p.m0) * k),
                    k,
                    packed,
                    c.get()
                        .add(((p.n * g.groups + p.g) * g.cog + p.m0) * plane + p.p0),
                    plane,
                )
            }
            if let Some(then) = then {
                // SAFETY: as for the GEMM: this part's output elements, now written.
                unsafe { finish_part(g, p, c.get(), then) };
            }
        });
    });
}

/// The most output channels (per group) of a pointwise f32 convolution that reads its data in
/// place ([`pointwise_conv`]) rather than packing it.
const IN_PLACE_CHANNELS: usize = 128;

/// A pointwise f32 convolution with its data read in place: row `c` of a part's columns is
/// input plane `c` from the part's first position ([`Panels::gemm_rows`]), nothing copied. A
/// last partial panel whose reads would run past the end of the data is packed instead. The
/// columns are the data's values in the gathered order, so the bits are [`packed_conv`]'s.
fn pointwise_conv(
    g: &Geometry,
    xf: &[f32],
    w: &[f32],
    out: &mut [MaybeUninit<f32>],
    parts: &[Part],
    then: Option<&Epilogue<'_>>,
) {
    let panels = Panels::detect();
    let nr = panels.width();
    let (k, plane, in_plane) = (g.k(), g.out_plane(), g.in_plane());
    let offs: Vec<usize> = (0..k).map(|r| r * in_plane).collect();
    let c = Shared(out.as_mut_ptr().cast::<f32>());
    parts.par_iter().for_each(|p| {
        let (width, m) = (p.p1 - p.p0, p.m1 - p.m0);
        let at = (p.n * g.groups + p.g) * g.cig * in_plane + p.p0;
        // The columns read in place: all of them when the last row's whole panels lie in the
        // data, else the whole panels.
        let last = at + (k - 1) * in_plane;
        let main = if last + width.div_ceil(nr) * nr <= xf.len() {
            width
        } else {
            width / nr * nr
        };
        let a = w[(p.g * g.cog + p.m0) * k..].as_ptr();
        let cp = c
            .get()
            .wrapping_add(((p.n * g.groups + p.g) * g.cog + p.m0) * plane + p.p0);
        if main > 0 {
            // SAFETY: `check` verified that the filters hold the rows `g·cog + m0..m1`, each
            // `k` long, and that the data holds the group's `k` planes; each row's reads,
            // whole panels from `at`, end within the data (`main`'s choice); the output rows
            // `m0..m1` of image `n`, group `g`, columns `p0..p1`, are this part's alone.
            unsafe { panels.gemm_rows(m, main, k, a, k, (xf.as_ptr().add(at), &offs), cp, plane) }
        }
        if main < width {
            let rest = width - main;
            // Within the scratch that `float_conv` reserved (`k` rows of the tile in panels).
            with_scratch(k * nr, |packed| {
                for r in 0..k {
                    let from = at + r * in_plane + main;
                    panels.pack_row(packed, k, r, &xf[from..from + rest]);
                }
                // SAFETY: as above, for the columns `main..width`, their panel packed.
                unsafe { panels.gemm(m, rest, k, a, k, packed, cp.add(main), plane) }
            });
        }
        if let Some(then) = then {
            // SAFETY: as for the GEMM: this part's output elements, now written.
            unsafe { finish_part(g, p, c.get(), then) };
        }
    });
}

/// A pointwise convolution of planes of one position (a squeeze-and-excitation block's
/// `[N, C, 1, 1]`): each output channel's chain over the group's inputs, 16 channels at a
/// time with the filters transposed in registers ([`gemv::chain_times`]), rather than the
/// GEMM over a column panel of which one column is used. The same chains (fused
/// multiply-adds over `k` in order from +0), so the same bits.
fn one_position_conv(
    g: &Geometry,
    xf: &[f32],
    w: &[f32],
    out: &mut [MaybeUninit<f32>],
    parts: &[Part],
    then: Option<&Epilogue<'_>>,
) {
    let k = g.k();
    let c = Shared(out.as_mut_ptr().cast::<f32>());
    parts.par_iter().for_each(|p| {
        let at = (p.n * g.groups + p.g) * g.cig;
        let o = (p.n * g.groups + p.g) * g.cog + p.m0;
        // SAFETY: the output of one position per channel: channels `m0..m1` of image `n`,
        // group `g`, are this part's alone, and lie in the output (`check` sized it).
        let sums = unsafe { std::slice::from_raw_parts_mut(c.get().add(o), p.m1 - p.m0) };
        gemv::chain_times(&xf[at..at + k], w, k, p.g * g.cog + p.m0, sums);
        if let Some(then) = then {
            then.apply_planes(sums, p.n, p.g * g.cog + p.m0);
        }
    });
}

/// Elements of [`implicit_conv`]'s padded copies: every input plane of every image (a
/// `layout` each), and a panel's width more that the last panel of a part may read.
fn copies_len(g: &Geometry, layout: &Phases) -> usize {
    (g.batch * g.groups * g.cig)
        .saturating_mul(layout.len())
        .saturating_add(MAX_NR)
}

/// The convolution through the GEMM without a column matrix (an implicit GEMM): every input
/// plane is copied with its padding as the phase planes of `layout` ([`Phases`]), where each
/// tap of output `(oh, ow)` lies at `q + offset` for `q = oh·wq + ow`. Row `(c, tap)` of the
/// columns of a part's output rows is then the copy of plane `c` from that tap's offset on,
/// read in place ([`Panels::gemm_rows`]); the GEMM computes the positions between the output
/// rows too (`wq − ow` of them a row), into a scratch of sums from which the rows are copied
/// to the output. The columns hold the values [`im2col`] would gather (zeros in the padding),
/// in the same order, so the bits are those of [`packed_conv`]. The parts (from [`plan`]) are
/// whole output rows.
#[allow(clippy::too_many_arguments)]
fn implicit_conv<S: Copy + Sync>(
    g: &Geometry,
    layout: &Phases,
    x: &[S],
    w: &[f32],
    out: &mut [MaybeUninit<f32>],
    parts: &[Part],
    wide: impl Fn(S) -> f32 + Copy + Sync,
    then: Option<&Epilogue<'_>>,
) {
    let panels = Panels::detect();
    let (k, plane, in_plane) = (g.k(), g.out_plane(), g.in_plane());
    let (len, wq, ow) = (layout.len(), layout.dims().2, g.output[2]);
    // Every plane's copy, padding zeros (and a panel's width of them past the last), the
    // planes in parallel (their zeros too).
    let total = copies_len(g, layout);
    let mut copies: Vec<f32> = Vec::with_capacity(total);
    let planes = copies.spare_capacity_mut()[..total].par_chunks_mut(len);
    planes.enumerate().for_each(|(i, copy)| {
        copy.fill(MaybeUninit::new(0.0));
        // SAFETY: every element of `copy` is initialised just above, and `MaybeUninit<f32>`
        // has `f32`'s layout.
        let copy = unsafe { &mut *(copy as *mut [MaybeUninit<f32>] as *mut [f32]) };
        if let Some(plane) = x
            .get(i * in_plane..(i + 1) * in_plane)
            .filter(|_| in_plane > 0)
        {
            vectorised(
                #[inline(always)]
                || layout.fill_data(plane, copy, wide),
            )
        }
    });
    // SAFETY: the chunks cover all `total` elements, each written above.
    unsafe { copies.set_len(total) };
    // Row `(c, tap)` of the columns: plane `c`'s copy from the tap's offset.
    let offs: Vec<usize> = (0..g.cig)
        .flat_map(|c| layout.offsets().map(move |t| c * len + t))
        .collect();
    let c = Shared(out.as_mut_ptr().cast::<f32>());
    parts.par_iter().for_each(|p| {
        let (oh0, oh1) = (p.p0 / ow, p.p1.div_ceil(ow));
        let (rows, m) = (oh1 - oh0, p.m1 - p.m0);
        // The sums from the first output of the part to its last, `wq` a row.
        let n = (rows - 1) * wq + ow;
        let at = (p.n * g.groups + p.g) * g.cig * len + oh0 * wq;
        // Within the scratch that `float_conv` reserved (the sums of the part's rows).
        with_scratch(m * n, |sums| {
            // SAFETY: `check` verified that the filters hold the rows `g·cog + m0..m1`, each
            // `k` long; the copies hold this image's and group's planes from `at`, where each
            // output of the part meets every tap within them (the layout's bounds), and the
            // last panel's columns past `n` read at most a panel's width past the last
            // output's, within the copies' extra panel; `sums` holds `m` rows of `n`.
            unsafe {
                panels.gemm_rows(
                    m,
                    n,
                    k,
                    w.as_ptr().add((p.g * g.cog + p.m0) * k),
                    k,
                    (copies.as_ptr().add(at), &offs),
                    sums.as_mut_ptr(),
                    n,
                )
            }
            for (r, row) in sums.chunks_exact(n).enumerate() {
                let o = ((p.n * g.groups + p.g) * g.cog + p.m0 + r) * plane + p.p0;
                for (j, line) in layout.rows(row).enumerate() {
                    // SAFETY: output row `m0 + r` of image `n`, group `g`, columns
                    // `p0..p1` (whole output rows), is this part's alone.
                    unsafe {
                        std::ptr::copy_nonoverlapping(line.as_ptr(), c.get().add(o + j * ow), ow)
                    };
                }
            }
        });
        if let Some(then) = then {
            // SAFETY: as for the copy: this part's output elements, now written.
            unsafe { finish_part(g, p, c.get(), then) };
        }
    });
}

/// Applies `then` to the output elements of part `p` (in `out`, the whole output), while they
/// are still in the cache.
///
/// # Safety
/// `out` must hold the whole output, part `p`'s elements written, and no other thread may
/// touch them meanwhile.
unsafe fn finish_part<A: Acc>(g: &Geometry, p: &Part, out: *mut A, then: &Epilogue<'_>) {
    let plane = g.out_plane();
    for m in p.m0..p.m1 {
        let c = p.g * g.cog + m;
        // SAFETY: the caller's: row `c` of image `n`, columns `p0..p1`, are this part's.
        let row = unsafe {
            std::slice::from_raw_parts_mut(
                out.add((p.n * g.groups * g.cog + c) * plane + p.p0),
                p.p1 - p.p0,
            )
        };
        A::finish(then, row, p.n, c, p.p0);
    }
}

/// A float type the GEMM path computes in: f32 through the packed GEMM, f64 through the GEMM
/// crate.
trait ConvFloat: Gemm + Acc {
    /// Scratch elements of one part of `tile` positions (its columns, or with `layout` the
    /// sums of [`implicit_conv`]).
    fn scratch(g: &Geometry, tile: usize, layout: Option<&Phases>) -> u64;

    /// The layout of the padded copies where the GEMM path reads its columns from them
    /// ([`implicit_conv`]), rather than gathering them.
    fn implicit(_g: &Geometry) -> Option<Phases> {
        None
    }

    /// The GEMM path of [`float_conv`], through [`implicit_conv`] where `layout` (from
    /// [`implicit`](Self::implicit)) is given.
    #[allow(clippy::too_many_arguments)]
    fn gemm_path<S: Copy + Sync>(
        g: &Geometry,
        layout: Option<&Phases>,
        x: &[S],
        in_place: Option<&[Self]>,
        w: &[Self],
        out: &mut [MaybeUninit<Self>],
        parts: &[Part],
        wide: impl Fn(S) -> Self + Copy + Sync,
        then: Option<&Epilogue<'_>>,
    );
}

impl ConvFloat for f32 {
    fn scratch(g: &Geometry, tile: usize, layout: Option<&Phases>) -> u64 {
        match layout {
            // The sums of a part's rows, each `wq` wide.
            Some(layout) => {
                let rows = tile.div_ceil(g.output[2].max(1)) as u64;
                rows.saturating_mul(layout.dims().2 as u64)
                    .saturating_mul(g.cog as u64)
            }
            None => (Panels::detect().packed_len(g.k(), tile) as u64).saturating_add(tile as u64),
        }
    }

    fn implicit(g: &Geometry) -> Option<Phases> {
        g.implicit()
    }

    #[allow(clippy::too_many_arguments)]
    fn gemm_path<S: Copy + Sync>(
        g: &Geometry,
        layout: Option<&Phases>,
        x: &[S],
        in_place: Option<&[f32]>,
        w: &[f32],
        out: &mut [MaybeUninit<f32>],
        parts: &[Part],
        wide: impl Fn(S) -> f32 + Copy + Sync,
        then: Option<&Epilogue<'_>>,
    ) {
        match (layout, in_place) {
            (Some(layout), _) => implicit_conv(g, layout, x, w, out, parts, wide, then),
            (None, Some(xf)) if g.in_plane() == 1 && g.out_plane() == 1 && gemv::available() => {
                one_position_conv(g, xf, w, out, parts, then)
            }
            // Read in place where few output channels share the columns; with many, packing
            // them once pays (the rows of 56×56 planes, 12.5 KB apart, crowd the L1 cache).
            (None, Some(xf)) if g.cog <= IN_PLACE_CHANNELS => {
                pointwise_conv(g, xf, w, out, parts, then)
            }
            _ => packed_conv(g, x, in_place, w, out, parts, wide, then),
        }
    }
}

impl ConvFloat for f64 {
    fn scratch(g: &Geometry, tile: usize, _: Option<&Phases>) -> u64 {
        if g.pointwise() {
            0
        } else {
            (tile as u64).saturating_mul(g.k() as u64 + 1)
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn gemm_path<S: Copy + Sync>(
        g: &Geometry,
        _: Option<&Phases>,
        x: &[S],
        in_place: Option<&[f64]>,
        w: &[f64],
        out: &mut [MaybeUninit<f64>],
        parts: &[Part],
        wide: impl Fn(S) -> f64 + Copy + Sync,
        then: Option<&Epilogue<'_>>,
    ) {
        gemm_conv(g, x, in_place, w, out, parts, wide, then)
    }
}

/// A float convolution computed in `F`: the data `x` (of `S`, widened by `wide`), the filters
/// from `weights` (called once the budget allows `weight_bytes` more), `extra` bytes the caller
/// needs besides.
#[allow(clippy::too_many_arguments)]
fn float_conv<'w, S: Copy + Sync, F: ConvFloat>(
    cx: &EvalCx<'_>,
    g: &Geometry,
    x: &[S],
    in_place: Option<&[F]>,
    weights: impl FnOnce() -> Cow<'w, [F]>,
    extra: u64,
    wide: impl Fn(S) -> F + Copy + Sync,
    then: Option<&Epilogue<'_>>,
) -> Result<Vec<F>, EvalError> {
    let n = g.output_len().ok_or_else(too_large_output)?;
    let size = std::mem::size_of::<F>();
    let direct_path = g.depthwise();
    let gemm = !(direct_path || n == 0 || g.k() == 0);
    // The layout of the padded copies of every input plane, where the GEMM reads its columns
    // from them.
    let layout = if gemm { F::implicit(g) } else { None };
    let (tile, parts) = if gemm {
        plan(g, size, layout.is_some())
    } else {
        (0, Vec::new())
    };
    let pointwise = in_place.filter(|_| g.pointwise());
    let threads = rayon::current_num_threads().min(parts.len()) as u64;
    let scratch = if direct_path {
        (rayon::current_num_threads() as u64).saturating_mul(g.direct_scratch())
    } else {
        threads.saturating_mul(F::scratch(g, tile, layout.as_ref()))
    }
    .saturating_mul(size as u64);
    let copies = layout.as_ref().map_or(0, |l| copies_len(g, l) as u64);
    let scratch = scratch.saturating_add(copies.saturating_mul(size as u64));
    let output = (n as u64).saturating_mul(size as u64);
    cx.reserve_bytes(
        "the output and the convolution's scratch",
        output.saturating_add(scratch).saturating_add(extra),
    )?;
    let w = weights();
    g.check(x.len(), w.len())?;
    if !gemm {
        return Ok(direct(g, x, &w, n, wide, then));
    }
    let mut out = Vec::with_capacity(n);
    F::gemm_path(
        g,
        layout.as_ref(),
        x,
        pointwise,
        &w,
        &mut out.spare_capacity_mut()[..n],
        &parts,
        wide,
        then,
    );
    // SAFETY: the parts cover every output element (`plan`: all images, groups, tiles of
    // the plane and blocks of the channels), and the GEMM writes each one (`C` overwritten).
    unsafe { out.set_len(n) };
    Ok(out)
}

fn too_large_output() -> EvalError {
    EvalError::Invalid("the convolution's output is too large".into())
}

/// An element type the convolution computes on.
trait Convolve: Element {
    fn convolve(
        cx: &EvalCx<'_>,
        g: &Geometry,
        x: &[Self],
        w: &[Self],
    ) -> Result<Vec<Self>, EvalError>;
}

macro_rules! native {
    ($($t:ty)*) => {$(
        impl Convolve for $t {
            fn convolve(
                cx: &EvalCx<'_>,
                g: &Geometry,
                x: &[$t],
                w: &[$t],
            ) -> Result<Vec<$t>, EvalError> {
                float_conv(cx, g, x, Some(x), || Cow::Borrowed(w), 0, |v| v, None)
            }
        }
    )*};
}
native!(f32 f64);

macro_rules! widened {
    ($($t:ty)*) => {$(
        impl Convolve for $t {
            fn convolve(
                cx: &EvalCx<'_>,
                g: &Geometry,
                x: &[$t],
                w: &[$t],
            ) -> Result<Vec<$t>, EvalError> {
                let n = g.output_len().unwrap_or(usize::MAX) as u64;
                // The f32 filters, and the output in the type.
                let extra = (w.len() as u64).saturating_mul(4).saturating_add(n.saturating_mul(2));
                let wide = float_conv(
                    cx,
                    g,
                    x,
                    None,
                    || Cow::Owned(widen(w)),
                    extra,
                    |v: $t| v.to_f32(),
                    None,
                )?;
                Ok(narrow(&wide))
            }
        }
    )*};
}
widened!(half::f16 half::bf16);

/// An integer convolution: the direct loop, exact.
fn exact_conv<T: Element + Acc>(
    cx: &EvalCx<'_>,
    g: &Geometry,
    x: &[T],
    w: &[T],
) -> Result<Vec<T>, EvalError> {
    let n = g.output_len().ok_or_else(too_large_output)?;
    let scratch = (rayon::current_num_threads() as u64).saturating_mul(g.direct_scratch());
    let bytes = (n as u64)
        .saturating_add(scratch)
        .saturating_mul(std::mem::size_of::<T>() as u64);
    cx.reserve_bytes("the output and the convolution's scratch", bytes)?;
    g.check(x.len(), w.len())?;
    Ok(direct(g, x, w, n, |v| v, None))
}

macro_rules! exact {
    ($($t:ty)*) => {$(
        impl Convolve for $t {
            fn convolve(
                cx: &EvalCx<'_>,
                g: &Geometry,
                x: &[$t],
                w: &[$t],
            ) -> Result<Vec<$t>, EvalError> {
                exact_conv(cx, g, x, w)
            }
        }
    )*};
}
exact!(i8 i16 i32 i64 u8 u16 u32 u64);

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

    fn op(grouped: bool, s: &[u64], d: &[u64], pb: &[u64], pe: &[u64], ap: AutoPad) -> Convolution {
        Convolution {
            window: Window {
                strides: s.to_vec(),
                dilations: Some(d.to_vec()),
                pads_begin: pb.to_vec(),
                pads_end: pe.to_vec(),
                auto_pad: ap,
            },
            grouped,
        }
    }

    #[test]
    fn parse_table() {
        let attrs = [
            ("strides", "2,2"),
            ("dilations", "1,1"),
            ("pads_begin", "1,1"),
            ("pads_end", "0,1"),
            ("auto_pad", "explicit"),
        ];
        let want = |grouped| {
            Ok(format!(
                "{:?}",
                op(
                    grouped,
                    &[2, 2],
                    &[1, 1],
                    &[1, 1],
                    &[0, 1],
                    AutoPad::Explicit
                )
            ))
        };
        assert_eq!(parsed_for_test(&CONVOLUTION, &attrs), want(false));
        assert_eq!(parsed_for_test(&GROUP_CONVOLUTION, &attrs), want(true));
        assert_eq!(
            parsed_for_test(&CONVOLUTION, &[("strides", "1"), ("pads_begin", "-1")]),
            Err(vec![
                "dilations None: ".to_string(),
                "pads_begin Some(\"-1\"): expected non-negative integers separated by commas"
                    .to_string()
            ])
        );
    }

    fn infer(o: &Convolution, data: &str, filters: &str) -> Result<String, String> {
        let ty = |s: &str| TensorType::new(ElementType::F32, PartialShape::parse(s).unwrap());
        inferred_shape_for_test(o, &[&ty(data), &ty(filters)])
    }

    #[test]
    fn infer_table() {
        use AutoPad::*;
        let c1 = op(false, &[1], &[1], &[0], &[0], Explicit);
        let c2 = op(false, &[1, 1], &[1, 1], &[0, 0], &[0, 0], Explicit);
        let s2 = op(false, &[2, 2], &[1, 1], &[1, 1], &[1, 1], Explicit);
        let su = op(false, &[2, 2], &[1, 1], &[], &[], SameUpper);
        let g2 = op(true, &[1, 1], &[1, 1], &[1, 1], &[1, 1], Explicit);
        let c3 = op(
            false,
            &[2, 2, 2],
            &[2, 2, 2],
            &[0, 0, 0],
            &[0, 0, 0],
            Explicit,
        );
        let ok: &[(&Convolution, &str, &str, &str)] = &[
            // The spec's examples.
            (
                &op(false, &[2], &[1], &[0], &[0], Valid),
                "[1,5,128]",
                "[16,5,4]",
                "[1,16,63]",
            ),
            (
                &op(false, &[1, 1], &[1, 1], &[2, 2], &[2, 2], Explicit),
                "[1,3,224,224]",
                "[64,3,5,5]",
                "[1,64,224,224]",
            ),
            (
                &op(
                    false,
                    &[3, 3, 3],
                    &[2, 2, 2],
                    &[0, 0, 0],
                    &[0, 0, 0],
                    Explicit,
                ),
                "[1,7,320,320,320]",
                "[32,7,3,3,3]",
                "[1,32,106,106,106]",
            ),
            (
                &op(true, &[1], &[1], &[2], &[2], Explicit),
                "[1,12,224]",
                "[4,1,3,5]",
                "[1,4,224]",
            ),
            (
                &op(true, &[1, 1], &[1, 1], &[2, 2], &[2, 2], Explicit),
                "[1,12,224,224]",
                "[4,1,3,5,5]",
                "[1,4,224,224]",
            ),
            (&c1, "[2,3,10]", "[4,3,3]", "[2,4,8]"),
            (&c2, "[?,3,10,?]", "[4,3,3,3]", "[?,4,8,1..]"),
            (&c2, "[2,?,10,8]", "[4,3,3,3]", "[2,4,8,6]"),
            (&c2, "[2,1..4,1..10,8]", "[4,3,3,3]", "[2,4,1..8,6]"),
            (&s2, "[1,3,224,224]", "[64,3,3,3]", "[1,64,112,112]"),
            (&su, "[1,3,225,?]", "[64,3,3,3]", "[1,64,113,?]"),
            (&su, "[1,3,10..20,7]", "[64,3,?,3]", "[1,64,5..10,4]"),
            (&c3, "[1,2,9,9,9]", "[1,2,3,3,3]", "[1,1,3,3,3]"),
            // Dynamic ranks: the spatial rank from the other input or the attributes.
            (&c2, "...", "[4,3,3,3]", "[?,4,1..,1..]"),
            (&c2, "[1,3,10,8]", "...", "[1,?,1..10,1..8]"),
            (&c2, "...", "...", "[?,?,1..,1..]"),
            (&su, "...", "...", "[?,?,?,?]"),
            // Groups: narrowed by the data's channels.
            (&g2, "[1,6,5,5]", "[?,4,2,3,3]", "[1,12,5,5]"),
            (&g2, "[1,6,5,5]", "[3,4,?,3,3]", "[1,12,5,5]"),
            (&g2, "[1,?,5,5]", "[3,4,2,3,3]", "[1,12,5,5]"),
            (&g2, "[1,4..9,5,5]", "[?,4,2,3,3]", "[1,8..16,5,5]"),
            (&g2, "[1,6,5,5]", "[6,1,1,3,3]", "[1,6,5,5]"),
        ];
        for &(o, d, f, want) in ok {
            assert_eq!(
                infer(o, d, f).as_deref(),
                Ok(want),
                "{d} * {f} {:?}",
                o.window
            );
        }
        let bad: &[(&Convolution, &str, &str, &str)] = &[
            (
                &c2,
                "[1,3,10,8]",
                "[4,2,3,3]",
                "the data has 3 channels but the filters take 2 input channels",
            ),
            (
                &c2,
                "[1,3..4,10,8]",
                "[4,5..6,3,3]",
                "the data has 3..4 channels",
            ),
            (
                &c2,
                "[1,3,10]",
                "[4,3,3,3]",
                "the filters have rank 4, but data of rank 3 needs filters of rank 3",
            ),
            (
                &c2,
                "[1,3]",
                "[4,3]",
                "the data has rank 2; Convolution takes data of rank 3, 4 or 5",
            ),
            (&c2, "[1,3,2,2,2,2]", "[4,3,1,1,1,1]", "the data has rank 6"),
            (
                &c2,
                "...",
                "[4,3]",
                "the filters have rank 2; Convolution takes filters of rank 3 to 5",
            ),
            (
                &c1,
                "[1,3,10,8]",
                "[4,3,3,3]",
                "strides has 1 value but the data has 2 spatial axes",
            ),
            (
                &op(false, &[1, 1], &[1], &[0, 0], &[0, 0], Explicit),
                "[1,3,10,8]",
                "[4,3,3,3]",
                "dilations has 1 value",
            ),
            (
                &op(false, &[1, 1], &[1, 1], &[0], &[0, 0], Explicit),
                "[1,3,10,8]",
                "[4,3,3,3]",
                "pads_begin has 1 value",
            ),
            (
                &op(false, &[1, 0], &[1, 1], &[], &[], Explicit),
                "[1,3,10,8]",
                "[4,3,3,3]",
                "strides must be at least 1, but is 0 on spatial axis 1",
            ),
            (
                &op(false, &[1, 1], &[1, 0], &[], &[], Explicit),
                "[1,3,10,8]",
                "[4,3,3,3]",
                "dilations must be at least 1",
            ),
            (
                &c2,
                "[1,3,2,8]",
                "[4,3,3,3]",
                "the kernel spans 3 elements after dilation on spatial axis 0",
            ),
            (
                &c2,
                "[1,3,5,8]",
                "[4,3,0,3]",
                "the kernel is empty (0) on spatial axis 0",
            ),
            (&c2, "[1,3,2,8]", "[4,3,3,3]", "Some((Input, 0))"),
            (&c2, "[1,3,10,8]", "[4,2,3,3]", "Some((Input, 1))"),
            (
                &g2,
                "[1,6,5,5]",
                "[4,4,2,3,3]",
                "the data has 6 channels, which is not the groups (4, filters dim 0) times the input channels per group (2, filters dim 2)",
            ),
            (&g2, "[1,7,5,5]", "[?,4,2,3,3]", "the data has 7 channels"),
            (
                &g2,
                "[1,6,5,5]",
                "[4,3,3]",
                "the filters have rank 3, but data of rank 4 needs filters of rank 5",
            ),
            (&g2, "[1,6,5,5]", "[3,4,2,3]", "needs filters of rank 5"),
        ];
        for &(o, d, f, why) in bad {
            match infer(o, d, f) {
                Ok(s) => panic!("{d} * {f}: inferred {s}, wanted an error"),
                Err(e) => assert!(e.contains(why), "{d} * {f}: {e}"),
            }
        }
        // Inputs of two types, and boolean.
        let ty = |t, s: &str| TensorType::new(t, PartialShape::parse(s).unwrap());
        let (a, b) = (
            ty(ElementType::F32, "[1,1,3]"),
            ty(ElementType::F16, "[1,1,1]"),
        );
        assert!(
            inferred_shape_for_test(&c1, &[&a, &b])
                .unwrap_err()
                .contains("one type")
        );
        let a = ty(ElementType::Boolean, "[1,1,3]");
        assert!(inferred_shape_for_test(&c1, &[&a, &a]).is_err());
        let a = ty(ElementType::Dynamic, "[1,1,3]");
        let b = ty(ElementType::I8, "[2,1,1]");
        let (out, _) = crate::ops::context::infer_for_test(&c1, &[&a, &b]);
        assert_eq!(out.unwrap()[0].element_type, ElementType::I8);
    }

    fn run<T: Element>(
        o: &Convolution,
        ds: &[usize],
        x: Vec<T>,
        fs: &[usize],
        w: Vec<T>,
    ) -> (Vec<usize>, Vec<T>) {
        let got = eval_for_test(
            o,
            &[tensor_for_test(ds, x), tensor_for_test(fs, w)],
            u64::MAX,
        )
        .unwrap();
        (
            got.shape().to_vec(),
            T::view(&got).unwrap().iter().copied().collect(),
        )
    }

    #[test]
    fn small_cases_by_hand() {
        use AutoPad::*;
        let e = |s, d, pb, pe| op(false, &[s], &[d], &[pb], &[pe], Explicit);
        let a = |ap| op(false, &[1], &[1], &[], &[], ap);
        let (x4, k3) = (&[1f32, 2., 3., 4.][..], &[1f32, 10., 100.][..]);
        let (x3, k2) = (&[1f32, 2., 3.][..], &[1f32, 10.][..]);
        for (o, x, w, want) in [
            // 1D: [1,2,3,4] ⋆ [1,10,100].
            (e(1, 1, 0, 0), x4, k3, &[321f32, 432.][..]),
            // Padded both sides, stride 2: windows at -1 and 1 over [0,1,2,3,4,0].
            (e(2, 1, 1, 1), x4, k3, &[210., 432.]),
            // Pads 1 and 2: a third window, [4,0,0].
            (e(2, 1, 1, 2), x4, k3, &[210., 432., 4.]),
            // same_lower, kernel 2: the pad at the begin.
            (a(SameLower), x3, k2, &[10., 21., 32.]),
            (a(SameUpper), x3, k2, &[21., 32., 3.]),
        ] {
            assert_eq!(run1(&o, x, w), (vec![1, 1, want.len()], want.to_vec()));
        }
        // Dilation 2: taps 0, 2, 4.
        let got = run1(
            &e(1, 2, 0, 0),
            &[1f64, 2., 3., 4., 5., 6.],
            &[1., 10., 100.],
        );
        assert_eq!(got.1, vec![531., 642.]);
        // 2D, two input channels, two filters, a 2×2 kernel over 3×3.
        let o = op(false, &[1, 1], &[1, 1], &[0, 0], &[0, 0], Explicit);
        let x: Vec<f32> = (1..=18).map(|v| v as f32).collect();
        let w = vec![
            1f32, 0., 0., 1., /* ch 1 */ 0., 0., 0., 0., /* f1 */ 0., 0., 0., 0., 1., 1.,
            1., 1.,
        ];
        let got = run(&o, &[1, 2, 3, 3], x, &[2, 2, 2, 2], w);
        // f0: x0[i,j] + x0[i+1,j+1]; f1: the 2×2 sums of channel 1 (10..18).
        assert_eq!(
            got,
            (vec![1, 2, 2, 2], vec![6., 8., 12., 14., 48., 52., 60., 64.])
        );
        // Groups: two groups of one channel, each two filters (depthwise, multiplier 2).
        let o = op(true, &[1], &[1], &[0], &[0], Explicit);
        let got = run(
            &o,
            &[1, 2, 3],
            vec![1f32, 2., 3., 10., 20., 30.],
            &[2, 2, 1, 2],
            vec![1., 1., 1., -1., 2., 0., 0., 2.],
        );
        assert_eq!(
            got,
            (vec![1, 4, 2], vec![3., 5., -1., -1., 20., 40., 40., 60.])
        );
        // Integers wrap: 100·2 + 100·1 = 300 ≡ 44 (i8).
        assert_eq!(run1(&o_plain1(), &[100i8, 100], &[2, 1]).1, vec![44]);
        assert_eq!(run1(&o_plain1(), &[i64::MAX], &[2]).1, vec![-2]);
        assert_eq!(run1(&o_plain1(), &[200u8, 100], &[1, 1]).1, vec![44]);
    }

    /// [`run`] on one image of one channel and one filter of one channel (1D).
    fn run1<T: Element>(o: &Convolution, x: &[T], w: &[T]) -> (Vec<usize>, Vec<T>) {
        run(
            o,
            &[1, 1, x.len()],
            x.to_vec(),
            &[1, 1, w.len()],
            w.to_vec(),
        )
    }

    fn o_plain1() -> Convolution {
        op(false, &[1], &[1], &[0], &[0], AutoPad::Explicit)
    }

    /// A geometry of the reference comparisons: data shape, filter shape, grouped, strides,
    /// dilations, pads, auto_pad.
    struct Case {
        data: Vec<usize>,
        filters: Vec<usize>,
        grouped: bool,
        strides: Vec<u64>,
        dilations: Vec<u64>,
        pads_begin: Vec<u64>,
        pads_end: Vec<u64>,
        auto_pad: AutoPad,
    }

    #[allow(clippy::too_many_arguments)]
    fn case(
        data: &[usize],
        filters: &[usize],
        grouped: bool,
        s: &[u64],
        d: &[u64],
        pb: &[u64],
        pe: &[u64],
        ap: AutoPad,
    ) -> Case {
        Case {
            data: data.to_vec(),
            filters: filters.to_vec(),
            grouped,
            strides: s.to_vec(),
            dilations: d.to_vec(),
            pads_begin: pb.to_vec(),
            pads_end: pe.to_vec(),
            auto_pad: ap,
        }
    }

    #[rustfmt::skip]
    fn cases() -> Vec<Case> {
        use AutoPad::*;
        vec![
            case(&[2, 3, 11], &[4, 3, 3], false, &[1], &[1], &[0], &[0], Explicit),
            case(&[1, 2, 17], &[3, 2, 4], false, &[3], &[2], &[2], &[1], Explicit),
            case(&[1, 4, 9], &[2, 2, 2, 3], true, &[2], &[1], &[], &[], SameUpper),
            case(&[1, 3, 7, 9], &[5, 3, 3, 3], false, &[1, 1], &[1, 1], &[1, 1], &[1, 1], Explicit),
            case(&[2, 3, 10, 9], &[4, 3, 3, 2], false, &[2, 3], &[1, 2], &[0, 1], &[2, 0], Explicit),
            case(&[1, 2, 8, 8], &[3, 2, 4, 4], false, &[2, 2], &[1, 1], &[9, 9], &[9, 9], SameUpper),
            case(&[1, 2, 8, 7], &[3, 2, 4, 3], false, &[3, 2], &[1, 1], &[], &[], SameLower),
            case(&[1, 2, 8, 7], &[3, 2, 4, 3], false, &[1, 1], &[2, 1], &[5, 5], &[5, 5], Valid),
            // Pointwise (in place), and pointwise with stride 2 (gathered).
            case(&[2, 16, 5, 6], &[7, 16, 1, 1], false, &[1, 1], &[1, 1], &[0, 0], &[0, 0], Explicit),
            case(&[1, 8, 9, 9], &[5, 8, 1, 1], false, &[2, 2], &[1, 1], &[0, 0], &[0, 0], Explicit),
            // Groups, depthwise, depthwise with multiplier 2 and with strides and dilation.
            case(&[1, 6, 7, 7], &[3, 2, 2, 3, 3], true, &[1, 1], &[1, 1], &[1, 1], &[1, 1], Explicit),
            case(&[2, 5, 9, 8], &[5, 1, 1, 3, 3], true, &[1, 1], &[1, 1], &[1, 1], &[1, 1], Explicit),
            case(&[1, 4, 12, 11], &[4, 2, 1, 3, 3], true, &[2, 2], &[1, 1], &[], &[], SameUpper),
            case(&[1, 3, 12, 11], &[3, 1, 1, 5, 3], true, &[2, 1], &[2, 3], &[2, 0], &[1, 3], Explicit),
            case(&[1, 3, 12, 11], &[3, 1, 1, 5, 3], true, &[1, 3], &[1, 1], &[], &[], SameLower),
            // 3D.
            case(&[1, 2, 5, 6, 7], &[3, 2, 2, 3, 2], false, &[1, 2, 1], &[1, 1, 2], &[1, 0, 1], &[0, 1, 1], Explicit),
            case(&[1, 4, 5, 5, 5], &[2, 2, 2, 3, 3, 3], true, &[2, 2, 2], &[1, 1, 1], &[], &[], SameUpper),
            case(&[1, 3, 6, 5, 4], &[3, 1, 1, 3, 3, 3], true, &[1, 1, 1], &[1, 1, 1], &[1, 1, 1], &[1, 1, 1], Explicit),
            // K = 64·9 = 576 (three blocks of the GEMM) over 900 positions (two tiles).
            case(&[1, 64, 30, 30], &[40, 64, 3, 3], false, &[1, 1], &[1, 1], &[1, 1], &[1, 1], Explicit),
            // Trivial axes (one position, one tap, no padding): last, in the middle, in a
            // depthwise run; and a one-wide axis that padding makes real.
            case(&[1, 3, 9, 1], &[4, 3, 3, 1], false, &[1, 1], &[1, 1], &[1, 0], &[1, 0], Explicit),
            case(&[1, 2, 5, 1, 6], &[3, 2, 2, 1, 3], false, &[1, 2, 1], &[1, 1, 1], &[0, 0, 1], &[1, 0, 0], Explicit),
            case(&[1, 4, 10, 1], &[4, 1, 1, 3, 1], true, &[2, 1], &[1, 1], &[1, 0], &[1, 0], Explicit),
            case(&[1, 2, 6, 1], &[2, 2, 3, 1], false, &[1, 1], &[1, 1], &[0, 0], &[0, 1], Explicit),
        ]
    }

    /// The pads and output dims of a case, computed here from the spec's formulas.
    fn resolve(c: &Case) -> (Vec<usize>, Vec<usize>) {
        let spatial = c.data.len() - 2;
        let extra = if c.grouped { 3 } else { 2 };
        let (mut pads, mut out) = (Vec::new(), Vec::new());
        for i in 0..spatial {
            let (x, k) = (c.data[2 + i], c.filters[extra + i]);
            let (s, d) = (c.strides[i] as usize, c.dilations[i] as usize);
            let span = (k - 1) * d + 1;
            let (pb, pe) = match c.auto_pad {
                AutoPad::Explicit => (c.pads_begin[i] as usize, c.pads_end[i] as usize),
                AutoPad::Valid => (0, 0),
                ap => {
                    let total = ((x.div_ceil(s) - 1) * s + span).saturating_sub(x);
                    let small = total / 2;
                    if ap == AutoPad::SameUpper {
                        (small, total - small)
                    } else {
                        (total - small, small)
                    }
                }
            };
            pads.push(pb);
            out.push((x + pb + pe - span) / s + 1);
        }
        (pads, out)
    }

    /// The float64 reference by the definition: each output and its `Σ|w·x|`.
    fn reference(c: &Case, x: &[f64], w: &[f64]) -> (Vec<usize>, Vec<f64>, Vec<f64>) {
        let (pads, out_sp) = resolve(c);
        let spatial = out_sp.len();
        let (groups, cog, cig) = if c.grouped {
            (c.filters[0], c.filters[1], c.filters[2])
        } else {
            (1, c.filters[0], c.filters[1])
        };
        let extra = if c.grouped { 3 } else { 2 };
        let ksp = &c.filters[extra..];
        let xsp = &c.data[2..];
        let (n_batch, channels) = (c.data[0], c.data[1]);
        let mut shape = vec![n_batch, groups * cog];
        shape.extend(&out_sp);
        let plane: usize = out_sp.iter().product();
        let taps: usize = ksp.iter().product();
        let in_plane: usize = xsp.iter().product();
        let tap_idx: Vec<Vec<usize>> = (0..taps).map(|t| crate::tensor::unravel(t, ksp)).collect();
        let (mut vals, mut abs) = (Vec::new(), Vec::new());
        for n in 0..n_batch {
            for co in 0..groups * cog {
                let grp = co / cog;
                for p in 0..plane {
                    let o = crate::tensor::unravel(p, &out_sp);
                    let (mut s, mut a) = (0f64, 0f64);
                    for ci in 0..cig {
                        for t in 0..taps {
                            let kt = &tap_idx[t];
                            let mut flat = 0usize;
                            let mut inside = true;
                            for i in 0..spatial {
                                let pos = (o[i] * c.strides[i] as usize
                                    + kt[i] * c.dilations[i] as usize)
                                    as isize
                                    - pads[i] as isize;
                                if pos < 0 || pos as usize >= xsp[i] {
                                    inside = false;
                                }
                                flat = flat * xsp[i] + pos.max(0) as usize;
                            }
                            if !inside {
                                continue;
                            }
                            let xv = x[(n * channels + grp * cig + ci) * in_plane + flat];
                            let wv = w[(co * cig + ci) * taps + t];
                            s += xv * wv;
                            a += (xv * wv).abs();
                        }
                    }
                    vals.push(s);
                    abs.push(a);
                }
            }
        }
        (shape, vals, abs)
    }

    fn op_of(c: &Case) -> Convolution {
        op(
            c.grouped,
            &c.strides,
            &c.dilations,
            &c.pads_begin,
            &c.pads_end,
            c.auto_pad,
        )
    }

    fn k_of(c: &Case) -> usize {
        let extra = if c.grouped { 3 } else { 2 };
        c.filters[extra - 1..].iter().product()
    }

    #[test]
    fn floats_match_the_float64_reference() {
        for (idx, c) in cases().iter().enumerate() {
            let o = op_of(c);
            let (nx, nw) = (c.data.iter().product(), c.filters.iter().product());
            let x = uniform_for_test(nx, 2 * idx as u64 + 1, -1.0, 1.0);
            let w = uniform_for_test(nw, 2 * idx as u64 + 2, -1.0, 1.0);
            let f64s = |v: &[f32]| v.iter().map(|&a| a as f64).collect::<Vec<_>>();
            let (shape, want, abs) = reference(c, &f64s(&x), &f64s(&w));
            let k = k_of(c);
            // f32: one fused multiply-add chain (the packed GEMM) or recursive summation
            // (depthwise); f64: the GEMM crate's blocks of 256 summed in order.
            let units = (k + 1) as f64;
            let units64 = (k.min(256) + k.div_ceil(256) + 1) as f64;
            let (got_shape, got) = run(&o, &c.data, x.clone(), &c.filters, w.clone());
            assert_eq!(got_shape, shape, "case {idx}");
            for (j, ((&g, &r), &a)) in got.iter().zip(&want).zip(&abs).enumerate() {
                let err = (g as f64 - r).abs();
                assert!(
                    err <= units * 2f64.powi(-24) * a,
                    "case {idx} f32 element {j}: {g} vs {r} (Σ|wx| {a})"
                );
            }
            let (_, got64) = run(&o, &c.data, f64s(&x), &c.filters, f64s(&w));
            for (j, ((&g, &r), &a)) in got64.iter().zip(&want).zip(&abs).enumerate() {
                let err = (g - r).abs();
                assert!(
                    err <= units64 * 2f64.powi(-53) * a,
                    "case {idx} f64 element {j}: {g} vs {r}"
                );
            }
            // f16 and bf16: the f32 computation on the widened inputs, rounded once.
            let what = format!("case {idx} f16");
            rounded_once(&o, c, &x, &w, f16::from_f32, f16::to_f32, &what);
            let what = format!("case {idx} bf16");
            rounded_once(&o, c, &x, &w, bf16::from_f32, bf16::to_f32, &what);
        }
    }

    /// A narrow float type (`narrow` from f32, `wide` back): the run on `x` and `w` rounded to
    /// it gives the f32 run on the same values, rounded once.
    fn rounded_once<H: Element>(
        o: &Convolution,
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
        let (_, want) = run(o, &c.data, widened(&xh), &c.filters, widened(&wh));
        let (_, got) = run(o, &c.data, xh, &c.filters, wh);
        let want: Vec<H> = want.iter().map(|&v| narrow(v)).collect();
        assert_eq!(got, want, "{what}");
    }

    #[test]
    fn integers_are_exact() {
        // Small values (exact in f64), then wrapped to the type.
        for (idx, c) in cases()
            .iter()
            .enumerate()
            .filter(|(i, _)| i % 3 == 0 || *i == 11)
        {
            let o = op_of(c);
            let (nx, nw) = (c.data.iter().product(), c.filters.iter().product());
            let small = |n, seed| -> Vec<i64> {
                uniform_for_test(n, seed, -8.0, 8.0)
                    .iter()
                    .map(|v| v.floor() as i64)
                    .collect()
            };
            let (x, w) = (small(nx, idx as u64 + 7), small(nw, idx as u64 + 8));
            let f = |v: &[i64]| v.iter().map(|&a| a as f64).collect::<Vec<_>>();
            let (_, want, _) = reference(c, &f(&x), &f(&w));
            let want: Vec<i64> = want.iter().map(|&v| v as i64).collect();
            wraps(&o, c, &x, &w, &want, |v| v, &format!("case {idx} i64"));
            wraps(&o, c, &x, &w, &want, |v| v as i8, &format!("case {idx} i8"));
            wraps(
                &o,
                c,
                &x,
                &w,
                &want,
                |v| v as u16,
                &format!("case {idx} u16"),
            );
        }
    }

    /// The run on `x` and `w` wrapped to an integer type (`wrap`) is `want` wrapped.
    fn wraps<T: Element>(
        o: &Convolution,
        c: &Case,
        x: &[i64],
        w: &[i64],
        want: &[i64],
        wrap: fn(i64) -> T,
        what: &str,
    ) {
        let each = |v: &[i64]| v.iter().map(|&a| wrap(a)).collect::<Vec<T>>();
        let (_, got) = run(o, &c.data, each(x), &c.filters, each(w));
        assert_eq!(got, each(want), "{what}");
    }

    #[test]
    fn depthwise_gives_the_chain_of_its_taps() {
        // Planes large enough for every block of the padded path at stride 1 (4, 8, 16 and
        // 2·16 sums, with the overlapping last block) and small enough for none; rows wide
        // enough for every block of the direct path at strides 2 and 3, with borders on both
        // sides. Each f32 output is the taps' products added in order (multiply, then add)
        // from +0, padding skipped, also where an infinite weight meets the padding (the
        // padded path would give inf·0 = NaN: such a plane takes the direct path).
        // (Width, height, top and bottom pad, stride down the columns; stride, dilation and
        // pads along the rows.)
        let shapes = [
            (5usize, 4usize, 1usize, 1usize, 1usize, 1usize, 1usize),
            (12, 4, 1, 1, 1, 1, 1),
            (29, 4, 1, 1, 1, 1, 1),
            (56, 4, 1, 1, 1, 1, 1),
            (75, 4, 1, 1, 2, 1, 1),
            (70, 4, 1, 1, 1, 2, 2),
            (41, 4, 1, 1, 3, 1, 0),
            (7, 7, 1, 1, 1, 1, 1),
            (2, 3, 0, 1, 1, 1, 1),
            (2, 4, 0, 1, 1, 1, 1),
            (3, 4, 0, 1, 1, 1, 1),
            (14, 14, 1, 2, 2, 1, 1),
            (15, 9, 1, 2, 2, 1, 1),
            (28, 11, 1, 3, 2, 2, 2),
            (9, 8, 0, 2, 1, 3, 3),
            // Most of the rows' taps in the padding: side by side, blocks skip those rows; a
            // plane at a time, the direct loop.
            (9, 2, 1, 1, 1, 1, 1),
        ];
        // Channels and images: one partial block of planes side by side, and blocks of 16
        // that span the two images.
        let runs = shapes.into_iter().flat_map(|s| {
            [
                (s, false, 1usize, 3usize),
                (s, true, 1, 3),
                (s, false, 2, 19),
            ]
        });
        for ((w_in, h, pad_h, stride_h, stride, dil, pad), poison, batch, ch) in runs {
            let (kh, kw) = (3usize, 3usize);
            let o = op(
                true,
                &[stride_h as u64, stride as u64],
                &[1, dil as u64],
                &[pad_h as u64, pad as u64],
                &[pad_h as u64, pad as u64],
                AutoPad::Explicit,
            );
            let x = uniform_for_test(batch * ch * h * w_in, w_in as u64, -1.0, 1.0);
            let mut w = uniform_for_test(ch * kh * kw, 3 * w_in as u64, -1.0, 1.0);
            if poison {
                // The first tap of channel 1: in the padding for the first row's outputs.
                w[kh * kw] = f32::INFINITY;
            }
            // On one thread: 38 planes go side by side (two blocks of 16 and one of 6), 3 a
            // plane at a time.
            let one = rayon::ThreadPoolBuilder::new()
                .num_threads(1)
                .build()
                .unwrap();
            let (shape, got) = one.install(|| {
                run(
                    &o,
                    &[batch, ch, h, w_in],
                    x.clone(),
                    &[ch, 1, 1, kh, kw],
                    w.clone(),
                )
            });
            let oh_n = (h + 2 * pad_h - kh) / stride_h + 1;
            let ow_n = (w_in + 2 * pad - dil * (kw - 1) - 1) / stride + 1;
            assert_eq!(shape, vec![batch, ch, oh_n, ow_n]);
            let mut want = Vec::new();
            for (n, c) in (0..batch).flat_map(|n| (0..ch).map(move |c| (n, c))) {
                for oh in 0..oh_n {
                    for ow in 0..ow_n {
                        let mut acc = 0f32;
                        for i in 0..kh {
                            for j in 0..kw {
                                let ih = (oh * stride_h + i) as isize - pad_h as isize;
                                let iw = (ow * stride + j * dil) as isize - pad as isize;
                                if (0..h as isize).contains(&ih) && (0..w_in as isize).contains(&iw)
                                {
                                    let xv =
                                        x[((n * ch + c) * h + ih as usize) * w_in + iw as usize];
                                    acc += w[(c * kh + i) * kw + j] * xv;
                                }
                            }
                        }
                        want.push(acc);
                    }
                }
            }
            let bits = |v: &[f32]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
            assert_eq!(
                bits(&got),
                bits(&want),
                "{batch}×{ch}×{w_in}×{h}, pad {pad_h}, strides {stride_h} {stride}, dilation {dil}, \
                 poison {poison}"
            );
        }
    }

    #[test]
    fn trivial_axes_move_to_the_front() {
        let all = cases();
        let geometry = |i: usize| {
            op_of(&all[i])
                .geometry(&all[i].data, &all[i].filters)
                .unwrap()
        };
        let g = geometry(19);
        assert_eq!(
            (g.input, g.kernel, g.output, g.pad),
            ([1, 1, 9], [1, 1, 3], [1, 1, 9], [0, 0, 1])
        );
        let g = geometry(20);
        assert_eq!(
            (g.input, g.kernel, g.output),
            ([1, 5, 6], [1, 2, 3], [1, 5, 5])
        );
        assert_eq!((g.stride, g.pad), ([1, 1, 1], [0, 0, 1]));
        let g = geometry(21);
        assert!(g.depthwise());
        assert_eq!((g.output, g.stride), ([1, 1, 5], [1, 1, 2]));
        // Padded at the end, the one-wide axis gives two positions: it stays.
        let g = geometry(22);
        assert_eq!((g.input, g.output), ([1, 6, 1], [1, 4, 2]));
    }

    #[test]
    fn padded_copies_are_bounded() {
        let geometry = |data: &[usize], strides: &[u64], pads: &[u64]| {
            let o = op(true, strides, &[1, 1], pads, pads, AutoPad::Explicit);
            o.geometry(data, &[data[1], 1, 1, 3, 3]).unwrap()
        };
        // Stride 2 both ways: four phase planes of 15 × 15 (a 28 × 28 plane, padded by 1);
        // side by side, the 29 × 29 positions the taps reach, 16 lanes each.
        let g = geometry(&[1, 4, 28, 28], &[2, 2], &[1, 1]);
        assert_eq!(g.padded().map(|l| l.dims()), Some((4, 15, 15)));
        assert_eq!(g.lanes().map(|l| l.len()), Some(29 * 29));
        assert_eq!(g.direct_scratch(), 29 * 29 * 16);
        // Two output channels per input channel: a plane at a time, through the phases.
        let o = op(true, &[2, 2], &[1, 1], &[1, 1], &[1, 1], AutoPad::Explicit);
        let g = o.geometry(&[1, 4, 28, 28], &[4, 2, 1, 3, 3]).unwrap();
        assert_eq!((g.lanes(), g.direct_scratch()), (None, 5 * 15 * 15));
        // A million phases for one output: no phase planes; side by side, only the 3 × 3
        // positions the taps reach.
        let g = geometry(&[1, 4, 5, 5], &[1000, 1000], &[1, 1]);
        assert_eq!(g.padded(), None);
        assert_eq!(g.lanes().map(|l| l.len()), Some(3 * 3));
        assert_eq!(g.direct_scratch(), 3 * 3 * 16);
        // A plane 2 high under 3 rows of taps: most fall in the padding, so no padded copy
        // of a plane; side by side, blocks of outputs skip those rows.
        let g = geometry(&[1, 4, 2, 40], &[1, 1], &[1, 1]);
        assert_eq!(g.padded(), None);
        assert_eq!(g.lanes().map(|l| l.len()), Some(4 * 42));
    }

    #[test]
    fn the_same_bits_at_any_thread_count() {
        // The GEMM (gathered, in place, output-channel blocks) and depthwise paths.
        let picks = [0usize, 4, 8, 11, 12, 15, 18];
        let all = cases();
        for &i in &picks {
            let c = &all[i];
            let o = op_of(c);
            let (nx, nw) = (c.data.iter().product(), c.filters.iter().product());
            let x = uniform_for_test(nx, 100 + i as u64, -1.0, 1.0);
            let w = uniform_for_test(nw, 200 + i as u64, -1.0, 1.0);
            let runs = bits_at_thread_counts(&[1, 2, 4], || {
                run(&o, &c.data, x.clone(), &c.filters, w.clone()).1
            });
            assert!(runs[1] == runs[0] && runs[2] == runs[0], "case {i}");
        }
    }

    #[test]
    fn pointwise_in_place_gives_the_gathered_bits() {
        // The fixed K order: reading the data in place or through im2col is the same GEMM,
        // for the packed f32 GEMM and the crate's f64 one.
        let c = &cases()[8];
        let o = op_of(c);
        let g = o.geometry(&c.data, &c.filters).unwrap();
        assert!(g.pointwise() && !g.depthwise());
        let x = uniform_for_test(c.data.iter().product(), 5, -1.0, 1.0);
        let w = uniform_for_test(c.filters.iter().product(), 6, -1.0, 1.0);
        let n = g.output_len().unwrap();
        let (_, parts) = plan(&g, 4, false);
        // Outputs start as NaN: the GEMM must write every element.
        let nan = |n: usize| vec![MaybeUninit::new(f32::NAN); n];
        let (mut a, mut b) = (nan(n), nan(n));
        let mut d = nan(n);
        pointwise_conv(&g, &x, &w, &mut a, &parts, None);
        packed_conv(&g, &x, None, &w, &mut b, &parts, |v: f32| v, None);
        packed_conv(&g, &x, Some(&x), &w, &mut d, &parts, |v| v, None);
        let (a, b, d) = (written(&a), written(&b), written(&d));
        assert_eq!(a, b);
        assert_eq!(a, d);
        assert!(a.iter().all(|v| !v.is_nan()));
        assert_eq!(run(&o, &c.data, x.clone(), &c.filters, w.clone()).1, a);
        let wide = |v: &[f32]| v.iter().map(|&e| e as f64).collect::<Vec<_>>();
        let (x, w) = (wide(&x), wide(&w));
        let nan = |n: usize| vec![MaybeUninit::new(f64::NAN); n];
        let (mut a, mut b) = (nan(n), nan(n));
        gemm_conv(&g, &x, Some(&x), &w, &mut a, &parts, |v| v, None);
        gemm_conv(&g, &x, None, &w, &mut b, &parts, |v: f64| v, None);
        let (a, b) = (written(&a), written(&b));
        assert_eq!(a, b);
        assert!(a.iter().all(|v| !v.is_nan()));
    }

    /// The implicit GEMM (columns read from the padded copies) gives the bits of the gathered
    /// columns, on random 1D and 2D geometries: strides, dilations, pads, groups, images,
    /// planes smaller than a panel and larger, and a K of several blocks.
    #[test]
    fn implicit_gives_the_gathered_bits() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut draw = |lo: usize, hi: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            lo + (state % (hi - lo + 1) as u64) as usize
        };
        let mut checked = 0;
        for t in 0..200 {
            let two = t % 4 != 0;
            let (groups, cig, cog) = (draw(1, 2), draw(1, 3), draw(5, 9));
            let cig = if t % 25 == 7 { 40 } else { cig };
            let (kh, kw) = (if two { draw(1, 4) } else { 1 }, draw(1, 4));
            let axes = if two { 2 } else { 1 };
            let mut some = |lo, hi| (0..axes).map(|_| draw(lo, hi) as u64).collect::<Vec<_>>();
            let (pb, pe, strides, dil) = (some(0, 3), some(0, 3), some(1, 3), some(1, 2));
            let (h, wd) = (draw(1, 9), draw(1, 40));
            let batch = draw(1, 2);
            let mut data = vec![batch, groups * cig, wd];
            let mut filters = vec![cog, cig, kw];
            if two {
                data.insert(2, h);
                filters.insert(2, kh);
            }
            let grouped = groups > 1;
            if grouped {
                filters.insert(0, groups);
            }
            let o = op(grouped, &strides, &dil, &pb, &pe, AutoPad::Explicit);
            let Ok(g) = o.geometry(&data, &filters) else {
                continue;
            };
            let Some(layout) = g.implicit() else { continue };
            let Some(n) = g.output_len().filter(|&n| n > 0) else {
                continue;
            };
            let x = uniform_for_test(data.iter().product(), 300 + t, -1.0, 1.0);
            let w = uniform_for_test(filters.iter().product(), 400 + t, -1.0, 1.0);
            // Outputs start as NaN: each path must write every element.
            let nan = |n: usize| vec![MaybeUninit::new(f32::NAN); n];
            let (mut a, mut b) = (nan(n), nan(n));
            let (_, rows) = plan(&g, 4, true);
            let (_, tiles) = plan(&g, 4, false);
            implicit_conv(&g, &layout, &x, &w, &mut a, &rows, |v: f32| v, None);
            packed_conv(&g, &x, None, &w, &mut b, &tiles, |v: f32| v, None);
            let (a, b) = (written(&a), written(&b));
            let bits = |v: &[f32]| v.iter().map(|e| e.to_bits()).collect::<Vec<_>>();
            assert_eq!(
                bits(&a),
                bits(&b),
                "{data:?} {filters:?} {strides:?} {dil:?} {pb:?} {pe:?}"
            );
            assert!(a.iter().all(|v| !v.is_nan()));
            checked += 1;
        }
        assert!(checked > 100, "{checked} geometries took the implicit path");
    }

    /// Pointwise convolutions read in place give the bits of the gathered columns, on planes
    /// of every size around a panel's width (the last partial panel packed where reading it
    /// in place would run past the data), with images, groups and channel blocks.
    #[test]
    fn pointwise_in_place_on_every_plane_size() {
        let mut packed_tails = 0;
        for t in 0..80u64 {
            let t = t as usize;
            let (batch, groups, cig, cog) = (1 + t % 2, 1 + t / 2 % 2, 1 + t % 5, 5 + t % 3);
            let (h, wd) = (1 + t % 3, 1 + t * 7 % 45);
            let grouped = groups > 1;
            let data = vec![batch, groups * cig, h, wd];
            let mut filters = vec![cog, cig, 1, 1];
            if grouped {
                filters.insert(0, groups);
            }
            let o = op(
                grouped,
                &[1, 1],
                &[1, 1],
                &[0, 0],
                &[0, 0],
                AutoPad::Explicit,
            );
            let g = o.geometry(&data, &filters).unwrap();
            assert!(g.pointwise() && g.implicit().is_none());
            let x = uniform_for_test(data.iter().product(), 500 + t as u64, -1.0, 1.0);
            let w = uniform_for_test(filters.iter().product(), 600 + t as u64, -1.0, 1.0);
            let n = g.output_len().unwrap();
            let (_, parts) = plan(&g, 4, false);
            let nr = Panels::detect().width();
            let last = parts.iter().map(|p| p.p1 - p.p0).next_back().unwrap_or(0);
            packed_tails += usize::from(last % nr != 0);
            let nan = |n: usize| vec![MaybeUninit::new(f32::NAN); n];
            let (mut a, mut b) = (nan(n), nan(n));
            pointwise_conv(&g, &x, &w, &mut a, &parts, None);
            packed_conv(&g, &x, Some(&x), &w, &mut b, &parts, |v| v, None);
            let bits = |v: &[MaybeUninit<f32>]| written(v).iter().map(|e| e.to_bits()).collect();
            let (a, b): (Vec<u32>, Vec<u32>) = (bits(&a), bits(&b));
            assert_eq!(a, b, "{data:?} {filters:?}");
            assert!(a.iter().all(|&v| !f32::from_bits(v).is_nan()));
        }
        assert!(
            packed_tails > 20,
            "{packed_tails} runs ended in a partial panel"
        );
    }

    /// The values of a buffer whose elements were all initialised.
    fn written<T: Copy>(v: &[MaybeUninit<T>]) -> Vec<T> {
        // SAFETY: the callers fill the buffers before the call under test.
        v.iter().map(|e| unsafe { e.assume_init() }).collect()
    }

    #[test]
    fn long_sums_and_partial_panels_give_the_fused_chain() {
        // K of 2·256 + 37 (three K blocks), output planes of 7×7 and 5×13 (partial column
        // panels, half panels): every f32 output is the fused multiply-add chain over the
        // input channels then the taps, in order, from +0.
        for (idx, (hw, cin, kk)) in [([7usize, 7usize], 61usize, 3usize), ([5, 13], 3, 1)]
            .into_iter()
            .enumerate()
        {
            let pad = (kk / 2) as u64;
            let o = op(
                false,
                &[1, 1],
                &[1, 1],
                &[pad, pad],
                &[pad, pad],
                AutoPad::Explicit,
            );
            let (cout, k) = (10, cin * kk * kk);
            let data = [1, cin, hw[0], hw[1]];
            let filters = [cout, cin, kk, kk];
            let x = uniform_for_test(data.iter().product(), 40 + idx as u64, -1.0, 1.0);
            let w = uniform_for_test(filters.iter().product(), 50 + idx as u64, -1.0, 1.0);
            let (shape, got) = run(&o, &data, x.clone(), &filters, w.clone());
            assert_eq!(shape, vec![1, cout, hw[0], hw[1]]);
            let at = |c: usize, i: isize, j: isize| {
                let inside = (0..hw[0] as isize).contains(&i) && (0..hw[1] as isize).contains(&j);
                if inside {
                    x[(c * hw[0] + i as usize) * hw[1] + j as usize]
                } else {
                    0.0
                }
            };
            for m in 0..cout {
                for i in 0..hw[0] {
                    for j in 0..hw[1] {
                        let mut acc = 0f32;
                        for t in 0..k {
                            let (c, th, tw) = (t / (kk * kk), t / kk % kk, t % kk);
                            let v = at(
                                c,
                                (i + th) as isize - pad as isize,
                                (j + tw) as isize - pad as isize,
                            );
                            acc = w[m * k + t].mul_add(v, acc);
                        }
                        let e = got[(m * hw[0] + i) * hw[1] + j];
                        assert_eq!(e.to_bits(), acc.to_bits(), "case {idx} ({m}, {i}, {j})");
                    }
                }
            }
        }
    }

    #[test]
    fn sizes_are_checked_before_allocating() {
        let o = op(false, &[1, 1], &[1, 1], &[0, 0], &[0, 0], AutoPad::Explicit);
        let x = tensor_for_test(&[1, 1, 100, 100], vec![1f32; 10_000]);
        let w = tensor_for_test(&[64, 1, 3, 3], vec![1f32; 576]);
        let err = eval_for_test(&o, &[x.clone(), w.clone()], 1 << 16).unwrap_err();
        assert!(matches!(err, EvalError::Memory(_)), "{err}");
        assert!(eval_for_test(&o, &[x, w], 64 << 20).is_ok());
        let xi = tensor_for_test(&[1, 1, 100, 100], vec![1i32; 10_000]);
        let wi = tensor_for_test(&[64, 1, 3, 3], vec![1i32; 576]);
        assert!(matches!(
            eval_for_test(&o, &[xi, wi], 1 << 16),
            Err(EvalError::Memory(_))
        ));
        // Huge pads: the output's size is refused, not allocated.
        let o = op(false, &[1], &[1], &[1 << 40], &[0], AutoPad::Explicit);
        let x = tensor_for_test(&[1, 1, 1], vec![1f32]);
        let w = tensor_for_test(&[1, 1, 1], vec![1f32]);
        let err = eval_for_test(&o, &[x, w], 1 << 30).unwrap_err();
        assert!(matches!(err, EvalError::Memory(_)), "{err}");
    }

    #[test]
    fn execution_refuses_what_inference_refuses() {
        let o = o_plain1();
        let bad = |ds: &[usize], fs: &[usize]| {
            let x = tensor_for_test(ds, vec![0f32; ds.iter().product()]);
            let w = tensor_for_test(fs, vec![0f32; fs.iter().product()]);
            eval_for_test(&o, &[x, w], u64::MAX)
                .unwrap_err()
                .to_string()
        };
        assert!(bad(&[1, 2, 5], &[1, 3, 3]).contains("channels"));
        assert!(bad(&[1, 2, 2], &[1, 2, 3]).contains("the kernel spans 3"));
        assert!(bad(&[1, 2, 2, 2], &[1, 2, 1, 1]).contains("strides has 1 value"));
        let x = tensor_for_test(&[1, 1, 3], vec![0f32; 3]);
        let w = tensor_for_test(&[1, 1, 1], vec![0f64]);
        assert!(matches!(
            eval_for_test(&o, &[x, w], u64::MAX),
            Err(EvalError::Types(..))
        ));
        // Empty batch and empty channels give empty and zero outputs.
        let x = tensor_for_test(&[0, 2, 4], Vec::<f32>::new());
        let w = tensor_for_test(&[3, 2, 2], vec![1f32; 12]);
        let got = eval_for_test(&o, &[x, w], u64::MAX).unwrap();
        assert_eq!(got.shape(), &[0, 3, 3]);
        let (shape, v) = run(&o, &[1, 0, 4], Vec::<f32>::new(), &[3, 0, 2], Vec::new());
        assert_eq!((shape, v), (vec![1, 3, 3], vec![0f32; 9]));
    }
}
