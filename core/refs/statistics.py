"""Statistics canonical ops: quantile, nanquantile, cov, corrcoef, histogram, histogramdd, diff, gradient, renorm
and the matrix/partial norms (frobenius_norm, nuclear_norm, norm_except_dim), sum_to_size.

Semantics are PyTorch's; where PyTorch raises ``RuntimeError`` for bad values
these ops raise ``ValueError`` (bad shapes, dims and values) or ``TypeError``
(bad dtypes), naming the op and the argument. Documented differences:

- ``gradient`` with ``Tensor`` spacing checks that each coordinate tensor has as
  many elements as its dim (PyTorch silently computes with a shorter one).
- ``histogram`` with a ``bins`` tensor expects non-decreasing edges (not checked;
  other edges give unspecified counts, as in PyTorch).
- ``complex32`` does not exist here, so nothing in this module produces it.

Data-dependent checks (quantile ``q`` in [0, 1], non-negative ``cov`` weights, a
finite histogram range) read the data on the host once, through ``prims.item``.
"""

from __future__ import annotations

import math
import warnings

from .. import _dtype
from .._ops import canonical as ops
from .._ops import prims
from ._tensor_utils import cast, expand, fill_like, flatten, full, is_floating, movedim, numel, reshape
from ._utils import define_with_variants, wrap_dim

_QUANTILE_MODES = ("linear", "lower", "higher", "midpoint", "nearest")


def _truth(t) -> bool:
    """The value of a one-element bool tensor, read on the host."""
    return bool(prims.item(t))


def _slice(t, dim, start, stop):
    """The view ``t[..., start:stop, ...]`` along ``dim`` (non-negative bounds)."""
    return prims.slice_in_dim(t, start, stop, 1, dim)


# -- quantile, nanquantile -------------------------------------------------


def _check_quantile_args(op, self, interpolation):
    if self.dtype not in (_dtype.float32, _dtype.float64):
        raise TypeError(f"{op}: input tensor 'self' must be either float or double dtype, got {self.dtype.name}")
    if interpolation not in _QUANTILE_MODES:
        raise ValueError(
            f"{op}: argument 'interpolation' must be one of linear, lower, higher, midpoint or nearest, "
            f"but got {interpolation!r}"
        )
    if self.numel() == 0:
        raise ValueError(f"{op}: input tensor 'self' must be non-empty")


def _q_tensor(op, self, q):
    """``q`` as a 1-D tensor of ``self``'s dtype on its device, checked; and whether the q dim is kept."""
    if not hasattr(q, "dtype"):
        q = float(q)
        if not 0.0 <= q <= 1.0:
            raise ValueError(f"{op}: argument 'q' must be in the range [0, 1] but got {q}")
        return full((1,), q, self.dtype, self.device), False
    if q.dtype is not self.dtype:
        raise TypeError(
            f"{op}: argument 'q' must have the same dtype as the input tensor ({self.dtype.name}), got {q.dtype.name}"
        )
    if q.ndim > 1:
        raise ValueError(f"{op}: argument 'q' must be a scalar or 1D tensor, got {q.ndim} dims")
    if q.device != self.device:
        raise RuntimeError(f"{op}: argument 'q' is on {q.device} but 'self' is on {self.device}")
    inside = prims.logical_and(prims.ge(q, fill_like(0, q)), prims.le(q, fill_like(1, q)))
    if q.numel() and q.device.type != "meta" and not _truth(prims.all(inside, None)):
        raise ValueError(f"{op}: argument 'q' values must be in the range [0, 1]")
    return reshape(q, (q.numel(),)), q.ndim == 1


def _quantile(op, self, q, dim, keepdim, interpolation, ignore_nan):
    """PyTorch's quantile algorithm: sort (NaN last), rank, gather below/above, interpolate."""
    _check_quantile_args(op, self, interpolation)
    qs, keep_q = _q_tensor(op, self, q)
    if dim is None:
        x, d = flatten(self), 0
        rest = (1,) * self.ndim if keepdim else ()
    else:
        d = wrap_dim(op, dim, self.ndim)
        x = reshape(self, (1,)) if self.ndim == 0 else self
        rest = tuple(1 if i == d else s for i, s in enumerate(self.shape)) if keepdim else None
        if rest is None:
            rest = tuple(s for i, s in enumerate(self.shape) if i != d)
    srt = movedim(prims.sort(x, d, False, True)[0], d, x.ndim - 1)  # (*lead, n)
    lead, n = srt.shape[:-1], srt.shape[-1]
    n_q = qs.shape[0]
    nans = prims.isnan(srt)
    q_b = prims.broadcast_in_dim(qs, [n_q, *lead, 1], [0])
    if ignore_nan:
        count = prims.sum(cast(prims.logical_not(nans), self.dtype), [srt.ndim - 1])
        last = prims.sub(count, fill_like(1, count))
        last_b = prims.broadcast_in_dim(last, [n_q, *lead, 1], list(range(1, len(lead) + 1)))
        ranks = prims.mul(q_b, last_b)
        ranks = prims.where(prims.lt(ranks, fill_like(0, ranks)), fill_like(0, ranks), ranks)
    else:
        ranks = prims.mul(q_b, fill_like(n - 1, q_b))
        any_nan = prims.any(nans, [srt.ndim - 1])
        any_nan = prims.broadcast_in_dim(any_nan, [n_q, *lead, 1], list(range(1, len(lead) + 1)))
        ranks = prims.where(any_nan, fill_like(n - 1, ranks), ranks)
    if interpolation == "lower":
        ranks = prims.floor(ranks)
    elif interpolation == "higher":
        ranks = prims.ceil(ranks)
    elif interpolation == "nearest":
        ranks = prims.round(ranks)
    wide = expand(prims.expand_dims(srt, [0]), (n_q, *lead, n))
    below_idx = cast(ranks, _dtype.int64)
    result = prims.gather(wide, wide.ndim - 1, below_idx)
    if interpolation in ("linear", "midpoint"):
        above_idx = cast(prims.ceil(ranks), _dtype.int64)
        above = prims.gather(wide, wide.ndim - 1, above_idx)
        if interpolation == "midpoint":
            weight = fill_like(0.5, ranks)
        else:
            weight = prims.sub(ranks, cast(below_idx, ranks.dtype))
        result = prims.lerp(result, above, weight)
    result = reshape(result, ((n_q,) if keep_q else ()) + tuple(rest))
    return result


