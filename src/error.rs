//! Typed errors. Every error that concerns a place in an IR file carries a [`Location`]: the file,
//! the XML line and column, and where known the layer and the port.

use std::fmt;
use std::path::Path;
use std::sync::Arc;

use serde::Serialize;

use crate::dtype::ElementType;

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A layer, as an error names it: `layer 3 "conv" (Subtract)`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LayerRef {
    pub id: String,
    pub name: String,
    #[serde(rename = "type")]
    pub ty: String,
}

impl fmt::Display for LayerRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "layer {} {:?} ({})", self.id, self.name, self.ty)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PortDir {
    Input,
    Output,
}

impl fmt::Display for PortDir {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            PortDir::Input => "input",
            PortDir::Output => "output",
        })
    }
}

/// A port of a layer: its position in the layer's `<input>`/`<output>` list (what edges bind
/// to) and the `id` attribute written in the file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PortRef {
    pub dir: PortDir,
    pub index: usize,
    pub id: String,
}

impl fmt::Display for PortRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} port #{} (id {})", self.dir, self.index, self.id)
    }
}

/// Line and column (both 1-based; the column counts characters).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct LineCol {
    pub line: u32,
    pub col: u32,
}

/// Where an error is: always a file, usually a line:col, often a layer and a port.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Location {
    #[serde(serialize_with = "serialize_path")]
    pub file: Arc<Path>,
    #[serde(flatten)]
    pub pos: Option<LineCol>,
    pub layer: Option<LayerRef>,
    pub port: Option<PortRef>,
}

fn serialize_path<S: serde::Serializer>(p: &Arc<Path>, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(&p.display())
}

impl Location {
    pub fn file(file: &Arc<Path>) -> Location {
        Location {
            file: file.clone(),
            pos: None,
            layer: None,
            port: None,
        }
    }

    pub fn with_port(mut self, port: PortRef) -> Location {
        self.port = Some(port);
        self
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file.display())?;
        if let Some(p) = self.pos {
            write!(f, ":{}:{}", p.line, p.col)?;
        }
        if let Some(l) = &self.layer {
            write!(f, ": {l}")?;
        }
        if let Some(p) = &self.port {
            write!(f, ", {p}")?;
        }
        Ok(())
    }
}

