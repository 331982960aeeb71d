//! Fused groups of elementwise steps, computed tile by tile or run by run (see the module docs
//! of [`kernel`](super)).

use std::mem::MaybeUninit;

use super::chain::{Arm, Chain, ChainFns, Feed, Link, Pick, Test, chain_feeds};
use super::simd::stream_fence;
use super::{ElemError, Out};
use super::{RunResult, Src, contiguous, filled, in_parts};
use crate::broadcast::{AutoBroadcast, Plan};
use crate::num::Cast;
use crate::ops::EvalError;
use crate::tensor::{Element, Tensor, TypeSet, unravel};

/// One elementwise step's loops for element type `T`, monomorphised per op and type: the op's
/// loop over one run, and its loop over every broadcast run of a lone step, so that a run
/// costs no call (a call between runs measured 1.1–1.3× slower on runs of 100: its stores
/// wait behind the run's non-temporal stores).
pub trait StepKernel<T>: Send + Sync {
    /// Writes `out[i] = op(a[i], b[i])` for every `i < out.len()`; on failure, the offset of
    /// the first failing element and why (the output is then partly written).
    fn run(&self, a: Src<'_, T>, b: Src<'_, T>, out: Out<'_, T>) -> RunResult;

    /// Writes output elements `start..start + out.len()` of `a op b` over `plan`'s broadcast
    /// runs, each operand read in place or repeated ([`runs_with`]); on failure, the first
    /// failing output element and why. Every kernel's is this loop with its own `run` inlined
    /// (monomorphised per kernel).
    fn runs(
        &self,
        plan: &Plan,
        start: usize,
        a: &[T],
        b: &[T],
        out: Out<'_, T>,
    ) -> Option<(usize, ElemError)>
    where
        T: Copy,
    {
        runs_with(
            plan,
            start,
            a,
            b,
            out,
            #[inline(always)]
            |x, y, o| self.run(x, y, o),
        )
    }
}

/// The loop over a plan's runs that every [`StepKernel::runs`] is: `run`, the op's loop over one
/// run, inlined into it.
#[inline(always)]
pub fn runs_with<T: Copy>(
    plan: &Plan,
    start: usize,
    a: &[T],
    b: &[T],
    out: Out<'_, T>,
    run: impl Fn(Src<'_, T>, Src<'_, T>, Out<'_, T>) -> RunResult,
) -> Option<(usize, ElemError)> {
    let Out { data: out, stream } = out;
    let mut failure = None;
    plan.runs(start, start + out.len(), |r| {
        let x = Src::of_run(a, r.a, r.a_step, r.len);
        let y = Src::of_run(b, r.b, r.b_step, r.len);
        let at = r.start - start;
        let o = Out {
            data: &mut out[at..at + r.len],
            stream,
        };
        if let Err((i, error)) = run(x, y, o) {
            failure = Some((r.start + i, error));
            return false;
        }
        true
    });
    failure
}

/// Where a step of a fused group reads an operand: a tensor computed outside the group
/// (`Leaf`, by position in the leaves), or the output of an earlier step of the group.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operand {
    Leaf(usize),
    Step(usize),
}

/// One step of a fused group: its broadcast plan and where its two operands come from. Every
/// step's output has the group's output shape, so a `Step` operand is read at the output's own
/// offsets.
#[derive(Clone, Debug)]
pub struct Step {
    pub plan: Plan,
    pub x: Operand,
    pub y: Operand,
}

/// The first failure of a group: the first step (in order) that fails anywhere, at its first
/// failing element in row-major order — the error running the steps one after another would
/// report.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Failure {
    pub step: usize,
    pub at: usize,
    pub error: ElemError,
}

impl Failure {
    pub fn to_eval(self, shape: &[usize]) -> EvalError {
        let index = unravel(self.at, shape);
        match self.error {
            ElemError::DivisionByZero => EvalError::DivisionByZero { index },
            ElemError::Overflow => EvalError::DivisionOverflow { index },
            ElemError::Undefined(what) => EvalError::Undefined { what, index },
        }
    }
}

/// Elements per tile when a group computes intermediates: each step's tile (16 KiB of f32)
/// stays in L1/L2 between steps. Against 512, the per-tile set-up (a kernel call per step, each
/// operand resolved) is amortised: relu(x*scale+bias) per channel on [64,64,64,64] at one
/// thread 10.6 -> 7.3 ms, f16 a*b+c 8.9 -> 7.9 ms (2048: 8.0 and 8.2 ms).
pub const TILE: usize = 4096;

/// The parts of an output computed in parallel start at multiples of this many elements.
const PART: usize = 512;

/// Computes a fused group of elementwise steps in one pass over the output, tile by tile:
/// `kernels[k]` is step `k`'s kernel. Intermediates live only in per-thread
/// tile buffers; the last step's output is the result.
///
/// With `reuse = Some((l, data))` the result is written over `data`, leaf `l`'s elements
/// (which must have the output's shape; `leaves[l]` is not read): each tile of that leaf is
/// copied aside before any step writes the tile, so the leaf is computed with in place.
///
/// A lone step whose broadcast runs are at least [`RUN_MIN`] long skips the gathering: its
/// kernel's [`StepKernel::runs`] reads each operand in place or repeated; or, for a chain
/// type whose runs are whole blocks of 64, its [`ChainFns::runs`] computes every run under
/// one dispatch.
///
/// With `chain = Some((f, links))` the steps form a linear chain (step 0 reads two leaves,
/// step `k` reads step `k - 1` and a leaf, combined as `links[k]` says) that cannot fail, and
/// each tile is computed by `f` in registers instead of step by step. When its broadcast
/// leaves change only every [`RUN_MIN`] or more elements and no leaf is written over, the
/// chain skips tiles and gathering: [`ChainFns::segments`] reads each leaf in place or
/// repeated, over the stretches of the output where every leaf is one run.
pub fn fused<T: Element>(
    steps: &[Step],
    leaves: &[&[T]],
    reuse: Option<(usize, Vec<T>)>,
    kernels: &[&dyn StepKernel<T>],
    chain: Option<(ChainFns<T>, &[Link])>,
) -> Result<Vec<T>, Failure> {
    fused_from(steps, leaves, &[], reuse, kernels, chain)
}

