//! The scatters: ScatterUpdate-3, ScatterElementsUpdate-3, ScatterElementsUpdate-12,
//! ScatterNDUpdate-4 (the spec page calls it ScatterNDUpdate-3; OpenVINO registers it in
//! opset4, and ovir names versions as OpenVINO's opset table does) and ScatterNDUpdate-15.
//! Each copies `data` and writes `updates` into the copy at places `indices` name.
//!
//! Specs (movement/): <https://docs.openvino.ai/2026/documentation/openvino-ir-format/operation-sets/operation-specs/movement/scatter-update-3.html>,
//! `scatter-elements-update-3`, `scatter-elements-update-12`, `scatter-nd-update-3`,
//! `scatter-nd-update-15`.
//!
//! Ports and shapes (the output always has `data`'s element type and shape):
//! * ScatterUpdate-3: `data`, `indices`, `updates`, `axis`. Slice `indices[m..]` of `data`
//!   along `axis` is replaced: `data[p.., indices[m..], s..] = updates[p.., m.., s..]`, so
//!   `updates.shape = data.shape[:axis] + indices.shape + data.shape[axis + 1:]`.
//! * ScatterElementsUpdate-3/12: `data`, `indices`, `updates`, `axis`. `indices` has `data`'s
//!   rank and `updates` its shape; element `c` of `updates` goes to `data` at `c` with
//!   `c[axis]` replaced by `indices[c]`. A non-axis dim of `indices` may not exceed `data`'s
//!   (the spec's rule; OpenVINO does not check it and its reference then writes out of
//!   bounds); the axis dim may (duplicate indices), as the -12 page says — ovir applies that
//!   to -3 as well (the same reference kernel runs both).
//! * ScatterNDUpdate-4/15: `data` (rank r ≥ 1), `indices` (rank q ≥ 1, last dim k ≤ r),
//!   `updates`. Each row `indices[m.., :]` names a slice `data[i0, .., ik-1]` of shape
//!   `data.shape[k:]`, replaced by `updates[m..]`: `updates.shape = indices.shape[:-1] +
//!   data.shape[k:]`; when that is empty (k = r, q = 1), `updates` may have any shape of one
//!   element, as the spec says. k = 0 names the whole of `data`.
//! * `axis`: an integer scalar or one-element 1-D tensor in `-r..r` (negative counts from the
//!   end).
//!
//! Types: `data` and `updates` of one element type, any type ovir computes, `boolean`
//! included: the -12 and -15 pages define boolean reductions, the -3 pages say "any numeric
//! type" where the -15 page shows boolean to be one, and OpenVINO accepts and evaluates boolean
//! for all five. `indices`: any integer type for ScatterUpdate and ScatterElementsUpdate;
//! i32 or i64 for ScatterNDUpdate (its spec's T_IND; others are refused, E502). `axis`: any
//! integer type.
//!
//! Attributes: ScatterElementsUpdate-12 `reduction` (`none` default, `sum`, `prod`, `min`,
//! `max`, `mean`) and `use_init_val` (default true); ScatterNDUpdate-15 `reduction` (`none`
//! default, `sum`, `sub`, `prod`, `min`, `max`). Names and values are OpenVINO's (any case, as
//! OpenVINO reads enums); any other value is an attribute error.
//!
//! Indices (decisions): ScatterElementsUpdate-12 and ScatterNDUpdate-15 take `-d..d` (negative
//! counts from the end), as their specs say. **ScatterUpdate-3, ScatterElementsUpdate-3 and
//! ScatterNDUpdate-4 take only `0..d`** — their specs' range — **and refuse a negative index**
//! (OpenVINO's references read one from the end for ScatterElementsUpdate-3 and
//! ScatterNDUpdate-4; ScatterUpdate's reads far out of bounds), as Gather-1/7 do in ovir. Any
//! index out of range is an error (E507) naming its position in `indices`, its value and the
//! range allowed: every index is checked, even one whose slice is empty. ScatterNDUpdate checks
//! each coordinate against its own dim (OpenVINO's reference checks only the flat offset, so
//! `[0, 7]` into `[4, 3]` writes into row 2).
//!
//! Order (decisions): updates apply one after another in row-major order of `indices` (of its
//! rows for ScatterNDUpdate), on one thread, so the result is deterministic. With duplicate
//! indices and `none`, **the last write in that order wins** (the specs leave the order
//! undefined, the -14 page of ScatterNDUpdate says the last update is used; OpenVINO's
//! references apply the same order). Reductions combine in that order too:
//! `out = f(out, update)` (`sub`: `out − update`).
//!
//! Arithmetic (decisions): integers wrap (two's complement) for `sum`, `sub` and `prod`; floats
//! are IEEE in the type, f16 and bf16 computed in f32 and rounded once per step (round to
//! nearest even), as OpenVINO's reference steps in the type. `min` and `max` propagate NaN
//! (numpy `minimum`/`maximum`; the reference's `a < b ? a : b` keeps or drops a NaN depending
//! on the order) and order −0 below +0. Boolean: `sum` and `max` are OR, `prod` and `min` AND,
//! `sub` XOR (the specs' and the reference's rules); `mean` of boolean data is refused (E507),
//! as in OpenVINO.
//!
//! `mean` (ScatterElementsUpdate-12): over the updates of a place plus, with `use_init_val`,
//! its data value. Floats: the sum accumulated in the type in order, then divided by the count
//! in f32 (f16, bf16, f32) or f64 — the reference's formula. **Integers: the exact mean
//! rounded down (toward −∞), as the spec says; ovir sums exactly** where the reference divides a
//! sum that has already wrapped in the type, through a double (the same results until the sum
//! leaves the type or passes 2^53).
//!
//! `use_init_val = false` (decision): each place a reduction reaches takes the reduction of its
//! updates alone (its first update starts it); places no index reaches keep their data. The
//! reference starts such a place from the reduction's neutral value instead (0, 1, the type's
//! lowest or greatest finite value): the same on ordinary values, but ovir keeps −0 for a `sum`
//! of −0s and ±inf for `max` of −infs / `min` of +infs, where the reference gives +0 and the
//! finite extreme. With `none` the attribute has no effect, as the spec says.
//!
//! Inference: the output is `data`'s type and shape (a dynamic rank stays dynamic). The ranks
//! and dims the rules above tie together are checked wherever they are known, intervals
//! included (an updates dim must be able to equal its counterpart: `2..5` fits `3`, `6` does
//! not), and an axis or an index known at inference (indices of at most 4096 elements) is
//! checked against the dims it addresses (an index is refused once it is out of range for the
//! dim's largest value). Each mismatch is an invalid input (E507) naming the dims; `data` and
//! `updates` of two element types are E501. With reduction `none`, bounds of shape values pass
//! through `data` and `updates` (OpenVINO's `evaluate_lower`/`evaluate_upper`).
//!
//! Execution checks the shapes exactly, resolves every index (the first bad one is the error),
//! checks the output against the memory budget, copies `data` and applies the updates: whole
//! slices by `copy_from_slice` for ScatterUpdate and ScatterNDUpdate `none`, one element at a
//! time otherwise. `mean` and `use_init_val = false` keep a count (and for integers an exact
//! sum) per place reached, within the budget too.

use std::collections::HashMap;
use std::fmt;

use half::{bf16, f16};

use super::{Arity, AttrError, Attrs, EvalCx, EvalError, InferCx, Op, OpDef};
use crate::dtype::ElementType;
use crate::error::ErrorKind;
use crate::shape::{Dim, PartialShape, TensorType};
use crate::tensor::{Element, Tensor, TypeSet};

/// How an update combines with the value it lands on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reduction {
    /// The update replaces the value.
    None,
    Sum,
    /// `value − update` (ScatterNDUpdate-15).
    Sub,
    Prod,
    Min,
    Max,
    /// ScatterElementsUpdate-12.
    Mean,
}

impl Reduction {
    fn name(self) -> &'static str {
        match self {
            Reduction::None => "none",
            Reduction::Sum => "sum",
            Reduction::Sub => "sub",
            Reduction::Prod => "prod",
            Reduction::Min => "min",
            Reduction::Max => "max",
            Reduction::Mean => "mean",
        }
    }

    /// Parses one of `allowed` (any case).
    fn parse(text: &str, allowed: &[Reduction]) -> Result<Reduction, String> {
        allowed
            .iter()
            .copied()
            .find(|r| text.eq_ignore_ascii_case(r.name()))
            .ok_or_else(|| {
                let names: Vec<&str> = allowed.iter().map(|r| r.name()).collect();
                format!("expected one of {}", names.join(", "))
            })
    }
}

impl fmt::Display for Reduction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Which of the three scatters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    /// ScatterUpdate: slices along an axis.
    Update,
    /// ScatterElementsUpdate: single elements along an axis.
    Elements,
    /// ScatterNDUpdate: slices named by leading coordinates.
    Nd,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Scatter {
    pub form: Form,
    /// OpenVINO's version id: 3 or 12 (Elements), 4 or 15 (ND), 3 (Update).
    pub version: u32,
    pub reduction: Reduction,
    /// Whether a reduction starts from the data's value (ScatterElementsUpdate-12).
    pub use_init_val: bool,
}

pub const SCATTER_UPDATE_3: OpDef = OpDef {
    name: "ScatterUpdate",
    version: 3,
    inputs: Arity::exactly(4),
    outputs: Arity::exactly(1),
    parse: parse_update_3,
};

pub const SCATTER_ELEMENTS_UPDATE_3: OpDef = OpDef {
    name: "ScatterElementsUpdate",
    version: 3,
    inputs: Arity::exactly(4),
    outputs: Arity::exactly(1),
    parse: parse_elements_3,
};

pub const SCATTER_ELEMENTS_UPDATE_12: OpDef = OpDef {
    version: 12,
    parse: parse_elements_12,
    ..SCATTER_ELEMENTS_UPDATE_3
};

pub const SCATTER_ND_UPDATE_4: OpDef = OpDef {
    name: "ScatterNDUpdate",
    version: 4,
    inputs: Arity::exactly(3),
    outputs: Arity::exactly(1),
    parse: parse_nd_4,
};

pub const SCATTER_ND_UPDATE_15: OpDef = OpDef {
    version: 15,
    parse: parse_nd_15,
    ..SCATTER_ND_UPDATE_4
};

fn plain(form: Form, version: u32) -> Box<dyn Op> {
    Box::new(Scatter {
        form,
        version,
        reduction: Reduction::None,
        use_init_val: true,
    })
}

fn parse_update_3(_: &Attrs) -> Result<Box<dyn Op>, Vec<AttrError>> {
    Ok(plain(Form::Update, 3))
}

fn parse_elements_3(_: &Attrs) -> Result<Box<dyn Op>, Vec<AttrError>> {
    Ok(plain(Form::Elements, 3))
}

fn parse_nd_4(_: &Attrs) -> Result<Box<dyn Op>, Vec<AttrError>> {
    Ok(plain(Form::Nd, 4))
}

const ELEMENTS_12_REDUCTIONS: &[Reduction] = &[
    Reduction::None,
    Reduction::Sum,
    Reduction::Prod,
    Reduction::Min,
    Reduction::Max,
    Reduction::Mean,
];

const ND_15_REDUCTIONS: &[Reduction] = &[
    Reduction::None,
    Reduction::Sum,
    Reduction::Sub,
    Reduction::Prod,
    Reduction::Min,
    Reduction::Max,
];

fn parse_elements_12(a: &Attrs) -> Result<Box<dyn Op>, Vec<AttrError>> {
    let (reduction, use_init_val) = crate::attrs_all!(
        a.parse_or("reduction", Reduction::None, |t| Reduction::parse(
            t,
            ELEMENTS_12_REDUCTIONS
        )),
        a.bool_or(&["use_init_val"], true),
    )?;
    Ok(Box::new(Scatter {
        form: Form::Elements,
        version: 12,
        reduction: reduction.unwrap_or(Reduction::None),
        use_init_val: use_init_val.unwrap_or(true),
    }))
}

fn parse_nd_15(a: &Attrs) -> Result<Box<dyn Op>, Vec<AttrError>> {
    let reduction = a
        .parse_or("reduction", Reduction::None, |t| {
            Reduction::parse(t, ND_15_REDUCTIONS)
        })
        .map_err(|e| vec![e])?;
    Ok(Box::new(Scatter {
        form: Form::Nd,
        version: 15,
        reduction,
        use_init_val: true,
    }))
}

