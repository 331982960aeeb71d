//! Fast elementwise execution shared by the binary ops.
//!
//! An op supplies a loop over one run of the output (contiguous inputs, or one input
//! repeated), written so the compiler vectorises it ([`map`], compiled per vector unit and
//! chosen at run time by [`vectorised`]). [`fused`] computes a group of such steps tile by
//! tile (a single op is a group of one, [`binary`]): operands are read in place, repeated,
//! or gathered from the broadcast [`Plan`] into a tile buffer; the output is split into chunks
//! that rayon computes in parallel above [`PARALLEL_MIN`] elements and written into an
//! uninitialised buffer (no zero-fill pass). A kernel that fails (integer division by zero)
//! reports the offset of the first failing element; the error named is the first in row-major
//! order, of the first step that fails.
//!
//! f16 and bf16 are computed through f32 ([`Narrow`]); since f32 carries more than twice the
//! bits of either format, one rounding of the f32 result gives the correctly rounded narrow
//! result.

use std::mem::MaybeUninit;

use half::{bf16, f16};
use rayon::prelude::*;

use super::{ElemError, EvalError};
use crate::broadcast::{AutoBroadcast, Cursor, Plan};
use crate::tensor::{Element, Tensor, unravel};

/// Outputs of at least this many elements are computed in parallel.
pub const PARALLEL_MIN: usize = 1 << 16;

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

/// One cache line of output, assembled before it is streamed.
#[repr(C, align(64))]
struct Line([MaybeUninit<u8>; LINE]);

/// Runs `f` compiled for the widest vector unit this CPU has: AVX-512, AVX2 or the baseline
/// (detected at run time; the default x86-64 target only has SSE2). `f` is vectorised for the
/// unit only when the compiler inlines it into the unit's copy: it does so on its own for a
/// small closure, and a larger one needs `#[inline(always)]` (else it runs as baseline code).
#[inline(always)]
pub fn vectorised<R>(f: impl FnOnce() -> R) -> R {
    vectorised_for(
        #[inline(always)]
        |_| f(),
    )
}

