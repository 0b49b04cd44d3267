"""``opweave.backends``: devices, plugins and their status."""

from __future__ import annotations

from typing import Any

from .. import _device
from .._backends import Backend, BackendClaimError, check_device, get
from .._hooks import add_allocation_observer, remove_allocation_observer
from .._kernel_check import KernelError
from .._plugins import (
    AUTOLOAD_VARIABLE,
    ENTRY_POINT_GROUP,
    BackendStatus,
    PluginRecord,
    autoload_enabled,
    load,
    plugin_manager,
    register_device_module,
    register_plugin,
    status,
)
from .._plugins import records as plugins
from .._registry import Registry
from .._tensor import Storage

__all__ = [
    "AUTOLOAD_VARIABLE",
    "ENTRY_POINT_GROUP",
    "Backend",
    "BackendClaimError",
    "BackendStatus",
    "KernelError",
    "PluginRecord",
    "Registry",
    "Storage",
    "add_allocation_observer",
    "autoload_enabled",
    "check_device",
    "current_device_index",
    "get",
    "is_available",
    "load",
    "memory_stats",
    "plugin_manager",
    "plugins",
    "register_device_module",
    "register_plugin",
    "remove_allocation_observer",
    "set_device_index",
    "status",
]


def current_device_index(device_type: str) -> int:
    """The index that ``device_type`` without an index means in this thread (0 unless :func:`set_device_index`)."""
    return _device.current_index(device_type)


def set_device_index(device: _device.device | str) -> None:
    """Make ``device``'s type without an index mean ``device`` in this thread, as ``torch.cuda.set_device``.

    ``opweave.backends.set_device_index("vnpu:1")``: then ``opweave.empty(2, device="vnpu")`` is on
    ``vnpu:1``. ``RuntimeError`` if the device does not exist; ``ValueError`` without an index.
    """
    dev = _device.as_device(device)
    if dev is None or dev.index is None or dev.type in _device.UNINDEXED:
        raise ValueError(f"set_device_index(): expected a device with an index such as 'vnpu:1', got {device!r}")
    check_device(dev)
    _device.set_current_index(dev.type, dev.index)


def is_available(device_type: str) -> bool:
    """Whether a backend for ``device_type`` is installed, loads, and has a usable device."""
    try:
        return bool(get(device_type).is_available())
    except RuntimeError:
        return False


def memory_stats(device: _device.device | str | int) -> dict[str, Any]:
    """The allocator statistics of ``device`` (``"opencl"``, ``"vnpu:1"``...): ``Backend.memory_stats``.

    Backends with an allocator report at least ``allocated`` (bytes in live blocks), ``reserved``, ``peak`` and
    ``num_allocs``; one without (the CPU) returns ``{}``.
    """
    dev = _device.as_device(device)
    return get(dev.type).memory_stats(dev)


# -- per-device flags: ``opweave.backends.<device>.matmul.allow_tf32`` (appended by the modes work) ----------


def float32_matmul_mode(device_type: str) -> str:
    """What a backend should do for a float32 matmul now: ``"ieee"`` or its declared mode (see ``Backend``)."""
    from .._modes import float32_matmul_mode as mode

    return mode(device_type)


def __getattr__(name: str):
    """``opweave.backends.<device type>``: that device type's flags (``.matmul.allow_tf32``).

    ``opweave.backends.cuda`` is a module of its own (cuBLAS's flags and ``is_built()``) sharing that object.

    ``opweave.backends.quantized`` is the quantized engine selection (``engine``, ``supported_engines``).
    """
    if name.startswith("_") or not name.isidentifier():
        raise AttributeError(f"module 'opweave.backends' has no attribute {name!r}")
    if name in ("kernel", "cuda"):  # submodules (``from opweave.backends import kernel`` asks here first)
        import importlib

        return importlib.import_module(f"{__name__}.{name}")
    if name == "quantized":
        from ..quantization._engine import flags

        return flags
    from .._modes import device_flags

    return device_flags(name)
