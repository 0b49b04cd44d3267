"""Unary elementwise prims on NumPy/SciPy (see ``opweave.prims.elementwise_unary``)."""

from __future__ import annotations

import math

import numpy as np
import opweave
import scipy.special as sp
from opweave.prims.elementwise_unary import UNARY

from ._elementwise import elementwise, is_integer, operand, result


def _integral_identity(fn):
    """Rounding: ``fn`` on floats, a copy on integers."""

    def rounded(x):
        return x.copy() if is_integer(x) else fn(x)

    return rounded


def _log1p(x):
    """``log(1 + x)``; for complex ``x`` PyTorch's form, which keeps the digits of small ``|x|``.

    NumPy's complex ``log1p`` is ``log(1 + x)``, which loses them: ``log1p(1e-3j)`` has a real
    part of 5e-7 that it gets 5 % wrong in complex64.
    """
    if x.dtype.kind != "c":
        return np.log1p(x)
    re, im = x.real, x.imag
    small = re * (2 + re) + im * im  # |1 + x|^2 - 1 without the cancellation
    out = np.empty_like(x)
    out.real = np.where(np.abs(x) < 0.5, np.where(small == 0, re, 0.5 * np.log1p(small)), np.log(np.hypot(re + 1, im)))
    out.imag = np.arctan2(im, re + 1)
    return out


#: Below this magnitude the Bessel and gamma functions are their leading term to the last bit (the next term
#: is smaller by a factor of about ``x``), which SciPy's kernels lose where ``1 / x`` or ``x / 2`` leaves float64.
_TINY_ARGUMENT = 1e-20
_EULER = 0.57721566490153286061


def _tiny(x):
    """Where ``x`` is nonzero and below :data:`_TINY_ARGUMENT` in magnitude."""
    return (x != 0) & (np.abs(x) < _TINY_ARGUMENT)


def _lgamma(x):
    """``log|gamma(x)|``; +inf at -inf as in PyTorch (SciPy's ``gammaln`` gives -inf there).

    Near zero it is ``-log|x|`` (SciPy's ``gammaln`` overflows at float64 subnormals: ``gammaln(5e-324)``
    is inf, PyTorch gives 744.44).
    """
    with np.errstate(divide="ignore"):
        near_zero = -np.log(np.abs(np.where(_tiny(x), x, 1)))
    return np.where(x == -np.inf, np.inf, np.where(_tiny(x), near_zero, sp.gammaln(x))).astype(x.dtype)


#: Below ``-37.5`` SciPy's ``ndtr`` (and above 37.5 ``log_ndtr``, ``-ndtr(-x)`` there) flushes its float64
#: subnormal results to zero: ``ndtr(-38)`` is 2.9e-316.
_NDTR_UNDERFLOW = 37.0


def _lower_tail(x):
    """``ndtr(-|x|) = erfcx(|x| / sqrt 2) exp(-x**2 / 2) / 2``: subnormal values keep their digits."""
    a = np.abs(x).astype(np.float64)
    with np.errstate(all="ignore"):
        return 0.5 * sp.erfcx(a / math.sqrt(2)) * np.exp(-0.5 * a * a)


def _ndtr(x):
    far = (x < -_NDTR_UNDERFLOW) & np.isfinite(x)
    return np.where(far, _lower_tail(np.where(far, x, 0)), sp.ndtr(x)).astype(x.dtype)


def _log_ndtr(x):
    far = (x > _NDTR_UNDERFLOW) & np.isfinite(x)  # log1p(-t) = -t to the last bit for t below 1e-300
    return np.where(far, -_lower_tail(np.where(far, x, 0)), sp.log_ndtr(x)).astype(x.dtype)


def _small_leading_term(fn, leading, positive: bool = False):
    """``fn`` with ``leading(x)`` where ``x`` is tiny (:func:`_tiny`; and positive, if ``positive``)."""

    def kernel(x):
        small = _tiny(x) & (x > 0) if positive else _tiny(x)
        with np.errstate(all="ignore"):
            near_zero = leading(np.where(small, x, 1).astype(x.dtype))
        return np.where(small, near_zero, fn(x)).astype(x.dtype)

    return kernel


def _k0_near_zero(x):
    """``K0(x) = -log(x / 2) - euler`` for tiny ``x``, without forming ``x / 2`` (it underflows at 5e-324)."""
    return (math.log(2) - _EULER) - np.log(x)


