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
    from .kernels._quiet import silence_direct_kernel_warnings

    silence_direct_kernel_warnings()
    registry.backend(BACKEND)
    registry.device_module(BACKEND.name, device_module)
    register_all(registry)


# -- public helpers for test devices that borrow the CPU's kernels (see opweave_conformance.testing) --


def reference_kernels(prims_only: bool = True) -> dict:
    """The CPU backend's NumPy kernels by op name (``"prims::add"`` ...; prims only by default)."""
    from .kernels import kernel_table

    return kernel_table(prims_only)


def host_array(t: opweave.Tensor):
    """The NumPy view of a tensor whose storage holds host memory in the CPU backend's layout."""
    from ._backend import native

    return native(t)


def from_host_array(array, dtype: opweave.dtype | None = None) -> opweave.Tensor:
    """A CPU tensor owning the NumPy result ``array`` (converted to ``dtype`` when given)."""
    from ._backend import wrap

    return wrap(array, dtype)
