#!/usr/bin/env python3
"""Fits the piecewise polynomials of ovir's single-precision Erf, Gelu (erf form) and Tanh and
writes them as src/ops/unary/piecewise.rs.

    .venv/bin/python benches/fit_tables.py

Each function is split into intervals; interval i holds a point m_i and
    F(m + t) ~ c_hi + c_lo + q t + t R(t),   R a polynomial of degree 5,
with c_hi + c_lo = F(m) to twice f32 precision, q = F'(m) rounded to f32, and R fitted by
weighted least squares on 400 Chebyshev nodes of the interval (widened by 2% each side), the
weights |t| / |F| (the relative error R's error gives F). R's coefficients are rounded to f32
one at a time from the constant term, the rest refitted after each. References from mpmath at
40 digits. Prints each table's largest relative error over the nodes.

Erf: 16 intervals of width W = 0.255 centred on m_i = i W (the first from 0: m_0 = 0).
Gelu (erf form): H(u) = u Phi(-u) e^(u^2/2) for u = |x| (Phi the normal distribution), so that
Gelu(x) = -e^(-u^2/2) H(u) for x < 0 and x - e^(-u^2/2) H(u) for x >= 0; 32 intervals, the
eighth octaves of v = u + 1 (the index from v's bit pattern): u in [0, 1/8), [1/8, 1/4), ...
[1, 5/4), ... [14, 15), R of degree 4, centred on their midpoints but the first on 0 (so that
t = u there: Gelu(x) ~ x/2 keeps its relative precision for tiny x).

Tanh: the same 32 intervals as Gelu's H (the eighth octaves of u + 1, u = |x|, the first centred
on 0), R of degree 5 (degree 4 leaves 2^-27.7 on [1, 1.25)).

EXP2_32: 2^(j/32), j = 0..31, as pairs (high, low), for the exponential of -u^2/2 in Gelu's form,
and EXP_TAIL: a, b of the tail e^r - 1 - r ~ r^2 (a + b r) for |r| <= ln2/64, fitted by least
squares (relative), the same way.

    .venv/bin/python benches/fit_tables.py --log1p

prints (writes nothing) LOG1P_ODD of single.rs, SoftPlus's Q(v) = (atanh(sqrt v)/sqrt v - 1)/v
= 1/3 + v/5 + ... on 0 <= v <= 1/9: degree 4, weighted least squares on 3000 Chebyshev nodes
with Lawson's reweighting towards the minimax relative error, coefficients rounded to f32.
"""

import sys
from pathlib import Path

import mpmath as mp
import numpy as np

mp.mp.dps = 40
ROOT = Path(__file__).resolve().parent.parent


def f32(v):
    return float(np.float32(float(v)))


def nodes(lo, hi, n=400):
    k = np.arange(n)
    return (lo + hi) / 2 + (hi - lo) / 2 * np.cos(np.pi * (k + 0.5) / n)


def piece(F, dF, lo, hi, m, degree=5):
    """The row [m, c_hi, c_lo, q, r0..] for F on [lo, hi] around m (R of `degree`), and its
    largest error."""
    ext = 0.02 * (hi - lo)
    x = nodes(max(lo - ext, 0.0) if lo >= 0 else lo - ext, hi + ext)
    t = x - m
    t = t[t != 0]
    mm = mp.mpf(m)
    c = F(mm)
    c_hi = f32(c)
    c_lo = f32(c - c_hi)
    q = f32(dF(mm))
    ys = [F(mm + mp.mpf(float(ti))) for ti in t]
    target = np.array([float((y - c_hi - c_lo - q * mp.mpf(float(ti))) / mp.mpf(float(ti)))
                       for y, ti in zip(ys, t)])
    w = np.abs(t) / np.array([abs(float(y)) for y in ys])
    r = []
    while len(r) <= degree:
        k = len(r)
        rest = target - sum(ri * t**i for i, ri in enumerate(r))
        a = np.stack([t**i for i in range(k, degree + 1)], 1) * w[:, None]
        r.append(f32(np.linalg.lstsq(a, rest * w, rcond=None)[0][0]))
    err = 0.0
    for y, ti in zip(ys, t):
        ti = mp.mpf(float(ti))
        approx = c_hi + mp.mpf(c_lo) + q * ti + ti * sum(mp.mpf(ri) * ti**i for i, ri in enumerate(r))
        err = max(err, float(abs(approx - y) / abs(y)))
    return [f32(m), c_hi, c_lo, q] + r, err


