"""Reduction prims: sum, prod, amax, amin, var, any, all, argmax, argmin, xor_sum.

``dims`` lists the dims to reduce (``None``: all of them; ``[]``: none, the
prim then only copies/casts); the output drops the reduced dims (there is no
``keepdim``: canonical ops add the dims back). A 0-dim input accepts
``dims=[0]``/``[-1]`` and reduces to a 0-dim output. Outputs are contiguous.
Promotion is the canonical ops' business: ``output_dtype`` (default: the
input's dtype) is both the accumulation and the output dtype.
"""

from __future__ import annotations

from .. import _dtype
from .._meta import empty as meta_empty
from .._ops import define_prim
from ._utils import ALL, FLOAT, FLOATING, INTEGRAL, REAL, check_dtype, check_tensor, wrap_dim, wrap_dims

_BOOL_REAL = REAL | frozenset({_dtype.bool_})


def reduced_dims(op: str, inp, dims) -> tuple:
    """The normalised, sorted dims a reduction removes (``None`` → every dim; a 0-dim input → ``()``)."""
    if dims is None:
        return tuple(range(inp.ndim))
    wrapped = wrap_dims(op, dims, inp.ndim)
    return tuple(sorted(wrapped)) if inp.ndim else ()


def reduced_shape(shape, axes) -> tuple:
    """``shape`` without the dims in ``axes``."""
    return tuple(s for i, s in enumerate(shape) if i not in axes)


def _check_inp(op: str, inp, allowed):
    check_tensor(op, "inp", inp)
    check_dtype(op, "inp", inp, allowed)


def _check_nonempty(op: str, inp, axes) -> None:
    if inp.ndim and any(inp.shape[d] == 0 for d in axes):
        raise ValueError(f"{op}: cannot reduce over a zero-size dimension")


def _output_dtype(op: str, inp, output_dtype):
    if output_dtype is None:
        return inp.dtype
    if output_dtype not in ALL:
        raise TypeError(f"{op}: argument 'output_dtype' has unsupported dtype {output_dtype.name}")
    if inp.dtype.is_complex and not output_dtype.is_complex:
        raise TypeError(f"{op}: cannot reduce a {inp.dtype.name} input into {output_dtype.name}")
    return output_dtype


def _sum_like_meta(op: str, inp, dims, output_dtype):
    _check_inp(op, inp, ALL)
    dtype = _output_dtype(op, inp, output_dtype)
    return meta_empty(reduced_shape(inp.shape, reduced_dims(op, inp, dims)), dtype)


def sum_meta(inp, dims, output_dtype=None):
    """Sum of ``inp`` over ``dims``, accumulated in ``output_dtype`` (default ``inp.dtype``; the input is
    cast to it first). Integer overflow wraps; an empty reduction gives 0. Any dtype; a complex input needs a
    complex ``output_dtype``."""
    return _sum_like_meta("prims::sum", inp, dims, output_dtype)


def prod_meta(inp, dims, output_dtype=None):
    """Product of ``inp`` over ``dims``, accumulated in ``output_dtype`` (default ``inp.dtype``; the input is
    cast to it first). Integer overflow wraps; an empty reduction gives 1."""
    return _sum_like_meta("prims::prod", inp, dims, output_dtype)


def _extremum_meta(op: str, inp, dims):
    _check_inp(op, inp, _BOOL_REAL)
    axes = reduced_dims(op, inp, dims)
    _check_nonempty(op, inp, axes)
    return meta_empty(reduced_shape(inp.shape, axes), inp.dtype)


def amax_meta(inp, dims):
    """Largest value of ``inp`` over ``dims``; NaN propagates. Real and bool dtypes. ValueError when a
    reduced dim has size 0."""
    return _extremum_meta("prims::amax", inp, dims)


def amin_meta(inp, dims):
    """Smallest value of ``inp`` over ``dims``; NaN propagates. Real and bool dtypes. ValueError when a
    reduced dim has size 0."""
    return _extremum_meta("prims::amin", inp, dims)


