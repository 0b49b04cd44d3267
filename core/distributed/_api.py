"""The eager collectives of ``opweave.distributed`` (PyTorch's names, arguments and semantics).

Each function checks its arguments, translates global ranks to group ranks,
and calls a ``c10d::`` op (so the dispatcher, the profiler and each backend's
kernel see it). ``async_op=True`` launches the op and returns a :class:`Work`;
otherwise the call returns None when the collective is done. On a rank outside
``group`` every collective returns None, as in PyTorch.
"""

from __future__ import annotations

from dataclasses import dataclass

import opweave

from . import _group, _kernels
from ._reduce_op import ReduceOp
from ._work import Work


def _c10d(name: str):
    return getattr(opweave.ops.c10d, name).default


def _call(name: str, args: tuple, async_op: bool):
    """Run ``c10d::name``; a Work when ``async_op`` (a completed one if the op could not be launched).

    For the ``_out`` ops the last of ``args`` is the ``out=`` tensor.
    """
    op = _c10d(name)
    kwargs = {}
    if name.endswith("_out"):
        args, kwargs = args[:-1], {"out": args[-1]}
    if not async_op:
        op(*args, **kwargs)
        return None
    _kernels.set_launching(True)
    try:
        result = op(*args, **kwargs)
    finally:
        _kernels.set_launching(False)
    work = _kernels.take_work()
    if work is None:  # staged through the host: already complete
        results = [result] if isinstance(result, opweave.Tensor) else []
        work = Work(name, (), None, results)
    return _Handle(work)


class _Handle(Work):
    """The Work an eager call returns: waiting also clears the op's ``wait_tensor`` entry."""

    def __init__(self, work: Work):
        self._inner = work

    def wait(self, timeout=None) -> bool:
        """Block until the collective is done (``DistBackendError`` after ``timeout``)."""
        done = self._inner.wait(timeout)
        _kernels.forget(self._inner)
        return done

    def is_completed(self) -> bool:
        """Whether the collective has finished."""
        return self._inner.is_completed()

    def result(self) -> list:
        """The tensors the collective wrote."""
        return self._inner.result()

    def is_success(self) -> bool:
        """Whether it finished without an error."""
        return self._inner.is_success()

    def exception(self):
        """The error it finished with, if any."""
        return self._inner.exception()

    def source_rank(self) -> int:
        """For a receive: the group rank the message came from."""
        return self._inner.source_rank()

    def __repr__(self) -> str:
        return repr(self._inner)


def _check_tensor(value, where: str, arg: str = "tensor"):
    if not isinstance(value, opweave.Tensor):
        raise TypeError(f"{where}: {arg} must be an opweave Tensor, got {type(value).__name__}")
    return value


def _check_list(values, where: str, arg: str) -> list:
    if not isinstance(values, (list, tuple)) or not all(isinstance(v, opweave.Tensor) for v in values):
        raise TypeError(f"{where}: {arg} must be a list of opweave Tensors")
    return list(values)


def _op(op, where: str) -> ReduceOp:
    if not isinstance(op, ReduceOp):
        raise TypeError(f"{where}: op must be a ReduceOp, got {op!r}")
    return op


def _group_rank(group, rank, group_rank, where: str, what: str, default: int | None = None) -> int:
    """The group rank meant by a global ``rank`` or a ``group_rank`` (PyTorch's ``_canonicalize_group_rank``)."""
    if group_rank is not None:
        if rank is not None:
            raise ValueError(f"{where}: can't specify both {what} and group_{what}")
        if not 0 <= group_rank < group.size():
            raise ValueError(f"{where}: group_{what}={group_rank} is not a rank of a group of {group.size()}")
        return group_rank
    if rank is None:
        if default is None:
            raise ValueError(f"{where}: must specify {what} or group_{what}")
        rank = group.ranks[default] if default < group.size() else default
    return group.group_rank(rank, where)


# -- collectives -------------------------------------------------------------------------------


