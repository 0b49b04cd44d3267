"""The NCCL engine: ``opweave.distributed``'s collectives on CUDA tensors (``docs/distributed.md``).

One engine per process group, made on the group's first collective of a CUDA tensor. It makes
one NCCL communicator per device the group uses (on first use, collectively: group rank 0 asks
``ncclGetUniqueId`` and the id travels to the other ranks over the group's host engine, MPI),
then runs each ``Engine`` method as NCCL calls on the tensors' device pointers, queued on the
tensor's current stream (``opweave.cuda.current_stream()``), as PyTorch's NCCL collectives are
ordered after the work queued there before. A non-contiguous tensor is staged through a
contiguous copy on the same stream.

``async_op=False`` returns once the collective is queued (later work on the stream sees its
result; host copies synchronise the stream, as usual); ``async_op=True`` returns a ``Work`` whose
``wait()``/``is_completed()`` follow an event recorded after the collective. ``barrier()`` all-reduces
one element on the current device and waits for it.

Reductions NCCL cannot do (:data:`opweave_cuda.nccl.HOST`: bitwise operations on integers, BXOR on
bool, int16/uint16) are reduced over MPI on host copies, with a warning the first time.
"""

from __future__ import annotations

import time
import warnings

import opweave
from opweave.distributed import ReduceOp, Work

from . import nccl as _nccl

__all__ = ["CudaDevices", "NCCLEngine", "register"]


class _RecordedEvent:
    """A CUDA event recorded on a stream (destroyed when collected)."""

    def __init__(self, rt, stream: int):
        from . import _driver

        rt.enter()
        self._driver = _driver
        flags = rt.driver.CUevent_flags.CU_EVENT_DISABLE_TIMING.value
        self.handle = int(_driver.call("cuEventCreate", flags))
        _driver.call("cuEventRecord", self.handle, stream)

    def query(self) -> bool:
        driver, _ = self._driver.load()
        (err,) = driver.cuEventQuery(self.handle)
        if err == driver.CUresult.CUDA_ERROR_NOT_READY:
            return False
        if err != driver.CUresult.CUDA_SUCCESS:
            raise RuntimeError(f"cuEventQuery failed: {self._driver.error_text(driver, err)}")
        return True

    def synchronize(self) -> None:
        self._driver.call("cuEventSynchronize", self.handle)

    def __del__(self):
        try:
            self._driver.call("cuEventDestroy", self.handle)
        except Exception:  # interpreter shutdown
            pass


class CudaDevices:
    """What the engine needs of the CUDA backend: contexts, current streams and events of ``cuda:N``."""

    device_type = "cuda"

    def _rt(self, index: int):
        from ._backend import runtime_at

        return runtime_at(index)

    def index(self, device) -> int:
        """The index of ``device`` (its own, else the current CUDA device)."""
        return device.index if device.index is not None else opweave.backends.current_device_index("cuda")

    def enter(self, index: int) -> None:
        """Make the device's context current (NCCL calls need it)."""
        self._rt(index).enter()

    def stream(self, index: int) -> int:
        """The raw current stream of the device in this thread."""
        return self._rt(index).stream()

    def event(self, index: int, stream: int) -> _RecordedEvent:
        """An event recorded on ``stream`` now (``query()``, ``synchronize()``)."""
        return _RecordedEvent(self._rt(index), stream)


class _EventRequest:
    """A launched collective as the ``Work`` of ``opweave.distributed`` polls it: done when its event is."""

    __slots__ = ("event",)

    def __init__(self, event):
        self.event = event

    def Test(self) -> bool:  # noqa: N802 - the spelling of the MPI requests it stands beside
        return self.event.query()

    def wait_for(self, timeout: float | None) -> bool:
        """Block until the collective is done or ``timeout`` seconds have passed; whether it is done."""
        if timeout is None:
            self.event.synchronize()
            return True
        deadline = time.monotonic() + timeout
        while not self.event.query():
            if time.monotonic() >= deadline:
                return False
            time.sleep(5e-5)
        return True


_warned: set = set()


