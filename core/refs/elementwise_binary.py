"""Binary elementwise math: atan2, hypot, extrema, copysign, log-sum-exp pairs, xlogy, gcd/lcm, special functions.

Table-driven over the binary prims; each op states PyTorch's promotion kind and
the computation dtypes it supports (others raise TypeError naming the op).
Scalar overloads wrap the number and call the Tensor overload.
"""

from __future__ import annotations

from .._ops import canonical as ops
from .._ops import prims
from ._elementwise import FLOAT, INT, REAL, P, apply_prim, bool_, make, prim, redirect
from ._utils import elementwise_dtypes, prepare
from .elementwise import binary_fn, define_binary

# name -> (prim, promotion, allowed, in-place?, core?, doc)
BINARY = {
    "atan2": (
        "atan2",
        P.INT_TO_FLOAT,
        FLOAT,
        True,
        True,
        "Arc tangent of ``self / other`` using both signs (quadrant).",
    ),
    "hypot": ("hypot", P.DEFAULT, FLOAT, True, False, "``sqrt(self**2 + other**2)`` without undue overflow."),
    "nextafter": (
        "nextafter",
        P.NO_OPMATH,
        FLOAT,
        True,
        False,
        "The next representable value after ``self`` toward ``other``.",
    ),
    "logaddexp": ("logaddexp", P.DEFAULT, FLOAT, False, False, "``log(exp(self) + exp(other))`` computed stably."),
    "logaddexp2": ("logaddexp2", P.DEFAULT, FLOAT, False, False, "``log2(2**self + 2**other)`` computed stably."),
    "gcd": ("gcd", P.DEFAULT, INT, True, False, "Greatest common divisor (non-negative; gcd(0, 0) = 0)."),
    "lcm": ("lcm", P.DEFAULT, INT, True, False, "Least common multiple (non-negative)."),
    "igamma": ("igamma", P.DEFAULT, FLOAT, True, False, "Regularised lower incomplete gamma function P(self, other)."),
    "igammac": (
        "igammac",
        P.DEFAULT,
        FLOAT,
        True,
        False,
        "Regularised upper incomplete gamma function Q(self, other).",
    ),
}

# ops with Scalar overloads: name -> (prim, promotion, allowed, scalars, in-place?, doc)
WITH_SCALARS = {
    "copysign": (
        "copysign",
        P.INT_TO_FLOAT,
        FLOAT,
        {"Scalar": "other"},
        True,
        "The magnitude of ``self`` with the sign of ``other`` (sign bit, so -0.0 counts as negative).",
    ),
    "xlogy": (
        "xlogy",
        P.INT_TO_FLOAT,
        FLOAT,
        {"Scalar_Self": "self", "Scalar_Other": "other"},
        True,
        "``self * log(other)``, 0 where ``self`` is 0 (unless ``other`` is nan).",
    ),
}

# torch.special binary functions: name -> (prim, promotion, doc); overloads .self_scalar/.other_scalar, out= only
SPECIAL_BINARY = {
    "special_zeta": ("zeta", P.INT_TO_FLOAT, "Hurwitz zeta function ``zeta(self, other)``."),
    "special_xlog1py": ("xlog1py", P.INT_TO_FLOAT, "``self * log1p(other)``, 0 where ``self`` is 0 (unless nan)."),
}

POLYNOMIALS = {
    "chebyshev_polynomial_t": "Chebyshev polynomial of the first kind T_n(x).",
    "chebyshev_polynomial_u": "Chebyshev polynomial of the second kind U_n(x).",
    "chebyshev_polynomial_v": "Chebyshev polynomial of the third kind V_n(x).",
    "chebyshev_polynomial_w": "Chebyshev polynomial of the fourth kind W_n(x).",
    "shifted_chebyshev_polynomial_t": "Shifted Chebyshev polynomial of the first kind T*_n(x) = T_n(2x - 1).",
    "shifted_chebyshev_polynomial_u": "Shifted Chebyshev polynomial of the second kind U*_n(x).",
    "shifted_chebyshev_polynomial_v": "Shifted Chebyshev polynomial of the third kind V*_n(x).",
    "shifted_chebyshev_polynomial_w": "Shifted Chebyshev polynomial of the fourth kind W*_n(x).",
    "hermite_polynomial_h": "Physicists' Hermite polynomial H_n(x).",
    "hermite_polynomial_he": "Probabilists' Hermite polynomial He_n(x).",
    "laguerre_polynomial_l": "Laguerre polynomial L_n(x).",
    "legendre_polynomial_p": "Legendre polynomial P_n(x).",
}


