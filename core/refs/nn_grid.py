"""Spatial transformers: ``grid_sampler`` (``F.grid_sample``) and ``affine_grid_generator`` (``F.affine_grid``).

``grid_sampler_2d`` samples ``input`` (N, C, H, W) at ``grid`` (N, Ho, Wo, 2) locations
``(x, y)`` in [-1, 1]; ``grid_sampler_3d`` samples (N, C, D, H, W) at (N, Do, Ho, Wo, 3)
``(x, y, z)``. ``interpolation_mode``: 0 bilinear (trilinear in 3-D), 1 nearest (round
half to even), 2 bicubic (2-D only); ``padding_mode``: 0 zeros, 1 border, 2 reflection.
Coordinates follow PyTorch's ``grid_sampler_compute_source_index``: unnormalised with
``align_corners`` (-1 and 1 are the centres of the corner pixels) or without (their outer
edges), then clipped or reflected by the padding mode. Each tap is one ``gather`` from
the flattened planes; taps outside the input read 0. Floating dtypes; computation in the
opmath dtype.
"""

from __future__ import annotations

from .. import _dtype
from .._ops import canonical as ops
from .._ops import prims
from ..prims._utils import FLOAT
from ._elementwise import check_dtype, scalar_like
from ._utils import define_with_variants, to_dtype
from .nn_resample import _cubic_coefficients

INTERPOLATION = ("bilinear", "nearest", "bicubic")
PADDING = ("zeros", "border", "reflection")


def _c(v, like):
    return scalar_like(v, like)


def _unnormalize(coord, size: int, align_corners: bool):
    if align_corners:
        return prims.mul(prims.div(prims.add(coord, _c(1.0, coord)), _c(2.0, coord)), _c(size - 1.0, coord))
    return prims.div(
        prims.sub(prims.mul(prims.add(coord, _c(1.0, coord)), _c(float(size), coord)), _c(1.0, coord)), _c(2.0, coord)
    )


def _clip(coord, size: int):
    return prims.minimum(prims.maximum(coord, _c(0.0, coord)), _c(size - 1.0, coord))


def _reflect(coord, twice_low: int, twice_high: int):
    if twice_low == twice_high:
        return prims.mul(coord, _c(0.0, coord))
    low, span = twice_low / 2, (twice_high - twice_low) / 2
    x = prims.abs(prims.sub(coord, _c(low, coord)))
    extra = prims.fmod(x, _c(span, x))
    flips = prims.floor(prims.div(x, _c(span, x)))
    even = prims.eq(prims.fmod(flips, _c(2.0, flips)), _c(0.0, flips))
    return prims.where(
        even, prims.add(extra, _c(low, extra)), prims.add(prims.sub(_c(span, extra), extra), _c(low, extra))
    )


def _pad_coord(coord, size: int, padding_mode: int, align_corners: bool):
    """PyTorch's ``compute_coordinates``: clip (border) or reflect then clip (reflection)."""
    if padding_mode == 1:
        return _clip(coord, size)
    if padding_mode == 2:
        coord = _reflect(coord, 0, 2 * (size - 1)) if align_corners else _reflect(coord, -1, 2 * size - 1)
        return _clip(coord, size)
    return coord


class _Planes:
    """The input's spatial planes flattened to (N, C, P) and gathered at integer coordinates."""

    def __init__(self, x, sizes):
        self.n, self.c = x.shape[0], x.shape[1]
        self.sizes = sizes
        total = 1
        for s in sizes:
            total *= s
        self.flat = ops.reshape(x, [self.n, self.c, total])

    def tap(self, coords):
        """Values at integer-valued float ``coords`` (one (N, P_out) tensor per dim, slowest first); 0 outside."""
        inside, flat = None, None
        for coord, size in zip(coords, self.sizes):
            ok = prims.logical_and(prims.ge(coord, _c(0.0, coord)), prims.le(coord, _c(size - 1.0, coord)))
            inside = ok if inside is None else prims.logical_and(inside, ok)
        for coord, size in zip(coords, self.sizes):
            safe = prims.convert_element_type(prims.where(inside, coord, _c(0.0, coord)), _dtype.int64)
            flat = safe if flat is None else prims.add(prims.mul(flat, _c(size, flat)), safe)
        shape = [self.n, self.c, flat.shape[1]]
        values = prims.gather(self.flat, 2, prims.broadcast_in_dim(flat, shape, [0, 2]))
        mask = prims.broadcast_in_dim(inside, shape, [0, 2])
        return prims.where(mask, values, _c(0.0, values))


