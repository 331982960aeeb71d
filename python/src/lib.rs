//! `ovir._ovir`: the native part of the `ovir` Python package (PyO3). The package's
//! `__init__.py` re-exports it and adds what is plain Python (`compile_model`, `testing`).
//!
//! Arrays cross as numpy arrays: an input is read from its buffer (one copy, into the tensor
//! the run owns), an output's buffer is moved into the numpy array it becomes (no copy). The
//! GIL is released while a model runs, so several Python threads can run models at once.

use std::path::PathBuf;
use std::sync::Arc;

use ndarray::{ArrayD, IxDyn};
use numpy::{
    Element as NpElement, PyArray, PyArrayDescrMethods, PyUntypedArray, PyUntypedArrayMethods,
};
use ovir::dtype::ElementType;
use ovir::io::compare::{self as cmp, Entry, Report, Tolerance};
use ovir::report::{check_text, render};
use ovir::shape::PartialShape;
use ovir::{CheckOptions, InputKey, LoadOptions, Severity, Tensor, Value};
use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString, PyTuple};

/// A run allocates its tensors and many small lists; mimalloc keeps that cheap, as in the CLI
/// (the module's own allocations only: numpy's stay with Python).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

create_exception!(
    ovir,
    Error,
    PyException,
    "An error of ovir: `code` is its code (`E613`), `errors` every finding as a Diagnostic \
     (a model file can have several), `str(e)` the text the CLI prints."
);

/// One finding of `check`, or one error of a failed call.
#[pyclass(frozen, get_all, module = "ovir")]
#[derive(Clone)]
struct Diagnostic {
    /// `E613`, `W301`, ...
    code: String,
    /// `error` or `warning`.
    severity: String,
    /// What is wrong, without the location.
    message: String,
    file: Option<String>,
    line: Option<u32>,
    column: Option<u32>,
    layer_id: Option<String>,
    layer_name: Option<String>,
    layer_type: Option<String>,
    /// `input port #1 (id 1)`, when a port is named.
    port: Option<String>,
    /// A hint at the fix, where there is one.
    hint: Option<String>,
    /// The finding as the CLI prints it.
    text: String,
}

impl Diagnostic {
    fn new(severity: Severity, e: &ovir::Error) -> Diagnostic {
        let at = e.location();
        let layer = at.and_then(|a| a.layer.as_ref());
        let pos = at.and_then(|a| a.pos);
        Diagnostic {
            code: e.code().to_owned(),
            severity: severity.to_string(),
            message: e.kind().to_string(),
            file: at.map(|a| a.file.display().to_string()),
            line: pos.map(|p| p.line),
            column: pos.map(|p| p.col),
            layer_id: layer.map(|l| l.id.clone()),
            layer_name: layer.map(|l| l.name.clone()),
            layer_type: layer.map(|l| l.ty.clone()),
            port: at.and_then(|a| a.port.as_ref()).map(|p| p.to_string()),
            hint: e.kind().hint(),
            text: render([(severity, e)]).trim_end().to_owned(),
        }
    }
}

#[pymethods]
impl Diagnostic {
    fn __str__(&self) -> String {
        self.text.clone()
    }

    fn __repr__(&self) -> String {
        let mut s = format!(
            "Diagnostic(code={}, severity={}",
            pyrepr(&self.code),
            pyrepr(&self.severity)
        );
        if let Some(f) = &self.file {
            s += &format!(", file={}", pyrepr(f));
        }
        if let (Some(l), Some(c)) = (self.line, self.column) {
            s += &format!(", line={l}, column={c}");
        }
        s += &format!(", message={})", pyrepr(&self.message));
        s
    }
}

/// A string as Python's `repr` writes it (single quotes unless the text has one).
fn pyrepr(s: &str) -> String {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::with_capacity(s.len() + 2);
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32))
            }
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

