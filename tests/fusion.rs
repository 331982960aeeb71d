//! Fused and in-place execution (`Model::run`) against layer-by-layer execution
//! (`Model::run_observed`, which never fuses): random graphs of elementwise layers (the
//! arithmetic family, unary ops) over broadcast shapes and several element types must give
//! bit-identical outputs, and the same error (layer and element) when an integer case fails.

use std::fmt::Write;

use half::f16;
use ndarray::{ArrayD, IxDyn};
use ovir::{Model, Tensor};

/// A small deterministic generator (xorshift64*), so failures reproduce from the case number.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

fn broadcast(a: &[usize], b: &[usize]) -> Vec<usize> {
    let rank = a.len().max(b.len());
    let at = |s: &[usize], k: usize| {
        if k + s.len() < rank {
            1
        } else {
            s[k + s.len() - rank]
        }
    };
    (0..rank).map(|k| at(a, k).max(at(b, k))).collect()
}

fn dims(shape: &[usize]) -> String {
    shape.iter().map(|d| format!("<dim>{d}</dim>")).collect()
}

/// A Parameter layer `p{p}` of `shape` and element type `ty`.
fn parameter(xml: &mut String, p: usize, shape: &[usize], ty: &str) {
    let attr = shape
        .iter()
        .map(|d| d.to_string())
        .collect::<Vec<_>>()
        .join(",");
    let prec = ty.to_uppercase();
    writeln!(
        xml,
        "<layer id=\"{p}\" name=\"p{p}\" type=\"Parameter\" version=\"opset1\"><data shape=\"{attr}\" element_type=\"{ty}\"/><output><port id=\"0\" precision=\"{prec}\" names=\"p{p}\">{}</port></output></layer>",
        dims(shape)
    )
    .unwrap();
}

struct Case {
    xml: String,
    inputs: Vec<(String, Tensor)>,
}

/// A random graph: `params` Parameters of shapes broadcasting to one full shape, then layers
/// each reading two earlier values; the last layer and, sometimes, an intermediate are
/// Results (an intermediate read twice, or read by a Result, cannot be fused away).
fn case(rng: &mut Rng, ty: &str) -> Case {
    let full: Vec<usize> = match rng.below(4) {
        0 => vec![2 + rng.below(5)],
        1 => vec![1 + rng.below(4), 1 + rng.below(7)],
        2 => vec![2, 3, 1 + rng.below(5)],
        // Large enough to run in parallel chunks and over several tiles.
        _ => vec![2, 260, 130],
    };
    let params = 1 + rng.below(3);
    let mut shapes: Vec<Vec<usize>> = Vec::new();
    let mut xml =
        String::from("<?xml version=\"1.0\"?>\n<net name=\"fusion\" version=\"11\">\n<layers>\n");
    let prec = ty.to_uppercase();
    for p in 0..params {
        let mut s = full.clone();
        if p > 0 {
            for d in s.iter_mut() {
                if rng.below(3) == 0 {
                    *d = 1;
                }
            }
            let drop = rng.below(s.len() + 1);
            s.drain(..drop);
        }
        parameter(&mut xml, p, &s, ty);
        shapes.push(s);
    }
    // Sometimes a long chain, longer than one fused group holds (`MAX_GROUP`).
    let long = rng.below(8) == 0;
    let layers = if long {
        20 + rng.below(30)
    } else {
        1 + rng.below(8)
    };
    // (from layer, its output port, to layer, input port); a layer's output port id follows its
    // inputs' (Parameters: 0, unary layers: 1, binary layers: 2).
    let mut edges = Vec::new();
    let mut out_port = vec![0; params];
    let mut results = Vec::new();
    for l in 0..layers {
        let id = params + l;
        let x = if long && l > 0 { id - 1 } else { rng.below(id) };
        let float = ty.starts_with('f');
        // A unary layer: one input, read again later by other layers now and then.
        if rng.below(4) == 0 {
            let kinds: &[&str] = if float {
                &[
                    "Exp", "Sigmoid", "Tanh", "Relu", "Abs", "Floor", "Gelu", "Mish", "Sqrt",
                    "HSwish", "HSigmoid",
                ]
            } else if ty.starts_with('u') {
                &["Abs", "Relu", "Sqrt", "Floor", "Sign"]
            } else {
                &["Abs", "Relu", "Negative", "Sqrt", "Sign"]
            };
            let kind = kinds[rng.below(kinds.len())];
            let version = opset(kind);
            writeln!(
                xml,
                "<layer id=\"{id}\" name=\"l{l}\" type=\"{kind}\" version=\"{version}\"><input><port id=\"0\" precision=\"{prec}\">{}</port></input><output><port id=\"1\" precision=\"{prec}\" names=\"l{l}\">{}</port></output></layer>",
                dims(&shapes[x]),
                dims(&shapes[x])
            )
            .unwrap();
            edges.push((x, out_port[x], id, 0));
            out_port.push(1);
            shapes.push(shapes[x].clone());
            if l + 1 == layers || rng.below(6) == 0 {
                results.push(id);
            }
            continue;
        }
        let y = rng.below(id);
        let out = broadcast(&shapes[x], &shapes[y]);
        let (kind, data) = match rng.below(9) {
            6 => ("Maximum", String::from("auto_broadcast=\"numpy\"")),
            7 => ("FloorMod", String::from("auto_broadcast=\"numpy\"")),
            8 => (
                "SquaredDifference",
                String::from("auto_broadcast=\"numpy\""),
            ),
            0 | 1 => ("Subtract", String::from("auto_broadcast=\"numpy\"")),
            2 => ("Add", String::from("auto_broadcast=\"numpy\"")),
            3 => ("Multiply", String::from("auto_broadcast=\"numpy\"")),
            _ => {
                let py = if rng.below(2) == 0 { "true" } else { "false" };
                (
                    "Divide",
                    format!("auto_broadcast=\"numpy\" m_pythondiv=\"{py}\""),
                )
            }
        };
        writeln!(
            xml,
            "<layer id=\"{id}\" name=\"l{l}\" type=\"{kind}\" version=\"opset1\"><data {data}/><input><port id=\"0\" precision=\"{prec}\">{}</port><port id=\"1\" precision=\"{prec}\">{}</port></input><output><port id=\"2\" precision=\"{prec}\" names=\"l{l}\">{}</port></output></layer>",
            dims(&shapes[x]),
            dims(&shapes[y]),
            dims(&out)
        )
        .unwrap();
        edges.push((x, out_port[x], id, 0));
        edges.push((y, out_port[y], id, 1));
        out_port.push(2);
        shapes.push(out);
        if l + 1 == layers || rng.below(6) == 0 {
            results.push(id);
        }
    }
    let outputs: Vec<_> = results.iter().map(|&r| (r, &shapes[r][..], ty)).collect();
    close(&mut xml, params + layers, &outputs, &out_port, edges);
    let inputs = (0..params)
        .map(|p| (format!("p{p}"), tensor(rng, ty, &shapes[p])))
        .collect();
    Case { xml, inputs }
}

/// Ends a random graph: a Result for each of `outputs` (layer, shape, element type), with ids
/// from `next`, then the edges (from layer, its port, to layer, input port).
fn close(
    xml: &mut String,
    next: usize,
    outputs: &[(usize, &[usize], &str)],
    out_port: &[usize],
    mut edges: Vec<(usize, usize, usize, usize)>,
) {
    for (id, &(r, shape, ty)) in (next..).zip(outputs) {
        writeln!(
            xml,
            "<layer id=\"{id}\" name=\"r{r}\" type=\"Result\" version=\"opset1\"><input><port id=\"0\" precision=\"{}\">{}</port></input></layer>",
            ty.to_uppercase(),
            dims(shape)
        )
        .unwrap();
        edges.push((r, out_port[r], id, 0));
    }
    xml.push_str("</layers>\n<edges>\n");
    for (from, from_port, to, port) in edges {
        writeln!(
            xml,
            "<edge from-layer=\"{from}\" from-port=\"{from_port}\" to-layer=\"{to}\" to-port=\"{port}\"/>"
        )
        .unwrap();
    }
    xml.push_str("</edges>\n</net>\n");
}

