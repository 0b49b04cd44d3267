"""``opweave.distributed``: collectives across processes, with ``torch.distributed``'s names and semantics.

Start ranks with the launcher (``opweave run -n 4 script.py`` or
``python -m opweave.distributed.run -n 4 script.py``), then::

    import opweave.distributed as dist

    dist.init_process_group("mpi")
    t = opweave.ones(4) * dist.get_rank()
    dist.all_reduce(t)  # in place, on every rank

Every collective is a ``c10d::`` op of the catalog (``opweave.ops.c10d``), so it
goes through the dispatcher and the profiler: CPU tensors use the MPI engine
(mpi4py, zero-copy on host memory), tensors of other devices are staged
through host memory, and a device with its own engine (NCCL for CUDA tensors)
registers kernels of its own. See ``docs/distributed.md``.

Importing this package does not start MPI; ``init_process_group`` does.
"""

from __future__ import annotations

from ._api import (
    P2POp,
    all_gather,
    all_gather_into_tensor,
    all_reduce,
    all_to_all,
    all_to_all_single,
    barrier,
    batch_isend_irecv,
    broadcast,
    gather,
    irecv,
    isend,
    recv,
    reduce,
    reduce_scatter,
    reduce_scatter_tensor,
    scatter,
    send,
)
from ._engine import Engine
from ._group import (
    GroupMember,
    ProcessGroup,
    default_pg_timeout,
    destroy_process_group,
    get_backend,
    get_global_rank,
    get_group_rank,
    get_process_group_ranks,
    get_rank,
    get_world_size,
    init_process_group,
    is_available,
    is_gloo_available,
    is_initialized,
    is_mpi_available,
    is_nccl_available,
    new_group,
)
from ._kernels import ensure_registered as _ensure_registered
from ._kernels import register_engine
from ._objects import all_gather_object, broadcast_object_list, gather_object, scatter_object_list
from ._reduce_op import ReduceOp
from ._work import DistBackendError, DistError, Work

#: PyTorch's alias of ``GroupMember.WORLD`` as a group argument (None means the default group)
group = GroupMember


class Backend:
    """Backend names, as ``torch.distributed.Backend``."""

    MPI = "mpi"
    NCCL = "nccl"
    GLOO = "gloo"
    UNDEFINED = "undefined"


__all__ = [
    "Backend",
    "DistBackendError",
    "DistError",
    "Engine",
    "GroupMember",
    "P2POp",
    "ProcessGroup",
    "ReduceOp",
    "Work",
    "all_gather",
    "all_gather_into_tensor",
    "all_gather_object",
    "all_reduce",
    "all_to_all",
    "all_to_all_single",
    "barrier",
    "batch_isend_irecv",
    "broadcast",
    "broadcast_object_list",
    "default_pg_timeout",
    "destroy_process_group",
    "gather",
    "gather_object",
    "get_backend",
    "get_global_rank",
    "get_group_rank",
    "get_process_group_ranks",
    "get_rank",
    "get_world_size",
    "init_process_group",
    "irecv",
    "is_available",
    "is_gloo_available",
    "is_initialized",
    "is_mpi_available",
    "is_nccl_available",
    "isend",
    "new_group",
    "recv",
    "reduce",
    "reduce_scatter",
    "reduce_scatter_tensor",
    "register_engine",
    "scatter",
    "scatter_object_list",
    "send",
]

_ensure_registered()
