"""Pooling (``torch.nn.functional``'s max/avg/adaptive pools and max_unpool) as canonical ops.

Each op pools the trailing 1, 2 or 3 dims of a ``(C, *spatial)`` or ``(N, C, *spatial)``
tensor through the pooling prims (``prims.max_pool``, ``avg_pool``, ``adaptive_*``),
after checking its arguments with PyTorch's rules: ``kernel_size``/``stride``/``padding``/
``dilation`` take one int or one per dim, ``stride=[]`` means the kernel size, padding is
at most half the kernel, and the output must not be empty. Max pools accept real dtypes
(integers too, as PyTorch's CPU kernels), average pools floating dtypes (PyTorch's CPU
also averages int64; here that is a TypeError, because the pooling prims average floats
only). Max-pool indices are int64 flat offsets within each spatial plane; ``max_unpool``
scatters values back to them (an index outside the output plane is a ValueError).
"""

from __future__ import annotations

import math

from .. import _dtype
from .._errors import IndexOutOfBoundsError
from .._ops import canonical as ops
from .._ops import prims
from ..prims._utils import FLOAT, REAL
from ..prims.conv import pool_output_size
from ._elementwise import check_dtype, scalar_like
from ._utils import define_with_variants, to_dtype
from .nn_conv import check_spatial_input, expand_arg
from .nn_resample import _f32


def pool_args(op: str, x, d: int, kernel_size, stride, padding, dilation, ceil_mode, allowed):
    """Validate a pooling call; returns ``(kernel, stride, padding, dilation)`` with ``d`` entries each."""
    check_dtype(op, x.dtype, allowed)
    check_spatial_input(op, x, d)
    ks = expand_arg(op, "kernel_size", kernel_size, d, 1)
    st = expand_arg(op, "stride", stride, d, 1, allow_empty=True) or ks
    pd = expand_arg(op, "padding", padding, d, 0)
    dl = expand_arg(op, "dilation", dilation, d, 1)
    for n, k, s, p, dil in zip(x.shape[x.ndim - d :], ks, st, pd, dl):
        if p > k // 2:
            raise ValueError(f"{op}: padding {p} should be at most half of the kernel size {k}")
        size = pool_output_size(n, k, s, p, dil, ceil_mode)
        if size <= 0:
            raise ValueError(f"{op}: computed output size {size} is too small for input of shape {list(x.shape)}")
    return list(ks), list(st), list(pd), list(dl)


def _max_pool(op: str, d: int, with_indices: bool):
    def max_pool(self, kernel_size, stride=(), padding=(0,), dilation=(1,), ceil_mode=False):
        ks, st, pd, dl = pool_args(op, self, d, kernel_size, stride, padding, dilation, ceil_mode, REAL)
        values, indices = prims.max_pool(self, ks, st, pd, dl, ceil_mode)
        return (values, indices) if with_indices else values

    max_pool.__name__ = op
    max_pool.__doc__ = (
        f"{d}-D max pooling of ``self`` (C, *S) or (N, C, *S)"
        + (", with int64 flat indices of the maxima in each plane." if with_indices else ".")
        + " A NaN in a window wins."
    )
    return max_pool


def _integer_avg_pool(x, ks, st, pd, ceil_mode, count_include_pad, divisor_override):
    """PyTorch's integer average pooling: the window sum divided by the divisor, truncated toward zero.

    Computed in float64: a quotient within 1e-9 of an integer is that integer (a true non-integer
    quotient ``s / d`` is at least ``1 / d`` away from one), any other is truncated.
    """
    wide = prims.convert_element_type(x, _dtype.float64)
    avg = prims.avg_pool(wide, ks, st, pd, ceil_mode, count_include_pad, divisor_override)
    nearest = prims.round(avg)
    exact = prims.le(prims.abs(prims.sub(avg, nearest)), scalar_like(1e-9, avg))
    return prims.convert_element_type(prims.where(exact, nearest, prims.trunc(avg)), x.dtype)


