"""Indexing prims: gathers read with NumPy indexing; scatters write a copy of ``a`` at flat positions.

The meta functions have checked shapes and dtypes; these kernels check the
data (index bounds, counts). Scatter-like writes go through flat target
positions, so "the last write wins" and accumulation are exact and
deterministic.
"""

from __future__ import annotations

import numpy as np
import opweave

from .._backend import kernel, opmath


def checked(op: str, i: np.ndarray, dim: int, size: int, negative: bool = False) -> np.ndarray:
    """Index values as int64, bounds-checked against ``size`` (negative ones wrapped when allowed)."""
    i = i.astype(np.int64)
    bad = (i < (-size if negative else 0)) | (i >= size)
    if bad.any():
        raise opweave.IndexOutOfBoundsError(
            f"prims::{op}: index {int(i[bad].flat[0])} is out of bounds for dim {dim} with size {size}"
        )
    return np.where(i < 0, i + size, i)


def vec(x: np.ndarray) -> np.ndarray:
    """0-dim arrays as 1-element vectors (torch's ``ensure_nonempty``)."""
    return x.reshape(1) if x.ndim == 0 else x


def along(d: int, i) -> tuple:
    """The NumPy key selecting positions ``i`` of axis ``d``."""
    return (slice(None),) * d + (i,)


def last_wins(flat: np.ndarray, pos: np.ndarray, values: np.ndarray) -> np.ndarray:
    """``flat[pos] = values`` where, among duplicate positions, the last write wins."""
    if pos.size:
        targets, first = np.unique(pos[::-1], return_index=True)
        flat[targets] = values[::-1][first]
    return flat


def _scatter_targets(op, a, dim, index, src):
    """Flat positions in ``a`` and the ``src`` values written there, in ``index``'s C order."""
    shape = a.shape or (1,)
    d = dim % len(shape)
    i = vec(checked(op, index, d, shape[d]))
    values = vec(src)[tuple(slice(0, n) for n in i.shape)].reshape(-1)
    if i.size == 0:
        return np.zeros(0, np.int64), values
    coords = list(np.indices(i.shape, sparse=True))
    coords[d] = i
    return np.ravel_multi_index(np.broadcast_arrays(*coords), shape).reshape(-1), values


def _scatter(op, write):
    def fn(a, dim, index, src, *rest):
        out = np.array(a, order="C").reshape(-1)
        write(out, *_scatter_targets(op, a, dim, index, src), *rest)
        return out.reshape(a.shape)

    return fn


def _reduce_into(out, pos, values, reduce, include_self):
    """torch's ``scatter_reduce``: targets start from themselves or the reduction's identity."""
    ufunc = {"sum": np.add, "mean": np.add, "prod": np.multiply, "amax": np.maximum, "amin": np.minimum}[reduce]
    if not include_self:
        info = np.finfo(out.dtype) if out.dtype.kind in "fc" else np.iinfo(out.dtype)
        lowest, highest = (-np.inf, np.inf) if out.dtype.kind == "f" else (info.min, info.max)
        out[pos] = {"sum": 0, "mean": 0, "prod": 1, "amax": lowest, "amin": highest}[reduce]
    ufunc.at(out, pos, values)
    if reduce == "mean":
        count = np.bincount(pos, minlength=out.size)
        hit = np.flatnonzero(count)
        n = count[hit] + include_self
        out[hit] = out[hit] // n if out.dtype.kind in "iu" else out[hit] / n


kernel("scatter")(_scatter("scatter", last_wins))
kernel("scatter_add")(_scatter("scatter_add", np.add.at))
kernel("scatter_reduce")(_scatter("scatter_reduce", _reduce_into))


@kernel("gather")
def gather(a, dim, index):
    """``take_along_axis`` over ``a`` cut to ``index``'s sizes outside ``dim``."""
    x = vec(a)
    d = dim % x.ndim
    i = vec(checked("gather", index, d, x.shape[d]))
    box = tuple(slice(None) if k == d else slice(0, n) for k, n in enumerate(i.shape))
    return np.take_along_axis(x[box], i, axis=d).reshape(index.shape)


@kernel("index_select")
def index_select(a, dim, index):
    """``np.take`` along ``dim``."""
    if a.ndim == 0:
        checked("index_select", index, 0, 1)
        return a
    d = dim % a.ndim
    return np.take(a, checked("index_select", index, d, a.shape[d]).reshape(-1), axis=d)


def _index_write(op, negative=False):
    """A kernel writing along ``dim`` of a copy of ``a`` at positions ``index``: ``write(out, key, i, arg)``."""

    def register(write):
        def fn(a, dim, index, arg, *rest):
            out = vec(np.array(a, order="C"))
            d = dim % out.ndim
            i = checked(op, index, d, out.shape[d], negative).reshape(-1)
            write(out, d, i, arg, *rest)
            return out.reshape(a.shape)

        fn.__doc__ = write.__doc__
        kernel(op)(fn)
        return write

    return register


@_index_write("index_add")
def _index_add(out, d, i, source, alpha):
    """``out[..., i[j], ...] += alpha * source[..., j, ...]`` (duplicates accumulate)."""
    np.add.at(out, along(d, i), vec(source).astype(out.dtype) * np.asarray(alpha).astype(out.dtype))


@_index_write("index_copy")
def _index_copy(out, d, i, source):
    """``out[..., i[j], ...] = source[..., j, ...]``; the last duplicate wins."""
    if i.size:
        targets, first = np.unique(i[::-1], return_index=True)
        out[along(d, targets)] = np.take(vec(source), i.size - 1 - first, axis=d)


