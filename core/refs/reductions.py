"""Reduction canonical ops: sum, mean, prod, extrema, logical, variance, norms, softmax.

Every reduction takes ``dim`` (None, an int or a list; None and ``[]`` reduce
every dim) and ``keepdim`` like PyTorch. Integer and bool inputs of ``sum`` and
``prod`` accumulate in int64 unless ``dtype`` is given; float16/bfloat16 inputs
accumulate in float32 and round once at the end. Reducing a zero-size dim
gives the identity (0 for sum, 1 for prod, nan for mean) or, for the extrema
which have none, a ValueError.
"""

from __future__ import annotations

import math

from .. import _dtype
from .._ops import canonical as ops
from .._ops import prims
from ..errors import DimIndexError
from ._tensor_utils import (
    cast,
    expand,
    fill_like,
    is_floating,
    is_integral,
    keep_reduced,
    numel,
    reshape,
)
from ._utils import Promotion, define_with_variants, elementwise_dtypes, reduction_dims, wrap_dim

# -- helpers ---------------------------------------------------------------


def _accumulate_dtype(op: str, self, dtype):
    """Result dtype of sum/prod: ``dtype``, else int64 for integral inputs, else the input's dtype."""
    if dtype is None:
        return _dtype.int64 if is_integral(self.dtype) else self.dtype
    if self.dtype.is_complex and not dtype.is_complex:
        raise TypeError(f"{op}: cannot reduce a {self.dtype.name} input into the real dtype {dtype.name}")
    return dtype


def _check_nonempty(op: str, self, dims, named: bool = True) -> None:
    """A zero-size reduced dim (for reductions without an identity): ``DimIndexError`` (an IndexError, as
    PyTorch) for a dim the caller named, ValueError when every dim is reduced by default."""
    if self.ndim and any(self.shape[d] == 0 for d in dims):
        message = f"{op}: cannot reduce over a zero-size dimension: the operation has no identity"
        raise (DimIndexError if named else ValueError)(message)


def _check_real(op: str, self) -> None:
    """TypeError for complex inputs (no ordering)."""
    if self.dtype.is_complex:
        raise TypeError(
            f"{op}: complex inputs are not supported (complex numbers are not ordered), got {self.dtype.name}"
        )


def _check_floating(op: str, self, what: str = "floating point or complex") -> None:
    if not is_floating(self.dtype):
        raise TypeError(f"{op}: expected a {what} input, got {self.dtype.name}")


def _count(dims, self) -> int:
    """Number of elements reduced into each output element."""
    return numel(self.shape[d] for d in dims) if self.ndim else 1


def _zero_nans(t):
    """``t`` with NaNs replaced by 0 (floating dtypes only)."""
    if not t.dtype.is_floating_point:
        return t
    return prims.where(prims.isnan(t), fill_like(0, t), t)


def _sum_like(op: str, prim, self, dim, keepdim, dtype):
    """Shared body of sum/prod/nansum: promotion, opmath accumulation and keepdim."""
    out_dtype = _accumulate_dtype(op, self, dtype)
    dims = reduction_dims(op, dim, self.ndim)
    compute = _dtype.opmath_dtype(out_dtype)
    x = cast(self, out_dtype) if compute is not out_dtype else self
    result = prim(x, list(dims), output_dtype=compute)
    return keep_reduced(cast(result, out_dtype), dims, self.ndim, keepdim)


def _single_dim(op: str, self, dim) -> tuple:
    """The reduced dims for an ``int dim`` argument (empty for a 0-dim input)."""
    d = wrap_dim(op, dim, self.ndim)
    return (d,) if self.ndim else ()


# -- sum, prod, mean -------------------------------------------------------


def sum_(self, dtype=None):
    """Sum of all elements. Integral inputs give int64 unless ``dtype`` is given; an empty tensor sums to 0."""
    return _sum_like("sum", prims.sum, self, None, False, dtype)


def sum_dim(self, dim, keepdim=False, dtype=None):
    """Sum over ``dim`` (None or ``[]``: every dim). Integral inputs give int64 unless ``dtype`` is given."""
    return _sum_like("sum", prims.sum, self, dim, keepdim, dtype)


def nansum(self, dim=None, keepdim=False, dtype=None):
    """Sum over ``dim`` treating NaN as zero. Complex inputs are not supported (as torch)."""
    if self.dtype.is_complex:
        raise TypeError("nansum: complex inputs are not supported")
    return _sum_like("nansum", prims.sum, _zero_nans(self), dim, keepdim, dtype)


