"""The Tensor: a strided view of a backend-owned storage.

A Tensor holds metadata only — shape, strides in elements, storage offset,
dtype, device, dispatch key set — plus a reference to a :class:`Storage`
(bytes owned by a backend's allocator). Views share the storage. ``_native``
caches the backend's handle for this exact view (a NumPy array on the CPU);
anything that changes the metadata in place clears it.

Operators and methods are attached in ``_methods`` once the catalog exists.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import TYPE_CHECKING

from . import _dtype, _hooks, _keys
from ._device import device as _device_cls
from ._unbound import TensorType

if TYPE_CHECKING:
    import numpy as np

    from ._backends import Backend


class Storage:
    """Bytes on a device, owned by a backend.

    ``handle`` is whatever the backend keeps (a NumPy byte array, a cl.Buffer,
    a device pointer, None on meta); ``nbytes`` its size; ``device`` its device.
    """

    __slots__ = ("handle", "nbytes", "device", "backend", "version", "__weakref__")

    def __init__(self, handle: object, nbytes: int, device: _device_cls, backend: Backend) -> None:
        self.version = 0  # bumped by every in-place write (autograd's saved-tensor check)
        self.handle = handle
        self.nbytes = nbytes
        self.device = device
        self.backend = backend
        if _hooks.observers:  # allocation observers (the profiler's memory recording)
            _hooks.notify(self)

    def data_ptr(self) -> int:
        """The address of the first byte, as the backend reports it."""
        return self.backend.data_ptr(self)

    def __repr__(self):
        return f"<Storage {self.nbytes} bytes on {self.device}>"


class Size(tuple):
    """A tensor shape: a tuple of ints that prints as ``opweave.Size([2, 3])``."""

    __slots__ = ()

    def __repr__(self):
        return f"opweave.Size({list(self)})"

    def numel(self) -> int:
        """Product of the sizes."""
        n = 1
        for s in self:
            n *= s
        return n


def contiguous_strides(shape: Sequence[int]) -> tuple[int, ...]:
    """Row-major strides in elements for ``shape`` (size-0 and size-1 dims get stride as if size 1)."""
    strides, acc = [], 1
    for size in reversed(shape):
        strides.append(acc)
        acc *= max(size, 1)
    return tuple(reversed(strides))


class Tensor(metaclass=TensorType):
    """A multi-dimensional array on some device. See the module docstring."""

    __slots__ = (
        "_st",  # the Storage, or None until first asked for (see ``_storage``)
        "_shape",
        "_stride",
        "_offset",
        "_dtype",
        "_device",
        "_keys",
        "_native",
        "_wrapped_number",
        "_qparams",
        "_base",  # the tensor a view was made from (None: not a view); autograd rewrites its history
        "_ag",  # autograd metadata (opweave.autograd), None for tensors that never required grad
        "__weakref__",
    )

    __array_priority__ = 1000  # NumPy defers binary operators to us

    def __init__(self, *args: object, **kwargs: object) -> None:
        raise TypeError("use opweave.tensor(...), opweave.empty(...) or another factory to make a Tensor")

    # -- construction -------------------------------------------------------

    @classmethod
    def _make(cls, storage, shape, stride, offset, dtype, device, keys=None, native=None):
        """Create a Tensor over ``storage`` (no copy, no checks)."""
        if device.index is None and device.type not in _UNINDEXED:
            device = _indexed(device)
        t = object.__new__(cls)
        t._st = storage
        t._shape = shape if type(shape) is Size else Size(shape)
        t._stride = stride
        t._offset = offset
        t._dtype = dtype
        t._device = device
        t._keys = keys if keys is not None else _keys_for(device)
        t._native = native
        t._wrapped_number = False
        t._qparams = None
        t._ag = None
        t._base = None
        return t

    @property
    def _storage(self) -> Storage:
        """The storage; a backend may create it lazily from ``_native`` (``Backend.storage_for``)."""
        st = self._st
        if st is None:
            with _hooks.lazy_storage():  # not a new allocation: the memory exists already
                st = self._st = _hooks.backend_for(self._device.type).storage_for(self)
        return st

    @_storage.setter
    def _storage(self, value) -> None:
        self._st = value

    # -- metadata -----------------------------------------------------------

    @property
    def shape(self) -> Size:
        """The size of each dimension."""
        return self._shape

    def size(self, dim: int | None = None) -> Size | int:
        """The shape, or the size of one dimension."""
        if dim is None:
            return self._shape
        return self._shape[_wrap_dim(dim, len(self._shape), "size")]

    def stride(self, dim: int | None = None) -> tuple[int, ...] | int:
        """Strides in elements, or the stride of one dimension."""
        if self._stride is None:
            self._stride = self._storage.backend.strides_of(self)
        if dim is None:
            return self._stride
        return self._stride[_wrap_dim(dim, len(self._shape), "stride")]

    def storage_offset(self) -> int:
        """Offset of the first element in the storage, in elements."""
        return self._offset

    @property
    def dtype(self) -> _dtype.dtype:
        """The element type."""
        return self._dtype

    @property
    def device(self) -> _device_cls:
        """The device holding the storage."""
        return self._device

    @property
    def ndim(self) -> int:
        """Number of dimensions."""
        return len(self._shape)

    def dim(self) -> int:
        """Number of dimensions."""
        return len(self._shape)

    def numel(self) -> int:
        """Number of elements."""
        return self._shape.numel()

    nelement = numel

    def element_size(self) -> int:
        """Bytes per element."""
        return self._dtype.itemsize

    @property
    def itemsize(self) -> int:
        """Bytes per element."""
        return self._dtype.itemsize

    @property
    def nbytes(self) -> int:
        """Bytes spanned by the elements (numel × itemsize)."""
        return self.numel() * self._dtype.itemsize

    def untyped_storage(self) -> Storage:
        """The storage this tensor views."""
        return self._storage

    def data_ptr(self) -> int:
        """Address of the first element."""
        return self._storage.data_ptr() + self._offset * self._dtype.itemsize

    def is_contiguous(self, memory_format: object = None) -> bool:
        """Whether the elements are laid out row-major without gaps."""
        return _is_contiguous(self._shape, self.stride())

    def is_floating_point(self) -> bool:
        """Whether the dtype is a floating type."""
        return self._dtype.is_floating_point

    def is_complex(self) -> bool:
        """Whether the dtype is complex."""
        return self._dtype.is_complex

    @property
    def is_meta(self) -> bool:
        """Whether the tensor lives on the meta device (no data)."""
        return self._device.type == "meta"

    @property
    def is_cpu(self) -> bool:
        """Whether the tensor lives on the CPU."""
        return self._device.type == "cpu"

    @property
    def is_quantized(self) -> bool:
        """Whether the dtype is quantized."""
        return self._qparams is not None

    def get_device(self) -> int:
        """Device index (-1 on the CPU)."""
        return -1 if self._device.type == "cpu" else (self._device.index or 0)

    def _set_metadata(self, storage, shape, stride, offset):
        """Change this tensor's view in place (resize_, set_)."""
        recorder = _hooks.trace.recorder
        if recorder is not None and not recorder.in_leaf:
            recorder.fail("the decomposition changes a tensor's metadata")
        self._storage = storage
        self._shape = Size(shape)
        self._stride = tuple(stride)
        self._offset = offset
        self._native = None

    def __reduce_ex__(self, protocol):
        return (_hooks.tensor_rebuilder(), (self.cpu().numpy().copy(), self._dtype.name, str(self._device)))


