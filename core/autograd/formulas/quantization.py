"""Fake quantization's gradient: PyTorch's straight-through estimator.

``fake_quantize_*`` rounds, so its derivative is 0 almost everywhere; PyTorch's
``fake_quantize_per_*_affine_cachemask_backward`` instead passes the incoming gradient
where the quantized value ``round(x · (1/scale)) + zero_point`` lies within
``[quant_min, quant_max]`` and sends 0 where it was clamped (scale and zero point get no
gradient). The mask is computed as the forward computes the quantized value: ``x`` and
``1/scale`` in float32, rounded half to even.
"""

from __future__ import annotations

import numpy as np

from ... import _dtype
from ..._factories import tensor
from ._common import C, formula


def _f32(value: float) -> float:
    return float(np.float32(value))


def _mask(x, inv_scale, zero_point, quant_min: int, quant_max: int):
    """Whether ``round(x · inv_scale) + zero_point`` lies within ``[quant_min, quant_max]``."""
    q = C.round(C.mul(C.to(x, _dtype.float32), inv_scale)).to(_dtype.float64)
    q = C.add(q, zero_point)
    return C.logical_and(C.ge(q, quant_min), C.le(q, quant_max))


@formula("fake_quantize_per_tensor_affine", save=(0,))
def _per_tensor(ctx, g):
    x, scale, zero_point, quant_min, quant_max = ctx.args
    return (C.mul(g, _mask(x, _f32(1.0 / _f32(scale)), zero_point, quant_min, quant_max)),)


@formula("fake_quantize_per_tensor_affine.tensor_qparams", save=(0, 1, 2))
def _per_tensor_qparams(ctx, g):
    x, scale, zero_point, quant_min, quant_max = ctx.args
    inv = _f32(1.0 / _f32(float(scale.reshape(-1)[0].item())))
    return (C.mul(g, _mask(x, inv, int(zero_point.reshape(-1)[0].item()), quant_min, quant_max)), None, None)


@formula("fake_quantize_per_channel_affine", save=(0, 1, 2))
def _per_channel(ctx, g):
    x, scale, zero_point, axis, quant_min, quant_max = ctx.args
    axis %= x.ndim
    shape = [1] * x.ndim
    shape[axis] = x.shape[axis]
    inverses = [_f32(1.0 / _f32(v)) for v in scale.detach().reshape(-1).tolist()]
    inv = C.reshape(tensor(inverses, dtype=_dtype.float32, device=x.device), shape)
    zp = C.reshape(C.to(zero_point.detach(), _dtype.float64), shape)
    return (C.mul(g, _mask(x, inv, zp, quant_min, quant_max)), None, None)
