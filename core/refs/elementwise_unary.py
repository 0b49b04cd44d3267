"""Unary elementwise canonical ops: math functions, rounding, sign, classification, complex parts.

Floating functions (``sin``, ``erf``...) turn integer and bool inputs into the
default float dtype (INT_TO_FLOAT) and compute float16/bfloat16 in float32.
``torch.special`` functions are defined with their ``special_`` names (``out=``
variants only, as in ATen), most as aliases of the main-namespace ops.
"""

from __future__ import annotations

import math

from .._ops import canonical as ops
from .._ops import define, prims
from ._elementwise import (
    BOOL,
    FLOAT,
    FLOATING,
    NUMERIC,
    REAL,
    P,
    apply_prim,
    bool_,
    check_dtype,
    full_like,
    make,
    pointwise,
    prim,
    redirect,
    scalar_like,
)
from ._utils import elementwise_dtypes, to_dtype

# name -> (prim, doc); INT_TO_FLOAT, float and complex inputs.
FLOATING_FUNCTIONS = {
    "acos": ("acos", "Arc cosine."),
    "acosh": ("acosh", "Inverse hyperbolic cosine."),
    "asin": ("asin", "Arc sine."),
    "asinh": ("asinh", "Inverse hyperbolic sine."),
    "atan": ("atan", "Arc tangent."),
    "atanh": ("atanh", "Inverse hyperbolic tangent."),
    "cos": ("cos", "Cosine."),
    "cosh": ("cosh", "Hyperbolic cosine."),
    "sin": ("sin", "Sine."),
    "sinh": ("sinh", "Hyperbolic sine."),
    "tan": ("tan", "Tangent."),
    "tanh": ("tanh", "Hyperbolic tangent."),
    "exp": ("exp", "Exponential ``e ** self``."),
    "exp2": ("exp2", "Base-2 exponential ``2 ** self``."),
    "expm1": ("expm1", "``exp(self) - 1``, accurate near zero."),
    "log": ("log", "Natural logarithm."),
    "log1p": ("log1p", "``log(1 + self)``, accurate near zero."),
    "log2": ("log2", "Base-2 logarithm."),
    "log10": ("log10", "Base-10 logarithm."),
    "sqrt": ("sqrt", "Square root."),
    "rsqrt": ("rsqrt", "Reciprocal square root ``1 / sqrt(self)``."),
    "reciprocal": ("reciprocal", "``1 / self``."),
    "sigmoid": ("sigmoid", "Logistic sigmoid ``1 / (1 + exp(-self))``."),
    "sinc": ("sinc", "Normalised sinc ``sin(pi x) / (pi x)`` (1 at 0)."),
}
NOT_CORE = {"exp2", "sinc"}

# name -> (prim, doc); INT_TO_FLOAT, real floating inputs only.
REAL_FUNCTIONS = {
    "erf": ("erf", "Error function."),
    "erfc": ("erfc", "Complementary error function ``1 - erf(self)``."),
    "erfinv": ("erf_inv", "Inverse error function."),
    "lgamma": ("lgamma", "Natural logarithm of the absolute value of the gamma function."),
    "digamma": ("digamma", "Digamma function, the derivative of ``lgamma``."),
    "i0": ("bessel_i0", "Modified Bessel function of the first kind, order 0."),
}

