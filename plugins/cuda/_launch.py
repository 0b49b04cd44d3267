"""Kernel launches as the driver takes them: argument packing and launch geometry (pure functions, no GPU)."""

from __future__ import annotations

import ctypes

import numpy as np

#: CUDA's limits on a launch: blocks per grid along x, y, z; threads per block.
MAX_GRID = (2**31 - 1, 65535, 65535)


def geometry(grid: tuple, block: tuple, max_threads: int = 1024) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
    """``(grid, block)`` as three dims each; ``RuntimeError`` when a dim exceeds what CUDA launches."""
    g = tuple(int(x) for x in grid) + (1,) * (3 - len(grid))
    b = tuple(int(x) for x in block) + (1,) * (3 - len(block))
    if len(g) != 3 or len(b) != 3:
        raise RuntimeError(f"cuda: a launch has at most 3 dims (grid {grid}, block {block})")
    if any(x <= 0 for x in g + b):
        raise RuntimeError(f"cuda: empty launch (grid {grid}, block {block})")
    if b[0] * b[1] * b[2] > max_threads:
        raise RuntimeError(f"cuda: {b[0] * b[1] * b[2]} threads per block exceed the device's {max_threads}")
    for axis, (n, limit) in enumerate(zip(g, MAX_GRID)):
        if n > limit:
            raise RuntimeError(f"cuda: {n} blocks along grid axis {'xyz'[axis]} exceed CUDA's {limit}")
    return g, b


def arg_bytes(arg) -> bytes:
    """The bytes kernel parameter ``arg`` passes: a buffer's pointer (None: null), a NumPy scalar, a packed struct."""
    if type(arg) is bytes:
        return arg
    if arg is None:  # the buffer of an empty storage: a null pointer
        return bytes(8)
    if isinstance(arg, np.generic):
        return arg.tobytes()
    ptr = getattr(arg, "ptr", None)
    if ptr is not None:
        return int(ptr).to_bytes(8, "little")
    raise TypeError(
        f"cuda: a kernel argument must be a device buffer, a NumPy scalar or bytes, not {type(arg).__name__}"
    )


class Params:
    """``void *kernelParams[]`` for ``cuLaunchKernel``: each argument's bytes, 8-byte aligned, and their addresses.

    Keep the object alive until the launch call returns (the driver copies the values at launch).
    """

    __slots__ = ("_data", "_ptrs", "address")

    def __init__(self, args):
        blobs = [arg_bytes(a) for a in args]
        offsets, total = [], 0
        for b in blobs:
            offsets.append(total)
            total += -(-len(b) // 8) * 8
        self._data = ctypes.create_string_buffer(max(total, 8))
        base = ctypes.addressof(self._data)
        for b, off in zip(blobs, offsets):
            ctypes.memmove(base + off, b, len(b))
        self._ptrs = (ctypes.c_void_p * max(len(blobs), 1))(*[base + off for off in offsets])
        self.address = ctypes.addressof(self._ptrs) if blobs else 0

    def values(self, i: int, size: int) -> bytes:
        """The ``size`` bytes parameter ``i`` points at (for tests)."""
        return ctypes.string_at(self._ptrs[i], size)
