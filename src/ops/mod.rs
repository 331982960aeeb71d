//! The operations ovir understands, as data: every op is a type implementing [`Op`] (parse its
//! attributes, infer its outputs, evaluate, say whether it can be fused), described by an
//! [`OpDef`] and listed once in [`REGISTRY`]. A member of an elementwise family is one row of its
//! family's table (`binary/arith.rs`).
//!
//! Layers name their op by `type` and `version` (`opsetN`); [`resolve`] finds the op version
//! that opset holds in OpenVINO's measured opset table ([`opset_table`]) and ovir's
//! implementation of it, if there is one. A layer ovir does not implement becomes an
//! [`opaque::Opaque`] node.

pub mod adaptive_pool;
pub mod batch_norm;
pub mod binary;
pub mod broadcast;
pub mod concat;
pub mod constant;
pub mod context;
pub mod convert;
pub mod convolution;
pub mod convolution_backprop;
pub mod depth_to_space;
pub mod einsum;
pub mod gather;
pub mod gather_elements;
pub mod gather_nd;
pub mod identity;
pub mod interpolate;
pub mod kernel;
pub mod logic;
pub mod lrn;
pub mod matmul;
pub mod mvn;
pub mod non_zero;
pub mod normalize_l2;
pub mod one_hot;
pub mod opaque;
pub mod opset_table;
pub mod packed;
pub mod pad;
pub mod parameter;
pub mod pool;
pub mod prelu;
pub mod range;
pub mod reduce;
pub mod reshape;
pub mod result;
pub mod scatter;
pub mod sdpa;
pub mod select;
pub mod shape_of;
pub mod shuffle_channels;
pub mod slice;
pub mod softmax;
pub mod spatial;
pub mod split;
pub mod squeeze;
pub mod strided_slice;
pub mod tile;
pub mod top_k;
pub mod transpose;
pub mod unary;

use std::fmt;

pub use context::{EvalCx, InferCx, Prepared};

use crate::dtype::ElementType;
use crate::ir::Data;
use crate::shape::TensorType;
use crate::tensor::Tensor;

/// Why an op could not compute its outputs.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EvalError {
    #[error("the inputs' element types differ: {0} and {1}")]
    Types(ElementType, ElementType),
    #[error("ovir does not compute {op} on {ty}")]
    UnsupportedType { op: String, ty: ElementType },
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
    /// An integer case the op leaves undefined (a negative exponent in Power…).
    #[error("the integer result is undefined: {what} at output element {index:?}")]
    Undefined {
        what: &'static str,
        index: Vec<usize>,
    },
    /// An input that is invalid for this op (an index out of range, a shape that does not fit).
    #[error("{0}")]
    Invalid(String),
    /// The output would exceed the memory budget.
    #[error("{0}")]
    Memory(crate::memory::OverBudget),
    #[error("internal error: {0}")]
    Internal(&'static str),
}

impl EvalError {
    /// The error as execution and `check` report it.
    pub fn into_kind(self) -> crate::error::ErrorKind {
        use crate::error::ErrorKind;
        match self {
            EvalError::DivisionByZero { index } => ErrorKind::DivisionByZero {
                index: format!("{index:?}"),
            },
            EvalError::DivisionOverflow { index } => ErrorKind::DivisionOverflow {
                index: format!("{index:?}"),
            },
            EvalError::Undefined { what, index } => ErrorKind::UndefinedInteger {
                what,
                index: format!("{index:?}"),
            },
            EvalError::Memory(o) => ErrorKind::MemoryBudget(o),
            EvalError::Invalid(reason) => ErrorKind::InvalidInput { reason },
            other => ErrorKind::Eval {
                message: other.to_string(),
            },
        }
    }
}

/// Element-level failures of a kernel, turned into [`EvalError`]s with the element index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ElemError {
    DivisionByZero,
    Overflow,
    /// An integer case the op leaves undefined, and what it is ("a negative exponent").
    Undefined(&'static str),
}

