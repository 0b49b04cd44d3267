"""The autograd graph: per-tensor metadata, nodes, saved tensors and hooks.

Each tensor that requires grad carries an :class:`AutogradMeta` (``Tensor._ag``) and the
Autograd bit in its dispatch key set. A leaf has no ``grad_fn``; its gradient is
accumulated by its :class:`AccumulateGrad` node. A result of a recorded op has a
``grad_fn`` (a :class:`Node`) and an ``output_nr`` (which output of that node it is).
"""

from __future__ import annotations

import itertools
import threading
import weakref

from .._state import local
from .._tensor_compat import contiguous_format
from .grad_mode import AUTOGRAD_BIT

_STATE = local()

FREED_MESSAGE = (
    "Trying to backward through the graph a second time (or directly access saved tensors after they have "
    "already been freed). Saved intermediate values of the graph are freed when you call .backward() or "
    "autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or "
    "if you need to access saved tensors after calling backward."
)

_sequence = itertools.count()
_CANONICAL: list = []


def canonical_ops():
    """``opweave.ops.canonical`` (looked up once: the hot paths of backward call it per node)."""
    if not _CANONICAL:
        from .. import ops

        _CANONICAL.append(ops.canonical)
    return _CANONICAL[0]


class AutogradMeta:
    """Autograd state of one tensor."""

    __slots__ = (
        "requires_grad",
        "grad",
        "grad_fn",
        "output_nr",
        "retains_grad",
        "hooks",
        "post_accumulate_hooks",
        "accumulator",
        "name",
    )

    def __init__(self, requires_grad=False, grad_fn=None, output_nr=0):
        self.requires_grad = requires_grad
        self.grad = None
        self.grad_fn = grad_fn
        self.output_nr = output_nr
        self.retains_grad = False
        self.hooks = None  # {handle id: fn} of register_hook on a leaf
        self.post_accumulate_hooks = None
        self.accumulator = None  # the leaf's AccumulateGrad node (made on first use)
        self.name = None


def meta_of(t):
    """The tensor's AutogradMeta, created on first request."""
    ag = t._ag
    if ag is None:
        ag = t._ag = AutogradMeta()
    return ag


def requires_grad(t) -> bool:
    """Whether ``t`` requires grad (a leaf flagged so, or a result with a ``grad_fn``)."""
    ag = t._ag
    return ag is not None and (ag.requires_grad or ag.grad_fn is not None)


def set_history(t, node, output_nr: int) -> None:
    """Make ``t`` output ``output_nr`` of ``node`` (it requires grad from now on)."""
    ag = meta_of(t)
    ag.grad_fn, ag.output_nr, ag.requires_grad = node, output_nr, False
    t._keys |= AUTOGRAD_BIT


def gradient_edge(t):
    """The (node, input number) a gradient for ``t`` flows into: its grad_fn, or its AccumulateGrad."""
    ag = t._ag
    if ag is None:
        return None
    if ag.grad_fn is not None:
        return (ag.grad_fn, ag.output_nr)
    if ag.requires_grad:
        acc = ag.accumulator
        if acc is None:
            acc = ag.accumulator = AccumulateGrad(t)
        return (acc, 0)
    return None


class RemovableHandle:
    """Returned by ``register_hook``: ``remove()`` takes the hook out again."""

    _ids = itertools.count()

    def __init__(self, table: dict):
        self.id = next(self._ids)
        self._table = table

    def remove(self) -> None:
        """Remove the hook (idempotent)."""
        self._table.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.remove()


class Node:
    """One recorded operation: ``apply(grads)`` maps the gradients of its outputs to those of its inputs.

    ``next_functions`` is a tuple of ``(node, input_nr)`` per input (``(None, 0)`` for an input
    that does not require grad), as PyTorch's ``grad_fn.next_functions``.
    """

    # Hook tables are made on first use (most nodes never get one): None until then.
    _pre_hooks: dict | None = None  # id -> fn(grad_outputs) (register_prehook)
    _hooks: dict | None = None  # id -> fn(grad_inputs, grad_outputs) (register_hook)
    _tensor_pre_hooks: dict | None = None  # output_nr -> {id: fn(grad)} (Tensor.register_hook on non-leaves)
    _retain_grad: dict | None = None  # output_nr -> weak tensor whose .grad is kept (retain_grad)
    _metadata: dict | None = None

    def __init__(self, name: str, next_edges: tuple, num_outputs: int = 1):
        self._name = name
        self.next_functions = next_edges
        self.num_outputs = num_outputs
        self.sequence_nr = next(_sequence)

    @property
    def metadata(self) -> dict:
        """A dict for the user's annotations (PyTorch's ``Node.metadata``)."""
        if self._metadata is None:
            self._metadata = {}
        return self._metadata

    def tensor_pre_hooks(self) -> dict:
        """The table of ``Tensor.register_hook`` hooks per output (made on first use)."""
        if self._tensor_pre_hooks is None:
            self._tensor_pre_hooks = {}
        return self._tensor_pre_hooks

    def retained_outputs(self) -> dict:
        """The table of outputs whose ``.grad`` is kept (``retain_grad``; made on first use)."""
        if self._retain_grad is None:
            self._retain_grad = {}
        return self._retain_grad

    def name(self) -> str:
        """The node's name, e.g. ``MulBackward0``."""
        return self._name

    def apply(self, grad_outputs: list) -> tuple:
        """Gradients of the inputs (one per ``next_functions`` entry, None where there is none)."""
        raise NotImplementedError

    def release(self) -> None:
        """Free saved tensors (after a backward without ``retain_graph``)."""

    def register_hook(self, fn) -> RemovableHandle:
        """``fn(grad_inputs, grad_outputs)`` runs after the node; it may return replacement grad_inputs."""
        if self._hooks is None:
            self._hooks = {}
        handle = RemovableHandle(self._hooks)
        self._hooks[handle.id] = fn
        return handle

    def register_prehook(self, fn) -> RemovableHandle:
        """``fn(grad_outputs)`` runs before the node; it may return replacement grad_outputs."""
        if self._pre_hooks is None:
            self._pre_hooks = {}
        handle = RemovableHandle(self._pre_hooks)
        self._pre_hooks[handle.id] = fn
        return handle

    def __call__(self, *grads):
        return self.apply(list(grads))

    def __repr__(self):
        return f"<{self._name} object at {id(self):#x}>"


