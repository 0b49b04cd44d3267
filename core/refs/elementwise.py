"""Elementwise canonical ops: arithmetic, comparisons, logical and bitwise ops.

Each op promotes its operands with PyTorch's rules (``elementwise_dtypes`` and
the op's promotion kind), broadcasts them, computes float16/bfloat16 in float32
and rounds once at the end. Scalar overloads (``add.Scalar``) wrap the number
as a weak 0-dim tensor and call the Tensor overload. The other elementwise
families live in ``elementwise_unary``, ``elementwise_binary``,
``elementwise_ternary`` and ``elementwise_activation``; the helpers they share
in ``_elementwise``.
"""

from __future__ import annotations

from .. import _dtype
from .._ops import canonical as ops
from .._ops import prims
from ._elementwise import (
    ALL,
    BOOL,
    FLOATING,
    INT,
    INTEGRAL,
    NUMERIC,
    REAL,
    P,
    apply_prim,
    as_tensor,
    bool_,
    check_alpha,
    check_dtype,
    full_like,
    make,
    pointwise,
    redirect,
    scalar_like,
)
from ._utils import elementwise_dtypes, prepare, to_dtype

# -- add, sub, rsub, mul ----------------------------------------------------


def add(self, other, alpha=1):
    """``self + alpha * other`` with type promotion and broadcasting (bool: logical or)."""
    compute, result = elementwise_dtypes(self, other, kind=P.DEFAULT)
    check_alpha("add", alpha, result)
    a, b = prepare("add", (self, other), compute)
    if compute is bool_:
        return prims.logical_or(a, b if alpha else full_like(b, False))
    if alpha != 1:
        b = prims.mul(b, scalar_like(alpha, b))
    return to_dtype(prims.add(a, b), result)


def sub(self, other, alpha=1):
    """``self - alpha * other`` with type promotion and broadcasting (bool operands are refused)."""
    compute, result = elementwise_dtypes(self, other, kind=P.DEFAULT)
    if result is bool_:
        raise TypeError("sub: subtraction with two bool tensors is not supported; use logical_xor or bitwise_xor")
    check_alpha("sub", alpha, result)
    a, b = prepare("sub", (self, other), compute)
    if alpha != 1:
        b = prims.mul(b, scalar_like(alpha, b))
    return to_dtype(prims.sub(a, b), result)


def rsub(self, other, alpha=1):
    """``other - alpha * self`` (reversed subtraction)."""
    return ops.sub.Tensor(other, self, alpha=alpha)


def mul(self, other):
    """``self * other`` with type promotion and broadcasting (bool: logical and)."""
    compute, result = elementwise_dtypes(self, other, kind=P.DEFAULT)
    a, b = prepare("mul", (self, other), compute)
    if compute is bool_:
        return prims.logical_and(a, b)
    return to_dtype(prims.mul(a, b), result)


# -- division ---------------------------------------------------------------


def div(self, other):
    """True division ``self / other``; integer and bool inputs give the default float dtype."""
    return apply_prim("div", "div", (self, other), P.INT_TO_FLOAT, FLOATING)


def div_mode(self, other, rounding_mode):
    """Division with ``rounding_mode``: None (true division), ``"trunc"`` (toward zero) or ``"floor"``.

    With a rounding mode the result keeps the promoted dtype (integers stay
    integers); floating quotients are rounded to the result dtype before
    truncation, as PyTorch does. Integer division by zero raises.
    """
    if rounding_mode is None:
        return ops.div.Tensor(self, other)
    if rounding_mode == "trunc":
        return _div_trunc("div", self, other)
    if rounding_mode == "floor":
        return _div_floor("div", self, other)
    raise ValueError(f"div: expected rounding_mode to be one of None, 'trunc' or 'floor', but got {rounding_mode!r}")


def _div_trunc(op, self, other):
    compute, result = elementwise_dtypes(self, other, kind=P.DEFAULT)
    check_dtype(op, compute, REAL)
    a, b = prepare(op, (self, other), compute)
    if not compute.is_floating_point:
        return to_dtype(prims.div(a, b), result)
    return prims.trunc(to_dtype(prims.div(a, b), result))


def _div_floor(op, self, other):
    return apply_prim(op, "floor_divide", (self, other), P.DEFAULT, REAL)


def floor_divide(self, other):
    """``self // other`` rounded toward negative infinity (Python's floor division; like ``div(..., "floor")``)."""
    return _div_floor("floor_divide", self, other)


