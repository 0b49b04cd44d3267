"""The x86 engine's form of packed weights, kept in the packed object's ``backend_cache["x86"]``.

A :class:`LinearPack` / :class:`ConvPack` holds the int8 weights, their scales (one, or one per
output channel), the float32 bias, and per input shape the oneDNN primitive with the weights
reordered into the layout that primitive chose (blocked for AMX/VNNI). Reorders are cached by
layout, so shapes whose primitives want the same layout share one reordered copy; primitives
are cached per shape (the last :data:`SHAPES` shapes).

Weights oneDNN cannot take are marked unsupported (``reason`` says why) and the kernels use
the reference: linear weights whose per-channel zero points differ, convolution weights with
non-zero zero points (oneDNN 3.2 has no weight zero points for convolutions).
"""

from __future__ import annotations

import threading

import numpy as np
import opweave
from opweave.backends.kernel import int_view, qparams

from . import _onednn as dnnl
from ._primitives import (
    LRU,
    Quantization,
    Reorder,
    convolution_executable,
    grouped_weight_shape,
    matmul_desc,
    matmul_executable,
    reorder_to,
    weight_scale_mask,
)

ENGINE = "x86"
SHAPES = 16  # primitives kept per packed weight
PREPARE_ROWS = 64  # rows of the primitive whose weight layout the prepack reorders to


class _WeightLayouts:
    """Reordered copies of one weight, one per layout asked for (``get(desc)``)."""

    def __init__(self, user: np.ndarray):
        self.user = user
        self._copies: list = []
        self._lock = threading.Lock()
        self.reorders = 0  # how many reorders ran (tests check the reuse)

    def get(self, desc) -> np.ndarray:
        """The weights laid out as ``desc`` (reordered on first request)."""
        with self._lock:
            for known, buffer in self._copies:
                if dnnl.desc_equal(known, desc):
                    return buffer
            buffer = reorder_to(self.user, desc)
            self._copies.append((desc, buffer))
            self.reorders += 1
            return buffer

    def __len__(self):
        return len(self._copies)


def _weight_parts(qparams):
    """``(scales, per_channel, zero_point or None)``; None when the zero points differ by channel."""
    if qparams.per_channel_scheme:
        scales = np.asarray(qparams.scales, np.float32)
        zps = set(qparams.zero_points)
        return scales, True, (zps.pop() if len(zps) == 1 else None)
    return np.array([qparams.scale], np.float32), False, int(qparams.zero_point)


class LinearPack:
    """int8 weights ``[N, K]`` for ``y = x @ w.T``; primitives per (rows, dtypes, relu)."""

    def __init__(self, weight_ints: np.ndarray, qparams, bias):
        self.weight = np.ascontiguousarray(weight_ints, np.int8)
        self.out_features, self.in_features = self.weight.shape
        self.scales, self.per_channel, self.zero_point = _weight_parts(qparams)
        self.bias = None if bias is None else np.ascontiguousarray(bias, np.float32).reshape(1, -1)
        self.reason = None
        if self.zero_point is None:
            self.reason = "per-channel weight zero points that differ (oneDNN takes one weight zero point)"
        elif not self.weight.size:
            self.reason = "an empty weight"
        # oneDNN's weights are [K, N]: the transpose of the [N, K] array, as it lies in memory.
        self.layouts = _WeightLayouts(self.weight.T)
        self._executables = LRU(SHAPES)

    @property
    def supported(self) -> bool:
        """Whether oneDNN can run this weight (else ``reason`` says why)."""
        return self.reason is None

    def quantization(self, dst_quantized: bool) -> Quantization:
        """The runtime quantization arguments of this weight's primitives."""
        mask = weight_scale_mask(self.per_channel, matmul=True)
        return Quantization(mask, self.scales.size, self.zero_point != 0, dst_quantized)

    def _args(self, rows: int, src_dtype, dst_dtype, relu: bool) -> tuple:
        quant = self.quantization(np.dtype(dst_dtype) != np.float32)
        shapes = ((rows, self.in_features), src_dtype, (self.in_features, self.out_features), None, dst_dtype)
        return (*shapes, quant, self.bias is not None, relu, True)

    def prepare(self, rows: int = PREPARE_ROWS) -> None:
        """Reorder the weights now, into the layout oneDNN picks for ``rows`` rows (it is the same for most)."""
        if self.supported:
            pd, _ = matmul_desc(*self._args(rows, np.uint8, np.uint8, False))
            self.layouts.get(dnnl.query_md(pd, dnnl.QUERY_WEIGHTS_MD))

    def executable(self, rows: int, src_dtype, dst_dtype, relu: bool):
        """``(executable, weights)`` for ``rows`` input rows of ``src_dtype`` producing ``dst_dtype``."""
        key = (rows, np.dtype(src_dtype).str, np.dtype(dst_dtype).str, relu)

        def make():
            return matmul_executable(*self._args(rows, src_dtype, dst_dtype, relu))

        exe = self._executables.get_or_make(key, make)
        return exe, self.layouts.get(exe.weights_desc)

    def run(self, x: np.ndarray, x_scale, x_zp, dst_dtype, y_scale=None, y_zp=None, relu=False) -> np.ndarray:
        """``x [M, K]`` (u8/s8) through the linear layer; ``dst_dtype`` u8 or float32 (no requantize)."""
        exe, buffers, out = self.bind(x, x_scale, x_zp, dst_dtype, y_scale, y_zp, relu)
        if exe is not None:
            exe.run(buffers)
        return out

    def bind(self, x: np.ndarray, x_scale, x_zp, dst_dtype, y_scale=None, y_zp=None, relu=False) -> tuple:
        """``(executable, buffers, out)``: what :meth:`run` executes, before it runs (no executable for 0 rows)."""
        x = dnnl.aligned(x)
        rows = x.shape[0]
        out = dnnl.aligned_array((rows, self.out_features), dst_dtype)
        if rows == 0:
            return None, {}, out
        exe, weights = self.executable(rows, x.dtype, dst_dtype, relu)
        buffers = exe.quant.buffers(x_scale, x_zp, self.scales, self.zero_point, y_scale, y_zp)
        buffers[dnnl.ARG_SRC], buffers[dnnl.ARG_WEIGHTS], buffers[dnnl.ARG_DST] = x, weights, out
        if self.bias is not None:
            buffers[dnnl.ARG_BIAS] = self.bias
        return exe, buffers, out


