"""``opweave.philox``: the reference Philox4x32-10 stream every backend's random prims follow.

The counter-based generator behind ``opweave.manual_seed`` and the random prims: a backend
that draws the same words from ``(seed, offset)`` gives the same numbers as every other
backend. These are NumPy implementations; a device backend may use them as its oracle or,
on a host device, as its kernels.
"""

from __future__ import annotations

from ._philox import (
    ROUNDS,
    bernoulli_values,
    block_counters,
    check_seed_offset,
    normal_values,
    philox4x32,
    randint_values,
    random_words,
    randperm_values,
    seed_to_key,
    uniform_unit,
    uniform_values,
)
from ._philox import _below as largest_below

__all__ = [
    "ROUNDS",
    "bernoulli_values",
    "block_counters",
    "check_seed_offset",
    "largest_below",
    "normal_values",
    "philox4x32",
    "randint_values",
    "random_words",
    "randperm_values",
    "seed_to_key",
    "uniform_unit",
    "uniform_values",
]