/// What went wrong. [`Error`] adds where.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ErrorKind {
    #[error("cannot read {}: {source}", path.display())]
    Io {
        path: Arc<Path>,
        #[source]
        source: std::io::Error,
    },
    #[error("malformed XML: {message}")]
    Xml { message: String },
    #[error("the root element is <{found}>, not <net>: this is not an OpenVINO IR file")]
    NotAnIr { found: String },
    #[error("unsupported IR version {found:?}: ovir reads IR versions 10 and 11")]
    UnsupportedVersion { found: String },
    #[error("the <net> element has no <{name}> section")]
    MissingSection { name: &'static str },
    #[error("the <net> element has a second <{name}> section (the first is at line {first_line})")]
    DuplicateSection { name: String, first_line: u32 },
    #[error("<{element}> has an unexpected structure: {message}")]
    Structure {
        element: &'static str,
        message: String,
    },
    #[error("<{element}> is missing the mandatory attribute `{name}`")]
    MissingAttribute { element: &'static str, name: String },
    #[error("<{element}> attribute `{name}` = {value:?} is invalid: {reason}")]
    InvalidAttribute {
        element: &'static str,
        name: String,
        value: String,
        reason: String,
    },
    #[error(
        "{version} has no operation {ty:?}: it is not an OpenVINO op (a custom op needs its own opset name, as extensions write)"
    )]
    UnsupportedOp { ty: String, version: String },
    #[error("OpenVINO has no opset {version:?} (it has opset1 to opset{max})")]
    NoSuchOpset { version: String, max: u32 },
    #[error("{ty} is not in {version:?}; it is in opset{first} to opset{last}")]
    UnsupportedOpset {
        ty: &'static str,
        version: String,
        first: u32,
        last: u32,
    },
    #[error("{op} takes {expected} {dir} port(s), but the layer declares {found}")]
    PortCount {
        op: String,
        dir: PortDir,
        expected: String,
        found: usize,
    },
    #[error("two {dir} ports have the id {id}")]
    DuplicatePortId { dir: PortDir, id: String },
    #[error("<dim> {value:?} is invalid: {reason}")]
    InvalidDim { value: String, reason: String },
    #[error("the layer id {id} is already used by the layer at line {first_line}")]
    DuplicateLayerId { id: String, first_line: u32 },
    #[error("the edge's {end} names layer id {id}, which does not exist")]
    UnknownLayer { end: &'static str, id: String },
    #[error(
        "the edge names {dir} port id {id}, which {layer} does not have (its {dir} port ids: {})",
        list_or_none(available)
    )]
    UnknownPort {
        dir: PortDir,
        id: String,
        layer: LayerRef,
        available: Vec<String>,
    },
    #[error("this input is fed twice: by {first} and by {second}")]
    InputFedTwice { first: String, second: String },
    #[error("this input has no incoming edge")]
    MissingInput,
    #[error("the graph has a cycle through {}", cycle.iter().map(|l| l.to_string()).collect::<Vec<_>>().join(" -> "))]
    Cycle { cycle: Vec<LayerRef> },
    #[error("the model has no Result layer, so it has no outputs")]
    NoResult,
    #[error("the weights file {} does not exist, and {count} Const layer(s) need it", path.display())]
    WeightsMissing { path: Arc<Path>, count: usize },
    #[error(
        "Const data lies outside the weights file: offset {offset} + size {size} = {end}, but {} has {file_len} bytes",
        path.display()
    )]
    WeightsOutOfRange {
        path: Arc<Path>,
        offset: u64,
        size: u64,
        end: u128,
        file_len: u64,
    },
    #[error(
        "Const size {size} bytes is smaller than its shape needs: {elements} x {element_type} = {needed} bytes"
    )]
    WeightsTooSmall {
        size: u64,
        elements: u64,
        element_type: ElementType,
        needed: u64,
    },
    #[error("Const shape {shape} has too many elements to address")]
    ConstTooLarge { shape: String },
    #[error("the inputs' element types differ: {a} and {b} (OpenVINO does not promote types)")]
    ElementTypeMismatch { a: ElementType, b: ElementType },
    #[error("{op} does not accept {ty} inputs")]
    UnsupportedElementType { op: String, ty: ElementType },
    #[error("{reason}")]
    InvalidInput { reason: String },
    #[error("the input shapes {a} and {b} are inconsistent under auto_broadcast {mode}: {reason}")]
    IncompatibleShapes {
        mode: String,
        a: String,
        b: String,
        axis: Option<usize>,
        reason: String,
    },
    #[error(
        "the declared dims {declared} differ from the inferred shape {inferred} at axis {axis}"
    )]
    DeclaredDimMismatch {
        axis: usize,
        declared: String,
        inferred: String,
    },
    #[error(
        "the declared dims {declared} have rank {declared_rank}, but the inferred shape {inferred} has rank {inferred_rank}"
    )]
    DeclaredRankMismatch {
        declared: String,
        declared_rank: usize,
        inferred: String,
        inferred_rank: usize,
    },
    #[error("--shape {name}={given} does not fit the Parameter's shape {declared}")]
    ShapeOverride {
        name: String,
        given: String,
        declared: String,
    },
    #[error(
        "the declared dims {declared} are static {at}, but the inferred shape {inferred} is not"
    )]
    DeclaredStaticVsDynamic {
        /// `at axis N` or `everywhere` (for a dynamic inferred rank).
        at: String,
        declared: String,
        inferred: String,
    },
    #[error(
        "auto_broadcast=\"pdpd\" without auto_broadcast.auto_broadcast_axis: ovir reads the spec's default -1, OpenVINO's loader reads 0; {consequence}"
    )]
    PdpdAxisMissing { consequence: String },
    #[error("the port precision {declared} differs from the inferred element type {inferred}")]
    PrecisionMismatch {
        declared: ElementType,
        inferred: ElementType,
    },
    #[error("ovir cannot run {op} on {ty}")]
    CannotRunType { op: String, ty: ElementType },
    #[error(
        "ovir does not implement {op} ({count} layer{}, the first here); their outputs are taken as declared",
        if *count == 1 { "" } else { "s" }
    )]
    Unimplemented { op: String, count: usize },
    #[error(
        "ovir cannot run this model: it does not implement {}:{}",
        if ops.len() == 1 { "this op".to_owned() } else { format!("these {} ops", ops.len()) },
        ops.iter().map(|o| format!("\n    {o}")).collect::<String>()
    )]
    CannotRun { ops: Vec<OpaqueUse> },
    #[error("this layer feeds no Result, so it is never computed")]
    DeadLayer,
    #[error("this input feeds no Result")]
    UnusedInput,
    #[error("integer division by zero at output element {index}")]
    DivisionByZero { index: String },
    #[error("integer overflow: the minimum value divided by -1 at output element {index}")]
    DivisionOverflow { index: String },
    #[error("the integer result is undefined: {what} at output element {index}")]
    UndefinedInteger { what: &'static str, index: String },
    #[error("{message}")]
    Eval { message: String },
    #[error("{0}")]
    MemoryBudget(crate::memory::OverBudget),
    #[error("the model has no input named {name:?} (its inputs: {})", known.join(", "))]
    UnknownInput { name: String, known: Vec<String> },
    #[error("input {name:?} is not given")]
    InputNotGiven { name: String },
    #[error("input {name:?} is given twice")]
    InputGivenTwice { name: String },
    #[error("input {name:?} must be {expected}, but the given tensor is {got}")]
    InputType {
        name: String,
        expected: ElementType,
        got: ElementType,
    },
    #[error("input {name:?} must have shape {expected}, but the given tensor has shape {got}")]
    InputShape {
        name: String,
        expected: String,
        got: String,
    },
    #[error("{count} inputs are given, but the model has {expected}")]
    TooManyInputs { count: usize, expected: usize },
    #[error("cannot write {}: {source}", path.display())]
    Write {
        path: Arc<Path>,
        #[source]
        source: std::io::Error,
    },
    #[error("{} errors", .0.len())]
    Several(Vec<Error>),
}

