"""Backends and the plugin manager.

Entry points in the group ``opweave.backends`` are read (not imported) at
``import opweave``; an entry point's name is the device type it provides. Its
module is imported the first time that device is used, or by :func:`load`.
A plugin that fails to import or register is isolated: its error is kept,
shown by :func:`status`, and raised (as ``RuntimeError``) when its device is
used. ``OPWEAVE_AUTOLOAD=0`` turns entry point loading off.
"""

from __future__ import annotations

import importlib.metadata
import os
import threading
import traceback
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

import numpy as np
import pluggy

from . import _dispatch, _hookspecs
from ._keys import Layer, backend_bit

ENTRY_POINT_GROUP = "opweave.backends"


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

    def is_available(self) -> bool:
        """Whether the device can be used now."""
        return True

    def unavailable_reason(self) -> str | None:
        """Why ``is_available()`` is False (None when it is available)."""
        return None

    def device_count(self) -> int:
        """Number of devices of this type."""
        return 1

    def allocate(self, nbytes: int, device):
        """Return a new :class:`Storage` of ``nbytes`` bytes on ``device``."""
        raise NotImplementedError

    def copy_from_host(self, array: np.ndarray, device):
        """Return a new Storage holding the bytes of the C-contiguous ``array``."""
        raise NotImplementedError

    def copy_to_host(self, tensor) -> np.ndarray:
        """Return the logical contents of ``tensor`` as a new C-contiguous NumPy array."""
        raise NotImplementedError

    def host_view(self, tensor):
        """A zero-copy NumPy view of ``tensor`` if its memory is host memory, else None."""
        return None

    def data_ptr(self, storage) -> int:
        """Address of the storage's first byte (0 if the device has no addresses)."""
        return 0

    def strides_of(self, tensor) -> tuple:
        """Strides of a tensor created without them (backends that create tensors lazily)."""
        raise NotImplementedError

    def storage_for(self, tensor):
        """The Storage of a tensor created without one (backends that create tensors lazily)."""
        raise NotImplementedError

    def synchronize(self, device=None) -> None:
        """Wait for queued work on ``device``."""

    def memory_stats(self, device=None) -> dict:
        """Allocator statistics of ``device``: override to report ``allocated``, ``reserved``, ``peak``, ``num_allocs``.

        The default (a backend without its own allocator: the CPU, whose memory is NumPy's) is ``{}``. Live storages
        of any backend can be counted with :func:`opweave.backends.add_allocation_observer`.
        """
        return {}

    def empty_cache(self, device=None) -> None:
        """Give cached free memory back to the driver (a backend without a cache has nothing to do)."""

    def from_host(self, array: np.ndarray, device):
        """A new tensor on ``device`` holding a copy of ``array``."""
        from . import _dtype
        from ._tensor import Tensor, contiguous_strides

        array = np.asarray(array, order="C")
        dt = _dtype.from_numpy(array.dtype)
        storage = self.copy_from_host(array, device)
        return Tensor._make(storage, array.shape, contiguous_strides(array.shape), 0, dt, device)

    def empty_strided(self, shape, stride, dtype, device):
        """A new uninitialised tensor with the given layout."""
        from ._tensor import Tensor

        span = 1 + sum((s - 1) * st for s, st in zip(shape, stride)) if all(shape) else 0
        storage = self.allocate(span * dtype.itemsize, device)
        return Tensor._make(storage, tuple(shape), tuple(stride), 0, dtype, device)


class Registry:
    """What ``opweave_register`` receives: registration calls bound to one plugin."""

    def __init__(self, source: str):
        self.source = source
        self.backends: list[str] = []
        self.features: list[tuple] = []

    def feature(self, name: str, available: bool, reason: str | None = None) -> None:
        """Declare a feature without a device (a quantized engine, say): shown by ``status()`` with its reason."""
        self.features.append((name, bool(available), None if available else reason))

    def backend(self, backend: Backend) -> None:
        """Declare a device backend (its type gets a dispatch key bit)."""
        if not backend.name:
            raise ValueError(f"{self.source}: a backend needs a name")
        backend_bit(backend.name)
        _backends[backend.name] = backend
        self.backends.append(backend.name)

    def impl(self, op, fn, *, backend: str | None, layer: Layer = Layer.Dense, deterministic=True):
        """Register ``fn`` as the kernel of ``op`` (an OpOverload or its name) at (layer, backend)."""
        from ._ops import lookup

        op = lookup(op) if isinstance(op, str) else op
        _dispatch.register_kernel(op, layer, backend, fn, self.source, deterministic)

    def composite_explicit(self, op, fn, *, deterministic=True):
        """Register one Dense kernel for ``op`` shared by all backends without their own."""
        from ._ops import lookup

        op = lookup(op) if isinstance(op, str) else op
        _dispatch.register_composite_explicit(op, fn, self.source, deterministic)

    def fallback(self, layer: Layer, backend: str | None, fn) -> None:
        """Register a boxed kernel for every op at (layer, backend); see ``dispatch.register_fallback``."""
        _dispatch.register_fallback(layer, backend, fn, self.source)

    def deterministic_impl(self, op, fn, *, backend: str | None, layer: Layer = Layer.Dense):
        """Register the kernel used for ``op`` in deterministic mode (when the regular one is not)."""
        from ._ops import lookup

        op = lookup(op) if isinstance(op, str) else op
        _dispatch.register_deterministic_kernel(op, layer, backend, fn, self.source)


