"""Quantization ops: quantize, dequantize, quantization-parameter accessors and fake quantization.

Quantized tensors and their formulas are described in ``opweave._quantized``. The
functions here are the decompositions; for ops that read a quantized tensor the
decomposition is the error path (a float tensor where a quantized one is required)
and the real kernel is registered at the Quantized layer by ``opweave.quantization``.

Choices where PyTorch is unspecified: NaN quantizes to the zero point (dequantizes
to 0.0); ±inf saturate to qmin/qmax. ``fake_quantize_*`` propagate NaN. Quantize
divides by the float32 scale; fake quantization multiplies by ``1 / scale`` in
float32, as PyTorch's kernels do.
"""

from __future__ import annotations

import math

from .. import _dtype
from .._ops import canonical as ops
from .._ops import define
from .._quantized import QParams, check_quantized_dtype, make_quantized, qrange
from .._tensor import Tensor

_FLOAT_INPUTS = (_dtype.float16, _dtype.bfloat16, _dtype.float32, _dtype.float64)
_INT_STORAGE = {_dtype.int8: _dtype.qint8, _dtype.uint8: _dtype.quint8, _dtype.int32: _dtype.qint32}


def _check_float(op: str, t: Tensor, arg: str = "self") -> None:
    if t.is_quantized or t.dtype not in _FLOAT_INPUTS:
        raise TypeError(f"{op}: argument '{arg}' must be a floating-point tensor, got {t.dtype}")


def _check_scale(op: str, scale: float, arg: str = "scale") -> float:
    if not (math.isfinite(scale) and scale > 0):
        raise ValueError(f"{op}: argument '{arg}' must be a positive finite number, got {scale}")
    return scale


def _check_zero_point(op: str, zero_point: int, lo: int, hi: int, arg: str = "zero_point") -> None:
    if not lo <= zero_point <= hi:
        raise ValueError(f"{op}: argument '{arg}' must be in [{lo}, {hi}], got {zero_point}")


def _f32(value: float) -> float:
    """``value`` rounded to float32 (as a Python float)."""
    import numpy as np

    return float(np.float32(value))


def quantize_values(x: Tensor, scale, zero_point, dtype) -> Tensor:
    """The integer representation of ``x`` quantized with ``scale``/``zero_point`` (floats or broadcastable tensors).

    ``clamp(round_half_even(float32(x) / float32(scale)) + zero_point, qmin, qmax)`` with NaN mapped to
    the zero point; returns a Dense tensor of ``dtype``'s storage type.
    """
    from .._quantized import STORAGE_DTYPE

    lo, hi = qrange(dtype)
    x32 = ops.to(x, _dtype.float32)
    s = _f32(scale) if not isinstance(scale, Tensor) else ops.to(scale, _dtype.float32)
    rounded = ops.to(ops.round(ops.div(x32, s)), _dtype.float64)
    zp = zero_point if not isinstance(zero_point, Tensor) else ops.to(zero_point, _dtype.float64)
    shifted = ops.clamp(ops.add(rounded, zp), lo, hi)
    if isinstance(zp, Tensor):
        shifted = ops.where(ops.isnan(shifted), zp, shifted)
    else:
        shifted = ops.nan_to_num(shifted, nan=float(zp))
    return ops.to(shifted, STORAGE_DTYPE[dtype])


def quantize_per_tensor(self, scale, zero_point, dtype):
    """Quantize float ``self`` per tensor: ``clamp(round(self / scale) + zero_point, qmin, qmax)`` as ``dtype``."""
    op = "quantize_per_tensor"
    _check_float(op, self)
    check_quantized_dtype(dtype, op)
    _check_scale(op, scale)
    lo, hi = qrange(dtype)
    _check_zero_point(op, zero_point, lo, hi)
    return make_quantized(quantize_values(self, scale, zero_point, dtype), QParams.per_tensor(scale, zero_point), dtype)


