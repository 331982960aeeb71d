//! Vectors of f32 lanes for the single-precision forms that take a coefficient per lane from a
//! table (the piecewise polynomials of Erf, Gelu and Tanh, Mish's 2^(j/32), [`super::single`]).
//!
//! The compiler vectorises straight-line f32 code on its own, but it turns a lookup in a table
//! by a per-lane index into a gather (one load per lane: slower than the whole form). The
//! vector units have a faster way, a permute of a table held in registers (`vpermps`: 16
//! entries per instruction on AVX-512, 8 on AVX2), which the compiler does not find. So these
//! forms are written once, generically over [`Lanes`], and run on `__m512`, `__m256` or plain
//! `f32` ([`super::lanes_map`] picks the unit's type).
//!
//! Determinism: every operation here is an IEEE operation with one defined result (add,
//! multiply, fused multiply-add, comparisons) or a bit move, done lane by lane, so a form gives
//! the same bits on every unit and in scalar code (a lookup takes the low bits of the index on
//! each: the permutes ignore the others, the scalar lookup masks them off).

use std::ops::{Add, Mul, Neg, Sub};

/// A vector of `N` f32 lanes and the operations the table-driven forms use, lane by lane.
pub trait Lanes:
    Copy + Add<Output = Self> + Sub<Output = Self> + Mul<Output = Self> + Neg<Output = Self>
{
    /// One flag per lane (the result of a comparison).
    type Mask: Copy;
    /// Lanes per vector.
    const N: usize;
    /// Every lane `v`.
    fn splat(v: f32) -> Self;
    /// `self · a + b`, rounded once.
    fn mul_add(self, a: Self, b: Self) -> Self;
    /// `self < b` (false where either is NaN).
    fn lt(self, b: Self) -> Self::Mask;
    /// `self ≤ b` (false where either is NaN).
    fn le(self, b: Self) -> Self::Mask;
    /// Every flag set.
    fn always() -> Self::Mask;
    /// Both flags.
    fn both(a: Self::Mask, b: Self::Mask) -> Self::Mask;
    /// Whether every lane's flag is set.
    fn all(m: Self::Mask) -> bool;
    /// `a` where the flag is set, `b` elsewhere.
    fn select(m: Self::Mask, a: Self, b: Self) -> Self;
    /// `−0` where `self < 0`, else `self` (NaN is kept: `maxps` with −0 first).
    fn or_neg_zero(self) -> Self;
    /// `|self|` where it is below `hi`, else `hi` (for NaN either: `vrangeps` on AVX-512,
    /// `hi` elsewhere).
    fn abs_below(self, hi: Self) -> Self;
    /// `self · 2^⌊y⌋`, rounded once (so possibly to a subnormal or 0), for −190 ≤ ⌊y⌋ ≤ 63
    /// (not checked) and `self` a normal f32 or 0 of magnitude below 2^64: `vscalefps` on
    /// AVX-512, elsewhere `self · 2^(⌊y⌋ + 64)` (exact) times 2^-64.
    fn scale_pow2(self, y: Self) -> Self;
    /// The bit pattern `and` a constant.
    fn and_bits(self, bits: u32) -> Self;
    /// The bit patterns `or`ed.
    fn or_bits(self, b: Self) -> Self;
    /// The bit pattern shifted left by `S` bits, then `add` added to it (wrapping).
    fn shl_add<const S: u32>(self, add: u32) -> Self;
    /// The bit pattern shifted right by `S` bits (zeros in), then `add` added (wrapping).
    fn shr_add<const S: u32>(self, add: u32) -> Self;
    /// `table[i]` in each lane, `i` the low bits of the lane's pattern (4 bits for a table of
    /// 16, 5 for 32; the other bits are ignored).
    fn lookup<const K: usize>(self, table: &[f32; K]) -> Self;
    /// `1 / self`, correctly rounded (a division).
    fn recip(self) -> Self;
    /// `N` values from `p`.
    ///
    /// # Safety
    /// `p` must be readable for `N` f32.
    unsafe fn load(p: *const f32) -> Self;
    /// The lanes to `p`.
    ///
    /// # Safety
    /// `p` must be writable for `N` f32.
    unsafe fn store(self, p: *mut f32);

    /// `|self|`.
    #[inline(always)]
    fn abs(self) -> Self {
        self.and_bits(0x7fff_ffff)
    }

    /// `self`, or `hi` where `self > hi`; NaN stays NaN.
    #[inline(always)]
    fn at_most(self, hi: f32) -> Self {
        let hi = Self::splat(hi);
        Self::select(hi.lt(self), hi, self)
    }
}

