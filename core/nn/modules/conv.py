"""Conv1d/2d/3d and ConvTranspose1d/2d/3d with PyTorch's arguments, padding modes and initialisation."""

from __future__ import annotations

import math

import opweave

from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d"]


def _ntuple(n: int, x, name: str = "") -> tuple:
    if isinstance(x, (list, tuple)):
        if len(x) != n:
            raise ValueError(f"{name}: expected {n} values, got {len(x)}")
        return tuple(x)
    return (x,) * n


class _ConvNd(Module):
    _dims = 0
    _transposed = False

    def __init__(
        self,
        in_channels,
        out_channels,
        kernel_size,
        stride=1,
        padding=0,
        dilation=1,
        groups=1,
        bias=True,
        padding_mode="zeros",
        device=None,
        dtype=None,
        output_padding=0,
    ) -> None:
        super().__init__()
        name = type(self).__name__
        n = self._dims
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        valid_padding_strings = {"same", "valid"}
        if isinstance(padding, str):
            if padding not in valid_padding_strings:
                raise ValueError(f"Invalid padding string {padding!r}, should be one of {valid_padding_strings}")
            if padding == "same" and any(s != 1 for s in _ntuple(n, stride)):
                raise ValueError("padding='same' is not supported for strided convolutions")
        valid_padding_modes = {"zeros", "reflect", "replicate", "circular"}
        if padding_mode not in valid_padding_modes:
            raise ValueError(
                f"padding_mode must be one of {valid_padding_modes}, but got padding_mode='{padding_mode}'"
            )
        if self._transposed and padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {name}')
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = _ntuple(n, kernel_size, name)
        self.stride = _ntuple(n, stride, name)
        self.padding = padding if isinstance(padding, str) else _ntuple(n, padding, name)
        self.dilation = _ntuple(n, dilation, name)
        self.transposed = self._transposed
        self.output_padding = _ntuple(n, output_padding, name)
        self.groups = groups
        self.padding_mode = padding_mode
        if isinstance(self.padding, str):
            self._reversed_padding_repeated_twice = [0, 0] * n
            if padding == "same":
                for d, k, i in zip(self.dilation, self.kernel_size, range(n - 1, -1, -1)):
                    total = d * (k - 1)
                    left = total // 2
                    self._reversed_padding_repeated_twice[2 * i] = left
                    self._reversed_padding_repeated_twice[2 * i + 1] = total - left
        else:
            self._reversed_padding_repeated_twice = [p for p in reversed(self.padding) for _ in range(2)]
        if self._transposed:
            shape = (in_channels, out_channels // groups, *self.kernel_size)
        else:
            shape = (out_channels, in_channels // groups, *self.kernel_size)
        self.weight = Parameter(opweave.empty(*shape, device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(opweave.empty(out_channels, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """PyTorch's default initialisation: kaiming_uniform(a=√5) weight, U(-1/√fan_in, 1/√fan_in) bias."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def extra_repr(self) -> str:
        s = "{in_channels}, {out_channels}, kernel_size={kernel_size}, stride={stride}"
        if self.padding != (0,) * len(self.kernel_size):
            s += ", padding={padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += ", dilation={dilation}"
        if self.output_padding != (0,) * len(self.output_padding):
            s += ", output_padding={output_padding}"
        if self.groups != 1:
            s += ", groups={groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += ", padding_mode={padding_mode}"
        return s.format(**self.__dict__)


class _Conv(_ConvNd):
    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size,
        stride=1,
        padding=0,
        dilation=1,
        groups: int = 1,
        bias: bool = True,
        padding_mode: str = "zeros",
        device=None,
        dtype=None,
    ) -> None:
        super().__init__(
            in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias, padding_mode, device, dtype
        )

    def _conv_forward(self, input, weight, bias):
        conv = getattr(F, f"conv{self._dims}d")
        if self.padding_mode != "zeros":
            mode = "constant" if self.padding_mode == "zeros" else self.padding_mode
            padded = F.pad(input, self._reversed_padding_repeated_twice, mode=mode)
            return conv(padded, weight, bias, self.stride, 0, self.dilation, self.groups)
        return conv(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)

    def forward(self, input):
        """Cross-correlation of ``input`` with ``weight`` plus ``bias``."""
        return self._conv_forward(input, self.weight, self.bias)


class Conv1d(_Conv):
    """1-D convolution over (N, C_in, L) or (C_in, L) inputs."""

    _dims = 1


class Conv2d(_Conv):
    """2-D convolution over (N, C_in, H, W) or (C_in, H, W) inputs."""

    _dims = 2


class Conv3d(_Conv):
    """3-D convolution over (N, C_in, D, H, W) or (C_in, D, H, W) inputs."""

    _dims = 3


class _ConvTranspose(_ConvNd):
    _transposed = True

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size,
        stride=1,
        padding=0,
        output_padding=0,
        groups: int = 1,
        bias: bool = True,
        dilation=1,
        padding_mode: str = "zeros",
        device=None,
        dtype=None,
    ) -> None:
        if isinstance(padding, str):
            raise ValueError(f"{type(self).__name__}: padding must be an int or a tuple, not a string")
        super().__init__(
            in_channels,
            out_channels,
            kernel_size,
            stride,
            padding,
            dilation,
            groups,
            bias,
            padding_mode,
            device,
            dtype,
            output_padding=output_padding,
        )

    def _output_padding(self, input, output_size) -> tuple:
        if output_size is None:
            return self.output_padding
        n = self._dims
        output_size = list(output_size)
        if len(output_size) == input.ndim:
            output_size = output_size[2:] if input.ndim == n + 2 else output_size[1:]
        if len(output_size) != n:
            raise ValueError(
                f"ConvTranspose{n}D: for {input.ndim}D input, output_size must have {n} or {n + 2} elements "
                f"(got {len(output_size)})"
            )
        result = []
        for d in range(n):
            in_size = input.shape[input.ndim - n + d]
            min_size = (
                (in_size - 1) * self.stride[d] - 2 * self.padding[d] + self.dilation[d] * (self.kernel_size[d] - 1) + 1
            )
            max_size = min_size + self.stride[d] - 1
            if not min_size <= output_size[d] <= max_size:
                raise ValueError(
                    f"requested an output size of {output_size}, but valid sizes range from {min_size} to {max_size} "
                    f"(for an input of {list(input.shape[input.ndim - n :])})"
                )
            result.append(output_size[d] - min_size)
        return tuple(result)

    def forward(self, input, output_size=None):
        """Transposed convolution (the gradient of a convolution with respect to its input)."""
        output_padding = self._output_padding(input, output_size)
        conv = getattr(F, f"conv_transpose{self._dims}d")
        return conv(
            input, self.weight, self.bias, self.stride, self.padding, output_padding, self.groups, self.dilation
        )


class ConvTranspose1d(_ConvTranspose):
    """1-D transposed convolution."""

    _dims = 1


class ConvTranspose2d(_ConvTranspose):
    """2-D transposed convolution."""

    _dims = 2


class ConvTranspose3d(_ConvTranspose):
    """3-D transposed convolution."""

    _dims = 3
