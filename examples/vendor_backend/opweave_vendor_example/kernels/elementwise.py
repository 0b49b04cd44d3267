"""Elementwise prims from tables of NumPy/SciPy functions: unary, binary, ternary, polynomials.

Operands arrive as arrays of one dtype (float16/bfloat16 widened to float32);
the kernel wrapper rounds results to the prim's output dtype. Entries are
PyTorch's semantics where NumPy's differ (integer division truncates, shifts
past the bit width, special values of the special functions...).
"""

from __future__ import annotations

import math

import numpy as np
import opweave
import scipy.special as sp
from opweave.prims.elementwise_binary import BINARY
from opweave.prims.elementwise_polynomial import POLYNOMIALS
from opweave.prims.elementwise_unary import UNARY

from .._backend import kernel, opmath
from . import _near_zero as nz


def _int(x) -> bool:
    return x.dtype.kind in "iub"


def _nan_at_inf(f):
    return lambda x: np.where(np.isinf(x), np.nan, f(x))


def _int_identity(f):
    return lambda x: x if _int(x) else f(x)


def _complex_or(real, cplx):
    return lambda x: cplx(x) if x.dtype.kind == "c" else real(x)


def _complex_log1p(z):
    """PyTorch's ``log1p`` of complex ``z``: ``|1 + z|^2 - 1`` formed without cancellation when ``|z| < 0.5``."""
    x, y = z.real, z.imag
    r = x * (2 + x) + y * y
    out = np.empty_like(z)
    out.real = np.where(np.abs(z) < 0.5, np.where(r == 0, x, 0.5 * np.log1p(r)), np.log(np.hypot(x + 1, y)))
    out.imag = np.arctan2(y, x + 1)
    return out


def _sgn(x):
    mag = np.abs(x)
    return np.where(mag == 0, 0, x / np.where(mag == 0, 1, mag))


UNARY_FNS = {
    "acos": np.arccos, "acosh": np.arccosh, "asin": np.arcsin, "asinh": np.arcsinh, "atan": np.arctan,
    "atanh": np.arctanh, "cos": np.cos, "cosh": np.cosh, "sin": np.sin, "sinh": np.sinh, "tan": np.tan,
    "tanh": np.tanh, "exp": np.exp, "expm1": np.expm1, "log": np.log, "log1p": _complex_or(np.log1p, _complex_log1p),
    "log2": np.log2,
    "log10": np.log10, "sqrt": np.sqrt, "sinc": np.sinc, "cbrt": np.cbrt,
    "exp2": _complex_or(np.exp2, lambda z: np.exp(z.real.dtype.type(math.log(2)) * z)),
    "rsqrt": lambda x: 1 / np.sqrt(x),
    "reciprocal": lambda x: 1 / x,
    "sigmoid": _complex_or(sp.expit, lambda z: 1 / (1 + np.exp(-z))),
    "erf": sp.erf, "erfc": sp.erfc, "erfcx": sp.erfcx,
    "erf_inv": lambda x: np.where(x == 0, x, sp.erfinv(x)),  # -0.0 kept, as PyTorch
    "lgamma": nz.lgamma,  # PyTorch: +inf at -inf
    "digamma": sp.psi, "ndtri": sp.ndtri, "ndtr": nz.ndtr, "log_ndtr": nz.log_ndtr,
    "bessel_i0": _nan_at_inf(sp.i0), "bessel_i0e": sp.i0e, "bessel_i1": _nan_at_inf(sp.i1), "bessel_i1e": sp.i1e,
    "bessel_j0": _nan_at_inf(sp.j0), "bessel_j1": nz.with_leading_term(_nan_at_inf(sp.j1), nz.half),
    "bessel_y0": _nan_at_inf(sp.y0), "bessel_y1": _nan_at_inf(sp.y1),
    "modified_bessel_k0": nz.with_leading_term(sp.k0, nz.k0_near_zero, True),
    "modified_bessel_k1": nz.with_leading_term(sp.k1, nz.reciprocal, True),
    "scaled_modified_bessel_k0": nz.with_leading_term(sp.k0e, nz.k0_near_zero, True),
    "scaled_modified_bessel_k1": nz.with_leading_term(sp.k1e, nz.reciprocal, True),
    "spherical_bessel_j0": lambda x: np.where(np.isinf(x), 0, np.where(x == 0, 1, np.sin(x) / np.where(x == 0, 1, x))),
    "airy_ai": _nan_at_inf(lambda x: sp.airy(x)[0]),
    "entr": sp.entr,
    "frac": lambda x: x - np.trunc(x),
    "ceil": _int_identity(np.ceil), "floor": _int_identity(np.floor),
    "round": _int_identity(np.rint), "trunc": _int_identity(np.trunc),
    "abs": np.abs, "neg": np.negative, "sign": np.sign,
    "sgn": _complex_or(np.sign, _sgn),
    "signbit": lambda x: x < 0 if _int(x) else np.signbit(x),
    "bitwise_not": np.invert, "logical_not": np.logical_not,
    "isfinite": np.isfinite, "isinf": np.isinf, "isnan": np.isnan,
    "isposinf": lambda x: x == np.inf, "isneginf": lambda x: x == -np.inf,
    "real": np.real, "imag": np.imag,
    "angle": _complex_or(lambda x: np.where(np.isnan(x), x, np.where(x < 0, np.pi, 0)), np.angle),
    "conj_physical": np.conj,
}  # fmt: skip