/// 2^-64.
const TWO_M64: f32 = 1.0 / (1u64 << 63) as f32 / 2.0;

impl Lanes for f32 {
    type Mask = bool;
    const N: usize = 1;

    #[inline(always)]
    fn splat(v: f32) -> Self {
        v
    }
    #[inline(always)]
    fn mul_add(self, a: Self, b: Self) -> Self {
        f32::mul_add(self, a, b)
    }
    #[inline(always)]
    fn lt(self, b: Self) -> bool {
        self < b
    }
    #[inline(always)]
    fn le(self, b: Self) -> bool {
        self <= b
    }
    #[inline(always)]
    fn always() -> bool {
        true
    }
    #[inline(always)]
    fn both(a: bool, b: bool) -> bool {
        a & b
    }
    #[inline(always)]
    fn all(m: bool) -> bool {
        m
    }
    #[inline(always)]
    fn select(m: bool, a: Self, b: Self) -> Self {
        if m { a } else { b }
    }
    #[inline(always)]
    fn or_neg_zero(self) -> Self {
        if -0.0 > self { -0.0 } else { self }
    }
    #[inline(always)]
    fn abs_below(self, hi: Self) -> Self {
        let a = self.abs();
        if a < hi { a } else { hi }
    }
    #[inline(always)]
    fn scale_pow2(self, y: Self) -> Self {
        let up = f32::from_bits(((y.floor() as i32).wrapping_add(127 + 64) as u32) << 23);
        (self * up) * TWO_M64
    }
    #[inline(always)]
    fn and_bits(self, bits: u32) -> Self {
        f32::from_bits(self.to_bits() & bits)
    }
    #[inline(always)]
    fn or_bits(self, b: Self) -> Self {
        f32::from_bits(self.to_bits() | b.to_bits())
    }
    #[inline(always)]
    fn shl_add<const S: u32>(self, add: u32) -> Self {
        f32::from_bits((self.to_bits() << S).wrapping_add(add))
    }
    #[inline(always)]
    fn shr_add<const S: u32>(self, add: u32) -> Self {
        f32::from_bits((self.to_bits() >> S).wrapping_add(add))
    }
    #[inline(always)]
    fn recip(self) -> Self {
        1.0 / self
    }
    #[inline(always)]
    fn lookup<const K: usize>(self, table: &[f32; K]) -> Self {
        const { assert!(K.is_power_of_two()) };
        table[self.to_bits() as usize & (K - 1)]
    }
    #[inline(always)]
    unsafe fn load(p: *const f32) -> Self {
        // SAFETY: the caller's.
        unsafe { *p }
    }
    #[inline(always)]
    unsafe fn store(self, p: *mut f32) {
        // SAFETY: the caller's.
        unsafe { *p = self }
    }
}

/// The vector units' types. A value of these types is only made inside [`super::lanes_map`]'s
/// branch for its unit, where the unit's features were detected, so the intrinsics below
/// (called from functions without those features, inlined into that branch) are sound.
#[cfg(target_arch = "x86_64")]
pub(super) mod x86 {
    use super::Lanes;
    use std::arch::x86_64::*;
    use std::ops::{Add, Mul, Neg, Sub};

    /// Sixteen lanes in an AVX-512 register.
    #[derive(Clone, Copy)]
    pub struct V512(__m512);

