"""``opweave.opencl``: the OpenCL device module (registered with ``registry.device_module``).

As ``torch.cuda`` is for CUDA: availability, device count, synchronisation and
the caching allocator's statistics. Devices are ``opencl:0`` ... in platform
order, then device order; ``device=None`` means ``opencl:0``.
"""

from __future__ import annotations

from ._backend import BACKEND

__all__ = [
    "device_count",
    "empty_cache",
    "is_available",
    "max_memory_allocated",
    "memory_allocated",
    "memory_stats",
    "synchronize",
    "unavailable_reason",
]


def is_available() -> bool:
    """Whether an OpenCL device can be used (see :func:`unavailable_reason` when not)."""
    return BACKEND.is_available()


def unavailable_reason() -> str | None:
    """Why no OpenCL device can be used: pyopencl missing, no platform, no device (None if one can)."""
    return BACKEND.unavailable_reason()


def device_count() -> int:
    """The number of OpenCL devices (0 when none can be used)."""
    return BACKEND.device_count() if BACKEND.is_available() else 0


def synchronize(device=None) -> None:
    """Wait for the work queued on an OpenCL device."""
    BACKEND.synchronize(device)


def memory_stats(device=None) -> dict:
    """``{"allocated", "reserved", "cached", "peak", "num_allocs", "num_reuses"}`` (bytes) of an OpenCL device."""
    return BACKEND.memory_stats(device)


def memory_allocated(device=None) -> int:
    """Bytes held by live tensors on an OpenCL device."""
    return memory_stats(device)["allocated"]


def max_memory_allocated(device=None) -> int:
    """The peak of :func:`memory_allocated` on an OpenCL device."""
    return memory_stats(device)["peak"]


def empty_cache(device=None) -> None:
    """Give the allocator's cached free blocks back to the driver (every device, or ``device``)."""
    BACKEND.empty_cache(device)