def _reciprocal_near_zero(x):
    """``K1(x) = 1 / x`` for tiny ``x`` (inf where it overflows, as the function does)."""
    return np.divide(np.ones((), x.dtype), x)


def _half(x):
    """``J1(x) = I1(x) = x / 2`` for tiny ``x`` (SciPy's ``j1`` loses the last bits of subnormal results)."""
    return x * np.asarray(0.5, x.dtype)


def _nan_at_inf(fn):
    """nan at +-inf, as PyTorch's kernels give (``exp(x) / sqrt(x)``, ``cos(x) / sqrt(x)``; Airy checks isinf)."""

    def bessel(x):
        return np.where(np.isinf(x), np.nan, fn(x)).astype(x.dtype)

    return bessel


def _sigmoid(x):
    return sp.expit(x) if x.dtype.kind == "f" else 1 / (1 + np.exp(-x))


def _exp2(x):
    if x.dtype.kind != "c":
        return np.exp2(x)
    # PyTorch: no complex exp2 in C++, so 2**z = exp(ln(2) * z)
    return np.exp(np.asarray(np.log(2), x.real.dtype) * x)


def _reciprocal(x):
    # 1 / z with NumPy's (and PyTorch's c10::complex) division algorithm
    return np.divide(np.asarray(1, x.dtype), x)


def _spherical_bessel_j0(x):
    return np.where(np.isinf(x), 0, np.where(x == 0, 1, np.sin(x) / np.where(x == 0, 1, x))).astype(x.dtype)


def _sgn(x):
    if x.dtype.kind != "c":
        return np.sign(x)
    mag = np.abs(x)
    return np.where(mag == 0, 0, x / np.where(mag == 0, 1, mag)).astype(x.dtype)


def _signbit(x):
    return x < 0 if is_integer(x) else np.signbit(x)


def _angle(x):
    if x.dtype.kind == "c":
        return np.angle(x)
    return np.where(np.isnan(x), x, np.where(x < 0, np.pi, 0).astype(x.dtype))


def _conj(x):
    return np.conj(x) if x.dtype.kind == "c" else x.copy()


# name -> NumPy function of the (widened) operand
FUNCTIONS = {
    "acos": np.arccos,
    "acosh": np.arccosh,
    "asin": np.arcsin,
    "asinh": np.arcsinh,
    "atan": np.arctan,
    "atanh": np.arctanh,
    "cos": np.cos,
    "cosh": np.cosh,
    "sin": np.sin,
    "sinh": np.sinh,
    "tan": np.tan,
    "tanh": np.tanh,
    "exp": np.exp,
    "exp2": _exp2,
    "expm1": np.expm1,
    "log": np.log,
    "log1p": _log1p,
    "log2": np.log2,
    "log10": np.log10,
    "sqrt": np.sqrt,
    "rsqrt": lambda x: 1 / np.sqrt(x),
    "reciprocal": _reciprocal,
    "sigmoid": _sigmoid,
    "sinc": np.sinc,
    "cbrt": np.cbrt,
    "erf": sp.erf,
    "erfc": sp.erfc,
    "erfcx": sp.erfcx,
    "erf_inv": lambda x: np.where(x == 0, x, sp.erfinv(x)),  # PyTorch keeps -0.0 (SciPy gives +0.0)
    "lgamma": _lgamma,
    "digamma": sp.psi,  # -inf at +0, +inf at -0, nan at negative integers: PyTorch's convention
    "ndtri": sp.ndtri,
    "ndtr": _ndtr,
    "log_ndtr": _log_ndtr,
    "bessel_i0": _nan_at_inf(sp.i0),
    "bessel_i0e": sp.i0e,
    "bessel_i1": _nan_at_inf(sp.i1),
    "bessel_i1e": sp.i1e,
    "bessel_j0": _nan_at_inf(sp.j0),
    "bessel_j1": _small_leading_term(_nan_at_inf(sp.j1), _half),
    "bessel_y0": _nan_at_inf(sp.y0),
    "bessel_y1": _nan_at_inf(sp.y1),
    "modified_bessel_k0": _small_leading_term(sp.k0, _k0_near_zero, True),
    "modified_bessel_k1": _small_leading_term(sp.k1, _reciprocal_near_zero, True),
    "scaled_modified_bessel_k0": _small_leading_term(sp.k0e, _k0_near_zero, True),
    "scaled_modified_bessel_k1": _small_leading_term(sp.k1e, _reciprocal_near_zero, True),
    "spherical_bessel_j0": _spherical_bessel_j0,
    "airy_ai": _nan_at_inf(lambda x: sp.airy(x)[0]),
    "entr": sp.entr,
    "frac": lambda x: x - np.trunc(x),
    "ceil": _integral_identity(np.ceil),
    "floor": _integral_identity(np.floor),
    "round": _integral_identity(np.rint),
    "trunc": _integral_identity(np.trunc),
    "abs": np.abs,
    "neg": np.negative,
    "sign": np.sign,
    "sgn": _sgn,
    "signbit": _signbit,
    "bitwise_not": np.invert,
    "logical_not": np.logical_not,
    "isfinite": np.isfinite,
    "isinf": np.isinf,
    "isnan": np.isnan,
    "isposinf": lambda x: x == np.inf,
    "isneginf": lambda x: x == -np.inf,
    "real": lambda x: np.real(x).copy(),
    "imag": lambda x: np.imag(x).copy(),
    "angle": _angle,
    "conj_physical": _conj,
}


