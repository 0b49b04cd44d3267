"""FFTs with scipy.fft (pocketfft; single precision stays single precision)."""

from __future__ import annotations

import math

import numpy as np
import scipy.fft as sfft

from ._common import native, wrap


def _dims(dim, ndim):
    return [d % ndim for d in dim]


def _scale(y: np.ndarray, n: int, normalization: int) -> np.ndarray:
    """Apply ATen's normalization: 0 none, 1 ``1/sqrt(n)``, 2 ``1/n``."""
    if normalization == 1:
        y *= y.real.dtype.type(1 / math.sqrt(n))
    elif normalization == 2:
        y *= y.real.dtype.type(1 / n)
    return y


def _empty_batch(x: np.ndarray, shape, dtype):
    """The (empty) result when a non-transformed dim has size 0."""
    return wrap(np.zeros(shape, dtype.numpy), dtype) if x.size == 0 else None


def fft_c2c(self, dim, normalization, forward):
    """Complex FFT over ``dim``, forward or (unscaled) backward."""
    x = native(self)
    axes = _dims(dim, x.ndim)
    if not axes or x.size == 0:
        return wrap(np.array(x, copy=True, order="C"), self.dtype)
    y = sfft.fftn(x, axes=axes) if forward else sfft.ifftn(x, axes=axes, norm="forward")
    n = math.prod(x.shape[a] for a in axes)
    return wrap(np.ascontiguousarray(_scale(y, n, normalization)), self.dtype)


def fft_r2c(self, dim, normalization, onesided):
    """Real-to-complex forward FFT; the last dim of ``dim`` halved when ``onesided``."""
    x = native(self)
    axes = _dims(dim, x.ndim)
    out = self.dtype.to_complex()
    shape = list(x.shape)
    if onesided:
        shape[axes[-1]] = shape[axes[-1]] // 2 + 1
    empty = _empty_batch(x, shape, out)
    if empty is not None:
        return empty
    y = sfft.rfftn(x, axes=axes) if onesided else sfft.fftn(x.astype(out.numpy), axes=axes)
    n = math.prod(x.shape[a] for a in axes)
    return wrap(np.ascontiguousarray(_scale(y, n, normalization)), out)


def fft_c2r(self, dim, normalization, last_dim_size):
    """Complex-to-real backward FFT (unscaled) producing ``last_dim_size`` entries on the last dim of ``dim``."""
    x = native(self)
    axes = _dims(dim, x.ndim)
    out = self.dtype.to_real()
    sizes = [x.shape[a] for a in axes[:-1]] + [last_dim_size]
    shape = list(x.shape)
    shape[axes[-1]] = last_dim_size
    empty = _empty_batch(x, shape, out)
    if empty is not None:
        return empty
    y = sfft.irfftn(x, s=sizes, axes=axes, norm="forward")
    return wrap(np.ascontiguousarray(_scale(y, math.prod(sizes), normalization)), out)


KERNELS = {
    "prims::fft_c2c": fft_c2c,
    "prims::fft_r2c": fft_r2c,
    "prims::fft_c2r": fft_c2r,
}
