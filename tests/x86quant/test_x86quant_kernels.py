"""The x86 engine's quantized kernels through opweave, against NumPy integer oracles written here.

Accumulators are exact; requantized outputs may differ from the float64 oracle by one step
(oneDNN requantizes in float32); add/add_relu/relu follow the reference's float32 formula exactly.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("cffi")
onednn = pytest.importorskip("opweave_x86quant._onednn")
if not onednn.availability()[0]:
    pytest.skip(f"x86 engine unavailable: {onednn.availability()[1]}", allow_module_level=True)

import opweave as ow  # noqa: E402
from opweave.ops import quantized  # noqa: E402

SMALL = settings(max_examples=10, deadline=None)


@pytest.fixture(autouse=True)
def x86_engine():
    """Every test runs on the x86 engine and leaves the default selection behind."""
    ow.backends.quantized.engine = "x86"
    yield
    ow.quantization._engine.reset_engine()


def _served_by_x86(op, *args):
    return "x86quant" in str(ow.dispatch.explain(op, *args))


# -- oracles ----------------------------------------------------------------------------------------------------


def qtensor(ints: np.ndarray, scale: float, zero_point: int):
    """A per-tensor quantized tensor with the given integers."""
    return ow._make_per_tensor_quantized_tensor(ow.tensor(ints), scale, zero_point)


def per_channel_weight(ints: np.ndarray, scales, zero_points):
    """A per-channel (axis 0) qint8 tensor with the given integers: quantize the exact dequantized values."""
    scales = np.asarray(scales, np.float64)
    zero_points = np.asarray(zero_points, np.int64)
    shape = (-1,) + (1,) * (ints.ndim - 1)
    real = ((ints.astype(np.float64) - zero_points.reshape(shape)) * scales.astype(np.float32).reshape(shape)).astype(
        np.float32
    )
    q = ow.quantize_per_channel(ow.tensor(real), ow.tensor(scales), ow.tensor(zero_points), 0, ow.qint8)
    np.testing.assert_array_equal(q.int_repr().numpy(), ints)  # the construction itself is exact
    return q


def requantize(acc, multiplier, bias_over_scale, zero_point, lo, hi, relu=False):
    """``clamp(rhe(acc * multiplier + bias / scale) + zero_point)`` in float64."""
    v = acc * multiplier + bias_over_scale
    return np.clip(np.rint(v) + zero_point, zero_point if relu else lo, hi)


def within_one_step(got, want):
    got = np.asarray(got, np.int64)
    assert got.shape == want.shape
    assert np.abs(got - want).max(initial=0) <= 1


def conv_acc(x: np.ndarray, w: np.ndarray, stride, padding, dilation, groups) -> np.ndarray:
    """Exact int64 grouped convolution of centered integers ``x [N, C, *S]`` and ``w [O, C/g, *K]`` (zero padding)."""
    dims = x.ndim - 2
    x = np.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in padding])
    n, c = x.shape[:2]
    o, cg = w.shape[:2]
    kernel = w.shape[2:]
    out_spatial = [(x.shape[2 + i] - dilation[i] * (kernel[i] - 1) - 1) // stride[i] + 1 for i in range(dims)]
    out = np.zeros((n, o, *out_spatial), np.int64)
    og = o // groups
    for g in range(groups):
        xs = x[:, g * cg : (g + 1) * cg]
        ws = w[g * og : (g + 1) * og]
        for offset in np.ndindex(*kernel):
            index = tuple(
                slice(
                    offset[i] * dilation[i], offset[i] * dilation[i] + stride[i] * (out_spatial[i] - 1) + 1, stride[i]
                )
                for i in range(dims)
            )
            patch = xs[(slice(None), slice(None), *index)]  # [N, C/g, *out]
            out[:, g * og : (g + 1) * og] += np.einsum(
                "nc...,oc->no...", patch, ws[(slice(None), slice(None), *offset)]
            )
    return out


# -- linear -------------------------------------------------------------------------------------------------------


@SMALL
@given(
    batch=st.sampled_from([(), (0,), (1,), (5,), (2, 3)]),
    k=st.integers(1, 70),
    n=st.integers(1, 40),
    per_channel=st.booleans(),
    weight_zp=st.sampled_from([0, 0, 5, -3]),
    with_bias=st.booleans(),
    relu=st.booleans(),
    strided=st.booleans(),
    seed=st.integers(0, 2**31),
)
def test_linear(batch, k, n, per_channel, weight_zp, with_bias, relu, strided, seed):
    rng = np.random.default_rng(seed)
    x_ints = rng.integers(0, 256, (*batch, 2 * k if strided else k), dtype=np.uint8)
    w_ints = rng.integers(-128, 128, (n, k), dtype=np.int8)
    sx, zx, sy, zy = 0.03, int(rng.integers(0, 256)), 0.7, int(rng.integers(0, 256))
    if per_channel:
        sw = rng.uniform(0.001, 0.02, n)
        w = per_channel_weight(w_ints, sw, [weight_zp] * n)
    else:
        sw = np.array([0.01])
        w = qtensor(w_ints, 0.01, weight_zp)
    bias = rng.standard_normal(n).astype(np.float32) if with_bias else None
    x = qtensor(x_ints, sx, zx)
    if strided:  # every other column: a view with a non-unit last stride
        x, x_ints = x[..., ::2], x_ints[..., ::2]
    packed = quantized.linear_prepack(w, None if bias is None else ow.tensor(bias))
    op = quantized.linear_relu if relu else quantized.linear
    y = op(x, packed, sy, zy)
    assert y.dtype is ow.quint8 and y.q_scale() == sy and y.q_zero_point() == zy
    assert tuple(y.shape) == (*batch, n)
    acc = (x_ints.astype(np.int64) - zx) @ (w_ints.astype(np.int64) - weight_zp).T
    multiplier = np.float64(sx) * np.float32(sw).astype(np.float64) / sy
    b = 0.0 if bias is None else bias.astype(np.float64) / sy
    within_one_step(y.int_repr().numpy(), requantize(acc, multiplier, b, zy, 0, 255, relu))
    assert _served_by_x86(op, x, packed, sy, zy)


def test_linear_weight_zero_points_differing_by_channel_use_the_reference():
    rng = np.random.default_rng(0)
    w_ints = rng.integers(-100, 100, (4, 6), dtype=np.int8)
    w = per_channel_weight(w_ints, [0.01, 0.02, 0.03, 0.04], [0, 1, -2, 3])
    x_ints = rng.integers(0, 256, (3, 6), dtype=np.uint8)
    packed = quantized.linear_prepack(w)
    y = quantized.linear(qtensor(x_ints, 0.05, 7), packed, 0.2, 50)
    assert not packed.backend_cache["x86"].supported
    acc = (x_ints.astype(np.int64) - 7) @ (w_ints.astype(np.int64) - np.array([[0], [1], [-2], [3]])).T
    multiplier = 0.05 * np.float32([0.01, 0.02, 0.03, 0.04]).astype(np.float64) / 0.2
    within_one_step(y.int_repr().numpy(), requantize(acc, multiplier, 0.0, 50, 0, 255))


def _choose_qparams(lo, hi, qmin, qmax):
    """fbgemm's ChooseQuantizationParams over [min(lo, 0), max(hi, 0)] (written from its description)."""
    lo, hi = min(lo, 0.0), max(hi, 0.0)
    scale = (hi - lo) / (qmax - qmin)
    if np.float32(scale) == 0:
        scale = 0.1
    candidates = [(abs(qmin) + abs(lo / scale), qmin - lo / scale), (abs(qmax) + abs(hi / scale), qmax - hi / scale)]
    zp = candidates[0][1] if candidates[0][0] < candidates[1][0] else candidates[1][1]
    return scale, int(np.clip(np.rint(zp), qmin, qmax))


