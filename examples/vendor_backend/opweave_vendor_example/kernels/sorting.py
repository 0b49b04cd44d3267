"""Sorting prims from NumPy's stable argsort, which already has PyTorch's order (NaN last, -0.0 == 0.0)."""

from __future__ import annotations

import numpy as np

from .._backend import kernel, opmath


def _argsort(x: np.ndarray, axis: int, descending: bool) -> np.ndarray:
    """Stable argsort; descending keeps equal elements in their original order too."""
    if not descending:
        return np.argsort(x, axis=axis, kind="stable")
    return x.shape[axis] - 1 - np.flip(np.argsort(np.flip(x, axis), axis=axis, kind="stable"), axis)


def _sorted(a: np.ndarray, dim: int, descending: bool = False):
    """``(values, indices, axis)`` of ``a`` sorted along ``dim`` (a 0-dim array as a 1-element vector)."""
    x = a.reshape(1) if a.ndim == 0 else a
    d = dim % x.ndim
    idx = _argsort(x, d, descending)
    return np.take_along_axis(x, idx, axis=d), idx, d


@kernel("sort")
def sort(a, dim, descending, stable):
    """Stable sort (NaN largest) and the indices that sort."""
    values, idx, _ = _sorted(a, dim, descending)
    return values.reshape(a.shape), idx.reshape(a.shape)


@kernel("topk")
def topk(a, k, dim, largest, sorted):  # noqa: A002 - schema name
    """The first ``k`` of a stable sort (descending when ``largest``)."""
    values, idx, d = _sorted(a, dim, largest)
    box = (slice(None),) * d + (slice(0, k),)
    shape = a.shape[:d] + (k,) + a.shape[d + 1 :] if a.ndim else ()
    return values[box].reshape(shape), idx[box].reshape(shape)


@kernel("kthvalue")
def kthvalue(a, k, dim):
    """Element ``k - 1`` of a stable ascending sort."""
    values, idx, d = _sorted(a, dim)
    return np.take(values, k - 1, axis=d), np.take(idx, k - 1, axis=d)


@kernel("mode")
def mode(a, dim):
    """The longest run of a stable ascending sort (the smallest on ties) and its last element's index."""
    values, idx, d = _sorted(a, dim)
    rows, n = np.moveaxis(values, d, -1), values.shape[d]
    s, p = rows.reshape(-1, n), np.moveaxis(idx, d, -1).reshape(-1, n)
    new_run = np.ones(s.shape, bool)
    new_run[:, 1:] = s[:, 1:] != s[:, :-1]  # NaNs are all distinct, as torch
    pos = np.arange(n)
    start = np.maximum.accumulate(np.where(new_run, pos, 0), axis=1)
    ends = np.append(new_run[:, 1:], np.ones((s.shape[0], 1), bool), axis=1)
    best = np.argmax(np.where(ends, pos - start + 1, 0), axis=1)[:, None]
    pick = (np.take_along_axis(s, best, 1)[:, 0], np.take_along_axis(p, best, 1)[:, 0])
    return tuple(x.reshape(rows.shape[:-1]) for x in pick)


def _unique(a, return_inverse, return_counts, dim, sort_first):
    """Distinct elements (or slices along ``dim``) with inverse and counts; runs only when not ``sort_first``."""
    rows = a.reshape(-1) if dim is None else np.moveaxis(a, dim % a.ndim, 0)
    keys = opmath(rows).reshape(rows.shape[0], int(np.prod(rows.shape[1:])))
    if not sort_first or keys.shape[1] == 0:
        order = np.arange(keys.shape[0])
    else:
        order = np.lexsort(keys.T[::-1])  # lexicographic on the flattened slices (stable)
    s = keys[order]
    starts = np.ones(len(order), bool)
    starts[1:] = (s[1:] != s[:-1]).any(axis=1)
    inverse = np.empty(len(order), np.int64)
    inverse[order] = np.cumsum(starts) - 1
    counts = np.diff(np.append(np.flatnonzero(starts), len(order)))
    out = rows[order[starts]]
    out = out if dim is None else np.moveaxis(out, 0, dim % a.ndim)
    none = np.zeros(0, np.int64)
    inverse = inverse.reshape(a.shape if dim is None else (-1,)) if return_inverse else none
    return np.ascontiguousarray(out), inverse, counts.astype(np.int64) if return_counts else none


@kernel("unique", widen=False)
def unique(a, sorted, return_inverse, return_counts, dim):  # noqa: A002 - schema name
    """Sorted distinct elements/slices (NaNs all distinct), with inverse and counts."""
    return _unique(a, return_inverse, return_counts, dim, True)


@kernel("unique_consecutive", widen=False)
def unique_consecutive(a, return_inverse, return_counts, dim):
    """Runs of equal consecutive elements/slices collapsed, in order."""
    return _unique(a, return_inverse, return_counts, dim, False)
