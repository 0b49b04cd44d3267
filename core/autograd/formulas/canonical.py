"""Formulas at the canonical elementwise, activation, reduction and matrix ops users call most.

Without a formula of its own a canonical op is differentiated through its decomposition: its
Python reference (argument checks, promotion, broadcasting) runs on every call with grad and
records one node per prim, where without grad the dispatcher replays a cached plan. Recorded
here, the op runs below Autograd exactly as without grad and records one node, named as
PyTorch names it (``MulBackward0``, ``PowBackward1``, ``SumBackward1``...). The formulas are
PyTorch's ``derivatives.yaml`` rules written with canonical ops, so ``create_graph=True``
differentiates them again. Gradients are made to fit their input by the layer (real part for
a real input, summed over broadcast dimensions, cast to the input's dtype), so a formula may
return a gradient of the broadcast shape or of a promoted dtype. In-place and ``out=``
overloads are other ops and keep their own path (version counters, leaf checks).
"""

from __future__ import annotations

import math

from ... import _dtype
from ..._tensor import Tensor
from ..layer import LIBRARY, formula_kernel, record, register_nondifferentiable, run_below
from ._common import C, P, conj, formula, node_names, unsqueeze_to, zeros_of
from .elementwise import UNARY
from .linalg import _mm


def _at(args, i: int, default):
    """Argument ``i`` of a call, or its default where the call left it out."""
    return args[i] if len(args) > i else default


def _conj_scalar(s):
    """A Scalar's complex conjugate (itself if real)."""
    return s.conjugate() if isinstance(s, complex) else s


def _scaled(g, s):
    """``g * s`` for a Scalar, skipping a multiplication by 1."""
    return g if s == 1 and not isinstance(s, bool) else C.mul.Scalar(g, _conj_scalar(s))


def _register(op: str, fn, *, save=(), save_out: bool = False, name: str | None = None, **options) -> None:
    formula(op, save=save, save_out=save_out, **options)(fn)
    if name is not None:
        node_names()[_overload(op)] = name


def _overload(op: str):
    packet, _, overload = op.partition(".")
    return getattr(getattr(C, packet), overload or "default")


def _cross(needs) -> tuple:
    """Save each operand only when the other one needs its gradient."""
    return tuple(i for i, j in ((0, 1), (1, 0)) if needs[j])


def _wrapped_value(t):
    """The Python number of a wrapped scalar (``a ** 2``'s 2), else None."""
    if getattr(t, "_wrapped_number", False) and t.dtype is not _dtype.bool_:
        return t._native.item()
    return None


def _pow_redirect(self, exponent):
    """``t ** 2`` and ``2 ** t`` as PyTorch records them: the Scalar overloads (``PowBackward0``/``2``)."""
    e = _wrapped_value(exponent)
    if e is not None:
        return lambda: C.pow.Tensor_Scalar(self, e)
    base = _wrapped_value(self)
    if base is not None:
        return lambda: C.pow.Scalar(base, exponent)
    return None


def _sub_redirect(self, other, alpha=1):
    """``2 - t`` as PyTorch records it: ``rsub.Scalar`` (``RsubBackward1``)."""
    value = _wrapped_value(self)
    if value is not None and _wrapped_value(other) is None:
        return lambda: C.rsub.Scalar(other, value, alpha)
    return None


def _register_redirected(
    op: str, redirect, fn, *, save=(), save_out: bool = False, name: str | None = None, applies=None
) -> None:
    """Register ``fn`` at ``op``, except for the calls ``redirect(*args)`` sends to another overload."""
    overload = _overload(op)
    normal = formula_kernel(overload, fn, save, save_out, applies=applies)

    def kernel(keyset, *args):
        other = redirect(*args)
        return other() if other is not None else normal(keyset, *args)

    kernel.__name__ = f"autograd_{overload.name}"
    LIBRARY.impl(overload, kernel, "Autograd", with_keyset=True)
    if name is not None:
        node_names()[overload] = name


# -- unary maths: the prims' formulas (the canonical op is the prim with promotion) -------------------

