"""The backward engine: runs the graph's nodes in topological order.

Each call keeps its own state (dependency counts, gradient buffers), so independent
graphs can run backward on several threads at once; only the accumulation into a
leaf's ``.grad`` takes a lock. Nodes run in dependency order, later-recorded first
among those ready (PyTorch's order for a single device).
"""

from __future__ import annotations

import heapq
import threading

from .._state import local
from .._tensor import Tensor
from .grad_mode import AUTOGRAD_BIT, set_grad_enabled
from .grad_mode import _set as _set_grad_mode
from .graph import AccumulateGrad, canonical_ops, gradient_edge, hand_out, owned_grad, requires_grad

_STATE = local()
_running = threading.local()  # .callbacks: one list per backward pass running on this thread, innermost last


def queue_callback(callback) -> None:
    """Run ``callback()`` once the backward pass now running on this thread has finished.

    PyTorch's ``Variable._execution_engine.queue_callback``: hooks use it to act once every
    gradient of the pass is in (``DistributedDataParallel`` waits for its all-reduces there).
    Callbacks run in the order queued, after the last node; one may queue more.
    """
    stack = getattr(_running, "callbacks", None)
    if not stack:
        raise RuntimeError("Final callbacks can only be installed during backward pass.")
    if not callable(callback):
        raise TypeError(f"queue_callback: callback must be callable, got {type(callback).__name__}")
    stack[-1].append(callback)


def _execute(root_edges, root_grads, retain_graph: bool, create_graph: bool, capture=None, accumulate=True):
    """Run backward from ``root_edges`` (see :func:`_run_graph`), then the callbacks queued meanwhile."""
    stack = getattr(_running, "callbacks", None)
    if stack is None:
        stack = _running.callbacks = []
    callbacks: list = []
    stack.append(callbacks)
    try:
        captured = _run_graph(root_edges, root_grads, retain_graph, create_graph, capture, accumulate)
    finally:
        stack.pop()
    stack.append(callbacks)  # a callback may queue further callbacks of this pass
    try:
        while callbacks:
            callbacks.pop(0)()
    finally:
        stack.pop()
    return captured


def _as_tuple(x) -> tuple:
    if x is None:
        return ()
    if isinstance(x, Tensor):
        return (x,)
    return tuple(x)


def _make_grads(outputs: tuple, grad_outputs, create_graph: bool) -> list:
    c = canonical_ops()
    grads = list(_as_tuple(grad_outputs)) if grad_outputs is not None else [None] * len(outputs)
    if len(grads) != len(outputs):
        raise RuntimeError(f"Mismatch in number of gradients: expected {len(outputs)} but got {len(grads)}")
    result = []
    for i, (out, g) in enumerate(zip(outputs, grads)):
        if g is None:
            if out.numel() != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            if not out.dtype.is_floating_point:
                raise RuntimeError(f"grad can be implicitly created only for real scalar outputs but got {out.dtype}")
            state = _STATE
            excluded = state.excluded
            state.excluded = excluded | AUTOGRAD_BIT  # the seed records nothing: skip the Autograd layer
            try:
                g = c.ones_like(out)
            finally:
                state.excluded = excluded
        elif not isinstance(g, Tensor):
            g = c.full_like(out, g)
        else:
            if tuple(g.shape) != tuple(out.shape):
                raise RuntimeError(
                    f"Mismatch in shape: grad_output[{i}] has a shape of {g.shape} and output[{i}] has a shape "
                    f"of {out.shape}."
                )
            if g.dtype.is_complex != out.dtype.is_complex:
                raise RuntimeError(
                    f"For complex Tensors, both grad_output and output are required to have the same dtype. "
                    f"Mismatch in dtype: grad_output[{i}] has a dtype of {g.dtype} and output[{i}] has a dtype "
                    f"of {out.dtype}."
                )
        if not create_graph and requires_grad(g):
            g = g.detach()
        result.append(g)
    return result


