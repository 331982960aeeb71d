//! Packed weight types: how OpenVINO lays out the element types narrower than a byte (u1, u2,
//! u4, i4, nf4, f4e2m1) and the 8-bit floats (f8e4m3, f8e5m2, f8e8m0) in a Const's bytes, and
//! their values. ovir keeps such Consts packed in the mapped `.bin`; Convert decodes them
//! (the weight-compression pattern Const(u4) → Convert → Subtract(zero point) →
//! Multiply(scale)). Every value decodes exactly to an f32 or an integer.
//!
//! Layouts, as OpenVINO 2026.4 reads them (pinned by `ir_samples/ops/convert_packed_*`, whose
//! expected values come from OpenVINO's constant folding):
//! * 4-bit types (u4, i4, nf4, f4e2m1): two per byte, element `2k` in the low nibble and
//!   `2k + 1` in the high nibble;
//! * u2: four per byte, element `4k` in the two lowest bits;
//! * u1: eight per byte, element `8k` in the most significant bit;
//! * f8e4m3: sign, 4 exponent bits (bias 7), 3 mantissa bits; no infinities, `S.1111.111` is
//!   NaN (the OCP "FN" format, largest 448); f8e5m2: sign, 5 exponent bits (bias 15), 2
//!   mantissa bits, with infinities and NaNs (the top byte of an f16); f8e8m0: 2^(e − 127),
//!   0xFF is NaN;
//! * nf4: an index into the 16 NormalFloat values below (the f32 values OpenVINO uses).

use crate::dtype::ElementType;
use crate::num::Num;

/// The 16 values of nf4, as f32.
pub const NF4: [f32; 16] = [
    -1.0,
    -0.696_192_8,
    -0.525_073_05,
    -0.394_917_5,
    -0.284_441_38,
    -0.184_773_43,
    -0.091_050_036,
    0.0,
    0.079_580_3,
    0.160_930_2,
    0.246_112_3,
    0.337_915_24,
    0.440_709_83,
    0.562_617,
    0.722_956_84,
    1.0,
];

/// Whether ovir decodes `t` from a Const's bytes.
pub fn decodes(t: ElementType) -> bool {
    use ElementType::*;
    matches!(
        t,
        U1 | U2 | U4 | I4 | Nf4 | F4E2M1 | F8E4M3 | F8E5M2 | F8E8M0
    )
}

/// Element `i` of packed `bytes` of type `t`, or `None` if `t` is not decoded or the bytes are
/// short.
pub fn get(t: ElementType, bytes: &[u8], i: usize) -> Option<Num> {
    use ElementType::*;
    let nibble = |i: usize| -> Option<u8> {
        let b = *bytes.get(i / 2)?;
        Some(if i.is_multiple_of(2) { b & 0xF } else { b >> 4 })
    };
    Some(match t {
        U1 => {
            let b = *bytes.get(i / 8)?;
            Num::Int(i128::from((b >> (7 - i % 8)) & 1))
        }
        U2 => {
            let b = *bytes.get(i / 4)?;
            Num::Int(i128::from((b >> (2 * (i % 4))) & 3))
        }
        U4 => Num::Int(i128::from(nibble(i)?)),
        I4 => {
            let v = nibble(i)? as i8;
            Num::Int(i128::from(if v >= 8 { v - 16 } else { v }))
        }
        Nf4 => Num::Float(f64::from(NF4[nibble(i)? as usize])),
        F4E2M1 => Num::Float(f4e2m1(nibble(i)?)),
        F8E4M3 => Num::Float(f8e4m3(*bytes.get(i)?)),
        F8E5M2 => Num::Float(half::f16::from_bits(u16::from(*bytes.get(i)?) << 8).to_f64()),
        F8E8M0 => {
            let e = *bytes.get(i)?;
            Num::Float(if e == 0xFF {
                f64::NAN
            } else {
                2f64.powi(i32::from(e) - 127)
            })
        }
        _ => return None,
    })
}

/// An f8e4m3 byte's value.
fn f8e4m3(b: u8) -> f64 {
    let sign = if b & 0x80 != 0 { -1.0 } else { 1.0 };
    let exp = i32::from((b >> 3) & 0xF);
    let mant = f64::from(b & 7);
    if exp == 15 && b & 7 == 7 {
        return f64::NAN;
    }
    sign * if exp == 0 {
        mant * 2f64.powi(-9)
    } else {
        (1.0 + mant / 8.0) * 2f64.powi(exp - 7)
    }
}

/// An f4e2m1 nibble's value: sign, 2 exponent bits (bias 1), 1 mantissa bit.
fn f4e2m1(n: u8) -> f64 {
    let sign = if n & 8 != 0 { -1.0 } else { 1.0 };
    let exp = i32::from((n >> 1) & 3);
    let mant = f64::from(n & 1);
    sign * if exp == 0 {
        mant * 0.5
    } else {
        (1.0 + mant / 2.0) * 2f64.powi(exp - 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(t: ElementType, bytes: &[u8], n: usize) -> Vec<f64> {
        (0..n)
            .map(|i| match get(t, bytes, i).unwrap() {
                Num::Int(v) => v as f64,
                Num::Float(f) => f,
            })
            .collect()
    }

    #[test]
    fn sub_byte_layouts() {
        assert_eq!(
            all(ElementType::U4, &[0x21, 0xF0], 4),
            [1.0, 2.0, 0.0, 15.0]
        );
        assert_eq!(
            all(ElementType::I4, &[0x8F, 0x70], 4),
            [-1.0, -8.0, 0.0, 7.0]
        );
        assert_eq!(
            all(ElementType::U1, &[0b1010_0001], 8),
            [1.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0]
        );
        assert_eq!(
            all(ElementType::U2, &[0b1110_0100], 4),
            [0.0, 1.0, 2.0, 3.0]
        );
        assert_eq!(all(ElementType::Nf4, &[0xF0], 2), [-1.0, 1.0]);
        assert!(get(ElementType::U4, &[0x21], 2).is_none());
    }

    #[test]
    fn eight_bit_floats() {
        // f8e4m3: 0x38 = 1.0, 0x7E = 448 (largest), 0x7F NaN, 0x01 = 2^-9, 0xB8 = -1.
        let v = all(ElementType::F8E4M3, &[0x38, 0x7E, 0x01, 0xB8], 4);
        assert_eq!(v, [1.0, 448.0, 2f64.powi(-9), -1.0]);
        assert!(all(ElementType::F8E4M3, &[0x7F], 1)[0].is_nan());
        // f8e5m2: 0x3C = 1.0, 0x7C = inf, 0x7B = 57344 (largest finite).
        let v = all(ElementType::F8E5M2, &[0x3C, 0x7C, 0x7B], 3);
        assert_eq!(v, [1.0, f64::INFINITY, 57344.0]);
        let v = all(ElementType::F8E8M0, &[127, 128, 0], 3);
        assert_eq!(v, [1.0, 2.0, 2f64.powi(-127)]);
        let v = all(ElementType::F4E2M1, &[0x21, 0xF7], 4);
        assert_eq!(v, [0.5, 1.0, 6.0, -6.0]);
    }
}