class ConvPack:
    """int8 convolution weights ``[OC, IC / groups, *kernel]`` with geometry; primitives per input shape."""

    def __init__(self, weight_ints: np.ndarray, qparams, bias, stride, padding, dilation, groups: int):
        self.weight = np.ascontiguousarray(weight_ints, np.int8)
        self.scales, self.per_channel, zero_point = _weight_parts(qparams)
        self.bias = None if bias is None else np.ascontiguousarray(bias, np.float32)
        self.stride, self.padding, self.dilation = tuple(stride), tuple(padding), tuple(dilation)
        self.groups = int(groups)
        self.reason = None
        if zero_point != 0:
            self.reason = "weights with non-zero zero points (oneDNN convolutions take symmetric weights)"
        self.layouts = _WeightLayouts(self.weight.reshape(grouped_weight_shape(self.weight.shape, self.groups)))
        self._executables = LRU(SHAPES)

    @property
    def supported(self) -> bool:
        """Whether oneDNN can run this weight (else ``reason`` says why)."""
        return self.reason is None

    def executable(self, src_shape: tuple, relu: bool):
        """``(executable, weights, source reorder or None, destination reorder or None)`` for one input shape."""

        def make():
            quant = Quantization(
                weight_scale_mask(self.per_channel, self.groups), self.scales.size, False, dst_quantized=True
            )
            exe = convolution_executable(
                src_shape,
                self.weight.shape,
                self.groups,
                self.stride,
                self.padding,
                self.dilation,
                quant,
                self.bias is not None,
                relu,
            )
            dst_shape = exe.dst_shape
            user_src = dnnl.memory_desc(src_shape, np.uint8)
            user_dst = dnnl.memory_desc(dst_shape, np.uint8)
            exe.src_reorder = None if dnnl.desc_equal(user_src, exe.src_desc) else Reorder(user_src, exe.src_desc)
            exe.dst_reorder = None if dnnl.desc_equal(user_dst, exe.dst_desc) else Reorder(exe.dst_desc, user_dst)
            return exe

        exe = self._executables.get_or_make((tuple(src_shape), relu), make)
        return exe, self.layouts.get(exe.weights_desc)

    def run(self, x: np.ndarray, x_scale, x_zp, y_scale, y_zp, relu=False) -> np.ndarray:
        """u8 ``x [N, C, *spatial]`` convolved, requantized to u8 (C-contiguous result)."""
        x = dnnl.aligned(x)
        exe, weights = self.executable(x.shape, relu)
        out = dnnl.aligned_array(exe.dst_shape, np.uint8)
        if out.size == 0:
            return out
        src = x
        if exe.src_reorder is not None:
            src = dnnl.aligned_empty(dnnl.desc_size(exe.src_desc))
            exe.src_reorder.run(x, src)
        dst = out if exe.dst_reorder is None else dnnl.aligned_empty(dnnl.desc_size(exe.dst_desc))
        buffers = exe.quant.buffers(x_scale, x_zp, self.scales, 0, y_scale, y_zp)
        buffers[dnnl.ARG_SRC], buffers[dnnl.ARG_WEIGHTS], buffers[dnnl.ARG_DST] = src, weights, dst
        if self.bias is not None:
            buffers[dnnl.ARG_BIAS] = self.bias
        exe.run(buffers)
        if exe.dst_reorder is not None:
            exe.dst_reorder.run(dst, out)
        return out


def linear_pack(params, prepare: bool = False) -> LinearPack:
    """The :class:`LinearPack` of a ``LinearPackedParams`` (made once, kept in its ``backend_cache``).

    ``prepare`` reorders the weights now (what the prepack op does) rather than at the first call.
    """
    pack = params.backend_cache.get(ENGINE)
    if pack is None:
        w = params.weight
        bias = None if params.bias is None else params.bias.to(opweave.float32).numpy(force=True)
        pack = LinearPack(int_view(w).numpy(force=True), qparams(w), bias)
        params.backend_cache[ENGINE] = pack
    if prepare:
        pack.prepare()
    return pack


def conv_pack(params) -> ConvPack:
    """The :class:`ConvPack` of a ``ConvPackedParams`` (made once, kept in its ``backend_cache``)."""
    pack = params.backend_cache.get(ENGINE)
    if pack is None:
        w = params.weight
        bias = None if params.bias is None else params.bias.to(opweave.float32).numpy(force=True)
        pack = ConvPack(
            int_view(w).numpy(force=True),
            qparams(w),
            bias,
            params.stride,
            params.padding,
            params.dilation,
            params.groups,
        )
        params.backend_cache[ENGINE] = pack
    return pack
