//! Pad-1 and Pad-12: the data extended (or, in Pad-12, cropped) at both ends of each axis.
//!
//! Spec: <https://docs.openvino.ai/2026/documentation/openvino-ir-format/operation-sets/operation-specs/movement/pad-12.html>
//! (and `pad-1`).
//!
//! Ports: `arg` (any computed type, boolean included: the elements are copied bit for bit; the spec
//! lists the numeric types, and `string` for Pad-12, which ovir does not compute), `pads_begin` and
//! `pads_end` (1-D tensors of any integer types, one element per axis of `arg`), optional
//! `pad_value` (a scalar of `arg`'s type, default 0: all bits zero, `false` for boolean); one
//! output of `arg`'s type whose dim `k` is `pads_begin[k] + arg dim k + pads_end[k]`. Attribute
//! `pad_mode` (mandatory, any case, as OpenVINO reads it):
//!
//! * `constant`: the new elements are `pad_value`;
//! * `edge`: the new elements repeat the edge element of the axis (`np.pad(mode="edge")`); an
//!   axis with a pad > 0 must not be empty;
//! * `reflect`: the data mirrored about its edge element, which is not repeated
//!   (`np.pad(mode="reflect")`); each pad must be less than its dim (so a reflected axis is never
//!   empty, even with zero pads);
//! * `symmetric`: the data mirrored with the edge element repeated (`np.pad(mode="symmetric")`);
//!   each pad must be at most its dim.
//!
//! Pad-12 takes negative pads: they crop. As OpenVINO's reference computes it, the result is
//! the data padded by the positive pads and then cropped by the negative ones, the mirrors taken
//! about the data's own edges (the mode's rules above hold for the pads as written, against the
//! data's dims); cropping more than the padded axis holds is an error.
//!
//! Decisions: `pad_value` is read only in `constant` mode; in other modes it is ignored, its type
//! and shape unchecked (OpenVINO does the same; the spec says it should not be given). It must be a
//! scalar (rank 0), as OpenVINO requires. **A negative pad in Pad-1 is an error** (E507: the Pad-1
//! spec only pads, its pads "non-negative"; OpenVINO 2026 crops with them as in Pad-12). **An
//! output dim below 0 is an error** (E507): the Pad-12 spec writes `max(…, 0)`, but OpenVINO's
//! shape inference gives an undefined dim there and its reference wraps the size. Pads that do not
//! fit i64 (u64 above `i64::MAX`) are an error at execution.
//!
//! Inference: the pads' values or bounds give interval dims (data dim intervals shifted by the
//! pads'); a mode rule or a negative output dim is an error when it fails for every value the
//! intervals allow (exactly OpenVINO's checks on static dims and known pads). Unknown pads give
//! dynamic dims of the output's rank (Pad-1: at least the data dim); the rank comes from `arg`,
//! else from the pads' length. Bounds of shape values pass through `arg` and `pad_value`. Execution
//! checks the output against the memory budget before allocating it, then writes it in order: runs
//! of `pad_value` as fills, the innermost unpadded axes of the data as slices, and each repetition
//! of an edge block as a copy of the block already written.

use std::borrow::Cow;
use std::fmt;

use super::{Arity, AttrError, Attrs, EvalCx, EvalError, InferCx, Op, OpDef};
use crate::shape::dim::MAX_DIM;
use crate::shape::types::{Bounds, UNBOUNDED};
use crate::shape::{Dim, PartialShape, TensorType};
use crate::tensor::{Element, Tensor, TypeSet};

/// How the new elements are generated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Constant,
    Edge,
    Reflect,
    Symmetric,
}

impl Mode {
    fn parse(text: &str) -> Result<Mode, String> {
        [
            ("constant", Mode::Constant),
            ("edge", Mode::Edge),
            ("reflect", Mode::Reflect),
            ("symmetric", Mode::Symmetric),
        ]
        .into_iter()
        .find(|(name, _)| text.eq_ignore_ascii_case(name))
        .map(|(_, m)| m)
        .ok_or_else(|| "expected constant, edge, reflect or symmetric".into())
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Mode::Constant => "constant",
            Mode::Edge => "edge",
            Mode::Reflect => "reflect",
            Mode::Symmetric => "symmetric",
        })
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Pad {
    /// 1 or 12: Pad-1 takes no negative pads.
    pub version: u32,
    pub mode: Mode,
}

pub const PAD_1: OpDef = OpDef {
    name: "Pad",
    version: 1,
    inputs: Arity::range(3, 4),
    outputs: Arity::exactly(1),
    parse: parse_1,
};

pub const PAD_12: OpDef = OpDef {
    version: 12,
    parse: parse_12,
    ..PAD_1
};

fn parse_1(a: &Attrs) -> Result<Box<dyn Op>, Vec<AttrError>> {
    parse(a, 1)
}

fn parse_12(a: &Attrs) -> Result<Box<dyn Op>, Vec<AttrError>> {
    parse(a, 12)
}

fn parse(a: &Attrs, version: u32) -> Result<Box<dyn Op>, Vec<AttrError>> {
    let mode = a
        .parse_required("pad_mode", Mode::parse)
        .map_err(|e| vec![e])?;
    Ok(Box::new(Pad { version, mode }))
}

/// A pad's length from the pads' shape alone (no value or bounds) gives the output's rank up
/// to this length; a longer one is read as a dynamic rank, not allocated.
const MAX_UNKNOWN_RANK: u64 = 1024;

/// The lower end of an unknown pad (a stand-in for −∞ that sums of three cannot overflow).
const NEG_INF: i128 = -(1 << 100);

/// An interval of integers, `hi == None` unbounded: a data dim, a pad, an output dim.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Span {
    lo: i128,
    hi: Option<i128>,
}

impl Span {
    fn exact(v: i128) -> Span {
        Span { lo: v, hi: Some(v) }
    }

    fn of_dim(d: Dim) -> Span {
        Span {
            lo: d.min().into(),
            hi: d.max().map(i128::from),
        }
    }

    /// Element `k` of a pads input's bounds (or an unknown pad).
    fn of_pad(b: Option<&Bounds>, k: usize) -> Span {
        match b {
            Some(b) => Span {
                lo: b.lo[k].into(),
                hi: (b.hi[k] != UNBOUNDED).then_some(b.hi[k].into()),
            },
            None => Span {
                lo: NEG_INF,
                hi: None,
            },
        }
    }
}

impl fmt::Display for Span {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.hi {
            None if self.lo <= NEG_INF => f.write_str("unknown"),
            Some(h) if h == self.lo => write!(f, "{h}"),
            Some(h) if self.lo <= NEG_INF => write!(f, "at most {h}"),
            Some(h) => write!(f, "{}..{h}", self.lo),
            None => write!(f, "at least {}", self.lo),
        }
    }
}

impl Pad {
    /// Output dim `k` from data dim `dim` and the pads `begin` and `end`, as an interval; each
    /// rule is an error (port, reason) when it fails for every value the intervals allow.
    fn axis(&self, k: usize, dim_k: Dim, begin: Span, end: Span) -> Result<Span, (usize, String)> {
        let dim = Span::of_dim(dim_k);
        let pads = [(1, "pads_begin", begin), (2, "pads_end", end)];
        let mut los = [begin.lo, end.lo];
        for (i, &(port, name, p)) in pads.iter().enumerate() {
            if self.version == 1 {
                if let Some(h) = p.hi
                    && h < 0
                {
                    let is = if p.lo == h { "is" } else { "is at most" };
                    return Err((
                        port,
                        format!(
                            "{name} element {k} {is} {h}; Pad-1 takes no negative pads (Pad-12 crops with them)"
                        ),
                    ));
                }
                // The values that are valid.
                los[i] = p.lo.max(0);
            }
            let p = Span { lo: los[i], ..p };
            let fails = match (self.mode, dim.hi) {
                (Mode::Reflect, Some(d)) => p.lo >= d,
                (Mode::Symmetric, Some(d)) => p.lo > d,
                _ => false,
            };
            if fails {
                let rule = if self.mode == Mode::Reflect {
                    "less than"
                } else {
                    "at most"
                };
                return Err((
                    port,
                    format!(
                        "in {} mode {name} element {k} ({p}) must be {rule} data dim {k} ({dim_k})",
                        self.mode
                    ),
                ));
            }
        }
        if self.mode == Mode::Edge && dim.hi == Some(0) && (los[0] > 0 || los[1] > 0) {
            let port = if los[0] > 0 { 1 } else { 2 };
            return Err((
                port,
                format!(
                    "in edge mode data dim {k} is 0: it has no edge element to repeat (pads_begin {begin}, pads_end {end})"
                ),
            ));
        }
        let lo = dim.lo + los[0] + los[1];
        let hi = match (dim.hi, begin.hi, end.hi) {
            (Some(d), Some(b), Some(e)) => Some(d + b + e),
            _ => None,
        };
        if let Some(h) = hi
            && h < 0
        {
            let port = if begin.lo <= end.lo { 1 } else { 2 };
            return Err((
                port,
                format!(
                    "output dim {k} would be {}: data dim {k} ({dim_k}) + pads_begin ({begin}) + pads_end ({end}) crops more than the axis holds",
                    Span { lo, hi }
                ),
            ));
        }
        Ok(Span { lo: lo.max(0), hi })
    }

