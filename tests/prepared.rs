//! Work an op prepares once per model from its constant inputs (`Op::prepare`): MatMul packs a
//! constant untransposed f32 `B` (a Const, or a folded f16 → f32 Convert of one) in its GEMM's
//! panels at the first run. Runs must give the bits of layer-by-layer execution, which prepares
//! nothing, at every run and for any `A` (its rows change between runs of a dynamic model).

use ndarray::{ArrayD, IxDyn};
use ovir::{Model, Tensor};

/// Dims as IR ports list them.
fn dims(shape: &[usize]) -> String {
    shape.iter().map(|d| format!("<dim>{d}</dim>")).collect()
}

fn port(id: usize, precision: &str, shape: &[usize]) -> String {
    format!(
        "<port id=\"{id}\" precision=\"{precision}\">{}</port>",
        dims(shape)
    )
}

/// `A [-1, M, K]` (rows dynamic) times three Consts: `B1 [K, N]` f32, `B2 [K, N]` f16 through
/// a Convert, and `B3 [N, K]` f32 transposed (not packed); the three products are outputs.
fn model(k: usize, n: usize) -> (std::path::PathBuf, Model) {
    let mut bin: Vec<u8> = Vec::new();
    let value = |i: usize| ((i * 37 % 101) as f32 - 50.0) / 64.0;
    let b1 = bin.len();
    bin.extend((0..k * n).flat_map(|i| value(i).to_le_bytes()));
    let b2 = bin.len();
    bin.extend((0..k * n).flat_map(|i| ovir::half::f16::from_f32(value(i + 7)).to_le_bytes()));
    let b3 = bin.len();
    bin.extend((0..k * n).flat_map(|i| value(i + 3).to_le_bytes()));
    let a_port = |id| {
        format!(
            "<port id=\"{id}\" precision=\"FP32\"><dim>-1</dim><dim>4</dim><dim>{k}</dim></port>"
        )
    };
    let out = |id| {
        format!(
            "<port id=\"{id}\" precision=\"FP32\"><dim>-1</dim><dim>4</dim><dim>{n}</dim></port>"
        )
    };
    let konst = |id: usize, ty: &str, prec: &str, shape: &[usize], offset: usize, size: usize| {
        let s: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
        format!(
            "<layer id=\"{id}\" name=\"c{id}\" type=\"Const\" version=\"opset1\">\
             <data element_type=\"{ty}\" shape=\"{}\" offset=\"{offset}\" size=\"{size}\"/>\
             <output>{}</output></layer>\n",
            s.join(","),
            port(0, prec, shape)
        )
    };
    let matmul = |id: usize, tb: bool, b: &[usize]| {
        format!(
            "<layer id=\"{id}\" name=\"mm{id}\" type=\"MatMul\" version=\"opset1\">\
             <data transpose_a=\"false\" transpose_b=\"{tb}\"/><input>{}{}</input>\
             <output>{}</output></layer>\n",
            a_port(0),
            port(1, "FP32", b),
            out(2)
        )
    };
    let result = |id: usize| {
        format!(
            "<layer id=\"{id}\" name=\"r{id}\" type=\"Result\" version=\"opset1\">\
             <input>{}</input></layer>\n",
            out(0)
        )
    };
    let mut xml =
        String::from("<?xml version=\"1.0\"?>\n<net name=\"prepared\" version=\"11\">\n<layers>\n");
    xml += &format!(
        "<layer id=\"0\" name=\"a\" type=\"Parameter\" version=\"opset1\">\
         <data shape=\"?,4,{k}\" element_type=\"f32\"/><output>{}</output></layer>\n",
        a_port(0)
    );
    xml += &konst(1, "f32", "FP32", &[k, n], b1, k * n * 4);
    xml += &konst(2, "f16", "FP16", &[k, n], b2, k * n * 2);
    xml += &format!(
        "<layer id=\"3\" name=\"widen\" type=\"Convert\" version=\"opset1\">\
         <data destination_type=\"f32\"/><input>{}</input><output>{}</output></layer>\n",
        port(0, "FP16", &[k, n]),
        port(1, "FP32", &[k, n])
    );
    xml += &konst(4, "f32", "FP32", &[n, k], b3, k * n * 4);
    xml += &matmul(5, false, &[k, n]);
    xml += &matmul(6, false, &[k, n]);
    xml += &matmul(7, true, &[n, k]);
    xml += &result(8);
    xml += &result(9);
    xml += &result(10);
    xml += "</layers>\n<edges>\n";
    for (from, fp, to, tp) in [
        (0, 0, 5, 0),
        (1, 0, 5, 1),
        (0, 0, 6, 0),
        (2, 0, 3, 0),
        (3, 1, 6, 1),
        (0, 0, 7, 0),
        (4, 0, 7, 1),
        (5, 2, 8, 0),
        (6, 2, 9, 0),
        (7, 2, 10, 0),
    ] {
        xml += &format!(
            "<edge from-layer=\"{from}\" from-port=\"{fp}\" to-layer=\"{to}\" to-port=\"{tp}\"/>\n"
        );
    }
    xml += "</edges>\n</net>\n";
    let dir = std::env::temp_dir().join(format!("ovir-prepared-{k}-{n}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("m.xml"), xml).unwrap();
    std::fs::write(dir.join("m.bin"), bin).unwrap();
    let model = Model::load(dir.join("m.xml")).unwrap_or_else(|e| panic!("{e}"));
    (dir, model)
}

fn bits(t: &Tensor) -> Vec<u32> {
    t.view::<f32>()
        .unwrap()
        .iter()
        .map(|x| x.to_bits())
        .collect()
}

#[test]
fn packed_constant_weights_give_the_layer_by_layer_bits() {
    // Whole and partial panels of 16 and 32 columns, K within and across blocks of 256.
    for (k, n) in [(64, 96), (300, 40), (20, 130)] {
        let (dir, model) = model(k, n);
        for batch in [3, 1, 5] {
            let count = batch * 4 * k;
            let a: Vec<f32> = (0..count)
                .map(|i| ((i * 53 % 97) as f32 - 48.0) / 32.0)
                .collect();
            let input = || {
                let t =
                    Tensor::from(ArrayD::from_shape_vec(IxDyn(&[batch, 4, k]), a.clone()).unwrap());
                vec![("a", t)]
            };
            let got = model.run(input()).unwrap_or_else(|e| panic!("{e}"));
            // The two untransposed products prepared their B, the transposed one nothing.
            let folded = model.folded().unwrap();
            let node = |name: &str| {
                let g = model.graph();
                (0..g.nodes.len())
                    .find(|&i| g.nodes[i].name == name)
                    .unwrap()
            };
            assert!(folded.prepared(node("mm5")).is_some());
            assert!(folded.prepared(node("mm6")).is_some());
            assert!(folded.prepared(node("mm7")).is_none());
            assert!(folded.bytes() >= (2 * k * n * 4) as u64);
            let plain = model.run_observed(input(), |_| Ok(())).unwrap();
            assert_eq!(got.len(), 3);
            for (g, p) in got.iter().zip(&plain) {
                assert_eq!(g.tensor.shape(), &[batch, 4, n][..]);
                assert!(
                    bits(&g.tensor) == bits(&p.tensor),
                    "{}: K {k}, N {n}, batch {batch}",
                    g.name
                );
            }
            // And a product, not something else with the same bits both ways: element
            // (0, 0, 0) of the first output against a float64 sum.
            let b0: Vec<f64> = (0..k)
                .map(|p| f64::from(((p * n) * 37 % 101) as f32 - 50.0) / 64.0)
                .collect();
            let want: f64 = (0..k).map(|p| f64::from(a[p]) * b0[p]).sum();
            let v = f64::from(got[0].tensor.view::<f32>().unwrap()[[0, 0, 0]]);
            assert!(
                (v - want).abs() <= 1e-4 * want.abs().max(1.0),
                "{v} vs {want}"
            );
        }
        std::fs::remove_dir_all(&dir).ok();
    }
}
