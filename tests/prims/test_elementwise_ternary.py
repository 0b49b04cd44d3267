"""Ternary elementwise prims: where, clamp, lerp (PyTorch semantics)."""

from __future__ import annotations

import numpy as np
import opweave
import pytest
from _elementwise_support import (
    ALL,
    FLOATING,
    LAYOUTS,
    REAL,
    P,
    check_call,
    floats,
    make_inputs,
    seeds,
    shapes,
    unsupported,
)
from hypothesis import given, settings
from hypothesis import strategies as st

OTHER_LAYOUTS = LAYOUTS + ("scalar",)
three_layouts = st.tuples(st.sampled_from(LAYOUTS), st.sampled_from(OTHER_LAYOUTS), st.sampled_from(OTHER_LAYOUTS))


def _meta(shape, dtype):
    strides = [0] * len(shape)
    acc = 1
    for d in reversed(range(len(shape))):
        strides[d] = acc
        acc *= max(shape[d], 1)
    return P.empty_strided(list(shape), strides, dtype=dtype, device="meta")


# ---------------------------------------------------------------- where


@pytest.mark.parametrize("dtype", ALL)
@settings(max_examples=8, deadline=None)
@given(shape=shapes, layouts=three_layouts, seed=seeds)
def test_where(dtype, shape, layouts, seed):
    pred, a, b = make_inputs(seed, shape, [opweave.bool, dtype, dtype], layouts)
    check_call(P.where, [pred, a, b], np.where, dtype)


def test_where_scalar_predicate_and_branches():
    pred = opweave.from_numpy(np.array(True))
    a = opweave.from_numpy(np.array(1.5))
    b = opweave.from_numpy(np.arange(4.0))
    np.testing.assert_array_equal(P.where(pred, a, b).numpy(), [1.5] * 4)
    assert P.where(pred, a, opweave.from_numpy(np.array(2.0))).shape == ()
    meta = P.where(pred, a, _meta((4,), opweave.float64))
    assert meta.device.type == "meta" and tuple(meta.shape) == (4,)


def test_where_rejects():
    f32 = _meta((2, 3), opweave.float32)
    pred = _meta((2, 3), opweave.bool)
    with pytest.raises(TypeError, match="prims::where.*pred"):
        P.where(_meta((2, 3), opweave.uint8), f32, f32)
    with pytest.raises(TypeError, match="prims::where.*same dtype"):
        P.where(pred, f32, _meta((2, 3), opweave.float64))
    with pytest.raises(ValueError, match="prims::where.*same shape"):
        P.where(_meta((3, 2), opweave.bool), f32, f32)
    with pytest.raises(ValueError, match="prims::where.*same shape"):
        P.where(pred, f32, _meta((2, 1), opweave.float32))
    float8 = _meta((2, 3), opweave.float8_e4m3fn)
    with pytest.raises(TypeError, match="prims::where"):
        P.where(pred, float8, float8)
    with pytest.raises(TypeError, match="where"):
        P.where(pred, f32, 1.0)


# ---------------------------------------------------------------- clamp


def _clamp(a, lo, hi):
    """nan if any input is nan; ``hi`` when ``lo > hi``; else the clipped value."""
    a, lo, hi = np.broadcast_arrays(a, lo, hi)
    with np.errstate(invalid="ignore"):
        clipped = np.where(a < lo, lo, np.where(a > hi, hi, a))
        out = np.where(lo > hi, hi, clipped)
    if a.dtype.kind == "f":
        out = np.where(np.isnan(a) | np.isnan(lo) | np.isnan(hi), np.nan, out)
    return out


@pytest.mark.parametrize("dtype", REAL)
@settings(max_examples=8, deadline=None)
@given(shape=shapes, layouts=three_layouts, seed=seeds)
def test_clamp(dtype, shape, layouts, seed):
    a, lo, hi = make_inputs(seed, shape, [dtype] * 3, layouts)
    check_call(P.clamp, [a, lo, hi], _clamp, dtype)


def test_clamp_semantics():
    a = opweave.from_numpy(np.array([np.nan, 5.0, 5.0, 0.0, 1.0]))
    lo = opweave.from_numpy(np.array([0.0, 7.0, np.nan, 0.0, 2.0]))
    hi = opweave.from_numpy(np.array([1.0, 6.0, 9.0, np.nan, 3.0]))
    np.testing.assert_array_equal(P.clamp(a, lo, hi).numpy(), [np.nan, 6.0, np.nan, np.nan, 2.0])


# ---------------------------------------------------------------- lerp


def _lerp(start, end, weight):
    """PyTorch's formula, exact at both ends."""
    diff = end - start
    return np.where(np.abs(weight) < 0.5, start + weight * diff, end - diff * (1 - weight))


@pytest.mark.parametrize("dtype", FLOATING)
@settings(max_examples=8, deadline=None)
@given(shape=shapes, layouts=three_layouts, seed=seeds)
def test_lerp(dtype, shape, layouts, seed):
    gens = [None, None, floats(-1, 2, specials=np.array([0.0, 1.0, 0.5, np.nan]))]
    start, end, weight = make_inputs(seed, shape, [dtype] * 3, layouts, gens)
    check_call(P.lerp, [start, end, weight], _lerp, dtype)


def test_lerp_is_exact_at_the_ends():
    start = opweave.from_numpy(np.array([1e8, -3.0, 0.1], np.float32))
    end = opweave.from_numpy(np.array([1.0, 7.0, 0.7], np.float32))
    for w, expected in ((0.0, start), (1.0, end)):
        got = P.lerp(start, end, opweave.from_numpy(np.array(w, np.float32)))
        np.testing.assert_array_equal(got.numpy(), expected.numpy())


@pytest.mark.parametrize(("name", "allowed"), [("clamp", REAL), ("lerp", FLOATING)])
def test_clamp_lerp_reject(name, allowed):
    op = getattr(P, name)
    for dtype in unsupported(allowed):
        x = _meta((2,), dtype)
        with pytest.raises(TypeError, match=f"prims::{name}"):
            op(x, x, x)
    x = _meta((2,), allowed[-1])
    with pytest.raises(ValueError, match=f"prims::{name}.*same shape"):
        op(x, x, _meta((3,), allowed[-1]))
    with pytest.raises(TypeError, match=f"prims::{name}.*same dtype"):
        op(x, x, _meta((2,), allowed[0]))
    assert "pointwise" in op.default.tags
