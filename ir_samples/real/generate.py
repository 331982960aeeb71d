#!/usr/bin/env python3
"""Writes ir_samples/real/: a corpus of real OpenVINO IR files, written by OpenVINO itself.

    python3 -m venv .venv && .venv/bin/pip install openvino numpy onnx
    .venv/bin/python ir_samples/real/generate.py [--large] [--huge] [--out DIR] [--no-check]

(`pip install onnxruntime` too to compare the ONNX-converted models with onnxruntime during the
check; without it, or where onnxruntime lacks a legacy kernel, `onnx.reference` is used.)

Every model is written twice with `ov.save_model`: `<name>/model.xml` + `model.bin` with
`compress_to_fp16=False`, and `<name>_fp16/` with the default `compress_to_fp16=True` (f32
Consts stored as f16, each followed by a Convert marked `decompression`). OpenVINO writes a
`model.bin` even when the model has no Consts (0 bytes); it is kept as written.

Folders (relative to --out, default: this script's folder):

  ports/<case>/         tiny models showing how OpenVINO writes `<port>`/`<dim>` for scalar,
                        dynamic-rank, dynamic, interval and zero-size shapes (README, "How
                        OpenVINO writes ports").                                    committed
  blocks/<name>/        transformer/CNN blocks built with the opset Python API, seeded random
                        weights, each as `_static`, `_dynamic` (`?` batch and sequence) and
                        `_interval` (`1..8` batch, `1..64` sequence).               committed
  onnx_pytorch/<test>/  `ov.convert_model` of the ONNX backend test models
                        onnx/backend/test/data/pytorch-{converted,operator}/*/model.onnx
                        shipped in the `onnx` wheel.                                committed
  large/light_<net>/    `ov.convert_model` of onnx/backend/test/data/light/light_<net>.onnx
                        (resnet50, squeezenet, densenet121, inception_v1, inception_v2,
                        shufflenet): written only with --large; git-ignored.
                        With --huge also bvlc_alexnet, vgg19 and zfnet512 (~1.6 GB in all).
  manifest.json         for every model folder above (including the large ones, written or
                        not): source, committed or not, layer count, op histogram
                        ("Type/version": count), inputs and outputs with their shapes.

Determinism: weights come from seeded numpy generators, every node of the hand-built models is
named, and models are converted and written in a fixed order (OpenVINO names unnamed nodes
from a process-wide counter, e.g. `Constant_2340`, so the order matters; the committed models
are written before the large ones, so --large does not change them). Rerunning gives identical
files for a given OpenVINO version. The manifest describes the large models even without
--large: they are then serialised into a temporary folder (in /dev/shm when it has room) and
deleted, which costs a few seconds.

After writing, every folder written is checked with OpenVINO itself (skip with --no-check):
`core.read_model` of the written xml, `core.compile_model(m, "CPU")` with f32 inference
precision, and one inference on seeded random inputs (concrete shapes inside the bounds for
dynamic models; the CPU plugin cannot compile a dynamic rank, so those few are reshaped to the
concrete shapes first, and noted). ONNX models are also compared with onnxruntime (or
onnx.reference) on the same inputs, `_fp16` variants with their plain twin, and the
`_dynamic`/`_interval` blocks with their `_static` twin on the static shape. The script exits with status 1 if any check failed.
"""

import argparse
import glob
import json
import os
import shutil
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
import zlib
from collections import Counter
from pathlib import Path

import numpy as np
import onnx
import openvino as ov
import openvino.opset13 as ops  # newest version of each op as of opset13 (MVN-6, Gelu-7, Swish-4, Slice-8, ...)
from openvino.preprocess import PrePostProcessor, ResizeAlgorithm

# `ov.convert_model` reports each call to openvino-telemetry (when that package is installed),
# which at exit waits up to 3 s per event for the network: about a minute for this script. The
# package's documented switch for automated runs is the CI variable; set it for this process
# only, unless the caller chose a value.
os.environ.setdefault("CI", "true")

HERE = Path(__file__).resolve().parent
ONNX_DATA = Path(onnx.__file__).resolve().parent / "backend" / "test" / "data"
# A model whose plain model.bin is larger than this is not committed (moved to large/).
COMMIT_LIMIT = 1 << 20

# Shapes of the three variants of every block. B = batch, S = sequence length.
VARIANTS = {
    "static": {"B": 1, "S": 16},
    "dynamic": {"B": -1, "S": -1},
    "interval": {"B": ov.Dimension(1, 8), "S": ov.Dimension(1, 64)},
}
# Concrete values used to run the dynamic variants in the check.
CHECK_DIMS = {"static": {"B": 1, "S": 16}, "dynamic": {"B": 2, "S": 5}, "interval": {"B": 3, "S": 7}}

HIDDEN, HEADS, FFN = 64, 4, 128
HEAD_DIM = HIDDEN // HEADS
MAX_POS = 64  # rows of the RoPE cos/sin tables

LIGHT_REQUIRED = ["resnet50", "squeezenet", "densenet121", "inception_v1", "inception_v2", "shufflenet"]
LIGHT_HUGE = ["bvlc_alexnet", "vgg19", "zfnet512"]


# ----------------------------------------------------------------------------------------------
# Small helpers for building graphs with named nodes.


def named(node, name):
    """Sets the friendly name of `node` (so the XML does not depend on OpenVINO's counters)."""
    node.set_friendly_name(name)
    return node


def const(value, name, dtype=np.float32):
    return ops.constant(np.asarray(value, dtype=dtype), name=name)


def param(name, shape, dtype=np.float32):
    p = ops.parameter(ov.PartialShape(shape), dtype, name=name)
    p.output(0).get_tensor().set_names({name})
    return p


def result(node, name):
    """A Result named `name` whose input tensor is named `name` (the output's name)."""
    node.output(0).get_tensor().set_names({name})
    return ops.result(node, name=name + "/sink")


