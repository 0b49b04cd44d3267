"""Reduction prims against NumPy oracles: every dtype, layouts, 0-dim/empty inputs, special values."""

from __future__ import annotations

import warnings

import numpy as np
import opweave as D
import pytest
from _prim_support import (
    ALL,
    BOOLS,
    COMPLEXES,
    FLOATS,
    INTS,
    P,
    cases,
    check,
    check_meta,
    layout_tensor,
    meta_of,
    sample,
    unchanged,
)
from hypothesis import given, settings
from hypothesis import strategies as st

# -- oracles -----------------------------------------------------------------------------------------------


def _wide(x, dtype):
    return x.astype(np.complex128 if dtype.is_complex else np.float64)


def _sum(x, axes, dtype):
    if dtype.kind == "bool":
        return np.any(x, axis=axes)
    if dtype.kind in ("int", "uint"):
        return np.sum(x.astype(np.int64), axis=axes).astype(dtype.numpy)
    with np.errstate(all="ignore"):
        return np.sum(_wide(x, dtype), axis=axes)


def _prod(x, axes, dtype):
    if dtype.kind == "bool":
        return np.all(x, axis=axes)
    if dtype.kind in ("int", "uint"):
        # int64 products wrap modulo 2**64, so their low bits are the wrapped products of the narrower type
        return np.prod(x.astype(np.int64), axis=axes).astype(dtype.numpy)
    with np.errstate(all="ignore"):
        return np.prod(_wide(x, dtype), axis=axes)


def _extreme(fn):
    def oracle(x, axes, dtype):
        if dtype.kind in ("bool", "int", "uint"):
            return fn(x, axis=axes)
        return fn(x.astype(np.float64), axis=axes)  # np.max/np.min propagate NaN

    return oracle


def _nonzero(x, dtype):
    return x.astype(np.complex128 if dtype.is_complex else np.float64) != 0 if dtype.kind != "bool" else x


ORACLES = {
    "sum": (ALL, _sum),
    "prod": (ALL, _prod),
    "amax": (BOOLS + INTS + FLOATS, _extreme(np.max)),
    "amin": (BOOLS + INTS + FLOATS, _extreme(np.min)),
    "any": (ALL, lambda x, axes, dtype: np.any(_nonzero(x, dtype), axis=axes)),
    "all": (ALL, lambda x, axes, dtype: np.all(_nonzero(x, dtype), axis=axes)),
    "xor_sum": (BOOLS + INTS, lambda x, axes, dtype: np.bitwise_xor.reduce(x, axis=axes)),
}
OUT_DTYPE = {"any": D.bool, "all": D.bool}
CASES = [(op, dt) for op, (dts, _) in ORACLES.items() for dt in dts]


@st.composite
def dims_for(draw, ndim):
    """None, or a list of distinct dims of an ``ndim``-dim tensor (some negative; 0-dim: [], [0] or [-1])."""
    if draw(st.booleans()):
        return None
    if ndim == 0:
        return draw(st.sampled_from([[], [0], [-1]]))
    dims = draw(st.lists(st.integers(0, ndim - 1), unique=True, max_size=ndim))
    return [d - ndim if draw(st.booleans()) else d for d in dims]


def _axes(dims, ndim):
    if ndim == 0:
        return ()
    return tuple(range(ndim)) if dims is None else tuple(sorted(d % ndim for d in dims))


@pytest.mark.parametrize(("name", "dtype"), CASES, ids=[f"{o}-{d.name}" for o, d in CASES])
@settings(max_examples=15, deadline=None)
@given(case=cases(), data=st.data())
def test_reduction_matches_numpy(name, dtype, case, data):
    shape, layout, rng, special = case
    t, x = layout_tensor(sample(rng, shape, dtype, special), layout)
    dims = data.draw(dims_for(len(shape)))
    axes = _axes(dims, len(shape))
    op = getattr(P, name)
    before = t.numpy().copy()
    if name in ("amax", "amin") and any(shape[d] == 0 for d in axes):
        with pytest.raises(ValueError, match=f"prims::{name}: cannot reduce over a zero-size dimension"):
            op(t, dims)
        with pytest.raises(ValueError, match=f"prims::{name}"):
            op(meta_of(t), dims)
        return
    out = op(t, dims)
    check(out, ORACLES[name][1](x, axes, dtype), OUT_DTYPE.get(name, dtype))
    check_meta(out, op(meta_of(t), dims))
    unchanged(t, before)


SUM_CASTS = [
    (D.int8, D.int64),
    (D.uint8, D.int32),
    (D.bool, D.int64),
    (D.int16, D.float32),
    (D.float16, D.float32),
    (D.bfloat16, D.float64),
    (D.float32, D.float64),
    (D.float64, D.float16),
    (D.float32, D.complex64),
    (D.complex64, D.complex128),
    (D.int32, D.int8),
]


