//! f16 and bf16 computed through f32.

use std::mem::MaybeUninit;

use half::{bf16, f16};

use super::simd::{Simd, simd, stream_copy};
use super::{BLOCK, Out, Src, filled, map};

/// A narrow float computed through f32: `out[i] = round(f(widen(a[i]), widen(b[i])))`.
pub trait Narrow: Copy + Send + Sync {
    /// `src` widened to f32 into `dst` (as long).
    fn widen(src: &[Self], dst: &mut [MaybeUninit<f32>]);
    /// `src` rounded to the type into `dst` (as long), to nearest even; NaN stays NaN.
    fn narrow(src: &[f32], dst: &mut [MaybeUninit<Self>]);
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
    fn widen(src: &[f16], dst: &mut [MaybeUninit<f32>]) {
        widen_f16(src, dst)
    }
    fn narrow(src: &[f32], dst: &mut [MaybeUninit<f16>]) {
        narrow_f16(src, dst)
    }
    #[inline(always)]
    fn through_f32(
        a: Src<'_, f16>,
        b: Src<'_, f16>,
        out: Out<'_, f16>,
        f: impl Fn(f32, f32) -> f32 + Copy,
    ) {
        #[cfg(target_arch = "x86_64")]
        if has_f16c() {
            match simd() {
                // SAFETY: the features were detected.
                Simd::Avx512 => return unsafe { f16c::map_avx512(a, b, out, f) },
                // SAFETY: as above.
                Simd::Avx2 => return unsafe { f16c::map_avx2(a, b, out, f) },
                Simd::None => {}
            }
        }
        let Out { data: out, stream } = out;
        // Uninitialised: zeroing the two input blocks per call cost as much as the conversions.
        let mut wa = [MaybeUninit::<f32>::uninit(); BLOCK];
        let mut wb = [MaybeUninit::<f32>::uninit(); BLOCK];
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
fn widen_f16_block<'b>(
    s: Src<'_, f16>,
    at: usize,
    len: usize,
    buf: &'b mut [MaybeUninit<f32>],
) -> Src<'b, f32> {
    match s {
        Src::Slice(s) => {
            widen_f16(&s[at..at + len], &mut buf[..len]);
            // SAFETY: `widen_f16` wrote all `len` elements.
            Src::Slice(unsafe { filled(buf, len) })
        }
        Src::Repeat(v) => Src::Repeat(v.to_f32()),
    }
}

pub(crate) fn widen_f16(src: &[f16], dst: &mut [MaybeUninit<f32>]) {
    #[cfg(target_arch = "x86_64")]
    if has_f16c() {
        // SAFETY: the features were detected.
        unsafe { f16c::widen(src, dst) };
        return;
    }
    for (d, v) in dst.iter_mut().zip(src) {
        d.write(v.to_f32());
    }
}

