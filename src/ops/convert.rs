//! Convert-1: element type conversion.
//!
//! Spec: <https://docs.openvino.ai/2026/documentation/openvino-ir-format/operation-sets/operation-specs/type/convert-1.html>
//!
//! Attributes: `destination_type` (mandatory; a concrete element type name, any case).
//! Ports: one input, one output of the input's shape.
//!
//! `ov.save_model` writes every f32 Const as an f16 Const followed by a Convert to f32 (with a
//! `decompression` rt_info marker), so Convert is needed to run almost any saved model; weight
//! compression writes u4/i4/nf4/f8 Consts followed by a Convert, which decodes them
//! ([`super::packed`]).
//!
//! Types: from any of f16, bf16, f32, f64, i8, i16, i32, i64, u8, u16, u32, u64, boolean, and
//! from the packed weight types u1, u2, u4, i4, nf4, f4e2m1, f8e4m3, f8e5m2, f8e8m0 (a Const's
//! bytes); to any of the first thirteen (to packed types: `check` says ovir cannot run it).
//! * integer → integer: two's complement wrap-around ("congruent modulo 2^N", as the spec says
//!   for negative values to unsigned types).
//! * integer or float → float: rounded once to nearest even (to f16 and bf16 through an f32
//!   rounded to odd, which makes the second rounding exact).
//! * float → integer: truncated toward zero. Out-of-range values saturate to the type's minimum
//!   or maximum, and NaN becomes 0. (The spec leaves these undefined; OpenVINO's x86 reference
//!   returns INT_MIN-like garbage. Saturation is portable and what Rust's `as` does.)
//! * float → float widening is exact; ±inf, NaN and −0 are kept.
//! * → boolean: anything but zero is true, NaN included (−0 is false); boolean → numbers: 0
//!   or 1.
//!
//! Bounds of integer shape values pass through an integer → integer Convert that keeps them.

use std::sync::Arc;

use super::binary::Fusable;
use super::kernel;
use super::{Arity, AttrError, Attrs, EvalCx, EvalError, InferCx, Op, OpDef, packed};
use crate::broadcast::AutoBroadcast;
use crate::dtype::ElementType;
use crate::error::ErrorKind;
use crate::num::{Cast, Num};
use crate::shape::TensorType;
use crate::shape::types::Bounds;
use crate::tensor::{Element, Tensor, TypeSet, Value};

#[derive(Clone, Debug, PartialEq)]
pub struct Convert {
    pub destination_type: ElementType,
}

pub const DEF: OpDef = OpDef {
    name: "Convert",
    version: 1,
    inputs: Arity::exactly(1),
    outputs: Arity::exactly(1),
    parse,
};

fn parse(a: &Attrs) -> Result<Box<dyn Op>, Vec<AttrError>> {
    let destination_type = a
        .parse_required("destination_type", |t| {
            match super::parse_element_type(t)? {
                ElementType::Dynamic => {
                    Err("a conversion needs a concrete destination type".into())
                }
                t => Ok(t),
            }
        })
        .map_err(|e| vec![e])?;
    Ok(Box::new(Convert { destination_type }))
}

/// Whether Convert computes from `t`.
fn source_ok(t: ElementType) -> bool {
    TypeSet::ANY.contains(t) || packed::decodes(t) || t == ElementType::Dynamic
}

impl Op for Convert {
    fn def(&self) -> Option<&'static OpDef> {
        Some(&DEF)
    }

    fn fusable(&self) -> Option<&dyn Fusable> {
        Some(self)
    }

    fn infer(&self, cx: &mut InferCx<'_>) -> Option<Vec<TensorType>> {
        let input = cx.input(0);
        let to = self.destination_type;
        if !source_ok(input.element_type) {
            cx.report(ErrorKind::CannotRunType {
                op: "Convert".into(),
                ty: input.element_type,
            });
        }
        if !TypeSet::ANY.contains(to) {
            cx.report(ErrorKind::CannotRunType {
                op: "Convert".into(),
                ty: to,
            });
        }
        let mut out = TensorType::new(to, input.shape.clone());
        if !input.has_value()
            && TypeSet::INT.contains(to)
            && let Some(b) = input.bounds.as_deref()
            && b.lo.iter().chain(&b.hi).all(|&v| fits(v, to))
        {
            out.bounds = Some(Arc::new(Bounds::clone(b)));
        }
        Some(vec![out])
    }

    fn eval(&self, cx: &EvalCx<'_>) -> Result<Vec<Tensor>, EvalError> {
        let to = self.destination_type;
        let v = cx.value(0);
        cx.reserve(to, v.len())?;
        let out = match v {
            Value::Mapped(m) if packed::decodes(m.ty) => decode(m.ty, m.bytes, &m.shape, to),
            // Read in place: a tensor, a Const's bytes or a lent input's.
            _ => crate::dispatch!(any: v.element_type(), S => {
                kernel::value_data::<S>(v).and_then(|data| converted(&data, v.shape(), to))
            }, _ => None),
        };
        out.ok_or_else(|| EvalError::UnsupportedType {
            op: "Convert".into(),
            ty: if TypeSet::ANY.contains(to) {
                v.element_type()
            } else {
                to
            },
        })
        .map(|t| vec![t])
    }
}

