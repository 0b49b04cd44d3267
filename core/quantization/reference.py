"""Reference kernels of the quantized ops, for every backend: plain functions, arguments in schema order.

Engines call these to fall back (``reference.linear(X, W_prepack, scale, zero_point)``).
Everything is written with canonical ops and prims, so it runs wherever the prims do.

Formulas (``rhe`` = round half to even; ``q*`` integer values, ``s*`` scales, ``z*`` zero points):

- elementwise ops (add, add_relu, mul, hardswish, sigmoid, layer_norm, cat with new
  parameters): dequantize to float32, compute in float32, quantize with the output
  parameters (``clamp(rhe(y / s) + z, qmin, qmax)``);
- relu, max pooling, cat with equal parameters: on the integers (exact);
- avg pooling: ``clamp(rhe(mean(q - z)) + z)`` with the input's parameters;
- linear, conv, matmul: the accumulator ``acc = sum((qx - zx) * (qw - zw))`` is exact
  (computed in float64, which holds these integer sums exactly), then
  ``q = clamp(zy + rhe(acc * (sx * sw / sy) + bias / sy), qmin, qmax)`` in float64, with
  ``sw`` per output channel for per-channel weights; ``_relu`` variants clamp below at ``zy``;
- linear_dynamic: the activation is quantized on the fly to quint8 with
  :func:`choose_qparams` over ``[min(x, 0), max(x, 0)]`` (qmax 127 with ``reduce_range``),
  and the output is float32 ``acc * sx * sw + bias``.

PyTorch's vectorised kernels multiply by ``1 / scale`` and requantize in float32, so an
engine following them may differ from these results by one quantization step where a
value lies on a rounding boundary.
"""

from __future__ import annotations

import math

import numpy as np

from .. import _dtype
from .._ops import canonical as ops
from .._ops import prims
from .._quantized import QParams, int_view, make_quantized, qparams_of, qrange
from .._tensor import Tensor
from ._packed import ConvPackedParams, LinearPackedParams

F32, F64 = _dtype.float32, _dtype.float64


# -- helpers ------------------------------------------------------------------------------------------------


def _q(t, op: str, arg: str, dtypes=None, per_tensor: bool = True) -> QParams:
    """``t``'s qparams after checking it is quantized (with one of ``dtypes``; per-tensor when asked)."""
    qp = qparams_of(t, op, arg)
    if dtypes is not None and t.dtype not in dtypes:
        names = " or ".join(d.name for d in dtypes)
        raise TypeError(f"{op}: argument '{arg}' must be {names}, got {t.dtype}")
    if per_tensor and qp.per_channel_scheme:
        raise ValueError(f"{op}: argument '{arg}' must be quantized per tensor, got {qp.qscheme.name}")
    return qp


def _check_out(op: str, scale, zero_point, dtype) -> None:
    if not (isinstance(scale, (int, float)) and math.isfinite(scale) and scale > 0):
        raise ValueError(f"{op}: the output scale must be a positive finite number, got {scale}")
    lo, hi = qrange(dtype)
    if not lo <= zero_point <= hi:
        raise ValueError(f"{op}: the output zero point must be in [{lo}, {hi}] for {dtype.name}, got {zero_point}")


def _same_device(op: str, *tensors) -> None:
    devices = {str(t.device) for t in tensors if t is not None}
    if len(devices) > 1:
        raise RuntimeError(f"{op}: expected all tensors on one device, got {', '.join(sorted(devices))}")


def quantize_like(x: Tensor, like: Tensor) -> Tensor:
    """Float ``x`` quantized with the dtype and parameters of quantized ``like`` (per-tensor or per-channel)."""
    qp = like._qparams
    if qp.per_channel_scheme:
        scales = _list_tensor(qp.scales, F64, x.device)
        zps = _list_tensor(qp.zero_points, _dtype.int64, x.device)
        return ops.quantize_per_channel(x, scales, zps, qp.axis, like.dtype)
    return ops.quantize_per_tensor(x, qp.scale, qp.zero_point, like.dtype)


def _list_tensor(values, dtype, device) -> Tensor:
    from .._factories import tensor

    return tensor(list(values), dtype=dtype, device=device)


def _requantize_float(y: Tensor, scale: float, zero_point: int, dtype, relu: bool = False) -> Tensor:
    """Quantize float ``y`` per tensor; ``relu`` clamps the integers below at the zero point."""
    q = ops.quantize_per_tensor(y, scale, zero_point, dtype)
    return _relu_ints(q) if relu else q


def _relu_ints(q: Tensor) -> Tensor:
    """``max(q, zero_point)`` on the integers (relu of a quantized tensor; parameters kept)."""
    qp = q._qparams
    ints = int_view(q)
    if qp.per_channel_scheme:
        shape = [1] * q.ndim
        shape[qp.axis] = len(qp.zero_points)
        zp = ops.reshape(_list_tensor(qp.zero_points, ints.dtype, q.device), shape)
        out = ops.maximum(ints, ops.expand(zp, list(q.shape)))
    else:
        out = ops.clamp_min(ints, qp.zero_point)
    return make_quantized(ops.to(out, ints.dtype), qp, q.dtype)


def _centered(q: Tensor, dtype=F64) -> Tensor:
    """``q - zero_point`` as ``dtype`` (exact: integers in float64), per-channel along the axis."""
    qp = q._qparams
    ints = ops.to(int_view(q), dtype)
    if qp.per_channel_scheme:
        shape = [1] * q.ndim
        shape[qp.axis] = len(qp.zero_points)
        return ops.sub(ints, ops.reshape(_list_tensor(qp.zero_points, dtype, q.device), shape))
    return ops.sub(ints, qp.zero_point)


def _weight_scales(w: Tensor, device) -> Tensor | float:
    qp = w._qparams
    return _list_tensor(qp.scales, F64, device) if qp.per_channel_scheme else qp.scale


def _requantize_acc(acc, sx, w, bias, out_scale, out_zp, dtype, relu, channel_shape) -> Tensor:
    """``clamp(zy + rhe(acc * (sx * sw / sy) + bias / sy))`` in float64 (``channel_shape`` broadcasts sw and bias)."""
    sw = _weight_scales(w, acc.device)
    if isinstance(sw, Tensor):
        sw = ops.reshape(sw, channel_shape)
    v = ops.mul(acc, ops.div(ops.mul(sw, sx), out_scale) if isinstance(sw, Tensor) else sx * sw / out_scale)
    if bias is not None:
        v = ops.add(v, ops.reshape(ops.div(ops.to(bias, F64), out_scale), channel_shape))
    lo, hi = qrange(dtype)
    q = ops.clamp(ops.add(ops.round(v), out_zp), out_zp if relu else lo, hi)
    storage = int_view_dtype(dtype)
    return make_quantized(ops.to(q, storage), QParams.per_tensor(out_scale, out_zp), dtype)


def int_view_dtype(dtype):
    """The integer storage dtype of quantized ``dtype``."""
    from .._quantized import STORAGE_DTYPE

    return STORAGE_DTYPE[dtype]


# -- elementwise -----------------------------------------------------------------------------------


def _binary(op: str, qa, qb, scale, zero_point, fn, relu=False):
    qpa = _q(qa, op, "qa")
    _q(qb, op, "qb")
    if qa.dtype is not qb.dtype:
        raise TypeError(f"{op}: 'qa' and 'qb' must have the same quantized dtype, got {qa.dtype} and {qb.dtype}")
    del qpa
    _same_device(op, qa, qb)
    _check_out(op, scale, zero_point, qa.dtype)
    y = fn(ops.dequantize(qa), ops.dequantize(qb))
    if relu:
        y = ops.relu(y)
    return _requantize_float(y, scale, zero_point, qa.dtype)


def add(qa, qb, scale, zero_point):
    """``quantized::add``: ``quantize(dequantize(qa) + dequantize(qb), scale, zero_point)``."""
    return _binary("quantized::add", qa, qb, scale, zero_point, ops.add)


def add_relu(qa, qb, scale, zero_point):
    """``quantized::add_relu``: ``quantize(relu(dequantize(qa) + dequantize(qb)))``."""
    return _binary("quantized::add_relu", qa, qb, scale, zero_point, ops.add, relu=True)


