//! Load benchmark: `cargo bench --bench load [-- SIZES...]`.
//!
//! Generates IRs of 1k, 10k and 100k layers (a Subtract/Divide chain with a Const per op, laid
//! out as `ov.save_model` writes it: ~840 bytes per layer, so 100k layers is ~84 MB) under
//! `target/bench-ir/`, then for each size measures, in the same run:
//!
//! * `floor`: reading the file and tokenising it with quick-xml's `Reader` (every event, nothing
//!   kept): the least any quick-xml based reader can do;
//! * `load`: `ovir::Model::load`, shape inference and the `info` summary, in this process;
//! * `ovir info` and `ovir check`: the release binary as a user runs it (process start, load,
//!   shape inference, print);
//! * peak RSS of a fresh process that only loads the model.
//!
//! It prints medians and the ratios to the floor. Set `OVIR_BENCH_OPENVINO=path/to/python` (a
//! Python with `openvino`) to also time OpenVINO's `Core.read_model` on the same files.

use std::fmt::Write as _;

// The same allocator as the `ovir` binary, so in-process figures match it.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    if args.first().map(String::as_str) == Some("--child-load") {
        child_load(Path::new(&args[1]));
        return;
    }
    let sizes: Vec<usize> = if args.is_empty() {
        vec![1_000, 10_000, 100_000]
    } else {
        args.iter().filter_map(|a| a.parse().ok()).collect()
    };
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/bench-ir");
    std::fs::create_dir_all(&dir).expect("create target/bench-ir");
    let bin = release_binary();

    println!(
        "{:>8} {:>9} | {:>9} {:>9} {:>9} {:>9} | {:>6} {:>6} {:>6} | {:>9} {:>9}",
        "layers",
        "MB",
        "floor ms",
        "load ms",
        "info ms",
        "check ms",
        "load/f",
        "info/f",
        "chk/f",
        "RSS MB",
        "RSS/file"
    );
    for &n in &sizes {
        let xml = dir.join(format!("chain_{n}.xml"));
        generate(&xml, n);
        let mb = std::fs::metadata(&xml).map(|m| m.len()).unwrap_or(0) as f64 / 1e6;
        let reps = if n >= 100_000 { 5 } else { 11 };
        let floor = median(reps, || tokenize(&xml));
        let load = median(reps, || {
            let m = ovir::Model::load(&xml).expect("generated IR loads");
            let (inferred, _) = m.infer();
            let info = ovir::info::Info::new(m.graph(), &inferred);
            assert_eq!(info.layers, n);
        });
        let run = |cmd: &'static str| {
            bin.as_ref().map(|b| {
                median(reps, || {
                    let out = Command::new(b)
                        .arg(cmd)
                        .arg(&xml)
                        .output()
                        .expect("run ovir");
                    assert!(out.status.success(), "ovir {cmd} failed");
                })
            })
        };
        let info = run("info");
        let check = run("check");
        let rss = peak_rss_of_load(&xml);
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        let abs = |d: Option<Duration>| d.map_or("-".into(), |d| format!("{:.1}", ms(d)));
        let rel =
            |d: Option<Duration>| d.map_or("-".into(), |d| format!("{:.2}", ms(d) / ms(floor)));
        let mut line = format!(
            "{n:>8} {mb:>9.1} | {:>9.1} {:>9.1} {:>9} {:>9} | {:>6.2} {:>6} {:>6} | ",
            ms(floor),
            ms(load),
            abs(info),
            abs(check),
            ms(load) / ms(floor),
            rel(info),
            rel(check),
        );
        match rss {
            Some(kb) => {
                let _ = write!(
                    line,
                    "{:>9.1} {:>9.2}",
                    kb as f64 / 1e3,
                    kb as f64 / 1e3 / mb
                );
            }
            None => line.push_str("        -         -"),
        }
        println!("{line}");
        if let Ok(py) = std::env::var("OVIR_BENCH_OPENVINO") {
            let script = "import sys,time,openvino as ov\nc=ov.Core()\nts=[]\nfor _ in range(3):\n t=time.perf_counter();c.read_model(sys.argv[1]);ts.append(time.perf_counter()-t)\nprint(sorted(ts)[1]*1e3)";
            if let Ok(out) = Command::new(py).args(["-c", script]).arg(&xml).output() {
                println!(
                    "{:>8} OpenVINO read_model: {} ms",
                    "",
                    String::from_utf8_lossy(&out.stdout).trim()
                );
            }
        }
    }
}

fn median(reps: usize, mut f: impl FnMut()) -> Duration {
    f(); // warm the page cache
    let mut times: Vec<Duration> = (0..reps)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .collect();
    times.sort();
    times[reps / 2]
}

/// Reads the file and walks every quick-xml event.
fn tokenize(path: &Path) {
    let text = std::fs::read_to_string(path).expect("read");
    let mut reader = quick_xml::Reader::from_str(&text);
    let mut events = 0usize;
    loop {
        match reader.read_event() {
            Ok(quick_xml::events::Event::Eof) => break,
            Ok(_) => events += 1,
            Err(e) => panic!("tokenize: {e}"),
        }
    }
    std::hint::black_box(events);
}

/// `target/release/ovir`, built by `cargo bench` alongside this bench (None if missing).
fn release_binary() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let release = exe.parent()?.parent()?; // target/release/deps -> target/release
    let bin = release.join("ovir");
    bin.exists().then_some(bin)
}

