"""Resampling (``F.interpolate``'s kernels) as canonical ops: nearest, nearest-exact, (bi/tri)linear, bicubic.

Each op resizes the trailing 1-3 dims of an ``(N, C, *spatial)`` tensor; the ``.vec``
overloads take exactly one of ``output_size`` and ``scale_factors`` (output size
``floor(in * scale)``), the others an ``output_size`` and optional per-dim ``scales``
(used, when positive, instead of ``in / out`` to map output to input positions, as PyTorch).
All of them are separable, so each resized dim is one or a few ``index_select``\\ s:

- nearest: source ``min(floor(dst * in / out), in - 1)`` computed in float32 as PyTorch's
  kernels do (``nearest-exact``: ``floor((dst + 0.5) * in / out)``); any dtype;
- linear: ``src = (dst + 0.5) * scale - 0.5`` clamped at 0 (``align_corners``:
  ``dst * (in - 1) / (out - 1)``), two taps weighted ``1 - t`` and ``t``;
- bicubic: the same source without the clamp, four taps (edge-clamped) with Keys'
  cubic convolution coefficients (``A = -0.75``).

Linear and bicubic accept floating dtypes and compute in the opmath dtype (float32 for
float16/bfloat16), rounding once.
"""

from __future__ import annotations

import math
import struct

from .. import _dtype
from .._ops import canonical as ops
from .._ops import prims
from ..prims._utils import FLOAT
from ._elementwise import check_dtype, scalar_like
from ._utils import define_with_variants, to_dtype

CUBIC_A = -0.75
_SCALE_NAMES = {1: ("scales",), 2: ("scales_h", "scales_w"), 3: ("scales_d", "scales_h", "scales_w")}


def _f32(x: float) -> float:
    """``x`` rounded to float32."""
    return struct.unpack("f", struct.pack("f", x))[0]


def _check_input(op: str, x, d: int) -> None:
    if x.ndim != d + 2:
        raise ValueError(
            f"{op}: expected a {d + 2}-D (N, C, *spatial) tensor for argument 'input', got {list(x.shape)}"
        )
    if any(s == 0 for s in x.shape[1:]):
        raise ValueError(f"{op}: expected non-empty non-batch dims for argument 'input', got {list(x.shape)}")


def _check_output_size(op: str, output_size, d: int) -> tuple:
    output_size = tuple(output_size)
    if len(output_size) != d:
        raise ValueError(f"{op}: argument 'output_size' must have {d} elements, got {list(output_size)}")
    if any(s <= 0 for s in output_size):
        raise ValueError(f"{op}: input and output sizes should be greater than 0, got output_size {list(output_size)}")
    return output_size


def vec_sizes(op: str, x, d: int, output_size, scale_factors):
    """``(output_size, scales)`` of a ``.vec`` overload: exactly one of the two arguments given."""
    if (output_size is None) == (scale_factors is None):
        raise ValueError(f"{op}: must specify exactly one of output_size and scale_factors")
    _check_input(op, x, d)
    if output_size is not None:
        return _check_output_size(op, output_size, d), (None,) * d
    scale_factors = tuple(scale_factors)
    if len(scale_factors) != d:
        raise ValueError(f"{op}: argument 'scale_factors' must have {d} elements, got {list(scale_factors)}")
    sizes = tuple(int(math.floor(n * s)) for n, s in zip(x.shape[2:], scale_factors))
    return _check_output_size(op, sizes, d), scale_factors


def _positions(out: int, dtype, device):
    return prims.convert_element_type(prims.iota(out, start=0, step=1, dtype=_dtype.int64, device=device), dtype)


def _nearest_index(n: int, out: int, scale, exact: bool, device):
    """int64 source index of each output position along one dim (PyTorch's float32 arithmetic)."""
    if not exact and out == n:
        return prims.iota(out, start=0, step=1, dtype=_dtype.int64, device=device)
    if not exact and out == 2 * n:
        return _halves(out, device)
    ratio = _f32(1.0 / scale) if scale is not None and scale > 0 else _f32(_f32(n) / _f32(out))
    pos = _positions(out, _dtype.float32, device)
    if exact:
        pos = prims.add(pos, scalar_like(0.5, pos))
    src = prims.convert_element_type(prims.floor(prims.mul(pos, scalar_like(ratio, pos))), _dtype.int64)
    return prims.minimum(src, scalar_like(n - 1, src))


