"""Data conversion and movement prims: casts, copies, device transfer, resize, item.

``device_put``, ``item``, ``resize`` and the dtype limits are written once in the
core over the backend interface (``copy_to_host`` / ``from_host`` / ``allocate``);
casts and copies are backend kernels.
"""

from __future__ import annotations

from .. import _backends, _dtype, _pinned
from .._device import with_index
from .._meta import empty as meta_empty
from .._ops import define_prim
from .._tensor import contiguous_strides, is_host_value
from ..library import core_library
from ._utils import check_shape, check_tensor, dense_strides_like, same_device


def convert_element_type_meta(a, dtype):
    """Cast ``a`` to ``dtype`` (elementwise; layout follows ``a``)."""
    check_tensor("prims::convert_element_type", "a", a)
    return meta_empty(a.shape, dtype, dense_strides_like(a))


def device_put(a, device, non_blocking=False):
    """Copy ``a`` to ``device`` (a new tensor even when the device is the same)."""
    check_tensor("prims::device_put", "a", a)
    if device.type == "meta":
        return meta_empty(a.shape, a.dtype)
    if a.device.type == "meta":
        raise RuntimeError("prims::device_put: cannot copy a meta tensor (it has no data) to " + str(device))
    target = _backends.check_device(device)
    if non_blocking and device.type == "cpu" and not is_host_value(a):  # into pinned memory, where supported
        queued = _backends.get(a.device.type).to_host_async(a)
        if queued is not None:
            return queued
    if is_host_value(a):  # values the core holds on the host: no CPU backend needed
        host = a._native
    else:
        source = _backends.get(a.device.type)
        host = source.host_view(a)  # host memory needs no copy here: from_host copies
        if host is None:
            host = source.copy_to_host(a)
    dev = with_index(device)
    if non_blocking and a.device.type == "cpu" and _pinned.is_pinned(a):
        return target.from_host_async(host, dev)
    return target.from_host(host, dev)


def clone_meta(a, memory_format=None):
    """A copy of ``a`` with the same layout when dense, else contiguous."""
    check_tensor("prims::clone", "a", a)
    if memory_format == "contiguous_format":
        return meta_empty(a.shape, a.dtype)
    return meta_empty(a.shape, a.dtype, dense_strides_like(a))


def copy_to_meta(a, b):
    """Write ``b`` (same shape; any dtype, converted) into ``a``; returns ``a``."""
    op = "prims::copy_to"
    check_tensor(op, "a", a)
    check_tensor(op, "b", b)
    if a.shape != b.shape:
        raise ValueError(f"{op}: 'a' has shape {list(a.shape)} but 'b' has {list(b.shape)}")
    same_device(op, [a, b])
    return a


def copy_strided_meta(a, stride):
    """A copy of ``a`` laid out with ``stride``."""
    op = "prims::copy_strided"
    check_tensor(op, "a", a)
    if len(stride) != a.ndim:
        raise ValueError(f"{op}: 'stride' needs {a.ndim} entries, got {list(stride)}")
    return meta_empty(a.shape, a.dtype, stride)


def resize(a, shape):
    """Resize ``a`` in place to a contiguous ``shape``, keeping its data; storage grows if needed."""
    op = "prims::resize"
    check_tensor(op, "a", a)
    shape = check_shape(op, "shape", shape)
    stride = contiguous_strides(shape)
    numel = 1
    for s in shape:
        numel *= s
    needed = (a._offset + numel) * a.dtype.itemsize
    storage = a._storage
    if needed > storage.nbytes:
        backend = _backends.get(a.device.type)
        storage = backend.allocate(needed, a.device)
        if a._storage.nbytes and a.device.type != "meta":
            old = backend.copy_to_host(_whole_storage(a))
            fresh = _whole_storage_of(storage, a)
            _copy_host_bytes(fresh, old)
    a._set_metadata(storage, shape, stride, a._offset)
    return a


def _whole_storage(a):
    from .._tensor import Tensor

    n = a._storage.nbytes
    return Tensor._make(a._storage, (n,), (1,), 0, _dtype.uint8, a.device, a._keys)


def _whole_storage_of(storage, like):
    from .._tensor import Tensor

    return Tensor._make(storage, (storage.nbytes,), (1,), 0, _dtype.uint8, like.device, like._keys)


def _copy_host_bytes(dst, host_bytes):
    from .. import ops

    src = _backends.get(dst.device.type).from_host(host_bytes, dst.device)
    head = ops.prims.slice_in_dim(dst, 0, host_bytes.shape[0])
    ops.prims.copy_to(head, src)


def item(a):
    """The value of a one-element tensor as a Python scalar."""
    op = "prims::item"
    check_tensor(op, "a", a)
    if a.numel() != 1:
        raise ValueError(f"{op}: a tensor with {a.numel()} elements cannot be converted to a scalar")
    if a.device.type == "meta":
        raise NotImplementedError(f"{op}: cannot run on the meta device: its output depends on the data")
    value = _backends.get(a.device.type).copy_to_host(a).reshape(()).item()
    if a.dtype.is_float8 or a.dtype is _dtype.bfloat16:
        value = float(value)
    return value


def maximum_value(dtype):
    """The largest finite value of ``dtype`` (True for bool)."""
    return _limit(dtype, True)


def minimum_value(dtype):
    """The smallest finite value of ``dtype`` (False for bool)."""
    return _limit(dtype, False)


def _limit(dtype, high):
    if dtype is _dtype.bool_:
        return high
    if dtype.is_complex:
        raise TypeError(f"prims::{'maximum' if high else 'minimum'}_value: complex dtypes are not ordered")
    info = _dtype.iinfo(dtype) if dtype.kind in ("int", "uint") else _dtype.finfo(dtype)
    return (info.max if high else info.min) if dtype.kind in ("int", "uint") else float(info.max if high else info.min)


def _define():
    define_prim("convert_element_type(Tensor a, ScalarType dtype) -> Tensor", convert_element_type_meta)
    put = define_prim("device_put(Tensor a, Device device, bool non_blocking=False) -> Tensor", device_put)
    core_library("core").impl(put, device_put, "CompositeExplicit")
    define_prim("clone(Tensor a, *, MemoryFormat? memory_format=None) -> Tensor", clone_meta)
    define_prim("copy_to(Tensor(a!) a, Tensor b) -> Tensor(a!)", copy_to_meta, tags=("inplace",))
    define_prim("copy_strided(Tensor a, SymInt[] stride) -> Tensor", copy_strided_meta)
    rs = define_prim("resize(Tensor(a!) a, SymInt[] shape) -> Tensor(a!)", resize, tags=("inplace",))
    core_library("core").impl(rs, resize, "CompositeExplicit")
    it = define_prim("item(Tensor a) -> Scalar", item, tags=("data_dependent_output",))
    core_library("core").impl(it, item, "CompositeExplicit")
    for name, fn in (("maximum_value", maximum_value), ("minimum_value", minimum_value)):
        op = define_prim(f"{name}(ScalarType dtype) -> Scalar", fn)
        core_library("core").impl(op, fn, "CompositeExplicit")


_define()
