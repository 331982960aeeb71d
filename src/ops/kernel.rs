//! Fast elementwise execution shared by the binary ops.
//!
//! An op supplies a loop over one run of the output (contiguous inputs, or one input
//! repeated), written so the compiler vectorises it. [`binary`] walks the broadcast
//! [`Plan`] (shapes coalesced to the fewest dims), splits the output into chunks that rayon
//! computes in parallel above [`PARALLEL_MIN`] elements, and writes into an uninitialised
//! buffer (no zero-fill pass). A kernel that fails (integer division by zero) reports the
//! offset of the first failing element; the error named is the first in row-major order over
//! the whole output.
//!
//! f16 and bf16 are computed in f32 blocks ([`widen`], [`narrow`]): the conversions run as
//! vector instructions (F16C on x86-64 when the CPU has it, chosen at run time), and since f32
//! carries more than twice the bits of either format, one rounding of the f32 result gives the
//! correctly rounded narrow result.

use std::mem::MaybeUninit;

use half::{bf16, f16};
use rayon::prelude::*;

use super::{ElemError, EvalError};
use crate::broadcast::{AutoBroadcast, Plan};
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

/// The four shapes of a run, each a plain loop the compiler vectorises.
#[inline(always)]
pub fn map<T: Copy, O: Copy>(
    a: Src<'_, T>,
    b: Src<'_, T>,
    out: &mut [MaybeUninit<O>],
    f: impl Fn(T, T) -> O,
) {
    match (a, b) {
        (Src::Slice(a), Src::Slice(b)) => {
            for ((o, &x), &y) in out.iter_mut().zip(a).zip(b) {
                o.write(f(x, y));
            }
        }
        (Src::Slice(a), Src::Repeat(y)) => {
            for (o, &x) in out.iter_mut().zip(a) {
                o.write(f(x, y));
            }
        }
        (Src::Repeat(x), Src::Slice(b)) => {
            for (o, &y) in out.iter_mut().zip(b) {
                o.write(f(x, y));
            }
        }
        (Src::Repeat(x), Src::Repeat(y)) => {
            let v = f(x, y);
            for o in out.iter_mut() {
                o.write(v);
            }
        }
    }
}

/// A narrow float computed through f32.
pub trait Narrow: Copy + Send + Sync {
    fn widen(src: &[Self], dst: &mut [f32]);
    fn narrow(src: &[f32], dst: &mut [MaybeUninit<Self>]);
    fn to_f32(self) -> f32;
}

/// Whether the CPU converts f16 in hardware (F16C with AVX).
#[cfg(target_arch = "x86_64")]
fn has_f16c() -> bool {
    std::arch::is_x86_feature_detected!("f16c") && std::arch::is_x86_feature_detected!("avx")
}

impl Narrow for f16 {
    fn widen(src: &[f16], dst: &mut [f32]) {
        #[cfg(target_arch = "x86_64")]
        if has_f16c() {
            // SAFETY: the features were detected above.
            unsafe { f16c::widen(src, dst) };
            return;
        }
        for (d, s) in dst.iter_mut().zip(src) {
            *d = s.to_f32();
        }
    }
    fn narrow(src: &[f32], dst: &mut [MaybeUninit<f16>]) {
        #[cfg(target_arch = "x86_64")]
        if has_f16c() {
            // SAFETY: the features were detected above.
            unsafe { f16c::narrow(src, dst) };
            return;
        }
        for (d, &s) in dst.iter_mut().zip(src) {
            d.write(f16::from_f32(s));
        }
    }
    fn to_f32(self) -> f32 {
        f16::to_f32(self)
    }
}

impl Narrow for bf16 {
    fn widen(src: &[bf16], dst: &mut [f32]) {
        for (d, s) in dst.iter_mut().zip(src) {
            *d = f32::from_bits((s.to_bits() as u32) << 16);
        }
    }
    fn narrow(src: &[f32], dst: &mut [MaybeUninit<bf16>]) {
        for (d, &s) in dst.iter_mut().zip(src) {
            let bits = s.to_bits();
            // Round to nearest even on the upper half; NaN stays NaN (quietened).
            let rounded = if s.is_nan() {
                (bits >> 16) | 0x40
            } else {
                (bits.wrapping_add(0x7FFF + ((bits >> 16) & 1))) >> 16
            };
            d.write(bf16::from_bits(rounded as u16));
        }
    }
    fn to_f32(self) -> f32 {
        bf16::to_f32(self)
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

/// Elements `at..at + len` of `s` as f32 (widened into `buf` unless repeated).
#[inline(always)]
fn widen_block<'b, T: Narrow>(
    s: Src<'_, T>,
    at: usize,
    len: usize,
    buf: &'b mut [f32],
) -> Src<'b, f32> {
    match s {
        Src::Slice(s) => {
            T::widen(&s[at..at + len], &mut buf[..len]);
            Src::Slice(&buf[..len])
        }
        Src::Repeat(v) => Src::Repeat(v.to_f32()),
    }
}

