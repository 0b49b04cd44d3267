"""Indexing ops and prims: gather/scatter, ``index_*``, advanced indexing, masks, take/put, nonzero,
searchsorted/bucketize, bincount/histc, and the tensor-argument overloads of shape ops.

Oracles are NumPy indexing (``np.add.at`` for accumulation, fancy indexing for
reads and writes). Where PyTorch leaves the result of duplicate indices
unspecified (scatter, index_copy, put and index_put without accumulation), the
samples use indices without repeats along the written dim, so every backend
has one right answer. Index tensors are int64 with some int32 cases; the first
cases use transposed and strided inputs. The prims promise their meta function's
contiguous output strides, except ``gather``, ``take`` and ``index``: the CPU reference
backend returns NumPy's layout for them when the index or input is not contiguous.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import opweave as ow

from . import register
from ._cases import CPU, TA, Dyn, Gen, Idx, K, S, T, Val, entry
from ._core import ALL, FLOAT, NUMERIC, REAL, Arr
from .reductions import TOL

I32 = ow.int32
NOT_BOOL = NUMERIC


def _line_unique(shape, dim, size, dtype=ow.int64):
    """Indices of ``shape`` with distinct values in ``[0, size)`` along ``dim`` (scatter without duplicates)."""

    def fn(rng, _dtype):
        moved = list(shape)
        n = moved.pop(dim)
        lines = int(np.prod(moved, dtype=np.int64))
        values = np.stack([rng.permutation(size)[:n] for _ in range(lines)]) if lines else np.zeros((0, n))
        values = np.moveaxis(values.reshape(tuple(moved) + (n,)), -1, dim)
        return Arr(values.astype(dtype.numpy), dtype)

    return Gen(fn)


def _i64(cases):
    """The cases with int32 index tensors made int64 (canonical ops that, like PyTorch's, take int64 only)."""

    def fix(v):
        if isinstance(v, (Idx, Val)) and v.dtype is I32:
            return replace(v, dtype=ow.int64)
        if isinstance(v, list):
            return [fix(x) for x in v]
        return v

    return [(tuple(fix(a) for a in args), {k: fix(x) for k, x in kw.items()}) for args, kw in cases]


def _grid(index, dim):
    """The index tuple that addresses ``out[..., index[i, j, k], ...]`` along ``dim`` for every element of index."""
    idx = list(np.indices(index.shape, sparse=True))
    idx[dim] = index
    return tuple(idx)


# -- gather / scatter ----------------------------------------------------------------------------


def _gather(x, dim, index, sparse_grad=False):
    if x.ndim == 0:
        return np.broadcast_to(x, index.shape).copy()
    return x[_grid(index, dim % x.ndim)]


def _scatter_into(x, dim, index, src, how):
    out = x.copy()
    if x.ndim == 0:
        out, index = out.reshape(1), index.reshape(1)
        src = np.asarray(src).reshape(-1)[:1] if np.ndim(src) else src
        dim = 0
    d = dim % out.ndim
    grid = _grid(index, d)
    values = np.broadcast_to(src, index.shape) if np.ndim(src) == 0 else src[tuple(slice(0, n) for n in index.shape)]
    with np.errstate(all="ignore"):
        if how == "set":
            out[grid] = values
        elif how in ("add", "sum"):
            np.add.at(out, grid, values.astype(out.dtype))
        elif how in ("multiply", "prod"):
            np.multiply.at(out, grid, values.astype(out.dtype))
    return out.reshape(x.shape)


def _scatter(x, dim, index, src=None, value=None, reduce=None):
    src = value if src is None else src
    return _scatter_into(x, dim, index, src, reduce or "set")


def _scatter_value(x, dim, index, value, reduce=None):
    return _scatter_into(x, dim, index, value, reduce or "set")


def _scatter_reduce(x, dim, index, src, reduce, include_self=True):
    """PyTorch's scatter_reduce: each targeted element reduces its sources (and itself with include_self)."""
    out = x.copy()
    flat_x = x.reshape(1) if x.ndim == 0 else x
    index = index.reshape(1) if x.ndim == 0 else index
    src = src.reshape(-1)[:1] if x.ndim == 0 else src
    d = dim % flat_x.ndim
    groups: dict = {}
    for pos in np.ndindex(*index.shape):
        target = list(pos)
        target[d] = int(index[pos])
        groups.setdefault(tuple(target), []).append(src[pos])
    wide = np.float64 if x.dtype.kind == "f" else (np.complex128 if x.dtype.kind == "c" else np.int64)
    res = flat_x.astype(wide)
    for target, vals in groups.items():
        vals = list(vals) + ([flat_x[target]] if include_self else [])
        arr_ = np.array(vals, dtype=wide)
        with np.errstate(all="ignore"):
            if reduce == "sum":
                v = arr_.sum()
            elif reduce == "prod":
                v = arr_.prod()
            elif reduce == "mean":
                v = arr_.sum() // len(vals) if x.dtype.kind in "biu" else arr_.sum() / len(vals)
            elif reduce == "amax":
                v = np.nan if np.isnan(arr_.astype(np.float64)).any() else arr_.max()
            else:
                v = np.nan if np.isnan(arr_.astype(np.float64)).any() else arr_.min()
        res[target] = v
    with np.errstate(all="ignore"):
        return res.astype(x.dtype).reshape(out.shape)


def _index_select(x, dim, index):
    if x.ndim == 0:
        return x.copy()
    return np.take(x, index.reshape(-1), axis=dim % x.ndim)


def _along(x, dim, index, source, how, alpha=1):
    out = x.copy()
    if x.ndim == 0:
        out, source = out.reshape(1), np.asarray(source).reshape(1) if np.ndim(source) == 0 else source.reshape(1)
        dim = 0
    d = dim % out.ndim
    moved = np.moveaxis(out, d, 0)
    index = index.reshape(-1)
    with np.errstate(all="ignore"):
        if how == "add":
            src = np.moveaxis(np.asarray(source).reshape(out.shape[:d] + (index.size,) + out.shape[d + 1 :]), d, 0)
            if out.dtype.kind == "b":
                np.logical_or.at(moved, index, src.astype(bool) & bool(alpha))
            else:
                np.add.at(moved, index, (src * alpha).astype(out.dtype))
        elif how == "copy":
            moved[index] = np.moveaxis(source.reshape(out.shape[:d] + (index.size,) + out.shape[d + 1 :]), d, 0)
        else:
            moved[index] = source
    return out.reshape(x.shape)


def _index_add(x, dim, index, source, alpha=1):
    return _along(x, dim, index, source, "add", alpha)


def _index_copy(x, dim, index, source):
    return _along(x, dim, index, source, "copy")


def _index_fill(x, dim, index, value):
    return _along(x, dim, index, np.asarray(value).astype(x.dtype), "fill")


# -- advanced indexing, masks --------------------------------------------------------------------


def _key(indices):
    return tuple(slice(None) if i is None else i for i in indices)


def _index(x, indices):
    return np.asarray(x[_key(indices)])


def _index_put(x, indices, values, accumulate=False):
    out = x.copy()
    key = _key(indices)
    target = out[key].shape
    v = np.broadcast_to(values.reshape(values.shape[-len(target) :] if target else ()), target)
    if accumulate:
        if out.dtype.kind == "b":
            np.logical_or.at(out, key, v)
        else:
            np.add.at(out, key, v)
    else:
        out[key] = v
    return out


def _masked_select(x, mask):
    x, mask = np.broadcast_arrays(x, mask)
    return x[mask]


def _masked_scatter(x, mask, source):
    shape = np.broadcast_shapes(x.shape, mask.shape)
    out = np.broadcast_to(x, shape).copy()
    m = np.broadcast_to(mask, shape)
    out[m] = source.reshape(-1)[: int(m.sum())]
    return out


def _nonzero(x):
    return np.argwhere(x != 0).astype(np.int64)  # NaN != 0: NaN is nonzero


def _nonzero_static(x, size, fill_value=-1):
    found = np.argwhere(x != 0).astype(np.int64)[:size]
    pad = np.full((size - len(found), x.ndim), fill_value, np.int64)
    return np.concatenate([found, pad])


def _take(x, index):
    return x.reshape(-1)[index]


def _take_along_dim(x, indices, dim=None):
    if dim is None:
        return x.reshape(-1)[indices.reshape(-1)]
    return np.take_along_axis(x, indices, axis=dim)


def _put(x, index, source, accumulate=False):
    out = x.copy().reshape(-1)
    index = index.reshape(-1) % max(out.size, 1)
    if accumulate:
        if out.dtype.kind == "b":
            np.logical_or.at(out, index, source.reshape(-1))
        else:
            np.add.at(out, index, source.reshape(-1))
    else:
        out[index] = source.reshape(-1)
    return out.reshape(x.shape)


# -- searching and counting ------------------------------------------------------------------------


def _searchsorted(seq, values, *, out_int32=False, right=False, side=None, sorter=None):
    side = side or ("right" if right else "left")
    if sorter is not None:
        seq = np.take_along_axis(seq, sorter, axis=-1)
    values = np.asarray(values)
    if seq.ndim == 1:
        out = np.searchsorted(seq, values, side=side)
    else:
        out = np.stack(
            [
                np.searchsorted(s, v, side=side)
                for s, v in zip(seq.reshape(-1, seq.shape[-1]), values.reshape(-1, values.shape[-1]))
            ]
        )
        out = out.reshape(values.shape)
    return np.asarray(out).astype(np.int32 if out_int32 else np.int64)


def _bucketize(values, boundaries, *, out_int32=False, right=False):
    return _searchsorted(boundaries, values, out_int32=out_int32, side="right" if right else "left")


def _bincount(x, weights=None, minlength=0):
    if weights is not None:
        weights = weights.astype(np.float64)
    return np.bincount(x.astype(np.int64), weights, minlength)


def _histc(x, bins=100, min=0, max=0):  # noqa: A002 - schema names
    x = x.astype(np.float64).reshape(-1)
    lo, hi = float(min), float(max)
    if lo == hi and x.size:
        finite = x[np.isfinite(x)]
        lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (lo, hi)
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    inside = x[(x >= lo) & (x <= hi)]
    pos = np.floor((inside - lo) * bins / (hi - lo)).astype(np.int64)
    pos = np.minimum(pos, bins - 1)
    return np.bincount(pos, minlength=bins).astype(np.float64)


def _repeat_index(repeats, output_size=None):
    return np.repeat(np.arange(repeats.size), repeats).astype(repeats.dtype)


def _repeat_interleave(x, repeats, dim=None, output_size=None):
    if dim is None:
        return np.repeat(x.reshape(-1), repeats)
    return np.repeat(x, repeats, axis=dim)


def _narrow(x, dim, start, length):
    index = [slice(None)] * x.ndim
    s = int(start) % x.shape[dim] if int(start) < 0 else int(start)
    index[dim] = slice(s, s + length)
    return x[tuple(index)]


def _tensor_split(x, sections, dim=0):
    s = np.asarray(sections)
    return np.array_split(x, int(s) if s.ndim == 0 else list(s), axis=dim)


# -- cases -----------------------------------------------------------------------------------------

M34, M34T, M234T, V5S = TA((3, 4)), TA((3, 4), T), TA((2, 3, 4), T), TA((5,), S)
SPECIAL = TA((3, 4), specials=True)


def _gather_lines():
    cases = [
        K(M34T, 0, Idx((2, 4), 3)),
        K(M234T, 2, Idx((2, 3, 6), 4)),
        K(V5S, -1, Idx((7,), 5, dtype=I32)),
        K(TA(()), 0, Val(0, ow.int64)),
        K(M34, 1, Idx((3, 0), 4)),
    ]
    scatter_src = [
        K(M34T, 0, _line_unique((2, 4), 0, 3), TA((3, 4))),
        K(M234T, 2, _line_unique((2, 3, 3), 2, 4), TA((2, 3, 4), S)),
        K(V5S, 0, _line_unique((4,), 0, 5), TA((6,))),
        K(TA(()), 0, Val(0, ow.int64), TA(())),
        K(M34, 1, Idx((3, 0), 4), TA((3, 2))),
    ]
    scatter_value = [K(*c[0][:3], Dyn(lambda d: _scalar(d, 2))) for c in scatter_src]
    accumulate = [
        K(M34T, 0, Idx((5, 4), 3), TA((5, 4))),
        K(M234T, 2, Idx((2, 3, 6), 4), TA((2, 3, 6), S)),
        K(V5S, 0, Idx((8,), 5, dtype=I32), TA((8,))),
        K(TA(()), 0, Val(0, ow.int64), TA(())),
        K(M34, 1, Idx((3, 0), 4), TA((3, 2))),
    ]
    reduce_cases = [
        K(*accumulate[0][0], reduce="add"),
        K(*accumulate[1][0], reduce="multiply"),
        K(*accumulate[2][0], reduce="add"),
        K(*accumulate[3][0], reduce="multiply"),
        K(*accumulate[4][0], reduce="add"),
    ]
    value_reduce = [K(*c[0][:3], Dyn(lambda d: _scalar(d, 2)), **c[1]) for c in reduce_cases]
    reduce_two = [
        K(*accumulate[0][0], "sum"),
        K(*accumulate[1][0], "prod", include_self=False),
        K(*accumulate[2][0], "mean"),
        K(*accumulate[0][0], "amax", include_self=False),
        K(*accumulate[1][0], "amin"),
        K(*accumulate[2][0], "mean", include_self=False),
    ]
    prim_reduce = [K(*c[0], c[1].get("include_self", True)) for c in reduce_two]
    return [
        entry("gather", _gather, _i64(cases), ALL),
        entry("prims::gather", _gather, cases, ALL, strides=False),
        entry("scatter.src", _scatter, _i64(scatter_src), ALL),
        entry("prims::scatter", _scatter, scatter_src, ALL),
        entry("scatter.value", _scatter_value, _i64(scatter_value), ALL),
        entry("scatter.reduce", _scatter, _i64(reduce_cases), NOT_BOOL, tolerances=TOL),
        entry("scatter.value_reduce", _scatter_value, _i64(value_reduce), NOT_BOOL, tolerances=TOL),
        entry(
            "scatter_add",
            lambda x, d, i, s: _scatter_into(x, d, i, s, "add"),
            _i64(accumulate),
            NOT_BOOL,
            tolerances=TOL,
        ),
        entry(
            "prims::scatter_add",
            lambda x, d, i, s: _scatter_into(x, d, i, s, "add"),
            accumulate,
            NOT_BOOL,
            tolerances=TOL,
        ),
        entry("scatter_reduce.two", _scatter_reduce, _i64(reduce_two), REAL, tolerances=TOL),
        entry("prims::scatter_reduce", _scatter_reduce, prim_reduce, REAL, tolerances=TOL),
    ]


def _scalar(dtype, v):
    """A Python scalar of ``dtype``'s category."""
    if dtype is ow.bool:
        return True
    if dtype.is_complex:
        return complex(v, -1)
    if dtype.is_floating_point:
        return float(v) + 0.5
    return int(v)


def _index_dim_lines():
    select = [
        K(M34T, 0, Idx((5,), 3)),
        K(M234T, 2, Idx((3,), 4, dtype=I32)),
        K(V5S, 0, Idx((), 5)),
        K(TA(()), 0, Val([0], ow.int64)),
        K(M34, 1, Idx((0,), 4)),
    ]
    add = [
        K(M34T, 0, Idx((5,), 3), TA((5, 4))),
        K(M234T, 2, Idx((3,), 4, dtype=I32), TA((2, 3, 3), S)),
        K(V5S, 0, Idx((), 5), TA(()), alpha=2),
        K(TA(()), 0, Val([0], ow.int64), TA(())),
        K(M34, 1, Idx((0,), 4), TA((3, 0))),
    ]
    prim_add = [K(*a, kw.get("alpha", 1)) for a, kw in add]
    copy = [
        K(M34T, 0, Idx((2,), 3, unique=True), TA((2, 4))),
        K(M234T, 2, Idx((3,), 4, dtype=I32, unique=True), TA((2, 3, 3), S)),
        K(V5S, 0, Idx((), 5), TA(())),
        K(TA(()), 0, Val([0], ow.int64), TA(())),
        K(M34, 1, Idx((0,), 4), TA((3, 0))),
    ]
    fill = [
        K(M34T, 0, Idx((2,), 3), Dyn(lambda d: _scalar(d, 3))),
        K(M234T, -1, Val([-1, 0], I32), Dyn(lambda d: _scalar(d, -2))),
        K(V5S, 0, Idx((), 5), Dyn(lambda d: _scalar(d, 1))),
        K(TA(()), 0, Val([0], ow.int64), Dyn(lambda d: _scalar(d, 4))),
    ]
    fill_t = [K(*a[:3], Dyn(lambda d, v=a[3]: Val(v.fn(d), d))) for a, _ in fill]
    fill_t[1] = K(*fill[1][0][:3], TA((), CPU))
    return [
        entry("index_select", _index_select, select, ALL),
        entry("prims::index_select", _index_select, select, ALL),
        entry("index_add", _index_add, add, NOT_BOOL, tolerances=TOL),
        entry("prims::index_add", _index_add, prim_add, NOT_BOOL, tolerances=TOL),
        entry("index_copy", _index_copy, _i64(copy), ALL),
        entry("prims::index_copy", _index_copy, copy, ALL),
        entry("index_fill.int_Scalar", _index_fill, fill, ALL),
        entry("index_fill.int_Tensor", _index_fill, fill_t, ALL),
        entry("prims::index_fill", _index_fill, fill, ALL),
    ]


def _advanced_lines():
    index = [
        K(M34T, [Idx((5,), 3)]),
        K(M234T, [None, Idx((2, 2), 3), Idx((2, 1), 4, dtype=I32)]),
        K(M234T, [Idx((3,), 2), None, Val([-1, 0, 2], ow.int64)]),
        K(M34, [TA((3, 4), dtype=ow.bool)]),
        K(V5S, [Idx((0,), 5)]),
        K(M234T, [TA((2,), dtype=ow.bool), Idx((1,), 3)]),
    ]
    prim_index = [c for c in index if not any(isinstance(i, TA) for i in c[0][1])]
    put = [
        K(M34T, [Idx((3,), 3, unique=True)], TA((3, 4))),
        K(M234T, [None, Val([[0, 2]], ow.int64), Val([[1], [3]], I32)], TA((2, 2, 2))),
        K(M34, [TA((3, 4), dtype=ow.bool)], TA(())),
        K(V5S, [Idx((0,), 5)], TA((0,))),
        K(M234T, [Idx((5,), 2), Idx((5,), 3), Idx((5,), 4)], TA((5,)), True),
    ]
    prim_put = [
        K(M34T, [Idx((3,), 3, unique=True)], TA((3, 4)), False),
        K(M234T, [None, Val([[0, 2]], ow.int64), Val([[1], [3]], I32)], TA((2, 2, 2)), False),
        K(M234T, [Idx((5,), 2), Idx((5,), 3), Idx((5,), 4)], TA((5,)), True),
        K(V5S, [Idx((7,), 5)], TA((7,)), True),
        K(V5S, [Idx((0,), 5)], TA((0,)), False),
    ]
    masks = [
        K(M34T, TA((3, 4), dtype=ow.bool)),
        K(M234T, TA((3, 4), dtype=ow.bool, layout=S)),
        K(SPECIAL, TA((4,), dtype=ow.bool)),
        K(TA(()), Val(True, ow.bool)),
        K(TA((0, 3)), TA((0, 3), dtype=ow.bool)),
    ]
    prim_masks = [K(M34T, TA((3, 4), dtype=ow.bool)), K(M234T, TA((2, 3, 4), dtype=ow.bool, layout=S))]
    prim_masks += [K(TA(()), Val(True, ow.bool)), K(TA((0, 3)), TA((0, 3), dtype=ow.bool))]
    mscatter = [K(*a, TA((30,))) for a, _ in masks[:3]] + [K(TA(()), Val(True, ow.bool), TA((2,)))]
    mscatter += [K(TA((0, 3)), TA((0, 3), dtype=ow.bool), TA((0,)))]
    prim_mscatter = [K(*a, TA((30,))) for a, _ in prim_masks]
    nonzero = [
        K(TA((3, 4), T, domain="small")),
        K(TA((2, 3, 4), S, domain="small")),
        K(SPECIAL),
        K(TA(())),
        K(TA((0, 3))),
    ]
    static = [K(nz[0][0], size=4) for nz in nonzero[:2]] + [K(SPECIAL, size=20, fill_value=7), K(TA(()), size=2)]
    return [
        entry("index.Tensor", _index, index, ALL),
        entry("prims::index", _index, prim_index, ALL, strides=False),
        entry("index_put", _index_put, put, ALL),
        entry("prims::index_put", _index_put, prim_put, ALL),
        entry("masked_select", _masked_select, masks, ALL),
        entry("prims::masked_select", _masked_select, prim_masks, ALL),
        entry("masked_scatter", _masked_scatter, mscatter, ALL),
        entry("prims::masked_scatter", _masked_scatter, prim_mscatter, ALL),
        entry("nonzero", _nonzero, nonzero, ALL),
        entry("argwhere", _nonzero, nonzero, ALL),
        # no layout promise: PyTorch's CUDA nonzero returns its (n, ndim) result transposed (column-major)
        entry("prims::nonzero", _nonzero, nonzero, ALL, strides=False),
        entry("nonzero_static", _nonzero_static, static, ALL),
    ]


def _take_lines():
    take = [
        K(M34T, Idx((2, 3), 12)),
        K(M234T, Val([-1, 0, 23], I32)),
        K(V5S, Idx((), 5)),
        K(TA(()), Val([0, 0], ow.int64)),
    ]
    take += [K(M34, Idx((0,), 12))]
    along = [
        K(M34T, Idx((2, 4), 3), 0),
        K(M234T, Idx((2, 3, 5), 4), -1),
        K(M34, Idx((5,), 12)),
        K(V5S, Idx((3,), 5, dtype=I32), 0),
        K(M34, Idx((3, 0), 4), 1),
    ]
    put = [
        K(M34T, Idx((4,), 12, unique=True), TA((4,))),
        K(M234T, Val([[-1, 0], [5, 23]], I32), TA((2, 2), S)),
        K(V5S, Idx((7,), 5), TA((7,)), True),
        K(TA(()), Val(0, ow.int64), TA(())),
        K(M34, Idx((0,), 12), TA((0,)), True),
    ]
    prim_put = [K(*a[:3], a[3] if len(a) > 3 else False) for a, _ in put]
    return [
        entry("take", _take, _i64(take), ALL),
        entry("prims::take", _take, take, ALL, strides=False),
        entry("take_along_dim", _take_along_dim, _i64(along), ALL),
        entry("put", _put, _i64(put), ALL),
        entry("prims::put", _put, prim_put, ALL),
    ]


def _sorted(*shape):
    """A sorted sequence (along the last dim) of distinct-ish values of the dtype under test."""

    def fn(rng, dtype):
        a = TA(shape, domain="small").make(rng, dtype)
        return Arr(np.sort(a.value, axis=-1), dtype)

    return Gen(fn)


def _search_lines():
    tensor = [
        K(_sorted(6), TA((3, 4), T, domain="small")),
        K(_sorted(6), TA((5,), S, domain="small"), right=True),
        K(_sorted(2, 5), TA((2, 3), domain="small"), out_int32=True),
        K(_sorted(5), TA((), domain="small"), side="right"),
        K(Val([3, 1, 2, 0]), TA((2, 3), domain="small"), sorter=Val([3, 1, 2, 0], ow.int64)),
        K(_sorted(4), TA((0,), domain="small")),
    ]
    scalar = [K(_sorted(6), 1), K(_sorted(6), 0, right=True), K(_sorted(5), 2, out_int32=True), K(_sorted(3), 3)]
    bucket = [
        K(TA((3, 4), T, domain="small"), _sorted(6)),
        K(TA((5,), S, domain="small"), _sorted(6), right=True),
        K(TA((), domain="small"), _sorted(5), out_int32=True),
        K(TA((0,), domain="small"), _sorted(4)),
    ]
    bucket_scalar = [K(1, _sorted(6)), K(0, _sorted(5), right=True), K(2, _sorted(3), out_int32=True)]
    prim = [K(_sorted(6), TA((3, 4), T, domain="small"), False), K(_sorted(2, 5), TA((2, 3), domain="small"), True)]
    prim += [K(_sorted(5), TA((), domain="small"), True), K(_sorted(4), TA((0,), domain="small"), False)]
    bins = [
        K(Idx((7,), 5, layout=S)),
        K(Idx((6,), 4), TA((6,), dtype=ow.float32, domain="nonneg")),
        K(Idx((5,), 3, dtype=I32), TA((5,), dtype=ow.float64), minlength=6),
        K(Idx((0,), 3)),
        K(Idx((4,), 9, dtype=ow.uint8), TA((4,), dtype=ow.int64)),
    ]
    prim_bins = [K(bins[0][0][0], None, 0), K(*bins[1][0], 0), K(*bins[2][0], 6), K(bins[3][0][0], None, 2)]
    hist = [
        K(TA((3, 4), T)),
        K(TA((20,), S), 7, -2, 3),
        K(TA((2, 3, 4)), 5, 0, 4),
        K(TA(()), 3),
        K(TA((0,)), 4, 0, 1),
    ]
    prim_hist = [K(TA((3, 4), T), 100, 0, 0), K(TA((20,), S), 7, -2, 3), K(TA((2, 3, 4)), 5, 0, 4), K(TA(()), 3, 0, 0)]
    return [
        entry("searchsorted.Tensor", _searchsorted, tensor, REAL),
        entry("searchsorted.Scalar", _searchsorted, scalar, REAL),
        entry("prims::searchsorted", lambda s, v, r: _searchsorted(s, v, right=r), prim, REAL),
        entry("bucketize.Tensor", _bucketize, bucket, REAL),
        entry("bucketize.Scalar", _bucketize, bucket_scalar, REAL),
        entry("bincount", _bincount, bins, (None,)),
        entry("prims::bincount", _bincount, prim_bins, (None,)),
        entry("histc", _histc, hist, FLOAT),
        entry("prims::histc", _histc, prim_hist, FLOAT),
    ]


def _shape_tensor_lines():
    reps = [K(Idx((4,), 3)), K(Idx((3,), 4, dtype=I32)), K(Idx((0,), 2))]
    self_reps = [
        K(M34T, Idx((4,), 3), 1),
        K(M234T, Idx((1,), 3), 0),
        K(V5S, Idx((5,), 3, dtype=I32)),
        K(M34, Idx((3,), 2), -2, output_size=None),
    ]
    narrow = [K(M234T, 2, Val(1, ow.int64), 2), K(M34, 0, Val(0, ow.int64), 2), K(V5S, 0, Val(4, ow.int64), 1)]
    # sections as a 0-dim CPU tensor; a 1-D CPU index tensor cannot be mixed into a device op in opweave
    split = [
        K(M234T, Val(3, ow.int64, CPU), 2),
        K(M34, Val(1, ow.int64, CPU), 1),
        K(TA((5, 2), S), Val(2, ow.int64, CPU)),
    ]
    return [
        entry("prims::repeat_interleave", _repeat_index, reps, (None,)),
        entry("repeat_interleave.Tensor", _repeat_index, reps, (None,)),
        entry("repeat_interleave.self_Tensor", _repeat_interleave, self_reps, ALL),
        entry("narrow.Tensor", _narrow, narrow, ALL, upcast=False),
        entry("tensor_split.tensor_indices_or_sections", _tensor_split, split, ALL, upcast=False),
    ]


register(*_gather_lines(), *_index_dim_lines(), *_advanced_lines(), *_take_lines(), *_search_lines())
register(*_shape_tensor_lines())
