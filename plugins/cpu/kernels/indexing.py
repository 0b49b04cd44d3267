"""Indexing over NumPy: gather/scatter, index_* ops, advanced indexing, masks, take/put,
searchsorted, bincount, histc, repeat_interleave.

The meta functions have checked shapes and dtypes; these kernels check the
data (index bounds, negative counts). Writes go to a fresh copy of ``a``.
Scatter-like writes are computed as flat target positions plus values, so
"last write wins" and accumulation are exact and deterministic.
"""

from __future__ import annotations

import numpy as np
import opweave

from ._common import native, wrap
from .reductions import computable, compute_dtype, fresh


def _indices(op: str, t, dim: int, size: int, wrap_negative: bool = False) -> np.ndarray:
    """``t``'s values as int64, checked against ``size`` (negative ones wrapped if allowed)."""
    i = native(t).astype(np.int64)
    lo = -size if wrap_negative else 0
    bad = (i < lo) | (i >= size)
    if bad.any():
        raise opweave.IndexOutOfBoundsError(
            f"{op}: index {int(i[bad].flat[0])} is out of bounds for dim {dim} with size {size}"
        )
    return np.where(i < 0, i + size, i) if wrap_negative else i


def _nonempty(x: np.ndarray) -> np.ndarray:
    """0-dim arrays as 1-element vectors (torch's ``ensure_nonempty``)."""
    return x.reshape(1) if x.ndim == 0 else x


def _copy_of(t) -> np.ndarray:
    """A fresh C-contiguous copy of ``t``'s elements in their compute dtype."""
    return np.array(native(t), dtype=compute_dtype(t.dtype), order="C", copy=True)


def _done(out: np.ndarray, like) -> opweave.Tensor:
    """``out`` (a fresh array) reshaped to ``like``'s shape and cast to its dtype."""
    return wrap(out.reshape(like.shape), like.dtype)


def _last_wins(flat: np.ndarray, pos: np.ndarray, values: np.ndarray) -> None:
    """``flat[pos] = values`` where the last of duplicate positions wins."""
    if pos.size:
        targets, first = np.unique(pos[::-1], return_index=True)
        flat[targets] = values[::-1][first]


def gather(a, dim, index):
    """``np.take_along_axis`` over ``a`` cut to ``index``'s sizes outside ``dim``."""
    op = "prims::gather"
    x = _nonempty(native(a))
    d = dim % x.ndim
    i = _nonempty(_indices(op, index, d, x.shape[d]))
    box = tuple(slice(None) if k == d else slice(0, n) for k, n in enumerate(i.shape))
    return wrap(np.take_along_axis(x[box], i, axis=d).reshape(index.shape), a.dtype)


def _scatter_targets(op, a, dim, index, src):
    """Flat positions in ``a`` and the ``src`` values written there, in ``index``'s C order."""
    shape = tuple(a.shape) or (1,)
    d = dim % len(shape)
    i = _nonempty(_indices(op, index, d, shape[d]))
    s = _nonempty(native(src))
    values = s[tuple(slice(0, n) for n in i.shape)].astype(compute_dtype(a.dtype))
    if i.size == 0:
        return np.zeros(0, np.int64), values.reshape(-1)
    coords = list(np.indices(i.shape, sparse=True))
    coords[d] = i
    coords = np.broadcast_arrays(*coords)
    return np.ravel_multi_index(coords, shape).reshape(-1), values.reshape(-1)


def scatter(a, dim, index, src):
    """Scatter ``src`` into a copy of ``a``; the last duplicate wins."""
    out = _copy_of(a).reshape(-1)
    pos, values = _scatter_targets("prims::scatter", a, dim, index, src)
    _last_wins(out, pos, values)
    return _done(out, a)


def scatter_add(a, dim, index, src):
    """Scatter-add ``src`` into a copy of ``a`` (16-bit floats accumulate in float32)."""
    out = _copy_of(a).reshape(-1)
    pos, values = _scatter_targets("prims::scatter_add", a, dim, index, src)
    with np.errstate(all="ignore"):
        np.add.at(out, pos, values)
    return _done(out, a)


_REDUCE_UFUNCS = {"sum": np.add, "mean": np.add, "prod": np.multiply, "amax": np.maximum, "amin": np.minimum}


def _identity(reduce: str, dtype: np.dtype):
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    high = reduce == "amin"
    if dtype.kind == "f":
        return np.inf if high else -np.inf
    info = np.iinfo(dtype)
    return info.max if high else info.min


