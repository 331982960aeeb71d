"""Samples of the elementwise ops beyond the arithmetic family: the unary math ops and
activations, comparisons, logical and bitwise ops, Select, PRelu, ConvertLike, on every type
each op allows and on edge values. Called by generate.py (`write_all(generate_module)`).

Expected values come from the spec:
* exact ops (Abs, Floor, Round, Sqrt, Relu, Clamp, comparisons, bitwise…): numpy in the type
  (f16 and bf16 through f32, rounded once), and exact integer rules;
* transcendental functions and activations: the exact value of the spec's formula from mpmath
  (200 bits), rounded to f64, and from there to f32 (then f16/bf16), which is the correctly
  rounded result but for double-rounding ties. ovir must be within 1 ulp of it: those folders
  hold `tolerance.txt` (`ulps 1`; f64 rules made of several operations may need more: the
  number written is the bound docs/accuracy.md states for that function);
* cross-checks with OpenVINO's reference evaluation (constant folding) on f32 for the exact
  ops on ordinary values.
"""

import mpmath as mp
import numpy as np
import openvino as ov
import openvino.opset13 as ops
from openvino.utils.node_factory import NodeFactory

mp.mp.prec = 200

BOOL = "boolean"


def ovt(spec, t):
    return ov.Type.boolean if t == BOOL else spec.OVT[t]


def np_type(spec, t):
    return np.bool_ if t == BOOL else spec.NP[t]


def float_edges(spec, t, extra=()):
    """Edge values of a float type, then a spread of ordinary ones."""
    base = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.5, -2.5, np.inf, -np.inf, np.nan, 1e-7, -3e-8, 6e-8,
            1e-30, 1e-40, 3.0, -3.0, 10.0, -10.0, 20.0, -20.0, 88.0, 89.0, -104.0, 710.0, 1e10, -1e10,
            0.49999997, 1.5, 65504.0, 1e300]
    v = np.array(list(base) + list(extra), dtype=np.float64)
    rng = np.random.default_rng(len(v))
    v = np.concatenate([v, rng.standard_normal(16) * 4, rng.uniform(-1, 1, 8)])
    return spec.to_type(v, t)


def int_edges(spec, t):
    info = np.iinfo(spec.NP[t])
    base = [0, 1, -1, 2, -2, 3, 4, 5, 6, 7, 12, 15, 16, -7, 100, -100, info.min, info.max, info.min + 1, info.max - 1]
    return np.array([x for x in base if info.min <= x <= info.max], dtype=spec.NP[t])


# --- exact values with mpmath ------------------------------------------------------------------

def mp_map(f, x, t, spec):
    """f (on mpf, may return None for NaN) on every element of x, correctly rounded to f64 and
    then to type t (f16/bf16 through f32). Non-finite and zero inputs take numpy's float64 value
    of `fallback`, so that IEEE limits and signed zeros are as C defines them."""
    out = []
    for v in np.asarray(x, dtype=np.float64).reshape(-1):
        r = f(mp.mpf(float(v))) if np.isfinite(v) else None
        out.append(np.nan if r is None else float(r))
    return np.array(out, dtype=np.float64).reshape(np.shape(x))


def to_type(spec, v64, t):
    if t == "f64":
        return v64
    f32 = v64.astype(np.float32)
    return f32 if t == "f32" else spec.to_type(f32, t)


def guard(domain=lambda x: True, inf=None, zero_keeps_sign=False):
    """Wraps an mpmath function: NaN outside its domain."""
    def wrap(f):
        def g(x):
            if not domain(x):
                return None
            return f(x)
        g.inf = inf
        g.zero_keeps_sign = zero_keeps_sign
        return g
    return wrap


def sigmoid(x):
    return 1 / (1 + mp.exp(-x))


def softplus(x):
    return mp.log1p(mp.exp(x))


