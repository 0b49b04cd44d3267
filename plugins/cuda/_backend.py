"""The CUDA device: a :class:`~opweave_kernelgen.KernelBackend` over the driver's GPUs.

Storages are blocks of the pool allocator (``_allocator.PoolAllocator``) holding a
``DeviceBuffer``; copies, dtypes and views come from ``KernelBackend``.
"""

from __future__ import annotations

import opweave
from opweave_kernelgen import KernelBackend

from . import _runtime
from ._allocator import PoolAllocator

NAME = "cuda"


class CUDABackend(KernelBackend):
    """Every CUDA device the driver reports (``cuda:N`` in its order)."""

    name = NAME
    extra = "cuda"
    dlpack_device_type = 2  # kDLCUDA
    autocast_dtype = opweave.float16
    fp16_feature = "sm_53"
    fp64_feature = "fp64"

    def runtimes(self) -> list:
        """Every CUDA device, as :class:`~._runtime.CudaRuntime` (empty without a driver or a GPU)."""
        return _runtime.devices()

    def unavailable_reason(self) -> str | None:
        """Why no CUDA device can be used: no cuda-bindings, ``cuInit`` failing, no NVRTC, no device."""
        return _runtime.unavailable_reason()

    def allocator(self, device) -> PoolAllocator:
        """The pool allocator of ``device``."""
        i = device.index or 0
        alloc = self._allocators.get(i)
        if alloc is None:
            alloc = self._allocators[i] = PoolAllocator(self.runtime(device))
        return alloc

    def data_ptr(self, storage) -> int:
        """The device address of the storage's first byte (0 for an empty storage)."""
        buffer = storage.handle.buffer
        return buffer.ptr if buffer is not None else 0

    def reset_peak(self, device) -> None:
        """Make the peak of ``memory_stats`` the bytes allocated now."""
        self.allocator(device).reset_peak()


BACKEND = CUDABackend()


def device_index(device) -> int:
    """The index of ``device`` (None: the current CUDA device; an int; ``"cuda:1"``; an ``opweave.device``)."""
    if device is None:
        return opweave.backends.current_device_index(NAME)
    if isinstance(device, int):
        return device
    dev = opweave.device(device)
    if dev.type != NAME:
        raise ValueError(f"expected a {NAME} device, got '{dev}'")
    return dev.index if dev.index is not None else opweave.backends.current_device_index(NAME)


def runtime_at(index: int) -> _runtime.CudaRuntime:
    """The runtime of ``cuda:index`` (``RuntimeError`` naming why when there is none)."""
    return BACKEND.runtime(opweave.device(NAME, index))
