"""Indexing prims: gather/scatter, index_* ops, advanced indexing, masks, take/put, searchsorted,
bincount, histc, repeat_interleave.

Index tensors are int64 or int32. Every prim is functional: ops that write
(scatter, index_put, put, ...) return a new tensor holding a copy of ``a`` with
the writes applied. Bounds are data, so they are checked by the backend kernel:
an out-of-bounds index raises ``opweave.IndexOutOfBoundsError`` (an IndexError and a
RuntimeError, as PyTorch raises one or the other) "index N is out of bounds for dim D
with size S". ``gather``, ``scatter*``, ``index_select``, ``index_add`` and
``index_copy`` take indices in ``[0, size)``; ``index_fill``, ``index``,
``index_put``, ``take`` and ``put`` also accept ``[-size, 0)`` (wrapped), as
PyTorch. Outputs are contiguous.
"""

from __future__ import annotations

import math

from .. import _dtype
from .._meta import empty as meta_empty
from .._ops import define_prim
from ._utils import (
    ALL,
    BOOL,
    FLOAT,
    INT,
    NUMERIC,
    REAL,
    check_dtype,
    check_tensor,
    same_device,
    wrap_dim,
)

INDEX_DTYPES = frozenset({_dtype.int64, _dtype.int32})
SCATTER_REDUCES = ("sum", "prod", "mean", "amax", "amin")


def _check_input(op: str, name: str, t, allowed=ALL):
    check_tensor(op, name, t)
    check_dtype(op, name, t, allowed)
    return t


def _check_index(op: str, name: str, t):
    check_tensor(op, name, t)
    if t.dtype not in INDEX_DTYPES:
        raise TypeError(f"{op}: argument '{name}' must be an int64 or int32 tensor, got {t.dtype.name}")
    return t


def _check_vector(op: str, name: str, t):
    if t.ndim > 1:
        raise ValueError(f"{op}: argument '{name}' must be 0-dim or 1-dim, got {t.ndim} dims")


def _same_dtype(op: str, a, name: str, other):
    if other.dtype is not a.dtype:
        raise TypeError(f"{op}: argument '{name}' must have the dtype of 'a' ({a.dtype.name}), got {other.dtype.name}")


def _sizes(t) -> tuple:
    """The shape with a 0-dim tensor seen as a 1-element vector (torch's ``ensure_nonempty_size``)."""
    return tuple(t.shape) or (1,)


def _check_same_ndim(op: str, a, name: str, other):
    if len(_sizes(other)) != len(_sizes(a)):
        raise ValueError(f"{op}: argument '{name}' must have as many dims as 'a' ({a.ndim}), got {other.ndim}")


def _gather_meta(op, a, dim, index):
    _check_input(op, "a", a)
    d = wrap_dim(op, dim, a.ndim)
    _check_index(op, "index", index)
    _check_same_ndim(op, a, "index", index)
    for k, (n, m) in enumerate(zip(_sizes(index), _sizes(a))):
        if k != d and n > m:
            raise ValueError(f"{op}: 'index' has size {n} in dim {k} but 'a' has only {m}")
    same_device(op, [a, index])
    return d


def gather_meta(a, dim, index):
    """``out[i][j][k] = a[index[i][j][k]][j][k]`` (for ``dim == 0``; likewise for others). ``index`` has the
    dims of ``a`` and no larger sizes outside ``dim``; the output has ``index``'s shape and ``a``'s dtype."""
    _gather_meta("prims::gather", a, dim, index)
    return meta_empty(index.shape, a.dtype)


def _scatter_meta(op, a, dim, index, src, allowed=ALL):
    _check_input(op, "a", a, allowed)
    d = _gather_meta(op, a, dim, index)
    check_tensor(op, "src", src)
    _same_dtype(op, a, "src", src)
    _check_same_ndim(op, a, "src", src)
    for k, (n, m) in enumerate(zip(_sizes(index), _sizes(src))):
        if n > m:
            raise ValueError(f"{op}: 'index' has size {n} in dim {k} but 'src' has only {m}")
    same_device(op, [a, index, src])
    return d