def _avg_pool(op: str, d: int, with_divisor: bool):
    def avg_pool(
        self, kernel_size, stride=(), padding=(0,), ceil_mode=False, count_include_pad=True, divisor_override=None
    ):
        ks, st, pd, _ = pool_args(op, self, d, kernel_size, stride, padding, (1,), ceil_mode, REAL)
        if divisor_override is not None and divisor_override == 0:
            raise ValueError(f"{op}: argument 'divisor_override' must not be zero")
        if self.dtype in FLOAT:
            return prims.avg_pool(self, ks, st, pd, ceil_mode, count_include_pad, divisor_override)
        return _integer_avg_pool(self, ks, st, pd, ceil_mode, count_include_pad, divisor_override)

    if with_divisor:
        fn = avg_pool
    else:

        def fn(self, kernel_size, stride=(), padding=(0,), ceil_mode=False, count_include_pad=True):
            return avg_pool(self, kernel_size, stride, padding, ceil_mode, count_include_pad, None)

    fn.__name__ = op
    fn.__doc__ = (
        f"{d}-D average pooling of ``self`` (C, *S) or (N, C, *S); ``count_include_pad`` counts the zero padding "
        "in the divisor" + (", ``divisor_override`` replaces it." if with_divisor else ".")
    )
    return fn


def _adaptive(op: str, d: int, kind: str):
    def adaptive(self, output_size):
        check_dtype(op, self.dtype, FLOAT if kind == "avg" else REAL)
        check_spatial_input(op, self, d)
        size = list(expand_arg(op, "output_size", output_size, d, 0))
        if kind == "avg":
            return prims.adaptive_avg_pool(self, size)
        return prims.adaptive_max_pool(self, size)

    adaptive.__name__ = op
    adaptive.__doc__ = (
        f"{d}-D adaptive {kind} pooling to ``output_size``: output ``i`` of a dim of size ``n`` covers "
        "``[floor(i n / out), ceil((i + 1) n / out))``" + (" (values and int64 indices)." if kind == "max" else ".")
    )
    return adaptive


def _unpool(op: str, self, indices, output_size, d: int):
    if indices.dtype is not _dtype.int64:
        raise TypeError(f"{op}: argument 'indices' must be int64, got {indices.dtype.name}")
    if tuple(indices.shape) != tuple(self.shape):
        raise ValueError(f"{op}: 'indices' {list(indices.shape)} must have the shape of 'self' {list(self.shape)}")
    output_size = tuple(output_size)
    if len(output_size) != d:
        raise ValueError(f"{op}: argument 'output_size' must have {d} elements, got {list(output_size)}")
    if any(s < 0 for s in output_size):
        raise ValueError(f"{op}: argument 'output_size' must be non-negative, got {list(output_size)}")
    check_spatial_input(op, self, d)
    lead = tuple(self.shape[: self.ndim - d])
    rows, plane_in, plane_out = 1, 1, 1
    for s in lead:
        rows *= s
    for s in self.shape[self.ndim - d :]:
        plane_in *= s
    for s in output_size:
        plane_out *= s
    x = ops.reshape(self, [rows, plane_in])
    idx = ops.reshape(indices, [rows, plane_in])
    zeros = prims.full([rows, plane_out], 0, dtype=self.dtype, device=self.device)
    try:
        out = prims.scatter(zeros, 1, idx, x)
    except IndexOutOfBoundsError as exc:
        raise IndexOutOfBoundsError(
            f"{op}: argument 'indices' holds an index outside the output plane ({exc})"
        ) from None
    return ops.reshape(out, list(lead + output_size))


def max_unpool2d(self, indices, output_size):
    """Inverse of 2-D max pooling: zeros of (*, oH, oW) with ``self``'s values at their plane ``indices``."""
    return _unpool("max_unpool2d", self, indices, output_size, 2)


def max_unpool3d(self, indices, output_size, stride, padding):
    """Inverse of 3-D max pooling; ``stride``/``padding`` are checked (3 positive / non-negative ints) only."""
    op = "max_unpool3d"
    expand_arg(op, "stride", stride, 3, 1)
    expand_arg(op, "padding", padding, 3, 0)
    if len(tuple(stride)) != 3 or len(tuple(padding)) != 3:
        raise ValueError(f"{op}: arguments 'stride' and 'padding' must have 3 elements")
    return _unpool(op, self, indices, output_size, 3)


