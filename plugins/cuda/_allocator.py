"""The CUDA caching allocator: CUDA's stream-ordered memory pool, with opweave's accounting on top.

Blocks are ``cuMemAllocAsync`` allocations from the device's default pool, whose release
threshold is the maximum, so memory freed with ``cuMemFreeAsync`` stays reserved in the
pool and the driver reuses it (per stream, without a synchronisation) for later requests:
the pool does what a hand-written caching allocator would. ``empty_cache()`` waits for the
device and trims the pool to zero. When the pool cannot grow, the cache is released and the
request retried once; then :class:`opweave.OutOfMemoryError` carries CUDA's message.

Small blocks (up to :data:`SMALL` bytes, rounded up to :data:`ROUND`) are also kept here when
freed, per stream and size, up to :data:`CACHE_LIMIT` bytes in all, and handed out again to the
next request of that size on that stream: no driver call for the allocations of tiny tensors
(two driver calls an op otherwise, about 1 µs each). The reuse is stream-ordered as the pool's
is: work queued after the reuse on the same stream runs after the work queued before the free.
``empty_cache()`` and the out-of-memory retry return them to the pool first.
"""

from __future__ import annotations

import threading

import opweave
from opweave_kernelgen.allocator import Block

#: Largest request kept per stream and size when freed (bytes), the rounding of those requests, and the bytes kept.
SMALL = 1 << 20
ROUND = 512
CACHE_LIMIT = 64 << 20


class PoolAllocator:
    """Blocks of one CUDA device: ``allocated`` and ``peak`` counted here, ``reserved`` read from the pool."""

    def __init__(self, runtime):
        self.runtime = runtime
        self._lock = threading.RLock()  # a block may be freed by a garbage collection inside a locked section
        self._small: dict = {}  # (stream, rounded size) -> freed DeviceBuffers of that size on that stream
        self.small_cached = 0
        self.allocated = 0
        self.peak = 0
        self.num_allocs = 0
        self.num_frees = 0
        self.num_ooms = 0

    def malloc(self, nbytes: int) -> Block:
        """A block of ``nbytes`` bytes (uninitialised), allocated on the current stream."""
        if nbytes <= 0:
            return Block(None, 0)
        rt = self.runtime
        size = nbytes
        if nbytes <= SMALL:
            size = -(-nbytes // ROUND) * ROUND
            with self._lock:
                kept = self._small.get((rt.stream(), size))
                if kept:
                    buffer = kept.pop()
                    self.small_cached -= size
                    self._count(nbytes)
                    return Block(buffer, nbytes, self)
        try:
            buffer = rt.allocate(size)
        except MemoryError:
            self.empty_cache()
            try:
                buffer = rt.allocate(size)
            except MemoryError as exc:
                with self._lock:
                    self.num_ooms += 1
                raise opweave.OutOfMemoryError(
                    f"{rt.device_name}: CUDA out of memory allocating {nbytes} bytes "
                    f"({self.allocated} bytes allocated by opweave, cache released): {exc}"
                ) from None
        with self._lock:
            self._count(nbytes)
        return Block(buffer, nbytes, self)

    def _count(self, nbytes: int) -> None:
        self.allocated += nbytes
        if self.allocated > self.peak:
            self.peak = self.allocated
        self.num_allocs += 1

    def free(self, block: Block) -> None:
        """Keep a small ``block`` for its stream, else return its memory to the pool (on the stream it was
        allocated on)."""
        buffer = block.buffer
        if buffer is None:
            return
        block.owner = None
        with self._lock:
            self.allocated -= block.size
            self.num_frees += 1
            size = buffer.size
            if size <= SMALL and self.small_cached + size <= CACHE_LIMIT:
                self._small.setdefault((buffer.stream, size), []).append(buffer)
                self.small_cached += size
                return
        self.runtime.free(buffer)

    def release_cached(self) -> None:
        """Return the kept small blocks to the pool."""
        with self._lock:
            kept = [b for buffers in self._small.values() for b in buffers]
            self._small.clear()
            self.small_cached = 0
        for buffer in kept:
            self.runtime.free(buffer)

    def empty_cache(self) -> None:
        """Release the kept small blocks and the pool's unused memory to the driver (waits for the device first)."""
        self.release_cached()
        self.runtime.trim()

    def reset_peak(self) -> None:
        """Make ``peak`` the bytes allocated now."""
        with self._lock:
            self.peak = self.allocated

    def stats(self) -> dict:
        """``allocated``, ``reserved`` (the pool's), ``cached`` (reserved, not allocated: the small blocks kept here
        included), ``peak``, counts."""
        reserved = self.runtime.pool_bytes("reserved")
        with self._lock:
            return {
                "allocated": self.allocated,
                "reserved": reserved,
                "cached": max(reserved - self.allocated, 0),
                "peak": self.peak,
                "num_allocs": self.num_allocs,
                "num_frees": self.num_frees,
                "num_ooms": self.num_ooms,
            }