/// [`fused`] where some leaves are made tile by tile by a [`TileSource`] (`sources[l]`, for
/// leaf `l`; `leaves[l]` is then not read): a leaf of another element type converted, or a
/// group of another type computed and converted (a Convert between two parts of a fused
/// group). A sourced leaf has the output's shape and is never written over.
pub fn fused_from<T: Element>(
    steps: &[Step],
    leaves: &[&[T]],
    sources: &[Option<&dyn TileSource<T>>],
    reuse: Option<(usize, Vec<T>)>,
    kernels: &[&dyn StepKernel<T>],
    chain: Option<(ChainFns<T>, &[Link])>,
) -> Result<Vec<T>, Failure> {
    let Some(last) = steps.last() else {
        return Ok(Vec::new());
    };
    let n = last.plan.len();
    let (mut data, alias) = match reuse {
        Some((l, v)) if v.len() == n => (v, Some(l)),
        _ => (Vec::with_capacity(n), None),
    };
    let out: &mut [MaybeUninit<T>] = match alias {
        // SAFETY: `T` and `MaybeUninit<T>` have the same layout; the steps only write
        // initialised values, so `data` stays initialised.
        Some(_) => unsafe {
            std::slice::from_raw_parts_mut(data.as_mut_ptr() as *mut MaybeUninit<T>, n)
        },
        None => &mut data.spare_capacity_mut()[..n],
    };
    // An output far larger than the caches, and not read just before (as a reused leaf is),
    // bypasses them: no read of each line before it is overwritten.
    let stream = alias.is_none() && n.saturating_mul(std::mem::size_of::<T>()) >= STREAM_MIN;
    let group = Group::new(steps, leaves, sources, alias, kernels, chain, stream);
    if let Some(f) = in_parts(out, PART, |at, o| group.chunk(at, o), |f| (f.step, f.at)) {
        return Err(f);
    }
    if alias.is_none() {
        // SAFETY: every step's plan covers `0..n` exactly once and the last step wrote each
        // element of its runs (no failure, checked above).
        unsafe { data.set_len(n) };
    }
    Ok(data)
}

/// [`fused`]'s output rounded to f16 (to nearest even, as Convert-1 rounds) as it is stored:
/// a chain ending in a Convert to f16, computed in registers over the stretches where every
/// leaf is one run (read in place or repeated), each block rounded as it leaves the
/// registers, with no tile buffers (`f32 x·scale + bias → f16` went tile by tile through two
/// buffers, 0.52× OpenVINO's speed). `None` when the group is not such a chain (a leaf to
/// gather, or no f16 form of `T`'s chains): the caller converts tile by tile.
pub fn fused_to_f16<T: Element>(
    steps: &[Step],
    leaves: &[&[T]],
    kernels: &[&dyn StepKernel<T>],
    chain: Option<(ChainFns<T>, &[Link])>,
) -> Option<Vec<half::f16>> {
    let (fns, links) = chain?;
    let to_f16 = fns.segments_f16?;
    let n = steps.last()?.plan.len();
    let group = Group::new(steps, leaves, &[], None, kernels, chain, false);
    let by_leaves =
        chain_feeds(steps, links).all(|(_, side)| !matches!(side, Some((_, Operand::Step(_)))));
    if (group.gathers && !group.by_segments) || !by_leaves {
        return None;
    }
    let fill = |at, o: Out<'_, half::f16>| {
        let mut feeds: Vec<Feed<'_, T>> = chain_feeds(steps, links)
            .map(|(step, side)| group.feed(step, side, at))
            .collect();
        to_f16(&mut feeds, links, at, o);
    };
    // SAFETY: a chain writes every element of its output.
    Some(unsafe { written_in_parts(n, fill) })
}

/// An output of `n` elements written part by part (in parallel chunks) by `fill(at, part)`,
/// with non-temporal stores when it is large ([`STREAM_MIN`]), fenced after each part.
///
/// # Safety
/// `fill` must write every element of each part it is given.
unsafe fn written_in_parts<E: Send>(n: usize, fill: impl Fn(usize, Out<'_, E>) + Sync) -> Vec<E> {
    let mut data: Vec<E> = Vec::with_capacity(n);
    let stream = n.saturating_mul(std::mem::size_of::<E>()) >= STREAM_MIN;
    in_parts(
        &mut data.spare_capacity_mut()[..n],
        PART,
        |at, o| {
            fill(at, Out { data: o, stream });
            if stream {
                stream_fence();
            }
            None::<()>
        },
        |_| (),
    );
    // SAFETY: the parts cover `0..n`, and `fill` wrote each (the caller's promise).
    unsafe { data.set_len(n) };
    data
}

/// One operand of a Select computed in registers ([`selected_in_registers`]): a linear chain
/// of steps over leaves (a part of a fused group, `links` as [`fused`] takes them), or a leaf
/// read as it is: in place, as one value repeated, or through `via`, the broadcast plan of
/// the comparison that reads it (and whether it is the plan's input A).
pub enum ArmPlan<'g, T> {
    Chain {
        steps: &'g [Step],
        leaves: &'g [&'g [T]],
        links: &'g [Link],
    },
    Leaf {
        data: &'g [T],
        via: Option<(&'g Plan, bool)>,
    },
}

/// How a Select computed in registers chooses: by a comparison of its first two arms, or by a
/// `boolean` leaf of the output's size (or of one value).
#[derive(Clone, Copy)]
pub enum Choice<'g> {
    Test(Test),
    Mask(&'g [bool]),
}

/// Where a Select computed in registers reads one operand, before a chunk says from where.
#[derive(Clone, Copy)]
enum Reads<'g, T> {
    Same(&'g [T]),
    One(T),
    Runs(&'g Plan, bool, &'g [T]),
}

impl<'g, T: Copy> Reads<'g, T> {
    /// How `leaf` is read over an output of `n` elements: in place, repeated, or run by run
    /// through `via` when its runs are at least [`RUN_MIN`] long; `None` otherwise.
    fn of(leaf: &'g [T], n: usize, via: Option<(&'g Plan, bool)>) -> Option<Self> {
        if leaf.len() == n {
            Some(Reads::Same(leaf))
        } else if let [v] = *leaf {
            Some(Reads::One(v))
        } else {
            let (plan, first) = via?;
            let long = plan.dims().last().is_some_and(|&d| d >= RUN_MIN);
            (long && plan.len() == n).then_some(Reads::Runs(plan, first, leaf))
        }
    }

    /// The operand over a chunk from output element `start`.
    fn at(self, start: usize) -> Feed<'g, T> {
        match self {
            Reads::Same(s) => Feed::Same(s),
            Reads::One(v) => Feed::One(v),
            Reads::Runs(plan, first, leaf) => Feed::Runs(plan.cursor(first, start), leaf),
        }
    }
}

