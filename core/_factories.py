"""Tensors from Python data, NumPy arrays and DLPack producers."""

from __future__ import annotations

import builtins
import numbers

import numpy as np

from . import _backends, _dtype, _hooks, _meta
from ._device import as_device, get_default_device
from ._device import device as _device_cls
from ._tensor import Storage, Tensor, contiguous_strides

_CPU_TYPE = "cpu"


def _infer_dtype(array: np.ndarray):
    """PyTorch's inference for Python data: ints int64, floats the default dtype, complex its pair."""
    kind = array.dtype.kind
    if kind == "b":
        return _dtype.bool_
    if kind in "iu":
        return _dtype.int64
    if kind == "f":
        return _dtype.get_default_dtype()
    if kind == "c":
        return _dtype.default_complex_dtype()
    raise TypeError(f"tensor(): cannot make a tensor from data of type {array.dtype}")


def _to_numpy(data, op: str) -> tuple[np.ndarray, object]:
    """Data as a NumPy array plus the dtype inferred for it (None: keep the array's own)."""
    if isinstance(data, Tensor):
        return _backends.get(data.device.type).copy_to_host(data), data.dtype
    if isinstance(data, np.ndarray):
        return data, _dtype.from_numpy(data.dtype)
    if isinstance(data, np.generic):
        return np.asarray(data), _dtype.from_numpy(data.dtype)
    if isinstance(data, (str, bytes)) or data is None:
        raise TypeError(f"{op}(): cannot make a tensor from {type(data).__name__}")
    if isinstance(data, (list, tuple)) and _contains_tensors(data):
        data = _tensors_to_lists(data)
    try:
        array = np.asarray(data)
    except ValueError as exc:
        raise ValueError(f"{op}(): data is ragged or malformed: {exc}") from None
    if array.dtype == object:
        raise TypeError(f"{op}(): could not infer a dtype for data of type {type(data).__name__}")
    return array, _infer_dtype(array)


def _contains_tensors(seq) -> bool:
    return any(isinstance(x, Tensor) or (isinstance(x, (list, tuple)) and _contains_tensors(x)) for x in seq)


def _tensors_to_lists(seq):
    return [
        x.tolist() if isinstance(x, Tensor) else _tensors_to_lists(x) if isinstance(x, (list, tuple)) else x
        for x in seq
    ]


def tensor(
    data: object,
    *,
    dtype: _dtype.dtype | None = None,
    device: _device_cls | str | int | None = None,
    requires_grad: bool = False,
    pin_memory: bool = False,
) -> Tensor:
    """A new tensor holding a copy of ``data`` (nested sequences, scalars, arrays, tensors).

    ``requires_grad=True`` makes the result a leaf that records gradients; ``pin_memory=True`` puts a CPU
    result in pinned host memory (``Tensor.pin_memory()``).
    """
    array, inferred = _to_numpy(data, "tensor")
    target = dtype or inferred
    if not isinstance(target, _dtype.dtype):
        raise TypeError(f"tensor(): argument 'dtype' must be opweave.dtype, not {type(target).__name__}")
    dev = as_device(device) or (data.device if isinstance(data, Tensor) else get_default_device())
    if array.dtype != target.numpy:
        with np.errstate(invalid="ignore", over="ignore"):
            array = array.astype(target.numpy)
    if dev.type == "meta":  # shape and dtype only: no backend needed
        return _meta.empty(array.shape, target)
    if dev.type == _CPU_TYPE:
        result = _backends.get(_CPU_TYPE).from_host(array, as_device(_CPU_TYPE))
    else:
        from . import ops

        array = np.asarray(array, order="C")  # held by the core on the host, copied once to the device (no CPU plugin)
        strides = contiguous_strides(array.shape)
        host = Tensor._make(None, array.shape, strides, 0, target, as_device(_CPU_TYPE), native=array)
        result = ops.prims.device_put(host, dev)
    if pin_memory:
        from ._pinned import pinned_result

        result = pinned_result("tensor", result)
    return result.requires_grad_(True) if requires_grad else result