def quantile(self, q, dim=None, keepdim=False, interpolation="linear"):
    """The ``q``-th quantiles of ``self`` along ``dim`` (flattened when None); a 1-D ``q`` adds a leading dim.

    ``interpolation`` picks between the two nearest sorted values: linear, lower, higher, midpoint or nearest
    (half to even). A slice containing NaN gives NaN. Float32/float64 inputs only; ``q`` values in [0, 1].
    """
    return _quantile("quantile", self, q, dim, keepdim, interpolation, False)


def quantile_scalar(self, q, dim=None, keepdim=False, interpolation="linear"):
    """The ``q``-th quantile (a float in [0, 1]) of ``self`` along ``dim``; see ``quantile``."""
    return _quantile("quantile", self, q, dim, keepdim, interpolation, False)


def nanquantile(self, q, dim=None, keepdim=False, interpolation="linear"):
    """``quantile`` ignoring NaN values (an all-NaN slice gives NaN)."""
    return _quantile("nanquantile", self, q, dim, keepdim, interpolation, True)


def nanquantile_scalar(self, q, dim=None, keepdim=False, interpolation="linear"):
    """``quantile.scalar`` ignoring NaN values (an all-NaN slice gives NaN)."""
    return _quantile("nanquantile", self, q, dim, keepdim, interpolation, True)


# -- cov, corrcoef ---------------------------------------------------------


def _check_weights(op, name, w, n_obs, integral: bool):
    if w.ndim > 1:
        raise ValueError(f"{op}: expected '{name}' to have one or fewer dimensions but got {w.ndim} dimensions")
    if w.numel() != n_obs:
        raise ValueError(
            f"{op}: expected '{name}' to have the same numel as there are observations in the input "
            f"but got {w.numel()} != {n_obs}"
        )
    if integral and w.dtype.kind not in ("int", "uint"):
        raise TypeError(f"{op}: expected '{name}' to have integral dtype but got {name} with {w.dtype.name} dtype")
    if not integral and not w.dtype.is_floating_point:
        raise TypeError(
            f"{op}: expected '{name}' to have floating point dtype but got {name} with {w.dtype.name} dtype"
        )
    if w.numel() and _truth(prims.any(prims.lt(w, fill_like(0, w)), None)):
        raise ValueError(f"{op}: argument '{name}' cannot be negative")
    return reshape(w, (n_obs,))


def cov(self, correction=1, fweights=None, aweights=None):
    """Covariance matrix of the variables in the rows of ``self`` (observations in columns).

    A 1-D input is one variable; ``fweights`` (integral) repeat observations, ``aweights`` (floating) weigh
    them. The result is squeezed (0-dim for one variable); degrees of freedom <= 0 give inf/NaN with a warning.
    """
    op = "cov"
    if self.ndim > 2:
        raise ValueError(f"{op}: expected input 'self' to have two or fewer dimensions but got {self.ndim}")
    if self.dtype is _dtype.bool_:
        raise TypeError(f"{op}: bool dtype is not supported for input 'self'")
    x = self if self.ndim == 2 else reshape(self, (1, self.numel()))
    n_obs = x.shape[1]
    w = aw = None
    if fweights is not None:
        w = _check_weights(op, "fweights", fweights, n_obs, True)
    if aweights is not None:
        aw = _check_weights(op, "aweights", aweights, n_obs, False)
        w = aw if w is None else ops.mul(w, aw)
    result_dtype = self.dtype if is_floating(self.dtype) else _dtype.get_default_dtype()
    if w is not None:
        result_dtype = _dtype.promote_types(result_dtype, w.dtype)
    compute = _dtype.opmath_dtype(result_dtype)
    x = cast(x, compute)
    real = compute.to_real()
    if w is None:
        w_sum = full((), n_obs, real, x.device)
        total = prims.sum(x, [1])
        avg = prims.div(total, fill_like(n_obs, total))
    else:
        w = cast(w, real)
        w_sum = prims.sum(w, [0])
        wx = prims.mul(x, cast(expand(w, x.shape), compute))
        avg = prims.div(prims.sum(wx, [1]), cast(expand(w_sum, (x.shape[0],)), compute))
    if w is None:
        norm = prims.sub(w_sum, fill_like(correction, w_sum))
    elif correction == 0:
        norm = w_sum
    elif aw is None:
        norm = prims.sub(w_sum, fill_like(correction, w_sum))
    else:
        aw_r = cast(aw, real)
        spread = prims.div(prims.sum(prims.mul(w, aw_r), [0]), w_sum)
        norm = prims.sub(w_sum, prims.mul(fill_like(correction, spread), spread))
    if _truth(prims.le(norm, fill_like(0, norm))):
        warnings.warn(f"{op}: degrees of freedom is <= 0", UserWarning, stacklevel=3)
        norm = fill_like(0, norm)
    xm = prims.sub(x, expand(prims.expand_dims(avg, [1]), x.shape))
    left = xm if w is None else prims.mul(xm, cast(expand(w, x.shape), compute))
    right = prims.transpose(prims.conj_physical(xm) if compute.is_complex else xm, [1, 0])
    c = prims.mm(left, right)
    c = prims.div(c, cast(expand(norm, c.shape), compute))
    c = cast(c, result_dtype)
    return reshape(c, ()) if c.shape == (1, 1) else c