def _halves(out: int, device):
    i = prims.iota(out, start=0, step=1, dtype=_dtype.int64, device=device)
    return prims.floor_divide(i, scalar_like(2, i))


def _nearest(op: str, d: int, exact: bool):
    def nearest(self, output_size, *scales):
        _check_input(op, self, d)
        output_size = _check_output_size(op, output_size, d)
        out = self
        for k, (n, o) in enumerate(zip(self.shape[2:], output_size)):
            if n == o and not exact:
                continue
            out = prims.index_select(out, 2 + k, _nearest_index(n, o, scales[k], exact, self.device))
        return out if out is not self else prims.clone(self, memory_format="contiguous_format")

    nearest.__name__ = op
    nearest.__doc__ = f"{d}-D nearest{'-exact' if exact else ''} upsampling of (N, C, *S) to ``output_size``."
    return nearest


def _source(n: int, out: int, align_corners: bool, scale, cubic: bool, dtype, device):
    """Real source coordinate of every output position (PyTorch's ``area_pixel_compute_source_index``)."""
    pos = _positions(out, dtype, device)
    if align_corners:
        ratio = (n - 1) / (out - 1) if out > 1 else 0.0
        return prims.mul(pos, scalar_like(ratio, pos))
    ratio = 1.0 / scale if scale is not None and scale > 0 else n / out
    if dtype is _dtype.float32:
        ratio = _f32(ratio)
    src = prims.sub(prims.mul(prims.add(pos, scalar_like(0.5, pos)), scalar_like(ratio, pos)), scalar_like(0.5, pos))
    return src if cubic else prims.maximum(src, scalar_like(0.0, src))


def _along(x, dim: int, weight):
    """``weight`` (length ``x.shape[dim]``) broadcast against ``x`` along ``dim``."""
    return prims.broadcast_in_dim(weight, list(x.shape), [dim])


def _linear_dim(x, dim: int, out: int, align_corners: bool, scale):
    n = x.shape[dim]
    src = _source(n, out, align_corners, scale, False, x.dtype, x.device)
    i0 = prims.convert_element_type(prims.floor(src), _dtype.int64)
    i0 = prims.minimum(i0, scalar_like(n - 1, i0))
    i1 = prims.minimum(prims.add(i0, scalar_like(1, i0)), scalar_like(n - 1, i0))
    lam = prims.sub(src, prims.convert_element_type(i0, x.dtype))
    lam = prims.minimum(prims.maximum(lam, scalar_like(0.0, lam)), scalar_like(1.0, lam))
    w0, w1 = prims.sub(scalar_like(1.0, lam), lam), lam
    a, b = prims.index_select(x, dim, i0), prims.index_select(x, dim, i1)
    return prims.add(prims.mul(a, _along(a, dim, w0)), prims.mul(b, _along(b, dim, w1)))


def _cubic_coefficients(t):
    """Keys' cubic convolution weights of the four taps at offsets -1, 0, 1, 2 for fractions ``t``."""

    def c1(x):  # |x| <= 1
        return prims.add(
            prims.mul(
                prims.mul(prims.sub(prims.mul(scalar_like(CUBIC_A + 2, x), x), scalar_like(CUBIC_A + 3, x)), x), x
            ),
            scalar_like(1.0, x),
        )

    def c2(x):  # 1 < |x| < 2
        a = scalar_like(CUBIC_A, x)
        inner = prims.add(
            prims.mul(prims.sub(prims.mul(a, x), scalar_like(5 * CUBIC_A, x)), x), scalar_like(8 * CUBIC_A, x)
        )
        return prims.sub(prims.mul(inner, x), scalar_like(4 * CUBIC_A, x))

    one = scalar_like(1.0, t)
    u = prims.sub(one, t)
    return [c2(prims.add(t, one)), c1(t), c1(u), c2(prims.add(u, one))]


