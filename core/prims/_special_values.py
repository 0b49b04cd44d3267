"""The values at infinities, zeros, poles and outside the domain that each math prim must return (PyTorch's).

Each entry is ``(arguments, result)`` for real floating inputs; :func:`describe` renders them for the prim's
docstring (``help(opweave.ops.prims.lgamma)``), and ``tests/prims/test_prim_docs.py`` checks the CPU backend
returns exactly these values, so the documentation a backend author reads is the behaviour conformance expects.
"""

from __future__ import annotations

import math

INF, NAN = math.inf, math.nan
PI = math.pi

SPECIAL_VALUES: dict[str, list[tuple[tuple, float]]] = {
    "exp": [((-INF,), 0.0), ((INF,), INF), ((NAN,), NAN)],
    "expm1": [((-INF,), -1.0), ((INF,), INF), ((-0.0,), -0.0)],
    "log": [((0.0,), -INF), ((-0.0,), -INF), ((-1.0,), NAN), ((INF,), INF)],
    "log1p": [((-1.0,), -INF), ((-2.0,), NAN), ((-0.0,), -0.0), ((INF,), INF)],
    "log2": [((0.0,), -INF), ((-1.0,), NAN), ((INF,), INF)],
    "log10": [((0.0,), -INF), ((-1.0,), NAN), ((INF,), INF)],
    "sqrt": [((-0.0,), -0.0), ((-1.0,), NAN), ((INF,), INF)],
    "rsqrt": [((0.0,), INF), ((-0.0,), -INF), ((-1.0,), NAN), ((INF,), 0.0)],
    "reciprocal": [((0.0,), INF), ((-0.0,), -INF), ((INF,), 0.0)],
    "sin": [((INF,), NAN), ((-0.0,), -0.0)],
    "cos": [((INF,), NAN), ((-INF,), NAN)],
    "tan": [((INF,), NAN), ((-0.0,), -0.0)],
    "tanh": [((INF,), 1.0), ((-INF,), -1.0), ((-0.0,), -0.0)],
    "atan": [((INF,), PI / 2), ((-INF,), -PI / 2)],
    "asin": [((1.5,), NAN), ((-0.0,), -0.0)],
    "acos": [((1.5,), NAN), ((1.0,), 0.0)],
    "atanh": [((1.0,), INF), ((-1.0,), -INF), ((1.5,), NAN)],
    "acosh": [((0.5,), NAN), ((1.0,), 0.0), ((INF,), INF)],
    "sigmoid": [((-INF,), 0.0), ((INF,), 1.0)],
    "sinc": [((0.0,), 1.0), ((INF,), NAN)],
    "erf": [((INF,), 1.0), ((-INF,), -1.0), ((-0.0,), -0.0)],
    "erfc": [((INF,), 0.0), ((-INF,), 2.0)],
    "erfcx": [((INF,), 0.0), ((-INF,), INF), ((0.0,), 1.0)],
    "erf_inv": [((1.0,), INF), ((-1.0,), -INF), ((1.5,), NAN), ((-0.0,), -0.0)],
    "lgamma": [((INF,), INF), ((-INF,), INF), ((0.0,), INF), ((-0.0,), INF), ((-4.0,), INF), ((1.0,), 0.0)],
    "digamma": [((0.0,), -INF), ((-0.0,), INF), ((-3.0,), NAN), ((-INF,), NAN), ((INF,), INF)],
    "ndtr": [((-INF,), 0.0), ((INF,), 1.0), ((0.0,), 0.5)],
    "ndtri": [((0.0,), -INF), ((1.0,), INF), ((0.5,), 0.0), ((-0.1,), NAN), ((1.1,), NAN)],
    "log_ndtr": [((INF,), -0.0), ((-INF,), -INF)],
    "bessel_j0": [((0.0,), 1.0), ((INF,), NAN), ((-INF,), NAN)],
    "bessel_y0": [((0.0,), -INF), ((-1.0,), NAN), ((INF,), NAN)],
    "bessel_y1": [((0.0,), -INF), ((-0.0,), -INF), ((-1.0,), NAN)],
    "bessel_i0e": [((INF,), 0.0), ((-INF,), 0.0), ((0.0,), 1.0)],
    "bessel_i1": [((INF,), NAN), ((0.0,), 0.0)],
    "modified_bessel_k0": [((0.0,), INF), ((-1.0,), NAN), ((INF,), 0.0)],
    "scaled_modified_bessel_k1": [((0.0,), INF), ((-1.0,), NAN), ((INF,), 0.0)],
    "spherical_bessel_j0": [((0.0,), 1.0), ((INF,), 0.0), ((-INF,), 0.0)],
    "airy_ai": [((INF,), NAN), ((-INF,), NAN)],
    "entr": [((0.0,), 0.0), ((-1.0,), -INF), ((INF,), -INF), ((1.0,), -0.0)],
    "hypot": [((NAN, INF), INF), ((-INF, NAN), INF), ((NAN, 1.0), NAN)],
    "atan2": [((0.0, -0.0), PI), ((-0.0, -0.0), -PI), ((-0.0, 0.0), -0.0), ((INF, INF), PI / 4)],
    "pow": [((NAN, 0.0), 1.0), ((1.0, NAN), 1.0), ((-1.0, INF), 1.0), ((0.0, -1.0), INF), ((-8.0, 1 / 3), NAN)],
    "fmax": [((NAN, 1.0), 1.0), ((1.0, NAN), 1.0), ((NAN, NAN), NAN)],
    "fmin": [((NAN, 1.0), 1.0), ((NAN, NAN), NAN)],
    "maximum": [((NAN, 1.0), NAN), ((1.0, NAN), NAN)],
    "minimum": [((NAN, 1.0), NAN)],
    "copysign": [((1.0, -0.0), -1.0), ((NAN, 1.0), NAN)],
    "logaddexp": [((-INF, -INF), -INF), ((INF, INF), INF), ((-INF, 0.0), 0.0)],
    "fmod": [((1.0, 0.0), NAN), ((INF, 1.0), NAN), ((-3.0, 2.0), -1.0)],
    "remainder": [((1.0, 0.0), NAN), ((-3.0, 2.0), 1.0), ((3.0, -2.0), -1.0)],
    "xlogy": [((0.0, 0.0), 0.0), ((0.0, INF), 0.0), ((0.0, NAN), NAN), ((1.0, 0.0), -INF)],
    "zeta": [((1.0, 1.0), INF), ((0.5, 1.0), NAN)],
    "igamma": [((1.0, 0.0), 0.0), ((0.0, 1.0), 1.0), ((-1.0, 1.0), NAN), ((1.0, INF), 1.0)],
    "igammac": [((1.0, 0.0), 1.0), ((0.0, 1.0), 0.0), ((-1.0, 1.0), NAN), ((1.0, INF), 0.0)],
}


def _fmt(v: float) -> str:
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "+inf" if v > 0 else "-inf"
    if v == PI:
        return "pi"
    if v == -PI:
        return "-pi"
    if v == PI / 2:
        return "pi/2"
    if v == -PI / 2:
        return "-pi/2"
    if v == PI / 4:
        return "pi/4"
    if v == 0:
        return "-0.0" if math.copysign(1, v) < 0 else "0.0"
    return repr(v) if v != 1 / 3 else "1/3"


def describe(name: str) -> str:
    """The docstring paragraph listing ``name``'s special values ('' when the table has none)."""
    rows = SPECIAL_VALUES.get(name)
    if not rows:
        return ""
    calls = ", ".join(f"``{name}({', '.join(map(_fmt, args))}) = {_fmt(out)}``" for args, out in rows)
    return f"\n\nSpecial values (every backend must return these; a nan input gives nan otherwise): {calls}."
