"""Reduction prims and canonical ops: sums, products, extrema, logical reductions, moments, norms, softmax.

Samples (:func:`red_samples`) reduce over one dim, two dims (a transposed,
non-contiguous input), all dims, a 0-dim input, an empty input (reducing its
non-empty dim) and a broadcast (stride-0) input, with ``keepdim`` alternating;
later samples are random. ``dim`` arguments follow the schema: ``int``,
``int[]`` or optional. Canonical ops read ``dim=[]`` as "every dim"; prims read
``dims=[]`` as "no dim" and ``None`` as every dim.
"""

from __future__ import annotations

import numpy as np
import opweave as ow
import scipy.special as sp

from . import register
from ._core import ALL, BOOL, FLOAT, FLOATING, INTEGRAL, REAL, OpInfo, SampleInput, arr
from .elementwise import OMIT, Cycle

C, T, S, B = "contiguous", "transposed", "strided", "broadcast"
# (shape, layout, which dims, keepdim, specials)
PLANS = [
    ((3, 4), C, "one", False, True),
    ((2, 3, 4), T, "two", True, False),
    ((5,), S, "all", False, False),
    ((), C, "one", True, False),
    ((0, 3), C, "last", False, False),
    ((4, 3), B, "first", True, False),
]
TOL = {
    "float16": (2e-3, 1e-2),
    "bfloat16": (1.6e-2, 1e-1),
    "float32": (1.3e-5, 1e-4),
    "float64": (1e-7, 1e-9),
    "complex64": (1.3e-5, 1e-4),
    "complex128": (1e-7, 1e-9),
}
# prims accumulate in the input dtype: 16-bit float sums drift with the number of terms
PRIM_TOL = {**TOL, "float16": (1e-2, 6e-2), "bfloat16": (6e-2, 0.5)}


def _dims(rng, ndim, which):
    if ndim == 0:
        return [0]
    if which == "one":
        return [int(rng.integers(0, ndim))]
    if which == "last":
        return [ndim - 1]
    if which == "first":
        return [0]
    if which == "two" and ndim >= 2:
        return sorted(int(d) for d in rng.choice(ndim, 2, replace=False))
    return None  # all


def _dim_value(arg, dims, ndim):
    """The ``dim`` argument for the schema type of ``arg`` (``OMIT``: leave it out)."""
    t = arg.type
    if t.is_list:
        if dims is None:
            return None if t.optional else (OMIT if arg.has_default else list(range(ndim)) or [0])
        return list(dims)
    if dims is None:
        return None if t.optional else (OMIT if arg.has_default else 0)
    return dims[-1] - ndim if ndim and len(dims) == 1 else dims[0]


def red_samples(name, *, domain="any", extra=None, specials=True, dtype_of=None, nonempty=False):
    """A sample generator for the reduction ``name`` (``extra``: other arguments, constants or :class:`Cycle`)."""
    op = ow.ops.lookup(name)
    extra = extra or {}
    args_spec = op.schema.arguments
    dim_arg = next((a for a in args_spec if a.name in ("dim", "dims")), None)

    def gen(rng, dtype, device):
        index = 0
        while True:
            if index < len(PLANS):
                shape, layout, which, keepdim, sp_ = PLANS[index]
                if nonempty and 0 in shape:  # no identity: an empty input cannot be reduced over all dims
                    shape = (2, 3)
            else:
                ndim = int(rng.integers(0, 4))
                shape = tuple(int(s) for s in rng.integers(1, 5, ndim))
                layout, which = str(rng.choice([C, T, S, B])), str(rng.choice(["one", "two", "all", "last"]))
                keepdim, sp_ = bool(rng.random() < 0.5), bool(rng.random() < 0.3)
            dt = (dtype_of or {}).get("self", dtype)
            x = arr(rng, shape, dt, layout, domain, specials and sp_ and dt.is_floating_point)
            dims = _dims(rng, len(shape), which)
            args, kwargs = [x], {}
            for a in args_spec[1:]:
                if a is dim_arg:
                    value = _dim_value(a, dims, len(shape))
                elif a.name == "keepdim":
                    value = keepdim
                elif a.name in extra:
                    v = extra[a.name]
                    value = (
                        v.pick(rng, dtype, index)
                        if isinstance(v, Cycle)
                        else (v(rng, dtype, index) if callable(v) else v)
                    )
                elif a.has_default:
                    value = OMIT
                else:
                    raise ValueError(f"opdb: {name}: argument '{a.name}' needs a value")
                if value is OMIT:
                    continue
                if a.kwarg_only or (a.has_default and len(args) < len(args_spec) and _gap(args_spec, args, a)):
                    kwargs[a.name] = value
                else:
                    args.append(value)
            yield SampleInput(tuple(args), kwargs, f"self: {list(shape)} {x.layout}, dims {dims}")
            index += 1

    return gen


