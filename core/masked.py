"""``opweave.masked``: reductions and normalisations over the elements a boolean mask keeps (``torch.masked``).

Each function takes PyTorch's arguments plus ``mask`` (a bool tensor broadcastable to the
input; None keeps every element). Masked-out elements are replaced by the operation's
identity (0 for sums, 1 for products, -inf for maxima and softmax, +inf for minima, NaN for
the median, which skips NaN) before the ordinary op runs, so a fully masked-out slice gives
that identity (``-inf`` for ``amax``, ``0`` for ``sum``); ``mean``, ``var`` and ``std`` divide
by the count of kept elements (NaN where none is kept). Results are plain tensors on the
strided layout, as ``torch.masked`` returns for strided inputs; sparse layouts are not supported.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from . import _dtype
from ._ops import canonical
from ._tensor import Tensor
from .errors import DimIndexError, ValueRuntimeError

__all__ = [
    "sum",
    "prod",
    "cumsum",
    "cumprod",
    "amax",
    "amin",
    "argmax",
    "argmin",
    "mean",
    "median",
    "norm",
    "var",
    "std",
    "logsumexp",
    "logaddexp",
    "softmax",
    "log_softmax",
    "softmin",
    "normalize",
]

_SMALL_INTEGRAL = (_dtype.uint8, _dtype.bool_, _dtype.int8, _dtype.int16, _dtype.int32)


def _canonical_dim(dim, ndim: int) -> tuple:
    """``dim`` as a sorted tuple of non-negative dims (all dims for None); PyTorch's errors."""
    if dim is None:
        return tuple(range(ndim))
    ndim = max(ndim, 1)
    dims = []
    for d in (dim,) if isinstance(dim, int) else dim:
        if d in dims:
            raise ValueRuntimeError(f"dim={d} appears multiple times in the list of dims")
        if d >= ndim or d < -ndim:
            raise DimIndexError(f"dim={d} is out of range for tensor of rank {ndim}")
        dims.append(d % ndim)
    return tuple(sorted(dims))


def _input_mask(input: Tensor, mask) -> Tensor:  # noqa: A002
    """``mask`` as a bool tensor of ``input``'s shape (all True for None)."""
    if mask is None:
        return canonical.ones(tuple(input.shape), dtype=_dtype.bool_, device=input.device)
    if not isinstance(mask, Tensor):
        raise TypeError(f"masked: argument 'mask' must be a Tensor, not {type(mask).__name__}")
    if mask.ndim > input.ndim:
        raise DimIndexError(
            "_input_mask expected broadcastable mask (got mask dimensionality higher than of the input)"
        )
    if mask.shape != input.shape:
        mask = canonical.broadcast_to(mask, tuple(input.shape))
    return mask.to(_dtype.bool_)


def _identity(op: str, input: Tensor, ord=None):  # noqa: A002
    """The value masked-out elements take for ``op`` (PyTorch's ``_reduction_identity``)."""
    dtype = input.dtype
    floating = dtype.is_floating_point
    if op in ("sum", "cumsum"):
        return 0
    if op in ("prod", "cumprod"):
        return 1
    if op in ("amax", "argmax", "logaddexp", "logsumexp"):
        if floating or dtype.is_complex:
            return -math.inf
        if dtype is not _dtype.bool_:
            return _dtype.iinfo(dtype).min
    if op in ("amin", "argmin"):
        if floating:
            return math.inf
        if dtype is not _dtype.bool_:
            return _dtype.iinfo(dtype).max
    if op == "norm":
        return math.inf if ord == -math.inf else 0
    if op == "median":
        return math.nan
    raise NotImplementedError(f"masked.{op}: no identity for {dtype.name} input")


def _combine(op: str, input: Tensor, mask, ord=None) -> Tensor:  # noqa: A002
    """``input`` with the masked-out elements replaced by ``op``'s identity."""
    if mask is None:
        return input
    keep = _input_mask(input, mask)
    fill = canonical.full((), _identity(op, input, ord), dtype=input.dtype, device=input.device)
    return canonical.where(keep, input, fill)


