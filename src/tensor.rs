//! Tensors: an n-dimensional array of one of the element types ovir computes with.
//!
//! [`Element`] ties each Rust type to its [`ElementType`] and [`Tensor`] variant; the
//! [`dispatch!`](crate::dispatch) macro turns a runtime element type into a call of a generic
//! function, over a named type set (`numeric`, `float`, `int`, `any`). Those two are the only
//! places that list the types: ops are generic. [`TypeSet`] is the same sets as run-time
//! values, for inference to check an op's input types against.

use half::{bf16, f16};
use std::sync::{Arc, OnceLock};

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
    /// `boolean`: one byte per element.
    Bool(ArrayD<bool>),
}

mod sealed {
    /// Only the element types listed in this file are [`Element`](super::Element)s: each is
    /// plain data; all but `bool` are valid for every bit pattern (which
    /// [`le_slice`](super::le_slice) relies on, see [`Element::ANY_BITS`](super::Element)).
    pub trait Sealed {}
}

/// A Rust type that is an element type of a [`Tensor`] (the twelve listed here; sealed).
pub trait Element:
    sealed::Sealed + Copy + Default + Send + Sync + PartialEq + std::fmt::Debug + 'static
{
    const TYPE: ElementType;
    /// Bytes per element.
    const SIZE: usize;
    /// Whether every bit pattern of `SIZE` bytes is a valid value (all but `bool`), so that
    /// little-endian bytes can be read in place.
    const ANY_BITS: bool = true;
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
                const ANY_BITS: bool = !matches!(ElementType::$et, ElementType::Boolean);
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
                    <$t as LeBytes>::from_le(bytes)
                }
                fn put_le(self, out: &mut Vec<u8>) {
                    <$t as LeBytes>::put_le(self, out)
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

            /// The same elements, row-major, under `shape` (as many elements), without a copy
            /// when the buffer is in row-major order (it is for every tensor ovir makes); the
            /// tensor itself back if `shape` does not hold its elements.
            pub fn into_shape(self, shape: &[usize]) -> Result<Tensor, Tensor> {
                match self {
                    $(Tensor::$variant(a) => {
                        let a = if a.is_standard_layout() { a } else { a.as_standard_layout().into_owned() };
                        // Checked on a view first: a standard-layout array that reshapes as a
                        // view reshapes as itself (whose error would not give it back).
                        if a.view().into_shape_with_order(ndarray::IxDyn(shape)).is_err() {
                            return Err(Tensor::$variant(a));
                        }
                        a.into_shape_with_order(ndarray::IxDyn(shape))
                            .map(Tensor::$variant)
                            .map_err(|_| Tensor::$variant(ndarray::ArrayD::default(ndarray::IxDyn(&[0]))))
                    })*
                }
            }
        }

    };
}

/// Calls `$body` with `$T` bound to the Rust type of element type `$e` (an [`ElementType`])
/// when it is in the named set, or evaluates `$other` for any other element type. The one
/// runtime → generic dispatch point; its sets are [`TypeSet`]'s (a test keeps them equal):
///
/// * `numeric`: f16, bf16, f32, f64 and the eight integer types;
/// * `float`: f16, bf16, f32, f64; `int`: i8 … u64;
/// * `any`: `numeric` and `boolean`.
///
/// ```
/// use ovir::ElementType;
/// let size = ovir::dispatch!(numeric: ElementType::I16, T => std::mem::size_of::<T>(), _ => 0);
/// assert_eq!(size, 2);
/// ```
#[macro_export]
macro_rules! dispatch {
    (@arms $e:expr, $T:ident, $body:expr, $other:expr, [$($v:ident => $t:ty),*]) => {
        match $e {
            $($crate::ElementType::$v => {
                type $T = $t;
                $body
            })*
            #[allow(unreachable_patterns)]
            _ => $other,
        }
    };
    (float: $e:expr, $T:ident => $body:expr, _ => $other:expr) => {
        $crate::dispatch!(@arms $e, $T, $body, $other, [
            F16 => $crate::half::f16, Bf16 => $crate::half::bf16, F32 => f32, F64 => f64
        ])
    };
    (int: $e:expr, $T:ident => $body:expr, _ => $other:expr) => {
        $crate::dispatch!(@arms $e, $T, $body, $other, [
            I8 => i8, I16 => i16, I32 => i32, I64 => i64, U8 => u8, U16 => u16, U32 => u32, U64 => u64
        ])
    };
    (numeric: $e:expr, $T:ident => $body:expr, _ => $other:expr) => {
        $crate::dispatch!(@arms $e, $T, $body, $other, [
            F16 => $crate::half::f16, Bf16 => $crate::half::bf16, F32 => f32, F64 => f64,
            I8 => i8, I16 => i16, I32 => i32, I64 => i64, U8 => u8, U16 => u16, U32 => u32, U64 => u64
        ])
    };
    (any: $e:expr, $T:ident => $body:expr, _ => $other:expr) => {
        $crate::dispatch!(@arms $e, $T, $body, $other, [
            F16 => $crate::half::f16, Bf16 => $crate::half::bf16, F32 => f32, F64 => f64,
            I8 => i8, I16 => i16, I32 => i32, I64 => i64, U8 => u8, U16 => u16, U32 => u32, U64 => u64,
            Boolean => bool
        ])
    };
}

