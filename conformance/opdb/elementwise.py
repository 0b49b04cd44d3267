"""Elementwise prims and canonical ops: one table line per op, its NumPy/SciPy oracle and its dtypes.

Samples are built from the op's schema (:func:`ew_samples`): every ``Tensor``
argument gets values of the dtype under test (in a per-argument domain), every
``Scalar`` argument a Python number of the same category, other arguments come
from the line's ``extra``. The first samples are fixed plans (contiguous with
special values, transposed and strided layouts, broadcasting shapes, a CPU
0-dim operand, 0-dim, empty); later ones are random shapes and layouts.
Prims get same-shape operands only (they do not broadcast).

Oracles follow PyTorch's documented semantics, written with NumPy/SciPy; they
receive float inputs widened to float64 (``upcast``), or in PyTorch's
computation dtype (``"opmath"``: float32 for 16-bit floats) where the result
has discontinuities (floor division, remainder). The result is rounded to the
dtype the meta device gives before comparison.
"""

from __future__ import annotations

import math

import numpy as np
import opweave as ow
import scipy.special as sp

from .. import accurate as acc
from . import register
from ._core import (
    ALL,
    COMPLEX,
    FLOAT,
    FLOATING,
    INT,
    INTEGRAL,
    NOT_COMPLEX,
    NUMERIC,
    REAL,
    Arr,
    ErrorInput,
    OpInfo,
    SampleInput,
    arr,
    make_values,
    python_scalar,
)

OMIT = object()  # an ``extra`` value meaning "leave the argument out"


class Cycle:
    """An ``extra`` value that takes the next of ``values`` on each sample (``OMIT`` leaves the argument out)."""

    def __init__(self, *values):
        self.values = values

    def pick(self, rng, dtype, index):
        return self.values[index % len(self.values)]


class Tensorize:
    """An ``extra`` value: a tensor argument of ``shape`` (None: the sample's shape) in ``domain``."""

    def __init__(self, domain="any", shape=None, dtype=None):
        self.domain, self.shape, self.dtype = domain, shape, dtype


# -- sample plans ------------------------------------------------------------------------------
# Each plan: one (shape, layout) per tensor argument, in order; "specials" marks the plan that gets nan/inf.

C, T, S, B, CPU = "contiguous", "transposed", "strided", "broadcast", "cpu"
PLANS = {
    1: [[((3, 4), C)], [((2, 3, 4), T)], [((5,), S)], [((), C)], [((0, 3), C)], [((4, 3), B)]],
    2: [
        [((3, 4), C), ((3, 4), C)],
        [((2, 3, 4), T), ((2, 3, 4), S)],
        [((3, 1), C), ((1, 4), C)],
        [((4, 3), B), ((), CPU)],
        [((), C), ((), C)],
        [((0, 3), C), ((3,), C)],
    ],
    3: [
        [((3, 4), C), ((3, 4), C), ((3, 4), C)],
        [((2, 3, 4), T), ((2, 3, 4), S), ((3, 4), C)],
        [((3, 1), C), ((1, 4), C), ((4,), C)],
        [((4, 3), B), ((4, 3), C), ((), CPU)],
        [((), C), ((), C), ((), C)],
        [((0, 3), C), ((3,), C), ((0, 3), C)],
    ],
}
# the quick profile takes five: a broadcast (stride-0) operand is among them, the empty tensor is not
PRIM_PLANS = [((3, 4), C), ((2, 3, 4), T), ((5,), S), ((4, 3), B), ((), C), ((0, 3), C)]


def _random_plan(rng, n, prim):
    ndim = int(rng.integers(0, 4))
    base = tuple(int(s) for s in rng.integers(1, 5, ndim))
    if ndim and rng.random() < 0.15:
        base = base[:-1] + (0,)
    plan = []
    for _ in range(n):
        shape = base
        if not prim and ndim:
            shape = tuple(1 if rng.random() < 0.25 else s for s in base)[int(rng.integers(0, ndim + 1)) :]
        plan.append((shape, str(rng.choice([C, T, S, B]))))
    return plan


def ew_samples(
    name, *, dom=None, specials=True, extra=None, dtype_of=None, shape_of=None, prim=False, pass_dtype=False
):
    """A schema-driven sample generator for the elementwise op ``name``.

    ``dom`` maps argument names to value domains; ``extra`` gives values for other
    arguments (constants, :class:`Cycle`, :class:`Tensorize`, or ``fn(rng, dtype, index)``);
    ``dtype_of``/``shape_of`` fix an argument's dtype/shape; ``pass_dtype`` hands the
    dtype under test to the oracle as ``dtype=``.
    """
    op = ow.ops.lookup(name)
    dom, extra = dom or {}, extra or {}
    dtype_of, shape_of = dtype_of or {}, shape_of or {}
    params = [a for a in op.schema.arguments if not a.has_default or a.name in extra]
    tensor_names = [a.name for a in params if a.type.name == "Tensor" and a.name not in extra]
    tensor_names += [a.name for a in params if isinstance(extra.get(a.name), Tensorize)]
    for a in params:
        if a.type.name not in ("Tensor", "Scalar") and a.name not in extra:
            raise ValueError(f"opdb: {name}: argument '{a.name}' needs a value in 'extra'")

    def gen(rng, dtype, device):
        index = 0
        while True:
            n = len(tensor_names)
            plans = [[p] * n for p in PRIM_PLANS] if prim else PLANS.get(n, [])
            plan = plans[index] if index < len(plans) else _random_plan(rng, n, prim)
            with_specials = specials and (index == 0 or (index >= len(plans) and rng.random() < 0.5))
            layouts = dict(zip(tensor_names, plan))
            args, kwargs = [], {}
            for a in params:
                value = _value(a, rng, dtype, index, layouts, dom, extra, dtype_of, shape_of, with_specials)
                if value is OMIT:
                    continue
                (kwargs.__setitem__(a.name, value) if a.kwarg_only or a.has_default else args.append(value))
            desc = ", ".join(f"{k}: {list(s)} {lay}" for k, (s, lay) in layouts.items())
            yield SampleInput(tuple(args), kwargs, desc, {"dtype": dtype} if pass_dtype else {})
            index += 1

    return gen


def _value(a, rng, dtype, index, layouts, dom, extra, dtype_of, shape_of, specials):
    if a.name in layouts:
        shape, layout = layouts[a.name]
        spec = extra.get(a.name)
        if isinstance(spec, Tensorize) and spec.shape is not None:
            shape, layout = spec.shape, C
        shape = shape_of.get(a.name, shape)
        dt = dtype_of.get(a.name, dtype)
        domain = spec.domain if isinstance(spec, Tensorize) else dom.get(a.name, "any")
        floating = dt.is_floating_point and specials and domain == "any"
        return arr(rng, shape, dt, layout if shape == layouts[a.name][0] else C, domain, floating)
    if a.name in extra:
        v = extra[a.name]
        if isinstance(v, Cycle):
            return v.pick(rng, dtype, index)
        return v(rng, dtype, index) if callable(v) else v
    if a.type.name == "Scalar":
        return python_scalar(rng, dtype_of.get(a.name, dtype), dom.get(a.name, "any"))
    raise AssertionError(a)


