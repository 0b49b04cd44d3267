"""Indexing, scatter and masked prims on OpenCL against NumPy oracles written here (loops in C order)."""

from __future__ import annotations

import warnings
from contextlib import contextmanager

import numpy as np
import opweave as ow
import pytest
from hypothesis import given
from hypothesis import strategies as st
from opweave import _fallback

P = ow.ops.prims
BF16 = ow.bfloat16.numpy


def dev(a):
    """A contiguous OpenCL tensor holding ``a``."""
    return ow.tensor(np.array(a, order="C")).to("opencl")


def transposed(a):
    """An OpenCL view with ``a``'s values whose memory is transposed (2-D ``a``)."""
    return dev(np.ascontiguousarray(a.T)).transpose(0, 1)


def strided(a):
    """An OpenCL view with ``a``'s values taken every other element of the last dim, at an offset."""
    wide = np.zeros(a.shape[:-1] + (2 * a.shape[-1] + 1,), a.dtype)
    wide[..., 1::2] = a
    return dev(wide)[..., 1::2]


def host(t):
    return t.numpy(force=True)


def comparable(x):
    """``x`` in a dtype NumPy compares exactly (bfloat16 widened)."""
    return x.astype(np.complex128 if x.dtype.kind == "c" else np.float64)


@contextmanager
def on_device():
    """Fail if a call inside warns (the CPU fallback warns) or runs through the CPU fallback."""
    before = sum(_fallback.calls.values())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield
    assert sum(_fallback.calls.values()) == before, "the call ran through the CPU fallback"


def scatter_oracle(a, dim, index, src, reduce=None, include_self=True):
    """``a`` with ``src[p]`` combined into ``a[p with dim = index[p]]`` for each ``p`` of ``index`` in C order."""
    out = a.copy()
    combine = {
        None: lambda x, y: y,
        "sum": lambda x, y: x + y,
        "prod": lambda x, y: x * y,
        "amax": lambda x, y: y if np.isnan(y) or y > x else x,
        "amin": lambda x, y: y if np.isnan(y) or y < x else x,
        "mean": lambda x, y: x + y,
    }[reduce]
    hits = {}
    for p in np.ndindex(*index.shape):
        t = list(p)
        t[dim] = index[p]
        t = tuple(t)
        if t not in hits:
            hits[t] = 0
            if not include_self:
                low, high = (
                    (np.iinfo(a.dtype).min, np.iinfo(a.dtype).max) if a.dtype.kind in "iu" else (-np.inf, np.inf)
                )
                out[t] = {"sum": 0, "mean": 0, "prod": 1, "amax": low, "amin": high}[reduce]
        hits[t] += 1
        out[t] = combine(out[t], src[p])
    if reduce == "mean":
        for t, n in hits.items():
            c = n + (1 if include_self else 0)
            out[t] = out[t] // c if out.dtype.kind in "iu" else out[t] / c
    return out


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64, np.int8, np.uint8])
@pytest.mark.parametrize("reduce", [None, "sum", "prod", "mean", "amax", "amin"])
def test_scatter_family_against_loops(ocl, dtype, reduce):
    rng = np.random.default_rng(0)
    a = rng.integers(-3, 4, (4, 5)).astype(dtype)
    src = rng.integers(-3, 4, (3, 5)).astype(dtype)
    index = rng.integers(0, 4, (3, 4))  # duplicates along dim 0
    for include_self in (True, False) if reduce else (True,):
        with on_device():
            if reduce is None:
                got = P.scatter(transposed(a), 0, dev(index), strided(src))
            elif reduce == "sum" and include_self:
                got = P.scatter_add(transposed(a), 0, dev(index), strided(src))
            else:
                got = P.scatter_reduce(transposed(a), 0, dev(index), strided(src), reduce, include_self)
        with np.errstate(all="ignore"):
            expected = scatter_oracle(a, 0, index, src, reduce, include_self)
        assert got.dtype == ow.dtype_of_numpy(np.dtype(dtype))
        assert tuple(got.stride()) == (5, 1)
        np.testing.assert_allclose(host(got), expected, rtol=1e-6)


def test_scatter_reduce_propagates_nan_and_handles_signed_zero(ocl):
    a = np.array([1.0, -0.0, 3.0], np.float32)
    src = np.array([np.nan, 0.0, -np.inf, 2.0], np.float32)
    index = np.array([0, 1, 2, 2])
    with on_device():
        amax = host(P.scatter_reduce(dev(a), 0, dev(index), dev(src), "amax", True))
        amin = host(P.scatter_reduce(dev(a), 0, dev(index), dev(src), "amin", True))
        total = host(P.scatter_add(dev(a), 0, dev(index), dev(src)))
    assert np.isnan(amax[0]) and amax[1] == 0 and amax[2] == 3
    assert np.isnan(amin[0]) and amin[2] == -np.inf
    np.testing.assert_array_equal(total[1:], [0.0, -np.inf])


