"""Direct CPU kernels for the hot ops of a training step: ``relu``, in-place updates, tiling max pooling,
``im2col`` and ``max_unpool2d`` (``linear`` is in ``canonical_everyday``).

``relu`` is ``np.maximum(x, 0)`` for float32/float64 (NaN stays NaN, ``-0.0`` gives ``0.0``, as the
decomposition's ``where(x <= 0, 0, x)``): NumPy's ``where`` branches per element, which on a
random sign pattern costs ten times a ``maximum``. Other dtypes decline to the decomposition.

``add_``/``sub_``/``mul_``/``div_`` (what an optimizer step is made of) write into ``self``'s
memory with one NumPy ufunc, where the decomposition computes a new tensor and copies it back:
``self`` float32/float64 without internal overlap, ``other`` a Python number or a tensor of
``self``'s dtype broadcasting to ``self``'s shape (``alpha`` rounded to the dtype first, as the
decomposition's ``other * alpha``); anything else declines. NumPy buffers an operand that
overlaps ``self``, so the result is the out-of-place one's. The binding bumps the version counter.

:func:`tiling_max_pool` is the fast case of ``prims::max_pool``: windows that tile the input
(stride = kernel, no padding, no dilation, sizes divisible by the kernel), float32/float64,
no NaN. The windows are a reshape of the input, so one ``argmax`` finds every window's first
maximum (PyTorch's rule when there is no NaN); any other call returns None and the general
gathered-window kernel runs.

``im2col`` (a 2-D convolution's weight gradient reads it) is one copy of a strided window view of
the (zero-padded) input, float32/float64 (N, C, H, W) only. ``max_unpool2d`` (max pooling's
gradient where windows do not overlap) writes the values at the indices into zeros, one fancy
assignment over every plane; out-of-range indices decline to the decomposition, which raises.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import opweave
from opweave.backends.kernel import Decline, is_wrapped_number

from .._backend import wrap_same
from ._common import native

_FAST_DTYPES = frozenset({opweave.float32, opweave.float64})
_LARGEST = {dtype: float(np.finfo(dtype.numpy).max) for dtype in _FAST_DTYPES}
Tensor = opweave.Tensor


def _relu(self):
    """relu for float32/float64 (else the decomposition)."""
    dtype = self.dtype
    if dtype not in _FAST_DTYPES:
        raise Decline("not float32/float64")
    return wrap_same(np.maximum(native(self), dtype.numpy.type(0)), dtype)


def _operand(x, y, dtype):
    """``y`` as a NumPy operand for an in-place update of ``x``, or None (decline)."""
    if isinstance(y, Tensor):
        if is_wrapped_number(y):
            y = native(y).item()
        elif y.dtype is dtype and (y.shape == x.shape or _broadcasts_to(tuple(y.shape), tuple(x.shape))):
            return native(y)
        else:
            return None
    if type(y) in (int, float, bool) and -_LARGEST[dtype] <= y <= _LARGEST[dtype]:
        return y
    return None


def _broadcasts_to(small: tuple, big: tuple) -> bool:
    if len(small) > len(big):
        return False
    return all(s in (1, b) for s, b in zip(small[::-1], big[::-1]))


def _inplace(name: str, ufunc, takes_alpha: bool):
    def kernel(x, y, *rest):
        dtype = x.dtype
        if dtype not in _FAST_DTYPES:
            raise Decline(f"{name}: not float32/float64")
        a = native(x)
        if not (a.flags.c_contiguous or a.flags.f_contiguous):
            raise Decline(f"{name}: self is not dense")
        b = _operand(x, y, dtype)
        if b is None:
            raise Decline(f"{name}: other is not a number or a same-dtype broadcastable tensor")
        alpha = rest[0] if takes_alpha and rest else 1
        with np.errstate(all="ignore"):
            if not (type(alpha) is int and alpha == 1):
                if type(alpha) not in (int, float, bool) or isinstance(b, (int, float, bool)):
                    raise Decline(f"{name}: alpha beside a number")
                b = np.multiply(b, dtype.numpy.type(alpha))
            ufunc(a, b, out=a)
        return x

    kernel.__name__ = kernel.__qualname__ = f"_{name.replace('.', '_')}"
    kernel.__doc__ = f"{name} in place for float32/float64 (else the decomposition)."
    return kernel


def _tiles(shape, kernel_size, stride, padding, dilation, ceil_mode) -> bool:
    d = len(kernel_size)
    if len(shape) < d or any(p != 0 for p in padding) or any(dl != 1 for dl in dilation):
        return False
    stride = tuple(stride) or tuple(kernel_size)
    if tuple(stride) != tuple(kernel_size) or len(stride) != d:
        return False
    spatial = shape[len(shape) - d :]
    return all(n % k == 0 and n > 0 for n, k in zip(spatial, kernel_size))


@functools.lru_cache(maxsize=64)
def _window_tables(spatial: tuple, kernel_size: tuple) -> tuple:
    """(the kernel offsets in window order, each one's flat offset within a window, each window's first flat index)."""
    d = len(kernel_size)
    outs = tuple(n // k for n, k in zip(spatial, kernel_size))
    plane = np.cumprod((1,) + spatial[::-1])[::-1][1:]  # row-major strides of a spatial plane
    offsets = list(np.ndindex(*kernel_size))
    table = np.array([sum(int(o) * int(p) for o, p in zip(offset, plane)) for offset in offsets], np.int64)
    base = np.zeros(outs, np.int64)
    for i in range(d):
        step = np.arange(outs[i], dtype=np.int64) * (kernel_size[i] * int(plane[i]))
        base = base + step.reshape((-1,) + (1,) * (d - 1 - i))
    table.flags.writeable = base.flags.writeable = False
    return tuple(offsets), table, base


def tiling_max_pool(self, kernel_size, stride, padding, dilation, ceil_mode):
    """(values, flat indices) as NumPy arrays when the windows tile the input, else None.

    One strided slice per kernel offset, in window order: a later offset takes over only where it
    is strictly greater (the first maximum wins). The running maximum is the values; the offset
    that won is kept as a small unsigned integer (offsets only grow, so the winner is the largest
    offset whose comparison fired) and becomes a flat index through one table lookup.
    """
    dtype = self.dtype
    if dtype not in _FAST_DTYPES or not _tiles(self.shape, kernel_size, stride, padding, dilation, ceil_mode):
        return None
    x = native(self)
    d = len(kernel_size)
    kernel_size = tuple(kernel_size)
    offsets, table, base = _window_tables(x.shape[x.ndim - d :], kernel_size)
    small = len(offsets) <= 256
    best = local = None
    for j, offset in enumerate(offsets):
        part = x[(Ellipsis, *(slice(o, None, k) for o, k in zip(offset, kernel_size)))]
        if best is None:
            best = part.copy()
            continue
        greater = np.greater(part, best)
        np.maximum(best, part, out=best)
        won = greater.view(np.uint8) * np.uint8(j) if small else greater * np.intp(j)
        if local is None:
            local = won
        else:
            np.maximum(local, won, out=local)
    if np.isnan(best).any():  # PyTorch picks the last NaN of a window: the general kernel
        return None
    if local is None:  # a one-element window
        return best, np.broadcast_to(base, best.shape).copy()
    flat = table.take(local)
    flat += base
    return best, flat


def _pair(v) -> tuple | None:
    v = tuple(v)
    if len(v) == 1:
        v = v * 2
    return v if len(v) == 2 and all(type(i) is int for i in v) else None


def _im2col(self, kernel_size, dilation, padding, stride):
    """``im2col`` of a float32/float64 (N, C, H, W) tensor: one strided window view copied into columns.

    The view's axes (N, C, kh, kw, oh, ow) are the columns' order, so one copy writes them; other
    dtypes, unbatched inputs and anything the decomposition's checks would refuse decline to it.
    """
    dtype = self.dtype
    if dtype not in _FAST_DTYPES or self.ndim != 4:
        raise Decline("im2col: not a float32/float64 (N, C, H, W) tensor")
    pairs = [_pair(v) for v in (kernel_size, dilation, padding, stride)]
    if None in pairs:
        raise Decline("im2col: arguments are not pairs of ints")
    (kh, kw), (dh, dw), (ph, pw), (sh, sw) = pairs
    n, c, h, w = self.shape
    if min(kh, kw, dh, dw, sh, sw) < 1 or min(ph, pw) < 0 or n * c == 0:
        raise Decline("im2col: left to the decomposition's checks")
    span_h, span_w = dh * (kh - 1) + 1, dw * (kw - 1) + 1
    oh, ow = (h + 2 * ph - span_h) // sh + 1, (w + 2 * pw - span_w) // sw + 1
    if oh < 1 or ow < 1:
        raise Decline("im2col: no sliding block fits (the decomposition raises)")
    x = native(self)
    if ph or pw:
        padded = np.zeros((n, c, h + 2 * ph, w + 2 * pw), x.dtype)
        padded[:, :, ph : ph + h, pw : pw + w] = x
        x = padded
    s = x.strides
    view = np.lib.stride_tricks.as_strided(
        x,
        (n, c, kh, kw, oh, ow),
        (s[0], s[1], s[2] * dh, s[3] * dw, s[2] * sh, s[3] * sw),
        writeable=False,
    )
    cols = view.copy()  # C order: the columns' layout
    return wrap_same(cols.reshape(n, c * kh * kw, oh * ow), dtype)


def _unpool(d: int):
    def kernel(self, indices, output_size, *checked_only):
        """max_unpool for float32/float64 values and in-range int64 indices (else the decomposition)."""
        dtype = self.dtype
        if dtype not in _FAST_DTYPES or indices.dtype is not opweave.int64 or self.ndim not in (d + 1, d + 2):
            raise Decline("max_unpool: not float32/float64 values with int64 indices")
        if tuple(indices.shape) != tuple(self.shape) or len(tuple(output_size)) != d or checked_only:
            raise Decline("max_unpool: left to the decomposition's checks")
        size = tuple(int(s) for s in output_size)
        plane = math.prod(size)
        lead = tuple(self.shape[: self.ndim - d])
        rows = math.prod(lead)
        plane_in = math.prod(self.shape[self.ndim - d :])
        x = native(self).reshape(rows, plane_in)
        i = native(indices).reshape(rows, plane_in)
        if i.size and (i.min() < 0 or i.max() >= plane):
            raise Decline("max_unpool: an index outside the plane (the decomposition raises)")
        out = np.zeros(rows * plane, x.dtype)
        if i.size:
            flat = i + np.arange(0, rows * plane, plane, dtype=np.int64)[:, None]
            out[flat.reshape(-1)] = x.reshape(-1)
        return wrap_same(out.reshape(lead + size), dtype)

    kernel.__name__ = kernel.__qualname__ = f"_max_unpool{d}d"
    return kernel


KERNELS = {
    "relu": _relu,
    "max_unpool2d": _unpool(2),
    "im2col": _im2col,
    "add_.Tensor": _inplace("add_.Tensor", np.add, True),
    "sub_.Tensor": _inplace("sub_.Tensor", np.subtract, True),
    "mul_.Tensor": _inplace("mul_.Tensor", np.multiply, False),
    "mul_.Scalar": _inplace("mul_.Scalar", np.multiply, False),
    "div_.Tensor": _inplace("div_.Tensor", np.true_divide, False),
    "div_.Scalar": _inplace("div_.Scalar", np.true_divide, False),
}
