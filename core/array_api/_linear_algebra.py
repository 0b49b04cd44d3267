"""The standard's main-namespace linear algebra: ``matmul``, ``tensordot``, ``vecdot`` (with promotion)."""

from __future__ import annotations

import builtins

import opweave as ow

from .._tensor import Tensor
from ._elementwise import operands

__all__ = ["matmul", "tensordot", "vecdot"]


def matmul(x1: Tensor, x2: Tensor, /) -> Tensor:
    """The matrix product (``@``), after the standard's type promotion."""
    a, b = operands(x1, x2, "matmul")
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError("matmul(): the arrays must have at least one dimension")
    return ow.matmul(a, b)


def tensordot(x1: Tensor, x2: Tensor, /, *, axes=2) -> Tensor:
    """Contraction over the last ``axes`` axes of ``x1`` and the first of ``x2`` (or two sequences of axes)."""
    a, b = operands(x1, x2, "tensordot")
    if isinstance(axes, builtins.int):
        if axes < 0:
            raise ValueError("tensordot(): axes must be non-negative")
        return ow.tensordot(a, b, dims=axes)
    return ow.tensordot(a, b, dims=(list(axes[0]), list(axes[1])))


def vecdot(x1: Tensor, x2: Tensor, /, *, axis: builtins.int = -1) -> Tensor:
    """The dot product of vectors along ``axis`` (``x1`` conjugated), broadcasting the other axes."""
    a, b = operands(x1, x2, "vecdot")
    if axis >= 0:
        shape = ow.broadcast_shapes(a.shape, b.shape)
        axis = axis - len(shape)
    if a.shape[axis] != b.shape[axis]:
        raise ValueError(f"vecdot(): the arrays have sizes {a.shape[axis]} and {b.shape[axis]} along axis {axis}")
    return ow.linalg.vecdot(a, b, dim=axis).to(a.dtype)