_UNARY = {  # canonical op: (prim, PyTorch's node name where the default spelling differs)
    "exp": ("exp", None),
    "exp2": ("exp2", None),
    "expm1": ("expm1", None),
    "log": ("log", None),
    "log2": ("log2", None),
    "log10": ("log10", None),
    "log1p": ("log1p", "Log1PBackward0"),
    "sqrt": ("sqrt", None),
    "rsqrt": ("rsqrt", None),
    "sin": ("sin", None),
    "cos": ("cos", None),
    "tan": ("tan", None),
    "tanh": ("tanh", None),
    "sinh": ("sinh", None),
    "cosh": ("cosh", None),
    "asin": ("asin", None),
    "acos": ("acos", None),
    "atan": ("atan", None),
    "asinh": ("asinh", None),
    "acosh": ("acosh", None),
    "atanh": ("atanh", None),
    "sigmoid": ("sigmoid", None),
    "reciprocal": ("reciprocal", None),
    "erf": ("erf", None),
    "erfc": ("erfc", None),
    "erfinv": ("erf_inv", None),
    "lgamma": ("lgamma", None),
    "digamma": ("digamma", None),
}

#: Canonical ops whose CPU kernel runs several times slower than their prim (about 6× for sigmoid and
#: 5× for erf on 512×512 float32): with grad, float32/float64 inputs run the prim, as their
#: decomposition did (the same values as before these formulas).
_THROUGH_PRIM = {"sigmoid", "erf"}


def _register_through_prim(op: str, prim: str, fn, save, save_out: bool) -> None:
    """Record ``op``'s node, but compute a float32/float64 result with ``prims::prim`` below Autograd."""
    overload = _overload(op)
    prim_op = getattr(P, prim).default
    normal = formula_kernel(overload, fn, save, save_out)

    def kernel(keyset, x):
        if x.dtype is not _dtype.float32 and x.dtype is not _dtype.float64:
            return normal(keyset, x)
        out = run_below(prim_op, keyset, (x,))
        record(overload, (x,), out, fn, save, save_out)
        return out

    kernel.__name__ = f"autograd_{overload.name}"
    LIBRARY.impl(overload, kernel, "Autograd", with_keyset=True)


for _op, (_prim, _name) in _UNARY.items():
    _fn, _save, _save_out = UNARY[_prim]
    if _op in _THROUGH_PRIM:
        _register_through_prim(_op, _prim, _fn, _save, _save_out)
    else:
        _register(_op, _fn, save=_save, save_out=_save_out, name=_name)


def _neg(ctx, g):
    return (C.neg(g),)


def _abs(ctx, g):
    return (C.mul.Tensor(g, C.sgn(ctx.args[0])),)


def _square(ctx, g):
    return (C.mul.Tensor(g, C.mul.Scalar(conj(ctx.args[0]), 2)),)


_register("neg", _neg)
_register("abs", _abs, save=(0,))
_register("square", _square, save=(0,), name="PowBackward0")


# -- binary arithmetic ------------------------------------------------------------------------------


def _add(ctx, g):
    need = ctx.needs_input_grad
    return (g, _scaled(g, _at(ctx.args, 2, 1)) if need[1] else None)


def _sub(ctx, g):
    need = ctx.needs_input_grad
    return (g, C.neg(_scaled(g, _at(ctx.args, 2, 1))) if need[1] else None)


def _rsub(ctx, g):
    need = ctx.needs_input_grad
    return (C.neg(_scaled(g, _at(ctx.args, 2, 1))) if need[0] else None, g)


def _add_scalar(ctx, g):
    return (g,)


def _rsub_scalar(ctx, g):
    return (C.neg(_scaled(g, _at(ctx.args, 2, 1))),)


def _mul(ctx, g):
    a, b = ctx.args
    need = ctx.needs_input_grad
    return (C.mul.Tensor(g, conj(b)) if need[0] else None, C.mul.Tensor(g, conj(a)) if need[1] else None)