# torch.special functions backed directly by a prim (INT_TO_FLOAT, real floating inputs; out= only).
SPECIAL_FUNCTIONS = {
    "special_erfcx": ("self", "erfcx", "Scaled complementary error function ``exp(x**2) * erfc(x)``."),
    "special_ndtr": ("self", "ndtr", "Standard normal cumulative distribution function."),
    "special_ndtri": ("self", "ndtri", "Inverse of the standard normal CDF (quantile function)."),
    "special_log_ndtr": ("self", "log_ndtr", "Logarithm of the standard normal CDF."),
    "special_i0e": ("self", "bessel_i0e", "Exponentially scaled modified Bessel function I0: ``exp(-|x|) * i0(x)``."),
    "special_i1": ("self", "bessel_i1", "Modified Bessel function of the first kind, order 1."),
    "special_i1e": ("self", "bessel_i1e", "Exponentially scaled modified Bessel function I1."),
    "special_bessel_j0": ("self", "bessel_j0", "Bessel function of the first kind, order 0."),
    "special_bessel_j1": ("self", "bessel_j1", "Bessel function of the first kind, order 1."),
    "special_bessel_y0": ("self", "bessel_y0", "Bessel function of the second kind, order 0."),
    "special_bessel_y1": ("self", "bessel_y1", "Bessel function of the second kind, order 1."),
    "special_modified_bessel_i0": ("self", "bessel_i0", "Modified Bessel function of the first kind, order 0."),
    "special_modified_bessel_i1": ("self", "bessel_i1", "Modified Bessel function of the first kind, order 1."),
    "special_modified_bessel_k0": ("self", "modified_bessel_k0", "Modified Bessel function K0."),
    "special_modified_bessel_k1": ("self", "modified_bessel_k1", "Modified Bessel function K1."),
    "special_scaled_modified_bessel_k0": ("x", "scaled_modified_bessel_k0", "``exp(x) * K0(x)``."),
    "special_scaled_modified_bessel_k1": ("x", "scaled_modified_bessel_k1", "``exp(x) * K1(x)``."),
    "special_spherical_bessel_j0": ("x", "spherical_bessel_j0", "Spherical Bessel function j0."),
    "special_airy_ai": ("x", "airy_ai", "Airy function Ai."),
    "special_entr": ("self", "entr", "Elementwise entropy ``-x * log(x)`` (0 at 0, -inf for negative x)."),
}

# alias -> target overload (main namespace: in-place and out=; torch.special: out= only)
ALIASES = {
    "absolute": "abs",
    "negative": "neg",
    "arccos": "acos",
    "arccosh": "acosh",
    "arcsin": "asin",
    "arcsinh": "asinh",
    "arctan": "atan",
    "arctanh": "atanh",
    "fix": "trunc",
}
SPECIAL_ALIASES = {
    "special_expit": "sigmoid",
    "special_exp2": "exp2",
    "special_expm1": "expm1",
    "special_log1p": "log1p",
    "special_erf": "erf",
    "special_erfc": "erfc",
    "special_erfinv": "erfinv",
    "special_gammaln": "lgamma",
    "special_digamma": "digamma",
    "special_psi": "digamma",
    "special_i0": "i0",
    "special_sinc": "sinc",
}


def unary_fn(name, prim_name, allowed, doc, kind=P.INT_TO_FLOAT):
    """A decomposition applying ``prims.<prim_name>`` with promotion ``kind``, restricted to ``allowed``."""
    return make(name, lambda self: apply_prim(name, prim_name, (self,), kind, allowed), doc)


# -- rounding -----------------------------------------------------------------


def _rounding(name, doc):
    def decomposition(self):
        if self.dtype is bool_:
            return prims.clone(self)
        return apply_prim(name, name, (self,), P.DEFAULT, REAL)

    return make(name, decomposition, doc + " Integer and bool tensors are returned unchanged (copied).")


def round_decimals(self, decimals):
    """Round to ``decimals`` decimal places (halves to even); negative ``decimals`` round to tens, hundreds..."""
    if decimals == 0:
        return ops.round.default(self)
    check_dtype("round", self.dtype, FLOAT)
    return apply_prim("round", "round_decimals", (self,), P.DEFAULT, FLOAT, extra=(decimals,))


def frac(self):
    """Fractional part ``self - trunc(self)`` (sign of ``self``)."""
    return apply_prim("frac", "frac", (self,), P.DEFAULT, FLOAT)


# -- sign and magnitude ---------------------------------------------------------


def abs_(self):
    """Absolute value; complex inputs give their (real) magnitude."""
    if self.dtype is bool_:
        return prims.clone(self)
    return apply_prim("abs", "abs", (self,), P.COMPLEX_TO_FLOAT, NUMERIC)


