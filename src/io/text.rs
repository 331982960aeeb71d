//! The text form of a tensor, as `ovir run` prints it: a header line `name  type  [shape]`,
//! then the values in row-major order. Floats use the shortest form that reads back to the same
//! value; `nan`, `inf`, `-inf` and `-0.0` are spelled the same on every platform; integers are
//! exact. Tensors of more than `limit` elements show the first and last `limit / 2`.

use std::fmt::Write;

use crate::tensor::{Element, Tensor};

/// One value as text.
pub trait TextValue {
    fn text(self) -> String;
}

macro_rules! ints {
    ($($t:ty)*) => {$(
        impl TextValue for $t {
            fn text(self) -> String {
                self.to_string()
            }
        }
    )*};
}
ints!(i8 i16 i32 i64 u8 u16 u32 u64);

fn float(x: f64, shortest: String) -> String {
    if x.is_nan() {
        "nan".into()
    } else if x.is_infinite() {
        if x > 0.0 { "inf".into() } else { "-inf".into() }
    } else {
        shortest
    }
}

impl TextValue for f32 {
    fn text(self) -> String {
        float(self as f64, format!("{self:?}"))
    }
}

impl TextValue for f64 {
    fn text(self) -> String {
        float(self, format!("{self:?}"))
    }
}

impl TextValue for half::f16 {
    fn text(self) -> String {
        // Every f16 is exactly an f32; the f32's shortest form reads back to the same f16.
        self.to_f32().text()
    }
}

impl TextValue for half::bf16 {
    fn text(self) -> String {
        self.to_f32().text()
    }
}

fn values<T: Element + TextValue>(t: &Tensor, limit: usize, out: &mut String) {
    let Some(v) = T::view(t) else { return };
    let n = v.len();
    out.push_str("  [");
    let shown: Vec<String> = if n <= limit {
        v.iter().map(|&x| x.text()).collect()
    } else {
        let head = limit / 2;
        let mut parts: Vec<String> = v.iter().take(head).map(|&x| x.text()).collect();
        parts.push(format!("... {} more ...", n - 2 * head));
        parts.extend(v.iter().skip(n - head).map(|&x| x.text()));
        parts
    };
    out.push_str(&shown.join(", "));
    out.push_str("]\n");
}

/// The text form of a named tensor.
pub fn render(name: &str, t: &Tensor, limit: usize) -> String {
    let mut out = String::new();
    let shape: Vec<String> = t.shape().iter().map(|d| d.to_string()).collect();
    let _ = writeln!(out, "{name}  {}  [{}]", t.element_type(), shape.join(","));
    crate::dispatch!(t.element_type(), T => values::<T>(t, limit, &mut out), _ => {});
    out
}
