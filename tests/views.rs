//! Reshape, Squeeze, Unsqueeze and Identity are views: execution hands their input's buffer on
//! when nothing else reads it (and shares it when the shape stays), so a chain of them needs no
//! memory beyond its input; an input lent as bytes is read in place. Checked through the
//! memory budget, which would refuse a copy.

use ndarray::{ArrayD, IxDyn};
use ovir::half::f16;
use ovir::{LoadOptions, Model, Tensor, Value};

/// A port of `dims` and precision `ty` (`FP32`, `I64`...).
fn port(id: usize, dims: &[usize], ty: &str) -> String {
    let d: String = dims.iter().map(|d| format!("<dim>{d}</dim>")).collect();
    format!("<port id=\"{id}\" precision=\"{ty}\">{d}</port>")
}

/// The model of `layers` joined by `edges` (from layer, port, to layer, port), with the Consts'
/// i64 values in its weights.
fn net(
    name: &str,
    layers: &[String],
    edges: &[(usize, usize, usize, usize)],
    weights: &[i64],
) -> Model {
    let edges: String = edges
        .iter()
        .map(|(a, b, c, d)| {
            format!("<edge from-layer=\"{a}\" from-port=\"{b}\" to-layer=\"{c}\" to-port=\"{d}\"/>")
        })
        .collect();
    let xml = format!(
        "<?xml version=\"1.0\"?>\n<net name=\"{name}\" version=\"11\"><layers>{}</layers><edges>{edges}</edges></net>\n",
        layers.concat()
    );
    let bin: Vec<u8> = weights.iter().flat_map(|v| v.to_le_bytes()).collect();
    Model::from_bytes(
        format!("{name}.xml"),
        xml.as_bytes(),
        Some(bin),
        &LoadOptions::default(),
    )
    .unwrap_or_else(|e| panic!("{e}"))
}

/// `x` [n] → Relu → Reshape [n/4, 4] → Unsqueeze [0] → Squeeze [0] → Identity → Result; the
/// Reshape target and the axes are Consts in the weights.
fn model(n: usize) -> Model {
    let (q, rows) = ([n], [n / 4, 4]);
    let wide = [1, n / 4, 4];
    let layers = [
        format!(
            "<layer id=\"0\" name=\"x\" type=\"Parameter\" version=\"opset1\"><data shape=\"{n}\" element_type=\"f32\"/><output>{}</output></layer>",
            port(0, &q, "FP32")
        ),
        format!(
            "<layer id=\"1\" name=\"relu\" type=\"ReLU\" version=\"opset1\"><input>{}</input><output>{}</output></layer>",
            port(0, &q, "FP32"),
            port(1, &q, "FP32")
        ),
        format!(
            "<layer id=\"2\" name=\"target\" type=\"Const\" version=\"opset1\"><data element_type=\"i64\" shape=\"2\" offset=\"0\" size=\"16\"/><output>{}</output></layer>",
            port(0, &[2], "I64")
        ),
        format!(
            "<layer id=\"3\" name=\"reshape\" type=\"Reshape\" version=\"opset1\"><data special_zero=\"false\"/><input>{}{}</input><output>{}</output></layer>",
            port(0, &q, "FP32"),
            port(1, &[2], "I64"),
            port(2, &rows, "FP32")
        ),
        format!(
            "<layer id=\"4\" name=\"axis\" type=\"Const\" version=\"opset1\"><data element_type=\"i64\" shape=\"1\" offset=\"16\" size=\"8\"/><output>{}</output></layer>",
            port(0, &[1], "I64")
        ),
        format!(
            "<layer id=\"5\" name=\"unsqueeze\" type=\"Unsqueeze\" version=\"opset1\"><input>{}{}</input><output>{}</output></layer>",
            port(0, &rows, "FP32"),
            port(1, &[1], "I64"),
            port(2, &wide, "FP32")
        ),
        format!(
            "<layer id=\"6\" name=\"squeeze\" type=\"Squeeze\" version=\"opset1\"><input>{}{}</input><output>{}</output></layer>",
            port(0, &wide, "FP32"),
            port(1, &[1], "I64"),
            port(2, &rows, "FP32")
        ),
        format!(
            "<layer id=\"7\" name=\"same\" type=\"Identity\" version=\"opset16\"><input>{}</input><output>{}</output></layer>",
            port(0, &rows, "FP32"),
            port(1, &rows, "FP32")
        ),
        format!(
            "<layer id=\"8\" name=\"out\" type=\"Result\" version=\"opset1\"><input>{}</input></layer>",
            port(0, &rows, "FP32")
        ),
    ];
    let edges = [
        (0, 0, 1, 0),
        (1, 1, 3, 0),
        (2, 0, 3, 1),
        (3, 2, 5, 0),
        (4, 0, 5, 1),
        (5, 2, 6, 0),
        (4, 0, 6, 1),
        (6, 2, 7, 0),
        (7, 1, 8, 0),
    ];
    net("views", &layers, &edges, &[(n / 4) as i64, 4, 0])
}