def corrcoef(self):
    """Pearson correlation coefficients of the rows of ``self`` (``cov`` normalised), clipped to [-1, 1]."""
    c = ops.cov(self)
    if c.ndim == 0:
        return prims.div(c, c)
    d = prims.diagonal(c, 0, 0, 1)
    std = prims.sqrt(prims.real(d) if d.dtype.is_complex else d)
    n = std.shape[0]
    std = cast(std, c.dtype) if c.dtype.is_complex else std
    c = prims.div(c, expand(reshape(std, (n, 1)), c.shape))
    c = prims.div(c, expand(reshape(std, (1, n)), c.shape))
    if c.dtype.is_complex:
        re, im = prims.real(c), prims.imag(c)
        lo, hi = fill_like(-1, re), fill_like(1, re)
        return prims.complex(prims.clamp(re, lo, hi), prims.clamp(im, lo, hi))
    return prims.clamp(c, fill_like(-1, c), fill_like(1, c))


# -- histogram, histogramdd --------------------------------------------------


def _check_hist_input(op, self, weight, min_dim=0):
    if self.dtype not in (_dtype.float32, _dtype.float64):
        raise TypeError(f"{op}: input 'self' must be float or double, got {self.dtype.name}")
    if self.ndim < min_dim:
        raise ValueError(f"{op}: input tensor 'self' should have at least {min_dim} dimensions")
    if weight is not None:
        if weight.dtype is not self.dtype:
            raise TypeError(f"{op}: argument 'weight' must have the dtype of 'self' ({self.dtype.name})")
        expected = self.shape[:-1] if min_dim == 2 else self.shape
        if weight.shape != expected:
            raise ValueError(
                f"{op}: argument 'weight' should have the same shape as the input (excluding the last dim for "
                f"histogramdd): expected {list(expected)}, got {list(weight.shape)}"
            )


def _outer_edges(op, points, d, rng):
    """``(left, right)`` of dim ``d``'s bins: ``range`` or the data's min/max, widened by 0.5 when equal."""
    if rng is not None:
        left, right = float(rng[2 * d]), float(rng[2 * d + 1])
    elif points.shape[0] == 0:
        left, right = 0.0, 1.0
    else:
        column = prims.squeeze(_slice(points, 1, d, d + 1), [1])
        left, right = float(prims.item(prims.amin(column, [0]))), float(prims.item(prims.amax(column, [0])))
    if not (math.isfinite(left) and math.isfinite(right)):
        raise ValueError(f"{op}: dimension {d}'s range [{left}, {right}] is not finite")
    if left > right:
        raise ValueError(f"{op}: min should not exceed max, but got min {left} max {right} for dimension {d}")
    if left == right:
        left, right = left - 0.5, right + 0.5
    return left, right


def _inside(values, edges):
    """Whether each value lies within ``[edges[0], edges[-1]]`` (NaN does not)."""
    nb = edges.shape[0] - 1
    first, last = prims.squeeze(_slice(edges, 0, 0, 1), [0]), prims.squeeze(_slice(edges, 0, nb, nb + 1), [0])
    return prims.logical_and(
        prims.ge(values, expand(first, values.shape)), prims.le(values, expand(last, values.shape))
    )


def _clamp_bins(idx, nb):
    return prims.clamp(idx, fill_like(0, idx), fill_like(nb - 1, idx))


def _bin_index(values, edges):
    """Bin of each value among the (non-decreasing) ``edges`` by binary search, the last bin closed on the right;
    and whether the value falls inside the edges."""
    idx = prims.sub(prims.searchsorted(edges, values, True), fill_like(1, values, _dtype.int64))
    return _clamp_bins(idx, edges.shape[0] - 1), _inside(values, edges)


def _linear_bin_index(values, edges, left, right):
    """PyTorch's bin of each value among the equal-width ``edges`` from ``left`` to ``right``: the position
    ``(x - left) * bins / (right - left)``, corrected by one against the edges themselves (rounding)."""
    nb = edges.shape[0] - 1
    inside = _inside(values, edges)
    x = prims.where(inside, values, fill_like(left, values))  # no NaN or infinity reaches the cast below
    scaled = prims.div(prims.mul(prims.sub(x, fill_like(left, x)), fill_like(nb, x)), fill_like(right - left, x))
    pos = _clamp_bins(cast(prims.floor(scaled), _dtype.int64), nb)
    lower = prims.take(edges, pos)
    upper = prims.take(edges, prims.add(pos, fill_like(1, pos)))
    pos = prims.sub(pos, cast(prims.lt(x, lower), _dtype.int64))
    pos = prims.add(pos, cast(prims.ge(x, upper), _dtype.int64))
    return _clamp_bins(pos, nb), inside


