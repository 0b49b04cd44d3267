"""The OpenCL device: a :class:`~opweave_kernelgen.KernelBackend` over every OpenCL device of every platform.

Storages are caching-allocator blocks holding a ``cl.Buffer``; copies, dtypes and
``memory_stats`` come from ``KernelBackend``. Dtypes the device lacks (float16
without ``cl_khr_fp16``, float64/complex128 without ``cl_khr_fp64``) are left out
of ``dtypes`` and raise ``TypeError`` when a tensor of that dtype would be made.
"""

from __future__ import annotations

from opweave.backends.kernel import contiguous_strides
from opweave_kernelgen import KernelBackend

from . import _runtime

NAME = "opencl"


class OpenCLBackend(KernelBackend):
    """Every OpenCL device of every platform (``opencl:N`` in platform, then device order)."""

    name = NAME
    extra = "opencl"
    dlpack_device_type = 4  # kDLOpenCL
    fp16_feature = "cl_khr_fp16"
    fp64_feature = "cl_khr_fp64"

    def runtimes(self) -> list:
        """Every usable OpenCL device (after ``OPWEAVE_OPENCL_DEVICE``)."""
        return _runtime.devices()

    def unavailable_reason(self) -> str | None:
        """Why no OpenCL device can be used (None when one can)."""
        return _runtime.unavailable_reason()

    def runtime(self, device):
        """The :class:`~._runtime.DeviceRuntime` of ``device``."""
        return _runtime.runtime(device.index)

    def data_ptr(self, storage) -> int:
        """The ``cl_mem`` handle of the storage's buffer (0 for an empty storage)."""
        buffer = storage.handle.buffer
        return int(buffer.int_ptr) if buffer is not None else 0


BACKEND = OpenCLBackend()


def empty(shape, dtype, device, stride=None):
    """A new uninitialised OpenCL tensor (contiguous unless ``stride`` is given)."""
    shape = tuple(shape)
    return BACKEND.empty_strided(
        shape, tuple(stride) if stride is not None else contiguous_strides(shape), dtype, device
    )