def neg(self):
    """``-self``; bool tensors are refused (use ``logical_not``)."""
    if self.dtype is bool_:
        raise TypeError("neg: negation, the `-` operator, on a bool tensor is not supported; use `~` or logical_not")
    return apply_prim("neg", "neg", (self,), P.DEFAULT, NUMERIC)


def sign(self):
    """-1, 0 or 1 by the sign of ``self``; NaN gives 0, as in PyTorch (``prims.sign`` keeps NumPy's NaN).

    Complex inputs are refused (use ``sgn``).
    """
    if self.dtype.is_complex:
        raise TypeError("sign: complex tensors are not supported; use sgn, which computes z / |z|")
    if self.dtype is bool_:
        return prims.clone(self)
    out = apply_prim("sign", "sign", (self,), P.DEFAULT, REAL)
    if not out.dtype.is_floating_point:
        return out
    return prims.where(prims.isnan(out), scalar_like(0, out), out)


def sgn(self):
    """``sign`` extended to complex numbers: ``z / |z|`` (0 for 0); a real NaN gives 0, as ``sign``."""
    if self.dtype is bool_:
        return prims.clone(self)
    out = apply_prim("sgn", "sgn", (self,), P.DEFAULT, NUMERIC)
    if not out.dtype.is_floating_point:
        return out
    return prims.where(prims.isnan(out), scalar_like(0, out), out)


def signbit(self):
    """Whether the sign bit is set (True for -0.0 and negative values, including -nan)."""
    check_dtype("signbit", self.dtype, REAL | BOOL)
    if self.dtype is bool_:
        return full_like(self, False)
    return prims.signbit(self)


def square(self):
    """``self * self``; bool inputs give int64 (as ``pow(self, 2)``)."""
    return ops.pow.Tensor_Scalar(self, 2)


def _angle_conversion(name, factor, doc):
    def decomposition(self):
        if self.dtype.is_complex:
            raise TypeError(f"{name}: complex tensors are not supported")
        compute, result = elementwise_dtypes(self, kind=P.INT_TO_FLOAT)
        x = to_dtype(self, compute)
        return to_dtype(prims.mul(x, scalar_like(factor, x)), result)

    return make(name, decomposition, doc)


# -- parameterised ---------------------------------------------------------------


def nan_to_num(self, nan=None, posinf=None, neginf=None):
    """Replace nan by ``nan`` (default 0), +inf/-inf by ``posinf``/``neginf`` (default: the dtype's largest/lowest).

    Integer and bool tensors are returned unchanged (copied); complex tensors
    are handled part by part.
    """
    if not (self.dtype.is_floating_point or self.dtype.is_complex):
        return prims.clone(self)
    return prims.nan_to_num(self, nan, posinf, neginf)


def logit(self, eps=None):
    """``log(p / (1 - p))``; with ``eps``, ``p`` is first clamped to ``[eps, 1 - eps]``."""
    return apply_prim("logit", "logit", (self,), P.INT_TO_FLOAT, FLOAT, extra=(eps,))


def polygamma(n, self):
    """The ``n``-th derivative of ``digamma`` (``n`` >= 0)."""
    if n < 0:
        raise ValueError(f"polygamma: argument 'n' must be non-negative, got {n}")
    return apply_prim("polygamma", "polygamma", (self,), P.INT_TO_FLOAT, FLOAT, extra=(n,))


_MVLGAMMA_MAX_P = 1 << 16  # p terms per element are summed at once


def mvlgamma(self, p):
    """Multivariate log-gamma of dimension ``p``: ``sum(lgamma(x - j/2) for j < p) + p(p-1)/4 log(pi)``.

    As PyTorch, no domain check: below ``(p - 1) / 2`` the sum of ``log|Γ|`` is still defined (``inf`` at
    the poles, at ``-inf`` and ``+inf``, NaN for NaN). The prim ``mvlgamma`` keeps its domain ``x > (p - 1) / 2``.
    """
    if p < 1:
        raise ValueError(f"mvlgamma: argument 'p' must be at least 1, got {p}")
    if p > _MVLGAMMA_MAX_P:
        raise ValueError(f"mvlgamma: argument 'p' must be at most {_MVLGAMMA_MAX_P}, got {p}")
    compute, result = elementwise_dtypes(self, kind=P.INT_TO_FLOAT)
    check_dtype("mvlgamma", compute, FLOAT)
    x = to_dtype(self, compute)
    halves = ops.mul(ops.arange(p, dtype=compute, device=x.device), 0.5)  # j / 2 for j < p, summed at once
    total = ops.sum(ops.lgamma(ops.sub(ops.unsqueeze(x, -1), halves)), [-1])
    total = ops.add(total, p * (p - 1) / 4 * math.log(math.pi))
    return to_dtype(ops.where(ops.isneginf(x), ops.full_like(x, float("inf")), total), result)


