//! Auto-broadcast specifications (`auto_broadcast` and `auto_broadcast.auto_broadcast_axis`).
//!
//! This is the one module that knows broadcasting: shape inference and execution both use it.
//! Rules (see `docs/ops.md`): `none` (also spelled `explicit`) requires equal shapes; `numpy`
//! right-aligns shapes and stretches dims of 1; `pdpd` broadcasts B onto A starting at `axis`,
//! and its output always has A's shape.

use std::fmt;

use serde::Serialize;

use crate::shape::{Dim, PartialShape};

/// How an elementwise op broadcasts its inputs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AutoBroadcast {
    /// `none` or `explicit`: shapes must match.
    None,
    /// `numpy` (the default).
    Numpy,
    /// `pdpd`: B is aligned into A starting at `axis`; `-1` means `rank(A) - rank(B)`.
    Pdpd {
        axis: i64,
        /// Whether `auto_broadcast.auto_broadcast_axis` was written in the file. When it was
        /// not, ovir uses the spec's −1 while OpenVINO's loader uses 0.
        axis_given: bool,
    },
}

impl AutoBroadcast {
    /// Parses the attribute values (`auto_broadcast`, `auto_broadcast.auto_broadcast_axis`).
    /// `Err` carries (attribute name, reason).
    pub fn parse(
        mode: Option<&str>,
        axis: Option<&str>,
    ) -> Result<AutoBroadcast, (&'static str, String)> {
        let mode = mode.unwrap_or("numpy");
        let spec = if mode.eq_ignore_ascii_case("numpy") {
            AutoBroadcast::Numpy
        } else if mode.eq_ignore_ascii_case("none") || mode.eq_ignore_ascii_case("explicit") {
            AutoBroadcast::None
        } else if mode.eq_ignore_ascii_case("pdpd") {
            let parsed = match axis {
                None => -1,
                Some(text) => match text.trim().parse::<i64>() {
                    Ok(a) if a >= -1 => a,
                    Ok(_) => {
                        return Err((
                            AXIS_ATTR,
                            "a pdpd axis is -1 (align B to the end of A) or a non-negative dimension index".into(),
                        ));
                    }
                    Err(_) => return Err((AXIS_ATTR, "expected an integer".into())),
                },
            };
            AutoBroadcast::Pdpd {
                axis: parsed,
                axis_given: axis.is_some(),
            }
        } else {
            return Err((
                "auto_broadcast",
                "expected none, explicit, numpy or pdpd".into(),
            ));
        };
        Ok(spec)
    }
}

/// Why two shapes do not broadcast.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BroadcastError {
    /// The output axis where the dims clash, when one axis is to blame.
    pub axis: Option<usize>,
    pub reason: String,
}

fn clash(axis: usize, reason: String) -> BroadcastError {
    BroadcastError {
        axis: Some(axis),
        reason,
    }
}

fn whole(reason: String) -> BroadcastError {
    BroadcastError { axis: None, reason }
}

impl AutoBroadcast {
    /// The output shape of an elementwise op with inputs `a` and `b`, by OpenVINO's rules
    /// (`eltwise_shape_infer`): `none` merges, `numpy` and `pdpd` broadcast-merge.
    pub fn infer(
        &self,
        a: &PartialShape,
        b: &PartialShape,
    ) -> Result<PartialShape, BroadcastError> {
        match *self {
            AutoBroadcast::None => merge(a, b),
            AutoBroadcast::Numpy => numpy(a, b),
            AutoBroadcast::Pdpd { axis, .. } => pdpd(a, b, axis),
        }
    }

    /// The output shape for static input shapes (what execution needs).
    pub fn infer_static(&self, a: &[u64], b: &[u64]) -> Result<Vec<u64>, BroadcastError> {
        let out = self.infer(&PartialShape::fixed(a), &PartialShape::fixed(b))?;
        // Static inputs give a static output under every rule.
        out.to_static()
            .ok_or_else(|| whole("internal error: static shapes gave a dynamic output".into()))
    }
}

/// `none`: equal ranks, each pair of dims intersected (`PartialShape::merge_into`).
pub fn merge(a: &PartialShape, b: &PartialShape) -> Result<PartialShape, BroadcastError> {
    let (Some(da), Some(db)) = (a.dims(), b.dims()) else {
        // A dynamic rank takes the other shape.
        return Ok(if a.rank().is_none() {
            b.clone()
        } else {
            a.clone()
        });
    };
    if da.len() != db.len() {
        return Err(whole(format!(
            "the ranks differ ({} and {}) and auto_broadcast is none",
            da.len(),
            db.len()
        )));
    }
    da.iter()
        .zip(db)
        .enumerate()
        .map(|(i, (&x, &y))| {
            x.merge(y)
                .ok_or_else(|| clash(i, format!("{x} and {y} differ and auto_broadcast is none")))
        })
        .collect::<Result<Vec<_>, _>>()
        .map(PartialShape::new)
}

