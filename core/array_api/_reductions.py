"""The standard's statistical and utility functions: ``sum``/``prod`` with its accumulation dtypes,
``max``/``min``/``mean``/``std``/``var``, ``cumulative_sum``/``cumulative_prod``, ``all``/``any``, ``diff``.

``axis=()`` reduces nothing (PyTorch's ``dim=()`` reduces everything).
"""

from __future__ import annotations

import builtins

import opweave as ow

from .._tensor import Tensor
from ._dtypes import DEFAULT_INT

__all__ = [
    "all",
    "any",
    "cumulative_prod",
    "cumulative_sum",
    "diff",
    "max",
    "mean",
    "min",
    "prod",
    "std",
    "sum",
    "var",
]


def axes(axis, ndim: builtins.int, name: str) -> tuple | None:
    """``axis`` (None, an int or a tuple) as a tuple of non-negative axes; None means every axis."""
    if axis is None:
        return None
    seq = (axis,) if isinstance(axis, builtins.int) else tuple(axis)
    out = []
    for a in seq:
        if not -builtins.max(ndim, 1) <= a < builtins.max(ndim, 1):
            raise IndexError(f"{name}(): axis {a} is out of range for an array of {ndim} dimensions")
        out.append(a % builtins.max(ndim, 1))
    if len(set(out)) != len(out):
        raise ValueError(f"{name}(): repeated axis in {axis}")
    return tuple(out)


def _reduce(fn, x: Tensor, axis, keepdims: builtins.bool, name: str, **kw) -> Tensor:
    ax = axes(axis, x.ndim, name)
    if ax == ():
        return fn(x.unsqueeze(0), dim=0, keepdim=False, **kw)
    if x.ndim == 0:
        return fn(x, **kw) if not keepdims else fn(x, dim=0, keepdim=True, **kw)
    return fn(x, dim=list(range(x.ndim)) if ax is None else list(ax), keepdim=keepdims, **kw)


def _accumulation_dtype(x: Tensor, dtype):
    if dtype is not None:
        return dtype
    if x.dtype == ow.bool or (not x.dtype.is_floating_point and not x.dtype.is_complex):
        return DEFAULT_INT if x.dtype != ow.uint8 else DEFAULT_INT
    return x.dtype


def sum(x: Tensor, /, *, axis=None, dtype=None, keepdims: builtins.bool = False) -> Tensor:  # noqa: A001
    """Sum over ``axis``; integers accumulate in int64, floats keep their dtype unless ``dtype`` is given."""
    return _reduce(ow.sum, x, axis, keepdims, "sum", dtype=_accumulation_dtype(x, dtype))


def prod(x: Tensor, /, *, axis=None, dtype=None, keepdims: builtins.bool = False) -> Tensor:
    """Product over ``axis``, with ``sum``'s accumulation dtypes."""
    dt = _accumulation_dtype(x, dtype)
    ax = axes(axis, x.ndim, "prod")
    src = x.to(dt)
    if ax == ():
        return src.clone()
    dims = list(range(x.ndim)) if ax is None else sorted(ax)
    if not dims:
        return src.clone()
    out = src
    for d in reversed(dims):
        out = ow.prod(out, dim=d, keepdim=keepdims, dtype=dt)  # PyTorch would widen small integers to int64
    return out


def max(x: Tensor, /, *, axis=None, keepdims: builtins.bool = False) -> Tensor:  # noqa: A001
    """Largest value over ``axis`` (NaN propagates)."""
    return _reduce(ow.amax, x, axis, keepdims, "max")


def min(x: Tensor, /, *, axis=None, keepdims: builtins.bool = False) -> Tensor:  # noqa: A001
    """Smallest value over ``axis`` (NaN propagates)."""
    return _reduce(ow.amin, x, axis, keepdims, "min")


def mean(x: Tensor, /, *, axis=None, keepdims: builtins.bool = False) -> Tensor:
    """Arithmetic mean over ``axis`` (floating inputs)."""
    return _reduce(ow.mean, x, axis, keepdims, "mean")


def var(x: Tensor, /, *, axis=None, correction=0.0, keepdims: builtins.bool = False) -> Tensor:
    """Variance over ``axis`` with ``correction`` degrees of freedom subtracted."""
    return _reduce(ow.var, x, axis, keepdims, "var", correction=correction)


def std(x: Tensor, /, *, axis=None, correction=0.0, keepdims: builtins.bool = False) -> Tensor:
    """Standard deviation over ``axis`` with ``correction`` degrees of freedom subtracted."""
    return _reduce(ow.std, x, axis, keepdims, "std", correction=correction)


def _cumulative(fn, identity, x: Tensor, axis, dtype, include_initial: builtins.bool, name: str) -> Tensor:
    if axis is None:
        if x.ndim > 1:
            raise ValueError(f"{name}(): axis is required for an array of more than one dimension")
        axis = 0
    if x.ndim == 0:
        raise ValueError(f"{name}(): the input must have at least one dimension")
    (axis,) = axes(axis, x.ndim, name)
    dt = _accumulation_dtype(x, dtype)
    out = fn(x.to(dt), dim=axis, dtype=dt)
    if include_initial:
        shape = list(x.shape)
        shape[axis] = 1
        out = ow.cat([ow.full(shape, identity, dtype=dt, device=x.device), out], dim=axis)
    return out


def cumulative_sum(x: Tensor, /, *, axis=None, dtype=None, include_initial: builtins.bool = False) -> Tensor:
    """Running sums along ``axis``, preceded by 0 when ``include_initial``."""
    return _cumulative(ow.cumsum, 0, x, axis, dtype, include_initial, "cumulative_sum")


def cumulative_prod(x: Tensor, /, *, axis=None, dtype=None, include_initial: builtins.bool = False) -> Tensor:
    """Running products along ``axis``, preceded by 1 when ``include_initial``."""
    return _cumulative(ow.cumprod, 1, x, axis, dtype, include_initial, "cumulative_prod")


def all(x: Tensor, /, *, axis=None, keepdims: builtins.bool = False) -> Tensor:  # noqa: A001
    """Whether every element over ``axis`` is true (non-zero)."""
    return _logical(ow.all, x, axis, keepdims, "all")


def any(x: Tensor, /, *, axis=None, keepdims: builtins.bool = False) -> Tensor:  # noqa: A001
    """Whether any element over ``axis`` is true (non-zero)."""
    return _logical(ow.any, x, axis, keepdims, "any")


def _logical(fn, x: Tensor, axis, keepdims, name):
    ax = axes(axis, x.ndim, name)
    b = x if x.dtype == ow.bool else x != 0
    if ax == () or x.ndim == 0:
        return b.clone()
    out = b
    for d in sorted(range(x.ndim) if ax is None else ax, reverse=True):
        out = fn(out, dim=d, keepdim=keepdims)
    return out


def diff(x: Tensor, /, *, axis: builtins.int = -1, n: builtins.int = 1, prepend=None, append=None) -> Tensor:
    """The ``n``-th forward difference along ``axis``, after ``prepend``/``append`` are joined on."""
    return ow.diff(x, n=n, dim=axis, prepend=prepend, append=append)
