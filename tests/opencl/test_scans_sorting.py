"""OpenCL scans, sorts, selections, unique and searchsorted against NumPy, with no CPU fallback."""

from __future__ import annotations

import contextlib

import numpy as np
import opweave as ow
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from opweave import _fallback

P = ow.ops.prims
REAL = [np.float32, np.float64, np.int64, np.int32, np.int8, np.uint8]


def dev(a, layout: str = "contiguous"):
    a = np.array(a, order="C")
    if layout == "transposed" and a.ndim >= 2:
        return ow.tensor(np.array(np.swapaxes(a, -1, -2), order="C")).to("opencl").transpose(-1, -2)
    if layout == "strided" and a.ndim >= 1:
        return ow.tensor(np.repeat(a, 2, axis=-1)).to("opencl")[..., ::2]
    return ow.tensor(a).to("opencl")


def host(t):
    return t.numpy(force=True)


@contextlib.contextmanager
def on_device():
    """Fail if a prim ran through the CPU fallback inside the block."""
    before = sum(_fallback.calls.values())
    yield
    assert sum(_fallback.calls.values()) == before, f"CPU fallback ran: {_fallback.calls}"


def _values(rng, shape, dtype, specials=True):
    if np.issubdtype(dtype, np.floating):
        x = np.asarray(rng.integers(-4, 5, size=shape), dtype)  # ties
        if specials and x.size > 3:
            x.flat[0], x.flat[1], x.flat[2] = np.nan, -0.0, np.inf
        return x
    info = np.iinfo(dtype)
    return np.asarray(rng.integers(max(info.min, -50), min(info.max, 50), size=shape), dtype)


def _stable_order(row, descending: bool) -> np.ndarray:
    """Stable sort positions of a 1-D row: NaN is the largest value, ties keep their order."""

    def key(i):
        v = float(row[i])
        nan = np.isnan(v)
        return (not nan, -v if not nan else 0.0) if descending else (nan, v if not nan else 0.0)

    return np.array(sorted(range(len(row)), key=key), np.int64)


shapes = st.lists(st.integers(0, 5), min_size=1, max_size=3).map(tuple)
layouts = st.sampled_from(["contiguous", "transposed", "strided"])


@settings(max_examples=25, deadline=None)
@given(shapes, layouts, st.sampled_from(REAL), st.integers(0, 2**31))
def test_scans_match_numpy_accumulate(ocl, shape, layout, dtype, seed):
    rng = np.random.default_rng(seed)
    x = _values(rng, shape, dtype)
    d = int(rng.integers(0, len(shape)))
    t = dev(x, layout)
    with on_device(), np.errstate(all="ignore"):
        np.testing.assert_array_equal(host(P.cumsum(t, d)), np.cumsum(x, d, dtype=dtype))
        np.testing.assert_array_equal(host(P.cumprod(t, d)), np.cumprod(x, d, dtype=dtype))
        values, indices = P.cummax(t, d)
        want = np.maximum.accumulate(x, d) if x.size else x
        if np.issubdtype(dtype, np.floating):  # NaN propagates, as torch.cummax
            want = np.where(np.maximum.accumulate(np.isnan(x), d), np.nan, np.fmax.accumulate(x, d)) if x.size else x
        np.testing.assert_array_equal(host(values), want)
        assert host(indices).dtype == np.int64
        if x.size and not np.issubdtype(dtype, np.floating):  # each index points at its running maximum
            np.testing.assert_array_equal(np.take_along_axis(x, host(indices), d), want)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_logcumsumexp_matches_the_stable_formula(ocl, dtype):
    x = np.random.default_rng(1).standard_normal((4, 37)).astype(dtype) * 30
    x[0, 3] = -np.inf
    with on_device():
        got = host(P.logcumsumexp(dev(x), 1))
    want = np.logaddexp.accumulate(x.astype(np.float64), axis=1)
    np.testing.assert_allclose(got, want, rtol=1e-5 if dtype == np.float32 else 1e-12)


@settings(max_examples=25, deadline=None)
@given(shapes, layouts, st.sampled_from(REAL), st.booleans(), st.integers(0, 2**31))
def test_sort_is_numpys_stable_sort_with_nan_last(ocl, shape, layout, dtype, descending, seed):
    rng = np.random.default_rng(seed)
    x = _values(rng, shape, dtype)
    d = int(rng.integers(0, len(shape)))
    with on_device():
        values, indices = P.sort(dev(x, layout), d, descending, True)
    order = np.apply_along_axis(_stable_order, d, x, descending) if x.size else np.zeros(x.shape, np.int64)
    np.testing.assert_array_equal(host(indices), order)
    np.testing.assert_array_equal(host(values), np.take_along_axis(x, order, d))


