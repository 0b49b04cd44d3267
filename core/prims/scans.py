"""Scan prims: cumsum, cumprod, cummax, cummin, logcumsumexp.

Each scans one dim (0-dim inputs accept ``dim`` 0 or -1) and keeps the input's
shape; outputs are contiguous.
"""

from __future__ import annotations

from .. import _dtype
from .._meta import empty as meta_empty
from .._ops import define_prim
from ._utils import ALL, FLOATING, REAL, check_dtype, check_tensor, wrap_dim

_BOOL_REAL = REAL | frozenset({_dtype.bool_})


def _scan_input(op: str, a, dim, allowed):
    check_tensor(op, "a", a)
    check_dtype(op, "a", a, allowed)
    wrap_dim(op, dim, a.ndim)


def _accumulating_meta(op: str, a, dim, dtype):
    _scan_input(op, a, dim, ALL)
    if dtype is None:
        return meta_empty(a.shape, a.dtype)
    if dtype not in ALL:
        raise TypeError(f"{op}: argument 'dtype' has unsupported dtype {dtype.name}")
    if a.dtype.is_complex and not dtype.is_complex:
        raise TypeError(f"{op}: cannot accumulate a {a.dtype.name} input in {dtype.name}")
    return meta_empty(a.shape, dtype)


def cumsum_meta(a, dim, dtype=None):
    """Running sum along ``dim``, accumulated and returned in ``dtype`` (default ``a.dtype``; the input is cast
    to it first; 16-bit floats accumulate in float32). Integer overflow wraps."""
    return _accumulating_meta("prims::cumsum", a, dim, dtype)


def cumprod_meta(a, dim, dtype=None):
    """Running product along ``dim``, accumulated and returned in ``dtype`` (default ``a.dtype``; the input is
    cast to it first; 16-bit floats accumulate in float32). Integer overflow wraps."""
    return _accumulating_meta("prims::cumprod", a, dim, dtype)


def _extremum_meta(op: str, a, dim):
    _scan_input(op, a, dim, _BOOL_REAL)
    return meta_empty(a.shape, a.dtype), meta_empty(a.shape, _dtype.int64)


def cummax_meta(a, dim):
    """Running maximum along ``dim`` and the int64 index where it was found. As torch: element ``x`` at ``i``
    becomes the running value (index ``i``) when ``isnan(x) or x >= running``, so ties take the LAST index and
    a NaN sticks (a later NaN moves the index). Real and bool dtypes."""
    return _extremum_meta("prims::cummax", a, dim)


def cummin_meta(a, dim):
    """Running minimum along ``dim`` and the int64 index where it was found. As torch: element ``x`` at ``i``
    becomes the running value (index ``i``) when ``isnan(x) or x <= running``, so ties take the LAST index and
    a NaN sticks (a later NaN moves the index). Real and bool dtypes."""
    return _extremum_meta("prims::cummin", a, dim)


def logcumsumexp_meta(a, dim):
    """``log(cumsum(exp(a)))`` along ``dim``, computed stably (torch's pairwise log-add-exp, including its
    handling of infinities and NaN). Floating and complex dtypes."""
    _scan_input("prims::logcumsumexp", a, dim, FLOATING)
    return meta_empty(a.shape, a.dtype)


SCAN_PRIMS = [
    ("cumsum(Tensor a, int dim, *, ScalarType? dtype=None) -> Tensor", cumsum_meta),
    ("cumprod(Tensor a, int dim, *, ScalarType? dtype=None) -> Tensor", cumprod_meta),
    ("cummax(Tensor a, int dim) -> (Tensor values, Tensor indices)", cummax_meta),
    ("cummin(Tensor a, int dim) -> (Tensor values, Tensor indices)", cummin_meta),
    ("logcumsumexp(Tensor a, int dim) -> Tensor", logcumsumexp_meta),
]


def _define():
    for schema, meta in SCAN_PRIMS:
        define_prim(schema, meta, tags=("scan",))


_define()
