"""``opweave.array_api`` against NumPy 2's array-API namespace as the oracle (the standard's semantics:
promotion without 0-d special cases, ``axis=()``, ``unique_*`` with distinct NaNs, ``copy=``...)."""

from __future__ import annotations

import itertools

import numpy as np
import opweave as ow
import opweave.array_api as xp
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

NAMES = ("bool", "int8", "int16", "int32", "int64", "uint8", "float32", "float64", "complex64", "complex128")
NUMERIC = NAMES[1:]


def _kind(name: str) -> str:
    return "b" if name == "bool" else "i" if "int" in name else "f" if "float" in name else "c"


def arrays(dtype_names=("float64",), min_dims=0, max_dims=3, moderate=False):
    """A NumPy array of one of ``dtype_names`` (any shape; NaN, ±inf and -0.0 among floats unless ``moderate``)."""

    def draw(name):
        elements = None
        if moderate:
            part = st.floats(-1e3, 1e3, width=32)
            elements = st.complex_numbers(max_magnitude=1e3, allow_nan=False) if "complex" in name else part
        shapes = hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=0, max_side=4)
        return hnp.arrays(np.dtype(name), shapes, elements=elements)

    return st.sampled_from(dtype_names).flatmap(draw)


def to_ow(a: np.ndarray):
    return xp.asarray(a.copy())


def check(out, expected) -> None:
    expected = np.asarray(expected)
    assert out.dtype.name == expected.dtype.name, (out.dtype, expected.dtype)
    assert tuple(out.shape) == expected.shape
    np.testing.assert_allclose(np.asarray(out), expected, rtol=1e-6, atol=0, equal_nan=True)


def test_namespace_is_returned_by_every_tensor():
    x = ow.ones(2)
    assert x.__array_namespace__() is xp
    assert x.__array_namespace__(api_version="2023.12") is xp
    assert xp.__array_api_version__ == "2024.12"
    with pytest.raises(ValueError, match="api_version"):
        x.__array_namespace__(api_version="2019.01")
    assert x.to_device(x.device) is x


@pytest.mark.parametrize(("a", "b"), list(itertools.product(NUMERIC, NUMERIC)))
def test_promotion_ignores_dimensions(a, b):
    # same-kind pairs follow the standard's lattice; a 0-d operand counts like any other (NumPy 2 agrees)
    if _kind(a) != _kind(b) and {_kind(a), _kind(b)} != {"f", "c"}:
        return
    x, y = np.ones((2,), dtype=a), np.ones((), dtype=b)
    expected = np.result_type(x, y)
    assert xp.add(to_ow(x), to_ow(y)).dtype.name == expected.name
    assert xp.result_type(getattr(xp, a), getattr(xp, b)).name == expected.name
    assert xp.can_cast(getattr(xp, a), getattr(xp, b)) == np.can_cast(np.dtype(a), np.dtype(b))


def test_bool_does_not_promote_and_scalars_combine_by_kind():
    with pytest.raises(TypeError):
        xp.add(xp.asarray([True]), xp.asarray([1]))
    assert xp.add(xp.asarray([1], dtype=xp.int8), 3).dtype == xp.int8
    assert xp.multiply(xp.asarray([1.0]), 2).dtype == xp.float32
    assert xp.add(xp.asarray([1.0], dtype=xp.float64), 1j).dtype == xp.complex128
    assert xp.result_type(xp.float32, 1j) == xp.complex64
    with pytest.raises(TypeError):
        xp.add(xp.asarray([1]), 1.5)