#: Gradients stored as some tensor's ``.grad`` (or given to ``backward``), by ``id``: another tensor's ``.grad``
#: gets a copy of them, never the same object.
_HANDED_OUT: dict[int, weakref.ref] = {}


def hand_out(grad):
    """Mark ``grad`` as held by someone (a ``.grad``, the caller of ``backward``); it is never stored twice."""
    key = id(grad)
    _HANDED_OUT[key] = weakref.ref(grad, lambda _, key=key: _HANDED_OUT.pop(key, None))


def owned_grad(grad, variable):
    """The tensor a first ``variable.grad`` stores: ``grad`` itself when no one holds it and it has the variable's
    strides, else a copy laid out as the variable (PyTorch's AccumulateGrad steals only such a gradient).

    Without the copy, ``(a + b).sum().backward()`` gave ``a.grad`` and ``b.grad`` one tensor (an in-place
    ``clip_grad_norm_`` scaled it twice), and ``a.sum().backward()`` a stride-0 ``a.grad``.
    """
    held = _HANDED_OUT.get(id(grad))
    strides = variable.stride()
    if (held is not None and held() is grad) or grad.stride() != strides:
        c = canonical_ops()
        if variable.is_contiguous() or not _dense(variable.shape, strides):
            grad = c.clone(grad, memory_format=contiguous_format)
        else:  # a dense layout other than row-major (a transposed leaf): the gradient takes it
            fresh = c.empty_strided(list(variable.shape), list(strides), dtype=grad.dtype, device=grad.device)
            grad = fresh.copy_(grad)
    hand_out(grad)
    return grad


def _dense(shape, strides) -> bool:
    """Whether ``strides`` cover ``shape``'s elements exactly once, in some order of the dims."""
    expect = 1
    for size, stride in sorted(zip(shape, strides), key=lambda d: d[1]):
        if size != 1 and stride != expect:
            return False
        expect *= size
    return True


class AccumulateGrad(Node):
    """The node of a leaf: adds the incoming gradient to ``leaf.grad``."""

    _lock = threading.Lock()

    def __init__(self, leaf):
        super().__init__("AccumulateGrad", ())
        self.variable = leaf

    def apply(self, grad_outputs: list) -> tuple:
        grad = grad_outputs[0]
        leaf = self.variable
        ag = leaf._ag
        if grad is None:
            return ()
        if ag.hooks:
            for fn in list(ag.hooks.values()):
                new = fn(grad)
                if new is not None:
                    grad = new
        if not _STATE.grad_enabled and requires_grad(grad):
            grad = grad.detach()
        with self._lock:
            if ag.grad is None:
                ag.grad = owned_grad(grad, leaf)
            else:
                ag.grad = canonical_ops().add(ag.grad, grad)
        if ag.post_accumulate_hooks:
            for fn in list(ag.post_accumulate_hooks.values()):
                fn(leaf)
        return ()


class SavedTensor:
    """A tensor saved for backward, with the version of its storage when it was saved."""

    __slots__ = ("tensor", "version", "producer")

    def __init__(self, t, node_name: str = "", index: int = 0):
        self.tensor = t
        # a tensor without a Storage yet (a fresh CPU result) has version 0: the first in-place write or view
        # makes its Storage (views share it), so the check at unpack still sees every write
        st = t._st
        self.version = st.version if st is not None else 0
        ag = t._ag
        self.producer = None if ag is None or ag.grad_fn is None else (ag.grad_fn.name(), ag.output_nr)

    def unpack(self):
        """The saved tensor; ``RuntimeError`` if it was freed or modified in place since."""
        t = self.tensor
        if t is None:
            raise RuntimeError(FREED_MESSAGE)
        now = t._storage.version
        if now != self.version:
            which = "" if self.producer is None else f", which is output {self.producer[1]} of {self.producer[0]},"
            raise RuntimeError(
                "one of the variables needed for gradient computation has been modified by an inplace "
                f"operation: [{t.dtype} {list(t.shape)}]{which} is at version {now}; expected version "
                f"{self.version} instead. Hint: the backtrace further above shows the operation that failed to "
                "compute its gradient. The variable in question was changed in there or anywhere later. Good luck!"
            )
        return t
