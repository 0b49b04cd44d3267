"""Sorting and selection canonical ops (sort, argsort, msort, topk, kthvalue, median, nanmedian, mode, unique,
unique_consecutive) against NumPy/Python oracles with PyTorch's order (NaN largest, -0.0 == 0.0): every ordered
dtype, 0-dim and empty inputs, layouts, special values, out= variants, meta and errors."""

from __future__ import annotations

import itertools

import numpy as np
import opweave as D
import pytest
from _rsi_support import (
    FLOATS,
    ORDERED,
    P,
    cases,
    check,
    layout_tensor,
    meta_of,
    same_meta,
    sample,
    tensor,
)
from hypothesis import given, settings
from hypothesis import strategies as st

ops = D.ops


def _input(case, dtype):
    shape, layout, rng, special = case
    arr = sample(rng, shape, dtype, special and dtype.is_floating_point, low=-3, high=3)
    return layout_tensor(arr, layout)


def _dim(data, ndim):
    return data.draw(st.integers(-max(ndim, 1), max(ndim, 1) - 1))


def _keys(values):
    """(nan flag, value) as float64 arrays: torch's total order puts NaN last."""
    wide = values.astype(np.float64)
    nan = np.isnan(wide)
    return nan.astype(np.float64), np.where(nan, 0.0, wide)


def _stable_order(row, descending):
    nan, value = _keys(row)
    index = np.arange(row.shape[0])
    if descending:
        return np.lexsort((index, -value, -nan))
    return np.lexsort((index, value, nan))


def _along(fn, values, axis, length=None, dtype=np.int64):
    """Apply ``fn`` (1-D -> 1-D of ``length``, default the slice's) to every slice along ``axis``.

    0-dim arrays count as one element; slices may be empty and there may be none.
    """
    if values.ndim == 0:
        return np.asarray(fn(values.reshape(1))).reshape(())
    moved = np.moveaxis(values, axis, -1)
    size = moved.shape[-1] if length is None else length
    out = np.zeros(moved.shape[:-1] + (size,), dtype)
    for pos in np.ndindex(*moved.shape[:-1]):
        out[pos] = fn(moved[pos])
    return np.moveaxis(out, -1, axis)


def _same_values(a, b):
    return np.array_equal(np.asarray(a, np.float64), np.asarray(b, np.float64), equal_nan=True)


# -- sort, argsort, msort --------------------------------------------------


@pytest.mark.parametrize("dtype", ORDERED)
@settings(max_examples=12, deadline=None)
@given(case=cases(), data=st.data())
def test_sort(dtype, case, data):
    t, values = _input(case, dtype)
    dim = _dim(data, t.ndim)
    descending = data.draw(st.booleans())
    axis = dim % t.ndim if t.ndim else 0
    order = _along(lambda row: _stable_order(row, descending), values, axis)
    want_values = np.take_along_axis(values, order, axis) if values.ndim else values
    got_values, got_indices = D.sort(t, stable=True, dim=dim, descending=descending)
    check(got_values, want_values, dtype)
    check(got_indices, order, D.int64)
    check(D.argsort(t, stable=True, dim=dim, descending=descending), order, D.int64)
    got_values, got_indices = D.sort(t, dim, descending)  # unstable: any order of ties
    check(got_values, want_values, dtype)
    picked = np.take_along_axis(values, got_indices.numpy(), axis) if values.ndim else values
    assert _same_values(picked, want_values)
    check(
        D.msort(t),
        np.take_along_axis(values, _along(lambda r: _stable_order(r, False), values, 0), 0) if values.ndim else values,
        dtype,
    )


# -- topk, kthvalue --------------------------------------------------------


@pytest.mark.parametrize("dtype", ORDERED)
@settings(max_examples=12, deadline=None)
@given(case=cases(), data=st.data())
def test_topk(dtype, case, data):
    t, values = _input(case, dtype)
    dim = _dim(data, t.ndim)
    axis = dim % t.ndim if t.ndim else 0
    size = values.shape[axis] if values.ndim else 1
    k = data.draw(st.integers(0, size))
    largest, is_sorted = data.draw(st.booleans()), data.draw(st.booleans())
    got_values, got_indices = D.topk(t, k, dim, largest, is_sorted)
    if values.ndim == 0:
        check(got_values, values, dtype)
        return
    order = _along(lambda row: _stable_order(row, largest), values, axis)
    want = np.take_along_axis(values, np.take(order, range(k), axis), axis)
    if not is_sorted:  # any order: compare sorted
        got = np.take_along_axis(
            got_values.numpy(), _along(lambda r: _stable_order(r, largest), got_values.numpy(), axis), axis
        )
        assert _same_values(got, want)
    else:
        check(got_values, want, dtype)
    assert _same_values(np.take_along_axis(values, got_indices.numpy(), axis), got_values.numpy())


