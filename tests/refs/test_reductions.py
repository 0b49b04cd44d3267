"""Reduction canonical ops (sum, prod, mean, extrema, any/all, var/std, logsumexp, norm, count_nonzero,
softmax) against NumPy/SciPy oracles: every supported dtype, dims as None/int/list, keepdim, 0-dim and
empty inputs, non-contiguous layouts, special values, promotion rules, out= variants, meta and errors."""

from __future__ import annotations

import math
import warnings

import numpy as np
import opweave as D
import pytest
import scipy.special as sp
from _rsi_support import (
    ALL,
    BOOL,
    COMPLEX,
    FLOATING,
    FLOATS,
    INTS,
    ORDERED,
    REAL,
    P,
    cases,
    check,
    compute_dtype,
    dims_for,
    layout_tensor,
    np_axes,
    quiet,
    same_meta,
    sample,
    tensor,
)
from hypothesis import given, settings
from hypothesis import strategies as st

ops = D.ops
INTEGRAL = BOOL + INTS


def _input(case, dtype, **kwargs):
    shape, layout, rng, special = case
    arr = sample(rng, shape, dtype, special and (dtype.is_floating_point or dtype.is_complex), **kwargs)
    return layout_tensor(arr, layout)


def _accumulate_dtype(dtype):
    """PyTorch: sum/prod of bool and integers give int64."""
    return D.int64 if dtype in INTEGRAL else dtype


def _keep(expected, axes, keepdim):
    return np.expand_dims(expected, axes) if keepdim and axes else expected


# -- sum, prod, nansum -----------------------------------------------------


@pytest.mark.parametrize("dtype", ALL)
@settings(max_examples=15, deadline=None)
@given(case=cases(), data=st.data())
def test_sum(dtype, case, data):
    t, values = _input(case, dtype)
    dim = data.draw(dims_for(t.ndim))
    keepdim = data.draw(st.booleans())
    axes = np_axes(dim, t.ndim)
    want = quiet(np.sum, values.astype(compute_dtype(dtype)), axis=axes, keepdims=keepdim)
    check(D.sum(t, dim, keepdim), want, _accumulate_dtype(dtype))
    check(D.sum(t), quiet(np.sum, values.astype(compute_dtype(dtype))), _accumulate_dtype(dtype))
    assert np.array_equal(t.numpy(), values, equal_nan=True)  # input unchanged


@pytest.mark.parametrize("dtype", ALL)
@settings(max_examples=12, deadline=None)
@given(case=cases(), data=st.data())
def test_prod(dtype, case, data):
    t, values = _input(case, dtype, low=-2, high=2)
    keepdim = data.draw(st.booleans())
    wide = values.astype(compute_dtype(dtype))
    check(D.prod(t), quiet(np.prod, wide), _accumulate_dtype(dtype))
    dim = data.draw(st.integers(-max(t.ndim, 1), max(t.ndim, 1) - 1))
    axes = np_axes(dim, t.ndim)
    check(D.prod(t, dim, keepdim), quiet(np.prod, wide, axis=axes, keepdims=keepdim), _accumulate_dtype(dtype))


@pytest.mark.parametrize("dtype", INTS + [D.bool, D.float32, D.complex64])
@pytest.mark.parametrize("target", [D.int32, D.float64, D.complex128])
def test_sum_prod_dtype_argument(dtype, target):
    values = np.array([[1, 0, 3], [2, 2, 1]]).astype(dtype.numpy)
    t = tensor(values)
    if dtype.is_complex and not target.is_complex:
        with pytest.raises(TypeError, match="sum"):
            D.sum(t, dtype=target)
        return
    check(D.sum(t, dtype=target), values.astype(target.numpy).sum(), target)
    check(D.sum(t, [1], True, dtype=target), values.astype(target.numpy).sum(1, keepdims=True), target)
    check(D.prod(t, 0, dtype=target), values.astype(target.numpy).prod(0), target)


