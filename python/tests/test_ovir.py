"""The Python package against the CLI: every shipped sample and real-model block gives the
CLI's outputs bit for bit, errors map to ovir.Error with the CLI's codes and text, runs do
not leak, and threads run at once.

Needs the CLI built: OVIR_BIN, or target/release/ovir of this checkout.
"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import threading

import numpy as np
import pytest

import ovir
from ovir.testing import assert_outputs_close, assert_snapshot, snapshot_text

ROOT = pathlib.Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "ir_samples"
OVIR_BIN = os.environ.get("OVIR_BIN", str(ROOT / "target" / "release" / "ovir"))


def cli(*args, check=True) -> subprocess.CompletedProcess:
    p = subprocess.run([OVIR_BIN, *map(str, args)], capture_output=True, text=True)
    if check and p.returncode != 0:
        raise AssertionError(f"ovir {' '.join(map(str, args))} exited {p.returncode}:\n{p.stderr}")
    return p


def sample_dirs() -> list:
    dirs = [p.parent for p in SAMPLES.glob("*/expected")]
    dirs += [p.parent for p in SAMPLES.glob("*/*/expected")]
    return sorted(d for d in dirs if (d / "model.xml").is_file())


def block_models() -> list:
    return sorted(p for p in (SAMPLES / "real").glob("*/*/model.xml"))


def load_npy_dir(d: pathlib.Path) -> dict:
    return {p.stem: np.load(p) for p in sorted(d.glob("*.npy"))} if d.is_dir() else {}


def same_bytes(got: np.ndarray, want: np.ndarray) -> bool:
    return got.dtype == want.dtype and got.shape == want.shape and got.tobytes() == want.tobytes()


@pytest.mark.parametrize("d", sample_dirs(), ids=lambda d: str(d.relative_to(SAMPLES)))
def test_sample_matches_cli(d: pathlib.Path, tmp_path: pathlib.Path) -> None:
    model = ovir.Model(d / "model.xml")
    inputs = load_npy_dir(d / "inputs")
    before = {k: v.copy() for k, v in inputs.items()}
    cli("run", d / "model.xml", "--inputs", d / "inputs", "-o", tmp_path)
    # Inputs read in place (the default) and copied give the same bytes, and the arrays read
    # in place are left as they were.
    assert_same_as_cli_files(model.run(inputs), tmp_path)
    assert all(same_bytes(inputs[k], before[k]) for k in inputs)
    assert_same_as_cli_files(model.run(inputs, share_inputs=False), tmp_path)


def assert_same_as_cli_files(out: dict, outdir: pathlib.Path) -> None:
    files = load_npy_dir(outdir)
    # `ovir run -o` writes the outputs in order, each under its file name.
    stems = [f[: -len(".npy")] for f in ovir.output_file_names(list(out))]
    assert sorted(files) == sorted(stems), f"CLI wrote {sorted(files)}, Python returned {list(out)}"
    for (name, got), stem in zip(out.items(), stems):
        want = files[stem]
        assert same_bytes(got, want), (
            f"output {name}: {got.dtype}{got.shape} differs from the CLI's {want.dtype}{want.shape}"
        )


@pytest.mark.parametrize("xml", block_models(), ids=lambda p: str(p.parent.relative_to(SAMPLES / "real")))
def test_real_block_matches_cli(xml: pathlib.Path, tmp_path: pathlib.Path) -> None:
    model = ovir.Model(xml)
    if model.unimplemented():
        pytest.skip(f"ovir does not run {model.unimplemented()}")
    out_dir, dump = tmp_path / "out", tmp_path / "dump"
    shapes = []
    for port in model.inputs:
        dims = concrete(port.shape)
        shapes += ["--shape", f"{port.layer}=[{','.join(map(str, [2, 3] if dims is None else dims))}]"]
    p = cli("run", xml, "--random-inputs", "--seed", "7", *shapes, "-o", out_dir, "--dump-all", dump, check=False)
    if p.returncode == 2 and "--shape" in p.stderr:
        pytest.skip(f"the CLI needs a shape: {p.stderr.strip()}")
    assert (dump / "manifest.json").exists(), p.stderr
    manifest = json.loads((dump / "manifest.json").read_text())
    files = {layer["layer"]: layer["file"] for layer in manifest["layers"]}
    inputs = {port.layer: np.load(dump / files[port.layer]) for port in model.inputs}
    if p.returncode != 0:
        # Inputs the model refuses (a Reshape of the wrong size): the same error.
        assert p.returncode == 2
        with pytest.raises(ovir.Error) as info:
            model.run(inputs)
        assert str(info.value) == p.stderr.strip()
        return
    out = model.run(inputs)
    assert_same_as_cli_files(out, out_dir)
    assert_same_as_cli_files(model.run(inputs, share_inputs=False), out_dir)


def concrete(shape: str):
    """Dims for a partial shape: `?` as 3, `a..b` as the least of b and a + 2 (at least 1);
    None for a dynamic rank (the caller picks one)."""
    if shape.strip() in ("...", "[...]"):
        return None
    dims = []
    for d in shape.strip("[]").split(","):
        d = d.strip()
        if not d:
            continue
        if d == "?":
            dims.append(3)
        elif ".." in d:
            lo, hi = d.split("..")
            lo = max(int(lo or 0), 1)
            dims.append(min(int(hi), lo + 2) if hi else lo + 2)
        else:
            dims.append(int(d))
    return dims


# Errors ----------------------------------------------------------------------------------

INT_DIVIDE = SAMPLES / "int_divide" / "model.xml"


def int_inputs() -> dict:
    return {
        "a": np.array([7, 7, -7, -7, 0, 1, -1], np.int32),
        "b": np.array([3, -3, 2, -2, 5, -5, 5], np.int32),
    }


def test_ports() -> None:
    m = ovir.Model(INT_DIVIDE)
    assert [p.name for p in m.inputs] == ["a", "b"]
    assert m.inputs[0].element_type == "i32"
    assert [p.name for p in m.outputs] == ["floor", "trunc"]
    assert "Port(name='a'" in repr(m.inputs[0])


def test_run_by_name_position_and_call() -> None:
    m = ovir.Model(INT_DIVIDE)
    a, b = int_inputs().values()
    by_name = m.run({"a": a, "b": b})
    assert list(by_name) == ["floor", "trunc"]
    np.testing.assert_array_equal(by_name["floor"], [2, -3, -4, 3, 0, -1, -1])
    np.testing.assert_array_equal(by_name["trunc"], [2, -2, -3, 3, 0, 0, 0])
    for other in (m.run([a, b]), m({0: a, 1: b}), m([a, b])):
        assert_outputs_close(other, by_name)


def test_non_contiguous_and_list_inputs() -> None:
    m = ovir.Model(INT_DIVIDE)
    a = np.repeat(int_inputs()["a"], 2)[::2]
    assert not a.flags.c_contiguous
    # A list takes the input's element type; an array must have it.
    out = m.run({"a": a, "b": int_inputs()["b"].tolist()})
    np.testing.assert_array_equal(out["floor"], [2, -3, -4, 3, 0, -1, -1])
    with pytest.raises(ovir.Error, match="must be i32, but the given tensor is i64"):
        m.run({"a": a, "b": int_inputs()["b"].astype(np.int64)})


@pytest.mark.parametrize(
    "inputs, code",
    [
        ({"a": np.zeros(7, np.int32), "nope": np.zeros(7, np.int32)}, "E610"),
        ({"a": np.zeros(7, np.int32)}, "E611"),
        ({"a": np.zeros(7, np.float32), "b": np.ones(7, np.int32)}, "E613"),
        ({"a": np.zeros((7, 1), np.int32), "b": np.ones(7, np.int32)}, "E614"),
        ([np.zeros(7, np.int32)] * 3, "E615"),
        ({"a": np.ones(7, np.int32), "b": np.array([1, 0, 1, 1, 1, 1, 1], np.int32)}, "E601"),
    ],
)
def test_errors_have_the_cli_codes_and_text(inputs, code, tmp_path) -> None:
    m = ovir.Model(INT_DIVIDE)
    with pytest.raises(ovir.Error) as info:
        m.run(inputs)
    e = info.value
    assert e.code == code, str(e)
    assert e.errors and e.errors[0].code == code
    # The CLI prints the same text for the same inputs.
    args = []
    items = inputs.items() if isinstance(inputs, dict) else enumerate(inputs)
    for k, v in items:
        f = tmp_path / f"{k}.npy"
        np.save(f, v)
        args += ["-i", f"{k}={f}" if isinstance(k, str) else f]
    p = cli("run", INT_DIVIDE, *args, check=False)
    assert p.returncode == 2
    assert p.stderr.strip() == str(e)


def test_bad_model_raises_like_the_cli() -> None:
    bad = sorted((SAMPLES / "bad").glob("*.xml"))
    assert bad, "ir_samples/bad has samples"
    raised = 0
    for xml in bad:
        try:
            ovir.Model(xml)
        except ovir.Error as e:
            raised += 1
            p = cli("run", xml, "--random-inputs", check=False)
            assert p.returncode == 2
            assert e.code.startswith("E"), str(e)
            assert str(e) in p.stderr, f"{xml.name}:\nPython: {e}\nCLI: {p.stderr}"
            assert [d.code for d in e.errors] == [line.split("[")[1].split("]")[0] for line in str(e).splitlines() if "error[" in line]
    assert raised >= 5


def test_missing_file() -> None:
    with pytest.raises(ovir.Error) as info:
        ovir.Model("no/such/model.xml")
    assert info.value.code.startswith("E")
    assert "no/such/model.xml" in str(info.value)


def test_odd_arrays_read_safely() -> None:
    # Big-endian arrays are swapped; unaligned ones read byte for byte.
    m = ovir.Model(INT_DIVIDE)
    want = m.run(int_inputs())
    big = {k: v.astype(">i4") for k, v in int_inputs().items()}
    raw = np.zeros(7 * 4 + 1, np.uint8)
    unaligned = raw[1:].view(np.int32)
    unaligned[:] = int_inputs()["a"]
    readonly = int_inputs()["b"]
    readonly.flags.writeable = False
    for share in (True, False):
        assert_outputs_close(m.run(big, share_inputs=share), want)
        assert_outputs_close(m.run({"a": unaligned, "b": readonly}, share_inputs=share), want)
    # A bool array whose bytes are not 0/1 (a view of uint8) reads as numpy reads it.
    logical = SAMPLES / "ops" / "bitwisenot_boolean" / "model.xml"
    lm = ovir.Model(logical)
    shape = [int(x) for x in lm.inputs[0].shape.strip("[]").split(",") if x]
    n = int(np.prod(shape))
    odd = (np.arange(n) % 3).astype(np.uint8).view(np.bool_).reshape(shape)
    got = lm.run([odd])
    assert_outputs_close(got, lm.run([odd.view(np.uint8) != 0]))
    assert_outputs_close(got, lm.run([odd], share_inputs=False))
    assert not got[next(iter(got))].reshape(-1)[1]


def test_unknown_dtype_is_a_type_error() -> None:
    m = ovir.Model(INT_DIVIDE)
    with pytest.raises(TypeError, match="complex"):
        m.run({"a": np.zeros(7, np.complex64), "b": np.ones(7, np.int32)})


# check, compare, testing -------------------------------------------------------------------


def test_check_matches_the_cli() -> None:
    files = sorted((SAMPLES / "bad").glob("*.xml"))[:6] + [INT_DIVIDE]
    report = ovir.check(files)
    p = cli("check", *files, check=False)
    assert report.text == p.stdout
    assert report.ok == (p.returncode == 0)
    js = json.loads(cli("check", "--format", "json", *files, check=False).stdout)
    flat = js["diagnostics"]
    assert [d.code for d in report] == [d["code"] for d in flat]
    for d, j in zip(report, flat):
        assert d.line == j.get("line") and d.column == j.get("col")
        assert d.severity == j["severity"]


def test_check_clean_and_shapes() -> None:
    report = ovir.check(INT_DIVIDE)
    assert report.ok and len(report) == 0 and "All checks passed" in report.text
    with pytest.raises(ValueError, match="nope"):
        ovir.check(INT_DIVIDE, shapes={"nope": "[3]"})
    bad = ovir.check(INT_DIVIDE, shapes={"a": "[4]"})
    assert not bad.ok and bad.errors


def test_compare_rules_and_report(tmp_path) -> None:
    a = {"x": np.array([1.0, 2.0, np.nan], np.float32)}
    b = {"x": np.array([1.0, 2.0 + 1e-6, np.nan], np.float32)}
    assert not ovir.compare(b, a).equal
    assert ovir.compare(b, a, atol=1e-5).equal
    assert ovir.compare(b, a, ulps=10).equal
    assert not ovir.compare(b, a, atol=1e-5, nan_differs=True).equal
    r = ovir.compare(b, a)
    np.save(tmp_path / "x.npy", a["x"])
    (tmp_path / "b").mkdir()
    np.save(tmp_path / "b" / "x.npy", b["x"])
    p = cli("diff", tmp_path / "x.npy", tmp_path / "b" / "x.npy", check=False)
    assert p.returncode == 1
    # The same lines as `ovir diff` after the two that name A and B.
    assert r.report.splitlines()[2:] == p.stdout.replace("x.npy", "x").splitlines()[2:]
    assert ovir.compare([np.int8(3)], [np.int8(3)]).equal
    missing = ovir.compare({"x": a["x"]}, {"y": a["x"]})
    assert not missing.equal and "y" in missing.report


def test_assert_outputs_close_message() -> None:
    with pytest.raises(AssertionError) as info:
        assert_outputs_close({"x": np.array([1, 2], np.int32)}, {"x": np.array([1, 3], np.int32)})
    assert "different" in str(info.value) and "x" in str(info.value)


def test_snapshots(tmp_path, monkeypatch) -> None:
    out = ovir.Model(INT_DIVIDE).run(int_inputs())
    path = tmp_path / "snap.txt"
    assert_snapshot(out, path)  # written
    assert path.read_text() == snapshot_text(out)
    assert_snapshot(out, path)  # equal
    other = {"floor": out["floor"] + 1, "trunc": out["trunc"]}
    with pytest.raises(AssertionError, match="OVIR_UPDATE_SNAPSHOTS"):
        assert_snapshot(other, path)
    monkeypatch.setenv("OVIR_UPDATE_SNAPSHOTS", "1")
    assert_snapshot(other, path)
    assert path.read_text() == snapshot_text(other)
    # The text form is the CLI's.
    a, b = tmp_path / "a.npy", tmp_path / "b.npy"
    np.save(a, int_inputs()["a"])
    np.save(b, int_inputs()["b"])
    p = cli("run", INT_DIVIDE, "-i", f"a={a}", "-i", f"b={b}", "--full")
    assert p.stdout == snapshot_text(out)


def test_compile_model_like_openvino() -> None:
    compiled = ovir.compile_model(INT_DIVIDE)
    res = compiled(int_inputs())
    np.testing.assert_array_equal(res[0], res["floor"])
    np.testing.assert_array_equal(res[compiled.output(1)], res["trunc"])
    assert compiled.input("b").name == "b"
    assert len(res.to_tuple()) == 2
    with pytest.raises(KeyError):
        res["nope"]
    with pytest.raises(IndexError):
        res[2]
    res2 = compiled.infer_new_request({compiled.input(0): int_inputs()["a"], "b": int_inputs()["b"]})
    assert_outputs_close(res2, res)
    # OpenVINO's arguments: share_inputs (by keyword or position) and share_outputs.
    assert_outputs_close(compiled(int_inputs(), False, share_outputs=True), res)
    assert_outputs_close(compiled(int_inputs(), share_inputs=False), res)
    assert compiled.output(0) == compiled.outputs[0] != compiled.outputs[1]
    assert len({compiled.output(0), compiled.outputs[0]}) == 1
    # Two outputs of one name are told apart by their ports.
    multi = ovir.compile_model(SAMPLES / "multi_output" / "model.xml")
    inputs = load_npy_dir(SAMPLES / "multi_output" / "inputs")
    r = multi(inputs)
    for i, port in enumerate(multi.outputs):
        assert r[port] is r[i]


# Resources ---------------------------------------------------------------------------------


def rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="needs /proc")
def test_no_leak_over_10000_runs() -> None:
    m = ovir.Model(INT_DIVIDE)
    inputs = int_inputs()
    for _ in range(1000):
        m.run(inputs)
    # Four windows of 2,500 runs. A leak grows RSS in every window (100 bytes a run is
    # 250 KB a window); an allocator taking one more arena, once, grows it in one.
    growth = []
    for _ in range(4):
        before = rss_bytes()
        for _ in range(2500):
            out = m.run(inputs)
        growth.append(rss_bytes() - before)
    np.testing.assert_array_equal(out["floor"], [2, -3, -4, 3, 0, -1, -1])
    steady = sorted(growth)[:3]
    assert max(steady) < 256 << 10, f"RSS grew by {growth} bytes in windows of 2,500 runs"
    assert sum(growth) < 8 << 20, f"RSS grew by {growth} bytes in windows of 2,500 runs"


def test_threads_run_at_once() -> None:
    m = ovir.Model(INT_DIVIDE)
    rng = np.random.default_rng(0)
    cases = [
        {"a": rng.integers(-100, 100, 7, dtype=np.int32), "b": rng.integers(1, 9, 7, dtype=np.int32)}
        for _ in range(8)
    ]
    want = [m.run(c) for c in cases]
    failures = []

    def work(k: int) -> None:
        try:
            for _ in range(300):
                got = m.run(cases[k])
                if not ovir.compare(got, want[k]).equal:
                    failures.append(k)
                    return
        except Exception as e:  # noqa: BLE001 (reported below)
            failures.append(repr(e))

    threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures
