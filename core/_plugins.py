"""Plugins: entry points, lazy loading, isolation, device modules and ``status()``.

Entry points in the group ``opweave.backends`` are read (not imported) the
first time plugins matter: a device type that is not registered yet, ``status()``,
``load()``, ``register_plugin()``, a device module (``import opweave`` itself reads
nothing); an entry point's name is the device type it provides, and that name is
reserved for it. Its module is imported the first time that device
is used, or by :func:`load`. ``OPWEAVE_AUTOLOAD=0`` turns automatic loading off:
plugins are then loaded only by :func:`load` (by name) or :func:`register_plugin`.

Isolation: a plugin that fails to import or register, that declares a device
type another plugin provides, or whose entry point name is already taken, keeps
its error on its :class:`PluginRecord`. :func:`status` and ``opweave doctor``
show it; using its device raises ``RuntimeError`` naming the plugin and the
cause; every other device keeps working.
"""

from __future__ import annotations

import importlib
import os
import pkgutil
import sys
import threading
import traceback
from dataclasses import dataclass, field
from types import ModuleType

import pluggy

from . import _backends, _hookspecs
from ._backends import Backend, BackendClaimError
from ._dispatcher import DISPATCHER
from ._keys import Layer
from ._registry import Registry

ENTRY_POINT_GROUP = "opweave.backends"
AUTOLOAD_VARIABLE = "OPWEAVE_AUTOLOAD"
_WAY_OUT = (
    "opweave.backends.load('{name}') loads one plugin; opweave.backends.register_plugin(module) registers a module"
)


@dataclass
class PluginRecord:
    """One plugin: where it comes from, whether it loaded, and what it provides (or why not)."""

    name: str  # the entry point's name (or the name given to register_plugin)
    value: str  # "module" or "module:attr"
    distribution: str | None = None
    loaded: bool = False
    error: str | None = None  # "ExceptionType: message" when it failed or was refused
    refused: bool = False  # refused (name taken), as opposed to failed (its own code raised)
    traceback: str | None = None
    backends: list = field(default_factory=list)
    features: list = field(default_factory=list)  # (name, available, reason) from Registry.feature
    device_modules: list = field(default_factory=list)

    def describe(self) -> str:
        """``'name' (module, distribution dist)``: how messages name the plugin."""
        dist = f", distribution {self.distribution}" if self.distribution else ""
        return f"'{self.name}' ({self.value}{dist})"


_records: dict[str, PluginRecord] = {}  # by name; the first entry point of a name wins
_duplicates: list[PluginRecord] = []  # later entry points with a name already taken (never loaded)
_device_modules: dict[str, tuple[object, str]] = {}  # opweave.<name> -> (module, plugin)
_lock = threading.RLock()
_discovered = False  # the entry points are read once, at the first call that needs them
_manager = pluggy.PluginManager(_hookspecs.PROJECT)
_manager.add_hookspecs(_hookspecs)


def plugin_manager() -> pluggy.PluginManager:
    """The pluggy manager holding every registered plugin."""
    return _manager


def autoload_enabled() -> bool:
    """False when ``OPWEAVE_AUTOLOAD=0``: plugins load only through :func:`load` or :func:`register_plugin`."""
    return os.environ.get(AUTOLOAD_VARIABLE, "1") != "0"


def discover() -> None:
    """Read the entry points of group ``opweave.backends`` (imports no plugin); reserve their names."""
    global _discovered
    import importlib.metadata  # deferred: reading the installed distributions costs ~20 ms; not needed at import

    with _lock:
        for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
            dist = getattr(ep, "dist", None)
            record = PluginRecord(ep.name, ep.value, dist.name if dist else None)
            first = _records.get(ep.name)
            if first is None:
                _records[ep.name] = record
                _backends.reserve(ep.name, ep.name)
            elif first.value != ep.value and all(d.value != ep.value for d in _duplicates if d.name == ep.name):
                record.refused = True
                record.error = (
                    f"DuplicateEntryPoint: entry point name '{ep.name}' is already used by plugin "
                    f"{first.describe()}; this one ({ep.value}) is ignored"
                )
                _duplicates.append(record)
        _discovered = True


def _ensure_discovered() -> None:
    """Read the entry points once, at the first call that needs them (another thread waits for them)."""
    if not _discovered:
        with _lock:
            if not _discovered:
                discover()


def records() -> list[PluginRecord]:
    """Every known plugin, including the refused duplicates, in discovery order."""
    _ensure_discovered()
    return [*_records.values(), *_duplicates]


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
        record.refused = isinstance(exc, BackendClaimError)
        record.error = f"{type(exc).__name__}: {exc}"
        record.traceback = traceback.format_exc()


def _register(plugin, record: PluginRecord) -> None:
    """Run ``plugin``'s hook; if it raises, nothing it registered stays (backends, kernels, fallbacks)."""
    registry = Registry(record.name)
    if _manager.is_registered(plugin):
        _manager.unregister(plugin)
    _manager.register(plugin, name=record.name)
    try:
        others = [p for p in _manager.get_plugins() if p is not plugin]
        _manager.subset_hook_caller("opweave_register", remove_plugins=others)(registry=registry)
        for name in registry.device_modules:
            _check_device_module_name(name, record.name)
    except Exception:
        _manager.unregister(plugin)
        _backends.release(registry.backends, record.name)
        registry.library.close()  # every kernel, fallback and op the hook registered goes too
        raise
    for name, module in registry.device_modules.items():
        _device_modules[name] = (module, record.name)
    _backends.mark_ready(registry.backends)
    record.loaded = True
    record.backends = registry.backends
    record.features = registry.features
    record.device_modules = list(registry.device_modules)


def register_plugin(module: ModuleType | object, name: str | None = None) -> PluginRecord:
    """Register a plugin module by hand (what entry points do automatically); works with ``OPWEAVE_AUTOLOAD=0``.

    A module an entry point names is registered under that entry point's name;
    registering an already loaded plugin again returns its record. ``RuntimeError``
    names the plugin and the cause if its registration fails (nothing of it stays).
    """
    _ensure_discovered()
    with _lock:
        module_name = getattr(module, "__name__", None)
        if name is None:
            name = next((r.name for r in _records.values() if r.value.split(":")[0].strip() == module_name), None)
        name = name or module_name or repr(module)
        existing = _records.get(name)
        if existing is not None and existing.loaded and _manager.get_plugin(name) is module:
            return existing
        record = PluginRecord(name, module_name or name)
        try:
            _register(module, record)
        except Exception as exc:
            cause = f"{type(exc).__name__}: {exc}"
            raise RuntimeError(f"register_plugin: plugin {record.describe()} failed: {cause}") from exc
        _records[name] = record
        return record


def load(name: str | None = None) -> PluginRecord | None:
    """Import and register every discovered plugin, or the one whose entry point is ``name``.

    Explicit, so it works with ``OPWEAVE_AUTOLOAD=0``. Loading everything isolates
    broken plugins (see :func:`status`); loading one by name raises: ``ValueError``
    for a name no entry point has (listing the known names), ``RuntimeError`` naming
    the plugin and the cause when it fails.
    """
    _ensure_discovered()
    with _lock:
        if name is None:
            for record in list(_records.values()):
                _load_record(record)
            return None
        record = _records.get(name)
        if record is None:
            known = ", ".join(sorted(_records)) or "none"
            raise ValueError(f"load(): no plugin named '{name}' (entry points of group {ENTRY_POINT_GROUP}: {known})")
        _load_record(record)
        if record.error:
            raise RuntimeError(f"load(): plugin {record.describe()} failed to load: {record.error}")
        return record


def source_paths() -> tuple[str, ...]:
    """Where the loaded plugins' code lives: a package's folder (ending in a separator) or a module's file."""
    paths = []
    for plugin in _manager.get_plugins():
        module = plugin if isinstance(plugin, ModuleType) else sys.modules.get(getattr(plugin, "__module__", ""))
        path = getattr(module, "__file__", None)
        if not path:
            continue
        path = os.path.abspath(path)
        if os.path.basename(path).startswith("__init__."):
            path = os.path.dirname(path) + os.sep
        paths.append(path)
    return tuple(paths)


def load_if_autoload() -> None:
    """Load every discovered plugin unless ``OPWEAVE_AUTOLOAD=0`` (for callers that need every kernel)."""
    if autoload_enabled():
        load()


