"""The autograd side of ``Tensor``: ``requires_grad``, ``grad``, ``grad_fn``, ``backward``, hooks...

Attached to :class:`opweave.Tensor` by :func:`install` (the Tensor class itself knows only
its ``_ag`` slot).
"""

from __future__ import annotations

from .._tensor import Tensor
from .grad_mode import AUTOGRAD_BIT
from .graph import RemovableHandle, meta_of, requires_grad

_LEAF_ONLY = (
    "you can only change requires_grad flags of leaf variables. If you want to use a computed variable in a "
    "subgraph that doesn't require differentiation use var_no_grad = var.detach()."
)


def _check_differentiable_dtype(t) -> None:
    if not (t.dtype.is_floating_point or t.dtype.is_complex):
        raise RuntimeError("only Tensors of floating point and complex dtype can require gradients")


def _get_requires_grad(self) -> bool:
    return requires_grad(self)


def _set_requires_grad(self, value) -> None:
    if not isinstance(value, bool):
        raise TypeError(f"requires_grad must be a bool, not {type(value).__name__}")
    ag = self._ag
    if ag is not None and ag.grad_fn is not None:
        if value:
            return
        raise RuntimeError(_LEAF_ONLY)
    if value:
        _check_differentiable_dtype(self)
        meta_of(self).requires_grad = True
        self._keys |= AUTOGRAD_BIT
    elif ag is not None:
        ag.requires_grad = False
        self._keys &= ~AUTOGRAD_BIT


def requires_grad_(self, requires_grad: bool = True) -> Tensor:
    """Set ``requires_grad`` in place (leaves only) and return ``self``."""
    _set_requires_grad(self, requires_grad)
    return self


def _get_grad(self):
    ag = self._ag
    return None if ag is None else ag.grad


def _set_grad(self, value) -> None:
    if value is not None:
        if not isinstance(value, Tensor):
            raise TypeError(
                f"assigned grad expected to be a Tensor or None but got grad of type {type(value).__name__}"
            )
        if value.dtype != self.dtype:
            raise RuntimeError("assigned grad has data of a different type")
        if value.device != self.device:
            raise RuntimeError("assigned grad has data located on a different device")
        if tuple(value.shape) != tuple(self.shape):
            raise RuntimeError("assigned grad has data of a different size")
    meta_of(self).grad = value


def _get_grad_fn(self):
    ag = self._ag
    return None if ag is None else ag.grad_fn


def _is_leaf(self) -> bool:
    ag = self._ag
    return ag is None or ag.grad_fn is None


def _output_nr(self) -> int:
    ag = self._ag
    return 0 if ag is None else ag.output_nr


def _version(self) -> int:
    return self._storage.version


def _retains_grad(self) -> bool:
    ag = self._ag
    return ag is not None and ag.retains_grad


def detach_(self) -> Tensor:
    """Detach ``self`` from the graph in place: it becomes a leaf that does not require grad."""
    ag = self._ag
    if ag is not None:
        ag.grad_fn, ag.requires_grad, ag.output_nr = None, False, 0
    self._keys &= ~AUTOGRAD_BIT
    return self


def retain_grad(self) -> None:
    """Keep the gradient of this non-leaf tensor in ``.grad`` after backward (no-op on leaves)."""
    if not requires_grad(self):
        raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
    ag = self._ag
    if ag.grad_fn is None or ag.retains_grad:
        return
    ag.retains_grad = True
    import weakref

    ag.grad_fn.retained_outputs()[ag.output_nr] = weakref.ref(self)


def register_hook(self, hook) -> RemovableHandle:
    """``hook(grad)`` runs each time the gradient of this tensor is computed; it may return a new gradient."""
    if not requires_grad(self):
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    ag = self._ag
    if ag.grad_fn is None:
        if ag.hooks is None:
            ag.hooks = {}
        table = ag.hooks
    else:
        table = ag.grad_fn.tensor_pre_hooks().setdefault(ag.output_nr, {})
    handle = RemovableHandle(table)
    table[handle.id] = hook
    return handle


def register_post_accumulate_grad_hook(self, hook) -> RemovableHandle:
    """``hook(tensor)`` runs on a leaf after its ``.grad`` has been accumulated."""
    if not requires_grad(self):
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    ag = self._ag
    if ag.grad_fn is not None:
        raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
    if ag.post_accumulate_hooks is None:
        ag.post_accumulate_hooks = {}
    handle = RemovableHandle(ag.post_accumulate_hooks)
    ag.post_accumulate_hooks[handle.id] = hook
    return handle


def _get_data(self) -> Tensor:
    return self.detach()


def _set_data(self, value) -> None:
    if not isinstance(value, Tensor):
        raise TypeError(f"data must be a Tensor, not {type(value).__name__}")
    if value.dtype != self.dtype:
        raise RuntimeError("data set to a tensor that has a different dtype than the original tensor")
    self._set_metadata(value._storage, value.shape, value.stride(), value.storage_offset())
    self._native = value._native


def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None) -> None:
    """Compute the gradient of this tensor with respect to the graph leaves (accumulated into ``.grad``)."""
    from .engine import backward as run

    run((self,), None if gradient is None else (gradient,), retain_graph, create_graph, inputs=inputs)


def install() -> None:
    """Attach the autograd API to :class:`Tensor`."""
    Tensor.requires_grad = property(_get_requires_grad, _set_requires_grad, doc="Whether gradients are recorded.")
    Tensor.grad = property(_get_grad, _set_grad, doc="The accumulated gradient of a leaf (or a retained one).")
    Tensor.grad_fn = property(_get_grad_fn, doc="The node that created this tensor (None for leaves).")
    Tensor.is_leaf = property(_is_leaf, doc="Whether this tensor was not created by a recorded operation.")
    Tensor.output_nr = property(_output_nr, doc="Which output of its grad_fn this tensor is.")
    Tensor._version = property(_version, doc="The version counter of the storage (in-place writes so far).")
    Tensor.retains_grad = property(_retains_grad, doc="Whether retain_grad() was called on this non-leaf.")
    Tensor.data = property(_get_data, _set_data, doc="This tensor without autograd history (settable).")
    Tensor.requires_grad_ = requires_grad_
    Tensor.detach_ = detach_
    Tensor.retain_grad = retain_grad
    Tensor.register_hook = register_hook
    Tensor.register_post_accumulate_grad_hook = register_post_accumulate_grad_hook
    Tensor.backward = backward
