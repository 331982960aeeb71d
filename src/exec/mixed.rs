//! Fused groups whose element type changes along the way: with a Convert in them (`u8` pixels
//! → `f32` → normalised, an `i64` mask → `f32` → scaled, an `f32` chain → `f16`), ending in a
//! comparison (`x·s + b > t` → `boolean`) or in a Select (`Select(x > 0, x, x·0.1)`).
//!
//! Such a group is cut at its Converts into *parts*, each a group of one element type (the
//! same-typed group [`kernel::fused_from`] computes). A part reads a Convert as a leaf made tile
//! by tile ([`TileSource`]): the Convert's input tensor converted as it is read
//! ([`Converted`]), or the part below the Convert computed in its own type for the same tile
//! and converted ([`Part`]). So the whole group is still one pass over the output, and no
//! intermediate of either type reaches memory. The conversion is Convert-1's (`num::Cast`) and
//! each part computes what its layers compute, so the results are those of layer-by-layer
//! execution, bit for bit.
//!
//! Parts below a Convert must be of a float type: their steps cannot fail, so the first error
//! of the group can only come from the top part, whose failures are those of a same-typed
//! group. Anything else (a part of an integer type below a Convert, a Convert of a Convert, a
//! packed weight type, a boolean output, shapes that differ) runs layer by layer. The output
//! always gets its own buffer (no input of such a group is written over).
//!
//! A comparison or a Select ends a group the same way a Convert does: its inputs are leaves
//! made tile by tile (parts of the group, Converts, or tensors read through its broadcast),
//! and the output is made from those tiles ([`kernel::Compared`], [`kernel::Selected`]). A
//! comparison may also be the `cond` of the Select that ends its group; a comparison or a
//! Select anywhere else ends its own group (`group::roots`).
//!
//! A Select of `f32` or `f64` whose `cond` is a comparison of its own type (or a `boolean`
//! tensor of the output's size or one value) and whose operands are tensors or parts that are
//! linear chains over tensors goes further: block by block, each operand is taken through its
//! chain in registers and the choice made lane by lane, with no tiles at all
//! ([`kernel::selected_in_registers`]). The comparison and the choice are the layers', so the
//! bits are the same.

use std::borrow::Cow;
use std::sync::Arc;

use super::group::{Stop, kernels_for, links, one_by_one, plans};
use super::{Values, eval_error, output_fits};
use crate::broadcast::Plan;
use crate::dtype::ElementType;
use crate::error::Error;
use crate::graph::Graph;
use crate::memory::Budget;
use crate::num::Cast;
use crate::ops::EvalError;
use crate::ops::binary::Fusable;
use crate::ops::kernel::value_data;
use crate::ops::kernel::{
    self, ArmPlan, Broadcasted, Chain, ChainFns, Choice, Compared, Converted, Link, Operand, Part,
    Selected, Side, Step, StepKernel, TileSource,
};
use crate::ops::logic::{Rule, with_test};
use crate::tensor::{Element, Tensor, TypeSet, Value};

/// Where a part reads a leaf: a tensor computed outside the group (by position in the group's
/// leaves), a Convert of such a tensor, or a Convert of another part (by position in
/// [`Mixed::parts`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum PartLeaf {
    Tensor(usize),
    Convert(usize),
    Part(usize),
}

/// A part: members of the group of one element type, joined by their own edges.
struct PartPlan {
    ty: ElementType,
    /// Positions in the group's members, in execution order.
    members: Vec<usize>,
    /// The members' steps, with operands local to the part.
    steps: Vec<Step>,
    leaves: Vec<PartLeaf>,
}

/// A group cut into parts.
struct Mixed<'a, 'v> {
    parts: Vec<PartPlan>,
    kinds: &'a [&'a dyn Fusable],
    tensors: &'a [Value<'v>],
}

/// The result of building a group's parts and running it.
type Ran = Result<Arc<Tensor>, Stop>;