def prod_(self, dtype=None):
    """Product of all elements. Integral inputs give int64 unless ``dtype`` is given; an empty tensor gives 1."""
    return _sum_like("prod", prims.prod, self, None, False, dtype)


def prod_dim(self, dim, keepdim=False, dtype=None):
    """Product over the single dim ``dim``. Integral inputs give int64 unless ``dtype`` is given."""
    return _sum_like("prod", prims.prod, self, _single_dim("prod", self, dim), keepdim, dtype)


def _mean(op: str, self, dim, keepdim, dtype):
    out_dtype = dtype or self.dtype
    if not is_floating(out_dtype):
        which = "Optional dtype" if dtype is not None else "Input dtype"
        raise TypeError(
            f"{op}: could not infer output dtype. {which} must be either a floating point or complex dtype. "
            f"Got: {out_dtype.name}"
        )
    if self.dtype.is_complex and not out_dtype.is_complex:
        raise TypeError(f"{op}: cannot reduce a {self.dtype.name} input into the real dtype {out_dtype.name}")
    dims = reduction_dims(op, dim, self.ndim)
    compute = _dtype.opmath_dtype(out_dtype)
    total = prims.sum(cast(self, out_dtype), list(dims), output_dtype=compute)
    result = prims.div(total, fill_like(_count(dims, self), total))
    return keep_reduced(cast(result, out_dtype), dims, self.ndim, keepdim)


def mean_(self, dtype=None):
    """Mean of all elements; needs a floating/complex input or ``dtype`` (TypeError otherwise). Empty → nan."""
    return _mean("mean", self, None, False, dtype)


def mean_dim(self, dim, keepdim=False, dtype=None):
    """Mean over ``dim``; needs a floating/complex input or ``dtype`` (TypeError otherwise). Empty → nan."""
    return _mean("mean", self, dim, keepdim, dtype)


def nanmean(self, dim=None, keepdim=False, dtype=None):
    """Mean over ``dim`` of the non-NaN elements (nan where all are NaN). Real floating inputs only."""
    op = "nanmean"
    if not self.dtype.is_floating_point:
        raise TypeError(f"{op}: expected input to have floating point dtype but got {self.dtype.name}")
    out_dtype = dtype or self.dtype
    if not out_dtype.is_floating_point:
        raise TypeError(f"{op}: argument 'dtype' must be a floating point dtype, got {out_dtype.name}")
    dims = list(reduction_dims(op, dim, self.ndim))
    compute = _dtype.opmath_dtype(out_dtype)
    x = cast(self, compute)
    present = prims.logical_not(prims.isnan(x))
    count = prims.sum(present, dims, output_dtype=compute)
    total = prims.sum(_zero_nans(x), dims, output_dtype=compute)
    return keep_reduced(cast(prims.div(total, count), out_dtype), dims, self.ndim, keepdim)


# -- extrema ---------------------------------------------------------------


def _extremum(op: str, prim, self, dims, keepdim, named=True):
    _check_real(op, self)
    _check_nonempty(op, self, dims, named)
    return keep_reduced(prim(self, list(dims)), dims, self.ndim, keepdim)


def amax(self, dim=(), keepdim=False):
    """Largest value over ``dim`` (``[]``: every dim); NaN propagates. ValueError on a zero-size reduced dim."""
    return _extremum("amax", prims.amax, self, reduction_dims("amax", dim, self.ndim), keepdim, bool(dim))


def amin(self, dim=(), keepdim=False):
    """Smallest value over ``dim`` (``[]``: every dim); NaN propagates. ValueError on a zero-size reduced dim."""
    return _extremum("amin", prims.amin, self, reduction_dims("amin", dim, self.ndim), keepdim, bool(dim))


def aminmax(self, dim=None, keepdim=False):
    """``(min, max)`` over ``dim`` (None: every dim) in one call; NaN propagates."""
    op = "aminmax"
    dims = reduction_dims(op, None, self.ndim) if dim is None else _single_dim(op, self, dim)
    named = dim is not None
    return _extremum(op, prims.amin, self, dims, keepdim, named), _extremum(op, prims.amax, self, dims, keepdim, named)


