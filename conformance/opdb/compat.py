"""Op database entries: the ops added for PyTorch compatibility (view copies, ATen internals, bilinear).

Oracles are NumPy formulas written here: the ``*_copy`` ops against the NumPy view they copy
(the result must alias nothing), ``bilinear`` against ``einsum``, ``_chunk_cat`` against padding
and concatenation, ``_segment_reduce`` against per-segment reductions.
"""

from __future__ import annotations

import math

import numpy as np
import opweave as ow

from . import register
from ._cases import TA, Idx, K, S, T, Val, entry
from ._core import ALL, COMPLEX, FLOAT

TOL = {"float16": (5e-3, 5e-3), "bfloat16": (3e-2, 3e-2), "float32": (2e-5, 2e-5), "float64": (1e-10, 1e-10)}
I64, BOOL = ow.int64, ow.bool


def E(name, oracle, cases, dtypes=ALL, tol=None, **kw):
    """One entry with this family's tolerances (``tol`` overrides some)."""
    info = entry(name, oracle, cases, dtypes, **kw)
    info.tolerances = {**TOL, **(tol or {})}
    return info


def _split(a, sizes, dim=0):
    return np.split(a, np.cumsum(sizes)[:-1], axis=dim)


def _split_size(a, size, dim=0):
    n = a.shape[dim]
    return _split(a, [min(size, n - s) for s in range(0, n, size)] or [0], dim)


def _chunk(a, chunks, dim=0):
    size = math.ceil(a.shape[dim] / chunks)
    return _split_size(a, size, dim)


def _unfold(a, dim, size, step):
    windows = np.lib.stride_tricks.sliding_window_view(a, size, axis=dim)
    index = [slice(None)] * a.ndim
    index[dim] = slice(None, None, step)
    return windows[tuple(index)]


def _chunk_cat(tensors, dim, chunks):
    parts = []
    for a in tensors:
        c = math.ceil(a.shape[dim] / chunks)
        pad = [(0, 0)] * a.ndim
        pad[dim] = (0, c * chunks - a.shape[dim])
        padded = np.pad(a, pad)
        parts.append(padded.reshape(a.shape[:dim] + (chunks, -1)))
    return np.concatenate(parts, dim + 1)


def _segment_sum(data, reduce, lengths=None, axis=0):
    starts = np.concatenate([[0], np.cumsum(lengths)])
    out = [data[starts[k] : starts[k + 1]].sum(0) for k in range(len(lengths))]
    return np.stack(out)


VIEW_COPIES = [
    E("transpose_copy.int", lambda a, d0, d1: np.swapaxes(a, d0, d1), [K(TA((3, 4)), 0, 1), K(TA((2, 3, 4), T), 2, 0)]),
    E("t_copy", lambda a: a.T, [K(TA((3, 4), T)), K(TA((5,)))]),
    E("permute_copy", lambda a, p: np.transpose(a, p), [K(TA((2, 3, 4), S), [2, 0, 1])]),
    E("unsqueeze_copy", lambda a, d: np.expand_dims(a, d), [K(TA((3, 4)), 1), K(TA(()), 0)]),
    E("squeeze_copy", lambda a: np.squeeze(a), [K(TA((3, 1, 4))), K(TA((1, 1)))]),
    E("squeeze_copy.dim", lambda a, d: np.squeeze(a, d) if a.shape[d] == 1 else a, [K(TA((3, 1, 4)), 1)]),
    E("squeeze_copy.dims", lambda a, d: np.squeeze(a, tuple(d)), [K(TA((1, 3, 1), T), [0, 2])]),
    E("view_copy", lambda a, s: a.reshape(s), [K(TA((3, 4), T), [4, 3]), K(TA((2, 6)), [-1])]),
    E("expand_copy", lambda a, s: np.broadcast_to(a, s), [K(TA((3, 1)), [2, 3, 4])]),
    E("diagonal_copy", lambda a, o=0, d1=0, d2=1: np.diagonal(a, o, d1, d2), [K(TA((3, 4)), 1), K(TA((2, 3, 3), S))]),
    E("unfold_copy", _unfold, [K(TA((7,)), 0, 3, 2), K(TA((2, 6), T), 1, 2, 1)]),
    E("select_copy.int", lambda a, d, i: np.take(a, i, d), [K(TA((3, 4)), 1, 2)]),
    E("slice_copy.Tensor", lambda a, d, s, e, st: a[s:e:st], [K(TA((5, 4)), 0, 1, 4, 2)]),
    E("alias_copy", lambda a: a, [K(TA((3, 4), S))]),
    E("detach_copy", lambda a: a, [K(TA((3, 4)))]),
    E("view_as_real_copy", lambda a: np.stack([a.real, a.imag], -1), [K(TA((3, 2)))], COMPLEX),
    E("split_copy.Tensor", _split_size, [K(TA((5, 3)), 2), K(TA((3, 4), T), 3, 1)]),
    E("split_with_sizes_copy", _split, [K(TA((5, 3)), [1, 4]), K(TA((3, 4), S), [2, 2], 1)]),
    E("unbind_copy.int", lambda a, d=0: [np.take(a, i, d) for i in range(a.shape[d])], [K(TA((3, 4)), 1)]),
    E("unsafe_split.Tensor", _split_size, [K(TA((5, 3)), 2)]),
    E("unsafe_split_with_sizes", _split, [K(TA((5, 3)), [2, 3])]),
    E("unsafe_chunk", _chunk, [K(TA((5, 3)), 2), K(TA((4, 6), T), 3, 1)]),
]

ATEN_INTERNALS = [
    E(
        "bilinear",
        lambda x1, x2, w, b=None: np.einsum("...i,oij,...j->...o", x1, w, x2) + (0 if b is None else b),
        [K(TA((4, 3)), TA((4, 5)), TA((2, 3, 5)), TA((2,))), K(TA((2, 3, 3), T), TA((2, 3, 2)), TA((4, 3, 2)))],
        FLOAT,
        tol={"float16": (2e-2, 2e-2), "bfloat16": (1e-1, 1e-1)},  # two roundings of sums of products
    ),
    E(
        "native_dropout_backward",
        lambda g, m, s: g * m * s,
        [K(TA((3, 4)), Val(np.arange(12).reshape(3, 4) % 3 != 0, dtype=BOOL), 1.5)],
        FLOAT,
    ),
    E(
        "_chunk_cat",
        _chunk_cat,
        [K([TA((2, 5, 3)), TA((2, 3, 3))], 1, 2), K([TA((4, 2), T), TA((3, 2))], 0, 3)],
        FLOAT,
    ),
    E(
        "_unsafe_masked_index",
        lambda x, m, idx, fill: np.where(m, x[np.clip(idx[0], -x.shape[0], x.shape[0] - 1)], fill),
        [K(TA((4, 3)), Val([[True], [False], [True], [True], [False]], dtype=BOOL), [Idx((5,), 4)], 2.5)],
        FLOAT,
    ),
    E(
        "_segment_reduce",
        _segment_sum,
        [K(TA((5, 2)), "sum", lengths=Val([2, 0, 3], dtype=I64))],
        FLOAT,
    ),
]

register(*VIEW_COPIES, *ATEN_INTERNALS)