def host_list(op: str, t: Tensor) -> list:
    """The values of ``t`` on the host (quantization parameters); NotImplementedError on the meta device."""
    if t.device.type == "meta":
        raise NotImplementedError(f"{op}: cannot run on the meta device: it reads quantization parameters")
    return t.tolist()


def _scalar_of(op: str, t: Tensor, arg: str):
    if not isinstance(t, Tensor) or t.numel() != 1:
        raise ValueError(f"{op}: argument '{arg}' must be a one-element tensor")
    return t.item()


def quantize_per_tensor_tensor_qparams(self, scale, zero_point, dtype):
    """``quantize_per_tensor`` with the scale and zero point given as one-element tensors."""
    op = "quantize_per_tensor.tensor_qparams"
    s, z = _scalar_of(op, scale, "scale"), _scalar_of(op, zero_point, "zero_point")
    if isinstance(z, float) and not z.is_integer():
        raise TypeError(f"{op}: argument 'zero_point' must hold an integer, got {z}")
    return quantize_per_tensor(self, float(s), int(z), dtype)


def _channel_params(op: str, self: Tensor, scales: Tensor, zero_points: Tensor, axis: int, lo: int, hi: int):
    """Validated ``(axis, scales list, zero points list)`` of a per-channel op."""
    if not isinstance(scales, Tensor) or not isinstance(zero_points, Tensor):
        raise TypeError(f"{op}: 'scales' and 'zero_points' must be tensors")
    if self.ndim == 0:
        raise ValueError(f"{op}: per-channel quantization needs a tensor with at least one dim")
    if not -self.ndim <= axis < self.ndim:
        raise ValueError(f"{op}: argument 'axis' {axis} is out of range for a {self.ndim}-dim tensor")
    axis %= self.ndim
    n = self.shape[axis]
    for name, t in (("scales", scales), ("zero_points", zero_points)):
        if t.ndim != 1 or t.shape[0] != n:
            raise ValueError(f"{op}: argument '{name}' must be 1-dim with {n} elements (size of dim {axis})")
    if scales.is_quantized or not (scales.dtype.is_floating_point or scales.dtype.kind in ("int", "uint")):
        raise TypeError(f"{op}: argument 'scales' must be a float tensor, got {scales.dtype}")
    if zero_points.is_quantized or zero_points.dtype.is_complex or zero_points.dtype is _dtype.bool_:
        raise TypeError(f"{op}: argument 'zero_points' must be an integer tensor, got {zero_points.dtype}")
    s, z = [float(v) for v in host_list(op, scales)], host_list(op, zero_points)
    if any(isinstance(v, float) and not v.is_integer() for v in z):
        raise TypeError(f"{op}: argument 'zero_points' must hold integers")
    z = [int(v) for v in z]
    for v in s:
        _check_scale(op, v, "scales")
    for v in z:
        _check_zero_point(op, v, lo, hi, "zero_points")
    return axis, s, z


def _along(values, axis: int, ndim: int, dtype, device) -> Tensor:
    """A 1-dim list of values as a tensor shaped to broadcast along ``axis`` of an ``ndim``-dim tensor."""
    from .._factories import tensor

    t = tensor(values, dtype=dtype, device=device)
    shape = [1] * ndim
    shape[axis] = len(values)
    return ops.reshape(t, shape)


def quantize_per_channel(self, scales, zero_points, axis, dtype):
    """Quantize float ``self`` with one scale and zero point per index of dim ``axis``."""
    op = "quantize_per_channel"
    _check_float(op, self)
    check_quantized_dtype(dtype, op)
    lo, hi = qrange(dtype)
    axis, s, z = _channel_params(op, self, scales, zero_points, axis, lo, hi)
    st = _along(s, axis, self.ndim, _dtype.float32, self.device)
    zt = _along(z, axis, self.ndim, _dtype.float64, self.device)
    ints = quantize_values(self, st, zt, dtype)
    return make_quantized(ints, QParams.per_channel(s, z, axis), dtype)


