"""Declared extension points of the core: allocation observers and the lazy-storage marker.

Every storage a backend makes goes through ``Storage(handle, nbytes, device, backend)``;
its constructor calls each observer added with :func:`add_allocation_observer` (nothing
is paid beyond one truth test while there are none). A backend may give a result no
storage until someone asks for it (``Backend.storage_for``); while the core makes such a
storage, :func:`making_lazy_storage` is true on that thread, so that an observer can tell
"memory that already existed got its Storage object" from a new allocation.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

observers: tuple = ()  # read by Storage.__init__; replaced (never mutated) under the lock
_lock = threading.Lock()


class _Lazy(threading.local):
    depth = 0


_lazy = _Lazy()


def add_allocation_observer(observer: Callable) -> None:
    """Call ``observer(storage)`` for every :class:`Storage` constructed (any backend, any thread) until removed.

    The same observer may be added more than once (each addition needs its own removal).
    """
    global observers
    if not callable(observer):
        raise TypeError(f"add_allocation_observer(): observer must be callable, not {type(observer).__name__}")
    with _lock:
        observers = (*observers, observer)


def remove_allocation_observer(observer: Callable) -> None:
    """Remove one addition of ``observer`` (``ValueError`` if it is not installed)."""
    global observers
    with _lock:
        found = list(observers)
        if observer not in found:
            raise ValueError(f"remove_allocation_observer(): {observer!r} is not installed")
        found.remove(observer)
        observers = tuple(found)


def notify(storage) -> None:
    """Hand a new storage to every observer (``Storage.__init__`` calls this when there are any)."""
    for observer in observers:
        observer(storage)


def making_lazy_storage() -> bool:
    """Whether the calling thread is making the Storage of an existing tensor (not a new allocation)."""
    return _lazy.depth > 0


class lazy_storage:
    """Context: the storage made inside wraps memory that already existed (see :func:`making_lazy_storage`)."""

    def __enter__(self):
        _lazy.depth += 1

    def __exit__(self, *exc):
        _lazy.depth -= 1
