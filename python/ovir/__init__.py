"""ovir: an OpenVINO IR interpreter, exact to the op specs.

>>> import ovir
>>> m = ovir.Model("model.xml")                # the .bin beside it; weights= to choose
>>> out = m.run({"a": a, "b": b})              # dict name -> numpy array, in output order
>>> ovir.check("model.xml").ok                 # every finding, as `ovir check` reports them
>>> ovir.compare(out, expected, atol=1e-6).equal

Errors raise :class:`ovir.Error`, whose ``code`` is the CLI's (``E613``) and whose ``str`` is
the text the CLI prints.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any, Iterable, Union

import numpy as np

from ._ovir import Diagnostic, Error, Model, Port, __version__, output_file_names
from . import _ovir

__all__ = [
    "CheckReport",
    "CompiledModel",
    "Comparison",
    "Diagnostic",
    "Error",
    "Model",
    "Port",
    "Results",
    "check",
    "compare",
    "compile_model",
    "output_file_names",
    "text",
    "__version__",
]

PathLike = Union[str, "os.PathLike[str]"]


class CheckReport(list):
    """The findings of :func:`check`: a list of :class:`Diagnostic`, in file order.

    ``ok`` is whether the check passes (no errors; with ``deny_warnings``, no warnings
    either), as ``ovir check``'s exit code 0. ``text`` is ``ovir check``'s text report.
    """

    def __init__(self, diagnostics, text: str, unreadable: bool, deny_warnings: bool):
        super().__init__(diagnostics)
        self.text = text
        self.unreadable = unreadable
        self.deny_warnings = deny_warnings

    @property
    def errors(self) -> list:
        return [d for d in self if d.severity == "error"]

    @property
    def warnings(self) -> list:
        return [d for d in self if d.severity == "warning"]

    @property
    def ok(self) -> bool:
        if self.unreadable or self.errors:
            return False
        return not (self.deny_warnings and self.warnings)

    def __repr__(self) -> str:
        return f"CheckReport(errors={len(self.errors)}, warnings={len(self.warnings)}, ok={self.ok})"


def check(
    paths: PathLike | Iterable[PathLike],
    *,
    deny_warnings: bool = False,
    shapes: Mapping[str, str] | None = None,
    weights: PathLike | Iterable[PathLike] | None = None,
    deny_unknown: bool = False,
) -> CheckReport:
    """Checks IR files as ``ovir check`` does, every finding at once.

    ``shapes`` specialises dynamic inputs before checking (``{"x": "[1,3,?,?]"}``, names as
    ``--shape``); a name no checked model has raises ``ValueError``. ``weights`` is one
    ``.bin`` per model (default: the one beside each ``.xml``).
    """
    paths = _paths(paths)
    ws = None if weights is None else _paths(weights)
    pairs = None if shapes is None else [(str(k), str(v)) for k, v in shapes.items()]
    diagnostics, report, unreadable, unmatched = _ovir.check(paths, pairs, ws, deny_unknown)
    if unmatched:
        raise ValueError(
            "; ".join(f"shapes[{n!r}]: no input of the checked models has this name" for n in unmatched)
        )
    return CheckReport(diagnostics, report, unreadable, deny_warnings)


def _paths(p) -> list:
    if isinstance(p, (str, bytes, os.PathLike)):
        return [os.fspath(p)]
    return [os.fspath(x) for x in p]


class Comparison:
    """The result of :func:`compare`: ``equal`` (all arrays the same within tolerance),
    ``report`` (``ovir diff``'s text report), ``json`` (its JSON report)."""

    def __init__(self, equal: bool, report: str, json: str):
        self.equal = equal
        self.report = report
        self.json = json

    def __bool__(self) -> bool:
        return self.equal

    def __str__(self) -> str:
        return self.report

    def __repr__(self) -> str:
        return f"Comparison(equal={self.equal})"


def _sides(actual: Any, expected: Any) -> tuple:
    """(name, array) pairs of both sides: dicts (and :class:`Results`) by name, lists by
    position (a list against a dict takes the dict's names in order), single arrays as one."""

    def names(x):
        return [str(k) for k in x.keys()] if isinstance(x, Mapping) else None

    def values(x):
        if isinstance(x, Mapping):
            return list(x.values())
        return list(x) if isinstance(x, (list, tuple)) else [x]

    na, ne = names(actual), names(expected)
    va, ve = values(actual), values(expected)
    single = not isinstance(actual, (Mapping, list, tuple)) and not isinstance(expected, (Mapping, list, tuple))

    def fill(known, n):
        known = (known or [])[:n]
        return known + [f"#{i}" for i in range(len(known), n)]

    if na is None and ne is None and single:
        na = ne = ["array"]
    if na is None:
        na = fill(ne, len(va))
    if ne is None:
        ne = fill(na, len(ve))
    return list(zip(na, va)), list(zip(ne, ve))


def compare(
    actual: Any,
    expected: Any,
    *,
    atol: float = 0.0,
    rtol: float = 0.0,
    ulps: int | None = None,
    nan_differs: bool = False,
    show: int = 5,
) -> Comparison:
    """Compares arrays with the rules of ``ovir diff``: an element is the same when
    ``|a - e| <= atol + rtol * |e|`` or it is within ``ulps`` units in the last place; types
    and shapes must match; two NaNs are equal unless ``nan_differs``. Defaults are exact.

    ``actual`` and ``expected`` are dicts of name -> array (matched by name), lists (by
    position) or single arrays. ``show`` bounds the mismatches listed per array.
    """
    b, a = _sides(actual, expected)
    equal, report, js = _ovir.compare(
        [(n, np.asarray(v)) for n, v in a],
        [(n, np.asarray(v)) for n, v in b],
        "expected",
        "actual",
        atol=float(atol),
        rtol=float(rtol),
        ulps=0 if ulps is None else int(ulps),
        nan_differs=nan_differs,
        show=int(show),
    )
    return Comparison(equal, report, js)


def text(name: str, array: Any, *, full: bool = False) -> str:
    """An array's stable text form, as ``ovir run --format text`` prints an output (long
    arrays elided unless ``full``)."""
    return _ovir.text(name, np.asarray(array), full)


class Results(Mapping):
    """The outputs of a :class:`CompiledModel` call: indexable by output name, by any tensor
    name of the output, by position, or by the :class:`Port` itself, like OpenVINO's
    ``OVDict``."""

    def __init__(self, outputs: dict, ports: Sequence[Port]):
        self._outputs = outputs
        self._values = list(outputs.values())
        self._names = list(outputs.keys())
        self._ports = list(ports)

    def _index(self, key) -> int:
        if isinstance(key, Port):
            if key in self._ports:
                return self._ports.index(key)
            key = key.name
        if isinstance(key, int) and not isinstance(key, bool):
            if -len(self._values) <= key < len(self._values):
                return key % len(self._values)
            raise IndexError(f"output {key} of {len(self._values)}")
        for i, n in enumerate(self._names):
            if n == key:
                return i
        for i, p in enumerate(self._ports):
            if key in p.names:
                return i
        raise KeyError(f"no output is named {key!r}; outputs: {', '.join(self._names)}")

    def __getitem__(self, key) -> np.ndarray:
        return self._values[self._index(key)]

    def __iter__(self):
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._values)

    def to_tuple(self) -> tuple:
        return tuple(self._values)

    def to_dict(self) -> dict:
        return dict(self._outputs)

    def __repr__(self) -> str:
        return "Results(" + ", ".join(f"{n}: {v.dtype}{list(v.shape)}" for n, v in self.items()) + ")"


