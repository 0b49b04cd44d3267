"""Small tensor helpers shared by the reduction, scan, sorting, indexing and matmul ops.

Everything here builds on prims and reads only metadata (shape, dtype, strides,
device), so the ops using it also run on the meta device.
"""

from __future__ import annotations

from .. import _dtype
from .._ops import prims
from .._tensor import Tensor, contiguous_strides

INTEGRAL_KINDS = ("bool", "uint", "int")


def is_integral(dtype) -> bool:
    """Whether ``dtype`` is bool or an integer type."""
    return dtype.kind in INTEGRAL_KINDS


def is_floating(dtype) -> bool:
    """Whether ``dtype`` is a real floating type (float8 excluded) or complex."""
    return dtype.is_floating_point or dtype.is_complex


def numel(shape) -> int:
    """Product of ``shape``."""
    n = 1
    for s in shape:
        n *= s
    return n


def full(shape, value, dtype, device) -> Tensor:
    """A new contiguous tensor of ``shape`` filled with ``value``."""
    return prims.full(list(shape), value, dtype=dtype, device=device)


def fill_like(value, like: Tensor, dtype=None) -> Tensor:
    """``value`` broadcast (0-strides) to ``like``'s shape, with ``like``'s device and dtype (or ``dtype``)."""
    scalar = prims.full([], value, dtype=dtype or like.dtype, device=like.device)
    return prims.broadcast_in_dim(scalar, list(like.shape), [])


def expand(t: Tensor, shape) -> Tensor:
    """``t`` broadcast to ``shape`` (a view; ``t`` itself when the shape already matches)."""
    shape = tuple(shape)
    if t.shape == shape:
        return t
    offset = len(shape) - t.ndim
    return prims.broadcast_in_dim(t, list(shape), list(range(offset, len(shape))))


def contiguous(t: Tensor) -> Tensor:
    """``t`` if it is contiguous, else a contiguous copy."""
    return t if t.is_contiguous() else prims.clone(t, memory_format="contiguous_format")


def reshape(t: Tensor, shape) -> Tensor:
    """``t`` with a new ``shape`` of the same number of elements (a view of a contiguous copy if needed)."""
    shape = tuple(shape)
    if t.shape == shape:
        return t
    if numel(shape) != t.numel():
        raise ValueError(f"shape {list(shape)} is invalid for input of size {t.numel()}")
    c = contiguous(t)
    return prims.as_strided(c, list(shape), list(contiguous_strides(shape)), c.storage_offset())


def flatten(t: Tensor) -> Tensor:
    """``t`` as a 1-D tensor (0-dim tensors become one element)."""
    return reshape(t, (t.numel(),))


def unsqueeze(t: Tensor, dim: int) -> Tensor:
    """A view of ``t`` with a size-1 dim inserted at ``dim`` (a position in the output)."""
    return prims.expand_dims(t, [dim % (t.ndim + 1)])


def squeeze(t: Tensor, dim: int) -> Tensor:
    """A view of ``t`` without the size-1 dim ``dim``."""
    return prims.squeeze(t, [dim])


def select(t: Tensor, dim: int, index: int) -> Tensor:
    """The view ``t.select(dim, index)`` (``index`` non-negative)."""
    return squeeze(prims.slice_in_dim(t, index, index + 1, 1, dim), dim)


def movedim(t: Tensor, source: int, destination: int) -> Tensor:
    """A view of ``t`` with dim ``source`` moved to position ``destination``."""
    if source == destination or t.ndim < 2:
        return t
    order = [d for d in range(t.ndim) if d != source]
    order.insert(destination, source)
    return prims.transpose(t, order)


def transpose_last(t: Tensor) -> Tensor:
    """A view of ``t`` with its last two dims swapped (``t.mT``)."""
    order = list(range(t.ndim))
    order[-2], order[-1] = order[-1], order[-2]
    return prims.transpose(t, order)


def cast(t: Tensor, dtype) -> Tensor:
    """``t`` converted to ``dtype`` (itself when it already has it)."""
    return t if t.dtype is dtype else prims.convert_element_type(t, dtype)


def is_wrapped_scalar(t) -> bool:
    """Whether ``t`` is a Python scalar wrapped as a 0-dim tensor by the op's entry point."""
    return isinstance(t, Tensor) and t._wrapped_number


def same_dtype_operand(op: str, name: str, t: Tensor, like: Tensor) -> Tensor:
    """``t`` checked to have ``like``'s dtype (TypeError otherwise); wrapped Python scalars are cast."""
    if t.dtype is like.dtype:
        return t
    if is_wrapped_scalar(t):
        return cast(t, like.dtype)
    raise TypeError(f"{op}: expected '{name}' to have dtype {like.dtype.name} (as 'self'), but got {t.dtype.name}")


def check_index_dtype(op: str, name: str, index: Tensor, allow_int32: bool = False) -> None:
    """TypeError unless ``index`` is int64 (or int32 when ``allow_int32``)."""
    allowed = (_dtype.int64, _dtype.int32) if allow_int32 else (_dtype.int64,)
    if index.dtype not in allowed:
        kinds = "int64 or int32" if allow_int32 else "int64"
        raise TypeError(f"{op}: expected {kinds} for argument '{name}', but got {index.dtype.name}")


def keep_reduced(t: Tensor, dims, ndim: int, keepdim: bool) -> Tensor:
    """``t`` with the reduced ``dims`` put back as size-1 dims when ``keepdim``."""
    if not keepdim or not dims:
        return t
    return prims.expand_dims(t, sorted(dims), ndim)
