"""Binary elementwise prims: ``name(Tensor self, Tensor other) -> Tensor``, plus ``complex`` and ``polar``.

Strict, like every prim: both inputs have the same dtype and the same shape
(0-dim CPU tensors excepted) on one device; no broadcasting, no promotion.
Semantics follow PyTorch. Integer division by zero (``div``, ``remainder``,
``fmod``, ``floor_divide``) and integer ``pow`` with a negative exponent raise
RuntimeError in the backend kernel, since they depend on the data.
"""

from __future__ import annotations

from .. import _dtype
from .._meta import empty as meta_empty
from .._ops import define_prim
from ._special_values import describe
from ._utils import ALL, BOOL, FLOAT, INT, INTEGRAL, NUMERIC, REAL, Out, elementwise_meta

_D, _B = Out.DEFAULT, Out.ALWAYS_BOOL

# name -> (accepted dtypes, output dtype rule, documentation)
BINARY = {
    "add": (NUMERIC, _D, "``self + other`` (integers wrap)."),
    "sub": (NUMERIC, _D, "``self - other`` (integers wrap)."),
    "mul": (NUMERIC, _D, "``self * other`` (integers wrap)."),
    "div": (
        NUMERIC,
        _D,
        "``self / other``: true division for floating dtypes, truncation toward zero for integers "
        "(RuntimeError on integer division by zero).",
    ),
    "pow": (
        NUMERIC,
        _D,
        "``self ** other``. Integers: ``0 ** 0 == 1``, wraps on overflow, a negative exponent raises "
        "RuntimeError. Floats: IEEE ``pow`` (``pow(-8, 1/3)`` is nan).",
    ),
    "maximum": (REAL, _D, "Elementwise maximum; nan if either input is nan."),
    "minimum": (REAL, _D, "Elementwise minimum; nan if either input is nan."),
    "fmax": (REAL, _D, "Elementwise maximum ignoring nan (nan only if both are nan)."),
    "fmin": (REAL, _D, "Elementwise minimum ignoring nan (nan only if both are nan)."),
    "remainder": (REAL, _D, "Python-style modulus: the result has the sign of ``other``."),
    "fmod": (REAL, _D, "C-style modulus: the result has the sign of ``self``."),
    "floor_divide": (REAL, _D, "Floor of the quotient (PyTorch's ``div_floor``: IEEE result when dividing by 0)."),
    "heaviside": (REAL, _D, "Heaviside step: ``other`` where ``self == 0``, else ``self > 0`` (0 for nan)."),
    "atan2": (FLOAT, _D, "Two-argument arctangent of ``self / other``, in the correct quadrant."),
    "hypot": (FLOAT, _D, "``sqrt(self**2 + other**2)`` without undue overflow."),
    "copysign": (FLOAT, _D, "Magnitude of ``self`` with the sign of ``other``."),
    "nextafter": (FLOAT, _D, "The next representable value after ``self`` toward ``other``."),
    "logaddexp": (FLOAT, _D, "``log(exp(self) + exp(other))``."),
    "logaddexp2": (FLOAT, _D, "``log2(2**self + 2**other)``."),
    "xlogy": (FLOAT, _D, "``self * log(other)``; 0 where ``self == 0`` unless ``other`` is nan."),
    "xlog1py": (FLOAT, _D, "``self * log1p(other)``; 0 where ``self == 0`` unless ``other`` is nan."),
    "zeta": (FLOAT, _D, "Hurwitz zeta function ``zeta(self, other) = sum((k + other) ** -self)``."),
    "igamma": (FLOAT, _D, "Regularised lower incomplete gamma ``P(self, other)``."),
    "igammac": (FLOAT, _D, "Regularised upper incomplete gamma ``Q(self, other) = 1 - P(self, other)``."),
    "gcd": (INT, _D, "Greatest common divisor (non-negative; ``gcd(0, 0) == 0``)."),
    "lcm": (INT, _D, "Least common multiple (non-negative; 0 if either is 0)."),
    "bitwise_and": (INTEGRAL, _D, "Bitwise and (logical and for bool)."),
    "bitwise_or": (INTEGRAL, _D, "Bitwise or (logical or for bool)."),
    "bitwise_xor": (INTEGRAL, _D, "Bitwise xor (logical xor for bool)."),
    "shift_left": (
        INT,
        _D,
        "``self << other`` (bits shifted out are lost). A shift by a negative amount or by at least the bit "
        "width gives 0, as PyTorch's CPU kernel does.",
    ),
    "shift_right_arithmetic": (
        INT,
        _D,
        "``self >> other``, sign-extending. A shift by a negative amount or by at least the bit width gives "
        "0 or -1 (by the sign of ``self``), as PyTorch's CPU kernel does.",
    ),
    "logical_and": (ALL, _B, "``(self != 0) and (other != 0)``."),
    "logical_or": (ALL, _B, "``(self != 0) or (other != 0)``."),
    "logical_xor": (ALL, _B, "``(self != 0) != (other != 0)``."),
    "eq": (ALL, _B, "``self == other`` (false for nan)."),
    "ne": (ALL, _B, "``self != other`` (true for nan)."),
    "lt": (REAL | BOOL, _B, "``self < other`` (complex rejected)."),
    "le": (REAL | BOOL, _B, "``self <= other`` (complex rejected)."),
    "gt": (REAL | BOOL, _B, "``self > other`` (complex rejected)."),
    "ge": (REAL | BOOL, _B, "``self >= other`` (complex rejected)."),
}

# complex and polar: float32/float64 in, complex64/complex128 out (opweave has no complex32).
_TO_COMPLEX = frozenset({_dtype.float32, _dtype.float64})


def _binary_meta(name, allowed, out, doc):
    op = f"prims::{name}"

    def meta(self, other):
        return elementwise_meta(op, ("self", "other"), (self, other), allowed, out)

    meta.__name__ = meta.__qualname__ = f"{name}_meta"
    meta.__doc__ = doc + describe(name)
    return meta


def _to_complex_meta(op, names, tensors):
    model = elementwise_meta(op, names, tensors, _TO_COMPLEX)
    return meta_empty(model.shape, model.dtype.to_complex(), model.stride())


def complex_meta(real, imag):
    """The complex tensor ``real + 1j * imag`` (float32 -> complex64, float64 -> complex128)."""
    return _to_complex_meta("prims::complex", ("real", "imag"), (real, imag))


def polar_meta(abs, angle):
    """The complex tensor ``abs * cos(angle) + 1j * abs * sin(angle)`` (float32/float64 in)."""
    return _to_complex_meta("prims::polar", ("abs", "angle"), (abs, angle))


def _define():
    for name, (allowed, out, doc) in BINARY.items():
        meta = _binary_meta(name, allowed, out, doc)
        define_prim(f"{name}(Tensor self, Tensor other) -> Tensor", meta, tags=("pointwise",))
    define_prim("complex(Tensor real, Tensor imag) -> Tensor", complex_meta, tags=("pointwise",))
    define_prim("polar(Tensor abs, Tensor angle) -> Tensor", polar_meta, tags=("pointwise",))


_define()
