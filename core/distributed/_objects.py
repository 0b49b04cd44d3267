"""Collectives of picklable Python objects (PyTorch's ``broadcast_object_list``, ``all_gather_object`` ...).

Objects are pickled into uint8 tensors and moved with the tensor collectives,
sizes first, as PyTorch does. Unpickling runs code chosen by the sender:
only exchange objects between ranks you trust (PyTorch's warning too).
"""

from __future__ import annotations

import pickle

import numpy as np
import opweave

from . import _api, _group


def _to_tensor(obj):
    data = pickle.dumps(obj)
    return opweave.from_numpy(np.frombuffer(data, dtype=np.uint8).copy()), len(data)


def _from_tensor(tensor, size: int):
    return pickle.loads(tensor[:size].numpy().tobytes())


def _sizes(g, size: int) -> list[int]:
    mine = opweave.tensor([size], dtype=opweave.int64)
    everyone = opweave.empty((g.size(),), dtype=opweave.int64)
    _api.all_gather_into_tensor(everyone, mine, group=g)
    return [int(s) for s in everyone.tolist()]


def broadcast_object_list(object_list: list, src: int | None = None, group=None, device=None, group_src=None) -> None:
    """Replace ``object_list``'s items on every rank with rank ``src``'s (0 by default); same length everywhere."""
    if not isinstance(object_list, list):
        raise TypeError(f"broadcast_object_list: object_list must be a list, got {type(object_list).__name__}")
    g = _group.resolve(group, "broadcast_object_list")
    if g is None:
        return
    root = _api._group_rank(g, src, group_src, "broadcast_object_list", "src", default=0)
    n = len(object_list)
    sizes = opweave.zeros((n,), dtype=opweave.int64)
    if g.rank() == root:
        payloads = [_to_tensor(o) for o in object_list]
        sizes = opweave.tensor([s for _, s in payloads] or [0], dtype=opweave.int64)[:n]
    _api.broadcast(sizes, group=g, group_src=root)
    counts = [int(s) for s in sizes.tolist()]
    if g.rank() == root:
        data = opweave.cat([t for t, _ in payloads]) if payloads else opweave.empty((0,), dtype=opweave.uint8)
    else:
        data = opweave.empty((sum(counts),), dtype=opweave.uint8)
    _api.broadcast(data, group=g, group_src=root)
    if g.rank() != root:
        offset = 0
        for i, c in enumerate(counts):
            object_list[i] = _from_tensor(data[offset : offset + c], c)
            offset += c


def all_gather_object(object_list: list, obj, group=None) -> None:
    """Put every rank's ``obj`` into ``object_list[rank]`` on every rank (``object_list`` has the group's size)."""
    g = _group.resolve(group, "all_gather_object")
    if g is None:
        return
    if not isinstance(object_list, list) or len(object_list) != g.size():
        raise ValueError(f"all_gather_object: object_list must be a list of {g.size()} items (the group size)")
    payload, size = _to_tensor(obj)
    sizes = _sizes(g, size)
    width = max(sizes)
    padded = opweave.zeros((width,), dtype=opweave.uint8)
    padded[:size] = payload
    gathered = opweave.empty((width * g.size(),), dtype=opweave.uint8)
    _api.all_gather_into_tensor(gathered, padded, group=g)
    for i, s in enumerate(sizes):
        object_list[i] = _from_tensor(gathered[i * width : (i + 1) * width], s)


def gather_object(obj, object_gather_list: list | None = None, dst: int | None = None, group=None, group_dst=None):
    """Every rank's ``obj`` into ``object_gather_list`` on rank ``dst`` (0 by default); None elsewhere."""
    g = _group.resolve(group, "gather_object")
    if g is None:
        return
    root = _api._group_rank(g, dst, group_dst, "gather_object", "dst", default=0)
    if g.rank() == root and (not isinstance(object_gather_list, list) or len(object_gather_list) != g.size()):
        raise ValueError(f"gather_object: object_gather_list must be a list of {g.size()} items on the destination")
    payload, size = _to_tensor(obj)
    sizes = _sizes(g, size)
    width = max(sizes)
    padded = opweave.zeros((width,), dtype=opweave.uint8)
    padded[:size] = payload
    chunks = [opweave.empty((width,), dtype=opweave.uint8) for _ in range(g.size())] if g.rank() == root else None
    _api.gather(padded, chunks, group=g, group_dst=root)
    if g.rank() == root:
        for i, s in enumerate(sizes):
            object_gather_list[i] = _from_tensor(chunks[i], s)


def scatter_object_list(
    scatter_object_output_list: list,
    scatter_object_input_list: list | None = None,
    src=None,
    group=None,
    group_src=None,
) -> None:
    """Rank ``src``'s ``scatter_object_input_list[rank]`` into ``scatter_object_output_list[0]`` on every rank."""
    if not isinstance(scatter_object_output_list, list) or len(scatter_object_output_list) < 1:
        raise ValueError("scatter_object_list: scatter_object_output_list must be a non-empty list")
    g = _group.resolve(group, "scatter_object_list")
    if g is None:
        return
    root = _api._group_rank(g, src, group_src, "scatter_object_list", "src", default=0)
    if g.rank() == root:
        if not isinstance(scatter_object_input_list, list) or len(scatter_object_input_list) != g.size():
            raise ValueError(f"scatter_object_list: the source needs a list of {g.size()} objects")
        payloads = [_to_tensor(o) for o in scatter_object_input_list]
        width = opweave.tensor([max(s for _, s in payloads)], dtype=opweave.int64)
    else:
        width = opweave.zeros((1,), dtype=opweave.int64)
    _api.broadcast(width, group=g, group_src=root)
    w = int(width.item())
    chunks = None
    if g.rank() == root:
        chunks = []
        for t, s in payloads:
            padded = opweave.zeros((w + 8,), dtype=opweave.uint8)
            padded[:8] = opweave.from_numpy(np.frombuffer(np.int64(s).tobytes(), dtype=np.uint8).copy())
            padded[8 : 8 + s] = t
            chunks.append(padded)
    mine = opweave.empty((w + 8,), dtype=opweave.uint8)
    _api.scatter(mine, chunks, group=g, group_src=root)
    size = int(np.frombuffer(mine[:8].numpy().tobytes(), dtype=np.int64)[0])
    scatter_object_output_list[0] = pickle.loads(mine[8 : 8 + size].numpy().tobytes())