@_index_write("index_fill", negative=True)
def _index_fill(out, d, i, value):
    """``out[..., i, ...] = value`` (negative indices wrap)."""
    out[along(d, i)] = np.asarray(value).astype(out.dtype)


def _key(op: str, shape, indices) -> tuple:
    """The NumPy key of ``indices`` (None: the whole dim), bounds-checked and wrapped."""
    return tuple(slice(None) if t is None else checked(op, t, k, shape[k], True) for k, t in enumerate(indices))


@kernel("index")
def index(a, indices):
    """NumPy advanced indexing (PyTorch's rules for integer index tensors)."""
    return a[_key("index", a.shape, indices)]


@kernel("index_put")
def index_put(a, indices, values, accumulate):
    """``out[indices] = values`` (``+=`` with duplicates adding up when ``accumulate``) on a copy of ``a``."""
    out = np.array(a, order="C")
    pos = np.arange(out.size).reshape(out.shape)[_key("index_put", out.shape, indices)]
    v = values.reshape(values.shape[max(values.ndim - pos.ndim, 0) :]) if values.ndim > pos.ndim else values
    v = np.broadcast_to(v.astype(out.dtype), pos.shape).reshape(-1)
    flat = out.reshape(-1)
    (np.add.at if accumulate else last_wins)(flat, pos.reshape(-1), v)
    return out


@kernel("masked_select", widen=False)
def masked_select(a, mask):
    """``a[mask]`` as a 1-D tensor (its length depends on the data)."""
    return a[mask]


@kernel("masked_scatter")
def masked_scatter(a, mask, source):
    """Masked positions of a copy of ``a`` take ``source``'s leading elements."""
    out, n, src = np.array(a), int(np.count_nonzero(mask)), source.reshape(-1)
    if src.size < n:
        raise ValueError(f"prims::masked_scatter: 'source' has {src.size} elements but the mask selects {n}")
    out[mask] = src[:n]
    return out


@kernel("nonzero")
def nonzero(a):
    """int64 coordinates ``[n, ndim]`` of the nonzero elements (NaN is nonzero)."""
    return np.argwhere(a != 0).astype(np.int64)


@kernel("take")
def take(a, index):
    """Flat gather; negative indices wrap."""
    return a.reshape(-1)[checked("take", index, 0, a.size, True)].reshape(index.shape)


@kernel("put")
def put(a, index, source, accumulate):
    """Flat scatter into a copy of ``a`` (``accumulate`` adds duplicates up, else the last wins)."""
    flat = np.array(a, order="C").reshape(-1)
    i, v = checked("put", index, 0, flat.size, True).reshape(-1), source.reshape(-1).astype(flat.dtype)
    (np.add.at if accumulate else last_wins)(flat, i, v)
    return flat.reshape(a.shape)


@kernel("searchsorted")
def searchsorted(seq, values, right):
    """torch's binary search, vectorised: move right while ``not (seq[mid] > v)`` (``>=`` for left)."""
    n = seq.shape[-1]
    lo, hi = np.zeros(values.shape, np.int64), np.full(values.shape, n, np.int64)
    while (active := lo < hi).any():
        mid = np.minimum((lo + hi) >> 1, n - 1)
        at = seq[mid] if seq.ndim == 1 else np.take_along_axis(seq, mid, axis=-1)
        go_right = ~(at > values) if right else ~(at >= values)
        lo, hi = np.where(active & go_right, mid + 1, lo), np.where(active & ~go_right, mid, hi)
    return lo


@kernel("bincount", widen=False)
def bincount(x, weights, minlength):
    """Counts (int64), or sums of ``weights``: float32 for float32 weights, else float64."""
    x = x.astype(np.int64)
    if (x < 0).any():
        raise ValueError(f"prims::bincount: 'self' must be non-negative, found {int(x[x < 0][0])}")
    length = max(int(x.max()) + 1 if x.size else 0, minlength)
    if weights is None:
        return np.bincount(x, minlength=length).astype(np.int64)
    sums = np.bincount(x, weights=weights.astype(np.float64), minlength=length)
    return sums.astype(np.float32 if weights.dtype == np.float32 else np.float64)


@kernel("histc", widen=False)
def histc(x, bins, min, max):  # noqa: A002 - schema names
    """torch's histc: bin ``int((x - lo) * bins / (hi - lo))``, the top edge in the last bin."""
    lo, hi = float(min), float(max)
    if lo == hi and x.size:
        lo, hi = float(np.min(opmath(x))), float(np.max(opmath(x)))
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if not np.isfinite([lo, hi]).all():
        raise ValueError(f"prims::histc: range of [{lo}, {hi}] is not finite")
    y = opmath(x).reshape(-1)
    lo, hi = (opmath(np.asarray(e).astype(x.dtype)) for e in (lo, hi))  # the edges in x's dtype, as torch
    inside = y[(y >= lo) & (y <= hi)]
    pos = np.minimum(((inside - lo) * y.dtype.type(bins) / (hi - lo)).astype(np.int64), bins - 1)
    return np.bincount(pos, minlength=bins)


@kernel("repeat_interleave", widen=False)
def repeat_interleave(repeats):
    """``[0] * repeats[0] + [1] * repeats[1] + ...`` in ``repeats``' dtype."""
    r = repeats.astype(np.int64)
    if (r < 0).any():
        raise ValueError("prims::repeat_interleave: 'repeats' must be non-negative")
    return np.repeat(np.arange(r.size), r).astype(repeats.dtype)
