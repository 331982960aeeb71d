"""Per-call time of a model from Python: ovir's Python package (inputs read in place, and
copied) against ovir's own Rust per-call time (`ovir bench`, one thread) and OpenVINO's Python
API (`compiled(inputs)`, which shares inputs, and `InferRequest.infer`, which copies them) on
the same model and inputs, one thread each: a tiny model, then the same kind of model on large
inputs.

    .venv/bin/python benches/python_overhead.py --ovir target/release/ovir

Needs the package installed (`pip install ./python`) and `openvino` for its column. Each
figure is the median of --repeat measurements of --seconds each; the sides alternate, so that
the machine's drift falls on all of them alike.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import statistics
import subprocess
import tempfile
import time

import os

# One thread on every side: ovir's package runs on rayon's global pool, sized by this variable
# when the first run starts.
os.environ.setdefault("RAYON_NUM_THREADS", "1")

import numpy as np  # noqa: E402

import ovir  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[1]


def per_call(fn, seconds: float) -> float:
    """Mean seconds per call over about `seconds` (after a warm-up)."""
    for _ in range(200):
        fn()
    n, start = 0, time.perf_counter()
    batch = 1000
    while True:
        for _ in range(batch):
            fn()
        n += batch
        spent = time.perf_counter() - start
        if spent >= seconds:
            return spent / n


def table(xml: pathlib.Path, inputs_dir: pathlib.Path, args, title: str) -> None:
    """Times one model on the inputs in `inputs_dir` from every side; prints the medians."""
    inputs = {p.stem: np.load(p) for p in sorted(inputs_dir.glob("*.npy"))}
    m = ovir.Model(xml)
    compiled = req = None
    version = "not installed"
    try:
        import openvino as ov

        core = ov.Core()
        compiled = core.compile_model(str(xml), "CPU", {"INFERENCE_NUM_THREADS": 1})
        req = compiled.create_infer_request()
        version = ov.__version__
    except ImportError:
        pass

    def rust() -> float:
        out = subprocess.run(
            [args.ovir, "bench", str(xml), "--inputs", str(inputs_dir), "-t", str(args.seconds),
             "--threads", "1", "--format", "json"],
            capture_output=True, text=True, check=True,
        ).stdout
        return json.loads(out)["latency"]["mean_ms"] / 1e3

    sides = {
        "ovir Rust (ovir bench)": rust,
        "ovir Python Model.run": lambda: per_call(lambda: m.run(inputs), args.seconds),
        "ovir Python run(share_inputs=False)": lambda: per_call(
            lambda: m.run(inputs, share_inputs=False), args.seconds),
    }
    if compiled is not None:
        sides["OpenVINO Python compiled(inputs)"] = lambda: per_call(lambda: compiled(inputs), args.seconds)
        sides["OpenVINO Python InferRequest.infer"] = lambda: per_call(lambda: req.infer(inputs), args.seconds)
    got = {k: [] for k in sides}
    for _ in range(args.repeat):
        for k, f in sides.items():
            got[k].append(f())
    med = {k: statistics.median(v) for k, v in got.items()}
    base = med["ovir Rust (ovir bench)"]
    shown = xml.relative_to(ROOT) if xml.is_relative_to(ROOT) else xml
    print(f"{title}: model {shown}; OpenVINO {version}; median of {args.repeat} x {args.seconds} s, one thread")
    print(f"{'':38} {'us/call':>10} {'/ Rust':>7}")
    for k, v in med.items():
        print(f"{k:38} {v * 1e6:10.2f} {v / base:7.2f}")
    print()


def large_model(rows: int) -> str:
    """The IR of `(a - b) / c` with a, c: f32 [rows, 3] and b: f32 [1, 3] (no weights)."""

    def port(i: int, dims: tuple, names: str = "") -> str:
        named = f' names="{names}"' if names else ""
        return f'<port id="{i}" precision="FP32"{named}>' + "".join(f"<dim>{d}</dim>" for d in dims) + "</port>"

    big, row = (rows, 3), (1, 3)
    params = "".join(
        f'<layer id="{i}" name="{n}" type="Parameter" version="opset1"><data shape="{",".join(map(str, dims))}" '
        f'element_type="f32"/><output>{port(0, dims, n)}</output></layer>'
        for i, (n, dims) in enumerate([("a", big), ("b", row), ("c", big)])
    )
    layers = params + (
        f'<layer id="3" name="sub" type="Subtract" version="opset1"><data auto_broadcast="numpy"/>'
        f"<input>{port(0, big)}{port(1, row)}</input><output>{port(2, big)}</output></layer>"
        f'<layer id="4" name="div" type="Divide" version="opset1"><data auto_broadcast="numpy" m_pythondiv="true"/>'
        f'<input>{port(0, big)}{port(1, big)}</input><output>{port(2, big, "out")}</output></layer>'
        f'<layer id="5" name="out" type="Result" version="opset1"><input>{port(0, big)}</input></layer>'
    )
    edges = "".join(
        f'<edge from-layer="{a}" from-port="{b}" to-layer="{c}" to-port="{d}"/>'
        for a, b, c, d in [(0, 0, 3, 0), (1, 0, 3, 1), (3, 2, 4, 0), (2, 0, 4, 1), (4, 2, 5, 0)]
    )
    return f'<?xml version="1.0"?>\n<net name="large" version="11"><layers>{layers}</layers><edges>{edges}</edges></net>\n'


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--ovir", default=str(ROOT / "target" / "release" / "ovir"))
    ap.add_argument("--model", default=str(ROOT / "ir_samples" / "sub_div_f32"))
    ap.add_argument("--seconds", type=float, default=1.0)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--rows", type=int, default=1 << 20,
                    help="rows of the large-input table (ir_samples/dynamic: three f32 [rows, 3])")
    args = ap.parse_args()
    d = pathlib.Path(args.model)
    table(d / "model.xml", d / "inputs", args, "tiny model")
    if args.rows > 0:
        # Large inputs, where reading them in place rather than copying them shows.
        with tempfile.TemporaryDirectory() as tmp:
            rng = np.random.default_rng(7)
            big = pathlib.Path(tmp)
            np.save(big / "a.npy", rng.standard_normal((args.rows, 3), np.float32))
            np.save(big / "b.npy", rng.standard_normal((1, 3), np.float32))
            np.save(big / "c.npy", rng.uniform(1, 2, (args.rows, 3)).astype(np.float32))
            xml = big / "model.xml"
            xml.write_text(large_model(args.rows))
            table(xml, big, args, f"large inputs: (a - b) / c on three f32 [{args.rows}, 3]")


if __name__ == "__main__":
    main()