/// A part's leaves made tile by tile (`None`: a tensor read as it is).
type Sources<'a, T> = [Option<&'a dyn TileSource<T>>];

/// Computes a group with a Convert among its `members` (see the module docs). `operands` and
/// `kinds` are the members', `leaves`' values are `tensors`. On failure, the member that
/// failed and the error.
pub(super) fn run(
    g: &Graph,
    members: &[usize],
    (operands, conds): (&[[Operand; 2]], &[Option<Operand>]),
    kinds: &[&dyn Fusable],
    tensors: Vec<Value<'_>>,
    values: &mut Values,
    budget: &mut Budget,
) -> Result<Arc<Tensor>, (usize, Error)> {
    let root = members.len() - 1;
    let Some(plan) = plan(operands, conds, kinds, &tensors) else {
        drop(tensors);
        return one_by_one(g, members, values, budget);
    };
    let (parts, top, out_ty, out_shape) = plan;
    let n: usize = out_shape.iter().product();
    output_fits(budget, g, members[root], out_ty, n)?;
    let mixed = Mixed {
        parts,
        kinds,
        tensors: &tensors,
    };
    let internal = |what| Stop::Eval(EvalError::Internal(what), root);
    let result = if let Top::Compare(c) = &top {
        with_compare(&mixed, c, &mut |source| {
            wrap::<bool>(&out_shape, kernel::sourced(n, source))
        })
    } else if let Top::Select(s) = &top {
        let fast = crate::dispatch!(numeric: out_ty, T => in_registers::<T>(&mixed, s, &out_shape),
            _ => None);
        fast.unwrap_or_else(|| {
            with_cond(&mixed, &s.cond, &out_shape, &mut |cond| {
                crate::dispatch!(numeric: out_ty, T => select::<T>(&mixed, s, cond, &out_shape),
                    _ => Err(internal("a Select's type")))
            })
        })
    } else if let Top::Convert(p) = top
        && out_ty == ElementType::F16
        && mixed.parts[p].ty == ElementType::F32
    {
        // f32 to f16: a chain is rounded as it leaves the registers; else tile by tile.
        with_pieces::<f32>(&mixed, p, &mut |pc| {
            if pc.sources.iter().all(Option::is_none)
                && let Some(out) = kernel::fused_to_f16(pc.steps, pc.leaves, pc.kernels, pc.chain)
            {
                return wrap::<half::f16>(&out_shape, out);
            }
            let part = Part::new(pc.steps, pc.leaves, pc.sources, pc.kernels, pc.chain)
                .ok_or_else(|| internal("a part below a Convert"))?;
            wrap::<half::f16>(&out_shape, kernel::sourced(n, &part))
        })
    } else {
        crate::dispatch!(numeric: out_ty, T => match top {
            Top::Part(p) => with_pieces::<T>(&mixed, p, &mut |pc| {
                let out = kernel::fused_from(pc.steps, pc.leaves, pc.sources, None, pc.kernels, pc.chain)
                    .map_err(|f| Stop::Failed(kernel::Failure { step: mixed.parts[p].members[f.step], ..f }))?;
                wrap::<T>(&out_shape, out)
            }),
            Top::Convert(p) => with_sources::<T>(&mixed, &[PartLeaf::Part(p)], Vec::new(), &mut |s| {
                let Some(Some(source)) = s.first() else {
                    return Err(Stop::Eval(EvalError::Internal("a Convert without its part"), root));
                };
                wrap::<T>(&out_shape, kernel::sourced(n, *source))
            }),
            Top::Compare(_) | Top::Select(_) => Err(Stop::Eval(EvalError::Internal("not a part"), root)),
        }, _ => {
            drop(mixed);
            drop(tensors);
            return one_by_one(g, members, values, budget);
        })
    };
    result.map_err(|e| match e {
        Stop::Failed(f) => {
            let m = members[f.step];
            (m, eval_error(g, m, f.to_eval(&out_shape)))
        }
        Stop::Eval(e, k) => (members[k], eval_error(g, members[k], e)),
    })
}