def mul(qa, qb, scale, zero_point):
    """``quantized::mul``: ``quantize(dequantize(qa) * dequantize(qb), scale, zero_point)``."""
    return _binary("quantized::mul", qa, qb, scale, zero_point, ops.mul)


def relu(self):
    """``relu`` of a quantized tensor: ``max(q, zero_point)``, parameters kept."""
    qparams_of(self, "relu", "self")
    return _relu_ints(self)


def hardswish(self):
    """``hardswish`` of a quantized tensor, requantized with the input's parameters."""
    qparams_of(self, "hardswish", "self")
    return quantize_like(ops.hardswish(ops.dequantize(self)), self)


def sigmoid(self):
    """``sigmoid`` of a quantized tensor with PyTorch's fixed output parameters.

    quint8: scale 1/256, zero point 0; qint8: 1/256, -128; qint32: 2**-32, 0.
    """
    qparams_of(self, "sigmoid", "self")
    scale, zp = {_dtype.quint8: (1 / 256, 0), _dtype.qint8: (1 / 256, -128), _dtype.qint32: (2.0**-32, 0)}[self.dtype]
    return ops.quantize_per_tensor(ops.sigmoid(ops.dequantize(self)), scale, zp, self.dtype)


# -- linear ----------------------------------------------------------------------------------------


def linear_prepack(W, B=None):
    """``quantized::linear_prepack``: a :class:`LinearPackedParams` of qint8 ``W`` and float ``B``."""
    return LinearPackedParams(W, B)


def linear_unpack(W_prepack):
    """``quantized::linear_unpack``: ``(weight, bias)``."""
    _packed("quantized::linear_unpack", W_prepack, LinearPackedParams)
    return W_prepack.unpack()


def _packed(op: str, params, cls):
    if not isinstance(params, cls):
        raise TypeError(f"{op}: expected {cls.__name__} (from the matching prepack op), got {type(params).__name__}")
    return params


def _linear_acc(op: str, X, params) -> Tensor:
    """``(qx - zx) @ (qw - zw)^T`` in float64 (exact), shape ``[..., out_features]``."""
    w = params.weight_on(X.device)
    if X.ndim < 1 or X.shape[-1] != params.in_features:
        raise ValueError(f"{op}: 'X' must have {params.in_features} features in its last dim, got {list(X.shape)}")
    x2 = ops.reshape(_centered(X), [-1, params.in_features])
    acc = prims.mm(x2, ops.contiguous(ops.t(_centered(w))))
    return ops.reshape(acc, [*X.shape[:-1], params.out_features])


def _linear(op: str, X, W_prepack, Y_scale_i, Y_zero_point_i, relu: bool):
    params = _packed(op, W_prepack, LinearPackedParams)
    qx = _q(X, op, "X", (_dtype.quint8,))
    _check_out(op, Y_scale_i, Y_zero_point_i, _dtype.quint8)
    acc = _linear_acc(op, X, params)
    bias = params.bias_on(X.device)
    return _requantize_acc(acc, qx.scale, params.weight, bias, Y_scale_i, Y_zero_point_i, _dtype.quint8, relu, [-1])


def linear(X, W_prepack, Y_scale_i, Y_zero_point_i):
    """``quantized::linear``: quint8 ``X`` times the packed qint8 weight, plus bias, requantized to quint8."""
    return _linear("quantized::linear", X, W_prepack, Y_scale_i, Y_zero_point_i, False)


def linear_relu(X, W_prepack, Y_scale_i, Y_zero_point_i):
    """``quantized::linear_relu``: :func:`linear` followed by relu (clamped below at the output zero point)."""
    return _linear("quantized::linear_relu", X, W_prepack, Y_scale_i, Y_zero_point_i, True)


def choose_qparams(min_val: float, max_val: float, qmin: int, qmax: int) -> tuple[float, int]:
    """fbgemm's ChooseQuantizationParams: ``(scale, zero_point)`` covering ``[min(min_val, 0), max(max_val, 0)]``.

    ``scale = (max - min) / (qmax - qmin)`` (0.1 when that is 0 or its float32 inverse overflows); the
    zero point is taken from whichever end has the smaller error, clamped to the range and rounded half to even.
    """
    lo, hi = min(float(min_val), 0.0), max(float(max_val), 0.0)
    scale = (hi - lo) / (qmax - qmin)
    if np.float32(scale) == 0 or not np.isfinite(np.float32(1.0) / np.float32(scale)):
        scale = 0.1
    zp_from_min = qmin - lo / scale
    zp_from_max = qmax - hi / scale
    err_min = abs(qmin) + abs(lo / scale)
    err_max = abs(qmax) + abs(hi / scale)
    initial = zp_from_min if err_min < err_max else zp_from_max
    zp = qmin if initial < qmin else qmax if initial > qmax else int(np.rint(initial))
    return float(scale), int(zp)