def _warn_host(what: str, dtype, op: ReduceOp) -> None:
    key = (what, dtype.name, op)
    if key not in _warned:
        _warned.add(key)
        warnings.warn(
            f"{what}: NCCL cannot reduce {dtype.name} tensors with {op!r} (it has no bitwise operations and no 16-bit "
            "integers); reducing over MPI on host copies instead",
            stacklevel=4,
        )


def _dense(tensor):
    """``tensor`` when it is contiguous, else a contiguous copy (on the same stream)."""
    return tensor if tensor.is_contiguous() else tensor.contiguous()


def _nbytes(tensor) -> int:
    return tensor.numel() * tensor.element_size()


class NCCLEngine:
    """The collectives of one process group on CUDA tensors (see the module docstring).

    ``devices`` gives contexts, streams and events (:class:`CudaDevices`); ``library`` the NCCL binding
    (``opweave_cuda.nccl``): the tests put stand-ins there.
    """

    def __init__(self, group, devices=None, library=None):
        self.group = group
        self.rank = group.rank()
        self.size = group.size()
        self.timeout = group.timeout
        self.devices = devices if devices is not None else CudaDevices()
        self.nccl = library if library is not None else _nccl
        self._comms: dict = {}

    # -- plumbing --------------------------------------------------------------------------------

    def _host(self):
        return self.group.engine("cpu")

    def _comm(self, index: int):
        """The communicator of device ``index`` (made on first use: a collective call on every rank)."""
        comm = self._comms.get(index)
        if comm is None:
            uid = opweave.zeros(self.nccl.UNIQUE_ID_BYTES, dtype=opweave.uint8)
            if self.rank == 0:
                uid.copy_(opweave.tensor(list(self.nccl.unique_id()), dtype=opweave.uint8))
            self._host().broadcast(uid, 0, False)
            self.devices.enter(index)
            comm = self._comms[index] = self.nccl.Communicator(self.size, uid.numpy().tobytes(), self.rank)
        return comm

    def _run(self, what: str, tensor, async_op: bool, calls, result, keep=()) -> Work:
        """Queue ``calls(comm, stream)`` on the current stream of ``tensor``'s device; a Work for it."""
        index = self.devices.index(tensor.device)
        comm = self._comm(index)
        self.devices.enter(index)
        stream = self.devices.stream(index)
        calls(comm, stream)
        if not async_op:
            return Work(what, (), None, result)
        event = self.devices.event(index, stream)
        return Work(what, [_EventRequest(event)], None, result, self.timeout, keep)

    def _reduction(self, tensor, op: ReduceOp, where: str):
        return self.nccl.reduction_plan(tensor.dtype.name, op.value, where)

    def _on_host(self, what: str, op: ReduceOp, written, run) -> Work:
        """Reduce on host copies over MPI: ``run(host engine, *host copies)``, then copy ``written`` back."""
        _warn_host(what, written[0].dtype, op)
        hosts = [t.cpu() for t in written]
        run(self._host(), *hosts)
        for tensor, host in zip(written, hosts):
            tensor.copy_(host)
        return Work(what, (), None, [written[0]])

    # -- collectives -----------------------------------------------------------------------------

    def all_reduce(self, tensor, op: ReduceOp, async_op: bool) -> Work:
        """Reduce ``tensor`` over the group, in place on every rank (``ncclAllReduce``)."""
        plan = self._reduction(tensor, op, "all_reduce")
        if plan == self.nccl.HOST:
            return self._on_host("all_reduce", op, [tensor], lambda host, t: host.all_reduce(t, op, False))
        dense = _dense(tensor)

        def calls(comm, stream):
            if dense.numel():
                ptr = dense.data_ptr()
                comm.all_reduce(ptr, ptr, dense.numel() * plan.factor, plan.datatype, plan.op, stream)
            if dense is not tensor:
                tensor.copy_(dense)

        return self._run("all_reduce", tensor, async_op, calls, [tensor], (dense,))

    def reduce(self, tensor, op: ReduceOp, root: int, async_op: bool) -> Work:
        """Reduce ``tensor`` over the group into ``root``'s tensor (``ncclReduce``; the others are unchanged)."""
        plan = self._reduction(tensor, op, "reduce")
        if plan == self.nccl.HOST:
            return self._on_host("reduce", op, [tensor], lambda host, t: host.reduce(t, op, root, False))
        dense = _dense(tensor)

        def calls(comm, stream):
            if dense.numel():
                ptr = dense.data_ptr()
                comm.reduce(ptr, ptr, dense.numel() * plan.factor, plan.datatype, plan.op, root, stream)
            if dense is not tensor and self.rank == root:
                tensor.copy_(dense)

        return self._run("reduce", tensor, async_op, calls, [tensor], (dense,))

    def reduce_scatter(self, out, tensor, op: ReduceOp, async_op: bool) -> Work:
        """Reduce ``tensor`` (``size`` chunks along dim 0); chunk ``rank`` lands in ``out`` (``ncclReduceScatter``)."""
        plan = self._reduction(tensor, op, "reduce_scatter")
        if plan == self.nccl.HOST:
            return self._on_host(
                "reduce_scatter", op, [out, tensor], lambda host, o, t: host.reduce_scatter(o, t, op, False)
            )
        source, target = _dense(tensor), _dense(out)

        def calls(comm, stream):
            if target.numel():
                count = target.numel() * plan.factor
                comm.reduce_scatter(source.data_ptr(), target.data_ptr(), count, plan.datatype, plan.op, stream)
            if target is not out:
                out.copy_(target)

        return self._run("reduce_scatter", out, async_op, calls, [out], (source, target))

    def broadcast(self, tensor, root: int, async_op: bool) -> Work:
        """Copy ``root``'s tensor into every rank's tensor (``ncclBroadcast`` of its bytes)."""
        dense = _dense(tensor)

        def calls(comm, stream):
            if dense.numel():
                ptr = dense.data_ptr()
                comm.broadcast(ptr, ptr, _nbytes(dense), self.nccl.ncclUint8, root, stream)
            if dense is not tensor:
                tensor.copy_(dense)

        return self._run("broadcast", tensor, async_op, calls, [tensor], (dense,))

    def all_gather(self, out, tensor, async_op: bool) -> Work:
        """Every rank's ``tensor`` concatenated (rank order) into ``out`` (``ncclAllGather`` of bytes)."""
        source, target = _dense(tensor), _dense(out)

        def calls(comm, stream):
            if source.numel():
                comm.all_gather(source.data_ptr(), target.data_ptr(), _nbytes(source), self.nccl.ncclUint8, stream)
            if target is not out:
                out.copy_(target)

        return self._run("all_gather", out, async_op, calls, [out], (source, target))

    def all_to_all(self, out, tensor, out_splits, in_splits, async_op: bool) -> Work:
        """Rows ``in_splits[j]`` of ``tensor`` go to rank j; rank j's rows land at ``out_splits[j]`` of ``out``.

        One NCCL group of ``ncclSend``/``ncclRecv`` (a rank sends to and receives from itself too).
        """
        source, target = _dense(tensor), _dense(out)
        row_in = _nbytes(source) // source.shape[0] if source.shape[0] else 0
        row_out = _nbytes(target) // target.shape[0] if target.shape[0] else 0
        uint8 = self.nccl.ncclUint8

        def calls(comm, stream):
            src, dst = source.data_ptr(), target.data_ptr()
            sent = received = 0
            with comm.group():
                for peer in range(self.size):
                    if in_splits[peer] and row_in:
                        comm.send(src + sent, in_splits[peer] * row_in, uint8, peer, stream)
                    if out_splits[peer] and row_out:
                        comm.recv(dst + received, out_splits[peer] * row_out, uint8, peer, stream)
                    sent += in_splits[peer] * row_in
                    received += out_splits[peer] * row_out
            if target is not out:
                out.copy_(target)

        return self._run("all_to_all", out, async_op, calls, [out], (source, target))

    def gather(self, out, tensor, root: int, async_op: bool) -> Work:
        """Every rank's ``tensor`` concatenated into ``out`` on ``root`` (grouped ``ncclSend``/``ncclRecv``)."""
        source = _dense(tensor)
        target = _dense(out) if self.rank == root else None
        nbytes, uint8 = _nbytes(source), self.nccl.ncclUint8

        def calls(comm, stream):
            if nbytes:
                with comm.group():
                    comm.send(source.data_ptr(), nbytes, uint8, root, stream)
                    if target is not None:
                        for peer in range(self.size):
                            comm.recv(target.data_ptr() + peer * nbytes, nbytes, uint8, peer, stream)
            if target is not None and target is not out:
                out.copy_(target)

        return self._run("gather", tensor, async_op, calls, [out], (source, target))

    def scatter(self, out, tensor, root: int, async_op: bool) -> Work:
        """Chunk ``rank`` (along dim 0) of ``root``'s ``tensor`` into ``out`` (grouped ``ncclSend``/``ncclRecv``)."""
        source = _dense(tensor) if self.rank == root else None
        target = _dense(out)
        nbytes, uint8 = _nbytes(target), self.nccl.ncclUint8

        def calls(comm, stream):
            if nbytes:
                with comm.group():
                    if source is not None:
                        for peer in range(self.size):
                            comm.send(source.data_ptr() + peer * nbytes, nbytes, uint8, peer, stream)
                    comm.recv(target.data_ptr(), nbytes, uint8, root, stream)
            if target is not out:
                out.copy_(target)

        return self._run("scatter", out, async_op, calls, [out], (source, target))

    def send(self, tensor, peer: int, tag: int, async_op: bool) -> Work:
        """``ncclSend`` of ``tensor``'s bytes to ``peer`` (NCCL has no tags: messages match in order, as PyTorch's)."""
        source = _dense(tensor)

        def calls(comm, stream):
            if source.numel():
                comm.send(source.data_ptr(), _nbytes(source), self.nccl.ncclUint8, peer, stream)

        return self._run("send", tensor, async_op, calls, [tensor], (source,))

    def recv(self, tensor, peer: int | None, tag: int, async_op: bool) -> Work:
        """``ncclRecv`` into ``tensor`` from ``peer``; NCCL cannot receive from any rank (``peer`` None)."""
        if peer is None:
            raise RuntimeError(
                "recv: the NCCL engine needs the source rank (src); receiving from any rank works on CPU tensors (MPI)"
            )
        target = _dense(tensor)

        def calls(comm, stream):
            if target.numel():
                comm.recv(target.data_ptr(), _nbytes(target), self.nccl.ncclUint8, peer, stream)
            if target is not tensor:
                tensor.copy_(target)

        work = self._run("recv", tensor, async_op, calls, [tensor], (target,))
        work._source = peer
        return work

    def barrier(self, async_op: bool) -> Work:
        """All-reduce one element on the current device; wait for it unless ``async_op``."""
        device_type = self.devices.device_type
        index = opweave.backends.current_device_index(device_type)
        token = opweave.zeros(1, device=opweave.device(device_type, index))
        work = self.all_reduce(token, ReduceOp.SUM, True)
        if not async_op:
            work.wait()
        return work

    def close(self) -> None:
        """Destroy the communicators (``ncclCommDestroy``, after their queued work)."""
        comms, self._comms = self._comms, {}
        for comm in comms.values():
            comm.destroy()


def register(registry, backend) -> None:
    """Declare the ``distributed.nccl`` feature and, when NCCL and a CUDA device are there, the engine of CUDA tensors.

    Without them, CUDA tensors are staged through host memory by the ``c10d::`` decompositions (MPI).
    """
    ok, reason = _nccl.available()
    if ok and not backend.is_available():
        ok, reason = False, f"NCCL needs a CUDA device: {backend.unavailable_reason()}"
    registry.feature("distributed.nccl", ok, reason)
    if ok:
        import opweave.distributed as dist

        dist.register_engine(backend.name, NCCLEngine, registry, backend="nccl")
