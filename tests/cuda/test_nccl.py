"""NCCL for CUDA tensors (``opweave_cuda.nccl`` and the engine ``opweave_cuda._nccl_engine``).

Without a GPU: the cffi declarations and constants are checked against the wheel's ``nccl.h``; the library
loads and answers ``ncclGetVersion`` and ``ncclGetUniqueId`` (neither needs a driver); the reduction table is
checked against PyTorch's NCCL rules; and the engine runs with three ranks as threads of this process, on
host tensors, over a NumPy stand-in of NCCL that reads and writes the memory the engine's pointers address
(its counts, data types, roots and peers), compared with NumPy oracles written here. With a GPU, a world of
one process runs every collective through ``init_process_group("nccl")``.
"""

from __future__ import annotations

import ctypes
import queue
import re
import subprocess
import sys
import textwrap
import threading
import warnings
from pathlib import Path

import ml_dtypes
import numpy as np
import opweave as ow
import pytest
from hypothesis import given
from hypothesis import strategies as st
from opweave.distributed import ReduceOp
from opweave_cuda import _nccl_engine, nccl

# nccl.h, written out here so that a wrong constant in the module fails
RESULTS = {
    "ncclSuccess": 0,
    "ncclUnhandledCudaError": 1,
    "ncclSystemError": 2,
    "ncclInternalError": 3,
    "ncclInvalidArgument": 4,
    "ncclInvalidUsage": 5,
    "ncclRemoteError": 6,
    "ncclInProgress": 7,
    "ncclTimeout": 8,
}
OPS = {"ncclSum": 0, "ncclProd": 1, "ncclMax": 2, "ncclMin": 3, "ncclAvg": 4}
TYPES = {
    "ncclInt8": 0,
    "ncclUint8": 1,
    "ncclInt32": 2,
    "ncclUint32": 3,
    "ncclInt64": 4,
    "ncclUint64": 5,
    "ncclFloat16": 6,
    "ncclFloat32": 7,
    "ncclFloat64": 8,
    "ncclBfloat16": 9,
    "ncclFloat8e4m3": 10,
    "ncclFloat8e5m2": 11,
}
NUMPY_OF = {
    0: np.int8,
    1: np.uint8,
    2: np.int32,
    3: np.uint32,
    4: np.int64,
    5: np.uint64,
    6: np.float16,
    7: np.float32,
    8: np.float64,
    9: ml_dtypes.bfloat16,
    10: ml_dtypes.float8_e4m3fn,
    11: ml_dtypes.float8_e5m2,
}


def _library_present() -> bool:
    try:
        import cffi  # noqa: F401
        from cuda.pathfinder import load_nvidia_dynamic_lib

        load_nvidia_dynamic_lib("nccl")
    except Exception:
        return False
    return True


def _header() -> str | None:
    try:
        from cuda.pathfinder import find_nvidia_header_directory

        folder = find_nvidia_header_directory("nccl")
        return (Path(folder) / "nccl.h").read_text() if folder else None
    except Exception:
        return None


needs_library = pytest.mark.skipif(not _library_present(), reason="libnccl (nvidia-nccl-cu13) or cffi is missing")
needs_header = pytest.mark.skipif(not _library_present() or _header() is None, reason="NCCL or nccl.h is missing")


# -- the binding against nccl.h ----------------------------------------------------------------------------------


def test_cdef_declares_the_functions_the_issue_names():
    assert set(nccl.symbols()) == {
        "ncclGetVersion",
        "ncclGetUniqueId",
        "ncclCommInitRank",
        "ncclCommDestroy",
        "ncclCommAbort",
        "ncclCommGetAsyncError",
        "ncclCommCount",
        "ncclCommUserRank",
        "ncclGetErrorString",
        "ncclGetLastError",
        "ncclAllReduce",
        "ncclBroadcast",
        "ncclReduce",
        "ncclAllGather",
        "ncclReduceScatter",
        "ncclSend",
        "ncclRecv",
        "ncclGroupStart",
        "ncclGroupEnd",
    }


_C_SIZES = {"int": 4, "size_t": 8, "ncclResult_t": 4, "ncclDataType_t": 4, "ncclRedOp_t": 4, "ncclComm_t": 8}
_POINTER_TYPES = ("ncclComm_t", "cudaStream_t")