/// A Select over `n` elements computed in registers: each block of every arm taken through
/// its chain and chosen between lane by lane ([`ChainFns::select`]), with no tile buffers
/// (`Select(a > 0, a, a·0.1)` went through a mask, a product and a blend tile, 0.50× OpenVINO's
/// speed). `arms` are what a [`Choice::Test`] compares (none for a mask), then `then` and
/// `else`. `None` when `T` has no chains in registers or an operand cannot be read so (a leaf
/// to gather, a chain that reads an earlier step's result or does not have the output's
/// size): the caller goes tile by tile.
pub fn selected_in_registers<T: Element + Chain>(
    choice: Choice<'_>,
    arms: &[ArmPlan<'_, T>],
    n: usize,
) -> Option<Vec<T>> {
    let fns = T::CHAIN?;
    // The choice, with a mask's reads.
    let (choice, wanted) = match choice {
        Choice::Mask(m) => (Err(Reads::of(m, n, None)?), 2),
        Choice::Test(t) => (Ok(t), 4),
    };
    if arms.len() != wanted {
        return None;
    }
    // Each arm's operands and links.
    let mut plans: Vec<(Vec<Reads<'_, T>>, &[Link])> = Vec::with_capacity(arms.len());
    for arm in arms {
        plans.push(match *arm {
            ArmPlan::Leaf { data, via } => (vec![Reads::of(data, n, via)?], &[]),
            ArmPlan::Chain {
                steps,
                leaves,
                links,
            } => {
                if steps.is_empty()
                    || steps.len() != links.len()
                    || steps.iter().any(|s| s.plan.len() != n)
                {
                    return None;
                }
                let reads = chain_feeds(steps, links)
                    .map(|(step, side)| match side {
                        None => Some(Reads::One(T::default())),
                        Some((first, Operand::Leaf(l))) => {
                            Reads::of(leaves.get(l)?, n, Some((&step.plan, first)))
                        }
                        Some((_, Operand::Step(_))) => None,
                    })
                    .collect::<Option<Vec<_>>>()?;
                (reads, links)
            }
        });
    }
    let fill = |at, o: Out<'_, T>| {
        let mut arms: Vec<Arm<'_, T>> = plans
            .iter()
            .map(|(reads, links)| Arm {
                feeds: reads.iter().map(|r| r.at(at)).collect(),
                links,
            })
            .collect();
        let mut pick = match choice {
            Ok(t) => Pick::Test(t),
            Err(m) => Pick::Mask(m.at(at)),
        };
        (fns.select)(&mut pick, &mut arms, at, o);
    };
    // SAFETY: a Select with 2 arms (a mask) or 4 (a test), each with a first operand (checked
    // above), writes every element of its output.
    Some(unsafe { written_in_parts(n, fill) })
}

struct Group<'g, T> {
    /// Whether the output is written with non-temporal stores.
    stream: bool,
    /// Output elements.
    n: usize,
    /// Whether a broadcast leaf is gathered into tile buffers.
    gathers: bool,
    steps: &'g [Step],
    leaves: &'g [&'g [T]],
    /// Leaves made tile by tile (by leaf; shorter than `leaves` when the last have none).
    sources: &'g [Option<&'g dyn TileSource<T>>],
    alias: Option<usize>,
    tile: usize,
    kernels: &'g [&'g dyn StepKernel<T>],
    chain: Option<(ChainFns<T>, &'g [Link])>,
    /// Whether the group is one step computed run by run (see [`fused`]).
    by_runs: bool,
    /// Whether the group is a chain computed over the stretches where each broadcast operand
    /// is one run (see [`fused`]).
    by_segments: bool,
}

impl<'g, T: Element> Group<'g, T> {
    /// How a group computes (see [`fused_from`]): `alias` the leaf written over, `stream`
    /// whether the output is written with non-temporal stores.
    fn new(
        steps: &'g [Step],
        leaves: &'g [&'g [T]],
        sources: &'g [Option<&'g dyn TileSource<T>>],
        alias: Option<usize>,
        kernels: &'g [&'g dyn StepKernel<T>],
        chain: Option<(ChainFns<T>, &'g [Link])>,
        stream: bool,
    ) -> Self {
        let n = steps.last().map_or(0, |s| s.plan.len());
        // Whether some step reads a leaf that is neither full-size (read in place) nor one value
        // (repeated): such a leaf is gathered tile by tile.
        let sourced = sources.iter().any(Option::is_some);
        let gathers = sourced
            || steps.iter().flat_map(|s| [s.x, s.y]).any(|o| match o {
                Operand::Leaf(l) => {
                    Some(l) != alias && leaves[l].len() != n && leaves[l].len() != 1
                }
                Operand::Step(_) => false,
            });
        // A lone step whose broadcast operand changes only every `RUN_MIN` or more elements is
        // computed run by run, each operand read where it lies (in place or one value repeated):
        // gathering it would cost a pass over each tile.
        let by_runs = steps.len() == 1
            && gathers
            && !sourced
            && alias.is_none()
            && steps
                .last()
                .is_some_and(|s| s.plan.dims().last().is_some_and(|&d| d >= RUN_MIN));
        // A chain whose broadcast operands change only every `RUN_MIN` or more elements (as in
        // `(x - mean) / std` over rows) reads them in place, run by run, rather than gathering
        // them into tile buffers (which cost as much as the chain itself).
        let by_segments = gathers
            && !sourced
            && alias.is_none()
            && chain.is_some_and(|(_, links)| {
                chain_feeds(steps, links).all(|(step, side)| match side {
                    None => true,
                    Some((_, Operand::Leaf(l))) => {
                        leaves[l].len() == n
                            || leaves[l].len() == 1
                            || step.plan.dims().last().is_some_and(|&d| d >= RUN_MIN)
                    }
                    Some((_, Operand::Step(_))) => false,
                })
            });
        // A lone step or a chain in registers with nothing to gather or copy has no tile buffers
        // to keep in the caches: it runs over whole chunks (for chain of 8 on `[64,64,64,64]`,
        // 7.3 ms at one thread against 10.2 ms in tiles of 4096, and 8.3–9.3 in tiles of
        // 6144–12288). Anything else goes tile by tile.
        let tile = if alias.is_none() && !gathers && (steps.len() == 1 || chain.is_some()) {
            usize::MAX
        } else {
            TILE
        };
        Group {
            stream,
            n,
            gathers,
            steps,
            leaves,
            sources,
            alias,
            tile,
            kernels,
            chain,
            by_runs,
            by_segments,
        }
    }
}

/// Broadcast runs at least this long are computed in place rather than gathered (a lone
/// step only): one kernel call per run costs less than a copy of each run.
pub const RUN_MIN: usize = 64;

/// Outputs of at least this many bytes are written with non-temporal stores.
pub const STREAM_MIN: usize = 8 << 20;

/// Lays out the elements that input A (`first`) or B of `plan` contributes to output elements
/// `g0..g0 + buf.len()` contiguously in `buf`.
#[inline(always)]
fn gather<T: Copy>(plan: &Plan, first: bool, leaf: &[T], g0: usize, buf: &mut [MaybeUninit<T>]) {
    plan.runs(g0, g0 + buf.len(), |r| {
        let dst = &mut buf[r.start - g0..r.start - g0 + r.len];
        let (at, step) = if first {
            (r.a, r.a_step)
        } else {
            (r.b, r.b_step)
        };
        match Src::of_run(leaf, at, step, r.len) {
            Src::Slice(s) => {
                // SAFETY: `s` and `dst` hold `r.len` elements each and do not overlap (`dst`
                // is a buffer of the caller's).
                unsafe {
                    std::ptr::copy_nonoverlapping(s.as_ptr(), dst.as_mut_ptr() as *mut T, s.len())
                }
            }
            Src::Repeat(v) => {
                for d in dst {
                    d.write(v);
                }
            }
        }
        true
    });
}