/// The elements of tensor leaves among `leaves` as `T` (empty for the others); an error names
/// member `step`.
fn tensor_data<'a, T: Element>(
    m: &Mixed<'a, '_>,
    leaves: &[PartLeaf],
    step: usize,
) -> Result<Vec<Cow<'a, [T]>>, Stop> {
    leaves
        .iter()
        .map(|l| match *l {
            PartLeaf::Tensor(t) => value_data::<T>(&m.tensors[t]).ok_or(Stop::Eval(
                EvalError::Internal("a fused input has another type"),
                step,
            )),
            PartLeaf::Convert(_) | PartLeaf::Part(_) => Ok(Cow::Borrowed(&[][..])),
        })
        .collect()
}

/// Calls `k` with a comparison's tiles ([`kernel::Compared`]): its inputs (tensors read in
/// place, parts and Converts made tile by tile in their type) compared by its rule.
fn with_compare(
    m: &Mixed<'_, '_>,
    c: &Compare,
    k: &mut dyn FnMut(&dyn TileSource<bool>) -> Ran,
) -> Ran {
    crate::dispatch!(numeric: c.ty, T => compare_with::<T>(m, c, k),
        _ => Err(Stop::Eval(EvalError::Internal("a comparison's type"), 0)))
}

fn compare_with<T: Element + Cast + PartialOrd>(
    m: &Mixed<'_, '_>,
    c: &Compare,
    k: &mut dyn FnMut(&dyn TileSource<bool>) -> Ran,
) -> Ran {
    let data = tensor_data::<T>(m, &c.inputs, 0)?;
    with_sources::<T>(m, &c.inputs, Vec::new(), &mut |sources| {
        let side = |i: usize| match sources.get(i).copied().flatten() {
            Some(s) => Side::Source(s),
            None => Side::Tensor(&data[i]),
        };
        let (a, b, plan) = (side(0), side(1), &c.plan);
        with_test!(c.rule, T, |test| k(&Compared { plan, a, b, test }),
            _ => Err(Stop::Eval(EvalError::Internal("not a comparison"), 0)))
    })
}

/// Calls `k` with a Select's `cond` made tile by tile: a tensor broadcast as it is read, a
/// Convert, or a comparison of the group.
fn with_cond(
    m: &Mixed<'_, '_>,
    cond: &Cond,
    shape: &[usize],
    k: &mut dyn FnMut(&dyn TileSource<bool>) -> Ran,
) -> Ran {
    let internal = |what| Stop::Eval(EvalError::Internal(what), 0);
    match cond {
        Cond::Compare(c) => with_compare(m, c, k),
        Cond::Leaf(PartLeaf::Tensor(t), aligned) => {
            let data = value_data::<bool>(&m.tensors[*t])
                .ok_or_else(|| internal("Select's condition type"))?;
            let source = Broadcasted::new(&data, aligned, shape)
                .ok_or_else(|| internal("Select's condition shape"))?;
            k(&source)
        }
        Cond::Leaf(leaf, _) => {
            with_sources::<bool>(m, &[*leaf], Vec::new(), &mut |made| match made
                .first()
                .copied()
                .flatten()
            {
                Some(source) => k(source),
                None => Err(internal("Select's condition")),
            })
        }
    }
}

