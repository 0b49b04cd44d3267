"""The meta device: tensors with shape, dtype and strides but no data.

Every prim's meta function doubles as its meta-device kernel, so any op —
canonical ops through their decompositions — runs on ``device="meta"``.
"""

from __future__ import annotations

from ._backends import Backend
from ._device import device
from ._tensor import Storage, Tensor, contiguous_strides

META = device("meta")


class MetaBackend(Backend):
    """A backend with no memory: storages are sizes only."""

    name = "meta"

    def allocate(self, nbytes: int, dev):
        """A storage that records its size and holds nothing."""
        return Storage(None, nbytes, META, self)

    def copy_from_host(self, array, dev):
        """Meta tensors keep no data: only the size is recorded."""
        return Storage(None, array.nbytes, META, self)

    def copy_to_host(self, tensor):
        """Meta tensors have no data to read."""
        raise RuntimeError("cannot read the data of a meta tensor (it has shape, dtype and strides only)")


_BACKEND = MetaBackend()


def empty(shape, dtype, stride=None) -> Tensor:
    """A new meta tensor (contiguous unless ``stride`` is given)."""
    shape = tuple(shape)
    stride = contiguous_strides(shape) if stride is None else tuple(stride)
    return Tensor._make(Storage(None, 0, META, _BACKEND), shape, stride, 0, dtype, META)


def backend() -> MetaBackend:
    """The meta backend object."""
    return _BACKEND
