"""Derivatives of the elementwise prims (unary, binary, ternary)."""

from __future__ import annotations

import math

from ..layer import NONDIFFERENTIABLE
from ._common import PI, C, conj, formula

#: The unary prims' formulas by prim name: (formula, save, save_out), for the canonical ops that reuse them.
UNARY: dict = {}


def _unary(name: str, derivative, *, save_out: bool = False, uses_input: bool = True):
    """``grad * conj(f'(x))`` where ``derivative(x, y)`` gives f'(x)."""

    def fn(ctx, g):
        x = ctx.args[0] if uses_input else None
        y = ctx.out if save_out else None
        return (g * conj(derivative(x, y)),)

    save = (0,) if uses_input else ()
    UNARY[name] = (fn, save, save_out)
    formula(f"prims::{name}", save=save, save_out=save_out)(fn)


_unary("acos", lambda x, y: -C.rsqrt(1 - x * x))
_unary("acosh", lambda x, y: C.rsqrt((x - 1) * (x + 1)) if not x.dtype.is_complex else 1 / C.sqrt(x * x - 1))
_unary("asin", lambda x, y: C.rsqrt(1 - x * x))
_unary("asinh", lambda x, y: C.rsqrt(x * x + 1))
_unary("atan", lambda x, y: 1 / (x * x + 1))
_unary("atanh", lambda x, y: 1 / (1 - x * x))
_unary("cbrt", lambda x, y: 1 / (3 * y * y), save_out=True, uses_input=False)
_unary("cos", lambda x, y: -C.sin(x))
_unary("cosh", lambda x, y: C.sinh(x))
_unary("sin", lambda x, y: C.cos(x))
_unary("sinh", lambda x, y: C.cosh(x))
_unary("tan", lambda x, y: 1 + y * y, save_out=True, uses_input=False)
_unary("tanh", lambda x, y: 1 - y * y, save_out=True, uses_input=False)
_unary("exp", lambda x, y: y, save_out=True, uses_input=False)
_unary("exp2", lambda x, y: y * math.log(2.0), save_out=True, uses_input=False)
_unary("expm1", lambda x, y: y + 1, save_out=True, uses_input=False)
_unary("log", lambda x, y: 1 / x)
_unary("log10", lambda x, y: 1 / (x * math.log(10.0)))
_unary("log1p", lambda x, y: 1 / (x + 1))
_unary("log2", lambda x, y: 1 / (x * math.log(2.0)))
_unary("digamma", lambda x, y: C.polygamma(1, x))
_unary("lgamma", lambda x, y: C.digamma(x))
_unary("erf", lambda x, y: (2 / math.sqrt(PI)) * C.exp(-x * x))
_unary("erfc", lambda x, y: (-2 / math.sqrt(PI)) * C.exp(-x * x))
_unary("erf_inv", lambda x, y: (math.sqrt(PI) / 2) * C.exp(y * y), save_out=True, uses_input=False)
_unary("erfcx", lambda x, y: 2 * x * y - 2 / math.sqrt(PI), save_out=True)
_unary("reciprocal", lambda x, y: -y * y, save_out=True, uses_input=False)
_unary("rsqrt", lambda x, y: -0.5 * y * y * y, save_out=True, uses_input=False)
_unary("sqrt", lambda x, y: 0.5 / y, save_out=True, uses_input=False)
_unary("sigmoid", lambda x, y: y * (1 - y), save_out=True, uses_input=False)
_unary("ndtr", lambda x, y: C.exp(-0.5 * x * x) / math.sqrt(2 * PI))
_unary("log_ndtr", lambda x, y: C.exp(-0.5 * x * x - y) / math.sqrt(2 * PI), save_out=True)
_unary("ndtri", lambda x, y: math.sqrt(2 * PI) * C.exp(0.5 * y * y), save_out=True, uses_input=False)
_unary("entr", lambda x, y: C.where(x > 0, -(C.log(x) + 1), C.where(x == 0, -math.inf, math.nan)))
_unary("bessel_i0", lambda x, y: C.special_i1(x))
_unary("bessel_i0e", lambda x, y: C.special_i1e(x) - C.sign(x) * y, save_out=True)
_unary("bessel_i1", lambda x, y: C.where(x == 0, 0.5, C.i0(x) - y / x), save_out=True)
_unary("bessel_i1e", lambda x, y: C.where(x == 0, 0.5, C.special_i0e(x) - y * (C.sign(x) + 1 / x)), save_out=True)
_unary("bessel_j0", lambda x, y: -C.special_bessel_j1(x))
_unary("bessel_j1", lambda x, y: C.where(x == 0, 0.5, C.special_bessel_j0(x) - y / x), save_out=True)
_unary("bessel_y0", lambda x, y: -C.special_bessel_y1(x))
_unary("bessel_y1", lambda x, y: C.special_bessel_y0(x) - y / x, save_out=True)
_unary("modified_bessel_k0", lambda x, y: -C.special_modified_bessel_k1(x))
_unary("modified_bessel_k1", lambda x, y: -C.special_modified_bessel_k0(x) - y / x, save_out=True)
_unary("scaled_modified_bessel_k0", lambda x, y: y - C.special_scaled_modified_bessel_k1(x), save_out=True)
_unary(
    "scaled_modified_bessel_k1",
    lambda x, y: y - C.special_scaled_modified_bessel_k0(x) - y / x,
    save_out=True,
)
_unary(
    "spherical_bessel_j0",
    lambda x, y: C.where(x == 0, 0.0, (C.cos(x) - y) / C.where(x == 0, 1.0, x)),
    save_out=True,
)
_unary(
    "sinc",
    lambda x, y: C.where(x == 0, 0.0, (C.cos(PI * x) - y) / C.where(x == 0, 1.0, x)),
    save_out=True,
)