/// What a layer is to the graph: a model input, a constant, a model output, a computation, or
/// a layer ovir does not implement.
pub enum Role<'a> {
    Input(&'a parameter::Parameter),
    Constant(&'a constant::Const),
    Output,
    Compute,
    Opaque(&'a opaque::Opaque),
}

/// A layer's operation with its parsed attributes.
pub trait Op: fmt::Debug + Send + Sync {
    /// The op's definition; `None` for an opaque layer.
    fn def(&self) -> Option<&'static OpDef>;

    /// The layer type as reports print it (the op's canonical name, or what the file says).
    fn name(&self) -> &str {
        self.def().map_or("?", |d| d.name)
    }

    /// What the layer is to the graph (inputs, outputs and Consts are handled by the graph).
    fn role(&self) -> Role<'_> {
        Role::Compute
    }

    /// The port counts this layer must have (by default its definition's).
    fn arity(&self) -> (Arity, Arity) {
        self.def()
            .map_or((Arity::ANY, Arity::ANY), |d| (d.inputs, d.outputs))
    }

    /// The element type, partial shape and, where the op knows them, the value or its bounds
    /// of every output, from the inputs' (all known). Findings go to `cx`; `None` when the
    /// outputs cannot be inferred (a finding says why).
    fn infer(&self, cx: &mut InferCx<'_>) -> Option<Vec<TensorType>>;

    /// Computes every output from the inputs.
    fn eval(&self, cx: &EvalCx<'_>) -> Result<Vec<Tensor>, EvalError>;

    /// Work done once per model on the layer's constant inputs (`inputs[i]` is `Some` for each
    /// input whose value is the same at every run: a Const's bytes or a folded value), such as
    /// weights laid out for the op's kernels, within `budget`. Execution hands it to every run
    /// ([`EvalCx::prepared`]); the outputs must be the same bits with it and without it.
    /// `None`: nothing to prepare.
    fn prepare(
        &self,
        _inputs: &[Option<crate::tensor::Value<'_>>],
        _budget: &crate::memory::Budget,
    ) -> Option<Prepared> {
        None
    }

    /// Whether inference may compute the outputs' values when every input's value is known
    /// (constant folding of small values); ops that are cheap and exact say yes.
    fn folds(&self) -> bool {
        true
    }

    /// Whether input `i`'s elements reach the outputs unchanged, only moved (data movement:
    /// Gather's data, Concat's inputs, Reshape's data). Inference then finds the outputs'
    /// bounds, when that input has bounds rather than a value, by evaluating the op on the
    /// lower and on the upper bounds (OpenVINO's default `evaluate_lower`/`evaluate_upper`).
    fn moves(&self, _input: usize) -> bool {
        false
    }

    /// Whether [`moves`](Op::moves) holds only for inputs whose lower bounds are all ≥ 0 (a
    /// product is monotone only on non-negative values).
    fn bounds_need_nonnegative(&self) -> bool {
        false
    }

    /// For an elementwise op that can join a fused group: how.
    fn fusable(&self) -> Option<&dyn binary::Fusable> {
        None
    }

    /// For an op whose one output is input 0's elements in row-major order under another
    /// shape (Reshape, Squeeze, Unsqueeze, Identity): that shape, so that execution hands the
    /// input's buffer on instead of copying it when nothing else reads it (and shares it when
    /// the shape is the same). `None`: the op computes its output with [`eval`](Op::eval),
    /// which must give the same tensor.
    fn view(&self, _cx: &EvalCx<'_>) -> Option<Result<Vec<usize>, EvalError>> {
        None
    }

    /// Whether [`view`](Op::view) can give a shape (execution asks only those ops).
    fn view_like(&self) -> bool {
        false
    }

    /// Whether the op can apply elementwise layers to its one output as it writes it
    /// ([`eval_then`](Op::eval_then)); execution then fuses the elementwise layers after it
    /// into its group.
    fn takes_epilogue(&self) -> bool {
        false
    }

    /// Computes the outputs with the steps `then` gives for output 0's shape applied to that
    /// output as it is written (the same bits as running those layers after the op). `None`,
    /// with nothing computed, when the op does not apply them to these inputs or `then` gives
    /// none: execution then runs the op and the layers one after the other.
    fn eval_then<'a>(
        &self,
        _cx: &EvalCx<'_>,
        _then: &dyn Fn(&[usize]) -> Option<kernel::epilogue::Epilogue<'a>>,
    ) -> Option<Result<Vec<Tensor>, EvalError>> {
        None
    }
}

/// How many ports of one direction an op takes: `min..=max`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Arity {
    pub min: usize,
    pub max: usize,
}

impl Arity {
    pub const ANY: Arity = Arity {
        min: 0,
        max: usize::MAX,
    };

    pub const fn exactly(n: usize) -> Arity {
        Arity { min: n, max: n }
    }

    pub const fn range(min: usize, max: usize) -> Arity {
        Arity { min, max }
    }

    pub const fn at_least(min: usize) -> Arity {
        Arity {
            min,
            max: usize::MAX,
        }
    }

    pub fn contains(self, n: usize) -> bool {
        (self.min..=self.max).contains(&n)
    }
}

impl fmt::Display for Arity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.min, self.max) {
            (a, b) if a == b => write!(f, "{a}"),
            (a, usize::MAX) => write!(f, "at least {a}"),
            (a, b) => write!(f, "{a} to {b}"),
        }
    }
}

