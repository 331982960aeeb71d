//! Reshape, Squeeze, Unsqueeze and Identity are views: execution hands their input's buffer on
//! when nothing else reads it (and shares it when the shape stays), so a chain of them needs no
//! memory beyond its input. Checked through the memory budget, which would refuse a copy.

use ndarray::{ArrayD, IxDyn};
use ovir::{LoadOptions, Model, Tensor};

/// `x` [n] → Relu → Reshape [n/4, 4] → Unsqueeze [0] → Squeeze [0] → Identity → Result; the
/// Reshape target and the axes are Consts in the weights.
fn model(n: usize) -> Model {
    let port = |id: usize, dims: &[usize], ty: &str| {
        let d: String = dims.iter().map(|d| format!("<dim>{d}</dim>")).collect();
        format!("<port id=\"{id}\" precision=\"{ty}\">{d}</port>")
    };
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
    let edges: String = edges
        .iter()
        .map(|(a, b, c, d)| {
            format!("<edge from-layer=\"{a}\" from-port=\"{b}\" to-layer=\"{c}\" to-port=\"{d}\"/>")
        })
        .collect();
    let xml = format!(
        "<?xml version=\"1.0\"?>\n<net name=\"views\" version=\"11\"><layers>{}</layers><edges>{edges}</edges></net>\n",
        layers.concat()
    );
    let mut bin = Vec::new();
    for v in [(n / 4) as i64, 4, 0] {
        bin.extend_from_slice(&v.to_le_bytes());
    }
    Model::from_bytes(
        "views.xml",
        xml.as_bytes(),
        Some(bin),
        &LoadOptions::default(),
    )
    .unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn reshapes_hand_their_buffer_on() {
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