# -- classification -----------------------------------------------------------------


def _classify(name, doc, allow_complex=True):
    def decomposition(self):
        if not allow_complex and self.dtype.is_complex:
            raise TypeError(f"{name}: complex tensors are not supported")
        return prim(name)(self)

    return make(name, decomposition, doc)


def isreal(self):
    """True where the element has no imaginary part (everywhere for non-complex tensors)."""
    if not self.dtype.is_complex:
        return full_like(self, True, dtype=bool_)
    imag = prims.imag(self)
    return prims.eq(imag, scalar_like(0, imag))


# -- complex parts -------------------------------------------------------------------


def _complex_part(self, index):
    pairs = prims.view_as_real(self)
    last = pairs.ndim - 1
    return prims.squeeze(prims.slice_in_dim(pairs, index, index + 1, 1, last), [last])


def real(self):
    """The real part: a view for complex tensors, ``self`` (as a view) otherwise."""
    if not self.dtype.is_complex:
        return prims.view_of(self)
    return _complex_part(self, 0)


def imag(self):
    """The imaginary part as a view; non-complex tensors are refused."""
    if not self.dtype.is_complex:
        raise TypeError(f"imag: not implemented for tensors with non-complex dtype {self.dtype.name}")
    return _complex_part(self, 1)


def angle(self):
    """The argument (phase) of complex numbers; for real numbers 0 or pi (nan stays nan)."""
    compute, result = elementwise_dtypes(self, kind=P.INT_TO_FLOAT)
    if result.is_complex:
        result = result.to_real()
    return to_dtype(prims.angle(to_dtype(self, compute)), result)


def conj_physical(self):
    """The complex conjugate, materialised (a copy of non-complex tensors)."""
    if not self.dtype.is_complex:
        return prims.clone(self)
    return prims.conj_physical(self)


def conj(self):
    """The complex conjugate; a view of ``self`` for non-complex tensors.

    opweave has no lazy conjugate bit, so for complex tensors this is a copy
    (``conj_physical``) rather than PyTorch's view.
    """
    if not self.dtype.is_complex:
        return prims.view_of(self)
    return prims.conj_physical(self)


def resolve_conj(self):
    """``self`` as a view: opweave has no lazy conjugate bit to resolve."""
    return prims.view_of(self)


def resolve_neg(self):
    """``self`` as a view: opweave has no lazy negative bit to resolve."""
    return prims.view_of(self)


def positive(self):
    """``+self``: ``self`` as a view; bool tensors are refused."""
    if self.dtype is bool_:
        raise TypeError("positive: the `+` operator on a bool tensor is not supported")
    return prims.view_of(self)


# -- definitions ------------------------------------------------------------------------


def _define_math():
    for name, (prim_name, doc) in FLOATING_FUNCTIONS.items():
        pointwise(f"{name}(Tensor self) -> Tensor", unary_fn(name, prim_name, FLOATING, doc), core=name not in NOT_CORE)
    for name, (prim_name, doc) in REAL_FUNCTIONS.items():
        pointwise(f"{name}(Tensor self) -> Tensor", unary_fn(name, prim_name, FLOAT, doc), core=name == "erf")
    for name, (arg, prim_name, doc) in SPECIAL_FUNCTIONS.items():
        pointwise(f"{name}(Tensor {arg}) -> Tensor", unary_fn(name, prim_name, FLOAT, doc), inplace=False)
    pointwise("frac(Tensor self) -> Tensor", frac)
    pointwise("square(Tensor self) -> Tensor", square)
    degrees = math.pi / 180
    pointwise("deg2rad(Tensor self) -> Tensor", _angle_conversion("deg2rad", degrees, "Degrees to radians."))
    pointwise("rad2deg(Tensor self) -> Tensor", _angle_conversion("rad2deg", 1 / degrees, "Radians to degrees."))