def _needs_quantized(op: str):
    def decomposition(self, *args):
        raise TypeError(f"{op}: argument 'self' must be a quantized tensor, got {self.dtype}")

    decomposition.__doc__ = f"``{op}`` of a quantized tensor (a float tensor raises TypeError)."
    return decomposition


def dequantize(self):
    """The float32 values of quantized ``self``: ``(q - zero_point) * scale``; a float tensor is returned as float32."""
    if self.dtype.is_complex or not (self.dtype.is_floating_point or self.is_quantized):
        raise TypeError(f"dequantize: argument 'self' must be a quantized or floating-point tensor, got {self.dtype}")
    return ops.to(self, _dtype.float32)


def _check_int_repr_input(op: str, self: Tensor):
    if self.is_quantized or self.dtype not in _INT_STORAGE:
        raise TypeError(f"{op}: argument 'self' must be an int8, uint8 or int32 tensor, got {self.dtype}")
    return _INT_STORAGE[self.dtype]


def make_per_tensor_quantized_tensor(self, scale, zero_point):
    """A quantized tensor holding a copy of the integers ``self`` (int8 → qint8, uint8 → quint8, int32 → qint32)."""
    op = "_make_per_tensor_quantized_tensor"
    qdtype = _check_int_repr_input(op, self)
    _check_scale(op, scale)
    return make_quantized(ops.clone(self), QParams.per_tensor(scale, zero_point), qdtype)


def make_per_channel_quantized_tensor(self, scale, zero_point, axis):
    """A per-channel quantized tensor holding a copy of the integers ``self``."""
    op = "_make_per_channel_quantized_tensor"
    qdtype = _check_int_repr_input(op, self)
    info = _dtype.iinfo(_dtype.int64)
    axis, s, z = _channel_params(op, self, scale, zero_point, axis, info.min, info.max)
    return make_quantized(ops.clone(self), QParams.per_channel(s, z, axis), qdtype)


def _check_fake_range(op: str, zero_point, quant_min: int, quant_max: int):
    if quant_min > quant_max:
        raise ValueError(f"{op}: 'quant_min' ({quant_min}) must not be greater than 'quant_max' ({quant_max})")


def _fake(self, inv_scale, scale, zero_point, quant_min, quant_max):
    """``(clamp(round(x * inv_scale) + zp, qmin, qmax) - zp) * scale`` in float32, NaN propagating."""
    x32 = ops.to(self, _dtype.float32)
    rounded = ops.to(ops.round(ops.mul(x32, inv_scale)), _dtype.float64)
    zp = zero_point if not isinstance(zero_point, Tensor) else ops.to(zero_point, _dtype.float64)
    q = ops.clamp(ops.add(rounded, zp), quant_min, quant_max)
    out = ops.mul(ops.to(ops.sub(q, zp), _dtype.float32), scale)
    return ops.to(out, self.dtype)


def fake_quantize_per_tensor_affine(self, scale, zero_point, quant_min, quant_max):
    """Quantize and dequantize in one step (float in, float out), for quantization-aware training."""
    op = "fake_quantize_per_tensor_affine"
    _check_float(op, self)
    _check_scale(op, scale)
    _check_fake_range(op, zero_point, quant_min, quant_max)
    _check_zero_point(op, zero_point, quant_min, quant_max)
    s32 = _f32(scale)
    return _fake(self, _f32(1.0 / s32), s32, zero_point, quant_min, quant_max)


def fake_quantize_per_tensor_affine_tensor_qparams(self, scale, zero_point, quant_min, quant_max):
    """``fake_quantize_per_tensor_affine`` with the scale and zero point as one-element tensors."""
    op = "fake_quantize_per_tensor_affine.tensor_qparams"
    s, z = _scalar_of(op, scale, "scale"), _scalar_of(op, zero_point, "zero_point")
    return fake_quantize_per_tensor_affine(self, float(s), int(z), quant_min, quant_max)