def erf_rows():
    F = mp.erf
    dF = lambda x: 2 / mp.sqrt(mp.pi) * mp.exp(-x * x)
    w = 0.255
    return [piece(F, dF, max(0.0, (i - 0.5) * w), (i + 0.5) * w, f32(i * w)) for i in range(16)]


def octave_rows(F, dF, degree):
    """F on the 32 eighth octaves of u + 1, u in [0, 15): [0, 1/8) centred on 0 (so that t = u
    there: a function that starts as u keeps its relative precision for tiny u), the others on
    their midpoints."""
    rows = []
    for j in range(32):
        octave, eighth = divmod(j, 8)
        lo = 2.0**octave * (1 + eighth / 8) - 1
        hi = 2.0**octave * (1 + (eighth + 1) / 8) - 1
        rows.append(piece(F, dF, lo, hi, 0.0 if j == 0 else f32((lo + hi) / 2), degree))
    return rows


def gelu_h_rows(degree):
    """Gelu's form: H(u) = u Phi(-u) e^(u^2/2), u = |x|, so that Gelu(x) = -e^(-u^2/2) H(u) for
    x < 0 and x - e^(-u^2/2) H(u) for x >= 0: on the eighth octaves of u + 1 up to u = 15."""
    H = lambda u: u * mp.ncdf(-u) * mp.exp(u * u / 2)
    return octave_rows(H, lambda u: mp.diff(H, u), degree)


def tanh_rows(degree):
    """Tanh on the eighth octaves of u + 1 up to u = 15, as Gelu's H."""
    return octave_rows(mp.tanh, lambda u: 1 / mp.cosh(u) ** 2, degree)


def exp2_rows():
    """2^(j/32) as (high, low) columns, and the tail coefficients (a, b)."""
    hi = [f32(mp.mpf(2) ** (mp.mpf(j) / 32)) for j in range(32)]
    lo = [f32(mp.mpf(2) ** (mp.mpf(j) / 32) - h) for j, h in enumerate(hi)]
    top = float(mp.log(2) / 64) * 1.01
    r = nodes(-top, top)
    r = r[r != 0]
    tail = np.array([float((mp.exp(mp.mpf(float(x))) - 1 - mp.mpf(float(x))) / mp.mpf(float(x)) ** 2)
                     for x in r])
    a = f32(np.linalg.lstsq(np.stack([np.ones_like(r), r], 1), tail, rcond=None)[0][0])
    b = f32(np.linalg.lstsq(r[:, None], tail - a, rcond=None)[0][0])
    err = 0.0
    for x in r:
        x = mp.mpf(float(x))
        e = mp.exp(x)
        err = max(err, float(abs(1 + x + x * x * (mp.mpf(a) + mp.mpf(b) * x) - e) / e))
    print(f"EXP_TAIL: worst 2^{np.log2(err):.1f}", file=sys.stderr)
    return hi, lo, (a, b), err


def floats(vals):
    vals = [np.format_float_scientific(np.float32(v), unique=True, exp_digits=1).replace("e+", "e")
            for v in vals]
    return [v.replace(".e", ".0e") for v in vals]


def columns(cols):
    """The body of a Rust array of arrays, one inner array per column, four values a line."""
    out = []
    for col in cols:
        vals = floats(col)
        out.append("    [")
        for k in range(0, len(vals), 4):
            out.append("        " + ", ".join(vals[k:k + 4]) + ",")
        out.append("    ],")
    out.append("];")
    return out


