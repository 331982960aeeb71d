#!/usr/bin/env python3
"""Regenerate src/ops/opset_table.rs: which version of each OpenVINO op type every opset holds,
measured on the installed OpenVINO (not read from its headers).

    .venv/bin/python tests/differential/opset_table.py            # rewrite src/ops/opset_table.rs
    .venv/bin/python tests/differential/opset_table.py --check    # exit 1 if the file is stale
    .venv/bin/python tests/differential/opset_table.py --stdout   # print instead of writing

Needs only the `openvino` Python package (and numpy); no network. The output is deterministic:
it depends on nothing but the installed OpenVINO, whose version is written into the file.
A summary (opsets found, types dropped from later opsets, gaps, timing) goes to stderr.

Method. The opsets are the names `opsetN` that `NodeFactory` accepts (it answers
"Unsupported opset version requested" for the others; N is probed from 0 to 40 and the ones
found must be opset1..opsetMAX without holes). For every opset and every name in CANDIDATES,
`NodeFactory("opsetN").create(name)` either builds a node, whose `get_type_info().version_id`
("opsetK") gives the op's version K, or fails with "Couldn't create operation", meaning the type
is not in that opset. Constant is the one exception: NodeFactory finds it in the opset, then
refuses it ("doesn't support Constant node"); that refusal counts as present, and its version is
read from a one-layer IR (`type="Const" version="opsetN"`) loaded by `Core.read_model`. Any other
failure stops the script.

Cross-check through the IR reader, for the types ovir implements (Const/Constant, Parameter,
Result, Convert, Subtract, Divide): a minimal IR with that layer at `version="opsetN"` must load
exactly in the opsets the table lists, giving a node of the listed version; `Const` and
`Constant` must be read alike. The script stops if they disagree.

CANDIDATES: the union of the op names in the opset tables (`openvino/opsets/opset1_tbl.hpp` to
`opset17_tbl.hpp`) and of every `OPENVINO_OP("Name", ...)` class in the headers shipped with the
OpenVINO 2026.4.1 wheel, plus names from the operation-spec pages of the OpenVINO docs (some of
them specs for ops not yet in any opset, or internal ops), plus old or alias names (`Const`,
`Xor`, `SparseConv`, `Interp`, `ScaleShift`). Names not in any opset are simply absent from the
table. If a newer OpenVINO adds op types, add their names here.
"""

import argparse
import re
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import numpy as np
import openvino as ov
from openvino.utils.node_factory import NodeFactory

OUT = Path(__file__).resolve().parents[2] / "src" / "ops" / "opset_table.rs"

# opsetN probed for N in 0..=PROBE_MAX.
PROBE_MAX = 40

