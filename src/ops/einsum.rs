//! Einsum-7: the Einstein summation convention on one or more operands.
//!
//! Spec: <https://docs.openvino.ai/2026/documentation/openvino-ir-format/operation-sets/operation-specs/matrix/einsum-7.html>
//!
//! Ports: one or more inputs of one numeric type (boolean is refused, E502; inputs of different
//! types are E501); one output of that type. Attribute `equation` (a string, required).
//!
//! The equation: input subscripts separated by `,`, then optionally `->` and the output
//! subscript (explicit mode). A subscript is a sequence of labels: the letters `A`-`Z`,
//! `a`-`z` (case-sensitive), and at most one ellipsis `...` covering zero or more dims; a scalar's
//! subscript is empty. ASCII whitespace anywhere is ignored (the spec allows blank spaces where
//! removing them changes nothing; OpenVINO removes every `isspace` character before parsing).
//! * Each input's rank equals its subscript's letters (plus any number of dims under `...`).
//! * A label repeated within one input takes that operand's diagonal: its dims must be equal.
//! * Dims of one label in different inputs broadcast numpy-style (equal, or one of them 1), as
//!   the spec says ("need to be broadcastable"); so do the dims under the ellipsis, aligned
//!   from the right.
//! * Labels absent from the output are summed over; the output's dims are its labels' dims in
//!   its order, `...` standing for the broadcast ellipsis dims.
//! * Implicit mode (no `->`): the output is the labels that occur exactly once in all the input
//!   subscripts, sorted (capitals first), after `...` if any input has one.
//!
//! Decisions:
//! * **Attribute errors** (when the layer is read): a character that is no label, a `.` that is
//!   not part of `...`, two ellipses in one subscript, `->` twice, a label twice in the output,
//!   an output label (or `...`) that is in no input. OpenVINO lets the last two through its
//!   parser and fails later or not at all (`ij->ii` infers `[i, i]`, then its reference kernel
//!   asserts).
//! * **Implicit mode counts repeats within one subscript**: `ii` is the trace (the spec's
//!   "labels that are not repeated in the left-hand side", and numpy's rule). OpenVINO's parser
//!   looks only at the other subscripts and makes `ii` into `ii->ii`, which it cannot run.
//! * **Label dims broadcast across inputs**: `i,i->i` with `[3]` and `[1]` is `[3]` (spec,
//!   numpy, PyTorch). OpenVINO's shape inference requires them compatible (equal) and refuses
//!   such a layer. Within one input (a diagonal) they must be equal, as the spec says.
//! * **An ellipsis omitted from the output** (`...ij->ij`) sums over the dims it covers, as
//!   current OpenVINO does (its older parser refused it; numpy refuses it).
//! * **A dynamic-rank input whose subscript has `...`**: the output has a dynamic rank when the
//!   output has `...` (its rank is unknown). OpenVINO's shape inference refuses such an input
//!   outright, although every concrete rank that fits would be valid.
//! * **An empty subscript is a scalar wherever it stands**: `ij,` has two inputs, the second a
//!   scalar, and an empty equation is one scalar input (OpenVINO's splitting drops a trailing
//!   empty subscript and finds none in an empty equation).
//! * **Types**: every numeric type, as the spec lists ("any numeric type"); OpenVINO's
//!   reference kernel runs only f32 and i32.
//! * The number of subscripts must equal the number of inputs, an input's rank must fit its
//!   subscript, and the dims of one label (or under `...`) must agree as said: otherwise an
//!   invalid input (E507) naming the label, the inputs, axes and dims.
//!
//! Inference merges the dims of each label: `Dim::merge` within an input (a diagonal),
//! `Dim::broadcast_merge` across inputs and under the ellipsis (interval dims stay intervals,
//! as in OpenVINO). A label that only a dynamic-rank input holds has a dynamic dim.
//!
//! Execution:
//! * Any label whose dim is 0 makes the output all zeros (an empty sum) or empty.
//! * Each operand is read in place as a *view*: for each distinct label, its size and stride (a
//!   repeated label's stride is the sum of its axes' strides: the diagonal); an axis of 1 that
//!   broadcasts against a larger dim is dropped.
//! * **One operand**: each output element is the sum over the labels that are not in the
//!   output, by a loop of our own over the view (transposes, diagonals, traces, reductions);
//!   without a sum it is the Transpose kernel.
//! * **Several operands** are contracted left to right, pairwise, as the spec describes: the
//!   first two, then that result and the third, and so on (OpenVINO's reference happens to pair
//!   the first with the last first; the sum is the same, its rounding may differ). For each
//!   pair, the labels of one operand that no later operand and not the output need are summed
//!   out first; the labels both hold split into batch labels (needed later) and contracted ones
//!   (not needed later). The left operand is laid out as `[batch, M, K]` and the right as
//!   `[batch, K, N]` (the Transpose kernel, or the summing loop when a sum or a diagonal is
//!   involved) and multiplied by the MatMul op ([`MatMul`]); the result's labels are batch, M,
//!   N. Two shapes take a loop of our own instead, where MatMul would make one tiny product per
//!   output element: without contracted labels, an outer (or elementwise) product; with M and
//!   N both empty (`ij,ij->i`), a batched dot product, pairwise in f64 for floats (each
//!   product exact for f32 and narrower). The last result is transposed to the output's label
//!   order.
//! * **Arithmetic**: integers wrap (two's complement) everywhere, independent of order. Floats:
//!   every sum of our own is pairwise in f64 (the terms exactly widened) and rounded once to
//!   the type; MatMul's products are MatMul's (blocked f32/f64 GEMM). f16 and bf16 operands are
//!   computed in f32 throughout (the inputs widened exactly, every intermediate f32) and the
//!   output rounded once from f32 (or from f64 for a one-operand sum), so several operands do not
//!   add a rounding to f16 per step. The results are the same bits at any thread count: our
//!   loops give every output element to one task and split its sum at fixed points, and
//!   MatMul's results do not depend on its split.
//! * The output, every intermediate and MatMul's products are checked against the memory budget
//!   (with overflow-checked sizes) before they are allocated; intermediates are counted while
//!   they live.

use std::sync::Arc;

use ndarray::{ArrayD, IxDyn};
use rayon::prelude::*;

use super::matmul::MatMul;
use super::transpose::transposed_as;
use super::{Arity, AttrError, Attrs, EvalCx, EvalError, InferCx, Op, OpDef};
use crate::dtype::ElementType;
use crate::error::ErrorKind;
use crate::memory::Budget;
use crate::num::{Cast, Num};
use crate::shape::{Dim, DimRule, PartialShape, TensorType};
use crate::tensor::{Element, Tensor, TypeSet, Value};

pub const DEF: OpDef = OpDef {
    name: "Einsum",
    version: 7,
    inputs: Arity::at_least(1),
    outputs: Arity::exactly(1),
    parse,
};

fn parse(a: &Attrs) -> Result<Box<dyn Op>, Vec<AttrError>> {
    let op = a
        .parse_required("equation", Einsum::new)
        .map_err(|e| vec![e])?;
    Ok(Box::new(op))
}

/// One label of a subscript.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Label {
    /// An ASCII letter.
    Letter(u8),
    Ellipsis,
}

/// The number of letter labels; label ids `0..LETTERS` are the letters in ASCII order (capitals
/// first), ids from `LETTERS` on the dims under the ellipsis, left to right.
const LETTERS: usize = 52;

fn letter_id(c: u8) -> usize {
    if c.is_ascii_uppercase() {
        (c - b'A') as usize
    } else {
        26 + (c - b'a') as usize
    }
}

fn letter_of(id: usize) -> char {
    if id < 26 {
        (b'A' + id as u8) as char
    } else {
        (b'a' + (id - 26) as u8) as char
    }
}

/// A subscript as the equation writes it.
fn show(sub: &[Label]) -> String {
    sub.iter()
        .map(|l| match l {
            Label::Letter(c) => (*c as char).to_string(),
            Label::Ellipsis => "...".to_owned(),
        })
        .collect()
}

fn letters(sub: &[Label]) -> usize {
    sub.iter().filter(|l| matches!(l, Label::Letter(_))).count()
}

fn has_ellipsis(sub: &[Label]) -> bool {
    sub.contains(&Label::Ellipsis)
}

/// An Einsum layer: its equation, parsed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Einsum {
    /// The equation as written.
    pub equation: String,
    inputs: Vec<Vec<Label>>,
    /// The output subscript (recovered in implicit mode).
    output: Vec<Label>,
}

/// One subscript's labels, or what is wrong with it.
fn subscript(s: &str) -> Result<Vec<Label>, String> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            c if c.is_ascii_alphabetic() => {
                out.push(Label::Letter(c));
                i += 1;
            }
            b'.' if b[i..].starts_with(b"...") => {
                if has_ellipsis(&out) {
                    return Err("has two ellipses `...`; a subscript holds at most one".into());
                }
                out.push(Label::Ellipsis);
                i += 3;
            }
            b'.' => return Err("holds a `.` that is not part of an ellipsis `...`".into()),
            _ => {
                // `i` is at a character boundary: only ASCII bytes were stepped over.
                let c = s[i..].chars().next().unwrap_or('?');
                return Err(format!(
                    "holds {c:?}, which is no label (labels are the letters A-Z and a-z, and \
                     the ellipsis `...`)"
                ));
            }
        }
    }
    Ok(out)
}