def dims(variant, *keys):
    """The partial shape for `variant` of a list of symbolic (B, S) and literal dims."""
    v = VARIANTS[variant]
    return [v[k] if isinstance(k, str) else k for k in keys]


def weight(rng, shape, fan_in):
    return (rng.standard_normal(shape) / np.sqrt(fan_in)).astype(np.float32)


def linear(x, rng, n_in, n_out, name, bias=True, transpose_b=True):
    """x @ W^T (+ b), like a PyTorch nn.Linear export: W is [out, in] with transpose_b=True."""
    if transpose_b:
        w = const(weight(rng, (n_out, n_in), n_in), name + ".weight")
    else:
        w = const(weight(rng, (n_in, n_out), n_in), name + ".weight")
    y = ops.matmul(x, w, False, transpose_b, name=name + "/MatMul")
    if bias:
        b = const(0.1 * rng.standard_normal(n_out), name + ".bias")
        y = ops.add(y, b, name=name + "/Add")
    return y


# ----------------------------------------------------------------------------------------------
# ports/: tiny models for "How OpenVINO writes ports" in the README.


def port_models():
    """(case, model, check feed) for each port case. Feed None: random inputs with default dims."""

    def relu_and_shapeof(case, shape):
        x = param("x", shape)
        r = named(ops.relu(x), "relu")
        s = named(ops.shape_of(x, "i64"), "shape_of")
        return ov.Model([result(r, "relu_out"), result(s, "shape_out")], [x], case)

    out = [
        ("scalar", relu_and_shapeof("scalar", []), {"x": []}),
        ("dynamic_rank", relu_and_shapeof("dynamic_rank", ov.PartialShape.dynamic()), {"x": [2, 3]}),
        ("dynamic_dim", relu_and_shapeof("dynamic_dim", "[?,3]"), {"x": [4, 3]}),
        ("interval", relu_and_shapeof("interval", "[1..8,..8,2..]"), {"x": [3, 5, 2]}),
        ("zero_dim", relu_and_shapeof("zero_dim", [0, 3]), {"x": [0, 3]}),
        ("all_dims", relu_and_shapeof("all_dims", "[?,1..8,..8,2..,0,3]"), {"x": [2, 4, 8, 2, 0, 3]}),
    ]

    # A scalar and a dynamic-rank Parameter in one model, both feeding an Add: every port of the
    # scalar side and every port of the dynamic-rank side is written the same way (no <dim>).
    s = param("s", [])
    d = param("d", ov.PartialShape.dynamic())
    add = named(ops.add(d, s), "add")
    sq = named(ops.multiply(s, s), "square")
    m = ov.Model([result(add, "sum"), result(sq, "square_out")], [s, d], "scalar_and_dynamic_rank")
    out.append(("scalar_and_dynamic_rank", m, {"s": [], "d": [2, 3]}))

    # A dynamic rank that appears inside the graph, not at a Parameter: a Reshape whose target
    # shape is a 1-D input of unknown length has an output of unknown rank.
    x = param("x", [2, 3])
    t = param("target_shape", "[?]", np.int64)
    r = named(ops.reshape(x, t, False), "reshape")
    y = named(ops.relu(r), "relu")
    m = ov.Model([result(y, "y")], [x, t], "dynamic_rank_inside")
    feed = {"x": np.arange(6, dtype=np.float32).reshape(2, 3) - 2.5,
            "target_shape": np.array([3, 1, 2], dtype=np.int64)}
    out.append(("dynamic_rank_inside", m, feed))

    # Scalar and zero-size Consts (f32, so the _fp16 twin shows them compressed).
    x = param("x", [0, 3])
    c0 = const(np.zeros((0, 3)), "zero_size_const")
    c1 = const(2.5, "scalar_const")
    a0 = named(ops.add(x, c0), "add_zero_size")
    a1 = named(ops.multiply(a0, c1), "mul_scalar")
    m = ov.Model([result(a1, "y")], [x], "consts")
    out.append(("consts", m, {"x": [0, 3]}))
    return out


# ----------------------------------------------------------------------------------------------
# blocks/: each builder takes a variant ("static", "dynamic", "interval") and returns a Model.
# The weights depend only on the block (fixed seed), so all three variants share them.


def layer_norm(x, rng, name, n=HIDDEN, eps=1e-5, square="power"):
    """Decomposed LayerNorm over the last axis, as exporters write it."""
    axis = const([-1], name + "/axis", np.int64)
    mean = ops.reduce_mean(x, axis, True, name=name + "/ReduceMean")
    d = ops.subtract(x, mean, name=name + "/Subtract")
    if square == "power":
        sq = ops.power(d, const(2.0, name + "/two"), name=name + "/Power")
    else:
        sq = ops.multiply(d, d, name=name + "/Square")
    var = ops.reduce_mean(sq, const([-1], name + "/axis2", np.int64), True, name=name + "/ReduceMean2")
    ve = ops.add(var, const(eps, name + "/eps"), name=name + "/AddEps")
    std = ops.sqrt(ve, name=name + "/Sqrt")
    nrm = ops.divide(d, std, name=name + "/Divide")
    g = const(1.0 + 0.1 * rng.standard_normal(n), name + ".weight")
    b = const(0.1 * rng.standard_normal(n), name + ".bias")
    y = ops.multiply(nrm, g, name=name + "/MulGamma")
    return ops.add(y, b, name=name + "/AddBeta")


def block_layernorm(variant):
    rng = np.random.default_rng(1001)
    x = param("x", dims(variant, "B", "S", HIDDEN))
    y = layer_norm(x, rng, "ln")
    return ov.Model([result(y, "y")], [x], "layernorm_" + variant)


def split_heads(t, x, variant, name):
    """[B, S, HIDDEN] -> [B, S, HEADS, HEAD_DIM]: a Const target shape in the static variant; in
    the others ShapeOf(x) -> Gather([0, 1]) -> Concat with [HEADS, HEAD_DIM], as exporters do."""
    if variant == "static":
        B, S = VARIANTS["static"]["B"], VARIANTS["static"]["S"]
        target = const([B, S, HEADS, HEAD_DIM], name + "/shape", np.int64)
    else:
        shp = ops.shape_of(x, "i64", name=name + "/ShapeOf")
        bs = ops.gather(shp, const([0, 1], name + "/idx", np.int64), const(0, name + "/gaxis", np.int64),
                        name=name + "/Gather")
        target = ops.concat([bs, const([HEADS, HEAD_DIM], name + "/heads", np.int64)], 0, name=name + "/Concat")
    return ops.reshape(t, target, False, name=name + "/Reshape")


def merge_heads(t, variant, name):
    """[B, HEADS, S, HEAD_DIM] -> [B, S, HIDDEN]: Transpose, then Reshape with a Const shape
    ([1, 16, 64] static, [0, 0, 64] with special_zero otherwise)."""
    t = ops.transpose(t, const([0, 2, 1, 3], name + "/perm", np.int64), name=name + "/Transpose")
    if variant == "static":
        B, S = VARIANTS["static"]["B"], VARIANTS["static"]["S"]
        return ops.reshape(t, const([B, S, HIDDEN], name + "/shape", np.int64), False, name=name + "/Reshape")
    return ops.reshape(t, const([0, 0, HIDDEN], name + "/shape", np.int64), True, name=name + "/Reshape")


def attention(x, rng, variant, name, mask=None, mask_mode=None):
    """Multi-head self-attention decomposed into MatMul/Softmax. mask_mode: None, "add" (an f32
    additive mask [B,1,1,S]) or "select" (a boolean mask [B,1,1,S]: Select(mask, scores, -1e9))."""
    q = linear(x, rng, HIDDEN, HIDDEN, name + ".q_proj")
    k = linear(x, rng, HIDDEN, HIDDEN, name + ".k_proj")
    v = linear(x, rng, HIDDEN, HIDDEN, name + ".v_proj", transpose_b=False)
    q = ops.transpose(split_heads(q, x, variant, name + "/q_heads"), const([0, 2, 1, 3], name + "/q_perm", np.int64),
                      name=name + "/q_Transpose")  # [B, H, S, D]
    k = ops.transpose(split_heads(k, x, variant, name + "/k_heads"), const([0, 2, 3, 1], name + "/k_perm", np.int64),
                      name=name + "/k_Transpose")  # [B, H, D, S]
    v = ops.transpose(split_heads(v, x, variant, name + "/v_heads"), const([0, 2, 1, 3], name + "/v_perm", np.int64),
                      name=name + "/v_Transpose")  # [B, H, S, D]
    scores = ops.matmul(q, k, False, False, name=name + "/QK")
    scores = ops.multiply(scores, const(1.0 / np.sqrt(HEAD_DIM), name + "/scale"), name=name + "/Scale")
    if mask_mode == "add":
        scores = ops.add(scores, mask, name=name + "/AddMask")
    elif mask_mode == "select":
        scores = ops.select(mask, scores, const(-1e9, name + "/neg_inf"), name=name + "/SelectMask")
    p = ops.softmax(scores, -1, name=name + "/Softmax")
    ctx = ops.matmul(p, v, False, False, name=name + "/PV")
    ctx = merge_heads(ctx, variant, name + "/merge")
    return linear(ctx, rng, HIDDEN, HIDDEN, name + ".o_proj")


def block_mha(variant):
    rng = np.random.default_rng(1002)
    x = param("x", dims(variant, "B", "S", HIDDEN))
    y = attention(x, rng, variant, "attn")
    return ov.Model([result(y, "y")], [x], "mha_" + variant)


def mvn_norm(x, rng, name):
    """LayerNorm as MVN-6 (last axis, inside_sqrt) followed by gamma and beta."""
    y = ops.mvn(x, const([-1], name + "/axes", np.int64), True, 1e-5, "inside_sqrt", name=name + "/MVN")
    y = ops.multiply(y, const(1.0 + 0.1 * rng.standard_normal(HIDDEN), name + ".weight"), name=name + "/MulGamma")
    return ops.add(y, const(0.1 * rng.standard_normal(HIDDEN), name + ".bias"), name=name + "/AddBeta")


def encoder(variant, gelu_mode, mask_mode, model_name):
    """Pre-norm transformer encoder layer: MVN, attention with a mask, residual Add, MVN, MLP with
    Gelu-7, residual Add."""
    rng = np.random.default_rng(1003)
    x = param("x", dims(variant, "B", "S", HIDDEN))
    if mask_mode == "add":
        mask = param("attention_mask", dims(variant, "B", 1, 1, "S"))
    else:
        mask = param("attention_mask", dims(variant, "B", 1, 1, "S"), np.bool_)
    h = mvn_norm(x, rng, "ln1")
    a = attention(h, rng, variant, "attn", mask, mask_mode)
    x1 = ops.add(x, a, name="residual1")
    h2 = mvn_norm(x1, rng, "ln2")
    f = linear(h2, rng, HIDDEN, FFN, "mlp.fc1")
    f = ops.gelu(f, gelu_mode, name="mlp/Gelu")
    f = linear(f, rng, FFN, HIDDEN, "mlp.fc2")
    y = ops.add(x1, f, name="residual2")
    return ov.Model([result(y, "y")], [x, mask], model_name + "_" + variant)


def block_encoder(variant):
    return encoder(variant, "erf", "add", "encoder")


def block_encoder_tanh(variant):
    return encoder(variant, "tanh", "select", "encoder_tanh")


