//! `serde::Serialize` for tensors and run outputs, so `insta::assert_yaml_snapshot!` and
//! `assert_json_snapshot!` take them directly.
//!
//! An [`Output`] serialises as `{name, dtype, shape, values}` and a [`Tensor`] as
//! `{dtype, shape, values}`: `dtype` is the IR type name (`f32`, `bf16`, `i64`, ...), `values`
//! the elements in row-major order. Integers are exact. A finite float is the f64 nearest the
//! shortest decimal that reads back to it in its own type, so every format prints that decimal
//! (an f16 0.1 is `0.1`, not `0.0999755859375`); NaN and infinities, which JSON cannot hold,
//! are the strings `"nan"`, `"inf"` and `"-inf"`.

use serde::ser::{Serialize, SerializeSeq, SerializeStruct, Serializer};

use super::text::{TextValue, special};
use crate::exec::Output;
use crate::num::Num;
use crate::tensor::Tensor;

/// One element as serialisers and reports hold it: an exact integer, a boolean, the f64 nearest
/// a float's shortest decimal in its own type, or NaN/infinity spelled `nan`, `inf`, `-inf`.
/// `Display` gives the text form of the original element.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scalar {
    Int(i128),
    Float(f64),
    Bool(bool),
    Special(&'static str),
}

impl Scalar {
    pub fn of<T: TextValue>(x: T) -> Scalar {
        if T::TYPE == crate::ElementType::Boolean {
            return Scalar::Bool(matches!(x.to_num(), Num::Int(i) if i != 0));
        }
        match x.to_num() {
            Num::Int(i) => Scalar::Int(i),
            Num::Float(f) => match x.finite_f64() {
                Some(v) => Scalar::Float(v),
                None => Scalar::Special(special(f).unwrap_or("nan")),
            },
        }
    }
}

impl std::fmt::Display for Scalar {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            Scalar::Int(i) => write!(f, "{i}"),
            // The nearest f64 of the shortest decimal prints as that decimal.
            Scalar::Float(x) => f.write_str(&x.text()),
            Scalar::Bool(b) => write!(f, "{b}"),
            Scalar::Special(s) => f.write_str(s),
        }
    }
}

impl Serialize for Scalar {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match *self {
            Scalar::Int(i) => {
                if let Ok(i) = i64::try_from(i) {
                    s.serialize_i64(i)
                } else if let Ok(u) = u64::try_from(i) {
                    s.serialize_u64(u)
                } else {
                    s.serialize_i128(i)
                }
            }
            Scalar::Float(x) => s.serialize_f64(x),
            Scalar::Bool(b) => s.serialize_bool(b),
            Scalar::Special(t) => s.serialize_str(t),
        }
    }
}

struct Values<'a>(&'a Tensor);

fn seq<T: TextValue, S: Serializer>(t: &Tensor, s: S) -> Result<S::Ok, S::Error> {
    let view = T::view(t);
    let mut out = s.serialize_seq(Some(t.len()))?;
    for &x in view.iter().flat_map(|v| v.iter()) {
        out.serialize_element(&Scalar::of(x))?;
    }
    out.end()
}

impl Serialize for Values<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let t = self.0;
        crate::dispatch!(any: t.element_type(), T => seq::<T, S>(t, s), _ => s.serialize_seq(Some(0))?.end())
    }
}

impl Serialize for Tensor {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut st = s.serialize_struct("Tensor", 3)?;
        st.serialize_field("dtype", &self.element_type().to_string())?;
        st.serialize_field("shape", self.shape())?;
        st.serialize_field("values", &Values(self))?;
        st.end()
    }
}

impl Serialize for Output {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut st = s.serialize_struct("Output", 4)?;
        st.serialize_field("name", &self.name)?;
        st.serialize_field("dtype", &self.tensor.element_type().to_string())?;
        st.serialize_field("shape", self.tensor.shape())?;
        st.serialize_field("values", &Values(&self.tensor))?;
        st.end()
    }
}

/// The text form ([`crate::io::text`]): summarised beyond 1000 elements; `{:#}` prints every
/// value.
impl std::fmt::Display for Output {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let options = super::text::TextOptions {
            full: f.alternate(),
        };
        f.write_str(&super::text::render(&self.name, &self.tensor, options))
    }
}

#[cfg(test)]
mod tests {
    use half::f16;
    use ndarray::arr1;

    use super::*;

    #[test]
    fn json_form() {
        let out = Output {
            name: "y".into(),
            tensor: std::sync::Arc::new(
                arr1(&[0.1f32, -0.0, f32::NAN, f32::INFINITY, f32::NEG_INFINITY])
                    .into_dyn()
                    .into(),
            ),
        };
        assert_eq!(
            serde_json::to_string(&out).unwrap(),
            r#"{"name":"y","dtype":"f32","shape":[5],"values":[0.1,-0.0,"nan","inf","-inf"]}"#
        );
        let t: Tensor = arr1(&[f16::from_f32(0.1), f16::MAX]).into_dyn().into();
        assert_eq!(
            serde_json::to_string(&t).unwrap(),
            r#"{"dtype":"f16","shape":[2],"values":[0.1,65500.0]}"#
        );
        let t: Tensor = arr1(&[u64::MAX, 0]).into_dyn().into();
        assert_eq!(
            serde_json::to_string(&t).unwrap(),
            r#"{"dtype":"u64","shape":[2],"values":[18446744073709551615,0]}"#
        );
        let t: Tensor = arr1(&[i64::MIN, -1]).into_dyn().into();
        assert_eq!(
            serde_json::to_string(&t).unwrap(),
            r#"{"dtype":"i64","shape":[2],"values":[-9223372036854775808,-1]}"#
        );
    }
}
