"""Identity, Linear, Bilinear, LazyLinear-free: PyTorch's affine layers and their default initialisation."""

from __future__ import annotations

import math

import opweave

from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = ["Identity", "Linear", "Bilinear"]


class Identity(Module):
    """Returns its input; accepts and ignores any constructor arguments."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__()

    def forward(self, input):
        """``input`` itself."""
        return input


class Linear(Module):
    """``y = x Aᵀ + b``; weight (out, in) and bias (out) drawn from U(-1/√in, 1/√in) (kaiming_uniform, a=√5)."""

    def __init__(self, in_features: int, out_features: int, bias: bool = True, device=None, dtype=None) -> None:
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(opweave.empty(out_features, in_features, device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(opweave.empty(out_features, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """PyTorch's default initialisation."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input):
        """``input @ weight.T + bias``."""
        return opweave.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class Bilinear(Module):
    """``y_k = x1ᵀ A_k x2 + b_k``; weight (out, in1, in2) and bias drawn from U(-1/√in1, 1/√in1)."""

    def __init__(
        self, in1_features: int, in2_features: int, out_features: int, bias: bool = True, device=None, dtype=None
    ) -> None:
        super().__init__()
        self.in1_features = in1_features
        self.in2_features = in2_features
        self.out_features = out_features
        self.weight = Parameter(opweave.empty(out_features, in1_features, in2_features, device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(opweave.empty(out_features, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """PyTorch's default initialisation."""
        bound = 1 / math.sqrt(self.weight.size(1))
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1, input2):
        """``einsum('...i,kij,...j->...k') + bias``."""
        if input1.shape[:-1] != input2.shape[:-1]:
            raise ValueError(
                "Bilinear: input1 and input2 must have the same batch shape, "
                f"got {list(input1.shape)} and {list(input2.shape)}"
            )
        if input1.shape[-1] != self.in1_features or input2.shape[-1] != self.in2_features:
            raise RuntimeError(
                f"Bilinear: expected inputs with last dims {self.in1_features} and {self.in2_features}, "
                f"got {input1.shape[-1]} and {input2.shape[-1]}"
            )
        out = opweave.einsum("...i,kij,...j->...k", [input1, self.weight, input2])
        if self.bias is not None:
            out = out + self.bias
        return out

    def extra_repr(self) -> str:
        return (
            f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
            f"out_features={self.out_features}, bias={self.bias is not None}"
        )