/// `dims` as a shape, for messages.
fn shape_text(dims: &[Dim]) -> String {
    PartialShape::new(dims.to_vec()).to_string()
}

/// Row-major strides of `shape` (each at most the element count, when that is not 0).
fn strides(shape: &[usize]) -> Vec<usize> {
    let mut s = vec![1usize; shape.len()];
    for k in (0..shape.len().saturating_sub(1)).rev() {
        s[k] = s[k + 1].saturating_mul(shape[k + 1]);
    }
    s
}

/// Index `v` along a dim of `n`: `0..n`, or also `-n..0` counted from the end.
fn resolve(v: i128, n: usize, negative: bool) -> Option<usize> {
    let n = n as i128;
    if (0..n).contains(&v) {
        Some(v as usize)
    } else if negative && (-n..0).contains(&v) {
        Some((v + n) as usize)
    } else {
        None
    }
}

impl Scatter {
    fn title(&self) -> String {
        self.def().map_or_else(String::new, |d| d.title())
    }

    /// Whether indices may count from the end (the -12 and -15 specs).
    fn negative(&self) -> bool {
        matches!(
            (self.form, self.version),
            (Form::Elements, 12) | (Form::Nd, 15)
        )
    }

    /// Why index `v` at indices position `pos` is refused, for a dim of size at most `n`
    /// (`size`, as written; `what` names the dim).
    fn index_message(&self, v: i128, pos: &[usize], what: &str, n: u64, size: &str) -> String {
        let allowed = if self.negative() {
            format!("-{n}..{n}")
        } else {
            format!("0..{n}")
        };
        let mut m = format!(
            "index {v} at indices position {pos:?} is out of range {allowed} for {what} of size {size}"
        );
        if v < 0 && !self.negative() && v >= -(n as i128) {
            m.push_str(&format!(
                " ({} takes no negative index; its spec allows only 0..{n})",
                self.title()
            ));
        }
        m
    }

    /// Every index of `indices` resolved to a position along its dim, `dim(k)` the size of
    /// the dim flat index `k` addresses and `what(k)` its name; or the first index out of range.
    fn positions(
        &self,
        indices: &Tensor,
        dim: impl Fn(usize) -> usize,
        what: impl Fn(usize) -> String,
    ) -> Result<Vec<usize>, EvalError> {
        fn go<I: crate::num::Int>(
            t: &Tensor,
            dim: &dyn Fn(usize) -> usize,
            negative: bool,
        ) -> Option<Result<Vec<usize>, (usize, i128)>> {
            let v = crate::ops::kernel::contiguous::<I>(t)?;
            let mut out = Vec::with_capacity(v.len());
            for (k, &x) in v.iter().enumerate() {
                let x = x.to_i128();
                match resolve(x, dim(k), negative) {
                    Some(p) => out.push(p),
                    None => return Some(Err((k, x))),
                }
            }
            Some(Ok(out))
        }
        let negative = self.negative();
        let got = crate::dispatch!(int: indices.element_type(), I => go::<I>(indices, &dim, negative), _ => None);
        match got {
            Some(Ok(p)) => Ok(p),
            Some(Err((k, v))) => Err(EvalError::Invalid(self.index_message(
                v,
                &crate::tensor::unravel(k, indices.shape()),
                &what(k),
                dim(k) as u64,
                &dim(k).to_string(),
            ))),
            None => Err(EvalError::Invalid(format!(
                "the indices are {}, not integers",
                indices.element_type()
            ))),
        }
    }

    /// Checks known index values against the dims they address (`dim(k)` for flat index `k`):
    /// an index out of range for every value the dim can take is refused. Only small indices
    /// (at most [`VALUE_LIMIT`](crate::shape::types::VALUE_LIMIT) elements) are read here; execution
    /// checks every index.
    fn check_known_indices(
        &self,
        cx: &mut InferCx<'_>,
        dim: impl Fn(usize) -> Dim,
        what: impl Fn(usize) -> String,
    ) -> Option<()> {
        let Some(shape) = cx.input(1).shape.to_tensor_dims() else {
            return Some(());
        };
        if shape
            .iter()
            .try_fold(1usize, |n, &d| n.checked_mul(d))
            .is_none_or(|n| n > crate::shape::types::VALUE_LIMIT)
        {
            return Some(());
        }
        let Some(values) = cx.ints(1) else {
            return Some(());
        };
        for (k, &v) in values.iter().enumerate() {
            let d = dim(k);
            let Some(max) = d.max() else { continue };
            let v = v as i128;
            let bad = if v < 0 {
                !self.negative() || -v > max as i128
            } else {
                v >= max as i128
            };
            if bad {
                let pos = crate::tensor::unravel(k, &shape);
                return cx.invalid(
                    1,
                    self.index_message(v, &pos, &what(k), max, &d.to_string()),
                );
            }
        }
        Some(())
    }

    /// The element type of `data` and `updates` (one type), after checking the types of every
    /// input.
    fn infer_types(&self, cx: &mut InferCx<'_>) -> Option<ElementType> {
        cx.require(0..1, TypeSet::ANY)?;
        cx.require(1..2, TypeSet::INT)?;
        cx.require(2..3, TypeSet::ANY)?;
        cx.require(3..4, TypeSet::INT)?;
        if self.form == Form::Nd {
            let ty = cx.input(1).element_type;
            if !matches!(
                ty,
                ElementType::I32 | ElementType::I64 | ElementType::Dynamic
            ) {
                cx.report_input(
                    1,
                    ErrorKind::UnsupportedElementType {
                        op: format!("{} (indices: i32 or i64)", self.title()),
                        ty,
                    },
                );
                return None;
            }
        }
        let ty = match (cx.input(0).element_type, cx.input(2).element_type) {
            (ElementType::Dynamic, x) | (x, ElementType::Dynamic) => x,
            (x, y) if x == y => x,
            (x, y) => {
                cx.report_input(2, ErrorKind::ElementTypeMismatch { a: x, b: y });
                return None;
            }
        };
        if ty == ElementType::Boolean && self.reduction == Reduction::Mean {
            return cx.invalid(
                0,
                "reduction mean is not defined for boolean data (the spec has no boolean mean)",
            );
        }
        Some(ty)
    }

    /// The axis input (port 3): `None` when something was reported, `Some(None)` when its value
    /// is unknown.
    fn infer_axis(&self, cx: &mut InferCx<'_>) -> Option<Option<i64>> {
        let shape = &cx.input(3).shape;
        if let Some(dims) = shape.dims()
            && !(dims.is_empty() || (dims.len() == 1 && dims[0].contains(1)))
        {
            return cx.invalid(
                3,
                format!("the axis must be a scalar or a 1-D tensor of one element, not {shape}"),
            );
        }
        match cx.ints(3).as_deref() {
            Some(&[a]) => Some(Some(a)),
            Some(v) => cx.invalid(3, format!("the axis holds {} values, not one", v.len())),
            None => Some(None),
        }
    }

    /// Checks that the updates' dims `got` can equal `want` (`rule` says what `want` is).
    fn check_updates(cx: &mut InferCx<'_>, got: &[Dim], want: &[Dim], rule: &str) -> Option<()> {
        if got.len() != want.len() {
            return cx.invalid(
                2,
                format!(
                    "the updates have shape {} (rank {}) but must have the shape {rule} = {} (rank {})",
                    shape_text(got),
                    got.len(),
                    shape_text(want),
                    want.len()
                ),
            );
        }
        for (k, (&g, &w)) in got.iter().zip(want).enumerate() {
            if g.merge(w).is_none() {
                return cx.invalid(
                    2,
                    format!(
                        "the updates have shape {} but must have the shape {rule} = {}: dim {k} is {g}, not {w}",
                        shape_text(got),
                        shape_text(want)
                    ),
                );
            }
        }
        Some(())
    }

    fn infer_update(&self, cx: &mut InferCx<'_>, ty: ElementType) -> Option<Vec<TensorType>> {
        let axis = self.infer_axis(cx)?;
        let (data, indices, updates) = (cx.input(0), cx.input(1), cx.input(2));
        let out = vec![TensorType::new(ty, data.shape.clone())];
        let (dd, di, du) = (
            data.shape.dims(),
            indices.shape.dims(),
            updates.shape.dims(),
        );
        if dd.is_some_and(|d| d.is_empty()) {
            return cx.invalid(
                0,
                "ScatterUpdate needs data of rank 1 or more, not a scalar",
            );
        }
        if let (Some(d), Some(i), Some(u)) = (dd, di, du)
            && u.len() != i.len() + d.len() - 1
        {
            return cx.invalid(
                2,
                format!(
                    "the updates have rank {} but must have rank(indices) + rank(data) - 1 = {} + {} - 1 = {}",
                    u.len(),
                    i.len(),
                    d.len(),
                    i.len() + d.len() - 1
                ),
            );
        }
        let (Some(a), Some(d)) = (axis, dd) else {
            return Some(out);
        };
        let rank = d.len();
        let Some(axis) = super::normalize_axis(a, rank) else {
            return cx.invalid(
                3,
                format!("axis {a} is out of range for data of rank {rank} (-{rank}..{rank})"),
            );
        };
        if let (Some(i), Some(u)) = (di, du) {
            let want: Vec<Dim> = [&d[..axis], i, &d[axis + 1..]].concat();
            Self::check_updates(
                cx,
                u,
                &want,
                &format!("data.shape[:axis] + indices.shape + data.shape[axis+1:] (axis {axis})"),
            )?;
        }
        let n = d[axis];
        self.check_known_indices(cx, |_| n, |_| format!("axis {axis} of the data"))?;
        Some(out)
    }

    fn infer_elements(&self, cx: &mut InferCx<'_>, ty: ElementType) -> Option<Vec<TensorType>> {
        let axis = self.infer_axis(cx)?;
        let (data, indices, updates) = (cx.input(0), cx.input(1), cx.input(2));
        let out = vec![TensorType::new(ty, data.shape.clone())];
        let (dd, di, du) = (
            data.shape.dims(),
            indices.shape.dims(),
            updates.shape.dims(),
        );
        if dd.is_some_and(|d| d.is_empty()) {
            return cx.invalid(
                0,
                "ScatterElementsUpdate needs data of rank 1 or more, not a scalar",
            );
        }
        if let (Some(d), Some(i)) = (dd, di)
            && d.len() != i.len()
        {
            return cx.invalid(
                1,
                format!(
                    "the indices have rank {} but the data rank {}: ScatterElementsUpdate needs one rank",
                    i.len(),
                    d.len()
                ),
            );
        }
        if let (Some(i), Some(u)) = (di, du) {
            Self::check_updates(cx, u, i, "of the indices")?;
        }
        let (Some(a), Some(d)) = (axis, dd) else {
            return Some(out);
        };
        let rank = d.len();
        let Some(axis) = super::normalize_axis(a, rank) else {
            return cx.invalid(
                3,
                format!("axis {a} is out of range for data of rank {rank} (-{rank}..{rank})"),
            );
        };
        // The indices' dims (the updates' where the indices' rank is unknown).
        if let Some(i) = di.or(du).filter(|i| i.len() == rank) {
            for k in (0..rank).filter(|&k| k != axis) {
                if let Some(m) = d[k].max()
                    && i[k].min() > m
                {
                    let port = if di.is_some() { 1 } else { 2 };
                    return cx.invalid(
                        port,
                        format!(
                            "{} dim {k} ({}) exceeds data dim {k} ({}): only the axis dim ({axis}) may be larger",
                            if port == 1 { "indices" } else { "updates" },
                            i[k],
                            d[k]
                        ),
                    );
                }
            }
        }
        let n = d[axis];
        self.check_known_indices(cx, |_| n, |_| format!("axis {axis} of the data"))?;
        Some(out)
    }