CANDIDATES = [
    "AUGRUCell", "AUGRUSequence", "Abs", "Acos", "Acosh", "AdaptiveAvgPool", "AdaptiveMaxPool",
    "Add", "ArithmeticReduction", "ArithmeticReductionKeepDims", "Asin", "Asinh", "Assign",
    "AssignBase", "Atan", "Atan2", "Atanh", "AvgPool", "BEVPoolV2", "BGRtoNV12",
    "BatchNormInference", "BatchToSpace", "BinaryConvolution", "BinaryElementwiseArithmetic",
    "BinaryElementwiseBitwise", "BinaryElementwiseComparison", "BinaryElementwiseLogical",
    "Bincount", "BitwiseAnd", "BitwiseLeftShift", "BitwiseNot", "BitwiseOr",
    "BitwiseRightShift", "BitwiseXor", "BlockSparseAttention", "Broadcast", "BroadcastBase",
    "Bucketize", "CTCGreedyDecoder", "CTCGreedyDecoderSeqLen", "CTCLoss", "CausalConv1D",
    "Ceiling", "Clamp", "Col2Im", "ComplexTypeMark", "Concat", "ConcatFromSequence", "Const",
    "Constant", "Convert", "ConvertColorI420Base", "ConvertColorNV12Base",
    "ConvertColorToNV12Base", "ConvertLike", "ConvertPromoteTypes", "Convolution",
    "ConvolutionBackPropBase", "ConvolutionBackpropData", "ConvolutionBase",
    "ConvolutionFwdPropBase", "Cos", "Cosh", "CumSum", "DFT", "DeformableConvolution",
    "DeformableConvolutionBase", "DeformablePSROIPooling", "DepthToSpace", "DetectionOutput",
    "DetectionOutputBase", "Divide", "Einsum", "Elu", "EmbeddingBagOffsets",
    "EmbeddingBagOffsetsBase", "EmbeddingBagOffsetsSum", "EmbeddingBagPacked",
    "EmbeddingBagPackedBase", "EmbeddingBagPackedSum", "EmbeddingSegmentsSum", "Equal", "Erf",
    "ErfInv", "Exp", "ExperimentalDetectronDetectionOutput",
    "ExperimentalDetectronGenerateProposalsSingleImage",
    "ExperimentalDetectronPriorGridGenerator", "ExperimentalDetectronROIFeatureExtractor",
    "ExperimentalDetectronTopKROIs", "ExtractImagePatches", "Eye", "FFTBase", "FakeConvert",
    "FakeQuantize", "Floor", "FloorMod", "FrameworkNode", "GRN", "GRUCell", "GRUSequence",
    "GatedDeltaNet", "Gather", "GatherBase", "GatherElements", "GatherND", "GatherNDBase",
    "GatherTree", "Gelu", "GenerateProposals", "Greater", "GreaterEqual", "GridSample",
    "GroupConvolution", "GroupConvolutionBackpropData", "GroupNormalization", "GroupedMatMul",
    "HSigmoid", "HSwish", "HardSigmoid", "HashTable", "I420toBGR", "I420toRGB", "IDFT", "IRDFT",
    "ISTFT", "Identity", "If", "Interp", "Interpolate", "InterpolateBase", "Inverse",
    "IsFinite", "IsInf", "IsNaN", "LRN", "LSTMCell", "LSTMSequence", "Less", "LessEqual", "Log",
    "LogSoftmax", "LogicalAnd", "LogicalNot", "LogicalOr", "LogicalReduction",
    "LogicalReductionKeepDims", "LogicalXor", "Loop", "MOE", "MVN", "MatMul", "MatrixNms",
    "MaxPool", "MaxPoolBase", "Maximum", "Minimum", "Mish", "Mod", "MultiSubGraphOp",
    "MulticlassNms", "MulticlassNmsBase", "Multinomial", "Multiply", "NMSRotated", "NV12toBGR",
    "NV12toRGB", "Negative", "NonMaxSuppression", "NonZero", "NormalizeL2", "NotEqual",
    "OneHot", "PRelu", "PSROIPooling", "Pad", "PadBase", "PagedAttentionExtension", "Parameter",
    "Power", "PriorBox", "PriorBoxClustered", "Proposal", "QwenSparseAttention", "RDFT",
    "RGBtoNV12", "RMS", "RMSNorm", "RNNCell", "RNNCellBase", "RNNSequence", "ROIAlign",
    "ROIAlignBase", "ROIAlignRotated", "ROIPooling", "RandomPoisson", "RandomUniform", "Range",
    "ReadValue", "ReadValueBase", "ReduceL1", "ReduceL2", "ReduceLogicalAnd", "ReduceLogicalOr",
    "ReduceMax", "ReduceMean", "ReduceMin", "ReduceProd", "ReduceSum", "ReductionBase",
    "RegionYolo", "Relu", "ReorgYolo", "Reshape", "Result", "Reverse", "ReverseSequence",
    "Roll", "Round", "STFT", "ScaleShift", "ScaledDotProductAttention",
    "ScaledDotProductAttentionWithKVCache", "ScatterBase", "ScatterElementsUpdate",
    "ScatterElementsUpdateBase", "ScatterNDBase", "ScatterNDUpdate", "ScatterUpdate",
    "SearchSorted", "SegmentMax", "Select", "Selu", "SequenceAt", "SequenceErase",
    "SequenceInsert", "SequenceLength", "SequenceMark", "SetRows", "ShapeOf", "ShapeOfBase",
    "ShuffleChannels", "Sigmoid", "Sign", "Sin", "Sinh", "Sink", "Slice", "SliceScatter",
    "SoftPlus", "SoftSign", "Softmax", "SpaceToBatch", "SpaceToDepth", "SparseConv",
    "SparseFillEmptyRows", "Split", "Sqrt", "SquaredDifference", "Squeeze", "StridedSlice",
    "StringTensorPack", "StringTensorUnpack", "SubGraphOp", "Subtract", "Swish", "Tan", "Tanh",
    "TensorIterator", "Tile", "TopK", "TopKBase", "Transpose", "UnaryElementwiseArithmetic",
    "Unique", "Unsqueeze", "Variable", "VariadicSplit", "Xor",
]

# Types checked again through the IR reader (the ones ovir implements); IR type -> OpenVINO name.
IR_CHECKED = {
    "Const": "Constant", "Constant": "Constant", "Parameter": "Parameter", "Result": "Result",
    "Convert": "Convert", "Subtract": "Subtract", "Divide": "Divide",
}

