"""Rearranging layers: ``im2col``/``col2im`` (``F.unfold``/``F.fold``), pixel and channel shuffles.

``im2col`` takes ``(N, C, H, W)`` or ``(C, H, W)`` and returns the sliding blocks as
columns ``(N, C * kh * kw, L)``, channel-major then kernel row then kernel column, the
``L`` blocks in row-major order; it is a view chain (pad, two ``unfold`` windows, a
strided slice for the dilation) copied once. ``col2im`` is its adjoint: the columns are
summed back into the (padded) image with one ``scatter_add`` and the padding is cut off.
Every op here returns a fresh contiguous tensor, never a view of its input, and accepts
every dtype except where a sum is needed (``col2im``: no bool).
"""

from __future__ import annotations

from .. import _dtype
from .._ops import canonical as ops
from .._ops import prims
from ..prims._utils import NUMERIC
from ._elementwise import check_dtype, scalar_like
from ._utils import define_with_variants
from .nn_conv import check_spatial_input


def _fresh(t):
    """A contiguous copy of ``t`` (a view chain's result), never sharing storage with an input."""
    return prims.clone(t, memory_format="contiguous_format")


def _pairs(op: str, kernel_size, dilation, padding, stride):
    names = ("kernel_size", "dilation", "padding", "stride")
    values = [tuple(v) for v in (kernel_size, dilation, padding, stride)]
    for name, v in zip(names, values):
        if len(v) != 2:
            raise ValueError(f"{op}: argument '{name}' must have 2 elements, got {list(v)}")
    for name, v, minimum in zip(names, values, (1, 1, 0, 1)):
        if any(e < minimum for e in v):
            kind = "positive" if minimum else "non-negative"
            raise ValueError(f"{op}: argument '{name}' must be {kind}, got {list(v)}")
    return values


def _blocks(op: str, size, kernel, dilation, padding, stride) -> tuple:
    blocks = tuple(
        (n + 2 * p - (d * (k - 1) + 1)) // s + 1 for n, k, d, p, s in zip(size, kernel, dilation, padding, stride)
    )
    if any(b < 1 for b in blocks):
        raise ValueError(
            f"{op}: given input with spatial size {list(size)}, kernel_size={list(kernel)}, dilation={list(dilation)}, "
            f"padding={list(padding)}, stride={list(stride)}, the array of sliding blocks would have shape "
            f"{list(blocks)}, but its components must be at least one"
        )
    return blocks


def im2col(self, kernel_size, dilation, padding, stride):
    """Sliding ``kernel_size`` blocks of a (N, C, H, W) or (C, H, W) tensor as columns (N, C*kh*kw, L)."""
    op = "im2col"
    (kh, kw), (dh, dw), (ph, pw), (sh, sw) = _pairs(op, kernel_size, dilation, padding, stride)
    batched = check_spatial_input(op, self, 2)
    x = self if batched else prims.expand_dims(self, [0])
    n, c, h, w = x.shape
    oh, ow = _blocks(op, (h, w), (kh, kw), (dh, dw), (ph, pw), (sh, sw))
    if ph or pw:
        x = ops.constant_pad_nd(x, [pw, pw, ph, ph], 0)
    span_h, span_w = dh * (kh - 1) + 1, dw * (kw - 1) + 1
    win = prims.unfold(prims.unfold(x, 2, span_h, sh), 3, span_w, sw)  # (N, C, oh, ow, span_h, span_w)
    win = prims.slice(win, [0, 0, 0, 0, 0, 0], list(win.shape), [1, 1, 1, 1, dh, dw])
    cols = _fresh(prims.transpose(win, [0, 1, 4, 5, 2, 3]))  # (N, C, kh, kw, oh, ow)
    out = ops.reshape(cols, [n, c * kh * kw, oh * ow])
    return out if batched else prims.squeeze(out, [0])


def col2im(self, output_size, kernel_size, dilation, padding, stride):
    """Sum columns (N, C*kh*kw, L) or (C*kh*kw, L) back into an (N, C, *output_size) image (``F.fold``)."""
    op = "col2im"
    check_dtype(op, self.dtype, NUMERIC)
    output_size = tuple(output_size)
    if len(output_size) != 2:
        raise ValueError(f"{op}: argument 'output_size' must have 2 elements, got {list(output_size)}")
    (kh, kw), (dh, dw), (ph, pw), (sh, sw) = _pairs(op, kernel_size, dilation, padding, stride)
    if self.ndim not in (2, 3) or any(s == 0 for s in self.shape[self.ndim - 2 :]):
        raise ValueError(
            f"{op}: expected a 2-D or 3-D (batched) tensor with non-empty non-batch dims for argument 'self', "
            f"got shape {list(self.shape)}"
        )
    batched = self.ndim == 3
    x = self if batched else prims.expand_dims(self, [0])
    n, ck, length = x.shape
    if ck % (kh * kw):
        raise ValueError(f"{op}: dim 1 of 'self' ({ck}) must be divisible by the kernel size product {kh * kw}")
    oh, ow = _blocks(op, output_size, (kh, kw), (dh, dw), (ph, pw), (sh, sw))
    if oh * ow != length:
        raise ValueError(
            f"{op}: dim 2 of 'self' ({length}) must match the number of sliding blocks {oh * ow} ({oh} x {ow}) "
            f"for output_size={list(output_size)}"
        )
    c = ck // (kh * kw)
    hp, wp = output_size[0] + 2 * ph, output_size[1] + 2 * pw
    index = _col2im_index(kh, kw, oh, ow, dh, dw, sh, sw, wp, x.device)  # (kh * kw * oh * ow,)
    src = ops.reshape(x, [n, c, kh * kw * length])
    index = prims.broadcast_in_dim(index, list(src.shape), [2])
    zeros = prims.full([n, c, hp * wp], 0, dtype=x.dtype, device=x.device)
    image = ops.reshape(prims.scatter_add(zeros, 2, index, src), [n, c, hp, wp])
    if ph or pw:
        image = _fresh(prims.slice(image, [0, 0, ph, pw], [n, c, ph + output_size[0], pw + output_size[1]]))
    return image if batched else prims.squeeze(image, [0])