@SMALL
@given(
    batch=st.sampled_from([(1,), (4,), (2, 3)]),
    k=st.integers(1, 50),
    n=st.integers(1, 30),
    reduce_range=st.booleans(),
    shift=st.sampled_from([0.0, 2.0, -3.0]),
    transposed=st.booleans(),
    dtype=st.sampled_from(["float32", "float32", "float64", "float16", "bfloat16"]),
    seed=st.integers(0, 2**31),
)
def test_linear_dynamic(batch, k, n, reduce_range, shift, transposed, dtype, seed):
    rng = np.random.default_rng(seed)
    x64 = rng.standard_normal((*batch, k)) + shift
    x_tensor = ow.tensor(np.ascontiguousarray(x64.swapaxes(0, -1))).transpose(0, -1) if transposed else ow.tensor(x64)
    x_tensor = x_tensor.to(getattr(ow, dtype))
    x64 = x_tensor.to(ow.float64).numpy()  # the values X holds, exactly
    x = x64.astype(np.float32)  # what is quantized: X's values rounded to float32
    w_ints = rng.integers(-128, 128, (n, k), dtype=np.int8)
    sw = rng.uniform(0.001, 0.02, n)
    bias = rng.standard_normal(n).astype(np.float32)
    packed = quantized.linear_prepack(per_channel_weight(w_ints, sw, [0] * n), ow.tensor(bias))
    y = quantized.linear_dynamic(x_tensor, packed, reduce_range)
    assert y.dtype is ow.float32 and tuple(y.shape) == (*batch, n)
    sx, zx = _choose_qparams(float(x64.min()), float(x64.max()), 0, 127 if reduce_range else 255)
    qx = np.clip(np.rint(x / np.float32(sx)) + zx, 0, 255)
    acc = (qx.astype(np.int64) - zx) @ w_ints.astype(np.int64).T
    want = acc * (sx * np.float32(sw).astype(np.float64)) + bias
    np.testing.assert_allclose(y.numpy(), want, rtol=1e-5, atol=1e-5 * np.abs(want).max())


