"""Helpers shared by the formula modules."""

from __future__ import annotations

import math

from ... import ops
from ..layer import _NODE_NAMES, register_formula

C = ops.canonical
P = ops.prims
PI = math.pi


def conj(t):
    """Complex conjugate (the identity on real tensors)."""
    return C.conj_physical(t) if t.dtype.is_complex else t


def prim(name: str):
    """The overload of ``prims::name``."""
    return getattr(P, name).default


def formula(
    name: str, *, save=None, save_out: bool = False, materialize: bool = True, nondifferentiable=(), applies=None
):
    """Decorator: register the decorated function as the derivative formula of ``name`` (a qualified op name)."""

    def register(fn):
        register_formula(
            name,
            fn,
            save=save,
            save_out=save_out,
            materialize=materialize,
            nondifferentiable=nondifferentiable,
            applies=applies,
        )
        return fn

    return register


def zeros_of(meta):
    """Zeros with a TensorMeta's (or tensor's) shape, dtype and device."""
    return C.zeros(list(meta.shape), dtype=meta.dtype, device=meta.device)


def unsqueeze_to(g, dims, ndim: int):
    """Put back the reduced dimensions ``dims`` (None: all) of ``g`` as size-1 dimensions."""
    if dims is None:
        dims = range(ndim)
    dims = sorted(d % ndim if ndim else 0 for d in dims)
    for d in dims:
        g = C.unsqueeze(g, d)
    return g


_GRIDS: dict = {}


def _cached(key, build):
    grid = _GRIDS.get(key)
    if grid is None:
        grid = build()
        if grid.numel() <= 1 << 16 and len(_GRIDS) < 256:
            _GRIDS[key] = grid
    return grid


def iota(n: int, dtype, device):
    """``arange(n)`` of ``dtype`` on ``device``: cached for small ``n`` (formulas only read it)."""
    return _cached(("iota", n, dtype, device), lambda: C.arange(n, dtype=dtype, device=device))


def row_starts(rows: int, step: int, dtype, device):
    """``arange(rows) * step`` as a column (rows, 1): where each row of a flattened tensor starts (cached)."""
    return _cached(
        ("starts", rows, step, dtype, device),
        lambda: C.reshape(C.arange(0, rows * step, step, dtype=dtype, device=device), [rows, 1]),
    )


def node_names() -> dict:
    """The table of node names by op (an op registered here may take PyTorch's name for its node)."""
    return _NODE_NAMES
