"""opweave-vendor-example: the ``vnpu`` device, a pretend NPU that implements only the prims.

Installed as its own distribution, it registers through the entry point group
``opweave.backends`` (see ``pyproject.toml``); opweave imports this module the
first time a ``vnpu`` tensor is made. Its memory is its own (``_arena``), its
kernels call NumPy/SciPy on views of that memory (``kernels/``), and every
canonical op reaches it through its reference decomposition into prims.
"""

from __future__ import annotations

import opweave

from ._backend import BACKEND, NAME, memory_stats

__all__ = ["BACKEND", "memory_stats", "opweave_conformance_config", "opweave_register"]


@opweave.hookimpl
def opweave_register(registry):
    """Declare the vnpu backend and register its prim kernels."""
    from .kernels import register_all

    registry.backend(BACKEND)
    register_all(registry)


# What the conformance suite should expect from vnpu beyond the defaults: nothing is hidden here
# that a user of the device would not also see. Keep every xfail honest and give its reason.
CONFORMANCE = {
    "tolerances": {},  # dtype name -> {"rtol": ..., "atol": ...}; the suite's defaults suit NumPy kernels
    "xfail": {},  # op name -> reason
    "skip_dtypes": [],  # dtype names the device does not support
}


@opweave.hookimpl
def opweave_conformance_config(backend):
    """The conformance expectations of the vnpu backend (None for other backends)."""
    return CONFORMANCE if backend == NAME else None