def _histogramdd(op, self, bins, rng, weight, density, edge_tensors=None):
    """Counts (or weights) of the points ``self[..., :]`` (last dim: coordinates) in a D-dimensional grid."""
    n_dims = self.shape[-1]
    points = reshape(self, (numel(self.shape[:-1]), n_dims))
    if rng is not None and len(rng) != 2 * n_dims:
        raise ValueError(f"{op}: argument 'range' should have {2 * n_dims} elements, but got {len(rng)}")
    edges, outer = [], {}
    for d in range(n_dims):
        if edge_tensors is not None:
            e = edge_tensors[d]
            if e.dtype is not self.dtype:
                raise TypeError(
                    f"{op}: input tensor and bins tensors should have the same dtype, but got input with dtype "
                    f"{self.dtype.name} and bins for dimension {d} with dtype {e.dtype.name}"
                )
            if e.ndim != 1 or e.shape[0] < 2:
                raise ValueError(f"{op}: bins tensor for dimension {d} must be 1-D with at least 2 edges")
            edges.append(e)
            continue
        if bins[d] <= 0:
            raise ValueError(f"{op}: bins must be > 0, but got {bins[d]} for dimension {d}")
        left, right = _outer_edges(op, points, d, rng)
        outer[d] = (left, right)
        edges.append(ops.linspace(left, right, bins[d] + 1, dtype=self.dtype, device=self.device))
    counts = [e.shape[0] - 1 for e in edges]
    flat = keep = None
    stride = 1
    for d in reversed(range(n_dims)):
        column = prims.squeeze(_slice(points, 1, d, d + 1), [1])
        if d in outer:
            idx, inside = _linear_bin_index(column, edges[d], *outer[d])
        else:
            idx, inside = _bin_index(column, edges[d])
        term = idx if stride == 1 else prims.mul(idx, fill_like(stride, idx))
        flat = term if flat is None else prims.add(flat, term)
        keep = inside if keep is None else prims.logical_and(keep, inside)
        stride *= counts[d]
    total = numel(counts)
    flat = prims.where(keep, flat, fill_like(total, flat))  # out-of-range points go to a discarded extra bin
    weights = None if weight is None else flatten(weight)
    if self.device.type == "meta":  # bincount's length depends on the data in general; here it is total + 1
        ones = full((points.shape[0],), 1, self.dtype, self.device)
        hist = prims.index_add(
            full((total + 1,), 0, self.dtype, self.device), 0, flat, ones if weights is None else weights, 1
        )
    else:
        hist = prims.bincount(flat, weights, total + 1)
    hist = reshape(cast(_slice(hist, 0, 0, total), self.dtype), tuple(counts))
    if density:
        hist = _density(hist, edges)
    return hist, [prims.clone(e) if edge_tensors is not None else e for e in edges]


def _density(hist, edges):
    """``hist`` divided by its total and by each bin's volume (the product of the bin widths)."""
    total = prims.sum(hist, None)
    hist = prims.div(hist, expand(total, hist.shape))
    for d, e in enumerate(edges):
        n = e.shape[0] - 1
        width = prims.sub(_slice(e, 0, 1, n + 1), _slice(e, 0, 0, n))
        shape = [1] * hist.ndim
        shape[d] = n
        hist = prims.div(hist, expand(reshape(width, tuple(shape)), hist.shape))
    return hist


def histogram_bins_tensor(self, bins, weight=None, density=False):
    """Histogram of the flattened ``self`` with the bin edges ``bins`` (1-D, non-decreasing, same dtype).

    Values outside ``[bins[0], bins[-1]]`` (and NaN) are ignored; the last bin includes its right edge.
    ``weight`` (the shape of ``self``) weighs each value; ``density`` normalises to a probability density.
    Returns ``(hist, bin_edges)``.
    """
    op = "histogram"
    _check_hist_input(op, self, weight)
    hist, edges = _histogramdd(op, reshape(self, (self.numel(), 1)), None, None, weight, density, [bins])
    return hist, edges[0]


def histogram_bin_ct(self, bins=100, range=None, weight=None, density=False):  # noqa: A002 - PyTorch's name
    """Histogram of the flattened ``self`` in ``bins`` equal-width bins over ``range`` (default: min to max).

    Returns ``(hist, bin_edges)`` with ``bins + 1`` edges; see ``histogram.bins_tensor``.
    """
    op = "histogram"
    _check_hist_input(op, self, weight)
    if range is not None and len(range) != 2:
        raise ValueError(f"{op}: argument 'range' should have 2 elements, but got {len(range)}")
    hist, edges = _histogramdd(op, reshape(self, (self.numel(), 1)), [bins], range, weight, density)
    return hist, edges[0]


def _dd_check(op, self, weight):
    _check_hist_input(op, self, weight, min_dim=2)
    if self.shape[-1] == 0:
        raise ValueError(f"{op}: the last dim of 'self' (the coordinates of each point) must not be empty")


def histogramdd(self, bins, range=None, weight=None, density=False):  # noqa: A002
    """Multi-dimensional histogram of the points ``self[..., D]`` with ``bins[d]`` bins in dim ``d``.

    Returns ``(hist, bin_edges)``: ``hist`` of shape ``bins`` and one edge tensor per dim.
    """
    op = "histogramdd"
    _dd_check(op, self, weight)
    if len(bins) != self.shape[-1]:
        raise ValueError(
            f"{op}: expected {self.shape[-1]} sequences of bin edges for each of the {self.shape[-1]} dimensions "
            f"of the input, got {len(bins)}"
        )
    return _histogramdd(op, self, list(bins), range, weight, density)