#[test]
fn reshapes_hand_their_buffer_on() {
    let _serial = serial();
    let n = 1 << 18;
    let mut m = model(n);
    let x: Vec<f32> = (0..n).map(|i| i as f32 - (n / 2) as f32).collect();
    // The caller keeps the input, so Relu writes a tensor of its own, which the views then
    // hand on.
    let input = [(
        "x".to_string(),
        std::sync::Arc::new(Tensor::from(
            ArrayD::from_shape_vec(IxDyn(&[n]), x.clone()).unwrap(),
        )),
    )];
    let want: Vec<f32> = x.iter().map(|&v| v.max(0.0)).collect();
    // Room for the input and Relu's output only (and the small Consts): a copy anywhere in
    // the chain of views would not fit.
    m.set_memory_limit((2 * n * 4 + 4096) as u64);
    let out = m
        .run_shared(input.iter().cloned())
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(out[0].tensor.shape(), [n / 4, 4]);
    let got: Vec<f32> = out[0]
        .tensor
        .view::<f32>()
        .unwrap()
        .iter()
        .copied()
        .collect();
    assert!(got == want);
    // The budget is real: with less room, Relu's output itself is refused.
    m.set_memory_limit((n * 4 + n * 2) as u64);
    let refused = m.run_shared(input.iter().cloned()).unwrap_err();
    assert_eq!(refused.code(), "E604", "{refused}");
}

#[test]
fn a_view_of_a_tensor_still_read_elsewhere_is_a_copy() {
    let _serial = serial();
    // The Relu output is read by the Reshape only, but the caller keeps the input: views of
    // a tensor held elsewhere are copies (the caller's tensor is not changed).
    let n = 64;
    let m = model(n);
    let x: Vec<f32> = (0..n).map(|i| i as f32 - 32.0).collect();
    let shared = std::sync::Arc::new(Tensor::from(
        ArrayD::from_shape_vec(IxDyn(&[n]), x.clone()).unwrap(),
    ));
    let out = m
        .run_shared([("x".to_string(), shared.clone())])
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(shared.shape(), [n]);
    let got: Vec<f32> = out[0]
        .tensor
        .view::<f32>()
        .unwrap()
        .iter()
        .copied()
        .collect();
    assert_eq!(got, x.iter().map(|&v| v.max(0.0)).collect::<Vec<_>>());
}

/// Layers 0–2 of the models of lent inputs: `x` f32 [n] → Reshape [n/4, 4] (layer 2, port 2),
/// the target a Const at offset 0 of the weights.
fn reshaped_input(n: usize) -> String {
    let rows = [n / 4, 4];
    [
        format!(
            "<layer id=\"0\" name=\"x\" type=\"Parameter\" version=\"opset1\"><data shape=\"{n}\" element_type=\"f32\"/><output>{}</output></layer>",
            port(0, &[n], "FP32")
        ),
        format!(
            "<layer id=\"1\" name=\"target\" type=\"Const\" version=\"opset1\"><data element_type=\"i64\" shape=\"2\" offset=\"0\" size=\"16\"/><output>{}</output></layer>",
            port(0, &[2], "I64")
        ),
        format!(
            "<layer id=\"2\" name=\"reshape\" type=\"Reshape\" version=\"opset1\"><data special_zero=\"false\"/><input>{}{}</input><output>{}</output></layer>",
            port(0, &[n], "FP32"),
            port(1, &[2], "I64"),
            port(2, &rows, "FP32")
        ),
    ]
    .concat()
}