/// A set of element types, as ops declare what they accept (the sets of [`dispatch!`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TypeSet(u32);

impl TypeSet {
    const fn of(types: &[ElementType]) -> TypeSet {
        let mut bits = 0;
        let mut i = 0;
        while i < types.len() {
            bits |= 1 << types[i] as u32;
            i += 1;
        }
        TypeSet(bits)
    }

    pub const FLOAT: TypeSet = TypeSet::of(&[
        ElementType::F16,
        ElementType::Bf16,
        ElementType::F32,
        ElementType::F64,
    ]);
    pub const INT: TypeSet = TypeSet::of(&[
        ElementType::I8,
        ElementType::I16,
        ElementType::I32,
        ElementType::I64,
        ElementType::U8,
        ElementType::U16,
        ElementType::U32,
        ElementType::U64,
    ]);
    pub const NUMERIC: TypeSet = TypeSet(Self::FLOAT.0 | Self::INT.0);
    /// Floats and signed integers.
    pub const SIGNED: TypeSet = TypeSet(
        Self::FLOAT.0
            | TypeSet::of(&[
                ElementType::I8,
                ElementType::I16,
                ElementType::I32,
                ElementType::I64,
            ])
            .0,
    );
    pub const BOOLEAN: TypeSet = TypeSet::of(&[ElementType::Boolean]);
    /// Every type a tensor can hold.
    pub const ANY: TypeSet = TypeSet(Self::NUMERIC.0 | Self::BOOLEAN.0);

    pub fn contains(self, t: ElementType) -> bool {
        self.0 & (1 << t as u32) != 0
    }

    pub const fn union(self, other: TypeSet) -> TypeSet {
        TypeSet(self.0 | other.0)
    }

    /// The set's name as docs and messages use it, or its types listed.
    pub fn describe(self) -> String {
        for (set, name) in [
            (TypeSet::ANY, "any numeric type or boolean"),
            (TypeSet::NUMERIC, "any numeric type"),
            (TypeSet::FLOAT, "floating-point types"),
            (TypeSet::INT, "integer types"),
            (TypeSet::SIGNED, "floating-point and signed integer types"),
            (TypeSet::BOOLEAN, "boolean"),
        ] {
            if self == set {
                return name.to_owned();
            }
        }
        self.types()
            .map(|t| t.name())
            .collect::<Vec<_>>()
            .join(", ")
    }

    pub fn types(self) -> impl Iterator<Item = ElementType> {
        ElementType::all().filter(move |&t| self.contains(t))
    }
}

/// Reading and writing one value as little-endian bytes.
trait LeBytes: Sized {
    fn from_le(bytes: &[u8]) -> Self;
    fn put_le(self, out: &mut Vec<u8>);
}

