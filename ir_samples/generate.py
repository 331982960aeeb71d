#!/usr/bin/env python3
"""Regenerates ir_samples/ with the `openvino` PyPI package.

    python3 -m venv .venv && .venv/bin/pip install openvino numpy onnx
    .venv/bin/python ir_samples/generate.py

Every sample is a folder `<case>/` holding `model.xml` and (when it has Consts) `model.bin`.
Most are written by OpenVINO itself (`ov.save_model`, `ov.convert_model`); a few are written by
hand where OpenVINO cannot produce them (IR v10, an explicit pdpd axis). `bad/` holds broken IRs,
one per error class, written by hand from a small valid model.

Expected outputs are first written as `expected/output<k>.npy`, then renamed to the file names
`ovir run -o` gives each output (so `ovir run ... --expect <case>/expected` works); that last
step asks `ovir info` for the output names (`$OVIR`, default target/release/ovir, built if
missing).

The output is deterministic for a given OpenVINO version, except the runtime version string that
OpenVINO records in `<rt_info>`.
"""

import os
import json
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import openvino as ov
import openvino.opset13 as ops
from openvino.utils.node_factory import NodeFactory

HERE = Path(__file__).resolve().parent


def fresh_dir(name):
    d = HERE / name
    if d.exists():
        shutil.rmtree(d)
    d.mkdir(parents=True)
    return d


def save(model, name, compress=False):
    d = fresh_dir(name)
    ov.save_model(model, str(d / "model.xml"), compress_to_fp16=compress)
    bin_path = d / "model.bin"
    if bin_path.exists() and bin_path.stat().st_size == 0:
        bin_path.unlink()
    return d


def param(shape, dtype, name):
    p = ops.parameter(ov.PartialShape(shape) if isinstance(shape, str) else shape, dtype, name=name)
    p.output(0).get_tensor().set_names({name})
    return p


def model(results, params, name):
    return ov.Model(results, params, name)


# ----------------------------------------------------------------------------------------------
# Valid samples written by OpenVINO.


def sub_div(name):
    """(a - b) / c with an f32 Const c."""
    a = param([2, 3], np.float32, "a")
    b = param([2, 3], np.float32, "b")
    c = ops.constant(np.array([1.5, -2.0, 4.0], dtype=np.float32), name="c")
    s = ops.subtract(a, b, name="sub")
    d = ops.divide(s, c, name="div")
    d.output(0).get_tensor().set_names({"out"})
    return model([d], [a, b], name)


def seed_none():
    a = param([256, 56], np.float32, "a")
    b = param([256, 56], np.float32, "b")
    s = ops.subtract(a, b, auto_broadcast="none", name="sub")
    s.output(0).get_tensor().set_names({"out"})
    return model([s], [a, b], "seed_none")


def seed_numpy():
    a = param([8, 1, 6, 1], np.float32, "a")
    b = param([7, 1, 5], np.float32, "b")
    s = ops.subtract(a, b, name="sub")
    s.output(0).get_tensor().set_names({"out"})
    return model([s], [a, b], "seed_numpy")


def pdpd():
    """pdpd Subtract and Divide; OpenVINO writes axis 0 for Python-built ops."""
    a = param([2, 3, 4, 5], np.float32, "a")
    b = param([2, 3], np.float32, "b")
    s = ops.subtract(a, b, auto_broadcast="pdpd", name="sub_pdpd")
    c = ops.constant(np.array([[2.0], [4.0]], dtype=np.float32), name="c")  # [2,1] at axis 0
    d = ops.divide(s, c, auto_broadcast="pdpd", name="div_pdpd")
    d.output(0).get_tensor().set_names({"out"})
    return model([d], [a, b], "pdpd")


def dynamic():
    a = param("?,3", np.float32, "a")
    b = param("1..10,?", np.float32, "b")
    c = param("...", np.float32, "c")
    s = ops.subtract(a, b, name="sub")
    d = ops.divide(s, c, name="div")
    d.output(0).get_tensor().set_names({"out"})
    return model([d], [a, b, c], "dynamic")


def int_divide():
    a = param([7], np.int32, "a")
    b = param([7], np.int32, "b")
    factory = NodeFactory("opset1")
    floor = factory.create("Divide", [a.output(0), b.output(0)], {"m_pythondiv": True})
    trunc = factory.create("Divide", [a.output(0), b.output(0)], {"m_pythondiv": False})
    floor.set_friendly_name("floor_div")
    trunc.set_friendly_name("trunc_div")
    floor.output(0).get_tensor().set_names({"floor"})
    trunc.output(0).get_tensor().set_names({"trunc"})
    return model([floor, trunc], [a, b], "int_divide")


def multi_output():
    """Two Results on one tensor, a Result fed by a Parameter, a Parameter used twice."""
    a = param([4], np.float32, "a")
    b = param([4], np.float32, "b")
    s = ops.subtract(a, a, name="a_minus_a")
    s.output(0).get_tensor().set_names({"zero"})
    r1 = ops.result(s, name="r_zero")
    r2 = ops.result(s, name="r_zero_again")
    r3 = ops.result(b, name="r_b")
    m = ov.Model([r1, r2, r3], [a, b], "multi_output")
    return m


def onnx_model():
    """An ONNX Sub/Div graph converted with ov.convert_model (nested rt_info)."""
    import onnx
    from onnx import TensorProto, helper

    # Inputs only: ov.convert_model rewrites a float Sub of a constant into Add and a Div by a
    # constant into Multiply.
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])
    w = helper.make_tensor_value_info("w", TensorProto.FLOAT, [2, 1])
    z = helper.make_tensor_value_info("z", TensorProto.FLOAT, [2, 3])
    g = helper.make_graph(
        [
            helper.make_node("Sub", ["x", "y"], ["d"], name="sub"),
            helper.make_node("Div", ["d", "w"], ["z"], name="div"),
        ],
        "onnx_sub_div",
        [x, y, w],
        [z],
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], producer_name="ovir")
    m.ir_version = 8
    tmp = HERE / "onnx_sub_div.onnx.tmp"
    onnx.save(m, str(tmp))
    try:
        return ov.convert_model(str(tmp))
    finally:
        tmp.unlink()


# ----------------------------------------------------------------------------------------------
# Hand-written samples.

V10 = """<?xml version="1.0"?>
<net name="v10_handwritten" version="10">
	<layers>
		<layer id="0" name="x" type="Parameter" version="opset1">
			<data shape="2,2" element_type="i64"/>
			<output>
				<port id="0" precision="I64">
					<dim>2</dim>
					<dim>2</dim>
				</port>
			</output>
		</layer>
		<layer id="1" name="k" type="Const" version="opset1">
			<data element_type="i64" shape="2" offset="0" size="16"/>
			<output>
				<port id="0" precision="I64">
					<dim>2</dim>
				</port>
			</output>
		</layer>
		<layer id="2" name="sub" type="Subtract" version="opset1">
			<data auto_broadcast="numpy"/>
			<input>
				<port id="0"><dim>2</dim><dim>2</dim></port>
				<port id="1"><dim>2</dim></port>
			</input>
			<output>
				<port id="2" precision="I64"><dim>2</dim><dim>2</dim></port>
			</output>
		</layer>
		<layer id="3" name="div" type="Divide" version="opset1">
			<data auto_broadcast="numpy" m_pythondiv="false"/>
			<input>
				<port id="0"><dim>2</dim><dim>2</dim></port>
				<port id="1"><dim>2</dim></port>
			</input>
			<output>
				<port id="2" precision="I64"><dim>2</dim><dim>2</dim></port>
			</output>
		</layer>
		<layer id="4" name="out" type="Result" version="opset1">
			<input>
				<port id="0"><dim>2</dim><dim>2</dim></port>
			</input>
		</layer>
	</layers>
	<edges>
		<edge from-layer="0" from-port="0" to-layer="2" to-port="0"/>
		<edge from-layer="1" from-port="0" to-layer="2" to-port="1"/>
		<edge from-layer="2" from-port="2" to-layer="3" to-port="0"/>
		<edge from-layer="1" from-port="0" to-layer="3" to-port="1"/>
		<edge from-layer="3" from-port="2" to-layer="4" to-port="0"/>
	</edges>
	<meta_data>
		<MO_version value="handwritten"/>
		<cli_parameters>
			<input_model value="none"/>
		</cli_parameters>
	</meta_data>
</net>
"""


def write_v10():
    d = fresh_dir("v10_handwritten")
    (d / "model.xml").write_text(V10)
    (d / "model.bin").write_bytes(struct.pack("<2q", 3, -2))


def write_pdpd_axis():
    """OpenVINO's Python API cannot set a pdpd axis (it always writes 0): written by hand."""
    d = fresh_dir("pdpd_axis1")
    layers = [
        layer(0, "a", "Parameter", 'shape="2,3,4,5" element_type="f32"', outputs=[port(0, [2, 3, 4, 5], "FP32", "a")]),
        layer(1, "b", "Parameter", 'shape="3,4" element_type="f32"', outputs=[port(0, [3, 4], "FP32", "b")]),
        layer(
            2,
            "sub_pdpd_axis1",
            "Subtract",
            'auto_broadcast="pdpd" auto_broadcast.auto_broadcast_axis="1"',
            inputs=[port(0, [2, 3, 4, 5]), port(1, [3, 4])],
            outputs=[port(2, [2, 3, 4, 5], "FP32", "out")],
        ),
        layer(3, "out", "Result", inputs=[port(0, [2, 3, 4, 5])]),
    ]
    edges = [edge(0, 0, 2, 0), edge(1, 0, 2, 1), edge(2, 2, 3, 0)]
    (d / "model.xml").write_text(net(layers, edges, name="pdpd_axis1"))


QUIRKS = r"""<?xml version="1.0" encoding="UTF-8"?>
<!-- Hand-written: every reader quirk ovir must tolerate in one valid file. -->
<net name="reader_quirks" version="11">
	<meta_data>
		<MO_version value="2023.0"/>
		<cli_parameters><input_model value="x.onnx"/></cli_parameters>
	</meta_data>
	<quantization_parameters><config>{}</config><version value="1"/></quantization_parameters>
	<some_future_section><with><nested deep="yes"/></with></some_future_section>
	<layers>
		<layer id="10" name="a" type="parameter" version="opset1">
			<data shape=" [ 2 , 3 ] " element_type="F32"/>
			<rt_info><attribute name="old_api_map_order" version="0" value=""/></rt_info>
			<output>
				<port id="0" precision="FP32" names="a,alias\, with comma">
					<dim>2</dim>
					<dim> 3 </dim>
					<rt_info><attribute name="fused_names" version="0" value="a"/></rt_info>
				</port>
			</output>
		</layer>
		<layer id="11" name="b" type="Parameter" version="opset17">
			<data shape="3" element_type="f32"/>
			<output>
				<port id="0" precision="f32" names="b"><dim>3</dim></port>
			</output>
		</layer>
		<!-- type="Const": OpenVINO 2026.4 accepts type="Constant" too but then reads no data
		     from the .bin (it loads zeros), so Constant is spelled in lower case only in tests. -->
		<layer id="12" name="k" type="Const" version="opset13">
			<data element_type="f32" shape="" offset="3" size="5"/>
			<output>
				<port id="0" precision="FP32"/>
			</output>
		</layer>
		<!-- Ports listed with ids 1, 0: edges bind by position in the list, so to-port 0 is the
		     second input (the subtrahend). -->
		<layer id="13" name="b_minus_a" type="SUBTRACT" version="opset16">
			<data auto_broadcast="NUMPY"/>
			<input>
				<port id="1" precision="FP32"><dim>3</dim></port>
				<port id="0" precision="FP32"><dim>2</dim><dim>3</dim></port>
			</input>
			<output>
				<port id="2" precision="FP32" names="diff"><dim>2</dim><dim>3</dim></port>
			</output>
		</layer>
		<layer id="14" name="scaled" type="divide" version="opset1">
			<data auto_broadcast="numpy" pythondiv="0"/>
			<input>
				<port id="0"><dim>2</dim><dim>3</dim></port>
				<port id="1"/>
			</input>
			<output>
				<port id="2" precision="FP32"><dim>2</dim><dim>-1</dim></port>
			</output>
		</layer>
		<layer id="15" name="result" type="Result" version="opset1" output_names="y\,1,y2">
			<input><port id="0"><dim>2</dim><dim>3</dim></port></input>
		</layer>
	</layers>
	<edges>
		<edge from-layer="10" from-port="0" to-layer="13" to-port="0"/>
		<edge from-layer="11" from-port="0" to-layer="13" to-port="1"/>
		<edge from-layer="13" from-port="2" to-layer="14" to-port="0"/>
		<edge from-layer="12" from-port="0" to-layer="14" to-port="1"/>
		<edge from-layer="14" from-port="2" to-layer="15" to-port="0"/>
	</edges>
	<rt_info>
		<info name="OpenVINO Runtime" value="handwritten"/>
		<conversion_parameters>
			<framework value="onnx"/>
			<nested><deeper value="x"/></nested>
		</conversion_parameters>
		<![CDATA[ ignored <text> ]]>
	</rt_info>
</net>
"""


