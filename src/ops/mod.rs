//! The operations ovir understands: one file per op, and [`REGISTRY`], the one place where
//! they are registered. Each op file documents its spec, attributes, accepted types and the
//! semantic decisions ovir made for it.

pub mod constant;
pub mod convert;
pub mod divide;
pub mod kernel;
pub mod parameter;
pub mod result;
pub mod subtract;

use crate::dtype::ElementType;
use crate::ir::Data;

/// Why an op could not compute its output.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EvalError {
    #[error("the inputs' element types differ: {0} and {1}")]
    Types(ElementType, ElementType),
    #[error("ovir does not compute {op} on {ty}")]
    UnsupportedType { op: &'static str, ty: ElementType },
    #[error("the input shapes {a:?} and {b:?} do not broadcast: {reason}")]
    Shapes {
        a: Vec<usize>,
        b: Vec<usize>,
        reason: String,
    },
    #[error("integer division by zero at output element {index:?}")]
    DivisionByZero { index: Vec<usize> },
    #[error("integer overflow: the minimum value divided by -1 at output element {index:?}")]
    DivisionOverflow { index: Vec<usize> },
    #[error("internal error: {0}")]
    Internal(&'static str),
}

/// Element-level failures of a binary op, turned into [`EvalError`]s with the element index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ElemError {
    DivisionByZero,
    Overflow,
}

/// Newest opset ovir knows (OpenVINO 2026.4 reads opset1 to opset17). Every supported op is
/// in opset1; how far it goes is [`OpDef::max_opset`] (measured: OpenVINO 2026.4's opset17
/// has Parameter and Convert but not Constant, Result, Subtract or Divide).
pub const MAX_OPSET: u32 = 17;

/// A layer's operation with its parsed attributes.
#[derive(Clone, Debug, PartialEq)]
pub enum Op {
    Parameter(parameter::Parameter),
    Const(constant::Const),
    Convert(convert::Convert),
    Result(result::ResultOp),
    Subtract(subtract::Subtract),
    Divide(divide::Divide),
}

/// What the graph needs to know about an op before it understands the layer.
pub struct OpDef {
    /// The canonical type name, as `info` and errors print it.
    pub name: &'static str,
    /// Other spellings of the type (matched case-insensitively like the name).
    pub aliases: &'static [&'static str],
    pub inputs: usize,
    pub outputs: usize,
    /// The newest opset that contains the op (it is in every opset from opset1 to this one).
    pub max_opset: u32,
    /// Parses the `<data>` attributes.
    pub parse: fn(&Attrs) -> Result<Op, Vec<AttrError>>,
}

/// The one registration point.
pub const REGISTRY: &[OpDef] = &[
    parameter::DEF,
    constant::DEF,
    convert::DEF,
    result::DEF,
    subtract::DEF,
    divide::DEF,
];

/// Finds an op by layer `type`, case-insensitively (`Const` and `Constant` are the same op).
pub fn lookup(ty: &str) -> Option<&'static OpDef> {
    REGISTRY.iter().find(|d| {
        d.name.eq_ignore_ascii_case(ty) || d.aliases.iter().any(|a| a.eq_ignore_ascii_case(ty))
    })
}

/// The canonical names of all supported ops.
pub fn supported() -> Vec<&'static str> {
    REGISTRY.iter().map(|d| d.name).collect()
}

/// Parses a layer `version` (`opset1` … `opsetN`) into its number, if ovir knows the opset.
pub fn parse_opset(version: &str) -> Option<u32> {
    let digits = version.strip_prefix("opset")?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let n: u32 = digits.parse().ok()?;
    (1..=MAX_OPSET).contains(&n).then_some(n)
}

impl OpDef {
    /// Whether the op is in opset `version` (`opset1`, `opset13`, ...).
    pub fn in_opset(&self, version: &str) -> bool {
        parse_opset(version).is_some_and(|n| n <= self.max_opset)
    }
}

