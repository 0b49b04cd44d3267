"""DLPack capsules (the C ABI of ``dlpack.h``, through ctypes): export a device pointer, import another's.

Export builds a ``DLManagedTensor`` (capsule ``"dltensor"``) or, for consumers asking
``max_version >= (1, 0)``, a ``DLManagedTensorVersioned`` (``"dltensor_versioned"``)
whose ``manager_ctx`` keeps the exporting tensor alive until the consumer calls the
deleter (or, for a capsule never consumed, until the capsule is collected). Import reads
either kind, renames the capsule ``"used_..."`` as the protocol requires, and calls the
producer's deleter when the :class:`Imported` owner is released. The functions take plain
pointers and device tuples, so the machinery is the same for CPU memory (how it is tested
without a GPU, against NumPy's DLPack) and CUDA memory.
"""

from __future__ import annotations

import ctypes
import threading

import opweave

K_DL_CPU, K_DL_CUDA = 1, 2
FLAG_READ_ONLY, FLAG_IS_COPIED = 1, 2
VERSION = (1, 0)


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


DELETER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", DELETER)]


class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [
        ("version", DLPackVersion),
        ("manager_ctx", ctypes.c_void_p),
        ("deleter", DELETER),
        ("flags", ctypes.c_uint64),
        ("dl_tensor", DLTensor),
    ]


#: DLPack (type code, bits) of each opweave dtype.
CODES = {
    "bool": (6, 8), "uint8": (1, 8), "int8": (0, 8), "int16": (0, 16), "int32": (0, 32), "int64": (0, 64),
    "float16": (2, 16), "bfloat16": (4, 16), "float32": (2, 32), "float64": (2, 64),
    "complex64": (5, 64), "complex128": (5, 128),
}  # fmt: skip
DTYPES = {code: name for name, code in CODES.items()}

_api = ctypes.pythonapi
_api.PyCapsule_New.restype = ctypes.py_object
_api.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_api.PyCapsule_IsValid.restype = ctypes.c_int
_api.PyCapsule_IsValid.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
_api.PyCapsule_GetPointer.restype = ctypes.c_void_p
_api.PyCapsule_GetPointer.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
_api.PyCapsule_SetName.restype = ctypes.c_int
_api.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]

_lock = threading.RLock()  # a collection inside the locked section may run a deleter
_exported: dict = {}  # address of a managed struct -> what it keeps alive (owner, struct, shape, strides)


@DELETER
def _delete(address):
    with _lock:
        _exported.pop(address, None)


_CAPSULE_DESTRUCTOR = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


@_CAPSULE_DESTRUCTOR
def _capsule_destructor(capsule):
    # A capsule never consumed still holds its tensor: release it (a consumed one was renamed "used_...").
    for name, kind in ((b"dltensor_versioned", DLManagedTensorVersioned), (b"dltensor", DLManagedTensor)):
        if _api.PyCapsule_IsValid(capsule, name):
            address = _api.PyCapsule_GetPointer(capsule, name)
            managed = kind.from_address(address)
            if managed.deleter:
                managed.deleter(address)
            return


def export(owner, data: int, device: tuple[int, int], shape, strides, dtype: str, versioned: bool, flags: int = 0):
    """A DLPack capsule of ``shape``/``strides`` (elements) ``dtype`` elements at ``data`` on ``device``.

    ``owner`` is kept alive until the consumer is done with the memory.
    """
    ndim = len(shape)
    shape_arr = (ctypes.c_int64 * max(ndim, 1))(*shape)
    strides_arr = (ctypes.c_int64 * max(ndim, 1))(*strides)
    code, bits = CODES[dtype]
    managed = DLManagedTensorVersioned() if versioned else DLManagedTensor()
    t = managed.dl_tensor
    t.data = data or None
    t.device = DLDevice(*device)
    t.ndim = ndim
    t.dtype = DLDataType(code, bits, 1)
    t.shape = ctypes.cast(shape_arr, ctypes.POINTER(ctypes.c_int64))
    t.strides = ctypes.cast(strides_arr, ctypes.POINTER(ctypes.c_int64))
    t.byte_offset = 0
    managed.deleter = _delete
    if versioned:
        managed.version = DLPackVersion(*VERSION)
        managed.flags = flags
    address = ctypes.addressof(managed)
    managed.manager_ctx = address
    with _lock:
        _exported[address] = (owner, managed, shape_arr, strides_arr)
    name = b"dltensor_versioned" if versioned else b"dltensor"
    destructor = ctypes.cast(_capsule_destructor, ctypes.c_void_p).value
    return _api.PyCapsule_New(address, name, destructor)


def live_exports() -> int:
    """How many exported capsules still hold their tensor (for tests)."""
    with _lock:
        return len(_exported)


class Imported:
    """A consumed capsule: the memory it describes, and its producer's deleter, called on :meth:`release`."""

    __slots__ = ("data", "device", "shape", "strides", "dtype", "read_only", "_address", "_kind", "_done")

    def __init__(self, capsule):
        kinds = ((b"dltensor_versioned", DLManagedTensorVersioned), (b"dltensor", DLManagedTensor))
        found = [(name, kind) for name, kind in kinds if _api.PyCapsule_IsValid(id(capsule), name)]
        if not found:
            raise BufferError("from_dlpack: the object is not an unconsumed DLPack capsule")
        name, kind = found[0]
        address = _api.PyCapsule_GetPointer(id(capsule), name)
        managed = kind.from_address(address)
        if kind is DLManagedTensorVersioned and managed.version.major > 1:
            raise BufferError(f"from_dlpack: DLPack version {managed.version.major} is newer than 1")
        t = managed.dl_tensor
        key = (t.dtype.code, t.dtype.bits)
        if t.dtype.lanes != 1 or key not in DTYPES:
            raise BufferError(
                f"from_dlpack: unsupported DLPack dtype (code {key[0]}, bits {key[1]}, lanes {t.dtype.lanes})"
            )
        self.dtype = DTYPES[key]
        self.shape = tuple(t.shape[i] for i in range(t.ndim))
        if t.strides:
            self.strides = tuple(t.strides[i] for i in range(t.ndim))
        else:  # NULL strides: C-contiguous
            self.strides = tuple(opweave.backends.kernel.contiguous_strides(self.shape))
        self.data = (t.data or 0) + t.byte_offset
        self.device = (t.device.device_type, t.device.device_id)
        self.read_only = bool(kind is DLManagedTensorVersioned and managed.flags & FLAG_READ_ONLY)
        self._address, self._kind, self._done = address, kind, False
        _api.PyCapsule_SetName(
            capsule, b"used_dltensor_versioned" if kind is DLManagedTensorVersioned else b"used_dltensor"
        )

    def span(self, itemsize: int) -> tuple[int, int]:
        """``(lowest element offset, bytes covered)``: negative strides reach below ``data``."""
        if 0 in self.shape:
            return 0, 0
        lo = sum((n - 1) * s for n, s in zip(self.shape, self.strides) if s < 0)
        hi = sum((n - 1) * s for n, s in zip(self.shape, self.strides) if s > 0)
        return lo, (hi - lo + 1) * itemsize

    def release(self) -> None:
        """Call the producer's deleter (once)."""
        if self._done:
            return
        self._done = True
        managed = self._kind.from_address(self._address)
        if managed.deleter:
            managed.deleter(self._address)
