"""Derivatives of the scan prims (cumulative sum, product, log-sum-exp)."""

from __future__ import annotations

import math

from ._common import C, conj, formula


def _reverse_cumsum(g, dim: int):
    return C.flip(C.cumsum(C.flip(g, [dim]), dim), [dim])


@formula("prims::cumsum", save=())
def _cumsum(ctx, g):
    a, dim = ctx.args[0], ctx.args[1]
    if a.ndim == 0:
        return (g,)
    return (_reverse_cumsum(g, dim),)


@formula("prims::cumprod", save=(0,), save_out=True)
def _cumprod(ctx, g):
    a, dim = ctx.args[0], ctx.args[1]
    if a.ndim == 0:
        return (g,)
    y = ctx.out
    # sum_{j >= i} g_j y_j / a_i; exact where a has no zeros (PyTorch's general case handles zeros separately)
    safe = C.where(a == 0, 1.0, a)
    return (_reverse_cumsum(g * conj(y), dim) / conj(safe),)


@formula("prims::logcumsumexp", save=(0,), save_out=True)
def _logcumsumexp(ctx, g):
    a, dim = ctx.args[0], ctx.args[1]
    if a.ndim == 0:
        return (g,)
    y = ctx.out

    def rev_lcse(t):
        return C.flip(C.logcumsumexp(C.flip(t, [dim]), dim), [dim])

    pos = C.where(g > 0, C.log(C.where(g > 0, g, 1.0)), -math.inf)
    neg = C.where(g < 0, C.log(C.where(g < 0, -g, 1.0)), -math.inf)
    return (C.exp(a + rev_lcse(pos - y)) - C.exp(a + rev_lcse(neg - y)),)
