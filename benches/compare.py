#!/usr/bin/env python3
"""ovir against OpenVINO's CPU plugin on the workloads of docs/performance.md.

Builds each workload as IR with the openvino package (target/bench-ir/), then in the same run
measures `ovir bench` and OpenVINO's `benchmark_app` (one stream, sync API, f32
inference precision so the CPU plugin computes in the model's own precision) at 1 and 2
threads, and prints the median latencies and their ratio (OpenVINO / ovir: above 1 means
ovir is faster). With gcc and an AVX-512 CPU it also measures the hand-written C floor of each
workload (benches/floor.c) in the same run and prints ovir / floor. Also measures the whole-process time of `ovir run` on a tiny sample and the
peak RSS of `ovir run` on the [64,64,64,64] model and on resnet50.

    .venv/bin/python benches/compare.py --ovir target/release/ovir [--seconds 3]
"""

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import openvino as ov
import openvino.opset13 as ops
from openvino.utils.node_factory import NodeFactory

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "target" / "bench-ir"
SHAPE = [64, 64, 64, 64]


def param(name, t, shape=SHAPE):
    p = ops.parameter(shape, t, name=name)
    p.output(0).get_tensor().set_names({name})
    return p


def model(name, out, params):
    r = ops.result(out)
    return ov.Model([r], params, name)


