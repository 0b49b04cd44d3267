"""Dtypes PyTorch supports on the CPU that opweave once refused: integer convolution, bool scatter_reduce,
int32 gather/scatter indices, integer distances and losses (computed in the default float)."""

from __future__ import annotations

import numpy as np
import opweave as ow
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

SETTINGS = settings(max_examples=15, deadline=None)
seeds = st.integers(0, 2**32 - 1)


def _conv1d(x, w, stride=1, padding=0):
    x = np.pad(x, ((0, 0), (0, 0), (padding, padding)))
    n, _, length = x.shape
    c_out, _, k = w.shape
    out_len = (length - k) // stride + 1
    out = np.zeros((n, c_out, out_len), dtype=np.int64)
    for i in range(out_len):
        out[:, :, i] = np.einsum("nck,ock->no", x[:, :, i * stride : i * stride + k], w)
    return out


@SETTINGS
@given(seed=seeds, dtype=st.sampled_from([ow.int64, ow.int32, ow.int16]), stride=st.integers(1, 2))
def test_integer_convolution_is_exact(seed, dtype, stride):
    rng = np.random.default_rng(seed)
    x, w, b = rng.integers(-50, 50, (2, 3, 7)), rng.integers(-9, 9, (4, 3, 3)), rng.integers(-9, 9, 4)
    got = ow.nn.functional.conv1d(
        ow.tensor(x, dtype=dtype), ow.tensor(w, dtype=dtype), ow.tensor(b, dtype=dtype), stride=stride, padding=1
    )
    assert got.dtype is dtype
    np.testing.assert_array_equal(got.numpy(), _conv1d(x, w, stride, 1) + b[None, :, None])
    with pytest.raises(TypeError):
        ow.nn.functional.conv1d(ow.tensor(x, dtype=ow.bool), ow.tensor(w, dtype=ow.bool))


@SETTINGS
@given(seed=seeds, reduce=st.sampled_from(["sum", "prod", "amax", "amin"]), include_self=st.booleans())
def test_bool_scatter_reduce_is_or_and(seed, reduce, include_self):
    rng = np.random.default_rng(seed)
    x, src = rng.random(5) < 0.5, rng.random(8) < 0.5
    index = rng.integers(0, 5, 8)
    got = ow.scatter_reduce(ow.tensor(x), 0, ow.tensor(index), ow.tensor(src), reduce, include_self=include_self)
    expected = x.copy()
    for target in range(5):
        picked = list(src[index == target])
        if not picked:
            continue
        values = ([x[target]] if include_self else []) + picked
        expected[target] = any(values) if reduce in ("sum", "amax") else all(values)
    np.testing.assert_array_equal(got.numpy(), expected)


@SETTINGS
@given(seed=seeds)
def test_int32_indices_in_gather_and_scatter(seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((3, 4))
    index = rng.integers(0, 4, (3, 2))
    i32 = ow.tensor(index, dtype=ow.int32)
    np.testing.assert_array_equal(ow.gather(ow.tensor(x), 1, i32).numpy(), np.take_along_axis(x, index, 1))
    expected = x.copy()
    np.put_along_axis(expected, index[:, :1], 7.0, 1)
    np.testing.assert_array_equal(ow.scatter(ow.tensor(x), 1, i32[:, :1], 7.0).numpy(), expected)
    with pytest.raises(TypeError):
        ow.gather(ow.tensor(x), 1, ow.tensor(index, dtype=ow.int16))
    # PyTorch checks the dtype and shape of a non-empty index only: an empty one gives an empty result
    for empty in (ow.empty(0, dtype=ow.uint8), ow.empty(2, 0, 3, dtype=ow.int16)):
        got = ow.gather(ow.tensor(x), 1, empty)
        assert got.shape == empty.shape and got.dtype is ow.float64
    with pytest.raises(IndexError):
        ow.gather(ow.tensor(x), 2, ow.empty(0, dtype=ow.int64))


@SETTINGS
@given(seed=seeds)
def test_integer_distances_and_losses_compute_in_the_default_float(seed):
    rng = np.random.default_rng(seed)
    a, b = rng.integers(-5, 5, (3, 4)), rng.integers(-5, 5, (3, 4))
    got = ow.nn.functional.pairwise_distance(ow.tensor(a), ow.tensor(b))
    assert got.dtype is ow.float32
    np.testing.assert_allclose(got.numpy(), np.sqrt(((a - b + 1e-6) ** 2).sum(-1)), rtol=1e-6)
    t = rng.integers(0, 3, (3, 4))
    got = ow.nn.functional.poisson_nll_loss(ow.tensor(a), ow.tensor(t))
    assert got.dtype is ow.float32
    np.testing.assert_allclose(got.numpy(), np.mean(np.exp(a) - t * a), rtol=1e-5)
    y = np.where(rng.random(4) < 0.5, 1, -1)
    got = ow.nn.functional.margin_ranking_loss(ow.tensor(a[0]), ow.tensor(b[0]), ow.tensor(y))
    np.testing.assert_allclose(got.numpy(), np.mean(np.maximum(0, -y * (a[0] - b[0]))), rtol=1e-6)
    x = rng.integers(0, 300, (1, 3, 4))
    got = ow.nn.functional.local_response_norm(ow.tensor(x), 2)
    assert got.dtype is ow.float32
    sq = np.pad(x**2, ((0, 0), (1, 0), (0, 0)))
    div = (1 + 1e-4 * ((sq[:, :-1] + sq[:, 1:]) // 2)) ** 0.75  # integer window mean, truncated (PyTorch)
    np.testing.assert_allclose(got.numpy(), x / div, rtol=1e-6)
    with pytest.raises(TypeError):
        ow.nn.functional.cosine_similarity(ow.tensor(a), ow.tensor(b))  # PyTorch refuses integers here


@SETTINGS
@given(seed=seeds, ceil_mode=st.booleans(), count_include_pad=st.booleans())
def test_integer_avg_pool_truncates_toward_zero(seed, ceil_mode, count_include_pad):
    rng = np.random.default_rng(seed)
    x = rng.integers(-20, 20, (1, 2, 7))
    got = ow.nn.functional.avg_pool1d(ow.tensor(x), 3, 2, 1, ceil_mode=ceil_mode, count_include_pad=count_include_pad)
    assert got.dtype is ow.int64
    padded = np.pad(x, ((0, 0), (0, 0), (1, 1)))
    valid = np.pad(np.ones_like(x), ((0, 0), (0, 0), (1, 1)))
    n_out = got.shape[-1]
    expected = np.zeros((1, 2, n_out), dtype=np.int64)
    for i in range(n_out):
        lo, hi = 2 * i, min(2 * i + 3, padded.shape[-1])
        total = padded[..., lo:hi].sum(-1)
        count = (hi - lo if count_include_pad else valid[..., lo:hi].sum(-1)) if hi - lo else 1
        if count_include_pad:
            count = min(2 * i + 3, x.shape[-1] + 2) - lo  # windows are clipped to the padded input
        expected[..., i] = np.trunc(total / count)
    np.testing.assert_array_equal(got.numpy(), expected)


def test_complex_l1_loss_is_real():
    a, b = np.array([1 + 1j, 2 - 1j]), np.array([0j, 2 + 1j])
    got = ow.nn.functional.l1_loss(ow.tensor(a), ow.tensor(b))
    assert got.dtype is ow.float64
    np.testing.assert_allclose(got.numpy(), np.mean(np.abs(a - b)))
