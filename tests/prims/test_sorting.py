"""Sorting prims against Python/NumPy oracles: every dtype, layouts, 0-dim/empty inputs, special values."""

from __future__ import annotations

import numpy as np
import opweave as D
import pytest
from _prim_support import (
    BOOLS,
    COMPLEXES,
    FLOATS,
    INTS,
    P,
    cases,
    check,
    check_meta,
    dim_for,
    layout_tensor,
    meta_of,
    sample,
    unchanged,
)
from hypothesis import given, settings
from hypothesis import strategies as st

# -- oracles: torch's order, NaN largest, -0.0 == 0.0 ----------------------------------------------------------

ORDERED = BOOLS + INTS + FLOATS


def _key(v):
    v = float(v)
    return (1, 0.0) if v != v else (0, v)


def _lines(x, d):
    """Each 1-D line of ``x`` along ``d`` (0-dim: the single value) as ``(position tuple, values)``."""
    y = x.reshape(1) if x.ndim == 0 else np.moveaxis(x, d, -1)
    for pos in np.ndindex(y.shape[:-1]):
        yield pos, y[pos]


def _assemble(lines, x, d, n, dtype):
    """Stack per-line results of length ``n`` back with the line dim at ``d``."""
    lead = (x.reshape(1) if x.ndim == 0 else np.moveaxis(x, d, -1)).shape[:-1]
    out = np.empty((*lead, n), dtype)
    for pos, vals in lines:
        out[pos] = vals
    return out.reshape(()) if x.ndim == 0 and n == 1 else np.moveaxis(out, -1, d % max(x.ndim, 1))


def stable_order(line, descending):
    """Positions of ``line`` in torch's stable order (``sorted`` is stable for reverse=True too)."""
    return sorted(range(len(line)), key=lambda i: _key(line[i]), reverse=descending)


def same_values(got, want):
    """Equal values (bytes may differ only by the sign of zero); NaN equals NaN."""
    g, w = np.asarray(got, np.float64), np.asarray(want, np.float64)
    np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("dtype", ORDERED, ids=lambda d: d.name)
@settings(max_examples=20, deadline=None)
@given(case=cases(), data=st.data(), descending=st.booleans(), stable=st.booleans())
def test_sort(dtype, case, data, descending, stable):
    shape, layout, rng, special = case
    t, x = layout_tensor(sample(rng, shape, dtype, special), layout)
    d = data.draw(dim_for(len(shape)))
    before = t.numpy().copy()
    values, indices = P.sort(t, d, descending, stable)
    orders = [(pos, stable_order(line, descending)) for pos, line in _lines(x, d)]
    n = shape[d] if shape else 1
    want_idx = _assemble(orders, x, d, n, np.int64)
    want_val = _assemble([(p, line[o]) for (p, line), (_, o) in zip(_lines(x, d), orders)], x, d, n, x.dtype)
    check(values, want_val, dtype)
    if stable:
        check(indices, want_idx, D.int64)
    else:  # any order of equal elements: the indices must still pick the sorted values
        idx = indices.numpy().reshape(_shape1(want_idx))
        gathered = np.take_along_axis(x.reshape(_shape1(x)), idx, axis=d % max(len(shape), 1))
        same_values(gathered.reshape(want_val.shape).astype(np.float64), want_val.astype(np.float64))
    check_meta((values, indices), P.sort(meta_of(t), d, descending, stable))
    unchanged(t, before)