/// An ovir error as an `ovir.Error`: its text as the CLI prints it, `code` (the first
/// error's) and `errors` (each as a Diagnostic).
fn raise(py: Python<'_>, e: &ovir::Error) -> PyErr {
    let errors: Vec<Diagnostic> = e
        .iter()
        .map(|e| Diagnostic::new(Severity::Error, e))
        .collect();
    let text = ovir::report::render_errors(e);
    let err = Error::new_err(text.trim_end().to_owned());
    let value = err.value(py);
    let code = errors.first().map_or("E000", |d| d.code.as_str());
    let _ = value.setattr("code", code);
    if let Ok(list) = PyList::new(py, errors) {
        let _ = value.setattr("errors", list);
    }
    err
}

/// A model input or output. Ports are equal when they are the same port of the same model
/// (they can be dict keys, as OpenVINO's are).
#[pyclass(frozen, get_all, eq, hash, module = "ovir")]
#[derive(Clone, PartialEq, Eq, Hash)]
struct Port {
    /// The name it is bound (inputs) or returned (outputs) by.
    name: String,
    /// Every tensor name of the port.
    names: Vec<String>,
    /// The Parameter or Result layer's name.
    layer: String,
    /// `f32`, `i64`, `boolean`, ...; for outputs as inferred (None if inference failed).
    element_type: Option<String>,
    /// The partial shape, as `ovir info` prints it: `[1,3,?,224]`, `[?]`, `...`.
    shape: String,
}

#[pymethods]
impl Port {
    /// The port's name (OpenVINO's `Output.get_any_name()`).
    fn get_any_name(&self) -> String {
        self.name.clone()
    }

    /// Every tensor name of the port (OpenVINO's `Output.get_names()`).
    fn get_names(&self) -> std::collections::BTreeSet<String> {
        self.names.iter().cloned().collect()
    }

    fn __repr__(&self) -> String {
        format!(
            "Port(name={}, element_type={}, shape={})",
            pyrepr(&self.name),
            pyrepr(self.element_type.as_deref().unwrap_or("?")),
            pyrepr(&self.shape)
        )
    }
}

fn port(t: &ovir::info::TensorInfo) -> Port {
    Port {
        name: t.name.clone(),
        names: t.names.clone(),
        layer: t.layer.clone(),
        element_type: t.element_type.map(|e| e.to_string()),
        shape: t.shape.clone(),
    }
}

/// A loaded and validated model. `run` (or calling it) takes a dict of name -> array, or a
/// list of arrays by position, and returns a dict of output name -> numpy array, in the
/// model's output order.
#[pyclass(frozen, module = "ovir")]
struct Model {
    inner: ovir::Model,
    path: String,
    inputs: Vec<Port>,
    outputs: Vec<Port>,
    /// Each input's names (as it binds by them) and element type (lists take it; float32
    /// arrays feed bf16 inputs).
    input_types: Vec<(Vec<String>, Option<ElementType>)>,
    /// The key of each output in `run`'s dict, made once: its name, or for a name an earlier
    /// output has, the file name `ovir run -o` gives it (`zero`, `zero_1`).
    output_keys: Vec<Py<PyString>>,
}

#[pymethods]
impl Model {
    #[new]
    #[pyo3(signature = (path, weights = None, *, memory_limit = None))]
    fn new(
        py: Python<'_>,
        path: PathBuf,
        weights: Option<PathBuf>,
        memory_limit: Option<u64>,
    ) -> PyResult<Model> {
        let options = LoadOptions {
            weights,
            max_memory: memory_limit,
        };
        let loaded = py.detach(|| {
            let m = ovir::Model::load_with(&path, &options)?;
            let (inferred, _) = m.infer();
            let info = ovir::info::Info::new(m.graph(), &inferred);
            Ok::<_, ovir::Error>((m, info))
        });
        let (inner, info) = loaded.map_err(|e| raise(py, &e))?;
        let g = inner.graph();
        let input_types = (0..g.inputs.len())
            .map(|i| {
                let names = g.input_names(i).into_iter().map(str::to_owned).collect();
                (names, info.inputs.get(i).and_then(|t| t.element_type))
            })
            .collect();
        let names: Vec<&str> = (0..g.outputs.len()).map(|k| g.output_name(k)).collect();
        let files = ovir::io::npy::output_file_names(names.iter().copied());
        let mut seen = std::collections::HashSet::new();
        let output_keys = names
            .iter()
            .zip(&files)
            .map(|(&name, file)| {
                let key = if seen.contains(name) {
                    file.strip_suffix(".npy").unwrap_or(file)
                } else {
                    name
                };
                seen.insert(key);
                PyString::new(py, key).unbind()
            })
            .collect();
        Ok(Model {
            output_keys,
            inner,
            path: path.display().to_string(),
            inputs: info.inputs.iter().map(port).collect(),
            outputs: info.outputs.iter().map(port).collect(),
            input_types,
        })
    }