@formula("prims::neg", save=())
def _neg(ctx, g):
    return (-g,)


@formula("prims::conj_physical", save=())
def _conj_physical(ctx, g):
    return (conj(g),)


@formula("prims::abs", save=(0,))
def _abs(ctx, g):
    return (g * C.sgn(ctx.args[0]),)


@formula("prims::sgn", save=(0,), save_out=True)
def _sgn(ctx, g):
    x = ctx.args[0]
    if not x.dtype.is_complex:
        return (C.zeros_like(g),)
    a = C.abs(x)
    s = ctx.out
    safe = C.where(a == 0, 1.0, a)
    return (C.where(a == 0, 0.0, (g - C.real(g * conj(s)) * s) / safe),)


@formula("prims::angle", save=(0,))
def _angle(ctx, g):
    x = ctx.args[0]
    if not x.dtype.is_complex:
        return (C.zeros_like(x),)
    a2 = C.real(x * conj(x))
    return (C.where(a2 == 0, 0.0, g * (1j * x) / C.where(a2 == 0, 1.0, a2)),)


@formula("prims::real", save=())
def _real(ctx, g):
    return (g,)


@formula("prims::imag", save=())
def _imag(ctx, g):
    return (C.complex(C.zeros_like(g), g),)


def _zero_unary(ctx, g):
    return (C.zeros_like(g),)


for _name in ("ceil", "floor", "round", "trunc", "sign", "round_decimals"):
    formula(f"prims::{_name}", save=())(_zero_unary)


@formula("prims::frac", save=())
def _frac(ctx, g):
    return (g,)


@formula("prims::logit", save=(0,))
def _logit(ctx, g):
    x, eps = ctx.args
    d = g / (x * (1 - x))
    if eps is None:
        return (C.where((x < 0) | (x > 1), math.nan, d),)
    return (C.where((x < eps) | (x > 1 - eps), 0.0, d),)


@formula("prims::nan_to_num", save=(0,))
def _nan_to_num(ctx, g):
    return (C.where(C.isfinite(ctx.args[0]), g, 0.0),)


@formula("prims::polygamma", save=(0,))
def _polygamma(ctx, g):
    x, n = ctx.args
    return (g * C.polygamma(n + 1, x),)


@formula("prims::mvlgamma", save=(0,))
def _mvlgamma(ctx, g):
    x, p = ctx.args
    total = C.digamma(x)
    for i in range(1, p):
        total = total + C.digamma(x - i / 2)
    return (g * total,)


# -- binary --------------------------------------------------------------------------------------


@formula("prims::add", save=())
def _add(ctx, g):
    return (g, g)