@pytest.mark.parametrize("dtype", ORDERED, ids=lambda d: d.name)
@settings(max_examples=20, deadline=None)
@given(case=cases(), data=st.data(), largest=st.booleans(), sorted_=st.booleans())
def test_topk(dtype, case, data, largest, sorted_):
    shape, layout, rng, special = case
    t, x = layout_tensor(sample(rng, shape, dtype, special), layout)
    d = data.draw(dim_for(len(shape)))
    n = shape[d] if shape else 1
    k = data.draw(st.integers(0 if shape else 1, n))
    values, indices = P.topk(t, k, d, largest, sorted_)
    lines = [(pos, line[stable_order(line, largest)[:k]]) for pos, line in _lines(x, d)]
    want = _assemble(lines, x, d, k, x.dtype)
    check(values, want, dtype)  # the results come sorted, best first, even when not asked to
    axis = d % max(len(shape), 1)
    picked = np.take_along_axis(x.reshape(_shape1(x)), indices.numpy().reshape(_shape1(want)), axis=axis)
    same_values(picked.reshape(want.shape).astype(np.float64), want.astype(np.float64))
    if k:
        distinct = np.sort(indices.numpy().reshape(_shape1(want)), axis=axis)
        assert (np.diff(distinct, axis=axis) > 0).all()
    check_meta((values, indices), P.topk(meta_of(t), k, d, largest, sorted_))


def _shape1(a):
    return a.shape or (1,)


@pytest.mark.parametrize("dtype", ORDERED, ids=lambda d: d.name)
@settings(max_examples=20, deadline=None)
@given(case=cases(), data=st.data())
def test_kthvalue(dtype, case, data):
    shape, layout, rng, special = case
    t, x = layout_tensor(sample(rng, shape, dtype, special), layout)
    d = data.draw(dim_for(len(shape)))
    n = shape[d] if shape else 1
    if n == 0:
        with pytest.raises(ValueError, match="prims::kthvalue"):
            P.kthvalue(t, 1, d)
        return
    k = data.draw(st.integers(1, n))
    values, indices = P.kthvalue(t, k, d)
    want = np.array([sorted(line.tolist(), key=_key)[k - 1] for _, line in _lines(x, d)]).astype(x.dtype)
    rest = tuple(s for i, s in enumerate(shape) if i != d % max(len(shape), 1))
    check(values, want.reshape(rest), dtype)
    lines = [line for _, line in _lines(x, d)]
    picked = [line[i] for line, i in zip(lines, indices.numpy().reshape(-1))]
    same_values(np.array(picked, np.float64), want.astype(np.float64))
    check_meta((values, indices), P.kthvalue(meta_of(t), k, d))


def _mode(line):
    """torch: the most frequent value, the smallest among ties; NaNs never equal each other."""
    counts = {}
    for v in line.tolist():
        if v == v:
            counts[v] = counts.get(v, 0) + 1
    if not counts:
        return line[0]
    best = max(counts.values())
    return min(v for v, c in counts.items() if c == best)


@pytest.mark.parametrize("dtype", ORDERED, ids=lambda d: d.name)
@settings(max_examples=20, deadline=None)
@given(case=cases(), data=st.data())
def test_mode(dtype, case, data):
    shape, layout, rng, special = case
    t, x = layout_tensor(sample(rng, shape, dtype, special), layout)
    d = data.draw(dim_for(len(shape)))
    if shape and shape[d] == 0:
        with pytest.raises(ValueError, match="prims::mode"):
            P.mode(t, d)
        return
    values, indices = P.mode(t, d)
    lines = [line for _, line in _lines(x, d)]
    want = np.array([_mode(line) for line in lines], x.dtype)
    rest = tuple(s for i, s in enumerate(shape) if i != d % max(len(shape), 1))
    check(values, want.reshape(rest), dtype)
    picked = [line[i] for line, i in zip(lines, indices.numpy().reshape(-1))]
    same_values(np.array(picked, np.float64), want.astype(np.float64))
    check_meta((values, indices), P.mode(meta_of(t), d))


def _groups(keys, consecutive):
    """Group ids per row of ``keys`` (rows equal when all entries ==; NaN never equal) and the group order."""
    n = len(keys)
    order = list(range(n)) if consecutive else sorted(range(n), key=lambda i: [_key(v) for v in keys[i]])
    starts = [i == 0 or not np.all(keys[order[i]] == keys[order[i - 1]]) for i in range(n)]
    gid, inverse = -1, [0] * n
    for i, o in enumerate(order):
        gid += starts[i]
        inverse[o] = gid
    firsts = [o for i, o in enumerate(order) if starts[i]]
    return firsts, inverse


