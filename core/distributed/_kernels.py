"""Kernels of the ``c10d::`` ops (schemas in ``opweave._c10d``).

:func:`register_device` registers one kernel per op for a device type whose
tensors have a communication engine (``_engine``): the CPU gets them, over
the MPI engine on host memory, when ``opweave.distributed`` is imported. The
kernels validate their arguments (shapes, dtypes, ranks), resolve the group
by name, and call the engine of the tensors' device type.

:func:`staged` is the decomposition every other backend gets: copy the
tensors to the host, run the op there, copy the written tensors back.

Ranks given to the ``c10d::`` ops (``src``, ``dst``) are ranks within the
named group; the eager API translates PyTorch's global ranks.
"""

from __future__ import annotations

import threading

import opweave

from .._registry import Registry
from . import _group
from ._engine import name_backend, set_factory
from ._reduce_op import ReduceOp
from ._work import Work

_launch = threading.local()  # .async_op: launch without waiting; .work: the Work of the last launched op
_pending: dict[int, tuple] = {}  # id(tensor) -> (tensor, Work) for ops launched with async_op


def launching() -> bool:
    """Whether the op being run should be launched (``async_op=True``) rather than completed."""
    return getattr(_launch, "async_op", False)


def set_launching(flag: bool) -> None:
    """Launch (True) or complete (False) the ``c10d::`` ops this thread runs next (True also forgets the last Work)."""
    _launch.async_op = flag
    if flag:
        _launch.work = None


def take_work() -> Work | None:
    """The Work of the last op launched by this thread (None when it completed synchronously)."""
    work = getattr(_launch, "work", None)
    _launch.work = None
    return work


def _finish(work: Work, result):
    """Record a launched op's Work for ``wait_tensor`` and the eager API; return ``result``."""
    if launching() and not work.is_completed():
        _launch.work = work
        for t in work.result():
            _pending[id(t)] = (t, work)
    else:
        _launch.work = work
    return result


def wait_pending(tensor) -> None:
    """Wait for the launched op that writes ``tensor`` (nothing when there is none)."""
    entry = _pending.pop(id(tensor), None)
    if entry is not None and entry[0] is tensor:
        entry[1].wait()


def forget(work: Work) -> None:
    """Drop ``work``'s tensors from the pending table (after ``work.wait()``)."""
    for t in work.result():
        entry = _pending.get(id(t))
        if entry is not None and entry[1] is work:
            del _pending[id(t)]


# -- checks ------------------------------------------------------------------------------------


def _op(name: str) -> str:
    return f"c10d::{name}"


def _tensor(value, where: str, arg: str):
    if not isinstance(value, opweave.Tensor):
        raise TypeError(f"{where}: {arg} must be a Tensor, got {type(value).__name__}")
    if value.dtype.is_quantized:
        raise TypeError(f"{where}: {arg} is a quantized tensor ({value.dtype}); collectives take dense tensors")
    return value


def _same(a, b, where: str, a_name: str, b_name: str) -> None:
    if a.dtype != b.dtype:
        raise TypeError(f"{where}: {a_name} and {b_name} must have the same dtype, got {a.dtype} and {b.dtype}")
    if a.device != b.device:
        raise RuntimeError(f"{where}: {a_name} and {b_name} must be on the same device, got {a.device} and {b.device}")


def _rank(value: int, group, where: str, arg: str) -> int:
    if not 0 <= value < group.size():
        raise ValueError(f"{where}: {arg}={value} is not a rank of group {group.group_name} (size {group.size()})")
    return value


def _group_size(value: int, group, where: str) -> None:
    if value != group.size():
        raise ValueError(f"{where}: group_size={value} but group {group.group_name} has {group.size()} ranks")


def _engine(group, tensor):
    return group.engine(tensor.device.type)


def _gathered_shape(shape, size: int) -> tuple:
    return (size * shape[0], *shape[1:]) if shape else (size,)


def _check_out(out, shape, like, where: str) -> None:
    _tensor(out, where, "out")
    _same(like, out, where, "input", "out")
    if tuple(out.shape) != tuple(shape):
        raise ValueError(f"{where}: out has shape {list(out.shape)}, expected {list(shape)}")