macro_rules! le_bytes {
    ($($t:ty)*) => {$(
        impl LeBytes for $t {
            fn from_le(bytes: &[u8]) -> Self {
                let mut b = [0u8; std::mem::size_of::<$t>()];
                b.copy_from_slice(bytes);
                <$t>::from_le_bytes(b)
            }
            fn put_le(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
        }
    )*};
}
le_bytes!(f16 bf16 f32 f64 i8 i16 i32 i64 u8 u16 u32 u64);

/// A boolean byte: any non-zero byte is true (as OpenVINO reads `boolean` Consts).
impl LeBytes for bool {
    fn from_le(bytes: &[u8]) -> Self {
        bytes[0] != 0
    }
    fn put_le(self, out: &mut Vec<u8>) {
        out.push(self as u8);
    }
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
    bool => Bool, Boolean;
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
        byte_count(self.element_type(), self.shape())
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
        crate::dispatch!(any: et, T => build::<T>(shape, bytes), _ => None)
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
                // SAFETY: `Element` is sealed to plain integers, floats and `bool`: their bytes
                // are initialised and, on a little-endian host, already in file order (a
                // `bool` is the byte 0 or 1).
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
        crate::dispatch!(any: self.element_type(), T => go::<T>(self, w), _ => Ok(()))
    }

    /// The values as little-endian bytes, in logical (row-major) order.
    pub fn to_le_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(usize::try_from(self.bytes()).unwrap_or(0));
        // Writing to a Vec cannot fail.
        let _ = self.write_le(&mut out);
        out
    }
}

/// Bytes `shape`'s elements of `ty` take (packed types packed); `u64::MAX` on overflow.
fn byte_count(ty: ElementType, shape: &[usize]) -> u64 {
    shape
        .iter()
        .try_fold(1u64, |n, &d| n.checked_mul(d as u64))
        .and_then(|n| ty.storage_bytes(n))
        .unwrap_or(u64::MAX)
}

/// A value as execution holds it: a tensor, or bytes read where they lie: a Const's in the
/// memory-mapped weights file (packed types such as u4 stay packed until a Convert decodes
/// them), or an input's in the caller's memory ([`Value::borrowed`]). Elementwise kernels and
/// fused chains read such bytes in place; other ops read a copy.
#[derive(Clone, Debug)]
pub enum Value<'w> {
    Tensor(Arc<Tensor>),
    Mapped(Mapped<'w>),
}

/// Little-endian bytes of `ty` elements in row-major order, with their shape: a Const's in the
/// weights file, or an input's the caller lends.
#[derive(Clone, Debug)]
pub struct Mapped<'w> {
    pub ty: ElementType,
    pub shape: Vec<usize>,
    pub bytes: &'w [u8],
    /// Where the one copy an op that needs a tensor reads is kept, for values read more than
    /// once (execution sets it for borrowed inputs): `None` copies at each read.
    pub(crate) copy: Option<&'w OnceLock<Option<Arc<Tensor>>>>,
}

