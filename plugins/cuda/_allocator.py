"""The CUDA caching allocator: CUDA's stream-ordered memory pool, with opweave's accounting on top.

Blocks are ``cuMemAllocAsync`` allocations from the device's default pool, whose release
threshold is the maximum, so memory freed with ``cuMemFreeAsync`` stays reserved in the
pool and the driver reuses it (per stream, without a synchronisation) for later requests:
the pool does what a hand-written caching allocator would. ``empty_cache()`` waits for the
device and trims the pool to zero. When the pool cannot grow, the cache is released and the
request retried once; then :class:`opweave.OutOfMemoryError` carries CUDA's message.
"""

from __future__ import annotations

import threading

import opweave
from opweave_kernelgen.allocator import Block


class PoolAllocator:
    """Blocks of one CUDA device: ``allocated`` and ``peak`` counted here, ``reserved`` read from the pool."""

    def __init__(self, runtime):
        self.runtime = runtime
        self._lock = threading.Lock()
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
        try:
            buffer = rt.allocate(nbytes)
        except MemoryError:
            self.empty_cache()
            try:
                buffer = rt.allocate(nbytes)
            except MemoryError as exc:
                with self._lock:
                    self.num_ooms += 1
                raise opweave.OutOfMemoryError(
                    f"{rt.device_name}: CUDA out of memory allocating {nbytes} bytes "
                    f"({self.allocated} bytes allocated by opweave, cache released): {exc}"
                ) from None
        with self._lock:
            self.allocated += nbytes
            self.peak = max(self.peak, self.allocated)
            self.num_allocs += 1
        return Block(buffer, nbytes, self)

    def free(self, block: Block) -> None:
        """Return ``block``'s memory to the pool (on the stream it was allocated on)."""
        if block.buffer is None:
            return
        block.owner = None
        self.runtime.free(block.buffer)
        with self._lock:
            self.allocated -= block.size
            self.num_frees += 1

    def empty_cache(self) -> None:
        """Release the pool's unused memory to the driver (waits for the device first)."""
        self.runtime.trim()

    def reset_peak(self) -> None:
        """Make ``peak`` the bytes allocated now."""
        with self._lock:
            self.peak = self.allocated

    def stats(self) -> dict:
        """``allocated``, ``reserved`` (the pool's), ``cached`` (reserved, not allocated), ``peak``, counts."""
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
