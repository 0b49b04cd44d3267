"""The MPI engine: collectives on host memory through mpi4py.

Tensors are handed to MPI without copies: the CPU backend's NumPy view of a
contiguous tensor is the buffer (buffer protocol). A non-contiguous tensor is
staged through a contiguous copy, and results are copied back. Collectives are
MPI's blocking calls (the fastest algorithms) under a watchdog that ends the
job when one exceeds the group's timeout; ``async_op=True`` runs them on a
worker thread, in launch order, and returns a :class:`Work` (MPI's blocking
and non-blocking collectives do not match, and ranks may choose differently).

Reductions per dtype (:func:`reduction_plan`): float32/float64 and the integer
types reduce natively; float16 and bfloat16 are reduced in float32 and
rounded once (never as raw integers); complex tensors reduce their real and
imaginary parts (SUM and AVG only, as PyTorch); bool reduces as logical
operations (SUM/MAX/BOR: or, PRODUCT/MIN/BAND: and, BXOR: xor, as PyTorch's
NCCL backend). AVG is SUM followed by a division by the group size, for
floating and complex tensors only. Data movement (broadcast, gathers, all-to-all,
point-to-point) sends bytes, so it works for every dtype.
"""

from __future__ import annotations

import functools
import sys
import threading
import time
import traceback

import numpy as np

from .. import backends
from ._bootstrap import abort_job
from ._reduce_op import ReduceOp
from ._work import Work

_MPI = None


def mpi():
    """The ``mpi4py.MPI`` module (initialising MPI on first use); ``RuntimeError`` naming the extra if missing."""
    global _MPI
    if _MPI is None:
        try:
            from mpi4py import MPI
        except ImportError as exc:
            raise RuntimeError(
                "opweave.distributed: the MPI engine needs mpi4py and an MPI library: "
                'pip install "opweave[distributed]"'
                f" ({exc})"
            ) from exc
        _MPI = MPI
    return _MPI


def available() -> tuple[bool, str | None]:
    """Whether mpi4py can be imported (without initialising MPI), and why not."""
    import importlib.util

    if importlib.util.find_spec("mpi4py") is None:
        return False, 'mpi4py is not installed: pip install "opweave[distributed]"'
    return True, None


_BITWISE = (ReduceOp.BAND, ReduceOp.BOR, ReduceOp.BXOR)
_BOOL_OPS = {
    ReduceOp.SUM: "BOR",
    ReduceOp.MAX: "BOR",
    ReduceOp.BOR: "BOR",
    ReduceOp.PRODUCT: "BAND",
    ReduceOp.MIN: "BAND",
    ReduceOp.BAND: "BAND",
    ReduceOp.BXOR: "BXOR",
}
_MPI_OPS = {
    ReduceOp.SUM: "SUM",
    ReduceOp.AVG: "SUM",
    ReduceOp.PRODUCT: "PROD",
    ReduceOp.MIN: "MIN",
    ReduceOp.MAX: "MAX",
    ReduceOp.BAND: "BAND",
    ReduceOp.BOR: "BOR",
    ReduceOp.BXOR: "BXOR",
}