/// `numpy`: right-aligned, missing leading dims are 1, each pair broadcast-merged.
pub fn numpy(a: &PartialShape, b: &PartialShape) -> Result<PartialShape, BroadcastError> {
    let (Some(da), Some(db)) = (a.dims(), b.dims()) else {
        return Ok(PartialShape::dynamic_rank());
    };
    let rank = da.len().max(db.len());
    let at = |d: &[Dim], i: usize| {
        let pad = rank - d.len();
        if i < pad { Dim::fixed(1) } else { d[i - pad] }
    };
    (0..rank)
        .map(|i| {
            let (x, y) = (at(da, i), at(db, i));
            x.broadcast_merge(y).ok_or_else(|| {
                clash(
                    i,
                    format!(
                        "{x} and {y} cannot be broadcast together (they differ and neither is 1)"
                    ),
                )
            })
        })
        .collect::<Result<Vec<_>, _>>()
        .map(PartialShape::new)
}

/// One-directional numpy broadcasting (the Broadcast op's `numpy` mode): `data` right-aligned
/// into `target`, each data dim 1 or the target's. The output is `target`, each dim refined by
/// the data's where that cannot be 1 (it must then be equal). A data shape of dynamic rank gives
/// `target` as it is.
pub fn numpy_onto(
    data: &PartialShape,
    target: &PartialShape,
) -> Result<PartialShape, BroadcastError> {
    let Some(dt) = target.dims() else {
        return Ok(PartialShape::dynamic_rank());
    };
    let Some(dd) = data.dims() else {
        return Ok(target.clone());
    };
    if dd.len() > dt.len() {
        return Err(whole(format!(
            "the data has rank {} but the target has {} dims: numpy mode broadcasts the data onto the target only",
            dd.len(),
            dt.len()
        )));
    }
    let pad = dt.len() - dd.len();
    let mut out = dt.to_vec();
    for (k, &d) in dd.iter().enumerate() {
        let t = dt[pad + k];
        if d.contains(1) {
            continue;
        }
        out[pad + k] = t.merge(d).ok_or_else(|| {
            clash(
                pad + k,
                format!("the data's {d} cannot be broadcast to {t} (it is neither 1 nor {t})"),
            )
        })?;
    }
    Ok(PartialShape::new(out))
}

/// `pdpd`: B is aligned into A starting at `axis` (−1: `rank(A) − rank(B)`); the output has
/// A's rank, with A's dims refined by B's.
pub fn pdpd(a: &PartialShape, b: &PartialShape, axis: i64) -> Result<PartialShape, BroadcastError> {
    let (Some(da), Some(db)) = (a.dims(), b.dims()) else {
        return Ok(PartialShape::dynamic_rank());
    };
    if db.len() > da.len() {
        return Err(whole(format!(
            "B has rank {} but A has rank {}: pdpd broadcasts B onto A only",
            db.len(),
            da.len()
        )));
    }
    let start = match axis {
        -1 => da.len() - db.len(),
        a if a >= 0 => usize::try_from(a).unwrap_or(usize::MAX),
        _ => {
            return Err(whole(format!(
                "the pdpd axis {axis} is invalid (it is -1 or an index)"
            )));
        }
    };
    if start.checked_add(db.len()).is_none_or(|end| end > da.len()) {
        return Err(whole(format!(
            "B (rank {}) placed at axis {start} reaches past A's rank {}",
            db.len(),
            da.len()
        )));
    }
    let mut out = da.to_vec();
    for (i, &y) in db.iter().enumerate() {
        let x = out[start + i];
        if let (Some(sx), Some(sy)) = (x.get_static(), y.get_static())
            && sy > sx
        {
            return Err(clash(
                start + i,
                format!("B's {y} is larger than A's {x}: pdpd broadcasts B onto A only"),
            ));
        }
        out[start + i] = x.broadcast_merge(y).ok_or_else(|| {
            clash(
                start + i,
                format!("A's {x} and B's {y} cannot be broadcast together"),
            )
        })?;
    }
    Ok(PartialShape::new(out))
}

