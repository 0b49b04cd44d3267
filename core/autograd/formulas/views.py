"""Derivatives of the view and shape prims.

Reshaping views reshape the gradient back; views that select elements (slices,
diagonals, windows, ``as_strided``) scatter it back with ``index_add`` over the flat
positions the view takes, found by applying the same view to ``arange``, which also
sums the gradient of elements a view repeats (``unfold`` windows that overlap).
"""

from __future__ import annotations

from ..._dtype import int64
from ..._ops import lookup as _lookup
from ..layer import NONDIFFERENTIABLE
from ._common import C, P, formula, node_names


def _reshape_back(ctx, g):
    return (C.reshape(g, list(ctx.args[0].shape)),)


for _name in ("collapse_view", "expand_dims", "squeeze", "split_dim", "view_of"):
    formula(f"prims::{_name}", save=())(_reshape_back)


@formula("prims::transpose", save=())
def _transpose(ctx, g):
    perm = ctx.args[1]
    inverse = [0] * len(perm)
    for i, p in enumerate(perm):
        inverse[p] = i
    return (C.permute(g, inverse),)


@formula("prims::broadcast_in_dim", save=())
def _broadcast_in_dim(ctx, g):
    a, shape, bdims = ctx.args[0], ctx.args[1], ctx.args[2]
    keep = set(bdims)
    summed = [d for d in range(len(shape)) if d not in keep]
    summed += [d for i, d in enumerate(bdims) if a.shape[i] == 1 and shape[d] != 1]
    if summed:
        g = C.sum.dim_IntList(g, sorted(summed), True)
    return (C.reshape(g, list(a.shape)),)


def _scatter_back(prim_name: str):
    def fn(ctx, g):
        a, *rest = ctx.args
        positions = C.reshape(C.arange(a.numel(), dtype=int64), list(a.shape))
        index = getattr(P, prim_name)(positions, *rest)
        flat = C.zeros([a.numel()], dtype=g.dtype, device=g.device)
        index = C.reshape(index, [-1]).to(g.device)
        return (C.reshape(C.index_add(flat, 0, index, C.reshape(g, [-1])), list(a.shape)),)

    formula(f"prims::{prim_name}", save=())(fn)


for _name in ("slice", "slice_in_dim", "diagonal", "unfold"):
    _scatter_back(_name)


def _dense(shape, stride) -> bool:
    """Whether ``shape``/``stride`` lay the elements out contiguously (size-1 dims' strides ignored)."""
    expected = 1
    for n, st in zip(reversed(list(shape)), reversed(list(stride))):
        if n != 1 and st != expected:
            return False
        expected *= n
    return True


@formula("prims::as_strided", save=())
def _as_strided(ctx, g):
    a, size, stride, offset = ctx.args
    a_offset, a_stride = a.storage_offset(), a.stride()
    numel = 1
    for n in size:
        numel *= n
    if offset == a_offset and numel == a.numel() and _dense(a.shape, a_stride) and _dense(size, stride):
        return (C.reshape(g, list(a.shape)), None)  # the same elements in the same order: a reshape
    span = max(
        [offset + sum((s - 1) * st for s, st in zip(size, stride)) + 1 if 0 not in size else 0]
        + [a_offset + sum((s - 1) * st for s, st in zip(a.shape, a_stride)) + 1 if a.numel() else 0]
    )
    storage = C.arange(span, dtype=int64)
    out_positions = C.reshape(P.as_strided(storage, list(size), list(stride), offset), [-1])
    a_positions = C.reshape(P.as_strided(storage, list(a.shape), list(a_stride), a_offset), [-1])
    flat = C.zeros([span], dtype=g.dtype, device=g.device)
    flat = C.index_add(flat, 0, out_positions.to(g.device), C.reshape(g, [-1]))
    return (C.reshape(C.index_select(flat, 0, a_positions.to(g.device)), list(a.shape)), None)


@formula("prims::view_as_real", save=())
def _view_as_real(ctx, g):
    return (C.view_as_complex(C.contiguous(g)),)


@formula("prims::view_as_complex", save=())
def _view_as_complex(ctx, g):
    return (C.view_as_real(g),)


NONDIFFERENTIABLE.update({"prims::resize"})


def _reshaped_back(ctx, g):
    """A canonical reshaping op (flatten, view, reshape): the gradient reshaped to the input's shape."""
    return (C.reshape(g, list(ctx.args[0].shape)),)


# One node for the canonical op (PyTorch's ViewBackward0 / ReshapeAliasBackward0) instead of its
# decomposition's argument handling and ``prims::as_strided`` node, whose gradient has to read strides.
for _name in ("flatten.using_ints", "view", "reshape"):
    formula(_name, save=())(_reshaped_back)
    node_names()[_lookup(_name)] = "ViewBackward0"
