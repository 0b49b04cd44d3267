"""A device whose memory is host bytes, for the broken-plugin fixtures: each declares one under its own name."""

from __future__ import annotations

import weakref

import numpy as np
import opweave
from opweave.backends import Backend, Storage


class HostMemory(Backend):
    """Storage is a ``bytearray``; copies go through NumPy views of it."""

    def __init__(self, name: str):
        self.name = name

    def allocate(self, nbytes, device):
        """A zero-filled bytearray."""
        return Storage(bytearray(nbytes), nbytes, device, self)

    def copy_from_host(self, array, device):
        """Copy the array's bytes in."""
        data = bytearray(np.ascontiguousarray(array).tobytes())
        return Storage(data, len(data), device, self)

    def copy_to_host(self, tensor):
        """Read the tensor's elements out through a strided view of the bytes."""
        return np.array(view(tensor), copy=True, order="C")


class PinnedHostMemory(HostMemory):
    """A host-memory device that also page-locks host memory (a record of its blocks) and copies asynchronously.

    It is an accelerator only while ``available`` is true, so tests that do not switch it on see none.
    """

    has_pinned_memory = True

    def __init__(self, name: str):
        super().__init__(name)
        self.available = False
        self.blocks: dict[int, int] = {}  # address -> size of the live pinned blocks
        self.async_copies: list[int] = []  # source address of each asynchronous copy

    def is_available(self):
        """Whether the device is switched on."""
        return self.available

    def pinned_host_alloc(self, nbytes):
        """A NumPy buffer recorded as pinned until it is freed."""
        block = np.empty(nbytes, np.uint8)
        address = block.ctypes.data
        self.blocks[address] = nbytes
        weakref.finalize(block, self.blocks.pop, address, None)
        return block

    def is_pinned_host(self, address):
        """Whether ``address`` lies in a live pinned block."""
        return any(start <= address < start + size for start, size in self.blocks.items())

    def from_host_async(self, array, device):
        """Record the source address, then copy."""
        self.async_copies.append(array.ctypes.data)
        return self.from_host(array, device)

    def to_host_async(self, tensor):
        """A pinned CPU tensor (the public ``pin_memory=True`` factory) with ``tensor``'s values; its address kept."""
        import opweave

        out = opweave.empty(tuple(tensor.shape), dtype=tensor.dtype, pin_memory=True)
        out.copy_(opweave.from_numpy(self.copy_to_host(tensor)))
        self.async_copies.append(out.data_ptr())
        return out


def view(t) -> np.ndarray:
    """The elements of ``t`` as a NumPy array over its bytes (0-dim CPU tensors are read on the host)."""
    if t.device.type == "cpu":
        return t.numpy()
    if 0 in t.shape:
        return np.empty(t.shape, t.dtype.numpy)
    buf = np.frombuffer(t.untyped_storage().handle, np.uint8)
    strides = tuple(s * t.dtype.itemsize for s in t.stride())
    return np.ndarray(t.shape, t.dtype.numpy, buf, t.storage_offset() * t.dtype.itemsize, strides)


def new(backend: HostMemory, array: np.ndarray, device=None) -> opweave.Tensor:
    """A tensor of ``backend`` holding a copy of ``array``."""
    return backend.from_host(np.asarray(array), device or opweave.device(backend.name, 0))