fn tensor(rng: &mut Rng, ty: &str, shape: &[usize]) -> Tensor {
    let n: usize = shape.iter().product();
    // Integers are mostly non-zero, so that divisions fail only now and then, and at varying
    // places.
    let zero_every = 1 + rng.below(200_000);
    let int = |rng: &mut Rng, lo: i64, hi: i64| -> Vec<i64> {
        (0..n)
            .map(|_| {
                if rng.below(zero_every) == 0 {
                    0
                } else {
                    let v = lo + (rng.next() % (hi - lo + 1) as u64) as i64;
                    if v == 0 { 1 } else { v }
                }
            })
            .collect()
    };
    fn arr<T: ovir::Element>(shape: &[usize], v: Vec<T>) -> Tensor {
        ArrayD::from_shape_vec(IxDyn(shape), v).unwrap().into()
    }
    fn ints<T: ovir::Element + TryFrom<i64>>(shape: &[usize], v: Vec<i64>) -> Tensor {
        let v = v
            .into_iter()
            .map(|x| T::try_from(x).ok().unwrap())
            .collect();
        arr(shape, v)
    }
    // Values on a grid: `steps` of them from `-offset`, `1 / div` apart.
    let mut grid = |steps: u64, div: f64, offset: f64| -> Vec<f64> {
        (0..n)
            .map(|_| (rng.next() % steps) as f64 / div - offset)
            .collect()
    };
    match ty {
        "f32" => arr(
            shape,
            grid(2001, 100.0, 10.0).iter().map(|&x| x as f32).collect(),
        ),
        "f16" => arr(
            shape,
            grid(2001, 100.0, 10.0)
                .iter()
                .map(|&x| f16::from_f64(x))
                .collect(),
        ),
        "f64" => arr(shape, grid(200_001, 1000.0, 100.0)),
        "bf16" => arr(
            shape,
            grid(2001, 10.0, 100.0)
                .iter()
                .map(|&x| half::bf16::from_f64(x))
                .collect(),
        ),
        "i32" => ints::<i32>(shape, int(rng, -1000, 1000)),
        "i8" => ints::<i8>(shape, int(rng, -128, 127)),
        "u8" => ints::<u8>(shape, int(rng, 1, 255)),
        "i64" => ints::<i64>(shape, int(rng, -5000, 5000)),
        "boolean" => arr(
            shape,
            (0..n).map(|_| rng.below(2) == 0).collect::<Vec<bool>>(),
        ),
        other => panic!("no generator for {other}"),
    }
}

#[test]
fn fused_runs_match_layer_by_layer() {
    let types = ["f32", "f16", "i32", "i8", "u8", "i64"];
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let (ok, failed) = run_cases("fusion", 240, |n| case(&mut rng, types[n % types.len()]));
    // The generator must exercise both outcomes.
    assert!(ok > 100 && failed > 5, "{ok} ran, {failed} failed");
}