def _divisor_check(op: str, b) -> None:
    if _int(b) and np.any(b == 0):
        raise RuntimeError(f"prims::{op}: ZeroDivisionError: integer division by zero")


def _div(a, b):
    if not _int(a):
        return a / b
    _divisor_check("div", b)
    q = np.floor_divide(a, b)  # floor -> truncation: one up where the quotient is negative and inexact
    return q if a.dtype.kind == "u" else q + ((np.remainder(a, b) != 0) & ((a < 0) != (b < 0)))


def _pow(a, b):
    if a.dtype.kind == "i" and np.any(b < 0):
        raise RuntimeError("prims::pow: Integers to negative integer powers are not allowed")
    return np.power(a, b)


def _remainder(a, b):
    if _int(a):
        _divisor_check("remainder", b)
        return np.remainder(a, b)
    mod = np.fmod(a, b)
    return np.where((mod != 0) & ((b < 0) != (mod < 0)), mod + b, mod)


def _fmod(a, b):
    _divisor_check("fmod", b)
    return np.fmod(a, b)


def _floor_divide(a, b):
    if _int(a):
        _divisor_check("floor_divide", b)
        return np.floor_divide(a, b)
    mod = np.fmod(a, b)  # PyTorch's div_floor_floating
    div = (a - mod) / b
    div = np.where((mod != 0) & ((b < 0) != (mod < 0)), div - 1, div)
    floor = np.floor(div)
    floor = np.where(div - floor > 0.5, floor + 1, floor)
    floor = np.where(div == 0, np.copysign(np.zeros_like(div), a / b), floor)
    return np.where(b == 0, a / b, floor)


def _xlogy(log):
    return lambda x, y: np.where(np.isnan(y), np.nan, np.where(x == 0, 0, x * log(y)))


def _igamma(special, values):
    """PyTorch's special cases of the incomplete gamma functions, in its order, then SciPy's value."""

    def fn(a, x):
        conds = [(x < 0) | (a < 0), (a == 0) & (x > 0), a == 0, x == 0, np.isinf(a) & np.isinf(x), np.isinf(a)]
        return np.select([*conds, np.isinf(x)], values, special(a, x))

    return fn


def _shift(op, overflow):
    """A shift that gives ``overflow(a)`` for counts outside ``[0, bits)`` (``bits - 1`` for signed right)."""

    def fn(a, b):
        bits = a.dtype.itemsize * 8 - (op is np.right_shift and a.dtype.kind == "i")
        ok = (b >= 0) & (b < bits)
        return np.where(ok, op(a, np.where(ok, b, 0).astype(b.dtype)), overflow(a))

    return fn


BINARY_FNS = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": _div, "pow": _pow,
    "maximum": np.maximum, "minimum": np.minimum, "fmax": np.fmax, "fmin": np.fmin,
    "remainder": _remainder, "fmod": _fmod, "floor_divide": _floor_divide,
    "heaviside": lambda a, b: np.where(a == 0, b, a > 0),
    "atan2": np.arctan2, "hypot": np.hypot, "copysign": np.copysign, "nextafter": np.nextafter,
    "logaddexp": np.logaddexp, "logaddexp2": np.logaddexp2,
    "xlogy": _xlogy(np.log), "xlog1py": _xlogy(np.log1p),
    "zeta": lambda x, q: sp.zeta(x.astype(np.float64), q.astype(np.float64)),
    "igamma": _igamma(lambda a, x: nz.regularised_gamma(a, x, True), [np.nan, 1, np.nan, 0, np.nan, 0, 1]),
    "igammac": _igamma(lambda a, x: nz.regularised_gamma(a, x, False), [np.nan, 0, np.nan, 1, np.nan, 1, 0]),
    "gcd": np.gcd, "lcm": np.lcm,
    "bitwise_and": np.bitwise_and, "bitwise_or": np.bitwise_or, "bitwise_xor": np.bitwise_xor,
    "shift_left": _shift(np.left_shift, np.zeros_like),
    "shift_right_arithmetic": _shift(np.right_shift, lambda a: np.where(a < 0, -1, 0)),
    "logical_and": np.logical_and, "logical_or": np.logical_or, "logical_xor": np.logical_xor,
    "eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal,
}  # fmt: skip
NATIVE = {"nextafter"}  # computed in the operands' own dtype, not widened


