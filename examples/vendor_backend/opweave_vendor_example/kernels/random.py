"""Random prims: the Philox4x32-10 stream of ``opweave.random``, the specification every backend follows.

A real device runs Philox in a kernel; the bits must equal the specification's,
so the same seed gives the same tensor on every backend. The vnpu evaluates the
specification's reference functions and copies the values to the device.
"""

from __future__ import annotations

import numpy as np
from opweave import random as philox

from .._backend import kernel


@kernel("random_bits")
def random_bits(shape, seed, offset, device):
    """Philox words (uint32 values in int64)."""
    return philox.random_words(int(np.prod(shape, dtype=np.int64)), seed, offset).reshape(tuple(shape))


@kernel("uniform")
def uniform(shape, low, high, seed, offset, dtype, device):
    """Uniform values in [low, high)."""
    return philox.uniform_values(tuple(shape), float(low), float(high), seed, offset, dtype.numpy)


@kernel("normal")
def normal(shape, mean, std, seed, offset, dtype, device):
    """Box-Muller normals."""
    return philox.normal_values(tuple(shape), float(mean), float(std), seed, offset, dtype.numpy)


@kernel("bernoulli", widen=False)
def bernoulli(p, seed, offset):
    """1 where the element's uniform value is below ``p``; ValueError for ``p`` outside [0, 1]."""
    if p.size and not np.all((p >= 0) & (p <= 1)):
        raise ValueError("prims::bernoulli: expects 0 <= p <= 1 for every element of 'p'")
    return philox.bernoulli_values(np.ascontiguousarray(p), seed, offset)


@kernel("randint")
def randint(shape, low, high, seed, offset, dtype, device):
    """Integers in [low, high)."""
    return philox.randint_values(tuple(shape), low, high, seed, offset)


@kernel("randperm")
def randperm(n, seed, offset, dtype, device):
    """A permutation of range(n)."""
    return philox.randperm_values(n, seed, offset)