def _sum_dtype(input: Tensor, dtype):  # noqa: A002
    if dtype is not None:
        return dtype
    return _dtype.int64 if input.dtype in _SMALL_INTEGRAL else input.dtype


# -- declarations ------------------------------------------------------------------------------------------
# Most masked ops share one of two signatures; each is declared below as its name, a short body and a docstring,
# and :func:`_dim_reduction` / :func:`_along_dim` give it the public signature (``torch.masked``'s).


class DimReduction(Protocol):
    """A masked reduction over ``dim`` (all dims when None): ``sum``, ``prod``, ``amax`` ..."""

    def __call__(
        self,
        input: Tensor,  # noqa: A002
        dim: int | Sequence[int] | None = None,
        *,
        keepdim: bool = False,
        dtype: _dtype.dtype | None = None,
        mask: Tensor | None = None,
    ) -> Tensor: ...


class AlongDim(Protocol):
    """A masked op along one ``dim`` that keeps the input's shape: ``softmax``, ``cumsum`` ..."""

    def __call__(
        self,
        input: Tensor,  # noqa: A002
        dim: int,
        *,
        dtype: _dtype.dtype | None = None,
        mask: Tensor | None = None,
    ) -> Tensor: ...


class Variance(Protocol):
    """A masked ``var``/``std`` over ``dim`` with Bessel's ``correction``."""

    def __call__(
        self,
        input: Tensor,  # noqa: A002
        dim: int | Sequence[int] | None = None,
        unbiased: bool | None = None,
        *,
        correction: float | None = None,
        keepdim: bool = False,
        dtype: _dtype.dtype | None = None,
        mask: Tensor | None = None,
    ) -> Tensor: ...


def _named(fn, name: str, doc: str):
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


def _dim_reduction(name: str, body: Callable[[Tensor, Any, bool, Any, Any], Tensor], doc: str) -> DimReduction:
    """The public masked reduction ``name``: ``body(input, dim, keepdim, dtype, mask)`` under PyTorch's signature."""

    def reduction(
        input: Tensor,  # noqa: A002
        dim: int | Sequence[int] | None = None,
        *,
        keepdim: bool = False,
        dtype: _dtype.dtype | None = None,
        mask: Tensor | None = None,
    ) -> Tensor:
        return body(input, dim, bool(keepdim), dtype, mask)

    return _named(reduction, name, doc)


def _identity_reduction(name: str, op, canonical_dims: bool = True) -> Callable[..., Tensor]:
    """``op(input with masked-out elements at name's identity, dim, keepdim)`` in ``dtype`` (the input's)."""

    def body(input, dim, keepdim, dtype, mask):  # noqa: A002
        dims = list(_canonical_dim(dim, input.ndim)) if canonical_dims else dim
        return op(_combine(name, input, mask), dims, keepdim).to(input.dtype if dtype is None else dtype)

    return body


def _along_dim(name: str, identity: str, body: Callable[[Tensor, int, Any], Tensor], doc: str) -> AlongDim:
    """The public masked op ``name`` along one dim: ``body(input at identity's fill, dim, dtype)``."""

    def along_dim(
        input: Tensor,  # noqa: A002
        dim: int,
        *,
        dtype: _dtype.dtype | None = None,
        mask: Tensor | None = None,
    ) -> Tensor:
        dtype = input.dtype if dtype is None else dtype
        d = _canonical_dim(dim, input.ndim)[0]
        return body(_combine(identity, input, mask), d, dtype)

    return _named(along_dim, name, doc)


def _sum(input, dim, keepdim, dtype, mask):  # noqa: A002
    dims = list(_canonical_dim(dim, input.ndim))
    return canonical.sum(_combine("sum", input, mask), dims, keepdim, dtype=_sum_dtype(input, dtype))


def _prod(input, dim, keepdim, dtype, mask):  # noqa: A002
    dims = _canonical_dim(dim, input.ndim)
    result = _combine("prod", input, mask).to(_sum_dtype(input, dtype))
    if not dims and input.ndim == 0:
        return result
    for d in reversed(dims):
        result = canonical.prod(result, d, keepdim)
    return result


