"""Quantized dtypes and tensors: quantize, dequantize, accessors, fake quantization, errors (NumPy oracles)."""

from __future__ import annotations

import pickle
import sys
from pathlib import Path

import numpy as np
import opweave as ow
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

sys.path.insert(0, str(Path(__file__).parent))
from _qsupport import RANGES, STORAGE, host, np_dequantize, np_quantize, qtensor  # noqa: E402

QDTYPES = (ow.quint8, ow.qint8, ow.qint32)
FLOATS = (ow.float16, ow.bfloat16, ow.float32, ow.float64)


# -- dtypes ----------------------------------------------------------------------------------------


def test_quantized_dtypes():
    for d, storage, signed in ((ow.qint8, np.int8, True), (ow.quint8, np.uint8, False), (ow.qint32, np.int32, True)):
        assert d.is_quantized and d.numpy == np.dtype(storage) and d.is_signed == signed
        assert not d.is_floating_point and d not in ow.ALL_DTYPES
        assert pickle.loads(pickle.dumps(d)) is d
        assert ow.iinfo(d).min == np.iinfo(storage).min
    assert not ow.float32.is_quantized and not ow.int8.is_quantized
    assert repr(ow.quint8) == "opweave.quint8"


def test_promotion_with_quantized_dtypes_is_an_error():
    with pytest.raises(TypeError, match="quantized"):
        ow.promote_types(ow.qint8, ow.float32)
    with pytest.raises(TypeError, match="quantized"):
        ow.promote_types(ow.int8, ow.quint8)
    q = ow.quantize_per_tensor(ow.ones(2), 0.1, 0, ow.qint8)
    with pytest.raises(TypeError, match="quantized"):
        ow.result_type(q, 1.0)
    assert ow.promote_types(ow.qint8, ow.qint8) is ow.qint8


def test_qschemes():
    assert [int(s) for s in (ow.per_tensor_affine, ow.per_channel_affine)] == [0, 1]
    assert repr(ow.per_channel_symmetric) == "opweave.per_channel_symmetric"
    assert pickle.loads(pickle.dumps(ow.per_tensor_symmetric)) is ow.per_tensor_symmetric


# -- quantize / dequantize -----------------------------------------------------------------------------------

_values = st.floats(-50, 50, width=32) | st.sampled_from([np.nan, np.inf, -np.inf, -0.0, 0.5, 1.5, 2.5, -2.5])


@given(
    shape=hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4),
    data=st.data(),
    qdtype=st.sampled_from(QDTYPES),
    fdtype=st.sampled_from(FLOATS),
    scale=st.sampled_from([0.5, 0.25, 0.1, 1.0, 0.013]),
    transposed=st.booleans(),
)
def test_quantize_per_tensor_matches_numpy(shape, data, qdtype, fdtype, scale, transposed):
    lo, hi = RANGES[qdtype]
    zp = data.draw(st.integers(max(lo, -20), min(hi, 20)))
    values = data.draw(hnp.arrays(np.float64, shape, elements=_values)).astype(fdtype.numpy)
    x = ow.tensor(values, dtype=fdtype)
    if transposed and x.ndim >= 2:
        x = ow.tensor(np.ascontiguousarray(values.swapaxes(-1, -2)), dtype=fdtype).transpose(-1, -2)
    q = ow.quantize_per_tensor(x, scale, zp, qdtype)
    assert q.dtype is qdtype and q.is_quantized and q.shape == x.shape
    assert q.q_scale() == scale and q.q_zero_point() == zp and q.qscheme() is ow.per_tensor_affine
    expected = np_quantize(values.astype(np.float64), scale, zp, qdtype)
    np.testing.assert_array_equal(host(q), expected)
    np.testing.assert_array_equal(q.dequantize().numpy(), np_dequantize(expected, scale, zp))


def test_round_half_to_even_and_saturation():
    x = ow.tensor([0.5, 1.5, 2.5, -0.5, -1.5, 1000.0, -1000.0, float("nan"), float("inf")])
    q = ow.quantize_per_tensor(x, 1.0, 0, ow.qint8)
    assert host(q).tolist() == [0, 2, 2, 0, -2, 127, -128, 0, 127]
    u = ow.quantize_per_tensor(x, 1.0, 10, ow.quint8)
    assert host(u).tolist() == [10, 12, 12, 10, 8, 255, 0, 10, 255]


