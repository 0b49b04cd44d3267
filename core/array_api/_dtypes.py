"""The standard's data types, type promotion and data-type functions (``isdtype``, ``result_type``...).

The standard promotes by dtype alone: a 0-d array counts like any other array (PyTorch lets a 0-d
tensor of the same kind defer to the other operand), and a Python scalar takes the array's dtype
when it is of the same or a lower kind (``bool`` < ``int`` < ``float`` < ``complex``).
"""

from __future__ import annotations

import builtins
from dataclasses import dataclass

from .. import _dtype
from .._dtype import bool_, complex64, complex128, dtype, float32, float64, int8, int16, int32, int64, uint8
from .._tensor import Tensor

STANDARD_DTYPES = (bool_, int8, int16, int32, int64, uint8, float32, float64, complex64, complex128)
DEFAULT_FLOAT = float32
DEFAULT_COMPLEX = complex64
DEFAULT_INT = int64
DEFAULT_INDEX = int64

_KINDS = {
    "bool": lambda d: d == bool_,
    "signed integer": lambda d: d in (int8, int16, int32, int64),
    "unsigned integer": lambda d: d == uint8,
    "integral": lambda d: d in (int8, int16, int32, int64, uint8),
    "real floating": lambda d: d in (float32, float64, _dtype.float16, _dtype.bfloat16),
    "complex floating": lambda d: d in (complex64, complex128),
    "numeric": lambda d: d != bool_ and not d.is_quantized and not d.is_float8,
}


def isdtype(dtype: dtype, kind: dtype | str | tuple) -> builtins.bool:
    """Whether ``dtype`` is of ``kind``: a dtype, one of the standard's kind names, or a tuple of them."""
    if not isinstance(dtype, _dtype.dtype):
        raise TypeError(f"isdtype(): expected a dtype, got {type(dtype).__name__}")
    if isinstance(kind, tuple):
        return builtins.any(isdtype(dtype, k) for k in kind)
    if isinstance(kind, _dtype.dtype):
        return dtype == kind
    if isinstance(kind, str):
        test = _KINDS.get(kind)
        if test is None:
            raise ValueError(f"isdtype(): unknown kind {kind!r}; expected one of {sorted(_KINDS)}")
        return test(dtype)
    raise TypeError(f"isdtype(): kind must be a dtype, a kind name or a tuple, got {type(kind).__name__}")


def _scalar_dtype(value, other: dtype) -> dtype:
    """The dtype a Python scalar takes next to an array of dtype ``other`` (the standard's kind rule)."""
    if isinstance(value, builtins.bool):
        return other
    if isinstance(value, builtins.int):
        if other == bool_:
            raise TypeError("an int scalar cannot combine with a bool array in the array API")
        return other
    if isinstance(value, builtins.float):
        if other.is_floating_point or other.is_complex:
            return other
        raise TypeError(f"a float scalar cannot combine with a {other.name} array in the array API")
    if isinstance(value, builtins.complex):
        if other.is_complex:
            return other
        if other.is_floating_point:
            return complex128 if other == float64 else complex64
        raise TypeError(f"a complex scalar cannot combine with a {other.name} array in the array API")
    raise TypeError(f"expected an array or a Python scalar, got {type(value).__name__}")


def result_type(*arrays_and_dtypes) -> dtype:
    """The dtype the standard's promotion gives ``arrays_and_dtypes`` (arrays, dtypes, Python scalars)."""
    dtypes = [a.dtype if isinstance(a, Tensor) else a for a in arrays_and_dtypes if not _is_scalar(a)]
    scalars = [a for a in arrays_and_dtypes if _is_scalar(a)]
    if not dtypes:
        raise ValueError("result_type() needs at least one array or dtype")
    out = dtypes[0]
    for d in dtypes[1:]:
        if not isinstance(d, _dtype.dtype):
            raise TypeError(f"result_type(): expected arrays, dtypes or scalars, got {type(d).__name__}")
        out = promote(out, d)
    for s in scalars:
        out = _scalar_dtype(s, out)
    return out


def _is_scalar(a) -> builtins.bool:
    return isinstance(a, builtins.bool | builtins.int | builtins.float | builtins.complex)


def promote(a: dtype, b: dtype) -> dtype:
    """The standard's promotion of two dtypes; ``TypeError`` across kinds the standard keeps apart."""
    if a == b:
        return a
    if (a == bool_) != (b == bool_):
        raise TypeError(f"the array API does not promote {a.name} with {b.name}")
    return _dtype.promote_types(a, b)


def can_cast(from_: dtype | Tensor, to: dtype, /) -> builtins.bool:
    """Whether the standard's promotion rules allow casting ``from_`` (a dtype or an array) to ``to``."""
    src = from_.dtype if isinstance(from_, Tensor) else from_
    if src == to:
        return True
    if src == bool_ or to == bool_:
        return False
    if src.is_complex and not to.is_complex:
        return False
    if (src.is_floating_point or src.is_complex) and not (to.is_floating_point or to.is_complex):
        return False
    if not (src.is_floating_point or src.is_complex) and (to.is_floating_point or to.is_complex):
        return True  # integer to float is a cross-kind cast the standard leaves to implementations
    try:
        return _dtype.promote_types(src, to) == to
    except (TypeError, RuntimeError):
        return False


@dataclass(frozen=True)
class finfo_object:  # noqa: N801 - the standard's name
    """Machine limits of a floating dtype (``bits``, ``eps``, ``max``, ``min``, ``smallest_normal``, ``dtype``)."""

    bits: builtins.int
    eps: builtins.float
    max: builtins.float
    min: builtins.float
    smallest_normal: builtins.float
    dtype: dtype


@dataclass(frozen=True)
class iinfo_object:  # noqa: N801 - the standard's name
    """Machine limits of an integer dtype (``bits``, ``max``, ``min``, ``dtype``)."""

    bits: builtins.int
    max: builtins.int
    min: builtins.int
    dtype: dtype


def finfo(type: dtype | Tensor, /) -> finfo_object:  # noqa: A002 - the standard's name
    """Machine limits of a floating dtype (of a complex dtype: those of its real dtype, which ``dtype`` names)."""
    d = type.dtype if isinstance(type, Tensor) else type
    real = d.to_real() if d.is_complex else d
    info = _dtype.finfo(real)
    return finfo_object(
        info.bits,
        builtins.float(info.eps),
        builtins.float(info.max),
        builtins.float(info.min),
        builtins.float(info.smallest_normal),
        real,
    )


def iinfo(type: dtype | Tensor, /) -> iinfo_object:  # noqa: A002 - the standard's name
    """Machine limits of an integer dtype."""
    d = type.dtype if isinstance(type, Tensor) else type
    info = _dtype.iinfo(d)
    return iinfo_object(info.bits, builtins.int(info.max), builtins.int(info.min), d)
