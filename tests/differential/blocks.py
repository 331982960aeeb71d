#!/usr/bin/env python3
"""End-to-end check of real blocks and whole models: ovir's outputs against a float64 reference
and independent oracles, within documented tolerances.

    .venv/bin/python tests/differential/blocks.py --ovir target/release/ovir [--only NAME]
                     [--skip-blocks] [--skip-onnx] [--keep DIR]

1. Blocks (ir_samples/real/blocks: layernorm_, mha_, encoder_, encoder_tanh_, decoder_, each
   _static/_dynamic/_interval and their _fp16 twins; preprocess_ and new_user_, which hold
   Convolutions, are checked by tests/differential/cnn.py --only blocks against the same
   F64Interpreter and the CPU plugin). Each model is read with OpenVINO and run on seeded random inputs, at the
   static shape or, for dynamic and interval dims, at several concrete sizes (dynamic: B=2 S=5 and
   B=1 S=1; interval: the lower bounds, B=3 S=7 and the upper bounds). The oracles:
     f64   a small numpy interpreter of the ov.Model graph (F64Interpreter below) computing every
           float in float64 from the op attributes (f16 Consts decompressed exactly), integers as
           integers: the exact answer up to float64 rounding.
     cpu   OpenVINO's CPU plugin with INFERENCE_PRECISION_HINT=f32 (a tolerance reference, not
           an exactness oracle).
     ovref OpenVINO's reference evaluation: the Parameters replaced by Constants and the graph
           constant-folded (as ir_samples/generate.py fold_with_reference does). Where OpenVINO
           does not fold an op (it has no evaluate for it), the line says so and that comparison
           is skipped; it is not a failure.
   Inputs: x standard normal; `attention_mask` of the encoder (f32, additive) is 0 on kept keys
   and float32's lowest value on padded ones (each batch row keeps a random prefix of at least
   one key, as a tokenizer's padding mask does); of encoder_tanh (boolean) random, 80% true.
   A block also must pass `ovir check` (exit 0) and, before ovir is judged, the f64 interpreter
   must agree with the CPU plugin within LOOSE (so a bug in this script shows as such).

2. ONNX pytorch-converted and pytorch-operator tests shipped in the onnx wheel
   (onnx/backend/test/data/pytorch-*/*/model.onnx with test_data_set_0). Each is converted with
   ov.convert_model and saved (f32, no compression) into a scratch folder; a model whose IR holds
   an op `ovir check --format json` lists as unimplemented is listed "not run". The others run
   on the test's inputs and are compared with (a) the test's expected outputs (PyTorch's) and
   (b) ONNX Runtime on the original model.onnx (onnx.reference where onnxruntime has no kernel
   for a legacy opset-6 op; the line says which). The CPU plugin's error is printed too.

Tolerances. An element passes when |got - ref| <= ATOL + RTOL * |ref|, with ATOL = 1e-5 and
RTOL = 1e-4: a float32 computation of these blocks, whose outputs are O(1). Measured with
openvino 2026.4.1 over all 60 block cases (seeds 0, 7, 123): ovir is within 2.0e-6 absolute
and 1.2e-5 relative of the float64 reference, the CPU plugin within 2.0e-6 / 1.6e-5 and
OpenVINO's reference evaluation within 1.8e-6 / 1.2e-5; the worst element of each uses 10%
(ovir), 14% (CPU) and 10% (reference evaluation) of its bound, so the bound leaves a margin of
about 10x for other summation orders and vector code, and is still well below what a wrong op
gives (a softmax scaled by 1.01 moves the mha output by 1e-2, a tanh Gelu in place of erf the
encoder by 4e-4, a non-causal SDPA the decoder by 3). The relative error printed is
|got - ref| / max(|ref|, FLOOR) with FLOOR = ATOL / RTOL = 0.1, the magnitude where the two
terms of the bound are equal, so a "rel" below RTOL means within the bound (up to a factor 2).
Between ovir and OpenVINO's reference evaluation the bound is doubled (both are float32
computations, each within the bound of the exact value). The f64 interpreter must agree with
the CPU plugin and the reference evaluation within LOOSE_ATOL + LOOSE_RTOL * |ref| (both 1e-4,
50x what is measured): that validates the interpreter, not ovir; it catches the Gelu mix-up
above, which a 1e-3 bound would not.
The ONNX tests use the same ATOL/RTOL against PyTorch's expected outputs and the ONNX oracle
(both float32 computations; measured: ovir within 4.8e-7 absolute and 1.2e-6 relative of
PyTorch, within 9.5e-7 absolute (an exp output of ~8, 1.1e-7 relative) of ONNX Runtime).
Integer and boolean outputs must be equal. The CPU plugin is printed for the ONNX tests but
not judged; it has no value for the f64 tests (it computes f64 in f32, and those tests' inputs
are PyTorch's uninitialised memory, denormals and 1e198s, which it flushes or overflows).

Exit 1 if a block or model that ovir can run (no unimplemented op) fails its tolerance, if ovir
errs or crashes on one, if `ovir check` does not exit 0 on one, or if the f64 interpreter
disagrees with the CPU plugin or the reference evaluation; 0 otherwise. Failing cases are
copied (model, inputs, ovir's outputs, the f64 reference) to --keep (default
target/blocks-failures) with a command line to reproduce them.
"""

import argparse
import glob
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

os.environ.setdefault("CI", "true")  # openvino-telemetry otherwise waits for the network at exit

