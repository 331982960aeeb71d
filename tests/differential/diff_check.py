#!/usr/bin/env python3
"""Differential test of `ovir diff` against numpy: random pairs of arrays (every numpy dtype
ovir reads, NaN/inf/-0 included) under random tolerances; the number of differing elements,
the status and the max absolute error must be what numpy computes from the documented rules
(docs/snapshots.md):

  equal    a == b, or both NaN unless --nan-differs
  within   floats only, both finite: |a-b| <= atol + rtol*|a|, or at most `ulps` steps apart

    .venv/bin/python tests/differential/diff_check.py --ovir target/release/ovir --pairs 300
"""

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

np.seterr(over="ignore")

FLOATS = ["float16", "float32", "float64"]
INTS = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]


def ordinal(x):
    """Position on the type's number line (ovir's ulps measure), as Python ints."""
    bits = {2: np.uint16, 4: np.uint32, 8: np.uint64}[x.dtype.itemsize]
    b = x.view(bits).astype(object)
    sign = 1 << (8 * x.dtype.itemsize - 1)
    return np.array([-(v & ~sign & (sign - 1)) if v & sign else v for v in b.ravel()], dtype=object).reshape(x.shape)


def expected(a, b, atol, rtol, ulps, nan_differs):
    if a.dtype.kind == "b" or a.dtype.kind in "iu":
        pa, pb = a.astype(object), b.astype(object)
        diff = np.array([x != y for x, y in zip(pa.ravel(), pb.ravel())], dtype=bool)
        absd = [abs(int(x) - int(y)) for x, y in zip(pa.ravel(), pb.ravel())]
        return int(diff.sum()), 0, max(absd, default=0)
    fa, fb = a.astype(np.float64), b.astype(np.float64)
    both_nan = np.isnan(fa) & np.isnan(fb)
    any_nan = np.isnan(fa) | np.isnan(fb)
    equal = (fa == fb) | (both_nan & (not nan_differs))
    finite = np.isfinite(fa) & np.isfinite(fb)
    with np.errstate(invalid="ignore", over="ignore"):
        absd = np.where(finite, np.abs(fa - fb), np.where(fa == fb, 0.0, np.inf))
        within = finite & (absd <= atol + rtol * np.abs(fa))
    if ulps > 0:
        oa, ob = ordinal(a), ordinal(b)
        steps = np.array([abs(x - y) <= ulps for x, y in zip(oa.ravel(), ob.ravel())], dtype=bool).reshape(a.shape)
        within |= finite & steps
    differing = ~equal & ~within
    close = ~equal & within
    valid = ~any_nan
    max_abs = float(absd[valid].max()) if valid.any() else 0.0
    return int(differing.sum()), int(close.sum()), max_abs


def random_pair(rng):
    kind = rng.choice(FLOATS + INTS + ["bool"])
    shape = tuple(int(d) for d in rng.integers(1, 6, size=rng.integers(0, 4)))
    if rng.random() < 0.05:
        shape = shape + (0,)
    n = int(np.prod(shape))
    if kind == "bool":
        a = rng.integers(0, 2, n).astype(bool)
        b = a.copy()
        flip = rng.random(n) < 0.3
        b[flip] = ~b[flip]
    elif kind in INTS:
        info = np.iinfo(kind)
        a = rng.integers(info.min, info.max, n, dtype=kind, endpoint=True)
        b = a.copy()
        change = rng.random(n) < 0.4
        b[change] = rng.integers(info.min, info.max, int(change.sum()), dtype=kind, endpoint=True)
    else:
        specials = np.array([0.0, -0.0, np.nan, np.inf, -np.inf, 1.0, -1.0, 1e-3, 65504.0])
        a = np.where(rng.random(n) < 0.2, rng.choice(specials, n), rng.normal(0, 10, n)).astype(kind)
        b = a.copy()
        r = rng.random(n)
        # Tiny nudges (1-3 steps), relative noise, specials, and untouched values.
        steps = rng.integers(1, 4, n)
        nudged = a.copy()
        for k in np.nonzero(r < 0.3)[0]:
            for _ in range(steps[k]):
                nudged[k] = np.nextafter(nudged[k], np.inf if rng.random() < 0.5 else -np.inf, dtype=kind)
        b = np.where(r < 0.3, nudged, b)
        b = np.where((r >= 0.3) & (r < 0.5), (a * (1 + rng.normal(0, 1e-4, n))).astype(kind), b)
        b = np.where((r >= 0.5) & (r < 0.6), rng.choice(specials, n).astype(kind), b)
    return a.reshape(shape), b.astype(a.dtype).reshape(shape)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ovir", required=True)
    ap.add_argument("--pairs", type=int, default=300)
    ap.add_argument("--seed", type=int, default=None)
    args = ap.parse_args()
    seed = args.seed if args.seed is not None else int(np.random.SeedSequence().entropy % 2**32)
    print(f"diff_check: seed {seed}, {args.pairs} pairs")
    rng = np.random.default_rng(seed)
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        for i in range(args.pairs):
            a, b = random_pair(rng)
            np.save(tmp / "a.npy", a)
            np.save(tmp / "b.npy", b)
            atol = float(rng.choice([0.0, 1e-6, 1e-3, 1.0]))
            rtol = float(rng.choice([0.0, 1e-6, 1e-3]))
            ulps = int(rng.choice([0, 1, 2]))
            nan_differs = bool(rng.random() < 0.3)
            cmd = [args.ovir, "diff", str(tmp / "a.npy"), str(tmp / "b.npy"), "--format", "json",
                   "--atol", repr(atol), "--rtol", repr(rtol), "--ulps", str(ulps)]
            if nan_differs:
                cmd.append("--nan-differs")
            p = subprocess.run(cmd, capture_output=True, text=True)
            want_diff, want_close, want_abs = expected(a, b, atol, rtol, ulps, nan_differs)
            try:
                entry = json.loads(p.stdout)["tensors"][0]
            except Exception:
                print(f"pair {i}: ovir failed: {p.returncode}\n{p.stdout}{p.stderr}")
                failures += 1
                continue
            got_abs = entry["max_abs_error"]
            got_abs = float(got_abs) if not isinstance(got_abs, str) else float(got_abs)
            want_status = "different" if want_diff else ("close" if want_close else "equal")
            want_code = 1 if want_diff else 0
            ok = (entry["differing"], entry["within_tolerance"], entry["status"], p.returncode) == (
                want_diff, want_close, want_status, want_code
            ) and (got_abs == want_abs or a.dtype.kind in "iub" and abs(got_abs - want_abs) <= want_abs * 1e-15)
            if not ok:
                failures += 1
                keep = Path(f"diff_check_failure_{i}")
                keep.mkdir(exist_ok=True)
                np.save(keep / "a.npy", a)
                np.save(keep / "b.npy", b)
                print(f"pair {i} ({a.dtype}, {a.shape}, atol {atol} rtol {rtol} ulps {ulps} nan_differs {nan_differs}): "
                      f"ovir {entry['status']} differing {entry['differing']} close {entry['within_tolerance']} "
                      f"max_abs {got_abs} exit {p.returncode}; numpy {want_status} {want_diff} {want_close} {want_abs}; "
                      f"kept in {keep}")
    if failures:
        print(f"diff_check: {failures} of {args.pairs} pairs disagree (seed {seed})")
        sys.exit(1)
    print(f"diff_check: all {args.pairs} pairs agree")


if __name__ == "__main__":
    main()
