"""Binary elementwise prims on NumPy/SciPy (see ``opweave.prims.elementwise_binary``)."""

from __future__ import annotations

import numpy as np
import scipy.special as sp
from opweave.prims.elementwise_binary import BINARY

from ._elementwise import check_nonzero_divisor, elementwise, is_integer, operand, result


def _div(a, b):
    if not is_integer(a):
        return np.true_divide(a, b)
    check_nonzero_divisor("div", b)
    q = np.floor_divide(a, b)
    if a.dtype.kind == "u":
        return q
    # floor -> truncation: one up where the quotient is negative and inexact
    return q + ((np.remainder(a, b) != 0) & ((a < 0) != (b < 0))).astype(a.dtype)


def _pow(a, b):
    if a.dtype.kind == "i" and np.any(b < 0):
        raise RuntimeError("prims::pow: Integers to negative integer powers are not allowed")
    return np.power(a, b)


def _remainder(a, b):
    if is_integer(a):
        check_nonzero_divisor("remainder", b)
        return np.remainder(a, b)
    mod = np.fmod(a, b)
    return np.where((mod != 0) & ((b < 0) != (mod < 0)), mod + b, mod)


def _fmod(a, b):
    check_nonzero_divisor("fmod", b)
    return np.fmod(a, b)


def _floor_divide(a, b):
    if is_integer(a):
        check_nonzero_divisor("floor_divide", b)
        return np.floor_divide(a, b)
    # PyTorch's div_floor_floating (CPython's float floor division); IEEE a / b when b == 0
    mod = np.fmod(a, b)
    div = (a - mod) / b
    div = np.where((mod != 0) & ((b < 0) != (mod < 0)), div - 1, div)
    floor = np.floor(div)
    floor = np.where(div - floor > 0.5, floor + 1, floor)
    floor = np.where(div == 0, np.copysign(np.zeros_like(div), a / b), floor)
    return np.where(b == 0, a / b, floor)


def _heaviside(a, b):
    return np.where(a == 0, b, (a > 0).astype(a.dtype))


def _xlogy_like(log):
    def fn(x, y):
        return np.where(np.isnan(y), np.nan, np.where(x == 0, 0, x * log(y))).astype(x.dtype)

    return fn


def _zeta(x, q):
    return sp.zeta(x.astype(np.float64), q.astype(np.float64))


# PyTorch's special cases of igamma/igammac, checked in order; then SciPy's value.
def _igamma_cases(a, x, values):
    conds = [
        (x < 0) | (a < 0),
        (a == 0) & (x > 0),
        a == 0,
        x == 0,
        np.isinf(a) & np.isinf(x),
        np.isinf(a),
        np.isinf(x),
    ]
    return conds, values


#: Below this ``a`` SciPy's ``gammainc``/``gammaincc`` lose the result (``gammainc(5e-324, 1)`` is 0, ``gammaincc``
#: of it negative); and below this ``x`` SciPy's ``gammainc`` flushes the float64 subnormal ``x**a / Gamma(a + 1)``.
_TINY = 1e-20


def _regularised_gamma(a, x, lower: bool):
    """SciPy's ``P(a, x)`` (``lower``) or ``Q(a, x)``, with the leading terms where SciPy loses them.

    Tiny ``a``: ``Q = a E1(x)`` (``Gamma(a, x) -> E1(x)``, ``Gamma(a) ~ 1 / a``; the next term is ``O(a**2)``)
    and ``P = 1 - Q``. Tiny ``x``: ``P = x**a / Gamma(a + 1)`` (the next term is ``O(x)``), computed through
    its logarithm so that a subnormal result keeps its digits.
    """
    with np.errstate(all="ignore"):
        wide_a, wide_x = a.astype(np.float64), x.astype(np.float64)
        small_a = (wide_a > 0) & (wide_a < _TINY) & (wide_x > 0) & np.isfinite(wide_x)
        small_x = (wide_x > 0) & (wide_x < _TINY) & (wide_a >= _TINY) & np.isfinite(wide_a)
        q_small_a = wide_a * sp.exp1(np.where(small_a, wide_x, 1.0))
        p_small_x = np.exp(wide_a * np.log(np.where(small_x, wide_x, 1.0)) - sp.gammaln(wide_a + 1))
        if lower:
            values = np.where(small_a, 1 - q_small_a, np.where(small_x, p_small_x, sp.gammainc(a, x)))
        else:
            values = np.where(small_a, q_small_a, np.where(small_x, 1 - p_small_x, sp.gammaincc(a, x)))
    return values.astype(np.result_type(a, x))


