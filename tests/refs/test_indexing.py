"""Indexing canonical ops against NumPy oracles: gather/scatter (all overloads), scatter_add, scatter_reduce,
index_select/add/copy/fill, advanced indexing (index.Tensor, index_put with int and bool indices), masks,
nonzero(_static)/argwhere, take/put/take_along_dim, searchsorted/bucketize, bincount, histc; dtypes, layouts,
0-dim and empty inputs, in-place/out= variants, meta and errors."""

from __future__ import annotations

import math

import numpy as np
import opweave as D
import pytest
from _rsi_support import (
    ALL,
    FLOATS,
    LAYOUTS,
    NUMERIC,
    REAL,
    P,
    cases,
    check,
    layout_tensor,
    meta_of,
    quiet,
    same_meta,
    sample,
    tensor,
)
from hypothesis import given, settings
from hypothesis import strategies as st

ops = D.ops


def _input(case, dtype, **kwargs):
    shape, layout, rng, special = case
    arr = sample(rng, shape, dtype, special and (dtype.is_floating_point or dtype.is_complex), **kwargs)
    t, values = layout_tensor(arr, layout)
    return t, values, rng


def _dim(data, ndim):
    return data.draw(st.integers(-max(ndim, 1), max(ndim, 1) - 1))


def _gather_index(data, rng, shape, axis, unique=False):
    """An int64 index for gather/scatter along ``axis``: sizes <= ``shape`` elsewhere, values in range."""
    if not shape:
        return np.array(0, np.int64)
    size = shape[axis]
    index_shape = [data.draw(st.integers(0, n)) for n in shape]
    index_shape[axis] = data.draw(st.integers(0, size if unique else (3 if size else 0)))
    if unique:  # a distinct target per column: a permutation prefix along ``axis``
        keys = rng.random([size] + [n for i, n in enumerate(index_shape) if i != axis])
        perm = np.moveaxis(np.argsort(keys, axis=0), 0, axis)
        return np.ascontiguousarray(perm[tuple(slice(0, n) for n in index_shape)]).astype(np.int64)
    return rng.integers(0, max(size, 1), index_shape).astype(np.int64)


def _targets(index, axis):
    """For each position of ``index``: the target position (the same, with ``axis`` replaced by the index)."""
    for pos in np.ndindex(*index.shape):
        target = list(pos)
        if target:
            target[axis] = int(index[pos])
        yield pos, tuple(target)


# -- gather, scatter -------------------------------------------------------


@pytest.mark.parametrize("dtype", ALL)
@settings(max_examples=10, deadline=None)
@given(case=cases(), data=st.data())
def test_gather(dtype, case, data):
    t, values, rng = _input(case, dtype)
    dim = _dim(data, t.ndim)
    axis = dim % t.ndim if t.ndim else 0
    index = _gather_index(data, rng, values.shape, axis)
    want = np.empty(index.shape, values.dtype)
    for pos, target in _targets(index, axis):
        want[pos] = values[target]
    check(D.gather(t, dim, tensor(index)), want, dtype)
    check(t.gather(dim, tensor(index)), want, dtype)


SCATTER_KINDS = ["src", "value", "add", "reduce_add", "reduce_multiply", "value_reduce_add"]


@pytest.mark.parametrize("dtype", [D.uint8, D.int64, D.float16, D.bfloat16, D.float32, D.complex128])
@pytest.mark.parametrize("kind", SCATTER_KINDS)
@settings(max_examples=8, deadline=None)
@given(case=cases(), data=st.data())
def test_scatter(kind, dtype, case, data):
    t, values, rng = _input(case, dtype, low=-2, high=2)
    dim = _dim(data, t.ndim)
    axis = dim % t.ndim if t.ndim else 0
    index = _gather_index(data, rng, values.shape, axis, unique=kind in ("src", "value"))
    src_shape = tuple(n + data.draw(st.integers(0, 1)) for n in index.shape)  # src may be larger
    src_values = sample(rng, src_shape, dtype, low=-2, high=2)
    src = tensor(src_values)
    want = values.copy()
    for pos, target in _targets(index, axis):
        item = 1.5 if kind.startswith("value") else src_values[pos]
        item = np.asarray(item).astype(values.dtype)
        if kind in ("src", "value"):
            want[target] = item
        elif kind in ("add", "reduce_add", "value_reduce_add"):
            want[target] = quiet(np.add, want[target], item)
        else:
            want[target] = quiet(np.multiply, want[target], item)
    idx = tensor(index)
    fn = {
        "src": lambda s: D.scatter(s, dim, idx, src),
        "value": lambda s: D.scatter(s, dim, idx, 1.5),
        "add": lambda s: D.scatter_add(s, dim, idx, src),
        "reduce_add": lambda s: D.scatter(s, dim, idx, src, reduce="add"),
        "reduce_multiply": lambda s: D.scatter(s, dim, idx, src, reduce="multiply"),
        "value_reduce_add": lambda s: D.scatter(s, dim, idx, 1.5, reduce="add"),
    }[kind]
    if kind.startswith("value") and not (dtype.is_floating_point or dtype.is_complex):
        want = values.copy()  # 1.5 casts to 1 for integers: recompute
        for _, target in _targets(index, axis):
            want[target] = (want[target] + 1) if kind != "value" else 1
    check(fn(t), want, dtype)
    assert np.array_equal(t.numpy(), values, equal_nan=True)
    target = tensor(values)
    assert _inplace(kind)(target, dim, idx, src) is target
    check(target, want, dtype)