def _root_edges(outputs: tuple) -> list:
    edges = []
    for i, out in enumerate(outputs):
        if not isinstance(out, Tensor):
            raise TypeError(f"backward(): expected a Tensor as output {i}, got {type(out).__name__}")
        edge = gradient_edge(out) if requires_grad(out) else None
        if edge is None:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")
        edges.append(edge)
    return edges


def _input_edges(inputs: tuple, who: str) -> list:
    edges = []
    for t in inputs:
        if not isinstance(t, Tensor):
            raise TypeError(f"{who}: inputs must be Tensors, got {type(t).__name__}")
        if not requires_grad(t):
            raise RuntimeError("One of the differentiated Tensors does not require grad")
        edges.append(gradient_edge(t))
    return edges


def _collect(root_nodes, targets=None) -> tuple[dict, set | None]:
    """Dependency counts of the nodes reachable from the roots, and (with targets) the nodes with a path to one."""
    deps: dict = {}
    seen = set(root_nodes)
    stack = list(root_nodes)
    while stack:
        node = stack.pop()
        for nxt, _ in node.next_functions:
            if nxt is None:
                continue
            deps[nxt] = deps.get(nxt, 0) + 1
            if nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    if targets is None:
        return deps, None
    remaining = dict(deps)
    topo, frontier = [], [n for n in seen if remaining.get(n, 0) == 0]
    while frontier:  # Kahn's order, then one pass from the leaves up
        node = frontier.pop()
        topo.append(node)
        for nxt, _ in node.next_functions:
            if nxt is not None:
                remaining[nxt] -= 1
                if remaining[nxt] == 0:
                    frontier.append(nxt)
    leads: set = set()
    for node in reversed(topo):
        if any(n is not None and (n in targets or n in leads) for n, _ in node.next_functions):
            leads.add(node)
    return deps, leads


def _add(a, b):
    if a is None:
        return b
    if b is None:
        return a
    return canonical_ops().add(a, b)


