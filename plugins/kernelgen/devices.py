"""What every kernel backend's device module and device listing share (``opweave.opencl``, ``opweave.cuda``...).

:class:`DeviceList` discovers a backend's runtimes once (thread-safe) and keeps the reason
when there are none; :class:`DeviceFunctions` holds the functions every device module has,
with ``torch.cuda``'s names, bound to one :class:`~opweave_kernelgen.KernelBackend`. A plugin's
``device_module.py`` puts them in its namespace with :meth:`DeviceFunctions.export` and adds what
only its device has (CUDA's streams, events and device properties), so the plugins read the same.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import opweave


class DeviceList:
    """The runtimes ``discover()`` finds, found once: ``discover`` returns ``(runtimes, reason when none)``."""

    def __init__(self, discover: Callable[[], tuple[list, str | None]]):
        self._discover = discover
        self._lock = threading.RLock()
        self._devices: list | None = None
        self._reason: str | None = None

    def devices(self) -> list:
        """Every runtime (empty when none can be used; :meth:`unavailable_reason` says why)."""
        found = self._devices
        if found is None:
            with self._lock:
                if self._devices is None:
                    runtimes, reason = self._discover()
                    self._reason = reason if not runtimes else None
                    self._devices = list(runtimes)
                found = self._devices
        return found

    def unavailable_reason(self) -> str | None:
        """Why there is no runtime (None when there is one)."""
        self.devices()
        return self._reason


#: The functions every kernel backend's device module has (``DeviceFunctions.export``), ``torch.cuda``'s names.
EXPORTED = (
    "is_available",
    "unavailable_reason",
    "device_count",
    "current_device",
    "set_device",
    "synchronize",
    "memory_stats",
    "memory_allocated",
    "max_memory_allocated",
    "memory_reserved",
    "empty_cache",
)


class DeviceFunctions:
    """The device-module functions of ``backend`` (``is_available``, ``memory_stats``...), bound to it.

    ``device=None`` means the current device of the calling thread (index 0 unless ``set_device``
    chose another); an int is an index; a string or ``opweave.device`` must name this backend's type.
    """

    def __init__(self, backend):
        self.backend = backend
        self.name = backend.name

    def device(self, device=None) -> opweave.device:
        """``device`` as an indexed device of this backend (``ValueError`` for another device type)."""
        if device is None:
            return opweave.device(self.name, self.current_device())
        dev = opweave.device(self.name, device) if isinstance(device, int) else opweave.device(device)
        if dev.type != self.name:
            raise ValueError(f"expected a device of type '{self.name}', got '{dev}'")
        return dev if dev.index is not None else opweave.device(self.name, self.current_device())

    def export(self, namespace: dict) -> list[str]:
        """Bind the :data:`EXPORTED` functions into ``namespace`` (a device module's ``globals()``); return their
        names, for the module's ``__all__``."""
        for name in EXPORTED:
            namespace[name] = getattr(self, name)
        return list(EXPORTED)

    def index(self, device=None) -> int:
        """The index of :meth:`device`."""
        return self.device(device).index

    def is_available(self) -> bool:
        """Whether a device of this backend can be used (see :meth:`unavailable_reason` when not)."""
        return self.backend.is_available()

    def unavailable_reason(self) -> str | None:
        """Why no device can be used (None when one can)."""
        return self.backend.unavailable_reason()

    def device_count(self) -> int:
        """The number of devices (0 when none can be used)."""
        return self.backend.device_count() if self.backend.is_available() else 0

    def current_device(self) -> int:
        """The index of the current device of this thread: what the bare device type means."""
        return opweave.backends.current_device_index(self.name)

    def set_device(self, device) -> None:
        """Make ``device`` (an index, ``"<type>:1"`` or an ``opweave.device``) the current device of this thread."""
        opweave.backends.set_device_index(self.device(device))

    def synchronize(self, device=None) -> None:
        """Wait for the work queued on a device."""
        self.backend.synchronize(self.device(device))

    def memory_stats(self, device=None) -> dict:
        """The allocator's statistics of a device: at least ``allocated``, ``reserved``, ``peak`` (bytes)."""
        return self.backend.memory_stats(self.device(device))

    def memory_allocated(self, device=None) -> int:
        """Bytes held by live tensors on a device."""
        return self.memory_stats(device)["allocated"]

    def max_memory_allocated(self, device=None) -> int:
        """The peak of :meth:`memory_allocated` since the start (or the last reset of the peak)."""
        return self.memory_stats(device)["peak"]

    def memory_reserved(self, device=None) -> int:
        """Bytes the allocator holds on a device (live tensors and cached free memory)."""
        return self.memory_stats(device)["reserved"]

    def empty_cache(self, device=None) -> None:
        """Give the allocator's cached free memory back to the driver (every device, or ``device``)."""
        self.backend.empty_cache(None if device is None else self.device(device))


def register_device(registry, backend, device_module) -> bool:
    """What a kernel backend's ``opweave_register`` hook does first: declare ``backend``, make ``device_module``
    ``opweave.<type>``, and, when a device can be used, register every generated prim kernel for it.

    Returns whether a device can be used (the plugin then registers its own kernels after these, so they win).
    """
    from .kernels import register_kernels

    registry.backend(backend)
    registry.device_module(backend.name, device_module)
    if not backend.is_available():
        return False
    register_kernels(registry, backend)
    return True