/// A broadcast leaf's operand for output elements `g0..g0 + len` when they lie in one run of
/// `plan`: read in place, or its one value repeated (a per-channel scale over a tile within
/// one channel), rather than gathered into a buffer (which cost a sixth of relu(x*s+b)).
fn one_run<'a, T: Copy>(
    plan: &Plan,
    first: bool,
    leaf: &'a [T],
    g0: usize,
    len: usize,
) -> Option<Src<'a, T>> {
    let mut one = None;
    plan.runs(g0, g0 + len, |r| {
        if r.len == len {
            one = Some(if first {
                (r.a, r.a_step)
            } else {
                (r.b, r.b_step)
            });
        }
        false
    });
    one.map(|(at, step)| Src::of_run(leaf, at, step, len))
}

impl<T: Element> Group<'_, T> {
    /// Computes output elements `start..start + out.len()`, tile by tile, one call of a step's
    /// kernel per step and tile. After a step fails, only the steps before it go on (one of them may
    /// still fail further on, and that would be the group's first failure); the output is no
    /// longer written.
    fn chunk(&self, start: usize, out: &mut [MaybeUninit<T>]) -> Option<Failure> {
        if self.by_runs {
            return self.chunk_runs(start, out);
        }
        if let Some((f, links)) = self.chain {
            if self.by_segments {
                let mut feeds: Vec<Feed<'_, T>> = chain_feeds(self.steps, links)
                    .map(|(step, side)| self.feed(step, side, start))
                    .collect();
                let o = Out {
                    data: out,
                    stream: self.stream,
                };
                (f.segments)(&mut feeds, links, start, o);
                if self.stream {
                    stream_fence();
                }
            } else {
                self.chunk_chain(f.tile, links, start, out);
            }
            return None;
        }
        let last = self.steps.len() - 1;
        let t = self.tile.min(out.len());
        let tile_buf = |used: bool| vec![MaybeUninit::uninit(); if used { t } else { 0 }];
        let mut bufs: Vec<Vec<MaybeUninit<T>>> = (0..last).map(|_| tile_buf(true)).collect();
        let mut own = tile_buf(self.alias.is_some());
        let (mut gx, mut gy) = (tile_buf(self.gathers), tile_buf(self.gathers));
        let mut limit = self.steps.len();
        let mut failure = None;
        let mut s = 0;
        while s < out.len() && limit > 0 {
            let len = t.min(out.len() - s);
            if self.alias.is_some() {
                own[..len].copy_from_slice(&out[s..s + len]);
            }
            let g0 = start + s;
            for k in 0..limit {
                let step = &self.steps[k];
                let (done, rest) = bufs.split_at_mut(k.min(last));
                let target = match rest.first_mut() {
                    Some(b) if k < last => Out::new(&mut b[..len]),
                    _ => Out {
                        data: &mut out[s..s + len],
                        stream: self.stream,
                    },
                };
                let tile = Tile {
                    done,
                    own: &own,
                    g0,
                    len,
                };
                let x = self.operand(step, true, &tile, &mut gx);
                let y = self.operand(step, false, &tile, &mut gy);
                if let Err((i, error)) = self.kernels[k].run(x, y, target) {
                    failure = Some(Failure {
                        step: k,
                        at: g0 + i,
                        error,
                    });
                    limit = k;
                    break;
                }
            }
            s += len;
        }
        if self.stream {
            stream_fence();
        }
        failure
    }

    /// [`chunk`](Self::chunk) for a lone step, its kernel's loop over the broadcast runs, each
    /// operand read in place or repeated and the result written to the output directly.
    fn chunk_runs(&self, start: usize, out: &mut [MaybeUninit<T>]) -> Option<Failure> {
        let step = &self.steps[0];
        let leaf = |o: Operand| match o {
            Operand::Leaf(l) => self.leaves[l],
            Operand::Step(_) => &[],
        };
        let (a, b) = (leaf(step.x), leaf(step.y));
        if let Some((f, &[link])) = self.chain
            && step
                .plan
                .dims()
                .last()
                .is_some_and(|d| d.is_multiple_of(super::chain::LANES))
        {
            // In registers, every run under one dispatch (such a step cannot fail). Only for
            // runs of whole blocks: a run's part block is computed element by element, and a
            // run that does not start on a cache line is not streamed.
            let o = Out {
                data: &mut *out,
                stream: self.stream,
            };
            (f.runs)(&step.plan, start, link, a, b, o);
            if self.stream {
                stream_fence();
            }
            return None;
        }
        let o = Out {
            data: out,
            stream: self.stream,
        };
        let failure = self.kernels[0].runs(&step.plan, start, a, b, o);
        if self.stream {
            stream_fence();
        }
        failure.map(|(at, error)| Failure { step: 0, at, error })
    }

    /// [`chunk`](Self::chunk) for a linear chain that cannot fail: each tile's operands are
    /// resolved (broadcast leaves gathered, one buffer per step), then `f` computes the tile
    /// with the running value in registers and writes it to the output directly.
    fn chunk_chain(
        &self,
        f: super::chain::ChainFn<T>,
        links: &[Link],
        start: usize,
        out: &mut [MaybeUninit<T>],
    ) {
        let t = self.tile.min(out.len());
        let tile_buf = |used: bool| vec![MaybeUninit::uninit(); if used { t } else { 0 }];
        let mut own = tile_buf(self.alias.is_some());
        // One gather buffer for step 0's first operand, then one for each step's other one.
        let mut gathered: Vec<Vec<MaybeUninit<T>>> = (0..=self.steps.len())
            .map(|_| tile_buf(self.gathers))
            .collect();
        let mut s = 0;
        while s < out.len() {
            let len = t.min(out.len() - s);
            if self.alias.is_some() {
                own[..len].copy_from_slice(&out[s..s + len]);
            }
            let tile = Tile {
                done: &[],
                own: &own,
                g0: start + s,
                len,
            };
            let (first_buf, bufs) = gathered.split_at_mut(1);
            let first = self.operand(&self.steps[0], true, &tile, &mut first_buf[0]);
            let operands: Vec<(Link, Src<'_, T>)> = self
                .steps
                .iter()
                .zip(links)
                .zip(bufs.iter_mut())
                .map(|((step, &link), buf)| {
                    let v = if link.unary() {
                        // Not read.
                        Src::Repeat(T::default())
                    } else {
                        self.operand(step, link.other_is_a(), &tile, buf)
                    };
                    (link, v)
                })
                .collect();
            let o = Out {
                data: &mut out[s..s + len],
                stream: self.stream,
            };
            f(first, &operands, o);
            s += len;
        }
        if self.stream {
            stream_fence();
        }
    }

    /// How a chain reads operand A (`first`) or B of `step` over a chunk from output element
    /// `start`, run by run (a unary step's, `None`: a value it does not read).
    fn feed<'a>(
        &'a self,
        step: &'a Step,
        side: Option<(bool, Operand)>,
        start: usize,
    ) -> Feed<'a, T> {
        let Some((first, operand)) = side else {
            return Feed::One(T::default());
        };
        let leaf = match operand {
            Operand::Leaf(l) => self.leaves[l],
            // Not for a chain's feeds (`by_segments` checks); an empty run.
            Operand::Step(_) => &[],
        };
        if leaf.len() == self.n {
            Feed::Same(leaf)
        } else if leaf.len() == 1 {
            Feed::One(leaf[0])
        } else {
            Feed::Runs(step.plan.cursor(first, start), leaf)
        }
    }

    /// Operand A (`first`) or B of `step` over a tile, as one run: an earlier step's tile, the
    /// reused leaf's copy, a full-size leaf's own elements, a one-element leaf repeated, or a
    /// broadcast leaf gathered into `buf`.
    #[inline(always)]
    fn operand<'a>(
        &'a self,
        step: &Step,
        first: bool,
        tile: &Tile<'a, T>,
        buf: &'a mut [MaybeUninit<T>],
    ) -> Src<'a, T> {
        let (g0, len) = (tile.g0, tile.len);
        // SAFETY (the `filled` calls): earlier steps filled their whole tile, `own` holds the
        // tile's copy of the reused leaf, and a source and `gather` write the whole tile.
        match if first { step.x } else { step.y } {
            Operand::Step(j) => Src::Slice(unsafe { filled(&tile.done[j], len) }),
            Operand::Leaf(l) if Some(l) == self.alias => {
                Src::Slice(unsafe { filled(tile.own, len) })
            }
            Operand::Leaf(l) => {
                let leaf = self.leaves[l];
                if let Some(Some(source)) = self.sources.get(l) {
                    source.fill(g0, &mut buf[..len]);
                    Src::Slice(unsafe { filled(buf, len) })
                } else if leaf.len() == self.n {
                    Src::Slice(&leaf[g0..g0 + len])
                } else if leaf.len() == 1 {
                    Src::Repeat(leaf[0])
                } else if let Some(src) = one_run(&step.plan, first, leaf, g0, len) {
                    src
                } else {
                    gather(&step.plan, first, leaf, g0, &mut buf[..len]);
                    Src::Slice(unsafe { filled(buf, len) })
                }
            }
        }
    }
}

