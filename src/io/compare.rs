//! Comparing tensors and folders of `.npy` files: what `ovir diff` and `ovir run --expect`
//! report.
//!
//! Side A is the reference (the expected values), side B the values under test. Per element:
//! * equal: numerically equal (`-0.0` equals `0.0`; an infinity equals itself), or both NaN
//!   unless NaN is set to differ;
//! * within tolerance (floats only): `|a - b| <= atol + rtol * |a|`, or at most `ulps` units in
//!   the last place apart in the element's own type;
//! * otherwise the element differs. Integers and booleans compare exactly, whatever the
//!   tolerances.
//!
//! Errors are reported over the elements where neither side is NaN: the absolute error
//! `|a - b|` (computed exactly for integers), the relative error `|a - b| / |a|` (infinite when
//! only `a` is 0), and the index of the largest absolute error.

use std::fmt::{self, Write as _};
use std::path::{Path, PathBuf};

use half::{bf16, f16};
use serde::{Serialize, Serializer};

use super::npy;
use super::serialize::Scalar;
use super::text::{TextValue, dims_text};
use crate::dtype::ElementType;
use crate::num::Num;
use crate::tensor::{Tensor, unravel};

/// When two elements count as the same.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Tolerance {
    pub atol: f64,
    pub rtol: f64,
    pub ulps: u64,
    /// NaN differs from NaN (by default two NaNs are equal).
    pub nan_differs: bool,
}

impl fmt::Display for Tolerance {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.atol == 0.0 && self.rtol == 0.0 && self.ulps == 0 {
            f.write_str("exact")?;
        } else {
            write!(
                f,
                "atol {}, rtol {}, ulps {}",
                short(self.atol),
                short(self.rtol),
                self.ulps
            )?;
        }
        f.write_str(if self.nan_differs {
            "; NaN differs from NaN"
        } else {
            "; NaN equals NaN"
        })
    }
}

/// An error measure: a number, or `"inf"` where JSON has none.
fn ser_error<S: Serializer>(x: &f64, s: S) -> Result<S::Ok, S::Error> {
    Scalar::of(*x).serialize(s)
}

fn ser_opt_error<S: Serializer>(x: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
    match x {
        Some(x) => ser_error(x, s),
        None => s.serialize_none(),
    }
}

/// An error measure for people: five significant digits.
fn short(x: f64) -> String {
    if !x.is_finite() {
        return x.text();
    }
    format!("{x:.4e}").parse::<f64>().unwrap_or(x).text()
}

fn ser_type<S: Serializer>(t: &Option<ElementType>, s: S) -> Result<S::Ok, S::Error> {
    match t {
        Some(t) => s.serialize_str(&t.to_string()),
        None => s.serialize_none(),
    }
}

/// An absolute error: exact for integers (up to 2^64), an f64 for floats.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Magnitude {
    Int(u128),
    Float(f64),
}

impl Magnitude {
    pub fn as_f64(self) -> f64 {
        match self {
            Magnitude::Int(i) => i as f64,
            Magnitude::Float(x) => x,
        }
    }

    fn greater(self, other: Magnitude) -> bool {
        match (self, other) {
            (Magnitude::Int(a), Magnitude::Int(b)) => a > b,
            (a, b) => a.as_f64() > b.as_f64(),
        }
    }
}

impl fmt::Display for Magnitude {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Magnitude::Int(i) => write!(f, "{i}"),
            Magnitude::Float(x) => f.write_str(&short(*x)),
        }
    }
}

impl Serialize for Magnitude {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match *self {
            // |a - b| of two integers of at most 64 bits fits an i128.
            Magnitude::Int(i) => Scalar::Int(i as i128).serialize(s),
            Magnitude::Float(x) => ser_error(&x, s),
        }
    }
}