def histogramdd_int_bins(self, bins, range=None, weight=None, density=False):  # noqa: A002
    """``histogramdd`` with ``bins`` equal-width bins in every dim."""
    op = "histogramdd"
    _dd_check(op, self, weight)
    return _histogramdd(op, self, [bins] * self.shape[-1], range, weight, density)


def histogramdd_tensor_bins(self, bins, range=None, weight=None, density=False):  # noqa: A002
    """``histogramdd`` with explicit bin edges per dim (``range`` is ignored, as in PyTorch)."""
    op = "histogramdd"
    _dd_check(op, self, weight)
    if len(bins) != self.shape[-1]:
        raise ValueError(
            f"{op}: expected {self.shape[-1]} sequences of bin edges for each of the {self.shape[-1]} dimensions "
            f"of the input, got {len(bins)}"
        )
    return _histogramdd(op, self, None, None, weight, density, list(bins))


# -- diff, gradient --------------------------------------------------------


def diff(self, n=1, dim=-1, prepend=None, append=None):
    """The ``n``-th forward difference along ``dim`` (``logical_xor`` for bool), after concatenating
    ``prepend`` and ``append`` (same number of dims, same sizes except along ``dim``) around ``self``.
    ``n=0`` returns a copy of ``self`` (without ``prepend``/``append``, as PyTorch)."""
    op = "diff"
    if self.ndim == 0:
        raise ValueError(f"{op}: expects input 'self' to be at least one-dimensional")
    if n < 0:
        raise ValueError(f"{op}: argument 'n' (the order) must be non-negative but got {n}")
    d = wrap_dim(op, dim, self.ndim)
    if n == 0:  # PyTorch (and NumPy) return the input itself, without prepend/append
        return prims.clone(self)
    parts = []
    for name, extra in (("prepend", prepend), (None, self), ("append", append)):
        if extra is None:
            continue
        if name is not None:
            if extra.ndim != self.ndim:
                raise ValueError(f"{op}: expects '{name}' to have the same number of dimensions as input 'self'")
            for i in range(self.ndim):
                if i != d and extra.shape[i] != self.shape[i]:
                    raise ValueError(
                        f"{op}: expects the shape of '{name}' to match that of input except along the "
                        f"differencing dimension; input.size({i}) = {self.shape[i]}, but got "
                        f"{name}.size({i}) = {extra.shape[i]}"
                    )
        parts.append(extra)
    x = ops.cat(parts, d) if len(parts) > 1 else self
    for _ in range(n):
        size = x.shape[d]
        if size == 0:
            break
        later, earlier = _slice(x, d, 1, size), _slice(x, d, 0, size - 1)
        x = prims.ne(later, earlier) if x.dtype is _dtype.bool_ else prims.sub(later, earlier)
    return prims.clone(x) if x is self else x


def _gradient_dims(op, self, dim):
    if dim is None:
        return list(range(self.ndim))
    if isinstance(dim, int):
        return [wrap_dim(op, dim, self.ndim)]
    dims = [wrap_dim(op, d, self.ndim) for d in dim]
    if len(set(dims)) != len(dims):
        raise ValueError(f"{op}: argument 'dim' has a dim that appears multiple times in the list of dims")
    return dims


def _gradient_check(op, self, dims, edge_order, spacing_len=None, dim_given=True):
    if edge_order not in (1, 2):
        raise ValueError(f"{op}: only supports edge_order=1 and edge_order=2, got {edge_order}")
    if spacing_len is not None:
        if not dim_given and spacing_len != self.ndim:
            raise ValueError(
                f"{op}: expected 'spacing' to be unspecified, a scalar, or a list of length equal to "
                f"'self.dim() = {self.ndim}', since dim argument was not given, but got a list of length "
                f"{spacing_len}"
            )
        if dim_given and spacing_len != len(dims):
            raise ValueError(
                f"{op}: expected 'spacing' to be unspecified, a scalar or its spacing and dim arguments to have "
                f"the same length, but got a spacing argument of length {spacing_len} and a dim argument of "
                f"length {len(dims)}"
            )
    for d in dims:
        if self.shape[d] < edge_order + 1:
            raise ValueError(
                f"{op}: expected each dimension size to be at least edge_order+1 ({edge_order + 1}), "
                f"but dim {d} has size {self.shape[d]}"
            )


def _gradient_uniform(self, d, h, edge_order):
    """PyTorch's uniform-spacing gradient along ``d``: central differences, one-sided at the edges."""
    n = self.shape[d]

    def s(a, b):
        return _slice(self, d, a % (n + 1) if a < 0 else a, b % (n + 1) if b < 0 else b)

    center = ops.div(ops.div(ops.sub(s(2, n), s(0, n - 2)), h), 2)
    if edge_order == 1:
        first = ops.div(ops.sub(s(1, 2), s(0, 1)), h)
        last = ops.div(ops.sub(s(n - 1, n), s(n - 2, n - 1)), h)
    else:
        first = ops.add(ops.add(ops.mul(s(0, 1), -1.5), ops.mul(s(1, 2), 2)), ops.mul(s(2, 3), -0.5))
        first = ops.div(first, h)
        last = ops.add(ops.add(ops.mul(s(n - 3, n - 2), 0.5), ops.mul(s(n - 2, n - 1), -2)), ops.mul(s(n - 1, n), 1.5))
        last = ops.div(last, h)
    return ops.cat([first, center, last], d)


