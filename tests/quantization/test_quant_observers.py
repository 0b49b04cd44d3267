"""Observers' ranges and qparams against PyTorch's formulas, written out here in NumPy (float32)."""

from __future__ import annotations

import numpy as np
import opweave as ow
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from opweave.quantization import (
    HistogramObserver,
    MinMaxObserver,
    MovingAverageMinMaxObserver,
    PerChannelMinMaxObserver,
)

F32 = np.float32
EPS = F32(np.finfo(np.float32).eps)


def torch_qparams(min_val, max_val, qmin, qmax, symmetric, dtype, custom=False):
    """torch.ao.quantization.observer._calculate_qparams for float32 min/max arrays."""
    min_neg = np.minimum(np.asarray(min_val, F32), F32(0))
    max_pos = np.maximum(np.asarray(max_val, F32), F32(0))
    if symmetric:
        max_pos = np.maximum(-min_neg, max_pos)
        scale = np.maximum(max_pos / F32((qmax - qmin) / 2), EPS)
        zp = np.full(scale.shape, ((qmin + qmax) // 2 if custom else 128) if dtype is ow.quint8 else 0)
    else:
        scale = np.maximum((max_pos - min_neg) / F32(qmax - qmin), EPS)
        zp = np.clip(qmin - np.rint(min_neg / scale).astype(np.int64), qmin, qmax)
    return np.atleast_1d(scale.astype(F32)), np.atleast_1d(zp.astype(np.int64))


RANGES = {
    (ow.quint8, False): (0, 255),
    (ow.quint8, True): (0, 127),
    (ow.qint8, False): (-128, 127),
    (ow.qint8, True): (-64, 63),
}

batches = st.lists(
    hnp.arrays(np.float32, st.integers(1, 12), elements=st.floats(-20, 20, width=32)), min_size=1, max_size=3
)


@given(
    batches=batches, dtype=st.sampled_from([ow.quint8, ow.qint8]), reduce_range=st.booleans(), symmetric=st.booleans()
)
def test_min_max_observer(batches, dtype, reduce_range, symmetric):
    if symmetric and reduce_range and dtype is ow.quint8:
        with pytest.raises(NotImplementedError):
            MinMaxObserver(dtype, ow.per_tensor_symmetric, reduce_range)
        return
    scheme = ow.per_tensor_symmetric if symmetric else ow.per_tensor_affine
    obs = MinMaxObserver(dtype=dtype, qscheme=scheme, reduce_range=reduce_range)
    for b in batches:
        assert obs(ow.tensor(b)) is not None
    everything = np.concatenate(batches)
    assert obs.min_val == everything.min() and obs.max_val == everything.max()
    scale, zp = obs.calculate_qparams()
    qmin, qmax = RANGES[(dtype, reduce_range)]
    want_scale, want_zp = torch_qparams(everything.min(), everything.max(), qmin, qmax, symmetric, dtype)
    np.testing.assert_array_equal(scale.numpy(), want_scale)
    np.testing.assert_array_equal(zp.numpy(), want_zp)
    assert scale.dtype is ow.float32 and zp.dtype is ow.int64


def test_custom_range_and_no_data():
    obs = MinMaxObserver(dtype=ow.quint8, quant_min=0, quant_max=15)
    obs(ow.tensor([-1.0, 3.0]))
    scale, zp = obs.calculate_qparams()
    want = torch_qparams(-1.0, 3.0, 0, 15, False, ow.quint8)
    np.testing.assert_array_equal(scale.numpy(), want[0])
    np.testing.assert_array_equal(zp.numpy(), want[1])
    empty = MinMaxObserver()
    with pytest.warns(UserWarning, match="must run"):
        scale, zp = empty.calculate_qparams()
    assert scale.tolist() == [1.0] and zp.tolist() == [0]
    with pytest.raises(ValueError, match="qscheme"):
        MinMaxObserver(qscheme=ow.per_channel_affine)


def test_moving_average_observer():
    obs = MovingAverageMinMaxObserver(averaging_constant=0.5)
    obs(ow.tensor([-1.0, 1.0]))
    obs(ow.tensor([-3.0, 5.0]))
    assert obs.min_val == pytest.approx(-2.0) and obs.max_val == pytest.approx(3.0)
    scale, zp = obs.calculate_qparams()
    np.testing.assert_array_equal(scale.numpy(), torch_qparams(-2.0, 3.0, 0, 255, False, ow.quint8)[0])


def test_per_channel_observer():
    rng = np.random.default_rng(0)
    w = rng.normal(size=(4, 3, 2)).astype(np.float32)
    obs = PerChannelMinMaxObserver(ch_axis=0, dtype=ow.qint8, qscheme=ow.per_channel_symmetric)
    obs(ow.tensor(w))
    scale, zp = obs.calculate_qparams()
    flat = w.reshape(4, -1)
    want = torch_qparams(flat.min(1), flat.max(1), -128, 127, True, ow.qint8)
    np.testing.assert_array_equal(scale.numpy(), want[0])
    np.testing.assert_array_equal(zp.numpy(), want[1])
    obs1 = PerChannelMinMaxObserver(ch_axis=1)
    obs1(ow.tensor(w))
    moved = np.moveaxis(w, 1, 0).reshape(3, -1)
    np.testing.assert_array_equal(
        obs1.calculate_qparams()[0].numpy(), torch_qparams(moved.min(1), moved.max(1), 0, 255, False, ow.quint8)[0]
    )


def torch_histogram_search(hist, min_val, max_val, dst_nbins):
    """HistogramObserver._non_linear_param_search (PyTorch), in plain Python/NumPy."""
    bins = len(hist)
    width = (max_val - min_val) / bins
    total, csum = hist.sum(), np.cumsum(hist)
    alpha, beta, start, end, best = 0.0, 1.0, 0, bins - 1, float("inf")

    def error(s, e):
        dst = width * (e - s + 1) / dst_nbins
        if dst == 0:
            return 0.0
        err = 0.0
        for i in range(bins):
            b0 = (i - s) * width
            b1 = b0 + width
            d0 = min(max(np.floor(b0 / dst), 0), dst_nbins - 1)
            d1 = min(max(np.floor(b1 / dst), 0), dst_nbins - 1)
            density = hist[i] / width
            err += density * ((dst / 2) ** 3 - (b0 - (d0 + 0.5) * dst) ** 3) / 3
            err += (d1 - d0 - 1) * density * ((dst / 2) ** 3 - (-dst / 2) ** 3) / 3
            err += density * ((b1 - (d1 * dst + dst / 2)) ** 3 - (-dst / 2) ** 3) / 3
        return err

    while alpha < beta:
        na, nb = alpha + 1e-5, beta - 1e-5
        left, right = start, end
        while left < end and csum[left] < na * total:
            left += 1
        while right > start and csum[right] > nb * total:
            right -= 1
        ns, ne = start, end
        if (left - start) > (end - right):
            ns, alpha = left, na
        else:
            ne, beta = right, nb
        if ns == start and ne == end:
            continue
        e = error(ns, ne)
        if e > best:
            break
        best, start, end = e, ns, ne
    return min_val + width * start, min_val + width * (end + 1)


def test_histogram_observer_single_batch():
    rng = np.random.default_rng(1)
    x = np.concatenate([rng.normal(size=500), [40.0]]).astype(np.float32)  # one outlier to clip
    obs = HistogramObserver(bins=64, reduce_range=True)
    obs(ow.tensor(x))
    hist, _ = np.histogram(x, bins=64, range=(x.min(), x.max()))
    np.testing.assert_array_equal(obs.histogram, hist)
    lo, hi = torch_histogram_search(hist.astype(np.float64), float(x.min()), float(x.max()), 256)
    scale, zp = obs.calculate_qparams()
    want = torch_qparams(F32(lo), F32(hi), 0, 127, False, ow.quint8)
    np.testing.assert_allclose(scale.numpy(), want[0], rtol=1e-6)
    np.testing.assert_array_equal(zp.numpy(), want[1])
    assert hi < 40.0  # the outlier is clipped


def test_histogram_observer_widening_keeps_the_counts():
    obs = HistogramObserver(bins=32)
    obs(ow.tensor([0.0, 1.0, 1.0, 2.0]))
    obs(ow.tensor([-4.0, 8.0]))
    assert obs.histogram.sum() == pytest.approx(6.0)
    assert obs.min_val == -4.0 and obs.max_val == 8.0
    scale, zp = obs.calculate_qparams()
    assert scale.item() > 0 and 0 <= zp.item() <= 255
