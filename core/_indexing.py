"""Tensor indexing: ``t[idx]`` and ``t[idx] = value`` with NumPy/PyTorch semantics.

Basic indexing (ints, slices with positive steps, ``None``, ``...``, Python
bools) returns a view: one ``prims.as_strided`` over the same storage, whose
size, strides and offset are computed here. Advanced indexing (integer
tensors, lists and arrays of ints, boolean masks) applies the basic part
first and then ``prims.index``; masks become integer indices through
``prims.nonzero``. In an advanced context plain ints count as 0-dim index
tensors and an ``...`` separates the indices around it, as in NumPy, so the
broadcast index dims go in place when the advanced indices are adjacent and
first otherwise.

Assignment takes the same path: basic → ``prims.copy_to`` into the view;
advanced → ``prims.index_put`` on the view, copied back into it, so the
tensor keeps its identity and storage. The value is converted and checked
before anything is written.
"""

from __future__ import annotations

import math
import numbers
import operator
import warnings

import numpy as np

from . import _dtype, _fastpaths
from ._ops import prims
from ._tensor import Tensor

_INT, _SLICE, _NONE, _ELLIPSIS, _BOOL, _TENSOR, _MASK = range(7)


class _Overloads:
    """``_P.as_strided``: the prim's default overload, looked up once (skips the packet's overload choice)."""

    def __getattr__(self, name):
        op = getattr(prims, name).default
        setattr(self, name, op)
        return op


_P = _Overloads()
_INDEX_DTYPES = (_dtype.int64, _dtype.int32)


# -- entry points ---------------------------------------------------------------


def __getitem__(self, idx):
    """``t[idx]``: a view for basic indices, a new tensor for advanced ones (see the module docstring)."""
    if type(idx) is int and self._qparams is None and self._ag is None:  # fast path: t[i] -> one strided view
        shape = self._shape
        if shape:
            n = shape[0]
            if -n <= idx < n:
                stride = self._stride if self._stride is not None else self.stride()
                if idx < 0:
                    idx += n
                view = Tensor._make(
                    self._storage,
                    shape[1:],
                    stride[1:],
                    self._offset + idx * stride[0],
                    self._dtype,
                    self._device,
                    self._keys,
                )
                view._base = self if self._base is None else self._base
                return view
    direct = _fastpaths.getitem(self, idx)
    if direct is not None:
        return direct
    view, entries, front = _apply(self, idx)
    if entries is None:
        return view
    return _advanced_get(view, entries, front)


def __setitem__(self, idx, value):
    """``t[idx] = value``: writes in place, broadcasting ``value`` and casting it to ``t``'s dtype."""
    view, entries, front = _apply(self, idx)
    src = _value_tensor(self, value)
    if entries is None:
        src = _broadcast_value(src, view.shape)
        if src._storage is self._storage:  # t[1:] = t[:-1]: read everything before writing
            src = _P.clone(src)
        _P.copy_to(view, src)
        return
    entries = _prepare_entries(entries, view.device)
    shape = _indexed_shape(view.shape, entries, front)
    src = _broadcast_value(src, shape)
    if front:
        src = _P.transpose(src, _front_permutation(entries, src.ndim, to_front=False))
    try:
        result = _P.index_put(view, entries, src, False)
    except ValueError as exc:
        raise IndexError(str(exc)) from None
    _P.copy_to(view, result)


# -- parsing --------------------------------------------------------------------


def _parse(idx) -> list:
    """The index as a list of ``(kind, value)`` items."""
    items = idx if isinstance(idx, tuple) else (idx,)
    return list(map(_parse_item, items))


def _parse_item(item):
    if item is None:
        return _NONE, None
    if item is Ellipsis:
        return _ELLIPSIS, None
    if isinstance(item, slice):
        return _SLICE, item
    if isinstance(item, Tensor):
        return _parse_tensor(item)
    if isinstance(item, (bool, np.bool_)):
        return _BOOL, bool(item)
    if isinstance(item, (np.ndarray, list, tuple)):
        return _parse_array(item)
    try:
        return _INT, operator.index(item)
    except TypeError:
        pass
    raise IndexError(
        "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are valid indices "
        f"(got {type(item).__name__})"
    )


