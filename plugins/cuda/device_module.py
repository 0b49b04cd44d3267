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

__all__ = [
    *FUNCTIONS.export(globals()),  # is_available, device_count, memory_stats... (opweave_kernelgen.devices)
    "Event",
    "Stream",
    "current_stream",
    "default_stream",
    "get_device_capability",
    "get_device_name",
    "get_device_properties",
    "is_bf16_supported",
    "max_memory_reserved",
    "reset_peak_memory_stats",
    "set_stream",
    "stream",
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
    return FUNCTIONS.is_available() and get_device_capability() >= (8, 0)


def max_memory_reserved(device=None) -> int:
    """The pool's high-water mark of reserved bytes (``CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH``)."""
    rt = runtime_at(device_index(device))
    attr = rt.driver.CUmemPool_attribute.CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH
    from . import _driver

    return int(_driver.call("cuMemPoolGetAttribute", rt.pool, attr))


def reset_peak_memory_stats(device=None) -> None:
    """Make the peak of :func:`max_memory_allocated` the bytes allocated now."""
    BACKEND.reset_peak(opweave.device(NAME, device_index(device)))
