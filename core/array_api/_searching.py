"""The standard's searching, sorting and set functions (``nonzero`` as a tuple, ``sort(stable=)``,
``unique_all``/``unique_counts``/``unique_inverse``/``unique_values``, where NaNs are distinct)."""

from __future__ import annotations

import builtins
from typing import NamedTuple

import opweave as ow

from .._tensor import Tensor
from ._dtypes import _is_scalar, _scalar_dtype, promote
from ._reductions import axes

__all__ = [
    "argmax",
    "argmin",
    "argsort",
    "count_nonzero",
    "nonzero",
    "searchsorted",
    "sort",
    "unique_all",
    "unique_counts",
    "unique_inverse",
    "unique_values",
    "where",
]


def argmax(x: Tensor, /, *, axis: builtins.int | None = None, keepdims: builtins.bool = False) -> Tensor:
    """Index of the first largest value (of the flattened array when ``axis`` is None)."""
    if axis is None:
        out = ow.argmax(x.reshape(-1))
        return out.reshape((1,) * x.ndim) if keepdims else out
    return ow.argmax(x, dim=axis, keepdim=keepdims)


def argmin(x: Tensor, /, *, axis: builtins.int | None = None, keepdims: builtins.bool = False) -> Tensor:
    """Index of the first smallest value (of the flattened array when ``axis`` is None)."""
    if axis is None:
        out = ow.argmin(x.reshape(-1))
        return out.reshape((1,) * x.ndim) if keepdims else out
    return ow.argmin(x, dim=axis, keepdim=keepdims)


def count_nonzero(x: Tensor, /, *, axis=None, keepdims: builtins.bool = False) -> Tensor:
    """Number of non-zero elements over ``axis``."""
    ax = axes(axis, x.ndim, "count_nonzero")
    nz = (x != 0).to(ow.int64)
    if ax == () or x.ndim == 0:
        return nz
    return ow.sum(nz, dim=list(range(x.ndim)) if ax is None else list(ax), keepdim=keepdims)


def nonzero(x: Tensor, /) -> tuple:
    """The indices of the non-zero elements, one array per axis; ``ValueError`` for a 0-d array."""
    if x.ndim == 0:
        raise ValueError("nonzero(): x must have at least one dimension")
    return tuple(ow.nonzero(x, as_tuple=True))


def searchsorted(x1: Tensor, x2: Tensor, /, *, side: str = "left", sorter: Tensor | None = None) -> Tensor:
    """Insertion indices of ``x2`` in the 1-D ``x1`` (sorted, or sorted by ``sorter``)."""
    if side not in ("left", "right"):
        raise ValueError(f"searchsorted(): side must be 'left' or 'right', got {side!r}")
    if x1.ndim != 1:
        raise ValueError("searchsorted(): x1 must be one-dimensional")
    dt = promote(x1.dtype, x2.dtype)
    if sorter is not None:
        x1 = ow.take_along_dim(x1, sorter, dim=0)
    return ow.searchsorted(x1.to(dt), x2.to(dt), side=side)


def where(condition: Tensor, x1, x2, /) -> Tensor:
    """Elements of ``x1`` where ``condition`` is true, else of ``x2`` (arrays or scalars, promoted)."""
    if isinstance(x1, Tensor) and isinstance(x2, Tensor):
        dt = promote(x1.dtype, x2.dtype)
        x1, x2 = x1.to(dt), x2.to(dt)
    elif isinstance(x1, Tensor) and _is_scalar(x2):
        x2 = ow.tensor(x2, dtype=_scalar_dtype(x2, x1.dtype), device=x1.device)
    elif isinstance(x2, Tensor) and _is_scalar(x1):
        x1 = ow.tensor(x1, dtype=_scalar_dtype(x1, x2.dtype), device=x2.device)
    else:
        raise TypeError("where(): x1 and x2 must be arrays, or one array and a Python scalar")
    return ow.where(condition, x1, x2)


def sort(x: Tensor, /, *, axis: builtins.int = -1, descending: builtins.bool = False, stable: builtins.bool = True):
    """A sorted copy of ``x`` along ``axis``."""
    return ow.sort(x, dim=axis, descending=descending, stable=stable).values


def argsort(x: Tensor, /, *, axis: builtins.int = -1, descending: builtins.bool = False, stable: builtins.bool = True):
    """The indices that sort ``x`` along ``axis`` (equal values keep their order when ``stable``)."""
    return ow.sort(x, dim=axis, descending=descending, stable=stable).indices


class UniqueAll(NamedTuple):
    """``unique_all``'s result."""

    values: Tensor
    indices: Tensor
    inverse_indices: Tensor
    counts: Tensor


class UniqueCounts(NamedTuple):
    """``unique_counts``'s result."""

    values: Tensor
    counts: Tensor


class UniqueInverse(NamedTuple):
    """``unique_inverse``'s result."""

    values: Tensor
    inverse_indices: Tensor


def _unique(x: Tensor):
    flat = x.reshape(-1)
    n = flat.shape[0]
    if flat.dtype.is_complex:  # lexicographic order: by the imaginary part, then stably by the real part
        order = ow.sort(ow.imag(flat), stable=True).indices
        order = order[ow.sort(ow.real(flat)[order], stable=True).indices]
    else:
        order = ow.sort(flat, stable=True).indices
    ordered = flat[order]
    if n == 0:
        empty = ow.zeros((0,), dtype=ow.int64, device=x.device)
        return ordered, empty, empty.reshape(x.shape), empty
    # a new group starts wherever a value differs from its predecessor (NaN != NaN: each NaN its own group)
    starts = ow.ones((n,), dtype=ow.bool, device=x.device)
    if n > 1:
        starts[1:] = ordered[1:] != ordered[:-1]
    group = ow.cumsum(starts.to(ow.int64), dim=0) - 1
    first = ow.nonzero(starts, as_tuple=True)[0]
    values = ordered[first]
    bounds = ow.cat([first, ow.tensor([n], dtype=ow.int64, device=x.device)])
    counts = bounds[1:] - bounds[:-1]
    inverse = ow.empty((n,), dtype=ow.int64, device=x.device)
    inverse[order] = group
    return values, order[first], inverse.reshape(x.shape), counts


def unique_all(x: Tensor, /) -> UniqueAll:
    """Unique values of ``x`` (flattened), their first indices, the inverse indices and the counts."""
    return UniqueAll(*_unique(x))


def unique_counts(x: Tensor, /) -> UniqueCounts:
    """Unique values of ``x`` (flattened) and how often each occurs."""
    values, _, _, counts = _unique(x)
    return UniqueCounts(values, counts)


def unique_inverse(x: Tensor, /) -> UniqueInverse:
    """Unique values of ``x`` (flattened) and the indices into them that rebuild ``x``."""
    values, _, inverse, _ = _unique(x)
    return UniqueInverse(values, inverse)


def unique_values(x: Tensor, /) -> Tensor:
    """Unique values of ``x`` (flattened)."""
    return _unique(x)[0]