def write_dead_branch():
    """Layers that feed no Result (OpenVINO's writer drops them, so this is hand-written)."""
    d = fresh_dir("dead_branch")
    layers = [
        layer(0, "a", "Parameter", 'shape="4" element_type="i32"', outputs=[port(0, [4], "I32", "a")]),
        layer(1, "b", "Parameter", 'shape="4" element_type="i32"', outputs=[port(0, [4], "I32", "b")]),
        layer(2, "unused_in", "Parameter", 'shape="1" element_type="i32"', outputs=[port(0, [1], "I32", "unused_in")]),
        layer(3, "live", "Subtract", None, [port(0, [4]), port(1, [4])], [port(2, [4], "I32", "out")]),
        layer(4, "dead_div", "Divide", None, [port(0, [4]), port(1, [4])], [port(2, [4], "I32")]),
        layer(5, "dead_sub", "Subtract", None, [port(0, [4]), port(1, [1])], [port(2, [4], "I32")]),
        layer(6, "out", "Result", inputs=[port(0, [4])]),
    ]
    edges = [
        edge(0, 0, 3, 0),
        edge(1, 0, 3, 1),
        edge(3, 2, 6, 0),
        edge(0, 0, 4, 0),
        edge(1, 0, 4, 1),
        edge(4, 2, 5, 0),
        edge(2, 0, 5, 1),
    ]
    (d / "model.xml").write_text(net(layers, edges, name="dead_branch"))


def write_quirks():
    d = fresh_dir("reader_quirks")
    (d / "model.xml").write_text(QUIRKS)
    # The scalar f32 Const lives at the unaligned offset 3; the byte after it is extra.
    (d / "model.bin").write_bytes(b"\x00\x00\x00" + struct.pack("<f", 2.0) + b"\xff\xff")


# ----------------------------------------------------------------------------------------------
# Broken IRs: one per error class. Each is a small valid model with one thing broken.


def port(pid, dims, precision=None, names=None):
    attrs = f' id="{pid}"'
    if precision:
        attrs += f' precision="{precision}"'
    if names:
        attrs += f' names="{names}"'
    body = "".join(f"<dim>{d}</dim>" for d in dims)
    return f"<port{attrs}>{body}</port>"


def layer(lid, name, ty, data=None, inputs=(), outputs=(), version="opset1"):
    s = f'\t\t<layer id="{lid}" name="{name}" type="{ty}" version="{version}">\n'
    if data is not None:
        s += f"\t\t\t<data {data}/>\n"
    if inputs:
        s += "\t\t\t<input>\n" + "".join(f"\t\t\t\t{p}\n" for p in inputs) + "\t\t\t</input>\n"
    if outputs:
        s += "\t\t\t<output>\n" + "".join(f"\t\t\t\t{p}\n" for p in outputs) + "\t\t\t</output>\n"
    return s + "\t\t</layer>\n"


def edge(fl, fp, tl, tp):
    return f'\t\t<edge from-layer="{fl}" from-port="{fp}" to-layer="{tl}" to-port="{tp}"/>\n'


def net(layers, edges, version="11", root="net", name="bad"):
    return (
        '<?xml version="1.0"?>\n'
        f'<{root} name="{name}" version="{version}">\n\t<layers>\n'
        + "".join(layers)
        + "\t</layers>\n\t<edges>\n"
        + "".join(edges)
        + f"\t</edges>\n</{root}>\n"
    )


def base_layers(**over):
    """a, b -> Subtract(2) -> Divide(3, by b) -> Result(4), with overrides by key."""
    parts = {
        "a": layer(0, "a", "Parameter", 'shape="2,3" element_type="f32"', outputs=[port(0, [2, 3], "FP32", "a")]),
        "b": layer(1, "b", "Parameter", 'shape="2,3" element_type="f32"', outputs=[port(0, [2, 3], "FP32", "b")]),
        "sub": layer(
            2,
            "sub",
            "Subtract",
            'auto_broadcast="numpy"',
            inputs=[port(0, [2, 3]), port(1, [2, 3])],
            outputs=[port(2, [2, 3], "FP32")],
        ),
        "div": layer(
            3,
            "div",
            "Divide",
            'auto_broadcast="numpy" m_pythondiv="true"',
            inputs=[port(0, [2, 3]), port(1, [2, 3])],
            outputs=[port(2, [2, 3], "FP32", "out")],
        ),
        "res": layer(4, "out", "Result", inputs=[port(0, [2, 3])]),
    }
    parts.update(over)
    return [v for v in parts.values() if v]


def base_edges(extra=(), drop=()):
    es = {
        "a_sub": edge(0, 0, 2, 0),
        "b_sub": edge(1, 0, 2, 1),
        "sub_div": edge(2, 2, 3, 0),
        "b_div": edge(1, 0, 3, 1),
        "div_res": edge(3, 2, 4, 0),
    }
    return [v for k, v in es.items() if k not in drop] + list(extra)


def const_layer(lid, offset, size, shape="3", ty="f32"):
    dims = [int(d) for d in shape.split(",") if d.strip()]
    return layer(
        lid,
        "k",
        "Const",
        f'element_type="{ty}" shape="{shape}" offset="{offset}" size="{size}"',
        outputs=[port(0, dims, ty.upper().replace("F", "FP"))],
    )


def write_bad():
    d = fresh_dir("bad")
    cases = {}

    cases["malformed_xml"] = net(base_layers(), base_edges()).replace("</layers>", "</layer>", 1)
    cases["not_an_ir"] = net(base_layers(), base_edges(), root="model")
    cases["version_9"] = net(base_layers(), base_edges(), version="9")
    # A type no opset has (a typo): OpenVINO refuses it; a custom op would name its own opset.
    cases["unsupported_op"] = net(
        base_layers(sub=layer(2, "sub", "Subtrakt", None, [port(0, [2, 3]), port(1, [2, 3])], [port(2, [2, 3], "FP32")])),
        base_edges(),
    )
    # Subtract is in opset1 to opset16; OpenVINO 2026.4's opset17 lacks it.
    cases["unsupported_opset"] = net(
        base_layers(
            sub=layer(
                2, "sub", "Subtract", None, [port(0, [2, 3]), port(1, [2, 3])], [port(2, [2, 3], "FP32")], "opset17"
            )
        ),
        base_edges(),
    )
    cases["no_such_opset"] = net(
        base_layers(
            sub=layer(
                2, "sub", "Subtract", None, [port(0, [2, 3]), port(1, [2, 3])], [port(2, [2, 3], "FP32")], "opset99"
            )
        ),
        base_edges(),
    )
    cases["bad_pythondiv"] = net(
        base_layers(
            div=layer(
                3,
                "div",
                "Divide",
                'auto_broadcast="numpy" m_pythondiv="maybe"',
                [port(0, [2, 3]), port(1, [2, 3])],
                [port(2, [2, 3], "FP32")],
            )
        ),
        base_edges(),
    )
    cases["bad_auto_broadcast"] = net(
        base_layers(
            sub=layer(
                2, "sub", "Subtract", 'auto_broadcast="bogus"', [port(0, [2, 3]), port(1, [2, 3])], [port(2, [2, 3], "FP32")]
            )
        ),
        base_edges(),
    )
    def with_param(key, lid, data, dims=(2, 3), precision="FP32"):
        """The base model with Parameter `key` replaced."""
        p = layer(lid, key, "Parameter", data, outputs=[port(0, list(dims), precision)])
        return net(base_layers(**{key: p}), base_edges())

    cases["missing_attribute"] = with_param("a", 0, 'shape="2,3"')
    cases["bad_shape"] = with_param("a", 0, 'shape="2,-3" element_type="f32"')
    cases["reversed_interval"] = with_param("a", 0, 'shape="2,3..1" element_type="f32"')
    cases["bad_element_type"] = with_param("a", 0, 'shape="2,3" element_type="fp32"')
    cases["bad_precision"] = with_param("b", 1, 'shape="2,3" element_type="f32"', precision="fp32")
    cases["bad_dim"] = with_param("b", 1, 'shape="2,3" element_type="f32"', dims=(2, "?"))
    cases["port_count"] = net(
        base_layers(sub=layer(2, "sub", "Subtract", None, [port(0, [2, 3])], [port(2, [2, 3], "FP32")])),
        base_edges(drop=("b_sub",)),
    )
    cases["duplicate_port_id"] = net(
        base_layers(sub=layer(2, "sub", "Subtract", None, [port(0, [2, 3]), port(0, [2, 3])], [port(2, [2, 3], "FP32")])),
        base_edges(),
    )
    cases["duplicate_layer_id"] = net(
        base_layers(res=layer(3, "out", "Result", inputs=[port(0, [2, 3])])),
        base_edges(drop=("div_res",), extra=[edge(3, 2, 3, 0)]),
    )
    cases["unknown_layer"] = net(base_layers(), base_edges(drop=("b_div",), extra=[edge(9, 0, 3, 1)]))
    cases["unknown_port"] = net(base_layers(), base_edges(drop=("b_div",), extra=[edge(1, 0, 3, 7)]))
    cases["input_fed_twice"] = net(base_layers(), base_edges(extra=[edge(0, 0, 3, 1)]))
    cases["missing_input"] = net(base_layers(), base_edges(drop=("b_div",)))
    cases["cycle"] = net(
        base_layers(),
        base_edges(drop=("a_sub",), extra=[edge(3, 2, 2, 0)]),
    )
    cases["no_result"] = net(base_layers(res=None), base_edges(drop=("div_res",)))
    cases["layer_structure"] = net(
        base_layers(
            sub=layer(2, "sub", "Subtract", 'auto_broadcast="numpy"', [port(0, [2, 3]), port(1, [2, 3])], [port(2, [2, 3], "FP32")]).replace(
                "<data", '<data auto_broadcast="none"/>\n\t\t\t<data', 1
            )
        ),
        base_edges(),
    )
    cases["doctype_entities"] = '<?xml version="1.0"?>\n<!DOCTYPE net [<!ENTITY lol "lol">]>\n' + net(
        base_layers(), base_edges()
    ).split("\n", 1)[1]
    cases["many_errors"] = net(
        base_layers(
            a=layer(0, "a", "Parameter", 'shape="2,x" element_type="f32"', outputs=[port(0, [2, 3], "FP32")]),
            sub=layer(2, "sub", "Mutliply", None, [port(0, [2, 3]), port(1, [2, 3])], [port(2, [2, 3], "FP32")]),
        ),
        base_edges(drop=("b_div",), extra=[edge(1, 5, 3, 1), edge(7, 0, 4, 0)]),
    )

    cases["no_layers_section"] = '<?xml version="1.0"?>\n<net name="bad" version="11">\n\t<edges/>\n</net>\n'
    cases["duplicate_edges_section"] = net(base_layers(), base_edges()).replace(
        "\t</edges>\n", "\t</edges>\n\t<edges>\n" + edge(0, 0, 2, 0) + "\t</edges>\n"
    )
    cases["edge_missing_attribute"] = net(base_layers(), base_edges()).replace(' from-port="0" to-layer="2" to-port="1"', ' to-layer="2" to-port="1"', 1)

    # Types and shapes (found by `check`; the file itself loads).
    def two_inputs(shape_a, shape_b, ty_a="f32", ty_b="f32", data='auto_broadcast="numpy"', out=(2, 3), ty="Subtract"):
        """Parameters a, b -> one op -> Result, with declared dims written as OpenVINO would."""
        prec = {"f32": "FP32", "i32": "I32", "boolean": "BOOL", "u4": "U4"}
        def dims(text):
            return [int(x) if x.strip().isdigit() else -1 for x in text.split(",") if x.strip()]

        layers = [
            layer(0, "a", "Parameter", f'shape="{shape_a}" element_type="{ty_a}"', outputs=[port(0, dims(shape_a), prec[ty_a], "a")]),
            layer(1, "b", "Parameter", f'shape="{shape_b}" element_type="{ty_b}"', outputs=[port(0, dims(shape_b), prec[ty_b], "b")]),
            layer(2, "op", ty, data, [port(0, dims(shape_a)), port(1, dims(shape_b))], [port(2, list(out), prec[ty_a], "out")]),
            layer(3, "out", "Result", inputs=[port(0, list(out))]),
        ]
        return net(layers, [edge(0, 0, 2, 0), edge(1, 0, 2, 1), edge(2, 2, 3, 0)])

    cases["shape_numpy_mismatch"] = two_inputs("2,3", "4")
    cases["shape_none_mismatch"] = two_inputs("2,3", "3,2", data='auto_broadcast="none"')
    cases["shape_pdpd_rank"] = two_inputs(
        "2,3", "1,2,3", data='auto_broadcast="pdpd" auto_broadcast.auto_broadcast_axis="-1"'
    )
    cases["shape_pdpd_b_larger"] = two_inputs(
        "2,1,4", "3,4", data='auto_broadcast="pdpd" auto_broadcast.auto_broadcast_axis="1"', out=(2, 1, 4)
    )
    cases["type_mismatch"] = two_inputs("2,3", "2,3", ty_b="i32")
    cases["boolean_arithmetic"] = two_inputs("2,3", "2,3", ty_a="boolean", ty_b="boolean", ty="Divide")
    cases["declared_dims_lie"] = two_inputs("2,3", "3", out=(2, 7))
    cases["declared_rank_lies"] = two_inputs("2,3", "3", out=(1, 2, 3))
    # The Parameter declares dim 2 where its shape says 1..4 (written as -1 by OpenVINO).
    cases["declared_static_vs_interval"] = two_inputs("1..4,3", "3", out=(-1, 3)).replace(
        '<dim>-1</dim><dim>3</dim></port>\n\t\t\t</output>', '<dim>2</dim><dim>3</dim></port>\n\t\t\t</output>', 1
    )
    cases["pdpd_missing_axis"] = two_inputs("2,3,4", "3,4", data='auto_broadcast="pdpd"', out=(2, 3, 4))
    cases["precision_mismatch"] = two_inputs("2,3", "2,3").replace(
        '<port id="2" precision="FP32" names="out">', '<port id="2" precision="FP16" names="out">', 1
    )
    cases["cannot_run_u4"] = two_inputs("2,3", "2,3", ty_a="u4", ty_b="u4")

    # Weights: a Const k [3] f32 feeding the Divide instead of b.
    def const_case(offset, size, shape="3", ty="f32"):
        dims = [int(x) for x in shape.split(",") if x.strip()]
        layers = base_layers(
            k=const_layer(5, offset, size, shape, ty),
            div=layer(
                3,
                "div",
                "Divide",
                'auto_broadcast="numpy"',
                [port(0, [2, 3]), port(1, dims)],
                [port(2, [2, 3], "FP32")],
            ),
        )
        return net(layers, base_edges(drop=("b_div",), extra=[edge(5, 0, 3, 1)]))

    weights = struct.pack("<3f", 1.0, 2.0, 4.0)
    bins = {}
    cases["short_bin"] = const_case(4, 12)
    bins["short_bin"] = weights
    cases["const_size_too_small"] = const_case(0, 8)
    bins["const_size_too_small"] = weights
    cases["missing_bin"] = const_case(0, 12)
    cases["const_too_large"] = const_case(0, 12, shape="4294967296,4294967296,2")
    bins["const_too_large"] = weights

    for name, text in cases.items():
        (d / f"{name}.xml").write_text(text)
    for name, data in bins.items():
        (d / f"{name}.bin").write_bytes(data)
    (d / "README.md").write_text(
        "Broken IR files, one per error class, written by `../generate.py`.\n"
        "`cargo test` snapshots the error report of each (`tests/snapshots/`).\n"
    )


