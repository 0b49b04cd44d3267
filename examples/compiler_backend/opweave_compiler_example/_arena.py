"""The device's memory: chunks of host memory handed out in 64-byte-aligned blocks, freed blocks reused by size."""

from __future__ import annotations

import threading

from opweave_kernelgen.c_runtime import HostBuffer

CHUNK = 64 << 20  # bytes reserved from the host at a time
ALIGN = 64


class Block(HostBuffer):
    """``nbytes`` bytes at ``offset`` in chunk ``chunk`` of the arena."""

    __slots__ = ("chunk", "offset")

    def __init__(self, chunk: HostBuffer, offset: int, nbytes: int):
        self.chunk, self.offset, self.nbytes = chunk, offset, nbytes
        self.array = chunk.array[offset : offset + nbytes]
        self.ptr = chunk.ptr + offset


class Arena:
    """A bump allocator over host chunks; freed blocks go to a free list of their size."""

    def __init__(self):
        self._chunks: list[HostBuffer] = []
        self._top = 0  # the first unused byte of the last chunk
        self._free: dict[int, list[Block]] = {}
        self._lock = threading.Lock()

    def allocate(self, nbytes: int) -> Block:
        """A block of at least ``nbytes`` bytes (a freed one of that size first)."""
        size = -(-nbytes // ALIGN) * ALIGN
        with self._lock:
            free = self._free.get(size)
            if free:
                return free.pop()
            if not self._chunks or self._top + size > self._chunks[-1].nbytes:
                self._chunks.append(HostBuffer(max(CHUNK, size)))
                self._top = 0
            block = Block(self._chunks[-1], self._top, size)
            self._top += size
            return block

    def free(self, block: Block) -> None:
        """Keep ``block`` for the next request of its size."""
        with self._lock:
            self._free.setdefault(block.nbytes, []).append(block)
