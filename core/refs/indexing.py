"""Indexing canonical ops: gather/scatter, index_* ops, advanced indexing, masks, take/put, nonzero,
searchsorted/bucketize, bincount, histc.

Index tensors are int64 (TypeError otherwise) except where PyTorch also takes
int32 (``index_select``, ``index_add``, ``index_fill``, ``index.Tensor``,
``index_put``). Sources written into ``self`` must have ``self``'s dtype
(TypeError otherwise, as torch; Python scalars are cast). Advanced indexing
(``index.Tensor``/``index_put``) converts bool (and uint8) masks into the
integer index tensors of their nonzero coordinates, so masked indexing has a
data-dependent output shape.
"""

from __future__ import annotations

from .. import _dtype
from .._ops import prims
from ._tensor_utils import (
    cast,
    check_index_dtype,
    expand,
    fill_like,
    flatten,
    full,
    same_dtype_operand,
    select,
)
from ._utils import broadcast_shapes, check_alpha, define_with_variants, to_device, wrap_dim

_MASK_DTYPES = (_dtype.bool_, _dtype.uint8)


# -- gather and scatter ----------------------------------------------------


def gather(self, dim, index, sparse_grad=False):
    """``out[i][j] = self[index[i][j]][j]`` (for dim 0): values of ``self`` picked along ``dim`` by ``index``."""
    op = "gather"
    wrap_dim(op, dim, self.ndim)
    if index.numel() == 0:  # PyTorch checks the dtype and shape of a non-empty index only
        return full(index.shape, 0, self.dtype, self.device)
    check_index_dtype(op, "index", index, allow_int32=True)
    return prims.gather(self, dim, index)


def _scatter_source(op: str, self, index, src):
    check_index_dtype(op, "index", index, allow_int32=True)
    return same_dtype_operand(op, "src", src, self)


def _value_source(self, index, value):
    """A scalar ``value`` as a source tensor of ``index``'s shape (0-strides) in ``self``'s dtype."""
    scalar = full((), value, self.dtype, self.device)
    return expand(scalar, index.shape)


def scatter_src(self, dim, index, src):
    """A copy of ``self`` with ``out[index[i][j]][j] = src[i][j]`` (for dim 0); duplicate targets: last write."""
    src = _scatter_source("scatter", self, index, src)
    return prims.scatter(self, dim, index, src)


def scatter_value(self, dim, index, value):
    """A copy of ``self`` with the positions ``index`` picks along ``dim`` set to ``value``."""
    check_index_dtype("scatter", "index", index, allow_int32=True)
    return prims.scatter(self, dim, index, _value_source(self, index, value))


_LEGACY_REDUCES = {"add": "sum", "multiply": "prod"}


def _legacy_reduce(op: str, reduce: str) -> str:
    if reduce not in _LEGACY_REDUCES:
        raise ValueError(f"{op}: argument 'reduce' must be 'add' or 'multiply', got {reduce!r}")
    return _LEGACY_REDUCES[reduce]


def scatter_reduce_legacy(self, dim, index, src, reduce):
    """``scatter`` accumulating with ``reduce`` = 'add' or 'multiply' into the existing values."""
    src = _scatter_source("scatter", self, index, src)
    return _scatter_reduce(self, dim, index, src, _legacy_reduce("scatter", reduce), True)


def scatter_value_reduce(self, dim, index, value, reduce):
    """``scatter`` of a scalar ``value`` accumulating with ``reduce`` = 'add' or 'multiply'."""
    check_index_dtype("scatter", "index", index, allow_int32=True)
    source = _value_source(self, index, value)
    return _scatter_reduce(self, dim, index, source, _legacy_reduce("scatter", reduce), True)


def scatter_add(self, dim, index, src):
    """A copy of ``self`` with ``out[index[i][j]][j] += src[i][j]`` (for dim 0); duplicates accumulate."""
    src = _scatter_source("scatter_add", self, index, src)
    return prims.scatter_add(self, dim, index, src)


_REDUCES = ("sum", "prod", "mean", "amax", "amin")


