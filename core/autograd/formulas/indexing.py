"""Derivatives of the indexing prims (gather/scatter/index ops), sorting and selection."""

from __future__ import annotations

from ..layer import NONDIFFERENTIABLE
from ._common import C, P, formula, zeros_of


@formula("prims::gather", save=(2,))
def _gather(ctx, g):
    a, dim, index = ctx.args
    return (C.scatter_add(zeros_of(a), dim, index, g), None)


@formula("prims::index_select", save=(2,))
def _index_select(ctx, g):
    a, dim, index = ctx.args
    return (C.index_add(zeros_of(a), dim, index, g), None)


@formula("prims::take", save=(1,))
def _take(ctx, g):
    a, index = ctx.args
    flat = C.zeros([a.numel()], dtype=g.dtype, device=g.device)
    flat = C.index_add(flat, 0, C.reshape(index, [-1]), C.reshape(g, [-1]))
    return (C.reshape(flat, list(a.shape)), None)


@formula("prims::index", save=())
def _index(ctx, g):
    a, indices = ctx.args
    return (C.index_put(zeros_of(a), indices, g, True),)


@formula("prims::masked_select", save=(1,))
def _masked_select(ctx, g):
    a, mask = ctx.args
    mask = C.expand(mask, list(a.shape)) if tuple(mask.shape) != tuple(a.shape) else mask
    return (C.masked_scatter(zeros_of(a), mask, g), None)


@formula("prims::index_add", save=(2,))
def _index_add(ctx, g):
    a, dim, index, source, alpha = ctx.args
    gs = C.index_select(g, dim, index) if source.ndim else C.reshape(C.index_select(g, dim, index), [])
    return (g, None, gs * alpha if alpha != 1 else gs)


@formula("prims::index_copy", save=(2,))
def _index_copy(ctx, g):
    a, dim, index, source = ctx.args
    gs = C.index_select(g, dim, index)
    return (C.index_fill(g, dim, index, 0), None, C.reshape(gs, list(source.shape)))


@formula("prims::index_fill", save=(2,))
def _index_fill(ctx, g):
    a, dim, index, value = ctx.args
    return (C.index_fill(g, dim, index, 0), None)


@formula("prims::index_put", save=())
def _index_put(ctx, g):
    a, indices, values, accumulate = ctx.args
    ga = g if accumulate else C.index_put(g, indices, C.zeros([], dtype=g.dtype, device=g.device), False)
    return (ga, C.index(g, indices) if ctx.needs_input_grad[2] else None)


@formula("prims::put", save=(1,))
def _put(ctx, g):
    a, index, source, accumulate = ctx.args
    ga = g if accumulate else C.put(g, index, C.zeros_like(C.reshape(C.take(g, index), [-1])), False)
    return (ga, None, C.reshape(C.take(g, index), list(source.shape)))


def _into(values, meta):
    """``values`` (the shape of an index) placed at the start of zeros shaped like ``meta`` (scatter's src)."""
    if tuple(values.shape) == tuple(meta.shape):
        return values
    out = zeros_of(meta).to(values.dtype)
    out[tuple(slice(0, s) for s in values.shape)] = values
    return out


@formula("prims::scatter", save=(2,))
def _scatter(ctx, g):
    a, dim, index, src = ctx.args
    return (C.scatter(g, dim, index, 0), None, _into(C.gather(g, dim, index), src))


@formula("prims::scatter_add", save=(2,))
def _scatter_add(ctx, g):
    a, dim, index, src = ctx.args
    return (g, None, _into(C.gather(g, dim, index), src))


@formula("prims::masked_scatter", save=(1,))
def _masked_scatter(ctx, g):
    a, mask, source = ctx.args
    mask = C.expand(mask, list(g.shape)) if tuple(mask.shape) != tuple(g.shape) else mask
    taken = C.masked_select(g, mask)
    rest = source.numel() - taken.numel()
    flat = C.cat([taken, C.zeros([rest], dtype=g.dtype, device=g.device)]) if rest else taken
    return (C.masked_fill(g, mask, 0), None, C.reshape(flat, list(source.shape)))


