"""Random prims: the reference Philox implementation of ``opweave.philox`` (already NumPy)."""

from __future__ import annotations

import numpy as np
from opweave import philox

from ._common import native, wrap


def random_bits(shape, seed, offset, device):
    """Philox words as int64."""
    n = int(np.prod(shape, dtype=np.int64))
    return wrap(philox.random_words(n, seed, offset).astype(np.int64).reshape(tuple(shape)))


def uniform(shape, low, high, seed, offset, dtype, device):
    """Uniform [low, high)."""
    return wrap(philox.uniform_values(tuple(shape), float(low), float(high), seed, offset, dtype.numpy), dtype)


def normal(shape, mean, std, seed, offset, dtype, device):
    """Box-Muller normals."""
    return wrap(philox.normal_values(tuple(shape), float(mean), float(std), seed, offset, dtype.numpy), dtype)


def bernoulli(p, seed, offset):
    """0/1 with probability p; ValueError for p outside [0, 1]."""
    probs = native(p).astype(np.float64)
    if probs.size and not np.all((probs >= 0) & (probs <= 1)):
        raise ValueError("prims::bernoulli: expects 0 <= p <= 1 for every element of 'p'")
    draws = philox.bernoulli_values(np.ascontiguousarray(native(p)), seed, offset)
    return wrap(np.asarray(draws).reshape(tuple(p.shape)), p.dtype)  # 0-dim p gives a 0-dim result


def randint(shape, low, high, seed, offset, dtype, device):
    """Integers in [low, high)."""
    return wrap(philox.randint_values(tuple(shape), low, high, seed, offset), dtype)


def randperm(n, seed, offset, dtype, device):
    """A permutation of range(n)."""
    return wrap(philox.randperm_values(n, seed, offset), dtype)


KERNELS = {
    "prims::random_bits": random_bits,
    "prims::uniform": uniform,
    "prims::normal": normal,
    "prims::bernoulli": bernoulli,
    "prims::randint": randint,
    "prims::randperm": randperm,
}