# -- oracle helpers ------------------------------------------------------------------------------


def _fl(x):
    """Integer and bool values as float64 (functions that promote INT_TO_FLOAT)."""
    if isinstance(x, np.ndarray) and x.dtype.kind in "biu":
        return x.astype(np.float64)
    if isinstance(x, (bool, int)):
        return float(x)
    return x


def F(fn):
    """An oracle applying ``fn`` to float values (integers and bools converted first)."""
    return lambda *xs, **kw: fn(*(_fl(x) for x in xs), **kw)


def _np(x):
    return np.asarray(x)


def _sign(x):
    x = _np(x)
    return np.sign(x.astype(np.int8)) if x.dtype == bool else np.sign(x)


def _torch_sign(x):
    """PyTorch's ``sign``: 0 for NaN (``prims.sign`` keeps NumPy's NaN)."""
    out = _sign(x)
    if out.dtype.kind in "biu":
        return out
    return np.where(np.isnan(out.astype(np.float64)), np.zeros((), out.dtype), out)


def _sgn(x):
    x = _np(x)
    if x.dtype.kind == "c":
        return np.where(x == 0, 0, x / np.where(x == 0, 1, np.abs(x)))
    return _sign(x)


def _torch_sgn(x):
    """PyTorch's ``sgn``: ``z / |z|`` for complex, ``sign`` (NaN gives 0) for real."""
    x = _np(x)
    return _sgn(x) if x.dtype.kind == "c" else _torch_sign(x)


def _angle(x):
    x = _np(x)
    if x.dtype.kind == "c":
        return np.angle(x)
    x = x.astype(np.float64)
    return np.where(np.isnan(x), np.nan, np.where(x < 0, np.pi, 0.0))


def _nan_to_num(x, nan=None, posinf=None, neginf=None, dtype=None):
    x = _np(x)
    if x.dtype.kind not in "fc":
        return x
    info = ow.finfo(dtype.to_real() if dtype.is_complex else dtype)
    hi = info.max if posinf is None else posinf
    lo = info.min if neginf is None else neginf
    return np.nan_to_num(x, nan=0.0 if nan is None else nan, posinf=hi, neginf=lo)


def _square(x):
    x = _np(x)
    x = x.astype(np.int64) if x.dtype == bool else x
    return x * x


def _xlogy(log):
    def oracle(x, y):
        x, y = np.asarray(_fl(x), dtype=float), np.asarray(_fl(y), dtype=float)
        return np.where(np.isnan(y), np.nan, np.where(x == 0, 0.0, x * log(y)))

    return oracle


def _pow(a, b):
    a, b = _np(a), _np(b)
    if a.dtype == bool and b.dtype == bool:
        return np.power(a.astype(np.int64), b.astype(np.int64))
    if a.dtype.kind in "biu" and b.dtype.kind in "biu":
        return np.power(a, b)
    return np.power(_fl(a), _fl(b))


def _torch_pow(a, b):
    """PyTorch's ``pow``: a signed integer to a negative power is 1 for base 1, ±1 for base -1, else 0."""
    a, b = _np(a), _np(b)
    if a.dtype.kind in "iu" and b.dtype.kind in "iu" and np.any(b < 0):
        negative = b < 0
        out = np.power(a, np.where(negative, 0, b).astype(b.dtype))
        minus_one = np.where(b % 2 != 0, -1, 1)
        small = np.where(a == 1, 1, np.where(a == -1, minus_one, 0))
        return np.where(negative, small, out).astype(out.dtype)
    return _pow(a, b)


def _pow_scalar(a, b):
    if isinstance(a, (int, float, complex)) and not isinstance(a, bool):
        b = _np(b)
        if b.dtype.kind in "biu" and isinstance(a, int):
            return np.power(np.asarray(a, dtype=np.int64), b.astype(np.int64))
        return np.power(complex(a) if isinstance(a, complex) else float(a), _fl(b))
    return _pow(a, np.asarray(b))


def _div_mode(a, b, rounding_mode=None):
    a, b = _np(a), _np(b)
    if rounding_mode is None:
        return np.true_divide(_fl(a), _fl(b))
    ints = a.dtype.kind in "biu" and b.dtype.kind in "biu"
    if rounding_mode == "floor":
        return np.floor_divide(a, b)
    if ints:
        q = np.fix(a.astype(np.float64) / b.astype(np.float64))
        return q.astype(np.result_type(a, b))
    return np.trunc(np.true_divide(a, b))


def _remainder(a, b):
    """PyTorch's remainder: NumPy's, but a zero result keeps the sign of ``a`` (``fmod``'s), not of ``b``."""
    out = np.remainder(a, b)
    if out.dtype.kind != "f":
        return out
    return np.where(out == 0, np.copysign(np.zeros_like(out), np.asarray(a, out.dtype)), out)


def _add(a, b, alpha=1):
    return a + alpha * b if alpha != 1 else a + b


def _sub(a, b, alpha=1):
    return a - alpha * b if alpha != 1 else a - b


def _logical(fn):
    return lambda a, b: fn(_np(a) != 0, _np(b) != 0)


def _heaviside(x, v):
    x, v = _np(x), _np(v)
    return np.where(x == 0, v, (x > 0).astype(v.dtype))


def _clamp(x, min=None, max=None):
    x = _np(x)
    out = x if min is None else np.maximum(x, min)
    return out if max is None else np.minimum(out, max)


def _complex(re, im):
    out = np.empty(np.broadcast_shapes(np.shape(re), np.shape(im)), np.complex128)
    out.real, out.imag = re, im
    return out


def _lerp(a, b, w):
    """PyTorch's two-branch lerp in long double (float64 where it is no wider): ``w * (b - a)`` does not underflow,
    so a result that is a tiny nonzero (``0 + 0.25 * -5e-324``) is not a signed zero that depends on whether the
    kernel fuses the multiply-add (PyTorch's vectorised CPU lerp does; the special-value probe checks zero signs
    only where the oracle's value is exactly zero)."""
    kind = np.result_type(np.asarray(a), np.asarray(b), np.float64)
    wide = np.longdouble if kind.kind == "f" else kind
    a, b = np.asarray(a).astype(wide), np.asarray(b).astype(wide)
    w = np.asarray(w).astype(wide)
    return np.where(np.abs(w) < 0.5, a + w * (b - a), b - (b - a) * (1 - w))


SELU = (1.6732632423543772848170429916717, 1.0507009873554804934193349852946)


def _elu(x, alpha=1.0, scale=1.0, input_scale=1.0):
    return np.where(x <= 0, np.expm1(x * input_scale) * alpha * scale, x * scale)


def _hardtanh(x, min_val=-1, max_val=1):
    return np.minimum(np.maximum(x, min_val), max_val)


