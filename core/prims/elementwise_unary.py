"""Unary elementwise prims: ``name(Tensor self) -> Tensor`` and a few parameterised ones.

All are tagged ``pointwise``; semantics follow PyTorch. The output has the
input's shape and dtype (unless the table says otherwise) and dense strides in
the input's dimension order. Validation is :func:`elementwise_meta`: a
dtype outside the prim's group raises TypeError.
"""

from __future__ import annotations

import numbers

from .. import _dtype
from .._ops import define_prim
from ._special_values import describe
from ._utils import (
    ALL,
    BOOL,
    COMPLEX,
    FLOAT,
    FLOATING,
    INTEGRAL,
    NUMERIC,
    REAL,
    Out,
    elementwise_meta,
)

_D, _B, _C2F = Out.DEFAULT, Out.ALWAYS_BOOL, Out.COMPLEX_TO_FLOAT

# name -> (accepted dtypes, output dtype rule, documentation)
UNARY = {
    # Trigonometric, hyperbolic, exponential and logarithmic functions: float and complex.
    "acos": (FLOATING, _D, "Inverse cosine."),
    "acosh": (FLOATING, _D, "Inverse hyperbolic cosine."),
    "asin": (FLOATING, _D, "Inverse sine."),
    "asinh": (FLOATING, _D, "Inverse hyperbolic sine."),
    "atan": (FLOATING, _D, "Inverse tangent."),
    "atanh": (FLOATING, _D, "Inverse hyperbolic tangent."),
    "cos": (FLOATING, _D, "Cosine."),
    "cosh": (FLOATING, _D, "Hyperbolic cosine."),
    "sin": (FLOATING, _D, "Sine."),
    "sinh": (FLOATING, _D, "Hyperbolic sine."),
    "tan": (FLOATING, _D, "Tangent."),
    "tanh": (FLOATING, _D, "Hyperbolic tangent."),
    "exp": (FLOATING, _D, "Exponential ``e**x``."),
    "exp2": (FLOATING, _D, "``2**x``."),
    "expm1": (FLOATING, _D, "``exp(x) - 1``, accurate near 0."),
    "log": (FLOATING, _D, "Natural logarithm."),
    "log1p": (FLOATING, _D, "``log(1 + x)``, accurate near 0."),
    "log2": (FLOATING, _D, "Base-2 logarithm."),
    "log10": (FLOATING, _D, "Base-10 logarithm."),
    "sqrt": (FLOATING, _D, "Square root."),
    "rsqrt": (FLOATING, _D, "``1 / sqrt(x)``."),
    "reciprocal": (FLOATING, _D, "``1 / x``."),
    "sigmoid": (FLOATING, _D, "Logistic function ``1 / (1 + exp(-x))``."),
    "sinc": (FLOATING, _D, "Normalised sinc ``sin(pi x) / (pi x)``; 1 at 0."),
    # Special functions: real floating dtypes only.
    "cbrt": (FLOAT, _D, "Cube root."),
    "erf": (FLOAT, _D, "Error function."),
    "erfc": (FLOAT, _D, "Complementary error function ``1 - erf(x)``."),
    "erfcx": (FLOAT, _D, "Scaled complementary error function ``exp(x**2) * erfc(x)``."),
    "erf_inv": (FLOAT, _D, "Inverse error function."),
    "lgamma": (FLOAT, _D, "``log(|gamma(x)|)``."),
    "digamma": (FLOAT, _D, "Digamma ``psi(x)``: -inf at +0, +inf at -0, nan at negative integers."),
    "ndtri": (FLOAT, _D, "Inverse of the standard normal CDF."),
    "ndtr": (FLOAT, _D, "Standard normal CDF."),
    "log_ndtr": (FLOAT, _D, "Logarithm of the standard normal CDF."),
    "bessel_i0": (FLOAT, _D, "Modified Bessel function of the first kind, order 0 (nan at +-inf, as in PyTorch)."),
    "bessel_i0e": (FLOAT, _D, "Exponentially scaled ``exp(-|x|) * i0(x)``."),
    "bessel_i1": (FLOAT, _D, "Modified Bessel function of the first kind, order 1 (nan at +-inf, as in PyTorch)."),
    "bessel_i1e": (FLOAT, _D, "Exponentially scaled ``exp(-|x|) * i1(x)``."),
    "bessel_j0": (FLOAT, _D, "Bessel function of the first kind, order 0 (nan at +-inf, as in PyTorch)."),
    "bessel_j1": (FLOAT, _D, "Bessel function of the first kind, order 1 (nan at +-inf, as in PyTorch)."),
    "bessel_y0": (FLOAT, _D, "Bessel function of the second kind, order 0 (-inf at 0; nan below 0 and at +inf)."),
    "bessel_y1": (FLOAT, _D, "Bessel function of the second kind, order 1 (-inf at 0; nan below 0 and at +inf)."),
    "modified_bessel_k0": (FLOAT, _D, "Modified Bessel function of the second kind, order 0."),
    "modified_bessel_k1": (FLOAT, _D, "Modified Bessel function of the second kind, order 1."),
    "scaled_modified_bessel_k0": (FLOAT, _D, "Exponentially scaled ``exp(x) * k0(x)``."),
    "scaled_modified_bessel_k1": (FLOAT, _D, "Exponentially scaled ``exp(x) * k1(x)``."),
    "spherical_bessel_j0": (FLOAT, _D, "Spherical Bessel function of the first kind, order 0: ``sin(x) / x``."),
    "airy_ai": (FLOAT, _D, "Airy function ``Ai(x)`` (nan at +-inf, as in PyTorch)."),
    "entr": (FLOAT, _D, "Entropy ``-x log(x)``: 0 at 0, -inf for negative x."),
    "frac": (FLOAT, _D, "Fractional part ``x - trunc(x)`` (keeps the sign of ``x``)."),
    # Rounding: the identity on integers.
    "ceil": (REAL, _D, "Round up to an integer value (identity on integer dtypes)."),
    "floor": (REAL, _D, "Round down to an integer value (identity on integer dtypes)."),
    "round": (REAL, _D, "Round to the nearest integer value, halves to even (identity on integer dtypes)."),
    "trunc": (REAL, _D, "Round toward zero (identity on integer dtypes)."),
    # Sign and magnitude.
    "abs": (NUMERIC, _C2F, "Absolute value; the modulus of complex numbers (real output). Wraps for the minimum int."),
    "neg": (NUMERIC, _D, "Negation (wraps for integers)."),
    "sign": (REAL, _D, "Sign: -1, 0 or 1 (nan stays nan)."),
    "sgn": (NUMERIC, _D, "Sign; ``z / |z|`` for complex numbers, 0 at 0."),
    "signbit": (REAL, _B, "Whether the sign bit is set (true for -0.0)."),
    # Bits and logic.
    "bitwise_not": (INTEGRAL, _D, "Bitwise not; logical not for bool."),
    "logical_not": (ALL, _B, "``x == 0``."),
    # Classification.
    "isfinite": (ALL, _B, "Whether the value is finite (always true for integers; both parts for complex)."),
    "isinf": (ALL, _B, "Whether the value is infinite (either part for complex)."),
    "isnan": (ALL, _B, "Whether the value is nan (either part for complex)."),
    "isposinf": (REAL | BOOL, _B, "Whether the value is +inf (complex rejected, as in PyTorch)."),
    "isneginf": (REAL | BOOL, _B, "Whether the value is -inf (complex rejected, as in PyTorch)."),
    # Complex parts.
    "real": (COMPLEX, _C2F, "Real part of a complex tensor (a copy)."),
    "imag": (COMPLEX, _C2F, "Imaginary part of a complex tensor (a copy)."),
    "angle": (FLOATING, _C2F, "Argument of a complex number; for reals 0 or pi (pi for x < 0, nan stays nan)."),
    "conj_physical": (NUMERIC, _D, "Complex conjugate, materialised (a copy for real dtypes)."),
}