/// The tile a step computes: output elements `g0..g0 + len`, with the earlier steps' tiles and
/// the reused leaf's copy of it.
struct Tile<'a, T> {
    done: &'a [Vec<MaybeUninit<T>>],
    own: &'a [MaybeUninit<T>],
    g0: usize,
    len: usize,
}

/// A leaf of a fused group made tile by tile: `fill` writes output elements
/// `g0..g0 + out.len()` of the leaf (which has the group's output shape) into `out`, every one
/// of them. Sources cannot fail.
pub trait TileSource<T>: Sync {
    fn fill(&self, g0: usize, out: &mut [MaybeUninit<T>]);

    /// Elements `g0..g0 + len` as they already lie in memory, when they do (a tensor's run read
    /// in place, or its one value repeated), so that a reader that can take them so makes no
    /// copy; `None` when they must be made by [`fill`](TileSource::fill).
    fn direct(&self, _g0: usize, _len: usize) -> Option<Src<'_, T>> {
        None
    }
}

/// `src` converted element by element as Convert-1 converts (`num::Cast`); f32 to and from
/// f16 (F16C, 8 at a time) and bf16 (bit operations) by the conversions the narrow kernels
/// use, which give the same bits (`tests::tile_conversions_are_convert_s`). Writes the first
/// `min(src.len(), out.len())` elements of `out`.
pub(crate) fn convert_into<A: Cast, T: Cast>(src: &[A], out: &mut [MaybeUninit<T>]) {
    use half::{bf16, f16};
    let n = src.len().min(out.len());
    let (src, out) = (&src[..n], &mut out[..n]);
    if let (Some(s), Some(o)) = (same::<A, f32>(src), same_mut::<T, f16>(out)) {
        return super::narrow::narrow_f16(s, o);
    }
    if let (Some(s), Some(o)) = (same::<A, f16>(src), same_mut::<T, f32>(out)) {
        return super::narrow::widen_f16(s, o);
    }
    if let (Some(s), Some(o)) = (same::<A, f32>(src), same_mut::<T, bf16>(out)) {
        return super::vectorised(
            #[inline(always)]
            || {
                for (o, &x) in o.iter_mut().zip(s) {
                    o.write(super::narrow::bf16_from_f32(x));
                }
            },
        );
    }
    if let (Some(s), Some(o)) = (same::<A, bf16>(src), same_mut::<T, f32>(out)) {
        return super::vectorised(
            #[inline(always)]
            || {
                for (o, &x) in o.iter_mut().zip(s) {
                    // A signalling NaN is quietened, as Convert-1 does.
                    let f = super::narrow::bf16_to_f32(x);
                    o.write(if f.is_nan() {
                        f32::from_bits(f.to_bits() | 0x0040_0000)
                    } else {
                        f
                    });
                }
            },
        );
    }
    super::vectorised(
        #[inline(always)]
        || {
            for (o, &x) in out.iter_mut().zip(src) {
                o.write(T::from_num(x.to_num()));
            }
        },
    )
}

/// `s` as a slice of `B` when `A` is `B`.
#[inline(always)]
fn same<A: 'static, B: 'static>(s: &[A]) -> Option<&[B]> {
    (std::any::TypeId::of::<A>() == std::any::TypeId::of::<B>())
        // SAFETY: `A` and `B` are the same type.
        .then(|| unsafe { std::slice::from_raw_parts(s.as_ptr() as *const B, s.len()) })
}

/// `s` as a slice of `MaybeUninit<B>` when `A` is `B`.
#[inline(always)]
fn same_mut<A: 'static, B: 'static>(s: &mut [MaybeUninit<A>]) -> Option<&mut [MaybeUninit<B>]> {
    (std::any::TypeId::of::<A>() == std::any::TypeId::of::<B>()).then(|| {
        // SAFETY: `A` and `B` are the same type.
        unsafe { std::slice::from_raw_parts_mut(s.as_mut_ptr() as *mut MaybeUninit<B>, s.len()) }
    })
}

/// A tensor of another element type, converted as it is read (a Convert of a value computed
/// outside the group).
pub struct Converted<'a, A>(pub &'a [A]);

impl<A: Cast, T: Cast> TileSource<T> for Converted<'_, A> {
    fn fill(&self, g0: usize, out: &mut [MaybeUninit<T>]) {
        convert_into(&self.0[g0..g0 + out.len()], out)
    }
}

