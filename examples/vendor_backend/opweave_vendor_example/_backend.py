"""The vnpu device: a :class:`~opweave.backends.Backend` over the arenas of ``_arena``.

Everything a kernel needs is here:

- :func:`view` — a tensor's elements as a strided NumPy array over its arena
  bytes (read-only for inputs), the way a vendor hands device pointers and
  strides to its own library;
- :func:`kernel` — turns a function of NumPy arrays into a prim kernel. It
  views the tensor arguments, runs the prim's meta function to learn each
  output's shape, strides and dtype, allocates the outputs in the arena, and
  copies the function's results into them (one rounding to the output dtype).
"""

from __future__ import annotations

import functools

import numpy as np
import opweave
from opweave.backends import Backend

from ._arena import DEFAULT_ARENA_MB, Arenas

NAME = "vnpu"
DEVICE_COUNT = 2
_ADDRESS_SPACE = 1 << 40  # device i's arena starts at (i + 1) * 2**40 in data_ptr() addresses


class VNPUBackend(Backend):
    """A pretend NPU with two devices; each owns a byte arena managed by a first-fit allocator."""

    name = NAME
    autocast_dtype = opweave.float16  # opweave.autocast("vnpu") runs the generic GPU policy in float16

    def __init__(self, capacity: int = DEFAULT_ARENA_MB << 20):
        self.arenas = Arenas(DEVICE_COUNT, capacity)

    def device_count(self) -> int:
        """Two devices: ``vnpu:0`` and ``vnpu:1``."""
        return DEVICE_COUNT

    def arena(self, device):
        """The arena of ``device`` (index None means 0)."""
        return self.arenas[device.index or 0]

    def allocate(self, nbytes: int, device):
        """A new block of ``nbytes`` bytes in the device's arena (uninitialised, like real device memory)."""
        return self.arena(device).new_storage(nbytes, device, self)

    def copy_from_host(self, array: np.ndarray, device):
        """Host -> device: a new block holding the bytes of the C-contiguous ``array``."""
        storage = self.allocate(array.nbytes, device)
        block, data = storage.handle, np.ascontiguousarray(array).view(np.uint8).ravel()
        block.arena.bytes[block.offset : block.offset + data.size] = data
        return storage

    def copy_to_host(self, tensor) -> np.ndarray:
        """Device -> host: the tensor's elements (any strides) as a new C-contiguous array."""
        return np.array(view(tensor), order="C", copy=True)

    def data_ptr(self, storage) -> int:
        """A device address: the block's offset in its device's address range."""
        return ((storage.device.index or 0) + 1) * _ADDRESS_SPACE + storage.handle.offset

    def memory_stats(self, device=None) -> dict:
        """Allocator statistics of ``device`` (default ``vnpu:0``): allocated, reserved, peak, num_allocs."""
        return self.arena(opweave.device(device or f"{NAME}:0")).stats()


BACKEND = VNPUBackend()


def memory_stats(device=None) -> dict:
    """``{"allocated", "reserved", "peak", "num_allocs", ...}`` of a vnpu device (bytes; live blocks)."""
    return BACKEND.memory_stats(device)


def view(t, writable: bool = False) -> np.ndarray:
    """The elements of tensor ``t`` as a NumPy array over its arena bytes (no copy).

    Only 0-dim CPU tensors reach a vnpu kernel from another device (the prims
    exempt them from the same-device rule); they are read on the host.
    """
    if t.device.type != NAME:
        return t.numpy(force=True)
    if 0 in t.shape:
        return np.empty(t.shape, t.dtype.numpy)
    block, item = t.untyped_storage().handle, t.dtype.itemsize
    strides = tuple(s * item for s in t.stride())
    a = np.ndarray(t.shape, t.dtype.numpy, block.arena.bytes, block.offset + t.storage_offset() * item, strides)
    a.flags.writeable = writable
    return a


def opmath(a: np.ndarray) -> np.ndarray:
    """float16/bfloat16 arrays widened to float32 (exactly); other arrays unchanged."""
    return a.astype(np.float32) if a.dtype.itemsize == 2 and a.dtype.kind in "fV" else a


def empty(shape, stride, dtype, device):
    """A new uninitialised vnpu tensor with the given layout."""
    return BACKEND.empty_strided(tuple(shape), tuple(stride), dtype, _indexed(device))


def _indexed(device):
    return device if device.index is not None else opweave.device(device.type, 0)


def _write(out, a: np.ndarray) -> None:
    if out.numel():
        with np.errstate(all="ignore"):  # float32 -> float16 overflow is inf, as intended
            np.copyto(view(out, writable=True), a, casting="unsafe")


def _is_tensor(x) -> bool:
    return isinstance(x, opweave.Tensor)


def _as_array(x, widen: bool):
    if _is_tensor(x):
        return opmath(view(x)) if widen else view(x)
    if isinstance(x, (list, tuple)) and any(_is_tensor(v) for v in x):
        return [_as_array(v, widen) for v in x]
    return x


def _meta_like(a: np.ndarray):
    return opweave.empty(a.shape, dtype=opweave.dtype_of_numpy(a.dtype), device="meta")


def _device_of(args):
    """Where the outputs go: the first vnpu tensor argument's device, else the ``device`` argument."""
    for x in args:
        for v in x if isinstance(x, (list, tuple)) else (x,):
            if _is_tensor(v) and v.device.type == NAME:
                return v.device
    return next(x for x in args if isinstance(x, opweave.device))


def kernel(name: str, widen: bool = True):
    """Decorator: make ``fn`` (NumPy arrays in, NumPy arrays out) the vnpu kernel of ``prims::name``.

    Tensor arguments arrive as read-only arena views (float16/bfloat16 widened
    to float32 unless ``widen`` is false); other arguments as they are, in
    schema order. ``fn`` returns one array per output (``None``: leave the
    outputs uninitialised). The outputs' layouts come from the prim's meta
    function; a prim with a data-dependent output shape (meta returns None)
    gets contiguous outputs shaped like the arrays.
    """

    def register(fn):
        op = opweave.ops.lookup(f"prims::{name}")
        single = len(op.schema.returns) == 1

        @functools.wraps(fn)
        def run(*args):
            specs = op.meta(*args)  # the dispatcher ran it already to validate; here we want its outputs
            device = _device_of(args)
            with np.errstate(all="ignore"):  # IEEE results (inf, nan) are intended, not warnings
                results = fn(*(_as_array(a, widen) for a in args))
            results = (results,) if single else results
            if specs is None:  # data-dependent shapes: contiguous outputs of the results' shapes and dtypes
                specs = tuple(_meta_like(r) for r in results)
            specs = (specs,) if isinstance(specs, opweave.Tensor) else specs
            outs = tuple(empty(s.shape, s.stride(), s.dtype, device) for s in specs)
            for out, r in zip(outs, results if results[0] is not None else ()):
                if np.shape(r) != tuple(out.shape):
                    raise RuntimeError(f"prims::{name}: vnpu kernel bug: result shape {np.shape(r)}, meta {out.shape}")
                _write(out, r)
            return outs[0] if single else outs

        KERNELS[f"prims::{name}"] = run
        return fn

    return register


KERNELS: dict = {}  # "prims::name" -> kernel; filled by the kernels package
