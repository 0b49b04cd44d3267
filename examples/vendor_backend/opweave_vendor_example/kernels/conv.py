"""Convolution (im2col: ``sliding_window_view`` + ``einsum``) and pooling (gathered windows).

Pooling gathers every window of the pooled dims into a trailing axis, with a
mask of the positions that fall inside the input; max, average and their
adaptive forms are reductions over that axis.
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view
from opweave.prims.conv import pool_output_size

from .._backend import kernel

_OUT, _KER = "xyz", "uvw"  # einsum letters of output positions and kernel offsets


def _per_dim(values, d: int) -> tuple:
    values = tuple(values)
    return values * d if len(values) == 1 else values


def _correlate(x, w, stride, dilation, groups):
    """Unpadded grouped cross-correlation: x (N, C, *S), w (C_out, C / groups, *K) -> (N, C_out, *O)."""
    d, (n, c), c_out = x.ndim - 2, x.shape[:2], w.shape[0]
    span = tuple(dl * (k - 1) + 1 for k, dl in zip(w.shape[2:], dilation))
    cols = sliding_window_view(x, span, axis=tuple(range(2, 2 + d)))
    cols = cols[
        (slice(None),) * 2
        + tuple(slice(None, None, s) for s in stride)
        + tuple(slice(None, None, dl) for dl in dilation)
    ]
    sizes = cols.shape[2 : 2 + d]
    cols = cols.reshape((n, groups, c // groups) + cols.shape[2:])
    wg = w.reshape((groups, c_out // groups) + w.shape[1:])
    y = np.einsum(f"ngc{_OUT[:d]}{_KER[:d]},gdc{_KER[:d]}->ngd{_OUT[:d]}", cols, wg, optimize=True)
    return y.reshape((n, c_out) + sizes)


def _transposed(x, w, stride, padding, dilation, output_padding, groups):
    """A transposed convolution: the zero-stuffed input, fully padded, correlated with the flipped kernel."""
    d, (n, c_in), ks = x.ndim - 2, x.shape[:2], w.shape[2:]
    stuffed = np.zeros((n, c_in) + tuple((s - 1) * st + 1 for s, st in zip(x.shape[2:], stride)), x.dtype)
    stuffed[(slice(None),) * 2 + tuple(slice(None, None, st) for st in stride)] = x
    edge = [dl * (k - 1) for k, dl in zip(ks, dilation)]
    c_out = w.shape[1] * groups
    wt = w.reshape((groups, c_in // groups, c_out // groups) + ks).swapaxes(1, 2).reshape((c_out, c_in // groups) + ks)
    padded = np.pad(stuffed, [(0, 0)] * 2 + [(e, e) for e in edge])
    full = _correlate(padded, np.flip(wt, tuple(range(2, 2 + d))), (1,) * d, dilation, groups)
    sizes = [
        (s - 1) * st - 2 * p + e + o + 1 for s, st, p, e, o in zip(x.shape[2:], stride, padding, edge, output_padding)
    ]
    full = np.pad(
        full, [(0, 0)] * 2 + [(0, max(0, p + size - f)) for p, size, f in zip(padding, sizes, full.shape[2:])]
    )
    return full[(slice(None),) * 2 + tuple(slice(p, p + size) for p, size in zip(padding, sizes))]


@kernel("convolution")
def convolution(x, w, bias, stride, padding, dilation, transposed, output_padding, groups):
    """N-d convolution with PyTorch's semantics (groups, dilation, transposed with output padding)."""
    d = x.ndim - 2
    stride, padding, dilation, output_padding = (_per_dim(v, d) for v in (stride, padding, dilation, output_padding))
    if transposed:
        y = _transposed(x, w, stride, padding, dilation, output_padding, groups)
    else:
        y = _correlate(np.pad(x, [(0, 0)] * 2 + [(p, p) for p in padding]), w, stride, dilation, groups)
    return y if bias is None else y + bias.reshape((-1,) + (1,) * d)


# -- pooling ------------------------------------------------------------------------------------------