def _intervals(samples, n: int, out: int, k: int, compute):
    """Window starts (N, C, out) from per-plane ``samples`` (N, C): PyTorch's ``generate_intervals``."""
    i64 = _dtype.int64
    shape = list(samples.shape) + [out]
    pos = prims.broadcast_in_dim(prims.iota(out, start=0, step=1, dtype=i64, device=samples.device), shape, [2])
    if out > 1:
        alpha = (n - k) / (out - 1)
        alpha = _f32(alpha) if compute is _dtype.float32 else alpha
        u = prims.broadcast_in_dim(samples, shape, [0, 1])
        a = scalar_like(alpha, u)
        first = prims.trunc(prims.mul(prims.add(prims.convert_element_type(pos, compute), u), a))
        starts = prims.sub(
            prims.convert_element_type(first, i64), prims.convert_element_type(prims.trunc(prims.mul(u, a)), i64)
        )
    else:
        starts = prims.mul(pos, scalar_like(0, pos))
    return prims.where(prims.eq(pos, scalar_like(out - 1, pos)), scalar_like(n - k, pos), starts)


def _fractional(op: str, d: int):
    def fractional(self, kernel_size, output_size, random_samples):
        check_dtype(op, self.dtype, FLOAT)
        if random_samples.dtype is not self.dtype:
            raise TypeError(f"{op}: 'random_samples' must have the dtype of 'self' ({self.dtype.name})")
        batched = check_spatial_input(op, self, d)
        ks = expand_arg(op, "kernel_size", kernel_size, d, 1)
        outs = expand_arg(op, "output_size", output_size, d, 1)
        x = self if batched else prims.expand_dims(self, [0])
        n, c, *spatial = x.shape
        if tuple(random_samples.shape) != (n, c, d):
            raise ValueError(
                f"{op}: 'random_samples' must have shape [{n}, {c}, {d}], got {list(random_samples.shape)}"
            )
        for name, size, k, o in zip(("depth", "height", "width")[3 - d :], spatial, ks, outs):
            if o + k - 1 > size or (d == 3 and o + k - 1 >= size):
                raise ValueError(f"{op}: pool {name} {k} too large relative to input {name} {size} (output {o})")
        compute = _dtype.opmath_dtype(self.dtype)
        samples = to_dtype(random_samples, compute)
        # 2-D: sample 0 drives the width, 1 the height; 3-D: 0 the depth, 1 the height, 2 the width
        order = (1, 0) if d == 2 else (0, 1, 2)
        starts = [_intervals(ops.select(samples, 2, order[i]), spatial[i], outs[i], ks[i], compute) for i in range(d)]
        values, indices = _window_max(x, starts, ks, outs, spatial)
        if not batched:
            values, indices = prims.squeeze(values, [0]), prims.squeeze(indices, [0])
        return values, indices

    fractional.__name__ = op
    fractional.__doc__ = (
        f"{d}-D fractional max pooling: windows of ``kernel_size`` at pseudo-random starts drawn from "
        "``random_samples`` (N, C, d) in [0, 1); values and int64 plane indices."
    )
    return fractional


def _window_max(x, starts, ks, outs, spatial):
    """Max (last NaN wins, else first maximum) over windows at per-plane ``starts`` (one (N, C, out) per dim)."""
    i64 = _dtype.int64
    n, c, d = x.shape[0], x.shape[1], len(ks)
    full = [n, c, *outs, *ks]
    flat = None
    for i in range(d):
        start = prims.broadcast_in_dim(starts[i], full, [0, 1, 2 + i])
        off = prims.broadcast_in_dim(prims.iota(ks[i], start=0, step=1, dtype=i64, device=x.device), full, [2 + d + i])
        coord = prims.add(start, off)
        flat = coord if flat is None else prims.add(prims.mul(flat, scalar_like(spatial[i], flat)), coord)
    windows = 1
    for k in ks:
        windows *= k
    cells = 1
    for o in outs:
        cells *= o
    plane = ops.reshape(x, [n, c, -1])
    flat = ops.reshape(flat, [n, c, cells * windows])
    vals = ops.reshape(prims.gather(plane, 2, flat), [n, c, cells, windows])
    flat = ops.reshape(flat, [n, c, cells, windows])
    shape = [n, c, cells, windows]
    pos = prims.broadcast_in_dim(prims.iota(windows, start=0, step=1, dtype=i64, device=x.device), shape, [3])
    nan = prims.isnan(vals)
    any_nan = prims.any(nan, [3])
    last_nan = prims.amax(prims.where(nan, pos, scalar_like(-1, pos)), [3])
    best = prims.amax(prims.where(nan, scalar_like(-math.inf, vals), vals), [3])
    hit = prims.eq(vals, prims.broadcast_in_dim(best, shape, [0, 1, 2]))
    first_max = prims.amin(prims.where(hit, pos, scalar_like(windows, pos)), [3])
    first_max = prims.minimum(first_max, scalar_like(windows - 1, first_max))
    chosen = prims.where(any_nan, last_nan, first_max)
    index = prims.gather(flat, 3, prims.expand_dims(chosen, [3]))
    values = prims.where(any_nan, scalar_like(math.nan, best), best)
    return ops.reshape(values, [n, c, *outs]), ops.reshape(index, [n, c, *outs])


