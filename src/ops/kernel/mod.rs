//! Fast elementwise execution, split by role:
//!
//! * this module: one run of an op ([`Src`], [`Out`]) and the loops over it that the compiler
//!   vectorises ([`map`], [`map_fold`]);
//! * [`simd`]: compiling a loop for the widest vector unit the CPU has ([`vectorised`]) and
//!   non-temporal stores;
//! * [`narrow`]: f16 and bf16 computed through f32 ([`Narrow`]); since f32 carries more than
//!   twice the bits of either format, one rounding of the f32 result gives the correctly
//!   rounded narrow result;
//! * [`fused`]: a group of elementwise steps computed tile by tile (a single op is a group of
//!   one, [`binary`]): operands are read in place, repeated, or gathered from the broadcast
//!   [`Plan`](crate::broadcast::Plan) into a tile buffer; the output is split into chunks that
//!   rayon computes in parallel above [`PARALLEL_MIN`] elements and written into an
//!   uninitialised buffer (no zero-fill pass). Each step is a [`StepKernel`]: an op's loop
//!   over one run, and over all the broadcast runs of a lone step, monomorphised per op and
//!   element type. A kernel that fails (integer division by zero) reports the offset of the
//!   first failing element; the error named is the first in row-major order, of the first step
//!   that fails;
//! * [`chain`]: linear chains of float steps evaluated in registers.
//!
//! Nothing here knows an op: ops pass their loops in, and chains apply a [`ChainOp`]: the
//! arithmetic family's [`ArithOp`](crate::ops::binary::ArithOp) or an exact unary op
//! ([`UnaryLink`](crate::ops::unary::UnaryLink)).

pub mod chain;
pub mod epilogue;
pub mod fused;
pub(crate) mod gemm;
pub(crate) mod gemv;
pub(crate) mod lanes;
pub mod narrow;
pub(crate) mod phases;
pub mod simd;

use std::mem::MaybeUninit;

pub use chain::{Chain, ChainFns, ChainOp, Link, Test};
pub use fused::{
    ArmPlan, Broadcasted, Choice, Compared, Converted, Failure, Operand, Part, Selected, Side,
    Step, StepKernel, TileSource, binary, fused, fused_from, fused_to_f16, selected_in_registers,
    sourced,
};
pub use narrow::{Narrow, through_f32};
pub use simd::vectorised;
pub(crate) use simd::{LINE, Line, stream_lines, vectorised_for};

use super::ElemError;
use crate::tensor::{Element, Tensor};

/// A row-major vector as a tensor of `shape` (an internal error if the sizes differ).
pub fn tensor_from<T: Element>(shape: &[usize], data: Vec<T>) -> Result<Tensor, super::EvalError> {
    ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(shape), data)
        .map(T::wrap)
        .map_err(|_| super::EvalError::Internal("output size"))
}

/// Outputs of at least this many elements are computed in parallel.
pub const PARALLEL_MIN: usize = 1 << 16;

/// `part(start, out[start..])` over consecutive parts of `out`: in parallel when it holds at
/// least [`PARALLEL_MIN`] elements and rayon has more than one thread (about four parts a
/// thread, each at least `PARALLEL_MIN / 4` elements and a multiple of `align`), else over all
/// of `out` at once. Returns the failure with the least `key`, as one pass would find first.
pub(crate) fn in_parts<O: Send, F: Send, K: Ord + Send>(
    out: &mut [O],
    align: usize,
    part: impl Fn(usize, &mut [O]) -> Option<F> + Sync + Send,
    key: impl Fn(&F) -> K + Sync + Send,
) -> Option<F> {
    use rayon::prelude::*;
    let n = out.len();
    if n >= PARALLEL_MIN && rayon::current_num_threads() > 1 {
        let size = n
            .div_ceil(rayon::current_num_threads() * 4)
            .max(PARALLEL_MIN / 4)
            .next_multiple_of(align);
        out.par_chunks_mut(size)
            .enumerate()
            .filter_map(|(i, o)| part(i * size, o))
            .min_by_key(key)
    } else {
        part(0, out)
    }
}

