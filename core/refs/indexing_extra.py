"""Indexing canonical ops not covered by ``indexing``/``sorting``: index_reduce, unique_dim_consecutive,
combinations, ``where(condition)`` and ``nonzero_numpy``.

``index_reduce`` is ``scatter_reduce`` with the 1-D ``index`` spread along ``dim``
(so integer ``mean`` floors, as in PyTorch). ``unique_dim_consecutive`` always
returns the inverse indices and counts (PyTorch computes them whatever the flags
say). ``combinations`` builds its index table from the input's length alone.
"""

from __future__ import annotations

import itertools

from .. import _dtype
from .._ops import define, prims
from ._tensor_utils import cast, full, reshape
from ._utils import define_with_variants, wrap_dim

_INDEX_REDUCTIONS = ("prod", "mean", "amax", "amin")


# -- index_reduce ----------------------------------------------------------


def index_reduce(self, dim, index, source, reduce, include_self=True):
    """Reduce the slices ``source.select(dim, i)`` into ``self.select(dim, index[i])`` with ``reduce``.

    ``reduce`` is prod, mean, amax or amin; ``include_self=False`` leaves ``self``'s own values out of the
    reduction at the targeted positions (untargeted positions keep them). Integer ``mean`` rounds down.
    """
    op = "index_reduce"
    if reduce not in _INDEX_REDUCTIONS:
        raise ValueError(f"{op}: expected argument 'reduce' to be one of prod, mean, amax or amin but got {reduce!r}")
    if self.dtype is _dtype.bool_ or self.dtype.is_complex:
        raise TypeError(f"{op}: not implemented for {self.dtype.name} inputs ('self')")
    if index.dtype not in (_dtype.int64, _dtype.int32):
        raise TypeError(f"{op}: expected dtype int32/int64 for argument 'index', got {index.dtype.name}")
    if source.dtype is not self.dtype:
        raise TypeError(
            f"{op}: 'self' ({self.dtype.name}) and 'source' ({source.dtype.name}) must have the same scalar type"
        )
    if index.ndim > 1:
        raise ValueError(f"{op}: argument 'index' is supposed to be a vector, but got {index.ndim} dims")
    d = wrap_dim(op, dim, self.ndim)
    x = reshape(self, (1,)) if self.ndim == 0 else self
    src = reshape(source, (1,)) if source.ndim == 0 and self.ndim == 0 else source
    if src.ndim != x.ndim or any(src.shape[i] != x.shape[i] for i in range(x.ndim) if i != d):
        raise ValueError(
            f"{op}: 'source' shape must match 'self' shape, excluding the specified dimension. Got self.shape = "
            f"{list(self.shape)} source.shape = {list(source.shape)}"
        )
    if index.numel() != src.shape[d]:
        raise ValueError(
            f"{op}: number of indices ({index.numel()}) should be equal to source.size(dim) ({src.shape[d]}), "
            f"for dim: {d}"
        )
    idx = reshape(cast(index, _dtype.int64), (index.numel(),))
    spread = prims.broadcast_in_dim(idx, list(src.shape), [d])
    out = prims.scatter_reduce(x, d, spread, src, reduce, bool(include_self))
    return reshape(out, self.shape)


# -- unique_dim_consecutive --------------------------------------------------


def unique_dim_consecutive(self, dim, return_inverse=False, return_counts=False):
    """Collapse runs of equal consecutive slices along ``dim``: ``(values, inverse, counts)``.

    The inverse indices and counts are always computed (as PyTorch does), whatever the flags say.
    """
    op = "unique_dim_consecutive"
    if self.ndim == 0:
        raise ValueError(f"{op}: dim {dim} specified but 'self' has no dimensions")
    d = wrap_dim(op, dim, self.ndim)
    if self.numel() == 0 and self.shape[d] != 0:
        raise ValueError(f"{op}: there are 0 sized dimensions, and they aren't selected, so unique cannot be applied")
    return prims.unique_consecutive(self, True, True, d)


# -- combinations ------------------------------------------------------------


def combinations(self, r=2, with_replacement=False):
    """The length-``r`` combinations of the elements of the 1-D ``self`` (``itertools.combinations`` order),
    as rows of an ``(n, r)`` tensor; ``with_replacement`` allows repeated elements. ``r=0`` gives an empty
    1-D tensor."""
    op = "combinations"
    if self.ndim != 1:
        raise ValueError(f"{op}: expects a 1D vector 'self', but got shape {list(self.shape)}")
    if r < 0:
        raise ValueError(f"{op}: expects a non-negative number for argument 'r', but got {r}")
    if r == 0:
        return full((0,), 0, self.dtype, self.device)
    pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    rows = list(pick(range(self.shape[0]), r))
    from .._factories import tensor

    table = tensor([i for row in rows for i in row], dtype=_dtype.int64)
    if self.device.type != "cpu":
        table = prims.device_put(table, self.device)
    return reshape(prims.index_select(self, 0, table), (len(rows), r))


# -- where(condition), nonzero_numpy ---------------------------------------


def _nonzero_columns(condition):
    x = reshape(condition, (1,)) if condition.ndim == 0 else condition
    coords = prims.nonzero(x)
    return [prims.clone(prims.squeeze(prims.slice_in_dim(coords, i, i + 1, 1, 1), [1])) for i in range(x.ndim)]


def where_condition(condition):
    """``nonzero(condition, as_tuple=True)``: one int64 tensor of indices per dim (a 0-dim input counts as 1-D)."""
    return _nonzero_columns(condition)


def nonzero_numpy(self):
    """NumPy's ``nonzero``: one int64 tensor of indices per dim (a 0-dim input counts as 1-D)."""
    return _nonzero_columns(self)


# -- definitions -----------------------------------------------------------


def _define():
    define_with_variants(
        "index_reduce(Tensor self, int dim, Tensor index, Tensor source, str reduce, *, bool include_self=True) "
        "-> Tensor",
        index_reduce,
        tags=("nondeterministic_bitwise",),
    )
    define(
        "unique_dim_consecutive(Tensor self, int dim, bool return_inverse=False, bool return_counts=False) "
        "-> (Tensor, Tensor, Tensor)",
        unique_dim_consecutive,
        tags=("dynamic_output_shape",),
    )
    define("combinations(Tensor self, int r=2, bool with_replacement=False) -> Tensor", combinations)
    define("where(Tensor condition) -> Tensor[]", where_condition, tags=("dynamic_output_shape",))
    define("nonzero_numpy(Tensor self) -> Tensor[]", nonzero_numpy, tags=("dynamic_output_shape",))


_define()