    /// The `.xml` the model was loaded from.
    #[getter]
    fn path(&self) -> &str {
        &self.path
    }

    #[getter]
    fn inputs(&self) -> Vec<Port> {
        self.inputs.clone()
    }

    #[getter]
    fn outputs(&self) -> Vec<Port> {
        self.outputs.clone()
    }

    /// The op types of live layers ovir does not implement (empty when the model runs).
    fn unimplemented(&self) -> Vec<String> {
        self.inner
            .unimplemented()
            .into_iter()
            .map(|u| u.op)
            .collect()
    }

    /// Runs the model: `inputs` is a dict of input name (any tensor name of the input, or its
    /// layer name) or position -> array, or a list of arrays by position. Returns a dict of
    /// output name -> numpy array. With `share_inputs` (the default), C-contiguous arrays of
    /// the input's dtype are read in place, not copied: do not write to them from another
    /// thread until the call returns.
    #[pyo3(signature = (inputs = None, *, share_inputs = true))]
    fn run<'py>(
        &self,
        py: Python<'py>,
        inputs: Option<&Bound<'py, PyAny>>,
        share_inputs: bool,
    ) -> PyResult<Bound<'py, PyDict>> {
        let prepared = self.bind(py, inputs, share_inputs)?;
        let values: Vec<(InputKey, Value<'_>)> = prepared
            .iter()
            .map(|(k, p)| Ok((k.clone(), p.value()?)))
            .collect::<PyResult<_>>()?;
        let outputs = py
            .detach(|| self.inner.run_values(values))
            .map_err(|e| raise(py, &e))?;
        // The lent arrays were held until the run ended.
        drop(prepared);
        let dict = PyDict::new(py);
        // Outputs come in the model's output order, which the keys follow.
        for (key, o) in self.output_keys.iter().zip(outputs) {
            dict.set_item(key.bind(py), to_numpy(py, o.tensor)?)?;
        }
        Ok(dict)
    }

    #[pyo3(signature = (inputs = None, *, share_inputs = true))]
    fn __call__<'py>(
        &self,
        py: Python<'py>,
        inputs: Option<&Bound<'py, PyAny>>,
        share_inputs: bool,
    ) -> PyResult<Bound<'py, PyDict>> {
        self.run(py, inputs, share_inputs)
    }

    fn __repr__(&self) -> String {
        format!(
            "Model({}, inputs={}, outputs={})",
            pyrepr(&self.path),
            self.inputs.len(),
            self.outputs.len()
        )
    }
}

impl Model {
    /// The element type a key binds to, where one input has it.
    fn want(&self, key: &InputKey) -> Option<ElementType> {
        match key {
            InputKey::Index(i) => self.input_types.get(*i)?.1,
            InputKey::Name(n) => {
                self.input_types
                    .iter()
                    .find(|(names, _)| names.iter().any(|m| m == n))?
                    .1
            }
        }
    }