impl Einsum {
    /// Parses an equation (explicit or implicit mode); the error says what is wrong with it.
    pub fn new(text: &str) -> Result<Einsum, String> {
        let eq: String = text.chars().filter(|c| !c.is_ascii_whitespace()).collect();
        let (lhs, rhs) = match eq.find("->") {
            Some(p) => (&eq[..p], Some(&eq[p + 2..])),
            None => (eq.as_str(), None),
        };
        let inputs = lhs
            .split(',')
            .enumerate()
            .map(|(i, s)| subscript(s).map_err(|e| format!("input subscript {i} {s:?} {e}")))
            .collect::<Result<Vec<_>, _>>()?;
        let output = match rhs {
            None => {
                // Labels seen once in all the input subscripts, sorted; `...` first.
                let mut count = [0usize; LETTERS];
                for l in inputs.iter().flatten() {
                    if let Label::Letter(c) = l {
                        count[letter_id(*c)] += 1;
                    }
                }
                let mut out: Vec<Label> = Vec::new();
                if inputs.iter().any(|s| has_ellipsis(s)) {
                    out.push(Label::Ellipsis);
                }
                out.extend(
                    (0..LETTERS)
                        .filter(|&id| count[id] == 1)
                        .map(|id| Label::Letter(letter_of(id) as u8)),
                );
                out
            }
            Some(s) => {
                if s.contains("->") {
                    return Err("`->` appears more than once".into());
                }
                let out = subscript(s).map_err(|e| format!("the output subscript {s:?} {e}"))?;
                for (k, l) in out.iter().enumerate() {
                    if let Label::Letter(c) = l {
                        let c = *c as char;
                        if out[..k].contains(l) {
                            return Err(format!(
                                "label `{c}` appears twice in the output subscript {s:?}"
                            ));
                        }
                        if !inputs.iter().flatten().any(|x| x == l) {
                            return Err(format!("the output label `{c}` is in no input subscript"));
                        }
                    }
                }
                if has_ellipsis(&out) && !inputs.iter().any(|s| has_ellipsis(s)) {
                    return Err("the output subscript has `...` but no input subscript has".into());
                }
                out
            }
        };
        Ok(Einsum {
            equation: text.to_owned(),
            inputs,
            output,
        })
    }

    /// The equation in explicit mode, without spaces (`ij,jk->ik`).
    pub fn explicit(&self) -> String {
        let inputs: Vec<String> = self.inputs.iter().map(|s| show(s)).collect();
        format!("{}->{}", inputs.join(","), show(&self.output))
    }
}

/// The dims of every label.
struct Sizes<D> {
    /// Each letter's dim (`None`: in no input of known rank).
    letters: Vec<Option<D>>,
    /// The broadcast dims under the ellipsis; `None` when a dynamic-rank input has one (their
    /// number is unknown).
    ellipsis: Option<Vec<D>>,
}

impl Einsum {
    /// The dims of every label from the inputs' shapes (`None`: a dynamic rank), or the input
    /// they do not fit and why.
    fn sizes<D: DimRule>(&self, shapes: &[Option<&[D]>]) -> Result<Sizes<D>, (usize, String)> {
        // The ellipsis' rank: the most dims any input puts under it.
        let mut rank = 0;
        let mut unknown = false;
        for (i, sub) in self.inputs.iter().enumerate() {
            let n = letters(sub);
            match shapes[i] {
                None => unknown |= has_ellipsis(sub),
                Some(d) if has_ellipsis(sub) => {
                    if d.len() < n {
                        return Err((
                            i,
                            format!(
                                "input {i} has rank {}, but its subscript \"{}\" has {n} labels \
                                 besides `...`",
                                d.len(),
                                show(sub)
                            ),
                        ));
                    }
                    rank = rank.max(d.len() - n);
                }
                Some(d) if d.len() != n => {
                    return Err((
                        i,
                        format!(
                            "input {i} has rank {}, but its subscript \"{}\" has {n} labels",
                            d.len(),
                            show(sub)
                        ),
                    ));
                }
                Some(_) => {}
            }
        }
        // Each dim with the input that gave it first.
        let mut found: Vec<Option<(D, usize)>> = vec![None; LETTERS];
        let mut under: Vec<Option<(D, usize)>> = vec![None; rank];
        for (i, sub) in self.inputs.iter().enumerate() {
            let Some(dims) = shapes[i] else { continue };
            let covered = dims.len() - letters(sub);
            // This input's dim of each letter, and its first axis.
            let mut own: Vec<Option<(D, usize)>> = vec![None; LETTERS];
            let mut axis = 0;
            for l in sub {
                match *l {
                    Label::Letter(c) => {
                        let (id, d) = (letter_id(c), dims[axis]);
                        own[id] = Some(match own[id] {
                            None => (d, axis),
                            Some((prev, first)) => {
                                let m = prev.same(d).ok_or_else(|| {
                                    (
                                        i,
                                        format!(
                                            "label `{}` is repeated in input {i}'s subscript \
                                             \"{}\" (a diagonal), so its dims must be equal: \
                                             {prev} (axis {first}) and {d} (axis {axis})",
                                            c as char,
                                            show(sub)
                                        ),
                                    )
                                })?;
                                (m, first)
                            }
                        });
                        axis += 1;
                    }
                    Label::Ellipsis => {
                        for t in 0..covered {
                            let (pos, d) = (rank - covered + t, dims[axis + t]);
                            under[pos] = Some(match under[pos] {
                                None => (d, i),
                                Some((prev, from)) => (
                                    prev.broadcast(d).ok_or_else(|| {
                                        (
                                            i,
                                            format!(
                                                "the dims under `...` do not broadcast: {prev} \
                                                 in input {from} and {d} in input {i} (axis {}; \
                                                 the ellipsis dims align from the right)",
                                                axis + t
                                            ),
                                        )
                                    })?,
                                    from,
                                ),
                            });
                        }
                        axis += covered;
                    }
                }
            }
            for (id, own) in own.into_iter().enumerate() {
                let Some((d, ax)) = own else { continue };
                found[id] = Some(match found[id] {
                    None => (d, i),
                    Some((prev, from)) => (
                        prev.broadcast(d).ok_or_else(|| {
                            (
                                i,
                                format!(
                                    "label `{}` has dim {prev} in input {from} and {d} in input \
                                     {i} (axis {ax}): the dims of one label must be equal or 1",
                                    letter_of(id)
                                ),
                            )
                        })?,
                        from,
                    ),
                });
            }
        }
        Ok(Sizes {
            letters: found.into_iter().map(|f| f.map(|(d, _)| d)).collect(),
            ellipsis: if unknown {
                None
            } else {
                // The input with the most ellipsis dims covers every position.
                under.into_iter().map(|u| u.map(|(d, _)| d)).collect()
            },
        })
    }
}

impl Op for Einsum {
    fn def(&self) -> Option<&'static OpDef> {
        Some(&DEF)
    }

    fn infer(&self, cx: &mut InferCx<'_>) -> Option<Vec<TensorType>> {
        let inputs = cx.inputs();
        if inputs.len() != self.inputs.len() {
            cx.report(ErrorKind::InvalidInput {
                reason: format!(
                    "the equation {:?} has {} input subscripts but the layer has {} inputs",
                    self.equation,
                    self.inputs.len(),
                    inputs.len()
                ),
            });
            return None;
        }
        cx.require(0..inputs.len(), TypeSet::NUMERIC)?;
        let mut ty = ElementType::Dynamic;
        for t in inputs {
            ty = match (ty, t.element_type) {
                (ElementType::Dynamic, x) | (x, ElementType::Dynamic) => x,
                (x, y) if x == y => x,
                (x, y) => {
                    cx.report(ErrorKind::ElementTypeMismatch { a: x, b: y });
                    return None;
                }
            };
        }
        let shapes: Vec<Option<&[Dim]>> = inputs.iter().map(|t| t.shape.dims()).collect();
        let sizes = match self.sizes(&shapes) {
            Ok(s) => s,
            Err((i, reason)) => return cx.invalid(i, reason),
        };
        let mut out = Vec::new();
        for l in &self.output {
            match *l {
                Label::Letter(c) => out.push(sizes.letters[letter_id(c)].unwrap_or(Dim::DYNAMIC)),
                Label::Ellipsis => match &sizes.ellipsis {
                    Some(e) => out.extend_from_slice(e),
                    None => {
                        return Some(vec![TensorType::new(ty, PartialShape::dynamic_rank())]);
                    }
                },
            }
        }
        Some(vec![TensorType::new(ty, PartialShape::new(out))])
    }

    fn eval(&self, cx: &EvalCx<'_>) -> Result<Vec<Tensor>, EvalError> {
        let n = cx.len();
        if n != self.inputs.len() {
            return Err(EvalError::Invalid(format!(
                "the equation {:?} has {} input subscripts but the layer has {n} inputs",
                self.equation,
                self.inputs.len()
            )));
        }
        let ty = cx.value(0).element_type();
        for i in 1..n {
            if cx.value(i).element_type() != ty {
                return Err(EvalError::Types(ty, cx.value(i).element_type()));
            }
        }
        let tensors = (0..n)
            .map(|i| cx.tensor(i))
            .collect::<Result<Vec<_>, _>>()?;
        let shapes: Vec<Option<&[usize]>> = tensors.iter().map(|t| Some(t.shape())).collect();
        let sizes = self
            .sizes(&shapes)
            .map_err(|(_, reason)| EvalError::Invalid(reason))?;
        let plan = Plan::new(self, &tensors, &sizes)?;
        let count = product(&plan.out_shape).ok_or_else(|| {
            EvalError::Invalid(format!(
                "the output {:?} has too many elements",
                plan.out_shape
            ))
        })?;
        cx.reserve(ty, count)?;
        let unsupported = || EvalError::UnsupportedType {
            op: "Einsum".into(),
            ty,
        };
        crate::dispatch!(numeric: ty, T => plan.run::<T>(cx, &tensors, count).map(|t| vec![t]),
            _ => Err(unsupported()))
    }
}

