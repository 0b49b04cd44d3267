"""``opweave.masked`` against NumPy formulas over the kept elements (``torch.masked`` semantics)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import opweave as ow
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

SETTINGS = settings(max_examples=20, deadline=None)
M = ow.masked


@st.composite
def masked_inputs(draw, dtypes=(ow.float32, ow.float64)):
    """(values, mask, dim, keepdim, dtype): a 0- to 3-D array, a broadcastable mask, a dim to reduce."""
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=0, max_size=3)))
    dtype = draw(st.sampled_from(dtypes))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    if dtype.is_floating_point:
        x = rng.standard_normal(shape).astype(dtype.numpy)
    else:
        x = rng.integers(-5, 6, shape).astype(dtype.numpy)
    mask_shape = shape[draw(st.integers(0, len(shape))) :] if shape else ()
    mask = rng.random(mask_shape) < 0.6
    dim = draw(st.integers(-len(shape), len(shape) - 1)) if shape else None
    return np.asarray(x), np.asarray(mask), dim, draw(st.booleans()), dtype


def _full_mask(x, mask):
    return np.broadcast_to(mask, x.shape)


def _reduce(x, keep, dim, keepdim, fill, fn):
    filled = np.where(keep, x, fill)
    axis = None if dim is None else dim
    return fn(filled, axis=axis, keepdims=keepdim)


def _close(got, expected, dtype):
    tol = 2e-5 if dtype is ow.float32 else 1e-11
    np.testing.assert_allclose(got.numpy(), expected, rtol=tol, atol=tol, equal_nan=True)


@SETTINGS
@given(masked_inputs())
def test_masked_reductions(case):
    x, mask, dim, keepdim, dtype = case
    keep = _full_mask(x, mask)
    t, m = ow.tensor(x), ow.tensor(mask)
    _close(M.sum(t, dim, keepdim=keepdim, mask=m), _reduce(x, keep, dim, keepdim, 0, np.sum), dtype)
    _close(M.prod(t, dim, keepdim=keepdim, mask=m), _reduce(x, keep, dim, keepdim, 1, np.prod), dtype)
    _close(M.amax(t, dim, keepdim=keepdim, mask=m), _reduce(x, keep, dim, keepdim, -np.inf, np.max), dtype)
    _close(M.amin(t, dim, keepdim=keepdim, mask=m), _reduce(x, keep, dim, keepdim, np.inf, np.min), dtype)
    count = _reduce(np.ones_like(x), keep, dim, keepdim, 0, np.sum)
    total = _reduce(x, keep, dim, keepdim, 0, np.sum)
    with np.errstate(all="ignore"):
        mean = total / count
        _close(M.mean(t, dim, keepdim=keepdim, mask=m), mean, dtype)
        centred = x - (_reduce(x, keep, dim, True, 0, np.sum) / _reduce(np.ones_like(x), keep, dim, True, 0, np.sum))
        ss = _reduce(centred * centred, keep, dim, keepdim, 0, np.sum)
        var = ss / np.maximum(count - 1, 0)
    _close(M.var(t, dim, keepdim=keepdim, mask=m), var, dtype)
    _close(M.std(t, dim, correction=0, keepdim=keepdim, mask=m), np.sqrt(ss / count), dtype)
    norm = np.sqrt(_reduce(x * x, keep, dim, keepdim, 0, np.sum))
    _close(M.norm(t, 2.0, dim, keepdim=keepdim, mask=m), norm, dtype)
    with np.errstate(all="ignore"):
        lse = np.log(_reduce(np.exp(x), keep, dim, keepdim, 0, np.sum))
    _close(M.logsumexp(t, dim, keepdim=keepdim, mask=m), lse, dtype)


@SETTINGS
@given(masked_inputs(), st.sampled_from(["softmax", "log_softmax", "softmin", "cumsum", "cumprod", "normalize"]))
def test_masked_along_one_dim(case, name):
    x, mask, dim, _, dtype = case
    dim = 0 if dim is None else dim
    keep = _full_mask(x, mask)
    t, m = ow.tensor(x), ow.tensor(mask)
    axis = dim if x.ndim else None
    with np.errstate(all="ignore"):
        if name in ("softmax", "log_softmax", "softmin"):
            sign = -1 if name == "softmin" else 1
            z = np.where(keep, sign * x, -np.inf)
            e = np.exp(z - np.max(z, axis=axis, keepdims=True))
            expected = e / np.sum(e, axis=axis, keepdims=True)
            if name == "log_softmax":
                expected = np.log(expected)
            got = getattr(M, name)(t, dim, mask=m)
        elif name == "normalize":
            filled = np.where(keep, x, 0)
            nrm = np.sqrt(np.sum(filled * filled, axis=axis, keepdims=True))
            expected = filled / np.maximum(nrm, 1e-12)
            got = M.normalize(t, 2.0, dim, mask=m)
        else:
            fn, fill = (np.cumsum, 0) if name == "cumsum" else (np.cumprod, 1)
            filled = np.where(keep, x, fill)
            expected = fn(filled.reshape(-1) if axis is None else filled, axis=0 if axis is None else axis)
            expected = expected.reshape(x.shape)
            got = getattr(M, name)(t, dim, mask=m)
    _close(got, expected, dtype)


@SETTINGS
@given(masked_inputs(dtypes=(ow.float32, ow.int64)))
def test_masked_arg_reductions_median_and_integer_sums(case):
    x, mask, dim, keepdim, dtype = case
    keep = _full_mask(x, mask)
    t, m = ow.tensor(x), ow.tensor(mask)
    got = M.argmax(t, dim, keepdim=keepdim, mask=m)
    assert got.dtype is dtype  # torch.masked returns the input's dtype
    fill_max = -np.inf if dtype.is_floating_point else np.iinfo(np.int64).min
    filled = np.where(keep, x, fill_max)
    expected = np.argmax(filled, axis=dim, keepdims=keepdim) if x.ndim else np.array(0)
    np.testing.assert_array_equal(got.numpy(), expected.astype(dtype.numpy))
    s = M.sum(t, dim, keepdim=keepdim, mask=m)
    assert s.dtype is (ow.int64 if not dtype.is_floating_point else dtype)
    if x.ndim and dtype.is_floating_point:
        filled = np.where(keep, x, np.nan)
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            med = np.nanquantile(filled, 0.5, axis=dim, keepdims=keepdim, method="lower")
        _close(M.median(t, dim, keepdim=keepdim, mask=m), med, dtype)


def test_logaddexp_masks_each_operand():
    a, b = ow.tensor([0.0, 1.0, 2.0]), ow.tensor([1.0, -1.0, math.inf])
    got = M.logaddexp(a, b, input_mask=ow.tensor([True, False, True]), other_mask=ow.tensor([True, True, False]))
    np.testing.assert_allclose(got.numpy(), [np.logaddexp(0.0, 1.0), -1.0, 2.0], rtol=1e-6)


def test_errors_as_pytorch():
    t = ow.ones(2, 3)
    with pytest.raises(IndexError):
        M.sum(t, 2)
    with pytest.raises(RuntimeError):
        M.sum(t, (1, 1))
    with pytest.raises(IndexError):
        M.sum(t, 0, mask=ow.ones(1, 2, 3, dtype=ow.bool))
    with pytest.raises(ValueError):
        M.median(ow.ones(2, dtype=ow.int64), 0, mask=ow.zeros(2, dtype=ow.bool))


@SETTINGS
@given(masked_inputs(dtypes=(ow.float32, ow.float64, ow.int64)), st.booleans())
def test_masked_argmin_dtypes_and_no_mask(case, no_mask):
    """argmin, integer products, ``dtype=`` and ``mask=None`` (every element kept)."""
    x, mask, dim, keepdim, dtype = case
    keep = np.ones(x.shape, bool) if no_mask else _full_mask(x, mask)
    t, m = ow.tensor(x), None if no_mask else ow.tensor(mask)
    fill_min = np.inf if dtype.is_floating_point else np.iinfo(np.int64).max
    expected = np.argmin(np.where(keep, x, fill_min), axis=dim, keepdims=keepdim) if x.ndim else np.array(0)
    got = M.argmin(t, dim, keepdim=keepdim, mask=m)
    assert got.dtype is dtype
    np.testing.assert_array_equal(got.numpy(), expected.astype(dtype.numpy))
    assert M.argmin(t, dim, keepdim=keepdim, dtype=ow.int64, mask=m).dtype is ow.int64
    if not dtype.is_floating_point:  # integer products accumulate in int64 (small values: no overflow)
        got = M.prod(t, dim, keepdim=keepdim, mask=m)
        assert got.dtype is ow.int64
        np.testing.assert_array_equal(got.numpy(), _reduce(x, keep, dim, keepdim, 1, np.prod))
        return
    got = M.amax(t, dim, keepdim=keepdim, dtype=ow.float64, mask=m)
    assert got.dtype is ow.float64
    _close(got, _reduce(x, keep, dim, keepdim, -np.inf, np.max), dtype)
    got = M.mean(t, dim, keepdim=keepdim, dtype=ow.float64, mask=m)
    assert got.dtype is ow.float64
    with np.errstate(all="ignore"):
        mean = _reduce(x, keep, dim, keepdim, 0, np.sum) / _reduce(np.ones_like(x), keep, dim, keepdim, 0, np.sum)
    _close(got, mean, dtype)
    with np.errstate(all="ignore"):  # ord=-inf: masked-out elements count as +inf
        expected = _reduce(np.abs(x), keep, dim, keepdim, np.inf, np.min)
    _close(M.norm(t, -math.inf, dim, keepdim=keepdim, mask=m), expected, dtype)
    along = 0 if dim is None else dim
    got = M.cumsum(t, along, dtype=ow.float64, mask=m)
    assert got.dtype is ow.float64
    filled = np.where(keep, x, 0)
    _close(got, np.cumsum(filled, axis=along) if x.ndim else filled, dtype)


def test_masked_functions_keep_their_names_and_signatures():
    import inspect

    for name in M.__all__:
        fn = getattr(M, name)
        assert fn.__name__ == name and fn.__doc__
    assert list(inspect.signature(M.sum).parameters) == ["input", "dim", "keepdim", "dtype", "mask"]
    assert list(inspect.signature(M.softmax).parameters) == ["input", "dim", "dtype", "mask"]
    assert list(inspect.signature(M.var).parameters) == [
        "input",
        "dim",
        "unbiased",
        "correction",
        "keepdim",
        "dtype",
        "mask",
    ]
    with pytest.raises(TypeError):
        M.sum(ow.ones(2), 0, True)  # keepdim is keyword-only, as in torch.masked
