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
@given(seed=seeds, sizes=st.lists(st.integers(1, 7), min_size=1, max_size=3), chunks=st.integers(1, 4))
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
    with pytest.raises(RuntimeError, match="non-empty"):  # PyTorch refuses an empty tensor, whatever its shape
        ow.ops._chunk_cat([ow.tensor(arrays[0]), ow.zeros(2, 0, 3, dtype=ow.float64)], 1, chunks)


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


@SETTINGS
@given(seed=seeds, lengths=st.lists(st.integers(0, 3), min_size=1, max_size=4), initial=st.sampled_from([None, 2.0]))
def test_segment_reduce(seed, lengths, initial):
    rng = np.random.default_rng(seed)
    data = rng.standard_normal((sum(lengths), 2))
    starts = np.concatenate([[0], np.cumsum(lengths)])
    for reduce, fn, empty in (
        ("sum", np.sum, 0.0),
        ("prod", np.prod, 1.0),
        ("max", np.max, -np.inf),
        ("min", np.min, np.inf),
        ("mean", np.sum, np.nan),
    ):
        expected = []
        for k, n in enumerate(lengths):
            seg = data[starts[k] : starts[k] + n]
            if n == 0:
                expected.append(np.full(2, empty if initial is None else initial))
                continue
            init = [] if initial is None else [np.full((1, 2), initial)]
            value = fn(np.concatenate(init + [seg]), axis=0)
            expected.append(value / n if reduce == "mean" else value)
        for kw in ({"lengths": ow.tensor(lengths)}, {"offsets": ow.tensor(starts)}):
            got = ow.ops._segment_reduce(ow.tensor(data), reduce, initial=initial, **kw)
            np.testing.assert_allclose(got.numpy(), np.array(expected), rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError):
        ow.ops._segment_reduce(ow.tensor(data), "median", lengths=ow.tensor(lengths))


def test_bool_clamp_multilabel_0dim_and_pytorch_argument_checks():
    a, b = np.array([True, False, True, False]), np.array([False, False, True, True])
    np.testing.assert_array_equal(ow.clamp_min(ow.tensor(a), ow.tensor(b)).numpy(), a | b)
    np.testing.assert_array_equal(ow.clamp_max(ow.tensor(a), ow.tensor(b)).numpy(), a & b)
    loss = ow.nn.functional.multilabel_margin_loss(ow.tensor(0.5), ow.tensor(0))
    assert loss.shape == () and float(loss) == 0.0  # one class, and it is the target
    with pytest.raises(ValueError):
        ow.nn.functional.hardtanh(ow.ones(2), 1.0, -1.0)
    with pytest.raises(ValueError):
        ow.nn.functional.triplet_margin_loss(ow.ones(2, 3), ow.ones(2, 3), ow.ones(2, 3), margin=-1.0)
