"""The extra pointwise ops (complex, polar, frexp, isin, tensor predicates) and indexing ops (index_reduce,
unique_dim_consecutive, combinations, ``where(condition)``, nonzero_numpy) against NumPy/itertools oracles written
here: dtypes, special values (subnormals, ±inf, NaN, -0.0), broadcasting, in-place/out= variants, vnpu, errors."""

from __future__ import annotations

import itertools

import numpy as np
import opweave as ow
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st


def T(a, dtype=None, device="cpu"):
    """An opweave tensor holding ``a``."""
    return ow.tensor(np.asarray(a), dtype=dtype, device=device)


def N(t):
    """The values of ``t`` as a NumPy array (on the host)."""
    return t.cpu().numpy() if t.device.type != "cpu" else t.numpy()


# -- complex, polar --------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [ow.float32, ow.float64])
def test_complex_and_polar_broadcast(dtype):
    rng = np.random.default_rng(0)
    re, im = rng.uniform(-2, 2, (3, 1, 4)), rng.uniform(-2, 2, (2, 4))
    got = ow.complex(T(re, dtype), T(im, dtype))
    assert got.dtype is dtype.to_complex() and got.shape == (3, 2, 4)
    np.testing.assert_allclose(N(got), re + 1j * im, rtol=1e-6)
    mag, ang = np.abs(re), im
    np.testing.assert_allclose(N(ow.polar(T(mag, dtype), T(ang, dtype))), mag * np.exp(1j * ang), rtol=1e-5, atol=1e-6)
    out = ow.empty(0, dtype=dtype.to_complex())
    assert ow.complex(T(re, dtype), T(im, dtype), out=out) is out


def test_complex_polar_errors():
    for fn in (ow.complex, ow.polar):
        with pytest.raises(TypeError, match=fn.name):
            fn(T([1.0], ow.float32), T([1.0], ow.float64))
        with pytest.raises(TypeError, match=fn.name):
            fn(T([1, 2]), T([1, 2]))
        with pytest.raises(TypeError, match=fn.name):
            fn(T([1.0], ow.float16), T([1.0], ow.float16))
        with pytest.raises(ValueError):
            fn(T([1.0, 2.0]), T([1.0, 2.0, 3.0]))


# -- frexp -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [ow.float16, ow.bfloat16, ow.float32, ow.float64])
def test_frexp_special_and_subnormal_values(dtype):
    tiny = float(ow.finfo(dtype).tiny)
    values = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, 0.5, -3.5, 1000.0, tiny, -tiny / 8, tiny / 2, 0.1]
    x = T(values, dtype)
    mantissa, exponent = ow.frexp(x)
    assert mantissa.dtype is dtype and exponent.dtype is ow.int32
    want_m, want_e = np.frexp(N(x).astype(np.float64))
    np.testing.assert_array_equal(N(mantissa).astype(np.float64), want_m)
    np.testing.assert_array_equal(N(exponent), want_e)
    assert np.signbit(N(mantissa)[1])


@settings(max_examples=20, deadline=None)
@given(st.lists(st.floats(allow_nan=True, allow_infinity=True, width=32), min_size=1, max_size=12))
def test_frexp_reconstructs_float32(values):
    x = T(np.array(values, np.float32))
    m, e = x.frexp()
    want_m, want_e = np.frexp(np.array(values, np.float32))
    np.testing.assert_array_equal(N(m), want_m)
    np.testing.assert_array_equal(N(e), want_e)


def test_frexp_out_and_errors():
    m, e = ow.empty(3), ow.empty(3, dtype=ow.int32)
    res = ow.ops.frexp.Tensor_out(T([1.0, 2.0, 3.0], ow.float32), mantissa=m, exponent=e)
    assert res[0] is m and res[1] is e
    with pytest.raises(TypeError, match="frexp"):
        ow.frexp(T([1, 2]))


# -- isin ------------------------------------------------------------------------------------------


@settings(max_examples=25, deadline=None)
@given(
    n=st.integers(0, 12),
    m=st.integers(0, 40),
    invert=st.booleans(),
    dtypes=st.sampled_from(
        [(ow.int64, ow.int64), (ow.float32, ow.float32), (ow.int32, ow.float64), (ow.uint8, ow.int16)]
    ),
    seed=st.integers(0, 2**16),
)
def test_isin_matches_numpy(n, m, invert, dtypes, seed):
    rng = np.random.default_rng(seed)
    e = rng.integers(0, 10, n).astype(dtypes[0].numpy)
    t = rng.integers(0, 10, m).astype(dtypes[1].numpy)
    got = ow.isin(T(e, dtypes[0]), T(t, dtypes[1]), invert=invert)
    assert got.dtype is ow.bool
    np.testing.assert_array_equal(N(got), np.isin(e, t, invert=invert))