def _axis(n: int, starts, offsets, lengths, step: int = 1):
    """One pooled dim: window coordinates ``(out, K)`` clipped into the input, their validity, and the index
    torch reports for a window without input elements (``start`` moved up by ``step`` until non-negative)."""
    coords = starts[:, None] + offsets[None, :]
    valid = (coords >= 0) & (coords < n) & (offsets[None, :] < lengths[:, None])
    first = np.where(starts < 0, starts + (-starts + step - 1) // step * step, starts)
    return np.clip(coords, 0, max(n - 1, 0)), valid, first


def _pool_axes(shape, kernel_size, stride, padding, dilation, ceil_mode):
    d = len(kernel_size)
    ks, ss, ps, ds = (_per_dim(v, d) for v in (kernel_size, stride or kernel_size, padding, dilation))
    out = []
    for n, k, s, p, dl in zip(shape[-d:], ks, ss, ps, ds):
        starts = np.arange(pool_output_size(n, k, s, p, dl, ceil_mode)) * s - p
        out.append(_axis(n, starts, np.arange(k) * dl, np.full(starts.shape, k * dl), dl))
    return out


def _adaptive_axes(shape, output_size):
    out = []
    for n, o in zip(shape[-len(output_size) :], output_size):
        starts, ends = np.arange(o) * n // o, -(-(np.arange(o) + 1) * n // o)
        out.append(_axis(n, starts, np.arange(int((ends - starts).max(initial=0))), ends - starts))
    return out


def _windows(x, dims):
    """Windows of the trailing dims: values ``(..., *O, K)``, validity and flat in-plane offsets ``(*O, K)``,
    and the index of an empty window ``(*O)``."""
    d = len(dims)
    plane = np.cumprod((1,) + x.shape[::-1][: d - 1])[::-1]  # row-major strides of a spatial plane
    index, valid, flat, first = [], True, 0, 0
    for i, ((coords, mask, start), step) in enumerate(zip(dims, plane)):
        layout = [1] * (2 * d)
        layout[i], layout[d + i] = coords.shape
        index.append(coords.reshape(layout))
        valid, flat = valid & mask.reshape(layout), flat + coords.reshape(layout) * int(step)
        first = first + start.reshape(layout[:d]) * int(step)
    sizes = tuple(c.shape[0] for c, _, _ in dims)
    full = sizes + tuple(c.shape[1] for c, _, _ in dims)
    vals = x[(Ellipsis, *index)].reshape(x.shape[: x.ndim - d] + sizes + (-1,))
    return (
        vals,
        np.broadcast_to(valid, full).reshape(sizes + (-1,)),
        np.broadcast_to(flat, full).reshape(sizes + (-1,)),
        first,
    )


def _max(x, dims):
    """torch's window max: the last NaN wins, else the first maximum; an empty window gives the lowest value."""
    shape = x.shape[: x.ndim - len(dims)] + tuple(c.shape[0] for c, _, _ in dims)
    if 0 in shape or x.size == 0:
        return np.zeros(shape, x.dtype), np.zeros(shape, np.int64)
    vals, valid, flat, first = _windows(x, dims)
    lowest = -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min
    nan = (np.isnan(vals) if x.dtype.kind == "f" else np.zeros(vals.shape, bool)) & valid
    keyed = np.where(valid & ~nan, vals, lowest)
    idx = np.argmax((keyed == keyed.max(axis=-1, keepdims=True)) & valid, axis=-1)
    has_nan = nan.any(axis=-1)
    idx = np.where(has_nan, nan.shape[-1] - 1 - np.argmax(nan[..., ::-1], axis=-1), idx)
    values = np.take_along_axis(keyed, idx[..., None], -1)[..., 0]
    values = np.where(has_nan, np.nan, values) if x.dtype.kind == "f" else values
    where = np.take_along_axis(np.broadcast_to(flat, vals.shape), idx[..., None], -1)[..., 0]
    return values, np.where(valid.any(axis=-1), where, first)


@kernel("max_pool")
def max_pool(x, kernel_size, stride, padding, dilation, ceil_mode):
    """Max pooling with flat in-plane indices."""
    return _max(x, _pool_axes(x.shape, kernel_size, stride, padding, dilation, ceil_mode))


@kernel("adaptive_max_pool")
def adaptive_max_pool(x, output_size):
    """Adaptive max pooling with flat in-plane indices."""
    return _max(x, _adaptive_axes(x.shape, output_size))


def _mean(x, dims, divisor=None):
    """Window sums divided by ``divisor`` (default: the number of input elements); 0 for empty windows."""
    shape = x.shape[: x.ndim - len(dims)] + tuple(c.shape[0] for c, _, _ in dims)
    if 0 in shape or x.size == 0:
        return np.zeros(shape, x.dtype)
    vals, valid, _, _ = _windows(x, dims)
    count = valid.sum(axis=-1)
    total = np.where(valid, vals, 0).sum(axis=-1)
    return np.where(count == 0, 0, total / (count if divisor is None else divisor).astype(x.dtype))


@kernel("avg_pool")
def avg_pool(x, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
    """Average pooling with torch's divisors: the override, the window clipped to the padding, or the count."""
    dims = _pool_axes(x.shape, kernel_size, stride, padding, (1,), ceil_mode)
    if divisor_override is not None:
        return _mean(x, dims, np.asarray(float(divisor_override)))
    if not count_include_pad:
        return _mean(x, dims)
    d = len(kernel_size)
    ks, ss, ps = (_per_dim(v, d) for v in (kernel_size, stride or kernel_size, padding))
    divisor = np.ones(())
    for i, (n, k, s, p, (coords, _, _)) in enumerate(zip(x.shape[-d:], ks, ss, ps, dims)):
        starts = np.arange(coords.shape[0]) * s - p
        divisor = divisor[..., None] * (np.minimum(starts + k, n + p) - starts).reshape((1,) * i + (-1,))
    return _mean(x, dims, divisor)


@kernel("adaptive_avg_pool")
def adaptive_avg_pool(x, output_size):
    """Adaptive average pooling."""
    return _mean(x, _adaptive_axes(x.shape, output_size))