def all_reduce(tensor, op: ReduceOp = ReduceOp.SUM, group=None, async_op: bool = False):
    """Reduce ``tensor`` over the group; every rank's ``tensor`` holds the result (in place)."""
    _check_tensor(tensor, "all_reduce")
    op = _op(op, "all_reduce")
    g = _group.resolve(group, "all_reduce")
    if g is None:
        return None
    return _call("all_reduce_", (tensor, op.value, g.group_name), async_op)


def broadcast(tensor, src: int | None = None, group=None, async_op: bool = False, group_src: int | None = None):
    """Copy rank ``src``'s ``tensor`` into ``tensor`` on every rank of the group."""
    _check_tensor(tensor, "broadcast")
    g = _group.resolve(group, "broadcast")
    if g is None:
        return None
    root = _group_rank(g, src, group_src, "broadcast", "src")
    return _call("broadcast_", (tensor, root, g.group_name), async_op)


def reduce(
    tensor,
    dst: int | None = None,
    op: ReduceOp = ReduceOp.SUM,
    group=None,
    async_op: bool = False,
    group_dst: int | None = None,
):
    """Reduce ``tensor`` over the group into rank ``dst``'s ``tensor`` (the others' are left as they were)."""
    _check_tensor(tensor, "reduce")
    op = _op(op, "reduce")
    g = _group.resolve(group, "reduce")
    if g is None:
        return None
    root = _group_rank(g, dst, group_dst, "reduce", "dst")
    return _call("reduce_", (tensor, root, op.value, g.group_name), async_op)


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op: bool = False):
    """Every rank's ``input_tensor`` concatenated along dim 0 (rank order) into ``output_tensor``.

    As in PyTorch, ``output_tensor`` may also be of shape ``[world_size, *input.shape]``.
    """
    _check_tensor(output_tensor, "all_gather_into_tensor", "output_tensor")
    _check_tensor(input_tensor, "all_gather_into_tensor", "input_tensor")
    g = _group.resolve(group, "all_gather_into_tensor")
    if g is None:
        return None
    out = _as_rows(output_tensor, input_tensor, g.size(), "all_gather_into_tensor", "output_tensor")
    return _call("all_gather_into_tensor_out", (input_tensor, g.size(), g.group_name, out), async_op)


def _as_rows(big, small, n: int, where: str, arg: str):
    """``big`` viewed as ``n`` chunks of ``small`` along dim 0 (accepting PyTorch's stacked layout too)."""
    if small.ndim and tuple(big.shape) == (n, *tuple(small.shape)):
        if not big.is_contiguous():
            raise ValueError(f"{where}: a stacked {arg} must be contiguous")
        return big.view(n * small.shape[0], *tuple(small.shape)[1:])
    return big  # the c10d:: op checks the concatenated layout


def reduce_scatter_tensor(output, input, op: ReduceOp = ReduceOp.SUM, group=None, async_op: bool = False):
    """Reduce ``input`` over the group and scatter it: chunk ``rank`` (along dim 0) lands in ``output``.

    As in PyTorch, ``input`` may also be of shape ``[world_size, *output.shape]``.
    """
    _check_tensor(output, "reduce_scatter_tensor", "output")
    _check_tensor(input, "reduce_scatter_tensor", "input")
    op = _op(op, "reduce_scatter_tensor")
    g = _group.resolve(group, "reduce_scatter_tensor")
    if g is None:
        return None
    if output.ndim == 0:
        raise ValueError("reduce_scatter_tensor: output must have at least one dimension")
    source = _as_rows(input, output, g.size(), "reduce_scatter_tensor", "input")
    return _call("reduce_scatter_tensor_out", (source, op.value, g.size(), g.group_name, output), async_op)