def max_(self):
    """Largest element (NaN propagates); ValueError for an empty tensor."""
    return _extremum("max", prims.amax, self, reduction_dims("max", None, self.ndim), False, False)


def min_(self):
    """Smallest element (NaN propagates); ValueError for an empty tensor."""
    return _extremum("min", prims.amin, self, reduction_dims("min", None, self.ndim), False, False)


def _arg_index_input(t):
    """argmax/argmin prims take real dtypes: bool compares as uint8."""
    return cast(t, _dtype.uint8) if t.dtype is _dtype.bool_ else t


def _extremum_with_index(op: str, values_prim, index_prim, self, dim, keepdim):
    dims = _single_dim(op, self, dim)
    _check_real(op, self)
    _check_nonempty(op, self, dims)
    values = values_prim(self, list(dims))
    indices = index_prim(_arg_index_input(self), dims[0] if dims else 0)
    return keep_reduced(values, dims, self.ndim, keepdim), keep_reduced(indices, dims, self.ndim, keepdim)


def max_dim(self, dim, keepdim=False):
    """``(values, indices)`` of the largest element along ``dim``; the first NaN (else the first maximum) wins."""
    return _extremum_with_index("max", prims.amax, prims.argmax, self, dim, keepdim)


def min_dim(self, dim, keepdim=False):
    """``(values, indices)`` of the smallest element along ``dim``; the first NaN (else the first minimum) wins."""
    return _extremum_with_index("min", prims.amin, prims.argmin, self, dim, keepdim)


def max_other(self, other):
    """Elementwise maximum of ``self`` and ``other`` (alias of ``maximum``)."""
    return ops.maximum(self, other)


def min_other(self, other):
    """Elementwise minimum of ``self`` and ``other`` (alias of ``minimum``)."""
    return ops.minimum(self, other)


def _arg_extremum(op: str, prim, self, dim, keepdim):
    _check_real(op, self)
    if self.dtype is _dtype.bool_:
        raise TypeError(f"{op}: bool inputs are not supported")
    if dim is None:
        if self.numel() == 0:
            raise ValueError(f"{op}: expected a non-empty tensor when 'dim' is None")
        result = prim(self, None)
        return reshape(result, (1,) * self.ndim) if keepdim else result
    dims = _single_dim(op, self, dim)
    _check_nonempty(op, self, dims)
    return keep_reduced(prim(self, dims[0] if dims else 0), dims, self.ndim, keepdim)


def argmax(self, dim=None, keepdim=False):
    """Index (int64) of the largest element along ``dim`` (None: of the flattened tensor); first NaN/maximum wins."""
    return _arg_extremum("argmax", prims.argmax, self, dim, keepdim)


def argmin(self, dim=None, keepdim=False):
    """Index (int64) of the smallest element along ``dim`` (None: of the flattened tensor); first NaN/minimum wins."""
    return _arg_extremum("argmin", prims.argmin, self, dim, keepdim)


# -- any, all, count_nonzero -----------------------------------------------


def _logical(op: str, prim, self, dims, keepdim):
    result = prim(self, list(dims))
    if self.dtype is _dtype.uint8:  # torch keeps uint8 for uint8 inputs
        result = cast(result, _dtype.uint8)
    return keep_reduced(result, dims, self.ndim, keepdim)


def any_(self):
    """Whether any element is nonzero (NaN counts); bool, or uint8 for uint8 inputs. Empty → False."""
    return _logical("any", prims.any, self, reduction_dims("any", None, self.ndim), False)


def any_dim(self, dim, keepdim=False):
    """Whether any element along ``dim`` is nonzero; bool, or uint8 for uint8 inputs."""
    return _logical("any", prims.any, self, _single_dim("any", self, dim), keepdim)


def any_dims(self, dim=None, keepdim=False):
    """Whether any element over ``dim`` (None or ``[]``: every dim) is nonzero; bool, or uint8 for uint8 inputs."""
    return _logical("any", prims.any, self, reduction_dims("any", dim, self.ndim), keepdim)


def all_(self):
    """Whether every element is nonzero (NaN counts); bool, or uint8 for uint8 inputs. Empty → True."""
    return _logical("all", prims.all, self, reduction_dims("all", None, self.ndim), False)


def all_dim(self, dim, keepdim=False):
    """Whether every element along ``dim`` is nonzero; bool, or uint8 for uint8 inputs."""
    return _logical("all", prims.all, self, _single_dim("all", self, dim), keepdim)