def _extremum(name, bool_prim, doc):
    """maximum/minimum/fmax/fmin: real dtypes; for bool, logical or/and."""

    def decomposition(self, other):
        compute, result = elementwise_dtypes(self, other, kind=P.DEFAULT)
        if compute is bool_:
            return prim(bool_prim)(*prepare(name, (self, other), compute))
        return apply_prim(name, name, (self, other), P.DEFAULT, REAL)

    return make(name, decomposition, doc)


EXTREMA = {
    "maximum": ("logical_or", True, "Elementwise maximum; nan if either is nan."),
    "minimum": ("logical_and", True, "Elementwise minimum; nan if either is nan."),
    "fmax": ("logical_or", False, "Elementwise maximum ignoring nan (nan only if both are nan)."),
    "fmin": ("logical_and", False, "Elementwise minimum ignoring nan (nan only if both are nan)."),
}


def heaviside(self, values):
    """Heaviside step: 0 where ``self < 0``, ``values`` where ``self == 0``, 1 where ``self > 0``.

    ``self`` and ``values`` must have the same dtype (as in PyTorch).
    """
    if self.dtype is not values.dtype:
        raise TypeError(
            f"heaviside: 'self' and 'values' must have the same dtype, got {self.dtype.name} and {values.dtype.name}"
        )
    if self.dtype is bool_:
        return prim("logical_or")(*prepare("heaviside", (self, values), bool_))
    return apply_prim("heaviside", "heaviside", (self, values), P.DEFAULT, REAL)


def ldexp(self, other):
    """``self * 2 ** other`` (computed as ``mul(self, pow(2.0, other))``, as PyTorch does)."""
    return ops.mul.Tensor(self, ops.pow.Scalar(2.0, other))


def _complex_logaddexp(real_fn):
    """``logaddexp`` that also takes complex operands: ``m + log(1 + exp(o - m))``, ``m`` the larger real part."""

    def logaddexp(self, other):
        compute, result = elementwise_dtypes(self, other, kind=P.DEFAULT)
        if not compute.is_complex:
            return real_fn(self, other)
        a, b = prepare("logaddexp", (self, other), compute)
        first = prims.ge(prims.real(a), prims.real(b))
        big, small = prims.where(first, a, b), prims.where(first, b, a)
        out = prims.add(big, prims.log1p(prims.exp(prims.sub(small, big))))
        return out if out.dtype is result else prims.convert_element_type(out, result)

    logaddexp.__doc__ = real_fn.__doc__ + " Complex operands are shifted by the one with the larger real part."
    return logaddexp


def _define_binary():
    for name, (prim_name, kind, allowed, inplace, core, doc) in BINARY.items():
        fn = binary_fn(name, prim_name, kind, allowed, doc)
        if name == "logaddexp":
            fn = _complex_logaddexp(fn)
        define_binary(name, fn, overload="", inplace=inplace, core=core)
    redirect("arctan2(Tensor self, Tensor other) -> Tensor", "atan2")
    for name, (bool_prim, core, doc) in EXTREMA.items():
        define_binary(name, _extremum(name, bool_prim, doc), overload="", inplace=False, core=core)
    for name, (prim_name, kind, allowed, scalars, inplace, doc) in WITH_SCALARS.items():
        define_binary(name, binary_fn(name, prim_name, kind, allowed, doc), scalars=scalars, inplace=inplace)
    define_binary("heaviside", heaviside, overload="", names=("self", "values"))
    define_binary("ldexp", ldexp)


def _define_special():
    scalars = {"self_scalar": "self", "other_scalar": "other"}
    for name, (prim_name, kind, doc) in SPECIAL_BINARY.items():
        fn = binary_fn(name, prim_name, kind, FLOAT, doc)
        define_binary(name, fn, overload="", scalars=scalars, inplace=False)
    redirect("special_xlogy(Tensor self, Tensor other) -> Tensor", "xlogy.Tensor", inplace=False)
    redirect("special_xlogy.self_scalar(Scalar self, Tensor other) -> Tensor", "xlogy.Scalar_Self", inplace=False)
    redirect("special_xlogy.other_scalar(Tensor self, Scalar other) -> Tensor", "xlogy.Scalar_Other", inplace=False)
    redirect("special_gammainc(Tensor self, Tensor other) -> Tensor", "igamma", inplace=False)
    redirect("special_gammaincc(Tensor self, Tensor other) -> Tensor", "igammac", inplace=False)
    for name, doc in POLYNOMIALS.items():
        fn = binary_fn(f"special_{name}", name, P.INT_TO_FLOAT, FLOAT, doc + " ``n`` is truncated to an integer.")
        scalars = {"x_scalar": "x", "n_scalar": "n"}
        define_binary(f"special_{name}", fn, overload="", names=("x", "n"), scalars=scalars, inplace=False)


_define_binary()
_define_special()