/// One element outside tolerance.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Mismatch {
    pub index: Vec<usize>,
    pub a: Scalar,
    pub b: Scalar,
    /// `None` when either side is NaN.
    pub abs_error: Option<Magnitude>,
    #[serde(serialize_with = "ser_opt_error")]
    pub rel_error: Option<f64>,
}

/// How two tensors of the same type and shape compare.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Stats {
    pub elements: usize,
    /// Elements outside tolerance.
    pub differing: usize,
    /// Elements not equal but within tolerance.
    pub within_tolerance: usize,
    pub max_abs_error: Magnitude,
    #[serde(serialize_with = "ser_error")]
    pub max_rel_error: f64,
    /// Where the largest absolute error is (`None` when every element is equal or NaN).
    pub worst_index: Option<Vec<usize>>,
    /// The first differing elements, in row-major order.
    pub mismatches: Vec<Mismatch>,
}

/// The verdict on one tensor.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Every element equal.
    Equal,
    /// Some elements differ, all within tolerance.
    Close,
    /// Some elements outside tolerance.
    Different,
    DtypeMismatch,
    ShapeMismatch,
    OnlyInA,
    OnlyInB,
    /// A file could not be read.
    Unreadable,
}

impl Status {
    /// Whether the two sides agree.
    pub fn is_same(self) -> bool {
        matches!(self, Status::Equal | Status::Close)
    }
}

/// One tensor's comparison.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Entry {
    /// The file name (relative to the compared folders) or output name.
    pub name: String,
    pub status: Status,
    #[serde(skip_serializing_if = "Option::is_none", serialize_with = "ser_type")]
    pub dtype_a: Option<ElementType>,
    #[serde(skip_serializing_if = "Option::is_none", serialize_with = "ser_type")]
    pub dtype_b: Option<ElementType>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shape_a: Option<Vec<usize>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shape_b: Option<Vec<usize>>,
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub stats: Option<Stats>,
    /// Why a file could not be read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl Entry {
    fn bare(name: &str, status: Status) -> Entry {
        Entry {
            name: name.to_owned(),
            status,
            dtype_a: None,
            dtype_b: None,
            shape_a: None,
            shape_b: None,
            stats: None,
            error: None,
        }
    }

    /// Only one side has this tensor.
    pub fn only_in_a(name: &str) -> Entry {
        Entry::bare(name, Status::OnlyInA)
    }

    pub fn only_in_b(name: &str) -> Entry {
        Entry::bare(name, Status::OnlyInB)
    }

    /// A file that could not be read (`side` is its label).
    pub fn unreadable(name: &str, side: &str, message: impl fmt::Display) -> Entry {
        let mut e = Entry::bare(name, Status::Unreadable);
        e.error = Some(format!("{side}: {message}"));
        e
    }
}

/// Element types that can be compared.
trait DiffValue: TextValue {
    /// The position of the value on the type's number line, one step per representable value
    /// (`-0.0` and `0.0` share 0); `None` for integers.
    fn ordinal(self) -> Option<i128>;
}

macro_rules! int_diff {
    ($($t:ty)*) => {$(
        impl DiffValue for $t {
            fn ordinal(self) -> Option<i128> {
                None
            }
        }
    )*};
}
int_diff!(i8 i16 i32 i64 u8 u16 u32 u64 bool);

macro_rules! float_diff {
    ($($t:ty, $sign:expr;)*) => {$(
        impl DiffValue for $t {
            fn ordinal(self) -> Option<i128> {
                let bits = self.to_bits() as i128;
                let sign: i128 = $sign;
                Some(if bits & sign != 0 { -(bits & !sign) } else { bits })
            }
        }
    )*};
}
float_diff! {
    f16, 1 << 15;
    bf16, 1 << 15;
    f32, 1 << 31;
    f64, 1 << 63;
}

