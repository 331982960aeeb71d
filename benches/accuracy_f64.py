"""The accuracy of ovir's f64 elementwise functions, in ulps of the exact result, on random and
edge inputs (an exhaustive run is out of reach for f64).

    python benches/accuracy_f64.py --ovir target/release/ovir [--count 20000] [function ...]

Inputs: edge values (±0, ±1, ±inf, NaN, subnormals, the overflow and underflow thresholds of
exp) and `count` random values spread over magnitudes 1e-30 to 1e30 (log-uniform, both signs)
and uniformly over −40..40 and −760..760 (where exponentials underflow). ovir runs them
through `ovir run` on a one-layer IR; the reference is the exact function from mpmath (200 bits) rounded to
f64. Prints the largest error in f64 ulps, how many results are not correctly rounded, and the
worst input; exits 1 when a function is not within 1 ulp (docs/accuracy.md).
"""

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

import mpmath as mp
import numpy as np
import openvino as ov
import openvino.opset13 as ops
from openvino.utils.node_factory import NodeFactory

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "ir_samples"))
import elementwise as ew  # noqa: E402

mp.mp.prec = 200

# Selu's alpha and lambda (its parameter inputs).
SELU = (1.6732632423543772, 1.0507009873554805)
# Parameter inputs (f64 constants) after the data.
PARAMS = {"selu": SELU}

# name: (opset, type, attributes, exact function on mpf (None: NaN), composed?)
FUNCTIONS = {
    "exp": ("opset1", "Exp", {}, ew.TRANSCENDENTAL["Exp"][0], False),
    "log": ("opset1", "Log", {}, ew.TRANSCENDENTAL["Log"][0], False),
    "sin": ("opset1", "Sin", {}, mp.sin, False),
    "cos": ("opset1", "Cos", {}, mp.cos, False),
    "tan": ("opset1", "Tan", {}, mp.tan, False),
    "asin": ("opset1", "Asin", {}, ew.TRANSCENDENTAL["Asin"][0], False),
    "acos": ("opset1", "Acos", {}, ew.TRANSCENDENTAL["Acos"][0], False),
    "atan": ("opset1", "Atan", {}, mp.atan, False),
    "sinh": ("opset1", "Sinh", {}, mp.sinh, False),
    "cosh": ("opset1", "Cosh", {}, mp.cosh, False),
    "tanh": ("opset1", "Tanh", {}, mp.tanh, False),
    "asinh": ("opset4", "Asinh", {}, mp.asinh, False),
    "acosh": ("opset4", "Acosh", {}, ew.TRANSCENDENTAL["Acosh"][0], False),
    "atanh": ("opset4", "Atanh", {}, ew.TRANSCENDENTAL["Atanh"][0], False),
    "erf": ("opset1", "Erf", {}, mp.erf, False),
    "sigmoid": ("opset1", "Sigmoid", {}, ew.sigmoid, True),
    "hsigmoid": ("opset5", "HSigmoid", {}, ew.hsig, True),
    "hswish": ("opset4", "HSwish", {}, lambda x: x * ew.hsig(x), True),
    "softplus": ("opset4", "SoftPlus", {}, ew.softplus, True),
    "softsign": ("opset9", "SoftSign", {}, lambda x: x / (1 + abs(x)), True),
    "mish": ("opset4", "Mish", {}, lambda x: x * mp.tanh(ew.softplus(x)), True),
    "swish": ("opset4", "Swish", {}, lambda x: x * ew.sigmoid(x), True),
    "elu": ("opset1", "Elu", {"alpha": 1.0}, lambda x: x if x > 0 else mp.expm1(x), True),
    "elu_0.3": ("opset1", "Elu", {"alpha": 0.3}, lambda x: x if x > 0 else mp.mpf(0.3) * mp.expm1(x), True),
    "selu": ("opset1", "Selu", {},
             lambda x: mp.mpf(SELU[1]) * (x if x > 0 else mp.mpf(SELU[0]) * mp.expm1(x)), True),
    "gelu_erf": ("opset7", "Gelu", {"approximation_mode": "erf"}, ew.gelu_erf, True),
    "gelu_tanh": ("opset7", "Gelu", {"approximation_mode": "tanh"}, ew.gelu_tanh, True),
}


def inputs(rng, count):
    edges = [0.0, 1.0, -1.0, 0.5, -0.5, 2.0, 1e-300, 5e-324, -5e-324, 2.2250738585072014e-308, 709.78, 709.79,
             -708.4, -745.1, 20.0, -20.0, 1e10, -1e10, 3.0, -3.0, -21.16, -37.5, 3.0000000000000004,
             -2.9999999999999996, 2.0 ** -28, -(2.0 ** -28), 1e5, -1e5]
    third = count // 3
    mag = 10.0 ** rng.uniform(-30, 30, third)
    wide = mag * rng.choice([-1.0, 1.0], third)
    near = rng.uniform(-40, 40, third)
    far = rng.uniform(-760, 760, count - 2 * third)
    return np.concatenate([np.array(edges), wide, near, far])


def ulps(got, want):
    """Distance in f64 ulps between finite doubles (by position on the ordered line)."""
    def order(v):
        b = np.asarray(v, dtype=np.float64).view(np.int64)
        return np.where(b < 0, -(b & 0x7FFFFFFFFFFFFFFF), b).astype(object)
    return [abs(int(a) - int(b)) for a, b in zip(order(got), order(want))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ovir", default=str(ROOT / "target" / "release" / "ovir"))
    ap.add_argument("--count", type=int, default=20000)
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("names", nargs="*")
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    x = inputs(rng, args.count)
    print(f"f64: {x.size} inputs per function (edges, log-uniform 1e-30..1e30, uniform -40..40 and -760..760); reference: mpmath 200 bits")
    print(f"{'function':<10} {'max ulps':>9} {'not nearest':>12} {'bound':>6}  worst input")
    bad = False
    for name in args.names or FUNCTIONS:
        opset, ty, attrs, f, composed = FUNCTIONS[name]
        p = ops.parameter([x.size], ov.Type.f64, name="x")
        p.output(0).get_tensor().set_names({"x"})
        params = [ops.constant(np.array([v], np.float64)).output(0) for v in PARAMS.get(name, ())]
        node = NodeFactory(opset).create(ty, [p.output(0), *params], attrs)
        node.output(0).get_tensor().set_names({"y"})
        with tempfile.TemporaryDirectory() as tmp:
            ov.save_model(ov.Model([ops.result(node)], [p], name), f"{tmp}/m.xml", compress_to_fp16=False)
            np.save(f"{tmp}/x.npy", x)
            subprocess.run([args.ovir, "run", f"{tmp}/m.xml", "-i", f"x={tmp}/x.npy", "-o", f"{tmp}/o"], check=True)
            y = np.load(f"{tmp}/o/y.npy")
        want = []
        for v in x:
            r = f(mp.mpf(float(v)))
            want.append(np.nan if r is None else float(r))
        want = np.array(want)
        ok = np.isfinite(want) & np.isfinite(y) & (np.abs(want) > 2.2250738585072014e-308)
        d = ulps(y[ok], want[ok])
        worst = int(np.argmax(d)) if d else 0
        bound = 1
        m = max(d) if d else 0
        bad |= m > bound
        print(f"{name:<10} {m:>9} {sum(1 for v in d if v):>12} {bound:>6}  {x[ok][worst] if d else 0!r}")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
