"""Scan prims against NumPy oracles: every dtype, layouts, 0-dim/empty inputs, special values."""

from __future__ import annotations

import numpy as np
import opweave as D
import pytest
from _prim_support import (
    ALL,
    BOOLS,
    COMPLEXES,
    FLOATS,
    INTS,
    RTOL,
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

# -- oracles -----------------------------------------------------------------------------------------------


def _front(x, dim):
    return x.reshape(1) if x.ndim == 0 else np.moveaxis(x, dim % x.ndim, 0)


def _back(r, ndim, dim):
    return r.reshape(()) if ndim == 0 else np.moveaxis(r, 0, dim % ndim)


def _accumulate(add):
    def oracle(x, dim, dtype):
        y = _front(x, dim)
        if dtype.kind == "bool":
            r = (np.logical_or if add else np.logical_and).accumulate(y, axis=0)
        elif dtype.kind in ("int", "uint"):
            # int64 arithmetic wraps modulo 2**64: its low bits are the narrow type's wrapped result
            r = (np.cumsum if add else np.cumprod)(y.astype(np.int64), axis=0).astype(dtype.numpy)
        else:
            wide = y.astype(np.complex128 if dtype.is_complex else np.float64)
            with np.errstate(all="ignore"):
                r = (np.cumsum if add else np.cumprod)(wide, axis=0)
        return _back(r, x.ndim, dim)

    return oracle


def _cum_extreme(better):
    """torch's cummax/cummin, element by element: take x when isnan(x) or better(x, running)."""

    def oracle(x, dim):
        y = _front(x, dim).astype(np.float64) if x.dtype.kind != "b" else _front(x, dim)
        values, indices = np.empty(y.shape, y.dtype), np.zeros(y.shape, np.int64)
        for pos in np.ndindex(y.shape[1:]):
            best, at = None, 0
            for i in range(y.shape[0]):
                v = y[(i, *pos)]
                if best is None or np.isnan(v) or (not np.isnan(best) and better(v, best)):
                    best, at = v, i
                values[(i, *pos)], indices[(i, *pos)] = best, at
        return _back(values, x.ndim, dim), _back(indices, x.ndim, dim)

    return oracle


CUMULATIVE = {"cumsum": _accumulate(True), "cumprod": _accumulate(False)}
EXTREME = {"cummax": _cum_extreme(lambda v, b: v >= b), "cummin": _cum_extreme(lambda v, b: v <= b)}


@pytest.mark.parametrize("name", ["cumsum", "cumprod"])
@pytest.mark.parametrize("dtype", ALL, ids=lambda d: d.name)
@settings(max_examples=20, deadline=None)
@given(case=cases(), data=st.data())
def test_cumsum_cumprod(name, dtype, case, data):
    shape, layout, rng, special = case
    t, x = layout_tensor(sample(rng, shape, dtype, special), layout)
    dim = data.draw(dim_for(len(shape)))
    before = t.numpy().copy()
    out = getattr(P, name)(t, dim)
    check(out, CUMULATIVE[name](x, dim, dtype), dtype)
    check_meta(out, getattr(P, name)(meta_of(t), dim))
    unchanged(t, before)


CASTS = [
    (D.int8, D.int64),
    (D.bool, D.int64),
    (D.uint8, D.int16),
    (D.int32, D.float64),
    (D.float16, D.float32),
    (D.bfloat16, D.float32),
    (D.float64, D.float16),
    (D.float32, D.complex128),
    (D.int64, D.int8),
]


@pytest.mark.parametrize("name", ["cumsum", "cumprod"])
@pytest.mark.parametrize(("src", "out"), CASTS, ids=[f"{a.name}-{b.name}" for a, b in CASTS])
@settings(max_examples=10, deadline=None)
@given(case=cases(), data=st.data())
def test_dtype_casts_then_accumulates(name, src, out, case, data):
    shape, layout, rng, _ = case
    t, x = layout_tensor(sample(rng, shape, src), layout)
    dim = data.draw(dim_for(len(shape)))
    result = getattr(P, name)(t, dim, dtype=out)
    with np.errstate(all="ignore"):
        cast = x.astype(out.numpy)
    check(result, CUMULATIVE[name](cast, dim, out), out)
    check_meta(result, getattr(P, name)(meta_of(t), dim, dtype=out))


@pytest.mark.parametrize("name", ["cummax", "cummin"])
@pytest.mark.parametrize("dtype", BOOLS + INTS + FLOATS, ids=lambda d: d.name)
@settings(max_examples=20, deadline=None)
@given(case=cases(), data=st.data())
def test_cummax_cummin(name, dtype, case, data):
    shape, layout, rng, special = case
    t, x = layout_tensor(sample(rng, shape, dtype, special), layout)
    dim = data.draw(dim_for(len(shape)))
    before = t.numpy().copy()
    values, indices = getattr(P, name)(t, dim)
    want_values, want_indices = EXTREME[name](x, dim)
    check(values, want_values, dtype)
    check(indices, want_indices, D.int64)
    check_meta((values, indices), getattr(P, name)(meta_of(t), dim))
    unchanged(t, before)


def test_cummax_ties_take_the_last_index_and_nan_sticks():
    x = D.from_numpy(np.array([1.0, 3.0, 3.0, 2.0, np.nan, 5.0, np.nan, 0.0], np.float32))
    values, indices = P.cummax(x, 0)
    np.testing.assert_array_equal(values.numpy(), [1, 3, 3, 3, np.nan, np.nan, np.nan, np.nan])
    np.testing.assert_array_equal(indices.numpy(), [0, 1, 2, 2, 4, 4, 6, 6])
    values, indices = P.cummin(D.from_numpy(np.array([2, 1, 1, 3], np.int16)), -1)
    np.testing.assert_array_equal(values.numpy(), [2, 1, 1, 1])
    np.testing.assert_array_equal(indices.numpy(), [0, 1, 2, 2])


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.name)
@settings(max_examples=25, deadline=None)
@given(case=cases(), data=st.data())
def test_logcumsumexp_real(dtype, case, data):
    shape, layout, rng, special = case
    t, x = layout_tensor(sample(rng, shape, dtype, special), layout)
    dim = data.draw(dim_for(len(shape)))
    with np.errstate(all="ignore"):
        # log(exp(a) + exp(b)) pairwise in float64; NaN propagates, log(e^inf + e^inf) = inf, -inf stays -inf
        want = _back(np.logaddexp.accumulate(_front(x.astype(np.float64), dim), axis=0), x.ndim, dim)
    out = P.logcumsumexp(t, dim)
    check(out, want, dtype)
    check_meta(out, P.logcumsumexp(meta_of(t), dim))


