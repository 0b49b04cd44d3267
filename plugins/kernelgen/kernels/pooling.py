"""``prims::max_pool``, ``avg_pool``, ``adaptive_max_pool`` and ``adaptive_avg_pool`` (``codegen.pool``).

One program per dtype holds both kernels; window sizes, strides and paddings are
kernel arguments. Max pooling covers the real dtypes the device has (int8..int64,
uint8, bfloat16, float32, float64, and float16 where the dialect computes it: CUDA, in float, the
window sum accumulated in float and rounded once), average pooling the floating ones. Inputs with
more than ``MAX_RANK`` batch dims that cannot be merged run through the CPU fallback.
"""

from __future__ import annotations

import numpy as np
import opweave
from opweave.prims.conv import pool_output_size

from ..codegen import pool as gen
from ..codegen.common import MAX_RANK, coalesce
from ._common import buf, dname, empty, kernel, launch, native_half, program_kernels, runtime_of


def _per_dim(values, d: int) -> list:
    values = list(values)
    return values * d if len(values) == 1 else values


def _pad3(values, fill: int) -> list:
    """``values`` (one per spatial dim) behind leading ``fill`` entries, to 3 entries."""
    return [fill] * (3 - len(values)) + list(values)


def _args(x, out_spatial, ks, ss, ps, dls, adaptive: bool, cip=False, divisor=None):
    """The packed ``pool_args_t`` of a call, or None when the batch dims do not fit ``MAX_RANK``."""
    d = len(out_spatial)
    batch_shape, [batch_strides] = coalesce(list(x.shape[: x.ndim - d]), [list(x.stride()[: x.ndim - d])])
    if len(batch_shape) > MAX_RANK:
        return None
    n = int(np.prod(batch_shape, dtype=np.int64)) * int(np.prod(out_spatial, dtype=np.int64))
    values = {
        "in": _pad3(x.shape[x.ndim - d :], 1),
        "out": _pad3(out_spatial, 1),
        "k": _pad3(ks, 1),
        "s": _pad3(ss, 1),
        "p": _pad3(ps, 0),
        "dl": _pad3(dls, 1),
        "ist": _pad3(x.stride()[x.ndim - d :], 0),
        "bshape": batch_shape + [1] * (MAX_RANK - len(batch_shape)),
        "bst": batch_strides + [0] * (MAX_RANK - len(batch_strides)),
        "xo": [x.storage_offset()],
        "nb": [len(batch_shape)],
        "cip": [int(bool(cip))],
        "divisor": [int(divisor or 0)],
        "adaptive": [int(adaptive)],
        "n": [n],
    }
    return np.array([v for name, _ in gen.ARGS_FIELDS for v in values[name]], np.int64).tobytes(), n


def _kernels(x):
    rt = runtime_of(x)
    d = dname(x)
    return rt, program_kernels(rt, ("pool", d), lambda: gen.program(rt.dialect, d))


def _max(x, out_spatial, ks, ss, ps, dls, adaptive: bool):
    if x.dtype is opweave.float16 and not native_half(x.dtype, x.device):  # computed in float where the dialect can
        return NotImplemented
    shape = tuple(x.shape[: x.ndim - len(out_spatial)]) + tuple(out_spatial)
    packed = _args(x, out_spatial, ks, ss, ps, dls, adaptive)
    if packed is None:
        return NotImplemented
    values, indices = empty(shape, x.dtype, x.device), empty(shape, opweave.int64, x.device)
    if packed[1]:
        rt, kernels = _kernels(x)
        launch(rt, kernels["max_pool"], packed[1], buf(values), buf(indices), buf(x), packed[0])
    return values, indices


def _avg(x, out_spatial, ks, ss, ps, adaptive: bool, cip=False, divisor=None):
    if x.dtype is opweave.float16 and not native_half(x.dtype, x.device):  # computed in float where the dialect can
        return NotImplemented
    shape = tuple(x.shape[: x.ndim - len(out_spatial)]) + tuple(out_spatial)
    packed = _args(x, out_spatial, ks, ss, ps, [1] * len(out_spatial), adaptive, cip, divisor)
    if packed is None:
        return NotImplemented
    out = empty(shape, x.dtype, x.device)
    if packed[1]:
        rt, kernels = _kernels(x)
        launch(rt, kernels["avg_pool"], packed[1], buf(out), buf(x), packed[0])
    return out


def _window(x, kernel_size, stride, padding, dilation, ceil_mode):
    """Per-dim kernel, stride, padding, dilation and output sizes of a pooling call."""
    d = len(kernel_size)
    ks, ss, ps, dls = (_per_dim(v, d) for v in (kernel_size, stride or kernel_size, padding, dilation))
    sizes = x.shape[x.ndim - d :]
    out = [pool_output_size(n, k, s, p, dl, ceil_mode) for n, k, s, p, dl in zip(sizes, ks, ss, ps, dls)]
    return ks, ss, ps, dls, out


@kernel("max_pool")
def max_pool(x, kernel_size, stride, padding, dilation, ceil_mode):
    """Max over windows with int64 flat indices within each spatial plane."""
    ks, ss, ps, dls, out = _window(x, kernel_size, stride, padding, dilation, ceil_mode)
    return _max(x, out, ks, ss, ps, dls, False)


@kernel("avg_pool")
def avg_pool(x, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
    """Average over windows (torch's divisor rules)."""
    ks, ss, ps, _, out = _window(x, kernel_size, stride, padding, [1], ceil_mode)
    return _avg(x, out, ks, ss, ps, False, count_include_pad, divisor_override)


@kernel("adaptive_max_pool")
def adaptive_max_pool(x, output_size):
    """Adaptive max pooling with int64 flat indices."""
    d = len(output_size)
    return _max(x, list(output_size), [1] * d, [1] * d, [0] * d, [1] * d, True)


@kernel("adaptive_avg_pool")
def adaptive_avg_pool(x, output_size):
    """Adaptive average pooling."""
    d = len(output_size)
    return _avg(x, list(output_size), [1] * d, [1] * d, [0] * d, True)
