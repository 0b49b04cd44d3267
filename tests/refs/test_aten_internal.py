"""ATen's internal helpers (backward formulas, masked indexing, chunk-cat, batch norm with update) against NumPy."""

from __future__ import annotations

import math

import numpy as np
import opweave as ow
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

SETTINGS = settings(max_examples=15, deadline=None)
seeds = st.integers(0, 2**32 - 1)


@SETTINGS
@given(seed=seeds, shape=st.lists(st.integers(1, 4), min_size=1, max_size=3), data=st.data())
def test_softmax_and_dropout_backward(seed, shape, data):
    rng = np.random.default_rng(seed)
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    x, g = rng.standard_normal(shape), rng.standard_normal(shape)
    y = np.exp(x - x.max(dim, keepdims=True))
    y /= y.sum(dim, keepdims=True)
    got = ow.ops._softmax_backward_data(ow.tensor(g), ow.tensor(y), dim, ow.float32)
    assert got.dtype is ow.float32
    np.testing.assert_allclose(got.numpy(), y * (g - (g * y).sum(dim, keepdims=True)), rtol=1e-5, atol=1e-6)
    mask = rng.random(shape) < 0.5
    got = ow.ops.native_dropout_backward(ow.tensor(g), ow.tensor(mask), 2.5)
    np.testing.assert_allclose(got.numpy(), g * mask * 2.5)


@SETTINGS
@given(seed=seeds, n=st.integers(1, 5), m=st.integers(1, 6))
def test_unsafe_masked_index_and_put(seed, n, m):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, 3))
    idx = rng.integers(-2 * n, 2 * n, m)  # some out of range: only masked-out ones may be
    mask = (idx >= -n) & (idx < n) & (rng.random(m) < 0.8)
    clamped = np.clip(idx, -n, n - 1)
    got = ow.ops._unsafe_masked_index(ow.tensor(x), ow.tensor(mask[:, None]), [ow.tensor(idx)], -7.0)
    np.testing.assert_array_equal(got.numpy(), np.where(mask[:, None], x[clamped], -7.0))
    values = rng.standard_normal((m, 3))
    got = ow.ops._unsafe_masked_index_put_accumulate(
        ow.tensor(x), ow.tensor(mask[:, None]), [ow.tensor(idx)], ow.tensor(values)
    )
    expected = x.copy()
    np.add.at(expected, clamped, np.where(mask[:, None], values, 0))
    np.testing.assert_allclose(got.numpy(), expected)


@SETTINGS
@given(seed=seeds, sizes=st.lists(st.integers(0, 7), min_size=1, max_size=3), chunks=st.integers(1, 4))
def test_chunk_cat(seed, sizes, chunks):
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal((2, s, 3)) for s in sizes]
    got = ow.ops._chunk_cat([ow.tensor(a) for a in arrays], 1, chunks)
    parts = []
    for a in arrays:
        c = math.ceil(a.shape[1] / chunks)
        padded = np.zeros((2, c * chunks, 3))
        padded[:, : a.shape[1]] = a
        parts.append(padded.reshape(2, chunks, c * 3))
    np.testing.assert_array_equal(got.numpy(), np.concatenate(parts, 2))
    with pytest.raises(RuntimeError):
        ow.ops._chunk_cat([ow.ones(2, 3), ow.ones(3, 3)], 1, 2)


def test_batch_norm_with_update_updates_running_stats():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 3, 5))
    rm, rv = ow.zeros(3, dtype=ow.float64), ow.ones(3, dtype=ow.float64)
    out, mean, invstd, reserve = ow.ops._batch_norm_with_update(ow.tensor(x), None, None, rm, rv, 0.1, 1e-5)
    mu, var = x.mean((0, 2)), x.var((0, 2))
    np.testing.assert_allclose(out.numpy(), (x - mu[None, :, None]) / np.sqrt(var[None, :, None] + 1e-5), atol=1e-12)
    np.testing.assert_allclose(mean.numpy(), mu)
    np.testing.assert_allclose(invstd.numpy(), 1 / np.sqrt(var + 1e-5))
    np.testing.assert_allclose(rm.numpy(), 0.1 * mu)
    np.testing.assert_allclose(rv.numpy(), 0.9 + 0.1 * x.var((0, 2), ddof=1))
    assert reserve.numel() == 0