    fn bind<'py>(
        &self,
        py: Python<'py>,
        inputs: Option<&Bound<'py, PyAny>>,
        share: bool,
    ) -> PyResult<Vec<(InputKey, Prepared<'py>)>> {
        let Some(inputs) = inputs.filter(|i| !i.is_none()) else {
            return Ok(Vec::new());
        };
        let mut bound = Vec::new();
        if let Ok(d) = inputs.cast::<PyDict>() {
            for (k, v) in d.iter() {
                let key = if let Ok(s) = k.extract::<String>() {
                    InputKey::Name(s)
                } else if let Ok(i) = k.extract::<usize>() {
                    InputKey::Index(i)
                } else {
                    return Err(PyTypeError::new_err(format!(
                        "input keys are names (str) or positions (int), not {}",
                        k.get_type().name()?
                    )));
                };
                let want = self.want(&key);
                bound.push((key, prepare(py, &v, want, share)?));
            }
        } else if inputs.is_instance_of::<PyList>() || inputs.is_instance_of::<PyTuple>() {
            for (i, v) in inputs.try_iter()?.enumerate() {
                let key = InputKey::Index(i);
                let want = self.want(&key);
                bound.push((key, prepare(py, &v?, want, share)?));
            }
        } else {
            return Err(PyTypeError::new_err(
                "inputs are a dict of name -> array or a list of arrays by position",
            ));
        }
        Ok(bound)
    }
}

/// An input as the run reads it: an array lent in place (held until the run ends), or a
/// tensor of its elements.
enum Prepared<'py> {
    Lent(Bound<'py, PyUntypedArray>, ElementType),
    Owned(Arc<Tensor>),
}

impl Prepared<'_> {
    /// The value the run reads, borrowing a lent array's bytes for as long as `self` lives.
    fn value(&self) -> PyResult<Value<'_>> {
        match self {
            Prepared::Owned(t) => Ok(Value::Tensor(Arc::clone(t))),
            Prepared::Lent(a, ty) => {
                // The bytes hold the shape: `prepare` lends only arrays of the type's dtype.
                Value::borrowed(*ty, a.shape(), array_bytes(a)?)
                    .ok_or_else(|| PyValueError::new_err("internal: a lent array's size"))
            }
        }
    }
}

/// The bytes of a C-contiguous array, borrowed for as long as `a` holds the array. They are
/// only read; a concurrent writer in another thread (the GIL is released during runs) is the
/// caller's to avoid (documented on `run`), as with any array read without the GIL.
fn array_bytes<'a>(a: &'a Bound<'_, PyUntypedArray>) -> PyResult<&'a [u8]> {
    if !a.is_c_contiguous() {
        return Err(PyValueError::new_err(
            "internal: array read with the wrong layout",
        ));
    }
    let n = a.len() * a.dtype().itemsize();
    if n == 0 {
        return Ok(&[]);
    }
    // SAFETY: `a` is a numpy array (its object has numpy's stable layout, whose `data` field
    // is what `PyArray::data` reads) and C-contiguous, so its data pointer starts its `n`
    // bytes, which stay allocated while `a` holds a reference to the array.
    Ok(unsafe {
        let data = (*a.as_array_ptr()).fields.data;
        std::slice::from_raw_parts(data as *const u8, n)
    })
}

/// An input value ready for a run: with `share`, an array (or what numpy makes of a list) that
/// is C-contiguous, of the native byte order and of the input's element type is lent, read in
/// place; anything else becomes a tensor (the array's own element type, for the run to check).
fn prepare<'py>(
    py: Python<'py>,
    value: &Bound<'py, PyAny>,
    want: Option<ElementType>,
    share: bool,
) -> PyResult<Prepared<'py>> {
    if !share || cfg!(target_endian = "big") {
        return Ok(Prepared::Owned(Arc::new(to_tensor(py, value, want)?)));
    }
    let a = contiguous(py, value, want.and_then(numpy_dtype))?;
    let lent = element_type_of(py, &a).filter(|&t| want.is_none_or(|w| w == t));
    Ok(match lent {
        Some(t) => Prepared::Lent(a, t),
        None => Prepared::Owned(Arc::new(to_tensor(py, a.as_any(), want)?)),
    })
}

