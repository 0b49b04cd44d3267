"""opweave's Metal backend for Apple GPUs: kernels from ``opweave_kernelgen`` in MSL, Metal through PyObjC.

The device string is ``mps`` (one device, the system's default GPU). Every prim the
shared generator covers runs as a generated MSL kernel; ``mm``/``bmm`` (so ``matmul``,
``linear``) use ``MPSMatrixMultiplication``; prims without a Metal kernel (the fp64-only
ones: special functions, Philox's float arithmetic...) run through the core's CPU
fallback. On Linux and Windows the backend is unavailable with the reason ("Metal
requires macOS"). ``docs/mps.md`` describes the design and what has been verified where.

Its device module is ``opweave.mps`` (``device_module.py``), as ``torch.mps``.
"""

from __future__ import annotations

import opweave
from opweave_kernelgen import conformance_expectations

from . import device_module
from ._backend import BACKEND, NAME
from .device_module import (
    current_allocated_memory,
    device_count,
    driver_allocated_memory,
    empty_cache,
    is_available,
    set_per_process_memory_fraction,
    synchronize,
    unavailable_reason,
)

__all__ = [
    "BACKEND",
    "current_allocated_memory",
    "device_count",
    "driver_allocated_memory",
    "empty_cache",
    "is_available",
    "opweave_conformance_config",
    "opweave_register",
    "set_per_process_memory_fraction",
    "synchronize",
    "unavailable_reason",
]

#: PyTorch's MPS autocast list is its CUDA list (the generic GPU table every device with an autocast dtype
#: gets) with ``batch_norm`` run in float32.
AUTOCAST_FP32 = ("batch_norm",)


@opweave.hookimpl
def opweave_register(registry):
    """Declare the mps backend, its device module and autocast policy; register its kernels where Metal runs."""
    registry.backend(BACKEND)
    registry.device_module(NAME, device_module)
    registry.autocast_policy(NAME, fp32=AUTOCAST_FP32)
    if BACKEND.is_available():
        from opweave_kernelgen import register_kernels

        from . import matmul

        register_kernels(registry, BACKEND)
        registry.impl("prims::mm", matmul.mm, backend=NAME)
        registry.impl("prims::bmm", matmul.bmm, backend=NAME)


@opweave.hookimpl
def opweave_conformance_config(backend):
    """The conformance expectations of the mps backend: float64 and complex128 skipped (None for other backends)."""
    return conformance_expectations(BACKEND) if backend == NAME else None