def test_isin_scalars_nan_and_errors():
    x = T([[1.0, np.nan], [2.0, 3.0]])
    np.testing.assert_array_equal(N(ow.isin(x, T([np.nan, 2.0]))), [[False, False], [True, False]])
    np.testing.assert_array_equal(N(ow.isin(x, 2.0)), [[False, False], [True, False]])
    np.testing.assert_array_equal(N(ow.isin(x, 2.0, invert=True)), [[True, True], [False, True]])
    assert ow.isin(2, T([1, 2, 3])).shape == () and bool(ow.isin(2, T([1, 2, 3])).item())
    assert not bool(ow.isin(5, T(np.arange(30))[::2]).item())
    out = ow.empty(2, 2, dtype=ow.bool)
    assert ow.isin(x, T([3.0]), out=out) is out
    with pytest.raises(TypeError, match="isin"):
        ow.isin(T([True]), T([True]))
    with pytest.raises(TypeError, match="isin"):
        ow.isin(T([1j]), T([1j]))


# -- predicates ------------------------------------------------------------------------------------


def test_tensor_predicates():
    assert ow.is_nonzero(T([2])) and not T([[0.0]]).is_nonzero() and T([np.nan]).is_nonzero()
    for bad in (T([]), T([1, 2])):
        with pytest.raises(ValueError, match="is_nonzero"):
            bad.is_nonzero()
    assert ow.is_same_size(ow.ones(2, 3), ow.zeros(2, 3)) and not ow.ones(2).is_same_size(ow.ones(3))
    assert ow.is_floating_point(ow.ones(1, dtype=ow.bfloat16)) and not ow.is_floating_point(ow.ones(1, dtype=ow.int8))
    assert ow.is_complex(ow.ones(1, dtype=ow.complex64)) and not ow.is_complex(ow.ones(1))
    signed = {d: ow.is_signed(ow.ones(1, dtype=d)) for d in (ow.bool, ow.uint8, ow.int8, ow.float16, ow.complex128)}
    assert signed == {ow.bool: False, ow.uint8: False, ow.int8: True, ow.float16: True, ow.complex128: True}
    assert not ow.is_conj(ow.ones(1, dtype=ow.complex64).conj()) and not ow.ones(1).neg().is_neg()


# -- index_reduce ----------------------------------------------------------------------------------


def _index_reduce(x, dim, index, source, reduce, include_self):
    out = x.astype(np.float64 if x.dtype.kind == "f" else np.int64).copy()
    seen: dict = {}
    for i, target in enumerate(index):
        seen.setdefault(int(target), []).append(np.take(source, i, axis=dim))
    for target, slices in seen.items():
        here = [np.take(x, target, axis=dim)] if include_self else []
        stack = np.stack([s.astype(out.dtype) for s in slices + here])
        if reduce == "prod":
            v = stack.prod(0)
        elif reduce == "mean":
            v = stack.sum(0) // len(stack) if x.dtype.kind in "iu" else stack.sum(0) / len(stack)
        else:
            v = stack.max(0) if reduce == "amax" else stack.min(0)
        sel = [slice(None)] * x.ndim
        sel[dim] = target
        out[tuple(sel)] = v
    return out.astype(x.dtype)


@settings(max_examples=25, deadline=None)
@given(
    shape=st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple),
    reduce=st.sampled_from(["prod", "mean", "amax", "amin"]),
    include_self=st.booleans(),
    dtype=st.sampled_from([ow.float32, ow.float64, ow.int64, ow.int16]),
    data=st.data(),
)
def test_index_reduce_matches_numpy(shape, reduce, include_self, dtype, data):
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    dim = data.draw(st.integers(0, len(shape) - 1))
    k = data.draw(st.integers(0, 5))
    index = rng.integers(0, shape[dim], k)
    src_shape = list(shape)
    src_shape[dim] = k
    x = rng.integers(-4, 5, shape).astype(dtype.numpy)
    src = rng.integers(-4, 5, src_shape).astype(dtype.numpy)
    want = _index_reduce(x, dim, index, src, reduce, include_self)
    got = ow.index_reduce(T(x, dtype), dim, T(index), T(src, dtype), reduce, include_self=include_self)
    np.testing.assert_allclose(N(got), want, rtol=1e-6)
    inplace = T(x, dtype)
    assert inplace.index_reduce_(dim, T(index), T(src, dtype), reduce, include_self=include_self) is inplace
    np.testing.assert_allclose(N(inplace), want, rtol=1e-6)