@pytest.mark.parametrize("dtype", REAL)
@settings(max_examples=12, deadline=None)
@given(case=cases(), data=st.data())
def test_nansum(dtype, case, data):
    t, values = _input(case, dtype)
    dim = data.draw(dims_for(t.ndim))
    keepdim = data.draw(st.booleans())
    want = quiet(np.nansum, values.astype(compute_dtype(dtype)), axis=np_axes(dim, t.ndim), keepdims=keepdim)
    check(D.nansum(t, dim, keepdim), want, _accumulate_dtype(dtype))


def test_nansum_rejects_complex():
    with pytest.raises(TypeError, match="nansum"):
        D.nansum(tensor([1 + 1j]))


# -- mean, nanmean ---------------------------------------------------------


@pytest.mark.parametrize("dtype", FLOATING)
@settings(max_examples=15, deadline=None)
@given(case=cases(), data=st.data())
def test_mean(dtype, case, data):
    t, values = _input(case, dtype)
    dim = data.draw(dims_for(t.ndim))
    keepdim = data.draw(st.booleans())
    wide = values.astype(compute_dtype(dtype))
    check(D.mean(t, dim, keepdim), quiet(np.mean, wide, axis=np_axes(dim, t.ndim), keepdims=keepdim), dtype)
    check(D.mean(t), quiet(np.mean, wide), dtype)


@pytest.mark.parametrize("dtype", INTEGRAL)
def test_mean_of_integers_needs_a_floating_dtype(dtype):
    t = tensor([[1, 0, 1], [1, 1, 0]], dtype)
    with pytest.raises(TypeError, match="mean"):
        D.mean(t)
    with pytest.raises(TypeError, match="mean"):
        D.mean(t, dtype=D.int64)
    check(D.mean(t, [1], dtype=D.float64), np.array([2 / 3, 2 / 3]), D.float64)
    check(D.mean(t, dtype=D.complex64), np.array(4 / 6), D.complex64)


@pytest.mark.parametrize("dtype", FLOATS)
@settings(max_examples=15, deadline=None)
@given(case=cases(), data=st.data())
def test_nanmean(dtype, case, data):
    t, values = _input(case, dtype)
    dim = data.draw(dims_for(t.ndim))
    keepdim = data.draw(st.booleans())
    want = quiet(np.nanmean, values.astype(np.float64), axis=np_axes(dim, t.ndim), keepdims=keepdim)
    check(D.nanmean(t, dim, keepdim), want, dtype)


def test_nanmean_rejects_integers():
    with pytest.raises(TypeError, match="nanmean"):
        D.nanmean(tensor([1, 2]))


# -- extrema ---------------------------------------------------------------


def _has_empty_axis(shape, axes):
    return any(shape[a] == 0 for a in axes) or (not axes and 0 in shape)


@pytest.mark.parametrize("dtype", ORDERED)
@pytest.mark.parametrize("name", ["amax", "amin"])
@settings(max_examples=12, deadline=None)
@given(case=cases(), data=st.data())
def test_amax_amin(name, dtype, case, data):
    t, values = _input(case, dtype)
    dim = data.draw(dims_for(t.ndim, allow_none=False))
    keepdim = data.draw(st.booleans())
    axes = np_axes(dim, t.ndim)
    if any(values.shape[a] == 0 for a in axes):
        with pytest.raises(ValueError, match=name):
            getattr(D, name)(t, dim, keepdim)
        return
    oracle = np.max if name == "amax" else np.min
    check(getattr(D, name)(t, dim, keepdim), quiet(oracle, values, axis=axes, keepdims=keepdim), dtype)


