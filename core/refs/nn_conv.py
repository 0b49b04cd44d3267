"""Convolutions (``torch.nn.functional.conv*``) as canonical ops over ``prims.convolution``.

``conv1d/2d/3d`` and ``conv_transpose1d/2d/3d`` accept batched ``(N, C, *spatial)`` or
unbatched ``(C, *spatial)`` inputs, as PyTorch does; ``convolution`` and
``_convolution`` (ATen's generic entries) take batched inputs only. The ``.padding``
overloads take ``"valid"`` (no padding) or ``"same"`` (output as large as the input;
stride 1 only; an odd total padding puts the extra element on the right, as PyTorch).
Inputs, weights and biases must share one floating dtype (complex allowed).

This module also holds the argument checks the pooling, padding and resampling
modules share (:func:`expand_arg`, :func:`check_spatial_input`).
"""

from __future__ import annotations

from .. import _dtype
from .._ops import canonical as ops
from .._ops import prims
from ..prims._utils import FLOATING
from ..prims.conv import conv_output_size, conv_transpose_output_size
from ._tensor_utils import squeeze, unsqueeze
from ._utils import define_with_variants, to_dtype


def expand_arg(op: str, name: str, values, d: int, minimum: int | None = None, allow_empty: bool = False) -> tuple:
    """A per-spatial-dim int list: ``d`` entries (or one, repeated), each ``>= minimum``.

    ``allow_empty``: ``[]`` is returned as ``()`` (pooling's "stride defaults to the kernel").
    """
    values = tuple(values)
    if allow_empty and not values:
        return ()
    if len(values) == 1:
        values = values * d
    if len(values) != d:
        raise ValueError(f"{op}: argument '{name}' must be a single int or a list of {d} ints, got {list(values)}")
    if minimum is not None and any(v < minimum for v in values):
        kind = "positive" if minimum == 1 else "non-negative"
        raise ValueError(f"{op}: argument '{name}' must be {kind}, got {list(values)}")
    return values


def check_spatial_input(op: str, x, d: int, name: str = "self", allow_empty_batch: bool = True) -> bool:
    """Check ``x`` is ``(C, *spatial)`` or ``(N, C, *spatial)`` with ``d`` spatial dims; returns whether batched.

    Every dim but the batch dim must be non-empty (ValueError otherwise).
    """
    if x.ndim not in (d + 1, d + 2):
        raise ValueError(
            f"{op}: expected a {d + 1}-D (unbatched) or {d + 2}-D (batched) tensor for argument '{name}', "
            f"got shape {list(x.shape)}"
        )
    batched = x.ndim == d + 2
    rest = x.shape[1:] if batched and allow_empty_batch else x.shape
    if any(s == 0 for s in rest):
        raise ValueError(f"{op}: argument '{name}' has an empty non-batch dim: shape {list(x.shape)}")
    return batched


def _check_tensors(op: str, input, weight, bias) -> None:
    for name, t in (("input", input), ("weight", weight), ("bias", bias)):
        if t is None:
            continue
        if t.dtype not in FLOATING and t.dtype not in _INTEGER:
            raise TypeError(f"{op}: argument '{name}' must be a numeric tensor, got {t.dtype.name}")
        if t.dtype is not input.dtype:
            raise TypeError(f"{op}: 'input' is {input.dtype.name} but '{name}' is {t.dtype.name}: they must match")


def _check_conv(op, input, weight, bias, stride, padding, dilation, transposed, output_padding, groups):
    """Validate a batched convolution with the canonical op's name; returns normalised int lists."""
    _check_tensors(op, input, weight, bias)
    d = input.ndim - 2
    if d not in (1, 2, 3):
        raise ValueError(f"{op}: 'input' must be (N, C, *spatial) with 1-3 spatial dims, got {list(input.shape)}")
    if weight.ndim != input.ndim:
        raise ValueError(
            f"{op}: argument 'weight' must have {input.ndim} dims like the (batched) input, got {list(weight.shape)}"
        )
    stride = expand_arg(op, "stride", stride, d, 1)
    padding = expand_arg(op, "padding", padding, d, 0)
    dilation = expand_arg(op, "dilation", dilation, d, 1)
    output_padding = expand_arg(op, "output_padding", output_padding, d, 0)
    if groups < 1:
        raise ValueError(f"{op}: argument 'groups' must be positive, got {groups}")
    c_in = input.shape[1]
    if c_in % groups:
        raise ValueError(f"{op}: input channels {c_in} are not divisible by groups={groups}")
    if any(s == 0 for s in input.shape[2:]) or any(k == 0 for k in weight.shape[2:]):
        raise ValueError(f"{op}: empty spatial dim: input {list(input.shape)}, weight {list(weight.shape)}")
    if transposed:
        if weight.shape[0] != c_in:
            raise ValueError(f"{op}: 'weight' {list(weight.shape)} must have {c_in} input channels in dim 0")
        c_out = weight.shape[1] * groups
    else:
        if weight.shape[0] % groups or weight.shape[0] == 0:
            raise ValueError(f"{op}: 'weight' output channels {weight.shape[0]} must be a positive multiple of groups")
        if weight.shape[1] * groups != c_in:
            raise ValueError(
                f"{op}: 'weight' {list(weight.shape)} expects {weight.shape[1] * groups} input channels, got {c_in}"
            )
        c_out = weight.shape[0]
    if bias is not None and tuple(bias.shape) != (c_out,):
        raise ValueError(f"{op}: argument 'bias' must have shape [{c_out}], got {list(bias.shape)}")
    for n, k, s, p, dl, opad in zip(input.shape[2:], weight.shape[2:], stride, padding, dilation, output_padding):
        if transposed:
            if opad >= s and opad >= dl:
                raise ValueError(f"{op}: output_padding {opad} must be smaller than stride {s} or dilation {dl}")
            size = conv_transpose_output_size(n, k, s, p, dl, opad)
        else:
            if n + 2 * p < dl * (k - 1) + 1:
                raise ValueError(
                    f"{op}: padded input size {n + 2 * p} is smaller than the dilated kernel size {dl * (k - 1) + 1}"
                )
            size = conv_output_size(n, k, s, p, dl)
        if size <= 0:
            raise ValueError(f"{op}: computed output size {size} is too small (input {list(input.shape)})")
    return stride, padding, dilation, output_padding