def scatter_reduce(self, dim, index, src, reduce, include_self=True):
    """Reduce (sum, prod, mean, amax, amin) the ``src`` values scattered to each target of ``self`` (together
    with the target's own value when ``include_self``); untouched elements are kept."""
    op = "scatter_reduce"
    if reduce not in _REDUCES:
        raise ValueError(f"{op}: argument 'reduce' must be one of {', '.join(_REDUCES)}, got {reduce!r}")
    src = _scatter_source(op, self, index, src)
    return _scatter_reduce(self, dim, index, src, reduce, include_self)


def _scatter_reduce(self, dim, index, src, reduce, include_self):
    """``prims.scatter_reduce``; bool tensors as PyTorch: sum/amax are "or", prod/amin are "and"."""
    if self.dtype is _dtype.bool_ and reduce != "mean":
        wide = prims.scatter_reduce(cast(self, _dtype.int64), dim, index, cast(src, _dtype.int64), reduce, include_self)
        return cast(wide, _dtype.bool_)
    return prims.scatter_reduce(self, dim, index, src, reduce, include_self)


# -- index_select, index_add, index_copy, index_fill -----------------------


def _check_index_vector(op: str, index) -> None:
    if index.ndim > 1:
        raise ValueError(f"{op}: argument 'index' must be 0-dim or 1-dim, got {index.ndim} dims")


def index_select(self, dim, index):
    """``self`` restricted to the positions ``index`` (0-dim or 1-dim, int64/int32) along ``dim``."""
    op = "index_select"
    wrap_dim(op, dim, self.ndim)
    check_index_dtype(op, "index", index, allow_int32=True)
    _check_index_vector(op, index)
    return prims.index_select(self, dim, index)


def index_add(self, dim, index, source, alpha=1):
    """A copy of ``self`` with ``alpha * source`` added at the positions ``index`` along ``dim``."""
    op = "index_add"
    wrap_dim(op, dim, self.ndim)
    check_index_dtype(op, "index", index, allow_int32=True)
    _check_index_vector(op, index)
    source = same_dtype_operand(op, "source", source, self)
    check_alpha(op, alpha, self.dtype)
    return prims.index_add(self, dim, index, source, alpha)


def index_copy(self, dim, index, source):
    """A copy of ``self`` whose slices ``index`` along ``dim`` are replaced by the slices of ``source``."""
    op = "index_copy"
    wrap_dim(op, dim, self.ndim)
    check_index_dtype(op, "index", index)
    _check_index_vector(op, index)
    source = same_dtype_operand(op, "source", source, self)
    return prims.index_copy(self, dim, index, source)


def _check_index_fill(op: str, self, dim, index) -> None:
    wrap_dim(op, dim, self.ndim)
    check_index_dtype(op, "index", index, allow_int32=True)
    _check_index_vector(op, index)


def index_fill_scalar(self, dim, index, value):
    """A copy of ``self`` with the slices ``index`` (negative wraps) along ``dim`` filled with ``value``."""
    _check_index_fill("index_fill", self, dim, index)
    return prims.index_fill(self, dim, index, value)


def index_fill_tensor(self, dim, index, value):
    """``index_fill`` with a 0-dim tensor ``value`` (read on the device, without a host round trip)."""
    op = "index_fill"
    _check_index_fill(op, self, dim, index)
    if value.ndim != 0:
        raise ValueError(f"{op}: only supports a 0-dimensional value tensor, but got one with {value.ndim} dims")
    d = wrap_dim(op, dim, self.ndim)
    target = list(self.shape) or [1]
    target[d] = index.numel()
    source = expand(to_device(cast(value, self.dtype), self.device), target)
    flat_index = flatten(index)
    base = self if self.ndim else flatten(self)
    wrapped = _wrap_negative(flat_index, base.shape[d])
    result = prims.index_copy(base, d, wrapped, source)
    return result if self.ndim else select(result, 0, 0)


def _wrap_negative(index, size: int):
    """``index`` with negative entries shifted by ``size`` (index_fill accepts them, index_copy does not)."""
    negative = prims.lt(index, fill_like(0, index))
    shifted = prims.add(index, fill_like(size, index))
    return prims.where(negative, shifted, index)


