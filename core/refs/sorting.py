"""Sorting and selection canonical ops: sort, argsort, msort, topk, kthvalue, median, nanmedian, mode, unique.

NaN sorts as the largest value (as torch); indices are int64. 0-dim inputs are
treated as one-element vectors along dim 0/-1. ``opweave.unique`` and
``opweave.unique_consecutive`` are the Python-level functions of
``torch.unique``/``torch.unique_consecutive`` (returning a tensor or a tuple
depending on the flags) over the ATen ops ``_unique2``, ``unique_dim`` and
``unique_consecutive``.
"""

from __future__ import annotations

from .. import _dtype
from .._methods import python_function
from .._ops import canonical as ops
from .._ops import prims
from .._tensor import Tensor
from ._tensor_utils import cast, fill_like, flatten, full, keep_reduced, select
from ._utils import define_with_variants, wrap_dim

# -- helpers ---------------------------------------------------------------


def _check_sortable(op: str, self) -> None:
    if self.dtype.is_complex:
        raise TypeError(f"{op}: complex inputs are not supported (complex numbers are not ordered)")


def _scalar_result(self):
    """``(copy of self, index 0)``: the answer of every selection on a 0-dim tensor."""
    return prims.clone(self), full((), 0, _dtype.int64, self.device)


def _slice_size(self, d: int) -> int:
    return self.shape[d] if self.ndim else 1


# -- sort, argsort, msort, topk, kthvalue ----------------------------------


def _sort(op: str, self, dim, descending, stable):
    d = wrap_dim(op, dim, self.ndim)
    _check_sortable(op, self)
    if self.ndim == 0:
        return _scalar_result(self)
    return prims.sort(self, d, descending, bool(stable))


def sort(self, dim=-1, descending=False):
    """``(values, indices)`` of ``self`` sorted along ``dim`` (NaN largest); the order of ties is unspecified."""
    return _sort("sort", self, dim, descending, False)


def sort_stable(self, stable, dim=-1, descending=False):
    """``(values, indices)`` sorted along ``dim``; ``stable=True`` keeps the order of equal elements."""
    return _sort("sort", self, dim, descending, stable)


def argsort(self, dim=-1, descending=False):
    """The indices (int64) that sort ``self`` along ``dim``."""
    return _sort("argsort", self, dim, descending, False)[1]


def argsort_stable(self, stable, dim=-1, descending=False):
    """The indices that sort ``self`` along ``dim``; ``stable=True`` keeps the order of equal elements."""
    return _sort("argsort", self, dim, descending, stable)[1]


def msort(self):
    """``self`` sorted along dim 0 (values only)."""
    return _sort("msort", self, 0, False, False)[0]


def topk(self, k, dim=-1, largest=True, sorted=True):  # noqa: A002 - PyTorch's argument name
    """The ``k`` largest (or smallest) elements along ``dim`` and their indices; ValueError if k is out of range."""
    op = "topk"
    d = wrap_dim(op, dim, self.ndim)
    _check_sortable(op, self)
    if not 0 <= k <= _slice_size(self, d):
        raise ValueError(f"{op}: selected index k={k} out of range for a dim of size {_slice_size(self, d)}")
    if self.ndim == 0:
        return _scalar_result(self)
    return prims.topk(self, k, d, largest, sorted)


def kthvalue(self, k, dim=-1, keepdim=False):
    """The ``k``-th smallest element (1-based) along ``dim`` and its index; ValueError if k is out of range."""
    op = "kthvalue"
    d = wrap_dim(op, dim, self.ndim)
    _check_sortable(op, self)
    if not 1 <= k <= _slice_size(self, d):
        raise ValueError(f"{op}: selected index k={k} out of range for a dim of size {_slice_size(self, d)}")
    if self.ndim == 0:
        return _scalar_result(self)
    values, indices = prims.kthvalue(self, k, d)
    return keep_reduced(values, (d,), self.ndim, keepdim), keep_reduced(indices, (d,), self.ndim, keepdim)


# -- median, nanmedian, mode -----------------------------------------------