def scatter_meta(a, dim, index, src):
    """A copy of ``a`` with ``out[index[i][j]][j] = src[i][j]`` (for ``dim == 0``). Shapes as ``gather`` and
    ``index`` no larger than ``src``; with duplicate targets the last write (in ``index``'s order) wins."""
    _scatter_meta("prims::scatter", a, dim, index, src)
    return meta_empty(a.shape, a.dtype)


def scatter_add_meta(a, dim, index, src):
    """A copy of ``a`` with ``out[index[i][j]][j] += src[i][j]`` (for ``dim == 0``); duplicates accumulate."""
    _scatter_meta("prims::scatter_add", a, dim, index, src)
    return meta_empty(a.shape, a.dtype)


def scatter_reduce_meta(a, dim, index, src, reduce, include_self):
    """A copy of ``a`` where every element targeted by ``index`` becomes the ``reduce`` (sum, prod, mean, amax,
    amin) of the ``src`` values scattered to it, and of its own value when ``include_self``. Untargeted
    elements are kept. ``mean`` floors on integer dtypes; ``amax``/``amin`` propagate NaN and need a real
    dtype; the others take any numeric dtype."""
    op = "prims::scatter_reduce"
    if reduce not in SCATTER_REDUCES:
        raise ValueError(f"{op}: argument 'reduce' must be one of {', '.join(SCATTER_REDUCES)}, got {reduce!r}")
    _scatter_meta(op, a, dim, index, src, REAL if reduce in ("amax", "amin") else NUMERIC)
    return meta_empty(a.shape, a.dtype)


def _replaced_dim(a, d, n) -> tuple:
    shape = list(a.shape)
    if shape:
        shape[d] = n
    return tuple(shape)


def index_select_meta(a, dim, index):
    """``a`` restricted to the positions ``index`` (0-dim or 1-dim) along ``dim``; that dim gets
    ``index.numel()`` entries (a 0-dim ``a`` needs one index and stays 0-dim)."""
    op = "prims::index_select"
    _check_input(op, "a", a)
    d = wrap_dim(op, dim, a.ndim)
    _check_index(op, "index", index)
    _check_vector(op, "index", index)
    if a.ndim == 0 and index.numel() != 1:
        raise ValueError(f"{op}: a 0-dim 'a' needs exactly one index, got {index.numel()}")
    same_device(op, [a, index])
    return meta_empty(_replaced_dim(a, d, index.numel()), a.dtype)


def _index_source_meta(op, a, dim, index, source):
    _check_input(op, "a", a)
    d = wrap_dim(op, dim, a.ndim)
    _check_index(op, "index", index)
    _check_vector(op, "index", index)
    check_tensor(op, "source", source)
    _same_dtype(op, a, "source", source)
    expected = list(_sizes(a))
    expected[d] = index.numel()
    if list(_sizes(source)) != expected:
        raise ValueError(
            f"{op}: 'source' must have shape {expected} for 'a' of shape {list(a.shape)} and {index.numel()} "
            f"indices along dim {d}, got {list(source.shape)}"
        )
    same_device(op, [a, index, source])
    return d


def _check_alpha(op: str, dtype, alpha):
    if isinstance(alpha, bool) and dtype is not _dtype.bool_:
        raise TypeError(f"{op}: a bool 'alpha' needs a bool tensor, got {dtype.name}")
    if isinstance(alpha, complex) and not dtype.is_complex:
        raise TypeError(f"{op}: a complex 'alpha' needs a complex tensor, got {dtype.name}")
    if isinstance(alpha, float) and not (dtype.is_floating_point or dtype.is_complex):
        raise TypeError(f"{op}: a floating 'alpha' needs a floating or complex tensor, got {dtype.name}")


def index_add_meta(a, dim, index, source, alpha):
    """A copy of ``a`` with ``out[..., index[j], ...] += alpha * source[..., j, ...]`` along ``dim``
    (duplicates accumulate). ``source`` is ``a``'s shape with ``index.numel()`` entries along ``dim``."""
    op = "prims::index_add"
    _index_source_meta(op, a, dim, index, source)
    _check_alpha(op, a.dtype, alpha)
    return meta_empty(a.shape, a.dtype)


def index_copy_meta(a, dim, index, source):
    """A copy of ``a`` with ``out[..., index[j], ...] = source[..., j, ...]`` along ``dim`` (for duplicate
    indices the last ``j`` wins). Shapes as ``index_add``."""
    _index_source_meta("prims::index_copy", a, dim, index, source)
    return meta_empty(a.shape, a.dtype)