def _gelu(x, approximate="none"):
    if approximate == "tanh":
        return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))
    return x * 0.5 * (1 + sp.erf(x / math.sqrt(2)))


def _softshrink(x, lambd=0.5):
    return np.where(np.isnan(x), x, np.where(x > lambd, x - lambd, np.where(x < -lambd, x + lambd, 0.0)))


def _softplus(x, beta=1, threshold=20):
    return np.where(x * beta > threshold, x, np.log1p(np.exp(x * beta)) / beta)


def _mvlgamma(x, p):
    p = int(p)
    x = _fl(x)
    # mpmath's log|gamma|: SciPy's gammaln overflows at float64 subnormals (gammaln(5e-324) is inf, not 744.44)
    total = sum(acc.lgamma(x - j / 2) for j in range(p)) + p * (p - 1) / 4 * math.log(math.pi)
    return np.where(np.isneginf(x), np.inf, total)  # log|gamma(-inf)| is inf (SciPy's gammaln gives -inf)


def _round_decimals(x, decimals=0):
    x = _np(x)
    if x.dtype.kind in "biu":
        return x
    return np.round(x, decimals)


def _logit(x, eps=None):
    if eps is not None:
        x = np.clip(x, eps, 1 - eps)
    return np.log(x / (1 - x))


# orthogonal polynomials (PyTorch: degree trunc(n), 0 for negative n, 1 for degree 0)


def _u(n, x):
    return np.where(n < 0, 0.0, sp.eval_chebyu(np.maximum(n, 0), x))


_POLY = {
    "chebyshev_polynomial_t": lambda n, x: sp.eval_chebyt(np.maximum(n, 0), x),
    "chebyshev_polynomial_u": _u,
    "chebyshev_polynomial_v": lambda n, x: _u(n, x) - _u(n - 1, x),
    "chebyshev_polynomial_w": lambda n, x: _u(n, x) + _u(n - 1, x),
    "hermite_polynomial_h": lambda n, x: sp.eval_hermite(np.maximum(n, 0), x),
    "hermite_polynomial_he": lambda n, x: sp.eval_hermitenorm(np.maximum(n, 0), x),
    "laguerre_polynomial_l": lambda n, x: sp.eval_laguerre(np.maximum(n, 0), x),
    "legendre_polynomial_p": lambda n, x: sp.eval_legendre(np.maximum(n, 0), x),
}
for _k in ("t", "u", "v", "w"):
    _POLY[f"shifted_chebyshev_polynomial_{_k}"] = (lambda f: lambda n, x: f(n, 2 * x - 1))(
        _POLY[f"chebyshev_polynomial_{_k}"]
    )


def _poly(name):
    def oracle(x, n):
        x, n = np.broadcast_arrays(np.asarray(_fl(x), dtype=np.float64), np.asarray(_fl(n), dtype=np.float64))
        degree = np.trunc(np.where(np.isfinite(n), n, -1)).astype(np.int64)
        return np.where(degree < 0, 0.0, np.where(degree == 0, 1.0, _POLY[name](degree, x)))

    return oracle


# -- error inputs ----------------------------------------------------------------------------------


def int_division_by_zero(**kwargs):
    """Integer division by zero raises RuntimeError (a data-dependent check every backend must make)."""

    def gen(rng, dtype):
        if dtype not in INT:
            return
        a = arr(rng, (3, 4), dtype)
        zero = make_values(rng, (3, 4), dtype, "nonzero")
        zero[1, 2] = 0
        yield ErrorInput(SampleInput((a, Arr(zero, dtype)), kwargs, "integer division by zero"), RuntimeError)

    return gen


def int_negative_power(rng, dtype):
    """An integer tensor raised to a negative integer power raises RuntimeError."""
    if dtype not in INT or dtype is ow.uint8:
        return
    exponent = make_values(rng, (3, 4), dtype, "exp")
    exponent[0, 1] = -2
    a = Arr(make_values(rng, (3, 4), dtype, "pos") + 1, dtype)
    yield ErrorInput(
        SampleInput((a, Arr(exponent, dtype)), desc="integer power with a negative exponent"), RuntimeError
    )


def broadcast_mismatch(rng, dtype):
    """Shapes that cannot broadcast raise ValueError."""
    yield ErrorInput(
        SampleInput((arr(rng, (3, 4), dtype), arr(rng, (2, 4), dtype)), desc="(3, 4) with (2, 4)"), ValueError
    )


# -- table lines -----------------------------------------------------------------------------------


def ew(name, oracle, dtypes, *, tol=None, upcast=True, errors=None, known_failure=None, family="", **sample_opts):
    """One elementwise OpInfo (``tol``: ``{dtype name: (rtol, atol)}``; ``sample_opts``: see :func:`ew_samples`)."""
    op = ow.ops.lookup(name)
    return OpInfo(
        name=name,
        sample_inputs=ew_samples(name, prim=op.kind == "prim", **sample_opts),
        oracle=oracle,
        dtypes=tuple(dtypes),
        tolerances=dict(tol or {}),
        error_inputs=errors,
        upcast=upcast,
        known_failure=known_failure,
        returns_view="view" in op.tags,
        family=family,
    )


LOOSE = {"float32": (1e-4, 1e-5), "float64": (1e-10, 1e-12), "float16": (4e-3, 1e-3), "bfloat16": (3.2e-2, 1e-2)}
# x - f(x) computed in a 16-bit dtype loses about one ulp of x (PyTorch computes in float32)
CANCEL = {"float16": (2e-3, 4e-3), "bfloat16": (1.6e-2, 3.2e-2)}
POLY_TOL = {"float16": (2e-2, 2e-2), "bfloat16": (1e-1, 1e-1), "float32": (2e-4, 2e-4), "float64": (1e-9, 1e-10)}
_SPECIAL_FNS = {
    "erf": (acc.erf, "any"),
    "erfc": (acc.erfc, "any"),
    "erfinv": (acc.erfinv, "unit"),
    "lgamma": (acc.lgamma, "any"),
    "digamma": (acc.digamma, "any"),
    "i0": (acc.i0, "small"),
    "special_erfcx": (acc.erfcx, "any"),
    "special_ndtr": (acc.ndtr, "any"),
    "special_ndtri": (acc.ndtri, "prob"),
    "special_log_ndtr": (acc.log_ndtr, "any"),
    "special_i0e": (acc.i0e, "any"),
    "special_i1": (acc.i1, "small"),
    "special_i1e": (acc.i1e, "any"),
    "special_bessel_j0": (acc.j0, "small"),
    "special_bessel_j1": (acc.j1, "small"),
    "special_bessel_y0": (acc.y0, "pos"),
    "special_bessel_y1": (acc.y1, "pos"),
    "special_modified_bessel_i0": (acc.i0, "small"),
    "special_modified_bessel_i1": (acc.i1, "small"),
    "special_modified_bessel_k0": (acc.k0, "pos"),
    "special_modified_bessel_k1": (acc.k1, "pos"),
    "special_scaled_modified_bessel_k0": (acc.k0e, "pos"),
    "special_scaled_modified_bessel_k1": (acc.k1e, "pos"),
    "special_spherical_bessel_j0": (acc.spherical_j0, "small"),
    "special_airy_ai": (acc.airy_ai, "small"),
    "special_entr": (acc.entr, "any"),
    "special_erf": (acc.erf, "any"),
    "special_erfc": (acc.erfc, "any"),
    "special_erfinv": (acc.erfinv, "unit"),
    "special_gammaln": (acc.lgamma, "any"),
    "special_digamma": (acc.digamma, "any"),
    "special_psi": (acc.digamma, "any"),
    "special_i0": (acc.i0, "small"),
}

