//! Broadcast-1 and Broadcast-3: the data replicated to fit a target shape.
//!
//! Spec: <https://docs.openvino.ai/2026/documentation/openvino-ir-format/operation-sets/operation-specs/movement/broadcast-3.html>
//! (and `broadcast-1`).
//!
//! Ports: `data` (any type), `target_shape` (a 1-D integer tensor; no element negative) and,
//! for `mode="explicit"`, `axes_mapping` (a 1-D integer tensor); one output of the data's type.
//! Attribute `mode` (default `numpy`; any case, as OpenVINO reads it):
//!
//! * `numpy`: the data's dims right-aligned into the target's, each 1 or equal; the output has
//!   the target shape ([`numpy_onto`](crate::broadcast::numpy_onto));
//! * `explicit` (also `none`, as OpenVINO reads it): data dim `i` goes to output axis
//!   `axes_mapping[i]` (one element per data dim, strictly increasing, each an axis of the
//!   target); each data dim is 1 or equal to the target's; the output has the target shape.
//!   Scalar data may map one axis (read as a `[1]`, as OpenVINO does);
//! * `bidirectional` (Broadcast-3 only): numpy's rule both ways, numpy's
//!   `data * ones(target_shape)` ([`numpy`](crate::broadcast::numpy)); the output may be larger
//!   than the target;
//! * `pdpd` (on no spec page; OpenVINO accepts it): the data placed into the target from axis
//!   `axis` (−1: `rank(target) − rank(data)`) by [`pdpd`](crate::broadcast::pdpd), the target
//!   as A and the data as B; the output has the target shape. The axis is the attribute
//!   OpenVINO's attribute visitor names `mode.auto_broadcast_axis` (Broadcast-1) and
//!   `mode.mode.axis` (Broadcast-3): an integer ≥ −1, default −1 (the broadcast rules' default;
//!   OpenVINO's loader reads 0).
//!
//! Decisions: `explicit` without `axes_mapping` is an error (OpenVINO reads a Broadcast-1 so
//! written as numpy). Broadcast-3 refuses `axes_mapping` with any other mode, and Broadcast-1
//! ignores it, as OpenVINO does; a Broadcast-1 with `axes_mapping` and no `mode` is explicit
//! (OpenVINO's reading; the spec's default would ignore the mapping). In `pdpd` a data dim larger
//! than the target's (a target dim of 1) is an error: the output keeps the target shape, as the
//! spec says of every mode (OpenVINO grows the output there).
//!
//! Inference: a known target gives exact dims, bounds of it (ShapeOf → Concat → Broadcast)
//! interval dims, and an unknown target of known length that many dynamic dims; in each case a
//! data dim that cannot be 1 refines the output dim it maps to. Bounds of shape values pass
//! through the data input. Execution checks the output against the memory budget first, then
//! copies the runs of a [`Plan`]: each a slice of the data, or one element repeated.

use std::fmt;

use super::{Arity, AttrError, Attrs, EvalCx, EvalError, InferCx, Op, OpDef};
use crate::broadcast::{self as bc, AutoBroadcast, BroadcastError, Plan};
use crate::error::ErrorKind;
use crate::shape::{Dim, PartialShape, TensorType};
use crate::tensor::{Element, Tensor, TypeSet};

/// How the data's axes map to the output's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Numpy,
    /// `explicit` or `none`: by the `axes_mapping` input.
    Explicit,
    /// Broadcast-3 only.
    Bidirectional,
    /// The data placed into the target from `axis` (−1: aligned to the end).
    Pdpd {
        axis: i64,
    },
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Mode::Numpy => f.write_str("numpy"),
            Mode::Explicit => f.write_str("explicit"),
            Mode::Bidirectional => f.write_str("bidirectional"),
            Mode::Pdpd { axis } => write!(f, "pdpd (axis {axis})"),
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Broadcast {
    pub version: u32,
    pub mode: Mode,
    /// Whether `mode` was written (a Broadcast-1 with `axes_mapping` and no mode is explicit).
    pub mode_written: bool,
}

pub const BROADCAST_1: OpDef = OpDef {
    name: "Broadcast",
    version: 1,
    inputs: Arity::range(2, 3),
    outputs: Arity::exactly(1),
    parse: parse_1,
};

pub const BROADCAST_3: OpDef = OpDef {
    version: 3,
    parse: parse_3,
    ..BROADCAST_1
};

/// The attribute holding Broadcast-1's pdpd axis (the key really contains a dot).
pub const AXIS_ATTR_1: &str = "mode.auto_broadcast_axis";
/// The attribute holding Broadcast-3's pdpd axis (OpenVINO's visitor nests `mode` twice).
pub const AXIS_ATTR_3: &str = "mode.mode.axis";

/// A target of unknown value but known length gives that many dynamic dims up to this length;
/// a longer one is read as a dynamic rank, not allocated.
const MAX_UNKNOWN_RANK: u64 = 1024;

fn parse_1(a: &Attrs) -> Result<Box<dyn Op>, Vec<AttrError>> {
    parse(a, 1)
}

