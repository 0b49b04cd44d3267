"""PyTorch's memory-overlap checks for ``out=`` tensors.

An ``out=`` tensor in which two elements share one memory slot (an expanded view) is rejected, and so
is one that shares memory with an input without being exactly it. Ops tagged ``out_no_overlap`` (those
where PyTorch calls ``assert_no_overlap``: gather, take, index_select, masked_select, cat...) reject any
sharing, even an ``out=`` that is exactly an input. As in PyTorch, sharing between tensors that are not
both non-overlapping and dense is "too hard" to decide and is let through (opweave computes the result
before writing it, so such calls stay correct).
"""

from __future__ import annotations

import math

from .._tensor import Tensor, contiguous_strides

__all__ = [
    "check_out_overlap",
    "check_resized_out_overlap",
    "has_internal_overlap",
    "is_non_overlapping_and_dense",
    "memory_span",
]

_INTERNAL = (
    "unsupported operation: more than one element of the written-to tensor refers to a single memory location. "
    "Please clone() the tensor before performing the operation."
)
_SHARED = (
    "unsupported operation: some elements of the input tensor and the written-to tensor refer to a single memory "
    "location. Please clone() the tensor before performing the operation."
)


def is_non_overlapping_and_dense(t: Tensor) -> bool:
    """Whether ``t``'s elements occupy exactly ``numel`` consecutive slots of its storage, each once."""
    if t.ndim == 0 or t.is_contiguous():
        return True
    dims = sorted((i for i in range(t.ndim) if t.shape[i] != 1), key=lambda i: t.stride()[i])
    expected = 1
    for i in dims:
        if t.stride()[i] != expected:
            return False
        expected *= t.shape[i]
    return True


def memory_span(t: Tensor) -> tuple[int, int] | None:
    """``(first, last)`` element offsets ``t`` covers in its storage, or None when empty."""
    if t.numel() == 0:
        return None
    low = high = t.storage_offset()
    for size, stride in zip(t.shape, t.stride()):
        if stride >= 0:
            high += (size - 1) * stride
        else:
            low += (size - 1) * stride
    return low, high


def has_internal_overlap(t: Tensor) -> bool:
    """Whether two elements of ``t`` are one memory slot (a size > 1 dimension with stride 0)."""
    return t.numel() > 1 and any(stride == 0 and size > 1 for size, stride in zip(t.shape, t.stride()))


def _byte_span(t: Tensor) -> tuple[int, int]:
    low, high = memory_span(t)  # type: ignore[misc]
    size = t.dtype.itemsize
    return low * size, (high + 1) * size


def _tensors(value) -> tuple:
    return tuple(value) if isinstance(value, (list, tuple)) else (value,)


def check_out_overlap(op: str, out: Tensor, inputs, *, any_overlap: bool = False) -> None:
    """RuntimeError (PyTorch's message) when writing to ``out`` would alias itself or one of ``inputs``.

    ``inputs`` holds the call's arguments (tensors, lists of tensors or anything else, which is skipped).
    Without ``any_overlap`` an input that is exactly ``out`` (same storage, offset, sizes, strides,
    dtype) is allowed, as for PyTorch's element-wise ops.
    """
    if any_overlap and any(t is out for value in inputs for t in _tensors(value)):
        raise RuntimeError(f"{op}: {_SHARED}")  # PyTorch: the same tensor is a full overlap, even when empty
    if out.device.type == "meta" or out.numel() == 0:
        return
    if has_internal_overlap(out):
        raise RuntimeError(f"{op}: {_INTERNAL}")
    if not is_non_overlapping_and_dense(out):
        return
    storage = out.untyped_storage()
    out_low, out_high = _byte_span(out)
    for value in inputs:
        for t in _tensors(value):
            if not isinstance(t, Tensor) or t.numel() == 0 or t.device != out.device:
                continue
            if t.untyped_storage() is not storage or not is_non_overlapping_and_dense(t):
                continue
            low, high = _byte_span(t)
            if high <= out_low or out_high <= low:
                continue
            same = (
                t.shape == out.shape
                and t.stride() == out.stride()
                and t.storage_offset() == out.storage_offset()
                and t.dtype is out.dtype
            )
            if any_overlap or not same:
                raise RuntimeError(f"{op}: {_SHARED}")


def check_resized_out_overlap(op: str, out: Tensor, shape, inputs) -> None:
    """``check_out_overlap(any_overlap=True)`` on ``out`` as it will be once resized to ``shape``.

    A resize that fits in ``out``'s storage keeps it (contiguous from the same offset) and may then reach
    an input; one that does not fit moves ``out`` to a fresh storage, which overlaps nothing.
    """
    shape = tuple(shape)
    if tuple(out.shape) == shape or out.device.type == "meta":
        return
    numel = math.prod(shape)
    if (out.storage_offset() + numel) * out.dtype.itemsize > out.untyped_storage().nbytes:
        return
    resized = out.as_strided(shape, contiguous_strides(shape), out.storage_offset())
    check_out_overlap(op, resized, inputs, any_overlap=True)