pub(crate) fn narrow_f16(src: &[f32], dst: &mut [MaybeUninit<f16>]) {
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
pub(crate) fn bf16_from_f32(s: f32) -> bf16 {
    let bits = s.to_bits();
    let rounded = if s.is_nan() {
        (bits >> 16) | 0x40
    } else {
        (bits.wrapping_add(0x7FFF + ((bits >> 16) & 1))) >> 16
    };
    bf16::from_bits(rounded as u16)
}

#[inline(always)]
pub(crate) fn bf16_to_f32(v: bf16) -> f32 {
    f32::from_bits((v.to_bits() as u32) << 16)
}

/// bf16: both conversions are bit operations, which vectorise with the rest of the loop.
impl Narrow for bf16 {
    fn widen(src: &[bf16], dst: &mut [MaybeUninit<f32>]) {
        super::simd::vectorised(
            #[inline(always)]
            || {
                for (d, &v) in dst.iter_mut().zip(src) {
                    d.write(bf16_to_f32(v));
                }
            },
        )
    }
    fn narrow(src: &[f32], dst: &mut [MaybeUninit<bf16>]) {
        super::simd::vectorised(
            #[inline(always)]
            || {
                for (d, &v) in dst.iter_mut().zip(src) {
                    d.write(bf16_from_f32(v));
                }
            },
        )
    }
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

    /// Writes every element of `dst` (`src` must be as long).
    #[target_feature(enable = "avx,f16c")]
    pub unsafe fn widen(src: &[f16], dst: &mut [MaybeUninit<f32>]) {
        let n = src.len().min(dst.len());
        let mut i = 0;
        while i + 8 <= n {
            // SAFETY: i + 8 <= n, within both slices; unaligned loads and stores.
            unsafe {
                let h = _mm_loadu_si128(src.as_ptr().add(i) as *const __m128i);
                _mm256_storeu_ps(dst.as_mut_ptr().add(i) as *mut f32, _mm256_cvtph_ps(h));
            }
            i += 8;
        }
        for k in i..n {
            dst[k].write(src[k].to_f32());
        }
    }

    /// One pass in registers, for one vector unit: `LANES` f16 widened per load, `f` on the
    /// lanes, rounded back to nearest even. A streamed output is written with non-temporal
    /// stores from its first boundary of one store's width (the elements before it one by one).
    macro_rules! map_in_registers {
        ($name:ident, $features:literal, $lanes:literal, $half:ty, $wide:ty,
         load: $load:ident, widen: $widen:ident, narrow: $narrow:ident, rounding: $round:expr,
         store: $store:ident, stream: $stream:ident) => {
            #[target_feature(enable = $features)]
            pub unsafe fn $name(
                a: super::Src<'_, f16>,
                b: super::Src<'_, f16>,
                out: super::Out<'_, f16>,
                f: impl Fn(f32, f32) -> f32 + Copy,
            ) {
                use super::Src;
                const LANES: usize = $lanes;
                let super::Out { data: out, stream } = out;
                let n = out.len();
                let one = |k: usize| f16::from_f32(f(a.get(k).to_f32(), b.get(k).to_f32()));
                let head = if stream {
                    ((out.as_ptr() as usize).wrapping_neg() % (2 * LANES) / 2).min(n)
                } else {
                    0
                };
                for (k, o) in out[..head].iter_mut().enumerate() {
                    o.write(one(k));
                }
                #[inline(always)]
                unsafe fn lanes(s: Src<'_, f16>, i: usize) -> [f32; LANES] {
                    // SAFETY: the caller keeps `i + LANES` within the run; the target features
                    // are those of the one function that calls this.
                    unsafe {
                        match s {
                            Src::Slice(s) => std::mem::transmute::<$wide, [f32; LANES]>($widen(
                                $load(s.as_ptr().add(i) as *const $half),
                            )),
                            Src::Repeat(v) => [v.to_f32(); LANES],
                        }
                    }
                }
                let mut i = head;
                while i + LANES <= n {
                    // SAFETY: i + LANES <= n, within every slice of the run; unaligned loads
                    // and stores, or when streaming, stores to aligned boundaries (`head`).
                    unsafe {
                        let (x, y) = (lanes(a, i), lanes(b, i));
                        let r: [f32; LANES] = std::array::from_fn(|k| f(x[k], y[k]));
                        let h =
                            $narrow::<{ $round }>(std::mem::transmute::<[f32; LANES], $wide>(r));
                        let d = out.as_mut_ptr().add(i) as *mut $half;
                        if stream {
                            $stream(d, h);
                        } else {
                            $store(d, h);
                        }
                    }
                    i += LANES;
                }
                for (k, o) in out.iter_mut().enumerate().skip(i) {
                    o.write(one(k));
                }
            }
        };
    }

    map_in_registers!(map_avx512, "avx512f,avx512vl,avx512bw,avx512dq,avx2,fma,f16c", 16,
        __m256i, __m512, load: _mm256_loadu_si256, widen: _mm512_cvtph_ps,
        narrow: _mm512_cvtps_ph,
        rounding: _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC, store: _mm256_storeu_si256, stream: _mm256_stream_si256);
    map_in_registers!(map_avx2, "avx2,fma,f16c", 8,
        __m128i, __m256, load: _mm_loadu_si128, widen: _mm256_cvtph_ps,
        narrow: _mm256_cvtps_ph,
        rounding: _MM_FROUND_TO_NEAREST_INT, store: _mm_storeu_si128, stream: _mm_stream_si128);

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
