"""Scan prims: ``cumsum``, ``cumprod``, ``cummax``, ``cummin``, ``logcumsumexp`` (generated, see ``codegen.scan``).

One work item scans one row sequentially, in the CPU kernel's order, so integer
results are exact and float results match ``ufunc.accumulate`` step by step
(logcumsumexp of float32 computes each step in double and rounds it). float16 runs where the
dialect computes it (CUDA): loaded as half, accumulated in float, each output rounded once, as
PyTorch's CUDA scans. Complex dtypes, and float16 elsewhere, run through the CPU fallback.
"""

from __future__ import annotations

import numpy as np

from ..codegen import scan as gen
from ..codegen.common import MAX_RANK
from ._common import buf, dims, empty, has_dtype, i64, kernel, launch, native_half, program_kernels, runtime_of

_REAL = {"bool", "uint8", "int8", "int16", "int32", "int64", "bfloat16", "float32", "float64"}


def rows_of(t, d):
    """``(other shape, other strides, size along d, stride along d)`` of ``t`` scanned along dim ``d``."""
    if t.ndim == 0:
        return [], [], 1, 0
    shape, stride = list(t.shape), list(t.stride())
    return shape[:d] + shape[d + 1 :], stride[:d] + stride[d + 1 :], shape[d], stride[d]


def scan_into(op: str, out, outi, a, d: int) -> None:
    """Run scan ``op`` of ``a`` along dim ``d`` into ``out`` (and int64 ``outi`` for cummax/cummin)."""
    if out.numel() == 0:
        return
    oshape, ast, n, astep = rows_of(a, d)
    _, ost, _, ostep = rows_of(out, d)
    rt = runtime_of(a)
    src, dst = a.dtype.name, out.dtype.name
    wide = bool(rt.has_fp64)
    k = program_kernels(rt, ("scan", src, dst, wide), lambda: gen.program(rt.dialect, src, dst, wide))["scan"]
    rows = out.numel() // n
    launch(
        rt, k, rows, buf(out), buf(outi if outi is not None else out), i64(out.storage_offset()), dims(ost),
        i64(ostep), buf(a), i64(a.storage_offset()), dims(ast), i64(astep), dims(oshape), np.int32(len(oshape)),
        i64(rows), i64(n), np.int32(gen.OPCODES[op]),
    )  # fmt: skip


def _supported(device, *dtypes) -> bool:
    return all((t.name in _REAL or native_half(t, device)) and has_dtype(t, device) for t in dtypes)


def _accumulate(op: str, a, dim, dtype):
    out_dtype = dtype or a.dtype
    if not _supported(a.device, a.dtype, out_dtype) or a.ndim > MAX_RANK:
        return NotImplemented
    out = empty(a.shape, out_dtype, a.device)
    scan_into(op, out, None, a, dim % a.ndim if a.ndim else 0)
    return out


@kernel("cumsum")
def cumsum(a, dim, dtype=None):
    """Running sum along ``dim`` in ``dtype``'s compute type (integers wrap)."""
    return _accumulate("cumsum", a, dim, dtype)


@kernel("cumprod")
def cumprod(a, dim, dtype=None):
    """Running product along ``dim`` in ``dtype``'s compute type (integers wrap)."""
    return _accumulate("cumprod", a, dim, dtype)


def _extremum(op: str, a, dim):
    if not _supported(a.device, a.dtype) or a.ndim > MAX_RANK:
        return NotImplemented
    import opweave

    values = empty(a.shape, a.dtype, a.device)
    indices = empty(a.shape, opweave.int64, a.device)
    scan_into(op, values, indices, a, dim % a.ndim if a.ndim else 0)
    return values, indices


@kernel("cummax")
def cummax(a, dim):
    """Running maximum and its index (ties and NaN take the later index, as torch)."""
    return _extremum("cummax", a, dim)


@kernel("cummin")
def cummin(a, dim):
    """Running minimum and its index (ties and NaN take the later index, as torch)."""
    return _extremum("cummin", a, dim)


@kernel("logcumsumexp")
def logcumsumexp(a, dim):
    """Running ``log(sum(exp(a)))``, step by step as NumPy's ``logaddexp.accumulate`` (real dtypes)."""
    if a.dtype.is_complex or not _supported(a.device, a.dtype) or a.ndim > MAX_RANK:
        return NotImplemented
    out = empty(a.shape, a.dtype, a.device)
    scan_into("logcumsumexp", out, None, a, dim % a.ndim if a.ndim else 0)
    return out