def scatter_reduce(a, dim, index, src, reduce, include_self):
    """torch's ``scatter_reduce``: targeted elements start from themselves or the reduction's identity."""
    op = "prims::scatter_reduce"
    out = _copy_of(a).reshape(-1)
    pos, values = _scatter_targets(op, a, dim, index, src)
    if not include_self:
        out[pos] = _identity(reduce, out.dtype)
    with np.errstate(all="ignore"):
        _REDUCE_UFUNCS[reduce].at(out, pos, values)
        if reduce == "mean":
            count = np.zeros(out.shape, np.int64)
            np.add.at(count, pos, 1)
            hit = np.flatnonzero(count)
            n = count[hit] + (1 if include_self else 0)
            out[hit] = np.floor_divide(out[hit], n) if out.dtype.kind in "iu" else out[hit] / n
    return _done(out, a)


def index_select(a, dim, index):
    """``np.take`` along ``dim``."""
    x = native(a)
    if x.ndim == 0:
        _indices("prims::index_select", index, 0, 1)
        return wrap(x.copy(), a.dtype)
    d = dim % x.ndim
    i = _indices("prims::index_select", index, d, x.shape[d]).reshape(-1)
    return wrap(np.take(x, i, axis=d), a.dtype)


def _along(d: int, i: np.ndarray) -> tuple:
    return (slice(None),) * d + (i,)


def _as_dtype(value, np_dtype):
    with np.errstate(all="ignore"):
        return np.array(value).astype(np_dtype)


def index_add(a, dim, index, source, alpha):
    """``out[..., index[j], ...] += alpha * source[..., j, ...]`` with ``np.add.at``."""
    out = _nonempty(_copy_of(a))
    d = dim % out.ndim
    i = _indices("prims::index_add", index, d, out.shape[d]).reshape(-1)
    s = _nonempty(native(source)).astype(out.dtype)
    with np.errstate(all="ignore"):
        values = s * _as_dtype(alpha, out.dtype)
        np.add.at(out, _along(d, i), values)
    return _done(out, a)


def index_copy(a, dim, index, source):
    """``out[..., index[j], ...] = source[..., j, ...]``; the last duplicate ``j`` wins."""
    out = _nonempty(_copy_of(a))
    d = dim % out.ndim
    i = _indices("prims::index_copy", index, d, out.shape[d]).reshape(-1)
    if i.size:
        targets, first = np.unique(i[::-1], return_index=True)
        out[_along(d, targets)] = np.take(_nonempty(native(source)), i.size - 1 - first, axis=d)
    return _done(out, a)


def index_fill(a, dim, index, value):
    """``out[..., index, ...] = value`` (negative indices wrap)."""
    out = _nonempty(_copy_of(a))
    d = dim % out.ndim
    i = _indices("prims::index_fill", index, d, out.shape[d], wrap_negative=True).reshape(-1)
    out[_along(d, i)] = _as_dtype(value, a.dtype.numpy)
    return _done(out, a)


def _index_key(op: str, shape, indices) -> tuple:
    """The NumPy key for ``indices`` (None → whole dim), bounds-checked and wrapped."""
    key = []
    for k, t in enumerate(indices):
        key.append(slice(None) if t is None else _indices(op, t, k, shape[k], wrap_negative=True))
    return tuple(key)


def index(a, indices):
    """NumPy advanced indexing (same rules as PyTorch for integer index tensors)."""
    x = native(a)
    return wrap(fresh(x[_index_key("prims::index", x.shape, indices)], x), a.dtype)


def index_put(a, indices, values, accumulate):
    """``out[indices] = values`` (or ``+=`` with duplicates adding up) on a copy of ``a``."""
    out = _copy_of(a)
    key = _index_key("prims::index_put", out.shape, indices)
    pos = np.arange(out.size).reshape(out.shape)[key]
    v = native(values)
    v = v.reshape(v.shape[v.ndim - len(pos.shape) :] if v.ndim > pos.ndim else v.shape)
    v = np.broadcast_to(v.astype(out.dtype), pos.shape).reshape(-1)
    flat = out.reshape(-1)
    if accumulate:
        with np.errstate(all="ignore"):
            np.add.at(flat, pos.reshape(-1), v)
    else:
        _last_wins(flat, pos.reshape(-1), v)
    return _done(flat, a)


def masked_select(a, mask):
    """``a[mask]`` (a new 1-D array)."""
    x = native(a)
    return wrap(fresh(x[native(mask)], x).reshape(-1), a.dtype)


def masked_scatter(a, mask, source):
    """Masked positions of a copy of ``a`` take ``source``'s leading elements."""
    out = np.array(native(a), order="C", copy=True)
    m = native(mask)
    n = int(np.count_nonzero(m))
    src = native(source).reshape(-1)
    if src.size < n:
        raise ValueError(f"prims::masked_scatter: 'source' has {src.size} elements but the mask selects {n}")
    out[m] = src[:n]
    return wrap(out, a.dtype)


