#!/usr/bin/env python3
"""Fits the polynomials of ovir's single-precision Erf (src/ops/unary/single.rs) and prints
them as the Rust tables there.

    .venv/bin/python benches/fit_erf.py

ERF_SMALL: (erf(x)/x - 2/sqrt(pi)) / x^2 as a polynomial in x^2 on 0 < x <= 0.875, weighted by
the relative error it gives erf. ERFC_LOG: ln erfc(a) + a^2 as a polynomial in a - 2 on
0.875 <= a <= 4. Both are least-squares fits on 3000 Chebyshev nodes (references from mpmath
at 40 digits), the coefficients rounded to f32 one at a time from the constant term, the
rest refitted after each, so that the later ones absorb the earlier ones' rounding. Prints
each fit's largest error over the nodes.
"""

import struct

import mpmath as mp
import numpy as np

mp.mp.dps = 40


def f32(v):
    return float(np.float32(v))


def nodes(lo, hi, n=3000):
    k = np.arange(n)
    return (lo + hi) / 2 + (hi - lo) / 2 * np.cos(np.pi * (k + 0.5) / n)


def fit(v, y, w, deg):
    """y ~ sum c_i v^i (weights w), coefficients rounded to f32 one at a time."""
    c = []
    while len(c) <= deg:
        k = len(c)
        r = y - sum(ci * v**i for i, ci in enumerate(c))
        a = np.stack([v**i for i in range(k, deg + 1)], 1) * w[:, None]
        c.append(f32(np.linalg.lstsq(a, r * w, rcond=None)[0][0]))
    return c


def table(name, c):
    bits = [struct.unpack("<I", struct.pack("<f", x))[0] for x in c]
    rows = "".join(f"    f32::from_bits(0x{b >> 16:04x}_{b & 0xFFFF:04x}),\n" for b in bits)
    return f"const {name}: [f32; {len(c)}] = [\n{rows}];"


SPLIT, MID = 0.875, 2.0
x = nodes(1e-4, SPLIT)
erf = np.array([float(mp.erf(t)) for t in x])
c0 = float(2 / mp.sqrt(mp.pi))
small = fit(x * x, (erf / x - c0) / x**2, x**3 / erf, 6)
err = np.max(np.abs(x * (c0 + x * x * np.polynomial.polynomial.polyval(x * x, small)) / erf - 1))
print(f"// ERF_SMALL: largest relative error of erf 2^{np.log2(err):.1f}")
print(table("ERF_SMALL", small))

a = nodes(SPLIT, 4.0)
log = np.array([float(mp.log(mp.erfc(t)) + mp.mpf(t) ** 2) for t in a])
large = fit(a - MID, log, np.ones_like(a), 8)
err = np.max(np.abs(np.polynomial.polynomial.polyval(a - MID, large) - log))
print(f"// ERFC_LOG: largest error 2^{np.log2(err):.1f}")
print(table("ERFC_LOG", large))