impl Op {
    pub fn def(&self) -> &'static OpDef {
        match self {
            Op::Parameter(_) => &parameter::DEF,
            Op::Const(_) => &constant::DEF,
            Op::Convert(_) => &convert::DEF,
            Op::Result(_) => &result::DEF,
            Op::Subtract(_) => &subtract::DEF,
            Op::Divide(_) => &divide::DEF,
        }
    }

    pub fn name(&self) -> &'static str {
        self.def().name
    }

    /// For the elementwise binary ops (which execution may fuse): their broadcast rule and
    /// kernel.
    pub fn elementwise(&self) -> Option<(crate::broadcast::AutoBroadcast, Elementwise)> {
        match self {
            Op::Subtract(s) => Some((s.auto_broadcast, Elementwise::Subtract)),
            Op::Divide(d) => Some((
                d.auto_broadcast,
                Elementwise::Divide {
                    pythondiv: d.pythondiv,
                },
            )),
            _ => None,
        }
    }
}

/// An element type both elementwise ops compute with (all twelve).
pub trait Arith: subtract::SubtractElem + divide::DivideElem + kernel::Chain {}
impl<T: subtract::SubtractElem + divide::DivideElem + kernel::Chain> Arith for T {}

/// The kernel of an elementwise binary op, as a fused group runs it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Elementwise {
    Subtract,
    Divide { pythondiv: bool },
}

impl Elementwise {
    pub fn name(self) -> &'static str {
        match self {
            Elementwise::Subtract => subtract::DEF.name,
            Elementwise::Divide { .. } => divide::DEF.name,
        }
    }

    /// `a op b` broadcast by `spec`: both inputs of one element type.
    pub fn eval(
        self,
        spec: crate::broadcast::AutoBroadcast,
        a: &crate::Tensor,
        b: &crate::Tensor,
    ) -> Result<crate::Tensor, EvalError> {
        let ty = a.element_type();
        if ty != b.element_type() {
            return Err(EvalError::Types(ty, b.element_type()));
        }
        crate::dispatch!(ty, T => kernel::binary::<T>(spec, a, b, |x, y, out| self.run(x, y, out)), _ => Err(EvalError::UnsupportedType { op: self.name(), ty }))
    }

    /// The op's loop over one run (see [`kernel::binary`]).
    #[inline(always)]
    pub fn run<T: Arith>(
        self,
        a: kernel::Src<'_, T>,
        b: kernel::Src<'_, T>,
        out: kernel::Out<'_, T>,
    ) -> kernel::RunResult {
        match self {
            Elementwise::Subtract => {
                <T as subtract::SubtractElem>::run(a, b, out);
                Ok(())
            }
            Elementwise::Divide { pythondiv } => {
                <T as divide::DivideElem>::run(a, b, out, pythondiv)
            }
        }
    }
}

/// A problem with one `<data>` attribute.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AttrError {
    pub name: String,
    /// The value written, or `None` when the attribute is missing.
    pub value: Option<String>,
    pub reason: String,
}

/// The `<data>` attributes of a layer, with typed getters that record errors.
pub struct Attrs<'d, 'a> {
    data: Option<&'d Data<'a>>,
}

impl<'d, 'a> Attrs<'d, 'a> {
    pub fn new(data: Option<&'d Data<'a>>) -> Self {
        Attrs { data }
    }