@pytest.mark.parametrize("dtype", ORDERED)
@pytest.mark.parametrize("name", ["max", "min"])
@settings(max_examples=12, deadline=None)
@given(case=cases(), data=st.data())
def test_max_min_dim(name, dtype, case, data):
    t, values = _input(case, dtype)
    dim = data.draw(st.integers(-max(t.ndim, 1), max(t.ndim, 1) - 1))
    keepdim = data.draw(st.booleans())
    fn = getattr(D, name)
    axis = dim % t.ndim if t.ndim else None
    if t.ndim and values.shape[axis] == 0:
        with pytest.raises(ValueError, match=name):
            fn(t, dim, keepdim)
        return
    got_values, got_indices = fn(t, dim, keepdim)
    wide = values.astype(np.uint8) if dtype is D.bool else values
    if t.ndim == 0:
        check(got_values, values, dtype)
        check(got_indices, np.array(0), D.int64)
        return
    oracle, arg = (np.max, np.argmax) if name == "max" else (np.min, np.argmin)
    check(got_values, quiet(oracle, values, axis=axis, keepdims=keepdim), dtype)
    want_index = arg(wide, axis=axis)  # NumPy: first occurrence, NaN wins (as torch)
    check(got_indices, np.expand_dims(want_index, axis) if keepdim else want_index, D.int64)


@pytest.mark.parametrize("dtype", ORDERED)
@settings(max_examples=10, deadline=None)
@given(case=cases(), data=st.data())
def test_max_min_all_and_aminmax(dtype, case, data):
    t, values = _input(case, dtype)
    keepdim = data.draw(st.booleans())
    if values.size == 0:
        for fn in (D.max, D.min):
            with pytest.raises(ValueError):
                fn(t)
        return
    check(D.max(t), quiet(np.max, values), dtype)
    check(D.min(t), quiet(np.min, values), dtype)
    low, high = D.aminmax(t, keepdim=keepdim)
    check(low, quiet(np.min, values, keepdims=keepdim), dtype)
    check(high, quiet(np.max, values, keepdims=keepdim), dtype)
    if t.ndim:
        dim = data.draw(st.integers(0, t.ndim - 1))
        low, high = D.aminmax(t, dim=dim, keepdim=keepdim)
        check(low, quiet(np.min, values, axis=dim, keepdims=keepdim), dtype)
        check(high, quiet(np.max, values, axis=dim, keepdims=keepdim), dtype)


def test_max_other_is_maximum():
    a, b = tensor([1.0, np.nan, 3.0]), tensor([2.0, 1.0, -1.0])
    check(D.max(a, b), np.array([2.0, np.nan, 3.0]), D.float64)
    check(D.min(a, b), np.array([1.0, np.nan, -1.0]), D.float64)
    values, indices = D.max(a, 0)
    assert np.isnan(values.item()) and indices.item() == 1


@pytest.mark.parametrize("dtype", REAL)
@pytest.mark.parametrize("name", ["argmax", "argmin"])
@settings(max_examples=12, deadline=None)
@given(case=cases(), data=st.data())
def test_argmax_argmin(name, dtype, case, data):
    t, values = _input(case, dtype)
    keepdim = data.draw(st.booleans())
    fn, oracle = getattr(D, name), getattr(np, name)
    if values.size == 0:
        with pytest.raises(ValueError, match=name):
            fn(t)
    else:
        want = oracle(values.reshape(-1))
        check(fn(t, None, keepdim), np.full((1,) * t.ndim, want) if keepdim else np.array(want), D.int64)
    if t.ndim:
        dim = data.draw(st.integers(-t.ndim, t.ndim - 1))
        if values.shape[dim] == 0:
            with pytest.raises(ValueError, match=name):
                fn(t, dim)
            return
        want = oracle(values, axis=dim)
        check(fn(t, dim, keepdim), np.expand_dims(want, dim) if keepdim else want, D.int64)


@pytest.mark.parametrize("fn", [D.argmax, D.argmin, D.amax, D.amin, D.max, D.min])
def test_extrema_reject_complex(fn):
    with pytest.raises(TypeError):
        fn(tensor([1 + 2j, 3 + 0j]))