def _cubic_dim(x, dim: int, out: int, align_corners: bool, scale):
    n = x.shape[dim]
    src = _source(n, out, align_corners, scale, True, x.dtype, x.device)
    fl = prims.floor(src)
    t = prims.sub(src, fl)
    base = prims.convert_element_type(fl, _dtype.int64)
    total = None
    for k, w in enumerate(_cubic_coefficients(t)):
        idx = prims.add(base, scalar_like(k - 1, base))
        idx = prims.minimum(prims.maximum(idx, scalar_like(0, idx)), scalar_like(n - 1, idx))
        tap = prims.index_select(x, dim, idx)
        term = prims.mul(tap, _along(tap, dim, w))
        total = term if total is None else prims.add(total, term)
    return total


def _interp(op: str, d: int, kind: str):
    def interp(self, output_size, align_corners, *scales):
        check_dtype(op, self.dtype, FLOAT, "input")
        _check_input(op, self, d)
        output_size = _check_output_size(op, output_size, d)
        if kind == "cubic" and tuple(self.shape[2:]) == output_size:
            return prims.clone(self, memory_format="contiguous_format")
        x = to_dtype(self, _dtype.opmath_dtype(self.dtype))
        step = _cubic_dim if kind == "cubic" else _linear_dim
        for k in reversed(range(d)):
            x = step(x, 2 + k, output_size[k], align_corners, scales[k])
        return to_dtype(x, self.dtype)

    interp.__name__ = op
    interp.__doc__ = (
        f"{d}-D {'bicubic' if kind == 'cubic' else 'linear'} interpolation of (N, C, *S) to ``output_size``."
    )
    return interp


def _aa_filter(x, kind: str):
    """The antialiasing filters: triangle (bilinear) or Keys' cubic with ``a = -0.5`` (bicubic), of ``|x|``."""
    ax = prims.abs(x)
    zero, one = scalar_like(0.0, ax), scalar_like(1.0, ax)
    if kind == "linear":
        return prims.maximum(prims.sub(one, ax), zero)
    a = -0.5
    near = prims.add(
        prims.mul(prims.mul(prims.sub(prims.mul(scalar_like(a + 2, ax), ax), scalar_like(a + 3, ax)), ax), ax), one
    )
    far = prims.mul(
        prims.sub(
            prims.mul(prims.add(prims.mul(prims.sub(ax, scalar_like(5.0, ax)), ax), scalar_like(8.0, ax)), ax),
            scalar_like(4.0, ax),
        ),
        scalar_like(a, ax),
    )
    return prims.where(prims.lt(ax, one), near, prims.where(prims.lt(ax, scalar_like(2.0, ax)), far, zero))


def _aa_weights(n: int, out: int, align_corners: bool, scale, kind: str, dtype, device):
    """The (out, n) matrix of normalised antialiasing weights along one dim (as PyTorch's AA kernels)."""
    if align_corners:
        ratio = (n - 1) / (out - 1) if out > 1 else 0.0
    else:
        ratio = 1.0 / scale if scale is not None and scale > 0 else n / out
    if dtype is _dtype.float32:
        ratio = _f32(ratio)
    half = 1.0 if kind == "linear" else 2.0
    support = half * ratio if ratio >= 1.0 else half
    invscale = 1.0 / ratio if ratio >= 1.0 else 1.0
    pos = _positions(out, dtype, device)
    centre = prims.mul(prims.add(pos, scalar_like(0.5, pos)), scalar_like(ratio, pos))
    centre = prims.broadcast_in_dim(centre, [out, n], [0])
    j = prims.broadcast_in_dim(_positions(n, dtype, device), [out, n], [1])
    low = prims.trunc(prims.add(centre, scalar_like(0.5 - support, centre)))
    low = prims.maximum(low, scalar_like(0.0, low))
    high = prims.trunc(prims.add(centre, scalar_like(0.5 + support, centre)))
    high = prims.minimum(high, scalar_like(float(n), high))
    inside = prims.logical_and(prims.ge(j, low), prims.lt(j, high))
    arg = prims.mul(prims.add(prims.sub(j, centre), scalar_like(0.5, j)), scalar_like(invscale, j))
    w = prims.where(inside, _aa_filter(arg, kind), scalar_like(0.0, j))
    total = prims.sum(w, [1])
    total = prims.where(prims.eq(total, scalar_like(0.0, total)), scalar_like(1.0, total), total)
    return prims.div(w, prims.broadcast_in_dim(total, [out, n], [0]))


