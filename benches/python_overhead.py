"""Per-call time of a tiny model from Python: ovir's Python package against ovir's own Rust
per-call time (`ovir bench`, one thread) and OpenVINO's Python API (`compiled(inputs)` and
`InferRequest.infer`) on the same model and inputs, one thread each.

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
import time

import numpy as np

import ovir

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


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--ovir", default=str(ROOT / "target" / "release" / "ovir"))
    ap.add_argument("--model", default=str(ROOT / "ir_samples" / "sub_div_f32"))
    ap.add_argument("--seconds", type=float, default=1.0)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    d = pathlib.Path(args.model)
    xml = d / "model.xml"
    inputs = {p.stem: np.load(p) for p in sorted((d / "inputs").glob("*.npy"))}

    m = ovir.Model(xml)
    compiled = m_ov = req = None
    try:
        import openvino as ov

        core = ov.Core()
        compiled = core.compile_model(str(xml), "CPU", {"INFERENCE_NUM_THREADS": 1})
        req = compiled.create_infer_request()
        m_ov = ov.__version__
    except ImportError:
        pass

    def rust() -> float:
        out = subprocess.run(
            [args.ovir, "bench", str(xml), "--inputs", str(d / "inputs"), "-t", str(args.seconds),
             "--threads", "1", "--format", "json"],
            capture_output=True, text=True, check=True,
        ).stdout
        return json.loads(out)["latency"]["mean_ms"] / 1e3

    sides = {
        "ovir Rust (ovir bench)": rust,
        "ovir Python Model.run": lambda: per_call(lambda: m.run(inputs), args.seconds),
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
    print(f"model {xml.relative_to(ROOT) if xml.is_relative_to(ROOT) else xml}; OpenVINO {m_ov or 'not installed'}; "
          f"median of {args.repeat} x {args.seconds} s, one thread")
    print(f"{'':38} {'us/call':>8} {'/ Rust':>7}")
    for k, v in med.items():
        print(f"{k:38} {v * 1e6:8.2f} {v / base:7.2f}")


if __name__ == "__main__":
    main()