/// The number of elements of `dims`; `None` if it overflows.
fn product(dims: &[usize]) -> Option<usize> {
    if dims.contains(&0) {
        return Some(0);
    }
    dims.iter().try_fold(1usize, |n, &d| n.checked_mul(d))
}

/// What execution does, by label id.
struct Plan {
    /// Each input's label id per axis.
    axes: Vec<Vec<usize>>,
    /// Each label's size (1 for letters in no input).
    size: Vec<usize>,
    /// The output's label ids.
    output: Vec<usize>,
    out_shape: Vec<usize>,
}

impl Plan {
    fn new(op: &Einsum, tensors: &[Arc<Tensor>], sizes: &Sizes<usize>) -> Result<Plan, EvalError> {
        let ellipsis = sizes
            .ellipsis
            .as_ref()
            .ok_or(EvalError::Internal("Einsum's ellipsis rank"))?;
        let rank = ellipsis.len();
        let mut size: Vec<usize> = sizes.letters.iter().map(|d| d.unwrap_or(1)).collect();
        size.extend_from_slice(ellipsis);
        let ids = |sub: &[Label], covered: usize| -> Vec<usize> {
            let mut out = Vec::new();
            for l in sub {
                match *l {
                    Label::Letter(c) => out.push(letter_id(c)),
                    Label::Ellipsis => {
                        out.extend((rank - covered..rank).map(|p| LETTERS + p));
                    }
                }
            }
            out
        };
        let axes = op
            .inputs
            .iter()
            .zip(tensors)
            .map(|(sub, t)| ids(sub, t.shape().len() - letters(sub)))
            .collect();
        let output = ids(&op.output, rank);
        let out_shape = output.iter().map(|&l| size[l]).collect();
        Ok(Plan {
            axes,
            size,
            output,
            out_shape,
        })
    }

    fn run<T: Elem>(
        &self,
        cx: &EvalCx<'_>,
        tensors: &[Arc<Tensor>],
        count: usize,
    ) -> Result<Tensor, EvalError> {
        // A label of size 0: every sum is empty (zeros), or the output is empty.
        if self.axes.iter().flatten().any(|&l| self.size[l] == 0) {
            return wrap(&self.out_shape, vec![T::default(); count]);
        }
        let mut budget = cx.budget;
        let views: Vec<View> = tensors
            .iter()
            .zip(&self.axes)
            .map(|(t, axes)| View::new(t.clone(), axes, &self.size))
            .collect();
        let out = if views.len() == 1 {
            materialize::<T, T>(&views[0], &self.output, &mut budget)?
        } else {
            let mut acc = self.step::<T, T, T::W>(&views[0], &views[1], 2, &mut budget)?;
            for (i, view) in views.iter().enumerate().skip(2) {
                let next = self.step::<T::W, T, T::W>(&acc, view, i + 1, &mut budget)?;
                budget.remove(acc.tensor.bytes());
                acc = next;
            }
            materialize::<T::W, T>(&acc, &self.output, &mut budget)?
        };
        out.into_shape(&self.out_shape)
            .map_err(|_| EvalError::Internal("Einsum's output shape"))
    }

    /// Whether label `l` is needed after the inputs before `rest` are contracted: it is in the
    /// output or in input `rest` or a later one.
    fn needed(&self, rest: usize) -> Vec<bool> {
        let mut needed = vec![false; self.size.len()];
        for &l in self.output.iter().chain(self.axes[rest..].iter().flatten()) {
            needed[l] = true;
        }
        needed
    }

    /// Contracts `a` (the result so far) with `b`; inputs `rest..` remain.
    fn step<IA, IB, W: Term>(
        &self,
        a: &View,
        b: &View,
        rest: usize,
        budget: &mut Budget,
    ) -> Result<View, EvalError>
    where
        IA: Term<Acc = W::Acc>,
        IB: Term<Acc = W::Acc>,
    {
        let needed = self.needed(rest);
        let (in_a, in_b) = (|l| a.labels.contains(&l), |l| b.labels.contains(&l));
        let pick = |v: &View, f: &dyn Fn(usize) -> bool| -> Vec<usize> {
            v.labels.iter().copied().filter(|&l| f(l)).collect()
        };
        let batch = pick(a, &|l| in_b(l) && needed[l]);
        let k = pick(a, &|l| in_b(l) && !needed[l]);
        let m = pick(a, &|l| !in_b(l) && needed[l]);
        let n = pick(b, &|l| !in_a(l) && needed[l]);
        // The labels of one operand that are needed neither later nor by the other are summed
        // as the operand is laid out.
        let am = materialize::<IA, W>(a, &[&batch[..], &m, &k].concat(), budget)?;
        let bm = materialize::<IB, W>(b, &[&batch[..], &k, &n].concat(), budget)?;
        // Every size is at least 1, and each product at most an operand's element count.
        let count = |ls: &[usize]| ls.iter().map(|&l| self.size[l]).product::<usize>();
        let (bs, ms, ks, ns) = (count(&batch), count(&m), count(&k), count(&n));
        let held = am.bytes().saturating_add(bm.bytes());
        let out = if k.is_empty() {
            outer::<W>(&am, &bm, (bs, ms, ns), budget)?
        } else if ms == 1 && ns == 1 {
            dots::<W>(&am, &bm, (bs, ks), budget)?
        } else {
            let shaped = |t: Tensor, s: [usize; 3]| {
                t.into_shape(&s)
                    .map_err(|_| EvalError::Internal("Einsum's MatMul operand"))
            };
            let values = [
                Value::Tensor(Arc::new(shaped(am, [bs, ms, ks])?)),
                Value::Tensor(Arc::new(shaped(bm, [bs, ks, ns])?)),
            ];
            let mcx = EvalCx::new(&values, *budget);
            let matmul = MatMul {
                transpose_a: false,
                transpose_b: false,
            };
            matmul
                .eval(&mcx)?
                .pop()
                .ok_or(EvalError::Internal("MatMul's output"))?
        };
        budget.add(out.bytes());
        budget.remove(held);
        let labels = [batch, m, n].concat();
        let sizes: Vec<usize> = labels.iter().map(|&l| self.size[l]).collect();
        Ok(View::dense(Arc::new(out), labels, &sizes))
    }
}

/// A tensor of `shape` holding `data`.
fn wrap<T: Element>(shape: &[usize], data: Vec<T>) -> Result<Tensor, EvalError> {
    ArrayD::from_shape_vec(IxDyn(shape), data)
        .map(T::wrap)
        .map_err(|_| EvalError::Internal("an Einsum tensor's shape"))
}

/// An operand read in place: each distinct label's size and stride in its elements.
struct View {
    tensor: Arc<Tensor>,
    /// The distinct labels, in the order of their first axes.
    labels: Vec<usize>,
    /// Each label's (size, stride); a repeated label's stride is the sum of its axes' strides.
    dims: Vec<(usize, usize)>,
    /// Whether a label covers more than one axis.
    diagonal: bool,
}

impl View {
    /// Input `tensor` whose axes have labels `axes`, where labels have sizes `size`.
    fn new(tensor: Arc<Tensor>, axes: &[usize], size: &[usize]) -> View {
        let shape = tensor.shape().to_vec();
        let mut stride = vec![1usize; shape.len()];
        for k in (0..shape.len().saturating_sub(1)).rev() {
            stride[k] = stride[k + 1] * shape[k + 1];
        }
        let (mut labels, mut dims, mut diagonal) =
            (Vec::new(), Vec::<(usize, usize)>::new(), false);
        for (k, &l) in axes.iter().enumerate() {
            if shape[k] == 1 && size[l] != 1 {
                // Broadcast: the index along this axis is always 0.
                continue;
            }
            match labels.iter().position(|&x| x == l) {
                Some(p) => {
                    dims[p].1 += stride[k];
                    diagonal = true;
                }
                None => {
                    labels.push(l);
                    dims.push((shape[k], stride[k]));
                }
            }
        }
        View {
            tensor,
            labels,
            dims,
            diagonal,
        }
    }