def _loader(device_type: str, op_name: str | None) -> Backend:
    """Load the plugin that provides ``device_type`` (``_backends.ensure_loaded``'s slow path), or raise."""
    autoload = autoload_enabled()
    _ensure_discovered()
    with _lock:
        backend = _backends._backends.get(device_type)
        if backend is not None:
            return backend
        record = _records.get(device_type)
        if autoload:
            if record is not None:
                _load_record(record)
            backend = _backends._backends.get(device_type)
            if backend is None and (record is None or not record.error):
                for other in list(_records.values()):  # a plugin may provide a device under another name
                    _load_record(other)
                backend = _backends._backends.get(device_type)
            if backend is not None:
                return backend
    raise RuntimeError(_unavailable_message(device_type, op_name, record, autoload))


def _unavailable_message(device_type: str, op_name: str | None, record, autoload: bool) -> str:
    where = f"{op_name}: " if op_name else ""
    if record is not None and record.error:
        verb = "was refused" if record.refused else "failed to load"
        return f"{where}device '{device_type}' is unavailable: plugin {record.describe()} {verb}: {record.error}"
    if record is not None and not autoload:
        return (
            f"{where}device type '{device_type}' is provided by plugin {record.describe()}, which is not loaded "
            f"because {AUTOLOAD_VARIABLE}=0: {_WAY_OUT.format(name=device_type)}"
        )
    known = ", ".join(sorted(_backends._backends)) or "none"
    message = f"{where}no backend provides device type '{device_type}' (loaded backends: {known})"
    if not autoload:
        pending = ", ".join(sorted(r.name for r in _records.values() if not r.loaded)) or "none"
        message += (
            f"; {AUTOLOAD_VARIABLE}=0 turned automatic plugin loading off (plugins not loaded: {pending}): "
            + _WAY_OUT.format(name="name")
        )
    broken = [r for r in records() if r.error]
    if broken:
        message += "; plugins that did not load: " + "; ".join(f"{r.describe()}: {r.error}" for r in broken)
    return message


# -- device modules: opweave.<device type> -------------------------------------------------------------------


def _check_device_module_name(name: str, plugin: str) -> None:
    if not isinstance(name, str) or not name.isidentifier() or name.startswith("_"):
        raise ValueError(f"device module name {name!r} is not a public identifier")
    package = sys.modules["opweave"]
    submodules = {m.name for m in pkgutil.iter_modules(package.__path__)}
    if name in vars(package) or name in submodules:
        raise ValueError(f"device module '{name}' would hide opweave.{name}")
    held = _device_modules.get(name)
    if held is not None and held[1] != plugin:
        raise RuntimeError(f"the device module opweave.{name} is already registered by plugin '{held[1]}'")


def register_device_module(name: str, module: ModuleType | object) -> None:
    """Make ``module`` the namespace ``opweave.<name>``, as ``torch._register_device_module`` does.

    Plugins call ``registry.device_module(name, module)`` from their hook instead.
    ``RuntimeError`` if ``opweave.<name>`` is already registered; ``ValueError`` if
    ``name`` is not a public identifier or would hide an attribute of ``opweave``.
    """
    with _lock:
        if name in _device_modules:
            raise RuntimeError(
                f"register_device_module: opweave.{name} is already registered (by plugin '{_device_modules[name][1]}')"
            )
        _check_device_module_name(name, "user")
        _device_modules[name] = (module, "user")


def device_module_names() -> list[str]:
    """The names of the device modules registered so far (``opweave.<name>``)."""
    return sorted(_device_modules)


def device_module(name: str) -> ModuleType:
    """``opweave.<name>``: the device module of a plugin, loading the plugin first if needed.

    ``AttributeError`` (so ``hasattr`` works) naming the plugin and the cause when
    it did not load, and the way out when ``OPWEAVE_AUTOLOAD=0`` kept it unloaded.
    """
    found = _device_modules.get(name)
    if found is not None:
        return found[0]
    missing = f"module 'opweave' has no attribute '{name}'"
    if name.startswith("_"):
        raise AttributeError(missing)
    _ensure_discovered()
    record = _records.get(name)
    if record is None and name not in _backends._backends:
        raise AttributeError(missing)
    try:
        _backends.ensure_loaded(name)
    except RuntimeError as exc:
        if record is None or not record.loaded:
            raise AttributeError(f"{missing}: {exc}") from None
    found = _device_modules.get(name)
    if found is not None:
        return found[0]
    plugin = _records.get(_backends.owner(name) or name)
    who = f"plugin {plugin.describe()}" if plugin is not None else f"'{_backends.owner(name)}'"
    raise AttributeError(f"{missing}: {who} registers no device module '{name}'")