def _spread(w, like):
    """A (N, P) weight broadcast over the channels of ``like`` (N, C, P)."""
    return prims.broadcast_in_dim(w, list(like.shape), [0, 2])


def _check(op: str, input, grid, d: int, interpolation_mode: int, padding_mode: int):
    check_dtype(op, input.dtype, FLOAT, "input")
    if grid.dtype is not input.dtype:
        raise TypeError(f"{op}: 'input' is {input.dtype.name} but 'grid' is {grid.dtype.name}: they must match")
    if input.ndim != d + 2 or grid.ndim != d + 2:
        raise ValueError(f"{op}: expected {d + 2}-D 'input' and 'grid', got {list(input.shape)} and {list(grid.shape)}")
    if grid.shape[0] != input.shape[0] or grid.shape[-1] != d:
        raise ValueError(
            f"{op}: 'grid' must have shape (N, *out, {d}) with N = {input.shape[0]}, got {list(grid.shape)}"
        )
    if any(s == 0 for s in input.shape[2:]):
        raise ValueError(f"{op}: expected 'input' to have non-empty spatial dims, got {list(input.shape)}")
    if interpolation_mode not in (0, 1, 2):
        raise ValueError(f"{op}: argument 'interpolation_mode' must be 0, 1 or 2, got {interpolation_mode}")
    if padding_mode not in (0, 1, 2):
        raise ValueError(f"{op}: argument 'padding_mode' must be 0, 1 or 2, got {padding_mode}")
    if d == 3 and interpolation_mode == 2:
        raise ValueError(f"{op}: bicubic interpolation only supports 4-D input")


def _grid_sample(op: str, input, grid, interpolation_mode, padding_mode, align_corners, d: int):
    _check(op, input, grid, d, interpolation_mode, padding_mode)
    compute = _dtype.opmath_dtype(input.dtype)
    x, g = to_dtype(input, compute), to_dtype(grid, compute)
    n, c, sizes, out_sizes = x.shape[0], x.shape[1], tuple(x.shape[2:]), tuple(grid.shape[1:-1])
    p_out = 1
    for s in out_sizes:
        p_out *= s
    g = ops.reshape(g, [n, p_out, d])
    # grid's last dim is (x, y[, z]): the fastest spatial dim first; coords are listed slowest first
    raw = [ops.reshape(prims.slice_in_dim(g, d - 1 - k, d - k, 1, 2), [n, p_out]) for k in range(d)]
    planes = _Planes(x, sizes)
    if interpolation_mode == 2:
        out = _bicubic(planes, raw, sizes, padding_mode, align_corners)
    else:
        coords = [
            _pad_coord(_unnormalize(r, s, align_corners), s, padding_mode, align_corners) for r, s in zip(raw, sizes)
        ]
        if interpolation_mode == 1:
            out = planes.tap([prims.round(cd) for cd in coords])
        else:
            out = _linear(planes, coords)
    return to_dtype(ops.reshape(out, [n, c, *out_sizes]), input.dtype)


def _linear(planes, coords):
    lows = [prims.floor(cd) for cd in coords]
    fracs = [prims.sub(cd, lo) for cd, lo in zip(coords, lows)]
    total = None
    for corner in range(2 ** len(coords)):
        taps, weight = [], None
        for k, (lo, f) in enumerate(zip(lows, fracs)):
            high = (corner >> (len(coords) - 1 - k)) & 1
            taps.append(prims.add(lo, _c(1.0, lo)) if high else lo)
            w = f if high else prims.sub(_c(1.0, f), f)
            weight = w if weight is None else prims.mul(weight, w)
        values = planes.tap(taps)
        term = prims.mul(values, _spread(weight, values))
        total = term if total is None else prims.add(total, term)
    return total


def _bicubic(planes, raw, sizes, padding_mode, align_corners):
    (ry, rx), (h, w) = raw, sizes
    iy, ix = _unnormalize(ry, h, align_corners), _unnormalize(rx, w, align_corners)
    y0, x0 = prims.floor(iy), prims.floor(ix)
    wy, wx = _cubic_coefficients(prims.sub(iy, y0)), _cubic_coefficients(prims.sub(ix, x0))
    total = None
    for i in range(4):
        yy = _pad_coord(prims.add(y0, _c(i - 1.0, y0)), h, padding_mode, align_corners)
        for j in range(4):
            xx = _pad_coord(prims.add(x0, _c(j - 1.0, x0)), w, padding_mode, align_corners)
            values = planes.tap([prims.trunc(yy), prims.trunc(xx)])
            term = prims.mul(values, _spread(prims.mul(wy[i], wx[j]), values))
            total = term if total is None else prims.add(total, term)
    return total


