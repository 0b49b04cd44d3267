"""Process groups: ``init_process_group``, ``new_group``, ranks, and the group registry by name.

A :class:`ProcessGroup` is a set of global ranks with a name (``"0"`` for the
default group, then ``"1"``, ``"2"``... in creation order, the same on every
rank because ``new_group`` is called by all ranks, as in PyTorch). The
``c10d::`` ops name their group by that string. Each group makes one
engine per device type on first use (``_engine``).
"""

from __future__ import annotations

import datetime
import os

from . import _engine, _mpi
from ._work import seconds

#: PyTorch's default timeout of collectives (``torch.distributed.constants.default_pg_timeout``)
default_pg_timeout = datetime.timedelta(minutes=30)

BACKENDS = ("mpi",)


class ProcessGroup:
    """A group of ranks and its engines (one per device type)."""

    def __init__(self, name: str, ranks: list[int], comm, timeout: float | None, backend: str):
        self.group_name = name
        self.ranks = list(ranks)  # global ranks, in group-rank order
        self.comm = comm
        self.timeout = timeout
        self.backend = backend
        self._engines: dict = {}

    def rank(self) -> int:
        """This process's rank in the group."""
        return self.comm.Get_rank()

    def size(self) -> int:
        """Number of ranks in the group."""
        return len(self.ranks)

    def engine(self, device_type: str):
        """The engine for ``device_type`` tensors (made on first use)."""
        engine = self._engines.get(device_type)
        if engine is None:
            factory = _engine.engine_factory(device_type)
            if factory is None:
                raise RuntimeError(
                    f"opweave.distributed: no communication engine for {device_type} tensors "
                    "(they are staged through host memory by the c10d:: ops)"
                )
            engine = self._engines[device_type] = factory(self)
        return engine

    def group_rank(self, global_rank: int, where: str) -> int:
        """The group rank of ``global_rank``; ``ValueError`` if it is not in the group."""
        try:
            return self.ranks.index(global_rank)
        except ValueError:
            raise ValueError(f"{where}: global rank {global_rank} is not part of group {self.group_name}") from None

    def close(self) -> None:
        """Free the engines and the communicator."""
        for engine in self._engines.values():
            engine.close()
        self._engines.clear()
        MPI = _mpi.mpi()
        if self.comm is not None and self.comm not in (MPI.COMM_WORLD, MPI.COMM_NULL):
            self.comm.Free()
        self.comm = None

    def __repr__(self) -> str:
        return f"<ProcessGroup {self.group_name} ranks={self.ranks} backend={self.backend}>"


class _NonGroupMember:
    """What ``new_group`` returns on ranks outside the group (PyTorch's ``GroupMember.NON_GROUP_MEMBER``)."""

    def __repr__(self) -> str:
        return "GroupMember.NON_GROUP_MEMBER"


class GroupMember:
    """PyTorch's ``GroupMember``: ``WORLD`` (the default group, once initialised) and ``NON_GROUP_MEMBER``."""

    WORLD: ProcessGroup | None = None
    NON_GROUP_MEMBER = _NonGroupMember()


_groups: dict[str, ProcessGroup] = {}
_state = {"next": 0}


def _mpi_engine(group: ProcessGroup):
    return _mpi.MPIEngine(group.comm, group.timeout, group.ranks[group.comm.Get_rank()])


def _env_int(name: str) -> int | None:
    value = os.environ.get(name)
    if value is None or value == "":
        return None
    try:
        return int(value)
    except ValueError:
        raise ValueError(f"init_process_group: environment variable {name}={value!r} is not an integer") from None


def is_available() -> bool:
    """Whether distributed support can be used (mpi4py is installed)."""
    return _mpi.available()[0]


def is_initialized() -> bool:
    """Whether the default process group has been initialised."""
    return GroupMember.WORLD is not None


def is_mpi_available() -> bool:
    """Whether the MPI backend is available."""
    return _mpi.available()[0]


def nccl_unavailable_reason() -> str | None:
    """None when the NCCL engine is registered (the CUDA plugin, NCCL and a GPU are there), else why not."""
    from .. import backends

    backends.is_available("cuda")  # loads the CUDA plugin, which registers the NCCL engine when it can
    if _engine.named_backend("nccl") is not None:
        return None
    for row in backends.status():
        if row.name == "distributed.nccl":
            return row.reason or "the NCCL engine is not registered"
    return "the CUDA backend (opweave_cuda) is not installed: pip install 'opweave[cuda]'"


