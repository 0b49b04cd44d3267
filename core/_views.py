"""Direct Tensor methods for the everyday view ops: ``t.view(2, 8)``, ``t.t()``, ``t.unsqueeze(0)``...

A view op's result is a tensor over its input's storage whose layout (sizes, strides, storage
offset) depends only on the input's layout and the op's arguments. Through the op's entry point
and its plan that costs about ten Python calls; the direct method costs one dict lookup.

Each method keeps a table ``(key set, shape, strides, offset, args, argument types) -> layout``. A call
whose key is in the table makes the view from the layout, as a plan's precomputed view step does
(``_plans._precomputed_view``: same storage, ``_base``, dtype, device and keys; no autograd
metadata). A call whose key is not runs the op's general path and enters the result's layout in
the table when that result is a plain view of the input (a reshape that had to copy is not
entered, so it keeps copying; a call that raises enters nothing and raises again next time). So
the layouts are always what the general path computed, never computed a second way.

The method steps aside (runs the general path) unless nothing could tell the difference: a tensor
of a backend that declares ``host_storage`` (the CPU's) with only its Dense key (no Python subclass
key, not quantized, not a wrapped number; the key set is part of the table's key and only such
tensors' layouts are entered), no autograd metadata, no key included or excluded in the thread
(grad mode off, autocast, the profiler, deterministic mode, a plan being traced), not in inference
mode, called positionally, and every Dense kernel of the op and of the view prims on that backend
still the core's or its plugin's (``_direct.Watch``: a kernel registered by anyone else turns the
direct methods off).
"""

from __future__ import annotations

from typing import Any

from . import _backends, _direct
from ._dispatcher import DISPATCHER
from ._state import local
from ._tensor import Tensor

#: Tensor methods made direct, each the name of its op packet.
METHODS = ("view", "reshape", "t", "transpose", "permute", "unsqueeze", "expand", "flatten", "squeeze")
#: The view prims their decompositions call (any of them re-registered turns the direct methods off).
VIEW_PRIMS = (
    "prims::as_strided",
    "prims::broadcast_in_dim",
    "prims::collapse_view",
    "prims::expand_dims",
    "prims::slice",
    "prims::slice_in_dim",
    "prims::split_dim",
    "prims::squeeze",
    "prims::transpose",
    "prims::view_of",
)
MAX_LAYOUTS = 1024  # entries per method; a full table is emptied (a sweep over shapes does not grow memory)
_SELF = ()  # the layout entry of a call whose general path returns the input itself (``flatten`` of 1-D)

_STATE = local()
_HOST = _backends.host_storage_keys  # Dense key sets of the host-storage backends (updated in place)
_tables: list[dict] = []
_new = object.__new__


def _forget() -> None:
    for table in _tables:
        table.clear()


def _direct_method(general, watch: _direct.Watch):
    """The direct method of one view op in front of ``general`` (the packet's Tensor method)."""
    layouts: dict = {}
    _tables.append(layouts)
    get = layouts.get
    state = _STATE
    dispatcher = DISPATCHER

    def method(self: Tensor, *args: Any, **kwargs: Any) -> Any:
        if (
            type(self) is Tensor  # not a subclass, nor a non-tensor called unbound (the general path's TypeError)
            and self._ag is None
            and not kwargs
            and not (state.included or state.excluded or state.inference)
            and self._qparams is None
            and not self._wrapped_number
            and (watch.generation == dispatcher.plan_generation or watch.refresh())
        ):
            stride = self._stride
            if stride is None:
                if self._keys not in _HOST:  # a lazy backend's tensor: asking for strides could make them
                    return general(self, *args, **kwargs)
                stride = self.stride()
            key = (self._keys, self._shape, stride, self._offset, args, tuple(map(type, args)))
            try:
                layout = get(key)
            except TypeError:  # an unhashable argument (a list of sizes): the general path
                return general(self, *args)
            if layout is None:
                return _record(general, self, args, key, layouts)
            if layout is _SELF:
                return self
            t = _new(Tensor)  # the fields ``_fastpaths._slice`` fills too (inline there and here: see there)
            t._st = self._storage
            t._shape, t._stride, t._offset = layout
            t._dtype, t._device, t._keys = self._dtype, self._device, self._keys
            t._native = None
            t._wrapped_number = False
            t._qparams = None
            t._ag = None
            base = self._base
            t._base = self if base is None else base
            return t
        return general(self, *args, **kwargs)

    method.__name__, method.__qualname__, method.__doc__ = general.__name__, general.__qualname__, general.__doc__
    return method


def _record(general, self: Tensor, args: tuple, key: tuple, layouts: dict):
    """Run the general path and remember the result's layout if it is a plain view of ``self``."""
    result = general(self, *args)
    if self._keys not in _HOST:  # not a host-storage backend's plain tensor: never a key, so never served
        return result
    if not all(type(a) is int or (type(a) is tuple and all(type(x) is int for x in a)) for a in args):
        return result  # sizes and dims only: a dtype, a tensor or a float is never a key
    if result is self:
        layout = _SELF
    elif (
        type(result) is Tensor
        and result._st is not None
        and result._st is self._st
        and result._base is (self if self._base is None else self._base)
        and result._dtype is self._dtype
        and result._keys == self._keys
        and result._ag is None
        and result._qparams is None
        and not result._wrapped_number
        and result._stride is not None
    ):
        layout = (result._shape, result._stride, result._offset)
    else:
        return result
    if len(layouts) >= MAX_LAYOUTS:
        layouts.clear()
    layouts[key] = layout
    return result


def install(tensor_cls: type = Tensor) -> None:
    """Put the direct methods in front of the packets' Tensor methods of :data:`METHODS`."""
    names = [op.name for op in DISPATCHER.ops.values() if op.name.split(".")[0] in METHODS]
    watch = _direct.Watch((*names, *VIEW_PRIMS), _forget)
    for name in METHODS:
        setattr(tensor_cls, name, _direct_method(getattr(tensor_cls, name), watch))
