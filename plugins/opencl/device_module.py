"""``opweave.opencl``: the OpenCL device module (registered with ``registry.device_module``).

As ``torch.cuda`` is for CUDA: availability, device count, the current device,
synchronisation and the caching allocator's statistics. Devices are
``opencl:0`` ... in platform order, then device order; ``device=None`` means the
current device (``opencl:0`` unless :func:`set_device` chose another).
"""

from __future__ import annotations

import opweave

from ._backend import BACKEND, NAME

__all__ = [
    "current_device",
    "device_count",
    "empty_cache",
    "is_available",
    "max_memory_allocated",
    "memory_allocated",
    "memory_stats",
    "set_device",
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


def current_device() -> int:
    """The index of the current OpenCL device of this thread: what ``device="opencl"`` means."""
    return opweave.backends.current_device_index(NAME)


def set_device(device) -> None:
    """Make ``device`` (an index, ``"opencl:1"`` or an ``opweave.device``) the current OpenCL device of this thread."""
    opweave.backends.set_device_index(_device(device))


def synchronize(device=None) -> None:
    """Wait for the work queued on an OpenCL device."""
    BACKEND.synchronize(_device(device))


def memory_stats(device=None) -> dict:
    """``{"allocated", "reserved", "cached", "peak", "num_allocs", "num_reuses"}`` (bytes) of an OpenCL device."""
    return BACKEND.memory_stats(_device(device))


def memory_allocated(device=None) -> int:
    """Bytes held by live tensors on an OpenCL device."""
    return memory_stats(device)["allocated"]


def max_memory_allocated(device=None) -> int:
    """The peak of :func:`memory_allocated` on an OpenCL device."""
    return memory_stats(device)["peak"]


def empty_cache(device=None) -> None:
    """Give the allocator's cached free blocks back to the driver (every device, or ``device``)."""
    BACKEND.empty_cache(None if device is None else _device(device))


def _device(device) -> opweave.device:
    """``device`` as an OpenCL device with an index (None: the current one; an int: that index)."""
    if device is None:
        return opweave.device(NAME, current_device())
    dev = opweave.device(NAME, device) if isinstance(device, int) else opweave.device(device)
    if dev.type != NAME:
        raise ValueError(f"expected an {NAME} device, got '{dev}'")
    return dev if dev.index is not None else opweave.device(NAME, current_device())
