"""Bucketed, overlapped gradient averaging: the engine under ``DistributedDataParallel``.

``opweave.nn.parallel.DistributedDataParallel`` broadcasts the module's state from rank 0
(:func:`sync_tensors`), builds a :class:`Reducer` over the parameters and calls
:meth:`Reducer.mark_ready` from a post-accumulate-grad hook on each parameter, then
:meth:`Reducer.finalize` once backward has finished (``docs/distributed.md``).

Buckets follow PyTorch's Reducer: parameters in reverse order (gradients arrive roughly
last layer first), grouped by dtype and device, the first bucket up to
``first_bucket_cap_mb`` (so that communication starts early) and the others up to
``bucket_cap_mb``. A bucket is all-reduced (``async_op=True``, on the MPI engine's worker
thread, so it overlaps the rest of backward) as soon as all its gradients are in and
every bucket before it has been launched: every rank launches the buckets in the same
order whatever the order its gradients arrive in. A communication hook
(``register_comm_hook``) replaces the default average: it receives a :class:`GradBucket`
and returns a Future of the reduced bucket.
"""

from __future__ import annotations

import opweave

from . import _api, _group
from ._reduce_op import ReduceOp

#: the largest flat buffer a coalesced broadcast sends at once (PyTorch's 250 MB)
BROADCAST_BUCKET_BYTES = 250 * 2**20


def sync_tensors(tensors, src: int = 0, group=None) -> None:
    """Copy rank ``src``'s ``tensors`` into every rank's, in place (DDP's initial parameter broadcast).

    Tensors of one dtype and device travel together as one flat buffer (up to 250 MB per
    broadcast), as PyTorch's coalesced broadcast does.
    """
    groups: dict = {}
    for t in tensors:
        if not isinstance(t, opweave.Tensor):
            raise TypeError(f"sync_tensors: expected opweave Tensors, got {type(t).__name__}")
        groups.setdefault((t.dtype, str(t.device)), []).append(t)
    with opweave.no_grad():
        for (dtype, _), members in groups.items():
            chunk, size = [], 0
            for t in members:
                if chunk and (size + t.numel()) * dtype.itemsize > BROADCAST_BUCKET_BYTES:
                    _broadcast_flat(chunk, src, group)
                    chunk, size = [], 0
                chunk.append(t)
                size += t.numel()
            _broadcast_flat(chunk, src, group)


def _broadcast_flat(tensors: list, src: int, group) -> None:
    if len(tensors) == 1:
        _api.broadcast(tensors[0], src=src, group=group)
        return
    flat = opweave.cat([t.detach().reshape(-1) for t in tensors])
    _api.broadcast(flat, src=src, group=group)
    offset = 0
    for t in tensors:
        n = t.numel()
        t.copy_(flat[offset : offset + n].view(tuple(t.shape)))
        offset += n


class GradBucket:
    """One bucket of gradients as a communication hook sees it (``torch.distributed.GradBucket``).

    ``buffer()`` is the flat tensor of the bucket's gradients (the hook may reduce it in
    place); ``gradients()`` views of it per parameter; ``parameters()`` the parameters.
    """

    def __init__(self, index: int, buffer, gradients: list, parameters: list, is_last: bool):
        self._index, self._buffer = index, buffer
        self._gradients, self._parameters, self._is_last = gradients, parameters, is_last

    def index(self) -> int:
        """The bucket's position in launch order (0 is launched first)."""
        return self._index

    def buffer(self):
        """The flattened gradients of the bucket."""
        return self._buffer

    def gradients(self) -> list:
        """Each parameter's gradient, a view of :meth:`buffer` in the parameter's shape."""
        return list(self._gradients)

    def parameters(self) -> list:
        """The parameters whose gradients the bucket holds (same order as :meth:`gradients`)."""
        return list(self._parameters)

    def is_last(self) -> bool:
        """Whether this is the last bucket of the backward pass."""
        return self._is_last

    def set_buffer(self, buffer) -> None:
        """Replace the bucket's flat buffer (its values are used as the bucket's gradients)."""
        if not isinstance(buffer, opweave.Tensor) or buffer.numel() != self._buffer.numel():
            raise ValueError(f"GradBucket.set_buffer: expected a tensor of {self._buffer.numel()} elements")
        self._buffer.copy_(buffer.reshape(-1))


class _Bucket:
    __slots__ = ("indices", "offsets", "buffer", "pending", "work", "future")

    def __init__(self, indices, offsets, buffer):
        self.indices, self.offsets, self.buffer = indices, offsets, buffer
        self.pending = set(indices)
        self.work = None
        self.future = None


