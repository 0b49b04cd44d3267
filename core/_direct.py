"""Whether a direct path may still stand in for the kernels it replaces.

A direct path (a Tensor method that makes a view without dispatching, a CPU kernel computing
a canonical op in one NumPy call) is only correct while the kernels it stands in for are the
ones it was checked against: the core's and the CPU plugin's. A :class:`Watch` names those ops
(the canonical op and the prims its decomposition calls) and answers, once per dispatcher
generation (``Dispatcher.plan_generation`` moves on every registration, removal, fallback change
and ``restore``), whether every kernel in force for them at Dense on the CPU still comes from
``core`` or ``cpu``. A kernel or fallback registered by anyone else turns the direct path off
until it is removed again.

The hot check is one comparison: ``watch.generation == DISPATCHER.plan_generation``; when it
fails, :meth:`Watch.refresh` looks at the tables.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from ._dispatcher import DISPATCHER
from ._keys import Layer

#: Registration sources a direct path is checked against (tests/test_fastpaths.py, tests/test_views_direct.py).
OWN_SOURCES = frozenset({"core", "cpu"})
_SLOTS = ((Layer.Dense, "cpu"), (Layer.Dense, None))


class Watch:
    """The ops one direct path stands in for; ``generation`` equals the dispatcher's while it may run."""

    __slots__ = ("names", "generation", "_refused", "_on_change")

    def __init__(self, names: Iterable[str], on_change: Callable[[], None] | None = None) -> None:
        self.names = tuple(names)  # qualified op names (``view``, ``prims::as_strided``)
        self.generation = -1  # the dispatcher generation at which the tables were last found untouched
        self._refused = -1  # the generation at which they were last found changed
        self._on_change = on_change  # forgets what the direct path cached (layouts...)

    def refresh(self) -> bool:
        """Look at the tables after the dispatcher's generation moved; True if the direct path may run."""
        now = DISPATCHER.plan_generation
        if now == self.generation:
            return True
        if now == self._refused:
            return False
        if self._on_change is not None:
            self._on_change()
        if all(map(untouched, self.names)):
            self.generation = now
            return True
        self._refused = now
        return False


def untouched(name: str) -> bool:
    """Whether every Dense kernel in force on the CPU for op ``name`` is the core's or the CPU plugin's."""
    op = DISPATCHER.ops.get(name)
    if op is None:
        return False
    table = DISPATCHER.kernels.get(op, {})
    for slot in _SLOTS:
        stack = table.get(slot)
        if stack and stack[-1].source not in OWN_SOURCES:
            return False
        stack = DISPATCHER.fallbacks.get(slot)
        if stack and stack[-1].source not in OWN_SOURCES:
            return False
    for table in (DISPATCHER.composite_explicit, DISPATCHER.composite_implicit):
        stack = table.get(op, {}).get(None)
        if stack and stack[-1].source not in OWN_SOURCES:
            return False
    return True