def _lerp(start, end, weight):
    diff = end - start
    return np.where(np.abs(weight) < 0.5, start + weight * diff, end - diff * (1 - weight))


def _to_complex(re, im):
    out = np.empty(np.broadcast_shapes(re.shape, im.shape), np.result_type(re.dtype, np.complex64))
    out.real, out.imag = re, im
    return out


# name -> (function, whether 16-bit floats are widened)
OTHER_FNS = {
    "where": (lambda pred, a, b: np.where(pred, a, b), False),
    "clamp": (lambda a, lo, hi: np.minimum(np.maximum(a, lo), hi), True),
    "lerp": (_lerp, True),
    "complex": (_to_complex, True),
    "polar": (lambda r, theta: _to_complex(r * np.cos(theta), r * np.sin(theta)), True),
}


# -- orthogonal polynomials: PyTorch's scalar algorithm, vectorised --------------------------------------
# In PyTorch's order: trunc(n) < 0 (or non-finite n) gives 0; the special values at the ends of the interval;
# for large n inside it (Chebyshev), a trigonometric closed form; else the three-term recurrence in x's dtype.


def _sign(y, d):
    return np.where((y > 0) | (d % 2 == 0), 1.0, -1.0)


def _trig_u(t, d, y):
    return np.where(np.sin(t) != 0, np.sin((d + 1) * t) / np.sin(t), (d + 1) * np.cos((d + 1) * t) / y)


def _trig_v(t, d, y):
    return np.where(np.sin(t / 2) != 1, np.cos((d + 0.5) * t) / np.cos(t / 2), _sign(-1.0, d) * (2 * d + 1))


def _trig_w(t, d, y):
    edge = np.where(y > 0, 2 * d + 1.0, _sign(-1.0, d))
    return np.where(np.cos(t / 2) != 1, np.sin((d + 0.5) * t) / np.sin(t / 2), edge)


def _cheb_step(m, y, p, q):
    return (y + y) * q - p


# kind -> (P_1(y), value at y = +-1, closed form inside (-1, 1))
CHEBYSHEV = {
    "t": (lambda y: y, _sign, lambda t, d, y: np.cos(d * t)),
    "u": (lambda y: y + y, lambda y, d: _sign(y, d) * (d + 1), _trig_u),
    "v": (lambda y: y + y - 1, lambda y, d: np.where(y > 0, 1.0, _sign(y, d) * (2 * d + 1)), _trig_v),
    "w": (lambda y: y + y + 1, lambda y, d: np.where(y > 0, 2 * d + 1.0, _sign(y, d)), _trig_w),
}
# name -> (P_1, step (m, y, P_{m-1}, P_m) -> P_{m+1}, ends (mask, value) or None, (threshold, closed form) or None,
#          shifted (y = 2x - 1), Hermite's degree limit)
POLY_FNS = {
    f"{prefix}chebyshev_polynomial_{kind}": (
        CHEBYSHEV[kind][0],
        _cheb_step,
        (lambda y: np.abs(y) == 1, CHEBYSHEV[kind][1]),
        (threshold, CHEBYSHEV[kind][2]),
        prefix == "shifted_",
        False,
    )
    for prefix, thresholds in (("", (6, 8, 8, 8)), ("shifted_", (6, 6, 6, 4)))
    for kind, threshold in zip("tuvw", thresholds)
}
POLY_FNS |= {
    "hermite_polynomial_h": (lambda x: x + x, lambda m, x, p, q: (x + x) * q - 2 * m * p, None, None, False, True),
    "hermite_polynomial_he": (lambda x: x, lambda m, x, p, q: x * q - m * p, None, None, False, True),
    "laguerre_polynomial_l": (
        lambda x: 1 - x,
        lambda m, x, p, q: ((2 * m + (1 - x)) * q - m * p) / (m + 1),
        (lambda x: x == 0, lambda x, d: np.ones_like(x)),
        None,
        False,
        False,
    ),
    "legendre_polynomial_p": (
        lambda x: x,
        lambda m, x, p, q: ((2 * m + 1) * x * q - m * p) / (m + 1),
        (lambda x: np.abs(x) == 1, _sign),
        None,
        False,
        False,
    ),
}