# The formulas in forms that keep 200 bits relative (1 + erf(z) = erfc(−z), 1 + tanh(u) =
# 2 / (1 + e^−2u), log(1 + e^x) = log1p(e^x)): mpmath's precision is relative, so `1 + erf(z)`
# near −1 would lose the tiny result.
def gelu_erf(x):
    return x / 2 * mp.erfc(-x / mp.sqrt(2))


def gelu_tanh(x):
    u = mp.sqrt(2 / mp.pi) * (x + mp.mpf("0.044715") * x ** 3)
    return x / (1 + mp.exp(-2 * u))


def hsig(x):
    return min(max(x + 3, 0), 6) / mp.mpf(6)


# name: (mpmath function on finite inputs (None: NaN), numpy float64 function giving C's IEEE
# answer on ±inf, NaN and ±0)
TRANSCENDENTAL = {
    "Exp": (mp.exp, np.exp),
    "Log": (lambda x: mp.log(x) if x > 0 else None, np.log),
    "Sin": (mp.sin, np.sin),
    "Cos": (mp.cos, np.cos),
    "Tan": (mp.tan, np.tan),
    "Asin": (lambda x: mp.asin(x) if abs(x) <= 1 else None, np.arcsin),
    "Acos": (lambda x: mp.acos(x) if abs(x) <= 1 else None, np.arccos),
    "Atan": (mp.atan, np.arctan),
    "Sinh": (mp.sinh, np.sinh),
    "Cosh": (mp.cosh, np.cosh),
    "Tanh": (mp.tanh, np.tanh),
    "Asinh": (mp.asinh, np.arcsinh),
    "Acosh": (lambda x: mp.acosh(x) if x >= 1 else None, np.arccosh),
    "Atanh": (lambda x: (mp.atanh(x) if abs(x) < 1 else None) if abs(x) != 1 else (mp.inf if x > 0 else -mp.inf), np.arctanh),
    "Erf": (mp.erf, lambda x: np.array([mp_erf_limit(v) for v in np.ravel(x)]).reshape(np.shape(x))),
    "Sigmoid": (sigmoid, lambda x: 1 / (1 + np.exp(-x))),
    "HSigmoid": (hsig, lambda x: np.clip(x + 3, 0, 6) / 6),
    "HSwish": (lambda x: x * hsig(x), lambda x: x * np.clip(x + 3, 0, 6) / 6),
    "SoftPlus": (softplus, lambda x: np.where(x > 0, x, 0.0) + np.log1p(np.exp(-np.abs(x)))),
    "SoftSign": (lambda x: x / (1 + abs(x)), lambda x: x / (1 + np.abs(x))),
    "Mish": (lambda x: x * mp.tanh(softplus(x)), lambda x: x * np.tanh(np.where(x > 0, x, 0.0) + np.log1p(np.exp(-np.abs(x))))),
    "Gelu": (gelu_erf, lambda x: np.where(np.isinf(x), np.where(x > 0, x, -0.0), 0.5 * x)),
}


# Functions that are one call of the libm crate in f64 (within 1 ulp); the others compose
# several operations in f64, whose errors add up (docs/accuracy.md has the measured bounds).
LIBM = {"Exp", "Log", "Sin", "Cos", "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Tanh", "Asinh", "Acosh", "Atanh", "Erf"}
F64_COMPOSED_ULPS = 4


def tolerance(t, one_call=False):
    """Allowed ulps against the correctly rounded value: 1 for f32 and f16 (computed in f64 and
    rounded once; f16 through f32), for f64 1 for one libm call and more for composed rules;
    bf16 is compared bit for bit (stored as float32 in .npy)."""
    if t == "bf16":
        return None
    if t == "f64" and not one_call:
        return F64_COMPOSED_ULPS
    return 1


def mp_erf_limit(v):
    if np.isnan(v):
        return np.nan
    if v == 0:
        return v
    return 1.0 if v > 0 else -1.0