def _inplace(kind):
    return {
        "src": lambda s, d, i, src: s.scatter_(d, i, src),
        "value": lambda s, d, i, src: s.scatter_(d, i, 1.5),
        "add": lambda s, d, i, src: s.scatter_add_(d, i, src),
        "reduce_add": lambda s, d, i, src: s.scatter_(d, i, src, reduce="add"),
        "reduce_multiply": lambda s, d, i, src: s.scatter_(d, i, src, reduce="multiply"),
        "value_reduce_add": lambda s, d, i, src: s.scatter_(d, i, 1.5, reduce="add"),
    }[kind]


def _np_scatter_reduce(values, axis, index, src, reduce, include_self):
    groups = {}
    for pos, target in _targets(index, axis):
        groups.setdefault(target, []).append(src[pos].astype(np.float64))
    out = values.copy()
    integral = values.dtype.kind in "iub"
    for target, items in groups.items():
        items = ([values[target].astype(np.float64)] if include_self else []) + items
        if reduce == "sum":
            r = np.sum(items)
        elif reduce == "prod":
            r = np.prod(items)
        elif reduce == "mean":
            r = np.sum(items) / len(items)
            r = math.floor(r) if integral else r
        else:
            r = (np.max if reduce == "amax" else np.min)(items)
        out[target] = r
    return out


@pytest.mark.parametrize("dtype", [D.int32, D.int64, D.float16, D.float32, D.float64])
@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
@settings(max_examples=8, deadline=None)
@given(case=cases(), data=st.data())
def test_scatter_reduce(reduce, dtype, case, data):
    t, values, rng = _input(case, dtype, low=-2, high=2)
    dim = _dim(data, t.ndim)
    axis = dim % t.ndim if t.ndim else 0
    index = _gather_index(data, rng, values.shape, axis)
    src_values = sample(rng, index.shape, dtype, low=-2, high=2)
    include_self = data.draw(st.booleans())
    want = _np_scatter_reduce(values, axis, index, src_values, reduce, include_self)
    got = D.scatter_reduce(t, dim, tensor(index), tensor(src_values), reduce, include_self=include_self)
    check(got, want, dtype)


# -- index_select, index_add, index_copy, index_fill -----------------------


def _vector_index(data, rng, size, unique=False, negative=False):
    if unique:
        n = data.draw(st.integers(0, size))
        return rng.permutation(size)[:n].astype(np.int64)
    n = data.draw(st.integers(0, 4 if size else 0))
    low = -size if negative else 0
    return rng.integers(low, max(size, 1), n).astype(np.int64)


def _slices(ndim, axis, i):
    return tuple(i if d == axis else slice(None) for d in range(ndim))


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("index_dtype", [D.int64, D.int32])
@settings(max_examples=8, deadline=None)
@given(case=cases(min_ndim=1), data=st.data())
def test_index_select(dtype, index_dtype, case, data):
    t, values, rng = _input(case, dtype)
    dim = _dim(data, t.ndim)
    index = _vector_index(data, rng, values.shape[dim])
    check(D.index_select(t, dim, tensor(index, index_dtype)), np.take(values, index, axis=dim), dtype)