/// A part of a fused group of another (float) element type than the part that reads it,
/// computed tile by tile and converted (a Convert between two parts of a group).
pub struct Part<'g, A>(Group<'g, A>);

impl<'g, A: Element> Part<'g, A> {
    /// The part whose steps, leaves and kernels are given as to [`fused_from`]; `None` unless
    /// `A` is a float type (their steps cannot fail, which a source must not).
    pub fn new(
        steps: &'g [Step],
        leaves: &'g [&'g [A]],
        sources: &'g [Option<&'g dyn TileSource<A>>],
        kernels: &'g [&'g dyn StepKernel<A>],
        chain: Option<(ChainFns<A>, &'g [Link])>,
    ) -> Option<Self> {
        TypeSet::FLOAT.contains(A::TYPE).then(|| {
            Part(Group::new(
                steps, leaves, sources, None, kernels, chain, false,
            ))
        })
    }
}

impl<A: Element + Cast, T: Cast> TileSource<T> for Part<'_, A> {
    fn fill(&self, g0: usize, out: &mut [MaybeUninit<T>]) {
        let make = |tile: &mut [MaybeUninit<A>]| {
            if self.0.chunk(g0, tile).is_some() {
                // Float steps do not fail (`Part::new`); were one to, its tile is made defined.
                debug_assert!(false, "a float step failed");
                tile.fill(MaybeUninit::new(A::default()));
            }
        };
        // Read in its own type (a comparison of the part's values): computed in place.
        if let Some(o) = same_mut::<T, A>(out) {
            return make(o);
        }
        let mut buf: Vec<MaybeUninit<A>> = vec![MaybeUninit::uninit(); out.len()];
        make(&mut buf);
        // SAFETY: the steps wrote every element of the tile (none failed, or it was filled).
        convert_into(unsafe { filled(&buf, out.len()) }, out)
    }
}

/// Elements per tile of [`sourced`]. A part below a Convert reads its inputs from memory
/// tile by tile between the conversions of its tiles; shorter tiles let those reads and the
/// output's writes overlap more. `f32 relu(x) → f16` on `[64,64,64,64]` at one thread: 6.1 ms
/// in tiles of 4096, 4.7–4.9 in tiles of 1024–2048, 7.8 in tiles of 256 (the set-up per tile).
/// A Select's passes over its tile (condition, inputs, choice) favour the shorter end:
/// `Select(mask, a, −inf)` 3.7 ms in tiles of 2048, 3.1 in tiles of 1024 (2.7 in tiles of
/// 512, where `x·s + b → f16` took 7.4 ms against 5.4).
const SOURCE_TILE: usize = 1024;

/// The output of `n` elements made by `source` alone (a group ending in a Convert), tile by
/// tile, in parallel chunks; an output of [`STREAM_MIN`] bytes or more is made in a tile
/// buffer and copied out with non-temporal stores, as fused groups write theirs.
pub fn sourced<T: Element>(n: usize, source: &dyn TileSource<T>) -> Vec<T> {
    let mut data: Vec<T> = Vec::with_capacity(n);
    let stream = n.saturating_mul(std::mem::size_of::<T>()) >= STREAM_MIN;
    in_parts(
        &mut data.spare_capacity_mut()[..n],
        PART,
        |at, o| {
            let len = if stream { SOURCE_TILE.min(o.len()) } else { 0 };
            let mut buf = vec![MaybeUninit::uninit(); len];
            for (k, tile) in o.chunks_mut(SOURCE_TILE).enumerate() {
                if stream {
                    let len = tile.len();
                    source.fill(at + k * SOURCE_TILE, &mut buf[..len]);
                    // SAFETY: a source writes every element it is given.
                    super::simd::stream_copy(unsafe { filled(&buf, len) }, tile);
                } else {
                    source.fill(at + k * SOURCE_TILE, tile);
                }
            }
            if stream {
                stream_fence();
            }
            None::<()>
        },
        |_| (),
    );
    // SAFETY: the chunks cover `0..n` and a source writes every element it is given.
    unsafe { data.set_len(n) };
    data
}

/// A tensor broadcast into an output's shape, read tile by tile (`plan` broadcasts the
/// tensor, as input A, with the output's shape).
pub struct Broadcasted<'a, T> {
    data: &'a [T],
    plan: Plan,
}

impl<'a, T> Broadcasted<'a, T> {
    /// `data` of `shape` (numpy-aligned) broadcast into `out`; `None` if it does not broadcast
    /// into exactly `out` or does not hold `shape`'s elements.
    pub fn new(data: &'a [T], shape: &[usize], out: &[usize]) -> Option<Self> {
        let plan = Plan::new(AutoBroadcast::Numpy, shape, out)?;
        (plan.out == out && data.len() == shape.iter().product::<usize>())
            .then_some(Broadcasted { data, plan })
    }
}

impl<T: Copy + Sync> TileSource<T> for Broadcasted<'_, T> {
    fn fill(&self, g0: usize, out: &mut [MaybeUninit<T>]) {
        gather(&self.plan, true, self.data, g0, out)
    }

    fn direct(&self, g0: usize, len: usize) -> Option<Src<'_, T>> {
        one_run(&self.plan, true, self.data, g0, len)
    }
}

/// Select's tiles: `then` where `cond` is true, else `other`, each made tile by tile (so a
/// tensor is broadcast as it is read and a part of a fused group computed as it is needed).
/// The chosen element is copied bit for bit.
pub struct Selected<'a, T> {
    pub cond: &'a dyn TileSource<bool>,
    pub then: &'a dyn TileSource<T>,
    pub other: &'a dyn TileSource<T>,
}

impl<T: Element> TileSource<T> for Selected<'_, T> {
    fn fill(&self, g0: usize, out: &mut [MaybeUninit<T>]) {
        let n = out.len();
        // Each input read where it lies when it can be (a tensor's run, or one value
        // repeated), else made in a buffer: `Select(mask, a, -inf)` copied `a` tile by tile
        // before choosing.
        let mut cond_buf: Vec<MaybeUninit<bool>> = Vec::new();
        let cond = match self.cond.direct(g0, n) {
            Some(Src::Slice(c)) => c,
            direct => {
                cond_buf.resize(n, MaybeUninit::uninit());
                match direct {
                    Some(Src::Repeat(c)) => cond_buf.fill(MaybeUninit::new(c)),
                    _ => self.cond.fill(g0, &mut cond_buf),
                }
                // SAFETY: every element was written.
                unsafe { filled(&cond_buf, n) }
            }
        };
        let mut then_buf: Vec<MaybeUninit<T>> = Vec::new();
        let mut other_buf: Vec<MaybeUninit<T>> = Vec::new();
        let then = made(self.then, g0, n, &mut then_buf);
        let other = made(self.other, g0, n, &mut other_buf);
        blend(cond, then, other, out);
    }
}