def _col2im_index(kh, kw, oh, ow, dh, dw, sh, sw, wp, device):
    """Flat positions in the padded (hp, wp) plane of every (ki, kj, bi, bj) column element, flattened."""
    i64 = _dtype.int64
    shape = [kh, kw, oh, ow]

    def axis(length, step, dim):
        return prims.broadcast_in_dim(prims.iota(length, start=0, step=step, dtype=i64, device=device), shape, [dim])

    rows = prims.add(axis(kh, dh, 0), axis(oh, sh, 2))
    cols = prims.add(axis(kw, dw, 1), axis(ow, sw, 3))
    flat = prims.add(prims.mul(rows, scalar_like(wp, rows)), cols)
    return ops.reshape(flat, [kh * kw * oh * ow])


def pixel_shuffle(self, upscale_factor):
    """(*, C r^2, H, W) -> (*, C, H r, W r) with ``r = upscale_factor``."""
    op, r = "pixel_shuffle", upscale_factor
    if self.ndim < 3:
        raise ValueError(f"{op}: expected 'self' to have at least 3 dims, got shape {list(self.shape)}")
    if r <= 0:
        raise ValueError(f"{op}: argument 'upscale_factor' must be positive, got {r}")
    *lead, c, h, w = self.shape
    if c % (r * r):
        raise ValueError(f"{op}: channels {c} of 'self' must be divisible by upscale_factor squared ({r * r})")
    k = len(lead)
    x = ops.reshape(self, [*lead, c // (r * r), r, r, h, w])
    x = _fresh(prims.transpose(x, [*range(k), k, k + 3, k + 1, k + 4, k + 2]))
    return ops.reshape(x, [*lead, c // (r * r), h * r, w * r])


def pixel_unshuffle(self, downscale_factor):
    """(*, C, H r, W r) -> (*, C r^2, H, W) with ``r = downscale_factor``."""
    op, r = "pixel_unshuffle", downscale_factor
    if self.ndim < 3:
        raise ValueError(f"{op}: expected 'self' to have at least 3 dims, got shape {list(self.shape)}")
    if r <= 0:
        raise ValueError(f"{op}: argument 'downscale_factor' must be positive, got {r}")
    *lead, c, h, w = self.shape
    if h % r or w % r:
        raise ValueError(f"{op}: height {h} and width {w} of 'self' must be divisible by downscale_factor {r}")
    k = len(lead)
    x = ops.reshape(self, [*lead, c, h // r, r, w // r, r])
    x = _fresh(prims.transpose(x, [*range(k), k, k + 2, k + 4, k + 1, k + 3]))
    return ops.reshape(x, [*lead, c * r * r, h // r, w // r])


def _channel_shuffle(op: str):
    def channel_shuffle(self, groups):
        if self.ndim < 3:
            raise ValueError(f"{op}: expected 'self' to have at least 3 dims, got shape {list(self.shape)}")
        if groups <= 0:
            raise ValueError(f"{op}: argument 'groups' must be positive, got {groups}")
        n, c, *rest = self.shape
        if c % groups:
            raise ValueError(f"{op}: channels {c} of 'self' must be divisible by groups={groups}")
        x = ops.reshape(self, [n, groups, c // groups, *rest])
        x = _fresh(prims.transpose(x, [0, 2, 1, *range(3, x.ndim)]))
        return ops.reshape(x, [n, c, *rest])

    channel_shuffle.__name__ = op
    channel_shuffle.__doc__ = "(N, C, *) with channels regrouped: ``groups`` groups of ``C / groups`` interleaved."
    return channel_shuffle


def _define():
    define_with_variants(
        "im2col(Tensor self, int[2] kernel_size, int[2] dilation, int[2] padding, int[2] stride) -> Tensor",
        im2col,
        inplace=False,
    )
    define_with_variants(
        "col2im(Tensor self, SymInt[2] output_size, int[2] kernel_size, int[2] dilation, int[2] padding, "
        "int[2] stride) -> Tensor",
        col2im,
        tags=("core",),
        inplace=False,
    )
    define_with_variants("pixel_shuffle(Tensor self, int upscale_factor) -> Tensor", pixel_shuffle, inplace=False)
    define_with_variants("pixel_unshuffle(Tensor self, int downscale_factor) -> Tensor", pixel_unshuffle, inplace=False)
    define_with_variants(
        "channel_shuffle(Tensor self, SymInt groups) -> Tensor", _channel_shuffle("channel_shuffle"), inplace=False
    )
    define_with_variants(
        "native_channel_shuffle(Tensor self, SymInt groups) -> Tensor",
        _channel_shuffle("native_channel_shuffle"),
        inplace=False,
        out=False,
    )


_define()