class CompiledModel:
    """A drop-in for OpenVINO's ``CompiledModel`` in test suites: ``compiled(inputs)`` and
    ``infer_new_request(inputs)`` return :class:`Results`; ``inputs``/``outputs`` list the
    ports, ``input(i)``/``output(i)`` give one. See docs/python.md for what differs."""

    def __init__(self, model: Model):
        self.model = model

    @property
    def inputs(self) -> list:
        return self.model.inputs

    @property
    def outputs(self) -> list:
        return self.model.outputs

    def input(self, key: int | str = 0) -> Port:
        return _port(self.model.inputs, key, "input")

    def output(self, key: int | str = 0) -> Port:
        return _port(self.model.outputs, key, "output")

    def __call__(self, inputs: Any = None, share_inputs: bool = True, *args, **kwargs) -> Results:
        """Runs the model. With ``share_inputs`` (the default, as in OpenVINO), arrays of the
        input's dtype are read in place; other OpenVINO arguments are accepted and ignored."""
        if isinstance(inputs, Mapping):
            ports = self.model.inputs
            inputs = {(_position(ports, k) if isinstance(k, Port) else k): v for k, v in inputs.items()}
        elif inputs is not None and not isinstance(inputs, (list, tuple)):
            inputs = [inputs]  # OpenVINO takes a lone array for a one-input model
        return Results(self.model.run(inputs, share_inputs=bool(share_inputs)), self.model.outputs)

    def infer_new_request(self, inputs: Any = None) -> Results:
        """Runs the model on a copy of the inputs (OpenVINO's new request does not share them)."""
        return self(inputs, share_inputs=False)

    def __repr__(self) -> str:
        return f"CompiledModel({self.model.path!r})"


def _position(ports: Sequence[Port], port: Port):
    """A port's position among `ports`, else its name (a port of another model)."""
    return ports.index(port) if port in ports else port.name


def _port(ports: Sequence[Port], key, what: str) -> Port:
    if isinstance(key, int):
        if 0 <= key < len(ports):
            return ports[key]
        raise IndexError(f"{what} {key} of {len(ports)}")
    for p in ports:
        if key == p.name or key in p.names:
            return p
    raise KeyError(f"no {what} is named {key!r}")


def compile_model(
    model: PathLike | Model,
    device_name: str = "CPU",
    config: Mapping | None = None,
    *,
    weights: PathLike | None = None,
) -> CompiledModel:
    """Loads a model for OpenVINO-style calls: ``ovir.compile_model(path)(inputs)[name]``.
    ``device_name`` and ``config`` are accepted for the same call shape and ignored (ovir
    runs on the CPU, exactly)."""
    if not isinstance(model, Model):
        model = Model(os.fspath(model), None if weights is None else os.fspath(weights))
    return CompiledModel(model)