# rustfmt's default `fn_call_width`: a tuple whose items are wider goes one item per line. The
# output is laid out as rustfmt would (checked with `rustfmt --check --edition 2024`).
RUSTFMT_CALL_WIDTH = 60

VERSION_ID = re.compile(r"^opset([0-9]+)$")


def version_number(version_id):
    m = VERSION_ID.match(version_id)
    if not m:
        raise SystemExit(f"unexpected version_id {version_id!r}")
    return int(m.group(1))


def available_opsets():
    """The N for which NodeFactory accepts "opsetN"; also every rejection's message, per N."""
    found, rejected = [], {}
    for n in range(PROBE_MAX + 1):
        try:
            NodeFactory(f"opset{n}")
            found.append(n)
        except RuntimeError as e:
            if "Unsupported opset version requested" not in str(e):
                raise
            rejected[n] = "Unsupported opset version requested"
    if found != list(range(1, len(found) + 1)):
        raise SystemExit(f"the opsets found are not opset1..opsetN without holes: {found}")
    return found, rejected


# ---------------------------------------------------------------- IR reader

def _port(pid, dims):
    return f'<port id="{pid}" precision="FP32">' + "".join(f"<dim>{d}</dim>" for d in dims) + "</port>"


def _ir(layers, edges):
    e = "".join(f'<edge from-layer="{a}" from-port="{b}" to-layer="{c}" to-port="{d}"/>'
                for a, b, c, d in edges)
    return f'<?xml version="1.0"?>\n<net name="probe" version="11"><layers>{"".join(layers)}</layers><edges>{e}</edges></net>\n'


def _param(lid, ver):
    return (f'<layer id="{lid}" name="p{lid}" type="Parameter" version="{ver}">'
            f'<data shape="2" element_type="f32"/><output>{_port(0, [2])}</output></layer>')


def _result(lid, ver):
    return f'<layer id="{lid}" name="r{lid}" type="Result" version="{ver}"><input>{_port(0, [2])}</input></layer>'


def ir_for(ir_type, ver):
    """A minimal IR whose layer of `ir_type` says version=`ver`; every other layer is opset1."""
    if ir_type in ("Const", "Constant"):
        c = (f'<layer id="0" name="c" type="{ir_type}" version="{ver}">'
             f'<data element_type="f32" shape="2" offset="0" size="8"/><output>{_port(0, [2])}</output></layer>')
        return _ir([c, _result(1, "opset1")], [(0, 0, 1, 0)])
    if ir_type == "Parameter":
        return _ir([_param(0, ver), _result(1, "opset1")], [(0, 0, 1, 0)])
    if ir_type == "Result":
        return _ir([_param(0, "opset1"), _result(1, ver)], [(0, 0, 1, 0)])
    if ir_type == "Convert":
        cv = (f'<layer id="1" name="cv" type="Convert" version="{ver}"><data destination_type="f32"/>'
              f'<input>{_port(0, [2])}</input><output>{_port(1, [2])}</output></layer>')
        return _ir([_param(0, "opset1"), cv, _result(2, "opset1")], [(0, 0, 1, 0), (1, 1, 2, 0)])
    # binary elementwise
    b = (f'<layer id="2" name="b" type="{ir_type}" version="{ver}"><data auto_broadcast="numpy"/>'
         f'<input>{_port(0, [2])}{_port(1, [2])}</input><output>{_port(2, [2])}</output></layer>')
    return _ir([_param(0, "opset1"), _param(1, "opset1"), b, _result(3, "opset1")],
               [(0, 0, 2, 0), (1, 0, 2, 1), (2, 2, 3, 0)])


def ir_version(core, tmp, ir_type, n):
    """Version of the node OpenVINO builds from an `ir_type` layer at opsetN, or None if it refuses."""
    xml = Path(tmp) / "probe.xml"
    binf = Path(tmp) / "probe.bin"
    xml.write_text(ir_for(ir_type, f"opset{n}"))
    binf.write_bytes(np.zeros(8, np.uint8).tobytes())
    try:
        model = core.read_model(str(xml), str(binf))
    except RuntimeError as e:
        msg = str(e)
        if "doesn't contain the operation with type" in msg or "from unsupported opset" in msg:
            return None
        raise
    name = IR_CHECKED[ir_type]
    nodes = [op for op in model.get_ordered_ops() if op.get_type_info().name == name]
    if len(nodes) != 1:
        raise SystemExit(f"IR probe {ir_type} opset{n}: expected one {name} node, got {len(nodes)}")
    return version_number(nodes[0].get_type_info().version_id)


# ---------------------------------------------------------------- NodeFactory