def _unique_oracle(x, dim, consecutive):
    if dim is None:
        rows = x.reshape(-1, 1)
        firsts, inverse = _groups(rows.astype(np.float64), consecutive)
        out = x.reshape(-1)[firsts]
        return out, np.array(inverse, np.int64).reshape(x.shape), np.bincount(inverse, minlength=len(firsts))
    d = dim % x.ndim
    moved = np.moveaxis(x, d, 0)
    keys = moved.reshape(moved.shape[0], int(np.prod(moved.shape[1:]))).astype(np.float64)
    firsts, inverse = _groups(keys, consecutive)
    out = np.moveaxis(moved[firsts], 0, d)
    return out, np.array(inverse, np.int64), np.bincount(inverse, minlength=len(firsts))


@pytest.mark.parametrize("name", ["unique", "unique_consecutive"])
@pytest.mark.parametrize("dtype", ORDERED, ids=lambda d: d.name)
@settings(max_examples=20, deadline=None)
@given(case=cases(), data=st.data(), flags=st.tuples(st.booleans(), st.booleans()))
def test_unique(name, dtype, case, data, flags):
    shape, layout, rng, special = case
    t, x = layout_tensor(sample(rng, shape, dtype, special), layout)
    dim = None
    if shape and (x.size or shape.count(0) == 1) and data.draw(st.booleans()):
        dim = next(i for i, n in enumerate(shape) if n == 0) if not x.size else data.draw(dim_for(len(shape)))
    consecutive = name == "unique_consecutive"
    args = (flags[0], flags[1], dim) if consecutive else (True, flags[0], flags[1], dim)
    before = t.numpy().copy()
    out, inverse, counts = getattr(P, name)(t, *args)
    want, want_inverse, want_counts = _unique_oracle(x, dim, consecutive)
    check(out, want, dtype)
    check(inverse, want_inverse if flags[0] else np.zeros(0), D.int64)
    check(counts, want_counts if flags[1] else np.zeros(0), D.int64)
    unchanged(t, before)
    with pytest.raises(NotImplementedError, match=f"prims::{name}"):
        getattr(P, name)(meta_of(t), *args)


def test_unique_sorted_false_is_still_consistent():
    x = np.array([3, 1, 3, 2, 1], np.int16)
    out, inverse, counts = P.unique(D.from_numpy(x), False, True, True, None)
    np.testing.assert_array_equal(out.numpy()[inverse.numpy()], x)
    np.testing.assert_array_equal(np.sort(out.numpy()), [1, 2, 3])
    np.testing.assert_array_equal(counts.numpy()[np.argsort(out.numpy())], [2, 1, 2])


def test_small_examples():
    x = D.from_numpy(np.array([2.0, np.nan, -0.0, 0.0, 2.0, 1.0]))
    values, indices = P.sort(x, 0, True, True)
    same_values(values.numpy(), [np.nan, 2, 2, 1, 0, 0])
    np.testing.assert_array_equal(indices.numpy(), [1, 0, 4, 5, 2, 3])
    values, indices = P.mode(D.from_numpy(np.array([[3, 1, 3, 1, 2]], np.int8)), 1)
    assert values.numpy()[0] == 1 and indices.numpy()[0] in (1, 3)
    values, _ = P.mode(D.from_numpy(np.array([np.nan, np.nan, 5.0])), 0)
    assert values.numpy() == 5.0  # NaNs are all distinct, so each occurs once
    out, _, counts = P.unique(D.from_numpy(np.array([np.nan, 1.0, np.nan])), True, False, True, None)
    same_values(out.numpy(), [1, np.nan, np.nan])
    np.testing.assert_array_equal(counts.numpy(), [1, 1, 1])
    out, inverse, _ = P.unique(D.from_numpy(np.array([[1, 2], [0, 5], [1, 2]])), True, True, False, 0)
    np.testing.assert_array_equal(out.numpy(), [[0, 5], [1, 2]])
    np.testing.assert_array_equal(inverse.numpy(), [1, 0, 1])
    values, indices = P.topk(D.from_numpy(np.array([1.0, np.nan, 3.0])), 2, 0, True, True)
    same_values(values.numpy(), [np.nan, 3.0])
    np.testing.assert_array_equal(indices.numpy(), [1, 2])