def _mul_scalar(ctx, g):
    return (C.mul.Scalar(g, _conj_scalar(ctx.args[1])),)


def _div(ctx, g):
    a, b = ctx.args[0], ctx.args[1]
    need = ctx.needs_input_grad
    ga = C.div.Tensor(g, conj(b)) if need[0] else None
    gb = C.neg(C.mul.Tensor(g, conj(C.div.Tensor(C.div.Tensor(a, b), b)))) if need[1] else None
    return (ga, gb)


def _div_scalar(ctx, g):
    return (C.div.Scalar(g, _conj_scalar(ctx.args[1])),)


def _div_mode(ctx, g):
    """True division's gradients; with a rounding mode zeros for both operands (even where the incoming
    gradient is NaN), as PyTorch's ``div_tensor_self_backward``/``div_tensor_other_backward``."""
    if _at(ctx.args, 2, None) is None:
        return _div(ctx, g)
    zero = C.zeros_like(g)
    return tuple(zero if need else None for need in ctx.needs_input_grad[:2])


def _div_scalar_mode(ctx, g):
    return (C.zeros_like(g),) if _at(ctx.args, 2, None) is not None else _div_scalar(ctx, g)


_register("add.Tensor", _add)
_register("add.Scalar", _add_scalar, name="AddBackward1")
_register("sub.Scalar", _add_scalar, name="SubBackward1")
_register_redirected("sub.Tensor", _sub_redirect, _sub)
_register("rsub.Tensor", _rsub)
_register("rsub.Scalar", _rsub_scalar, name="RsubBackward1")
_register("mul.Tensor", _mul, save=_cross)
_register("mul.Scalar", _mul_scalar, name="MulBackward1")
_register("div.Tensor", _div, save=lambda needs: (0, 1) if needs[1] else (1,))
_register("div.Scalar", _div_scalar, name="DivBackward1")
_register("div.Tensor_mode", _div_mode, save=lambda needs: (0, 1) if needs[1] else (1,), name="DivBackward2")
_register("div.Scalar_mode", _div_scalar_mode, name="DivBackward3")
_register("true_divide.Tensor", _div, save=lambda needs: (0, 1) if needs[1] else (1,), name="DivBackward0")
_register("true_divide.Scalar", _div_scalar, name="DivBackward1")


def _pow_scalar(ctx, g):
    """``exponent · x^(exponent−1)``; a zero exponent gives zeros (PyTorch's ``pow_backward``)."""
    x, e = ctx.args
    if e == 0:
        return (C.zeros_like(g),)
    if e == 1:
        return (g,)
    if e == 2:
        return (C.mul.Tensor(g, C.mul.Scalar(conj(x), 2)),)
    return (C.mul.Tensor(g, conj(C.mul.Scalar(C.pow.Tensor_Scalar(x, e - 1), e))),)


def _pow_tensor(ctx, g):
    """PyTorch's ``pow_backward_self`` / ``pow_backward_exponent`` (0^0 and 0^(b≥0) send no gradient)."""
    a, b = ctx.args
    y = ctx.out
    need = ctx.needs_input_grad
    a, b = (t if t.dtype is y.dtype else C.to(t, y.dtype) for t in (a, b))  # a wrapped scalar, an int exponent
    ga = gb = None
    if need[0]:
        d = C.mul.Tensor(b, C.pow.Tensor_Tensor(a, C.sub.Scalar(b, 1)))
        zero = C.eq.Scalar(b, 0) if b.dtype.is_complex else C.eq.Scalar(b, 0) & C.eq.Scalar(a, 0)
        ga = C.where.ScalarSelf(zero, 0.0, C.mul.Tensor(g, conj(d)))
    if need[1]:
        mask = C.eq.Scalar(a, 0)
        if not a.dtype.is_complex:
            mask = mask & C.ge.Scalar(b, 0)
        log_a = C.log(C.where.ScalarSelf(mask, 1.0, a))
        gb = C.where.ScalarSelf(mask, 0.0, C.mul.Tensor(g, conj(C.mul.Tensor(y, log_a))))
    return (ga, gb)