def _gradient_coordinates(op, self, d, coords, edge_order):
    """PyTorch's (and NumPy's) second-order accurate gradient along ``d`` for sample coordinates ``coords``."""
    n = self.shape[d]
    if coords.ndim != 1:
        raise ValueError(f"{op}: expected each element of 'spacing' to have one dimension, got {coords.ndim}")
    if coords.shape[0] != n:
        raise ValueError(f"{op}: coordinates for dim {d} have {coords.shape[0]} elements but the dim has size {n}")
    shape = [1] * self.ndim
    shape[d] = n - 2

    def s(a, b):
        return _slice(self, d, a, b)

    dx = ops.diff(coords)
    dx1, dx2 = _slice(dx, 0, 0, n - 2), _slice(dx, 0, 1, n - 1)
    both = ops.add(dx1, dx2)
    a = ops.reshape(ops.div(ops.neg(dx2), ops.mul(dx1, both)), shape)
    b = ops.reshape(ops.div(ops.sub(dx2, dx1), ops.mul(dx1, dx2)), shape)
    c = ops.reshape(ops.div(dx1, ops.mul(dx2, both)), shape)
    center = ops.add(ops.add(ops.mul(a, s(0, n - 2)), ops.mul(b, s(1, n - 1))), ops.mul(c, s(2, n)))

    def at(i):
        return ops.select(dx, 0, i)

    if edge_order == 1:
        first = ops.div(ops.sub(s(1, 2), s(0, 1)), at(0))
        last = ops.div(ops.sub(s(n - 1, n), s(n - 2, n - 1)), at(-1))
    else:
        d0, d1 = at(0), at(1)
        s01 = ops.add(d0, d1)
        fa = ops.div(ops.neg(ops.add(ops.mul(d0, 2.0), d1)), ops.mul(d0, s01))
        fb = ops.div(s01, ops.mul(d0, d1))
        fc = ops.div(ops.neg(d0), ops.mul(d1, s01))
        first = ops.add(ops.add(ops.mul(fa, s(0, 1)), ops.mul(fb, s(1, 2))), ops.mul(fc, s(2, 3)))
        e1, e2 = at(-1), at(-2)
        s12 = ops.add(e1, e2)
        la = ops.div(e1, ops.mul(e2, s12))
        lb = ops.div(ops.neg(s12), ops.mul(e1, e2))
        lc = ops.div(ops.add(ops.mul(e1, 2.0), e2), ops.mul(e1, s12))
        last = ops.add(ops.add(ops.mul(la, s(n - 3, n - 2)), ops.mul(lb, s(n - 2, n - 1))), ops.mul(lc, s(n - 1, n)))
    return ops.cat([first, center, last], d)


def _gradient_scalars(op, self, spacing, dim, edge_order, dim_given):
    dims = _gradient_dims(op, self, dim)
    if self.dtype is _dtype.bool_:
        raise TypeError(f"{op}: bool inputs are not supported (subtraction of bools)")
    if isinstance(spacing, (list, tuple)):
        _gradient_check(op, self, dims, edge_order, len(spacing), dim_given)
        steps = list(spacing)
    else:
        _gradient_check(op, self, dims, edge_order)
        steps = [1 if spacing is None else spacing] * len(dims)
    return [_gradient_uniform(self, d, h, edge_order) for d, h in zip(dims, steps)]


def _gradient_tensors(op, self, spacing, dim, edge_order, dim_given):
    dims = _gradient_dims(op, self, dim)
    if self.dtype is _dtype.bool_:
        raise TypeError(f"{op}: bool inputs are not supported (subtraction of bools)")
    _gradient_check(op, self, dims, edge_order, len(spacing), dim_given)
    out = []
    for d, coords in zip(dims, spacing):
        if coords.ndim == 0:
            out.append(_gradient_uniform(self, d, coords, edge_order))
        else:
            out.append(_gradient_coordinates(op, self, d, coords, edge_order))
    return out


def gradient_scalarint(self, spacing=None, dim=None, edge_order=1):
    """The gradient of ``self`` along ``dim`` (default: every dim) with one uniform ``spacing`` (default 1).

    Central differences inside, one-sided differences of order ``edge_order`` (1 or 2) at the boundaries, as
    ``numpy.gradient``. Returns one tensor per dim; integer inputs give floating results.
    """
    return _gradient_scalars("gradient", self, spacing, dim, edge_order, dim_given=dim is not None)


def gradient_scalararray(self, spacing, dim, edge_order=1):
    """The gradient along each of the dims ``dim`` with one uniform ``spacing``."""
    return _gradient_scalars("gradient", self, spacing, dim, edge_order, dim_given=True)


def gradient_array(self, dim, edge_order=1):
    """The gradient along each of the dims ``dim`` with unit spacing."""
    return _gradient_scalars("gradient", self, None, dim, edge_order, dim_given=True)


def gradient_scalarrayint(self, spacing, dim=None, edge_order=1):
    """The gradient with one uniform spacing per dim (``spacing[i]`` for the i-th dim of ``dim`` or of self)."""
    return _gradient_scalars("gradient", self, list(spacing), dim, edge_order, dim_given=dim is not None)


def gradient_scalarrayarray(self, spacing, dim, edge_order=1):
    """The gradient along the dims ``dim`` with the uniform spacings ``spacing`` (one per dim)."""
    return _gradient_scalars("gradient", self, list(spacing), dim, edge_order, dim_given=True)


def gradient_tensorarrayint(self, spacing, dim=None, edge_order=1):
    """The gradient with sample coordinates per dim (1-D tensors as long as the dim; 0-dim ones are spacings)."""
    return _gradient_tensors("gradient", self, list(spacing), dim, edge_order, dim_given=dim is not None)


