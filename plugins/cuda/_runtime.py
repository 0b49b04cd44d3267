"""The CUDA ``Runtime``: one GPU's primary context, stream-ordered memory, NVRTC cubins and launches.

Devices are the driver's (``CUDA_VISIBLE_DEVICES`` applies), ``cuda:N`` in its order.
Memory comes from the device's default memory pool (``cuMemAllocAsync``/``cuMemFreeAsync``
on the current stream) with its release threshold raised to the maximum, so freed memory
stays reserved in the pool for reuse: the pool is the caching allocator (``_allocator``).
Kernels are NVRTC cubins for the device's own ``sm_XY``, cached on disk under
``$OPWEAVE_KERNEL_CACHE/cuda`` (else ``~/.cache/opweave/kernels/cuda``), keyed on the
source, NVRTC's version and options and the architecture. Launches and device copies
go on the current stream (``opweave.cuda.current_stream()``); host copies synchronise
that stream, as PyTorch's copies from and to pageable memory do.
"""

from __future__ import annotations

import os
import tempfile
import threading

from opweave_kernelgen import DeviceProperties, Runtime, cache_dir, cache_key
from opweave_kernelgen.devices import DeviceList
from opweave_kernelgen.dialect.cuda import CUDA

from . import _driver, _nvrtc, _streams
from ._launch import DeviceBuffer, Params, geometry

_current = threading.local()  # .runtime: the runtime whose context is current in this thread


class Kernel:
    """A ``CUfunction`` of a loaded cubin."""

    __slots__ = ("function", "name", "module")

    def __init__(self, function, name: str, module):
        self.function, self.name, self.module = function, name, module


