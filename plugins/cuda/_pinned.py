"""Pinned host memory for the CUDA backend: ``cuMemHostAlloc``/``cuMemFreeHost`` and the pointer query.

A pinned block is page-locked host memory mapped for every context (``CU_MEMHOSTALLOC_PORTABLE``),
handed to the core as a NumPy ``uint8`` array over it; ``cuMemFreeHost`` runs when the last array
(and so the last tensor) viewing it is collected. ``cuMemFreeHost`` waits for the device, so a
block is never freed under a pending asynchronous copy. ``is_pinned`` asks the driver
(``cuPointerGetAttribute(CU_POINTER_ATTRIBUTE_MEMORY_TYPE)``), so memory pinned by another
library (a PyTorch pinned tensor seen through DLPack) counts too, as in PyTorch.
"""

from __future__ import annotations

import ctypes
import weakref

import numpy as np

from . import _driver


def _free(ptr: int) -> None:
    try:
        _driver.call("cuMemFreeHost", ptr)
    except Exception:  # interpreter shutdown: the process's end frees it
        pass


def host_alloc(rt, nbytes: int) -> np.ndarray:
    """``nbytes`` of page-locked host memory (a ``uint8`` array over it; ``MemoryError`` when it cannot be had)."""
    rt.enter()
    flags = rt.driver.CU_MEMHOSTALLOC_PORTABLE if hasattr(rt.driver, "CU_MEMHOSTALLOC_PORTABLE") else 1
    ptr = int(_driver.call("cuMemHostAlloc", nbytes, int(flags)))
    array = np.ctypeslib.as_array((ctypes.c_uint8 * nbytes).from_address(ptr))
    weakref.finalize(array, _free, ptr)
    return array


def is_pinned(rt, address: int) -> bool:
    """Whether ``address`` is page-locked host memory the CUDA driver knows (``cuMemHostAlloc``/registered)."""
    if not address:
        return False
    driver = rt.driver
    attribute = driver.CUpointer_attribute.CU_POINTER_ATTRIBUTE_MEMORY_TYPE
    err, memory_type = driver.cuPointerGetAttribute(attribute, address)
    if err != driver.CUresult.CUDA_SUCCESS:
        return False  # CUDA_ERROR_INVALID_VALUE: memory the driver does not know (pageable)
    return int(memory_type) == int(driver.CUmemorytype.CU_MEMORYTYPE_HOST)


def copy_from_host_async(rt, buffer, array: np.ndarray) -> None:
    """Host -> device on the current stream, without waiting (``array`` must stay alive and unchanged until done)."""
    rt.enter()
    _driver.call("cuMemcpyHtoDAsync", buffer.ptr, array.ctypes.data, array.nbytes, rt.stream())


def copy_to_host_async(rt, address: int, source: int, nbytes: int) -> None:
    """Device ``source`` -> pinned host ``address`` on the current stream, without waiting."""
    rt.enter()
    _driver.call("cuMemcpyDtoHAsync", address, source, nbytes, rt.stream())