/// Elements per block for blockwise kernels (f16/bf16 widening, division checks): small enough
/// to stay in L1.
pub const BLOCK: usize = 1024;

/// One input of a run: contiguous elements, or one element repeated.
#[derive(Clone, Copy)]
pub enum Src<'a, T> {
    Slice(&'a [T]),
    Repeat(T),
}

impl<T: Copy> Src<'_, T> {
    /// The sub-run `at..at + len` (a repeated value stays as it is).
    #[inline(always)]
    pub fn sub(&self, at: usize, len: usize) -> Self {
        match *self {
            Src::Slice(s) => Src::Slice(&s[at..at + len]),
            Src::Repeat(v) => Src::Repeat(v),
        }
    }

    /// A run of `len` elements of `data` from `at`, or `data[at]` repeated.
    #[inline(always)]
    pub fn of_run(data: &[T], at: usize, stepping: bool, len: usize) -> Src<'_, T> {
        if stepping {
            Src::Slice(&data[at..at + len])
        } else {
            Src::Repeat(data[at])
        }
    }

    /// Elements `at..at + N` of the run.
    #[inline(always)]
    pub fn lanes<const N: usize>(&self, at: usize) -> [T; N] {
        match *self {
            Src::Slice(s) => {
                let s = &s[at..at + N];
                std::array::from_fn(|j| s[j])
            }
            Src::Repeat(v) => [v; N],
        }
    }

    /// Element `i` of the run.
    #[inline(always)]
    pub fn get(&self, i: usize) -> T {
        match *self {
            Src::Slice(s) => s[i],
            Src::Repeat(v) => v,
        }
    }
}

/// What a run loop returns: on failure, the offset of the first failing element and why (the
/// output is then partly written).
pub type RunResult = Result<(), (usize, ElemError)>;

/// Where a run loop writes: the run's output elements, and whether they go to memory with
/// non-temporal stores (for an output far larger than the caches that nothing reads right
/// after, so that its lines are not first read in to be overwritten).
pub struct Out<'a, T> {
    pub data: &'a mut [MaybeUninit<T>],
    pub stream: bool,
}

impl<'a, T> Out<'a, T> {
    /// Written with plain stores.
    pub fn new(data: &'a mut [MaybeUninit<T>]) -> Self {
        Out {
            data,
            stream: false,
        }
    }

    pub fn len(&self) -> usize {
        self.data.len()
    }

    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// Elements `at..at + len`, written the same way.
    pub fn part(&mut self, at: usize, len: usize) -> Out<'_, T> {
        Out {
            data: &mut self.data[at..at + len],
            stream: self.stream,
        }
    }
}

/// The four shapes of a run, each a plain loop the compiler vectorises — with AVX-512 or AVX2
/// when the CPU has them (see [`vectorised`]).
#[inline(always)]
pub fn map<T: Copy, O: Copy>(a: Src<'_, T>, b: Src<'_, T>, out: Out<'_, O>, f: impl Fn(T, T) -> O) {
    map_fold(a, b, out, (), |(), x, y| ((), f(x, y)), |(), ()| ())
}

/// [`map`] for a rule that can fail on an element: every element is computed in one loop the
/// compiler vectorises (a failing one as a placeholder) while a flag notes any failure; then
/// the first failing element is found. When the rule cannot fail, the flag is constant and the
/// loop is [`map`]'s.
#[inline(always)]
pub fn try_map<T: Copy, O: Copy + Default>(
    a: Src<'_, T>,
    b: Src<'_, T>,
    out: Out<'_, O>,
    f: impl Fn(T, T) -> Result<O, ElemError>,
) -> RunResult {
    let n = out.len();
    let failed = map_fold(
        a,
        b,
        out,
        false,
        |bad, x, y| match f(x, y) {
            Ok(v) => (bad, v),
            Err(_) => (true, O::default()),
        },
        |p, q| p | q,
    );
    if failed {
        first_error(a, b, n, f)
    } else {
        Ok(())
    }
}