def measure(opsets, core, tmp):
    """{name: {opset: version}} over CANDIDATES, plus notes on anything unusual."""
    table, notes = {}, []
    for n in opsets:
        factory = NodeFactory(f"opset{n}")
        for name in CANDIDATES:
            try:
                node = factory.create(name)
            except RuntimeError as e:
                msg = str(e)
                if "Couldn't create operation" in msg:
                    continue
                if "doesn't support Constant" in msg:
                    v = ir_version(core, tmp, "Const", n)
                    if v is None:
                        raise SystemExit(f"NodeFactory has {name} in opset{n} but the IR reader does not")
                    table.setdefault(name, {})[n] = v
                    continue
                raise SystemExit(f"NodeFactory('opset{n}').create({name!r}) failed unexpectedly: {msg}")
            info = node.get_type_info()
            if info.name != name:
                notes.append(f"create({name!r}) in opset{n} built a {info.name}")
                continue
            table.setdefault(name, {})[n] = version_number(info.version_id)
    return table, notes


def rows_of(table):
    """(name, version, first, last) rows, one per contiguous run of opsets; and the gaps."""
    rows, gaps = [], []
    for name in sorted(table):
        by_version = {}
        for n, v in sorted(table[name].items()):
            by_version.setdefault(v, []).append(n)
        for v in sorted(by_version):
            ns = by_version[v]
            start = prev = ns[0]
            runs = []
            for n in ns[1:]:
                if n != prev + 1:
                    runs.append((start, prev))
                    start = n
                prev = n
            runs.append((start, prev))
            if len(runs) > 1:
                gaps.append((name, v, runs))
            rows.extend((name, v, a, b) for a, b in runs)
    return rows, gaps


def cross_check_ir(core, tmp, opsets, rejected, table):
    """The IR reader must agree with the table for IR_CHECKED, and refuse an opset NodeFactory rejects."""
    probe = opsets + [max(opsets) + 1]
    for ir_type, name in IR_CHECKED.items():
        for n in probe:
            got = ir_version(core, tmp, ir_type, n)
            want = table.get(name, {}).get(n)
            if got != want:
                raise SystemExit(f"IR reader: {ir_type} at opset{n} gives {got}, table says {want}")
    assert max(opsets) + 1 in rejected


# ---------------------------------------------------------------- output

def _doc(paragraphs):
    """`//!` lines: each paragraph wrapped at 100 columns, a blank `//!` between paragraphs."""
    out = []
    for i, para in enumerate(paragraphs):
        if i:
            out.append("//!")
        out += ["//! " + line for line in textwrap.wrap(
            " ".join(para.split()), 96, break_long_words=False, break_on_hyphens=False)]
    return "\n".join(out) + "\n"