@needs_header
def test_every_declaration_matches_the_header_abi():
    """Same parameter count as nccl.h; each parameter the header's size and kind (pointers and streams may be
    uintptr_t, the same register); the unique id is the header's 128-byte struct, passed by value."""
    header = _header()
    ffi, lib, _ = nccl._load()
    for name in nccl.symbols():
        match = re.search(rf"(?:ncclResult_t|const char\s*\*)\s+{name}\s*\(([^)]*)\)\s*;", header)
        assert match, f"{name} is not declared in nccl.h"
        params = [" ".join(p.split()) for p in match.group(1).split(",") if p.strip() not in ("", "void")]
        ours = ffi.typeof(getattr(lib, name)).args
        assert len(ours) == len(params), f"{name}: {len(ours)} parameters, the header has {len(params)}"
        for param, ctype in zip(params, ours):
            text = param.replace("const ", "")
            if text.startswith("ncclUniqueId ") and "*" not in text:
                assert ctype.kind == "struct" and ffi.sizeof(ctype) == 128, f"{name}: {ctype.cname}"
                continue
            pointer = "*" in text or text.split()[0] in _POINTER_TYPES
            if pointer:
                assert ffi.sizeof(ctype) == 8, f"{name}: {ctype.cname} vs {param!r}"
                assert ctype.kind == "pointer" or ctype.cname == "uintptr_t", f"{name}: {ctype.cname} vs {param!r}"
            else:
                assert ctype.kind == "primitive" and ctype.cname != "uintptr_t", f"{name}: {ctype.cname} vs {param!r}"
                assert ffi.sizeof(ctype) == _C_SIZES[text.split()[0]], f"{name}: {ctype.cname} vs {param!r}"
    assert re.search(r"#define NCCL_UNIQUE_ID_BYTES 128\b", header)


@needs_header
def test_enum_values_match_the_header():
    header = _header()
    module = {
        **{name: value for value, name in nccl.RESULT_NAMES.items()},
        **{name: getattr(nccl, name) for name in OPS},
        **{name: getattr(nccl, name) for name in TYPES},
    }
    for name, value in {**RESULTS, **OPS, **TYPES}.items():
        match = re.search(rf"\b{name}\s*=\s*(\d+)", header)
        assert match and int(match.group(1)) == value == module[name], f"{name}: header {match and match.group(1)}"


@needs_header
def test_library_loads_and_answers_without_a_driver():
    """libnccl loads, resolves every declared function and answers ncclGetVersion with the header's version."""
    ok, reason = nccl.available()
    assert ok, reason
    header = _header()
    want = tuple(int(re.search(rf"#define NCCL_{part} (\d+)", header).group(1)) for part in ("MAJOR", "MINOR", "PATCH"))
    assert nccl.version() == want
    assert reason.startswith(f"NCCL {'.'.join(map(str, want))} (")
    ffi, lib, _ = nccl._load()
    assert ffi.string(lib.ncclGetErrorString(0)).decode() == "no error"
    assert ffi.string(lib.ncclGetErrorString(4)).decode().startswith("invalid argument")
    assert nccl.error_text(4).startswith("ncclInvalidArgument: invalid argument")


