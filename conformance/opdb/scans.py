"""Scans (ops and prims): cumsum, cumprod, cummax, cummin, logcumsumexp.

Oracles: ``np.cumsum``/``np.cumprod`` (canonical ops accumulate integers in
int64, prims in the input dtype, wrapping), ``np.logaddexp.accumulate`` for
real ``logcumsumexp`` (complex: ``log(cumsum(exp(x)))``), and a loop for
``cummax``/``cummin`` with PyTorch's rule: ties take the last index and a NaN
sticks. Samples scan over each dim of transposed and strided inputs, a 0-dim
and an empty tensor, with special values in the first case.
"""

from __future__ import annotations

import numpy as np
import opweave as ow

from . import register
from ._cases import TA, Dyn, K, S, T, entry
from ._core import ALL, BOOL, FLOATING, REAL
from .reductions import PRIM_TOL, TOL

WIDE = Dyn(lambda d: ow.complex128 if d.is_complex else ow.float64)  # an accumulation dtype= (no complex -> real)


def _acc(fn, canonical):
    def oracle(x, dim, *, dtype=None):
        if x.ndim == 0:
            x, dim = x.reshape(1), 0
            squeeze = True
        else:
            squeeze = False
        if dtype is not None:
            acc = dtype.numpy if not (dtype.is_floating_point or dtype.is_complex) else None
            x = x.astype(np.float64 if dtype.is_floating_point else dtype.numpy) if acc is None else x.astype(acc)
        elif x.dtype.kind in "biu":
            acc = np.int64 if canonical else (np.int64 if x.dtype.kind == "b" else x.dtype)
            x = x.astype(acc)
        with np.errstate(all="ignore"):
            out = fn(x, axis=dim)
        return out.reshape(()) if squeeze else out

    return oracle


def _cumext(greater):
    def oracle(x, dim):
        scalar = x.ndim == 0
        if scalar:
            x, dim = x.reshape(1), 0
        moved = np.moveaxis(x, dim, -1)
        values, index = moved.copy(), np.zeros(moved.shape, np.int64)
        for pos in np.ndindex(*moved.shape[:-1]):
            row = moved[pos]
            best, at = None, 0
            for i, v in enumerate(row):
                wide = int(v) if row.dtype.kind in "biu" else float(v)  # int64 beyond 2**53 stays exact
                if (
                    best is None
                    or np.isnan(wide)
                    or (not np.isnan(best) and (wide >= best if greater else wide <= best))
                ):
                    best, at = wide, i
                values[pos + (i,)] = row[at]
                index[pos + (i,)] = at
        values, index = np.moveaxis(values, -1, dim), np.moveaxis(index, -1, dim)
        return (values.reshape(()), index.reshape(())) if scalar else (values, index)

    return oracle


def _logcumsumexp(x, dim):
    if x.ndim == 0:
        return x.copy()
    with np.errstate(all="ignore"):
        if x.dtype.kind == "c":
            return np.log(np.cumsum(np.exp(x), axis=dim))
        return np.logaddexp.accumulate(x, axis=dim)


def _unit(cases):
    """Complex dtypes take values in the unit domain (real and imaginary parts in (-1, 1))."""

    def spec(a):
        return Dyn(lambda d, a=a: a if not d.is_complex else TA(a.shape, a.layout, domain="unit"))

    return [K(spec(args[0]), *args[1:], **kw) for args, kw in cases]


def _cases(canonical):
    cases = [
        K(TA((3, 4), T, specials=True), 1),
        K(TA((2, 3, 4), S), 0),
        K(TA((5,), S, domain="small"), -1),
        K(TA(()), 0),
        K(TA((0, 3)), 1),
        K(TA((3, 4), domain="small"), 0, dtype=WIDE),
    ]
    return cases if canonical else cases[:5]


def _lines():
    sum_cases = _cases(True)
    prod_cases = [K(TA(a[0].shape, a[0].layout, domain="small"), *a[1:], **kw) for a, kw in sum_cases]
    ext = [K(TA((3, 4), T, specials=True), 1), K(TA((2, 3, 4), S, domain="small"), 2), K(TA((6,), domain="small"), 0)]
    ext += [K(TA(()), 0), K(TA((0, 3)), 1)]
    lse = [K(TA((3, 4), T), 1), K(TA((2, 3, 4), S), 0), K(TA((5,)), -1)]
    lse += [K(TA(()), 0), K(TA((0, 3)), 1)]
    narrow = Dyn(lambda d: ow.complex64 if d.is_complex else ow.int32)
    prim_int = [K(TA((3, 4), T, domain="small"), 1, dtype=narrow), K(TA((5,), S, domain="small"), 0)]
    return [
        entry("cumsum", _acc(np.cumsum, True), sum_cases, ALL, tolerances=TOL),
        entry("cumprod", _acc(np.cumprod, True), prod_cases, ALL, tolerances=TOL),
        entry("prims::cumsum", _acc(np.cumsum, False), _cases(False) + prim_int, ALL, tolerances=PRIM_TOL),
        entry("prims::cumprod", _acc(np.cumprod, False), prod_cases[:5], ALL, tolerances=PRIM_TOL),
        entry("cummax", _cumext(True), ext, BOOL + REAL),
        entry("cummin", _cumext(False), ext, BOOL + REAL),
        entry("prims::cummax", _cumext(True), ext, BOOL + REAL),
        entry("prims::cummin", _cumext(False), ext, BOOL + REAL),
        entry("logcumsumexp", _logcumsumexp, _unit(lse), FLOATING, tolerances=TOL),
        entry("prims::logcumsumexp", _logcumsumexp, _unit(lse), FLOATING, tolerances=PRIM_TOL),
    ]


register(*_lines())