fn stats<T: DiffValue>(a: &Tensor, b: &Tensor, tol: &Tolerance, show: usize) -> Stats {
    let (va, vb) = (T::view(a), T::view(b));
    let (va, vb) = (
        va.as_ref().map(|v| v.as_standard_layout()),
        vb.as_ref().map(|v| v.as_standard_layout()),
    );
    let xs = va.as_ref().and_then(|v| v.as_slice()).unwrap_or(&[]);
    let ys = vb.as_ref().and_then(|v| v.as_slice()).unwrap_or(&[]);
    let shape = a.shape();
    let mut s = Stats {
        elements: xs.len(),
        differing: 0,
        within_tolerance: 0,
        max_abs_error: Magnitude::Int(0),
        max_rel_error: 0.0,
        worst_index: None,
        mismatches: Vec::new(),
    };
    let mut worst: Option<usize> = None;
    for (k, (&x, &y)) in xs.iter().zip(ys).enumerate() {
        let (nx, ny) = (x.to_num(), y.to_num());
        // Absolute error (exact) and |a|.
        let (exact, mag, nan) = match (nx, ny) {
            (Num::Int(p), Num::Int(q)) => (
                Magnitude::Int((p - q).unsigned_abs()),
                p.unsigned_abs() as f64,
                false,
            ),
            (Num::Float(p), Num::Float(q)) => {
                if p.is_nan() || q.is_nan() {
                    (Magnitude::Float(0.0), 0.0, true)
                } else if p == q {
                    (Magnitude::Float(0.0), p.abs(), false)
                } else {
                    (Magnitude::Float((p - q).abs()), p.abs(), false)
                }
            }
            _ => (Magnitude::Float(f64::INFINITY), 0.0, false),
        };
        let abs = exact.as_f64();
        let equal = if nan {
            !tol.nan_differs
                && matches!((nx, ny), (Num::Float(p), Num::Float(q)) if p.is_nan() && q.is_nan())
        } else {
            abs == 0.0
        };
        let rel = if abs == 0.0 {
            0.0
        } else if mag == 0.0 {
            f64::INFINITY
        } else {
            abs / mag
        };
        if !nan {
            if exact.greater(s.max_abs_error) {
                worst = Some(k);
                s.max_abs_error = exact;
            }
            s.max_rel_error = s.max_rel_error.max(rel);
        }
        if equal {
            continue;
        }
        // Infinities only equal themselves.
        let finite =
            matches!((nx, ny), (Num::Float(p), Num::Float(q)) if p.is_finite() && q.is_finite());
        let within = finite
            && match (x.ordinal(), y.ordinal()) {
                (Some(ox), Some(oy)) => {
                    abs <= tol.atol + tol.rtol * mag
                        || (tol.ulps > 0 && (ox - oy).unsigned_abs() <= tol.ulps as u128)
                }
                _ => false,
            };
        if within {
            s.within_tolerance += 1;
            continue;
        }
        s.differing += 1;
        if s.mismatches.len() < show {
            s.mismatches.push(Mismatch {
                index: unravel(k, shape),
                a: Scalar::of(x),
                b: Scalar::of(y),
                abs_error: (!nan).then_some(exact),
                rel_error: (!nan).then_some(rel),
            });
        }
    }
    s.worst_index = worst.map(|k| unravel(k, shape));
    s
}

/// Compares B against A.
pub fn compare(name: &str, a: &Tensor, b: &Tensor, tol: &Tolerance, show: usize) -> Entry {
    let mut e = Entry::bare(name, Status::Equal);
    let (ta, tb) = (a.element_type(), b.element_type());
    e.dtype_a = Some(ta);
    e.shape_a = Some(a.shape().to_vec());
    if ta != tb {
        e.status = Status::DtypeMismatch;
        e.dtype_b = Some(tb);
    }
    if a.shape() != b.shape() {
        if e.status == Status::Equal {
            e.status = Status::ShapeMismatch;
        }
        e.shape_b = Some(b.shape().to_vec());
    }
    if e.status != Status::Equal {
        return e;
    }
    let s = crate::dispatch!(
        any: ta,
        T => stats::<T>(a, b, tol, show),
        _ => stats::<u8>(a, b, tol, show)
    );
    e.status = if s.differing > 0 {
        Status::Different
    } else if s.within_tolerance > 0 {
        Status::Close
    } else {
        Status::Equal
    };
    e.stats = Some(s);
    e
}