@needs_library
def test_unique_id_needs_no_driver():
    """ncclGetUniqueId (rank 0's bootstrap address) works without a GPU: 128 bytes, a fresh one each call.
    Run in a child process: NCCL keeps a bootstrap thread listening for the ranks."""
    code = textwrap.dedent("""
        from opweave_cuda import nccl
        a, b = nccl.unique_id(), nccl.unique_id()
        print(len(a), len(b), a != b, any(a))
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["128", "128", "True", "True"]


def test_communicator_checks_its_arguments_before_the_library():
    with pytest.raises(ValueError, match="128 bytes"):
        nccl.Communicator(2, b"x" * 7, 0)
    with pytest.raises(ValueError, match="rank 2 is outside 0..1"):
        nccl.Communicator(2, bytes(128), 2)


@needs_library
def test_a_failing_call_names_the_function_and_nccls_error():
    ffi, lib, _ = nccl._load()
    with pytest.raises(RuntimeError, match="NCCL ncclGetVersion failed with ncclInvalidArgument"):
        nccl._check(lib, "ncclGetVersion", 4)


# -- the reduction table ------------------------------------------------------------------------------------------

ALL_OPS = ["sum", "avg", "product", "min", "max", "band", "bor", "bxor"]
NATIVE = {"int8", "uint8", "int32", "uint32", "int64", "uint64"}


@pytest.mark.parametrize("op", ALL_OPS)
@pytest.mark.parametrize(
    "dtype",
    ["float16", "bfloat16", "float32", "float64", "float8_e4m3fn", "float8_e5m2", "complex64", "complex128",
     "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "bool"],
)  # fmt: skip
def test_reduction_plan(dtype, op):
    """PyTorch's NCCL rules (complex: SUM/AVG as reals; bool: SUM/MAX as max, PRODUCT/MIN as min), the MPI engine's
    errors (AVG of integers, bitwise operations of floats), and the host for what NCCL lacks."""
    floating = dtype.startswith(("float", "bfloat"))
    if dtype.startswith("complex"):
        if op not in ("sum", "avg"):
            with pytest.raises(ValueError, match=f"does not support ReduceOp.{op.upper()} on complex"):
                nccl.reduction_plan(dtype, op, "all_reduce")
            return
        real = TYPES["ncclFloat32" if dtype == "complex64" else "ncclFloat64"]
        want = nccl.NcclReduction(real, OPS["ncclSum" if op == "sum" else "ncclAvg"], 2)
        assert nccl.reduction_plan(dtype, op, "all_reduce") == want
        return
    if floating and op in ("band", "bor", "bxor"):
        with pytest.raises(TypeError, match="only supported for integer and bool"):
            nccl.reduction_plan(dtype, op, "all_reduce")
        return
    if not floating and op == "avg":
        with pytest.raises(TypeError, match="AVG is only supported for floating point"):
            nccl.reduction_plan(dtype, op, "all_reduce")
        return
    nccl_op = {"sum": "ncclSum", "avg": "ncclAvg", "product": "ncclProd", "min": "ncclMin", "max": "ncclMax"}
    plan = nccl.reduction_plan(dtype, op, "all_reduce")
    if dtype == "bool":
        logic = {"sum": "ncclMax", "max": "ncclMax", "bor": "ncclMax", "product": "ncclMin", "min": "ncclMin",
                 "band": "ncclMin"}  # fmt: skip
        assert plan == (nccl.NcclReduction(TYPES["ncclUint8"], OPS[logic[op]], 1) if op in logic else nccl.HOST)
    elif op in ("band", "bor", "bxor") or dtype in ("int16", "uint16"):
        assert plan == nccl.HOST
    else:
        name = {"bfloat16": "ncclBfloat16", "float8_e4m3fn": "ncclFloat8e4m3", "float8_e5m2": "ncclFloat8e5m2"}.get(
            dtype, "ncclF" + dtype[1:] if floating else "ncclU" + dtype[1:] if dtype[0] == "u" else "ncclI" + dtype[1:]
        )
        assert plan == nccl.NcclReduction(TYPES[name], OPS[nccl_op[op]], 1)


# -- the engine, three ranks as threads over a NumPy stand-in of NCCL ----------------------------------------------


def _memory(ptr: int, nbytes: int) -> np.ndarray:
    return np.ctypeslib.as_array((ctypes.c_uint8 * nbytes).from_address(ptr)) if nbytes else np.empty(0, np.uint8)


def _array(ptr: int, count: int, datatype: int) -> np.ndarray:
    dt = np.dtype(NUMPY_OF[datatype])
    return _memory(ptr, count * dt.itemsize).view(dt)


def _reduce(arrays, op: int):
    """NCCL's reduction of the ranks' arrays (floats in float64, rounded once; integers wrap in their type)."""
    dt = arrays[0].dtype
    wide = np.stack([a.astype(np.float64) if dt.kind == "f" or dt.kind == "V" else a for a in arrays])
    if op == OPS["ncclSum"]:
        out = wide.sum(0, dtype=wide.dtype)
    elif op == OPS["ncclProd"]:
        out = wide.prod(0, dtype=wide.dtype)
    elif op == OPS["ncclMax"]:
        out = wide.max(0)
    elif op == OPS["ncclMin"]:
        out = wide.min(0)
    else:
        assert op == OPS["ncclAvg"]
        out = wide.sum(0) / len(arrays)
    return out.astype(dt)


class World:
    """What the ranks of one stand-in job share: a rendezvous, mailboxes, and a log of every call."""

    def __init__(self, size: int):
        self.size = size
        self.barrier = threading.Barrier(size, timeout=60)
        self.slots: list = [None] * size
        self.mail = {(a, b): queue.Queue() for a in range(size) for b in range(size)}
        self.calls: list = []
        self.lock = threading.Lock()

    def exchange(self, rank: int, value):
        self.slots[rank] = value
        self.barrier.wait()
        out = list(self.slots)
        self.barrier.wait()
        return out

    def log(self, rank: int, *call) -> None:
        with self.lock:
            self.calls.append((rank, *call))


STREAM = 0x5EED


class FakeComm:
    """``nccl.Communicator`` on host memory: every call reads and writes what its pointers and counts address."""

    def __init__(self, world: World, nranks: int, uid: bytes, rank: int):
        assert nranks == world.size and len(uid) == 128
        uids = world.exchange(rank, uid)
        assert len(set(uids)) == 1, "every rank got rank 0's unique id"
        self.world, self.rank, self.grouped = world, rank, 0

    def _log(self, name, stream, *args):
        assert stream == STREAM, f"{name} on stream {stream:#x}, not the current one"
        self.world.log(self.rank, name, self.grouped > 0, *args)

    def all_reduce(self, send, recv, count, datatype, op, stream):
        self._log("all_reduce", stream, count, datatype, op)
        arrays = self.world.exchange(self.rank, _array(send, count, datatype).copy())
        _array(recv, count, datatype)[...] = _reduce(arrays, op)

    def reduce(self, send, recv, count, datatype, op, root, stream):
        self._log("reduce", stream, count, datatype, op, root)
        arrays = self.world.exchange(self.rank, _array(send, count, datatype).copy())
        if self.rank == root:
            _array(recv, count, datatype)[...] = _reduce(arrays, op)

    def broadcast(self, send, recv, count, datatype, root, stream):
        self._log("broadcast", stream, count, datatype, root)
        arrays = self.world.exchange(self.rank, _array(send, count, datatype).copy() if self.rank == root else None)
        _array(recv, count, datatype)[...] = arrays[root]

    def all_gather(self, send, recv, count, datatype, stream):
        self._log("all_gather", stream, count, datatype)
        arrays = self.world.exchange(self.rank, _array(send, count, datatype).copy())
        _array(recv, count * self.world.size, datatype)[...] = np.concatenate(arrays)

    def reduce_scatter(self, send, recv, count, datatype, op, stream):
        self._log("reduce_scatter", stream, count, datatype, op)
        arrays = self.world.exchange(self.rank, _array(send, count * self.world.size, datatype).copy())
        _array(recv, count, datatype)[...] = _reduce(arrays, op)[self.rank * count : (self.rank + 1) * count]

    def send(self, buffer, count, datatype, peer, stream):
        self._log("send", stream, count, datatype, peer)
        self.world.mail[(self.rank, peer)].put(_array(buffer, count, datatype).copy())

    def recv(self, buffer, count, datatype, peer, stream):
        self._log("recv", stream, count, datatype, peer)
        message = self.world.mail[(peer, self.rank)].get(timeout=60)
        assert message.size == count, f"rank {self.rank} expects {count} elements from {peer}, got {message.size}"
        _array(buffer, count, datatype)[...] = message

    def group(self):
        comm = self

        class Group:
            def __enter__(self):
                comm.grouped += 1

            def __exit__(self, *exc):
                comm.grouped -= 1

        return Group()

    def destroy(self):
        self.world.log(self.rank, "destroy", False)


class FakeNccl:
    """The parts of ``opweave_cuda.nccl`` the engine uses; the planning is the real one."""

    UNIQUE_ID_BYTES = nccl.UNIQUE_ID_BYTES
    ncclUint8 = nccl.ncclUint8
    HOST = nccl.HOST
    reduction_plan = staticmethod(nccl.reduction_plan)

    def __init__(self, world: World):
        self.world = world

    def unique_id(self) -> bytes:
        return np.random.default_rng().bytes(128)

    def Communicator(self, nranks, uid, rank):  # noqa: N802 - the class it stands in for
        return FakeComm(self.world, nranks, uid, rank)


class HostDevices:
    """Streams and events of host tensors: the current stream is STREAM; work is done when it is queued."""

    device_type = "cpu"

    def index(self, device) -> int:
        return 0

    def enter(self, index: int) -> None:
        pass

    def stream(self, index: int) -> int:
        return STREAM

    def event(self, index: int, stream: int):
        class Done:
            def query(self):
                return True

            def synchronize(self):
                pass

        return Done()


class HostEngine:
    """The group's MPI engine (the unique id's transport, and the reductions NCCL lacks) over the World."""

    def __init__(self, world: World, rank: int):
        self.world, self.rank = world, rank

    def broadcast(self, tensor, root, async_op):
        values = self.world.exchange(self.rank, tensor.numpy().copy())
        tensor.copy_(ow.tensor(values[root]))

    def _reduced(self, tensor, op):
        values = [v.astype(np.int64) for v in self.world.exchange(self.rank, tensor.numpy().copy())]
        fn = {ReduceOp.BAND: np.bitwise_and, ReduceOp.BOR: np.bitwise_or, ReduceOp.BXOR: np.bitwise_xor,
              ReduceOp.SUM: np.add, ReduceOp.PRODUCT: np.multiply, ReduceOp.MIN: np.minimum,
              ReduceOp.MAX: np.maximum}[op]  # fmt: skip
        return fn.reduce(np.stack(values), axis=0).astype(tensor.numpy().dtype)

    def all_reduce(self, tensor, op, async_op):
        self.world.log(self.rank, "host all_reduce", False, op)
        tensor.copy_(ow.tensor(self._reduced(tensor, op)))

    def reduce(self, tensor, op, root, async_op):
        self.world.log(self.rank, "host reduce", False, op)
        result = self._reduced(tensor, op)
        if self.rank == root:
            tensor.copy_(ow.tensor(result))

    def reduce_scatter(self, out, tensor, op, async_op):
        self.world.log(self.rank, "host reduce_scatter", False, op)
        result = self._reduced(tensor, op)
        n = out.shape[0]
        out.copy_(ow.tensor(result[self.rank * n : (self.rank + 1) * n]))


class Group:
    def __init__(self, world: World, rank: int):
        self._rank, self._size, self.timeout = rank, world.size, None
        self.host = HostEngine(world, rank)

    def rank(self):
        return self._rank

    def size(self):
        return self._size

    def engine(self, device_type):
        assert device_type == "cpu"
        return self.host


def run_ranks(size: int, body):
    """Run ``body(engine, rank)`` on ``size`` threads, each with its own NCCLEngine; the World and the results."""
    world = World(size)
    results: list = [None] * size
    errors: list = []

    def rank_main(rank):
        try:
            engine = _nccl_engine.NCCLEngine(Group(world, rank), HostDevices(), FakeNccl(world))
            results[rank] = body(engine, rank)
            engine.close()
        except BaseException as exc:  # reported by the test thread
            errors.append((rank, exc))
            world.barrier.abort()

    threads = [threading.Thread(target=rank_main, args=(r,)) for r in range(size)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        rank, exc = errors[0]
        raise AssertionError(f"rank {rank} failed: {exc!r}") from exc
    return world, results


DTYPES = ["float32", "float64", "float16", "bfloat16", "int32", "int64", "int8", "uint8", "bool", "complex64"]


def _data(rng, dtype: str, shape) -> np.ndarray:
    if dtype == "bool":
        return rng.integers(0, 2, shape).astype(bool)
    if dtype.startswith("complex"):
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    if dtype.startswith(("int", "uint")):
        info = np.iinfo(dtype)
        return rng.integers(max(info.min, -50), min(info.max, 50), shape, endpoint=True).astype(dtype)
    values = rng.standard_normal(shape)
    return values.astype(ml_dtypes.bfloat16 if dtype == "bfloat16" else dtype)


def _tensor(array: np.ndarray, transposed: bool):
    """An opweave tensor with ``array``'s values: contiguous, or a transposed (non-contiguous) view."""
    if transposed and array.ndim == 2:
        return ow.tensor(np.ascontiguousarray(array.T)).T
    return ow.tensor(array)