# ----------------------------------------------------------------------------------------------
# Inputs and expected outputs for every valid sample.
#
# Expected values come from OpenVINO's reference evaluation: the Parameters are replaced by
# Constants holding the inputs and the ConstantFolding pass evaluates the graph (this is
# `Node.evaluate`, not the CPU plugin, which gets these ops wrong). IR v10 files are folded as
# v11, because OpenVINO's v10 loader would change the output types (ovir runs the graph as
# written).

# Concrete shapes for dynamic inputs: {sample: {input: shape}}.
CONCRETE = {"dynamic": {"a": [4, 3], "b": [1, 3], "c": [3]}, "shape_subgraph": {"x": [2, 5, 12]}}


def sample_inputs(name, model, rng):
    out = {}
    for p in model.get_parameters():
        pname = p.get_friendly_name()
        shape = CONCRETE.get(name, {}).get(pname) or [d.get_length() for d in p.get_partial_shape()]
        et = p.get_element_type().to_dtype()
        if np.issubdtype(et, np.integer):
            lo, hi = (1, 120) if np.issubdtype(et, np.unsignedinteger) else (-120, 120)
            v = rng.integers(lo, hi, size=shape).astype(et)
            if not np.issubdtype(et, np.unsignedinteger):
                v[v == 0] = 7  # no division by zero in samples that are meant to run
        else:
            v = (rng.standard_normal(size=shape) * 10).astype(et)
        out[pname] = v
    return out


def fold_with_reference(model, inputs):
    """OpenVINO's reference evaluation (constant folding) of `model` on `inputs`
    ({parameter name: (type name, values)})."""
    from openvino import passes

    spec = spec_module()
    m = model.clone()
    for p in list(m.get_parameters()):
        t, v = inputs[p.get_friendly_name()]
        c = spec.constant(v, t)
        for target in list(p.output(0).get_target_inputs()):
            target.replace_source_output(c.output(0))
        m.remove_parameter(p)
    # Constants read from a .bin share its memory map; give them their own copies (packed types
    # byte for byte: get_data() shows their storage).
    packed = {ov.Type.u1, ov.Type.u2, ov.Type.u4, ov.Type.i4, ov.Type.nf4, ov.Type.f4e2m1, ov.Type.f8e4m3, ov.Type.f8e5m2, ov.Type.f8e8m0}
    for node in m.get_ordered_ops():
        if node.get_type_name() == "Constant":
            et = node.get_element_type()
            if et in packed:
                raw = np.array(node.get_data()).view(np.uint8).tobytes()
                fresh = packed_constant(et, list(node.get_output_shape(0)), raw)
            else:
                fresh = ops.constant(np.array(node.get_data()), dtype=et)
            for target in list(node.output(0).get_target_inputs()):
                target.replace_source_output(fresh.output(0))
    # Shapes inferred for dynamic Parameters become static: ConstantFolding folds only then.
    m.validate_nodes_and_infer_types()
    pm = passes.Manager()
    pm.register_pass(passes.ConstantFolding())
    pm.run_passes(m)
    outputs = []
    for r in m.get_results():
        node = r.input_value(0).get_node()
        assert node.get_type_name() == "Constant", f"{m.get_friendly_name()}: {node.get_type_name()} was not folded"
        outputs.append(np.array(node.get_data()))
    return outputs


def write_expected(d):
    import tempfile

    name = d.name
    text = (d / "model.xml").read_text().replace('<net name="v10_handwritten" version="10">', '<net name="v10_handwritten" version="11">')
    rng = np.random.default_rng(sum(map(ord, name)))
    with tempfile.TemporaryDirectory() as tmp:
        xml = Path(tmp) / "model.xml"
        xml.write_text(text)
        if (d / "model.bin").exists():
            shutil.copy(d / "model.bin", Path(tmp) / "model.bin")
        model = ov.Core().read_model(str(xml))
        inputs = sample_inputs(name, model, rng)
        types = {p.get_friendly_name(): p.get_element_type().get_type_name() for p in model.get_parameters()}
        outputs = fold_with_reference(model, {n: (types[n], v) for n, v in inputs.items()})
    (d / "inputs").mkdir(exist_ok=True)
    (d / "expected").mkdir(exist_ok=True)
    for pname, v in inputs.items():
        np.save(d / "inputs" / f"{pname}.npy", v)
    for k, v in enumerate(outputs):
        np.save(d / "expected" / f"output{k}.npy", v)


# ONNX backend node tests converted for ir_samples/onnx_node: the elementwise ops ovir runs.
ONNX_NODE_PREFIXES = (
    "test_sub", "test_div", "test_add", "test_mul", "test_max_", "test_min_", "test_pow", "test_mod",
    "test_equal", "test_less", "test_greater", "test_and", "test_or", "test_xor", "test_not",
    "test_bitwise", "test_bitshift", "test_where", "test_abs", "test_neg", "test_sign", "test_ceil",
    "test_floor", "test_round", "test_sqrt", "test_exp", "test_log", "test_sin", "test_cos",
    "test_tan", "test_asin", "test_acos", "test_atan", "test_sinh", "test_cosh", "test_asinh",
    "test_acosh", "test_atanh", "test_erf", "test_relu", "test_sigmoid", "test_clip", "test_elu",
    "test_gelu", "test_hardswish", "test_hardsigmoid", "test_softplus", "test_softsign", "test_mish",
    "test_selu", "test_prelu", "test_leakyrelu", "test_isnan", "test_isinf", "test_castlike",
    # Data movement (issue 19).
    "test_transpose", "test_tile", "test_range", "test_slice", "test_expand", "test_identity",
    "test_constant_pad", "test_edge_pad", "test_reflect_pad", "test_wrap_pad", "test_depthtospace",
    "test_spacetodepth", "test_concat", "test_split", "test_reshape", "test_squeeze", "test_unsqueeze",
    "test_shape", "test_gather", "test_nonzero", "test_top_k", "test_onehot", "test_matmul_", "test_reduce_",
    "test_softmax", "test_logsoftmax", "test_mvn", "test_lpnormalization", "test_einsum", "test_scatter",
    "test_argmax", "test_argmin", "test_hardmax", "test_attention", "test_layer_normalization", "test_rms_normalization",
    # Convolution, normalisation and resizing (issue 20).
    "test_conv", "test_basic_conv", "test_convtranspose", "test_resize", "test_upsample", "test_batchnorm",
    "test_lrn", "test_globalaveragepool", "test_globalmaxpool", "test_maxpool", "test_averagepool",
)
# Not elementwise, or conversions between types ovir does not compute; ONNX optional and
# sequence values (test_identity_opt, test_identity_sequence), which are no tensors.
ONNX_NODE_EXCLUDE = ("test_maxunpool", "test_equal_string",
                     "test_identity_opt", "test_identity_sequence")
# Ops whose ONNX expected values are float32 numpy formulas (not correctly rounded, several
# roundings): compared within this many ulps (tolerance.txt); ovir's are within 1 ulp of exact.
ONNX_APPROX = ("test_exp", "test_log", "test_sin", "test_cos", "test_tan", "test_asin", "test_acos",
               "test_atan", "test_sinh", "test_cosh", "test_asinh", "test_acosh", "test_atanh",
               "test_erf", "test_sigmoid", "test_elu", "test_gelu", "test_hardswish", "test_hardsigmoid",
               "test_softplus", "test_softsign", "test_mish", "test_selu", "test_pow",
               # Sums in another order than numpy's float32 pairwise (reductions) and BLAS (MatMul).
               "test_matmul_", "test_reduce_sum", "test_reduce_mean", "test_reduce_l", "test_reduce_prod",
               "test_reduce_log")
