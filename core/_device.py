"""Device objects: ``opweave.device("opencl:1")`` and the default device.

A device is a (type, index) pair. The type is any name a backend registered
("cpu", "meta", "opencl", a vendor's "npu"); parsing does not need the backend
to be loaded, so that a device can be named before its plugin is imported.
"""

from __future__ import annotations

import re
import threading

from . import _state

_DEVICE_RE = re.compile(r"^([a-zA-Z_][a-zA-Z0-9_]*)(?::(\d+))?$")


class device:
    """A device type plus an optional index, as in ``torch.device``.

    ``device("cpu")``, ``device("opencl:1")``, ``device("opencl", 1)`` and
    ``device(other_device)`` are accepted. Used as a context manager it sets the
    default device for factory functions inside the ``with`` block.
    """

    __slots__ = ("type", "index")

    def __init__(self, type: str | device, index: int | None = None) -> None:
        if isinstance(type, device):
            if index is not None:
                raise ValueError("device(): index given twice")
            type, index = type.type, type.index
        elif isinstance(type, str):
            match = _DEVICE_RE.match(type.strip())
            if match is None:
                raise ValueError(f"device(): invalid device string {type!r}; expected 'type' or 'type:N'")
            type, parsed = match.group(1), match.group(2)
            if parsed is not None:
                if index is not None:
                    raise ValueError(f"device(): index given twice in {type!r} and index={index}")
                index = int(parsed)
        else:
            raise TypeError(f"device(): expected a str or device, got {type.__class__.__name__}")
        if index is not None:
            if not isinstance(index, int) or isinstance(index, bool) or index < 0:
                raise ValueError(f"device(): index must be a non-negative int, got {index!r}")
        self.type = type
        self.index = index

    def __eq__(self, other):
        if isinstance(other, str):
            try:
                other = device(other)
            except (TypeError, ValueError):
                return False
        if not isinstance(other, device):
            return NotImplemented
        return self.type == other.type and self.index == other.index

    def __hash__(self):
        return hash((self.type, self.index))

    def __repr__(self):
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __enter__(self) -> device:
        state = _state.local()
        state.__dict__.setdefault("device_stack", []).append(state.default_device)
        state.default_device = self
        return self

    def __exit__(self, *exc: object) -> None:
        state = _state.local()
        state.default_device = state.device_stack.pop()


def as_device(value) -> device | None:
    """Return ``value`` as a device; ``None`` stays ``None``."""
    if value is None or isinstance(value, device):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        raise TypeError("a bare int is not a device here; write 'type:N'")
    return device(value)


UNINDEXED = frozenset({"cpu", "meta"})  # device types without an index (one device each)
_current = threading.local()  # per thread: device type -> current index (0 unless set)


def current_index(device_type: str) -> int:
    """The index an index-less ``device_type`` means in this thread (0 unless set; see :func:`set_current_index`)."""
    return getattr(_current, "indexes", {}).get(device_type, 0)


def set_current_index(device_type: str, index: int) -> None:
    """Make ``device_type`` without an index mean ``device_type:index`` in this thread (``torch.cuda.set_device``)."""
    if not isinstance(index, int) or isinstance(index, bool) or index < 0:
        raise ValueError(f"set_current_index(): index must be a non-negative int, got {index!r}")
    _current.__dict__.setdefault("indexes", {})[device_type] = index


def with_index(dev: device) -> device:
    """``dev`` with its index filled in from the current device of its type (cpu and meta have none)."""
    if dev.index is not None or dev.type in UNINDEXED:
        return dev
    return device(dev.type, current_index(dev.type))


def set_default_device(dev: device | str | int | None) -> None:
    """Set the device that factory functions use when none is given."""
    _state.local().default_device = as_device(dev)


def get_default_device() -> device:
    """The device factory functions use when none is given (``cpu`` unless set).

    An index-less default type means the current device of that type (see :func:`with_index`).
    """
    default = _state.local().default_device
    return with_index(default) if default is not None else device("cpu")
