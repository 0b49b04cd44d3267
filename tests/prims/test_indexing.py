"""Indexing prims against NumPy oracles: every dtype, layouts, 0-dim/empty inputs, special values."""

from __future__ import annotations

import numpy as np
import opweave as D
import pytest
from _prim_support import (
    ALL,
    COMPLEXES,
    FLOATS,
    INTS,
    LAYOUTS,
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

# -- index generators and oracles ----------------------------------------------------------------------------

INDEX_DTYPES = [D.int64, D.int32]


def index_tensor(data, idx, dtype=None):
    """``(tensor, values)`` for the int array ``idx`` in a drawn index dtype and layout."""
    dtype = dtype or data.draw(st.sampled_from(INDEX_DTYPES))
    return layout_tensor(idx.astype(dtype.numpy), data.draw(st.sampled_from(LAYOUTS)))


def wide(x):
    """Values in a type where the oracles compute exactly (or in float64/complex128)."""
    if x.dtype.kind in "iu":
        return x.astype(np.int64)
    if x.dtype.kind in "fcV" or x.dtype == D.bfloat16.numpy:
        return x.astype(np.complex128 if x.dtype.kind == "c" else np.float64)
    return x.copy()


def scalar_for(dtype, rng):
    """A Python scalar suitable as ``alpha``/``value`` for a tensor of ``dtype``."""
    if dtype.kind == "bool":
        return bool(rng.random() < 0.5)
    if dtype.kind in ("int", "uint"):
        return int(rng.integers(0 if dtype.kind == "uint" else -3, 4))
    v = float(rng.choice([1.5, -2.0, 0.25, np.nan, np.inf]))
    return complex(v, -1.0) if dtype.is_complex else v


def _sizes(shape):
    return tuple(shape) or (1,)


def _gather_index_shape(rng, sizes, d, bound_extra=3):
    shape = [int(rng.integers(0, n + 1)) for n in sizes]
    shape[d] = int(rng.integers(0, bound_extra + 1)) if sizes[d] else 0
    return shape


@pytest.mark.parametrize("dtype", ALL, ids=lambda d: d.name)
@settings(max_examples=10, deadline=None)
@given(case=cases(), data=st.data())
def test_gather(dtype, case, data):
    shape, layout, rng, special = case
    t, x = layout_tensor(sample(rng, shape, dtype, special), layout)
    sizes = _sizes(shape)
    d = data.draw(dim_for(len(shape))) % len(sizes)
    ishape = _gather_index_shape(rng, sizes, d)
    if not shape and rng.random() < 0.5:
        ishape = []  # 0-dim index into a 0-dim tensor
    ti, idx = index_tensor(data, rng.integers(0, max(sizes[d], 1), ishape))
    before = t.numpy().copy()
    out = P.gather(t, d, ti)
    xs, ii = x.reshape(sizes), idx.reshape(_sizes(idx.shape))
    want = np.empty(ii.shape, x.dtype)
    for pos in np.ndindex(ii.shape):
        src = list(pos)
        src[d] = ii[pos]
        want[pos] = xs[tuple(src)]
    check(out, want.reshape(idx.shape), dtype)
    check_meta(out, P.gather(meta_of(t), d, meta_of(ti)))
    unchanged(t, before)


def _scatter_inputs(data, dtype, case):
    shape, layout, rng, special = case
    t, x = layout_tensor(sample(rng, shape, dtype, special), layout)
    sizes = _sizes(shape)
    d = data.draw(dim_for(len(shape))) % len(sizes)
    ishape = _gather_index_shape(rng, sizes, d)
    if not shape:
        ishape = [min(ishape[0], 1)]
    ti, idx = index_tensor(data, rng.integers(0, max(sizes[d], 1), ishape))
    sshape = [n + int(rng.integers(0, 2)) for n in ishape]
    ts, src = layout_tensor(sample(rng, sshape, dtype, special), data.draw(st.sampled_from(LAYOUTS)))
    writes = []
    for pos in np.ndindex(idx.shape):
        target = list(pos)
        target[d] = idx[pos]
        writes.append((tuple(target), src[pos]))
    return t, x, d, ti, ts, writes


def _finish(out_wide, x, dtype):
    with np.errstate(all="ignore"):
        return out_wide.astype(dtype.numpy).reshape(x.shape)


@pytest.mark.parametrize("dtype", ALL, ids=lambda d: d.name)
@settings(max_examples=10, deadline=None)
@given(case=cases(), data=st.data())
def test_scatter_last_write_wins(dtype, case, data):
    t, x, d, ti, ts, writes = _scatter_inputs(data, dtype, case)
    before = t.numpy().copy()
    out = P.scatter(t, d, ti, ts)
    want = x.copy().reshape(_sizes(x.shape))
    for target, v in writes:
        want[target] = v
    check(out, want.reshape(x.shape), dtype)
    check_meta(out, P.scatter(meta_of(t), d, meta_of(ti), meta_of(ts)))
    unchanged(t, before)


@pytest.mark.parametrize("dtype", ALL, ids=lambda d: d.name)
@settings(max_examples=10, deadline=None)
@given(case=cases(), data=st.data())
def test_scatter_add(dtype, case, data):
    t, x, d, ti, ts, writes = _scatter_inputs(data, dtype, case)
    out = P.scatter_add(t, d, ti, ts)
    want = wide(x).reshape(_sizes(x.shape))
    for target, v in writes:
        want[target] = want[target] | v if dtype.kind == "bool" else want[target] + wide(np.asarray(v))
    check(out, _finish(want, x, dtype), dtype)
    check_meta(out, P.scatter_add(meta_of(t), d, meta_of(ti), meta_of(ts)))


IDENTITY = {"sum": 0, "mean": 0, "prod": 1, "amax": -np.inf, "amin": np.inf}


def _reduce(start, values, reduce, dtype, count):
    """torch's order: from ``start`` (the element itself, or the reduction's identity), fold ``values`` in."""
    acc = wide(np.asarray(start))
    for v in values:
        v = wide(np.asarray(v))
        if reduce in ("amax", "amin"):
            # torch: a NaN source wins; a NaN accumulator stays
            if np.isnan(v):
                acc = v
            elif not np.isnan(acc):
                acc = max(acc, v) if reduce == "amax" else min(acc, v)
        else:
            acc = acc * v if reduce == "prod" else acc + v
    if reduce != "mean":
        return acc
    if dtype.kind in ("int", "uint"):  # the wrapped sum, floor-divided by the count
        return np.floor_divide(np.asarray(acc).astype(dtype.numpy).astype(np.int64), count)
    # a complex sum is divided by a complex count, as torch (whose count tensor has the input's dtype)
    if dtype.is_complex:  # the ufunc's division (torch's too): (inf+0j) / (1+0j) is inf+nanj
        return np.divide(np.array([acc]), np.array([count], np.complex128))[0]
    return acc / count


SCATTER_REDUCE_CASES = [(r, dt) for r in ("sum", "prod", "mean") for dt in INTS + FLOATS + COMPLEXES] + [
    (r, dt) for r in ("amax", "amin") for dt in INTS + FLOATS
]


@pytest.mark.parametrize(
    ("reduce", "dtype"), SCATTER_REDUCE_CASES, ids=[f"{r}-{d.name}" for r, d in SCATTER_REDUCE_CASES]
)
@settings(max_examples=10, deadline=None)
@given(case=cases(), data=st.data(), include_self=st.booleans())
def test_scatter_reduce(reduce, dtype, case, data, include_self):
    t, x, d, ti, ts, writes = _scatter_inputs(data, dtype, case)
    out = P.scatter_reduce(t, d, ti, ts, reduce, include_self)
    xs = x.reshape(_sizes(x.shape))
    groups = {}
    for target, v in writes:
        groups.setdefault(target, []).append(v)
    want = wide(xs)
    for target, vals in groups.items():
        start = xs[target] if include_self else IDENTITY[reduce]
        with np.errstate(all="ignore"):
            want[target] = _reduce(start, vals, reduce, dtype, len(vals) + include_self)
    check(out, _finish(want, x, dtype), dtype)
    check_meta(out, P.scatter_reduce(meta_of(t), d, meta_of(ti), meta_of(ts), reduce, include_self))


def _vector_index(data, rng, size, n_max=4, allow_negative=False):
    n = int(rng.integers(0, n_max + 1)) if size else 0
    lo = -size if allow_negative else 0
    idx = rng.integers(lo, max(size, 1), n)
    if n == 1 and data.draw(st.booleans()):
        idx = idx.reshape(())
    return index_tensor(data, idx)


@pytest.mark.parametrize("dtype", ALL, ids=lambda d: d.name)
@settings(max_examples=10, deadline=None)
@given(case=cases(), data=st.data())
def test_index_select(dtype, case, data):
    shape, layout, rng, special = case
    t, x = layout_tensor(sample(rng, shape, dtype, special), layout)
    d = data.draw(dim_for(len(shape))) % max(len(shape), 1)
    if not shape:
        ti, idx = index_tensor(data, np.zeros((1,) if data.draw(st.booleans()) else (), np.int64))
        want = x.copy()
    else:
        ti, idx = _vector_index(data, rng, shape[d])
        want = np.take(x, idx.reshape(-1), axis=d)
    out = P.index_select(t, d, ti)
    check(out, want, dtype)
    check_meta(out, P.index_select(meta_of(t), d, meta_of(ti)))


def _source_for(data, rng, dtype, shape, d, n, special):
    sshape = list(_sizes(shape))
    sshape[d] = n
    if not shape:
        sshape = [] if data.draw(st.booleans()) else [1]
    return layout_tensor(sample(rng, sshape, dtype, special), data.draw(st.sampled_from(LAYOUTS)))


def _index_source_case(data, dtype, case, allow_negative=False):
    shape, layout, rng, special = case
    t, x = layout_tensor(sample(rng, shape, dtype, special), layout)
    d = data.draw(dim_for(len(shape))) % max(len(shape), 1)
    size = _sizes(shape)[d]
    ti, idx = _vector_index(data, rng, size, n_max=4 if shape else 1, allow_negative=allow_negative)
    if not shape:
        ti, idx = index_tensor(data, np.zeros(1, np.int64))
    return t, x, d, ti, idx.reshape(-1), rng, special


@pytest.mark.parametrize("dtype", ALL, ids=lambda d: d.name)
@settings(max_examples=10, deadline=None)
@given(case=cases(), data=st.data())
def test_index_add(dtype, case, data):
    t, x, d, ti, idx, rng, special = _index_source_case(data, dtype, case)
    ts, src = _source_for(data, rng, dtype, x.shape, d, idx.size, special)
    alpha = scalar_for(dtype, rng)
    if dtype.kind != "bool" and dtype.kind != "complex" and isinstance(alpha, float) and dtype.kind != "float":
        alpha = 2
    before = t.numpy().copy()
    out = P.index_add(t, d, ti, ts, alpha)
    want = wide(x).reshape(_sizes(x.shape))
    s = wide(src).reshape(_sizes(src.shape))
    with np.errstate(all="ignore"):
        for j, i in enumerate(idx):
            sl = (slice(None),) * d
            if dtype.kind == "bool":
                want[(*sl, i)] |= s[(*sl, j)] & alpha
            else:
                # 16-bit floats: the kernel rounds alpha * source to the dtype's compute precision first
                want[(*sl, i)] += s[(*sl, j)] * alpha
    check(out, _finish(want, x, dtype), dtype, rtol=None if dtype not in (D.float16, D.bfloat16) else 2e-2)
    check_meta(out, P.index_add(meta_of(t), d, meta_of(ti), meta_of(ts), alpha))
    unchanged(t, before)


@pytest.mark.parametrize("dtype", ALL, ids=lambda d: d.name)
@settings(max_examples=10, deadline=None)
@given(case=cases(), data=st.data())
def test_index_copy_last_wins(dtype, case, data):
    t, x, d, ti, idx, rng, special = _index_source_case(data, dtype, case)
    ts, src = _source_for(data, rng, dtype, x.shape, d, idx.size, special)
    out = P.index_copy(t, d, ti, ts)
    want = x.copy().reshape(_sizes(x.shape))
    s = src.reshape(_sizes(src.shape))
    for j, i in enumerate(idx):
        sl = (slice(None),) * d
        want[(*sl, i)] = s[(*sl, j)]
    check(out, want.reshape(x.shape), dtype)
    check_meta(out, P.index_copy(meta_of(t), d, meta_of(ti), meta_of(ts)))


@pytest.mark.parametrize("dtype", ALL, ids=lambda d: d.name)
@settings(max_examples=10, deadline=None)
@given(case=cases(), data=st.data())
def test_index_fill(dtype, case, data):
    t, x, d, ti, idx, rng, _ = _index_source_case(data, dtype, case, allow_negative=True)
    value = scalar_for(dtype, rng)
    if dtype.kind in ("int", "uint") or dtype.kind == "bool":
        value = value if not isinstance(value, float) else 1
    out = P.index_fill(t, d, ti, value)
    want = x.copy().reshape(_sizes(x.shape))
    size = want.shape[d]
    for i in idx:
        with np.errstate(all="ignore"):
            want[(*(slice(None),) * d, i % size)] = np.array(value).astype(dtype.numpy)
    check(out, want.reshape(x.shape), dtype)
    check_meta(out, P.index_fill(meta_of(t), d, meta_of(ti), value))


def _advanced_indices(data, rng, shape):
    """Index entries for ``shape`` (None or int arrays that broadcast together) and the NumPy key."""
    m = data.draw(st.integers(0, len(shape)))
    bshape = [int(rng.integers(0, 4)) for _ in range(int(rng.integers(0, 3)))]
    entries, key = [], []
    for k in range(m):
        if shape[k] == 0 or rng.random() < 0.3:
            entries.append(None)
            key.append(slice(None))
            continue
        own = bshape[int(rng.integers(0, len(bshape) + 1)) :]
        own = [1 if rng.random() < 0.3 else n for n in own]
        ti, idx = index_tensor(data, rng.integers(-shape[k], shape[k], own))
        entries.append(ti)
        key.append(idx)
    return entries, tuple(key)


@pytest.mark.parametrize("dtype", ALL, ids=lambda d: d.name)
@settings(max_examples=12, deadline=None)
@given(case=cases(), data=st.data())
def test_index_follows_numpy_advanced_indexing(dtype, case, data):
    shape, layout, rng, special = case
    t, x = layout_tensor(sample(rng, shape, dtype, special), layout)
    entries, key = _advanced_indices(data, rng, shape)
    before = t.numpy().copy()
    out = P.index(t, entries)
    check(out, x[key], dtype)
    check_meta(out, P.index(meta_of(t), [None if e is None else meta_of(e) for e in entries]))
    unchanged(t, before)


def test_index_non_adjacent_tensors_go_first():
    x = np.arange(24.0).reshape(2, 3, 4)
    i, j = np.array([[0], [1]]), np.array([1, 3, 0])
    out = P.index(D.from_numpy(x), [D.from_numpy(i), None, D.from_numpy(j)])
    assert out.shape == (2, 3, 3)
    np.testing.assert_array_equal(out.numpy(), x[i, :, j])
    out = P.index(D.from_numpy(x), [None, D.from_numpy(np.array([2, -1])), D.from_numpy(np.array([0, 3]))])
    np.testing.assert_array_equal(out.numpy(), x[:, [2, -1], [0, 3]])


@pytest.mark.parametrize("dtype", ALL, ids=lambda d: d.name)
@settings(max_examples=12, deadline=None)
@given(case=cases(), data=st.data(), accumulate=st.booleans())
def test_index_put(dtype, case, data, accumulate):
    shape, layout, rng, special = case
    t, x = layout_tensor(sample(rng, shape, dtype, special), layout)
    entries, key = _advanced_indices(data, rng, shape)
    target = x[key].shape
    vshape = list(target[int(rng.integers(0, len(target) + 1)) :])
    vshape = [1 if rng.random() < 0.3 else n for n in vshape]
    if rng.random() < 0.2:
        vshape = [1, *vshape]
    tv, v = layout_tensor(sample(rng, vshape, dtype, special), data.draw(st.sampled_from(LAYOUTS)))
    before = t.numpy().copy()
    out = P.index_put(t, entries, tv, accumulate)
    vb = np.broadcast_to(v.reshape(v.shape[1:]) if len(v.shape) > len(target) else v, target)
    want = wide(x)
    with np.errstate(all="ignore"):
        if accumulate:
            np.add.at(want, key, wide(vb))  # duplicates add up (bool: or)
        else:
            want[key] = wide(vb)  # NumPy assigns in order: the last duplicate wins
    check(out, _finish(want, x, dtype), dtype)
    check_meta(
        out, P.index_put(meta_of(t), [None if e is None else meta_of(e) for e in entries], meta_of(tv), accumulate)
    )
    unchanged(t, before)


@pytest.mark.parametrize("dtype", ALL, ids=lambda d: d.name)
@settings(max_examples=10, deadline=None)
@given(case=cases(), data=st.data())
def test_masked_select_scatter_nonzero(dtype, case, data):
    shape, layout, rng, special = case
    t, x = layout_tensor(sample(rng, shape, dtype, special), layout)
    tm, m = layout_tensor(np.asarray(rng.random(shape) < 0.5), data.draw(st.sampled_from(LAYOUTS)))
    check(P.masked_select(t, tm), x[m], dtype)
    n = int(m.sum())
    ts, src = layout_tensor(sample(rng, [n + int(rng.integers(0, 3))], dtype, special), "contiguous")
    out = P.masked_scatter(t, tm, ts)
    want = x.copy()
    want[m] = src[:n]
    check(out, want, dtype)
    check_meta(out, P.masked_scatter(meta_of(t), meta_of(tm), meta_of(ts)))
    nz = x != 0 if dtype.kind == "bool" else wide(x) != 0  # NaN counts as nonzero
    check(P.nonzero(t), np.argwhere(nz), D.int64)


@pytest.mark.parametrize("dtype", ALL, ids=lambda d: d.name)
@settings(max_examples=10, deadline=None)
@given(case=cases(), data=st.data(), accumulate=st.booleans())
def test_take_and_put(dtype, case, data, accumulate):
    shape, layout, rng, special = case
    t, x = layout_tensor(sample(rng, shape, dtype, special), layout)
    n = x.size
    ishape = [int(rng.integers(0, 4)) for _ in range(int(rng.integers(0, 3)))] if n else [0]
    ti, idx = index_tensor(data, rng.integers(-n, max(n, 1), ishape))
    check(P.take(t, ti), x.reshape(-1)[idx % max(n, 1)] if n else np.zeros(idx.shape, x.dtype), dtype)
    check_meta(P.take(t, ti), P.take(meta_of(t), meta_of(ti)))
    ts, src = layout_tensor(sample(rng, [idx.size], dtype, special), "contiguous")
    before = t.numpy().copy()
    out = P.put(t, ti, ts, accumulate)
    flat = wide(x).reshape(-1)
    with np.errstate(all="ignore"):
        for i, v in zip(idx.reshape(-1), src):
            if accumulate:
                flat[i] = flat[i] | v if dtype.kind == "bool" else flat[i] + wide(np.asarray(v))
            else:
                flat[i] = wide(np.asarray(v))
    check(out, _finish(flat, x, dtype), dtype)
    check_meta(out, P.put(meta_of(t), meta_of(ti), meta_of(ts), accumulate))
    unchanged(t, before)


@pytest.mark.parametrize("dtype", INTS + FLOATS, ids=lambda d: d.name)
@settings(max_examples=12, deadline=None)
@given(case=cases(), data=st.data(), right=st.booleans())
def test_searchsorted(dtype, case, data, right):
    shape, layout, rng, special = case
    tv, v = layout_tensor(sample(rng, shape, dtype, special), layout)
    n = int(rng.integers(0, 6))
    nd_seq = shape and data.draw(st.booleans())
    seq_shape = [*shape[:-1], n] if nd_seq else [n]
    seq = np.sort(sample(rng, seq_shape, dtype).astype(np.float64), axis=-1).astype(dtype.numpy)
    ts, seq = layout_tensor(seq, "contiguous" if nd_seq else data.draw(st.sampled_from(LAYOUTS)))
    out = P.searchsorted(ts, tv, right)
    side = "right" if right else "left"
    if nd_seq:
        want = np.zeros(v.shape, np.int64)
        for pos in np.ndindex(v.shape[:-1]):
            want[pos] = np.searchsorted(seq[pos].astype(np.float64), v[pos].astype(np.float64), side)
    else:
        want = np.searchsorted(seq.astype(np.float64), v.astype(np.float64), side)  # NaN values go last
    check(out, want, D.int64)
    check_meta(out, P.searchsorted(meta_of(ts), meta_of(tv), right))


WEIGHTS = [None, D.float32, D.float64, D.float16, D.int32, D.bool]


@pytest.mark.parametrize("dtype", INTS, ids=lambda d: d.name)
@pytest.mark.parametrize("weights", WEIGHTS, ids=lambda d: "none" if d is None else d.name)
@settings(max_examples=8, deadline=None)
@given(case=cases(min_ndim=1, max_ndim=1, max_size=8), minlength=st.integers(0, 9))
def test_bincount(dtype, weights, case, minlength):
    shape, layout, rng, _ = case
    t, x = layout_tensor(rng.integers(0, 7, shape).astype(dtype.numpy), layout)
    if weights is None:
        check(P.bincount(t, None, minlength), np.bincount(x.astype(np.int64), minlength=minlength), D.int64)
        return
    tw, w = layout_tensor(sample(rng, shape, weights), "contiguous")
    out_dtype = D.float32 if weights is D.float32 else D.float64
    want = np.bincount(x.astype(np.int64), weights=w.astype(np.float64), minlength=minlength)
    check(P.bincount(t, tw, minlength), want, out_dtype)


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.name)
@settings(max_examples=20, deadline=None)
@given(case=cases(), bins=st.integers(1, 6), lo=st.integers(-4, 4), width=st.integers(0, 5))
def test_histc(dtype, case, bins, lo, width):
    shape, layout, rng, special = case
    special = special and width > 0  # the data-derived range must be finite
    t, x = layout_tensor(sample(rng, shape, dtype, special), layout)
    out = P.histc(t, bins, lo, lo + width)
    values = x.astype(np.float64).reshape(-1)
    first, last = float(lo), float(lo + width)
    if first == last and values.size:
        first, last = values.min(), values.max()  # torch: min == max uses the data's range
    if first == last:
        first, last = first - 1, last + 1
    keep = values[(values >= first) & (values <= last)]  # NaN and outside values are ignored
    want, _ = np.histogram(keep, bins, range=(first, last))  # the last bin includes its right edge
    check(out, want, dtype)
    check_meta(out, P.histc(meta_of(t), bins, lo, lo + width))