@dataclass
class PluginRecord:
    """One plugin: where it comes from, whether it loaded, and what it provides."""

    name: str
    value: str  # "module" or "module:attr"
    distribution: str | None = None
    loaded: bool = False
    error: str | None = None
    backends: list = field(default_factory=list)
    features: list = field(default_factory=list)  # (name, available, reason) from Registry.feature


_backends: dict[str, Backend] = {}
_plugins: dict[str, PluginRecord] = {}
_lock = threading.RLock()
_manager = pluggy.PluginManager(_hookspecs.PROJECT)
_manager.add_hookspecs(_hookspecs)


def plugin_manager() -> pluggy.PluginManager:
    """The pluggy manager holding every registered plugin."""
    return _manager


def discover() -> None:
    """Read the entry points of group ``opweave.backends`` (imports nothing)."""
    if os.environ.get("OPWEAVE_AUTOLOAD", "1") == "0":
        return
    for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        if ep.name not in _plugins:
            dist = getattr(ep, "dist", None)
            _plugins[ep.name] = PluginRecord(ep.name, ep.value, dist.name if dist else None)


def _load_record(record: PluginRecord) -> None:
    if record.loaded or record.error:
        return
    try:
        module_name, _, attr = record.value.partition(":")
        plugin = importlib.import_module(module_name.strip())
        for part in filter(None, attr.strip().split(".")):
            plugin = getattr(plugin, part)
        _register(plugin, record)
    except Exception as exc:  # isolation: a broken plugin must not break opweave
        record.error = f"{type(exc).__name__}: {exc}"
        record.traceback = traceback.format_exc()


def _register(plugin, record: PluginRecord) -> None:
    registry = Registry(record.name)
    if _manager.is_registered(plugin):
        _manager.unregister(plugin)
    _manager.register(plugin, name=record.name)
    try:
        others = [p for p in _manager.get_plugins() if p is not plugin]
        _manager.subset_hook_caller("opweave_register", remove_plugins=others)(registry=registry)
    except Exception:
        _manager.unregister(plugin)
        for name in registry.backends:
            _backends.pop(name, None)
        raise
    record.loaded = True
    record.backends = registry.backends
    record.features = registry.features


def register_plugin(module, name: str | None = None) -> PluginRecord:
    """Register a plugin module by hand (what entry points do automatically)."""
    with _lock:
        name = name or getattr(module, "__name__", repr(module))
        record = PluginRecord(name, getattr(module, "__name__", name), loaded=False)
        _plugins[name] = record
        _register(module, record)
        return record


def load(name: str | None = None) -> None:
    """Import and register every discovered plugin (or the one named ``name``)."""
    with _lock:
        for record in list(_plugins.values()):
            if name is None or record.name == name:
                _load_record(record)


def ensure_loaded(device_type: str, op_name: str | None = None) -> Backend:
    """The backend for ``device_type``, importing its plugin first if needed."""
    backend = _backends.get(device_type)
    if backend is not None:
        return backend
    with _lock:
        record = _plugins.get(device_type)
        if record is not None:
            _load_record(record)
        backend = _backends.get(device_type)
        if backend is not None:
            return backend
        for other in _plugins.values():  # a plugin may provide a device under another name
            _load_record(other)
        backend = _backends.get(device_type)
        if backend is not None:
            return backend
    where = f"{op_name}: " if op_name else ""
    failed = [r for r in _plugins.values() if r.error and r.name == device_type]
    if failed:
        r = failed[0]
        raise RuntimeError(
            f"{where}device '{device_type}' is unavailable: plugin '{r.name}' ({r.value}) failed to load: {r.error}"
        )
    known = ", ".join(sorted(_backends)) or "none"
    raise RuntimeError(f"{where}no backend provides device type '{device_type}' (loaded backends: {known})")


def get(device_type: str) -> Backend:
    """The backend object for a device type (loading its plugin if needed)."""
    return ensure_loaded(device_type)


def check_device(dev) -> Backend:
    """The backend for a device, or a ``RuntimeError`` if it is unavailable or out of range."""
    backend = ensure_loaded(dev.type)
    if not backend.is_available():
        extra = f'; install it with pip install "opweave[{backend.extra}]"' if backend.extra else ""
        raise RuntimeError(f"device '{dev}' is not available: {backend.unavailable_reason()}{extra}")
    if dev.index is not None and dev.index >= backend.device_count():
        raise RuntimeError(f"device '{dev}' does not exist: {dev.type} has {backend.device_count()} device(s)")
    return backend