def _oracle(arrays, op: str, dtype: str) -> np.ndarray:
    stack = np.stack(arrays)
    if dtype == "bool":
        fn = {"sum": np.any, "max": np.any, "bor": np.any, "product": np.all, "min": np.all, "band": np.all}.get(op)
        return fn(stack, axis=0) if fn else np.logical_xor.reduce(stack, axis=0)
    if op in ("band", "bor", "bxor"):
        return {"band": np.bitwise_and, "bor": np.bitwise_or, "bxor": np.bitwise_xor}[op].reduce(stack, axis=0)
    wide = stack.astype(np.complex128 if dtype.startswith("complex") else np.float64)
    if np.dtype(stack.dtype).kind in "iu":
        wide = stack
    if op == "avg":
        return (wide.sum(0) / len(arrays)).astype(stack.dtype)
    reduce = {"sum": np.add, "product": np.multiply, "min": np.minimum, "max": np.maximum}[op]
    return reduce.reduce(wide, axis=0).astype(stack.dtype)


def _assert_equal_to(got: np.ndarray, want: np.ndarray, dtype: str) -> None:
    if dtype in ("float16", "bfloat16", "float32", "float64", "complex64"):
        eps = float(ml_dtypes.finfo(ml_dtypes.bfloat16).eps) if dtype == "bfloat16" else float(np.finfo(dtype).eps)
        np.testing.assert_allclose(got.astype(np.complex128), want.astype(np.complex128), rtol=2 * eps, atol=0)
    else:
        np.testing.assert_array_equal(got, want)


