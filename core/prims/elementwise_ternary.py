"""Ternary elementwise prims: ``where``, ``clamp`` and ``lerp``.

Same strictness as the other elementwise prims: equal shapes (0-dim CPU tensors
excepted), one device, no promotion. Semantics follow PyTorch.
"""

from __future__ import annotations

from .._meta import empty as meta_empty
from .._ops import define_prim
from ._utils import (
    ALL,
    BOOL,
    FLOATING,
    REAL,
    check_dtype,
    check_tensor,
    elementwise_meta,
    is_cpu_scalar,
    output_strides,
    same_device,
)


def where_meta(pred, a, b):
    """``a`` where ``pred`` is true, else ``b``.

    ``pred`` must be bool; ``a`` and ``b`` share a dtype (any). All three have
    the same shape, except 0-dim CPU tensors, which are broadcast.
    """
    op = "prims::where"
    names, tensors = ("pred", "a", "b"), (pred, a, b)
    for name, t in zip(names, tensors):
        check_tensor(op, name, t)
    check_dtype(op, "pred", pred, BOOL)
    if a.dtype is not b.dtype:
        raise TypeError(
            f"{op}: expected 'a' and 'b' to have the same dtype, but 'a' is {a.dtype.name} and 'b' is {b.dtype.name}"
        )
    check_dtype(op, "a", a, ALL)
    shaped = [(name, t) for name, t in zip(names, tensors) if not is_cpu_scalar(t)]
    model = shaped[0][1] if shaped else a
    for name, t in shaped:
        if t.shape != model.shape:
            raise ValueError(
                f"{op}: expected all inputs to have the same shape, got {list(model.shape)} and "
                f"{list(t.shape)} for '{name}'"
            )
    same_device(op, tensors)
    return meta_empty(model.shape, a.dtype, output_strides([t for _, t in shaped] or [a]))


def clamp_meta(a, min, max):
    """``minimum(maximum(a, min), max)``: nan if any input is nan; ``max`` wherever ``min > max``."""
    return elementwise_meta("prims::clamp", ("a", "min", "max"), (a, min, max), REAL)


def lerp_meta(start, end, weight):
    """Linear interpolation with PyTorch's formula.

    ``start + weight * (end - start)`` where ``|weight| < 0.5``, else
    ``end - (end - start) * (1 - weight)`` (exact at both ends).
    """
    return elementwise_meta("prims::lerp", ("start", "end", "weight"), (start, end, weight), FLOATING)


def _define():
    define_prim("where(Tensor pred, Tensor a, Tensor b) -> Tensor", where_meta, tags=("pointwise",))
    define_prim("clamp(Tensor a, Tensor min, Tensor max) -> Tensor", clamp_meta, tags=("pointwise",))
    define_prim("lerp(Tensor start, Tensor end, Tensor weight) -> Tensor", lerp_meta, tags=("pointwise",))


_define()