def _igamma(a, x):
    conds, values = _igamma_cases(a, x, [np.nan, 1, np.nan, 0, np.nan, 0, 1])
    return np.select(conds, values, _regularised_gamma(a, x, True))


def _igammac(a, x):
    conds, values = _igamma_cases(a, x, [np.nan, 0, np.nan, 1, np.nan, 1, 0])
    return np.select(conds, values, _regularised_gamma(a, x, False))


def _shift_left(a, b):
    bits = a.dtype.itemsize * 8
    valid = (b >= 0) & (b < bits)
    shifted = np.left_shift(a, np.where(valid, b, 0).astype(b.dtype))
    return np.where(valid, shifted, 0).astype(a.dtype)


def _shift_right_arithmetic(a, b):
    bits = a.dtype.itemsize * 8
    signed = a.dtype.kind == "i"
    valid = (b >= 0) & (b < bits - signed)
    shifted = np.right_shift(a, np.where(valid, b, 0).astype(b.dtype))
    overflow = np.right_shift(a, bits - 1) if signed else np.zeros_like(a)
    return np.where(valid, shifted, overflow).astype(a.dtype)


# name -> NumPy function of the (widened) operands
FUNCTIONS = {
    "add": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
    "div": _div,
    "pow": _pow,
    "maximum": np.maximum,
    "minimum": np.minimum,
    "fmax": np.fmax,
    "fmin": np.fmin,
    "remainder": _remainder,
    "fmod": _fmod,
    "floor_divide": _floor_divide,
    "heaviside": _heaviside,
    "atan2": np.arctan2,
    "hypot": np.hypot,
    "copysign": np.copysign,
    "nextafter": np.nextafter,
    "logaddexp": np.logaddexp,
    "logaddexp2": np.logaddexp2,
    "xlogy": _xlogy_like(np.log),
    "xlog1py": _xlogy_like(np.log1p),
    "zeta": _zeta,
    "igamma": _igamma,
    "igammac": _igammac,
    "gcd": np.gcd,
    "lcm": np.lcm,
    "bitwise_and": np.bitwise_and,
    "bitwise_or": np.bitwise_or,
    "bitwise_xor": np.bitwise_xor,
    "shift_left": _shift_left,
    "shift_right_arithmetic": _shift_right_arithmetic,
    "logical_and": np.logical_and,
    "logical_or": np.logical_or,
    "logical_xor": np.logical_xor,
    "eq": np.equal,
    "ne": np.not_equal,
    "lt": np.less,
    "le": np.less_equal,
    "gt": np.greater,
    "ge": np.greater_equal,
}

# Prims computed in the operands' own dtype (no float32 widening for float16/bfloat16).
NATIVE = {"nextafter"}


def _to_complex(re, im):
    out = np.empty(np.broadcast_shapes(re.shape, im.shape), np.result_type(re.dtype, np.complex64))
    out.real, out.imag = re, im
    return out


def complex(real, imag):
    """``real + 1j * imag``, built part by part (no ``inf * 1j`` nan)."""
    return result(_to_complex(operand(real), operand(imag)), real.dtype.to_complex())


def polar(abs, angle):
    """``abs * cos(angle) + 1j * abs * sin(angle)``."""
    r, t = operand(abs), operand(angle)
    with np.errstate(all="ignore"):
        out = _to_complex(r * np.cos(t), r * np.sin(t))
    return result(out, abs.dtype.to_complex())


def _binary_kernel(name):
    _, rule, doc = BINARY[name]
    kernel = elementwise(FUNCTIONS[name], rule, widen=name not in NATIVE)
    kernel.__name__ = name
    kernel.__doc__ = doc
    return kernel


KERNELS = {f"prims::{name}": _binary_kernel(name) for name in BINARY}
KERNELS.update({"prims::complex": complex, "prims::polar": polar})