def _check_value(op: str, dtype, value, name="value"):
    if isinstance(value, complex) and not dtype.is_complex:
        raise TypeError(f"{op}: a complex '{name}' needs a complex tensor, got {dtype.name}")


def index_fill_meta(a, dim, index, value):
    """A copy of ``a`` with every position ``index`` (0-dim or 1-dim; negative wraps) along ``dim`` set to
    ``value`` (cast to ``a.dtype``)."""
    op = "prims::index_fill"
    _check_input(op, "a", a)
    wrap_dim(op, dim, a.ndim)
    _check_index(op, "index", index)
    _check_vector(op, "index", index)
    _check_value(op, a.dtype, value)
    same_device(op, [a, index])
    return meta_empty(a.shape, a.dtype)


def broadcast_shapes(op: str, shapes, what="indices") -> tuple:
    """NumPy broadcasting of ``shapes``; ValueError when they do not broadcast."""
    ndim = max((len(s) for s in shapes), default=0)
    out = [1] * ndim
    for s in shapes:
        for i, n in enumerate(s, ndim - len(s)):
            if out[i] == 1:
                out[i] = n
            elif n not in (1, out[i]):
                raise ValueError(f"{op}: {what} of shapes {[list(x) for x in shapes]} cannot be broadcast together")
    return tuple(out)


def _indexed_shape(op: str, a, indices) -> tuple:
    """Validate ``indices`` for ``a`` and return the shape of ``a[indices]`` (NumPy advanced indexing)."""
    if len(indices) > a.ndim:
        raise ValueError(f"{op}: too many indices ({len(indices)}) for a tensor with {a.ndim} dims")
    dims = []
    for k, t in enumerate(indices):
        if t is None:
            continue
        check_tensor(op, "indices", t)
        if t.dtype not in INDEX_DTYPES:
            raise TypeError(
                f"{op}: argument 'indices' must hold int64 or int32 tensors (or None), got {t.dtype.name} at {k}"
            )
        dims.append(k)
    if not dims:
        return tuple(a.shape)
    bshape = broadcast_shapes(op, [indices[k].shape for k in dims])
    rest = [n for k, n in enumerate(a.shape) if k not in dims]
    if dims == list(range(dims[0], dims[-1] + 1)):
        return tuple(a.shape[: dims[0]]) + bshape + tuple(a.shape[dims[-1] + 1 :])
    return bshape + tuple(rest)


def index_meta(a, indices):
    """``a[indices]`` with NumPy/PyTorch advanced indexing: entry k indexes dim k (``None``: the whole dim;
    missing trailing entries too); the int64/int32 index tensors broadcast together and their broadcast shape
    replaces the indexed dims, in place when those dims are adjacent, else in front. Negative indices wrap.
    Bool masks are not accepted (canonical ops convert them)."""
    op = "prims::index"
    _check_input(op, "a", a)
    shape = _indexed_shape(op, a, indices)
    same_device(op, [a, *(t for t in indices if t is not None)])
    return meta_empty(shape, a.dtype)


def _strip_leading_ones(shape) -> tuple:
    shape = tuple(shape)
    while shape and shape[0] == 1:
        shape = shape[1:]
    return shape


def index_put_meta(a, indices, values, accumulate):
    """A copy of ``a`` with ``out[indices] = values`` (``+=`` when ``accumulate``, duplicates then adding up;
    otherwise the last write wins). ``indices`` as in ``index``; ``values`` has ``a``'s dtype and broadcasts to
    the indexed shape (leading size-1 dims of ``values`` are ignored)."""
    op = "prims::index_put"
    _check_input(op, "a", a)
    target = _indexed_shape(op, a, indices)
    check_tensor(op, "values", values)
    _same_dtype(op, a, "values", values)
    vshape = _strip_leading_ones(values.shape)
    if len(vshape) > len(target) or broadcast_shapes(op, [vshape, target], "values and index result") != target:
        raise ValueError(
            f"{op}: 'values' of shape {list(values.shape)} cannot be broadcast to the indexed shape {list(target)}"
        )
    same_device(op, [a, values, *(t for t in indices if t is not None)])
    return meta_empty(a.shape, a.dtype)


