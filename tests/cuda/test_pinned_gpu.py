"""Pinned host memory on a GPU: ``cuMemHostAlloc`` blocks, the driver's pointer query, asynchronous copies.

Skipped without a device (``tests/test_pinned_memory.py`` checks the core's semantics and errors on any machine).
"""

from __future__ import annotations

import gc

import numpy as np
import opweave as ow
import pytest

pytestmark = pytest.mark.skipif(not ow.cuda.is_available(), reason=f"no CUDA device: {ow.cuda.unavailable_reason()}")


@pytest.mark.parametrize("dtype", [ow.float32, ow.float16, ow.bfloat16, ow.int64, ow.uint8, ow.complex64])
def test_pin_memory_and_is_pinned(dtype):
    values = np.random.default_rng(0).standard_normal((33, 17)) * 10
    source = ow.tensor(values).to(dtype)
    pinned = source.pin_memory()
    assert pinned.device.type == "cpu" and pinned.is_pinned() and not source.is_pinned()
    assert pinned.pin_memory() is pinned
    np.testing.assert_array_equal(pinned.numpy(), source.numpy())
    assert ow.zeros(4, pin_memory=True).is_pinned()
    assert ow.tensor([1, 2], pin_memory=True).is_pinned()
    with pytest.raises(RuntimeError, match="only dense CPU tensors can be pinned"):
        ow.ones(2, device="cuda").pin_memory()
    with pytest.raises(RuntimeError, match="Only dense CPU tensors can be pinned"):
        ow.ones(2, device="cuda", pin_memory=True)


def test_non_blocking_copy_from_pinned_memory_on_a_side_stream():
    """The copy is queued on the current stream and returns; after the stream's work, the values are there."""
    n = 1 << 24
    host = ow.arange(n, dtype=ow.float32).pin_memory()
    side = ow.cuda.Stream()
    with ow.cuda.stream(side):
        moved = host.to("cuda", non_blocking=True)
        doubled = moved * 2
    side.synchronize()
    got = doubled.cpu().numpy()
    np.testing.assert_array_equal(got[:5], [0, 2, 4, 6, 8])
    np.testing.assert_array_equal(got[-1], 2 * (n - 1))
    back = moved.to("cpu", non_blocking=True)  # device -> host: synchronous here (see docs/cuda.md)
    np.testing.assert_array_equal(back.numpy()[-3:], np.arange(n - 3, n, dtype=np.float32))


def test_pinned_blocks_are_freed_with_their_last_tensor():
    """cuMemFreeHost runs when the last tensor viewing a block is collected: the driver forgets the address."""
    from opweave_cuda import BACKEND

    pinned = ow.empty(1 << 22, pin_memory=True)
    address = pinned.data_ptr()
    view = pinned[100:200]
    del pinned
    gc.collect()
    assert BACKEND.is_pinned_host(address), "a view keeps the block"
    del view
    gc.collect()
    assert not BACKEND.is_pinned_host(address)


def test_non_blocking_copy_to_the_host_fills_a_pinned_tensor_on_the_stream():
    """``to("cpu", non_blocking=True)`` returns a pinned CPU tensor at once; after the stream has passed the copy it
    holds the values, for contiguous and transposed sources (the latter made contiguous on the device first)."""
    values = np.random.default_rng(3).standard_normal((257, 129)).astype(np.float32)
    x = ow.tensor(values, device="cuda")
    s = ow.cuda.Stream()
    with ow.cuda.stream(s):
        y = x * 2
        back = y.to("cpu", non_blocking=True)
        back_t = y.T.to("cpu", non_blocking=True)
    assert back.device.type == "cpu" and back.is_pinned() and back_t.is_pinned()
    s.synchronize()
    np.testing.assert_array_equal(back.numpy(), values * 2)
    np.testing.assert_array_equal(back_t.numpy(), (values * 2).T)
    assert not x.to("cpu").is_pinned()  # non_blocking=False: an ordinary synchronous copy