    fn infer_nd(&self, cx: &mut InferCx<'_>, ty: ElementType) -> Option<Vec<TensorType>> {
        let (data, indices, updates) = (cx.input(0), cx.input(1), cx.input(2));
        let out = vec![TensorType::new(ty, data.shape.clone())];
        let (dd, di, du) = (
            data.shape.dims(),
            indices.shape.dims(),
            updates.shape.dims(),
        );
        if dd.is_some_and(|d| d.is_empty()) {
            return cx.invalid(
                0,
                "ScatterNDUpdate needs data of rank 1 or more, not a scalar",
            );
        }
        if di.is_some_and(|i| i.is_empty()) {
            return cx.invalid(
                1,
                "ScatterNDUpdate needs indices of rank 1 or more, not a scalar",
            );
        }
        let (Some(d), Some(i)) = (dd, di) else {
            return Some(out);
        };
        let q = i.len();
        let Some(k) = i[q - 1].get_static() else {
            return Some(out);
        };
        let r = d.len();
        if k > r as u64 {
            return cx.invalid(
                1,
                format!(
                    "the last dim of the indices ({k}) exceeds the data's rank ({r}): an index row has at most one coordinate per data dim"
                ),
            );
        }
        let k = k as usize;
        if let Some(u) = du {
            let want: Vec<Dim> = [&i[..q - 1], &d[k..]].concat();
            if want.is_empty() {
                if !u.iter().all(|x| x.contains(1)) {
                    return cx.invalid(
                        2,
                        format!(
                            "the updates have shape {} but must hold one element (indices.shape[:-1] + data.shape[{k}:] is a scalar)",
                            shape_text(u)
                        ),
                    );
                }
            } else {
                Self::check_updates(
                    cx,
                    u,
                    &want,
                    &format!("indices.shape[:-1] + data.shape[{k}:]"),
                )?;
            }
        }
        if k > 0 {
            let dims = d[..k].to_vec();
            self.check_known_indices(
                cx,
                |flat| dims[flat % k],
                |flat| format!("data dim {} (coordinate {} of its row)", flat % k, flat % k),
            )?;
        }
        Some(out)
    }
}

impl Op for Scatter {
    fn def(&self) -> Option<&'static OpDef> {
        Some(match (self.form, self.version) {
            (Form::Update, _) => &SCATTER_UPDATE_3,
            (Form::Elements, 3) => &SCATTER_ELEMENTS_UPDATE_3,
            (Form::Elements, _) => &SCATTER_ELEMENTS_UPDATE_12,
            (Form::Nd, 4) => &SCATTER_ND_UPDATE_4,
            (Form::Nd, _) => &SCATTER_ND_UPDATE_15,
        })
    }

    fn infer(&self, cx: &mut InferCx<'_>) -> Option<Vec<TensorType>> {
        let ty = self.infer_types(cx)?;
        match self.form {
            Form::Update => self.infer_update(cx, ty),
            Form::Elements => self.infer_elements(cx, ty),
            Form::Nd => self.infer_nd(cx, ty),
        }
    }

    fn eval(&self, cx: &EvalCx<'_>) -> Result<Vec<Tensor>, EvalError> {
        let data = cx.tensor(0)?;
        let indices = cx.tensor(1)?;
        let updates = cx.tensor(2)?;
        let ty = data.element_type();
        if updates.element_type() != ty {
            return Err(EvalError::Types(ty, updates.element_type()));
        }
        if ty == ElementType::Boolean && self.reduction == Reduction::Mean {
            return Err(EvalError::Invalid(
                "reduction mean is not defined for boolean data".into(),
            ));
        }
        let plan = match self.form {
            Form::Update => self.plan_update(cx, &data, &indices, &updates)?,
            Form::Elements => self.plan_elements(cx, &data, &indices, &updates)?,
            Form::Nd => self.plan_nd(&data, &indices, &updates)?,
        };
        cx.reserve(ty, data.len())?;
        if self.reduction == Reduction::Mean
            || (!self.use_init_val && self.reduction != Reduction::None)
        {
            // A count and an exact sum per place reached (at most one per update).
            let entries = u64::try_from(updates.len()).unwrap_or(u64::MAX);
            cx.reserve_bytes("the scatter's reduction counts", entries.saturating_mul(64))?;
        }
        let reducer = (self.reduction, self.use_init_val);
        crate::dispatch!(any: ty, T => run::<T>(&data, &updates, &plan, reducer), _ => Err(EvalError::UnsupportedType { op: self.title(), ty }))
            .map(|t| vec![t])
    }

    fn moves(&self, input: usize) -> bool {
        self.reduction == Reduction::None && (input == 0 || input == 2)
    }
}

/// Where the updates go, worked out (and checked) before the output is allocated.
enum Plan {
    /// ScatterUpdate: data read as `[outer, n, inner]`, updates as `[outer, positions, inner]`;
    /// update slice `(o, k)` replaces data slice `(o, positions[k])`.
    Slices {
        outer: usize,
        n: usize,
        inner: usize,
        positions: Vec<usize>,
    },
    /// ScatterElementsUpdate: update `p` (row-major over `shape`, the indices') goes to
    /// `data` at its own coordinates but `positions[p]` on `axis`.
    Elements {
        shape: Vec<usize>,
        strides: Vec<usize>,
        axis: usize,
        positions: Vec<usize>,
    },
    /// ScatterNDUpdate: update row `m` (`slice` elements) goes to `offsets[m]..+slice`.
    Rows { offsets: Vec<usize>, slice: usize },
}

impl Scatter {
    /// The axis input's one value, normalized for data of `rank`.
    fn eval_axis(&self, cx: &EvalCx<'_>, rank: usize) -> Result<usize, EvalError> {
        let a = match cx.ints(3)?.as_slice() {
            &[a] => a,
            v => {
                return Err(EvalError::Invalid(format!(
                    "the axis holds {} values, not one",
                    v.len()
                )));
            }
        };
        if rank == 0 {
            return Err(EvalError::Invalid(format!(
                "{} needs data of rank 1 or more, not a scalar",
                self.title()
            )));
        }
        super::normalize_axis(a, rank).ok_or_else(|| {
            EvalError::Invalid(format!(
                "axis {a} is out of range for data of rank {rank} (-{rank}..{rank})"
            ))
        })
    }

    fn plan_update(
        &self,
        cx: &EvalCx<'_>,
        data: &Tensor,
        indices: &Tensor,
        updates: &Tensor,
    ) -> Result<Plan, EvalError> {
        let dshape = data.shape();
        let axis = self.eval_axis(cx, dshape.len())?;
        let ishape = indices.shape();
        let want: Vec<usize> = [&dshape[..axis], ishape, &dshape[axis + 1..]].concat();
        if updates.shape() != want {
            return Err(EvalError::Invalid(format!(
                "the updates have shape {:?} but must have the shape data.shape[:axis] + indices.shape + data.shape[axis+1:] = {want:?} (data {dshape:?}, indices {ishape:?}, axis {axis})",
                updates.shape()
            )));
        }
        let n = dshape[axis];
        let positions = self.positions(indices, |_| n, |_| format!("axis {axis} of the data"))?;
        // Nothing is written into empty data; otherwise each product is at most its length.
        let (outer, inner) = if data.is_empty() {
            (0, 0)
        } else {
            (
                dshape[..axis].iter().product(),
                dshape[axis + 1..].iter().product(),
            )
        };
        Ok(Plan::Slices {
            outer,
            n,
            inner,
            positions,
        })
    }

    fn plan_elements(
        &self,
        cx: &EvalCx<'_>,
        data: &Tensor,
        indices: &Tensor,
        updates: &Tensor,
    ) -> Result<Plan, EvalError> {
        let dshape = data.shape();
        let ishape = indices.shape();
        let axis = self.eval_axis(cx, dshape.len())?;
        if ishape.len() != dshape.len() {
            return Err(EvalError::Invalid(format!(
                "the indices have shape {ishape:?} (rank {}) but the data {dshape:?} (rank {}): ScatterElementsUpdate needs one rank",
                ishape.len(),
                dshape.len()
            )));
        }
        if updates.shape() != ishape {
            return Err(EvalError::Invalid(format!(
                "the updates have shape {:?} but must have the indices' shape {ishape:?}",
                updates.shape()
            )));
        }
        if let Some(k) = (0..dshape.len()).find(|&k| k != axis && ishape[k] > dshape[k]) {
            return Err(EvalError::Invalid(format!(
                "indices dim {k} ({}) exceeds data dim {k} ({}): only the axis dim ({axis}) may be larger (indices {ishape:?}, data {dshape:?})",
                ishape[k], dshape[k]
            )));
        }
        let n = dshape[axis];
        let positions = self.positions(indices, |_| n, |_| format!("axis {axis} of the data"))?;
        Ok(Plan::Elements {
            shape: ishape.to_vec(),
            strides: strides(dshape),
            axis,
            positions,
        })
    }

    fn plan_nd(
        &self,
        data: &Tensor,
        indices: &Tensor,
        updates: &Tensor,
    ) -> Result<Plan, EvalError> {
        let dshape = data.shape();
        let ishape = indices.shape();
        if dshape.is_empty() {
            return Err(EvalError::Invalid(
                "ScatterNDUpdate needs data of rank 1 or more, not a scalar".into(),
            ));
        }
        let Some((&k, rows)) = ishape.split_last() else {
            return Err(EvalError::Invalid(
                "ScatterNDUpdate needs indices of rank 1 or more, not a scalar".into(),
            ));
        };
        if k > dshape.len() {
            return Err(EvalError::Invalid(format!(
                "the last dim of the indices ({k}) exceeds the data's rank ({}): indices {ishape:?}, data {dshape:?}",
                dshape.len()
            )));
        }
        let want: Vec<usize> = [rows, &dshape[k..]].concat();
        let fits = if want.is_empty() {
            updates.len() == 1
        } else {
            updates.shape() == want
        };
        if !fits {
            return Err(EvalError::Invalid(if want.is_empty() {
                format!(
                    "the updates have shape {:?} but must hold one element (indices.shape[:-1] + data.shape[{k}:] is a scalar)",
                    updates.shape()
                )
            } else {
                format!(
                    "the updates have shape {:?} but must have the shape indices.shape[:-1] + data.shape[{k}:] = {want:?} (indices {ishape:?}, data {dshape:?})",
                    updates.shape()
                )
            }));
        }
        let positions = if k == 0 {
            Vec::new()
        } else {
            self.positions(
                indices,
                |flat| dshape[flat % k],
                |flat| format!("data dim {} (coordinate {} of its row)", flat % k, flat % k),
            )?
        };
        // Nothing is written into empty data (or an empty slice); otherwise every product and
        // offset is at most the data's length.
        let slice = if data.is_empty() {
            0
        } else {
            dshape[k..].iter().product()
        };
        let offsets = match updates.len().checked_div(slice) {
            None => Vec::new(),
            Some(count) => {
                let st = strides(dshape);
                (0..count)
                    .map(|m| {
                        positions[m * k..(m + 1) * k]
                            .iter()
                            .zip(&st)
                            .map(|(&p, &s)| p * s)
                            .sum()
                    })
                    .collect()
            }
        };
        Ok(Plan::Rows { offsets, slice })
    }
}

/// An element type updates can combine on.
trait Combine: Element {
    /// `self` (the value in place) combined with update `u` (`Mean` sums).
    fn combine(self, u: Self, r: Reduction) -> Self;
    /// The exact value of an integer (for integer means); 0 for the others.
    fn exact(self) -> i128 {
        0
    }
    /// The mean of `count` values whose sum in the type is `sum` and whose exact sum is
    /// `exact` (integers).
    fn mean(sum: Self, exact: i128, count: u64) -> Self;
}

macro_rules! int_combine {
    ($($t:ty)*) => {$(
        impl Combine for $t {
            #[inline]
            fn combine(self, u: Self, r: Reduction) -> Self {
                match r {
                    Reduction::None => u,
                    Reduction::Sum | Reduction::Mean => self.wrapping_add(u),
                    Reduction::Sub => self.wrapping_sub(u),
                    Reduction::Prod => self.wrapping_mul(u),
                    Reduction::Min => self.min(u),
                    Reduction::Max => self.max(u),
                }
            }
            fn exact(self) -> i128 {
                self as i128
            }
            fn mean(_: Self, exact: i128, count: u64) -> Self {
                // Rounded down; the mean lies between the least and the greatest value, so it
                // fits the type.
                exact.div_euclid(i128::from(count.max(1))) as $t
            }
        }
    )*};
}
int_combine!(i8 i16 i32 i64 u8 u16 u32 u64);