/// The first element of a run on which `f` fails.
#[cold]
fn first_error<T: Copy, O>(
    a: Src<'_, T>,
    b: Src<'_, T>,
    n: usize,
    f: impl Fn(T, T) -> Result<O, ElemError>,
) -> RunResult {
    for i in 0..n {
        if let Err(e) = f(a.get(i), b.get(i)) {
            return Err((i, e));
        }
    }
    Ok(())
}

/// [`map`] that also folds a small state over the run, `f(state, a[i], b[i])` giving the next
/// state and `out[i]`; returns the last state. A state of plain values (flags, counts) stays in
/// registers, so the loop still vectorises. A streamed output is computed a cache line at a
/// time and each line stored with non-temporal stores (a part line at either end plainly).
///
/// The fold must split over parts of the run: folding a run from `init` is `merge` of folding
/// its two halves from `init` (so `init` is `merge`'s identity, as 0 is for `|`). Each
/// streamed line is folded from `init` and merged, so that no line waits for the state of the
/// one before it (a chain through every line's reduction across lanes made streamed integer
/// division 1.5x slower than its plain loads and stores allow).
#[inline(always)]
pub fn map_fold<T: Copy, O: Copy, S: Copy>(
    a: Src<'_, T>,
    b: Src<'_, T>,
    out: Out<'_, O>,
    init: S,
    f: impl Fn(S, T, T) -> (S, O),
    merge: impl Fn(S, S) -> S,
) -> S {
    let Out { data: out, stream } = out;
    vectorised_for(
        #[inline(always)]
        move |unit| {
            let size = std::mem::size_of::<O>();
            let skew = (out.as_ptr() as usize).wrapping_neg() % LINE;
            if !stream || size == 0 || !LINE.is_multiple_of(size) || !skew.is_multiple_of(size) {
                return fold_run(a, b, out, init, &f);
            }
            let (n, per) = (out.len(), LINE / size);
            let head = (skew / size).min(n);
            let mut s = fold_run(a.sub(0, head), b.sub(0, head), &mut out[..head], init, &f);
            let mut line = Line([MaybeUninit::uninit(); LINE]);
            let mut at = head;
            while at + per <= n {
                // SAFETY: `line` holds `per` elements' bytes and is aligned for any element
                // type of at most LINE bytes.
                let buf = unsafe {
                    std::slice::from_raw_parts_mut(line.0.as_mut_ptr() as *mut MaybeUninit<O>, per)
                };
                s = merge(s, fold_run(a.sub(at, per), b.sub(at, per), buf, init, &f));
                // SAFETY: the line was just filled; `out[at..]` starts on a line (`head`) and
                // holds at least one; `unit` is the one this closure runs under.
                unsafe {
                    stream_lines(
                        unit,
                        line.0.as_ptr() as *const u8,
                        out[at..].as_mut_ptr() as *mut u8,
                        1,
                    )
                };
                at += per;
            }
            let tail = fold_run(
                a.sub(at, n - at),
                b.sub(at, n - at),
                &mut out[at..],
                init,
                &f,
            );
            merge(s, tail)
        },
    )
}

