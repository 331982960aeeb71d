//! Element types: the names OpenVINO IR uses for them, and their sizes.
//!
//! Two spellings exist in IR files:
//! * canonical names (`f32`, `i64`, `boolean`, ...) in `element_type` / `destination_type`
//!   attributes; ovir matches them case-insensitively, as OpenVINO does;
//! * legacy precision names (`FP32`, `I64`, `BOOL`, `BIN`, `UNSPECIFIED`, ...) that the serializer
//!   writes in port `precision` attributes. These are accepted on ports only, exactly as written.

use std::fmt;

use serde::Serialize;

/// Every element type OpenVINO IR can name. `undefined` is read as [`ElementType::Dynamic`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ElementType {
    Boolean,
    Bf16,
    F16,
    F32,
    F64,
    I4,
    I8,
    I16,
    I32,
    I64,
    U1,
    U2,
    U3,
    U4,
    U6,
    U8,
    U16,
    U32,
    U64,
    Nf4,
    F8E4M3,
    F8E5M2,
    F4E2M1,
    F8E8M0,
    String,
    Dynamic,
}

use ElementType as E;

/// (type, canonical name, legacy precision name, bits per element; 0 = variable or unknown).
const TABLE: &[(ElementType, &str, &str, u32)] = &[
    (E::Boolean, "boolean", "BOOL", 8),
    (E::Bf16, "bf16", "BF16", 16),
    (E::F16, "f16", "FP16", 16),
    (E::F32, "f32", "FP32", 32),
    (E::F64, "f64", "FP64", 64),
    (E::I4, "i4", "I4", 4),
    (E::I8, "i8", "I8", 8),
    (E::I16, "i16", "I16", 16),
    (E::I32, "i32", "I32", 32),
    (E::I64, "i64", "I64", 64),
    (E::U1, "u1", "BIN", 1),
    (E::U2, "u2", "U2", 2),
    (E::U3, "u3", "U3", 3),
    (E::U4, "u4", "U4", 4),
    (E::U6, "u6", "U6", 6),
    (E::U8, "u8", "U8", 8),
    (E::U16, "u16", "U16", 16),
    (E::U32, "u32", "U32", 32),
    (E::U64, "u64", "U64", 64),
    (E::Nf4, "nf4", "NF4", 4),
    (E::F8E4M3, "f8e4m3", "F8E4M3", 8),
    (E::F8E5M2, "f8e5m2", "F8E5M2", 8),
    (E::F4E2M1, "f4e2m1", "F4E2M1", 4),
    (E::F8E8M0, "f8e8m0", "F8E8M0", 8),
    (E::String, "string", "STRING", 0),
    (E::Dynamic, "dynamic", "UNSPECIFIED", 0),
];

/// Legacy precision spellings that are not simply the upper-case canonical name.
const LEGACY_EXTRA: &[(&str, ElementType)] = &[("bin", E::U1), ("U1", E::U1)];