/// `x` f32 [n] → Reshape [n/4, 4] → Convert to f16 → Result: the view comes first, on the input
/// itself, and the Convert cannot write over its input (its output is half the size).
fn view_first(n: usize) -> Model {
    let rows = [n / 4, 4];
    let layers = [
        reshaped_input(n),
        format!(
            "<layer id=\"3\" name=\"half\" type=\"Convert\" version=\"opset1\"><data destination_type=\"f16\"/><input>{}</input><output>{}</output></layer>",
            port(0, &rows, "FP32"),
            port(1, &rows, "FP16")
        ),
        format!(
            "<layer id=\"4\" name=\"out\" type=\"Result\" version=\"opset1\"><input>{}</input></layer>",
            port(0, &rows, "FP16")
        ),
    ];
    let edges = [(0, 0, 2, 0), (1, 0, 2, 1), (2, 2, 3, 0), (3, 1, 4, 0)];
    net("view_first", &layers, &edges, &[(n / 4) as i64, 4])
}

/// Counts the bytes the process allocates, for [`lent_inputs_are_read_in_place`] (kernels may
/// allocate on worker threads): the tests of this file take [`SERIAL`] so that none runs while
/// another counts.
struct Counting;

static ALLOCATED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

fn count(bytes: usize) {
    ALLOCATED.fetch_add(bytes, std::sync::atomic::Ordering::Relaxed);
}

// SAFETY: every call is passed on to the system allocator as it came.
unsafe impl std::alloc::GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        count(layout.size());
        unsafe { std::alloc::System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: std::alloc::Layout) {
        unsafe { std::alloc::System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: std::alloc::Layout, size: usize) -> *mut u8 {
        count(size);
        unsafe { std::alloc::System.realloc(ptr, layout, size) }
    }
}

#[global_allocator]
static COUNTING: Counting = Counting;

/// Bytes the process allocates in `f`.
fn allocated<R>(f: impl FnOnce() -> R) -> (R, usize) {
    let before = ALLOCATED.load(std::sync::atomic::Ordering::Relaxed);
    let r = f();
    (
        r,
        ALLOCATED.load(std::sync::atomic::Ordering::Relaxed) - before,
    )
}

/// An input lent as bytes ([`Model::run_values`]) is read in place: a view of it is the same
/// bytes under another shape, and the Convert reads them where they lie, so the run allocates
/// the Convert's output (2 bytes an element) and no copy of the input (4 bytes an element). A
/// shared tensor the caller keeps is copied by the Reshape (the run may not hand its buffer on).
#[test]
fn lent_inputs_are_read_in_place() {
    let _serial = serial();
    let n = 1 << 16;
    let m = view_first(n);
    let x: Vec<f32> = (0..n).map(|i| i as f32 - (n / 2) as f32).collect();
    let want: Vec<f16> = x.iter().map(|&v| f16::from_f32(v)).collect();
    let lent = [("x", Value::from_slice(&[n], &x[..]).unwrap())];
    let (out, bytes) = allocated(|| m.run_values(lent).unwrap_or_else(|e| panic!("{e}")));
    assert!(bytes < n * 2 + n, "{bytes} bytes allocated");
    assert_eq!(out[0].tensor.shape(), [n / 4, 4]);
    let got = out[0].tensor.view::<f16>().unwrap();
    assert!(got.iter().copied().eq(want.iter().copied()));
    let shared = std::sync::Arc::new(Tensor::from(
        ArrayD::from_shape_vec(IxDyn(&[n]), x.clone()).unwrap(),
    ));
    let (out, bytes) = allocated(|| m.run_shared([("x", shared.clone())]).unwrap());
    assert!(bytes >= n * 4 + n * 2, "{bytes} bytes allocated");
    assert_eq!(out[0].tensor.view::<f16>().unwrap(), got);
}

