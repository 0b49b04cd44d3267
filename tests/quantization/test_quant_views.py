"""Views, copies and device moves of quantized tensors keep (and move) their quantization parameters."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import opweave as ow
import pytest

sys.path.insert(0, str(Path(__file__).parent))
from _qsupport import host, np_dequantize, np_quantize  # noqa: E402

VALUES = np.arange(24, dtype=np.float32).reshape(2, 3, 4) / 7 - 1.5
SCALES = np.array([0.05, 0.1, 0.2])
ZPS = np.array([0, 3, -2])


def per_tensor():
    return ow.quantize_per_tensor(ow.tensor(VALUES), 0.05, 3, ow.qint8)


def per_channel():
    return ow.quantize_per_channel(ow.tensor(VALUES), ow.tensor(SCALES), ow.tensor(ZPS), 1, ow.qint8)


def expected_per_channel() -> np.ndarray:
    return np_quantize(VALUES, SCALES.reshape(1, 3, 1), ZPS.reshape(1, 3, 1), ow.qint8)


VIEWS = [
    ("transpose", lambda t: t.transpose(0, 2), lambda a: a.transpose(2, 1, 0)),
    ("permute", lambda t: t.permute(1, 2, 0), lambda a: a.transpose(1, 2, 0)),
    ("slice", lambda t: t[:, 1:, ::2], lambda a: a[:, 1:, ::2]),
    ("select0", lambda t: t[1], lambda a: a[1]),
    ("select2", lambda t: t[:, :, 2], lambda a: a[:, :, 2]),
    ("unsqueeze", lambda t: t.unsqueeze(1), lambda a: a[:, None]),
    ("reshape_keep", lambda t: t.reshape(2, 3, 2, 2), lambda a: a.reshape(2, 3, 2, 2)),
    ("expand", lambda t: t[:1].expand(3, 3, 4), lambda a: np.broadcast_to(a[:1], (3, 3, 4))),
    ("contiguous", lambda t: t.transpose(0, 1).contiguous(), lambda a: a.transpose(1, 0, 2)),
    ("clone", lambda t: t.clone(), lambda a: a),
    ("flip_step", lambda t: t[:, ::2], lambda a: a[:, ::2]),
]


@pytest.mark.parametrize("name,view,np_view", VIEWS, ids=[v[0] for v in VIEWS])
def test_per_tensor_views_keep_parameters(name, view, np_view):
    q = per_tensor()
    v = view(q)
    assert v.is_quantized and v.q_scale() == 0.05 and v.q_zero_point() == 3
    expected = np_view(np_quantize(VALUES, 0.05, 3, ow.qint8))
    np.testing.assert_array_equal(host(v), expected)
    np.testing.assert_array_equal(v.dequantize().numpy(), np_dequantize(expected, 0.05, 3))


@pytest.mark.parametrize("name,view,np_view", VIEWS, ids=[v[0] for v in VIEWS])
def test_per_channel_views_move_the_axis(name, view, np_view):
    """The dequantized view equals the view of the dequantized tensor, whatever the axis became."""
    v = view(per_channel())
    deq = np_dequantize(expected_per_channel(), SCALES.reshape(1, 3, 1), ZPS.reshape(1, 3, 1))
    np.testing.assert_array_equal(v.dequantize().numpy(), np_view(deq))
    np.testing.assert_array_equal(host(v), np_view(expected_per_channel()))


def test_per_channel_axis_bookkeeping():
    q = per_channel()
    assert q.transpose(0, 1).q_per_channel_axis() == 0
    assert q.permute(2, 0, 1).q_per_channel_axis() == 2
    assert q[1].q_per_channel_axis() == 0
    assert q.unsqueeze(0).q_per_channel_axis() == 2
    sliced = q[:, 1:]
    np.testing.assert_array_equal(sliced.q_per_channel_scales().numpy(), SCALES[1:])
    np.testing.assert_array_equal(sliced.q_per_channel_zero_points().numpy(), ZPS[1:])
    one = q[:, 2]  # selecting one channel leaves a per-tensor tensor
    assert one.qscheme() is ow.per_tensor_affine and one.q_scale() == SCALES[2] and one.q_zero_point() == ZPS[2]


def test_merging_the_channel_dim_repeats_the_parameters():
    merged = per_channel().reshape(6, 4)
    assert merged.q_per_channel_axis() == 0
    np.testing.assert_array_equal(merged.q_per_channel_scales().numpy(), np.tile(SCALES, 2))
    deq = np_dequantize(expected_per_channel(), SCALES.reshape(1, 3, 1), ZPS.reshape(1, 3, 1))
    np.testing.assert_array_equal(merged.dequantize().numpy(), deq.reshape(6, 4))


def test_views_that_split_the_channel_dim_raise():
    q = ow.quantize_per_channel(ow.ones(2, 4, 6), ow.tensor([0.05] * 4), ow.tensor([0] * 4), 1, ow.qint8)
    with pytest.raises(ValueError, match="channel dim"):
        ow.ops.prims.split_dim(q, 1, 2)
    with pytest.raises(ValueError, match="channel dim"):
        q.reshape(2, 2, 2, 6)
    with pytest.raises(TypeError, match="int_repr"):
        ow.ops.prims.view_of_dtype(q, ow.uint8)


def test_copies_and_devices():
    q = per_channel()
    on_vnpu = q.to("vnpu")
    assert on_vnpu.device.type == "vnpu" and on_vnpu.q_per_channel_axis() == 1
    np.testing.assert_array_equal(host(on_vnpu), expected_per_channel())
    np.testing.assert_array_equal(host(on_vnpu.transpose(0, 2).cpu()), expected_per_channel().transpose(2, 1, 0))
    assert on_vnpu[0, 1, 2].item() == pytest.approx(float(q.dequantize()[0, 1, 2].item()))


def test_copy_into_a_quantized_tensor():
    q = per_tensor()
    q.copy_(ow.tensor(VALUES[::-1].copy()))
    np.testing.assert_array_equal(host(q), np_quantize(VALUES[::-1], 0.05, 3, ow.qint8))
    other = ow.quantize_per_tensor(ow.tensor(VALUES), 0.1, 0, ow.qint8)
    with pytest.raises(ValueError, match="quantization parameters"):
        q.copy_(other)


def test_other_ops_refuse_quantized_tensors():
    q = per_tensor()
    with pytest.raises(NotImplementedError, match="sum: not supported for quantized tensors"):
        q.sum()
    with pytest.raises(NotImplementedError, match="dequantize"):
        ow.exp(q)
