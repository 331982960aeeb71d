//! Dimensions and partial shapes, and the grammar IR files use to write them.
//!
//! A [`Dim`] is an interval `min..=max` (`max` may be unbounded): a static dim has
//! `min == max`, `?` is `0..`. A [`PartialShape`] is a list of dims or a dynamic rank (`...`).
//!
//! The text grammar is OpenVINO's (`PartialShape(const std::string&)`), made strict:
//! surrounding spaces and one pair of brackets are allowed, `...` is a dynamic rank, an empty
//! string is a scalar, fields are separated by commas and trimmed; a field is a number, `?`, `-1`,
//! or an interval `a..b`, `..b`, `a..`, `..`. OpenVINO reads `-2` as 0, `3..1` as `?` and
//! `99999999999999999999` as 0; ovir rejects all of these.

use std::fmt;

use serde::Serialize;

/// Largest dimension value OpenVINO can represent (its dims are `int64_t`).
pub const MAX_DIM: u64 = i64::MAX as u64;

/// One dimension: the interval `min..=max`; `max == None` is unbounded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Dim {
    min: u64,
    max: Option<u64>,
}

impl Dim {
    /// The fully dynamic dimension `?`.
    pub const DYNAMIC: Dim = Dim { min: 0, max: None };

    pub const fn fixed(n: u64) -> Dim {
        Dim {
            min: n,
            max: Some(n),
        }
    }

    /// An interval; `None` if `max < min`.
    pub fn interval(min: u64, max: Option<u64>) -> Option<Dim> {
        match max {
            Some(m) if m < min => None,
            _ => Some(Dim { min, max }),
        }
    }

    pub fn min(self) -> u64 {
        self.min
    }

    pub fn max(self) -> Option<u64> {
        self.max
    }

    /// The value of a static dimension.
    pub fn get_static(self) -> Option<u64> {
        match self.max {
            Some(m) if m == self.min => Some(m),
            _ => None,
        }
    }

    pub fn is_static(self) -> bool {
        self.get_static().is_some()
    }

    pub fn is_dynamic(self) -> bool {
        self == Dim::DYNAMIC
    }

    /// Whether the value `v` lies in the interval.
    pub fn contains(self, v: u64) -> bool {
        self.min <= v && self.max.is_none_or(|m| v <= m)
    }

    /// OpenVINO's `Dimension::merge`: the intersection of the two intervals, `None` if empty.
    pub fn merge(self, other: Dim) -> Option<Dim> {
        let min = self.min.max(other.min);
        let max = match (self.max, other.max) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        Dim::interval(min, max)
    }

    /// OpenVINO's `Dimension::broadcast_merge` (numpy rules on intervals): if both may be 1,
    /// the union hull; if only one may be 1, the other; otherwise the intersection.
    pub fn broadcast_merge(self, other: Dim) -> Option<Dim> {
        match (self.contains(1), other.contains(1)) {
            (true, true) => Some(Dim {
                min: self.min.min(other.min),
                max: match (self.max, other.max) {
                    (Some(a), Some(b)) => Some(a.max(b)),
                    _ => None,
                },
            }),
            (true, false) => Some(other),
            (false, true) => Some(self),
            (false, false) => self.merge(other),
        }
    }

    /// The interval sum (unbounded where it would exceed [`MAX_DIM`]).
    pub fn plus(self, other: Dim) -> Dim {
        let min = self.min.saturating_add(other.min).min(MAX_DIM);
        let max = match (self.max, other.max) {
            (Some(a), Some(b)) => a.checked_add(b).filter(|&s| s <= MAX_DIM),
            _ => None,
        };
        Dim { min, max }
    }

    /// The interval product (unbounded where it would exceed [`MAX_DIM`]).
    pub fn times(self, other: Dim) -> Dim {
        let min = self.min.saturating_mul(other.min).min(MAX_DIM);
        let max = match (self.max, other.max) {
            (Some(a), Some(b)) => a.checked_mul(b).filter(|&s| s <= MAX_DIM),
            // An unbounded factor times a zero-only one is zero.
            (Some(0), None) | (None, Some(0)) => Some(0),
            _ => None,
        };
        Dim { min, max }
    }

