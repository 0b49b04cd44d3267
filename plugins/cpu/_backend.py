"""The CPU device: storage is a C-contiguous NumPy buffer, kernels are NumPy/SciPy.

A storage's handle is any C-contiguous ndarray (a fresh kernel result is used
as is); views read it through the buffer protocol with their own strides.
"""

from __future__ import annotations

import numpy as np
import opweave
from opweave.backends import Backend, Storage
from opweave.backends import kernel as K

from .kernels._quiet import quiet

CPU = opweave.device("cpu")


class CPUBackend(Backend):
    """Host memory through NumPy. Also the reference backend of the conformance suite."""

    name = "cpu"
    dlpack_device_type = 1  # kDLCPU
    autocast_dtype = opweave.bfloat16
    host_storage = True  # NumPy buffers: the core's direct view methods serve CPU tensors

    def allocate(self, nbytes: int, device):
        """A new uninitialised byte buffer."""
        return Storage(np.empty(nbytes, np.uint8), nbytes, CPU, self)

    def copy_from_host(self, array: np.ndarray, device):
        """A new storage holding a copy of ``array``'s bytes."""
        flat = np.array(array, copy=True, order="C").reshape(-1)
        return Storage(flat, flat.nbytes, CPU, self)

    def copy_to_host(self, tensor) -> np.ndarray:
        """A C-contiguous copy of the tensor's elements."""
        return np.array(native(tensor), copy=True, order="C")

    def host_view(self, tensor) -> np.ndarray:
        """The tensor's elements as a NumPy view (shares memory)."""
        return native(tensor)

    def data_ptr(self, storage) -> int:
        """Address of the storage's first byte."""
        return storage.handle.__array_interface__["data"][0]

    def storage_for(self, tensor):
        """The storage of a tensor made by ``wrap_same``: the result array's own memory."""
        a = K.cached_native(tensor)
        flat = a if a.flags.c_contiguous else _dense_flat(a)
        if flat is None:  # not dense: the tensor's elements move to a fresh dense array
            a = np.array(a, order="C")
            K.set_cached_native(tensor, a)
            K.drop_strides(tensor)
            flat = a
        return Storage(flat, flat.nbytes, CPU, self)

    def strides_of(self, tensor) -> tuple:
        """Strides (in elements) of a tensor made from a NumPy result (contiguous ones when it is empty)."""
        if 0 in tensor.shape:
            return K.contiguous_strides(tensor.shape)
        item = tensor.dtype.itemsize
        return tuple(s // item for s in native(tensor).strides)

    def from_host(self, array: np.ndarray, device):
        """A CPU tensor holding a copy of ``array``."""
        return wrap(np.array(array, copy=True, order="C"))

    def from_host_result(self, array: np.ndarray, dtype, device):
        """A CPU tensor over ``array`` itself (a fresh result nobody else holds), of ``dtype``."""
        return wrap_same(array, dtype)


BACKEND = CPUBackend()
_cached_native = K.cached_native


def native(t) -> np.ndarray:
    """The NumPy view of a CPU tensor (cached on the tensor)."""
    a = _cached_native(t)
    if a is None:
        a = _materialise(t)
    return a


def _materialise(t) -> np.ndarray:
    dtype = t.dtype
    item = dtype.itemsize
    shape = tuple(t.shape)
    if 0 in shape:
        a = np.empty(shape, dtype.numpy)
    else:
        strides = tuple(s * item for s in t.stride())
        a = np.ndarray(shape, dtype.numpy, K.buffer(t), t.storage_offset() * item, strides)
    K.set_cached_native(t, a)
    return a


def wrap(a, dtype=None):
    """A CPU tensor owning the fresh NumPy result ``a`` (no copy when ``a`` is dense)."""
    if type(a) is not np.ndarray:
        a = np.asarray(a)
    if dtype is None:
        dtype = opweave.dtype_of_numpy(a.dtype)
    elif a.dtype != dtype.numpy:
        a = quiet(a.astype, dtype.numpy)  # a float32 result past float16's range becomes inf, as in PyTorch
    if a.flags.c_contiguous:
        flat = a
    else:
        flat = _dense_flat(a)
        if flat is None:
            a = np.array(a, order="C")
            flat = a.reshape(-1)
    return wrap_same(a, dtype, Storage(flat, flat.nbytes, CPU, BACKEND))


#: ``wrap_same(a, dtype)``: ``wrap`` for a fresh ndarray whose NumPy dtype is already ``dtype``'s (the hot
#: path). The storage is made on first use (``CPUBackend.storage_for``): most results are never asked for it.
wrap_same = K.native_wrapper(CPU)


def _dense_flat(a):
    """A 1-D view of ``a``'s memory if ``a`` is a permuted dense array starting at its first byte."""
    order = sorted(range(a.ndim), key=lambda d: a.strides[d], reverse=True)
    if any(s < 0 for s in a.strides):
        return None
    p = a.transpose(order)
    return p.reshape(-1) if p.flags.c_contiguous else None