/// Whether max(a, b) is `a`: NaN propagates (the first NaN), +0 is above −0.
fn max_is_first(a: f64, b: f64) -> bool {
    if a.is_nan() {
        true
    } else if b.is_nan() {
        false
    } else if a != b {
        a > b
    } else {
        !a.is_sign_negative() || b.is_sign_negative()
    }
}

/// Whether min(a, b) is `a`: NaN propagates (the first NaN), −0 is below +0.
fn min_is_first(a: f64, b: f64) -> bool {
    if a.is_nan() {
        true
    } else if b.is_nan() {
        false
    } else if a != b {
        a < b
    } else {
        a.is_sign_negative() || !b.is_sign_negative()
    }
}

macro_rules! float_combine {
    ($($t:ty)*) => {$(
        impl Combine for $t {
            #[inline]
            fn combine(self, u: Self, r: Reduction) -> Self {
                match r {
                    Reduction::None => u,
                    Reduction::Sum | Reduction::Mean => self + u,
                    Reduction::Sub => self - u,
                    Reduction::Prod => self * u,
                    Reduction::Min => if min_is_first(self as f64, u as f64) { self } else { u },
                    Reduction::Max => if max_is_first(self as f64, u as f64) { self } else { u },
                }
            }
            fn mean(sum: Self, _: i128, count: u64) -> Self {
                sum / count as $t
            }
        }
    )*};
}
float_combine!(f32 f64);

macro_rules! narrow_combine {
    ($($t:ty)*) => {$(
        impl Combine for $t {
            #[inline]
            fn combine(self, u: Self, r: Reduction) -> Self {
                let (a, b) = (self.to_f32(), u.to_f32());
                match r {
                    Reduction::None => u,
                    Reduction::Sum | Reduction::Mean => <$t>::from_f32(a + b),
                    Reduction::Sub => <$t>::from_f32(a - b),
                    Reduction::Prod => <$t>::from_f32(a * b),
                    Reduction::Min => if min_is_first(a as f64, b as f64) { self } else { u },
                    Reduction::Max => if max_is_first(a as f64, b as f64) { self } else { u },
                }
            }
            fn mean(sum: Self, _: i128, count: u64) -> Self {
                <$t>::from_f32(sum.to_f32() / count as f32)
            }
        }
    )*};
}
narrow_combine!(f16 bf16);

impl Combine for bool {
    #[inline]
    fn combine(self, u: Self, r: Reduction) -> Self {
        match r {
            Reduction::None => u,
            Reduction::Sum | Reduction::Max | Reduction::Mean => self | u,
            Reduction::Prod | Reduction::Min => self & u,
            Reduction::Sub => self ^ u,
        }
    }
    fn mean(sum: Self, _: i128, _: u64) -> Self {
        // Refused before execution (no boolean mean).
        sum
    }
}

/// Applies updates one at a time in the order given.
struct Reducer {
    reduction: Reduction,
    use_init_val: bool,
    /// Per place reached: the exact sum (integers) and the number of updates; kept only where
    /// a mean or `use_init_val = false` needs it.
    seen: Option<HashMap<usize, (i128, u64)>>,
}

impl Reducer {
    fn new(reduction: Reduction, use_init_val: bool) -> Reducer {
        let track = reduction == Reduction::Mean || (reduction != Reduction::None && !use_init_val);
        Reducer {
            reduction,
            use_init_val,
            seen: track.then(HashMap::new),
        }
    }

    #[inline]
    fn apply<T: Combine>(&mut self, out: &mut [T], t: usize, u: T) {
        let r = self.reduction;
        let Some(seen) = &mut self.seen else {
            out[t] = out[t].combine(u, r);
            return;
        };
        match seen.entry(t) {
            std::collections::hash_map::Entry::Vacant(e) => {
                let old = out[t];
                if self.use_init_val {
                    out[t] = old.combine(u, r);
                    // Below 2^127 for any number of updates that fits in memory.
                    e.insert((old.exact().wrapping_add(u.exact()), 1));
                } else {
                    out[t] = u;
                    e.insert((u.exact(), 1));
                }
            }
            std::collections::hash_map::Entry::Occupied(mut e) => {
                out[t] = out[t].combine(u, r);
                let (sum, count) = e.get_mut();
                *sum = sum.wrapping_add(u.exact());
                *count += 1;
            }
        }
    }

    /// Divides the means (each place independently: the map's order does not matter).
    fn finish<T: Combine>(self, out: &mut [T]) {
        if self.reduction != Reduction::Mean {
            return;
        }
        for (t, (sum, count)) in self.seen.into_iter().flatten() {
            out[t] = T::mean(out[t], sum, count + u64::from(self.use_init_val));
        }
    }
}

/// Copies `data` and applies `updates` as `plan` says.
fn run<T: Combine>(
    data: &Tensor,
    updates: &Tensor,
    plan: &Plan,
    (reduction, use_init_val): (Reduction, bool),
) -> Result<Tensor, EvalError> {
    let kernel = crate::ops::kernel::contiguous::<T>;
    let (Some(d), Some(u)) = (kernel(data), kernel(updates)) else {
        return Err(EvalError::Internal("the scatter's element types"));
    };
    let mut out = d.into_owned();
    let mut red = Reducer::new(reduction, use_init_val);
    match plan {
        Plan::Slices {
            outer,
            n,
            inner,
            positions,
        } => {
            let (outer, n, inner) = (*outer, *n, *inner);
            if inner > 0 {
                let count = positions.len();
                for o in 0..outer {
                    for (k, &p) in positions.iter().enumerate() {
                        let dst = (o * n + p) * inner;
                        let src = (o * count + k) * inner;
                        out[dst..dst + inner].copy_from_slice(&u[src..src + inner]);
                    }
                }
            }
        }
        Plan::Elements {
            shape,
            strides,
            axis,
            positions,
        } => {
            // An odometer over the indices' coordinates; `base` is the data offset of the
            // current coordinate without its axis term (each non-axis coordinate is below the
            // data's dim, so every offset is below the data's length).
            let rank = shape.len();
            let mut coord = vec![0usize; rank];
            let mut base = 0usize;
            for (p, &pos) in positions.iter().enumerate() {
                red.apply(&mut out, base + pos * strides[*axis], u[p]);
                for k in (0..rank).rev() {
                    coord[k] += 1;
                    if k != *axis {
                        base += strides[k];
                    }
                    if coord[k] < shape[k] {
                        break;
                    }
                    if k != *axis {
                        base -= strides[k] * shape[k];
                    }
                    coord[k] = 0;
                }
            }
        }
        Plan::Rows { offsets, slice } => {
            let slice = *slice;
            for (m, &o) in offsets.iter().enumerate() {
                let src = &u[m * slice..(m + 1) * slice];
                if reduction == Reduction::None {
                    out[o..o + slice].copy_from_slice(src);
                } else {
                    for (e, &x) in src.iter().enumerate() {
                        red.apply(&mut out, o + e, x);
                    }
                }
            }
        }
    }
    red.finish(&mut out);
    crate::ops::kernel::tensor_from(data.shape(), out)
}

#[cfg(test)]
mod tests {

    use half::{bf16, f16};

    use super::*;
    use crate::ops::context::{eval_for_test, inferred_shape_for_test, tensor_for_test};

    fn t<T: Element>(shape: &[usize], v: Vec<T>) -> Tensor {
        tensor_for_test(shape, v)
    }

    fn update_3() -> Scatter {
        Scatter {
            form: Form::Update,
            version: 3,
            reduction: Reduction::None,
            use_init_val: true,
        }
    }

    fn elements_3() -> Scatter {
        Scatter {
            form: Form::Elements,
            version: 3,
            reduction: Reduction::None,
            use_init_val: true,
        }
    }

    fn elements_12(reduction: Reduction, use_init_val: bool) -> Scatter {
        Scatter {
            form: Form::Elements,
            version: 12,
            reduction,
            use_init_val,
        }
    }

    fn nd_4() -> Scatter {
        Scatter {
            form: Form::Nd,
            version: 4,
            reduction: Reduction::None,
            use_init_val: true,
        }
    }

    fn nd_15(reduction: Reduction) -> Scatter {
        Scatter {
            form: Form::Nd,
            version: 15,
            reduction,
            use_init_val: true,
        }
    }

    fn run(op: &Scatter, inputs: &[Tensor]) -> Result<Tensor, EvalError> {
        eval_for_test(op, inputs, 1 << 30)
    }

    /// The error message of a run that must fail with an invalid input.
    fn run_err(op: &Scatter, inputs: &[Tensor]) -> String {
        match run(op, inputs) {
            Err(EvalError::Invalid(m)) => m,
            other => panic!("expected an invalid input, got {other:?}"),
        }
    }

    /// A tensor as its type, shape and bytes (NaNs and −0 compared bit for bit).
    fn bits(t: &Tensor) -> (ElementType, Vec<usize>, Vec<u8>) {
        (t.element_type(), t.shape().to_vec(), t.to_le_bytes())
    }

    fn axis(a: i64) -> Tensor {
        t(&[], vec![a])
    }

    // ---- ScatterUpdate-3 ----

    #[test]
    fn scatter_update_table() {
        // (data shape, indices shape, indices, axis, updates shape): data is 0, 1, 2, ... and
        // updates 100, 101, ...; the expected output was worked out by hand from the spec's
        // formula data[p.., indices[m..], s..] = updates[p.., m.., s..].
        type Row = (
            &'static [usize],
            &'static [usize],
            &'static [i64],
            i64,
            &'static [usize],
            &'static [i32],
        );
        let table: &[Row] = &[
            // axis 0, 1-D indices: rows 2 and 0 replaced
            (
                &[3, 2],
                &[2],
                &[2, 0],
                0,
                &[2, 2],
                &[102, 103, 2, 3, 100, 101],
            ),
            // axis 1 (and -1): columns
            (
                &[2, 3],
                &[2],
                &[2, 0],
                1,
                &[2, 2],
                &[101, 1, 100, 103, 4, 102],
            ),
            (
                &[2, 3],
                &[2],
                &[2, 0],
                -1,
                &[2, 2],
                &[101, 1, 100, 103, 4, 102],
            ),
            // a scalar index: one row, updates of rank(data) - 1
            (&[3, 2], &[], &[1], 0, &[2], &[0, 1, 100, 101, 4, 5]),
            // 2-D indices on axis 1 of a 3-D tensor: updates [2, 2, 1, 2]
            (
                &[2, 3, 2],
                &[2, 1],
                &[2, 0],
                1,
                &[2, 2, 1, 2],
                &[102, 103, 2, 3, 100, 101, 106, 107, 8, 9, 104, 105],
            ),
            // duplicates: the last in row-major order of the indices wins
            (&[4], &[3], &[1, 3, 1], 0, &[3], &[0, 102, 2, 101]),
            (
                &[2, 2],
                &[2, 2],
                &[0, 0, 0, 1],
                1,
                &[2, 2, 2],
                &[102, 103, 106, 107],
            ),
            // no indices: the data unchanged
            (&[2, 2], &[0], &[], 0, &[0, 2], &[0, 1, 2, 3]),
        ];
        for (k, &(dshape, ishape, idx, a, ushape, want)) in table.iter().enumerate() {
            let n: usize = dshape.iter().product();
            let un: usize = ushape.iter().product();
            let data = t(dshape, (0..n as i32).collect());
            let upd = t(ushape, (100..100 + un as i32).collect());
            let got = run(&update_3(), &[data, t(ishape, idx.to_vec()), upd, axis(a)])
                .unwrap_or_else(|e| panic!("case {k}: {e}"));
            assert_eq!(got, t(dshape, want.to_vec()), "case {k}");
        }
    }

    /// The spec's example 2.
    #[test]
    fn scatter_update_spec_example() {
        let data = t(
            &[3, 5],
            vec![
                -1.0f32, 1.0, -1.0, 3.0, 4.0, -1.0, 6.0, -1.0, 8.0, 9.0, -1.0, 11.0, 1.0, 13.0,
                14.0,
            ],
        );
        let upd = t(&[3, 2], vec![1.0f32, 1.0, 1.0, 1.0, 1.0, 2.0]);
        let got = run(
            &update_3(),
            &[data, t(&[2], vec![0i32, 2]), upd, t(&[1], vec![1i64])],
        )
        .unwrap();
        let want = t(
            &[3, 5],
            vec![
                1.0f32, 1.0, 1.0, 3.0, 4.0, 1.0, 6.0, 1.0, 8.0, 9.0, 1.0, 11.0, 2.0, 13.0, 14.0,
            ],
        );
        assert_eq!(got, want);
    }

