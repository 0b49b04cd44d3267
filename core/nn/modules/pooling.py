"""Max, average, adaptive and Lp pooling modules over ``opweave.nn.functional``."""

from __future__ import annotations

from .. import functional as F
from .module import Module

__all__ = [
    "MaxPool1d",
    "MaxPool2d",
    "MaxPool3d",
    "AvgPool1d",
    "AvgPool2d",
    "AvgPool3d",
    "AdaptiveAvgPool1d",
    "AdaptiveAvgPool2d",
    "AdaptiveAvgPool3d",
    "AdaptiveMaxPool1d",
    "AdaptiveMaxPool2d",
    "AdaptiveMaxPool3d",
    "LPPool1d",
    "LPPool2d",
    "LPPool3d",
    "MaxUnpool1d",
    "MaxUnpool2d",
    "MaxUnpool3d",
]


class _MaxPoolNd(Module):
    _dims = 0

    def __init__(
        self, kernel_size, stride=None, padding=0, dilation=1, return_indices: bool = False, ceil_mode: bool = False
    ) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if (stride is not None) else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def forward(self, input):
        """Max over each window (and the flat indices of the maxima with ``return_indices``)."""
        fn = getattr(F, f"max_pool{self._dims}d")
        return fn(
            input,
            self.kernel_size,
            self.stride,
            self.padding,
            self.dilation,
            ceil_mode=self.ceil_mode,
            return_indices=self.return_indices,
        )

    def extra_repr(self) -> str:
        return (
            "kernel_size={kernel_size}, stride={stride}, padding={padding}, dilation={dilation}, "
            "ceil_mode={ceil_mode}".format(**self.__dict__)
        )


class MaxPool1d(_MaxPoolNd):
    """1-D max pooling."""

    _dims = 1


class MaxPool2d(_MaxPoolNd):
    """2-D max pooling."""

    _dims = 2


class MaxPool3d(_MaxPoolNd):
    """3-D max pooling."""

    _dims = 3


class AvgPool1d(Module):
    """1-D average pooling."""

    def __init__(
        self, kernel_size, stride=None, padding=0, ceil_mode: bool = False, count_include_pad: bool = True
    ) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if (stride is not None) else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad

    def forward(self, input):
        """Mean over each window."""
        return F.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode, self.count_include_pad)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class _AvgPoolNd(Module):
    _dims = 0

    def __init__(
        self,
        kernel_size,
        stride=None,
        padding=0,
        ceil_mode: bool = False,
        count_include_pad: bool = True,
        divisor_override=None,
    ) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if (stride is not None) else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input):
        """Mean over each window (or sum / ``divisor_override``)."""
        fn = getattr(F, f"avg_pool{self._dims}d")
        return fn(
            input,
            self.kernel_size,
            self.stride,
            self.padding,
            self.ceil_mode,
            self.count_include_pad,
            self.divisor_override,
        )

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool2d(_AvgPoolNd):
    """2-D average pooling."""

    _dims = 2


class AvgPool3d(_AvgPoolNd):
    """3-D average pooling."""

    _dims = 3


class _AdaptiveAvgPoolNd(Module):
    _dims = 0

    def __init__(self, output_size) -> None:
        super().__init__()
        self.output_size = output_size

    def forward(self, input):
        """Mean over adaptive windows giving ``output_size``."""
        return getattr(F, f"adaptive_avg_pool{self._dims}d")(input, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(_AdaptiveAvgPoolNd):
    """1-D adaptive average pooling."""

    _dims = 1


class AdaptiveAvgPool2d(_AdaptiveAvgPoolNd):
    """2-D adaptive average pooling."""

    _dims = 2


class AdaptiveAvgPool3d(_AdaptiveAvgPoolNd):
    """3-D adaptive average pooling."""

    _dims = 3


class _AdaptiveMaxPoolNd(Module):
    _dims = 0

    def __init__(self, output_size, return_indices: bool = False) -> None:
        super().__init__()
        self.output_size = output_size
        self.return_indices = return_indices

    def forward(self, input):
        """Max over adaptive windows giving ``output_size``."""
        return getattr(F, f"adaptive_max_pool{self._dims}d")(input, self.output_size, self.return_indices)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveMaxPool1d(_AdaptiveMaxPoolNd):
    """1-D adaptive max pooling."""

    _dims = 1


class AdaptiveMaxPool2d(_AdaptiveMaxPoolNd):
    """2-D adaptive max pooling."""

    _dims = 2


class AdaptiveMaxPool3d(_AdaptiveMaxPoolNd):
    """3-D adaptive max pooling."""

    _dims = 3


class _LPPoolNd(Module):
    _dims = 0

    def __init__(self, norm_type: float, kernel_size, stride=None, ceil_mode: bool = False) -> None:
        super().__init__()
        self.norm_type = norm_type
        self.kernel_size = kernel_size
        self.stride = stride
        self.ceil_mode = ceil_mode

    def forward(self, input):
        """``(Σ x^p)^(1/p)`` over each window."""
        return getattr(F, f"lp_pool{self._dims}d")(
            input, float(self.norm_type), self.kernel_size, self.stride, self.ceil_mode
        )

    def extra_repr(self) -> str:
        return "norm_type={norm_type}, kernel_size={kernel_size}, stride={stride}, ceil_mode={ceil_mode}".format(
            **self.__dict__
        )


class LPPool1d(_LPPoolNd):
    """1-D power-average pooling."""

    _dims = 1


class LPPool2d(_LPPoolNd):
    """2-D power-average pooling."""

    _dims = 2


class LPPool3d(_LPPoolNd):
    """3-D power-average pooling."""

    _dims = 3


class _MaxUnpoolNd(Module):
    _dims = 0

    def __init__(self, kernel_size, stride=None, padding=0) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if (stride is not None) else kernel_size
        self.padding = padding

    def forward(self, input, indices, output_size=None):
        """Scatter ``input`` to the positions of ``indices`` (the inverse of max pooling)."""
        fn = getattr(F, f"max_unpool{self._dims}d")
        return fn(input, indices, self.kernel_size, self.stride, self.padding, output_size)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpoolNd):
    """1-D max unpooling."""

    _dims = 1


class MaxUnpool2d(_MaxUnpoolNd):
    """2-D max unpooling."""

    _dims = 2


class MaxUnpool3d(_MaxUnpoolNd):
    """3-D max unpooling."""

    _dims = 3