@pytest.mark.parametrize("name", ["sum", "prod"])
@pytest.mark.parametrize(("src", "out"), SUM_CASTS, ids=[f"{a.name}-{b.name}" for a, b in SUM_CASTS])
@settings(max_examples=10, deadline=None)
@given(case=cases(), data=st.data())
def test_output_dtype_casts_then_accumulates(name, src, out, case, data):
    shape, layout, rng, _ = case
    t, x = layout_tensor(sample(rng, shape, src), layout)
    dims = data.draw(dims_for(len(shape)))
    result = getattr(P, name)(t, dims, output_dtype=out)
    with np.errstate(all="ignore"):
        cast = x.astype(out.numpy)
    check(result, ORACLES[name][1](cast, _axes(dims, len(shape)), out), out)
    check_meta(result, getattr(P, name)(meta_of(t), dims, output_dtype=out))


CORRECTIONS = [0.0, 1.0, 0.5, 2.0, 7.0]


@pytest.mark.parametrize("dtype", FLOATS + COMPLEXES, ids=lambda d: d.name)
@settings(max_examples=20, deadline=None)
@given(case=cases(), data=st.data())
def test_var_matches_numpy(dtype, case, data):
    shape, layout, rng, special = case
    t, x = layout_tensor(sample(rng, shape, dtype, special), layout)
    dims = data.draw(dims_for(len(shape)))
    correction = data.draw(st.sampled_from(CORRECTIONS))
    axes = _axes(dims, len(shape))
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # np.var divides by max(N - ddof, 0) like torch: N - correction <= 0 gives inf, or nan for 0/0
        want = np.var(_wide(x, dtype), axis=axes, ddof=correction)
    out = P.var(t, dims, correction)
    check(out, want, dtype.to_real())
    check_meta(out, P.var(meta_of(t), dims, correction))


@pytest.mark.parametrize("out", [D.float32, D.float64, D.float16])
def test_var_output_dtype(out):
    x = np.array([[1.0, 2.0, 4.0], [0.5, 0.5, 3.0]])
    got = P.var(D.from_numpy(x), [1], 1.0, output_dtype=out)
    check(got, np.var(x, axis=1, ddof=1), out)


def test_var_edge_values_follow_torch():
    x = D.from_numpy(np.array([3.0]))
    check(P.var(x, None, 1.0), np.nan, D.float64)  # 0 / max(1 - 1, 0)
    check(P.var(D.from_numpy(np.array([1.0, 2.0])), None, 3.0), np.inf, D.float64)  # 0.5 / max(2 - 3, 0)
    check(P.var(D.from_numpy(np.zeros((0, 2))), [0], 0.0), [np.nan, np.nan], D.float64)
    check(P.var(D.from_numpy(np.array([1.0, np.inf])), None, 0.0), np.nan, D.float64)
    check(P.var(D.from_numpy(np.array([1 + 1j, 1 - 1j])), None, 0.0), 1.0, D.float64)


@pytest.mark.parametrize("name", ["argmax", "argmin"])
@pytest.mark.parametrize("dtype", INTS + FLOATS, ids=lambda d: d.name)
@settings(max_examples=15, deadline=None)
@given(case=cases(), data=st.data())
def test_argmax_argmin(name, dtype, case, data):
    shape, layout, rng, special = case
    t, x = layout_tensor(sample(rng, shape, dtype, special), layout)
    ndim = len(shape)
    dim = data.draw(st.none() | st.integers(-max(ndim, 1), max(ndim, 1) - 1))
    op = getattr(P, name)
    if (x.size == 0 and dim is None) or (ndim and dim is not None and shape[dim] == 0):
        with pytest.raises(ValueError, match=f"prims::{name}: cannot reduce over a zero-size dimension"):
            op(t, dim)
        return
    flat = x.astype(np.float64) if dtype.kind == "float" else x
    # torch's rule, which NumPy's argmax/argmin share: NaN is the extreme, the first NaN/extreme wins
    fn = np.argmax if name == "argmax" else np.argmin
    want = fn(flat.reshape(-1)) if dim is None or ndim == 0 else fn(flat, axis=dim)
    out = op(t, dim)
    check(out, want, D.int64)
    check_meta(out, op(meta_of(t), dim))


def test_argmax_nan_and_ties():
    x = D.from_numpy(np.array([1.0, np.nan, 3.0, np.nan, 3.0], np.float32))
    assert P.argmax(x, 0).numpy() == 1
    assert P.argmin(x, 0).numpy() == 1
    y = D.from_numpy(np.array([[2, 5, 5], [1, 1, 0]], np.int8))
    np.testing.assert_array_equal(P.argmax(y, 1).numpy(), [1, 0])
    np.testing.assert_array_equal(P.argmin(y, 0).numpy(), [1, 1, 1])
    assert P.argmax(y, None).numpy() == 1