# -- advanced indexing -----------------------------------------------------


def _expand_masks(op: str, self, indices) -> list:
    """Replace each bool/uint8 mask by the index tensors of its nonzero coordinates (one per masked dim)."""
    out, position = [], 0
    for k, index in enumerate(indices):
        if index is None:
            out.append(None)
            position += 1
            continue
        if index.dtype in _MASK_DTYPES:
            masked = self.shape[position : position + index.ndim]
            if tuple(index.shape) != tuple(masked):
                raise ValueError(
                    f"{op}: the shape of the mask {list(index.shape)} at index {k} does not match the shape "
                    f"{list(masked)} of the indexed tensor's dims {position}..{position + index.ndim - 1}"
                )
            coordinates = prims.nonzero(cast(index, _dtype.bool_))
            out.extend(select(coordinates, 1, j) for j in range(index.ndim))
            position += index.ndim
            continue
        if index.dtype not in (_dtype.int64, _dtype.int32):
            raise TypeError(
                f"{op}: tensors used as indices must be long, int, byte or bool tensors, got {index.dtype.name}"
            )
        out.append(index)
        position += 1
    if position > self.ndim:
        raise ValueError(f"{op}: too many indices for a tensor of dimension {self.ndim} (got {position})")
    return out


def index(self, indices):
    """``self[indices]`` with NumPy/PyTorch advanced indexing (integer tensors broadcast together; bool masks
    select their nonzero positions; None keeps a dim)."""
    return prims.index(self, _expand_masks("index", self, indices))


def index_put(self, indices, values, accumulate=False):
    """A copy of ``self`` with ``out[indices] = values`` (``+=`` when ``accumulate``); ``values`` broadcasts."""
    op = "index_put"
    values = same_dtype_operand(op, "values", values, self)
    return prims.index_put(self, _expand_masks(op, self, indices), values, accumulate)


# -- masks -----------------------------------------------------------------


def _check_mask(op: str, mask) -> None:
    if mask.dtype is not _dtype.bool_:
        raise TypeError(f"{op}: expected a bool tensor for 'mask', got {mask.dtype.name}")


def masked_select(self, mask):
    """The elements of ``self`` where ``mask`` (bool; both broadcast) is True, as a 1-D tensor."""
    op = "masked_select"
    _check_mask(op, mask)
    shape = broadcast_shapes(op, self.shape, mask.shape)
    return prims.masked_select(expand(self, shape), expand(mask, shape))


def masked_scatter(self, mask, source):
    """A copy of ``self`` (broadcast with ``mask``) whose elements where ``mask`` is True take the leading
    elements of ``source`` in order."""
    op = "masked_scatter"
    _check_mask(op, mask)
    source = same_dtype_operand(op, "source", source, self)
    shape = broadcast_shapes(op, self.shape, mask.shape)
    return prims.masked_scatter(expand(self, shape), expand(mask, shape), source)


def nonzero(self):
    """The int64 coordinates ``[n, ndim]`` of the nonzero elements, in C order (NaN counts as nonzero)."""
    return prims.nonzero(self)


def nonzero_static(self, size, fill_value=-1):
    """``nonzero`` padded with ``fill_value`` (or truncated) to exactly ``size`` rows: a static output shape."""
    op = "nonzero_static"
    if size < 0:
        raise ValueError(f"{op}: argument 'size' must be non-negative, got {size}")
    if self.device.type == "meta":
        return prims.empty_strided([size, self.ndim], [self.ndim, 1], dtype=_dtype.int64, device=self.device)
    found = prims.nonzero(self)
    out = full((size, self.ndim), fill_value, _dtype.int64, self.device)
    rows = min(size, found.shape[0])
    if rows:
        head = prims.slice_in_dim(found, 0, rows, 1, 0)
        prims.copy_to(prims.slice_in_dim(out, 0, rows, 1, 0), head)
    return out


def argwhere(self):
    """The int64 coordinates ``[n, ndim]`` of the nonzero elements (same as ``nonzero``)."""
    return prims.nonzero(self)


# -- take, put, take_along_dim ---------------------------------------------


