//! The text form of a tensor: what `ovir run` prints and what `Display` on an
//! [`Output`](crate::Output) gives, stable across platforms so snapshots never flap.
//!
//! ```text
//! y: f32 [2,3]
//!   [0] 1.0, -0.0, 2.5
//!   [1] nan, inf, -inf
//! ```
//!
//! * The header is `name: type [shape]` (type names as in IR: `f32`, `bf16`, `i64`, ...).
//! * Values follow one line per row of the last axis, prefixed by the row's index over the
//!   leading axes (`[1]`, `[0,2]`); a rank-1 tensor is one line with no prefix, a rank-0
//!   tensor its one value, a tensor with no elements `(no values)`.
//! * Floats use the shortest decimal that reads back to the same value **of their own type**
//!   (an f16 0.1 prints `0.1`), in Rust's `{:?}` style: always a `.` or an exponent (`1.0`,
//!   `1e-7`, `1e16`); `nan`, `inf`, `-inf` and `-0.0` are spelled so everywhere. Integers are
//!   exact.
//! * A tensor of more than [`THRESHOLD`] elements is summarised unless the full form is asked
//!   for: the first and last [`EDGE`] rows, and of each row the first and last [`EDGE`] values,
//!   with the number left out in between; a `summary:` line gives the element count, min and
//!   max (NaN excluded and counted) and an FNV-1a 64-bit digest of the little-endian data, so a
//!   snapshot still changes when a value it does not show changes.

use std::fmt::Write;

use half::{bf16, f16};

use crate::num::{Cast as ConvertElem, Num};
use crate::tensor::{Element, Tensor};

/// Tensors with more elements than this are summarised (as numpy does).
pub const THRESHOLD: usize = 1000;
/// Rows, and values in a row, shown at each end of a summarised tensor.
pub const EDGE: usize = 3;

/// How to print a tensor.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TextOptions {
    /// Print every value, however many.
    pub full: bool,
}

/// A value with a stable text form.
pub trait TextValue: ConvertElem {
    /// The value as text.
    fn text(self) -> String;
    /// The value as the f64 nearest its text form (for serialisers), or `None` for NaN and
    /// infinities.
    fn finite_f64(self) -> Option<f64>;
}

macro_rules! ints {
    ($($t:ty)*) => {$(
        impl TextValue for $t {
            fn text(self) -> String {
                self.to_string()
            }
            fn finite_f64(self) -> Option<f64> {
                Some(self as f64)
            }
        }
    )*};
}
ints!(i8 i16 i32 i64 u8 u16 u32 u64);

impl TextValue for bool {
    fn text(self) -> String {
        self.to_string()
    }
    fn finite_f64(self) -> Option<f64> {
        Some(self as u8 as f64)
    }
}

/// How NaN and the infinities are spelled; `None` for finite values.
pub fn special(x: f64) -> Option<&'static str> {
    if x.is_nan() {
        Some("nan")
    } else if x == f64::INFINITY {
        Some("inf")
    } else if x == f64::NEG_INFINITY {
        Some("-inf")
    } else {
        None
    }
}

impl TextValue for f32 {
    fn text(self) -> String {
        special(self as f64).map_or_else(|| format!("{self:?}"), str::to_owned)
    }
    fn finite_f64(self) -> Option<f64> {
        // The f64 nearest the f32's shortest decimal: serialisers then print that decimal.
        self.is_finite()
            .then(|| format!("{self:?}").parse().unwrap_or(self as f64))
    }
}

impl TextValue for f64 {
    fn text(self) -> String {
        special(self).map_or_else(|| format!("{self:?}"), str::to_owned)
    }
    fn finite_f64(self) -> Option<f64> {
        self.is_finite().then_some(self)
    }
}