/// The element type of an array's dtype, when it is one ovir holds in the native byte order.
fn element_type_of(py: Python<'_>, a: &Bound<'_, PyUntypedArray>) -> Option<ElementType> {
    let dtype = a.dtype();
    macro_rules! find {
        ($($t:ty => $e:ident),*) => {
            $(if dtype.is_equiv_to(&<$t as NpElement>::get_dtype(py)) {
                return Some(ElementType::$e);
            })*
        };
    }
    find!(
        f32 => F32, f64 => F64, half::f16 => F16, i8 => I8, i16 => I16, i32 => I32,
        i64 => I64, u8 => U8, u16 => U16, u32 => U32, u64 => U64, bool => Boolean
    );
    None
}

/// A C-contiguous numpy array of `value`: an array as it is when it already is one, else
/// numpy.ascontiguousarray (which copies only when it must). A value that is not an array (a
/// list, a scalar) takes `dtype` where one is given, as numpy would otherwise make int64 or
/// float64 of it; an array keeps its own dtype.
fn contiguous<'py>(
    py: Python<'py>,
    value: &Bound<'py, PyAny>,
    dtype: Option<&str>,
) -> PyResult<Bound<'py, PyUntypedArray>> {
    let array = value.cast::<PyUntypedArray>().ok();
    if let Some(a) = array.filter(|a| a.is_c_contiguous()) {
        return Ok(a.clone());
    }
    let dtype = if array.is_some() { None } else { dtype };
    let np = py.import("numpy")?.getattr("ascontiguousarray")?;
    Ok(np.call1((value, dtype))?.cast_into::<PyUntypedArray>()?)
}

/// The tensor of a numpy array (or anything numpy makes an array of), of the array's own
/// element type; a float32 array for a bf16 input is rounded to bf16 (numpy has no bf16).
fn to_tensor(
    py: Python<'_>,
    value: &Bound<'_, PyAny>,
    want: Option<ElementType>,
) -> PyResult<Tensor> {
    let a = contiguous(py, value, want.and_then(numpy_dtype))?;
    if let Some(t) = element_type_of(py, &a) {
        let bytes = array_bytes(&a)?;
        let t: Tensor = match t {
            // Read as bytes: a numpy bool array can hold any byte (a view of uint8), which is
            // not a valid Rust bool; any nonzero byte is true, as numpy reads it.
            ElementType::Boolean => shaped(
                &a,
                copy_out::<u8>(bytes).into_iter().map(|b| b != 0).collect(),
            )?,
            _ => ovir::dispatch!(numeric: t, T => shaped(&a, copy_out::<T>(bytes))?, _ => {
                return Err(PyValueError::new_err("internal: an array's element type"));
            }),
        };
        return Ok(ovir::io::npy::for_input(t, want));
    }
    let dtype = a.dtype();
    // The same types in the other byte order: converted (the only copy numpy makes here).
    if !dtype.getattr("isnative")?.extract::<bool>()? {
        let native = dtype.call_method1("newbyteorder", ("=",))?;
        let swapped = a.call_method1("astype", (native,))?;
        return to_tensor(py, &swapped, want);
    }
    Err(PyTypeError::new_err(format!(
        "arrays of dtype {} have no ovir element type (ovir takes float16/32/64, int8-64, \
         uint8-64 and bool; bf16 inputs take float32)",
        dtype.str()?
    )))
}

/// The tensor of `data` under `a`'s shape.
fn shaped<T: ovir::Element>(a: &Bound<'_, PyUntypedArray>, data: Vec<T>) -> PyResult<Tensor> {
    Ok(ArrayD::from_shape_vec(IxDyn(a.shape()), data)
        .map_err(|e| PyValueError::new_err(format!("array shape: {e}")))?
        .into())
}

/// The elements of an array's bytes in the host's order, copied out byte for byte as `U`s:
/// numpy does not promise alignment. Only for `U` valid for any bits (floats, integers, bytes).
fn copy_out<U: Copy>(bytes: &[u8]) -> Vec<U> {
    let n = bytes.len() / std::mem::size_of::<U>();
    let mut out: Vec<U> = Vec::with_capacity(n);
    // SAFETY: `out` has room for `n` `U`s, which `n * size_of::<U>()` bytes of `bytes` fill,
    // and any bits are a valid `U`.
    unsafe {
        std::ptr::copy_nonoverlapping(
            bytes.as_ptr(),
            out.as_mut_ptr() as *mut u8,
            n * std::mem::size_of::<U>(),
        );
        out.set_len(n);
    }
    out
}

