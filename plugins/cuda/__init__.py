"""opweave's CUDA backend: NVRTC-compiled kernels from ``opweave_kernelgen``, the driver API through cuda-bindings.

Device strings are ``cuda`` and ``cuda:N``. Kernels are the shared generator's, in the
CUDA C dialect (``opweave_kernelgen.dialect.cuda``), compiled by NVRTC to a cubin for
the device's own architecture and cached on disk; memory is CUDA's stream-ordered pool.
Without a driver (``cuInit`` fails) the backend reports itself unavailable with that
reason and registers no kernels. ``docs/cuda.md`` describes the design.

Its device module is ``opweave.cuda`` (``device_module.py``).
"""

from __future__ import annotations

import opweave
from opweave_kernelgen import conformance_expectations
from opweave_kernelgen.devices import register_device

from . import device_module
from ._backend import BACKEND, NAME
from .device_module import device_count, empty_cache, is_available, memory_stats, synchronize, unavailable_reason

__all__ = [
    "BACKEND",
    "device_count",
    "empty_cache",
    "is_available",
    "memory_stats",
    "opweave_conformance_config",
    "opweave_register",
    "synchronize",
    "unavailable_reason",
]


@opweave.hookimpl
def opweave_register(registry):
    """Declare the CUDA backend, register its kernels (when a device exists) and the NCCL engine (when it can)."""
    if register_device(registry, BACKEND, device_module):  # the generator's kernels, then CUDA's own over them
        from . import _kernels

        _kernels.register(registry, BACKEND)
    from . import _nccl_engine

    _nccl_engine.register(registry, BACKEND)


@opweave.hookimpl
def opweave_conformance_config(backend):
    """The conformance expectations of the CUDA backend (None for other backends)."""
    return conformance_expectations(BACKEND) if backend == NAME else None