@pytest.mark.parametrize("dtype", FLOATS + COMPLEXES, ids=lambda d: d.name)
@settings(max_examples=20, deadline=None)
@given(case=cases(), data=st.data())
def test_logcumsumexp_is_log_of_cumsum_of_exp(dtype, case, data):
    # finite inputs only: for complex ones the imaginary part is defined up to 2*pi, so compare exp(result)
    shape, layout, rng, _ = case
    t, x = layout_tensor(sample(rng, shape, dtype), layout)
    dim = data.draw(dim_for(len(shape)))
    wide = x.astype(np.complex128 if dtype.is_complex else np.float64)
    want = _back(np.cumsum(np.exp(_front(wide, dim)), axis=0), x.ndim, dim)
    got = np.exp(P.logcumsumexp(t, dim).numpy().astype(wide.dtype))
    assert got.shape == want.shape
    # the result is rounded to dtype before exp(), which scales its error by |result| (<= ~8 here)
    np.testing.assert_allclose(got, want, rtol=10 * RTOL[dtype], atol=10 * RTOL[dtype])


def test_logcumsumexp_infinities():
    x = D.from_numpy(np.array([-np.inf, -np.inf, 0.0, np.inf, np.inf, 1.0]))
    np.testing.assert_array_equal(P.logcumsumexp(x, 0).numpy(), [-np.inf, -np.inf, 0.0, np.inf, np.inf, np.inf])
    c = D.from_numpy(np.array([complex(-np.inf, 0), complex(-np.inf, 1.0), 1 + 1j]))
    out = P.logcumsumexp(c, 0).numpy()
    assert out[0].real == -np.inf and out[1].real == -np.inf
    np.testing.assert_allclose(out[2], 1 + 1j)
    n = P.logcumsumexp(D.from_numpy(np.array([1 + 1j, complex(np.nan, 0), 2j])), 0).numpy()
    assert np.isnan(n[1].real) and np.isnan(n[2].real)


def test_scalars_and_empty():
    s = D.from_numpy(np.array(1.5, np.float32))
    for name in ("cumsum", "cumprod", "logcumsumexp"):
        assert getattr(P, name)(s, 0).shape == ()
        assert getattr(P, name)(s, -1).numpy() == (1.5 if name != "logcumsumexp" else np.float32(1.5))
    values, indices = P.cummax(s, 0)
    assert values.shape == indices.shape == () and indices.numpy() == 0
    e = D.from_numpy(np.zeros((3, 0)))
    assert P.cumsum(e, 1).shape == (3, 0)
    assert P.cummin(e, 1)[1].shape == (3, 0)


def test_tags():
    for name in ("cumsum", "cumprod", "cummax", "cummin", "logcumsumexp"):
        op = getattr(P, name).default
        assert "scan" in op.tags and op.__doc__ != str(op.schema)


BAD_DTYPES = [
    ("cummax", D.complex64),
    ("cummin", D.complex128),
    ("logcumsumexp", D.int32),
    ("logcumsumexp", D.bool),
    ("cumsum", D.float8_e4m3fn),
]


@pytest.mark.parametrize(("name", "dtype"), BAD_DTYPES, ids=[f"{o}-{d.name}" for o, d in BAD_DTYPES])
def test_unsupported_dtype_raises_type_error(name, dtype):
    with pytest.raises(TypeError, match=f"prims::{name}"):
        getattr(P, name)(meta_of(D.from_numpy(np.zeros((2, 3))), dtype), 0)


@pytest.mark.parametrize("name", ["cumsum", "cumprod", "cummax", "cummin", "logcumsumexp"])
@pytest.mark.parametrize(("shape", "dim"), [((2, 3), 2), ((2, 3), -3), ((), 1), ((4,), -2)])
def test_bad_dim_raises_value_error(name, shape, dim):
    t = D.from_numpy(np.ones(shape))
    with pytest.raises(ValueError, match=f"prims::{name}"):
        getattr(P, name)(t, dim)
    with pytest.raises(ValueError, match=f"prims::{name}"):
        getattr(P, name)(meta_of(t), dim)


def test_bad_accumulation_dtype():
    c = D.from_numpy(np.ones(3, np.complex64))
    with pytest.raises(TypeError, match="prims::cumsum"):
        P.cumsum(c, 0, dtype=D.float32)
    with pytest.raises(TypeError, match="prims::cumprod"):
        P.cumprod(D.from_numpy(np.ones(3)), 0, dtype=D.float8_e5m2)