def take(self, index):
    """``self`` flattened, read at ``index`` (int64; negative wraps); the result has ``index``'s shape."""
    check_index_dtype("take", "index", index)
    return prims.take(self, index)


def put(self, index, source, accumulate=False):
    """A copy of ``self`` with its flattened elements at ``index`` set to (or, ``accumulate``, increased by)
    ``source``."""
    op = "put"
    check_index_dtype(op, "index", index)
    source = same_dtype_operand(op, "source", source, self)
    if index.numel() != source.numel():
        raise ValueError(
            f"{op}: expected 'source' and 'index' to have the same number of elements, "
            f"got {source.numel()} and {index.numel()}"
        )
    return prims.put(self, index, source, accumulate)


def take_along_dim(self, indices, dim=None):
    """Values of ``self`` at ``indices`` along ``dim`` (broadcasting the other dims); ``dim=None`` indexes the
    flattened tensor."""
    op = "take_along_dim"
    check_index_dtype(op, "indices", indices)
    if dim is None:
        return prims.gather(flatten(self), 0, flatten(indices))  # negative indices raise, as PyTorch
    d = wrap_dim(op, dim, self.ndim)
    if self.ndim != indices.ndim:
        raise ValueError(
            f"{op}: input and indices should have the same number of dimensions, but got {self.ndim} and {indices.ndim}"
        )
    if self.ndim == 0:
        return prims.gather(self, 0, indices)
    self_sizes = list(self.shape)
    self_sizes[d] = indices.shape[d]
    shape = broadcast_shapes(op, self_sizes, indices.shape)
    source_shape = list(shape)
    source_shape[d] = self.shape[d]
    return prims.gather(expand(self, source_shape), d, _wrap_negative(expand(indices, shape), self.shape[d]))


def _wrap_negative(indices, size: int):
    """Negative indices counted from the end of a dim of ``size`` (PyTorch's take_along_dim accepts them)."""
    if indices.numel() == 0:
        return indices
    negative = prims.lt(
        indices,
        prims.broadcast_in_dim(prims.full([], 0, dtype=indices.dtype, device=indices.device), list(indices.shape), []),
    )
    shifted = prims.add(
        indices,
        prims.broadcast_in_dim(
            prims.full([], size, dtype=indices.dtype, device=indices.device), list(indices.shape), []
        ),
    )
    return prims.where(negative, shifted, indices)


# -- searchsorted, bucketize, bincount, histc ------------------------------


def _search(op: str, sorted_sequence, values, out_int32, right, side, sorter):
    if side is not None and side not in ("left", "right"):
        raise ValueError(f"{op}: side can only be 'left' or 'right', got {side!r}")
    if side == "left" and right:
        raise ValueError(f"{op}: side and right can't be set to opposites, got side of left while right was True")
    right = right or side == "right"
    if sorted_sequence.ndim == 0:
        raise ValueError(f"{op}: boundaries tensor should have at least 1 dimension")
    if sorter is not None:
        check_index_dtype(op, "sorter", sorter)
        if sorter.shape != sorted_sequence.shape:
            raise ValueError(
                f"{op}: boundary and sorter must have the same size, but got {list(sorted_sequence.shape)} "
                f"and {list(sorter.shape)}"
            )
        sorted_sequence = prims.gather(sorted_sequence, sorted_sequence.ndim - 1, sorter)
    common = _dtype.result_type(sorted_sequence, values)
    if common.is_complex or common is _dtype.bool_:
        raise TypeError(
            f"{op}: expected real (non-bool) inputs, got {sorted_sequence.dtype.name} and {values.dtype.name}"
        )
    result = prims.searchsorted(cast(sorted_sequence, common), cast(values, common), right)
    return cast(result, _dtype.int32) if out_int32 else result


def searchsorted_tensor(sorted_sequence, self, out_int32=False, right=False, side=None, sorter=None):
    """Insertion positions of ``self``'s values in ``sorted_sequence`` (1-D, or leading dims matching
    ``self``'s): the first position (``right``/``side='right'``: after equal entries); ``sorter`` sorts the
    sequence first."""
    return _search("searchsorted", sorted_sequence, self, out_int32, right, side, sorter)