class CudaRuntime(Runtime):
    """One CUDA device: its primary context, memory pool, properties and loaded modules."""

    dialect = CUDA
    overrides = frozenset({"group_softmax"})  # softmax rows: one block per row (codegen.softmax.group_program)

    def __init__(self, index: int):
        super().__init__()
        driver, _ = _driver.load()
        self.driver = driver
        self.index = index
        self.device = _driver.call("cuDeviceGet", index)
        self.context = _driver.call("cuDevicePrimaryCtxRetain", self.device)
        self.enter()
        attr = driver.CUdevice_attribute
        get = lambda a: int(_driver.call("cuDeviceGetAttribute", a, self.device))  # noqa: E731
        self.capability = (
            get(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR),
            get(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR),
        )
        self.arch = choose_arch(self.capability, _nvrtc.supported_archs())
        name = _driver.call("cuDeviceGetName", 256, self.device)
        self.name = bytes(name).split(b"\0", 1)[0].decode(errors="replace")
        self.device_name = f"cuda:{index}"
        total = int(_driver.call("cuDeviceTotalMem", self.device))
        self.multiprocessors = get(attr.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
        resident = get(attr.CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR)
        self.properties = DeviceProperties(
            is_cpu=False,
            max_work_group=get(attr.CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK),
            local_mem=get(attr.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK),
            vector_bytes=16,
            has_fp16=True,
            has_fp64=True,
            has_bf16=self.capability >= (8, 0),
            subgroup_size=get(attr.CU_DEVICE_ATTRIBUTE_WARP_SIZE),
            max_alloc=total,
            global_mem=total,
            **launch_geometry(self.multiprocessors, resident),
        )
        self.pool = _driver.call("cuDeviceGetDefaultMemPool", self.device)
        threshold = driver.cuuint64_t(2**64 - 1)  # keep freed memory in the pool: the pool is the cache
        _driver.call(
            "cuMemPoolSetAttribute", self.pool, driver.CUmemPool_attribute.CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, threshold
        )

    # -- context and stream ----------------------------------------------------------------------

    def enter(self) -> None:
        """Make this device's primary context current in the calling thread (a driver call only on a switch)."""
        if getattr(_current, "runtime", None) is self:
            return
        _driver.call("cuCtxSetCurrent", self.context)
        _current.runtime = self

    def stream(self) -> int:
        """The raw ``CUstream`` of the current stream of this device in this thread (0: the legacy default)."""
        return _streams.current_handle(self.index)

    # -- memory ----------------------------------------------------------------------------------

    def allocate(self, nbytes: int) -> DeviceBuffer:
        """``cuMemAllocAsync`` from the device's pool on the current stream (``MemoryError`` when it is full)."""
        self.enter()
        stream = self.stream()
        ptr = _driver.call("cuMemAllocAsync", nbytes, stream)
        return DeviceBuffer(int(ptr), nbytes, stream)

    def free(self, buffer: DeviceBuffer) -> None:
        """``cuMemFreeAsync`` on the stream the buffer was allocated on (the memory returns to the pool)."""
        self.enter()
        _driver.call("cuMemFreeAsync", buffer.ptr, buffer.stream)

    def trim(self) -> None:
        """Wait for the device, then give the pool's unused memory back to the driver (``cuMemPoolTrimTo(0)``)."""
        self.enter()
        _driver.call("cuCtxSynchronize")
        _driver.call("cuMemPoolTrimTo", self.pool, 0)

    def pool_bytes(self, which: str = "reserved") -> int:
        """The pool's reserved (``"reserved"``) or in-use (``"used"``) bytes, as the driver counts them."""
        attr = self.driver.CUmemPool_attribute
        name = "CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT" if which == "reserved" else "CU_MEMPOOL_ATTR_USED_MEM_CURRENT"
        return int(_driver.call("cuMemPoolGetAttribute", self.pool, getattr(attr, name)))

    def copy_from_host(self, buffer, array, offset: int = 0) -> None:
        """Host -> device on the current stream, then wait for it (the host array may be freed after).

        A value of 1, 2, 4 or 8 bytes (a scalar operand, a 0-dim tensor) is written with ``cuMemsetD8/16/32Async``
        instead, queued on the current stream without a wait: the value travels in the call, so there is no host
        buffer to protect, and the kernels queued after it on that stream see it (PyTorch fills a 0-dim tensor made
        from a scalar with a kernel on the current stream, also without a wait).
        """
        self.enter()
        stream = self.stream()
        dst, nbytes = buffer.ptr + offset, array.nbytes
        if nbytes <= 8 and _memset_value(dst, array.tobytes(), stream):
            return
        _driver.call("cuMemcpyHtoDAsync", dst, array.ctypes.data, nbytes, stream)
        _driver.call("cuStreamSynchronize", stream)

    def copy_to_host(self, array, buffer, offset: int = 0) -> None:
        """Device -> host on the current stream (after the kernels queued there), then wait for it."""
        self.enter()
        stream = self.stream()
        _driver.call("cuMemcpyDtoHAsync", array.ctypes.data, buffer.ptr + offset, array.nbytes, stream)
        _driver.call("cuStreamSynchronize", stream)

    def copy_device(self, dst, src, nbytes: int, dst_offset: int = 0, src_offset: int = 0) -> None:
        """Device -> device on the current stream (queued)."""
        if nbytes:
            self.enter()
            _driver.call("cuMemcpyDtoDAsync", dst.ptr + dst_offset, src.ptr + src_offset, nbytes, self.stream())

    def fill_zero(self, buffer, nbytes: int, offset: int = 0) -> None:
        """``cuMemsetD8Async`` with zero bytes on the current stream (queued)."""
        if nbytes:
            self.enter()
            _driver.call("cuMemsetD8Async", buffer.ptr + offset, 0, nbytes, self.stream())

    # -- programs --------------------------------------------------------------------------------

    def build(self, source: str, options: tuple) -> dict:
        """The cubin of ``source`` for this device's ``sm_XY`` (from the disk cache, else NVRTC), loaded."""
        self.enter()
        cubin = cached_cubin(source, self.arch)
        module = _driver.call("cuModuleLoadData", cubin)
        return {
            name: Kernel(_driver.call("cuModuleGetFunction", module, name.encode()), name, module)
            for name in _nvrtc.kernel_names(source)
        }

    def launch(self, kernel: Kernel, grid: tuple, block: tuple, args: tuple) -> None:
        """``cuLaunchKernel`` on the current stream (``RuntimeError`` for a grid CUDA cannot launch)."""
        g, b = geometry(grid, block, self.properties.max_work_group)
        params = Params(args)
        self.enter()
        _driver.call("cuLaunchKernel", kernel.function, *g, *b, 0, self.stream(), params.address, 0)

    def synchronize(self) -> None:
        """Wait for every stream of the device (``cuCtxSynchronize``)."""
        self.enter()
        _driver.call("cuCtxSynchronize")


def _memset_value(dst: int, raw: bytes, stream: int) -> bool:
    """Queue the write of the 1, 2, 4 or 8 bytes ``raw`` at ``dst`` as memsets (False: another size or alignment)."""
    n = len(raw)
    if n == 1:
        _driver.call("cuMemsetD8Async", dst, raw[0], 1, stream)
    elif n == 2 and dst % 2 == 0:
        _driver.call("cuMemsetD16Async", dst, int.from_bytes(raw, "little"), 1, stream)
    elif n == 4 and dst % 4 == 0:
        _driver.call("cuMemsetD32Async", dst, int.from_bytes(raw, "little"), 1, stream)
    elif n == 8 and dst % 4 == 0:
        _driver.call("cuMemsetD32Async", dst, int.from_bytes(raw[:4], "little"), 1, stream)
        _driver.call("cuMemsetD32Async", dst + 4, int.from_bytes(raw[4:], "little"), 1, stream)
    else:
        return False
    return True


def launch_geometry(multiprocessors: int, resident_threads: int) -> dict:
    """The launch fields of ``DeviceProperties`` for a GPU of ``multiprocessors`` SMs, each holding
    ``resident_threads`` threads (2048 on an H100): contiguous elementwise kernels loop over a grid that fills
    every SM once (blocks of 256 threads), and a few outputs over many elements are reduced by 256-thread
    groups, as many per output as fill the SMs, before a second pass combines their partials."""
    local = 256
    blocks_per_sm = max(1, resident_threads // local)
    return {
        "grid_stride_items": multiprocessors * blocks_per_sm * local,
        "grid_stride_local": local,
        "reduction_local": local,
        "reduction_groups": multiprocessors * blocks_per_sm,
    }


def choose_arch(capability: tuple[int, int], supported: tuple[int, ...]) -> int:
    """The ``sm_XY`` to compile for: the device's own; ``RuntimeError`` when this NVRTC cannot target it."""
    arch = capability[0] * 10 + capability[1]
    if arch not in supported:
        raise RuntimeError(
            f"NVRTC {'.'.join(map(str, _nvrtc.version()))} cannot compile for sm_{arch} "
            f"(it targets sm_{', sm_'.join(map(str, supported))}): install an nvidia-cuda-nvrtc that does"
        )
    return arch


def cached_cubin(source: str, arch: int) -> bytes:
    """The cubin of ``source`` for ``sm_<arch>``: read from the disk cache, else compiled and stored atomically."""
    folder = os.path.join(cache_dir(), "cuda")
    path = os.path.join(folder, cache_key(source, _nvrtc.cache_name(), f"sm_{arch}") + ".cubin")
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        pass
    cubin = _nvrtc.compile_cubin(source, arch)
    try:
        os.makedirs(folder, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, suffix=".tmp")
        with os.fdopen(fd, "wb") as f:
            f.write(cubin)
        os.replace(tmp, path)
    except OSError:  # a read-only cache: compile every time
        pass
    return cubin


def _find() -> tuple[list, str | None]:
    """Every CUDA device as a :class:`CudaRuntime`, or ``([], why not)``."""
    driver, reason = _driver.load()
    if driver is None:
        return [], reason
    module, reason = _nvrtc.nvrtc()
    if module is None:
        return [], reason
    try:
        count = int(_driver.call("cuDeviceGetCount"))
        runtimes = [CudaRuntime(i) for i in range(count)]
    except (RuntimeError, MemoryError) as exc:
        return [], str(exc)
    return runtimes, None if runtimes else "the CUDA driver reports no device"


_LIST = DeviceList(_find)
devices = _LIST.devices
unavailable_reason = _LIST.unavailable_reason