@functools.lru_cache(maxsize=256)
def reduction_plan(dtype, op: ReduceOp, where: str):
    """``(wire NumPy dtype, MPI op name, convert, divide)`` to reduce ``dtype`` tensors with ``op``.

    ``convert``: the data is reduced in the wire dtype (float32 for float16/bfloat16) and
    rounded back once; otherwise the wire dtype is a view of the same bytes. ``divide``:
    AVG, divide by the group size after the sum. Raises ``TypeError``/``ValueError`` for
    pairs PyTorch rejects or MPI cannot reduce.
    """
    name = dtype.name if hasattr(dtype, "name") else str(dtype)
    if dtype.is_quantized:
        raise TypeError(f"{where}: quantized tensors ({name}) cannot be reduced; dequantize() first")
    if dtype.is_complex:
        if op not in (ReduceOp.SUM, ReduceOp.AVG):
            raise ValueError(f"{where} does not support {op} on complex tensors")
        wire = np.float32 if dtype.itemsize == 8 else np.float64
        return np.dtype(wire), "SUM", False, op is ReduceOp.AVG
    if dtype.is_floating_point:
        if op in _BITWISE:
            raise TypeError(f"{where}: {op} is only supported for integer and bool tensors, got {name}")
        if dtype.itemsize == 1:
            raise TypeError(f"{where}: {name} tensors cannot be reduced (no arithmetic on float8); convert them first")
        if dtype.itemsize == 2:
            return np.dtype(np.float32), _MPI_OPS[op], True, op is ReduceOp.AVG
        return np.dtype(dtype.numpy), _MPI_OPS[op], False, op is ReduceOp.AVG
    if op is ReduceOp.AVG:
        raise TypeError(
            f"{where}: ReduceOp.AVG is only supported for floating point and complex tensors, got {name} "
            "(reduce with SUM and divide as you need)"
        )
    if name == "bool":
        return np.dtype(np.uint8), _BOOL_OPS[op], False, False
    return np.dtype(dtype.numpy), _MPI_OPS[op], False, False


def host_array(tensor) -> np.ndarray:
    """The NumPy view of a host-memory tensor (shares its memory)."""
    backend = _HOST_BACKENDS.get(tensor.device.type)
    if backend is None:
        backend = _HOST_BACKENDS[tensor.device.type] = backends.get(tensor.device.type)
    view = backend.host_view(tensor)
    if view is None:
        raise RuntimeError(f"opweave.distributed: {tensor.device} tensors are not in host memory")
    return view


_HOST_BACKENDS: dict = {}


class _Staged:
    """A tensor's memory as a flat contiguous array (its own memory when it is contiguous)."""

    __slots__ = ("view", "flat", "copied")

    def __init__(self, tensor, fill: bool = True):
        self.view = host_array(tensor)
        self.copied = not self.view.flags.c_contiguous
        if self.copied:
            staged = np.ascontiguousarray(self.view) if fill else np.empty(self.view.shape, self.view.dtype)
        else:
            staged = self.view
        self.flat = staged.reshape(-1)

    def bytes(self) -> np.ndarray:
        """The memory as uint8 (what data movement sends)."""
        return self.flat.view(np.uint8)

    def write_back(self) -> None:
        """Copy a staged result into the tensor (nothing to do when MPI wrote the tensor's memory)."""
        if self.copied:
            self.view[...] = self.flat.reshape(self.view.shape)


class _Watchdog:
    """Ends the job when a blocking MPI call runs past the timeout (PyTorch's NCCL watchdog does the same).

    A thread blocked inside MPI cannot raise: the watchdog thread prints the error with
    the blocked call's stack on stderr and calls ``MPI_Abort``, which stops every rank.
    """

    def __init__(self):
        self.current: dict = {}  # thread id -> (what, deadline, limit, global rank)
        self._thread = None
        self._lock = threading.Lock()

    def start(self) -> None:
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="opweave-distributed-watchdog", daemon=True)
                self._thread.start()

    def guard(self, what: str, limit: float, rank: int, fn) -> None:
        """Run ``fn()`` (a blocking MPI call) with the job ended if it takes longer than ``limit`` seconds."""
        ident = threading.get_ident()
        self.current[ident] = (what, time.monotonic() + limit, limit, rank)
        try:
            fn()
        finally:
            self.current.pop(ident, None)

    def _run(self) -> None:
        while True:
            time.sleep(0.2)
            now = time.monotonic()
            for ident, entry in list(self.current.items()):
                if now >= entry[1] and self.current.get(ident) is entry:
                    self._abort(ident, *entry)

    def _abort(self, ident: int, what: str, _deadline: float, limit: float, rank: int) -> None:
        frame = sys._current_frames().get(ident)
        stack = "".join(traceback.format_stack(frame)) if frame is not None else ""
        sys.stderr.write(
            f"[rank {rank}]: Traceback (most recent call last):\n{stack}"
            f"opweave.distributed.DistBackendError: [rank {rank}] {what} timed out after {limit:g} s "
            "(init_process_group(timeout=...)): a rank did not join the collective, or joined another one; "
            "aborting the job\n"
        )
        abort_job(1)


