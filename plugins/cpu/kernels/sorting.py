"""Sorting over NumPy: sort, topk, kthvalue, mode, unique, unique_consecutive.

Every order comes from NumPy's stable argsort/lexsort, which already puts NaN
last (PyTorch's order) and treats -0.0 as 0.0. Equality of neighbours uses
``==``, so NaNs are all distinct, as in PyTorch.
"""

from __future__ import annotations

import numpy as np
import opweave

from ._common import native, wrap
from .reductions import computable

_EMPTY_INDEX = np.zeros(0, np.int64)


def _argsort(x: np.ndarray, axis: int, descending: bool) -> np.ndarray:
    """Stable argsort along ``axis``; descending keeps equal elements in their original order too."""
    if not descending:
        return np.argsort(x, axis=axis, kind="stable")
    p = np.flip(np.argsort(np.flip(x, axis), axis=axis, kind="stable"), axis)
    return x.shape[axis] - 1 - p


def _sorted(a, dim: int, descending: bool):
    """``(values, indices)`` of ``a`` sorted along ``dim`` (0-dim tensors as 1-element vectors)."""
    x = native(a)
    x = x.reshape(1) if x.ndim == 0 else x
    d = dim % x.ndim
    idx = _argsort(computable(a).reshape(x.shape), d, descending)
    return np.take_along_axis(x, idx, axis=d), idx, d


def _pair(values, indices, a, shape=None):
    shape = a.shape if shape is None else shape
    return wrap(values.reshape(shape), a.dtype), wrap(indices.reshape(shape).astype(np.int64), opweave.int64)


def sort(a, dim, descending, stable):
    """Stable sort (NaN largest)."""
    values, idx, _ = _sorted(a, dim, descending)
    return _pair(values, idx, a)


def topk(a, k, dim, largest, sorted):  # noqa: A002 - schema name
    """The first ``k`` of a stable sort (descending when ``largest``)."""
    values, idx, d = _sorted(a, dim, largest)
    box = (slice(None),) * d + (slice(0, k),)
    shape = list(a.shape)
    if shape:
        shape[d] = k
    return _pair(values[box].copy(), idx[box], a, shape)


def _removed(a, d) -> tuple:
    return tuple(n for i, n in enumerate(a.shape) if i != d)


def kthvalue(a, k, dim):
    """Element ``k - 1`` of a stable ascending sort."""
    values, idx, d = _sorted(a, dim, False)
    return _pair(np.take(values, k - 1, axis=d), np.take(idx, k - 1, axis=d), a, _removed(a, d))


def mode(a, dim):
    """Longest run of a stable ascending sort, the first (smallest) on ties; its last element's index."""
    values, idx, d = _sorted(a, dim, False)
    n = values.shape[d]
    s = np.moveaxis(values, d, -1).reshape(-1, n)
    p = np.moveaxis(idx, d, -1).reshape(-1, n)
    keys = np.moveaxis(np.take_along_axis(computable(a).reshape(values.shape), idx, axis=d), d, -1).reshape(-1, n)
    same = keys[:, 1:] == keys[:, :-1]
    starts = np.ones(keys.shape, bool)
    starts[:, 1:] = ~same
    ends = np.ones(keys.shape, bool)
    ends[:, :-1] = ~same
    pos = np.arange(n)
    run_start = np.maximum.accumulate(np.where(starts, pos, 0), axis=1)
    length = np.where(ends, pos - run_start + 1, 0)
    best = np.argmax(length, axis=1)[:, None]
    rows = (np.take_along_axis(s, best, 1)[:, 0], np.take_along_axis(p, best, 1)[:, 0])
    return _pair(rows[0], rows[1], a, _removed(a, d))


def _groups(keys: np.ndarray, order: np.ndarray):
    """For rows ``keys`` taken in ``order``: the mask of group starts, the inverse map and the counts."""
    n = order.size
    s = keys[order]
    starts = np.ones(n, bool)
    if n:
        same = s[1:] == s[:-1]
        starts[1:] = ~(same.all(axis=tuple(range(1, same.ndim))) if same.ndim > 1 else same)
    inverse = np.empty(n, np.int64)
    inverse[order] = np.cumsum(starts) - 1
    counts = np.diff(np.append(np.flatnonzero(starts), n)).astype(np.int64)
    return starts, inverse, counts


def _unique(a, dim, return_inverse, return_counts, sort_first: bool):
    x = native(a)
    if dim is None:
        keys = computable(a).reshape(-1)
        rows, moved, inv_shape = x.reshape(-1), None, a.shape
    else:
        d = dim % x.ndim
        rows = np.moveaxis(x, d, 0)
        keys = np.moveaxis(computable(a), d, 0).reshape(rows.shape[0], int(np.prod(rows.shape[1:])))
        moved, inv_shape = d, (rows.shape[0],)
    if not sort_first:
        order = np.arange(keys.shape[0])
    elif keys.ndim == 1:
        order = np.argsort(keys, kind="stable")
    else:
        order = np.lexsort(keys.T[::-1]) if keys.shape[1] else np.arange(keys.shape[0])
    starts, inverse, counts = _groups(keys, order)
    out = rows[order[starts]]
    out = out if moved is None else np.moveaxis(out, 0, moved)
    inverse = inverse.reshape(inv_shape) if return_inverse else _EMPTY_INDEX
    counts = counts if return_counts else _EMPTY_INDEX
    return (
        wrap(np.array(out, order="C", copy=True), a.dtype),
        wrap(inverse.copy(), opweave.int64),
        wrap(counts.copy(), opweave.int64),
    )


def unique(a, sorted, return_inverse, return_counts, dim):  # noqa: A002 - schema name
    """Sorted distinct elements/slices, with inverse and counts."""
    return _unique(a, dim, return_inverse, return_counts, True)


def unique_consecutive(a, return_inverse, return_counts, dim):
    """Collapse runs of equal consecutive elements/slices."""
    return _unique(a, dim, return_inverse, return_counts, False)


KERNELS = {
    "prims::sort": sort,
    "prims::topk": topk,
    "prims::kthvalue": kthvalue,
    "prims::mode": mode,
    "prims::unique": unique,
    "prims::unique_consecutive": unique_consecutive,
}