def as_tensor(data: object, dtype: _dtype.dtype | None = None, device: _device_cls | str | int | None = None) -> Tensor:
    """Like :func:`tensor` but shares memory when ``data`` already fits (a tensor or a CPU array)."""
    dev = as_device(device)
    if isinstance(data, Tensor):
        out = data
        if dtype is not None and dtype is not data.dtype or dev is not None and dev != data.device:
            out = data.to(device=dev, dtype=dtype)
        return out
    if isinstance(data, np.ndarray) and (dev is None or dev.type == _CPU_TYPE):
        try:
            shared = from_numpy(data)
        except (TypeError, ValueError):
            shared = None
        if shared is not None:
            return shared if dtype is None or dtype is shared.dtype else shared.to(dtype=dtype)
    return tensor(data, dtype=dtype, device=device)


def from_numpy(array: np.ndarray) -> Tensor:
    """A CPU tensor sharing memory with ``array`` (writes are seen by both)."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"from_numpy(): expected numpy.ndarray, got {type(array).__name__}")
    dt = _dtype.from_numpy(array.dtype)
    item = array.itemsize
    if any(s < 0 for s in array.strides):
        raise ValueError("from_numpy(): arrays with negative strides are not supported; copy the array first")
    if any(s % item for s in array.strides):
        raise ValueError("from_numpy(): strides must be multiples of the element size; copy the array first")
    backend = _backends.get(_CPU_TYPE)
    cpu = as_device(_CPU_TYPE)
    if array.size == 0:
        flat = np.empty(0, array.dtype)
        strides = tuple(s // item for s in array.strides)
    elif array.flags.c_contiguous:
        flat = array.reshape(-1)
        strides = tuple(s // item for s in array.strides)
    else:
        span = 1 + builtins.sum((n - 1) * s for n, s in zip(array.shape, array.strides)) // item
        # as_strided rebuilds the array from __array_interface__, which loses ml_dtypes' types: go through void
        raw = array.view(np.dtype((np.void, item)))
        flat = np.lib.stride_tricks.as_strided(raw, shape=(span,), strides=(item,)).view(array.dtype)
        strides = tuple(s // item for s in array.strides)
    storage = Storage(flat, flat.nbytes, cpu, backend)
    return Tensor._make(storage, array.shape, strides, 0, dt, cpu, native=array)


def from_dlpack(obj: object) -> Tensor:
    """A tensor sharing memory with a DLPack producer (NumPy arrays, other frameworks' tensors)."""
    if isinstance(obj, Tensor):
        return obj
    if not hasattr(obj, "__dlpack__"):
        raise TypeError(f"from_dlpack(): {type(obj).__name__} does not implement __dlpack__")
    device_type, index = obj.__dlpack_device__()
    if builtins.int(device_type) == 1:
        return from_numpy(np.from_dlpack(obj))
    for attempt in range(2):
        for name in list(_backends._backends):
            backend = _backends.get(name)
            if backend.dlpack_device_type == builtins.int(device_type) and hasattr(backend, "from_dlpack"):
                return backend.from_dlpack(obj, index)
        if attempt == 0:  # the importing backend's plugin may not be loaded yet (plugins load on first use)
            from . import _plugins

            _plugins.load_if_autoload()
    raise BufferError(f"from_dlpack(): no loaded backend imports DLPack device type {device_type}")


def _rebuild_tensor(array, dtype_name, device):
    """Unpickle a tensor (see ``Tensor.__reduce_ex__``)."""
    t = tensor(array, dtype=getattr(_dtype, dtype_name))
    return t if device == _CPU_TYPE else t.to(device=device)


_hooks.provide_tensor_rebuilder(_rebuild_tensor)


def is_scalar(value) -> bool:
    """Whether ``value`` is a Python or NumPy number (not a tensor)."""
    return isinstance(value, (numbers.Number, np.generic)) and not isinstance(value, np.ndarray)
