"""Helpers shared by the shape, view and creation ops: sizes, strides, dims, factory arguments.

Everything here reads metadata only (shape, dtype, strides, device), so the ops
built on it also run on the meta device.
"""

from __future__ import annotations

import math

from .. import _dtype
from .._device import as_device, get_default_device
from .._ops import prims
from .._tensor import Tensor, contiguous_strides
from ._overlap import is_non_overlapping_and_dense
from ._utils import wrap_dim

CONTIGUOUS = "contiguous_format"
PRESERVE = "preserve_format"
CHANNELS_LAST = "channels_last"
CHANNELS_LAST_3D = "channels_last_3d"
MEMORY_FORMATS = (CONTIGUOUS, PRESERVE, CHANNELS_LAST, CHANNELS_LAST_3D)


def numel(shape) -> int:
    """Product of ``shape``."""
    n = 1
    for s in shape:
        n *= s
    return n


def check_sizes(op: str, shape) -> tuple:
    """A shape argument as a tuple; ValueError for a negative size (as torch's 'negative dimension')."""
    shape = tuple(shape)
    for s in shape:
        if s < 0:
            raise ValueError(f"{op}: trying to create tensor with negative dimension {s}: {list(shape)}")
    return shape


def infer_size(op: str, shape, n: int) -> tuple:
    """``shape`` with its (at most one) ``-1`` replaced so that the product is ``n`` (torch's infer_size)."""
    shape = list(shape)
    infer, known = None, 1
    for i, s in enumerate(shape):
        if s == -1:
            if infer is not None:
                raise ValueError(f"{op}: only one dimension can be inferred, got shape {shape}")
            infer = i
        elif s < 0:
            raise ValueError(f"{op}: invalid shape dimension {s} in {shape}")
        else:
            known *= s
    if infer is None:
        if known != n:
            raise ValueError(f"{op}: shape {shape} is invalid for input of size {n}")
        return tuple(shape)
    if known == 0:
        raise ValueError(
            f"{op}: cannot reshape tensor of {n} elements into shape {shape} because the unspecified "
            "dimension size -1 can be any value and is ambiguous"
        )
    if n % known:
        raise ValueError(f"{op}: shape {shape} is invalid for input of size {n}")
    shape[infer] = n // known
    return tuple(shape)


def compute_stride(old_shape, old_stride, new_shape):
    """Strides viewing a tensor of ``old_shape``/``old_stride`` as ``new_shape``, or None (torch's computeStride).

    A view exists when every run of dims that is contiguous in memory ("chunk")
    of the old shape maps onto whole dims of the new shape.
    """
    if not old_shape:
        return (1,) * len(new_shape)
    if numel(old_shape) == 0:
        return tuple(old_stride) if tuple(old_shape) == tuple(new_shape) else contiguous_strides(new_shape)
    new_stride = [0] * len(new_shape)
    view_d = len(new_shape) - 1
    chunk_base = old_stride[-1]
    tensor_numel, view_numel = 1, 1
    for tensor_d in range(len(old_shape) - 1, -1, -1):
        tensor_numel *= old_shape[tensor_d]
        chunk_ends = tensor_d == 0 or (
            old_shape[tensor_d - 1] != 1 and old_stride[tensor_d - 1] != tensor_numel * chunk_base
        )
        if not chunk_ends:
            continue
        while view_d >= 0 and (view_numel < tensor_numel or new_shape[view_d] == 1):
            new_stride[view_d] = view_numel * chunk_base
            view_numel *= new_shape[view_d]
            view_d -= 1
        if view_numel != tensor_numel:
            return None
        if tensor_d > 0:
            chunk_base = old_stride[tensor_d - 1]
            tensor_numel, view_numel = 1, 1
    return tuple(new_stride) if view_d == -1 else None


def wrap(op: str, dim: int, ndim: int) -> int:
    """A dim normalised for a tensor of ``ndim`` dims (0-dim tensors accept 0 and -1); ValueError otherwise."""
    return wrap_dim(op, dim, ndim)


def wrap_list(op: str, dims, ndim: int) -> tuple:
    """Normalised dims; ValueError on out-of-range or repeated dims."""
    out = tuple(wrap_dim(op, d, ndim) for d in dims)
    for d in set(out):
        if out.count(d) > 1:
            raise ValueError(f"{op}: dim {d} appears multiple times in the list of dims")
    return out


def restride(t: Tensor, shape, stride, offset=None) -> Tensor:
    """A view of ``t``'s storage with ``shape`` and ``stride`` (``t``'s offset unless given)."""
    return prims.as_strided(t, list(shape), list(stride), t.storage_offset() if offset is None else offset)


