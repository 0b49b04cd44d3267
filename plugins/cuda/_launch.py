"""Kernel launches as the driver takes them: argument packing and launch geometry (pure functions, no GPU)."""

from __future__ import annotations

import ctypes
import struct
import threading

import numpy as np

_U64 = struct.Struct("<Q").pack


class DeviceBuffer:
    """A device allocation: its address, its size and the stream it was allocated on (freed on that stream)."""

    __slots__ = ("ptr", "size", "stream")

    def __init__(self, ptr: int, size: int, stream: int):
        self.ptr, self.size, self.stream = ptr, size, stream

    def __int__(self) -> int:
        return self.ptr


#: CUDA's limits on a launch: blocks per grid along x, y, z; threads per block.
MAX_GRID = (2**31 - 1, 65535, 65535)


def geometry(grid: tuple, block: tuple, max_threads: int = 1024) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
    """``(grid, block)`` as three dims each; ``RuntimeError`` when a dim exceeds what CUDA launches."""
    if len(grid) == 1 and len(block) == 1:  # the common 1-D launch
        g0, b0 = grid[0], block[0]
        if 0 < g0 <= MAX_GRID[0] and 0 < b0 <= max_threads:
            return (int(g0), 1, 1), (int(b0), 1, 1)
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


#: struct codes of the NumPy scalar types a kernel argument may be (little-endian, no padding).
_CODES = {
    np.int64: "q", np.int32: "i", np.int16: "h", np.int8: "b", np.uint64: "Q", np.uint32: "I", np.uint16: "H",
    np.uint8: "B", np.bool_: "?", np.float64: "d", np.float32: "f", np.float16: "e",
}  # fmt: skip


class Params:
    """``void *kernelParams[]`` for ``cuLaunchKernel``: each argument's bytes, 8-byte aligned, and their addresses.

    The values live in a scratch buffer of the calling thread, reused by every launch (the driver copies
    the parameters before ``cuLaunchKernel`` returns). Each layout (the arguments' struct codes) gets a
    ``struct.Struct`` with the alignment padding and the pointer array once per thread; a launch is one
    ``pack_into`` of the values. ``address`` is valid until the thread's next ``Params``.
    """

    __slots__ = ("address", "_ptrs")

    def __init__(self, args):
        codes, values = [], []
        for a in args:
            t = type(a)
            code = _CODES.get(t)
            if code is not None:
                codes.append(code)
                values.append(a)
            elif t is DeviceBuffer:
                codes.append("Q")
                values.append(a.ptr)
            else:
                raw = a if t is bytes else arg_bytes(a)
                codes.append(f"{len(raw)}s")
                values.append(raw)
        scratch = _scratch()
        key = ",".join(codes)
        layout = scratch.layouts.get(key)
        if layout is None:
            layout = scratch.layouts[key] = _layout(scratch, codes)
        packer, ptrs = layout
        packer.pack_into(scratch.buffer, 0, *values)
        self._ptrs = ptrs
        self.address = ctypes.addressof(ptrs) if codes else 0

    def values(self, i: int, size: int) -> bytes:
        """The ``size`` bytes parameter ``i`` points at (for tests)."""
        return ctypes.string_at(self._ptrs[i], size)


#: Bytes of kernel parameters one launch may pass (CUDA's own limit is 32764 on sm_70 and newer).
SCRATCH = 32768
_local = threading.local()


def _scratch():
    found = getattr(_local, "scratch", None)
    if found is None:
        buffer = ctypes.create_string_buffer(SCRATCH)
        found = _local.scratch = _Scratch(buffer, ctypes.addressof(buffer))
    return found


class _Scratch:
    __slots__ = ("buffer", "base", "layouts")

    def __init__(self, buffer, base):
        self.buffer, self.base, self.layouts = buffer, base, {}


def _layout(scratch, codes):
    """``(struct.Struct, pointer array)`` of arguments with struct ``codes``, each at an 8-byte aligned offset."""
    fmt, offsets, total = "<", [], 0
    for code in codes:
        size = struct.calcsize("<" + code)
        pad = -size % 8
        offsets.append(scratch.base + total)
        fmt += code + (f"{pad}x" if pad else "")
        total += size + pad
    if total > SCRATCH:
        raise RuntimeError(f"cuda: {total} bytes of kernel parameters exceed {SCRATCH}")
    return struct.Struct(fmt), (ctypes.c_void_p * max(len(codes), 1))(*offsets)
