"""Convolution and pooling prims, PyTorch semantics (N-d: 1, 2 or 3 spatial dims).

Integer-list arguments (stride, padding, ...) take one entry per spatial dim or a
single entry used for every dim. Output sizes follow PyTorch's formulas exactly:

- convolution: ``(in + 2p - d(k-1) - 1) // s + 1``; transposed:
  ``(in - 1) s - 2p + d(k-1) + output_padding + 1``;
- pooling: ``floor_or_ceil((in + 2p - d(k-1) - 1) / s) + 1``, and in ceil mode the last
  window must start inside the input or the left padding (else one fewer output);
- adaptive pooling: output ``i`` covers ``[floor(i in / out), ceil((i+1) in / out))``.

Max-pool indices are int64 flat offsets within each spatial plane (as torch); a NaN
in a window wins (the last NaN, as torch's CPU kernels), ties go to the first maximum.
"""

from __future__ import annotations

from .. import _dtype
from .._meta import empty as meta_empty
from .._ops import define_prim
from ._utils import FLOAT, FLOATING, REAL, check_dtype, check_tensor, same_device


def _expand(op: str, name: str, values, d: int, minimum: int) -> tuple:
    """A per-spatial-dim int list: ``d`` entries (or one, repeated), each ``>= minimum``."""
    values = tuple(values)
    if len(values) == 1:
        values = values * d
    if len(values) != d:
        raise ValueError(f"{op}: argument '{name}' needs 1 or {d} entries, got {list(values)}")
    if any(v < minimum for v in values):
        raise ValueError(f"{op}: argument '{name}' entries must be >= {minimum}, got {list(values)}")
    return values


def _spatial(op: str, name: str, t, d: int, min_ndim: int) -> tuple:
    """The trailing ``d`` sizes of ``t`` (ValueError if ``t`` has fewer than ``min_ndim`` dims or one is 0)."""
    if t.ndim < min_ndim:
        raise ValueError(f"{op}: argument '{name}' needs at least {min_ndim} dims, got shape {list(t.shape)}")
    sizes = tuple(t.shape[t.ndim - d :])
    if any(s == 0 for s in sizes):
        raise ValueError(f"{op}: argument '{name}' has an empty spatial dim: shape {list(t.shape)}")
    return sizes


def conv_output_size(n: int, k: int, s: int, p: int, d: int) -> int:
    """Output length of a convolution along one dim."""
    return (n + 2 * p - d * (k - 1) - 1) // s + 1


def conv_transpose_output_size(n: int, k: int, s: int, p: int, d: int, output_padding: int) -> int:
    """Output length of a transposed convolution along one dim."""
    return (n - 1) * s - 2 * p + d * (k - 1) + output_padding + 1


def pool_output_size(n: int, k: int, s: int, p: int, d: int, ceil_mode: bool) -> int:
    """Output length of a pooling window along one dim (torch's pooling_output_shape)."""
    out = (n + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)) // s + 1
    if ceil_mode and (out - 1) * s >= n + p:
        out -= 1
    return out


def _conv_channels(op: str, x, w, transposed: bool, groups: int) -> int:
    """Validate channel counts against ``groups``; returns C_out."""
    c_in = x.shape[1]
    if groups < 1:
        raise ValueError(f"{op}: argument 'groups' must be positive, got {groups}")
    if c_in % groups:
        raise ValueError(f"{op}: input channels {c_in} are not divisible by groups={groups}")
    if transposed:
        if w.shape[0] != c_in:
            raise ValueError(f"{op}: 'weight' {list(w.shape)} must have {c_in} input channels (dim 0) when transposed")
        return w.shape[1] * groups
    if w.shape[0] % groups:
        raise ValueError(f"{op}: output channels {w.shape[0]} are not divisible by groups={groups}")
    if w.shape[1] * groups != c_in:
        raise ValueError(f"{op}: 'weight' {list(w.shape)} expects {w.shape[1] * groups} input channels, got {c_in}")
    return w.shape[0]