def remainder(self, other):
    """Python-style modulus: the result has the sign of the divisor."""
    return apply_prim("remainder", "remainder", (self, other), P.DEFAULT, REAL)


def fmod(self, other):
    """C-style modulus: the result has the sign of the dividend."""
    return apply_prim("fmod", "fmod", (self, other), P.DEFAULT, REAL)


# -- powers -----------------------------------------------------------------


def _signed_integer_pow(x, e):
    """``x ** e`` for signed integer tensors of one dtype and shape, with PyTorch's negative exponents.

    ``prims.pow`` refuses a negative integer exponent (NumPy's rule); PyTorch defines
    ``1 ** e = 1``, ``(-1) ** e = ±1`` by the parity of ``e`` and ``x ** e = 0`` otherwise.
    """
    zero, one = scalar_like(0, x), scalar_like(1, x)
    negative = prims.lt(e, zero)
    out = prims.pow(x, prims.where(negative, zero, e))
    odd = prims.ne(prims.remainder(e, scalar_like(2, x)), zero)
    minus_one = prims.where(odd, scalar_like(-1, x), one)
    small = prims.where(prims.eq(x, one), one, prims.where(prims.eq(x, scalar_like(-1, x)), minus_one, zero))
    return prims.where(negative, small, out)


def pow_tensor_tensor(self, exponent):
    """``self ** exponent`` elementwise; bool results become int64.

    Integers to negative powers follow PyTorch: ``1`` and ``-1`` give ``±1``, other bases ``0``.
    """
    compute, result = elementwise_dtypes(self, exponent, kind=P.BOOL_TO_LONG)
    if compute.kind == "int":
        a, b = prepare("pow", (self, exponent), compute)
        return to_dtype(_signed_integer_pow(a, b), result)
    return apply_prim("pow", "pow", (self, exponent), P.BOOL_TO_LONG, NUMERIC)


# exponent -> computation, as PyTorch's pow_tensor_scalar kernel specialises them
_POW_SPECIAL = {
    2: lambda x: prims.mul(x, x),
    3: lambda x: prims.mul(prims.mul(x, x), x),
    0.5: lambda x: prims.sqrt(x),
    -0.5: lambda x: prims.rsqrt(x),
    -1: lambda x: prims.reciprocal(x),
    -2: lambda x: prims.reciprocal(prims.mul(x, x)),
}


def pow_tensor_scalar(self, exponent):
    """``self ** exponent`` for a Scalar exponent.

    As in PyTorch, exponent 0 gives ones, 1 a copy, and for floating/complex
    tensors 2, 3, 0.5, -0.5, -1 and -2 are computed as products, ``sqrt``,
    ``rsqrt`` and ``reciprocal`` (so ``pow(-inf, 0.5)`` is nan as ``sqrt`` gives).
    """
    compute, result = elementwise_dtypes(self, exponent, kind=P.BOOL_TO_LONG)
    check_dtype("pow", compute, NUMERIC)
    if exponent == 0:
        return full_like(self, 1, dtype=result)
    x = to_dtype(self, compute)
    if exponent == 1:
        out = to_dtype(x, result)
        return prims.clone(out) if out is self else out
    special = _POW_SPECIAL.get(exponent) if (compute.is_floating_point or compute.is_complex) else None
    if special is not None and not isinstance(exponent, bool):
        return to_dtype(special(x), result)
    if compute.kind == "int" and exponent < 0:
        return to_dtype(_signed_integer_pow(x, scalar_like(exponent, x)), result)
    return to_dtype(prims.pow(x, scalar_like(exponent, x)), result)


def pow_scalar(self, exponent):
    """``self ** exponent`` for a Scalar base; a base of 1 gives ones (whatever the exponent)."""
    compute, result = elementwise_dtypes(self, exponent, kind=P.BOOL_TO_LONG)
    if self == 1 and not isinstance(self, bool):
        return full_like(exponent, 1, dtype=result)
    return pow_tensor_tensor(as_tensor(self), exponent)


def _float_power_dtype(*args):
    complex_ = any(a.dtype.is_complex if hasattr(a, "dtype") else isinstance(a, complex) for a in args)
    return _dtype.complex128 if complex_ else _dtype.float64


def float_power_tensor_tensor(self, exponent):
    """``self ** exponent`` computed and returned in float64 (complex128 for complex inputs)."""
    dtype = _float_power_dtype(self, exponent)
    return ops.pow.Tensor_Tensor(to_dtype(self, dtype), to_dtype(exponent, dtype))


