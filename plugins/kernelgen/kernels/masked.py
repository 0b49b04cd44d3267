"""Prims with data-dependent output sizes: ``nonzero``, ``masked_select``, ``masked_scatter``,
``repeat_interleave`` (generated, see ``codegen.masked``).

Each counts on the device first (chunk weights, then one work item's prefix sum),
reads the total back (one small read, as CUDA does), allocates the output and
writes it in C order. A negative repeat count, or a ``masked_scatter`` source with
fewer elements than the mask selects, raises the prim's ``ValueError``; ranks above
``MAX_RANK`` run through the CPU fallback.
"""

from __future__ import annotations

import numpy as np
import opweave

from ..codegen import masked as gen
from ..codegen.common import MAX_RANK
from ._common import buf, dims, empty, i64, kernel, launch, program_kernels, runtime_on
from .scatter import RAW, Errors, copy_of, raw_types, sizes, strides


def _kernels(rt, dtype) -> dict:
    """The kernels for elements of ``dtype``, by unsuffixed name (and ``scan``)."""
    raws = raw_types(rt)
    ks = program_kernels(rt, ("masked", raws), lambda: gen.program(rt.dialect, raws))
    raw = RAW[dtype.itemsize]
    out = {"scan": ks["scan"]}
    for name in ("count", "nonzero_emit", "repeat_emit", "select_emit", "scatter_emit"):
        if f"{name}_{raw}" in ks:
            out[name] = ks[f"{name}_{raw}"]
    return out


def _zero_mask(dtype) -> np.int64:
    """The bits of an element of ``dtype`` that make it nonzero (all but the sign bits of floats)."""
    bits = 8 * dtype.itemsize
    if dtype.is_complex:
        half = (1 << (bits // 2 - 1)) - 1
        value = half | (half << (bits // 2))
    elif dtype.is_floating_point:
        value = (1 << (bits - 1)) - 1
    else:
        value = (1 << bits) - 1
    return np.array(value & ((1 << 64) - 1), np.uint64).view(np.int64)


def _walk(t) -> tuple:
    """The ``shape, ndim, n, nchunks`` arguments that walk ``t`` in chunks."""
    n = t.numel()
    return dims(sizes(t)), np.int32(len(sizes(t))), i64(n), i64(-(-n // gen.CHUNK))


def _count(rt, t, mode: int, err=None):
    """(chunk offsets on the device, the total weight) of ``t``: nonzero elements (mode 0) or values (mode 1)."""
    n = t.numel()
    chunks = -(-n // gen.CHUNK)
    cnt = empty((chunks + 1,), opweave.int64, t.device)
    ks = _kernels(rt, t.dtype)
    flag = err or Errors(t.device)
    launch(rt, ks["count"], chunks, buf(cnt), buf(t), i64(t.storage_offset()), dims(strides(t)),
           _zero_mask(t.dtype), np.int32(mode), flag.buffer, *_walk(t))  # fmt: skip
    launch(rt, ks["scan"], 1, buf(cnt), i64(chunks))
    total = np.zeros(1, np.int64)
    rt.copy_to_host(total, buf(cnt), chunks * 8)
    return cnt, int(total[0])


@kernel("nonzero")
def nonzero(a):
    """The int64 coordinates ``[n, ndim]`` of the nonzero elements of ``a`` (NaN is nonzero), in C order."""
    if a.ndim > MAX_RANK:
        return NotImplemented
    if a.numel() == 0:
        return empty((0, a.ndim), opweave.int64, a.device)
    rt = runtime_on(a.device)
    cnt, total = _count(rt, a, 0)
    out = empty((total, a.ndim), opweave.int64, a.device)
    if total and a.ndim:
        k = _kernels(rt, a.dtype)["nonzero_emit"]
        launch(rt, k, -(-a.numel() // gen.CHUNK), buf(out), buf(a), i64(a.storage_offset()), dims(strides(a)),
               _zero_mask(a.dtype), buf(cnt), *_walk(a))  # fmt: skip
    return out


@kernel("masked_select")
def masked_select(a, mask):
    """The elements of ``a`` where ``mask`` is True, as a new 1-D tensor in C order."""
    if a.ndim > MAX_RANK:
        return NotImplemented
    if a.numel() == 0:
        return empty((0,), a.dtype, a.device)
    rt = runtime_on(a.device)
    cnt, total = _count(rt, mask, 0)
    out = empty((total,), a.dtype, a.device)
    if total:
        k = _kernels(rt, a.dtype)["select_emit"]
        launch(rt, k, -(-a.numel() // gen.CHUNK), buf(out), buf(a), i64(a.storage_offset()), dims(strides(a)),
               buf(mask), i64(mask.storage_offset()), dims(strides(mask)), buf(cnt), *_walk(a))  # fmt: skip
    return out


@kernel("masked_scatter")
def masked_scatter(a, mask, source):
    """A copy of ``a`` whose masked elements take ``source``'s leading elements (C order)."""
    if a.ndim > MAX_RANK or source.ndim > MAX_RANK:
        return NotImplemented
    out = copy_of(a)
    if a.numel() == 0:
        return out
    rt = runtime_on(a.device)
    cnt, total = _count(rt, mask, 0)
    if total > source.numel():
        raise ValueError(f"prims::masked_scatter: 'source' has {source.numel()} elements but the mask selects {total}")
    if total:
        k = _kernels(rt, a.dtype)["scatter_emit"]
        launch(rt, k, -(-a.numel() // gen.CHUNK), buf(out), buf(mask), i64(mask.storage_offset()),
               dims(strides(mask)), buf(source), i64(source.storage_offset()), dims(strides(source)),
               dims(sizes(source)), np.int32(len(sizes(source))), buf(cnt), *_walk(a))  # fmt: skip
    return out


@kernel("repeat_interleave")
def repeat_interleave(repeats):
    """``[0] * repeats[0] + [1] * repeats[1] + ...`` in ``repeats``' dtype."""
    if repeats.numel() == 0:
        return empty((0,), repeats.dtype, repeats.device)
    rt = runtime_on(repeats.device)
    err = Errors(repeats.device)
    cnt, total = _count(rt, repeats, 1, err)
    if err.raised(rt):
        raise ValueError("prims::repeat_interleave: 'repeats' must be non-negative")
    out = empty((total,), repeats.dtype, repeats.device)
    if total:
        k = _kernels(rt, repeats.dtype)["repeat_emit"]
        launch(rt, k, -(-repeats.numel() // gen.CHUNK), buf(out), buf(repeats), i64(repeats.storage_offset()),
               dims(strides(repeats)), _zero_mask(repeats.dtype), buf(cnt), *_walk(repeats))  # fmt: skip
    return out