    /// Parses one dimension field (already trimmed).
    pub fn parse(field: &str) -> Result<Dim, ShapeParseError> {
        let err = |reason: &str| ShapeParseError::new(field, reason);
        if field == "?" || field == "-1" {
            return Ok(Dim::DYNAMIC);
        }
        if let Some((lo, hi)) = field.split_once("..") {
            let min = if lo.is_empty() {
                0
            } else {
                parse_number(lo).map_err(|r| err(&format!("lower bound {lo:?} {r}")))?
            };
            let max = if hi.is_empty() {
                None
            } else {
                Some(parse_number(hi).map_err(|r| err(&format!("upper bound {hi:?} {r}")))?)
            };
            return Dim::interval(min, max).ok_or_else(|| {
                err("the interval is reversed (its lower bound exceeds its upper bound)")
            });
        }
        parse_number(field).map(Dim::fixed).map_err(err)
    }
}

/// Parses a non-negative decimal dimension value: digits only, at most [`MAX_DIM`].
fn parse_number(s: &str) -> Result<u64, &'static str> {
    if s.is_empty() {
        return Err("is empty");
    }
    if let Some(rest) = s.strip_prefix('-')
        && !rest.is_empty()
        && rest.bytes().all(|b| b.is_ascii_digit())
    {
        return Err("is negative (only -1, meaning dynamic, is allowed)");
    }
    if !s.bytes().all(|b| b.is_ascii_digit()) {
        return Err("is not a non-negative integer, `?` or an interval `a..b`");
    }
    match s.parse::<u64>() {
        Ok(n) if n <= MAX_DIM => Ok(n),
        _ => Err("is too large (the limit is 2^63-1)"),
    }
}

impl fmt::Display for Dim {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.min, self.max) {
            (lo, Some(hi)) if lo == hi => write!(f, "{lo}"),
            (0, None) => f.write_str("?"),
            (0, Some(hi)) => write!(f, "..{hi}"),
            (lo, None) => write!(f, "{lo}.."),
            (lo, Some(hi)) => write!(f, "{lo}..{hi}"),
        }
    }
}

impl Serialize for Dim {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// A shape whose rank and dimensions may be partly unknown.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct PartialShape {
    dims: Option<Vec<Dim>>,
}

impl PartialShape {
    /// A shape of unknown rank, written `...`.
    pub fn dynamic_rank() -> PartialShape {
        PartialShape { dims: None }
    }

    pub fn new(dims: Vec<Dim>) -> PartialShape {
        PartialShape { dims: Some(dims) }
    }

    pub fn fixed(dims: &[u64]) -> PartialShape {
        PartialShape::new(dims.iter().map(|&d| Dim::fixed(d)).collect())
    }

    /// The static shape of a tensor's dims.
    pub fn of_tensor(dims: &[usize]) -> PartialShape {
        PartialShape::new(dims.iter().map(|&d| Dim::fixed(d as u64)).collect())
    }

    /// The dims, or `None` for a dynamic rank.
    pub fn dims(&self) -> Option<&[Dim]> {
        self.dims.as_deref()
    }

    pub fn rank(&self) -> Option<usize> {
        self.dims.as_ref().map(Vec::len)
    }

    /// The dims of a fully static shape.
    pub fn to_static(&self) -> Option<Vec<u64>> {
        self.dims.as_ref()?.iter().map(|d| d.get_static()).collect()
    }

    /// The dims of a fully static shape as a tensor's, if each fits `usize`.
    pub fn to_tensor_dims(&self) -> Option<Vec<usize>> {
        self.dims
            .as_ref()?
            .iter()
            .map(|d| usize::try_from(d.get_static()?).ok())
            .collect()
    }

    pub fn is_static(&self) -> bool {
        self.to_static().is_some()
    }