def _pow_base(ctx, g):
    """``base^x · log(base)`` for a positive real base."""
    base = ctx.args[0]
    return (C.mul.Tensor(g, conj(C.mul.Scalar(ctx.out, math.log(base)))),)


def _positive_base(self, exponent) -> bool:
    return isinstance(self, (int, float)) and not isinstance(self, bool) and self > 0


_register("pow.Tensor_Scalar", _pow_scalar, save=(0,))
_register_redirected("pow.Tensor_Tensor", _pow_redirect, _pow_tensor, save=(0, 1), save_out=True, name="PowBackward1")
_register("pow.Scalar", _pow_base, save_out=True, name="PowBackward2", applies=_positive_base)


# -- activations ---------------------------------------------------------------------------------------

_SQRT_2 = math.sqrt(2.0)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_GELU_BETA = math.sqrt(2.0 / math.pi)
_GELU_KAPPA = 0.044715


def _elementwise(name: str, x):
    """``name(x)`` through the prim for float32/float64 (the formulas' inputs), else the canonical op.

    The prim is the same function without the canonical op's promotion (here a no-op); some CPU
    canonical kernels (``erf``, ``sigmoid``) run several times slower than their prims.
    """
    if x.dtype is _dtype.float32 or x.dtype is _dtype.float64:
        return getattr(P, name)(x)
    return getattr(C, name)(x)


def _gelu(ctx, g):
    """PyTorch's ``gelu_backward``: Φ(x) + x φ(x), or the derivative of the tanh approximation."""
    x = ctx.args[0]
    if _at(ctx.args, 1, "none") == "tanh":
        x_sq = C.mul.Tensor(x, x)
        inner = C.mul.Scalar(C.add.Tensor(x, C.mul.Scalar(C.mul.Tensor(x_sq, x), _GELU_KAPPA)), _GELU_BETA)
        t = _elementwise("tanh", inner)
        left = C.mul.Scalar(C.add.Scalar(t, 1), 0.5)
        slope = C.mul.Scalar(C.add.Scalar(C.mul.Scalar(x_sq, 3 * _GELU_KAPPA), 1), _GELU_BETA)
        right = C.mul.Tensor(C.mul.Tensor(C.mul.Scalar(x, 0.5), C.rsub.Scalar(C.mul.Tensor(t, t), 1)), slope)
        return (C.mul.Tensor(g, C.add.Tensor(left, right)),)
    cdf = C.mul.Scalar(C.add.Scalar(_elementwise("erf", C.mul.Scalar(x, 1 / _SQRT_2)), 1), 0.5)
    pdf = C.mul.Scalar(_elementwise("exp", C.mul.Scalar(C.mul.Tensor(x, x), -0.5)), _INV_SQRT_2PI)
    return (C.mul.Tensor(g, C.add.Tensor(cdf, C.mul.Tensor(x, pdf))),)


def _silu(ctx, g):
    """σ(x) (1 + x (1 − σ(x)))."""
    x = ctx.args[0]
    s = _elementwise("sigmoid", x)
    return (C.mul.Tensor(g, C.mul.Tensor(s, C.add.Scalar(C.mul.Tensor(x, C.rsub.Scalar(s, 1)), 1))),)


def _leaky_relu(ctx, g):
    """``g`` where x > 0, ``g · negative_slope`` elsewhere (NaN included), as ``leaky_relu_backward``."""
    x = ctx.args[0]
    slope = _at(ctx.args, 1, 0.01)
    return (C.where.self(C.gt.Scalar(x, 0), g, C.mul.Scalar(g, slope)),)


def _softplus(ctx, g):
    """σ(βx) where βx ≤ threshold, 1 above (the op is the identity there)."""
    x = ctx.args[0]
    beta, threshold = _at(ctx.args, 1, 1), _at(ctx.args, 2, 20)
    bx = C.mul.Scalar(x, beta) if beta != 1 else x
    return (C.where.self(C.gt.Scalar(bx, threshold), g, C.mul.Tensor(g, _elementwise("sigmoid", bx))),)