@pytest.mark.parametrize("dtype", INDEX_DTYPES, ids=lambda d: d.name)
@settings(max_examples=12, deadline=None)
@given(case=cases(min_ndim=1, max_ndim=1, max_size=6))
def test_repeat_interleave(dtype, case):
    shape, layout, rng, _ = case
    t, r = layout_tensor(rng.integers(0, 4, shape).astype(dtype.numpy), layout)
    check(P.repeat_interleave(t), np.repeat(np.arange(r.size), r), dtype)


# -- invalid inputs ------------------------------------------------------------------------------------------


def _t(x, dtype=None):
    return D.from_numpy(np.asarray(x, dtype))


A = np.arange(6.0).reshape(2, 3)
I64 = np.int64


def _oob(op, n, dim, size):
    return pytest.raises(
        D.IndexOutOfBoundsError, match=f"prims::{op}: index {n} is out of bounds for dim {dim} with size {size}"
    )


def test_out_of_bounds_indices_raise_index_errors():
    with _oob("gather", 3, 1, 3):
        P.gather(_t(A), 1, _t([[3]], I64))
    with _oob("gather", -1, 0, 2):
        P.gather(_t(A), 0, _t([[-1]], I64))
    with _oob("scatter", 2, 0, 2):
        P.scatter(_t(A), 0, _t([[2]], I64), _t([[1.0]]))
    with _oob("scatter_add", 5, 1, 3):
        P.scatter_add(_t(A), -1, _t([[5]], np.int32), _t([[1.0]]))
    with _oob("scatter_reduce", 3, 1, 3):
        P.scatter_reduce(_t(A), 1, _t([[3]], I64), _t([[1.0]]), "sum", True)
    with _oob("index_select", 3, 1, 3):
        P.index_select(_t(A), 1, _t([0, 3], I64))
    with _oob("index_add", -1, 0, 2):
        P.index_add(_t(A), 0, _t([-1], I64), _t([[1.0, 1, 1]]), 1)
    with _oob("index_copy", 2, 0, 2):
        P.index_copy(_t(A), 0, _t([2], I64), _t([[1.0, 1, 1]]))
    with _oob("index_fill", -4, 1, 3):
        P.index_fill(_t(A), 1, _t([-4], I64), 0.0)
    with _oob("index", 3, 1, 3):
        P.index(_t(A), [None, _t([0, 3], I64)])
    with _oob("index", -3, 0, 2):
        P.index(_t(A), [_t([-3], np.int32)])
    with _oob("index_put", 2, 0, 2):
        P.index_put(_t(A), [_t([2], I64)], _t(1.0), False)
    with _oob("take", 6, 0, 6):
        P.take(_t(A), _t([6], I64))
    with _oob("put", -7, 0, 6):
        P.put(_t(A), _t([-7], I64), _t([1.0]), True)
    with _oob("gather", 0, 0, 0):
        P.gather(_t(np.zeros((0, 2))), 0, _t(np.zeros((1, 1)), I64))


