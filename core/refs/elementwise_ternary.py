"""Selection, clamping, interpolation and filling: where, clamp, lerp, addcmul/addcdiv, masked_fill, fill, isclose."""

from __future__ import annotations

import warnings

from .. import _dtype
from .._ops import canonical as ops
from .._ops import prims
from .._tensor import Tensor
from ._elementwise import (
    FLOATING,
    REAL,
    P,
    as_tensor,
    bool_,
    check_dtype,
    check_scalar_fits,
    pointwise,
    prepare_all,
    redirect,
    scalar_like,
)
from ._utils import define_with_variants, elementwise_dtypes, prepare, to_device, to_dtype

# -- where ------------------------------------------------------------------------


def _condition(op, condition):
    if condition.dtype is _dtype.uint8:
        warnings.warn(f"{op}: a uint8 condition is deprecated; use a bool tensor", UserWarning, stacklevel=4)
        return to_dtype(condition, bool_)
    if condition.dtype is not bool_:
        raise TypeError(f"{op}: argument 'condition' must be a bool tensor, got {condition.dtype.name}")
    return condition


def where(condition, self, other):
    """``self`` where ``condition`` is True, else ``other``; all three broadcast, ``self``/``other`` promote."""
    condition = _condition("where", condition)
    compute, result = elementwise_dtypes(self, other, kind=P.NO_OPMATH)
    c, a, b = prepare_all("where", (condition, self, other), (None, compute, compute))
    return prims.where(c, a, b)


# -- clamp ------------------------------------------------------------------------


def _clamp(op, self, lo, hi):
    """``min(max(self, lo), hi)`` with nan propagated from any operand; ``lo > hi`` gives ``hi``."""
    if lo is None and hi is None:
        raise ValueError(f"{op}: at least one of 'min' and 'max' must not be None")
    bounds = [t for t in (lo, hi) if t is not None]
    compute, result = elementwise_dtypes(self, *bounds, kind=P.DEFAULT)
    check_dtype(op, compute, REAL)
    args = prepare(op, [self, *bounds], compute)
    out = args[0]
    if lo is not None:
        out = prims.maximum(out, args[1])
    if hi is not None:
        out = prims.minimum(out, args[-1])
    return to_dtype(out, result)


def clamp(self, min=None, max=None):
    """Clamp to ``[min, max]`` (Scalar bounds, either may be None); promotes like ``self`` op the bounds."""
    return _clamp("clamp", self, _opt(min), _opt(max))


def clamp_tensor(self, min=None, max=None):
    """Clamp to ``[min, max]`` with broadcast Tensor bounds (either may be None)."""
    return _clamp("clamp", self, min, max)


def _opt(value):
    return None if value is None else as_tensor(value)


def _bool_bound(self, bound, logical):
    """``clamp_min``/``clamp_max`` of two bool tensors, as PyTorch: "or" (the max) and "and" (the min)."""
    if self.dtype is _dtype.bool_ and isinstance(bound, Tensor) and bound.dtype is _dtype.bool_:
        return logical(self, bound)
    return None


def clamp_min(self, min):
    """``max(self, min)`` (nan propagates); for two bool tensors their "or"."""
    out = _bool_bound(self, min, ops.logical_or)
    return out if out is not None else _clamp("clamp_min", self, as_tensor(min), None)


def clamp_max(self, max):
    """``min(self, max)`` (nan propagates); for two bool tensors their "and"."""
    out = _bool_bound(self, max, ops.logical_and)
    return out if out is not None else _clamp("clamp_max", self, None, as_tensor(max))


# -- lerp, addcmul, addcdiv ----------------------------------------------------------


def _same_dtype(op, self, **others):
    for name, t in others.items():
        if t.dtype is not self.dtype:
            raise TypeError(f"{op}: expected dtype {self.dtype.name} for '{name}' but got {t.dtype.name}")


def lerp_tensor(self, end, weight):
    """``self + weight * (end - self)``, computed as PyTorch does for accuracy near ``weight = 1``.

    ``self``, ``end`` and ``weight`` must have the same floating dtype; all three broadcast.
    """
    _same_dtype("lerp", self, end=end, weight=weight)
    return _lerp(self, end, weight)


def lerp_scalar(self, end, weight):
    """``self + weight * (end - self)`` for a Scalar ``weight``."""
    _same_dtype("lerp", self, end=end)
    check_scalar_fits("lerp", "weight", weight, self.dtype)
    return _lerp(self, end, weight)