def gradient_tensorarray(self, spacing, dim, edge_order=1):
    """The gradient along the dims ``dim`` with sample coordinates ``spacing`` (one 1-D tensor per dim)."""
    return _gradient_tensors("gradient", self, list(spacing), dim, edge_order, dim_given=True)


# -- renorm and partial norms ----------------------------------------------


def renorm(self, p, dim, maxnorm):
    """Each slice ``self.select(dim, i)`` whose ``p``-norm exceeds ``maxnorm`` rescaled to norm ``maxnorm``.

    The factor is ``maxnorm / (norm + 1e-7)`` as in PyTorch; ``p`` > 0, ``maxnorm`` >= 0, at least 2 dims.
    """
    op = "renorm"
    if not is_floating(self.dtype):
        raise TypeError(f"{op}: expected a floating point or complex input 'self', got {self.dtype.name}")
    if isinstance(p, complex) or isinstance(maxnorm, complex):
        raise TypeError(f"{op}: arguments 'p' and 'maxnorm' must be real numbers")
    if self.ndim < 2:
        raise ValueError(f"{op}: input 'self' needs at least 2 dimensions, got {self.ndim} dimensions")
    if p <= 0:
        raise ValueError(f"{op}: non-positive-norm not supported (argument 'p' = {p})")
    if maxnorm < 0:
        raise ValueError(f"{op}: expected argument 'maxnorm' to be >= 0 but got {maxnorm}")
    d = wrap_dim(op, dim, self.ndim)
    others = [i for i in range(self.ndim) if i != d]
    norm = ops.norm(self, p, others, True)
    real = norm.dtype
    compute = _dtype.opmath_dtype(real)
    nm = cast(norm, compute)
    factor = prims.div(fill_like(maxnorm, nm), prims.add(nm, fill_like(1e-7, nm)))
    factor = prims.where(prims.gt(nm, fill_like(maxnorm, nm)), factor, fill_like(1, nm))
    factor = cast(factor, real)
    return ops.mul(self, factor)


def frobenius_norm_dim(self, dim, keepdim=False):
    """``sqrt(sum |x|^2)`` over at most two dims ``dim``; complex inputs give real results."""
    op = "frobenius_norm"
    if len(dim) > 2:
        raise ValueError(f"{op}: expected at most 2 dimensions in argument 'dim', but got {len(dim)}")
    return ops.norm(self, 2, list(dim), keepdim)


def _nuclear(op, self, dims, keepdim):
    if not is_floating(self.dtype):
        raise TypeError(f"{op}: expected a floating point or complex input 'self', got {self.dtype.name}")
    d0, d1 = (wrap_dim(op, d, self.ndim) for d in dims)
    if d0 == d1:
        raise ValueError(f"{op}: argument 'dim' must name two different dims, got {list(dims)}")
    rest = [i for i in range(self.ndim) if i not in (d0, d1)]
    x = prims.transpose(self, rest + [d0, d1])
    compute = _dtype.opmath_dtype(self.dtype)
    singular = prims.svd(cast(x, compute), False)[1]
    result = cast(prims.sum(singular, [singular.ndim - 1]), self.dtype.to_real())
    if keepdim:
        result = prims.expand_dims(result, sorted((d0, d1)), self.ndim)
    return result


def nuclear_norm(self, keepdim=False):
    """The nuclear norm (sum of singular values) of the 2-D ``self``."""
    op = "nuclear_norm"
    if self.ndim != 2:
        raise ValueError(f"{op}: expected a tensor with 2 dimensions, but got a tensor with {self.ndim} dimensions")
    return _nuclear(op, self, (0, 1), keepdim)


def nuclear_norm_dim(self, dim, keepdim=False):
    """The nuclear norm of the matrices spanned by the two dims ``dim`` (batched over the others)."""
    op = "nuclear_norm"
    if len(dim) != 2:
        raise ValueError(f"{op}: argument 'dim' must have two dims, got {list(dim)}")
    return _nuclear(op, self, dim, keepdim)