def test_argmax_rejects_bool():
    with pytest.raises(TypeError, match="argmax"):
        D.argmax(tensor([True, False]))


# -- any, all, count_nonzero -----------------------------------------------


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("name", ["any", "all"])
@settings(max_examples=10, deadline=None)
@given(case=cases(), data=st.data())
def test_any_all(name, dtype, case, data):
    t, values = _input(case, dtype, low=-1, high=1)
    dim = data.draw(dims_for(t.ndim))
    keepdim = data.draw(st.booleans())
    expected_dtype = D.uint8 if dtype is D.uint8 else D.bool
    oracle = getattr(np, name)
    truth = values != 0
    fn = getattr(D, name)
    check(fn(t), oracle(truth), expected_dtype)
    check(fn(t, dim, keepdim), oracle(truth, axis=np_axes(dim, t.ndim), keepdims=keepdim), expected_dtype)
    if t.ndim:
        d = data.draw(st.integers(-t.ndim, t.ndim - 1))
        check(getattr(ops, name).dim(t, d, keepdim), oracle(truth, axis=d, keepdims=keepdim), expected_dtype)


@pytest.mark.parametrize("dtype", ALL)
@settings(max_examples=10, deadline=None)
@given(case=cases(), data=st.data())
def test_count_nonzero(dtype, case, data):
    t, values = _input(case, dtype, low=-1, high=1)
    dim = data.draw(dims_for(t.ndim, allow_none=False, allow_list=True))
    axes = np_axes(dim, t.ndim)
    check(D.count_nonzero(t), np.count_nonzero(values), D.int64)
    if isinstance(dim, list):
        check(D.count_nonzero(t, dim), np.count_nonzero(values, axis=axes), D.int64)
    else:
        check(ops.count_nonzero.default(t, dim), np.count_nonzero(values, axis=axes), D.int64)


# -- var, std --------------------------------------------------------------


def _np_var(values, axes, correction, keepdim):
    wide = values.astype(np.complex128 if np.iscomplexobj(values) else np.float64)
    mean = quiet(np.mean, wide, axis=axes, keepdims=True)
    sq = quiet(lambda: np.abs(wide - mean) ** 2)
    n = math.prod(values.shape[a] for a in axes) if axes else (1 if values.ndim == 0 else values.size)
    total = quiet(np.sum, sq, axis=axes, keepdims=keepdim)
    return quiet(np.divide, total, max(n - correction, 0))


@pytest.mark.parametrize("dtype", FLOATING)
@pytest.mark.parametrize("name", ["var", "std"])
@settings(max_examples=12, deadline=None)
@given(case=cases(), data=st.data())
def test_var_std(name, dtype, case, data):
    t, values = _input(case, dtype)
    dim = data.draw(dims_for(t.ndim))
    keepdim = data.draw(st.booleans())
    correction = data.draw(st.sampled_from([None, 0, 1, 2, 0.5]))
    axes = np_axes(dim, t.ndim)
    want = _np_var(values, axes, 1 if correction is None else correction, keepdim)
    if name == "std":
        want = quiet(np.sqrt, want)
    real = dtype.to_real()
    fn = getattr(D, name)
    check(fn(t, dim, correction=correction, keepdim=keepdim), want, real, atol=1e-6)
    unbiased = data.draw(st.booleans())
    want = _np_var(values, axes, int(unbiased), keepdim)
    check(fn(t, dim, unbiased, keepdim), quiet(np.sqrt, want) if name == "std" else want, real, atol=1e-6)
    whole = _np_var(values, tuple(range(t.ndim)), 1, False)
    check(fn(t), quiet(np.sqrt, whole) if name == "std" else whole, real, atol=1e-6)


