"""``prims::gather`` and ``prims::index_select`` as generated kernels (``codegen.indexing``).

The other indexing prims (scatter, index_put, masked ops, take, nonzero...) run
through the CPU fallback. An out-of-range index is detected on the device; the
call is then handed to the CPU kernel, which raises the prim's ``IndexOutOfBoundsError``
naming the index.
"""

from __future__ import annotations

import numpy as np

from ..codegen import indexing as gen
from ..codegen.common import MAX_RANK
from ._common import BACKENDS, backend_of, buf, dims, empty, kernel, launch, program_kernels, runtime_on

_RAW = {1: "uint8", 2: "int16", 4: "int32", 8: "int64", 16: "complex128"}


def _take_along(a, d: int, index, out_shape, index_strides):
    """``out[p] = a[p with dim d = index[p]]``; None when an index is out of range."""
    out = empty(out_shape, a.dtype, a.device)
    n = out.numel()
    if n == 0:
        return out
    rt = runtime_on(a.device)
    raw, it = _RAW[a.dtype.itemsize], index.dtype.name
    k = program_kernels(rt, ("take_along", raw, it), lambda: gen.program(rt.dialect, raw, it))["take_along"]
    flag = np.zeros(1, np.int32)
    err = backend_of(a.device).copy_from_host(flag, a.device)
    size = a.shape[d] if a.ndim else 1
    launch(
        rt, k, n, buf(out), buf(a), np.int64(a.storage_offset()), dims(a.stride() or (0,)),
        buf(index), np.int64(index.storage_offset()), dims(index_strides), dims(out_shape or (1,)),
        np.int32(max(len(out_shape), 1)), np.int32(d), np.int64(size), err.handle.buffer, np.int64(n),
    )  # fmt: skip
    rt.copy_to_host(flag, err.handle.buffer)
    return None if flag[0] else out


def _usable(a, index) -> bool:
    return index.device.type in BACKENDS and a.ndim <= MAX_RANK and index.dtype.name in ("int32", "int64")


@kernel("gather")
def gather(a, dim, index):
    """``a`` gathered along ``dim`` at ``index`` (the output has ``index``'s shape)."""
    if not _usable(a, index) or a.ndim == 0 or index.ndim != a.ndim:
        return NotImplemented
    out = _take_along(a, dim % a.ndim, index, tuple(index.shape), index.stride())
    return NotImplemented if out is None else out


@kernel("index_select")
def index_select(a, dim, index):
    """The slices of ``a`` along ``dim`` at the (0- or 1-dim) ``index``."""
    if not _usable(a, index):
        return NotImplemented
    if a.ndim == 0:  # one index (the meta function checked it), valid if 0 or -1: the element itself
        out = _take_along(a, 0, index, (), (0,))
        return NotImplemented if out is None else out
    d = dim % a.ndim
    shape = list(a.shape)
    shape[d] = index.numel()
    strides = [0] * a.ndim
    strides[d] = index.stride()[0] if index.ndim else 0
    out = _take_along(a, d, index, tuple(shape), strides)
    return NotImplemented if out is None else out