/// A whole comparison: every tensor of A and B.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Report {
    /// The report format; bumped when fields change meaning.
    pub version: u32,
    /// What A and B are (paths, or `expected`/`actual`).
    pub a: String,
    pub b: String,
    pub tolerance: Tolerance,
    /// Whether A and B agree within tolerance.
    pub same: bool,
    pub tensors: Vec<Entry>,
}

impl Report {
    pub fn new(a: String, b: String, tolerance: Tolerance, tensors: Vec<Entry>) -> Report {
        let same = tensors.iter().all(|e| e.status.is_same());
        Report {
            version: 1,
            a,
            b,
            tolerance,
            same,
            tensors,
        }
    }

    /// Whether a file could not be read.
    pub fn unreadable(&self) -> bool {
        self.tensors.iter().any(|e| e.status == Status::Unreadable)
    }
}

/// The text report: one line per tensor, the first mismatches under each differing one, and
/// a closing count.
impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "A: {}\nB: {}\ntolerance: {}",
            self.a, self.b, self.tolerance
        );
        for e in &self.tensors {
            let kind = e.dtype_a.map(|t| t.to_string()).unwrap_or_default();
            // Errors of booleans are meaningless.
            let boolean = e.dtype_a == Some(ElementType::Boolean);
            let shape = e.shape_a.as_deref().map(dims_text).unwrap_or_default();
            match e.status {
                Status::Equal => {
                    let _ = writeln!(out, "equal      {}  {kind} {shape}", e.name);
                }
                Status::Close => {
                    let s = e.stats.as_ref().expect("close has stats");
                    let _ = writeln!(
                        out,
                        "close      {}  {kind} {shape}: {} of {} values differ within tolerance; max abs error {}, max rel error {}",
                        e.name,
                        s.within_tolerance,
                        s.elements,
                        s.max_abs_error,
                        short(s.max_rel_error)
                    );
                }
                Status::Different => {
                    let s = e.stats.as_ref().expect("different has stats");
                    let _ = write!(
                        out,
                        "different  {}  {kind} {shape}: {} of {} values differ",
                        e.name, s.differing, s.elements
                    );
                    if s.within_tolerance > 0 {
                        let _ = write!(out, " ({} more within tolerance)", s.within_tolerance);
                    }
                    match &s.worst_index {
                        Some(_) if boolean => out.push('\n'),
                        Some(w) => {
                            let _ = writeln!(
                                out,
                                "; max abs error {} at {}, max rel error {}",
                                s.max_abs_error,
                                dims_text(w),
                                short(s.max_rel_error)
                            );
                        }
                        None => out.push('\n'),
                    }
                    for m in &s.mismatches {
                        let _ = write!(out, "    {}  A {}  B {}", dims_text(&m.index), m.a, m.b);
                        if let (Some(abs), Some(rel), false) = (m.abs_error, m.rel_error, boolean) {
                            let _ = write!(out, "  (abs {abs}, rel {})", short(rel));
                        }
                        out.push('\n');
                    }
                    if s.differing > s.mismatches.len() {
                        let _ = writeln!(out, "    ... {} more", s.differing - s.mismatches.len());
                    }
                }
                Status::DtypeMismatch => {
                    let _ = writeln!(
                        out,
                        "dtype      {}: {kind} in A, {} in B",
                        e.name,
                        e.dtype_b.map(|t| t.to_string()).unwrap_or_default()
                    );
                }
                Status::ShapeMismatch => {
                    let _ = writeln!(
                        out,
                        "shape      {}  {kind}: {shape} in A, {} in B",
                        e.name,
                        e.shape_b.as_deref().map(dims_text).unwrap_or_default()
                    );
                }
                Status::OnlyInA => {
                    let _ = writeln!(out, "only in A  {}", e.name);
                }
                Status::OnlyInB => {
                    let _ = writeln!(out, "only in B  {}", e.name);
                }
                Status::Unreadable => {
                    let _ = writeln!(
                        out,
                        "unreadable {}: {}",
                        e.name,
                        e.error.as_deref().unwrap_or("")
                    );
                }
            }
        }
        let words = |s: Status| match s {
            Status::Equal => "equal",
            Status::Close => "close",
            Status::Different => "different",
            Status::DtypeMismatch => "dtype mismatch",
            Status::ShapeMismatch => "shape mismatch",
            Status::OnlyInA => "only in A",
            Status::OnlyInB => "only in B",
            Status::Unreadable => "unreadable",
        };
        let parts: Vec<String> = [
            Status::Equal,
            Status::Close,
            Status::Different,
            Status::DtypeMismatch,
            Status::ShapeMismatch,
            Status::OnlyInA,
            Status::OnlyInB,
            Status::Unreadable,
        ]
        .into_iter()
        .filter_map(|s| {
            let n = self.tensors.iter().filter(|e| e.status == s).count();
            (n > 0).then(|| format!("{n} {}", words(s)))
        })
        .collect();
        let _ = writeln!(
            out,
            "{}: {} tensor{} ({})",
            if self.same { "same" } else { "differ" },
            self.tensors.len(),
            if self.tensors.len() == 1 { "" } else { "s" },
            parts.join(", ")
        );
        f.write_str(&out)
    }
}