/// [`vectorised`], telling `f` which unit it is compiled for (so that it can use that unit's
/// instructions, as [`stream_lines`] does).
#[inline(always)]
pub(crate) fn vectorised_for<R>(f: impl FnOnce(Simd) -> R) -> R {
    #[cfg(target_arch = "x86_64")]
    {
        match simd() {
            // SAFETY: the features were detected.
            Simd::Avx512 => unsafe {
                with_avx512(
                    #[inline(always)]
                    || f(Simd::Avx512),
                )
            },
            // SAFETY: as above.
            Simd::Avx2 => unsafe {
                with_avx2(
                    #[inline(always)]
                    || f(Simd::Avx2),
                )
            },
            Simd::None => f(Simd::None),
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    f(Simd::None)
}

/// Vector units, narrowest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Simd {
    /// The baseline (SSE2 on x86-64).
    None,
    Avx2,
    Avx512,
}

/// Bytes in a cache line: the unit of non-temporal stores.
const LINE: usize = 64;

/// Copies `lines` whole cache lines from `src` to `dst` (64-byte aligned) with non-temporal
/// stores as wide as `unit` has: the lines go to memory without being read into the caches
/// first. Only to be called inside [`vectorised_for`], with the unit it passed (elsewhere the
/// wide stores would not be inlined). [`stream_fence`] must follow before the data is read by
/// another thread. Without x86-64, a plain copy.
///
/// # Safety
/// `src` must be readable and `dst` writable for `lines * LINE` bytes, `dst` 64-byte aligned,
/// and `unit`'s features present.
#[inline(always)]
unsafe fn stream_lines(unit: Simd, src: *const u8, dst: *mut u8, lines: usize) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: the caller guarantees the bounds, the alignment and the features.
    unsafe {
        use std::arch::x86_64::*;
        for k in 0..lines {
            let (s, d) = (src.add(k * LINE), dst.add(k * LINE));
            match unit {
                Simd::Avx512 => {
                    _mm512_stream_si512(d as *mut _, _mm512_loadu_si512(s as *const _));
                }
                Simd::Avx2 => {
                    for h in 0..2 {
                        let v = _mm256_loadu_si256(s.add(32 * h) as *const __m256i);
                        _mm256_stream_si256(d.add(32 * h) as *mut __m256i, v);
                    }
                }
                Simd::None => {
                    for q in 0..4 {
                        let v = _mm_loadu_si128(s.add(16 * q) as *const __m128i);
                        _mm_stream_si128(d.add(16 * q) as *mut __m128i, v);
                    }
                }
            }
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    // SAFETY: as above; the ranges are distinct allocations.
    unsafe {
        let _ = unit;
        std::ptr::copy_nonoverlapping(src, dst, lines * LINE)
    };
}

/// The widest vector unit the kernels use on this CPU, detected once. The environment
/// variable `OVIR_SIMD` (`avx512`, `avx2` or `none`) caps it, so that every path can be tested
/// and compared on one machine; it never enables a unit the CPU lacks.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn simd() -> Simd {
    static LEVEL: std::sync::OnceLock<Simd> = std::sync::OnceLock::new();
    *LEVEL.get_or_init(|| {
        use std::arch::is_x86_feature_detected as has;
        let found = if has!("avx512f") && has!("avx512vl") && has!("avx512bw") && has!("avx512dq") {
            Simd::Avx512
        } else if has!("avx2") && has!("fma") {
            Simd::Avx2
        } else {
            Simd::None
        };
        let cap = match std::env::var("OVIR_SIMD").as_deref() {
            Ok("none") => Simd::None,
            Ok("avx2") => Simd::Avx2,
            _ => Simd::Avx512,
        };
        found.min(cap)
    })
}

#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "avx512f,avx512vl,avx512bw,avx512dq,avx2,fma")]
unsafe fn with_avx512<R>(f: impl FnOnce() -> R) -> R {
    f()
}

#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "avx2,fma")]
unsafe fn with_avx2<R>(f: impl FnOnce() -> R) -> R {
    f()
}

/// A narrow float computed through f32: `out[i] = round(f(widen(a[i]), widen(b[i])))`.
pub trait Narrow: Copy + Send + Sync {
    fn through_f32(
        a: Src<'_, Self>,
        b: Src<'_, Self>,
        out: Out<'_, Self>,
        f: impl Fn(f32, f32) -> f32 + Copy,
    );
}

/// Whether the CPU converts f16 in hardware (F16C with AVX), unless `OVIR_SIMD=none`.
#[cfg(target_arch = "x86_64")]
fn has_f16c() -> bool {
    simd() != Simd::None
        && std::arch::is_x86_feature_detected!("f16c")
        && std::arch::is_x86_feature_detected!("avx")
}

/// f16: with AVX-512, in registers, 16 lanes at a time; otherwise widened to f32 blocks
/// (F16C, 8 lanes, when the CPU has it), computed, and rounded back (into a block buffer
/// copied out with non-temporal stores when the output is streamed).
impl Narrow for f16 {
    #[inline(always)]
    fn through_f32(
        a: Src<'_, f16>,
        b: Src<'_, f16>,
        out: Out<'_, f16>,
        f: impl Fn(f32, f32) -> f32 + Copy,
    ) {
        #[cfg(target_arch = "x86_64")]
        if simd() == Simd::Avx512 && has_f16c() {
            // SAFETY: the features were detected.
            unsafe { f16c::map_avx512(a, b, out, f) };
            return;
        }
        let Out { data: out, stream } = out;
        let mut wa = [0f32; BLOCK];
        let mut wb = [0f32; BLOCK];
        let mut wo = [MaybeUninit::<f32>::uninit(); BLOCK];
        let mut narrowed = [MaybeUninit::<f16>::uninit(); BLOCK];
        let mut at = 0;
        while at < out.len() {
            let len = BLOCK.min(out.len() - at);
            let xa = widen_f16_block(a, at, len, &mut wa);
            let xb = widen_f16_block(b, at, len, &mut wb);
            map(xa, xb, Out::new(&mut wo[..len]), f);
            // SAFETY: `map` wrote all `len` elements of `wo`.
            let done = unsafe { filled(&wo, len) };
            if stream {
                narrow_f16(done, &mut narrowed[..len]);
                // SAFETY: `narrow_f16` wrote all `len` elements.
                stream_copy(unsafe { filled(&narrowed, len) }, &mut out[at..at + len]);
            } else {
                narrow_f16(done, &mut out[at..at + len]);
            }
            at += len;
        }
    }
}

/// Elements `at..at + len` of `s` as f32 (widened into `buf` unless repeated).
#[inline(always)]
fn widen_f16_block<'b>(s: Src<'_, f16>, at: usize, len: usize, buf: &'b mut [f32]) -> Src<'b, f32> {
    match s {
        Src::Slice(s) => {
            let (src, dst) = (&s[at..at + len], &mut buf[..len]);
            #[cfg(target_arch = "x86_64")]
            if has_f16c() {
                // SAFETY: the features were detected.
                unsafe { f16c::widen(src, dst) };
                return Src::Slice(dst);
            }
            for (d, v) in dst.iter_mut().zip(src) {
                *d = v.to_f32();
            }
            Src::Slice(dst)
        }
        Src::Repeat(v) => Src::Repeat(v.to_f32()),
    }
}

fn narrow_f16(src: &[f32], dst: &mut [MaybeUninit<f16>]) {
    #[cfg(target_arch = "x86_64")]
    if has_f16c() {
        // SAFETY: the features were detected.
        unsafe { f16c::narrow(src, dst) };
        return;
    }
    for (d, &s) in dst.iter_mut().zip(src) {
        d.write(f16::from_f32(s));
    }
}

/// An f32 rounded to bf16, to nearest even; NaN stays NaN (quietened).
#[inline(always)]
fn bf16_from_f32(s: f32) -> bf16 {
    let bits = s.to_bits();
    let rounded = if s.is_nan() {
        (bits >> 16) | 0x40
    } else {
        (bits.wrapping_add(0x7FFF + ((bits >> 16) & 1))) >> 16
    };
    bf16::from_bits(rounded as u16)
}

#[inline(always)]
fn bf16_to_f32(v: bf16) -> f32 {
    f32::from_bits((v.to_bits() as u32) << 16)
}

/// bf16: both conversions are bit operations, which vectorise with the rest of the loop.
impl Narrow for bf16 {
    #[inline(always)]
    fn through_f32(
        a: Src<'_, bf16>,
        b: Src<'_, bf16>,
        out: Out<'_, bf16>,
        f: impl Fn(f32, f32) -> f32 + Copy,
    ) {
        map(a, b, out, |x, y| {
            bf16_from_f32(f(bf16_to_f32(x), bf16_to_f32(y)))
        });
    }
}

#[cfg(target_arch = "x86_64")]
mod f16c {
    use std::arch::x86_64::*;
    use std::mem::MaybeUninit;

    use half::f16;

    #[target_feature(enable = "avx,f16c")]
    pub unsafe fn widen(src: &[f16], dst: &mut [f32]) {
        let n = src.len().min(dst.len());
        let mut i = 0;
        while i + 8 <= n {
            // SAFETY: i + 8 <= n, within both slices; unaligned loads and stores.
            unsafe {
                let h = _mm_loadu_si128(src.as_ptr().add(i) as *const __m128i);
                _mm256_storeu_ps(dst.as_mut_ptr().add(i), _mm256_cvtph_ps(h));
            }
            i += 8;
        }
        for k in i..n {
            dst[k] = src[k].to_f32();
        }
    }

    /// One pass: 16 f16 widened per load, `f` on the lanes, rounded back to nearest even.
    /// A streamed output is written with non-temporal stores from its first 32-byte boundary
    /// (the elements before it one by one).
    #[target_feature(enable = "avx512f,avx512vl,avx512bw,avx512dq,avx2,fma,f16c")]
    pub unsafe fn map_avx512(
        a: super::Src<'_, f16>,
        b: super::Src<'_, f16>,
        out: super::Out<'_, f16>,
        f: impl Fn(f32, f32) -> f32 + Copy,
    ) {
        use super::Src;
        let super::Out { data: out, stream } = out;
        let n = out.len();
        let one = |k: usize| f16::from_f32(f(a.get(k).to_f32(), b.get(k).to_f32()));
        let head = if stream {
            ((out.as_ptr() as usize).wrapping_neg() % 32 / 2).min(n)
        } else {
            0
        };
        for (k, o) in out[..head].iter_mut().enumerate() {
            o.write(one(k));
        }
        #[inline(always)]
        unsafe fn lanes(s: Src<'_, f16>, i: usize) -> [f32; 16] {
            // SAFETY: the caller keeps `i + 16` within the run; the target features are those
            // of `map_avx512`, which alone calls this.
            unsafe {
                match s {
                    Src::Slice(s) => std::mem::transmute::<__m512, [f32; 16]>(_mm512_cvtph_ps(
                        _mm256_loadu_si256(s.as_ptr().add(i) as *const __m256i),
                    )),
                    Src::Repeat(v) => [v.to_f32(); 16],
                }
            }
        }
        let mut i = head;
        while i + 16 <= n {
            // SAFETY: i + 16 <= n, within every slice of the run; unaligned loads and stores,
            // or when streaming, stores to 32-byte boundaries (`head`).
            unsafe {
                let (x, y) = (lanes(a, i), lanes(b, i));
                let r: [f32; 16] = std::array::from_fn(|k| f(x[k], y[k]));
                let h = _mm512_cvtps_ph::<{ _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC }>(
                    std::mem::transmute::<[f32; 16], __m512>(r),
                );
                let d = out.as_mut_ptr().add(i) as *mut __m256i;
                if stream {
                    _mm256_stream_si256(d, h);
                } else {
                    _mm256_storeu_si256(d, h);
                }
            }
            i += 16;
        }
        for (k, o) in out.iter_mut().enumerate().skip(i) {
            o.write(one(k));
        }
    }

    #[target_feature(enable = "avx,f16c")]
    pub unsafe fn narrow(src: &[f32], dst: &mut [MaybeUninit<f16>]) {
        let n = src.len().min(dst.len());
        let mut i = 0;
        while i + 8 <= n {
            // SAFETY: as above; rounding to nearest even.
            unsafe {
                let f = _mm256_loadu_ps(src.as_ptr().add(i));
                let h = _mm256_cvtps_ph::<_MM_FROUND_TO_NEAREST_INT>(f);
                _mm_storeu_si128(dst.as_mut_ptr().add(i) as *mut __m128i, h);
            }
            i += 8;
        }
        for k in i..n {
            dst[k].write(f16::from_f32(src[k]));
        }
    }
}

/// Runs an f32 operation on a narrow float type (see [`Narrow`]).
#[inline(always)]
pub fn through_f32<T: Narrow>(
    a: Src<'_, T>,
    b: Src<'_, T>,
    out: Out<'_, T>,
    f: impl Fn(f32, f32) -> f32 + Copy,
) {
    T::through_f32(a, b, out, f)
}

/// A tensor's elements as one contiguous row-major slice (copied only if not already so).
pub fn contiguous<T: Element>(t: &Tensor) -> Option<std::borrow::Cow<'_, [T]>> {
    let v = T::view(t)?;
    Some(match v.to_slice() {
        Some(s) => std::borrow::Cow::Borrowed(s),
        None => std::borrow::Cow::Owned(v.iter().copied().collect()),
    })
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
        }
    }
}