/// Runs `count` random cases made by `make` fused (inputs owned, which may be computed over in
/// place, and shared, which never are) and layer by layer: the outcomes must be the same.
/// How many ran and how many failed.
fn run_cases(name: &str, count: usize, mut make: impl FnMut(usize) -> Case) -> (usize, usize) {
    let dir = std::env::temp_dir().join(format!("ovir-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (mut ok, mut failed) = (0, 0);
    for n in 0..count {
        let c = make(n);
        let xml = dir.join(format!("case{n}.xml"));
        std::fs::write(&xml, &c.xml).unwrap();
        let model = Model::load(&xml).unwrap_or_else(|e| panic!("case {n}: {e}\n{}", c.xml));
        let shared: Vec<(String, std::sync::Arc<Tensor>)> = c
            .inputs
            .iter()
            .map(|(k, t)| (k.clone(), std::sync::Arc::new(t.clone())))
            .collect();
        let fused = model.run(c.inputs.clone());
        let over_shared = model.run_shared(shared.iter().cloned());
        let plain = model.run_observed(c.inputs, |_| Ok(()));
        match (&fused, &over_shared) {
            (Ok(f), Ok(s)) => {
                for (x, y) in f.iter().zip(s) {
                    assert_eq!(x.tensor.to_le_bytes(), y.tensor.to_le_bytes(), "case {n}");
                }
            }
            (Err(f), Err(s)) => assert_eq!(f.to_string(), s.to_string(), "case {n}"),
            (f, s) => panic!("case {n}: owned {f:?}, shared {s:?}\n{}", c.xml),
        }
        if same_outcome(n, &c.xml, fused, plain) {
            ok += 1;
        } else {
            failed += 1;
        }
    }
    std::fs::remove_dir_all(&dir).ok();
    (ok, failed)
}

/// Checks that a fused run and a layer-by-layer run of case `n` had the same outcome: the same
/// outputs (names, element types, shapes, bits: NaNs compare by their bits) or the same error.
/// Whether they ran.
fn same_outcome(
    n: usize,
    xml: &str,
    fused: Result<Vec<ovir::Output>, ovir::Error>,
    plain: Result<Vec<ovir::Output>, ovir::Error>,
) -> bool {
    match (fused, plain) {
        (Ok(f), Ok(p)) => {
            assert_eq!(f.len(), p.len(), "case {n}");
            for (x, y) in f.iter().zip(&p) {
                assert_eq!(x.name, y.name, "case {n}");
                assert_eq!(x.tensor.element_type(), y.tensor.element_type(), "case {n}");
                assert_eq!(x.tensor.shape(), y.tensor.shape(), "case {n}");
                assert_eq!(
                    x.tensor.to_le_bytes(),
                    y.tensor.to_le_bytes(),
                    "case {n}: {}\n{xml}",
                    x.name
                );
            }
            true
        }
        (Err(f), Err(p)) => {
            assert_eq!(f.to_string(), p.to_string(), "case {n}\n{xml}");
            false
        }
        (f, p) => panic!("case {n}: fused {f:?}, layer by layer {p:?}\n{xml}"),
    }
}

/// Outputs above `ovir::ops::kernel::STREAM_MIN` bytes that do not reuse an input's buffer are
/// written with non-temporal stores: checked against plain loops.
#[test]
fn large_streamed_outputs_are_exact() {
    // 8.3 MiB of f32; the output ends 51 elements into a block of 64 (written plainly).
    let (rows, cols) = (2101usize, 1031usize);
    let xml = format!(
        r#"<?xml version="1.0"?>
<net name="large" version="11"><layers>
<layer id="0" name="a" type="Parameter" version="opset1"><data shape="{rows},{cols}" element_type="f32"/><output><port id="0" precision="FP32" names="a"><dim>{rows}</dim><dim>{cols}</dim></port></output></layer>
<layer id="1" name="b" type="Parameter" version="opset1"><data shape="{cols}" element_type="f32"/><output><port id="0" precision="FP32" names="b"><dim>{cols}</dim></port></output></layer>
<layer id="2" name="d" type="Subtract" version="opset1"><data auto_broadcast="numpy"/><input><port id="0"><dim>{rows}</dim><dim>{cols}</dim></port><port id="1"><dim>{cols}</dim></port></input><output><port id="2" precision="FP32" names="d"><dim>{rows}</dim><dim>{cols}</dim></port></output></layer>
<layer id="3" name="q" type="Divide" version="opset1"><data auto_broadcast="numpy"/><input><port id="0"><dim>{rows}</dim><dim>{cols}</dim></port><port id="1"><dim>{cols}</dim></port></input><output><port id="2" precision="FP32" names="q"><dim>{rows}</dim><dim>{cols}</dim></port></output></layer>
<layer id="4" name="r" type="Result" version="opset1"><input><port id="0"><dim>{rows}</dim><dim>{cols}</dim></port></input></layer>
</layers><edges>
<edge from-layer="0" from-port="0" to-layer="2" to-port="0"/><edge from-layer="1" from-port="0" to-layer="2" to-port="1"/>
<edge from-layer="2" from-port="2" to-layer="3" to-port="0"/><edge from-layer="1" from-port="0" to-layer="3" to-port="1"/>
<edge from-layer="3" from-port="2" to-layer="4" to-port="0"/>
</edges></net>"#
    );
    let (dir, model) = load("large", &xml);
    let mut rng = Rng(7);
    let a: Vec<f32> = (0..rows * cols)
        .map(|_| (rng.next() % 20001) as f32 / 100.0 - 100.0)
        .collect();
    let b: Vec<f32> = (0..cols)
        .map(|_| (rng.next() % 999) as f32 / 10.0 + 0.5)
        .collect();
    let want: Vec<u32> = (0..rows * cols)
        .map(|i| ((a[i] - b[i % cols]) / b[i % cols]).to_bits())
        .collect();
    let inputs = || {
        vec![
            (
                "a",
                Tensor::from(ArrayD::from_shape_vec(IxDyn(&[rows, cols]), a.clone()).unwrap()),
            ),
            (
                "b",
                Tensor::from(ArrayD::from_shape_vec(IxDyn(&[cols]), b.clone()).unwrap()),
            ),
        ]
    };
    let shared = three_ways(&model, &inputs, &want);
    // A lone layer over the same arrays writes its output with non-temporal stores (a
    // chain, computed in registers, writes its own directly).
    let (ta, tb) = (&inputs()[0].1, &inputs()[1].1);
    let diff = ovir::ops::binary::Binary::new(
        ovir::broadcast::AutoBroadcast::Numpy,
        ovir::ops::binary::arith::Subtract,
    )
    .eval_tensors(ta, tb)
    .unwrap();
    let got: Vec<u32> = diff
        .view::<f32>()
        .unwrap()
        .iter()
        .map(|x| x.to_bits())
        .collect();
    let want: Vec<u32> = (0..rows * cols)
        .map(|i| (a[i] - b[i % cols]).to_bits())
        .collect();
    assert!(got == want, "streamed output differs from the plain loop");
    // The budget: in place, the fused run needs nothing beyond its inputs; with shared
    // inputs the output needs its own 8.7 MB and is refused before it is allocated.
    let mut model = model;
    let inputs_bytes = ((rows * cols + cols) * 4) as u64;
    model.set_memory_limit(inputs_bytes + 4096);
    assert!(model.run(inputs()).is_ok());
    let refused = model.run_shared(shared.iter().cloned()).unwrap_err();
    assert_eq!(refused.code(), "E604", "{refused}");
    // Inputs and output fit exactly: each is counted once.
    model.set_memory_limit(inputs_bytes + (rows * cols * 4) as u64);
    assert!(model.run_shared(shared.iter().cloned()).is_ok());
    std::fs::remove_dir_all(&dir).ok();
}

/// `t` (f32) with now and then a NaN (quiet with a payload, signalling, negative), an
/// infinity, a zero of either sign or a subnormal in place of an element.
fn with_specials(t: Tensor, rng: &mut Rng) -> Tensor {
    let specials = [
        f32::NAN,
        f32::from_bits(0x7fc0_1234),
        f32::from_bits(0x7f80_0001),
        f32::from_bits(0xff80_0042),
        f32::INFINITY,
        f32::NEG_INFINITY,
        0.0,
        -0.0,
        1e-40,
        -1e-40,
    ];
    let Tensor::F32(a) = t else {
        panic!("f32 only")
    };
    let shape = a.shape().to_vec();
    let v: Vec<f32> = a
        .iter()
        .map(|&x| {
            if rng.below(50) == 0 {
                specials[rng.below(specials.len())]
            } else {
                x
            }
        })
        .collect();
    ArrayD::from_shape_vec(IxDyn(&shape), v).unwrap().into()
}

/// The first id of the unary layers [`chains_over_long_broadcast_runs_match_layer_by_layer`]
/// inserts, and the output port of a layer there by its id.
const RELU_IDS: usize = 1000;

fn port(v: usize, params: usize) -> usize {
    if v < params {
        0
    } else if v >= RELU_IDS {
        1
    } else {
        2
    }
}

/// Linear f32 chains whose broadcast operands change only every 64 or more elements (rows,
/// columns, planes of the output) read those operands run by run instead of gathering them:
/// checked against layer-by-layer execution, with the running value on either side, for
/// shared (a new, streamed or not, output) and owned inputs. Some have unary layers between
/// the steps or before the first: exact ones (Relu, Abs, Clamp…) and HSwish and HSigmoid are
/// links of the chain in registers; Exp makes the group go tile by tile. The full-size input
/// holds NaNs (signalling too), infinities, ±0 and subnormals now and then.
#[test]
fn chains_over_long_broadcast_runs_match_layer_by_layer() {
    let full = [3usize, 70, 130];
    let shapes: [&[usize]; 7] = [
        &[3, 1, 130],
        &[3, 70, 1],
        &[1, 70, 130],
        &[130],
        &[1],
        &[3, 70, 130],
        &[70, 1],
    ];
    let dir = std::env::temp_dir().join(format!("ovir-segments-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut rng = Rng(0x5EED);
    for n in 0..24 {
        let layers = 1 + n % 9;
        let mut xml = String::from(
            "<?xml version=\"1.0\"?>\n<net name=\"segments\" version=\"11\">\n<layers>\n",
        );
        let mut params: Vec<Vec<usize>> = vec![full.to_vec()];
        for _ in 0..layers {
            params.push(shapes[rng.below(shapes.len())].to_vec());
        }
        for (p, s) in params.iter().enumerate() {
            parameter(&mut xml, p, s, "f32");
        }
        let mut edges = Vec::new();
        let mut prev = 0;
        let unary = |xml: &mut String,
                     edges: &mut Vec<_>,
                     rng: &mut Rng,
                     id: usize,
                     prev: usize| {
            let (kind, data) = [
                ("Relu", ""),
                ("Abs", ""),
                ("Clamp", "<data min=\"-1.5\" max=\"2\"/>"),
                ("Floor", ""),
                ("Ceiling", ""),
                ("Negative", ""),
                ("Sign", ""),
                ("Sqrt", ""),
                ("Exp", ""),
                ("HSwish", ""),
                ("HSigmoid", ""),
            ][rng.below(11)];
            let version = opset(kind);
            writeln!(
                xml,
                "<layer id=\"{id}\" name=\"u{id}\" type=\"{kind}\" version=\"{version}\">{data}<input><port id=\"0\" precision=\"FP32\">{}</port></input><output><port id=\"1\" precision=\"FP32\">{}</port></output></layer>",
                dims(&full),
                dims(&full)
            )
            .unwrap();
            edges.push((prev, port(prev, params.len()), id, 0));
        };
        if rng.below(4) == 0 {
            // A unary step first, on the full-size input.
            unary(&mut xml, &mut edges, &mut rng, RELU_IDS + 100, 0);
            prev = RELU_IDS + 100;
        }
        for l in 0..layers {
            let id = params.len() + l;
            let other = 1 + l;
            // The running value on either side.
            let (x, y) = if rng.below(3) == 0 {
                (other, prev)
            } else {
                (prev, other)
            };
            let kind = ["Subtract", "Divide", "Add", "Multiply"][rng.below(4)];
            let shape_of = |v: usize| {
                if v < params.len() {
                    params[v].clone()
                } else {
                    full.to_vec()
                }
            };
            writeln!(
                xml,
                "<layer id=\"{id}\" name=\"l{l}\" type=\"{kind}\" version=\"opset1\"><data auto_broadcast=\"numpy\"/><input><port id=\"0\" precision=\"FP32\">{}</port><port id=\"1\" precision=\"FP32\">{}</port></input><output><port id=\"2\" precision=\"FP32\" names=\"l{l}\">{}</port></output></layer>",
                dims(&shape_of(x)),
                dims(&shape_of(y)),
                dims(&full)
            )
            .unwrap();
            edges.push((x, port(x, params.len()), id, 0));
            edges.push((y, port(y, params.len()), id, 1));
            prev = id;
            // Now and then a unary layer after the step.
            if rng.below(3) == 0 {
                unary(&mut xml, &mut edges, &mut rng, RELU_IDS + l, id);
                prev = RELU_IDS + l;
            }
        }
        let last = params.len() + layers;
        writeln!(
            xml,
            "<layer id=\"{last}\" name=\"r\" type=\"Result\" version=\"opset1\"><input><port id=\"0\" precision=\"FP32\">{}</port></input></layer>",
            dims(&full)
        )
        .unwrap();
        edges.push((prev, port(prev, params.len()), last, 0));
        xml.push_str("</layers>\n<edges>\n");
        for (from, fp, to, tp) in edges {
            writeln!(
                xml,
                "<edge from-layer=\"{from}\" from-port=\"{fp}\" to-layer=\"{to}\" to-port=\"{tp}\"/>"
            )
            .unwrap();
        }
        xml.push_str("</edges>\n</net>\n");
        let path = dir.join(format!("chain{n}.xml"));
        std::fs::write(&path, &xml).unwrap();
        let model = Model::load(&path).unwrap_or_else(|e| panic!("case {n}: {e}\n{xml}"));
        let inputs: Vec<(String, Tensor)> = params
            .iter()
            .enumerate()
            .map(|(p, s)| {
                let t = tensor(&mut rng, "f32", s);
                (
                    format!("p{p}"),
                    if p == 0 {
                        with_specials(t, &mut rng)
                    } else {
                        t
                    },
                )
            })
            .collect();
        let shared: Vec<(String, std::sync::Arc<Tensor>)> = inputs
            .iter()
            .map(|(k, t)| (k.clone(), std::sync::Arc::new(t.clone())))
            .collect();
        let want = model.run_observed(inputs.clone(), |_| Ok(())).unwrap();
        for got in [
            model.run_shared(shared.iter().cloned()).unwrap(),
            model.run(inputs).unwrap(),
        ] {
            assert_eq!(
                got[0].tensor.to_le_bytes(),
                want[0].tensor.to_le_bytes(),
                "case {n}\n{xml}"
            );
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// The opset of the layer types the random graphs use.
fn opset(kind: &str) -> &'static str {
    match kind {
        "Convert" | "Subtract" | "Add" | "Multiply" | "Maximum" | "Divide" | "Exp" | "Relu"
        | "Abs" | "Floor" | "Ceiling" | "Sqrt" | "Sign" | "Clamp" | "Tanh" | "Sigmoid"
        | "Negative" | "SquaredDifference" | "Less" | "Greater" | "Equal" | "NotEqual"
        | "LessEqual" | "GreaterEqual" | "Select" | "Convolution" | "GroupConvolution" => "opset1",
        "Mish" | "HSwish" => "opset4",
        "HSigmoid" => "opset5",
        "Gelu" => "opset7",
        other => panic!("no version for {other}"),
    }
}

/// One layer of [`mixed_case`]: `kind` with `data`, reading `inputs`, its output of `shape`
/// and element type `ty`.
fn layer(
    xml: &mut String,
    id: usize,
    kind: &str,
    data: &str,
    inputs: &[(&[usize], &str)],
    out: (&[usize], &str),
) {
    let ports: String = inputs
        .iter()
        .enumerate()
        .map(|(i, (s, t))| {
            format!(
                "<port id=\"{i}\" precision=\"{}\">{}</port>",
                t.to_uppercase(),
                dims(s)
            )
        })
        .collect();
    let version = opset(kind);
    writeln!(
        xml,
        "<layer id=\"{id}\" name=\"l{id}\" type=\"{kind}\" version=\"{version}\">{data}<input>{ports}</input><output><port id=\"{}\" precision=\"{}\" names=\"l{id}\">{}</port></output></layer>",
        inputs.len(),
        out.1.to_uppercase(),
        dims(out.0)
    )
    .unwrap();
}

/// The comparison layers the random graphs draw from.
const COMPARISONS: [&str; 6] = [
    "Less",
    "Greater",
    "Equal",
    "NotEqual",
    "LessEqual",
    "GreaterEqual",
];

/// A random graph whose values change element type through Convert layers: Parameters of
/// several types (`boolean` too, read only through a Convert), Converts to any numeric type,
/// unary and binary layers on values of one type (a Convert is inserted where the operands'
/// types differ), comparisons (→ `boolean`) and Selects among them and, in half the graphs,
/// last.
fn mixed_case(rng: &mut Rng) -> Case {
    const TYPES: [&str; 7] = ["f32", "f16", "bf16", "f64", "i32", "u8", "i64"];
    let full: Vec<usize> = match rng.below(3) {
        0 => vec![2 + rng.below(5)],
        1 => vec![2, 3, 1 + rng.below(5)],
        // Several tiles and parallel chunks.
        _ => vec![2, 260, 130],
    };
    let mut xml =
        String::from("<?xml version=\"1.0\"?>\n<net name=\"mixed\" version=\"11\">\n<layers>\n");
    let params = 1 + rng.below(3);
    // (shape, element type) of each value, by layer id; each value's output port.
    let mut values: Vec<(Vec<usize>, &str)> = Vec::new();
    let mut out_port: Vec<usize> = Vec::new();
    let mut inputs = Vec::new();
    for p in 0..params {
        let mut s = full.clone();
        if p > 0 {
            for d in s.iter_mut() {
                if rng.below(3) == 0 {
                    *d = 1;
                }
            }
        }
        let ty = if rng.below(6) == 0 {
            "boolean"
        } else {
            TYPES[rng.below(TYPES.len())]
        };
        parameter(&mut xml, p, &s, ty);
        let t = tensor(rng, ty, &s);
        let t = if ty == "f32" && rng.below(2) == 0 {
            with_specials(t, rng)
        } else {
            t
        };
        inputs.push((format!("p{p}"), t));
        values.push((s, ty));
        out_port.push(0);
    }
    let mut edges = Vec::new();
    let mut results = Vec::new();
    let layers = 2 + rng.below(10);
    // The last layer: a comparison (10), a Select (11) or any (12).
    let last = 10 + rng.below(4).min(2);
    let convert = |xml: &mut String,
                   edges: &mut Vec<(usize, usize, usize, usize)>,
                   values: &mut Vec<(Vec<usize>, &'static str)>,
                   out_port: &mut Vec<usize>,
                   x: usize,
                   to: &'static str| {
        let id = values.len();
        let (s, t) = values[x].clone();
        layer(
            xml,
            id,
            "Convert",
            &format!("<data destination_type=\"{to}\"/>"),
            &[(&s, t)],
            (&s, to),
        );
        edges.push((x, out_port[x], id, 0));
        values.push((s, to));
        out_port.push(1);
        id
    };
    for l in 0..layers {
        let x = rng.below(values.len());
        let r = match last {
            10 | 11 if l + 1 == layers => last,
            _ => rng.below(12),
        };
        let id = if r == 11 && values[x].1 != "boolean" {
            // Select(cond, x, y): cond a boolean value (or a Convert to one), y of x's type.
            let t = values[x].1;
            let bools: Vec<usize> = (0..values.len())
                .filter(|&v| values[v].1 == "boolean")
                .collect();
            let c = if bools.is_empty() || rng.below(4) == 0 {
                let z = rng.below(values.len());
                convert(
                    &mut xml,
                    &mut edges,
                    &mut values,
                    &mut out_port,
                    z,
                    "boolean",
                )
            } else {
                bools[rng.below(bools.len())]
            };
            let same: Vec<usize> = (0..values.len()).filter(|&v| values[v].1 == t).collect();
            let y = same[rng.below(same.len())];
            let out = broadcast(&broadcast(&values[c].0, &values[x].0), &values[y].0);
            let id = values.len();
            let (sc, sx, sy) = (
                values[c].0.clone(),
                values[x].0.clone(),
                values[y].0.clone(),
            );
            layer(
                &mut xml,
                id,
                "Select",
                "<data auto_broadcast=\"numpy\"/>",
                &[(&sc, "boolean"), (&sx, t), (&sy, t)],
                (&out, t),
            );
            edges.push((c, out_port[c], id, 0));
            edges.push((x, out_port[x], id, 1));
            edges.push((y, out_port[y], id, 2));
            values.push((out, t));
            out_port.push(3);
            id
        } else if r < 3 || values[x].1 == "boolean" {
            let to = TYPES[rng.below(TYPES.len())];
            convert(&mut xml, &mut edges, &mut values, &mut out_port, x, to)
        } else if r < 5 {
            let (s, t) = values[x].clone();
            let kinds: &[&str] = if t.starts_with('f') || t == "bf16" {
                &[
                    "Exp", "Relu", "Abs", "Floor", "Tanh", "Sigmoid", "HSwish", "HSigmoid",
                ]
            } else if t.starts_with('u') {
                &["Abs", "Relu"]
            } else {
                &["Abs", "Relu", "Negative"]
            };
            let id = values.len();
            layer(
                &mut xml,
                id,
                kinds[rng.below(kinds.len())],
                "",
                &[(&s, t)],
                (&s, t),
            );
            edges.push((x, out_port[x], id, 0));
            values.push((s, t));
            out_port.push(1);
            id
        } else {
            let t = values[x].1;
            let same: Vec<usize> = (0..values.len()).filter(|&v| values[v].1 == t).collect();
            let y = if rng.below(3) == 0 {
                let z = rng.below(values.len());
                convert(&mut xml, &mut edges, &mut values, &mut out_port, z, t)
            } else {
                same[rng.below(same.len())]
            };
            let out = broadcast(&values[x].0, &values[y].0);
            let kind = if r >= 10 {
                COMPARISONS[rng.below(COMPARISONS.len())]
            } else {
                [
                    "Subtract",
                    "Add",
                    "Multiply",
                    "Maximum",
                    "Divide",
                    "SquaredDifference",
                ][rng.below(6)]
            };
            let out_ty = if r >= 10 { "boolean" } else { t };
            let id = values.len();
            let (sx, sy) = (values[x].0.clone(), values[y].0.clone());
            layer(
                &mut xml,
                id,
                kind,
                "<data auto_broadcast=\"numpy\"/>",
                &[(&sx, t), (&sy, t)],
                (&out, out_ty),
            );
            edges.push((x, out_port[x], id, 0));
            edges.push((y, out_port[y], id, 1));
            values.push((out, out_ty));
            out_port.push(2);
            id
        };
        if rng.below(6) == 0 {
            results.push(id);
        }
    }
    results.push(values.len() - 1);
    results.dedup();
    let outputs: Vec<_> = results
        .iter()
        .map(|&r| (r, &values[r].0[..], values[r].1))
        .collect();
    close(&mut xml, values.len(), &outputs, &out_port, edges);
    Case { xml, inputs }
}

/// Groups with Converts in them (parts of several element types computed in one pass, a
/// Convert's tiles converted between them) give the bits and errors of layer-by-layer
/// execution.
#[test]
fn groups_across_converts_match_layer_by_layer() {
    let mut rng = Rng(0xC0_4E57);
    let (ok, failed) = run_cases("mixed", 300, |_| mixed_case(&mut rng));
    assert!(ok > 200 && failed > 0, "{ok} ran, {failed} failed");
}

/// A group across a Convert is one pass: its intermediates (of either type) take no memory.
/// Under a budget of the inputs and the output alone, the fused runs succeed, where layer by
/// layer the first intermediate would not fit (E604).
#[test]
fn groups_across_converts_need_no_intermediates() {
    let n = 1usize << 20;
    let dir = std::env::temp_dir().join(format!("ovir-mixed-budget-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // u8 → f32, times b, plus b; and f32 times b, to f16.
    let cases: [(&str, &str, &str, usize, usize); 2] =
        [("u8", "f32", "start", 1, 4), ("f32", "f16", "end", 4, 2)];
    for (from, to, place, in_size, out_size) in cases {
        let mut xml = String::from(
            "<?xml version=\"1.0\"?>\n<net name=\"budget\" version=\"11\">\n<layers>\n",
        );
        parameter(&mut xml, 0, &[n], from);
        let compute = if place == "start" { to } else { from };
        parameter(&mut xml, 1, &[1], compute);
        let big: &[usize] = &[n];
        let one: &[usize] = &[1];
        let kinds = if place == "start" {
            ["Convert", "Multiply", "Add"]
        } else {
            ["Multiply", "Add", "Convert"]
        };
        // Each layer reads the one before it (and p1); its output port by id.
        let (mut ty, mut out_port, mut edges) = (from, vec![0, 0], Vec::new());
        for (id, kind) in (2..).zip(kinds) {
            edges.push((id - 1, out_port[id - 1], id, 0));
            if kind == "Convert" {
                let data = format!("<data destination_type=\"{to}\"/>");
                layer(&mut xml, id, kind, &data, &[(big, ty)], (big, to));
                ty = to;
                out_port.push(1);
            } else {
                let data = "<data auto_broadcast=\"numpy\"/>";
                layer(&mut xml, id, kind, data, &[(big, ty), (one, ty)], (big, ty));
                edges.push((1, 0, id, 1));
                out_port.push(2);
            }
        }
        // Layer 1 is p1: the first layer reads p0.
        edges[0].0 = 0;
        close(&mut xml, 5, &[(4, big, to)], &out_port, edges);
        let path = dir.join(format!("{place}.xml"));
        std::fs::write(&path, &xml).unwrap();
        let mut model = Model::load(&path).unwrap_or_else(|e| panic!("{e}\n{xml}"));
        let mut rng = Rng(3);
        let inputs = vec![
            ("p0".to_string(), tensor(&mut rng, from, &[n])),
            ("p1".to_string(), tensor(&mut rng, compute, &[1])),
        ];
        let want = model.run_observed(inputs.clone(), |_| Ok(())).unwrap();
        let scalar = if compute == "f32" { 4 } else { 2 };
        let (inputs_bytes, out_bytes) = ((n * in_size + scalar) as u64, (n * out_size) as u64);
        model.set_memory_limit(inputs_bytes + out_bytes + 4096);
        let got = model
            .run(inputs.clone())
            .unwrap_or_else(|e| panic!("{place}: {e}"));
        assert_eq!(got[0].tensor.to_le_bytes(), want[0].tensor.to_le_bytes());
        // Without room for the output, the fused run is refused too: the budget is real.
        model.set_memory_limit(inputs_bytes + out_bytes / 2);
        assert_eq!(model.run(inputs).unwrap_err().code(), "E604", "{place}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// `relu(x·b + b)` as layers `id` (Multiply), `id + 1` (Add) and `id + 2` (Relu) over `f32`
/// values of shape `big`, `x` and `b` (of shape `[1]`) the outputs 0 of the layers given; the
/// edges into them.
fn affine_relu(
    xml: &mut String,
    id: usize,
    big: &[usize],
    (x, b): (usize, usize),
) -> Vec<(usize, usize, usize, usize)> {
    let bcast = "<data auto_broadcast=\"numpy\"/>";
    let pair: &[(&[usize], &str)] = &[(big, "f32"), (&[1], "f32")];
    layer(xml, id, "Multiply", bcast, pair, (big, "f32"));
    layer(xml, id + 1, "Add", bcast, pair, (big, "f32"));
    layer(xml, id + 2, "Relu", "", &[(big, "f32")], (big, "f32"));
    vec![
        (x, 0, id, 0),
        (b, 0, id, 1),
        (id, 2, id + 1, 0),
        (b, 0, id + 1, 1),
        (id + 1, 2, id + 2, 0),
    ]
}

/// A group ending in a comparison is one pass too: `relu(x·b + b) > b` over 2^20 `f32`
/// elements runs under a budget of its inputs and its `boolean` output (an intermediate would
/// not fit); its bits are those of a plain loop and of layer-by-layer execution.
#[test]
fn groups_ending_in_a_comparison_need_no_intermediates() {
    let n = 1usize << 20;
    let mut xml =
        String::from("<?xml version=\"1.0\"?>\n<net name=\"cmp\" version=\"11\">\n<layers>\n");
    parameter(&mut xml, 0, &[n], "f32");
    parameter(&mut xml, 1, &[1], "f32");
    let (big, one): (&[usize], &[usize]) = (&[n], &[1]);
    let bcast = "<data auto_broadcast=\"numpy\"/>";
    let mut edges = affine_relu(&mut xml, 2, big, (0, 1));
    layer(
        &mut xml,
        5,
        "Greater",
        bcast,
        &[(big, "f32"), (one, "f32")],
        (big, "boolean"),
    );
    edges.extend([(4, 1, 5, 0), (1, 0, 5, 1)]);
    close(
        &mut xml,
        6,
        &[(5, big, "boolean")],
        &[0, 0, 2, 2, 1, 2],
        edges,
    );
    let (dir, mut model) = load("cmp-budget", &xml);
    let mut rng = Rng(5);
    let x: Vec<f32> = (0..n)
        .map(|_| (rng.next() % 2001) as f32 / 100.0 - 10.0)
        .collect();
    let b = 0.375f32;
    let inputs = || {
        vec![
            (
                "p0".to_string(),
                Tensor::from(ArrayD::from_shape_vec(IxDyn(&[n]), x.clone()).unwrap()),
            ),
            (
                "p1".to_string(),
                Tensor::from(ArrayD::from_shape_vec(IxDyn(&[1]), vec![b]).unwrap()),
            ),
        ]
    };
    let want: Vec<bool> = x.iter().map(|&v| (v * b + b).max(0.0) > b).collect();
    let plain = model.run_observed(inputs(), |_| Ok(())).unwrap();
    model.set_memory_limit((n * 4 + 4 + n) as u64 + 4096);
    let got = model.run(inputs()).unwrap_or_else(|e| panic!("{e}"));
    for out in [&got, &plain] {
        let bits: Vec<bool> = out[0]
            .tensor
            .view::<bool>()
            .unwrap()
            .iter()
            .copied()
            .collect();
        assert!(bits == want, "the comparison differs from the plain loop");
    }
    // Without room for the output, the fused run is refused too: the budget is real.
    model.set_memory_limit((n * 4 + 4 + n / 2) as u64);
    assert_eq!(model.run(inputs()).unwrap_err().code(), "E604");
    std::fs::remove_dir_all(&dir).ok();
}

/// A group ending in a Select is one pass: `Select(c, relu(x·b + b), x)` over 2^21 + 3
/// `f32` elements (its output streamed) runs under a budget of its inputs and output; its
/// bits are those of a plain loop and of layer-by-layer execution. The lone Select (its `cond`
/// broadcast along rows) is checked too.
#[test]
fn groups_ending_in_a_select_need_no_intermediates() {
    let (rows, cols) = ((1usize << 21) / 64 + 1, 64usize);
    let n = rows * cols;
    let mut xml =
        String::from("<?xml version=\"1.0\"?>\n<net name=\"sel\" version=\"11\">\n<layers>\n");
    let (big, one, col): (&[usize], &[usize], &[usize]) = (&[rows, cols], &[1], &[cols]);
    parameter(&mut xml, 0, big, "f32");
    parameter(&mut xml, 1, one, "f32");
    parameter(&mut xml, 2, col, "boolean");
    let bcast = "<data auto_broadcast=\"numpy\"/>";
    let mut edges = affine_relu(&mut xml, 3, big, (0, 1));
    let inputs3 = [(col, "boolean"), (big, "f32"), (big, "f32")];
    layer(&mut xml, 6, "Select", bcast, &inputs3, (big, "f32"));
    edges.extend([(2, 0, 6, 0), (5, 1, 6, 1), (0, 0, 6, 2)]);
    close(
        &mut xml,
        7,
        &[(6, big, "f32")],
        &[0, 0, 0, 2, 2, 1, 3],
        edges,
    );
    let (dir, mut model) = load("sel-budget", &xml);
    let mut rng = Rng(9);
    let x: Vec<f32> = (0..n)
        .map(|_| (rng.next() % 2001) as f32 / 100.0 - 10.0)
        .collect();
    let c: Vec<bool> = (0..cols).map(|_| rng.next().is_multiple_of(2)).collect();
    let b = -0.625f32;
    let inputs = || {
        vec![
            (
                "p0".to_string(),
                Tensor::from(ArrayD::from_shape_vec(IxDyn(&[rows, cols]), x.clone()).unwrap()),
            ),
            (
                "p1".to_string(),
                Tensor::from(ArrayD::from_shape_vec(IxDyn(&[1]), vec![b]).unwrap()),
            ),
            (
                "p2".to_string(),
                Tensor::from(ArrayD::from_shape_vec(IxDyn(&[cols]), c.clone()).unwrap()),
            ),
        ]
    };
    let want: Vec<u32> = (0..n)
        .map(|i| {
            if c[i % cols] {
                (x[i] * b + b).max(0.0)
            } else {
                x[i]
            }
            .to_bits()
        })
        .collect();
    let plain = model.run_observed(inputs(), |_| Ok(())).unwrap();
    model.set_memory_limit((n * 8 + 4 + cols) as u64 + 4096);
    let got = model.run(inputs()).unwrap_or_else(|e| panic!("{e}"));
    for out in [&got, &plain] {
        let bits: Vec<u32> = out[0]
            .tensor
            .view::<f32>()
            .unwrap()
            .iter()
            .map(|v| v.to_bits())
            .collect();
        assert!(bits == want, "Select differs from the plain loop");
    }
    model.set_memory_limit((n * 4 + 4 + cols + n * 2) as u64);
    assert_eq!(model.run(inputs()).unwrap_err().code(), "E604");
    std::fs::remove_dir_all(&dir).ok();
}

/// A random group ending in a Select of `f32` or `f64` (`n % 3 == 2`): its `cond` a
/// comparison of two operands or a `boolean` tensor (full-size, one value or a row), each
/// operand a tensor (full-size, one value, a row of 64 or more, a column) or a chain of up to
/// three unary and binary layers over them; a few have 2^21 + 64 elements. Most are computed
/// in registers, block by block;
/// a column, a chain through Exp, or a chain whose values are smaller than the output go tile
/// by tile. The full-size `f32` inputs hold NaNs, infinities, ±0 and subnormals now and then.
fn select_case(rng: &mut Rng, n: usize) -> Case {
    let ty = if n % 3 == 2 { "f64" } else { "f32" };
    let (rows, cols) = match rng.below(4) {
        // Parallel chunks, the output streamed.
        _ if n.is_multiple_of(80) => ((1 << 21) / 64 + 1, 64),
        0 => (1, 1 + rng.below(200)),
        1 => (3, 64 + rng.below(100)),
        2 => (1 + rng.below(40), 64 * (1 + rng.below(3))),
        _ => (260, 130),
    };
    let full = vec![rows, cols];
    let shapes = [
        full.clone(),
        vec![1],
        vec![1, cols],
        vec![rows, 1],
        full.clone(),
    ];
    let mut xml =
        String::from("<?xml version=\"1.0\"?>\n<net name=\"select\" version=\"11\">\n<layers>\n");
    let mut inputs = Vec::new();
    for (p, s) in shapes.iter().enumerate() {
        parameter(&mut xml, p, s, ty);
        let t = tensor(rng, ty, s);
        let t = if ty == "f32" && s == &full && rng.below(2) == 0 {
            with_specials(t, rng)
        } else {
            t
        };
        inputs.push((format!("p{p}"), t));
    }
    let mask = [full.clone(), vec![1], vec![1, cols]][rng.below(3)].clone();
    parameter(&mut xml, 5, &mask, "boolean");
    inputs.push(("p5".to_string(), tensor(rng, "boolean", &mask)));
    let mut values: Vec<Vec<usize>> = shapes.to_vec();
    values.push(mask);
    let mut out_port = vec![0; values.len()];
    let mut edges = Vec::new();
    let bcast = "<data auto_broadcast=\"numpy\"/>";
    // An operand: a tensor (mostly a full-size one) or a chain over tensors.
    let operand = |rng: &mut Rng,
                   xml: &mut String,
                   values: &mut Vec<Vec<usize>>,
                   out_port: &mut Vec<usize>,
                   edges: &mut Vec<(usize, usize, usize, usize)>| {
        let pick = |rng: &mut Rng| [0, 0, 4, 1, 2, 3][rng.below(6)];
        let mut v = pick(rng);
        for _ in 0..rng.below(4) {
            let id = values.len();
            let s = values[v].clone();
            if rng.below(3) == 0 {
                let kinds = ["Relu", "Abs", "Floor", "HSwish", "HSigmoid", "Exp"];
                let kind = kinds[rng.below(kinds.len())];
                layer(xml, id, kind, "", &[(&s, ty)], (&s, ty));
                edges.push((v, out_port[v], id, 0));
                out_port.push(1);
                values.push(s);
            } else {
                let kinds = [
                    "Add",
                    "Subtract",
                    "Multiply",
                    "Divide",
                    "Maximum",
                    "SquaredDifference",
                ];
                let kind = kinds[rng.below(kinds.len())];
                let w = pick(rng);
                let (a, b) = if rng.below(2) == 0 { (v, w) } else { (w, v) };
                let (sa, sb) = (values[a].clone(), values[b].clone());
                let out = broadcast(&sa, &sb);
                layer(xml, id, kind, bcast, &[(&sa, ty), (&sb, ty)], (&out, ty));
                edges.push((a, out_port[a], id, 0));
                edges.push((b, out_port[b], id, 1));
                out_port.push(2);
                values.push(out);
            }
            v = id;
        }
        v
    };
    let cond = if rng.below(4) == 0 {
        5
    } else {
        let x = operand(rng, &mut xml, &mut values, &mut out_port, &mut edges);
        let y = operand(rng, &mut xml, &mut values, &mut out_port, &mut edges);
        let (sx, sy) = (values[x].clone(), values[y].clone());
        let out = broadcast(&sx, &sy);
        let id = values.len();
        let rule = COMPARISONS[rng.below(COMPARISONS.len())];
        layer(
            &mut xml,
            id,
            rule,
            bcast,
            &[(&sx, ty), (&sy, ty)],
            (&out, "boolean"),
        );
        edges.push((x, out_port[x], id, 0));
        edges.push((y, out_port[y], id, 1));
        out_port.push(2);
        values.push(out);
        id
    };
    let then = operand(rng, &mut xml, &mut values, &mut out_port, &mut edges);
    let other = operand(rng, &mut xml, &mut values, &mut out_port, &mut edges);
    let (sc, st, se) = (
        values[cond].clone(),
        values[then].clone(),
        values[other].clone(),
    );
    let out = broadcast(&broadcast(&sc, &st), &se);
    let id = values.len();
    let ins = [(&sc[..], "boolean"), (&st[..], ty), (&se[..], ty)];
    layer(&mut xml, id, "Select", bcast, &ins, (&out, ty));
    edges.extend([
        (cond, out_port[cond], id, 0),
        (then, out_port[then], id, 1),
        (other, out_port[other], id, 2),
    ]);
    out_port.push(3);
    values.push(out.clone());
    close(&mut xml, id + 1, &[(id, &out, ty)], &out_port, edges);
    Case { xml, inputs }
}

/// Groups ending in a Select computed in registers (its operands' chains and its choice in
/// one pass, block by block) give the bits of layer-by-layer execution: random cases of
/// [`select_case`], whose tile-by-tile fallbacks must agree too.
#[test]
fn selects_in_registers_match_layer_by_layer() {
    let mut rng = Rng(0x5E1E_C7ED);
    let (ok, failed) = run_cases("select-registers", 240, |n| select_case(&mut rng, n));
    assert_eq!((ok, failed), (240, 0));
}

/// A chain whose broadcast operands change every 100 elements (runs at least `RUN_MIN` long,
/// read in place, stretch by stretch: `m` steps along them, `s` repeats one value) gives the
/// same bits as layer by layer, with the running value as either operand
/// (`s / relu(a − m)`), for an output that is streamed (shared inputs) and one computed over
/// an input (owned).
#[test]
fn short_runs_match_layer_by_layer() {
    let (r, k, c) = (571usize, 37usize, 100usize);
    let port = |d: &[usize]| -> String { d.iter().map(|x| format!("<dim>{x}</dim>")).collect() };
    let (full, m, s) = (port(&[r, k, c]), port(&[r, 1, c]), port(&[1, k, 1]));
    let xml = format!(
        r#"<?xml version="1.0"?>
<net name="short" version="11"><layers>
<layer id="0" name="a" type="Parameter" version="opset1"><data shape="{r},{k},{c}" element_type="f32"/><output><port id="0" precision="FP32" names="a">{full}</port></output></layer>
<layer id="1" name="m" type="Parameter" version="opset1"><data shape="{r},1,{c}" element_type="f32"/><output><port id="0" precision="FP32" names="m">{m}</port></output></layer>
<layer id="2" name="s" type="Parameter" version="opset1"><data shape="1,{k},1" element_type="f32"/><output><port id="0" precision="FP32" names="s">{s}</port></output></layer>
<layer id="3" name="d" type="Subtract" version="opset1"><data auto_broadcast="numpy"/><input><port id="0">{full}</port><port id="1">{m}</port></input><output><port id="2" precision="FP32">{full}</port></output></layer>
<layer id="4" name="p" type="Relu" version="opset1"><input><port id="0">{full}</port></input><output><port id="1" precision="FP32">{full}</port></output></layer>
<layer id="5" name="q" type="Divide" version="opset1"><data auto_broadcast="numpy"/><input><port id="0">{s}</port><port id="1">{full}</port></input><output><port id="2" precision="FP32" names="q">{full}</port></output></layer>
<layer id="6" name="r" type="Result" version="opset1"><input><port id="0">{full}</port></input></layer>
</layers><edges>
<edge from-layer="0" from-port="0" to-layer="3" to-port="0"/><edge from-layer="1" from-port="0" to-layer="3" to-port="1"/>
<edge from-layer="3" from-port="2" to-layer="4" to-port="0"/>
<edge from-layer="2" from-port="0" to-layer="5" to-port="0"/><edge from-layer="4" from-port="1" to-layer="5" to-port="1"/>
<edge from-layer="5" from-port="2" to-layer="6" to-port="0"/>
</edges></net>"#
    );
    let (dir, model) = load("short", &xml);
    let mut rng = Rng(11);
    let mut values = |n: usize| -> Vec<f32> {
        (0..n)
            .map(|_| (rng.next() % 20001) as f32 / 100.0 - 100.0)
            .collect()
    };
    let (a, mv, sv) = (values(r * k * c), values(r * c), values(k));
    let inputs = || {
        vec![
            (
                "a",
                Tensor::from(ArrayD::from_shape_vec(IxDyn(&[r, k, c]), a.clone()).unwrap()),
            ),
            (
                "m",
                Tensor::from(ArrayD::from_shape_vec(IxDyn(&[r, 1, c]), mv.clone()).unwrap()),
            ),
            (
                "s",
                Tensor::from(ArrayD::from_shape_vec(IxDyn(&[1, k, 1]), sv.clone()).unwrap()),
            ),
        ]
    };
    let want: Vec<u32> = (0..r * k * c)
        .map(|i| {
            let (row, mid, col) = (i / (k * c), i / c % k, i % c);
            let d = a[i] - mv[row * c + col];
            (sv[mid] / if d > 0.0 { d } else { 0.0 }).to_bits()
        })
        .collect();
    three_ways(&model, &inputs, &want);
    std::fs::remove_dir_all(&dir).ok();
}

/// `xml` written to a directory of its own as `<name>.xml` and loaded: the directory (for the
/// caller to remove) and the model.
fn load(name: &str, xml: &str) -> (std::path::PathBuf, Model) {
    let dir = std::env::temp_dir().join(format!("ovir-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{name}.xml"));
    std::fs::write(&path, xml).unwrap();
    (dir, Model::load(&path).unwrap())
}

/// Runs `model` three ways and checks that each f32 output has the bits `want`: with shared
/// inputs (which cannot be overwritten, so the output gets its own buffer, streamed when
/// large), with owned inputs (computed over in place) and layer by layer. Returns the shared
/// inputs.
fn three_ways<'a>(
    model: &Model,
    inputs: &impl Fn() -> Vec<(&'a str, Tensor)>,
    want: &[u32],
) -> Vec<(&'a str, std::sync::Arc<Tensor>)> {
    let shared: Vec<(&str, std::sync::Arc<Tensor>)> = inputs()
        .into_iter()
        .map(|(k, t)| (k, std::sync::Arc::new(t)))
        .collect();
    let streamed = model.run_shared(shared.iter().cloned()).unwrap();
    let fused = model.run(inputs()).unwrap();
    let plain = model.run_observed(inputs(), |_| Ok(())).unwrap();
    for (name, out) in [("shared", streamed), ("owned", fused), ("plain", plain)] {
        let got: Vec<u32> = out[0]
            .tensor
            .view::<f32>()
            .unwrap()
            .iter()
            .map(|x| x.to_bits())
            .collect();
        assert!(got == want, "{name} output differs from the plain loop");
    }
    shared
}

/// A random convolution (plain 3×3, pointwise, depthwise, strided; batch 1 or 2; planes from
/// one position to several GEMM tiles) followed by a chain of elementwise layers whose other
/// operands are one value, one per channel (`[1, C, 1, 1]` or `[C, 1, 1]`), of the output's
/// shape, or shaped otherwise (`[1, 1, 1, W]`, `[N, C, 1, 1]`: not taken by the convolution,
/// run after it), on either input port; now and then the convolution's output is also a
/// Result (read twice: not fused), and the type f16 or f64 (not taken: run after it).
fn conv_case(rng: &mut Rng) -> Case {
    let ty = match rng.below(8) {
        0 => "f16",
        1 => "f64",
        _ => "f32",
    };
    let n = 1 + rng.below(2);
    let side = |rng: &mut Rng| [1, 2, 5, 7, 9, 14, 23][rng.below(7)];
    // Now and then a plane of several GEMM tiles (1 MiB of columns: 1820 positions at 144
    // rows).
    let big = rng.below(12) == 0;
    let (h, w) = if big {
        (64, 64)
    } else {
        (side(rng), side(rng))
    };
    let cin = if big { 16 } else { [1, 3, 4, 16][rng.below(4)] };
    let cout = [1, 5, 40][rng.below(3)];
    let (layer_type, filters, k, stride, cout) = match if big { 2 } else { rng.below(4) } {
        // Depthwise: one filter per channel.
        0 => ("GroupConvolution", vec![cin, 1, 1, 3, 3], 3, 1, cin),
        1 => ("Convolution", vec![cout, cin, 1, 1], 1, 1, cout),
        s => ("Convolution", vec![cout, cin, 3, 3], 3, s - 1, cout),
    };
    let pad = k / 2;
    let out_side = |x: usize| (x + 2 * pad - k) / stride + 1;
    let out = vec![n, cout, out_side(h), out_side(w)];
    let mut xml =
        String::from("<?xml version=\"1.0\"?>\n<net name=\"conv\" version=\"11\">\n<layers>\n");
    let mut inputs = Vec::new();
    // Layers 0 and 1: the data and filters; 2: the convolution; 3…: the chain; the other
    // operands' Parameters from 100.
    let data = vec![n, cin, h, w];
    for (p, shape) in [&data, &filters].into_iter().enumerate() {
        parameter(&mut xml, p, shape, ty);
        inputs.push((format!("p{p}"), tensor(rng, ty, shape)));
    }
    let attrs = format!(
        "<data strides=\"{stride},{stride}\" dilations=\"1,1\" pads_begin=\"{pad},{pad}\" pads_end=\"{pad},{pad}\" auto_pad=\"explicit\"/>"
    );
    layer(
        &mut xml,
        2,
        layer_type,
        &attrs,
        &[(&data, ty), (&filters, ty)],
        (&out, ty),
    );
    let mut edges = vec![(0, 0, 2, 0), (1, 0, 2, 1)];
    let mut out_port = vec![0; 200];
    out_port[2] = 2;
    let mut outputs: Vec<usize> = Vec::new();
    if rng.below(8) == 0 {
        outputs.push(2);
    }
    let mut last = 2;
    for id in 3..4 + rng.below(4) {
        let op = [
            "Add", "Multiply", "Subtract", "Divide", "Maximum", "Relu", "Abs", "Tanh", "HSwish",
            "HSigmoid",
        ][rng.below(10)];
        if matches!(op, "Relu" | "Abs" | "Tanh" | "HSwish" | "HSigmoid") {
            layer(&mut xml, id, op, "", &[(&out, ty)], (&out, ty));
            edges.push((last, out_port[last], id, 0));
            out_port[id] = 1;
        } else {
            let other = match rng.below(7) {
                0 => vec![1],
                1 | 2 => vec![1, cout, 1, 1],
                3 => vec![cout, 1, 1],
                4 => out.clone(),
                5 => vec![1, 1, 1, out[3]],
                _ => vec![n, cout, 1, 1],
            };
            let p = 100 + id;
            parameter(&mut xml, p, &other, ty);
            inputs.push((format!("p{p}"), tensor(rng, ty, &other)));
            let numpy = "<data auto_broadcast=\"numpy\"/>";
            let ends = [(last, out_port[last], &out), (p, 0, &other)];
            let [a, b] = if rng.below(3) == 0 {
                [ends[1], ends[0]]
            } else {
                ends
            };
            layer(&mut xml, id, op, numpy, &[(a.2, ty), (b.2, ty)], (&out, ty));
            edges.push((a.0, a.1, id, 0));
            edges.push((b.0, b.1, id, 1));
            out_port[id] = 2;
        }
        last = id;
    }
    outputs.push(last);
    let outs: Vec<(usize, &[usize], &str)> = outputs.iter().map(|&o| (o, &out[..], ty)).collect();
    close(&mut xml, 150, &outs, &out_port, edges);
    Case { xml, inputs }
}

/// Convolutions that apply the elementwise layers after them to their output as they write it
/// (bias, activation, residual…) give the bits of running those layers one by one.
#[test]
fn convolution_groups_match_layer_by_layer() {
    let mut rng = Rng(0xC0DE_C0A7);
    let (ok, failed) = run_cases("conv", 160, |_| conv_case(&mut rng));
    assert!(ok == 160 && failed == 0, "{ok} ran, {failed} failed");
}

/// The bias Add and the Relu after a convolution are one step with it: the profile shows one
/// step of three layers, and the output has the bits of the plain loop.
#[test]
fn a_convolution_takes_its_bias_and_activation() {
    let (x, f, b, out) = ([1, 3, 9, 9], [4, 3, 3, 3], [1, 4, 1, 1], [1, 4, 9, 9]);
    let mut xml =
        String::from("<?xml version=\"1.0\"?>\n<net name=\"cba\" version=\"11\">\n<layers>\n");
    for (p, shape) in [&x[..], &f, &b].into_iter().enumerate() {
        parameter(&mut xml, p, shape, "f32");
    }
    let attrs = "<data strides=\"1,1\" dilations=\"1,1\" pads_begin=\"1,1\" pads_end=\"1,1\" auto_pad=\"explicit\"/>";
    layer(
        &mut xml,
        3,
        "Convolution",
        attrs,
        &[(&x, "f32"), (&f, "f32")],
        (&out, "f32"),
    );
    let numpy = "<data auto_broadcast=\"numpy\"/>";
    layer(
        &mut xml,
        4,
        "Add",
        numpy,
        &[(&out, "f32"), (&b, "f32")],
        (&out, "f32"),
    );
    layer(&mut xml, 5, "Relu", "", &[(&out, "f32")], (&out, "f32"));
    let edges = vec![
        (0, 0, 3, 0),
        (1, 0, 3, 1),
        (3, 2, 4, 0),
        (2, 0, 4, 1),
        (4, 2, 5, 0),
    ];
    close(&mut xml, 6, &[(5, &out, "f32")], &[0, 0, 0, 2, 2, 1], edges);
    let (dir, model) = load("cba", &xml);
    let mut rng = Rng(5);
    let inputs: Vec<(String, std::sync::Arc<Tensor>)> = [&x[..], &f, &b]
        .into_iter()
        .enumerate()
        .map(|(p, s)| {
            (
                format!("p{p}"),
                std::sync::Arc::new(tensor(&mut rng, "f32", s)),
            )
        })
        .collect();
    let mut profile = ovir::Profile::new();
    let fused = model
        .run_profiled(inputs.iter().cloned(), &mut profile)
        .unwrap();
    let steps = profile.steps(&model);
    assert!(
        steps
            .iter()
            .any(|s| s.op_type == "Convolution+Add+Relu" && s.layers == 3),
        "{steps:?}"
    );
    // The plain loop, in f32 as each layer rounds.
    let v = |p: usize| {
        inputs[p]
            .1
            .view::<f32>()
            .unwrap()
            .iter()
            .copied()
            .collect::<Vec<_>>()
    };
    let (xv, fv, bv) = (v(0), v(1), v(2));
    let mut want = Vec::new();
    for m in 0..4 {
        for oh in 0..9isize {
            for ow in 0..9isize {
                let mut acc = 0.0f32;
                for c in 0..3 {
                    for kh in 0..3isize {
                        for kw in 0..3isize {
                            let (ih, iw) = (oh + kh - 1, ow + kw - 1);
                            if (0..9).contains(&ih) && (0..9).contains(&iw) {
                                let wv = fv[((m * 3 + c) * 3 + kh as usize) * 3 + kw as usize];
                                acc = wv.mul_add(xv[(c * 9 + ih as usize) * 9 + iw as usize], acc);
                            }
                        }
                    }
                }
                want.push((acc + bv[m]).max(0.0).to_bits());
            }
        }
    }
    let got: Vec<u32> = fused[0]
        .tensor
        .view::<f32>()
        .unwrap()
        .iter()
        .map(|x| x.to_bits())
        .collect();
    assert_eq!(got, want);
    std::fs::remove_dir_all(&dir).ok();
}

/// f32 chains ending in a Convert to f16, rounded as each block leaves the registers, give
/// Convert's bits (a plain loop of `f16::from_f32`; a NaN stays a NaN) and those of
/// layer-by-layer execution: over an output of scalars (streamed past 8 MiB, ending in a part
/// block, with a unary step), over per-channel runs read in place, and over runs too short for
/// that (converted tile by tile). The inputs are random bits: every exponent, so outputs
/// overflow to ±inf, fall to f16 subnormals and zeros, and are NaN.
#[test]
fn chains_rounded_to_f16_match_convert() {
    let cases: [(&[usize], &[usize], bool); 3] = [
        (&[(1 << 22) + 37], &[1], true),
        (&[2, 5, 100], &[1, 5, 1], false),
        (&[2, 5, 7], &[1, 5, 1], false),
    ];
    let mut rng = Rng(0xF16);
    for (big, small, relu) in cases {
        let mut xml = String::from(
            "<?xml version=\"1.0\"?>\n<net name=\"to_f16\" version=\"11\">\n<layers>\n",
        );
        parameter(&mut xml, 0, big, "f32");
        parameter(&mut xml, 1, small, "f32");
        let bcast = "<data auto_broadcast=\"numpy\"/>";
        let pair: &[(&[usize], &str)] = &[(big, "f32"), (small, "f32")];
        layer(&mut xml, 2, "Multiply", bcast, pair, (big, "f32"));
        layer(&mut xml, 3, "Add", bcast, pair, (big, "f32"));
        let mut edges = vec![(0, 0, 2, 0), (1, 0, 2, 1), (2, 2, 3, 0), (1, 0, 3, 1)];
        let mut out_port = vec![0, 0, 2, 2];
        if relu {
            layer(&mut xml, 4, "Relu", "", &[(big, "f32")], (big, "f32"));
            edges.push((3, 2, 4, 0));
            out_port.push(1);
        }
        let (last, convert) = (out_port.len() - 1, out_port.len());
        let to_f16 = "<data destination_type=\"f16\"/>";
        layer(
            &mut xml,
            convert,
            "Convert",
            to_f16,
            &[(big, "f32")],
            (big, "f16"),
        );
        edges.push((last, out_port[last], convert, 0));
        out_port.push(1);
        close(
            &mut xml,
            convert + 1,
            &[(convert, big, "f16")],
            &out_port,
            edges,
        );
        let (dir, model) = load("to_f16", &xml);
        let n: usize = big.iter().product();
        let channels: usize = small.iter().product();
        let x: Vec<f32> = (0..n).map(|_| f32::from_bits(rng.next() as u32)).collect();
        let s: Vec<f32> = (0..channels)
            .map(|_| 0.5 + (rng.next() % 1000) as f32 / 500.0)
            .collect();
        let inner = if channels == 1 { n } else { big[2] };
        let want: Vec<f16> = (0..n)
            .map(|i| {
                let c = (i / inner) % channels;
                let v = x[i] * s[c] + s[c];
                f16::from_f32(if relu && v < 0.0 { 0.0 } else { v })
            })
            .collect();
        let inputs = || {
            vec![
                (
                    "p0",
                    Tensor::from(ArrayD::from_shape_vec(IxDyn(big), x.clone()).unwrap()),
                ),
                (
                    "p1",
                    Tensor::from(ArrayD::from_shape_vec(IxDyn(small), s.clone()).unwrap()),
                ),
            ]
        };
        let fused = model.run(inputs()).unwrap();
        let plain = model.run_observed(inputs(), |_| Ok(())).unwrap();
        let got = fused[0].tensor.view::<f16>().unwrap();
        let bad = got
            .iter()
            .zip(&want)
            .position(|(g, w)| g.to_bits() != w.to_bits() && !(g.is_nan() && w.is_nan()));
        assert_eq!(bad, None, "{big:?}: differs from Convert's rounding");
        assert_eq!(
            fused[0].tensor.to_le_bytes(),
            plain[0].tensor.to_le_bytes(),
            "{big:?}: differs from layer by layer"
        );
        std::fs::remove_dir_all(&dir).ok();
    }
}
