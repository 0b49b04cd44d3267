"""Allocation, fills, ranges, eye and triangle indices."""

from __future__ import annotations

import math

import numpy as np

from .._backend import kernel


def _scalar(value, dtype) -> np.ndarray:
    """``value`` as a 0-dim array of ``dtype`` (floats truncate toward zero for integers; nan/inf give 0)."""
    if dtype.kind == "bool":
        value = bool(value)
    elif dtype.kind in ("int", "uint") and isinstance(value, float):
        value = int(value) if math.isfinite(value) else 0
    return np.asarray(value, dtype.numpy)


@kernel("empty_strided")
@kernel("empty_permuted")
def empty(*args):
    """Uninitialised memory: the kernel writes nothing (the arena block keeps whatever it held)."""
    return None


@kernel("full")
def full(shape, fill_value, dtype, device):
    """``fill_value`` everywhere."""
    return np.broadcast_to(_scalar(fill_value, dtype), tuple(shape))


@kernel("scalar_tensor")
def scalar_tensor(s, dtype, device):
    """A 0-dim tensor holding ``s``."""
    return _scalar(s, dtype)


@kernel("iota")
def iota(length, start, step, dtype, device):
    """``start + step * i``."""
    return start + step * np.arange(length, dtype=np.int64)


@kernel("eye")
def eye(n, m, dtype, device):
    """Ones on the main diagonal."""
    return np.eye(n, m, dtype=bool)


@kernel("tril_indices")
def tril_indices(row, col, offset, dtype, device):
    """Coordinates of the lower triangle, row-major."""
    return np.stack(np.tril_indices(row, offset, col)).reshape(2, -1)


@kernel("triu_indices")
def triu_indices(row, col, offset, dtype, device):
    """Coordinates of the upper triangle, row-major."""
    return np.stack(np.triu_indices(row, offset, col)).reshape(2, -1)