/// How one step of a linear chain combines the running value `acc` with its other operand `v`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Link {
    /// `acc - v`
    Sub,
    /// `v - acc`
    SubFrom,
    /// `acc / v`
    Div,
    /// `v / acc`
    DivInto,
}

impl Link {
    /// Whether the step's other operand is its input A (the running value is B).
    pub fn other_is_a(self) -> bool {
        matches!(self, Link::SubFrom | Link::DivInto)
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

/// The register-held forms of an element type's chains: over tiles, over a lone step's
/// broadcast runs, and over the stretches where every operand is one run.
#[derive(Clone, Copy)]
pub struct ChainFns<T> {
    pub tile: ChainFn<T>,
    pub runs: RunsFn<T>,
    pub segments: SegmentsFn<T>,
}

/// Element types whose chains of Subtract/Divide are evaluated in registers: those whose two
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
    });
}

impl Chain for f64 {
    const CHAIN: Option<ChainFns<f64>> = Some(ChainFns {
        tile: chain_dispatch,
        runs: runs_dispatch,
        segments: segments_dispatch,
    });
}

/// What [`chain`] computes with.
pub trait ChainOps: Copy + std::ops::Sub<Output = Self> + std::ops::Div<Output = Self> {}
impl ChainOps for f32 {}
impl ChainOps for f64 {}