def all_dims(self, dim=None, keepdim=False):
    """Whether every element over ``dim`` (None or ``[]``: every dim) is nonzero; bool, or uint8 for uint8 inputs."""
    return _logical("all", prims.all, self, reduction_dims("all", dim, self.ndim), keepdim)


def _count_nonzero(op: str, self, dims):
    nonzero = prims.ne(self, fill_like(0, self))
    return prims.sum(nonzero, list(dims), output_dtype=_dtype.int64)


def count_nonzero_dims(self, dim):
    """Number of nonzero elements (int64) over the dims ``dim`` (``[]``: every dim)."""
    return _count_nonzero("count_nonzero", self, reduction_dims("count_nonzero", dim, self.ndim))


def count_nonzero_(self, dim=None):
    """Number of nonzero elements (int64) along ``dim`` (None: in the whole tensor)."""
    op = "count_nonzero"
    dims = reduction_dims(op, None, self.ndim) if dim is None else _single_dim(op, self, dim)
    return _count_nonzero(op, self, dims)


# -- variance and standard deviation ---------------------------------------


def _correction(op: str, correction) -> float:
    if correction is None:
        return 1.0
    if isinstance(correction, complex):
        raise TypeError(f"{op}: argument 'correction' must be a real number, got {correction!r}")
    return float(correction)


def _var(op: str, self, dim, correction, keepdim, take_sqrt=False):
    """``sum(|x - mean|^2) / (N - correction)`` over ``dim`` (real result), or its square root."""
    if not is_floating(self.dtype):
        raise TypeError(f"{op}: only floating point and complex dtypes are supported, got {self.dtype.name}")
    dims = reduction_dims(op, dim, self.ndim)
    compute = _dtype.opmath_dtype(self.dtype)
    result = prims.var(cast(self, compute), list(dims), _correction(op, correction))
    if take_sqrt:
        result = prims.sqrt(result)
    return keep_reduced(cast(result, self.dtype.to_real()), dims, self.ndim, keepdim)


def var_(self, unbiased=True):
    """Variance of all elements (``unbiased``: divide by N - 1, else N)."""
    return _var("var", self, None, 1.0 if unbiased else 0.0, False)


def var_dim(self, dim, unbiased=True, keepdim=False):
    """Variance over ``dim`` (``unbiased``: divide by N - 1, else N)."""
    return _var("var", self, dim, 1.0 if unbiased else 0.0, keepdim)


def var_correction(self, dim=None, correction=None, keepdim=False):
    """Variance over ``dim`` dividing by ``N - correction`` (default correction 1); N - correction <= 0 → inf/nan."""
    return _var("var", self, dim, correction, keepdim)


def std_(self, unbiased=True):
    """Standard deviation of all elements (``unbiased``: divide by N - 1, else N)."""
    return _var("std", self, None, 1.0 if unbiased else 0.0, False, take_sqrt=True)


def std_dim(self, dim, unbiased=True, keepdim=False):
    """Standard deviation over ``dim`` (``unbiased``: divide by N - 1, else N)."""
    return _var("std", self, dim, 1.0 if unbiased else 0.0, keepdim, take_sqrt=True)


def std_correction(self, dim=None, correction=None, keepdim=False):
    """Standard deviation over ``dim`` dividing by ``N - correction`` (default correction 1)."""
    return _var("std", self, dim, correction, keepdim, take_sqrt=True)


def _var_mean(op: str, self, dim, correction, keepdim, take_sqrt):
    spread = _var(op, self, dim, correction, keepdim, take_sqrt)
    return spread, _mean(op, self, dim, keepdim, None)


def var_mean_(self, unbiased=True):
    """``(var, mean)`` of all elements."""
    return _var_mean("var_mean", self, None, 1.0 if unbiased else 0.0, False, False)


def var_mean_dim(self, dim, unbiased=True, keepdim=False):
    """``(var, mean)`` over ``dim``."""
    return _var_mean("var_mean", self, dim, 1.0 if unbiased else 0.0, keepdim, False)


def var_mean_correction(self, dim=None, correction=None, keepdim=False):
    """``(var, mean)`` over ``dim`` with ``correction`` (default 1)."""
    return _var_mean("var_mean", self, dim, correction, keepdim, False)


def std_mean_(self, unbiased=True):
    """``(std, mean)`` of all elements."""
    return _var_mean("std_mean", self, None, 1.0 if unbiased else 0.0, False, True)