def _elu(ctx, g):
    """``elu_backward``: x ≤ 0: g · input_scale · alpha · scale · exp(x · input_scale); else g · scale."""
    x = ctx.args[0]
    alpha, scale, input_scale = _at(ctx.args, 1, 1), _at(ctx.args, 2, 1), _at(ctx.args, 3, 1)
    xs = C.mul.Scalar(x, input_scale) if input_scale != 1 else x
    negative = C.mul.Tensor(g, C.mul.Scalar(C.exp(xs), input_scale * alpha * scale))
    return (C.where.self(C.le.Scalar(x, 0), negative, _scaled(g, scale)),)


def _hardtanh(ctx, g):
    """0 where x ≤ min_val or x ≥ max_val, ``g`` elsewhere (NaN included), as ``hardtanh_backward``."""
    x = ctx.args[0]
    lo, hi = _at(ctx.args, 1, -1), _at(ctx.args, 2, 1)
    return (C.where.ScalarSelf(C.le.Scalar(x, lo) | C.ge.Scalar(x, hi), 0.0, g),)


def _clamp(ctx, g):
    """``g`` where min ≤ x ≤ max (a bound left out always holds), 0 elsewhere and at NaN."""
    x = ctx.args[0]
    lo, hi = _at(ctx.args, 1, None), _at(ctx.args, 2, None)
    if lo is None and hi is None:
        return (g,)
    if lo is None:
        inside = C.le.Scalar(x, hi)
    elif hi is None:
        inside = C.ge.Scalar(x, lo)
    else:
        inside = C.ge.Scalar(x, lo) & C.le.Scalar(x, hi)
    return (C.where.ScalarOther(inside, g, 0.0),)


def _clamp_min(ctx, g):
    return (C.where.ScalarOther(C.ge.Scalar(ctx.args[0], ctx.args[1]), g, 0.0),)


def _clamp_max(ctx, g):
    return (C.where.ScalarOther(C.le.Scalar(ctx.args[0], ctx.args[1]), g, 0.0),)


def _relu6(ctx, g):
    """``hardtanh_backward`` with bounds 0 and 6 (PyTorch's relu6 is ``hardtanh(x, 0, 6)``)."""
    x = ctx.args[0]
    return (C.where.ScalarSelf(C.le.Scalar(x, 0) | C.ge.Scalar(x, 6), 0.0, g),)


def _hardsigmoid(ctx, g):
    """``hardsigmoid_backward``: g / 6 where -3 < x < 3, 0 elsewhere."""
    x = ctx.args[0]
    return (C.where.ScalarOther(C.gt.Scalar(x, -3) & C.lt.Scalar(x, 3), C.div.Scalar(g, 6), 0.0),)


def _hardswish(ctx, g):
    """``hardswish_backward``: 0 up to -3, g (x/3 + 1/2) below 3, g from 3 on (NaN included)."""
    x = ctx.args[0]
    middle = C.mul.Tensor(g, C.add.Scalar(C.div.Scalar(x, 3), 0.5))
    return (C.where.ScalarSelf(C.le.Scalar(x, -3), 0.0, C.where.self(C.lt.Scalar(x, 3), middle, g)),)


def _log_sigmoid(ctx, g):
    """``log_sigmoid_backward``: g σ(-x)."""
    return (C.mul.Tensor(g, _elementwise("sigmoid", C.neg(ctx.args[0]))),)


def _mish(ctx, g):
    """``mish_backward``: tanh(softplus(x)) + x σ(x) (1 − tanh²(softplus(x)))."""
    x = ctx.args[0]
    t = _elementwise("tanh", C.softplus(x))
    s = _elementwise("sigmoid", x)
    return (C.mul.Tensor(g, C.add.Tensor(t, C.mul.Tensor(C.mul.Tensor(x, s), C.rsub.Scalar(C.mul.Tensor(t, t), 1)))),)


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _selu(ctx, g):
    """``elu_backward`` with SELU's alpha and scale (PyTorch's selu is ``elu(x, alpha, scale)``)."""
    x = ctx.args[0]
    negative = C.mul.Tensor(g, C.mul.Scalar(C.exp(x), _SELU_ALPHA * _SELU_SCALE))
    return (C.where.self(C.le.Scalar(x, 0), negative, C.mul.Scalar(g, _SELU_SCALE)),)