def test_scalars_reduce_to_scalars():
    s = D.from_numpy(np.array(2.5))
    for dims in (None, [0], [-1]):
        assert P.sum(s, dims).shape == ()
        assert P.amax(s, dims).numpy() == 2.5
    assert P.sum(s, []).numpy() == 2.5
    assert P.argmax(s, 0).numpy() == 0 and P.argmin(s, None).shape == ()


def test_empty_reductions_give_identities():
    e = D.from_numpy(np.zeros((2, 0), np.float32))
    check(P.sum(e, [1]), [0.0, 0.0], D.float32)
    check(P.prod(e, [1]), [1.0, 1.0], D.float32)
    check(P.any(e, None), False, D.bool)
    check(P.all(e, None), True, D.bool)
    check(P.xor_sum(D.from_numpy(np.zeros((0,), np.int16)), None), 0, D.int16)
    check(P.amax(e, [0]), np.zeros((0,)), D.float32)  # only the size-2 dim is reduced


def test_integer_overflow_wraps():
    x = D.from_numpy(np.array([100, 100, 100], np.int8))
    check(P.sum(x, None), np.int8(44), D.int8)  # 300 mod 256
    check(P.prod(x, None), np.array(1_000_000).astype(np.int8), D.int8)


def test_nan_counts_as_true():
    x = D.from_numpy(np.array([np.nan, 0.0]))
    check(P.any(x, None), True, D.bool)
    check(P.all(D.from_numpy(np.array([np.nan, 1.0])), None), True, D.bool)


def test_tags_and_docs():
    for name in ("sum", "prod", "amax", "amin", "var", "any", "all", "argmax", "argmin", "xor_sum"):
        op = getattr(P, name).default
        assert "reduction" in op.tags
        assert op.__doc__ and op.__doc__ != str(op.schema)


BAD_DTYPES = [
    ("amax", D.complex64),
    ("amin", D.complex128),
    ("var", D.int32),
    ("var", D.bool),
    ("argmax", D.bool),
    ("argmin", D.complex64),
    ("xor_sum", D.float32),
    ("sum", D.float8_e4m3fn),
]


def _call(name, t, dims):
    if name in ("argmax", "argmin"):
        return getattr(P, name)(t, None if dims is None else dims[0])
    if name == "var":
        return P.var(t, dims, 1.0)
    return getattr(P, name)(t, dims)


@pytest.mark.parametrize(("name", "dtype"), BAD_DTYPES, ids=[f"{o}-{d.name}" for o, d in BAD_DTYPES])
def test_unsupported_dtype_raises_type_error(name, dtype):
    t = meta_of(D.from_numpy(np.zeros((2, 3))), dtype)
    with pytest.raises(TypeError, match=f"prims::{name}"):
        _call(name, t, [0])


@pytest.mark.parametrize("name", ["sum", "prod", "amax", "amin", "var", "any", "all", "argmax", "argmin", "xor_sum"])
@pytest.mark.parametrize("dims", [[2], [-3], [0, -2]])
def test_bad_dims_raise_value_error(name, dims):
    t = D.from_numpy(np.ones((2, 3), np.int32 if name == "xor_sum" else np.float32))
    if name in ("argmax", "argmin") and len(dims) > 1:
        dims = [5]
    with pytest.raises(ValueError, match=f"prims::{name}"):
        _call(name, t, dims)
    with pytest.raises(ValueError, match=f"prims::{name}"):
        _call(name, meta_of(t), dims)


def test_bad_output_dtypes():
    c = D.from_numpy(np.ones(3, np.complex64))
    with pytest.raises(TypeError, match="prims::sum"):
        P.sum(c, None, output_dtype=D.float32)
    with pytest.raises(TypeError, match="prims::prod"):
        P.prod(D.from_numpy(np.ones(3)), None, output_dtype=D.float8_e5m2)
    with pytest.raises(TypeError, match="prims::var"):
        P.var(c, None, 0.0, output_dtype=D.complex64)
    with pytest.raises(TypeError, match="prims::var"):
        P.var(c, None, 0.0, output_dtype=D.int32)


def test_argmax_zero_size_on_meta():
    m = P.empty_strided([0, 3], [3, 1], dtype=D.float32, device="meta")
    with pytest.raises(ValueError, match="prims::argmax: cannot reduce over a zero-size dimension"):
        P.argmax(m, None)
    assert P.argmax(m, 1).shape == (0,)