/// The `.npy` files under `dir`, as `/`-separated paths relative to it, sorted. Symbolic
/// links to folders are not followed.
pub fn npy_files(dir: &Path) -> std::io::Result<Vec<String>> {
    fn walk(dir: &Path, prefix: &str, out: &mut Vec<String>) -> std::io::Result<()> {
        for entry in std::fs::read_dir(dir)? {
            let entry = entry?;
            let name = entry.file_name().to_string_lossy().into_owned();
            let rel = if prefix.is_empty() {
                name.clone()
            } else {
                format!("{prefix}/{name}")
            };
            let kind = entry.file_type()?;
            if kind.is_dir() {
                walk(&entry.path(), &rel, out)?;
            } else if name.ends_with(".npy") && !name.starts_with('.') {
                out.push(rel);
            }
        }
        Ok(())
    }
    let mut out = Vec::new();
    walk(dir, "", &mut out)?;
    out.sort();
    Ok(out)
}

/// Compares model outputs (B) with the files `ovir run -o` would have written for them in
/// `dir` (A). Files in `dir` that no output has are reported as only in A.
pub fn compare_outputs(
    dir: &Path,
    outputs: &[crate::Output],
    label: String,
    tol: &Tolerance,
    show: usize,
    limit: u64,
) -> std::io::Result<Report> {
    let present = npy_files(dir)?;
    let files = npy::output_file_names(outputs.iter().map(|o| o.name.as_str()));
    let mut entries = Vec::new();
    for (o, file) in outputs.iter().zip(&files) {
        let path = dir.join(file);
        entries.push(if present.binary_search(file).is_err() {
            Entry::only_in_b(file)
        } else {
            match npy::read(&path, limit) {
                Ok(want) => compare(file, &want, &npy::as_stored(&o.tensor), tol, show),
                Err(e) => Entry::unreadable(file, &path.display().to_string(), e),
            }
        });
    }
    // Files for outputs the model does not have (top-level only: -o writes no folders).
    for p in present {
        if !p.contains('/') && !files.contains(&p) {
            entries.push(Entry::only_in_a(&p));
        }
    }
    Ok(Report::new(dir.display().to_string(), label, *tol, entries))
}

