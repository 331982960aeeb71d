//! Fusion of elementwise layers: a chain (or tree) of fusable layers (ops whose
//! [`Op::fusable`](crate::ops::Op::fusable) says how) whose intermediates have no other
//! consumer runs as one pass over cache-sized tiles
//! ([`kernel::fused`]), and the result is written over a dead input's buffer when one has the
//! output's shape and type (in-place execution). Results are bit-identical to running the
//! layers one by one, errors included: the group reports the first layer that fails, at its
//! first failing element.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;

use super::{Values, args, eval_error, eval_node, eval_with, internal, output_fits};
use crate::broadcast::{self, AutoBroadcast, Plan};
use crate::error::Error;
use crate::graph::{Graph, Src as Source};
use crate::memory::Budget;
use crate::ops::EvalCx;
use crate::ops::EvalError;
use crate::ops::binary::{Fusable, step_kernel};
use crate::ops::kernel::epilogue::{Epilogue, Other};
use crate::ops::kernel::{self, Link, Operand, Step, StepKernel};
use crate::tensor::{Element, Tensor, Value};

/// The most layers one group holds. Each member keeps a tile buffer, so the tiles of a group
/// stay in the L1/L2 cache, and looking members up within a group stays cheap; a longer chain
/// (a hostile IR may hold a million) runs as consecutive groups.
pub const MAX_GROUP: usize = 16;

/// For each node, the node whose group it is computed with: itself, unless it is a fusable
/// layer whose only live consumer is another fusable layer reading it once and that layer's
/// group is not full ([`MAX_GROUP`]). A comparison or a Select only ends a group, except that
/// a comparison joins the group of the Select whose `cond` it is. A layer that applies
/// elementwise steps to its output as it writes it ([`Op::takes_epilogue`]: a convolution)
/// leads the group of its only live consumer when that is an arithmetic step
/// ([`run_led`]).
///
/// [`Op::takes_epilogue`]: crate::ops::Op::takes_epilogue
pub(super) fn roots(g: &Graph, dead: &[bool], fuse: bool) -> Vec<usize> {
    let mut root: Vec<usize> = (0..g.nodes.len()).collect();
    if !fuse {
        return root;
    }
    let mut size = vec![1usize; g.nodes.len()];
    // Consumers come after producers in `order`: walking it backwards, a consumer's root is
    // settled before its producers look it up.
    for &i in g.order.iter().rev() {
        let node = &g.nodes[i];
        let leads = node.op.takes_epilogue() && node.outputs.len() == 1;
        if dead[i] || !(leads || fusable_node(node)) {
            continue;
        }
        let selects = |c: usize| {
            g.nodes[c]
                .op
                .fusable()
                .is_some_and(|f| f.selects().is_some())
        };
        let mut live = node.outputs[0].consumers.iter().filter(|(c, _)| !dead[*c]);
        if let (Some(&(c, port)), None) = (live.next(), live.next())
            && fusable_node(&g.nodes[c])
            && size[root[c]] < MAX_GROUP
            // A comparison (→ `boolean`) or a Select only ends a group, but a comparison may
            // be the `cond` of a Select that does.
            && match node.op.fusable() {
                Some(f) => !f.ends_group() || f.compares().is_some() && port == 0 && selects(c),
                None => g.nodes[c]
                    .op
                    .fusable()
                    .is_some_and(|f| f.chain_op().is_some()),
            }
        {
            root[i] = root[c];
            size[root[c]] += 1;
        }
    }
    root
}

/// Whether a layer can be a member of a fused group: a fusable op with one output and
/// exactly the inputs it combines.
pub(super) fn fusable_node(node: &crate::graph::Node) -> bool {
    node.op
        .fusable()
        .is_some_and(|f| f.data_inputs() == node.inputs.len())
        && node.outputs.len() == 1
}

/// The members of each group with more than one, in execution order, keyed by root.
pub(super) fn members(g: &Graph, root: &[usize]) -> HashMap<usize, Vec<usize>> {
    let mut out: HashMap<usize, Vec<usize>> = HashMap::new();
    for &i in &g.order {
        if root[i] != i {
            out.entry(root[i]).or_default().push(i);
        }
    }
    for (r, m) in out.iter_mut() {
        m.push(*r);
    }
    out
}