# name -> (oracle, dtypes, domain)
_UNARY_FLOAT = {
    "acos": (acc.extended(np.arccos), ALL, "unit"),
    "acosh": (acc.extended(np.arccosh), ALL, "gt1"),
    "asin": (acc.extended(np.arcsin), ALL, "unit"),
    "asinh": (acc.extended(np.arcsinh), ALL, "any"),
    "atan": (acc.extended(np.arctan), ALL, "any"),
    "atanh": (acc.extended(np.arctanh), ALL, "unit"),
    "cos": (acc.extended(np.cos), ALL, "any"),
    "cosh": (acc.extended(np.cosh), ALL, "small"),
    "sin": (acc.extended(np.sin), ALL, "any"),
    "sinh": (acc.extended(np.sinh), ALL, "small"),
    "tan": (acc.extended(np.tan), ALL, "unit"),
    "tanh": (acc.extended(np.tanh), ALL, "any"),
    "exp": (acc.extended(np.exp), ALL, "small"),
    "exp2": (acc.extended(np.exp2), ALL, "small"),
    "expm1": (acc.extended(np.expm1), ALL, "small"),
    "log": (acc.extended(np.log), ALL, "pos"),
    "log1p": (acc.log1p, ALL, "pos"),
    "log2": (acc.extended(np.log2), ALL, "pos"),
    "log10": (acc.extended(np.log10), ALL, "pos"),
    "sqrt": (acc.extended(np.sqrt), ALL, "any"),
    "rsqrt": (lambda x: 1 / np.sqrt(x), ALL, "pos"),
    "reciprocal": (lambda x: 1 / x, ALL, "nonzero"),
    "sigmoid": (lambda x: 1 / (1 + np.exp(-x)), ALL, "any"),
    "special_expit": (lambda x: 1 / (1 + np.exp(-x)), ALL, "any"),
    "sinc": (acc.sinc, ALL, "any"),
    "special_sinc": (acc.sinc, ALL, "any"),
    "special_exp2": (acc.extended(np.exp2), ALL, "small"),
    "special_expm1": (acc.extended(np.expm1), ALL, "small"),
    "special_log1p": (acc.log1p, ALL, "pos"),
    "deg2rad": (np.deg2rad, NOT_COMPLEX, "any"),
    "rad2deg": (np.rad2deg, NOT_COMPLEX, "any"),
    "logit": (_logit, NOT_COMPLEX, "prob"),
    "special_logit": (_logit, NOT_COMPLEX, "prob"),
}
_ALIASES = {"arccos": "acos", "arccosh": "acosh", "arcsin": "asin", "arcsinh": "asinh", "arctan": "atan"}
_ALIASES["arctanh"] = "atanh"

# name -> (oracle, dtypes) for unary ops that keep (or fix) their dtype
_UNARY_OTHER = {
    "ceil": (np.ceil, NOT_COMPLEX),
    "floor": (np.floor, NOT_COMPLEX),
    "round": (np.round, NOT_COMPLEX),
    "trunc": (np.trunc, NOT_COMPLEX),
    "fix": (np.trunc, NOT_COMPLEX),
    "frac": (lambda x: x - np.trunc(x), FLOAT),
    "abs": (np.abs, ALL),
    "absolute": (np.abs, ALL),
    "neg": (np.negative, NUMERIC),
    "negative": (np.negative, NUMERIC),
    "sign": (_torch_sign, NOT_COMPLEX),
    "sgn": (_torch_sgn, ALL),
    "signbit": (np.signbit, NOT_COMPLEX),
    "square": (_square, ALL),
    "isfinite": (np.isfinite, ALL),
    "isinf": (np.isinf, ALL),
    "isnan": (np.isnan, ALL),
    "isposinf": (lambda x: np.isinf(x) & (x > 0), NOT_COMPLEX),
    "isneginf": (lambda x: np.isinf(x) & (x < 0), NOT_COMPLEX),
    "isreal": (lambda x: np.imag(x) == 0, ALL),
    "angle": (_angle, ALL),
    "conj_physical": (np.conj, ALL),
    "logical_not": (lambda x: x == 0, ALL),
    "bitwise_not": (np.invert, INTEGRAL),
    "positive": (lambda x: x, NUMERIC),
    "resolve_conj": (lambda x: x, ALL),
    "resolve_neg": (lambda x: x, ALL),
    "conj": (np.conj, ALL),
    "real": (np.real, ALL),
    "imag": (np.imag, COMPLEX),
}


def _unary_lines():
    lines = []
    for name, (fn, dtypes, domain) in _UNARY_FLOAT.items():
        lines.append(ew(name, F(fn), dtypes, dom={"self": domain}))
    for alias, target in _ALIASES.items():
        fn, dtypes, domain = _UNARY_FLOAT[target]
        lines.append(ew(alias, F(fn), dtypes, dom={"self": domain}))
    for name, (fn, domain) in _SPECIAL_FNS.items():
        arg = ow.ops.lookup(name).schema.arguments[0].name
        lines.append(ew(name, F(fn), NOT_COMPLEX, dom={arg: domain}, tol=LOOSE))
    for name, (fn, dtypes) in _UNARY_OTHER.items():
        lines.append(ew(name, fn, dtypes))
    lines += [
        ew("nan_to_num", _nan_to_num, ALL, pass_dtype=True),
        ew("round.decimals", _round_decimals, FLOAT, extra={"decimals": Cycle(1, 2, -1)}),
        ew("special_round", _round_decimals, FLOAT, extra={"decimals": Cycle(OMIT, 2)}),
        ew(
            "polygamma",
            F(lambda n, x: sp.polygamma(n, x)),
            NOT_COMPLEX,
            extra={"n": Cycle(1, 2)},
            dom={"self": "pos"},
            tol=LOOSE,
        ),
        ew(
            "special_polygamma",
            F(lambda n, x: sp.polygamma(n, x)),
            NOT_COMPLEX,
            extra={"n": 1},
            dom={"self": "pos"},
            tol=LOOSE,
        ),
        ew("mvlgamma", _mvlgamma, REAL, extra={"p": Cycle(1, 3)}, dom={"self": "gt1"}, tol=LOOSE),
        ew("special_multigammaln", _mvlgamma, REAL, extra={"p": 2}, dom={"self": "gt1"}, tol=LOOSE),
    ]
    return lines