/// Parses a layer's `<data>` attributes into its op (every problem at once).
pub type ParseFn = fn(&Attrs) -> Result<Box<dyn Op>, Vec<AttrError>>;

/// What ovir knows of an op version before it reads a layer.
pub struct OpDef {
    /// The type name as OpenVINO's opset table spells it (`Subtract`, `Constant`).
    pub name: &'static str,
    /// The op's version: the N of the opset that introduced it (Gather-8 is 8).
    pub version: u32,
    pub inputs: Arity,
    pub outputs: Arity,
    /// Parses the `<data>` attributes.
    pub parse: ParseFn,
}

impl fmt::Debug for OpDef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.name, self.version)
    }
}

impl OpDef {
    /// `Gather-8`.
    pub fn title(&self) -> String {
        format!("{}-{}", self.name, self.version)
    }

    /// The opsets that hold this version (first, last), from the measured table.
    pub fn opsets(&self) -> Option<(u32, u32)> {
        opset_table::OPSET_OPS
            .iter()
            .find(|(n, v, _, _)| *n == self.name && *v == self.version)
            .map(|&(_, _, first, last)| (first, last))
    }
}

/// The one registration point: every op version ovir implements — the ops of their own files,
/// then each family's table.
pub static REGISTRY: std::sync::LazyLock<Vec<&'static OpDef>> = std::sync::LazyLock::new(|| {
    [
        OWN,
        binary::arith::FAMILY,
        unary::table::FAMILY,
        logic::FAMILY,
        reduce::FAMILY,
    ]
    .concat()
});

/// The ops that have a file of their own.
const OWN: &[&OpDef] = &[
    &parameter::DEF,
    &constant::DEF,
    &result::DEF,
    &convert::DEF,
    &convert::CONVERT_LIKE,
    &select::DEF,
    &prelu::DEF,
    &shape_of::DEF_1,
    &shape_of::DEF_3,
    &concat::DEF,
    &gather::DEF_1,
    &gather::DEF_7,
    &gather::DEF_8,
    &reshape::DEF,
    &squeeze::SQUEEZE,
    &squeeze::UNSQUEEZE,
    &split::SPLIT,
    &split::VARIADIC_SPLIT,
    &strided_slice::DEF,
    &transpose::DEF,
    &identity::DEF,
    &range::RANGE_1,
    &range::RANGE_4,
    &slice::DEF,
    &broadcast::BROADCAST_1,
    &broadcast::BROADCAST_3,
    &tile::DEF,
    &depth_to_space::DEPTH_TO_SPACE,
    &depth_to_space::SPACE_TO_DEPTH,
    &shuffle_channels::DEF,
    &pad::PAD_1,
    &pad::PAD_12,
    &matmul::DEF,
    &gather_elements::DEF,
    &gather_nd::GATHER_ND_5,
    &gather_nd::GATHER_ND_8,
    &non_zero::DEF,
    &top_k::TOP_K_1,
    &top_k::TOP_K_3,
    &top_k::TOP_K_11,
    &one_hot::ONE_HOT_1,
    &one_hot::ONE_HOT_16,
    &scatter::SCATTER_UPDATE_3,
    &scatter::SCATTER_ELEMENTS_UPDATE_3,
    &scatter::SCATTER_ELEMENTS_UPDATE_12,
    &scatter::SCATTER_ND_UPDATE_4,
    &scatter::SCATTER_ND_UPDATE_15,
    &sdpa::DEF,
    &einsum::DEF,
    &softmax::SOFTMAX_1,
    &softmax::SOFTMAX_8,
    &softmax::LOG_SOFTMAX_5,
    &mvn::MVN_2,
    &mvn::MVN_6,
    &normalize_l2::NORMALIZE_L2_1,
    &batch_norm::BATCH_NORM_INFERENCE_1,
    &batch_norm::BATCH_NORM_INFERENCE_5,
    &lrn::LRN_1,
    &adaptive_pool::ADAPTIVE_AVG_POOL_8,
    &adaptive_pool::ADAPTIVE_MAX_POOL_8,
    &convolution::CONVOLUTION,
    &convolution::GROUP_CONVOLUTION,
    &convolution_backprop::CONVOLUTION_BACKPROP_DATA,
    &convolution_backprop::GROUP_CONVOLUTION_BACKPROP_DATA,
    &interpolate::INTERPOLATE_1,
    &interpolate::INTERPOLATE_4,
    &interpolate::INTERPOLATE_11,
    &pool::MAX_POOL_1,
    &pool::MAX_POOL_8,
    &pool::MAX_POOL_14,
    &pool::AVG_POOL_1,
    &pool::AVG_POOL_14,
    &pool::AVG_POOL_16,
];