def contiguous_copy(t: Tensor) -> Tensor:
    """A new contiguous tensor with ``t``'s values."""
    return prims.clone(t, memory_format=CONTIGUOUS)


def scalar(value, like: Tensor, dtype=None) -> Tensor:
    """``value`` broadcast (0-strides) to ``like``'s shape, on its device, with ``dtype`` (default: like's)."""
    full = prims.full([], value, dtype=dtype or like.dtype, device=like.device)
    return prims.broadcast_in_dim(full, list(like.shape), [])


def check_layout(op: str, layout, pin_memory) -> None:
    """Only the strided layout exists in opweave (``pin_memory=True`` is applied by ``_pinned.with_pinning``)."""
    if layout is not None and str(layout) not in ("strided", "torch.strided"):
        raise NotImplementedError(f"{op}: layout {layout!r} is not supported (only strided)")


def factory_device(device, like: Tensor | None = None):
    """The device a factory allocates on: ``device``, else ``like``'s, else the default device."""
    dev = as_device(device)
    if dev is not None:
        return dev
    return like.device if like is not None else get_default_device()


def check_memory_format(op: str, memory_format) -> None:
    """ValueError for an unknown memory format name."""
    if memory_format is not None and memory_format not in MEMORY_FORMATS:
        raise ValueError(f"{op}: unknown memory format {memory_format!r}; expected one of {list(MEMORY_FORMATS)}")


def strides_for(op: str, shape, memory_format, like: Tensor | None = None) -> tuple:
    """Dense strides for ``shape`` in ``memory_format`` (preserve: ``like``'s layout, as torch's empty_like)."""
    check_memory_format(op, memory_format)
    if memory_format in (None, PRESERVE):
        if like is None:
            return contiguous_strides(shape)
        if is_non_overlapping_and_dense(like):
            return tuple(like.stride())
        from ..prims._utils import dense_strides_like

        return tuple(dense_strides_like(like))
    if memory_format == CONTIGUOUS:
        return contiguous_strides(shape)
    rank = 4 if memory_format == CHANNELS_LAST else 5
    if len(shape) != rank:
        raise ValueError(f"{op}: memory format {memory_format} needs a {rank}-d shape, got {list(shape)}")
    order = [0] + list(range(2, rank)) + [1]  # N, spatial..., C: C innermost
    physical = contiguous_strides([shape[d] for d in order])
    strides = [0] * rank
    for pos, d in enumerate(order):
        strides[d] = physical[pos]
    return tuple(strides)


def real_scalar(value) -> float:
    """A Scalar argument as a float (for size computations); complex is refused."""
    if isinstance(value, complex):
        raise TypeError(f"expected a real number, got {value!r}")
    return float(value)


def ceil_div(a: int, b: int) -> int:
    """``ceil(a / b)`` for ints."""
    return -(-a // b)


def is_float_scalar(value) -> bool:
    """A Python float (not an int or bool)."""
    return isinstance(value, float)


def scalar_dtype_of(value):
    """torch's dtype for a Python scalar fill value: bool, int64, the default float or complex dtype."""
    if isinstance(value, bool):
        return _dtype.bool_
    if isinstance(value, int):
        return _dtype.int64
    if isinstance(value, complex):
        return _dtype.default_complex_dtype()
    return _dtype.get_default_dtype()


def fill_value(op: str, value, dtype):
    """``value`` checked (see ``check_fill``) and converted as torch converts a fill: ``bool(value)`` for bool."""
    check_fill(op, value, dtype)
    if dtype is _dtype.bool_:
        return bool(value)
    if isinstance(value, complex) and not dtype.is_complex:
        return value.real
    return value


def check_fill(op: str, value, dtype) -> None:
    """torch's checked conversion of a fill value: no complex into real, no integer overflow, no float overflow."""
    if isinstance(value, complex) and not dtype.is_complex:
        if value.imag != 0:
            raise TypeError(f"{op}: value {value!r} cannot be converted to type {dtype.name} without overflow")
        value = value.real
    if dtype.kind in ("int", "uint") and isinstance(value, (int, float)) and not isinstance(value, bool):
        info = _dtype.iinfo(dtype)
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError(f"{op}: value {value} cannot be converted to type {dtype.name} without overflow")
        if not info.min <= int(value) <= info.max:
            raise ValueError(f"{op}: value {value} cannot be converted to type {dtype.name} without overflow")
    if dtype.is_floating_point and not dtype.is_float8 and isinstance(value, (int, float)):
        limit = float(_dtype.finfo(dtype).max)
        if math.isfinite(value) and abs(value) > limit:
            raise ValueError(f"{op}: value {value} cannot be converted to type {dtype.name} without overflow")