def test_scatter_on_0dim_and_empty_index(ocl):
    with on_device():
        got = P.scatter_add(dev(np.float32(2)), 0, dev(np.int64(0)), dev(np.float32(5)))
        empty = P.scatter(
            dev(np.ones((2, 3), np.float32)), 1, dev(np.zeros((2, 0), np.int64)), dev(np.ones((2, 3), np.float32))
        )
    assert got.shape == () and host(got) == 7
    np.testing.assert_array_equal(host(empty), np.ones((2, 3)))


@given(
    st.integers(1, 4),
    st.integers(1, 4),
    st.integers(0, 2**31),
    st.sampled_from(["scatter", "scatter_add"]),
)
def test_scatter_any_sizes(ocl, rows, cols, seed, name):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((rows, cols)).astype(np.float32)
    index = rng.integers(0, cols, (rows, max(cols - 1, 1)))
    src = rng.standard_normal((rows, cols)).astype(np.float32)
    with on_device():
        got = getattr(P, name)(dev(a), 1, dev(index), dev(src))
    expected = scatter_oracle(a, 1, index, src, None if name == "scatter" else "sum")
    np.testing.assert_allclose(host(got), expected, rtol=1e-5, atol=1e-6)


def test_small_and_wide_element_types_accumulate(ocl):
    index = np.array([0, 1, 0, 0, 2])
    for dtype in (np.int8, np.int16, np.uint8, np.bool_):
        a = np.array([1, 0, 1], dtype)
        src = np.array([1, 1, 1, 1, 0], dtype)
        with on_device(), np.errstate(all="ignore"):
            got = host(P.scatter_add(dev(a), 0, dev(index), dev(src)))
        expected = a.copy()
        np.add.at(expected, index, src)
        np.testing.assert_array_equal(got, expected)
    b = np.array([1, 2, 3], BF16)
    with on_device():
        got = host(P.scatter_add(dev(b), 0, dev(index), dev(np.array([0.5, 1, 2, 4, 8], BF16))))
    np.testing.assert_allclose(got.astype(np.float32), [7.5, 3, 11])
    c = np.array([1 + 1j, 2, 3j], np.complex64)
    with on_device():
        got = host(P.index_add(dev(c), 0, dev(np.array([2, 2])), dev(np.array([1j, 1], np.complex64)), 2j))
    np.testing.assert_allclose(got, c + np.array([0, 0, -2 + 2j]))


def test_index_add_copy_fill(ocl):
    rng = np.random.default_rng(1)
    a = rng.standard_normal((4, 3))
    source = rng.standard_normal((4, 3))
    index = np.array([2, 0, 2])
    with on_device():
        added = host(P.index_add(transposed(a), 1, dev(index), dev(source), 0.5))
        copied = host(P.index_copy(dev(a), 1, dev(index), transposed(source)))
        filled = host(P.index_fill(dev(a), 0, dev(np.array([-1, 0])), -2.5))
    expected = a.copy()
    for j, i in enumerate(index):
        expected[:, i] += 0.5 * source[:, j]
    np.testing.assert_allclose(added, expected)
    expected = a.copy()
    expected[:, 0] = source[:, 1]
    expected[:, 2] = source[:, 2]  # the last duplicate wins
    np.testing.assert_array_equal(copied, expected)
    expected = a.copy()
    expected[[3, 0]] = -2.5
    np.testing.assert_array_equal(filled, expected)


