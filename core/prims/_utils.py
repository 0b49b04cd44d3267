"""Helpers shared by prim meta functions: validation and output metadata.

Meta functions take the prim's arguments (tensors on any device), raise the
documented exception for invalid input and return meta tensors describing the
outputs. Error types follow DESIGN.md §8: wrong dtypes → TypeError, bad
shapes/dims/values → ValueError, device mismatch → RuntimeError.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence

from .. import _dtype
from .._meta import empty as meta_empty
from .._tensor import Tensor, contiguous_strides
from ..errors import DimIndexError


class Out(enum.Enum):
    """How an elementwise prim's output dtype follows its inputs' (PyTorch's kinds)."""

    DEFAULT = "default"  # same as the inputs
    ALWAYS_BOOL = "always_bool"
    COMPLEX_TO_FLOAT = "complex_to_float"  # complex64 -> float32, others unchanged


# Named groups of dtypes a prim accepts.
BOOL = frozenset({_dtype.bool_})
INT = frozenset({_dtype.uint8, _dtype.int8, _dtype.int16, _dtype.int32, _dtype.int64})
FLOAT = frozenset({_dtype.float16, _dtype.bfloat16, _dtype.float32, _dtype.float64})
COMPLEX = frozenset({_dtype.complex64, _dtype.complex128})
INTEGRAL = INT | BOOL
REAL = INT | FLOAT
NUMERIC = REAL | COMPLEX
FLOATING = FLOAT | COMPLEX
ALL = BOOL | NUMERIC


def check_tensor(op: str, name: str, value) -> Tensor:
    """Raise TypeError unless ``value`` is a Tensor."""
    if not isinstance(value, Tensor):
        raise TypeError(f"{op}: argument '{name}' must be Tensor, not {type(value).__name__}")
    return value


def check_dtype(op: str, name: str, t: Tensor, allowed: frozenset) -> None:
    """Raise TypeError unless ``t.dtype`` is in ``allowed``."""
    if t.dtype not in allowed:
        raise TypeError(f"{op}: argument '{name}' has unsupported dtype {t.dtype.name}")


def wrap_dim(op: str, dim: int, ndim: int, name: str = "dim") -> int:
    """Normalise a possibly negative dim; DimIndexError (IndexError, ValueError) if out of range (0-dim: 0 and -1)."""
    bound = max(ndim, 1)
    if not -bound <= dim < bound:
        raise DimIndexError(f"{op}: argument '{name}' is out of range: {dim} for a tensor with {ndim} dims")
    return dim % bound if ndim else 0


def wrap_dims(op: str, dims, ndim: int, name: str = "dims") -> tuple:
    """Normalise a list of dims; ValueError on out-of-range or repeated dims."""
    out = tuple(wrap_dim(op, d, ndim, name) for d in dims)
    if len(set(out)) != len(out):
        raise ValueError(f"{op}: argument '{name}' repeats a dim: {list(dims)}")
    return out


def is_cpu_scalar(t: Tensor) -> bool:
    """A 0-dim CPU tensor: exempt from the same-shape and same-device rules of elementwise prims."""
    return not t.shape and t.device.type == "cpu"


def same_device(op: str, tensors) -> None:
    """RuntimeError unless all tensors (CPU scalars exempt) are on one device."""
    devices = {t.device for t in tensors if not is_cpu_scalar(t)}
    if len(devices) > 1:
        found = ", ".join(sorted(str(d) for d in devices))
        raise RuntimeError(f"{op}: expected all tensors on the same device, found {found}")


def dense_strides_like(t: Tensor) -> tuple:
    """Dense strides with the same dimension order as ``t`` (PyTorch's elementwise output rule)."""
    shape, stride = t.shape, t.stride()
    if len(shape) < 2 or t.is_contiguous():
        return contiguous_strides(shape)
    order = sorted(range(len(shape)), key=lambda d: stride[d] if shape[d] != 1 else float("inf"), reverse=True)
    out, acc = [0] * len(shape), 1
    for d in reversed(order):
        out[d] = acc
        acc *= max(shape[d], 1)
    return tuple(out)


def output_strides(tensors: Sequence[Tensor]) -> tuple[int, ...]:
    """Output strides of an elementwise op: the layout of the first input that is not broadcast (0-strided)."""
    for t in tensors:
        if not any(st == 0 and n > 1 for n, st in zip(t.shape, t.stride())):
            return dense_strides_like(t)
    return contiguous_strides(tensors[0].shape)


def elementwise_meta(op: str, names, tensors, allowed=ALL, out: Out = Out.DEFAULT) -> Tensor:
    """Meta of an elementwise prim: same dtype, shape and device for all inputs; one output."""
    for name, t in zip(names, tensors):
        check_tensor(op, name, t)
    first = tensors[0]
    for name, t in zip(names, tensors):
        if t.dtype is not first.dtype:
            raise TypeError(
                f"{op}: expected all inputs to have the same dtype, but '{names[0]}' is "
                f"{first.dtype.name} and '{name}' is {t.dtype.name}"
            )
        check_dtype(op, name, t, allowed)
    shaped = [t for t in tensors if not is_cpu_scalar(t)] or [first]
    for name, t in zip(names, tensors):
        if not is_cpu_scalar(t) and t.shape != shaped[0].shape:
            raise ValueError(
                f"{op}: expected all inputs to have the same shape, got {list(shaped[0].shape)} and "
                f"{list(t.shape)} for '{name}'"
            )
    same_device(op, tensors)
    dtype = first.dtype
    if out is Out.ALWAYS_BOOL:
        dtype = _dtype.bool_
    elif out is Out.COMPLEX_TO_FLOAT:
        dtype = dtype.to_real()
    return meta_empty(shaped[0].shape, dtype, output_strides(shaped))


def check_shape(op: str, name: str, shape) -> tuple:
    """Validate a shape argument: non-negative ints."""
    for s in shape:
        if s < 0:
            raise ValueError(f"{op}: argument '{name}' has a negative size: {list(shape)}")
    return tuple(shape)