def all_to_all_single(
    output, input, output_split_sizes=None, input_split_sizes=None, group=None, async_op: bool = False
):
    """Split ``input`` along dim 0 (``input_split_sizes``, or evenly) and send part j to rank j.

    What rank j sends lands in ``output`` at rows ``output_split_sizes[j]`` (or evenly).
    """
    _check_tensor(output, "all_to_all_single", "output")
    _check_tensor(input, "all_to_all_single", "input")
    g = _group.resolve(group, "all_to_all_single")
    if g is None:
        return None
    out_splits = list(output_split_sizes) if output_split_sizes is not None else []
    in_splits = list(input_split_sizes) if input_split_sizes is not None else []
    if not out_splits and output.ndim and output.shape[0] % g.size():
        raise ValueError(
            f"all_to_all_single: dim 0 of output ({output.shape[0]}) does not split evenly over {g.size()} ranks"
        )
    if not out_splits and output.ndim:
        out_splits = [output.shape[0] // g.size()] * g.size()
    return _call("all_to_all_single_out", (input, out_splits, in_splits, g.group_name, output), async_op)


def all_gather(tensor_list, tensor, group=None, async_op: bool = False):
    """Every rank's ``tensor`` into ``tensor_list[rank]`` on every rank (tensors of the same shape)."""
    _check_tensor(tensor, "all_gather")
    outputs = _check_list(tensor_list, "all_gather", "tensor_list")
    g = _group.resolve(group, "all_gather")
    if g is None:
        return None
    _check_chunks(outputs, tensor, g.size(), "all_gather", "tensor_list")
    gathered = opweave.empty(_stacked(tensor, g.size()), dtype=tensor.dtype, device=tensor.device)
    return _list_call(
        "all_gather_into_tensor_out", (tensor, g.size(), g.group_name, gathered), async_op, gathered, outputs, tensor
    )


def _stacked(like, n: int) -> tuple:
    return (n * like.shape[0], *tuple(like.shape)[1:]) if like.ndim else (n,)


def _check_chunks(chunks, like, n: int, where: str, arg: str) -> None:
    if len(chunks) != n:
        raise ValueError(f"{where}: {arg} has {len(chunks)} tensors for a group of {n} ranks")
    for i, t in enumerate(chunks):
        if t.dtype != like.dtype:
            raise TypeError(f"{where}: {arg}[{i}] has dtype {t.dtype}, expected {like.dtype}")
        if tuple(t.shape) != tuple(like.shape):
            raise ValueError(f"{where}: {arg}[{i}] has shape {list(t.shape)}, expected {list(like.shape)}")


def _unstack(gathered, outputs, like) -> None:
    rows = like.shape[0] if like.ndim else 1
    for i, t in enumerate(outputs):
        chunk = gathered[i * rows : (i + 1) * rows] if like.ndim else gathered[i]
        t.copy_(chunk)


def _list_call(name, args, async_op, gathered, outputs, like):
    """Run a gathering op into one buffer, then copy its chunks into ``outputs`` (at wait, when launched)."""
    if not async_op:
        _call(name, args, False)
        _unstack(gathered, outputs, like)
        return None
    handle = _call(name, args, True)
    return _Then(handle, lambda: _unstack(gathered, outputs, like), outputs)


class _Then(Work):
    """A Work that runs ``after`` once the inner one completes (copies into list outputs)."""

    def __init__(self, inner, after, result):
        self._inner, self._after, self._outputs = inner, after, list(result)

    def _run_after(self) -> None:
        after, self._after = self._after, None
        if after is not None:
            after()

    def wait(self, timeout=None) -> bool:
        """Block until the collective is done and the outputs are filled."""
        self._inner.wait(timeout)
        self._run_after()
        return True

    def is_completed(self) -> bool:
        """Whether the collective has finished (the outputs are filled when it has)."""
        if self._inner.is_completed():
            self._run_after()
            return True
        return False

    def result(self) -> list:
        """The output tensors."""
        return list(self._outputs)

    def is_success(self) -> bool:
        """Whether it finished without an error."""
        return self.is_completed() and self._inner.exception() is None

    def exception(self):
        """The error it finished with, if any."""
        return self._inner.exception()

    def __repr__(self) -> str:
        return repr(self._inner)


def reduce_scatter(output, input_list, op: ReduceOp = ReduceOp.SUM, group=None, async_op: bool = False):
    """Reduce ``input_list[j]`` over the group into ``output`` on rank j."""
    _check_tensor(output, "reduce_scatter", "output")
    inputs = _check_list(input_list, "reduce_scatter", "input_list")
    op = _op(op, "reduce_scatter")
    g = _group.resolve(group, "reduce_scatter")
    if g is None:
        return None
    _check_chunks(inputs, output, g.size(), "reduce_scatter", "input_list")
    if output.ndim:
        source, target = opweave.cat(inputs), output
    else:  # 0-dim chunks: reduce-scatter a vector into a one-element view of output
        source, target = opweave.cat([t.reshape(1) for t in inputs]), output.reshape(1)
    return _call("reduce_scatter_tensor_out", (source, op.value, g.size(), g.group_name, target), async_op)


def all_to_all(output_tensor_list, input_tensor_list, group=None, async_op: bool = False):
    """``input_tensor_list[j]`` goes to rank j; what rank j sends lands in ``output_tensor_list[j]``."""
    outputs = _check_list(output_tensor_list, "all_to_all", "output_tensor_list")
    inputs = _check_list(input_tensor_list, "all_to_all", "input_tensor_list")
    g = _group.resolve(group, "all_to_all")
    if g is None:
        return None
    n = g.size()
    if len(inputs) != n or len(outputs) != n:
        raise ValueError(f"all_to_all: expected {n} input and {n} output tensors, got {len(inputs)} and {len(outputs)}")
    dtypes = {t.dtype for t in inputs + outputs}
    if len(dtypes) != 1:
        raise TypeError(f"all_to_all: every tensor must have the same dtype, got {sorted(map(str, dtypes))}")
    send = opweave.cat([t.reshape(-1) for t in inputs])
    recv = opweave.empty((sum(t.numel() for t in outputs),), dtype=send.dtype, device=send.device)
    in_splits = [t.numel() for t in inputs]
    out_splits = [t.numel() for t in outputs]

    def unpack():
        offset = 0
        for t in outputs:
            t.copy_(recv[offset : offset + t.numel()].reshape(tuple(t.shape)))
            offset += t.numel()

    args = (send, out_splits, in_splits, g.group_name, recv)
    if not async_op:
        _call("all_to_all_single_out", args, False)
        unpack()
        return None
    return _Then(_call("all_to_all_single_out", args, True), unpack, outputs)


def gather(
    tensor, gather_list=None, dst: int | None = None, group=None, async_op: bool = False, group_dst: int | None = None
):
    """Every rank's ``tensor`` into ``gather_list`` on rank ``dst`` (0 by default)."""
    _check_tensor(tensor, "gather")
    g = _group.resolve(group, "gather")
    if g is None:
        return None
    root = _group_rank(g, dst, group_dst, "gather", "dst", default=0)
    if g.rank() == root:
        if gather_list is None:
            raise ValueError("gather: gather_list must be given on the destination rank")
        outputs = _check_list(gather_list, "gather", "gather_list")
        _check_chunks(outputs, tensor, g.size(), "gather", "gather_list")
        gathered = opweave.empty(_stacked(tensor, g.size()), dtype=tensor.dtype, device=tensor.device)
    else:
        if gather_list:
            raise ValueError("gather: gather_list must be empty on ranks other than the destination")
        outputs, gathered = [], opweave.empty((0,), dtype=tensor.dtype, device=tensor.device)
    return _list_call("gather_", (tensor, gathered, root, g.group_name), async_op, gathered, outputs, tensor)


def scatter(
    tensor, scatter_list=None, src: int | None = None, group=None, async_op: bool = False, group_src: int | None = None
):
    """Chunk ``scatter_list[rank]`` of rank ``src`` (0 by default) into ``tensor`` on every rank."""
    _check_tensor(tensor, "scatter")
    g = _group.resolve(group, "scatter")
    if g is None:
        return None
    root = _group_rank(g, src, group_src, "scatter", "src", default=0)
    if g.rank() == root:
        if scatter_list is None:
            raise ValueError("scatter: scatter_list must be given on the source rank")
        inputs = _check_list(scatter_list, "scatter", "scatter_list")
        _check_chunks(inputs, tensor, g.size(), "scatter", "scatter_list")
        source = opweave.cat([t.reshape(1) for t in inputs]) if not tensor.ndim else opweave.cat(inputs)
    else:
        if scatter_list:
            raise ValueError("scatter: scatter_list must be empty on ranks other than the source")
        source = opweave.empty((0,), dtype=tensor.dtype, device=tensor.device)
    return _call("scatter_", (tensor, source, root, g.group_name), async_op)


def barrier(group=None, async_op: bool = False, device_ids=None):
    """Wait until every rank of the group reaches the barrier."""
    g = _group.resolve(group, "barrier")
    if g is None:
        return None
    work = g.engine("cpu").barrier(async_op)
    return work if async_op else None


# -- point to point ----------------------------------------------------------------------------


def _peer(g, rank, group_rank, where: str, what: str) -> int:
    peer = _group_rank(g, rank, group_rank, where, what)
    if peer == g.rank():
        raise ValueError(
            f"{where}: Invalid {what} rank: {what} rank should not be the same as the rank of the current process."
        )
    return peer


def isend(tensor, dst: int | None = None, group=None, tag: int = 0, group_dst: int | None = None):
    """Send ``tensor`` to rank ``dst``; returns a Work (don't modify ``tensor`` before it completes)."""
    _check_tensor(tensor, "isend")
    g = _group.resolve(group, "isend")
    if g is None:
        return None
    return _call("send", (tensor, _peer(g, dst, group_dst, "isend", "dst"), tag, g.group_name), True)


def send(tensor, dst: int | None = None, group=None, tag: int = 0, group_dst: int | None = None) -> None:
    """Send ``tensor`` to rank ``dst`` (returns when the message is on its way)."""
    _check_tensor(tensor, "send")
    g = _group.resolve(group, "send")
    if g is None:
        return None
    _call("send", (tensor, _peer(g, dst, group_dst, "send", "dst"), tag, g.group_name), False)
    return None


def irecv(tensor, src: int | None = None, group=None, tag: int = 0, group_src: int | None = None):
    """Receive into ``tensor`` from rank ``src`` (any rank when None); returns a Work."""
    _check_tensor(tensor, "irecv")
    g = _group.resolve(group, "irecv")
    if g is None:
        return None
    peer = -1 if src is None and group_src is None else _peer(g, src, group_src, "irecv", "src")
    return _call("recv_", (tensor, peer, tag, g.group_name), True)


def recv(tensor, src: int | None = None, group=None, tag: int = 0, group_src: int | None = None) -> int:
    """Receive into ``tensor`` from rank ``src`` (any rank when None); returns the sender's global rank."""
    _check_tensor(tensor, "recv")
    g = _group.resolve(group, "recv")
    if g is None:
        return -1
    peer = -1 if src is None and group_src is None else _peer(g, src, group_src, "recv", "src")
    work = _call("recv_", (tensor, peer, tag, g.group_name), True)
    work.wait()
    return g.ranks[work.source_rank()]


@dataclass
class P2POp:
    """One send or receive of :func:`batch_isend_irecv`: ``op`` is ``isend`` or ``irecv`` (PyTorch's P2POp)."""

    op: object
    tensor: object
    peer: int | None = None
    group: object = None
    tag: int = 0
    group_peer: int | None = None

    def __post_init__(self):
        if self.op not in (isend, irecv):
            raise ValueError("P2POp: op must be opweave.distributed.isend or opweave.distributed.irecv")
        _check_tensor(self.tensor, "P2POp")
        if self.peer is None and self.group_peer is None:
            raise ValueError("P2POp: must specify peer or group_peer")


def batch_isend_irecv(p2p_op_list) -> list:
    """Launch every send and receive of ``p2p_op_list``; returns their Works (PyTorch's batch_isend_irecv)."""
    ops = list(p2p_op_list)
    if not ops or not all(isinstance(p, P2POp) for p in ops):
        raise ValueError("batch_isend_irecv: expected a non-empty list of P2POp")
    works = []
    for p in ops:
        if p.op is isend:
            works.append(isend(p.tensor, p.peer, p.group, p.tag, p.group_peer))
        else:
            works.append(irecv(p.tensor, p.peer, p.group, p.tag, p.group_peer))
    return [w for w in works if w is not None]