def is_nccl_available() -> bool:
    """Whether the NCCL backend is available (the CUDA plugin with NCCL and a CUDA device)."""
    return nccl_unavailable_reason() is None


def is_gloo_available() -> bool:
    """Whether the Gloo backend is available (never: opweave uses MPI for host memory)."""
    return False


def _parse_backend(backend) -> str:
    if backend is None:
        return "mpi"
    name = str(backend).lower()
    if ":" in name:  # "cpu:mpi,cuda:nccl"
        pairs = dict(part.split(":", 1) for part in name.split(","))
        allowed = {"cpu": ("mpi",), "cuda": ("mpi", "nccl")}
        unsupported = {d: b for d, b in pairs.items() if b not in allowed.get(d, BACKENDS)}
        if unsupported:
            raise RuntimeError(
                f"init_process_group: unsupported backend for {unsupported}; available: cpu:mpi, cuda:nccl"
            )
        if "nccl" in pairs.values():
            _require_nccl()
        return name
    if name == "nccl":
        _require_nccl()
        return name
    if name not in BACKENDS:
        raise ValueError(f"init_process_group: unknown backend {backend!r}; available: mpi, nccl")
    return name


def _require_nccl() -> None:
    reason = nccl_unavailable_reason()
    if reason is not None:
        raise RuntimeError(f"init_process_group: the NCCL backend is not available: {reason}; use 'mpi'")


def init_process_group(
    backend: str | None = None,
    init_method: str | None = None,
    timeout: datetime.timedelta | None = None,
    world_size: int = -1,
    rank: int = -1,
    store=None,
    group_name: str = "",
    pg_options=None,
    device_id=None,
) -> None:
    """Initialise the default process group (PyTorch's signature).

    With the MPI backend the ranks come from the MPI launcher (``opweave run`` or
    ``mpiexec``); ``rank``/``world_size`` (or ``RANK``/``WORLD_SIZE`` in the environment,
    ``init_method="env://"``) are checked against MPI's. Started without a launcher, the
    process is a world of one. ``timeout`` bounds every collective of the group.
    """
    if is_initialized():
        raise ValueError("trying to initialize the default process group twice!")
    name = _parse_backend(backend)
    if init_method not in (None, "env://") and not str(init_method).startswith(("env://", "tcp://", "file://")):
        raise ValueError(f"init_process_group: unsupported init_method {init_method!r}")
    if store is not None:
        raise ValueError("init_process_group: the MPI backend takes its ranks from MPI, not from a store")
    limit = seconds(timeout if timeout is not None else default_pg_timeout)
    if limit is not None and limit <= 0:
        raise ValueError(f"init_process_group: timeout must be positive, got {timeout!r}")
    MPI = _mpi.mpi()
    world = MPI.COMM_WORLD
    mpi_rank, mpi_size = world.Get_rank(), world.Get_size()
    wanted_size = world_size if world_size != -1 else _env_int("WORLD_SIZE")
    wanted_rank = rank if rank != -1 else _env_int("RANK")
    if wanted_size is not None and wanted_size != mpi_size:
        hint = " (start the ranks with `opweave run -n N script.py`)" if mpi_size == 1 else ""
        raise ValueError(f"init_process_group: world_size={wanted_size} but MPI started {mpi_size} process(es){hint}")
    if wanted_rank is not None and wanted_rank != mpi_rank:
        raise ValueError(f"init_process_group: rank={wanted_rank} but this process is MPI rank {mpi_rank}")
    if _engine.engine_factory("cpu") is None:
        _engine.set_factory("cpu", _mpi_engine)  # its kernels are the distributed plugin's (``_kernels``)
    comm = world.Dup()
    _state["next"] = 0
    group = _make_group(list(range(mpi_size)), comm, limit, name)
    GroupMember.WORLD = group  # the c10d:: kernels were registered when opweave.distributed was imported


def _make_group(ranks, comm, timeout, backend) -> ProcessGroup:
    name = str(_state["next"])
    _state["next"] += 1
    group = ProcessGroup(name, ranks, comm, timeout, backend)
    _groups[name] = group
    return group


def _world(where: str) -> ProcessGroup:
    if GroupMember.WORLD is None:
        raise ValueError(
            f"{where}: Default process group has not been initialized, please make sure to call init_process_group."
        )
    return GroupMember.WORLD


