"""Scan canonical ops (cumsum, cumprod, cummax, cummin, logcumsumexp) against NumPy oracles: every dtype,
0-dim and empty inputs, layouts, special values, promotion, in-place/out= variants, meta and errors."""

from __future__ import annotations

import numpy as np
import opweave as D
import pytest
from _rsi_support import (
    ALL,
    BOOL,
    COMPLEX,
    FLOATS,
    INTS,
    ORDERED,
    cases,
    check,
    compute_dtype,
    layout_tensor,
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
    return layout_tensor(arr, layout)


def _dim(data, ndim):
    return data.draw(st.integers(-max(ndim, 1), max(ndim, 1) - 1))


def _scan(fn, values, dim):
    """Apply a NumPy accumulate along ``dim`` (0-dim arrays as one element)."""
    if values.ndim == 0:
        return fn(values.reshape(1), axis=0).reshape(())
    return fn(values, axis=dim)


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("name", ["cumsum", "cumprod"])
@settings(max_examples=12, deadline=None)
@given(case=cases(), data=st.data())
def test_cumsum_cumprod(name, dtype, case, data):
    t, values = _input(case, dtype, low=-2, high=2)
    dim = _dim(data, t.ndim)
    expected_dtype = D.int64 if dtype in BOOL + INTS else dtype
    oracle = np.cumsum if name == "cumsum" else np.cumprod
    want = quiet(_scan, oracle, values.astype(compute_dtype(dtype)), dim)
    check(getattr(D, name)(t, dim), want, expected_dtype)
    if not dtype.is_complex:
        want64 = quiet(_scan, oracle, values.astype(np.float64), dim)
        check(getattr(D, name)(t, dim, dtype=D.float64), want64, D.float64)


@pytest.mark.parametrize("dtype", [D.int32, D.float16, D.bool])
def test_cumsum_dtype_argument_and_inplace(dtype):
    values = np.array([[1, 0, 1], [1, 1, 1]]).astype(dtype.numpy)
    t = tensor(values)
    check(D.cumsum(t, 1, dtype=D.float32), np.cumsum(values.astype(np.float32), 1), D.float32)
    if dtype is D.bool:
        with pytest.raises(TypeError, match="cast"):
            t.cumsum_(1)
        return
    result = t.cumsum_(1)
    assert result is t
    check(t, np.cumsum(values.astype(np.float64), 1), dtype)
    result = t.cumprod_(0)
    assert result is t
    check(t, np.cumprod(np.cumsum(values.astype(np.float64), 1), 0), dtype)


def _running(values, axis, better):
    """torch's cummax/cummin rule: x at i becomes the running value when isnan(x) or better(x, running)."""
    moved = np.moveaxis(values, axis, -1)
    out_v, out_i = np.empty_like(moved), np.zeros(moved.shape, np.int64)
    for pos in np.ndindex(*moved.shape[:-1]):
        row, cur, idx = moved[pos], None, 0
        for i, x in enumerate(row):
            if i == 0 or np.isnan(float(x)) or better(x, cur):
                cur, idx = x, i
            out_v[pos + (i,)], out_i[pos + (i,)] = cur, idx
    return np.moveaxis(out_v, -1, axis), np.moveaxis(out_i, -1, axis)


@pytest.mark.parametrize("dtype", ORDERED)
@pytest.mark.parametrize("name", ["cummax", "cummin"])
@settings(max_examples=12, deadline=None)
@given(case=cases(), data=st.data())
def test_cummax_cummin(name, dtype, case, data):
    t, values = _input(case, dtype)
    dim = _dim(data, t.ndim)
    better = (lambda x, cur: x >= cur) if name == "cummax" else (lambda x, cur: x <= cur)
    got_values, got_indices = getattr(D, name)(t, dim)
    flat = values.reshape(1) if values.ndim == 0 else values
    want_values, want_indices = quiet(_running, flat, dim % flat.ndim, better)
    check(got_values, want_values.reshape(values.shape), dtype)
    check(got_indices, want_indices.reshape(values.shape), D.int64)


@pytest.mark.parametrize("dtype", FLOATS)
@settings(max_examples=15, deadline=None)
@given(case=cases(), data=st.data())
def test_logcumsumexp(dtype, case, data):
    t, values = _input(case, dtype)
    dim = _dim(data, t.ndim)
    want = quiet(_scan, np.logaddexp.accumulate, values.astype(np.float64), dim)
    check(D.logcumsumexp(t, dim), want, dtype, atol=1e-6)


@pytest.mark.parametrize("dtype", COMPLEX)
def test_logcumsumexp_complex(dtype):
    values = np.array([[0.5 + 1j, -1 + 0.25j, 2 - 2j], [0j, 1 + 0j, -0.5j]]).astype(dtype.numpy)
    want = np.log(np.cumsum(np.exp(values.astype(np.complex128)), axis=1))
    check(D.logcumsumexp(tensor(values), 1), want, dtype, rtol=1e-5, atol=1e-6)


def test_out_variants():
    t = tensor(np.arange(6).reshape(2, 3))
    out = tensor(np.zeros((2, 3)), D.int64)
    assert ops.cumsum.out(t, 1, out=out) is out
    check(out, np.cumsum(np.arange(6).reshape(2, 3), 1), D.int64)
    values, indices = tensor(np.zeros(1), D.int64), tensor(np.zeros(1), D.int64)
    with pytest.warns(UserWarning, match="resized"):
        ops.cummax.out(t, 0, values=values, indices=indices)
    check(values, np.arange(6).reshape(2, 3), D.int64)
    check(indices, np.array([[0, 0, 0], [1, 1, 1]]), D.int64)
    with pytest.raises(TypeError, match="cast"):
        ops.logcumsumexp.out(tensor([1.0, 2.0]), 0, out=tensor([0, 0]))


META_CASES = [
    ("cumsum", lambda t: D.cumsum(t, 1)),
    ("cumsum_int", lambda t: D.cumsum(D.ops.prims.convert_element_type(t, D.int8), 0)),
    ("cumprod", lambda t: D.cumprod(t, -1, dtype=D.float64)),
    ("cummax", lambda t: D.cummax(t, 0)),
    ("cummin", lambda t: D.cummin(t, 1)),
    ("logcumsumexp", lambda t: D.logcumsumexp(t, 1)),
]


@pytest.mark.parametrize("name,fn", META_CASES, ids=[c[0] for c in META_CASES])
@pytest.mark.parametrize("shape", [(3, 4), (0, 2)])
def test_meta(name, fn, shape):
    t, _ = layout_tensor(np.ones(shape, np.float32), "transposed")
    same_meta(fn, t)


ERROR_CASES = [
    ("dim", lambda: D.cumsum(tensor([1, 2]), 1), ValueError),
    ("dim 0-dim", lambda: D.cumprod(tensor(np.array(1.0)), 1), ValueError),
    ("logcumsumexp int", lambda: D.logcumsumexp(tensor([1, 2]), 0), TypeError),
    ("cummax complex", lambda: D.cummax(tensor([1j]), 0), TypeError),
    ("cumsum complex to real", lambda: D.cumsum(tensor([1j]), 0, dtype=D.float32), TypeError),
]


@pytest.mark.parametrize("name,fn,exc", ERROR_CASES, ids=[c[0] for c in ERROR_CASES])
def test_errors(name, fn, exc):
    with pytest.raises(exc):
        fn()