def workloads():
    f32, f16, i32 = ov.Type.f32, ov.Type.f16, ov.Type.i32
    w = {}
    a, b = param("a", f32), param("b", f32)
    w["f32 sub, same shape"] = model("sub", ops.subtract(a, b), [a, b])
    a, b = param("a", f32), param("b", f32)
    w["f32 div, same shape"] = model("div", ops.divide(a, b), [a, b])
    a, b = param("a", f32), param("b", f32, [64, 1, 64, 1])
    w["f32 sub, b [64,1,64,1]"] = model("sub_bcast", ops.subtract(a, b), [a, b])
    a = param("a", f32)
    w["f32 div by scalar Const"] = model("div_scalar", ops.divide(a, ops.constant(np.float32(3.0))), [a])
    a, b = param("a", i32), param("b", i32)
    floor = NodeFactory("opset1").create("Divide", [a.output(0), b.output(0)], {"m_pythondiv": True})
    w["i32 floor division"] = model("i32_floordiv", floor, [a, b])
    a, b = param("a", i32), param("b", i32)
    w["i32 sub (reference for floor division)"] = model("i32_sub", ops.subtract(a, b), [a, b])
    a, b = param("a", f16), param("b", f16)
    w["f16 sub"] = model("f16_sub", ops.subtract(a, b), [a, b])
    a, m, s = param("a", f32), param("m", f32, [64, 1, 64, 1]), param("s", f32, [64, 1, 64, 1])
    w["f32 (a-m)/s, m,s [64,1,64,1]"] = model("norm", ops.divide(ops.subtract(a, m), s), [a, m, s])
    a, b = param("a", f32), param("b", f32)
    x = a
    for k in range(8):
        x = ops.subtract(x, b) if k % 2 == 0 else ops.divide(x, b)
    w["chain of 8 sub/div"] = model("chain8", x, [a, b])
    a, b = param("a", f32, [2, 3]), param("b", f32, [2, 3])
    w["tiny [2,3] sub (per call)"] = model("tiny", ops.subtract(a, b), [a, b])
    # The elementwise ops of issue 18.
    a, b = param("a", f32), param("b", f32)
    w["f32 add"] = model("add", ops.add(a, b), [a, b])
    a, b = param("a", f32), param("b", f32)
    w["f32 multiply"] = model("mul", ops.multiply(a, b), [a, b])
    a, b = param("a", f32), param("b", f32, [64, 1, 64, 1])
    w["f32 maximum, b [64,1,64,1]"] = model("max_bcast", ops.maximum(a, b), [a, b])
    a, b = param("a", i32), param("b", i32)
    w["i32 floormod"] = model("i32_floormod", ops.floor_mod(a, b), [a, b])
    a, b = param("a", f32), param("b", f32)
    w["f32 less -> boolean"] = model("less", ops.less(a, b), [a, b])
    for name, make in (("exp", ops.exp), ("sigmoid", ops.sigmoid), ("tanh", ops.tanh), ("erf", ops.erf),
                       ("gelu", lambda x: ops.gelu(x, "erf")), ("swish", ops.swish),
                       # The activations computed by f64 forms (docs/accuracy.md).
                       ("softplus", ops.softplus), ("mish", ops.mish), ("elu", lambda x: ops.elu(x, 1.0)),
                       ("selu", lambda x: ops.selu(x, ops.constant(np.array([1.67326], np.float32)),
                                                   ops.constant(np.array([1.0507], np.float32)))),
                       ("gelu_tanh", lambda x: ops.gelu(x, "tanh"))):
        a = param("a", f32)
        w[f"f32 {name}"] = model(name, make(a), [a])
    a = param("a", f32)
    scale = ops.constant(np.linspace(0.5, 1.5, 64, dtype=np.float32).reshape([1, 64, 1, 1]))
    bias = ops.constant(np.linspace(-1, 1, 64, dtype=np.float32).reshape([1, 64, 1, 1]))
    w["f32 relu(x*scale+bias), per channel"] = model("scale_bias_relu", ops.relu(ops.add(ops.multiply(a, scale), bias)), [a])
    a, b, c = param("a", f16), param("b", f16), param("c", f16)
    w["f16 a*b+c"] = model("f16_madd", ops.add(ops.multiply(a, b), c), [a, b, c])
    # Fusion across a Convert: u8 pixels normalised per channel in f32, and an f32 chain
    # written as f16.
    a = param("a", ov.Type.u8)
    mean = ops.constant(np.linspace(100, 140, 64, dtype=np.float32).reshape([1, 64, 1, 1]))
    inv_std = ops.constant(np.linspace(0.015, 0.02, 64, dtype=np.float32).reshape([1, 64, 1, 1]))
    x = ops.multiply(ops.subtract(ops.convert(a, f32), mean), inv_std)
    w["u8 -> f32 (x-mean)*inv_std"] = model("u8_normalise", x, [a])
    a = param("a", f32)
    x = ops.convert(ops.add(ops.multiply(a, scale), bias), f16)
    w["f32 x*scale+bias -> f16"] = model("to_f16", x, [a])
    # A comparison ending a fused chain (a mask computed in one pass).
    a = param("a", f32)
    x = ops.greater(ops.add(ops.multiply(a, scale), bias), ops.constant(np.float32(0.25)))
    w["f32 x*scale+bias > 0.25 -> boolean"] = model("affine_greater", x, [a])
    # Select: a leaky ReLU written with a comparison (two groups: the mask, then Select over
    # a fused product), and a mask applied to scores (a lone Select, cond broadcast).
    a = param("a", f32)
    x = ops.select(ops.greater(a, ops.constant(np.float32(0))), a, ops.multiply(a, ops.constant(np.float32(0.1))))
    w["f32 select(a>0, a, a*0.1)"] = model("select_leaky", x, [a])
    a, m = param("a", f32), param("m", ov.Type.boolean, [1, 1, 64, 64])
    x = ops.select(m, a, ops.constant(np.float32(-np.inf)))
    w["f32 select(mask [1,1,64,64], a, -inf)"] = model("select_mask", x, [a, m])
    # Data movement (issue 19): the transposes of an attention block, and NCHW -> NHWC.
    a = param("a", f32, [1, 128, 12, 64])
    w["f32 transpose [1,128,12,64] (0,2,1,3)"] = model("transpose_heads", ops.transpose(a, ops.constant(np.array([0, 2, 1, 3], np.int64))), [a])
    a = param("a", f32, [1, 12, 128, 64])
    w["f32 transpose [1,12,128,64] (0,1,3,2)"] = model("transpose_keys", ops.transpose(a, ops.constant(np.array([0, 1, 3, 2], np.int64))), [a])
    a = param("a", f32)
    w["f32 transpose [64,64,64,64] (0,2,3,1)"] = model("transpose_nhwc", ops.transpose(a, ops.constant(np.array([0, 2, 3, 1], np.int64))), [a])
    # MatMul (issue 19): a square product of two inputs, and a transformer's linear layers
    # (activations × constant weights, as converted models hold them).
    a, b = param("a", f32, [512, 512]), param("b", f32, [512, 512])
    w["f32 matmul 512x512x512"] = model("matmul_square", ops.matmul(a, b, False, False), [a, b])
    rng = np.random.default_rng(19)
    a = param("a", f32, [1, 128, 768])
    wt = ops.constant(rng.standard_normal((768, 3072), dtype=np.float32) * 0.03)
    w["f32 linear [1,128,768]x[768,3072]"] = model("matmul_linear", ops.matmul(a, wt, False, False), [a])
    a = param("a", f32, [1, 128, 3072])
    wt = ops.constant(rng.standard_normal((768, 3072), dtype=np.float32) * 0.03)
    w["f32 linear [1,128,3072]x[768,3072]^T"] = model("matmul_linear_t", ops.matmul(a, wt, False, True), [a])
    q, k = param("q", f32, [1, 12, 128, 64]), param("k", f32, [1, 12, 128, 64])
    w["f32 attention scores q x k^T [1,12,128,64]"] = model("matmul_scores", ops.matmul(q, k, False, True), [q, k])
    # Softmax, normalisation, reductions, Concat and Gather (issue 19).
    a = param("a", f32, [1, 12, 128, 128])
    w["f32 softmax [1,12,128,128] last axis"] = model("softmax_scores", ops.softmax(a, -1), [a])
    a = param("a", f32, [64, 64, 64, 64])
    w["f32 softmax [64,64,64,64] axis 1"] = model("softmax_channels", ops.softmax(a, 1), [a])
    a = param("a", f32, [8, 128, 768])
    w["f32 mvn [8,128,768] last axis"] = model("mvn_rows", ops.mvn(a, ops.constant(np.array([-1], np.int64)), True, 1e-5, "inside_sqrt"), [a])
    a = param("a", f32)
    w["f32 reduce_mean [64,64,64,64] last axis"] = model("reduce_mean_last", ops.reduce_mean(a, ops.constant(np.array([-1], np.int64)), True), [a])
    a = param("a", f32)
    w["f32 reduce_sum [64,64,64,64] axis 1"] = model("reduce_sum_channels", ops.reduce_sum(a, ops.constant(np.array([1], np.int64)), False), [a])
    a = param("a", f32)
    w["f32 reduce_max [64,64,64,64] axes 2,3"] = model("reduce_max_spatial", ops.reduce_max(a, ops.constant(np.array([2, 3], np.int64)), True), [a])
    a, b = param("a", f32, [64, 32, 64, 64]), param("b", f32, [64, 32, 64, 64])
    w["f32 concat 2x[64,32,64,64] axis 1"] = model("concat_channels", ops.concat([a, b], 1), [a, b])
    idx = param("idx", i32, [8, 512])
    table = ops.constant(np.random.default_rng(5).standard_normal((30522, 768), dtype=np.float32))
    w["f32 gather embeddings [30522,768] by [8,512]"] = model("gather_embeddings", ops.gather(table, idx, ops.constant(np.int64(0))), [idx])
    q, k, v = param("q", f32, [1, 12, 128, 64]), param("k", f32, [1, 12, 128, 64]), param("v", f32, [1, 12, 128, 64])
    w["f32 sdpa causal [1,12,128,64]"] = model("sdpa_causal", ops.scaled_dot_product_attention(q, k, v, causal=True), [q, k, v])
    # Convolution, pooling and resizing (issue 20).
    rng = np.random.default_rng(20)
    x = param("x", f32, [1, 64, 56, 56])
    wt = ops.constant((rng.standard_normal((64, 64, 3, 3)) * 0.05).astype(np.float32))
    w["f32 conv 3x3 64->64 [1,64,56,56]"] = model("conv3x3", ops.convolution(x, wt, [1, 1], [1, 1], [1, 1], [1, 1]), [x])
    x = param("x", f32, [1, 256, 56, 56])
    wt = ops.constant((rng.standard_normal((64, 256, 1, 1)) * 0.05).astype(np.float32))
    w["f32 conv 1x1 256->64 [1,256,56,56]"] = model("conv1x1", ops.convolution(x, wt, [1, 1], [0, 0], [0, 0], [1, 1]), [x])
    x = param("x", f32, [1, 144, 56, 56])
    wt = ops.constant((rng.standard_normal((144, 1, 1, 3, 3)) * 0.2).astype(np.float32))
    w["f32 depthwise 3x3 [1,144,56,56]"] = model("depthwise3x3", ops.group_convolution(x, wt, [1, 1], [1, 1], [1, 1], [1, 1]), [x])
    x = param("x", f32, [1, 64, 112, 112])
    w["f32 maxpool 3x3 s2 [1,64,112,112]"] = model("maxpool", ops.max_pool(x, [2, 2], [1, 1], [1, 1], [1, 1], [3, 3]).output(0), [x])
    x = param("x", f32, [1, 256, 28, 28])
    w["f32 avgpool 3x3 s1 [1,256,28,28]"] = model("avgpool", ops.avg_pool(x, [1, 1], [1, 1], [1, 1], [3, 3], False), [x])
    x = param("x", f32, [1, 64, 80, 80])
    w["f32 resize x2 linear [1,64,80,80]"] = model("resize_linear", ops.interpolate(
        x, ops.constant(np.array([2.0, 2.0], np.float32)), "linear", "scales",
        axes=ops.constant(np.array([2, 3], np.int64))), [x])
    return w