/// The f64 nearest the shortest decimal that rounds back to `x` in the narrow type `T`
/// (f16 or bf16, whose values need at most 5 significant digits).
fn shortest_narrow<T: ConvertElem + PartialEq>(x: T, wide: f64) -> f64 {
    for digits in 0..8 {
        let s = format!("{wide:.digits$e}");
        if let Ok(d) = s.parse::<f64>()
            && T::from_num(Num::Float(d)) == x
        {
            // Keep the sign of zero, which the loop's first try already does.
            return d;
        }
    }
    wide
}

macro_rules! narrow {
    ($($t:ty)*) => {$(
        impl TextValue for $t {
            fn text(self) -> String {
                let wide = self.to_f64();
                special(wide)
                    .map_or_else(|| format!("{:?}", shortest_narrow(self, wide)), str::to_owned)
            }
            fn finite_f64(self) -> Option<f64> {
                let wide = self.to_f64();
                wide.is_finite().then(|| shortest_narrow(self, wide))
            }
        }
    )*};
}
narrow!(f16 bf16);

/// FNV-1a, 64 bits.
struct Fnv(u64);

impl Fnv {
    fn new() -> Fnv {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
    fn bytes(&mut self, b: &[u8]) {
        for &x in b {
            self.0 = (self.0 ^ x as u64).wrapping_mul(0x0100_0000_01b3);
        }
    }
}

/// The FNV-1a 64-bit digest of a tensor's little-endian data (row-major).
pub fn digest(t: &Tensor) -> u64 {
    fn go<T: Element>(t: &Tensor) -> u64 {
        T::view(t).map_or(Fnv::new().0, |v| digest_of(v.iter().copied()))
    }
    crate::dispatch!(any: t.element_type(), T => go::<T>(t), _ => Fnv::new().0)
}

/// The FNV-1a 64-bit digest of values' little-endian bytes.
fn digest_of<T: Element>(values: impl IntoIterator<Item = T>) -> u64 {
    let mut h = Fnv::new();
    let mut buf = Vec::with_capacity(8);
    for x in values {
        buf.clear();
        x.put_le(&mut buf);
        h.bytes(&buf);
    }
    h.0
}

fn less(a: Num, b: Num) -> bool {
    match (a, b) {
        (Num::Int(x), Num::Int(y)) => x < y,
        (Num::Float(x), Num::Float(y)) => x < y,
        _ => false,
    }
}

fn summary_line<T: TextValue>(values: &[T], out: &mut String) {
    let mut nan = 0usize;
    let mut range: Option<(T, T)> = None;
    for &x in values {
        let n = x.to_num();
        if matches!(n, Num::Float(f) if f.is_nan()) {
            nan += 1;
            continue;
        }
        range = Some(match range {
            None => (x, x),
            Some((lo, hi)) => (
                if less(n, lo.to_num()) { x } else { lo },
                if less(hi.to_num(), n) { x } else { hi },
            ),
        });
    }
    let _ = write!(out, "  summary: {} values", values.len());
    match range {
        Some((lo, hi)) => {
            let _ = write!(out, ", min {}, max {}", lo.text(), hi.text());
        }
        None => out.push_str(", all nan"),
    }
    if T::TYPE.is_float() && nan > 0 && range.is_some() {
        let _ = write!(out, ", {nan} nan");
    }
}

fn row<T: TextValue>(values: &[T], summarise: bool, out: &mut String) {
    let n = values.len();
    let parts: Vec<String> = if summarise && n > 2 * EDGE {
        let mut parts: Vec<String> = values[..EDGE].iter().map(|x| x.text()).collect();
        parts.push(format!("... {} more ...", n - 2 * EDGE));
        parts.extend(values[n - EDGE..].iter().map(|x| x.text()));
        parts
    } else {
        values.iter().map(|x| x.text()).collect()
    };
    out.push_str(&parts.join(", "));
}

/// A shape or an index as `[2,3]`.
pub fn dims_text(dims: &[usize]) -> String {
    let parts: Vec<String> = dims.iter().map(|d| d.to_string()).collect();
    format!("[{}]", parts.join(","))
}

fn values<T: TextValue>(t: &Tensor, options: TextOptions, out: &mut String) {
    let Some(v) = T::view(t) else { return };
    let v = v.as_standard_layout();
    let Some(data) = v.as_slice() else { return };
    let shape = t.shape();
    if data.is_empty() {
        out.push_str("  (no values)\n");
        return;
    }
    let summarise = !options.full && data.len() > THRESHOLD;
    if summarise {
        summary_line(data, out);
        let _ = writeln!(out, ", fnv1a64 {:016x}", digest_of(data.iter().copied()));
    }
    let Some((&width, lead)) = shape.split_last() else {
        let _ = writeln!(out, "  {}", data[0].text());
        return;
    };
    let rows = data.len() / width;
    let line = |r: usize, out: &mut String| {
        out.push_str("  ");
        if !lead.is_empty() {
            out.push_str(&dims_text(&crate::tensor::unravel(r, lead)));
            out.push(' ');
        }
        row(&data[r * width..(r + 1) * width], summarise, out);
        out.push('\n');
    };
    if summarise && rows > 2 * EDGE {
        (0..EDGE).for_each(|r| line(r, out));
        let _ = writeln!(out, "  ... {} more rows ...", rows - 2 * EDGE);
        (rows - EDGE..rows).for_each(|r| line(r, out));
    } else {
        (0..rows).for_each(|r| line(r, out));
    }
}

/// The text form of a named tensor.
pub fn render(name: &str, t: &Tensor, options: TextOptions) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{name}: {} {}", t.element_type(), dims_text(t.shape()));
    crate::dispatch!(any: t.element_type(), T => values::<T>(t, options, &mut out), _ => {});
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::{ArrayD, IxDyn};