# name -> (oracle, dtypes, domain of the second operand, upcast, error inputs)
_BINARY = {
    "add.Tensor": (_add, ALL, "any", True, broadcast_mismatch),
    "sub.Tensor": (_sub, NUMERIC, "any", True, None),
    "subtract.Tensor": (_sub, NUMERIC, "any", True, None),
    "rsub.Tensor": (lambda a, b, alpha=1: _sub(b, a, alpha), NUMERIC, "any", True, None),
    "mul.Tensor": (lambda a, b: a * b, ALL, "any", True, None),
    "multiply.Tensor": (lambda a, b: a * b, ALL, "any", True, None),
    "div.Tensor": (F(np.true_divide), ALL, "any", True, None),
    "divide.Tensor": (F(np.true_divide), ALL, "any", True, None),
    "true_divide.Tensor": (F(np.true_divide), ALL, "any", True, None),
    "div.Tensor_mode": (_div_mode, REAL, "nonzero", "opmath", int_division_by_zero(rounding_mode="floor")),
    "divide.Tensor_mode": (_div_mode, REAL, "nonzero", "opmath", None),
    "floor_divide": (np.floor_divide, REAL, "nonzero", "opmath", int_division_by_zero()),
    "remainder.Tensor": (_remainder, REAL, "nonzero", "opmath", int_division_by_zero()),
    "fmod.Tensor": (np.fmod, REAL, "nonzero", "opmath", int_division_by_zero()),
    "pow.Tensor_Tensor": (_torch_pow, ALL, "exp", True, None),
    "float_power.Tensor_Tensor": (F(np.power), ALL, "exp", True, None),
    "eq.Tensor": (np.equal, ALL, "any", True, None),
    "ne.Tensor": (np.not_equal, ALL, "any", True, None),
    "not_equal.Tensor": (np.not_equal, ALL, "any", True, None),
    "lt.Tensor": (np.less, NOT_COMPLEX, "any", True, None),
    "less.Tensor": (np.less, NOT_COMPLEX, "any", True, None),
    "le.Tensor": (np.less_equal, NOT_COMPLEX, "any", True, None),
    "less_equal.Tensor": (np.less_equal, NOT_COMPLEX, "any", True, None),
    "gt.Tensor": (np.greater, NOT_COMPLEX, "any", True, None),
    "greater.Tensor": (np.greater, NOT_COMPLEX, "any", True, None),
    "ge.Tensor": (np.greater_equal, NOT_COMPLEX, "any", True, None),
    "greater_equal.Tensor": (np.greater_equal, NOT_COMPLEX, "any", True, None),
    "logical_and": (_logical(np.logical_and), ALL, "any", True, None),
    "logical_or": (_logical(np.logical_or), ALL, "any", True, None),
    "logical_xor": (_logical(np.logical_xor), ALL, "any", True, None),
    "bitwise_and.Tensor": (np.bitwise_and, INTEGRAL, "any", True, None),
    "bitwise_or.Tensor": (np.bitwise_or, INTEGRAL, "any", True, None),
    "bitwise_xor.Tensor": (np.bitwise_xor, INTEGRAL, "any", True, None),
    "bitwise_left_shift.Tensor": (np.left_shift, INT, "shift", True, None),
    "bitwise_right_shift.Tensor": (np.right_shift, INT, "shift", True, None),
    "atan2": (F(np.arctan2), NOT_COMPLEX, "any", True, None),
    "arctan2": (F(np.arctan2), NOT_COMPLEX, "any", True, None),
    "hypot": (np.hypot, FLOAT, "any", True, None),
    "maximum": (np.maximum, NOT_COMPLEX, "any", True, None),
    "minimum": (np.minimum, NOT_COMPLEX, "any", True, None),
    "fmax": (np.fmax, NOT_COMPLEX, "any", True, None),
    "fmin": (np.fmin, NOT_COMPLEX, "any", True, None),
    "copysign.Tensor": (F(np.copysign), NOT_COMPLEX, "any", True, None),
    "nextafter": (np.nextafter, FLOAT, "any", False, None),
    "logaddexp": (np.logaddexp, FLOAT, "any", True, None),
    "logaddexp2": (np.logaddexp2, FLOAT, "any", True, None),
    "xlogy.Tensor": (_xlogy(np.log), NOT_COMPLEX, "pos", True, None),
    "special_xlogy": (_xlogy(np.log), NOT_COMPLEX, "pos", True, None),
    "special_xlog1py": (_xlogy(np.log1p), NOT_COMPLEX, "pos", True, None),
    "gcd": (np.gcd, INT, "any", True, None),
    "lcm": (np.lcm, INT, "small", True, None),
    "heaviside": (_heaviside, REAL, "any", True, None),
    "ldexp.Tensor": (lambda a, b: _fl(a) * np.exp2(_fl(b)), REAL, "small", True, None),
}
_GAMMA = {  # mpmath, with PyTorch's values off the domain (SciPy loses tiny a: gammainc(5e-324, 1) is 0)
    "igamma": acc.igamma,
    "igammac": acc.igammac,
    "special_gammainc": acc.igamma,
    "special_gammaincc": acc.igammac,
}