class _Job:
    """A collective launched with ``async_op=True``, run by the engine's worker thread."""

    __slots__ = ("what", "fn", "done", "exception")

    def __init__(self, what: str, fn):
        self.what, self.fn = what, fn
        self.done = threading.Event()
        self.exception: BaseException | None = None

    def Test(self) -> bool:  # noqa: N802 - the spelling of the MPI requests it stands beside
        return self.done.is_set()

    def wait_for(self, timeout: float | None) -> bool:
        """Block until done or ``timeout`` seconds pass; whether it is done."""
        return self.done.wait(timeout)


_watchdog = _Watchdog()


class MPIEngine:
    """Collectives of one process group on host memory (see the module docstring)."""

    def __init__(self, comm, timeout: float | None, global_rank: int):
        self.comm = comm
        self.rank = comm.Get_rank()
        self.size = comm.Get_size()
        self.timeout = timeout
        self._global_rank = global_rank
        self._types: dict = {}
        self._jobs: list = []  # launched collectives, oldest first
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._worker = None
        if timeout is not None:
            _watchdog.start()

    def close(self) -> None:
        """Finish the launched collectives (the communicator belongs to the group, which frees it)."""
        self._drain()

    # -- plumbing ------------------------------------------------------------------------------

    def _type(self, np_dtype):
        found = self._types.get(np_dtype)
        if found is None:
            MPI = mpi()
            names = {
                "float32": "FLOAT",
                "float64": "DOUBLE",
                "int8": "INT8_T",
                "int16": "INT16_T",
                "int32": "INT32_T",
                "int64": "INT64_T",
                "uint8": "UINT8_T",
                "uint16": "UINT16_T",
                "uint32": "UINT32_T",
                "uint64": "UINT64_T",
            }
            found = self._types[np_dtype] = getattr(MPI, names[np.dtype(np_dtype).name])
        return found

    def _buf(self, array: np.ndarray):
        return [array, self._type(array.dtype)]

    def _run(self, what: str, async_op: bool, blocking, finish, result, keep) -> Work:
        """Run a collective: now (after the launched ones), or launched on the worker thread (a Work).

        MPI's blocking and non-blocking collectives do not match each other, and a rank may
        launch what another runs blocking: so every collective is a blocking MPI call (the
        fastest algorithms), and launched ones run in order on one worker thread, as in
        PyTorch's ProcessGroupMPI. Point-to-point calls use MPI's own non-blocking calls.
        """
        if async_op:
            job = _Job(what, blocking)
            self._launch(job)
            return Work(what, [job], finish, result, self.timeout, keep)
        self._drain()
        self._call(what, blocking)
        return Work(what, (), finish, result)

    def _call(self, what: str, fn) -> None:
        if self.timeout is None:
            fn()
        else:
            _watchdog.guard(what, self.timeout, self._global_rank, fn)

    def _launch(self, job: _Job) -> None:
        with self._lock:
            self._jobs.append(job)
            self._wake.set()
            if self._worker is None:
                self._worker = threading.Thread(target=self._work, name="opweave-distributed-mpi", daemon=True)
                self._worker.start()

    def _drain(self) -> None:
        """Wait for the collectives launched before (they come first on every rank)."""
        while True:
            with self._lock:
                if not self._jobs:
                    return
                last = self._jobs[-1]
            last.done.wait()

    def _work(self) -> None:
        while True:
            self._wake.wait()
            with self._lock:
                if not self._jobs:
                    self._wake.clear()
                    continue
                job = self._jobs[0]
            try:
                self._call(job.what, job.fn)
            except BaseException as exc:  # handed to the Work's wait()
                job.exception = exc
            with self._lock:
                self._jobs.pop(0)
            job.done.set()

    def _reduce_buffers(self, tensor, op: ReduceOp, where: str):
        wire_dtype, op_name, convert, divide = reduction_plan(tensor.dtype, op, where)
        staged = _Staged(tensor)
        wire = staged.flat.astype(wire_dtype) if convert else staged.flat.view(wire_dtype)
        return staged, wire, getattr(mpi(), op_name), convert, divide

    def _finish_reduce(self, staged: _Staged, wire: np.ndarray, convert: bool, divide: bool):
        def finish():
            if divide:
                np.divide(wire, self.size, out=wire)
            if convert:
                staged.flat[...] = wire
            staged.write_back()

        return finish

    # -- collectives ---------------------------------------------------------------------------

    def all_reduce(self, tensor, op: ReduceOp, async_op: bool) -> Work:
        """Reduce ``tensor`` over the group, in place on every rank."""
        MPI = mpi()
        staged, wire, mpi_op, convert, divide = self._reduce_buffers(tensor, op, "all_reduce")
        buf = self._buf(wire)
        return self._run(
            "all_reduce",
            async_op,
            lambda: self.comm.Allreduce(MPI.IN_PLACE, buf, mpi_op),
            self._finish_reduce(staged, wire, convert, divide),
            [tensor],
            (staged, wire),
        )

    def reduce(self, tensor, op: ReduceOp, root: int, async_op: bool) -> Work:
        """Reduce ``tensor`` over the group into ``root``'s tensor (the others' are left unchanged)."""
        MPI = mpi()
        staged, wire, mpi_op, convert, divide = self._reduce_buffers(tensor, op, "reduce")
        buf = self._buf(wire)
        if self.rank == root:
            args = (MPI.IN_PLACE, buf, mpi_op, root)
            finish = self._finish_reduce(staged, wire, convert, divide)
        else:
            args = (buf, None, mpi_op, root)
            finish = None
        return self._run(
            "reduce",
            async_op,
            lambda: self.comm.Reduce(*args),
            finish,
            [tensor],
            (staged, wire),
        )

    def reduce_scatter(self, out, tensor, op: ReduceOp, async_op: bool) -> Work:
        """Reduce ``tensor`` (``size`` equal chunks) over the group; chunk ``rank`` lands in ``out``."""
        wire_dtype, op_name, convert, divide = reduction_plan(tensor.dtype, op, "reduce_scatter")
        source = _Staged(tensor)
        send = source.flat.astype(wire_dtype) if convert else source.flat.view(wire_dtype)
        target = _Staged(out, fill=False)
        recv = np.empty(target.flat.shape, wire_dtype) if convert else target.flat.view(wire_dtype)
        mpi_op = getattr(mpi(), op_name)
        args = (self._buf(send), self._buf(recv), mpi_op)
        return self._run(
            "reduce_scatter",
            async_op,
            lambda: self.comm.Reduce_scatter_block(*args),
            self._finish_reduce(target, recv, convert, divide),
            [out],
            (source, send, target, recv),
        )

    def broadcast(self, tensor, root: int, async_op: bool) -> Work:
        """Copy ``root``'s tensor into every rank's tensor."""
        staged = _Staged(tensor, fill=self.rank == root)
        buf = self._buf(staged.bytes())
        return self._run(
            "broadcast",
            async_op,
            lambda: self.comm.Bcast(buf, root),
            staged.write_back,
            [tensor],
            (staged,),
        )

    def all_gather(self, out, tensor, async_op: bool) -> Work:
        """Concatenate every rank's ``tensor`` (in rank order) into ``out`` on every rank."""
        source, target = _Staged(tensor), _Staged(out, fill=False)
        args = (self._buf(source.bytes()), self._buf(target.bytes()))
        return self._run(
            "all_gather",
            async_op,
            lambda: self.comm.Allgather(*args),
            target.write_back,
            [out],
            (source, target),
        )

    def gather(self, out, tensor, root: int, async_op: bool) -> Work:
        """Concatenate every rank's ``tensor`` into ``out`` on ``root`` (``out`` is ignored elsewhere)."""
        source = _Staged(tensor)
        target = _Staged(out, fill=False) if self.rank == root else None
        args = (self._buf(source.bytes()), self._buf(target.bytes()) if target else None, root)
        return self._run(
            "gather",
            async_op,
            lambda: self.comm.Gather(*args),
            target.write_back if target else None,
            [out],
            (source, target),
        )

    def scatter(self, out, tensor, root: int, async_op: bool) -> Work:
        """Chunk ``rank`` of ``root``'s ``tensor`` into ``out`` on every rank."""
        source = _Staged(tensor) if self.rank == root else None
        target = _Staged(out, fill=False)
        args = (self._buf(source.bytes()) if source else None, self._buf(target.bytes()), root)
        return self._run(
            "scatter",
            async_op,
            lambda: self.comm.Scatter(*args),
            target.write_back,
            [out],
            (source, target),
        )

    def all_to_all(self, out, tensor, out_splits, in_splits, async_op: bool) -> Work:
        """Rows ``in_splits[j]`` of ``tensor`` go to rank j; rank j's rows land at ``out_splits[j]`` of ``out``."""
        source, target = _Staged(tensor), _Staged(out, fill=False)
        row_in = tensor.itemsize * (tensor.numel() // tensor.shape[0] if tensor.ndim and tensor.shape[0] else 0)
        row_out = out.itemsize * (out.numel() // out.shape[0] if out.ndim and out.shape[0] else 0)
        send_counts = [s * row_in for s in in_splits]
        recv_counts = [s * row_out for s in out_splits]
        send = [source.bytes(), (send_counts, _displacements(send_counts)), mpi().BYTE]
        recv = [target.bytes(), (recv_counts, _displacements(recv_counts)), mpi().BYTE]
        return self._run(
            "all_to_all",
            async_op,
            lambda: self.comm.Alltoallv(send, recv),
            target.write_back,
            [out],
            (source, target),
        )

    def send(self, tensor, peer: int, tag: int, async_op: bool) -> Work:
        """Send ``tensor`` to ``peer``."""
        source = _Staged(tensor)
        buf = self._buf(source.bytes())
        if async_op:
            return Work("send", [self.comm.Isend(buf, peer, tag)], None, [tensor], self.timeout, (source,))
        self._call("send", lambda: self.comm.Send(buf, peer, tag))
        return Work("send", (), None, [tensor])

    def recv(self, tensor, peer: int | None, tag: int, async_op: bool) -> Work:
        """Receive into ``tensor`` from ``peer`` (any rank when None); ``work.source_rank()`` says who sent."""
        MPI = mpi()
        target = _Staged(tensor, fill=False)
        buf = self._buf(target.bytes())
        status = MPI.Status()
        source = MPI.ANY_SOURCE if peer is None else peer
        if async_op:
            request = self.comm.Irecv(buf, source, tag)
            work = Work("recv", [_StatusRequest(request, status)], target.write_back, [tensor], self.timeout, (target,))
        else:
            self._call("recv", lambda: self.comm.Recv(buf, source, tag, status))
            work = Work("recv", (), target.write_back, [tensor])
        work._source = status.Get_source
        return work

    def barrier(self, async_op: bool) -> Work:
        """Wait until every rank of the group reaches the barrier."""
        return self._run("barrier", async_op, self.comm.Barrier, None, [], ())


class _StatusRequest:
    """An MPI request whose ``Test`` fills a status (for the source of a receive)."""

    __slots__ = ("request", "status")

    def __init__(self, request, status):
        self.request, self.status = request, status

    def Test(self) -> bool:  # noqa: N802 - MPI's spelling, as the requests it stands beside
        return self.request.Test(self.status)


def _displacements(counts) -> list[int]:
    out, total = [], 0
    for c in counts:
        out.append(total)
        total += c
    return out