    fn f32s(shape: &[usize], v: Vec<f32>) -> Tensor {
        ArrayD::from_shape_vec(IxDyn(shape), v).unwrap().into()
    }

    #[test]
    fn floats_spelled_the_same_everywhere() {
        let cases: &[(f32, &str)] = &[
            (1.0, "1.0"),
            (-0.0, "-0.0"),
            (0.1, "0.1"),
            (f32::NAN, "nan"),
            (-f32::NAN, "nan"),
            (f32::INFINITY, "inf"),
            (f32::NEG_INFINITY, "-inf"),
            (1e-7, "1e-7"),
            (16777216.0, "16777216.0"),
            (3.4028235e38, "3.4028235e38"),
            (1e-45, "1e-45"),
        ];
        for &(x, want) in cases {
            assert_eq!(x.text(), want, "{x:e}");
        }
        assert_eq!(0.1f64.text(), "0.1");
        assert_eq!(f64::MIN_POSITIVE.text(), "2.2250738585072014e-308");
    }

    #[test]
    fn narrow_floats_use_their_own_shortest_form() {
        let cases: &[(f32, &str)] = &[
            (0.1, "0.1"),
            // The shortest decimal that reads back, padded as Rust pads f32 (numpy: 6.55e+04).
            (65504.0, "65500.0"),
            (-0.0, "-0.0"),
            (6e-8, "6e-8"),
            (1.0 / 3.0, "0.3333"),
        ];
        for &(x, want) in cases {
            assert_eq!(f16::from_f32(x).text(), want, "{x}");
        }
        assert_eq!(bf16::from_f32(0.1).text(), "0.1");
        assert_eq!(bf16::from_f32(1.0 / 3.0).text(), "0.334");
        assert_eq!(f16::INFINITY.text(), "inf");
        // Every f16 reads back from its text.
        for bits in 0..=u16::MAX {
            let x = f16::from_bits(bits);
            if x.is_finite() {
                let back: f64 = x.text().parse().unwrap();
                assert_eq!(
                    f16::from_num(Num::Float(back)).to_bits(),
                    bits,
                    "{}",
                    x.text()
                );
            }
        }
    }