def linear_dynamic(X, W_prepack, reduce_range=False):
    """``quantized::linear_dynamic``: float ``X`` quantized on the fly (quint8), float32 output."""
    op = "quantized::linear_dynamic"
    params = _packed(op, W_prepack, LinearPackedParams)
    if not isinstance(X, Tensor) or X.is_quantized or X.dtype not in (F32, F64, _dtype.float16, _dtype.bfloat16):
        raise TypeError(f"{op}: argument 'X' must be a float tensor, got {getattr(X, 'dtype', type(X).__name__)}")
    if X.device.type == "meta":
        raise NotImplementedError(f"{op}: cannot run on the meta device: the activation's range is data")
    if X.numel():
        lo, hi = float(ops.amin(X).item()), float(ops.amax(X).item())
    else:
        lo = hi = 0.0
    scale, zp = choose_qparams(lo, hi, 0, 127 if reduce_range else 255)
    qx = ops.quantize_per_tensor(X, scale, zp, _dtype.quint8)
    acc = _linear_acc(op, qx, params)
    w = params.weight
    sw = _weight_scales(w, X.device)
    y = ops.mul(acc, ops.mul(sw, scale) if isinstance(sw, Tensor) else scale * sw)
    if params.bias is not None:
        y = ops.add(y, ops.to(params.bias_on(X.device), F64))
    return ops.to(y, F32)


# -- convolution -----------------------------------------------------------------------------------


def conv_prepack(weight, bias, stride, padding, dilation, groups, dims):
    """A :class:`ConvPackedParams` (``dims`` spatial dims)."""
    return ConvPackedParams(weight, bias, stride, padding, dilation, groups, dims=dims)


def conv1d_prepack(weight, bias, stride, padding, dilation, groups):
    """``quantized::conv1d_prepack``."""
    return conv_prepack(weight, bias, stride, padding, dilation, groups, 1)


def conv2d_prepack(weight, bias, stride, padding, dilation, groups):
    """``quantized::conv2d_prepack``."""
    return conv_prepack(weight, bias, stride, padding, dilation, groups, 2)


def conv_unpack(packed_weights):
    """``quantized::conv2d_unpack`` / ``conv1d_unpack``: ``(weight, bias)``."""
    _packed("quantized::conv2d_unpack", packed_weights, ConvPackedParams)
    return packed_weights.unpack()


def _conv(op: str, qx, packed_weight, output_scale, output_zero_point, dims: int, relu: bool):
    params = _packed(op, packed_weight, ConvPackedParams)
    if params.dims != dims:
        raise ValueError(f"{op}: the packed weight is for conv{params.dims}d, not conv{dims}d")
    qp = _q(qx, op, "qx", (_dtype.quint8,))
    w = params.weight_on(qx.device)
    if qx.ndim != dims + 2 or qx.shape[1] != w.shape[1] * params.groups:
        raise ValueError(
            f"{op}: 'qx' must be [N, {w.shape[1] * params.groups}, {', '.join(['L'] * dims)}], got {list(qx.shape)}"
        )
    _check_out(op, output_scale, output_zero_point, _dtype.quint8)
    acc = prims.convolution(
        _centered(qx),
        _centered(w),
        None,
        list(params.stride),
        list(params.padding),
        list(params.dilation),
        False,
        list(params.output_padding),
        params.groups,
    )
    shape = [-1] + [1] * dims
    return _requantize_acc(
        acc, qp.scale, w, params.bias_on(qx.device), output_scale, output_zero_point, _dtype.quint8, relu, shape
    )