def test_negative_indices_wrap_where_torch_wraps():
    check(P.index_fill(_t(A), 1, _t([-1], I64), -5.0), [[0, 1, -5], [3, 4, -5]], D.float64)
    check(P.take(_t(A), _t([-1, -6], I64)), [5.0, 0.0], D.float64)
    check(P.put(_t(A), _t([-1], I64), _t([9.0]), False), [[0, 1, 2], [3, 4, 9]], D.float64)
    check(P.index(_t(A), [_t([-1], I64), _t([-3], I64)]), [3.0], D.float64)


INVALID = [
    ("gather float index", TypeError, lambda: P.gather(_t(A), 0, _t([[0.0]]))),
    ("gather ndim", ValueError, lambda: P.gather(_t(A), 0, _t([0], I64))),
    ("gather size", ValueError, lambda: P.gather(_t(A), 0, _t(np.zeros((1, 4)), I64))),
    ("gather dim", ValueError, lambda: P.gather(_t(A), 2, _t([[0]], I64))),
    ("scatter src dtype", TypeError, lambda: P.scatter(_t(A), 0, _t([[0]], I64), _t([[1.0]], np.float32))),
    ("scatter src size", ValueError, lambda: P.scatter(_t(A), 0, _t([[0, 1]], I64), _t([[1.0]]))),
    ("scatter_add bool index", TypeError, lambda: P.scatter_add(_t(A), 0, _t([[True]]), _t([[1.0]]))),
    ("scatter_reduce reduce", ValueError, lambda: P.scatter_reduce(_t(A), 0, _t([[0]], I64), _t([[1.0]]), "max", True)),
    (
        "scatter_reduce amax complex",
        TypeError,
        lambda: P.scatter_reduce(_t(A + 0j), 0, _t([[0]], I64), _t([[1j]]), "amax", True),
    ),
    ("scatter_reduce bool", TypeError, lambda: P.scatter_reduce(_t([True]), 0, _t([0], I64), _t([True]), "sum", True)),
    ("index_select 2-d index", ValueError, lambda: P.index_select(_t(A), 0, _t([[0]], I64))),
    ("index_select 0-dim a", ValueError, lambda: P.index_select(_t(1.0), 0, _t([0, 0], I64))),
    ("index_select int16 index", TypeError, lambda: P.index_select(_t(A), 0, _t([0], np.int16))),
    ("index_add source shape", ValueError, lambda: P.index_add(_t(A), 0, _t([0], I64), _t([[1.0, 2.0]]), 1)),
    ("index_add float alpha", TypeError, lambda: P.index_add(_t([1, 2]), 0, _t([0], I64), _t([1]), 0.5)),
    ("index_add complex alpha", TypeError, lambda: P.index_add(_t([1.0]), 0, _t([0], I64), _t([1.0]), 1j)),
    ("index_add bool alpha", TypeError, lambda: P.index_add(_t([1]), 0, _t([0], I64), _t([1]), True)),
    ("index_add source dtype", TypeError, lambda: P.index_add(_t([1.0]), 0, _t([0], I64), _t([1]), 1)),
    ("index_copy source shape", ValueError, lambda: P.index_copy(_t(A), 1, _t([0, 1], I64), _t(np.ones((2, 3))))),
    ("index_fill complex value", TypeError, lambda: P.index_fill(_t(A), 0, _t([0], I64), 1j)),
    ("index_fill 2-d index", ValueError, lambda: P.index_fill(_t(A), 0, _t([[0]], I64), 1.0)),
    ("index bool", TypeError, lambda: P.index(_t(A), [_t([True, False])])),
    ("index float", TypeError, lambda: P.index(_t(A), [_t([0.0])])),
    ("index too many", ValueError, lambda: P.index(_t(A), [None, None, _t([0], I64)])),
    ("index broadcast", ValueError, lambda: P.index(_t(A), [_t([0, 1], I64), _t([0, 1, 2], I64)])),
    ("index_put values shape", ValueError, lambda: P.index_put(_t(A), [_t([0, 1], I64)], _t([1.0, 2.0]), False)),
    ("index_put values dtype", TypeError, lambda: P.index_put(_t(A), [_t([0], I64)], _t(1), False)),
    ("masked_select mask dtype", TypeError, lambda: P.masked_select(_t(A), _t(np.ones((2, 3), np.uint8)))),
    ("masked_select mask shape", ValueError, lambda: P.masked_select(_t(A), _t(np.ones((3,), bool)))),
    ("masked_scatter too few", ValueError, lambda: P.masked_scatter(_t(A), _t(np.ones((2, 3), bool)), _t([1.0]))),
    ("masked_scatter dtype", TypeError, lambda: P.masked_scatter(_t(A), _t(np.ones((2, 3), bool)), _t([1]))),
    ("take float index", TypeError, lambda: P.take(_t(A), _t([0.0]))),
    ("put numel", ValueError, lambda: P.put(_t(A), _t([0, 1], I64), _t([1.0]), False)),
    ("searchsorted dtypes", TypeError, lambda: P.searchsorted(_t([1.0, 2.0]), _t([1]), False)),
    ("searchsorted bool", TypeError, lambda: P.searchsorted(_t([True]), _t([True]), False)),
    ("searchsorted 0-dim", ValueError, lambda: P.searchsorted(_t(1.0), _t([1.0]), False)),
    ("searchsorted leading", ValueError, lambda: P.searchsorted(_t(np.ones((2, 3))), _t(np.ones((3, 1))), False)),
    ("bincount 2-d", ValueError, lambda: P.bincount(_t([[1]]), None, 0)),
    ("bincount float", TypeError, lambda: P.bincount(_t([1.0]), None, 0)),
    ("bincount negative", ValueError, lambda: P.bincount(_t([1, -1]), None, 0)),
    ("bincount minlength", ValueError, lambda: P.bincount(_t([1]), None, -1)),
    ("bincount weights", ValueError, lambda: P.bincount(_t([1]), _t([1.0, 2.0]), 0)),
    ("bincount complex weights", TypeError, lambda: P.bincount(_t([1]), _t([1j]), 0)),
    ("histc bins", ValueError, lambda: P.histc(_t([1.0]), 0, 0, 1)),
    ("histc min > max", ValueError, lambda: P.histc(_t([1.0]), 3, 2, 1)),
    ("histc int", TypeError, lambda: P.histc(_t([1]), 3, 0, 1)),
    ("histc inf", ValueError, lambda: P.histc(_t([1.0]), 3, 0, float("inf"))),
    ("histc nan data", ValueError, lambda: P.histc(_t([1.0, np.nan]), 3, 0, 0)),
    ("repeat_interleave negative", ValueError, lambda: P.repeat_interleave(_t([1, -1]))),
    ("repeat_interleave 2-d", ValueError, lambda: P.repeat_interleave(_t([[1]]))),
    ("repeat_interleave float", TypeError, lambda: P.repeat_interleave(_t([1.0]))),
]


