"""Activation functions (``torch.nn.functional``'s elementwise ones) as canonical ops.

Each is written with prims in the computation dtype (float32 for
float16/bfloat16) and rounded once to the input dtype, following PyTorch's CPU
kernels' formulas. Most accept floating tensors only, as PyTorch does;
``relu``, ``hardtanh``/``relu6`` and ``threshold`` also accept integers.
"""

from __future__ import annotations

import math

from .. import _dtype
from .._ops import canonical as ops
from .._ops import prims
from ._elementwise import FLOAT, FLOATING, REAL, check_dtype, pointwise, scalar_like
from ._utils import to_dtype


def _compute(op, self, allowed=FLOAT):
    """``self`` in its computation dtype, after checking the op supports its dtype."""
    check_dtype(op, self.dtype, allowed)
    return to_dtype(self, _dtype.opmath_dtype(self.dtype))


def _c(value, like):
    """A scalar broadcast like ``like``."""
    return scalar_like(value, like)


def _where(cond, a, b):
    return prims.where(cond, a, b)


# -- piecewise linear -----------------------------------------------------------------


def relu(self):
    """``max(self, 0)`` (nan stays nan); integer tensors allowed, bool refused."""
    check_dtype("relu", self.dtype, REAL)
    zero = _c(0, self)
    return _where(prims.le(self, zero), zero, self)


def _hardtanh(op, self, min_val, max_val):
    check_dtype(op, self.dtype, REAL)
    if not self.dtype.is_floating_point:
        min_val, max_val = int(min_val), int(max_val)
        if self.dtype is _dtype.uint8 and min_val < 0:
            raise ValueError(f"{op}: cannot clamp an unsigned tensor to a negative lower bound {min_val}")
    return to_dtype(ops.clamp(self, min_val, max_val), self.dtype)


def hardtanh(self, min_val=-1, max_val=1):
    """Clamp to ``[min_val, max_val]``; the result keeps ``self``'s dtype."""
    return _hardtanh("hardtanh", self, min_val, max_val)


def relu6(self):
    """``min(max(self, 0), 6)`` (``hardtanh(self, 0, 6)``)."""
    return _hardtanh("relu6", self, 0, 6)


def leaky_relu(self, negative_slope=0.01):
    """``self`` where positive, else ``negative_slope * self``."""
    x = _compute("leaky_relu", self)
    out = _where(prims.gt(x, _c(0, x)), x, prims.mul(x, _c(negative_slope, x)))
    return to_dtype(out, self.dtype)


def threshold(self, threshold, value):
    """``value`` where ``self <= threshold``, else ``self`` (both Scalars converted to ``self``'s dtype first)."""
    check_dtype("threshold", self.dtype, REAL)
    return _where(prims.le(self, _c(threshold, self)), _c(value, self), self)


def hardshrink(self, lambd=0.5):
    """0 where ``-lambd <= self <= lambd``, else ``self``."""
    x = _compute("hardshrink", self)
    inside = prims.logical_and(prims.ge(x, _c(-lambd, x)), prims.le(x, _c(lambd, x)))
    return to_dtype(_where(inside, _c(0, x), x), self.dtype)


def softshrink(self, lambd=0.5):
    """``self - lambd`` above ``lambd``, ``self + lambd`` below ``-lambd``, else 0 (nan stays nan)."""
    if lambd < 0:
        raise ValueError(f"softshrink: argument 'lambd' must be non-negative, got {lambd}")
    x = _compute("softshrink", self)
    lam = _c(lambd, x)
    out = _where(prims.gt(x, lam), prims.sub(x, lam), _where(prims.lt(x, prims.neg(lam)), prims.add(x, lam), _c(0, x)))
    return to_dtype(_where(prims.isnan(x), x, out), self.dtype)


def hardsigmoid(self):
    """``min(max(self + 3, 0), 6) / 6``."""
    x = _compute("hardsigmoid", self)
    return to_dtype(prims.div(_relu6(prims.add(x, _c(3, x))), _c(6, x)), self.dtype)


def hardswish(self):
    """``self * min(max(self + 3, 0), 6) / 6``."""
    x = _compute("hardswish", self)
    return to_dtype(prims.div(prims.mul(x, _relu6(prims.add(x, _c(3, x)))), _c(6, x)), self.dtype)


def _relu6(x):
    return prims.minimum(prims.maximum(x, _c(0, x)), _c(6, x))


# -- exponential family ------------------------------------------------------------------


def _elu(op, self, alpha, scale, input_scale):
    x = _compute(op, self)
    negative = prims.mul(prims.expm1(prims.mul(x, _c(input_scale, x))), _c(alpha * scale, x))
    return to_dtype(_where(prims.le(x, _c(0, x)), negative, prims.mul(x, _c(scale, x))), self.dtype)


def elu(self, alpha=1, scale=1, input_scale=1):
    """``scale * self`` where positive, else ``alpha * scale * (exp(self * input_scale) - 1)``."""
    return _elu("elu", self, alpha, scale, input_scale)


SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946


def selu(self):
    """Scaled ELU with the self-normalising constants (alpha ≈ 1.6733, scale ≈ 1.0507)."""
    return _elu("selu", self, SELU_ALPHA, SELU_SCALE, 1)


def celu(self, alpha=1.0):
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``; ``alpha`` must not be 0."""
    if alpha == 0:
        raise ValueError("celu: argument 'alpha' must not be 0 (it divides the input)")
    return _elu("celu", self, alpha, 1, 1 / alpha)


def gelu(self, approximate="none"):
    """Gaussian error linear unit ``x * Phi(x)``; ``approximate="tanh"`` uses the tanh approximation."""
    if approximate not in ("none", "tanh"):
        raise ValueError(f"gelu: argument 'approximate' must be 'none' or 'tanh', got {approximate!r}")
    x = _compute("gelu", self)
    if approximate == "none":
        cdf = prims.add(_c(1, x), prims.erf(prims.mul(x, _c(math.sqrt(0.5), x))))
        return to_dtype(prims.mul(prims.mul(x, _c(0.5, x)), cdf), self.dtype)
    beta = math.sqrt(2) * (2 / math.sqrt(math.pi)) * 0.5
    cube = prims.mul(prims.mul(x, x), x)
    inner = prims.mul(_c(beta, x), prims.add(x, prims.mul(_c(0.044715, x), cube)))
    out = prims.mul(prims.mul(_c(0.5, x), x), prims.add(_c(1, x), prims.tanh(inner)))
    return to_dtype(out, self.dtype)


def silu(self):
    """``self * sigmoid(self)``, computed as ``self / (1 + exp(-self))`` (complex allowed)."""
    x = _compute("silu", self, FLOATING)
    return to_dtype(prims.div(x, prims.add(_c(1, x), prims.exp(prims.neg(x)))), self.dtype)


def mish(self):
    """``self * tanh(softplus(self))``."""
    x = _compute("mish", self)
    return to_dtype(prims.mul(x, prims.tanh(prims.log1p(prims.exp(x)))), self.dtype)


def softplus(self, beta=1, threshold=20):
    """``log(1 + exp(beta * self)) / beta``, and ``self`` where ``beta * self > threshold``."""
    x = _compute("softplus", self)
    scaled = prims.mul(x, _c(beta, x))
    soft = prims.div(prims.log1p(prims.exp(scaled)), _c(beta, x))
    return to_dtype(_where(prims.gt(scaled, _c(threshold, x)), x, soft), self.dtype)


def log_sigmoid(self):
    """``log(sigmoid(self))`` computed stably as ``min(self, 0) - log1p(exp(-|self|))``."""
    x = _compute("log_sigmoid", self)
    low = prims.minimum(x, _c(0, x))
    return to_dtype(prims.sub(low, prims.log1p(prims.exp(prims.neg(prims.abs(x))))), self.dtype)


def tanhshrink(self):
    """``self - tanh(self)``."""
    return ops.sub.Tensor(self, ops.tanh(self))


# name -> (schema arguments, function, in-place?, out=?)
ACTIVATIONS = {
    "relu": ("Tensor self", relu, True, True),
    "relu6": ("Tensor self", relu6, True, False),
    "hardtanh": ("Tensor self, Scalar min_val=-1, Scalar max_val=1", hardtanh, True, True),
    "leaky_relu": ("Tensor self, Scalar negative_slope=0.01", leaky_relu, True, True),
    "threshold": ("Tensor self, Scalar threshold, Scalar value", threshold, True, True),
    "hardshrink": ("Tensor self, Scalar lambd=0.5", hardshrink, False, True),
    "softshrink": ("Tensor self, Scalar lambd=0.5", softshrink, False, True),
    "hardsigmoid": ("Tensor self", hardsigmoid, True, True),
    "hardswish": ("Tensor self", hardswish, True, True),
    "elu": ("Tensor self, Scalar alpha=1, Scalar scale=1, Scalar input_scale=1", elu, True, True),
    "selu": ("Tensor self", selu, True, False),
    "celu": ("Tensor self, Scalar alpha=1.0", celu, True, True),
    "gelu": ("Tensor self, *, str approximate='none'", gelu, True, True),
    "silu": ("Tensor self", silu, True, True),
    "mish": ("Tensor self", mish, True, True),
    "softplus": ("Tensor self, Scalar beta=1, Scalar threshold=20", softplus, False, True),
    "log_sigmoid": ("Tensor self", log_sigmoid, False, True),
    "tanhshrink": ("Tensor self", tanhshrink, False, True),
}
CORE = {"relu", "leaky_relu", "hardtanh", "gelu"}


def _define():
    for name, (args, fn, inplace, out) in ACTIVATIONS.items():
        pointwise(f"{name}({args}) -> Tensor", fn, core=name in CORE, inplace=inplace, out=out)


_define()