@pytest.mark.parametrize("dtype", NUMERIC + [D.bool])
@pytest.mark.parametrize("name", ["index_add", "index_copy", "index_fill"])
@settings(max_examples=8, deadline=None)
@given(case=cases(min_ndim=1), data=st.data())
def test_index_add_copy_fill(name, dtype, case, data):
    t, values, rng = _input(case, dtype, low=-2, high=2)
    dim = _dim(data, t.ndim)
    axis = dim % t.ndim
    size = values.shape[axis]
    index = _vector_index(data, rng, size, unique=name == "index_copy", negative=name == "index_fill")
    source_shape = list(values.shape)
    source_shape[axis] = index.size
    source = sample(rng, source_shape, dtype, low=-2, high=2)
    want = values.copy()
    alpha = 2 if dtype not in (D.bool,) else True
    for j, i in enumerate(index):
        dst, src = _slices(values.ndim, axis, int(i)), _slices(values.ndim, axis, j)
        if name == "index_add":
            want[dst] = quiet(np.add, want[dst], quiet(np.multiply, source[src], alpha)).astype(values.dtype)
        elif name == "index_copy":
            want[dst] = source[src]
        else:
            want[dst] = np.asarray(1).astype(values.dtype)
    idx = tensor(index)
    if name == "index_add":
        if dtype is D.bool:
            with pytest.raises(TypeError):
                D.index_add(t, dim, idx, tensor(source), alpha=2)
            return
        got, inplace = D.index_add(t, dim, idx, tensor(source), alpha=alpha), "index_add_"
        args = (dim, idx, tensor(source))
        kwargs = {"alpha": alpha}
    elif name == "index_copy":
        got, inplace, args, kwargs = (
            D.index_copy(t, dim, idx, tensor(source)),
            "index_copy_",
            (dim, idx, tensor(source)),
            {},
        )
    else:
        got, inplace, args, kwargs = D.index_fill(t, dim, idx, 1), "index_fill_", (dim, idx, 1), {}
        check(D.index_fill(t, dim, idx, tensor(np.array(1), dtype)), want, dtype)
    check(got, want, dtype)
    target = tensor(values)
    assert getattr(target, inplace)(*args, **kwargs) is target
    check(target, want, dtype)


# -- advanced indexing -----------------------------------------------------


@st.composite
def index_lists(draw, shape, rng, allow_bool=True):
    """A torch ``indices`` list for ``shape``: None entries, int64/int32 tensors (broadcastable) and masks."""
    entries, numpy_key, position = [], [], 0
    broadcast = tuple(draw(st.lists(st.integers(0, 3), max_size=2)))
    while position < len(shape) and draw(st.booleans()):
        kind = draw(st.sampled_from(["none", "int", "int32", "bool"] if allow_bool else ["none", "int", "int32"]))
        size = shape[position]
        if kind == "none":
            entries.append(None)
            numpy_key.append(slice(None))
            position += 1
        elif kind == "bool":
            span = draw(st.integers(1, len(shape) - position))
            mask = rng.random(shape[position : position + span]) < 0.5
            entries.append(tensor(mask))
            numpy_key.append(mask)
            position += span
        else:
            sub = broadcast[draw(st.integers(0, len(broadcast))) :]
            values = rng.integers(-size, size, sub) if size else np.zeros(sub, np.int64)
            if size == 0 and math.prod(sub):
                values = np.zeros((0,), np.int64)  # an empty dim can only take empty indices
            entries.append(tensor(values, D.int64 if kind == "int" else D.int32))
            numpy_key.append(np.asarray(values))
            position += 1
    return entries, tuple(numpy_key)


def _numpy_index(values, key):
    try:
        return values[key], None
    except IndexError as exc:  # shapes that do not broadcast or empty-dim misuse
        return None, exc


@pytest.mark.parametrize("dtype", [D.bool, D.int8, D.int64, D.float16, D.float32, D.complex64])
@settings(max_examples=25, deadline=None)
@given(case=cases(min_ndim=1), data=st.data())
def test_index_tensor(dtype, case, data):
    t, values, rng = _input(case, dtype)
    indices, key = data.draw(index_lists(values.shape, rng))
    want, error = _numpy_index(values, key)
    if error is not None:
        with pytest.raises(ValueError):
            D.index(t, indices)
        return
    check(D.index(t, indices), want, dtype)