def nonzero(a):
    """``np.argwhere``: int64 ``[n, ndim]``."""
    return wrap(np.argwhere(native(a) != 0).astype(np.int64), opweave.int64)


def take(a, index):
    """Flat gather with wrapped negative indices."""
    x = native(a)
    i = _indices("prims::take", index, 0, x.size, wrap_negative=True)
    return wrap(x.reshape(-1)[i].reshape(index.shape), a.dtype)


def put(a, index, source, accumulate):
    """Flat scatter into a copy of ``a`` (``accumulate`` adds up duplicates, else the last wins)."""
    out = _copy_of(a).reshape(-1)
    i = _indices("prims::put", index, 0, out.size, wrap_negative=True).reshape(-1)
    values = native(source).reshape(-1).astype(out.dtype)
    if accumulate:
        with np.errstate(all="ignore"):
            np.add.at(out, i, values)
    else:
        _last_wins(out, i, values)
    return _done(out, a)


def searchsorted(sorted_sequence, self, right):
    """torch's binary search, vectorised: ``lo`` moves right while ``not (seq[mid] > v)`` (``>=`` on the left)."""
    seq, v = computable(sorted_sequence), computable(self)
    n = seq.shape[-1]
    lo = np.zeros(v.shape, np.int64)
    hi = np.full(v.shape, n, np.int64)
    active = lo < hi
    while active.any():
        mid = np.minimum((lo + hi) >> 1, n - 1)
        at_mid = seq[mid] if seq.ndim == 1 else np.take_along_axis(seq, mid, axis=-1)
        with np.errstate(invalid="ignore"):
            go_right = ~(at_mid > v) if right else ~(at_mid >= v)
        lo = np.where(active & go_right, mid + 1, lo)
        hi = np.where(active & ~go_right, mid, hi)
        active = lo < hi
    return wrap(lo, opweave.int64)


def bincount(self, weights, minlength):
    """``np.bincount``; float32 weights give float32, other weights float64, none int64."""
    x = native(self).astype(np.int64)
    if (x < 0).any():
        raise ValueError(f"prims::bincount: 'self' must be non-negative, found {int(x[x < 0][0])}")
    length = max(int(x.max()) + 1 if x.size else 0, minlength)
    if weights is None:
        return wrap(np.bincount(x, minlength=length).astype(np.int64), opweave.int64)
    out = opweave.float32 if weights.dtype is opweave.float32 else opweave.float64
    w = native(weights).astype(np.float64)
    return wrap(np.bincount(x, weights=w, minlength=length), out)


def histc(self, bins, min, max):  # noqa: A002 - schema names
    """torch's histc: bin ``int((x - lo) * bins / (hi - lo))``, the top edge in the last bin."""
    cd = compute_dtype(self.dtype)
    x = computable(self).reshape(-1)
    lo, hi = float(min), float(max)
    if lo == hi and x.size:
        lo, hi = float(x.min()), float(x.max())
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if not (np.isfinite(lo) and np.isfinite(hi)):
        raise ValueError(f"prims::histc: range of [{lo}, {hi}] is not finite")
    lo_c, hi_c = (_as_dtype(_as_dtype(e, self.dtype.numpy), cd) for e in (lo, hi))
    with np.errstate(invalid="ignore"):
        inside = x[(x >= lo_c) & (x <= hi_c)]
        pos = ((inside - lo_c) * cd.type(bins) / (hi_c - lo_c)).astype(np.int64)
    pos = np.minimum(pos, bins - 1)
    return wrap(np.bincount(pos, minlength=bins).astype(cd), self.dtype)


def repeat_interleave(repeats):
    """``np.repeat(arange(n), repeats)`` in ``repeats``' dtype."""
    r = native(repeats).astype(np.int64)
    if (r < 0).any():
        raise ValueError("prims::repeat_interleave: 'repeats' must be non-negative")
    return wrap(np.repeat(np.arange(r.size, dtype=np.int64), r), repeats.dtype)


KERNELS = {
    "prims::gather": gather,
    "prims::scatter": scatter,
    "prims::scatter_add": scatter_add,
    "prims::scatter_reduce": scatter_reduce,
    "prims::index_select": index_select,
    "prims::index_add": index_add,
    "prims::index_copy": index_copy,
    "prims::index_fill": index_fill,
    "prims::index": index,
    "prims::index_put": index_put,
    "prims::masked_select": masked_select,
    "prims::masked_scatter": masked_scatter,
    "prims::nonzero": nonzero,
    "prims::take": take,
    "prims::put": put,
    "prims::searchsorted": searchsorted,
    "prims::bincount": bincount,
    "prims::histc": histc,
    "prims::repeat_interleave": repeat_interleave,
}