@pytest.mark.parametrize(("what", "exc", "call"), INVALID, ids=[c[0] for c in INVALID])
def test_invalid_inputs(what, exc, call):
    op = what.split()[0]
    with pytest.raises(exc, match=f"prims::{op}"):
        call()


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("masked_select", lambda m: (m(A), m(np.ones((2, 3), bool)))),
        ("nonzero", lambda m: (m(A),)),
        ("bincount", lambda m: (m(np.ones(3, I64)), None, 0)),
        ("repeat_interleave", lambda m: (m(np.ones(3, I64)),)),
    ],
)
def test_dynamic_shapes_validate_then_refuse_meta(name, args):
    op = getattr(P, name)
    assert "dynamic_output_shape" in op.default.tags
    with pytest.raises(NotImplementedError, match=f"prims::{name}"):
        op(*args(lambda x: meta_of(_t(x))))


def test_meta_validates_like_cpu():
    m = meta_of(_t(A))
    with pytest.raises(TypeError, match="prims::gather"):
        P.gather(m, 0, meta_of(_t([[0.0]])))
    with pytest.raises(ValueError, match="prims::index"):
        P.index(m, [meta_of(_t([0, 1], I64)), meta_of(_t([0, 1, 2], I64))])
    with pytest.raises(TypeError, match="prims::nonzero"):
        P.nonzero(meta_of(_t(A), D.float8_e4m3fn))


