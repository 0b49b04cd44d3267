"""All thread-local state of opweave, in one place.

Modes (default device, dispatch key include/exclude sets, and the layers added
later) keep their per-thread values here, so that nesting and restoring is the
same mechanism everywhere.
"""

from __future__ import annotations

import contextlib
import threading
import weakref
from collections.abc import Iterator

_thread_dicts: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # Thread -> its state's __dict__
_thread_dicts_lock = threading.Lock()


class _ThreadState(threading.local):
    """Per-thread values; class attributes are each new thread's defaults (every field is declared here)."""

    default_device = None
    included = 0  # dispatch keys (and mode bits) added to every call's key set
    excluded = 0  # dispatch keys removed from every call's key set
    deterministic_warn_only = False
    profilers = ()  # active opweave.profiler.profile objects of this thread, outermost first
    autocast = None  # device type -> _autocast._DeviceState of this thread (created on first use)
    grad_enabled = True  # opweave.autograd grad mode (no_grad / enable_grad / set_grad_enabled)
    inference = False  # inside opweave.inference_mode

    def __init__(self):
        """Runs on each thread's first access: remember its values (for :func:`set_process_default`)."""
        with _thread_dicts_lock:
            _thread_dicts[threading.current_thread()] = self.__dict__


_STATE = _ThreadState()


def local() -> _ThreadState:
    """The calling thread's state object."""
    return _STATE


@contextlib.contextmanager
def keys_included(keyset: int) -> Iterator[None]:
    """Add ``keyset`` to the thread's included dispatch keys inside the block."""
    saved = _STATE.included
    _STATE.included = saved | keyset
    try:
        yield
    finally:
        _STATE.included = saved


@contextlib.contextmanager
def keys_excluded(keyset: int) -> Iterator[None]:
    """Add ``keyset`` to the thread's excluded dispatch keys inside the block."""
    saved = _STATE.excluded
    _STATE.excluded = saved | keyset
    try:
        yield
    finally:
        _STATE.excluded = saved


# -- every thread's state, for process-global modes -------------------------------------------------


def set_process_default(name: str, update) -> None:
    """Change a thread-state field for every thread: ``value = update(value)``.

    The class-level default (what new threads and threads that never set the field
    see) and every existing thread's own value are updated. A thread inside a block
    that saved the field on entry (``keys_included``) restores its saved value on exit.
    """
    if not hasattr(_ThreadState, name):
        raise AttributeError(f"set_process_default: no thread-state field {name!r} (declare it in _ThreadState)")
    with _thread_dicts_lock:
        setattr(_ThreadState, name, update(getattr(_ThreadState, name)))
        for values in list(_thread_dicts.values()):
            if name in values:
                values[name] = update(values[name])