    /// The output dims of data of shape `data` padded by `begin` and `end` (lengths checked),
    /// each an exact count.
    fn out_shape(
        &self,
        data: &[usize],
        begin: &[i64],
        end: &[i64],
    ) -> Result<Vec<i128>, EvalError> {
        data.iter()
            .enumerate()
            .map(|(k, &d)| {
                let s = self
                    .axis(
                        k,
                        Dim::fixed(d as u64),
                        Span::exact(begin[k].into()),
                        Span::exact(end[k].into()),
                    )
                    .map_err(|(_, reason)| EvalError::Invalid(reason))?;
                Ok(s.lo)
            })
            .collect()
    }
}

/// The number of elements of integer input `t`, if its shape or bounds say.
fn pads_len(t: &TensorType, bounds: Option<&Bounds>) -> Option<u64> {
    if let Some(b) = bounds {
        return Some(b.len() as u64);
    }
    match t.shape.dims() {
        Some([d]) => d.get_static(),
        _ => None,
    }
}

/// How one output axis reads its input axis: a run of output positions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Run {
    /// `len` positions of the pad value (constant mode).
    Fill(usize),
    /// The input positions `start, start + 1, …` (`len` of them).
    Forward { start: usize, len: usize },
    /// The input positions `start, start − 1, …` (`len` of them: a mirror).
    Backward { start: usize, len: usize },
    /// The input position `at`, `len` times (edge mode).
    Repeat { at: usize, len: usize },
}

/// The runs of an output axis of `dim` input positions padded by `begin` and `end` (valid for
/// `mode`): output position `o` reads the input position `o − begin` if it lies in the data,
/// else the mode's image of it (the reflections are about the data's own edges). `None` if a
/// position falls outside the data (never, for valid pads).
fn runs(mode: Mode, dim: usize, begin: i64, end: i64) -> Option<Vec<Run>> {
    let d = dim as i128;
    let (lo, hi) = (-i128::from(begin), d + i128::from(end));
    let idx = |v: i128| usize::try_from(v).ok().filter(|&v| v < dim);
    let len = |a: i128, b: i128| usize::try_from(b - a).ok();
    let mut out = Vec::with_capacity(3);
    // Before the data: input positions lo..min(hi, 0).
    let (a, b) = (lo, hi.min(0));
    if a < b {
        let n = len(a, b)?;
        out.push(match mode {
            Mode::Constant => Run::Fill(n),
            Mode::Edge => Run::Repeat {
                at: idx(0)?,
                len: n,
            },
            // Position −p reads p (reflect) or p − 1 (symmetric); the last read is the least.
            Mode::Reflect => Run::Backward {
                start: idx(-a)?,
                len: n,
            },
            Mode::Symmetric => Run::Backward {
                start: idx(-a - 1)?,
                len: n,
            },
        });
    }
    let (a, b) = (lo.max(0), hi.min(d));
    if a < b {
        out.push(Run::Forward {
            start: idx(a)?,
            len: len(a, b)?,
        });
    }
    // After the data: input positions max(lo, d)..hi.
    let (a, b) = (lo.max(d), hi);
    if a < b {
        let n = len(a, b)?;
        out.push(match mode {
            Mode::Constant => Run::Fill(n),
            Mode::Edge => Run::Repeat {
                at: idx(d - 1)?,
                len: n,
            },
            // Position d + j reads d − 2 − j (reflect) or d − 1 − j (symmetric).
            Mode::Reflect => Run::Backward {
                start: idx(2 * d - a - 2)?,
                len: n,
            },
            Mode::Symmetric => Run::Backward {
                start: idx(2 * d - a - 1)?,
                len: n,
            },
        });
    }
    // Every position a Backward run reads is in the data.
    for r in &out {
        if let Run::Backward { start, len } = *r {
            start.checked_sub(len.checked_sub(1)?)?;
        }
    }
    Some(out)
}

/// An output axis the copy walks: its runs, the input stride of its positions and the output
/// elements per position.
struct Axis {
    runs: Vec<Run>,
    stride: usize,
    block: usize,
}

/// What the copy writes: the walked axes (each of at least 2 output positions, so there are
/// fewer than 64), the input offset the axes of one output position add, and the innermost
/// axes that are copied whole (`tail` input elements, contiguous, per position of the last
/// walked axis).
struct Plan {
    axes: Vec<Axis>,
    base: usize,
    tail: usize,
}

impl Plan {
    /// The plan for `data` padded to `out` (of `total` > 0 elements), or `Ok(None)` when every
    /// output element is the pad value. `None` for an inconsistent plan (never).
    fn new(
        mode: Mode,
        data: &[usize],
        out: &[usize],
        begin: &[i64],
        end: &[i64],
    ) -> Option<Option<Plan>> {
        let rank = data.len();
        // The innermost axes neither padded nor cropped.
        let first_tail = (0..rank)
            .rev()
            .take_while(|&k| begin[k] == 0 && end[k] == 0)
            .last()
            .unwrap_or(rank);
        let tail = data[first_tail..]
            .iter()
            .try_fold(1usize, |n, &d| n.checked_mul(d))?;
        let mut stride = tail;
        let mut block = out[first_tail..]
            .iter()
            .try_fold(1usize, |n, &d| n.checked_mul(d))?;
        let mut axes = Vec::new();
        let mut base = 0usize;
        for k in (0..first_tail).rev() {
            let runs = runs(mode, data[k], begin[k], end[k])?;
            if out[k] == 1 {
                // One position: an input offset, or the pad value everywhere.
                match runs.first()? {
                    Run::Fill(_) => return Some(None),
                    Run::Forward { start: at, .. }
                    | Run::Backward { start: at, .. }
                    | Run::Repeat { at, .. } => {
                        base = base.checked_add(at.checked_mul(stride)?)?;
                    }
                }
            } else {
                axes.push(Axis {
                    runs,
                    stride,
                    block,
                });
            }
            stride = stride.checked_mul(data[k])?;
            block = block.checked_mul(out[k])?;
        }
        axes.reverse();
        Some(Some(Plan { axes, base, tail }))
    }
}