/// A group ending in a Select: `then` and `else` made tile by tile (tensors broadcast as they
/// are read, parts and Converts computed) and chosen between by `cond`'s tiles.
fn select<T: Element + Cast>(
    m: &Mixed<'_, '_>,
    s: &SelectTop,
    cond: &dyn TileSource<bool>,
    shape: &[usize],
) -> Ran {
    let internal = |what| Stop::Eval(EvalError::Internal(what), 0);
    let data = tensor_data::<T>(m, &s.inputs, 0)?;
    // Tensors broadcast as they are read (`None` for parts and Converts).
    let spread = [
        Broadcasted::new(&data[0], &s.aligned[0], shape),
        Broadcasted::new(&data[1], &s.aligned[1], shape),
    ];
    let n = shape.iter().product();
    with_sources::<T>(m, &s.inputs, Vec::new(), &mut |sources| {
        let mut pick = [None, None];
        for (i, p) in pick.iter_mut().enumerate() {
            *p = match (sources.get(i).copied().flatten(), &spread[i]) {
                (Some(t), _) => Some(t),
                (None, Some(t)) => Some(t as &dyn TileSource<T>),
                (None, None) => None,
            };
        }
        let [Some(then), Some(other)] = pick else {
            return Err(internal("Select's then or else"));
        };
        let source = Selected { cond, then, other };
        wrap::<T>(shape, kernel::sourced(n, &source))
    })
}

/// A group ending in a Select, computed in registers ([`kernel::selected_in_registers`]) when
/// `T` has chains there, its `cond` is a comparison of `T` or a `boolean` tensor, and each
/// operand is a tensor or a part that is a chain over tensors; `None` otherwise (the caller
/// goes tile by tile).
fn in_registers<T: Element + Chain>(
    m: &Mixed<'_, '_>,
    s: &SelectTop,
    shape: &[usize],
) -> Option<Ran> {
    T::CHAIN?;
    // The operands: what a comparison compares (each read through its plan), then `then` and
    // `else`.
    let mut sides: Vec<(PartLeaf, Option<(&Plan, bool)>)> = Vec::with_capacity(4);
    let mask = match &s.cond {
        Cond::Compare(c) => {
            if c.ty != T::TYPE || c.plan.out != shape {
                return None;
            }
            sides.push((c.inputs[0], Some((&c.plan, true))));
            sides.push((c.inputs[1], Some((&c.plan, false))));
            Err(kernel::Test::new(c.rule)?)
        }
        Cond::Leaf(PartLeaf::Tensor(t), _) => Ok(value_data::<bool>(&m.tensors[*t])?),
        Cond::Leaf(..) => return None,
    };
    sides.extend(s.inputs.map(|l| (l, None)));
    // Each operand's elements, or its part with the part's leaves and links.
    enum Made<'p, 'a, T: Clone + 'static> {
        Leaf(Cow<'a, [T]>),
        Chain(&'p PartPlan, Vec<Cow<'a, [T]>>, Vec<Link>),
    }
    let mut made = Vec::with_capacity(sides.len());
    for &(leaf, _) in &sides {
        made.push(match leaf {
            PartLeaf::Tensor(t) => Made::Leaf(value_data::<T>(&m.tensors[t])?),
            PartLeaf::Part(q) => {
                let part = &m.parts[q];
                let tensors = part.leaves.iter().all(|l| matches!(l, PartLeaf::Tensor(_)));
                if part.ty != T::TYPE || !tensors {
                    return None;
                }
                let kinds: Vec<&dyn Fusable> = part.members.iter().map(|&i| m.kinds[i]).collect();
                let links = links(&part.steps, &kinds)?;
                Made::Chain(part, tensor_data::<T>(m, &part.leaves, 0).ok()?, links)
            }
            PartLeaf::Convert(_) => return None,
        });
    }
    let leaves: Vec<Vec<&[T]>> = made
        .iter()
        .map(|d| match d {
            Made::Chain(_, l, _) => l.iter().map(|c| &**c).collect(),
            Made::Leaf(_) => Vec::new(),
        })
        .collect();
    let arms: Vec<ArmPlan<'_, T>> = made
        .iter()
        .zip(&leaves)
        .zip(&sides)
        .map(|((d, leaves), &(_, via))| match d {
            Made::Leaf(data) => ArmPlan::Leaf { data, via },
            Made::Chain(part, _, links) => ArmPlan::Chain {
                steps: &part.steps,
                leaves,
                links,
            },
        })
        .collect();
    let choice = match &mask {
        Ok(mask) => Choice::Mask(mask),
        Err(test) => Choice::Test(*test),
    };
    let n = shape.iter().product();
    let out = kernel::selected_in_registers(choice, &arms, n)?;
    Some(wrap::<T>(shape, out))
}

