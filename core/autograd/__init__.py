"""``opweave.autograd``: reverse-mode automatic differentiation as a dispatch layer.

See ``docs/autograd.md``. Tensors that require grad carry the Autograd dispatch key; the
layer records a node per op (derivative rules on the prims, canonical ops through their
decompositions or a registered formula) and :mod:`.engine` runs the graph backwards.
"""

from __future__ import annotations

from . import formulas as _formulas  # noqa: F401  (registers the derivative formulas)
from . import inplace as _inplace  # noqa: F401  (copy_to into views)
from . import layer as _layer  # noqa: F401  (registers the Autograd layer's fallback)
from . import tensor_api as _tensor_api
from .function import Function, FunctionCtx, once_differentiable
from .grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from .gradcheck import GradcheckError, gradcheck, gradgradcheck
from .graph import Node
from .layer import register_formula

__all__ = [
    "Function",
    "FunctionCtx",
    "GradcheckError",
    "Node",
    "gradcheck",
    "gradgradcheck",
    "once_differentiable",
    "register_formula",
    "backward",
    "enable_grad",
    "grad",
    "inference_mode",
    "is_grad_enabled",
    "is_inference_mode_enabled",
    "no_grad",
    "set_grad_enabled",
]


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None) -> None:
    """Accumulate the gradients of ``tensors`` into the leaves' ``.grad`` (see ``Tensor.backward``)."""
    from .engine import backward as run

    run(tensors, grad_tensors, retain_graph, create_graph, inputs=inputs)


def grad(
    outputs,
    inputs,
    grad_outputs=None,
    retain_graph=None,
    create_graph=False,
    allow_unused=None,
    is_grads_batched=False,
    materialize_grads=False,
):
    """The gradients of ``outputs`` with respect to ``inputs`` (returned, not accumulated)."""
    from .engine import grad as run

    if is_grads_batched:
        raise NotImplementedError("autograd.grad(): is_grads_batched=True is not supported")
    return run(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused, materialize_grads)


def _install(namespace: dict) -> None:
    """Attach the Tensor API (``requires_grad=`` on factories is in their generated entry points)."""
    _tensor_api.install()


def __getattr__(name: str):
    """Load ``opweave.autograd.functional`` on first use (keeps ``import opweave`` fast)."""
    if name == "functional":
        import importlib

        return importlib.import_module(".functional", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
