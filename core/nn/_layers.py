"""nn.functional: convolution, pooling, unfold/fold, pixel shuffle, padding and resampling.

Where PyTorch's ``torch.nn.functional`` signature is the ATen schema, the function is the
op packet itself (``conv2d = canonical.conv2d``; the packet picks the ``.padding``
overload for a string ``padding``). The others are thin wrappers with F's signature:
pools take ``stride=None`` (the kernel size) and ``return_indices``; ``max_unpool*``
computes the default output size; ``lp_pool*``, ``interpolate``, ``grid_sample`` and
``affine_grid`` translate their Python-level arguments and call canonical ops.
"""

from __future__ import annotations

import math
import numbers
import warnings

from .._ops import canonical
from ..errors import ValueRuntimeError

__all__ = [
    "conv1d",
    "conv2d",
    "conv3d",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv_transpose3d",
    "avg_pool1d",
    "avg_pool2d",
    "avg_pool3d",
    "max_pool1d",
    "max_pool2d",
    "max_pool3d",
    "max_pool1d_with_indices",
    "max_pool2d_with_indices",
    "max_pool3d_with_indices",
    "adaptive_avg_pool1d",
    "adaptive_avg_pool2d",
    "adaptive_avg_pool3d",
    "adaptive_max_pool1d",
    "adaptive_max_pool2d",
    "adaptive_max_pool3d",
    "adaptive_max_pool1d_with_indices",
    "adaptive_max_pool2d_with_indices",
    "adaptive_max_pool3d_with_indices",
    "max_unpool1d",
    "max_unpool2d",
    "max_unpool3d",
    "fractional_max_pool2d",
    "fractional_max_pool3d",
    "fractional_max_pool2d_with_indices",
    "fractional_max_pool3d_with_indices",
    "lp_pool1d",
    "lp_pool2d",
    "lp_pool3d",
    "unfold",
    "fold",
    "pixel_shuffle",
    "pixel_unshuffle",
    "channel_shuffle",
    "native_channel_shuffle",
    "pad",
    "interpolate",
    "upsample",
    "upsample_nearest",
    "upsample_bilinear",
    "grid_sample",
    "affine_grid",
]

conv1d = canonical.conv1d
conv2d = canonical.conv2d
conv3d = canonical.conv3d
conv_transpose1d = canonical.conv_transpose1d
conv_transpose2d = canonical.conv_transpose2d
conv_transpose3d = canonical.conv_transpose3d
pixel_shuffle = canonical.pixel_shuffle
pixel_unshuffle = canonical.pixel_unshuffle
channel_shuffle = canonical.channel_shuffle
native_channel_shuffle = canonical.native_channel_shuffle


def _stride(stride):
    return [] if stride is None else stride


# -- pooling ---------------------------------------------------------------------------------


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    """1-D average pooling; ``stride`` defaults to ``kernel_size``."""
    return canonical.avg_pool1d(input, kernel_size, _stride(stride), padding, ceil_mode, count_include_pad)


def avg_pool2d(
    input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True, divisor_override=None
):
    """2-D average pooling; ``stride`` defaults to ``kernel_size``."""
    return canonical.avg_pool2d(
        input, kernel_size, _stride(stride), padding, ceil_mode, count_include_pad, divisor_override
    )


def avg_pool3d(
    input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True, divisor_override=None
):
    """3-D average pooling; ``stride`` defaults to ``kernel_size``."""
    return canonical.avg_pool3d(
        input, kernel_size, _stride(stride), padding, ceil_mode, count_include_pad, divisor_override
    )


