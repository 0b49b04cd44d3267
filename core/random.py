"""``opweave.random``: seeds, generators and their states (``torch.random``'s API).

Random values in opweave are counter-based: every random op draws from a
:class:`Generator` — its ``generator=`` argument, else the default generator of the
op's device — by reading the generator's ``(seed, offset)``, handing them to the
random prims (Philox4x32-10, specified bit for bit by the functions below) and
advancing the offset by the counter blocks the prims consume. So one seed gives the
same values on every backend that implements the prims.

The offset advance rule (blocks per prim call drawing ``n`` values): ``random_bits``,
and ``uniform``/``bernoulli`` with a 16- or 32-bit float dtype: ``ceil(n / 4)``;
``uniform``/``bernoulli`` in float64, ``normal``, ``randint``, ``randperm``:
``ceil(n / 2)``. See :mod:`opweave._random` for the details (complex values, meta). A
backend that registers its own kernel for a random canonical op must draw the same blocks:
take ``(seed, offset)`` with :func:`claim` ``(op, generator, device, blocks)``,
``blocks`` from :func:`philox_blocks`.

The stream itself, for backends implementing the random prims (each a pure function of
``(seed, offset)``), is specified by :mod:`opweave.philox`.

State format: ``Generator.get_state()`` is a CPU uint8 tensor of 16 bytes, the seed
then the offset, each a little-endian uint64.

Functions
    ``manual_seed(seed)`` seeds every device's default generator (returns the CPU one),
    ``seed()`` does so with a non-deterministic seed (returns it), ``initial_seed()``,
    ``get_rng_state()`` / ``set_rng_state(state)`` (CPU default generator),
    ``default_generator(device="cpu")`` (per device, created lazily) and
    ``fork_rng(devices=None, enabled=True)`` (a context manager restoring states).
"""

from __future__ import annotations

from ._random import (
    DEFAULT_SEED,
    Generator,
    claim,
    default_generator,
    fork_rng,
    get_rng_state,
    initial_seed,
    manual_seed,
    philox_blocks,
    seed,
    set_rng_state,
)

__all__ = [
    "DEFAULT_SEED",
    "Generator",
    "claim",
    "default_generator",
    "fork_rng",
    "get_rng_state",
    "initial_seed",
    "manual_seed",
    "philox_blocks",
    "seed",
    "set_rng_state",
]
