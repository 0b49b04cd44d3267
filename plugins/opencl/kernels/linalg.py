"""``prims::mm`` and ``prims::bmm``: the tiled kernel of ``codegen.matmul`` for floating dtypes.

Integer, bool and complex matrices, and every decomposition (``cholesky``, ``qr``,
``svd``, ``eig``, ``solve``...), run through the CPU fallback.
"""

from __future__ import annotations

import numpy as np
import pyopencl as cl

from ..codegen import matmul as gen
from ._common import OPENCL, buf, dname, empty, kernel, program_kernels, runtime_of

_FLOATS = {"bfloat16", "float32", "float64"}


def bmm_into(out, a, b, batch_strides_a, batch_strides_b, batch: int) -> None:
    """``out[i] = a[i] @ b[i]`` for ``i < batch`` (``out`` contiguous; strides of a and b in elements)."""
    m, k = a.shape[-2], a.shape[-1]
    n = b.shape[-1]
    if out.numel() == 0:
        return
    rt = runtime_of(a)
    d = dname(a)
    kern = program_kernels(rt, ("bmm", d), lambda: gen.program(OPENCL, d))["bmm"]
    sa, sb = a.stride(), b.stride()
    i64 = np.int64
    kern.set_args(
        buf(out), buf(a), i64(a.storage_offset()), i64(batch_strides_a), i64(sa[-2]), i64(sa[-1]),
        buf(b), i64(b.storage_offset()), i64(batch_strides_b), i64(sb[-2]), i64(sb[-1]),
        i64(m), i64(n), i64(k),
    )  # fmt: skip
    blocks = lambda x: -(-x // gen.BLOCK) * gen.TILE  # noqa: E731
    cl.enqueue_nd_range_kernel(rt.queue, kern, (blocks(n), blocks(m), batch), (gen.TILE, gen.TILE, 1))


@kernel("mm")
def mm(a, b):
    """``a @ b`` for 2-D floating matrices (any strides)."""
    if dname(a) not in _FLOATS:
        return NotImplemented
    out = empty((a.shape[0], b.shape[1]), a.dtype, a.device)
    bmm_into(out, a, b, 0, 0, 1)
    return out


@kernel("bmm")
def bmm(a, b):
    """Batched ``a[i] @ b[i]`` for 3-D floating tensors (any strides)."""
    if dname(a) not in _FLOATS:
        return NotImplemented
    out = empty((a.shape[0], a.shape[1], b.shape[2]), a.dtype, a.device)
    bmm_into(out, a, b, a.stride()[0], b.stride()[0], a.shape[0])
    return out