@pytest.mark.parametrize(
    "args, error",
    [
        ((0, T([0, 1]), ow.ones(2, 2), "sum"), ValueError),
        ((0, T([0, 3]), ow.ones(2, 2), "prod"), IndexError),
        ((0, T([[0, 1]]), ow.ones(2, 2), "prod"), ValueError),
        ((0, T([0, 1]), ow.ones(3, 2), "prod"), ValueError),
        ((0, T([0, 1]), ow.ones(2, 3), "prod"), ValueError),
        ((0, T([0.0, 1.0]), ow.ones(2, 2), "prod"), TypeError),
        ((0, T([0, 1]), ow.ones(2, 2, dtype=ow.float64), "prod"), TypeError),
    ],
)
def test_index_reduce_errors_leave_self_intact(args, error):
    x = ow.ones(3, 2)
    with pytest.raises(error):
        x.index_reduce_(*args)
    np.testing.assert_array_equal(N(x), np.ones((3, 2)))


# -- unique_dim_consecutive, combinations, where, nonzero_numpy ------------------------------------


def test_unique_dim_consecutive():
    x = np.array([[1, 1, 2, 2, 1], [0, 0, 1, 1, 0]])
    values, inverse, counts = ow.unique_dim_consecutive(T(x).t(), 0)
    np.testing.assert_array_equal(N(values), [[1, 0], [2, 1], [1, 0]])
    np.testing.assert_array_equal(N(inverse), [0, 0, 1, 1, 2])
    np.testing.assert_array_equal(N(counts), [2, 2, 1])
    v1, _, c1 = ow.unique_dim_consecutive(T(x), 1, True, True)
    np.testing.assert_array_equal(N(v1), x[:, [0, 2, 4]])
    np.testing.assert_array_equal(N(c1), [2, 2, 1])
    with pytest.raises(ValueError, match="unique_dim_consecutive"):
        ow.unique_dim_consecutive(T(3), 0)


@pytest.mark.parametrize("n, r, replacement", [(4, 2, False), (5, 3, False), (3, 2, True), (2, 3, False), (0, 2, True)])
def test_combinations_match_itertools(n, r, replacement):
    x = np.arange(10, 10 + n)
    got = ow.combinations(T(x), r, replacement)
    pick = itertools.combinations_with_replacement if replacement else itertools.combinations
    want = np.array([[x[i] for i in row] for row in pick(range(n), r)], dtype=np.int64).reshape(-1, r)
    np.testing.assert_array_equal(N(got), want)
    assert ow.combinations(T(x), 0).shape == (0,)
    with pytest.raises(ValueError, match="combinations"):
        ow.combinations(ow.ones(2, 2))
    with pytest.raises(ValueError, match="combinations"):
        ow.combinations(T(x), -1)


@pytest.mark.parametrize("device", ["cpu", "vnpu"])
def test_where_condition_and_nonzero_numpy(device):
    x = np.array([[0, 1, 2], [3, 0, 0]])
    for fn in (ow.where, ow.nonzero_numpy):
        got = fn(T(x, device=device))
        assert len(got) == 2
        for g, w in zip(got, np.nonzero(x)):
            np.testing.assert_array_equal(N(g), w)
        (zero_dim,) = fn(T(True, device=device))
        np.testing.assert_array_equal(N(zero_dim), [0])
    np.testing.assert_array_equal(N(ow.where(T([True, False]), 1.0, 2.0)), [1.0, 2.0])


def test_extras_on_vnpu():
    d = "vnpu"
    got = ow.index_reduce(
        ow.ones(3, 2, device=d), 0, T([0, 0, 2], device=d), T(np.arange(6.0).reshape(3, 2), ow.float32, d), "amax"
    )
    np.testing.assert_array_equal(N(got), [[2, 3], [1, 1], [4, 5]])
    m, e = ow.frexp(T([0.75, 8.0, -1e-40], ow.float32, d))
    np.testing.assert_array_equal(N(e), np.frexp(np.float32([0.75, 8.0, -1e-40]))[1])
    assert N(ow.isin(ow.arange(40, device=d), ow.arange(0, 60, 3, device=d))).sum() == 14
    np.testing.assert_array_equal(N(ow.combinations(T([1, 2, 3], device=d))), [[1, 2], [1, 3], [2, 3]])
