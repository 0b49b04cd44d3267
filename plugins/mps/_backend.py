"""The ``mps`` device: a :class:`~opweave_kernelgen.KernelBackend` over the system's default Metal GPU.

Storages are caching-allocator blocks holding a shared-storage ``MTLBuffer``; copies,
dtypes and ``memory_stats`` come from ``KernelBackend``. Metal has no double: float64
and complex128 are not in ``dtypes``, and making a tensor of either on the device
raises ``TypeError`` naming it (as PyTorch's MPS backend does).
"""

from __future__ import annotations

import sys
import threading

import opweave
from opweave_kernelgen import KernelBackend

from . import _metal

NAME = "mps"


class MPSBackend(KernelBackend):
    """One Metal GPU (``mps``, as PyTorch has one MPS device)."""

    name = NAME
    extra = "mps" if sys.platform == "darwin" else None  # off macOS no install helps
    dlpack_device_type = 8  # kDLMetal
    autocast_dtype = opweave.float16
    fp16_feature = "half precision"
    fp64_feature = "a double type: Metal has none, use float32"

    def __init__(self):
        super().__init__()
        self._runtimes: list | None = None
        self._open_lock = threading.Lock()

    def runtimes(self) -> list:
        """``[MetalRuntime]`` for the default GPU, or ``[]`` without Metal."""
        if self._runtimes is None:
            with self._open_lock:
                if self._runtimes is None:
                    metal, _, device = _metal.found()
                    if metal is None:
                        self._runtimes = []
                    else:
                        from ._runtime import MetalRuntime

                        self._runtimes = [MetalRuntime(metal, device)]
        return self._runtimes

    @property
    def dtypes(self) -> frozenset:
        """Every dtype of the generator but float64 and complex128, which Metal lacks (also where Metal is absent)."""
        return super().dtypes - {opweave.float64, opweave.complex128}

    def unavailable_reason(self) -> str | None:
        """Why Metal cannot be used here: not macOS, PyObjC missing, no GPU (None when it can)."""
        return _metal.unavailable_reason()

    def data_ptr(self, storage) -> int:
        """The address of the shared buffer's ``contents()`` (unified memory: the CPU sees the same bytes)."""
        buffer = storage.handle.buffer
        return int(buffer.host.ctypes.data) if buffer is not None else 0


BACKEND = MPSBackend()