/// Appends the output block of walked axis `k` at input offset `at`. `None` if an index leaves
/// `src` (never, for a consistent plan).
fn write<T: Copy>(
    out: &mut Vec<T>,
    src: &[T],
    pad: T,
    plan: &Plan,
    k: usize,
    at: usize,
) -> Option<()> {
    let Some(axis) = plan.axes.get(k) else {
        out.extend_from_slice(src.get(at..at.checked_add(plan.tail)?)?);
        return Some(());
    };
    let last = k + 1 == plan.axes.len();
    let offset = |i: usize| at.checked_add(i.checked_mul(axis.stride)?);
    for &run in &axis.runs {
        match run {
            Run::Fill(len) => out.resize(out.len() + len.checked_mul(axis.block)?, pad),
            // Consecutive positions of contiguous blocks: one slice.
            Run::Forward { start, len } if last && axis.stride == plan.tail => {
                let a = offset(start)?;
                out.extend_from_slice(src.get(a..a.checked_add(len.checked_mul(plan.tail)?)?)?);
            }
            Run::Backward { start, len } if last && axis.stride == 1 && plan.tail == 1 => {
                let a = offset(start.checked_sub(len.checked_sub(1)?)?)?;
                out.extend(src.get(a..a.checked_add(len)?)?.iter().rev());
            }
            Run::Forward { start, len } => {
                for i in start..start.checked_add(len)? {
                    write(out, src, pad, plan, k + 1, offset(i)?)?;
                }
            }
            Run::Backward { start, len } => {
                for i in (start.checked_sub(len.checked_sub(1)?)?..=start).rev() {
                    write(out, src, pad, plan, k + 1, offset(i)?)?;
                }
            }
            Run::Repeat { at: i, len } => {
                let first = out.len();
                write(out, src, pad, plan, k + 1, offset(i)?)?;
                let n = out.len() - first;
                let mut have = 1;
                while have < len {
                    let more = have.min(len - have);
                    out.extend_from_within(first..first + more * n);
                    have += more;
                }
            }
        }
    }
    Some(())
}

/// `data` padded to `out` (`total` elements, within the budget) with `pad_value` (a scalar of
/// the data's type, or zero).
fn pad<T: Element>(
    mode: Mode,
    data: &Tensor,
    pad_value: Option<&Tensor>,
    begin: &[i64],
    end: &[i64],
    out: &[usize],
    total: usize,
) -> Result<Tensor, EvalError> {
    let internal = EvalError::Internal("Pad's copy");
    let pad = match pad_value {
        Some(t) => T::view(t)
            .and_then(|v| v.iter().next().copied())
            .ok_or(EvalError::Internal("Pad's pad_value"))?,
        None => T::default(),
    };
    let mut v: Vec<T> = Vec::new();
    if total > 0 {
        match Plan::new(mode, data.shape(), out, begin, end).ok_or(internal.clone())? {
            None => v = vec![pad; total],
            Some(plan) => {
                let src = crate::ops::kernel::contiguous::<T>(data)
                    .ok_or(EvalError::Internal("Pad's data type"))?;
                v.reserve_exact(total);
                write(&mut v, &src, pad, &plan, 0, plan.base).ok_or(internal.clone())?;
            }
        }
        if v.len() != total {
            return Err(internal);
        }
    }
    ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(out), v)
        .map(T::wrap)
        .map_err(|_| EvalError::Invalid(format!("the output shape {out:?} is too large")))
}

/// The values of 1-D integer input `i` (`what` names it in errors).
fn pads_1d(cx: &EvalCx<'_>, i: usize, what: &str) -> Result<Vec<i64>, EvalError> {
    let rank = cx.value(i).shape().len();
    if rank != 1 {
        return Err(EvalError::Invalid(format!(
            "{what} must be 1-D, not rank {rank}"
        )));
    }
    crate::shape::types::int_values(&*cx.tensor(i)?).ok_or_else(|| {
        EvalError::Invalid(format!(
            "{what} holds a value that is not an integer of 64 bits"
        ))
    })
}

impl Op for Pad {
    fn def(&self) -> Option<&'static OpDef> {
        Some(if self.version == 1 { &PAD_1 } else { &PAD_12 })
    }

    fn infer(&self, cx: &mut InferCx<'_>) -> Option<Vec<TensorType>> {
        cx.require(1..3, TypeSet::INT)?;
        let arg = cx.input(0);
        let mut ty = arg.element_type;
        if self.mode == Mode::Constant && cx.has_input(3) {
            let value = cx.input(3);
            ty = super::logic::same_type(cx, ty, value.element_type)?;
            if let Some(r) = value.shape.rank()
                && r != 0
            {
                return cx.invalid(3, format!("pad_value must be a scalar, not rank {r}"));
            }
        }
        for (i, name) in [(1, "pads_begin"), (2, "pads_end")] {
            if let Some(r) = cx.input(i).shape.rank()
                && r != 1
            {
                return cx.invalid(i, format!("{name} must be 1-D, not rank {r}"));
            }
        }
        let (tb, te) = (cx.input(1), cx.input(2));
        let (begin, end): (Option<Cow<Bounds>>, Option<Cow<Bounds>>) =
            (tb.int_bounds(), te.int_bounds());
        let lens = [pads_len(tb, begin.as_deref()), pads_len(te, end.as_deref())];
        // The output's rank: the data's, else the length of pads_begin or pads_end (if it is
        // small or known element by element), and what it was read from.
        let (rank, from) = match arg.shape.rank() {
            Some(r) => (r as u64, "arg has rank".to_owned()),
            None => {
                let small =
                    |i: usize, known: bool| lens[i].filter(|&n| known || n <= MAX_UNKNOWN_RANK);
                match small(0, begin.is_some())
                    .map(|n| (n, "pads_begin"))
                    .or_else(|| small(1, end.is_some()).map(|n| (n, "pads_end")))
                {
                    Some((n, name)) => (n, format!("{name} has {n} elements, so arg has rank")),
                    None => {
                        return Some(vec![TensorType::new(ty, PartialShape::dynamic_rank())]);
                    }
                }
            }
        };
        for (i, name) in [(1, "pads_begin"), (2, "pads_end")] {
            if let Some(n) = lens[i - 1]
                && n != rank
            {
                return cx.invalid(
                    i,
                    format!(
                        "{name} has {n} elements, but {from} {rank}: Pad takes one pad per axis"
                    ),
                );
            }
        }
        let rank = rank as usize;
        let dims: Cow<[Dim]> = match arg.shape.dims() {
            Some(d) => Cow::Borrowed(d),
            None => Cow::Owned(vec![Dim::DYNAMIC; rank]),
        };
        let mut out = Vec::with_capacity(rank);
        for (k, &d) in dims.iter().enumerate() {
            let b = Span::of_pad(begin.as_deref(), k);
            let e = Span::of_pad(end.as_deref(), k);
            match self.axis(k, d, b, e) {
                Ok(s) => {
                    let lo = s.lo.min(MAX_DIM.into()) as u64;
                    let hi = s.hi.filter(|&h| h <= MAX_DIM.into()).map(|h| h as u64);
                    out.push(Dim::interval(lo, hi).unwrap_or(Dim::DYNAMIC));
                }
                Err((port, reason)) => return cx.invalid(port, reason),
            }
        }
        Some(vec![TensorType::new(ty, PartialShape::new(out))])
    }

    fn eval(&self, cx: &EvalCx<'_>) -> Result<Vec<Tensor>, EvalError> {
        let data = cx.tensor(0)?;
        let ty = data.element_type();
        let dshape = data.shape();
        let rank = dshape.len();
        let begin = pads_1d(cx, 1, "pads_begin")?;
        let end = pads_1d(cx, 2, "pads_end")?;
        for (name, p) in [("pads_begin", &begin), ("pads_end", &end)] {
            if p.len() != rank {
                return Err(EvalError::Invalid(format!(
                    "{name} has {} elements, but arg has rank {rank}: Pad takes one pad per axis",
                    p.len()
                )));
            }
        }
        let pad_value = if self.mode == Mode::Constant && cx.len() > 3 {
            let t = cx.tensor(3)?;
            if t.element_type() != ty {
                return Err(EvalError::Types(ty, t.element_type()));
            }
            if !t.shape().is_empty() {
                return Err(EvalError::Invalid(format!(
                    "pad_value must be a scalar, not rank {}",
                    t.shape().len()
                )));
            }
            Some(t)
        } else {
            None
        };
        let dims = self.out_shape(dshape, &begin, &end)?;
        let out: Option<Vec<usize>> = dims.iter().map(|&d| usize::try_from(d).ok()).collect();
        let total = out.as_deref().and_then(super::broadcast::elements);
        let (Some(out), Some(total)) = (out, total) else {
            // More elements than memory can address: over any budget.
            cx.reserve(ty, usize::MAX)?;
            return Err(EvalError::Invalid(format!(
                "padding {dshape:?} to {dims:?} gives more elements than memory can address"
            )));
        };
        cx.reserve(ty, total)?;
        let mode = self.mode;
        let value = pad_value.as_deref();
        crate::dispatch!(any: ty, T => pad::<T>(mode, &data, value, &begin, &end, &out, total), _ => Err(EvalError::UnsupportedType {
            op: "Pad".into(),
            ty,
        }))
        .map(|t| vec![t])
    }

    fn moves(&self, input: usize) -> bool {
        input == 0 || input == 3
    }
}

