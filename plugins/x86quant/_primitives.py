"""int8 matmul and convolution on NumPy arrays through oneDNN, with requantization in the primitive.

The quantization parameters are runtime arguments (oneDNN 3.x ``DNNL_ARG_ATTR_SCALES`` and
``DNNL_ARG_ATTR_ZERO_POINTS``), so one primitive serves every scale and zero point. What
oneDNN computes (``acc`` is the exact int32 sum of products of the centered integers)::

    y = (acc * src_scale * wei_scale + bias) [relu]       float32
    q = saturate(rhe(y / dst_scale) + dst_zero_point)     integer outputs (u8 / s8)

which is the reference's formula with float32 instead of float64 arithmetic.
:func:`matmul_executable` and :func:`convolution_executable` make an :class:`Executable` (the
compiled primitive and the layouts of its arguments); weights in the layout a primitive chose
are made and kept by :mod:`._prepack`.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np

from . import _onednn as dnnl
from ._onednn import ARG_ATTR_SCALES, ARG_ATTR_ZERO_POINTS, ARG_BIAS, ARG_DST, ARG_SRC, ARG_WEIGHTS


class LRU:
    """A small thread-safe least-recently-used cache: ``get_or_make(key, make)``."""

    def __init__(self, capacity: int = 32):
        self.capacity = capacity
        self._items: OrderedDict = OrderedDict()
        self._lock = threading.Lock()

    def get_or_make(self, key, make):
        """The cached value for ``key``, made by ``make()`` (outside the lock) when missing."""
        with self._lock:
            value = self._items.get(key)
            if value is not None:
                self._items.move_to_end(key)
                return value
        value = make()
        with self._lock:
            self._items[key] = value
            while len(self._items) > self.capacity:
                self._items.popitem(last=False)
        return value

    def __len__(self):
        return len(self._items)


def vector_desc(n: int, dtype):
    """Descriptor of a 1-D runtime parameter buffer (scales f32, zero points s32)."""
    return dnnl.memory_desc((n,), dtype)


@dataclass(frozen=True)
class Quantization:
    """Which runtime quantization arguments a primitive takes.

    ``weight_scale_mask`` is oneDNN's mask of the weight dims the scales vary along (0: one
    scale); ``weight_zero_point``: whether weights have a (common) zero point; ``dst_quantized``:
    integer output with a scale and zero point (else float32 output).
    """

    weight_scale_mask: int
    weight_scale_count: int
    weight_zero_point: bool
    dst_quantized: bool

    def attributes(self, relu: bool):
        """oneDNN attributes for these arguments plus an optional ReLU post-op."""
        scales = [(ARG_SRC, 0), (ARG_WEIGHTS, self.weight_scale_mask)]
        zero_points = [(ARG_SRC, 0)]
        if self.weight_zero_point:
            zero_points.append((ARG_WEIGHTS, 0))
        if self.dst_quantized:
            scales.append((ARG_DST, 0))
            zero_points.append((ARG_DST, 0))
        return dnnl.attributes(scales, zero_points, relu)

    def descs(self) -> dict:
        """Descriptors of the runtime parameter buffers, by argument id."""
        out = {
            ARG_ATTR_SCALES | ARG_SRC: vector_desc(1, np.float32),
            ARG_ATTR_SCALES | ARG_WEIGHTS: vector_desc(self.weight_scale_count, np.float32),
            ARG_ATTR_ZERO_POINTS | ARG_SRC: vector_desc(1, np.int32),
        }
        if self.weight_zero_point:
            out[ARG_ATTR_ZERO_POINTS | ARG_WEIGHTS] = vector_desc(1, np.int32)
        if self.dst_quantized:
            out[ARG_ATTR_SCALES | ARG_DST] = vector_desc(1, np.float32)
            out[ARG_ATTR_ZERO_POINTS | ARG_DST] = vector_desc(1, np.int32)
        return out

    def buffers(self, src_scale, src_zp, weight_scales, weight_zp=0, dst_scale=None, dst_zp=None) -> dict:
        """The runtime parameter buffers for one call."""
        out = {
            ARG_ATTR_SCALES | ARG_SRC: np.array([src_scale], np.float32),
            ARG_ATTR_SCALES | ARG_WEIGHTS: np.ascontiguousarray(weight_scales, np.float32).reshape(-1),
            ARG_ATTR_ZERO_POINTS | ARG_SRC: np.array([src_zp], np.int32),
        }
        if self.weight_zero_point:
            out[ARG_ATTR_ZERO_POINTS | ARG_WEIGHTS] = np.array([weight_zp], np.int32)
        if self.dst_quantized:
            out[ARG_ATTR_SCALES | ARG_DST] = np.array([dst_scale], np.float32)
            out[ARG_ATTR_ZERO_POINTS | ARG_DST] = np.array([dst_zp], np.int32)
        return out


class Executable:
    """A primitive, the layouts of its arguments (the weights' is ``weights_desc``) and its ``quant`` arguments."""

    def __init__(self, pd, descs: dict, quant: Quantization, dst_shape: tuple | None = None):
        self.quant = quant
        self.dst_shape = dst_shape
        self.weights_desc = dnnl.query_md(pd, dnnl.QUERY_WEIGHTS_MD)
        self.src_desc = dnnl.query_md(pd, dnnl.QUERY_SRC_MD)
        self.dst_desc = dnnl.query_md(pd, dnnl.QUERY_DST_MD)
        descs = dict(descs)
        descs[ARG_WEIGHTS] = self.weights_desc
        descs.setdefault(ARG_SRC, self.src_desc)
        descs.setdefault(ARG_DST, self.dst_desc)
        self.primitive = dnnl.Primitive(pd, descs)

    @property
    def impl(self) -> str:
        """oneDNN's implementation name."""
        return self.primitive.impl

    def run(self, buffers: dict) -> None:
        """Execute with the given argument buffers."""
        self.primitive.run(buffers)


def matmul_executable(
    src_shape, src_dtype, weight_shape, weight_strides, dst_dtype, quant: Quantization, bias: bool, relu: bool,
    weights_any: bool,
):  # fmt: skip
    """An :class:`Executable` matmul ``src [.., M, K] x weights [.., K, N] -> dst [.., M, N]`` (C-contiguous src/dst).

    With ``weights_any`` oneDNN picks the weights layout (prepacked weights are reordered to
    it); otherwise the weights are used as they lie (``weight_strides``, in elements).
    """
    pd, descs = matmul_desc(
        src_shape, src_dtype, weight_shape, weight_strides, dst_dtype, quant, bias, relu, weights_any
    )
    return Executable(pd, descs, quant)


def matmul_desc(
    src_shape, src_dtype, weight_shape, weight_strides, dst_dtype, quant: Quantization, bias: bool, relu: bool,
    weights_any: bool,
):  # fmt: skip
    """The primitive descriptor of :func:`matmul_executable` and its argument layouts (nothing compiled yet)."""
    src_md = dnnl.memory_desc(src_shape, src_dtype)
    if weights_any:
        wei_md = dnnl.memory_desc_any(weight_shape, np.int8)
    else:
        wei_md = dnnl.memory_desc(weight_shape, np.int8, weight_strides)
    batch = np.broadcast_shapes(tuple(src_shape[:-2]), tuple(weight_shape[:-2]))
    dst_shape = (*batch, src_shape[-2], weight_shape[-1])
    dst_md = dnnl.memory_desc(dst_shape, dst_dtype)
    bias_md = dnnl.memory_desc((1,) * (len(dst_shape) - 1) + (weight_shape[-1],), np.float32) if bias else None
    pd = dnnl.matmul_desc(src_md, wei_md, bias_md, dst_md, quant.attributes(relu))
    descs = {ARG_SRC: src_md, ARG_DST: dst_md, **quant.descs()}
    if bias:
        descs[ARG_BIAS] = bias_md
    return pd, descs


def convolution_executable(
    src_shape, weight_shape, groups, stride, padding, dilation, quant: Quantization, bias: bool, relu: bool
):
    """An :class:`Executable` int8 convolution (u8 source, s8 weights, u8 output); layouts chosen by oneDNN.

    ``weight_shape`` is PyTorch's ``[OC, IC / groups, *kernel]``; oneDNN's grouped form
    ``[groups, OC / groups, IC / groups, *kernel]`` is used when ``groups > 1``. The source and
    destination layouts are oneDNN's choice (see ``src_desc``/``dst_desc``); callers reorder.
    """
    n, _, *spatial = src_shape
    oc, kernel = weight_shape[0], weight_shape[2:]
    out_spatial = [
        (size + 2 * pad - dil * (k - 1) - 1) // st + 1
        for size, k, st, pad, dil in zip(spatial, kernel, stride, padding, dilation)
    ]
    dst_shape = (n, oc, *out_spatial)
    src_md = dnnl.memory_desc_any(src_shape, np.uint8)
    dst_md = dnnl.memory_desc_any(dst_shape, np.uint8)
    wei_md = dnnl.memory_desc_any(grouped_weight_shape(weight_shape, groups), np.int8)
    bias_md = dnnl.memory_desc((oc,), np.float32) if bias else None
    pd = dnnl.convolution_desc(
        src_md,
        wei_md,
        bias_md,
        dst_md,
        stride,
        [d - 1 for d in dilation],
        padding,
        padding,
        quant.attributes(relu),
    )
    descs = dict(quant.descs())
    if bias:
        descs[ARG_BIAS] = bias_md
    return Executable(pd, descs, quant, dst_shape)


def grouped_weight_shape(weight_shape, groups: int) -> tuple:
    """oneDNN's weight dims for PyTorch's ``[OC, IC / groups, *kernel]``."""
    if groups == 1:
        return tuple(weight_shape)
    return (groups, weight_shape[0] // groups, *weight_shape[1:])


def weight_scale_mask(per_channel: bool, groups: int = 1, matmul: bool = False, ndim: int = 2) -> int:
    """oneDNN's scale mask for per-output-channel weight scales (0 for one scale).

    Matmul weights are ``[.., K, N]``: channels are the last dim. Convolution weights are
    ``[OC, ...]`` or ``[G, OC / G, ...]``: channels are dim 0 (and 1 when grouped).
    """
    if not per_channel:
        return 0
    if matmul:
        return 1 << (ndim - 1)
    return 0b11 if groups > 1 else 0b1


def reorder_to(array: np.ndarray, desc) -> np.ndarray:
    """``array`` (any strides) copied into the layout ``desc`` (a new aligned buffer)."""
    return dnnl.reorder(array, dnnl.array_desc(array), desc)


class Reorder:
    """A reusable reorder from layout ``src`` to layout ``dst``: ``run(src_buffer, dst_buffer)``."""

    def __init__(self, src, dst):
        self.src, self.dst = src, dst
        self.primitive = dnnl.Primitive(dnnl.reorder_desc(src, dst), {ARG_SRC: src, ARG_DST: dst})

    def run(self, src: np.ndarray, dst: np.ndarray) -> None:
        """Copy ``src`` into ``dst``."""
        self.primitive.run({ARG_SRC: src, ARG_DST: dst})
