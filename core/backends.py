"""``opweave.backends``: devices, plugins and their status."""

from __future__ import annotations

from ._backends import (
    ENTRY_POINT_GROUP,
    Backend,
    BackendStatus,
    Registry,
    check_device,
    get,
    load,
    plugin_manager,
    register_plugin,
    status,
)
from ._tensor import Storage

__all__ = [
    "ENTRY_POINT_GROUP",
    "Backend",
    "BackendStatus",
    "Registry",
    "Storage",
    "check_device",
    "get",
    "is_available",
    "load",
    "plugin_manager",
    "register_plugin",
    "status",
]


def is_available(device_type: str) -> bool:
    """Whether a backend for ``device_type`` is installed, loads, and has a usable device."""
    try:
        return bool(get(device_type).is_available())
    except RuntimeError:
        return False