def var_meta(inp, dims, correction, output_dtype=None):
    """Variance over ``dims``: ``sum(|x - mean|^2) / max(N - correction, 0)`` (so ``N - correction <= 0`` gives
    inf, or nan when the sum is 0 or N is 0, as torch). Floating and complex inputs; the output is real
    (``output_dtype``, a real floating dtype, overrides it)."""
    op = "prims::var"
    _check_inp(op, inp, FLOATING)
    if output_dtype is None:
        dtype = inp.dtype.to_real()
    elif output_dtype in FLOAT:
        dtype = output_dtype
    else:
        raise TypeError(f"{op}: argument 'output_dtype' must be a real floating dtype, got {output_dtype.name}")
    return meta_empty(reduced_shape(inp.shape, reduced_dims(op, inp, dims)), dtype)


def _logical_meta(op: str, inp, dims):
    _check_inp(op, inp, ALL)
    return meta_empty(reduced_shape(inp.shape, reduced_dims(op, inp, dims)), _dtype.bool_)


def any_meta(inp, dims):
    """Whether any element over ``dims`` is nonzero (NaN counts as nonzero); bool output, False when empty."""
    return _logical_meta("prims::any", inp, dims)


def all_meta(inp, dims):
    """Whether every element over ``dims`` is nonzero (NaN counts as nonzero); bool output, True when empty."""
    return _logical_meta("prims::all", inp, dims)


def _arg_meta(op: str, inp, dim):
    _check_inp(op, inp, REAL)
    if dim is None:
        if inp.numel() == 0:
            raise ValueError(f"{op}: cannot reduce over a zero-size dimension")
        return meta_empty((), _dtype.int64)
    d = wrap_dim(op, dim, inp.ndim)
    axes = (d,) if inp.ndim else ()
    _check_nonempty(op, inp, axes)
    return meta_empty(reduced_shape(inp.shape, axes), _dtype.int64)


def argmax_meta(inp, dim):
    """Index (int64) of the largest value along ``dim`` (``None``: of the flattened tensor, 0-dim output).
    NaN counts as the largest and the first NaN wins; ties give the first index. Real dtypes; ValueError on
    a zero-size reduced dim."""
    return _arg_meta("prims::argmax", inp, dim)


def argmin_meta(inp, dim):
    """Index (int64) of the smallest value along ``dim`` (``None``: of the flattened tensor, 0-dim output).
    NaN counts as the smallest and the first NaN wins; ties give the first index. Real dtypes; ValueError on
    a zero-size reduced dim."""
    return _arg_meta("prims::argmin", inp, dim)


def xor_sum_meta(inp, dims):
    """Bitwise XOR of ``inp`` over ``dims`` (integer and bool dtypes; 0 when empty)."""
    op = "prims::xor_sum"
    _check_inp(op, inp, INTEGRAL)
    return meta_empty(reduced_shape(inp.shape, reduced_dims(op, inp, dims)), inp.dtype)


REDUCTION_PRIMS = [
    ("sum(Tensor inp, int[]? dims, *, ScalarType? output_dtype=None) -> Tensor", sum_meta),
    ("prod(Tensor inp, int[]? dims, *, ScalarType? output_dtype=None) -> Tensor", prod_meta),
    ("amax(Tensor inp, int[]? dims) -> Tensor", amax_meta),
    ("amin(Tensor inp, int[]? dims) -> Tensor", amin_meta),
    ("var(Tensor inp, int[]? dims, float correction, *, ScalarType? output_dtype=None) -> Tensor", var_meta),
    ("any(Tensor inp, int[]? dims) -> Tensor", any_meta),
    ("all(Tensor inp, int[]? dims) -> Tensor", all_meta),
    ("argmax(Tensor inp, int? dim) -> Tensor", argmax_meta),
    ("argmin(Tensor inp, int? dim) -> Tensor", argmin_meta),
    ("xor_sum(Tensor inp, int[]? dims) -> Tensor", xor_sum_meta),
]


def _define():
    for schema, meta in REDUCTION_PRIMS:
        define_prim(schema, meta, tags=("reduction",))


_define()
