"""Adam and AdamW with PyTorch's bias correction, AMSGrad, maximize and (decoupled) weight decay."""

from __future__ import annotations

import math

import opweave

from .optimizer import Optimizer

__all__ = ["Adam", "AdamW"]


class Adam(Optimizer):
    """``Adam(params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, *, maximize=False,
    decoupled_weight_decay=False)``.

    Per step ``t``: ``g = ±grad`` (+ ``weight_decay·p``, or ``p *= 1 - lr·weight_decay`` when decoupled);
    ``m = β1 m + (1-β1) g``; ``v = β2 v + (1-β2) g²``; ``v̂ = max(v̂, v)`` with AMSGrad;
    ``p = p - lr/(1-β1^t) · m / (√v / √(1-β2^t) + eps)``.
    """

    def __init__(
        self,
        params,
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        amsgrad: bool = False,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
        decoupled_weight_decay: bool = False,
    ) -> None:
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if fused:
            raise RuntimeError(f"{type(self).__name__}: fused=True is not supported")
        defaults = {
            "lr": lr,
            "betas": betas,
            "eps": eps,
            "weight_decay": weight_decay,
            "amsgrad": amsgrad,
            "maximize": maximize,
            "foreach": foreach,
            "capturable": capturable,
            "differentiable": differentiable,
            "fused": fused,
            "decoupled_weight_decay": decoupled_weight_decay,
        }
        super().__init__(params, defaults)

    def _update(self, p, grad, state, group) -> None:
        if grad.is_complex():
            raise NotImplementedError(f"{type(self).__name__}: complex parameters are not supported")
        if not state:
            state["step"] = self._step_tensor()
            state["exp_avg"] = opweave.zeros_like(p)
            state["exp_avg_sq"] = opweave.zeros_like(p)
            if group["amsgrad"]:
                state["max_exp_avg_sq"] = opweave.zeros_like(p)
        beta1, beta2 = group["betas"]
        lr = group["lr"]
        wd = group["weight_decay"]
        if group["maximize"]:
            grad = -grad
        if wd != 0:
            if group["decoupled_weight_decay"]:
                p.mul_(1 - lr * wd)
            else:
                grad = grad.add(p, alpha=wd)
        exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
        state["step"].add_(1)
        step = state["step"].item()
        exp_avg.lerp_(grad, 1 - beta1)
        exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
        bias_correction1 = 1 - beta1**step
        bias_correction2 = 1 - beta2**step
        step_size = lr / bias_correction1
        bias_correction2_sqrt = math.sqrt(bias_correction2)
        if group["amsgrad"]:
            max_sq = state["max_exp_avg_sq"]
            opweave.maximum(max_sq, exp_avg_sq, out=max_sq)
            denom = (max_sq.sqrt() / bias_correction2_sqrt).add_(group["eps"])
        else:
            denom = (exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(group["eps"])
        p.addcdiv_(exp_avg, denom, value=-step_size)


class AdamW(Adam):
    """Adam with decoupled weight decay (``p *= 1 - lr·weight_decay`` before the update); weight_decay 1e-2."""

    def __init__(
        self,
        params,
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 1e-2,
        amsgrad: bool = False,
        *,
        maximize: bool = False,
        foreach: bool | None = None,
        capturable: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        super().__init__(
            params,
            lr,
            betas,
            eps,
            weight_decay,
            amsgrad,
            foreach=foreach,
            maximize=maximize,
            capturable=capturable,
            differentiable=differentiable,
            fused=fused,
            decoupled_weight_decay=True,
        )
