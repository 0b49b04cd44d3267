"""NumPy oracles and helpers shared by the quantization tests (written independently of opweave's code)."""

from __future__ import annotations

import numpy as np
import opweave as ow

F32 = np.float32
RANGES = {ow.qint8: (-128, 127), ow.quint8: (0, 255), ow.qint32: (-(2**31), 2**31 - 1)}
STORAGE = {ow.qint8: np.int8, ow.quint8: np.uint8, ow.qint32: np.int32}


def np_quantize(x, scale, zero_point, dtype):
    """clamp(rint(float32(x) / float32(scale)) + zero_point, qmin, qmax); NaN gives the zero point."""
    lo, hi = RANGES[dtype]
    with np.errstate(all="ignore"):
        r = np.rint(np.asarray(x, dtype=np.float64).astype(F32) / np.asarray(scale).astype(F32)).astype(np.float64)
        v = np.clip(r + np.asarray(zero_point, np.float64), lo, hi)
        v = np.where(np.isnan(v), np.broadcast_to(np.asarray(zero_point, np.float64), v.shape), v)
    return v.astype(STORAGE[dtype])


def np_dequantize(ints, scale, zero_point):
    """float32(q - zero_point) * float32(scale)."""
    return (np.asarray(ints, np.int64) - np.asarray(zero_point, np.int64)).astype(F32) * np.asarray(scale).astype(F32)


def requantize(acc, multiplier, bias_over_scale, zero_point, dtype, relu=False):
    """clamp(zero_point + rint(acc * multiplier + bias / scale)) in float64."""
    lo, hi = RANGES[dtype]
    v = np.asarray(acc, np.float64) * multiplier + bias_over_scale
    return np.clip(np.rint(v) + zero_point, zero_point if relu else lo, hi).astype(STORAGE[dtype])


def host(t) -> np.ndarray:
    """A tensor's values as NumPy (quantized: the integers)."""
    if t.is_quantized:
        t = t.int_repr()
    return np.array(t.cpu().numpy(), copy=True)


def qtensor(values, scale, zero_point, dtype, device="cpu"):
    """A per-tensor quantized tensor holding exactly the integers ``values``."""
    ints = ow.tensor(np.asarray(values).astype(STORAGE[dtype]))
    q = ow._make_per_tensor_quantized_tensor(ints, scale, zero_point)
    return q if device == "cpu" else q.to(device)