/// Computes a group (`members` in execution order, the root last). `uses` counts the
/// consumers each value still has, this group's included.
/// On failure, the member that failed and the error.
pub(super) fn run(
    g: &Graph,
    members: &[usize],
    values: &mut Values,
    uses: &[Vec<usize>],
    budget: &mut Budget,
) -> Result<Arc<Tensor>, (usize, Error)> {
    if let Some(k) = members.iter().position(|&m| !fusable_node(&g.nodes[m])) {
        return run_led(g, members, k, values, uses, budget);
    }
    let root = members[members.len() - 1];
    let missing = || internal(g, root, "an input was not computed");
    // Operands: earlier members, or leaves (values computed outside the group).
    let mut leaves: Vec<Source> = Vec::new();
    let mut operands: Vec<[Operand; 2]> = Vec::with_capacity(members.len());
    // Select's `cond` (its operands are `then` and `else`).
    let mut conds: Vec<Option<Operand>> = Vec::with_capacity(members.len());
    let mut kinds: Vec<(AutoBroadcast, &dyn Fusable)> = Vec::with_capacity(members.len());
    for &m in members {
        let node = &g.nodes[m];
        let Some(f) = node.op.fusable() else {
            return Err((m, missing()));
        };
        let (spec, kind) = (f.auto_broadcast(), f);
        let (ops, cond) = f.operands(inputs_of(node, members, &mut leaves));
        operands.push(ops);
        conds.push(cond);
        kinds.push((spec, kind));
    }
    let tensors: Vec<Value<'_>> = leaves
        .iter()
        .map(|l| {
            values[l.node][l.port]
                .clone()
                .ok_or_else(|| (root, missing()))
        })
        .collect::<Result<_, _>>()?;
    if kinds
        .iter()
        .any(|(_, k)| k.converts_to().is_some() || k.ends_group())
    {
        if members.len() == 1 {
            // A lone Convert: the op's own evaluation (packed weight types, any layout).
            drop(tensors);
            return one_by_one(g, members, values, budget);
        }
        let kinds: Vec<&dyn Fusable> = kinds.iter().map(|(_, k)| *k).collect();
        return super::mixed::run(
            g,
            members,
            (&operands, &conds),
            &kinds,
            tensors,
            values,
            budget,
        );
    }
    let ty = tensors[0].element_type();
    // Shapes step by step; any mismatch, or an intermediate of another shape than the
    // output, runs the layers one by one (which reports errors as such).
    let shapes: Vec<&[usize]> = tensors.iter().map(|t| t.shape()).collect();
    let plans = tensors
        .iter()
        .all(|t| t.element_type() == ty)
        .then(|| plans(&operands, |k| kinds[k].0, &shapes))
        .flatten();
    let Some(plans) = plans else {
        drop(tensors);
        return one_by_one(g, members, values, budget);
    };
    let steps: Vec<Step> = plans
        .into_iter()
        .zip(&operands)
        .map(|(plan, &[x, y])| Step { plan, x, y })
        .collect();
    let out_shape = steps[steps.len() - 1].plan.out.clone();
    // A leaf whose last use is this group, of the output's shape and not shared, lends its
    // buffer to the output.
    // Counted over the members' input edges: a unary step names its one input twice.
    let refs = |l: usize| {
        members
            .iter()
            .flat_map(|&m| &g.nodes[m].inputs)
            .filter(|p| p.source == leaves[l])
            .count()
    };
    let reusable = (0..leaves.len()).find(|&l| {
        let p = leaves[l];
        matches!(&tensors[l], Value::Tensor(t) if Arc::strong_count(t) == 2)
            && tensors[l].shape() == out_shape.as_slice()
            && uses[p.node][p.port] == refs(l)
    });
    let mut tensors: Vec<Option<Value<'_>>> = tensors.into_iter().map(Some).collect();
    let reuse = reusable.and_then(|l| {
        let p = leaves[l];
        values[p.node][p.port] = None;
        let Some(Value::Tensor(t)) = tensors[l].take() else {
            return None;
        };
        match Arc::try_unwrap(t) {
            Ok(t) => Some((l, t)),
            Err(t) => {
                tensors[l] = Some(Value::Tensor(t));
                None
            }
        }
    });
    match &reuse {
        // The output takes over the leaf's bytes (counted again when it is stored).
        Some((_, t)) => budget.remove(t.bytes()),
        None => output_fits(budget, g, root, ty, out_shape.iter().product())?,
    }
    let kinds: Vec<&dyn Fusable> = kinds.into_iter().map(|(_, k)| k).collect();
    let fail = |f: kernel::Failure| {
        let m = members[f.step];
        (m, eval_error(g, m, f.to_eval(&out_shape)))
    };
    crate::dispatch!(numeric: ty, T => compute::<T>(&steps, &kinds, &tensors, reuse, &out_shape).map_err(|e| match e {
        Stop::Failed(f) => fail(f),
        Stop::Eval(e, k) => (members[k], eval_error(g, members[k], e)),
    }), _ => {
        let m = members[0];
        Err((m, eval_error(g, m, EvalError::UnsupportedType { op: g.nodes[m].op.name().to_owned(), ty })))
    })
}

