//! Hostile input, class by class: each ends in a clear message (pinned by a snapshot) and an
//! exit code of 0, 1 or 2, never a panic (101) or a signal. The files are made here, in a
//! folder of their own, and the binary runs from it so the messages name them relatively.

mod common;

use std::path::Path;

use common::{ovir_in, root, scratch};

/// Runs `ovir ARGS` in `dir` and checks the exit code is one ovir means.
fn run(dir: &Path, args: &[&str]) -> String {
    let out = ovir_in(dir, args);
    let code = out.lines().next().unwrap_or_default();
    assert!(
        matches!(code, "exit code: 0" | "exit code: 1" | "exit code: 2"),
        "ovir {args:?} in {}: {out}",
        dir.display()
    );
    out
}

/// An `.npy` file (version 1.0) with `header` padded as numpy pads it.
fn npy(header: &str, data: &[u8]) -> Vec<u8> {
    let mut h = header.to_string();
    while !(10 + h.len() + 1).is_multiple_of(64) {
        h.push(' ');
    }
    h.push('\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend_from_slice(&(h.len() as u16).to_le_bytes());
    out.extend_from_slice(h.as_bytes());
    out.extend_from_slice(data);
    out
}

fn f32_bytes(values: &[f32], big_endian: bool) -> Vec<u8> {
    values
        .iter()
        .flat_map(|v| {
            if big_endian {
                v.to_be_bytes()
            } else {
                v.to_le_bytes()
            }
        })
        .collect()
}

const PARAMETER: &str = r#"<layer id="0" name="a" type="Parameter" version="opset1"><data shape="2" element_type="f32"/><output><port id="0" precision="FP32"><dim>2</dim></port></output></layer>"#;
const RESULT: &str = r#"<layer id="9" name="r" type="Result" version="opset1"><input><port id="0" precision="FP32"><dim>2</dim></port></input></layer>"#;

/// An IR: the net header, `layers`, `edges`.
fn ir(layers: &str, edges: &str) -> String {
    format!(
        "<?xml version=\"1.0\"?>\n<net name=\"hostile\" version=\"11\">\n<layers>\n{layers}\n</layers>\n<edges>\n{edges}\n</edges>\n</net>\n"
    )
}

const A_TO_R: &str = r#"<edge from-layer="0" from-port="0" to-layer="9" to-port="0"/>"#;

/// Malformed and oversized XML: each is refused (or read) at a cost linear in its size.
#[test]
fn hostile_xml() {
    let sample = std::fs::read(root().join("ir_samples/sub_div_f32/model.xml")).unwrap();
    let deep = 100_000;
    let many_attributes: String = (0..200_000).map(|i| format!(" a{i}=\"{i}\"")).collect();
    let classes: Vec<(&str, Vec<u8>)> = vec![
        ("not_utf8", {
            let mut b = sample[..200].to_vec();
            b.extend_from_slice(b"\xff\xfe\x00");
            b
        }),
        ("truncated", sample[..sample.len() * 3 / 5].to_vec()),
        (
            "deep_nesting",
            ir(
                &format!(
                    "{}\n{RESULT}",
                    PARAMETER.replace(
                        "</output>",
                        &format!("{}{}</output>", "<x>".repeat(deep), "</x>".repeat(deep))
                    )
                ),
                A_TO_R,
            )
            .into_bytes(),
        ),
        (
            "unclosed_nesting",
            format!("<?xml version=\"1.0\"?>\n<net name=\"x\" version=\"11\">{}", "<x>".repeat(deep))
                .into_bytes(),
        ),
        (
            "many_attributes",
            ir(
                &format!(
                    "{}\n{RESULT}",
                    PARAMETER.replace("element_type=\"f32\"", &format!("element_type=\"f32\"{many_attributes}"))
                ),
                A_TO_R,
            )
            .into_bytes(),
        ),
        (
            "long_attribute",
            ir(
                &format!(
                    "{}\n{RESULT}",
                    PARAMETER.replace("name=\"a\"", &format!("name=\"{}\"", "n".repeat(10 << 20)))
                ),
                A_TO_R,
            )
            .into_bytes(),
        ),
        (
            "huge_dims",
            ir(
                &format!(
                    "{}\n{}",
                    PARAMETER
                        .replace("shape=\"2\"", "shape=\"4294967296,4294967296,4294967296\"")
                        .replace("<dim>2</dim>", &"<dim>4294967296</dim>".repeat(3)),
                    RESULT.replace("<dim>2</dim>", &"<dim>4294967296</dim>".repeat(3))
                ),
                A_TO_R,
            )
            .into_bytes(),
        ),
        (
            "const_offset_overflow",
            ir(
                &format!(
                    "{}\n{}",
                    r#"<layer id="0" name="c" type="Const" version="opset1"><data element_type="f32" shape="2" offset="18446744073709551615" size="8"/><output><port id="0" precision="FP32"><dim>2</dim></port></output></layer>"#,
                    RESULT
                ),
                A_TO_R,
            )
            .into_bytes(),
        ),
        (
            "const_shape_overflow",
            ir(
                &format!(
                    "{}\n{}",
                    r#"<layer id="0" name="c" type="Const" version="opset1"><data element_type="f32" shape="9223372036854775807,9223372036854775807" offset="0" size="8"/><output><port id="0" precision="FP32"><dim>9223372036854775807</dim><dim>9223372036854775807</dim></port></output></layer>"#,
                    RESULT.replace("<dim>2</dim>", "<dim>9223372036854775807</dim><dim>9223372036854775807</dim>")
                ),
                A_TO_R,
            )
            .into_bytes(),
        ),
    ];
    for (class, bytes) in classes {
        let dir = scratch("hostile", class);
        std::fs::write(dir.join("model.xml"), &bytes).unwrap();
        std::fs::write(dir.join("model.bin"), [0u8; 8]).unwrap();
        let check = run(&dir, &["check", "model.xml"]);
        let run_it = run(
            &dir,
            &["run", "model.xml", "--random-inputs", "--max-memory", "1G"],
        );
        // Long lines (the 10 MiB name) are cut for the snapshot; their length is kept.
        let cut = |s: &str| -> String {
            s.lines()
                .map(|l| {
                    if l.len() > 300 {
                        format!(
                            "{}… ({} bytes)\n",
                            &l[..l.floor_char_boundary(300)],
                            l.len()
                        )
                    } else {
                        format!("{l}\n")
                    }
                })
                .collect()
        };
        insta::assert_snapshot!(
            format!("xml_{class}"),
            format!(
                "$ ovir check model.xml\n{}\n$ ovir run model.xml --random-inputs --max-memory 1G\n{}",
                cut(&check),
                cut(&run_it)
            )
        );
    }
}

/// A chain of 20000 layers loads, checks and runs (as consecutive fused groups) to the same
/// result as layer-by-layer execution.
#[test]
fn long_chain_runs() {
    let n = 20_000;
    let mut layers = String::from(PARAMETER);
    let mut edges = String::new();
    for i in 1..=n {
        layers.push_str(&format!(
            r#"<layer id="{i}" name="s{i}" type="Subtract" version="opset1"><data auto_broadcast="numpy"/><input><port id="0" precision="FP32"><dim>2</dim></port><port id="1" precision="FP32"><dim>2</dim></port></input><output><port id="2" precision="FP32"><dim>2</dim></port></output></layer>"#
        ));
        let from_port = if i == 1 { 0 } else { 2 };
        edges.push_str(&format!(
            "<edge from-layer=\"{}\" from-port=\"{from_port}\" to-layer=\"{i}\" to-port=\"0\"/><edge from-layer=\"0\" from-port=\"0\" to-layer=\"{i}\" to-port=\"1\"/>\n",
            i - 1
        ));
    }
    layers.push_str(&RESULT.replace("id=\"9\"", &format!("id=\"{}\"", n + 1)));
    edges.push_str(&format!(
        "<edge from-layer=\"{n}\" from-port=\"2\" to-layer=\"{}\" to-port=\"0\"/>",
        n + 1
    ));
    let xml = ir(&layers, &edges);
    let model = ovir::Model::from_bytes("chain.xml", xml.as_bytes(), None, &Default::default())
        .expect("the chain loads");
    let input = || {
        vec![(
            ovir::InputKey::Index(0),
            ovir::Tensor::from(ndarray::arr1(&[1.5f32, -0.25]).into_dyn()),
        )]
    };
    let fused = model.run(input()).expect("the chain runs");
    let one_by_one = model
        .run_observed(input(), |_| Ok(()))
        .expect("the chain runs");
    let values = |o: &[ovir::Output]| {
        o[0].tensor
            .view::<f32>()
            .unwrap()
            .iter()
            .copied()
            .collect::<Vec<_>>()
    };
    // a − a − a … : 1.5 − 20000·1.5 and −0.25 + 20000·0.25, exact in f32.
    assert_eq!(
        values(&fused),
        [1.5 - 1.5 * n as f32, -0.25 + 0.25 * n as f32]
    );
    assert_eq!(values(&fused), values(&one_by_one));
}

/// Input arrays: refused with the file and the reason, or (big-endian, Fortran order) read
/// correctly.
#[test]
fn hostile_npy_inputs() {
    let ok = |data: &[f32]| {
        npy(
            "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }",
            &f32_bytes(data, false),
        )
    };
    let six = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
    let classes: Vec<(&str, Vec<u8>)> = vec![
        ("bad_magic", b"\x93NUMPX\x01\x00".to_vec()),
        ("truncated_header", ok(&six)[..40].to_vec()),
        ("truncated_data", ok(&six)[..ok(&six).len() - 5].to_vec()),
        ("trailing_data", [ok(&six), vec![0; 4]].concat()),
        (
            "unsupported_descr",
            npy(
                "{'descr': '<c8', 'fortran_order': False, 'shape': (2, 3), }",
                &[0; 48],
            ),
        ),
        (
            "object_array",
            npy(
                "{'descr': '|O', 'fortran_order': False, 'shape': (2, 3), }",
                &[0; 48],
            ),
        ),
        (
            "header_not_a_dict",
            npy("__import__('os').system('true')", &[]),
        ),
        (
            "shape_overflow",
            npy(
                "{'descr': '<f4', 'fortran_order': False, 'shape': (18446744073709551615, 2), }",
                &[],
            ),
        ),
        (
            "wrong_shape_for_the_model",
            npy(
                "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 2), }",
                &f32_bytes(&six, false),
            ),
        ),
        (
            "wrong_type_for_the_model",
            npy(
                "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }",
                &[0; 48],
            ),
        ),
        (
            "big_endian",
            npy(
                "{'descr': '>f4', 'fortran_order': False, 'shape': (2, 3), }",
                &f32_bytes(&six, true),
            ),
        ),
        (
            // Column-major: the values of row-major [[1,2,3],[4,5,6]].
            "fortran_order",
            npy(
                "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }",
                &f32_bytes(&[1.0, 4.0, 2.0, 5.0, 3.0, 6.0], false),
            ),
        ),
    ];
    let model = root().join("ir_samples/sub_div_f32/model.xml");
    let b = root().join("ir_samples/sub_div_f32/inputs/b.npy");
    for (class, bytes) in classes {
        let dir = scratch("hostile", &format!("npy_{class}"));
        std::fs::copy(&model, dir.join("model.xml")).unwrap();
        std::fs::copy(model.with_extension("bin"), dir.join("model.bin")).unwrap();
        std::fs::copy(&b, dir.join("b.npy")).unwrap();
        std::fs::write(dir.join("a.npy"), &bytes).unwrap();
        let out = run(
            &dir,
            &["run", "model.xml", "-i", "a=a.npy", "-i", "b=b.npy"],
        );
        insta::assert_snapshot!(format!("npy_{class}"), out);
    }
}

/// Outputs: a run that fails writes nothing and leaves what was there; an output folder that
/// cannot be made is an error; no temporary file is left behind.
#[test]
fn outputs_are_never_half_written() {
    let sample = root().join("ir_samples/int_divide");
    let dir = scratch("hostile", "outputs");
    std::fs::copy(sample.join("model.xml"), dir.join("model.xml")).unwrap();
    let a = sample.join("inputs/a.npy");
    let zeros = ovir::Tensor::from(ndarray::ArrayD::from_elem(ndarray::IxDyn(&[7]), 0i32));
    std::fs::write(dir.join("zeros.npy"), ovir::io::npy::to_bytes(&zeros)).unwrap();
    std::fs::create_dir(dir.join("out")).unwrap();
    let names = ["floor.npy", "trunc.npy"];
    for n in names {
        std::fs::write(dir.join("out").join(n), b"precious").unwrap();
    }
    let a = a.to_str().unwrap();
    let b = sample.join("inputs/b.npy");
    let b = b.to_str().unwrap();
    // `ovir run model.xml -i a=A -i b=B -o OUT`
    let run_to = |b: &str, out: &str| {
        let (a, b) = (format!("a={a}"), format!("b={b}"));
        run(&dir, &["run", "model.xml", "-i", &a, "-i", &b, "-o", out])
    };
    let failed = run_to("zeros.npy", "out");
    assert!(failed.starts_with("exit code: 2\n"), "{failed}");
    let listing = |d: &Path| {
        let mut v: Vec<String> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    };
    assert_eq!(listing(&dir.join("out")), names);
    for n in names {
        assert_eq!(std::fs::read(dir.join("out").join(n)).unwrap(), b"precious");
    }
    // The output folder's path is a file.
    std::fs::write(dir.join("taken"), b"not a folder").unwrap();
    let blocked = run_to(b, "taken");
    assert_eq!(std::fs::read(dir.join("taken")).unwrap(), b"not a folder");
    // A successful run replaces the files whole, and leaves no temporary file.
    let ok = run_to(b, "out");
    assert!(ok.starts_with("exit code: 0\n"), "{ok}");
    assert_eq!(listing(&dir.join("out")), names);
    for n in names {
        let t = ovir::io::npy::read(&dir.join("out").join(n), u64::MAX).unwrap();
        assert_eq!(t.shape(), [7]);
    }
    insta::assert_snapshot!(format!(
        "{}\n{}",
        failed.replace(a, "A").replace(b, "B"),
        blocked.replace(a, "A").replace(b, "B")
    ));
}

/// Every broken and hostile sample, run: an error (or a warning and a result), never a panic
/// or a signal (`check`'s output
/// of each is pinned in `tests/samples.rs`).
#[test]
fn broken_samples_never_crash_a_run() {
    for folder in ["ir_samples/bad", "ir_samples/hostile"] {
        let mut files: Vec<_> = std::fs::read_dir(root().join(folder))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "xml"))
            .collect();
        files.sort();
        assert!(!files.is_empty());
        for f in files {
            let f = f.to_str().unwrap();
            // Some only warn (declared dims that lie) and run.
            run(root(), &["run", f, "--random-inputs", "--max-memory", "1G"]);
        }
    }
}
