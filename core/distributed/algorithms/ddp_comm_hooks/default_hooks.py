"""DDP's ready-made communication hooks (``torch.distributed.algorithms.ddp_comm_hooks.default_hooks``).

Register one with ``ddp.register_comm_hook(state, hook)``; ``state`` is the process group
to reduce over (None: the default group). Each hook returns a Future of the bucket's
gradients averaged over the group.
"""

from __future__ import annotations

from collections.abc import Callable

import opweave

from ....futures import Future
from ... import _api
from ..._group import GroupMember, resolve
from ..._reducer import GradBucket

__all__ = [
    "allreduce_hook",
    "bf16_compress_hook",
    "bf16_compress_wrapper",
    "fp16_compress_hook",
    "fp16_compress_wrapper",
]


def _group(process_group):
    group = resolve(process_group, "ddp comm hook")
    return group, (None if group is GroupMember.WORLD else group)


def _allreduce_fut(process_group, tensor) -> Future:
    """Average ``tensor`` over the group: divide by its size, then an asynchronous sum."""
    group, arg = _group(process_group)
    tensor.div_(group.size())
    work = _api.all_reduce(tensor, group=arg, async_op=True)
    return work.get_future().then(lambda fut: fut.value()[0])


def allreduce_hook(process_group, bucket: GradBucket) -> Future:
    """All-reduce the bucket's gradients and average them: what DDP does without a hook."""
    return _allreduce_fut(process_group, bucket.buffer())


def _compress_hook(dtype, process_group, bucket: GradBucket) -> Future:
    group, arg = _group(process_group)
    buffer = bucket.buffer()
    compressed = buffer.to(dtype).div_(group.size())

    def decompress(fut: Future):
        buffer.copy_(fut.value()[0])
        return buffer

    return _api.all_reduce(compressed, group=arg, async_op=True).get_future().then(decompress)


def fp16_compress_hook(process_group, bucket: GradBucket) -> Future:
    """Send the gradients as float16 (half the bytes), divided by the group size first; decompress into the bucket."""
    return _compress_hook(opweave.float16, process_group, bucket)


def bf16_compress_hook(process_group, bucket: GradBucket) -> Future:
    """Send the gradients as bfloat16 (half the bytes, float32's range), divided first; decompress into the bucket."""
    return _compress_hook(opweave.bfloat16, process_group, bucket)


def _compress_wrapper(dtype, hook: Callable) -> Callable:
    def wrapped(state, bucket: GradBucket) -> Future:
        buffer = bucket.buffer()
        compressed = GradBucket(bucket.index(), buffer.to(dtype), [], bucket.parameters(), bucket.is_last())

        def decompress(fut: Future):
            value = fut.value()
            buffer.copy_(value[0] if isinstance(value, (list, tuple)) else value)
            return buffer

        return hook(state, compressed).then(decompress)

    return wrapped


def fp16_compress_wrapper(hook: Callable) -> Callable:
    """``hook`` run on a float16 copy of the bucket, its result cast back into the bucket."""
    return _compress_wrapper(opweave.float16, hook)


def bf16_compress_wrapper(hook: Callable) -> Callable:
    """``hook`` run on a bfloat16 copy of the bucket, its result cast back into the bucket."""
    return _compress_wrapper(opweave.bfloat16, hook)