def _real_bounds(self, *bounds) -> bool:
    """Clamping a floating tensor by real Scalars (PyTorch rejects complex)."""
    return self.dtype.is_floating_point and not any(isinstance(b, complex) for b in bounds)


_register("gelu", _gelu, save=(0,))
_register("silu", _silu, save=(0,))
_register("leaky_relu", _leaky_relu, save=(0,))
_register("softplus", _softplus, save=(0,))
_register("elu", _elu, save=(0,))
_register("hardtanh", _hardtanh, save=(0,))
_register("relu6", _relu6, save=(0,), name="HardtanhBackward0")
_register("hardsigmoid", _hardsigmoid, save=(0,))
_register("hardswish", _hardswish, save=(0,))
_register("log_sigmoid", _log_sigmoid, save=(0,))
_register("mish", _mish, save=(0,))
_register("selu", _selu, save=(0,), name="EluBackward0")


def _clamp_tensor(ctx, g):
    """PyTorch's ``clamp_backward_min_max``: a bound gets the gradient where it was the result."""
    x, lo, hi = ctx.args[0], _at(ctx.args, 1, None), _at(ctx.args, 2, None)
    need = ctx.needs_input_grad
    gx = glo = ghi = None
    if lo is not None and hi is not None:
        if need[0]:
            gx = C.where.ScalarOther(C.ge.Tensor(x, lo) & C.le.Tensor(x, hi), g, 0.0)
        if _at(need, 1, False):
            glo = C.where.ScalarOther(C.lt.Tensor(x, lo) & C.lt.Tensor(lo, hi), g, 0.0)
        if _at(need, 2, False):
            ghi = C.where.ScalarOther(C.gt.Tensor(x, hi) | C.lt.Tensor(hi, lo), g, 0.0)
    elif lo is not None:
        gx, glo = _clamp_min_tensor(ctx, g)
    elif hi is not None:
        gx, ghi = _clamp_max_tensor(ctx, g, 2)
    else:
        gx = g
    return (gx, glo, ghi)


def _clamp_min_tensor(ctx, g):
    x, lo = ctx.args[0], ctx.args[1]
    need = ctx.needs_input_grad
    gx = C.where.ScalarOther(C.ge.Tensor(x, lo), g, 0.0) if need[0] else None
    glo = C.where.ScalarOther(C.lt.Tensor(x, lo), g, 0.0) if need[1] else None
    return (gx, glo)


def _clamp_max_tensor(ctx, g, at: int = 1):
    x, hi = ctx.args[0], ctx.args[at]
    need = ctx.needs_input_grad
    gx = C.where.ScalarOther(C.le.Tensor(x, hi), g, 0.0) if need[0] else None
    ghi = C.where.ScalarOther(C.gt.Tensor(x, hi), g, 0.0) if need[at] else None
    return (gx, ghi)


def _tensor_bounds(*bounds) -> bool:
    """Every bound given is a Tensor (and one is given): PyTorch binds such a call to the ``Tensor`` overload."""
    given = [b for b in bounds if b is not None]
    return bool(given) and all(isinstance(b, Tensor) for b in given)


def _clamp_redirect(self, min=None, max=None):  # noqa: A002 - the schema's names
    return (lambda: C.clamp.Tensor(self, min, max)) if _tensor_bounds(min, max) else None


def _clamp_min_redirect(self, min):  # noqa: A002
    return (lambda: C.clamp_min.Tensor(self, min)) if isinstance(min, Tensor) else None


def _clamp_max_redirect(self, max):  # noqa: A002
    return (lambda: C.clamp_max.Tensor(self, max)) if isinstance(max, Tensor) else None