fn parse_3(a: &Attrs) -> Result<Box<dyn Op>, Vec<AttrError>> {
    parse(a, 3)
}

fn parse(a: &Attrs, version: u32) -> Result<Box<dyn Op>, Vec<AttrError>> {
    let axis_attr = if version == 1 {
        AXIS_ATTR_1
    } else {
        AXIS_ATTR_3
    };
    let written = a.get("mode");
    let is = |m: &str, name: &str| m.eq_ignore_ascii_case(name);
    let mode = match written {
        None => Mode::Numpy,
        Some(m) if is(m, "numpy") => Mode::Numpy,
        Some(m) if is(m, "explicit") || is(m, "none") => Mode::Explicit,
        Some(m) if version >= 3 && is(m, "bidirectional") => Mode::Bidirectional,
        Some(m) if is(m, "pdpd") => {
            let axis = a
                .parse_or(axis_attr, -1, |t| match super::parse_i64(t)? {
                    v if v < -1 => Err(
                        "a pdpd axis is -1 (the data aligned to the end of the target) or a non-negative axis"
                            .into(),
                    ),
                    v => Ok(v),
                })
                .map_err(|e| vec![e])?;
            Mode::Pdpd { axis }
        }
        Some(_) => {
            let expected = if version >= 3 {
                "numpy, explicit, bidirectional or pdpd"
            } else {
                "numpy, explicit or pdpd"
            };
            return Err(vec![a.invalid("mode", format!("expected {expected}"))]);
        }
    };
    Ok(Box::new(Broadcast {
        version,
        mode,
        mode_written: written.is_some(),
    }))
}

impl Broadcast {
    /// The mode a layer with `inputs` inputs runs in, or why its inputs do not fit its mode.
    fn effective(&self, inputs: usize) -> Result<Mode, String> {
        let mapped = inputs > 2;
        match self.mode {
            Mode::Explicit if !mapped => {
                Err("mode explicit needs the axes_mapping input (input 2), which is missing".into())
            }
            Mode::Numpy if mapped && self.version == 1 && !self.mode_written => Ok(Mode::Explicit),
            m if mapped && self.version >= 3 && m != Mode::Explicit => Err(format!(
                "axes_mapping (input 2) is given, but mode {m} takes none (only explicit does)"
            )),
            m => Ok(m),
        }
    }
}

