"""The user's allowlist of globals for ``weights_only=True`` (``opweave.serialization.add_safe_globals``)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable

#: modules whose members are never admitted, even when allowlisted (as PyTorch's list)
BLOCKED_MODULES = frozenset({"sys", "os", "posix", "nt", "subprocess", "builtins.eval", "builtins.exec"})

_lock = threading.Lock()
_safe: list = []


def _entry_name(entry) -> tuple[str, object]:
    if isinstance(entry, tuple):
        if len(entry) != 2:
            raise ValueError(f"add_safe_globals: expected (global, 'module.name') pairs, got a tuple of {len(entry)}")
        obj, name = entry
        if not isinstance(name, str):
            raise TypeError(f"add_safe_globals: the name in {entry!r} must be a str, got {type(name).__name__}")
        return name, obj
    module = getattr(entry, "__module__", None)
    qualname = getattr(entry, "__qualname__", None)
    if not isinstance(module, str) or not isinstance(qualname, str):
        raise TypeError(
            f"add_safe_globals: {entry!r} has no __module__/__qualname__; pass (obj, 'module.name') instead"
        )
    return f"{module}.{qualname}", entry


def add_safe_globals(safe_globals: Iterable[Callable | tuple[Callable, str]]) -> None:
    """Admit these globals (classes or functions, or ``(obj, "module.name")`` pairs) under ``weights_only=True``."""
    entries = list(safe_globals)
    for entry in entries:
        _entry_name(entry)
    with _lock:
        for entry in entries:
            if entry not in _safe:
                _safe.append(entry)


def get_safe_globals() -> list:
    """The globals added by :func:`add_safe_globals` (in the order added)."""
    with _lock:
        return list(_safe)


def clear_safe_globals() -> None:
    """Forget every global added by :func:`add_safe_globals`."""
    with _lock:
        _safe.clear()


def _remove(entries) -> None:
    with _lock:
        for entry in entries:
            if entry in _safe:
                _safe.remove(entry)


class safe_globals:  # noqa: N801 - named like torch.serialization.safe_globals
    """Context manager: the given globals are admitted inside the ``with`` block only."""

    def __init__(self, safe_globals: Iterable[Callable | tuple[Callable, str]]):
        self.safe_globals = list(safe_globals)
        for entry in self.safe_globals:
            _entry_name(entry)

    def __enter__(self) -> safe_globals:
        with _lock:
            self._added = [e for e in self.safe_globals if e not in _safe]
        add_safe_globals(self._added)
        return self

    def __exit__(self, *exc: object) -> None:
        _remove(self._added)
        return False


def user_globals() -> dict[str, object]:
    """``"module.name" -> object`` for every allowlisted global."""
    with _lock:
        entries = list(_safe)
    return dict(_entry_name(e) for e in entries)