@given(arrays(("float32", "float64", "int16", "bool"), min_dims=0), st.sampled_from(["sum", "max", "min", "prod"]))
def test_reductions_with_axis_tuples_and_empty_axis(a, name):
    if name in ("max", "min") and a.size == 0 or (a.dtype == bool and name in ("sum", "prod", "max", "min")):
        return
    if name in ("sum", "prod") and a.dtype.kind == "f":
        # where some order of evaluation overflows or (for prod) underflows, the result depends on that order
        # (inf, or NaN with a 0 or an opposite inf; inf * tiny * tiny is inf or NaN): compare only inputs that no
        # order takes out of the normal range
        finite = np.abs(a[np.isfinite(a) & (a != 0)]).astype(np.float64)
        logs = np.log(finite)
        info = np.finfo(a.dtype)
        high, low = np.log(info.max) - 1, np.log(info.tiny) + 1  # margins for rounding at the ends
        if name == "prod" and (np.sum(np.maximum(logs, 0)) >= high or np.sum(np.minimum(logs, 0)) <= low):
            return
        if name == "sum" and np.log(np.sum(finite) + 1) >= high:
            return
    for axis in [None, (), *range(a.ndim), tuple(range(a.ndim))[::-1][:2]]:
        for keepdims in (False, True):
            expected = getattr(np, name)(a, axis=axis, keepdims=keepdims)
            if name in ("sum", "prod") and a.dtype.kind == "i":
                expected = expected.astype(np.int64)
            check(getattr(xp, name)(to_ow(a), axis=axis, keepdims=keepdims), expected)


@given(arrays(("float32", "float64", "int64", "int8"), min_dims=0, max_dims=2))
def test_unique_family_treats_nans_as_distinct(a):
    values, indices, inverse, counts = xp.unique_all(to_ow(a))
    ev, ei, einv, ec = np.unique_all(a)
    check(values, ev)
    np.testing.assert_array_equal(np.asarray(indices), ei)
    np.testing.assert_array_equal(np.asarray(counts), ec)
    assert tuple(inverse.shape) == a.shape
    np.testing.assert_array_equal(np.asarray(values)[np.asarray(inverse)], np.asarray(ev)[einv])
    check(xp.unique_values(to_ow(a)), ev)  # NumPy's unique_values need not sort
    check(xp.unique_counts(to_ow(a)).counts, np.unique_counts(a).counts)


@given(arrays(("float64", "int32"), min_dims=1), st.booleans())
def test_cumulative_sum_and_prod(a, include_initial):
    axis = a.ndim - 1
    check(
        xp.cumulative_sum(to_ow(a), axis=axis, include_initial=include_initial),
        np.cumulative_sum(
            a, axis=axis, include_initial=include_initial, dtype=np.int64 if a.dtype.kind == "i" else None
        ),
    )
    if a.dtype.kind == "f":
        check(
            xp.cumulative_prod(to_ow(a), axis=axis, include_initial=include_initial),
            np.cumulative_prod(a, axis=axis, include_initial=include_initial),
        )


@given(arrays(("float32", "int8"), min_dims=1, max_dims=3))
def test_manipulation(a):
    x = to_ow(a)
    check(xp.concat([x, x], axis=None), np.concat([a, a], axis=None))
    check(xp.concat([x, xp.astype(x, xp.float64)], axis=0), np.concat([a, a.astype(np.float64)], axis=0))
    check(xp.expand_dims(x, axis=-1), np.expand_dims(a, -1))
    perm = tuple(reversed(range(a.ndim)))
    check(xp.permute_dims(x, perm), np.permute_dims(a, perm))
    check(xp.flip(x, axis=()), a)
    check(xp.flip(x), np.flip(a))
    for got, want in zip(xp.unstack(x, axis=0), np.unstack(a, axis=0), strict=True):
        check(got, want)
    if a.shape[0] != 1:
        with pytest.raises(ValueError):
            xp.squeeze(x, axis=0)
    check(xp.squeeze(xp.expand_dims(x, axis=0), axis=0), a)
    check(xp.repeat(x, 2, axis=0), np.repeat(a, 2, axis=0))
    if a.shape[0]:
        idx = np.array([-1, 0, a.shape[0] - 1])
        check(xp.take(x, xp.asarray(idx), axis=0), np.take(a, idx, axis=0))
    check(xp.matrix_transpose(x) if a.ndim >= 2 else x, np.matrix_transpose(a) if a.ndim >= 2 else a)