/// A group led by a layer that applies the others to its output as it writes it
/// ([`Op::eval_then`]): `members[lead]`, a convolution and its bias Add, Relu, residual Add…
/// When the op does not apply them to these inputs (another type, an operand that is not one
/// value, one per channel or of the output's shape, steps that are not one chain), it runs on
/// its own and the others as a group of their own.
///
/// [`Op::eval_then`]: crate::ops::Op::eval_then
fn run_led(
    g: &Graph,
    members: &[usize],
    lead: usize,
    values: &mut Values,
    uses: &[Vec<usize>],
    budget: &mut Budget,
) -> Result<Arc<Tensor>, (usize, Error)> {
    let (rest, lead) = (
        members
            .iter()
            .copied()
            .filter(|&m| m != members[lead])
            .collect::<Vec<_>>(),
        members[lead],
    );
    if let Some(t) = led(g, lead, &rest, values, budget)? {
        return Ok(Arc::new(t));
    }
    let t = eval_node(g, lead, values, budget, 0, None)
        .map_err(|e| (lead, e))?
        .into_iter()
        .next()
        .ok_or_else(|| (lead, internal(g, lead, "a layer made no output")))?;
    let t = Arc::new(t);
    budget.add(t.bytes());
    values[lead][0] = Some(Value::Tensor(t));
    run(g, &rest, values, uses, budget)
}

/// [`run_led`]'s fused run: the lead's output with the steps of `rest` applied, or `None`
/// (nothing computed) when the lead does not take them.
fn led(
    g: &Graph,
    lead: usize,
    rest: &[usize],
    values: &Values,
    budget: &Budget,
) -> Result<Option<Tensor>, (usize, Error)> {
    // Leaf 0 is the lead's output, the chain's running value.
    let mut leaves = vec![Source {
        node: lead,
        port: 0,
    }];
    let mut operands: Vec<[Operand; 2]> = Vec::with_capacity(rest.len());
    let mut specs = Vec::with_capacity(rest.len());
    // Each step's link and the leaf of its other operand (none for a unary step).
    let mut links: Vec<(Link, Option<usize>)> = Vec::with_capacity(rest.len());
    for (k, &m) in rest.iter().enumerate() {
        let node = &g.nodes[m];
        let Some(f) = node.op.fusable() else {
            return Ok(None);
        };
        let Some(op) = f
            .chain_op()
            .filter(|_| f.converts_to().is_none() && !f.ends_group())
        else {
            return Ok(None);
        };
        let ([x, y], cond) = f.operands(inputs_of(node, rest, &mut leaves));
        // The running value: the lead's output at step 0, the step before after it.
        let acc = match k {
            0 => Operand::Leaf(0),
            _ => Operand::Step(k - 1),
        };
        let link = |other_is_a| Link { op, other_is_a };
        links.push(match (x, y) {
            _ if cond.is_some() => return Ok(None),
            (a, b) if a == acc && b == acc && f.data_inputs() == 1 => (link(false), None),
            (a, Operand::Leaf(l)) if a == acc && l != 0 => (link(false), Some(l)),
            (Operand::Leaf(l), b) if b == acc && l != 0 => (link(true), Some(l)),
            _ => return Ok(None),
        });
        operands.push([x, y]);
        specs.push(f.auto_broadcast());
    }
    let held: Vec<Value<'_>> = leaves[1..]
        .iter()
        .map(|l| {
            values[l.node][l.port]
                .clone()
                .ok_or_else(|| (lead, internal(g, lead, "an input was not computed")))
        })
        .collect::<Result<_, _>>()?;
    // (`None` for an operand of another type.)
    let Some(data) = held
        .iter()
        .map(kernel::value_data::<f32>)
        .collect::<Option<Vec<_>>>()
    else {
        return Ok(None);
    };
    let then = |out: &[usize]| -> Option<Epilogue<'_>> {
        let shapes: Vec<&[usize]> = std::iter::once(out)
            .chain(held.iter().map(|v| v.shape()))
            .collect();
        let plans = plans(&operands, |k| specs[k], &shapes)?;
        if plans.last()?.out != out {
            return None;
        }
        let steps = links
            .iter()
            .zip(&specs)
            .map(|(&(link, leaf), &spec)| {
                let other = match leaf {
                    None => Other::Unary,
                    Some(l) => {
                        let strides =
                            broadcast::input_strides(spec, shapes[l], out, link.other_is_a)?;
                        other(&data[l - 1], &strides, out)?
                    }
                };
                Some((link, other))
            })
            .collect::<Option<Vec<_>>>()?;
        Epilogue::new(steps, out)
    };
    let inputs = args(g, lead, values).map_err(|e| (lead, e))?;
    let cx = EvalCx::new(&inputs, *budget);
    match g.nodes[lead].op.eval_then(&cx, &then) {
        None => Ok(None),
        Some(Err(e)) => Err((lead, eval_error(g, lead, e))),
        Some(Ok(out)) => match <[Tensor; 1]>::try_from(out) {
            Ok([t]) => Ok(Some(t)),
            Err(_) => Err((
                lead,
                internal(g, lead, "the op made another number of outputs"),
            )),
        },
    }
}

