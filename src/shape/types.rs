//! What inference knows of a value flowing along an edge: its element type and partial shape,
//! and, when they are small and known, its elements ([`TensorType::value`]) or interval bounds
//! of them ([`TensorType::bounds`]) — what ShapeOf → Gather → Concat → Reshape subgraphs need to
//! infer exact shapes, as OpenVINO's `evaluate_lower`/`evaluate_upper` do.

use std::borrow::Cow;
use std::sync::{Arc, OnceLock};

use crate::dtype::ElementType;
use crate::shape::{Dim, PartialShape};
use crate::tensor::Tensor;

/// Values with at most this many elements are carried by inference (and folded when they are
/// computed from constants); larger ones are left to execution.
pub const VALUE_LIMIT: usize = 4096;

/// The type of a value flowing along an edge.
#[derive(Clone, Debug)]
pub struct TensorType {
    pub element_type: ElementType,
    pub shape: PartialShape,
    /// The elements, when known at inference (Consts and what is computed from them, up to
    /// [`VALUE_LIMIT`] elements): see [`value`](TensorType::value).
    known: Known,
    /// Bounds of each element of an integer value that is not known exactly (a shape read by
    /// ShapeOf from dynamic dims, and what is computed from it).
    pub bounds: Option<Arc<Bounds>>,
}

/// A known value: a tensor, or a Const's bytes decoded when first read (most Consts' values
/// are never read: decoding every small one cost a large model's check 6%).
#[derive(Clone, Debug, Default)]
enum Known {
    #[default]
    None,
    Tensor(Arc<Tensor>),
    Mapped {
        weights: Option<Arc<crate::weights::Weights>>,
        offset: u64,
        decoded: OnceLock<Option<Arc<Tensor>>>,
    },
}

impl PartialEq for TensorType {
    fn eq(&self, other: &TensorType) -> bool {
        self.element_type == other.element_type
            && self.shape == other.shape
            && self.bounds == other.bounds
            && self.value() == other.value()
    }
}

impl TensorType {
    pub fn new(element_type: ElementType, shape: PartialShape) -> TensorType {
        TensorType {
            element_type,
            shape,
            known: Known::None,
            bounds: None,
        }
    }

    /// A known value (its type and shape are the tensor's).
    pub fn of_value(t: Tensor) -> TensorType {
        let shape = PartialShape::of_tensor(t.shape());
        TensorType {
            element_type: t.element_type(),
            shape,
            known: Known::Tensor(Arc::new(t)),
            bounds: None,
        }
    }

    /// A Const's type whose value is its bytes at `offset` in `weights` (decoded when read; no
    /// weights for a Const of no bytes).
    pub fn of_const(
        element_type: ElementType,
        shape: PartialShape,
        weights: Option<Arc<crate::weights::Weights>>,
        offset: u64,
    ) -> TensorType {
        TensorType {
            element_type,
            shape,
            known: Known::Mapped {
                weights,
                offset,
                decoded: OnceLock::new(),
            },
            bounds: None,
        }
    }

    /// The value, when it is known.
    pub fn value(&self) -> Option<&Arc<Tensor>> {
        match &self.known {
            Known::None => None,
            Known::Tensor(t) => Some(t),
            Known::Mapped {
                weights,
                offset,
                decoded,
            } => decoded
                .get_or_init(|| {
                    let shape = self.shape.to_tensor_dims()?;
                    let n = shape
                        .iter()
                        .try_fold(1u64, |a, &d| a.checked_mul(d as u64))?;
                    let needed = self.element_type.storage_bytes(n)?;
                    let bytes = match weights {
                        _ if needed == 0 => &[][..],
                        Some(w) => w.bytes(*offset, needed)?,
                        None => return None,
                    };
                    Tensor::from_le_bytes(self.element_type, &shape, bytes).map(Arc::new)
                })
                .as_ref(),
        }
    }

    /// Whether the value is known (without decoding a Const's bytes).
    pub fn has_value(&self) -> bool {
        !matches!(self.known, Known::None)
    }

    /// Sets the value, or forgets it.
    pub fn set_value(&mut self, value: Option<Arc<Tensor>>) {
        self.known = value.map_or(Known::None, Known::Tensor);
    }

    /// The value's elements as intervals: exact for a known integer value, else the bounds.
    pub fn int_bounds(&self) -> Option<Cow<'_, Bounds>> {
        if let Some(v) = self.value() {
            return Bounds::exact(v).map(Cow::Owned);
        }
        self.bounds.as_deref().map(Cow::Borrowed)
    }

    /// The known value as i64s (an integer value only).
    pub fn int_values(&self) -> Option<Vec<i64>> {
        self.value().and_then(|v| int_values(v))
    }
}

