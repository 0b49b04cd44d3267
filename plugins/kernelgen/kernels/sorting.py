"""Sorting prims: ``sort``, ``topk``, ``kthvalue``, ``mode``, ``unique``, ``unique_consecutive`` and
``searchsorted`` (generated, see ``codegen.sort``).

Rows are bitonic-sorted as (key, index) pairs, ties broken by index, so the
result is the stable sort the CPU kernel computes (NaN largest, -0.0 equal to
0.0), indices included. ``topk`` and ``kthvalue`` read the first ``k`` / the
``k``-th sorted position; ``mode`` scans each sorted row for its longest run.
``unique``/``unique_consecutive`` of elements (``dim`` None, or a 1-D tensor)
flag group starts, number them with an inclusive scan and read the group count
back to size the output. float16 sorts where the dialect computes it (CUDA), on float keys.
Distinct *slices* (``dim`` given on an N-D tensor) run through the CPU fallback.
"""

from __future__ import annotations

import numpy as np
import opweave

from ..codegen import sort as gen
from ..codegen.common import MAX_RANK
from ._common import buf, dims, empty, has_dtype, i64, kernel, launch, native_half, program_kernels, runtime_of
from .scans import rows_of, scan_into

LOCAL = 64
BLOCK = 2 * LOCAL  # pairs a work group sorts in local memory
_ORDERED = {"bool", "uint8", "int8", "int16", "int32", "int64", "bfloat16", "float32", "float64"}


def _usable(*ts) -> bool:
    return all(
        (t.dtype.name in _ORDERED or native_half(t.dtype, t.device)) and has_dtype(t.dtype, t.device)
        and t.ndim <= MAX_RANK
        for t in ts
    )  # fmt: skip


def _kernels(rt, dtype: str) -> dict:
    return program_kernels(rt, ("sort", dtype), lambda: gen.program(rt.dialect, dtype, LOCAL))


def _key_dtype(dtype):
    return opweave.float32 if dtype in (opweave.bfloat16, opweave.float16) else dtype