fn wrap<T: Element>(shape: &[usize], data: Vec<T>) -> Ran {
    kernel::tensor_from(shape, data)
        .map(Arc::new)
        .map_err(|e| Stop::Eval(e, 0))
}

/// What makes the group's output: a part, a Convert of a part, or a comparison.
enum Top {
    Part(usize),
    Convert(usize),
    Compare(Compare),
    Select(SelectTop),
}

/// A Select ending a group: its `cond`, where its `then` and `else` (of the output's type)
/// are read and their shapes aligned for broadcasting into the output.
struct SelectTop {
    cond: Cond,
    inputs: [PartLeaf; 2],
    aligned: [Vec<usize>; 2],
}

/// A Select's `cond`: read as a leaf (a tensor, with its shape aligned for broadcasting into
/// the output, or a Convert), or a comparison of the group.
enum Cond {
    Leaf(PartLeaf, Vec<usize>),
    Compare(Compare),
}

/// A comparison ending a group: its rule and broadcast plan, and its inputs of element type
/// `ty`.
struct Compare {
    rule: Rule,
    plan: Plan,
    ty: ElementType,
    inputs: [PartLeaf; 2],
}

/// Cuts the group into parts; `None` when it does not fuse (module docs). Also the output's
/// element type and shape.
fn plan(
    operands: &[[Operand; 2]],
    conds: &[Option<Operand>],
    kinds: &[&dyn Fusable],
    tensors: &[Value<'_>],
) -> Option<(Vec<PartPlan>, Top, ElementType, Vec<usize>)> {
    let count = operands.len();
    let root = count.checked_sub(1)?;
    let convert = |k: usize| kinds[k].converts_to();
    // Where a part ends: at a Convert, or at a comparison or Select (only the root may be one,
    // or a comparison that is the root Select's `cond`).
    let ends = |k: usize| kinds[k].ends_group();
    let boundary = |k: usize| convert(k).is_some() || ends(k);
    let cond_of_root = conds.get(root).copied().flatten();
    if (0..root).any(|k| ends(k) && cond_of_root != Some(Operand::Step(k))) {
        return None;
    }
    // Element types, member by member, and the broadcast plans.
    let mut types: Vec<ElementType> = Vec::with_capacity(count);
    for (k, &[x, y]) in operands.iter().enumerate() {
        let ty = |o: Operand| match o {
            Operand::Leaf(l) => tensors[l].element_type(),
            Operand::Step(j) => types[j],
        };
        if ty(x) != ty(y) || !TypeSet::ANY.contains(ty(x)) {
            return None;
        }
        types.push(match kinds[k].compares() {
            Some(_) => ElementType::Boolean,
            None => convert(k).unwrap_or(ty(x)),
        });
    }
    let shapes: Vec<&[usize]> = tensors.iter().map(|t| t.shape()).collect();
    let plans = plans(operands, |k| kinds[k].auto_broadcast(), &shapes)?;
    let out_shape = plans[root].out.clone();
    // Each member but the root is read by exactly one other (a group is a tree).
    let mut consumer: Vec<Option<usize>> = vec![None; count];
    for (k, ops) in operands.iter().enumerate() {
        for o in ops {
            if let Operand::Step(j) = *o {
                consumer[j] = Some(k);
            }
        }
    }
    // Parts, from the root down: a member is in its consumer's part unless that is a Convert.
    let mut part_of: Vec<Option<usize>> = vec![None; count];
    let mut parts: Vec<PartPlan> = Vec::new();
    for k in (0..count).rev() {
        if boundary(k) {
            continue;
        }
        let p = match consumer[k] {
            Some(c) if !boundary(c) => part_of[c]?,
            None if k != root => return None,
            _ => {
                parts.push(PartPlan {
                    ty: types[k],
                    members: Vec::new(),
                    steps: Vec::new(),
                    leaves: Vec::new(),
                });
                parts.len() - 1
            }
        };
        part_of[k] = Some(p);
    }
    // What a member's operand is to a part (or comparison) it is not in: a tensor, or a Convert
    // of a tensor or of a part.
    let outside = |o: Operand| match o {
        Operand::Leaf(l) => Some(PartLeaf::Tensor(l)),
        Operand::Step(j) => {
            convert(j)?;
            match operands[j][0] {
                Operand::Leaf(l) => Some(PartLeaf::Convert(l)),
                Operand::Step(i) => Some(PartLeaf::Part(part_of[i]?)),
            }
        }
    };
    // Each part's steps in execution order, operands made local.
    for k in 0..count {
        let Some(p) = part_of[k] else { continue };
        let mut local = [Operand::Leaf(0); 2];
        for (o, &operand) in local.iter_mut().zip(&operands[k]) {
            let leaf = match operand {
                Operand::Step(j) if part_of[j] == Some(p) => {
                    let s = parts[p].members.iter().position(|&m| m == j)?;
                    *o = Operand::Step(s);
                    continue;
                }
                o => outside(o)?,
            };
            let leaves = &mut parts[p].leaves;
            let at = match leaves.iter().position(|&x| x == leaf) {
                Some(at) => at,
                None => {
                    leaves.push(leaf);
                    leaves.len() - 1
                }
            };
            *o = Operand::Leaf(at);
        }
        parts[p].members.push(k);
        parts[p].steps.push(Step {
            plan: plans[k].clone(),
            x: local[0],
            y: local[1],
        });
    }
    let input = |o: Operand| match o {
        Operand::Step(j) if convert(j).is_none() => Some(PartLeaf::Part(part_of[j]?)),
        o => outside(o),
    };
    let type_of = |o: Operand| match o {
        Operand::Leaf(l) => tensors[l].element_type(),
        Operand::Step(j) => types[j],
    };
    // Member `k` as a comparison.
    let compare = |k: usize| {
        let [x, y] = operands[k];
        Some(Compare {
            rule: kinds[k].compares()?,
            plan: plans[k].clone(),
            ty: type_of(x),
            inputs: [input(x)?, input(y)?],
        })
    };
    let top = if let Some(select) = kinds[root].selects() {
        let cond = cond_of_root?;
        let shape_of = |o: Operand| match o {
            Operand::Leaf(l) => tensors[l].shape(),
            Operand::Step(j) => &plans[j].out,
        };
        let [x, y] = operands[root];
        let (out, [c, t, e]) = select.aligned([shape_of(cond), shape_of(x), shape_of(y)])?;
        // The group's intermediates have the output's shape.
        if type_of(cond) != ElementType::Boolean || out != plans[root].out {
            return None;
        }
        Top::Select(SelectTop {
            cond: match cond {
                Operand::Step(k) if kinds[k].compares().is_some() => Cond::Compare(compare(k)?),
                o => Cond::Leaf(outside(o)?, c),
            },
            inputs: [input(x)?, input(y)?],
            aligned: [t, e],
        })
    } else {
        match (kinds[root].compares(), convert(root), operands[root][0]) {
            (Some(_), _, _) => Top::Compare(compare(root)?),
            (None, None, _) => Top::Part(part_of[root]?),
            (None, Some(_), Operand::Step(i)) => Top::Convert(part_of[i]?),
            (None, Some(_), Operand::Leaf(_)) => return None,
        }
    };
    // Parts read through a Convert or compared must not fail (a float type); the top part
    // may. Every part, and the output (or what is compared), of a type the kernels compute
    // (else the layers say why not).
    let below = |p: usize| !matches!(top, Top::Part(t) if t == p);
    // The output's type, or what a comparison compares.
    let computed = match &top {
        Top::Compare(c) => [c.ty, c.ty],
        Top::Select(SelectTop {
            cond: Cond::Compare(c),
            ..
        }) => [types[root], c.ty],
        _ => [types[root], types[root]],
    };
    if computed.iter().any(|t| !TypeSet::NUMERIC.contains(*t))
        || parts.iter().enumerate().any(|(p, part)| {
            !TypeSet::NUMERIC.contains(part.ty) || below(p) && !TypeSet::FLOAT.contains(part.ty)
        })
    {
        return None;
    }
    Some((parts, top, types[root], out_shape))
}

/// What a part's group is made of, for element type `A`.
struct Pieces<'g, A> {
    steps: &'g [Step],
    leaves: &'g [&'g [A]],
    sources: &'g [Option<&'g dyn TileSource<A>>],
    kernels: &'g [&'g dyn StepKernel<A>],
    chain: Option<(ChainFns<A>, &'g [Link])>,
}

