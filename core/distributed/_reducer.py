"""Bucketed, overlapped gradient averaging: what ``DistributedDataParallel`` will drive from autograd hooks.

opweave has no autograd yet, so there is no ``DistributedDataParallel``; this is
the part of it that needs only collectives, built and tested now. The plan
(``docs/distributed.md``): DDP's constructor broadcasts the module's parameters
and buffers from rank 0 (:func:`sync_tensors`) and builds a :class:`Reducer`
over the parameters; a post-accumulate-grad hook on each parameter calls
:meth:`Reducer.mark_ready`; a callback at the end of backward calls
:meth:`Reducer.finalize`; ``no_sync()`` skips both, so gradients accumulate
locally until the next synchronised step.

Buckets follow PyTorch's Reducer: parameters in reverse order (gradients
arrive roughly last layer first), grouped by dtype and device, each bucket up
to ``bucket_cap_mb``. A bucket is all-reduced (``async_op=True``, on the MPI
engine's worker thread, so it overlaps the rest of backward) as soon as all its
gradients are in and every bucket before it has been launched: every rank
launches buckets in the same order whatever the order its gradients arrive.
"""

from __future__ import annotations

import opweave

from . import _api, _group
from ._reduce_op import ReduceOp


def sync_tensors(tensors, src: int = 0, group=None) -> None:
    """Copy rank ``src``'s ``tensors`` into every rank's, in place (DDP's initial parameter broadcast)."""
    for t in tensors:
        _api.broadcast(t, src=src, group=group)


class _Bucket:
    __slots__ = ("indices", "offsets", "buffer", "pending", "work")

    def __init__(self, indices, offsets, buffer):
        self.indices, self.offsets, self.buffer = indices, offsets, buffer
        self.pending = set(indices)
        self.work = None


class Reducer:
    """Averages the gradients of ``params`` over the group, one flat bucket per all_reduce.

    ``mark_ready(i, grad)`` hands in parameter i's gradient (copied into its bucket);
    ``finalize()`` waits for every bucket and returns the averaged gradients (views of
    the buckets), in parameter order.
    """

    def __init__(self, params, bucket_cap_mb: float = 25.0, group=None):
        params = list(params)
        if not params or not all(isinstance(p, opweave.Tensor) for p in params):
            raise TypeError("Reducer: params must be a non-empty list of opweave Tensors")
        bad = [i for i, p in enumerate(params) if not (p.dtype.is_floating_point or p.dtype.is_complex)]
        if bad:
            raise TypeError(f"Reducer: parameters {bad} are not floating point or complex; gradients are averaged")
        if bucket_cap_mb <= 0:
            raise ValueError(f"Reducer: bucket_cap_mb must be positive, got {bucket_cap_mb}")
        self.params = params
        self.group = group
        self._group = _group.resolve(group, "Reducer")
        cap = int(bucket_cap_mb * 2**20)
        self.buckets: list[_Bucket] = []
        self._where: dict[int, tuple[int, int]] = {}  # param index -> (bucket, offset)
        open_buckets: dict[tuple, tuple[list, int]] = {}
        order = []
        for i in reversed(range(len(params))):
            p = params[i]
            key = (p.dtype, str(p.device))
            indices, size = open_buckets.get(key, ([], 0))
            if indices and (size + p.numel()) * p.dtype.itemsize > cap:
                order.append((key, indices))
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
        self._next = 0

    def prepare(self) -> None:
        """Start a new backward pass: every gradient is expected again."""
        for bucket in self.buckets:
            if bucket.work is not None:
                raise RuntimeError("Reducer.prepare: the previous reduction was not finalized")
            bucket.pending = set(bucket.indices)
        self._next = 0

    def mark_ready(self, index: int, grad) -> None:
        """Parameter ``index``'s gradient is computed: copy it into its bucket, launch buckets that are complete."""
        if not 0 <= index < len(self.params):
            raise IndexError(f"Reducer.mark_ready: no parameter {index} (there are {len(self.params)})")
        b, offset = self._where[index]
        bucket = self.buckets[b]
        if index not in bucket.pending:
            raise RuntimeError(f"Reducer.mark_ready: parameter {index}'s gradient was marked ready twice")
        param = self.params[index]
        if tuple(grad.shape) != tuple(param.shape) or grad.dtype != param.dtype:
            raise ValueError(
                f"Reducer.mark_ready: gradient of shape {list(grad.shape)} and dtype {grad.dtype} for a parameter of "
                f"shape {list(param.shape)} and dtype {param.dtype}"
            )
        bucket.buffer[offset : offset + param.numel()].copy_(grad.reshape(-1))
        bucket.pending.discard(index)
        while self._next < len(self.buckets) and not self.buckets[self._next].pending:
            ready = self.buckets[self._next]
            ready.work = _api.all_reduce(ready.buffer, op=ReduceOp.AVG, group=self.group, async_op=True)
            self._next += 1

    def finalize(self) -> list:
        """Wait for every bucket; the averaged gradients in parameter order (views of the buckets)."""
        missing = sorted(i for bucket in self.buckets for i in bucket.pending)
        if missing:
            raise RuntimeError(
                f"Reducer.finalize: parameters {missing} received no gradient in this backward pass "
                "(PyTorch's DDP needs find_unused_parameters=True for that)"
            )
        grads = [None] * len(self.params)
        for bucket in self.buckets:
            if bucket.work is not None:
                bucket.work.wait()
                bucket.work = None
            for i, offset in zip(bucket.indices, bucket.offsets):
                p = self.params[i]
                grads[i] = bucket.buffer[offset : offset + p.numel()].view(tuple(p.shape))
        self.prepare()
        return grads
