"""Reductions over NumPy: sum, prod, amax, amin, var, any, all, argmax, argmin, xor_sum.

float16 and bfloat16 are computed in float32 and rounded back (as PyTorch's
CPU kernels accumulate them). The helpers at the top are shared with the
scan, indexing and sorting kernel modules.
"""

from __future__ import annotations

import numpy as np
import opweave

from ._common import native, wrap
from ._quiet import quiet

_HALF = (opweave.float16, opweave.bfloat16)


def compute_dtype(dtype) -> np.dtype:
    """The NumPy dtype arithmetic on ``dtype`` runs in (float32 for the 16-bit floats)."""
    return np.dtype(np.float32) if dtype in _HALF else dtype.numpy


def computable(t) -> np.ndarray:
    """``t``'s elements as a NumPy array NumPy can compute on (16-bit floats widened to float32)."""
    x = native(t)
    return x.astype(np.float32) if t.dtype in _HALF else x


def fresh(result, *inputs) -> np.ndarray:
    """``result`` as an array that shares no memory with ``inputs`` (a copy only when needed)."""
    result = np.asarray(result)
    if result.base is None and result.flags.owndata and not any(result is x for x in inputs):
        return result  # a fresh reduction result owns its memory
    for x in inputs:
        if np.may_share_memory(result, x):
            return result.copy()
    return result


def axes_of(t, dims) -> tuple:
    """NumPy axes for the prim ``dims`` argument (``None`` → all; a 0-dim tensor has none)."""
    if t.ndim == 0:
        return ()
    if dims is None:
        return tuple(range(t.ndim))
    return tuple(sorted(d % t.ndim for d in dims))


def _cast_for_reduction(inp, out_dtype) -> np.ndarray:
    """The input cast to the output dtype (as torch's ``self.to(dtype)``), then to its compute dtype."""
    x = native(inp)
    if inp.dtype is not out_dtype:
        x = quiet(x.astype, out_dtype.numpy)
    return x.astype(compute_dtype(out_dtype), copy=False)


# What np.sum, np.prod, np.max and np.min run, without their Python wrappers.
_REDUCE = {np.sum: np.add.reduce, np.prod: np.multiply.reduce, np.max: np.maximum.reduce, np.min: np.minimum.reduce}


def _accumulate(fn):
    reduce = _REDUCE[fn]

    def kernel(inp, dims, output_dtype=None):
        out = output_dtype or inp.dtype
        x = _cast_for_reduction(inp, out)
        r = quiet(reduce, x, axes_of(inp, dims), x.dtype)
        return wrap(fresh(r, native(inp)), out)

    kernel.__doc__ = f"{fn.__name__} in the output dtype (16-bit floats accumulate in float32)."
    return kernel


sum_ = _accumulate(np.sum)
prod = _accumulate(np.prod)


def _extremum(fn):
    reduce = _REDUCE[fn]

    def kernel(inp, dims):
        r = reduce(computable(inp), axes_of(inp, dims))
        return wrap(fresh(r, native(inp)), inp.dtype)

    kernel.__doc__ = f"NaN-propagating {fn.__name__}."
    return kernel


amax = _extremum(np.max)
amin = _extremum(np.min)


def var(inp, dims, correction, output_dtype=None):
    """``sum(|x - mean|^2) / max(N - correction, 0)`` in float64/complex128."""
    out = output_dtype or inp.dtype.to_real()
    x = native(inp).astype(np.complex128 if inp.dtype.is_complex else np.float64)
    axes = axes_of(inp, dims)
    n = 1
    for d in axes:
        n *= inp.shape[d]
    with np.errstate(all="ignore"):
        mean = np.sum(x, axis=axes, keepdims=True) / n
        dev = x - mean
        sq = dev.real**2 + dev.imag**2 if inp.dtype.is_complex else dev * dev
        r = np.sum(sq, axis=axes) / max(n - correction, 0.0)
    return wrap(np.asarray(r), out)


def _logical(fn):
    def kernel(inp, dims):
        r = fn(native(inp) != 0, axis=axes_of(inp, dims))
        return wrap(fresh(r, native(inp)), opweave.bool)

    kernel.__doc__ = f"{fn.__name__} of ``x != 0`` (NaN is nonzero)."
    return kernel


any_ = _logical(np.any)
all_ = _logical(np.all)


def _arg(fn):
    method = getattr(np.ndarray, fn.__name__)  # what ``fn`` calls, without its Python wrapper

    def kernel(inp, dim):
        x = computable(inp)
        if dim is None or x.ndim == 0:
            r = method(x.reshape(-1))
        else:
            r = method(x, dim % x.ndim)
        return wrap(np.asarray(r, np.int64), opweave.int64)

    kernel.__doc__ = f"NumPy's {fn.__name__}: first extreme wins and NaN counts as the extreme, as in torch."
    return kernel


argmax = _arg(np.argmax)
argmin = _arg(np.argmin)


def xor_sum(inp, dims):
    """Bitwise XOR reduction."""
    x = native(inp)
    r = np.bitwise_xor.reduce(x, axis=axes_of(inp, dims)) if x.ndim else x.copy()
    return wrap(fresh(r, x), inp.dtype)


KERNELS = {
    "prims::sum": sum_,
    "prims::prod": prod,
    "prims::amax": amax,
    "prims::amin": amin,
    "prims::var": var,
    "prims::any": any_,
    "prims::all": all_,
    "prims::argmax": argmax,
    "prims::argmin": argmin,
    "prims::xor_sum": xor_sum,
}