import openvino as ov  # noqa: E402
import openvino.opset13 as ops  # noqa: E402
from openvino import passes  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "ir_samples"))
from generate import output_file_names, safe_stem  # noqa: E402  (ovir's io::npy file naming, written once)
BLOCKS_DIR = ROOT / "ir_samples" / "real" / "blocks"
BLOCK_PREFIXES = ("layernorm_", "mha_", "encoder_", "encoder_tanh_", "decoder_")

ATOL = 1e-5
RTOL = 1e-4
FLOOR = ATOL / RTOL
LOOSE_ATOL = 1e-4
LOOSE_RTOL = 1e-4
RUN_TIMEOUT = 600  # seconds for one `ovir run`

# Layout of the blocks' inputs: which dims are the batch (B) and the sequence (S).
INPUT_DIMS = {"x": ("B", "S", None), "attention_mask": ("B", None, None, "S")}
# Concrete sizes for dynamic dims: "lo" and "hi" stand for an interval's bounds.
DYNAMIC_CASES = [{"B": 2, "S": 5}, {"B": 1, "S": 1}]
INTERVAL_CASES = [{"B": "lo", "S": "lo"}, {"B": 3, "S": 7}, {"B": "hi", "S": "hi"}]


# ----------------------------------------------------------------------------------------------
# The float64 reference: a numpy interpreter of an ov.Model.


class Unsupported(Exception):
    pass


def _storage(t):
    """numpy dtype the interpreter keeps values of element type t in."""
    if t.is_real():
        return np.float64
    if t == ov.Type.boolean:
        return np.bool_
    return np.dtype(t.to_dtype())


def _axis(a, rank):
    a = int(a)
    return a + rank if a < 0 else a


def _axes(v, rank):
    return sorted({_axis(a, rank) for a in np.asarray(v).reshape(-1)})


def _erf(x):
    return np.frompyfunc(math.erf, 1, 1)(x).astype(np.float64)


def _softmax(x, axis):
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    e = np.exp(x - m)
    return e / np.sum(e, axis=axis, keepdims=True)


def _matmul(a, b, ta, tb):
    if ta and a.ndim >= 2:
        a = np.swapaxes(a, -1, -2)
    if tb and b.ndim >= 2:
        b = np.swapaxes(b, -1, -2)
    return np.matmul(a, b)


def _reshape(x, target, special_zero):
    shape = [int(v) for v in np.asarray(target).reshape(-1)]
    if special_zero:
        shape = [x.shape[i] if v == 0 else v for i, v in enumerate(shape)]
    return x.reshape(shape)


def _gather(data, idx, axis, batch_dims):
    axis = _axis(axis, data.ndim)
    batch_dims = _axis(batch_dims, idx.ndim) if batch_dims < 0 else int(batch_dims)
    idx = np.where(idx < 0, idx + data.shape[axis], idx)
    if batch_dims == 0:
        return np.take(data, idx, axis=axis)
    batch = data.shape[:batch_dims]
    parts = [np.take(data[b], idx[b], axis=axis - batch_dims) for b in np.ndindex(*batch)]
    inner = np.take(np.zeros(data.shape[batch_dims:]), np.zeros(idx.shape[batch_dims:], dtype=np.int64),
                    axis=axis - batch_dims).shape
    return np.stack(parts).reshape(tuple(batch) + inner) if parts else np.zeros(tuple(batch) + inner, data.dtype)


def _slice(x, start, stop, step, axes=None):
    start, stop, step = (np.asarray(v).reshape(-1) for v in (start, stop, step))
    axes = range(len(start)) if axes is None else [_axis(a, x.ndim) for a in np.asarray(axes).reshape(-1)]
    key = [slice(None)] * x.ndim
    for a, s, e, k in zip(axes, start, stop, step):
        key[a] = slice(int(s), int(e), int(k))
    return x[tuple(key)]


def _sdpa(q, k, v, mask, scale, causal):
    """ScaledDotProductAttention-13 as its spec's pseudo-code says."""
    if scale is None:
        scale = 1.0 / math.sqrt(q.shape[-1])
    L, S = q.shape[-2], k.shape[-2]
    bias = np.zeros((L, S))
    if causal:
        bias = np.where(np.tril(np.ones((L, S), dtype=bool)), 0.0, -np.inf)
    elif mask is not None:
        if mask.dtype == np.bool_:
            bias = np.where(mask, 0.0, -np.inf)
        else:
            bias = bias + mask
    w = np.matmul(q, np.swapaxes(k, -1, -2)) * scale + bias
    return np.matmul(_softmax(w, -1), v)


