"""``opweave.ops``: every operator, by name.

``opweave.ops.add.Tensor`` is a canonical overload, ``opweave.ops.prims.sin``
a prim packet, ``opweave.ops.quantized.linear`` the ``quantized::linear`` packet,
``opweave.ops.c10d.all_reduce`` the functional collective ``c10d::all_reduce``;
:func:`catalog` lists them all.
"""

from __future__ import annotations

from ._ops import _SPACES, OpOverload, OpPacket, c10d, canonical, catalog, lookup, prims, quantized

__all__ = ["OpOverload", "OpPacket", "c10d", "catalog", "lookup", "prims", "quantized"]


def __getattr__(name: str) -> OpPacket:
    space = _SPACES.get(name)
    if space is not None:  # a namespace defined through opweave.library ("myns::op")
        return space
    return getattr(canonical, name)


def __dir__():
    return sorted(set(__all__) | set(dir(canonical)))
