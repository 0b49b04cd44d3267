"""The ``requires_grad`` flag: stored and reported, ahead of autograd.

PyTorch code sets ``requires_grad=True`` on factories and calls ``t.requires_grad_()``;
opweave accepts both and remembers the flag on that tensor (the leaf), so such code runs
and ``t.requires_grad`` answers truthfully. There is no autograd layer yet: results of ops
do not require grad, ``t.grad`` is None and ``t.backward()`` raises NotImplementedError.
"""

from __future__ import annotations

import weakref

# id(tensor) -> weak reference to it (a WeakSet would compare tensors with ``==``, elementwise)
_FLAGGED: dict[int, weakref.ref] = {}


def _forget(key: int, ref) -> None:
    if _FLAGGED.get(key) is ref:
        del _FLAGGED[key]


def _check(t, op: str) -> None:
    if not (t.dtype.is_floating_point or t.dtype.is_complex):
        raise RuntimeError(f"{op}: only Tensors of floating point and complex dtype can require gradients")


def set_flag(t, requires_grad: bool, op: str = "requires_grad_") -> None:
    """Set or clear ``t``'s flag; RuntimeError for a non-floating tensor, as PyTorch."""
    if requires_grad:
        _check(t, op)
        key = id(t)
        _FLAGGED[key] = weakref.ref(t, lambda ref, key=key: _forget(key, ref))
    else:
        _FLAGGED.pop(id(t), None)


def factory_result(result, op: str):
    """A factory's result with the flag set (the generated entry calls this for ``requires_grad=True``)."""
    set_flag(result, True, op)
    return result


def requires_grad(self) -> bool:
    """Whether this tensor was marked as requiring gradients (opweave has no autograd yet)."""
    ref = _FLAGGED.get(id(self))
    return ref is not None and ref() is self


def _set_requires_grad(self, value) -> None:
    set_flag(self, bool(value), "requires_grad")


def requires_grad_(self, requires_grad: bool = True):
    """Mark (or unmark) this tensor as requiring gradients, in place; returns ``self``."""
    set_flag(self, requires_grad)
    return self


def grad(self):
    """The accumulated gradient: always None, as opweave has no autograd yet."""
    return None


def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
    """Not available: opweave has no autograd yet (NotImplementedError)."""
    raise NotImplementedError("backward(): opweave has no autograd yet")


def install(tensor_cls) -> None:
    """Attach ``requires_grad``, ``requires_grad_``, ``grad``, ``is_leaf`` and ``backward`` to Tensor."""
    tensor_cls.requires_grad = property(requires_grad, _set_requires_grad, doc=requires_grad.__doc__)
    tensor_cls.requires_grad_ = requires_grad_
    tensor_cls.grad = property(grad, doc=grad.__doc__)
    tensor_cls.is_leaf = property(lambda self: True, doc="Every tensor is a leaf: opweave has no autograd yet.")
    tensor_cls.backward = backward