def _splits(sizes, rows: int, n: int, where: str, arg: str) -> list[int]:
    sizes = [int(s) for s in sizes]
    if not sizes:
        if rows % n:
            raise ValueError(f"{where}: dim 0 of size {rows} does not split evenly over {n} ranks; give {arg}")
        return [rows // n] * n
    if len(sizes) != n:
        raise ValueError(f"{where}: {arg} has {len(sizes)} entries for a group of {n} ranks")
    if any(s < 0 for s in sizes):
        raise ValueError(f"{where}: {arg} must not be negative, got {sizes}")
    if sum(sizes) != rows:
        raise ValueError(f"{where}: {arg} sum to {sum(sizes)} but dim 0 has size {rows}")
    return sizes


# -- kernels -----------------------------------------------------------------------------------


def all_reduce_(tensor, reduce_op: str, group_name: str):
    """``c10d::all_reduce_``: reduce ``tensor`` over the group, in place."""
    where = _op("all_reduce_")
    _tensor(tensor, where, "input")
    op = ReduceOp.parse(reduce_op, where)
    group = _group.by_name(group_name, where)
    return _finish(_engine(group, tensor).all_reduce(tensor, op, launching()), tensor)


def all_reduce(tensor, reduce_op: str, group_name: str):
    """``c10d::all_reduce``: the reduction of ``input`` over the group, as a new tensor."""
    where = _op("all_reduce")
    _tensor(tensor, where, "input")
    op = ReduceOp.parse(reduce_op, where)
    group = _group.by_name(group_name, where)
    out = _contiguous_copy(tensor)
    return _finish(_engine(group, out).all_reduce(out, op, launching()), out)


def _contiguous_copy(tensor):
    out = tensor.contiguous()
    return tensor.clone() if out is tensor else out


def _empty(shape, like):
    return opweave.empty(tuple(shape), dtype=like.dtype, device=like.device)


def all_gather_into_tensor_out(tensor, group_size: int, group_name: str, out):
    """``c10d::all_gather_into_tensor_out``: every rank's ``input`` concatenated along dim 0 into ``out``."""
    where = _op("all_gather_into_tensor_out")
    _tensor(tensor, where, "input")
    group = _group.by_name(group_name, where)
    _group_size(group_size, group, where)
    _check_out(out, _gathered_shape(tuple(tensor.shape), group_size), tensor, where)
    return _finish(_engine(group, tensor).all_gather(out, tensor, launching()), out)


def all_gather_into_tensor(tensor, group_size: int, group_name: str):
    """``c10d::all_gather_into_tensor``: every rank's ``input`` concatenated along dim 0."""
    where = _op("all_gather_into_tensor")
    _tensor(tensor, where, "input")
    group = _group.by_name(group_name, where)
    _group_size(group_size, group, where)
    out = _empty(_gathered_shape(tuple(tensor.shape), group_size), tensor)
    return _finish(_engine(group, tensor).all_gather(out, tensor, launching()), out)


def _scattered_shape(tensor, group_size: int, where: str) -> tuple:
    shape = tuple(tensor.shape)
    if not shape:
        raise ValueError(f"{where}: input must have at least one dimension")
    if shape[0] % group_size:
        raise ValueError(f"{where}: dim 0 of input ({shape[0]}) is not divisible by the group size ({group_size})")
    return (shape[0] // group_size, *shape[1:])


def reduce_scatter_tensor_out(tensor, reduce_op: str, group_size: int, group_name: str, out):
    """``c10d::reduce_scatter_tensor_out``: chunk ``rank`` (along dim 0) of the reduction into ``out``."""
    where = _op("reduce_scatter_tensor_out")
    _tensor(tensor, where, "input")
    op = ReduceOp.parse(reduce_op, where)
    group = _group.by_name(group_name, where)
    _group_size(group_size, group, where)
    _check_out(out, _scattered_shape(tensor, group_size, where), tensor, where)
    return _finish(_engine(group, tensor).reduce_scatter(out, tensor, op, launching()), out)


def reduce_scatter_tensor(tensor, reduce_op: str, group_size: int, group_name: str):
    """``c10d::reduce_scatter_tensor``: chunk ``rank`` (along dim 0) of the reduction over the group."""
    where = _op("reduce_scatter_tensor")
    _tensor(tensor, where, "input")
    op = ReduceOp.parse(reduce_op, where)
    group = _group.by_name(group_name, where)
    _group_size(group_size, group, where)
    out = _empty(_scattered_shape(tensor, group_size, where), tensor)
    return _finish(_engine(group, tensor).reduce_scatter(out, tensor, op, launching()), out)


def _all_to_all(where, tensor, output_split_sizes, input_split_sizes, group_name, out):
    _tensor(tensor, where, "input")
    group = _group.by_name(group_name, where)
    if tensor.ndim == 0:
        raise ValueError(f"{where}: input must have at least one dimension")
    n = group.size()
    in_splits = _splits(input_split_sizes, tensor.shape[0], n, where, "input_split_sizes")
    out_rows = sum(int(s) for s in output_split_sizes) if output_split_sizes else tensor.shape[0]
    out_splits = _splits(output_split_sizes, out_rows, n, where, "output_split_sizes")
    shape = (out_rows, *tuple(tensor.shape)[1:])
    if out is None:
        out = _empty(shape, tensor)
    else:
        _check_out(out, shape, tensor, where)
    return _finish(_engine(group, tensor).all_to_all(out, tensor, out_splits, in_splits, launching()), out)


def all_to_all_single(tensor, output_split_sizes, input_split_sizes, group_name: str):
    """``c10d::all_to_all_single``: rows ``input_split_sizes[j]`` go to rank j, received rows concatenated."""
    return _all_to_all(_op("all_to_all_single"), tensor, output_split_sizes, input_split_sizes, group_name, None)


def all_to_all_single_out(tensor, output_split_sizes, input_split_sizes, group_name: str, out):
    """``c10d::all_to_all_single_out``: ``all_to_all_single`` into ``out``."""
    where = _op("all_to_all_single_out")
    return _all_to_all(where, tensor, output_split_sizes, input_split_sizes, group_name, out)


def broadcast_(tensor, src: int, group_name: str):
    """``c10d::broadcast_``: group rank ``src``'s tensor copied into every rank's, in place."""
    where = _op("broadcast_")
    _tensor(tensor, where, "input")
    group = _group.by_name(group_name, where)
    _rank(src, group, where, "src")
    return _finish(_engine(group, tensor).broadcast(tensor, src, launching()), tensor)


def broadcast(tensor, src: int, group_name: str):
    """``c10d::broadcast``: group rank ``src``'s ``input``, as a new tensor on every rank."""
    where = _op("broadcast")
    _tensor(tensor, where, "input")
    group = _group.by_name(group_name, where)
    _rank(src, group, where, "src")
    out = _contiguous_copy(tensor)
    return _finish(_engine(group, out).broadcast(out, src, launching()), out)


def reduce_(tensor, dst: int, reduce_op: str, group_name: str):
    """``c10d::reduce_``: the reduction over the group lands in group rank ``dst``'s tensor."""
    where = _op("reduce_")
    _tensor(tensor, where, "input")
    op = ReduceOp.parse(reduce_op, where)
    group = _group.by_name(group_name, where)
    _rank(dst, group, where, "dst")
    return _finish(_engine(group, tensor).reduce(tensor, op, dst, launching()), tensor)


def gather_(tensor, out, dst: int, group_name: str):
    """``c10d::gather_``: every rank's ``input`` concatenated along dim 0 into ``out`` on group rank ``dst``."""
    where = _op("gather_")
    _tensor(tensor, where, "input")
    group = _group.by_name(group_name, where)
    _rank(dst, group, where, "dst")
    if group.rank() == dst:
        _check_out(out, _gathered_shape(tuple(tensor.shape), group.size()), tensor, where)
    return _finish(_engine(group, tensor).gather(out, tensor, dst, launching()), out)


def scatter_(out, tensor, src: int, group_name: str):
    """``c10d::scatter_``: chunk ``rank`` (along dim 0) of group rank ``src``'s ``input`` into ``out``."""
    where = _op("scatter_")
    _tensor(out, where, "out")
    group = _group.by_name(group_name, where)
    _rank(src, group, where, "src")
    if group.rank() == src:
        _tensor(tensor, where, "input")
        _check_out(tensor, _gathered_shape(tuple(out.shape), group.size()), out, where)
    return _finish(_engine(group, out).scatter(out, tensor, src, launching()), out)


def send(tensor, dst: int, tag: int, group_name: str):
    """``c10d::send``: send ``input`` to group rank ``dst``; returns ``input``."""
    where = _op("send")
    _tensor(tensor, where, "input")
    group = _group.by_name(group_name, where)
    _rank(dst, group, where, "dst")
    if dst == group.rank():
        raise ValueError(f"{where}: cannot send to this rank itself (dst={dst})")
    return _finish(_engine(group, tensor).send(tensor, dst, tag, launching()), tensor)


def recv_(out, src: int, tag: int, group_name: str):
    """``c10d::recv_``: receive into ``out`` from group rank ``src`` (-1: any rank)."""
    where = _op("recv_")
    _tensor(out, where, "out")
    group = _group.by_name(group_name, where)
    if src != -1:
        _rank(src, group, where, "src")
        if src == group.rank():
            raise ValueError(f"{where}: cannot receive from this rank itself (src={src})")
    return _finish(_engine(group, out).recv(out, None if src == -1 else src, tag, launching()), out)


def wait_tensor(tensor):
    """``c10d::wait_tensor``: wait for the launched collective that writes ``tensor``; returns it."""
    _tensor(tensor, _op("wait_tensor"), "tensor")
    wait_pending(tensor)
    return tensor


KERNELS = {
    "all_reduce": all_reduce,
    "all_reduce_": all_reduce_,
    "all_gather_into_tensor": all_gather_into_tensor,
    "all_gather_into_tensor_out": all_gather_into_tensor_out,
    "reduce_scatter_tensor": reduce_scatter_tensor,
    "reduce_scatter_tensor_out": reduce_scatter_tensor_out,
    "all_to_all_single": all_to_all_single,
    "all_to_all_single_out": all_to_all_single_out,
    "broadcast": broadcast,
    "broadcast_": broadcast_,
    "reduce_": reduce_,
    "gather_": gather_,
    "scatter_": scatter_,
    "send": send,
    "recv_": recv_,
    "wait_tensor": wait_tensor,
}


# -- staging through host memory ---------------------------------------------------------------


def staged(name: str, args: tuple):
    """``c10d::name`` for tensors of a device without an engine: run on host copies, copy results back."""
    ensure_registered()
    op = opweave.ops.lookup(f"c10d::{name}")
    tensors = [a for a in args if isinstance(a, opweave.Tensor)]
    device = tensors[0].device if tensors else None
    if device is None or op.has_kernel(device.type):  # registered while this call was on its way
        return op.call_bound(*args)
    if name == "wait_tensor":  # staged ops complete before they return
        return args[0]
    hosts = tuple(a.cpu() if isinstance(a, opweave.Tensor) else a for a in args)
    was = launching()
    set_launching(False)  # the copies back need the results now
    try:
        result = op.call_bound(*hosts)
    finally:
        set_launching(was)
    written = None
    for arg, original, host in zip(op.schema.arguments, args, hosts):
        alias = arg.type.alias
        if alias is not None and alias.is_write and isinstance(original, opweave.Tensor):
            original.copy_(host)
            written = original
    if written is not None:
        return written
    return result.to(device)


# -- registration ------------------------------------------------------------------------------


def register_engine(device_type: str, factory, registry=None, *, backend: str | None = None) -> None:
    """Make ``factory(group)`` the engine of ``device_type`` tensors and register the ``c10d::`` kernels for them.

    A device plugin calls it from its ``opweave_register(registry)`` hook with that
    registry (so the kernels are recorded as the plugin's); its tensors then reach the
    engine directly instead of being staged through host memory. ``backend`` names the
    engine for ``init_process_group`` (the CUDA plugin registers ``"nccl"``).
    """
    set_factory(device_type, factory)
    if backend is not None:
        name_backend(backend, device_type)
    if registry is None:
        registry = Registry("opweave.distributed")
    register_device(registry, device_type)


def register_device(registry, device_type: str) -> None:
    """Register the ``c10d::`` kernels for ``device_type`` (whose engine :func:`register_engine` gave)."""
    for name, fn in KERNELS.items():
        registry.impl(f"c10d::{name}", fn, backend=device_type)


@opweave.hookimpl
def opweave_register(registry) -> None:
    """The distributed plugin: c10d:: kernels for CPU tensors (the MPI engine) and the MPI feature's status."""
    from . import _mpi

    register_device(registry, "cpu")
    available, reason = _mpi.available()
    registry.feature("distributed.mpi", available, reason)


_registered = {"done": False}


def ensure_registered() -> None:
    """Register this module as the plugin ``opweave.distributed`` once."""
    if not _registered["done"]:
        import sys

        _registered["done"] = True
        opweave.backends.register_plugin(sys.modules[__name__], name="opweave.distributed")
