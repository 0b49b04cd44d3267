"""Schema-driven sample overrides for the quantization ops (merged into :data:`.schema_samples.OVERRIDES`).

Quantized tensors and packed weights are built with :class:`.schema_samples.Fn` from float values.
"""

from __future__ import annotations

import opweave as ow

from .schema_samples import Fn, ints, lst, t, value

Q = ow.ops.quantized


def qt(*shape, dtype=ow.quint8, scale=0.05, zero_point=None) -> Fn:
    """A per-tensor quantized tensor of ``shape`` (values in [-1, 1))."""
    zp = (128 if dtype is ow.quint8 else 0) if zero_point is None else zero_point

    def build(rng):
        return ow.quantize_per_tensor(ow.tensor(rng.uniform(-1, 1, shape), dtype=ow.float32), scale, zp, dtype)

    return Fn(build)


def qc(*shape, axis=0, dtype=ow.qint8) -> Fn:
    """A per-channel quantized tensor of ``shape`` along ``axis``."""

    def build(rng):
        n = shape[axis]
        x = ow.tensor(rng.uniform(-1, 1, shape), dtype=ow.float32)
        scales = ow.tensor([0.01 * (i + 1) for i in range(n)], dtype=ow.float64)
        return ow.quantize_per_channel(x, scales, ow.tensor([i % 3 for i in range(n)]), axis, dtype)

    return Fn(build)


def _qweight(rng, shape):
    return ow.quantize_per_tensor(ow.tensor(rng.uniform(-1, 1, shape), dtype=ow.float32), 0.02, 0, ow.qint8)


def packed_linear(n=3, k=4) -> Fn:
    """Packed qint8 ``[n, k]`` weight with a float bias."""
    return Fn(lambda rng: Q.linear_prepack(_qweight(rng, (n, k)), ow.tensor(rng.uniform(-1, 1, n), dtype=ow.float32)))


def packed_conv(*shape) -> Fn:
    """Packed qint8 conv weight of ``shape`` (1 or 2 spatial dims), stride 1, padding 1."""
    dims = len(shape) - 2
    prepack = Q.conv1d_prepack if dims == 1 else Q.conv2d_prepack

    def build(rng):
        bias = ow.tensor(rng.uniform(-1, 1, shape[0]), dtype=ow.float32)
        return prepack(_qweight(rng, shape), bias, [1] * dims, [1] * dims, [1] * dims, 1)

    return Fn(build)


_QT = {"self": qt(2, 3)}
_QC = {"self": qc(2, 3)}
_BINARY = {"qa": qt(2, 3), "qb": qt(2, 3), "scale": 0.08, "zero_point": 120}
_LINEAR = {"X": qt(2, 4), "W_prepack": packed_linear(), "Y_scale_i": 0.1, "Y_zero_point_i": 100}
_CONV1 = {"qx": qt(1, 2, 6), "packed_weight": packed_conv(4, 2, 3), "output_scale": 0.1, "output_zero_point": 100}
_CONV2 = {"qx": qt(1, 2, 5, 5), "packed_weight": packed_conv(4, 2, 3, 3), "output_scale": 0.1, "output_zero_point": 100}

OVERRIDES: dict[str, dict] = {
    "quantize_per_tensor": {"self": t(2, 3), "scale": 0.1, "zero_point": 2, "dtype": ow.quint8},
    "quantize_per_tensor.tensor_qparams": {"scale": value(0.1), "zero_point": value(2)},
    "quantize_per_channel": {
        "self": t(2, 3),
        "scales": value([0.1, 0.2]),
        "zero_points": value([0, 1]),
        "axis": 0,
        "dtype": ow.qint8,
    },
    "dequantize": _QT,
    "q_scale": _QT,
    "q_zero_point": _QT,
    "int_repr": _QT,
    "qscheme": _QT,
    "q_per_channel_scales": _QC,
    "q_per_channel_zero_points": _QC,
    "q_per_channel_axis": _QC,
    "_make_per_tensor_quantized_tensor": {"self": ints(2, 3, low=-5, high=5, dtype=ow.int8), "zero_point": 1},
    "_make_per_channel_quantized_tensor": {
        "self": ints(2, 3, low=-5, high=5, dtype=ow.int8),
        "scale": value([0.1, 0.2]),
        "zero_point": value([0, 1]),
        "axis": 0,
    },
    "fake_quantize_per_tensor_affine": {
        "self": t(2, 3),
        "scale": 0.1,
        "zero_point": 0,
        "quant_min": 0,
        "quant_max": 255,
    },
    "fake_quantize_per_tensor_affine.tensor_qparams": {"scale": value(0.1), "zero_point": value(0)},
    "fake_quantize_per_channel_affine": {
        "self": t(2, 3),
        "scale": value([0.1, 0.2]),
        "zero_point": value([0, 1]),
        "axis": 0,
        "quant_min": 0,
        "quant_max": 255,
    },
    "quantized::add": _BINARY,
    "quantized::add_relu": _BINARY,
    "quantized::mul": _BINARY,
    "quantized::linear_prepack": {"W": Fn(lambda rng: _qweight(rng, (3, 4))), "B": t(3)},
    "quantized::linear_unpack": {"W_prepack": packed_linear()},
    "quantized::linear": _LINEAR,
    "quantized::linear_relu": _LINEAR,
    "quantized::linear_dynamic": {"X": t(2, 4), "W_prepack": packed_linear()},
    "quantized::conv1d_prepack": {
        "weight": Fn(lambda rng: _qweight(rng, (4, 2, 3))),
        "bias": t(4),
        "stride": [1],
        "padding": [0],
        "dilation": [1],
    },
    "quantized::conv2d_prepack": {
        "weight": Fn(lambda rng: _qweight(rng, (4, 2, 3, 3))),
        "bias": t(4),
        "stride": [1, 1],
        "padding": [1, 1],
        "dilation": [1, 1],
    },
    "quantized::conv2d_unpack": {"packed_weights": packed_conv(4, 2, 3, 3)},
    "quantized::conv1d": _CONV1,
    "quantized::conv1d_relu": _CONV1,
    "quantized::conv2d": _CONV2,
    "quantized::conv2d_relu": _CONV2,
    "quantized::matmul": {"qa": qt(2, 3), "qb": qt(3, 4), "scale": 0.1, "zero_point": 5},
    "quantized::max_pool2d": {"qx": qt(1, 2, 4, 4), "kernel_size": [2, 2]},
    "quantized::cat": {"qx": lst(qt(2, 3), qt(1, 3, scale=0.1)), "dim": 0, "scale": None, "zero_point": None},
    "quantized::layer_norm": {
        "input": qt(2, 3),
        "normalized_shape": [3],
        "weight": t(3),
        "bias": t(3),
        "eps": 1e-5,
        "output_scale": 0.05,
        "output_zero_point": 128,
    },
    "quantized::embedding_bag_byte_prepack": {"weight": t(5, 4)},
    "quantized::embedding_bag_byte_rowwise_offsets": {
        "weight": Fn(lambda rng: Q.embedding_bag_byte_prepack(ow.tensor(rng.uniform(-1, 1, (5, 4)), dtype=ow.float32))),
        "indices": value([0, 2, 4, 1]),
        "offsets": value([0, 2]),
    },
}