/// One op type ovir does not implement, as a model uses it: how many layers, and the first.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct OpaqueUse {
    /// `Gather-8`, or `MyOp (extension)` for a custom opset.
    pub op: String,
    pub count: usize,
    /// Where the first such layer is.
    pub first: Option<LineCol>,
    pub first_layer: LayerRef,
    /// The first such layer's node index in its graph.
    #[serde(skip)]
    pub first_node: usize,
}

impl fmt::Display for OpaqueUse {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({} layer", self.op, self.count)?;
        if self.count != 1 {
            f.write_str("s")?;
        }
        match self.first {
            Some(p) => write!(
                f,
                ", first {} at line {}:{})",
                self.first_layer, p.line, p.col
            ),
            None => write!(f, ", first {})", self.first_layer),
        }
    }
}

fn list_or_none(items: &[String]) -> String {
    if items.is_empty() {
        "none".to_owned()
    } else {
        items.join(", ")
    }
}

/// How serious a finding is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        })
    }
}

/// A finding of `check`: an error or a warning, with its location.
#[derive(Debug)]
pub struct Diagnostic {
    pub severity: Severity,
    pub error: Error,
}

impl Diagnostic {
    pub fn error(error: Error) -> Diagnostic {
        Diagnostic {
            severity: Severity::Error,
            error,
        }
    }

    pub fn warning(error: Error) -> Diagnostic {
        Diagnostic {
            severity: Severity::Warning,
            error,
        }
    }
}

impl ErrorKind {
    /// Whether this kind is reported as a warning (its code starts with `W`).
    pub fn is_warning(&self) -> bool {
        self.code().starts_with('W')
    }