# -- status ---------------------------------------------------------------------------------------------------


@dataclass
class BackendStatus:
    """One line of :func:`status`.

    ``state`` is one of "available", "unavailable" (loaded, no usable device),
    "not loaded" (not imported yet), "failed" (its import or hook raised) and
    "refused" (it claimed a name another plugin holds).
    """

    name: str
    plugin: str
    loaded: bool
    available: bool
    devices: int
    reason: str | None
    kind: str = "device"  # "device", "feature" (see Registry.feature) or "plugin" (provides neither)
    state: str = ""
    kernels: int | None = None  # prims with a kernel of this backend (devices only)

    def __post_init__(self):
        if not self.state:
            self.state = "available" if self.available else "unavailable" if self.loaded else "not loaded"

    def __str__(self):
        return self.line(10)

    def line(self, name_width: int) -> str:
        """One table row with the name column ``name_width`` characters wide."""
        why = f" ({self.reason})" if self.reason else ""
        if self.kind == "feature":
            what = "feature"
        elif self.kind == "plugin":
            what = "plugin"
        elif not self.loaded:
            what = ""
        else:
            what = f"devices={self.devices}" + (f" prims={self.kernels}" if self.kernels is not None else "")
        return f"{self.name:<{name_width}} {self.state:<12} {what:<21} plugin={self.plugin}{why}"


class StatusList(list):
    """A list of :class:`BackendStatus` that prints as a table."""

    def __str__(self):
        width = max((len(s.name) for s in self), default=0)
        return "\n".join(s.line(max(width, 10)) for s in self)


def _prim_kernel_count(device_type: str) -> int:
    from ._ops import catalog

    return sum(1 for op in catalog(kind="prim") if DISPATCHER.kernel(op, Layer.Dense, device_type) is not None)


def _device_row(name: str, backend: Backend) -> BackendStatus:
    plugin = _backends.owner(name) or "core"
    record = _records.get(plugin)
    where = record.value if record is not None else plugin
    try:
        available = bool(backend.is_available())
        reason = None if available else backend.unavailable_reason()
        count = backend.device_count() if available else 0
    except Exception as exc:
        available, reason, count = False, f"{type(exc).__name__}: {exc}", 0
    kernels = _prim_kernel_count(name)
    if available and kernels == 0 and name != "meta" and not getattr(backend, "cpu_fallback", False):
        reason = "it registers no prim kernels: every op on it raises NotImplementedError"
    return BackendStatus(name, where, True, available, count, reason, kernels=kernels)


def status(load_all: bool = True) -> StatusList:
    """Every backend and plugin: state, device count, prims with a kernel, and why not.

    ``load_all=True`` loads every discovered plugin first (unless ``OPWEAVE_AUTOLOAD=0``);
    with ``load_all=False`` plugins not imported yet say "not loaded".
    """
    autoload = autoload_enabled()
    _ensure_discovered()
    if load_all and autoload:
        load()
    rows = StatusList()
    for name in sorted(_backends._backends):
        rows.append(_device_row(name, _backends._backends[name]))
    for record in sorted(records(), key=lambda r: r.name):
        if record.error:
            state = "refused" if record.refused else "failed"
            rows.append(BackendStatus(record.name, record.value, False, False, 0, record.error, state=state))
        elif not record.loaded:
            reason = None if autoload else f"{AUTOLOAD_VARIABLE}=0: opweave.backends.load('{record.name}') loads it"
            rows.append(BackendStatus(record.name, record.value, False, False, 0, reason, state="not loaded"))
        elif record.features:
            for feature, available, reason in record.features:
                rows.append(BackendStatus(feature, record.value, True, available, 0, reason, "feature"))
        elif not record.backends:
            rows.append(BackendStatus(record.name, record.value, True, True, 0, None, "plugin", state="loaded"))
    rows.sort(key=lambda row: row.name)
    return rows


_backends.set_loader(_loader)
