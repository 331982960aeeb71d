//! Tensors: an n-dimensional array of one of the element types ovir computes with.
//!
//! [`Element`] ties each Rust type to its [`ElementType`] and [`Tensor`] variant; the
//! [`dispatch!`](crate::dispatch) macro turns a runtime element type into a call of a generic
//! function. Those two are the only places that list the types: ops are generic.

use half::{bf16, f16};
use ndarray::{ArrayD, ArrayViewD, IxDyn};

use crate::dtype::ElementType;

/// A tensor of any element type ovir runs.
#[derive(Clone, Debug, PartialEq)]
pub enum Tensor {
    F16(ArrayD<f16>),
    Bf16(ArrayD<bf16>),
    F32(ArrayD<f32>),
    F64(ArrayD<f64>),
    I8(ArrayD<i8>),
    I16(ArrayD<i16>),
    I32(ArrayD<i32>),
    I64(ArrayD<i64>),
    U8(ArrayD<u8>),
    U16(ArrayD<u16>),
    U32(ArrayD<u32>),
    U64(ArrayD<u64>),
}

mod sealed {
    /// Only the element types listed in this file are [`Element`](super::Element)s: each is
    /// plain data, valid for every bit pattern (which [`le_slice`](super::le_slice) relies on).
    pub trait Sealed {}
}

/// A Rust type that is an element type of a [`Tensor`] (the twelve listed here; sealed).
pub trait Element:
    sealed::Sealed + Copy + Send + Sync + PartialEq + std::fmt::Debug + 'static
{
    const TYPE: ElementType;
    /// Bytes per element.
    const SIZE: usize;
    fn wrap(a: ArrayD<Self>) -> Tensor;
    fn view(t: &Tensor) -> Option<ArrayViewD<'_, Self>>;
    fn unwrap(t: Tensor) -> Option<ArrayD<Self>>;
    /// Reads one value from little-endian bytes (`bytes.len() == SIZE`).
    fn from_le(bytes: &[u8]) -> Self;
    /// Appends the little-endian bytes of the value.
    fn put_le(self, out: &mut Vec<u8>);
}

macro_rules! elements {
    ($($t:ty => $variant:ident, $et:ident;)*) => {
        $(
            impl sealed::Sealed for $t {}

            impl Element for $t {
                const TYPE: ElementType = ElementType::$et;
                const SIZE: usize = std::mem::size_of::<$t>();
                fn wrap(a: ArrayD<Self>) -> Tensor {
                    Tensor::$variant(a)
                }
                fn view(t: &Tensor) -> Option<ArrayViewD<'_, Self>> {
                    match t {
                        Tensor::$variant(a) => Some(a.view()),
                        _ => None,
                    }
                }
                fn unwrap(t: Tensor) -> Option<ArrayD<Self>> {
                    match t {
                        Tensor::$variant(a) => Some(a),
                        _ => None,
                    }
                }
                fn from_le(bytes: &[u8]) -> Self {
                    let mut b = [0u8; std::mem::size_of::<$t>()];
                    b.copy_from_slice(bytes);
                    <$t>::from_le_bytes(b)
                }
                fn put_le(self, out: &mut Vec<u8>) {
                    out.extend_from_slice(&self.to_le_bytes());
                }
            }
        )*

        impl Tensor {
            pub fn element_type(&self) -> ElementType {
                match self {
                    $(Tensor::$variant(_) => ElementType::$et,)*
                }
            }

            pub fn shape(&self) -> &[usize] {
                match self {
                    $(Tensor::$variant(a) => a.shape(),)*
                }
            }
        }

    };
}