/// [`chain`] compiled for the widest vector unit this CPU has.
fn chain_dispatch<T: ChainOps>(first: Src<'_, T>, links: &[(Link, Src<'_, T>)], out: Out<'_, T>) {
    vectorised_for(
        #[inline(always)]
        |unit| chain(first, links, out.data, out.stream.then_some(unit)),
    )
}

/// One link over the broadcast runs of `plan` (a [`RunsFn`]), the loop over the runs and each
/// run's loop compiled together for the widest vector unit this CPU has, with the op chosen
/// once for the whole loop: calling [`chain`] per run, which chooses it per run and block,
/// took 3.6-3.7 ms for `[64,64,64,64] - [64,1,64,1]` at one thread against 2.9 ms (the C
/// floor: 2.8-3.0 ms).
fn runs_dispatch<T: ChainOps>(
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
    fn over<T: ChainOps>(
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
    vectorised_for(
        #[inline(always)]
        |unit| {
            let s = stream.then_some(unit);
            match link {
                Link::Sub => over(plan, start, (a, b), out, s, |x, y| x - y),
                Link::SubFrom => over(plan, start, (a, b), out, s, |x, y| y - x),
                Link::Div => over(plan, start, (a, b), out, s, |x, y| x / y),
                Link::DivInto => over(plan, start, (a, b), out, s, |x, y| y / x),
            }
        },
    )
}

/// One op over one run, [`LANES`] elements at a time in registers, stored as [`chain`] stores.
#[inline(always)]
fn apply<T: ChainOps>(
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
        let v: [T; LANES] = std::array::from_fn(|j| op(p[j], q[j]));
        // SAFETY: `stream` is from `blocks_stream`, and blocks start every LANES elements.
        unsafe { store_block(&mut out[at..at + LANES], &v, stream) };
        at += LANES;
    }
    for (i, o) in out.iter_mut().enumerate().skip(at) {
        o.write(op(x.get(i), y.get(i)));
    }
}

