"""Whether a direct path may still stand in for the kernels it replaces.

A direct path (a Tensor method that makes a view without dispatching) is only correct while the
kernels it stands in for are the ones it was checked against. It serves the tensors of backends
that declare ``Backend.host_storage`` (storage is host memory NumPy reads with the tensor's
strides, so a view is only a new layout over the same Storage). A :class:`Watch` names the ops
(the canonical op and the prims its decomposition calls) and answers, once per dispatcher
generation (``Dispatcher.plan_generation`` moves on every registration, removal, fallback change
and ``restore``), whether every kernel in force for them at Dense on each such backend still
comes from the core or from the plugin that declared that backend (and, for the kernels every
backend shares, from the core or one of those plugins). A kernel or fallback registered by
anyone else turns the direct path off until it is removed again.

The hot check is one comparison: ``watch.generation == DISPATCHER.plan_generation``; when it
fails, :meth:`Watch.refresh` looks at the tables.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from . import _backends
from ._dispatcher import DISPATCHER
from ._keys import Layer

CORE = "core"  # the registration source of the core's own kernels


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
        owners = _backends.host_storage_owners()
        if all(untouched(name, owners) for name in self.names):
            self.generation = now
            return True
        self._refused = now
        return False


def untouched(name: str, owners: dict[str, str]) -> bool:
    """Whether op ``name``'s Dense kernels in force are the core's or their backend's own plugin's.

    ``owners`` maps each host-storage device type to the plugin that declared it; the backend-independent
    slots (Dense without a backend, the composite tables) may hold the core's or any of those plugins' kernels.
    """
    op = DISPATCHER.ops.get(name)
    if op is None:
        return False
    table = DISPATCHER.kernels.get(op, {})
    shared = {CORE, *owners.values()}
    slots = [((Layer.Dense, device_type), {CORE, plugin}) for device_type, plugin in owners.items()]
    slots.append(((Layer.Dense, None), shared))
    for slot, own in slots:
        stack = table.get(slot)
        if stack and stack[-1].source not in own:
            return False
        stack = DISPATCHER.fallbacks.get(slot)
        if stack and stack[-1].source not in own:
            return False
    for composite in (DISPATCHER.composite_explicit, DISPATCHER.composite_implicit):
        stack = composite.get(op, {}).get(None)
        if stack and stack[-1].source not in shared:
            return False
    return True