def _convolution(x, w, at):
    """Convolution-1 in float64 (explicit and valid pads only)."""
    if at["auto_pad"].lower() not in ("explicit", "notset", "valid"):
        raise Unsupported(f"Convolution auto_pad {at['auto_pad']}")
    nsp = x.ndim - 2
    valid = at["auto_pad"].lower() == "valid"
    pb = [0] * nsp if valid else list(at["pads_begin"])
    pe = [0] * nsp if valid else list(at["pads_end"])
    s, dl = list(at["strides"]), list(at["dilations"])
    x = np.pad(x.astype(np.float64), [(0, 0), (0, 0)] + [(b, e) for b, e in zip(pb, pe)])
    k = w.shape[2:]
    out_sp = [(x.shape[2 + i] - ((k[i] - 1) * dl[i] + 1)) // s[i] + 1 for i in range(nsp)]
    out = np.zeros((x.shape[0], w.shape[0], *out_sp))
    for taps in np.ndindex(*k):
        idx = tuple(slice(t * dl[i], t * dl[i] + (out_sp[i] - 1) * s[i] + 1, s[i]) for i, t in enumerate(taps))
        patch = x[(slice(None), slice(None)) + idx]  # [N, C_IN, out...]
        out += np.einsum("nc...,oc->no...", patch, w[(slice(None), slice(None)) + taps].astype(np.float64))
    return out


def _interpolate(op, a, at):
    """Interpolate-4/11 in float64: mode linear without antialias (the triangle filter, which away
    from the edges is linear interpolation and at them repeats the edge), half_pixel or
    asymmetric coordinates, `sizes` given."""
    if at["mode"] != "linear" or at["antialias"] or any(at["pads_begin"]) or any(at["pads_end"]):
        raise Unsupported(f"Interpolate {at['mode']} antialias={at['antialias']}")
    x = a[0].astype(np.float64)
    v11 = op.get_type_info().version_id == "opset11"
    has_axes = len(a) == (3 if v11 else 4)
    axes = [int(v) % x.ndim for v in a[-1].reshape(-1)] if has_axes else list(range(x.ndim))
    if at["shape_calculation_mode"] != "sizes":
        raise Unsupported("Interpolate by scales")
    sizes = [int(v) for v in a[1].reshape(-1)]
    for ax, n_out in zip(axes, sizes):
        n_in = x.shape[ax]
        if n_in == n_out:
            continue
        scale = n_out / n_in
        o = np.arange(n_out, dtype=np.float64)
        mode = at["coordinate_transformation_mode"]
        if mode == "half_pixel":
            c = (o + 0.5) / scale - 0.5
        elif mode == "asymmetric":
            c = o / scale
        else:
            raise Unsupported(f"Interpolate coordinates {mode}")
        c = np.clip(c, 0, n_in - 1)
        lo = np.floor(c).astype(np.int64)
        hi = np.minimum(lo + 1, n_in - 1)
        f = c - lo
        shape = [1] * x.ndim
        shape[ax] = n_out
        f = f.reshape(shape)
        x = np.take(x, lo, axis=ax) * (1 - f) + np.take(x, hi, axis=ax) * f
    return x


BINARY = {
    "Add": np.add, "Subtract": np.subtract, "Multiply": np.multiply, "Power": np.power,
    "Maximum": np.maximum, "Minimum": np.minimum,
    "SquaredDifference": lambda a, b: (a - b) * (a - b),
}
UNARY = {
    "Sqrt": np.sqrt, "Negative": np.negative, "Exp": np.exp, "Tanh": np.tanh, "Abs": np.abs,
    "Relu": lambda x: np.maximum(x, 0), "Sigmoid": lambda x: 1.0 / (1.0 + np.exp(-x)), "Erf": _erf,
}


class F64Interpreter:
    """Evaluates an ov.Model op by op in numpy: floats in float64, integers in their own type."""

    def run(self, model, inputs):
        """inputs: {parameter friendly name: array}. Returns the Results' values in order."""
        values = {}

        def arg(op, i):
            src = op.input(i).get_source_output()
            return values[(src.get_node().get_name(), src.get_index())]

        for op in model.get_ordered_ops():
            name = op.get_type_name()
            args = [arg(op, i) for i in range(op.get_input_size())]
            with np.errstate(all="ignore"):
                outs = self.eval(op, name, args, inputs)
            if not isinstance(outs, list):
                outs = [outs]
            for i, o in enumerate(outs):
                t = op.get_output_element_type(i)
                values[(op.get_name(), i)] = np.asarray(o).astype(_storage(t), copy=False)
        return [values[(r.get_name(), 0)] for r in model.get_results()]

    def eval(self, op, name, a, inputs):
        at = op.get_attributes()
        out_t = op.get_output_element_type(0)
        if name == "Parameter":
            return np.asarray(inputs[op.get_friendly_name()])
        if name == "Constant":
            return np.array(op.get_data())
        if name == "Result":
            return a[0]
        if name == "Convert":
            # Floats stay float64 (f16 -> f32 decompression is exact); integers convert.
            if out_t.is_real():
                return a[0].astype(np.float64)
            if a[0].dtype.kind == "f":
                return np.trunc(a[0]).astype(_storage(out_t))
            return a[0].astype(_storage(out_t))
        if name in BINARY:
            assert at.get("auto_broadcast", "numpy") in ("numpy", "none"), at
            r = BINARY[name](a[0], a[1])
            return r if out_t.is_real() else r.astype(_storage(out_t))
        if name == "Divide":
            if out_t.is_real():
                return a[0] / a[1]
            if at.get("m_pythondiv", True):
                return np.floor_divide(a[0], a[1])
            return (np.sign(a[0]) * np.sign(a[1]) * (np.abs(a[0]) // np.abs(a[1]))).astype(a[0].dtype)
        if name in UNARY:
            return UNARY[name](a[0])
        if name == "Swish":
            beta = float(a[1].reshape(-1)[0]) if len(a) > 1 else 1.0
            return a[0] / (1.0 + np.exp(-beta * a[0]))
        if name == "Gelu":
            x = a[0]
            mode = at.get("approximation_mode", "ERF").upper()
            if mode == "ERF":
                return 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)))
            if mode == "TANH":
                return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))
            raise Unsupported(f"Gelu mode {mode}")
        if name == "MVN":
            if op.get_type_info().version_id != "opset6":
                raise Unsupported("MVN-" + op.get_type_info().version_id)
            x = a[0]
            axes = tuple(_axes(a[1], x.ndim))
            d = x - np.mean(x, axis=axes, keepdims=True)
            if not at["normalize_variance"]:
                return d
            var = np.mean(d * d, axis=axes, keepdims=True)
            eps = float(at["eps"])
            if at["eps_mode"].upper() == "INSIDE_SQRT":
                return d / np.sqrt(var + eps)
            return d / (np.sqrt(var) + eps)
        if name == "MatMul":
            return _matmul(a[0], a[1], at["transpose_a"], at["transpose_b"])
        if name == "Reshape":
            return _reshape(a[0], a[1], at["special_zero"])
        if name == "Transpose":
            perm = [int(p) for p in a[1].reshape(-1)]
            return np.transpose(a[0], perm if perm else None)
        if name == "Concat":
            return np.concatenate(a, axis=_axis(at["axis"], a[0].ndim))
        if name == "Gather":
            return _gather(a[0], a[1], int(a[2].reshape(-1)[0]), at.get("batch_dims", 0))
        if name == "ShapeOf":
            return np.array(a[0].shape, dtype=_storage(out_t))
        if name == "Unsqueeze":
            rank = a[0].ndim + a[1].size
            shape = list(a[0].shape)
            for ax in _axes(a[1], rank):
                shape.insert(ax, 1)
            return a[0].reshape(shape)
        if name == "Squeeze":
            if len(a) > 1:
                drop = set(_axes(a[1], a[0].ndim))
            else:
                drop = {i for i, d in enumerate(a[0].shape) if d == 1}
            return a[0].reshape([d for i, d in enumerate(a[0].shape) if i not in drop])
        if name == "Slice":
            return _slice(*a)
        if name == "VariadicSplit":
            axis = _axis(a[1].reshape(-1)[0], a[0].ndim)
            lengths = [int(v) for v in a[2].reshape(-1)]
            if -1 in lengths:
                lengths[lengths.index(-1)] = a[0].shape[axis] - (sum(lengths) + 1)
            return np.split(a[0], np.cumsum(lengths)[:-1], axis=axis)
        if name in ("ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd"):
            f = {"ReduceMean": np.mean, "ReduceSum": np.sum, "ReduceMax": np.max, "ReduceMin": np.min,
                 "ReduceProd": np.prod}[name]
            axes = tuple(_axes(a[1], a[0].ndim))
            if not axes:
                return a[0]
            return f(a[0], axis=axes, keepdims=at["keep_dims"])
        if name == "Softmax":
            return _softmax(a[0], _axis(at["axis"], a[0].ndim))
        if name == "Select":
            assert at.get("auto_broadcast", "numpy") in ("numpy", "none"), at
            return np.where(a[0].astype(bool), a[1], a[2])
        if name == "ScaledDotProductAttention":
            mask = a[3] if len(a) > 3 else None
            scale = float(a[4].reshape(-1)[0]) if len(a) > 4 else None
            return _sdpa(a[0], a[1], a[2], mask, scale, at.get("causal", False))
        if name == "Convolution":
            return _convolution(a[0], a[1], at)
        if name == "Interpolate":
            return _interpolate(op, a, at)
        raise Unsupported(f"{name}-{op.get_type_info().version_id}")