def _antialias(op: str, kind: str):
    def aa(self, output_size, align_corners, scales_h=None, scales_w=None):
        check_dtype(op, self.dtype, FLOAT, "input")
        _check_input(op, self, 2)
        output_size = _check_output_size(op, output_size, 2)
        x = to_dtype(self, _dtype.opmath_dtype(self.dtype))
        n, c, h, w = x.shape
        wh = _aa_weights(h, output_size[0], align_corners, scales_h, kind, x.dtype, x.device)
        ww = _aa_weights(w, output_size[1], align_corners, scales_w, kind, x.dtype, x.device)
        x = ops.matmul(x, prims.transpose(ww, [1, 0]))  # (N, C, H, Wo)
        x = ops.matmul(prims.broadcast_in_dim(wh, [n, c, output_size[0], h], [2, 3]), x)
        return to_dtype(x, self.dtype)

    aa.__name__ = op
    aa.__doc__ = (
        f"Antialiased {'bilinear' if kind == 'linear' else 'bicubic'} resize of (N, C, H, W): when downsampling the "
        "filter widens by the scale, so every input pixel contributes (PIL's resampling)."
    )
    return aa


def _vec(op: str, d: int, fn, with_align: bool):
    if with_align:

        def vec(input, output_size, align_corners, scale_factors):
            size, scales = vec_sizes(op, input, d, output_size, scale_factors)
            return fn(input, size, align_corners, *scales)

    else:

        def vec(input, output_size, scale_factors):
            size, scales = vec_sizes(op, input, d, output_size, scale_factors)
            return fn(input, size, *scales)

    vec.__name__ = f"{op}_vec"
    vec.__doc__ = f"``{op}`` given exactly one of ``output_size`` and ``scale_factors``."
    return vec


def _define():
    for d in (1, 2, 3):
        scales = ", ".join(f"float? {s}=None" for s in _SCALE_NAMES[d])
        for prefix, exact in (("upsample_nearest", False), ("_upsample_nearest_exact", True)):
            name = f"{prefix}{d}d"
            fn = _nearest(name, d, exact)
            define_with_variants(f"{name}(Tensor self, SymInt[{d}] output_size, {scales}) -> Tensor", fn, inplace=False)
            define_with_variants(
                f"{name}.vec(Tensor input, SymInt[]? output_size, float[]? scale_factors) -> Tensor",
                _vec(name, d, fn, False),
                tags=("core",) if name == "upsample_nearest2d" else (),
                inplace=False,
            )
    for name, d, kind in (
        ("upsample_linear1d", 1, "linear"),
        ("upsample_bilinear2d", 2, "linear"),
        ("upsample_trilinear3d", 3, "linear"),
        ("upsample_bicubic2d", 2, "cubic"),
    ):
        scales = ", ".join(f"float? {s}=None" for s in _SCALE_NAMES[d])
        fn = _interp(name, d, kind)
        define_with_variants(
            f"{name}(Tensor self, SymInt[{d}] output_size, bool align_corners, {scales}) -> Tensor", fn, inplace=False
        )
        define_with_variants(
            f"{name}.vec(Tensor input, SymInt[]? output_size, bool align_corners, float[]? scale_factors) -> Tensor",
            _vec(name, d, fn, True),
            tags=("core",) if name == "upsample_bilinear2d" else (),
            inplace=False,
        )
    for name, kind in (("_upsample_bilinear2d_aa", "linear"), ("_upsample_bicubic2d_aa", "cubic")):
        fn = _antialias(name, kind)
        define_with_variants(
            f"{name}(Tensor self, SymInt[2] output_size, bool align_corners, float? scales_h=None, "
            "float? scales_w=None) -> Tensor",
            fn,
            inplace=False,
        )
        define_with_variants(
            f"{name}.vec(Tensor input, SymInt[]? output_size, bool align_corners, float[]? scale_factors) -> Tensor",
            _vec(name, 2, fn, True),
            inplace=False,
        )


_define()
