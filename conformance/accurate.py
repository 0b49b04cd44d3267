"""Oracles for the math functions that share no code with the CPU backend's kernels.

The CPU backend computes ``sin``, ``erf``, ``i0``... with the NumPy and SciPy calls a plain
oracle would make, so on the CPU such an oracle checks layouts, dtypes and special values but
never a digit. These oracles compute elsewhere:

* :func:`extended` runs a NumPy ufunc in ``long double`` (the C library's ``sinl``, ``csinl``...,
  a 64-bit mantissa on x86-64) and rounds the result to float64 / complex128. Where ``long
  double`` is no wider than ``double`` (MSVC, Apple silicon) it is the plain ufunc, and
  :data:`EXTENDED` is False.
* :func:`multiprecision` evaluates a function element by element with mpmath at
  :data:`PRECISION` bits. Each function below writes out its values at +-inf, at its poles and
  outside its domain as PyTorch returns them (they were read off PyTorch 2.13 on the CPU), and
  leaves every finite value inside the domain to mpmath.

The op database uses them for the math functions; a backend's own tests may use them too
(``from opweave_conformance import accurate``). ``tests/test_accurate_oracles.py`` checks them
against tabulated values and identities.
"""

from __future__ import annotations

import functools
import math

import mpmath
import numpy as np

EXTENDED = np.finfo(np.longdouble).nmant > np.finfo(np.float64).nmant
PRECISION = 120  # bits: float64's 53 and room for the cancellations in erfcx and the scaled Bessel functions
_PI = np.longdouble("3.14159265358979323846264338327950288")
_INF, _NAN = math.inf, math.nan
_CTX = mpmath.MPContext()
_CTX.prec = PRECISION


def extended(ufunc):
    """An oracle: ``ufunc`` in (complex) long double, rounded to float64 / complex128."""

    def oracle(*xs):
        wide = [np.asarray(x) for x in xs]
        wide = [x.astype(np.clongdouble if x.dtype.kind == "c" else np.longdouble) for x in wide]
        with np.errstate(all="ignore"):
            out = np.asarray(ufunc(*wide))
        return out.astype(np.complex128 if out.dtype.kind == "c" else np.float64)

    oracle.__name__ = oracle.__qualname__ = f"extended_{getattr(ufunc, '__name__', 'fn')}"
    return oracle


def _normalised_sinc(x):
    """``sin(pi x) / (pi x)`` (1 at 0) with a long double pi, for :func:`extended` to run in long double."""
    y = _PI * x
    return np.where(x == 0, 1, np.sin(y) / np.where(x == 0, 1, y))


sinc = extended(_normalised_sinc)


def log1p(x):
    """``log(1 + x)``: real values in long double, finite complex ones with mpmath.

    NumPy's complex ``log1p`` is ``log(1 + x)``, in long double too, which loses the digits of a
    small ``|x|``; its values at infinities and nan are C99's and are kept.
    """
    x = np.asarray(x)
    out = extended(np.log1p)(x)
    if x.dtype.kind == "c":
        finite = np.isfinite(x)
        values = x[finite].astype(np.complex128).reshape(-1)
        # log1p(z) = z + O(z**2): at a complex zero the zero itself, both signs kept (PyTorch's log1p(-0-0j) is -0-0j)
        logs = [v if v == 0 else complex(_CTX.log1p(_CTX.mpc(v.real, v.imag))) for v in values]
        # mpmath has no signed zero: on the real axis the imaginary part takes the sign of x's
        out[finite] = [
            complex(w.real, math.copysign(w.imag, v.imag) if v.imag == 0 else w.imag) for v, w in zip(values, logs)
        ]
    return out