def convolution_meta(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups):
    """N-d convolution (cross-correlation, no kernel flip, no conjugation), PyTorch's ``convolution``.

    ``input`` (N, C_in, *spatial) with 1-3 spatial dims; ``weight`` (C_out, C_in / groups, *k),
    or (C_in, C_out / groups, *k) when ``transposed``; ``bias`` (C_out,) or None. Floating
    dtypes (complex too), all the same. ``output_padding`` (transposed only) must be smaller
    than stride or dilation. ValueError if the (padded) input is smaller than the dilated kernel.
    """
    op = "prims::convolution"
    tensors, names = [input, weight], ["input", "weight"]
    if bias is not None:
        tensors.append(bias)
        names.append("bias")
    for name, t in zip(names, tensors):
        check_tensor(op, name, t)
        check_dtype(op, name, t, FLOATING)
        if t.dtype is not input.dtype:
            raise TypeError(f"{op}: 'input' is {input.dtype.name} but '{name}' is {t.dtype.name}")
    same_device(op, tensors)
    d = input.ndim - 2
    if d not in (1, 2, 3):
        raise ValueError(f"{op}: 'input' must be (N, C, *spatial) with 1-3 spatial dims, got {list(input.shape)}")
    if weight.ndim != input.ndim:
        raise ValueError(f"{op}: 'weight' {list(weight.shape)} must have {input.ndim} dims like 'input'")
    sizes = _spatial(op, "input", input, d, d + 2)
    ks = _spatial(op, "weight", weight, d, d + 2)
    stride = _expand(op, "stride", stride, d, 1)
    padding = _expand(op, "padding", padding, d, 0)
    dilation = _expand(op, "dilation", dilation, d, 1)
    output_padding = _expand(op, "output_padding", output_padding, d, 0)
    c_out = _conv_channels(op, input, weight, transposed, groups)
    if bias is not None and tuple(bias.shape) != (c_out,):
        raise ValueError(f"{op}: 'bias' must have shape [{c_out}], got {list(bias.shape)}")
    out = []
    for n, k, s, p, dl, op_ in zip(sizes, ks, stride, padding, dilation, output_padding):
        if transposed:
            if op_ >= s and op_ >= dl:
                raise ValueError(f"{op}: output_padding {op_} must be smaller than stride {s} or dilation {dl}")
            size = conv_transpose_output_size(n, k, s, p, dl, op_)
        else:
            if n + 2 * p < dl * (k - 1) + 1:
                raise ValueError(f"{op}: padded input size {n + 2 * p} is smaller than the dilated kernel size")
            size = conv_output_size(n, k, s, p, dl)
        if size <= 0:
            raise ValueError(f"{op}: computed output size {size} is too small (input {list(input.shape)})")
        out.append(size)
    return meta_empty((input.shape[0], c_out, *out), input.dtype)


def _pool_args(op: str, x, kernel_size, stride, padding, dilation, ceil_mode, allowed):
    """Validate a pooling call; returns the output shape."""
    check_tensor(op, "self", x)
    check_dtype(op, "self", x, allowed)
    d = len(kernel_size)
    if d not in (1, 2, 3):
        raise ValueError(f"{op}: argument 'kernel_size' needs 1-3 entries, got {list(kernel_size)}")
    sizes = _spatial(op, "self", x, d, d)
    ks = _expand(op, "kernel_size", kernel_size, d, 1)
    stride = _expand(op, "stride", stride or ks, d, 1)
    padding = _expand(op, "padding", padding, d, 0)
    dilation = _expand(op, "dilation", dilation, d, 1)
    out = []
    for n, k, s, p, dl in zip(sizes, ks, stride, padding, dilation):
        if p > k // 2:
            raise ValueError(f"{op}: padding {p} must be at most half of the kernel size {k}")
        size = pool_output_size(n, k, s, p, dl, ceil_mode)
        if size <= 0:
            raise ValueError(f"{op}: computed output size {size} is too small (input {list(x.shape)})")
        out.append(size)
    return tuple(x.shape[: x.ndim - d]) + tuple(out)


