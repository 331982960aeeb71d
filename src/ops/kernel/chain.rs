//! Linear chains of float steps evaluated in registers: the running value stays in registers
//! through every step, and each step reads only its other operand. (In place, over rows
//! already in the L1 cache, a chain goes a step at a time instead: [`InPlaceFn`].)

use std::mem::MaybeUninit;

use half::{bf16, f16};

use super::fused::{Operand, Step};
use super::simd::{LINE, Simd, stream_lines, vectorised_for};
use super::{Out, Src};
use crate::broadcast::{Cursor, Plan};
use crate::num::Float;
use crate::ops::binary::{ArithOp, ArithVisitor};
use crate::ops::logic::{Rule, with_test};
use crate::ops::unary::UnaryLink;
use crate::tensor::Element;

/// The op of one step of a linear chain: a binary op of the arithmetic family, or a unary op
/// (Relu, Abs, Clamp, Floor…, HSwish), which has no other operand.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ChainOp {
    Arith(ArithOp),
    Unary(UnaryLink),
}

impl ChainOp {
    /// Calls `v` with the op's float rule (a unary op's ignores its second operand); the
    /// choice of op is made here, once, and `v`'s loop is compiled for each op.
    #[inline(always)]
    pub fn visit<F: Float, V: ArithVisitor<F>>(self, v: V) -> V::Out {
        match self {
            ChainOp::Arith(op) => op.visit(v),
            ChainOp::Unary(op) => op.visit(v),
        }
    }
}

/// How one step of a linear chain combines the running value `acc` with its other operand `v`:
/// `acc op v`, or `v op acc` when the other operand is the step's input A. A unary step has
/// no other operand: it applies its op to `acc`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Link {
    pub op: ChainOp,
    /// Whether the step's other operand is its input A (the running value is B).
    pub other_is_a: bool,
}

impl Link {
    /// Whether the step's other operand is its input A (the running value is B).
    pub fn other_is_a(self) -> bool {
        self.other_is_a
    }

    /// Whether the step is a unary op (it reads no other operand).
    pub fn unary(self) -> bool {
        matches!(self.op, ChainOp::Unary(_))
    }
}

/// A chain evaluated in registers: `out[i] = links applied in order to first[i]`.
pub type ChainFn<T> = fn(Src<'_, T>, &[(Link, Src<'_, T>)], Out<'_, T>);

/// A lone step evaluated in registers over broadcast runs: `runs(plan, start, link, a, b, out)`
/// writes output elements `start..start + out.len()` of `a link b`, each run of `plan` read in
/// place or repeated. The whole loop over the runs is compiled for one vector unit, so a run
/// costs no dispatch.
pub type RunsFn<T> = fn(&Plan, usize, Link, &[T], &[T], Out<'_, T>);

/// Where a chain reads one operand as it walks a chunk of the output, without gathering it.
pub enum Feed<'a, T> {
    /// A leaf of the output's size, read at the output's own offsets.
    Same(&'a [T]),
    /// One value, repeated.
    One(T),
    /// A broadcast leaf, read where its cursor (on the step's plan) says.
    Runs(Cursor<'a>, &'a [T]),
}

impl<'a, T: Copy> Feed<'a, T> {
    /// Elements left in the current run of a broadcast operand (`None` for the others).
    #[inline(always)]
    fn left(&self) -> Option<usize> {
        match self {
            Feed::Runs(c, _) => Some(c.left()),
            Feed::Same(_) | Feed::One(_) => None,
        }
    }

    /// Moves a broadcast operand's cursor `len` elements on.
    #[inline(always)]
    fn advance(&mut self, len: usize) {
        if let Feed::Runs(c, _) = self {
            c.advance(len);
        }
    }

    /// The operand for output elements `g..g + len`, within the current run.
    #[inline(always)]
    fn src(&self, g: usize, len: usize) -> Src<'a, T> {
        match *self {
            Feed::Same(s) => Src::Slice(&s[g..g + len]),
            Feed::One(v) => Src::Repeat(v),
            Feed::Runs(ref c, leaf) => Src::of_run(leaf, c.offset(), c.stepping(), len),
        }
    }
}