def _gap(args_spec, args, a) -> bool:
    """Whether ``a`` must go by keyword (an earlier argument was left out)."""
    return args_spec.index(a) != len(args)


# -- oracles ---------------------------------------------------------------------------------------


def _axes(x, dim, empty_all=True):
    if x.ndim == 0 or dim is None:
        return None
    dims = [dim] if isinstance(dim, int) else list(dim)
    if not dims:
        return None if empty_all else ()
    return tuple(d % x.ndim for d in dims)


def _keep(result, x, axes, keepdim):
    if not keepdim or x.ndim == 0:
        return result
    axes = tuple(range(x.ndim)) if axes is None else axes
    return np.expand_dims(result, axes) if axes else result


def reduction(fn, empty_all=True, dim_name="dim"):
    """An oracle applying ``fn(x, axis)`` over the sample's ``dim``, honouring ``keepdim``."""

    def oracle(x, *args, keepdim=False, **kwargs):
        dim = args[0] if args else kwargs.pop(dim_name, None)
        if args[1:]:
            keepdim = args[1]
        kwargs.pop("dtype", None)
        kwargs.pop("output_dtype", None)
        axes = _axes(x, dim, empty_all)
        return _keep(np.asarray(fn(x, axes, **kwargs)), x, axes, keepdim)

    return oracle


def _sum(x, axis):
    if x.dtype.kind in "biu":
        return np.sum(x, axis=axis, dtype=np.int64)
    return np.sum(x, axis=axis)


def _prod(x, axis):
    if x.dtype.kind in "biu":
        return np.prod(x, axis=axis, dtype=np.int64)
    return np.prod(x, axis=axis)


def _prim_sum(x, axis):
    return np.sum(x, axis=axis, dtype=x.dtype if x.dtype.kind in "biu" else None)


def _prim_prod(x, axis):
    return np.prod(x, axis=axis, dtype=x.dtype if x.dtype.kind in "biu" else None)


def _extremum(fn):
    return lambda x, axis: fn(x, axis=axis)


def _arg(fn):
    def oracle(x, dim=None, keepdim=False):
        if dim is None or x.ndim == 0:
            out = fn(x.reshape(-1)) if x.size else np.int64(0)
            return np.full((1,) * x.ndim, out) if keepdim else np.asarray(out)
        out = fn(x, axis=dim % x.ndim)
        return np.expand_dims(out, dim % x.ndim) if keepdim else out

    return oracle


def _max_dim(values, args):
    def oracle(x, dim, keepdim=False):
        d = dim % x.ndim if x.ndim else None
        v = values(x, axis=d)
        i = args(x, axis=d) if x.ndim else np.int64(0)
        if keepdim and x.ndim:
            v, i = np.expand_dims(v, d), np.expand_dims(i, d)
        return v, i

    return oracle


def _var(x, axis, correction=1):
    n = x.size if axis is None else int(np.prod([x.shape[a] for a in axis]))
    mean = np.mean(x, axis=axis, keepdims=True) if n else np.zeros((1,) * x.ndim)
    ss = np.sum(np.abs(x - mean) ** 2, axis=axis)
    with np.errstate(all="ignore"):
        return ss / max(n - correction, 0)