def _median_dim(op: str, self, dim, keepdim, ignore_nan: bool):
    """Lower median along ``dim`` and its index. NaN: median gives NaN (index of the first NaN); nanmedian skips
    NaNs (all-NaN slices give NaN)."""
    d = wrap_dim(op, dim, self.ndim)
    _check_sortable(op, self)
    if self.ndim == 0:
        return _scalar_result(self)
    if self.shape[d] == 0:
        raise ValueError(f"{op}: expected reduction dim {d} to have non-zero size")
    values, indices = prims.sort(self, d, False, True)
    floating = self.dtype.is_floating_point
    if ignore_nan and floating:
        present = prims.sum(prims.logical_not(prims.isnan(self)), [d], output_dtype=_dtype.int64)
        k = prims.div(prims.sub(present, fill_like(1, present)), fill_like(2, present))  # truncates: 0 if none
        k = prims.expand_dims(k, [d])
        value = prims.squeeze(prims.gather(values, d, k), [d])
        index = prims.squeeze(prims.gather(indices, d, k), [d])
    else:
        middle = (self.shape[d] - 1) // 2
        value, index = prims.clone(select(values, d, middle)), prims.clone(select(indices, d, middle))
        if floating:
            nans = prims.isnan(self)
            has_nan = prims.any(nans, [d])
            first_nan = prims.argmax(cast(nans, _dtype.uint8), d)
            value = prims.where(has_nan, fill_like(float("nan"), value), value)
            index = prims.where(has_nan, first_nan, index)
    return keep_reduced(value, (d,), self.ndim, keepdim), keep_reduced(index, (d,), self.ndim, keepdim)


def _median_all(op: str, self, ignore_nan: bool):
    if self.numel() == 0:
        if not self.dtype.is_floating_point:
            raise ValueError(f"{op}: cannot compute the median of an empty {self.dtype.name} tensor")
        return full((), float("nan"), self.dtype, self.device)
    return _median_dim(op, flatten(self), 0, False, ignore_nan)[0]


def median(self):
    """Lower median of all elements (NaN if any element is NaN; NaN for an empty floating tensor)."""
    return _median_all("median", self, False)


def median_dim(self, dim, keepdim=False):
    """``(values, indices)`` of the lower median along ``dim``; a slice containing NaN gives NaN."""
    return _median_dim("median", self, dim, keepdim, False)


def nanmedian(self):
    """Lower median of the non-NaN elements (NaN if all are NaN)."""
    return _median_all("nanmedian", self, True)


def nanmedian_dim(self, dim, keepdim=False):
    """``(values, indices)`` of the lower median of the non-NaN elements along ``dim``."""
    return _median_dim("nanmedian", self, dim, keepdim, True)


def mode(self, dim=-1, keepdim=False):
    """``(values, indices)`` of the most frequent value along ``dim`` (the smallest among ties)."""
    op = "mode"
    d = wrap_dim(op, dim, self.ndim)
    _check_sortable(op, self)
    if self.ndim == 0:
        return _scalar_result(self)
    if self.shape[d] == 0:
        raise ValueError(f"{op}: expected reduction dim {d} to have non-zero size")
    values, indices = prims.mode(self, d)
    return keep_reduced(values, (d,), self.ndim, keepdim), keep_reduced(indices, (d,), self.ndim, keepdim)


# -- unique ----------------------------------------------------------------


def unique2(self, sorted=True, return_inverse=False, return_counts=False):  # noqa: A002
    """ATen's ``_unique2``: ``(values, inverse, counts)`` of the flattened tensor; unrequested outputs are empty."""
    return prims.unique(self, sorted, return_inverse, return_counts, None)


def unique_legacy(self, sorted=True, return_inverse=False):  # noqa: A002
    """ATen's ``_unique``: ``(values, inverse)`` of the flattened tensor."""
    values, inverse, _ = prims.unique(self, sorted, return_inverse, False, None)
    return values, inverse


def unique_dim(self, dim, sorted=True, return_inverse=False, return_counts=False):  # noqa: A002
    """Unique slices along ``dim``: ``(values, inverse, counts)``."""
    d = wrap_dim("unique_dim", dim, self.ndim)
    return prims.unique(self, sorted, return_inverse, return_counts, d)


def unique_consecutive_op(self, return_inverse=False, return_counts=False, dim=None):
    """Collapse runs of equal consecutive elements (or slices along ``dim``): ``(values, inverse, counts)``."""
    if dim is not None:
        dim = wrap_dim("unique_consecutive", dim, self.ndim)
    return prims.unique_consecutive(self, return_inverse, return_counts, dim)


def _pick(outputs, return_inverse, return_counts):
    values, inverse, counts = outputs
    if not return_inverse and not return_counts:
        return values
    picked = (values,) + ((inverse,) if return_inverse else ()) + ((counts,) if return_counts else ())
    return picked


def unique(
    input: Tensor,  # noqa: A002
    sorted: bool = True,
    return_inverse: bool = False,
    return_counts: bool = False,
    dim: int | None = None,
) -> Tensor | tuple[Tensor, ...]:
    """The unique elements of ``input`` (``torch.unique``): a tensor, or a tuple with the inverse indices and/or
    counts when requested. ``dim=None`` works on the flattened tensor, else on slices along ``dim``."""
    if not isinstance(input, Tensor):
        raise TypeError(f"unique(): argument 'input' must be Tensor, not {type(input).__name__}")
    if dim is None:
        outputs = ops._unique2.default(input, sorted, return_inverse, return_counts)
    else:
        outputs = ops.unique_dim.default(input, dim, sorted, return_inverse, return_counts)
    return _pick(outputs, return_inverse, return_counts)