@pytest.mark.parametrize("dtype", [D.float32, D.float64, D.complex128, D.bfloat16])
@pytest.mark.parametrize("name", ["var_mean", "std_mean"])
@settings(max_examples=10, deadline=None)
@given(case=cases(), data=st.data())
def test_var_mean_std_mean(name, dtype, case, data):
    t, values = _input(case, dtype)
    dim = data.draw(dims_for(t.ndim))
    keepdim = data.draw(st.booleans())
    axes = np_axes(dim, t.ndim)
    spread, mean = getattr(D, name)(t, dim, correction=0, keepdim=keepdim)
    want = _np_var(values, axes, 0, keepdim)
    check(spread, quiet(np.sqrt, want) if name == "std_mean" else want, dtype.to_real(), atol=1e-6)
    check(mean, quiet(np.mean, values.astype(compute_dtype(dtype)), axis=axes, keepdims=keepdim), dtype, atol=1e-6)
    spread, mean = getattr(D, name)(t)
    check(spread, _one(name, values), dtype.to_real(), atol=1e-6)
    check(mean, quiet(np.mean, values.astype(compute_dtype(dtype))), dtype, atol=1e-6)


def _one(name, values):
    want = _np_var(values, tuple(range(values.ndim)), 1, False)
    return quiet(np.sqrt, want) if name == "std_mean" else want


@pytest.mark.parametrize("fn", [D.var, D.std, D.var_mean, D.std_mean])
def test_var_rejects_integers(fn):
    with pytest.raises(TypeError):
        fn(tensor([1, 2, 3]))


# -- logsumexp, norm -------------------------------------------------------


@pytest.mark.parametrize("dtype", REAL + BOOL)
@settings(max_examples=12, deadline=None)
@given(case=cases(), data=st.data())
def test_logsumexp(dtype, case, data):
    t, values = _input(case, dtype)
    dim = data.draw(dims_for(t.ndim, allow_none=False))
    keepdim = data.draw(st.booleans())
    axes = np_axes(dim, t.ndim)
    expected_dtype = dtype if dtype.is_floating_point else D.float32
    wide = values.astype(np.float64)
    if wide.ndim == 0:
        want = wide
    elif wide.size:
        want = quiet(sp.logsumexp, wide, axis=axes, keepdims=keepdim)
    else:
        want = _empty_lse(wide, axes, keepdim)
    check(D.logsumexp(t, dim, keepdim), want, expected_dtype, atol=1e-6)


@settings(max_examples=20, deadline=None)
@given(
    re=st.floats(-50, 50),
    im=st.floats(-1e4, 1e4),
    shape=st.sampled_from([(), (1,), (1, 1)]),
    dtype=st.sampled_from([D.complex64, D.complex128]),
)
def test_complex_logsumexp_of_one_element_is_the_principal_log_exp(re, im, shape, dtype):
    """``log(exp(z))`` wraps the imaginary part into (-pi, pi], a 0-dim input included (PyTorch)."""
    z = np.full(shape, complex(re, im), dtype.numpy)
    got = D.logsumexp(D.tensor(z), [] if shape == () else 0).numpy()
    want = np.log(np.exp(z.astype(np.complex128)))
    want = want if shape == () else want[0]
    np.testing.assert_allclose(got.real, want.real, atol=1e-4 if dtype is D.complex64 else 1e-9)
    # the angle itself is rounded in the input's precision: compare on the circle
    tol = (abs(im) + 1) * (1e-6 if dtype is D.complex64 else 1e-13)
    assert np.all(np.abs(np.angle(np.exp(1j * (got.imag - want.imag)))) <= tol)
    assert np.all(np.abs(got.imag) <= np.pi + tol)


def _empty_lse(wide, axes, keepdim):
    return quiet(np.log, np.sum(np.exp(wide), axis=axes, keepdims=keepdim))