    #[test]
    fn every_bf16_reads_back() {
        for bits in 0..=u16::MAX {
            let x = bf16::from_bits(bits);
            if x.is_finite() {
                let back: f64 = x.text().parse().unwrap();
                assert_eq!(bf16::from_num(Num::Float(back)).to_bits(), bits);
            }
        }
    }

    #[test]
    fn small_tensors_in_full() {
        let t = f32s(
            &[2, 3],
            vec![1.0, -0.0, 2.5, f32::NAN, f32::INFINITY, f32::NEG_INFINITY],
        );
        assert_eq!(
            render("y", &t, TextOptions::default()),
            "y: f32 [2,3]\n  [0] 1.0, -0.0, 2.5\n  [1] nan, inf, -inf\n"
        );
        let t: Tensor = ndarray::arr0(7i64).into_dyn().into();
        assert_eq!(render("s", &t, TextOptions::default()), "s: i64 []\n  7\n");
        let t: Tensor = ndarray::arr1(&[1u8, 2, 255]).into_dyn().into();
        assert_eq!(
            render("v", &t, TextOptions::default()),
            "v: u8 [3]\n  1, 2, 255\n"
        );
        let t = f32s(&[0, 3], vec![]);
        assert_eq!(
            render("e", &t, TextOptions::default()),
            "e: f32 [0,3]\n  (no values)\n"
        );
        let t = f32s(&[2, 1, 2], vec![1.0, 2.0, 3.0, 4.0]);
        assert_eq!(
            render("r3", &t, TextOptions::default()),
            "r3: f32 [2,1,2]\n  [0,0] 1.0, 2.0\n  [1,0] 3.0, 4.0\n"
        );
    }

    #[test]
    fn large_tensors_summarised_unless_full() {
        let data: Vec<f32> = (0..40 * 30).map(|i| i as f32).collect();
        let mut with_nan = data.clone();
        with_nan[500] = f32::NAN;
        let t = f32s(&[40, 30], data);
        let text = render("big", &t, TextOptions::default());
        insta::assert_snapshot!(text, @r"
        big: f32 [40,30]
          summary: 1200 values, min 0.0, max 1199.0, fnv1a64 48792929d1220468
          [0] 0.0, 1.0, 2.0, ... 24 more ..., 27.0, 28.0, 29.0
          [1] 30.0, 31.0, 32.0, ... 24 more ..., 57.0, 58.0, 59.0
          [2] 60.0, 61.0, 62.0, ... 24 more ..., 87.0, 88.0, 89.0
          ... 34 more rows ...
          [37] 1110.0, 1111.0, 1112.0, ... 24 more ..., 1137.0, 1138.0, 1139.0
          [38] 1140.0, 1141.0, 1142.0, ... 24 more ..., 1167.0, 1168.0, 1169.0
          [39] 1170.0, 1171.0, 1172.0, ... 24 more ..., 1197.0, 1198.0, 1199.0
        ");
        let full = render("big", &t, TextOptions { full: true });
        assert_eq!(full.lines().count(), 41);
        assert!(!full.contains("..."));
        // The digests above agree with FNV-1a over numpy's `tobytes()`. A change the summary
        // does not show still changes the digest; NaN is counted.
        let t2 = f32s(&[40, 30], with_nan);
        let text2 = render("big", &t2, TextOptions::default());
        assert!(text2.contains("min 0.0, max 1199.0, 1 nan, fnv1a64 "));
        assert_ne!(digest(&t), digest(&t2));
        let ints: Tensor = ndarray::Array1::from_iter(0..2000i32).into_dyn().into();
        assert_eq!(
            render("i", &ints, TextOptions::default()),
            "i: i32 [2000]\n  summary: 2000 values, min 0, max 1999, fnv1a64 923eea9049bef505\n  \
             0, 1, 2, ... 1994 more ..., 1997, 1998, 1999\n"
        );
    }
}