/// Runs an f32 operation on a narrow float type, block by block.
#[inline(always)]
pub fn through_f32<T: Narrow>(
    a: Src<'_, T>,
    b: Src<'_, T>,
    out: &mut [MaybeUninit<T>],
    f: impl Fn(f32, f32) -> f32 + Copy,
) {
    let mut wa = [0f32; BLOCK];
    let mut wb = [0f32; BLOCK];
    let mut wo = [MaybeUninit::<f32>::uninit(); BLOCK];
    let mut at = 0;
    while at < out.len() {
        let len = BLOCK.min(out.len() - at);
        let xa = widen_block(a, at, len, &mut wa);
        let xb = widen_block(b, at, len, &mut wb);
        map(xa, xb, &mut wo[..len], f);
        // SAFETY: `map` wrote all `len` elements of `wo`.
        let done: &[f32] = unsafe { std::slice::from_raw_parts(wo.as_ptr() as *const f32, len) };
        T::narrow(done, &mut out[at..at + len]);
        at += len;
    }
}

/// A tensor's elements as one contiguous row-major slice (copied only if not already so).
fn contiguous<T: Element>(t: &Tensor) -> Option<std::borrow::Cow<'_, [T]>> {
    let v = T::view(t)?;
    Some(match v.to_slice() {
        Some(s) => std::borrow::Cow::Borrowed(s),
        None => std::borrow::Cow::Owned(v.iter().copied().collect()),
    })
}

/// Computes `a op b` under `spec`, `run` being the op's loop over one run: it writes
/// `out[i] = op(a[i], b[i])` for every `i < out.len()`.
pub fn binary<T: Element>(
    spec: AutoBroadcast,
    a: &Tensor,
    b: &Tensor,
    run: impl Fn(Src<'_, T>, Src<'_, T>, &mut [MaybeUninit<T>]) -> RunResult + Sync,
) -> Result<Tensor, EvalError> {
    let (Some(xa), Some(xb)) = (contiguous::<T>(a), contiguous::<T>(b)) else {
        return Err(EvalError::Types(a.element_type(), b.element_type()));
    };
    let plan = Plan::new(spec, a.shape(), b.shape()).ok_or_else(|| EvalError::Shapes {
        a: a.shape().to_vec(),
        b: b.shape().to_vec(),
        reason: "the shapes do not broadcast".into(),
    })?;
    let n = plan.len();
    let mut data: Vec<T> = Vec::with_capacity(n);
    let out = &mut data.spare_capacity_mut()[..n];
    // One chunk: its runs in order; the first failure's flat index.
    let chunk = |start: usize, out: &mut [MaybeUninit<T>]| -> Option<(usize, ElemError)> {
        let mut failed = None;
        plan.runs(start, start + out.len(), |r| {
            fn src<T: Copy>(s: &[T], at: usize, len: usize, step: bool) -> Src<'_, T> {
                if step {
                    Src::Slice(&s[at..at + len])
                } else {
                    Src::Repeat(s[at])
                }
            }
            let o = &mut out[r.start - start..r.start - start + r.len];
            match run(
                src(&xa, r.a, r.len, r.a_step),
                src(&xb, r.b, r.len, r.b_step),
                o,
            ) {
                Ok(()) => true,
                Err((at, e)) => {
                    failed = Some((r.start + at, e));
                    false
                }
            }
        });
        failed
    };
    let failed = if n >= PARALLEL_MIN && rayon::current_num_threads() > 1 {
        let size = n
            .div_ceil(rayon::current_num_threads() * 4)
            .max(PARALLEL_MIN / 4);
        out.par_chunks_mut(size)
            .enumerate()
            .filter_map(|(i, o)| chunk(i * size, o))
            .min_by_key(|&(at, _)| at)
    } else {
        chunk(0, out)
    };
    if let Some((at, e)) = failed {
        let index = unravel(at, &plan.out);
        return Err(match e {
            ElemError::DivisionByZero => EvalError::DivisionByZero { index },
            ElemError::Overflow => EvalError::DivisionOverflow { index },
        });
    }
    // SAFETY: every run of the plan covers `0..n` exactly once and the kernels wrote each
    // element of their runs (no failure, checked above).
    unsafe { data.set_len(n) };
    let array = ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(&plan.out), data).map_err(|_| {
        EvalError::Shapes {
            a: a.shape().to_vec(),
            b: b.shape().to_vec(),
            reason: "internal error: output size".into(),
        }
    })?;
    Ok(T::wrap(array))
}