def _unary_meta(name, allowed, out, doc):
    op = f"prims::{name}"

    def meta(self):
        return elementwise_meta(op, ("self",), (self,), allowed, out)

    meta.__name__ = meta.__qualname__ = f"{name}_meta"
    meta.__doc__ = doc + describe(name)
    return meta


def round_decimals_meta(self, decimals):
    """Round to ``decimals`` decimal places like ``torch.round(x, decimals=d)``.

    ``nearbyint(x * 10**d) / 10**d`` (halves to even) for ``d >= 0`` and
    ``nearbyint(x / 10**-d) * 10**-d`` for negative ``d``, computed in float32
    for float16/bfloat16.
    """
    return elementwise_meta("prims::round_decimals", ("self",), (self,), FLOAT)


def nan_to_num_meta(self, nan, posinf, neginf):
    """Replace nan, +inf and -inf by ``nan`` (default 0), ``posinf`` and ``neginf``.

    ``None`` for ``posinf``/``neginf`` means the dtype's largest/lowest finite
    value. Complex tensors are processed per real and imaginary part.
    """
    return elementwise_meta("prims::nan_to_num", ("self",), (self,), FLOATING)


def polygamma_meta(self, n):
    """The ``n``-th derivative of the digamma function (``n >= 0``; ``n = 0`` is digamma)."""
    op = "prims::polygamma"
    out = elementwise_meta(op, ("self",), (self,), FLOAT)
    if n < 0:
        raise ValueError(f"{op}: argument 'n' must be non-negative, got {n}")
    return out


