"""The reference kernels of the quantized ops against NumPy integer and float oracles (engine "reference")."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import opweave as ow
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

sys.path.insert(0, str(Path(__file__).parent))
from _qsupport import RANGES, STORAGE, host, np_dequantize, np_quantize, qtensor, requantize  # noqa: E402

Q = ow.ops.quantized
U8, S8 = ow.quint8, ow.qint8


@pytest.fixture(autouse=True)
def reference_engine():
    from opweave.quantization import _engine

    previous = _engine._selected
    ow.backends.quantized.engine = "reference"
    yield
    _engine._selected = previous


def rand_q(rng, shape, dtype, scale=0.05, zero_point=None):
    lo, hi = RANGES[dtype]
    zp = (lo + hi + 1) // 2 if zero_point is None else zero_point
    ints = rng.integers(lo, hi + 1, shape)
    return qtensor(ints, scale, zp, dtype), ints.astype(np.int64), zp


# -- elementwise --------------------------------------------------------------------------------------------


@given(
    shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, min_side=0, max_side=4),
    dtype=st.sampled_from([U8, S8]),
    seed=st.integers(0, 2**16),
    op=st.sampled_from(["add", "add_relu", "mul"]),
)
def test_binary_ops_match_float_oracle(shapes, dtype, seed, op):
    rng = np.random.default_rng(seed)
    (sa, sb), _ = shapes
    qa, ia, za = rand_q(rng, sa, dtype, 0.05)
    qb, ib, zb = rand_q(rng, sb, dtype, 0.03, zero_point=RANGES[dtype][0] + 7)
    out_scale, out_zp = 0.07, 20 if dtype is U8 else -3
    result = getattr(Q, op)(qa, qb, out_scale, out_zp)
    fa, fb = np_dequantize(ia, 0.05, za), np_dequantize(ib, 0.03, zb)
    y = (fa * fb) if op == "mul" else (fa + fb)
    if op == "add_relu":
        y = np.maximum(y, np.float32(0))
    assert result.dtype is dtype and result.q_scale() == out_scale and result.q_zero_point() == out_zp
    np.testing.assert_array_equal(host(result), np_quantize(y, out_scale, out_zp, dtype))


def test_activations_on_quantized_tensors():
    rng = np.random.default_rng(1)
    q, ints, zp = rand_q(rng, (3, 5), S8, 0.04, zero_point=-10)
    relu = ow.relu(q)
    np.testing.assert_array_equal(host(relu), np.maximum(ints, zp))
    assert relu.q_scale() == 0.04 and relu.q_zero_point() == zp
    x = np_dequantize(ints, 0.04, zp)
    hs = x * np.clip(x + 3, 0, 6) / 6
    np.testing.assert_array_equal(host(ow.hardswish(q)), np_quantize(hs.astype(np.float32), 0.04, zp, S8))
    sig = ow.sigmoid(q)
    assert sig.q_scale() == 1 / 256 and sig.q_zero_point() == -128
    expected = np_quantize((1 / (1 + np.exp(-x.astype(np.float64)))).astype(np.float32), 1 / 256, -128, S8)
    assert np.abs(host(sig).astype(int) - expected.astype(int)).max() <= 1  # float32 exp may round differently
    u, _, _ = rand_q(rng, (4,), U8)
    assert ow.sigmoid(u).q_zero_point() == 0


# -- linear ----------------------------------------------------------------------------------------


def linear_oracle(ix, sx, zx, iw, sw, zw, bias, sy, zy, relu=False):
    acc = (ix - zx) @ (iw - np.reshape(zw, (-1, 1))).T
    bias_term = 0.0 if bias is None else bias.astype(np.float64) / sy
    return requantize(acc, np.asarray(sw) * sx / sy, bias_term, zy, U8, relu)


@pytest.mark.parametrize("per_channel", [False, True])
@pytest.mark.parametrize("with_bias", [False, True])
@pytest.mark.parametrize("relu", [False, True])
@pytest.mark.parametrize("x_shape", [(4, 6), (2, 3, 6), (0, 6), (6,)])
def test_linear_matches_integer_oracle(per_channel, with_bias, relu, x_shape):
    rng = np.random.default_rng(len(x_shape) + 2 * per_channel + 4 * with_bias)
    qx, ix, zx = rand_q(rng, x_shape, U8, 0.03, zero_point=120)
    iw = rng.integers(-128, 128, (5, 6))
    if per_channel:
        sw, zw = np.array([0.01, 0.02, 0.015, 0.03, 0.005]), np.zeros(5, np.int64)
        w = ow._make_per_channel_quantized_tensor(ow.tensor(iw.astype(np.int8)), ow.tensor(sw), ow.tensor(zw), 0)
    else:
        sw, zw = 0.02, 0
        w = qtensor(iw, sw, zw, S8)
    bias = rng.uniform(-1, 1, 5).astype(np.float32) if with_bias else None
    packed = Q.linear_prepack(w, None if bias is None else ow.tensor(bias))
    assert isinstance(packed, ow.quantization.LinearPackedParams) and packed.backend_cache == {}
    out = (Q.linear_relu if relu else Q.linear)(qx, packed, 0.08, 100)
    assert out.dtype is U8 and out.shape == (*x_shape[:-1], 5)
    expected = linear_oracle(ix, 0.03, zx, iw, sw, zw, bias, 0.08, 100, relu)
    np.testing.assert_array_equal(host(out), expected)
    w_back, b_back = Q.linear_unpack(packed)
    assert w_back is w and (b_back is None) == (bias is None)


def choose_qparams(lo, hi, qmin, qmax):
    lo, hi = min(lo, 0.0), max(hi, 0.0)
    scale = (hi - lo) / (qmax - qmin)
    if np.float32(scale) == 0:
        scale = 0.1
    candidates = [(abs(qmin) + abs(lo / scale), qmin - lo / scale), (abs(qmax) + abs(hi / scale), qmax - hi / scale)]
    initial = candidates[0][1] if candidates[0][0] < candidates[1][0] else candidates[1][1]
    return scale, int(np.clip(np.rint(initial), qmin, qmax))


@pytest.mark.parametrize("reduce_range", [False, True])
def test_linear_dynamic(reduce_range):
    rng = np.random.default_rng(3)
    x = rng.normal(size=(3, 8)).astype(np.float32)
    iw = rng.integers(-128, 128, (4, 8))
    bias = rng.normal(size=4).astype(np.float32)
    packed = Q.linear_prepack(qtensor(iw, 0.01, 0, S8), ow.tensor(bias))
    out = Q.linear_dynamic(ow.tensor(x), packed, reduce_range)
    scale, zp = choose_qparams(float(x.min()), float(x.max()), 0, 127 if reduce_range else 255)
    qx = np_quantize(x, scale, zp, U8).astype(np.int64)
    expected = ((qx - zp) @ iw.T) * (scale * 0.01) + bias
    assert out.dtype is ow.float32
    np.testing.assert_allclose(out.numpy(), expected.astype(np.float32), rtol=1e-6, atol=1e-6)
    assert np.abs(out.numpy() - (x @ (iw * 0.01).T + bias)).max() < 0.1  # close to the float model


# -- convolution -----------------------------------------------------------------------------------


def np_conv2d(x, w, stride, padding, dilation, groups):
    x = np.pad(x, ((0, 0), (0, 0), (padding[0],) * 2, (padding[1],) * 2))
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    oh = (h - dilation[0] * (kh - 1) - 1) // stride[0] + 1
    ow_ = (wd - dilation[1] * (kw - 1) - 1) // stride[1] + 1
    out = np.zeros((n, o, oh, ow_), np.int64)
    og = o // groups
    for g in range(groups):
        for i in range(oh):
            for j in range(ow_):
                patch = x[
                    :,
                    g * cg : (g + 1) * cg,
                    i * stride[0] : i * stride[0] + dilation[0] * (kh - 1) + 1 : dilation[0],
                    j * stride[1] : j * stride[1] + dilation[1] * (kw - 1) + 1 : dilation[1],
                ]
                out[:, g * og : (g + 1) * og, i, j] = np.einsum("nchw,ochw->no", patch, w[g * og : (g + 1) * og])
    return out


@pytest.mark.parametrize(
    "stride,padding,dilation,groups,per_channel,relu",
    [
        ((1, 1), (0, 0), (1, 1), 1, False, False),
        ((2, 1), (1, 2), (1, 1), 2, True, True),
        ((1, 1), (2, 2), (2, 2), 1, True, False),
    ],
)
def test_conv2d_matches_integer_oracle(stride, padding, dilation, groups, per_channel, relu):
    rng = np.random.default_rng(groups)
    qx, ix, zx = rand_q(rng, (2, 4, 7, 6), U8, 0.02, zero_point=128)
    iw = rng.integers(-128, 128, (6, 4 // groups, 3, 3))
    if per_channel:
        sw = np.linspace(0.005, 0.02, 6)
        w = ow._make_per_channel_quantized_tensor(
            ow.tensor(iw.astype(np.int8)), ow.tensor(sw), ow.zeros(6, dtype=ow.int64), 0
        )
    else:
        sw = np.full(6, 0.01)
        w = qtensor(iw, 0.01, 0, S8)
    bias = rng.uniform(-1, 1, 6).astype(np.float32)
    packed = Q.conv2d_prepack(w, ow.tensor(bias), list(stride), list(padding), list(dilation), groups)
    out = (Q.conv2d_relu if relu else Q.conv2d)(qx, packed, 0.2, 110)
    acc = np_conv2d(ix - zx, iw, stride, padding, dilation, groups)
    expected = requantize(acc, (sw * 0.02 / 0.2).reshape(1, -1, 1, 1), (bias / 0.2).reshape(1, -1, 1, 1), 110, U8, relu)
    np.testing.assert_array_equal(host(out), expected)
    assert Q.conv2d_unpack(packed)[0] is w


def test_conv1d():
    rng = np.random.default_rng(5)
    qx, ix, zx = rand_q(rng, (1, 2, 9), U8, 0.02)
    iw = rng.integers(-128, 128, (3, 2, 3))
    packed = Q.conv1d_prepack(qtensor(iw, 0.01, 0, S8), None, [2], [1], [1], 1)
    out = Q.conv1d(qx, packed, 0.1, 100)
    acc = np_conv2d((ix - zx)[:, :, None, :], iw[:, :, None, :], (1, 2), (0, 1), (1, 1), 1)[:, :, 0, :]
    np.testing.assert_array_equal(host(out), requantize(acc, 0.01 * 0.02 / 0.1, 0.0, 100, U8))


# -- matmul, pooling, cat, layer norm, embedding bag -----------------------------------------------


def test_matmul_is_exact_in_integers():
    rng = np.random.default_rng(6)
    qa, ia, za = rand_q(rng, (2, 3, 4), S8, 0.05, zero_point=1)
    qb, ib, zb = rand_q(rng, (2, 4, 5), S8, 0.04, zero_point=-2)
    out = Q.matmul(qa, qb, 0.1, 3)
    acc = np.matmul(ia - za, ib - zb)
    np.testing.assert_array_equal(host(out), requantize(acc, 0.05 * 0.04 / 0.1, 0.0, 3, S8))


def test_max_pool2d_on_integers():
    rng = np.random.default_rng(7)
    q, ints, zp = rand_q(rng, (1, 2, 4, 6), U8)
    out = Q.max_pool2d(q, [2, 2], [2, 2])
    expected = ints.reshape(1, 2, 2, 2, 3, 2).max(axis=(3, 5))
    np.testing.assert_array_equal(host(out), expected)
    assert out.q_scale() == q.q_scale()


def test_avg_pools_round_the_mean():
    from opweave.quantization import reference

    rng = np.random.default_rng(8)
    q, ints, zp = rand_q(rng, (1, 1, 4, 4), U8, zero_point=100)
    out = reference.avg_pool2d(q, [2, 2], [2, 2])
    mean = (ints - zp).reshape(1, 1, 2, 2, 2, 2).mean(axis=(3, 5))
    np.testing.assert_array_equal(host(out), np.clip(np.rint(mean) + zp, 0, 255))
    ada = reference.adaptive_avg_pool2d(q, [1, 1])
    np.testing.assert_array_equal(host(ada).reshape(-1), np.clip(np.rint([(ints - zp).mean()]) + zp, 0, 255))


def test_cat():
    rng = np.random.default_rng(9)
    a, ia, za = rand_q(rng, (2, 3), U8, 0.05)
    b, ib, zb = rand_q(rng, (1, 3), U8, 0.05)
    same = Q.cat([a, b], 0, None, None)
    np.testing.assert_array_equal(host(same), np.concatenate([ia, ib]))
    c, ic, zc = rand_q(rng, (2, 3), U8, 0.1, zero_point=50)
    mixed = Q.cat([a, c], 1, 0.08, 60)
    y = np.concatenate([np_dequantize(ia, 0.05, za), np_dequantize(ic, 0.1, zc)], 1)
    np.testing.assert_array_equal(host(mixed), np_quantize(y, 0.08, 60, U8))


def test_layer_norm_within_one_step():
    rng = np.random.default_rng(10)
    q, ints, zp = rand_q(rng, (3, 8), U8, 0.05)
    weight, bias = rng.uniform(0.5, 1.5, 8).astype(np.float32), rng.uniform(-0.5, 0.5, 8).astype(np.float32)
    out = Q.layer_norm(q, [8], ow.tensor(weight), ow.tensor(bias), 1e-5, 0.03, 128)
    x = np_dequantize(ints, 0.05, zp).astype(np.float64)
    y = (x - x.mean(1, keepdims=True)) / np.sqrt(x.var(1, keepdims=True) + 1e-5) * weight + bias
    expected = np_quantize(y.astype(np.float32), 0.03, 128, U8)
    assert np.abs(host(out).astype(int) - expected.astype(int)).max() <= 1


def test_embedding_bag_byte():
    rng = np.random.default_rng(11)
    table = rng.uniform(-1, 1, (6, 5)).astype(np.float32)
    packed = Q.embedding_bag_byte_prepack(ow.tensor(table))
    assert packed.dtype is ow.uint8 and packed.shape == (6, 13)
    raw = host(packed)
    scale_bias = np.ascontiguousarray(raw[:, 5:]).view(np.float32)
    np.testing.assert_array_equal(scale_bias[:, 1], table.min(1))
    rows = raw[:, :5].astype(np.float32) * scale_bias[:, :1] + scale_bias[:, 1:]
    assert np.abs(rows - table).max() <= scale_bias[:, 0].max() / 2 + 1e-6
    out = Q.embedding_bag_byte_rowwise_offsets(packed, ow.tensor([0, 3, 5, 1]), ow.tensor([0, 1, 1]))
    expected = np.stack([rows[0], np.zeros(5, np.float32), rows[[3, 5, 1]].sum(0)])
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-6, atol=1e-6)
    mean = Q.embedding_bag_byte_rowwise_offsets(packed, ow.tensor([[0, 2], [4, 4]]), mode=1)
    np.testing.assert_allclose(mean.numpy(), np.stack([rows[[0, 2]].mean(0), rows[4]]), rtol=1e-6, atol=1e-6)


def test_reference_kernels_run_on_vnpu():
    rng = np.random.default_rng(12)
    qx, ix, zx = rand_q(rng, (3, 4), U8, 0.03, zero_point=120)
    iw = rng.integers(-128, 128, (2, 4))
    packed_cpu = Q.linear_prepack(qtensor(iw, 0.02, 0, S8))
    packed_vnpu = Q.linear_prepack(qtensor(iw, 0.02, 0, S8, device="vnpu"))
    out = Q.linear(qx.to("vnpu"), packed_vnpu, 0.05, 100)
    assert out.device.type == "vnpu"
    np.testing.assert_array_equal(host(out), host(Q.linear(qx, packed_cpu, 0.05, 100)))


# -- errors ----------------------------------------------------------------------------------------


def test_invalid_combinations():
    rng = np.random.default_rng(13)
    qa, _, _ = rand_q(rng, (2, 4), U8)
    s8, _, _ = rand_q(rng, (2, 4), S8)
    per_channel = ow.quantize_per_channel(ow.ones(2, 4), ow.tensor([0.1, 0.2]), ow.tensor([0, 0]), 0, U8)
    packed = Q.linear_prepack(qtensor(rng.integers(-5, 5, (3, 4)), 0.1, 0, S8))
    with pytest.raises(TypeError, match="quantized::add: argument 'qb' must be a quantized tensor"):
        Q.add(qa, ow.ones(2, 4), 0.1, 0)
    with pytest.raises(TypeError, match="same quantized dtype"):
        Q.add(qa, s8, 0.1, 0)
    with pytest.raises(ValueError, match="per tensor"):
        Q.add(per_channel, qa, 0.1, 0)
    with pytest.raises(TypeError, match="quantized::linear: argument 'X' must be quint8"):
        Q.linear(s8, packed, 0.1, 0)
    with pytest.raises(TypeError, match="argument 'X' must be a quantized tensor"):
        Q.linear(ow.ones(2, 4), packed, 0.1, 0)
    with pytest.raises(TypeError, match="LinearPackedParams"):
        Q.linear(qa, "not packed", 0.1, 0)
    with pytest.raises(ValueError, match="zero point"):
        Q.linear(qa, packed, 0.1, 300)
    with pytest.raises(TypeError, match="qint8"):
        Q.linear_prepack(qa)
    with pytest.raises(TypeError, match="float tensor"):
        Q.linear_dynamic(qa, packed)
    assert STORAGE[U8] is np.uint8


@pytest.mark.skipif(not hasattr(ow.ops, "max_pool2d"), reason="the core does not define the aten pooling ops")
def test_aten_pooling_ops_on_quantized_tensors():
    rng = np.random.default_rng(14)
    q, ints, zp = rand_q(rng, (1, 2, 4, 4), U8, zero_point=100)
    maxed = ow.max_pool2d(q, [2, 2])
    assert maxed.is_quantized and maxed.q_zero_point() == zp
    np.testing.assert_array_equal(host(maxed), ints.reshape(1, 2, 2, 2, 2, 2).max(axis=(3, 5)))
    mean = (ints - zp).reshape(1, 2, 2, 2, 2, 2).mean(axis=(3, 5))
    np.testing.assert_array_equal(host(ow.avg_pool2d(q, [2, 2])), np.clip(np.rint(mean) + zp, 0, 255))
    whole = np.clip(np.rint((ints - zp).mean(axis=(2, 3))) + zp, 0, 255)
    np.testing.assert_array_equal(host(ow.adaptive_avg_pool2d(q, [1, 1])).reshape(1, 2), whole)