/// B's shape as numpy sees it for a pdpd op: B's trailing 1s dropped, then B placed at `axis`
/// (−1: `rank(A) − rank(B)`, from B's rank before trimming, as OpenVINO's reference does) and
/// padded with 1s to A's rank. With that shape, numpy broadcasting computes pdpd's result.
pub fn pdpd_b_as_numpy(a_rank: usize, b: &[usize], axis: i64) -> Option<Vec<usize>> {
    let start = if axis == -1 {
        a_rank.checked_sub(b.len())?
    } else {
        usize::try_from(axis).ok()?
    };
    let trimmed = b.len() - b.iter().rev().take_while(|&&d| d == 1).count();
    let mut out = vec![1usize; a_rank];
    out.get_mut(start..start + trimmed)?
        .copy_from_slice(&b[..trimmed]);
    Some(out)
}

/// How execution walks a broadcast binary op: the output shape coalesced into the fewest
/// dims, each with the step (in elements) that input A and input B take along it — 0 where the
/// input is broadcast. Dims of size 1 are dropped, and neighbours merge whenever both inputs
/// step through them as one, so `[64,64,64,64] - [64,1,64,1]` becomes 64×64×64 runs of 64
/// elements against one B value each, and same-shape inputs become one run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    /// The output shape, as inferred.
    pub out: Vec<usize>,
    /// Coalesced dims, outermost first (none for a single element).
    dims: Vec<usize>,
    step_a: Vec<usize>,
    step_b: Vec<usize>,
}

/// One stretch of the output computed from contiguous or repeated input elements:
/// `out[start..start + len] = f(a[a..], b[b..])`, where an input with `a_step == false` repeats
/// its one element.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Run {
    pub start: usize,
    pub len: usize,
    pub a: usize,
    pub a_step: bool,
    pub b: usize,
    pub b_step: bool,
}

/// One input of a [`Plan`] followed along the output ([`Plan::cursor`]): the input's elements
/// for the output's current run, which is contiguous (`stepping`) or one element repeated.
#[derive(Clone, Debug)]
pub struct Cursor<'p> {
    /// The plan's outer dims, and the input's steps along them.
    outer: &'p [usize],
    steps: &'p [usize],
    /// The innermost dim, and the input's step along it (0 or 1).
    n: usize,
    inner: usize,
    /// The current row's outer index, and where that row starts in the input.
    idx: Vec<usize>,
    row: usize,
    /// The current position within the row.
    col: usize,
}

impl Cursor<'_> {
    /// Output elements left in the current run.
    #[inline(always)]
    pub fn left(&self) -> usize {
        self.n - self.col
    }

    /// The input element for the current output element.
    #[inline(always)]
    pub fn offset(&self) -> usize {
        self.row + self.col * self.inner
    }

    /// Whether the input steps along the run (else it repeats one element).
    #[inline(always)]
    pub fn stepping(&self) -> bool {
        self.inner != 0
    }

    /// Moves `len` output elements on, at most [`left`](Self::left).
    #[inline(always)]
    pub fn advance(&mut self, len: usize) {
        self.col += len;
        if self.col < self.n {
            return;
        }
        self.col = 0;
        for k in (0..self.idx.len()).rev() {
            self.idx[k] += 1;
            self.row += self.steps[k];
            if self.idx[k] < self.outer[k] {
                return;
            }
            self.idx[k] = 0;
            self.row -= self.outer[k] * self.steps[k];
        }
    }
}

/// The index over the `outer` dims of row `row` (row-major), into `idx`.
#[inline(always)]
fn row_index(row: usize, outer: &[usize], idx: &mut [usize]) {
    let mut rest = row;
    for (i, &d) in idx.iter_mut().zip(outer).rev() {
        *i = rest % d;
        rest /= d;
    }
}

/// Row-major steps of `shape` padded on the left to `rank`, with 0 for size-1 dims.
fn steps(shape: &[usize], rank: usize) -> Vec<usize> {
    let mut out = vec![0; rank];
    let mut stride = 1usize;
    for (k, &d) in shape.iter().enumerate().rev() {
        let at = rank - shape.len() + k;
        out[at] = if d == 1 { 0 } else { stride };
        stride = stride.saturating_mul(d);
    }
    out
}

