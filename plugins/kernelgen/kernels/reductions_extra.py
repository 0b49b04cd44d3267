"""``var``, ``argmax`` and ``argmin`` (generated, see ``codegen.reduction_extra``).

``var`` takes two passes over each output's elements (mean, then squared
deviations), accumulating in double as the CPU kernel does (in float on a device
without fp64). ``argmax``/``argmin`` return the first extreme index, NaN counting
as the extreme (the first NaN wins; float16 compared in float where the dialect computes it: CUDA).
Complex ``var`` is the sum of its parts' variances.
"""

from __future__ import annotations

import numpy as np
import opweave
from opweave.prims.views import view_as_real

from ..codegen import reduction_extra as gen
from ..codegen.common import MAX_RANK
from ._common import (
    KERNELS,
    buf,
    dims,
    empty,
    has_dtype,
    i64,
    kernel,
    launch,
    native_half,
    program_kernels,
    runtime_of,
)
from .reductions import reduced_axes

LOCAL = 64
_REAL = {"uint8", "int8", "int16", "int32", "int64", "bfloat16", "float32", "float64"}


def _split(inp, axes):
    """``(kept shape, kept strides, reduced shape, reduced strides, R)`` of ``inp`` reduced over ``axes``."""
    shape, stride = list(inp.shape), list(inp.stride())
    kept = [i for i in range(inp.ndim) if i not in axes]
    rshape = [shape[i] for i in axes]
    return [shape[i] for i in kept], [stride[i] for i in kept], rshape, [stride[i] for i in axes], int(np.prod(rshape))


def _run(k, out, inp, axes, *extra) -> None:
    oshape, kst, rshape, rst, R = _split(inp, axes)
    n_out = out.numel()
    if n_out == 0:
        return
    launch(
        runtime_of(inp), k, n_out * LOCAL, buf(out), buf(inp), i64(out.storage_offset()), dims(out.stride()),
        dims(oshape), np.int32(len(oshape)), i64(inp.storage_offset()), dims(kst), dims(rshape), dims(rst),
        np.int32(len(rshape)), i64(R), *extra,
    )  # fmt: skip


@kernel("var")
def var(inp, d, correction, output_dtype=None):
    """``sum((x - mean)^2) / max(N - correction, 0)`` over ``d``, in double."""
    out_dtype = output_dtype or inp.dtype.to_real()
    if inp.dtype.is_complex and out_dtype.name in _REAL:  # |x - mean|^2 = (re - mean_re)^2 + (im - mean_im)^2
        parts = view_as_real(inp)
        re, im = (var(parts.select(-1, i), d, correction, out_dtype) for i in (0, 1))
        return NotImplemented if NotImplemented in (re, im) else KERNELS["prims::add"](re, im)
    if inp.dtype.name not in _REAL or out_dtype.name not in _REAL or inp.ndim > MAX_RANK:
        return NotImplemented
    axes = reduced_axes(inp, d)
    out = empty([n for i, n in enumerate(inp.shape) if i not in axes], out_dtype, inp.device)
    rt = runtime_of(inp)
    wide = bool(rt.has_fp64)
    src, dst = inp.dtype.name, out_dtype.name
    k = program_kernels(rt, ("var", src, dst, wide), lambda: gen.var_program(rt.dialect, src, dst, wide, LOCAL))["var"]
    _run(k, out, inp, axes, (np.float64 if wide else np.float32)(correction))
    return out


def _arg(inp, dim, op: int):
    usable = inp.dtype.name in _REAL or native_half(inp.dtype, inp.device)  # float16 compared in float (CUDA)
    if not usable or not has_dtype(inp.dtype, inp.device) or inp.ndim > MAX_RANK:
        return NotImplemented
    axes = reduced_axes(inp, None if dim is None else [dim])
    out = empty([n for i, n in enumerate(inp.shape) if i not in axes], opweave.int64, inp.device)
    rt = runtime_of(inp)
    src = inp.dtype.name
    k = program_kernels(rt, ("argext", src), lambda: gen.arg_program(rt.dialect, src, LOCAL))["argext"]
    _run(k, out, inp, axes, np.int32(op))
    return out


@kernel("argmax")
def argmax(inp, dim):
    """Index of the first largest element along ``dim`` (all dims, flattened, when None); NaN is largest."""
    return _arg(inp, dim, 0)


@kernel("argmin")
def argmin(inp, dim):
    """Index of the first smallest element along ``dim`` (all dims, flattened, when None); NaN is smallest."""
    return _arg(inp, dim, 1)