/// The elements of an integer tensor as i64s (u64 values above `i64::MAX` are refused).
pub fn int_values(t: &Tensor) -> Option<Vec<i64>> {
    fn go<T: crate::num::Int>(t: &Tensor) -> Option<Vec<i64>> {
        let v = T::view(t)?;
        v.iter().map(|&x| i64::try_from(x.to_i128()).ok()).collect()
    }
    crate::dispatch!(int: t.element_type(), T => go::<T>(t), _ => None)
}

/// Interval bounds of each element of an integer value, row-major: element `i` lies in
/// `lo[i]..=hi[i]`, and `hi[i] == UNBOUNDED` means it has no upper bound (a `?` dim).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bounds {
    pub lo: Vec<i64>,
    pub hi: Vec<i64>,
}

/// The upper bound of an element that has none (OpenVINO uses the type's maximum the same way).
pub const UNBOUNDED: i64 = i64::MAX;

impl Bounds {
    /// Exact bounds of a known integer value.
    pub fn exact(t: &Tensor) -> Option<Bounds> {
        let v = int_values(t)?;
        Some(Bounds {
            lo: v.clone(),
            hi: v,
        })
    }

    /// The bounds of dims, as ShapeOf reads them.
    pub fn of_dims(dims: &[Dim]) -> Bounds {
        Bounds {
            lo: dims
                .iter()
                .map(|d| d.min().min(i64::MAX as u64) as i64)
                .collect(),
            hi: dims
                .iter()
                .map(|d| d.max().map_or(UNBOUNDED, |m| m.min(i64::MAX as u64) as i64))
                .collect(),
        }
    }

    pub fn len(&self) -> usize {
        self.lo.len()
    }

    pub fn is_empty(&self) -> bool {
        self.lo.is_empty()
    }

    /// Whether every element is known exactly.
    pub fn is_exact(&self) -> bool {
        self.lo == self.hi
    }

    /// Element `i` as a dimension, if its bounds are a valid one (non-negative).
    pub fn dim(&self, i: usize) -> Option<Dim> {
        let (lo, hi) = (self.lo[i], self.hi[i]);
        let lo = u64::try_from(lo.max(0)).ok()?;
        let hi = if hi == UNBOUNDED {
            None
        } else {
            Some(u64::try_from(hi).ok()?)
        };
        Dim::interval(lo, hi)
    }

    /// The elements at `indices`.
    pub fn gather(&self, indices: &[usize]) -> Option<Bounds> {
        Some(Bounds {
            lo: indices
                .iter()
                .map(|&i| self.lo.get(i).copied())
                .collect::<Option<_>>()?,
            hi: indices
                .iter()
                .map(|&i| self.hi.get(i).copied())
                .collect::<Option<_>>()?,
        })
    }

    /// A value carrying these bounds: exact ones become the value itself.
    pub fn into_type(self, element_type: ElementType, shape: PartialShape) -> TensorType {
        let mut t = TensorType::new(element_type, shape);
        if self.is_exact()
            && let Some(v) = ints_tensor(element_type, &t.shape, &self.lo)
        {
            t.set_value(Some(Arc::new(v)));
        } else {
            t.bounds = Some(Arc::new(self));
        }
        t
    }
}

/// An integer tensor of `ty` and static `shape` holding `values` (`None` if a value does not
/// fit the type, or the shape is not static).
pub fn ints_tensor(ty: ElementType, shape: &PartialShape, values: &[i64]) -> Option<Tensor> {
    int_tensor(ty, shape, values, false)
}

/// [`ints_tensor`], values beyond the type saturated to its extremes (as OpenVINO represents
/// bounds, [`UNBOUNDED`] as the type's maximum).
pub fn saturated_ints_tensor(
    ty: ElementType,
    shape: &PartialShape,
    values: &[i64],
) -> Option<Tensor> {
    int_tensor(ty, shape, values, true)
}

fn int_tensor(
    ty: ElementType,
    shape: &PartialShape,
    values: &[i64],
    saturate: bool,
) -> Option<Tensor> {
    fn go<T: crate::num::Int + TryFrom<i64>>(
        shape: &[usize],
        values: &[i64],
        saturate: bool,
    ) -> Option<Tensor> {
        let v: Vec<T> = values
            .iter()
            .map(|&x| match T::try_from(x) {
                Ok(v) => Some(v),
                Err(_) if saturate => Some(if x < 0 { T::MIN } else { T::MAX }),
                Err(_) => None,
            })
            .collect::<Option<_>>()?;
        ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(shape), v)
            .ok()
            .map(T::wrap)
    }
    let shape = shape.to_tensor_dims()?;
    crate::dispatch!(int: ty, T => go::<T>(&shape, values, saturate), _ => None)
}
