"""A null CUDA driver: the CUDA backend's host path without a GPU, for measuring and testing it.

:func:`install` puts :class:`NullDriver` under ``opweave_cuda`` in place of ``cuda.bindings.driver`` (and skips
NVRTC: modules are empty), before the backend lists its devices. The backend then runs unchanged -- its
runtime, allocator, streams and kernel-parameter packing, the generator's kernels -- over a driver whose
functions return at once: one H100-like device, fake device pointers, no data moved, nothing computed.
``bench/cuda_host.py`` measures the host cost per op with it; ``tests/cuda/test_null_driver.py`` checks what
each tiny op asks of the driver (launches, host waits, allocations). Never use it for results: no kernel runs.
"""

from __future__ import annotations

import itertools


class NullDriver:
    """``cuda.bindings.driver`` with every called function answering at once (an H100 with 80 GB, no work done).

    Enums and types are the real module's; ``launches`` counts ``cuLaunchKernel`` calls, ``waits`` the host's
    waits for the device, ``allocations`` the ``cuMemAllocAsync`` calls.
    """

    def __init__(self, real):
        self._real = real
        self.launches = 0
        self.waits = 0  # cuStreamSynchronize / cuCtxSynchronize: the host waiting for the device
        self._ptrs = itertools.count(1 << 32, 1 << 20)
        ok = real.CUresult.CUDA_SUCCESS
        attr = real.CUdevice_attribute
        values = {
            attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: 9,
            attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: 0,
            attr.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: 132,
            attr.CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR: 2048,
            attr.CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: 1024,
            attr.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK: 48 * 1024,
            attr.CU_DEVICE_ATTRIBUTE_WARP_SIZE: 32,
        }
        done = (ok,)
        self.cuInit = lambda flags: done
        self.cuDeviceGetCount = lambda: (ok, 1)
        self.cuDeviceGet = lambda i: (ok, i)
        self.cuDevicePrimaryCtxRetain = lambda dev: (ok, 1)
        self.cuCtxSetCurrent = lambda ctx: done
        self.cuDeviceGetAttribute = lambda a, dev: (ok, values.get(a, 0))
        self.cuDeviceGetName = lambda n, dev: (ok, b"NVIDIA H100 80GB HBM3 (null driver)")
        self.cuDeviceTotalMem = lambda dev: (ok, 80 << 30)
        self.cuDeviceGetDefaultMemPool = lambda dev: (ok, 1)
        self.cuMemPoolSetAttribute = lambda pool, a, v: done
        self.cuMemPoolGetAttribute = lambda pool, a: (ok, 0)
        self.cuMemPoolTrimTo = lambda pool, n: done
        self.allocations = 0

        def allocate(nbytes, stream):
            self.allocations += 1
            return ok, next(self._ptrs)

        self.cuMemAllocAsync = allocate
        self.cuMemFreeAsync = lambda p, s: done
        self.cuMemcpyHtoDAsync = self.cuMemcpyDtoHAsync = self.cuMemcpyDtoDAsync = lambda d, s, n, st: done
        self.cuMemsetD8Async = self.cuMemsetD16Async = self.cuMemsetD32Async = lambda p, v, n, s: done

        def wait(*args):
            self.waits += 1
            return done

        self.cuStreamSynchronize = self.cuCtxSynchronize = wait
        self.cuModuleLoadData = lambda image: (ok, 1)
        self.cuModuleGetFunction = lambda module, name: (ok, name)

        def launch(f, gx, gy, gz, bx, by, bz, shared, stream, params, extra):
            self.launches += 1
            return done

        self.cuLaunchKernel = launch

    def __getattr__(self, name: str):
        return getattr(self._real, name)


def install() -> NullDriver | str:
    """Put a :class:`NullDriver` and an NVRTC-free build under ``opweave_cuda`` (before its devices are listed,
    i.e. before ``opweave`` first uses a ``cuda`` device); the driver, or why not (no cuda-bindings)."""
    try:
        from cuda.bindings import driver as real
    except ImportError as exc:
        return f"cuda-bindings is missing ({exc}): pip install 'opweave[cuda]'"
    from . import _driver, _runtime

    null = NullDriver(real)
    _driver.load = lambda: (null, None)
    _runtime.cached_cubin = lambda source, arch: b""
    return null