def render(rows, gaps, max_opset, rejected_next, n_candidates, ov_version):
    in_max = sorted({r[0] for r in rows if r[3] == max_opset})
    late = sorted({(r[0], r[1], r[2]) for r in rows if r[1] > r[2]})
    oddities = []
    if gaps:
        oddities.append(
            "Gaps (one row per run): " + "; ".join(
                f"{name}-{v} is in " + " and ".join(
                    f"opset{a}" if a == b else f"opset{a}..{b}" for a, b in runs)
                for name, v, runs in gaps) + ".")
    if late:
        oddities.append(
            "A version number above its first opset (OpenVINO's `version_id` says so): " + "; ".join(
                f"{name}-{v} is already in opset{first}" for name, v, first in late) + ".")
    head = _doc([
        "OpenVINO's operation sets, measured: for every op type and version, the opsets that "
        "hold it.",
        "An IR layer `type=\"T\" version=\"opsetN\"` means the version of `T` that `opsetN` holds: "
        "the row of [`OPSET_OPS`] with name `T` and `first <= N <= last`. A type with no such row "
        "is not in `opsetN`, and OpenVINO refuses the layer (\"Opset opsetN doesn't contain the "
        "operation with type: T\").",
        "**Generated** by `tests/differential/opset_table.py`; do not edit by hand, rerun the "
        "script.",
        f"How it was measured: OpenVINO {ov_version} (Python package). The opsets are the "
        f"`opsetN` that `openvino.utils.node_factory.NodeFactory` accepts: opset1 to "
        f"opset{max_opset}; opset0 and opset{max_opset + 1} (and every N up to {PROBE_MAX}) are "
        f"rejected (\"{rejected_next}\"). For every opset and each of {n_candidates} candidate "
        "names (the opset tables and op classes in OpenVINO's headers, the operation specs in its "
        "docs, old and alias names), `NodeFactory(\"opsetN\").create(name)` either builds a node, "
        "whose `get_type_info().version_id` is `opsetK` for version K, or fails with \"Couldn't "
        "create operation\" (not in that opset). The version is OpenVINO's `version_id`, not the "
        "C++ namespace (`ov::op::v3::Acosh` has `version_id` opset4).",
        "Constant: the IR spells the type `Const`. NodeFactory knows no `Const` in any opset; it "
        "finds `Constant`, then refuses to build it (\"doesn't support Constant node\"), which "
        "counts as present; its version is that of the node `Core.read_model` builds from a "
        "`Const` layer. The IR reader accepts both `Const` and `Constant` and builds the same op, "
        "named `Constant`, which is the name used here: an IR reader maps `Const` to `Constant` "
        "before looking it up.",
        "Cross-checked through the IR reader for Const, Constant, Parameter, Result, Convert, "
        "Subtract and Divide: a minimal IR with that layer at `opsetN` loads exactly where this "
        f"table says, as the version it says, for N from 1 to {max_opset + 1}.",
        f"opset{max_opset} is unfinished in this OpenVINO: it holds only {', '.join(in_max)}. "
        f"Every other type ends at an earlier opset, so a layer of it marked `opset{max_opset}` "
        "is refused.",
    ] + oddities)
    body = [
        "",
        "/// (type name as OpenVINO spells it, version number of the op (the N of the `opsetN` that",
        "/// introduced it), first opset containing it, last opset containing it), sorted by name",
        "/// (byte order, as `str`'s `Ord`) then version, then first opset. A version present in",
        "/// opsets with a gap has one row per contiguous run.",
        "pub const OPSET_OPS: &[(&str, u32, u32, u32)] = &[",
    ]
    for name, v, a, b in rows:
        args = f'"{name}", {v}, {a}, {b}'
        if len(args) <= RUSTFMT_CALL_WIDTH:
            body.append(f"    ({args}),")
        else:  # the layout rustfmt gives a tuple too wide for one line
            body += ["    ("] + [f"        {x}," for x in args.split(", ")] + ["    ),"]
    body += [
        "];",
        "",
        "/// The newest opset that exists in this OpenVINO (an unfinished one: see the module doc).",
        f"pub const MAX_OPSET: u32 = {max_opset};",
        "",
    ]
    return head + "\n".join(body)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=OUT)
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--check", action="store_true", help="exit 1 if --out differs from what would be generated")
    g.add_argument("--stdout", action="store_true", help="print the file instead of writing it")
    args = ap.parse_args()

    t0 = time.monotonic()
    assert CANDIDATES == sorted(set(CANDIDATES)), "keep CANDIDATES sorted and unique"
    opsets, rejected = available_opsets()
    max_opset = max(opsets)
    core = ov.Core()
    with tempfile.TemporaryDirectory() as tmp:
        table, notes = measure(opsets, core, tmp)
        cross_check_ir(core, tmp, opsets, rejected, table)
    rows, gaps = rows_of(table)
    text = render(rows, gaps, max_opset, rejected[max_opset + 1], len(CANDIDATES), ov.__version__)
    elapsed = time.monotonic() - t0

    log = sys.stderr
    print(f"OpenVINO {ov.__version__}: opset1..opset{max_opset}; opset{max_opset + 1} rejected", file=log)
    print(f"{len(table)} types, {len(rows)} rows; not in any opset: "
          f"{', '.join(n for n in CANDIDATES if n not in table)}", file=log)
    last_of = {name: max(ns) for name, ns in table.items()}
    dropped = sorted(n for n, last in last_of.items() if last < max_opset - 1)
    print(f"types whose last opset is before opset{max_opset - 1}: "
          f"{', '.join(f'{n} (..{last_of[n]})' for n in dropped) or 'none'}", file=log)
    print(f"types in opset{max_opset}: {', '.join(sorted(n for n, l in last_of.items() if l == max_opset))}", file=log)
    for name, v, runs in gaps:
        print(f"GAP: {name}-{v} in opsets {runs}", file=log)
    for note in notes:
        print(f"NOTE: {note}", file=log)
    print(f"measured in {elapsed:.1f} s", file=log)

    if args.stdout:
        sys.stdout.write(text)
    elif args.check:
        if not args.out.exists() or args.out.read_text() != text:
            print(f"{args.out} is stale: rerun tests/differential/opset_table.py", file=log)
            sys.exit(1)
        print(f"{args.out} is up to date", file=log)
    else:
        args.out.write_text(text)
        print(f"wrote {args.out}", file=log)


if __name__ == "__main__":
    main()