# Whole models (issue 20): the f32 IRs tests/differential/cnn.py builds into target/cnn.
BENCH_MODELS = ["resnet50_random", "squeezenet_random", "shufflenet_random", "densenet121_random",
                "inception_v1_random", "ocr_det", "ocr_rec", "ocr_cls", "magika"]


def model_ir(name):
    sys.path.insert(0, str(ROOT / "tests" / "differential"))
    import cnn
    cache = ROOT / "target" / "cnn"
    [(n, m, shape, _)] = cnn.prepare(cache, [name])
    return cnn.ir_for(cache, n, m, shape, "f32")


def ovir_median(ovir, xml, threads, seconds):
    out = subprocess.run(
        [ovir, "bench", str(xml), "--threads", str(threads), "-t", str(seconds), "--format", "json"],
        check=True, capture_output=True, text=True,
    ).stdout
    return json.loads(out)["latency"]["median_ms"]


def ov_median(xml, threads, seconds):
    app = shutil.which("benchmark_app") or str(Path(sys.executable).parent / "benchmark_app")
    out = subprocess.run(
        [app, "-m", str(xml), "-d", "CPU", "-hint", "none", "-nstreams", "1", "-api", "sync", "-nthreads", str(threads),
         "-t", str(max(1, round(seconds))), "-infer_precision", "f32"],
        check=True, capture_output=True, text=True,
    ).stdout
    m = re.search(r"Median:\s+([0-9.]+) (ms|us)", out)
    if not m:
        raise RuntimeError("benchmark_app printed no median:\n" + out)
    return float(m.group(1)) / (1000.0 if m.group(2) == "us" else 1.0)


