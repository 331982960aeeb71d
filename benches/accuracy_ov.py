"""The accuracy of OpenVINO's CPU plugin on the f32 functions that benches/accuracy.rs measures
for ovir, measured the same way: every `stride`-th f32 bit pattern (default 256: 2^24 values),
the error in ulps of the f32 result against the function in float64 (numpy, math.erf), at the
plugin's f32 inference precision.

    python benches/accuracy_ov.py [--stride 256] [function ...]

Prints one row per function: inputs, max ulps, results that are not the reference rounded to
nearest, NaN mismatches, the worst input. OpenVINO is not an oracle here: this is what the
docs/accuracy.md table sets beside ovir's figures.
"""

import argparse
import math
import time

import numpy as np
import openvino as ov
import openvino.opset13 as ops
from openvino.utils.node_factory import NodeFactory


def sigmoid(x):
    e = np.exp(-np.abs(x))
    return np.where(x < 0, e / (1 + e), 1 / (1 + e))


def softplus(x):
    return np.maximum(x, 0) + np.log1p(np.exp(-np.abs(x)))


def times(x, g):
    return np.where(g == 0, np.copysign(0.0, x), x * g)


def hsig(x):
    return np.clip(x + 3, 0, 6) / 6


ERF = np.vectorize(math.erf, otypes=[np.float64])
ERFC = np.vectorize(math.erfc, otypes=[np.float64])


def gelu_tanh(x):
    u = math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)
    d = 1 + np.exp(-2 * u)
    return np.where(np.isinf(d), np.copysign(0.0, x), x / d)


# name: (opset, op type, attributes, float64 reference)
FUNCTIONS = {
    "exp": ("opset1", "Exp", {}, np.exp),
    "log": ("opset1", "Log", {}, np.log),
    "sin": ("opset1", "Sin", {}, np.sin),
    "cos": ("opset1", "Cos", {}, np.cos),
    "tan": ("opset1", "Tan", {}, np.tan),
    "asin": ("opset1", "Asin", {}, np.arcsin),
    "acos": ("opset1", "Acos", {}, np.arccos),
    "atan": ("opset1", "Atan", {}, np.arctan),
    "sinh": ("opset1", "Sinh", {}, np.sinh),
    "cosh": ("opset1", "Cosh", {}, np.cosh),
    "tanh": ("opset1", "Tanh", {}, np.tanh),
    "asinh": ("opset4", "Asinh", {}, np.arcsinh),
    "acosh": ("opset4", "Acosh", {}, np.arccosh),
    "atanh": ("opset4", "Atanh", {}, np.arctanh),
    "erf": ("opset1", "Erf", {}, ERF),
    "sqrt": ("opset1", "Sqrt", {}, np.sqrt),
    "sigmoid": ("opset1", "Sigmoid", {}, sigmoid),
    "hsigmoid": ("opset5", "HSigmoid", {}, hsig),
    "hswish": ("opset4", "HSwish", {}, lambda x: times(x, hsig(x))),
    "softplus": ("opset4", "SoftPlus", {}, softplus),
    "softsign": ("opset9", "SoftSign", {}, lambda x: x / (1 + np.abs(x))),
    "mish": ("opset4", "Mish", {}, lambda x: times(x, np.tanh(softplus(x)))),
    "swish": ("opset4", "Swish", {}, lambda x: times(x, sigmoid(x))),
    "elu": ("opset1", "Elu", {"alpha": 1.0}, lambda x: np.where((x > 0) | np.isnan(x), x, np.expm1(x))),
    "gelu_erf": ("opset7", "Gelu", {"approximation_mode": "erf"}, lambda x: times(0.5 * x, ERFC(-x / math.sqrt(2)))),
    "gelu_tanh": ("opset7", "Gelu", {"approximation_mode": "tanh"}, gelu_tanh),
}


def ulp(r):
    a = np.minimum(np.abs(r), np.finfo(np.float32).max)
    e = np.floor(np.log2(np.maximum(a, np.finfo(np.float32).tiny)))
    return np.where(a < np.finfo(np.float32).tiny, 2.0 ** -149, 2.0 ** (e - 23))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--stride", type=int, default=256)
    ap.add_argument("names", nargs="*")
    args = ap.parse_args()
    names = args.names or list(FUNCTIONS)
    bits = (np.arange(0, (1 << 32) // args.stride, dtype=np.uint64) * args.stride).astype(np.uint32)
    x = bits.view(np.float32)
    core = ov.Core()
    print(f"OpenVINO {ov.__version__} CPU plugin, f32 inference precision; inputs: every {args.stride}th f32 bit pattern ({x.size} values); reference: float64")
    print(f"{'function':<10} {'inputs':>12} {'max ulps':>12} {'not nearest':>14} {'NaN mismatch':>13}  worst input")
    for name in names:
        opset, ty, attrs, ref = FUNCTIONS[name]
        p = ops.parameter([x.size], ov.Type.f32, name="x")
        node = NodeFactory(opset).create(ty, [p.output(0)], attrs)
        model = ov.Model([ops.result(node)], [p], name)
        compiled = core.compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
        start = time.time()
        y = np.asarray(compiled({0: x})[0]).reshape(-1)
        with np.errstate(all="ignore"):
            r = np.asarray(ref(x.astype(np.float64)), dtype=np.float64)
            nan_mismatch = int(np.sum(np.isnan(r) != np.isnan(y)))
            ok = ~np.isnan(r) & ~np.isnan(y)
            rr, yy, xx = r[ok], y[ok].astype(np.float64), x[ok]
            nearest = rr.astype(np.float32)
            not_nearest = int(np.sum((nearest != y[ok]) & ~((nearest == 0) & (y[ok] == 0))))
            finite = np.isfinite(rr) & np.isfinite(yy)
            err = np.where(finite, np.abs(yy - rr) / ulp(rr), np.where(nearest == y[ok], 0.0, np.inf))
        k = int(np.argmax(err)) if err.size else 0
        print(f"{name:<10} {x.size:>12} {err.max() if err.size else 0:>12.3f} {not_nearest:>14} {nan_mismatch:>13}  {xx[k] if err.size else 0:e}  ({time.time() - start:.1f} s)")


if __name__ == "__main__":
    main()