/// The loop of [`map_fold`] over one run with plain stores, in its four shapes. `f` is called
/// directly in each (not through a helper closure), so that it is inlined everywhere and the
/// loops are compiled for the caller's vector unit.
#[inline(always)]
fn fold_run<T: Copy, O: Copy, S: Copy>(
    a: Src<'_, T>,
    b: Src<'_, T>,
    out: &mut [MaybeUninit<O>],
    mut s: S,
    f: &impl Fn(S, T, T) -> (S, O),
) -> S {
    match (a, b) {
        (Src::Slice(a), Src::Slice(b)) => {
            for ((o, &x), &y) in out.iter_mut().zip(a).zip(b) {
                let v;
                (s, v) = f(s, x, y);
                o.write(v);
            }
        }
        (Src::Slice(a), Src::Repeat(y)) => {
            for (o, &x) in out.iter_mut().zip(a) {
                let v;
                (s, v) = f(s, x, y);
                o.write(v);
            }
        }
        (Src::Repeat(x), Src::Slice(b)) => {
            for (o, &y) in out.iter_mut().zip(b) {
                let v;
                (s, v) = f(s, x, y);
                o.write(v);
            }
        }
        (Src::Repeat(x), Src::Repeat(y)) => {
            for o in out.iter_mut() {
                let v;
                (s, v) = f(s, x, y);
                o.write(v);
            }
        }
    }
    s
}

/// A tensor's elements as one contiguous row-major slice (copied only if not already so).
pub fn contiguous<T: Element>(t: &Tensor) -> Option<std::borrow::Cow<'_, [T]>> {
    let v = T::view(t)?;
    Some(match v.to_slice() {
        Some(s) => std::borrow::Cow::Borrowed(s),
        None => std::borrow::Cow::Owned(v.iter().copied().collect()),
    })
}

/// A value's elements in row-major order (`None` if it is not of type `T`): a tensor's (copied
/// only if laid out otherwise), or a Const's, read where it lies in the weights file.
pub fn value_data<'a, T: Element>(
    v: &'a crate::tensor::Value<'_>,
) -> Option<std::borrow::Cow<'a, [T]>> {
    match v {
        crate::tensor::Value::Tensor(t) => contiguous::<T>(t),
        crate::tensor::Value::Mapped(m) => {
            (m.ty == T::TYPE).then(|| crate::tensor::le_slice::<T>(m.bytes))
        }
    }
}

/// The initialised prefix `..len` of a buffer a step has filled.
///
/// # Safety
/// The first `len` elements must have been written.
pub(crate) unsafe fn filled<T>(buf: &[MaybeUninit<T>], len: usize) -> &[T] {
    // SAFETY: the caller guarantees the elements are initialised; same layout.
    unsafe { std::slice::from_raw_parts(buf.as_ptr() as *const T, len) }
}

/// The most scratch (bytes) a thread keeps between calls of [`with_scratch`]; a larger
/// buffer is freed after its call.
const KEPT_SCRATCH: usize = 4 << 20;

/// `f` over `len` elements of this thread's `f32` scratch, which the next call on the thread
/// reuses (up to [`KEPT_SCRATCH`]): the convolutions of a model pack their columns in the
/// same memory, warm in the cache, rather than in fresh pages zeroed at each call. The
/// elements hold whatever an earlier call left (zeros when the buffer grows).
pub(crate) fn with_scratch<R>(len: usize, f: impl FnOnce(&mut [f32]) -> R) -> R {
    thread_local! {
        static KEPT: std::cell::Cell<Vec<f32>> = const { std::cell::Cell::new(Vec::new()) };
    }
    // Taken out while `f` runs: a nested call (none today) would get a buffer of its own.
    let mut buf = KEPT.take();
    if buf.len() < len {
        buf = vec![0.0; len];
    }
    let r = f(&mut buf[..len]);
    if buf.len().saturating_mul(4) <= KEPT_SCRATCH {
        KEPT.set(buf);
    }
    r
}

#[cfg(test)]
mod tests {
    use half::f16;

    use super::chain::{Chain, ChainOp, Link};
    use super::simd::{stream_copy, stream_fence};
    use super::*;
    use crate::broadcast::{AutoBroadcast, Plan};
    use crate::num::Float;
    use crate::ops::binary::ArithOp;
    use crate::ops::binary::arith::{Divide, Subtract};

