"""Stochastic gradient descent with PyTorch's momentum, dampening, Nesterov and weight decay."""

from __future__ import annotations

from .optimizer import Optimizer

__all__ = ["SGD"]


class SGD(Optimizer):
    """``SGD(params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False, *, maximize=False)``.

    Per step (PyTorch's documented algorithm): ``g = ±grad + weight_decay·p``; with momentum
    ``b = g`` on the first step, else ``b = momentum·b + (1 - dampening)·g``, and ``g = g + momentum·b``
    (Nesterov) or ``g = b``; then ``p = p - lr·g``.
    """

    def __init__(
        self,
        params,
        lr: float = 1e-3,
        momentum: float = 0,
        dampening: float = 0,
        weight_decay: float = 0,
        nesterov: bool = False,
        *,
        maximize: bool = False,
        foreach: bool | None = None,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        if fused:
            raise RuntimeError("SGD: fused=True is not supported")
        defaults = {
            "lr": lr,
            "momentum": momentum,
            "dampening": dampening,
            "weight_decay": weight_decay,
            "nesterov": nesterov,
            "maximize": maximize,
            "foreach": foreach,
            "differentiable": differentiable,
            "fused": fused,
        }
        super().__init__(params, defaults)

    def _update(self, p, grad, state, group) -> None:
        d_p = -grad if group["maximize"] else grad
        if group["weight_decay"] != 0:
            d_p = d_p.add(p, alpha=group["weight_decay"])
        momentum = group["momentum"]
        if momentum != 0:
            buf = state.get("momentum_buffer")
            if buf is None:
                buf = d_p.clone().detach()
                state["momentum_buffer"] = buf
            else:
                dampening = group["dampening"]
                buf.mul_(momentum)
                if dampening:
                    buf.add_(d_p, alpha=1 - dampening)
                else:
                    buf.add_(d_p)
            d_p = d_p.add(buf, alpha=momentum) if group["nesterov"] else buf
        else:
            state.setdefault("momentum_buffer", None)
        p.add_(d_p, alpha=-group["lr"])
