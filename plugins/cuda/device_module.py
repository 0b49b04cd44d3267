"""``opweave.cuda``: the CUDA device module (registered with ``registry.device_module``), as ``torch.cuda``.

Availability, devices, synchronisation, streams and events, and the memory pool's
statistics. ``device=None`` means the current device (``cuda:0`` unless
:func:`set_device` chose another). Without a driver every query answers (False, 0, the
reason) and the functions that need a GPU raise ``RuntimeError`` naming the reason.
"""

from __future__ import annotations

from typing import NamedTuple

import opweave

from ._backend import BACKEND, NAME, device_index, runtime_at
from ._streams import Event, Stream, current_stream, default_stream, set_stream, stream

__all__ = [
    "Event",
    "Stream",
    "current_device",
    "current_stream",
    "default_stream",
    "device_count",
    "empty_cache",
    "get_device_capability",
    "get_device_name",
    "get_device_properties",
    "is_available",
    "is_bf16_supported",
    "max_memory_allocated",
    "max_memory_reserved",
    "memory_allocated",
    "memory_reserved",
    "memory_stats",
    "reset_peak_memory_stats",
    "set_device",
    "set_stream",
    "stream",
    "synchronize",
    "unavailable_reason",
]


def is_available() -> bool:
    """Whether a CUDA device can be used (see :func:`unavailable_reason` when not)."""
    return BACKEND.is_available()


def unavailable_reason() -> str | None:
    """Why no CUDA device can be used (the ``cuInit`` error without a driver; None when one can)."""
    return BACKEND.unavailable_reason()


def device_count() -> int:
    """The number of CUDA devices (0 when none can be used)."""
    return BACKEND.device_count() if BACKEND.is_available() else 0


def current_device() -> int:
    """The index of the current CUDA device of this thread: what ``device="cuda"`` means."""
    return opweave.backends.current_device_index(NAME)


def set_device(device) -> None:
    """Make ``device`` (an index, ``"cuda:1"`` or an ``opweave.device``) the current CUDA device of this thread."""
    opweave.backends.set_device_index(opweave.device(NAME, device_index(device)))


def get_device_name(device=None) -> str:
    """The device's name (``"NVIDIA H100 80GB HBM3"``)."""
    return runtime_at(device_index(device)).name


def get_device_capability(device=None) -> tuple[int, int]:
    """The device's compute capability ``(major, minor)`` (``(9, 0)`` on an H100)."""
    return runtime_at(device_index(device)).capability


class DeviceProperties(NamedTuple):
    """What ``get_device_properties`` reports (PyTorch's field names)."""

    name: str
    major: int
    minor: int
    total_memory: int
    multi_processor_count: int
    warp_size: int
    max_threads_per_block: int
    shared_memory_per_block: int


def get_device_properties(device=None) -> DeviceProperties:
    """The device's name, compute capability, memory, multiprocessors and block limits."""
    rt = runtime_at(device_index(device))
    p = rt.properties
    return DeviceProperties(
        rt.name, *rt.capability, p.global_mem, rt.multiprocessors, p.subgroup_size, p.max_work_group, p.local_mem
    )


def is_bf16_supported() -> bool:
    """Whether the current device computes bfloat16 natively (compute capability 8.0 or newer)."""
    return is_available() and get_device_capability() >= (8, 0)


def synchronize(device=None) -> None:
    """Wait for the work queued on every stream of a CUDA device."""
    runtime_at(device_index(device)).synchronize()


def memory_stats(device=None) -> dict:
    """``{"allocated", "reserved", "cached", "peak", "num_allocs", "num_frees", "num_ooms"}`` of a CUDA device."""
    return BACKEND.memory_stats(opweave.device(NAME, device_index(device)))


def memory_allocated(device=None) -> int:
    """Bytes held by live tensors on a CUDA device."""
    return memory_stats(device)["allocated"]


def max_memory_allocated(device=None) -> int:
    """The peak of :func:`memory_allocated` since the start or :func:`reset_peak_memory_stats`."""
    return memory_stats(device)["peak"]


def memory_reserved(device=None) -> int:
    """Bytes the device's memory pool holds (live tensors and cached free memory)."""
    return memory_stats(device)["reserved"]


def max_memory_reserved(device=None) -> int:
    """The pool's high-water mark of reserved bytes (``CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH``)."""
    rt = runtime_at(device_index(device))
    attr = rt.driver.CUmemPool_attribute.CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH
    from . import _driver

    return int(_driver.call("cuMemPoolGetAttribute", rt.pool, attr))


def reset_peak_memory_stats(device=None) -> None:
    """Make the peak of :func:`max_memory_allocated` the bytes allocated now."""
    BACKEND.reset_peak(opweave.device(NAME, device_index(device)))


def empty_cache(device=None) -> None:
    """Give the memory pool's unused memory back to the driver (every device, or ``device``)."""
    BACKEND.empty_cache(None if device is None else opweave.device(NAME, device_index(device)))