def _define_rounding_and_sign():
    docs = {
        "ceil": "Round up to the nearest integer value.",
        "floor": "Round down to the nearest integer value.",
        "round": "Round to the nearest integer value, halves to even.",
        "trunc": "Round toward zero to the nearest integer value.",
    }
    for name, doc in docs.items():
        pointwise(f"{name}(Tensor self) -> Tensor", _rounding(name, doc), core=True)
    pointwise("round.decimals(Tensor self, *, int decimals) -> Tensor", round_decimals)
    pointwise("abs(Tensor self) -> Tensor", make("abs", abs_, abs_.__doc__), core=True)
    pointwise("neg(Tensor self) -> Tensor", neg, core=True)
    pointwise("sign(Tensor self) -> Tensor", sign, core=True)
    pointwise("sgn(Tensor self) -> Tensor", sgn)
    pointwise("signbit(Tensor self) -> Tensor", signbit, inplace=False)
    define("positive(Tensor(a) self) -> Tensor(a)", positive, tags=("pointwise", "view"))


def _define_parameterised():
    pointwise("nan_to_num(Tensor self, float? nan=None, float? posinf=None, float? neginf=None) -> Tensor", nan_to_num)
    pointwise("logit(Tensor self, float? eps=None) -> Tensor", logit)
    pointwise("polygamma(int n, Tensor self) -> Tensor", polygamma, inplace=False)
    pointwise("mvlgamma(Tensor self, int p) -> Tensor", mvlgamma)


def _define_classification():
    docs = {
        "isfinite": ("Whether each element is finite (not inf, not nan).", True, False),
        "isinf": ("Whether each element is +inf or -inf.", True, True),
        "isnan": ("Whether each element is nan.", True, True),
        "isposinf": ("Whether each element is +inf.", False, True),
        "isneginf": ("Whether each element is -inf.", False, True),
    }
    for name, (doc, allow_complex, out) in docs.items():
        fn = _classify(name, doc, allow_complex)
        pointwise(f"{name}(Tensor self) -> Tensor", fn, inplace=False, out=out, core=name in ("isinf", "isnan"))
    pointwise("isreal(Tensor self) -> Tensor", isreal, inplace=False, out=False)


def _define_complex():
    define("real(Tensor(a) self) -> Tensor(a)", real, tags=("pointwise", "view"))
    define("imag(Tensor(a) self) -> Tensor(a)", imag, tags=("pointwise", "view"))
    pointwise("angle(Tensor self) -> Tensor", angle, inplace=False)
    pointwise("conj_physical(Tensor self) -> Tensor", conj_physical)
    define("conj(Tensor(a) self) -> Tensor(a)", conj, tags=("pointwise",))
    define("resolve_conj(Tensor(a) self) -> Tensor(a)", resolve_conj, tags=("view",))
    define("resolve_neg(Tensor(a) self) -> Tensor(a)", resolve_neg, tags=("view",))


def _define_aliases():
    for name, target in ALIASES.items():
        redirect(f"{name}(Tensor self) -> Tensor", target)
    for name, target in SPECIAL_ALIASES.items():
        redirect(f"{name}(Tensor self) -> Tensor", target, inplace=False)
    redirect("special_round(Tensor self, *, int decimals=0) -> Tensor", "round.decimals", inplace=False)
    redirect("special_logit(Tensor self, float? eps=None) -> Tensor", "logit", inplace=False)
    redirect("special_polygamma(int n, Tensor self) -> Tensor", "polygamma", inplace=False)
    redirect("special_multigammaln(Tensor self, int p) -> Tensor", "mvlgamma", inplace=False)


_define_math()
_define_rounding_and_sign()
_define_parameterised()
_define_classification()
_define_complex()
_define_aliases()