/// The numpy dtype that holds an element type (bf16: float32).
fn numpy_dtype(t: ElementType) -> Option<&'static str> {
    Some(match t {
        ElementType::F16 => "float16",
        ElementType::Bf16 | ElementType::F32 => "float32",
        ElementType::F64 => "float64",
        ElementType::I8 => "int8",
        ElementType::I16 => "int16",
        ElementType::I32 => "int32",
        ElementType::I64 => "int64",
        ElementType::U8 => "uint8",
        ElementType::U16 => "uint16",
        ElementType::U32 => "uint32",
        ElementType::U64 => "uint64",
        ElementType::Boolean => "bool",
        _ => return None,
    })
}

/// A numpy array holding the tensor's buffer (moved, not copied, when the run was its only
/// owner); bf16 as float32, exactly.
fn to_numpy(py: Python<'_>, t: Arc<Tensor>) -> PyResult<Bound<'_, PyAny>> {
    let t = Arc::try_unwrap(t).unwrap_or_else(|t| (*t).clone());
    fn go<T: NpElement>(py: Python<'_>, a: ArrayD<T>) -> PyResult<Bound<'_, PyAny>> {
        Ok(PyArray::from_owned_array(py, a).into_any())
    }
    match t {
        Tensor::F16(a) => go(py, a),
        Tensor::Bf16(a) => go(py, a.mapv(|x| x.to_f32())),
        Tensor::F32(a) => go(py, a),
        Tensor::F64(a) => go(py, a),
        Tensor::I8(a) => go(py, a),
        Tensor::I16(a) => go(py, a),
        Tensor::I32(a) => go(py, a),
        Tensor::I64(a) => go(py, a),
        Tensor::U8(a) => go(py, a),
        Tensor::U16(a) => go(py, a),
        Tensor::U32(a) => go(py, a),
        Tensor::U64(a) => go(py, a),
        Tensor::Bool(a) => go(py, a),
    }
}

/// The named arrays of one side of a comparison.
fn named(py: Python<'_>, side: &Bound<'_, PyList>) -> PyResult<Vec<(String, Tensor)>> {
    side.iter()
        .map(|item| {
            let (name, value): (String, Bound<'_, PyAny>) = item.extract()?;
            let t = to_tensor(py, &value, None)?;
            Ok((name, ovir::io::npy::as_stored(&t)))
        })
        .collect()
}

/// Compares named arrays as `ovir diff` compares files: `a` and `b` are lists of (name,
/// array), matched by name. Returns (same, text report, JSON report).
#[pyfunction]
#[pyo3(signature = (a, b, a_label, b_label, atol = 0.0, rtol = 0.0, ulps = 0, nan_differs = false, show = 5))]
#[allow(clippy::too_many_arguments)]
fn compare(
    py: Python<'_>,
    a: &Bound<'_, PyList>,
    b: &Bound<'_, PyList>,
    a_label: String,
    b_label: String,
    atol: f64,
    rtol: f64,
    ulps: u64,
    nan_differs: bool,
    show: usize,
) -> PyResult<(bool, String, String)> {
    if !(atol >= 0.0 && rtol >= 0.0) {
        return Err(PyValueError::new_err(
            "atol and rtol are numbers of at least 0",
        ));
    }
    let (a, b) = (named(py, a)?, named(py, b)?);
    let tol = Tolerance {
        atol,
        rtol,
        ulps,
        nan_differs,
    };
    let report = py.detach(|| {
        let mut entries = Vec::new();
        for (name, ta) in &a {
            entries.push(match b.iter().find(|(n, _)| n == name) {
                Some((_, tb)) => cmp::compare(name, ta, tb, &tol, show),
                None => Entry::only_in_a(name),
            });
        }
        for (name, _) in b.iter().filter(|(n, _)| !a.iter().any(|(m, _)| m == n)) {
            entries.push(Entry::only_in_b(name));
        }
        Report::new(a_label, b_label, tol, entries)
    });
    let json = serde_json::to_string_pretty(&report)
        .map_err(|e| PyValueError::new_err(format!("report as JSON: {e}")))?;
    Ok((report.same, report.to_string(), json))
}

/// Checks IR files as `ovir check` does. Returns (diagnostics, the text report, whether a
/// file could not be read, the names in `shapes` that no checked model has).
#[pyfunction]
#[pyo3(signature = (paths, shapes = None, weights = None, deny_unknown = false))]
#[allow(clippy::type_complexity)]
fn check(
    py: Python<'_>,
    paths: Vec<PathBuf>,
    shapes: Option<Vec<(String, String)>>,
    weights: Option<Vec<PathBuf>>,
    deny_unknown: bool,
) -> PyResult<(Vec<Diagnostic>, String, bool, Vec<String>)> {
    let shapes = shapes
        .unwrap_or_default()
        .into_iter()
        .map(|(n, s)| {
            PartialShape::parse(&s)
                .map(|s| (n.clone(), s))
                .map_err(|e| PyValueError::new_err(format!("shape of {n:?}: {e}")))
        })
        .collect::<PyResult<Vec<_>>>()?;
    let weights = weights.unwrap_or_default();
    if !weights.is_empty() && weights.len() != paths.len() {
        return Err(PyValueError::new_err(format!(
            "{} weights for {} models: give one per model, in the same order",
            weights.len(),
            paths.len()
        )));
    }
    let names: Vec<String> = shapes.iter().map(|(n, _)| n.clone()).collect();
    let reports = py.detach(|| {
        paths
            .iter()
            .enumerate()
            .map(|(k, p)| {
                let options = CheckOptions {
                    shapes: shapes.clone(),
                    weights: weights.get(k).cloned(),
                    deny_unknown,
                };
                ovir::check_file(p, &options)
            })
            .collect::<Vec<_>>()
    });
    let unmatched = ovir::check::unmatched_shapes(names.iter().map(String::as_str), &reports)
        .into_iter()
        .map(str::to_owned)
        .collect();
    let (errors, warnings) = reports.iter().fold((0, 0), |(e, w), r| {
        (e + r.count(Severity::Error), w + r.count(Severity::Warning))
    });
    let text = check_text(&reports, errors, warnings);
    let diagnostics = reports
        .iter()
        .flat_map(|r| r.diagnostics.iter())
        .map(|d| Diagnostic::new(d.severity, &d.error))
        .collect();
    let unreadable = reports.iter().any(|r| r.unreadable);
    Ok((diagnostics, text, unreadable, unmatched))
}

/// The stable text form of an array, as `ovir run --format text` prints an output.
#[pyfunction]
#[pyo3(signature = (name, array, full = false))]
fn text(py: Python<'_>, name: &str, array: &Bound<'_, PyAny>, full: bool) -> PyResult<String> {
    let t = to_tensor(py, array, None)?;
    Ok(ovir::io::text::render(
        name,
        &t,
        ovir::io::text::TextOptions { full },
    ))
}

/// The file names `ovir run -o` writes outputs of these names to (made safe for a file
/// system, and unique), in order.
#[pyfunction]
fn output_file_names(names: Vec<String>) -> Vec<String> {
    ovir::io::npy::output_file_names(names.iter().map(String::as_str))
}

#[pymodule]
fn _ovir(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("Error", m.py().get_type::<Error>())?;
    m.add_class::<Model>()?;
    m.add_class::<Port>()?;
    m.add_class::<Diagnostic>()?;
    m.add_function(wrap_pyfunction!(check, m)?)?;
    m.add_function(wrap_pyfunction!(compare, m)?)?;
    m.add_function(wrap_pyfunction!(text, m)?)?;
    m.add_function(wrap_pyfunction!(output_file_names, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
