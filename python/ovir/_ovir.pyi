"""Type stubs of ovir's native module (re-exported by the ``ovir`` package)."""

from __future__ import annotations

import os
from typing import Any, Mapping, Sequence, Union, final

import numpy as np

__all__ = [
    "Diagnostic",
    "Error",
    "Model",
    "Port",
    "check",
    "compare",
    "output_file_names",
    "text",
    "__version__",
]

__version__: str

_Inputs = Union[Mapping[Union[str, int], Any], Sequence[Any], None]

class Error(Exception):
    """An error of ovir. ``str(e)`` is the text the CLI prints."""

    code: str
    """The code of the (first) error, as the CLI's: ``E613``."""
    errors: list[Diagnostic]
    """Every error, with its location."""

@final
class Diagnostic:
    """A finding of :func:`ovir.check`, or one error of an :class:`Error`."""

    code: str
    severity: str
    """``error`` or ``warning``."""
    message: str
    file: str | None
    line: int | None
    column: int | None
    layer_id: str | None
    layer_name: str | None
    layer_type: str | None
    port: str | None
    hint: str | None
    text: str
    """The finding as the CLI prints it: ``file:line:col: error[CODE]: layer ...: message``."""

@final
class Port:
    """A model input or output."""

    name: str
    names: list[str]
    layer: str
    element_type: str | None
    """``f32``, ``i64``, ``boolean``, ... (None: an output whose inference failed)."""
    shape: str
    """The partial shape: ``[1,3,?,224]``."""
    def get_any_name(self) -> str: ...
    def get_names(self) -> set[str]: ...

@final
class Model:
    """A loaded and validated OpenVINO IR model."""

    def __new__(
        cls,
        path: str | os.PathLike[str],
        weights: str | os.PathLike[str] | None = None,
        *,
        memory_limit: int | None = None,
    ) -> Model: ...
    @property
    def path(self) -> str: ...
    @property
    def inputs(self) -> list[Port]: ...
    @property
    def outputs(self) -> list[Port]: ...
    def unimplemented(self) -> list[str]: ...
    def run(self, inputs: _Inputs = None, *, share_inputs: bool = True) -> dict[str, np.ndarray]: ...
    def __call__(self, inputs: _Inputs = None, *, share_inputs: bool = True) -> dict[str, np.ndarray]: ...

def check(
    paths: list[str],
    shapes: list[tuple[str, str]] | None = None,
    weights: list[str] | None = None,
    deny_unknown: bool = False,
) -> tuple[list[Diagnostic], str, bool, list[str]]: ...
def compare(
    a: list[tuple[str, np.ndarray]],
    b: list[tuple[str, np.ndarray]],
    a_label: str,
    b_label: str,
    atol: float = 0.0,
    rtol: float = 0.0,
    ulps: int = 0,
    nan_differs: bool = False,
    show: int = 5,
) -> tuple[bool, str, str]: ...
def text(name: str, array: np.ndarray, full: bool = False) -> str: ...
def output_file_names(names: list[str]) -> list[str]:
    """The file names ``ovir run -o`` writes outputs of these names to, in order."""