def searchsorted_scalar(sorted_sequence, self, out_int32=False, right=False, side=None, sorter=None):
    """``searchsorted`` for one scalar value (the sequence must be 1-D); returns a 0-dim tensor."""
    op = "searchsorted"
    if sorted_sequence.ndim != 1:
        raise ValueError(f"{op}: the boundaries tensor must be 1-D when the input is a scalar")
    value = full((), self, _dtype.result_type(sorted_sequence, self), sorted_sequence.device)
    return _search(op, sorted_sequence, value, out_int32, right, side, sorter)


def bucketize_tensor(self, boundaries, out_int32=False, right=False):
    """The bucket of each element of ``self`` among the 1-D sorted ``boundaries`` (``searchsorted``)."""
    if boundaries.ndim != 1:
        raise ValueError(f"bucketize: boundaries tensor must be 1 dimension, but got dim({boundaries.ndim})")
    return _search("bucketize", boundaries, self, out_int32, right, None, None)


def bucketize_scalar(self, boundaries, out_int32=False, right=False):
    """The bucket of the scalar ``self`` among the 1-D sorted ``boundaries``; a 0-dim tensor."""
    if boundaries.ndim != 1:
        raise ValueError(f"bucketize: boundaries tensor must be 1 dimension, but got dim({boundaries.ndim})")
    value = full((), self, _dtype.result_type(boundaries, self), boundaries.device)
    return _search("bucketize", boundaries, value, out_int32, right, None, None)


def bincount(self, weights=None, minlength=0):
    """Counts (int64) of each non-negative integer in the 1-D ``self`` (or sums of ``weights``), of length
    ``max(self) + 1`` at least ``minlength``."""
    op = "bincount"
    if self.dtype.kind not in ("int", "uint"):
        raise TypeError(f"{op}: only 1-d non-negative integral inputs are supported, got {self.dtype.name}")
    if self.ndim != 1:
        raise ValueError(f"{op}: only 1-d non-negative integral inputs are supported, got {self.ndim} dims")
    if minlength < 0:
        raise ValueError(f"{op}: minlength should be >= 0, got {minlength}")
    if weights is not None and weights.shape != self.shape:
        raise ValueError(f"{op}: weights should be 1-d and have the same length as input, got {list(weights.shape)}")
    return prims.bincount(self, weights, minlength)


def histc(self, bins=100, min=0, max=0):  # noqa: A002 - PyTorch's argument names
    """Histogram with ``bins`` equal-width bins over ``[min, max]`` (both 0 or equal: the data's range);
    values outside are ignored. Floating inputs only."""
    op = "histc"
    if not self.dtype.is_floating_point:
        raise TypeError(f"{op}: expected a floating point input, got {self.dtype.name}")
    if bins <= 0:
        raise ValueError(f"{op}: bins must be > 0, but got {bins}")
    if min > max:
        raise ValueError(f"{op}: max must be larger than min, got min={min} and max={max}")
    return prims.histc(self, bins, min, max)


# -- definitions -----------------------------------------------------------

DYN = ("dynamic_output_shape",)
NB = ("nondeterministic_bitwise",)
NO_ALIAS = "out_no_overlap"