_INTEGER = (_dtype.uint8, _dtype.int8, _dtype.int16, _dtype.int32, _dtype.int64)


def _convolve(x, weight, bias, stride, padding, dilation, transposed, output_padding, groups):
    """``prims.convolution``; integer tensors (as PyTorch's CPU supports) go through float64 and back.

    The float64 sums are exact while every partial sum stays below 2**53 in magnitude; PyTorch's
    integer kernels wrap around on int64 overflow instead (see docs/differences.md).
    """
    if x.dtype not in _INTEGER:
        return prims.convolution(x, weight, bias, stride, padding, dilation, transposed, output_padding, groups)
    wide = [None if t is None else to_dtype(t, _dtype.float64) for t in (x, weight, bias)]
    y = prims.convolution(*wide, stride, padding, dilation, transposed, output_padding, groups)
    return to_dtype(prims.round(y), x.dtype)


def convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups):
    """N-d (1-3 spatial dims) cross-correlation of a batched ``input``, or its transpose when ``transposed``."""
    s, p, dl, op_ = _check_conv(
        "convolution", input, weight, bias, stride, padding, dilation, transposed, output_padding, groups
    )
    return _convolve(input, weight, bias, list(s), list(p), list(dl), transposed, list(op_), groups)


def _convolution(
    input,
    weight,
    bias,
    stride,
    padding,
    dilation,
    transposed,
    output_padding,
    groups,
    benchmark,
    deterministic,
    cudnn_enabled,
    allow_tf32,
):
    """``convolution`` with ATen's backend hints (benchmark, deterministic, cudnn_enabled, allow_tf32), ignored."""
    return convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups)


def _batched(op: str, input, weight, d: int):
    """``input`` with a batch dim (and whether one was added): (C, *S) becomes (1, C, *S)."""
    if input.ndim not in (d + 1, d + 2):
        raise ValueError(
            f"{op}: expected a {d + 1}-D (unbatched) or {d + 2}-D (batched) 'input', got shape {list(input.shape)}"
        )
    if input.ndim == d + 1:
        return unsqueeze(input, 0), True
    return input, False


def _conv_nd(op: str, d: int):
    def conv(input, weight, bias=None, stride=(1,), padding=(0,), dilation=(1,), groups=1):
        x, added = _batched(op, input, weight, d)
        s, p, dl, _ = _check_conv(op, x, weight, bias, stride, padding, dilation, False, (0,), groups)
        y = _convolve(x, weight, bias, list(s), list(p), list(dl), False, [0] * d, groups)
        return squeeze(y, 0) if added else y

    conv.__name__ = op
    conv.__doc__ = (
        f"{d}-D convolution (cross-correlation) of ``input`` (N, C_in, *S) or (C_in, *S) with ``weight`` "
        f"(C_out, C_in / groups, *k); optional ``bias`` (C_out,)."
    )
    return conv