def _var_oracle(std=False, with_mean=False):
    def oracle(x, *args, keepdim=False, unbiased=True, correction=None, dim=None):
        if args and isinstance(args[0], bool):  # var(self, unbiased)
            unbiased = args[0]
        elif args:
            dim = args[0]
            if len(args) > 1:
                unbiased = args[1]
            if len(args) > 2:
                keepdim = args[2]
        corr = (1 if unbiased else 0) if correction is None else correction
        axes = _axes(x, dim)
        v = _var(x, axes, corr)
        out = np.sqrt(v) if std else v
        out = _keep(out, x, axes, keepdim)
        if with_mean:
            with np.errstate(all="ignore"):
                mean = np.mean(x, axis=axes)
            return out, _keep(mean, x, axes, keepdim)
        return out

    return oracle


def _norm(x, p=2, *args, keepdim=False, dtype=None):
    dim = args[0] if args else None
    if len(args) > 1:
        keepdim = args[1]
    axes = _axes(x, dim)
    a = np.abs(x)
    if p is None:
        p = 2
    if p == float("inf"):
        out = np.max(a, axis=axes) if a.size else np.zeros(())
    elif p == float("-inf"):
        out = np.min(a, axis=axes)
    elif p == 0:
        out = np.sum(a != 0, axis=axes).astype(np.float64)
    else:
        out = np.sum(a**p, axis=axes) ** (1.0 / p)
    return _keep(out, x, axes, keepdim)


def _softmax(log=False):
    def oracle(x, dim, *rest, dtype=None):
        d = dim % x.ndim if x.ndim else None
        x = x.astype(np.float64) if x.dtype.kind in "biu" else x
        m = np.max(x, axis=d, keepdims=True) if x.size else 0
        shifted = x - m
        lse = np.log(np.sum(np.exp(shifted), axis=d, keepdims=True))
        return shifted - lse if log else np.exp(shifted - lse)

    return oracle


def _logsumexp(x, axis):
    if x.dtype.kind in "biu":
        x = x.astype(np.float64)
    return sp.logsumexp(x, axis=axis) if x.size else np.full(np.sum(x, axis=axis).shape, -np.inf)


def _float_dtype(rng, dtype, index):
    return ow.float64 if index == 2 and dtype.is_floating_point else OMIT


# -- table -------------------------------------------------------------------------------------


def red(name, oracle, dtypes, *, tol=TOL, domain="any", extra=None, specials=True, upcast=True, nonempty=False):
    """One reduction OpInfo."""
    return OpInfo(
        name=name,
        sample_inputs=red_samples(name, domain=domain, extra=extra, specials=specials, nonempty=nonempty),
        oracle=oracle,
        dtypes=tuple(dtypes),
        tolerances=dict(tol),
        upcast=upcast,
    )


_ORDERED = BOOL + REAL