def _np_norm(values, p, axes, keepdim):
    a = np.abs(values.astype(np.complex128 if np.iscomplexobj(values) else np.float64))
    if p == math.inf:
        return np.max(a, axis=axes, keepdims=keepdim)
    if p == -math.inf:
        return np.min(a, axis=axes, keepdims=keepdim)
    if p == 0:
        return np.sum(a != 0, axis=axes, keepdims=keepdim).astype(np.float64)
    return quiet(np.power, quiet(np.sum, quiet(np.power, a, p), axis=axes, keepdims=keepdim), 1.0 / p)


@pytest.mark.parametrize("dtype", FLOATING)
@pytest.mark.parametrize("p", [0, 1, 2, 3, 0.5, math.inf, -math.inf])
@settings(max_examples=8, deadline=None)
@given(case=cases(), data=st.data())
def test_norm(p, dtype, case, data):
    t, values = _input(case, dtype)
    dim = data.draw(dims_for(t.ndim, allow_none=False))
    keepdim = data.draw(st.booleans())
    axes = np_axes(dim, t.ndim)
    real = dtype.to_real()
    if math.isinf(p) and _has_empty_axis(values.shape, axes):
        with pytest.raises(ValueError):
            D.norm(t, p, dim, keepdim)
        return
    check(D.norm(t, p, dim, keepdim), _np_norm(values, p, axes, keepdim), real, rtol=_loose(real), atol=1e-6)
    if not (math.isinf(p) and values.size == 0):
        check(D.norm(t, p), _np_norm(values, p, tuple(range(t.ndim)), False), real, rtol=_loose(real), atol=1e-6)


def _loose(dtype):
    return {D.float16: 4e-3, D.bfloat16: 3e-2, D.float32: 1e-5, D.float64: 1e-12}[dtype]


def test_norm_dtype_overloads_and_errors():
    t = tensor([[3.0, -4.0], [0.0, 12.0]], D.float32)
    check(ops.norm.ScalarOpt_dtype(t, 2, dtype=D.float64), np.array(13.0), D.float64)
    check(ops.norm.ScalarOpt_dim_dtype(t, 1, [1], True, dtype=D.float64), np.array([[7.0], [12.0]]), D.float64)
    check(D.norm(tensor([3 + 4j, 0j])), np.array(5.0), D.float64)
    with pytest.raises(TypeError, match="norm"):
        D.norm(tensor([1, 2]))


# -- softmax ---------------------------------------------------------------


def _np_softmax(values, axis, log):
    wide = values.astype(np.float64)
    if wide.ndim == 0:
        return quiet(np.subtract, wide, wide) if log else quiet(np.divide, np.exp(wide - wide), np.exp(wide - wide))
    peak = quiet(np.max, wide, axis=axis, keepdims=True) if wide.size else 0
    shifted = quiet(np.subtract, wide, peak)
    total = quiet(np.sum, quiet(np.exp, shifted), axis=axis, keepdims=True)
    return quiet(lambda: shifted - np.log(total) if log else np.exp(shifted) / total)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("log", [False, True])
@settings(max_examples=12, deadline=None)
@given(case=cases(), data=st.data())
def test_softmax(log, dtype, case, data):
    t, values = _input(case, dtype)
    dim = data.draw(st.integers(-max(t.ndim, 1), max(t.ndim, 1) - 1))
    fn = D.log_softmax if log else D.softmax
    want = quiet(_np_softmax, values, dim % t.ndim if t.ndim else None, log)
    check(fn(t, dim), want, dtype, atol=1e-6)
    check(fn(t, dim, D.float64), want, D.float64, atol=1e-12)
    internal = ops._log_softmax if log else ops._softmax
    check(internal(t, dim, False), want, dtype, atol=1e-6)
    if dtype in (D.float16, D.bfloat16):
        check(internal(t, dim, True), want, D.float32, atol=1e-6)


def test_softmax_errors():
    with pytest.raises(TypeError, match="softmax"):
        D.softmax(tensor([1, 2]), 0)
    with pytest.raises(TypeError, match="_softmax"):
        ops._softmax(tensor([1.0], D.float32), 0, True)
    with pytest.raises(ValueError, match="softmax"):
        D.softmax(tensor([1.0]), 1)
    check(D.softmax(tensor([1, 2]), 0, D.float32), sp.softmax([1.0, 2.0]), D.float32)