def _count(input: Tensor, dim, keepdim: bool, mask) -> Tensor:  # noqa: A002
    keep = _input_mask(input, mask)
    return canonical.sum(keep, list(_canonical_dim(dim, input.ndim)), bool(keepdim))


def _mean(input, dim, keepdim, dtype, mask):  # noqa: A002
    total = sum(input, dim, keepdim=keepdim, dtype=input.dtype if dtype is None else dtype, mask=mask)
    return canonical.div(total, _count(input, dim, keepdim, mask))


sum = _dim_reduction(  # noqa: A001
    "sum", _sum, "Sum of the kept elements over ``dim`` (all when None); integral inputs sum in int64."
)
prod = _dim_reduction(
    "prod", _prod, "Product of the kept elements over ``dim`` (all when None); integral inputs multiply in int64."
)
amax = _dim_reduction(
    "amax",
    _identity_reduction("amax", canonical.amax),
    "Maximum of the kept elements over ``dim`` (-inf, or the dtype's minimum, where none is kept).",
)
amin = _dim_reduction(
    "amin",
    _identity_reduction("amin", canonical.amin),
    "Minimum of the kept elements over ``dim`` (+inf, or the dtype's maximum, where none is kept).",
)
argmax = _dim_reduction(
    "argmax",
    _identity_reduction("argmax", canonical.argmax, canonical_dims=False),
    "Index of the largest kept element along ``dim`` (flattened when None), in ``dtype`` (input's by default).",
)
argmin = _dim_reduction(
    "argmin",
    _identity_reduction("argmin", canonical.argmin, canonical_dims=False),
    "Index of the smallest kept element along ``dim`` (flattened when None), in ``dtype`` (input's by default).",
)
mean = _dim_reduction("mean", _mean, "Mean of the kept elements over ``dim`` (NaN where none is kept).")
logsumexp = _dim_reduction(
    "logsumexp",
    _identity_reduction("logsumexp", canonical.logsumexp),
    "``log(sum(exp(x)))`` over the kept elements (-inf where none is kept).",
)
cumsum = _along_dim(
    "cumsum",
    "cumsum",
    lambda x, d, dtype: canonical.cumsum(x, d, dtype=dtype).to(dtype),
    "Cumulative sum along ``dim`` in which masked-out elements count as 0.",
)
cumprod = _along_dim(
    "cumprod",
    "cumprod",
    lambda x, d, dtype: canonical.cumprod(x, d, dtype=dtype).to(dtype),
    "Cumulative product along ``dim`` in which masked-out elements count as 1.",
)
softmax = _along_dim(
    "softmax",
    "amax",
    lambda x, d, dtype: canonical.softmax(x, d, dtype=dtype),
    "Softmax along ``dim`` over the kept elements (masked-out ones get 0; NaN where none is kept).",
)
log_softmax = _along_dim(
    "log_softmax",
    "amax",
    lambda x, d, dtype: canonical.log_softmax(x, d, dtype=dtype),
    "Log-softmax along ``dim`` over the kept elements (masked-out ones get -inf).",
)
softmin = _along_dim(
    "softmin",
    "amin",
    lambda x, d, dtype: canonical.softmax(canonical.neg(x), d, dtype=dtype),
    "Softmin along ``dim`` over the kept elements (masked-out ones get 0).",
)


def median(
    input: Tensor,
    dim: int = -1,
    *,
    keepdim: bool = False,
    dtype: _dtype.dtype | None = None,
    mask: Tensor | None = None,
) -> Tensor:  # noqa: A002
    """Median of the kept elements along ``dim`` (NaN where none is kept; ValueError then for integral input)."""
    dtype = input.dtype if dtype is None else dtype
    d = _canonical_dim(dim, input.ndim)[0]
    is_float = input.dtype.is_floating_point
    if not is_float:
        input = input.to(_dtype.float32)  # noqa: A001
    output = canonical.nanmedian(_combine("median", input, mask), d, bool(keepdim))[0]
    if is_float:
        return output
    if bool(canonical.any(canonical.isnan(output))):
        raise ValueError("masked median expects no fully masked out rows if dtype is not floating point")
    return output.to(dtype)