def _check_mask(op: str, a, mask):
    check_tensor(op, "mask", mask)
    check_dtype(op, "mask", mask, BOOL)
    if mask.shape != a.shape:
        raise ValueError(f"{op}: 'mask' has shape {list(mask.shape)} but 'a' has {list(a.shape)}")


def masked_select_meta(a, mask):
    """The elements of ``a`` where the bool ``mask`` (same shape) is True, as a 1-D tensor in C order."""
    op = "prims::masked_select"
    _check_input(op, "a", a)
    _check_mask(op, a, mask)
    same_device(op, [a, mask])


def masked_scatter_meta(a, mask, source):
    """A copy of ``a`` whose elements where ``mask`` (bool, same shape) is True take the leading elements of
    ``source`` (same dtype, any shape, read in C order); ValueError if ``source`` has too few."""
    op = "prims::masked_scatter"
    _check_input(op, "a", a)
    _check_mask(op, a, mask)
    check_tensor(op, "source", source)
    _same_dtype(op, a, "source", source)
    same_device(op, [a, mask, source])
    return meta_empty(a.shape, a.dtype)


def nonzero_meta(a):
    """The int64 coordinates ``[n, ndim]`` of ``a``'s nonzero elements (NaN is nonzero), in C order."""
    _check_input("prims::nonzero", "a", a)


def take_meta(a, index):
    """``a`` flattened (C order), read at ``index`` (negative wraps); the output has ``index``'s shape."""
    op = "prims::take"
    _check_input(op, "a", a)
    _check_index(op, "index", index)
    same_device(op, [a, index])
    return meta_empty(index.shape, a.dtype)


def put_meta(a, index, source, accumulate):
    """A copy of ``a`` with its flattened elements at ``index`` (negative wraps) set to ``source`` (same dtype
    and number of elements as ``index``); ``accumulate`` adds instead, else the last duplicate wins."""
    op = "prims::put"
    _check_input(op, "a", a)
    _check_index(op, "index", index)
    check_tensor(op, "source", source)
    _same_dtype(op, a, "source", source)
    if source.numel() != index.numel():
        raise ValueError(f"{op}: 'source' has {source.numel()} elements but 'index' has {index.numel()}")
    same_device(op, [a, index, source])
    return meta_empty(a.shape, a.dtype)


def searchsorted_meta(sorted_sequence, self, right):
    """For each value of ``self``, the int64 insertion position in ``sorted_sequence`` along its last dim
    (``right``: after equal entries). The sequence is 1-D, or its leading dims equal ``self``'s. Same real
    dtype for both; torch's binary search, so a NaN value goes to the end."""
    op = "prims::searchsorted"
    _check_input(op, "sorted_sequence", sorted_sequence, REAL)
    _check_input(op, "self", self, REAL)
    _same_dtype(op, sorted_sequence, "self", self)
    seq = sorted_sequence
    if seq.ndim == 0:
        raise ValueError(f"{op}: 'sorted_sequence' must have at least one dim")
    if seq.ndim > 1 and (self.ndim != seq.ndim or tuple(self.shape[:-1]) != tuple(seq.shape[:-1])):
        raise ValueError(
            f"{op}: the leading dims of 'sorted_sequence' {list(seq.shape)} and 'self' {list(self.shape)} must match"
        )
    same_device(op, [seq, self])
    return meta_empty(self.shape, _dtype.int64)


def bincount_meta(self, weights, minlength):
    """Counts of each value of the 1-D non-negative integer tensor ``self``: length ``max(self) + 1`` (at least
    ``minlength``). int64 counts, or sums of ``weights`` (same shape): float32 for float32 weights, float64
    otherwise, as torch."""
    op = "prims::bincount"
    _check_input(op, "self", self, INT)
    if self.ndim != 1:
        raise ValueError(f"{op}: argument 'self' must be 1-dim, got {self.ndim} dims")
    if weights is not None:
        _check_input(op, "weights", weights, REAL | BOOL)
        if weights.shape != self.shape:
            raise ValueError(f"{op}: 'weights' has shape {list(weights.shape)} but 'self' has {list(self.shape)}")
        same_device(op, [self, weights])
    if minlength < 0:
        raise ValueError(f"{op}: argument 'minlength' must be non-negative, got {minlength}")