# Scalar overloads: name -> (oracle, dtypes, {argument: domain}, upcast)
_SCALAR = {
    "add.Scalar": (_add, ALL, {}, True),
    "sub.Scalar": (_sub, NUMERIC, {}, True),
    "subtract.Scalar": (_sub, NUMERIC, {}, True),
    "rsub.Scalar": (lambda a, b, alpha=1: _sub(b, a, alpha), NUMERIC, {}, True),
    "mul.Scalar": (lambda a, b: a * b, ALL, {}, True),
    "multiply.Scalar": (lambda a, b: a * b, ALL, {}, True),
    "div.Scalar": (F(np.true_divide), ALL, {"other": "nonzero"}, True),
    "divide.Scalar": (F(np.true_divide), ALL, {"other": "nonzero"}, True),
    "true_divide.Scalar": (F(np.true_divide), ALL, {"other": "nonzero"}, True),
    "floor_divide.Scalar": (np.floor_divide, REAL, {"other": "nonzero"}, "opmath"),
    "remainder.Scalar": (_remainder, REAL, {"other": "nonzero"}, "opmath"),
    "remainder.Scalar_Tensor": (_remainder, REAL, {"other": "nonzero"}, "opmath"),
    "fmod.Scalar": (np.fmod, REAL, {"other": "nonzero"}, "opmath"),
    "pow.Tensor_Scalar": (_pow_scalar, NUMERIC, {"exponent": "exp"}, True),
    "pow.Scalar": (_pow_scalar, NUMERIC, {"exponent": "exp", "self": "pos"}, True),
    "float_power.Tensor_Scalar": (F(np.power), ALL, {"exponent": "exp"}, True),
    "float_power.Scalar": (F(np.power), ALL, {"exponent": "exp", "self": "pos"}, True),
    "eq.Scalar": (np.equal, ALL, {}, True),
    "ne.Scalar": (np.not_equal, ALL, {}, True),
    "not_equal.Scalar": (np.not_equal, ALL, {}, True),
    "lt.Scalar": (np.less, NOT_COMPLEX, {}, True),
    "less.Scalar": (np.less, NOT_COMPLEX, {}, True),
    "le.Scalar": (np.less_equal, NOT_COMPLEX, {}, True),
    "less_equal.Scalar": (np.less_equal, NOT_COMPLEX, {}, True),
    "gt.Scalar": (np.greater, NOT_COMPLEX, {}, True),
    "greater.Scalar": (np.greater, NOT_COMPLEX, {}, True),
    "ge.Scalar": (np.greater_equal, NOT_COMPLEX, {}, True),
    "greater_equal.Scalar": (np.greater_equal, NOT_COMPLEX, {}, True),
    "bitwise_and.Scalar": (np.bitwise_and, INTEGRAL, {}, True),
    "bitwise_or.Scalar": (np.bitwise_or, INTEGRAL, {}, True),
    "bitwise_xor.Scalar": (np.bitwise_xor, INTEGRAL, {}, True),
    "bitwise_and.Scalar_Tensor": (np.bitwise_and, INTEGRAL, {}, True),
    "bitwise_or.Scalar_Tensor": (np.bitwise_or, INTEGRAL, {}, True),
    "bitwise_xor.Scalar_Tensor": (np.bitwise_xor, INTEGRAL, {}, True),
    "bitwise_left_shift.Tensor_Scalar": (np.left_shift, INT, {"other": "shift"}, True),
    "bitwise_right_shift.Tensor_Scalar": (np.right_shift, INT, {"other": "shift"}, True),
    "bitwise_left_shift.Scalar_Tensor": (np.left_shift, INT, {"other": "shift", "self": "pos"}, True),
    "bitwise_right_shift.Scalar_Tensor": (np.right_shift, INT, {"other": "shift", "self": "pos"}, True),
    "copysign.Scalar": (F(np.copysign), NOT_COMPLEX, {}, True),
    "xlogy.Scalar_Other": (_xlogy(np.log), NOT_COMPLEX, {"other": "pos"}, True),
    "xlogy.Scalar_Self": (_xlogy(np.log), NOT_COMPLEX, {"other": "pos"}, True),
    "special_xlogy.other_scalar": (_xlogy(np.log), NOT_COMPLEX, {"other": "pos"}, True),
    "special_xlogy.self_scalar": (_xlogy(np.log), NOT_COMPLEX, {"other": "pos"}, True),
    "special_xlog1py.other_scalar": (_xlogy(np.log1p), NOT_COMPLEX, {"other": "pos"}, True),
    "special_xlog1py.self_scalar": (_xlogy(np.log1p), NOT_COMPLEX, {"other": "pos"}, True),
    "special_zeta.other_scalar": (F(sp.zeta), NOT_COMPLEX, {"self": "gt1", "other": "pos"}, True),
    "special_zeta.self_scalar": (F(sp.zeta), NOT_COMPLEX, {"self": "gt1", "other": "pos"}, True),
    "clamp_min": (lambda x, m: _clamp(x, min=m), REAL, {}, True),
    "clamp_max": (lambda x, m: _clamp(x, max=m), REAL, {}, True),
}


def _alpha(rng, dtype, index):
    return OMIT if dtype is ow.bool or index % 2 == 0 else 2


def _binary_lines():
    lines = []
    for name, (fn, dtypes, domain, upcast, errors) in _BINARY.items():
        op = ow.ops.lookup(name)
        second = op.schema.arguments[1].name
        extra = {"alpha": _alpha} if "alpha" in {a.name for a in op.schema.arguments} else {}
        if name.endswith("Tensor_mode"):
            extra["rounding_mode"] = Cycle("trunc", "floor", None)
        lines.append(ew(name, fn, dtypes, dom={second: domain}, upcast=upcast, errors=errors, extra=extra))
    for name, fn in _GAMMA.items():
        lines.append(ew(name, F(fn), FLOAT, dom={"self": "pos", "other": "pos"}, tol=LOOSE))
    lines.append(ew("special_zeta", F(sp.zeta), NOT_COMPLEX, dom={"self": "gt1", "other": "pos"}, tol=LOOSE))
    for name, (fn, dtypes, dom, upcast) in _SCALAR.items():
        op = ow.ops.lookup(name)
        extra = {"alpha": _alpha} if "alpha" in {a.name for a in op.schema.arguments} else {}
        lines.append(ew(name, fn, dtypes, dom=dom, upcast=upcast, extra=extra))
    for mode in ("div", "divide"):
        lines.append(
            ew(
                f"{mode}.Scalar_mode",
                _div_mode,
                REAL,
                dom={"other": "nonzero"},
                upcast="opmath",
                extra={"rounding_mode": Cycle("trunc", "floor", None)},
            )
        )
    for name in _POLY:
        base = f"special_{name}"
        lines.append(ew(base, _poly(name), FLOAT, dom={"x": "unit", "n": "exp"}, tol=POLY_TOL, specials=False))
        lines.append(ew(f"{base}.x_scalar", _poly(name), FLOAT, dom={"x": "unit", "n": "exp"}, tol=POLY_TOL))
        lines.append(ew(f"{base}.n_scalar", _poly(name), FLOAT, dom={"x": "unit", "n": "exp"}, tol=POLY_TOL))
    return lines


def _select_lines():
    return [
        ew("where.self", lambda c, a, b: np.where(c, a, b), ALL, dtype_of={"condition": ow.bool}),
        ew("where.ScalarOther", lambda c, a, b: np.where(c, a, b), ALL, dtype_of={"condition": ow.bool}),
        ew("where.ScalarSelf", lambda c, a, b: np.where(c, a, b), ALL, dtype_of={"condition": ow.bool}),
        ew(
            "where.Scalar",
            lambda c, a, b: np.where(c, a, b),
            (ow.bool, ow.int64, ow.float32, ow.complex64),
            dtype_of={"condition": ow.bool},
        ),
        ew("clamp", _clamp, REAL, extra={"min": Cycle(1, OMIT, 3), "max": Cycle(OMIT, 2, 1)}),
        ew("clip", _clamp, REAL, extra={"min": Cycle(OMIT, 1, OMIT), "max": Cycle(2, 2, 3)}),
        ew("clamp.Tensor", _clamp, REAL, extra={"min": Tensorize("small"), "max": Tensorize("small")}),
        ew("clip.Tensor", _clamp, REAL, extra={"min": Tensorize("small"), "max": Tensorize("small")}),
        ew("clamp_min.Tensor", lambda x, m: _clamp(x, min=m), REAL),
        ew("clamp_max.Tensor", lambda x, m: _clamp(x, max=m), REAL),
        ew("lerp.Scalar", _lerp, FLOATING, extra={"weight": Cycle(0.25, 0.75, -0.5)}),
        ew("lerp.Tensor", _lerp, FLOATING, dom={"weight": "prob"}),
        ew("addcmul", lambda s, a, b, value=1: s + value * a * b, NUMERIC, extra={"value": Cycle(OMIT, 2)}),
        ew(
            "addcdiv",
            lambda s, a, b, value=1: s + value * a / b,
            FLOATING,
            dom={"tensor2": "nonzero"},
            extra={"value": Cycle(OMIT, 2)},
        ),
        ew("masked_fill.Scalar", lambda s, m, v: np.where(m, v, s), ALL, dtype_of={"mask": ow.bool}),
        ew(
            "masked_fill.Tensor",
            lambda s, m, v: np.where(m, v, s),
            ALL,
            dtype_of={"mask": ow.bool},
            extra={"value": Tensorize(shape=())},
        ),
        ew("fill.Scalar", lambda s, v: np.full(s.shape, v), ALL),
        ew("fill.Tensor", lambda s, v: np.full(s.shape, v), ALL, extra={"value": Tensorize(shape=())}),
        ew("zero", lambda s: np.zeros_like(s), ALL),
        ew(
            "isclose",
            lambda a, b, rtol=1e-5, atol=1e-8, equal_nan=False: np.isclose(a, b, rtol, atol, equal_nan),
            ALL,
            extra={"equal_nan": Cycle(OMIT, True)},
        ),
    ]