def test_tensor_qparams_overload():
    x = ow.tensor([0.3, -0.7, 1.26])
    q = ow.quantize_per_tensor(x, ow.tensor(0.1), ow.tensor(3), ow.quint8)
    np.testing.assert_array_equal(host(q), np_quantize(x.numpy(), 0.1, 3, ow.quint8))


@given(
    shape=hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=4),
    data=st.data(),
    qdtype=st.sampled_from(QDTYPES),
)
def test_quantize_per_channel_matches_numpy(shape, data, qdtype):
    axis = data.draw(st.integers(0, len(shape) - 1))
    n = shape[axis]
    scales = np.array(data.draw(st.lists(st.sampled_from([0.5, 0.1, 0.03]), min_size=n, max_size=n)))
    lo, hi = RANGES[qdtype]
    zps = np.array(data.draw(st.lists(st.integers(max(lo, -5), min(hi, 5)), min_size=n, max_size=n)), np.int64)
    values = data.draw(hnp.arrays(np.float32, shape, elements=_values))
    q = ow.quantize_per_channel(ow.tensor(values), ow.tensor(scales), ow.tensor(zps), axis, qdtype)
    bshape = [1] * len(shape)
    bshape[axis] = n
    expected = np_quantize(values, scales.reshape(bshape), zps.reshape(bshape), qdtype)
    np.testing.assert_array_equal(host(q), expected)
    assert q.qscheme() is ow.per_channel_affine and q.q_per_channel_axis() == axis
    np.testing.assert_array_equal(q.q_per_channel_scales().numpy(), scales)
    assert q.q_per_channel_scales().dtype is ow.float64 and q.q_per_channel_zero_points().dtype is ow.int64
    np.testing.assert_array_equal(q.q_per_channel_zero_points().numpy(), zps)
    deq = np_dequantize(expected, scales.reshape(bshape).astype(np.float32), zps.reshape(bshape))
    np.testing.assert_array_equal(q.dequantize().numpy(), deq)


def test_dequantize_of_float_is_float32():
    x = ow.tensor([1.5, 2.0], dtype=ow.float64)
    assert ow.dequantize(x).dtype is ow.float32
    np.testing.assert_array_equal(ow.dequantize(x).numpy(), [1.5, 2.0])


def test_int_repr_is_a_copy():
    q = ow.quantize_per_tensor(ow.tensor([0.1, 0.2]), 0.1, 0, ow.qint8)
    r = q.int_repr()
    assert r.dtype is ow.int8 and not r.is_quantized
    r.numpy().fill(7)  # a CPU tensor's NumPy view writes its storage
    assert host(q).tolist() == [1, 2]


def test_make_quantized_tensors():
    ints = ow.tensor([[1, -3, 5], [7, 0, -2]], dtype=ow.int8)
    q = ow._make_per_tensor_quantized_tensor(ints, 0.5, 2)
    assert q.dtype is ow.qint8 and q.q_scale() == 0.5 and q.q_zero_point() == 2
    np.testing.assert_array_equal(host(q), ints.numpy())
    np.testing.assert_array_equal(q.dequantize().numpy(), np_dequantize(ints.numpy(), 0.5, 2))
    u = ow._make_per_tensor_quantized_tensor(ow.tensor([3, 250], dtype=ow.uint8), 0.1, 128)
    assert u.dtype is ow.quint8
    c = ow._make_per_channel_quantized_tensor(ints, ow.tensor([0.1, 0.2]), ow.tensor([0, 1]), 0)
    np.testing.assert_array_equal(c.dequantize().numpy(), np_dequantize(ints.numpy(), [[0.1], [0.2]], [[0], [1]]))
    with pytest.raises(TypeError, match="int8, uint8 or int32"):
        ow._make_per_tensor_quantized_tensor(ow.tensor([1.0]), 0.1, 0)


def test_quantized_tensor_on_vnpu():
    values = np.array([[0.3, -1.2, 2.2], [0.0, 0.45, -0.05]], np.float32)
    q = ow.quantize_per_tensor(ow.tensor(values, device="vnpu"), 0.05, 10, ow.qint8)
    assert q.device.type == "vnpu" and q.is_quantized
    np.testing.assert_array_equal(host(q), np_quantize(values, 0.05, 10, ow.qint8))
    back = q.cpu()
    assert back.is_quantized and back.q_scale() == 0.05
    np.testing.assert_array_equal(q.dequantize().cpu().numpy(), back.dequantize().numpy())