ONNX_APPROX_ULPS = 4
# Ops whose ONNX expected values are float32 numpy formulas that cancel (x − mean near the mean)
# or sum in another order (attention, einsum): an ulp count is meaningless near 0, so they are
# compared as `close RTOL ATOL` by the output's type (bf16 and f16 tests compute in their type).
ONNX_CLOSE = ("test_attention", "test_layer_normalization", "test_rms_normalization", "test_mvn",
              "test_einsum", "test_lpnormalization", "test_softmax", "test_logsoftmax",
              # Sums of products in another order than the tests' numpy (float32) formulas.
              "test_conv", "test_basic_conv", "test_convtranspose", "test_resize", "test_upsample", "test_batchnorm",
              "test_lrn", "test_globalaveragepool", "test_averagepool")
ONNX_CLOSE_BY_TYPE = {"bf16": "close 1.6e-2 1e-3", "fp16": "close 2e-3 1e-4", "f32": "close 1e-5 1e-6"}
# Converted wrong (not undefined): OpenVINO's ONNX frontend writes an IR that computes something
# else than the test expects, and OpenVINO's own CPU plugin disagrees with the test too
# (measured: max abs error 0.07 to 1.5). Attention with a sliding window, and the causal mask
# with a qk-bias and a past cache.
ONNX_MISCONVERTED = {
    name: "OpenVINO's ONNX frontend converts this Attention (sliding window or causal with a qk bias and a past cache) into an IR that computes other values than the test expects: OpenVINO's own CPU plugin disagrees with the test too"
    for name in ("test_attention_3d_local_window", "test_attention_local_window", "test_attention_bidirectional_window",
                 "test_attention_local_window_ext_cache_rank2_mask", "test_attention_local_window_ext_cache_rank3_head_mask",
                 "test_attention_local_window_ext_cache_rank4_batch_mask", "test_attention_local_window_gqa_rank4_mask",
                 "test_attention_local_window_rank1_boolean_mask", "test_attention_local_window_with_past",
                 "test_attention_4d_with_past_and_present_qk_matmul_bias_3d_mask_causal",
                 "test_attention_4d_with_past_and_present_qk_matmul_bias_4d_mask_causal")
}
# Resize: antialiased downsampling, cubic with exclude_outside, align_corners when downsampling,
# and keep_aspect_ratio_policy not_larger/not_smaller (the IR's output shape differs). The IR
# OpenVINO writes computes other values than the test expects; OpenVINO's CPU plugin computes
# ovir's values on these IRs (measured: within 1e-5, or the same shape), not the test's.
ONNX_MISCONVERTED.update({
    name: "OpenVINO's ONNX frontend converts this Resize into an Interpolate that computes other values (or another shape) than the test expects: OpenVINO's own CPU plugin gives ovir's results on the IR, not the test's"
    for name in ("test_resize_downsample_scales_cubic_A_n0p5_exclude_outside",
                 "test_resize_upsample_scales_cubic_A_n0p5_exclude_outside",
                 "test_resize_downsample_scales_cubic_align_corners", "test_resize_downsample_scales_linear_align_corners",
                 "test_resize_downsample_scales_cubic_antialias", "test_resize_downsample_scales_linear_antialias",
                 "test_resize_downsample_sizes_cubic_antialias", "test_resize_downsample_sizes_linear_antialias",
                 "test_resize_downsample_sizes_nearest_not_larger", "test_resize_downsample_sizes_nearest_not_smaller",
                 "test_resize_upsample_sizes_nearest_not_larger", "test_resize_upsample_sizes_nearest_not_smaller")
})
# MaxPool with ceil_mode where ONNX drops a last window that would start in the padding: the
# frontend writes rounding_type="ceil" (not ceil_torch), whose output is one larger; OpenVINO's
# CPU plugin gives the IR's larger shape too.
ONNX_MISCONVERTED["test_maxpool_2d_ceil_output_size_reduce_by_one"] = (
    "OpenVINO's ONNX frontend converts this MaxPool with rounding_type=\"ceil\" where ONNX's ceil_mode "
    "drops the last window (ceil_torch): the IR's output is 2x2, the test expects 1x1, and OpenVINO's "
    "CPU plugin gives the IR's 2x2")
# AvgPool with count_include_pad and a last window that runs past the end padding: ONNX divides
# by the window's part inside the padded data, OpenVINO's AvgPool (reference and CPU plugin) by the
# whole kernel, so the IR computes another value there (the CPU plugin agrees with ovir within 3e-8).
ONNX_MISCONVERTED["test_averagepool_2d_ceil_last_window_starts_on_pad"] = (
    "OpenVINO's AvgPool divides a window that runs past the end padding by the whole kernel size, ONNX by "
    "the part inside the padded data: the IR computes another value there (OpenVINO's CPU plugin gives ovir's)")


def onnx_close(name):
    """The `close` tolerance of an ONNX_CLOSE test, by the type its name says."""
    for key in ("bf16", "fp16"):
        if key in name:
            return ONNX_CLOSE_BY_TYPE[key]
    return ONNX_CLOSE_BY_TYPE["f32"]
# Expanded Selu computes γ·(α·eˣ − α) in float32 steps: near x = 0 the subtraction cancels, so a
# 1-ulp difference in eˣ (numpy's float32 exp against ovir's correctly rounded one) becomes
# several ulps of the result.
ONNX_CANCELLING = {"test_selu_expanded_ver18": 16, "test_selu_default_expanded_ver18": 16, "test_selu_example_expanded_ver18": 16}
# Tests whose inputs are integer cases OpenVINO's conversion leaves undefined in the IR it writes
# (BitShift becomes a Multiply or Divide by Power(2, shift)): ovir reports them as errors.
ONNX_UNDEFINED = {
    "negative_shift": "the shift is negative, so the IR's Power(2, shift) has a negative integer exponent: ovir reports E606",
    "right_int8_shift_ge_width": "the shift is at least the width, so the IR's Power(2, shift) wraps to 0 and its Divide divides by zero: ovir reports E601",
    "right_int32_shift_ge_width": "the shift is at least the width, so the IR's Power(2, shift) wraps to 0 and its Divide divides by zero: ovir reports E601",
    "test_gather_elements_negative_indices": "GatherElements-6 takes indices in [0, s-1] by its spec; OpenVINO's ONNX frontend passes ONNX's negative indices through unchanged (its CPU plugin reads them from the end): ovir reports E507",
    # Not undefined: converted wrong. The IR computes something else than the test expects.
    "test_spacetodepth_crd_mode_example": "OpenVINO's ONNX frontend writes this CRD-mode SpaceToDepth as mode=\"blocks_first\" (DCR): the IR, run by ovir or by OpenVINO's CPU plugin, gives other values than the test expects",
}


def onnx_array(v):
    """A test's value as numpy (bf16 as float32, as ovir reads and writes it)."""
    import onnx
    from onnx import numpy_helper

    if isinstance(v, onnx.TensorProto):
        v = numpy_helper.to_array(v)
    v = np.asarray(v)
    if v.dtype.name == "bfloat16":
        v = v.astype(np.float32)
    return v


def implemented_ops():
    """The op types docs/ops.md's coverage table says ovir runs."""
    runs = set()
    for line in (HERE.parent / "docs" / "ops.md").read_text().splitlines():
        cells = [c.strip() for c in line.split("|")]
        if len(cells) > 4 and cells[4] == "**runs**":
            runs.add(cells[1])
    return runs | {"Parameter", "Result", "Constant"}


def write_onnx_node_tests():
    """The ONNX backend node tests of the elementwise ops (from the onnx package), converted
    with ov.convert_model. Inputs and expected outputs are the test's own. Tests whose IR holds
    an op ovir does not run, or that OpenVINO cannot convert, are listed in
    onnx_node/SKIPPED.md with the reason."""
    import tempfile

    import onnx
    from onnx.backend.test.case import node

    root = fresh_dir("onnx_node")
    runs = implemented_ops()
    skipped = []
    cases = [c for c in node.collect_testcases(None)
             if c.name.startswith(ONNX_NODE_PREFIXES) and not c.name.startswith(ONNX_NODE_EXCLUDE)]
    for case in cases:
        if case.name.startswith("test_castlike") and any(k in case.name for k in ("FLOAT8", "INT4", "UINT4", "INT2", "UINT2", "FLOAT4")):
            continue  # packed and 8-bit float types: ovir decodes them from Consts only
        d = root / case.name
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "model.onnx"
            onnx.save(case.model, str(path))
            try:
                model = ov.convert_model(str(path))
            except Exception as e:  # noqa: BLE001 - the converter's own errors
                skipped.append((case.name, f"OpenVINO cannot convert it: {str(e).splitlines()[0][:120]}"))
                continue
        missing = sorted({op.get_type_name() for op in model.get_ops()} - runs)
        undefined = [why for key, why in ONNX_UNDEFINED.items() if case.name.endswith(key)]
        if case.name in ONNX_MISCONVERTED:
            undefined.append(ONNX_MISCONVERTED[case.name])
        if undefined:
            skipped.append((case.name, undefined[0]))
            continue
        if missing:
            skipped.append((case.name, f"the IR holds {', '.join(missing)}, which ovir does not run yet"))
            continue
        d.mkdir()
        ov.save_model(model, str(d / "model.xml"), compress_to_fp16=False)
        if (d / "model.bin").exists() and (d / "model.bin").stat().st_size == 0:
            (d / "model.bin").unlink()
        inputs, outputs = case.data_sets[0]
        inputs, outputs = [onnx_array(v) for v in inputs], [onnx_array(v) for v in outputs]
        (d / "inputs").mkdir()
        (d / "expected").mkdir()
        # Inputs the converted IR keeps (OpenVINO drops CastLike's `like`: only its type counts).
        kept = {n for p in model.get_parameters() for n in p.output(0).get_names()}
        for graph_input, value in zip(case.model.graph.input, inputs):
            if graph_input.name in kept:
                np.save(d / "inputs" / f"{graph_input.name}.npy", value)
        xml = (d / "model.xml").read_text()
        if case.name.startswith("test_div") and 'm_pythondiv="true"' in xml and inputs[0].dtype.kind == "i":
            # ONNX Div truncates integers, but OpenVINO's ONNX frontend writes a Divide with
            # m_pythondiv="true" (floor division; the CPU plugin ignores the attribute and
            # truncates, which hides this). ovir runs the IR as written, so the expected output
            # is the IR's floor division; NOTE.md records where it departs from ONNX.
            floor = np.floor_divide(inputs[0], inputs[1])
            if not np.array_equal(floor, outputs[0]):
                (d / "NOTE.md").write_text(
                    "OpenVINO's ONNX frontend converts this integer Div to `Divide` with "
                    "`m_pythondiv=\"true\"` (floor division), while ONNX Div truncates.\n"
                    f"ONNX expects {outputs[0].tolist()}; the IR as written computes "
                    f"{floor.tolist()}, which is what `expected/` holds.\n"
                )
            outputs = [floor.astype(outputs[0].dtype)]
        if case.name in ONNX_CANCELLING:
            (d / "tolerance.txt").write_text(f"ulps {ONNX_CANCELLING[case.name]}\n")
        elif case.name.startswith(ONNX_CLOSE) and outputs[0].dtype.kind == "f":
            (d / "tolerance.txt").write_text(onnx_close(case.name) + "\n")
        elif case.name.startswith(ONNX_APPROX) and outputs[0].dtype.kind == "f":
            (d / "tolerance.txt").write_text(f"ulps {ONNX_APPROX_ULPS}\n")
        for k, value in enumerate(outputs):
            np.save(d / "expected" / f"output{k}.npy", value)
    (root / "SKIPPED.md").write_text(
        "# ONNX node tests not converted into samples\n\n"
        "Written by `ir_samples/generate.py`: the elementwise and data-movement tests it looks for that are left out, and why.\n\n"
        + "".join(f"- `{n}`: {why}\n" for n, why in skipped)
    )


def spec_module():
    """The numpy spec of the differential test (tests/differential/run.py)."""
    sys.path.insert(0, str(HERE.parent / "tests" / "differential"))
    import run as spec  # noqa: E402

    return spec


def int_to_f32_round_odd(x):
    """A Python int as the float32 rounded to odd (exact integer arithmetic)."""
    m = abs(int(x))
    if m < (1 << 24):
        return np.float32(x)
    shift = m.bit_length() - 24
    t = m >> shift
    if m & ((1 << shift) - 1):
        t |= 1
    v = float(t << shift)
    return np.float32(-v if x < 0 else v)