def norm_except_dim(v, pow=2, dim=0):  # noqa: A002 - PyTorch's argument name
    """The ``pow``-norm of ``v`` over every dim but ``dim``, shaped to broadcast against ``v`` (weight norm).

    ``dim=-1`` gives the norm of the whole tensor.
    """
    op = "norm_except_dim"
    if dim == -1:
        return ops.norm(v, pow)
    if v.ndim == 0:
        raise ValueError(f"{op}: argument 'dim' ({dim}) needs a tensor with at least one dimension")
    d = wrap_dim(op, dim, v.ndim)
    n = v.shape[d]
    rows = reshape(movedim(v, d, 0), (n, v.numel() // n if n else 0))
    shape = [1] * v.ndim
    shape[d] = n
    return reshape(ops.norm(rows, pow, [1]), tuple(shape))


def sum_to_size(self, size):
    """``self`` summed down to ``size``, a shape ``self`` can be broadcast from (the reverse of ``expand``)."""
    op = "sum_to_size"
    size = tuple(size)
    if len(size) > self.ndim:
        raise ValueError(f"{op}: size {list(size)} is not expandable to the shape of 'self' {list(self.shape)}")
    lead = self.ndim - len(size)
    dims = list(range(lead))
    for i, s in enumerate(size):
        if s == self.shape[lead + i]:
            continue
        if s != 1:
            raise ValueError(f"{op}: size {list(size)} is not expandable to the shape of 'self' {list(self.shape)}")
        dims.append(lead + i)
    if not size:  # PyTorch's sum_to: an empty size sums everything, a 0-dim input too (bool/int -> int64)
        return ops.sum(self)
    if not dims:
        return prims.clone(self)
    return reshape(ops.sum(self, dims, True), size)


# -- definitions -----------------------------------------------------------

R = ("reduction",)

# (schema, decomposition, tags, in-place?, out=?) — overloads a call could bind to come in PyTorch's preference order
# (histogramdd.int_bins before histogramdd: an int binds to int[] too)
STATISTICS = [
    (
        "quantile(Tensor self, Tensor q, int? dim=None, bool keepdim=False, *, str interpolation='linear') -> Tensor",
        quantile,
        R,
        False,
        True,
    ),
    (
        "quantile.scalar(Tensor self, float q, int? dim=None, bool keepdim=False, *, str interpolation='linear') "
        "-> Tensor",
        quantile_scalar,
        R,
        False,
        True,
    ),
    (
        "nanquantile(Tensor self, Tensor q, int? dim=None, bool keepdim=False, *, str interpolation='linear') "
        "-> Tensor",
        nanquantile,
        R,
        False,
        True,
    ),
    (
        "nanquantile.scalar(Tensor self, float q, int? dim=None, bool keepdim=False, *, str interpolation='linear') "
        "-> Tensor",
        nanquantile_scalar,
        R,
        False,
        True,
    ),
    (
        "cov(Tensor self, *, int correction=1, Tensor? fweights=None, Tensor? aweights=None) -> Tensor",
        cov,
        ("data_dependent_output",),
        False,
        False,
    ),
    ("corrcoef(Tensor self) -> Tensor", corrcoef, ("data_dependent_output",), False, False),
    (
        "histogram.bins_tensor(Tensor self, Tensor bins, *, Tensor? weight=None, bool density=False) "
        "-> (Tensor hist, Tensor bin_edges)",
        histogram_bins_tensor,
        (),
        False,
        True,
    ),
    (
        "histogram.bin_ct(Tensor self, int bins=100, *, float[]? range=None, Tensor? weight=None, "
        "bool density=False) -> (Tensor hist, Tensor bin_edges)",
        histogram_bin_ct,
        ("data_dependent_output",),
        False,
        True,
    ),
    (
        "histogramdd.int_bins(Tensor self, int bins, float[]? range=None, Tensor? weight=None, bool density=False) "
        "-> (Tensor hist, Tensor[] bin_edges)",
        histogramdd_int_bins,
        ("data_dependent_output",),
        False,
        False,
    ),
    (
        "histogramdd(Tensor self, int[] bins, float[]? range=None, Tensor? weight=None, bool density=False) "
        "-> (Tensor hist, Tensor[] bin_edges)",
        histogramdd,
        ("data_dependent_output",),
        False,
        False,
    ),
    (
        "histogramdd.TensorList_bins(Tensor self, Tensor[] bins, float[]? range=None, Tensor? weight=None, "
        "bool density=False) -> (Tensor hist, Tensor[] bin_edges)",
        histogramdd_tensor_bins,
        (),
        False,
        False,
    ),
    (
        "diff(Tensor self, int n=1, int dim=-1, Tensor? prepend=None, Tensor? append=None) -> Tensor",
        diff,
        (),
        False,
        True,
    ),
    (
        "gradient.scalarint(Tensor self, *, Scalar? spacing=None, int? dim=None, int edge_order=1) -> Tensor[]",
        gradient_scalarint,
        (),
        False,
        False,
    ),
    (
        "gradient.scalararray(Tensor self, *, Scalar spacing, int[] dim, int edge_order=1) -> Tensor[]",
        gradient_scalararray,
        (),
        False,
        False,
    ),
    ("gradient.array(Tensor self, *, int[] dim, int edge_order=1) -> Tensor[]", gradient_array, (), False, False),
    (
        "gradient.scalarrayint(Tensor self, *, Scalar[] spacing, int? dim=None, int edge_order=1) -> Tensor[]",
        gradient_scalarrayint,
        (),
        False,
        False,
    ),
    (
        "gradient.scalarrayarray(Tensor self, *, Scalar[] spacing, int[] dim, int edge_order=1) -> Tensor[]",
        gradient_scalarrayarray,
        (),
        False,
        False,
    ),
    (
        "gradient.tensorarrayint(Tensor self, *, Tensor[] spacing, int? dim=None, int edge_order=1) -> Tensor[]",
        gradient_tensorarrayint,
        (),
        False,
        False,
    ),
    (
        "gradient.tensorarray(Tensor self, *, Tensor[] spacing, int[] dim, int edge_order=1) -> Tensor[]",
        gradient_tensorarray,
        (),
        False,
        False,
    ),
    ("renorm(Tensor self, Scalar p, int dim, Scalar maxnorm) -> Tensor", renorm, (), True, True),
    ("frobenius_norm.dim(Tensor self, int[1] dim, bool keepdim=False) -> Tensor", frobenius_norm_dim, R, False, "out"),
    ("nuclear_norm(Tensor self, bool keepdim=False) -> Tensor", nuclear_norm, R, False, True),
    ("nuclear_norm.dim(Tensor self, int[2] dim, bool keepdim=False) -> Tensor", nuclear_norm_dim, R, False, True),
    ("norm_except_dim(Tensor v, int pow=2, int dim=0) -> Tensor", norm_except_dim, R, False, False),
    ("sum_to_size(Tensor self, SymInt[] size) -> Tensor", sum_to_size, R, False, False),
]


def _define():
    for schema, decomposition, tags, inplace, out in STATISTICS:
        define_with_variants(schema, decomposition, tags=tags, inplace=inplace, out=out)


_define()