# (schema, decomposition, tags, in-place variant?, out variant?) — scatter overload order matters.
INDEXING = [
    (
        "gather(Tensor self, int dim, Tensor index, *, bool sparse_grad=False) -> Tensor",
        gather,
        ("core", NO_ALIAS, "out_exact_dtype"),
        False,
        True,
    ),
    ("scatter.src(Tensor self, int dim, Tensor index, Tensor src) -> Tensor", scatter_src, NB + ("core",), True, True),
    (
        "scatter.value(Tensor self, int dim, Tensor index, Scalar value) -> Tensor",
        scatter_value,
        NB + ("core",),
        True,
        True,
    ),
    (
        "scatter.reduce(Tensor self, int dim, Tensor index, Tensor src, *, str reduce) -> Tensor",
        scatter_reduce_legacy,
        NB,
        True,
        True,
    ),
    (
        "scatter.value_reduce(Tensor self, int dim, Tensor index, Scalar value, *, str reduce) -> Tensor",
        scatter_value_reduce,
        NB,
        True,
        True,
    ),
    ("scatter_add(Tensor self, int dim, Tensor index, Tensor src) -> Tensor", scatter_add, NB + ("core",), True, True),
    (
        "scatter_reduce.two(Tensor self, int dim, Tensor index, Tensor src, str reduce, *, bool include_self=True) "
        "-> Tensor",
        scatter_reduce,
        NB + ("core",),
        True,
        True,
    ),
    ("index_select(Tensor self, int dim, Tensor index) -> Tensor", index_select, ("core", NO_ALIAS), False, True),
    (
        "index_add(Tensor self, int dim, Tensor index, Tensor source, *, Scalar alpha=1) -> Tensor",
        index_add,
        NB + ("core",),
        True,
        True,
    ),
    ("index_copy(Tensor self, int dim, Tensor index, Tensor source) -> Tensor", index_copy, NB, True, True),
    (
        "index_fill.int_Scalar(Tensor self, int dim, Tensor index, Scalar value) -> Tensor",
        index_fill_scalar,
        (),
        True,
        True,
    ),
    (
        "index_fill.int_Tensor(Tensor self, int dim, Tensor index, Tensor value) -> Tensor",
        index_fill_tensor,
        (),
        True,
        True,
    ),
    ("index.Tensor(Tensor self, Tensor?[] indices) -> Tensor", index, DYN + ("core", NO_ALIAS), False, True),
    (
        "index_put(Tensor self, Tensor?[] indices, Tensor values, bool accumulate=False) -> Tensor",
        index_put,
        NB + ("core",),
        True,
        True,
    ),
    ("masked_select(Tensor self, Tensor mask) -> Tensor", masked_select, DYN + (NO_ALIAS,), False, True),
    ("masked_scatter(Tensor self, Tensor mask, Tensor source) -> Tensor", masked_scatter, (), True, True),
    ("nonzero(Tensor self) -> Tensor", nonzero, DYN + ("core",), False, True),
    ("nonzero_static(Tensor self, *, SymInt size, int fill_value=-1) -> Tensor", nonzero_static, (), False, True),
    ("argwhere(Tensor self) -> Tensor", argwhere, DYN, False, False),
    ("take(Tensor self, Tensor index) -> Tensor", take, (NO_ALIAS,), False, True),
    ("take_along_dim(Tensor self, Tensor indices, int? dim=None) -> Tensor", take_along_dim, (NO_ALIAS,), False, True),
    ("put(Tensor self, Tensor index, Tensor source, bool accumulate=False) -> Tensor", put, NB, True, True),
    (
        "searchsorted.Tensor(Tensor sorted_sequence, Tensor self, *, bool out_int32=False, bool right=False, "
        "str? side=None, Tensor? sorter=None) -> Tensor",
        searchsorted_tensor,
        (),
        False,
        True,
    ),
    (
        "searchsorted.Scalar(Tensor sorted_sequence, Scalar self, *, bool out_int32=False, bool right=False, "
        "str? side=None, Tensor? sorter=None) -> Tensor",
        searchsorted_scalar,
        (),
        False,
        True,
    ),
    (
        "bucketize.Tensor(Tensor self, Tensor boundaries, *, bool out_int32=False, bool right=False) -> Tensor",
        bucketize_tensor,
        (),
        False,
        True,
    ),
    (
        "bucketize.Scalar(Scalar self, Tensor boundaries, *, bool out_int32=False, bool right=False) -> Tensor",
        bucketize_scalar,
        (),
        False,
        True,
    ),
    ("bincount(Tensor self, Tensor? weights=None, int minlength=0) -> Tensor", bincount, DYN, False, True),
    ("histc(Tensor self, int bins=100, Scalar min=0, Scalar max=0) -> Tensor", histc, (), False, True),
]


def _define():
    for schema, decomposition, tags, inplace, out in INDEXING:
        define_with_variants(schema, decomposition, tags=tags, inplace=inplace, out=out)


_define()