/// Builds part `p` in its element type `A` (its kernels, leaves and, recursively, the parts
/// it reads through Converts) and calls `k` with it.
fn with_pieces<A: Element + Chain + Cast>(
    m: &Mixed<'_, '_>,
    p: usize,
    k: &mut dyn FnMut(Pieces<'_, A>) -> Ran,
) -> Ran {
    let plan = &m.parts[p];
    let kinds: Vec<&dyn Fusable> = plan.members.iter().map(|&i| m.kinds[i]).collect();
    let boxes = kernels_for::<A>(&kinds, |k| plan.members[k])?;
    let kernels: Vec<&dyn StepKernel<A>> = boxes.iter().map(|b| &**b).collect();
    let data = tensor_data::<A>(m, &plan.leaves, plan.members[0])?;
    let leaves: Vec<&[A]> = data.iter().map(|c| &**c).collect();
    let chain = A::CHAIN.and_then(|f| Some((f, links(&plan.steps, &kinds)?)));
    with_sources::<A>(m, &plan.leaves, Vec::new(), &mut |sources| {
        k(Pieces {
            steps: &plan.steps,
            leaves: &leaves,
            sources,
            kernels: &kernels,
            chain: chain.as_ref().map(|(f, l)| (*f, l.as_slice())),
        })
    })
}

/// Makes the tile sources of `leaves` (after those in `made`) and calls `k` with all of them:
/// `None` for a tensor read as it is, a converted tensor, or a part built (by
/// [`with_pieces`]) and converted.
fn with_sources<T: Element + Cast>(
    m: &Mixed<'_, '_>,
    leaves: &[PartLeaf],
    made: Vec<Option<&dyn TileSource<T>>>,
    k: &mut dyn FnMut(&Sources<'_, T>) -> Ran,
) -> Ran {
    let Some((&first, rest)) = leaves.split_first() else {
        return k(&made);
    };
    let mut made = Some(made);
    let mut next = |source: Option<&dyn TileSource<T>>| {
        let mut all: Vec<Option<&dyn TileSource<T>>> = made.take().unwrap_or_default();
        all.push(source);
        with_sources::<T>(m, rest, all, k)
    };
    let internal = |what| Stop::Eval(EvalError::Internal(what), 0);
    match first {
        PartLeaf::Tensor(_) => next(None),
        PartLeaf::Convert(l) => {
            let v = &m.tensors[l];
            crate::dispatch!(any: v.element_type(), A => {
                let data = value_data::<A>(v).ok_or_else(|| internal("a Convert's input"))?;
                next(Some(&Converted(&data)))
            }, _ => Err(internal("a Convert's input type")))
        }
        PartLeaf::Part(q) => crate::dispatch!(float: m.parts[q].ty, A => {
            with_pieces::<A>(m, q, &mut |pc| {
                let part = Part::new(pc.steps, pc.leaves, pc.sources, pc.kernels, pc.chain)
                    .ok_or_else(|| internal("a part below a Convert"))?;
                next(Some(&part))
            })
        }, _ => Err(internal("a part below a Convert"))),
    }
}