#[cfg(test)]
mod tests {

    use half::{bf16, f16};

    use super::*;
    use crate::dtype::ElementType;

    /// A table row: mode, data shape, pads_begin, pads_end, output shape, output (the data is
    /// `1..=n` as i32).
    type Row<'a> = (
        Mode,
        &'a [usize],
        &'a [i64],
        &'a [i64],
        &'a [usize],
        &'a [i32],
    );

    /// A row of tensors: mode, data, pads_begin, pads_end, output.
    type Case<'a> = (Mode, Tensor, &'a [i64], &'a [i64], Tensor);

    fn t<T: Element>(shape: &[usize], v: Vec<T>) -> Tensor {
        crate::ops::context::tensor_for_test(shape, v)
    }

    fn ints(v: &[i64]) -> Tensor {
        t(&[v.len()], v.to_vec())
    }

    fn iota(shape: &[usize]) -> Tensor {
        let n: usize = shape.iter().product();
        t(shape, (1..=n as i32).collect())
    }

    fn op(version: u32, attrs: &[(&str, &str)]) -> Result<Box<dyn Op>, Vec<AttrError>> {
        let data = crate::ops::context::attrs_for_test(attrs);
        let a = Attrs::new(Some(&data));
        if version == 1 {
            parse_1(&a)
        } else {
            parse_12(&a)
        }
    }

    fn run(p: &Pad, inputs: &[Tensor], limit: u64) -> Result<Tensor, EvalError> {
        crate::ops::context::eval_for_test(p, inputs, limit)
    }

    fn pad12(mode: Mode) -> Pad {
        Pad { version: 12, mode }
    }

    /// A tensor as its type, shape and bytes (NaNs and −0 compared bit for bit).
    fn bits(t: &Tensor) -> (ElementType, Vec<usize>, Vec<u8>) {
        (t.element_type(), t.shape().to_vec(), t.to_le_bytes())
    }

    /// Positive pads, every mode on 1-D, 2-D and 3-D data: numpy's `np.pad` (the 2-D rows are
    /// the spec's example).
    const POSITIVE: &[Row] = &[
        (
            Mode::Constant,
            &[5],
            &[2],
            &[3],
            &[10],
            &[0, 0, 1, 2, 3, 4, 5, 0, 0, 0],
        ),
        (
            Mode::Constant,
            &[3, 4],
            &[0, 1],
            &[2, 3],
            &[5, 8],
            &[
                0, 1, 2, 3, 4, 0, 0, 0, 0, 5, 6, 7, 8, 0, 0, 0, 0, 9, 10, 11, 12, 0, 0, 0, 0, 0, 0,
                0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
            ],
        ),
        (
            Mode::Constant,
            &[2, 3, 2],
            &[1, 0, 1],
            &[1, 2, 0],
            &[4, 5, 3],
            &[
                0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 0, 3, 4, 0, 5, 6, 0, 0, 0, 0,
                0, 0, 0, 7, 8, 0, 9, 10, 0, 11, 12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                0, 0, 0, 0, 0,
            ],
        ),
        (
            Mode::Edge,
            &[5],
            &[2],
            &[3],
            &[10],
            &[1, 1, 1, 2, 3, 4, 5, 5, 5, 5],
        ),
        (
            Mode::Edge,
            &[3, 4],
            &[0, 1],
            &[2, 3],
            &[5, 8],
            &[
                1, 1, 2, 3, 4, 4, 4, 4, 5, 5, 6, 7, 8, 8, 8, 8, 9, 9, 10, 11, 12, 12, 12, 12, 9, 9,
                10, 11, 12, 12, 12, 12, 9, 9, 10, 11, 12, 12, 12, 12,
            ],
        ),
        (
            Mode::Edge,
            &[2, 3, 2],
            &[1, 0, 1],
            &[1, 2, 0],
            &[4, 5, 3],
            &[
                1, 1, 2, 3, 3, 4, 5, 5, 6, 5, 5, 6, 5, 5, 6, 1, 1, 2, 3, 3, 4, 5, 5, 6, 5, 5, 6, 5,
                5, 6, 7, 7, 8, 9, 9, 10, 11, 11, 12, 11, 11, 12, 11, 11, 12, 7, 7, 8, 9, 9, 10, 11,
                11, 12, 11, 11, 12, 11, 11, 12,
            ],
        ),
        (
            Mode::Reflect,
            &[5],
            &[2],
            &[3],
            &[10],
            &[3, 2, 1, 2, 3, 4, 5, 4, 3, 2],
        ),
        (
            Mode::Reflect,
            &[3, 4],
            &[0, 1],
            &[2, 3],
            &[5, 8],
            &[
                2, 1, 2, 3, 4, 3, 2, 1, 6, 5, 6, 7, 8, 7, 6, 5, 10, 9, 10, 11, 12, 11, 10, 9, 6, 5,
                6, 7, 8, 7, 6, 5, 2, 1, 2, 3, 4, 3, 2, 1,
            ],
        ),
        (
            Mode::Reflect,
            &[2, 3, 2],
            &[1, 0, 1],
            &[1, 2, 0],
            &[4, 5, 3],
            &[
                8, 7, 8, 10, 9, 10, 12, 11, 12, 10, 9, 10, 8, 7, 8, 2, 1, 2, 4, 3, 4, 6, 5, 6, 4,
                3, 4, 2, 1, 2, 8, 7, 8, 10, 9, 10, 12, 11, 12, 10, 9, 10, 8, 7, 8, 2, 1, 2, 4, 3,
                4, 6, 5, 6, 4, 3, 4, 2, 1, 2,
            ],
        ),
        (
            Mode::Symmetric,
            &[5],
            &[2],
            &[3],
            &[10],
            &[2, 1, 1, 2, 3, 4, 5, 5, 4, 3],
        ),
        (
            Mode::Symmetric,
            &[3, 4],
            &[0, 1],
            &[2, 3],
            &[5, 8],
            &[
                1, 1, 2, 3, 4, 4, 3, 2, 5, 5, 6, 7, 8, 8, 7, 6, 9, 9, 10, 11, 12, 12, 11, 10, 9, 9,
                10, 11, 12, 12, 11, 10, 5, 5, 6, 7, 8, 8, 7, 6,
            ],
        ),
        (
            Mode::Symmetric,
            &[2, 3, 2],
            &[1, 0, 1],
            &[1, 2, 0],
            &[4, 5, 3],
            &[
                1, 1, 2, 3, 3, 4, 5, 5, 6, 5, 5, 6, 3, 3, 4, 1, 1, 2, 3, 3, 4, 5, 5, 6, 5, 5, 6, 3,
                3, 4, 7, 7, 8, 9, 9, 10, 11, 11, 12, 11, 11, 12, 9, 9, 10, 7, 7, 8, 9, 9, 10, 11,
                11, 12, 11, 11, 12, 9, 9, 10,
            ],
        ),
    ];

    /// Pad-12's negative pads, every mode: numpy's `np.pad` by the positive pads, then cropped
    /// by the negative ones (the 2-D rows are the spec's negative and mixed examples).
    const NEGATIVE: &[Row] = &[
        (Mode::Constant, &[5], &[-2], &[3], &[6], &[3, 4, 5, 0, 0, 0]),
        (Mode::Constant, &[5], &[2], &[-4], &[3], &[0, 0, 1]),
        (Mode::Constant, &[5], &[-6], &[3], &[2], &[0, 0]),
        (Mode::Constant, &[5], &[3], &[-6], &[2], &[0, 0]),
        (
            Mode::Constant,
            &[3, 4],
            &[2, -1],
            &[-1, 3],
            &[4, 6],
            &[
                0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 3, 4, 0, 0, 0, 6, 7, 8, 0, 0, 0,
            ],
        ),
        (
            Mode::Constant,
            &[3, 4],
            &[-1, -1],
            &[-1, -1],
            &[1, 2],
            &[6, 7],
        ),
        (
            Mode::Constant,
            &[2, 3, 4],
            &[-1, 1, -2],
            &[0, -2, 1],
            &[1, 2, 3],
            &[0, 0, 0, 15, 16, 0],
        ),
        (Mode::Edge, &[5], &[-2], &[3], &[6], &[3, 4, 5, 5, 5, 5]),
        (Mode::Edge, &[5], &[2], &[-4], &[3], &[1, 1, 1]),
        (Mode::Edge, &[5], &[-6], &[3], &[2], &[5, 5]),
        (Mode::Edge, &[5], &[3], &[-6], &[2], &[1, 1]),
        (
            Mode::Edge,
            &[3, 4],
            &[2, -1],
            &[-1, 3],
            &[4, 6],
            &[
                2, 3, 4, 4, 4, 4, 2, 3, 4, 4, 4, 4, 2, 3, 4, 4, 4, 4, 6, 7, 8, 8, 8, 8,
            ],
        ),
        (Mode::Edge, &[3, 4], &[-1, -1], &[-1, -1], &[1, 2], &[6, 7]),
        (
            Mode::Edge,
            &[2, 3, 4],
            &[-1, 1, -2],
            &[0, -2, 1],
            &[1, 2, 3],
            &[15, 16, 16, 15, 16, 16],
        ),
        (Mode::Reflect, &[5], &[-2], &[3], &[6], &[3, 4, 5, 4, 3, 2]),
        (Mode::Reflect, &[5], &[2], &[-4], &[3], &[3, 2, 1]),
        (Mode::Reflect, &[5], &[-6], &[3], &[2], &[3, 2]),
        (Mode::Reflect, &[5], &[3], &[-6], &[2], &[4, 3]),
        (
            Mode::Reflect,
            &[3, 4],
            &[2, -1],
            &[-1, 3],
            &[4, 6],
            &[
                10, 11, 12, 11, 10, 9, 6, 7, 8, 7, 6, 5, 2, 3, 4, 3, 2, 1, 6, 7, 8, 7, 6, 5,
            ],
        ),
        (
            Mode::Reflect,
            &[3, 4],
            &[-1, -1],
            &[-1, -1],
            &[1, 2],
            &[6, 7],
        ),
        (
            Mode::Reflect,
            &[2, 3, 4],
            &[-1, 1, -2],
            &[0, -2, 1],
            &[1, 2, 3],
            &[19, 20, 19, 15, 16, 15],
        ),
        (
            Mode::Symmetric,
            &[5],
            &[-2],
            &[3],
            &[6],
            &[3, 4, 5, 5, 4, 3],
        ),
        (Mode::Symmetric, &[5], &[2], &[-4], &[3], &[2, 1, 1]),
        (Mode::Symmetric, &[5], &[-6], &[3], &[2], &[4, 3]),
        (Mode::Symmetric, &[5], &[3], &[-6], &[2], &[3, 2]),
        (
            Mode::Symmetric,
            &[3, 4],
            &[2, -1],
            &[-1, 3],
            &[4, 6],
            &[
                6, 7, 8, 8, 7, 6, 2, 3, 4, 4, 3, 2, 2, 3, 4, 4, 3, 2, 6, 7, 8, 8, 7, 6,
            ],
        ),
        (
            Mode::Symmetric,
            &[3, 4],
            &[-1, -1],
            &[-1, -1],
            &[1, 2],
            &[6, 7],
        ),
        (
            Mode::Symmetric,
            &[2, 3, 4],
            &[-1, 1, -2],
            &[0, -2, 1],
            &[1, 2, 3],
            &[15, 16, 16, 15, 16, 16],
        ),
    ];

    #[test]
    fn eval_table() {
        let check = |version: u32, rows: &[Row]| {
            for (k, &(mode, shape, begin, end, out, want)) in rows.iter().enumerate() {
                let p = Pad { version, mode };
                let got = run(&p, &[iota(shape), ints(begin), ints(end)], 1 << 20)
                    .unwrap_or_else(|e| panic!("Pad-{version} row {k} ({mode}): {e}"));
                assert_eq!(
                    bits(&got),
                    bits(&t(out, want.to_vec())),
                    "Pad-{version} row {k} ({mode} {shape:?} {begin:?} {end:?})"
                );
            }
        };
        check(1, POSITIVE);
        check(12, POSITIVE);
        check(12, NEGATIVE);
        // Pad-1 refuses every negative row.
        for &(mode, shape, begin, end, _, _) in NEGATIVE {
            let got = run(
                &Pad { version: 1, mode },
                &[iota(shape), ints(begin), ints(end)],
                1 << 20,
            );
            assert!(
                matches!(&got, Err(EvalError::Invalid(m)) if m.contains("Pad-1 takes no negative pads")),
                "{got:?}"
            );
        }
    }

    /// OpenVINO's reference (`reference/pad.cpp`): output coordinate `o` reads input
    /// coordinate `o − begin`, clamped (edge) or mirrored once (reflect, symmetric), or the pad
    /// value (constant). `None` where the mode's rules refuse the pads.
    fn reference(mode: Mode, shape: &[usize], begin: &[i64], end: &[i64]) -> Option<Tensor> {
        let data = ndarray::ArrayD::from_shape_vec(
            ndarray::IxDyn(shape),
            (1..=shape.iter().product::<usize>() as i32).collect(),
        )
        .unwrap();
        let mut out = Vec::new();
        for k in 0..shape.len() {
            let (d, b, e) = (shape[k] as i64, begin[k], end[k]);
            let ok = match mode {
                Mode::Constant => true,
                Mode::Edge => d >= 1 || (b <= 0 && e <= 0),
                Mode::Reflect => b < d && e < d,
                Mode::Symmetric => b <= d && e <= d,
            };
            if !ok || d + b + e < 0 {
                return None;
            }
            out.push((d + b + e) as usize);
        }
        let corr = i64::from(mode == Mode::Symmetric);
        let v = ndarray::ArrayD::from_shape_fn(ndarray::IxDyn(&out), |idx| {
            let mut src = Vec::new();
            for k in 0..shape.len() {
                let d = shape[k] as i64;
                let cc = idx[k] as i64 - begin[k];
                let c = match mode {
                    Mode::Constant if (0..d).contains(&cc) => cc,
                    Mode::Constant => return -1,
                    Mode::Edge => cc.clamp(0, d - 1),
                    Mode::Reflect | Mode::Symmetric => {
                        let front = if cc >= 0 { cc } else { -cc - corr };
                        if front < d {
                            front
                        } else {
                            2 * d - front - 2 + corr
                        }
                    }
                };
                src.push(c as usize);
            }
            data[ndarray::IxDyn(&src)]
        });
        Some(Tensor::from(v))
    }

    /// Every mode against the reference on pseudo-random pads in −3..=3, on shapes whose axes
    /// coalesce and fold differently (dims of 1, unpadded inner axes, one-position axes).
    #[test]
    fn pads_match_openvinos_reference() {
        let shapes: [&[usize]; 8] = [
            &[5],
            &[1],
            &[4, 1],
            &[2, 3],
            &[3, 1, 2],
            &[1, 2, 1, 3],
            &[2, 2, 2, 2],
            &[0, 3],
        ];
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % 7) as i64 - 3
        };
        let (mut valid, mut invalid) = (0, 0);
        for shape in shapes {
            for mode in [Mode::Constant, Mode::Edge, Mode::Reflect, Mode::Symmetric] {
                for case in 0..150 {
                    let mut begin: Vec<i64> = (0..shape.len()).map(|_| next()).collect();
                    let mut end: Vec<i64> = (0..shape.len()).map(|_| next()).collect();
                    // Some axes unpadded, so that inner axes are copied whole.
                    if case % 3 == 0 {
                        *begin.last_mut().unwrap() = 0;
                        *end.last_mut().unwrap() = 0;
                    }
                    let inputs = [iota(shape), ints(&begin), ints(&end), t(&[], vec![-1i32])];
                    let got = run(&pad12(mode), &inputs, 1 << 20);
                    let what = format!("{mode} {shape:?} {begin:?} {end:?}");
                    match reference(mode, shape, &begin, &end) {
                        Some(want) => {
                            valid += 1;
                            assert_eq!(got.as_ref().map(bits), Ok(bits(&want)), "{what}");
                        }
                        None => {
                            invalid += 1;
                            assert!(matches!(got, Err(EvalError::Invalid(_))), "{what}: {got:?}");
                        }
                    }
                }
            }
        }
        assert!(
            valid > 1500 && invalid > 500,
            "{valid} valid, {invalid} invalid"
        );
    }

    /// `pad_value` bit for bit in each type (NaN payloads, −0), zero when absent, and ignored
    /// (even of another type) outside constant mode.
    #[test]
    fn pad_values() {
        let nan16 = f16::from_bits(0x7e01);
        let b = || ints(&[1]);
        let e = || ints(&[1]);
        let cases: Vec<(Mode, Vec<Tensor>, Tensor)> = vec![
            (
                Mode::Constant,
                vec![t(&[2], vec![1f32, 2.]), b(), e(), t(&[], vec![-0f32])],
                t(&[4], vec![-0f32, 1., 2., -0.]),
            ),
            (
                Mode::Constant,
                vec![
                    t(&[2], vec![1f32, 2.]),
                    b(),
                    e(),
                    t(&[], vec![f32::from_bits(0x7fc0_0123)]),
                ],
                t(
                    &[4],
                    vec![
                        f32::from_bits(0x7fc0_0123),
                        1.,
                        2.,
                        f32::from_bits(0x7fc0_0123),
                    ],
                ),
            ),
            (
                Mode::Constant,
                vec![t(&[2], vec![1i32, 2]), b(), e(), t(&[], vec![-7i32])],
                t(&[4], vec![-7i32, 1, 2, -7]),
            ),
            (
                Mode::Constant,
                vec![t(&[2], vec![false, false]), b(), e(), t(&[], vec![true])],
                t(&[4], vec![true, false, false, true]),
            ),
            (
                Mode::Constant,
                vec![t(&[1], vec![f16::ONE]), b(), e(), t(&[], vec![nan16])],
                t(&[3], vec![nan16, f16::ONE, nan16]),
            ),
            (
                Mode::Constant,
                vec![
                    t(&[1], vec![bf16::ONE]),
                    b(),
                    e(),
                    t(&[], vec![bf16::NEG_ZERO]),
                ],
                t(&[3], vec![bf16::NEG_ZERO, bf16::ONE, bf16::NEG_ZERO]),
            ),
            (
                Mode::Constant,
                vec![
                    t(&[1], vec![u64::MAX]),
                    b(),
                    e(),
                    t(&[], vec![u64::MAX - 1]),
                ],
                t(&[3], vec![u64::MAX - 1, u64::MAX, u64::MAX - 1]),
            ),
            // No pad_value: zero.
            (
                Mode::Constant,
                vec![t(&[2], vec![true, true]), b(), e()],
                t(&[4], vec![false, true, true, false]),
            ),
            (
                Mode::Constant,
                vec![t(&[1], vec![nan16]), b(), e()],
                t(&[3], vec![f16::ZERO, nan16, f16::ZERO]),
            ),
            (
                Mode::Constant,
                vec![t(&[1], vec![-1i8]), b(), e()],
                t(&[3], vec![0i8, -1, 0]),
            ),
            // Other modes ignore pad_value, whatever its type and shape.
            (
                Mode::Edge,
                vec![
                    t(&[2], vec![nan16, f16::ONE]),
                    b(),
                    e(),
                    t(&[2], vec![7i64, 8]),
                ],
                t(&[4], vec![nan16, nan16, f16::ONE, f16::ONE]),
            ),
            (
                Mode::Reflect,
                vec![t(&[2], vec![1u8, 2]), b(), e(), t(&[], vec![9u8])],
                t(&[4], vec![2u8, 1, 2, 1]),
            ),
            (
                Mode::Symmetric,
                vec![t(&[2], vec![-0f64, 1.]), b(), e(), t(&[], vec![9f64])],
                t(&[4], vec![-0f64, -0., 1., 1.]),
            ),
        ];
        for (k, (mode, inputs, want)) in cases.iter().enumerate() {
            for version in [1, 12] {
                let p = Pad {
                    version,
                    mode: *mode,
                };
                let got = run(&p, inputs, 1 << 20)
                    .unwrap_or_else(|e| panic!("case {k} (Pad-{version}): {e}"));
                assert_eq!(bits(&got), bits(want), "case {k} (Pad-{version})");
            }
        }
    }

    /// Empty axes, a scalar, pads of zero.
    #[test]
    fn zero_size_dims() {
        let cases: Vec<Case> = vec![
            (
                Mode::Constant,
                t(&[0], Vec::<f32>::new()),
                &[2],
                &[1],
                t(&[3], vec![0f32; 3]),
            ),
            (
                Mode::Constant,
                t(&[2, 0], Vec::<i32>::new()),
                &[1, 0],
                &[0, 2],
                t(&[3, 2], vec![0i32; 6]),
            ),
            (
                Mode::Constant,
                t(&[0, 3], Vec::<u8>::new()),
                &[0, 1],
                &[0, 1],
                t(&[0, 5], Vec::<u8>::new()),
            ),
            (
                Mode::Symmetric,
                t(&[0, 3], Vec::<u8>::new()),
                &[0, 1],
                &[0, 1],
                t(&[0, 5], Vec::<u8>::new()),
            ),
            (
                Mode::Edge,
                t(&[2, 0], Vec::<i64>::new()),
                &[1, 0],
                &[1, 0],
                t(&[4, 0], Vec::<i64>::new()),
            ),
            (
                Mode::Edge,
                t(&[0], Vec::<i64>::new()),
                &[0],
                &[0],
                t(&[0], Vec::<i64>::new()),
            ),
            // Cropped to nothing (Pad-12).
            (
                Mode::Reflect,
                t(&[3], vec![1i16, 2, 3]),
                &[-2],
                &[-1],
                t(&[0], Vec::<i16>::new()),
            ),
            (
                Mode::Constant,
                t(&[2, 2], vec![1i16, 2, 3, 4]),
                &[0, -1],
                &[0, -1],
                t(&[2, 0], Vec::<i16>::new()),
            ),
            (Mode::Edge, t(&[], vec![5u32]), &[], &[], t(&[], vec![5u32])),
            (
                Mode::Reflect,
                t(&[2, 3], vec![1u16, 2, 3, 4, 5, 6]),
                &[0, 0],
                &[0, 0],
                t(&[2, 3], vec![1u16, 2, 3, 4, 5, 6]),
            ),
        ];
        for (k, (mode, data, begin, end, want)) in cases.into_iter().enumerate() {
            let got = run(&pad12(mode), &[data, ints(begin), ints(end)], 1 << 20)
                .unwrap_or_else(|e| panic!("case {k}: {e}"));
            assert_eq!(bits(&got), bits(&want), "case {k}");
        }
    }

    #[test]
    fn eval_errors() {
        let f = |n: usize| iota(&[n]);
        let cases: Vec<(u32, Mode, Vec<Tensor>, &str)> = vec![
            (
                12,
                Mode::Reflect,
                vec![f(3), ints(&[3]), ints(&[0])],
                "in reflect mode pads_begin element 0 (3) must be less than data dim 0 (3)",
            ),
            (
                1,
                Mode::Reflect,
                vec![f(3), ints(&[0]), ints(&[5])],
                "in reflect mode pads_end element 0 (5) must be less than data dim 0 (3)",
            ),
            // A reflected axis is never empty, even unpadded (the spec's and OpenVINO's rule).
            (
                12,
                Mode::Reflect,
                vec![f(0), ints(&[0]), ints(&[0])],
                "pads_begin element 0 (0) must be less than data dim 0 (0)",
            ),
            (
                12,
                Mode::Symmetric,
                vec![f(3), ints(&[4]), ints(&[0])],
                "in symmetric mode pads_begin element 0 (4) must be at most data dim 0 (3)",
            ),
            (
                12,
                Mode::Edge,
                vec![t(&[2, 0], Vec::<i32>::new()), ints(&[0, 0]), ints(&[0, 1])],
                "in edge mode data dim 1 is 0: it has no edge element to repeat",
            ),
            (
                1,
                Mode::Constant,
                vec![f(3), ints(&[1]), ints(&[-1])],
                "pads_end element 0 is -1; Pad-1 takes no negative pads",
            ),
            (
                12,
                Mode::Constant,
                vec![f(3), ints(&[-2]), ints(&[-2])],
                "output dim 0 would be -1: data dim 0 (3) + pads_begin (-2) + pads_end (-2)",
            ),
            (
                12,
                Mode::Constant,
                vec![f(3), ints(&[i64::MIN]), ints(&[i64::MIN])],
                "output dim 0 would be",
            ),
            (
                12,
                Mode::Constant,
                vec![f(3), ints(&[1, 1]), ints(&[1])],
                "pads_begin has 2 elements, but arg has rank 1",
            ),
            (
                12,
                Mode::Constant,
                vec![f(3), ints(&[1]), ints(&[])],
                "pads_end has 0 elements, but arg has rank 1",
            ),
            (
                12,
                Mode::Constant,
                vec![f(3), t(&[1, 1], vec![1i64]), ints(&[1])],
                "pads_begin must be 1-D, not rank 2",
            ),
            (
                12,
                Mode::Constant,
                vec![f(3), ints(&[1]), t(&[], vec![1i32])],
                "pads_end must be 1-D, not rank 0",
            ),
            (
                12,
                Mode::Constant,
                vec![f(3), t(&[1], vec![u64::MAX]), ints(&[1])],
                "pads_begin holds a value that is not an integer of 64 bits",
            ),
            (
                12,
                Mode::Constant,
                vec![f(3), ints(&[1]), ints(&[1]), t(&[1], vec![0i32])],
                "pad_value must be a scalar, not rank 1",
            ),
        ];
        for (k, (version, mode, inputs, want)) in cases.iter().enumerate() {
            match run(
                &Pad {
                    version: *version,
                    mode: *mode,
                },
                inputs,
                1 << 20,
            ) {
                Err(EvalError::Invalid(m)) => assert!(m.contains(want), "case {k}: {m}"),
                other => panic!("case {k}: expected {want:?}, got {other:?}"),
            }
        }
        let got = run(
            &pad12(Mode::Constant),
            &[f(3), ints(&[1]), ints(&[1]), t(&[], vec![0f32])],
            1 << 20,
        );
        assert_eq!(
            got,
            Err(EvalError::Types(ElementType::I32, ElementType::F32))
        );
    }

    /// The budget is checked before the output is allocated; a count that overflows is over
    /// budget too; neither panics. Deep ranks do not recurse deeply.
    #[test]
    fn allocation_bombs_hit_the_budget() {
        let data = iota(&[2, 2]);
        for mode in [Mode::Constant, Mode::Edge] {
            for (begin, end) in [
                (vec![1_000_000_000_000_000, 0], vec![0, 0]),
                (
                    vec![0, 1_000_000_000_000_000],
                    vec![0, 1_000_000_000_000_000],
                ),
                (vec![i64::MAX, i64::MAX], vec![i64::MAX, i64::MAX]),
                (vec![1 << 20, 1 << 20], vec![0, 0]),
            ] {
                let got = run(
                    &pad12(mode),
                    &[data.clone(), ints(&begin), ints(&end)],
                    1 << 20,
                );
                assert!(
                    matches!(got, Err(EvalError::Memory(_))),
                    "{mode} {begin:?}: {got:?}"
                );
            }
        }
        let got = run(
            &pad12(Mode::Constant),
            &[iota(&[1; 40]), ints(&[1; 40]), ints(&[0; 40])],
            1 << 20,
        );
        assert!(matches!(got, Err(EvalError::Memory(_))), "{got:?}");
        // An empty output whatever the other axes: nothing to allocate.
        let got = run(
            &pad12(Mode::Constant),
            &[
                t(&[0, 2], Vec::<f32>::new()),
                ints(&[0, i64::MAX / 4]),
                ints(&[0, i64::MAX / 4]),
            ],
            1 << 20,
        )
        .unwrap();
        assert!(got.is_empty());
        // Beyond what a shape can hold, even empty: an error, not a panic.
        let got = run(
            &pad12(Mode::Constant),
            &[
                t(&[0, 2], Vec::<f32>::new()),
                ints(&[0, i64::MAX]),
                ints(&[0, 0]),
            ],
            1 << 20,
        );
        assert!(
            matches!(&got, Err(EvalError::Invalid(m)) if m.contains("too large")),
            "{got:?}"
        );
        // 5000 axes of one position each, every one padded by 1 and cropped by 1.
        let shape = vec![1; 5000];
        let one = |v: i64| ints(&vec![v; 5000]);
        let got = run(
            &pad12(Mode::Constant),
            &[t(&shape, vec![3u8]), one(1), one(-1), t(&[], vec![9u8])],
            1 << 20,
        )
        .unwrap();
        assert_eq!((got.shape().len(), got.to_le_bytes()), (5000, vec![9]));
        let got = run(
            &pad12(Mode::Edge),
            &[t(&shape, vec![3u8]), one(1), one(-1)],
            1 << 20,
        )
        .unwrap();
        assert_eq!((got.shape().len(), got.to_le_bytes()), (5000, vec![3]));
    }

    #[test]
    fn attributes() {
        let parsed = |v: u32, attrs: &[(&str, &str)]| match op(v, attrs) {
            Ok(o) => Ok(format!("{o:?}")),
            Err(e) => Err(e
                .iter()
                .map(|e| format!("{} {:?} {}", e.name, e.value, e.reason))
                .collect::<Vec<_>>()
                .join("; ")),
        };
        assert_eq!(
            parsed(1, &[("pad_mode", "constant")]).unwrap(),
            "Pad { version: 1, mode: Constant }"
        );
        assert_eq!(
            parsed(12, &[("pad_mode", "REFLECT")]).unwrap(),
            "Pad { version: 12, mode: Reflect }"
        );
        assert_eq!(
            parsed(12, &[("pad_mode", "Symmetric")]).unwrap(),
            "Pad { version: 12, mode: Symmetric }"
        );
        assert_eq!(
            parsed(1, &[("pad_mode", "edge")]).unwrap(),
            "Pad { version: 1, mode: Edge }"
        );
        assert_eq!(parsed(12, &[]).unwrap_err(), "pad_mode None ");
        assert_eq!(
            parsed(12, &[("pad_mode", "wrap")]).unwrap_err(),
            "pad_mode Some(\"wrap\") expected constant, edge, reflect or symmetric"
        );
        assert_eq!(
            parsed(1, &[("pad_mode", "")]).unwrap_err(),
            "pad_mode Some(\"\") expected constant, edge, reflect or symmetric"
        );
        assert_eq!(PAD_1.title(), "Pad-1");
        assert_eq!(PAD_12.title(), "Pad-12");
        assert_eq!(PAD_12.inputs, Arity::range(3, 4));
    }

    /// Runs inference: the output type and shape, or the findings.
    fn infer(p: &Pad, inputs: &[TensorType]) -> Result<String, String> {
        let refs: Vec<&TensorType> = inputs.iter().collect();
        let (out, findings) = crate::ops::context::infer_for_test(p, &refs);
        match out {
            Some(out) => Ok(format!("{} {}", out[0].element_type, out[0].shape)),
            None => Err(findings
                .iter()
                .map(|(k, port)| format!("{port:?} {k}"))
                .collect::<Vec<_>>()
                .join("; ")),
        }
    }

    fn ty(et: ElementType, shape: &str) -> TensorType {
        TensorType::new(et, PartialShape::parse(shape).unwrap())
    }

    fn f32t(shape: &str) -> TensorType {
        ty(ElementType::F32, shape)
    }

    fn known(v: &[i64]) -> TensorType {
        TensorType::of_value(ints(v))
    }

    fn unknown(len: &str) -> TensorType {
        ty(ElementType::I32, len)
    }

    fn bounded(lo: &[i64], hi: &[i64]) -> TensorType {
        Bounds {
            lo: lo.to_vec(),
            hi: hi.to_vec(),
        }
        .into_type(ElementType::I64, PartialShape::fixed(&[lo.len() as u64]))
    }

    #[test]
    fn infer_table() {
        let c12 = pad12(Mode::Constant);
        let c1 = Pad {
            version: 1,
            mode: Mode::Constant,
        };
        let r12 = pad12(Mode::Reflect);
        let s12 = pad12(Mode::Symmetric);
        let e12 = pad12(Mode::Edge);
        let cases: Vec<(&Pad, Vec<TensorType>, &str)> = vec![
            (
                &c12,
                vec![f32t("2,3"), known(&[1, 0]), known(&[0, 2])],
                "f32 [3,5]",
            ),
            (
                &c1,
                vec![f32t("2,3"), known(&[1, 0]), known(&[0, 2])],
                "f32 [3,5]",
            ),
            // Interval data dims shift.
            (
                &c12,
                vec![f32t("?,2..4"), known(&[1, 1]), known(&[1, -1])],
                "f32 [2..,2..4]",
            ),
            (
                &c12,
                vec![f32t("1..5"), known(&[-2]), known(&[0])],
                "f32 [..3]",
            ),
            (&c12, vec![f32t("?"), known(&[-2]), known(&[-1])], "f32 [?]"),
            (
                &c12,
                vec![f32t("2..6"), known(&[-2]), known(&[-2])],
                "f32 [..2]",
            ),
            (
                &r12,
                vec![f32t("2..5"), known(&[3]), known(&[0])],
                "f32 [5..8]",
            ),
            // Bounds of the pads give intervals (Pad-1: only their non-negative values).
            (
                &c12,
                vec![
                    f32t("3,4"),
                    bounded(&[0, 1], &[2, UNBOUNDED]),
                    known(&[0, 0]),
                ],
                "f32 [3..5,5..]",
            ),
            (
                &c1,
                vec![f32t("3"), bounded(&[-1], &[2]), known(&[0])],
                "f32 [3..5]",
            ),
            (
                &c12,
                vec![f32t("3"), bounded(&[-1], &[2]), known(&[0])],
                "f32 [2..5]",
            ),
            // Unknown pads: the rank, dynamic dims (Pad-1: at least the data dim).
            (
                &c12,
                vec![f32t("2,3"), unknown("2"), unknown("2")],
                "f32 [?,?]",
            ),
            (
                &c1,
                vec![f32t("2,3"), unknown("2"), unknown("2")],
                "f32 [2..,3..]",
            ),
            (
                &c12,
                vec![f32t("2,3"), unknown("?"), known(&[0, 1])],
                "f32 [?,?]",
            ),
            (
                &c1,
                vec![f32t("2,3"), unknown("?"), known(&[0, 1])],
                "f32 [2..,4..]",
            ),
            // The rank from the pads when the data's is unknown.
            (
                &c12,
                vec![f32t("..."), known(&[1, 2]), known(&[0, 0])],
                "f32 [1..,2..]",
            ),
            (
                &c12,
                vec![f32t("..."), unknown("3"), unknown("?")],
                "f32 [?,?,?]",
            ),
            (
                &c12,
                vec![f32t("..."), unknown("?"), unknown("?")],
                "f32 [...]",
            ),
            (
                &c12,
                vec![f32t("..."), unknown("100000"), unknown("?")],
                "f32 [...]",
            ),
            // pad_value: its type is the output's when the data's is dynamic.
            (
                &c12,
                vec![
                    ty(ElementType::Dynamic, "2"),
                    known(&[1]),
                    known(&[1]),
                    ty(ElementType::F16, ""),
                ],
                "f16 [4]",
            ),
            // Outside constant mode pad_value is ignored.
            (
                &r12,
                vec![
                    f32t("3"),
                    known(&[1]),
                    known(&[1]),
                    ty(ElementType::I8, "2"),
                ],
                "f32 [5]",
            ),
            (
                &c12,
                vec![ty(ElementType::Boolean, ""), known(&[]), known(&[])],
                "boolean []",
            ),
        ];
        for (k, (p, inputs, want)) in cases.into_iter().enumerate() {
            assert_eq!(infer(p, &inputs).as_deref(), Ok(want), "case {k}");
        }
        let errors: Vec<(&Pad, Vec<TensorType>, &str)> = vec![
            (
                &r12,
                vec![f32t("3"), known(&[3]), known(&[0])],
                "Some((Input, 1)) in reflect mode pads_begin element 0 (3) must be less than data dim 0 (3)",
            ),
            (
                &r12,
                vec![f32t("..2"), known(&[0]), known(&[2])],
                "Some((Input, 2)) in reflect mode pads_end element 0 (2) must be less than data dim 0 (..2)",
            ),
            (
                &s12,
                vec![f32t("2"), bounded(&[3], &[9]), known(&[0])],
                "Some((Input, 1)) in symmetric mode pads_begin element 0 (3..9) must be at most data dim 0 (2)",
            ),
            (
                &e12,
                vec![f32t("0"), known(&[0]), known(&[1])],
                "Some((Input, 2)) in edge mode data dim 0 is 0",
            ),
            (
                &c1,
                vec![f32t("3"), known(&[-1]), known(&[0])],
                "Some((Input, 1)) pads_begin element 0 is -1; Pad-1 takes no negative pads",
            ),
            (
                &c1,
                vec![f32t("3"), bounded(&[-5], &[-1]), known(&[0])],
                "pads_begin element 0 is at most -1; Pad-1 takes no negative pads",
            ),
            (
                &c12,
                vec![f32t("3"), known(&[-2]), known(&[-2])],
                "Some((Input, 1)) output dim 0 would be -1",
            ),
            (
                &c12,
                vec![f32t("..3"), known(&[-1]), known(&[-3])],
                "Some((Input, 2)) output dim 0 would be -4..-1: data dim 0 (..3) + pads_begin (-1) + pads_end (-3)",
            ),
            (
                &c12,
                vec![f32t("2,3"), known(&[1]), unknown("2")],
                "Some((Input, 1)) pads_begin has 1 elements, but arg has rank 2: Pad takes one pad per axis",
            ),
            (
                &c12,
                vec![f32t("2,3"), unknown("2"), unknown("3")],
                "Some((Input, 2)) pads_end has 3 elements, but arg has rank 2",
            ),
            (
                &c12,
                vec![f32t("..."), known(&[1, 1]), unknown("3")],
                "Some((Input, 2)) pads_end has 3 elements, but pads_begin has 2 elements, so arg has rank 2",
            ),
            (
                &c12,
                vec![f32t("2"), unknown("1,1"), unknown("1")],
                "Some((Input, 1)) pads_begin must be 1-D, not rank 2",
            ),
            (
                &c12,
                vec![f32t("2"), ty(ElementType::F32, "1"), unknown("1")],
                "Some((Input, 1))",
            ),
            (
                &c12,
                vec![
                    f32t("2"),
                    known(&[1]),
                    known(&[1]),
                    ty(ElementType::F16, ""),
                ],
                "None the inputs' element types differ: f32 and f16",
            ),
            (
                &c12,
                vec![f32t("2"), known(&[1]), known(&[1]), f32t("1")],
                "Some((Input, 3)) pad_value must be a scalar, not rank 1",
            ),
        ];
        for (k, (p, inputs, want)) in errors.into_iter().enumerate() {
            match infer(p, &inputs) {
                Err(m) => assert!(m.contains(want), "case {k}: {m}"),
                Ok(s) => panic!("case {k}: expected {want:?}, got {s}"),
            }
        }
    }
}
