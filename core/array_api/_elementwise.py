"""The standard's element-wise functions, with its type promotion (see ``_dtypes``).

Binary functions accept two arrays, or an array and a Python scalar; both operands are converted
to the promoted dtype before the opweave op runs, so no value-based or 0-d promotion happens.
"""

from __future__ import annotations

import opweave as ow

from .._tensor import Tensor
from ._dtypes import _is_scalar, _scalar_dtype, promote

__all__ = []


def operands(x1, x2, name: str):
    """``x1, x2`` as arrays of the standard's promoted dtype (one of them may be a Python scalar)."""
    if isinstance(x1, Tensor) and isinstance(x2, Tensor):
        dt = promote(x1.dtype, x2.dtype)
        return (x1 if x1.dtype == dt else x1.to(dt)), (x2 if x2.dtype == dt else x2.to(dt))
    if isinstance(x1, Tensor) and _is_scalar(x2):
        return x1, ow.tensor(x2, dtype=_scalar_dtype(x2, x1.dtype), device=x1.device)
    if isinstance(x2, Tensor) and _is_scalar(x1):
        return ow.tensor(x1, dtype=_scalar_dtype(x1, x2.dtype), device=x2.device), x2
    raise TypeError(
        f"{name}(): expected arrays (or one array and a Python scalar), got {type(x1).__name__} and {type(x2).__name__}"
    )


def _array(x, name: str) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}(): expected an array, got {type(x).__name__}")
    return x


def _binary(name: str, fn):
    def f(x1, x2, /):
        a, b = operands(x1, x2, name)
        return fn(a, b)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"The standard's ``{name}(x1, x2)``, element-wise, after the standard's type promotion."
    __all__.append(name)
    globals()[name] = f
    return f


def _unary(name: str, fn):
    def f(x, /):
        return fn(_array(x, name))

    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"The standard's ``{name}(x)``, element-wise."
    __all__.append(name)
    globals()[name] = f
    return f


for _name in (
    "abs acos acosh asin asinh atan atanh cos cosh exp expm1 isfinite isinf isnan log log1p log2 log10 "
    "sin sinh sqrt tan tanh signbit reciprocal square logical_not"
).split():
    _unary(_name, getattr(ow, _name))


def _same_if_integral(op):
    def f(x):
        return x.clone() if not (x.dtype.is_floating_point or x.dtype.is_complex) else op(x)

    return f


_unary("ceil", _same_if_integral(ow.ceil))
_unary("floor", _same_if_integral(ow.floor))
_unary("trunc", _same_if_integral(ow.trunc))
_unary(
    "round",
    lambda x: (
        ow.complex(ow.round(ow.real(x)), ow.round(ow.imag(x))) if x.dtype.is_complex else _same_if_integral(ow.round)(x)
    ),
)
_unary("negative", ow.neg)
_unary("positive", lambda x: x.clone())
_unary("bitwise_invert", ow.bitwise_not)
_unary("sign", lambda x: ow.sgn(x) if x.dtype.is_complex else ow.where(ow.isnan(x), x, ow.sign(x)))
_unary("conj", lambda x: ow.conj_physical(x) if x.dtype.is_complex else x.clone())
_unary("real", lambda x: ow.real(x).clone() if x.dtype.is_complex else x.clone())
_unary("imag", lambda x: ow.imag(x).clone() if x.dtype.is_complex else ow.zeros_like(x))

for _name, _fn in {
    "add": ow.add,
    "subtract": ow.sub,
    "multiply": ow.mul,
    "divide": ow.div,
    "pow": ow.pow,
    "atan2": ow.atan2,
    "hypot": ow.hypot,
    "copysign": ow.copysign,
    "nextafter": ow.nextafter,
    "logaddexp": ow.logaddexp,
    "maximum": ow.maximum,
    "minimum": ow.minimum,
    "equal": ow.eq,
    "not_equal": ow.ne,
    "greater": ow.gt,
    "greater_equal": ow.ge,
    "less": ow.lt,
    "less_equal": ow.le,
    "logical_and": ow.logical_and,
    "logical_or": ow.logical_or,
    "logical_xor": ow.logical_xor,
    "bitwise_and": ow.bitwise_and,
    "bitwise_or": ow.bitwise_or,
    "bitwise_xor": ow.bitwise_xor,
    "bitwise_left_shift": ow.bitwise_left_shift,
    "bitwise_right_shift": ow.bitwise_right_shift,
}.items():
    _binary(_name, _fn)


def _floor_divide(a: Tensor, b: Tensor) -> Tensor:
    out = ow.floor_divide(a, b)
    if a.dtype.is_floating_point:  # an infinite operand: IEEE floor(a / b), as the standard specifies
        out = ow.where(ow.isinf(a) | ow.isinf(b), ow.floor(ow.div(a, b)), out)
    return out


def _remainder(a: Tensor, b: Tensor) -> Tensor:
    out = ow.remainder(a, b)
    if a.dtype.is_floating_point:  # a zero remainder takes the divisor's sign, as Python's %
        out = ow.where(out == 0, ow.copysign(ow.zeros_like(out), b), out)
    return out


_binary("floor_divide", _floor_divide)
_binary("remainder", _remainder)


def clip(x: Tensor, /, min=None, max=None) -> Tensor:  # noqa: A002 - the standard's names
    """``x`` limited to ``[min, max]`` (arrays or scalars, broadcast against ``x``); the result keeps ``x``'s dtype."""
    x = _array(x, "clip")
    out = x
    if min is not None:
        lo = min.to(x.dtype) if isinstance(min, Tensor) else ow.tensor(min, dtype=x.dtype, device=x.device)
        out = ow.maximum(out, lo)
    if max is not None:
        hi = max.to(x.dtype) if isinstance(max, Tensor) else ow.tensor(max, dtype=x.dtype, device=x.device)
        out = ow.minimum(out, hi)
    if out is x:
        return x.clone()
    return out


__all__.append("clip")