# -- empty reductions, out=, meta, errors ----------------------------------


def test_empty_reductions():
    t = tensor(np.zeros((0, 3)), D.float32)
    check(D.sum(t), np.array(0.0), D.float32)
    check(D.sum(t, 0), np.zeros(3), D.float32)
    check(D.prod(t), np.array(1.0), D.float32)
    check(D.mean(t), np.array(np.nan), D.float32)
    check(D.mean(t, 0), np.full(3, np.nan), D.float32)
    check(D.amax(t, 1), np.zeros((0,)), D.float32)
    check(D.logsumexp(t, 0), np.full(3, -np.inf), D.float32)
    check(D.any(t), np.array(False), D.bool)
    check(D.all(t), np.array(True), D.bool)
    check(D.count_nonzero(t, [0]), np.zeros(3), D.int64)
    check(D.var(t, 0), np.full(3, np.nan), D.float32)
    for fn in (lambda: D.amax(t, 0), lambda: D.amin(t), lambda: D.max(t, 0), lambda: D.argmax(t)):
        with pytest.raises(ValueError):
            fn()


def test_zero_dim_inputs():
    t = tensor(np.array(2.5), D.float32)
    for fn in (D.sum, D.prod, D.amax, D.max, D.mean, D.logsumexp):
        check(fn(t, 0) if fn is not D.max else fn(t, 0)[0], np.array(2.5), D.float32)
    check(D.sum(t, 0, True), np.array(2.5), D.float32)
    check(D.argmax(t, 0, True), np.array(0), D.int64)
    check(D.var(t, 0, correction=0), np.array(0.0), D.float32)
    with pytest.raises(ValueError, match="sum"):
        D.sum(t, 1)


def test_out_variants():
    t = tensor(np.arange(6.0).reshape(2, 3), D.float32)
    out = tensor(np.zeros((2, 3)), D.float32)
    with pytest.warns(UserWarning, match="resized"):
        result = ops.sum.dim_IntList_out(t, [1], out=out)
    assert result is out
    check(out, np.array([3.0, 12.0]), D.float32)
    values, indices = tensor(np.zeros(0), D.float32), tensor(np.zeros(0), D.int64)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # empty outs resize silently
        got = ops.max.dim_out(t, 1, values=values, indices=indices)
    assert got[0] is values and got[1] is indices
    check(values, np.array([2.0, 5.0]), D.float32)
    check(indices, np.array([2, 2]), D.int64)
    low, high = tensor(np.zeros(2), D.float32), tensor(np.zeros(2), D.float32)
    with pytest.warns(UserWarning, match="resized"):
        ops.aminmax.out(t, min=low, max=high)
    check(low, np.array(0.0), D.float32)
    check(high, np.array(5.0), D.float32)
    wrong = tensor(np.zeros(2), D.int64)
    with pytest.raises(TypeError, match="cast"):
        ops.mean.dim_out(t, [1], out=wrong)
    check(ops.mean.dim_out(t, [1], out=tensor(np.zeros(2), D.float64)), np.array([1.0, 4.0]), D.float64)