def _run_graph(root_edges, root_grads, retain_graph: bool, create_graph: bool, capture=None, accumulate=True):
    """Run backward from ``root_edges``; ``capture``: {edge: slot} whose gradients are returned instead."""
    buffers: dict = {}
    for (node, nr), g in zip(root_edges, root_grads):
        buf = buffers.get(node)
        if buf is None:
            buf = buffers[node] = [None] * (node.num_outputs or 1)
        buf[nr] = _add(buf[nr], g)
    roots = list(buffers)
    targets = None
    if capture is not None:
        targets = {node for node, _ in capture}
    deps, needed = _collect(roots, targets)
    captured: dict = {}
    ready = [(-n.sequence_nr, id(n), n) for n in roots if deps.get(n, 0) == 0]
    heapq.heapify(ready)
    pop, push = heapq.heappop, heapq.heappush
    state = _STATE
    saved_mode = state.grad_enabled
    _set_grad_mode(create_graph)
    try:
        while ready:
            node = pop(ready)[2]
            grads = buffers.pop(node, None) or [None] * (node.num_outputs or 1)
            if node._tensor_pre_hooks:
                for nr, hooks in list(node._tensor_pre_hooks.items()):
                    if grads[nr] is not None:
                        for fn in list(hooks.values()):
                            new = fn(grads[nr])
                            if new is not None:
                                grads[nr] = new
            if node._retain_grad:
                for nr, ref in list(node._retain_grad.items()):
                    t = ref()
                    if t is not None and grads[nr] is not None:
                        g = grads[nr] if create_graph else grads[nr].detach()
                        ag = t._ag
                        ag.grad = owned_grad(g, t) if ag.grad is None else _add(ag.grad, g)
            if capture is not None:
                for nr in range(len(grads)):
                    slot = capture.get((node, nr))
                    if slot is not None:
                        captured[slot] = _add(captured.get(slot), grads[nr])
            if (needed is None or node in needed) and (accumulate or not isinstance(node, AccumulateGrad)):
                if node._pre_hooks:
                    for fn in list(node._pre_hooks.values()):
                        new = fn(tuple(grads))
                        if new is not None:
                            grads = list(new)
                inputs_grads = node.apply(grads)
                if node._hooks:
                    for fn in list(node._hooks.values()):
                        new = fn(inputs_grads, tuple(grads))
                        if new is not None:
                            inputs_grads = tuple(new)
                if not retain_graph:
                    node.release()
            else:
                inputs_grads = ()
            edges = node.next_functions
            if not edges:
                continue
            for (nxt, nr), g in zip(edges, inputs_grads):
                if nxt is None or g is None:
                    continue
                buf = buffers.get(nxt)
                if buf is None:
                    if nxt.num_outputs <= 1:
                        buffers[nxt] = [g]
                        continue
                    buf = buffers[nxt] = [None] * nxt.num_outputs
                old = buf[nr]
                buf[nr] = g if old is None else _add(old, g)
            for nxt, _ in edges:
                if nxt is None:
                    continue
                left = deps[nxt] - 1
                deps[nxt] = left
                if left == 0:
                    push(ready, (-nxt.sequence_nr, id(nxt), nxt))
    finally:
        _set_grad_mode(saved_mode)
    return captured


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None) -> None:
    """Accumulate gradients of ``tensors`` into the leaves (``inputs``: only into these)."""
    outputs = _as_tuple(tensors)
    if not outputs:
        raise RuntimeError("backward(): no tensors given to differentiate")
    if retain_graph is None:
        retain_graph = create_graph
    edges = _root_edges(outputs)
    grads = _make_grads(outputs, grad_tensors, create_graph)
    for g in grads:
        if g is not None:
            hand_out(g)  # the caller's tensors: a leaf's .grad gets a copy of them
    if inputs is not None:
        inputs = _as_tuple(inputs)
        if not inputs:
            raise RuntimeError("'inputs' argument to backward() cannot be empty.")
        in_edges = _input_edges(inputs, "backward()")
        capture = {edge: i for i, edge in enumerate(in_edges)}
        captured = _execute(edges, grads, retain_graph, create_graph, capture, accumulate=False)
        from .graph import AccumulateGrad as _Acc

        for t, edge in zip(inputs, in_edges):
            g = captured.get(capture[edge])
            if g is None:
                continue
            node = edge[0]
            if isinstance(node, _Acc):
                with set_grad_enabled(create_graph):
                    node.apply([g])
            else:
                ag = t._ag
                g = g if create_graph else g.detach()
                ag.grad = owned_grad(g, t) if ag.grad is None else _add(ag.grad, g)
        return
    _execute(edges, grads, retain_graph, create_graph)


def grad(
    outputs,
    inputs,
    grad_outputs=None,
    retain_graph=None,
    create_graph=False,
    allow_unused=None,
    materialize_grads=False,
) -> tuple:
    """The gradients of ``outputs`` with respect to ``inputs``, without touching ``.grad``."""
    from .. import ops

    outputs = _as_tuple(outputs)
    inputs = _as_tuple(inputs)
    if not inputs:
        raise RuntimeError("grad requires non-empty inputs.")
    if materialize_grads and allow_unused is False:
        raise ValueError(
            "Expected allow_unused to be True or not passed when materialize_grads=True, but got: allow_unused=False."
        )
    if allow_unused is None:
        allow_unused = materialize_grads
    if retain_graph is None:
        retain_graph = create_graph
    edges = _root_edges(outputs)
    grads = _make_grads(outputs, grad_outputs, create_graph)
    in_edges = _input_edges(inputs, "grad()")
    capture = {}
    for i, edge in enumerate(in_edges):
        capture.setdefault(edge, i)
    captured = _execute(edges, grads, retain_graph, create_graph, capture, accumulate=False)
    result = []
    for t, edge in zip(inputs, in_edges):
        g = captured.get(capture[edge])
        if g is None:
            if not allow_unused:
                raise RuntimeError(
                    "One of the differentiated Tensors appears to not have been used in the graph. "
                    "Set allow_unused=True if this is the desired behavior."
                )
            if materialize_grads:
                g = ops.canonical.zeros_like(t)
        elif not create_graph and requires_grad(g):
            g = g.detach()
        result.append(g)
    return tuple(result)