def _lines():
    any_ = reduction(lambda x, a: np.any(x != 0, axis=a))
    all_ = reduction(lambda x, a: np.all(x != 0, axis=a))
    lines = [
        red("sum", reduction(_sum), ALL, extra={"dtype": _float_dtype}),
        red("sum.dim_IntList", reduction(_sum), ALL, extra={"dtype": _float_dtype}),
        red("nansum", reduction(lambda x, a: np.nansum(x, axis=a) if x.dtype.kind in "fc" else _sum(x, a)), REAL),
        red("mean", reduction(np.mean), FLOATING),
        red("mean.dim", reduction(lambda x, a: np.mean(x, axis=a)), FLOATING),
        red("nanmean", reduction(lambda x, a: np.nanmean(x, axis=a)), FLOAT),
        red("prod", reduction(_prod), ALL, domain="small"),
        red("prod.dim_int", reduction(_prod), ALL, domain="small"),
        red("amax", reduction(_extremum(np.max)), _ORDERED),
        red("amin", reduction(_extremum(np.min)), _ORDERED),
        red("max", reduction(_extremum(np.max)), _ORDERED, nonempty=True),
        red("min", reduction(_extremum(np.min)), _ORDERED, nonempty=True),
        red("max.dim", _max_dim(np.max, np.argmax), _ORDERED),
        red("min.dim", _max_dim(np.min, np.argmin), _ORDERED),
        red(
            "aminmax",
            lambda x, dim=None, keepdim=False: (
                reduction(_extremum(np.min))(x, dim, keepdim=keepdim),
                reduction(_extremum(np.max))(x, dim, keepdim=keepdim),
            ),
            _ORDERED,
        ),
        red("argmax", _arg(np.argmax), REAL, nonempty=True),
        red("argmin", _arg(np.argmin), REAL, nonempty=True),
        red("all", all_, ALL),
        red("all.dim", all_, ALL),
        red("all.dims", all_, ALL),
        red("any", any_, ALL),
        red("any.dim", any_, ALL),
        red("any.dims", any_, ALL),
        red("count_nonzero", reduction(lambda x, a: np.sum(x != 0, axis=a)), ALL),
        red("count_nonzero.dim_IntList", reduction(lambda x, a: np.sum(x != 0, axis=a)), ALL),
        red("logsumexp", reduction(_logsumexp), REAL),
        red("norm.Scalar", _norm, FLOATING, extra={"p": Cycle(OMIT, 1, float("inf"), 3)}),
        red("norm.ScalarOpt_dim", _norm, FLOATING, extra={"p": Cycle(2, 1, float("inf"), 0)}),
        red("norm.ScalarOpt_dim_dtype", _norm, FLOAT, extra={"p": Cycle(2, 1), "dtype": ow.float64}),
        red("norm.ScalarOpt_dtype", _norm, FLOAT, extra={"p": Cycle(2, 3), "dtype": ow.float64}),
        red("softmax.int", _softmax(), FLOAT),
        red("log_softmax.int", _softmax(log=True), FLOAT),
        red("_softmax", _softmax(), FLOAT, extra={"half_to_float": False}),
        red("_log_softmax", _softmax(log=True), FLOAT, extra={"half_to_float": False}),
    ]
    for base, std in (("var", False), ("std", True)):
        for suffix, mean in (("", False), ("_mean", True)):
            name = base + suffix
            oracle = _var_oracle(std, mean)
            lines += [
                red(name, oracle, FLOATING, extra={"unbiased": Cycle(OMIT, False)}),
                red(f"{name}.dim", oracle, FLOATING, extra={"unbiased": Cycle(True, False)}),
                red(f"{name}.correction", oracle, FLOATING, extra={"correction": Cycle(OMIT, 0, 2)}),
            ]
    return lines


def _prim_lines():
    prim_any = reduction(lambda x, a: np.any(x != 0, axis=a), empty_all=False, dim_name="dims")
    prim_all = reduction(lambda x, a: np.all(x != 0, axis=a), empty_all=False, dim_name="dims")

    def prim(name, fn, dtypes, **kw):
        return red(f"prims::{name}", reduction(fn, empty_all=False, dim_name="dims"), dtypes, **kw)

    def prim_var(x, dims, correction, output_dtype=None):
        axes = _axes(x, dims, empty_all=False)
        return _var(x, axes, correction)

    def prim_arg(fn):
        base = _arg(fn)
        return lambda x, dim: base(x, dim)

    return [
        prim("sum", _prim_sum, ALL, tol=PRIM_TOL),
        prim("prod", _prim_prod, ALL, tol=PRIM_TOL, domain="small"),
        prim("amax", _extremum(np.max), _ORDERED),
        prim("amin", _extremum(np.min), _ORDERED),
        red("prims::any", prim_any, ALL),
        red("prims::all", prim_all, ALL),
        prim("xor_sum", lambda x, a: np.bitwise_xor.reduce(x, axis=a) if x.ndim else x, INTEGRAL),
        red("prims::var", prim_var, FLOATING, tol=PRIM_TOL, extra={"correction": Cycle(1.0, 0.0)}),
        red("prims::argmax", prim_arg(np.argmax), REAL, nonempty=True),
        red("prims::argmin", prim_arg(np.argmin), REAL, nonempty=True),
    ]


register(*_lines(), *_prim_lines())
