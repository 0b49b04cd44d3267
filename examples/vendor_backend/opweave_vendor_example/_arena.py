"""Device memory of the pretend NPU: one arena per device and a first-fit allocator.

A real vendor calls its driver here (``npuMalloc``/``npuFree``). The vnpu's
"device memory" is one large byte buffer per device: an anonymous ``mmap``, a
writable bytearray whose pages the OS commits on first touch, so a 512 MiB
arena costs nothing until used. An allocation is an aligned block of it,
found first-fit in an offset-sorted free list, split on allocation and
coalesced with its neighbours on release. A block is released when its
:class:`~opweave.backends.Storage` is garbage-collected (``weakref.finalize``),
so the statistics return to their baseline as soon as the last tensor viewing
a storage goes away.
"""

from __future__ import annotations

import bisect
import mmap
import os
import threading
import weakref
from dataclasses import dataclass

import numpy as np
import opweave

ALIGN = 64  # bytes; every block starts and ends on this boundary
DEFAULT_ARENA_MB = int(os.environ.get("OPWEAVE_VNPU_ARENA_MB", "512"))


@dataclass(frozen=True)
class Block:
    """A storage's handle: where its bytes live (``arena``, byte ``offset``) and how many there are."""

    arena: Arena
    offset: int
    nbytes: int


class Arena:
    """The memory of one device: ``capacity`` bytes and a first-fit free list (thread-safe)."""

    def __init__(self, index: int, capacity: int):
        self.index = index
        self.capacity = capacity
        self.buffer = mmap.mmap(-1, capacity)  # zero-filled, committed page by page when touched
        self.bytes = np.frombuffer(self.buffer, np.uint8)
        self._free: list[tuple[int, int]] = [(0, capacity)]  # (offset, size), sorted by offset
        self._used: dict[int, int] = {}  # offset -> size of live blocks
        self._lock = threading.Lock()
        # Blocks freed while the lock is held: a garbage collection inside a locked section runs the
        # finalizer that frees a block on this same thread, which must not wait for the lock it holds.
        self._pending: list[int] = []
        self.allocated = self.peak = 0

    def malloc(self, nbytes: int) -> int:
        """The offset of a new block of at least ``nbytes`` bytes; OutOfMemoryError when none is free."""
        size = max(ALIGN, -(-nbytes // ALIGN) * ALIGN)
        with self._lock:
            self._release_pending()
            for i, (offset, free) in enumerate(self._free):
                if free >= size:  # first fit: split the block, keep the tail free
                    if free == size:
                        del self._free[i]
                    else:
                        self._free[i] = (offset + size, free - size)
                    self._used[offset] = size
                    self.allocated += size
                    self.peak = max(self.peak, self.allocated)
                    return offset
        raise opweave.OutOfMemoryError(
            f"vnpu:{self.index}: out of memory allocating {nbytes} bytes "
            f"({self.allocated} of {self.capacity} bytes in use; set OPWEAVE_VNPU_ARENA_MB for a larger arena)"
        )

    def free(self, offset: int) -> None:
        """Return a block to the free list (now, or at the next locked call if the lock is held)."""
        self._pending.append(offset)  # list.append is atomic
        if self._lock.acquire(blocking=False):
            try:
                self._release_pending()
            finally:
                self._lock.release()

    def _release_pending(self) -> None:
        """Put the pending blocks back on the free list (the lock is held)."""
        while self._pending:
            self._release(self._pending.pop())

    def _release(self, offset: int) -> None:
        """Merge one block into the free list with its free neighbours (the lock is held)."""
        size = self._used.pop(offset)
        self.allocated -= size
        i = bisect.bisect(self._free, (offset, 0))
        if i < len(self._free) and self._free[i][0] == offset + size:  # merge with the next block
            size += self._free.pop(i)[1]
        if i and sum(self._free[i - 1]) == offset:  # merge with the previous block
            i -= 1
            prev, prev_size = self._free.pop(i)
            offset, size = prev, prev_size + size
        self._free.insert(i, (offset, size))

    def stats(self) -> dict:
        """``allocated`` (bytes in live blocks), ``reserved`` (the arena), ``peak`` and ``num_allocs`` (live blocks)."""
        with self._lock:
            self._release_pending()
            return {
                "allocated": self.allocated,
                "reserved": self.capacity,
                "peak": self.peak,
                "num_allocs": len(self._used),
                "free_blocks": len(self._free),
            }

    def reset_peak(self) -> None:
        """Start measuring the peak from the current allocation."""
        with self._lock:
            self.peak = self.allocated

    def new_storage(self, nbytes: int, device, backend):
        """A :class:`Storage` of ``nbytes`` bytes whose block is freed when the storage is collected."""
        if nbytes == 0:  # nothing to hold: no block, nothing to free
            return opweave.backends.Storage(Block(self, 0, 0), 0, device, backend)
        offset = self.malloc(nbytes)
        storage = opweave.backends.Storage(Block(self, offset, nbytes), nbytes, device, backend)
        weakref.finalize(storage, self.free, offset).atexit = False
        return storage


class Arenas:
    """The arenas of all devices, created on first use."""

    def __init__(self, count: int, capacity: int):
        self.count = count
        self.capacity = capacity
        self._arenas: dict[int, Arena] = {}
        self._lock = threading.Lock()

    def __getitem__(self, index: int) -> Arena:
        arena = self._arenas.get(index)
        if arena is None:
            if not 0 <= index < self.count:
                raise RuntimeError(f"vnpu:{index} does not exist: there are {self.count} vnpu devices")
            with self._lock:
                arena = self._arenas.setdefault(index, Arena(index, self.capacity))
        return arena