# ----------------------------------------------------------------------------------------------
# Errors and tolerances.


def errors(got, ref):
    """(max abs error, max relative error against max(|ref|, FLOOR), all within the bound)."""
    got = np.asarray(got)
    ref = np.asarray(ref)
    if got.shape != ref.shape:
        return None
    if ref.dtype.kind != "f" and got.dtype.kind != "f":
        same = bool(np.array_equal(got, ref))
        return (0.0 if same else math.inf, 0.0 if same else math.inf, same)
    g = got.astype(np.float64)
    r = ref.astype(np.float64)
    if g.size == 0:
        return (0.0, 0.0, True)
    both_nan = np.isnan(g) & np.isnan(r)
    same_inf = np.isinf(r) & (g == r)
    with np.errstate(invalid="ignore", over="ignore"):
        d = np.where(both_nan | same_inf, 0.0, np.abs(g - r))
        d = np.where(np.isnan(d), np.inf, d)
        rel = d / np.maximum(np.abs(np.where(np.isfinite(r), r, 0.0)), FLOOR)
        ok = bool(np.all(d <= ATOL + RTOL * np.abs(np.where(np.isfinite(r), r, 0.0))))
    return (float(d.max()), float(rel.max()), ok)


def within(got, ref, atol, rtol):
    got, ref = np.asarray(got, dtype=np.float64), np.asarray(ref, dtype=np.float64)
    if got.shape != ref.shape:
        return False
    with np.errstate(invalid="ignore"):
        return bool(np.all((np.abs(got - ref) <= atol + rtol * np.abs(ref)) | (np.isnan(got) & np.isnan(ref))))


def fmt(e):
    if e is None:
        return "shape differs"
    return f"{e[0]:.1e}/{e[1]:.1e}"


def worst(err_list):
    """Combines per-output errors into the model's (max abs, max rel, all ok)."""
    if any(e is None for e in err_list):
        return None
    return (max(e[0] for e in err_list), max(e[1] for e in err_list), all(e[2] for e in err_list))


# ----------------------------------------------------------------------------------------------
# Oracles from OpenVINO and ovir.


