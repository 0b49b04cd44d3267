"""The standard's creation functions (``asarray``, ``arange``, ``eye(k=)``, ``linspace(endpoint=)``...).

Every function takes ``device=``; without ``dtype=`` a result gets the standard's defaults:
``bool`` for booleans, int64 for integers, float32 for real and complex64 for complex values.
"""

from __future__ import annotations

import builtins
import math

import opweave as ow

from .._device import as_device
from .._tensor import Tensor
from ._dtypes import DEFAULT_COMPLEX, DEFAULT_FLOAT, DEFAULT_INT

__all__ = [
    "arange",
    "asarray",
    "empty",
    "empty_like",
    "eye",
    "from_dlpack",
    "full",
    "full_like",
    "linspace",
    "meshgrid",
    "ones",
    "ones_like",
    "tril",
    "triu",
    "zeros",
    "zeros_like",
]


def _shape(shape) -> tuple:
    return (shape,) if isinstance(shape, builtins.int) else tuple(shape)


def _value_dtype(value):
    if isinstance(value, builtins.bool):
        return ow.bool
    if isinstance(value, builtins.int):
        return DEFAULT_INT
    if isinstance(value, builtins.float):
        return DEFAULT_FLOAT
    if isinstance(value, builtins.complex):
        return DEFAULT_COMPLEX
    raise TypeError(f"expected a Python bool, int, float or complex, got {type(value).__name__}")


def asarray(obj, /, *, dtype=None, device=None, copy: builtins.bool | None = None) -> Tensor:
    """``obj`` (an array, a Python scalar, a nested sequence, a buffer or a DLPack object) as an array.

    ``copy=True`` always copies, ``copy=False`` raises ``ValueError`` when a copy would be needed,
    ``copy=None`` copies only when needed.
    """
    dev = as_device(device)
    if isinstance(obj, Tensor):
        needs = (dtype is not None and dtype != obj.dtype) or (dev is not None and dev != obj.device)
        if copy is False and needs:
            raise ValueError("asarray(copy=False): a copy is needed to change the dtype or the device")
        out = obj.to(device=dev if dev is not None else obj.device, dtype=dtype if dtype is not None else obj.dtype)
        return out.clone() if copy and out is obj else out
    if copy is False and not hasattr(obj, "__dlpack__") and not isinstance(obj, memoryview | bytearray):
        if not hasattr(obj, "__array_interface__"):
            raise ValueError("asarray(copy=False): a Python object cannot be used without a copy")
    if isinstance(obj, builtins.bool | builtins.int | builtins.float | builtins.complex) and dtype is None:
        dtype = _value_dtype(obj)
    if isinstance(obj, memoryview | bytearray | bytes):
        import numpy as np

        obj = np.asarray(obj)
    if isinstance(obj, list | tuple) and dtype is None:
        dtype = _sequence_dtype(obj)
    if copy:
        return ow.tensor(obj, dtype=dtype, device=dev)
    return ow.as_tensor(obj, dtype=dtype, device=dev)


def _sequence_dtype(seq):
    kinds = set()

    def walk(item):
        if isinstance(item, list | tuple):
            for sub in item:
                walk(sub)
        elif isinstance(item, Tensor):
            kinds.add(item.dtype)
        else:
            kinds.add(_value_dtype(item))

    walk(seq)
    if not kinds:
        return DEFAULT_FLOAT
    out = None
    for d in kinds:
        out = d if out is None else ow.promote_types(out, d)
    return out


def arange(start, /, stop=None, step=1, *, dtype=None, device=None) -> Tensor:
    """Evenly spaced values in ``[start, stop)``; integer arguments give int64, any float gives float32."""
    if stop is None:
        start, stop = 0, start
    if dtype is None:
        dtype = DEFAULT_INT if builtins.all(isinstance(v, builtins.int) for v in (start, stop, step)) else DEFAULT_FLOAT
    if step == 0:
        raise ValueError("arange(): step must not be zero")
    if math.ceil((stop - start) / step) <= 0:
        return ow.empty((0,), dtype=dtype, device=device)
    return ow.arange(start, stop, step, dtype=dtype, device=device)


def empty(shape, *, dtype=None, device=None) -> Tensor:
    """An uninitialised array of ``shape``."""
    return ow.empty(_shape(shape), dtype=dtype or DEFAULT_FLOAT, device=device)


