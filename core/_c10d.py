"""The ``c10d::`` operator library: collectives as ops of the catalog (``opweave.ops.c10d``).

The functional collectives follow PyTorch 2's ``_c10d_functional`` library
(``all_reduce(Tensor input, str reduce_op, str group_name) -> Tensor`` ...): a
process group is named by a string, a reduction by its lower-case name
(``"sum"``, ``"avg"``, ``"product"``, ``"min"``, ``"max"``, ``"band"``,
``"bor"``, ``"bxor"``). In-place forms (``all_reduce_``), ``_out`` forms and the
point-to-point and rooted ops the eager API needs (``send``, ``recv_``,
``reduce_``, ``gather_``, ``scatter_``) complete the set, so every collective
of ``opweave.distributed`` passes through the dispatcher and the profiler.

Only the schemas live here, so that ``import opweave`` stays cheap; the
kernels are in ``opweave.distributed`` (imported on the first call):

- a backend whose tensors have a communication engine of their own (the CPU:
  MPI on host memory; CUDA: NCCL, from the CUDA plugin) registers Dense kernels for its device;
- every other backend gets each op's decomposition (CompositeImplicit): copy
  the tensors to the host, run the op there, copy the results back.

Ops run synchronously unless ``opweave.distributed`` launches them for an
``async_op=True`` call; ``wait_tensor`` waits for a launched op's result.
"""

from __future__ import annotations

from ._ops import define

SCHEMAS = (
    "all_reduce(Tensor input, str reduce_op, str group_name) -> Tensor",
    "all_reduce_(Tensor(a!) input, str reduce_op, str group_name) -> Tensor(a!)",
    "all_gather_into_tensor(Tensor input, int group_size, str group_name) -> Tensor",
    "all_gather_into_tensor_out(Tensor input, int group_size, str group_name, *, Tensor(a!) out) -> Tensor(a!)",
    "reduce_scatter_tensor(Tensor input, str reduce_op, int group_size, str group_name) -> Tensor",
    "reduce_scatter_tensor_out(Tensor input, str reduce_op, int group_size, str group_name, *, Tensor(a!) out)"
    " -> Tensor(a!)",
    "all_to_all_single(Tensor input, SymInt[] output_split_sizes, SymInt[] input_split_sizes, str group_name)"
    " -> Tensor",
    "all_to_all_single_out(Tensor input, SymInt[] output_split_sizes, SymInt[] input_split_sizes, str group_name,"
    " *, Tensor(a!) out) -> Tensor(a!)",
    "broadcast(Tensor input, int src, str group_name) -> Tensor",
    "broadcast_(Tensor(a!) input, int src, str group_name) -> Tensor(a!)",
    "reduce_(Tensor(a!) input, int dst, str reduce_op, str group_name) -> Tensor(a!)",
    "gather_(Tensor input, Tensor(a!) out, int dst, str group_name) -> Tensor(a!)",
    "scatter_(Tensor(a!) out, Tensor input, int src, str group_name) -> Tensor(a!)",
    "send(Tensor input, int dst, int tag, str group_name) -> Tensor",
    "recv_(Tensor(a!) out, int src, int tag, str group_name) -> Tensor(a!)",
    "wait_tensor(Tensor tensor) -> Tensor",
)


def _staged(name: str):
    """The decomposition of ``c10d::name``: run the op on host copies and copy the results back."""

    def decomposition(*args):
        from .distributed import _kernels  # deferred: opweave.distributed loads MPI (mpi4py) on first use

        return _kernels.staged(name, args)

    decomposition.__doc__ = f"``c10d::{name}`` on a device without a communication engine: staged through host memory."
    decomposition.__module__ = "opweave.distributed._kernels"
    return decomposition


def define_library() -> None:
    """Define every ``c10d::`` op (schemas and the host-staging decompositions)."""
    for schema in SCHEMAS:
        name = schema.split("(", 1)[0]
        define("c10d::" + schema, _staged(name))


define_library()