META_CASES = [
    ("sum", lambda t: D.sum(t, [0, -1], True)),
    ("sum_int", lambda t: D.sum(P.convert_element_type(t, D.int16), 1)),
    ("prod", lambda t: D.prod(t, 1)),
    ("nansum", lambda t: D.nansum(t)),
    ("mean", lambda t: D.mean(t, 0)),
    ("nanmean", lambda t: D.nanmean(t, 1, True)),
    ("amax", lambda t: D.amax(t, [1])),
    ("aminmax", lambda t: D.aminmax(t, dim=0, keepdim=True)),
    ("max_dim", lambda t: D.max(t, 1, True)),
    ("min_all", lambda t: D.min(t)),
    ("argmin", lambda t: D.argmin(t, keepdim=True)),
    ("any", lambda t: D.any(t, [0, 1])),
    ("all_u8", lambda t: D.all(P.convert_element_type(t, D.uint8), 1)),
    ("count_nonzero", lambda t: D.count_nonzero(t, [1])),
    ("var", lambda t: D.var(t, 1, correction=0)),
    ("std_mean", lambda t: D.std_mean(t, [0])),
    ("logsumexp", lambda t: D.logsumexp(t, [1], True)),
    ("norm", lambda t: D.norm(t, 3, [0])),
    ("softmax", lambda t: D.softmax(t, 1)),
    ("log_softmax", lambda t: D.log_softmax(t, 0, D.float64)),
]


@pytest.mark.parametrize("name,fn", META_CASES, ids=[c[0] for c in META_CASES])
@pytest.mark.parametrize("dtype", [D.float32, D.bfloat16])
def test_meta(name, fn, dtype):
    t, _ = layout_tensor(np.arange(12.0).reshape(3, 4).astype(dtype.numpy), "transposed")
    same_meta(fn, t)
    empty, _ = layout_tensor(np.zeros((3, 0)).astype(dtype.numpy), "contiguous")
    if name not in ("amax", "aminmax", "max_dim", "min_all", "argmin"):
        same_meta(fn, empty)


ERROR_CASES = [
    ("dim out of range", lambda t: D.sum(t, 2), ValueError),
    ("repeated dim", lambda t: D.sum(t, [0, -2]), ValueError),
    ("amax complex", lambda t: D.amax(P.convert_element_type(t, D.complex64)), TypeError),
    ("mean int", lambda t: D.mean(P.convert_element_type(t, D.int32), 0), TypeError),
    ("prod dim list", lambda t: D.prod(t, [0, 1]), TypeError),
    ("var int", lambda t: D.var(P.convert_element_type(t, D.int64), 0), TypeError),
    ("norm complex p", lambda t: D.norm(t, 1j), TypeError),
    ("max dim range", lambda t: D.max(t, -3), ValueError),
    ("argmax dim range", lambda t: D.argmax(t, 5), ValueError),
    ("softmax dim", lambda t: D.softmax(t, 2), ValueError),
    ("sum complex into real", lambda t: D.sum(P.convert_element_type(t, D.complex64), dtype=D.float32), TypeError),
]


@pytest.mark.parametrize("name,fn,exc", ERROR_CASES, ids=[c[0] for c in ERROR_CASES])
def test_errors(name, fn, exc):
    values = np.arange(6.0).reshape(2, 3)
    t = tensor(values, D.float32)
    with pytest.raises(exc):
        fn(t)
    assert np.array_equal(t.numpy(), values)


def test_overload_resolution():
    t = tensor(np.arange(6.0).reshape(2, 3))
    assert isinstance(D.max(t, 1), tuple)
    assert D.max(t, t).shape == (2, 3)
    check(D.any(t, (0, 1)), np.array(True), D.bool)
    check(D.std(t, 1), np.std(np.arange(6.0).reshape(2, 3), axis=1, ddof=1), D.float64)
    check(D.std(t, unbiased=False), np.std(np.arange(6.0)), D.float64)
    check(t.sum(1), np.array([3.0, 12.0]), D.float64)
    check(t.amax(), np.array(5.0), D.float64)


@pytest.mark.parametrize("dtype", COMPLEX)
def test_complex_sum_mean_prod(dtype):
    values = np.array([[1 + 2j, -3j], [0.5, 2 - 1j]]).astype(dtype.numpy)
    t = tensor(values)
    check(D.sum(t, 0), values.sum(0), dtype)
    check(D.mean(t, 1), values.mean(1), dtype)
    check(D.prod(t), values.prod(), dtype)