def std_mean_dim(self, dim, unbiased=True, keepdim=False):
    """``(std, mean)`` over ``dim``."""
    return _var_mean("std_mean", self, dim, 1.0 if unbiased else 0.0, keepdim, True)


def std_mean_correction(self, dim=None, correction=None, keepdim=False):
    """``(std, mean)`` over ``dim`` with ``correction`` (default 1)."""
    return _var_mean("std_mean", self, dim, correction, keepdim, True)


# -- logsumexp and norms ---------------------------------------------------


def logsumexp(self, dim, keepdim=False):
    """``log(sum(exp(self)))`` over ``dim``, computed stably (shifted by the max); integers promote to float.

    An empty reduction gives -inf; a 0-dim real input is returned as it is (no exp to overflow). Complex
    inputs are shifted by the largest real part (PyTorch's complex logsumexp), so the imaginary part of the
    result is the principal one, 0-dim inputs included.
    """
    op = "logsumexp"
    compute, result_dtype = elementwise_dtypes(self, kind=Promotion.INT_TO_FLOAT)
    x = cast(self, compute)
    dims = list(reduction_dims(op, dim, self.ndim))
    if x.numel() == 0:
        result = prims.log(prims.sum(prims.exp(x), dims))
    elif not dims and not x.dtype.is_complex:
        result = prims.clone(x) if x is self else x
    else:  # a 0-dim complex input too: log(exp(z)) takes the principal imaginary part, in (-pi, pi]
        real = prims.real(x) if x.dtype.is_complex else x
        peak = prims.amax(real, dims)
        peak = prims.where(prims.isinf(peak), fill_like(0, peak), peak)
        shift = cast(peak, x.dtype)
        wide = expand(prims.expand_dims(shift, dims, self.ndim), x.shape)
        total = prims.sum(prims.exp(prims.sub(x, wide)), dims)
        result = prims.add(prims.log(total), shift)
    return keep_reduced(cast(result, result_dtype), dims, self.ndim, keepdim)


def _vector_norm(op: str, self, p, dims, keepdim, dtype=None):
    """``(sum |x|^p)^(1/p)`` over ``dims`` with torch's special cases p = 0, 1, 2, inf, -inf."""
    if p is None:
        p = 2
    if isinstance(p, complex):
        raise TypeError(f"{op}: argument 'p' must be a real number, got {p!r}")
    source = cast(self, dtype) if dtype is not None else self
    if not is_floating(source.dtype):
        raise TypeError(f"{op}: input dtype should be either floating point or complex, got {source.dtype.name}")
    if dtype is not None and self.dtype.is_complex and not dtype.is_complex:
        raise TypeError(f"{op}: cannot compute the norm of a {self.dtype.name} input in {dtype.name}")
    result_dtype = source.dtype.to_real()
    compute = _dtype.opmath_dtype(result_dtype)
    x = cast(prims.abs(source), compute)
    dims = list(dims)
    if p == math.inf or p == -math.inf:
        _check_nonempty(op, self, dims, False)
        result = (prims.amax if p > 0 else prims.amin)(x, dims)
    elif p == 0:
        result = prims.sum(cast(prims.ne(x, fill_like(0, x)), compute), dims)
    elif p == 1:
        result = prims.sum(x, dims)
    elif p == 2:
        result = prims.sqrt(prims.sum(prims.mul(x, x), dims))
    else:
        powered = prims.pow(x, fill_like(float(p), x))
        total = prims.sum(powered, dims)
        result = prims.pow(total, fill_like(1.0 / float(p), total))
    return keep_reduced(cast(result, result_dtype), dims, self.ndim, keepdim)


def norm_scalar(self, p=2):
    """The ``p``-norm of the flattened tensor (p = 0 counts nonzeros, inf/-inf give max/min of ``|x|``)."""
    return _vector_norm("norm", self, p, reduction_dims("norm", None, self.ndim), False)


def norm_dim(self, p, dim, keepdim=False):
    """The vector ``p``-norm over ``dim`` (``[]``: every dim); complex inputs give real results."""
    return _vector_norm("norm", self, p, reduction_dims("norm", dim, self.ndim), keepdim)


def norm_dtype(self, p, dtype):
    """The ``p``-norm of the flattened tensor, computed in (and returning the real part of) ``dtype``."""
    return _vector_norm("norm", self, p, reduction_dims("norm", None, self.ndim), False, dtype)


