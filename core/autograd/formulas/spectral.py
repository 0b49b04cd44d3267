"""Derivatives of the FFT prims (PyTorch's ``_fft_*_backward``)."""

from __future__ import annotations

from ._common import C, P, formula


@formula("prims::fft_c2c", save=())
def _c2c(ctx, g):
    _, dim, norm, forward = ctx.args
    return (P.fft_c2c(g, list(dim), norm, not forward),)


@formula("prims::fft_r2c", save=())
def _r2c(ctx, g):
    a, dim, norm, onesided = ctx.args
    if onesided:
        last = dim[-1]
        missing = a.shape[last] - g.shape[last]
        if missing > 0:
            pad_shape = list(g.shape)
            pad_shape[last] = missing
            g = C.cat([g, C.zeros(pad_shape, dtype=g.dtype, device=g.device)], last)
    return (C.real(P.fft_c2c(g, list(dim), norm, False)),)


@formula("prims::fft_c2r", save=())
def _c2r(ctx, g):
    a, dim, norm, last_dim_size = ctx.args
    gi = P.fft_r2c(g, list(dim), norm, True)
    last = dim[-1]
    double = g.shape[last] - gi.shape[last]
    if double > 0:
        scale = C.ones([gi.shape[last]], dtype=g.dtype, device=g.device)
        scale = C.cat([scale[:1], scale[1 : 1 + double] * 2, scale[1 + double :]])
        shape = [1] * gi.ndim
        shape[last] = gi.shape[last]
        gi = gi * C.reshape(scale, shape)
    return (gi,)