def _activation_lines():
    return [
        ew("relu", lambda x: np.where(x <= 0, 0, x), REAL),
        ew("relu6", lambda x: _hardtanh(x, 0, 6), REAL),
        ew(
            "hardtanh",
            _hardtanh,
            tuple(d for d in REAL if d is not ow.uint8),
            extra={"min_val": Cycle(OMIT, -2), "max_val": Cycle(OMIT, 3)},
        ),
        ew(
            "leaky_relu",
            lambda x, negative_slope=0.01: np.where(x > 0, x, negative_slope * x),
            FLOAT,
            extra={"negative_slope": Cycle(OMIT, 0.2)},
        ),
        ew("threshold", lambda x, t, v: np.where(x <= t, v, x), REAL, extra={"threshold": 1, "value": 7}),
        ew("hardshrink", lambda x, lambd=0.5: np.where((x >= -lambd) & (x <= lambd), 0, x), FLOAT),
        ew("softshrink", _softshrink, FLOAT),
        ew("hardsigmoid", lambda x: _hardtanh(x + 3, 0, 6) / 6, FLOAT),
        ew("hardswish", lambda x: x * _hardtanh(x + 3, 0, 6) / 6, FLOAT),
        ew("elu", _elu, FLOAT, extra={"alpha": Cycle(OMIT, 0.5), "scale": Cycle(OMIT, 2.0)}),
        ew("selu", lambda x: _elu(x, *SELU), FLOAT),
        ew("celu", lambda x, alpha=1.0: _elu(x, alpha, 1.0, 1 / alpha), FLOAT, extra={"alpha": Cycle(OMIT, 2.0)}),
        ew("gelu", _gelu, FLOAT, extra={"approximate": Cycle(OMIT, "tanh")}),
        ew("silu", lambda x: x / (1 + np.exp(-x)), FLOATING),
        ew("mish", lambda x: x * np.tanh(np.log1p(np.exp(x))), FLOAT),
        ew("softplus", _softplus, FLOAT, extra={"beta": Cycle(OMIT, 2), "threshold": Cycle(OMIT, 5)}),
        ew("log_sigmoid", lambda x: np.minimum(x, 0) - np.log1p(np.exp(-np.abs(x))), FLOAT),
        ew("tanhshrink", F(lambda x: x - np.tanh(x)), ALL, tol=CANCEL),
    ]


# -- prims -------------------------------------------------------------------------------------------