/// A Transpose reads a lent input in place too: `x` [n] → Reshape [n/4, 4] → Transpose [4, n/4]
/// allocates the Transpose's output and no copy of the input.
#[test]
fn transposes_read_lent_inputs_in_place() {
    let _serial = serial();
    let n = 1 << 16;
    let (rows, cols) = ([n / 4, 4], [4, n / 4]);
    let layers = [
        reshaped_input(n),
        format!(
            "<layer id=\"3\" name=\"perm\" type=\"Const\" version=\"opset1\"><data element_type=\"i64\" shape=\"2\" offset=\"16\" size=\"16\"/><output>{}</output></layer>",
            port(0, &[2], "I64")
        ),
        format!(
            "<layer id=\"4\" name=\"t\" type=\"Transpose\" version=\"opset1\"><input>{}{}</input><output>{}</output></layer>",
            port(0, &rows, "FP32"),
            port(1, &[2], "I64"),
            port(2, &cols, "FP32")
        ),
        format!(
            "<layer id=\"5\" name=\"out\" type=\"Result\" version=\"opset1\"><input>{}</input></layer>",
            port(0, &cols, "FP32")
        ),
    ];
    let edges = [
        (0, 0, 2, 0),
        (1, 0, 2, 1),
        (2, 2, 4, 0),
        (3, 0, 4, 1),
        (4, 2, 5, 0),
    ];
    let m = net("transpose", &layers, &edges, &[(n / 4) as i64, 4, 1, 0]);
    let x: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let lent = [("x", Value::from_slice(&[n], &x[..]).unwrap())];
    let (out, bytes) = allocated(|| m.run_values(lent).unwrap_or_else(|e| panic!("{e}")));
    assert!(bytes < n * 4 + n, "{bytes} bytes allocated");
    let got = out[0].tensor.view::<f32>().unwrap();
    assert_eq!(got.shape(), cols);
    // Element [c, r] is x[r * 4 + c].
    assert!((0..4).all(|c| (0..n / 4).all(|r| got[[c, r]] == x[r * 4 + c])));
}

/// Bytes at any address are read right: an input lent from an odd offset (unaligned for f32)
/// gives the bits an aligned one gives, through the view and the Convert reading in place.
#[test]
fn lent_bytes_need_no_alignment() {
    let _serial = serial();
    let n = 64;
    let m = view_first(n);
    let x: Vec<f32> = (0..n).map(|i| (i as f32 - 31.5) * 0.25).collect();
    let mut buf = vec![0u8];
    buf.extend(x.iter().flat_map(|v| v.to_le_bytes()));
    let odd = Value::borrowed(ovir::ElementType::F32, &[n], &buf[1..]).unwrap();
    let got = m.run_values([("x", odd)]).unwrap_or_else(|e| panic!("{e}"));
    let want = m
        .run([(
            "x",
            Tensor::from(ArrayD::from_shape_vec(IxDyn(&[n]), x).unwrap()),
        )])
        .unwrap();
    assert_eq!(got[0].tensor, want[0].tensor);
    // Bytes that do not hold the shape are refused when the value is made, and when it is
    // bound (its fields can be changed since).
    assert!(Value::borrowed(ovir::ElementType::F32, &[n], &buf[..n * 4 - 1]).is_none());
    assert!(Value::borrowed(ovir::ElementType::U4, &[n], &buf[..n / 2]).is_none());
    let Some(Value::Mapped(mut m)) = Value::borrowed(ovir::ElementType::F32, &[n], &buf[1..])
    else {
        panic!("a lent value is Mapped");
    };
    m.bytes = &m.bytes[..n * 4 - 4];
    let short = view_first(n)
        .run_values([("x", Value::Mapped(m))])
        .unwrap_err();
    assert_eq!(short.code(), "E614", "{short}");
    assert!(short.to_string().contains("[64] but 252 bytes"), "{short}");
}