def cpu_plugin(core, model, inputs):
    compiled = core.compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    res = compiled({p.get_friendly_name(): inputs[p.get_friendly_name()] for p in model.get_parameters()})
    return [np.array(res[o]) for o in compiled.outputs]


def fold_with_reference(model, inputs):
    """OpenVINO's reference evaluation: Parameters replaced by Constants, the graph constant-folded.
    Returns (outputs, None), or (None, why) when some op was not folded."""
    m = model.clone()
    for p in list(m.get_parameters()):
        c = ops.constant(np.ascontiguousarray(inputs[p.get_friendly_name()]), dtype=p.get_element_type())
        for target in list(p.output(0).get_target_inputs()):
            target.replace_source_output(c.output(0))
        m.remove_parameter(p)
    # Own copies of the Consts (read from a .bin they share its memory map). An f16 Const feeding
    # a decompression Convert becomes the f32 Const it decompresses to (exact): ConstantFolding
    # keeps decompression Converts as they are.
    for node in m.get_ordered_ops():
        if node.get_type_name() == "Constant":
            fresh = ops.constant(np.array(node.get_data()), dtype=node.get_element_type())
            for target in list(node.output(0).get_target_inputs()):
                user = target.get_node()
                if (user.get_type_name() == "Convert" and node.get_element_type() == ov.Type.f16
                        and user.get_output_element_type(0) == ov.Type.f32):
                    f32 = ops.constant(np.array(node.get_data()).astype(np.float32), dtype=ov.Type.f32)
                    for t2 in list(user.output(0).get_target_inputs()):
                        t2.replace_source_output(f32.output(0))
                else:
                    target.replace_source_output(fresh.output(0))
    m.validate_nodes_and_infer_types()
    pm = passes.Manager()
    pm.register_pass(passes.ConstantFolding())
    pm.run_passes(m)
    outputs = []
    for r in m.get_results():
        node = r.input_value(0).get_node()
        if node.get_type_name() != "Constant":
            left = sorted({f"{op.get_type_name()}-{op.get_type_info().version_id.replace('opset', '')}"
                           for op in m.get_ordered_ops() if op.get_type_name() not in ("Constant", "Result")})
            # The ops OpenVINO could not fold are the first non-Constant ops: those fed only by Consts.
            stuck = sorted({f"{op.get_type_name()}-{op.get_type_info().version_id.replace('opset', '')}"
                            for op in m.get_ordered_ops()
                            if op.get_type_name() not in ("Constant", "Result")
                            and all(op.input(i).get_source_output().get_node().get_type_name() == "Constant"
                                    for i in range(op.get_input_size()))})
            return None, "not folded: " + ", ".join(stuck or left)
        outputs.append(np.array(node.get_data()))
    return outputs, None


def ovir_unimplemented(ovir, xml):
    """(exit code of `ovir check`, its diagnostics, the unimplemented op names)."""
    proc = subprocess.run([ovir, "check", "--format", "json", str(xml)], capture_output=True, text=True)
    try:
        doc = json.loads(proc.stdout)
    except json.JSONDecodeError:
        return proc.returncode, [proc.stderr.strip() or proc.stdout.strip()], []
    diags = [f"{d.get('severity', '')} {d.get('code', '')}: {d.get('message', '')}".strip()
             for d in doc.get("diagnostics", [])]
    return proc.returncode, diags, [u["op"] for u in doc.get("unimplemented", [])]


def run_ovir(ovir, xml, inputs, workdir):
    """Runs ovir on `inputs` ({Parameter layer name: array}); returns (outputs, error, command).
    The input and output names are the ones `ovir info` gives."""
    indir, outdir = workdir / "inputs", workdir / "ovir_out"
    indir.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run([ovir, "info", "--format", "json", str(xml)], capture_output=True, text=True)
    if proc.returncode != 0:
        return None, f"ovir info failed (exit {proc.returncode}): {proc.stderr.strip()[:2000]}", None
    info = json.loads(proc.stdout)
    cmd = [ovir, "run", str(xml), "-o", str(outdir)]
    for k, i in enumerate(info["inputs"]):
        v = inputs[i["layer"]]
        if safe_stem(i["name"]) == i["name"] and "=" not in i["name"]:
            np.save(indir / f"{i['name']}.npy", v)
        else:
            np.save(indir / f"input_{k}.npy", v)
            cmd += ["-i", f"{i['name']}={indir / f'input_{k}.npy'}"]
    cmd += ["--inputs", str(indir)]
    line = " ".join(cmd)
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=RUN_TIMEOUT)
    except subprocess.TimeoutExpired:
        return None, f"ovir did not finish in {RUN_TIMEOUT} s", line
    if proc.returncode != 0:
        kind = "failed" if proc.returncode in (1, 2) else "crashed"
        return None, f"ovir {kind} (exit {proc.returncode}): {proc.stderr.strip()[:2000]}", line
    outs = []
    for name in output_file_names([o["name"] for o in info["outputs"]]):
        if not (outdir / name).exists():
            return None, f"ovir wrote no {name}; it wrote {sorted(f.name for f in outdir.iterdir())}", line
        outs.append(np.load(outdir / name))
    return outs, None, line


def keep_failure(keep, name, workdir, xml, refs=None):
    dest = Path(keep) / name
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    for f in Path(xml).parent.iterdir():
        if f.suffix in (".xml", ".bin"):
            shutil.copy(f, dest / f.name)
    for sub in ("inputs", "ovir_out"):
        if (workdir / sub).exists():
            shutil.copytree(workdir / sub, dest / sub)
    if refs:
        (dest / "reference").mkdir()
        for k, v in enumerate(refs):
            np.save(dest / "reference" / f"output_{k}.npy", v)
    return dest


