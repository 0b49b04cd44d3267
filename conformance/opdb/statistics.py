"""Op database entries: statistics (quantile, cov, corrcoef, histogram(dd), diff, gradient, renorm, partial norms),
the extra pointwise ops (complex, polar, frexp, isin, tensor predicates) and the extra indexing ops
(index_reduce, unique_dim_consecutive, combinations, ``where(condition)``, nonzero_numpy).

Oracles are NumPy's own functions where it has them (``np.quantile`` with the same
interpolation ``method`` names, ``np.cov``, ``np.corrcoef``, ``np.histogram``,
``np.histogramdd``, ``np.diff``, ``np.gradient``, ``np.frexp``, ``np.isin``,
``np.nonzero``, ``np.linalg.svd``) and short formulas written here otherwise
(renorm, index_reduce, unique_dim_consecutive). The first cases use transposed
and strided inputs; later ones cover 0-dim, empty and special values.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
import opweave as ow

from . import register
from ._cases import TA, Gen, Idx, K, S, T, Val, entry, make, sample
from ._core import ALL, BOOL, COMPLEX, FLOAT, INT, NUMERIC, REAL, Arr, ErrorInput, OpInfo, SampleInput, arr

C = "contiguous"
F32_64 = (ow.float32, ow.float64)
C64_128 = COMPLEX
NO_BOOL = NUMERIC
TOL = {
    "float16": (5e-3, 5e-3),
    "bfloat16": (3e-2, 3e-2),
    "float32": (1e-5, 1e-5),
    "float64": (1e-9, 1e-9),
    "complex64": (1e-5, 1e-5),
    "complex128": (1e-9, 1e-9),
}
LOOSE = {**TOL, "float16": (1e-2, 2e-2), "bfloat16": (6e-2, 1e-1)}


@dataclass
class FixedArr(Arr):
    """A tensor argument whose values must stay distinct (coordinates, bin edges, a variable's observations):
    a ``broadcast`` layout request, which repeats the first row, falls back to ``strided``."""

    def __post_init__(self):
        if self.layout == "broadcast":
            self.layout = "strided"
        super().__post_init__()


def fixed(spec):
    """The spec ``spec`` (a :class:`TA` or :class:`Val`) built as a :class:`FixedArr`."""
    return Gen(lambda rng, d: FixedArr(*_parts(make(spec, rng, d))))


def _parts(a):
    return a.value, a.dtype, a.layout


def errors(*cases):
    """An ``error_inputs`` generator from ``(exception type, K(...))`` pairs (specs built per dtype)."""

    def gen(rng, dtype):
        for exc, (args, kwargs) in cases:
            yield ErrorInput(sample(args, kwargs, rng, dtype), exc)

    return gen


def _with_nans(*shape, layout="contiguous", frac=0.3):
    """Random values of the dtype under test with about ``frac`` of them NaN."""

    def fn(rng, dtype):
        a = arr(rng, shape, dtype, layout)
        v = a.value.copy()
        v[rng.random(shape) < frac] = np.nan
        return Arr(v, dtype, layout)

    return Gen(fn)


# -- quantile, nanquantile ---------------------------------------------------------------------------


def _quantile_oracle(fn):
    def oracle(x, q, dim=None, keepdim=False, interpolation="linear"):
        if x.ndim == 0:
            x = x.reshape(1)
            out = fn(x, q, method=interpolation)
            return np.asarray(out)
        axis = None if dim is None else dim % x.ndim
        return np.asarray(fn(x, q, axis=axis, keepdims=keepdim, method=interpolation))

    return oracle


def _quantile_lines():
    qv = Val([0.0, 0.25, 0.5, 0.9, 1.0])
    cases = [
        K(TA((3, 4), T), qv, 1, True),
        K(TA((2, 3, 4), S), Val([0.3, 0.7]), 0, interpolation="lower"),
        K(TA((7,)), Val(0.4), interpolation="higher"),
        K(TA((3, 5)), qv, -1, interpolation="midpoint"),
        K(TA((4, 6), T), qv, None, True, interpolation="nearest"),
        K(TA(()), Val([0.5]), 0, True),
        K(_with_nans(3, 5), qv, 1),
        K(TA((1, 4)), Val(0.5), 0, interpolation="nearest"),
    ]
    scalar = [
        K(TA((3, 4), T), 0.25, 1, True),
        K(TA((2, 3, 4), S), 0.7, 0, interpolation="lower"),
        K(TA((7,)), 0.4, interpolation="higher"),
        K(TA((3, 5)), 1.0, -1, interpolation="midpoint"),
        K(TA((4, 6), T), 0.5, None, True, interpolation="nearest"),
        K(TA(()), 0.0),
        K(_with_nans(3, 5), 0.6, 1),
    ]
    nan_cases = [K(_with_nans(3, 5, frac=0.4), *c[0][1:], **c[1]) for c in cases[:5]]
    nan_cases += [K(Gen(lambda rng, d: Arr(np.full((2, 3), np.nan), d)), qv, 1), *cases[5:]]
    nan_scalar = [K(_with_nans(3, 5, frac=0.4), *c[0][1:], **c[1]) for c in scalar[:5]] + scalar[5:]
    bad = errors(
        (ValueError, K(TA((3,)), Val([0.5, 1.5]))),
        (ValueError, K(TA((0,)), Val(0.5))),
        (ValueError, K(TA((3,)), Val([[0.5]]))),
        (ValueError, K(TA((3,)), Val(0.5), interpolation="cubic")),
        (ValueError, K(TA((3, 2)), Val(0.5), 2)),
        (TypeError, K(TA((3,)), Val(0.5, ow.float16))),
    )
    bad_scalar = errors((ValueError, K(TA((3,)), -0.1)), (ValueError, K(TA((3,)), 1.5)))
    bad_int = errors((TypeError, K(TA((3,), dtype=ow.int64), 0.5)), (TypeError, K(TA((3,), dtype=ow.float16), 0.5)))
    q, nq = _quantile_oracle(np.quantile), _quantile_oracle(np.nanquantile)
    return [
        entry("quantile", q, cases, F32_64, error_inputs=bad),
        entry("quantile.scalar", q, scalar, F32_64, error_inputs=_chain(bad_scalar, bad_int)),
        entry("nanquantile", nq, nan_cases, F32_64, error_inputs=bad),
        entry("nanquantile.scalar", nq, nan_scalar, F32_64, error_inputs=_chain(bad_scalar, bad_int)),
    ]


def _chain(*gens):
    def gen(rng, dtype):
        for g in gens:
            yield from g(rng, dtype)

    return gen


# -- cov, corrcoef ----------------------------------------------------------------------------------


def _cov(x, correction=1, fweights=None, aweights=None):
    return np.cov(x, ddof=correction, fweights=fweights, aweights=aweights)


def _cov_lines():
    fw = Idx((5,), 4, 1)
    cases = [
        K(fixed(TA((3, 5), T))),
        K(fixed(TA((2, 7), S)), correction=0),
        K(fixed(TA((6,)))),
        K(fixed(TA((3, 5))), fweights=fw),
        K(fixed(TA((2, 5))), aweights=TA((5,), dtype=ow.float64, domain="pos")),
        K(fixed(TA((4, 5), T)), correction=2, fweights=fw, aweights=TA((5,), dtype=ow.float64, domain="pos")),
        K(fixed(TA((1, 4)))),
        K(TA(())),
    ]
    bad = errors(
        (ValueError, K(TA((2, 3, 4)))),
        (TypeError, K(TA((2, 3)), fweights=TA((3,), dtype=ow.float32))),
        (TypeError, K(TA((2, 3)), aweights=Idx((3,), 3))),
        (ValueError, K(TA((2, 3)), fweights=Idx((4,), 3))),
        (ValueError, K(TA((2, 3)), fweights=Val([1, -1, 2], ow.int64))),
        (ValueError, K(TA((2, 3)), aweights=Val([[1.0, 1.0, 2.0]], ow.float32))),
    )
    corr = [K(fixed(TA(shape, layout))) for shape, layout in (((3, 5), T), ((2, 7), S), ((6,), C), ((4, 4), C))]
    corr += [K(TA(())), K(fixed(TA((1, 3))))]
    return [
        entry("cov", _cov, cases, INT + FLOAT + COMPLEX, tolerances=TOL, error_inputs=bad),
        entry(
            "corrcoef",
            np.corrcoef,
            corr,
            INT + FLOAT + COMPLEX,
            tolerances=TOL,
            error_inputs=errors((ValueError, K(TA((2, 3, 4))))),
        ),
    ]


# -- histogram, histogramdd --------------------------------------------------------------------------


def _hist(x, bins=100, range=None, weight=None, density=False):  # noqa: A002
    x = x.reshape(-1)
    if range is not None:
        range = tuple(range)  # noqa: A001
    w = None if weight is None else weight.reshape(-1)
    if isinstance(bins, np.ndarray):
        return np.histogram(x, bins=bins, weights=w, density=density)
    return np.histogram(x, bins=bins, range=range, weights=w, density=density)


def _hist_dd(x, bins, range=None, weight=None, density=False):  # noqa: A002
    d = x.shape[-1]
    pts = x.reshape(-1, d)
    if isinstance(bins, int):
        bins = [bins] * d
    rng = None if range is None else [(range[2 * i], range[2 * i + 1]) for i in builtins_range(d)]
    if isinstance(bins, list) and bins and isinstance(bins[0], np.ndarray):
        rng = None
    w = None if weight is None else weight.reshape(-1)
    hist, edges = np.histogramdd(pts, bins=bins, range=rng, weights=w, density=density)
    return hist, list(edges)


builtins_range = range


def _edges(*values):
    return fixed(Val(list(values)))


def _hist_lines():
    bin_ct = [
        K(TA((3, 4), T), 5),
        K(TA((20,), S), 7, range=[-2.0, 3.0]),
        K(TA((2, 3, 4)), 4, range=[0.0, 4.0], weight=TA((2, 3, 4), domain="pos"), density=True),
        K(TA(()), 3),
        K(TA((0,)), 4),
        K(Val([1.0, 1.0, 1.0]), 4),
        K(TA((4, 5)), 6, density=True),
        K(_with_nans(10), 3, range=[-4.0, 4.0]),
    ]
    bins_tensor = [
        K(TA((3, 4), T), _edges(-4.0, -1.0, 0.0, 0.5, 4.0)),
        K(TA((20,), S), _edges(-2.0, 3.0), weight=TA((20,), domain="pos")),
        K(TA((2, 3)), _edges(-3.0, 0.0, 1.0, 2.0), density=True),
        K(TA(()), _edges(0.0, 1.0, 2.0)),
        K(TA((0,)), _edges(0.0, 1.0)),
    ]
    bad = errors(
        (ValueError, K(TA((3,)), 0)),
        (ValueError, K(TA((3,)), 3, range=[2.0, 1.0])),
        (ValueError, K(Val([1.0, np.inf]), 3)),
        (ValueError, K(TA((3,)), 3, weight=TA((4,)))),
        (TypeError, K(TA((3,), dtype=ow.int64), 3)),
    )
    dd = [
        K(TA((6, 2), T), [2, 3]),
        K(TA((2, 5, 3)), [2, 2, 3], [-4.0, 4.0, -1.0, 1.0, 0.0, 4.0]),
        K(TA((7, 2)), [3, 1], weight=TA((7,), domain="pos"), density=True),
        K(TA((0, 2)), [2, 2]),
    ]
    dd_int = [
        K(TA((6, 2), T), 3),
        K(TA((2, 5, 3)), 2, [-4.0, 4.0, -1.0, 1.0, 0.0, 4.0]),
        K(TA((7, 1)), 4, weight=TA((7,), domain="pos"), density=True),
    ]
    dd_tensor = [
        K(TA((6, 2), T), [_edges(-4.0, 0.0, 4.0), _edges(-4.0, -1.0, 1.0, 4.0)]),
        K(TA((5, 1)), [_edges(-2.0, 2.0)], weight=TA((5,), domain="pos"), density=True),
    ]
    bad_dd = errors(
        (ValueError, K(TA((6,)), [3])),
        (ValueError, K(TA((6, 2)), [3])),
        (ValueError, K(TA((6, 2)), [3, 0])),
        (ValueError, K(TA((6, 2)), [3, 3], [0.0, 1.0])),
    )
    return [
        entry("histogram.bin_ct", _hist, bin_ct, F32_64, tolerances=TOL, error_inputs=bad),
        entry(
            "histogram.bins_tensor",
            _hist,
            bins_tensor,
            F32_64,
            tolerances=TOL,
            error_inputs=errors((TypeError, K(TA((3,)), Val([0.0, 1.0], ow.float16)))),
        ),
        entry("histogramdd", _hist_dd, dd, F32_64, tolerances=TOL, error_inputs=bad_dd),
        entry("histogramdd.int_bins", _hist_dd, dd_int, F32_64, tolerances=TOL),
        entry("histogramdd.TensorList_bins", _hist_dd, dd_tensor, F32_64, tolerances=TOL),
    ]


# -- diff, gradient ---------------------------------------------------------------------------------


def _diff(x, n=1, dim=-1, prepend=None, append=None):
    kw = {}
    if prepend is not None:
        kw["prepend"] = prepend
    if append is not None:
        kw["append"] = append
    return np.diff(x, n=n, axis=dim, **kw)


def _diff_lines():
    cases = [
        K(TA((3, 4), T)),
        K(TA((2, 3, 5), S), 2, 1),
        K(TA((6,)), 1, 0, TA((2,)), TA((1,))),
        K(TA((3, 4)), 3, 0, append=TA((2, 4))),
        K(TA((4,)), 0),
        K(TA((3,)), 5),
        K(TA((2, 0))),
    ]
    bad = errors(
        (ValueError, K(TA(()))),
        (ValueError, K(TA((3,)), -1)),
        (ValueError, K(TA((2, 3)), 1, 1, TA((3,)))),
        (ValueError, K(TA((2, 3)), 1, 1, TA((3, 1)))),
        (ValueError, K(TA((2, 3)), 1, 2)),
    )
    # each difference rounds to the dtype (16-bit floats too), as in PyTorch: the oracle computes in the dtype
    return [entry("diff", _diff, cases, ALL, upcast=False, error_inputs=bad)]


def _gradient(x, spacing=None, dim=None, edge_order=1):
    if dim is None:
        axes = list(range(x.ndim))
    elif isinstance(dim, int):
        axes = [dim % x.ndim]
    else:
        axes = [d % x.ndim for d in dim]
    if spacing is None:
        steps = [1.0] * len(axes)
    elif isinstance(spacing, list):
        steps = [np.asarray(s) if isinstance(s, np.ndarray) and s.ndim else float(np.asarray(s)) for s in spacing]
    else:
        steps = [spacing] * len(axes)
    x = x.astype(np.complex128 if x.dtype.kind == "c" else np.float64)
    return [np.gradient(x, h, axis=a, edge_order=edge_order) for a, h in zip(axes, steps)]


def _coords(n):
    """Increasing, distinct sample coordinates of the real dtype of the dtype under test."""
    return Gen(lambda rng, d: FixedArr(np.cumsum(rng.uniform(0.5, 2.0, n)), d.to_real()))


def _gradient_lines():
    sc = [
        K(TA((3, 4), T)),
        K(TA((2, 3, 5), S), spacing=2, dim=1),
        K(TA((6,)), spacing=0.5, edge_order=2),
        K(TA((4, 5)), dim=-1, edge_order=2),
        K(TA((2, 3))),
    ]
    sa = [K(TA((3, 4), T), spacing=2.0, dim=[0, 1]), K(TA((3, 4, 5)), spacing=0.5, dim=[2], edge_order=2)]
    arr_ = [K(TA((3, 4), T), dim=[1, 0]), K(TA((2, 3, 5), S), dim=[-1], edge_order=2)]
    sai = [K(TA((3, 4), T), spacing=[1.5, 2.0]), K(TA((5, 4)), spacing=[3.0], dim=0, edge_order=2)]
    saa = [K(TA((3, 4), T), spacing=[1.5, 2.0], dim=[1, 0]), K(TA((3, 6)), spacing=[0.25], dim=[1], edge_order=2)]
    tai = [
        K(TA((3, 4), T), spacing=[_coords(3), _coords(4)]),
        K(TA((5, 4)), spacing=[_coords(5)], dim=0, edge_order=2),
    ]
    ta = [
        K(TA((3, 4), T), spacing=[_coords(4), _coords(3)], dim=[1, 0], edge_order=2),
        K(TA((2, 6), S), spacing=[_coords(6)], dim=[1]),
    ]
    dtypes = tuple(d for d in NO_BOOL if d is not ow.uint8)  # uint8 differences wrap around, as in PyTorch
    bad = errors(
        (ValueError, K(TA((1, 3)))),
        (ValueError, K(TA((3, 3)), edge_order=3)),
        (ValueError, K(TA((2, 3)), edge_order=2)),
    )
    bad_list = errors(
        (ValueError, K(TA((3, 4)), spacing=[1.0, 2.0, 3.0])),
        (ValueError, K(TA((3, 4)), spacing=[1.0])),
    )
    bad_dims = errors((ValueError, K(TA((3, 4)), dim=[0, 0])), (ValueError, K(TA((3, 4)), dim=[2])))
    bad_coords = errors((ValueError, K(TA((3, 4)), spacing=[_coords(3), _coords(3)])))
    return [
        entry("gradient.scalarint", _gradient, sc, dtypes, tolerances=LOOSE, error_inputs=bad),
        entry("gradient.scalararray", _gradient, sa, dtypes, tolerances=LOOSE),
        entry("gradient.array", _gradient, arr_, dtypes, tolerances=LOOSE, error_inputs=bad_dims),
        entry("gradient.scalarrayint", _gradient, sai, dtypes, tolerances=LOOSE, error_inputs=bad_list),
        entry("gradient.scalarrayarray", _gradient, saa, dtypes, tolerances=LOOSE),
        entry("gradient.tensorarrayint", _gradient, tai, F32_64 + C64_128, tolerances=LOOSE, error_inputs=bad_coords),
        entry("gradient.tensorarray", _gradient, ta, F32_64 + C64_128, tolerances=LOOSE),
    ]


# -- renorm, partial norms, sum_to_size --------------------------------------------------------------


def _pnorm(x, p, axes, keepdims=True):
    a = np.abs(x)
    if np.isinf(p):
        return a.max(axis=axes, keepdims=keepdims)
    return np.sum(a**p, axis=axes, keepdims=keepdims) ** (1.0 / p)


def _renorm(x, p, dim, maxnorm):
    d = dim % x.ndim
    axes = tuple(i for i in range(x.ndim) if i != d)
    norm = _pnorm(x, p, axes)
    factor = np.where(norm > maxnorm, maxnorm / (norm + 1e-7), 1.0)
    return x * factor


def _frobenius(x, dim, keepdim=False):
    axes = tuple(d % x.ndim for d in dim) if dim else None
    return np.sqrt(np.sum(np.abs(x) ** 2, axis=axes, keepdims=keepdim))


def _nuclear(x, dim=(0, 1), keepdim=False):
    d0, d1 = (d % x.ndim for d in dim)
    moved = np.moveaxis(x, (d0, d1), (-2, -1))
    out = np.linalg.svd(moved, compute_uv=False).sum(-1)
    return np.expand_dims(out, tuple(sorted((d0, d1)))) if keepdim else out


def _norm_except_dim(v, pow=2, dim=0):  # noqa: A002
    if dim == -1:
        return _pnorm(v, pow, None, False)
    d = dim % v.ndim
    axes = tuple(i for i in range(v.ndim) if i != d)
    return _pnorm(v, pow, axes) if axes else np.abs(v)


def _sum_to_size(x, size):
    lead = x.ndim - len(size)
    axes = tuple(range(lead)) + tuple(lead + i for i, s in enumerate(size) if s == 1 and x.shape[lead + i] != 1)
    if not axes:
        return x.copy()
    wide = np.int64 if x.dtype.kind in "biu" else None
    return np.sum(x, axis=axes, keepdims=True, dtype=wide).reshape(size)


def _norm_lines():
    renorm = [
        K(TA((3, 4), T), 2, 0, 1.5),
        K(TA((2, 3, 4), S), 1, 1, 3),
        K(TA((4, 3)), float("inf"), -1, 2.0),
        K(TA((3, 5)), 3.5, 1, 0.0),
        K(TA((2, 3)), 2, 0, 100.0),
    ]
    bad_renorm = errors(
        (ValueError, K(TA((3, 4)), 0, 0, 1.0)),
        (ValueError, K(TA((3, 4)), 2, 0, -1.0)),
        (ValueError, K(TA((4,)), 2, 0, 1.0)),
        (ValueError, K(TA((3, 4)), 2, 2, 1.0)),
        (TypeError, K(TA((3, 4), dtype=ow.int64), 2, 0, 1.0)),
    )
    frob = [
        K(TA((3, 4), T), [0, 1]),
        K(TA((2, 3, 4), S), [2], True),
        K(TA((2, 3, 4)), [-1, 0]),
        K(TA((0, 3)), [0]),
    ]
    nuc = [K(TA((3, 4), T)), K(TA((4, 2)), True), K(TA((1, 1)))]
    nuc_dim = [K(TA((2, 3, 4), T), [1, 2]), K(TA((3, 2, 4)), [2, 0], True), K(TA((2, 2, 2), S), [-1, -2])]
    nexcept = [K(TA((3, 4), T)), K(TA((2, 3, 4), S), 2, 1), K(TA((4, 3)), 2, -1), K(TA((5,)), 1, 0), K(TA((2, 5)), 3)]
    sts = [
        K(TA((3, 4), T), [1, 4]),
        K(TA((2, 3, 4), S), [3, 1]),
        K(TA((2, 3)), [2, 3]),
        K(TA((4, 1, 2)), [1]),
        K(TA(()), []),
    ]
    return [
        entry("renorm", _renorm, renorm, FLOAT + COMPLEX, tolerances=TOL, error_inputs=bad_renorm),
        entry(
            "frobenius_norm.dim",
            _frobenius,
            frob,
            FLOAT + COMPLEX,
            tolerances=TOL,
            error_inputs=errors((ValueError, K(TA((2, 3, 4)), [0, 1, 2]))),
        ),
        entry(
            "nuclear_norm",
            lambda x, keepdim=False: _nuclear(x, (0, 1), keepdim),
            nuc,
            F32_64 + C64_128,
            tolerances=TOL,
            error_inputs=errors((ValueError, K(TA((2, 3, 4))))),
        ),
        entry(
            "nuclear_norm.dim",
            _nuclear,
            nuc_dim,
            F32_64 + C64_128,
            tolerances=TOL,
            error_inputs=errors((ValueError, K(TA((2, 3, 4)), [1, 1]))),
        ),
        entry("norm_except_dim", _norm_except_dim, nexcept, F32_64, tolerances=TOL),
        entry(
            "sum_to_size",
            _sum_to_size,
            sts,
            NO_BOOL,
            tolerances=TOL,
            error_inputs=errors((ValueError, K(TA((3, 4)), [2, 4])), (ValueError, K(TA((3,)), [1, 3, 1]))),
        ),
    ]


# -- complex, polar, frexp, isin, predicates -------------------------------------------------------


def _complex(real, imag):
    return real + 1j * imag


def _polar(abs, angle):  # noqa: A002
    return abs * np.cos(angle) + 1j * abs * np.sin(angle)


def _pair_cases():
    return [
        K(TA((3, 4), T), TA((3, 4), S)),
        K(TA((2, 3)), TA((3,))),
        K(TA(()), TA((4,), S)),
        K(TA((2, 1, 3)), TA((4, 1))),
        K(TA((0, 2)), TA((2,))),
        K(Gen(lambda rng, d: Arr(np.array([0.0, -0.0, np.inf, np.nan]), d)), TA((4,), specials=True)),
    ]


def _pair_errors():
    return errors(
        (TypeError, K(TA((2,)), TA((2,), dtype=ow.float16))),
        (TypeError, K(TA((2,), dtype=ow.int64), TA((2,), dtype=ow.int64))),
        (ValueError, K(TA((2,)), TA((3,)))),
    )


def _frexp(x):
    m, e = np.frexp(x)
    return m, e.astype(np.int32)


def _specials(dtype):
    tiny = float(ow.finfo(dtype).tiny)
    values = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, 0.5, -3.5, 1024.0, tiny, -tiny / 4, tiny / 2**3, 7e-3]
    return values


def _isin(elements, test_elements, assume_unique=False, invert=False):
    return np.isin(elements, test_elements, invert=invert)


def _pointwise_lines():
    frexp_cases = [
        K(TA((3, 4), T)),
        K(Gen(lambda rng, d: Arr(np.array(_specials(d)), d))),
        K(TA((2, 3, 4), S, domain="pos")),
        K(TA(())),
        K(TA((0, 2))),
    ]
    isin = [
        K(TA((3, 4), T, domain="small"), TA((5,), domain="small")),
        K(TA((2, 3), S, domain="small"), TA((40,), domain="small"), invert=True),
        K(TA((), domain="small"), TA((2, 2), domain="small")),
        K(TA((3,), domain="small"), TA((0,))),
        K(TA((4,), domain="small"), TA((3,), dtype=ow.float64, domain="small")),
        K(TA((6,), domain="small"), TA((25,), dtype=ow.int64, domain="small"), assume_unique=True),
    ]
    isin_scalar = [
        K(TA((3, 4), T, domain="small"), 2),
        K(TA((5,), S, domain="small"), 1, invert=True),
        K(TA(()), 0.5),
        K(TA((0,)), 1),
    ]
    scalar_isin = [
        K(2, TA((3, 4), T, domain="small")),
        K(1, TA((30,), domain="small"), invert=True),
        K(0.5, TA((3,))),
        K(3, TA((0,))),
    ]
    bad_isin = errors((TypeError, K(TA((3,), dtype=ow.bool), TA((3,), dtype=ow.bool))))
    return [
        entry("complex", _complex, _pair_cases(), F32_64, error_inputs=_pair_errors()),
        entry("polar", _polar, _pair_cases()[:5], F32_64, tolerances=TOL, error_inputs=_pair_errors()),
        entry(
            "frexp.Tensor",
            _frexp,
            frexp_cases,
            FLOAT,
            error_inputs=errors((TypeError, K(TA((3,), dtype=ow.int32)))),
        ),
        entry("isin.Tensor_Tensor", _isin, isin, REAL, error_inputs=bad_isin),
        entry("isin.Tensor_Scalar", _isin, isin_scalar, REAL),
        entry("isin.Scalar_Tensor", _isin, scalar_isin, REAL),
    ]


def _predicate_samples(shapes, other=False):
    def gen(rng, dtype, device):
        for i, shape in enumerate(shapes):
            x = arr(rng, shape, dtype, (T, S, "contiguous")[i % 3], "nonzero" if i % 2 else "any")
            args = (x, arr(rng, shapes[(i + 1) % len(shapes)], dtype)) if other else (x,)
            yield SampleInput(args, {}, f"{list(shape)}", oracle_kwargs={"dtype": dtype})

    return gen


def _predicate(name, fn, shapes=((3, 4), (2, 3), (), (0,), (4,)), other=False, dtypes=ALL, **kw):
    return OpInfo(
        name=name,
        sample_inputs=_predicate_samples(shapes, other),
        oracle=fn,
        dtypes=tuple(dtypes),
        upcast=False,
        data_dependent=True,
        **kw,
    )


def _predicate_lines():
    return [
        _predicate(
            "is_nonzero",
            lambda x, dtype: bool(x.reshape(-1)[0] != 0),
            shapes=((1,), (1, 1), (), (1, 1, 1)),
            error_inputs=errors((ValueError, K(TA((2,)))), (ValueError, K(TA((0,))))),
        ),
        _predicate("is_same_size", lambda x, y, dtype: x.shape == y.shape, other=True),
        _predicate("is_floating_point", lambda x, dtype: dtype.is_floating_point),
        _predicate("is_complex", lambda x, dtype: dtype.is_complex),
        _predicate("is_signed", lambda x, dtype: dtype not in (ow.bool, ow.uint8)),
        _predicate("is_conj", lambda x, dtype: False),
        _predicate("is_neg", lambda x, dtype: False),
    ]


# -- index_reduce, unique_dim_consecutive, combinations, where, nonzero_numpy -----------------------


def _other_dtype(shape):
    """A tensor spec of a dtype other than the one under test (a mismatched ``source``)."""
    return lambda rng, d: arr(rng, shape, ow.float64 if d is not ow.float64 else ow.float32)


def _index_reduce(x, dim, index, source, reduce, include_self=True):
    out = x.copy()
    flat = out.reshape(1) if x.ndim == 0 else out
    src = source.reshape(1) if x.ndim == 0 else source
    d = dim % flat.ndim
    groups: dict = {}
    for i, target in enumerate(np.asarray(index).reshape(-1)):
        groups.setdefault(int(target), []).append(np.take(src, i, axis=d))
    wide = np.float64 if x.dtype.kind == "f" else np.int64
    for target, slices in groups.items():
        here = np.take(flat, target, axis=d).astype(wide)
        stack = np.stack([s.astype(wide) for s in slices] + ([here] if include_self else []))
        with np.errstate(all="ignore"):
            if reduce == "prod":
                v = stack.prod(0)
            elif reduce == "mean":
                v = stack.sum(0) // len(stack) if x.dtype.kind in "iu" else stack.sum(0) / len(stack)
            elif reduce == "amax":
                v = np.where(np.isnan(stack).any(0), np.nan, stack.max(0)) if wide is np.float64 else stack.max(0)
            else:
                v = np.where(np.isnan(stack).any(0), np.nan, stack.min(0)) if wide is np.float64 else stack.min(0)
        index_tuple = [slice(None)] * flat.ndim
        index_tuple[d] = target
        with np.errstate(all="ignore"):
            flat[tuple(index_tuple)] = v.astype(x.dtype)
    return flat.reshape(x.shape)


def _unique_dim_consecutive(x, dim, return_inverse=False, return_counts=False):
    d = dim % x.ndim
    moved = np.moveaxis(x, d, 0)
    keep, inverse, counts = [], [], []
    for i in range(moved.shape[0]):
        if keep and np.array_equal(moved[i], moved[keep[-1]], equal_nan=False):
            counts[-1] += 1
        else:
            keep.append(i)
            counts.append(1)
        inverse.append(len(keep) - 1)
    values = np.moveaxis(moved[keep], 0, d) if keep else np.moveaxis(moved[:0], 0, d)
    return values, np.array(inverse, np.int64), np.array(counts, np.int64)


def _combinations(x, r=2, with_replacement=False):
    if r == 0:
        return np.zeros((0,), x.dtype)
    pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    rows = list(pick(range(x.shape[0]), r))
    idx = np.array(rows, np.int64).reshape(len(rows), r)
    return x[idx]


def _nonzero_tuple(x):
    return list(np.nonzero(np.atleast_1d(x)))


def _indexing_lines():
    reduce_cases = [
        K(TA((4, 3), T), 0, Idx((5,), 4), TA((5, 3)), "prod"),
        K(TA((2, 3, 4), S), 2, Idx((6,), 4), TA((2, 3, 6)), "mean"),
        K(TA((5,)), 0, Idx((7,), 5, dtype=ow.int32), TA((7,)), "amax", include_self=False),
        K(TA((3, 4)), 1, Idx((3,), 4), TA((3, 3)), "amin"),
        K(TA((3, 4)), 1, Idx((5,), 4), TA((3, 5)), "mean", include_self=False),
        K(TA(()), 0, Val([0, 0], ow.int64), TA((2,)), "prod"),
        K(TA((3, 2)), 0, Idx((0,), 3), TA((0, 2)), "amax"),
    ]
    # 0-dim self with a 1-element source of the same rank
    reduce_cases[5] = K(TA(()), 0, Val([0], ow.int64), TA(()), "prod")
    bad_reduce = errors(
        (ValueError, K(TA((3, 2)), 0, Idx((2,), 3), TA((2, 2)), "sum")),
        (ValueError, K(TA((3, 2)), 0, Idx((2,), 3), TA((3, 2)), "prod")),
        (ValueError, K(TA((3, 2)), 0, Idx((1, 2), 3), TA((2, 2)), "prod")),
        (IndexError, K(TA((3, 2)), 0, Val([0, 3], ow.int64), TA((2, 2)), "prod")),
        (TypeError, K(TA((3, 2)), 0, Idx((2,), 3), Gen(_other_dtype((2, 2))), "prod")),
        (TypeError, K(TA((3, 2)), 0, TA((2,), dtype=ow.float32), TA((2, 2)), "prod")),
    )
    runs = [
        K(Val([[1, 1], [1, 1], [2, 2], [1, 1]]), 0),
        K(Val([[1, 1, 2, 2, 2], [0, 0, 1, 1, 0]], layout=T), 1, True, True),
        K(TA((4, 3), S, domain="small"), -1),
        K(Val([[0, 0, 0]]), 0, True),
        K(TA((0, 2)), 0, True, True),
    ]
    combos = [
        K(TA((4,), S)),
        K(TA((5,)), 3),
        K(TA((3,)), 2, True),
        K(TA((2,)), 3),
        K(TA((3,)), 0),
        K(TA((0,)), 2),
    ]
    nz = [K(TA((3, 4), T, domain="small")), K(TA((2, 3, 4), S, domain="small")), K(TA(())), K(TA((0, 3)))]
    return [
        entry(
            "index_reduce",
            _index_reduce,
            reduce_cases,
            REAL,
            tolerances=TOL,
            error_inputs=bad_reduce,
        ),
        entry(
            "unique_dim_consecutive",
            _unique_dim_consecutive,
            runs,
            BOOL + REAL,
            error_inputs=errors((ValueError, K(TA(()), 0)), (ValueError, K(TA((2, 3)), 2))),
        ),
        entry(
            "combinations",
            _combinations,
            combos,
            ALL,
            error_inputs=errors((ValueError, K(TA((2, 3)))), (ValueError, K(TA((3,)), -1))),
        ),
        entry("where", _nonzero_tuple, nz, ALL),
        entry("nonzero_numpy", _nonzero_tuple, nz, ALL),
    ]


def _all_lines():
    lines = [
        *_quantile_lines(),
        *_cov_lines(),
        *_hist_lines(),
        *_diff_lines(),
        *_gradient_lines(),
        *_norm_lines(),
        *_pointwise_lines(),
        *_predicate_lines(),
        *_indexing_lines(),
    ]
    return lines


register(*_all_lines())