/// The output shape of static shapes `a` and `b` under `spec`: the rules of
/// [`AutoBroadcast::infer`] on fixed dims (`tests/broadcast_props.rs` checks they agree), without
/// building partial shapes, since execution asks this for every layer and run.
pub fn static_out(spec: AutoBroadcast, a: &[usize], b: &[usize]) -> Option<Vec<usize>> {
    match spec {
        AutoBroadcast::None => (a == b).then(|| a.to_vec()),
        AutoBroadcast::Numpy => {
            let rank = a.len().max(b.len());
            let at = |s: &[usize], i: usize| {
                let pad = rank - s.len();
                if i < pad { 1 } else { s[i - pad] }
            };
            (0..rank)
                .map(|i| match (at(a, i), at(b, i)) {
                    (x, y) if x == y => Some(x),
                    (1, y) => Some(y),
                    (x, 1) => Some(x),
                    _ => None,
                })
                .collect()
        }
        AutoBroadcast::Pdpd { axis, .. } => {
            let start = match axis {
                -1 => a.len().checked_sub(b.len())?,
                x if x >= 0 => usize::try_from(x).ok()?,
                _ => return None,
            };
            if b.len() > a.len() || start.checked_add(b.len())? > a.len() {
                return None;
            }
            let mut out = a.to_vec();
            for (i, &y) in b.iter().enumerate() {
                let x = a[start + i];
                out[start + i] = match (x, y) {
                    _ if y > x => return None,
                    _ if x == y || y == 1 => x,
                    (1, _) => y,
                    _ => return None,
                };
            }
            Some(out)
        }
    }
}

impl Plan {
    /// The plan for `a` and `b` under `spec`, or `None` if the shapes do not broadcast or the
    /// output has more elements than `usize` counts.
    pub fn new(spec: AutoBroadcast, a: &[usize], b: &[usize]) -> Option<Plan> {
        let out = static_out(spec, a, b)?;
        // The element count must fit in memory's address space (checked here, so that
        // `len` cannot overflow).
        out.iter().try_fold(1usize, |n, &d| n.checked_mul(d))?;
        let b_shape = match spec {
            AutoBroadcast::Pdpd { axis, .. } => pdpd_b_as_numpy(a.len(), b, axis)?,
            _ => b.to_vec(),
        };
        let rank = out.len();
        let (sa, sb) = (steps(a, rank), steps(&b_shape, rank));
        let mut dims: Vec<usize> = Vec::new();
        let (mut step_a, mut step_b): (Vec<usize>, Vec<usize>) = (Vec::new(), Vec::new());
        for k in 0..rank {
            let d = out[k];
            if d == 1 {
                continue;
            }
            if let (Some(&pd), Some(&pa), Some(&pb)) = (dims.last(), step_a.last(), step_b.last()) {
                // The previous dim continues this one for both inputs: merge.
                if pa == sa[k].saturating_mul(d) && pb == sb[k].saturating_mul(d) {
                    let n = dims.len() - 1;
                    dims[n] = pd.saturating_mul(d);
                    step_a[n] = sa[k];
                    step_b[n] = sb[k];
                    continue;
                }
            }
            dims.push(d);
            step_a.push(sa[k]);
            step_b.push(sb[k]);
        }
        Some(Plan {
            out,
            dims,
            step_a,
            step_b,
        })
    }

    /// Number of output elements.
    pub fn len(&self) -> usize {
        self.dims.iter().product()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The coalesced dims (for tests and diagnostics).
    pub fn dims(&self) -> &[usize] {
        &self.dims
    }

    /// Where input A (`first`) or B is read as the output advances from element `start`
    /// (at most [`len`](Self::len)): several plans over one output are walked together with
    /// their cursors, each stretch no longer than every cursor's [`Cursor::left`].
    pub fn cursor(&self, first: bool, start: usize) -> Cursor<'_> {
        let steps = if first { &self.step_a } else { &self.step_b };
        let Some((&n, outer)) = self.dims.split_last() else {
            // One element: one run of one.
            return Cursor {
                outer: &[],
                steps: &[],
                n: 1,
                inner: 0,
                idx: Vec::new(),
                row: 0,
                col: start.min(1),
            };
        };
        let mut idx = vec![0; outer.len()];
        row_index(start / n, outer, &mut idx);
        let row = idx.iter().zip(steps.iter()).map(|(i, s)| i * s).sum();
        Cursor {
            outer,
            steps: &steps[..outer.len()],
            n,
            inner: steps[outer.len()],
            idx,
            row,
            col: start % n,
        }
    }

    /// Calls `f` on the runs covering output elements `start..end`, in order, until it
    /// returns `false`.
    pub fn runs(&self, start: usize, end: usize, f: impl FnMut(Run) -> bool) {
        self.runs_inline(start, end, f)
    }