def float_power_tensor_scalar(self, exponent):
    """``self ** exponent`` in float64/complex128 for a Scalar exponent."""
    dtype = _float_power_dtype(self, exponent)
    return ops.pow.Tensor_Scalar(to_dtype(self, dtype), exponent)


def float_power_scalar(self, exponent):
    """``self ** exponent`` in float64/complex128 for a Scalar base."""
    dtype = _float_power_dtype(self, exponent)
    return ops.pow.Tensor_Tensor(to_dtype(as_tensor(self), dtype), to_dtype(exponent, dtype))


# -- table-driven binary ops --------------------------------------------------


def binary_fn(name, prim_name, kind, allowed, doc):
    """A decomposition applying ``prims.<prim_name>`` to two promoted, broadcast operands."""
    return make(name, lambda a, b: apply_prim(name, prim_name, (a, b), kind, allowed), doc)


def define_binary(name, fn, *, overload="Tensor", names=("self", "other"), scalars=None, core=False, **variants):
    """Define ``name.overload(Tensor a, Tensor b)`` and its Scalar overloads.

    ``scalars`` maps an overload name to the argument that is a Scalar in it
    (``{"Scalar": "other", "Scalar_Tensor": "self"}``); a Scalar first argument
    has no in-place variant.
    """
    a, b = names
    dot = f".{overload}" if overload else ""
    tags = ("pointwise", "core") if core else ("pointwise",)
    pointwise(f"{name}{dot}(Tensor {a}, Tensor {b}) -> Tensor", fn, core=core, **variants)
    for ov, which in (scalars or {}).items():
        first, second = ("Scalar", "Tensor") if which == a else ("Tensor", "Scalar")
        inplace = variants.get("inplace", True) and which != a
        redirect(
            f"{name}.{ov}({first} {a}, {second} {b}) -> Tensor",
            f"{name}{dot}",
            doc=f"``{name}`` with a Scalar ``{which}``.",
            inplace=inplace,
            out=variants.get("out", True),
            tags=tags,
        )


COMPARISONS = {
    "eq": (ALL, "Elementwise ``self == other`` as a bool tensor."),
    "ne": (ALL, "Elementwise ``self != other`` as a bool tensor (nan != nan)."),
    "lt": (REAL | BOOL, "Elementwise ``self < other`` as a bool tensor."),
    "le": (REAL | BOOL, "Elementwise ``self <= other`` as a bool tensor."),
    "gt": (REAL | BOOL, "Elementwise ``self > other`` as a bool tensor."),
    "ge": (REAL | BOOL, "Elementwise ``self >= other`` as a bool tensor."),
}
COMPARISON_ALIASES = {
    "greater": "gt",
    "greater_equal": "ge",
    "less": "lt",
    "less_equal": "le",
    "not_equal": "ne",
}
LOGICAL = {
    "logical_and": "Elementwise logical and of the truth values (nonzero is True).",
    "logical_or": "Elementwise logical or of the truth values (nonzero is True).",
    "logical_xor": "Elementwise logical exclusive or of the truth values (nonzero is True).",
}
BITWISE = {
    "bitwise_and": "Bitwise and of integral (or bool) tensors.",
    "bitwise_or": "Bitwise or of integral (or bool) tensors.",
    "bitwise_xor": "Bitwise exclusive or of integral (or bool) tensors.",
}
SHIFTS = {
    "bitwise_left_shift": ("shift_left", "``self << other`` for integer tensors (shifts past the width give 0)."),
    "bitwise_right_shift": (
        "shift_right_arithmetic",
        "Arithmetic ``self >> other`` for integer tensors (shifts past the width give 0 or -1).",
    ),
}


def logical_not(self):
    """Elementwise logical not (nonzero is True) as a bool tensor."""
    return prims.logical_not(self)


def bitwise_not(self):
    """Bitwise not of an integral tensor (logical not for bool)."""
    check_dtype("bitwise_not", self.dtype, INTEGRAL)
    return prims.bitwise_not(self)