def zeros(shape, *, dtype=None, device=None) -> Tensor:
    """An array of zeros."""
    return ow.zeros(_shape(shape), dtype=dtype or DEFAULT_FLOAT, device=device)


def ones(shape, *, dtype=None, device=None) -> Tensor:
    """An array of ones."""
    return ow.ones(_shape(shape), dtype=dtype or DEFAULT_FLOAT, device=device)


def full(shape, fill_value, *, dtype=None, device=None) -> Tensor:
    """An array of ``shape`` filled with ``fill_value`` (its dtype follows the value's kind)."""
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    return ow.full(_shape(shape), fill_value, dtype=dtype or _value_dtype(fill_value), device=device)


def _like(fn, x, dtype, device, *args):
    return fn(x.shape, *args, dtype=dtype or x.dtype, device=device if device is not None else x.device)


def empty_like(x: Tensor, /, *, dtype=None, device=None) -> Tensor:
    """An uninitialised array shaped like ``x``."""
    return _like(ow.empty, x, dtype, device)


def zeros_like(x: Tensor, /, *, dtype=None, device=None) -> Tensor:
    """Zeros shaped like ``x``."""
    return _like(ow.zeros, x, dtype, device)


def ones_like(x: Tensor, /, *, dtype=None, device=None) -> Tensor:
    """Ones shaped like ``x``."""
    return _like(ow.ones, x, dtype, device)


def full_like(x: Tensor, /, fill_value, *, dtype=None, device=None) -> Tensor:
    """``fill_value`` in an array shaped like ``x`` (of ``x``'s dtype unless ``dtype`` is given)."""
    return _like(ow.full, x, dtype, device, fill_value)


def eye(n_rows: builtins.int, n_cols: builtins.int | None = None, /, *, k: builtins.int = 0, dtype=None, device=None):
    """A 2-D array with ones on the ``k``-th diagonal."""
    n_cols = n_rows if n_cols is None else n_cols
    if not -n_rows < k < n_cols:  # no diagonal inside (any k, beyond int64 too)
        return ow.zeros((n_rows, n_cols), dtype=dtype or DEFAULT_FLOAT, device=device)
    rows = ow.arange(n_rows, device=device).unsqueeze(1)
    cols = ow.arange(n_cols, device=device).unsqueeze(0)
    return (cols - rows == k).to(dtype or DEFAULT_FLOAT)


def linspace(start, stop, /, num: builtins.int, *, dtype=None, device=None, endpoint: builtins.bool = True):
    """``num`` evenly spaced values from ``start`` to ``stop`` (excluded when ``endpoint=False``)."""
    if dtype is None:
        dtype = DEFAULT_COMPLEX if isinstance(start, complex) or isinstance(stop, complex) else DEFAULT_FLOAT
    if endpoint:
        return ow.linspace(start, stop, num, dtype=dtype, device=device)
    return ow.linspace(start, stop, num + 1, dtype=dtype, device=device)[:-1].clone()


def meshgrid(*arrays: Tensor, indexing: str = "xy") -> list:
    """Coordinate matrices from 1-D arrays (``indexing`` ``"xy"`` or ``"ij"``), as a list."""
    if indexing not in ("xy", "ij"):
        raise ValueError(f"meshgrid(): indexing must be 'xy' or 'ij', got {indexing!r}")
    if not arrays:
        return []
    return list(ow.meshgrid(*arrays, indexing=indexing))


def tril(x: Tensor, /, *, k: builtins.int = 0) -> Tensor:
    """The lower triangle of the last two axes (diagonal ``k`` and below)."""
    return ow.tril(x, k)


def triu(x: Tensor, /, *, k: builtins.int = 0) -> Tensor:
    """The upper triangle of the last two axes (diagonal ``k`` and above)."""
    return ow.triu(x, k)


def from_dlpack(x, /, *, device=None, copy: builtins.bool | None = None) -> Tensor:
    """An array sharing ``x``'s memory through DLPack (a copy when ``copy=True`` or another device is asked)."""
    out = ow.from_dlpack(x)
    if device is not None and as_device(device) != out.device:
        if copy is False:
            raise ValueError("from_dlpack(copy=False): the array is on another device")
        return out.to(device=device)
    return out.clone() if copy else out
