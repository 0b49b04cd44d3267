"""``KernelBackend``: a :class:`~opweave.backends.Backend` whose storages and copies go through a ``Runtime``.

A device built on the shared generator subclasses it and says how to find its
runtimes (:meth:`KernelBackend.runtimes`); storages, host <-> device copies,
dtypes, the caching allocator and ``memory_stats`` come from here. A storage's
handle is an allocator :class:`~opweave_kernelgen.allocator.Block`; views share it
and carry their element offset and strides, which kernels receive as arguments.
Copies move bytes, so every dtype round-trips exactly (bfloat16 as its raw 16
bits, complex as pairs, bool as one byte).

Dtypes the device lacks (float16 without fp16, float64/complex128 without fp64)
are left out of ``dtypes`` and raise ``TypeError`` when a tensor of that dtype
would be made on the device.
"""

from __future__ import annotations

import numpy as np
import opweave
from opweave.backends import Backend, Storage
from opweave.backends.kernel import contiguous_strides, wrap_storage

from .allocator import CachingAllocator

ALL_DTYPES = frozenset(
    getattr(opweave, n)
    for n in ("bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64")
) | frozenset({opweave.complex64, opweave.complex128})


class KernelBackend(Backend):
    """Devices whose kernels come from ``opweave_kernelgen``. Subclasses set ``name`` and implement ``runtimes``."""

    cpu_fallback = True  # prims without a kernel (eig, svd...) and declined cases run on the CPU
    #: Extension names for the dtype messages: what a device lacks to have float16 / float64.
    fp16_feature = "fp16"
    fp64_feature = "fp64"

    def __init__(self):
        self._allocators: dict[int, CachingAllocator] = {}
        self._dtypes: frozenset | None = None

    # -- devices (subclasses) --------------------------------------------------------------------

    def runtimes(self) -> list:
        """Every device of this backend, as :class:`~opweave_kernelgen.runtime.Runtime` (empty: none usable)."""
        raise NotImplementedError

    def is_available(self) -> bool:
        """Whether at least one device is usable."""
        return bool(self.runtimes())

    def device_count(self) -> int:
        """The number of devices."""
        return len(self.runtimes())

    def runtime(self, device):
        """The runtime of ``device`` (index None means 0)."""
        devs = self.runtimes()
        i = device.index or 0
        if i >= len(devs):
            reason = self.unavailable_reason() or "see is_available"
            raise RuntimeError(f"{self.name}:{i} does not exist: {len(devs)} {self.name} device(s) ({reason})")
        return devs[i]

    @property
    def dtypes(self) -> frozenset:
        """The dtypes device 0 supports: no float16 without fp16, no doubles without fp64."""
        found = self._dtypes
        if found is None:
            devs = self.runtimes()
            if not devs:
                return ALL_DTYPES
            rt, out = devs[0], set(ALL_DTYPES)
            if not rt.has_fp16:
                out.discard(opweave.float16)
            if not rt.has_fp64:
                out -= {opweave.float64, opweave.complex128}
            found = self._dtypes = frozenset(out)
        return found

    def check_dtype(self, dtype, what: str | None = None) -> None:
        """``TypeError`` naming ``what`` (an op, or the device) if the device has no ``dtype``."""
        if dtype not in self.dtypes:
            feature = self.fp16_feature if dtype is opweave.float16 else self.fp64_feature
            raise TypeError(f"{what or self.name}: the {self.name} device has no {dtype.name} (it lacks {feature})")

    def allocator(self, device) -> CachingAllocator:
        """The caching allocator of ``device``."""
        i = device.index or 0
        alloc = self._allocators.get(i)
        if alloc is None:
            alloc = self._allocators[i] = CachingAllocator(self.runtime(device))
        return alloc

    # -- memory ----------------------------------------------------------------------------------

    def allocate(self, nbytes: int, device):
        """A new uninitialised storage of ``nbytes`` bytes (a block from the caching allocator)."""
        device = _indexed(device)
        return Storage(self.allocator(device).malloc(nbytes), nbytes, device, self)

    def copy_from_host(self, array: np.ndarray, device):
        """Host -> device: a new storage holding the bytes of ``array``."""
        data = np.ascontiguousarray(array)
        storage = self.allocate(data.nbytes, device)
        if data.nbytes:
            self.runtime(storage.device).copy_from_host(storage.handle.buffer, data.reshape(-1).view(np.uint8))
        return storage

    def copy_to_host(self, tensor) -> np.ndarray:
        """Device -> host: the tensor's elements (any strides, any offset) as a new C-contiguous array."""
        shape, dt = tuple(tensor.shape), tensor.dtype
        if 0 in shape:
            return np.empty(shape, dt.numpy)
        stride, offset, item = tuple(tensor.stride()), tensor.storage_offset(), dt.itemsize
        rt, buffer = self.runtime(tensor.device), tensor.untyped_storage().handle.buffer
        if stride == contiguous_strides(shape):  # straight into the result
            out = np.empty(shape, dt.numpy)
            rt.copy_to_host(out.reshape(-1).view(np.uint8), buffer, offset * item)
            return out
        lo = offset + sum((n - 1) * s for n, s in zip(shape, stride) if s < 0)
        hi = offset + sum((n - 1) * s for n, s in zip(shape, stride) if s > 0)
        raw = np.empty((hi - lo + 1) * item, np.uint8)
        rt.copy_to_host(raw, buffer, lo * item)
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

    def synchronize(self, device=None) -> None:
        """Wait until every launch on ``device`` (default device 0) has finished."""
        self.runtime(opweave.device(device or f"{self.name}:0")).synchronize()

    def memory_stats(self, device=None) -> dict:
        """Allocator statistics of ``device`` (default device 0): allocated, reserved, peak, num_allocs."""
        return self.allocator(opweave.device(device or f"{self.name}:0")).stats()

    def empty_cache(self, device=None) -> None:
        """Release the cached free blocks of every device (or of ``device``) to the driver."""
        allocs = self._allocators.values() if device is None else [self.allocator(opweave.device(device))]
        for alloc in allocs:
            alloc.empty_cache()


def _indexed(device):
    return device if device.index is not None else opweave.device(device.type, 0)