@pytest.mark.parametrize("dtype", [D.int32, D.float32, D.float64, D.bool])
@settings(max_examples=20, deadline=None)
@given(case=cases(min_ndim=1), data=st.data())
def test_index_put(dtype, case, data):
    t, values, rng = _input(case, dtype, low=-2, high=2)
    indices, key = data.draw(index_lists(values.shape, rng))
    target_view, error = _numpy_index(values, key)
    if error is not None:
        return
    accumulate = data.draw(st.booleans()) and dtype is not D.bool
    shape = target_view.shape[data.draw(st.integers(0, target_view.ndim)) :]  # values broadcast
    new = sample(rng, shape, dtype, low=-2, high=2)
    want = values.copy()
    got = D.index_put(t, indices, tensor(new), accumulate)
    if accumulate:
        # Broadcast first: NumPy 2.4's ufunc.at broadcasts values over a multi-dim index on a 1-d array
        # wrongly (np.add.at(np.zeros(3), [[0, 1], [0, 1]], [1.0, 2.0]) adds each value once, or reads
        # past the values' buffer).
        np.add.at(want, key, np.broadcast_to(new, target_view.shape))
    else:
        positions = np.arange(values.size).reshape(values.shape)[key]
        if np.unique(positions).size != positions.size:
            return  # duplicate targets without accumulate: unspecified in torch
        want[key] = new
    check(got, want, dtype)
    target = tensor(values)
    assert target.index_put_(indices, tensor(new), accumulate) is target
    check(target, want, dtype)


def test_index_put_duplicates_and_scalars():
    t = tensor(np.zeros(4))
    check(D.index_put(t, [tensor([1, 1, 3])], tensor([1.0, 2.0, 3.0]), True), np.array([0, 3.0, 0, 3.0]), D.float64)
    check(D.index_put(t, [tensor([0, 2])], 5), np.array([5.0, 0, 5.0, 0]), D.float64)  # wrapped scalar is cast
    mask = tensor(np.array([True, False, True, False]))
    check(D.index_put(t, [mask], tensor(np.array(7.0))), np.array([7.0, 0, 7.0, 0]), D.float64)
    with pytest.raises(TypeError, match="index_put"):
        D.index_put(t, [tensor([0])], tensor([1.0], D.float32))


# -- masks, nonzero --------------------------------------------------------


def _mask_shape(data, shape):
    """A shape broadcastable with ``shape`` (dims dropped from the front or set to 1)."""
    start = data.draw(st.integers(0, len(shape)))
    return tuple(1 if data.draw(st.booleans()) else n for n in shape[start:])


@pytest.mark.parametrize("dtype", ALL)
@settings(max_examples=10, deadline=None)
@given(case=cases(), data=st.data())
def test_masked_select_scatter(dtype, case, data):
    t, values, rng = _input(case, dtype)
    mask = rng.random(_mask_shape(data, values.shape)) < 0.5
    a, m = np.broadcast_arrays(values, mask)
    check(D.masked_select(t, tensor(mask)), a[m], dtype)
    source = sample(rng, (data.draw(st.integers(int(m.sum()), int(m.sum()) + 2)),), dtype)
    want = np.array(a, copy=True)
    want[m] = source[: int(m.sum())]
    check(D.masked_scatter(t, tensor(mask), tensor(source)), want, dtype)
    target = tensor(values)
    assert target.masked_scatter_(tensor(mask), tensor(source)) is target
    check(target, want, dtype)
    if m.sum():
        with pytest.raises(ValueError):
            D.masked_scatter(t, tensor(mask), tensor(source[: int(m.sum()) - 1]))


def test_masked_errors():
    t = tensor(np.zeros((2, 3)))
    with pytest.raises(TypeError, match="masked_select"):
        D.masked_select(t, tensor(np.ones((2, 3), np.uint8)))
    with pytest.raises(ValueError):
        D.masked_select(t, tensor(np.ones((3, 3), bool)))
    with pytest.raises(ValueError):
        t2 = tensor(np.zeros(3))
        t2.masked_scatter_(tensor(np.ones((2, 3), bool)), tensor(np.zeros(6)))
    with pytest.raises(TypeError, match="masked_scatter"):
        D.masked_scatter(t, tensor(np.ones(3, bool)), tensor(np.zeros(6), D.float32))