def _parse_tensor(t: Tensor):
    if t.dtype is _dtype.bool_:
        return _MASK, t
    if t.dtype is _dtype.uint8:
        warnings.warn(
            "indexing with dtype opweave.uint8 is now deprecated, please use a dtype opweave.bool instead.",
            UserWarning,
            stacklevel=6,  # out of _parse_tensor, _parse_item, _parse, _apply, __getitem__: the caller
        )
        return _MASK, _P.convert_element_type(t, _dtype.bool_)
    if t.dtype in _INDEX_DTYPES:
        return _TENSOR, t
    raise IndexError(f"tensors used as indices must be long, int, byte or bool tensors, got {t.dtype.name}")


def _parse_array(data):
    """A list, tuple or NumPy array used as an index: an int64 index or a bool mask (CPU tensors)."""
    from ._factories import _contains_tensors, _tensors_to_lists, tensor

    if isinstance(data, (list, tuple)) and _contains_tensors(data):
        data = _tensors_to_lists(data)
    try:
        array = np.asarray(data)
    except ValueError as exc:
        raise IndexError(f"index is ragged or malformed: {exc}") from None
    if array.dtype == np.bool_:
        return _MASK, tensor(array, dtype=_dtype.bool_)
    if array.dtype.kind in "iu" or array.size == 0:
        return _TENSOR, tensor(array.astype(np.int64), dtype=_dtype.int64)
    raise IndexError(f"arrays used as indices must be of integer or boolean type, got {array.dtype}")


# -- basic part -----------------------------------------------------------------


def _consumed(kind, value) -> int:
    if kind in (_INT, _SLICE, _TENSOR):
        return 1
    if kind == _MASK:
        return value.ndim
    return 0


def _apply(self: Tensor, idx):
    """Apply the basic part of ``idx``: ``(view, entries, front)``.

    ``entries`` is None for a purely basic index, else one entry per leading dim
    of ``view`` (an integer index tensor or None); ``front`` says the broadcast
    dims must go first although the entries are adjacent (an ``...`` of zero dims
    separates them, as in NumPy).
    """
    items = _parse(idx)
    ndim = self.ndim
    if sum(1 for kind, _ in items if kind == _ELLIPSIS) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    used = sum(_consumed(kind, value) for kind, value in items)
    if used > ndim:
        if ndim == 0 and any(kind == _INT for kind, _ in items):
            raise IndexError(
                "invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` in C++ "
                "to convert a 0-dim tensor to a number"
            )
        raise IndexError(f"too many indices for tensor of dimension {ndim}")
    advanced = any(kind in (_TENSOR, _MASK) for kind, _ in items)
    shape, stride = list(self.shape), list(self.stride())
    offset, dim, src_dim = self._offset, 0, 0
    entries, separators, changed = [], [], False
    for kind, value in items:
        if kind == _INT:
            size = shape[dim]
            if not -size <= value < size:
                raise IndexError(f"index {value} is out of bounds for dimension {src_dim} with size {size}")
            value += size if value < 0 else 0
            if advanced:
                entries.append(value)
                dim += 1
            else:
                offset += value * stride[dim]
                del shape[dim], stride[dim]
                changed = True
            src_dim += 1
        elif kind == _SLICE:
            start, length, step = _slice_bounds(value, shape[dim])
            if (start, length, step) != (0, shape[dim], 1):
                offset += start * stride[dim] if length else 0
                shape[dim], stride[dim] = length, stride[dim] * step
                changed = True
            entries.append(None)
            dim += 1
            src_dim += 1
        elif kind in (_NONE, _BOOL):
            size = 0 if value is False else 1
            shape.insert(dim, size)
            stride.insert(dim, stride[dim] * shape[dim + 1] if dim < len(stride) else 1)
            entries.append(None)
            dim += 1
            changed = True
        elif kind == _ELLIPSIS:
            width = ndim - used
            if width == 0:
                separators.append(len(entries))
            entries.extend([None] * width)
            dim += width
            src_dim += width
        elif kind == _TENSOR:
            entries.append(value)
            dim += 1
            src_dim += 1
        else:  # mask
            if value.ndim == 0:
                shape.insert(dim, 1)
                stride.insert(dim, 1)
                value = _P.expand_dims(value, [0])
                changed = True
            else:
                src_dim += value.ndim
            _check_mask(value, shape, dim, len(entries))
            entries.extend(_mask_indices(value))
            dim += value.ndim
    view = _P.as_strided(self, shape, stride, offset) if changed or not advanced else self
    if not advanced:
        return view, None, False
    entries = [_int_entry(e, self.device) if isinstance(e, int) else e for e in entries]
    return view, entries, _separated_by_ellipsis(entries, separators)


