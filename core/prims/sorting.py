"""Sorting prims: sort, topk, kthvalue, mode, unique, unique_consecutive.

Order is PyTorch's: NaN sorts as the largest value, -0.0 equals 0.0. Index
outputs are int64. Real and bool dtypes (complex numbers are not ordered).
"""

from __future__ import annotations

from .. import _dtype
from .._meta import empty as meta_empty
from .._ops import define_prim
from ._utils import REAL, check_dtype, check_tensor, wrap_dim

ORDERED = REAL | frozenset({_dtype.bool_})


def _input(op: str, a, dim):
    check_tensor(op, "a", a)
    check_dtype(op, "a", a, ORDERED)
    if dim is None:
        return None
    return wrap_dim(op, dim, a.ndim)


def _dim_size(a, d) -> int:
    return a.shape[d] if a.ndim else 1


def _values_indices(shape, dtype):
    return meta_empty(shape, dtype), meta_empty(shape, _dtype.int64)


def sort_meta(a, dim, descending, stable):
    """``a`` sorted along ``dim`` (NaN largest) and the int64 indices that sort it. ``stable`` keeps equal
    elements in their original order (this prim always sorts stably, which is a valid unstable sort)."""
    _input("prims::sort", a, dim)
    return _values_indices(a.shape, a.dtype)


def _without(a, d) -> tuple:
    return tuple(n for k, n in enumerate(a.shape) if k != d)


def topk_meta(a, k, dim, largest, sorted):  # noqa: A002 - schema name
    """The ``k`` largest (``largest``) or smallest elements along ``dim`` (NaN largest) and their int64
    indices; ``dim`` gets size ``k`` (``0 <= k <= size``, else ValueError; a 0-dim ``a`` needs ``k == 1``).
    Results come sorted (best first) whatever ``sorted`` says; equal elements keep their original order."""
    op = "prims::topk"
    d = _input(op, a, dim)
    n = _dim_size(a, d)
    if not (0 if a.ndim else 1) <= k <= n:
        raise ValueError(f"{op}: argument 'k' ({k}) is out of range for a dim of size {n}")
    shape = list(a.shape)
    if shape:
        shape[d] = k
    return _values_indices(shape, a.dtype)


def kthvalue_meta(a, k, dim):
    """The ``k``-th smallest element along ``dim`` (1-based; NaN largest) and its int64 index; ``dim`` is
    removed. ``1 <= k <= size``, else ValueError."""
    op = "prims::kthvalue"
    d = _input(op, a, dim)
    n = _dim_size(a, d)
    if not 1 <= k <= n:
        raise ValueError(f"{op}: argument 'k' ({k}) is out of range for a dim of size {n}")
    return _values_indices(_without(a, d), a.dtype)


def mode_meta(a, dim):
    """The most frequent value along ``dim`` (the smallest among ties; NaNs are all distinct, as torch) and the
    int64 index of one of its occurrences (the last); ``dim`` is removed. ValueError on a zero-size dim."""
    op = "prims::mode"
    d = _input(op, a, dim)
    if _dim_size(a, d) == 0:
        raise ValueError(f"{op}: cannot take the mode of a zero-size dimension")
    return _values_indices(_without(a, d), a.dtype)


def _unique_input(op: str, a, dim):
    d = _input(op, a, dim)
    if d is None:
        return
    if a.ndim == 0:
        raise ValueError(f"{op}: argument 'dim' needs a tensor with at least one dim")
    if a.numel() == 0 and (a.shape[d] != 0 or list(a.shape).count(0) != 1):
        raise ValueError(f"{op}: a zero-size tensor needs its only zero-size dim to be 'dim'")


def unique_meta(a, sorted, return_inverse, return_counts, dim):  # noqa: A002 - schema name
    """The distinct elements of ``a`` (``dim`` None: flattened, 1-D) or distinct slices along ``dim``, in
    ascending (lexicographic) order whatever ``sorted`` says; NaNs are all distinct, as torch. ``inverse``
    (int64; ``a``'s shape, or ``[a.size(dim)]``) maps each element/slice to its output position; ``counts``
    (int64) counts them. Either is an empty ``[0]`` tensor when not requested (torch's ``_unique2``)."""
    _unique_input("prims::unique", a, dim)


def unique_consecutive_meta(a, return_inverse, return_counts, dim):
    """Like ``unique`` but only collapses runs of equal consecutive elements/slices, keeping their order."""
    _unique_input("prims::unique_consecutive", a, dim)


SORTING_PRIMS = [
    ("sort(Tensor a, int dim, bool descending, bool stable) -> (Tensor values, Tensor indices)", sort_meta, ()),
    (
        "topk(Tensor a, int k, int dim, bool largest, bool sorted) -> (Tensor values, Tensor indices)",
        topk_meta,
        (),
    ),
    ("kthvalue(Tensor a, int k, int dim) -> (Tensor values, Tensor indices)", kthvalue_meta, ()),
    ("mode(Tensor a, int dim) -> (Tensor values, Tensor indices)", mode_meta, ()),
    (
        "unique(Tensor a, bool sorted, bool return_inverse, bool return_counts, int? dim) "
        "-> (Tensor output, Tensor inverse_indices, Tensor counts)",
        unique_meta,
        ("dynamic_output_shape",),
    ),
    (
        "unique_consecutive(Tensor a, bool return_inverse, bool return_counts, int? dim) "
        "-> (Tensor output, Tensor inverse_indices, Tensor counts)",
        unique_consecutive_meta,
        ("dynamic_output_shape",),
    ),
]


def _define():
    for schema, meta, tags in SORTING_PRIMS:
        define_prim(schema, meta, tags=tags)


_define()