@pytest.mark.parametrize("dtype", ALL)
@settings(max_examples=10, deadline=None)
@given(case=cases(), data=st.data())
def test_nonzero_argwhere_static(dtype, case, data):
    t, values, _ = _input(case, dtype, low=-1, high=1)
    want = np.argwhere(values)
    check(D.nonzero(t), want, D.int64)
    check(D.argwhere(t), want, D.int64)
    size = data.draw(st.integers(0, 5))
    fill = data.draw(st.sampled_from([-1, 7]))
    padded = np.full((size, values.ndim), fill, np.int64)
    rows = min(size, want.shape[0])
    padded[:rows] = want[:rows]
    check(D.nonzero_static(t, size=size, fill_value=fill), padded, D.int64)


# -- take, put, take_along_dim ---------------------------------------------


@pytest.mark.parametrize("dtype", ALL)
@settings(max_examples=10, deadline=None)
@given(case=cases(), data=st.data())
def test_take_put(dtype, case, data):
    t, values, rng = _input(case, dtype, low=-2, high=2)
    n = values.size
    shape = tuple(data.draw(st.lists(st.integers(0, 3), max_size=2))) if n else (0,)
    index = rng.integers(-n, max(n, 1), shape).astype(np.int64) if n else np.zeros(shape, np.int64)
    check(D.take(t, tensor(index)), np.take(values.reshape(-1), index), dtype)
    flat_unique = rng.permutation(n)[: data.draw(st.integers(0, n))].astype(np.int64)
    source = sample(rng, flat_unique.shape, dtype, low=-2, high=2)
    want = values.copy().reshape(-1)
    want[flat_unique] = source
    check(D.put(t, tensor(flat_unique), tensor(source)), want.reshape(values.shape), dtype)
    if dtype is not D.bool:
        acc = values.copy().reshape(-1)
        quiet(np.add.at, acc, index.reshape(-1), np.ones(index.size, values.dtype))
        ones = tensor(np.ones(index.shape, values.dtype))
        check(D.put(t, tensor(index), ones, accumulate=True), acc.reshape(values.shape), dtype)
        target = tensor(values)
        assert target.put_(tensor(index), ones, True) is target
        check(target, acc.reshape(values.shape), dtype)


@pytest.mark.parametrize("dtype", [D.bool, D.int16, D.float32, D.complex128])
@settings(max_examples=15, deadline=None)
@given(case=cases(min_ndim=1, min_size=1), data=st.data())
def test_take_along_dim(dtype, case, data):
    t, values, rng = _input(case, dtype)
    dim = _dim(data, t.ndim)
    axis = dim % t.ndim
    shape = [1 if data.draw(st.booleans()) else n for n in values.shape]  # broadcasts against ``values``
    shape[axis] = data.draw(st.integers(0, 3))
    index = rng.integers(-values.shape[axis], values.shape[axis], shape).astype(np.int64)  # negative from the end
    check(D.take_along_dim(t, tensor(index), dim), np.take_along_axis(values, index, axis), dtype)
    flat = rng.integers(0, values.size, (2, 2)).astype(np.int64)
    check(D.take_along_dim(t, tensor(flat)), np.take(values.reshape(-1), flat.reshape(-1)), dtype)


# -- searchsorted, bucketize, bincount, histc ------------------------------


@pytest.mark.parametrize("dtype", REAL)
@settings(max_examples=10, deadline=None)
@given(case=cases(), data=st.data())
def test_searchsorted_bucketize(dtype, case, data):
    t, values, rng = _input(case, dtype)
    right = data.draw(st.booleans())
    side = "right" if right else "left"
    boundaries = np.sort(sample(rng, (data.draw(st.integers(1, 5)),), dtype))
    seq = tensor(boundaries)
    want = np.searchsorted(boundaries.astype(np.float64), values.astype(np.float64), side=side)
    check(D.searchsorted(seq, t, right=right), want, D.int64)
    check(D.searchsorted(seq, t, side=side, out_int32=True), want, D.int32)
    check(D.bucketize(t, seq, right=right), want, D.int64)
    scalar = float(boundaries[0]) if dtype.is_floating_point else int(boundaries[0])
    want_scalar = np.searchsorted(boundaries.astype(np.float64), scalar, side=side)
    check(D.searchsorted(seq, scalar, right=right), np.array(want_scalar), D.int64)
    check(D.bucketize(scalar, seq, right=right), np.array(want_scalar), D.int64)
    perm = rng.permutation(boundaries.size)
    shuffled = tensor(boundaries[perm])
    sorter = tensor(np.argsort(boundaries[perm], kind="stable"))
    check(D.searchsorted(shuffled, t, side=side, sorter=sorter), want, D.int64)


