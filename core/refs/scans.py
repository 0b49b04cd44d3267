"""Scan canonical ops: cumsum, cumprod, cummax, cummin, logcumsumexp.

Each scans one dim (a 0-dim input accepts 0 and -1) and keeps the input's
shape. ``cumsum``/``cumprod`` promote integral inputs to int64 unless
``dtype`` is given (as torch); 16-bit floats accumulate in float32.
"""

from __future__ import annotations

from .. import _dtype
from .._ops import prims
from ._tensor_utils import is_floating, is_integral
from ._utils import define_with_variants, wrap_dim


def _accumulating(op: str, prim, self, dim, dtype):
    wrap_dim(op, dim, self.ndim)
    if dtype is None:
        dtype = _dtype.int64 if is_integral(self.dtype) else self.dtype
    elif self.dtype.is_complex and not dtype.is_complex:
        raise TypeError(f"{op}: cannot accumulate a {self.dtype.name} input in the real dtype {dtype.name}")
    return prim(self, dim, dtype=dtype)


def cumsum(self, dim, dtype=None):
    """Running sum along ``dim``; integral inputs accumulate in int64 unless ``dtype`` is given."""
    return _accumulating("cumsum", prims.cumsum, self, dim, dtype)


def cumprod(self, dim, dtype=None):
    """Running product along ``dim``; integral inputs accumulate in int64 unless ``dtype`` is given."""
    return _accumulating("cumprod", prims.cumprod, self, dim, dtype)


def _running_extremum(op: str, prim, self, dim):
    wrap_dim(op, dim, self.ndim)
    if self.dtype.is_complex:
        raise TypeError(f"{op}: complex inputs are not supported, got {self.dtype.name}")
    return prim(self, dim)


def cummax(self, dim):
    """``(values, indices)`` of the running maximum along ``dim``; ties take the last index, NaN sticks."""
    return _running_extremum("cummax", prims.cummax, self, dim)


def cummin(self, dim):
    """``(values, indices)`` of the running minimum along ``dim``; ties take the last index, NaN sticks."""
    return _running_extremum("cummin", prims.cummin, self, dim)


def logcumsumexp(self, dim):
    """``log(cumsum(exp(self)))`` along ``dim``, computed stably; floating and complex inputs only."""
    op = "logcumsumexp"
    wrap_dim(op, dim, self.ndim)
    if not is_floating(self.dtype):
        raise TypeError(f"{op}: expected a floating point or complex input, got {self.dtype.name}")
    return prims.logcumsumexp(self, dim)


SCANS = [
    ("cumsum(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor", cumsum, True),
    ("cumprod(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor", cumprod, True),
    ("cummax(Tensor self, int dim) -> (Tensor values, Tensor indices)", cummax, False),
    ("cummin(Tensor self, int dim) -> (Tensor values, Tensor indices)", cummin, False),
    ("logcumsumexp(Tensor self, int dim) -> Tensor", logcumsumexp, False),
]


def _define():
    for schema, decomposition, inplace in SCANS:
        define_with_variants(schema, decomposition, tags=("scan", "core"), inplace=inplace, out=True)


_define()