def test_advanced_index_and_index_put(ocl):
    a = np.arange(60, dtype=np.float32).reshape(3, 4, 5)
    i0, i2 = np.array([[0, 2], [-1, 1]]), np.array([4, -5])
    with on_device():
        adjacent = host(P.index(dev(a), [None, dev(np.array([3, 0, -1])), dev(np.array([[1], [2]]))]))
        apart = host(P.index(dev(a), [dev(i0), None, dev(i2)]))
        only = host(P.index(strided(a), [None, None, dev(np.array([0, 0]))]))
    np.testing.assert_array_equal(adjacent, a[:, np.array([3, 0, -1]), np.array([[1], [2]])])
    np.testing.assert_array_equal(apart, a[i0, :, i2])
    np.testing.assert_array_equal(only, a[:, :, [0, 0]])
    values = np.array([10.0, 20.0, 30.0], np.float32)
    rows, cols = np.array([0, 1, 0]), np.array([2, 2, 2])
    b = a[0]
    with on_device():
        put_last = host(P.index_put(dev(b), [dev(rows), dev(cols)], dev(values), False))
        put_sum = host(P.index_put(dev(b), [dev(rows), dev(cols)], dev(values), True))
        put_row = host(P.index_put(dev(b), [dev(np.array([3]))], dev(np.float32(-1)), False))
    expected = b.copy()
    expected[1, 2], expected[0, 2] = 20, 30
    np.testing.assert_array_equal(put_last, expected)
    expected = b.copy()
    np.add.at(expected, (rows, cols), values)
    np.testing.assert_array_equal(put_sum, expected)
    expected = b.copy()
    expected[3] = -1
    np.testing.assert_array_equal(put_row, expected)


def test_take_and_put(ocl):
    a = np.arange(12, dtype=np.int64).reshape(3, 4)
    index = np.array([[0, -1], [5, 5]])
    with on_device():
        taken = host(P.take(transposed(a), dev(index)))
        put_last = host(P.put(dev(a), dev(np.array([1, 1, -2])), transposed(np.array([[7, 8, 9]]).T), False))
        put_sum = host(P.put(dev(a), dev(np.array([1, 1, -2])), dev(np.array([7, 8, 9])), True))
    np.testing.assert_array_equal(taken, a.reshape(-1)[index])
    expected = a.reshape(-1).copy()
    expected[[1, 10]] = [8, 9]
    np.testing.assert_array_equal(put_last, expected.reshape(3, 4))
    expected = a.reshape(-1).copy()
    np.add.at(expected, [1, 1, -2], [7, 8, 9])
    np.testing.assert_array_equal(put_sum, expected.reshape(3, 4))


@pytest.mark.parametrize(
    "dtype", [np.float32, np.float64, np.int8, np.int16, np.int64, np.bool_, np.complex64, np.complex128, BF16]
)
def test_nonzero_masked_select_masked_scatter(ocl, dtype):
    rng = np.random.default_rng(2)
    base = np.array([0.0, -0.0, np.nan, 1.5, np.inf, 0.0, 2.0, 3.0, 0.0, 1.0, 0.0, 7.0])
    if np.dtype(dtype).kind in "biu":
        base = np.nan_to_num(base, posinf=5)
    a = base.astype(dtype).reshape(3, 4)
    mask = rng.random((3, 4)) < 0.5
    source = np.arange(20).astype(dtype).reshape(4, 5)
    with on_device():
        nz = host(P.nonzero(transposed(a)))
        sel = host(P.masked_select(transposed(a), transposed(mask)))
        sc = host(P.masked_scatter(dev(a), strided(mask), transposed(source[:, :4])))
    np.testing.assert_array_equal(nz, np.argwhere(a != 0))
    np.testing.assert_array_equal(comparable(sel), comparable(a[mask]))
    expected = a.copy()
    expected[mask] = source[:, :4].reshape(-1)[: mask.sum()]
    np.testing.assert_array_equal(comparable(sc), comparable(expected))


def test_compaction_sizes(ocl):
    big = np.zeros(1000, np.float32)
    big[[3, 255, 256, 999]] = 1
    with on_device():
        assert host(P.nonzero(dev(big))).reshape(-1).tolist() == [3, 255, 256, 999]
        assert host(P.nonzero(dev(np.float32(0)))).shape == (0, 0)
        assert host(P.nonzero(dev(np.float32(3)))).shape == (1, 0)
        assert host(P.nonzero(dev(np.zeros((0, 3))))).shape == (0, 2)
        assert host(P.masked_select(dev(np.zeros((2, 0))), dev(np.zeros((2, 0), bool)))).shape == (0,)


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_repeat_interleave(ocl, dtype):
    repeats = np.array([2, 0, 3, 1] * 100, dtype)
    with on_device():
        got = P.repeat_interleave(strided(repeats))
        none = P.repeat_interleave(dev(np.zeros(0, dtype)))
    assert got.dtype == ow.dtype_of_numpy(np.dtype(dtype))
    np.testing.assert_array_equal(host(got), np.repeat(np.arange(400), repeats))
    assert host(none).shape == (0,)


