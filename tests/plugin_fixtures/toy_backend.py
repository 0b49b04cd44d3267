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


# -- random prims (appended for tests/test_random_ops.py) -------------------------------------------
# The toy device implements the random prims by calling the Philox specification in
# opweave._philox directly, so that a seed gives the CPU's values bit for bit.

from opweave import _philox  # noqa: E402


def toy_random_bits(shape, seed, offset, device):
    """prims::random_bits on the toy device."""
    CALLS["prims::random_bits"] += 1
    n = int(np.prod(shape, dtype=np.int64))
    return _new(_philox.random_words(n, seed, offset).astype(np.int64).reshape(tuple(shape)), opweave.int64)


def toy_uniform(shape, low, high, seed, offset, dtype, device):
    """prims::uniform on the toy device."""
    CALLS["prims::uniform"] += 1
    return _new(_philox.uniform_values(tuple(shape), float(low), float(high), seed, offset, dtype.numpy), dtype)


def toy_normal(shape, mean, std, seed, offset, dtype, device):
    """prims::normal on the toy device."""
    CALLS["prims::normal"] += 1
    return _new(_philox.normal_values(tuple(shape), float(mean), float(std), seed, offset, dtype.numpy), dtype)


def toy_bernoulli(p, seed, offset):
    """prims::bernoulli on the toy device (ValueError for p outside [0, 1])."""
    CALLS["prims::bernoulli"] += 1
    probs = np.ascontiguousarray(_view(p))
    if probs.size and not np.all((probs >= 0) & (probs <= 1)):
        raise ValueError("prims::bernoulli: expects 0 <= p <= 1 for every element of 'p'")
    return _new(_philox.bernoulli_values(probs, seed, offset), p.dtype)


def toy_randint(shape, low, high, seed, offset, dtype, device):
    """prims::randint on the toy device."""
    CALLS["prims::randint"] += 1
    return _new(_philox.randint_values(tuple(shape), low, high, seed, offset), dtype)


def toy_randperm(n, seed, offset, dtype, device):
    """prims::randperm on the toy device."""
    CALLS["prims::randperm"] += 1
    return _new(_philox.randperm_values(n, seed, offset), dtype)


RANDOM_KERNELS = {
    "prims::random_bits": toy_random_bits,
    "prims::uniform": toy_uniform,
    "prims::normal": toy_normal,
    "prims::bernoulli": toy_bernoulli,
    "prims::randint": toy_randint,
    "prims::randperm": toy_randperm,
}

_register_basic_kernels = opweave_register


@opweave.hookimpl
def opweave_register(registry):  # noqa: F811 - extends the hook above with the random prims
    """Declare the toy device, its few kernels and the random prims."""
    _register_basic_kernels(registry)
    for name, fn in RANDOM_KERNELS.items():
        registry.impl(name, fn, backend="toy")
