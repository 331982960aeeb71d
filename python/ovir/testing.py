"""Helpers for pytest: compare outputs with ``ovir diff``'s rules and snapshot them in
ovir's stable text form.

>>> from ovir.testing import assert_outputs_close, assert_snapshot
>>> assert_outputs_close(model.run(inputs), expected, atol=1e-6)
>>> assert_snapshot(model.run(inputs), "tests/snapshots/block.txt")
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping
from typing import Any

import numpy as np

from . import compare, text

__all__ = ["assert_outputs_close", "assert_snapshot", "snapshot_text"]


def assert_outputs_close(
    actual: Any,
    expected: Any,
    *,
    atol: float = 0.0,
    rtol: float = 0.0,
    ulps: int | None = None,
    nan_differs: bool = False,
    show: int = 5,
) -> None:
    """Asserts that ``actual`` equals ``expected`` within the tolerances (exact by default),
    by :func:`ovir.compare`. On failure the message is ``ovir diff``'s report: each array's
    status, the first mismatches with their indices, and the counts."""
    __tracebackhide__ = True
    result = compare(
        actual, expected, atol=atol, rtol=rtol, ulps=ulps, nan_differs=nan_differs, show=show
    )
    if not result.equal:
        raise AssertionError("outputs differ\n" + result.report)


def snapshot_text(outputs: Any, *, full: bool = True) -> str:
    """The text form of outputs (a dict of name -> array, or one array), one after the
    other, as ``ovir run --format text --full`` prints them: stable across runs and
    platforms, exact for every value."""
    if isinstance(outputs, Mapping):
        items = list(outputs.items())
    else:
        items = [("output", outputs)]
    return "".join(text(str(n), np.asarray(v), full=full) for n, v in items)


def assert_snapshot(outputs: Any, path: str | os.PathLike, *, full: bool = True) -> None:
    """Asserts that the text form of ``outputs`` equals the file at ``path``. A missing file
    is written (and the test passes); with ``OVIR_UPDATE_SNAPSHOTS=1`` in the environment a
    differing file is rewritten. Files are written atomically."""
    __tracebackhide__ = True
    got = snapshot_text(outputs, full=full)
    path = os.fspath(path)
    update = os.environ.get("OVIR_UPDATE_SNAPSHOTS", "") not in ("", "0")
    try:
        with open(path, encoding="utf-8", newline="") as f:
            want = f.read()
    except FileNotFoundError:
        want = None
    if want == got:
        return
    if want is None or update:
        _write_atomic(path, got)
        return
    raise AssertionError(
        f"snapshot {path} differs (set OVIR_UPDATE_SNAPSHOTS=1 to accept the new one)\n"
        + _unified(want, got, path)
    )


def _unified(want: str, got: str, path: str) -> str:
    import difflib

    return "".join(
        difflib.unified_diff(
            want.splitlines(keepends=True),
            got.splitlines(keepends=True),
            fromfile=path,
            tofile="new",
        )
    )


def _write_atomic(path: str, content: str) -> None:
    folder = os.path.dirname(path) or "."
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".snapshot-")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(content)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