/// [`chain`] over the stretches of the output along which every operand is one run (a
/// [`SegmentsFn`]), compiled with the loop over them for the widest vector unit this CPU has.
fn segments_dispatch<T: ChainOps>(
    feeds: &mut [Feed<'_, T>],
    links: &[Link],
    start: usize,
    out: Out<'_, T>,
) {
    let Out { data: out, stream } = out;
    if feeds.is_empty() {
        return;
    }
    let mut ops = Vec::with_capacity(links.len());
    vectorised_for(
        #[inline(always)]
        |unit| {
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
                chain(
                    feeds[0].src(g, len),
                    &ops,
                    &mut out[pos..pos + len],
                    stream.then_some(unit),
                );
                for f in feeds.iter_mut() {
                    if let Feed::Runs(c, _) = f {
                        c.advance(len);
                    }
                }
                pos += len;
            }
        },
    )
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
        _ => {
            for (o, &v) in o.iter_mut().zip(v) {
                o.write(v);
            }
        }
    }
}

/// Elements a chain keeps in registers at once: four AVX-512 registers of f32, eight of f64.
/// Several independent registers keep the divider busy: one register's steps depend on each
/// other, and a division's latency is several times its throughput.
const LANES: usize = 64;

/// Evaluates a linear chain over one run, [`LANES`] elements at a time: the running value
/// stays in registers through every step, and each step reads only its other operand. The
/// operations are those of the layers, in the same order, so the results are bit-identical
/// to computing the steps one after the other. With `stream = Some(unit)` each block of
/// [`LANES`] goes from the registers to memory with `unit`'s non-temporal stores.
#[inline(always)]
fn chain<T: ChainOps>(
    first: Src<'_, T>,
    links: &[(Link, Src<'_, T>)],
    out: &mut [MaybeUninit<T>],
    stream: Option<Simd>,
) {
    #[inline(always)]
    fn step<T: ChainOps, const N: usize>(acc: &mut [T; N], link: Link, v: Src<'_, T>, at: usize) {
        let v: [T; N] = v.lanes(at);
        match link {
            Link::Sub => (0..N).for_each(|j| acc[j] = acc[j] - v[j]),
            Link::SubFrom => (0..N).for_each(|j| acc[j] = v[j] - acc[j]),
            Link::Div => (0..N).for_each(|j| acc[j] = acc[j] / v[j]),
            Link::DivInto => (0..N).for_each(|j| acc[j] = v[j] / acc[j]),
        }
    }
    let n = out.len();
    let stream = blocks_stream(out, stream);
    let mut at = 0;
    while at + LANES <= n {
        let mut acc: [T; LANES] = first.lanes(at);
        for &(link, v) in links {
            step(&mut acc, link, v, at);
        }
        // SAFETY: `stream` is from `blocks_stream`, and blocks start every LANES elements.
        unsafe { store_block(&mut out[at..at + LANES], &acc, stream) };
        at += LANES;
    }
    for (i, o) in out.iter_mut().enumerate().skip(at) {
        let mut acc = [first.get(i)];
        for &(link, v) in links {
            step(&mut acc, link, v, i);
        }
        o.write(acc[0]);
    }
}

/// Elements per tile when a group computes intermediates: each step's tile of a chain stays in
/// L1/L2 between steps.
pub const TILE: usize = 512;

/// Computes a fused group of elementwise steps in one pass over the output, tile by tile:
/// `run(k, x, y, out)` is step `k`'s loop over one run. Intermediates live only in per-thread
/// tile buffers; the last step's output is the result.
///
/// With `reuse = Some((l, data))` the result is written over `data`, leaf `l`'s elements
/// (which must have the output's shape; `leaves[l]` is not read): each tile of that leaf is
/// copied aside before any step writes the tile, so the leaf is computed with in place.
///
/// A lone step whose broadcast runs are at least [`RUN_MIN`] long skips the gathering: the
/// kernel is called once per run, with each operand in place or repeated; or, for a chain
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
    run: impl Fn(usize, Src<'_, T>, Src<'_, T>, Out<'_, T>) -> RunResult + Sync,
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
    // Whether some step reads a leaf that is neither full-size (read in place) nor one value
    // (repeated): such a leaf is gathered tile by tile.
    let gathers = steps.iter().flat_map(|s| [s.x, s.y]).any(|o| match o {
        Operand::Leaf(l) => Some(l) != alias && leaves[l].len() != n && leaves[l].len() != 1,
        Operand::Step(_) => false,
    });
    // A lone step whose broadcast operand changes only every `RUN_MIN` or more elements is
    // computed run by run, each operand read where it lies (in place or one value repeated):
    // gathering it would cost a pass over each tile.
    let by_runs = steps.len() == 1
        && gathers
        && alias.is_none()
        && last.plan.dims().last().is_some_and(|&d| d >= RUN_MIN);
    // A chain whose broadcast operands change only every `RUN_MIN` or more elements (as in
    // `(x - mean) / std` over rows) reads them in place, run by run, rather than gathering
    // them into tile buffers (which cost as much as the chain itself).
    let by_segments = gathers
        && alias.is_none()
        && chain.is_some_and(|(_, links)| {
            chain_feeds(steps, links).all(|(step, (_, side))| match side {
                Operand::Leaf(l) => {
                    leaves[l].len() == n
                        || leaves[l].len() == 1
                        || step.plan.dims().last().is_some_and(|&d| d >= RUN_MIN)
                }
                Operand::Step(_) => false,
            })
        });
    // An output far larger than the caches, and not read just before (as a reused leaf is),
    // bypasses them: no read of each line before it is overwritten.
    let stream = alias.is_none() && n.saturating_mul(std::mem::size_of::<T>()) >= STREAM_MIN;
    // A lone step or a chain in registers with nothing to gather or copy has no tile buffers
    // to keep in the caches: it runs over whole chunks (for chain of 8 on `[64,64,64,64]`,
    // 7.3 ms at one thread against 10.2 ms in tiles of 4096, and 8.3–9.3 in tiles of
    // 6144–12288). Anything else goes tile by tile.
    let tile = if alias.is_none() && !gathers && (steps.len() == 1 || chain.is_some()) {
        usize::MAX
    } else if chain.is_some() && !gathers {
        // No intermediate tiles to keep in L1: longer tiles, fewer per-tile set-ups.
        TILE * 8
    } else {
        TILE
    };
    let group = Group {
        stream,
        n,
        gathers,
        steps,
        leaves,
        alias,
        tile,
        run: &run,
        chain,
        by_runs,
        by_segments,
    };
    let failed = if n >= PARALLEL_MIN && rayon::current_num_threads() > 1 {
        let size = n
            .div_ceil(rayon::current_num_threads() * 4)
            .max(PARALLEL_MIN / 4)
            .next_multiple_of(TILE);
        out.par_chunks_mut(size)
            .enumerate()
            .filter_map(|(i, o)| group.chunk(i * size, o))
            .min_by_key(|f| (f.step, f.at))
    } else {
        group.chunk(0, out)
    };
    if let Some(f) = failed {
        return Err(f);
    }
    if alias.is_none() {
        // SAFETY: every step's plan covers `0..n` exactly once and the last step wrote each
        // element of its runs (no failure, checked above).
        unsafe { data.set_len(n) };
    }
    Ok(data)
}

struct Group<'g, T, F> {
    /// Whether the output is written with non-temporal stores.
    stream: bool,
    /// Output elements.
    n: usize,
    /// Whether a broadcast leaf is gathered into tile buffers.
    gathers: bool,
    steps: &'g [Step],
    leaves: &'g [&'g [T]],
    alias: Option<usize>,
    tile: usize,
    run: &'g F,
    chain: Option<(ChainFns<T>, &'g [Link])>,
    /// Whether the group is one step computed run by run (see [`fused`]).
    by_runs: bool,
    /// Whether the group is a chain computed over the stretches where each broadcast operand
    /// is one run (see [`fused`]).
    by_segments: bool,
}

/// Broadcast runs at least this long are computed in place rather than gathered (a lone
/// step only): one kernel call per run costs less than a copy of each run.
pub const RUN_MIN: usize = 64;

/// Outputs of at least this many bytes are written with non-temporal stores.
pub const STREAM_MIN: usize = 8 << 20;

/// Copies `src` to `dst`: the whole cache lines of `dst` with non-temporal stores
/// ([`stream_lines`]), the rest (or all of it, if `dst` is not aligned to its element size)
/// plainly. [`stream_fence`] must follow before the data is handed to another thread.
fn stream_copy<T: Copy>(src: &[T], dst: &mut [MaybeUninit<T>]) {
    let n = src.len().min(dst.len());
    let (src, dst) = (&src[..n], &mut dst[..n]);
    let size = std::mem::size_of::<T>();
    let head = (dst.as_ptr() as usize).wrapping_neg() % LINE;
    let (head, lines) = if size > 0 && head.is_multiple_of(size) {
        let head = (head / size).min(n);
        (head, (n - head) * size / LINE)
    } else {
        (n, 0)
    };
    let body = lines * LINE / size.max(1);
    let plain = |d: &mut [MaybeUninit<T>], s: &[T]| {
        for (d, &v) in d.iter_mut().zip(s) {
            d.write(v);
        }
    };
    plain(&mut dst[..head], &src[..head]);
    vectorised_for(
        #[inline(always)]
        |unit| {
            // SAFETY: `lines` whole lines lie in both slices after `head`, and `dst` is
            // line-aligned there; `unit` is the one this closure runs under.
            unsafe {
                stream_lines(
                    unit,
                    src[head..].as_ptr() as *const u8,
                    dst[head..].as_mut_ptr() as *mut u8,
                    lines,
                )
            }
        },
    );
    plain(&mut dst[head + body..], &src[head + body..]);
}

/// Orders earlier non-temporal stores before later stores.
#[inline(always)]
fn stream_fence() {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a store fence has no preconditions.
    unsafe {
        std::arch::x86_64::_mm_sfence()
    };
}

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
                for (d, &v) in dst.iter_mut().zip(s) {
                    d.write(v);
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

/// The initialised prefix `..len` of a buffer a step has filled.
///
/// # Safety
/// The first `len` elements must have been written.
unsafe fn filled<T>(buf: &[MaybeUninit<T>], len: usize) -> &[T] {
    // SAFETY: the caller guarantees the elements are initialised; same layout.
    unsafe { std::slice::from_raw_parts(buf.as_ptr() as *const T, len) }
}

impl<T, F> Group<'_, T, F>
where
    T: Element,
    F: Fn(usize, Src<'_, T>, Src<'_, T>, Out<'_, T>) -> RunResult + Sync,
{
    /// Computes output elements `start..start + out.len()`, tile by tile, one call of `run`
    /// per step and tile. After a step fails, only the steps before it go on (one of them may
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
                if let Err((i, error)) = (self.run)(k, x, y, target) {
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

    /// [`chunk`](Self::chunk) for a lone step, one call of `run` per broadcast run, each
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
                .is_some_and(|d| d.is_multiple_of(LANES))
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
        let mut failure = None;
        step.plan.runs(start, start + out.len(), |r| {
            let x = Src::of_run(a, r.a, r.a_step, r.len);
            let y = Src::of_run(b, r.b, r.b_step, r.len);
            let at = r.start - start;
            let o = Out {
                data: &mut out[at..at + r.len],
                stream: self.stream,
            };
            if let Err((i, error)) = (self.run)(0, x, y, o) {
                failure = Some(Failure {
                    step: 0,
                    at: r.start + i,
                    error,
                });
                return false;
            }
            true
        });
        if self.stream {
            stream_fence();
        }
        failure
    }

    /// [`chunk`](Self::chunk) for a linear chain that cannot fail: each tile's operands are
    /// resolved (broadcast leaves gathered, one buffer per step), then `f` computes the tile
    /// with the running value in registers and writes it to the output directly.
    fn chunk_chain(&self, f: ChainFn<T>, links: &[Link], start: usize, out: &mut [MaybeUninit<T>]) {
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
                    (link, self.operand(step, link.other_is_a(), &tile, buf))
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
    /// `start`, run by run.
    fn feed<'a>(
        &'a self,
        step: &'a Step,
        (first, operand): (bool, Operand),
        start: usize,
    ) -> Feed<'a, T> {
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
        // tile's copy of the reused leaf, and `gather` writes the whole tile.
        match if first { step.x } else { step.y } {
            Operand::Step(j) => Src::Slice(unsafe { filled(&tile.done[j], len) }),
            Operand::Leaf(l) if Some(l) == self.alias => {
                Src::Slice(unsafe { filled(tile.own, len) })
            }
            Operand::Leaf(l) => {
                let leaf = self.leaves[l];
                if leaf.len() == self.n {
                    Src::Slice(&leaf[g0..g0 + len])
                } else if leaf.len() == 1 {
                    Src::Repeat(leaf[0])
                } else {
                    gather(&step.plan, first, leaf, g0, &mut buf[..len]);
                    Src::Slice(unsafe { filled(buf, len) })
                }
            }
        }
    }
}

/// The operands a linear chain reads besides its running value, with their steps: step 0's A
/// (its first operand), then each step's other operand (A or B as its link says), as
/// `(step, (first, operand))`.
fn chain_feeds<'s>(
    steps: &'s [Step],
    links: &'s [Link],
) -> impl Iterator<Item = (&'s Step, (bool, Operand))> {
    let head = steps.first().map(|s| (s, (true, s.x)));
    head.into_iter()
        .chain(steps.iter().zip(links).map(|(s, link)| {
            let a = link.other_is_a();
            (s, (a, if a { s.x } else { s.y }))
        }))
}

/// The tile a step computes: output elements `g0..g0 + len`, with the earlier steps' tiles and
/// the reused leaf's copy of it.
struct Tile<'a, T> {
    done: &'a [Vec<MaybeUninit<T>>],
    own: &'a [MaybeUninit<T>],
    g0: usize,
    len: usize,
}