def special_values(t, n, rng):
    """n values of type t that exercise the edges: specials, subnormals, overflow, wrap-around."""
    spec = spec_module()
    if t in spec.FLOATS:
        base = [0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 65504.0, 70000.0, 1e-7, 6e-8, 3.4e38, 1e300, -1e-300, 0.5, 2.5]
        v = np.array((base * (n // len(base) + 1))[:n], dtype=np.float64)
        v[len(base):] = rng.standard_normal(n - len(base)) * 100 if n > len(base) else v[len(base):]
        return spec.to_type(v, t)
    info = np.iinfo(spec.NP[t])
    base = [0, 1, -1, 7, -7, 10, -10, 3, -3, info.min, info.max, info.min + 1, info.max - 1, 2**53 + 1, -(2**53) - 1]
    vals = [x for x in base if info.min <= x <= info.max]
    vals += [int(x) for x in rng.integers(info.min, int(info.max) + 1, size=n, dtype=np.int64 if t != "u64" else np.uint64)]
    return np.array(vals[:n], dtype=spec.NP[t])


def save_case(d, model, inputs, outputs):
    d.mkdir(parents=True)
    ov.save_model(model, str(d / "model.xml"), compress_to_fp16=False)
    if (d / "model.bin").exists() and (d / "model.bin").stat().st_size == 0:
        (d / "model.bin").unlink()
    if inputs:
        (d / "inputs").mkdir()
    (d / "expected").mkdir()
    for name, (t, v) in inputs.items():
        np.save(d / "inputs" / f"{name}.npy", v.astype(np.float32) if t == "bf16" else v)
    for k, (t, v) in enumerate(outputs):
        np.save(d / "expected" / f"output{k}.npy", v.astype(np.float32) if t == "bf16" else v)


def write_op_matrix():
    """Subtract and Divide on every type under none/numpy/pdpd, and Convert between every pair of
    types, on edge values. Expected outputs: the spec in numpy (tests/differential/run.py),
    which the differential test cross-checks against OpenVINO's reference."""
    spec = spec_module()
    root = fresh_dir("ops")
    rng = np.random.default_rng(2026)
    # pdpd: built at axis 0 (all the Python API writes), where [3,1] fits [3,3,4] too, then
    # rewritten to axis 1.
    shapes = {"none": ([2, 3], [2, 3]), "numpy": ([2, 1, 3], [4, 1]), "pdpd": ([3, 3, 4], [3, 1])}
    for op in ("Subtract", "Divide"):
        for t in spec.TYPES:
            for mode, (sa, sb) in shapes.items():
                a = special_values(t, int(np.prod(sa)), rng).reshape(sa)
                b = special_values(t, int(np.prod(sb)), rng).reshape(sb)
                if op == "Divide" and t not in spec.FLOATS:
                    b[b == 0] = 3
                    if t.startswith("i"):
                        b[b == -1] = -2  # MIN / -1 is an error; the error tests cover it
                pa = ops.parameter(sa, spec.OVT[t], name="a")
                pb = ops.parameter(sb, spec.OVT[t], name="b")
                for p in (pa, pb):
                    p.output(0).get_tensor().set_names({p.get_friendly_name()})
                attrs = {"auto_broadcast": mode}
                # pdpd at axis 1 (set below): B [3,1] loses its trailing 1 and lands on A's dim 1.
                b_np = b.reshape([1, 3, 1]) if mode == "pdpd" else b
                for py in ([True, False] if op == "Divide" else [None]):
                    if py is None:
                        value = spec.spec_sub(a, b_np, t)
                    else:
                        attrs["m_pythondiv"] = py
                        value = spec.spec_div(a, b_np, t, py)
                    node = NodeFactory("opset1").create(op, [pa.output(0), pb.output(0)], dict(attrs))
                    node.output(0).get_tensor().set_names({"out"})
                    model = ov.Model([ops.result(node)], [pa, pb], f"{op}_{t}_{mode}")
                    suffix = "" if py is None else ("_floor" if py else "_trunc")
                    d = root / f"{op.lower()}_{t}_{mode}{suffix}"
                    value = np.asarray(value).reshape(node.get_output_partial_shape(0).to_shape())
                    save_case(d, model, {"a": (t, a), "b": (t, b)}, [(t, value)])
                    if mode == "pdpd":
                        # OpenVINO's Python API writes axis 0; this case is about axis 1.
                        xml = (d / "model.xml").read_text()
                        (d / "model.xml").write_text(xml.replace('auto_broadcast.auto_broadcast_axis="0"', 'auto_broadcast.auto_broadcast_axis="1"'))
                    if t in (spec.REF_SUB if op == "Subtract" else spec.REF_DIV):
                        # Cross-check the spec with OpenVINO's reference where it has the type,
                        # on the IR as saved.
                        saved = ov.Core().read_model(str(d / "model.xml"))
                        ref = fold_with_reference(saved, {"a": (t, a), "b": (t, b)})[0]
                        assert spec.same_bits(ref, value, t), f"{d.name}: spec {value} != reference {ref}"
    for src in spec.TYPES:
        for dst in spec.TYPES:
            x = special_values(src, 16, rng)
            if src not in spec.FLOATS and dst in ("f16", "bf16"):
                f = np.array([int_to_f32_round_odd(int(v)) for v in x], dtype=np.float32)
                y = spec.rne_bf16(f) if dst == "bf16" else f.astype(np.float16)
            else:
                y = spec.spec_convert(x, src, dst)
            p = ops.parameter([16], spec.OVT[src], name="x")
            p.output(0).get_tensor().set_names({"x"})
            node = ops.convert(p, spec.OVT[dst])
            node.output(0).get_tensor().set_names({"y"})
            model = ov.Model([ops.result(node)], [p], f"convert_{src}_{dst}")
            save_case(root / f"convert_{src}_to_{dst}", model, {"x": (src, x)}, [(dst, y)])


def write_special_cases():
    """Shapes and graphs the matrix does not cover. Expected outputs from the numpy spec."""
    spec = spec_module()
    root = HERE / "ops"
    f32 = np.float32

    def case(name, build, inputs):
        params = {n: ops.parameter(list(v.shape), spec.OVT[t], name=n) for n, (t, v) in inputs.items()}
        for n, p in params.items():
            p.output(0).get_tensor().set_names({n})
        outs, expected = build(params)
        results = []
        for k, o in enumerate(outs):
            o.get_tensor().set_names({f"out{k}"})
            results.append(ops.result(o))
        model = ov.Model(results, list(params.values()), name)
        save_case(root / name, model, inputs, expected)

    # pythondiv: -10/3 is -4 with floor division and -3 with truncation.
    a = np.array([7, 7, -7, -7, 0, 1, -1, -10, 10], dtype=np.int32)
    b = np.array([3, -3, 2, -2, 5, -5, 5, 3, -3], dtype=np.int32)
    for py, want in [(True, [2, -3, -4, 3, 0, -1, -1, -4, -4]), (False, [2, -2, -3, 3, 0, 0, 0, -3, -3])]:
        def build(p, py=py, want=want):
            n = NodeFactory("opset1").create("Divide", [p["a"].output(0), p["b"].output(0)], {"m_pythondiv": py})
            return [n.output(0)], [("i32", np.array(want, dtype=np.int32))]
        case(f"divide_pythondiv_table_{'floor' if py else 'trunc'}", build, {"a": ("i32", a), "b": ("i32", b)})

    # Rank 0 against rank 8.
    x = np.array(5.5, dtype=f32)
    y = (np.arange(6, dtype=f32) - 2.5).reshape([1, 1, 1, 1, 1, 1, 2, 3])
    case("subtract_rank0_rank8", lambda p: ([ops.subtract(p["x"], p["y"]).output(0)], [("f32", x - y)]), {"x": ("f32", x), "y": ("f32", y)})

    # Zero-size dims: [2,0,3] / [3] is [2,0,3]; [1] - [0] is [0].
    z = np.zeros([2, 0, 3], dtype=f32)
    w = np.array([1.0, 2.0, 4.0], dtype=f32)
    case("divide_zero_size", lambda p: ([ops.divide(p["z"], p["w"]).output(0)], [("f32", z / w)]), {"z": ("f32", z), "w": ("f32", w)})

    # A chain of 8 Subtract/Divide layers on f16 (each rounds to f16), with Consts.
    v = (np.arange(12, dtype=f32).reshape(3, 4) * 1.7 - 5).astype(np.float16)
    consts = [np.float16(c) for c in (0.3, 1.7, -2.1, 3.3, 0.7, -1.9, 2.2, 0.9)]

    def chain(p):
        cur, val = p["v"], v
        for k, c in enumerate(consts):
            cn = ops.constant(np.array([c], dtype=np.float16))
            if k % 2 == 0:
                cur, val = ops.subtract(cur, cn), spec.spec_sub(val, np.array([c]), "f16")
            else:
                cur, val = ops.divide(cur, cn), spec.spec_div(val, np.array([c]), "f16", True)
        return [cur.output(0)], [("f16", val)]

    case("chain_8_f16", chain, {"v": ("f16", v)})

    # Groups across a Convert (one fused pass in ovir), each layer's result as the spec has it:
    # u8 pixels normalised per channel in f32; an f32 chain written as f16 (NaN, infinities,
    # values that round to f16's largest or overflow, subnormals); an i64 mask scaled in f32.
    px = np.array([0, 1, 2, 127, 128, 200, 254, 255] * 15, dtype=np.uint8).reshape(2, 3, 4, 5)
    mean = np.array([123.675, 116.28, 103.53], dtype=f32).reshape(1, 3, 1, 1)
    inv_std = (1 / np.array([58.395, 57.12, 57.375])).astype(f32).reshape(1, 3, 1, 1)
    case("fused_u8_normalise",
         lambda p: ([ops.multiply(ops.subtract(ops.convert(p["px"], "f32"), ops.constant(mean)),
                                  ops.constant(inv_std)).output(0)],
                    [("f32", (px.astype(f32) - mean) * inv_std)]),
         {"px": ("u8", px)})
    y = np.array([0.0, -0.0, 1.0, -2.5, np.inf, -np.inf, np.nan, 65504.0, 65519.0, 65520.0, 1e6,
                  6e-8, 2.9e-8, 3.1e-8, 1e-5, -1e-40, 0.1, 1 / 3], dtype=f32)
    sc, bi = f32(1.5), f32(-0.25)
    case("fused_f32_to_f16",
         lambda p: ([ops.convert(ops.add(ops.multiply(p["y"], ops.constant(np.array([sc]))),
                                         ops.constant(np.array([bi]))), "f16").output(0)],
                    [("f16", (y * sc + bi).astype(np.float16))]),
         {"y": ("f32", y)})
    mask = np.array([[1, 1, 1, 0, 0, 0, 0, 0], [1, 0, 1, 0, 1, 1, 1, 1]], dtype=np.int64)
    case("fused_i64_mask_to_f32",
         lambda p: ([ops.multiply(ops.subtract(ops.constant(np.array([1.0], dtype=f32)),
                                               ops.convert(p["mask"], "f32")),
                                  ops.constant(np.array([-10000.0], dtype=f32))).output(0)],
                    [("f32", (f32(1.0) - mask.astype(f32)) * f32(-10000.0))]),
         {"mask": ("i64", mask)})

    # No inputs at all: Consts only (OpenVINO's writer may fold them; what it writes is run).
    c1 = ops.constant(np.array([1, 2, 3], dtype=np.int64))
    c2 = ops.constant(np.array([[10], [20]], dtype=np.int64))
    out = ops.subtract(c1, c2)
    out.output(0).get_tensor().set_names({"out0"})
    model = ov.Model([ops.result(out)], [], "const_only")
    save_case(root / "const_only_i64", model, {}, [("i64", np.array([1, 2, 3]) - np.array([[10], [20]]))])


def write_arith_matrix():
    """Add, Multiply, Maximum, Minimum, SquaredDifference, FloorMod, Mod and Power on every type under none/numpy/pdpd, like Subtract in write_op_matrix
    (expected from the spec in numpy, cross-checked with OpenVINO's reference where it has the
    type)."""
    spec = spec_module()
    root = HERE / "ops"
    rng = np.random.default_rng(2027)
    shapes = {"none": ([2, 3], [2, 3]), "numpy": ([2, 1, 3], [4, 1]), "pdpd": ([3, 3, 4], [3, 1])}
    table = [("Add", spec.spec_add, spec.REF_ADD), ("Multiply", spec.spec_mul, spec.REF_MUL)]
    table += [(op, fn, spec.REF_BINARY[op]) for op, fn in spec.BINARY_SPECS.items()]
    for op, fn, ref in table:
        for t in spec.TYPES:
            for mode, (sa, sb) in shapes.items():
                a = special_values(t, int(np.prod(sa)), rng).reshape(sa)
                b = special_values(t, int(np.prod(sb)), rng).reshape(sb)
                if t not in spec.FLOATS and op in ("FloorMod", "Mod"):
                    b[b == 0] = 3  # a zero divisor is an error; tests/op_tables.rs covers it
                    if t.startswith("i"):
                        b[b == -1] = -2  # MIN mod -1 kills OpenVINO's reference (SIGFPE); op_tables.rs has it
                if t not in spec.FLOATS and op == "Power":
                    # Exponents 0..9 (a negative one is an error): wrap-around on the edges.
                    b = (b.astype(np.int64) % 10).astype(spec.NP[t])
                pa = ops.parameter(sa, spec.OVT[t], name="a")
                pb = ops.parameter(sb, spec.OVT[t], name="b")
                for p in (pa, pb):
                    p.output(0).get_tensor().set_names({p.get_friendly_name()})
                b_np = b.reshape([1, 3, 1]) if mode == "pdpd" else b
                value = fn(a, b_np, t)
                node = NodeFactory("opset1").create(op, [pa.output(0), pb.output(0)], {"auto_broadcast": mode})
                node.output(0).get_tensor().set_names({"out"})
                model = ov.Model([ops.result(node)], [pa, pb], f"{op}_{t}_{mode}")
                d = root / f"{op.lower()}_{t}_{mode}"
                value = np.asarray(value, dtype=spec.NP[t]).reshape(node.get_output_partial_shape(0).to_shape())
                save_case(d, model, {"a": (t, a), "b": (t, b)}, [(t, value)])
                if mode == "pdpd":
                    xml = (d / "model.xml").read_text()
                    (d / "model.xml").write_text(xml.replace('auto_broadcast.auto_broadcast_axis="0"', 'auto_broadcast.auto_broadcast_axis="1"'))
                if t in ref:
                    saved = ov.Core().read_model(str(d / "model.xml"))
                    got = fold_with_reference(saved, {"a": (t, a), "b": (t, b)})[0]
                    if op in ("Maximum", "Minimum", "FloorMod"):
                        # Ordinary values only: the reference's std::max/min answer for NaN
                        # and for -0 against +0 depends on the operands' order, and its
                        # FloorMod gives +0 where numpy gives the divisor's sign.
                        x, y, g, w = np.broadcast_arrays(a, b_np, np.asarray(got), value)
                        keep = ~(np.isnan(x) | np.isnan(y)) if t in spec.FLOATS else np.ones(x.shape, bool)
                        assert np.array_equal(g[keep], w[keep]), f"{d.name}: spec {value} != reference {got}"
                    else:
                        assert spec.same_bits(got, value, t), f"{d.name}: spec {value} != reference {got}"


def packed_constant(t, shape, raw):
    """A Constant of packed type `t` holding the bytes `raw` as OpenVINO stores them."""
    tensor = ov.Tensor(t, shape)
    tensor.data.view(np.uint8).reshape(-1)[:] = np.frombuffer(bytes(raw), dtype=np.uint8)
    return ov.op.Constant(tensor)


def write_element_type_cases():
    """boolean inputs, outputs and conversions; packed weight types decoded by Convert (every
    byte or nibble value). Expected: OpenVINO's reference for the decoding (exact floats and
    integers), the spec in numpy for conversions from it."""
    from openvino import passes

    spec = spec_module()
    root = HERE / "ops"
    # Packed Consts -> Convert: every bit pattern.
    packed = {
        "u1": (ov.Type.u1, 32, bytes([0b10100001, 0x00, 0xFF, 0x5A])),
        "u2": (ov.Type.u2, 16, bytes([0b11100100, 0x1B, 0xFF, 0x00])),
        "u4": (ov.Type.u4, 32, bytes((2 * k) | ((2 * k + 1) % 16) << 4 for k in range(16))),
        "i4": (ov.Type.i4, 32, bytes((2 * k) | ((2 * k + 1) % 16) << 4 for k in range(16))),
        "nf4": (ov.Type.nf4, 32, bytes((2 * k) | ((2 * k + 1) % 16) << 4 for k in range(16))),
        "f4e2m1": (ov.Type.f4e2m1, 32, bytes((2 * k) | ((2 * k + 1) % 16) << 4 for k in range(16))),
        "f8e4m3": (ov.Type.f8e4m3, 256, bytes(range(256))),
        "f8e5m2": (ov.Type.f8e5m2, 256, bytes(range(256))),
        "f8e8m0": (ov.Type.f8e8m0, 256, bytes(range(256))),
    }
    for name, (t, n, raw) in packed.items():
        for dst in ("f32", "f16", "i32"):
            c = packed_constant(t, [n], raw)
            node = ops.convert(c, spec.OVT[dst])
            node.output(0).get_tensor().set_names({"y"})
            model = ov.Model([ops.result(node)], [], f"convert_{name}_{dst}")
            # The decoded values, from OpenVINO's reference (exact in f32), on a model built in
            # memory (fold_with_reference copies Constants through numpy, which packed types
            # do not survive).
            m = ov.Model([ops.result(ops.convert(packed_constant(t, [n], raw), ov.Type.f32))], [], "d")
            pm = passes.Manager()
            pm.register_pass(passes.ConstantFolding())
            pm.run_passes(m)
            decoded = np.array(m.get_results()[0].input_value(0).get_node().get_data())
            value = spec.spec_convert(decoded.astype(np.float32), "f32", dst)
            save_case(root / f"convert_packed_{name}_to_{dst}", model, {}, [(dst, value)])
    # boolean: Parameters, Consts and Converts both ways.
    x = np.array([0.0, -0.0, 1.0, -2.5, np.nan, np.inf, 1e-45, -1e-40], dtype=np.float32)
    p = ops.parameter([8], np.float32, name="x")
    p.output(0).get_tensor().set_names({"x"})
    b = ops.convert(p, ov.Type.boolean)
    b.output(0).get_tensor().set_names({"as_bool"})
    back = ops.convert(b, ov.Type.i32)
    back.output(0).get_tensor().set_names({"as_i32"})
    model = ov.Model([ops.result(b), ops.result(back)], [p], "convert_boolean")
    want_b = x != 0
    save_case(root / "convert_f32_to_boolean_and_back", model, {"x": ("f32", x)}, [("boolean", want_b), ("i32", want_b.astype(np.int32))])
    q = ops.parameter([2, 3], ov.Type.boolean, name="m")
    q.output(0).get_tensor().set_names({"m"})
    k = ops.constant(np.array([[True], [False]]))
    cat = ops.concat([q, k], axis=1)
    cat.output(0).get_tensor().set_names({"joined"})
    f = ops.convert(cat, ov.Type.f16)
    f.output(0).get_tensor().set_names({"as_f16"})
    model = ov.Model([ops.result(cat), ops.result(f)], [q], "boolean_io")
    m = np.array([[True, False, True], [False, False, True]])
    joined = np.concatenate([m, np.array([[True], [False]])], axis=1)
    save_case(root / "boolean_input_concat_output", model, {"m": ("boolean", m)}, [("boolean", joined), ("f16", joined.astype(np.float16))])


def write_shape_op_cases():
    """ShapeOf, Gather (1, 7, 8), Concat, Reshape, Squeeze, Unsqueeze, Split, VariadicSplit,
    StridedSlice and the reductions on small inputs. Expected: OpenVINO's reference (exact copies)
    for data movement; the numpy spec for reductions (cross-checked with the reference where
    the rules agree)."""
    root = HERE / "ops"
    factory = {v: NodeFactory(f"opset{v}") for v in (1, 3, 4, 7, 8)}
    rng = np.random.default_rng(2028)

    def case(name, inputs, build):
        params = {}
        for n, v in inputs.items():
            p = ops.parameter(list(v.shape), ov.Type(v.dtype) if v.dtype != np.bool_ else ov.Type.boolean, name=n)
            p.output(0).get_tensor().set_names({n})
            params[n] = p
        outs = build(params)
        results = []
        for k, o in enumerate(outs):
            o.get_tensor().set_names({f"out{k}"})
            results.append(ops.result(o))
        model = ov.Model(results, list(params.values()), name)
        types = {n: (p.get_element_type().get_type_name(), inputs[n]) for n, p in params.items()}
        expected = fold_with_reference(model, types)
        save_case(root / name, model, {n: (None, v) for n, v in inputs.items()},
                  [(None, np.asarray(e)) for e in expected])

    def const(v, dtype=np.int64):
        return ops.constant(np.array(v, dtype=dtype))

    x = rng.standard_normal([2, 3, 4]).astype(np.float32)
    i = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
    case("shape_of_1_and_3", {"x": x}, lambda p: [
        factory[1].create("ShapeOf", [p["x"].output(0)]).output(0),
        factory[3].create("ShapeOf", [p["x"].output(0)], {"output_type": "i32"}).output(0),
    ])
    case("gather_1_axis_1", {"x": x}, lambda p: [
        factory[1].create("Gather", [p["x"].output(0), const([[2, 0], [1, 1]]).output(0), const(1).output(0)]).output(0)])
    case("gather_7_batch_dims", {"i": i}, lambda p: [
        factory[7].create("Gather", [p["i"].output(0), const([[3, 0], [1, 2]]).output(0), const(2).output(0)], {"batch_dims": 1}).output(0)])
    case("gather_8_negative_and_out_of_range", {"i": i}, lambda p: [
        factory[8].create("Gather", [p["i"].output(0), const([-1, 3, 7, -9, 0]).output(0), const(-1).output(0)], {"batch_dims": 0}).output(0)])
    case("concat_three_axis_minus_1", {"x": x}, lambda p: [
        ops.concat([p["x"], const(np.ones([2, 3, 1]), np.float32), p["x"]], axis=-1).output(0)])
    case("reshape_special_zero_and_minus_1", {"x": x}, lambda p: [
        ops.reshape(p["x"], const([0, -1]), special_zero=True).output(0),
        ops.reshape(p["x"], const([4, -1, 3]), special_zero=False).output(0),
    ])
    case("squeeze_unsqueeze", {"x": x.reshape(2, 1, 3, 1, 4)}, lambda p: [
        ops.squeeze(p["x"], const([1, -2])).output(0),
        factory[1].create("Squeeze", [p["x"].output(0)]).output(0),
        ops.unsqueeze(p["x"], const([0, -1])).output(0),
    ])
    case("split_and_variadic_split", {"x": x}, lambda p: [
        *ops.split(p["x"], const(-1), 2).outputs(),
        *ops.variadic_split(p["x"], const(1), const([1, -1])).outputs(),
    ])
    case("strided_slice_masks", {"i": i}, lambda p: [
        ops.strided_slice(p["i"], const([1, 0, 3]), const([2, 0, 0]), const([1, 1, -1]), [0, 1, 0], [0, 1, 1]).output(0),
        ops.strided_slice(p["i"], const([0, 1]), const([0, 2]), const([1, 1]), [0, 0], [0, 0], [], [], [1, 0]).output(0),
        ops.strided_slice(p["i"], const([-1, 0]), const([0, 3]), const([1, 2]), [0, 0], [0, 0], [0, 1], [1, 0]).output(0),
    ])
    # Reductions: integers exactly (no mean or wrap-around here, where the reference and the
    # spec part), floats within what the reference computes.
    for kind in ("ReduceSum", "ReduceProd", "ReduceMax", "ReduceMin", "ReduceL1"):
        case(f"{kind.lower()}_i32_keep_dims", {"i": i - 11}, lambda p, kind=kind: [
            factory[4].create(kind, [p["i"].output(0), const([0, -1]).output(0)], {"keep_dims": True}).output(0)])
    small = (rng.integers(-8, 8, size=[3, 4]) / 4).astype(np.float32)
    for kind in ("ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceL1", "ReduceL2", "ReduceProd"):
        case(f"{kind.lower()}_f32", {"x": small}, lambda p, kind=kind: [
            factory[4].create(kind, [p["x"].output(0), const([1]).output(0)], {"keep_dims": False}).output(0)])
    mask = np.array([[True, False, True], [True, True, True]])
    for kind in ("ReduceLogicalAnd", "ReduceLogicalOr"):
        case(f"{kind.lower()}", {"m": mask}, lambda p, kind=kind: [
            factory[1].create(kind, [p["m"].output(0), const([1]).output(0)], {"keep_dims": False}).output(0)])


def reference_case(name, inputs, build, want, fold=True, cpu=False):
    """`want`: numpy's outputs; `fold=False` where OpenVINO's constant folding does not
    evaluate the op (Identity, GatherND…): numpy's are then the expected ones, and with
    `cpu=True` (exact ops) they are also checked equal to OpenVINO's CPU plugin. A case already
    written is kept as it is."""
    root = HERE / "ops"
    if (root / name).exists():
        return
    params = {}
    for n, v in inputs.items():
        p = ops.parameter(list(v.shape), ov.Type(v.dtype) if v.dtype != np.bool_ else ov.Type.boolean, name=n)
        p.output(0).get_tensor().set_names({n})
        params[n] = p
    outs = build(params)
    results = []
    for k, o in enumerate(outs):
        o.get_tensor().set_names({f"out{k}"})
        results.append(ops.result(o))
    model = ov.Model(results, list(params.values()), name)
    types = {n: (p.get_element_type().get_type_name(), inputs[n]) for n, p in params.items()}
    expected = fold_with_reference(model, types) if fold else [np.asarray(w) for w in want]
    if cpu:
        compiled = ov.Core().compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
        got = compiled({n: v for n, v in inputs.items()})
        for k, w in enumerate(want):
            g = np.asarray(got[compiled.output(k)])
            w = np.asarray(w)
            assert g.shape == w.shape and np.ascontiguousarray(g).astype(w.dtype).tobytes() == np.ascontiguousarray(w).tobytes(), \
                f"{name} output {k}: the CPU plugin gives {g.dtype}{g.shape} {g}, numpy {w.dtype}{w.shape} {w}"
    for k, (e, w) in enumerate(zip(expected, want)):
        w = np.asarray(w)
        assert e.dtype == w.dtype and e.shape == w.shape and np.ascontiguousarray(e).tobytes() == np.ascontiguousarray(w).tobytes(), \
            f"{name} output {k}: the reference gives {e.dtype}{e.shape}, numpy {w.dtype}{w.shape}"
    save_case(root / name, model, {n: (None, v) for n, v in inputs.items()},
              [(None, np.asarray(e)) for e in expected])


def write_movement_cases():
    """Transpose, Identity, Broadcast (1, 3), Tile, Range (1, 4) and Slice on small inputs.
    Expected: OpenVINO's reference (constant folding), checked here against numpy's own
    transpose, broadcast_to, tile, arange and slicing."""
    factory = {v: NodeFactory(f"opset{v}") for v in (1, 3, 4, 8, 16)}
    rng = np.random.default_rng(2029)
    case = reference_case

    def const(v, dtype=np.int64):
        return ops.constant(np.array(v, dtype=dtype))

    x = rng.standard_normal([2, 3, 4, 5]).astype(np.float32)
    x[0, 0, 0, :3] = [np.nan, -0.0, np.inf]
    h = x.astype(np.float16)
    m = rng.integers(0, 2, size=[3, 4]).astype(np.bool_)
    i = np.arange(24, dtype=np.int64).reshape(2, 3, 4)
    case("transpose_f32_every_kind", {"x": x}, lambda p: [
        ops.transpose(p["x"], const([0, 2, 1, 3])).output(0),
        ops.transpose(p["x"], const([3, 1, 2, 0])).output(0),
        ops.transpose(p["x"], const([], np.int64)).output(0),
    ], [x.transpose(0, 2, 1, 3), x.transpose(3, 1, 2, 0), x.transpose()])
    case("transpose_f16_i32_order", {"h": h}, lambda p: [
        ops.transpose(p["h"], const([1, 0, 3, 2], np.int32)).output(0)], [h.transpose(1, 0, 3, 2)])
    case("transpose_boolean", {"m": m}, lambda p: [
        ops.transpose(p["m"], const([1, 0])).output(0)], [m.T])
    case("identity_16", {"i": i}, lambda p: [
        factory[16].create("Identity", [p["i"].output(0)]).output(0)], [i], fold=False)
    a = rng.standard_normal([3, 1]).astype(np.float32)
    case("broadcast_3_numpy_and_bidirectional", {"a": a}, lambda p: [
        factory[3].create("Broadcast", [p["a"].output(0), const([2, 3, 4]).output(0)], {"mode": "numpy"}).output(0),
        factory[3].create("Broadcast", [p["a"].output(0), const([2, 1, 5]).output(0)], {"mode": "bidirectional"}).output(0),
    ], [np.broadcast_to(a, [2, 3, 4]), a * np.ones([2, 1, 5], np.float32)])
    v = np.array([1, 2, 3], dtype=np.int32)
    case("broadcast_1_explicit_axes_mapping", {"v": v}, lambda p: [
        factory[1].create("Broadcast", [p["v"].output(0), const([2, 3, 4]).output(0), const([1]).output(0)], {"mode": "explicit"}).output(0),
    ], [np.broadcast_to(v.reshape(1, 3, 1), [2, 3, 4])])
    case("broadcast_3_boolean", {"m": m[:1]}, lambda p: [
        factory[3].create("Broadcast", [p["m"].output(0), const([2, 3, 4], np.int32).output(0)], {"mode": "numpy"}).output(0),
    ], [np.broadcast_to(m[:1], [2, 3, 4])])
    case("tile_shorter_longer_and_zero", {"i": i}, lambda p: [
        ops.tile(p["i"], const([2, 1])).output(0),
        ops.tile(p["i"], const([2, 1, 1, 3])).output(0),
        ops.tile(p["i"], const([1, 0, 1])).output(0),
    ], [np.tile(i, [2, 1]), np.tile(i, [2, 1, 1, 3]), np.tile(i, [1, 0, 1])])
    case("tile_f16", {"h": h[:, :, :2, :2]}, lambda p: [
        ops.tile(p["h"], const([1, 2, 1, 2])).output(0)], [np.tile(h[:, :, :2, :2], [1, 2, 1, 2])])
    s0 = {"s": np.array(2, dtype=np.int64)}
    case("range_1_i64_and_4_mixed", s0, lambda p: [
        factory[1].create("Range", [p["s"].output(0), const(11).output(0), const(3).output(0)]).output(0),
        factory[4].create("Range", [p["s"].output(0), const(-7.5, np.float32).output(0), const(-1.25, np.float32).output(0)], {"output_type": "f32"}).output(0),
        factory[4].create("Range", [p["s"].output(0), const(2).output(0), const(1).output(0)], {"output_type": "i32"}).output(0),
    ], [np.arange(2, 11, 3, dtype=np.int64), np.arange(2, -7.5, -1.25, dtype=np.float32), np.arange(2, 2, 1, dtype=np.int32)])
    f0 = {"f": np.array(0.5, dtype=np.float32)}
    case("range_4_f32_fraction", f0, lambda p: [
        factory[4].create("Range", [p["f"].output(0), const(3.0, np.float32).output(0), const(0.3, np.float32).output(0)], {"output_type": "f32"}).output(0),
    ], [np.float32(0.5) + np.arange(9, dtype=np.float32) * np.float32(0.3)])
    big = np.iinfo(np.int64).max
    case("slice_8_negative_steps_and_axes", {"i": i}, lambda p: [
        ops.slice(p["i"], const([-1, 0]), const([-big - 1, 3]), const([-1, 2]), const([2, 0])).output(0),
        ops.slice(p["i"], const([1]), const([big]), const([1])).output(0),
        factory[8].create("Slice", [p["i"].output(0), const([-2]).output(0), const([-3]).output(0), const([1]).output(0), const([-2]).output(0)]).output(0),
    ], [i[0:3:2, :, ::-1], i[1:], i[:, 1:0, :]])
    c8 = rng.standard_normal([1, 8, 2, 3]).astype(np.float32)

    def d2s(x, bs, mode):
        n, c, hh, ww = x.shape
        if mode == "blocks_first":
            y = x.reshape(n, bs, bs, c // bs**2, hh, ww).transpose(0, 3, 4, 1, 5, 2)
        else:
            y = x.reshape(n, c // bs**2, bs, bs, hh, ww).transpose(0, 1, 4, 2, 5, 3)
        return y.reshape(n, c // bs**2, hh * bs, ww * bs)

    def s2d(x, bs, mode):
        n, c, hh, ww = x.shape
        y = x.reshape(n, c, hh // bs, bs, ww // bs, bs)
        y = y.transpose(0, 3, 5, 1, 2, 4) if mode == "blocks_first" else y.transpose(0, 1, 3, 5, 2, 4)
        return y.reshape(n, c * bs * bs, hh // bs, ww // bs)

    case("depth_to_space_both_modes", {"c": c8}, lambda p: [
        ops.depth_to_space(p["c"], "blocks_first", 2).output(0),
        ops.depth_to_space(p["c"], "depth_first", 2).output(0),
    ], [d2s(c8, 2, "blocks_first"), d2s(c8, 2, "depth_first")])
    sp = rng.integers(-100, 100, size=[2, 3, 4, 6]).astype(np.int32)
    case("space_to_depth_both_modes", {"s": sp}, lambda p: [
        ops.space_to_depth(p["s"], "blocks_first", 2).output(0),
        ops.space_to_depth(p["s"], "depth_first", 2).output(0),
    ], [s2d(sp, 2, "blocks_first"), s2d(sp, 2, "depth_first")])
    sc = rng.standard_normal([2, 6, 3]).astype(np.float16)
    case("shuffle_channels_axes", {"sc": sc}, lambda p: [
        ops.shuffle_channels(p["sc"], 1, 3).output(0),
        ops.shuffle_channels(p["sc"], -1, 3).output(0),
    ], [sc.reshape(2, 3, 2, 3).transpose(0, 2, 1, 3).reshape(2, 6, 3),
        sc.reshape(2, 6, 3, 1).transpose(0, 1, 2, 3).reshape(2, 6, 3)])
    pd = rng.standard_normal([2, 3, 4]).astype(np.float32)
    case("pad_12_every_mode", {"pd": pd}, lambda p: [
        ops.pad(p["pd"], const([0, 1, 2]), const([1, 0, 3]), "constant", ops.constant(np.float32(-7.5))).output(0),
        ops.pad(p["pd"], const([0, 1, 2]), const([1, 0, 3]), "edge").output(0),
        ops.pad(p["pd"], const([1, 2, 3]), const([1, 0, 2]), "reflect").output(0),
        ops.pad(p["pd"], const([2, 3, 4]), const([0, 1, 2]), "symmetric").output(0),
    ], [np.pad(pd, [(0, 1), (1, 0), (2, 3)], constant_values=-7.5), np.pad(pd, [(0, 1), (1, 0), (2, 3)], mode="edge"),
        np.pad(pd, [(1, 1), (2, 0), (3, 2)], mode="reflect"), np.pad(pd, [(2, 0), (3, 1), (4, 2)], mode="symmetric")])
    case("pad_12_negative_crops", {"i": i}, lambda p: [
        ops.pad(p["i"], const([0, -1, 2]), const([-1, 1, -2]), "constant").output(0),
        ops.pad(p["i"], const([0, -1, 2]), const([-1, 1, -2]), "reflect").output(0),
    ], [np.pad(i, [(0, 0), (0, 1), (2, 0)])[:-1, 1:, :-2], np.pad(i, [(0, 0), (0, 1), (2, 0)], mode="reflect")[:-1, 1:, :-2]])
    case("pad_1_boolean", {"m": m}, lambda p: [
        factory[1].create("Pad", [p["m"].output(0), const([1, 0]).output(0), const([0, 2]).output(0)], {"pad_mode": "symmetric"}).output(0),
    ], [np.pad(m, [(1, 0), (0, 2)], mode="symmetric")])
    case("slice_8_boolean_f16", {"m": m, "h": h}, lambda p: [
        ops.slice(p["m"], const([2, 1]), const([0, 4]), const([-1, 2])).output(0),
        ops.slice(p["h"], const([1, 1]), const([3, 5]), const([1, 2]), const([1, 3])).output(0),
    ], [m[2:0:-1, 1:4:2], h[:, 1:3, :, 1:5:2]])


def write_selection_cases():
    """GatherElements, GatherND (5, 8), NonZero, TopK (1, 3, 11), OneHot (1, 16) and MatMul on
    small inputs. Expected: OpenVINO's reference (constant folding), checked here against numpy
    (take_along_axis, nonzero, a stable argsort, matmul of integer-valued floats: exact in any
    summation order)."""
    factory = {v: NodeFactory(f"opset{v}") for v in (1, 3, 5, 6, 8, 11, 16)}
    rng = np.random.default_rng(2031)
    case = reference_case

    def const(v, dtype=np.int64):
        return ops.constant(np.array(v, dtype=dtype))

    x = rng.standard_normal([3, 4, 5]).astype(np.float32)
    ge = rng.integers(0, 4, size=[3, 2, 5]).astype(np.int32)
    case("gather_elements_axes", {"x": x, "ge": ge}, lambda p: [
        factory[6].create("GatherElements", [p["x"].output(0), p["ge"].output(0)], {"axis": 1}).output(0),
        factory[6].create("GatherElements", [p["x"].output(0), const(np.zeros([3, 4, 2], np.int64) + [[[4, 0]]]).output(0)], {"axis": -1}).output(0),
    ], [np.take_along_axis(x, ge, 1), np.take_along_axis(x, np.zeros([3, 4, 2], np.int64) + [[[4, 0]]], -1)], fold=False, cpu=True)
    d = np.arange(2 * 3 * 4, dtype=np.int32).reshape(2, 3, 4)
    nd = np.array([[[1, 2], [0, 1]], [[1, 0], [0, 2]]], dtype=np.int64)

    def gather_nd(data, idx, b):
        out = []
        for bi in range(data.shape[0] if b else 1):
            dd, ii = (data[bi], idx[bi]) if b else (data, idx)
            out.append(np.stack([dd[tuple(t)] for t in ii.reshape(-1, ii.shape[-1])]).reshape(ii.shape[:-1] + dd.shape[ii.shape[-1]:]))
        return np.stack(out) if b else out[0]

    case("gather_nd_8_batch_and_5", {"d": d, "nd": nd}, lambda p: [
        factory[8].create("GatherND", [p["d"].output(0), p["nd"].output(0)], {"batch_dims": 1}).output(0),
        factory[5].create("GatherND", [p["d"].output(0), p["nd"].output(0)], {"batch_dims": 0}).output(0),
        factory[8].create("GatherND", [p["d"].output(0), const([[-1], [0]]).output(0)], {"batch_dims": 0}).output(0),
    ], [gather_nd(d, nd, 1), gather_nd(d, nd, 0), d[[-1, 0]]], fold=False, cpu=True)
    z = np.array([[0.0, -0.0, 1.5], [np.nan, 0.0, -2.0]], dtype=np.float32)
    zb = np.array([[True, False], [False, True]])
    case("non_zero_nan_and_signed_zero", {"z": z, "zb": zb}, lambda p: [
        factory[3].create("NonZero", [p["z"].output(0)], {"output_type": "i64"}).output(0),
        factory[3].create("NonZero", [p["zb"].output(0)], {"output_type": "i32"}).output(0),
    ], [np.array(np.nonzero(z), dtype=np.int64), np.array(np.nonzero(zb), dtype=np.int32)])
    t = rng.integers(-3, 4, size=[2, 7]).astype(np.float32)
    ti = rng.integers(-50, 50, size=[4, 3]).astype(np.int32)

    def topk(v, k, axis, largest):
        order = np.argsort(-v if largest else v, axis=axis, kind="stable")
        idx = np.take(order, np.arange(k), axis=axis)
        return np.take_along_axis(v, idx, axis), idx

    tv, tix = topk(t, 3, 1, True)
    uv, uix = topk(ti, 2, 0, False)
    case("top_k_ties_both_modes", {"t": t, "ti": ti}, lambda p: [
        *factory[11].create("TopK", [p["t"].output(0), const(3).output(0)], {"axis": 1, "mode": "max", "sort": "value", "index_element_type": "i32", "stable": True}).outputs(),
        *factory[3].create("TopK", [p["ti"].output(0), const(2).output(0)], {"axis": 0, "mode": "min", "sort": "value", "index_element_type": "i64"}).outputs(),
    ], [tv, tix.astype(np.int32), uv, uix.astype(np.int64)])
    oh = np.array([[0, 2], [3, -1]], dtype=np.int64)

    def one_hot(idx, depth, axis, on, off, dtype):
        out = (np.arange(depth).reshape([-1] + [1] * idx.ndim) == idx[None]).astype(dtype)
        out = np.where(out != 0, dtype(on), dtype(off)).astype(dtype)
        return np.moveaxis(out, 0, axis)

    case("one_hot_axes_and_out_of_range", {"oh": oh}, lambda p: [
        factory[1].create("OneHot", [p["oh"].output(0), const(3).output(0), const(5.0, np.float32).output(0), const(-1.0, np.float32).output(0)], {"axis": -1}).output(0),
        factory[1].create("OneHot", [p["oh"].output(0), const(4, np.int32).output(0), const(1, np.int32).output(0), const(0, np.int32).output(0)], {"axis": 0}).output(0),
    ], [one_hot(oh, 3, -1, 5.0, -1.0, np.float32), one_hot(oh, 4, 0, 1, 0, np.int32)])
    ia = rng.integers(-8, 8, size=[2, 1, 3, 5]).astype(np.float32)
    ib = rng.integers(-8, 8, size=[4, 5, 6]).astype(np.float32)
    iv = rng.integers(-8, 8, size=[5]).astype(np.float32)
    case("matmul_f32_batch_transpose_vectors", {"ia": ia, "ib": ib, "iv": iv}, lambda p: [
        ops.matmul(p["ia"], p["ib"], False, False).output(0),
        ops.matmul(p["ib"], p["ia"], True, True).output(0),
        ops.matmul(p["iv"], p["ib"], False, False).output(0),
        ops.matmul(p["ia"], p["iv"], False, False).output(0),
        ops.matmul(p["iv"], p["iv"], True, True).output(0),
    ], [ia @ ib, np.swapaxes(ib, -1, -2) @ np.swapaxes(ia, -1, -2), iv @ ib, ia @ iv, np.float32(iv @ iv)])
    wa = rng.integers(-2**31, 2**31, size=[3, 4], dtype=np.int64).astype(np.int32)
    wb = rng.integers(-2**31, 2**31, size=[4, 2], dtype=np.int64).astype(np.int32)
    ha = rng.integers(-8, 8, size=[3, 4]).astype(np.float16)
    case("matmul_i32_wraps_f16", {"wa": wa, "wb": wb, "ha": ha}, lambda p: [
        ops.matmul(p["wa"], p["wb"], False, False).output(0),
        ops.matmul(p["ha"], p["ha"], False, True).output(0),
    ], [(wa.astype(np.int64) @ wb.astype(np.int64)).astype(np.int32), ha @ ha.T])


def write_weight_compression():
    """Weights compressed as u4 with a u4 zero point and an f16 scale per row, decompressed as
    OpenVINO's weight compression writes it: Convert -> Subtract(zero point) -> Multiply(scale)
    -> Convert to f32, then added to the input (the elementwise ops ovir runs)."""
    rng = np.random.default_rng(7)
    x = param([2, 8], np.float32, "x")
    w = packed_constant(ov.Type.u4, [2, 8], rng.integers(0, 256, size=8, dtype=np.uint8).tobytes())
    zp = packed_constant(ov.Type.u4, [2, 1], bytes([0x97]))
    scale = ops.constant(np.array([[0.125], [-0.5]], dtype=np.float16), name="scale")
    deq = ops.multiply(ops.subtract(ops.convert(w, ov.Type.f16), ops.convert(zp, ov.Type.f16)), scale)
    y = ops.add(x, ops.convert(deq, ov.Type.f32), name="y")
    y.output(0).get_tensor().set_names({"y"})
    return model([y], [x], "weight_compression")


def write_shape_subgraph():
    """A dynamic model whose Reshape target comes from ShapeOf -> Gather -> Concat, as
    exporters write attention blocks: `info` shows the interval dims inference derives."""
    x = param("1..8,?,12", np.float32, "x")
    s = ops.shape_of(x)
    batch_seq = ops.gather(s, ops.constant(np.array([0, 1], dtype=np.int64)), ops.constant(np.int64(0)))
    target = ops.concat([batch_seq, ops.constant(np.array([3, 4], dtype=np.int64))], axis=0)
    r = ops.reshape(x, target, special_zero=False, name="to_heads")
    flat = ops.reshape(r, ops.constant(np.array([0, -1], dtype=np.int64)), special_zero=True, name="flatten")
    flat.output(0).get_tensor().set_names({"y"})
    return model([flat], [x], "shape_subgraph")


def safe_stem(name):
    """ovir's io::npy::safe_stem."""
    stem = "".join("_" if ord(c) < 32 or 0x7F <= ord(c) <= 0x9F or c in '/\\:*?"<>|' else c for c in name)
    return stem if stem and not stem.startswith(".") else None


def output_file_names(names):
    """ovir's io::npy::output_file_names: the files `ovir run -o` writes."""
    used, out = set(), []
    for k, name in enumerate(names):
        stem = safe_stem(name) or f"output_{k}"
        if stem.lower() in used:
            stem = f"{stem}_{k}"
        used.add(stem.lower())
        out.append(stem + ".npy")
    return out


def name_expected_files():
    """Renames expected/output<k>.npy to the names `ovir run -o` writes."""
    ovir = Path(os.environ.get("OVIR", HERE.parent / "target" / "release" / "ovir"))
    if not ovir.exists():
        subprocess.check_call(["cargo", "build", "--release"], cwd=HERE.parent)
    for exp in sorted(HERE.rglob("expected")):
        info = json.loads(subprocess.check_output([str(ovir), "info", str(exp.parent / "model.xml"), "--format", "json"]))
        for k, name in enumerate(output_file_names([o["name"] for o in info["outputs"]])):
            src = exp / f"output{k}.npy"
            if src.exists():
                src.rename(exp / name)


def main():
    os.chdir(HERE)
    save(sub_div("sub_div_f32"), "sub_div_f32", compress=False)
    save(sub_div("sub_div_f16_compressed"), "sub_div_f16_compressed", compress=True)
    save(onnx_model(), "onnx_sub_div", compress=False)
    save(seed_none(), "seed_none")
    save(seed_numpy(), "seed_numpy")
    save(pdpd(), "pdpd")
    write_pdpd_axis()
    save(dynamic(), "dynamic")
    save(int_divide(), "int_divide")
    save(multi_output(), "multi_output")
    write_v10()
    write_quirks()
    write_dead_branch()
    write_onnx_node_tests()
    write_op_matrix()
    write_special_cases()
    write_arith_matrix()
    import elementwise

    elementwise.write_all(sys.modules[__name__])
    write_element_type_cases()
    write_shape_op_cases()
    write_movement_cases()
    write_selection_cases()
    save(write_shape_subgraph(), "shape_subgraph")
    save(write_weight_compression(), "weight_compression")
    write_bad()
    core = ov.Core()
    for xml in sorted(HERE.glob("*/model.xml")):
        core.read_model(str(xml))  # every valid sample must load in OpenVINO too
        write_expected(xml.parent)
    name_expected_files()
    print("samples written to", HERE, "with OpenVINO", ov.__version__, file=sys.stderr)


if __name__ == "__main__":
    main()
