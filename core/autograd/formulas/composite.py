"""Formulas registered for canonical ops whose decomposition is slower or less exact to differentiate.

PyTorch's ``derivatives.yaml`` formulas: one node instead of the decomposition's several,
and gradients computed from the saved output (no re-exponentiation).
"""

from __future__ import annotations

from ... import _dtype
from ...refs._nn_utils import reduction_enum
from ._common import C, conj, formula, iota, unsqueeze_to


@formula("_softmax", save=(), save_out=True)
def _softmax(ctx, g):
    dim = ctx.args[1]
    y = ctx.out
    if g.dtype != y.dtype:
        g = C.to(g, y.dtype)
    return (C.mul.Tensor(y, C.sub.Tensor(g, C.sum.dim_IntList(C.mul.Tensor(g, y), [dim], True))),)


@formula("_log_softmax", save=(), save_out=True)
def _log_softmax(ctx, g):
    dim = ctx.args[1]
    y = ctx.out
    if g.dtype != y.dtype:
        g = C.to(g, y.dtype)
    return (C.sub.Tensor(g, C.mul.Tensor(C.exp(y), C.sum.dim_IntList(g, [dim], True))),)


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


def _linear_saves(needs) -> tuple:
    """linear reads the weight for the input's gradient and the input for the weight's."""
    return tuple(i for i, other in ((0, 1), (1, 0)) if needs[other])


@formula("linear", save=_linear_saves)
def _linear(ctx, g):
    """y = x Wᵀ + b: gx = g conj(W), gW = gᵀ conj(x) over the flattened batch, gb = g summed over the batch.

    Matrices (the common case) take two ``mm`` and one ``sum``, as PyTorch's ``AddmmBackward0``.
    """
    x, w, b = ctx.args
    need = ctx.needs_input_grad
    vector_weight = w.ndim == 1
    g2 = C.unsqueeze(g, -1) if vector_weight else g
    gx = gw = gb = None
    if need[0]:
        w2 = C.unsqueeze(w, 0) if vector_weight else w
        gx = C.mm(g2, conj(w2)) if g2.ndim == 2 else C.matmul(g2, conj(w2))
    if need[1]:
        out_features = g2.shape[-1]
        rows = g2 if g2.ndim == 2 else C.reshape(g2, [-1, out_features])
        xs = x if x.ndim == 2 else C.reshape(x, [-1, x.shape[-1]])
        gw = C.mm(C.transpose(rows, 0, 1), conj(xs))
        if vector_weight:
            gw = C.reshape(gw, [-1])
    if need[2]:
        batch = g.ndim - b.ndim
        gb = C.sum.dim_IntList(g, list(range(batch))) if batch > 0 else g
    return (gx, gw, gb)


@formula("relu", save=(), save_out=True)
def _relu(ctx, g):
    """``threshold_backward``: the gradient where the output is not 0 (positive or NaN), 0 elsewhere.

    A product with the mask rather than a ``where``: selecting per element costs several times
    more on CPUs (a branch per element); a NaN or infinite ``g`` where the output is 0 gives NaN.
    """
    return (C.mul(g, C.ne(ctx.out, 0)),)


def _cross_entropy_covered(self, target, weight=None, reduction=1, ignore_index=-100, label_smoothing=0.0) -> bool:
    """Class-index targets without label smoothing and no gradient wanted for the weight."""
    return (
        not target.dtype.is_floating_point
        and not label_smoothing
        and (weight is None or not weight.requires_grad)
        and self.ndim > 0
        and self.dtype.is_floating_point
    )


@formula("cross_entropy_loss", save=(0, 1, 2), applies=_cross_entropy_covered)
def _cross_entropy(ctx, g):
    """nll_loss(log_softmax(x)) in one node: softmax(x) c - onehot(t) c with c = w[t] g / (Σw for the mean)."""
    x, target, weight, reduction, ignore_index, _ = ctx.args
    reduction = reduction_enum("cross_entropy_loss", reduction)
    cdim = 0 if x.ndim == 1 else 1
    if weight is None:
        return (_unweighted_cross_entropy_grad(x, target, g, reduction, ignore_index, cdim), None, None)
    probs = C.softmax(x, cdim)
    ignore = target == ignore_index
    safe = C.where(ignore, C.zeros_like(target), target).to(x.device)
    w = C.ones(list(target.shape), dtype=x.dtype, device=x.device)
    if weight is not None:
        w = C.take(weight.to(x.dtype), safe)
    w = C.where(ignore.to(x.device), C.zeros_like(w), w)
    g = g.to(x.dtype)
    coef = w * g
    if reduction == 1:
        coef = coef / C.sum(w)
    coef = C.unsqueeze(coef, cdim)
    onehot = C.scatter(C.zeros_like(x), cdim, C.unsqueeze(safe, cdim), coef)
    return (probs * coef - onehot, None, None)


def _unweighted_cross_entropy_grad(x, target, g, reduction: int, ignore_index: int, cdim: int):
    """(softmax(x) - onehot(t)) c, c = g [t ≠ ignore_index] (/ their count for the mean), without a scatter.

    The one-hot is the targets compared with a cached int64 class grid (an ignored target
    matches no class) and stays boolean (the difference with the float probabilities promotes
    it); the per-target scale selects ``g`` (over the count) where the target counts, so no op
    only converts.
    """
    classes = x.shape[cdim]
    t = target if target.device == x.device else target.to(x.device)
    grid = iota(classes, _dtype.int64, x.device)
    if cdim == 1 and x.ndim > 2:
        grid = C.reshape(grid, [classes] + [1] * (x.ndim - 2))
    t = C.unsqueeze(t, cdim)  # the targets along the class dim: the one-hot and the scale broadcast from it
    onehot = C.eq.Tensor(t, grid)
    valid = C.ne.Scalar(t, ignore_index)
    if g.dtype is not x.dtype:
        g = g.to(x.dtype)
    if reduction == 1:
        g = C.div.Tensor(g, C.sum.default(valid))
    else:
        g = C.unsqueeze(g, cdim) if g.ndim else g
    scale = C.where.ScalarOther(valid, g, 0.0)  # ignored targets get 0 even when every one is (0/0), as PyTorch
    return C.mul.Tensor(C.sub.Tensor(C.softmax.int(x, cdim), onehot), scale)
