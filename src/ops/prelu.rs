//! PRelu-1: `x < 0 ? slope · x : x`, elementwise.
//!
//! Spec: <https://docs.openvino.ai/2026/documentation/openvino-ir-format/operation-sets/operation-specs/activation/prelu-1.html>
//!
//! Inputs: `data` and `slope`, of one floating-point element type (the spec's; integers are
//! refused). The output has `data`'s type and
//! shape. The slope broadcasts by the spec's rule: a 1-D slope whose length is `data`'s
//! channel count (dimension 1, `data` of rank ≥ 2) applies per channel; any other slope must
//! broadcast numpy-style onto `data`'s shape (a scalar, a 1-D slope of the last dimension's
//! length, a slope of `data`'s rank…). When a 1-D slope's length is both the channel count and
//! the last dimension, it applies per channel (OpenVINO's reference does the same).
//!
//! Decisions: floats are `x · slope` in the type for negative `x` (NaN and −0 pass unchanged,
//! as `x < 0` is false for them); f16 and bf16 are computed in f32 and rounded once.

use super::{Arity, EvalCx, EvalError, InferCx, Op, OpDef};
use crate::broadcast;
use crate::shape::TensorType;
use crate::tensor::{Element, Tensor, TypeSet};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PRelu;

pub const DEF: OpDef = OpDef {
    name: "PRelu",
    version: 1,
    inputs: Arity::exactly(2),
    outputs: Arity::exactly(1),
    parse: |_| Ok(Box::new(PRelu)),
};

/// The slope's shape as numpy aligns it onto `data`: `[C, 1, …, 1]` for a per-channel slope.
fn slope_shape(data: &[usize], slope: &[usize]) -> Vec<usize> {
    match slope {
        [c] if data.len() >= 2 && *c == data[1] => {
            let mut s = vec![1; data.len() - 1];
            s[0] = *c;
            s
        }
        _ => slope.to_vec(),
    }
}

/// One element of PRelu, per class of type.
trait PreluElem: Element {
    fn prelu(x: Self, s: Self) -> Self;
}

macro_rules! float_prelu {
    ($($t:ty)*) => {$(
        impl PreluElem for $t {
            #[inline(always)]
            fn prelu(x: Self, s: Self) -> Self {
                if x < 0.0 { x * s } else { x }
            }
        }
    )*};
}
float_prelu!(f32 f64);

macro_rules! narrow_prelu {
    ($($t:ty)*) => {$(
        impl PreluElem for $t {
            #[inline(always)]
            fn prelu(x: Self, s: Self) -> Self {
                let (a, b) = (x.to_f32(), s.to_f32());
                if a < 0.0 { <$t>::from_f32(a * b) } else { x }
            }
        }
    )*};
}
narrow_prelu!(half::f16 half::bf16);

impl PRelu {
    /// The op on tensors.
    pub fn eval_tensors(&self, x: &Tensor, s: &Tensor) -> Result<Tensor, EvalError> {
        let ty = x.element_type();
        if ty != s.element_type() {
            return Err(EvalError::Types(ty, s.element_type()));
        }
        let out = x.shape().to_vec();
        let aligned = slope_shape(&out, s.shape());
        let (Some(sx), Some(ss)) = (
            broadcast::strides_into(&out, &out),
            broadcast::strides_into(&aligned, &out),
        ) else {
            return Err(EvalError::Invalid(format!(
                "the slope's shape {:?} does not broadcast onto the data's {:?}",
                s.shape(),
                out
            )));
        };
        crate::dispatch!(float: ty, T => run::<T>(x, s, &out, &sx, &ss),
            _ => Err(EvalError::UnsupportedType { op: "PRelu".into(), ty }))
    }
}

fn run<T: PreluElem>(
    x: &Tensor,
    s: &Tensor,
    out: &[usize],
    sx: &[usize],
    ss: &[usize],
) -> Result<Tensor, EvalError> {
    let (Some(xd), Some(sd)) = (
        crate::ops::kernel::contiguous::<T>(x),
        crate::ops::kernel::contiguous::<T>(s),
    ) else {
        return Err(EvalError::Internal("PRelu's inputs changed type"));
    };
    let mut data: Vec<T> = Vec::with_capacity(xd.len());
    broadcast::walk(out, [sx, ss], |_, len, [ox, os], [_, step]| {
        for i in 0..len {
            data.push(T::prelu(xd[ox + i], sd[os + i * step]));
        }
    });
    crate::ops::kernel::tensor_from::<T>(out, data)
}

impl Op for PRelu {
    fn def(&self) -> Option<&'static OpDef> {
        Some(&DEF)
    }

    fn infer(&self, cx: &mut InferCx<'_>) -> Option<Vec<TensorType>> {
        cx.require(0..2, TypeSet::FLOAT)?;
        let (x, s) = (cx.input(0), cx.input(1));
        let ty = super::logic::same_type(cx, x.element_type, s.element_type)?;
        // A static slope must fit the data, per channel or numpy-style.
        if let (Some(xd), Some(sd)) = (x.shape.to_tensor_dims(), s.shape.to_tensor_dims()) {
            let aligned = slope_shape(&xd, &sd);
            if broadcast::strides_into(&aligned, &xd).is_none() {
                return cx.invalid(
                    1,
                    format!(
                        "the slope's shape {} does not broadcast onto the data's {} (per channel: a 1-D slope of the data's dimension 1)",
                        s.shape, x.shape
                    ),
                );
            }
        }
        Some(vec![TensorType::new(ty, x.shape.clone())])
    }

    fn eval(&self, cx: &EvalCx<'_>) -> Result<Vec<Tensor>, EvalError> {
        let (x, s) = (cx.tensor(0)?, cx.tensor(1)?);
        cx.reserve(x.element_type(), x.shape().iter().product())?;
        Ok(vec![self.eval_tensors(&x, &s)?])
    }
}
