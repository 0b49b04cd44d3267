"""A tiny third-party backend used by the plugin and dispatcher tests.

Device type ``toy``: its storage is a Python ``bytearray`` (not the CPU
backend's), and it implements only a few prims, counting calls, so tests can
see where the dispatcher sent them.
"""

from __future__ import annotations

import collections

import numpy as np
import opweave
from opweave.backends import Backend, Storage

CALLS = collections.Counter()
TOY = opweave.device("toy")


class ToyBackend(Backend):
    """Bytes in a bytearray; copies through NumPy views of it."""

    name = "toy"

    def allocate(self, nbytes, device):
        """A zero-filled bytearray."""
        return Storage(bytearray(nbytes), nbytes, TOY, self)

    def copy_from_host(self, array, device):
        """Copy the array's bytes in."""
        data = bytearray(np.ascontiguousarray(array).tobytes())
        return Storage(data, len(data), TOY, self)

    def copy_to_host(self, tensor):
        """Read the tensor's elements out through a strided view of the bytes."""
        return np.array(_view(tensor), copy=True, order="C")


def _view(t):
    item = t.dtype.itemsize
    if 0 in t.shape:
        return np.empty(t.shape, t.dtype.numpy)
    buf = np.frombuffer(t.untyped_storage().handle, np.uint8)
    strides = tuple(s * item for s in t.stride())
    return np.ndarray(t.shape, t.dtype.numpy, buf, t.storage_offset() * item, strides)


def _new(array, dtype):
    return BACKEND.from_host(np.asarray(array, dtype=dtype.numpy), TOY)


def toy_add(a, b):
    """prims::add on toy tensors."""
    CALLS["prims::add"] += 1
    return _new(_view(a) + _view(b), a.dtype)


def toy_mul(a, b):
    """prims::mul on toy tensors."""
    CALLS["prims::mul"] += 1
    return _new(_view(a) * _view(b), a.dtype)


def toy_convert(a, dtype):
    """prims::convert_element_type on toy tensors."""
    CALLS["prims::convert_element_type"] += 1
    return _new(_view(a).astype(dtype.numpy), dtype)


def toy_full(shape, value, dtype, device):
    """prims::full on the toy device."""
    CALLS["prims::full"] += 1
    return _new(np.full(shape, value), dtype)


BACKEND = ToyBackend()


@opweave.hookimpl
def opweave_register(registry):
    """Declare the toy device and its few kernels."""
    registry.backend(BACKEND)
    registry.impl("prims::add", toy_add, backend="toy")
    registry.impl("prims::mul", toy_mul, backend="toy")
    registry.impl("prims::convert_element_type", toy_convert, backend="toy")
    registry.impl("prims::full", toy_full, backend="toy")