@settings(max_examples=15, deadline=None)
@given(data=st.data())
def test_searchsorted_batched_and_promotion(data):
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    lead = tuple(data.draw(st.lists(st.integers(1, 3), min_size=1, max_size=2)))
    seq = np.sort(rng.integers(-5, 5, lead + (4,)), axis=-1)
    vals = rng.random(lead + (data.draw(st.integers(0, 3)),)) * 10 - 5
    want = np.empty(vals.shape, np.int64)
    for pos in np.ndindex(*lead):
        want[pos] = np.searchsorted(seq[pos], vals[pos])
    check(D.searchsorted(tensor(seq), tensor(vals)), want, D.int64)  # int64 and float64 promote


def test_searchsorted_errors():
    seq = tensor([1.0, 2.0])
    with pytest.raises(ValueError, match="side"):
        D.searchsorted(seq, tensor([1.0]), right=True, side="left")
    with pytest.raises(ValueError, match="side"):
        D.searchsorted(seq, tensor([1.0]), side="middle")
    with pytest.raises(ValueError):
        D.searchsorted(tensor(np.zeros((2, 2))), tensor(np.zeros((3, 1))))
    with pytest.raises(ValueError, match="bucketize"):
        D.bucketize(tensor([1.0]), tensor(np.zeros((2, 2))))
    with pytest.raises(TypeError, match="searchsorted"):
        D.searchsorted(tensor([1j]), tensor([1j]))
    with pytest.raises(ValueError, match="sorter"):
        D.searchsorted(seq, tensor([1.0]), sorter=tensor([0]))


@pytest.mark.parametrize("dtype", [D.uint8, D.int16, D.int64])
@pytest.mark.parametrize("weights", [None, D.float32, D.float64, D.int64])
@settings(max_examples=10, deadline=None)
@given(data=st.data())
def test_bincount(dtype, weights, data):
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    values = rng.integers(0, 6, data.draw(st.integers(0, 8))).astype(dtype.numpy)
    minlength = data.draw(st.integers(0, 8))
    w = None if weights is None else rng.integers(-3, 4, values.shape).astype(weights.numpy)
    want = np.bincount(values, None if w is None else w.astype(np.float64), minlength)
    expected_dtype = D.int64 if weights is None else (D.float32 if weights is D.float32 else D.float64)
    check(D.bincount(tensor(values), None if w is None else tensor(w), minlength), want, expected_dtype)


def test_bincount_errors():
    with pytest.raises(TypeError, match="bincount"):
        D.bincount(tensor([1.0]))
    with pytest.raises(ValueError, match="bincount"):
        D.bincount(tensor([[1]]))
    with pytest.raises(ValueError):
        D.bincount(tensor([-1, 2]))
    with pytest.raises(ValueError, match="minlength"):
        D.bincount(tensor([1]), minlength=-1)
    with pytest.raises(ValueError, match="weights"):
        D.bincount(tensor([1]), tensor([1.0, 2.0]))


def _np_histc(values, bins, lo, hi):
    """torch's histc: bin = floor((x - lo) * bins / (hi - lo)), x == hi in the last bin, others dropped."""
    x = values.astype(np.float64).reshape(-1)
    if lo == hi and x.size:
        finite = x[np.isfinite(x)]
        lo, hi = (finite.min(), finite.max()) if finite.size else (lo, hi)
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    keep = (x >= lo) & (x <= hi)
    idx = np.floor((x[keep] - lo) * bins / (hi - lo)).astype(np.int64)
    idx = np.minimum(idx, bins - 1)
    return np.bincount(idx, minlength=bins).astype(np.float64)


@pytest.mark.parametrize("dtype", FLOATS)
@settings(max_examples=12, deadline=None)
@given(case=cases(), data=st.data())
def test_histc(dtype, case, data):
    t, values, _ = _input(case, dtype)
    bins = data.draw(st.integers(1, 6))
    lo, hi = data.draw(st.sampled_from([(0, 0), (-2, 2), (-4, 1), (1, 1)]))
    if not np.isfinite(values.astype(np.float64)).all() and lo == hi:
        return  # torch raises for a non-finite data range
    check(D.histc(t, bins, lo, hi), _np_histc(values, bins, lo, hi), dtype)