    #[test]
    fn scatter_update_errors() {
        let data = || t(&[2, 3], vec![0u8; 6]);
        let upd = || t(&[2, 2], vec![1u8; 4]);
        let m = run_err(
            &update_3(),
            &[data(), t(&[2], vec![0u16, 3]), upd(), axis(1)],
        );
        assert!(
            m.contains("index 3 at indices position [1] is out of range 0..3 for axis 1"),
            "{m}"
        );
        let m = run_err(
            &update_3(),
            &[data(), t(&[2], vec![-1i8, 0]), upd(), axis(1)],
        );
        assert!(
            m.contains("index -1 at indices position [0]")
                && m.contains("ScatterUpdate-3 takes no negative index"),
            "{m}"
        );
        let m = run_err(
            &update_3(),
            &[data(), t(&[2], vec![0i32, 1]), upd(), axis(2)],
        );
        assert!(
            m.contains("axis 2 is out of range for data of rank 2"),
            "{m}"
        );
        let m = run_err(
            &update_3(),
            &[
                data(),
                t(&[2], vec![0i32, 1]),
                t(&[2, 3], vec![1u8; 6]),
                axis(1),
            ],
        );
        assert!(
            m.contains("the updates have shape [2, 3]") && m.contains("= [2, 2]"),
            "{m}"
        );
        let m = run_err(
            &update_3(),
            &[
                t(&[], vec![1u8]),
                t(&[], vec![0i32]),
                t(&[], vec![1u8]),
                axis(0),
            ],
        );
        assert!(m.contains("rank 1 or more"), "{m}");
        // Every index is checked, even where the slices are empty.
        let m = run_err(
            &update_3(),
            &[
                t(&[0, 3], Vec::<u8>::new()),
                t(&[1], vec![5i64]),
                t(&[0, 1], Vec::<u8>::new()),
                axis(1),
            ],
        );
        assert!(m.contains("index 5"), "{m}");
        let got = run(
            &update_3(),
            &[
                t(&[0, 3], Vec::<u8>::new()),
                t(&[1], vec![2i64]),
                t(&[0, 1], Vec::<u8>::new()),
                axis(1),
            ],
        )
        .unwrap();
        assert_eq!(got.shape(), [0, 3]);
        match run(
            &update_3(),
            &[
                data(),
                t(&[2], vec![0i32, 1]),
                t(&[2, 2], vec![1i8; 4]),
                axis(1),
            ],
        ) {
            Err(EvalError::Types(ElementType::U8, ElementType::I8)) => {}
            other => panic!("{other:?}"),
        }
    }

    // ---- ScatterElementsUpdate ----

    /// The -12 spec's examples 1 to 5 (all i32 here).
    #[test]
    fn scatter_elements_spec_examples() {
        type Case = (
            Reduction,
            bool,
            &'static [usize],
            &'static [i32],
            &'static [usize],
            &'static [i64],
            &'static [i32],
            i64,
            &'static [i32],
        );
        let cases: &[Case] = &[
            (
                Reduction::Sum,
                true,
                &[4],
                &[2, 3, 4, 6],
                &[6],
                &[1, 0, 0, -2, -1, 2],
                &[10, 20, 30, 40, 70, 60],
                0,
                &[52, 13, 104, 76],
            ),
            (
                Reduction::Sum,
                false,
                &[4],
                &[2, 3, 4, 6],
                &[6],
                &[1, 0, 0, 2, 3, 2],
                &[10, 20, 30, 40, 70, 60],
                0,
                &[50, 10, 100, 70],
            ),
            (
                Reduction::None,
                true,
                &[3, 4],
                &[0; 12],
                &[2, 2],
                &[1, 2, 0, 3],
                &[11, 12, 13, 14],
                1,
                &[0, 11, 12, 0, 13, 0, 0, 14, 0, 0, 0, 0],
            ),
            (
                Reduction::Sum,
                true,
                &[3, 4],
                &[1; 12],
                &[2, 2],
                &[1, 1, 0, 3],
                &[11, 12, 13, 14],
                1,
                &[1, 24, 1, 1, 14, 1, 1, 15, 1, 1, 1, 1],
            ),
            (
                Reduction::Prod,
                true,
                &[3, 4],
                &[2; 12],
                &[2, 2],
                &[1, 1, 0, 3],
                &[11, 12, 13, 14],
                1,
                &[2, 264, 2, 2, 26, 2, 2, 28, 2, 2, 2, 2],
            ),
        ];
        for (k, &(r, init, dshape, data, ishape, idx, upd, a, want)) in cases.iter().enumerate() {
            let got = run(
                &elements_12(r, init),
                &[
                    t(dshape, data.to_vec()),
                    t(ishape, idx.to_vec()),
                    t(ishape, upd.to_vec()),
                    t(&[1], vec![a]),
                ],
            )
            .unwrap_or_else(|e| panic!("case {k}: {e}"));
            assert_eq!(got, t(dshape, want.to_vec()), "case {k}");
        }
    }

    /// Every reduction of ScatterElementsUpdate-12 on one small case, with and without the
    /// data's value: data [10, 20, 30, 40], indices [1, 3, 1, 1, -4], updates [4, -2, 7, 5, 9]
    /// (place 0 gets 9, place 1 gets 4, 7, 5, place 3 gets -2, place 2 nothing). Hand-computed.
    #[test]
    fn scatter_elements_reductions() {
        let data = t(&[4], vec![10i32, 20, 30, 40]);
        let idx = t(&[5], vec![1i64, 3, 1, 1, -4]);
        let upd = t(&[5], vec![4i32, -2, 7, 5, 9]);
        let cases: &[(Reduction, bool, [i32; 4])] = &[
            (Reduction::None, true, [9, 5, 30, -2]),
            (Reduction::None, false, [9, 5, 30, -2]),
            (Reduction::Sum, true, [19, 36, 30, 38]),
            (Reduction::Sum, false, [9, 16, 30, -2]),
            (Reduction::Prod, true, [90, 2800, 30, -80]),
            (Reduction::Prod, false, [9, 140, 30, -2]),
            (Reduction::Min, true, [9, 4, 30, -2]),
            (Reduction::Min, false, [9, 4, 30, -2]),
            (Reduction::Max, true, [10, 20, 30, 40]),
            (Reduction::Max, false, [9, 7, 30, -2]),
            // (10+9)/2 = 9.5 → 9; (20+4+7+5)/4 = 9; (40-2)/2 = 19
            (Reduction::Mean, true, [9, 9, 30, 19]),
            // 9; 16/3 = 5.33 → 5; -2
            (Reduction::Mean, false, [9, 5, 30, -2]),
        ];
        for &(r, init, want) in cases {
            let got = run(
                &elements_12(r, init),
                &[data.clone(), idx.clone(), upd.clone(), axis(0)],
            )
            .unwrap();
            assert_eq!(got, t(&[4], want.to_vec()), "{r} use_init_val={init}");
        }
    }

    /// Integer means round toward −∞ from the exact sum (no wrap-around).
    #[test]
    fn integer_means_are_exact_and_round_down() {
        let op = elements_12(Reduction::Mean, true);
        // (0 - 1 - 1) / 3 = -0.67 → -1; (0 + 3 + 4) / 3 = 2.33 → 2; (0 - 7) / 2 = -3.5 → -4
        let got = run(
            &op,
            &[
                t(&[3], vec![0i16; 3]),
                t(&[5], vec![0u8, 0, 1, 1, 2]),
                t(&[5], vec![-1i16, -1, 3, 4, -7]),
                axis(0),
            ],
        )
        .unwrap();
        assert_eq!(got, t(&[3], vec![-1i16, 2, -4]));
        // 100 + 100 + 100 = 300 leaves i8: the mean is still 100 (OpenVINO's reference
        // divides the wrapped sum 44: 14).
        let got = run(
            &op,
            &[
                t(&[1], vec![100i8]),
                t(&[2], vec![0i32, 0]),
                t(&[2], vec![100i8, 100]),
                axis(0),
            ],
        )
        .unwrap();
        assert_eq!(got, t(&[1], vec![100i8]));
        // u64 beyond 2^53: exact.
        let big = u64::MAX - 1;
        let got = run(
            &op,
            &[
                t(&[1], vec![big]),
                t(&[2], vec![0i32, 0]),
                t(&[2], vec![big, big - 3]),
                axis(0),
            ],
        )
        .unwrap();
        assert_eq!(got, t(&[1], vec![big - 1]));
    }

    #[test]
    fn float_reductions() {
        let run12 = |r, init, data: Tensor, idx: Vec<i32>, upd: Tensor| {
            let n = idx.len();
            run(&elements_12(r, init), &[data, t(&[n], idx), upd, axis(0)]).unwrap()
        };
        // mean: (1 + 2 + 3) / 3 and (2 + 5) / 2
        let got = run12(
            Reduction::Mean,
            true,
            t(&[2], vec![1.0f32, 2.0]),
            vec![0, 0, 1],
            t(&[3], vec![2.0f32, 3.0, 5.0]),
        );
        assert_eq!(got, t(&[2], vec![2.0f32, 3.5]));
        // f64 mean without the data: (1 + 2) / 2
        let got = run12(
            Reduction::Mean,
            false,
            t(&[2], vec![7.0f64, 8.0]),
            vec![1, 1],
            t(&[2], vec![1.0f64, 2.0]),
        );
        assert_eq!(got, t(&[2], vec![7.0f64, 1.5]));
        // use_init_val = false keeps −0 for a sum of −0 and −inf for max of −inf.
        let got = run12(
            Reduction::Sum,
            false,
            t(&[2], vec![5.0f32, 5.0]),
            vec![0, 1],
            t(&[2], vec![-0.0f32, f32::NEG_INFINITY]),
        );
        assert_eq!(bits(&got), bits(&t(&[2], vec![-0.0f32, f32::NEG_INFINITY])));
        let got = run12(
            Reduction::Max,
            false,
            t(&[1], vec![5.0f32]),
            vec![0, 0],
            t(&[2], vec![f32::NEG_INFINITY, f32::NEG_INFINITY]),
        );
        assert_eq!(got, t(&[1], vec![f32::NEG_INFINITY]));
        // NaN propagates through min and max whichever side it is on; −0 < +0.
        for r in [Reduction::Max, Reduction::Min] {
            let got = run12(
                r,
                true,
                t(&[2], vec![1.0f32, f32::NAN]),
                vec![0, 1],
                t(&[2], vec![f32::NAN, 2.0]),
            );
            let v = got.view::<f32>().unwrap();
            assert!(v.iter().all(|x| x.is_nan()), "{r}: {v:?}");
        }
        let got = run12(
            Reduction::Min,
            true,
            t(&[2], vec![0.0f32, -0.0]),
            vec![0, 1],
            t(&[2], vec![-0.0f32, 0.0]),
        );
        assert_eq!(bits(&got), bits(&t(&[2], vec![-0.0f32, -0.0])));
        let got = run12(
            Reduction::Max,
            true,
            t(&[2], vec![0.0f32, -0.0]),
            vec![0, 1],
            t(&[2], vec![-0.0f32, 0.0]),
        );
        assert_eq!(bits(&got), bits(&t(&[2], vec![0.0f32, 0.0])));
        // f16 sums round at each step: 2048 + 1 = 2049 → 2048 (ties to even), twice.
        let h = |v: f32| f16::from_f32(v);
        let got = run12(
            Reduction::Sum,
            true,
            t(&[1], vec![h(2048.0)]),
            vec![0, 0],
            t(&[2], vec![h(1.0), h(1.0)]),
        );
        assert_eq!(got, t(&[1], vec![h(2048.0)]));
        // f16 and bf16 means: the sum in the type, divided in f32, rounded once.
        let got = run12(
            Reduction::Mean,
            true,
            t(&[1], vec![h(1.0)]),
            vec![0, 0],
            t(&[2], vec![h(2.0), h(2.0)]),
        );
        assert_eq!(got, t(&[1], vec![h(5.0 / 3.0)]));
        let b = |v: f32| bf16::from_f32(v);
        let got = run12(
            Reduction::Prod,
            true,
            t(&[1], vec![b(3.0)]),
            vec![0, 0],
            t(&[2], vec![b(-0.5), b(1.0 / 3.0)]),
        );
        assert_eq!(
            got,
            t(&[1], vec![b(b(-1.5).to_f32() * b(1.0 / 3.0).to_f32())])
        );
    }