def max_pool_meta(self, kernel_size, stride, padding, dilation, ceil_mode):
    """Max over windows of the trailing ``len(kernel_size)`` dims (1-3); real dtypes.

    ``stride=[]`` means ``stride = kernel_size``; padding (implicit -inf) must be at most
    half the kernel. Returns values and int64 indices (flat offsets within each spatial
    plane of ``self``).
    """
    shape = _pool_args("prims::max_pool", self, kernel_size, stride, padding, dilation, ceil_mode, REAL)
    return meta_empty(shape, self.dtype), meta_empty(shape, _dtype.int64)


def avg_pool_meta(self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
    """Average over windows of the trailing ``len(kernel_size)`` dims (1-3); floating dtypes.

    As torch: a window is clipped to ``[-p, in + p)``; the divisor is ``divisor_override`` if
    given, else the clipped window size (``count_include_pad``) or the number of input
    elements in the window. ``stride=[]`` means ``stride = kernel_size``.
    """
    op = "prims::avg_pool"
    shape = _pool_args(op, self, kernel_size, stride, padding, (1,), ceil_mode, FLOAT)
    if divisor_override is not None and divisor_override == 0:
        raise ValueError(f"{op}: argument 'divisor_override' must not be zero")
    return meta_empty(shape, self.dtype)


def _adaptive_args(op: str, x, output_size, allowed):
    check_tensor(op, "self", x)
    check_dtype(op, "self", x, allowed)
    d = len(output_size)
    if d not in (1, 2, 3):
        raise ValueError(f"{op}: argument 'output_size' needs 1-3 entries, got {list(output_size)}")
    _spatial(op, "self", x, d, d)
    if any(o < 0 for o in output_size):
        raise ValueError(f"{op}: argument 'output_size' must be non-negative, got {list(output_size)}")
    return tuple(x.shape[: x.ndim - d]) + tuple(output_size)


def adaptive_avg_pool_meta(self, output_size):
    """Adaptive average pooling of the trailing ``len(output_size)`` dims (1-3); floating dtypes.

    Output ``i`` of a dim of size ``n`` averages ``[floor(i n / out), ceil((i + 1) n / out))``.
    """
    shape = _adaptive_args("prims::adaptive_avg_pool", self, output_size, FLOAT)
    return meta_empty(shape, self.dtype)


def adaptive_max_pool_meta(self, output_size):
    """Adaptive max pooling (windows as ``adaptive_avg_pool``); real dtypes; values and int64 flat indices."""
    shape = _adaptive_args("prims::adaptive_max_pool", self, output_size, REAL)
    return meta_empty(shape, self.dtype), meta_empty(shape, _dtype.int64)


CONV_PRIMS = [
    (
        "convolution(Tensor input, Tensor weight, Tensor? bias, int[] stride, int[] padding, int[] dilation, "
        "bool transposed, int[] output_padding, int groups) -> Tensor",
        convolution_meta,
    ),
    (
        "max_pool(Tensor self, int[] kernel_size, int[] stride, int[] padding, int[] dilation, bool ceil_mode) "
        "-> (Tensor values, Tensor indices)",
        max_pool_meta,
    ),
    (
        "avg_pool(Tensor self, int[] kernel_size, int[] stride, int[] padding, bool ceil_mode, "
        "bool count_include_pad, int? divisor_override) -> Tensor",
        avg_pool_meta,
    ),
    ("adaptive_avg_pool(Tensor self, int[] output_size) -> Tensor", adaptive_avg_pool_meta),
    ("adaptive_max_pool(Tensor self, int[] output_size) -> (Tensor values, Tensor indices)", adaptive_max_pool_meta),
]


def _define():
    for schema, meta in CONV_PRIMS:
        define_prim(schema, meta)


_define()
