"""``opweave.backends``: devices, plugins and their status."""

from __future__ import annotations

from ._backends import (
    ENTRY_POINT_GROUP,
    Backend,
    BackendStatus,
    Registry,
    add_allocation_observer,
    check_device,
    get,
    load,
    plugin_manager,
    register_plugin,
    remove_allocation_observer,
    status,
)
from ._tensor import Storage

__all__ = [
    "ENTRY_POINT_GROUP",
    "Backend",
    "BackendStatus",
    "Registry",
    "Storage",
    "add_allocation_observer",
    "check_device",
    "get",
    "is_available",
    "load",
    "memory_stats",
    "plugin_manager",
    "register_plugin",
    "remove_allocation_observer",
    "status",
]


def is_available(device_type: str) -> bool:
    """Whether a backend for ``device_type`` is installed, loads, and has a usable device."""
    try:
        return bool(get(device_type).is_available())
    except RuntimeError:
        return False


def memory_stats(device) -> dict:
    """The allocator statistics of ``device`` (``"opencl"``, ``"vnpu:1"``...): ``Backend.memory_stats``.

    Backends with an allocator report at least ``allocated`` (bytes in live blocks), ``reserved``, ``peak`` and
    ``num_allocs``; one without (the CPU) returns ``{}``.
    """
    from ._device import as_device

    dev = as_device(device)
    return get(dev.type).memory_stats(dev)


# -- per-device flags: ``opweave.backends.<device>.matmul.allow_tf32`` (appended by the modes work) ----------


def float32_matmul_mode(device_type: str) -> str:
    """What a backend should do for a float32 matmul now: ``"ieee"`` or its declared mode (see ``Backend``)."""
    from ._modes import float32_matmul_mode as mode

    return mode(device_type)


def __getattr__(name: str):
    """``opweave.backends.<device type>``: that device type's flags (``.matmul.allow_tf32``).

    ``opweave.backends.quantized`` is the quantized engine selection (``engine``, ``supported_engines``).
    """
    if name.startswith("_") or not name.isidentifier():
        raise AttributeError(f"module 'opweave.backends' has no attribute {name!r}")
    if name == "quantized":
        from .quantization._engine import flags

        return flags
    from ._modes import device_flags

    return device_flags(name)