    /// A row-major tensor whose dims are the distinct `labels` of `sizes`.
    fn dense(tensor: Arc<Tensor>, labels: Vec<usize>, sizes: &[usize]) -> View {
        let mut dims = vec![(0, 1); sizes.len()];
        let mut step = 1;
        for k in (0..sizes.len()).rev() {
            dims[k] = (sizes[k], step);
            step *= sizes[k];
        }
        View {
            tensor,
            labels,
            dims,
            diagonal: false,
        }
    }
}

/// `v` laid out as a row-major tensor of element type `O` whose dims are the labels `order`
/// (all of them `v`'s), summing over `v`'s other labels. Checked against `budget`, which then
/// holds it.
fn materialize<I: Term, O: Term<Acc = I::Acc>>(
    v: &View,
    order: &[usize],
    budget: &mut Budget,
) -> Result<Tensor, EvalError> {
    let at = |l: usize| v.labels.iter().position(|&x| x == l);
    let perm = order
        .iter()
        .map(|&l| at(l))
        .collect::<Option<Vec<usize>>>()
        .ok_or(EvalError::Internal(
            "an Einsum label missing from its operand",
        ))?;
    let kept: Vec<(usize, usize)> = perm.iter().map(|&p| v.dims[p]).collect();
    let summed: Vec<(usize, usize)> = (0..v.labels.len())
        .filter(|p| !perm.contains(p))
        .map(|p| v.dims[p])
        .collect();
    let shape: Vec<usize> = kept.iter().map(|d| d.0).collect();
    let count = product(&shape).ok_or_else(|| {
        EvalError::Invalid(format!(
            "an intermediate of Einsum of shape {shape:?} has too many elements"
        ))
    })?;
    let bytes = O::TYPE.storage_bytes(count as u64).unwrap_or(u64::MAX);
    budget
        .check("intermediate of Einsum", bytes)
        .map_err(EvalError::Memory)?;
    budget.add(bytes);
    if summed.is_empty() && !v.diagonal && I::TYPE == O::TYPE {
        // A plain transpose: the Transpose kernel, on the operand read without its
        // broadcast dims of 1.
        let sizes: Vec<usize> = v.dims.iter().map(|d| d.0).collect();
        return transposed_as(&v.tensor, &sizes, &perm);
    }
    let src = crate::ops::kernel::contiguous::<I>(&v.tensor)
        .ok_or(EvalError::Internal("an Einsum operand's type"))?;
    wrap(&shape, strided::<I, O>(&src, &kept, &summed, count))
}

/// An element type Einsum computes on, with how it sums: floats in f64, integers in their own
/// type with wrap-around.
trait Term: Element {
    type Acc: Copy + Send + Sync;
    const ZERO: Self::Acc;
    fn to_acc(self) -> Self::Acc;
    /// The sum rounded once to the type.
    fn from_acc(a: Self::Acc) -> Self;
    fn add(a: Self::Acc, b: Self::Acc) -> Self::Acc;
    fn mul(a: Self::Acc, b: Self::Acc) -> Self::Acc;
}

/// An input type and the type it is computed in (f32 for f16 and bf16).
trait Elem: Term {
    type W: Term<Acc = Self::Acc>;
}

macro_rules! float_terms {
    ($($t:ty => $w:ty),*) => {$(
        impl Term for $t {
            type Acc = f64;
            const ZERO: f64 = 0.0;
            fn to_acc(self) -> f64 {
                match self.to_num() {
                    Num::Float(f) => f,
                    Num::Int(i) => i as f64,
                }
            }
            fn from_acc(a: f64) -> Self {
                // Rounded once (f16 and bf16 through f32 rounded to odd).
                <$t as Cast>::from_num(Num::Float(a))
            }
            fn add(a: f64, b: f64) -> f64 {
                a + b
            }
            fn mul(a: f64, b: f64) -> f64 {
                a * b
            }
        }
        impl Elem for $t {
            type W = $w;
        }
    )*};
}
float_terms!(half::f16 => f32, half::bf16 => f32, f32 => f32, f64 => f64);

macro_rules! int_terms {
    ($($t:ty)*) => {$(
        impl Term for $t {
            type Acc = $t;
            const ZERO: $t = 0;
            fn to_acc(self) -> $t {
                self
            }
            fn from_acc(a: $t) -> $t {
                a
            }
            fn add(a: $t, b: $t) -> $t {
                a.wrapping_add(b)
            }
            fn mul(a: $t, b: $t) -> $t {
                a.wrapping_mul(b)
            }
        }
        impl Elem for $t {
            type W = $t;
        }
    )*};
}
int_terms!(i8 i16 i32 i64 u8 u16 u32 u64);

/// Sums of up to this many terms are added in order; longer ones are split in halves.
const LEAF: usize = 16;
/// Sums of at least this many terms have their halves computed in parallel (the same split).
const PAR_TERMS: usize = 1 << 15;

/// The indices of flat index `i` over `dims` (row-major), and its element offset.
fn unravel(mut i: usize, dims: &[(usize, usize)], idx: &mut [usize]) -> usize {
    let mut off = 0;
    for k in (0..dims.len()).rev() {
        idx[k] = i % dims[k].0;
        i /= dims[k].0;
        off += idx[k] * dims[k].1;
    }
    off
}

/// Steps `idx` (and its offset `off`) to the next index over `dims`, row-major.
#[inline]
fn advance(dims: &[(usize, usize)], idx: &mut [usize], off: &mut usize) {
    for k in (0..dims.len()).rev() {
        idx[k] += 1;
        *off += dims[k].1;
        if idx[k] < dims[k].0 {
            return;
        }
        *off -= dims[k].0 * dims[k].1;
        idx[k] = 0;
    }
}

/// The sum of terms `lo..hi` (flat over `summed`) from `base`: pairwise, split at fixed points.
/// `idx` is scratch space of `summed.len()` indices.
fn pairwise<I: Term>(
    src: &[I],
    base: usize,
    summed: &[(usize, usize)],
    (lo, hi): (usize, usize),
    idx: &mut [usize],
) -> I::Acc {
    let len = hi - lo;
    if len <= LEAF {
        let mut off = base + unravel(lo, summed, idx);
        let mut acc = src[off].to_acc();
        for _ in 1..len {
            advance(summed, idx, &mut off);
            acc = I::add(acc, src[off].to_acc());
        }
        return acc;
    }
    let mid = lo + len / 2;
    let (x, y) = if len >= PAR_TERMS {
        rayon::join(
            || pairwise(src, base, summed, (lo, mid), &mut vec![0; summed.len()]),
            || pairwise(src, base, summed, (mid, hi), &mut vec![0; summed.len()]),
        )
    } else {
        let x = pairwise(src, base, summed, (lo, mid), idx);
        (x, pairwise(src, base, summed, (mid, hi), idx))
    };
    I::add(x, y)
}

/// The `count` elements over `kept` (row-major) of `src`, each the sum over `summed` (sizes and
/// strides; every size at least 1), rounded once to `O`.
fn strided<I: Term, O: Term<Acc = I::Acc>>(
    src: &[I],
    kept: &[(usize, usize)],
    summed: &[(usize, usize)],
    count: usize,
) -> Vec<O> {
    // At most the operand's element count: the labels are distinct dims of it.
    let terms: usize = summed.iter().map(|d| d.0).product();
    if terms == 0 {
        return vec![O::from_acc(I::ZERO); count];
    }
    let chunk = ((1 << 14) / terms.clamp(1, 1 << 14)).max(1);
    let mut out = vec![O::default(); count];
    out.par_chunks_mut(chunk).enumerate().for_each(|(c, part)| {
        let mut at = vec![0; kept.len()];
        let mut scratch = vec![0; summed.len()];
        let mut off = unravel(c * chunk, kept, &mut at);
        for o in part.iter_mut() {
            *o = O::from_acc(if summed.is_empty() {
                src[off].to_acc()
            } else {
                pairwise(src, off, summed, (0, terms), &mut scratch)
            });
            advance(kept, &mut at, &mut off);
        }
    });
    out
}

/// The pairwise sum of the products `x[i]·y[i]` (both at least one element long), each
/// computed in the accumulator (exact in f64 for f32 and narrower).
fn dot<I: Term>(x: &[I], y: &[I]) -> I::Acc {
    let term = |i: usize| I::mul(x[i].to_acc(), y[i].to_acc());
    if x.len() <= LEAF {
        return (1..x.len()).fold(term(0), |acc, i| I::add(acc, term(i)));
    }
    let mid = x.len() / 2;
    let ((x0, x1), (y0, y1)) = (x.split_at(mid), y.split_at(mid));
    let (s, t) = if x.len() >= PAR_TERMS {
        rayon::join(|| dot(x0, y0), || dot(x1, y1))
    } else {
        (dot(x0, y0), dot(x1, y1))
    };
    I::add(s, t)
}