def multiprecision(fn, nan_in_nan_out: bool = True):
    """An oracle: ``fn(ctx, *floats)`` per element, as float64 (nan in, nan out unless ``fn`` says otherwise)."""
    ctx = _CTX

    @functools.lru_cache(maxsize=1 << 16)  # an op's variants (out=, in-place, prims::) see the same values
    def cached(*keys):
        xs = keys[::2]  # each value is followed by its sign, so that 0.0 and -0.0 are cached apart
        if nan_in_nan_out and any(math.isnan(x) for x in xs):
            return _NAN
        value = fn(ctx, *xs)
        if isinstance(value, ctx.mpc):  # a real function's value with a rounding-level imaginary part
            value = value.real if abs(value.imag) <= abs(value.real) * 2.0**-100 else _NAN
        return float(value)

    def element(*xs):
        return cached(*(v for x in xs for v in (float(x), math.copysign(1.0, x))))

    vectorised = np.frompyfunc(element, fn.__code__.co_argcount - 1, 1)

    def oracle(*xs):
        with np.errstate(all="ignore"):
            return np.asarray(vectorised(*[np.asarray(x, np.float64) for x in xs]), np.float64)

    oracle.__name__ = oracle.__qualname__ = f"multiprecision_{fn.__name__.lstrip('_')}"
    return oracle


def _is_pole(x: float) -> bool:
    """Zero or a negative integer: the poles of the gamma function."""
    return x <= 0 and math.isfinite(x) and x == math.floor(x)


def _erf(ctx, x):
    return x if x == 0 else ctx.erf(x)  # keeps the sign of -0.0


#: Beyond this magnitude erfc is 0 or 2 in float64 (erfc(27.3) is below the smallest subnormal, erfc(-6)
#: rounds to 2), and mpmath's erfc of a float64 near the largest one raises converting its tiny result.
_ERFC_SATURATES = 40.0


def _erfc(ctx, x):
    if abs(x) > _ERFC_SATURATES:
        return 0.0 if x > 0 else 2.0
    return ctx.erfc(x)


def _erfcx(ctx, x):
    if math.isinf(x):
        return 0.0 if x > 0 else _INF
    if x < -_ERFC_SATURATES:  # exp(x**2) overflows float64
        return _INF
    if x > 1e10:  # 1 / (sqrt(pi) x) (1 - 1 / (2 x**2) + ...): the correction is below float64's precision
        return 1 / (ctx.sqrt(ctx.pi) * ctx.mpf(x))
    return ctx.exp(ctx.mpf(x) ** 2) * ctx.erfc(x)


def _erfinv(ctx, x):
    if abs(x) >= 1:
        return math.copysign(_INF, x) if abs(x) == 1 else _NAN
    return x if x == 0 else ctx.erfinv(x)


def _lgamma(ctx, x):
    if math.isinf(x) or _is_pole(x):
        return _INF
    return ctx.loggamma(x) if x > 0 else ctx.log(abs(ctx.gamma(x)))


def _digamma(ctx, x):
    if math.isinf(x):
        return _INF if x > 0 else _NAN
    if x == 0:
        return math.copysign(_INF, -math.copysign(1.0, x))  # -inf at +0, +inf at -0
    return _NAN if _is_pole(x) else ctx.digamma(x)


def _ndtr(ctx, x):
    if abs(x) > 2 * _ERFC_SATURATES:
        return 1.0 if x > 0 else 0.0
    return ctx.ncdf(x)


def _ndtri(ctx, p):
    if not 0 <= p <= 1:
        return _NAN
    if p in (0, 1):
        return _INF if p == 1 else -_INF
    # 2p - 1 must be exact for tiny p: enough bits to span p's exponent and 1
    with ctx.workprec(PRECISION + max(0, -math.frexp(p)[1])):
        return ctx.sqrt(2) * ctx.erfinv(2 * ctx.mpf(p) - 1)


def _log_ndtr(ctx, x):
    if math.isinf(x):
        return 0.0 if x > 0 else -_INF
    if x > 0:  # ncdf(x) rounds to 1 for large x: the logarithm of 1 - ncdf(-x) keeps its digits
        return ctx.log1p(-ctx.ncdf(-x))
    return ctx.log(ctx.ncdf(x))