    /// The number of elements, as an interval (`None` for a dynamic rank).
    pub fn elements(&self) -> Option<Dim> {
        Some(
            self.dims
                .as_ref()?
                .iter()
                .fold(Dim::fixed(1), |acc, &d| acc.times(d)),
        )
    }

    /// Parses the IR / command-line shape grammar described in the module docs.
    pub fn parse(text: &str) -> Result<PartialShape, ShapeParseError> {
        let mut s = text.trim();
        if let Some(inner) = s.strip_prefix('[') {
            s = inner
                .strip_suffix(']')
                .ok_or_else(|| ShapeParseError::new(text, "an opening `[` has no closing `]`"))?
                .trim();
        } else if s.ends_with(']') {
            return Err(ShapeParseError::new(
                text,
                "a closing `]` has no opening `[`",
            ));
        }
        if s == "..." {
            return Ok(PartialShape::dynamic_rank());
        }
        if s.is_empty() {
            return Ok(PartialShape::new(Vec::new()));
        }
        let mut dims = Vec::new();
        for field in s.split(',') {
            let field = field.trim();
            if field.is_empty() {
                return Err(ShapeParseError::new(
                    text,
                    "has an empty dimension between commas",
                ));
            }
            if field == "..." {
                return Err(ShapeParseError::new(
                    text,
                    "uses `...` (a dynamic rank) as one dimension; it must be the whole shape",
                ));
            }
            dims.push(Dim::parse(field).map_err(|e| e.within(text))?);
        }
        Ok(PartialShape::new(dims))
    }
}

impl fmt::Display for PartialShape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.dims {
            None => f.write_str("[...]"),
            Some(dims) => {
                f.write_str("[")?;
                for (i, d) in dims.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write!(f, "{d}")?;
                }
                f.write_str("]")
            }
        }
    }
}

impl Serialize for PartialShape {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// A shape or dimension string that does not follow the grammar.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{text:?}: {reason}")]
pub struct ShapeParseError {
    /// The text that was parsed (the whole shape when the error is in one of its dims).
    pub text: String,
    pub reason: String,
}

impl ShapeParseError {
    fn new(text: &str, reason: &str) -> Self {
        ShapeParseError {
            text: text.to_owned(),
            reason: reason.to_owned(),
        }
    }