def grid_sampler_2d(input, grid, interpolation_mode, padding_mode, align_corners):
    """Sample (N, C, H, W) ``input`` at (N, Ho, Wo, 2) ``grid`` points: (N, C, Ho, Wo)."""
    return _grid_sample("grid_sampler_2d", input, grid, interpolation_mode, padding_mode, align_corners, 2)


def grid_sampler_3d(input, grid, interpolation_mode, padding_mode, align_corners):
    """Sample (N, C, D, H, W) ``input`` at (N, Do, Ho, Wo, 3) ``grid`` points (bilinear = trilinear, or nearest)."""
    return _grid_sample("grid_sampler_3d", input, grid, interpolation_mode, padding_mode, align_corners, 3)


def grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners):
    """``grid_sampler_2d`` for 4-D inputs, ``grid_sampler_3d`` for 5-D ones."""
    if input.ndim == 5:
        return _grid_sample("grid_sampler", input, grid, interpolation_mode, padding_mode, align_corners, 3)
    return _grid_sample("grid_sampler", input, grid, interpolation_mode, padding_mode, align_corners, 2)


def _base_coords(num: int, align_corners: bool, dtype, device):
    """``num`` evenly spaced coordinates in [-1, 1] (scaled by (num - 1) / num without ``align_corners``)."""
    if num <= 1:
        return prims.full([num], 0.0, dtype=dtype, device=device)
    step = 2.0 / (num - 1)
    i = prims.convert_element_type(prims.iota(num, start=0, step=1, dtype=_dtype.int64, device=device), dtype)
    # linspace's symmetric formula: from -1 up to the middle, from 1 down after it
    low = prims.add(prims.mul(i, _c(step, i)), _c(-1.0, i))
    high = prims.sub(_c(1.0, i), prims.mul(prims.sub(_c(num - 1.0, i), i), _c(step, i)))
    values = prims.where(prims.lt(i, _c(float(num // 2), i)), low, high)
    if not align_corners:
        values = prims.mul(values, _c((num - 1) / num, values))
    return values


def affine_grid_generator(theta, size, align_corners):
    """Sampling grid (N, H, W, 2) or (N, D, H, W, 3) of the affine maps ``theta`` (N, 2, 3) or (N, 3, 4)."""
    op = "affine_grid_generator"
    check_dtype(op, theta.dtype, FLOAT, "theta")
    size = tuple(size)
    if len(size) not in (4, 5):
        raise ValueError(
            f"{op}: argument 'size' must have 4 (N, C, H, W) or 5 (N, C, D, H, W) elements, got {list(size)}"
        )
    d = len(size) - 2
    n, spatial = size[0], size[2:]
    if tuple(theta.shape) != (n, d, d + 1):
        raise ValueError(
            f"{op}: expected a batch of {d}-D affine matrices of shape ({n}, {d}, {d + 1}) for size {list(size)}, "
            f"got 'theta' of shape {list(theta.shape)}"
        )
    compute = _dtype.opmath_dtype(theta.dtype)
    th = to_dtype(theta, compute)
    points = 1
    for s in spatial:
        points *= s
    columns = []
    for k in range(d):  # x varies along the last spatial dim, then y, then z
        dim = d - 1 - k
        axis = _base_coords(spatial[dim], align_corners, compute, theta.device)
        columns.append(prims.broadcast_in_dim(axis, list(spatial), [dim]))
    columns.append(prims.full(list(spatial), 1.0, dtype=compute, device=theta.device))
    base = ops.stack(columns, -1)
    base = ops.reshape(base, [1, points, d + 1])
    base = prims.broadcast_in_dim(base, [n, points, d + 1], [0, 1, 2])
    grid = ops.bmm(base, prims.transpose(th, [0, 2, 1]))
    return to_dtype(ops.reshape(grid, [n, *spatial, d]), theta.dtype)


def _define():
    args = "Tensor input, Tensor grid, int interpolation_mode, int padding_mode, bool align_corners"
    define_with_variants(f"grid_sampler({args}) -> Tensor", grid_sampler, inplace=False, out=False)
    define_with_variants(f"grid_sampler_2d({args}) -> Tensor", grid_sampler_2d, tags=("core",), inplace=False)
    define_with_variants(f"grid_sampler_3d({args}) -> Tensor", grid_sampler_3d, inplace=False)
    define_with_variants(
        "affine_grid_generator(Tensor theta, SymInt[] size, bool align_corners) -> Tensor",
        affine_grid_generator,
        inplace=False,
    )


_define()