def _slice_bounds(s: slice, size: int):
    """``(start, length, step)`` of a slice of a dim of ``size`` (positive steps only, as torch)."""
    step = 1 if s.step is None else operator.index(s.step)
    if step == 0:
        raise ValueError("slice step cannot be zero")
    if step < 0:
        raise ValueError("step must be greater than zero")
    start, stop, step = s.indices(size)
    length = max(0, -(-(stop - start) // step))
    return (start if length else 0), length, step


def _check_mask(mask: Tensor, shape, dim: int, position: int) -> None:
    """IndexError unless the mask's shape equals the dims it indexes."""
    for j, size in enumerate(mask.shape):
        if dim + j >= len(shape) or shape[dim + j] != size:
            raise IndexError(
                f"The shape of the mask {list(mask.shape)} at index {j} does not match the shape of the "
                f"indexed tensor {shape} at index {position + j}"
            )


def _mask_indices(mask: Tensor) -> list:
    """The integer index tensors (one per mask dim) selecting the True elements of ``mask``."""
    found = _P.nonzero(mask)  # [n, mask.ndim]
    return [_P.squeeze(_P.slice_in_dim(found, j, j + 1, 1, 1), [1]) for j in range(mask.ndim)]


def _int_entry(value: int, device) -> Tensor:
    return _P.scalar_tensor(value, dtype=_dtype.int64, device=device)


def _separated_by_ellipsis(entries, separators) -> bool:
    """Whether a zero-width ``...`` lies between otherwise adjacent advanced entries.

    NumPy then puts the broadcast dims first, while ``prims.index`` (which sees
    adjacent entries) keeps them in place.
    """
    positions = [i for i, e in enumerate(entries) if e is not None]
    contiguous = positions == list(range(positions[0], positions[-1] + 1))
    return contiguous and any(positions[0] < s <= positions[-1] for s in separators)


# -- advanced part --------------------------------------------------------------


def _prepare_entries(entries, device) -> list:
    """Drop trailing Nones and move index tensors to ``device``."""
    entries = list(entries)
    while entries and entries[-1] is None:
        entries.pop()
    return [e if e is None or e.device == device else _P.device_put(e, device) for e in entries]


def _advanced_get(view: Tensor, entries, front: bool) -> Tensor:
    entries = _prepare_entries(entries, view.device)
    try:
        out = _P.index(view, entries)
    except ValueError as exc:
        raise IndexError(str(exc)) from None
    if front:
        out = _P.transpose(out, _front_permutation(entries, out.ndim, to_front=True))
    return out


def _broadcast_index_shape(entries) -> list:
    shapes = [tuple(e.shape) for e in entries if e is not None]
    ndim = max(len(s) for s in shapes)
    out = [1] * ndim
    for shape in shapes:
        for i, size in enumerate(shape, ndim - len(shape)):
            if size != out[i] and size != 1:
                if out[i] != 1:
                    found = ", ".join(str(list(s)) for s in shapes)
                    raise IndexError(
                        f"shape mismatch: indexing tensors could not be broadcast together with shapes {found}"
                    )
                out[i] = size
    return out


def _indexed_shape(shape, entries, front: bool) -> list:
    """The shape of ``view[entries]`` under NumPy's placement rule."""
    positions = [i for i, e in enumerate(entries) if e is not None]
    broadcast = _broadcast_index_shape(entries)
    rest = [s for i, s in enumerate(shape) if i not in positions]
    adjacent = positions == list(range(positions[0], positions[-1] + 1)) and not front
    if adjacent:
        return rest[: positions[0]] + broadcast + rest[positions[0] :]
    return broadcast + rest


def _front_permutation(entries, ndim: int, to_front: bool) -> list:
    """Move the broadcast index dims between in-place and first (see ``_separated_by_ellipsis``)."""
    first = next(i for i, e in enumerate(entries) if e is not None)
    nb = max(e.ndim for e in entries if e is not None)
    if to_front:
        return list(range(first, first + nb)) + list(range(first)) + list(range(first + nb, ndim))
    return list(range(nb, nb + first)) + list(range(nb)) + list(range(nb + first, ndim))


# -- values for assignment ------------------------------------------------------


def _value_tensor(self: Tensor, value) -> Tensor:
    """``value`` as a tensor of ``self``'s dtype on ``self``'s device (CPU 0-dim tensors move)."""
    if isinstance(value, Tensor):
        v = value
        if v.device != self.device:
            if v.ndim or v.device.type != "cpu":
                raise RuntimeError(
                    f"__setitem__: expected the value on {self.device} (or a CPU 0-dim tensor), got {v.device}"
                )
            v = _P.device_put(v, self.device)
        if v.dtype is not self.dtype:
            if v.dtype.is_complex and not self.dtype.is_complex:
                warnings.warn("Casting complex values to real discards the imaginary part", UserWarning, stacklevel=3)
            v = _P.convert_element_type(v, self.dtype)
        return v
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, numbers.Number):
        return _P.scalar_tensor(_checked_scalar(value, self.dtype), dtype=self.dtype, device=self.device)
    if isinstance(value, (list, tuple, np.ndarray)):
        from ._factories import tensor

        return _value_tensor(self, tensor(value))
    raise TypeError(f"__setitem__: can't assign a {type(value).__name__} to a tensor")


def _checked_scalar(value, dtype):
    """A Python scalar checked against ``dtype`` the way PyTorch's fill does (no silent overflow)."""
    if dtype is _dtype.bool_:
        return bool(value)
    if isinstance(value, complex) and not dtype.is_complex:
        if value.imag:
            raise TypeError(f"__setitem__: a complex value cannot be converted to {dtype.name}")
        value = value.real
    overflow = ValueError(f"__setitem__: value {value} cannot be converted to type {dtype.name} without overflow")
    if dtype.kind in ("int", "uint"):
        info = _dtype.iinfo(dtype)
        if isinstance(value, float) and not math.isfinite(value) or not info.min <= int(value) <= info.max:
            raise overflow
        return int(value)
    try:
        real = float(value.real)
    except OverflowError:
        raise overflow from None
    if dtype is _dtype.float32 and math.isfinite(real) and abs(real) > float(_dtype.finfo(dtype).max):
        raise overflow
    return value


def _broadcast_value(src: Tensor, shape) -> Tensor:
    """``src`` broadcast to ``shape`` (leading size-1 dims of ``src`` beyond ``shape`` dropped, as torch)."""
    shape = list(shape)
    if list(src.shape) == shape:
        return src
    lead = 0
    while src.ndim - lead > len(shape) and src.shape[lead] == 1:
        lead += 1
    if lead:
        src = _P.squeeze(src, list(range(lead)))
    offset = len(shape) - src.ndim
    if offset < 0 or any(s != 1 and s != shape[offset + i] for i, s in enumerate(src.shape)):
        raise ValueError(
            f"shape mismatch: value tensor of shape {list(src.shape)} cannot be broadcast to indexing result "
            f"of shape {shape}"
        )
    return _P.broadcast_in_dim(src, shape, list(range(offset, len(shape))))