    #[test]
    fn integer_reductions_wrap() {
        let got = run(
            &elements_12(Reduction::Sum, true),
            &[
                t(&[2], vec![200u8, 0]),
                t(&[3], vec![0i32, 1, 1]),
                t(&[3], vec![100u8, 1, 255]),
                axis(0),
            ],
        )
        .unwrap();
        assert_eq!(got, t(&[2], vec![44u8, 0]));
        let got = run(
            &nd_15(Reduction::Prod),
            &[
                t(&[1], vec![i32::MAX]),
                t(&[1, 1], vec![0i64]),
                t(&[1], vec![2i32]),
            ],
        )
        .unwrap();
        assert_eq!(got, t(&[1], vec![-2i32]));
        let got = run(
            &nd_15(Reduction::Sub),
            &[
                t(&[1], vec![i64::MIN]),
                t(&[1, 1], vec![0i32]),
                t(&[1], vec![1i64]),
            ],
        )
        .unwrap();
        assert_eq!(got, t(&[1], vec![i64::MAX]));
    }

    #[test]
    fn boolean_reductions() {
        // Four places, each with data `d` reached by updates `u` (in order).
        let data = t(&[4], vec![false, true, true, false]);
        let idx = t(&[6, 1], vec![0i32, 1, 1, 2, 3, 3]);
        let upd = t(&[6], vec![true, false, true, false, true, true]);
        for (r, want) in [
            (Reduction::None, [true, true, false, true]),
            (Reduction::Sum, [true, true, true, true]),
            (Reduction::Max, [true, true, true, true]),
            (Reduction::Prod, [false, false, false, false]),
            (Reduction::Min, [false, false, false, false]),
            // false^1 = 1; 1^0^1 = 0; 1^0 = 1; 0^1^1 = 0
            (Reduction::Sub, [true, false, true, false]),
        ] {
            let got = run(&nd_15(r), &[data.clone(), idx.clone(), upd.clone()]).unwrap();
            assert_eq!(got, t(&[4], want.to_vec()), "{r}");
        }
        // ScatterElementsUpdate-12 sum and prod on boolean: OR and AND.
        let run12 = |r| {
            run(
                &elements_12(r, true),
                &[
                    data.clone(),
                    t(&[6], vec![0i32, 1, 1, 2, 3, 3]),
                    upd.clone(),
                    axis(0),
                ],
            )
        };
        assert_eq!(
            run12(Reduction::Sum).unwrap(),
            t(&[4], vec![true, true, true, true])
        );
        assert_eq!(
            run12(Reduction::Prod).unwrap(),
            t(&[4], vec![false, false, false, false])
        );
        assert!(matches!(run12(Reduction::Mean), Err(EvalError::Invalid(m)) if m.contains("mean")));
    }

    #[test]
    fn scatter_elements_errors() {
        let data = || t(&[2, 3], vec![0i32; 6]);
        let upd = |shape: &[usize]| t(shape, vec![1i32; shape.iter().product()]);
        // -3 takes no negative index, -12 takes -3..3
        let idx = || t(&[1, 2], vec![0i64, -3]);
        let m = run_err(&elements_3(), &[data(), idx(), upd(&[1, 2]), axis(1)]);
        assert!(
            m.contains("index -3 at indices position [0, 1] is out of range 0..3 for axis 1")
                && m.contains("ScatterElementsUpdate-3 takes no negative index"),
            "{m}"
        );
        let got = run(
            &elements_12(Reduction::None, true),
            &[data(), idx(), upd(&[1, 2]), axis(1)],
        )
        .unwrap();
        // -3 counts from the end: 0
        assert_eq!(got, t(&[2, 3], vec![1, 0, 0, 0, 0, 0]));
        let m = run_err(
            &elements_12(Reduction::None, true),
            &[data(), t(&[1, 2], vec![0i64, -4]), upd(&[1, 2]), axis(1)],
        );
        assert!(
            m.contains("index -4 at indices position [0, 1] is out of range -3..3"),
            "{m}"
        );
        // the axis dim of the indices may exceed the data's; another may not
        let got = run(
            &elements_3(),
            &[
                data(),
                t(&[1, 5], vec![0u8, 1, 2, 0, 1]),
                upd(&[1, 5]),
                axis(1),
            ],
        )
        .unwrap();
        assert_eq!(got, t(&[2, 3], vec![1, 1, 1, 0, 0, 0]));
        let m = run_err(
            &elements_3(),
            &[data(), t(&[3, 1], vec![0u8; 3]), upd(&[3, 1]), axis(1)],
        );
        assert!(
            m.contains("indices dim 0 (3) exceeds data dim 0 (2)"),
            "{m}"
        );
        let m = run_err(
            &elements_3(),
            &[data(), t(&[2], vec![0u8; 2]), upd(&[2]), axis(0)],
        );
        assert!(m.contains("needs one rank"), "{m}");
        let m = run_err(
            &elements_3(),
            &[data(), t(&[1, 2], vec![0u8; 2]), upd(&[2, 1]), axis(0)],
        );
        assert!(m.contains("must have the indices' shape [1, 2]"), "{m}");
        let m = run_err(
            &elements_3(),
            &[
                data(),
                t(&[1, 2], vec![0u8; 2]),
                upd(&[1, 2]),
                t(&[2], vec![0i32, 1]),
            ],
        );
        assert!(m.contains("the axis holds 2 values"), "{m}");
    }

    // ---- ScatterNDUpdate ----

    #[test]
    fn scatter_nd_spec_examples() {
        // ScatterNDUpdate-3, example 1
        let got = run(
            &nd_4(),
            &[
                t(&[8], (1..=8).collect::<Vec<i64>>()),
                t(&[4, 1], vec![4i32, 3, 1, 7]),
                t(&[4], vec![9i64, 10, 11, 12]),
            ],
        )
        .unwrap();
        assert_eq!(got, t(&[8], vec![1i64, 11, 3, 10, 9, 6, 7, 12]));
        // example 2: two 4x4 slices
        let block = |rows: [[i32; 4]; 4]| rows.concat();
        let a = block([[1, 2, 3, 4], [5, 6, 7, 8], [8, 7, 6, 5], [4, 3, 2, 1]]);
        let b = block([[8, 7, 6, 5], [4, 3, 2, 1], [1, 2, 3, 4], [5, 6, 7, 8]]);
        let u0 = block([[5; 4], [6; 4], [7; 4], [8; 4]]);
        let u1 = block([[1; 4], [2; 4], [3; 4], [4; 4]]);
        let data = t(
            &[4, 4, 4],
            [a.clone(), a.clone(), b.clone(), b.clone()].concat(),
        );
        let got = run(
            &nd_4(),
            &[
                data,
                t(&[2, 1], vec![0i64, 2]),
                t(&[2, 4, 4], [u0.clone(), u1.clone()].concat()),
            ],
        )
        .unwrap();
        assert_eq!(got, t(&[4, 4, 4], [u0, a, u1, b].concat()));
        // ScatterNDUpdate-15 (and -14) examples: data [1, 2, 3, 4], indices [0, 2, -3, -3, 0],
        // updates [10, 20, 30, 40, 50]. The -15 page prints [500, 3600, 40, 4] for prod, which
        // reads -3 as 2 and 2 as 1 (its other examples read -3 as 1): 1·10·50, 2·30·40, 3·20.
        for (r, want) in [
            (Reduction::None, [50, 40, 20, 4]),
            (Reduction::Sum, [61, 72, 23, 4]),
            (Reduction::Sub, [-59, -68, -17, 4]),
            (Reduction::Prod, [500, 2400, 60, 4]),
            (Reduction::Min, [1, 2, 3, 4]),
            (Reduction::Max, [50, 40, 20, 4]),
        ] {
            let got = run(
                &nd_15(r),
                &[
                    t(&[4], vec![1i32, 2, 3, 4]),
                    t(&[5, 1], vec![0i32, 2, -3, -3, 0]),
                    t(&[5], vec![10i32, 20, 30, 40, 50]),
                ],
            )
            .unwrap();
            assert_eq!(got, t(&[4], want.to_vec()), "{r}");
        }
        // the -14 page's example 1: [1, 11, 3, 10, 14, 6, 13, 12]
        let got = run(
            &nd_15(Reduction::None),
            &[
                t(&[8], (1..=8).collect::<Vec<i32>>()),
                t(&[6, 1], vec![4i64, 3, 1, 7, -2, -4]),
                t(&[6], vec![9i32, 10, 11, 12, 13, 14]),
            ],
        )
        .unwrap();
        assert_eq!(got, t(&[8], vec![1, 11, 3, 10, 14, 6, 13, 12]));
    }

    #[test]
    fn scatter_nd_shapes() {
        // Full coordinates into a matrix, a scalar update given as [1] or [1, 1], and k = 0
        // (each row replaces the whole data: the last wins).
        let data = || t(&[2, 3], (0..6).collect::<Vec<u16>>());
        let got = run(
            &nd_4(),
            &[
                data(),
                t(&[2, 2], vec![1i32, 2, 0, 1]),
                t(&[2], vec![70u16, 80]),
            ],
        )
        .unwrap();
        assert_eq!(got, t(&[2, 3], vec![0u16, 80, 2, 3, 4, 70]));
        for ushape in [&[][..], &[1], &[1, 1]] {
            let got = run(
                &nd_4(),
                &[data(), t(&[2], vec![1i64, 0]), t(ushape, vec![9u16])],
            )
            .unwrap();
            assert_eq!(got, t(&[2, 3], vec![0u16, 1, 2, 9, 4, 5]), "{ushape:?}");
        }
        let got = run(
            &nd_4(),
            &[
                data(),
                t(&[2, 0], Vec::<i32>::new()),
                t(&[2, 2, 3], (10..22).collect::<Vec<u16>>()),
            ],
        )
        .unwrap();
        assert_eq!(got, t(&[2, 3], (16..22).collect::<Vec<u16>>()));
        // Rows of a 3-D tensor with 2-D index rows.
        let got = run(
            &nd_15(Reduction::Sum),
            &[
                t(&[2, 2, 2], vec![0i8; 8]),
                t(&[2, 1, 2], vec![1i32, 0, 1, 0]),
                t(&[2, 1, 2], vec![1i8, 2, 3, 4]),
            ],
        )
        .unwrap();
        assert_eq!(got, t(&[2, 2, 2], vec![0i8, 0, 0, 0, 4, 6, 0, 0]));
    }

    #[test]
    fn scatter_nd_errors() {
        let data = || t(&[4, 3], vec![0f32; 12]);
        // each coordinate is checked against its own dim (7 ≥ 3, though the flat offset
        // 0·3 + 7 lies inside the data)
        let m = run_err(
            &nd_4(),
            &[data(), t(&[1, 2], vec![0i32, 7]), t(&[1], vec![1f32])],
        );
        assert!(
            m.contains("index 7 at indices position [0, 1] is out of range 0..3 for data dim 1"),
            "{m}"
        );
        let m = run_err(
            &nd_4(),
            &[data(), t(&[1, 2], vec![-1i64, 0]), t(&[1], vec![1f32])],
        );
        assert!(
            m.contains("ScatterNDUpdate-4 takes no negative index"),
            "{m}"
        );
        let got = run(
            &nd_15(Reduction::None),
            &[data(), t(&[1, 2], vec![-1i64, -3]), t(&[1], vec![1f32])],
        )
        .unwrap();
        assert_eq!(got.view::<f32>().unwrap()[[3, 0]], 1.0);
        let m = run_err(
            &nd_15(Reduction::None),
            &[data(), t(&[1, 2], vec![-5i64, 0]), t(&[1], vec![1f32])],
        );
        assert!(m.contains("out of range -4..4 for data dim 0"), "{m}");
        let m = run_err(
            &nd_4(),
            &[data(), t(&[1, 3], vec![0i32; 3]), t(&[1], vec![1f32])],
        );
        assert!(
            m.contains("last dim of the indices (3) exceeds the data's rank (2)"),
            "{m}"
        );
        let m = run_err(
            &nd_4(),
            &[data(), t(&[2, 1], vec![0i32; 2]), t(&[2, 2], vec![1f32; 4])],
        );
        assert!(m.contains("= [2, 3]"), "{m}");
        let m = run_err(
            &nd_4(),
            &[data(), t(&[2], vec![0i32; 2]), t(&[2], vec![1f32; 2])],
        );
        assert!(m.contains("must hold one element"), "{m}");
        let m = run_err(
            &nd_4(),
            &[data(), t(&[], vec![0i32]), t(&[3], vec![1f32; 3])],
        );
        assert!(m.contains("indices of rank 1 or more"), "{m}");
        let m = run_err(
            &nd_4(),
            &[t(&[], vec![0f32]), t(&[1], vec![0i32]), t(&[], vec![1f32])],
        );
        assert!(m.contains("data of rank 1 or more"), "{m}");
    }