def resolve(group, where: str) -> ProcessGroup | None:
    """The ProcessGroup meant by ``group`` (None: the default one); None on ranks outside it."""
    world = _world(where)
    if group is None or group is GroupMember.WORLD:
        return world
    if group is GroupMember.NON_GROUP_MEMBER:
        return None
    if isinstance(group, ProcessGroup):
        if group.group_name not in _groups:
            raise ValueError(f"{where}: process group {group.group_name} has been destroyed")
        return group
    raise TypeError(f"{where}: group must be a ProcessGroup or None, got {type(group).__name__}")


def by_name(name: str, where: str) -> ProcessGroup:
    """The group named ``name`` (what the ``c10d::`` ops receive)."""
    _world(where)
    group = _groups.get(name)
    if group is None:
        raise ValueError(f"{where}: no process group named {name!r} on this rank (known: {sorted(_groups)})")
    return group


def new_group(ranks=None, timeout=None, backend=None, pg_options=None, use_local_synchronization=False):
    """A group of the given global ranks (all ranks when None); every rank must call it, in the same order.

    Ranks outside the group get ``GroupMember.NON_GROUP_MEMBER``; collectives on it return None.
    """
    world = _world("new_group")
    if use_local_synchronization:
        raise ValueError("new_group: use_local_synchronization is not supported by the MPI backend")
    name = _parse_backend(backend) if backend is not None else world.backend
    size = world.size()
    members = list(range(size)) if ranks is None else sorted(int(r) for r in ranks)
    if len(set(members)) != len(members):
        raise ValueError(f"new_group: ranks contain duplicates: {list(ranks)}")
    bad = [r for r in members if not 0 <= r < size]
    if bad:
        raise ValueError(f"new_group: ranks {bad} are outside the world of {size} ranks")
    limit = seconds(timeout) if timeout is not None else world.timeout
    MPI = _mpi.mpi()
    comm = world.comm.Create(world.comm.Get_group().Incl(members))  # collective over the world
    if comm == MPI.COMM_NULL:
        _state["next"] += 1  # names stay in step on every rank
        return GroupMember.NON_GROUP_MEMBER
    return _make_group(members, comm, limit, name)


def destroy_process_group(group=None) -> None:
    """Destroy ``group``, or every group and the default one when None."""
    if group is None:
        if GroupMember.WORLD is None:
            raise ValueError("destroy_process_group: Default process group has not been initialized")
        for g in list(_groups.values()):
            g.close()
        _groups.clear()
        GroupMember.WORLD = None
        _state["next"] = 0
        return
    if group is GroupMember.NON_GROUP_MEMBER:
        return
    if group is GroupMember.WORLD:
        destroy_process_group(None)
        return
    found = _groups.pop(group.group_name, None)
    if found is None:
        raise ValueError(f"destroy_process_group: process group {group.group_name} is not registered")
    found.close()


def get_rank(group=None) -> int:
    """This process's rank in ``group`` (the default group when None); -1 outside the group."""
    g = resolve(group, "get_rank")
    return -1 if g is None else g.rank()


def get_world_size(group=None) -> int:
    """The number of ranks of ``group`` (the default group when None); -1 outside the group."""
    g = resolve(group, "get_world_size")
    return -1 if g is None else g.size()


def get_backend(group=None) -> str:
    """The backend of ``group``."""
    g = resolve(group, "get_backend")
    if g is None:
        raise ValueError("get_backend: this rank is not part of the group")
    return g.backend


def get_process_group_ranks(group) -> list[int]:
    """The global ranks of ``group``."""
    g = resolve(group, "get_process_group_ranks")
    if g is None:
        raise ValueError("get_process_group_ranks: this rank is not part of the group")
    return list(g.ranks)


def get_global_rank(group, group_rank: int) -> int:
    """The global rank of ``group_rank`` in ``group``."""
    ranks = get_process_group_ranks(group)
    if not 0 <= group_rank < len(ranks):
        raise ValueError(f"get_global_rank: group rank {group_rank} is not part of the group")
    return ranks[group_rank]


def get_group_rank(group, global_rank: int) -> int:
    """The rank in ``group`` of ``global_rank``."""
    g = resolve(group, "get_group_rank")
    if g is None:
        raise ValueError("get_group_rank: this rank is not part of the group")
    return g.group_rank(global_rank, "get_group_rank")