def _polynomial(first, step, ends, trig, shifted, limited):
    def fn(x, n):
        """The polynomial of degree ``trunc(n)`` at ``x``, case by case as PyTorch's kernel."""
        y = x + x - 1 if shifted else x
        d = np.clip(np.where(np.isfinite(n), np.trunc(n), -1), -1, 2.0**62).astype(np.int64)
        out, todo = np.zeros(x.shape, x.dtype), d >= 0
        for case, value in _cases(y, d, todo, ends, trig, limited, x.dtype):
            out[case], todo = value, todo & ~case
        p, q = np.ones_like(y[todo]), first(y[todo])
        rest, deg = np.where(d[todo] == 0, p, q), d[todo]
        for m in range(1, int(deg.max(initial=0))):
            p, q = q, step(m, y[todo], p, q)
            rest = np.where(deg == m + 1, q, rest)
        out[todo] = rest
        return out

    return fn


def _cases(y, d, todo, ends, trig, limited, dtype):
    """The (mask, values) of the special cases, in PyTorch's order."""
    if ends is not None:
        at_end = todo & ends[0](y)
        yield at_end, ends[1](y[at_end], d[at_end])
        todo = todo & ~at_end
    if trig is not None:
        inside = todo & (d > trig[0]) & (np.abs(y) < 1)
        yield inside, trig[1](np.arccos(y[inside]), d[inside], y[inside])
    if limited:
        yield todo & (d > (512 if dtype == np.float64 else 128)), np.nan


def _register_tables():
    for name in UNARY:
        kernel(name)(UNARY_FNS[name])
    for name in BINARY:
        kernel(name, widen=name not in NATIVE)(BINARY_FNS[name])
    for name, (fn, widen) in OTHER_FNS.items():
        kernel(name, widen=widen)(fn)
    for name in POLYNOMIALS:
        kernel(name)(_polynomial(*POLY_FNS[name]))


_register_tables()


@kernel("round_decimals")
def round_decimals(x, decimals):
    """``rint(x * 10**d) / 10**d`` (``rint(x / 10**-d) * 10**-d`` for negative ``d``)."""
    scale = x.dtype.type(10.0 ** abs(decimals))
    return np.rint(x * scale) / scale if decimals >= 0 else np.rint(x / scale) * scale


@kernel("nan_to_num", widen=False)
def nan_to_num(x, nan, posinf, neginf):
    """Replace nan/+inf/-inf (per part for complex); missing limits are the dtype's finite extremes."""
    info = opweave.finfo(opweave.dtype_of_numpy(x.real.dtype))
    hi, lo = (info.max if posinf is None else posinf), (info.min if neginf is None else neginf)
    values = (0.0 if nan is None else nan, hi, lo)
    x = opmath(x)

    def part(v):
        return np.select([np.isnan(v), v == np.inf, v == -np.inf], values, v)

    return _to_complex(part(x.real), part(x.imag)) if x.dtype.kind == "c" else part(x)


@kernel("polygamma")
def polygamma(x, n):
    """The ``n``-th derivative of digamma."""
    return sp.psi(x) if n == 0 else sp.polygamma(n, x)


@kernel("mvlgamma")
def mvlgamma(x, p):
    """Multivariate log-gamma; ValueError unless every element exceeds ``(p - 1) / 2``."""
    if not np.all(x > (p - 1) / 2):
        raise ValueError("prims::mvlgamma: all elements must be greater than (p-1)/2")
    terms = sum(nz.lgamma(x - x.dtype.type(j / 2)) for j in range(p))
    return terms + x.dtype.type(p * (p - 1) / 4 * math.log(math.pi))


@kernel("fill", widen=False)
def fill(x, value):
    """``value`` everywhere (floats truncate toward zero for integer dtypes)."""
    if x.dtype.kind in "iu" and isinstance(value, float):
        value = int(value)
    return np.broadcast_to(np.asarray(value, x.dtype), x.shape)


@kernel("logit")
def logit(x, eps):
    """``log(x / (1 - x))``, ``x`` first clamped to ``[eps, 1 - eps]`` when ``eps >= 0``."""
    if eps is not None and eps >= 0:
        x = np.clip(x, x.dtype.type(eps), x.dtype.type(1 - eps))
    return np.log(x / (1 - x))