    /// [`runs`](Self::runs), always inlined: for a caller compiled for a wider vector unit,
    /// so that `f` is compiled for it too (the compiler decides for `runs`, and inlining it
    /// everywhere made other callers slower).
    #[inline(always)]
    pub fn runs_inline(&self, start: usize, end: usize, mut f: impl FnMut(Run) -> bool) {
        let end = end.min(self.len());
        if start >= end {
            return;
        }
        let Some((&n, outer)) = self.dims.split_last() else {
            f(Run {
                start: 0,
                len: 1,
                a: 0,
                a_step: false,
                b: 0,
                b_step: false,
            });
            return;
        };
        let (ia, ib) = (self.step_a[outer.len()], self.step_b[outer.len()]);
        if outer.is_empty() {
            // One dim (same shapes, or one input a single value): one run, no index to keep.
            f(Run {
                start,
                len: end - start,
                a: start * ia,
                a_step: ia != 0,
                b: start * ib,
                b_step: ib != 0,
            });
            return;
        }
        // The outer index of `start`, on the stack for up to 8 coalesced dims.
        let mut small = [0usize; 8];
        let mut large = Vec::new();
        let idx: &mut [usize] = if outer.len() <= small.len() {
            &mut small[..outer.len()]
        } else {
            large.resize(outer.len(), 0);
            &mut large
        };
        row_index(start / n, outer, idx);
        // Where the current row starts in A and B, kept up to date as the odometer turns.
        let (mut row_a, mut row_b) = (0, 0);
        for (k, &i) in idx.iter().enumerate() {
            row_a += i * self.step_a[k];
            row_b += i * self.step_b[k];
        }
        let mut col = start % n;
        let mut pos = start;
        while pos < end {
            let (a, b) = (row_a + col * ia, row_b + col * ib);
            let len = (n - col).min(end - pos);
            if !f(Run {
                start: pos,
                len,
                a,
                a_step: ia != 0,
                b,
                b_step: ib != 0,
            }) {
                return;
            }
            pos += len;
            col = 0;
            // Next row: odometer over the outer dims.
            for k in (0..idx.len()).rev() {
                idx[k] += 1;
                row_a += self.step_a[k];
                row_b += self.step_b[k];
                if idx[k] < outer[k] {
                    break;
                }
                idx[k] = 0;
                row_a -= outer[k] * self.step_a[k];
                row_b -= outer[k] * self.step_b[k];
            }
        }
    }
}

/// Applies `f` elementwise to `a` and `b` broadcast by `spec` (whose shapes must already have
/// passed [`AutoBroadcast::infer_static`] giving `out`). Stops at the first element for which
/// `f` fails and returns its index in the output. This is the plain element-by-element
/// reference: execution uses [`Plan`] and `ops::kernel`, and tests/kernels.rs checks the two
/// agree bit for bit.
pub fn binary_map<A: Copy, B: Copy, O, E>(
    spec: AutoBroadcast,
    a: ndarray::ArrayViewD<'_, A>,
    b: ndarray::ArrayViewD<'_, B>,
    out: &[usize],
    mut f: impl FnMut(A, B) -> Result<O, E>,
) -> Result<ndarray::ArrayD<O>, BinaryError<E>> {
    use ndarray::IxDyn;
    let b = match spec {
        AutoBroadcast::Pdpd { axis, .. } => {
            let shape = pdpd_b_as_numpy(a.ndim(), b.shape(), axis).ok_or(BinaryError::Shapes)?;
            b.into_shape_with_order(IxDyn(&shape))
                .map_err(|_| BinaryError::Shapes)?
        }
        _ => b,
    };
    let a = a.broadcast(IxDyn(out)).ok_or(BinaryError::Shapes)?;
    let b = b.broadcast(IxDyn(out)).ok_or(BinaryError::Shapes)?;
    let mut values = Vec::with_capacity(out.iter().product());
    for (k, (&x, &y)) in a.iter().zip(b.iter()).enumerate() {
        match f(x, y) {
            Ok(v) => values.push(v),
            Err(e) => return Err(BinaryError::At { flat: k, error: e }),
        }
    }
    ndarray::ArrayD::from_shape_vec(IxDyn(out), values).map_err(|_| BinaryError::Shapes)
}

/// Why [`binary_map`] stopped.
#[derive(Debug, PartialEq, Eq)]
pub enum BinaryError<E> {
    /// The shapes do not broadcast (the caller did not check them first).
    Shapes,
    /// `f` failed at output element `flat` (row-major index).
    At { flat: usize, error: E },
}

/// The attribute that holds the pdpd axis (the key really contains a dot).
pub const AXIS_ATTR: &str = "auto_broadcast.auto_broadcast_axis";

impl fmt::Display for AutoBroadcast {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AutoBroadcast::None => f.write_str("none"),
            AutoBroadcast::Numpy => f.write_str("numpy"),
            AutoBroadcast::Pdpd { axis, .. } => write!(f, "pdpd(axis={axis})"),
        }
    }
}