def test_scalars():
    s = D.from_numpy(np.array(4.0, np.float32))
    for out in (P.sort(s, 0, False, True), P.topk(s, 1, -1, True, True), P.kthvalue(s, 1, 0), P.mode(s, 0)):
        assert out[0].shape == () and out[0].numpy() == 4.0 and out[1].numpy() == 0
    with pytest.raises(ValueError, match="prims::topk"):
        P.topk(s, 0, 0, True, True)  # a 0-dim result cannot hold 0 elements
    out, inverse, counts = P.unique(s, True, True, True, None)
    assert out.shape == (1,) and inverse.shape == () and counts.numpy().tolist() == [1]


INVALID = [
    ("topk k", ValueError, lambda t: P.topk(t, 4, 1, True, True)),
    ("topk negative k", ValueError, lambda t: P.topk(t, -1, 1, True, True)),
    ("kthvalue k", ValueError, lambda t: P.kthvalue(t, 0, 1)),
    ("kthvalue big k", ValueError, lambda t: P.kthvalue(t, 4, 1)),
    ("sort dim", ValueError, lambda t: P.sort(t, 2, False, False)),
    ("mode dim", ValueError, lambda t: P.mode(t, -3)),
    ("unique dim", ValueError, lambda t: P.unique(t, True, False, False, 5)),
    ("unique_consecutive dim", ValueError, lambda t: P.unique_consecutive(t, False, False, -3)),
]


@pytest.mark.parametrize(("what", "exc", "call"), INVALID, ids=[c[0] for c in INVALID])
def test_invalid_values(what, exc, call):
    t = D.from_numpy(np.ones((2, 3)))
    for arg in (t, meta_of(t)):
        with pytest.raises(exc, match=f"prims::{what.split()[0]}"):
            call(arg)


@pytest.mark.parametrize("name", ["sort", "topk", "kthvalue", "mode", "unique", "unique_consecutive"])
@pytest.mark.parametrize("dtype", COMPLEXES + [D.float8_e4m3fn], ids=lambda d: d.name)
def test_unordered_dtypes_raise_type_error(name, dtype):
    t = meta_of(D.from_numpy(np.ones((2, 3))), dtype)
    args = {
        "sort": (0, False, False),
        "topk": (1, 0, True, True),
        "kthvalue": (1, 0),
        "mode": (0,),
        "unique": (True, False, False, None),
        "unique_consecutive": (False, False, None),
    }[name]
    with pytest.raises(TypeError, match=f"prims::{name}"):
        getattr(P, name)(t, *args)


def test_unique_rejects_bad_zero_size_layouts():
    with pytest.raises(ValueError, match="prims::unique"):
        P.unique(D.from_numpy(np.zeros((0, 3))), True, False, False, 1)
    with pytest.raises(ValueError, match="prims::unique_consecutive"):
        P.unique_consecutive(D.from_numpy(np.array(1.0)), False, False, 0)
    out, inverse, counts = P.unique(D.from_numpy(np.zeros((0, 3))), True, True, True, 0)
    assert out.shape == (0, 3) and inverse.shape == (0,) and counts.shape == (0,)


def test_tags_and_docs():
    for name in ("unique", "unique_consecutive"):
        assert "dynamic_output_shape" in getattr(P, name).default.tags
    for name in ("sort", "topk", "kthvalue", "mode", "unique", "unique_consecutive"):
        op = getattr(P, name).default
        assert op.__doc__ and op.__doc__ != str(op.schema)