def _bessel_i(order: int, scaled: bool):
    def fn(ctx, x):
        if math.isinf(x):
            return math.copysign(0.0, x if order else 1.0) if scaled else _NAN
        value = ctx.besseli(order, x)
        return value * ctx.exp(-abs(ctx.mpf(x))) if scaled else value

    fn.__name__ = f"bessel_i{order}{'e' if scaled else ''}"
    return fn


def _bessel_j(order: int):
    def fn(ctx, x):
        if math.isinf(x):
            return _NAN
        return x if x == 0 and order == 1 else ctx.besselj(order, x)  # J1 is odd: -0.0 at -0.0

    fn.__name__ = f"bessel_j{order}"
    return fn


def _bessel_y(order: int):
    def fn(ctx, x):
        if math.isinf(x) or x < 0:
            return _NAN
        return -_INF if x == 0 else ctx.bessely(order, x)

    fn.__name__ = f"bessel_y{order}"
    return fn


def _bessel_k(order: int, scaled: bool):
    def fn(ctx, x):
        if x < 0:
            return _NAN
        if x == 0 or math.isinf(x):
            return _INF if x == 0 else 0.0
        value = ctx.besselk(order, x)
        return value * ctx.exp(x) if scaled else value

    fn.__name__ = f"bessel_k{order}{'e' if scaled else ''}"
    return fn


def _spherical_j0(ctx, x):
    if math.isinf(x):
        return 0.0
    return 1.0 if x == 0 else ctx.sin(x) / x


def _airy_ai(ctx, x):
    return _NAN if math.isinf(x) else ctx.airyai(x)


def _entr(ctx, x):
    if x < 0 or math.isinf(x):
        return -_INF
    return 0.0 if x == 0 else -ctx.mpf(x) * ctx.log(x)


def _zeta(ctx, x, q):
    """Hurwitz zeta ``sum((k + q) ** -x)``, with Cephes' answers off its domain, in its order (so that
    ``zeta(1, nan)`` and ``zeta(nan, -2)`` are inf), as PyTorch gives them, except at ``q = +inf``: 0 here,
    the limit, where PyTorch 2.13 gives nan."""
    if x == 1:
        return _INF
    if x < 1:
        return _NAN
    if q <= 0:
        if math.isinf(q) or q == math.floor(q):
            return _INF
        if math.isinf(x):  # some k + q lies strictly between -1 and 1, and its power -inf is inf
            return _INF
        if math.isnan(x) or x != math.floor(x):
            return _NAN
        shift = math.ceil(-q)  # zeta(x, q) = zeta(x, q + n) + sum((q + k) ** -x for k < n)
        if shift > 10_000:
            return _NAN
        return ctx.zeta(x, q + shift) + ctx.fsum(ctx.power(ctx.mpf(q) + k, -x) for k in range(shift))
    if math.isnan(x) or math.isnan(q):
        return _NAN
    if math.isinf(q):
        return 0.0
    if math.isinf(x):
        return 1.0 if q == 1 else (_INF if q < 1 else _NAN)  # Cephes' nan for q > 1 (the limit is 0)
    return ctx.zeta(x, q)


def _incomplete_gamma_special(a, x, lower: bool):
    """PyTorch's answers for ``igamma``/``igammac`` (``lower``/upper) off the plain domain, in the order its
    scalar kernel tests them; None where the value is the integral's."""
    if x < 0 or a < 0:  # false for nan, as in PyTorch: igamma(nan, inf) is 1, igamma(inf, nan) 0
        return _NAN
    if a == 0:
        return (1.0 if lower else 0.0) if x > 0 else _NAN
    if x == 0:
        return 0.0 if lower else 1.0
    if math.isinf(a):
        return _NAN if math.isinf(x) else (0.0 if lower else 1.0)
    if math.isinf(x):
        return 1.0 if lower else 0.0
    if math.isnan(a) or math.isnan(x):
        return _NAN
    return None


