"""``opweave.autograd.Function``: custom ops with a hand-written backward, PyTorch's API."""

from __future__ import annotations

import functools

from .._tensor import Tensor
from .grad_mode import is_grad_enabled, no_grad
from .graph import FREED_MESSAGE, Node, SavedTensor, gradient_edge, requires_grad, set_history
from .layer import TensorMeta, fit_gradient, is_differentiable_dtype


class FunctionCtx:
    """The ``ctx`` of a custom Function: what forward (or setup_context) leaves for backward."""

    def __init__(self):
        self._saved = ()
        self._released = False
        self.needs_input_grad: tuple = ()
        self.non_differentiable: set = set()
        self.dirty: set = set()
        self.materialize_grads = True
        self._name = "Function"

    def save_for_backward(self, *tensors) -> None:
        """Keep tensors (or None) for backward; they are checked against in-place changes when read."""
        for t in tensors:
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(
                    f"save_for_backward can only save variables, but argument is of type {type(t).__name__}"
                )
        self._saved = tuple(None if t is None else SavedTensor(t, self._name, i) for i, t in enumerate(tensors))

    @property
    def saved_tensors(self) -> tuple:
        """The tensors given to ``save_for_backward``."""
        if self._released:
            raise RuntimeError(FREED_MESSAGE)
        return tuple(None if s is None else s.unpack() for s in self._saved)

    def mark_non_differentiable(self, *tensors) -> None:
        """Outputs that never require grad (indices, masks)."""
        self.non_differentiable.update(id(t) for t in tensors)

    def mark_dirty(self, *tensors) -> None:
        """Inputs that forward modified in place."""
        self.dirty.update(id(t) for t in tensors)

    def set_materialize_grads(self, value: bool) -> None:
        """Whether backward receives zeros (True, default) or None for outputs without a gradient."""
        self.materialize_grads = value


class FunctionNode(Node):
    """The graph node of one ``Function.apply`` call."""

    def __init__(self, cls, ctx: FunctionCtx, edges: tuple, metas: tuple, n_args: int, output_metas: tuple):
        super().__init__(f"{cls.__name__}Backward", edges, len(output_metas))
        self.cls, self.ctx, self.metas, self.n_args, self.output_metas = cls, ctx, metas, n_args, output_metas

    def apply(self, grad_outputs: list) -> tuple:
        from .. import ops

        if self.ctx._released:
            raise RuntimeError(FREED_MESSAGE)
        grads = []
        for g, m in zip(grad_outputs, self.output_metas):
            if g is None and m is not None and self.ctx.materialize_grads:
                g = ops.canonical.zeros(list(m.shape), dtype=m.dtype, device=m.device)
            grads.append(g)
        result = self.cls.backward(self.ctx, *grads)
        if not isinstance(result, tuple):
            result = (result,)
        if len(result) != self.n_args:
            raise RuntimeError(
                f"function {self.name()} returned an incorrect number of gradients (expected {self.n_args}, "
                f"got {len(result)})"
            )
        out = []
        for (edge, meta), g in zip(zip(self.next_functions, self.metas), result):
            if edge[0] is None or g is None:
                out.append(None)
                continue
            if not isinstance(g, Tensor):
                raise TypeError(f"function {self.name()} returned a gradient of type {type(g).__name__}")
            out.append(fit_gradient(g, meta))
        return tuple(out)

    def release(self) -> None:
        self.ctx._released = True
        self.ctx._saved = ()


class Function:
    """Base class of custom differentiable operations.

    Subclasses define ``forward`` (either ``forward(ctx, *args)`` or ``forward(*args)`` with a
    separate ``setup_context(ctx, inputs, output)``) and ``backward(ctx, *grad_outputs)``
    returning one gradient (or None) per forward argument; call them with ``Cls.apply(*args)``.
    """

    @staticmethod
    def forward(*args, **kwargs):
        """Compute the outputs (runs with grad mode off)."""
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        """Save what backward needs (only when ``forward`` does not take ``ctx``)."""
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        """Gradients of the forward arguments, given those of the outputs."""
        raise NotImplementedError(
            "You must implement either the backward or vjp method for your custom autograd.Function "
            "to use it with backward mode AD."
        )

    vjp = backward

    @classmethod
    def apply(cls, *args, **kwargs):
        """Run forward and record a node whose backward is ``cls.backward``."""
        ctx = FunctionCtx()
        ctx._name = f"{cls.__name__}Backward"
        new_style = cls.setup_context is not Function.setup_context
        with no_grad():
            output = cls.forward(*args, **kwargs) if new_style else cls.forward(ctx, *args, **kwargs)
        if new_style:
            cls.setup_context(ctx, args, output)
        outputs = output if isinstance(output, tuple) else (output,)
        edges, metas, needs = [], [], []
        for a in args:
            edge = gradient_edge(a) if isinstance(a, Tensor) and requires_grad(a) and is_grad_enabled() else None
            edges.append(edge or (None, 0))
            metas.append(TensorMeta(a) if isinstance(a, Tensor) else None)
            needs.append(edge is not None)
        ctx.needs_input_grad = tuple(needs)
        if not any(needs):
            return output
        fixed = []
        for o in outputs:
            if isinstance(o, Tensor) and any(o is a for a in args) and id(o) not in ctx.dirty:
                with no_grad():
                    o = ops_alias(o)
            fixed.append(o)
        output_metas = tuple(
            TensorMeta(o) if isinstance(o, Tensor) and id(o) not in ctx.non_differentiable else None for o in fixed
        )
        node = FunctionNode(cls, ctx, tuple(edges), tuple(metas), len(args), output_metas)
        for nr, o in enumerate(fixed):
            if isinstance(o, Tensor) and id(o) not in ctx.non_differentiable and is_differentiable_dtype(o.dtype):
                set_history(o, node, nr)
        return tuple(fixed) if isinstance(output, tuple) else fixed[0]


def ops_alias(t: Tensor) -> Tensor:
    """A new tensor object viewing ``t`` (an output that is an input must not rewire the input's history)."""
    from .. import ops

    return ops.canonical.alias(t)


def once_differentiable(fn):
    """Decorate a ``backward`` that is not itself differentiable: it runs with grad mode off."""

    @functools.wraps(fn)
    def wrapper(ctx, *args):
        with no_grad():
            return fn(ctx, *args)

    return wrapper