/// A chain evaluated in registers over output elements `start..start + out.len()` with its
/// broadcast operands read in place: `feeds[0]` is the first operand, `feeds[k + 1]` step
/// `k`'s other one, each cursor placed at `start`. The output is cut wherever a broadcast
/// operand's run ends, and each stretch computed as a tile; the whole loop is compiled for one
/// vector unit.
pub type SegmentsFn<T> = fn(&mut [Feed<'_, T>], &[Link], usize, Out<'_, T>);

/// A [`SegmentsFn`] whose output is rounded to f16 as each block leaves the registers (a chain
/// ending in a Convert to f16).
pub type SegmentsF16Fn<T> = fn(&mut [Feed<'_, T>], &[Link], usize, Out<'_, f16>);

/// A chain evaluated where its running value lies, one step at a time over the whole run (for
/// runs in the L1 cache: a convolution's epilogue): `data[i] = links applied in order to
/// data[i]`, each link's operand a run as long as `data`.
pub type InPlaceFn<T> = fn(&mut [T], &[(Link, Src<'_, T>)]);

/// The forms of an element type's chains: held in registers over tiles, over a lone step's
/// broadcast runs and over the stretches where every operand is one run; and in place, a
/// step at a time.
#[derive(Clone, Copy)]
pub struct ChainFns<T> {
    pub tile: ChainFn<T>,
    pub runs: RunsFn<T>,
    pub segments: SegmentsFn<T>,
    pub in_place: InPlaceFn<T>,
    /// [`segments`](Self::segments) with the output rounded to f16 (f32 only; an f64 chain
    /// ending in a Convert to f16 goes tile by tile).
    pub segments_f16: Option<SegmentsF16Fn<T>>,
    /// A Select whose operands are chains, chosen between in registers.
    pub select: SelectFn<T>,
}

/// One operand of a Select evaluated in registers: a chain's feeds (its first operand, then
/// each link's other one, as [`SegmentsFn`] takes them) and links; a tensor read as it is
/// is a chain without links.
pub struct Arm<'a, T> {
    pub feeds: Vec<Feed<'a, T>>,
    pub links: &'a [Link],
}

/// How a Select evaluated in registers chooses, element by element: by a comparison of its
/// first two [`Arm`]s, or by a mask of `boolean` elements.
pub enum Pick<'a> {
    Test(Test),
    Mask(Feed<'a, bool>),
}

/// The rule of a comparison (Equal, Less…), never one of the logical or bitwise rules that
/// share [`Rule`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Test(Rule);

impl Test {
    /// `rule` if it is a comparison.
    pub fn new(rule: Rule) -> Option<Test> {
        rule.is_test().then_some(Test(rule))
    }
}

/// A Select evaluated in registers over output elements `start..start + out.len()`:
/// `out[i] = if pick[i] { then[i] } else { other[i] }`, where `then` and `other` are the
/// last two of `arms` and a [`Pick::Test`] compares the first two (`arms[0][i] rule
/// arms[1][i]`). Every arm's chain is taken through its steps in registers, and the output
/// is cut wherever a broadcast operand's run ends, as [`SegmentsFn`] cuts it. Every output
/// element is written when there are 4 arms with a test or 2 with a mask, each with a
/// first operand; with anything else, none is.
pub type SelectFn<T> = fn(&mut Pick<'_>, &mut [Arm<'_, T>], usize, Out<'_, T>);

/// Element types whose chains of arithmetic steps are evaluated in registers: those whose
/// ops are single IEEE operations that cannot fail and need no rounding between steps (f32,
/// f64). Integer division can fail and f16/bf16 round after each step, so their groups go
/// tile by tile, step by step.
pub trait Chain: Element {
    const CHAIN: Option<ChainFns<Self>> = None;
}

macro_rules! no_chain {
    ($($t:ty)*) => {$( impl Chain for $t {} )*};
}
no_chain!(i8 i16 i32 i64 u8 u16 u32 u64 f16 bf16);

impl Chain for f32 {
    const CHAIN: Option<ChainFns<f32>> = Some(ChainFns {
        tile: chain_dispatch,
        runs: runs_dispatch,
        segments: segments_dispatch,
        in_place: in_place_dispatch,
        segments_f16: Some(segments_f16_dispatch),
        select: select_dispatch,
    });
}

impl Chain for f64 {
    const CHAIN: Option<ChainFns<f64>> = Some(ChainFns {
        tile: chain_dispatch,
        runs: runs_dispatch,
        segments: segments_dispatch,
        in_place: in_place_dispatch,
        segments_f16: None,
        select: select_dispatch,
    });
}

/// [`chain`] compiled for the widest vector unit this CPU has.
fn chain_dispatch<T: Float>(first: Src<'_, T>, links: &[(Link, Src<'_, T>)], out: Out<'_, T>) {
    vectorised_for(
        #[inline(always)]
        |unit| {
            let stream = out.stream.then_some(unit);
            if links.iter().any(|(l, _)| l.unary()) {
                chain::<T, _, true>(first, links, out.data, stream, AsIs)
            } else {
                chain::<T, _, false>(first, links, out.data, stream, AsIs)
            }
        },
    )
}

/// One link over the broadcast runs of `plan` (a [`RunsFn`]), the loop over the runs and each
/// run's loop compiled together for the widest vector unit this CPU has, with the op chosen
/// once for the whole loop: calling [`chain`] per run, which chooses it per run and block,
/// took 3.6-3.7 ms for `[64,64,64,64] - [64,1,64,1]` at one thread against 2.9 ms (the C
/// floor: 2.8-3.0 ms).
fn runs_dispatch<T: Float>(
    plan: &Plan,
    start: usize,
    link: Link,
    a: &[T],
    b: &[T],
    out: Out<'_, T>,
) {
    let Out { data: out, stream } = out;
    // The loop over the runs, with the op known (no choice of link per run).
    #[inline(always)]
    fn over<T: Float>(
        plan: &Plan,
        start: usize,
        (a, b): (&[T], &[T]),
        out: &mut [MaybeUninit<T>],
        stream: Option<Simd>,
        op: impl Fn(T, T) -> T + Copy,
    ) {
        plan.runs_inline(
            start,
            start + out.len(),
            #[inline(always)]
            |r| {
                let x = Src::of_run(a, r.a, r.a_step, r.len);
                let y = Src::of_run(b, r.b, r.b_step, r.len);
                let at = r.start - start;
                apply(x, y, &mut out[at..at + r.len], stream, op);
                true
            },
        )
    }
    /// [`over`] with the link's op, chosen once.
    struct Over<'p, 'o, T> {
        plan: &'p Plan,
        start: usize,
        a: &'p [T],
        b: &'p [T],
        out: &'o mut [MaybeUninit<T>],
        stream: Option<Simd>,
        swap: bool,
    }
    impl<T: Float> ArithVisitor<T> for Over<'_, '_, T> {
        type Out = ();
        #[inline(always)]
        fn visit<O: Fn(T, T) -> T + Copy>(self, op: O) {
            let Over {
                plan,
                start,
                a,
                b,
                out,
                stream,
                swap,
            } = self;
            if swap {
                over(plan, start, (a, b), out, stream, move |x, y| op(y, x))
            } else {
                over(plan, start, (a, b), out, stream, op)
            }
        }
    }
    vectorised_for(
        #[inline(always)]
        |unit| {
            link.op.visit(Over {
                plan,
                start,
                a,
                b,
                out,
                stream: stream.then_some(unit),
                swap: link.other_is_a,
            })
        },
    )
}

/// One op over one run, [`LANES`] elements at a time in registers, stored as [`chain`] stores.
#[inline(always)]
fn apply<T: Float>(
    x: Src<'_, T>,
    y: Src<'_, T>,
    out: &mut [MaybeUninit<T>],
    stream: Option<Simd>,
    op: impl Fn(T, T) -> T,
) {
    let n = out.len();
    let stream = blocks_stream(out, stream);
    let mut at = 0;
    while at + LANES <= n {
        let (p, q): ([T; LANES], [T; LANES]) = (x.lanes(at), y.lanes(at));
        // On a line of its own, as [`chain`]'s lanes (see [`Aligned`]).
        let v = Aligned::<[T; LANES]>(std::array::from_fn(|j| op(p[j], q[j])));
        // SAFETY: `stream` is from `blocks_stream`, and blocks start every LANES elements.
        unsafe { store_block(&mut out[at..at + LANES], &v.0, stream) };
        at += LANES;
    }
    for (i, o) in out.iter_mut().enumerate().skip(at) {
        o.write(op(x.get(i), y.get(i)));
    }
}

/// [`chain`] over the stretches of the output along which every operand is one run (a
/// [`SegmentsFn`]), compiled with the loop over them for the widest vector unit this CPU has.
fn segments_dispatch<T: Float>(
    feeds: &mut [Feed<'_, T>],
    links: &[Link],
    start: usize,
    out: Out<'_, T>,
) {
    segments_for(feeds, links, start, out, |_| AsIs)
}

/// [`segments_dispatch`] for f32 with the output rounded to f16 (a [`SegmentsF16Fn`]).
fn segments_f16_dispatch(
    feeds: &mut [Feed<'_, f32>],
    links: &[Link],
    start: usize,
    out: Out<'_, f16>,
) {
    segments_for(feeds, links, start, out, |unit| ToF16 { unit })
}

/// [`segments`] compiled for the widest vector unit this CPU has, its blocks written as `lay`
/// (given the unit) says.
#[inline(always)]
fn segments_for<T: Float, L: Lay<T>>(
    feeds: &mut [Feed<'_, T>],
    links: &[Link],
    start: usize,
    out: Out<'_, L::E>,
    lay: impl FnOnce(Simd) -> L,
) {
    let Out { data: out, stream } = out;
    if feeds.is_empty() {
        return;
    }
    let unary = links.iter().any(|l| l.unary());
    vectorised_for(
        #[inline(always)]
        |unit| {
            let (lay, stream) = (lay(unit), stream.then_some(unit));
            if unary {
                segments::<T, L, true>(feeds, links, start, out, stream, lay)
            } else {
                segments::<T, L, false>(feeds, links, start, out, stream, lay)
            }
        },
    )
}

/// How a chain's blocks leave the registers: as they are, or rounded to another type.
trait Lay<T>: Copy {
    type E: Copy;
    /// Writes block `v` to `o`, as [`store_block`] does.
    ///
    /// # Safety
    /// As [`store_block`]'s.
    unsafe fn block(self, o: &mut [MaybeUninit<Self::E>], v: &[T; LANES], stream: Option<Simd>);
    /// One element, as a block's are written.
    fn one(self, v: T) -> Self::E;
}

/// Blocks written as they are.
#[derive(Clone, Copy)]
struct AsIs;

impl<T: Copy> Lay<T> for AsIs {
    type E = T;
    #[inline(always)]
    unsafe fn block(self, o: &mut [MaybeUninit<T>], v: &[T; LANES], stream: Option<Simd>) {
        // SAFETY: the caller's promise.
        unsafe { store_block(o, v, stream) }
    }
    #[inline(always)]
    fn one(self, v: T) -> T {
        v
    }
}

/// f32 blocks rounded to f16 to nearest even, as Convert-1 rounds: with AVX-512's conversion
/// when `unit` is AVX-512, else by [`narrow_f16`](super::narrow::narrow_f16) (F16C, or one by
/// one), which gives the same bits.
#[derive(Clone, Copy)]
struct ToF16 {
    unit: Simd,
}

impl Lay<f32> for ToF16 {
    type E = f16;
    #[inline(always)]
    unsafe fn block(self, o: &mut [MaybeUninit<f16>], v: &[f32; LANES], stream: Option<Simd>) {
        let mut h = Aligned([MaybeUninit::<f16>::uninit(); LANES]);
        #[cfg(target_arch = "x86_64")]
        if self.unit == Simd::Avx512 {
            use std::arch::x86_64::*;
            for k in 0..LANES / 16 {
                // SAFETY: `16 * k + 16 <= LANES`, within `v` and `h` (unaligned loads and
                // stores); under `Simd::Avx512` this code is compiled for AVX-512F
                // (`vectorised_for`).
                unsafe {
                    let x = _mm512_loadu_ps(v.as_ptr().add(16 * k));
                    let r = _mm512_cvtps_ph::<{ _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC }>(x);
                    _mm256_storeu_si256(h.0.as_mut_ptr().add(16 * k) as *mut __m256i, r);
                }
            }
        } else {
            super::narrow::narrow_f16(v, &mut h.0);
        }
        #[cfg(not(target_arch = "x86_64"))]
        super::narrow::narrow_f16(v, &mut h.0);
        // SAFETY: every element of `h` was written (`MaybeUninit<f16>` has f16's layout); the
        // rest is the caller's promise.
        unsafe { store_block(o, &*(h.0.as_ptr() as *const [f16; LANES]), stream) }
    }
    #[inline(always)]
    fn one(self, v: f32) -> f16 {
        f16::from_f32(v)
    }
}

/// [`segments_dispatch`]'s loop, with or without unary steps (see [`chain`]).
#[inline(always)]
fn segments<T: Float, L: Lay<T>, const UNARY: bool>(
    feeds: &mut [Feed<'_, T>],
    links: &[Link],
    start: usize,
    out: &mut [MaybeUninit<L::E>],
    stream: Option<Simd>,
    lay: L,
) {
    let mut ops = Vec::with_capacity(links.len());
    let n = out.len();
    let mut pos = 0;
    while pos < n {
        let mut len = n - pos;
        for f in feeds.iter() {
            if let Feed::Runs(c, _) = f {
                len = len.min(c.left());
            }
        }
        let g = start + pos;
        ops.clear();
        for (&link, f) in links.iter().zip(&feeds[1..]) {
            ops.push((link, f.src(g, len)));
        }
        let o = &mut out[pos..pos + len];
        chain::<T, L, UNARY>(feeds[0].src(g, len), &ops, o, stream, lay);
        for f in feeds.iter_mut() {
            if let Feed::Runs(c, _) = f {
                c.advance(len);
            }
        }
        pos += len;
    }
}

/// The vector unit whose non-temporal stores write `out` block by block ([`store_block`]):
/// `stream`, if blocks of [`LANES`] are whole cache lines and `out` starts on one.
#[inline(always)]
fn blocks_stream<T>(out: &[MaybeUninit<T>], stream: Option<Simd>) -> Option<Simd> {
    let block = std::mem::size_of::<[T; LANES]>();
    stream.filter(|_| block.is_multiple_of(LINE) && (out.as_ptr() as usize).is_multiple_of(LINE))
}

/// Writes a block computed in registers: with `stream`'s non-temporal stores, else plainly.
///
/// # Safety
/// With `stream = Some(unit)`, `o` must start on a cache line, blocks must be whole lines (as
/// [`blocks_stream`] checks) and the caller must run under `unit` ([`vectorised_for`]).
#[inline(always)]
unsafe fn store_block<T: Copy>(o: &mut [MaybeUninit<T>], v: &[T; LANES], stream: Option<Simd>) {
    match stream {
        // SAFETY: `o` holds the block's bytes (its length is checked by the zip below for the
        // plain stores, and is LANES here: `o` is a block); the rest is the caller's promise.
        Some(unit) if o.len() == LANES => unsafe {
            stream_lines(
                unit,
                v.as_ptr() as *const u8,
                o.as_mut_ptr() as *mut u8,
                std::mem::size_of::<[T; LANES]>() / LINE,
            )
        },
        // A whole block as one copy of known size (vector moves): the element loop was
        // compiled as 64 scalar stores.
        // SAFETY: `o` holds LANES elements; `MaybeUninit<T>` has `T`'s layout.
        _ if o.len() == LANES => unsafe {
            std::ptr::copy_nonoverlapping(v.as_ptr(), o.as_mut_ptr() as *mut T, LANES)
        },
        _ => {
            for (o, &v) in o.iter_mut().zip(v) {
                o.write(v);
            }
        }
    }
}

/// Lanes kept on the stack between a chain's steps, on a cache line of their own: unaligned,
/// a 64-byte vector stored and loaded again straddles two lines, and the load waits for the
/// store to reach the cache (on the AMD EPYC of the fifth speed run, AVX-512 `a + b` took 6.4
/// ms at one thread where AVX2 took 4.6; the chain of 8, 30.6 ms against 14.0).
#[repr(C, align(64))]
#[derive(Clone, Copy)]
pub(crate) struct Aligned<A>(pub(crate) A);

/// Elements a chain keeps in registers at once: four AVX-512 registers of f32, eight of f64.
/// Several independent registers keep the divider busy: one register's steps depend on each
/// other, and a division's latency is several times its throughput.
pub(crate) const LANES: usize = 64;

/// Evaluates a linear chain over one run, [`LANES`] elements at a time: the running value
/// stays in registers through every step, and each step reads only its other operand. The
/// operations are those of the layers, in the same order, so the results are bit-identical
/// to computing the steps one after the other. With `stream = Some(unit)` each block of
/// [`LANES`] goes from the registers to memory with `unit`'s non-temporal stores.
///
/// `UNARY` says whether `links` may hold unary steps: a chain of binary steps only is compiled
/// without their arms (with them, chain of 8 took 7.1 ms at one thread against 6.7).
#[inline(always)]
fn chain<T: Float, L: Lay<T>, const UNARY: bool>(
    first: Src<'_, T>,
    links: &[(Link, Src<'_, T>)],
    out: &mut [MaybeUninit<L::E>],
    stream: Option<Simd>,
    lay: L,
) {
    let n = out.len();
    let stream = blocks_stream(out, stream);
    let mut at = 0;
    while at + LANES <= n {
        let mut acc = Aligned::<[T; LANES]>(first.lanes(at));
        for &(link, v) in links {
            step::<T, LANES, UNARY>(&mut acc.0, link, v, at);
        }
        // SAFETY: `stream` is from `blocks_stream`, and blocks start every LANES elements.
        unsafe { lay.block(&mut out[at..at + LANES], &acc.0, stream) };
        at += LANES;
    }
    for (i, o) in out.iter_mut().enumerate().skip(at) {
        let mut acc = [first.get(i)];
        for &(link, v) in links {
            step::<T, 1, UNARY>(&mut acc, link, v, i);
        }
        o.write(lay.one(acc[0]));
    }
}

/// One step over the lanes, with the link's op chosen once.
struct Lanes<'a, T, const N: usize> {
    acc: &'a mut [T; N],
    v: Aligned<[T; N]>,
    swap: bool,
}
impl<T: Float, const N: usize> ArithVisitor<T> for Lanes<'_, T, N> {
    type Out = ();
    #[inline(always)]
    fn visit<O: Fn(T, T) -> T + Copy>(self, op: O) {
        let Lanes { acc, v, swap } = self;
        let v = &v.0;
        if swap {
            (0..N).for_each(|j| acc[j] = op(v[j], acc[j]));
        } else {
            (0..N).for_each(|j| acc[j] = op(acc[j], v[j]));
        }
    }
}
/// One step of a chain over `N` lanes from `at`.
#[inline(always)]
fn step<T: Float, const N: usize, const UNARY: bool>(
    acc: &mut [T; N],
    link: Link,
    v: Src<'_, T>,
    at: usize,
) {
    let v = Aligned(v.lanes(at));
    let lanes = Lanes {
        acc,
        v,
        swap: link.other_is_a,
    };
    match link.op {
        ChainOp::Arith(op) => op.visit(lanes),
        ChainOp::Unary(op) if UNARY => op.visit(lanes),
        // Not reached: the caller passes UNARY = true for a chain with unary steps.
        ChainOp::Unary(_) => {}
    }
}
/// [`in_place`] compiled for the widest vector unit this CPU has (an [`InPlaceFn`]).
fn in_place_dispatch<T: Float>(data: &mut [T], links: &[(Link, Src<'_, T>)]) {
    vectorised_for(
        #[inline(always)]
        |_| in_place(data, links),
    )
}

/// [`SelectFn`] compiled for the widest vector unit this CPU has.
fn select_dispatch<T: Float>(
    pick: &mut Pick<'_>,
    arms: &mut [Arm<'_, T>],
    start: usize,
    out: Out<'_, T>,
) {
    let Out { data: out, stream } = out;
    let unary = arms.iter().any(|a| a.links.iter().any(|l| l.unary()));
    vectorised_for(
        #[inline(always)]
        |unit| {
            let stream = stream.then_some(unit);
            if unary {
                select_segments::<T, true>(pick, arms, start, out, stream)
            } else {
                select_segments::<T, false>(pick, arms, start, out, stream)
            }
        },
    )
}

/// [`select_dispatch`]'s loop over the stretches along which every operand is one run.
#[inline(always)]
fn select_segments<T: Float, const UNARY: bool>(
    pick: &mut Pick<'_>,
    arms: &mut [Arm<'_, T>],
    start: usize,
    out: &mut [MaybeUninit<T>],
    stream: Option<Simd>,
) {
    // Then and else, after the two arms a test compares.
    let k = arms.len();
    let wanted = match pick {
        Pick::Test(_) => 4,
        Pick::Mask(_) => 2,
    };
    if k != wanted || arms.iter().any(|a| a.feeds.is_empty()) {
        return;
    }
    let mut ops: Vec<Vec<(Link, Src<'_, T>)>> = arms
        .iter()
        .map(|a| Vec::with_capacity(a.links.len()))
        .collect();
    let n = out.len();
    let mut pos = 0;
    while pos < n {
        let mut len = n - pos;
        let mask = match pick {
            Pick::Mask(m) => Some(m),
            Pick::Test(_) => None,
        };
        let feeds = arms.iter().flat_map(|a| a.feeds.iter());
        for left in feeds
            .filter_map(Feed::left)
            .chain(mask.and_then(|m| m.left()))
        {
            len = len.min(left);
        }
        let g = start + pos;
        let mut firsts = [Src::Repeat(T::default()); 4];
        for ((arm, first), ops) in arms.iter().zip(&mut firsts).zip(&mut ops) {
            *first = arm.feeds[0].src(g, len);
            ops.clear();
            for (&link, f) in arm.links.iter().zip(&arm.feeds[1..]) {
                ops.push((link, f.src(g, len)));
            }
        }
        let how = match pick {
            Pick::Test(t) => How::Test(*t),
            Pick::Mask(m) => How::Mask(m.src(g, len)),
        };
        let o = &mut out[pos..pos + len];
        select_run::<T, UNARY>(how, (&firsts[..k], &ops), o, stream);
        for f in arms.iter_mut().flat_map(|a| a.feeds.iter_mut()) {
            f.advance(len);
        }
        if let Pick::Mask(m) = pick {
            m.advance(len);
        }
        pos += len;
    }
}

/// A Select's choice over one run: a comparison of the first two arms, or a mask's run.
#[derive(Clone, Copy)]
enum How<'a> {
    Test(Test),
    Mask(Src<'a, bool>),
}

/// The arms of a Select over one run: each one's first operand, and its links with their
/// operands.
type Runs<'r, 'a, T> = (&'r [Src<'a, T>], &'r [Vec<(Link, Src<'a, T>)>]);

/// A Select over one run, [`LANES`] elements at a time: each arm computed in registers, then
/// chosen between lane by lane. Stored as [`chain`] stores.
#[inline(always)]
fn select_run<T: Float, const UNARY: bool>(
    how: How<'_>,
    arms: Runs<'_, '_, T>,
    out: &mut [MaybeUninit<T>],
    stream: Option<Simd>,
) {
    let n = out.len();
    let stream = blocks_stream(out, stream);
    let mut blocks = Blocks::<T, LANES>::new(arms.0);
    let mut at = 0;
    while at + LANES <= n {
        let v = Aligned(choose::<T, LANES, UNARY>(how, arms, &mut blocks, at));
        // SAFETY: `stream` is from `blocks_stream`, and blocks start every LANES elements.
        unsafe { store_block(&mut out[at..at + LANES], &v.0, stream) };
        at += LANES;
    }
    let mut one = Blocks::<T, 1>::new(arms.0);
    for (i, o) in out.iter_mut().enumerate().skip(at) {
        o.write(choose::<T, 1, UNARY>(how, arms, &mut one, i)[0]);
    }
}

/// Room for a Select's arms over `N` lanes: each chain's running value, and each repeated
/// operand laid out as lanes once for the run (so that an arm that is one operand is read
/// where it lies, with no copy per block).
struct Blocks<T, const N: usize> {
    acc: [Aligned<[T; N]>; 4],
    repeated: [Aligned<[T; N]>; 4],
}

impl<T: Float, const N: usize> Blocks<T, N> {
    #[inline(always)]
    fn new(firsts: &[Src<'_, T>]) -> Self {
        let mut repeated = [Aligned([T::default(); N]); 4];
        for (r, first) in repeated.iter_mut().zip(firsts) {
            if let Src::Repeat(v) = *first {
                r.0 = [v; N];
            }
        }
        Blocks {
            acc: [Aligned([T::default(); N]); 4],
            repeated,
        }
    }
}

/// Elements `at..at + N` of a Select: its chains taken through their steps (in `blocks`), then
/// `then` or `else` lane by lane.
#[inline(always)]
fn choose<T: Float, const N: usize, const UNARY: bool>(
    how: How<'_>,
    (firsts, ops): Runs<'_, '_, T>,
    blocks: &mut Blocks<T, N>,
    at: usize,
) -> [T; N] {
    for ((acc, first), ops) in blocks.acc.iter_mut().zip(firsts).zip(ops) {
        if !ops.is_empty() {
            acc.0 = first.lanes(at);
            for &(link, s) in ops {
                step::<T, N, UNARY>(&mut acc.0, link, s, at);
            }
        }
    }
    let blocks = &*blocks;
    // Arm `i` over the lanes: a chain's value, or its operand where it lies.
    let arm = |i: usize| -> &[T; N] {
        let (acc, repeated) = (&blocks.acc[i].0, &blocks.repeated[i].0);
        match (ops[i].is_empty(), firsts[i]) {
            (true, Src::Slice(s)) => s[at..].first_chunk().unwrap_or(acc),
            (true, Src::Repeat(_)) => repeated,
            (false, _) => acc,
        }
    };
    let k = firsts.len();
    let (t, e) = (arm(k - 2), arm(k - 1));
    let pick = |c: [bool; N]| pick(&c, t, e);
    match how {
        How::Mask(m) => pick(m.lanes(at)),
        How::Test(Test(rule)) => {
            let (x, y) = (arm(0), arm(1));
            with_test!(rule, T, |test| pick(std::array::from_fn(|j| test(x[j], y[j]))),
                // Not reached: a `Test` holds a comparison's rule.
                _ => *e)
        }
    }
}

/// `t[j]` where `c[j]`, else `e[j]`, chosen by the bits (a mask and two ands): a plain choice
/// between the two was compiled as a choice between their addresses and a gather of the
/// chosen ones (`Select(a > 0, a, a·0.1)` 12.9 ms at one thread, against 11.0 tile by tile).
#[inline(always)]
fn pick<T: Float, const N: usize>(c: &[bool; N], t: &[T; N], e: &[T; N]) -> [T; N] {
    macro_rules! by_bits {
        ($u:ty) => {{
            // SAFETY: `T` has `$u`'s size (matched below), and f32 and f64 have no padding
            // and take any bits.
            let (t, e) = unsafe {
                (
                    &*(t as *const [T; N] as *const [$u; N]),
                    &*(e as *const [T; N] as *const [$u; N]),
                )
            };
            let r: [$u; N] = std::array::from_fn(|j| {
                let m = (c[j] as $u).wrapping_neg();
                (t[j] & m) | (e[j] & !m)
            });
            // SAFETY: as above.
            unsafe { std::mem::transmute_copy::<[$u; N], [T; N]>(&r) }
        }};
    }
    match std::mem::size_of::<T>() {
        4 => by_bits!(u32),
        8 => by_bits!(u64),
        _ => std::array::from_fn(|j| if c[j] { t[j] } else { e[j] }),
    }
}

/// [`chain`] over `data` in place, one step at a time: each step's op is chosen once and then
/// runs as one loop over the whole of `data`. The data is a convolution's output rows, still
/// in the L1 cache and often short (a 2×96 plane): a pass per step costs a load and a store
/// per vector, while the blocks of [`chain`] choose every step's op again for each block of
/// [`LANES`], which cost more than the steps on such rows. Each element meets the same ops
/// with the same operands in the same order either way: the same bits.
#[inline(always)]
fn in_place<T: Float>(data: &mut [T], links: &[(Link, Src<'_, T>)]) {
    for &(link, v) in links {
        match link.op {
            ChainOp::Unary(op) => op.visit(OverUnary(&mut *data)),
            ChainOp::Arith(op) => op.visit(Over {
                data: &mut *data,
                v,
                swap: link.other_is_a,
            }),
        }
    }
}

/// A unary step of [`in_place`] over all of `data`, with its op chosen (one loop per op, where
/// [`Over`] would compile four).
struct OverUnary<'d, T>(&'d mut [T]);

impl<T: Float> ArithVisitor<T> for OverUnary<'_, T> {
    type Out = ();
    #[inline(always)]
    fn visit<O: Fn(T, T) -> T + Copy>(self, op: O) {
        self.0.iter_mut().for_each(|d| *d = op(*d, *d));
    }
}

/// A binary step of [`in_place`] over all of `data`, with its op chosen:
/// `data[i] = data[i] op v[i]`, or `v[i] op data[i]` with `swap`.
struct Over<'d, 's, T> {
    data: &'d mut [T],
    v: Src<'s, T>,
    swap: bool,
}

impl<T: Float> ArithVisitor<T> for Over<'_, '_, T> {
    type Out = ();
    #[inline(always)]
    fn visit<O: Fn(T, T) -> T + Copy>(self, op: O) {
        let Over { data, v, swap } = self;
        match (v, swap) {
            (Src::Repeat(v), false) => data.iter_mut().for_each(|d| *d = op(*d, v)),
            (Src::Repeat(v), true) => data.iter_mut().for_each(|d| *d = op(v, *d)),
            (Src::Slice(v), false) => {
                let v = &v[..data.len()];
                data.iter_mut().zip(v).for_each(|(d, &v)| *d = op(*d, v));
            }
            (Src::Slice(v), true) => {
                let v = &v[..data.len()];
                data.iter_mut().zip(v).for_each(|(d, &v)| *d = op(v, *d));
            }
        }
    }
}

/// The operands a linear chain reads: step 0's A (its first operand, the running value's
/// start), then each step's other operand (A or B as its link says; `None` for a unary step,
/// which reads none), as `(step, (first, operand))`.
pub(crate) fn chain_feeds<'s>(
    steps: &'s [Step],
    links: &'s [Link],
) -> impl Iterator<Item = (&'s Step, Option<(bool, Operand)>)> {
    let head = steps.first().map(|s| (s, Some((true, s.x))));
    head.into_iter()
        .chain(steps.iter().zip(links).map(|(s, link)| {
            let a = link.other_is_a();
            (s, (!link.unary()).then_some((a, if a { s.x } else { s.y })))
        }))
}