@st.composite
def _reduction_case(draw):
    dtype = draw(st.sampled_from(DTYPES))
    if dtype == "complex64":
        ops = ["sum", "avg"]
    elif dtype.startswith(("float", "bfloat")):
        ops = ["sum", "avg", "product", "min", "max"]
    elif dtype == "bool":
        ops = ["sum", "product", "min", "max", "band", "bor", "bxor"]
    else:
        ops = ["sum", "product", "min", "max", "band", "bor", "bxor"]
    op = draw(st.sampled_from(ops))
    shape = draw(st.sampled_from([(), (0,), (5,), (3, 4), (4, 1)]))
    return dtype, op, shape, draw(st.booleans()), draw(st.integers(0, 2**32 - 1))


@given(case=_reduction_case())
def test_all_reduce_and_reduce_match_numpy(case):
    """all_reduce on every rank and reduce into a root: values, the stream, and NCCL's or the host's path."""
    dtype, op_name, shape, transposed, seed = case
    size, root = 3, seed % 3
    rng = np.random.default_rng(seed)
    data = [_data(rng, dtype, shape) for _ in range(size)]
    op = ReduceOp(op_name)
    host = nccl.reduction_plan(dtype, op_name, "all_reduce") == nccl.HOST

    def body(engine, rank):
        t = _tensor(data[rank], transposed)
        r = _tensor(data[rank], transposed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert engine.all_reduce(t, op, False).is_completed()
            engine.reduce(r, op, root, False)
        return t.numpy(), r.numpy()

    world, results = run_ranks(size, body)
    want = _oracle(data, op_name, dtype)
    for rank, (reduced, rooted) in enumerate(results):
        _assert_equal_to(reduced, want, dtype)
        _assert_equal_to(rooted, want if rank == root else data[rank], dtype)
    names = {call[1] for call in world.calls}
    if host:
        assert {"host all_reduce", "host reduce"} <= names and "all_reduce" not in names
    elif int(np.prod(shape)):
        assert {"all_reduce", "reduce"} <= names


@given(
    dtype=st.sampled_from([*DTYPES, "int16"]),
    rows=st.integers(0, 3),
    transposed=st.booleans(),
    seed=st.integers(0, 2**32 - 1),
)
def test_data_movement_matches_numpy(dtype, rows, transposed, seed):
    """broadcast, all_gather, gather, scatter and all_to_all move bytes: every dtype, rows of any width."""
    size = 3
    root = seed % size
    rng = np.random.default_rng(seed)
    data = [_data(rng, dtype, (rows, 2)) for _ in range(size)]
    whole = [_data(rng, dtype, (size * rows, 2)) for _ in range(size)]
    splits = [[int(s) for s in rng.integers(0, 3, size)] for _ in range(size)]  # splits[i][j]: rows i sends j
    blocks = [[_data(rng, dtype, (splits[i][j], 2)) for j in range(size)] for i in range(size)]

    def body(engine, rank):
        like = _tensor(data[rank], transposed)
        b = _tensor(data[rank], transposed)
        engine.broadcast(b, root, False)
        gathered = ow.empty((size * rows, 2), dtype=like.dtype)
        engine.all_gather(gathered, like, False)
        at_root = ow.zeros((size * rows, 2), dtype=like.dtype)
        engine.gather(at_root, like, root, False)
        chunk = _tensor(np.zeros_like(data[rank]), transposed)
        engine.scatter(chunk, ow.tensor(whole[rank]), root, False)
        mine = ow.tensor(np.concatenate(blocks[rank]))
        out_splits = [splits[j][rank] for j in range(size)]
        got = ow.empty((sum(out_splits), 2), dtype=like.dtype)
        engine.all_to_all(got, mine, out_splits, splits[rank], False)
        return b.numpy(), gathered.numpy(), at_root.numpy(), chunk.numpy(), got.numpy()

    world, results = run_ranks(size, body)
    for rank, (b, gathered, at_root, chunk, got) in enumerate(results):
        np.testing.assert_array_equal(b, data[root])
        np.testing.assert_array_equal(gathered, np.concatenate(data))
        want_root = np.concatenate(data) if rank == root else np.zeros_like(np.concatenate(data))
        np.testing.assert_array_equal(at_root, want_root)
        np.testing.assert_array_equal(chunk, whole[root][rank * rows : (rank + 1) * rows])
        np.testing.assert_array_equal(got, np.concatenate([blocks[j][rank] for j in range(size)]))
    for call in world.calls:
        if call[1] in ("send", "recv"):
            assert call[2], f"rank {call[0]}: {call[1]} outside an NCCL group would deadlock"
        if call[1] in ("broadcast", "all_gather", "send", "recv"):
            assert call[4] == nccl.ncclUint8, "data movement sends bytes"


@given(
    dtype=st.sampled_from(["float32", "bfloat16", "int64", "complex64", "int16", "bool"]),
    seed=st.integers(0, 2**32 - 1),
)
def test_reduce_scatter_matches_numpy(dtype, seed):
    size = 3
    op_name = "bxor" if dtype == "int16" else "max" if dtype == "bool" else "sum"
    rng = np.random.default_rng(seed)
    data = [_data(rng, dtype, (size * 2, 3)) for _ in range(size)]

    def body(engine, rank):
        out = ow.empty((2, 3), dtype=getattr(ow, dtype))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            engine.reduce_scatter(out, ow.tensor(data[rank]), ReduceOp(op_name), False)
        return out.numpy()

    _, results = run_ranks(size, body)
    want = _oracle(data, op_name, dtype)
    for rank, got in enumerate(results):
        _assert_equal_to(got, want[rank * 2 : (rank + 1) * 2], dtype)


def test_send_recv_pairs_and_async_work():
    """Rank 0 sends to 1 and 2; async_op=True returns a Work completed by its event; source_rank is the peer."""
    data = np.arange(12, dtype=np.float32).reshape(3, 4)

    def body(engine, rank):
        if rank == 0:
            works = [engine.send(ow.tensor(data[p]), p, 0, True) for p in (1, 2)]
            for w in works:
                assert w.wait() and w.is_completed()
            return None
        out = ow.zeros(4)
        work = engine.recv(out, 0, 0, True)
        assert work.wait()
        assert work.source_rank() == 0
        return out.numpy()

    _, results = run_ranks(3, body)
    np.testing.assert_array_equal(results[1], data[1])
    np.testing.assert_array_equal(results[2], data[2])


def test_recv_from_any_rank_is_refused():
    world = World(1)
    engine = _nccl_engine.NCCLEngine(Group(world, 0), HostDevices(), FakeNccl(world))
    with pytest.raises(RuntimeError, match="recv: the NCCL engine needs the source rank"):
        engine.recv(ow.zeros(2), None, 0, False)


def test_one_communicator_per_device_made_on_first_use_with_rank_0s_id():
    made = []

    class Counting(FakeNccl):
        def Communicator(self, nranks, uid, rank):  # noqa: N802
            made.append((rank, uid))
            return super().Communicator(nranks, uid, rank)

    world = World(2)

    def body(engine, rank):
        t = ow.ones(3)
        for _ in range(3):
            engine.all_reduce(t, ReduceOp.SUM, False)
        engine.barrier(False)
        return t.numpy()

    def rank_main(rank, results):
        engine = _nccl_engine.NCCLEngine(Group(world, rank), HostDevices(), Counting(world))
        results[rank] = body(engine, rank)
        engine.close()

    results = [None, None]
    threads = [threading.Thread(target=rank_main, args=(r, results)) for r in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    np.testing.assert_array_equal(results[0], [8.0, 8.0, 8.0])
    assert sorted(rank for rank, _ in made) == [0, 1] and made[0][1] == made[1][1]
    assert sum(1 for call in world.calls if call[1] == "destroy") == 2


def test_host_reductions_warn_once():
    world = World(1)
    engine = _nccl_engine.NCCLEngine(Group(world, 0), HostDevices(), FakeNccl(world))
    _nccl_engine._warned.clear()
    t = ow.tensor([5, 3], dtype=ow.int32)
    with pytest.warns(UserWarning, match="NCCL cannot reduce int32 tensors with <ReduceOp.BAND>"):
        engine.all_reduce(t, ReduceOp.BAND, False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        engine.all_reduce(t, ReduceOp.BAND, False)
    np.testing.assert_array_equal(t.numpy(), [5, 3])


@pytest.mark.parametrize(
    ("dtype", "op", "error", "match"),
    [
        ("float32", ReduceOp.BAND, TypeError, "only supported for integer and bool"),
        ("int64", ReduceOp.AVG, TypeError, "AVG is only supported for floating point"),
        ("bool", ReduceOp.AVG, TypeError, "AVG is only supported for floating point"),
        ("complex64", ReduceOp.MAX, ValueError, "does not support ReduceOp.MAX on complex"),
    ],
)
def test_unsupported_pairs_raise_and_leave_the_tensor(dtype, op, error, match):
    world = World(1)
    engine = _nccl_engine.NCCLEngine(Group(world, 0), HostDevices(), FakeNccl(world))
    t = ow.ones(3, dtype=getattr(ow, dtype))
    with pytest.raises(error, match=match):
        engine.all_reduce(t, op, False)
    np.testing.assert_array_equal(t.numpy(), np.ones(3, dtype))
    assert world.calls == [], "nothing reached NCCL"


# -- the process group ---------------------------------------------------------------------------------------------


def _cuda_available() -> bool:
    return ow.backends.is_available("cuda")


@pytest.mark.skipif(_cuda_available(), reason="needs a machine without a CUDA device")
def test_nccl_backend_says_why_it_is_unavailable():
    import opweave.distributed as dist

    assert not dist.is_nccl_available()
    for backend in ("nccl", "cpu:mpi,cuda:nccl"):
        with pytest.raises(RuntimeError, match="the NCCL backend is not available: .*(CUDA|NCCL)"):
            dist.init_process_group(backend)
    assert not dist.is_initialized()
    with pytest.raises(RuntimeError, match="unsupported backend for {'cuda': 'gloo'}"):
        dist.init_process_group("cpu:mpi,cuda:gloo")
    rows = {row.name: row for row in ow.backends.status()}
    assert not rows["distributed.nccl"].available and rows["distributed.nccl"].reason


SMOKE = Path(__file__).with_name("nccl_smoke.py")


@pytest.mark.skipif(not _cuda_available(), reason="no CUDA device")
def test_world_of_one_on_a_gpu():
    """Every collective through ``init_process_group("nccl")`` on one GPU (a child process: MPI starts there)."""
    out = subprocess.run([sys.executable, str(SMOKE)], capture_output=True, text=True, timeout=240)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "OK" in out.stdout, out.stdout


@needs_library
def test_a_plugin_with_a_device_registers_the_nccl_engine():
    """What the CUDA plugin does on a machine with a GPU, from inside its registration hook (a child process: it
    changes the process's engines): the feature is available, ``"nccl"`` names the engine of its device type, and
    that device's ``c10d::`` ops get Dense kernels."""
    code = textwrap.dedent("""
        import sys, types
        import opweave as ow
        from opweave_cuda import _nccl_engine

        class Backend:
            name = "nccldev"
            def is_available(self):
                return True

        plugin = types.ModuleType("nccl_device_plugin")

        @ow.hookimpl
        def opweave_register(registry):
            _nccl_engine.register(registry, Backend())

        plugin.opweave_register = opweave_register
        ow.backends.register_plugin(plugin, name="nccl_device_plugin")
        from opweave.distributed import _engine
        rows = {row.name: row for row in ow.backends.status()}
        print(rows["distributed.nccl"].available, rows["distributed.nccl"].plugin)
        print(_engine.named_backend("nccl"), _engine.engine_factory("nccldev") is _nccl_engine.NCCLEngine)
        print(ow.ops.lookup("c10d::all_reduce_").has_kernel("nccldev"))
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["True", "nccl_device_plugin", "nccldev", "True", "True"], out.stdout


def test_without_a_device_the_feature_says_why_and_no_engine_is_registered():
    from opweave._registry import Registry
    from opweave.distributed import _engine

    class Backend:
        name = "nccldev"

        def is_available(self):
            return False

        def unavailable_reason(self):
            return "no device here"

    registry = Registry("test")
    _nccl_engine.register(registry, Backend())
    assert len(registry.features) == 1
    name, available, reason = registry.features[0]
    assert name == "distributed.nccl" and not available
    assert reason == "NCCL needs a CUDA device: no device here" if _library_present() else "NCCL could not" in reason
    assert _engine.engine_factory("nccldev") is None
