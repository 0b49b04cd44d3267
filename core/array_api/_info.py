"""The standard's inspection namespace: ``__array_namespace_info__()``."""

from __future__ import annotations

import opweave as ow

from .. import _backends
from .._device import device as _device
from ._dtypes import DEFAULT_COMPLEX, DEFAULT_FLOAT, DEFAULT_INDEX, DEFAULT_INT, isdtype

__all__ = ["__array_namespace_info__"]

_ALL = (
    ow.bool,
    ow.int8,
    ow.int16,
    ow.int32,
    ow.int64,
    ow.uint8,
    ow.float32,
    ow.float64,
    ow.complex64,
    ow.complex128,
)


class Info:
    """What this namespace supports: ``capabilities()``, ``default_device()``, ``devices()``, ``dtypes()``,
    ``default_dtypes()``."""

    __module__ = "opweave.array_api"

    def capabilities(self) -> dict:
        """Boolean indexing and data-dependent shapes are supported; at most 64 dimensions."""
        return {"boolean indexing": True, "data-dependent shapes": True, "max dimensions": 64}

    def default_device(self):
        """The device arrays are created on when none is given."""
        return ow.get_default_device()

    def devices(self) -> list:
        """The devices of the backends loaded so far (the default device first)."""
        out = [ow.get_default_device()]
        for name in _backends._backends:
            if name != "meta" and _device(name) not in out:
                out.append(_device(name))
        return out

    def default_dtypes(self, *, device=None) -> dict:
        """The default real, complex, integer and index dtypes."""
        return {
            "real floating": DEFAULT_FLOAT,
            "complex floating": DEFAULT_COMPLEX,
            "integral": DEFAULT_INT,
            "indexing": DEFAULT_INDEX,
        }

    def dtypes(self, *, device=None, kind=None) -> dict:
        """The standard's dtypes opweave has, by name, restricted to ``kind`` (see ``isdtype``)."""
        return {d.name: d for d in _ALL if kind is None or isdtype(d, kind)}


_INFO = Info()


def __array_namespace_info__() -> Info:
    """The inspection namespace."""
    return _INFO
