//! Auto-broadcast specifications (`auto_broadcast` and `auto_broadcast.auto_broadcast_axis`).
//!
//! This is the one module that knows broadcasting: shape inference and execution both use it.
//! Rules (see `docs/ops.md`): `none` (also spelled `explicit`) requires equal shapes; `numpy`
//! right-aligns shapes and stretches dims of 1; `pdpd` broadcasts B onto A starting at `axis`,
//! and its output always has A's shape.

use std::fmt;

use serde::Serialize;

/// How an elementwise op broadcasts its inputs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AutoBroadcast {
    /// `none` or `explicit`: shapes must match.
    None,
    /// `numpy` (the default).
    Numpy,
    /// `pdpd`: B is aligned into A starting at `axis`; `-1` means `rank(A) - rank(B)`.
    Pdpd {
        axis: i64,
        /// Whether `auto_broadcast.auto_broadcast_axis` was written in the file. When it was
        /// not, ovir uses the spec's −1 while OpenVINO's loader uses 0.
        axis_given: bool,
    },
}

impl AutoBroadcast {
    /// Parses the attribute values (`auto_broadcast`, `auto_broadcast.auto_broadcast_axis`).
    /// `Err` carries (attribute name, reason).
    pub fn parse(
        mode: Option<&str>,
        axis: Option<&str>,
    ) -> Result<AutoBroadcast, (&'static str, String)> {
        let mode = mode.unwrap_or("numpy");
        let spec = if mode.eq_ignore_ascii_case("numpy") {
            AutoBroadcast::Numpy
        } else if mode.eq_ignore_ascii_case("none") || mode.eq_ignore_ascii_case("explicit") {
            AutoBroadcast::None
        } else if mode.eq_ignore_ascii_case("pdpd") {
            let parsed = match axis {
                None => -1,
                Some(text) => match text.trim().parse::<i64>() {
                    Ok(a) if a >= -1 => a,
                    Ok(_) => {
                        return Err((
                            AXIS_ATTR,
                            "a pdpd axis is -1 (align B to the end of A) or a non-negative dimension index".into(),
                        ));
                    }
                    Err(_) => return Err((AXIS_ATTR, "expected an integer".into())),
                },
            };
            AutoBroadcast::Pdpd {
                axis: parsed,
                axis_given: axis.is_some(),
            }
        } else {
            return Err((
                "auto_broadcast",
                "expected none, explicit, numpy or pdpd".into(),
            ));
        };
        Ok(spec)
    }
}

/// The attribute that holds the pdpd axis (the key really contains a dot).
pub const AXIS_ATTR: &str = "auto_broadcast.auto_broadcast_axis";

impl fmt::Display for AutoBroadcast {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AutoBroadcast::None => f.write_str("none"),
            AutoBroadcast::Numpy => f.write_str("numpy"),
            AutoBroadcast::Pdpd { axis, .. } => write!(f, "pdpd(axis={axis})"),
        }
    }
}

impl Serialize for AutoBroadcast {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attribute_table() {
        let table: &[(Option<&str>, Option<&str>, &str)] = &[
            (None, None, "numpy"),
            (Some("numpy"), None, "numpy"),
            (Some("NUMPY"), None, "numpy"),
            (Some("none"), None, "none"),
            (Some("Explicit"), None, "none"),
            (Some("pdpd"), None, "pdpd(axis=-1)"),
            (Some("PDPD"), Some("1"), "pdpd(axis=1)"),
            (Some("pdpd"), Some("-1"), "pdpd(axis=-1)"),
            (
                Some("pdpd"),
                Some("-2"),
                "error auto_broadcast.auto_broadcast_axis",
            ),
            (
                Some("pdpd"),
                Some("x"),
                "error auto_broadcast.auto_broadcast_axis",
            ),
            (Some("bogus"), None, "error auto_broadcast"),
            (Some(""), None, "error auto_broadcast"),
            (Some("numpy"), Some("3"), "numpy"),
        ];
        for &(mode, axis, want) in table {
            let got = match AutoBroadcast::parse(mode, axis) {
                Ok(s) => s.to_string(),
                Err((name, _)) => format!("error {name}"),
            };
            assert_eq!(got, want, "{mode:?} {axis:?}");
        }
        assert_eq!(
            AutoBroadcast::parse(Some("pdpd"), None),
            Ok(AutoBroadcast::Pdpd {
                axis: -1,
                axis_given: false
            })
        );
    }
}
