"""``prims::mm`` and ``prims::bmm``: the register-blocked packed kernel of ``codegen.matmul`` on CPU devices
(float32/float64 products of at least ``PACKED_MIN`` multiply-adds), its tiled kernel otherwise (integers wrap).

Complex matrices use the simple kernel of ``kernels.complex``; bool matrices run through the CPU fallback.
float16 runs the tiled kernel where the dialect computes it (CUDA without cuBLAS): float32 accumulation, one rounding.
The decompositions are in ``kernels.linalg_extra``.
"""

from __future__ import annotations

import numpy as np

from ..codegen import matmul as gen
from ._common import buf, dname, empty, kernel, launch, native_half, program_kernels, runtime_of

_DTYPES = {"bfloat16", "float32", "float64", "uint8", "int8", "int16", "int32", "int64"}


def bmm_into(out, a, b, batch_strides_a, batch_strides_b, batch: int) -> None:
    """``out[i] = a[i] @ b[i]`` for ``i < batch`` (``out`` contiguous; strides of a and b in elements)."""
    m, k = a.shape[-2], a.shape[-1]
    n = b.shape[-1]
    if out.numel() == 0:
        return
    if a.dtype.is_complex:  # complex hook: the simple kernel of kernels/complex.py
        from .complex import bmm_into as complex_bmm_into

        return complex_bmm_into(out, a, b, batch_strides_a, batch_strides_b, batch)
    rt = runtime_of(a)
    d = dname(a)
    if d in ("float32", "float64") and "packed_matmul" in rt.overrides and m * n * k >= PACKED_MIN:
        return _bmm_packed(rt, d, out, a, b, batch_strides_a, batch_strides_b, batch)
    kern = program_kernels(rt, ("bmm", d), lambda: gen.program(rt.dialect, d))["bmm"]
    sa, sb = a.stride(), b.stride()
    i64 = np.int64
    args = (
        buf(out), buf(a), i64(a.storage_offset()), i64(batch_strides_a), i64(sa[-2]), i64(sa[-1]),
        buf(b), i64(b.storage_offset()), i64(batch_strides_b), i64(sb[-2]), i64(sb[-1]),
        i64(m), i64(n), i64(k),
    )  # fmt: skip
    blocks = lambda x: -(-x // gen.BLOCK)  # noqa: E731
    rt.launch(kern, (blocks(n), blocks(m), batch), (gen.TILE, gen.TILE, 1), args)


#: From this many multiply-adds a product on a CPU device packs its operands for the register-blocked kernel.
PACKED_MIN = 1 << 18


def _bmm_packed(rt, d: str, out, a, b, batch_strides_a, batch_strides_b, batch: int) -> None:
    """``out = a @ b`` through ``pack_a``, ``pack_b`` and ``bmm_packed`` (panels in fresh, aligned buffers)."""
    m, k, n = a.shape[-2], a.shape[-1], b.shape[-1]
    lanes, rows = rt.lanes(d), gen.rows_for(rt.vector_bytes)
    ks = program_kernels(rt, ("bmm_packed", d, lanes, rows), lambda: gen.packed_program(rt.dialect, d, lanes, rows))
    width = lanes * gen.VECTORS
    mb, nb = -(-m // rows), -(-n // width)
    a_panels = empty((batch * mb * k * rows,), a.dtype, a.device)
    b_panels = empty((batch * nb * k * width,), a.dtype, a.device)
    sa, sb = a.stride(), b.stride()
    i64 = np.int64
    launch(
        rt, ks["pack_a"], batch * mb, buf(a_panels), buf(a), i64(a.storage_offset()), i64(batch_strides_a),
        i64(sa[-2]), i64(sa[-1]), i64(m), i64(k), i64(mb), i64(batch * mb), local=1,
    )  # fmt: skip
    launch(
        rt, ks["pack_b"], batch * nb, buf(b_panels), buf(b), i64(b.storage_offset()), i64(batch_strides_b),
        i64(sb[-2]), i64(sb[-1]), i64(n), i64(k), i64(nb), i64(batch * nb), local=1,
    )  # fmt: skip
    launch(
        rt, ks["bmm_packed"], batch * mb * nb, buf(out), buf(a_panels), buf(b_panels),
        i64(m), i64(n), i64(k), i64(mb), i64(nb), i64(batch * mb * nb),
    )  # fmt: skip


@kernel("mm")
def mm(a, b):
    """``a @ b`` for 2-D floating matrices (any strides)."""
    if dname(a) not in _DTYPES and not a.dtype.is_complex and not native_half(a.dtype, a.device):
        return NotImplemented
    out = empty((a.shape[0], b.shape[1]), a.dtype, a.device)
    bmm_into(out, a, b, 0, 0, 1)
    return out


@kernel("bmm")
def bmm(a, b):
    """Batched ``a[i] @ b[i]`` for 3-D floating tensors (any strides)."""
    if dname(a) not in _DTYPES and not a.dtype.is_complex and not native_half(a.dtype, a.device):
        return NotImplemented
    out = empty((a.shape[0], a.shape[1], b.shape[2]), a.dtype, a.device)
    bmm_into(out, a, b, a.stride()[0], b.stride()[0], a.shape[0])
    return out