def rms_norm(x, rng, name, style):
    """RMSNorm from primitives. style "sqrt": x / Sqrt(ReduceMean(Power(x, 2)) + eps) * w;
    style "rsqrt": x * Power(ReduceMean(x * x) + eps, -0.5) * w."""
    axis = const([-1], name + "/axis", np.int64)
    if style == "sqrt":
        sq = ops.power(x, const(2.0, name + "/two"), name=name + "/Power")
    else:
        sq = ops.multiply(x, x, name=name + "/Square")
    ms = ops.reduce_mean(sq, axis, True, name=name + "/ReduceMean")
    ms = ops.add(ms, const(1e-6, name + "/eps"), name=name + "/AddEps")
    if style == "sqrt":
        y = ops.divide(x, ops.sqrt(ms, name=name + "/Sqrt"), name=name + "/Divide")
    else:
        y = ops.multiply(x, ops.power(ms, const(-0.5, name + "/minus_half"), name=name + "/Rsqrt"),
                         name=name + "/Normalize")
    return ops.multiply(y, const(1.0 + 0.1 * rng.standard_normal(HIDDEN), name + ".weight"), name=name + "/MulWeight")


def rope_tables(x, variant):
    """cos and sin [1, 1, S, HEAD_DIM]. Static: Consts of exactly that shape. Otherwise Consts
    [MAX_POS, HEAD_DIM] sliced to the first S rows (S from ShapeOf(x)) and unsqueezed."""
    inv = 1.0 / (10000.0 ** (np.arange(0, HEAD_DIM, 2) / HEAD_DIM))
    ang = np.arange(MAX_POS)[:, None] * inv[None, :]
    ang = np.concatenate([ang, ang], axis=-1)  # [MAX_POS, HEAD_DIM], HF layout
    cos, sin = np.cos(ang).astype(np.float32), np.sin(ang).astype(np.float32)
    if variant == "static":
        S = VARIANTS["static"]["S"]
        return const(cos[None, None, :S], "rope.cos"), const(sin[None, None, :S], "rope.sin")
    shp = ops.shape_of(x, "i64", name="rope/ShapeOf")
    seq = ops.gather(shp, const([1], "rope/idx", np.int64), const(0, "rope/gaxis", np.int64), name="rope/seq_len")
    out = []
    for nm, table in (("cos", cos), ("sin", sin)):
        t = ops.slice(const(table, "rope." + nm + "_table"), const([0], "rope/%s_start" % nm, np.int64), seq,
                      const([1], "rope/%s_step" % nm, np.int64), const([0], "rope/%s_axes" % nm, np.int64),
                      name="rope/%s_Slice" % nm)
        out.append(ops.unsqueeze(t, const([0, 1], "rope/%s_unsq" % nm, np.int64), name="rope/%s_Unsqueeze" % nm))
    return out


def apply_rope(t, cos, sin, name, style):
    """t * cos + rotate_half(t) * sin, rotate_half(t) = Concat(-t2, t1). style "split": halves
    from VariadicSplit, negation with Negative; style "slice": halves from two Slices,
    negation by Multiply with -1."""
    half = HEAD_DIM // 2
    if style == "split":
        parts = ops.variadic_split(t, const(-1, name + "/axis", np.int64), const([half, half], name + "/lengths", np.int64),
                                   name=name + "/VariadicSplit")
        t1, t2 = parts.output(0), parts.output(1)
        neg = ops.negative(t2, name=name + "/Negative")
    else:
        ax = const([3], name + "/axes", np.int64)
        one = const([1], name + "/step", np.int64)
        t1 = ops.slice(t, const([0], name + "/s1", np.int64), const([half], name + "/e1", np.int64), one, ax,
                       name=name + "/Slice1")
        t2 = ops.slice(t, const([half], name + "/s2", np.int64), const([HEAD_DIM], name + "/e2", np.int64), one, ax,
                       name=name + "/Slice2")
        neg = ops.multiply(t2, const(-1.0, name + "/minus_one"), name=name + "/Negate")
    rot = ops.concat([neg, t1], -1, name=name + "/Concat")
    a = ops.multiply(t, cos, name=name + "/MulCos")
    b = ops.multiply(rot, sin, name=name + "/MulSin")
    return ops.add(a, b, name=name + "/Add")


def block_decoder(variant):
    """LLaMA-style decoder layer: RMSNorm, q/k/v projections, RoPE, ScaledDotProductAttention-13
    (causal), o_proj, residual, RMSNorm, SwiGLU MLP (Swish-4 gate * up, down), residual."""
    rng = np.random.default_rng(1004)
    x = param("x", dims(variant, "B", "S", HIDDEN))
    h = rms_norm(x, rng, "input_layernorm", "sqrt")
    q = linear(h, rng, HIDDEN, HIDDEN, "attn.q_proj", bias=False)
    k = linear(h, rng, HIDDEN, HIDDEN, "attn.k_proj", bias=False)
    v = linear(h, rng, HIDDEN, HIDDEN, "attn.v_proj", bias=False)
    perm = const([0, 2, 1, 3], "attn/perm", np.int64)
    q = ops.transpose(split_heads(q, h, variant, "attn/q_heads"), perm, name="attn/q_Transpose")
    k = ops.transpose(split_heads(k, h, variant, "attn/k_heads"), perm, name="attn/k_Transpose")
    v = ops.transpose(split_heads(v, h, variant, "attn/v_heads"), perm, name="attn/v_Transpose")
    cos, sin = rope_tables(x, variant)
    q = apply_rope(q, cos, sin, "rope_q", "split")
    k = apply_rope(k, cos, sin, "rope_k", "slice")
    a = ops.scaled_dot_product_attention(q, k, v, causal=True, name="attn/SDPA")
    a = merge_heads(a, variant, "attn/merge")
    a = linear(a, rng, HIDDEN, HIDDEN, "attn.o_proj", bias=False)
    x1 = ops.add(x, a, name="residual1")
    h2 = rms_norm(x1, rng, "post_attention_layernorm", "rsqrt")
    gate = ops.swish(linear(h2, rng, HIDDEN, FFN, "mlp.gate_proj", bias=False), name="mlp/Swish")
    up = linear(h2, rng, HIDDEN, FFN, "mlp.up_proj", bias=False)
    m = linear(ops.multiply(gate, up, name="mlp/Multiply"), rng, FFN, HIDDEN, "mlp.down_proj", bias=False)
    y = ops.add(x1, m, name="residual2")
    return ov.Model([result(y, "y")], [x], "decoder_" + variant)