/// Calls `$body` with `$T` bound to the Rust type of element type `$e` (an [`ElementType`]),
/// or evaluates `$other` for element types ovir does not compute with. The one runtime →
/// generic dispatch point; it lists the same types as the `elements!` table below.
#[macro_export]
macro_rules! dispatch {
    ($e:expr, $T:ident => $body:expr, _ => $other:expr) => {
        match $e {
            $crate::ElementType::F16 => {
                type $T = $crate::half::f16;
                $body
            }
            $crate::ElementType::Bf16 => {
                type $T = $crate::half::bf16;
                $body
            }
            $crate::ElementType::F32 => {
                type $T = f32;
                $body
            }
            $crate::ElementType::F64 => {
                type $T = f64;
                $body
            }
            $crate::ElementType::I8 => {
                type $T = i8;
                $body
            }
            $crate::ElementType::I16 => {
                type $T = i16;
                $body
            }
            $crate::ElementType::I32 => {
                type $T = i32;
                $body
            }
            $crate::ElementType::I64 => {
                type $T = i64;
                $body
            }
            $crate::ElementType::U8 => {
                type $T = u8;
                $body
            }
            $crate::ElementType::U16 => {
                type $T = u16;
                $body
            }
            $crate::ElementType::U32 => {
                type $T = u32;
                $body
            }
            $crate::ElementType::U64 => {
                type $T = u64;
                $body
            }
            _ => $other,
        }
    };
}

elements! {
    f16 => F16, F16;
    bf16 => Bf16, Bf16;
    f32 => F32, F32;
    f64 => F64, F64;
    i8 => I8, I8;
    i16 => I16, I16;
    i32 => I32, I32;
    i64 => I64, I64;
    u8 => U8, U8;
    u16 => U16, U16;
    u32 => U32, U32;
    u64 => U64, U64;
}

impl<T: Element> From<ArrayD<T>> for Tensor {
    fn from(a: ArrayD<T>) -> Tensor {
        T::wrap(a)
    }
}

impl Tensor {
    /// The values as an array of `T`, if that is the tensor's element type.
    pub fn view<T: Element>(&self) -> Option<ArrayViewD<'_, T>> {
        T::view(self)
    }

    pub fn len(&self) -> usize {
        self.shape().iter().product()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes the elements take; `u64::MAX` if that overflows (which
    /// [`bytes_text`](crate::memory::bytes_text) reports as such).
    pub fn bytes(&self) -> u64 {
        self.element_type()
            .storage_bytes(self.len() as u64)
            .unwrap_or(u64::MAX)
    }

    /// A tensor from little-endian bytes (`bytes.len()` must be `elements × size`).
    pub fn from_le_bytes(et: ElementType, shape: &[usize], bytes: &[u8]) -> Option<Tensor> {
        fn build<T: Element>(shape: &[usize], bytes: &[u8]) -> Option<Tensor> {
            let n: usize = shape.iter().try_fold(1usize, |a, &d| a.checked_mul(d))?;
            if bytes.len() != n.checked_mul(T::SIZE)? {
                return None;
            }
            let data: Vec<T> = le_slice::<T>(bytes).into_owned();
            ArrayD::from_shape_vec(IxDyn(shape), data).ok().map(T::wrap)
        }
        crate::dispatch!(et, T => build::<T>(shape, bytes), _ => None)
    }

    /// Writes the values as little-endian bytes, in logical (row-major) order, without copying
    /// the whole tensor.
    pub fn write_le(&self, w: &mut dyn std::io::Write) -> std::io::Result<()> {
        fn go<T: Element>(t: &Tensor, w: &mut dyn std::io::Write) -> std::io::Result<()> {
            let Some(v) = T::view(t) else {
                return Ok(());
            };
            if cfg!(target_endian = "little")
                && let Some(s) = v.as_slice()
            {
                // SAFETY: `Element` is sealed to plain integers and floats: their bytes are
                // initialised and, on a little-endian host, already in file order.
                let bytes = unsafe {
                    std::slice::from_raw_parts(s.as_ptr() as *const u8, std::mem::size_of_val(s))
                };
                return w.write_all(bytes);
            }
            let mut buf = Vec::with_capacity(1 << 16);
            for &x in v.iter() {
                x.put_le(&mut buf);
                if buf.len() >= 1 << 16 {
                    w.write_all(&buf)?;
                    buf.clear();
                }
            }
            w.write_all(&buf)
        }
        crate::dispatch!(self.element_type(), T => go::<T>(self, w), _ => Ok(()))
    }

    /// The values as little-endian bytes, in logical (row-major) order.
    pub fn to_le_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(usize::try_from(self.bytes()).unwrap_or(0));
        // Writing to a Vec cannot fail.
        let _ = self.write_le(&mut out);
        out
    }
}

