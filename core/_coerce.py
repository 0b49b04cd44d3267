"""Argument coercion used by generated op entry points.

Each helper takes the value and ``(op_name, arg_name)`` and either returns the
normalised value or raises ``TypeError`` naming the op and the argument.
"""

from __future__ import annotations

import numbers
import operator

import numpy as np

from . import _dtype
from ._device import device as _device
from ._device import with_index
from ._tensor import Tensor, wrap_scalar


def _fail(value, op: str, arg: str, expected: str):
    raise TypeError(f"{op}(): argument '{arg}' must be {expected}, not {type(value).__name__}")


# Ops whose Tensor arguments PyTorch's Python binding does not fill from Python numbers: they have no
# Scalar overload and are not on its short list of number-accepting ops (add, mul, div, sub...).
NO_NUMBERS = frozenset(
    {
        "atan2",
        "arctan2",
        "fmin",
        "fmax",
        "maximum",
        "minimum",
        "logical_and",
        "logical_or",
        "logical_xor",
        "gcd",
        "lcm",
        "heaviside",
        "isclose",
        "ldexp",
        "hypot",
        "nextafter",
    }
)


def to_tensor(value, op: str, arg: str, written: bool = False):
    """A Tensor argument: Tensors pass, Python/NumPy scalars become wrapped 0-dim tensors.

    For the ops in :data:`NO_NUMBERS` a number is a TypeError, as in PyTorch. An argument the op
    writes or returns a view of (``written``: its schema type has an alias annotation) gets a
    tensor of its own; others may share one (:func:`scalar_tensor`).
    """
    if isinstance(value, Tensor):
        return value
    if isinstance(value, (bool, numbers.Number, np.generic)) and not isinstance(value, np.ndarray):
        if op.split(".")[0].rstrip("_") in NO_NUMBERS:
            _fail(value, op, arg, "Tensor")
        return wrap_scalar(value) if written else scalar_tensor(value)
    _fail(value, op, arg, "Tensor")


_scalars: dict = {}  # (type, value) -> its wrapped 0-dim tensor (see ``scalar_tensor``)
_SCALAR_MEMO_TYPES = frozenset({bool, int, float})


def scalar_tensor(value):
    """``value`` wrapped as a 0-dim tensor, shared between calls with the same Python scalar.

    A shared wrapped number is never written nor returned: arguments with an alias annotation
    (in-place, ``out=``, views) get their own (see ``_binding``), so ``a * 2.0`` reuses one
    wrapped ``2.0`` instead of allocating a tensor per call. Zeros and NaN are not shared (``0.0 == -0.0``; NaN is
    not equal to itself); the memo keeps at most 1024 values.
    """
    tv = type(value)
    if tv not in _SCALAR_MEMO_TYPES or not value or value != value or (tv is int and not -(2**62) < value < 2**62):
        return wrap_scalar(value)
    key = (tv, value)
    found = _scalars.get(key)
    if found is None:
        found = wrap_scalar(value)
        if len(_scalars) < 1024:
            _scalars[key] = found
    return found


def check_tensor(value, op: str, arg: str):
    """A strict Tensor argument (prims): only Tensors pass."""
    if isinstance(value, Tensor):
        return value
    _fail(value, op, arg, "Tensor")


def to_tensor_list(value, op: str, arg: str, elem_optional: bool, strict: bool):
    """A ``Tensor[]`` / ``Tensor?[]`` argument, returned as a tuple."""
    kind = type(value)
    if kind is list or kind is tuple:  # the everyday case: a list of tensors, taken as it is
        for item in value:
            if type(item) is not Tensor:
                break
        else:
            return value if kind is tuple else tuple(value)
    if isinstance(value, Tensor) or not isinstance(value, (list, tuple)):
        _fail(value, op, arg, "a sequence of Tensors")
    out = []
    for item in value:
        if item is None and elem_optional:
            out.append(None)
        elif isinstance(item, Tensor):
            out.append(item)
        elif strict:
            _fail(item, op, arg, "a sequence of Tensors")
        else:
            out.append(to_tensor(item, op, arg))
    return tuple(out)


def bump_version(t) -> None:
    """Count one in-place write to ``t``'s storage (autograd compares it with what it saved)."""
    if t is not None:
        t._storage.version += 1


def list_keys(tensors) -> int:
    """OR of the dispatch keys of a tensor list (None entries ignored)."""
    ks = 0
    for t in tensors:
        if t is not None:
            ks |= t._keys
    return ks


def to_int(value, op: str, arg: str) -> int:
    """An ``int`` argument; accepts anything with ``__index__`` except bool."""
    if isinstance(value, bool):
        _fail(value, op, arg, "int")
    try:
        return operator.index(value)
    except TypeError:
        _fail(value, op, arg, "int")


def to_float(value, op: str, arg: str) -> float:
    """A ``float`` argument; accepts real numbers."""
    if isinstance(value, (numbers.Real, np.floating, np.integer)) and not isinstance(value, bool):
        return float(value)
    _fail(value, op, arg, "float")


def to_bool(value, op: str, arg: str) -> bool:
    """A ``bool`` argument."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    _fail(value, op, arg, "bool")


def to_str(value, op: str, arg: str) -> str:
    """A ``str`` argument."""
    if isinstance(value, str):
        return value
    _fail(value, op, arg, "str")


def to_scalar(value, op: str, arg: str):
    """A ``Scalar``: bool, int, float or complex (NumPy scalars and 1-element tensors converted)."""
    if isinstance(value, (bool, int, float, complex)):
        return value
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, Tensor) and value.numel() == 1:
        return value.item()
    _fail(value, op, arg, "Number")


def to_dtype(value, op: str, arg: str):
    """A ``ScalarType`` argument: an opweave dtype."""
    if isinstance(value, _dtype.dtype):
        return value
    _fail(value, op, arg, "opweave.dtype")


def to_device(value, op: str, arg: str):
    """A ``Device`` argument: a device or a device string; an index-less type means its current device."""
    if isinstance(value, _device):
        return with_index(value)
    if isinstance(value, str):
        try:
            return with_index(_device(value))
        except ValueError as exc:
            raise ValueError(f"{op}(): argument '{arg}': {exc}") from None
    _fail(value, op, arg, "opweave.device or str")


def to_list(value, elem, size, op: str, arg: str) -> tuple:
    """An ``int[]`` / ``int[N]`` (or other list) argument as a tuple; a bare int is repeated N times."""
    if isinstance(value, (list, tuple)):
        if elem is to_int:
            for v in value:
                if type(v) is not int:
                    break
            else:  # plain ints (sizes, dims): nothing to convert
                return value if type(value) is tuple else tuple(value)
        return tuple(elem(v, op, arg) for v in value)
    if isinstance(value, Tensor) or isinstance(value, bool):
        _fail(value, op, arg, "a sequence")
    try:
        one = elem(value, op, arg)
    except TypeError:
        _fail(value, op, arg, "a sequence")
    return (one,) * (size or 1)


def default_value(arg):
    """The Python value bound for an argument's schema default."""
    d = arg.default
    t = arg.type
    if d is None:
        return None
    if t.is_list and t.name != "Tensor":
        if isinstance(d, tuple):
            return d
        return (d,) * (t.size or 1)
    if t.name == "float" and isinstance(d, int):
        return float(d)
    if t.name in ("Device",) and isinstance(d, str):
        return _device(d)
    return d
