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

__all__ = DeviceFunctions(BACKEND).export(globals())