# A Tensor bound binds the Scalar overloads too (opweave's overload choice): sent to the Tensor ones
_register_redirected("clamp", _clamp_redirect, _clamp, save=(0,), name="ClampBackward1", applies=_real_bounds)
_register_redirected("clamp_min", _clamp_min_redirect, _clamp_min, save=(0,), applies=_real_bounds)
_register_redirected("clamp_max", _clamp_max_redirect, _clamp_max, save=(0,), applies=_real_bounds)
_register("clamp.Tensor", _clamp_tensor, save=(0, 1, 2), name="ClampBackward0")
_register("clamp_min.Tensor", _clamp_min_tensor, save=(0, 1), name="ClampMinBackward1")
_register("clamp_max.Tensor", _clamp_max_tensor, save=(0, 1), name="ClampMaxBackward1")


# -- where -----------------------------------------------------------------------------------------------


def _where(ctx, g):
    cond = ctx.args[0]
    need = ctx.needs_input_grad
    ga = C.where.ScalarOther(cond, g, 0.0) if need[1] else None
    gb = C.where.ScalarSelf(cond, 0.0, g) if need[2] else None
    return (None, ga, gb)


def _where_scalar_other(ctx, g):
    return (None, C.where.ScalarOther(ctx.args[0], g, 0.0))


def _where_scalar_self(ctx, g):
    return (None, C.where.ScalarSelf(ctx.args[0], 0.0, g))


_register("where.self", _where, save=(0,))
_register("where.ScalarOther", _where_scalar_other, save=(0,))
_register("where.ScalarSelf", _where_scalar_self, save=(0,))


# -- reductions --------------------------------------------------------------------------------------


def _reduced(dims, ndim: int) -> list:
    """The dims a reduction covers: all of them for None or an empty list (PyTorch's ``dim=[]``)."""
    return list(range(ndim)) if not dims else sorted({d % ndim for d in dims})


def _restore(t, dims, ndim: int, keepdim: bool):
    """Put back the reduced dims of a result (no-op with keepdim or for a 0-dim input)."""
    return t if keepdim or ndim == 0 else unsqueeze_to(t, _reduced(dims, ndim), ndim)


def _sum(ctx, g):
    x = ctx.args[0]
    return (C.expand(g, list(x.shape)),)


def _sum_dim(ctx, g):
    x = ctx.args[0]
    dims, keepdim = _at(ctx.args, 1, None), _at(ctx.args, 2, False)
    return (C.expand(_restore(g, dims, x.ndim, keepdim), list(x.shape)),)


def _mean(ctx, g):
    x = ctx.args[0]
    return (C.expand(C.div.Scalar(g, max(x.numel(), 1)), list(x.shape)),)


def _mean_dim(ctx, g):
    x = ctx.args[0]
    dims, keepdim = _at(ctx.args, 1, None), _at(ctx.args, 2, False)
    n = math.prod(x.shape[d] for d in _reduced(dims, x.ndim)) if x.ndim else 1
    return (C.expand(C.div.Scalar(_restore(g, dims, x.ndim, keepdim), max(n, 1)), list(x.shape)),)


def _amax(ctx, g):
    """The gradient shared evenly among the positions equal to the result (``scale_grad_by_count``)."""
    x = ctx.args[0]
    dims, keepdim = _at(ctx.args, 1, []), _at(ctx.args, 2, False)
    if x.ndim == 0:
        return (g,)
    reduced = _reduced(dims, x.ndim)
    mask = C.eq.Tensor(x, _restore(ctx.out, dims, x.ndim, keepdim))
    count = C.sum.dim_IntList(mask, reduced, True)
    return (C.mul.Tensor(C.div.Tensor(_restore(g, dims, x.ndim, keepdim), count), mask),)


def _max_all(ctx, g):
    """``evenly_distribute_backward``: shared among the maxima, or among the NaNs when the result is NaN."""
    x = ctx.args[0]
    y = ctx.out
    mask = C.eq.Tensor(x, y) | (C.isnan(x) & C.isnan(y))
    return (C.mul.Tensor(C.div.Tensor(g, C.sum.default(mask)), mask),)


