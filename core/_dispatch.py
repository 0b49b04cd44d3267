"""The dispatcher's entry points: calls, registration shortcuts and ``explain``.

Every table lives in the one :class:`~opweave._dispatcher.Dispatcher` (``DISPATCHER``);
this module generates the entry points that read its caches and forwards the
registration functions of ``opweave.dispatch`` to it. See ``_dispatcher`` for the
resolution order and ``docs/architecture.md`` for the path of one call.
"""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from . import _binding, _keys
from ._dispatcher import DISPATCHER, Decline, Kernel, Registration, describe_declines
from ._keys import LAYER_BITS, Layer
from ._tensor import Tensor

if TYPE_CHECKING:
    from ._ops import OpOverload, OpPacket

__all__ = ["DISPATCHER", "Decline", "Kernel", "Registration"]


def make_entry(op):
    """Create the generated entry point of ``op`` (see ``_binding``)."""
    return _binding.make_entry(op, dispatch, factory_keys, DISPATCHER.cache_for(op), declined)


def factory_keys(op, args) -> int:
    """Key set for a call without tensor arguments: from its ``device`` argument."""
    from . import _backends
    from ._device import as_device, get_default_device

    position = op._device_position
    if position is None:
        names = [a.name for a in op.schema.arguments]
        position = op._device_position = names.index("device") if "device" in names else -1
    value = args[position] if position >= 0 else None
    dev = as_device(value) if value is not None else get_default_device()
    _backends.ensure_loaded(dev.type, op.name)
    return _keys.layer_bit(Layer.Dense) | _keys.backend_bit(dev.type)


dispatch = DISPATCHER.call
declined = DISPATCHER.declined


def call_positional(op, args: tuple):
    """Run ``op`` on already-bound arguments (every argument positional, in schema order)."""
    from ._state import local

    keyset = 0
    for value in args:
        if isinstance(value, Tensor):
            keyset |= value._keys
        elif isinstance(value, (list, tuple)):
            for item in value:
                if isinstance(item, Tensor):
                    keyset |= item._keys
    if not keyset:
        keyset = factory_keys(op, args)
    state = local()
    return DISPATCHER.call(op, (keyset | state.included) & ~state.excluded, args)


def dispatch_with_keyset(op, keyset: int, args: tuple):
    """Run ``op`` for an explicit key set (redispatch from a layer kernel)."""
    return DISPATCHER.call(op, keyset, args)


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
    from . import _fallback

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
    from ._ops import OpPacket, _binds

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