/// A source's elements `g0..g0 + n` where they lie ([`TileSource::direct`]), else made in
/// `buf`.
fn made<'a, T: Copy>(
    source: &'a dyn TileSource<T>,
    g0: usize,
    n: usize,
    buf: &'a mut Vec<MaybeUninit<T>>,
) -> Src<'a, T> {
    if let Some(d) = source.direct(g0, n) {
        return d;
    }
    buf.resize(n, MaybeUninit::uninit());
    source.fill(g0, buf);
    // SAFETY: a source writes every element it is given.
    Src::Slice(unsafe { filled(buf, n) })
}

/// `out[i] = if cond[i] { then[i] } else { other[i] }`, the chosen element's bits copied. The
/// choice is a mask on the bits (a branch per element mispredicts on a mixed condition:
/// `Select(a > 0, a, a·0.1)` on 2^24 random values took 70 ms, 10.8 with the mask), whatever
/// the type: every element type is 1, 2, 4 or 8 bytes (the last arm is not reached).
fn blend<T: Copy>(cond: &[bool], then: Src<'_, T>, other: Src<'_, T>, out: &mut [MaybeUninit<T>]) {
    let n = out.len();
    macro_rules! blend {
        ($u:ty) => {{
            // SAFETY: `T` is `$u`'s size and any bits are a `$u` (`T: Copy` has no
            // padding in the element types); `out` is only written.
            let bits = |s: Src<'_, T>| match s {
                Src::Slice(d) => Src::Slice(unsafe {
                    std::slice::from_raw_parts(d.as_ptr() as *const $u, d.len())
                }),
                Src::Repeat(v) => Src::Repeat(unsafe { std::mem::transmute_copy::<T, $u>(&v) }),
            };
            let o = unsafe {
                std::slice::from_raw_parts_mut(out.as_mut_ptr() as *mut MaybeUninit<$u>, n)
            };
            let (t, e) = (bits(then), bits(other));
            #[inline(always)]
            fn pick(c: bool, t: $u, e: $u) -> MaybeUninit<$u> {
                let m = (c as $u).wrapping_neg();
                MaybeUninit::new((t & m) | (e & !m))
            }
            super::vectorised(
                #[inline(always)]
                || match (t, e) {
                    (Src::Slice(t), Src::Slice(e)) => {
                        for (((o, &c), &t), &e) in o.iter_mut().zip(cond).zip(t).zip(e) {
                            *o = pick(c, t, e);
                        }
                    }
                    (Src::Slice(t), Src::Repeat(e)) => {
                        for ((o, &c), &t) in o.iter_mut().zip(cond).zip(t) {
                            *o = pick(c, t, e);
                        }
                    }
                    (Src::Repeat(t), Src::Slice(e)) => {
                        for ((o, &c), &e) in o.iter_mut().zip(cond).zip(e) {
                            *o = pick(c, t, e);
                        }
                    }
                    (Src::Repeat(t), Src::Repeat(e)) => {
                        for (o, &c) in o.iter_mut().zip(cond) {
                            *o = pick(c, t, e);
                        }
                    }
                },
            )
        }};
    }
    match std::mem::size_of::<T>() {
        1 => blend!(u8),
        2 => blend!(u16),
        4 => blend!(u32),
        8 => blend!(u64),
        _ => {
            for (i, (o, &c)) in out.iter_mut().zip(cond).enumerate() {
                o.write(if c { then.get(i) } else { other.get(i) });
            }
        }
    }
}

/// An input of a comparison in a fused group: a tensor, read through the comparison's
/// broadcast plan, or a leaf made tile by tile (a part of the group below the comparison, or a
/// converted tensor; such a leaf has the output's shape).
#[derive(Clone, Copy)]
pub enum Side<'a, T> {
    Tensor(&'a [T]),
    Source(&'a dyn TileSource<T>),
}

/// A comparison's tiles: `test` over the pairs of `a` and `b` that `plan` (the comparison's)
/// broadcasts, a source's tile made in a buffer, a tensor read in place run by run. A group
/// ending in a comparison is this source alone ([`sourced`]); a Select's `cond` may be one.
pub struct Compared<'a, T, F> {
    pub plan: &'a Plan,
    pub a: Side<'a, T>,
    pub b: Side<'a, T>,
    pub test: F,
}

impl<T: Element, F: Fn(T, T) -> bool + Sync> TileSource<bool> for Compared<'_, T, F> {
    fn fill(&self, g0: usize, out: &mut [MaybeUninit<bool>]) {
        let len = out.len();
        let made = |s: &Side<'_, T>| match s {
            Side::Source(src) => {
                let mut buf = vec![MaybeUninit::<T>::uninit(); len];
                src.fill(g0, &mut buf);
                buf
            }
            Side::Tensor(_) => Vec::new(),
        };
        let (buf_a, buf_b) = (made(&self.a), made(&self.b));
        // SAFETY: a source writes every element it is given (the buffers of tensors are
        // empty and not read).
        let (made_a, made_b) =
            unsafe { (filled(&buf_a, buf_a.len()), filled(&buf_b, buf_b.len())) };
        #[inline(always)]
        fn side<'s, T: Copy>(
            s: Side<'s, T>,
            made: &'s [T],
            at: usize,
            i: usize,
            step: bool,
            len: usize,
        ) -> Src<'s, T> {
            match s {
                Side::Tensor(d) => Src::of_run(d, i, step, len),
                Side::Source(_) => Src::Slice(&made[at..at + len]),
            }
        }
        self.plan.runs(g0, g0 + len, |r| {
            let at = r.start - g0;
            let x = side(self.a, made_a, at, r.a, r.a_step, r.len);
            let y = side(self.b, made_b, at, r.b, r.b_step, r.len);
            let out = Out {
                data: &mut out[at..at + r.len],
                stream: false,
            };
            super::map(x, y, out, &self.test);
            true
        });
    }
}

/// Computes a unary step's kernel on every element of `x` (a step whose operands are both `x`).
pub fn unary<T: Element>(x: &Tensor, kernel: &dyn StepKernel<T>) -> Result<Tensor, EvalError> {
    let Some(data) = contiguous::<T>(x) else {
        return Err(EvalError::Types(x.element_type(), T::TYPE));
    };
    let shape = x.shape().to_vec();
    let plan = Plan::new(AutoBroadcast::Numpy, &shape, &shape).ok_or(EvalError::Internal(
        "a shape does not broadcast with itself",
    ))?;
    let step = Step {
        plan,
        x: Operand::Leaf(0),
        y: Operand::Leaf(0),
    };
    let out = fused(&[step], &[&data], None, &[kernel], None).map_err(|f| f.to_eval(&shape))?;
    crate::ops::kernel::tensor_from::<T>(&shape, out)
}