@given(arrays(("float64", "complex128"), min_dims=1, max_dims=3, moderate=True))
def test_vecdot_conjugates_and_norms(a):
    x = to_ow(a)
    check(xp.vecdot(x, x), np.vecdot(a, a))
    check(xp.linalg.vector_norm(x, axis=tuple(range(a.ndim))), np.linalg.vector_norm(a, axis=tuple(range(a.ndim))))
    check(
        xp.linalg.vector_norm(x, axis=-1, keepdims=True, ord=1), np.linalg.vector_norm(a, axis=-1, keepdims=True, ord=1)
    )


@given(st.integers(0, 5), st.integers(0, 5), st.integers(-6, 6))
def test_creation(n, m, k):
    check(xp.eye(n, m, k=k), np.eye(n, m, k=k, dtype=np.float32))
    check(xp.linspace(0.0, 1.0, n, endpoint=False), np.linspace(0.0, 1.0, n, endpoint=False, dtype=np.float32))
    assert xp.arange(n).dtype == xp.int64 and xp.arange(0.5, n).dtype == xp.float32
    assert xp.full((2,), True).dtype == xp.bool and xp.full((2,), 1j).dtype == xp.complex64
    check(xp.linalg.trace(xp.ones((3, 3), dtype=xp.int8), offset=k), np.trace(np.ones((3, 3), np.int8), offset=k))


@given(st.integers(0, 3), st.sampled_from([-(2**63), -(2**70), 2**63, 2**80]))
def test_eye_with_a_diagonal_outside_any_int64(n, k):
    check(xp.eye(n, k=k), np.zeros((n, n), np.float32))


@given(arrays(("float64",), min_dims=1, max_dims=3, moderate=True), st.integers(0, 2))
def test_cross_broadcasts_ranks_and_axes(a, drop):
    """The standard broadcasts the non-compute axes, ranks included (PyTorch's linalg.cross needs equal ranks)."""
    a = np.resize(a, a.shape[:-1] + (3,))
    b = np.arange(3.0) - 1.5
    b = b.reshape((1,) * max(a.ndim - 1 - drop, 0) + (3,))
    check(xp.linalg.cross(to_ow(a), to_ow(b)), np.cross(a, b))


def test_asarray_copy_semantics():
    a = xp.asarray([1.0, 2.0])
    assert xp.asarray(a) is a
    assert xp.asarray(a, copy=True) is not a
    with pytest.raises(ValueError):
        xp.asarray(a, dtype=xp.float64, copy=False)
    with pytest.raises(ValueError):
        xp.asarray([1, 2], copy=False)
    shared = np.arange(3.0)
    xp.asarray(shared, copy=False)[0] = 7.0
    assert shared[0] == 7.0
    assert xp.asarray([[True, False]]).dtype == xp.bool and xp.asarray([1, 2.5]).dtype == xp.float32


def test_dtype_functions_and_info():
    assert xp.isdtype(xp.int8, "signed integer") and xp.isdtype(xp.uint8, ("bool", "unsigned integer"))
    assert not xp.isdtype(xp.float32, "integral") and xp.isdtype(xp.complex64, "numeric")
    with pytest.raises(ValueError):
        xp.isdtype(xp.int8, "whole")
    f = xp.finfo(xp.complex64)
    assert (f.bits, f.eps, f.dtype) == (32, float(np.finfo(np.float32).eps), xp.float32)
    i = xp.iinfo(xp.asarray([1], dtype=xp.int16))
    assert (i.bits, i.min, i.max) == (16, -32768, 32767)
    info = xp.__array_namespace_info__()
    assert info.default_dtypes()["real floating"] == xp.float32
    assert set(info.dtypes(kind="real floating")) == {"float32", "float64"}
    assert info.default_device() in info.devices()
    assert info.capabilities()["boolean indexing"] is True


@given(arrays(("uint8", "int8"), min_dims=1, max_dims=2))
def test_prod_in_a_requested_small_integer_dtype(a):
    """``dtype=`` is the result's dtype, also below int64 (PyTorch's prod would widen to int64)."""
    got = xp.prod(to_ow(a), dtype=xp.asarray(a).dtype)
    assert got.dtype.name == a.dtype.name
    check(got, np.prod(a, dtype=a.dtype))
