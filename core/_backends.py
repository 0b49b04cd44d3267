"""Backends: the :class:`Backend` base class, the :class:`Registry` plugins register through, the backend table.

Each device type is declared by one plugin: a second claim is refused with
:class:`BackendClaimError` (the first keeps working). Finding and loading
plugins is ``_plugins``' job; it installs the loader :func:`ensure_loaded`
calls for a device type that is not declared yet.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import numpy as np

from . import _hooks
from ._keys import Layer, backend_bit, layer_bit
from ._tensor import Storage, Tensor, contiguous_strides

if TYPE_CHECKING:
    from ._device import device as Device
    from ._dtype import dtype as DType


class Backend:
    """What a device plugin provides. Subclass it and override what your device needs.

    Required: ``name`` (the device type), ``allocate``, ``copy_from_host``,
    ``copy_to_host``. Everything else has a sensible default.
    """

    name: str = ""
    dtypes: frozenset | None = None  # None: every opweave dtype
    autocast_dtype = None  # default dtype of autocast on this device
    dlpack_device_type: int | None = None
    extra: str | None = None  # pip extra that installs this backend's dependencies
    # What the backend does for float32 matmuls at each opweave.set_float32_matmul_precision
    # level it accelerates, e.g. {"high": "tf32", "medium": "bf16"}; undeclared levels are IEEE float32.
    float32_matmul_modes: Mapping[str, str] = MappingProxyType({})
    # True: prims without a kernel of this backend run on the CPU with copies (see ``_fallback``)
    cpu_fallback: bool = False
    # True: the backend page-locks host memory (``pinned_host_alloc``/``is_pinned_host``; ``Tensor.pin_memory()``)
    has_pinned_memory: bool = False
    # True: storage is host memory that NumPy reads with the tensor's own strides, and every tensor has its
    # Storage and strides (none made lazily). A view is then only a new layout over the same Storage, so the
    # core's direct view methods (``_views``) may make it without dispatching while the backend's view kernels
    # are its own plugin's or the core's (``_direct.Watch``).
    host_storage: bool = False

    def is_available(self) -> bool:
        """Whether the device can be used now."""
        return True

    def unavailable_reason(self) -> str | None:
        """Why ``is_available()`` is False (None when it is available)."""
        return None

    def device_count(self) -> int:
        """Number of devices of this type."""
        return 1

    def allocate(self, nbytes: int, device: Device) -> Storage:
        """Return a new :class:`Storage` of ``nbytes`` bytes on ``device``."""
        raise NotImplementedError

    def copy_from_host(self, array: np.ndarray, device: Device) -> Storage:
        """Return a new Storage holding the bytes of the C-contiguous ``array``."""
        raise NotImplementedError

    def copy_to_host(self, tensor: Tensor) -> np.ndarray:
        """Return the logical contents of ``tensor`` as a new C-contiguous NumPy array."""
        raise NotImplementedError

    def host_view(self, tensor: Tensor) -> np.ndarray | None:
        """A zero-copy NumPy view of ``tensor`` if its memory is host memory, else None."""
        return None

    def data_ptr(self, storage: Storage) -> int:
        """Address of the storage's first byte (0 if the device has no addresses)."""
        return 0

    def strides_of(self, tensor: Tensor) -> tuple[int, ...]:
        """Strides of a tensor created without them (backends that create tensors lazily)."""
        raise NotImplementedError

    def storage_for(self, tensor: Tensor) -> Storage:
        """The Storage of a tensor created without one (backends that create tensors lazily)."""
        raise NotImplementedError

    def synchronize(self, device: Device | None = None) -> None:
        """Wait for queued work on ``device``."""

    def memory_stats(self, device: Device | None = None) -> dict[str, Any]:
        """Allocator statistics of ``device``: override to report ``allocated``, ``reserved``, ``peak``, ``num_allocs``.

        The default (a backend without its own allocator: the CPU, whose memory is NumPy's) is ``{}``. Live storages
        of any backend can be counted with :func:`opweave.backends.add_allocation_observer`.
        """
        return {}

    def empty_cache(self, device: Device | None = None) -> None:
        """Give cached free memory back to the driver (a backend without a cache has nothing to do)."""

    def from_host(self, array: np.ndarray, device: Device) -> Tensor:
        """A new tensor on ``device`` holding a copy of ``array``."""
        from . import _dtype

        array = np.asarray(array, order="C")
        dt = _dtype.from_numpy(array.dtype)
        storage = self.copy_from_host(array, device)
        return Tensor._make(storage, array.shape, contiguous_strides(array.shape), 0, dt, device)

    def from_host_result(self, array: np.ndarray, dtype: DType, device: Device) -> Tensor:
        """A new tensor on ``device`` of ``dtype`` holding ``array``, a fresh NumPy result the caller hands over.

        The core's direct indexing paths (``_fastpaths``) make their results with it on backends that declare
        ``host_storage``. The default copies the elements in (``copy_from_host``); a backend whose storage can
        be a NumPy array keeps ``array`` itself (the CPU does).
        """
        array = np.ascontiguousarray(array)
        storage = self.copy_from_host(array, device)
        return Tensor._make(storage, array.shape, contiguous_strides(array.shape), 0, dtype, device)

    def pinned_host_alloc(self, nbytes: int) -> Any:
        """Page-locked host memory of ``nbytes`` bytes: an object with the buffer protocol, freed when collected.

        Backends that set ``has_pinned_memory`` implement it (CUDA: ``cuMemHostAlloc``); ``Tensor.pin_memory()``
        and factories' ``pin_memory=True`` make CPU tensors on it. The default has none.
        """
        raise NotImplementedError(f"the {self.name} backend has no pinned host memory")

    def is_pinned_host(self, address: int) -> bool:
        """Whether the host ``address`` lies in memory this backend's device sees as page-locked (default: False)."""
        return False

    def from_host_async(self, array: np.ndarray, device: Device) -> Tensor:
        """``from_host`` from pinned memory for ``to(device, non_blocking=True)``: it may return before the copy
        is done, ordered on the device's current stream. The default copies synchronously (``from_host``)."""
        return self.from_host(array, device)

    def to_host_async(self, tensor: Tensor) -> Tensor | None:
        """``to("cpu", non_blocking=True)`` of a tensor on this backend: a new CPU tensor in pinned host memory
        filled by a copy queued on the device's current stream, returned before the copy is done (as PyTorch's);
        None (the default) makes the copy synchronous."""
        return None

    def profiler_timer(self, device: Device) -> Any:
        """The device timer ``opweave.profiler`` brackets each op on ``device`` with, or None (the default).

        A timer has ``record() -> mark`` (a marker queued on the device's current stream, as a CUDA event
        is) and ``elapsed_ns(start, end) -> int`` (the device time between two marks, waiting for them;
        called once per pair when the profile ends). See :class:`opweave.profiler.DeviceTimer`.
        """
        return None

    def empty_strided(self, shape: Sequence[int], stride: Sequence[int], dtype: DType, device: Device) -> Tensor:
        """A new uninitialised tensor with the given layout."""
        span = 1 + sum((s - 1) * st for s, st in zip(shape, stride)) if all(shape) else 0
        storage = self.allocate(span * dtype.itemsize, device)
        return Tensor._make(storage, tuple(shape), tuple(stride), 0, dtype, device)