/// How a step's other operand (`v`, read with `strides` along the output's axes) meets an
/// output of shape `out` (`[N, C, …]`), or `None` when it is not one value, one per channel,
/// or of the output's shape.
fn other<'a>(v: &'a [f32], strides: &[usize], out: &[usize]) -> Option<Other<'a>> {
    // It broadcasts to `out`: as many elements is the output's layout.
    let along_channels = strides.iter().enumerate().all(|(k, &s)| s == 0 || k == 1);
    match v.len() {
        1 => Some(Other::One(v[0])),
        n if n == out.iter().product::<usize>() => Some(Other::Full(v)),
        n if along_channels && out.get(1) == Some(&n) => Some(Other::Channel(v)),
        _ => None,
    }
}

/// A member's inputs (at most three): earlier `members` as steps, anything else as a leaf,
/// added to `leaves` when it is new.
fn inputs_of(
    node: &crate::graph::Node,
    members: &[usize],
    leaves: &mut Vec<Source>,
) -> [Operand; 3] {
    let mut all = [Operand::Leaf(0); 3];
    for (o, p) in all.iter_mut().zip(&node.inputs) {
        *o = match members.iter().position(|&x| x == p.source.node) {
            Some(k) => Operand::Step(k),
            None => Operand::Leaf(match leaves.iter().position(|&l| l == p.source) {
                Some(l) => l,
                None => {
                    leaves.push(p.source);
                    leaves.len() - 1
                }
            }),
        };
    }
    all
}

pub(super) enum Stop {
    Failed(kernel::Failure),
    /// An error, at a step.
    Eval(EvalError, usize),
}

fn compute<T: Element + kernel::Chain>(
    steps: &[Step],
    kinds: &[&dyn Fusable],
    tensors: &[Option<Value<'_>>],
    reuse: Option<(usize, Tensor)>,
    out_shape: &[usize],
) -> Result<Arc<Tensor>, Stop> {
    let last = steps.len().saturating_sub(1);
    let internal = || Stop::Eval(EvalError::Internal("a fused input has another type"), last);
    let kernels = kernels_for::<T>(kinds, |k| k)?;
    let kernels: Vec<&dyn StepKernel<T>> = kernels.iter().map(|k| &**k).collect();
    let reuse = match reuse {
        Some((l, t)) => Some((l, owned_vec::<T>(t).ok_or_else(internal)?)),
        None => None,
    };
    let data: Vec<Cow<'_, [T]>> = tensors
        .iter()
        .map(|t| match t {
            Some(v) => kernel::value_data::<T>(v).ok_or_else(internal),
            None => Ok(Cow::Borrowed(&[][..])),
        })
        .collect::<Result<_, _>>()?;
    let leaves: Vec<&[T]> = data.iter().map(|c| &**c).collect();
    let links = T::CHAIN.and_then(|f| Some((f, links(steps, kinds)?)));
    let out = kernel::fused(
        steps,
        &leaves,
        reuse,
        &kernels,
        links.as_ref().map(|(f, l)| (*f, l.as_slice())),
    )
    .map_err(Stop::Failed)?;
    let array =
        ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(out_shape), out).map_err(|_| internal())?;
    Ok(Arc::new(T::wrap(array)))
}

