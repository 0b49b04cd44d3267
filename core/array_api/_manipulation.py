"""The standard's manipulation and indexing functions (``concat``, ``permute_dims``, ``expand_dims``,
``squeeze`` that refuses non-unit axes, ``unstack``, ``repeat``, ``take``, ``take_along_axis``...)."""

from __future__ import annotations

import builtins

import opweave as ow

from .._tensor import Tensor
from ._dtypes import promote
from ._reductions import axes

__all__ = [
    "broadcast_arrays",
    "broadcast_to",
    "concat",
    "expand_dims",
    "flip",
    "matrix_transpose",
    "moveaxis",
    "permute_dims",
    "repeat",
    "reshape",
    "roll",
    "squeeze",
    "stack",
    "take",
    "take_along_axis",
    "tile",
    "unstack",
]


def _common(arrays, name):
    arrays = list(arrays)
    if not arrays:
        raise ValueError(f"{name}(): expected at least one array")
    dt = arrays[0].dtype
    for a in arrays[1:]:
        dt = promote(dt, a.dtype)
    return [a if a.dtype == dt else a.to(dt) for a in arrays]


def broadcast_arrays(*arrays: Tensor) -> list:
    """The arrays broadcast against each other, as a list."""
    return list(ow.broadcast_tensors(*arrays))


def broadcast_to(x: Tensor, /, shape) -> Tensor:
    """``x`` broadcast to ``shape``."""
    return ow.broadcast_to(x, tuple(shape))


def concat(arrays, /, *, axis: builtins.int | None = 0) -> Tensor:
    """The arrays joined along ``axis`` (flattened first when ``axis`` is None), promoted to a common dtype."""
    arrays = _common(arrays, "concat")
    if axis is None:
        return ow.cat([a.reshape(-1) for a in arrays])
    return ow.cat(arrays, dim=axis)


def stack(arrays, /, *, axis: builtins.int = 0) -> Tensor:
    """The arrays joined along a new ``axis``, promoted to a common dtype."""
    return ow.stack(_common(arrays, "stack"), dim=axis)


def expand_dims(x: Tensor, /, axis: builtins.int = 0) -> Tensor:
    """``x`` with a unit axis inserted at ``axis`` (in ``[-x.ndim - 1, x.ndim]``)."""
    if not -x.ndim - 1 <= axis <= x.ndim:
        raise IndexError(f"expand_dims(): axis {axis} is out of range for an array of {x.ndim} dimensions")
    return ow.unsqueeze(x, axis)


def flip(x: Tensor, /, *, axis=None) -> Tensor:
    """``x`` with the order of elements reversed along ``axis`` (every axis when None)."""
    ax = axes(axis, x.ndim, "flip")
    return ow.flip(x, list(range(x.ndim)) if ax is None else list(ax))


def matrix_transpose(x: Tensor, /) -> Tensor:
    """``x`` with its last two axes swapped."""
    if x.ndim < 2:
        raise ValueError("matrix_transpose(): x must have at least two dimensions")
    return x.mT


def moveaxis(x: Tensor, source, destination, /) -> Tensor:
    """``x`` with the axes ``source`` moved to ``destination``."""
    return ow.moveaxis(x, source, destination)


def permute_dims(x: Tensor, /, axes: tuple) -> Tensor:
    """``x`` with its axes permuted by ``axes``."""
    return ow.permute(x, tuple(axes))


def repeat(x: Tensor, repeats, /, *, axis: builtins.int | None = None) -> Tensor:
    """Each element of ``x`` repeated ``repeats`` times (an int or an array) along ``axis`` (flattened when None)."""
    if axis is None:
        x = x.reshape(-1)
        axis = 0
    if isinstance(repeats, Tensor) and repeats.dtype != ow.int64:
        repeats = repeats.to(ow.int64)
    return ow.repeat_interleave(x, repeats, dim=axis)


def reshape(x: Tensor, /, shape, *, copy: builtins.bool | None = None) -> Tensor:
    """``x`` with a new ``shape``; ``copy=True`` always copies, ``copy=False`` raises if a view is impossible."""
    shape = tuple(shape)
    if copy is False:
        try:
            return x.view(shape)
        except (RuntimeError, ValueError) as exc:
            raise ValueError(f"reshape(copy=False): no view of this array has shape {shape}") from exc
    out = ow.reshape(x, shape)
    return out.clone() if copy else out


def roll(x: Tensor, /, shift, *, axis=None) -> Tensor:
    """``x`` rolled by ``shift`` along ``axis`` (of the flattened array when None)."""
    if axis is None:
        return ow.roll(x, shift)
    return ow.roll(x, shift, axis)


def squeeze(x: Tensor, /, axis) -> Tensor:
    """``x`` without the unit axes ``axis``; ``ValueError`` if one of them is not of size 1."""
    ax = axes(axis, x.ndim, "squeeze")
    for a in ax:
        if x.shape[a] != 1:
            raise ValueError(f"squeeze(): axis {a} has size {x.shape[a]}, not 1")
    return x.reshape(tuple(s for i, s in enumerate(x.shape) if i not in ax))


def tile(x: Tensor, repetitions, /) -> Tensor:
    """``x`` repeated ``repetitions`` times along each axis."""
    return ow.tile(x, tuple(repetitions))


def unstack(x: Tensor, /, *, axis: builtins.int = 0) -> tuple:
    """The slices of ``x`` along ``axis``, as a tuple."""
    if x.ndim == 0:
        raise ValueError("unstack(): x must have at least one dimension")
    return tuple(ow.unbind(x, axis))


def take(x: Tensor, indices: Tensor, /, *, axis: builtins.int | None = None) -> Tensor:
    """The elements of ``x`` at ``indices`` (1-D, negative counts from the end) along ``axis``."""
    if axis is None:
        if x.ndim != 1:
            raise ValueError("take(): axis is required for an array of more than one dimension")
        axis = 0
    (axis,) = axes(axis, x.ndim, "take")
    idx = ow.where(indices < 0, indices + x.shape[axis], indices)
    return ow.index_select(x, axis, idx)


def take_along_axis(x: Tensor, indices: Tensor, /, *, axis: builtins.int = -1) -> Tensor:
    """The elements of ``x`` at ``indices`` along ``axis`` (indices broadcast against ``x`` on the other axes)."""
    (axis,) = axes(axis, x.ndim, "take_along_axis")
    idx = ow.where(indices < 0, indices + x.shape[axis], indices)
    return ow.take_along_dim(x, idx, dim=axis)