# ----------------------------------------------------------------------------------------------
# Blocks.


def concrete_cases(model):
    """[(label, {param name: shape})] for a block: the static shapes, or the dynamic dims picked
    from DYNAMIC_CASES / INTERVAL_CASES."""
    params = model.get_parameters()
    dynamic = any(p.get_partial_shape().is_dynamic for p in params)
    if not dynamic:
        shapes = {p.get_friendly_name(): [d.get_length() for d in p.get_partial_shape()] for p in params}
        return [("static", shapes)]
    interval = any(d.is_dynamic and (d.get_min_length() > 0 or d.get_max_length() >= 0)
                   for p in params for d in p.get_partial_shape())
    cases = []
    for picks in (INTERVAL_CASES if interval else DYNAMIC_CASES):
        shapes, label = {}, None
        for p in params:
            name = p.get_friendly_name()
            layout = INPUT_DIMS.get(name)
            ps = p.get_partial_shape()
            if layout is None or len(layout) != ps.rank.get_length():
                raise SystemExit(f"blocks.py: no layout known for input {name} {ps}; add it to INPUT_DIMS")
            shape = []
            for d, sym in zip(ps, layout):
                if d.is_static:
                    shape.append(d.get_length())
                    continue
                v = picks[sym]
                if v == "lo":
                    v = max(d.get_min_length(), 1)
                elif v == "hi":
                    v = d.get_max_length()
                if not (d.get_min_length() <= v and (d.get_max_length() < 0 or v <= d.get_max_length())):
                    raise SystemExit(f"blocks.py: {name} dim {d} cannot be {v}")
                shape.append(v)
            shapes[name] = shape
        label = "B=%d S=%d" % (shapes["x"][0], shapes["x"][1])
        cases.append((label, shapes))
    return cases


def block_inputs(model, shapes, seed):
    rng = np.random.default_rng(seed)
    inputs = {}
    for p in model.get_parameters():
        name, shape, t = p.get_friendly_name(), shapes[p.get_friendly_name()], p.get_element_type()
        if t == ov.Type.boolean:
            v = rng.random(shape) < 0.8
        elif name == "attention_mask":
            # Additive padding mask: 0 on the kept prefix of each batch row, float32's lowest
            # value on the padded tail (at least one key kept).
            B, S = shape[0], shape[-1]
            keep = rng.integers(1, S + 1, size=B)
            v = np.where(np.arange(S)[None, :] < keep[:, None], 0.0, np.finfo(np.float32).min)
            v = v.reshape(shape).astype(np.float32)
        elif t == ov.Type.f32:
            v = rng.standard_normal(shape).astype(np.float32)
        else:
            raise SystemExit(f"blocks.py: no input rule for {name} of type {t}")
        inputs[name] = v
    return inputs


def block_folders(only):
    out = []
    for d in sorted(BLOCKS_DIR.iterdir()):
        if d.name.startswith(BLOCK_PREFIXES) and (d / "model.xml").exists():
            if only and not any(o in d.name for o in only):
                continue
            out.append(d)
    return out


def run_blocks(args, core, scratch, rows, failures):
    interp = F64Interpreter()
    for d in block_folders(args.only):
        xml = d / "model.xml"
        model = core.read_model(str(xml))
        check_rc, diags, unimpl = ovir_unimplemented(args.ovir, xml)
        cases = concrete_cases(model)
        for ci, (label, shapes) in enumerate(cases):
            seed = args.seed + 1000 * ci + sum(map(ord, d.name.replace("_fp16", "")))
            inputs = block_inputs(model, shapes, seed)
            row = {"name": d.name, "case": label}
            rows.append(row)
            problems = []
            try:
                ref = interp.run(model, inputs)
            except Unsupported as e:
                row["status"] = "FAIL"
                failures.append((f"{d.name} [{label}]", [f"the f64 interpreter has no rule for {e}: add it"], None))
                print(block_line(row), flush=True)
                continue
            cpu = cpu_plugin(core, model, inputs)
            row["cpu_f64"] = worst([errors(c, r) for c, r in zip(cpu, ref)])
            if not all(within(c, r, LOOSE_ATOL, LOOSE_RTOL) for c, r in zip(cpu, ref)):
                problems.append(f"the f64 interpreter and the CPU plugin disagree ({fmt(row['cpu_f64'])}): "
                                "a bug in blocks.py or in OpenVINO")
            folded, why = fold_with_reference(model, inputs)
            if folded is not None:
                row["ovref_f64"] = worst([errors(f, r) for f, r in zip(folded, ref)])
                if not all(within(f, r, LOOSE_ATOL, LOOSE_RTOL) for f, r in zip(folded, ref)):
                    problems.append("the f64 interpreter and OpenVINO's reference evaluation disagree")
            row["ovref_note"] = why
            if check_rc != 0:
                problems.append(f"ovir check exited {check_rc}: {'; '.join(diags)[:500]}")
            if unimpl:
                row["status"] = "not run"
                row["note"] = "unimplemented " + ", ".join(unimpl)
                if problems:
                    row["status"] = "FAIL"
                    failures.append((f"{d.name} [{label}]", problems, None))
                print(block_line(row), flush=True)
                continue
            work = scratch / f"{d.name}-{ci}"
            got, err, _ = run_ovir(args.ovir, xml, inputs, work)
            if err:
                problems.append(err)
            else:
                row["ovir_f64"] = worst([errors(g, r) for g, r in zip(got, ref)])
                row["ovir_cpu"] = worst([errors(g, c) for g, c in zip(got, cpu)])
                if row["ovir_f64"] is None or not row["ovir_f64"][2]:
                    problems.append(f"ovir vs the f64 reference: max abs/rel {fmt(row['ovir_f64'])} exceeds "
                                    f"atol {ATOL} + rtol {RTOL}*|ref|")
                if folded is not None:
                    row["ovir_ovref"] = worst([errors(g, f) for g, f in zip(got, folded)])
                    if not all(within(g, f, 2 * ATOL, 2 * RTOL) for g, f in zip(got, folded)):
                        problems.append(f"ovir vs OpenVINO's reference evaluation: {fmt(row['ovir_ovref'])} exceeds "
                                        f"2*atol + 2*rtol*|ref|")
            row["status"] = "FAIL" if problems else "ok"
            if problems:
                kept = keep_failure(args.keep, f"{d.name}-{ci}", work, xml, ref) if (work / "inputs").exists() else None
                failures.append((f"{d.name} [{label}]", problems,
                                 f"{args.ovir} run {kept}/model.xml --inputs {kept}/inputs" if kept else None))
            print(block_line(row), flush=True)


