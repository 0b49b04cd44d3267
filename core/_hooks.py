"""Declared extension points of the core: allocation observers, the lazy-storage marker, and
the two services ``Tensor`` asks of the layers above it.

Every storage a backend makes goes through ``Storage(handle, nbytes, device, backend)``;
its constructor calls each observer added with :func:`add_allocation_observer` (nothing
is paid beyond one truth test while there are none). A backend may give a result no
storage until someone asks for it (``Backend.storage_for``); while the core makes such a
storage, :func:`making_lazy_storage` is true on that thread, so that an observer can tell
"memory that already existed got its Storage object" from a new allocation.

The ``Tensor`` class sits below the backend table and the factories in the layer order
(``docs/architecture.md``), yet a tensor makes its lazy storage through its backend and
pickles through a factory. Those two layers declare their function here when they are
imported (:func:`provide_backend_lookup`, :func:`provide_tensor_rebuilder`); ``_tensor``
calls :func:`backend_for` and :func:`tensor_rebuilder` and imports neither module.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

observers: tuple = ()  # read by Storage.__init__; replaced (never mutated) under the lock
_lock = threading.Lock()


class _Lazy(threading.local):
    depth = 0


_lazy = _Lazy()


class _Trace(threading.local):
    recorder = None  # the recorder (``_plans``) of the call this thread is tracing into a plan, or None


#: Per-thread tracing state of per-signature plans: ``Tensor._set_metadata`` and the data reads of
#: ``Tensor`` tell the recorder (a call whose decomposition does either in Python is not planned).
trace = _Trace()


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


def _not_provided(*args: object) -> object:
    raise RuntimeError("opweave: the core is not fully imported (import opweave first)")


_backend_lookup: Callable = _not_provided
_tensor_rebuilder: Callable = _not_provided


def provide_backend_lookup(lookup: Callable) -> None:
    """Declare ``lookup(device_type) -> Backend`` (``_backends.get``)."""
    global _backend_lookup
    _backend_lookup = lookup


def backend_for(device_type: str):
    """The backend serving ``device_type`` (through the declared lookup)."""
    return _backend_lookup(device_type)


def provide_tensor_rebuilder(rebuild: Callable) -> None:
    """Declare the module-level function that unpickles a tensor (``_factories._rebuild_tensor``)."""
    global _tensor_rebuilder
    _tensor_rebuilder = rebuild


def tensor_rebuilder() -> Callable:
    """The function ``Tensor.__reduce_ex__`` names (pickle records its module and name)."""
    return _tensor_rebuilder