    pub fn get(&self, name: &str) -> Option<&'d str> {
        self.data.and_then(|d| d.get(name))
    }

    /// A mandatory attribute.
    pub fn required(&self, name: &str) -> Result<&'d str, AttrError> {
        self.get(name).ok_or_else(|| AttrError {
            name: name.to_owned(),
            value: None,
            reason: String::new(),
        })
    }

    /// An error for the value of `name`.
    pub fn invalid(&self, name: &str, reason: impl Into<String>) -> AttrError {
        AttrError {
            name: name.to_owned(),
            value: Some(self.get(name).unwrap_or_default().to_owned()),
            reason: reason.into(),
        }
    }

    /// A mandatory attribute parsed by `f`, whose `Err` is the reason.
    pub fn parse_required<T>(
        &self,
        name: &str,
        f: impl FnOnce(&str) -> Result<T, String>,
    ) -> Result<T, AttrError> {
        let text = self.required(name)?;
        f(text).map_err(|reason| self.invalid(name, reason))
    }

    /// A boolean attribute: `true`, `false`, `1` or `0`, any case. Anything else is an error
    /// (OpenVINO silently keeps the default).
    pub fn bool_or(&self, names: &[&str], default: bool) -> Result<bool, AttrError> {
        let found: Vec<&str> = names
            .iter()
            .copied()
            .filter(|n| self.get(n).is_some())
            .collect();
        let [name] = found.as_slice() else {
            if found.is_empty() {
                return Ok(default);
            }
            return Err(self.invalid(
                found[1],
                format!("`{}` is also given; write only one of them", found[0]),
            ));
        };
        let text = self.get(name).unwrap_or_default().trim();
        if text.eq_ignore_ascii_case("true") || text == "1" {
            Ok(true)
        } else if text.eq_ignore_ascii_case("false") || text == "0" {
            Ok(false)
        } else {
            Err(self.invalid(name, "expected true, false, 1 or 0"))
        }
    }

    /// The `auto_broadcast` attributes of an elementwise op.
    pub fn auto_broadcast(&self) -> Result<crate::broadcast::AutoBroadcast, AttrError> {
        crate::broadcast::AutoBroadcast::parse(
            self.get("auto_broadcast"),
            self.get(crate::broadcast::AXIS_ATTR),
        )
        .map_err(|(name, reason)| self.invalid(name, reason))
    }
}

/// An unsigned 64-bit integer written in decimal digits only.
pub fn parse_u64(text: &str) -> Result<u64, String> {
    let t = text.trim();
    if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) {
        return Err("expected an unsigned integer".into());
    }
    t.parse::<u64>()
        .map_err(|_| "the number is too large for 64 bits".into())
}

/// An element type attribute (`element_type`, `destination_type`).
pub fn parse_element_type(text: &str) -> Result<crate::ElementType, String> {
    crate::ElementType::parse(text.trim()).ok_or_else(|| {
        format!(
            "unknown element type; expected one of {}",
            crate::ElementType::all_names()
                .collect::<Vec<_>>()
                .join(", ")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookup_is_case_insensitive_with_aliases() {
        for (ty, want) in [
            ("Subtract", Some("Subtract")),
            ("subtract", Some("Subtract")),
            ("DIVIDE", Some("Divide")),
            ("Const", Some("Const")),
            ("Constant", Some("Const")),
            ("constant", Some("Const")),
            ("Parameter", Some("Parameter")),
            ("Result", Some("Result")),
            ("convert", Some("Convert")),
            ("Add", None),
            ("Subtrakt", None),
        ] {
            assert_eq!(lookup(ty).map(|d| d.name), want, "{ty}");
        }
    }

    #[test]
    fn ops_per_opset() {
        let sub = lookup("Subtract").unwrap();
        let param = lookup("Parameter").unwrap();
        assert!(sub.in_opset("opset1") && sub.in_opset("opset16") && !sub.in_opset("opset17"));
        assert!(param.in_opset("opset17") && !param.in_opset("opset18"));
        assert!(!sub.in_opset("opset+1") && !sub.in_opset("opset01x"));
    }

    #[test]
    fn opsets() {
        assert_eq!(parse_opset("opset1"), Some(1));
        assert_eq!(parse_opset("opset17"), Some(17));
        for bad in [
            "opset0",
            "opset18",
            "opset99",
            "Opset1",
            "opset",
            "opset-1",
            "extension",
            "",
        ] {
            assert_eq!(parse_opset(bad), None, "{bad}");
        }
    }
}