def block_line(row):
    if row.get("ovir_ovref"):
        ov_ref = fmt(row["ovir_ovref"])
    elif row.get("ovref_note"):
        ov_ref = row["ovref_note"]  # "not folded: <ops>"
    elif row.get("ovref_f64"):
        ov_ref = "folded (ref vs f64 %s)" % fmt(row["ovref_f64"])
    else:
        ov_ref = "-"
    return (f"{row['name']:<28} {row['case']:<11} {row['status']:<7} "
            f"vs f64 {fmt(row['ovir_f64']) if row.get('ovir_f64') else '-':<15} "
            f"vs cpu {fmt(row['ovir_cpu']) if row.get('ovir_cpu') else '-':<15} "
            f"vs ovref {ov_ref:<17} "
            f"(cpu vs f64 {fmt(row['cpu_f64']) if row.get('cpu_f64') else '-'})"
            + (f"  {row['note']}" if row.get("note") else ""))


# ----------------------------------------------------------------------------------------------
# ONNX pytorch-converted / pytorch-operator tests.


def onnx_tests(only):
    import onnx
    data = Path(onnx.__file__).parent / "backend" / "test" / "data"
    paths = sorted(glob.glob(str(data / "pytorch-converted" / "*" / "model.onnx")))
    paths += sorted(glob.glob(str(data / "pytorch-operator" / "*" / "model.onnx")))
    return [Path(p) for p in paths if not only or any(o in Path(p).parent.name for o in only)]


def load_pb(path):
    import onnx
    from onnx import numpy_helper
    t = onnx.TensorProto()
    t.ParseFromString(Path(path).read_bytes())
    return numpy_helper.to_array(t)


def onnx_oracle(path, feed):
    """ONNX Runtime on the original model; onnx.reference where onnxruntime has no kernel."""
    errs = []
    try:
        import onnxruntime as ort
        so = ort.SessionOptions()
        so.log_severity_level = 3  # no warnings about the legacy opset 6 on stderr
        sess = ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])
        return "ort", sess.run(None, feed), None
    except Exception as e:  # noqa: BLE001 - any failure falls back to onnx.reference
        errs.append("onnxruntime: " + str(e).strip().splitlines()[0][:200])
    try:
        from onnx.reference import ReferenceEvaluator
        return "onnx.reference", ReferenceEvaluator(str(path)).run(None, feed), "; ".join(errs)
    except Exception as e:  # noqa: BLE001
        errs.append("onnx.reference: " + str(e).strip().splitlines()[0][:200])
    return None, None, "; ".join(errs)


