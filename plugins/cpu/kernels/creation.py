"""Allocation, fills and ranges."""

from __future__ import annotations

import numpy as np
from opweave.backends import Storage
from opweave.backends.kernel import wrap_storage

from .._backend import BACKEND, CPU
from ._common import wrap


def empty_strided(shape, strides, dtype, device):
    """Uninitialised memory with the given strides."""
    span = 1 + sum((s - 1) * st for s, st in zip(shape, strides)) if all(shape) else 0
    buf = np.empty(span * dtype.itemsize, np.uint8).view(dtype.numpy) if dtype.itemsize else None
    storage = Storage(buf, buf.nbytes, CPU, BACKEND)
    return wrap_storage(storage, shape, strides, 0, dtype=dtype, device=CPU)


def empty_permuted(shape, physical_layout, dtype, device):
    """Uninitialised dense memory in the given dim order."""
    physical = np.empty([shape[d] for d in physical_layout], dtype.numpy)
    return wrap(physical.transpose(np.argsort(physical_layout)), dtype)


def full(shape, fill_value, dtype, device):
    """A filled tensor."""
    return wrap(np.full(tuple(shape), _fill(fill_value, dtype), dtype.numpy), dtype)


def scalar_tensor(s, dtype, device):
    """A 0-dim tensor."""
    return wrap(np.full((), _fill(s, dtype), dtype.numpy), dtype)


def _fill(value, dtype):
    if dtype.kind == "bool":
        return bool(value)
    if dtype.kind in ("int", "uint") and isinstance(value, float):
        return int(value) if np.isfinite(value) else 0
    return value


def iota(length, start, step, dtype, device):
    """``start + step * i`` for ``i < length``."""
    return wrap((start + step * np.arange(length, dtype=np.int64)).astype(dtype.numpy), dtype)


KERNELS = {
    "prims::empty_strided": empty_strided,
    "prims::empty_permuted": empty_permuted,
    "prims::full": full,
    "prims::scalar_tensor": scalar_tensor,
    "prims::iota": iota,
}


def eye(n, m, dtype, device):
    """Identity-like matrix."""
    return wrap(np.eye(n, m, dtype=dtype.numpy), dtype)


def tril_indices(row, col, offset, dtype, device):
    """Lower-triangle coordinates, row-major."""
    return wrap(np.stack(np.tril_indices(row, offset, col)).astype(dtype.numpy), dtype)


def triu_indices(row, col, offset, dtype, device):
    """Upper-triangle coordinates, row-major."""
    return wrap(np.stack(np.triu_indices(row, offset, col)).astype(dtype.numpy), dtype)


KERNELS.update(
    {
        "prims::eye": eye,
        "prims::tril_indices": tril_indices,
        "prims::triu_indices": triu_indices,
    }
)
