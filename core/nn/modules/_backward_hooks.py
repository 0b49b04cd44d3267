"""Module backward hooks (``register_full_backward_hook``/``_pre_hook``) as identity autograd Functions.

As PyTorch's ``BackwardHook``: the tensor inputs of ``forward`` pass through one identity Function and
its tensor outputs through another. The outputs' node sees the gradients of the outputs (it runs the
pre-hooks, which may replace them); the inputs' node sees the gradients of the inputs and calls the
hooks with ``(module, grad_input, grad_output)`` (a hook may return replacement ``grad_input``).
"""

from __future__ import annotations

from ..._tensor import Tensor


class _State:
    __slots__ = ("module", "hooks", "pre_hooks", "n_inputs", "input_positions", "grad_output")

    def __init__(self, module, hooks, pre_hooks, n_inputs):
        self.module = module
        self.hooks = hooks
        self.pre_hooks = pre_hooks
        self.n_inputs = n_inputs
        self.input_positions: list = []
        self.grad_output = None


def _identity_function():
    from ... import autograd

    class _InputsHook(autograd.Function):
        @staticmethod
        def forward(ctx, state, *tensors):
            ctx.state = state
            ctx.set_materialize_grads(False)
            return tensors

        @staticmethod
        def backward(ctx, *grads):
            state = ctx.state
            grad_input = [None] * state.n_inputs
            for pos, g in zip(state.input_positions, grads):
                grad_input[pos] = g
            grad_input = tuple(grad_input)
            for hook in state.hooks:
                result = hook(state.module, grad_input, state.grad_output)
                if result is not None:
                    result = tuple(result) if isinstance(result, (tuple, list)) else (result,)
                    if len(result) != len(grad_input):
                        raise RuntimeError(
                            f"Backward hook returned an invalid number of grad_input, got {len(result)}, "
                            f"but expected {len(grad_input)}"
                        )
                    grad_input = result
            return (None, *(grad_input[pos] for pos in state.input_positions))

    class _OutputsHook(autograd.Function):
        @staticmethod
        def forward(ctx, state, any_input_requires_grad, *tensors):
            ctx.state = state
            ctx.any_input = any_input_requires_grad
            ctx.set_materialize_grads(False)
            return tensors

        @staticmethod
        def backward(ctx, *grads):
            state = ctx.state
            grad_output = tuple(grads)
            for hook in state.pre_hooks:
                result = hook(state.module, grad_output)
                if result is not None:
                    result = tuple(result) if isinstance(result, (tuple, list)) else (result,)
                    if len(result) != len(grad_output):
                        raise RuntimeError(
                            f"Backward pre hook returned an invalid number of grad_output, got {len(result)}, "
                            f"but expected {len(grad_output)}"
                        )
                    grad_output = result
            state.grad_output = grad_output
            if not ctx.any_input:
                grad_input = (None,) * state.n_inputs
                for hook in state.hooks:
                    hook(state.module, grad_input, grad_output)
            return (None, None, *grad_output)

    return _InputsHook, _OutputsHook


_FUNCTIONS: list = []


def _functions():
    if not _FUNCTIONS:
        _FUNCTIONS.extend(_identity_function())
    return _FUNCTIONS


def wrap_inputs(module, hooks, pre_hooks, args: tuple):
    """Route the tensor arguments that require grad through the inputs' identity node."""
    import opweave

    inputs_fn, _ = _functions()
    state = _State(module, hooks, pre_hooks, len(args))
    if not opweave.is_grad_enabled():
        return state, args, False
    positions = [i for i, a in enumerate(args) if isinstance(a, Tensor) and a.requires_grad]
    state.input_positions = positions
    if not positions:
        return state, args, False
    routed = inputs_fn.apply(state, *(args[i] for i in positions))
    new_args = list(args)
    for pos, t in zip(positions, routed):
        new_args[pos] = t
    return state, tuple(new_args), True


def wrap_outputs(state, any_input: bool, output):
    """Route the tensor outputs (a tensor, or the tensors of a tuple) through the outputs' identity node."""
    import opweave

    _, outputs_fn = _functions()
    if not opweave.is_grad_enabled():
        return output
    if isinstance(output, Tensor):
        items, single = [output], True
    elif isinstance(output, tuple):
        items, single = list(output), False
    else:
        return output
    positions = [i for i, o in enumerate(items) if isinstance(o, Tensor) and o.requires_grad]
    if not positions:
        return output
    routed = outputs_fn.apply(state, any_input, *(items[i] for i in positions))
    for pos, t in zip(positions, routed):
        items[pos] = t
    return items[0] if single else type(output)(items)