/// Compares two `.npy` files or folders (matched by relative path; a file against a folder
/// is compared with the folder's file of the same name). `limit` bounds each array's bytes.
pub fn compare_paths(
    a: &Path,
    b: &Path,
    tol: &Tolerance,
    show: usize,
    limit: u64,
) -> std::io::Result<Report> {
    let is_dir = |p: &Path| {
        std::fs::metadata(p)
            .map(|m| m.is_dir())
            .map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", p.display())))
    };
    let (da, db) = (is_dir(a)?, is_dir(b)?);
    let file_name = |p: &Path| {
        p.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    };
    // Pairs of (name, path in A, path in B).
    let mut pairs: Vec<(String, Option<PathBuf>, Option<PathBuf>)> = Vec::new();
    match (da, db) {
        (false, false) => {
            let (na, nb) = (file_name(a), file_name(b));
            let name = if na == nb {
                na
            } else {
                format!("{na} vs {nb}")
            };
            pairs.push((name, Some(a.to_owned()), Some(b.to_owned())));
        }
        (false, true) => {
            let n = file_name(a);
            let pb = b.join(&n);
            pairs.push((n, Some(a.to_owned()), pb.is_file().then_some(pb)));
        }
        (true, false) => {
            let n = file_name(b);
            let pa = a.join(&n);
            pairs.push((n, pa.is_file().then_some(pa), Some(b.to_owned())));
        }
        (true, true) => {
            let (fa, fb) = (npy_files(a)?, npy_files(b)?);
            let mut names: Vec<&String> = fa.iter().chain(&fb).collect();
            names.sort();
            names.dedup();
            // Folders written by `ovir run --dump-all` are compared in execution order, so
            // the first difference listed is where the runs part.
            let order: std::collections::HashMap<String, usize> = super::dump::order(a)
                .or_else(|| super::dump::order(b))
                .unwrap_or_default()
                .into_iter()
                .enumerate()
                .map(|(k, f)| (f, k))
                .collect();
            names.sort_by_key(|n| order.get(*n).copied().unwrap_or(usize::MAX));
            for n in names {
                pairs.push((
                    n.clone(),
                    fa.binary_search(n).is_ok().then(|| a.join(n)),
                    fb.binary_search(n).is_ok().then(|| b.join(n)),
                ));
            }
        }
    }
    let mut entries = Vec::new();
    for (name, pa, pb) in pairs {
        let entry = match (pa, pb) {
            (Some(pa), Some(pb)) => match (npy::read(&pa, limit), npy::read(&pb, limit)) {
                (Ok(x), Ok(y)) => compare(&name, &x, &y, tol, show),
                (Err(e), _) => Entry::unreadable(&name, &pa.display().to_string(), e),
                (_, Err(e)) => Entry::unreadable(&name, &pb.display().to_string(), e),
            },
            (Some(_), None) => Entry::only_in_a(&name),
            (None, Some(_)) => Entry::only_in_b(&name),
            (None, None) => continue,
        };
        entries.push(entry);
    }
    Ok(Report::new(
        a.display().to_string(),
        b.display().to_string(),
        *tol,
        entries,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::arr1;

    fn arr<T: crate::Element>(v: &[T]) -> Tensor {
        T::wrap(arr1(v).into_dyn())
    }

    fn cmp(a: &Tensor, b: &Tensor, tol: Tolerance) -> Entry {
        compare("t", a, b, &tol, 10)
    }

    #[test]
    fn equality_rules() {
        let exact = Tolerance::default();
        let a = arr(&[0.0f32, f32::NAN, f32::INFINITY, 1.0]);
        let b = arr(&[-0.0f32, f32::NAN, f32::INFINITY, 1.0]);
        assert_eq!(cmp(&a, &b, exact).status, Status::Equal);
        let nan = Tolerance {
            nan_differs: true,
            ..exact
        };
        let e = cmp(&a, &b, nan);
        assert_eq!(e.status, Status::Different);
        assert_eq!(e.stats.as_ref().unwrap().mismatches[0].index, vec![1]);
        assert_eq!(e.stats.unwrap().mismatches[0].abs_error, None);
        // inf vs finite and inf vs -inf differ at any tolerance.
        let loose = Tolerance {
            atol: 1e30,
            rtol: 1.0,
            ulps: 1000,
            ..exact
        };
        let e = cmp(
            &arr(&[f32::INFINITY, f32::INFINITY]),
            &arr(&[1.0f32, f32::NEG_INFINITY]),
            loose,
        );
        assert_eq!(e.stats.unwrap().differing, 2);
    }

    #[test]
    fn tolerances() {
        let a = arr(&[1.0f32, 100.0, 0.0]);
        let b = arr(&[1.0f32 + f32::EPSILON, 100.5, 1e-6]);
        let exact = Tolerance::default();
        let e = cmp(&a, &b, exact);
        let s = e.stats.unwrap();
        assert_eq!((e.status, s.differing), (Status::Different, 3));
        assert_eq!(s.worst_index, Some(vec![1]));
        assert_eq!(s.max_abs_error, Magnitude::Float(0.5));
        assert_eq!(s.max_rel_error, f64::INFINITY);
        // 1 ulp apart; the other two within atol/rtol.
        let t = Tolerance { ulps: 1, ..exact };
        assert_eq!(cmp(&a, &b, t).stats.unwrap().differing, 2);
        let t = Tolerance {
            atol: 1e-5,
            rtol: 0.005,
            ..exact
        };
        let e = cmp(&a, &b, t);
        assert_eq!(e.status, Status::Close);
        assert_eq!(e.stats.unwrap().within_tolerance, 3);
        // ulps counts across zero: -min_positive to +min_positive is 2 steps.
        let tiny = f32::from_bits(1);
        let e = cmp(
            &arr(&[-tiny]),
            &arr(&[tiny]),
            Tolerance { ulps: 2, ..exact },
        );
        assert_eq!(e.status, Status::Close);
        let e = cmp(
            &arr(&[-tiny]),
            &arr(&[tiny]),
            Tolerance { ulps: 1, ..exact },
        );
        assert_eq!(e.status, Status::Different);
        // f16 ulps are f16 steps.
        let one = f16::from_f32(1.0);
        let next = f16::from_bits(one.to_bits() + 1);
        assert_eq!(
            cmp(&arr(&[one]), &arr(&[next]), Tolerance { ulps: 1, ..exact }).status,
            Status::Close
        );
    }

    #[test]
    fn integers_are_exact_whatever_the_tolerance() {
        let loose = Tolerance {
            atol: 10.0,
            rtol: 1.0,
            ulps: 10,
            nan_differs: false,
        };
        let e = cmp(&arr(&[i64::MIN, 5]), &arr(&[i64::MAX, 5]), loose);
        let s = e.stats.unwrap();
        assert_eq!(s.differing, 1);
        assert_eq!(s.max_abs_error, Magnitude::Int(u64::MAX as u128));
        let e = cmp(&arr(&[u64::MAX]), &arr(&[u64::MAX - 1]), loose);
        assert_eq!(e.status, Status::Different);
        let j = serde_json::to_value(&e.stats.unwrap().mismatches[0]).unwrap();
        assert_eq!(j["a"], serde_json::json!(u64::MAX));
    }

    #[test]
    fn dtype_and_shape() {
        let e = cmp(&arr(&[1.0f32]), &arr(&[1.0f64]), Tolerance::default());
        assert_eq!(e.status, Status::DtypeMismatch);
        let e = cmp(&arr(&[1.0f32]), &arr(&[1.0f32, 2.0]), Tolerance::default());
        assert_eq!(e.status, Status::ShapeMismatch);
        assert_eq!(e.shape_b, Some(vec![2]));
        assert_eq!(
            cmp(&arr(&[1u8]), &arr(&[true]), Tolerance::default()).status,
            Status::DtypeMismatch
        );
    }
}