def _is_contiguous(shape, stride) -> bool:
    if 0 in shape:
        return True
    expected = 1
    for size, st in zip(reversed(shape), reversed(stride)):
        if size == 0:
            return True
        if size != 1 and st != expected:
            return False
        expected *= size
    return True


def _wrap_dim(dim, ndim: int, op: str) -> int:
    if isinstance(dim, bool) or not isinstance(dim, numbers.Integral):
        raise TypeError(f"{op}(): argument 'dim' must be int, not {type(dim).__name__}")
    lo, hi = (-ndim, ndim - 1) if ndim else (-1, 0)
    if not lo <= dim <= hi:
        raise IndexError(f"{op}(): dimension out of range (expected to be in range of [{lo}, {hi}], but got {dim})")
    return dim + ndim if dim < 0 else dim


_UNINDEXED = frozenset({"cpu", "meta"})
_indexed_devices: dict = {}


def _indexed(device):
    """``opencl`` → ``opencl:0``: tensors on indexed device types always carry an index."""
    found = _indexed_devices.get(device.type)
    if found is None:
        found = _indexed_devices[device.type] = _device_cls(device.type, 0)
    return found


_keys_by_device: dict = {}


def _keys_for(device) -> int:
    keys = _keys_by_device.get(device.type)
    if keys is None:
        keys = _keys.layer_bit(_keys.Layer.Dense) | _keys.backend_bit(device.type)
        _keys_by_device[device.type] = keys
    return keys


_CPU = _device_cls("cpu")


def wrap_scalar(value: complex | np.generic, dtype: _dtype.dtype | None = None) -> Tensor:
    """A Python or NumPy scalar as a 0-dim CPU tensor that promotes like a Python scalar.

    The value is held by the core as a 0-dim NumPy array (the host format of the
    ``cpu`` device type: ``_native`` is its NumPy view), so wrapping a scalar needs
    no plugin: ``meta_tensor + 1`` works with no backend loaded. Its Storage is made
    by the CPU backend only if someone asks for it. ``dtype``: convert to it (the
    tensor is then an ordinary 0-dim CPU tensor, no longer a wrapped number).
    """
    import numpy as np

    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, bool):
        dt = _dtype.bool_
    elif isinstance(value, numbers.Integral):
        dt = _dtype.int64
    elif isinstance(value, numbers.Real):
        dt = _dtype.float64
    elif isinstance(value, numbers.Complex):
        dt = _dtype.complex128
    else:
        raise TypeError(f"cannot wrap {type(value).__name__} as a scalar")
    array = np.asarray(value, dtype=dt.numpy)
    if dtype is not None:
        with np.errstate(invalid="ignore", over="ignore"):  # as prims::convert_element_type: C casts
            array = (array.real if dt.is_complex and not dtype.is_complex else array).astype(dtype.numpy)
    t = Tensor._make(None, (), (), 0, dtype or dt, _CPU, native=array)
    t._wrapped_number = dtype is None
    return t


def is_host_value(t: Tensor) -> bool:
    """Whether ``t`` is a CPU tensor whose elements are the NumPy array ``t._native``, with no Storage made yet.

    Wrapped scalars (:func:`wrap_scalar`) and data on its way to a device are such values: reading
    them needs no CPU backend.
    """
    return t._st is None and t._device.type == "cpu" and t._native is not None