@pytest.mark.parametrize("dtype", ORDERED)
@settings(max_examples=12, deadline=None)
@given(case=cases(min_size=1), data=st.data())
def test_kthvalue(dtype, case, data):
    t, values = _input(case, dtype)
    dim = _dim(data, t.ndim)
    axis = dim % t.ndim if t.ndim else 0
    size = values.shape[axis] if values.ndim else 1
    k = data.draw(st.integers(1, size))
    keepdim = data.draw(st.booleans())
    got_values, got_indices = D.kthvalue(t, k, dim, keepdim)
    if values.ndim == 0:
        check(got_values, values, dtype)
        check(got_indices, np.array(0), D.int64)
        return
    order = _along(lambda row: _stable_order(row, False), values, axis)
    want = np.take(np.take_along_axis(values, order, axis), k - 1, axis)
    check(got_values, np.expand_dims(want, axis) if keepdim else want, dtype)
    index = got_indices.numpy() if keepdim else np.expand_dims(got_indices.numpy(), axis)
    assert _same_values(np.take_along_axis(values, index, axis), np.expand_dims(want, axis))


# -- median, nanmedian, mode -----------------------------------------------


def _lower_median(row, ignore_nan):
    wide = row.astype(np.float64)
    nan = np.isnan(wide)
    if not ignore_nan and nan.any():
        return np.nan
    kept = np.sort(wide[~nan])
    return kept[(kept.size - 1) // 2] if kept.size else np.nan


@pytest.mark.parametrize("dtype", ORDERED)
@pytest.mark.parametrize("name", ["median", "nanmedian"])
@settings(max_examples=12, deadline=None)
@given(case=cases(), data=st.data())
def test_median(name, dtype, case, data):
    t, values = _input(case, dtype)
    ignore_nan = name == "nanmedian"
    fn = getattr(D, name)
    if values.size:
        check(fn(t), np.array(_lower_median(values.reshape(-1), ignore_nan)), dtype)
    elif dtype.is_floating_point:
        check(fn(t), np.array(np.nan), dtype)
    dim = _dim(data, t.ndim)
    keepdim = data.draw(st.booleans())
    axis = dim % t.ndim if t.ndim else 0
    if values.ndim and values.shape[axis] == 0:
        with pytest.raises(ValueError, match=name):
            fn(t, dim)
        return
    got_values, got_indices = fn(t, dim, keepdim)
    if values.ndim == 0:
        check(got_values, values, dtype)
        return
    want = _along(lambda r: [_lower_median(r, ignore_nan)], values, axis, 1, np.float64).squeeze(axis)
    check(got_values, np.expand_dims(want, axis) if keepdim else want, dtype)
    index = got_indices.numpy() if keepdim else np.expand_dims(got_indices.numpy(), axis)
    picked = np.take_along_axis(values, index, axis).astype(np.float64)
    assert _same_values(picked, np.expand_dims(want, axis))
    if dtype.is_floating_point and not ignore_nan:  # a NaN median points at the first NaN
        nan = np.isnan(values.astype(np.float64))
        first = np.expand_dims(np.argmax(nan, axis), axis)
        assert np.array_equal(np.where(np.expand_dims(nan.any(axis), axis), first, index), index)


def _mode(row):
    """Most frequent value (NaNs are all distinct), the smallest among ties."""
    counts = {}
    for x in row.tolist():
        key = ("nan", len(counts)) if x != x else x
        counts[key] = counts.get(key, 0) + 1
    best = max(counts.values())
    candidates = [k for k, c in counts.items() if c == best]
    numbers = [k for k in candidates if not isinstance(k, tuple)]
    return min(numbers) if numbers else np.nan


@pytest.mark.parametrize("dtype", ORDERED)
@settings(max_examples=12, deadline=None)
@given(case=cases(), data=st.data())
def test_mode(dtype, case, data):
    t, values = _input(case, dtype)
    dim = _dim(data, t.ndim)
    keepdim = data.draw(st.booleans())
    axis = dim % t.ndim if t.ndim else 0
    if values.ndim and values.shape[axis] == 0:
        with pytest.raises(ValueError, match="mode"):
            D.mode(t, dim)
        return
    got_values, got_indices = D.mode(t, dim, keepdim)
    if values.ndim == 0:
        check(got_values, values, dtype)
        return
    want = _along(lambda r: [_mode(r)], values, axis, 1, np.float64).squeeze(axis)
    check(got_values, np.expand_dims(want, axis) if keepdim else want, dtype)
    index = got_indices.numpy() if keepdim else np.expand_dims(got_indices.numpy(), axis)
    assert _same_values(np.take_along_axis(values, index, axis), np.expand_dims(want, axis))


# -- unique ----------------------------------------------------------------


@pytest.mark.parametrize("dtype", ORDERED)
@settings(max_examples=12, deadline=None)
@given(case=cases(), data=st.data())
def test_unique(dtype, case, data):
    t, values = _input(case, dtype)
    is_sorted, want_inverse, want_counts = (data.draw(st.booleans()) for _ in range(3))
    base = values.astype(np.float64) if dtype.is_floating_point else values  # NumPy mis-orders bfloat16 NaN
    uniq, inverse, counts = np.unique(base.reshape(-1), return_inverse=True, return_counts=True, equal_nan=False)
    got = D.unique(t, is_sorted, want_inverse, want_counts)
    got = got if isinstance(got, tuple) else (got,)
    assert len(got) == 1 + want_inverse + want_counts
    check(got[0], uniq, dtype)
    has_nan = bool(np.isnan(base.astype(np.float64)).any())
    if want_inverse and has_nan:  # NaNs are all distinct: which NaN maps where is unspecified
        assert got[1].dtype is D.int64 and tuple(got[1].shape) == values.shape
        assert _same_values(uniq[got[1].numpy()], base)
    elif want_inverse:
        check(got[1], inverse.reshape(values.shape), D.int64)
    if want_counts:
        check(got[-1], counts, D.int64)
    out, inv, cnt = ops._unique2(t, True, False, want_counts)
    check(out, uniq, dtype)
    assert inv.numel() == 0 and (want_counts or cnt.numel() == 0)
    out, inv = ops._unique(t, True, True)
    assert _same_values(uniq[inv.numpy()], base)


@pytest.mark.parametrize("dtype", [D.bool, D.uint8, D.int64, D.float32, D.float16])
@settings(max_examples=12, deadline=None)
@given(case=cases(min_ndim=1, min_size=1), data=st.data())
def test_unique_dim(dtype, case, data):
    shape, layout, rng, _ = case
    t, values = layout_tensor(sample(rng, shape, dtype, low=0, high=1), layout)
    dim = data.draw(st.integers(-t.ndim, t.ndim - 1))
    uniq, inverse, counts = np.unique(values, return_inverse=True, return_counts=True, axis=dim)
    got_values, got_inverse, got_counts = D.unique(t, True, True, True, dim)
    check(got_values, uniq, dtype)
    check(got_inverse, inverse.reshape(-1), D.int64)
    check(got_counts, counts, D.int64)
    check(t.unique(dim=dim), uniq, dtype)


def _consecutive(values, axis):
    """(values, inverse, counts) of runs of equal consecutive elements (axis None) or slices."""
    if axis is None:
        items = list(values.reshape(-1))
        key = lambda i: items[i].item()  # noqa: E731
    else:
        moved = np.moveaxis(values, axis, 0)
        items = [moved[i] for i in range(moved.shape[0])]
        key = lambda i: items[i].tobytes()  # noqa: E731
    runs = [list(g) for _, g in itertools.groupby(range(len(items)), key=key)]
    picked = [items[r[0]] for r in runs]
    inverse = np.concatenate([[j] * len(r) for j, r in enumerate(runs)]).astype(np.int64) if runs else np.zeros(0)
    counts = np.array([len(r) for r in runs], np.int64)
    if axis is None:
        return np.array(picked, values.dtype), inverse.reshape(values.shape), counts
    out = np.moveaxis(np.stack(picked), 0, axis) if picked else values
    return out, inverse, counts


@pytest.mark.parametrize("dtype", [D.bool, D.int8, D.int64, D.float32, D.bfloat16])
@settings(max_examples=12, deadline=None)
@given(case=cases(min_size=1), data=st.data())
def test_unique_consecutive(dtype, case, data):
    shape, layout, rng, _ = case
    t, values = layout_tensor(sample(rng, shape, dtype, low=0, high=1), layout)
    use_dim = t.ndim > 0 and data.draw(st.booleans())
    dim = data.draw(st.integers(-t.ndim, t.ndim - 1)) if use_dim else None
    want_values, want_inverse, want_counts = _consecutive(values, None if dim is None else dim % t.ndim)
    got_values, got_inverse, got_counts = D.unique_consecutive(t, True, True, dim)
    check(got_values, want_values, dtype)
    check(got_inverse, want_inverse, D.int64)
    check(got_counts, want_counts, D.int64)
    check(D.unique_consecutive(t), _consecutive(values, None)[0], dtype)
    assert len(ops.unique_consecutive(t)) == 3


def test_unique_api_and_errors():
    t = tensor([3, 1, 3, 2])
    assert isinstance(D.unique(t), D.Tensor)
    values, counts = D.unique(t, return_counts=True)
    check(counts, np.array([1, 1, 2]), D.int64)
    with pytest.raises(TypeError, match="unique"):
        D.unique([1, 2])
    with pytest.raises(ValueError):
        D.unique(tensor(np.array(1.0)), dim=0)
    with pytest.raises(NotImplementedError):
        D.unique(meta_of(t))
    with pytest.raises(TypeError):
        D.unique(tensor([1j]))


# -- out=, meta, errors ----------------------------------------------------


def test_out_variants():
    t = tensor([[3.0, 1.0, 2.0], [0.0, -1.0, 5.0]])
    values, indices = tensor(np.zeros(0)), tensor(np.zeros(0), D.int64)
    got = ops.sort.out(t, 1, True, values=values, indices=indices)
    assert got[0] is values and got[1] is indices
    check(values, np.array([[3.0, 2.0, 1.0], [5.0, 0.0, -1.0]]), D.float64)
    check(indices, np.array([[0, 2, 1], [2, 0, 1]]), D.int64)
    values, indices = tensor(np.zeros((2, 3))), tensor(np.zeros((2, 3)), D.int64)
    with pytest.warns(UserWarning, match="resized"):
        ops.topk.out(t, 1, values=values, indices=indices)
    check(values, np.array([[3.0], [5.0]]), D.float64)
    out = tensor(np.zeros(0))
    ops.median.out(t, out=out)
    check(out, np.array(1.0), D.float64)


META_CASES = [
    ("sort", lambda t: D.sort(t, 0, True)),
    ("sort_stable", lambda t: D.sort(t, stable=True, dim=1)),
    ("argsort", lambda t: D.argsort(t, -1)),
    ("msort", lambda t: D.msort(t)),
    ("topk", lambda t: D.topk(t, 2, 1, False)),
    ("kthvalue", lambda t: D.kthvalue(t, 2, 0, True)),
    ("median", lambda t: D.median(t)),
    ("median_dim", lambda t: D.median(t, 1, True)),
    ("nanmedian", lambda t: D.nanmedian(t)),
    ("nanmedian_dim", lambda t: D.nanmedian(t, 0)),
    ("mode", lambda t: D.mode(t, 1)),
]


@pytest.mark.parametrize("name,fn", META_CASES, ids=[c[0] for c in META_CASES])
@pytest.mark.parametrize("dtype", [D.float32, D.int16])
def test_meta(name, fn, dtype):
    t, _ = layout_tensor(np.arange(12).reshape(3, 4).astype(dtype.numpy), "transposed")
    same_meta(fn, t)


ERROR_CASES = [
    ("topk", lambda t: D.topk(t, 4), ValueError),
    ("topk", lambda t: D.topk(t, -1), ValueError),
    ("kthvalue", lambda t: D.kthvalue(t, 0), ValueError),
    ("kthvalue", lambda t: D.kthvalue(t, 4, 1), ValueError),
    ("sort", lambda t: D.sort(t, 2), ValueError),
    ("sort", lambda t: D.sort(P.convert_element_type(t, D.complex64)), TypeError),
    ("median", lambda t: D.median(P.slice_in_dim(t, 0, 0, 1, 1), 1), ValueError),
    ("median", lambda t: D.median(P.convert_element_type(P.slice_in_dim(t, 0, 0, 1, 1), D.int32)), ValueError),
    ("mode", lambda t: D.mode(P.convert_element_type(t, D.complex128)), TypeError),
    ("argsort", lambda t: D.argsort(t, -3), ValueError),
]


@pytest.mark.parametrize("name,fn,exc", ERROR_CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(ERROR_CASES)])
def test_errors(name, fn, exc):
    t = tensor(np.arange(6.0).reshape(2, 3))
    with pytest.raises(exc, match=name):
        fn(t)


@pytest.mark.parametrize("dtype", FLOATS)
def test_nan_order(dtype):
    values = np.array([1.0, np.nan, -np.inf, 0.0, -0.0, np.inf, np.nan]).astype(dtype.numpy)
    got, idx = D.sort(tensor(values), stable=True)
    check(got, np.array([-np.inf, 0.0, -0.0, 1.0, np.inf, np.nan, np.nan]), dtype)
    check(idx, np.array([2, 3, 4, 0, 5, 1, 6]), D.int64)
    got, idx = D.sort(tensor(values), stable=True, descending=True)
    check(idx, np.array([1, 6, 5, 0, 3, 4, 2]), D.int64)
    check(D.median(tensor(values)), np.array(np.nan), dtype)
    check(D.nanmedian(tensor(values)), np.array(0.0), dtype)