/// The dot products of the rows of `a` and `b` (both `[batch, K]`, K at least 1) as
/// `[batch, 1, 1]`: a product per batch whose M and N are 1.
fn dots<W: Term>(
    a: &Tensor,
    b: &Tensor,
    (bs, k): (usize, usize),
    budget: &Budget,
) -> Result<Tensor, EvalError> {
    budget
        .check(
            "product of Einsum",
            W::TYPE.storage_bytes(bs as u64).unwrap_or(u64::MAX),
        )
        .map_err(EvalError::Memory)?;
    let x = crate::ops::kernel::contiguous::<W>(a).ok_or(EvalError::Internal("Einsum's A"))?;
    let y = crate::ops::kernel::contiguous::<W>(b).ok_or(EvalError::Internal("Einsum's B"))?;
    if k == 0 || x.len() != bs * k || y.len() != bs * k {
        return Err(EvalError::Internal("Einsum's dot operands"));
    }
    let mut out = vec![W::default(); bs];
    let rows = (1 << 14) / k.min(1 << 14);
    out.par_chunks_mut(rows.max(1))
        .enumerate()
        .for_each(|(c, part)| {
            for (j, o) in part.iter_mut().enumerate() {
                let r = c * rows.max(1) + j;
                *o = W::from_acc(dot(&x[r * k..(r + 1) * k], &y[r * k..(r + 1) * k]));
            }
        });
    wrap(&[bs, 1, 1], out)
}

/// The product of `a` (`[batch, M]`) and `b` (`[batch, N]`) as `[batch, M, N]`: an outer
/// product per batch (contracted over nothing).
fn outer<W: Term>(
    a: &Tensor,
    b: &Tensor,
    (bs, m, n): (usize, usize, usize),
    budget: &Budget,
) -> Result<Tensor, EvalError> {
    let count = product(&[bs, m, n])
        .ok_or_else(|| EvalError::Invalid("an Einsum product has too many elements".into()))?;
    budget
        .check(
            "product of Einsum",
            W::TYPE.storage_bytes(count as u64).unwrap_or(u64::MAX),
        )
        .map_err(EvalError::Memory)?;
    let x = crate::ops::kernel::contiguous::<W>(a).ok_or(EvalError::Internal("Einsum's A"))?;
    let y = crate::ops::kernel::contiguous::<W>(b).ok_or(EvalError::Internal("Einsum's B"))?;
    if x.len() != bs * m || y.len() != bs * n {
        return Err(EvalError::Internal("Einsum's product operands"));
    }
    let mut out = vec![W::default(); count];
    out.par_chunks_mut(n).enumerate().for_each(|(r, row)| {
        let (s, v) = (x[r], &y[(r / m) * n..(r / m + 1) * n]);
        for (o, &w) in row.iter_mut().zip(v) {
            *o = W::from_acc(W::mul(s.to_acc(), w.to_acc()));
        }
    });
    wrap(&[bs, m, n], out)
}

#[cfg(test)]
mod tests {
    use half::f16;

    use super::*;
    use crate::ops::context::{
        attrs_for_test, eval_for_test, infer_for_test, inferred_shape_for_test, tensor_for_test,
    };

    fn op(eq: &str) -> Einsum {
        Einsum::new(eq).unwrap_or_else(|e| panic!("{eq}: {e}"))
    }

    fn run(eq: &str, inputs: &[Tensor]) -> Result<Tensor, EvalError> {
        eval_for_test(&op(eq), inputs, u64::MAX)
    }

    fn t<T: Element>(shape: &[usize], v: Vec<T>) -> Tensor {
        tensor_for_test(shape, v)
    }

    fn f32s(shape: &[usize], v: &[f32]) -> Tensor {
        t(shape, v.to_vec())
    }

    /// A tensor's elements as f64 (floats, or integers that fit).
    fn as_f64(x: &Tensor) -> Vec<f64> {
        crate::dispatch!(numeric: x.element_type(), T => {
            x.view::<T>().unwrap().iter().map(|&v| match v.to_num() {
                Num::Float(f) => f,
                Num::Int(i) => i as f64,
            }).collect()
        }, _ => panic!("not numeric"))
    }

    /// Deterministic values: integers in -3..=3 when `int`, else in [-1, 1) on a 2^-10 grid
    /// (so that f32 products and short sums are exact).
    fn data(n: usize, seed: u64, int: bool) -> Vec<f64> {
        let mut s = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (0..n)
            .map(|_| {
                s = s
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let r = (s >> 33) as i64;
                if int {
                    (r % 7 - 3) as f64
                } else {
                    ((r % 2048) - 1024) as f64 / 1024.0
                }
            })
            .collect()
    }

    /// Einsum by its definition, for an explicit equation of letters only: every assignment of
    /// the labels, the product of the operands' elements (an axis of 1 broadcasts), added to
    /// the output element, in f64.
    fn naive(eq: &str, inputs: &[(&[usize], &[f64])]) -> (Vec<usize>, Vec<f64>) {
        let (lhs, out) = eq.split_once("->").unwrap();
        let subs: Vec<&[u8]> = lhs.split(',').map(str::as_bytes).collect();
        let mut size = std::collections::BTreeMap::<u8, usize>::new();
        for (sub, (shape, _)) in subs.iter().zip(inputs) {
            assert_eq!(sub.len(), shape.len(), "{eq}");
            for (&c, &d) in sub.iter().zip(shape.iter()) {
                let e = size.entry(c).or_insert(d);
                if *e == 1 {
                    *e = d;
                }
            }
        }
        let labels: Vec<u8> = size.keys().copied().collect();
        let out_shape: Vec<usize> = out.bytes().map(|c| size[&c]).collect();
        let mut result = vec![0.0; out_shape.iter().product()];
        let total: usize = labels.iter().map(|c| size[c]).product();
        let pos = |c: u8| labels.iter().position(|&x| x == c).unwrap();
        let mut val = vec![0usize; labels.len()];
        for flat in 0..total {
            let mut f = flat;
            for k in (0..labels.len()).rev() {
                val[k] = f % size[&labels[k]];
                f /= size[&labels[k]];
            }
            let mut p = 1.0;
            for (sub, (shape, data)) in subs.iter().zip(inputs) {
                let mut off = 0;
                for (k, &c) in sub.iter().enumerate() {
                    let i = if shape[k] == 1 { 0 } else { val[pos(c)] };
                    off = off * shape[k] + i;
                }
                p *= data[off];
            }
            let mut o = 0;
            for (k, c) in out.bytes().enumerate() {
                o = o * out_shape[k] + val[pos(c)];
            }
            result[o] += p;
        }
        (out_shape, result)
    }

    /// Runs `eq` on inputs of `shapes` (f64, f32, i32, i64 and f16 values) and compares with
    /// the definition computed for `reference` (`eq` written with letters only).
    fn check(eq: &str, reference: &str, shapes: &[&[usize]]) {
        for (k, ty) in ["f64", "f32", "i32", "i64", "f16"].into_iter().enumerate() {
            let int = ty.starts_with('i');
            let vals: Vec<Vec<f64>> = shapes
                .iter()
                .enumerate()
                .map(|(i, s)| data(s.iter().product(), (i * 10 + k) as u64, int))
                .collect();
            let tensors: Vec<Tensor> = shapes
                .iter()
                .zip(&vals)
                .map(|(s, v)| match ty {
                    "f64" => t(s, v.clone()),
                    "f32" => t(s, v.iter().map(|&x| x as f32).collect()),
                    "f16" => t(s, v.iter().map(|&x| f16::from_f64(x)).collect()),
                    "i32" => t(s, v.iter().map(|&x| x as i32).collect()),
                    _ => t(s, v.iter().map(|&x| x as i64).collect()),
                })
                .collect();
            let got = run(eq, &tensors).unwrap_or_else(|e| panic!("{eq} {ty}: {e}"));
            let pairs: Vec<(&[usize], &[f64])> = shapes
                .iter()
                .zip(&vals)
                .map(|(s, v)| (*s, &v[..]))
                .collect();
            let (shape, want) = naive(reference, &pairs);
            assert_eq!(got.shape(), &shape[..], "{eq} {ty}");
            let got = as_f64(&got);
            for (j, (g, w)) in got.iter().zip(&want).enumerate() {
                let tol = match ty {
                    "f64" => 1e-12,
                    "f32" => 1e-5,
                    "f16" => 2e-3 * w.abs().max(1.0),
                    _ => 0.0,
                };
                assert!(
                    (g - w).abs() <= tol * w.abs().max(1.0),
                    "{eq} {ty} element {j}: got {g}, want {w}"
                );
            }
        }
    }