    const SUB: Link = Link {
        op: ChainOp::Arith(ArithOp::Subtract(Subtract)),
        other_is_a: false,
    };
    const SUB_FROM: Link = Link {
        op: ChainOp::Arith(ArithOp::Subtract(Subtract)),
        other_is_a: true,
    };
    const DIV: Link = Link {
        op: ChainOp::Arith(ArithOp::Divide(Divide { pythondiv: true })),
        other_is_a: false,
    };
    const DIV_INTO: Link = Link {
        op: ChainOp::Arith(ArithOp::Divide(Divide { pythondiv: true })),
        other_is_a: true,
    };

    /// Runs `body` on `out[at..at + len]` of a buffer of `MaybeUninit` (so that every start
    /// alignment within a line occurs), after filling the buffer with a marker.
    fn written<O: Copy>(
        marker: O,
        at: usize,
        len: usize,
        mut body: impl FnMut(Out<'_, O>),
    ) -> [Vec<O>; 2] {
        [false, true].map(|stream| {
            let mut buf = vec![MaybeUninit::new(marker); at + len + 40];
            body(Out {
                data: &mut buf[at..at + len],
                stream,
            });
            stream_fence();
            // SAFETY: filled with the marker, then overwritten with values.
            buf.iter().map(|v| unsafe { v.assume_init() }).collect()
        })
    }

    const LENS: [usize; 10] = [0, 1, 7, 15, 16, 17, 63, 64, 65, 517];

    /// A streamed `map_fold` writes and folds exactly what the plain one does, whatever the
    /// start alignment, length and run shape, and nothing outside its output.
    fn map_fold_streams_exactly<O: Copy + PartialEq + std::fmt::Debug + From<u8>>() {
        let a: Vec<u8> = (0..700u32).map(|i| (i * 37 % 251) as u8).collect();
        let b: Vec<u8> = (0..700u32).map(|i| (i * 11 % 13 + 1) as u8).collect();
        for at in 0..70 {
            for len in LENS {
                for (x, y) in [
                    (Src::Slice(&a[3..3 + len]), Src::Slice(&b[..len])),
                    (Src::Slice(&a[..len]), Src::Repeat(9)),
                    (Src::Repeat(200), Src::Slice(&b[5..5 + len])),
                    (Src::Repeat(7), Src::Repeat(3)),
                ] {
                    let mut folds = Vec::new();
                    let [plain, streamed] = written(O::from(0xAA), at, len, |out| {
                        // A count and a bit set of what was seen: each splits over parts.
                        let fold = |(n, seen): (u32, u64), p: u8, q: u8| {
                            let n = n.wrapping_add(p as u32 * 3 + q as u32);
                            ((n, seen | 1 << (p % 64)), O::from(p.wrapping_sub(q)))
                        };
                        let merge =
                            |(m, s): (u32, u64), (n, t): (u32, u64)| (m.wrapping_add(n), s | t);
                        folds.push(map_fold(x, y, out, (0, 0), fold, merge))
                    });
                    assert_eq!(plain, streamed, "at {at}, len {len}");
                    assert_eq!(folds[0], folds[1], "at {at}, len {len}");
                }
            }
        }
    }

    #[test]
    fn streamed_map_fold_matches_plain_stores() {
        map_fold_streams_exactly::<u8>();
        map_fold_streams_exactly::<u16>();
        map_fold_streams_exactly::<f32>();
        map_fold_streams_exactly::<f64>();
        map_fold_streams_exactly::<u128>();
    }

    #[test]
    fn streamed_chains_and_f16_match_plain_stores() {
        let v: Vec<f32> = (0..700).map(|i| i as f32 * 0.37 - 50.0).collect();
        let h: Vec<f16> = v.iter().map(|&x| f16::from_f32(x)).collect();
        let links = [(SUB, Src::Slice(&v[1..])), (DIV_INTO, Src::Repeat(3.0))];
        for at in 0..70 {
            for len in LENS {
                let [plain, streamed] = written(f32::NAN, at, len, |out| {
                    let links = links.map(|(l, s)| (l, s.sub(0, len)));
                    (f32::CHAIN.unwrap().tile)(Src::Slice(&v[2..2 + len]), &links, out)
                });
                let bits = |x: &[f32]| x.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(&plain), bits(&streamed), "chain at {at}, len {len}");
                let [plain, streamed] = written(f16::NAN, at, len, |out| {
                    through_f32(
                        Src::Slice(&h[..len]),
                        Src::Slice(&h[9..9 + len]),
                        out,
                        |x, y| x / y,
                    )
                });
                let bits = |x: &[f16]| x.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(&plain), bits(&streamed), "f16 at {at}, len {len}");
            }
        }
    }

    /// The run-by-run chain (one link, every run under one dispatch) gives each element what
    /// the plain element-by-element operation gives, for runs shorter and longer than a block
    /// of [`LANES`], any start within the output and any start alignment, streamed or not.
    fn runs_match_elementwise<T: Float + Chain + PartialEq + std::fmt::Debug>(
        of: impl Fn(usize) -> T,
        marker: T,
    ) {
        let shapes: [(&[usize], &[usize]); 6] = [
            (&[5, 64], &[5, 1]),
            (&[3, 4, 70], &[3, 1, 70]),
            (&[4, 100], &[1]),
            (&[2, 1, 130], &[2, 3, 1]),
            (&[6, 3], &[6, 1]),
            (&[2, 1000], &[2, 1000]),
        ];
        for (sa, sb) in shapes {
            let plan = Plan::new(AutoBroadcast::Numpy, sa, sb).unwrap();
            let a: Vec<T> = (0..sa.iter().product()).map(&of).collect();
            let b: Vec<T> = (0..sb.iter().product()).map(|i| of(i * 7 + 3)).collect();
            let n = plan.len();
            for link in [SUB, SUB_FROM, DIV, DIV_INTO] {
                let mut want = vec![marker; n];
                plan.runs(0, n, |r| {
                    for i in 0..r.len {
                        let x = a[if r.a_step { r.a + i } else { r.a }];
                        let y = b[if r.b_step { r.b + i } else { r.b }];
                        want[r.start + i] = match (link.op, link.other_is_a) {
                            (ChainOp::Arith(ArithOp::Subtract(_)), false) => x - y,
                            (ChainOp::Arith(ArithOp::Subtract(_)), true) => y - x,
                            (_, false) => x / y,
                            (_, true) => y / x,
                        };
                    }
                    true
                });
                for start in [0, 1, n / 3] {
                    for at in [0, 3, 16] {
                        let len = n - start;
                        let [plain, streamed] = written(marker, at, len, |out| {
                            (T::CHAIN.unwrap().runs)(&plan, start, link, &a, &b, out)
                        });
                        for got in [plain, streamed] {
                            assert_eq!(got[..at], vec![marker; at][..]);
                            assert_eq!(got[at..at + len], want[start..], "{sa:?} {sb:?} {link:?}");
                            assert_eq!(got[at + len..], vec![marker; 40][..]);
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn runs_in_registers_match_elementwise() {
        runs_match_elementwise(|i| (i % 97) as f32 * 0.37 - 11.5, f32::MAX);
        runs_match_elementwise(|i| (i % 89) as f64 * 1.3 - 40.25, f64::MAX);
    }

    #[test]
    fn stream_copy_copies_exactly() {
        let src: Vec<u16> = (0..600).collect();
        for at in 0..70 {
            for len in LENS.into_iter().filter(|&l| l <= 600) {
                let [copied, _] =
                    written(u16::MAX, at, len, |out| stream_copy(&src[..len], out.data));
                let mut want = vec![u16::MAX; at + len + 40];
                want[at..at + len].copy_from_slice(&src[..len]);
                assert_eq!(copied, want, "at {at}, len {len}");
            }
        }
    }
}
