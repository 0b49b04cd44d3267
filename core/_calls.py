"""How a call enters the dispatcher: an op's generated entry point, the positional and redispatch paths.

Every path computes the call's key set (from its tensors' keys, or for a factory from its
``device`` argument) and asks the :class:`~opweave._dispatcher.Dispatcher` for the kernel.
``_ops`` builds an overload's entry point here on first use; ``opweave.dispatch`` re-exports
these functions. See ``docs/architecture.md`` for the path of one call.
"""

from __future__ import annotations

from . import _backends, _binding, _keys
from ._device import as_device, get_default_device
from ._dispatcher import DISPATCHER
from ._keys import Layer
from ._state import local
from ._tensor import Tensor

dispatch = DISPATCHER.call
_DENSE = _keys.layer_bit(Layer.Dense)
_STATE = local()
declined = DISPATCHER.declined


def make_entry(op):
    """Create the generated entry point of ``op`` (see ``_binding``)."""
    return _binding.make_entry(op, dispatch, factory_keys, DISPATCHER.cache_for(op), declined)


def factory_keys(op, args) -> int:
    """Key set for a call without tensor arguments: from its ``device`` argument."""
    position = op._device_position
    if position is None:
        names = [a.name for a in op.schema.arguments]
        position = op._device_position = names.index("device") if "device" in names else -1
    value = args[position] if position >= 0 else None
    if value is None and _STATE.default_device is None:  # the everyday case: no device anywhere, the CPU
        if "cpu" not in _backends._ready:
            _backends.ensure_loaded("cpu", op.name)
        return _DENSE | _keys.backend_bit("cpu")
    dev = as_device(value) if value is not None else get_default_device()
    _backends.ensure_loaded(dev.type, op.name)
    return _DENSE | _keys.backend_bit(dev.type)


def call_positional(op, args: tuple):
    """Run ``op`` on already-bound arguments (every argument positional, in schema order)."""
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