def test_histc_errors():
    with pytest.raises(TypeError, match="histc"):
        D.histc(tensor([1, 2]))
    with pytest.raises(ValueError, match="bins"):
        D.histc(tensor([1.0]), 0)
    with pytest.raises(ValueError, match="max"):
        D.histc(tensor([1.0]), 3, 2, 1)


# -- out=, meta, errors ----------------------------------------------------


def test_out_variants():
    t = tensor(np.arange(6.0).reshape(2, 3))
    out = tensor(np.zeros(0))
    assert ops.masked_select.out(t, tensor(np.array([True, False, True])), out=out) is out
    check(out, np.array([0.0, 2.0, 3.0, 5.0]), D.float64)
    out = tensor(np.zeros((5, 5)), D.int64)
    with pytest.warns(UserWarning, match="resized"):
        ops.nonzero.out(t, out=out)
    check(out, np.argwhere(np.arange(6.0).reshape(2, 3)), D.int64)
    out = tensor(np.zeros((2, 2)))
    ops.gather.out(t, 1, tensor([[2, 0], [1, 1]]), out=out)
    check(out, np.array([[2.0, 0.0], [4.0, 4.0]]), D.float64)
    out = tensor(np.zeros((2, 3)))
    ops.scatter.src_out(t, 0, tensor([[1, 0, 1]]), tensor(np.ones((1, 3))), out=out)
    check(out, np.array([[0.0, 1.0, 2.0], [1.0, 4.0, 1.0]]), D.float64)


def _idx(*values):
    return tensor(np.array(values, np.int64))


I = np.array([[0, 2], [1, 1]])  # noqa: E741 - an index for the meta cases
META_CASES = [
    ("gather", lambda t, i: D.gather(t, 1, i), [I]),
    ("scatter", lambda t, i: D.scatter(t, 0, i, t), [[[1, 0, 1]]]),
    ("scatter_value", lambda t, i: D.scatter(t, 1, i, 2.0, reduce="multiply"), [[[0], [2]]]),
    ("scatter_add", lambda t, i: D.scatter_add(t, 1, i, t), [[[0], [2]]]),
    ("scatter_reduce", lambda t, i: D.scatter_reduce(t, 0, i, t, "amax", include_self=False), [[[1, 1, 0]]]),
    ("index_select", lambda t, i: D.index_select(t, 1, i), [[2, 0, 2]]),
    ("index_add", lambda t, i: D.index_add(t, 0, i, t, alpha=2), [[1, 0]]),
    ("index_copy", lambda t, i: D.index_copy(t, 1, i, t), [[2, 1, 0]]),
    ("index_fill", lambda t, i: D.index_fill(t, 1, i, 3.0), [[-1]]),
    ("index_fill_tensor", lambda t, i: D.index_fill(t, 1, i, D.sum(t)), [[-1, 0]]),
    ("index", lambda t, i, j: D.index(t, [i, j]), [[[0], [1]], [1, 0]]),
    ("index_put", lambda t, i: D.index_put(t, [i], D.sum(t, 1, True), True), [[0, 1]]),
    ("take", lambda t, i: D.take(t, i), [[[0, -1]]]),
    ("take_along_dim", lambda t, i: D.take_along_dim(t, i, 1), [[[0], [2]]]),
    ("put", lambda t, i: D.put(t, i, D.sum(t, 1), True), [[0, 5]]),
    ("masked_scatter", lambda t, m: D.masked_scatter(t, m, t), [np.array([True, False, True])]),
    ("searchsorted", lambda t: D.searchsorted(D.sum(t, 0), t, side="right"), []),
    ("bucketize", lambda t: D.bucketize(t, D.sum(t, 0), out_int32=True), []),
    ("histc", lambda t: D.histc(t, 5, -1, 1), []),
    ("nonzero_static", lambda t: D.nonzero_static(t, size=4), []),
]


@pytest.mark.parametrize("name,fn,extra", META_CASES, ids=[c[0] for c in META_CASES])
def test_meta(name, fn, extra):
    t, _ = layout_tensor(np.arange(6.0).reshape(2, 3).astype(np.float32), "transposed")
    same_meta(fn, t, *(tensor(np.asarray(e)) for e in extra))