class Reducer:
    """Averages the gradients of ``params`` over the group, one flat bucket per all_reduce.

    ``mark_ready(i, grad)`` hands in parameter i's gradient (copied into its bucket; None:
    the parameter was not used, its slot is zero); ``finalize()`` waits for every bucket and
    returns the averaged gradients (views of the buckets), in parameter order. With
    ``find_unused_parameters`` the ranks also agree, after the last bucket, on which
    parameters no rank used: their entries in ``finalize()``'s list are None.
    """

    def __init__(
        self,
        params,
        bucket_cap_mb: float = 25.0,
        group=None,
        *,
        first_bucket_cap_mb: float | None = None,
        find_unused_parameters: bool = False,
    ):
        params = list(params)
        if not params or not all(isinstance(p, opweave.Tensor) for p in params):
            raise TypeError("Reducer: params must be a non-empty list of opweave Tensors")
        bad = [i for i, p in enumerate(params) if not (p.dtype.is_floating_point or p.dtype.is_complex)]
        if bad:
            raise TypeError(f"Reducer: parameters {bad} are not floating point or complex; gradients are averaged")
        if bucket_cap_mb <= 0:
            raise ValueError(f"Reducer: bucket_cap_mb must be positive, got {bucket_cap_mb}")
        if first_bucket_cap_mb is not None and first_bucket_cap_mb <= 0:
            raise ValueError(f"Reducer: first_bucket_cap_mb must be positive, got {first_bucket_cap_mb}")
        self.params = params
        self.group = group
        self._group = _group.resolve(group, "Reducer")
        self.find_unused_parameters = find_unused_parameters
        self._hook = None
        self._hook_state = None
        self.buckets: list[_Bucket] = []
        self._where: dict[int, tuple[int, int]] = {}  # param index -> (bucket, offset)
        self._build(
            int(bucket_cap_mb * 2**20),
            int((bucket_cap_mb if first_bucket_cap_mb is None else first_bucket_cap_mb) * 2**20),
        )
        self._next = 0
        self._used: set[int] = set()
        self._used_work = None
        self._used_map = None

    def _build(self, cap: int, first_cap: int) -> None:
        params = self.params
        open_buckets: dict[tuple, tuple[list, int]] = {}
        closed: set = set()  # keys whose first bucket is complete
        order = []
        for i in reversed(range(len(params))):
            p = params[i]
            key = (p.dtype, str(p.device))
            indices, size = open_buckets.get(key, ([], 0))
            limit = cap if key in closed else first_cap
            if indices and (size + p.numel()) * p.dtype.itemsize > limit:
                order.append((key, indices))
                closed.add(key)
                indices, size = [], 0
            indices.append(i)
            open_buckets[key] = (indices, size + p.numel())
        order.extend((key, indices) for key, (indices, _) in open_buckets.items() if indices)
        for (dtype, device), indices in order:
            offsets, total = [], 0
            for i in indices:
                offsets.append(total)
                total += params[i].numel()
            buffer = opweave.zeros((total,), dtype=dtype, device=device)
            b = len(self.buckets)
            self.buckets.append(_Bucket(indices, offsets, buffer))
            for i, offset in zip(indices, offsets):
                self._where[i] = (b, offset)

    def register_comm_hook(self, state, hook) -> None:
        """Reduce each bucket with ``hook(state, bucket: GradBucket) -> Future`` instead of the default average."""
        if not callable(hook):
            raise TypeError("Communication hook must be callable.")
        self._hook, self._hook_state = hook, state

    def bucket_view(self, index: int):
        """Parameter ``index``'s slot in its bucket, in the parameter's shape."""
        b, offset = self._where[index]
        p = self.params[index]
        return self.buckets[b].buffer[offset : offset + p.numel()].view(tuple(p.shape))

    def prepare(self) -> None:
        """Start a new backward pass: every gradient is expected again."""
        for bucket in self.buckets:
            if bucket.work is not None or bucket.future is not None:
                raise RuntimeError("Reducer.prepare: the previous reduction was not finalized")
            bucket.pending = set(bucket.indices)
        self._next = 0
        self._used = set()
        if self._used_work is not None:
            raise RuntimeError("Reducer.prepare: the previous reduction was not finalized")

    def pending(self) -> list[int]:
        """Indices of the parameters whose gradient has not been marked ready in this pass."""
        return sorted(i for bucket in self.buckets for i in bucket.pending)

    def all_launched(self) -> bool:
        """Whether every bucket has been launched (every gradient is in)."""
        return self._next == len(self.buckets)

    def mark_ready(self, index: int, grad, used: bool | None = None) -> None:
        """Parameter ``index``'s gradient is computed: copy it into its bucket, launch buckets that are complete.

        ``grad`` None: the parameter took no part in this pass; its slot contributes zeros.
        ``used`` (default: whether ``grad`` is given) says whether this rank used the parameter,
        for ``find_unused_parameters``; an unused parameter's existing gradient still counts.
        """
        if not 0 <= index < len(self.params):
            raise IndexError(f"Reducer.mark_ready: no parameter {index} (there are {len(self.params)})")
        b, offset = self._where[index]
        bucket = self.buckets[b]
        if index not in bucket.pending:
            raise RuntimeError(
                f"Expected to mark a variable ready only once. Parameter {index}'s gradient was marked ready twice "
                "in one backward pass: the parameter is used outside forward, in several reentrant backward "
                "passes, or shared between modules of several DistributedDataParallel instances."
            )
        param = self.params[index]
        slot = bucket.buffer[offset : offset + param.numel()]
        with opweave.no_grad():
            if grad is None:
                slot.zero_()
            else:
                if tuple(grad.shape) != tuple(param.shape) or grad.dtype != param.dtype:
                    raise ValueError(
                        f"Reducer.mark_ready: gradient of shape {list(grad.shape)} and dtype {grad.dtype} for a "
                        f"parameter of shape {list(param.shape)} and dtype {param.dtype}"
                    )
                slot.copy_(grad.detach().reshape(-1))
        if used if used is not None else grad is not None:
            self._used.add(index)
        bucket.pending.discard(index)
        while self._next < len(self.buckets) and not self.buckets[self._next].pending:
            self._launch(self._next)
            self._next += 1
        if self.find_unused_parameters and self.all_launched():
            used = [1 if i in self._used else 0 for i in range(len(self.params))]
            self._used_map = opweave.tensor(used, dtype=opweave.int32)
            self._used_work = _api.all_reduce(self._used_map, op=ReduceOp.SUM, group=self.group, async_op=True)

    def _launch(self, b: int) -> None:
        bucket = self.buckets[b]
        if self._hook is None:
            bucket.work = _api.all_reduce(bucket.buffer, op=ReduceOp.AVG, group=self.group, async_op=True)
            return
        from ..futures import Future

        params = [self.params[i] for i in bucket.indices]
        views = [self.bucket_view(i) for i in bucket.indices]
        grad_bucket = GradBucket(b, bucket.buffer, views, params, b == len(self.buckets) - 1)
        future = self._hook(self._hook_state, grad_bucket)
        if not isinstance(future, Future):
            raise TypeError(
                f"Communication hook must return an opweave.futures.Future, got {type(future).__name__} "
                f"(for bucket {b})"
            )
        bucket.future = future

    def _wait_bucket(self, bucket: _Bucket) -> None:
        if bucket.work is not None:
            work, bucket.work = bucket.work, None
            work.wait()
        if bucket.future is not None:
            future, bucket.future = bucket.future, None
            value = future.wait()
            if isinstance(value, (list, tuple)) and len(value) == 1:
                value = value[0]
            if not isinstance(value, opweave.Tensor) or value.numel() != bucket.buffer.numel():
                raise RuntimeError(
                    "Communication hook's Future must hold the reduced bucket: a tensor of "
                    f"{bucket.buffer.numel()} elements, got {value!r:.80}"
                )
            if value is not bucket.buffer:
                with opweave.no_grad():
                    bucket.buffer.copy_(value.reshape(-1).to(bucket.buffer.dtype))

    def finalize(self) -> list:
        """Wait for every bucket; the averaged gradients in parameter order (views of the buckets).

        With ``find_unused_parameters``, the entry of a parameter no rank used is None.
        """
        missing = self.pending()
        if missing:
            raise RuntimeError(
                f"Reducer.finalize: parameters {missing} received no gradient in this backward pass "
                "(PyTorch's DDP needs find_unused_parameters=True for that)"
            )
        try:
            for bucket in self.buckets:
                self._wait_bucket(bucket)
            unused = set()
            if self._used_work is not None:
                work, self._used_work = self._used_work, None
                work.wait()
                unused = {i for i, n in enumerate(self._used_map.tolist()) if n == 0}
        finally:
            self._reset()
        return [None if i in unused else self.bucket_view(i) for i in range(len(self.params))]

    def abandon(self) -> None:
        """Wait for whatever this pass launched and forget the pass (after a backward that missed gradients)."""
        try:
            for bucket in self.buckets:
                if bucket.work is not None or bucket.future is not None:
                    try:
                        self._wait_bucket(bucket)
                    except RuntimeError:
                        pass
            if self._used_work is not None:
                self._used_work.wait()
        finally:
            self._reset()

    def _reset(self) -> None:
        for bucket in self.buckets:
            bucket.work = bucket.future = None
            bucket.pending = set(bucket.indices)
        self._used_work = None
        self._next = 0
        self._used = set()
