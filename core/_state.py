"""All thread-local state of opweave, in one place.

Modes (default device, dispatch key include/exclude sets, and the layers added
later) keep their per-thread values here, so that nesting and restoring is the
same mechanism everywhere.
"""

from __future__ import annotations

import contextlib
import threading


class _ThreadState(threading.local):
    """Per-thread values; class attributes are each new thread's defaults."""

    default_device = None
    included = 0  # dispatch keys (and mode bits) added to every call's key set
    excluded = 0  # dispatch keys removed from every call's key set
    deterministic_warn_only = False


_STATE = _ThreadState()


def local() -> _ThreadState:
    """The calling thread's state object."""
    return _STATE


@contextlib.contextmanager
def keys_included(keyset: int):
    """Add ``keyset`` to the thread's included dispatch keys inside the block."""
    saved = _STATE.included
    _STATE.included = saved | keyset
    try:
        yield
    finally:
        _STATE.included = saved


@contextlib.contextmanager
def keys_excluded(keyset: int):
    """Add ``keyset`` to the thread's excluded dispatch keys inside the block."""
    saved = _STATE.excluded
    _STATE.excluded = saved | keyset
    try:
        yield
    finally:
        _STATE.excluded = saved