# -- convolution -------------------------------------------------------------------------------------------------


@settings(max_examples=8, deadline=None)
@given(
    dims=st.sampled_from([1, 2]),
    groups=st.sampled_from([1, 2]),
    stride=st.integers(1, 2),
    padding=st.integers(0, 2),
    dilation=st.integers(1, 2),
    per_channel=st.booleans(),
    with_bias=st.booleans(),
    relu=st.booleans(),
    channels_last=st.booleans(),
    seed=st.integers(0, 2**31),
)
def test_conv(dims, groups, stride, padding, dilation, per_channel, with_bias, relu, channels_last, seed):
    rng = np.random.default_rng(seed)
    c, o, kernel = 2 * groups, 3 * groups, 3
    spatial = (7, 6)[:dims]
    x_ints = rng.integers(0, 256, (2, c, *spatial), dtype=np.uint8)
    w_ints = rng.integers(-128, 128, (o, c // groups, *(kernel,) * dims), dtype=np.int8)
    sw = rng.uniform(0.001, 0.02, o) if per_channel else np.array([0.01])
    w = per_channel_weight(w_ints, sw, [0] * o) if per_channel else qtensor(w_ints, 0.01, 0)
    bias = rng.standard_normal(o).astype(np.float32) if with_bias else None
    sx, zx, sy, zy = 0.04, int(rng.integers(0, 256)), 0.3, int(rng.integers(0, 256))
    x = qtensor(x_ints, sx, zx)
    if channels_last:  # the same values stored channels-last: a permuted view
        x = qtensor(np.ascontiguousarray(np.moveaxis(x_ints, 1, -1)), sx, zx).movedim(-1, 1)
    prepack = quantized.conv1d_prepack if dims == 1 else quantized.conv2d_prepack
    packed = prepack(w, None if bias is None else ow.tensor(bias), [stride], [padding], [dilation], groups)
    op = {(1, False): quantized.conv1d, (1, True): quantized.conv1d_relu}.get((dims, relu))
    op = op or (quantized.conv2d_relu if relu else quantized.conv2d)
    y = op(x, packed, sy, zy)
    acc = conv_acc(
        x_ints.astype(np.int64) - zx, w_ints.astype(np.int64), (stride,) * dims, (padding,) * dims, (dilation,) * dims,
        groups,
    )  # fmt: skip
    channel = (-1,) + (1,) * dims
    multiplier = (sx * np.float32(sw).astype(np.float64) / sy).reshape(channel)
    b = 0.0 if bias is None else (bias.astype(np.float64) / sy).reshape(channel)
    assert y.dtype is ow.quint8 and y.q_scale() == sy and y.q_zero_point() == zy
    within_one_step(y.int_repr().numpy(), requantize(acc, multiplier, b, zy, 0, 255, relu))
    assert _served_by_x86(op, x, packed, sy, zy)


def test_conv_with_asymmetric_weights_uses_the_reference():
    rng = np.random.default_rng(1)
    w_ints = rng.integers(-100, 100, (2, 1, 2, 2), dtype=np.int8)
    packed = quantized.conv2d_prepack(qtensor(w_ints, 0.02, 3), None, [1], [0], [1], 1)
    x_ints = rng.integers(0, 256, (1, 1, 4, 4), dtype=np.uint8)
    y = quantized.conv2d(qtensor(x_ints, 0.1, 9), packed, 0.5, 10)
    assert not packed.backend_cache["x86"].supported
    acc = conv_acc(x_ints.astype(np.int64) - 9, w_ints.astype(np.int64) - 3, (1, 1), (0, 0), (1, 1), 1)
    within_one_step(y.int_repr().numpy(), requantize(acc, 0.1 * np.float64(np.float32(0.02)) / 0.5, 0.0, 10, 0, 255))


# -- matmul ---------------------------------------------------------------------------------------------------------


@SMALL
@given(
    shapes=st.sampled_from([((4, 5), (5, 3)), ((2, 4, 5), (2, 5, 3)), ((2, 1, 3, 4), (5, 4, 2)), ((1, 6), (6, 1))]),
    dtype=st.sampled_from(["quint8", "qint8"]),
    seed=st.integers(0, 2**31),
)
def test_matmul(shapes, dtype, seed):
    rng = np.random.default_rng(seed)
    qdtype = getattr(ow, dtype)
    lo, hi = (0, 255) if dtype == "quint8" else (-128, 127)
    storage = np.uint8 if dtype == "quint8" else np.int8
    a_ints = rng.integers(lo, hi + 1, shapes[0], dtype=storage)
    b_ints = rng.integers(lo, hi + 1, shapes[1], dtype=storage)
    za, zb, zy = (int(v) for v in rng.integers(lo, hi + 1, 3))
    a, b = qtensor(a_ints, 0.02, za), qtensor(b_ints, 0.03, zb)
    y = quantized.matmul(a, b, 0.4, zy)
    assert y.dtype is qdtype and y.q_scale() == 0.4 and y.q_zero_point() == zy
    acc = np.matmul(a_ints.astype(np.int64) - za, b_ints.astype(np.int64) - zb)
    within_one_step(y.int_repr().numpy(), requantize(acc, 0.02 * 0.03 / 0.4, 0.0, zy, lo, hi))
    assert _served_by_x86(quantized.matmul, a, b, 0.4, zy)


# -- add, add_relu, relu: the reference's float32 formula, exactly --------------------------------------------------


def _add_oracle(a_ints, sa, za, b_ints, sb, zb, scale, zp, lo, hi, relu):
    y = (a_ints.astype(np.int32) - za).astype(np.float32) * np.float32(sa)
    y = y + (b_ints.astype(np.int32) - zb).astype(np.float32) * np.float32(sb)
    if relu:
        y = np.maximum(y, np.float32(0))
    return np.clip(np.rint(y / np.float32(scale)).astype(np.float64) + zp, lo, hi)


@pytest.mark.parametrize("shapes", [((3, 4), (3, 4)), ((2, 3, 4), (4,)), ((), ()), ((0, 3), (0, 3)), ((3, 1), (4,))])
@pytest.mark.parametrize("dtype", ["quint8", "qint8"])
@pytest.mark.parametrize("relu", [False, True])
def test_add(shapes, dtype, relu):
    rng = np.random.default_rng(len(shapes[0]) * 7 + relu)
    lo, hi = (0, 255) if dtype == "quint8" else (-128, 127)
    storage = np.uint8 if dtype == "quint8" else np.int8
    a_ints = rng.integers(lo, hi + 1, shapes[0], dtype=storage)
    b_ints = rng.integers(lo, hi + 1, shapes[1], dtype=storage)
    za, zb, zy = (int(v) for v in rng.integers(lo, hi + 1, 3))
    a, b = qtensor(a_ints, 0.05, za), qtensor(b_ints, 0.07, zb)
    op = quantized.add_relu if relu else quantized.add
    y = op(a, b, 0.11, zy)
    want = _add_oracle(a_ints, 0.05, za, b_ints, 0.07, zb, 0.11, zy, lo, hi, relu)
    assert tuple(y.shape) == want.shape
    np.testing.assert_array_equal(y.int_repr().numpy(), want)
    assert y.dtype is getattr(ow, dtype)
    assert _served_by_x86(op, a, b, 0.11, zy)


@pytest.mark.parametrize("dtype", ["quint8", "qint8"])
def test_relu_is_max_with_the_zero_point(dtype):
    lo, hi = (0, 255) if dtype == "quint8" else (-128, 127)
    ints = np.arange(lo, hi + 1).astype(np.uint8 if dtype == "quint8" else np.int8).reshape(16, 16)
    q = qtensor(ints, 0.1, lo + 100)
    y = ow.relu(q[:, ::2])  # a strided view
    assert tuple(y.shape) == (16, 8)
    np.testing.assert_array_equal(y.int_repr().numpy(), np.maximum(ints[:, ::2], lo + 100))
    assert ow.relu(q[0, 0]).shape == ()
    assert y.q_scale() == 0.1 and y.q_zero_point() == lo + 100
