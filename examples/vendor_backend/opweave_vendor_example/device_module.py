"""``opweave.vnpu``: the vnpu device module (registered with ``registry.device_module``).

What ``torch.cuda`` offers for CUDA, for the two pretend NPUs ``vnpu:0`` and
``vnpu:1``: availability, device count, the current device, synchronisation and
the arenas' allocator statistics. ``device=None`` means the current device.
Written with opweave's public API only.
"""

from __future__ import annotations

import opweave

from ._backend import BACKEND, NAME

__all__ = [
    "current_device",
    "device_count",
    "is_available",
    "max_memory_allocated",
    "memory_allocated",
    "memory_stats",
    "set_device",
    "synchronize",
]


def is_available() -> bool:
    """Whether a vnpu can be used (always: it is simulated in host memory)."""
    return BACKEND.is_available()


def device_count() -> int:
    """The number of vnpu devices."""
    return BACKEND.device_count()


def current_device() -> int:
    """The index of the current vnpu of this thread: what ``device="vnpu"`` means."""
    return opweave.backends.current_device_index(NAME)


def set_device(device) -> None:
    """Make ``device`` (an index, ``"vnpu:1"`` or an ``opweave.device``) the current vnpu of this thread."""
    opweave.backends.set_device_index(_device(device))


def synchronize(device=None) -> None:
    """Wait for the work queued on a vnpu (its kernels run synchronously: nothing to wait for)."""
    BACKEND.synchronize(_device(device))


def memory_stats(device=None) -> dict:
    """``{"allocated", "reserved", "peak", "num_allocs", ...}`` (bytes; live blocks) of a vnpu device."""
    return BACKEND.memory_stats(_device(device))


def memory_allocated(device=None) -> int:
    """Bytes held by live tensors on a vnpu device."""
    return memory_stats(device)["allocated"]


def max_memory_allocated(device=None) -> int:
    """The peak of :func:`memory_allocated` on a vnpu device."""
    return memory_stats(device)["peak"]


def _device(device) -> opweave.device:
    """``device`` as a vnpu device with an index (None: the current one; an int: that index)."""
    if device is None:
        return opweave.device(NAME, current_device())
    dev = opweave.device(NAME, device) if isinstance(device, int) else opweave.device(device)
    if dev.type != NAME:
        raise ValueError(f"expected a {NAME} device, got '{dev}'")
    return dev if dev.index is not None else opweave.device(NAME, current_device())
