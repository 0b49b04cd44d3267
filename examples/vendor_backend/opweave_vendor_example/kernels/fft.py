"""FFT prims through ``scipy.fft`` (single precision stays single precision)."""

from __future__ import annotations

import math

import numpy as np
import scipy.fft as sfft

from .._backend import kernel


def _scaled(y: np.ndarray, n: int, normalization: int) -> np.ndarray:
    """ATen's normalization: 0 none, 1 ``1/sqrt(n)``, 2 ``1/n``."""
    scale = (1.0, 1 / math.sqrt(n), 1 / n)[normalization]
    return y * y.real.dtype.type(scale) if scale != 1.0 else y


@kernel("fft_c2c")
def fft_c2c(x, dim, normalization, forward):
    """Complex FFT over ``dim``, forward or (unscaled) backward."""
    axes = [d % x.ndim for d in dim]
    if not axes or x.size == 0:
        return x
    y = sfft.fftn(x, axes=axes) if forward else sfft.ifftn(x, axes=axes, norm="forward")
    return _scaled(y, math.prod(x.shape[a] for a in axes), normalization)


@kernel("fft_r2c")
def fft_r2c(x, dim, normalization, onesided):
    """Real-to-complex forward FFT; the last transformed dim halved when ``onesided``."""
    axes = [d % x.ndim for d in dim]
    if x.size == 0:
        shape = list(x.shape)
        shape[axes[-1]] = shape[axes[-1]] // 2 + 1 if onesided else shape[axes[-1]]
        return np.zeros(shape, np.complex64)
    y = sfft.rfftn(x, axes=axes) if onesided else sfft.fftn(x.astype(np.result_type(x, np.complex64)), axes=axes)
    return _scaled(y, math.prod(x.shape[a] for a in axes), normalization)


@kernel("fft_c2r")
def fft_c2r(x, dim, normalization, last_dim_size):
    """Complex-to-real backward FFT (unscaled) with ``last_dim_size`` entries on the last transformed dim."""
    axes = [d % x.ndim for d in dim]
    sizes = [x.shape[a] for a in axes[:-1]] + [last_dim_size]
    if x.size == 0:
        shape = list(x.shape)
        shape[axes[-1]] = last_dim_size
        return np.zeros(shape, x.real.dtype)
    y = sfft.irfftn(x, s=sizes, axes=axes, norm="forward")
    return _scaled(y, math.prod(sizes), normalization)