@formula("prims::sub", save=())
def _sub(ctx, g):
    return (g, -g)


def _cross(needs):
    """Save each operand only when the other one needs its gradient."""
    return tuple(i for i, j in ((0, 1), (1, 0)) if needs[j])


@formula("prims::mul", save=_cross)
def _mul(ctx, g):
    a, b = ctx.args
    need = ctx.needs_input_grad
    return (g * conj(b) if need[0] else None, g * conj(a) if need[1] else None)


@formula("prims::div", save=lambda needs: (0, 1) if needs[1] else (1,))
def _div(ctx, g):
    a, b = ctx.args
    need = ctx.needs_input_grad
    ga = g / conj(b) if need[0] else None
    gb = -g * conj(a / (b * b)) if need[1] else None
    return (ga, gb)


@formula("prims::pow", save_out=True)
def _pow(ctx, g):
    a, b = ctx.args
    y = ctx.out
    need = ctx.needs_input_grad
    ga = gb = None
    if need[0]:
        d = b * C.pow(a, b - 1)
        ga = C.where((b == 0) & (a == 0) if not b.dtype.is_complex else b == 0, 0.0, g * conj(d))
    if need[1]:
        mask = a == 0
        if not a.dtype.is_complex:
            mask = mask & (b >= 0)
        gb = C.where(mask, 0.0, g * conj(y * C.log(C.where(mask, 1.0, a))))
    return (ga, gb)


@formula("prims::atan2")
def _atan2(ctx, g):
    a, b = ctx.args
    r = a * a + b * b
    return (g * b / r, -g * a / r)


@formula("prims::hypot", save_out=True)
def _hypot(ctx, g):
    a, b = ctx.args
    y = ctx.out
    return (g * a / y, g * b / y)


def _minmax(ctx, g, greater: bool):
    a, b = ctx.args
    win = a > b if greater else a < b
    tie = a == b
    half = g / 2
    return (C.where(win, g, C.where(tie, half, 0.0)), C.where(win, 0.0, C.where(tie, half, g)))


formula("prims::maximum")(lambda ctx, g: _minmax(ctx, g, True))
formula("prims::minimum")(lambda ctx, g: _minmax(ctx, g, False))


def _fminmax(ctx, g, greater: bool):
    a, b = ctx.args
    pick_a = ((a >= b) if greater else (a <= b)) | C.isnan(b)
    return (C.where(pick_a, g, 0.0), C.where(pick_a, 0.0, g))


formula("prims::fmax")(lambda ctx, g: _fminmax(ctx, g, True))
formula("prims::fmin")(lambda ctx, g: _fminmax(ctx, g, False))


@formula("prims::copysign", save=(0,), save_out=True)
def _copysign(ctx, g):
    a = ctx.args[0]
    y = ctx.out
    return (C.where(a == 0, 0.0, g * y / C.where(a == 0, 1.0, a)), None)


@formula("prims::fmod")
def _fmod(ctx, g):
    a, b = ctx.args
    return (g, -g * C.trunc(a / b))


@formula("prims::remainder")
def _remainder(ctx, g):
    a, b = ctx.args
    return (g, -g * C.floor(a / b))


@formula("prims::logaddexp")
def _logaddexp(ctx, g):
    a, b = ctx.args
    return (g * C.sigmoid(a - b), g * C.sigmoid(b - a))


@formula("prims::logaddexp2")
def _logaddexp2(ctx, g):
    a, b = ctx.args
    return (g * C.sigmoid((a - b) * math.log(2.0)), g * C.sigmoid((b - a) * math.log(2.0)))


@formula("prims::xlogy")
def _xlogy(ctx, g):
    a, b = ctx.args
    ga = C.where((a == 0) & (b <= 0), 0.0, C.xlogy(g, b))
    gb = C.where(a == 0, 0.0, g * a / b)
    return (ga, gb)


@formula("prims::xlog1py")
def _xlog1py(ctx, g):
    a, b = ctx.args
    ga = C.where((a == 0) & (b <= -1), 0.0, C.special_xlog1py(g, b))
    gb = C.where(a == 0, 0.0, g * a / (b + 1))
    return (ga, gb)