    /// Outputs (and reduction state) over the budget are refused before they are allocated.
    #[test]
    fn memory_budget() {
        let data = t(&[1 << 16], vec![0i64; 1 << 16]); // 512 KiB
        let idx = t(&[1, 1], vec![3i32]);
        let upd = t(&[1], vec![1i64]);
        let inputs = [data, idx, upd];
        let got = eval_for_test(&nd_4(), &inputs, 400_000);
        assert!(matches!(got, Err(EvalError::Memory(_))), "{got:?}");
        assert!(eval_for_test(&nd_4(), &inputs, 600_000).is_ok());
    }

    /// Every element type moves bit for bit (NaN payloads and −0 too).
    #[test]
    fn every_type_moves_exactly() {
        fn check<T: Element>(f: impl Fn(usize) -> T) {
            let data = t(&[2, 3], (0..6).map(&f).collect());
            let upd = t(&[2, 1], vec![f(10), f(11)]);
            let got = run(&update_3(), &[data, t(&[1], vec![2i32]), upd, axis(1)]).unwrap();
            let want = t(&[2, 3], vec![f(0), f(1), f(10), f(3), f(4), f(11)]);
            assert_eq!(bits(&got), bits(&want), "{}", T::TYPE);
        }
        check(|i| i as u8);
        check(|i| i as i8 - 5);
        check(|i| i as u16 * 300);
        check(|i| i as i16 - 300);
        check(|i| i as u32 * 70_000);
        check(|i| i as i32 - 70_000);
        check(|i| i as u64 * (1 << 40));
        check(|i| -(i as i64) * (1 << 40));
        check(|i| i % 3 == 0);
        check(|i| {
            if i == 10 {
                f32::from_bits(0x7fc0_1234)
            } else {
                i as f32 - 0.5
            }
        });
        check(|i| if i == 11 { -0.0f64 } else { i as f64 * 1e300 });
        check(|i| f16::from_bits(0x7e00 | i as u16));
        check(|i| bf16::from_f32(i as f32 - 2.5));
    }

    // ---- against a naive model written from the specs' coordinate formulas ----

