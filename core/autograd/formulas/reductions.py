"""Derivatives of the reduction prims."""

from __future__ import annotations

from ..layer import NONDIFFERENTIABLE
from ._common import C, conj, formula, unsqueeze_to


@formula("prims::sum", save=())
def _sum(ctx, g):
    inp, dims = ctx.args[0], ctx.args[1]
    return (C.expand(unsqueeze_to(g, dims, inp.ndim), list(inp.shape)),)


@formula("prims::var", save=(0,))
def _var(ctx, g):
    x, dims, correction = ctx.args[0], ctx.args[1], ctx.args[2]
    reduced = list(range(x.ndim)) if dims is None else list(dims)
    n = 1
    for d in reduced:
        n *= x.shape[d]
    mean = C.mean(x, reduced, keepdim=True) if reduced else x
    return (unsqueeze_to(g, dims, x.ndim) * (2.0 / max(n - correction, 0)) * (x - mean),)


def _amax_amin(ctx, g):
    x, dims = ctx.args[0], ctx.args[1]
    y = unsqueeze_to(ctx.out, dims, x.ndim)
    mask = x == y
    reduced = list(range(x.ndim)) if dims is None else list(dims)
    count = C.sum.dim_IntList(mask, reduced, True) if reduced else C.ones_like(y)
    return (C.where(mask, unsqueeze_to(g, dims, x.ndim) / count, 0.0),)


formula("prims::amax", save=(0,), save_out=True)(_amax_amin)
formula("prims::amin", save=(0,), save_out=True)(_amax_amin)


@formula("prims::prod", save=(0,))
def _prod(ctx, g):
    x, dims = ctx.args[0], ctx.args[1]
    reduced = list(range(x.ndim)) if dims is None else sorted(d % max(x.ndim, 1) for d in dims)
    if not reduced or x.numel() == 0:
        return (C.expand(unsqueeze_to(g, dims, x.ndim), list(x.shape)),)
    keep = [d for d in range(x.ndim) if d not in reduced]
    moved = C.permute(x, keep + reduced)
    flat = C.reshape(moved, [moved.shape[i] for i in range(len(keep))] + [-1])
    ones = C.ones_like(C.narrow(flat, -1, 0, 1))
    before = C.cumprod(C.cat([ones, C.narrow(flat, -1, 0, flat.shape[-1] - 1)], -1), -1)
    rev = C.flip(flat, [-1])
    after = C.flip(C.cumprod(C.cat([ones, C.narrow(rev, -1, 0, flat.shape[-1] - 1)], -1), -1), [-1])
    others = C.reshape(before * after, list(moved.shape))
    inverse = [0] * x.ndim
    for i, d in enumerate(keep + reduced):
        inverse[d] = i
    others = C.permute(others, inverse)
    return (unsqueeze_to(g, dims, x.ndim) * conj(others),)


NONDIFFERENTIABLE.update({"prims::argmax", "prims::argmin", "prims::all", "prims::any", "prims::xor_sum"})
