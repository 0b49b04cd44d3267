"""In-place writes into views: ``prims::copy_to`` on a view rewrites its base's history.

Every in-place canonical op and every decomposition that builds a result piecewise
(``out = full(...); copy_to(out[region], x)``) ends in ``prims::copy_to``. When its
destination is a view, the gradient must reach the base the view was made from
(PyTorch's ``CopySlices``): the base gets a node that routes the gradient of the
written region to the source and the rest to the base's previous history, and the
view becomes a view of the new base.
"""

from __future__ import annotations

import numpy as np

from .. import ops
from .._tensor import Tensor
from .graph import Node, gradient_edge, requires_grad, set_history
from .layer import LIBRARY, TensorMeta, check_inplace, fit_gradient, record, run_below, strip

_VIEW_OF_LEAF = "a view of a leaf Variable that requires grad is being used in an in-place operation."


def _storage_positions(t: Tensor) -> np.ndarray:
    """The storage position of each element of ``t`` (an int64 array of ``t.shape``)."""
    pos = np.full((), t.storage_offset(), dtype=np.int64)
    for size, stride in zip(t.shape, t.stride()):
        pos = pos[..., None] + np.arange(size, dtype=np.int64) * stride
    return pos


def region_index(base: Tensor, view: Tensor) -> Tensor:
    """For each element of ``view``: its flat index in ``base`` (an int64 CPU tensor of ``view.shape``)."""
    base_pos = _storage_positions(base).reshape(-1)
    view_pos = _storage_positions(view)
    order = np.argsort(base_pos, kind="stable")
    found = order[np.searchsorted(base_pos[order], view_pos)] if base_pos.size else np.zeros(view_pos.shape, np.int64)
    return _from_numpy(found.astype(np.int64))


def _from_numpy(array: np.ndarray) -> Tensor:
    from .._factories import from_numpy

    return from_numpy(np.ascontiguousarray(array))


class CopySlices(Node):
    """The base after a write into one of its views: the region's gradient goes to the source."""

    def __init__(self, edges: tuple, index: Tensor, base: TensorMeta, source: TensorMeta, view_shape):
        super().__init__("CopySlices", edges)
        self.index, self.base, self.source, self.view_shape = index, base, source, list(view_shape)

    def apply(self, grad_outputs: list) -> tuple:
        c = ops.canonical
        g = grad_outputs[0]
        flat = c.reshape(self.index, [-1]).to(g.device)
        g_flat = c.reshape(g, [-1])
        g_base = (
            c.reshape(c.index_fill(g_flat, 0, flat, 0), list(self.base.shape)) if self.next_functions[0][0] else None
        )
        g_src = None
        if self.next_functions[1][0] is not None:
            g_src = fit_gradient(c.reshape(c.index_select(g_flat, 0, flat), self.view_shape), self.source)
        return (g_base, g_src)


class ViewOfBase(Node):
    """A view whose base was rewritten: its gradient lands in its region of the base."""

    def __init__(self, edges: tuple, index: Tensor, base: TensorMeta):
        super().__init__("AsStridedBackward0", edges)
        self.index, self.base = index, base

    def apply(self, grad_outputs: list) -> tuple:
        c = ops.canonical
        g = grad_outputs[0]
        flat = c.reshape(self.index, [-1]).to(g.device)
        zeros = c.zeros([self.base.numel()], dtype=g.dtype, device=g.device)
        return (c.reshape(c.index_add(zeros, 0, flat, c.reshape(g, [-1])), list(self.base.shape)),)


def _copy_to_formula(ctx, g):
    return (ops.canonical.zeros_like(g), g)


def copy_to_kernel(keyset, a, b):
    """The Autograd kernel of ``prims::copy_to``."""
    op = ops.prims.copy_to.default
    check_inplace(op, (a, b))
    base = a._base
    if base is None:
        out = run_below(op, keyset, (a, b))
        record(op, (a, b), out, _copy_to_formula, (), False)
        return out
    source_grad = requires_grad(b)
    if not source_grad and not requires_grad(base) and not requires_grad(a):
        out = run_below(op, keyset, (a, b))
        strip(out, (a, b))
        return out
    ag = base._ag
    if ag is not None and ag.requires_grad and ag.grad_fn is None:
        raise RuntimeError(_VIEW_OF_LEAF)
    out = run_below(op, keyset, (a, b))
    index = region_index(base, a)
    edges = (gradient_edge(base) or (None, 0), gradient_edge(b) if source_grad else (None, 0))
    node = CopySlices(edges, index, TensorMeta(base), TensorMeta(b), a.shape)
    set_history(base, node, 0)
    set_history(a, ViewOfBase(((node, 0),), index, TensorMeta(base)), 0)
    return out


LIBRARY.impl(ops.prims.copy_to.default, copy_to_kernel, "Autograd", with_keyset=True)
