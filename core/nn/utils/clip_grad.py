"""Gradient clipping with PyTorch's semantics (``torch.nn.utils.clip_grad``)."""

from __future__ import annotations

import math
from collections.abc import Iterable

import opweave

from ..._tensor import Tensor

__all__ = ["clip_grad_norm_", "clip_grad_value_", "get_total_norm"]


def _as_list(tensors) -> list:
    if isinstance(tensors, Tensor):
        return [tensors]
    return list(tensors)


def get_total_norm(
    tensors: Iterable[Tensor] | Tensor, norm_type: float = 2.0, error_if_nonfinite: bool = False, foreach=None
) -> Tensor:
    """The ``norm_type``-norm of the norms of ``tensors`` (as if they were concatenated into one vector)."""
    tensors = _as_list(tensors)
    norm_type = float(norm_type)
    if len(tensors) == 0:
        return opweave.tensor(0.0)
    with opweave.no_grad():
        norms = [opweave.linalg.vector_norm(t, norm_type) for t in tensors]
        total = opweave.linalg.vector_norm(opweave.stack([n.to(norms[0].dtype) for n in norms]), norm_type)
    if error_if_nonfinite and not math.isfinite(total.item()):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, so it cannot be "
            "clipped. To disable this error and scale the gradients by the non-finite norm anyway, set "
            "`error_if_nonfinite=False`"
        )
    return total


def clip_grad_norm_(
    parameters: Iterable[Tensor] | Tensor,
    max_norm: float,
    norm_type: float = 2.0,
    error_if_nonfinite: bool = False,
    foreach=None,
) -> Tensor:
    """Scale the gradients of ``parameters`` in place so that their total norm is at most ``max_norm``.

    The scale is ``min(1, max_norm / (total_norm + 1e-6))``; returns the total norm before clipping.
    """
    grads = [p.grad for p in _as_list(parameters) if p.grad is not None]
    total_norm = get_total_norm(grads, norm_type, error_if_nonfinite)
    if not grads:
        return total_norm
    with opweave.no_grad():
        clip_coef = float(max_norm) / (total_norm.item() + 1e-6)
        if clip_coef < 1:
            for g in grads:
                g.mul_(clip_coef)
    return total_norm


def clip_grad_value_(parameters: Iterable[Tensor] | Tensor, clip_value: float, foreach=None) -> None:
    """Clamp every gradient of ``parameters`` to ``[-clip_value, clip_value]`` in place."""
    clip_value = float(clip_value)
    with opweave.no_grad():
        for p in _as_list(parameters):
            if p.grad is not None:
                p.grad.clamp_(min=-clip_value, max=clip_value)