    /// Whether this finding is a port's declared dims or precision differing from the inferred
    /// ones (OpenVINO ignores declared dims, and so does a run).
    pub fn is_declared_mismatch(&self) -> bool {
        use ErrorKind::*;
        matches!(
            self,
            DeclaredDimMismatch { .. }
                | DeclaredRankMismatch { .. }
                | DeclaredStaticVsDynamic { .. }
                | PrecisionMismatch { .. }
        )
    }

    /// A stable code for each kind of error, used by `check` and documented in `docs/cli.md`.
    pub fn code(&self) -> &'static str {
        use ErrorKind::*;
        match self {
            Io { .. } => "E100",
            Xml { .. } => "E101",
            NotAnIr { .. } => "E102",
            UnsupportedVersion { .. } => "E103",
            MissingSection { .. } => "E104",
            DuplicateSection { .. } => "E105",
            Structure { .. } => "E106",
            MissingAttribute { .. } => "E201",
            InvalidAttribute { .. } => "E202",
            UnsupportedOp { .. } => "E203",
            UnsupportedOpset { .. } => "E204",
            NoSuchOpset { .. } => "E209",
            PortCount { .. } => "E205",
            DuplicatePortId { .. } => "E206",
            InvalidDim { .. } => "E207",
            DuplicateLayerId { .. } => "E301",
            UnknownLayer { .. } => "E302",
            UnknownPort { .. } => "E303",
            InputFedTwice { .. } => "E304",
            MissingInput => "E305",
            Cycle { .. } => "E306",
            NoResult => "E307",
            WeightsMissing { .. } => "E401",
            WeightsOutOfRange { .. } => "E402",
            WeightsTooSmall { .. } => "E403",
            ConstTooLarge { .. } => "E404",
            ElementTypeMismatch { .. } => "E501",
            UnsupportedElementType { .. } => "E502",
            IncompatibleShapes { .. } => "E503",
            DeclaredDimMismatch { .. } => "E504",
            DeclaredRankMismatch { .. } => "E505",
            ShapeOverride { .. } => "E506",
            InvalidInput { .. } => "E507",
            Unimplemented { .. } => "E208",
            DeadLayer => "W301",
            UnusedInput => "W302",
            DeclaredStaticVsDynamic { .. } => "W501",
            PdpdAxisMissing { .. } => "W502",
            PrecisionMismatch { .. } => "W503",
            CannotRunType { .. } => "W504",
            DivisionByZero { .. } => "E601",
            DivisionOverflow { .. } => "E602",
            Eval { .. } => "E603",
            MemoryBudget(_) => "E604",
            CannotRun { .. } => "E605",
            UndefinedInteger { .. } => "E606",
            UnknownInput { .. } => "E610",
            InputNotGiven { .. } => "E611",
            InputGivenTwice { .. } => "E612",
            InputType { .. } => "E613",
            InputShape { .. } => "E614",
            TooManyInputs { .. } => "E615",
            Write { .. } => "E620",
            Several(_) => "E000",
        }
    }

    /// The axis a shape finding is about, where there is one.
    pub fn axis(&self) -> Option<usize> {
        match self {
            ErrorKind::IncompatibleShapes { axis, .. } => *axis,
            ErrorKind::DeclaredDimMismatch { axis, .. } => Some(*axis),
            _ => None,
        }
    }

    /// A suggestion for fixing the problem, where there is one.
    pub fn hint(&self) -> Option<String> {
        use ErrorKind::*;
        Some(match self {
            UnsupportedVersion { .. } => {
                "re-export the model with a current `ovc` or `openvino.save_model`, which write version 11".into()
            }
            WeightsMissing { .. } => {
                "give the weights file with `--weights FILE.bin`, or put it beside the .xml with the same name".into()
            }
            Unimplemented { .. } => {
                "`ovir check` lists such layers in its summary; --deny-unknown makes them errors".into()
            }
            CannotRun { .. } => {
                "`ovir info MODEL.xml` lists which op types ovir runs; `ovir check` still checks the model".into()
            }
            WeightsOutOfRange { .. } => {
                "the .bin does not belong to this .xml, or it was truncated".into()
            }
            UnknownPort { .. } => {
                "edges name port ids; check the `id` attributes of the layer's <port>s".into()
            }
            InvalidAttribute { name, .. } if name == "m_pythondiv" || name == "pythondiv" => {
                "use true, false, 1 or 0".into()
            }
            ElementTypeMismatch { .. } => "insert a Convert so that both inputs have one type".into(),
            IncompatibleShapes { mode, .. } if mode == "none" => {
                "auto_broadcast=\"none\" needs equal shapes; use numpy to broadcast".into()
            }
            DeclaredDimMismatch { .. } | DeclaredRankMismatch { .. } => {
                "OpenVINO ignores declared <dim>s, so the file may still load there; fix the dims or re-export the IR".into()
            }
            PdpdAxisMissing { .. } => "write auto_broadcast.auto_broadcast_axis explicitly".into(),
            DeadLayer => "remove the layer, or connect it to a Result".into(),
            InputNotGiven { .. } => {
                "`ovir run` takes inputs with `-i NAME=FILE.npy`, `--inputs DIR` (a folder of NAME.npy files) or `--random-inputs`".into()
            }
            _ => return None,
        })
    }
}

