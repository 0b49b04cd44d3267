"""SciPy's special functions with their leading terms where SciPy loses tiny arguments.

SciPy's ``gammaln(5e-324)`` is inf (PyTorch: 744.44), ``k0``/``k1`` overflow or give nan where ``x / 2``
underflows, ``j1`` loses the last bits of subnormal results, and ``gammainc(5e-324, 1)`` is 0
(``gammaincc`` of it negative). Below :data:`TINY` each function is its leading term to the last bit.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.special as sp

TINY = 1e-20
_EULER = 0.57721566490153286061


def _tiny(x, positive: bool = False):
    small = (x != 0) & (np.abs(x) < TINY)
    return small & (x > 0) if positive else small


def with_leading_term(fn, leading, positive: bool = False):
    """``fn(x)``, and ``leading(x)`` where ``x`` is tiny (and positive, if ``positive``)."""

    def kernel(x):
        small = _tiny(x, positive)
        with np.errstate(all="ignore"):
            near = leading(np.where(small, x, 1).astype(x.dtype))
        return np.where(small, near, fn(x)).astype(x.dtype)

    return kernel


def lgamma(x):
    """``log|gamma(x)|`` (``-log|x|`` near zero; +inf at -inf, as in PyTorch)."""
    value = with_leading_term(sp.gammaln, lambda t: -np.log(np.abs(t)))(x)
    return np.where(x == -np.inf, np.inf, value).astype(x.dtype)


def half(x):
    """``J1(x) = x / 2`` for tiny ``x``."""
    return x * x.dtype.type(0.5)


def k0_near_zero(x):
    """``K0(x) = log(2) - euler - log(x)`` for tiny ``x`` (without forming ``x / 2``)."""
    return x.dtype.type(math.log(2) - _EULER) - np.log(x)


def reciprocal(x):
    """``K1(x) = 1 / x`` for tiny ``x`` (inf where it overflows)."""
    return x.dtype.type(1) / x


def regularised_gamma(a, x, lower: bool):
    """``P(a, x)`` (``lower``) or ``Q(a, x)``.

    ``Q = a E1(x)`` for tiny ``a``, ``P = x**a / Gamma(a + 1)`` for tiny ``x``; SciPy's value elsewhere.
    """
    with np.errstate(all="ignore"):
        wa, wx = a.astype(np.float64), x.astype(np.float64)
        small_a = (wa > 0) & (wa < TINY) & (wx > 0) & np.isfinite(wx)
        small_x = (wx > 0) & (wx < TINY) & (wa >= TINY) & np.isfinite(wa)
        q = wa * sp.exp1(np.where(small_a, wx, 1.0))
        p = np.exp(wa * np.log(np.where(small_x, wx, 1.0)) - sp.gammaln(wa + 1))
        if lower:
            out = np.where(small_a, 1 - q, np.where(small_x, p, sp.gammainc(a, x)))
        else:
            out = np.where(small_a, q, np.where(small_x, 1 - p, sp.gammaincc(a, x)))
    return out.astype(np.result_type(a, x))


#: Beyond this SciPy's ``ndtr(-x)`` (and ``log_ndtr(x)``, which is ``-ndtr(-x)`` there) flushes float64 subnormals.
_NDTR_UNDERFLOW = 37.0


def _lower_tail(x):
    """``ndtr(-|x|) = erfcx(|x| / sqrt 2) exp(-x**2 / 2) / 2``."""
    a = np.abs(x).astype(np.float64)
    with np.errstate(all="ignore"):
        return 0.5 * sp.erfcx(a / math.sqrt(2)) * np.exp(-0.5 * a * a)


def ndtr(x):
    """The standard normal CDF, subnormal tail values included."""
    far = (x < -_NDTR_UNDERFLOW) & np.isfinite(x)
    return np.where(far, _lower_tail(np.where(far, x, 0)), sp.ndtr(x)).astype(x.dtype)


def log_ndtr(x):
    """``log(ndtr(x))``, subnormal values near 0 included."""
    far = (x > _NDTR_UNDERFLOW) & np.isfinite(x)
    return np.where(far, -_lower_tail(np.where(far, x, 0)), sp.log_ndtr(x)).astype(x.dtype)
