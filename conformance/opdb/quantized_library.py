"""Op database entries: the ``quantized::`` operator library (see :mod:`.quantized` for the conventions).

Integer oracles: linear, conv and matmul accumulate ``(q - zero_point)`` products exactly in
int64 and requantize in float64; convolution is written here with explicit windows.
"""

from __future__ import annotations

import numpy as np
import opweave as ow

from . import register
from ._core import ErrorInput, OpInfo, SampleInput, arr
from .quantized import (
    F32,
    ONE_STEP,
    QRANGE,
    STORAGE,
    QValue,
    np_quantize,
    packed,
    qarr,
    qchan,
    requantize,
)

U8, S8 = ow.quint8, ow.qint8


# -- elementwise ---------------------------------------------------------------------------------


def binary_samples(rng, dtype, device):
    plans = [
        ((3, 4), (3, 4), "contiguous", U8),
        ((2, 3), (2, 3), "transposed", S8),
        ((5,), (5,), "strided", U8),
        ((), (), "contiguous", S8),
        ((0, 3), (0, 3), "contiguous", U8),
        ((4, 3), (1, 3), "broadcast", S8),
    ]
    for shape_a, shape_b, layout, qd in plans:
        a = qarr(rng, shape_a, qd, layout, scale=0.05)
        b = qarr(rng, shape_b, qd, "contiguous", scale=0.03)
        zp = 100 if qd is U8 else -5
        yield SampleInput((a, b, 0.04, zp), desc=f"{qd.name} {layout}")
    yield SampleInput(
        (qarr(rng, (3, 3), U8, low=-4, high=4), qarr(rng, (3, 3), U8, low=-4, high=4), 0.01, 128), desc="saturates"
    )


def _binary_oracle(fn, relu=False):
    def oracle(qa: QValue, qb: QValue, scale, zero_point):
        y = fn(qa.dq(), qb.dq()).astype(F32)
        if relu:
            y = np.maximum(y, F32(0))
        return np_quantize(y, scale, zero_point, qa.dtype)

    return oracle


def binary_errors(rng, dtype):
    a = qarr(rng, (2, 3), U8)
    yield ErrorInput(SampleInput((a, arr(rng, (2, 3), ow.float32), 0.1, 0)), TypeError, "qb")
    yield ErrorInput(SampleInput((a, qarr(rng, (2, 3), S8), 0.1, 0)), TypeError, "same quantized dtype")
    yield ErrorInput(SampleInput((qchan(rng, (2, 3), 0, U8), a, 0.1, 0)), ValueError, "per tensor")
    yield ErrorInput(SampleInput((a, a, 0.1, 300)), ValueError, "zero point")


# -- linear ----------------------------------------------------------------------------------------------


def _linear_acc(x: QValue, spec) -> np.ndarray:
    return (x.ints - x.zero_point) @ spec.centered().T


def linear_samples(rng, dtype, device):
    plans = [
        ((2, 4), "contiguous", False, True),
        ((3, 2, 4), "transposed", True, True),
        ((5, 4), "strided", True, False),
        ((0, 4), "contiguous", False, True),
        ((1, 4), "broadcast", True, True),
    ]
    for shape, layout, per_channel, bias in plans:
        x = qarr(rng, shape, U8, layout, scale=0.04, zero_point=120)
        yield SampleInput(
            (x, packed(rng, (3, 4), per_channel, bias), 0.05, 110),
            desc=f"{layout} per_channel={per_channel} bias={bias}",
        )
    x = qarr(rng, (4, 16), U8, scale=0.1, zero_point=0, low=0, high=25)
    yield SampleInput((x, packed(rng, (6, 16)), 0.02, 3), desc="saturating output")


def _linear_oracle(relu):
    def oracle(X: QValue, W_prepack, Y_scale_i, Y_zero_point_i):
        acc = _linear_acc(X, W_prepack)
        return requantize(acc, float(X.scale), W_prepack, Y_scale_i, Y_zero_point_i, U8, relu, -1)

    return oracle


def linear_errors(rng, dtype):
    w = packed(rng, (3, 4))
    yield ErrorInput(SampleInput((qarr(rng, (2, 4), S8), w, 0.1, 0)), TypeError, "quint8")
    yield ErrorInput(SampleInput((arr(rng, (2, 4), ow.float32), w, 0.1, 0)), TypeError, "quantized")
    yield ErrorInput(SampleInput((qarr(rng, (2, 5), U8), w, 0.1, 0)), ValueError, "features")
    yield ErrorInput(SampleInput((qarr(rng, (2, 4), U8), w, 0.1, 256)), ValueError, "zero point")