def test_mixed_devices_raise_runtime_error():
    with pytest.raises(RuntimeError):
        P.gather(_t(A), 0, meta_of(_t([[0]], I64)))


def test_tags_and_docs():
    for name in ("scatter", "index_put"):
        assert "nondeterministic_bitwise" in getattr(P, name).default.tags
    names = [
        "gather", "scatter", "scatter_add", "scatter_reduce", "index_select", "index_add", "index_copy",
        "index_fill", "index", "index_put", "masked_select", "masked_scatter", "nonzero", "take", "put",
        "searchsorted", "bincount", "histc", "repeat_interleave",
    ]  # fmt: skip
    for name in names:
        op = getattr(P, name).default
        assert op.__doc__ and op.__doc__ != str(op.schema)


def test_small_examples():
    check(P.scatter_reduce(_t([1, 2, 3]), 0, _t([0, 0, 2], I64), _t([4, 7, -3]), "mean", True), [4, 2, 0], D.int64)
    check(
        P.scatter_reduce(_t([1.0, 5.0]), 0, _t([0, 0], I64), _t([np.nan, 2.0]), "amax", False), [np.nan, 5], D.float64
    )
    check(P.histc(_t([0.0, 1.0, 2.0, 2.0]), 2, 0, 2), [1, 3], D.float64)
    check(P.histc(_t([3.0, 3.0]), 2, 0, 0), [0, 2], D.float64)  # range [2, 4]
    check(P.bincount(_t([2, 0]), None, 0), [1, 0, 1], D.int64)
    check(P.bincount(_t(np.zeros(0, I64)), None, 0), np.zeros(0), D.int64)
    check(P.searchsorted(_t([1.0, 2.0, 2.0]), _t([2.0, np.nan]), False), [1, 3], D.int64)
    check(P.searchsorted(_t([1.0, 2.0, 2.0]), _t([2.0, -np.inf]), True), [3, 0], D.int64)
    check(P.index_select(_t(A), 0, _t(1, I64)), [[3.0, 4.0, 5.0]], D.float64)
    check(P.put(_t([1, 2]), _t([0, 0], I64), _t([5, 6]), True), [12, 2], D.int64)