    fn within(self, whole: &str) -> Self {
        ShapeParseError {
            reason: format!("dimension {:?} {}", self.text, self.reason),
            text: whole.to_owned(),
        }
    }
}

/// A dim that shape rules written once work on: [`Dim`] (intervals) in inference, `usize` in
/// execution. For ops whose inference and execution apply the same rules (MatMul, Einsum).
pub trait DimRule: Copy + std::fmt::Display {
    const ONE: Self;
    /// The common value of two dims that must be equal, if they can be.
    fn same(self, other: Self) -> Option<Self>;
    /// Two dims broadcast together (numpy), if they can.
    fn broadcast(self, other: Self) -> Option<Self>;
}

impl DimRule for Dim {
    const ONE: Dim = Dim::fixed(1);
    fn same(self, other: Dim) -> Option<Dim> {
        self.merge(other)
    }
    fn broadcast(self, other: Dim) -> Option<Dim> {
        self.broadcast_merge(other)
    }
}

impl DimRule for usize {
    const ONE: usize = 1;
    fn same(self, other: usize) -> Option<usize> {
        (self == other).then_some(self)
    }
    fn broadcast(self, other: usize) -> Option<usize> {
        match (self, other) {
            (a, b) if a == b => Some(a),
            (1, b) => Some(b),
            (a, 1) => Some(a),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn show(text: &str) -> String {
        match PartialShape::parse(text) {
            Ok(s) => s.to_string(),
            Err(e) => format!("error: {}", e.reason),
        }
    }

    #[test]
    fn grammar_table() {
        let table = [
            ("", "[]"),
            ("   ", "[]"),
            ("[]", "[]"),
            ("[ ]", "[]"),
            ("1", "[1]"),
            ("6,5", "[6,5]"),
            ("6, 5", "[6,5]"),
            (" 6 , 5 ", "[6,5]"),
            ("[1,3,224,224]", "[1,3,224,224]"),
            (" [ 2 , ? ] ", "[2,?]"),
            ("?", "[?]"),
            ("-1,3", "[?,3]"),
            ("1..10", "[1..10]"),
            ("..10", "[..10]"),
            ("0..10", "[..10]"),
            ("2..", "[2..]"),
            ("..", "[?]"),
            ("0..", "[?]"),
            ("3..3", "[3]"),
            ("0", "[0]"),
            ("...", "[...]"),
            ("[...]", "[...]"),
            ("9223372036854775807", "[9223372036854775807]"),
            ("2,,3", "error: has an empty dimension between commas"),
            ("2,", "error: has an empty dimension between commas"),
            (",", "error: has an empty dimension between commas"),
            (
                "abc",
                "error: dimension \"abc\" is not a non-negative integer, `?` or an interval `a..b`",
            ),
            (
                "1.5",
                "error: dimension \"1.5\" is not a non-negative integer, `?` or an interval `a..b`",
            ),
            (
                "+3",
                "error: dimension \"+3\" is not a non-negative integer, `?` or an interval `a..b`",
            ),
            (
                "2 3",
                "error: dimension \"2 3\" is not a non-negative integer, `?` or an interval `a..b`",
            ),
            (
                "2;3",
                "error: dimension \"2;3\" is not a non-negative integer, `?` or an interval `a..b`",
            ),
            (
                "-2",
                "error: dimension \"-2\" is negative (only -1, meaning dynamic, is allowed)",
            ),
            (
                "-10",
                "error: dimension \"-10\" is negative (only -1, meaning dynamic, is allowed)",
            ),
            (
                "3..1",
                "error: dimension \"3..1\" the interval is reversed (its lower bound exceeds its upper bound)",
            ),
            (
                "1..-1",
                "error: dimension \"1..-1\" upper bound \"-1\" is negative (only -1, meaning dynamic, is allowed)",
            ),
            (
                "?..5",
                "error: dimension \"?..5\" lower bound \"?\" is not a non-negative integer, `?` or an interval `a..b`",
            ),
            (
                "2..3..4",
                "error: dimension \"2..3..4\" upper bound \"3..4\" is not a non-negative integer, `?` or an interval `a..b`",
            ),
            (
                "99999999999999999999",
                "error: dimension \"99999999999999999999\" is too large (the limit is 2^63-1)",
            ),
            (
                "9223372036854775808",
                "error: dimension \"9223372036854775808\" is too large (the limit is 2^63-1)",
            ),
            ("[1,2", "error: an opening `[` has no closing `]`"),
            ("1,2]", "error: a closing `]` has no opening `[`"),
            (
                "[[1]]",
                "error: dimension \"[1]\" is not a non-negative integer, `?` or an interval `a..b`",
            ),
            (
                "...,1",
                "error: uses `...` (a dynamic rank) as one dimension; it must be the whole shape",
            ),
        ];
        let mut failures = Vec::new();
        for (text, want) in table {
            let got = show(text);
            if got != want {
                failures.push(format!("{text:?}: got {got:?}, want {want:?}"));
            }
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }

    #[test]
    fn dim_accessors() {
        let d = Dim::parse("2..5").unwrap();
        assert_eq!((d.min(), d.max(), d.get_static()), (2, Some(5), None));
        assert!(Dim::parse("?").unwrap().is_dynamic());
        assert_eq!(Dim::parse("7").unwrap().get_static(), Some(7));
        assert_eq!(
            PartialShape::parse("2,3").unwrap().to_static(),
            Some(vec![2, 2 + 1])
        );
        assert_eq!(PartialShape::parse("2,?").unwrap().to_static(), None);
        assert_eq!(PartialShape::parse("...").unwrap().rank(), None);
    }
}