def test_repr_shows_values_and_parameters():
    q = ow.quantize_per_tensor(ow.tensor([1.0, 2.0]), 0.5, 1, ow.quint8)
    text = repr(q)
    assert "tensor([1., 2.]" in text and "dtype=opweave.quint8" in text and "scale=0.5" in text
    assert "quantization_scheme=opweave.per_tensor_affine" in text


# -- fake quantization -----------------------------------------------------------------------------


def np_fake(x, scale, zero_point, qmin, qmax):
    s = np.asarray(scale, np.float32)
    inv = np.float32(1.0) / s
    with np.errstate(all="ignore"):
        r = np.rint(np.asarray(x, np.float32) * inv).astype(np.float64)
        q = np.clip(r + zero_point, qmin, qmax)
        return (q - zero_point).astype(np.float32) * s


@given(
    shape=hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4),
    data=st.data(),
    scale=st.sampled_from([0.25, 0.1, 0.7]),
)
def test_fake_quantize_per_tensor_matches_numpy(shape, data, scale):
    qmin, qmax = data.draw(st.sampled_from([(0, 255), (-128, 127), (0, 15)]))
    zp = data.draw(st.integers(qmin, qmax))
    values = data.draw(hnp.arrays(np.float32, shape, elements=_values))
    out = ow.fake_quantize_per_tensor_affine(ow.tensor(values), scale, zp, qmin, qmax)
    assert out.dtype is ow.float32
    np.testing.assert_array_equal(out.numpy(), np_fake(values, scale, zp, qmin, qmax))


def test_fake_quantize_per_channel_matches_numpy():
    rng = np.random.default_rng(0)
    values = rng.uniform(-3, 3, (3, 4)).astype(np.float32)
    scales, zps = np.array([0.1, 0.2, 0.3, 0.4], np.float32), np.array([0, 1, 2, 3], np.int32)
    out = ow.fake_quantize_per_channel_affine(ow.tensor(values), ow.tensor(scales), ow.tensor(zps), 1, 0, 15)
    np.testing.assert_array_equal(out.numpy(), np_fake(values, scales, zps, 0, 15))


# -- errors ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call,error,match",
    [
        (lambda x: ow.quantize_per_tensor(x, 0.0, 0, ow.quint8), ValueError, "scale"),
        (lambda x: ow.quantize_per_tensor(x, float("nan"), 0, ow.quint8), ValueError, "scale"),
        (lambda x: ow.quantize_per_tensor(x, 0.1, -1, ow.quint8), ValueError, "zero_point"),
        (lambda x: ow.quantize_per_tensor(x, 0.1, 0, ow.int8), TypeError, "dtype"),
        (lambda x: ow.quantize_per_tensor(x.to(ow.int32), 0.1, 0, ow.qint8), TypeError, "self"),
        (lambda x: ow.quantize_per_channel(x, ow.tensor([0.1]), ow.tensor([0]), 0, ow.qint8), ValueError, "scales"),
        (
            lambda x: ow.quantize_per_channel(x, ow.tensor([0.1, 0.1]), ow.tensor([0, 0]), 5, ow.qint8),
            ValueError,
            "axis",
        ),
        (lambda x: ow.q_scale(x), TypeError, "quantized"),
        (lambda x: ow.int_repr(x), TypeError, "quantized"),
        (lambda x: ow.fake_quantize_per_tensor_affine(x, 0.1, 0, 5, 1), ValueError, "quant_min"),
    ],
)
def test_errors_name_the_op_and_argument(call, error, match):
    x = ow.tensor([[0.5, -1.0, 2.0], [0.1, 0.2, 0.3]])
    before = x.numpy().copy()
    with pytest.raises(error, match=match):
        call(x)
    np.testing.assert_array_equal(x.numpy(), before)


def test_accessors_check_the_qscheme():
    per_tensor = ow.quantize_per_tensor(ow.ones(2, 2), 0.1, 0, ow.qint8)
    per_channel = ow.quantize_per_channel(ow.ones(2, 2), ow.tensor([0.1, 0.2]), ow.tensor([0, 0]), 0, ow.qint8)
    with pytest.raises(ValueError, match="per-channel"):
        per_tensor.q_per_channel_scales()
    with pytest.raises(ValueError, match="per-tensor"):
        per_channel.q_scale()
    assert qtensor([1, 2], 0.1, 0, ow.qint8).q_zero_point() == 0
    assert STORAGE[ow.qint32] is np.int32