def norm_dim_dtype(self, p, dim, keepdim, dtype):
    """The vector ``p``-norm over ``dim`` computed in ``dtype``."""
    return _vector_norm("norm", self, p, reduction_dims("norm", dim, self.ndim), keepdim, dtype)


# -- softmax ---------------------------------------------------------------


def _softmax_core(op: str, x, dim, log: bool):
    """(log-)softmax of ``x`` along ``dim`` in ``x``'s dtype, shifted by the max for stability."""
    d = wrap_dim(op, dim, x.ndim)
    dims = [d] if x.ndim else []
    if x.numel() == 0:
        return prims.clone(x)
    peak = prims.amax(x, dims)
    if dims:
        peak = expand(prims.expand_dims(peak, dims, x.ndim), x.shape)
    shifted = prims.sub(x, peak)
    exps = prims.exp(shifted)
    total = prims.sum(exps, dims)
    if dims:
        total = expand(prims.expand_dims(total, dims, x.ndim), x.shape)
    if log:
        return prims.sub(shifted, prims.log(total))
    return prims.div(exps, total)


def _softmax(op: str, self, dim, dtype, log: bool):
    x = cast(self, dtype) if dtype is not None else self
    if not x.dtype.is_floating_point:
        raise TypeError(f"{op}: expected a real floating point input (or 'dtype'), got {x.dtype.name}")
    compute = _dtype.opmath_dtype(x.dtype)
    return cast(_softmax_core(op, cast(x, compute), dim, log), x.dtype)


def softmax(self, dim, dtype=None):
    """``exp(x) / sum(exp(x))`` along ``dim`` (input cast to ``dtype`` first when given); real floating inputs."""
    return _softmax("softmax", self, dim, dtype, log=False)


def log_softmax(self, dim, dtype=None):
    """``x - logsumexp(x)`` along ``dim`` (input cast to ``dtype`` first when given); real floating inputs."""
    return _softmax("log_softmax", self, dim, dtype, log=True)


def softmax_internal(self, dim, half_to_float):
    """ATen's ``_softmax``: softmax along ``dim``; ``half_to_float`` returns float32 for 16-bit float inputs."""
    return _internal_softmax("_softmax", self, dim, half_to_float, log=False)


def log_softmax_internal(self, dim, half_to_float):
    """ATen's ``_log_softmax``: log-softmax along ``dim``; ``half_to_float`` returns float32 for 16-bit inputs."""
    return _internal_softmax("_log_softmax", self, dim, half_to_float, log=True)


def _internal_softmax(op: str, self, dim, half_to_float, log: bool):
    if half_to_float and self.dtype not in (_dtype.float16, _dtype.bfloat16):
        raise TypeError(f"{op}: half_to_float conversion is supported for float16/bfloat16 inputs only")
    if not self.dtype.is_floating_point:
        raise TypeError(f"{op}: expected a real floating point input, got {self.dtype.name}")
    result = _softmax_core(op, cast(self, _dtype.opmath_dtype(self.dtype)), dim, log)
    return cast(result, _dtype.float32 if half_to_float else self.dtype)


# -- definitions -----------------------------------------------------------

R = ("reduction",)
RC = ("reduction", "core")