    /// Eight lanes in an AVX2 register.
    #[derive(Clone, Copy)]
    pub struct V256(__m256);

    macro_rules! ops {
        ($t:ident, $add:ident, $sub:ident, $mul:ident, $xor:ident, $set:ident) => {
            impl Add for $t {
                type Output = Self;
                #[inline(always)]
                fn add(self, b: Self) -> Self {
                    // SAFETY: see the module's note.
                    $t(unsafe { $add(self.0, b.0) })
                }
            }
            impl Sub for $t {
                type Output = Self;
                #[inline(always)]
                fn sub(self, b: Self) -> Self {
                    // SAFETY: see the module's note.
                    $t(unsafe { $sub(self.0, b.0) })
                }
            }
            impl Mul for $t {
                type Output = Self;
                #[inline(always)]
                fn mul(self, b: Self) -> Self {
                    // SAFETY: see the module's note.
                    $t(unsafe { $mul(self.0, b.0) })
                }
            }
            impl Neg for $t {
                type Output = Self;
                #[inline(always)]
                fn neg(self) -> Self {
                    // SAFETY: see the module's note.
                    $t(unsafe { $xor(self.0, $set(-0.0)) })
                }
            }
        };
    }
    ops!(
        V512,
        _mm512_add_ps,
        _mm512_sub_ps,
        _mm512_mul_ps,
        _mm512_xor_ps,
        _mm512_set1_ps
    );
    ops!(
        V256,
        _mm256_add_ps,
        _mm256_sub_ps,
        _mm256_mul_ps,
        _mm256_xor_ps,
        _mm256_set1_ps
    );

    // SAFETY (every `unsafe` block below): see the module's note; loads and stores as the
    // callers guarantee.
    impl Lanes for V512 {
        type Mask = __mmask16;
        const N: usize = 16;

        #[inline(always)]
        fn splat(v: f32) -> Self {
            V512(unsafe { _mm512_set1_ps(v) })
        }
        #[inline(always)]
        fn mul_add(self, a: Self, b: Self) -> Self {
            V512(unsafe { _mm512_fmadd_ps(self.0, a.0, b.0) })
        }
        #[inline(always)]
        fn lt(self, b: Self) -> __mmask16 {
            unsafe { _mm512_cmp_ps_mask::<_CMP_LT_OQ>(self.0, b.0) }
        }
        #[inline(always)]
        fn le(self, b: Self) -> __mmask16 {
            unsafe { _mm512_cmp_ps_mask::<_CMP_LE_OQ>(self.0, b.0) }
        }
        #[inline(always)]
        fn always() -> __mmask16 {
            0xffff
        }
        #[inline(always)]
        fn both(a: __mmask16, b: __mmask16) -> __mmask16 {
            a & b
        }
        #[inline(always)]
        fn all(m: __mmask16) -> bool {
            m == 0xffff
        }
        #[inline(always)]
        fn select(m: __mmask16, a: Self, b: Self) -> Self {
            V512(unsafe { _mm512_mask_blend_ps(m, b.0, a.0) })
        }
        #[inline(always)]
        fn or_neg_zero(self) -> Self {
            V512(unsafe { _mm512_max_ps(_mm512_set1_ps(-0.0), self.0) })
        }
        #[inline(always)]
        fn abs_below(self, hi: Self) -> Self {
            // 0b10_10: the operand of the lesser magnitude, its sign cleared.
            V512(unsafe { _mm512_range_ps::<0b1010>(self.0, hi.0) })
        }
        #[inline(always)]
        fn scale_pow2(self, y: Self) -> Self {
            V512(unsafe { _mm512_scalef_ps(self.0, y.0) })
        }
        #[inline(always)]
        fn and_bits(self, bits: u32) -> Self {
            V512(unsafe {
                _mm512_castsi512_ps(_mm512_and_si512(
                    _mm512_castps_si512(self.0),
                    _mm512_set1_epi32(bits as i32),
                ))
            })
        }
        #[inline(always)]
        fn or_bits(self, b: Self) -> Self {
            V512(unsafe { _mm512_or_ps(self.0, b.0) })
        }
        #[inline(always)]
        fn shl_add<const S: u32>(self, add: u32) -> Self {
            V512(unsafe {
                let v = _mm512_slli_epi32::<S>(_mm512_castps_si512(self.0));
                _mm512_castsi512_ps(_mm512_add_epi32(v, _mm512_set1_epi32(add as i32)))
            })
        }
        #[inline(always)]
        fn shr_add<const S: u32>(self, add: u32) -> Self {
            V512(unsafe {
                let v = _mm512_srli_epi32::<S>(_mm512_castps_si512(self.0));
                _mm512_castsi512_ps(_mm512_add_epi32(v, _mm512_set1_epi32(add as i32)))
            })
        }
        #[inline(always)]
        fn recip(self) -> Self {
            V512(unsafe { _mm512_div_ps(_mm512_set1_ps(1.0), self.0) })
        }
        #[inline(always)]
        fn lookup<const K: usize>(self, table: &[f32; K]) -> Self {
            const { assert!(K == 16 || K == 32) };
            let i = unsafe { _mm512_castps_si512(self.0) };
            V512(unsafe {
                let lo = _mm512_loadu_ps(table.as_ptr());
                if K == 16 {
                    _mm512_permutexvar_ps(i, lo)
                } else {
                    let hi = _mm512_loadu_ps(table.as_ptr().add(16));
                    _mm512_permutex2var_ps(lo, i, hi)
                }
            })
        }
        #[inline(always)]
        unsafe fn load(p: *const f32) -> Self {
            V512(unsafe { _mm512_loadu_ps(p) })
        }
        #[inline(always)]
        unsafe fn store(self, p: *mut f32) {
            unsafe { _mm512_storeu_ps(p, self.0) }
        }
    }