def conv_relu(x, rng, c_in, c_out, name):
    w = const(weight(rng, (c_out, c_in, 3, 3), c_in * 9), name + ".weight")
    y = ops.convolution(x, w, [1, 1], [1, 1], [1, 1], [1, 1], name=name + "/Convolution")
    y = ops.add(y, const(0.1 * rng.standard_normal((1, c_out, 1, 1)), name + ".bias"), name=name + "/AddBias")
    return ops.relu(y, name=name + "/Relu")


def block_preprocess(variant):
    """PrePostProcessor in front of Convolution + Relu (model input f32 NCHW [N, 3, 16, 16]):
    u8 NHWC tensor -> f32 -> BGR->RGB -> mean/scale -> resize (linear) -> NCHW; output -> NHWC."""
    rng = np.random.default_rng(1005)
    batch = {"static": 1, "dynamic": -1, "interval": ov.Dimension(1, 8)}[variant]
    x = param("image", [batch, 3, 16, 16])
    y = conv_relu(x, rng, 3, 8, "conv")
    model = ov.Model([result(y, "features")], [x], "preprocess_" + variant)
    ppp = PrePostProcessor(model)
    inp = ppp.input()
    inp.tensor().set_element_type(ov.Type.u8).set_layout(ov.Layout("NHWC")).set_color_format(
        ov.preprocess.ColorFormat.BGR)
    if variant == "static":
        inp.tensor().set_shape([1, 24, 24, 3])
    elif variant == "dynamic":
        inp.tensor().set_spatial_dynamic_shape()
    else:
        inp.tensor().set_shape(ov.PartialShape([ov.Dimension(1, 8), ov.Dimension(8, 64), ov.Dimension(8, 64), 3]))
    inp.preprocess().convert_element_type(ov.Type.f32).convert_color(ov.preprocess.ColorFormat.RGB) \
        .mean([123.675, 116.28, 103.53]).scale([58.395, 57.12, 57.375]).resize(ResizeAlgorithm.RESIZE_LINEAR)
    inp.model().set_layout(ov.Layout("NCHW"))
    ppp.output().model().set_layout(ov.Layout("NCHW"))
    ppp.output().tensor().set_layout(ov.Layout("NHWC"))
    return ppp.build()


def block_new_user(variant):
    """The "new user" model: Subtract mean, Divide std -> Convolution -> Relu -> decomposed
    LayerNorm over the channels (ReduceMean, Subtract, Multiply, ReduceMean, Add, Sqrt, Divide)
    -> Reshape to [N, C, H*W]."""
    rng = np.random.default_rng(1006)
    shape = {"static": [1, 3, 16, 16], "dynamic": [-1, 3, -1, -1],
             "interval": [ov.Dimension(1, 8), 3, ov.Dimension(8, 64), ov.Dimension(8, 64)]}[variant]
    x = param("image", shape)
    x1 = ops.subtract(x, const(np.array([0.485, 0.456, 0.406]).reshape(1, 3, 1, 1), "mean"), name="normalize/Subtract")
    x2 = ops.divide(x1, const(np.array([0.229, 0.224, 0.225]).reshape(1, 3, 1, 1), "std"), name="normalize/Divide")
    c = conv_relu(x2, rng, 3, 8, "conv")
    ax = const([1], "ln/axis", np.int64)
    mean = ops.reduce_mean(c, ax, True, name="ln/ReduceMean")
    d = ops.subtract(c, mean, name="ln/Subtract")
    var = ops.reduce_mean(ops.multiply(d, d, name="ln/Square"), ax, True, name="ln/ReduceMean2")
    std = ops.sqrt(ops.add(var, const(1e-5, "ln/eps"), name="ln/AddEps"), name="ln/Sqrt")
    n = ops.divide(d, std, name="ln/Divide")
    n = ops.multiply(n, const(1.0 + 0.1 * rng.standard_normal((1, 8, 1, 1)), "ln.weight"), name="ln/MulGamma")
    n = ops.add(n, const(0.1 * rng.standard_normal((1, 8, 1, 1)), "ln.bias"), name="ln/AddBeta")
    if variant == "static":
        target, special = const([1, 8, 256], "flatten/shape", np.int64), False
    else:
        target, special = const([0, 8, -1], "flatten/shape", np.int64), True
    y = ops.reshape(n, target, special, name="flatten/Reshape")
    return ov.Model([result(y, "y")], [x], "new_user_" + variant)


BLOCKS = {
    "layernorm": (block_layernorm, "decomposed LayerNorm (ReduceMean, Subtract, Power 2, ReduceMean, Add eps, "
                                   "Sqrt, Divide, Multiply gamma, Add beta)"),
    "mha": (block_mha, "multi-head self-attention: MatMul+bias projections, Reshape to heads (Const shape "
                       "when static, ShapeOf->Gather->Concat otherwise), Transpose, QK^T, scale, Softmax, "
                       "PV, Transpose, Reshape, output projection"),
    "encoder": (block_encoder, "pre-norm encoder layer: MVN-6 + gamma/beta, attention with an additive f32 "
                               "mask input, residual Adds, MLP with Gelu-7 (erf)"),
    "encoder_tanh": (block_encoder_tanh, "as encoder, with Gelu-7 tanh mode and a boolean mask applied "
                                         "with Select"),
    "decoder": (block_decoder, "LLaMA-style decoder layer: RMSNorm (two decompositions), RoPE (VariadicSplit+"
                               "Negative and Slice+Multiply -1), ScaledDotProductAttention-13 causal, "
                               "SwiGLU MLP with Swish-4"),
    "preprocess": (block_preprocess, "PrePostProcessor.build(): u8 NHWC BGR -> f32 -> RGB -> mean/scale -> "
                                     "resize linear -> NCHW, in front of Convolution+bias+Relu; output to NHWC"),
    "new_user": (block_new_user, "Subtract mean, Divide std -> Convolution -> Relu -> decomposed LayerNorm "
                                 "over channels -> Reshape"),
}


