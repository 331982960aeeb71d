//! Divide-1: elementwise `a / b` with broadcasting.
//!
//! Spec: <https://docs.openvino.ai/2026/documentation/openvino-ir-format/operation-sets/operation-specs/arithmetic/divide-1.html>
//!
//! Attributes: `auto_broadcast` as for Subtract (default `numpy`), and `m_pythondiv` (also
//! read as `pythondiv`): `true`/`false`/`1`/`0` in any case, default `true`. With `true`,
//! integer division floors (Python's `//`); with `false` it truncates toward zero. It has no
//! effect on floating-point types.
//! Ports: two inputs of the same element type, one output.
//!
//! Decisions: any other `m_pythondiv` value (`yes`, empty) is an error; OpenVINO silently keeps
//! the default. Writing both `m_pythondiv` and `pythondiv` is an error.

use super::{AttrError, Attrs, Op, OpDef};
use crate::broadcast::AutoBroadcast;

#[derive(Clone, Debug, PartialEq)]
pub struct Divide {
    pub auto_broadcast: AutoBroadcast,
    pub pythondiv: bool,
}

pub const DEF: OpDef = OpDef {
    name: "Divide",
    aliases: &[],
    max_opset: 16,
    inputs: 2,
    outputs: 1,
    parse,
};

fn parse(a: &Attrs) -> Result<Op, Vec<AttrError>> {
    let auto_broadcast = a.auto_broadcast();
    let pythondiv = a.bool_or(&["m_pythondiv", "pythondiv"], true);
    match (auto_broadcast, pythondiv) {
        (Ok(auto_broadcast), Ok(pythondiv)) => Ok(Op::Divide(Divide {
            auto_broadcast,
            pythondiv,
        })),
        (b, p) => Err(b.err().into_iter().chain(p.err()).collect()),
    }
}