def choose_qparams(lo, hi, qmin, qmax):
    """fbgemm's dynamic activation parameters, written out again for the oracle."""
    lo, hi = min(lo, 0.0), max(hi, 0.0)
    scale = (hi - lo) / (qmax - qmin)
    if F32(scale) == 0 or np.isinf(F32(1) / F32(scale)):
        scale = 0.1
    from_min, from_max = qmin - lo / scale, qmax - hi / scale
    initial = from_min if abs(qmin) + abs(lo / scale) < abs(qmax) + abs(hi / scale) else from_max
    zp = int(np.clip(np.rint(initial), qmin, qmax)) if qmin <= initial <= qmax else (qmin if initial < qmin else qmax)
    return scale, zp


def dynamic_samples(rng, dtype, device):
    for shape, layout, per_channel, reduce_range in (
        ((2, 4), "contiguous", False, False),
        ((3, 2, 4), "transposed", True, True),
        ((5, 4), "strided", False, True),
    ):
        yield SampleInput(
            (arr(rng, shape, ow.float32, layout), packed(rng, (3, 4), per_channel)),
            {"reduce_range": reduce_range},
            desc=f"{layout} reduce_range={reduce_range}",
        )
    yield SampleInput((arr(rng, (2, 4), ow.float32, domain="pos"), packed(rng, (3, 4))), desc="positive input")


def dynamic_oracle(X, W_prepack, reduce_range=False):
    x = np.asarray(X, np.float64)
    lo, hi = (float(x.min()), float(x.max())) if x.size else (0.0, 0.0)
    scale, zp = choose_qparams(F32(lo).item(), F32(hi).item(), 0, 127 if reduce_range else 255)
    q = np_quantize(x, scale, zp, U8).astype(np.int64)
    acc = (q - zp) @ W_prepack.centered().T
    y = acc * (W_prepack.scales() * scale)
    if W_prepack.bias is not None:
        y = y + W_prepack.bias.astype(np.float64)
    return y.astype(F32)


def unpack_oracle(spec):
    w = spec.ints
    return w, spec.bias


def prepack_samples(kind):
    def samples(rng, dtype, device):
        if kind == "linear":
            for per_channel, bias in ((False, True), (True, False)):
                spec = packed(rng, (3, 4), per_channel, bias)
                yield SampleInput((spec.weight_arr(), _bias_arr(spec)), desc=f"per_channel={per_channel}")
        else:
            dims = 1 if kind == "conv1d" else 2
            spec = packed(rng, (4, 2) + (3,) * dims, True, True, dims)
            yield SampleInput(
                (spec.weight_arr(), _bias_arr(spec), [2] * dims, [1] * dims, [1] * dims, 2),
                desc="per-channel, groups 2",
            )

    return samples


def _bias_arr(spec):
    from ._core import Arr

    return None if spec.bias is None else Arr(spec.bias, ow.float32)


def prepack_oracle(W, B=None, *geometry):
    return {"weight": W.ints, "bias": B}


def unpack_samples(kind):
    def samples(rng, dtype, device):
        dims = {"linear": 0, "conv2d": 2}[kind]
        shape = (3, 4) if dims == 0 else (4, 2, 3, 3)
        for per_channel, bias in ((False, True), (True, False)):
            yield SampleInput((packed(rng, shape, per_channel, bias, dims),), desc=f"per_channel={per_channel}")

    return samples


def unpack_oracle_fn(spec):
    return spec.ints, spec.bias


# -- convolution ------------------------------------------------------------------------------------------


