"""Convolution (im2col with sliding_window_view + einsum) and pooling (gathered windows)."""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view
from opweave.prims.conv import pool_output_size

from . import _onednn_path as dnnl
from ._common import native, wrap
from .training import tiling_max_pool

_O, _K = "xyz", "uvw"  # einsum letters for output positions and kernel offsets


def _compute_dtype(dtype):
    """float16/bfloat16 compute in float32; other dtypes in themselves."""
    return np.float32 if dtype.itemsize == 2 else dtype.numpy


def _per_dim(values, d):
    values = tuple(values)
    return values * d if len(values) == 1 else values


def _conv(x: np.ndarray, w: np.ndarray, stride, dilation, groups: int) -> np.ndarray:
    """Unpadded grouped cross-correlation: x (N, C, *S), w (C_out, C / groups, *K) -> (N, C_out, *O)."""
    d = x.ndim - 2
    n, c = x.shape[:2]
    c_out, ks = w.shape[0], w.shape[2:]
    span = tuple(dl * (k - 1) + 1 for k, dl in zip(ks, dilation))
    cols = sliding_window_view(x, span, axis=tuple(range(2, 2 + d)))
    cols = cols[
        (slice(None),) * 2
        + tuple(slice(None, None, s) for s in stride)
        + tuple(slice(None, None, dl) for dl in dilation)
    ]
    out_sizes = cols.shape[2 : 2 + d]
    cols = cols.reshape((n, groups, c // groups) + cols.shape[2:])
    wg = w.reshape((groups, c_out // groups) + w.shape[1:])
    o, k = _O[:d], _K[:d]
    y = np.einsum(f"ngc{o}{k},gdc{k}->ngd{o}", cols, wg, optimize=True)
    return y.reshape((n, c_out) + out_sizes)


def _conv_transposed(x, w, stride, padding, dilation, output_padding, groups):
    """Transposed convolution as a stride-1 convolution of the zero-stuffed input with the flipped kernel."""
    d = x.ndim - 2
    n, c_in = x.shape[:2]
    ks = w.shape[2:]
    stuffed = np.zeros((n, c_in) + tuple((s - 1) * st + 1 for s, st in zip(x.shape[2:], stride)), x.dtype)
    stuffed[(slice(None),) * 2 + tuple(slice(None, None, st) for st in stride)] = x
    edge = [dl * (k - 1) for k, dl in zip(ks, dilation)]
    stuffed = np.pad(stuffed, [(0, 0), (0, 0)] + [(e, e) for e in edge])
    c_out = w.shape[1] * groups
    wt = w.reshape((groups, c_in // groups, c_out // groups) + ks).swapaxes(1, 2).reshape((c_out, c_in // groups) + ks)
    wt = np.flip(wt, axis=tuple(range(2, 2 + d)))
    full = _conv(stuffed, wt, (1,) * d, dilation, groups)
    sizes = [
        (s - 1) * st - 2 * p + e + op + 1 for s, st, p, e, op in zip(x.shape[2:], stride, padding, edge, output_padding)
    ]
    extra = [max(0, p + size - f) for p, size, f in zip(padding, sizes, full.shape[2:])]
    full = np.pad(full, [(0, 0), (0, 0)] + [(0, e) for e in extra])
    return full[(slice(None),) * 2 + tuple(slice(p, p + size) for p, size in zip(padding, sizes))]


def convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups):
    """N-d convolution, PyTorch semantics (groups, dilation, transposed with output_padding)."""
    d = input.ndim - 2
    stride, padding, dilation, output_padding = (_per_dim(v, d) for v in (stride, padding, dilation, output_padding))
    cdt = _compute_dtype(input.dtype)
    if 1 <= d <= 3 and dnnl.supports(np.dtype(input.dtype.numpy)):
        # oneDNN's bfloat16 kernels sum pairs of neighbouring pixels (AVX512-BF16 dot products), so a nan or
        # inf in one pixel spreads to its neighbour's output: bfloat16 goes through oneDNN in float32.
        to = np.float32 if input.dtype.itemsize == 2 else None
        b = None if bias is None else native(bias).astype(to or cdt, copy=False)
        x, w = native(input).astype(to or cdt, copy=False), native(weight).astype(to or cdt, copy=False)
        if transposed:
            y = dnnl.transposed_convolution(x, w, b, stride, padding, dilation, output_padding, groups)
        else:
            y = dnnl.convolution(x, w, b, stride, padding, dilation, groups)
        if y is not None:
            return wrap(y.astype(input.dtype.numpy, copy=False), input.dtype)
    x, w = native(input).astype(cdt), native(weight).astype(cdt)
    with np.errstate(invalid="ignore", over="ignore"):  # inf/nan inputs propagate silently, as in torch
        if transposed:
            y = _conv_transposed(x, w, stride, padding, dilation, output_padding, groups)
        else:
            x = np.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in padding])
            y = _conv(x, w, stride, dilation, groups)
        if bias is not None:
            y = y + native(bias).astype(cdt).reshape((-1,) + (1,) * d)
    return wrap(np.ascontiguousarray(y).astype(input.dtype.numpy, copy=False), input.dtype)


def _window_coords(starts: np.ndarray, offsets: np.ndarray, lengths: np.ndarray, n: int, step: int = 1):
    """Per-dim window coordinates ``(out, K)`` clipped into ``[0, n)``, their validity, and torch's first index.

    The first index (used when a window holds no input element) is ``start`` moved up by
    whole ``step``s until it is non-negative, as torch's ``while (ih0 < 0) ih0 += dilation``.
    """
    coords = starts[:, None] + offsets[None, :]
    valid = (coords >= 0) & (coords < n) & (offsets[None, :] < lengths[:, None])
    first = np.where(starts < 0, starts + (-starts + step - 1) // step * step, starts)
    return np.clip(coords, 0, max(n - 1, 0)), valid, first


def _layout(i: int, d: int, sizes) -> list:
    layout = [1] * (2 * d)
    layout[i], layout[d + i] = sizes
    return layout


def _gather(x: np.ndarray, dims):
    """Windows of the trailing dims: values (..., *O, Kt), validity (*O, Kt), flat offsets (*O, Kt), first (*O)."""
    d = len(dims)
    shape = x.shape[x.ndim - d :]
    plane = np.cumprod((1,) + shape[::-1])[::-1][1:]  # row-major strides of a spatial plane
    index, valid, flat, first = [], True, 0, 0
    for i, (coords, mask, start) in enumerate(dims):
        c = coords.reshape(_layout(i, d, coords.shape))
        index.append(c)
        valid = valid & mask.reshape(c.shape)
        flat = flat + c * int(plane[i])
        first = first + start.reshape(_layout(i, d, (start.shape[0], 1))[:d]) * int(plane[i])
    out_sizes = tuple(c.shape[0] for c, _, _ in dims)
    full = out_sizes + tuple(c.shape[1] for c, _, _ in dims)
    ktot = int(np.prod(full[d:]))
    vals = x[(Ellipsis, *index)]
    valid = np.broadcast_to(valid, full).reshape(out_sizes + (ktot,))
    flat = np.broadcast_to(flat, full).reshape(out_sizes + (ktot,))
    return vals.reshape(vals.shape[: x.ndim - d] + out_sizes + (ktot,)), valid, flat, first


def _select_max(x: np.ndarray, dims, dtype):
    """Max over gathered windows, torch's rule: the last NaN wins, else the first maximum.

    A window without any input element (possible with dilation) gives the lowest value and
    torch's first index.
    """
    out_shape = x.shape[: x.ndim - len(dims)] + tuple(c.shape[0] for c, _, _ in dims)
    if 0 in out_shape:
        return np.empty(out_shape, dtype.numpy), np.empty(out_shape, np.int64)
    vals, valid, flat, first = _gather(x, dims)
    floating = dtype.is_floating_point
    lowest = -np.inf if floating else np.iinfo(x.dtype).min
    nan = np.isnan(vals) & valid if floating else np.zeros(vals.shape, bool)
    keyed = np.where(valid & ~nan, vals, lowest)
    best = keyed.max(axis=-1, keepdims=True)
    idx = np.argmax((keyed == best) & valid, axis=-1)
    if floating:
        last_nan = nan.shape[-1] - 1 - np.argmax(nan[..., ::-1], axis=-1)
        idx = np.where(nan.any(axis=-1), last_nan, idx)
    picked = np.take_along_axis(keyed, idx[..., None], axis=-1)[..., 0]
    picked = np.where(nan.any(axis=-1), np.nan, picked) if floating else picked
    where = np.take_along_axis(np.broadcast_to(flat, vals.shape), idx[..., None], axis=-1)[..., 0]
    where = np.where(valid.any(axis=-1), where, first)
    return picked.astype(dtype.numpy), where.astype(np.int64)


def _pool_dims(shape, kernel_size, stride, padding, dilation, ceil_mode):
    """Window coordinates of every pooled dim."""
    d = len(kernel_size)
    stride = stride or kernel_size
    ks, ss, ps, ds = (_per_dim(v, d) for v in (kernel_size, stride, padding, dilation))
    dims = []
    for n, k, s, p, dl in zip(shape[len(shape) - d :], ks, ss, ps, ds):
        out = pool_output_size(n, k, s, p, dl, ceil_mode)
        starts = np.arange(out) * s - p
        dims.append(_window_coords(starts, np.arange(k) * dl, np.full(out, k * dl), n, dl))
    return dims


def max_pool(self, kernel_size, stride, padding, dilation, ceil_mode):
    """Max pooling with flat indices."""
    fast = tiling_max_pool(self, kernel_size, stride, padding, dilation, ceil_mode)
    if fast is not None:
        return wrap(fast[0], self.dtype), wrap(fast[1])
    x = native(self)
    if self.dtype.itemsize == 2 and self.dtype.is_floating_point:
        x = x.astype(np.float32)
    dims = _pool_dims(x.shape, kernel_size, stride, padding, dilation, ceil_mode)
    values, indices = _select_max(x, dims, self.dtype)
    return wrap(values, self.dtype), wrap(indices)


def _adaptive_dims(shape, output_size):
    """Adaptive window coordinates: ``[floor(i n / out), ceil((i + 1) n / out))``."""
    dims = []
    for n, out in zip(shape[len(shape) - len(output_size) :], output_size):
        i = np.arange(out)
        starts, ends = (i * n) // out, -((-(i + 1) * n) // out)
        width = int((ends - starts).max()) if out else 0
        dims.append(_window_coords(starts, np.arange(width), ends - starts, n))
    return dims


def adaptive_max_pool(self, output_size):
    """Adaptive max pooling with flat indices."""
    x = native(self)
    if self.dtype.itemsize == 2 and self.dtype.is_floating_point:
        x = x.astype(np.float32)
    values, indices = _select_max(x, _adaptive_dims(x.shape, output_size), self.dtype)
    return wrap(values, self.dtype), wrap(indices)


def _window_sums(x: np.ndarray, dims) -> np.ndarray:
    """Sums over box windows, one pooled dim at a time (a box sum is separable)."""
    d = len(dims)
    for i, (coords, valid, _) in enumerate(dims):
        axis = x.ndim - d + i
        rest = (1,) * (x.ndim - axis - 1)
        g = np.take(x, coords, axis=axis)  # (..., out, K, ...)
        g = np.where(valid.reshape(valid.shape + rest), g, 0)
        with np.errstate(invalid="ignore", over="ignore"):
            x = g.sum(axis=axis + 1)
    return x


def _divisor(dims, sizes):
    """Outer product of per-dim counts, shaped to broadcast over the pooled dims."""
    d = len(dims)
    total = np.ones((1,) * d)
    for i, counts in enumerate(sizes):
        layout = [1] * d
        layout[i] = counts.shape[0]
        total = total * counts.reshape(layout)
    return total


def avg_pool(self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
    """Average pooling, torch's divisor rules."""
    x = native(self).astype(_compute_dtype(self.dtype))
    d = len(kernel_size)
    ks, ss, ps = (_per_dim(v, d) for v in (kernel_size, stride or kernel_size, padding))
    dims = _pool_dims(x.shape, kernel_size, stride, padding, (1,), ceil_mode)
    sums = _window_sums(x, dims)
    counts = [valid.sum(axis=1) for _, valid, _ in dims]
    if divisor_override is not None:
        div = np.full((1,) * d, float(divisor_override))
    elif count_include_pad:
        pools = []
        for n, k, s, p, (coords, _, _) in zip(x.shape[x.ndim - d :], ks, ss, ps, dims):
            starts = np.arange(coords.shape[0]) * s - p
            pools.append(np.minimum(starts + k, n + p) - starts)
        div = _divisor(dims, pools)
    else:
        div = _divisor(dims, counts)
    empty = _divisor(dims, counts) == 0
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.where(empty, 0, sums / div.astype(x.dtype))
    return wrap(np.ascontiguousarray(out).astype(self.dtype.numpy), self.dtype)


def adaptive_avg_pool(self, output_size):
    """Adaptive average pooling (separable window means)."""
    x = native(self).astype(_compute_dtype(self.dtype))
    dims = _adaptive_dims(x.shape, output_size)
    if 0 in output_size or x.size == 0:
        shape = x.shape[: x.ndim - len(output_size)] + tuple(output_size)
        return wrap(np.zeros(shape, self.dtype.numpy), self.dtype)
    counts = [valid.sum(axis=1) for _, valid, _ in dims]
    out = _window_sums(x, dims) / _divisor(dims, counts).astype(x.dtype)
    return wrap(np.ascontiguousarray(out).astype(self.dtype.numpy), self.dtype)


KERNELS = {
    "prims::convolution": convolution,
    "prims::max_pool": max_pool,
    "prims::avg_pool": avg_pool,
    "prims::adaptive_avg_pool": adaptive_avg_pool,
    "prims::adaptive_max_pool": adaptive_max_pool,
}
