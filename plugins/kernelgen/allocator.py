"""A caching allocator over a :class:`~opweave_kernelgen.runtime.Runtime`'s buffers, one per device.

Requests are rounded up to a size class (multiples of 512 bytes, of 1 MiB from
1 MiB up). A freed block goes to its class's free list instead of back to the
driver, and the next request of that class reuses it: creating a buffer
costs a driver call, reusing one costs a list pop. ``empty_cache()`` releases
the cached blocks. When the driver refuses a buffer, the cache is released and
the allocation retried once before :class:`opweave.OutOfMemoryError` is raised.
"""

from __future__ import annotations

import threading

import opweave

_SMALL = 512
_LARGE = 1 << 20


def size_class(nbytes: int) -> int:
    """The block size that serves a request of ``nbytes`` bytes."""
    step = _SMALL if nbytes < _LARGE else _LARGE
    return max(step, -(-nbytes // step) * step)


class Block:
    """A device buffer of ``size`` bytes (``buffer`` is None for zero-byte storages).

    A block handed out by :meth:`CachingAllocator.malloc` goes back to its allocator's free list
    when the last reference to it (its storage's) goes away.
    """

    __slots__ = ("buffer", "size", "owner")

    def __init__(self, buffer, size: int, owner=None):
        self.buffer = buffer
        self.size = size
        self.owner = owner

    def __del__(self):
        owner = self.owner
        if owner is not None and self.buffer is not None:
            try:
                owner.free(Block(self.buffer, self.size))
            except Exception:  # interpreter shutdown: the driver releases everything
                pass


class CachingAllocator:
    """Blocks of one device: live ones counted in ``allocated``, freed ones kept for reuse."""

    def __init__(self, runtime):
        self.runtime = runtime
        self._free: dict[int, list] = {}
        self._lock = threading.RLock()  # a block may be freed by a garbage collection inside a locked section
        self.allocated = 0
        self.cached = 0
        self.peak = 0
        self.num_allocs = 0  # buffers created by the driver
        self.num_reuses = 0  # requests served from the cache

    def malloc(self, nbytes: int) -> Block:
        """A block of at least ``nbytes`` bytes (uninitialised)."""
        if nbytes <= 0:
            return Block(None, 0)
        size = size_class(nbytes)
        with self._lock:
            free = self._free.get(size)
            if free:
                block = free.pop()
                self.cached -= size
                self.num_reuses += 1
            else:
                block = None
            self.allocated += size
            self.peak = max(self.peak, self.allocated)
        if block is None:
            try:
                block = Block(self._create(size), size)
            except BaseException:
                with self._lock:
                    self.allocated -= size
                raise
        block.owner = self
        return block

    def _create(self, size: int):
        rt = self.runtime
        if size > rt.max_alloc:
            raise opweave.OutOfMemoryError(
                f"{rt.device_name}: cannot allocate {size} bytes: the device's largest buffer is {rt.max_alloc} bytes"
            )
        if self.allocated + self.cached > rt.global_mem:
            # drivers may create buffers lazily and fail only at first use (or, on a CPU device, swap): the
            # allocator keeps its blocks within the device's memory itself, releasing the cache before it refuses
            self.empty_cache()
            if self.allocated > rt.global_mem:
                raise opweave.OutOfMemoryError(
                    f"{rt.device_name}: out of memory allocating {size} bytes: "
                    f"{self.allocated - size} bytes are allocated of the device's {rt.global_mem} (cache released)"
                )
        for attempt in range(2):
            try:
                buffer = rt.allocate(size)
                with self._lock:
                    self.num_allocs += 1
                return buffer
            except MemoryError as exc:
                if attempt == 0:
                    self.empty_cache()
                    continue
                raise opweave.OutOfMemoryError(
                    f"{rt.device_name}: out of memory allocating {size} bytes "
                    f"({self.allocated} allocated, cache released): {exc}"
                ) from None

    def free(self, block: Block) -> None:
        """Return ``block`` (a block no storage uses any more) to its size class's free list."""
        if block.buffer is None:
            return
        block.owner = None
        with self._lock:
            self.allocated -= block.size
            self.cached += block.size
            self._free.setdefault(block.size, []).append(block)

    def empty_cache(self) -> None:
        """Release every cached block to the driver."""
        with self._lock:
            blocks = [b for free in self._free.values() for b in free]
            self._free.clear()
            self.cached = 0
        for b in blocks:
            self.runtime.free(b.buffer)

    def stats(self) -> dict:
        """``allocated`` (live blocks), ``reserved`` (live + cached), ``peak``, ``num_allocs``, ``num_reuses``."""
        with self._lock:
            return {
                "allocated": self.allocated,
                "reserved": self.allocated + self.cached,
                "cached": self.cached,
                "peak": self.peak,
                "num_allocs": self.num_allocs,
                "num_reuses": self.num_reuses,
            }
