"""PyTorch's Tensor conveniences that are not ops: dtype conversion methods and memory-format names.

``t.float()``, ``t.long()``, ``t.bool()``... are ``t.to(dtype, memory_format=...)`` (``t`` itself
when nothing changes); ``opweave.contiguous_format``, ``channels_last``... name the memory formats
that ``contiguous``, ``clone``, ``to`` and the ``*_like`` factories accept (they compare equal to
their names, the strings opweave's schemas carry).
"""

from __future__ import annotations

import types
from typing import Any

from . import _dtype
from ._tensor import Tensor


class memory_format(str):  # noqa: N801 - PyTorch's name
    """A memory format (``opweave.channels_last``): equal to its name, printed as ``opweave.<name>``."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"opweave.{str.__str__(self)}"


class layout(str):  # noqa: N801 - PyTorch's name
    """A tensor layout; opweave has only ``opweave.strided``."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"opweave.{str.__str__(self)}"


contiguous_format = memory_format("contiguous_format")
preserve_format = memory_format("preserve_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")
strided = layout("strided")

# method name -> dtype (PyTorch's Tensor.float(), Tensor.long()...)
CONVERSIONS = {
    "float": _dtype.float32,
    "double": _dtype.float64,
    "half": _dtype.float16,
    "bfloat16": _dtype.bfloat16,
    "int": _dtype.int32,
    "long": _dtype.int64,
    "short": _dtype.int16,
    "char": _dtype.int8,
    "byte": _dtype.uint8,
    "bool": _dtype.bool_,
    "cfloat": _dtype.complex64,
    "cdouble": _dtype.complex128,
}


def _conversion(name: str, target):
    def method(self: Tensor, memory_format: memory_format = preserve_format) -> Tensor:
        return self.to(target, memory_format=memory_format)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = (
        f"``self.to(opweave.{target.name}, memory_format=memory_format)``: ``self`` if it already is {target.name}."
    )
    return method


def chalf(self: Tensor, memory_format: memory_format = preserve_format) -> Tensor:
    """Not available: opweave has no complex32 dtype (TypeError; use ``cfloat()``)."""
    raise TypeError("chalf(): opweave has no complex32 (half-precision complex) dtype; use cfloat()")


def type_as(self, other: Tensor) -> Tensor:
    """``self`` converted to ``other``'s dtype."""
    return self.to(other.dtype)


def __array_namespace__(self: Tensor, /, *, api_version: str | None = None) -> types.ModuleType:
    """The array API namespace (``opweave.array_api``) for the standard's ``api_version`` (2023.12 or 2024.12)."""
    if api_version is not None and api_version not in ("2023.12", "2024.12"):
        raise ValueError(
            f"__array_namespace__(): api_version {api_version!r} is not supported; use '2023.12' or '2024.12'"
        )
    from . import array_api  # deferred: the array API namespace loads on first use

    return array_api


def to_device(self: Tensor, device: Any, /, *, stream: Any = None) -> Tensor:
    """The array API's ``to_device``: ``self`` on ``device`` (``self`` itself when already there)."""
    if stream is not None:
        raise ValueError("to_device(): opweave does not take a stream")
    return self.to(device=device)


def install(tensor_cls: type = Tensor) -> None:
    """Attach the conversion methods, ``chalf``, ``__array_namespace__`` and ``to_device`` to Tensor."""
    tensor_cls.__array_namespace__ = __array_namespace__
    tensor_cls.to_device = to_device
    for name, target in CONVERSIONS.items():
        setattr(tensor_cls, name, _conversion(name, target))
    tensor_cls.chalf = chalf
    if not hasattr(tensor_cls, "type_as"):
        tensor_cls.type_as = type_as