def _conv_nd_padding(op: str, d: int):
    def conv(input, weight, bias=None, stride=(1,), padding="valid", dilation=(1,), groups=1):
        x, added = _batched(op, input, weight, d)
        stride = expand_arg(op, "stride", stride, d, 1)
        dilation = expand_arg(op, "dilation", dilation, d, 1)
        if padding == "valid":
            pads = [0] * d
        elif padding == "same":
            if any(s != 1 for s in stride):
                raise ValueError(f"{op}: padding='same' is not supported for strided convolutions")
            if weight.ndim != d + 2:
                raise ValueError(f"{op}: argument 'weight' must have {d + 2} dims, got {list(weight.shape)}")
            pads, extra = [], [0] * (2 * d)
            for i, (k, dl) in enumerate(zip(weight.shape[2:], dilation)):
                total = dl * (k - 1)
                pads.append(total // 2)
                extra[2 * (d - 1 - i) + 1] = total - 2 * (total // 2)
            if any(extra):
                _check_tensors(op, x, weight, bias)
                x = ops.constant_pad_nd(x, extra, 0)
        else:
            raise ValueError(f"{op}: argument 'padding' must be 'valid' or 'same', got {padding!r}")
        s, p, dl, _ = _check_conv(op, x, weight, bias, stride, pads, dilation, False, (0,), groups)
        y = _convolve(x, weight, bias, list(s), list(p), list(dl), False, [0] * d, groups)
        return squeeze(y, 0) if added else y

    conv.__name__ = f"{op}_padding"
    conv.__doc__ = f"{d}-D convolution with string ``padding``: ``'valid'`` (none) or ``'same'`` (stride 1 only)."
    return conv


def _conv_transpose_nd(op: str, d: int):
    def conv_transpose(
        input, weight, bias=None, stride=(1,), padding=(0,), output_padding=(0,), groups=1, dilation=(1,)
    ):
        x, added = _batched(op, input, weight, d)
        s, p, dl, opad = _check_conv(op, x, weight, bias, stride, padding, dilation, True, output_padding, groups)
        y = _convolve(x, weight, bias, list(s), list(p), list(dl), True, list(opad), groups)
        return squeeze(y, 0) if added else y

    conv_transpose.__name__ = op
    conv_transpose.__doc__ = (
        f"{d}-D transposed convolution of ``input`` (N, C_in, *S) or (C_in, *S) with ``weight`` "
        f"(C_in, C_out / groups, *k); ``output_padding`` adds to one side of the output."
    )
    return conv_transpose


def conv_tbc(self, weight, bias, pad=0):
    """Time-batch-channel 1-D convolution: ``self`` (T, B, C_in), ``weight`` (K, C_in, C_out), ``bias`` (C_out,)."""
    op = "conv_tbc"
    if self.ndim != 3 or weight.ndim != 3 or bias.ndim != 1:
        raise ValueError(
            f"{op}: expected 3-D 'self' and 'weight' and 1-D 'bias', got {list(self.shape)}, {list(weight.shape)} "
            f"and {list(bias.shape)}"
        )
    if self.shape[2] != weight.shape[1]:
        raise ValueError(f"{op}: input channels {self.shape[2]} must match dim 1 of 'weight' {list(weight.shape)}")
    if bias.shape[0] != weight.shape[2]:
        raise ValueError(f"{op}: 'bias' {list(bias.shape)} must match dim 2 of 'weight' {list(weight.shape)}")
    x = prims.transpose(self, [1, 2, 0])
    w = prims.transpose(weight, [2, 1, 0])
    s, p, dl, _ = _check_conv(op, x, w, bias, (1,), (pad,), (1,), False, (0,), 1)
    y = prims.convolution(x, w, bias, list(s), list(p), list(dl), False, [0], 1)
    return prims.clone(prims.transpose(y, [2, 0, 1]), memory_format="contiguous_format")


CONV_ARGS = "Tensor input, Tensor weight, Tensor? bias, SymInt[] stride, SymInt[] padding, SymInt[] dilation"
CONV_ARGS += ", bool transposed, SymInt[] output_padding, SymInt groups"


def _define():
    define_with_variants(f"convolution({CONV_ARGS}) -> Tensor", convolution, tags=("core",), inplace=False)
    define_with_variants(
        f"_convolution({CONV_ARGS}, bool benchmark, bool deterministic, bool cudnn_enabled, bool allow_tf32) -> Tensor",
        _convolution,
        inplace=False,
    )
    define_with_variants(
        "conv_tbc(Tensor self, Tensor weight, Tensor bias, int pad=0) -> Tensor", conv_tbc, inplace=False
    )
    for d in (1, 2, 3):
        define_with_variants(
            f"conv{d}d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[{d}] stride=1, SymInt[{d}] padding=0, "
            f"SymInt[{d}] dilation=1, SymInt groups=1) -> Tensor",
            _conv_nd(f"conv{d}d", d),
            inplace=False,
            out=False,
        )
        define_with_variants(
            f"conv{d}d.padding(Tensor input, Tensor weight, Tensor? bias=None, SymInt[{d}] stride=1, "
            f'str padding="valid", SymInt[{d}] dilation=1, SymInt groups=1) -> Tensor',
            _conv_nd_padding(f"conv{d}d", d),
            inplace=False,
            out=False,
        )
        overload = "" if d == 1 else ".input"
        define_with_variants(
            f"conv_transpose{d}d{overload}(Tensor input, Tensor weight, Tensor? bias=None, SymInt[{d}] stride=1, "
            f"SymInt[{d}] padding=0, SymInt[{d}] output_padding=0, SymInt groups=1, SymInt[{d}] dilation=1) -> Tensor",
            _conv_transpose_nd(f"conv_transpose{d}d", d),
            inplace=False,
            out=False,
        )


_define()