    #[test]
    fn equations_parse_into_explicit_form() {
        for (eq, want) in [
            ("ij,jk->ik", "ij,jk->ik"),
            ("ij,jk", "ij,jk->ik"),
            ("ba", "ba->ab"),
            ("AbC", "AbC->ACb"),
            ("ii", "ii->"),
            ("iij", "iij->j"),
            ("dbbc,ca", "dbbc,ca->ad"),
            ("...ij,...jk", "...ij,...jk->...ik"),
            ("i...,i...", "i...,i...->..."),
            (" i j , j k - > i k ", "ij,jk->ik"),
            ("\ti,\nj->ij", "i,j->ij"),
            (". . .ii->...i", "...ii->...i"),
            ("kii->k", "kii->k"),
            ("i,->i", "i,->i"),
            ("->", "->"),
            ("", "->"),
            ("...ij->ij", "...ij->ij"),
            ("a...b,b...->a...", "a...b,b...->a..."),
            ("zZ", "zZ->Zz"),
        ] {
            assert_eq!(op(eq).explicit(), want, "{eq:?}");
        }
        for (eq, why) in [
            ("ij->ii", "label `i` appears twice in the output"),
            ("ij->k", "the output label `k` is in no input subscript"),
            ("i1->i", "holds '1', which is no label"),
            ("i_j", "holds '_'"),
            ("ij->é", "holds 'é'"),
            ("i..j->ij", "a `.` that is not part of an ellipsis"),
            ("i....->i", "a `.` that is not part of an ellipsis"),
            ("......i", "two ellipses"),
            ("ij->...i", "has `...` but no input subscript has"),
            ("i->i->i", "`->` appears more than once"),
            ("i-j", "holds '-'"),
            ("i>j", "holds '>'"),
            ("ij->i...i", "label `i` appears twice"),
            ("...i->......i", "two ellipses"),
        ] {
            let err = Einsum::new(eq).unwrap_err();
            assert!(err.contains(why), "{eq:?}: {err}");
        }
    }

    #[test]
    fn the_attribute_is_required_and_its_errors_are_attribute_errors() {
        let data = attrs_for_test(&[("equation", "ij,jk->ik")]);
        let parsed = parse(&Attrs::new(Some(&data))).unwrap();
        assert_eq!(parsed.name(), "Einsum");
        let data = attrs_for_test(&[]);
        let errs = parse(&Attrs::new(Some(&data))).unwrap_err();
        assert_eq!(
            (errs[0].name.as_str(), errs[0].value.as_deref()),
            ("equation", None)
        );
        let data = attrs_for_test(&[("equation", "ij->ji1")]);
        let errs = parse(&Attrs::new(Some(&data))).unwrap_err();
        assert_eq!(errs[0].value.as_deref(), Some("ij->ji1"));
        assert!(errs[0].reason.contains("'1'"), "{}", errs[0].reason);
    }

    fn infer(eq: &str, shapes: &[&str]) -> Result<String, String> {
        let types: Vec<TensorType> = shapes
            .iter()
            .map(|s| TensorType::new(ElementType::F32, PartialShape::parse(s).unwrap()))
            .collect();
        let refs: Vec<&TensorType> = types.iter().collect();
        inferred_shape_for_test(&op(eq), &refs)
    }

    #[test]
    fn infer_table() {
        let ok: &[(&str, &[&str], &str)] = &[
            ("ij,jk->ik", &["[2,3]", "[3,4]"], "[2,4]"),
            ("ij,jk", &["[2,3]", "[3,4]"], "[2,4]"),
            ("bij,bjk->bik", &["[5,2,3]", "[5,3,4]"], "[5,2,4]"),
            ("ij->ji", &["[2,3]"], "[3,2]"),
            ("ii->", &["[3,3]"], "[]"),
            ("kii->ki", &["[2,3,3]"], "[2,3]"),
            ("i,j->ij", &["[2]", "[3]"], "[2,3]"),
            ("i,i->", &["[3]", "[3]"], "[]"),
            ("AbC", &["[1,2,3]"], "[1,3,2]"),
            ("dbbc,ca", &["[2,3,3,4]", "[4,5]"], "[5,2]"),
            // The spec's examples.
            ("ab,bcd,bc->ca", &["[2,5]", "[5,3,6]", "[5,3]"], "[3,2]"),
            (
                "a...b,b...->a...",
                &["[9,1,4,3]", "[3,11,7,1]"],
                "[9,11,7,4]",
            ),
            (
                "ab...,ac...,ade->...bc",
                &["[2,3,4]", "[2,7,1]", "[2,4,7]"],
                "[4,3,7]",
            ),
            ("ijkj->ij", &["[2,4,5,4]"], "[2,4]"),
            ("a...->...", &["[3,3]"], "[3]"),
            ("a...,...->a...", &["[3,3]", "[1]"], "[3,3]"),
            // Ellipses broadcast, and may cover nothing.
            ("...ij,...jk->...ik", &["[2,1,3,4]", "[5,4,6]"], "[2,5,3,6]"),
            ("...ij,...jk->...ik", &["[3,4]", "[4,6]"], "[3,6]"),
            ("...ij->ij", &["[7,2,3]"], "[2,3]"),
            ("i...->i", &["[2]"], "[2]"),
            // Labels broadcast across inputs.
            ("i,i->i", &["[1]", "[3]"], "[3]"),
            ("ij,ij->ij", &["[2,1]", "[1,3]"], "[2,3]"),
            // Dynamic and interval dims.
            ("ij,jk->ik", &["[?,3]", "[?,?]"], "[?,?]"),
            ("ij,jk->ik", &["[2..5,3]", "[3,1..4]"], "[2..5,1..4]"),
            ("ij,jk->ik", &["[2,2..6]", "[4..9,4]"], "[2,4]"),
            ("ii->i", &["[2..4,3..5]"], "[3..4]"),
            ("ii->i", &["[?,3]"], "[3]"),
            ("i,i->i", &["[?]", "[3]"], "[3]"),
            ("i,i->i", &["[1..3]", "[2..5]"], "[2..5]"),
            ("i,i->i", &["[1..3]", "[0..5]"], "[..5]"),
            // Dynamic ranks.
            ("ij,jk->ik", &["...", "[3,4]"], "[?,4]"),
            ("ij->ji", &["..."], "[?,?]"),
            ("...ij->...i", &["..."], "[...]"),
            ("...ij,jk->...ik", &["...", "[3,4]"], "[...]"),
            ("...ij->ij", &["..."], "[?,?]"),
            ("...ij,...jk->ik", &["...", "[2,3,4]"], "[?,4]"),
            ("...ij,...jk->...ik", &["[2,3]", "..."], "[...]"),
            // Scalars.
            ("i,->i", &["[3]", "[]"], "[3]"),
            ("->", &["[]"], "[]"),
        ];
        for (eq, shapes, want) in ok {
            assert_eq!(infer(eq, shapes).as_deref(), Ok(*want), "{eq} {shapes:?}");
        }
        let bad: &[(&str, &[&str], &str)] = &[
            (
                "ij->i",
                &["[2,3,4]"],
                "input 0 has rank 3, but its subscript \"ij\" has 2 labels",
            ),
            ("ij->i", &["[]"], "has rank 0"),
            ("ij...k->k", &["[2,3]"], "has 3 labels besides `...`"),
            (
                "ii->i",
                &["[2,3]"],
                "label `i` is repeated in input 0's subscript \"ii\"",
            ),
            ("ii->i", &["[2..3,4..5]"], "2..3 (axis 0) and 4..5 (axis 1)"),
            (
                "ij,jk->ik",
                &["[2,3]", "[4,5]"],
                "label `j` has dim 3 in input 0 and 4 in input 1",
            ),
            (
                "ij,jk->ik",
                &["[2,3..4]", "[5..6,5]"],
                "3..4 in input 0 and 5..6 in input 1",
            ),
            (
                "...i,...i->...",
                &["[2,3,4]", "[5,4]"],
                "3 in input 0 and 5 in input 1",
            ),
            (
                "i,j->ij",
                &["[2]"],
                "2 input subscripts but the layer has 1 inputs",
            ),
            (
                "i->i",
                &["[2]", "[2]"],
                "1 input subscripts but the layer has 2",
            ),
        ];
        for (eq, shapes, why) in bad {
            let err = infer(eq, shapes).unwrap_err();
            assert!(err.contains(why), "{eq} {shapes:?}: {err}");
        }
    }

    #[test]
    fn inference_checks_the_types() {
        let f = TensorType::new(ElementType::F32, PartialShape::parse("[2]").unwrap());
        let i = TensorType::new(ElementType::I32, PartialShape::parse("[2]").unwrap());
        let b = TensorType::new(ElementType::Boolean, PartialShape::parse("[2]").unwrap());
        let d = TensorType::new(ElementType::Dynamic, PartialShape::parse("[2]").unwrap());
        let e = op("i,i->i");
        let (out, findings) = infer_for_test(&e, &[&f, &i]);
        assert!(out.is_none());
        assert!(matches!(
            findings[0].0,
            ErrorKind::ElementTypeMismatch { .. }
        ));
        let (out, findings) = infer_for_test(&e, &[&b, &b]);
        assert!(out.is_none());
        assert!(matches!(
            findings[0].0,
            ErrorKind::UnsupportedElementType { .. }
        ));
        let (out, _) = infer_for_test(&e, &[&d, &i]);
        assert_eq!(out.unwrap()[0].element_type, ElementType::I32);
        for ty in TypeSet::NUMERIC.types() {
            let x = TensorType::new(ty, PartialShape::parse("[2,2]").unwrap());
            let (out, findings) = infer_for_test(&op("ij->j"), &[&x]);
            assert_eq!(out.unwrap()[0].element_type, ty, "{findings:?}");
        }
    }