def fake_quantize_per_channel_affine(self, scale, zero_point, axis, quant_min, quant_max):
    """Per-channel fake quantization along ``axis`` (float in, float out)."""
    op = "fake_quantize_per_channel_affine"
    _check_float(op, self)
    _check_fake_range(op, None, quant_min, quant_max)
    axis, s, z = _channel_params(op, self, scale, zero_point, axis, quant_min, quant_max)
    s32 = [_f32(v) for v in s]
    st = _along(s32, axis, self.ndim, _dtype.float32, self.device)
    inv = _along([_f32(1.0 / v) for v in s32], axis, self.ndim, _dtype.float32, self.device)
    zt = _along(z, axis, self.ndim, _dtype.float64, self.device)
    return _fake(self, inv, st, zt, quant_min, quant_max)


_DEFS = (
    (
        "quantize_per_tensor(Tensor self, float scale, int zero_point, ScalarType dtype) -> Tensor",
        quantize_per_tensor,
    ),
    (
        "quantize_per_tensor.tensor_qparams(Tensor self, Tensor scale, Tensor zero_point, ScalarType dtype) -> Tensor",
        quantize_per_tensor_tensor_qparams,
    ),
    (
        "quantize_per_channel(Tensor self, Tensor scales, Tensor zero_points, int axis, ScalarType dtype) -> Tensor",
        quantize_per_channel,
    ),
    ("dequantize.self(Tensor self) -> Tensor", dequantize),
    ("q_scale(Tensor self) -> float", _needs_quantized("q_scale")),
    ("q_zero_point(Tensor self) -> int", _needs_quantized("q_zero_point")),
    ("q_per_channel_scales(Tensor self) -> Tensor", _needs_quantized("q_per_channel_scales")),
    ("q_per_channel_zero_points(Tensor self) -> Tensor", _needs_quantized("q_per_channel_zero_points")),
    ("q_per_channel_axis(Tensor self) -> int", _needs_quantized("q_per_channel_axis")),
    ("int_repr(Tensor self) -> Tensor", _needs_quantized("int_repr")),
    ("qscheme(Tensor self) -> QScheme", _needs_quantized("qscheme")),
    (
        "_make_per_tensor_quantized_tensor(Tensor self, float scale, int zero_point) -> Tensor",
        make_per_tensor_quantized_tensor,
    ),
    (
        "_make_per_channel_quantized_tensor(Tensor self, Tensor scale, Tensor zero_point, int axis) -> Tensor",
        make_per_channel_quantized_tensor,
    ),
    (
        "fake_quantize_per_tensor_affine(Tensor self, float scale, int zero_point, int quant_min, int quant_max)"
        " -> Tensor",
        fake_quantize_per_tensor_affine,
    ),
    (
        "fake_quantize_per_tensor_affine.tensor_qparams(Tensor self, Tensor scale, Tensor zero_point, "
        "int quant_min, int quant_max) -> Tensor",
        fake_quantize_per_tensor_affine_tensor_qparams,
    ),
    (
        "fake_quantize_per_channel_affine(Tensor self, Tensor scale, Tensor zero_point, int axis, int quant_min, "
        "int quant_max) -> Tensor",
        fake_quantize_per_channel_affine,
    ),
)

#: ops that read tensor values on the host (quantization parameters): they cannot run on the meta device
_READS_PARAMS = (
    "quantize_per_tensor.tensor_qparams",
    "quantize_per_channel",
    "_make_per_channel_quantized_tensor",
    "fake_quantize_per_tensor_affine.tensor_qparams",
    "fake_quantize_per_channel_affine",
)

for _schema, _fn in _DEFS:
    _name = _schema.split("(")[0]
    define(_schema, _fn, tags=("data_dependent_output",) if _name in _READS_PARAMS else ())