@pytest.mark.parametrize("n", [1, 64, 128, 129, 1000])
def test_topk_and_kthvalue_over_short_and_long_rows(ocl, n):
    rng = np.random.default_rng(n)
    x = rng.permutation(np.arange(3 * n, dtype=np.float32)).reshape(3, n)
    k = min(5, n)
    with on_device():
        values, indices = P.topk(dev(x), k, 1, True, True)
        kth, kth_index = P.kthvalue(dev(x), k, 1)
    want = -np.sort(-x, axis=1)[:, :k]
    np.testing.assert_array_equal(host(values), want)
    np.testing.assert_array_equal(np.take_along_axis(x, host(indices), 1), want)
    np.testing.assert_array_equal(host(kth), np.sort(x, axis=1)[:, k - 1])
    np.testing.assert_array_equal(np.take_along_axis(x, host(kth_index)[:, None], 1)[:, 0], host(kth))


def test_mode_takes_the_smallest_most_frequent_value(ocl):
    x = np.array([[3, 1, 3, 1, 2], [5, 5, 4, 4, 4], [7, 8, 9, 6, 6]], np.int64)
    with on_device():
        values, indices = P.mode(dev(x), 1)
    np.testing.assert_array_equal(host(values), [1, 4, 6])
    np.testing.assert_array_equal(np.take_along_axis(x, host(indices)[:, None], 1)[:, 0], [1, 4, 6])


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.uint8])
def test_unique_and_unique_consecutive_with_inverse_and_counts(ocl, dtype):
    x = np.array([[3, 1, 3], [1, 1, 2], [7, 3, 3]], dtype)
    with on_device():
        values, inverse, counts = P.unique(dev(x), True, True, True, None)
        run_values, run_inverse, run_counts = P.unique_consecutive(dev(x.ravel()), True, True, None)
    want, want_inverse, want_counts = np.unique(x, return_inverse=True, return_counts=True)
    np.testing.assert_array_equal(host(values), want)
    np.testing.assert_array_equal(host(inverse), want_inverse.reshape(x.shape))
    np.testing.assert_array_equal(host(counts), want_counts)
    flat = x.ravel()
    starts = np.r_[True, flat[1:] != flat[:-1]]
    np.testing.assert_array_equal(host(run_values), flat[starts])
    np.testing.assert_array_equal(host(run_inverse), np.cumsum(starts) - 1)
    np.testing.assert_array_equal(host(run_counts), np.diff(np.r_[np.flatnonzero(starts), flat.size]))


@pytest.mark.parametrize("right", [False, True])
def test_searchsorted_matches_numpy_per_row(ocl, right):
    rng = np.random.default_rng(2)
    seq = np.sort(rng.integers(0, 20, (3, 17)), axis=1).astype(np.float64)
    values = rng.integers(-2, 23, (3, 6)).astype(np.float64)
    with on_device():
        got = host(P.searchsorted(dev(seq), dev(values), right))
    side = "right" if right else "left"
    want = np.stack([np.searchsorted(s, v, side=side) for s, v in zip(seq, values)])
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
def test_var_argmax_argmin(ocl, dtype):
    x = np.random.default_rng(4).integers(-9, 10, (5, 33)).astype(dtype)
    x[1, :] = 3  # ties: the first index wins
    with on_device():
        if np.issubdtype(dtype, np.floating):  # var takes floating tensors
            want = np.var(x.astype(np.float64), 1, ddof=1)
            np.testing.assert_allclose(host(P.var(dev(x), [1], 1)), want, rtol=1e-6)
        np.testing.assert_array_equal(host(P.argmax(dev(x), 1)), np.argmax(x, 1))
        np.testing.assert_array_equal(host(P.argmin(dev(x, "transposed"), 0)), np.argmin(x, 0))
    if np.issubdtype(dtype, np.floating):
        x[2, 7] = np.nan
        with on_device():
            assert host(P.argmax(dev(x), 1))[2] == 7 and host(P.argmin(dev(x), 1))[2] == 7