@formula("prims::scatter_reduce", save_out=True)
def _scatter_reduce(ctx, g):
    """PyTorch's ``scatter_reduce_backward`` for sum, prod, mean, amax and amin.

    amax/amin share the gradient evenly among the elements equal to the result; prod divides
    the result by each factor, with the product of the others where a single factor is 0.
    """
    a, dim, index, src, reduce, include_self = ctx.args
    result = ctx.out
    if reduce == "sum":
        return (g if include_self else C.scatter(g, dim, index, 0), None, _into(C.gather(g, dim, index), src))
    whole = src
    if tuple(src.shape) != tuple(index.shape):  # only src's first index.shape elements take part
        src = src[tuple(slice(0, n) for n in index.shape)]
    if reduce == "mean":
        counts = C.ones_like(g) if include_self else C.zeros_like(g)
        counts = C.scatter_add(counts, dim, index, C.ones_like(src))
        counts = C.where(counts == 0, C.ones_like(counts), counts)
        grad_self, grad_src = g / counts, C.gather(g / counts, dim, index)
    elif reduce in ("amax", "amin"):
        value = C.gather(result, dim, index)
        self_hit = (a == result).to(g.dtype)
        if not include_self:
            self_hit = C.scatter(self_hit, dim, index, 0)
        src_hit = (src == value).to(g.dtype)
        shared = g / C.scatter_add(self_hit, dim, index, src_hit)
        grad_self, grad_src = self_hit * shared, src_hit * C.gather(shared, dim, index)
    elif reduce == "prod":
        self_nonzero = C.where(a == 0, C.ones_like(a), a)
        grad_self = g * P.scatter_reduce(self_nonzero, dim, index, src, "prod", include_self) / self_nonzero
        src_zero = src == 0
        zeros_per_slot = C.gather(C.scatter_add(C.zeros_like(a), dim, index, src_zero.to(a.dtype)), dim, index)
        single_zero = C.logical_and(src_zero, zeros_per_slot == 1)
        others = P.scatter_reduce(a, dim, index, C.where(single_zero, C.ones_like(src), src), "prod", include_self)
        grad_src = C.where(
            single_zero,
            C.gather(g * others, dim, index),
            C.gather(g * result, dim, index) / C.where(src_zero, C.ones_like(src), src),
        )
    else:
        raise NotImplementedError(f"the derivative for 'scatter_reduce' with reduce={reduce!r} is not implemented.")
    if not include_self:
        grad_self = C.scatter(grad_self, dim, index, 0)
    return (grad_self, None, _into(grad_src, whole))


def _values_indices(dim_of, reduced: bool):
    """Formula of an op returning (values, indices): scatter the values' gradient to the indices."""

    def fn(ctx, grads):
        a = ctx.args[0]
        gv = grads[0]
        indices = ctx.outputs[1]
        dim = dim_of(ctx.args)
        if a.ndim == 0:
            return (gv,)
        if reduced and indices.ndim < a.ndim:
            gv, indices = C.unsqueeze(gv, dim), C.unsqueeze(indices, dim)
        return (C.scatter_add(zeros_of(a), dim, indices, gv),)

    return fn


formula("prims::sort", save=(), save_out=True)(_values_indices(lambda args: args[1], False))
formula("prims::topk", save=(), save_out=True)(_values_indices(lambda args: args[2], False))
formula("prims::kthvalue", save=(), save_out=True)(_values_indices(lambda args: args[2], True))
formula("prims::mode", save=(), save_out=True)(_values_indices(lambda args: args[1], True))
formula("prims::cummax", save=(), save_out=True)(_values_indices(lambda args: args[1], False))
formula("prims::cummin", save=(), save_out=True)(_values_indices(lambda args: args[1], False))

NONDIFFERENTIABLE.update(
    {
        "prims::nonzero",
        "prims::unique",
        "prims::unique_consecutive",
        "prims::repeat_interleave",
    }
)