/// Runs this bench binary as a child that loads the model and reports its peak RSS (KiB).
fn peak_rss_of_load(xml: &Path) -> Option<u64> {
    let out = Command::new(std::env::current_exe().ok()?)
        .arg("--child-load")
        .arg(xml)
        .output()
        .ok()?;
    String::from_utf8_lossy(&out.stdout).trim().parse().ok()
}

fn child_load(xml: &Path) {
    let m = ovir::Model::load(xml).expect("generated IR loads");
    let (inferred, _) = m.infer();
    std::hint::black_box(ovir::info::Info::new(m.graph(), &inferred));
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let hwm = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok());
    if let Some(kb) = hwm {
        println!("{kb}");
    }
}

/// Writes an IR with exactly `n` layers (n >= 3): Parameter, then (Const, Subtract|Divide)
/// pairs, then a Result; laid out like `ov.save_model` output.
fn generate(xml: &Path, n: usize) {
    if xml.exists() {
        return;
    }
    let dims = [1, 3, 32, 32];
    let port = |s: &mut String, id: usize, names: Option<&str>, d: &[u32]| {
        let _ = write!(s, "\t\t\t\t<port id=\"{id}\" precision=\"FP32\"");
        if let Some(names) = names {
            let _ = write!(s, " names=\"{names}\"");
        }
        s.push_str(">\n");
        for v in d {
            let _ = writeln!(s, "\t\t\t\t\t<dim>{v}</dim>");
        }
        s.push_str("\t\t\t\t</port>\n");
    };
    let mut s = String::with_capacity(n * 900);
    s.push_str("<?xml version=\"1.0\"?>\n<net name=\"chain\" version=\"11\">\n\t<layers>\n");
    let mut edges = String::with_capacity(n * 100);
    s.push_str("\t\t<layer id=\"0\" name=\"x\" type=\"Parameter\" version=\"opset1\">\n\t\t\t<data shape=\"1,3,32,32\" element_type=\"f32\" />\n\t\t\t<output>\n");
    port(&mut s, 0, Some("x"), &dims);
    s.push_str("\t\t\t</output>\n\t\t</layer>\n");
    let mut prev = 0usize;
    let mut id = 1usize;
    let mut k = 0usize;
    while id + 2 < n {
        let c = id;
        let _ = write!(
            s,
            "\t\t<layer id=\"{c}\" name=\"Constant_{c}\" type=\"Const\" version=\"opset1\">\n\t\t\t<data element_type=\"f32\" shape=\"1,1,1,1\" offset=\"0\" size=\"4\" />\n\t\t\t<output>\n"
        );
        port(&mut s, 0, None, &[1, 1, 1, 1]);
        s.push_str("\t\t\t</output>\n\t\t</layer>\n");
        let op = id + 1;
        let (ty, data) = if k.is_multiple_of(2) {
            ("Subtract", "auto_broadcast=\"numpy\"")
        } else {
            ("Divide", "auto_broadcast=\"numpy\" m_pythondiv=\"true\"")
        };
        let _ = write!(
            s,
            "\t\t<layer id=\"{op}\" name=\"{ty}_{op}\" type=\"{ty}\" version=\"opset1\">\n\t\t\t<data {data} />\n\t\t\t<input>\n"
        );
        port(&mut s, 0, None, &dims);
        port(&mut s, 1, None, &[1, 1, 1, 1]);
        s.push_str("\t\t\t</input>\n\t\t\t<output>\n");
        port(&mut s, 2, Some(&format!("t{op}")), &dims);
        s.push_str("\t\t\t</output>\n\t\t</layer>\n");
        let from_port = if prev == 0 { 0 } else { 2 };
        let _ = writeln!(
            edges,
            "\t\t<edge from-layer=\"{prev}\" from-port=\"{from_port}\" to-layer=\"{op}\" to-port=\"0\" />"
        );
        let _ = writeln!(
            edges,
            "\t\t<edge from-layer=\"{c}\" from-port=\"0\" to-layer=\"{op}\" to-port=\"1\" />"
        );
        prev = op;
        id += 2;
        k += 1;
    }
    // Pad with unused Consts so the count is exactly n.
    while id + 1 < n {
        let _ = write!(
            s,
            "\t\t<layer id=\"{id}\" name=\"Pad_{id}\" type=\"Const\" version=\"opset1\">\n\t\t\t<data element_type=\"f32\" shape=\"1\" offset=\"0\" size=\"4\" />\n\t\t\t<output>\n"
        );
        port(&mut s, 0, None, &[1]);
        s.push_str("\t\t\t</output>\n\t\t</layer>\n");
        id += 1;
    }
    let _ = write!(
        s,
        "\t\t<layer id=\"{id}\" name=\"Result\" type=\"Result\" version=\"opset1\">\n\t\t\t<input>\n"
    );
    port(&mut s, 0, None, &dims);
    s.push_str("\t\t\t</input>\n\t\t</layer>\n\t</layers>\n\t<edges>\n");
    let from_port = if prev == 0 { 0 } else { 2 };
    let _ = writeln!(
        edges,
        "\t\t<edge from-layer=\"{prev}\" from-port=\"{from_port}\" to-layer=\"{id}\" to-port=\"0\" />"
    );
    s.push_str(&edges);
    s.push_str("\t</edges>\n\t<rt_info>\n\t\t<info name=\"OpenVINO Runtime\" value=\"bench\" />\n\t</rt_info>\n</net>\n");
    std::fs::write(xml, s).expect("write IR");
    std::fs::write(xml.with_extension("bin"), 1.0f32.to_le_bytes()).expect("write bin");
}