def conv1d(qx, packed_weight, output_scale, output_zero_point):
    """``quantized::conv1d``: quint8 ``[N, C, L]`` input, packed qint8 weight, quint8 output."""
    return _conv("quantized::conv1d", qx, packed_weight, output_scale, output_zero_point, 1, False)


def conv1d_relu(qx, packed_weight, output_scale, output_zero_point):
    """``quantized::conv1d_relu``."""
    return _conv("quantized::conv1d_relu", qx, packed_weight, output_scale, output_zero_point, 1, True)


def conv2d(qx, packed_weight, output_scale, output_zero_point):
    """``quantized::conv2d``: quint8 ``[N, C, H, W]`` input, packed qint8 weight, quint8 output."""
    return _conv("quantized::conv2d", qx, packed_weight, output_scale, output_zero_point, 2, False)


def conv2d_relu(qx, packed_weight, output_scale, output_zero_point):
    """``quantized::conv2d_relu``."""
    return _conv("quantized::conv2d_relu", qx, packed_weight, output_scale, output_zero_point, 2, True)


# -- matmul ----------------------------------------------------------------------------------------


def matmul(qa, qb, scale, zero_point):
    """``quantized::matmul``: ``(qa - za) @ (qb - zb)`` exactly, requantized with ``sa * sb / scale``."""
    op = "quantized::matmul"
    pa = _q(qa, op, "qa")
    pb = _q(qb, op, "qb")
    if qa.dtype is not qb.dtype:
        raise TypeError(f"{op}: 'qa' and 'qb' must have the same quantized dtype, got {qa.dtype} and {qb.dtype}")
    if qa.ndim < 2 or qb.ndim < 2:
        raise ValueError(f"{op}: 'qa' and 'qb' need at least 2 dims, got {list(qa.shape)} and {list(qb.shape)}")
    _same_device(op, qa, qb)
    _check_out(op, scale, zero_point, qa.dtype)
    acc = ops.matmul(_centered(qa), _centered(qb))
    lo, hi = qrange(qa.dtype)
    v = ops.mul(acc, pa.scale * pb.scale / scale)
    q = ops.clamp(ops.add(ops.round(v), zero_point), lo, hi)
    return make_quantized(ops.to(q, int_view_dtype(qa.dtype)), QParams.per_tensor(scale, zero_point), qa.dtype)


# -- pooling ---------------------------------------------------------------------------------------


def _pool_input(op: str, qx):
    _q(qx, op, "qx")
    if qx.ndim not in (3, 4):
        raise ValueError(f"{op}: expected a 3-dim or 4-dim input, got {list(qx.shape)}")


def _pair(op: str, name: str, value, default=None):
    if value is None or (isinstance(value, (list, tuple)) and len(value) == 0):
        value = default
    value = tuple(value) if isinstance(value, (list, tuple)) else (value, value)
    if len(value) == 1:
        value = value * 2
    if len(value) != 2:
        raise ValueError(f"{op}: argument '{name}' must be 1 or 2 ints, got {list(value)}")
    return list(value)


def max_pool2d(qx, kernel_size, stride=(), padding=(0,), dilation=(1,), ceil_mode=False):
    """Max pooling of a quantized tensor on its integers (parameters kept)."""
    op = "quantized::max_pool2d"
    _pool_input(op, qx)
    k = _pair(op, "kernel_size", kernel_size)
    s = _pair(op, "stride", stride, k)
    p, d = _pair(op, "padding", padding), _pair(op, "dilation", dilation)
    values = prims.max_pool(ops.to(int_view(qx), F64), k, s, p, d, ceil_mode)[0]
    return make_quantized(ops.to(values, int_view_dtype(qx.dtype)), qx._qparams, qx.dtype)


def _from_centered_mean(mean: Tensor, qx) -> Tensor:
    qp = qx._qparams
    lo, hi = qrange(qx.dtype)
    q = ops.clamp(ops.add(ops.round(mean), qp.zero_point), lo, hi)
    return make_quantized(ops.to(q, int_view_dtype(qx.dtype)), qp, qx.dtype)


