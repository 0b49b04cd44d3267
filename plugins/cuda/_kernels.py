"""CUDA's own prim kernels on top of the generator's: ``mm``/``bmm`` through cuBLAS (``cublas.py``).

cuBLAS runs on the current stream, with the precision (TF32...) and deterministic
workspace ``cublas.matmul`` chooses from opweave's flags. Where cuBLAS is unavailable, or for
a dtype it has no GEMM for (integers), the generator's tiled kernel runs instead.
"""

from __future__ import annotations

from opweave.backends.kernel import Decline, contiguous_strides
from opweave_kernelgen.kernels import linalg as generated

_CUBLAS_DTYPES = frozenset({"float32", "float64", "float16", "bfloat16", "complex64", "complex128"})


def register(registry, backend) -> None:
    """Register ``prims::mm`` and ``prims::bmm`` for ``backend`` (after the generator's, so these run)."""
    registry.impl("prims::mm", mm, backend=backend.name)
    registry.impl("prims::bmm", bmm, backend=backend.name)


def cublas():
    """The ``cublas`` module when cuBLAS can be used, else None."""
    try:
        from . import cublas as module
    except ImportError:
        return None
    ok, _ = module.available()
    return module if ok else None


def gemm_layout(rows: int, cols: int, row_stride: int, col_stride: int) -> tuple[int, int] | None:
    """``(row, col)`` strides cuBLAS can read a ``rows x cols`` matrix with, or None when it needs a copy.

    One of the strides must be 1 and the other at least the length of that dim (its leading dimension);
    the stride of a dim of length 1 is free, so it is chosen to make the layout valid.
    """
    if cols == 1:
        col_stride = 1
    if rows == 1:
        row_stride = max(cols, 1)
    if col_stride == 1 and row_stride >= max(cols, 1):
        return row_stride, col_stride
    if row_stride == 1 and col_stride >= max(rows, 1):
        return row_stride, col_stride
    return None


def _operand(t, batch_stride: int):
    """``(pointer, (batch, row, col) strides, keep-alive)`` of a matrix operand, copied when cuBLAS cannot read it."""
    rows, cols = t.shape[-2], t.shape[-1]
    layout = gemm_layout(rows, cols, t.stride()[-2], t.stride()[-1])
    if layout is None:
        t = t.contiguous()
        layout = (cols, 1)
        batch_stride = rows * cols if batch_stride else 0
    ptr = t.untyped_storage().handle.buffer.ptr + t.storage_offset() * t.dtype.itemsize
    return ptr, (batch_stride, *layout), t


def _empty(shape, like):
    return like.untyped_storage().backend.empty_strided(shape, contiguous_strides(shape), like.dtype, like.device)


def _generated(fn, a, b):
    result = fn(a, b)
    if result is NotImplemented:
        raise Decline(f"cuda: no kernel for this case of {fn.__name__}")
    return result


def _gemm(module, out, a, b, sa: int, sb: int, batch: int) -> None:
    m, k, n = a.shape[-2], a.shape[-1], b.shape[-1]
    rt = out.untyped_storage().backend.runtime(out.device)
    if out.numel() == 0:
        return
    if k == 0:
        rt.fill_zero(out.untyped_storage().handle.buffer, out.numel() * out.dtype.itemsize)
        return
    pa, stra, keep_a = _operand(a, sa)
    pb, strb, keep_b = _operand(b, sb)
    c = out.untyped_storage().handle.buffer.ptr
    module.matmul(rt.stream(), out.dtype.name, batch, m, n, k, pa, stra, pb, strb, c, (m * n, n, 1))
    del keep_a, keep_b  # the copies (if any) are freed on the stream after the GEMM queued on it


def mm(a, b):
    """``a @ b`` through cuBLAS (the generator's kernel without cuBLAS or for integer dtypes)."""
    module = cublas()
    if module is None or a.dtype.name not in _CUBLAS_DTYPES:
        return _generated(generated.mm, a, b)
    out = _empty((a.shape[0], b.shape[1]), a)
    _gemm(module, out, a, b, 0, 0, 1)
    return out


def bmm(a, b):
    """Batched ``a[i] @ b[i]`` through cuBLAS (strided batched; the generator's kernel as for ``mm``)."""
    module = cublas()
    if module is None or a.dtype.name not in _CUBLAS_DTYPES:
        return _generated(generated.bmm, a, b)
    out = _empty((a.shape[0], a.shape[1], b.shape[2]), a)
    _gemm(module, out, a, b, a.stride()[0] if a.shape[0] > 1 else 0, b.stride()[0] if b.shape[0] > 1 else 0, a.shape[0])
    return out


mm.__name__ = mm.__qualname__ = "cuda_mm"
bmm.__name__ = bmm.__qualname__ = "cuda_bmm"
__all__ = ["bmm", "gemm_layout", "mm", "register"]
