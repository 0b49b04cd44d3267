"""``opweave.vnpu``: the vnpu device module (registered with ``registry.device_module``).

What ``torch.cuda`` offers for CUDA, for the two pretend NPUs ``vnpu:0`` and
``vnpu:1``: availability, device count, synchronisation and the arenas'
allocator statistics. ``device=None`` means ``vnpu:0``.
"""

from __future__ import annotations

from ._backend import BACKEND

__all__ = ["device_count", "is_available", "max_memory_allocated", "memory_allocated", "memory_stats", "synchronize"]


def is_available() -> bool:
    """Whether a vnpu can be used (always: it is simulated in host memory)."""
    return BACKEND.is_available()


def device_count() -> int:
    """The number of vnpu devices."""
    return BACKEND.device_count()


def synchronize(device=None) -> None:
    """Wait for the work queued on a vnpu (its kernels run synchronously: nothing to wait for)."""
    BACKEND.synchronize(device)


def memory_stats(device=None) -> dict:
    """``{"allocated", "reserved", "peak", "num_allocs", ...}`` (bytes; live blocks) of a vnpu device."""
    return BACKEND.memory_stats(device)


def memory_allocated(device=None) -> int:
    """Bytes held by live tensors on a vnpu device."""
    return memory_stats(device)["allocated"]


def max_memory_allocated(device=None) -> int:
    """The peak of :func:`memory_allocated` on a vnpu device."""
    return memory_stats(device)["peak"]