impl<'w> Mapped<'w> {
    pub(crate) fn new(ty: ElementType, shape: Vec<usize>, bytes: &'w [u8]) -> Mapped<'w> {
        Mapped {
            ty,
            shape,
            bytes,
            copy: None,
        }
    }

    /// Whether the bytes are exactly `shape`'s elements, of a type a tensor holds (what a lent
    /// value must be; a view under `shape` too).
    pub fn holds(&self, shape: &[usize]) -> bool {
        TypeSet::ANY.contains(self.ty) && byte_count(self.ty, shape) == self.bytes.len() as u64
    }
}

impl<'w> Value<'w> {
    /// An input read in place from `bytes`: the little-endian elements of `ty` in row-major
    /// order under `shape` (bools are bytes, any nonzero byte true). `None` unless `ty` is a
    /// type a tensor holds and `bytes` is exactly that many elements. The bytes are only read;
    /// ops that need a tensor read one copy (see [`Model::run_values`](crate::Model::run_values)).
    pub fn borrowed(ty: ElementType, shape: &[usize], bytes: &'w [u8]) -> Option<Value<'w>> {
        let m = Mapped::new(ty, shape.to_vec(), bytes);
        m.holds(shape).then_some(Value::Mapped(m))
    }

    /// An input read in place from a row-major slice under `shape` (`None` if the counts
    /// differ, or on a big-endian host, where the bytes are not in the order values are read).
    pub fn from_slice<T: Element>(shape: &[usize], data: &'w [T]) -> Option<Value<'w>> {
        if !cfg!(target_endian = "little") {
            return None;
        }
        // SAFETY: `Element` is sealed to plain integers, floats (f16/bf16 are transparent
        // u16s) and `bool`: `data` is initialised bytes, `size_of_val` of them.
        let bytes = unsafe {
            std::slice::from_raw_parts(data.as_ptr() as *const u8, std::mem::size_of_val(data))
        };
        Value::borrowed(T::TYPE, shape, bytes)
    }
}

impl Value<'_> {
    pub fn element_type(&self) -> ElementType {
        match self {
            Value::Tensor(t) => t.element_type(),
            Value::Mapped(m) => m.ty,
        }
    }

    pub fn shape(&self) -> &[usize] {
        match self {
            Value::Tensor(t) => t.shape(),
            Value::Mapped(m) => &m.shape,
        }
    }

    /// Bytes the value takes as a tensor (`u64::MAX` on overflow).
    pub fn bytes(&self) -> u64 {
        byte_count(self.element_type(), self.shape())
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.shape().iter().product()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The value as a tensor: a tensor as it is, a Const's bytes decoded (`None` for element
    /// types a tensor cannot hold, such as u4).
    pub fn to_tensor(&self) -> Option<Arc<Tensor>> {
        match self {
            Value::Tensor(t) => Some(t.clone()),
            Value::Mapped(m) => {
                let copy = || Tensor::from_le_bytes(m.ty, &m.shape, m.bytes).map(Arc::new);
                match m.copy {
                    Some(kept) => kept.get_or_init(copy).clone(),
                    None => copy(),
                }
            }
        }
    }
}

/// Little-endian bytes as elements: borrowed in place when the host is little-endian, every
/// bit pattern is a value of `T` (not `bool`) and the bytes are aligned for `T` (as weights in
/// a memory-mapped file usually are), decoded otherwise. Trailing bytes short of a whole
/// element are ignored.
pub fn le_slice<T: Element>(bytes: &[u8]) -> std::borrow::Cow<'_, [T]> {
    if cfg!(target_endian = "little") && T::ANY_BITS {
        // SAFETY: `Element` is sealed to primitive integers and floats (f16/bf16 are
        // transparent u16s) and `bool` (excluded by `ANY_BITS`): every bit pattern is a valid
        // value of the others.
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
    use super::TypeSet;
    use crate::ElementType;

    /// The sets of `dispatch!` are those of `TypeSet`.
    #[test]
    fn dispatch_sets_are_the_type_sets() {
        for t in ElementType::all() {
            let float =
                crate::dispatch!(float: t, T => Some(<T as super::Element>::TYPE), _ => None);
            let int = crate::dispatch!(int: t, T => Some(<T as super::Element>::TYPE), _ => None);
            let numeric =
                crate::dispatch!(numeric: t, T => Some(<T as super::Element>::TYPE), _ => None);
            let any = crate::dispatch!(any: t, T => Some(<T as super::Element>::TYPE), _ => None);
            for (got, set) in [
                (float, TypeSet::FLOAT),
                (int, TypeSet::INT),
                (numeric, TypeSet::NUMERIC),
                (any, TypeSet::ANY),
            ] {
                assert_eq!(got.is_some(), set.contains(t), "{t} in {set:?}");
                if let Some(g) = got {
                    assert_eq!(g, t);
                }
            }
        }
    }

    #[test]
    fn boolean_bytes_read_any_non_zero_as_true() {
        let bytes = [0u8, 1, 2, 255, 0];
        let got = super::le_slice::<bool>(&bytes);
        assert_eq!(&*got, &[false, true, true, true, false]);
        let t = super::Tensor::from_le_bytes(ElementType::Boolean, &[5], &bytes).unwrap();
        assert_eq!(t.to_le_bytes(), vec![0, 1, 1, 1, 0]);
    }

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