    #[test]
    fn the_specs_examples() {
        type Row<'a> = (
            &'a str,
            &'a [(&'a [usize], &'a [f32])],
            &'a [usize],
            &'a [f32],
        );
        let rows: &[Row] = &[
            (
                "i,i->",
                &[(&[3], &[1., 2., 3.]), (&[3], &[4., 5., 6.])],
                &[],
                &[32.],
            ),
            (
                "ij,j->i",
                &[(&[2, 3], &[1., 2., 3., 1., 2., 3.]), (&[3], &[4., 5., 6.])],
                &[2],
                &[32., 32.],
            ),
            (
                "kii->k",
                &[(
                    &[2, 3, 3],
                    &[
                        1., 2., 3., 4., 5., 6., 7., 8., 9., 2., 4., 6., 8., 10., 12., 14., 16., 18.,
                    ],
                )],
                &[2],
                &[15., 30.],
            ),
            (
                "kii->ki",
                &[(
                    &[2, 3, 3],
                    &[
                        1., 2., 3., 4., 5., 6., 7., 8., 9., 2., 4., 6., 8., 10., 12., 14., 16., 18.,
                    ],
                )],
                &[2, 3],
                &[1., 5., 9., 2., 10., 18.],
            ),
            (
                "ijk->kij",
                &[(&[1, 3, 3], &[1., 2., 3., 4., 5., 6., 7., 8., 9.])],
                &[3, 1, 3],
                &[1., 4., 7., 2., 5., 8., 3., 6., 9.],
            ),
            (
                "a...->...",
                &[(&[3, 3], &[1., 2., 3., 4., 5., 6., 7., 8., 9.])],
                &[3],
                &[12., 15., 18.],
            ),
            (
                "a...,...->a...",
                &[
                    (&[3, 3], &[1., 2., 3., 4., 5., 6., 7., 8., 9.]),
                    (&[1], &[0.5]),
                ],
                &[3, 3],
                &[0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5],
            ),
            (
                "AbC",
                &[(&[1, 2, 3], &[1., 2., 3., 4., 5., 6.])],
                &[1, 3, 2],
                &[1., 4., 2., 5., 3., 6.],
            ),
        ];
        for (eq, inputs, shape, want) in rows {
            let tensors: Vec<Tensor> = inputs.iter().map(|(s, v)| f32s(s, v)).collect();
            let got = run(eq, &tensors).unwrap();
            assert_eq!(got.shape(), *shape, "{eq}");
            assert_eq!(
                got.view::<f32>()
                    .unwrap()
                    .iter()
                    .copied()
                    .collect::<Vec<_>>(),
                *want,
                "{eq}"
            );
        }
    }

    #[test]
    fn two_operands_against_the_definition() {
        for (eq, reference, shapes) in [
            ("ij,jk->ik", "ij,jk->ik", &[&[3, 4][..], &[4, 5]][..]),
            ("ij,jk", "ij,jk->ik", &[&[2, 7], &[7, 3]]),
            ("ij,kj->ik", "ij,kj->ik", &[&[3, 4], &[5, 4]]),
            ("ji,jk->ki", "ji,jk->ki", &[&[4, 3], &[4, 5]]),
            ("bij,bjk->bik", "bij,bjk->bik", &[&[3, 2, 4], &[3, 4, 5]]),
            ("bij,bkj->bki", "bij,bkj->bki", &[&[3, 2, 4], &[3, 5, 4]]),
            ("i,j->ij", "i,j->ij", &[&[3], &[4]]),
            ("i,i->", "i,i->", &[&[6], &[6]]),
            ("ij,ij->i", "ij,ij->i", &[&[5, 6], &[5, 6]]),
            ("ij,ij->ij", "ij,ij->ij", &[&[3, 4], &[3, 4]]),
            ("ij,ji->", "ij,ji->", &[&[3, 4], &[4, 3]]),
            ("ij,j->i", "ij,j->i", &[&[3, 4], &[4]]),
            ("abc,cd->abd", "abc,cd->abd", &[&[2, 3, 4], &[4, 5]]),
            (
                "abcd,dbe->eac",
                "abcd,dbe->eac",
                &[&[2, 3, 2, 4], &[4, 3, 2]],
            ),
            ("ij,kl->iljk", "ij,kl->iljk", &[&[2, 3], &[4, 2]]),
            // Sums of labels only one operand has.
            ("ijk,jl->il", "ijk,jl->il", &[&[2, 3, 4], &[3, 5]]),
            ("ij,kl->", "ij,kl->", &[&[2, 3], &[4, 2]]),
            // Diagonals inside a contraction.
            ("ii,ij->j", "ii,ij->j", &[&[3, 3], &[3, 4]]),
            ("iij,jk->ik", "iij,jk->ik", &[&[3, 3, 2], &[2, 4]]),
            ("ij,jj->ij", "ij,jj->ij", &[&[2, 3], &[3, 3]]),
            // Broadcast label dims.
            ("i,i->i", "i,i->i", &[&[1], &[4]]),
            ("ij,jk->ik", "ij,jk->ik", &[&[3, 1], &[4, 2]]),
            ("ij,ij->ij", "ij,ij->ij", &[&[2, 1], &[1, 3]]),
            ("bij,bjk->bik", "bij,bjk->bik", &[&[1, 2, 4], &[3, 4, 5]]),
            // Scalars.
            ("ij,->ij", "ij,->ij", &[&[2, 3], &[]]),
            (",->", ",->", &[&[], &[]]),
            // Capitals.
            ("Ab,bC->AC", "Ab,bC->AC", &[&[2, 3], &[3, 4]]),
            ("aA,Aa->aA", "aA,Aa->aA", &[&[2, 3], &[3, 2]]),
        ] {
            check(eq, reference, shapes);
        }
    }

    #[test]
    fn ellipses_against_the_definition() {
        for (eq, reference, shapes) in [
            (
                "...ij,...jk->...ik",
                "abij,bjk->abik",
                &[&[2, 1, 3, 4][..], &[5, 4, 6]][..],
            ),
            ("...ij,...jk->...ik", "ij,jk->ik", &[&[3, 4], &[4, 2]]),
            (
                "...ij,...jk",
                "abij,abjk->abik",
                &[&[2, 3, 2, 4], &[2, 1, 4, 2]],
            ),
            (
                "a...b,b...->a...",
                "axyb,bzxy->azxy",
                &[&[3, 1, 4, 2], &[2, 5, 3, 1]],
            ),
            ("...ij->...ji", "aij->aji", &[&[2, 3, 4]]),
            ("...ij->ij", "aij->ij", &[&[5, 3, 4]]),
            ("i...->i", "iab->i", &[&[3, 2, 2]]),
            ("...,...->...", "ab,b->ab", &[&[2, 3], &[3]]),
            (
                "ab...,ac...,ade->...bc",
                "abx,acx,ade->xbc",
                &[&[2, 3, 4], &[2, 7, 1], &[2, 4, 7]],
            ),
            ("...ii->...i", "aii->ai", &[&[2, 3, 3]]),
        ] {
            check(eq, reference, shapes);
        }
    }

    #[test]
    fn one_operand_against_the_definition() {
        for (eq, reference, shapes) in [
            ("ij->ji", "ij->ji", &[&[3, 4][..]][..]),
            ("ijk->kij", "ijk->kij", &[&[2, 3, 4]]),
            ("ij->ij", "ij->ij", &[&[3, 4]]),
            ("ij->i", "ij->i", &[&[3, 40]]),
            ("ij->j", "ij->j", &[&[30, 4]]),
            ("ij->", "ij->", &[&[30, 40]]),
            ("ii->i", "ii->i", &[&[4, 4]]),
            ("ii->", "ii->", &[&[4, 4]]),
            ("ii", "ii->", &[&[4, 4]]),
            ("iii->i", "iii->i", &[&[3, 3, 3]]),
            ("ijji->ij", "ijji->ij", &[&[2, 3, 3, 2]]),
            ("ijkj->ij", "ijkj->ij", &[&[2, 4, 5, 4]]),
            ("ijkj->jik", "ijkj->jik", &[&[2, 4, 5, 4]]),
            ("iij->ji", "iij->ji", &[&[3, 3, 5]]),
            ("ba", "ba->ab", &[&[3, 5]]),
            ("i->", "i->", &[&[1000]]),
            ("->", "->", &[&[]]),
        ] {
            check(eq, reference, shapes);
        }
    }

    #[test]
    fn three_and_more_operands_against_the_definition() {
        for (eq, reference, shapes) in [
            (
                "ab,bcd,bc->ca",
                "ab,bcd,bc->ca",
                &[&[2, 5][..], &[5, 3, 6], &[5, 3]][..],
            ),
            ("ij,jk,kl->il", "ij,jk,kl->il", &[&[2, 3], &[3, 4], &[4, 5]]),
            ("ij,jk,kl", "ij,jk,kl->il", &[&[2, 3], &[3, 4], &[4, 5]]),
            ("i,j,k->ijk", "i,j,k->ijk", &[&[2], &[3], &[4]]),
            ("i,i,i->", "i,i,i->", &[&[5], &[5], &[5]]),
            (
                "aac,abd,ddde->bce",
                "aac,abd,ddde->bce",
                &[&[2, 2, 3], &[2, 4, 3], &[3, 3, 3, 2]],
            ),
            (
                "ab,bc,cd,de->ae",
                "ab,bc,cd,de->ae",
                &[&[2, 3], &[3, 2], &[2, 4], &[4, 3]],
            ),
            (
                "ab,cd,bc,da->",
                "ab,cd,bc,da->",
                &[&[2, 3], &[4, 2], &[3, 4], &[2, 2]],
            ),
            ("i,ij,j->", "i,ij,j->", &[&[3], &[1, 4], &[4]]),
        ] {
            check(eq, reference, shapes);
        }
    }

    #[test]
    fn a_larger_product_goes_through_matmul_and_matches() {
        // K above MatMul's block, several batches, broadcast batch dims.
        check(
            "...ij,...jk->...ik",
            "abij,bjk->abik",
            &[&[2, 1, 5, 300], &[3, 300, 4]],
        );
    }

    #[test]
    fn integers_wrap() {
        let a = t(&[2], vec![100i8, 100]);
        let b = t(&[2], vec![2i8, 2]);
        let got = run("i,i->", &[a.clone(), b.clone()]).unwrap();
        assert_eq!(got, t(&[], vec![(400i32 - 512) as i8]));
        let got = run("i->", &[a]).unwrap();
        assert_eq!(got, t(&[], vec![-56i8]));
        let m = t(&[2, 2], vec![200u8, 1, 2, 100]);
        assert_eq!(
            run("ii", std::slice::from_ref(&m)).unwrap(),
            t(&[], vec![44u8])
        );
        let got = run("ij,jk->ik", &[m.clone(), m]).unwrap();
        // [[200·200 + 1·2, 200·1 + 1·100], [2·200 + 100·2, 2·1 + 100·100]] mod 256
        assert_eq!(got, t(&[2, 2], vec![66u8, 44, 88, 18]));
        let big = t(&[3], vec![i64::MAX, 1, 1]);
        assert_eq!(run("i->", &[big]).unwrap(), t(&[], vec![i64::MIN + 1]));
    }

    #[test]
    fn float_sums_are_pairwise_in_f64_and_rounded_once() {
        // f16: 2048 + 1 + 1 is 2050 exactly (an f16); summed in f16 it would stay 2048.
        let x = t(&[3], vec![f16::from_f32(2048.0), f16::ONE, f16::ONE]);
        assert_eq!(
            run("i->", &[x]).unwrap(),
            t(&[], vec![f16::from_f32(2050.0)])
        );
        // f32: 2^24 + 1000 ones.
        let mut v = vec![16_777_216f32];
        v.extend(std::iter::repeat_n(1f32, 1000));
        let x = t(&[1001], v);
        assert_eq!(run("i->", &[x]).unwrap(), t(&[], vec![16_778_216f32]));
        // f64: 1e6 terms of 0.1; pairwise keeps the error to a few ulps of the exact sum.
        let x = t(&[1000, 1000], vec![0.1f64; 1_000_000]);
        let got = as_f64(&run("ij->", &[x]).unwrap())[0];
        assert!((got - 100_000.0).abs() < 1e-8, "{got}");
        // -0 survives a sum of -0s; NaN and infinities propagate.
        let x = t(&[2], vec![-0.0f32, -0.0]);
        let got = run("i->", &[x]).unwrap();
        assert_eq!(
            got.view::<f32>().unwrap()[[]].to_bits(),
            (-0.0f32).to_bits()
        );
        let x = t(&[3], vec![1.0f32, f32::NAN, 2.0]);
        assert!(as_f64(&run("i->", &[x]).unwrap())[0].is_nan());
        let x = t(&[2], vec![f32::INFINITY, 1.0]);
        assert_eq!(as_f64(&run("i->", &[x]).unwrap())[0], f64::INFINITY);
    }

    #[test]
    fn f16_operands_are_computed_in_f32_and_rounded_once() {
        // (2048·1 + 1·1) · 1 + (…) : 2049 is no f16, so rounding after the first contraction
        // would lose the 1 that the second doubles.
        let a = t(&[1, 2], vec![f16::from_f32(2048.0), f16::ONE]);
        let b = t(&[2, 1], vec![f16::ONE, f16::ONE]);
        let c = t(&[1, 1], vec![f16::from_f32(2.0)]);
        let got = run("ij,jk,kl->il", &[a, b, c]).unwrap();
        assert_eq!(got, t(&[1, 1], vec![f16::from_f32(4098.0)]));
    }

    #[test]
    fn zero_sized_labels() {
        let a = t(&[2, 0], Vec::<f32>::new());
        let b = t(&[0, 3], Vec::<f32>::new());
        assert_eq!(
            run("ij,jk->ik", &[a.clone(), b]).unwrap(),
            t(&[2, 3], vec![0f32; 6])
        );
        assert_eq!(
            run("ij->i", std::slice::from_ref(&a)).unwrap(),
            t(&[2], vec![0f32; 2])
        );
        assert_eq!(
            run("ij->j", std::slice::from_ref(&a)).unwrap(),
            t(&[0], Vec::<f32>::new())
        );
        assert_eq!(run("ij->ji", &[a]).unwrap(), t(&[0, 2], Vec::<f32>::new()));
        let one = t(&[1], vec![5i32]);
        let none = t(&[0], Vec::<i32>::new());
        assert_eq!(
            run("i,i->i", &[one.clone(), none.clone()]).unwrap(),
            t(&[0], Vec::<i32>::new())
        );
        assert_eq!(run("i,i->", &[one, none]).unwrap(), t(&[], vec![0i32]));
        // Huge dims beside a 0: no overflow.
        let e = t(&[0, 1], Vec::<f32>::new());
        assert_eq!(run("ij->i", &[e]).unwrap(), t(&[0], Vec::<f32>::new()));
    }

    #[test]
    fn invalid_inputs_at_execution() {
        let a = f32s(&[2, 3], &[0.; 6]);
        let b = f32s(&[4, 5], &[0.; 20]);
        let err = run("ij,jk->ik", &[a.clone(), b]).unwrap_err();
        assert!(
            err.to_string()
                .contains("label `j` has dim 3 in input 0 and 4 in input 1"),
            "{err}"
        );
        let err = run("ijk->i", std::slice::from_ref(&a)).unwrap_err();
        assert!(err.to_string().contains("input 0 has rank 2"), "{err}");
        let err = run("ii->i", std::slice::from_ref(&a)).unwrap_err();
        assert!(
            err.to_string()
                .contains("must be equal: 2 (axis 0) and 3 (axis 1)"),
            "{err}"
        );
        let err = run("ij->i", &[a.clone(), a.clone()]).unwrap_err();
        assert!(
            err.to_string()
                .contains("1 input subscripts but the layer has 2"),
            "{err}"
        );
        let i = t(&[3], vec![1i32, 2, 3]);
        let f = f32s(&[3], &[1., 2., 3.]);
        assert_eq!(
            run("i,i->", &[f, i]).unwrap_err(),
            EvalError::Types(ElementType::F32, ElementType::I32)
        );
        let x = t(&[2], vec![true, false]);
        assert!(matches!(
            run("i->", &[x]).unwrap_err(),
            EvalError::UnsupportedType { .. }
        ));
    }

    #[test]
    fn the_memory_budget_is_checked() {
        let a = f32s(&[64, 64], &[1.; 4096]);
        let e = op("ij,kl->ijkl");
        let err = eval_for_test(&e, &[a.clone(), a.clone()], 1 << 20).unwrap_err();
        assert!(matches!(err, EvalError::Memory(_)), "{err}");
        // The intermediate of a chain counts too: [64,64,64,64] before the last operand.
        let e = op("ij,kl,ijkl->");
        let m = f32s(&[1, 1, 1, 1], &[1.]);
        let err = eval_for_test(&e, &[a.clone(), a.clone(), m], 1 << 20).unwrap_err();
        assert!(matches!(err, EvalError::Memory(_)), "{err}");
        assert!(eval_for_test(&op("ij,jk->ik"), &[a.clone(), a], 1 << 20).is_ok());
    }

    #[test]
    fn the_same_bits_at_any_thread_count() {
        let n = 300 * 400;
        let x: Vec<f32> = data(n, 7, false).iter().map(|&v| v as f32 * 1.37).collect();
        let y: Vec<f32> = data(n, 8, false).iter().map(|&v| v as f32 * 0.71).collect();
        let a = t(&[300, 400], x);
        let b = t(&[400, 300], y);
        let cases: &[(&str, Vec<Tensor>)] = &[
            ("ij->", vec![a.clone()]),
            ("ij->j", vec![a.clone()]),
            ("ij,jk->ik", vec![a.clone(), b.clone()]),
            ("ij,ji->i", vec![a.clone(), b.clone()]),
            ("ij,ji->", vec![a.clone(), b.clone()]),
            (
                "ij,kj,k->i",
                vec![a.clone(), a.clone(), t(&[300], vec![0.5f32; 300])],
            ),
        ];
        for (eq, inputs) in cases {
            let at = |threads: usize| {
                rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .build()
                    .unwrap()
                    .install(|| run(eq, inputs).unwrap())
                    .to_le_bytes()
            };
            let one = at(1);
            assert_eq!(one, at(2), "{eq}");
            assert_eq!(one, at(5), "{eq}");
        }
    }
}
