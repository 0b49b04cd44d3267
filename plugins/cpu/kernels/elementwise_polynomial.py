"""Orthogonal polynomials, vectorised like PyTorch's scalar kernels.

Each evaluation follows PyTorch's order of cases: ``n < 0`` (or non-finite)
gives 0; then the special values at the ends of the interval; then, for large
``n`` inside the interval, a trigonometric closed form; otherwise the
three-term recurrence, run for all elements at once up to the largest degree
(cost ``O(max n)`` per element, as in PyTorch).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from opweave.prims.elementwise_polynomial import POLYNOMIALS

from ._elementwise import elementwise


@dataclass(frozen=True)
class Polynomial:
    """How to evaluate one family (``y`` is ``x``, or ``2x - 1`` for the shifted families)."""

    first: object  # y -> P_1(y)
    step: object  # (m, y, P_{m-1}, P_m) -> P_{m+1}
    ends: object = None  # (y, d) -> (mask, values) for the special points
    trig: tuple | None = None  # (degree threshold, (theta, d, y) -> value) used for |y| < 1
    shifted: bool = False
    limited: bool = False  # Hermite: nan above PyTorch's getHermitianLimit (float 128, double 512)


def _sign_pow(y, d):
    """``(+1 or -1)**d`` for ``y = +-1``."""
    return np.where((y > 0) | (d % 2 == 0), 1.0, -1.0)


def _ends_t(y, d):
    return np.abs(y) == 1, _sign_pow(y, d)


def _ends_u(y, d):
    return np.abs(y) == 1, _sign_pow(y, d) * (d + 1)


def _ends_v(y, d):
    return np.abs(y) == 1, np.where(y > 0, 1.0, _sign_pow(y, d) * (2 * d + 1))


def _ends_w(y, d):
    return np.abs(y) == 1, np.where(y > 0, 2 * d + 1.0, _sign_pow(y, d))


def _ends_p(y, d):
    return np.abs(y) == 1, _sign_pow(y, d)


def _ends_l(y, d):
    return y == 0, np.ones_like(y)


def _trig_t(theta, d, y):
    return np.cos(d * theta)


def _trig_u(theta, d, y):
    s = np.sin(theta)
    return np.where(s != 0, np.sin((d + 1) * theta) / s, (d + 1) * np.cos((d + 1) * theta) / y)


def _trig_v(theta, d, y):
    value = np.cos((d + 0.5) * theta) / np.cos(theta / 2)
    return np.where(np.sin(theta / 2) != 1, value, _sign_pow(-1.0, d) * (2 * d + 1))


def _trig_w(theta, d, y):
    value = np.sin((d + 0.5) * theta) / np.sin(theta / 2)
    return np.where(np.cos(theta / 2) != 1, value, np.where(y > 0, 2 * d + 1.0, _sign_pow(-1.0, d)))


def _chebyshev(first, ends, threshold, trig, shifted=False):
    return Polynomial(first, lambda m, y, p, q: (y + y) * q - p, ends, (threshold, trig), shifted)


FAMILIES = {
    "chebyshev_polynomial_t": _chebyshev(lambda y: y, _ends_t, 6, _trig_t),
    "chebyshev_polynomial_u": _chebyshev(lambda y: y + y, _ends_u, 8, _trig_u),
    "chebyshev_polynomial_v": _chebyshev(lambda y: y + y - 1, _ends_v, 8, _trig_v),
    "chebyshev_polynomial_w": _chebyshev(lambda y: y + y + 1, _ends_w, 8, _trig_w),
    "shifted_chebyshev_polynomial_t": _chebyshev(lambda y: y, _ends_t, 6, _trig_t, True),
    "shifted_chebyshev_polynomial_u": _chebyshev(lambda y: y + y, _ends_u, 6, _trig_u, True),
    "shifted_chebyshev_polynomial_v": _chebyshev(lambda y: y + y - 1, _ends_v, 6, _trig_v, True),
    "shifted_chebyshev_polynomial_w": _chebyshev(lambda y: y + y + 1, _ends_w, 4, _trig_w, True),
    "hermite_polynomial_h": Polynomial(lambda x: x + x, lambda m, x, p, q: (x + x) * q - 2 * m * p, limited=True),
    "hermite_polynomial_he": Polynomial(lambda x: x, lambda m, x, p, q: x * q - m * p, limited=True),
    "laguerre_polynomial_l": Polynomial(
        lambda x: 1 - x, lambda m, x, p, q: ((2 * m + (1 - x)) * q - m * p) / (m + 1), _ends_l
    ),
    "legendre_polynomial_p": Polynomial(
        lambda x: x, lambda m, x, p, q: ((2 * m + 1) * x * q - m * p) / (m + 1), _ends_p
    ),
}


def _degree(n):
    """``n`` truncated to int64; -1 (value 0) for negative or non-finite ``n``."""
    d = np.where(np.isfinite(n), np.trunc(n), -1)
    return np.clip(d, -1, 2.0**62).astype(np.int64)


def _recurrence(poly, y, d):
    p = np.ones_like(y)
    q = poly.first(y)
    out = np.where(d == 0, p, q)
    for m in range(1, int(d.max(initial=0))):
        p, q = q, poly.step(m, y, p, q)
        out = np.where(d == m + 1, q, out)
    return out


def evaluate(poly: Polynomial, x, n):
    """The polynomial of degree ``trunc(n)`` at ``x`` (arrays of one float dtype)."""
    x, n = np.broadcast_arrays(x, n)
    y = x + x - 1 if poly.shifted else x
    d = _degree(n)
    out = np.zeros(x.shape, x.dtype)
    todo = d >= 0
    if poly.ends is not None:
        at_end, value = poly.ends(y, d)
        out = np.where(todo & at_end, value, out)
        todo &= ~at_end
    if poly.trig is not None:
        threshold, trig = poly.trig
        inside = todo & (d > threshold) & (np.abs(y) < 1)
        out[inside] = trig(np.arccos(y[inside]), d[inside], y[inside])
        todo &= ~inside
    if poly.limited:
        over = todo & (d > (512 if x.dtype == np.float64 else 128))
        out[over] = np.nan
        todo &= ~over
    out[todo] = _recurrence(poly, y[todo], d[todo])
    return out.astype(x.dtype, copy=False)


def _kernel(name):
    poly = FAMILIES[name]

    def fn(x, n):
        return evaluate(poly, x, n)

    kernel = elementwise(fn)
    kernel.__name__ = name
    kernel.__doc__ = POLYNOMIALS[name]
    return kernel


KERNELS = {f"prims::{name}": _kernel(name) for name in POLYNOMIALS}