/// Computes `a op b` under `spec` with one step's kernel.
pub fn binary<T: Element>(
    spec: AutoBroadcast,
    a: &Tensor,
    b: &Tensor,
    kernel: &dyn StepKernel<T>,
    chain: Option<ChainFns<T>>,
    link: Option<Link>,
) -> Result<Tensor, EvalError> {
    let (Some(xa), Some(xb)) = (contiguous::<T>(a), contiguous::<T>(b)) else {
        return Err(EvalError::Types(a.element_type(), b.element_type()));
    };
    let plan = Plan::new(spec, a.shape(), b.shape()).ok_or_else(|| EvalError::Shapes {
        a: a.shape().to_vec(),
        b: b.shape().to_vec(),
        reason: "the shapes do not broadcast".into(),
    })?;
    let shape = plan.out.clone();
    let step = Step {
        plan,
        x: Operand::Leaf(0),
        y: Operand::Leaf(1),
    };
    let links = link.map(|l| [l]);
    let chain = chain.zip(links.as_ref()).map(|(f, l)| (f, &l[..]));
    let data =
        fused(&[step], &[&xa, &xb], None, &[kernel], chain).map_err(|f| f.to_eval(&shape))?;
    let array = ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(&shape), data).map_err(|_| {
        EvalError::Shapes {
            a: a.shape().to_vec(),
            b: b.shape().to_vec(),
            reason: "internal error: output size".into(),
        }
    })?;
    Ok(T::wrap(array))
}

#[cfg(test)]
mod tests {
    use std::mem::MaybeUninit;

    use half::{bf16, f16};

    use super::convert_into;
    use crate::num::Cast;

    /// `convert_into(src)` against Convert-1's rule for one value, bit for bit.
    fn agrees<A: Cast, T: Cast + Bytes>(src: &[A]) {
        let mut out = vec![MaybeUninit::<T>::uninit(); src.len()];
        convert_into(src, &mut out);
        for (k, (o, &x)) in out.iter().zip(src).enumerate() {
            // SAFETY: `convert_into` writes every element.
            let got = unsafe { o.assume_init() };
            let want = T::from_num(x.to_num());
            assert!(
                got.to_le_bytes_vec() == want.to_le_bytes_vec(),
                "{:?} -> {:?}, element {k}",
                A::TYPE,
                T::TYPE
            );
        }
    }

    trait Bytes {
        fn to_le_bytes_vec(&self) -> Vec<u8>;
    }
    macro_rules! bytes {
        ($($t:ty)*) => {$(impl Bytes for $t {
            fn to_le_bytes_vec(&self) -> Vec<u8> { self.to_le_bytes().to_vec() }
        })*};
    }
    bytes!(f32 f64 f16 bf16 i32 u8 i64);
    impl Bytes for bool {
        fn to_le_bytes_vec(&self) -> Vec<u8> {
            vec![*self as u8]
        }
    }

    /// `blend` over every pairing of runs and repeated values, for each element size, chooses
    /// the bits a branch would.
    fn blends_like_a_branch<T: Copy + Bytes>(values: &[T]) {
        use super::{Src, blend};
        let n = values.len();
        let cond: Vec<bool> = (0..n).map(|i| (i * 7) % 3 == 0).collect();
        let other: Vec<T> = values.iter().rev().copied().collect();
        fn srcs<T: Copy>(d: &[T]) -> [Src<'_, T>; 2] {
            [Src::Slice(d), Src::Repeat(d[d.len() / 2])]
        }
        for t in srcs(values) {
            for e in srcs(&other) {
                let mut out = vec![MaybeUninit::<T>::uninit(); n];
                blend(&cond, t, e, &mut out);
                for (i, o) in out.iter().enumerate() {
                    // SAFETY: `blend` writes every element.
                    let got = unsafe { o.assume_init() };
                    let want = if cond[i] { t.get(i) } else { e.get(i) };
                    assert_eq!(got.to_le_bytes_vec(), want.to_le_bytes_vec(), "element {i}");
                }
            }
        }
    }

    #[test]
    fn blend_chooses_bits() {
        let f: Vec<f32> = (0..1037)
            .map(|k| f32::from_bits((k as u32).wrapping_mul(2_654_435_761)))
            .collect();
        blends_like_a_branch(&f);
        blends_like_a_branch(&f.iter().map(|&x| x as f64).collect::<Vec<_>>());
        blends_like_a_branch(&f.iter().map(|&x| f16::from_f32(x)).collect::<Vec<_>>());
        blends_like_a_branch(&f.iter().map(|&x| x.to_bits() as u8).collect::<Vec<_>>());
        blends_like_a_branch(&f.iter().map(|&x| x.to_bits() & 1 == 0).collect::<Vec<_>>());
    }

    #[test]
    fn tile_conversions_are_convert_s() {
        // Every 65537th f32 pattern, and the edges: NaNs (signalling, payloads, negative),
        // infinities, zeros, subnormals, f16's largest and the first values that round to
        // infinity, halfway cases.
        let mut f: Vec<f32> = (0..=u32::MAX / 65537)
            .map(|k| f32::from_bits(k * 65537))
            .collect();
        f.extend(
            [
                0x7f80_0001u32,
                0x7fc0_1234,
                0xff80_0042,
                0x7fff_ffff,
                0x7f80_0000,
                0xff80_0000,
                0,
                0x8000_0000,
                1,
                0x8000_0001,
                0x0040_0000,
                0x477f_e000,
                0x477f_efff,
                0x477f_f000,
                0x3380_0000,
                0x3380_0001,
                0x3f80_1000,
                0x3f80_3000,
            ]
            .map(f32::from_bits),
        );
        f.extend([1e9, -1e9, 3e38, 255.5, -0.5, 127.9, 2.5e-8]);
        agrees::<f32, f16>(&f);
        agrees::<f32, bf16>(&f);
        agrees::<f32, i32>(&f);
        agrees::<f32, u8>(&f);
        agrees::<f32, f64>(&f);
        agrees::<f32, bool>(&f);
        let h: Vec<f16> = (0..=u16::MAX).map(f16::from_bits).collect();
        agrees::<f16, f32>(&h);
        agrees::<f16, bf16>(&h);
        let b: Vec<bf16> = (0..=u16::MAX).map(bf16::from_bits).collect();
        agrees::<bf16, f32>(&b);
        agrees::<bf16, f16>(&b);
        let d: Vec<f64> = f.iter().map(|&x| x as f64 * 1.000_000_1).collect();
        agrees::<f64, f16>(&d);
        agrees::<f64, f32>(&d);
        let i: Vec<i64> = (-70_000..70_000).map(|k| k * 131_071).collect();
        agrees::<i64, f32>(&i);
        agrees::<i64, u8>(&i);
        let u: Vec<u8> = (0..=255).collect();
        agrees::<u8, f32>(&u);
        agrees::<u8, f16>(&u);
        agrees::<bool, f32>(&[true, false, true]);
    }
}
