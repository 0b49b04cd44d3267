"""opweave's CPU backend: every prim as a NumPy/SciPy kernel.

Registered through the entry point group ``opweave.backends`` like any
third-party plugin; the core never imports it by name.
"""

from __future__ import annotations

import opweave

from . import device_module
from ._backend import BACKEND


@opweave.hookimpl
def opweave_register(registry):
    """Declare the CPU backend and register its kernels."""
    from .kernels import register_all

    registry.backend(BACKEND)
    registry.device_module(BACKEND.name, device_module)
    register_all(registry)