def unique_consecutive(
    input: Tensor,  # noqa: A002
    return_inverse: bool = False,
    return_counts: bool = False,
    dim: int | None = None,
) -> Tensor | tuple[Tensor, ...]:
    """Collapse consecutive equal elements (``torch.unique_consecutive``): a tensor, or a tuple with the inverse
    indices and/or counts when requested."""
    if not isinstance(input, Tensor):
        raise TypeError(f"unique_consecutive(): argument 'input' must be Tensor, not {type(input).__name__}")
    outputs = ops.unique_consecutive.default(input, return_inverse, return_counts, dim)
    return _pick(outputs, return_inverse, return_counts)


# -- definitions -----------------------------------------------------------

DYN = ("dynamic_output_shape",)

# (schema, decomposition, tags, out variant?)
SORTING = [
    ("sort(Tensor self, int dim=-1, bool descending=False) -> (Tensor values, Tensor indices)", sort, (), True),
    (
        "sort.stable(Tensor self, *, bool? stable, int dim=-1, bool descending=False) "
        "-> (Tensor values, Tensor indices)",
        sort_stable,
        ("core",),
        True,
    ),
    ("argsort(Tensor self, int dim=-1, bool descending=False) -> Tensor", argsort, (), False),
    (
        "argsort.stable(Tensor self, *, bool stable, int dim=-1, bool descending=False) -> Tensor",
        argsort_stable,
        (),
        True,
    ),
    ("msort(Tensor self) -> Tensor", msort, (), True),
    (
        "topk(Tensor self, SymInt k, int dim=-1, bool largest=True, bool sorted=True) "
        "-> (Tensor values, Tensor indices)",
        topk,
        ("core",),
        True,
    ),
    (
        "kthvalue(Tensor self, int k, int dim=-1, bool keepdim=False) -> (Tensor values, Tensor indices)",
        kthvalue,
        ("out_no_overlap",),
        True,
    ),
    ("median(Tensor self) -> Tensor", median, ("reduction",), True),
    (
        "median.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)",
        median_dim,
        ("reduction",),
        True,
    ),
    ("nanmedian(Tensor self) -> Tensor", nanmedian, ("reduction",), True),
    (
        "nanmedian.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)",
        nanmedian_dim,
        ("reduction",),
        True,
    ),
    (
        "mode(Tensor self, int dim=-1, bool keepdim=False) -> (Tensor values, Tensor indices)",
        mode,
        ("reduction",),
        True,
    ),
    (
        "_unique2(Tensor self, bool sorted=True, bool return_inverse=False, bool return_counts=False) "
        "-> (Tensor, Tensor, Tensor)",
        unique2,
        DYN,
        True,
    ),
    ("_unique(Tensor self, bool sorted=True, bool return_inverse=False) -> (Tensor, Tensor)", unique_legacy, DYN, True),
    (
        "unique_dim(Tensor self, int dim, bool sorted=True, bool return_inverse=False, bool return_counts=False) "
        "-> (Tensor, Tensor, Tensor)",
        unique_dim,
        DYN,
        True,
    ),
    (
        "unique_consecutive(Tensor self, bool return_inverse=False, bool return_counts=False, int? dim=None) "
        "-> (Tensor, Tensor, Tensor)",
        unique_consecutive_op,
        DYN,
        True,
    ),
]


def _unique_method(
    self: Tensor,
    sorted: bool = True,  # noqa: A002
    return_inverse: bool = False,
    return_counts: bool = False,
    dim: int | None = None,
) -> Tensor | tuple[Tensor, ...]:
    return unique(self, sorted, return_inverse, return_counts, dim)


def _unique_consecutive_method(
    self: Tensor, return_inverse: bool = False, return_counts: bool = False, dim: int | None = None
) -> Tensor | tuple[Tensor, ...]:
    return unique_consecutive(self, return_inverse, return_counts, dim)


def _install_python_functions():
    """``opweave.unique``/``unique_consecutive`` and the Tensor methods: torch's Python-level signatures."""
    _unique_method.__doc__ = unique.__doc__
    _unique_consecutive_method.__doc__ = unique_consecutive.__doc__
    python_function("unique", unique, method=_unique_method)
    python_function("unique_consecutive", unique_consecutive, method=_unique_consecutive_method)


def _define():
    for schema, decomposition, tags, out in SORTING:
        define_with_variants(schema, decomposition, tags=tags, inplace=False, out=out)
    _install_python_functions()


_define()