/// The elements of a 1-D integer input as dims, for inference: exact for a known value,
/// intervals for bounds, dynamic for an unknown value of known length (a length above 1024 is
/// read as unknown); `Ok(None)` when the length is unknown. A negative element is an error
/// naming the input `what`. (Tile's `repeats` reads the same way.)
pub fn int_dims(t: &TensorType, what: &str) -> Result<Option<Vec<Dim>>, String> {
    if let Some(b) = t.int_bounds() {
        return (0..b.len())
            .map(|k| match (b.lo[k], b.hi[k]) {
                (lo, hi) if lo == hi && lo < 0 => {
                    Err(format!("{what} element {k} is {lo}; it cannot be negative"))
                }
                (_, hi) if hi < 0 => Err(format!(
                    "{what} element {k} is at most {hi}; it cannot be negative"
                )),
                _ => Ok(b.dim(k).unwrap_or(Dim::DYNAMIC)),
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some);
    }
    Ok(match t.shape.dims() {
        Some([d]) => match d.get_static() {
            Some(n) if n <= MAX_UNKNOWN_RANK => Some(vec![Dim::DYNAMIC; n as usize]),
            _ => None,
        },
        _ => None,
    })
}

/// The output shape for data of shape `data` and target dims `target`; for `explicit`, the
/// `axes_mapping` value if known and its length if known. `Err((input port, reason))`.
fn out_shape(
    mode: Mode,
    data: &PartialShape,
    target: &[Dim],
    axes: Option<&[i64]>,
    axes_len: Option<usize>,
) -> Result<PartialShape, (usize, String)> {
    let target_shape = PartialShape::new(target.to_vec());
    let fail = |e: BroadcastError, note: &str| {
        let at = e
            .axis
            .map_or(String::new(), |a| format!("at output axis {a}, "));
        (
            0,
            format!(
                "the data {data} does not broadcast to the target {target_shape} in {mode} mode{note}: {at}{}",
                e.reason
            ),
        )
    };
    match mode {
        Mode::Numpy => bc::numpy_onto(data, &target_shape).map_err(|e| fail(e, "")),
        Mode::Bidirectional => bc::numpy(data, &target_shape).map_err(|e| fail(e, "")),
        Mode::Pdpd { .. } if data.rank().is_none() => Ok(target_shape),
        Mode::Pdpd { axis } => bc::pdpd(&target_shape, data, axis)
            .map_err(|e| fail(e, " (A is the target, B the data)")),
        Mode::Explicit => explicit(data, target, axes, axes_len).map(PartialShape::new),
    }
}

/// `explicit`: the target's dims, checked against (and refined by) the data dims that
/// `axes` maps to them.
fn explicit(
    data: &PartialShape,
    target: &[Dim],
    axes: Option<&[i64]>,
    axes_len: Option<usize>,
) -> Result<Vec<Dim>, (usize, String)> {
    let mut out = target.to_vec();
    let n = axes.map(<[i64]>::len).or(axes_len);
    if let (Some(rank), Some(n)) = (data.rank(), n) {
        // A scalar may map one axis (as a [1]).
        let fits = n == rank || (rank == 0 && n == 1);
        if !fits {
            return Err((
                2,
                format!(
                    "axes_mapping has {n} elements but the data has rank {rank}: it maps each data axis to an output axis"
                ),
            ));
        }
    }
    let Some(axes) = axes else {
        return Ok(out);
    };
    let mut previous: Option<i64> = None;
    for (i, &a) in axes.iter().enumerate() {
        if usize::try_from(a).is_ok_and(|a| a < target.len()) {
            if let Some(p) = previous
                && a <= p
            {
                return Err((
                    2,
                    format!(
                        "axes_mapping must be strictly increasing, but element {i} ({a}) follows {p}"
                    ),
                ));
            }
            previous = Some(a);
        } else {
            return Err((
                2,
                format!(
                    "axes_mapping element {i} is {a}, not an axis of the {}-dim target",
                    target.len()
                ),
            ));
        }
    }
    let Some(dims) = data.dims() else {
        return Ok(out);
    };
    for (i, (&d, &a)) in dims.iter().zip(axes).enumerate() {
        // In range: checked above.
        let a = a as usize;
        let t = target[a];
        if d.contains(1) {
            continue;
        }
        out[a] = t.merge(d).ok_or_else(|| {
            (
                0,
                format!(
                    "data dim {i} ({d}) maps to output axis {a}, whose target dim is {t}: it must be 1 or {t}"
                ),
            )
        })?;
    }
    Ok(out)
}

/// The data's shape with 1s inserted up to the output's rank where `mode` places them: the
/// shape whose one-directional numpy broadcast to the output is the copy.
fn aligned(mode: Mode, data: &[usize], rank: usize, axes: &[i64]) -> Option<Vec<usize>> {
    match mode {
        Mode::Numpy | Mode::Bidirectional => {
            let mut v = vec![1; rank.checked_sub(data.len())?];
            v.extend_from_slice(data);
            Some(v)
        }
        Mode::Explicit => {
            let mut v = vec![1; rank];
            for (&d, &a) in data.iter().zip(axes) {
                *v.get_mut(usize::try_from(a).ok()?)? = d;
            }
            Some(v)
        }
        Mode::Pdpd { axis } => bc::pdpd_b_as_numpy(rank, data, axis),
    }
}

/// The element count of a shape (0 if any dim is 0, however large the others), or `None` if
/// it overflows `usize`.
pub(crate) fn elements(shape: &[usize]) -> Option<usize> {
    if shape.contains(&0) {
        return Some(0);
    }
    shape.iter().try_fold(1usize, |n, &d| n.checked_mul(d))
}

/// The values of 1-D integer input `i` (`what` names it in errors).
fn ints_1d(cx: &EvalCx<'_>, i: usize, what: &str) -> Result<Vec<i64>, EvalError> {
    let rank = cx.value(i).shape().len();
    if rank != 1 {
        return Err(EvalError::Invalid(format!(
            "{what} must be 1-D, not rank {rank}"
        )));
    }
    cx.ints(i)
}

/// `data` (row-major) broadcast to `out` as if of shape `aligned` (its shape with 1s
/// inserted): the runs of the broadcast plan, each a slice copied or one element repeated.
fn copy<T: Element>(
    data: &Tensor,
    out: &[usize],
    aligned: &[usize],
    total: usize,
) -> Result<Tensor, EvalError> {
    let src = crate::ops::kernel::contiguous::<T>(data)
        .ok_or(EvalError::Internal("Broadcast's data type"))?;
    let mut v: Vec<T> = Vec::with_capacity(total);
    if total > 0 {
        let plan = Plan::new(AutoBroadcast::Numpy, out, aligned)
            .filter(|p| p.out == out && p.len() == total)
            .ok_or(EvalError::Internal("Broadcast's copy plan"))?;
        let mut ok = true;
        plan.runs(0, total, |r| {
            if r.b_step {
                match r.b.checked_add(r.len).and_then(|end| src.get(r.b..end)) {
                    Some(s) => v.extend_from_slice(s),
                    None => ok = false,
                }
            } else {
                match src.get(r.b) {
                    Some(&x) => v.extend(std::iter::repeat_n(x, r.len)),
                    None => ok = false,
                }
            }
            ok
        });
        if !ok || v.len() != total {
            return Err(EvalError::Internal("Broadcast's copy"));
        }
    }
    ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(out), v)
        .map(T::wrap)
        .map_err(|_| EvalError::Invalid(format!("the output shape {out:?} is too large")))
}