    impl V256 {
        /// Entries 8 k..8 k + 8 of `table` by the low 3 bits of `i`.
        #[inline(always)]
        fn eight(i: __m256i, table: &[f32], k: usize) -> __m256 {
            unsafe { _mm256_permutevar8x32_ps(_mm256_loadu_ps(table.as_ptr().add(8 * k)), i) }
        }

        /// Entries 16 h..16 h + 16 of `table` by the low 4 bits of `i`.
        #[inline(always)]
        fn sixteen(i: __m256i, table: &[f32], h: usize) -> __m256 {
            Self::by_bit::<28>(
                i,
                Self::eight(i, table, 2 * h),
                Self::eight(i, table, 2 * h + 1),
            )
        }

        /// `b` where bit `B` of `i` is set, `a` elsewhere (the bit moved to the sign).
        #[inline(always)]
        fn by_bit<const SHIFT: i32>(i: __m256i, a: __m256, b: __m256) -> __m256 {
            unsafe { _mm256_blendv_ps(a, b, _mm256_castsi256_ps(_mm256_slli_epi32::<SHIFT>(i))) }
        }
    }

    impl Lanes for V256 {
        type Mask = __m256;
        const N: usize = 8;

        #[inline(always)]
        fn splat(v: f32) -> Self {
            V256(unsafe { _mm256_set1_ps(v) })
        }
        #[inline(always)]
        fn mul_add(self, a: Self, b: Self) -> Self {
            V256(unsafe { _mm256_fmadd_ps(self.0, a.0, b.0) })
        }
        #[inline(always)]
        fn lt(self, b: Self) -> __m256 {
            unsafe { _mm256_cmp_ps::<_CMP_LT_OQ>(self.0, b.0) }
        }
        #[inline(always)]
        fn le(self, b: Self) -> __m256 {
            unsafe { _mm256_cmp_ps::<_CMP_LE_OQ>(self.0, b.0) }
        }
        #[inline(always)]
        fn always() -> __m256 {
            unsafe { _mm256_castsi256_ps(_mm256_set1_epi32(-1)) }
        }
        #[inline(always)]
        fn both(a: __m256, b: __m256) -> __m256 {
            unsafe { _mm256_and_ps(a, b) }
        }
        #[inline(always)]
        fn all(m: __m256) -> bool {
            unsafe { _mm256_movemask_ps(m) == 0xff }
        }
        #[inline(always)]
        fn select(m: __m256, a: Self, b: Self) -> Self {
            V256(unsafe { _mm256_blendv_ps(b.0, a.0, m) })
        }
        #[inline(always)]
        fn or_neg_zero(self) -> Self {
            V256(unsafe { _mm256_max_ps(_mm256_set1_ps(-0.0), self.0) })
        }
        #[inline(always)]
        fn abs_below(self, hi: Self) -> Self {
            // `minps` with |self| first: NaN gives `hi`, as on the scalar path.
            V256(unsafe { _mm256_min_ps(self.abs().0, hi.0) })
        }
        #[inline(always)]
        fn scale_pow2(self, y: Self) -> Self {
            V256(unsafe {
                let n = _mm256_cvtps_epi32(_mm256_floor_ps(y.0));
                let n = _mm256_add_epi32(n, _mm256_set1_epi32(127 + 64));
                let up = _mm256_castsi256_ps(_mm256_slli_epi32::<23>(n));
                _mm256_mul_ps(_mm256_mul_ps(self.0, up), _mm256_set1_ps(super::TWO_M64))
            })
        }
        #[inline(always)]
        fn and_bits(self, bits: u32) -> Self {
            V256(unsafe {
                _mm256_and_ps(self.0, _mm256_castsi256_ps(_mm256_set1_epi32(bits as i32)))
            })
        }
        #[inline(always)]
        fn or_bits(self, b: Self) -> Self {
            V256(unsafe { _mm256_or_ps(self.0, b.0) })
        }
        #[inline(always)]
        fn shl_add<const S: u32>(self, add: u32) -> Self {
            V256(unsafe {
                let v = _mm256_sll_epi32(_mm256_castps_si256(self.0), _mm_cvtsi32_si128(S as i32));
                _mm256_castsi256_ps(_mm256_add_epi32(v, _mm256_set1_epi32(add as i32)))
            })
        }
        #[inline(always)]
        fn shr_add<const S: u32>(self, add: u32) -> Self {
            V256(unsafe {
                let v = _mm256_srl_epi32(_mm256_castps_si256(self.0), _mm_cvtsi32_si128(S as i32));
                _mm256_castsi256_ps(_mm256_add_epi32(v, _mm256_set1_epi32(add as i32)))
            })
        }
        #[inline(always)]
        fn recip(self) -> Self {
            V256(unsafe { _mm256_div_ps(_mm256_set1_ps(1.0), self.0) })
        }
        #[inline(always)]
        fn lookup<const K: usize>(self, table: &[f32; K]) -> Self {
            const { assert!(K == 16 || K == 32) };
            let i = unsafe { _mm256_castps_si256(self.0) };
            V256(if K == 16 {
                Self::sixteen(i, table, 0)
            } else {
                Self::by_bit::<27>(i, Self::sixteen(i, table, 0), Self::sixteen(i, table, 1))
            })
        }
        #[inline(always)]
        unsafe fn load(p: *const f32) -> Self {
            V256(unsafe { _mm256_loadu_ps(p) })
        }
        #[inline(always)]
        unsafe fn store(self, p: *mut f32) {
            unsafe { _mm256_storeu_ps(p, self.0) }
        }
    }
}

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    use super::x86::{V256, V512};
    use super::*;

    /// `f` on `xs` (and `ys`, lane by lane) through lanes of type `V`, as bit patterns.
    fn through<V: Lanes>(xs: &[f32; 16], ys: &[f32; 16], f: impl Fn(V, V) -> V) -> Vec<u32> {
        let mut out = [0f32; 16];
        for i in (0..16).step_by(V::N) {
            // SAFETY: `i + N ≤ 16` for the three arrays (N is 1, 8 or 16).
            unsafe {
                let y = f(V::load(xs.as_ptr().add(i)), V::load(ys.as_ptr().add(i)));
                y.store(out.as_mut_ptr().add(i));
            }
        }
        out.iter().map(|v| v.to_bits()).collect()
    }

    /// The operations Gelu's form added give the same bits on every unit the CPU has, within
    /// their contracts (edge values: ±0, subnormals, ±∞, the clamp, results that underflow).
    #[test]
    fn the_units_agree() {
        let inf = f32::INFINITY;
        let xs = [
            0.0, -0.0, 1e-40, -1e-40, 1.5, -1.5, 14.9, -14.9, 15.0, -15.0, 1e30, -1e30, inf, -inf,
            0.125, -3.0,
        ];
        // Normal or zero, below 2^64, for `scale_pow2`; with ⌊y⌋ from −190 to 63.
        let ms = [
            0.0, -0.0, 1.5, -1.5, 14.9, 1e10, -1e-30, 0.125, 3.0, 7e-20, 1.0, -1.0, 2.0, 0.3, 1e18,
            5.0,
        ];
        let ys = [
            -0.5, -1.0, -100.25, 0.0, -163.2, -10.0, 63.5, -190.0, -140.03125, -126.0, -127.5,
            -149.0, -150.0, -140.0, -60.0, -1.0,
        ];
        let top = 15.0f32;
        /// An operation on the unit numbered 0 (scalar), 1 (AVX2) or 2 (AVX-512).
        type OnUnit = Box<dyn Fn(&[f32; 16], &[f32; 16], u8) -> Vec<u32>>;
        let cases: [(&str, &[f32; 16], OnUnit); 3] = [
            (
                "abs_below",
                &xs,
                Box::new(move |a, b, unit| match unit {
                    0 => through::<f32>(a, b, |x, _| x.abs_below(f32::splat(top))),
                    1 => through::<V256>(a, b, |x, _| x.abs_below(V256::splat(top))),
                    _ => through::<V512>(a, b, |x, _| x.abs_below(V512::splat(top))),
                }),
            ),
            (
                "or_neg_zero",
                &xs,
                Box::new(|a, b, unit| match unit {
                    0 => through::<f32>(a, b, |x, _| x.or_neg_zero()),
                    1 => through::<V256>(a, b, |x, _| x.or_neg_zero()),
                    _ => through::<V512>(a, b, |x, _| x.or_neg_zero()),
                }),
            ),
            (
                "scale_pow2",
                &ms,
                Box::new(|a, b, unit| match unit {
                    0 => through::<f32>(a, b, |x, y| x.scale_pow2(y)),
                    1 => through::<V256>(a, b, |x, y| x.scale_pow2(y)),
                    _ => through::<V512>(a, b, |x, y| x.scale_pow2(y)),
                }),
            ),
        ];
        let avx2 = is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma");
        let avx512 = is_x86_feature_detected!("avx512f") && is_x86_feature_detected!("avx512dq");
        for (name, a, f) in &cases {
            let scalar = f(a, &ys, 0);
            // The scalar results are the operations' definitions.
            if *name == "scale_pow2" {
                // 0.3 · 2^-140 is subnormal: rounded once (the f64 product is exact).
                let once = ((0.3f32 as f64) * 2f64.powi(-140)) as f32;
                assert_eq!(scalar[13], once.to_bits());
                assert_eq!(f32::from_bits(scalar[2]), 1.5 * 2f32.powi(-101));
                assert_eq!(scalar[7], 0, "2^-190 of 1/8 rounds to 0");
            }
            if avx2 {
                assert_eq!(f(a, &ys, 1), scalar, "{name} on AVX2");
            }
            if avx512 {
                assert_eq!(f(a, &ys, 2), scalar, "{name} on AVX-512");
            }
        }
    }
}