impl ElementType {
    fn row(self) -> &'static (ElementType, &'static str, &'static str, u32) {
        // The table lists every variant in declaration order.
        &TABLE[self as usize]
    }

    /// The canonical lower-case name (`f32`, `boolean`, `dynamic`).
    pub fn name(self) -> &'static str {
        self.row().1
    }

    /// The legacy precision name the OpenVINO serializer writes on ports (`FP32`, `BOOL`).
    pub fn precision_name(self) -> &'static str {
        self.row().2
    }

    /// Bits per element, or `None` for `string` and `dynamic`.
    pub fn bit_width(self) -> Option<u32> {
        match self.row().3 {
            0 => None,
            n => Some(n),
        }
    }

    /// Bytes needed to store `elements` values packed as OpenVINO packs them
    /// (`ceil(elements * bits / 8)`), or `None` on overflow or for variable-width types.
    pub fn storage_bytes(self, elements: u64) -> Option<u64> {
        let bits = u64::from(self.bit_width()?);
        let total = elements.checked_mul(bits)?;
        Some(total.div_ceil(8))
    }

    /// Parses a canonical name, case-insensitively (`element_type`, `destination_type`).
    /// `undefined` is accepted as `dynamic`, as OpenVINO does.
    pub fn parse(s: &str) -> Option<Self> {
        if s.eq_ignore_ascii_case("undefined") {
            return Some(E::Dynamic);
        }
        TABLE
            .iter()
            .find(|row| row.1.eq_ignore_ascii_case(s))
            .map(|row| row.0)
    }

    /// Parses a port `precision`: a canonical name (any case) or a legacy precision name
    /// (exactly as the serializer writes it, e.g. `FP32`, `BOOL`, `BIN`, `UNSPECIFIED`).
    pub fn parse_precision(s: &str) -> Option<Self> {
        if let Some(t) = Self::parse(s) {
            return Some(t);
        }
        TABLE
            .iter()
            .find(|row| row.2 == s)
            .map(|row| row.0)
            .or_else(|| LEGACY_EXTRA.iter().find(|(n, _)| *n == s).map(|(_, t)| *t))
    }

    /// Every element type, in declaration order.
    pub fn all() -> impl Iterator<Item = ElementType> {
        TABLE.iter().map(|row| row.0)
    }

    /// All canonical names, for error messages.
    pub fn all_names() -> impl Iterator<Item = &'static str> {
        TABLE.iter().map(|row| row.1)
    }

    pub fn is_float(self) -> bool {
        matches!(self, E::Bf16 | E::F16 | E::F32 | E::F64)
    }
}

impl fmt::Display for ElementType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl Serialize for ElementType {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_in_declaration_order() {
        for (i, row) in TABLE.iter().enumerate() {
            assert_eq!(row.0 as usize, i, "{}", row.1);
        }
    }

    #[test]
    fn canonical_names_any_case() {
        let table = [
            ("f32", Some(E::F32)),
            ("F32", Some(E::F32)),
            ("BOOLEAN", Some(E::Boolean)),
            ("Nf4", Some(E::Nf4)),
            ("undefined", Some(E::Dynamic)),
            ("dynamic", Some(E::Dynamic)),
            ("u1", Some(E::U1)),
            ("f8e4m3", Some(E::F8E4M3)),
            ("FP32", None),
            ("fp32", None),
            ("bool", None),
            ("BOOL", None),
            ("", None),
            ("f 32", None),
        ];
        for (text, want) in table {
            assert_eq!(ElementType::parse(text), want, "{text:?}");
        }
    }

    #[test]
    fn precision_names() {
        let table = [
            ("FP32", Some(E::F32)),
            ("FP16", Some(E::F16)),
            ("FP64", Some(E::F64)),
            ("BF16", Some(E::Bf16)),
            ("BOOL", Some(E::Boolean)),
            ("BIN", Some(E::U1)),
            ("bin", Some(E::U1)),
            ("U1", Some(E::U1)),
            ("UNSPECIFIED", Some(E::Dynamic)),
            ("I64", Some(E::I64)),
            ("f32", Some(E::F32)),
            ("STRING", Some(E::String)),
            ("fp32", None),
            ("Fp32", None),
            ("bool", None),
            ("", None),
        ];
        for (text, want) in table {
            assert_eq!(ElementType::parse_precision(text), want, "{text:?}");
        }
    }

    #[test]
    fn storage_sizes() {
        assert_eq!(E::F32.storage_bytes(3), Some(12));
        assert_eq!(E::U1.storage_bytes(9), Some(2));
        assert_eq!(E::I4.storage_bytes(3), Some(2));
        assert_eq!(E::U3.storage_bytes(3), Some(2));
        assert_eq!(E::F64.storage_bytes(u64::MAX), None);
        assert_eq!(E::String.storage_bytes(1), None);
        assert_eq!(E::F16.storage_bytes(0), Some(0));
    }
}