def block_check_feed(block, variant, static_shape=False):
    """Concrete input shapes to run `block` `variant` with (static_shape: the static variant's)."""
    d = CHECK_DIMS["static" if static_shape else variant]
    B, S = d["B"], d["S"]
    if block in ("preprocess",):
        hw = {"static": (24, 24), "dynamic": (20, 28), "interval": (9, 33)}["static" if static_shape else variant]
        return {"image": ("u8", [B, hw[0], hw[1], 3])}
    if block == "new_user":
        hw = {"static": (16, 16), "dynamic": (20, 12), "interval": (9, 33)}["static" if static_shape else variant]
        return {"image": ("f32", [B, 3, hw[0], hw[1]])}
    feed = {"x": ("f32", [B, S, HIDDEN])}
    if block == "encoder":
        feed["attention_mask"] = ("f32", [B, 1, 1, S])
    if block == "encoder_tanh":
        feed["attention_mask"] = ("bool", [B, 1, 1, S])
    return feed


# ----------------------------------------------------------------------------------------------
# Writing, and reading back what was written.


def layer_stats(xml_path):
    """Layer count, op histogram, inputs and outputs, read from the XML OpenVINO wrote."""
    root = ET.parse(xml_path).getroot()
    layers = root.find("layers").findall("layer")
    hist = Counter("%s/%s" % (l.get("type"), l.get("version")) for l in layers)
    inputs, outputs, bin_end = [], [], 0
    spans = Counter()  # (offset, size) of each Const: save_model stores identical data once
    by_id = {l.get("id"): l for l in layers}
    for l in layers:
        if l.get("type") == "Parameter":
            data = l.find("data")
            port = l.find("output/port")
            inputs.append({"name": port.get("names") or l.get("name"), "layer": l.get("name"),
                           "element_type": data.get("element_type"), "shape": "[%s]" % data.get("shape")})
        elif l.get("type") == "Const":
            data = l.find("data")
            bin_end = max(bin_end, int(data.get("offset")) + int(data.get("size")))
            spans[(data.get("offset"), data.get("size"))] += 1
    edges = root.find("edges").findall("edge")
    for l in layers:
        if l.get("type") == "Result":
            e = next(e for e in edges if e.get("to-layer") == l.get("id"))
            src = by_id[e.get("from-layer")]
            port = next(p for p in src.iter("port") if p.get("id") == e.get("from-port"))
            # names: the tensor names of the output (None: OpenVINO wrote none, see README).
            outputs.append({"names": port.get("names") or l.get("output_names"), "result_layer": l.get("name"),
                            "precision": port.get("precision"),
                            "dims": [d.text for d in port.findall("dim")]})
    nested = sum(1 for _ in root.iter("layer")) - len(layers)
    return {"layers": len(layers), "nested_layers": nested, "ops": dict(sorted(hist.items())),
            "inputs": inputs, "outputs": outputs, "bin_bytes_from_xml": bin_end,
            "consts_sharing_data": sum(n for n in spans.values() if n > 1)}


def scratch_dir():
    """Where to serialise a model only to describe it: RAM (/dev/shm) when it has room."""
    shm = "/dev/shm"
    if os.path.isdir(shm) and os.access(shm, os.W_OK) and shutil.disk_usage(shm).free > (2 << 30):
        return shm
    return None


class Corpus:
    def __init__(self, out, write_large, write_huge):
        self.out = out
        self.write_large = write_large
        self.write_huge = write_huge
        self.manifest = {}
        self.written = []  # (rel folder, check info)
        self.skipped = []  # (test, why convert_model failed)

    def save_pair(self, rel, model, source, group, committed, check, write=True):
        """Writes `model` to rel/ (f32) and rel_fp16/ (compress_to_fp16) and records both in the
        manifest. write=False: serialise to a scratch folder, for the manifest only."""
        for suffix, compress in (("", False), ("_fp16", True)):
            folder = rel + suffix
            if write:
                d = self.out / folder
                if d.exists():
                    shutil.rmtree(d)
                d.mkdir(parents=True)
                ov.save_model(model, str(d / "model.xml"), compress_to_fp16=compress)
                stats = layer_stats(d / "model.xml")
                stats["bin_bytes"] = (d / "model.bin").stat().st_size if (d / "model.bin").exists() else None
                self.written.append((folder, dict(check, compress=compress, twin=rel if compress else None)))
            else:
                # A real file: with model.bin on /dev/null the offsets in the XML come out
                # different (save_model takes them from the stream position).
                with tempfile.TemporaryDirectory(dir=scratch_dir()) as tmp:
                    ov.save_model(model, os.path.join(tmp, "model.xml"), compress_to_fp16=compress)
                    stats = layer_stats(os.path.join(tmp, "model.xml"))
                    stats["bin_bytes"] = os.path.getsize(os.path.join(tmp, "model.bin"))
            del stats["bin_bytes_from_xml"]
            entry = {"group": group, "source": source, "committed": committed,
                     "written_by": "--huge" if group == "huge" else "--large" if not committed else "default",
                     "fp16_compressed": compress}
            entry.update(stats)
            self.manifest[folder] = entry

    # -- ports, blocks ---------------------------------------------------------------------------

    def ports(self):
        for case, model, feed in port_models():
            self.save_pair("ports/" + case, model, "generate.py port_models(): " + case, "ports", True,
                           {"feed": feed})

    def blocks(self):
        for block, (fn, desc) in BLOCKS.items():
            for variant in VARIANTS:
                self.save_pair("blocks/%s_%s" % (block, variant), fn(variant), "generate.py %s: %s" % (fn.__name__, desc),
                               "blocks", True,
                               {"feed": block_check_feed(block, variant),
                                "static_feed": block_check_feed(block, variant, static_shape=True),
                                "static_twin": "blocks/%s_static" % block if variant != "static" else None})

    # -- ONNX ----------------------------------------------------------------------------------

    def onnx_pytorch(self):
        paths = sorted(glob.glob(str(ONNX_DATA / "pytorch-converted" / "*" / "model.onnx")))
        paths += sorted(glob.glob(str(ONNX_DATA / "pytorch-operator" / "*" / "model.onnx")))
        for p in paths:
            test = Path(p).parent.name
            src = "onnx==%s: %s" % (onnx.__version__, Path(p).relative_to(ONNX_DATA.parents[3]).as_posix())
            try:
                model = ov.convert_model(p)
            except Exception as e:  # noqa: BLE001 - record every reason
                self.skipped.append((test, str(e).strip().splitlines()[0][:300]))
                continue
            # The Consts' bytes decide where the model goes (COMMIT_LIMIT); the plain .bin is at
            # most that (save_model stores identical Consts once).
            size = sum(op.get_byte_size() for op in model.get_ops() if op.get_type_name() == "Constant")
            if size <= COMMIT_LIMIT:
                self.save_pair("onnx_pytorch/" + test, model, src, "onnx_pytorch", True, {"onnx": p})
            else:
                self.save_pair("large/onnx_pytorch/" + test, model, src, "large", False, {"onnx": p},
                               write=self.write_large)
        for test, why in self.skipped:
            self.manifest.setdefault("_skipped", {})[test] = why

    def light(self):
        for net in LIGHT_REQUIRED + LIGHT_HUGE:
            p = ONNX_DATA / "light" / ("light_%s.onnx" % net)
            src = "onnx==%s: %s" % (onnx.__version__, p.relative_to(ONNX_DATA.parents[3]).as_posix())
            huge = net in LIGHT_HUGE
            try:
                model = ov.convert_model(str(p))
            except Exception as e:  # noqa: BLE001
                self.manifest.setdefault("_skipped", {})["light_" + net] = str(e).strip().splitlines()[0][:300]
                continue
            self.save_pair("large/light_" + net, model, src, "huge" if huge else "large", False,
                           {"onnx": str(p), "strict": False},
                           write=self.write_huge if huge else self.write_large)