def mvlgamma_meta(self, p):
    """Multivariate log-gamma of dimension ``p >= 1``.

    ``sum(lgamma(x - j/2) for j < p) + p (p-1)/4 log(pi)``. Every element must
    be greater than ``(p-1)/2``: the CPU kernel raises ValueError otherwise
    (also for nan), as PyTorch does.
    """
    op = "prims::mvlgamma"
    out = elementwise_meta(op, ("self",), (self,), FLOAT)
    if p < 1:
        raise ValueError(f"{op}: argument 'p' must be at least 1, got {p}")
    return out


def fill_meta(self, value):
    """A tensor like ``self`` filled with ``value`` (converted to ``self``'s dtype).

    Complex values for non-complex dtypes raise TypeError; values the dtype
    cannot hold (integer overflow, nan/inf for integers, finite values beyond a
    float dtype's range) raise ValueError, as PyTorch's checked conversion does.
    Floats converted to integers are truncated toward zero.
    """
    op = "prims::fill"
    out = elementwise_meta(op, ("self",), (self,), ALL)
    _check_fill_value(op, value, self.dtype)
    return out


def _check_fill_value(op, value, dtype):
    if isinstance(value, bool) or dtype is _dtype.bool_:
        return
    if isinstance(value, complex):
        if not dtype.is_complex:
            raise TypeError(f"{op}: argument 'value' is complex but the tensor is {dtype.name}")
        parts = (value.real, value.imag)
    elif isinstance(value, numbers.Real):
        parts = (value,)
    else:
        raise TypeError(f"{op}: argument 'value' must be a number, not {type(value).__name__}")
    for part in parts:
        if not _fits(part, dtype):
            raise ValueError(f"{op}: argument 'value' {value} cannot be converted to {dtype.name} without overflow")


def _fits(value, dtype) -> bool:
    """Whether a real number converts to ``dtype`` without overflow (nan/inf fit only floating dtypes)."""
    finite = value == value and value not in (float("inf"), float("-inf"))
    if dtype.kind in ("int", "uint"):
        info = _dtype.iinfo(dtype)
        return finite and info.min <= int(value) <= info.max
    return not finite or abs(value) <= float(_dtype.finfo(dtype.to_real()).max)


def logit_meta(self, eps):
    """``log(x / (1 - x))``; with ``eps`` (not None and >= 0), ``x`` is first clamped to ``[eps, 1 - eps]``."""
    return elementwise_meta("prims::logit", ("self",), (self,), FLOAT)


PARAMETERISED = (
    ("round_decimals(Tensor self, int decimals) -> Tensor", round_decimals_meta),
    ("nan_to_num(Tensor self, float? nan=None, float? posinf=None, float? neginf=None) -> Tensor", nan_to_num_meta),
    ("polygamma(Tensor self, int n) -> Tensor", polygamma_meta),
    ("mvlgamma(Tensor self, int p) -> Tensor", mvlgamma_meta),
    ("fill(Tensor self, Scalar value) -> Tensor", fill_meta),
    ("logit(Tensor self, float? eps=None) -> Tensor", logit_meta),
)


def _define():
    for name, (allowed, out, doc) in UNARY.items():
        define_prim(f"{name}(Tensor self) -> Tensor", _unary_meta(name, allowed, out, doc), tags=("pointwise",))
    for schema, meta in PARAMETERISED:
        define_prim(schema, meta, tags=("pointwise",))


_define()
