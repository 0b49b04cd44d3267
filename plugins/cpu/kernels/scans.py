"""Scans over NumPy: cumsum, cumprod, cummax, cummin, logcumsumexp.

The scanned dim is moved to the front and 0-dim inputs are viewed as 1-element
vectors; results are made contiguous.
"""

from __future__ import annotations

import numpy as np
import opweave

from ._common import native, wrap
from .reductions import computable, compute_dtype


def _front(x: np.ndarray, dim: int) -> np.ndarray:
    """``x`` with the scanned dim first (0-dim arrays become 1-element vectors)."""
    return x.reshape(1) if x.ndim == 0 else np.moveaxis(x, dim % x.ndim, 0)


def _back(r: np.ndarray, like, dim: int) -> np.ndarray:
    """Undo :func:`_front` for a result, as a fresh C-contiguous array."""
    if like.ndim == 0:
        return r.reshape(()).copy()
    return np.ascontiguousarray(np.moveaxis(r, 0, dim % like.ndim))


def _accumulate(ufunc):
    def kernel(a, dim, dtype=None):
        out = dtype or a.dtype
        x = native(a)
        with np.errstate(all="ignore"):
            if a.dtype is not out:
                x = x.astype(out.numpy)
            x = _front(x.astype(compute_dtype(out), copy=False), dim)
            r = ufunc.accumulate(x, axis=0, dtype=x.dtype)
        return wrap(_back(r, a, dim), out)

    kernel.__doc__ = f"{ufunc.__name__}.accumulate in the output dtype (16-bit floats in float32)."
    return kernel


cumsum = _accumulate(np.add)
cumprod = _accumulate(np.multiply)


def _isnan(x: np.ndarray) -> np.ndarray:
    return np.isnan(x) if x.dtype.kind in "fc" else np.zeros(x.shape, bool)


def _cum_extremum(ufunc):
    def kernel(a, dim):
        x = _front(computable(a), dim)
        # torch takes x at i when isnan(x) or x >= running (x <= running for cummin). Before the first NaN that
        # is x == the running extremum including x; after it the running value is NaN and only NaNs are taken.
        with np.errstate(invalid="ignore"):
            take = _isnan(x) | (x == ufunc.accumulate(x, axis=0))
        steps = np.arange(x.shape[0]).reshape((-1,) + (1,) * (x.ndim - 1))
        indices = np.maximum.accumulate(np.where(take, steps, 0), axis=0) if x.size else np.zeros(x.shape, np.int64)
        values = np.take_along_axis(_front(native(a), dim), indices, axis=0)
        return wrap(_back(values, a, dim), a.dtype), wrap(_back(indices.astype(np.int64), a, dim), opweave.int64)

    kernel.__doc__ = f"torch's cummax/cummin rule, vectorised with {ufunc.__name__}.accumulate."
    return kernel


cummax = _cum_extremum(np.maximum)
cummin = _cum_extremum(np.minimum)


def logcumsumexp(a, dim):
    """Running log-sum-exp: ``np.logaddexp`` for real dtypes, torch's complex log-add-exp step otherwise."""
    x = _front(computable(a), dim)
    with np.errstate(all="ignore"):
        if a.dtype.is_complex:
            r = np.empty_like(x)
            if x.shape[0]:
                r[0] = x[0]
                for i in range(1, x.shape[0]):
                    r[i] = _log_add_exp_complex(r[i - 1], x[i])
        else:
            r = np.logaddexp.accumulate(x, axis=0)
    return wrap(_back(r, a, dim), a.dtype)


def _log_add_exp_complex(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``log(exp(x) + exp(y))`` elementwise, as torch's complex ``_log_add_exp_helper``."""
    x_nan, y_nan = np.isnan(x), np.isnan(y)
    swap = x.real < y.real
    lo = np.where(y_nan, y, np.where(x_nan, x, np.where(swap, x, y)))
    hi = np.where(y_nan, y, np.where(x_nan, x, np.where(swap, y, x)))
    general = np.log1p(np.exp(lo - hi)) + hi
    same_inf = ~np.isfinite(lo.real) & (lo.real == hi.real)
    both_inf = np.where(lo.real < 0, lo, np.log(np.exp(lo) + np.exp(hi)))
    out = np.where(same_inf, both_inf, general)
    return np.where(np.isnan(lo), complex(np.nan, np.nan), out)


KERNELS = {
    "prims::cumsum": cumsum,
    "prims::cumprod": cumprod,
    "prims::cummax": cummax,
    "prims::cummin": cummin,
    "prims::logcumsumexp": logcumsumexp,
}
