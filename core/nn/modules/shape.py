"""Flatten, Unflatten, Upsample, PixelShuffle/Unshuffle, ChannelShuffle and the padding modules."""

from __future__ import annotations

from .. import functional as F
from .module import Module

__all__ = [
    "Flatten",
    "Unflatten",
    "Upsample",
    "UpsamplingNearest2d",
    "UpsamplingBilinear2d",
    "PixelShuffle",
    "PixelUnshuffle",
    "ChannelShuffle",
    "ConstantPad1d",
    "ConstantPad2d",
    "ConstantPad3d",
    "ZeroPad1d",
    "ZeroPad2d",
    "ZeroPad3d",
    "ReflectionPad1d",
    "ReflectionPad2d",
    "ReflectionPad3d",
    "ReplicationPad1d",
    "ReplicationPad2d",
    "ReplicationPad3d",
    "CircularPad1d",
    "CircularPad2d",
    "CircularPad3d",
]


class Flatten(Module):
    """Flatten dims ``start_dim`` to ``end_dim`` (default: all but the batch dim)."""

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, input):
        """``input.flatten(start_dim, end_dim)``."""
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Expand dim ``dim`` into ``unflattened_size``."""

    def __init__(self, dim: int | str, unflattened_size) -> None:
        super().__init__()
        if isinstance(dim, str):
            raise NotImplementedError("Unflatten: named dimensions are not supported")
        if not isinstance(unflattened_size, (tuple, list)) or not all(isinstance(s, int) for s in unflattened_size):
            raise TypeError(f"unflattened_size must be tuple of ints, but found type {type(unflattened_size).__name__}")
        self.dim = dim
        self.unflattened_size = tuple(unflattened_size)

    def forward(self, input):
        """``input.unflatten(dim, unflattened_size)``."""
        return input.unflatten(self.dim, self.unflattened_size)

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"


class Upsample(Module):
    """Resize spatial dims by ``size`` or ``scale_factor`` with ``mode`` (``F.interpolate``)."""

    def __init__(
        self, size=None, scale_factor=None, mode: str = "nearest", align_corners=None, recompute_scale_factor=None
    ) -> None:
        super().__init__()
        self.name = type(self).__name__
        self.size = size
        self.scale_factor = float(scale_factor) if isinstance(scale_factor, (int, float)) else scale_factor
        self.mode = mode
        self.align_corners = align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input):
        """Interpolate ``input``."""
        return F.interpolate(
            input,
            self.size,
            self.scale_factor,
            self.mode,
            self.align_corners,
            recompute_scale_factor=self.recompute_scale_factor,
        )

    def extra_repr(self) -> str:
        if self.scale_factor is not None:
            info = "scale_factor=" + repr(self.scale_factor)
        else:
            info = "size=" + repr(self.size)
        return info + ", mode=" + repr(self.mode)


class UpsamplingNearest2d(Upsample):
    """Nearest-neighbour 2-D upsampling."""

    def __init__(self, size=None, scale_factor=None) -> None:
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """Bilinear 2-D upsampling with ``align_corners=True``."""

    def __init__(self, size=None, scale_factor=None) -> None:
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)


class PixelShuffle(Module):
    """(*, C r², H, W) → (*, C, H r, W r)."""

    def __init__(self, upscale_factor: int) -> None:
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input):
        """Rearrange channels into space."""
        return F.pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self) -> str:
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    """(*, C, H r, W r) → (*, C r², H, W)."""

    def __init__(self, downscale_factor: int) -> None:
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input):
        """Rearrange space into channels."""
        return F.pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self) -> str:
        return f"downscale_factor={self.downscale_factor}"


class ChannelShuffle(Module):
    """Shuffle channels in ``groups``."""

    def __init__(self, groups: int) -> None:
        super().__init__()
        self.groups = groups

    def forward(self, input):
        """Rearrange channels."""
        return F.channel_shuffle(input, self.groups)

    def extra_repr(self) -> str:
        return f"groups={self.groups}"


def _pad_tuple(padding, n: int) -> tuple:
    if isinstance(padding, int):
        return (padding,) * (2 * n)
    padding = tuple(padding)
    if len(padding) != 2 * n:
        raise ValueError(f"padding must be an int or a tuple of {2 * n} ints, got {padding}")
    return padding


class _PadNd(Module):
    _dims = 0
    _mode = "constant"

    def __init__(self, padding) -> None:
        super().__init__()
        self.padding = _pad_tuple(padding, self._dims)

    def forward(self, input):
        """Pad the last dims."""
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    def __init__(self, padding, value: float) -> None:
        super().__init__(padding)
        self.value = value

    def forward(self, input):
        """Pad the last dims with ``value``."""
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    """Pad the last dim with a constant."""

    _dims = 1


class ConstantPad2d(_ConstantPadNd):
    """Pad the last 2 dims with a constant."""

    _dims = 2


class ConstantPad3d(_ConstantPadNd):
    """Pad the last 3 dims with a constant."""

    _dims = 3


class _ZeroPadNd(_ConstantPadNd):
    def __init__(self, padding) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ZeroPad1d(_ZeroPadNd):
    """Pad the last dim with zeros."""

    _dims = 1


class ZeroPad2d(_ZeroPadNd):
    """Pad the last 2 dims with zeros."""

    _dims = 2


class ZeroPad3d(_ZeroPadNd):
    """Pad the last 3 dims with zeros."""

    _dims = 3


class ReflectionPad1d(_PadNd):
    """Reflection padding of the last dim."""

    _dims, _mode = 1, "reflect"


class ReflectionPad2d(_PadNd):
    """Reflection padding of the last 2 dims."""

    _dims, _mode = 2, "reflect"


class ReflectionPad3d(_PadNd):
    """Reflection padding of the last 3 dims."""

    _dims, _mode = 3, "reflect"


class ReplicationPad1d(_PadNd):
    """Edge-replicating padding of the last dim."""

    _dims, _mode = 1, "replicate"


class ReplicationPad2d(_PadNd):
    """Edge-replicating padding of the last 2 dims."""

    _dims, _mode = 2, "replicate"


class ReplicationPad3d(_PadNd):
    """Edge-replicating padding of the last 3 dims."""

    _dims, _mode = 3, "replicate"


class CircularPad1d(_PadNd):
    """Circular padding of the last dim."""

    _dims, _mode = 1, "circular"


class CircularPad2d(_PadNd):
    """Circular padding of the last 2 dims."""

    _dims, _mode = 2, "circular"


class CircularPad3d(_PadNd):
    """Circular padding of the last 3 dims."""

    _dims, _mode = 3, "circular"