def test_bincount(ocl):
    x = np.array([1, 3, 3, 0, 7, 3], np.int64)
    w = np.array([0.5, 1.0, 2.0, 3.0, -1.0, 0.25], np.float32)
    with on_device():
        counts = P.bincount(strided(x), None, 10)
        weighted = P.bincount(dev(x.astype(np.uint8)), dev(w), 0)
        doubles = P.bincount(dev(x), dev(w.astype(np.float64)), 0)
        empty = P.bincount(dev(np.zeros(0, np.int32)), None, 3)
    assert counts.dtype == ow.int64 and weighted.dtype == ow.float32 and doubles.dtype == ow.float64
    np.testing.assert_array_equal(host(counts), np.bincount(x, minlength=10))
    np.testing.assert_allclose(host(weighted), np.bincount(x, weights=w))
    np.testing.assert_allclose(host(doubles), np.bincount(x, weights=w))
    np.testing.assert_array_equal(host(empty), [0, 0, 0])
    many = np.random.default_rng(3).integers(0, 50, 3000).astype(np.int16)
    many[1234] = 77  # the maximum sits in a middle chunk
    with on_device():
        got = host(P.bincount(dev(many), None, 0))
    np.testing.assert_array_equal(got, np.bincount(many))


def test_data_errors_raise_on_the_device_path(ocl):
    a = dev(np.zeros((3, 2), np.float32))
    oob = ow.IndexOutOfBoundsError
    cases = [
        (lambda: P.scatter(a, 0, dev(np.array([[3, 0]])), a), oob, "index 3 is out of bounds for dim 0 with size 3"),
        (lambda: P.index_add(a, 1, dev(np.array([-1])), a[:, :1], 1.0), oob, "index -1 is out of bounds for dim 1"),
        (lambda: P.index(a, [None, dev(np.array([0, -3]))]), oob, "index -3 is out of bounds for dim 1 with size 2"),
        (lambda: P.take(a, dev(np.array([6]))), oob, "index 6 is out of bounds for dim 0 with size 6"),
        (lambda: P.repeat_interleave(dev(np.array([1, -1]))), ValueError, "must be non-negative"),
        (lambda: P.bincount(dev(np.array([2, -4])), None, 0), ValueError, "found -4"),
        (
            lambda: P.masked_scatter(a, dev(np.ones((3, 2), bool)), dev(np.ones(5, np.float32))),
            ValueError,
            "has 5 elements",
        ),
    ]
    for call, error, message in cases:
        with on_device(), pytest.raises(error, match=message):
            call()
    np.testing.assert_array_equal(host(a), np.zeros((3, 2)))


def test_nondeterministic_registration(ocl):
    from opweave_kernelgen.kernels._common import NONDETERMINISTIC

    dev(np.zeros(1))  # loads the backend, which registers its kernels

    assert {"prims::scatter_add", "prims::index_add", "prims::scatter_reduce"} <= NONDETERMINISTIC
    assert "prims::index_put" not in NONDETERMINISTIC and "prims::scatter" not in NONDETERMINISTIC


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_scatter_reduce(ocl, dtype):
    rng = np.random.default_rng(4)
    a = (rng.standard_normal((3, 4)) + 1j * rng.standard_normal((3, 4))).astype(dtype)
    src = (rng.standard_normal((5, 4)) + 1j * rng.standard_normal((5, 4))).astype(dtype)
    index = np.array([[0, 1, 1, 2], [0, 0, 1, 2], [0, 2, 1, 2], [2, 2, 1, 0], [0, 1, 1, 2]])
    for reduce in ("prod", "sum", "mean"):
        for include_self in (True, False):
            with on_device():
                got = host(P.scatter_reduce(transposed(a), 0, dev(index), dev(src), reduce, include_self))
            expected = scatter_oracle(a, 0, index, src, reduce, include_self)
            np.testing.assert_allclose(got, expected, rtol=1e-5)


def test_deterministic_mode(ocl):
    a = np.zeros(3, np.float32)
    index, values = np.array([0, 0, 2]), np.array([0.1, 0.2, 0.3], np.float32)
    was = ow.are_deterministic_algorithms_enabled()
    ow.use_deterministic_algorithms(True)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the float accumulation runs on the CPU kernel here
            got = host(P.index_put(dev(a), [dev(index)], dev(values), True))
            added = host(P.scatter_add(dev(a), 0, dev(index), dev(values)))  # the CPU kernel: deterministic
        with on_device():
            last = host(P.index_put(dev(a), [dev(index)], dev(values), False))
            counts = host(P.bincount(dev(index), None, 0))
    finally:
        ow.use_deterministic_algorithms(was)
    expected = a.copy()
    np.add.at(expected, index, values)
    np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(added, expected)
    np.testing.assert_array_equal(last, values[[1, 0, 2]] * [1, 0, 1])
    np.testing.assert_array_equal(counts, [2, 0, 1])