_PRIM_UNARY = {
    "acos": acc.extended(np.arccos),
    "acosh": acc.extended(np.arccosh),
    "asin": acc.extended(np.arcsin),
    "asinh": acc.extended(np.arcsinh),
    "atan": acc.extended(np.arctan),
    "atanh": acc.extended(np.arctanh),
    "cos": acc.extended(np.cos),
    "cosh": acc.extended(np.cosh),
    "sin": acc.extended(np.sin),
    "sinh": acc.extended(np.sinh),
    "tan": acc.extended(np.tan),
    "tanh": acc.extended(np.tanh),
    "exp": acc.extended(np.exp),
    "exp2": acc.extended(np.exp2),
    "expm1": acc.extended(np.expm1),
    "log": acc.extended(np.log),
    "log1p": acc.log1p,
    "log2": acc.extended(np.log2),
    "log10": acc.extended(np.log10),
    "sqrt": acc.extended(np.sqrt),
    "rsqrt": lambda x: 1 / np.sqrt(x),
    "reciprocal": lambda x: 1 / x,
    "sigmoid": lambda x: 1 / (1 + np.exp(-x)),
    "sinc": acc.sinc,
    "cbrt": acc.extended(np.cbrt),
    "erf": acc.erf,
    "erfc": acc.erfc,
    "erfcx": acc.erfcx,
    "erf_inv": acc.erfinv,
    "lgamma": acc.lgamma,
    "digamma": acc.digamma,
    "ndtri": acc.ndtri,
    "ndtr": acc.ndtr,
    "log_ndtr": acc.log_ndtr,
    "bessel_i0": acc.i0,
    "bessel_i0e": acc.i0e,
    "bessel_i1": acc.i1,
    "bessel_i1e": acc.i1e,
    "bessel_j0": acc.j0,
    "bessel_j1": acc.j1,
    "bessel_y0": acc.y0,
    "bessel_y1": acc.y1,
    "modified_bessel_k0": acc.k0,
    "modified_bessel_k1": acc.k1,
    "scaled_modified_bessel_k0": acc.k0e,
    "scaled_modified_bessel_k1": acc.k1e,
    "spherical_bessel_j0": acc.spherical_j0,
    "airy_ai": acc.airy_ai,
    "entr": acc.entr,
    "frac": lambda x: x - np.trunc(x),
    "ceil": np.ceil,
    "floor": np.floor,
    "round": np.round,
    "trunc": np.trunc,
    "abs": np.abs,
    "neg": np.negative,
    "sign": _sign,
    "sgn": _sgn,
    "signbit": np.signbit,
    "bitwise_not": np.invert,
    "logical_not": lambda x: x == 0,
    "isfinite": np.isfinite,
    "isinf": np.isinf,
    "isnan": np.isnan,
    "isposinf": lambda x: np.isinf(x) & (x > 0),
    "isneginf": lambda x: np.isinf(x) & (x < 0),
    "real": np.real,
    "imag": np.imag,
    "angle": _angle,
    "conj_physical": np.conj,
}
_PRIM_DOMAINS = {
    "acos": "unit",
    "asin": "unit",
    "atanh": "unit",
    "tan": "unit",
    "erf_inv": "unit",
    "acosh": "gt1",
    "log": "pos",
    "log1p": "pos",
    "log2": "pos",
    "log10": "pos",
    "rsqrt": "pos",
    "bessel_y0": "pos",
    "bessel_y1": "pos",
    "modified_bessel_k0": "pos",
    "modified_bessel_k1": "pos",
    "scaled_modified_bessel_k0": "pos",
    "scaled_modified_bessel_k1": "pos",
    "ndtri": "prob",
    "reciprocal": "nonzero",
    "cosh": "small",
    "sinh": "small",
    "exp": "small",
    "exp2": "small",
    "expm1": "small",
    "bessel_i0": "small",
    "bessel_i1": "small",
    "bessel_j0": "small",
    "bessel_j1": "small",
    "spherical_bessel_j0": "small",
    "airy_ai": "small",
}
_PRIM_LOOSE = {"lgamma", "digamma", "erfcx", "ndtri", "log_ndtr", "airy_ai", "spherical_bessel_j0"}
_PRIM_LOOSE |= {n for n in _PRIM_UNARY if "bessel" in n}
_PRIM_BINARY = {
    "add": (np.add, "any"),
    "sub": (np.subtract, "any"),
    "mul": (np.multiply, "any"),
    "div": (lambda a, b: np.true_divide(a, b) if a.dtype.kind in "fc" else _div_mode(a, b, "trunc"), "nonzero"),
    "pow": (_pow, "exp"),
    "maximum": (np.maximum, "any"),
    "minimum": (np.minimum, "any"),
    "fmax": (np.fmax, "any"),
    "fmin": (np.fmin, "any"),
    "remainder": (_remainder, "nonzero"),
    "fmod": (np.fmod, "nonzero"),
    "floor_divide": (np.floor_divide, "nonzero"),
    "heaviside": (_heaviside, "any"),
    "atan2": (acc.extended(np.arctan2), "any"),
    "hypot": (acc.extended(np.hypot), "any"),
    "copysign": (np.copysign, "any"),
    "nextafter": (np.nextafter, "any"),
    "logaddexp": (acc.extended(np.logaddexp), "any"),
    "logaddexp2": (acc.extended(np.logaddexp2), "any"),
    "xlogy": (_xlogy(acc.extended(np.log)), "pos"),
    "xlog1py": (_xlogy(acc.log1p), "pos"),
    "zeta": (acc.zeta, "pos"),
    "igamma": (acc.igamma, "pos"),
    "igammac": (acc.igammac, "pos"),
    "gcd": (np.gcd, "any"),
    "lcm": (np.lcm, "small"),
    "bitwise_and": (np.bitwise_and, "any"),
    "bitwise_or": (np.bitwise_or, "any"),
    "bitwise_xor": (np.bitwise_xor, "any"),
    "shift_left": (np.left_shift, "shift"),
    "shift_right_arithmetic": (np.right_shift, "shift"),
    "logical_and": (_logical(np.logical_and), "any"),
    "logical_or": (_logical(np.logical_or), "any"),
    "logical_xor": (_logical(np.logical_xor), "any"),
    "eq": (np.equal, "any"),
    "ne": (np.not_equal, "any"),
    "lt": (np.less, "any"),
    "le": (np.less_equal, "any"),
    "gt": (np.greater, "any"),
    "ge": (np.greater_equal, "any"),
}
_PRIM_OPMATH = {"remainder", "fmod", "floor_divide", "div", "nextafter"}
_PRIM_FIRST_DOMAIN = {"zeta": "gt1", "igamma": "pos", "igammac": "pos"}


def _prim_dtypes(table_module: str, name: str, fallback):
    """The dtypes a prim accepts, from the prim family's table (the core's declaration)."""
    import importlib

    try:
        table = importlib.import_module(f"opweave.prims.{table_module}")
        for attr in ("UNARY", "BINARY"):
            entry = getattr(table, attr, {}).get(name)
            if entry is not None:
                return tuple(d for d in ALL if d in entry[0])
    except ImportError:
        pass
    return fallback


def _prim_lines():
    lines = []
    for name, fn in _PRIM_UNARY.items():
        dtypes = _prim_dtypes("elementwise_unary", name, FLOAT)
        tol = LOOSE if name in _PRIM_LOOSE else None
        lines.append(ew(f"prims::{name}", fn, dtypes, dom={"self": _PRIM_DOMAINS.get(name, "any")}, tol=tol))
    for name, (fn, domain) in _PRIM_BINARY.items():
        dtypes = _prim_dtypes("elementwise_binary", name, FLOAT)
        upcast = False if name == "nextafter" else ("opmath" if name in _PRIM_OPMATH else True)
        errors = int_division_by_zero() if name in ("div", "remainder", "fmod", "floor_divide") else None
        errors = int_negative_power if name == "pow" else errors
        dom = {"other": domain, "self": _PRIM_FIRST_DOMAIN.get(name, "any")}
        tol = LOOSE if name in ("zeta", "igamma", "igammac") else None
        lines.append(ew(f"prims::{name}", fn, dtypes, dom=dom, upcast=upcast, errors=errors, tol=tol))
    for name in _POLY:
        lines.append(ew(f"prims::{name}", _poly(name), FLOAT, dom={"x": "unit", "n": "exp"}, tol=POLY_TOL))
    lines += [
        ew("prims::complex", _complex, (ow.float32, ow.float64)),
        ew("prims::polar", lambda a, t: _complex(a * np.cos(t), a * np.sin(t)), (ow.float32, ow.float64)),
        ew("prims::where", lambda c, a, b: np.where(c, a, b), ALL, dtype_of={"pred": ow.bool}),
        ew("prims::clamp", lambda x, lo, hi: np.minimum(np.maximum(x, lo), hi), REAL),
        ew("prims::lerp", _lerp, FLOATING, dom={"weight": "prob"}),
        ew("prims::round_decimals", _round_decimals, FLOAT, extra={"decimals": Cycle(1, 2, -1)}),
        ew(
            "prims::nan_to_num",
            _nan_to_num,
            FLOATING,
            pass_dtype=True,
            extra={"nan": Cycle(OMIT, 1.5), "posinf": Cycle(OMIT, 9.0)},
        ),
        ew(
            "prims::polygamma",
            F(lambda x, n: sp.polygamma(n, x)),
            FLOAT,
            extra={"n": Cycle(1, 2)},
            dom={"self": "pos"},
            tol=LOOSE,
        ),
        ew("prims::mvlgamma", _mvlgamma, FLOAT, extra={"p": Cycle(1, 3)}, dom={"self": "gt1"}, tol=LOOSE),
        ew("prims::fill", lambda s, v: np.full(s.shape, v), ALL),
        ew("prims::logit", _logit, FLOAT, dom={"self": "prob"}, extra={"eps": Cycle(OMIT, 0.1)}),
    ]
    return lines


register(*_unary_lines(), *_binary_lines(), *_select_lines(), *_activation_lines(), *_prim_lines())
