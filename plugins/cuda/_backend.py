"""The CUDA device: a :class:`~opweave_kernelgen.KernelBackend` over the driver's GPUs.

Storages are blocks of the pool allocator (``_allocator.PoolAllocator``) holding a
``DeviceBuffer``; copies, dtypes and views come from ``KernelBackend``.
"""

from __future__ import annotations

from types import MappingProxyType

import opweave
from opweave_kernelgen import KernelBackend
from opweave_kernelgen.devices import DeviceFunctions

from . import _dlpack, _driver, _pinned, _runtime
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
    #: what cuBLAS runs float32 GEMMs in at each ``set_float32_matmul_precision`` (docs/cuda-matmul.md)
    float32_matmul_modes = MappingProxyType({"high": "tf32", "medium": "bf16"})

    def __init__(self):
        super().__init__()
        self._timers: dict = {}  # device index -> the profiler's EventTimer

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

    def dlpack(self, tensor, *, stream=None, max_version=None, dl_device=None, copy=None):
        """``tensor.__dlpack__``: a capsule of its device memory, ordered after the work queued on the current stream.

        ``stream`` is the consumer's (DLPack's convention: None or 1 the legacy default stream, 2 the per-thread
        default, a larger int a ``CUstream``, -1 no synchronisation; 0 is not allowed): unless it is the current
        stream, it is made to wait for an event recorded on the current stream. ``copy=True`` exports a copy.
        """
        index = tensor.device.index or 0
        if dl_device is not None and tuple(int(x) for x in dl_device) != (_dlpack.K_DL_CUDA, index):
            raise BufferError(f"__dlpack__: a cuda:{index} tensor cannot be exported to DLPack device {dl_device}")
        if stream == 0:
            raise BufferError("__dlpack__: stream=0 is ambiguous for CUDA (use 1 for the legacy default stream)")
        rt = self.runtime(tensor.device)
        if copy:
            tensor = tensor.clone()
        if stream != -1:
            consumer = 1 if stream is None else int(stream)
            ours = rt.stream()
            if consumer != (ours or 1):
                from ._streams import Event

                event = Event()
                _driver.call("cuEventRecord", event.cuda_event, ours)
                _driver.call("cuStreamWaitEvent", consumer, event.cuda_event, 0)
        versioned = max_version is not None and int(max_version[0]) >= 1
        buffer = tensor.untyped_storage().handle.buffer
        data = (buffer.ptr if buffer is not None else 0) + tensor.storage_offset() * tensor.dtype.itemsize
        return _dlpack.export(
            tensor, data, (_dlpack.K_DL_CUDA, index), tuple(tensor.shape), tuple(tensor.stride()), tensor.dtype.name,
            versioned, _dlpack.FLAG_IS_COPIED if copy else 0,
        )  # fmt: skip

    def from_dlpack(self, obj, index: int):
        """A ``cuda:index`` tensor sharing the memory of a CUDA DLPack producer (a PyTorch or CuPy tensor).

        The producer is asked to order its work before the current stream; its memory is released (its
        deleter called) when the last opweave tensor viewing it is gone.
        """
        from opweave.backends import Storage
        from opweave.backends.kernel import wrap_storage
        from opweave_kernelgen.allocator import Block

        device = opweave.device(NAME, index)
        rt = self.runtime(device)
        stream = rt.stream() or 1
        try:
            capsule = obj.__dlpack__(stream=stream, max_version=_dlpack.VERSION)
        except TypeError:  # a producer older than DLPack 1.0's keywords
            capsule = obj.__dlpack__(stream=stream)
        imported = _dlpack.Imported(capsule)
        if imported.device != (_dlpack.K_DL_CUDA, index):
            imported.release()
            raise BufferError(f"from_dlpack: the capsule is on DLPack device {imported.device}, not cuda:{index}")
        dtype = getattr(opweave, imported.dtype)
        self.check_dtype(dtype, "from_dlpack")
        lo, nbytes = imported.span(dtype.itemsize)
        buffer = _runtime.DeviceBuffer(imported.data + lo * dtype.itemsize, nbytes, rt.stream())
        storage = Storage(Block(buffer, nbytes, _Producer(imported)), nbytes, device, self)
        return wrap_storage(storage, imported.shape, imported.strides, -lo, dtype=dtype, device=device)

    # -- pinned host memory (Tensor.pin_memory(), to(device, non_blocking=True)) -------------------

    has_pinned_memory = True

    def pinned_host_alloc(self, nbytes: int):
        """``cuMemHostAlloc`` (portable) on the current device: a ``uint8`` array, ``cuMemFreeHost`` when collected."""
        return _pinned.host_alloc(self.runtime(opweave.device(NAME, device_index(None))), nbytes)

    def is_pinned_host(self, address: int) -> bool:
        """Whether the driver sees ``address`` as page-locked host memory."""
        runtimes = self.runtimes()
        return bool(runtimes) and _pinned.is_pinned(runtimes[0], address)

    def from_host_async(self, array, device):
        """A new ``device`` tensor filled by ``cuMemcpyHtoDAsync`` on the current stream from pinned ``array``
        (``to(device, non_blocking=True)``): it returns before the copy is done (pageable arrays copy synchronously)."""
        import numpy as np
        from opweave.backends.kernel import contiguous_strides, wrap_storage

        array = np.asarray(array)
        if not array.flags.c_contiguous or not array.nbytes or not self.is_pinned_host(array.ctypes.data):
            return self.from_host(array, device)
        dtype = opweave.dtype_of_numpy(array.dtype)
        self.check_dtype(dtype)
        storage = self.allocate(array.nbytes, device)
        _pinned.copy_from_host_async(self.runtime(storage.device), storage.handle.buffer, array.reshape(-1))
        shape = tuple(array.shape)
        return wrap_storage(storage, shape, contiguous_strides(shape), 0, dtype=dtype, device=storage.device)

    def to_host_async(self, tensor):
        """``to("cpu", non_blocking=True)``: a new pinned CPU tensor filled by ``cuMemcpyDtoHAsync`` on the current
        stream, returned before the copy is done (its values are valid once the stream has passed the copy:
        ``opweave.cuda.synchronize()``, an event, ``current_stream().synchronize()``), as PyTorch's."""
        if tensor.numel() == 0 or tensor.dtype.is_quantized:
            return None
        if not tensor.is_contiguous():
            tensor = tensor.contiguous()  # queued on the current stream, before the copy
        out = opweave.empty(tuple(tensor.shape), dtype=tensor.dtype, pin_memory=True)
        rt = self.runtime(tensor.device)
        source = tensor.untyped_storage().handle.buffer.ptr + tensor.storage_offset() * tensor.dtype.itemsize
        _pinned.copy_to_host_async(rt, out.data_ptr(), source, tensor.numel() * tensor.dtype.itemsize)
        return out

    def profiler_timer(self, device):
        """``opweave.profiler``'s timer of ``device``: CUDA timing events on its current stream (one per device)."""
        from ._profiler_timer import EventTimer

        index = device_index(device)
        timer = self._timers.get(index)
        if timer is None:
            timer = self._timers[index] = EventTimer(runtime_at(index))
        return timer

    def reset_peak(self, device) -> None:
        """Make the peak of ``memory_stats`` the bytes allocated now."""
        self.allocator(device).reset_peak()


class _Producer:
    """The owner of an imported block: freeing it calls the DLPack producer's deleter."""

    __slots__ = ("imported",)

    def __init__(self, imported):
        self.imported = imported

    def free(self, block) -> None:
        self.imported.release()


BACKEND = CUDABackend()


FUNCTIONS = DeviceFunctions(BACKEND)  # opweave.cuda's shared functions (device_module.py)


def device_index(device) -> int:
    """The index of ``device`` (None: the current CUDA device; an int; ``"cuda:1"``; an ``opweave.device``)."""
    return FUNCTIONS.index(device)


def runtime_at(index: int) -> _runtime.CudaRuntime:
    """The runtime of ``cuda:index`` (``RuntimeError`` naming why when there is none)."""
    return BACKEND.runtime(opweave.device(NAME, index))
