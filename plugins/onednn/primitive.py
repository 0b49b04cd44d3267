"""Running oneDNN primitives on NumPy buffers, and 64-byte aligned NumPy buffers for them."""

from __future__ import annotations

import math
import threading

import numpy as np

from ._library import ARG_DST, ARG_SCRATCHPAD, ARG_SRC, QUERY_SCRATCHPAD_MD, library
from .descriptors import desc_size, impl_info, query_md, reorder_desc


class Primitive:
    """A created primitive with its argument layouts; :meth:`run` binds NumPy buffers and executes.

    ``descs`` maps argument ids to the memory descriptors the buffers passed to :meth:`run`
    must have; every argument is passed at every call. The memory objects are made once and
    re-pointed at each call's buffers. The scratchpad is user-managed (one buffer per primitive,
    not the library's per-thread one), so a primitive may run from any thread; its calls are
    serialised by a lock.
    """

    def __init__(self, pd, descs: dict):
        L = library()
        ffi, lib = L.ffi, L.lib
        self.pd = pd
        self.impl = impl_info(pd)
        out = ffi.new("dnnl_primitive_t *")
        L.check(lib.dnnl_primitive_create(out, pd), "dnnl_primitive_create")
        self.handle = ffi.gc(out[0], lib.dnnl_primitive_destroy)
        self.descs = dict(descs)
        scratch = query_md(pd, QUERY_SCRATCHPAD_MD)
        self.scratch_bytes = desc_size(scratch)
        self._scratch = None
        if self.scratch_bytes:
            self.descs[ARG_SCRATCHPAD] = scratch
            self._scratch = aligned_empty(self.scratch_bytes)
        self._memories = {}
        for arg, md in self.descs.items():
            mem = ffi.new("dnnl_memory_t *")
            L.check(lib.dnnl_memory_create(mem, md, L.engine, ffi.NULL), "dnnl_memory_create")
            self._memories[arg] = ffi.gc(mem[0], lib.dnnl_memory_destroy)
        self._args = ffi.new("dnnl_exec_arg_t[]", list(self._memories.items()))
        self._inputs = frozenset(self.descs) - {ARG_SCRATCHPAD}
        self._lock = threading.Lock()

    def run(self, buffers: dict) -> None:
        """Execute with ``buffers`` (argument id -> NumPy array laid out as ``descs`` says) and wait."""
        if buffers.keys() != self._inputs:
            raise ValueError(
                f"oneDNN primitive {self.impl}: arguments {sorted(buffers)}, expected {sorted(self._inputs)}"
            )
        L = library()
        ffi, lib = L.ffi, L.lib
        with self._lock:  # memory objects and scratchpad are shared: one execution at a time
            if self._scratch is not None:
                buffers = {**buffers, ARG_SCRATCHPAD: self._scratch}
            for arg, array in buffers.items():
                handle = ffi.cast("void *", array.__array_interface__["data"][0])
                L.check(lib.dnnl_memory_set_data_handle(self._memories[arg], handle), "dnnl_memory_set_data_handle")
            stream = L.stream
            L.check(
                lib.dnnl_primitive_execute(self.handle, stream, len(self._memories), self._args),
                "dnnl_primitive_execute",
            )
            L.check(lib.dnnl_stream_wait(stream), "dnnl_stream_wait")


def reorder(src: np.ndarray, src_md, dst_md) -> np.ndarray:
    """``src`` (laid out as ``src_md``) copied into a new 64-byte aligned buffer laid out as ``dst_md``."""
    out = aligned_empty(desc_size(dst_md))
    Primitive(reorder_desc(src_md, dst_md), {ARG_SRC: src_md, ARG_DST: dst_md}).run({ARG_SRC: src, ARG_DST: out})
    return out


def aligned_array(shape, dtype, alignment: int = 64) -> np.ndarray:
    """An uninitialised C-contiguous array whose first element is ``alignment``-aligned."""
    dtype = np.dtype(dtype)
    return aligned_empty(math.prod(shape) * dtype.itemsize, alignment).view(dtype).reshape(shape)


def aligned(array: np.ndarray, alignment: int = 64) -> np.ndarray:
    """``array`` itself when C-contiguous and aligned, else an aligned copy (oneDNN runs faster on aligned rows)."""
    if array.flags.c_contiguous and array.__array_interface__["data"][0] % alignment == 0:
        return array
    out = aligned_array(array.shape, array.dtype, alignment)
    out[...] = array
    return out


def aligned_empty(nbytes: int, alignment: int = 64) -> np.ndarray:
    """An uninitialised byte buffer whose first byte is ``alignment``-aligned."""
    raw = np.empty(nbytes + alignment, np.uint8)
    start = -raw.__array_interface__["data"][0] % alignment
    return raw[start : start + nbytes]