@dataclass
class BackendStatus:
    """One line of :func:`status`."""

    name: str
    plugin: str
    loaded: bool
    available: bool
    devices: int
    reason: str | None
    kind: str = "device"  # or "feature": a plugin that provides no device (see Registry.feature)

    def __str__(self):
        state = "available" if self.available else "unavailable"
        why = f" ({self.reason})" if self.reason else ""
        what = "feature    " if self.kind == "feature" else f"devices={self.devices:<3}"
        return f"{self.name:<10} {state:<12} {what} plugin={self.plugin}{why}"


class StatusList(list):
    """A list of :class:`BackendStatus` that prints as a table."""

    def __str__(self):
        return "\n".join(str(s) for s in self)


def status(load_all: bool = True) -> StatusList:
    """Every known backend and plugin: loaded, available, device count, and why not."""
    if load_all:
        load()
    rows = StatusList()
    names = set(_backends) | {n for n, r in _plugins.items() if not r.backends}
    for name in sorted(names):
        backend = _backends.get(name)
        record = _plugins.get(name) or next((r for r in _plugins.values() if name in r.backends), None)
        plugin = record.value if record else "core"
        if backend is None and record is not None and record.features:
            for feature, available, reason in record.features:
                rows.append(BackendStatus(feature, record.value, True, available, 0, reason, "feature"))
            continue
        if backend is None:
            reason = record.error if record and record.error else "not loaded"
            rows.append(BackendStatus(name, plugin, False, False, 0, reason))
            continue
        try:
            available = bool(backend.is_available())
            reason = None if available else backend.unavailable_reason()
            count = backend.device_count() if available else 0
        except Exception as exc:
            available, reason, count = False, f"{type(exc).__name__}: {exc}", 0
        rows.append(BackendStatus(name, plugin, True, available, count, reason))
    return rows


def register_builtin(backend: Backend) -> None:
    """Register a backend that ships with the core (meta)."""
    Registry("core").backend(backend)


def _registry_autocast_policy(
    self, device_type: str, *, lower_precision=(), fp32=(), promote=(), remove=(), fp32_set_opt_dtype=()
) -> None:
    """Extend or override ``device_type``'s autocast policy (op names; see ``opweave.autocast_policy``).

    ``lower_precision``, ``fp32``, ``promote`` and ``fp32_set_opt_dtype`` add ops (packet
    names or qualified overload names) to that category, moving them out of any
    other; ``remove`` takes them out of the policy. Later changes win.
    """
    from . import _autocast

    _autocast.extend_policy(
        device_type,
        lower_precision=lower_precision,
        fp32=fp32,
        fp32_set_opt_dtype=fp32_set_opt_dtype,
        promote=promote,
        remove=remove,
        source=self.source,
    )


Registry.autocast_policy = _registry_autocast_policy  # appended by the autocast work


# -- allocation observers: the allocator hook the profiler's memory recording uses (appended by the modes work) --

_allocation_observers: tuple = ()
_allocation_observers_lock = threading.Lock()
_plain_storage_init = None  # Storage.__init__ as defined (saved when the first observer is installed)


def _observing_storage_init(self, handle, nbytes, device, backend):
    """Storage.__init__ while observers are installed: construct, then report the new storage to each observer."""
    _plain_storage_init(self, handle, nbytes, device, backend)
    for observer in _allocation_observers:
        observer(self)


def add_allocation_observer(observer) -> None:
    """Call ``observer(storage)`` for every :class:`Storage` constructed (any backend, any thread) until removed.

    Every storage a backend makes goes through ``Storage(handle, nbytes, device, backend)``,
    so this sees the allocations of every backend. Nothing is observed, and nothing is
    paid, while no observer is installed: the observing constructor is swapped in for the
    first observer and the plain one is put back when the last is removed. The same
    observer may be added more than once (each addition needs its own removal).
    """
    global _allocation_observers, _plain_storage_init
    from ._tensor import Storage

    with _allocation_observers_lock:
        if not _allocation_observers:
            if _plain_storage_init is None:
                _plain_storage_init = Storage.__init__
            Storage.__init__ = _observing_storage_init
        _allocation_observers = (*_allocation_observers, observer)


def remove_allocation_observer(observer) -> None:
    """Remove one addition of ``observer`` (``ValueError`` if it is not installed)."""
    global _allocation_observers
    from ._tensor import Storage

    with _allocation_observers_lock:
        observers = list(_allocation_observers)
        if observer not in observers:
            raise ValueError(f"remove_allocation_observer(): {observer!r} is not installed")
        observers.remove(observer)
        _allocation_observers = tuple(observers)
        if not observers:
            Storage.__init__ = _plain_storage_init  # kept set: a constructor already running still calls it