def _define_arithmetic():
    for name, fn in (("add", add), ("sub", sub)):
        pointwise(f"{name}.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", fn, core=True)
        redirect(
            f"{name}.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor",
            f"{name}.Tensor",
            doc=f"``{name}`` with a Scalar ``other``.",
            tags=("pointwise", "core"),
        )
    _define_rsub()
    define_binary("mul", mul, scalars={"Scalar": "other"}, core=True)
    pointwise("div.Tensor(Tensor self, Tensor other) -> Tensor", div, core=True)
    pointwise("div.Tensor_mode(Tensor self, Tensor other, *, str? rounding_mode) -> Tensor", div_mode, core=True)
    redirect("div.Scalar(Tensor self, Scalar other) -> Tensor", "div.Tensor", doc="``div`` with a Scalar divisor.")
    redirect(
        "div.Scalar_mode(Tensor self, Scalar other, *, str? rounding_mode) -> Tensor",
        "div.Tensor_mode",
        doc="``div`` with a Scalar divisor and a rounding mode.",
    )
    define_binary("floor_divide", floor_divide, overload="", scalars={"Scalar": "other"})
    define_binary("remainder", remainder, scalars={"Scalar": "other", "Scalar_Tensor": "self"}, core=True)
    define_binary("fmod", fmod, scalars={"Scalar": "other"}, core=True)
    _define_powers()


def _define_rsub():
    pointwise("rsub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", rsub, inplace=False)
    redirect(
        "rsub.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor",
        "rsub.Tensor",
        doc="``rsub`` with a Scalar ``other``.",
        inplace=False,
    )


def _define_powers():
    pointwise("pow.Tensor_Tensor(Tensor self, Tensor exponent) -> Tensor", pow_tensor_tensor, core=True)
    pointwise("pow.Tensor_Scalar(Tensor self, Scalar exponent) -> Tensor", pow_tensor_scalar, core=True)
    pointwise("pow.Scalar(Scalar self, Tensor exponent) -> Tensor", pow_scalar, core=True, inplace=False)
    pointwise("float_power.Tensor_Tensor(Tensor self, Tensor exponent) -> Tensor", float_power_tensor_tensor)
    pointwise("float_power.Tensor_Scalar(Tensor self, Scalar exponent) -> Tensor", float_power_tensor_scalar)
    pointwise("float_power.Scalar(Scalar self, Tensor exponent) -> Tensor", float_power_scalar, inplace=False)


def _define_comparisons():
    for name, (allowed, doc) in COMPARISONS.items():
        define_binary(name, binary_fn(name, name, P.ALWAYS_BOOL, allowed, doc), scalars={"Scalar": "other"}, core=True)
    for name, target in COMPARISON_ALIASES.items():
        for ov, kind in (("Scalar", "Scalar"), ("Tensor", "Tensor")):
            redirect(f"{name}.{ov}(Tensor self, {kind} other) -> Tensor", f"{target}.{ov}")


def _define_logical_bitwise():
    for name, doc in LOGICAL.items():
        define_binary(name, binary_fn(name, name, P.ALWAYS_BOOL, ALL, doc), overload="", core=True)
    pointwise("logical_not(Tensor self) -> Tensor", logical_not, core=True)
    for name, doc in BITWISE.items():
        fn = binary_fn(name, name, P.DEFAULT, INTEGRAL, doc)
        define_binary(name, fn, scalars={"Scalar": "other", "Scalar_Tensor": "self"}, core=True)
    pointwise("bitwise_not(Tensor self) -> Tensor", bitwise_not, core=True)
    for name, (prim_name, doc) in SHIFTS.items():
        fn = binary_fn(name, prim_name, P.DEFAULT, INT, doc)
        define_binary(name, fn, scalars={"Tensor_Scalar": "other", "Scalar_Tensor": "self"})


def _define_aliases():
    redirect("subtract.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", "sub.Tensor")
    redirect("subtract.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor", "sub.Scalar")
    redirect("multiply.Tensor(Tensor self, Tensor other) -> Tensor", "mul.Tensor")
    redirect("multiply.Scalar(Tensor self, Scalar other) -> Tensor", "mul.Scalar")
    redirect("divide.Tensor(Tensor self, Tensor other) -> Tensor", "div.Tensor")
    redirect("divide.Scalar(Tensor self, Scalar other) -> Tensor", "div.Scalar")
    redirect("divide.Tensor_mode(Tensor self, Tensor other, *, str? rounding_mode) -> Tensor", "div.Tensor_mode")
    redirect("divide.Scalar_mode(Tensor self, Scalar other, *, str? rounding_mode) -> Tensor", "div.Scalar_mode")
    redirect("true_divide.Tensor(Tensor self, Tensor other) -> Tensor", "div.Tensor")
    redirect("true_divide.Scalar(Tensor self, Scalar other) -> Tensor", "div.Scalar")


_define_arithmetic()
_define_comparisons()
_define_logical_bitwise()
_define_aliases()
