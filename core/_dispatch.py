"""The dispatcher's public functions: registration shortcuts, snapshots and ``explain``.

Every table lives in the one :class:`~opweave._dispatcher.Dispatcher` (``DISPATCHER``);
this module forwards the registration functions of ``opweave.dispatch`` to it and
re-exports the call paths of ``_calls`` (the generated entry points that read its caches).
See ``_dispatcher`` for the resolution order and ``docs/architecture.md`` for the path of one call.
"""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import Callable, Iterator

from . import _binding, _fallback
from ._calls import call_positional, declined, dispatch, dispatch_with_keyset, factory_keys, make_entry
from ._dispatcher import DISPATCHER, Decline, Kernel, Registration, describe_declines
from ._keys import LAYER_BITS, Layer
from ._ops import OpOverload, OpPacket, _binds

__all__ = [
    "DISPATCHER",
    "Decline",
    "Kernel",
    "Registration",
    "call_positional",
    "dispatch",
    "dispatch_with_keyset",
    "factory_keys",
    "make_entry",
]


def register_kernel(
    op: OpOverload, layer: Layer, backend: str | None, fn: Callable, source: str, deterministic: bool = True
) -> Registration:
    """Register ``fn`` for ``op`` at (layer, backend); ``backend=None`` means every backend."""
    return DISPATCHER.register_kernel(op, layer, backend, fn, source, deterministic)


def register_deterministic_kernel(
    op: OpOverload, layer: Layer, backend: str | None, fn: Callable, source: str
) -> Registration:
    """Register the kernel deterministic mode uses for (layer, backend) instead of a nondeterministic one."""
    return DISPATCHER.register_deterministic(op, layer, backend, fn, source)


@contextlib.contextmanager
def registered(
    op: OpOverload, fn: Callable, *, backend: str | None, layer: Layer = Layer.Dense, source: str = "override"
) -> Iterator[OpOverload]:
    """Register ``fn`` for ``op`` at (layer, backend) inside a ``with`` block; the previous kernel returns after."""
    registration = DISPATCHER.register_kernel(op, layer, backend, fn, source)
    try:
        yield op
    finally:
        registration.remove()


def register_composite_explicit(op, fn, source: str, deterministic=True) -> Registration:
    """Register one kernel used at Dense by every backend without its own."""
    return DISPATCHER.register_composite_explicit(op, fn, source, deterministic)


def register_fallback(layer: Layer, backend: str | None, fn: Callable, source: str) -> Registration:
    """Register a boxed kernel for every op at (layer, backend); ``backend=None``: every backend.

    At Dense it is called as ``fn(op, *args)``; at other layers as ``fn(op, keyset, *args)``
    so that it can redispatch below itself.
    """
    return DISPATCHER.register_fallback(layer, backend, fn, source)


def invalidate(op=None) -> None:
    """Forget resolved kernels (of ``op``, or of every op)."""
    DISPATCHER.invalidate(op)


def cpu_fallback_calls() -> Counter:
    """How many calls of each op ran through the CPU fallback so far (a copy; every backend together)."""
    return Counter(_fallback.calls)


def cached_key_sets(op: OpOverload) -> list[int]:
    """The key sets for which ``op`` has a resolved kernel in its cache."""
    return [keyset for keyset in DISPATCHER.cache_for(op) if keyset >= 0]


def snapshot() -> dict:
    """A copy of every dispatcher table (see ``Dispatcher.snapshot``)."""
    return DISPATCHER.snapshot()


def restore(state: dict) -> None:
    """Put back the tables :func:`snapshot` saved."""
    DISPATCHER.restore(state)


class Explanation:
    """What ``explain`` found: the key set, the chosen kernel, the reasons, and what runs if it declines."""

    def __init__(self, op, keyset: int, kernel, reasons, alternatives=(), declines=()):
        self.op, self.keyset, self.kernel, self.reasons = op, keyset, kernel, reasons
        self.alternatives = list(alternatives)  # the candidates after the chosen one, in order
        self.declines = list(declines)  # what declined the last time such a call ran

    @property
    def nondeterministic(self) -> bool:
        """Whether the chosen kernel is registered ``deterministic=False`` (results may differ bitwise)."""
        return any(r.endswith("(registered nondeterministic)") for r in self.reasons)

    def __str__(self):
        lines = [self.op.name, *self.reasons]
        lines += [f"if it declines: {why}" for why in self.alternatives]
        lines += [f"last call: {why}" for why in self.declines]
        return "\n  ".join(lines)

    __repr__ = __str__


def explain(op: OpOverload | OpPacket, *args: object, **kwargs: object) -> Explanation:
    """Say which key and kernel a call of ``op`` with these arguments would take, and why."""
    if isinstance(op, OpPacket):
        candidates = [o for o in op.overloads.values() if _binds(o, args, kwargs)]
        if not candidates:
            raise TypeError(f"explain: no overload of {op.name} matches these arguments")
        op = candidates[0]
    captured = {}

    def capture(_op, keyset, bound):
        captured["keyset"], captured["args"] = keyset, bound

    _binding.make_entry(op, capture, factory_keys, {}, declined)(*args, **kwargs)
    keyset, bound = captured["keyset"], captured["args"]
    backends = keyset >> LAYER_BITS
    if backends & (backends - 1):
        keyset = DISPATCHER.mixed_device_keyset(op, keyset, bound)
    kernel, reasons = DISPATCHER.resolve(op, keyset)
    alternatives = []
    try:
        alternatives = [why for _, why in DISPATCHER.candidates(op, keyset)][1:]
    except RuntimeError:  # a later candidate cannot run in this mode (deterministic); the chosen one can
        pass
    declines = describe_declines(DISPATCHER.declines.get((op.name, keyset), ()))
    return Explanation(op, keyset, kernel, reasons, alternatives, declines)