/// Each member's broadcast plan (a step's shape is its plan's output; leaves have `shapes`),
/// or `None` when a member's operands do not broadcast or an intermediate has another shape
/// than the output.
pub(super) fn plans(
    operands: &[[Operand; 2]],
    broadcast: impl Fn(usize) -> AutoBroadcast,
    shapes: &[&[usize]],
) -> Option<Vec<Plan>> {
    let mut plans: Vec<Plan> = Vec::with_capacity(operands.len());
    for (k, &[x, y]) in operands.iter().enumerate() {
        let shape = |o: Operand| match o {
            Operand::Leaf(l) => shapes[l],
            Operand::Step(j) => &plans[j].out,
        };
        let plan = Plan::new(broadcast(k), shape(x), shape(y))?;
        plans.push(plan);
    }
    let out = &plans.last()?.out;
    plans.iter().all(|p| p.out == *out).then_some(plans)
}

/// The members' kernels for `T`; a member without one is an error at member `member(k)`
/// (`k` its position in `kinds`).
pub(super) fn kernels_for<T: Element>(
    kinds: &[&dyn Fusable],
    member: impl Fn(usize) -> usize,
) -> Result<Vec<Box<dyn StepKernel<T>>>, Stop> {
    kinds
        .iter()
        .enumerate()
        .map(|(k, f)| {
            step_kernel::<T>(*f).ok_or(Stop::Eval(
                EvalError::UnsupportedType {
                    op: "this layer".into(),
                    ty: T::TYPE,
                },
                member(k),
            ))
        })
        .collect()
}

/// How each step combines the running value with its other operand, if the steps form a
/// linear chain (each reads the step before it and one leaf); `None` otherwise.
pub(super) fn links(steps: &[Step], kinds: &[&dyn Fusable]) -> Option<Vec<Link>> {
    steps
        .iter()
        .zip(kinds)
        .enumerate()
        .map(|(k, (s, kind))| {
            let acc_first = match (s.x, s.y) {
                (Operand::Leaf(_), Operand::Leaf(_)) if k == 0 => true,
                // A unary step reads its one input twice: the running value.
                (Operand::Step(i), Operand::Step(j))
                    if i == j && j + 1 == k && kind.data_inputs() == 1 =>
                {
                    true
                }
                (Operand::Step(j), Operand::Leaf(_)) if j + 1 == k => true,
                (Operand::Leaf(_), Operand::Step(j)) if j + 1 == k => false,
                _ => return None,
            };
            let op = kind.chain_op()?;
            Some(Link {
                op,
                other_is_a: !acc_first,
            })
        })
        .collect()
}

/// A tensor's elements as its own row-major vector (copied only if the array is not laid out
/// that way).
fn owned_vec<T: Element>(t: Tensor) -> Option<Vec<T>> {
    let a = T::unwrap(t)?;
    if a.is_standard_layout() {
        let n = a.len();
        let (v, offset) = a.into_raw_vec_and_offset();
        if offset.unwrap_or(0) == 0 && v.len() == n {
            return Some(v);
        }
        return Some(v[offset.unwrap_or(0)..][..n].to_vec());
    }
    Some(a.iter().copied().collect())
}

/// Runs elementwise layers one by one, in the order given (shapes or types that do not fuse;
/// errors are reported as running the layers unfused reports them). On failure, the layer that
/// failed and the error.
pub(super) fn one_by_one(
    g: &Graph,
    members: &[usize],
    values: &Values,
    budget: &Budget,
) -> Result<Arc<Tensor>, (usize, Error)> {
    let mut budget = *budget;
    let mut local: HashMap<usize, Arc<Tensor>> = HashMap::new();
    let mut last = None;
    for &m in members {
        let inputs = g.nodes[m]
            .inputs
            .iter()
            .map(|p| match local.get(&p.source.node) {
                Some(t) => Ok(Value::Tensor(t.clone())),
                None => values[p.source.node][p.source.port]
                    .clone()
                    .ok_or_else(|| (m, internal(g, m, "an input was not computed"))),
            })
            .collect::<Result<Vec<_>, _>>()?;
        let out = eval_with(g, m, &inputs, &budget, 0, None).map_err(|e| (m, e))?;
        let t = Arc::new(
            out.into_iter()
                .next()
                .ok_or_else(|| (m, internal(g, m, "a layer made no output")))?,
        );
        budget.add(t.bytes());
        local.insert(m, t.clone());
        last = Some(t);
    }
    last.ok_or_else(|| (0, internal(g, 0, "an empty group")))
}
