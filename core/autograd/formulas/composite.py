"""Formulas registered for canonical ops whose decomposition is slower or less exact to differentiate.

PyTorch's ``derivatives.yaml`` formulas: one node instead of the decomposition's several,
and gradients computed from the saved output (no re-exponentiation).
"""

from __future__ import annotations

from ._common import C, formula, unsqueeze_to


@formula("_softmax", save=(), save_out=True)
def _softmax(ctx, g):
    dim = ctx.args[1]
    y = ctx.out
    if g.dtype != y.dtype:
        g = C.to(g, y.dtype)
    return (y * (g - C.sum(g * y, [dim], keepdim=True)),)


@formula("_log_softmax", save=(), save_out=True)
def _log_softmax(ctx, g):
    dim = ctx.args[1]
    y = ctx.out
    if g.dtype != y.dtype:
        g = C.to(g, y.dtype)
    return (g - C.exp(y) * C.sum(g, [dim], keepdim=True),)


@formula("logsumexp", save=(0,), save_out=True)
def _logsumexp(ctx, g):
    x, dims, keepdim = ctx.args
    y = ctx.out
    if x.ndim == 0:
        return (g,)
    dims = list(dims) if dims else list(range(x.ndim))
    if not keepdim:
        g, y = unsqueeze_to(g, dims, x.ndim), unsqueeze_to(y, dims, x.ndim)
    return (g * C.exp(x - y),)


formula("softmax.int", save=(), save_out=True)(_softmax)
formula("log_softmax.int", save=(), save_out=True)(_log_softmax)
