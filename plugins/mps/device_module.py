"""``opweave.mps``: the Metal device module (registered with ``registry.device_module``), as ``torch.mps``.

There is one Metal device (``mps``, the system's default GPU). Memory figures are bytes:
:func:`current_allocated_memory` counts live tensors, :func:`driver_allocated_memory` is what
Metal reports for the process (``MTLDevice.currentAllocatedSize``: live tensors, the
allocator's cache and the driver's own).
"""

from __future__ import annotations

import opweave

from ._backend import BACKEND, NAME

__all__ = [
    "current_allocated_memory",
    "device_count",
    "driver_allocated_memory",
    "empty_cache",
    "is_available",
    "memory_stats",
    "recommended_max_memory",
    "set_per_process_memory_fraction",
    "synchronize",
    "unavailable_reason",
]

_DEVICE = opweave.device(NAME, 0)


def is_available() -> bool:
    """Whether a Metal GPU can be used (see :func:`unavailable_reason` when not)."""
    return BACKEND.is_available()


def unavailable_reason() -> str | None:
    """Why no Metal GPU can be used: not macOS, PyObjC missing, no GPU (None if one can)."""
    return BACKEND.unavailable_reason()


def device_count() -> int:
    """The number of Metal devices: 1 where Metal is available, else 0."""
    return 1 if BACKEND.is_available() else 0


def synchronize() -> None:
    """Commit the work encoded so far and wait until the GPU has finished it."""
    BACKEND.synchronize(_DEVICE)


def empty_cache() -> None:
    """Give the caching allocator's free buffers back to Metal."""
    BACKEND.empty_cache(_DEVICE)


def memory_stats() -> dict:
    """``{"allocated", "reserved", "cached", "peak", "num_allocs", "num_reuses"}`` of the caching allocator."""
    return BACKEND.memory_stats(_DEVICE)


def current_allocated_memory() -> int:
    """Bytes held by live tensors (the allocator's blocks in use)."""
    return memory_stats()["allocated"]


def driver_allocated_memory() -> int:
    """Bytes Metal has allocated for this process (``MTLDevice.currentAllocatedSize``)."""
    return int(BACKEND.runtime(_DEVICE).device.currentAllocatedSize())


def recommended_max_memory() -> int:
    """Metal's recommended working-set size for the GPU (``recommendedMaxWorkingSetSize``), in bytes."""
    return int(BACKEND.runtime(_DEVICE).device.recommendedMaxWorkingSetSize())


def set_per_process_memory_fraction(fraction: float) -> None:
    """Limit this process's buffers to ``fraction`` of :func:`recommended_max_memory` (0: no limit).

    ``fraction`` is a float in [0, 2] (above 1 allows more than the recommended working set). An allocation
    over the limit releases the allocator's cache, retries once, then raises ``opweave.OutOfMemoryError``.
    """
    if not isinstance(fraction, float):
        raise TypeError(
            f"set_per_process_memory_fraction: argument 'fraction' must be float, not {type(fraction).__name__}"
        )
    if not 0.0 <= fraction <= 2.0:
        raise ValueError(f"set_per_process_memory_fraction: invalid fraction value {fraction}: it must be in [0, 2]")
    rt = BACKEND.runtime(_DEVICE)
    rt.limit = int(fraction * rt.device.recommendedMaxWorkingSetSize())