#: Below this ``a`` (and above :data:`_HUGE_A`) mpmath's ``gammainc`` takes seconds or fails to converge;
#: there :func:`_incomplete_gamma_extreme`'s leading terms are exact to float64's precision.
_TINY_A, _HUGE_A = 1e-20, 1e30


def _incomplete_gamma_extreme(ctx, a, x, lower: bool):
    """``P(a, x)`` (``lower``) or ``Q(a, x)`` for a tiny or huge ``a`` (finite, positive ``a`` and ``x``), else None.

    Tiny ``a``: ``Q = a E1(x) + O(a**2 log(x)**2)`` (``Gamma(a, x) -> E1(x)`` and ``Gamma(a) ~ 1 / a``), so that
    ``P = 1 - Q`` rounds to 1. Huge ``a``: Temme's uniform expansion ``Q = erfc(eta sqrt(a / 2)) / 2 + R`` with
    ``eta = sign(x - a) sqrt(2 (x/a - 1 - log(x/a)))``, where ``R = O(exp(-a eta**2 / 2) / sqrt(a))``: below
    float64's precision beside 1/2 at ``x = a`` and underflowing with the erfc elsewhere (two floats this
    large that differ at all are too far apart for a result strictly between 0 and 1).
    """
    if a < _TINY_A:
        q = a * ctx.e1(x) if x < 800 else ctx.mpf(0)  # E1(x) < exp(-x) underflows beyond
        return 1 - q if lower else q
    if a > _HUGE_A:
        lam = ctx.mpf(x) / a
        eta = ctx.sqrt(2 * (lam - 1 - ctx.log(lam))) if lam != 1 else ctx.mpf(0)
        z = (eta if lam > 1 else -eta) * ctx.sqrt(ctx.mpf(a) / 2)
        if abs(z) > _ERFC_SATURATES:
            q = ctx.mpf(1 if z < 0 else 0)
        else:
            q = ctx.erfc(z) / 2
        return 1 - q if lower else q
    return None


def _igamma(ctx, a, x):
    """The regularised lower incomplete gamma function ``P(a, x)``."""
    special = _incomplete_gamma_special(a, x, True)
    if special is None:
        special = _incomplete_gamma_extreme(ctx, a, x, True)
    return special if special is not None else ctx.gammainc(a, 0, x, regularized=True)


def _igammac(ctx, a, x):
    """The regularised upper incomplete gamma function ``Q(a, x) = 1 - P(a, x)``."""
    special = _incomplete_gamma_special(a, x, False)
    if special is None:
        special = _incomplete_gamma_extreme(ctx, a, x, False)
    return special if special is not None else ctx.gammainc(a, x, ctx.inf, regularized=True)


erf = multiprecision(_erf)
erfc = multiprecision(_erfc)
erfcx = multiprecision(_erfcx)
erfinv = multiprecision(_erfinv)
lgamma = multiprecision(_lgamma)
digamma = multiprecision(_digamma)
ndtr = multiprecision(_ndtr)
ndtri = multiprecision(_ndtri)
log_ndtr = multiprecision(_log_ndtr)
i0, i0e = multiprecision(_bessel_i(0, False)), multiprecision(_bessel_i(0, True))
i1, i1e = multiprecision(_bessel_i(1, False)), multiprecision(_bessel_i(1, True))
j0, j1 = multiprecision(_bessel_j(0)), multiprecision(_bessel_j(1))
y0, y1 = multiprecision(_bessel_y(0)), multiprecision(_bessel_y(1))
k0, k0e = multiprecision(_bessel_k(0, False)), multiprecision(_bessel_k(0, True))
k1, k1e = multiprecision(_bessel_k(1, False)), multiprecision(_bessel_k(1, True))
spherical_j0 = multiprecision(_spherical_j0)
airy_ai = multiprecision(_airy_ai)
entr = multiprecision(_entr)
zeta = multiprecision(_zeta, nan_in_nan_out=False)
igamma = multiprecision(_igamma, nan_in_nan_out=False)
igammac = multiprecision(_igammac, nan_in_nan_out=False)