_backends: dict[str, Backend] = {}
_owners: dict[str, str] = {}  # device type -> the plugin (Registry.source) that declared it
_reserved: dict[str, str] = {}  # device type -> the only plugin that may declare it (an entry point of that name)
# Device types whose plugin finished registering. A backend is claimed at the start of its plugin's hook;
# until the hook returns, other threads take the loader's lock (and wait) instead of dispatching to it.
_ready: set[str] = set()
# The Dense key sets of the claimed backends with ``host_storage`` (the direct view methods' tensors).
# Updated in place (readers hold the set itself).
host_storage_keys: set[int] = set()


class BackendClaimError(RuntimeError):
    """A plugin declared a device type that another plugin (or the core) already provides."""


def claim(backend: Backend, plugin: str) -> None:
    """Make ``backend`` the one serving its device type, declared by ``plugin``.

    :class:`BackendClaimError` if another plugin already declared that device type, or an
    entry point of that name belongs to another plugin.
    """
    name = backend.name
    if not name or not isinstance(name, str):
        raise ValueError(f"{plugin}: a backend needs a name")
    holder = _owners.get(name) or _reserved.get(name)
    if holder is not None and holder != plugin:
        why = "provides" if name in _owners else "is the entry point named"
        raise BackendClaimError(
            f"device type '{name}' is already taken: plugin '{holder}' {why} '{name}'; "
            f"plugin '{plugin}' may not declare it too (its claim is refused)"
        )
    bit = backend_bit(name)
    _owners[name] = plugin
    _backends[name] = backend
    if backend.host_storage:
        host_storage_keys.add(layer_bit(Layer.Dense) | bit)