DYNAMIC = [
    ("nonzero", lambda m: D.nonzero(m)),
    ("argwhere", lambda m: D.argwhere(m)),
    ("masked_select", lambda m: D.masked_select(m, meta_of(m, D.bool))),
    ("index_mask", lambda m: D.index(m, [meta_of(m, D.bool)])),
    ("bincount", lambda m: D.bincount(P.empty_strided([3], [1], dtype=D.int64, device="meta"))),
]


@pytest.mark.parametrize("name,fn", DYNAMIC, ids=[c[0] for c in DYNAMIC])
def test_meta_dynamic_shapes_raise(name, fn):
    with pytest.raises(NotImplementedError):
        fn(P.empty_strided([2, 3], [3, 1], dtype=D.float32, device="meta"))


ERROR_CASES = [
    ("gather index dtype", lambda t: D.gather(t, 0, tensor([[0]], D.int16)), TypeError),
    ("gather out of bounds", lambda t: D.gather(t, 0, _idx([2])), RuntimeError),
    ("gather dim", lambda t: D.gather(t, 2, _idx([0])), ValueError),
    ("scatter src dtype", lambda t: D.scatter(t, 0, _idx([0]), tensor([[1.0]], D.float32)), TypeError),
    ("scatter reduce", lambda t: D.scatter(t, 0, _idx([0]), t, reduce="max"), ValueError),
    ("scatter_reduce reduce", lambda t: D.scatter_reduce(t, 0, _idx([0]), t, "max"), ValueError),
    ("index_select index dim", lambda t: D.index_select(t, 0, _idx([0])), ValueError),
    ("index_select index dtype", lambda t: D.index_select(t, 0, tensor([0.0])), TypeError),
    (
        "index_add alpha",
        lambda t: D.index_add(P.convert_element_type(t, D.int64), 0, _idx(0), _idx([1, 1, 1]), alpha=0.5),
        TypeError,
    ),
    ("index_copy source dtype", lambda t: D.index_copy(t, 0, _idx(0), tensor([[1, 1, 1]])), TypeError),
    ("index_fill tensor value", lambda t: D.index_fill(t, 0, _idx(0), tensor([1.0, 2.0])), ValueError),
    ("index too many", lambda t: D.index(t, [_idx(0), _idx(0), _idx(0)]), ValueError),
    ("index float", lambda t: D.index(t, [tensor([0.0])]), TypeError),
    ("index mask shape", lambda t: D.index(t, [tensor(np.ones((3,), bool))]), ValueError),
    ("index out of bounds", lambda t: D.index(t, [_idx(5)]), IndexError),
    ("take index dtype", lambda t: D.take(t, tensor([0], D.int32)), TypeError),
    ("put sizes", lambda t: D.put(t, _idx(0, 1), tensor([1.0])), ValueError),
    ("take_along_dim ndim", lambda t: D.take_along_dim(t, _idx(0), 0), ValueError),
]


@pytest.mark.parametrize("name,fn,exc", ERROR_CASES, ids=[c[0] for c in ERROR_CASES])
def test_errors(name, fn, exc):
    values = np.arange(6.0).reshape(2, 3)
    t = tensor(values)
    with pytest.raises(exc):
        fn(t)
    assert np.array_equal(t.numpy(), values)


def test_zero_dim_inputs():
    t = tensor(np.array(4.0))
    check(D.gather(t, 0, tensor(np.array(0))), np.array(4.0), D.float64)
    check(D.index_select(t, 0, tensor(np.array(0))), np.array(4.0), D.float64)
    check(D.take(t, _idx(0, 0)), np.array([4.0, 4.0]), D.float64)
    check(D.index_fill(t, 0, _idx(0), tensor(np.array(1.0))), np.array(1.0), D.float64)
    check(D.nonzero(t), np.zeros((1, 0)), D.int64)
    check(D.masked_select(t, tensor(np.array(True))), np.array([4.0]), D.float64)
    check(D.scatter(t, 0, tensor(np.array(0)), 2.0), np.array(2.0), D.float64)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_index_on_layouts(layout):
    values = np.arange(24.0).reshape(2, 3, 4)
    t, values = layout_tensor(values, layout)
    idx = np.array([[0, 2], [1, 1]])
    check(D.index(t, [None, tensor(idx), tensor(np.array([3, 0]))]), values[:, idx, np.array([3, 0])], D.float64)
    check(D.index(t, [tensor(np.array([1, 0])), None, tensor(np.array([0, 3]))]), values[[1, 0], :, [0, 3]], D.float64)