MAX_ARGS = "int[{d}] kernel_size, int[{d}] stride=[], int[{d}] padding=0, int[{d}] dilation=1, bool ceil_mode=False"
AVG_ARGS = "int[{d}] kernel_size, int[{d}] stride=[], int[{d}] padding=0, bool ceil_mode=False"
AVG_ARGS += ", bool count_include_pad=True"


def _define():
    two_outs = "*, Tensor(a!) out, Tensor(b!) indices) -> (Tensor(a!), Tensor(b!))"
    for d in (1, 2, 3):
        args = MAX_ARGS.format(d=d)
        define_with_variants(
            f"max_pool{d}d(Tensor self, {args}) -> Tensor",
            _max_pool(f"max_pool{d}d", d, False),
            inplace=False,
            out=False,
        )
        define_with_variants(
            f"max_pool{d}d_with_indices(Tensor self, {args}) -> (Tensor, Tensor)",
            _max_pool(f"max_pool{d}d_with_indices", d, True),
            tags=("core",) if d > 1 else (),
            inplace=False,
            out=d > 1 and f"max_pool{d}d_with_indices.out(Tensor self, {args}, {two_outs}",
        )
        avg = AVG_ARGS.format(d=d) + (", int? divisor_override=None" if d > 1 else "")
        define_with_variants(
            f"avg_pool{d}d(Tensor self, {avg}) -> Tensor",
            _avg_pool(f"avg_pool{d}d", d, d > 1),
            tags=("core",) if d > 1 else (),
            inplace=False,
            out=d > 1,
        )
        sym = "SymInt" if d > 1 else "int"
        define_with_variants(
            f"adaptive_avg_pool{d}d(Tensor self, {sym}[{d}] output_size) -> Tensor",
            _adaptive(f"adaptive_avg_pool{d}d", d, "avg"),
            inplace=False,
            out=d > 1,
        )
        if d > 1:
            define_with_variants(
                f"_adaptive_avg_pool{d}d(Tensor self, SymInt[{d}] output_size) -> Tensor",
                _adaptive(f"_adaptive_avg_pool{d}d", d, "avg"),
                tags=("core",),
                inplace=False,
            )
        define_with_variants(
            f"adaptive_max_pool{d}d(Tensor self, int[{d}] output_size) -> (Tensor, Tensor)",
            _adaptive(f"adaptive_max_pool{d}d", d, "max"),
            inplace=False,
            out=d > 1 and f"adaptive_max_pool{d}d.out(Tensor self, int[{d}] output_size, {two_outs}",
        )
    for d in (2, 3):
        define_with_variants(
            f"fractional_max_pool{d}d(Tensor self, int[{d}] kernel_size, int[{d}] output_size, Tensor random_samples) "
            "-> (Tensor, Tensor)",
            _fractional(f"fractional_max_pool{d}d", d),
            inplace=False,
            out=f"fractional_max_pool{d}d.output(Tensor self, int[{d}] kernel_size, int[{d}] output_size, "
            "Tensor random_samples, *, Tensor(a!) output, Tensor(b!) indices) -> (Tensor(a!), Tensor(b!))",
        )
    define_with_variants(
        "max_unpool2d(Tensor self, Tensor indices, SymInt[2] output_size) -> Tensor", max_unpool2d, inplace=False
    )
    define_with_variants(
        "max_unpool3d(Tensor self, Tensor indices, SymInt[3] output_size, int[3] stride, int[3] padding) -> Tensor",
        max_unpool3d,
        inplace=False,
    )


_define()
