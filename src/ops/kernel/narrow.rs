//! f16 and bf16 computed through f32.

use std::mem::MaybeUninit;

use half::{bf16, f16};

use super::simd::{Simd, simd, stream_copy};
use super::{BLOCK, Out, Src, filled, map};

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
pub(crate) fn has_f16c() -> bool {
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
