"""``resize_`` and ``resize_as_``: change a tensor's shape in place, keeping its leading data.

The tensor becomes contiguous with the new shape over the same storage (grown when too
small); the first ``min(old, new)`` elements in storage order keep their values and any new
elements are uninitialised, as in PyTorch. ``memory_format`` lays the result out in that format.
"""

from __future__ import annotations

from .._ops import define, prims
from ._shapes import CHANNELS_LAST, CHANNELS_LAST_3D, PRESERVE, check_memory_format, strides_for


def _resize(op: str, self, size, memory_format):
    check_memory_format(op, memory_format)
    size = list(size)
    if any(s < 0 for s in size):
        raise ValueError(f"{op}: Trying to create tensor with negative dimension: {size}")
    if memory_format == PRESERVE:
        raise ValueError(f"{op}: unsupported memory format {memory_format!r}")
    prims.resize(self, size)
    if memory_format in (CHANNELS_LAST, CHANNELS_LAST_3D):
        self._set_metadata(self._storage, tuple(size), strides_for(op, size, memory_format), self._offset)
    return self


def resize_(self, size, memory_format=None):
    """Resize ``self`` in place to ``size`` (contiguous); storage grows if needed, new elements are uninitialised."""
    return _resize("resize_", self, size, memory_format)


def resize_as_(self, the_template, memory_format=None):
    """``resize_(self, the_template.shape)``."""
    return _resize("resize_as_", self, the_template.shape, memory_format)


define(
    "resize_(Tensor(a!) self, SymInt[] size, *, MemoryFormat? memory_format=None) -> Tensor(a!)",
    resize_,
    tags=("inplace",),
)
define(
    "resize_as_(Tensor(a!) self, Tensor the_template, *, MemoryFormat? memory_format=None) -> Tensor(a!)",
    resize_as_,
    tags=("inplace",),
)