def norm(
    input: Tensor,
    ord: float = 2.0,
    dim: int | Sequence[int] | None = None,
    *,
    keepdim: bool = False,
    dtype: _dtype.dtype | None = None,
    mask: Tensor | None = None,
) -> Tensor:  # noqa: A002
    """The ``ord``-vector norm of the kept elements over ``dim`` (all when None)."""
    dims = _canonical_dim(dim, input.ndim)
    masked = _combine("norm", input, mask, ord)
    return canonical.linalg_vector_norm(masked, ord, list(dims), bool(keepdim), dtype=dtype)


def _std_var(name, input, dim, unbiased, correction, keepdim, dtype, mask, take_sqrt):  # noqa: A002
    if unbiased is not None and correction is not None:
        raise ValueError(f"masked.{name}: only one of unbiased and correction may be given")
    corr = 1.0
    if unbiased is not None:
        corr = 1.0 if unbiased else 0.0
    if correction is not None:
        corr = float(correction)
    if dtype is None:
        dtype = input.dtype
        if not (dtype.is_floating_point or dtype.is_complex):
            dtype = _dtype.float32
    compute = dtype if (dtype.is_floating_point or dtype.is_complex) else _dtype.float32
    count = _count(input, dim, True, mask)
    sample_mean = canonical.div(sum(input, dim, keepdim=True, dtype=dtype, mask=mask), count)
    x = canonical.sub(input, sample_mean)
    total = sum(canonical.mul(x, canonical.conj(x)), dim, keepdim=keepdim, dtype=compute, mask=mask)
    if not keepdim:
        count = canonical.reshape(count, tuple(total.shape))
    if corr != 0:
        real = compute.to_real() if compute.is_complex else compute
        count = canonical.clamp_min(canonical.sub(count.to(real), corr), 0)
    output = canonical.div(total, count).to(dtype)
    return canonical.sqrt(output) if take_sqrt else output


def _variance(name: str, take_sqrt: bool, doc: str) -> Variance:
    """The public masked ``var`` or ``std`` (``take_sqrt``) under PyTorch's signature."""

    def variance(
        input: Tensor,  # noqa: A002
        dim: int | Sequence[int] | None = None,
        unbiased: bool | None = None,
        *,
        correction: float | None = None,
        keepdim: bool = False,
        dtype: _dtype.dtype | None = None,
        mask: Tensor | None = None,
    ) -> Tensor:
        return _std_var(name, input, dim, unbiased, correction, keepdim, dtype, mask, take_sqrt)

    return _named(variance, name, doc)


var = _variance("var", False, "Variance of the kept elements over ``dim`` with Bessel's ``correction`` (1 by default).")
std = _variance("std", True, "Standard deviation of the kept elements over ``dim`` (the square root of :func:`var`).")


def logaddexp(
    input: Tensor,
    other: Tensor,
    *,
    dtype: _dtype.dtype | None = None,
    input_mask: Tensor | None = None,
    other_mask: Tensor | None = None,
) -> Tensor:  # noqa: A002
    """``log(exp(input) + exp(other))`` where masked-out elements of either count as -inf."""
    dtype = input.dtype if dtype is None else dtype
    a = _combine("logaddexp", input, input_mask)
    b = _combine("logaddexp", other, other_mask)
    return canonical.logaddexp(a, b).to(dtype)


def normalize(
    input: Tensor,
    ord: float,
    dim: int,
    *,
    eps: float = 1e-12,
    dtype: _dtype.dtype | None = None,
    mask: Tensor | None = None,
) -> Tensor:  # noqa: A002
    """``input`` divided by its masked ``ord``-norm along ``dim`` (at least ``eps``); masked-out elements give 0."""
    dtype = input.dtype if dtype is None else dtype
    masked = _combine("sum", input, mask)
    nrm = norm(input, ord, dim, keepdim=True, dtype=dtype, mask=mask)
    denom = canonical.clamp_min(nrm, eps)
    return canonical.div(masked, denom)