# (schema, decomposition, tags, out variant?) — order matters where overloads of one name compete for a call.
REDUCTIONS = [
    ("sum(Tensor self, *, ScalarType? dtype=None) -> Tensor", sum_, RC, True),
    (
        "sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
        sum_dim,
        RC,
        True,
    ),
    ("nansum(Tensor self, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor", nansum, R, True),
    ("mean(Tensor self, *, ScalarType? dtype=None) -> Tensor", mean_, RC, True),
    ("mean.dim(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor", mean_dim, RC, True),
    (
        "nanmean(Tensor self, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
        nanmean,
        R,
        True,
    ),
    ("prod(Tensor self, *, ScalarType? dtype=None) -> Tensor", prod_, RC, True),
    ("prod.dim_int(Tensor self, int dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor", prod_dim, RC, True),
    ("amax(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor", amax, RC, True),
    ("amin(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor", amin, RC, True),
    (
        "aminmax(Tensor self, *, int? dim=None, bool keepdim=False) -> (Tensor min, Tensor max)",
        aminmax,
        R + ("out_exact_dtype",),
        True,
    ),
    ("max(Tensor self) -> Tensor", max_, R, False),
    ("max.other(Tensor self, Tensor other) -> Tensor", max_other, (), True),
    ("max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)", max_dim, RC, True),
    ("min(Tensor self) -> Tensor", min_, R, False),
    ("min.other(Tensor self, Tensor other) -> Tensor", min_other, (), True),
    ("min.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)", min_dim, RC, True),
    ("argmax(Tensor self, int? dim=None, bool keepdim=False) -> Tensor", argmax, RC, True),
    ("argmin(Tensor self, int? dim=None, bool keepdim=False) -> Tensor", argmin, RC, True),
    ("any(Tensor self) -> Tensor", any_, RC, True),
    ("any.dims(Tensor self, int[]? dim=None, bool keepdim=False) -> Tensor", any_dims, RC, True),
    ("any.dim(Tensor self, int dim, bool keepdim=False) -> Tensor", any_dim, RC, True),
    ("all(Tensor self) -> Tensor", all_, RC, True),
    ("all.dims(Tensor self, int[]? dim=None, bool keepdim=False) -> Tensor", all_dims, RC, True),
    ("all.dim(Tensor self, int dim, bool keepdim=False) -> Tensor", all_dim, RC, True),
    ("count_nonzero.dim_IntList(Tensor self, int[] dim) -> Tensor", count_nonzero_dims, R, True),
    ("count_nonzero(Tensor self, int? dim=None) -> Tensor", count_nonzero_, R, True),
    ("var.dim(Tensor self, int[1]? dim, bool unbiased=True, bool keepdim=False) -> Tensor", var_dim, R, True),
    (
        "var.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False) -> Tensor",
        var_correction,
        RC,
        True,
    ),
    ("var(Tensor self, bool unbiased=True) -> Tensor", var_, R, False),
    ("std.dim(Tensor self, int[1]? dim, bool unbiased=True, bool keepdim=False) -> Tensor", std_dim, R, True),
    (
        "std.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False) -> Tensor",
        std_correction,
        R,
        True,
    ),
    ("std(Tensor self, bool unbiased=True) -> Tensor", std_, R, False),
    (
        "var_mean.dim(Tensor self, int[1]? dim, bool unbiased=True, bool keepdim=False) -> (Tensor, Tensor)",
        var_mean_dim,
        R,
        False,
    ),
    (
        "var_mean.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False) "
        "-> (Tensor, Tensor)",
        var_mean_correction,
        R,
        True,
    ),
    ("var_mean(Tensor self, bool unbiased=True) -> (Tensor, Tensor)", var_mean_, R, False),
    (
        "std_mean.dim(Tensor self, int[1]? dim, bool unbiased=True, bool keepdim=False) -> (Tensor, Tensor)",
        std_mean_dim,
        R,
        False,
    ),
    (
        "std_mean.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False) "
        "-> (Tensor, Tensor)",
        std_mean_correction,
        R,
        True,
    ),
    ("std_mean(Tensor self, bool unbiased=True) -> (Tensor, Tensor)", std_mean_, R, False),
    ("logsumexp(Tensor self, int[1] dim, bool keepdim=False) -> Tensor", logsumexp, R, True),
    ("norm.Scalar(Tensor self, Scalar p=2) -> Tensor", norm_scalar, R, True),
    ("norm.ScalarOpt_dim(Tensor self, Scalar? p, int[1] dim, bool keepdim=False) -> Tensor", norm_dim, R, True),
    ("norm.ScalarOpt_dtype(Tensor self, Scalar? p, *, ScalarType dtype) -> Tensor", norm_dtype, R, True),
    (
        "norm.ScalarOpt_dim_dtype(Tensor self, Scalar? p, int[1] dim, bool keepdim, *, ScalarType dtype) -> Tensor",
        norm_dim_dtype,
        R,
        True,
    ),
    ("softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor", softmax, (), True),
    ("log_softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor", log_softmax, (), True),
    ("_softmax(Tensor self, int dim, bool half_to_float) -> Tensor", softmax_internal, ("core",), True),
    ("_log_softmax(Tensor self, int dim, bool half_to_float) -> Tensor", log_softmax_internal, ("core",), True),
]


def _define():
    for schema, decomposition, tags, out in REDUCTIONS:
        define_with_variants(schema, decomposition, tags=tags, inplace=False, out=out)


_define()