/// Computes `a op b` under `spec`, `run` being the op's loop over one run: it writes
/// `out[i] = op(a[i], b[i])` for every `i < out.len()`.
pub fn binary<T: Element>(
    spec: AutoBroadcast,
    a: &Tensor,
    b: &Tensor,
    run: impl Fn(Src<'_, T>, Src<'_, T>, Out<'_, T>) -> RunResult + Sync,
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
    let data = fused(
        &[step],
        &[&xa, &xb],
        None,
        |_, x, y, out| run(x, y, out),
        None,
    )
    .map_err(|f| f.to_eval(&shape))?;
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
    use super::*;

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
        let links = [
            (Link::Sub, Src::Slice(&v[1..])),
            (Link::DivInto, Src::Repeat(3.0)),
        ];
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
    fn runs_match_elementwise<T: ChainOps + Chain + PartialEq + std::fmt::Debug>(
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
            for link in [Link::Sub, Link::SubFrom, Link::Div, Link::DivInto] {
                let mut want = vec![marker; n];
                plan.runs(0, n, |r| {
                    for i in 0..r.len {
                        let x = a[if r.a_step { r.a + i } else { r.a }];
                        let y = b[if r.b_step { r.b + i } else { r.b }];
                        want[r.start + i] = match link {
                            Link::Sub => x - y,
                            Link::SubFrom => y - x,
                            Link::Div => x / y,
                            Link::DivInto => y / x,
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