def avg_pool2d(
    qx, kernel_size, stride=(), padding=(0,), ceil_mode=False, count_include_pad=True, divisor_override=None
):
    """Average pooling of a quantized tensor: ``rhe(mean(q - z)) + z`` with the input's parameters."""
    op = "avg_pool2d"
    _pool_input(op, qx)
    k = _pair(op, "kernel_size", kernel_size)
    s, p = _pair(op, "stride", stride, k), _pair(op, "padding", padding)
    mean = prims.avg_pool(_centered(qx), k, s, p, ceil_mode, count_include_pad, divisor_override)
    return _from_centered_mean(mean, qx)


def adaptive_avg_pool2d(qx, output_size):
    """Adaptive average pooling of a quantized tensor (input's parameters, ``rhe`` of the mean)."""
    op = "adaptive_avg_pool2d"
    _pool_input(op, qx)
    size = _pair(op, "output_size", output_size)
    return _from_centered_mean(prims.adaptive_avg_pool(_centered(qx), size), qx)


# -- cat, layer_norm -------------------------------------------------------------------------------


def cat(qx, dim, scale=None, zero_point=None):
    """``quantized::cat``: concatenate, requantized to ``scale``/``zero_point`` (default: the first input's)."""
    op = "quantized::cat"
    if not qx:
        raise ValueError(f"{op}: argument 'qx' must be a non-empty list of quantized tensors")
    params = [_q(t, op, "qx") for t in qx]
    if any(t.dtype is not qx[0].dtype for t in qx):
        raise TypeError(f"{op}: every tensor of 'qx' must have the same quantized dtype")
    _same_device(op, *qx)
    scale = params[0].scale if scale is None else scale
    zero_point = params[0].zero_point if zero_point is None else zero_point
    _check_out(op, scale, zero_point, qx[0].dtype)
    out = QParams.per_tensor(scale, zero_point)
    if all(p.scale == out.scale and p.zero_point == out.zero_point for p in params):
        return make_quantized(ops.cat([int_view(t) for t in qx], dim), out, qx[0].dtype)
    y = ops.cat([ops.dequantize(t) for t in qx], dim)
    return ops.quantize_per_tensor(y, scale, zero_point, qx[0].dtype)


def layer_norm(input, normalized_shape, weight, bias, eps, output_scale, output_zero_point):
    """``quantized::layer_norm``: layer norm of the dequantized input in float32, quantized to the output parameters."""
    op = "quantized::layer_norm"
    _q(input, op, "input")
    _check_out(op, output_scale, output_zero_point, input.dtype)
    shape = list(normalized_shape)
    if not shape or list(input.shape[-len(shape) :]) != shape:
        raise ValueError(
            f"{op}: 'normalized_shape' {shape} does not match the input's trailing dims {list(input.shape)}"
        )
    x = ops.dequantize(input)
    dims = list(range(input.ndim - len(shape), input.ndim))
    mean = ops.mean(x, dims, keepdim=True)
    centered = ops.sub(x, mean)
    var = ops.mean(ops.mul(centered, centered), dims, keepdim=True)
    y = ops.mul(centered, ops.rsqrt(ops.add(var, eps)))
    if weight is not None:
        y = ops.mul(y, ops.to(weight, F32))
    if bias is not None:
        y = ops.add(y, ops.to(bias, F32))
    return ops.quantize_per_tensor(y, output_scale, output_zero_point, input.dtype)


# -- embedding bag (8-bit rowwise) -----------------------------------------------------------------


def embedding_bag_byte_prepack(weight):
    """``quantized::embedding_bag_byte_prepack``: float ``[N, D]`` → uint8 ``[N, D + 8]``.

    Each row holds ``rhe((x - min) * 255 / (max - min + 1e-8))`` followed by the float32 scale
    ``(max - min) / 255`` and bias ``min`` as 8 bytes (fbgemm's fused 8-bit rowwise format).
    """
    op = "quantized::embedding_bag_byte_prepack"
    if not isinstance(weight, Tensor) or weight.is_quantized or not weight.dtype.is_floating_point:
        raise TypeError(f"{op}: argument 'weight' must be a float tensor")
    if weight.ndim != 2:
        raise ValueError(f"{op}: argument 'weight' must be 2-dim, got {list(weight.shape)}")
    w = ops.to(weight, F32)
    if weight.shape[1] == 0:
        lo = hi = ops.zeros([weight.shape[0], 1], dtype=F32, device=weight.device)
    else:
        lo, hi = ops.amin(w, [1], True), ops.amax(w, [1], True)
    rng = ops.sub(hi, lo)
    scale = ops.div(rng, 255.0)
    inverse = ops.div(ops.full_like(rng, 255.0), ops.add(rng, 1e-8))
    q = ops.to(ops.clamp(ops.round(ops.mul(ops.sub(w, lo), inverse)), 0, 255), _dtype.uint8)
    tail = prims.view_of_dtype(ops.contiguous(ops.cat([scale, lo], 1)), _dtype.uint8)
    return ops.cat([q, tail], 1)


