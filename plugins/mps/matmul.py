"""``prims::mm`` and ``prims::bmm`` through ``MPSMatrixMultiplication`` (MetalPerformanceShaders).

An operand is handed to MPS as it lies in memory when each of its matrices is row-major or
column-major with unit inner stride (a transposed view sets ``transposeLeft``/``transposeRight``,
nothing is copied) and its batch stride is not 0. Other layouts, integer dtypes, complex64,
bfloat16 before macOS 14 (no ``MPSDataTypeBFloat16``) and empty inner dimensions take the
generated kernel of ``opweave_kernelgen``. The product is encoded into the runtime's current
command buffer, after the launches before it.
"""

from __future__ import annotations

from collections import OrderedDict

from opweave.backends.kernel import contiguous_strides

from ._backend import BACKEND

_TYPES = {"float32": "MPSDataTypeFloat32", "float16": "MPSDataTypeFloat16", "bfloat16": "MPSDataTypeBFloat16"}
_kernels: OrderedDict = OrderedDict()  # (device, transposes, m, n, k, batch) -> MPSMatrixMultiplication


def operand(t, rows: int, cols: int, batch: int):
    """``(transposed, row stride, batch stride)`` in elements if MPS can read ``t``'s matrices in place, else None."""
    st = t.stride()
    sr, sc = st[-2], st[-1]
    sb = st[0] if t.ndim == 3 else rows * cols
    if (sc == 1 or cols == 1) and (sr >= cols or rows == 1):  # row-major (a single row: any row stride)
        trans, ld = False, sr if rows > 1 else cols
        span = rows * ld
    elif (sr == 1 or rows == 1) and (sc >= rows or cols == 1):  # column-major: the transpose is row-major
        trans, ld = True, sc if cols > 1 else rows
        span = cols * ld
    else:
        return None
    if batch > 1 and sb < span:  # broadcast or overlapping matrices
        return None
    return trans, ld, sb if batch > 1 else span


def encode(rt, mps, out, a, b, shapes: tuple, dtype: str, batch: int) -> None:
    """Encode ``out = a @ b`` for ``batch`` matrices. ``a``/``b``: ``(buffer, byte offset, (transposed, ld, bstride))``.

    ``shapes`` is ``(m, n, k)``; ``out`` is ``(buffer, byte offset)`` of a contiguous result.
    """
    m, n, k = shapes
    item = 2 if dtype != "float32" else 4
    kind = getattr(mps, _TYPES[dtype])

    def matrix(buffer, offset, rows, cols, ld, bstride):
        desc = mps.MPSMatrixDescriptor.matrixDescriptorWithRows_columns_matrices_rowBytes_matrixBytes_dataType_(
            rows, cols, batch, ld * item, bstride * item, kind
        )
        return mps.MPSMatrix.alloc().initWithBuffer_offset_descriptor_(buffer.mtl, offset, desc)

    (ab, ao, (ta, lda, sba)), (bb, bo, (tb, ldb, sbb)) = a, b
    left = matrix(ab, ao, k if ta else m, m if ta else k, lda, sba)
    right = matrix(bb, bo, n if tb else k, k if tb else n, ldb, sbb)
    result = matrix(out[0], out[1], m, n, n, m * n)
    key = (rt.device_name, ta, tb, m, n, k, batch)
    kernel = _kernels.get(key)
    if kernel is None:
        init = mps.MPSMatrixMultiplication.alloc().initWithDevice_transposeLeft_transposeRight_resultRows_resultColumns_interiorColumns_alpha_beta_  # noqa: E501
        kernel = init(rt.device, ta, tb, m, n, k, 1.0, 0.0)
        kernel.setBatchStart_(0)
        kernel.setBatchSize_(batch)
        _kernels[key] = kernel
        if len(_kernels) > 256:
            _kernels.popitem(last=False)
    kernel.encodeToCommandBuffer_leftMatrix_rightMatrix_resultMatrix_(rt.command_buffer(), left, right, result)


def matmul(a, b, batch: int):
    """``a @ b`` (2-D, or 3-D batched) through MPS, or None for a case MPS does not take."""
    from . import _metal

    mps = _metal.found()[1]
    dtype = a.dtype.name
    if mps is None or dtype not in _TYPES or getattr(mps, _TYPES[dtype], None) is None or b.dtype is not a.dtype:
        return None
    m, k, n = a.shape[-2], a.shape[-1], b.shape[-1]
    shape = (batch, m, n) if a.ndim == 3 else (m, n)
    out = BACKEND.empty_strided(shape, contiguous_strides(shape), a.dtype, a.device)
    if m == 0 or n == 0 or batch == 0:
        return out
    specs = operand(a, m, k, batch), operand(b, k, n, batch)
    if k == 0 or None in specs:
        return None
    item = a.dtype.itemsize
    buffers = [(t.untyped_storage().handle.buffer, t.storage_offset() * item, s) for t, s in zip((a, b), specs)]
    rt = BACKEND.runtime(a.device)
    encode(rt, mps, (out.untyped_storage().handle.buffer, 0), *buffers, (m, n, k), dtype, batch)
    return out


def mm(a, b):
    """``prims::mm`` on the mps device: MPS where it takes the case, else the generated kernel."""
    from opweave_kernelgen.kernels import KERNELS

    out = matmul(a, b, 1)
    return out if out is not None else KERNELS["prims::mm"](a, b)


def bmm(a, b):
    """``prims::bmm`` on the mps device: MPS where it takes the case, else the generated kernel."""
    from opweave_kernelgen.kernels import KERNELS

    out = matmul(a, b, a.shape[0])
    return out if out is not None else KERNELS["prims::bmm"](a, b)