/// An error and, where it has one, its location. (Boxed: results stay one pointer wide.)
#[derive(Debug)]
pub struct Error {
    inner: Box<Inner>,
}

#[derive(Debug)]
struct Inner {
    kind: ErrorKind,
    at: Option<Location>,
}

impl Error {
    pub fn new(kind: ErrorKind) -> Error {
        Error {
            inner: Box::new(Inner { kind, at: None }),
        }
    }

    pub fn at(kind: ErrorKind, at: Location) -> Error {
        Error {
            inner: Box::new(Inner { kind, at: Some(at) }),
        }
    }

    pub fn kind(&self) -> &ErrorKind {
        &self.inner.kind
    }

    pub fn location(&self) -> Option<&Location> {
        self.inner.at.as_ref()
    }

    pub fn code(&self) -> &'static str {
        self.inner.kind.code()
    }

    /// Wraps a list: one error stays itself, several become [`ErrorKind::Several`].
    pub fn from_list(mut errors: Vec<Error>) -> Error {
        if errors.len() == 1 {
            errors.remove(0)
        } else {
            Error::new(ErrorKind::Several(errors))
        }
    }

    /// The individual errors (the inverse of [`Error::from_list`]).
    pub fn into_list(self) -> Vec<Error> {
        match self.inner.kind {
            ErrorKind::Several(list) => list.into_iter().flat_map(Error::into_list).collect(),
            _ => vec![self],
        }
    }

    /// The individual errors, by reference.
    pub fn iter(&self) -> Box<dyn Iterator<Item = &Error> + '_> {
        match &self.inner.kind {
            ErrorKind::Several(list) => Box::new(list.iter().flat_map(Error::iter)),
            _ => Box::new(std::iter::once(self)),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let ErrorKind::Several(list) = &self.inner.kind {
            write!(f, "{} errors:", list.len())?;
            for e in list {
                write!(f, "\n{e}")?;
            }
            return Ok(());
        }
        match &self.inner.at {
            Some(at) => write!(f, "{at}: {}", self.inner.kind),
            None => write!(f, "{}", self.inner.kind),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        std::error::Error::source(&self.inner.kind)
    }
}

impl From<ErrorKind> for Error {
    fn from(kind: ErrorKind) -> Error {
        Error::new(kind)
    }
}

#[cfg(test)]
mod tests {
    /// Every code `ErrorKind::code` can return is documented in docs/errors.md.
    #[test]
    fn every_code_is_documented() {
        let doc = include_str!("../docs/errors.md");
        let source = include_str!("error.rs");
        let codes: Vec<&str> = source
            .lines()
            .filter_map(|l| l.split("=> \"").nth(1))
            .filter_map(|rest| rest.split('"').next())
            .filter(|c| (c.starts_with('E') || c.starts_with('W')) && *c != "E000")
            .collect();
        assert!(codes.len() > 20, "{codes:?}");
        for code in codes {
            assert!(
                doc.contains(&format!("| {code} |")),
                "{code} is not in docs/errors.md"
            );
        }
    }
}