def build_floor():
    """Compiles benches/floor.c; None (with a note) where that cannot be done or run here."""
    exe = ROOT / "target" / "floor"
    try:
        subprocess.run(["gcc", "-O3", "-march=native", "-fopenmp", str(ROOT / "benches" / "floor.c"), "-o", str(exe)],
                       check=True, capture_output=True, text=True)
        subprocess.run([str(exe), "1", "no such workload"], check=True, capture_output=True, text=True)
    except (OSError, subprocess.CalledProcessError) as e:
        print(f"(no C floors: {getattr(e, 'stderr', '') or e})".strip())
        return None
    return exe


def floor_median(exe, name, threads):
    out = subprocess.run([str(exe), str(threads), name], check=True, capture_output=True, text=True).stdout
    for line in out.splitlines():
        n, ms = line.split("\t")
        if n == name:
            return float(ms)
    return None


def peak_rss_kib(cmd):
    """The peak RSS of `cmd`. Measured by /usr/bin/time where there is one: a child forked from
    this process (which holds OpenVINO, some 300 MiB) keeps that size as its ru_maxrss across
    exec, so wait4's figure would be this process's, not the command's."""
    if Path("/usr/bin/time").exists():
        p = subprocess.run(["/usr/bin/time", "-f", "%M", *cmd], stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, text=True)
        if p.returncode != 0:
            raise RuntimeError(f"{cmd} failed: {p.stderr[-2000:]}")
        return int(p.stderr.strip().splitlines()[-1])
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(p.pid, 0)
    if status != 0:
        raise RuntimeError(f"{cmd} failed")
    return usage.ru_maxrss


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ovir", default=str(ROOT / "target" / "release" / "ovir"))
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--only", default=None,
                    help="run the workloads whose name contains this (several: separated by commas)")
    ap.add_argument("--repeat", type=int, default=1,
                    help="measure each pair this many times, alternating, and keep the median of each side")
    ap.add_argument("--no-floor", action="store_true", help="do not build and measure benches/floor.c")
    args = ap.parse_args()
    floor = None if args.no_floor else build_floor()
    OUT.mkdir(parents=True, exist_ok=True)
    rows = []
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    print(f"CPU: {cpu}, {os.cpu_count()} cores; OpenVINO {ov.__version__}; {args.seconds} s per measurement, "
          f"median of {max(1, args.repeat)}")
    print(f"{'workload':40} {'thr':>3} {'ovir ms':>9} {'OpenVINO ms':>11} {'OV/ovir':>8}"
          + (f" {'floor ms':>9} {'ovir/floor':>10}" if floor else ""))
    items = list(workloads().items()) + [(f"model {n}", None) for n in BENCH_MODELS]
    for name, m in items:
        if args.only and not any(part in name for part in args.only.split(",")):
            continue
        if m is None:
            xml = model_ir(name.removeprefix("model "))
        else:
            d = OUT / m.get_friendly_name()
            d.mkdir(exist_ok=True)
            xml = d / "model.xml"
            ov.save_model(m, str(xml), compress_to_fp16=False)
        for threads in (1, 2):
            mine, theirs, floors = [], [], []
            for _ in range(max(1, args.repeat)):
                mine.append(ovir_median(args.ovir, xml, threads, args.seconds))
                theirs.append(ov_median(xml, threads, args.seconds))
                if floor:
                    f = floor_median(floor, name, threads)
                    if f is not None:
                        floors.append(f)
            mine, theirs = statistics.median(mine), statistics.median(theirs)
            rows.append((name, threads, mine, theirs))
            line = f"{name:40} {threads:>3} {mine:>9.4f} {theirs:>11.4f} {theirs / mine:>8.2f}"
            if floors:
                f = statistics.median(floors)
                line += f" {f:>9.4f} {mine / f:>10.2f}"
            print(line, flush=True)
    if not args.only:
        by = {(n, t): mine for n, t, mine, _ in rows}
        for t in (1, 2):
            chain = by[("chain of 8 sub/div", t)] / by[("f32 sub, same shape", t)]
            div = by[("i32 floor division", t)] / by[("i32 sub (reference for floor division)", t)]
            print(f"{t} thread(s): chain of 8 / single sub = {chain:.2f}; i32 floor division / i32 sub = {div:.2f}")
        sample = ROOT / "ir_samples" / "int_divide"
        times = []
        for _ in range(20):
            t0 = time.perf_counter()
            subprocess.run([args.ovir, "run", str(sample / "model.xml"), "--inputs", str(sample / "inputs")],
                           check=True, capture_output=True)
            times.append((time.perf_counter() - t0) * 1e3)
        print(f"whole-process ovir run of ir_samples/int_divide: median {statistics.median(times):.2f} ms")
        big = OUT / "sub" / "model.xml"
        rss = peak_rss_kib([args.ovir, "run", str(big), "--random-inputs", "-o", str(OUT / "sub" / "out")])
        io = 3 * 64 ** 4 * 4 / 1024
        print(f"peak RSS of ovir run on [64,64,64,64] f32 sub: {rss / 1024:.0f} MiB "
              f"(inputs + output = {io / 1024:.0f} MiB, ratio {rss / io:.2f})")
        xml = model_ir("resnet50_random")
        net = ov.Core().read_model(str(xml))
        weights = xml.with_suffix(".bin").stat().st_size
        act = max(o.get_element_type().size * int(np.prod(list(o.get_shape())))
                  for op in net.get_ops() if op.get_type_name() != "Constant" for o in op.outputs())
        rss = peak_rss_kib([args.ovir, "run", str(xml), "--random-inputs", "-o", str(xml.parent / "out")]) * 1024
        bound = weights + 2 * act
        print(f"peak RSS of ovir run on resnet50: {rss / 2**20:.0f} MiB; weights {weights / 2**20:.0f} MiB + "
              f"2 x largest activation {act / 2**20:.1f} MiB = {bound / 2**20:.0f} MiB (ratio {rss / bound:.2f})")


if __name__ == "__main__":
    main()
