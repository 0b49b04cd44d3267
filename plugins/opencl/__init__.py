"""opweave's OpenCL backend: device buffers, kernels from ``opweave_kernelgen`` compiled at run time.

Device strings are ``opencl`` and ``opencl:N`` (platform order, then device
order; ``OPWEAVE_OPENCL_DEVICE=N`` keeps only device N). Prims without an
OpenCL kernel run through the core's CPU fallback (copies in and out, a
one-time warning). ``docs/opencl.md`` describes the design.

Its device module is ``opweave.opencl`` (``device_module.py``): ``is_available``,
``unavailable_reason``, ``device_count``, ``memory_stats``, ``empty_cache``,
``synchronize``; they are also importable from this package.
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
    """Declare the OpenCL backend and register the generator's kernels (when a device exists)."""
    register_device(registry, BACKEND, device_module)


@opweave.hookimpl
def opweave_conformance_config(backend):
    """The conformance expectations of the OpenCL backend (None for other backends)."""
    return conformance_expectations(BACKEND) if backend == NAME else None