# ----------------------------------------------------------------------------------------------
# Checking what was written with OpenVINO itself.


NP_TYPES = {"f32": np.float32, "f64": np.float64, "f16": np.float16, "i64": np.int64, "i32": np.int32,
            "u8": np.uint8, "i8": np.int8, "bool": np.bool_, "boolean": np.bool_}


def random_array(rng, dtype, shape):
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) < 0.8
    if dtype == np.uint8:
        return rng.integers(0, 256, shape).astype(np.uint8)
    if np.issubdtype(dtype, np.integer):
        return rng.integers(0, 3, shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def default_dims(ps):
    """A concrete shape inside the bounds of a partial shape of static rank."""
    out = []
    for d in ps:
        if d.is_static:
            out.append(d.get_length())
        else:
            lo, hi = d.get_min_length(), d.get_max_length()
            v = max(lo, 3)
            out.append(min(v, hi) if hi >= 0 else v)
    return out


def make_feed(model, feed, seed):
    """Inputs for `model`: feed maps an input name to an array, a shape, or (dtype, shape)."""
    rng = np.random.default_rng(seed)
    arrays = {}
    for inp in model.inputs:
        name = inp.get_any_name()
        dtype = inp.get_element_type().to_dtype()
        spec = (feed or {}).get(name)
        if isinstance(spec, np.ndarray):
            arrays[name] = spec
            continue
        if isinstance(spec, tuple):
            dtype, shape = NP_TYPES[spec[0]], spec[1]
        elif spec is not None:
            shape = spec
        else:
            shape = default_dims(inp.get_partial_shape())
        arrays[name] = random_array(rng, dtype, shape)
    unknown = set(feed or {}) - set(arrays)
    if unknown:
        raise ValueError("feed names %s are not inputs of the model (%s)" % (sorted(unknown), sorted(arrays)))
    return arrays


def max_diff(a, b):
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    if a.shape != b.shape:
        return float("inf")
    if a.size == 0:
        return 0.0
    both_nan = np.isnan(a) & np.isnan(b)
    d = np.where(both_nan, 0.0, np.abs(a - b))
    return float(np.nanmax(np.where(np.isnan(d), np.inf, d)))


def first_line(e):
    lines = [l for l in str(e).splitlines() if l.strip()]
    return lines[0][:300] if lines else repr(e)


def ov_error_line(e):
    """The informative line of an OpenVINO exception (they start with 'Exception from ...')."""
    lines = [l.strip() for l in str(e).splitlines() if l.strip() and not l.startswith("Exception from")
             and not l.startswith("Check ")]
    return lines[0][:300] if lines else first_line(e)


class Checker:
    def __init__(self, out):
        self.out = out
        self.core = ov.Core()
        self.outputs = {}  # folder -> list of arrays (plain variants, for the fp16 comparison)
        self.failures = []
        self.compile_notes = {}  # folder -> why the CPU plugin refused it as written
        self.lines = []
        try:
            import onnxruntime
            onnxruntime.set_default_logger_severity(3)  # no warnings about legacy opsets
            self.ort = onnxruntime
        except ImportError:
            self.ort = None

    def onnx_reference(self, path, arrays):
        """Outputs of the ONNX model on `arrays`: onnxruntime, else onnx.reference (onnxruntime
        has no kernels for the opset-6 legacy ops of some pytorch-converted tests)."""
        errors = []
        if self.ort is not None:
            try:
                sess = self.ort.InferenceSession(path, providers=["CPUExecutionProvider"])
                return "onnxruntime", sess.run(None, dict(arrays))
            except Exception as e:  # noqa: BLE001
                errors.append("onnxruntime: " + first_line(e))
        try:
            from onnx.reference import ReferenceEvaluator
            return "onnx.reference", ReferenceEvaluator(path).run(None, dict(arrays))
        except Exception as e:  # noqa: BLE001
            errors.append("onnx.reference: " + first_line(e))
        return "; ".join(errors), None

    def run(self, folder, feed, seed_name=None):
        """read_model + compile_model + one inference. The CPU plugin rejects dynamic ranks; such
        a model is run again after model.reshape() to the concrete input shapes, and noted."""
        m = self.core.read_model(str(self.out / folder / "model.xml"))
        arrays = make_feed(m, feed, zlib.crc32((seed_name or folder).encode()))
        try:
            c = self.core.compile_model(m, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
        except RuntimeError as e:
            if "dynamic rank" not in str(e):
                raise
            self.compile_notes[folder] = ov_error_line(e)
            m.reshape({k: ov.PartialShape(list(v.shape)) for k, v in arrays.items()})
            c = self.core.compile_model(m, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
        req = c.create_infer_request()
        res = req.infer(arrays)
        outs = [np.array(res[o]) for o in c.outputs]
        return arrays, outs

    def check(self, folder, info):
        note = ""
        try:
            base = folder[:-5] if info["compress"] else folder
            arrays, outs = self.run(folder, info.get("feed"), seed_name=base)
            shapes = ",".join("x".join(map(str, a.shape)) or "scalar" for a in arrays.values())
            if not info["compress"]:
                self.outputs[folder] = outs
            elif info["twin"] in self.outputs:
                note += " vs_plain=%.3g" % max(max_diff(a, b) for a, b in zip(outs, self.outputs[info["twin"]]))
            if "onnx" in info:
                ref_name, ref = self.onnx_reference(info["onnx"], arrays)
                if ref is None:
                    note += " no_reference (%s)" % ref_name
                else:
                    d = max(max_diff(a, b) for a, b in zip(outs, ref))
                    scale = max(1.0, max(float(np.nanmax(np.abs(np.asarray(r, np.float64)))) if np.size(r) else 0.0
                                         for r in ref))
                    note += " vs_%s=%.3g (max|ref|=%.3g)" % (ref_name, d, scale)
                    # The light_* nets have constant weights: their logits are ~1e9 and equal up to
                    # float rounding, so their softmax outputs are ill-conditioned (README); their
                    # difference is only reported.
                    if info.get("strict", True) and not info["compress"] and not d <= 1e-4 * scale:
                        self.failures.append((folder, "differs from %s by %.3g" % (ref_name, d)))
            if info.get("static_twin"):
                _, a = self.run(folder, info["static_feed"], seed_name=info["static_twin"])
                _, b = self.run(info["static_twin"] + ("_fp16" if info["compress"] else ""), info["static_feed"],
                                seed_name=info["static_twin"])
                d = max(max_diff(x, y) for x, y in zip(a, b))
                note += " vs_static=%.3g" % d
                if not d <= 1e-5:
                    self.failures.append((folder, "differs from its _static twin by %.3g" % d))
            if folder in self.compile_notes:
                note += " [compile_model refused it: %s; ran after model.reshape]" % self.compile_notes[folder]
            self.lines.append("ok    %-58s inputs %s%s" % (folder, shapes, note))
        except Exception as e:  # noqa: BLE001
            msg = ov_error_line(e)
            self.failures.append((folder, msg))
            self.lines.append("FAIL  %-58s %s" % (folder, msg))
        print(self.lines[-1], flush=True)


# ----------------------------------------------------------------------------------------------


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--large", action="store_true", help="also write large/light_* (resnet50, ...), git-ignored")
    ap.add_argument("--huge", action="store_true", help="with --large, also alexnet, vgg19, zfnet512 (~1.6 GB)")
    ap.add_argument("--out", type=Path, default=HERE, help="output folder (default: the script's folder)")
    ap.add_argument("--no-check", action="store_true", help="do not compile and run what was written")
    args = ap.parse_args()
    if args.huge:
        args.large = True
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.time()

    # Start from clean group folders, so a model removed from this script does not linger.
    for group in ("ports", "blocks", "onnx_pytorch"):
        if (out / group).exists():
            shutil.rmtree(out / group)
    if args.large and (out / "large").exists():
        shutil.rmtree(out / "large")

    corpus = Corpus(out, args.large, args.huge)
    # Fixed order: committed groups first (see "Determinism" above).
    for step in (corpus.ports, corpus.blocks, corpus.onnx_pytorch, corpus.light):
        t = time.time()
        step()
        print("%-13s %6.1f s" % (step.__name__, time.time() - t), flush=True)

    manifest = {
        "generator": "ir_samples/real/generate.py",
        "openvino": ov.get_version().split("-")[0],
        "onnx": onnx.__version__,
        "models": {k: v for k, v in sorted(corpus.manifest.items()) if not k.startswith("_")},
        "skipped": corpus.manifest.get("_skipped", {}),
    }
    with open(out / "manifest.json", "w") as f:
        json.dump(manifest, f, indent=1, sort_keys=False)
        f.write("\n")
    t_write = time.time() - t0
    print("wrote %d folders in %.1f s" % (len(corpus.written), t_write), flush=True)

    committed = sum(p.stat().st_size for p in out.rglob("*.bin") if "large" not in p.relative_to(out).parts)
    print("committed .bin bytes: %d" % committed)

    if args.no_check:
        return 0
    checker = Checker(out)
    for folder, info in corpus.written:
        checker.check(folder, info)
    print("checked %d folders in %.1f s, %d failure(s)" % (len(corpus.written), time.time() - t0 - t_write,
                                                          len(checker.failures)))
    for folder, why in checker.failures:
        print("FAILED %s: %s" % (folder, why))
    for folder, why in sorted(checker.compile_notes.items()):
        print("NOTE   %s: compile_model refused the model as written (%s); it ran after model.reshape "
              "to the concrete input shapes" % (folder, why))
    return 1 if checker.failures else 0


if __name__ == "__main__":
    sys.exit(main())