def reserve(device_type: str, plugin: str) -> None:
    """Keep ``device_type`` for ``plugin`` (the entry point of that name): any other plugin's claim is refused."""
    _reserved.setdefault(device_type, plugin)


def owner(device_type: str) -> str | None:
    """The plugin that declared ``device_type`` ("core" for meta), or None."""
    return _owners.get(device_type)


def host_storage_owners() -> dict[str, str]:
    """Device type -> declaring plugin of each claimed backend with ``host_storage``."""
    return {name: _owners[name] for name, backend in list(_backends.items()) if backend.host_storage}


def release(device_types: Iterable[str], plugin: str) -> None:
    """Forget the device types ``plugin`` declared (its registration failed)."""
    for name in device_types:
        if _owners.get(name) == plugin:
            del _owners[name]
            _backends.pop(name, None)
            _ready.discard(name)
            host_storage_keys.discard(layer_bit(Layer.Dense) | backend_bit(name))


def mark_ready(device_types: Iterable[str]) -> None:
    """Publish device types whose plugin finished registering (every kernel is in place)."""
    _ready.update(device_types)


def _no_loader(device_type: str, op_name: str | None) -> Backend:
    raise RuntimeError(f"no backend provides device type '{device_type}'")


_loader = _no_loader


def set_loader(loader: Callable[[str, str | None], Backend]) -> None:
    """Install ``loader(device_type, op_name) -> Backend``: how a missing device type is loaded (``_plugins``)."""
    global _loader
    _loader = loader


def ensure_loaded(device_type: str, op_name: str | None = None) -> Backend:
    """The backend for ``device_type``, importing its plugin first if needed."""
    backend = _backends.get(device_type)
    if backend is not None and device_type in _ready:
        return backend
    return _loader(device_type, op_name)


def get(device_type: str) -> Backend:
    """The backend object for a device type (loading its plugin if needed)."""
    return ensure_loaded(device_type)


def check_device(dev: Device) -> Backend:
    """The backend for a device, or a ``RuntimeError`` if it is unavailable or out of range."""
    backend = ensure_loaded(dev.type)
    if not backend.is_available():
        extra = f'; install it with pip install "opweave[{backend.extra}]"' if backend.extra else ""
        raise RuntimeError(f"device '{dev}' is not available: {backend.unavailable_reason()}{extra}")
    if dev.index is not None and dev.index >= backend.device_count():
        raise RuntimeError(f"device '{dev}' does not exist: {dev.type} has {backend.device_count()} device(s)")
    return backend


def register_builtin(backend: Backend) -> None:
    """Register a backend that ships with the core (meta)."""
    claim(backend, "core")
    mark_ready([backend.name])


# -- allocation observers: declared in ``_hooks`` (kept here under their old names) ----------------------

_hooks.provide_backend_lookup(get)
add_allocation_observer = _hooks.add_allocation_observer
remove_allocation_observer = _hooks.remove_allocation_observer