def _max_pool(d: int, with_indices_default: bool):
    def max_pool(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
        values, indices = getattr(canonical, f"max_pool{d}d_with_indices")(
            input, kernel_size, _stride(stride), padding, dilation, ceil_mode
        )
        return (values, indices) if return_indices or with_indices_default else values

    max_pool.__name__ = f"max_pool{d}d" + ("_with_indices" if with_indices_default else "")
    max_pool.__doc__ = (
        f"{d}-D max pooling; ``stride`` defaults to ``kernel_size``; ``return_indices`` also returns the int64 "
        "flat indices of the maxima in each plane."
    )
    return max_pool


max_pool1d, max_pool2d, max_pool3d = (_max_pool(d, False) for d in (1, 2, 3))
max_pool1d_with_indices, max_pool2d_with_indices, max_pool3d_with_indices = (_max_pool(d, True) for d in (1, 2, 3))


def _adaptive_size(input, output_size, d: int) -> list:
    """F's ``output_size``: an int or a list whose None entries keep the input's size."""
    if isinstance(output_size, numbers.Integral) or output_size is None:
        output_size = [output_size] * d
    output_size = list(output_size)
    if len(output_size) != d:
        raise ValueRuntimeError(f"adaptive_pool{d}d: 'output_size' must have {d} elements, got {output_size}")
    return [input.shape[input.ndim - d + i] if s is None else s for i, s in enumerate(output_size)]


def adaptive_avg_pool1d(input, output_size):
    """1-D adaptive average pooling."""
    return canonical.adaptive_avg_pool1d(input, _adaptive_size(input, output_size, 1))


def adaptive_avg_pool2d(input, output_size):
    """2-D adaptive average pooling (None in ``output_size`` keeps that input size)."""
    return canonical.adaptive_avg_pool2d(input, _adaptive_size(input, output_size, 2))


def adaptive_avg_pool3d(input, output_size):
    """3-D adaptive average pooling (None in ``output_size`` keeps that input size)."""
    return canonical.adaptive_avg_pool3d(input, _adaptive_size(input, output_size, 3))


def _adaptive_max(d: int, with_indices_default: bool):
    def adaptive_max_pool(input, output_size, return_indices=False):
        values, indices = getattr(canonical, f"adaptive_max_pool{d}d")(input, _adaptive_size(input, output_size, d))
        return (values, indices) if return_indices or with_indices_default else values

    adaptive_max_pool.__name__ = f"adaptive_max_pool{d}d" + ("_with_indices" if with_indices_default else "")
    adaptive_max_pool.__doc__ = f"{d}-D adaptive max pooling; ``return_indices`` also returns the int64 indices."
    return adaptive_max_pool


adaptive_max_pool1d, adaptive_max_pool2d, adaptive_max_pool3d = (_adaptive_max(d, False) for d in (1, 2, 3))
adaptive_max_pool1d_with_indices, adaptive_max_pool2d_with_indices, adaptive_max_pool3d_with_indices = (
    _adaptive_max(d, True) for d in (1, 2, 3)
)


def _tuple(value, d: int) -> list:
    return [value] * d if isinstance(value, numbers.Integral) else list(value)


def _unpool_size(op, input, kernel_size, stride, padding, output_size, d: int) -> list:
    """PyTorch's ``_unpool_output_size``: the default is ``(in - 1) * stride - 2 * padding + kernel``."""
    kernel_size = _tuple(kernel_size, d)
    stride = kernel_size if stride is None else _tuple(stride, d)
    padding = _tuple(padding, d)
    spatial = list(input.shape[input.ndim - d :])
    default = [(n - 1) * s - 2 * p + k for n, s, p, k in zip(spatial, stride, padding, kernel_size)]
    if output_size is None:
        return default, stride, padding
    output_size = list(output_size)
    if len(output_size) == d + 2 or (len(output_size) == d + 1 and input.ndim == d + 1):
        output_size = output_size[len(output_size) - d :]
    if len(output_size) != d:
        raise ValueError(f"{op}: output_size must have {d} or {d + 2} elements, got {len(output_size)}")
    for i, (n, base, s) in enumerate(zip(output_size, default, stride)):
        if not base - s < n < base + s:
            raise ValueError(
                f'{op}: invalid output_size "{output_size}" (dim {i} must be between {base - s} and {base + s})'
            )
    return output_size, stride, padding


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """Inverse of ``max_pool1d``: zeros with ``input``'s values placed at ``indices``."""
    size, _, _ = _unpool_size("max_unpool1d", input, kernel_size, stride, padding, output_size, 1)
    out = canonical.max_unpool2d(canonical.unsqueeze(input, -1), canonical.unsqueeze(indices, -1), [size[0], 1])
    return canonical.squeeze(out, -1)


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """Inverse of ``max_pool2d``: zeros with ``input``'s values placed at ``indices``."""
    size, _, _ = _unpool_size("max_unpool2d", input, kernel_size, stride, padding, output_size, 2)
    return canonical.max_unpool2d(input, indices, size)


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """Inverse of ``max_pool3d``: zeros with ``input``'s values placed at ``indices``."""
    size, stride, padding = _unpool_size("max_unpool3d", input, kernel_size, stride, padding, output_size, 3)
    return canonical.max_unpool3d(input, indices, size, stride, padding)


def _fractional(d: int, with_indices_default: bool):
    def fractional_max_pool(
        input, kernel_size, output_size=None, output_ratio=None, return_indices=False, _random_samples=None
    ):
        name = f"fractional_max_pool{d}d"
        if output_size is None and output_ratio is None:
            raise ValueError(f"{name} requires specifying either an output_size or an output_ratio")
        if output_size is None:
            ratios = _tuple(output_ratio, d) if not isinstance(output_ratio, float) else [output_ratio] * d
            output_size = [int(input.shape[input.ndim - d + i] * r) for i, r in enumerate(ratios)]
        if _random_samples is None:
            n_batch = 1 if input.ndim == d + 1 else input.shape[0]
            _random_samples = canonical.rand(
                n_batch, input.shape[input.ndim - d - 1], d, dtype=input.dtype, device=input.device
            )
        values, indices = getattr(canonical, name)(input, kernel_size, output_size, _random_samples)
        return (values, indices) if return_indices or with_indices_default else values

    fractional_max_pool.__name__ = f"fractional_max_pool{d}d" + ("_with_indices" if with_indices_default else "")
    fractional_max_pool.__doc__ = (
        f"{d}-D fractional max pooling to ``output_size`` (or ``output_ratio`` of the input); the window starts "
        "come from ``_random_samples`` (drawn with ``rand`` when not given)."
    )
    return fractional_max_pool


fractional_max_pool2d, fractional_max_pool3d = (_fractional(d, False) for d in (2, 3))
fractional_max_pool2d_with_indices, fractional_max_pool3d_with_indices = (_fractional(d, True) for d in (2, 3))


def _lp_pool(d: int):
    def lp_pool(input, norm_type, kernel_size, stride=None, ceil_mode=False):
        kernel = _tuple(kernel_size, d)
        avg = getattr(canonical, f"avg_pool{d}d")
        out = avg(canonical.pow(input, norm_type), kernel, _stride(stride), 0, ceil_mode)
        count = math.prod(kernel)
        out = canonical.mul(canonical.mul(canonical.sign(out), canonical.relu(canonical.abs(out))), count)
        return canonical.pow(out, 1.0 / norm_type)

    lp_pool.__name__ = f"lp_pool{d}d"
    lp_pool.__doc__ = f"{d}-D power-average pooling: ``(sum over the window of x ** p) ** (1 / p)``."
    return lp_pool


lp_pool1d, lp_pool2d, lp_pool3d = (_lp_pool(d) for d in (1, 2, 3))


# -- unfold / fold / pad -------------------------------------------------------------------------


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """Sliding local blocks of a (N, C, H, W) or (C, H, W) tensor as columns (``im2col``)."""
    return canonical.im2col(input, kernel_size, dilation, padding, stride)


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """Sum columns back into an image of ``output_size`` (``col2im``)."""
    return canonical.col2im(input, output_size, kernel_size, dilation, padding, stride)


def pad(input, pad, mode="constant", value=None):  # noqa: A002 - PyTorch's argument name
    """Pad ``input``: ``pad`` = (left, right) pairs from the last dim; mode constant/reflect/replicate/circular."""
    return canonical.pad(input, pad, mode, value)


# -- resampling ----------------------------------------------------------------------------------

_INTERPOLATING = ("linear", "bilinear", "bicubic", "trilinear")
_NEEDS = {"linear": 3, "bilinear": 4, "bicubic": 4, "trilinear": 5}


def interpolate(
    input,
    size=None,
    scale_factor=None,
    mode="nearest",
    align_corners=None,
    recompute_scale_factor=None,
    antialias=False,
):
    """Resize the spatial dims of an (N, C, *S) tensor to ``size`` or by ``scale_factor`` (PyTorch's rules)."""
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError(
                "interpolate: align_corners option can only be set with the interpolating modes: "
                "linear | bilinear | bicubic | trilinear"
            )
    elif align_corners is None:
        align_corners = False
    dim = input.ndim - 2
    scale_factors = output_size = None
    if size is not None and scale_factor is not None:
        raise ValueError("interpolate: only one of size or scale_factor should be defined")
    if size is not None:
        if isinstance(size, (list, tuple)):
            if len(size) != dim:
                raise ValueError(
                    f"interpolate: input and output must have the same number of spatial dimensions, but got input "
                    f"with spatial dimensions of {list(input.shape[2:])} and output size of {list(size)}"
                )
            output_size = list(size)
        else:
            output_size = [size] * dim
    elif scale_factor is not None:
        if isinstance(scale_factor, (list, tuple)):
            if len(scale_factor) != dim:
                raise ValueError(
                    f"interpolate: input and scale_factor must have the same number of spatial dimensions, but got "
                    f"input with spatial dimensions of {list(input.shape[2:])} and scale_factor of {list(scale_factor)}"
                )
            scale_factors = [float(s) for s in scale_factor]
        else:
            scale_factors = [float(scale_factor)] * dim
    else:
        raise ValueError("interpolate: either size or scale_factor should be defined")
    if recompute_scale_factor and size is not None:
        raise ValueError("interpolate: recompute_scale_factor is not meaningful with an explicit size")
    if mode == "area" and output_size is None:
        recompute_scale_factor = True
    if recompute_scale_factor:
        output_size = [math.floor(float(input.shape[i + 2] * scale_factors[i])) for i in range(dim)]
        scale_factors = None
    if antialias:
        if not (mode in ("bilinear", "bicubic") and input.ndim == 4):
            raise ValueError(
                "interpolate: anti-alias option is restricted to bilinear and bicubic modes and requires a 4-D input"
            )
        name = "_upsample_bilinear2d_aa" if mode == "bilinear" else "_upsample_bicubic2d_aa"
        return getattr(canonical, name)(input, output_size, align_corners, scale_factors)
    if input.ndim in (3, 4, 5):
        d = input.ndim - 2
        if mode == "nearest":
            return getattr(canonical, f"upsample_nearest{d}d")(input, output_size, scale_factors)
        if mode == "nearest-exact":
            return getattr(canonical, f"_upsample_nearest_exact{d}d")(input, output_size, scale_factors)
        if mode == "area":
            return getattr(canonical, f"adaptive_avg_pool{d}d")(input, output_size)
        if mode in _NEEDS and _NEEDS[mode] == input.ndim:
            name = {"linear": "upsample_linear1d", "bilinear": "upsample_bilinear2d"}.get(mode)
            name = name or {"bicubic": "upsample_bicubic2d", "trilinear": "upsample_trilinear3d"}[mode]
            return getattr(canonical, name)(input, output_size, align_corners, scale_factors)
        if mode in _NEEDS:
            raise NotImplementedError(
                f"interpolate: got {input.ndim}-D input, but {mode} mode needs {_NEEDS[mode]}-D input"
            )
    if mode not in ("nearest", "nearest-exact", "area") + _INTERPOLATING:
        raise NotImplementedError(
            f"interpolate: mode {mode!r} is not one of nearest | linear | bilinear | bicubic | trilinear | area | "
            "nearest-exact"
        )
    raise NotImplementedError(
        f"interpolate: only 3-D, 4-D and 5-D input tensors are supported (got {input.ndim}-D) for mode {mode!r}"
    )


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    """Deprecated alias of :func:`interpolate` (warns, as PyTorch)."""
    warnings.warn("nn.functional.upsample is deprecated. Use nn.functional.interpolate instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    """Deprecated: ``interpolate(input, size, scale_factor, mode="nearest")``."""
    warnings.warn("nn.functional.upsample_nearest is deprecated. Use nn.functional.interpolate instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    """Deprecated: ``interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)``."""
    warnings.warn("nn.functional.upsample_bilinear is deprecated. Use nn.functional.interpolate instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


# -- spatial transformers --------------------------------------------------------------------------

_GRID_MODES = {"bilinear": 0, "nearest": 1, "bicubic": 2}
_GRID_PADDING = {"zeros": 0, "border": 1, "reflection": 2}


def _align_default(op: str, align_corners):
    if align_corners is None:
        warnings.warn(
            f"Default {op} behavior has changed to align_corners=False since PyTorch 1.3.0. "
            "Please specify align_corners=True if the old behavior is desired.",
            UserWarning,
            stacklevel=3,
        )
        return False
    return align_corners


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    """Sample ``input`` at ``grid`` locations in [-1, 1] (modes bilinear/nearest/bicubic; zeros/border/reflection)."""
    if mode not in _GRID_MODES:
        raise ValueError(f"grid_sample: expected mode to be 'bilinear', 'nearest' or 'bicubic', but got: '{mode}'")
    if padding_mode not in _GRID_PADDING:
        raise ValueError(
            f"grid_sample: expected padding_mode to be 'zeros', 'border', or 'reflection', but got: '{padding_mode}'"
        )
    if mode == "bicubic" and input.ndim != 4:
        raise ValueError("grid_sample: bicubic interpolation only supports 4-D input")
    align_corners = _align_default("grid_sample", align_corners)
    return canonical.grid_sampler(input, grid, _GRID_MODES[mode], _GRID_PADDING[padding_mode], align_corners)


def affine_grid(theta, size, align_corners=None):
    """Sampling grid of the affine maps ``theta`` for an output of ``size`` (N, C, H, W) or (N, C, D, H, W)."""
    align_corners = _align_default("affine_grid", align_corners)
    size = list(size)
    if align_corners and len(size) in (4, 5) and min(size[2:]) == 1:
        warnings.warn(
            "Since version 1.3.0, affine_grid behavior has changed for unit-size grids when align_corners=True.",
            UserWarning,
            stacklevel=2,
        )
    if len(size) not in (4, 5):
        raise NotImplementedError(f"affine_grid only supports 4D and 5D sizes, got size {size}")
    if min(size) <= 0:
        raise ValueError(f"affine_grid: expected non-zero, positive output size, got {size}")
    return canonical.affine_grid_generator(theta, size, align_corners)