impl Op for Broadcast {
    fn def(&self) -> Option<&'static OpDef> {
        Some(if self.version == 1 {
            &BROADCAST_1
        } else {
            &BROADCAST_3
        })
    }

    fn infer(&self, cx: &mut InferCx<'_>) -> Option<Vec<TensorType>> {
        let inputs = cx.inputs().len();
        let mode = match self.effective(inputs) {
            Ok(m) => m,
            Err(reason) if inputs > 2 => return cx.invalid(2, reason),
            Err(reason) => {
                cx.report(ErrorKind::InvalidInput { reason });
                return None;
            }
        };
        cx.require(1..2, TypeSet::INT)?;
        if mode == Mode::Explicit {
            cx.require(2..3, TypeSet::INT)?;
        }
        let (data, target) = (cx.input(0), cx.input(1));
        let ty = data.element_type;
        if let Some(r) = target.shape.rank()
            && r != 1
        {
            return cx.invalid(1, format!("target_shape must be 1-D, not rank {r}"));
        }
        let (axes, axes_len) = if mode == Mode::Explicit {
            match cx.input(2).shape.dims() {
                None => (cx.ints(2), None),
                Some([n]) => (
                    cx.ints(2),
                    n.get_static().and_then(|n| usize::try_from(n).ok()),
                ),
                Some(d) => {
                    return cx
                        .invalid(2, format!("axes_mapping must be 1-D, not rank {}", d.len()));
                }
            }
        } else {
            (None, None)
        };
        let target = match int_dims(target, "target_shape") {
            Ok(Some(t)) => t,
            Ok(None) => return Some(vec![TensorType::new(ty, PartialShape::dynamic_rank())]),
            Err(reason) => return cx.invalid(1, reason),
        };
        match out_shape(mode, &data.shape, &target, axes.as_deref(), axes_len) {
            Ok(shape) => Some(vec![TensorType::new(ty, shape)]),
            Err((port, reason)) => cx.invalid(port, reason),
        }
    }

    fn eval(&self, cx: &EvalCx<'_>) -> Result<Vec<Tensor>, EvalError> {
        let mode = self.effective(cx.len()).map_err(EvalError::Invalid)?;
        let data = cx.tensor(0)?;
        let ty = data.element_type();
        let target = ints_1d(cx, 1, "target_shape")?;
        let axes = if mode == Mode::Explicit {
            ints_1d(cx, 2, "axes_mapping")?
        } else {
            Vec::new()
        };
        let target: Vec<Dim> = target
            .iter()
            .enumerate()
            .map(|(k, &v)| {
                u64::try_from(v).map(Dim::fixed).map_err(|_| {
                    EvalError::Invalid(format!(
                        "target_shape element {k} is {v}; it cannot be negative"
                    ))
                })
            })
            .collect::<Result<_, _>>()?;
        let dshape = data.shape();
        let explicit_axes = (mode == Mode::Explicit).then_some(&axes[..]);
        let shape = out_shape(
            mode,
            &PartialShape::of_tensor(dshape),
            &target,
            explicit_axes,
            explicit_axes.map(<[i64]>::len),
        )
        .map_err(|(_, reason)| EvalError::Invalid(reason))?;
        let out = shape.to_tensor_dims().ok_or_else(|| {
            EvalError::Invalid(format!(
                "the output shape {shape} does not fit this machine's sizes"
            ))
        })?;
        let Some(total) = elements(&out) else {
            // More elements than memory can address: over any budget.
            cx.reserve(ty, usize::MAX)?;
            return Err(EvalError::Invalid(format!(
                "the output shape {shape} has more elements than memory can address"
            )));
        };
        cx.reserve(ty, total)?;
        let aligned = aligned(mode, dshape, out.len(), &axes)
            .ok_or(EvalError::Internal("Broadcast's data alignment"))?;
        crate::dispatch!(any: ty, T => copy::<T>(&data, &out, &aligned, total), _ => Err(EvalError::UnsupportedType {
            op: "Broadcast".into(),
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

    /// A table row: the version, the attributes, the inputs, and what is expected.
    type Case<'a, I, W> = (u32, Vec<(&'a str, &'a str)>, Vec<I>, W);

    fn t<T: Element>(shape: &[usize], v: Vec<T>) -> Tensor {
        crate::ops::context::tensor_for_test(shape, v)
    }

    fn ints(v: &[i64]) -> Tensor {
        t(&[v.len()], v.to_vec())
    }

    fn f32s(shape: &[usize], v: &[f32]) -> Tensor {
        t(shape, v.to_vec())
    }

    fn op(version: u32, attrs: &[(&str, &str)]) -> Result<Box<dyn Op>, Vec<AttrError>> {
        let data = crate::ops::context::attrs_for_test(attrs);
        let a = Attrs::new(Some(&data));
        if version == 1 {
            parse_1(&a)
        } else {
            parse_3(&a)
        }
    }

    fn run(op: &dyn Op, inputs: &[Tensor], limit: u64) -> Result<Tensor, EvalError> {
        crate::ops::context::eval_for_test(op, inputs, limit)
    }

    /// A tensor as its type, shape and bytes (NaNs and −0 compared bit for bit).
    fn bits(t: &Tensor) -> (ElementType, Vec<usize>, Vec<u8>) {
        (t.element_type(), t.shape().to_vec(), t.to_le_bytes())
    }

    /// Every mode, several element types: the output bit for bit.
    #[test]
    fn eval_table() {
        let nan = f16::from_bits(0x7e01);
        let cases: Vec<Case<Tensor, Tensor>> = vec![
            // numpy
            (
                3,
                vec![],
                vec![f32s(&[3], &[1., 2., 3.]), ints(&[2, 3])],
                f32s(&[2, 3], &[1., 2., 3., 1., 2., 3.]),
            ),
            (
                1,
                vec![("mode", "numpy")],
                vec![t(&[2, 1], vec![1i64, 2]), ints(&[2, 3])],
                t(&[2, 3], vec![1i64, 1, 1, 2, 2, 2]),
            ),
            (
                3,
                vec![("mode", "NUMPY")],
                vec![t(&[], vec![7u8]), ints(&[2, 2])],
                t(&[2, 2], vec![7u8; 4]),
            ),
            (
                3,
                vec![],
                vec![t(&[1, 2], vec![true, false]), ints(&[3, 1, 2])],
                t(&[3, 1, 2], vec![true, false, true, false, true, false]),
            ),
            (
                3,
                vec![],
                vec![t(&[2], vec![f16::NEG_ZERO, nan]), ints(&[2, 2])],
                t(&[2, 2], vec![f16::NEG_ZERO, nan, f16::NEG_ZERO, nan]),
            ),
            (
                3,
                vec![],
                vec![f32s(&[1], &[5.]), ints(&[0, 3])],
                f32s(&[0, 3], &[]),
            ),
            (
                3,
                vec![],
                vec![t(&[], vec![3i32]), t(&[0], Vec::<i32>::new())],
                t(&[], vec![3i32]),
            ),
            // explicit
            (
                3,
                vec![("mode", "explicit")],
                vec![f32s(&[3], &[1., 2., 3.]), ints(&[2, 3, 2]), ints(&[1])],
                f32s(
                    &[2, 3, 2],
                    &[1., 1., 2., 2., 3., 3., 1., 1., 2., 2., 3., 3.],
                ),
            ),
            (
                1,
                vec![("mode", "explicit")],
                vec![
                    t(&[2, 3], vec![1i64, 2, 3, 4, 5, 6]),
                    ints(&[2, 2, 3]),
                    ints(&[0, 2]),
                ],
                t(&[2, 2, 3], vec![1i64, 2, 3, 1, 2, 3, 4, 5, 6, 4, 5, 6]),
            ),
            (
                1,
                vec![("mode", "none")],
                vec![t(&[1, 3], vec![1u8, 2, 3]), ints(&[2, 2, 3]), ints(&[1, 2])],
                t(&[2, 2, 3], [1u8, 2, 3].repeat(4)),
            ),
            // A scalar maps one axis as a [1].
            (
                3,
                vec![("mode", "explicit")],
                vec![t(&[], vec![true]), ints(&[2, 3]), ints(&[1])],
                t(&[2, 3], vec![true; 6]),
            ),
            // Broadcast-1 with axes_mapping and no mode: explicit.
            (
                1,
                vec![],
                vec![f32s(&[2], &[1., 2.]), ints(&[2, 3]), ints(&[0])],
                f32s(&[2, 3], &[1., 1., 1., 2., 2., 2.]),
            ),
            // Broadcast-1 with a mode written: axes_mapping ignored.
            (
                1,
                vec![("mode", "numpy")],
                vec![f32s(&[2], &[1., 2.]), ints(&[3, 2]), ints(&[0])],
                f32s(&[3, 2], &[1., 2., 1., 2., 1., 2.]),
            ),
            // bidirectional
            (
                3,
                vec![("mode", "bidirectional")],
                vec![t(&[3, 1], vec![1i64, 2, 3]), ints(&[1, 2])],
                t(&[3, 2], vec![1i64, 1, 2, 2, 3, 3]),
            ),
            (
                3,
                vec![("mode", "bidirectional")],
                vec![f32s(&[2, 3], &[1., 2., 3., 4., 5., 6.]), ints(&[3])],
                f32s(&[2, 3], &[1., 2., 3., 4., 5., 6.]),
            ),
            (
                3,
                vec![("mode", "bidirectional")],
                vec![
                    t(&[3], vec![f16::ONE, nan, f16::NEG_ZERO]),
                    ints(&[2, 1, 1]),
                ],
                t(
                    &[2, 1, 3],
                    vec![f16::ONE, nan, f16::NEG_ZERO, f16::ONE, nan, f16::NEG_ZERO],
                ),
            ),
            // pdpd
            (
                3,
                vec![("mode", "pdpd"), ("mode.mode.axis", "1")],
                vec![f32s(&[3], &[1., 2., 3.]), ints(&[2, 3, 2])],
                f32s(
                    &[2, 3, 2],
                    &[1., 1., 2., 2., 3., 3., 1., 1., 2., 2., 3., 3.],
                ),
            ),
            (
                1,
                vec![("mode", "pdpd")],
                vec![t(&[2], vec![1u8, 2]), ints(&[3, 2])],
                t(&[3, 2], vec![1u8, 2, 1, 2, 1, 2]),
            ),
            (
                1,
                vec![("mode", "pdpd"), ("mode.auto_broadcast_axis", "0")],
                vec![t(&[2, 1], vec![true, false]), ints(&[2, 3])],
                t(&[2, 3], vec![true, true, true, false, false, false]),
            ),
        ];
        for (k, (version, attrs, inputs, want)) in cases.iter().enumerate() {
            let op = op(*version, attrs).unwrap();
            let got = run(&*op, inputs, 1 << 20)
                .unwrap_or_else(|e| panic!("case {k} (Broadcast-{version} {attrs:?}): {e}"));
            assert_eq!(
                bits(&got),
                bits(want),
                "case {k} (Broadcast-{version} {attrs:?})"
            );
        }
    }

    /// The copy against ndarray's broadcast of the aligned data, on shapes that coalesce in
    /// different ways.
    #[test]
    fn copies_match_ndarray() {
        let shapes: [(&[usize], &[i64], &[i64]); 6] = [
            (&[4, 1, 3], &[2, 4, 5, 3], &[]),
            (&[1, 5, 1], &[3, 5, 4], &[]),
            (&[6], &[2, 3, 6], &[]),
            (&[2, 1], &[2, 7], &[]),
            (&[3, 4], &[3, 2, 4, 2], &[0, 2]),
            (&[5], &[5, 1, 3], &[0]),
        ];
        for (dshape, target, axes) in shapes {
            let n: usize = dshape.iter().product();
            let v: Vec<i32> = (0..n as i32).collect();
            let data = t(dshape, v.clone());
            let mode = if axes.is_empty() { "numpy" } else { "explicit" };
            let op = op(3, &[("mode", mode)]).unwrap();
            let mut inputs = vec![data, ints(target)];
            if !axes.is_empty() {
                inputs.push(ints(axes));
            }
            let got = run(&*op, &inputs, 1 << 20).unwrap();
            let out: Vec<usize> = target.iter().map(|&d| d as usize).collect();
            let m = if axes.is_empty() {
                Mode::Numpy
            } else {
                Mode::Explicit
            };
            let al = aligned(m, dshape, out.len(), axes).unwrap();
            let want = ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(&al), v)
                .unwrap()
                .broadcast(ndarray::IxDyn(&out))
                .unwrap()
                .to_owned();
            assert_eq!(got, Tensor::from(want), "{dshape:?} to {target:?} {axes:?}");
        }
    }

    #[test]
    fn eval_errors() {
        let f = |v: &[f32]| f32s(&[v.len()], v);
        let cases: Vec<Case<Tensor, &str>> = vec![
            (
                3,
                vec![],
                vec![f(&[1., 2., 3.]), ints(&[4])],
                "at output axis 0, the data's 3 cannot be broadcast to 4",
            ),
            (
                3,
                vec![],
                vec![f32s(&[2, 3], &[0.; 6]), ints(&[3])],
                "numpy mode broadcasts the data onto the target only",
            ),
            (
                3,
                vec![],
                vec![f(&[1.]), ints(&[-1, 3])],
                "target_shape element 0 is -1; it cannot be negative",
            ),
            (
                3,
                vec![],
                vec![f(&[1.]), t(&[1, 2], vec![2i64, 3])],
                "target_shape must be 1-D, not rank 2",
            ),
            (
                3,
                vec![("mode", "explicit")],
                vec![f32s(&[2, 2], &[0.; 4]), ints(&[2, 2, 2]), ints(&[1, 0])],
                "strictly increasing, but element 1 (0) follows 1",
            ),
            (
                3,
                vec![("mode", "explicit")],
                vec![f32s(&[2, 2], &[0.; 4]), ints(&[2, 2, 2]), ints(&[1, 1])],
                "strictly increasing, but element 1 (1) follows 1",
            ),
            (
                3,
                vec![("mode", "explicit")],
                vec![f(&[0., 0.]), ints(&[2, 2]), ints(&[5])],
                "axes_mapping element 0 is 5, not an axis of the 2-dim target",
            ),
            (
                3,
                vec![("mode", "explicit")],
                vec![f(&[0., 0.]), ints(&[2, 2]), ints(&[-1])],
                "axes_mapping element 0 is -1",
            ),
            (
                3,
                vec![("mode", "explicit")],
                vec![f(&[0., 0.]), ints(&[2, 2]), ints(&[0, 1])],
                "axes_mapping has 2 elements but the data has rank 1",
            ),
            (
                3,
                vec![("mode", "explicit")],
                vec![f(&[0., 0., 0.]), ints(&[2, 2]), ints(&[1])],
                "data dim 0 (3) maps to output axis 1, whose target dim is 2",
            ),
            (
                3,
                vec![("mode", "explicit")],
                vec![f(&[0.]), ints(&[2])],
                "mode explicit needs the axes_mapping input",
            ),
            (
                1,
                vec![("mode", "explicit")],
                vec![f(&[0.]), ints(&[2])],
                "mode explicit needs the axes_mapping input",
            ),
            (
                3,
                vec![("mode", "numpy")],
                vec![f(&[0.]), ints(&[2]), ints(&[0])],
                "axes_mapping (input 2) is given, but mode numpy takes none",
            ),
            (
                3,
                vec![("mode", "bidirectional")],
                vec![f(&[0., 0.]), ints(&[3])],
                "cannot be broadcast together",
            ),
            (
                3,
                vec![("mode", "pdpd")],
                vec![f(&[0., 0., 0.]), ints(&[2, 1])],
                "B's 3 is larger than A's 1",
            ),
            (
                3,
                vec![("mode", "pdpd"), ("mode.mode.axis", "1")],
                vec![f32s(&[2, 2], &[0.; 4]), ints(&[2, 2])],
                "reaches past A's rank 2",
            ),
        ];
        for (k, (version, attrs, inputs, want)) in cases.iter().enumerate() {
            let op = op(*version, attrs).unwrap();
            match run(&*op, inputs, 1 << 20) {
                Err(EvalError::Invalid(m)) => assert!(m.contains(want), "case {k}: {m}"),
                other => panic!("case {k}: expected an error with {want:?}, got {other:?}"),
            }
        }
    }

    /// The budget is checked before the output is allocated; a count that overflows is over
    /// budget too; neither panics.
    #[test]
    fn allocation_bombs_hit_the_budget() {
        let numpy = op(3, &[]).unwrap();
        let data = f32s(&[1], &[1.]);
        for target in [
            vec![1 << 20, 1 << 20],
            vec![i64::MAX, i64::MAX, 2],
            vec![1 << 62, 1 << 62],
            vec![i64::MAX],
        ] {
            let got = run(&*numpy, &[data.clone(), ints(&target)], 1 << 20);
            assert!(
                matches!(got, Err(EvalError::Memory(_))),
                "{target:?}: {got:?}"
            );
        }
        // Zero elements however large the other dims: no allocation, and no panic.
        let got = run(
            &*numpy,
            &[data.clone(), ints(&[i64::MAX, i64::MAX, 0])],
            1 << 20,
        );
        assert!(got.is_err() || got.is_ok_and(|t| t.is_empty()));
        // Bidirectional and explicit bombs too.
        let bidi = op(3, &[("mode", "bidirectional")]).unwrap();
        let got = run(&*bidi, &[data.clone(), ints(&[1 << 40, 1 << 40])], 1 << 20);
        assert!(matches!(got, Err(EvalError::Memory(_))), "{got:?}");
        let explicit = op(3, &[("mode", "explicit")]).unwrap();
        let got = run(
            &*explicit,
            &[data, ints(&[1 << 40, 1 << 40]), ints(&[1])],
            1 << 20,
        );
        assert!(matches!(got, Err(EvalError::Memory(_))), "{got:?}");
    }

    #[test]
    fn attributes() {
        let mode = |v: u32, attrs: &[(&str, &str)]| match op(v, attrs) {
            Ok(_) => "ok".to_owned(),
            Err(e) => format!("error {}", e[0].name),
        };
        assert_eq!(mode(3, &[]), "ok");
        assert_eq!(mode(3, &[("mode", "Bidirectional")]), "ok");
        assert_eq!(mode(1, &[("mode", "bidirectional")]), "error mode");
        assert_eq!(mode(3, &[("mode", "bogus")]), "error mode");
        assert_eq!(mode(3, &[("mode", "")]), "error mode");
        assert_eq!(
            mode(3, &[("mode", "pdpd"), ("mode.mode.axis", "-2")]),
            "error mode.mode.axis"
        );
        assert_eq!(
            mode(3, &[("mode", "pdpd"), ("mode.mode.axis", "x")]),
            "error mode.mode.axis"
        );
        assert_eq!(
            mode(1, &[("mode", "pdpd"), ("mode.auto_broadcast_axis", "1.5")]),
            "error mode.auto_broadcast_axis"
        );
        // The axis is read for pdpd only.
        assert_eq!(mode(3, &[("mode", "numpy"), ("mode.mode.axis", "x")]), "ok");
        let b = |v: u32, attrs: &[(&str, &str)]| {
            let o = op(v, attrs).unwrap();
            format!("{:?} {o:?}", o.def().unwrap())
        };
        assert!(b(1, &[("mode", "pdpd")]).contains("Pdpd { axis: -1 }"));
        assert!(b(3, &[("mode", "pdpd"), ("mode.mode.axis", "2")]).contains("Pdpd { axis: 2 }"));
        assert!(
            b(1, &[("mode", "PDPD"), ("mode.auto_broadcast_axis", "0")])
                .contains("Pdpd { axis: 0 }")
        );
        assert!(b(3, &[("mode", "none")]).starts_with("Broadcast-3"));
        assert!(b(3, &[("mode", "none")]).contains("Explicit"));
    }

    /// Runs inference: the output shape, or the findings.
    fn infer(op: &dyn Op, inputs: &[TensorType]) -> Result<String, String> {
        let refs: Vec<&TensorType> = inputs.iter().collect();
        crate::ops::context::inferred_shape_for_test(op, &refs)
    }

    fn ty(shape: &str) -> TensorType {
        TensorType::new(ElementType::F32, PartialShape::parse(shape).unwrap())
    }

    fn known(v: &[i64]) -> TensorType {
        TensorType::of_value(ints(v))
    }

    fn unknown(len: &str) -> TensorType {
        TensorType::new(ElementType::I64, PartialShape::parse(len).unwrap())
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
        let cases: Vec<Case<TensorType, &str>> = vec![
            (3, vec![], vec![ty("3"), known(&[2, 3])], "[2,3]"),
            (3, vec![], vec![ty("?,1"), known(&[2, 3])], "[2,3]"),
            (3, vec![], vec![ty("..."), known(&[2, 3])], "[2,3]"),
            (
                3,
                vec![],
                vec![ty("3"), bounded(&[1, 0], &[UNBOUNDED, 5])],
                "[1..,3]",
            ),
            (
                3,
                vec![],
                vec![ty("1"), bounded(&[1, 0], &[8, 5])],
                "[1..8,..5]",
            ),
            (3, vec![], vec![ty("?,4"), unknown("3")], "[?,?,4]"),
            (3, vec![], vec![ty("4"), unknown("?")], "[...]"),
            (1, vec![], vec![ty("4"), unknown("2")], "[?,4]"),
            (
                3,
                vec![("mode", "bidirectional")],
                vec![ty("2,3"), known(&[4, 1, 1])],
                "[4,2,3]",
            ),
            (
                3,
                vec![("mode", "bidirectional")],
                vec![ty("2,3"), unknown("1")],
                "[2,3]",
            ),
            (
                3,
                vec![("mode", "bidirectional")],
                vec![ty("2,1"), unknown("3")],
                "[?,2,?]",
            ),
            (
                3,
                vec![("mode", "explicit")],
                vec![ty("3"), known(&[2, 3, 4]), known(&[1])],
                "[2,3,4]",
            ),
            (
                3,
                vec![("mode", "explicit")],
                vec![ty("3"), unknown("3"), known(&[1])],
                "[?,3,?]",
            ),
            (
                3,
                vec![("mode", "explicit")],
                vec![ty("3"), known(&[2, 3, 4]), unknown("1")],
                "[2,3,4]",
            ),
            (
                3,
                vec![("mode", "pdpd"), ("mode.mode.axis", "1")],
                vec![ty("3"), known(&[2, 3, 4])],
                "[2,3,4]",
            ),
            (
                1,
                vec![("mode", "pdpd")],
                vec![ty("4"), unknown("2")],
                "[?,4]",
            ),
        ];
        for (k, (version, attrs, inputs, want)) in cases.iter().enumerate() {
            let op = op(*version, attrs).unwrap();
            assert_eq!(infer(&*op, inputs).as_deref(), Ok(*want), "case {k}");
        }
    }

    #[test]
    fn infer_errors() {
        let cases: Vec<Case<TensorType, &str>> = vec![
            (
                3,
                vec![],
                vec![ty("3"), known(&[4])],
                "Some((Input, 0)) the data [3] does not broadcast to the target [4] in numpy mode: at output axis 0",
            ),
            (
                3,
                vec![],
                vec![ty("3"), known(&[-4])],
                "Some((Input, 1)) target_shape element 0 is -4",
            ),
            (3, vec![], vec![ty("3"), known(&[])], "Some((Input, 0))"),
            (
                3,
                vec![],
                vec![ty("3"), unknown("2,2")],
                "target_shape must be 1-D",
            ),
            (
                3,
                vec![],
                vec![
                    ty("3"),
                    TensorType::new(ElementType::F32, PartialShape::parse("1").unwrap()),
                ],
                "Some((Input, 1))",
            ),
            (
                3,
                vec![("mode", "explicit")],
                vec![ty("3"), unknown("2")],
                "None mode explicit needs the axes_mapping input",
            ),
            (
                3,
                vec![("mode", "explicit")],
                vec![ty("2,3"), unknown("3"), unknown("1")],
                "Some((Input, 2)) axes_mapping has 1 elements but the data has rank 2",
            ),
            (
                3,
                vec![("mode", "explicit")],
                vec![ty("5"), known(&[2, 3]), known(&[1])],
                "Some((Input, 0)) data dim 0 (5) maps to output axis 1",
            ),
            (
                3,
                vec![("mode", "bidirectional")],
                vec![ty("3"), known(&[2]), known(&[0])],
                "Some((Input, 2)) axes_mapping (input 2) is given",
            ),
        ];
        for (k, (version, attrs, inputs, want)) in cases.iter().enumerate() {
            let op = op(*version, attrs).unwrap();
            match infer(&*op, inputs) {
                Err(m) => assert!(m.contains(want), "case {k}: {m}"),
                Ok(s) => panic!("case {k}: expected an error with {want:?}, got {s}"),
            }
        }
    }
}
