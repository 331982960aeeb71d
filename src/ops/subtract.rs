//! Subtract-1: elementwise `a - b` with broadcasting.
//!
//! Spec: <https://docs.openvino.ai/2026/documentation/openvino-ir-format/operation-sets/operation-specs/arithmetic/subtract-1.html>
//!
//! Attributes: `auto_broadcast` (`none`/`explicit`, `numpy`, `pdpd`; any case; default
//! `numpy`) and, for pdpd, `auto_broadcast.auto_broadcast_axis` (−1 or a dimension index).
//! Ports: two inputs of the same element type, one output.
//!
//! Decisions: a pdpd op without an axis uses the spec's −1 (OpenVINO's loader uses 0; `check`
//! warns). Any other `auto_broadcast` value is an error.

use super::{AttrError, Attrs, Op, OpDef};
use crate::broadcast::AutoBroadcast;

#[derive(Clone, Debug, PartialEq)]
pub struct Subtract {
    pub auto_broadcast: AutoBroadcast,
}

pub const DEF: OpDef = OpDef {
    name: "Subtract",
    aliases: &[],
    max_opset: 16,
    inputs: 2,
    outputs: 1,
    parse,
};

fn parse(a: &Attrs) -> Result<Op, Vec<AttrError>> {
    let auto_broadcast = a.auto_broadcast().map_err(|e| vec![e])?;
    Ok(Op::Subtract(Subtract { auto_broadcast }))
}