# x · g(x) with g → 0 as x → −∞: the limit at −∞ is −0 (the naive formula gives −∞ · 0 = NaN).
PRODUCT_FORMS = {"HSwish", "Mish", "Gelu"}


def expected_transcendental(spec, name, x, t, f=None, limit=None, product=False):
    f_mp, f_np = TRANSCENDENTAL[name] if f is None else (f, limit)
    x64 = np.asarray(x, dtype=np.float64) if t != "bf16" else np.asarray(x, dtype=np.float64)
    with np.errstate(all="ignore"):
        fallback = np.asarray(f_np(x64), dtype=np.float64)
    v = mp_map(f_mp, x64, t, spec)
    # An exact zero from mpmath has no sign: IEEE's formula gives it (−3 · 0 = −0 in HSwish).
    v = np.where(v == 0, np.copysign(0.0, fallback), v)
    special = ~np.isfinite(x64) | (x64 == 0)
    # Results that overflow or underflow to f64's limits keep mpmath's rounding (float() of
    # a huge mpf is inf); zeros and non-finite inputs take C's IEEE answer.
    v = np.where(special, fallback, v)
    if product or (f is None and name in PRODUCT_FORMS):
        v = np.where(x64 == -np.inf, -0.0, v)
    return to_type(spec, v, t)


# --- the cases ---------------------------------------------------------------------------------

