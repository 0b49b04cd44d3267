"""Elementwise canonical ops: PyTorch's promotion and broadcasting over elementwise prims."""

from __future__ import annotations

from .._ops import prims
from ._utils import Promotion, check_alpha, define_with_variants, elementwise, elementwise_dtypes, prepare, to_dtype

P = Promotion


def add(self, other, alpha=1):
    """``self + alpha * other`` with type promotion and broadcasting."""
    compute, result = elementwise_dtypes(self, other, kind=P.DEFAULT)
    check_alpha("add", alpha, result)
    a, b = prepare("add", (self, other), compute)
    if alpha != 1:
        b = prims.mul(b, _scalar_like(alpha, b))
    return to_dtype(prims.add(a, b), result)


def sub(self, other, alpha=1):
    """``self - alpha * other`` with type promotion and broadcasting."""
    compute, result = elementwise_dtypes(self, other, kind=P.DEFAULT)
    if result is _bool():
        raise TypeError("sub: subtraction with two bool tensors is not supported; use logical_xor or bitwise_xor")
    check_alpha("sub", alpha, result)
    a, b = prepare("sub", (self, other), compute)
    if alpha != 1:
        b = prims.mul(b, _scalar_like(alpha, b))
    return to_dtype(prims.sub(a, b), result)


def _scalar_like(value, like):
    """``value`` as a tensor broadcast to ``like`` (same dtype and device)."""
    full = prims.full([], value, dtype=like.dtype, device=like.device)
    return prims.broadcast_in_dim(full, list(like.shape), [])


def _bool():
    from .. import _dtype

    return _dtype.bool_


def _lazy(name, kind):
    """``elementwise`` over the prim ``name``, looked up at call time (prims may be defined later)."""

    def decomposition(*tensors):
        return elementwise(getattr(prims, name), kind, name)(*tensors)

    decomposition.__name__ = name
    return decomposition


def _define():
    define_with_variants("add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", add, tags=("pointwise", "core"))
    define_with_variants("sub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", sub, tags=("pointwise", "core"))
    for name, kind in (("mul", P.DEFAULT),):
        define_with_variants(
            f"{name}.Tensor(Tensor self, Tensor other) -> Tensor",
            _lazy(name, kind),
            tags=("pointwise", "core"),
        )
    for name in ("sin", "cos", "exp"):
        define_with_variants(
            f"{name}(Tensor self) -> Tensor", _lazy(name, P.INT_TO_FLOAT), tags=("pointwise", "core")
        )
    for name in ("eq", "ne", "lt", "le", "gt", "ge"):
        define_with_variants(
            f"{name}.Tensor(Tensor self, Tensor other) -> Tensor",
            _lazy(name, P.ALWAYS_BOOL),
            tags=("pointwise", "core"),
        )


_define()
