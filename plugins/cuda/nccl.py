"""NCCL for the CUDA backend's collectives, through cffi in ABI mode (``libnccl`` of the ``nvidia-nccl-cu13`` wheel).

Two layers, as ``cublas.py``:

- pure planning, which needs neither NCCL nor a GPU: :func:`reduction_plan` maps an opweave dtype and a
  ``ReduceOp`` name to NCCL's ``ncclDataType_t`` and ``ncclRedOp_t`` (or says the reduction must be done on the
  host, or raises the error PyTorch raises); data movement (broadcast, gathers, point to point) sends bytes
  (``ncclUint8``), so it takes every dtype;
- :class:`Communicator`: one ``ncclComm_t`` and the calls on raw device pointers and a raw ``CUstream``, each
  result checked (``RuntimeError`` naming the call, NCCL's error and its last error text).

:func:`available` says whether libnccl loads and resolves every declared function; :func:`version` asks
``ncclGetVersion`` and :func:`unique_id` ``ncclGetUniqueId``, both of which answer without a GPU or driver.

Reductions (what PyTorch's NCCL backend does, and where opweave goes further):

- float16, bfloat16, float32, float64, int8, uint8, int32, uint32, int64, uint64, float8_e4m3fn and
  float8_e5m2 reduce natively with SUM, PRODUCT, MIN, MAX (and AVG for floating types, ``ncclAvg``);
- complex64/complex128 reduce as pairs of reals with SUM and AVG only (``ValueError`` otherwise, as PyTorch);
- bool is reduced as ``ncclUint8``: SUM/MAX/BOR as ``ncclMax`` (or), PRODUCT/MIN/BAND as ``ncclMin`` (and);
- NCCL has no bitwise operations and no 16-bit integers: BAND/BOR/BXOR on integers, BXOR on bool, and every
  reduction of int16/uint16 are :data:`HOST` -- the engine reduces them over MPI on host copies (PyTorch raises
  ``ValueError: Cannot use ReduceOp.BAND with NCCL`` there instead);
- AVG of integers and bool, and bitwise operations on floating types, raise ``TypeError`` as the MPI engine does.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ._cffi_library import CffiLibrary

__all__ = [
    "CDEF",
    "HOST",
    "Communicator",
    "NcclReduction",
    "available",
    "reduction_plan",
    "symbols",
    "unique_id",
    "version",
]

# -- the values of nccl.h --------------------------------------------------------------------------------------------

ncclSuccess = 0
RESULT_NAMES = {
    0: "ncclSuccess",
    1: "ncclUnhandledCudaError",
    2: "ncclSystemError",
    3: "ncclInternalError",
    4: "ncclInvalidArgument",
    5: "ncclInvalidUsage",
    6: "ncclRemoteError",
    7: "ncclInProgress",
    8: "ncclTimeout",
}

# ncclRedOp_t
ncclSum, ncclProd, ncclMax, ncclMin, ncclAvg = 0, 1, 2, 3, 4

# ncclDataType_t
ncclInt8 = 0
ncclUint8 = 1
ncclInt32 = 2
ncclUint32 = 3
ncclInt64 = 4
ncclUint64 = 5
ncclFloat16 = 6
ncclFloat32 = 7
ncclFloat64 = 8
ncclBfloat16 = 9
ncclFloat8e4m3 = 10
ncclFloat8e5m2 = 11

UNIQUE_ID_BYTES = 128

#: opweave dtype name -> (ncclDataType_t, elements of that type per element of the dtype)
DATA_TYPES = {
    "int8": (ncclInt8, 1),
    "uint8": (ncclUint8, 1),
    "bool": (ncclUint8, 1),
    "int32": (ncclInt32, 1),
    "uint32": (ncclUint32, 1),
    "int64": (ncclInt64, 1),
    "uint64": (ncclUint64, 1),
    "float16": (ncclFloat16, 1),
    "float32": (ncclFloat32, 1),
    "float64": (ncclFloat64, 1),
    "bfloat16": (ncclBfloat16, 1),
    "float8_e4m3fn": (ncclFloat8e4m3, 1),
    "float8_e5m2": (ncclFloat8e5m2, 1),
    "complex64": (ncclFloat32, 2),
    "complex128": (ncclFloat64, 2),
}

_OPS = {"sum": ncclSum, "product": ncclProd, "min": ncclMin, "max": ncclMax, "avg": ncclAvg}
_BOOL_OPS = {"sum": ncclMax, "max": ncclMax, "bor": ncclMax, "product": ncclMin, "min": ncclMin, "band": ncclMin}
_BITWISE = ("band", "bor", "bxor")

# Device pointers and streams are uintptr_t (the same register as void* in the ABI; Python ints pass as they are).
# Enums are int-sized, as in nccl.h.
CDEF = """
typedef int ncclResult_t;
typedef int ncclDataType_t;
typedef int ncclRedOp_t;
typedef struct ncclComm *ncclComm_t;
typedef struct { char internal[128]; } ncclUniqueId;
ncclResult_t ncclGetVersion(int *version);
ncclResult_t ncclGetUniqueId(ncclUniqueId *uniqueId);
ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId commId, int rank);
ncclResult_t ncclCommDestroy(ncclComm_t comm);
ncclResult_t ncclCommAbort(ncclComm_t comm);
ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t *asyncError);
ncclResult_t ncclCommCount(const ncclComm_t comm, int *count);
ncclResult_t ncclCommUserRank(const ncclComm_t comm, int *rank);
const char *ncclGetErrorString(ncclResult_t result);
const char *ncclGetLastError(ncclComm_t comm);
ncclResult_t ncclAllReduce(uintptr_t sendbuff, uintptr_t recvbuff, size_t count, ncclDataType_t datatype,
    ncclRedOp_t op, ncclComm_t comm, uintptr_t stream);