/// Little-endian bytes as elements: borrowed in place when the host is little-endian and the
/// bytes are aligned for `T` (as weights in a memory-mapped file usually are), decoded
/// otherwise. Trailing bytes short of a whole element are ignored.
pub fn le_slice<T: Element>(bytes: &[u8]) -> std::borrow::Cow<'_, [T]> {
    if cfg!(target_endian = "little") {
        // SAFETY: `Element` is sealed to primitive integers and floats (f16/bf16 are
        // transparent u16s), for which every bit pattern is a valid value.
        let (head, mid, _) = unsafe { bytes.align_to::<T>() };
        if head.is_empty() {
            return std::borrow::Cow::Borrowed(mid);
        }
    }
    std::borrow::Cow::Owned(bytes.chunks_exact(T::SIZE).map(T::from_le).collect())
}

/// The multi-dimensional index of row-major element `flat` in `shape`.
pub fn unravel(mut flat: usize, shape: &[usize]) -> Vec<usize> {
    let mut idx = vec![0; shape.len()];
    for (i, &d) in shape.iter().enumerate().rev() {
        if d > 0 {
            idx[i] = flat % d;
            flat /= d;
        }
    }
    idx
}

#[cfg(test)]
mod tests {
    #[test]
    fn le_slice_borrows_aligned_bytes_and_decodes_the_rest() {
        use std::borrow::Cow;
        let values = [1.5f32, -0.0, f32::NAN, 3.25e-40];
        let mut bytes = vec![0u8; 1];
        for v in values {
            bytes.extend_from_slice(&v.to_le_bytes());
        }
        // One of the two starts is 4-aligned, the other is not.
        for start in [0usize, 1] {
            let part = &bytes[start..];
            let got = super::le_slice::<f32>(part);
            let want: Vec<f32> = part
                .chunks_exact(4)
                .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
                .collect();
            let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&got), bits(&want));
            let aligned = (part.as_ptr() as usize).is_multiple_of(4);
            assert_eq!(
                matches!(got, Cow::Borrowed(_)),
                aligned && cfg!(target_endian = "little")
            );
        }
    }

    #[test]
    fn write_le_streams_row_major_bytes_of_any_layout() {
        let a = ndarray::Array2::from_shape_vec((2, 3), vec![1i32, -2, 3, -4, 5, -6])
            .unwrap()
            .into_dyn();
        for t in [
            super::Tensor::from(a.clone()),
            super::Tensor::from(a.t().to_owned()),
        ] {
            let mut out = Vec::new();
            t.write_le(&mut out).unwrap();
            let want: Vec<u8> = t
                .view::<i32>()
                .unwrap()
                .iter()
                .flat_map(|x| x.to_le_bytes())
                .collect();
            assert_eq!(out, want);
        }
        // A transposed (column-major) array is not one row-major slice.
        let t = super::Tensor::from(a.reversed_axes());
        assert!(t.view::<i32>().unwrap().as_slice().is_none());
        let mut out = Vec::new();
        t.write_le(&mut out).unwrap();
        let rows: Vec<i32> = out
            .chunks(4)
            .map(|c| i32::from_le_bytes(c.try_into().unwrap()))
            .collect();
        assert_eq!(rows, vec![1, -4, -2, 5, 3, -6]);
    }

    #[test]
    fn unravel_row_major() {
        assert_eq!(super::unravel(5, &[2, 3]), vec![1, 2]);
        assert_eq!(super::unravel(7, &[2, 1, 4]), vec![1, 0, 3]);
        assert_eq!(super::unravel(0, &[]), Vec::<usize>::new());
    }
}
