"""Reduction prims: ``sum``, ``prod``, ``amax``, ``amin``, ``any``, ``all``, ``xor_sum`` (generated, see
``codegen.reduction``; complex ``sum``/``prod``: ``kernels.complex``); ``var``, ``argmax``, ``argmin`` run
through the CPU fallback.

``sum``/``prod`` convert each element to the output dtype and accumulate in its
compute type (float32 for bfloat16 and float16), as the CPU backend does; ``amax``/``amin``
propagate NaN. An empty ``amax``/``amin`` goes to the CPU fallback, which raises.
"""

from __future__ import annotations

import opweave

from ..codegen import reduction as gen
from ..codegen.common import coalesce
from ._common import KERNELS, buf, dims, dname, empty, has_dtype, i64, kernel, program_kernels, runtime_of

LOCAL = 64
_PARALLEL_MIN = 1 << 15  # reduced elements per output from which one output is split over several groups


def reduced_axes(inp, d) -> tuple:
    """The sorted, wrapped dims ``d`` of ``inp`` (every dim for None; none for a 0-dim tensor)."""
    if inp.ndim == 0:
        return ()
    if d is None:
        return tuple(range(inp.ndim))
    return tuple(sorted(x % inp.ndim for x in d))


def _launch(rt, k, out, ostrides, oshape, inp, offset, kept_strides, rshape, rstrides, chunks, cst, local=LOCAL):
    import numpy as np

    n_out, R = 1, 1
    for s in oshape:
        n_out *= s
    for s in rshape:
        R *= s
    chunk = -(-R // chunks) if R else 0
    args = (
        buf(out),
        i64(out.storage_offset()),
        dims(ostrides),
        dims(oshape),
        np.int32(len(oshape)),
        buf(inp),
        i64(offset),
        dims(kept_strides),
        dims(rshape),
        dims(rstrides),
        np.int32(len(rshape)),
        i64(R),
        i64(chunk),
        np.int32(chunks),
        i64(cst),
    )
    rt.launch(k, (n_out * chunks,), (local,), args)


def reduce(op: str, inp, d, out_dtype, acc_dtype=None):
    """Reduce ``inp`` over dims ``d`` with ``op`` into a new contiguous tensor of ``out_dtype``."""
    cplx = inp.dtype.is_complex or out_dtype.is_complex  # complex hook: sum/prod of kernels/complex.py
    if (cplx and op not in ("sum", "prod")) or not has_dtype(inp.dtype, inp.device):
        return NotImplemented
    if opweave.float16 in (inp.dtype, out_dtype, acc_dtype) and not runtime_of(inp).dialect.computes_float16:
        return NotImplemented  # float16 reductions run on the device only where the dialect computes float16
    axes = reduced_axes(inp, d)
    shape, stride = tuple(inp.shape), tuple(inp.stride())
    kept = [i for i in range(inp.ndim) if i not in axes]
    oshape = [shape[i] for i in kept]
    out = empty(oshape, out_dtype, inp.device)
    if out.numel() == 0:
        return out
    rshape = [shape[i] for i in axes]
    R = 1
    for s in rshape:
        R *= s
    if (R == 0 and op in ("amax", "amin")) or len(oshape) > 8 or len(rshape) > 8:
        return NotImplemented
    acc_name = (acc_dtype or out_dtype).name
    if acc_name == "float16":  # computes_float16 dialects: accumulate in float32, round to half once
        acc_name = "float32"
    src_name, out_name = dname(inp), out_dtype.name
    rt = runtime_of(inp)
    local, groups = rt.properties.reduction_local, rt.properties.reduction_groups  # 64 and 16 unless the device says
    make = lambda: gen.program(rt.dialect, src_name, acc_name, out_name, local, rt.is_cpu)  # noqa: E731
    if cplx:
        from .complex import reduction_source

        local = LOCAL  # the complex programs keep 64-item groups
        make = reduction_source(rt.dialect, src_name, out_name, LOCAL)
    key = ("reduce", src_name, acc_name, out_name, rt.is_cpu) + (() if local == LOCAL else (local,))
    ks = program_kernels(rt, key, make)
    kept_strides = [stride[i] for i in kept]
    rshape, (rstrides,) = coalesce(rshape, [[stride[i] for i in axes]])  # one dim when contiguous: the fast loop
    args = (inp, inp.storage_offset(), kept_strides, rshape, rstrides)
    if out.numel() > 4 or R < _PARALLEL_MIN:
        _launch(rt, ks[f"{op}_main"], out, list(out.stride()), oshape, *args, 1, 0, local=local)
        return out
    # few outputs over many elements: ``groups`` groups per output write partials, a second launch combines them
    part = empty(
        oshape + [groups],
        opweave.float32 if acc_name in ("bfloat16", "float32") else (acc_dtype or out_dtype),
        inp.device,
    )
    pst = list(part.stride())
    _launch(rt, ks[f"{op}_first"], part, pst[:-1], oshape, *args, groups, pst[-1], local=local)
    _launch(rt, ks[f"{op}_part"], out, list(out.stride()), oshape, part, 0, pst[:-1], [groups], [1], 1, 0, local=local)
    return out


def _out_dtype(inp, output_dtype):
    return output_dtype or inp.dtype


@kernel("sum")
def sum_(inp, d, output_dtype=None):
    """Sum over ``d`` in the output dtype's compute type."""
    return reduce("sum", inp, d, _out_dtype(inp, output_dtype))


@kernel("prod")
def prod(inp, d, output_dtype=None):
    """Product over ``d`` in the output dtype's compute type."""
    return reduce("prod", inp, d, _out_dtype(inp, output_dtype))


@kernel("amax")
def amax(inp, d):
    """NaN-propagating maximum over ``d``."""
    return reduce("amax", inp, d, inp.dtype)


@kernel("amin")
def amin(inp, d):
    """NaN-propagating minimum over ``d``."""
    return reduce("amin", inp, d, inp.dtype)


def _nonzero_as_real(inp):
    """A complex tensor's moduli (zero exactly where the element is): what ``any``/``all`` look at."""
    return KERNELS["prims::abs"](inp) if inp.dtype.is_complex else inp


@kernel("any")
def any_(inp, d):
    """Whether any element over ``d`` is nonzero (NaN is nonzero)."""
    return reduce("any", _nonzero_as_real(inp), d, opweave.bool, opweave.bool)


@kernel("all")
def all_(inp, d):
    """Whether every element over ``d`` is nonzero."""
    return reduce("all", _nonzero_as_real(inp), d, opweave.bool, opweave.bool)


@kernel("xor_sum")
def xor_sum(inp, d):
    """Bitwise XOR over ``d`` (integer and bool dtypes)."""
    if inp.dtype.is_floating_point:
        return NotImplemented
    return reduce("xor_sum", inp, d, inp.dtype)