ncclResult_t ncclBroadcast(uintptr_t sendbuff, uintptr_t recvbuff, size_t count, ncclDataType_t datatype, int root,
    ncclComm_t comm, uintptr_t stream);
ncclResult_t ncclReduce(uintptr_t sendbuff, uintptr_t recvbuff, size_t count, ncclDataType_t datatype,
    ncclRedOp_t op, int root, ncclComm_t comm, uintptr_t stream);
ncclResult_t ncclAllGather(uintptr_t sendbuff, uintptr_t recvbuff, size_t sendcount, ncclDataType_t datatype,
    ncclComm_t comm, uintptr_t stream);
ncclResult_t ncclReduceScatter(uintptr_t sendbuff, uintptr_t recvbuff, size_t recvcount, ncclDataType_t datatype,
    ncclRedOp_t op, ncclComm_t comm, uintptr_t stream);
ncclResult_t ncclSend(uintptr_t sendbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
    uintptr_t stream);
ncclResult_t ncclRecv(uintptr_t recvbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
    uintptr_t stream);
ncclResult_t ncclGroupStart(void);
ncclResult_t ncclGroupEnd(void);
"""


def symbols() -> tuple[str, ...]:
    """The names of the C functions :data:`CDEF` declares (each must resolve in libnccl)."""
    return tuple(re.findall(r"\b(nccl\w+)\s*\(", CDEF))


# -- planning (pure) -------------------------------------------------------------------------------------------------

#: what :func:`reduction_plan` returns for a reduction NCCL cannot do: reduce over MPI on host copies
HOST = "host"


@dataclass(frozen=True)
class NcclReduction:
    """One NCCL reduction: ``datatype`` and ``op`` for ``count * factor`` elements (complex: 2 reals each)."""

    datatype: int
    op: int
    factor: int


def reduction_plan(dtype: str, op: str, where: str) -> NcclReduction | str:
    """How to reduce ``dtype`` tensors (a dtype name) with ``op`` (a ``ReduceOp`` value such as ``"sum"``).

    An :class:`NcclReduction`, or :data:`HOST` when NCCL cannot do it (bitwise operations on integers, BXOR on
    bool, 16-bit integers); ``TypeError``/``ValueError`` naming ``where`` for pairs no engine reduces.
    """
    if op not in _OPS and op not in _BITWISE:
        raise ValueError(f"{where}: unknown reduce op {op!r}")
    if dtype in ("complex64", "complex128"):
        if op not in ("sum", "avg"):
            raise ValueError(f"{where} does not support ReduceOp.{op.upper()} on complex tensors")
        datatype, factor = DATA_TYPES[dtype]
        return NcclReduction(datatype, _OPS[op], factor)
    if dtype in ("float16", "bfloat16", "float32", "float64") or dtype.startswith("float8"):
        if op in _BITWISE:
            raise TypeError(
                f"{where}: ReduceOp.{op.upper()} is only supported for integer and bool tensors, got {dtype}"
            )
        if dtype not in DATA_TYPES:
            raise TypeError(f"{where}: {dtype} tensors cannot be reduced by NCCL (it reduces float8_e4m3fn and "
                            "float8_e5m2); convert them first")  # fmt: skip
        datatype, factor = DATA_TYPES[dtype]
        return NcclReduction(datatype, _OPS[op], factor)
    if op == "avg":
        raise TypeError(
            f"{where}: ReduceOp.AVG is only supported for floating point and complex tensors, got {dtype} "
            "(reduce with SUM and divide as you need)"
        )
    if dtype == "bool":
        return NcclReduction(ncclUint8, _BOOL_OPS[op], 1) if op in _BOOL_OPS else HOST
    if op in _BITWISE or dtype not in DATA_TYPES:
        return HOST
    datatype, factor = DATA_TYPES[dtype]
    return NcclReduction(datatype, _OPS[op], factor)


# -- the library -----------------------------------------------------------------------------------------------------

_LIBRARY = CffiLibrary("NCCL", "nccl", CDEF, symbols, hint=" (pip install 'opweave[cuda]' installs it)")


def _load() -> tuple[Any, Any, str]:
    """Load libnccl once: ``(ffi, lib, path)`` (``RuntimeError`` naming why it cannot be loaded)."""
    return _LIBRARY.load()


def version() -> tuple[int, int, int]:
    """``ncclGetVersion`` as ``(major, minor, patch)`` (NCCL 2.9 and later: ``major * 10000 + minor * 100 + patch``)."""
    ffi, lib, _ = _load()
    out = ffi.new("int *")
    _check(lib, "ncclGetVersion", lib.ncclGetVersion(out))
    code = int(out[0])
    if code < 20900:  # NCCL <= 2.8: major * 1000 + minor * 100 + patch
        return code // 1000, code % 1000 // 100, code % 100
    return code // 10000, code % 10000 // 100, code % 100


def available() -> tuple[bool, str]:
    """``(True, "NCCL <version> (<path>)")`` if libnccl loads and resolves every function used, else
    ``(False, why)``. Never raises; it checks the library only (a GPU is the backend's business)."""
    try:
        _, _, path = _load()
        return True, f"NCCL {'.'.join(map(str, version()))} ({path})"
    except Exception as exc:
        return False, str(exc)


def error_text(result: int, comm: Any = None) -> str:
    """``name: description`` of an ``ncclResult_t``, with ``ncclGetLastError``'s text when it has one."""
    name = RESULT_NAMES.get(result, f"ncclResult_t {result}")
    if _LIBRARY.loaded is None:
        return name
    ffi, lib, _ = _LIBRARY.loaded
    text = lib.ncclGetErrorString(result)
    detail = ffi.string(text).decode(errors="replace") if text != ffi.NULL else ""
    last = lib.ncclGetLastError(ffi.NULL if comm is None else comm)
    last_text = ffi.string(last).decode(errors="replace") if last != ffi.NULL else ""
    return f"{name}: {detail}" + (f" ({last_text})" if last_text else "")


def _check(lib: Any, function: str, result: int, comm: Any = None) -> None:
    if result != ncclSuccess:
        raise RuntimeError(f"NCCL {function} failed with {error_text(result, comm)}")


def unique_id() -> bytes:
    """A new ``ncclUniqueId`` (128 bytes; rank 0 makes it and sends it to the others before ``ncclCommInitRank``)."""
    ffi, lib, _ = _load()
    out = ffi.new("ncclUniqueId *")
    _check(lib, "ncclGetUniqueId", lib.ncclGetUniqueId(out))
    return bytes(ffi.buffer(out))


class Communicator:
    """An ``ncclComm_t`` of ``nranks`` ranks (made with the CUDA context of its device current).

    Every collective is queued on ``stream`` (a raw ``CUstream``); pointers are device addresses as ints;
    counts are elements of ``datatype``. ``group()`` brackets calls with ``ncclGroupStart``/``ncclGroupEnd``.
    """

    def __init__(self, nranks: int, uid: bytes, rank: int):
        if len(uid) != UNIQUE_ID_BYTES:
            raise ValueError(f"ncclCommInitRank: the unique id must be {UNIQUE_ID_BYTES} bytes, got {len(uid)}")
        if not 0 <= rank < nranks:
            raise ValueError(f"ncclCommInitRank: rank {rank} is outside 0..{nranks - 1}")
        ffi, lib, _ = _load()
        self._ffi, self._lib = ffi, lib
        handle = ffi.new("ncclComm_t *")
        ident = ffi.new("ncclUniqueId *")
        ffi.memmove(ident, uid, UNIQUE_ID_BYTES)
        _check(lib, "ncclCommInitRank", lib.ncclCommInitRank(handle, nranks, ident[0], rank))
        self.comm = handle[0]
        self.nranks, self.rank = nranks, rank

    def _nccl(self, function: str, *args) -> None:
        _check(self._lib, function, getattr(self._lib, function)(*args), self.comm)

    def all_reduce(self, send: int, recv: int, count: int, datatype: int, op: int, stream: int) -> None:
        """``ncclAllReduce`` (``send == recv``: in place)."""
        self._nccl("ncclAllReduce", send, recv, count, datatype, op, self.comm, stream)

    def broadcast(self, send: int, recv: int, count: int, datatype: int, root: int, stream: int) -> None:
        """``ncclBroadcast`` (``send`` is read on ``root`` only)."""
        self._nccl("ncclBroadcast", send, recv, count, datatype, root, self.comm, stream)

    def reduce(self, send: int, recv: int, count: int, datatype: int, op: int, root: int, stream: int) -> None:
        """``ncclReduce`` (``recv`` is written on ``root`` only)."""
        self._nccl("ncclReduce", send, recv, count, datatype, op, root, self.comm, stream)

    def all_gather(self, send: int, recv: int, sendcount: int, datatype: int, stream: int) -> None:
        """``ncclAllGather``: ``nranks * sendcount`` elements land in ``recv``, in rank order."""
        self._nccl("ncclAllGather", send, recv, sendcount, datatype, self.comm, stream)

    def reduce_scatter(self, send: int, recv: int, recvcount: int, datatype: int, op: int, stream: int) -> None:
        """``ncclReduceScatter``: block ``rank`` of the reduction of ``nranks * recvcount`` elements."""
        self._nccl("ncclReduceScatter", send, recv, recvcount, datatype, op, self.comm, stream)

    def send(self, buffer: int, count: int, datatype: int, peer: int, stream: int) -> None:
        """``ncclSend`` to ``peer``."""
        self._nccl("ncclSend", buffer, count, datatype, peer, self.comm, stream)

    def recv(self, buffer: int, count: int, datatype: int, peer: int, stream: int) -> None:
        """``ncclRecv`` from ``peer``."""
        self._nccl("ncclRecv", buffer, count, datatype, peer, self.comm, stream)

    def group(self) -> _Group:
        """``with comm.group():`` -- the calls inside are one NCCL group (``ncclGroupStart``/``ncclGroupEnd``)."""
        return _Group(self._lib, self.comm)

    def async_error(self) -> int:
        """``ncclCommGetAsyncError`` (``ncclSuccess``, ``ncclInProgress`` or an error of a running operation)."""
        out = self._ffi.new("ncclResult_t *")
        self._nccl("ncclCommGetAsyncError", self.comm, out)
        return int(out[0])

    def destroy(self) -> None:
        """``ncclCommDestroy`` (after the queued work); ``ncclCommAbort`` if that fails."""
        comm, self.comm = self.comm, None
        if comm is None:
            return
        if self._lib.ncclCommDestroy(comm) != ncclSuccess:
            self._lib.ncclCommAbort(comm)

    def abort(self) -> None:
        """``ncclCommAbort``: stop what is queued and free the communicator (after a timeout or an error)."""
        comm, self.comm = self.comm, None
        if comm is not None:
            self._lib.ncclCommAbort(comm)


class _Group:
    __slots__ = ("lib", "comm")

    def __init__(self, lib, comm):
        self.lib, self.comm = lib, comm

    def __enter__(self):
        _check(self.lib, "ncclGroupStart", self.lib.ncclGroupStart(), self.comm)
        return self

    def __exit__(self, *exc) -> None:
        result = self.lib.ncclGroupEnd()
        if exc[0] is None:
            _check(self.lib, "ncclGroupEnd", result, self.comm)