@formula("prims::igamma")
def _igamma(ctx, g):
    a, x = ctx.args
    if ctx.needs_input_grad[0]:
        raise NotImplementedError("the derivative for 'igamma' with respect to 'self' is not implemented.")
    return (None, g * C.exp((a - 1) * C.log(x) - x - C.lgamma(a)))


@formula("prims::igammac")
def _igammac(ctx, g):
    a, x = ctx.args
    if ctx.needs_input_grad[0]:
        raise NotImplementedError("the derivative for 'igammac' with respect to 'self' is not implemented.")
    return (None, -g * C.exp((a - 1) * C.log(x) - x - C.lgamma(a)))


@formula("prims::zeta")
def _zeta(ctx, g):
    x, q = ctx.args
    if ctx.needs_input_grad[0]:
        raise NotImplementedError("the derivative for 'zeta' with respect to 'self' is not implemented.")
    return (None, -g * x * C.special_zeta(x + 1, q))


@formula("prims::complex", save=())
def _complex(ctx, g):
    return (C.real(g), C.imag(g))


@formula("prims::polar", save_out=True)
def _polar(ctx, g):
    r, theta = ctx.args
    y = ctx.out
    e = C.polar(C.ones_like(r), theta)
    return (C.real(g * conj(e)), C.real(g * conj(1j * y)))


for _name in ("heaviside", "floor_divide"):  # piecewise constant: 0 almost everywhere (PyTorch: not implemented)
    formula(f"prims::{_name}", save=())(lambda ctx, g: (C.zeros_like(g), C.zeros_like(g)))


@formula("prims::nextafter")
def _nextafter(ctx, g):
    """PyTorch's rule: one ulp from ``self`` is the identity to first order, except where it equals ``other``."""
    a, b = ctx.args
    return (C.where(a != b, g, 0.0), C.zeros_like(g))


@formula("frexp.Tensor", save=(), save_out=True, nondifferentiable=(1,))
def _frexp(ctx, grads):
    """mantissa = self / 2^exponent, the exponent constant between powers of two (PyTorch's rule)."""
    g = grads[0] if isinstance(grads, (list, tuple)) else grads
    exponent = ctx.outputs[1]
    return (g / C.exp2(exponent.to(g.dtype)),)


# -- ternary -------------------------------------------------------------------------------------


@formula("prims::where", save=(0,))
def _where(ctx, g):
    pred = ctx.args[0]
    return (None, C.where(pred, g, 0.0), C.where(pred, 0.0, g))


@formula("prims::clamp")
def _clamp(ctx, g):
    a, lo, hi = ctx.args
    inside = (a >= lo) & (a <= hi)
    return (C.where(inside, g, 0.0), C.where(a < lo, g, 0.0), C.where((a > hi) & (a >= lo), g, 0.0))


@formula("prims::lerp")
def _lerp(ctx, g):
    start, end, w = ctx.args
    return (g * conj(1 - w), g * conj(w), g * conj(end - start))


for _name in ("clone", "copy_strided", "device_put"):
    formula(f"prims::{_name}", save=())(lambda ctx, g: (g,))


@formula("prims::convert_element_type", save=())
def _convert(ctx, g):
    return (g,)


NONDIFFERENTIABLE.update(
    f"prims::{n}"
    for n in (
        "bernoulli",
        "view_of_dtype",
        "gcd",
        "lcm",
        "bitwise_and",
        "bitwise_or",
        "bitwise_xor",
        "bitwise_not",
        "shift_left",
        "shift_right_arithmetic",
        "chebyshev_polynomial_t",
        "chebyshev_polynomial_u",
        "chebyshev_polynomial_v",
        "chebyshev_polynomial_w",
        "shifted_chebyshev_polynomial_t",
        "shifted_chebyshev_polynomial_u",
        "shifted_chebyshev_polynomial_v",
        "shifted_chebyshev_polynomial_w",
        "hermite_polynomial_h",
        "hermite_polynomial_he",
        "laguerre_polynomial_l",
        "legendre_polynomial_p",
        "airy_ai",  # PyTorch's derivatives.yaml: ``x: non_differentiable``
        "histc",
        "bincount",
        "searchsorted",
        "fill",
        "full",
        "scalar_tensor",
    )
)
