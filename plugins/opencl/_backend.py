"""The OpenCL device: a :class:`~opweave.backends.Backend` whose storages are ``cl.Buffer`` blocks.

A tensor's storage handle is an allocator :class:`~._allocator.Block`; views
share it and carry their element offset and strides, which kernels receive as
arguments (never as compiled-in constants). Host <-> device copies go through
pyopencl; they move bytes, so every dtype round-trips exactly (bfloat16 as its
raw 16 bits, complex as float2/double2 pairs, bool as uchar).

Dtypes the device lacks (float16 without ``cl_khr_fp16``, float64/complex128
without ``cl_khr_fp64``) are left out of ``dtypes`` and raise ``TypeError`` when a
tensor of that dtype would be made on the device.
"""

from __future__ import annotations

import numpy as np
import opweave
from opweave.backends import Backend, Storage
from opweave.backends.kernel import contiguous_strides, wrap_storage

from . import _runtime
from ._allocator import CachingAllocator

NAME = "opencl"
_ALL = frozenset(
    getattr(opweave, n)
    for n in ("bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64")
) | frozenset({opweave.complex64, opweave.complex128})


class OpenCLBackend(Backend):
    """Every OpenCL device of every platform (``opencl:N`` in platform, then device order)."""

    name = NAME
    extra = "opencl"
    dlpack_device_type = 4  # kDLOpenCL
    cpu_fallback = True  # prims this backend has no kernel for run on the CPU (see docs/opencl.md)

    def __init__(self):
        self._allocators: dict[int, CachingAllocator] = {}
        self._dtypes: frozenset | None = None

    # -- devices ---------------------------------------------------------------------------------

    def is_available(self) -> bool:
        """Whether pyopencl imports and at least one OpenCL device is found."""
        return bool(_runtime.devices())

    def unavailable_reason(self) -> str | None:
        """Why no OpenCL device can be used (None when one can)."""
        return _runtime.unavailable_reason()

    def device_count(self) -> int:
        """The number of OpenCL devices (after ``OPWEAVE_OPENCL_DEVICE``)."""
        return len(_runtime.devices())

    @property
    def dtypes(self) -> frozenset:
        """The dtypes device 0 supports: no float16 without ``cl_khr_fp16``, no doubles without ``cl_khr_fp64``."""
        found = self._dtypes
        if found is None:
            devs = _runtime.devices()
            if not devs:
                return _ALL
            rt, out = devs[0], set(_ALL)
            if not rt.has_fp16:
                out.discard(opweave.float16)
            if not rt.has_fp64:
                out -= {opweave.float64, opweave.complex128}
            found = self._dtypes = frozenset(out)
        return found

    def check_dtype(self, dtype, what: str = "opencl") -> None:
        """``TypeError`` naming ``what`` (an op, or the device) if the device has no ``dtype``."""
        if dtype not in self.dtypes:
            ext = "cl_khr_fp16" if dtype is opweave.float16 else "cl_khr_fp64"
            raise TypeError(f"{what}: the OpenCL device has no {dtype.name} (it lacks {ext})")

    def runtime(self, device):
        """The :class:`~._runtime.DeviceRuntime` of ``device``."""
        return _runtime.runtime(device.index)

    def allocator(self, device) -> CachingAllocator:
        """The caching allocator of ``device``."""
        i = device.index or 0
        alloc = self._allocators.get(i)
        if alloc is None:
            alloc = self._allocators[i] = CachingAllocator(_runtime.runtime(i))
        return alloc

    # -- memory ----------------------------------------------------------------------------------

    def allocate(self, nbytes: int, device):
        """A new uninitialised storage of ``nbytes`` bytes (a block from the caching allocator)."""
        device = _indexed(device)
        return Storage(self.allocator(device).malloc(nbytes), nbytes, device, self)

    def copy_from_host(self, array: np.ndarray, device):
        """Host -> device: a new storage holding the bytes of ``array``."""
        import pyopencl as cl

        data = np.ascontiguousarray(array)
        storage = self.allocate(data.nbytes, device)
        if data.nbytes:
            cl.enqueue_copy(self.runtime(storage.device).queue, storage.handle.buffer, data.reshape(-1).view(np.uint8))
        return storage

    def copy_to_host(self, tensor) -> np.ndarray:
        """Device -> host: the tensor's elements (any strides, any offset) as a new C-contiguous array."""
        import pyopencl as cl

        shape, dt = tuple(tensor.shape), tensor.dtype
        if 0 in shape:
            return np.empty(shape, dt.numpy)
        stride, offset, item = tuple(tensor.stride()), tensor.storage_offset(), dt.itemsize
        queue = self.runtime(tensor.device).queue
        if stride == contiguous_strides(shape):  # straight into the result
            out = np.empty(shape, dt.numpy)
            cl.enqueue_copy(
                queue, out.reshape(-1).view(np.uint8), tensor.untyped_storage().handle.buffer, src_offset=offset * item
            )
            return out
        lo = offset + sum((n - 1) * s for n, s in zip(shape, stride) if s < 0)
        hi = offset + sum((n - 1) * s for n, s in zip(shape, stride) if s > 0)
        raw = np.empty((hi - lo + 1) * item, np.uint8)
        cl.enqueue_copy(queue, raw, tensor.untyped_storage().handle.buffer, src_offset=lo * item)
        flat = raw.view(dt.numpy)
        view = np.lib.stride_tricks.as_strided(
            flat[offset - lo :], shape, tuple(s * item for s in stride), writeable=False
        )
        return np.array(view, order="C", copy=True)

    def from_host(self, array: np.ndarray, device):
        """A new contiguous device tensor holding a copy of ``array`` (``TypeError`` for a dtype the device lacks)."""
        array = np.asarray(array)
        self.check_dtype(opweave.dtype_of_numpy(array.dtype))
        return super().from_host(array, device)

    def empty_strided(self, shape, stride, dtype, device):
        """A new uninitialised tensor with the given layout (``TypeError`` for a dtype the device lacks)."""
        if dtype not in self.dtypes:
            self.check_dtype(dtype)
        if device.index is None:
            device = _indexed(device)
        span = 1
        for n, st in zip(shape, stride):
            if n == 0:
                span = 0
                break
            span += (n - 1) * st
        nbytes = span * dtype.itemsize
        storage = Storage(self.allocator(device).malloc(nbytes), nbytes, device, self)
        return wrap_storage(storage, shape, stride, 0, dtype=dtype, device=device)

    def data_ptr(self, storage) -> int:
        """The ``cl_mem`` handle of the storage's buffer (0 for an empty storage)."""
        buffer = storage.handle.buffer
        return int(buffer.int_ptr) if buffer is not None else 0

    def synchronize(self, device=None) -> None:
        """Wait until the queue of ``device`` (default ``opencl:0``) is empty."""
        self.runtime(opweave.device(device or f"{NAME}:0")).queue.finish()

    def memory_stats(self, device=None) -> dict:
        """Allocator statistics of ``device`` (default ``opencl:0``): allocated, reserved, peak, num_allocs."""
        return self.allocator(opweave.device(device or f"{NAME}:0")).stats()

    def empty_cache(self, device=None) -> None:
        """Release the cached free blocks of every device (or of ``device``) to the driver."""
        allocs = self._allocators.values() if device is None else [self.allocator(opweave.device(device))]
        for alloc in allocs:
            alloc.empty_cache()


def _indexed(device):
    return device if device.index is not None else opweave.device(device.type, 0)


BACKEND = OpenCLBackend()


def empty(shape, dtype, device, stride=None):
    """A new uninitialised OpenCL tensor (contiguous unless ``stride`` is given)."""
    shape = tuple(shape)
    return BACKEND.empty_strided(
        shape, tuple(stride) if stride is not None else contiguous_strides(shape), dtype, device
    )