/// The newest opset OpenVINO has (from the measured table).
pub const MAX_OPSET: u32 = opset_table::MAX_OPSET;

/// What a layer's `type` and `version` name.
#[derive(Debug)]
pub enum Resolved {
    /// An op version ovir implements.
    Op(&'static OpDef),
    /// An OpenVINO op version ovir does not implement (yet): the layer is opaque.
    Unimplemented { name: &'static str, version: u32 },
    /// A `version` that is no standard opset (`extension`, a custom or internal opset): ovir
    /// cannot know the op, and the layer is opaque.
    Custom,
    /// `opsetN` with an N OpenVINO does not have.
    NoSuchOpset,
    /// A standard opset that does not hold this type (OpenVINO refuses such a layer).
    NotInOpset {
        /// The type as the table spells it, if OpenVINO has it in some opset.
        known: Option<(&'static str, u32, u32)>,
    },
}

/// A row of the opset table: (type, version, first opset, last opset).
type TableRow = (&'static str, u32, u32, u32);

/// The rows of the opset table for one type, and the index of the first (the table is sorted
/// by name).
fn table_rows(ty: &str) -> Option<(usize, &'static [TableRow])> {
    // IR files spell Constant `Const` (the serializer's name for it).
    let ty = if ty.eq_ignore_ascii_case("Const") {
        "Constant"
    } else {
        ty
    };
    let table = opset_table::OPSET_OPS;
    // The exact spelling first (what files write): a binary search; then any case.
    let start = match table.binary_search_by(|row| row.0.cmp(ty)) {
        Ok(k) => table[..k]
            .iter()
            .rposition(|r| r.0 != ty)
            .map_or(0, |p| p + 1),
        Err(_) => table.iter().position(|r| r.0.eq_ignore_ascii_case(ty))?,
    };
    let name = table[start].0;
    let len = table[start..].iter().take_while(|r| r.0 == name).count();
    Some((start, &table[start..start + len]))
}

/// For each row of the opset table, ovir's implementation of that op version, if any.
static IMPLEMENTED: std::sync::LazyLock<Vec<Option<&'static OpDef>>> =
    std::sync::LazyLock::new(|| {
        opset_table::OPSET_OPS
            .iter()
            .map(|&(n, v, _, _)| {
                REGISTRY
                    .iter()
                    .copied()
                    .find(|d| d.name == n && d.version == v)
            })
            .collect()
    });

/// Finds the op a layer names: `ty` case-insensitively (`Const` = `Constant`), `version` an
/// opset name (`opset1` … `opsetN`) or anything else (a custom opset).
pub fn resolve(ty: &str, version: &str) -> Resolved {
    let Some(opset) = parse_opset(version) else {
        return if opset_digits(version).is_some() {
            Resolved::NoSuchOpset
        } else {
            Resolved::Custom
        };
    };
    let Some((start, rows)) = table_rows(ty) else {
        return Resolved::NotInOpset { known: None };
    };
    let name = rows[0].0;
    let Some(k) = rows
        .iter()
        .position(|&(_, _, first, last)| (first..=last).contains(&opset))
    else {
        let first = rows.iter().map(|r| r.2).min().unwrap_or(0);
        let last = rows.iter().map(|r| r.3).max().unwrap_or(0);
        return Resolved::NotInOpset {
            known: Some((name, first, last)),
        };
    };
    match IMPLEMENTED[start + k] {
        Some(d) => Resolved::Op(d),
        None => Resolved::Unimplemented {
            name,
            version: rows[k].1,
        },
    }
}

/// The coverage table of `docs/ops.md`: every op version in OpenVINO's opsets (from the
/// measured table), the opsets that hold it, and whether ovir implements it (infers and runs
/// it) or reads it as an opaque layer. `tests/docs.rs` keeps the document equal to it.
pub fn coverage_table() -> String {
    use std::fmt::Write;
    // (type, version, the runs of opsets that hold it)
    type Row = (&'static str, u32, Vec<(u32, u32)>);
    let mut rows: Vec<Row> = Vec::new();
    for &(name, version, first, last) in opset_table::OPSET_OPS {
        match rows.last_mut() {
            Some((n, v, runs)) if *n == name && *v == version => runs.push((first, last)),
            _ => rows.push((name, version, vec![(first, last)])),
        }
    }
    let implements = |name: &str, version: u32| {
        REGISTRY
            .iter()
            .any(|d| d.name == name && d.version == version)
    };
    let implemented = rows.iter().filter(|(n, v, _)| implements(n, *v)).count();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} op versions in OpenVINO's opset1 to opset{MAX_OPSET}; ovir implements {implemented}.\n",
        rows.len()
    );
    out.push_str("| op | version | opsets | ovir |\n|---|---|---|---|\n");
    for (name, version, runs) in rows {
        let opsets: Vec<String> = runs
            .iter()
            .map(|&(a, b)| {
                if a == b {
                    a.to_string()
                } else {
                    format!("{a}–{b}")
                }
            })
            .collect();
        let status = if implements(name, version) {
            "**runs**"
        } else {
            "opaque"
        };
        let _ = writeln!(
            out,
            "| {name} | {version} | {} | {status} |",
            opsets.join(", ")
        );
    }
    out
}

/// `ty` as a static string, when it is exactly an OpenVINO op type or `Const` (saves an
/// allocation per layer when reading large files).
pub fn static_name(ty: &str) -> Option<&'static str> {
    if ty == "Const" {
        return Some("Const");
    }
    let table = opset_table::OPSET_OPS;
    table
        .binary_search_by(|row| row.0.cmp(ty))
        .ok()
        .map(|k| table[k].0)
}

/// Parses a layer `version` (`opset1` … `opsetN`) into its number, if it is a standard opset.
pub fn parse_opset(version: &str) -> Option<u32> {
    let n: u32 = opset_digits(version)?.parse().ok()?;
    (1..=MAX_OPSET).contains(&n).then_some(n)
}

/// The number of a version written `opset` and digits, whether or not OpenVINO has it.
fn opset_digits(version: &str) -> Option<&str> {
    version
        .strip_prefix("opset")
        .filter(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
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

    /// An optional attribute parsed by `f`, or `default`.
    pub fn parse_or<T>(
        &self,
        name: &str,
        default: T,
        f: impl FnOnce(&str) -> Result<T, String>,
    ) -> Result<T, AttrError> {
        match self.get(name) {
            None => Ok(default),
            Some(text) => f(text).map_err(|reason| self.invalid(name, reason)),
        }
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

/// Collects the errors of several attribute parses: `Ok` with every value, or every error.
#[macro_export]
#[doc(hidden)]
macro_rules! attrs_all {
    ($($r:expr),+ $(,)?) => {{
        let mut errors: Vec<$crate::ops::AttrError> = Vec::new();
        let values = ($(match $r {
            Ok(v) => Some(v),
            Err(e) => {
                errors.push(e);
                None
            }
        },)+);
        if errors.is_empty() {
            Ok(values)
        } else {
            Err(errors)
        }
    }};
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

/// A signed 64-bit integer.
pub fn parse_i64(text: &str) -> Result<i64, String> {
    let t = text.trim();
    let digits = t.strip_prefix('-').unwrap_or(t);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err("expected an integer".into());
    }
    t.parse::<i64>()
        .map_err(|_| "the number does not fit in 64 bits".into())
}

/// A comma-separated list of signed integers (`axes="0,2"`; empty for none).
pub fn parse_i64_list(text: &str) -> Result<Vec<i64>, String> {
    let t = text.trim();
    if t.is_empty() {
        return Ok(Vec::new());
    }
    t.split(',').map(parse_i64).collect()
}

/// An `index_element_type` attribute (TopK, MaxPool, AdaptiveMaxPool): `i32` or `i64`; the
/// error names `op`.
pub(crate) fn parse_index_type(text: &str, op: &str) -> Result<crate::ElementType, String> {
    match parse_element_type(text)? {
        t @ (crate::ElementType::I32 | crate::ElementType::I64) => Ok(t),
        _ => Err(format!("{op}'s index_element_type is i32 or i64")),
    }
}

/// An element type attribute (`element_type`, `destination_type`, `output_type`).
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

/// An axis attribute or value `axis` of a tensor of rank `rank`: negative counts from the end.
pub fn normalize_axis(axis: i64, rank: usize) -> Option<usize> {
    let r = i64::try_from(rank).ok()?;
    let a = if axis < 0 { axis + r } else { axis };
    (0..r).contains(&a).then_some(a as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolved(ty: &str, version: &str) -> String {
        match resolve(ty, version) {
            Resolved::Op(d) => format!("op {}", d.title()),
            Resolved::Unimplemented { name, version } => format!("opaque {name}-{version}"),
            Resolved::Custom => "custom".into(),
            Resolved::NoSuchOpset => "no such opset".into(),
            Resolved::NotInOpset { known } => format!("not in opset {known:?}"),
        }
    }

    #[test]
    fn layers_resolve_by_type_and_opset() {
        for (ty, version, want) in [
            ("Subtract", "opset1", "op Subtract-1"),
            ("subtract", "opset16", "op Subtract-1"),
            ("DIVIDE", "opset3", "op Divide-1"),
            ("Const", "opset1", "op Constant-1"),
            ("Constant", "opset7", "op Constant-1"),
            ("constant", "opset1", "op Constant-1"),
            ("Parameter", "opset17", "op Parameter-1"),
            ("Gather", "opset1", "op Gather-1"),
            ("Gather", "opset7", "op Gather-7"),
            ("Gather", "opset13", "op Gather-8"),
            ("Convolution", "opset1", "op Convolution-1"),
            ("Proposal", "opset1", "opaque Proposal-1"),
            ("MyCustomOp", "extension", "custom"),
            ("Subtract", "opset+1", "custom"),
            ("Subtract", "opset99", "no such opset"),
            ("Subtract", "opset0", "no such opset"),
            ("Subtrakt", "opset1", "not in opset None"),
        ] {
            assert_eq!(resolved(ty, version), want, "{ty} {version}");
        }
        assert!(resolved("Subtract", &format!("opset{}", MAX_OPSET)).starts_with("not in opset"));
    }

    #[test]
    fn the_opset_table_is_sorted_by_name() {
        let t = opset_table::OPSET_OPS;
        assert!(
            t.windows(2).all(|w| w[0].0 <= w[1].0),
            "resolve searches it"
        );
    }

    #[test]
    fn every_registered_op_is_in_openvinos_table() {
        for d in REGISTRY.iter() {
            assert!(d.opsets().is_some(), "{} is in no opset", d.title());
            let dup = REGISTRY
                .iter()
                .filter(|e| e.name == d.name && e.version == d.version)
                .count();
            assert_eq!(dup, 1, "{} registered twice", d.title());
        }
    }

    #[test]
    fn opsets() {
        assert_eq!(parse_opset("opset1"), Some(1));
        assert_eq!(parse_opset(&format!("opset{MAX_OPSET}")), Some(MAX_OPSET));
        for bad in [
            "opset0",
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