def _rows(weight) -> Tensor:
    """Dequantized float32 rows of a byte-prepacked embedding table."""
    d = weight.shape[1] - 8
    q = ops.to(ops.narrow(weight, 1, 0, d), F32)
    tail = prims.view_of_dtype(ops.contiguous(ops.narrow(weight, 1, d, 8)), F32)
    scale, bias = ops.narrow(tail, 1, 0, 1), ops.narrow(tail, 1, 1, 1)
    return ops.add(ops.mul(q, scale), bias)


def embedding_bag_byte_rowwise_offsets(
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
    """``quantized::embedding_bag_byte_rowwise_offsets``: sum (mode 0) or mean (mode 1) of dequantized rows per bag."""
    op = "quantized::embedding_bag_byte_rowwise_offsets"
    if weight.is_quantized or weight.dtype is not _dtype.uint8 or weight.ndim != 2 or weight.shape[1] < 8:
        raise TypeError(f"{op}: argument 'weight' must be a uint8 [N, D + 8] table from embedding_bag_byte_prepack")
    if indices.dtype not in (_dtype.int32, _dtype.int64):
        raise TypeError(f"{op}: argument 'indices' must be int32 or int64, got {indices.dtype}")
    if mode not in (0, 1):
        raise ValueError(f"{op}: argument 'mode' must be 0 (sum) or 1 (mean), got {mode}")
    if pruned_weights or compressed_indices_mapping is not None:
        raise NotImplementedError(f"{op}: pruned weights are not supported")
    if per_sample_weights is not None and mode != 0:
        raise ValueError(f"{op}: 'per_sample_weights' is only supported with mode 0 (sum)")
    if weight.device.type == "meta":
        raise NotImplementedError(f"{op}: cannot run on the meta device: bags depend on the offsets' values")
    if indices.ndim == 2 and offsets is None:
        bags, width = indices.shape
        starts = [i * width for i in range(bags)]
        indices = ops.reshape(indices, [-1])
    elif indices.ndim == 1 and offsets is not None:
        starts = [int(v) for v in offsets.tolist()]
        if include_last_offset:
            if not starts:
                raise ValueError(f"{op}: 'offsets' must not be empty with include_last_offset")
            indices = ops.narrow(indices, 0, 0, starts[-1])
            starts = starts[:-1]
    else:
        raise ValueError(f"{op}: expected 1-dim 'indices' with 'offsets', or 2-dim 'indices' without")
    n = indices.shape[0]
    if any(b < a for a, b in zip(starts, starts[1:] + [n])) or (starts and (starts[0] != 0 or starts[-1] > n)):
        raise ValueError(f"{op}: 'offsets' must start at 0 and be non-decreasing within the indices")
    table = _rows(weight)
    if n and (int(ops.amin(indices).item()) < 0 or int(ops.amax(indices).item()) >= weight.shape[0]):
        raise ValueError(f"{op}: an index is out of range for a table of {weight.shape[0]} rows")
    rows = ops.index_select(table, 0, indices)
    if per_sample_weights is not None:
        rows = ops.mul(rows, ops.unsqueeze(ops.to(per_sample_weights, F32), 1))
    d = table.shape[1]
    out = []
    for a, b in zip(starts, starts[1:] + [n]):
        if b == a:
            out.append(ops.zeros([d], dtype=F32, device=weight.device))
            continue
        bag = ops.sum(ops.narrow(rows, 0, a, b - a), [0])
        out.append(ops.div(bag, float(b - a)) if mode == 1 else bag)
    if not out:
        return ops.zeros([0, d], dtype=F32, device=weight.device)
    return ops.stack(out, 0)