    /// A small deterministic generator (xorshift).
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }

        /// In `lo..hi`.
        fn range(&mut self, lo: i64, hi: i64) -> i64 {
            lo + (self.next() % (hi - lo) as u64) as i64
        }

        fn shape(&mut self, rank: usize, lo: i64, hi: i64) -> Vec<usize> {
            (0..rank).map(|_| self.range(lo, hi) as usize).collect()
        }
    }

    fn ravel(coord: &[usize], shape: &[usize]) -> usize {
        coord.iter().zip(shape).fold(0, |a, (&c, &d)| a * d + c)
    }

    fn count(shape: &[usize]) -> usize {
        shape.iter().product()
    }

    /// The spec's per-element formula, on i32 (wrapping), with the -12 mean and
    /// `use_init_val` rules; `writes` lists (place, update) in the order updates apply.
    fn naive_reduce(data: &[i32], writes: &[(usize, i32)], r: Reduction, init: bool) -> Vec<i32> {
        let mut out = data.to_vec();
        let mut hits = vec![0i128; data.len()];
        let mut sums: Vec<i128> = data
            .iter()
            .map(|&x| if init { x as i128 } else { 0 })
            .collect();
        for &(p, u) in writes {
            let first = hits[p] == 0;
            hits[p] += 1;
            sums[p] += u as i128;
            out[p] = if r == Reduction::None || (first && !init) {
                u
            } else {
                match r {
                    Reduction::Sum | Reduction::Mean => out[p].wrapping_add(u),
                    Reduction::Sub => out[p].wrapping_sub(u),
                    Reduction::Prod => out[p].wrapping_mul(u),
                    Reduction::Min => out[p].min(u),
                    Reduction::Max => out[p].max(u),
                    Reduction::None => u,
                }
            };
        }
        if r == Reduction::Mean {
            for p in 0..out.len() {
                if hits[p] > 0 {
                    let n = hits[p] + init as i128;
                    out[p] = sums[p].div_euclid(n) as i32;
                }
            }
        }
        out
    }

    #[test]
    fn random_cases_match_the_naive_model() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        for case in 0..300 {
            let rank = rng.range(1, 4) as usize;
            let dshape = rng.shape(rank, 1, 4);
            let n = count(&dshape);
            let data: Vec<i32> = (0..n).map(|_| rng.range(-50, 50) as i32).collect();
            let data_t = t(&dshape, data.clone());
            let a = rng.range(0, rank as i64) as usize;
            let axis_t = axis(if rng.next().is_multiple_of(2) {
                a as i64
            } else {
                a as i64 - rank as i64
            });

            // ScatterUpdate-3
            {
                let r = rng.range(0, 3) as usize;
                let ishape = rng.shape(r, 1, 3);
                let idx: Vec<i64> = (0..count(&ishape))
                    .map(|_| rng.range(0, dshape[a] as i64))
                    .collect();
                let ushape: Vec<usize> = [&dshape[..a], &ishape[..], &dshape[a + 1..]].concat();
                let upd: Vec<i32> = (0..count(&ushape))
                    .map(|_| rng.range(-99, 99) as i32)
                    .collect();
                let mut want = data.clone();
                for (f, &u) in upd.iter().enumerate() {
                    let c = crate::tensor::unravel(f, &ushape);
                    let m = &c[a..a + ishape.len()];
                    let mut dc = c[..a].to_vec();
                    dc.push(idx[ravel(m, &ishape)] as usize);
                    dc.extend_from_slice(&c[a + ishape.len()..]);
                    want[ravel(&dc, &dshape)] = u;
                }
                let got = run(
                    &update_3(),
                    &[
                        data_t.clone(),
                        t(&ishape, idx),
                        t(&ushape, upd),
                        axis_t.clone(),
                    ],
                )
                .unwrap();
                assert_eq!(got, t(&dshape, want), "ScatterUpdate case {case}");
            }

            // ScatterElementsUpdate-3 and -12
            for (op, negative) in [
                (elements_3(), false),
                (elements_12(Reduction::None, true), true),
                (
                    elements_12(Reduction::Sum, rng.next().is_multiple_of(2)),
                    true,
                ),
                (
                    elements_12(Reduction::Prod, rng.next().is_multiple_of(2)),
                    true,
                ),
                (
                    elements_12(Reduction::Min, rng.next().is_multiple_of(2)),
                    true,
                ),
                (
                    elements_12(Reduction::Max, rng.next().is_multiple_of(2)),
                    true,
                ),
                (
                    elements_12(Reduction::Mean, rng.next().is_multiple_of(2)),
                    true,
                ),
            ] {
                let ishape: Vec<usize> = (0..rank)
                    .map(|k| {
                        if k == a {
                            rng.range(0, 6) as usize
                        } else {
                            rng.range(0, dshape[k] as i64 + 1) as usize
                        }
                    })
                    .collect();
                let d = dshape[a] as i64;
                let lo = if negative { -d } else { 0 };
                let idx: Vec<i64> = (0..count(&ishape)).map(|_| rng.range(lo, d)).collect();
                let upd: Vec<i32> = (0..count(&ishape))
                    .map(|_| rng.range(-9, 9) as i32)
                    .collect();
                let writes: Vec<(usize, i32)> = (0..idx.len())
                    .map(|f| {
                        let mut c = crate::tensor::unravel(f, &ishape);
                        c[a] = (idx[f] + if idx[f] < 0 { d } else { 0 }) as usize;
                        (ravel(&c, &dshape), upd[f])
                    })
                    .collect();
                let want = naive_reduce(&data, &writes, op.reduction, op.use_init_val);
                let got = run(
                    &op,
                    &[
                        data_t.clone(),
                        t(&ishape, idx),
                        t(&ishape, upd),
                        axis_t.clone(),
                    ],
                )
                .unwrap();
                assert_eq!(got, t(&dshape, want), "{op:?} case {case}");
            }

            // ScatterNDUpdate-4 and -15
            for op in [
                nd_4(),
                nd_15(Reduction::None),
                nd_15(Reduction::Sum),
                nd_15(Reduction::Sub),
                nd_15(Reduction::Prod),
                nd_15(Reduction::Min),
                nd_15(Reduction::Max),
            ] {
                let k = rng.range(0, rank as i64 + 1) as usize;
                let r = rng.range(0, 3) as usize;
                let rows = rng.shape(r, 1, 4);
                let ishape: Vec<usize> = [&rows[..], &[k]].concat();
                let idx: Vec<i64> = (0..count(&ishape))
                    .map(|f| {
                        let d = dshape[f % k] as i64;
                        rng.range(if op.version == 15 { -d } else { 0 }, d)
                    })
                    .collect();
                let ushape: Vec<usize> = [&rows[..], &dshape[k..]].concat();
                let upd: Vec<i32> = (0..count(&ushape))
                    .map(|_| rng.range(-9, 9) as i32)
                    .collect();
                let mut writes = Vec::new();
                for (f, &u) in upd.iter().enumerate() {
                    let c = crate::tensor::unravel(f, &ushape);
                    let row = ravel(&c[..rows.len()], &rows);
                    let mut dc: Vec<usize> = (0..k)
                        .map(|j| {
                            let v = idx[row * k + j];
                            (v + if v < 0 { dshape[j] as i64 } else { 0 }) as usize
                        })
                        .collect();
                    dc.extend_from_slice(&c[rows.len()..]);
                    writes.push((ravel(&dc, &dshape), u));
                }
                let want = naive_reduce(&data, &writes, op.reduction, true);
                let it = if rng.next().is_multiple_of(2) {
                    t(&ishape, idx)
                } else {
                    t(&ishape, idx.iter().map(|&v| v as i32).collect())
                };
                let got = run(&op, &[data_t.clone(), it, t(&ushape, upd)]).unwrap();
                assert_eq!(got, t(&dshape, want), "{op:?} case {case}");
            }
        }
    }

    // ---- parsing ----

    fn parsed(def: &OpDef, attrs: &[(&str, &str)]) -> Result<String, Vec<String>> {
        crate::ops::context::parsed_for_test(def, attrs)
    }

    #[test]
    fn parse_table() {
        let ok = |op: Scatter| Ok(format!("{op:?}"));
        assert_eq!(parsed(&SCATTER_UPDATE_3, &[]), ok(update_3()));
        assert_eq!(parsed(&SCATTER_ELEMENTS_UPDATE_3, &[]), ok(elements_3()));
        assert_eq!(parsed(&SCATTER_ND_UPDATE_4, &[]), ok(nd_4()));
        assert_eq!(
            parsed(&SCATTER_ELEMENTS_UPDATE_12, &[]),
            ok(elements_12(Reduction::None, true))
        );
        assert_eq!(
            parsed(
                &SCATTER_ELEMENTS_UPDATE_12,
                &[("reduction", "MEAN"), ("use_init_val", "false")]
            ),
            ok(elements_12(Reduction::Mean, false))
        );
        assert_eq!(
            parsed(&SCATTER_ND_UPDATE_15, &[("reduction", "sub")]),
            ok(nd_15(Reduction::Sub))
        );
        assert_eq!(
            parsed(&SCATTER_ND_UPDATE_15, &[]),
            ok(nd_15(Reduction::None))
        );
        // `sub` is ScatterNDUpdate's, `mean` ScatterElementsUpdate's; every problem at once.
        assert_eq!(
            parsed(
                &SCATTER_ELEMENTS_UPDATE_12,
                &[("reduction", "sub"), ("use_init_val", "maybe")]
            ),
            Err(vec![
                "reduction Some(\"sub\"): expected one of none, sum, prod, min, max, mean".into(),
                "use_init_val Some(\"maybe\"): expected true, false, 1 or 0".into(),
            ])
        );
        assert_eq!(
            parsed(&SCATTER_ND_UPDATE_15, &[("reduction", "mean")]),
            Err(vec![
                "reduction Some(\"mean\"): expected one of none, sum, sub, prod, min, max".into()
            ])
        );
        for (def, title) in [
            (&SCATTER_UPDATE_3, "ScatterUpdate-3"),
            (&SCATTER_ELEMENTS_UPDATE_3, "ScatterElementsUpdate-3"),
            (&SCATTER_ELEMENTS_UPDATE_12, "ScatterElementsUpdate-12"),
            (&SCATTER_ND_UPDATE_4, "ScatterNDUpdate-4"),
            (&SCATTER_ND_UPDATE_15, "ScatterNDUpdate-15"),
        ] {
            assert_eq!(def.title(), title);
            assert!(def.opsets().is_some(), "{title} is in OpenVINO's opsets");
            let op = (def.parse)(&Attrs::new(None)).unwrap();
            assert_eq!(op.def().map(|d| d.title()).as_deref(), Some(title));
        }
    }

    // ---- inference ----

    fn ty(et: ElementType, shape: &str) -> TensorType {
        TensorType::new(et, PartialShape::parse(shape).unwrap())
    }

    fn infer(op: &Scatter, inputs: &[TensorType]) -> Result<String, String> {
        let refs: Vec<&TensorType> = inputs.iter().collect();
        inferred_shape_for_test(op, &refs)
    }

    fn infer_err(op: &Scatter, inputs: &[TensorType], want: &str) {
        match infer(op, inputs) {
            Err(m) => assert!(m.contains(want), "expected {want:?} in {m:?}"),
            Ok(s) => panic!("expected {want:?}, inferred {s}"),
        }
    }

    const F32: ElementType = ElementType::F32;
    const I32: ElementType = ElementType::I32;
    const I64: ElementType = ElementType::I64;

    fn known_axis(a: i64) -> TensorType {
        TensorType::of_value(axis(a))
    }

    #[test]
    fn infer_scatter_update() {
        let op = update_3();
        let ok = |d: &str, i: &str, u: &str, a: TensorType, want: &str| {
            assert_eq!(
                infer(&op, &[ty(F32, d), ty(I64, i), ty(F32, u), a]).as_deref(),
                Ok(want),
                "{d} {i} {u}"
            );
        };
        ok(
            "1000,256,10,15",
            "125,20",
            "1000,125,20,10,15",
            known_axis(1),
            "[1000,256,10,15]",
        );
        ok("?,5", "2", "3..4,2", known_axis(-1), "[?,5]");
        ok("2..8,5", "?", "3,?", known_axis(1), "[2..8,5]");
        ok("2,5", "2", "2,2", ty(I32, "1"), "[2,5]");
        ok("...", "2", "2,2", known_axis(7), "[...]");
        ok("2,5", "2", "...", known_axis(1), "[2,5]");
        let bad = |d: &str, i: &str, u: &str, a: TensorType, want: &str| {
            infer_err(&op, &[ty(F32, d), ty(I64, i), ty(F32, u), a], want);
        };
        bad("3,5", "2", "3,3", known_axis(1), "dim 1 is 3, not 2");
        bad("3,5", "2", "4,2", known_axis(1), "dim 0 is 4, not 3");
        bad("3,5", "2", "6..9,2", known_axis(1), "dim 0 is 6..9, not 3");
        bad(
            "3,5",
            "2,2",
            "3,2",
            ty(I32, ""),
            "rank(indices) + rank(data) - 1 = 2 + 2 - 1 = 3",
        );
        bad(
            "3,5",
            "2",
            "3,2",
            known_axis(2),
            "axis 2 is out of range for data of rank 2",
        );
        bad("", "2", "2", ty(I32, ""), "rank 1 or more");
        bad(
            "3,5",
            "2",
            "3,2",
            ty(I32, "2"),
            "the axis must be a scalar or a 1-D tensor",
        );
        // known indices are checked against the axis dim (its largest value)
        let idx = TensorType::of_value(t(&[2], vec![0i64, 5]));
        infer_err(
            &op,
            &[
                ty(F32, "3,2..5"),
                idx.clone(),
                ty(F32, "3,2"),
                known_axis(1),
            ],
            "index 5 at indices position [1] is out of range 0..5 for axis 1 of the data of size 2..5",
        );
        assert!(
            infer(
                &op,
                &[ty(F32, "3,2..6"), idx, ty(F32, "3,2"), known_axis(1)]
            )
            .is_ok()
        );
        // types
        infer_err(
            &op,
            &[ty(F32, "3"), ty(F32, "1"), ty(F32, "1"), known_axis(0)],
            "does not accept f32",
        );
        infer_err(
            &op,
            &[
                ty(F32, "3"),
                ty(I32, "1"),
                ty(ElementType::F16, "1"),
                known_axis(0),
            ],
            "element types differ",
        );
        let out = crate::ops::context::infer_for_test(
            &op,
            &[
                &ty(ElementType::Dynamic, "3"),
                &ty(I32, "1"),
                &ty(ElementType::Boolean, "1"),
                &known_axis(0),
            ],
        );
        assert_eq!(out.0.unwrap()[0].element_type, ElementType::Boolean);
    }

    #[test]
    fn infer_scatter_elements() {
        for op in [elements_3(), elements_12(Reduction::Sum, false)] {
            let ok = |d: &str, i: &str, u: &str, a: TensorType, want: &str| {
                assert_eq!(
                    infer(&op, &[ty(F32, d), ty(I32, i), ty(F32, u), a]).as_deref(),
                    Ok(want),
                    "{d} {i} {u}"
                );
            };
            ok(
                "1000,256,7,7",
                "125,20,7,6",
                "125,20,7,6",
                known_axis(0),
                "[1000,256,7,7]",
            );
            // the axis dim of the indices may exceed the data's
            ok("3,4", "6,4", "6,4", known_axis(0), "[3,4]");
            ok("3,?", "2,1..3", "?,2", known_axis(-1), "[3,?]");
            ok("3,4", "3,9", "3,9", ty(I32, ""), "[3,4]");
            ok("...", "2,2", "2,2", known_axis(0), "[...]");
            let bad = |d: &str, i: &str, u: &str, a: TensorType, want: &str| {
                infer_err(&op, &[ty(F32, d), ty(I32, i), ty(F32, u), a], want);
            };
            bad(
                "3,4",
                "2,5",
                "2,5",
                known_axis(0),
                "indices dim 1 (5) exceeds data dim 1 (4)",
            );
            bad(
                "3,2..4",
                "2,5..",
                "2,?",
                known_axis(0),
                "indices dim 1 (5..) exceeds data dim 1 (2..4)",
            );
            bad(
                "3,4",
                "...",
                "2,6",
                known_axis(0),
                "updates dim 1 (6) exceeds data dim 1 (4)",
            );
            bad("3,4", "2,2", "2,3", known_axis(0), "dim 1 is 3, not 2");
            bad(
                "3,4",
                "2,2",
                "2,2,1",
                known_axis(0),
                "(rank 3) but must have the shape of the indices = [2,2] (rank 2)",
            );
            bad(
                "3,4",
                "2",
                "2",
                known_axis(0),
                "the indices have rank 1 but the data rank 2",
            );
            bad(
                "3,4",
                "2,2",
                "2,2",
                known_axis(-3),
                "axis -3 is out of range for data of rank 2",
            );
        }
        let idx = TensorType::of_value(t(&[1, 2], vec![0i64, -3]));
        infer_err(
            &elements_3(),
            &[ty(F32, "2,3"), idx.clone(), ty(F32, "1,2"), known_axis(1)],
            "ScatterElementsUpdate-3 takes no negative index",
        );
        let v12 = elements_12(Reduction::None, true);
        assert!(infer(&v12, &[ty(F32, "2,3"), idx, ty(F32, "1,2"), known_axis(1)]).is_ok());
        infer_err(
            &v12,
            &[
                ty(F32, "2,3"),
                TensorType::of_value(t(&[1, 2], vec![0i64, -4])),
                ty(F32, "1,2"),
                known_axis(1),
            ],
            "out of range -3..3",
        );
        infer_err(
            &elements_12(Reduction::Mean, true),
            &[
                ty(ElementType::Boolean, "2"),
                ty(I32, "2"),
                ty(ElementType::Boolean, "2"),
                known_axis(0),
            ],
            "reduction mean is not defined for boolean data",
        );
        assert!(
            infer(
                &elements_12(Reduction::Max, true),
                &[
                    ty(ElementType::Boolean, "2"),
                    ty(ElementType::U8, "2"),
                    ty(ElementType::Boolean, "2"),
                    known_axis(0),
                ],
            )
            .is_ok()
        );
    }

    #[test]
    fn infer_scatter_nd() {
        for op in [nd_4(), nd_15(Reduction::Prod)] {
            let ok = |d: &str, i: &str, u: &str, want: &str| {
                assert_eq!(
                    infer(&op, &[ty(F32, d), ty(I64, i), ty(F32, u)]).as_deref(),
                    Ok(want),
                    "{d} {i} {u}"
                );
            };
            ok(
                "1000,256,10,15",
                "25,125,3",
                "25,125,15",
                "[1000,256,10,15]",
            );
            ok("8", "4,1", "4", "[8]");
            ok("4,2..6", "3,1", "?,3", "[4,2..6]");
            ok("4,?", "3,?", "3,9,9", "[4,?]");
            ok("4,3", "2", "1", "[4,3]");
            ok("4,3", "2", "", "[4,3]");
            ok("4,3", "5,0", "5,4,3", "[4,3]");
            ok("...", "3,2", "3", "[...]");
            let bad = |d: &str, i: &str, u: &str, want: &str| {
                infer_err(&op, &[ty(F32, d), ty(I64, i), ty(F32, u)], want);
            };
            bad("4,2..6", "3,1", "3,7", "dim 1 is 7, not 2..6");
            bad("4,3", "2,1", "3,3", "dim 0 is 3, not 2");
            bad(
                "4,3",
                "2,1",
                "2",
                "(rank 1) but must have the shape indices.shape[:-1] + data.shape[1:] = [2,3] (rank 2)",
            );
            bad(
                "4,3",
                "2,3",
                "2",
                "the last dim of the indices (3) exceeds the data's rank (2)",
            );
            bad("4,3", "2", "2", "must hold one element");
            bad("", "1", "", "data of rank 1 or more");
            bad("4", "", "", "indices of rank 1 or more");
        }
        infer_err(
            &nd_4(),
            &[ty(F32, "4"), ty(ElementType::U8, "1,1"), ty(F32, "1")],
            "does not accept u8",
        );
        infer_err(
            &nd_15(Reduction::None),
            &[ty(F32, "4"), ty(ElementType::F32, "1,1"), ty(F32, "1")],
            "does not accept f32",
        );
        // known indices: each coordinate against its own dim
        let idx = TensorType::of_value(t(&[2, 2], vec![1i32, 2, 3, -1]));
        infer_err(
            &nd_4(),
            &[ty(F32, "4,3"), idx.clone(), ty(F32, "2")],
            "index -1 at indices position [1, 1]",
        );
        assert!(
            infer(
                &nd_15(Reduction::None),
                &[ty(F32, "4,3"), idx, ty(F32, "2")]
            )
            .is_ok()
        );
        infer_err(
            &nd_15(Reduction::None),
            &[
                ty(F32, "4,3"),
                TensorType::of_value(t(&[1, 2], vec![0i32, 3])),
                ty(F32, "1"),
            ],
            "index 3 at indices position [0, 1] is out of range -3..3 for data dim 1",
        );
    }

    #[test]
    fn bounds_pass_only_without_reduction() {
        assert!(update_3().moves(0) && update_3().moves(2) && !update_3().moves(1));
        assert!(nd_4().moves(0) && !nd_4().moves(3));
        assert!(!nd_15(Reduction::Sum).moves(0));
        assert!(!elements_12(Reduction::Max, true).moves(2));
    }
}
