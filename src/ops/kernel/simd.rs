//! Compiling loops for the widest vector unit the CPU has, and non-temporal stores.

use std::mem::MaybeUninit;

/// One cache line of output, assembled before it is streamed.
#[repr(C, align(64))]
pub(crate) struct Line(pub(crate) [MaybeUninit<u8>; LINE]);

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
pub(crate) const LINE: usize = 64;

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
pub(crate) unsafe fn stream_lines(unit: Simd, src: *const u8, dst: *mut u8, lines: usize) {
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
pub(crate) fn simd() -> Simd {
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

/// Copies `src` to `dst`: the whole cache lines of `dst` with non-temporal stores
/// ([`stream_lines`]), the rest (or all of it, if `dst` is not aligned to its element size)
/// plainly. [`stream_fence`] must follow before the data is handed to another thread.
pub(crate) fn stream_copy<T: Copy>(src: &[T], dst: &mut [MaybeUninit<T>]) {
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
pub(crate) fn stream_fence() {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a store fence has no preconditions.
    unsafe {
        std::arch::x86_64::_mm_sfence()
    };
}

/// Asks for the cache lines of `data` to be brought towards the core (a hint: no effect on
/// results, nothing where the target has no such instruction). For loops whose iterations are
/// long (transcendental forms), where the hardware's prefetching runs too few lines ahead.
#[inline(always)]
pub(crate) fn prefetch<T>(data: &[T]) {
    #[cfg(target_arch = "x86_64")]
    {
        let (p, bytes) = (data.as_ptr() as *const i8, std::mem::size_of_val(data));
        let mut at = 0;
        while at < bytes {
            // SAFETY: a prefetch never faults, and `p + at` lies within `data`.
            unsafe {
                std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p.add(at))
            };
            at += LINE;
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = data;
}