def histc_meta(self, bins, min, max):  # noqa: A002 - schema names
    """Histogram of ``self`` with ``bins`` equal bins over ``[min, max]`` (``min == max``: the data's range;
    still equal: ``[min - 1, max + 1]``), as ``self``'s dtype. Values outside (and NaN) are ignored; the last
    bin includes ``max``. Floating dtypes."""
    op = "prims::histc"
    _check_input(op, "self", self, FLOAT)
    if bins <= 0:
        raise ValueError(f"{op}: argument 'bins' must be positive, got {bins}")
    for name, v in (("min", min), ("max", max)):
        if isinstance(v, complex):
            raise TypeError(f"{op}: argument '{name}' must be real, got {v!r}")
        if not math.isfinite(v):
            raise ValueError(f"{op}: range of [{min}, {max}] is not finite")
    if min > max:
        raise ValueError(f"{op}: max must be larger than min, got min={min}, max={max}")
    return meta_empty((bins,), self.dtype)


def repeat_interleave_meta(repeats):
    """``[0] * repeats[0] + [1] * repeats[1] + ...`` as a 1-D tensor of ``repeats``' dtype (int64 or int32,
    1-D, non-negative)."""
    op = "prims::repeat_interleave"
    _check_index(op, "repeats", repeats)
    if repeats.ndim != 1:
        raise ValueError(f"{op}: argument 'repeats' must be 1-dim, got {repeats.ndim} dims")


INDEXING_PRIMS = [
    ("gather(Tensor a, int dim, Tensor index) -> Tensor", gather_meta, ()),
    ("scatter(Tensor a, int dim, Tensor index, Tensor src) -> Tensor", scatter_meta, ("nondeterministic_bitwise",)),
    (
        "scatter_add(Tensor a, int dim, Tensor index, Tensor src) -> Tensor",
        scatter_add_meta,
        ("nondeterministic_bitwise",),
    ),
    (
        "scatter_reduce(Tensor a, int dim, Tensor index, Tensor src, str reduce, bool include_self) -> Tensor",
        scatter_reduce_meta,
        ("nondeterministic_bitwise",),
    ),
    ("index_select(Tensor a, int dim, Tensor index) -> Tensor", index_select_meta, ()),
    (
        "index_add(Tensor a, int dim, Tensor index, Tensor source, Scalar alpha) -> Tensor",
        index_add_meta,
        ("nondeterministic_bitwise",),
    ),
    (
        "index_copy(Tensor a, int dim, Tensor index, Tensor source) -> Tensor",
        index_copy_meta,
        ("nondeterministic_bitwise",),
    ),
    ("index_fill(Tensor a, int dim, Tensor index, Scalar value) -> Tensor", index_fill_meta, ()),
    ("index(Tensor a, Tensor?[] indices) -> Tensor", index_meta, ()),
    (
        "index_put(Tensor a, Tensor?[] indices, Tensor values, bool accumulate) -> Tensor",
        index_put_meta,
        ("nondeterministic_bitwise",),
    ),
    ("masked_select(Tensor a, Tensor mask) -> Tensor", masked_select_meta, ("dynamic_output_shape",)),
    ("masked_scatter(Tensor a, Tensor mask, Tensor source) -> Tensor", masked_scatter_meta, ()),
    ("nonzero(Tensor a) -> Tensor", nonzero_meta, ("dynamic_output_shape",)),
    ("take(Tensor a, Tensor index) -> Tensor", take_meta, ()),
    (
        "put(Tensor a, Tensor index, Tensor source, bool accumulate) -> Tensor",
        put_meta,
        ("nondeterministic_bitwise",),
    ),
    ("searchsorted(Tensor sorted_sequence, Tensor self, bool right) -> Tensor", searchsorted_meta, ()),
    (
        "bincount(Tensor self, Tensor? weights, int minlength) -> Tensor",
        bincount_meta,
        ("dynamic_output_shape",),
    ),
    ("histc(Tensor self, int bins, Scalar min, Scalar max) -> Tensor", histc_meta, ()),
    ("repeat_interleave(Tensor repeats) -> Tensor", repeat_interleave_meta, ("dynamic_output_shape",)),
]


def _define():
    for schema, meta, tags in INDEXING_PRIMS:
        define_prim(schema, meta, tags=tags)


_define()
