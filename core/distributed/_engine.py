"""The communication engine interface, and the engines known per device type.

A process group holds one engine per device type it has been used with. An
engine moves the memory of tensors of its device type between the ranks of
its group: the MPI engine (``_mpi``) works on host memory (the CPU backend,
zero-copy); an NCCL engine for CUDA tensors implements the same methods on
device pointers. Devices without an engine are staged through host memory
by the ``c10d::`` decompositions, so they use the host engine.

Every method takes opweave tensors of the engine's device type (validated by
the ``c10d::`` kernels: shapes, dtypes, ranks within the group) and returns
a :class:`~opweave.distributed._work.Work`; ``async_op=False`` returns a
completed one. Ranks (``root``, ``peer``) are ranks within the group.
"""

from __future__ import annotations

from typing import Protocol

from ._reduce_op import ReduceOp
from ._work import Work


class Engine(Protocol):
    """What a communication engine provides for one process group (see the module docstring)."""

    rank: int
    size: int

    def all_reduce(self, tensor, op: ReduceOp, async_op: bool) -> Work: ...
    def broadcast(self, tensor, root: int, async_op: bool) -> Work: ...
    def reduce(self, tensor, op: ReduceOp, root: int, async_op: bool) -> Work: ...
    def all_gather(self, out, tensor, async_op: bool) -> Work: ...
    def reduce_scatter(self, out, tensor, op: ReduceOp, async_op: bool) -> Work: ...
    def all_to_all(self, out, tensor, out_splits, in_splits, async_op: bool) -> Work: ...
    def gather(self, out, tensor, root: int, async_op: bool) -> Work: ...
    def scatter(self, out, tensor, root: int, async_op: bool) -> Work: ...
    def send(self, tensor, peer: int, tag: int, async_op: bool) -> Work: ...
    def recv(self, tensor, peer: int | None, tag: int, async_op: bool) -> Work: ...
    def barrier(self, async_op: bool) -> Work: ...
    def close(self) -> None: ...


#: device type -> factory ``(group) -> Engine``; "cpu" gets the MPI engine, the CUDA plugin adds "cuda" (NCCL)
_FACTORIES: dict = {}
#: backend name (``init_process_group("nccl")``) -> the device type whose engine it names
_NAMED: dict = {}


def set_factory(device_type: str, factory) -> None:
    """Make ``factory`` the engine of ``device_type`` tensors whose kernels are registered already (the CPU's)."""
    _FACTORIES[device_type] = factory


def name_backend(name: str, device_type: str) -> None:
    """Record that the backend ``name`` (``"nccl"``) is the engine of ``device_type`` tensors."""
    _NAMED[name] = device_type


def named_backend(name: str) -> str | None:
    """The device type whose engine the backend ``name`` is, or None when no plugin registered one."""
    return _NAMED.get(name)


def engine_factory(device_type: str):
    """The engine factory registered for ``device_type``, or None (then tensors are staged through the host)."""
    return _FACTORIES.get(device_type)