def write_all(g):
    spec = g.spec_module()
    root = g.HERE / "ops"
    fac = NodeFactory("opset16")

    def case(name, inputs, build, expected, tolerance=None, attrs=None):
        params = {n: ops.parameter(list(v.shape), ovt(spec, t), name=n) for n, (t, v) in inputs.items()}
        for n, p in params.items():
            p.output(0).get_tensor().set_names({n})
        node = build([p.output(0) for p in params.values()])
        node.output(0).get_tensor().set_names({"out"})
        model = ov.Model([ops.result(node)], list(params.values()), name)
        d = root / name
        g.save_case(d, model, inputs, expected)
        if tolerance is not None:
            (d / "tolerance.txt").write_text(f"ulps {tolerance}\n")
        return d

    def cross_check(d, inputs, want, t):
        """OpenVINO's reference on the saved IR, on ordinary values (not NaN)."""
        saved = ov.Core().read_model(str(d / "model.xml"))
        got = np.asarray(g.fold_with_reference(saved, inputs)[0])
        x = np.asarray(list(inputs.values())[0][1])
        keep = ~np.isnan(np.asarray(want, dtype=np.float64)) if t in spec.FLOATS else np.ones(np.shape(want), bool)
        if x.shape == np.shape(want) and t in spec.FLOATS:
            keep &= ~np.isnan(x.astype(np.float64))
        assert np.array_equal(np.asarray(got)[keep], np.asarray(want)[keep]), f"{d.name}: spec {want} != reference {got}"

    # Transcendental functions and activations without parameters, on the four float types.
    for name in TRANSCENDENTAL:
        for t in ("f16", "bf16", "f32", "f64"):
            x = float_edges(spec, t)
            want = expected_transcendental(spec, name, x, t)
            tol = tolerance(t, name in LIBM)
            case(f"{name.lower()}_{t}", {"x": (t, x)}, lambda p, name=name: fac.create(name, p, {}), [(t, want)], tol)

    # Integer inputs of the functions whose spec allows every numeric type: the exact value
    # rounded to the nearest integer, halves away from zero (Sqrt's and Tanh's rule); inputs
    # whose result is undefined or out of range are errors (tests/op_tables.rs), left out here.
    for name in ("Log", "Sin", "Cos", "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Tanh", "Asinh", "Acosh", "Erf", "Atanh"):
        for t in [x for x in spec.TYPES if x not in spec.FLOATS]:
            info = np.iinfo(spec.NP[t])
            xs, ys = [], []
            for v in int_edges(spec, t):
                v = int(v)
                if name == "Atanh":
                    xs.append(v)
                    ys.append(0 if v == 0 else (info.min if v < 0 else info.max))
                    continue
                r = TRANSCENDENTAL[name][0](mp.mpf(v))
                if r is None or abs(r) > 2**64:
                    continue
                y = int(mp.sign(r) * mp.floor(abs(r) + mp.mpf("0.5")))
                if info.min <= y <= info.max:
                    xs.append(v)
                    ys.append(y)
            x = np.array(xs, dtype=spec.NP[t])
            want = np.array(ys, dtype=object).astype(spec.NP[t])
            case(f"{name.lower()}_{t}", {"x": (t, x)}, lambda p, name=name: fac.create(name, p, {}), [(t, want)])

    # Gelu-7 in both modes, Swish with and without beta, Elu, Selu, HardSigmoid.
    for t in ("f16", "bf16", "f32", "f64"):
        x = float_edges(spec, t)
        for mode, f in (("erf", gelu_erf), ("tanh", gelu_tanh)):
            want = expected_transcendental(spec, "Gelu", x, t, f, TRANSCENDENTAL["Gelu"][1], product=True)
            case(f"gelu7_{mode}_{t}", {"x": (t, x)},
                 lambda p, mode=mode: NodeFactory("opset7").create("Gelu", p, {"approximation_mode": mode}),
                 [(t, want)], tolerance(t))
        beta = spec.to_type(np.array([0.75]), t)
        b = float(np.asarray(beta, dtype=np.float64)[0])
        want = expected_transcendental(spec, "Sigmoid", x, t, lambda v: v * sigmoid(b * v), lambda v: np.where(v > 0, v, 0.5 * v), product=True)
        case(f"swish_beta_{t}", {"x": (t, x), "beta": (t, beta.reshape([]))}, lambda p: fac.create("Swish", p, {}), [(t, want)], tolerance(t))
        want = expected_transcendental(spec, "Sigmoid", x, t, lambda v: v * sigmoid(v), lambda v: np.where(v > 0, v, 0.5 * v), product=True)
        case(f"swish_{t}", {"x": (t, x)}, lambda p: fac.create("Swish", p, {}), [(t, want)], tolerance(t))
        alpha = 0.5 if t != "bf16" else 0.5
        want = expected_transcendental(spec, "Sigmoid", x, t, lambda v: v if v > 0 else alpha * (mp.exp(v) - 1), lambda v: np.where(v > 0, v, alpha * np.expm1(v)))
        case(f"elu_{t}", {"x": (t, x)}, lambda p: fac.create("Elu", p, {"alpha": alpha}), [(t, want)], tolerance(t))
        al, la = spec.to_type(np.array([1.6732632423543772]), t), spec.to_type(np.array([1.0507009873554805]), t)
        a64, l64 = float(np.float64(al[0])), float(np.float64(la[0]))
        want = expected_transcendental(spec, "Sigmoid", x, t, lambda v: l64 * v if v > 0 else l64 * a64 * (mp.exp(v) - 1), lambda v: np.where(v > 0, l64 * v, l64 * a64 * np.expm1(v)))
        case(f"selu_{t}", {"x": (t, x), "alpha": (t, al), "lambda": (t, la)}, lambda p: fac.create("Selu", p, {}), [(t, want)], tolerance(t))
        ha, hb = spec.to_type(np.array([0.2]), t), spec.to_type(np.array([0.5]), t)
        ha64, hb64 = float(np.float64(ha[0])), float(np.float64(hb[0]))
        want = expected_transcendental(spec, "Sigmoid", x, t, lambda v: max(0, min(1, ha64 * v + hb64)), lambda v: np.clip(ha64 * v + hb64, 0, 1))
        case(f"hardsigmoid_{t}", {"x": (t, x), "alpha": (t, ha.reshape([])), "beta": (t, hb.reshape([]))}, lambda p: fac.create("HardSigmoid", p, {}), [(t, want)], tolerance(t))

    # Exact unary ops on every type they allow.
    def in_f32(t, fn):
        return (lambda x: spec.to_type(fn(x.astype(np.float32)), t)) if t in ("f16", "bf16") else fn

    def round_away(x):
        r = np.array([float(mp.floor(abs(mp.mpf(float(v))) + mp.mpf("0.5"))) if np.isfinite(v) else v
                      for v in np.asarray(x, dtype=np.float64).ravel()]).reshape(np.shape(x))
        return np.copysign(r, np.asarray(x, dtype=np.float64)).astype(x.dtype)  # C round keeps the sign

    # The exact rules the differential run uses, plus Sqrt (integers: half-up root, no negatives).
    exact = dict(spec.UNARY_SPECS)
    exact["Sqrt"] = (np.sqrt, lambda x: np.array([int_sqrt_half_up(int(v)) for v in x], dtype=x.dtype))
    for name, (float_rule, int_rule) in exact.items():
        for t in spec.TYPES:
            if name == "Negative" and t.startswith("u"):
                continue  # Negative-1 takes signed types only
            if t in spec.FLOATS:
                x = float_edges(spec, t)
                with np.errstate(all="ignore"):
                    want = in_f32(t, float_rule)(x)
            else:
                x = int_edges(spec, t)
                if name == "Sqrt":
                    x = x[x >= 0]
                with np.errstate(all="ignore"):
                    want = int_rule(x).astype(spec.NP[t])
            d = case(f"{name.lower()}_{t}", {"x": (t, x)}, lambda p, name=name: fac.create(name, p, {}), [(t, want)])
            if t in ("f32", "i32") and name not in ("Sign", "Relu"):
                cross_check(d, {"x": (t, x)}, want, t)
    for t in spec.TYPES:
        for mode in ("half_to_even", "half_away_from_zero"):
            if t in spec.FLOATS:
                x = float_edges(spec, t)
                want = in_f32(t, np.round if mode == "half_to_even" else round_away)(x)
            else:
                x = int_edges(spec, t)
                want = x.copy()
            d = case(f"round_{mode}_{t}", {"x": (t, x)}, lambda p, mode=mode: fac.create("Round", p, {"mode": mode}), [(t, want)])
            if t == "f32":
                cross_check(d, {"x": (t, x)}, want, t)
        lo, hi = -2.5, 6.5
        if t in spec.FLOATS:
            x = float_edges(spec, t)
            want = in_f32(t, lambda v: np.where(v < np.float32(lo) if v.dtype == np.float32 else v < lo, lo, np.where(v > hi, hi, v)).astype(v.dtype))(x)
        else:
            x = int_edges(spec, t)
            info = np.iinfo(spec.NP[t])
            want = np.clip(x.astype(np.int64) if t != "u64" else x, max(-2, info.min), 6).astype(spec.NP[t])
        case(f"clamp_{t}", {"x": (t, x)}, lambda p: fac.create("Clamp", p, {"min": lo, "max": hi}), [(t, want)])

    # Float predicates.
    for t in ("f16", "bf16", "f32", "f64"):
        x = float_edges(spec, t)
        x64 = np.asarray(x, dtype=np.float64)
        for name, attrs, want in (
            ("IsNaN", {}, np.isnan(x64)),
            ("IsFinite", {}, np.isfinite(x64)),
            ("IsInf", {}, np.isinf(x64)),
            ("IsInf", {"detect_positive": False}, x64 == -np.inf),
        ):
            suffix = "_negative" if attrs else ""
            case(f"{name.lower()}{suffix}_{t}", {"x": (t, x)}, lambda p, name=name, attrs=attrs: fac.create(name, p, attrs), [(BOOL, want)])

    # Comparisons (every type and boolean) under the three broadcast modes.
    rng = np.random.default_rng(18)
    shapes = {"none": ([2, 3], [2, 3]), "numpy": ([2, 1, 3], [4, 1]), "pdpd": ([3, 3, 4], [3, 1])}
    cmp = {"Equal": np.equal, "NotEqual": np.not_equal, "Less": np.less, "LessEqual": np.less_equal,
           "Greater": np.greater, "GreaterEqual": np.greater_equal}
    for name, fn in cmp.items():
        for t in spec.TYPES + [BOOL]:
            for mode, (sa, sb) in shapes.items():
                if t == BOOL:
                    a = rng.random(sa) < 0.5
                    b = rng.random(sb) < 0.5
                else:
                    a = g.special_values(t, int(np.prod(sa)), rng).reshape(sa)
                    b = g.special_values(t, int(np.prod(sb)), rng).reshape(sb)
                    if int(np.prod(sb)) > 2:
                        b.reshape(-1)[:2] = a.reshape(-1)[:2]  # some equal pairs
                b_np = b.reshape([1, 3, 1]) if mode == "pdpd" else b
                want = fn(np.asarray(a, dtype=np.float64) if t in spec.FLOATS else a, np.asarray(b_np, dtype=np.float64) if t in spec.FLOATS else b_np)
                d = case(f"{name.lower()}_{t}_{mode}", {"a": (t, a), "b": (t, b)},
                         lambda p, name=name, mode=mode: NodeFactory("opset1").create(name, p, {"auto_broadcast": mode}), [(BOOL, want)])
                if mode == "pdpd":
                    xml = (d / "model.xml").read_text()
                    (d / "model.xml").write_text(xml.replace('auto_broadcast.auto_broadcast_axis="0"', 'auto_broadcast.auto_broadcast_axis="1"'))
                if t in ("f32", "i32") and mode == "numpy":
                    cross_check(d, {"a": (t, a), "b": (t, b)}, want, BOOL)

    # Logical ops on boolean, bitwise ops on integers and boolean.
    logical = {"LogicalAnd": np.logical_and, "LogicalOr": np.logical_or, "LogicalXor": np.logical_xor}
    for name, fn in logical.items():
        for mode, (sa, sb) in shapes.items():
            a, b = rng.random(sa) < 0.5, rng.random(sb) < 0.5
            b_np = b.reshape([1, 3, 1]) if mode == "pdpd" else b
            d = case(f"{name.lower()}_{mode}", {"a": (BOOL, a), "b": (BOOL, b)},
                     lambda p, name=name, mode=mode: NodeFactory("opset1").create(name, p, {"auto_broadcast": mode}), [(BOOL, fn(a, b_np))])
            if mode == "pdpd":
                xml = (d / "model.xml").read_text()
                (d / "model.xml").write_text(xml.replace('auto_broadcast.auto_broadcast_axis="0"', 'auto_broadcast.auto_broadcast_axis="1"'))
    a = rng.random([7]) < 0.5
    case("logicalnot", {"a": (BOOL, a)}, lambda p: fac.create("LogicalNot", p, {}), [(BOOL, ~a)])
    bitwise = {"BitwiseAnd": np.bitwise_and, "BitwiseOr": np.bitwise_or, "BitwiseXor": np.bitwise_xor}
    for t in [x for x in spec.TYPES if x not in spec.FLOATS] + [BOOL]:
        if t == BOOL:
            a, b = rng.random([2, 4]) < 0.5, rng.random([4]) < 0.5
        else:
            a, b = g.special_values(t, 8, rng).reshape([2, 4]), g.special_values(t, 4, rng)
        for name, fn in bitwise.items():
            case(f"{name.lower()}_{t}", {"a": (t, a), "b": (t, b)}, lambda p, name=name: fac.create(name, p, {}), [(t, fn(a, b))])
        case(f"bitwisenot_{t}", {"a": (t, a)}, lambda p: fac.create("BitwiseNot", p, {}), [(t, np.invert(a))])
        if t == BOOL:
            continue
        bits = np.iinfo(spec.NP[t]).bits
        amounts = np.array([0, 1, 3, bits - 1, bits, bits + 5, 2, 7], dtype=spec.NP[t])
        x = g.special_values(t, 8, rng)
        left = np.array([(int(v) << int(s)) if s < bits else 0 for v, s in zip(x, amounts)], dtype=object)
        left = np.array([int(v) & ((1 << bits) - 1) for v in left], dtype=np.uint64).astype(spec.NP[t])
        right = np.array([int(v) >> min(int(s), bits) if int(s) < bits else (-1 if int(v) < 0 else 0) for v, s in zip(x, amounts)], dtype=np.int64 if t != "u64" else np.uint64).astype(spec.NP[t])
        case(f"bitwiseleftshift_{t}", {"a": (t, x), "b": (t, amounts)}, lambda p: fac.create("BitwiseLeftShift", p, {}), [(t, left)])
        case(f"bitwiserightshift_{t}", {"a": (t, x), "b": (t, amounts)}, lambda p: fac.create("BitwiseRightShift", p, {}), [(t, right)])

    # Select: three-way broadcast (numpy), equal shapes (none), pdpd onto `then`.
    for t in ("f32", "f16", "i64", "u8", BOOL, "bf16"):
        for mode, (sc, st, se) in {"numpy": ([2, 1, 1], [1, 3, 1], [4]), "none": ([2, 3], [2, 3], [2, 3]), "pdpd": ([2], [2, 3], [2, 1])}.items():
            c = rng.random(sc) < 0.5
            if t == BOOL:
                x, y = rng.random(st) < 0.5, rng.random(se) < 0.5
            else:
                x = g.special_values(t, int(np.prod(st)), rng).reshape(st)
                y = g.special_values(t, int(np.prod(se)), rng).reshape(se)
            if mode == "pdpd":
                want = np.where(c.reshape([2, 1]), x, y)
            else:
                want = np.where(c, x, y)
            d = case(f"select_{t}_{mode}", {"c": (BOOL, c), "x": (t, x), "y": (t, y)},
                     lambda p, mode=mode: ops.select(p[0], p[1], p[2], auto_broadcast=mode), [(t, want)])

    # PRelu: per channel, and numpy-style.
    for t in ("f32", "f16", "bf16", "f64"):
        x = float_edges(spec, t)[:24].reshape([2, 3, 4])
        for kind, s_shape in (("channel", [3]), ("numpy", [4]), ("scalar", [1])):
            s = spec.to_type(np.array([0.25, -1.5, 3.0, 2.0][: s_shape[0]]), t) if t in spec.FLOATS else np.array([2, -3, 5, 7][: s_shape[0]], dtype=spec.NP[t])
            s_np = s.reshape([3, 1]) if kind == "channel" else s
            if t in spec.FLOATS:
                with np.errstate(all="ignore"):
                    want = in_f32(t, lambda v, s=s_np: np.where(v < 0, v * np.asarray(s, dtype=v.dtype), v))(x)
            else:
                with np.errstate(all="ignore"):
                    want = np.where(x < 0, x * s_np, x).astype(spec.NP[t])
            case(f"prelu_{kind}_{t}", {"x": (t, x), "slope": (t, s)}, lambda p: fac.create("PRelu", p, {}), [(t, want)])

    # ConvertLike: input 0 to input 1's type, by Convert-1's rules.
    for src, dst in (("f32", "i8"), ("f64", "f16"), ("i32", "f32"), ("u8", "bf16")):
        x = g.special_values(src, 16, rng)
        like = np.zeros([1], dtype=spec.NP[dst])
        y = spec.spec_convert(x, src, dst)
        case(f"convertlike_{src}_to_{dst}", {"x": (src, x), "like": (dst, like)}, lambda p: fac.create("ConvertLike", p, {}), [(dst, y)])


def int_sqrt_half_up(v):
    import math
    r = math.isqrt(v)
    return r + 1 if 4 * v >= (2 * r + 1) ** 2 else r