def run_onnx(args, core, scratch, rows, failures):
    import onnx
    for path in onnx_tests(args.only):
        test = path.parent.name
        row = {"name": test, "case": ""}
        rows.append(row)
        problems = []
        proto = onnx.load(str(path))
        inits = {i.name for i in proto.graph.initializer}
        in_names = [i.name for i in proto.graph.input if i.name not in inits]
        ds = path.parent / "test_data_set_0"
        in_vals = [load_pb(ds / f"input_{k}.pb") for k in range(len(list(ds.glob("input_*.pb"))))]
        expected = [load_pb(ds / f"output_{k}.pb") for k in range(len(list(ds.glob("output_*.pb"))))]
        feed = dict(zip(in_names, in_vals))
        work = scratch / f"onnx-{test}"
        work.mkdir(parents=True)
        try:
            model = ov.convert_model(str(path))
        except Exception as e:  # noqa: BLE001
            row["status"], row["note"] = "not run", "convert_model failed: " + str(e).splitlines()[0][:200]
            print(onnx_line(row), flush=True)
            continue
        xml = work / "model.xml"
        ov.save_model(model, str(xml), compress_to_fp16=False)
        model = core.read_model(str(xml))
        rc, diags, unimpl = ovir_unimplemented(args.ovir, xml)
        if unimpl:
            row["status"], row["note"] = "not run", "unimplemented " + ", ".join(unimpl)
            print(onnx_line(row), flush=True)
            continue
        if rc != 0:
            problems.append(f"ovir check exited {rc}: {'; '.join(diags)[:500]}")
        # Inputs by the IR's parameter names (the ONNX input names).
        inputs = {}
        by_tensor = {n: p for p in model.get_parameters() for n in p.output(0).get_names()}
        for n, v in feed.items():
            p = by_tensor.get(n)
            if p is None:
                problems.append(f"the IR has no input named {n} (convert_model dropped or renamed it)")
            else:
                inputs[p.get_friendly_name()] = v
        oracle, theirs, note = onnx_oracle(path, feed)
        if oracle == "onnx.reference":
            kernel = re.search(r"implementation for (\S+\(\d+\))", note)
            row["note"] = "ort*: onnx.reference (onnxruntime " + (
                "has no kernel for " + kernel.group(1) if kernel else "failed: " + note[:90]) + ")"
        elif oracle is None:
            row["note"] = "no ONNX oracle: " + note
        cpu = None
        if any(v.dtype == np.float64 for v in list(feed.values()) + expected):
            # The CPU plugin computes f64 in f32 (the tests' f64 inputs are uninitialised memory
            # from PyTorch, denormals and 1e198s, which it flushes or overflows): no reference.
            row["cpu_note"] = "n/a (f64)"
        elif len(inputs) == len(feed):
            try:
                cpu = cpu_plugin(core, model, inputs)
            except Exception as e:  # noqa: BLE001
                row["note"] = (row.get("note", "") + "; CPU plugin: " + str(e).splitlines()[0][:120]).lstrip("; ")
        got = None
        if len(inputs) == len(feed):
            got, err, _ = run_ovir(args.ovir, xml, inputs, work)
            if err:
                problems.append(err)
        if got is not None:
            if len(got) != len(expected):
                problems.append(f"ovir gave {len(got)} outputs, the test expects {len(expected)}")
            else:
                row["ovir_torch"] = worst([errors(g, e) for g, e in zip(got, expected)])
                if row["ovir_torch"] is None or not row["ovir_torch"][2]:
                    problems.append(f"ovir vs PyTorch's expected outputs: {fmt(row['ovir_torch'])} exceeds "
                                    f"atol {ATOL} + rtol {RTOL}*|ref|")
                if theirs is not None:
                    row["ovir_ort"] = worst([errors(g, np.asarray(t)) for g, t in zip(got, theirs)])
                    if row["ovir_ort"] is None or not row["ovir_ort"][2]:
                        problems.append(f"ovir vs {oracle}: {fmt(row['ovir_ort'])} exceeds "
                                        f"atol {ATOL} + rtol {RTOL}*|ref|")
                if cpu is not None:
                    row["ovir_cpu"] = worst([errors(g, c) for g, c in zip(got, cpu)])
        row["status"] = "FAIL" if problems else "ok"
        if problems:
            kept = keep_failure(args.keep, f"onnx-{test}", work, xml, expected)
            failures.append((test, problems, f"{args.ovir} run {kept}/model.xml --inputs {kept}/inputs"))
        print(onnx_line(row), flush=True)


def onnx_line(row):
    return (f"{row['name']:<48} {row['status']:<7} "
            f"vs torch {fmt(row['ovir_torch']) if row.get('ovir_torch') else '-':<15} "
            f"vs ort{'*' if 'onnx.reference' in row.get('note', '') else ' '} "
            f"{fmt(row['ovir_ort']) if row.get('ovir_ort') else '-':<15} "
            f"vs cpu {fmt(row['ovir_cpu']) if row.get('ovir_cpu') else row.get('cpu_note', '-'):<15}"
            + (f"  {row['note']}" if row.get("note") else ""))


# ----------------------------------------------------------------------------------------------


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ovir", default=str(ROOT / "target" / "release" / "ovir"), help="the ovir binary")
    ap.add_argument("--only", action="append", help="run only models whose name contains this (repeatable)")
    ap.add_argument("--skip-blocks", action="store_true")
    ap.add_argument("--skip-onnx", action="store_true")
    ap.add_argument("--seed", type=int, default=0, help="base seed of the random inputs")
    ap.add_argument("--keep", default=str(ROOT / "target" / "blocks-failures"), help="where failing cases are copied")
    args = ap.parse_args()
    if not Path(args.ovir).exists():
        print(f"blocks.py: no ovir binary at {args.ovir} (cargo build --release, or --ovir PATH)")
        return 1
    args.ovir = str(Path(args.ovir).resolve())
    core = ov.Core()
    start = time.time()
    rows, failures = [], []
    print(f"tolerance: |got - ref| <= {ATOL} + {RTOL}*|ref|; errors printed as max abs/max rel "
          f"(rel = |got - ref| / max(|ref|, {FLOOR:g}))")
    with tempfile.TemporaryDirectory(prefix="ovir-blocks-") as tmp:
        scratch = Path(tmp)
        if not args.skip_blocks:
            print("== blocks (ir_samples/real/blocks)")
            run_blocks(args, core, scratch, rows, failures)
        if not args.skip_onnx:
            print("== ONNX pytorch-converted and pytorch-operator tests")
            run_onnx(args, core, scratch, rows, failures)
    counts = {}
    for r in rows:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    print(f"\n{len(rows)} cases: {counts.get('ok', 0)} ok, {counts.get('FAIL', 0)} failed, "
          f"{counts.get('not run', 0)} not run (unimplemented ops); {time.time() - start:.1f} s")
    for name, problems, repro in failures:
        print(f"FAIL {name}")
        for p in problems:
            print(f"  {p}")
        if repro:
            print(f"  reproduce: {repro}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