impl Serialize for AutoBroadcast {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// Element strides of an input of shape `shape`, right-aligned (numpy) into an output of shape
/// `out`, 0 along the axes it is repeated on. `None` when it does not broadcast to `out`.
pub fn strides_into(shape: &[usize], out: &[usize]) -> Option<Vec<usize>> {
    if shape.len() > out.len() {
        return None;
    }
    let pad = out.len() - shape.len();
    let mut strides = vec![0; out.len()];
    let mut step = 1usize;
    for (k, &d) in shape.iter().enumerate().rev() {
        let o = out[pad + k];
        if d == o && d != 1 {
            strides[pad + k] = step;
        } else if d != 1 {
            return None;
        }
        step = step.checked_mul(d)?;
    }
    Some(strides)
}

/// Element strides, per axis of the output `out`, of an elementwise op's input A (`first`) or
/// B of shape `shape` under `spec` ([`strides_into`]; pdpd aligns B at its axis), or `None`
/// when it does not broadcast to `out`.
pub fn input_strides(
    spec: AutoBroadcast,
    shape: &[usize],
    out: &[usize],
    first: bool,
) -> Option<Vec<usize>> {
    match spec {
        AutoBroadcast::Pdpd { axis, .. } if !first => {
            strides_into(&pdpd_b_as_numpy(out.len(), shape, axis)?, out)
        }
        _ => strides_into(shape, out),
    }
}

/// The numpy broadcast of several static shapes, or `None`.
pub fn numpy_shapes(shapes: &[&[usize]]) -> Option<Vec<usize>> {
    let rank = shapes.iter().map(|s| s.len()).max().unwrap_or(0);
    let mut out = vec![1usize; rank];
    for s in shapes {
        let pad = rank - s.len();
        for (k, &d) in s.iter().enumerate() {
            let o = &mut out[pad + k];
            if *o == 1 {
                *o = d;
            } else if d != 1 && d != *o {
                return None;
            }
        }
    }
    Some(out)
}

/// Walks an output of shape `out` in row-major order, one run along the last axis at a time:
/// `f(output offset, run length, each input's offset, each input's step along the run)`, for
/// inputs laid out by `strides` ([`strides_into`]).
pub fn walk<const N: usize>(
    out: &[usize],
    strides: [&[usize]; N],
    mut f: impl FnMut(usize, usize, [usize; N], [usize; N]),
) {
    let total: usize = out.iter().product();
    if total == 0 {
        return;
    }
    let Some((&len, outer)) = out.split_last() else {
        f(0, 1, [0; N], [0; N]);
        return;
    };
    let last = outer.len();
    let steps: [usize; N] = std::array::from_fn(|i| strides[i][last]);
    let mut index = vec![0usize; outer.len()];
    let mut offs = [0usize; N];
    let mut at = 0;
    while at < total {
        f(at, len, offs, steps);
        at += len;
        // Advance the outer index like an odometer, updating each input's offset.
        for k in (0..outer.len()).rev() {
            index[k] += 1;
            for (i, o) in offs.iter_mut().enumerate() {
                *o += strides[i][k];
            }
            if index[k] < outer[k] {
                break;
            }
            for (i, o) in offs.iter_mut().enumerate() {
                *o -= strides[i][k] * outer[k];
            }
            index[k] = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Inputs' strides along the output: numpy aligns the last axes, pdpd aligns B at its
    /// axis (A is the output's shape there).
    #[test]
    fn input_strides_align_by_the_rule() {
        let out = [2, 3, 4, 5];
        let numpy = AutoBroadcast::Numpy;
        assert_eq!(
            input_strides(numpy, &[3, 1, 1], &out, false),
            Some(vec![0, 1, 0, 0])
        );
        assert_eq!(
            input_strides(numpy, &[4, 5], &out, true),
            Some(vec![0, 0, 5, 1])
        );
        assert_eq!(input_strides(numpy, &[3], &out, false), None);
        let pdpd = |axis| AutoBroadcast::Pdpd {
            axis,
            axis_given: true,
        };
        assert_eq!(
            input_strides(pdpd(1), &[3], &out, false),
            Some(vec![0, 1, 0, 0])
        );
        assert_eq!(input_strides(pdpd(1), &[3], &out, true), None);
        assert_eq!(
            input_strides(pdpd(-1), &[4, 5], &out, false),
            Some(vec![0, 0, 5, 1])
        );
    }

    /// A cursor walked in stretches of at most `left()` reads each input where the runs do.
    #[test]
    fn cursors_follow_the_runs() {
        let shapes: [(&[usize], &[usize]); 7] = [
            (&[4, 5, 6], &[4, 5, 6]),
            (&[4, 5, 6], &[1]),
            (&[4, 5, 6], &[5, 1]),
            (&[4, 1, 6], &[1, 5, 1]),
            (&[3, 1, 4, 1], &[1, 2, 1, 5]),
            (&[1, 1], &[1]),
            (&[7], &[2, 1]),
        ];
        for (a, b) in shapes {
            let p = Plan::new(AutoBroadcast::Numpy, a, b).unwrap();
            let mut want = Vec::new();
            p.runs(0, p.len(), |r| {
                for i in 0..r.len {
                    let at = |o: usize, s: bool| o + if s { i } else { 0 };
                    want.push((r.start + i, at(r.a, r.a_step), at(r.b, r.b_step)));
                }
                true
            });
            for start in 0..p.len() {
                let (mut ca, mut cb) = (p.cursor(true, start), p.cursor(false, start));
                let mut pos = start;
                // Stretches of 1, 2, 3, ... elements, cut to what the cursors allow.
                let mut want_len = 1;
                while pos < p.len() {
                    let len = want_len.min(ca.left()).min(cb.left()).min(p.len() - pos);
                    assert!(len > 0, "{a:?} {b:?} from {start}");
                    for i in 0..len {
                        let at = |c: &Cursor, i| c.offset() + if c.stepping() { i } else { 0 };
                        assert_eq!(
                            (pos + i, at(&ca, i), at(&cb, i)),
                            want[pos + i],
                            "{a:?} {b:?} from {start}"
                        );
                    }
                    ca.advance(len);
                    cb.advance(len);
                    pos += len;
                    want_len += 1;
                }
            }
        }
    }

    #[test]
    fn plans_coalesce() {
        let p = Plan::new(AutoBroadcast::Numpy, &[64, 64, 64, 64], &[64, 1, 64, 1]).unwrap();
        assert_eq!(p.dims(), &[64, 64, 64, 64]);
        let p = Plan::new(AutoBroadcast::Numpy, &[4, 5, 6], &[4, 5, 6]).unwrap();
        assert_eq!(p.dims(), &[120]);
        let p = Plan::new(AutoBroadcast::Numpy, &[4, 5, 6], &[1]).unwrap();
        assert_eq!(p.dims(), &[120]);
        let p = Plan::new(AutoBroadcast::Numpy, &[4, 5, 6], &[5, 6]).unwrap();
        assert_eq!(p.dims(), &[4, 30]);
        let p = Plan::new(AutoBroadcast::Numpy, &[1, 1], &[1]).unwrap();
        assert_eq!((p.dims(), p.len()), (&[][..], 1));
        let mut runs = Vec::new();
        p.runs(0, 1, |r| {
            runs.push(r);
            true
        });
        assert_eq!(runs.len(), 1);
        let p = Plan::new(AutoBroadcast::Numpy, &[2, 0, 3], &[3]).unwrap();
        assert_eq!(p.len(), 0);
    }

    #[test]
    fn runs_cover_ranges_in_order() {
        let p = Plan::new(AutoBroadcast::Numpy, &[3, 1, 4], &[1, 2, 4]).unwrap();
        let mut seen = Vec::new();
        p.runs(3, 21, |r| {
            seen.push((r.start, r.len, r.a, r.b));
            true
        });
        assert_eq!(
            seen,
            vec![
                (3, 1, 3, 3),
                (4, 4, 0, 4),
                (8, 4, 4, 0),
                (12, 4, 4, 4),
                (16, 4, 8, 0),
                (20, 1, 8, 4)
            ]
        );
    }

    fn show(spec: AutoBroadcast, a: &str, b: &str) -> String {
        let a = PartialShape::parse(a).unwrap();
        let b = PartialShape::parse(b).unwrap();
        match spec.infer(&a, &b) {
            Ok(s) => s.to_string(),
            Err(e) => match e.axis {
                Some(ax) => format!("error at axis {ax}"),
                None => "error".into(),
            },
        }
    }

    /// The interval cases measured with OpenVINO 2026.4 (semantics reference §1.2).
    #[test]
    fn numpy_interval_table() {
        let table = [
            ("?,3", "3", "[?,3]"),
            ("?", "1", "[?]"),
            ("?", "5", "[5]"),
            ("1..10", "5", "[5]"),
            ("2..10", "5", "[5]"),
            ("2..10", "1..3", "[2..10]"),
            ("1..10", "1..3", "[1..10]"),
            ("2..4", "5..8", "error at axis 0"),
            ("3..", "..2", "[3..]"),
            ("1", "0", "[0]"),
            ("0", "3", "error at axis 0"),
            ("...", "2,3", "[...]"),
            ("", "2,3", "[2,3]"),
            ("", "", "[]"),
            ("8,1,6,1", "7,1,5", "[8,7,6,5]"),
            ("256,56", "56", "[256,56]"),
            ("2,3", "4", "error at axis 1"),
            ("2,3,4", "5,1,1,1", "[5,2,3,4]"),
        ];
        for (a, b, want) in table {
            assert_eq!(show(AutoBroadcast::Numpy, a, b), want, "{a} vs {b}");
        }
    }

    /// One-directional numpy (`data` onto `target`).
    #[test]
    fn numpy_onto_table() {
        let table = [
            ("16,1,1", "1,16,50,50", "[1,16,50,50]"),
            ("3", "2,3", "[2,3]"),
            ("1", "2,0", "[2,0]"),
            ("", "2,3", "[2,3]"),
            ("", "", "[]"),
            ("2,3", "3", "error"),
            ("3", "2,4", "error at axis 1"),
            ("0", "1", "error at axis 0"),
            ("3", "2,?", "[2,3]"),
            ("2..5", "?,4..9", "[?,4..5]"),
            ("1..5", "?,7", "[?,7]"),
            ("?", "2,3", "[2,3]"),
            ("...", "2,?", "[2,?]"),
            ("2,3", "...", "[...]"),
        ];
        for (data, target, want) in table {
            let d = PartialShape::parse(data).unwrap();
            let t = PartialShape::parse(target).unwrap();
            let got = match numpy_onto(&d, &t) {
                Ok(s) => s.to_string(),
                Err(e) => match e.axis {
                    Some(ax) => format!("error at axis {ax}"),
                    None => "error".into(),
                },
            };
            assert_eq!(got, want, "{data} onto {target}");
        }
    }

    #[test]
    fn none_table() {
        let table = [
            ("?,3", "2,?", "[2,3]"),
            ("1..5", "3..8", "[3..5]"),
            ("2,1", "2,3", "error at axis 1"),
            ("2,3", "3", "error"),
            ("...", "2,3", "[2,3]"),
            ("256,56", "256,56", "[256,56]"),
        ];
        for (a, b, want) in table {
            assert_eq!(show(AutoBroadcast::None, a, b), want, "{a} vs {b}");
        }
    }

    /// §1.3: A = [2,3,4,5].
    #[test]
    fn pdpd_table() {
        let pd = |axis| AutoBroadcast::Pdpd {
            axis,
            axis_given: true,
        };
        let table = [
            ("3,4", 1, "[2,3,4,5]"),
            ("3,1", 1, "[2,3,4,5]"),
            ("2,3", 0, "[2,3,4,5]"),
            ("1,3", 0, "[2,3,4,5]"),
            ("4,1", -1, "[2,3,4,5]"),
            ("1,1,1,1,1", 0, "error"),
            ("4,5", -2, "error"),
            ("4,5", 3, "error"),
            ("4,5", -1, "[2,3,4,5]"),
            ("", -1, "[2,3,4,5]"),
        ];
        for (b, axis, want) in table {
            assert_eq!(show(pd(axis), "2,3,4,5", b), want, "{b} axis {axis}");
        }
        // A dynamic A dim is refined, even beyond A's bound (OpenVINO's quirk).
        assert_eq!(show(pd(-1), "2,1..3,4", "5,4"), "[2,5,4]");
        assert_eq!(show(pd(-1), "2,3", "1,2,3"), "error");
        assert_eq!(show(pd(-1), "8,1,6,1", "7,1,5"), "error at axis 1");
    }

    #[test]
    fn attribute_table() {
        let table: &[(Option<&str>, Option<&str>, &str)] = &[
            (None, None, "numpy"),
            (Some("numpy"), None, "numpy"),
            (Some("NUMPY"), None, "numpy"),
            (Some("none"), None, "none"),
            (Some("Explicit"), None, "none"),
            (Some("pdpd"), None, "pdpd(axis=-1)"),
            (Some("PDPD"), Some("1"), "pdpd(axis=1)"),
            (Some("pdpd"), Some("-1"), "pdpd(axis=-1)"),
            (
                Some("pdpd"),
                Some("-2"),
                "error auto_broadcast.auto_broadcast_axis",
            ),
            (
                Some("pdpd"),
                Some("x"),
                "error auto_broadcast.auto_broadcast_axis",
            ),
            (Some("bogus"), None, "error auto_broadcast"),
            (Some(""), None, "error auto_broadcast"),
            (Some("numpy"), Some("3"), "numpy"),
        ];
        for &(mode, axis, want) in table {
            let got = match AutoBroadcast::parse(mode, axis) {
                Ok(s) => s.to_string(),
                Err((name, _)) => format!("error {name}"),
            };
            assert_eq!(got, want, "{mode:?} {axis:?}");
        }
        assert_eq!(
            AutoBroadcast::parse(Some("pdpd"), None),
            Ok(AutoBroadcast::Pdpd {
                axis: -1,
                axis_given: false
            })
        );
    }
}