def _max_dim(ctx, grads):
    """``value_selecting_reduction_backward``: the values' gradient written at the indices."""
    x = ctx.args[0]
    dim, keepdim = ctx.args[1], _at(ctx.args, 2, False)
    g, indices = grads[0], ctx.outputs[1]
    if x.ndim == 0:
        return (g,)
    if not keepdim:
        g, indices = C.unsqueeze(g, dim), C.unsqueeze(indices, dim)
    return (C.scatter.src(zeros_of(x), dim, indices, g),)


_register("sum", _sum)
_register("sum.dim_IntList", _sum_dim, name="SumBackward1")
_register("mean", _mean)
_register("mean.dim", _mean_dim, name="MeanBackward1")
_register("amax", _amax, save=(0,), save_out=True)
_register("amin", _amax, save=(0,), save_out=True)
_register("max", _max_all, save=(0,), save_out=True, name="MaxBackward1")
_register("min", _max_all, save=(0,), save_out=True, name="MinBackward1")
_register("max.dim", _max_dim, save_out=True, nondifferentiable=(1,))
_register("min.dim", _max_dim, save_out=True, nondifferentiable=(1,))


# -- matrix products -------------------------------------------------------------------------------------


def _matrices(self, other) -> bool:
    return self.ndim == 2 and other.ndim == 2


def _addmm(ctx, g):
    """self · beta + alpha · m1 m2: ``g · conj(beta)`` (summed to self's shape), ``alpha`` times mm's gradients."""
    m1, m2 = ctx.args[1], ctx.args[2]
    beta, alpha = _at(ctx.args, 3, 1), _at(ctx.args, 4, 1)
    need = ctx.needs_input_grad
    ga = _scaled(g, beta) if need[0] else None
    gs = _scaled(g, alpha)
    g1 = C.mm(gs, conj(C.transpose(m2, 0, 1))) if need[1] else None
    g2 = C.mm(conj(C.transpose(m1, 0, 1)), gs) if need[2] else None
    return (ga, g1, g2)


def _addmm_saves(needs) -> tuple:
    return tuple(i for i, j in ((1, 2), (2, 1)) if needs[j])


def _dot(ctx, g):
    """``g · conj(other)`` and ``g · conj(self)`` (g is 0-dim)."""
    a, b = ctx.args
    need = ctx.needs_input_grad
    return (C.mul.Tensor(g, conj(b)) if need[0] else None, C.mul.Tensor(g, conj(a)) if need[1] else None)


def _mv(ctx, g):
    """``outer(g, conj(vec))`` and ``conj(self)ᵀ · g``."""
    m, v = ctx.args
    need = ctx.needs_input_grad
    gm = C.outer(g, conj(v)) if need[0] else None
    gv = C.mv(conj(C.t(m)), g) if need[1] else None
    return (gm, gv)


def _matmul_redirect(self, other):
    """``matmul`` of a vector by a vector or a matrix by a vector records what PyTorch records: ``dot``, ``mv``."""
    if isinstance(self, Tensor) and isinstance(other, Tensor) and other.ndim == 1:
        if self.ndim == 1:
            return lambda: C.dot(self, other)
        if self.ndim == 2:
            return lambda: C.mv(self, other)
    return None


_register("mm", _mm, save=_cross)
_register("dot", _dot, save=_cross)
_register("mv", _mv, save=_cross)
_register_redirected("matmul", _matmul_redirect, _mm, save=_cross, name="MmBackward0", applies=_matrices)
_register("addmm", _addmm, save=_addmm_saves)


# -- ops whose results never require grad ------------------------------------------------------------------

for _op in ("eq", "ne", "lt", "le", "gt", "ge"):
    register_nondifferentiable(getattr(C, _op).Tensor)
    register_nondifferentiable(getattr(C, _op).Scalar)
for _op in ("isnan", "isfinite", "isinf", "ones_like", "zeros_like", "empty_like", "full_like"):
    register_nondifferentiable(getattr(C, _op).default)