def round_decimals(self, decimals):
    """``nearbyint(x * 10**d) / 10**d`` (``nearbyint(x / 10**-d) * 10**-d`` for negative ``d``)."""
    x = operand(self)
    with np.errstate(all="ignore"):
        scale = np.power(np.float64(10), abs(decimals)).astype(x.dtype)
        r = np.rint(x * scale) / scale if decimals >= 0 else np.rint(x / scale) * scale
    return result(r, self.dtype)


def nan_to_num(self, nan, posinf, neginf):
    """Replace nan and infinities (per part for complex); ``None`` limits are the dtype's finite extremes."""
    x = operand(self)
    info = opweave.finfo(self.dtype.to_real())
    fill = 0.0 if nan is None else nan
    hi = float(info.max) if posinf is None else posinf
    lo = float(info.min) if neginf is None else neginf

    def part(v):
        return np.where(np.isnan(v), fill, np.where(v == np.inf, hi, np.where(v == -np.inf, lo, v)))

    with np.errstate(all="ignore"):
        if x.dtype.kind == "c":
            r = np.empty(x.shape, x.dtype)
            r.real, r.imag = part(x.real), part(x.imag)
        else:
            r = part(x)
    return result(r, self.dtype)


def polygamma(self, n):
    """``n = 0``: digamma; else ``(-1)**(n+1) n! zeta(n+1, x)`` (SciPy)."""
    x = operand(self)
    with np.errstate(all="ignore"):
        r = sp.psi(x) if n == 0 else sp.polygamma(n, x)
    return result(r, self.dtype)


def mvlgamma(self, p):
    """``sum(lgamma(x - j/2) for j < p) + p (p-1)/4 log(pi)``; ValueError unless every ``x > (p-1)/2``."""
    x = operand(self)
    if not np.all(x > (p - 1) / 2):
        raise ValueError("prims::mvlgamma: all elements must be greater than (p-1)/2")
    with np.errstate(all="ignore"):
        r = sum(_lgamma(x - np.asarray(j / 2, x.dtype)) for j in range(p))
        r = r + np.asarray(p * (p - 1) / 4 * math.log(math.pi), x.dtype)
    return result(r, self.dtype)


def fill(self, value):
    """A tensor like ``self`` filled with ``value`` (floats truncated toward zero for integer dtypes)."""
    dtype = self.dtype
    if dtype.kind in ("int", "uint") and isinstance(value, float):
        value = int(value)
    return result(np.full(tuple(self.shape), value, dtype.numpy), dtype)


def logit(self, eps):
    """``log(x / (1 - x))``, ``x`` clamped to ``[eps, 1 - eps]`` when ``eps`` is given and non-negative."""
    x = operand(self)
    with np.errstate(all="ignore"):
        if eps is not None and eps >= 0:
            x = np.clip(x, np.asarray(eps, x.dtype), np.asarray(1 - eps, x.dtype))
        r = np.log(x / (1 - x))
    return result(r, self.dtype)


def _unary_kernel(name):
    rule = UNARY[name][1]
    kernel = elementwise(FUNCTIONS[name], rule)
    kernel.__name__ = name
    kernel.__doc__ = UNARY[name][2]
    return kernel


KERNELS = {f"prims::{name}": _unary_kernel(name) for name in UNARY}
KERNELS.update(
    {
        "prims::round_decimals": round_decimals,
        "prims::nan_to_num": nan_to_num,
        "prims::polygamma": polygamma,
        "prims::mvlgamma": mvlgamma,
        "prims::fill": fill,
        "prims::logit": logit,
    }
)
