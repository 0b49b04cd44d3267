"""``opweave.cuda``: the CUDA device module (registered with ``registry.device_module``), as ``torch.cuda``.

Availability, devices, synchronisation, streams and events, and the memory pool's
statistics. ``device=None`` means the current device (``cuda:0`` unless
:func:`set_device` chose another). Without a driver every query answers (False, 0, the
reason) and the functions that need a GPU raise ``RuntimeError`` naming the reason.
"""

from __future__ import annotations

from typing import NamedTuple

import opweave

from ._backend import BACKEND, FUNCTIONS, NAME, device_index, runtime_at
from ._streams import Event, Stream, current_stream, default_stream, set_stream, stream

_functions = FUNCTIONS  # the functions every kernel backend's device module has (opweave_kernelgen.devices)
is_available = _functions.is_available
unavailable_reason = _functions.unavailable_reason
device_count = _functions.device_count
current_device = _functions.current_device
set_device = _functions.set_device
synchronize = _functions.synchronize
memory_stats = _functions.memory_stats
memory_allocated = _functions.memory_allocated
max_memory_allocated = _functions.max_memory_allocated
memory_reserved = _functions.memory_reserved
empty_cache = _functions.empty_cache

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


def max_memory_reserved(device=None) -> int:
    """The pool's high-water mark of reserved bytes (``CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH``)."""
    rt = runtime_at(device_index(device))
    attr = rt.driver.CUmemPool_attribute.CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH
    from . import _driver

    return int(_driver.call("cuMemPoolGetAttribute", rt.pool, attr))


def reset_peak_memory_stats(device=None) -> None:
    """Make the peak of :func:`max_memory_allocated` the bytes allocated now."""
    BACKEND.reset_peak(opweave.device(NAME, device_index(device)))