/// A Convert joins fused groups: the parts of the group on either side of it are computed in
/// their own element types, and its tiles converted between them (`exec::group`).
impl Fusable for Convert {
    fn auto_broadcast(&self) -> AutoBroadcast {
        AutoBroadcast::Numpy
    }

    fn data_inputs(&self) -> usize {
        1
    }

    fn converts_to(&self) -> Option<ElementType> {
        Some(self.destination_type)
    }
}

/// ConvertLike-1: input 0 converted to the element type of input 1 (whose values are not
/// read), by Convert-1's rules.
#[derive(Clone, Debug, PartialEq)]
pub struct ConvertLike;

pub const CONVERT_LIKE: OpDef = OpDef {
    name: "ConvertLike",
    version: 1,
    inputs: Arity::exactly(2),
    outputs: Arity::exactly(1),
    parse: |_| Ok(Box::new(ConvertLike)),
};

impl Op for ConvertLike {
    fn def(&self) -> Option<&'static OpDef> {
        Some(&CONVERT_LIKE)
    }

    fn infer(&self, cx: &mut InferCx<'_>) -> Option<Vec<TensorType>> {
        match cx.input(1).element_type {
            ElementType::Dynamic => Some(vec![TensorType::new(
                ElementType::Dynamic,
                cx.input(0).shape.clone(),
            )]),
            to => Convert {
                destination_type: to,
            }
            .infer(cx),
        }
    }

    fn eval(&self, cx: &EvalCx<'_>) -> Result<Vec<Tensor>, EvalError> {
        Convert {
            destination_type: cx.value(1).element_type(),
        }
        .eval(cx)
    }
}

impl Convert {
    /// The tensor `t` converted to `destination_type`.
    pub fn eval_tensor(&self, t: &Tensor) -> Result<Tensor, EvalError> {
        convert(t, self.destination_type).ok_or_else(|| EvalError::UnsupportedType {
            op: "Convert".into(),
            ty: t.element_type(),
        })
    }
}

/// Whether `v` is a value of integer type `t` (bounds that convert unchanged).
fn fits(v: i64, t: ElementType) -> bool {
    if v == crate::shape::types::UNBOUNDED {
        return t == ElementType::I64;
    }
    crate::dispatch!(int: t, T => T::try_from(v).is_ok(), _ => false)
}

/// Converts every element of `t` to `to` (`None` for a type a tensor cannot hold), by the tile
/// conversions of fused groups (`kernel::Converted`: compiled per vector unit, f16 through
/// F16C, in parallel chunks, the output streamed when large; each pair of types is compiled
/// for fusion across Converts anyway). [64,64,64,64] f32 → f16 took 34 ms at one thread by
/// way of [`Num`] block by block, f16 → f32 83 ms; now 2.5 and 2.6 ms.
pub fn convert(t: &Tensor, to: ElementType) -> Option<Tensor> {
    crate::dispatch!(any: t.element_type(), S => {
        converted(&kernel::contiguous::<S>(t)?, t.shape(), to)
    }, _ => None)
}

/// Row-major elements under `shape`, converted to `to`.
fn converted<S: Element + Cast>(data: &[S], shape: &[usize], to: ElementType) -> Option<Tensor> {
    crate::dispatch!(any: to, D => {
        let out = kernel::sourced::<D>(data.len(), &kernel::Converted(data));
        kernel::tensor_from::<D>(shape, out).ok()
    }, _ => None)
}

/// Decodes a packed Const's bytes into a tensor of `to`.
fn decode(ty: ElementType, bytes: &[u8], shape: &[usize], to: ElementType) -> Option<Tensor> {
    fn go<D: Cast>(ty: ElementType, bytes: &[u8], shape: &[usize]) -> Option<Tensor> {
        let n: usize = shape.iter().product();
        let v: Vec<D> = (0..n)
            .map(|i| packed::get(ty, bytes, i).map(D::from_num))
            .collect::<Option<_>>()?;
        ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(shape), v)
            .ok()
            .map(D::wrap)
    }
    crate::dispatch!(any: to, D => go::<D>(ty, bytes, shape), _ => None)
}

/// One value converted as Convert converts it (for tables and tests).
pub fn value<D: Element + Cast>(n: Num) -> D {
    D::from_num(n)
}
