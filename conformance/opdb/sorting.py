"""Sorting and selection ops and prims: sort/argsort/msort, topk, kthvalue, median/nanmedian, mode, unique*,
and the elementwise ``max.other``/``min.other``.

Oracles sort with ``np.lexsort`` (stable, NaN largest, as the prims promise).
Indices are compared where the result defines them: always for stable sorts,
``topk`` (equal elements keep their order), ``mode`` (the last occurrence) and
``unique``'s inverse and counts; for an unstable sort, ``kthvalue`` and the
medians they are compared only when the sorted slice has no ties (else the
oracle leaves them out). The first cases use distinct values (a shuffled range,
exact in every dtype), later ones repeated values and NaN.
"""

from __future__ import annotations

import numpy as np
import opweave as ow

from . import register
from ._cases import CPU, TA, Gen, K, S, T, entry
from ._core import BOOL, REAL, Arr

ORDERED = BOOL + REAL


def _distinct(shape, layout="contiguous"):
    """Distinct values (a shuffled range, exactly representable in every real dtype); bool: random."""

    def fn(rng, dtype):
        n = int(np.prod(shape, dtype=np.int64))
        if dtype is ow.bool:
            return Arr(rng.random(shape) < 0.5, dtype, layout)
        v = rng.permutation(n).astype(np.float64)
        if dtype.is_floating_point:
            v = (v - n // 2) * 0.5
        elif np.iinfo(dtype.numpy).min < 0:
            v = v - n // 2
        return Arr(v.reshape(shape), dtype, layout)

    return Gen(fn)


def _wide(x):
    """Floats as float64; integers and bool as they are (int64 beyond 2**53 stays exact)."""
    return x.astype(np.int64) if x.dtype.kind == "b" else (x if x.dtype.kind in "iu" else x.astype(np.float64))


def _key(x, descending):
    if x.dtype.kind in "biu":
        v = _wide(x)
        return (~v,) if descending else (v,)  # ~v = -v - 1: decreasing, and no overflow at the minimum
    v = x.astype(np.float64)
    nan = np.isnan(v)
    v = np.where(nan, 0.0, v)
    return (-v, ~nan) if descending else (v, nan)


def _order(x, axis, descending=False):
    """Stable sorting indices along ``axis`` (NaN largest)."""
    moved = np.moveaxis(x, axis, -1)
    flat = moved.reshape(int(np.prod(moved.shape[:-1], dtype=np.int64)), moved.shape[-1])
    rows = [np.lexsort(_key(r, descending)) for r in flat]
    idx = np.array(rows, dtype=np.int64).reshape(moved.shape)
    return np.moveaxis(idx, -1, axis)


def _has_ties(x, axis) -> bool:
    moved = np.moveaxis(_wide(x), axis, -1)
    s = np.sort(moved, axis=-1)
    return bool((s[..., 1:] == s[..., :-1]).any() or (np.isnan(s).sum(-1) > 1).any())


def _sort(x, dim=-1, descending=False, stable=False):
    if x.ndim == 0:
        return x.copy(), np.zeros((), np.int64)
    idx = _order(x, dim % x.ndim, descending)
    values = np.take_along_axis(x, idx, dim % x.ndim)
    return values, idx if stable or not _has_ties(x, dim % x.ndim) else None


def _sort_stable(x, *, stable=False, dim=-1, descending=False):
    return _sort(x, dim, descending, bool(stable))


def _argsort(x, dim=-1, descending=False, stable=False):
    return _sort(x, dim, descending, stable)[1]


def _topk(x, k, dim=-1, largest=True, sorted=True):  # noqa: A002 - schema name
    if x.ndim == 0:
        return x.copy(), np.zeros((), np.int64)
    d = dim % x.ndim
    idx = np.take(_order(x, d, largest), range(k), axis=d)
    return np.take_along_axis(x, idx, d), idx


def _kthvalue(x, k, dim=-1, keepdim=False):
    if x.ndim == 0:
        return x.copy(), np.zeros((), np.int64)
    d = dim % x.ndim
    idx = np.take(_order(x, d), [k - 1], axis=d)
    values = np.take_along_axis(x, idx, d)
    if not keepdim:
        values, idx = values.squeeze(d), idx.squeeze(d)
    return values, idx if not _has_ties(x, d) else None


def _median_all(x, ignore_nan=False):
    v = x.reshape(-1)
    if ignore_nan and v.dtype.kind in "fc":
        v = v[~np.isnan(v)]
    if v.size == 0:
        return np.asarray(np.nan)
    if not ignore_nan and v.dtype.kind == "f" and np.isnan(v).any():
        return np.asarray(np.nan)
    return np.sort(v)[(v.size - 1) // 2]


def _median_dim(ignore_nan=False):
    def oracle(x, dim, keepdim=False):
        if x.ndim == 0:
            return x.copy(), np.zeros((), np.int64)
        d = dim % x.ndim
        moved = np.moveaxis(x, d, -1)
        values = np.empty(moved.shape[:-1], x.dtype)
        for pos in np.ndindex(*moved.shape[:-1]):
            values[pos] = _median_all(moved[pos], ignore_nan)
        if keepdim:
            values = np.expand_dims(values, d)
        if _has_ties(x, d) or (x.dtype.kind == "f" and np.isnan(x).any()):
            return values, None  # which of the equal elements (or NaNs) is reported is unspecified
        return values, _median_index(x, d, keepdim)

    return oracle


def _median_index(x, d, keepdim):
    """The position of the lower median along ``d`` (a slice without ties)."""
    idx = np.take(_order(x, d), [(x.shape[d] - 1) // 2], axis=d)
    return idx if keepdim else idx.squeeze(d)


def _mode(x, dim=-1, keepdim=False):
    if x.ndim == 0:
        return x.copy(), np.zeros((), np.int64)
    d = dim % x.ndim
    moved = np.moveaxis(x, d, -1)
    values = np.empty(moved.shape[:-1], x.dtype)
    index = np.empty(moved.shape[:-1], np.int64)
    for pos in np.ndindex(*moved.shape[:-1]):
        row = moved[pos]
        wide = _wide(row)
        finite = ~np.isnan(wide) if wide.dtype.kind == "f" else np.ones(wide.shape, bool)
        uniq, counts = np.unique(wide[finite], return_counts=True)
        best = uniq[counts == counts.max()].min() if uniq.size else np.nan  # NaNs are distinct: count 1
        hits = np.flatnonzero(wide == best) if not np.isnan(best) else np.flatnonzero(~finite)
        values[pos] = row[hits[-1]]
        index[pos] = hits[-1]
    if keepdim:
        values, index = np.expand_dims(values, d), np.expand_dims(index, d)
    return values, index


def _unique_flat(x, return_inverse=True, return_counts=True, consecutive=False):
    flat = x.reshape(-1)
    if consecutive:
        starts = np.flatnonzero(np.r_[True, flat[1:] != flat[:-1]]) if flat.size else np.zeros(0, np.int64)
        values = flat[starts]
        counts = np.diff(np.r_[starts, flat.size])
        inverse = np.repeat(np.arange(len(starts)), counts).reshape(x.shape)
    else:
        values, inverse, counts = np.unique(flat, return_inverse=True, return_counts=True)
        inverse = inverse.reshape(x.shape)
    inverse = inverse.astype(np.int64) if return_inverse else np.zeros(0, np.int64)
    counts = counts.astype(np.int64) if return_counts else np.zeros(0, np.int64)
    return values, inverse, counts


def _unique_slices(x, dim, return_inverse=True, return_counts=True, consecutive=False):
    moved = np.moveaxis(x, dim, 0)
    rows = moved.reshape(moved.shape[0], -1)
    if consecutive:
        keep = [0] + [i for i in range(1, len(rows)) if not np.array_equal(rows[i], rows[i - 1])] if len(rows) else []
        values = moved[keep]
        counts = np.diff(np.r_[keep, len(rows)]).astype(np.int64)
        inverse = np.repeat(np.arange(len(keep)), counts)
    else:
        keys = [tuple(r.tolist()) for r in rows]
        order = sorted(set(keys))
        pos = {k: i for i, k in enumerate(order)}
        values = np.array([moved[keys.index(k)] for k in order]).reshape((len(order),) + moved.shape[1:])
        inverse = np.array([pos[k] for k in keys], np.int64)
        counts = np.bincount(inverse, minlength=len(order)).astype(np.int64)
    values = np.moveaxis(values.astype(x.dtype), 0, dim)
    inverse = inverse.astype(np.int64) if return_inverse else np.zeros(0, np.int64)
    counts = counts if return_counts else np.zeros(0, np.int64)
    return values, inverse, counts


def _prim_unique(consecutive):
    def oracle(x, *args):
        if consecutive:
            return_inverse, return_counts, dim = args
        else:
            _sorted, return_inverse, return_counts, dim = args
        if dim is None:
            return _unique_flat(x, return_inverse, return_counts, consecutive)
        return _unique_slices(x, dim % x.ndim, return_inverse, return_counts, consecutive)

    return oracle


def _maximum(fn):
    def oracle(a, b):
        with np.errstate(all="ignore"):
            out = fn(a, b)
        return out

    return oracle


# -- cases ---------------------------------------------------------------------------------------

D34T, D234S = _distinct((3, 4), T), _distinct((2, 3, 4), S)
REP = TA((3, 5), domain="small")
NANS = TA((4, 5), specials=True)


def _lines():
    sort = [K(D34T), K(D234S, 1, True), K(REP, 0), K(NANS, -1, True), K(TA(())), K(TA((0, 3)), 0)]
    stable = [K(D34T, stable=True), K(D234S, stable=False, dim=1, descending=True), K(REP, stable=True, dim=0)]
    stable += [K(NANS, stable=True, descending=True), K(TA(()), stable=None), K(TA((0, 3)), stable=True)]
    prim_sort = [K(D34T, 1, False, False), K(D234S, 0, True, True), K(REP, 1, False, True), K(NANS, 1, True, True)]
    prim_sort += [K(TA((0, 3)), 0, False, False)]
    topk = [
        K(D34T, 2),
        K(D234S, 3, 1, False),
        K(REP, 2, 0),
        K(NANS, 5, -1, True),
        K(TA(()), 1),
        K(REP, 1, sorted=False),
    ]
    prim_topk = [K(D34T, 2, 1, True, True), K(D234S, 3, 1, False, True), K(REP, 2, 0, True, True)]
    prim_topk += [K(NANS, 0, 1, False, True), K(NANS, 3, 1, False, False)]
    kth = [K(D34T, 2), K(D234S, 1, 0, True), K(REP, 3, 1), K(NANS, 4), K(TA(()), 1)]
    prim_kth = [K(D34T, 2, 1), K(D234S, 1, 0), K(REP, 3, 1), K(NANS, 4, 1)]
    med_dim = [K(D34T, 1), K(D234S, 0, True), K(REP, 1), K(NANS, 0), K(TA(()), 0)]
    med_all = [K(D34T), K(D234S), K(REP), K(NANS), K(TA(()))]
    mode = [K(TA((3, 6), T, domain="small")), K(TA((2, 5, 4), S, domain="small"), 1, True), K(D34T, 0), K(NANS)]
    mode += [K(TA(()))]
    prim_mode = [K(TA((3, 6), T, domain="small"), 1), K(TA((2, 5, 4), S, domain="small"), 1), K(D34T, 0), K(NANS, 1)]
    uniq = TA((3, 6), T, domain="small")
    unique = [K(uniq), K(TA((2, 5), S, domain="small"), False, True), K(TA(())), K(TA((0, 3)))]
    unique2 = [K(uniq, True, True, True), K(TA((2, 5), S, domain="small"), False, False, True), K(TA(()))]
    unique2 += [K(TA((0,)), True, True, False)]
    consec = [K(uniq, True, True), K(TA((7,), S, domain="small"), False, True), K(uniq, True, True, 1)]
    consec += [K(TA((4, 2), domain="small"), True, False, 0), K(TA((0,)))]
    unique_dim = [K(TA((4, 3), T, domain="small"), 0, True, True, True), K(TA((2, 5), domain="small"), 1)]
    unique_dim += [K(TA((2, 3, 2), S, domain="small"), 2, False, True, False)]
    prim_unique = [K(uniq, True, True, True, None), K(TA((4, 3), domain="small"), False, True, True, 0)]
    prim_unique += [K(TA((0,)), True, False, True, None)]
    prim_consec = [
        K(uniq, True, True, None),
        K(TA((4, 2), domain="small"), True, True, 0),
        K(TA((0,)), True, True, None),
    ]
    minmax = [K(TA((3, 4), T, specials=True), TA((3, 4), S)), K(TA((3, 1)), TA((1, 4))), K(TA(()), TA((), CPU))]
    minmax += [K(TA((0, 3)), TA((3,)))]
    return [
        entry("sort", _sort, sort, REAL),
        entry("sort.stable", _sort_stable, stable, REAL),
        entry("prims::sort", lambda x, d, desc, st: _sort(x, d, desc, st), prim_sort, REAL),
        entry("argsort", _argsort, sort, REAL),
        entry(
            "argsort.stable",
            lambda x, *, stable, dim=-1, descending=False: _argsort(x, dim, descending, stable),
            stable[:4],
            REAL,
        ),
        entry("msort", lambda x: _sort(x, 0)[0], [K(D34T), K(D234S), K(NANS), K(TA(()))], REAL),
        entry("topk", _topk, topk, REAL),
        entry("prims::topk", _topk, prim_topk, REAL),
        entry("kthvalue", _kthvalue, kth, REAL),
        entry("prims::kthvalue", _kthvalue, prim_kth, REAL),
        entry("median", lambda x: _median_all(x), med_all, REAL),
        entry("nanmedian", lambda x: _median_all(x, True), med_all, REAL),
        entry("median.dim", _median_dim(), med_dim, REAL),
        entry("nanmedian.dim", _median_dim(True), med_dim, REAL),
        entry("mode", _mode, mode, ORDERED),
        entry("prims::mode", _mode, prim_mode, ORDERED),
        entry("_unique", lambda x, s=True, inv=False: _unique_flat(x, inv, False)[:2], unique, ORDERED),
        entry("_unique2", lambda x, s=True, i=False, c=False: _unique_flat(x, i, c), unique2, ORDERED),
        entry(
            "unique_consecutive",
            lambda x, i=False, c=False, dim=None: _prim_unique(True)(x, i, c, dim),
            consec,
            ORDERED,
        ),
        entry(
            "unique_dim",
            lambda x, d, s=True, i=False, c=False: _unique_slices(x, d % x.ndim, i, c),
            unique_dim,
            ORDERED,
        ),
        entry("prims::unique", _prim_unique(False), prim_unique, ORDERED),
        entry("prims::unique_consecutive", _prim_unique(True), prim_consec, ORDERED),
        entry("max.other", _maximum(np.maximum), minmax, ORDERED),
        entry("min.other", _maximum(np.minimum), minmax, ORDERED),
    ]


register(*_lines())