def _lerp(self, end, weight):
    check_dtype("lerp", self.dtype, FLOATING)
    compute = _dtype.opmath_dtype(self.dtype)
    if isinstance(weight, (bool, int, float, complex)):
        a, b = prepare("lerp", (self, end), compute)
        w = scalar_like(weight, a)
    else:
        a, b, w = prepare("lerp", (self, end, weight), compute)
    return to_dtype(prims.lerp(a, b, w), self.dtype)


def _addc(op, self, tensor1, tensor2, value, combine):
    compute, result = elementwise_dtypes(self, tensor1, tensor2, kind=P.DEFAULT)
    if compute is bool_:
        raise TypeError(f"{op}: not implemented for bool tensors")
    check_scalar_fits(op, "value", value, result)
    a, t1, t2 = prepare(op, (self, tensor1, tensor2), compute)
    scaled = t1 if value == 1 and not isinstance(value, bool) else prims.mul(scalar_like(value, t1), t1)
    return to_dtype(prims.add(a, combine(scaled, t2)), result)


def addcmul(self, tensor1, tensor2, value=1):
    """``self + value * tensor1 * tensor2`` (promoting and broadcasting all three)."""
    return _addc("addcmul", self, tensor1, tensor2, value, prims.mul)


def addcdiv(self, tensor1, tensor2, value=1):
    """``self + value * tensor1 / tensor2``; integer ``tensor1``/``tensor2`` are refused (no integer division)."""
    if not _floating(tensor1.dtype) and not _floating(tensor2.dtype):
        raise TypeError(
            "addcdiv: integer division of 'tensor1' by 'tensor2' is not supported; convert them to a floating dtype"
        )
    return _addc("addcdiv", self, tensor1, tensor2, value, prims.div)


def _floating(dtype):
    return dtype.is_floating_point or dtype.is_complex


# -- fills -------------------------------------------------------------------------------


def _check_mask(op, mask):
    if mask.dtype is not bool_:
        raise TypeError(f"{op}: argument 'mask' must be a bool tensor, got {mask.dtype.name}")


def masked_fill_scalar(self, mask, value):
    """``value`` where ``mask`` is True, else ``self`` (``mask`` broadcasts; the result has ``self``'s dtype)."""
    _check_mask("masked_fill", mask)
    if isinstance(value, complex) and not self.dtype.is_complex:
        raise TypeError(f"masked_fill: cannot fill a {self.dtype.name} tensor with the complex value {value!r}")
    m, a = prepare_all("masked_fill", (mask, self), (None, None))
    return prims.where(m, scalar_like(value, a), a)


def masked_fill_tensor(self, mask, value):
    """``masked_fill`` with a 0-dim tensor ``value`` (converted to ``self``'s dtype)."""
    _check_mask("masked_fill", mask)
    _check_fill_tensor("masked_fill", self, value)
    m, a, v = prepare_all("masked_fill", (mask, self, value), (None, None, self.dtype))
    return prims.where(m, v, a)


def _check_fill_tensor(op, self, value):
    if value.ndim != 0:
        raise ValueError(f"{op}: argument 'value' must be a 0-dim tensor, got one with {value.ndim} dims")
    if value.dtype.is_complex and not self.dtype.is_complex:
        raise TypeError(f"{op}: cannot fill a {self.dtype.name} tensor with a complex value")
    if value.device != self.device and value.device.type != "cpu":
        raise RuntimeError(f"{op}: 'value' is on {value.device} but 'self' is on {self.device}")


def fill_scalar(self, value):
    """A tensor like ``self`` filled with ``value`` (converted to ``self``'s dtype; complex only into complex)."""
    if isinstance(value, complex) and not self.dtype.is_complex:
        raise TypeError(f"fill: cannot fill a {self.dtype.name} tensor with the complex value {value!r}")
    return prims.fill(self, value)


def fill_tensor(self, value):
    """A tensor like ``self`` filled with the value of the 0-dim tensor ``value``."""
    _check_fill_tensor("fill", self, value)
    out = prims.fill(self, 0)
    v = to_device(to_dtype(value, self.dtype), self.device)
    return prims.copy_to(out, prims.broadcast_in_dim(v, list(self.shape), []))


def zero(self):
    """A tensor like ``self`` filled with zeros (``zero_`` fills ``self`` in place)."""
    return prims.fill(self, 0)


