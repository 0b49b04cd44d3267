"""``opweave.opencl``: the OpenCL device module (registered with ``registry.device_module``).

As ``torch.cuda`` is for CUDA: availability, device count, the current device,
synchronisation and the caching allocator's statistics, all from
``opweave_kernelgen.devices.DeviceFunctions`` (``opweave.cuda`` takes the same ones). Devices are
``opencl:0`` ... in platform order, then device order; ``device=None`` means the
current device (``opencl:0`` unless :func:`set_device` chose another).
"""

from __future__ import annotations

from opweave_kernelgen.devices import DeviceFunctions

from ._backend import BACKEND

__all__ = [
    "current_device",
    "device_count",
    "empty_cache",
    "is_available",
    "max_memory_allocated",
    "memory_allocated",
    "memory_reserved",
    "memory_stats",
    "set_device",
    "synchronize",
    "unavailable_reason",
]


_functions = DeviceFunctions(BACKEND)
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