class _Sorted:
    """The rows of ``a`` along ``d`` as sorted (key, index) pairs in scratch buffers (``P`` per row)."""

    def __init__(self, a, d: int, descending: bool, sort: bool = True):
        self.a, self.rt = a, runtime_of(a)
        self.ks = _kernels(self.rt, a.dtype.name)
        self.oshape, self.ast, self.n, self.astep = rows_of(a, d)
        self.rows = int(np.prod(self.oshape))
        P = 1
        while P < self.n:
            P <<= 1
        self.P = P
        total = -(-self.rows * P // BLOCK) * BLOCK
        self.keys = empty([total], _key_dtype(a.dtype), a.device)
        self.idxs = empty([total], opweave.int64, a.device)
        self._launch(
            "sort_load", total, buf(a), i64(a.storage_offset()), dims(self.ast), i64(self.astep),
            dims(self.oshape), np.int32(len(self.oshape)), i64(self.rows), i64(self.n), i64(P), i64(total),
        )  # fmt: skip
        if sort:
            self._sort(total, np.int32(bool(descending)))

    def _launch(self, name: str, n: int, *args, pairs: bool = True) -> None:
        if pairs:
            args = (buf(self.keys), buf(self.idxs)) + args
        launch(self.rt, self.ks[name], n, *args)

    def _sort(self, total: int, desc) -> None:
        P, half = self.P, total // 2
        self._launch("sort_block", half, i64(P), i64(2), i64(min(P, BLOCK)), desc)
        k = 2 * BLOCK
        while k <= P:
            j = k // 2
            while j >= BLOCK:
                self._launch("sort_step", half, i64(P), i64(k), i64(j), desc, i64(half))
                j //= 2
            self._launch("sort_block", half, i64(P), i64(k), i64(k), desc)
            k *= 2

    def store(self, values, indices, d: int, count: int, first: int) -> None:
        """Write sorted positions ``first .. first + count`` of every row into ``values``/``indices`` along ``d``."""
        total = self.rows * count
        if total == 0:
            return
        if values.ndim == self.a.ndim:
            _, ost, _, ostep = rows_of(values, d)
        else:  # the sorted dim was removed (kthvalue)
            ost, ostep = list(values.stride()), 0
        self._launch(
            "sort_store", total, buf(values), buf(indices), i64(values.storage_offset()), dims(ost), i64(ostep),
            buf(self.a), i64(self.a.storage_offset()), dims(self.ast), i64(self.astep), dims(self.oshape),
            np.int32(len(self.oshape)), buf(self.idxs), i64(self.P), i64(count), i64(first), i64(total),
            pairs=False,
        )  # fmt: skip


def _dim(a, dim) -> int:
    return dim % a.ndim if a.ndim else 0


def _pair(shape, a):
    return empty(shape, a.dtype, a.device), empty(shape, opweave.int64, a.device)


def _take_sorted(a, dim, descending: bool, count: int, first: int, shape):
    values, indices = _pair(shape, a)
    d = _dim(a, dim)
    if values.numel() == 0:
        return values, indices
    _Sorted(a, d, descending).store(values, indices, d, count, first)
    return values, indices


@kernel("sort")
def sort(a, dim, descending, stable):
    """Stable sort along ``dim`` (NaN largest) and the indices that sort it."""
    if not _usable(a):
        return NotImplemented
    n = a.shape[_dim(a, dim)] if a.ndim else 1
    return _take_sorted(a, dim, descending, n, 0, a.shape)


@kernel("topk")
def topk(a, k, dim, largest, sorted):  # noqa: A002 - schema name
    """The first ``k`` of a stable sort along ``dim`` (descending when ``largest``)."""
    if not _usable(a):
        return NotImplemented
    shape = list(a.shape)
    if shape:
        shape[_dim(a, dim)] = k
    return _take_sorted(a, dim, largest, k, 0, shape)


@kernel("kthvalue")
def kthvalue(a, k, dim):
    """Position ``k - 1`` of a stable ascending sort along ``dim`` (which is removed)."""
    if not _usable(a):
        return NotImplemented
    d = _dim(a, dim)
    return _take_sorted(a, dim, False, 1, k - 1, [n for i, n in enumerate(a.shape) if i != d])


@kernel("mode")
def mode(a, dim):
    """The longest run of equal values of each sorted row (the smallest on ties) and its last index."""
    if not _usable(a):
        return NotImplemented
    d = _dim(a, dim)
    values, indices = _pair([n for i, n in enumerate(a.shape) if i != d], a)
    if values.numel() == 0:
        return values, indices
    s = _Sorted(a, d, False)
    s._launch(
        "mode_rows", s.rows, buf(values), buf(indices), i64(values.storage_offset()), dims(values.stride()),
        buf(a), i64(a.storage_offset()), dims(s.ast), i64(s.astep), dims(s.oshape), np.int32(len(s.oshape)),
        buf(s.keys), buf(s.idxs), i64(s.P), i64(s.rows), i64(s.n), pairs=False,
    )  # fmt: skip
    return values, indices


def _flat(a):
    """``a`` as a 1-D tensor on the device (a view when its elements are evenly spaced, else a copy)."""
    shape = [n for n in a.shape if n != 1]
    strides = [s for n, s in zip(a.shape, a.stride()) if n != 1]
    if all(strides[i] == strides[i + 1] * shape[i + 1] for i in range(len(shape) - 1)):
        return a.as_strided([a.numel()], [strides[-1] if strides else 1], a.storage_offset())
    dense = []
    step = 1
    for n in reversed(a.shape):
        dense.insert(0, step)
        step *= max(n, 1)
    return opweave.ops.prims.copy_strided(a, dense).as_strided([a.numel()], [1], 0)


def _unique(a, dim, return_inverse: bool, return_counts: bool, sort_first: bool):
    if not _usable(a) or (dim is not None and a.ndim != 1):
        return NotImplemented
    n = a.numel()
    inv_shape = a.shape if dim is None else (n,)
    if n == 0:
        none = empty([0], opweave.int64, a.device)
        inverse = empty(inv_shape if return_inverse else [0], opweave.int64, a.device)
        return empty([0], a.dtype, a.device), inverse, none
    flat = _flat(a)
    s = _Sorted(flat, 0, False, sort=sort_first)
    flags = empty([n], opweave.int64, a.device)
    s._launch("uniq_flags", n, buf(flags), buf(s.keys), i64(n), pairs=False)
    groups = empty([n], opweave.int64, a.device)
    scan_into("cumsum", groups, None, flags, 0)
    count = np.zeros(1, np.int64)
    s.rt.copy_to_host(count, buf(groups), (n - 1) * 8)
    u = int(count[0])
    out = empty([u], a.dtype, a.device)
    firsts = empty([u], opweave.int64, a.device)
    inverse = empty(inv_shape if return_inverse else [0], opweave.int64, a.device)
    s._launch(
        "uniq_write", n, buf(out), buf(inverse if return_inverse else firsts), buf(firsts), buf(flat),
        i64(flat.storage_offset()), i64(flat.stride()[0]), buf(s.idxs), buf(flags), buf(groups), i64(n),
        np.int32(bool(return_inverse)), pairs=False,
    )  # fmt: skip
    counts = empty([u] if return_counts else [0], opweave.int64, a.device)
    if return_counts:
        s._launch("uniq_counts", u, buf(counts), buf(firsts), i64(u), i64(n), pairs=False)
    return out, inverse, counts


@kernel("unique")
def unique(a, sorted, return_inverse, return_counts, dim):  # noqa: A002 - schema name
    """The sorted distinct elements of ``a`` (flattened, or a 1-D ``a`` along its dim), inverse and counts."""
    return _unique(a, dim, return_inverse, return_counts, True)


@kernel("unique_consecutive")
def unique_consecutive(a, return_inverse, return_counts, dim):
    """``a`` (flattened, or a 1-D ``a`` along its dim) with runs of equal elements collapsed, inverse and counts."""
    return _unique(a, dim, return_inverse, return_counts, False)


@kernel("searchsorted")
def searchsorted(sorted_sequence, self, right):
    """The insertion position of each value of ``self`` in the last dim of ``sorted_sequence`` (binary search)."""
    seq = sorted_sequence
    if not _usable(seq, self) or self.device != seq.device:
        return NotImplemented
    out = empty(self.shape, opweave.int64, self.device)
    total = out.numel()
    if total == 0:
        return out
    sst = [0] * self.ndim if seq.ndim == 1 else list(seq.stride()[:-1]) + [0]
    rt = runtime_of(self)
    launch(
        rt, _kernels(rt, self.dtype.name)["searchsorted"], total, buf(out), buf(seq), i64(seq.storage_offset()),
        dims(sst), i64(seq.stride()[-1]), i64(seq.shape[-1]), buf(self), i64(self.storage_offset()),
        dims(self.stride()), dims(self.shape), np.int32(self.ndim), i64(total), np.int32(bool(right)),
    )  # fmt: skip
    return out