# -- isclose -------------------------------------------------------------------------------


def isclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """``|self - other| <= atol + rtol * |other|`` elementwise (or exactly equal; nan == nan with ``equal_nan``).

    ``self`` and ``other`` must have the same dtype; integer and bool tensors are
    compared in the default float dtype.
    """
    if self.dtype is not other.dtype:
        raise TypeError(f"isclose: 'self' is {self.dtype.name} but 'other' is {other.dtype.name}; they must match")
    if rtol < 0 or atol < 0:
        raise ValueError(f"isclose: 'rtol' and 'atol' must be non-negative, got rtol={rtol} and atol={atol}")
    close = ops.eq.Tensor(self, other)
    floating = _floating(self.dtype)
    if equal_nan and floating:
        close = ops.logical_or(close, ops.logical_and(ops.isnan(self), ops.isnan(other)))
    if rtol == 0 and atol == 0:
        return close
    if not floating:
        default = _dtype.get_default_dtype()
        self, other = to_dtype(self, default), to_dtype(other, default)
    allowed = ops.add.Tensor(ops.abs(ops.mul.Tensor(other, rtol)), atol)
    actual = ops.abs(ops.sub.Tensor(self, other))
    within = ops.logical_and(ops.isfinite(actual), ops.le.Tensor(actual, allowed))
    return ops.logical_or(close, within)


# -- definitions -----------------------------------------------------------------------------


def _define():
    define_with_variants(
        "where.self(Tensor condition, Tensor self, Tensor other) -> Tensor",
        where,
        tags=("pointwise", "core"),
        inplace=False,
    )
    for ov, a, b in (
        ("ScalarSelf", "Scalar", "Tensor"),
        ("ScalarOther", "Tensor", "Scalar"),
        ("Scalar", "Scalar", "Scalar"),
    ):
        redirect(
            f"where.{ov}(Tensor condition, {a} self, {b} other) -> Tensor",
            "where.self",
            doc="``where`` with Scalar operands (promoted like PyTorch's wrapped numbers).",
            inplace=False,
            out=False,
        )
    pointwise("clamp(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor", clamp, core=True)
    pointwise(
        "clamp.Tensor(Tensor self, Tensor? min=None, Tensor? max=None) -> Tensor",
        clamp_tensor,
        core=True,
        out="Tensor_out",
    )
    pointwise("clamp_min(Tensor self, Scalar min) -> Tensor", clamp_min)
    redirect(
        "clamp_min.Tensor(Tensor self, Tensor min) -> Tensor",
        "clamp_min",
        doc="``clamp_min`` with a Tensor bound.",
        out="Tensor_out",
    )
    pointwise("clamp_max(Tensor self, Scalar max) -> Tensor", clamp_max)
    redirect(
        "clamp_max.Tensor(Tensor self, Tensor max) -> Tensor",
        "clamp_max",
        doc="``clamp_max`` with a Tensor bound.",
        out="Tensor_out",
    )
    redirect("clip(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor", "clamp")
    redirect("clip.Tensor(Tensor self, Tensor? min=None, Tensor? max=None) -> Tensor", "clamp.Tensor", out="Tensor_out")
    pointwise("lerp.Scalar(Tensor self, Tensor end, Scalar weight) -> Tensor", lerp_scalar)
    pointwise("lerp.Tensor(Tensor self, Tensor end, Tensor weight) -> Tensor", lerp_tensor)
    pointwise("addcmul(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor", addcmul)
    pointwise("addcdiv(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor", addcdiv)
    pointwise("masked_fill.Scalar(Tensor self, Tensor mask, Scalar value) -> Tensor", masked_fill_scalar)
    pointwise("masked_fill.Tensor(Tensor self, Tensor mask, Tensor value) -> Tensor", masked_fill_tensor)
    pointwise("fill.Scalar(Tensor self, Scalar value) -> Tensor", fill_scalar, core=True)
    pointwise("fill.Tensor(Tensor self, Tensor value) -> Tensor", fill_tensor)
    pointwise("zero(Tensor self) -> Tensor", zero)
    define_with_variants(
        "isclose(Tensor self, Tensor other, float rtol=1e-05, float atol=1e-08, bool equal_nan=False) -> Tensor",
        isclose,
        tags=("pointwise",),
        inplace=False,
        out=False,
    )


_define()
