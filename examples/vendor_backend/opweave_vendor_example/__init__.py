"""opweave-vendor-example: the ``vnpu`` device, a pretend NPU that implements only the prims.

Installed as its own distribution, it registers through the entry point group
``opweave.backends`` (see ``pyproject.toml``); opweave imports this module the
first time a ``vnpu`` tensor is made. Its memory is its own (``_arena``), its
kernels call NumPy/SciPy on views of that memory (``kernels/``), and every
canonical op reaches it through its reference decomposition into prims.
"""

from __future__ import annotations

import opweave

from . import device_module
from ._backend import BACKEND, NAME, memory_stats

__all__ = ["BACKEND", "memory_stats", "opweave_conformance_config", "opweave_register"]


@opweave.hookimpl
def opweave_register(registry):
    """Declare the vnpu backend and register its prim kernels."""
    from .kernels import register_all

    registry.backend(BACKEND)
    registry.device_module(NAME, device_module)  # opweave.vnpu
    register_all(registry)


# What the conformance suite should expect from vnpu beyond its defaults. Every entry must be a deviation a
# user of the device would also see, with its reason; the vnpu's quick and full runs pass, so it declares none.
CONFORMANCE = {
    "tolerances": {},  # dtype name -> (rtol, atol); the larger of this and the suite's wins
    "xfail": {},  # op name or fnmatch pattern -> reason, or {"reason": ..., "dtypes": [dtype names]}
    "skip_dtypes": [],  # dtype names the device does not have, e.g. ["float64", "complex128"]
}


@opweave.hookimpl
def opweave_conformance_config(backend):
    """The conformance expectations of the vnpu backend (None for other backends)."""
    return CONFORMANCE if backend == NAME else None