def np_conv(x, w, stride, padding, dilation, groups):
    """Integer convolution (N, C, *spatial) with explicit windows; exact in int64."""
    dims = x.ndim - 2
    pad = [(0, 0), (0, 0)] + [(p, p) for p in padding]
    x = np.pad(x, pad)
    n, c = x.shape[:2]
    o = w.shape[0]
    kernel = w.shape[2:]
    out_sizes = [(x.shape[2 + d] - dilation[d] * (kernel[d] - 1) - 1) // stride[d] + 1 for d in range(dims)]
    out = np.zeros((n, o, *out_sizes), np.int64)
    cg, og = c // groups, o // groups
    for g in range(groups):
        xs = x[:, g * cg : (g + 1) * cg]
        ws = w[g * og : (g + 1) * og]
        for pos in np.ndindex(*out_sizes):
            window = tuple(
                slice(pos[d] * stride[d], pos[d] * stride[d] + dilation[d] * (kernel[d] - 1) + 1, dilation[d])
                for d in range(dims)
            )
            patch = xs[(slice(None), slice(None), *window)]
            value = np.tensordot(patch, ws, axes=(list(range(1, 2 + dims)), list(range(1, 2 + dims))))
            out[(slice(None), slice(g * og, (g + 1) * og), *pos)] = value
    return out


def conv_samples(dims):
    def samples(rng, dtype, device):
        k = (3,) * dims
        plans = [
            ((1, 2) + (6,) * dims, (4, 2) + k, False, True, 1, 0, 1, 1, "contiguous"),
            ((2, 4) + (7,) * dims, (4, 2) + k, True, True, 2, 1, 1, 2, "transposed"),
            ((1, 2) + (8,) * dims, (3, 2) + k, True, False, 1, 2, 2, 1, "strided"),
        ]
        for xshape, wshape, per_channel, bias, stride, padding, dilation, groups, layout in plans:
            spec = packed(
                rng, wshape, per_channel, bias, dims, (stride,) * dims, (padding,) * dims, (dilation,) * dims, groups
            )
            x = qarr(rng, xshape, U8, layout, scale=0.04, zero_point=130)
            yield SampleInput(
                (x, spec, 0.1, 120), desc=f"stride {stride} padding {padding} dilation {dilation} groups {groups}"
            )

    return samples


def _conv_oracle(relu):
    def oracle(qx: QValue, packed_weight, output_scale, output_zero_point):
        spec = packed_weight
        acc = np_conv(qx.ints - qx.zero_point, spec.centered(), spec.stride, spec.padding, spec.dilation, spec.groups)
        return requantize(acc, float(qx.scale), spec, output_scale, output_zero_point, U8, relu, 1)

    return oracle


def conv_errors(dims):
    def errors(rng, dtype):
        spec = packed(rng, (4, 2) + (3,) * dims, dims=dims)
        yield ErrorInput(SampleInput((qarr(rng, (1, 2) + (5,) * dims, S8), spec, 0.1, 0)), TypeError, "quint8")
        yield ErrorInput(SampleInput((qarr(rng, (1, 3) + (5,) * dims, U8), spec, 0.1, 0)), ValueError, "qx")
        other = packed(rng, (4, 2) + (3,) * (3 - dims), dims=3 - dims)
        yield ErrorInput(SampleInput((qarr(rng, (1, 2) + (5,) * dims, U8), other, 0.1, 0)), ValueError, "conv")

    return errors


# -- matmul, pooling, cat, layer norm --------------------------------------------------------------


def matmul_samples(rng, dtype, device):
    for sa, sb, layout, qd in (
        ((2, 3), (3, 4), "contiguous", U8),
        ((2, 3, 4), (2, 4, 2), "transposed", S8),
        ((4, 5), (5, 3), "strided", S8),
        ((0, 3), (3, 2), "contiguous", U8),
    ):
        yield SampleInput(
            (qarr(rng, sa, qd, layout, scale=0.05), qarr(rng, sb, qd, scale=0.04), 0.02, 128 if qd is U8 else 0),
            desc=f"{qd.name} {layout}",
        )


def matmul_oracle(qa: QValue, qb: QValue, scale, zero_point):
    acc = np.matmul(qa.ints - qa.zero_point, qb.ints - qb.zero_point)
    lo, hi = QRANGE[qa.dtype]
    v = acc.astype(np.float64) * (float(qa.scale) * float(qb.scale) / scale)
    return np.clip(np.rint(v) + zero_point, lo, hi).astype(STORAGE[qa.dtype].numpy)


def pool_samples(rng, dtype, device):
    yield SampleInput((qarr(rng, (1, 2, 4, 4), U8), [2, 2]), desc="2x2")
    yield SampleInput((qarr(rng, (2, 1, 5, 5), S8, "transposed"), [3, 3], [2, 2], [1, 1]), desc="padding, stride")
    yield SampleInput((qarr(rng, (2, 6, 7), U8, "strided"), [2, 3], [1, 2], [0, 1], [2, 1], True), desc="ceil")


def np_max_pool(x, kernel, stride=(), padding=(0,), dilation=(1,), ceil_mode=False):
    """Max pooling of integers (padding never wins) over the last two dims."""
    stride = list(stride) or list(kernel)
    padding = list(padding) * (2 // len(padding))
    dilation = list(dilation) * (2 // len(dilation))
    h, w = x.shape[-2:]
    sizes = []
    for d, n in enumerate((h, w)):
        span = n + 2 * padding[d] - dilation[d] * (kernel[d] - 1) - 1
        o = (-(-span // stride[d]) if ceil_mode else span // stride[d]) + 1
        if ceil_mode and (o - 1) * stride[d] >= n + padding[d]:
            o -= 1
        sizes.append(o)
    out = np.zeros(x.shape[:-2] + tuple(sizes), x.dtype)
    for i in range(sizes[0]):
        for j in range(sizes[1]):
            rows = [i * stride[0] - padding[0] + a * dilation[0] for a in range(kernel[0])]
            cols = [j * stride[1] - padding[1] + b * dilation[1] for b in range(kernel[1])]
            rows, cols = [r for r in rows if 0 <= r < h], [c for c in cols if 0 <= c < w]
            out[..., i, j] = x[..., rows, :][..., cols].max(axis=(-1, -2))
    return out


def pool_oracle(qx: QValue, kernel_size, *args):
    return np_max_pool(qx.ints, kernel_size, *args).astype(STORAGE[qx.dtype].numpy)


def cat_samples(rng, dtype, device):
    a, b = qarr(rng, (2, 3), U8, scale=0.05), qarr(rng, (1, 3), U8, "transposed", scale=0.05)
    yield SampleInput(([a, b], 0, None, None), desc="same parameters: integers concatenated")
    yield SampleInput(
        ([qarr(rng, (2, 3), S8, scale=0.05), qarr(rng, (2, 2), S8, scale=0.02)], 1, 0.03, 2), desc="requantized"
    )
    yield SampleInput(
        ([qarr(rng, (2, 3), U8, scale=0.1), qarr(rng, (2, 3), U8, scale=0.02)], 0, None, None),
        desc="the first input's parameters",
    )


def cat_oracle(qx, dim, scale=None, zero_point=None):
    scale = float(qx[0].scale) if scale is None else scale
    zero_point = int(qx[0].zero_point) if zero_point is None else zero_point
    if all(float(q.scale) == scale and int(q.zero_point) == zero_point for q in qx):
        return np.concatenate([q.ints for q in qx], dim).astype(STORAGE[qx[0].dtype].numpy)
    return np_quantize(np.concatenate([q.dq() for q in qx], dim), scale, zero_point, qx[0].dtype)


def layer_norm_samples(rng, dtype, device):
    yield SampleInput(
        (qarr(rng, (2, 3), U8), [3], arr(rng, (3,), ow.float32), arr(rng, (3,), ow.float32), 1e-5, 0.05, 128),
        desc="affine",
    )
    yield SampleInput((qarr(rng, (2, 3, 4), S8, "transposed"), [3, 4], None, None, 1e-5, 0.03, 0), desc="2 dims")


def layer_norm_oracle(input: QValue, normalized_shape, weight, bias, eps, output_scale, output_zero_point):
    x = input.dq().astype(np.float64)
    axes = tuple(range(x.ndim - len(normalized_shape), x.ndim))
    mean = x.mean(axis=axes, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=axes, keepdims=True)
    y = (x - mean) / np.sqrt(var + eps)
    if weight is not None:
        y = y * weight
    if bias is not None:
        y = y + bias
    return np_quantize(y.astype(F32), output_scale, output_zero_point, input.dtype)


# -- embedding bag ------------------------------------------------------------------------------------------


def np_byte_prepack(w):
    w = np.asarray(w, F32)
    lo, hi = w.min(axis=1, keepdims=True), w.max(axis=1, keepdims=True)
    rng = (hi - lo).astype(F32)
    scale = (rng / F32(255)).astype(F32)
    inv = (F32(255) / (rng + F32(1e-8))).astype(F32)
    q = np.clip(np.rint((w - lo) * inv), 0, 255).astype(np.uint8)
    tail = np.concatenate([scale, lo], axis=1).astype(F32).view(np.uint8)
    return np.concatenate([q, tail], axis=1)


def prepack_byte_samples(rng, dtype, device):
    yield SampleInput((arr(rng, (5, 4), ow.float32),), desc="5 rows")
    yield SampleInput((arr(rng, (3, 6), ow.float32, "transposed"),), desc="transposed")


def bag_samples(rng, dtype, device):
    from ._core import Arr

    table = Arr(np_byte_prepack(rng.uniform(-1, 1, (6, 4))), ow.uint8)
    yield SampleInput(
        (table, Arr(np.array([0, 2, 4, 1, 5]), ow.int64), Arr(np.array([0, 2, 2]), ow.int64)),
        desc="sum with an empty bag",
    )
    yield SampleInput(
        (table, Arr(np.array([3, 3, 1, 0]), ow.int32), Arr(np.array([0, 1]), ow.int32)), {"mode": 1}, desc="mean"
    )
    yield SampleInput(
        (table, Arr(np.array([0, 1, 2, 3]), ow.int64), Arr(np.array([0, 2, 4]), ow.int64)),
        {"include_last_offset": True, "per_sample_weights": Arr(np.array([1, 2, 3, 4.0]), ow.float32)},
        desc="last offset included, weights",
    )


def bag_oracle(
    weight,
    indices,
    offsets=None,
    scale_grad_by_freq=False,
    mode=0,
    pruned_weights=False,
    per_sample_weights=None,
    compressed_indices_mapping=None,
    include_last_offset=False,
):
    d = weight.shape[1] - 8
    tail = np.ascontiguousarray(weight[:, d:]).view(F32)
    rows = weight[:, :d].astype(F32) * tail[:, :1] + tail[:, 1:2]
    starts = [int(v) for v in offsets]
    n = len(indices)
    if include_last_offset:
        n, starts = starts[-1], starts[:-1]
    out = []
    for a, b in zip(starts, starts[1:] + [n]):
        picked = rows[indices[a:b]].astype(np.float64)
        if per_sample_weights is not None:
            picked = picked * per_sample_weights[a:b, None]
        total = picked.sum(axis=0) if b > a else np.zeros(d)
        out.append(total / (b - a) if mode == 1 and b > a else total)
    return np.array(out, F32).reshape(len(out), d)


register(
    OpInfo("quantized::add", binary_samples, _binary_oracle(np.add), error_inputs=binary_errors, data_dependent=True),
    OpInfo("quantized::add_relu", binary_samples, _binary_oracle(np.add, relu=True), data_dependent=True),
    OpInfo("quantized::mul", binary_samples, _binary_oracle(np.multiply), data_dependent=True),
    OpInfo("quantized::linear_prepack", prepack_samples("linear"), prepack_oracle, data_dependent=True),
    OpInfo("quantized::linear_unpack", unpack_samples("linear"), unpack_oracle_fn, data_dependent=True),
    OpInfo("quantized::linear", linear_samples, _linear_oracle(False), error_inputs=linear_errors, data_dependent=True),
    OpInfo("quantized::linear_relu", linear_samples, _linear_oracle(True), data_dependent=True),
    OpInfo(
        "quantized::linear_dynamic",
        dynamic_samples,
        dynamic_oracle,
        data_dependent=True,
        tolerances={"float32": (1e-5, 1e-5)},
    ),
    OpInfo("quantized::conv1d_prepack", prepack_samples("conv1d"), prepack_oracle, data_dependent=True),
    OpInfo("quantized::conv2d_prepack", prepack_samples("conv2d"), prepack_oracle, data_dependent=True),
    OpInfo("quantized::conv2d_unpack", unpack_samples("conv2d"), unpack_oracle_fn, data_dependent=True),
    OpInfo("quantized::conv1d", conv_samples(1), _conv_oracle(False), error_inputs=conv_errors(1), data_dependent=True),
    OpInfo("quantized::conv1d_relu", conv_samples(1), _conv_oracle(True), data_dependent=True),
    OpInfo("quantized::conv2d", conv_samples(2), _conv_oracle(False), error_inputs=conv_errors(2), data_dependent=True),
    OpInfo("quantized::conv2d_relu", conv_samples(2), _conv_oracle(True), data_dependent=True),
    OpInfo("quantized::matmul", matmul_samples, matmul_oracle, data_dependent=True),
    OpInfo("quantized::max_pool2d", pool_samples, pool_oracle, data_dependent=True),
    OpInfo("quantized::cat", cat_samples, cat_oracle, data_dependent=True),
    OpInfo("quantized::layer_norm", layer_norm_samples, layer_norm_oracle, tolerances=ONE_STEP, data_dependent=True),
    OpInfo("quantized::embedding_bag_byte_prepack", prepack_byte_samples, np_byte_prepack, data_dependent=True),
    OpInfo(
        "quantized::embedding_bag_byte_rowwise_offsets",
        bag_samples,
        bag_oracle,
        data_dependent=True,
        tolerances={"float32": (1e-5, 1e-5)},
    ),
)