def rust(name, doc, rows):
    errs = [e for _, e in rows]
    cols = list(zip(*[r for r, _ in rows]))
    out = [f"/// {line}".rstrip() for line in doc]
    out.append(f"/// Largest relative error of the fit: 2^{np.log2(max(errs)):.1f}.")
    out.append("#[allow(clippy::approx_constant)]")
    out.append(f"pub(super) const {name}: [[f32; {len(rows)}]; {len(cols)}] = [")
    out += columns(cols)
    for i, e in enumerate(errs):
        print(f"{name}[{i}]: 2^{np.log2(e):.1f}", file=sys.stderr)
    print(f"{name}: worst 2^{np.log2(max(errs)):.1f}", file=sys.stderr)
    return "\n".join(out)


def exp2_text():
    hi, lo, (a, b), err = exp2_rows()
    out = ["/// 2^(j/32) for j = 0..31 as pairs: the high parts, then the low parts.",
           "#[allow(clippy::approx_constant)]",
           "pub(super) const EXP2_32: [[f32; 32]; 2] = ["]
    out += columns((hi, lo))
    out.append("")
    out.append("/// `a`, `b` in e^r ~ 1 + r + r² (a + b r) for |r| ≤ ln 2 / 64 (relative error of the fit:")
    out.append(f"/// 2^{np.log2(err):.1f}).")
    out.append(f"pub(super) const EXP_TAIL: [f32; 2] = [{', '.join(floats([a, b]))}];")
    return "\n".join(out)


def log1p_odd():
    def q(v):
        if v == 0:
            return mp.mpf(1) / 3
        r = mp.sqrt(v)
        return (mp.atanh(r) / r - 1) / v

    v = nodes(0.0, 1.0 / 9.0, 3000)
    target = np.array([float(q(mp.mpf(float(x)))) for x in v])
    a = np.vstack([v ** k for k in range(5)]).T
    weights = np.ones(len(v))
    for _ in range(60):
        w = weights / target
        c, *_ = np.linalg.lstsq(a * w[:, None], target * w, rcond=None)
        err = (a @ c - target) / target
        weights = weights * np.abs(err)
        weights /= weights.sum()
    c32 = [np.float32(x) for x in c]
    got = np.polyval([float(x) for x in c32[::-1]], v)
    print(f"// within 2^{np.log2(np.abs((got - target) / target).max()):.1f} relatively")
    print("const LOG1P_ODD: [f32; 5] = [")
    for x in c32:
        print(f"    f32::from_bits(0x{int(x.view(np.uint32)):08x}),")
    print("];")


def main():
    if "--log1p" in sys.argv[1:]:
        log1p_odd()
        return
    header = [
        "//! Tables of the piecewise polynomials of the single-precision Erf, Gelu and Tanh",
        "//! ([`super::single`]), written by `benches/fit_tables.py` (do not edit: run it).",
        "//! Each is a list of columns, one entry per interval: the point m the interval is",
        "//! centred on, F(m) as a pair (high, low), F'(m), and the coefficients r0, r1, … of R in",
        "//! F(m + t) ~ F(m) + F'(m) t + t R(t).",
        "",
        "/// Rows of a table.",
        "pub(super) const M: usize = 0;",
        "pub(super) const HI: usize = 1;",
        "pub(super) const LO: usize = 2;",
        "pub(super) const Q: usize = 3;",
        "pub(super) const R: usize = 4;",
        "",
    ]
    text = "\n".join(header) + "\n" + "\n\n".join([
        rust("ERF", ["Erf on 16 intervals of width 0.255 centred on i · 0.255 (R of degree 5)."], erf_rows()),
        rust("GELU_H", ["Gelu's H(u) = u Φ(−u) e^(u²/2) for u = |x| (R of degree 4), on the eighth octaves of",
                        "u + 1: [0, 1/8) (centred on 0), [1/8, 1/4), … [14, 15)."],
             gelu_h_rows(4)),
        rust("TANH", ["Tanh on the eighth octaves of u + 1 (R of degree 5): [0, 1/8) (centred on 0), [1/8, 1/4),",
                      "… [14, 15)."],
             tanh_rows(5)),
        exp2_text(),
    ]) + "\n"
    (ROOT / "src/ops/unary/piecewise.rs").write_text(text)


if __name__ == "__main__":
    main()
