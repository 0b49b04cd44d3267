"""Formulas registered at the canonical elementwise, activation, reduction and matrix ops.

Gradients are compared with closed-form derivatives written here in NumPy/SciPy (float64),
on contiguous, transposed and strided inputs, with broadcasting; node names are PyTorch's;
a sample is differentiated twice; saved tensors still check their version counter.
"""

from __future__ import annotations

import math

import numpy as np
import opweave as ow
import opweave.nn.functional as F
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from opweave.autograd import gradcheck, gradgradcheck
from scipy import special

C = ow.ops.canonical
few = settings(max_examples=max(2, settings().max_examples // 4), deadline=None)

SHAPES = [(), (3,), (2, 3), (3, 1, 2)]
LAYOUTS = ["contiguous", "transposed", "strided"]


def _leaf(values: np.ndarray, layout: str = "contiguous", dtype=ow.float64):
    """A leaf requiring grad with ``values``, stored contiguously, transposed or with a step of 2."""
    values = np.asarray(values, dtype=np.float64)
    if values.ndim < 2 or layout == "contiguous":
        t = ow.tensor(values, dtype=dtype)
    elif layout == "transposed":
        t = ow.tensor(np.ascontiguousarray(values.swapaxes(-1, -2)), dtype=dtype).transpose(-1, -2)
    else:
        wide = np.repeat(values, 2, axis=-1)
        t = ow.tensor(wide, dtype=dtype)[..., ::2]
    assert np.array_equal(t.numpy(), values.astype(t.numpy().dtype))
    return t.requires_grad_()


def _reduce_to(g: np.ndarray, shape: tuple) -> np.ndarray:
    """Sum a broadcast gradient back to ``shape`` (what each operand's gradient must be)."""
    lead = g.ndim - len(shape)
    g = g.sum(axis=tuple(range(lead))) if lead else g
    axes = tuple(i for i, s in enumerate(shape) if s == 1 and g.shape[i] != 1)
    return g.sum(axis=axes, keepdims=True) if axes else g


def _backward(out, rng):
    """Backpropagate a random upstream gradient; returns it as NumPy."""
    g = rng.standard_normal(tuple(out.shape))
    out.backward(ow.tensor(g, dtype=out.dtype))
    return g


# name: (call, derivative f'(x) in NumPy, domain, PyTorch's node name)
UNARY = {
    "exp": (ow.exp, np.exp, (-2, 2), "ExpBackward0"),
    "exp2": (ow.exp2, lambda x: np.exp2(x) * math.log(2), (-2, 2), "Exp2Backward0"),
    "expm1": (ow.expm1, np.exp, (-2, 2), "Expm1Backward0"),
    "log": (ow.log, lambda x: 1 / x, (0.5, 3), "LogBackward0"),
    "log2": (ow.log2, lambda x: 1 / (x * math.log(2)), (0.5, 3), "Log2Backward0"),
    "log10": (ow.log10, lambda x: 1 / (x * math.log(10)), (0.5, 3), "Log10Backward0"),
    "log1p": (ow.log1p, lambda x: 1 / (1 + x), (-0.5, 3), "Log1PBackward0"),
    "sqrt": (ow.sqrt, lambda x: 0.5 / np.sqrt(x), (0.5, 3), "SqrtBackward0"),
    "rsqrt": (ow.rsqrt, lambda x: -0.5 * x**-1.5, (0.5, 3), "RsqrtBackward0"),
    "sin": (ow.sin, np.cos, (-3, 3), "SinBackward0"),
    "cos": (ow.cos, lambda x: -np.sin(x), (-3, 3), "CosBackward0"),
    "tan": (ow.tan, lambda x: 1 / np.cos(x) ** 2, (-1.2, 1.2), "TanBackward0"),
    "tanh": (ow.tanh, lambda x: 1 - np.tanh(x) ** 2, (-3, 3), "TanhBackward0"),
    "sinh": (ow.sinh, np.cosh, (-2, 2), "SinhBackward0"),
    "cosh": (ow.cosh, np.sinh, (-2, 2), "CoshBackward0"),
    "asin": (ow.asin, lambda x: 1 / np.sqrt(1 - x * x), (-0.9, 0.9), "AsinBackward0"),
    "acos": (ow.acos, lambda x: -1 / np.sqrt(1 - x * x), (-0.9, 0.9), "AcosBackward0"),
    "atan": (ow.atan, lambda x: 1 / (1 + x * x), (-3, 3), "AtanBackward0"),
    "asinh": (ow.asinh, lambda x: 1 / np.sqrt(1 + x * x), (-3, 3), "AsinhBackward0"),
    "acosh": (ow.acosh, lambda x: 1 / np.sqrt(x * x - 1), (1.5, 3), "AcoshBackward0"),
    "atanh": (ow.atanh, lambda x: 1 / (1 - x * x), (-0.9, 0.9), "AtanhBackward0"),
    "sigmoid": (ow.sigmoid, lambda x: special.expit(x) * (1 - special.expit(x)), (-4, 4), "SigmoidBackward0"),
    "reciprocal": (ow.reciprocal, lambda x: -1 / (x * x), (0.5, 3), "ReciprocalBackward0"),
    "erf": (ow.erf, lambda x: 2 / math.sqrt(math.pi) * np.exp(-x * x), (-2, 2), "ErfBackward0"),
    "erfc": (ow.erfc, lambda x: -2 / math.sqrt(math.pi) * np.exp(-x * x), (-2, 2), "ErfcBackward0"),
    "erfinv": (ow.erfinv, lambda x: math.sqrt(math.pi) / 2 * np.exp(special.erfinv(x) ** 2), (-0.9, 0.9), None),
    "lgamma": (ow.lgamma, special.digamma, (0.5, 4), "LgammaBackward0"),
    "digamma": (ow.digamma, lambda x: special.polygamma(1, x), (0.5, 4), "DigammaBackward0"),
    "abs": (ow.abs, np.sign, (0.1, 3), "AbsBackward0"),
    "neg": (ow.neg, lambda x: -np.ones_like(x), (-3, 3), "NegBackward0"),
    "square": (ow.square, lambda x: 2 * x, (-3, 3), "PowBackward0"),
}


@few
@given(
    name=st.sampled_from(sorted(UNARY)),
    shape=st.sampled_from(SHAPES),
    layout=st.sampled_from(LAYOUTS),
    negate=st.booleans(),
    seed=st.integers(0, 2**32 - 1),
)
def test_unary_gradient_is_the_closed_form_derivative(name, shape, layout, negate, seed):
    fn, derivative, (lo, hi), node = UNARY[name]
    rng = np.random.default_rng(seed)
    x = rng.uniform(lo, hi, shape)
    if negate and name == "abs":
        x = -x
    t = _leaf(x, layout)
    out = fn(t)
    if node is not None:
        assert out.grad_fn.name() == node
    g = _backward(out, rng)
    assert t.grad.dtype == ow.float64 and tuple(t.grad.shape) == shape
    np.testing.assert_allclose(t.grad.numpy(), g * derivative(x), rtol=1e-10, atol=1e-12)


def _pow_derivatives(a, b):
    return b * a ** (b - 1), a**b * np.log(a)


# name: (call, (∂/∂a, ∂/∂b) in NumPy, node name); a in (0.5, 2), b in (-2, 2) shifted away from 0
BINARY = {
    "add": (lambda a, b: a + b, lambda a, b: (np.ones_like(a * b), np.ones_like(a * b)), "AddBackward0"),
    "add_alpha": (
        lambda a, b: ow.add(a, b, alpha=2.5),
        lambda a, b: (np.ones_like(a * b), np.full_like(a * b, 2.5)),
        "AddBackward0",
    ),
    "sub": (lambda a, b: a - b, lambda a, b: (np.ones_like(a * b), -np.ones_like(a * b)), "SubBackward0"),
    "sub_alpha": (
        lambda a, b: ow.sub(a, b, alpha=-3),
        lambda a, b: (np.ones_like(a * b), np.full_like(a * b, 3.0)),
        "SubBackward0",
    ),
    "rsub": (lambda a, b: ow.rsub(a, b, alpha=2), lambda a, b: (np.full_like(a * b, -2.0), np.ones_like(a * b)), None),
    "mul": (lambda a, b: a * b, lambda a, b: (b * np.ones_like(a), a * np.ones_like(b)), "MulBackward0"),
    "div": (lambda a, b: a / b, lambda a, b: (1 / b * np.ones_like(a), -a / (b * b)), "DivBackward0"),
    "true_divide": (lambda a, b: ow.true_divide(a, b), lambda a, b: (1 / b * np.ones_like(a), -a / (b * b)), None),
    "pow": (lambda a, b: a**b, _pow_derivatives, "PowBackward1"),
    "where": (
        lambda a, b: ow.where(a > 1.0, a, b),
        lambda a, b: (
            np.broadcast_to(a > 1.0, np.broadcast(a, b).shape),
            np.broadcast_to(a <= 1.0, np.broadcast(a, b).shape),
        ),
        "WhereBackward0",
    ),
}

BROADCASTS = [((2, 3), (2, 3)), ((2, 3), (3,)), ((3,), (2, 3)), ((2, 1), (1, 3)), ((), (2, 3)), ((2, 3), ())]


@few
@given(
    name=st.sampled_from(sorted(BINARY)),
    shapes=st.sampled_from(BROADCASTS),
    layout=st.sampled_from(LAYOUTS),
    seed=st.integers(0, 2**32 - 1),
)
def test_binary_gradients_are_reduced_to_each_operand(name, shapes, layout, seed):
    fn, derivatives, node = BINARY[name]
    rng = np.random.default_rng(seed)
    a = rng.uniform(0.5, 2.0, shapes[0])
    b = rng.uniform(0.5, 2.0, shapes[1]) * rng.choice([-1.0, 1.0], shapes[1])
    ta, tb = _leaf(a, layout), _leaf(b, layout)
    out = fn(ta, tb)
    if node is not None:
        assert out.grad_fn.name() == node
    g = _backward(out, rng)
    da, db = derivatives(a, b)
    np.testing.assert_allclose(ta.grad.numpy(), _reduce_to(g * da, shapes[0]), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(tb.grad.numpy(), _reduce_to(g * db, shapes[1]), rtol=1e-10, atol=1e-12)


# Tensor-Scalar: (call, derivative, node name)
SCALAR = {
    "a * 2.5": (lambda a: a * 2.5, lambda a: np.full_like(a, 2.5), "MulBackward0"),
    "2.5 * a": (lambda a: 2.5 * a, lambda a: np.full_like(a, 2.5), "MulBackward0"),
    "a + 1": (lambda a: a + 1, np.ones_like, "AddBackward0"),
    "a - 1.5": (lambda a: a - 1.5, np.ones_like, "SubBackward0"),
    "3 - a": (lambda a: 3 - a, lambda a: -np.ones_like(a), "RsubBackward1"),
    "a / 4": (lambda a: a / 4, lambda a: np.full_like(a, 0.25), "DivBackward0"),
    "1 / a": (lambda a: 1 / a, lambda a: -1 / (a * a), None),
    "a ** 3": (lambda a: a**3, lambda a: 3 * a * a, "PowBackward0"),
    "a ** 0.5": (lambda a: a**0.5, lambda a: 0.5 / np.sqrt(a), "PowBackward0"),
    "a ** 0": (lambda a: a**0, np.zeros_like, "PowBackward0"),
    "2 ** a": (lambda a: 2**a, lambda a: 2**a * math.log(2), "PowBackward2"),
    "mul.Scalar": (lambda a: C.mul.Scalar(a, -2), lambda a: np.full_like(a, -2.0), "MulBackward1"),
    "add.Scalar": (lambda a: C.add.Scalar(a, 7, 2), np.ones_like, "AddBackward1"),
    "sub.Scalar": (lambda a: C.sub.Scalar(a, 7), np.ones_like, "SubBackward1"),
    "rsub.Scalar": (lambda a: C.rsub.Scalar(a, 7, 3), lambda a: np.full_like(a, -3.0), "RsubBackward1"),
    "div.Scalar": (lambda a: C.div.Scalar(a, 8), lambda a: np.full_like(a, 0.125), "DivBackward1"),
    "pow.Scalar": (lambda a: C.pow.Scalar(3.0, a), lambda a: 3.0**a * math.log(3.0), "PowBackward2"),
}


@few
@given(
    name=st.sampled_from(sorted(SCALAR)),
    shape=st.sampled_from(SHAPES),
    layout=st.sampled_from(LAYOUTS),
    dtype=st.sampled_from([ow.float32, ow.float64]),
    seed=st.integers(0, 2**32 - 1),
)
def test_tensor_scalar_keeps_the_tensor_dtype(name, shape, layout, dtype, seed):
    fn, derivative, node = SCALAR[name]
    rng = np.random.default_rng(seed)
    a = rng.uniform(0.5, 2.0, shape)
    t = _leaf(a, layout, dtype)
    out = fn(t)
    assert out.dtype == dtype
    if node is not None:
        assert out.grad_fn.name() == node
    g = _backward(out, rng)
    assert t.grad.dtype == dtype
    tol = 1e-5 if dtype == ow.float32 else 1e-10
    a32 = t.detach().numpy().astype(np.float64)
    g32 = np.asarray(ow.tensor(g, dtype=dtype).numpy(), dtype=np.float64)
    np.testing.assert_allclose(t.grad.numpy(), g32 * derivative(a32), rtol=tol, atol=tol)


def test_an_integer_operand_gets_no_gradient_and_the_float_one_keeps_its_dtype():
    a = ow.tensor([1.5, -2.0, 3.0], dtype=ow.float32, requires_grad=True)
    i = ow.tensor([2, 3, 4])
    (a * i).sum().backward()
    assert a.grad.dtype == ow.float32 and i.grad is None
    np.testing.assert_array_equal(a.grad.numpy(), [2.0, 3.0, 4.0])
    with pytest.raises(RuntimeError):
        ow.tensor([1, 2]).requires_grad_()


def test_complex_operands_follow_pytorchs_conjugate_convention():
    rng = np.random.default_rng(0)
    a = rng.standard_normal(3) + 1j * rng.standard_normal(3)
    b = rng.standard_normal(3) + 1j * rng.standard_normal(3)
    ta, tb = (ow.tensor(v, dtype=ow.complex128, requires_grad=True) for v in (a, b))
    g = rng.standard_normal(3) + 1j * rng.standard_normal(3)
    (ta * tb).backward(ow.tensor(g, dtype=ow.complex128))
    np.testing.assert_allclose(ta.grad.numpy(), g * np.conj(b), rtol=1e-12)
    np.testing.assert_allclose(tb.grad.numpy(), g * np.conj(a), rtol=1e-12)
    x = ow.tensor(a, dtype=ow.complex128, requires_grad=True)
    ow.exp(x).backward(ow.tensor(g, dtype=ow.complex128))
    np.testing.assert_allclose(x.grad.numpy(), g * np.conj(np.exp(a)), rtol=1e-12)
    for fn in (lambda p, q: p / q, lambda p, q: ow.add(p, q, alpha=2 - 1j), lambda p, q: p**q, lambda p, q: p * 1j):
        assert gradcheck(fn, (ta.detach().requires_grad_(), tb.detach().requires_grad_()))
    # a real tensor times a complex one: the real operand's gradient is real
    r = ow.tensor(rng.standard_normal(3), dtype=ow.float64, requires_grad=True)
    (r * tb.detach()).backward(ow.tensor(g, dtype=ow.complex128))
    assert r.grad.dtype == ow.float64
    np.testing.assert_allclose(r.grad.numpy(), np.real(g * np.conj(b)), rtol=1e-12)


def _gelu_tanh_derivative(x):
    beta, kappa = math.sqrt(2 / math.pi), 0.044715
    t = np.tanh(beta * (x + kappa * x**3))
    return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * beta * (1 + 3 * kappa * x * x)


def _softplus_derivative(x, beta=2.0, threshold=3.0):
    return np.where(beta * x > threshold, 1.0, special.expit(beta * x))


def _elu_derivative(x, alpha=1.5, scale=1.2, input_scale=0.7):
    return np.where(x <= 0, input_scale * alpha * scale * np.exp(x * input_scale), scale)


def _mish_derivative(x):
    softplus = np.log1p(np.exp(x))
    t = np.tanh(softplus)
    return t + x * special.expit(x) * (1 - t * t)


_SELU_ALPHA, _SELU_SCALE = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946

# name: (call, derivative, node name)
ACTIVATIONS = {
    "gelu": (F.gelu, lambda x: special.ndtr(x) + x * np.exp(-x * x / 2) / math.sqrt(2 * math.pi), "GeluBackward0"),
    "gelu_tanh": (lambda x: F.gelu(x, approximate="tanh"), _gelu_tanh_derivative, "GeluBackward0"),
    "silu": (F.silu, lambda x: special.expit(x) * (1 + x * (1 - special.expit(x))), "SiluBackward0"),
    "leaky_relu": (lambda x: F.leaky_relu(x, 0.2), lambda x: np.where(x > 0, 1.0, 0.2), "LeakyReluBackward0"),
    "softplus": (lambda x: F.softplus(x, beta=2.0, threshold=3.0), _softplus_derivative, "SoftplusBackward0"),
    "elu": (lambda x: C.elu(x, 1.5, 1.2, 0.7), _elu_derivative, "EluBackward0"),
    "hardtanh": (
        lambda x: F.hardtanh(x, -0.5, 1.0),
        lambda x: ((x > -0.5) & (x < 1.0)).astype(float),
        "HardtanhBackward0",
    ),
    "clamp": (lambda x: x.clamp(-0.5, 1.0), lambda x: ((x >= -0.5) & (x <= 1.0)).astype(float), "ClampBackward1"),
    "clamp_min": (lambda x: x.clamp(min=0.25), lambda x: (x >= 0.25).astype(float), None),
    "clamp_max": (lambda x: C.clamp_max(x, 0.25), lambda x: (x <= 0.25).astype(float), "ClampMaxBackward0"),
    "relu6": (lambda x: F.relu6(x * 3), lambda x: 3.0 * ((x * 3 > 0) & (x * 3 < 6)), "HardtanhBackward0"),
    "hardsigmoid": (
        lambda x: F.hardsigmoid(x * 2),
        lambda x: np.where(np.abs(x * 2) < 3, 2 / 6, 0.0),
        "HardsigmoidBackward0",
    ),
    "hardswish": (
        lambda x: F.hardswish(x * 2),
        lambda x: 2 * np.where(x * 2 <= -3, 0.0, np.where(x * 2 < 3, 2 * x / 3 + 0.5, 1.0)),
        "HardswishBackward0",
    ),
    "logsigmoid": (F.logsigmoid, lambda x: 1 / (1 + np.exp(x)), "LogSigmoidBackward0"),
    "mish": (F.mish, _mish_derivative, "MishBackward0"),
    "selu": (F.selu, lambda x: np.where(x <= 0, _SELU_ALPHA * _SELU_SCALE * np.exp(x), _SELU_SCALE), "EluBackward0"),
}


@few
@given(
    name=st.sampled_from(sorted(ACTIVATIONS)),
    shape=st.sampled_from(SHAPES),
    layout=st.sampled_from(LAYOUTS),
    seed=st.integers(0, 2**32 - 1),
)
def test_activation_gradients(name, shape, layout, seed):
    fn, derivative, node = ACTIVATIONS[name]
    rng = np.random.default_rng(seed)
    x = rng.uniform(-3, 3, shape)
    x = np.where(np.abs(x - 0.25) < 1e-3, 0.3, x)  # no input exactly at a kink
    t = _leaf(x, layout)
    out = fn(t)
    if node is not None:
        assert out.grad_fn.name() == node
    g = _backward(out, rng)
    np.testing.assert_allclose(t.grad.numpy(), g * derivative(x), rtol=1e-9, atol=1e-12)


# name: (call, node name, masks of x, min, max given the NumPy inputs; None: that operand is not passed)
TENSOR_BOUNDS = {
    "clamp": (
        lambda t, lo, hi: ow.clamp(t, lo, hi),
        "ClampBackward0",
        lambda x, lo, hi: ((x >= lo) & (x <= hi), (x < lo) & (lo < hi), (x > hi) | (hi < lo)),
    ),
    "clamp_min_only": (
        lambda t, lo, hi: ow.clamp(t, min=lo),
        "ClampBackward0",
        lambda x, lo, hi: (x >= lo, x < lo, None),
    ),
    "clamp_max_only": (
        lambda t, lo, hi: ow.clamp(t, max=hi),
        "ClampBackward0",
        lambda x, lo, hi: (x <= hi, None, x > hi),
    ),
    "clamp_min": (
        lambda t, lo, hi: ow.clamp_min(t, lo),
        "ClampMinBackward1",
        lambda x, lo, hi: (x >= lo, x < lo, None),
    ),
    "clamp_max": (
        lambda t, lo, hi: ow.clamp_max(t, hi),
        "ClampMaxBackward1",
        lambda x, lo, hi: (x <= hi, None, x > hi),
    ),
}


@few
@given(name=st.sampled_from(sorted(TENSOR_BOUNDS)), layout=st.sampled_from(LAYOUTS), seed=st.integers(0, 2**32 - 1))
def test_tensor_bounds_get_the_gradient_where_they_are_the_result(name, layout, seed):
    call, node, masks = TENSOR_BOUNDS[name]
    rng = np.random.default_rng(seed)
    x, lo, hi = rng.uniform(-2, 2, (3, 4)), rng.uniform(-1, 0.5, (4,)), rng.uniform(-0.5, 1, (3, 1))
    t, tlo, thi = _leaf(x, layout), _leaf(lo), _leaf(hi, layout)
    out = call(t, tlo, thi)
    assert out.grad_fn.name() == node
    with_min = np.maximum(x, lo) if masks(x, lo, hi)[1] is not None else x
    expected = np.minimum(with_min, hi) if masks(x, lo, hi)[2] is not None else with_min
    np.testing.assert_array_equal(out.detach().numpy(), expected)
    g = _backward(out, rng)
    for leaf, value, mask in zip((t, tlo, thi), (x, lo, hi), masks(x, lo, hi)):
        if mask is None:
            assert leaf.grad is None
        else:
            np.testing.assert_allclose(
                leaf.grad.numpy(), _reduce_to(np.where(mask, g, 0.0), value.shape), rtol=1e-12, atol=1e-12
            )


@few
@given(mode=st.sampled_from(["floor", "trunc"]), layout=st.sampled_from(LAYOUTS), seed=st.integers(0, 2**32 - 1))
def test_division_with_a_rounding_mode_sends_zeros(mode, layout, seed):
    rng = np.random.default_rng(seed)
    x, y = rng.uniform(-5, 5, (2, 3)), rng.uniform(0.5, 2, (3,))
    a, b = _leaf(x, layout), _leaf(y)
    out = ow.div(a, b, rounding_mode=mode)
    assert out.grad_fn.name() == "DivBackward2"
    rounded = np.floor(x / y) if mode == "floor" else np.trunc(x / y)
    np.testing.assert_array_equal(out.detach().numpy(), rounded)
    g = rng.standard_normal((2, 3))
    g[0, 0] = math.nan  # PyTorch sends zeros, not grad * 0
    out.backward(ow.tensor(g, dtype=ow.float64))
    np.testing.assert_array_equal(a.grad.numpy(), np.zeros((2, 3)))
    np.testing.assert_array_equal(b.grad.numpy(), np.zeros(3))
    a.grad = None
    scalar = C.div.Scalar_mode(a, 2.5, rounding_mode=mode)
    assert scalar.grad_fn.name() == "DivBackward3"
    scalar.sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), np.zeros((2, 3)))


def test_activations_at_their_kinks_and_nan_follow_pytorch():
    x = ow.tensor([-1.0, 0.0, 1.0, math.nan], dtype=ow.float64, requires_grad=True)
    F.hardtanh(x).backward(ow.ones(4, dtype=ow.float64))
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 1.0, 0.0, 1.0])  # the bounds send none; NaN does
    x.grad = None
    x.clamp(-1.0, 1.0).backward(ow.ones(4, dtype=ow.float64))
    np.testing.assert_array_equal(x.grad.numpy(), [1.0, 1.0, 1.0, 0.0])  # the bounds are inside; NaN is not
    x.grad = None
    F.leaky_relu(x, 0.5).backward(ow.ones(4, dtype=ow.float64))
    np.testing.assert_array_equal(x.grad.numpy(), [0.5, 0.5, 1.0, 0.5])


def test_hard_activations_at_their_kinks_follow_pytorch():
    x = ow.tensor([-3.0, 0.0, 3.0, 6.0, math.nan], dtype=ow.float64, requires_grad=True)
    F.hardswish(x).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 0.5, 1.0, 1.0, 1.0])  # hardswish_backward's bounds
    x.grad = None
    F.hardsigmoid(x).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 1 / 6, 0.0, 0.0, 0.0])
    x.grad = None
    F.relu6(x).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 0.0, 1.0, 0.0, 1.0])  # hardtanh(x, 0, 6)'s rule


REDUCTIONS = [
    ((3, 4), None, False),
    ((3, 4), [1], False),
    ((3, 4), [0], True),
    ((2, 3, 4), [0, 2], False),
    ((), None, False),
]


@few
@given(case=st.sampled_from(REDUCTIONS), layout=st.sampled_from(LAYOUTS), seed=st.integers(0, 2**32 - 1))
def test_sum_mean_amax_gradients(case, layout, seed):
    shape, dims, keepdim = case
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    axes = tuple(range(len(shape))) if dims is None else tuple(dims)
    n = math.prod(shape[d] for d in axes) if shape else 1
    for name, fn, node in [
        ("sum", lambda t: t.sum() if dims is None else t.sum(dims, keepdim=keepdim), ("SumBackward0", "SumBackward1")),
        (
            "mean",
            lambda t: t.mean() if dims is None else t.mean(dims, keepdim=keepdim),
            ("MeanBackward0", "MeanBackward1"),
        ),
        ("amax", lambda t: ow.amax(t, [] if dims is None else dims, keepdim), ("AmaxBackward0",)),
    ]:
        t = _leaf(x, layout)
        out = fn(t)
        assert out.grad_fn.name() in node
        g = _backward(out, rng)
        gk = np.asarray(g).reshape([1 if d in axes else s for d, s in enumerate(shape)]) if shape else g
        if name == "sum":
            expected = np.broadcast_to(gk, shape)
        elif name == "mean":
            expected = np.broadcast_to(gk / n, shape)
        else:
            mask = x == x.max(axis=axes, keepdims=True) if shape else np.ones(())
            expected = gk * mask / mask.sum(axis=axes, keepdims=True)
        np.testing.assert_allclose(t.grad.numpy(), expected, rtol=1e-12, atol=1e-14)


def test_max_shares_ties_and_max_dim_selects_the_index():
    x = ow.tensor([[1.0, 3.0, 3.0], [2.0, 0.0, -1.0]], dtype=ow.float64, requires_grad=True)
    out = x.max()
    assert out.grad_fn.name() == "MaxBackward1"
    out.backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[0, 0.5, 0.5], [0, 0, 0]])
    x.grad = None
    values, indices = x.max(1)
    assert values.grad_fn.name() == "MaxBackward0" and not indices.requires_grad
    values.backward(ow.tensor([10.0, 20.0], dtype=ow.float64))
    expected = np.zeros((2, 3))
    expected[0, indices.numpy()[0]] = 10.0
    expected[1, 0] = 20.0
    np.testing.assert_array_equal(x.grad.numpy(), expected)
    n = ow.tensor([1.0, math.nan, 2.0, math.nan], dtype=ow.float64, requires_grad=True)
    n.max().backward()
    np.testing.assert_array_equal(n.grad.numpy(), [0, 0.5, 0, 0.5])  # a NaN maximum: shared among the NaNs


@few
@given(seed=st.integers(0, 2**32 - 1), layout=st.sampled_from(LAYOUTS), bias=st.sampled_from([(4,), (3, 4), (1, 4)]))
def test_matrix_products(seed, layout, bias):
    rng = np.random.default_rng(seed)
    a, b, c = rng.standard_normal((3, 5)), rng.standard_normal((5, 4)), rng.standard_normal(bias)
    for name, fn, node in [
        ("mm", lambda ta, tb, tc: ow.mm(ta, tb), "MmBackward0"),
        ("matmul", lambda ta, tb, tc: ta @ tb, "MmBackward0"),
        ("addmm", lambda ta, tb, tc: ow.addmm(tc, ta, tb, beta=0.5, alpha=2.0), "AddmmBackward0"),
    ]:
        ta, tb, tc = _leaf(a, layout), _leaf(b, layout), _leaf(c, layout)
        out = fn(ta, tb, tc)
        assert out.grad_fn.name() == node
        g = _backward(out, rng)
        scale = 2.0 if name == "addmm" else 1.0
        np.testing.assert_allclose(ta.grad.numpy(), scale * g @ b.T, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(tb.grad.numpy(), scale * a.T @ g, rtol=1e-10, atol=1e-12)
        if name == "addmm":
            np.testing.assert_allclose(tc.grad.numpy(), _reduce_to(0.5 * g, bias), rtol=1e-10, atol=1e-12)


@few
@given(seed=st.integers(0, 2**32 - 1), layout=st.sampled_from(LAYOUTS), complex_=st.booleans())
def test_vector_products_record_dot_and_mv(seed, layout, complex_):
    rng = np.random.default_rng(seed)
    dtype = ow.complex128 if complex_ else ow.float64

    def sample(shape):
        x = rng.standard_normal(shape)
        return x + 1j * rng.standard_normal(shape) if complex_ else x

    def leaf(x):
        t = ow.tensor(x, dtype=dtype)
        if layout != "contiguous" and t.ndim == 2:  # a transposed copy of the same values
            t = ow.tensor(np.ascontiguousarray(x.T), dtype=dtype).transpose(0, 1)
        return t.requires_grad_()

    m, v, w = sample((3, 4)), sample((4,)), sample((4,))
    for name, (x, y), node in [("dot", (v, w), "DotBackward0"), ("mv", (m, v), "MvBackward0")]:
        for call in (lambda p, q: p @ q, getattr(ow, name)):
            tx, ty = leaf(x), leaf(y)
            out = call(tx, ty)
            assert out.grad_fn.name() == node
            np.testing.assert_allclose(out.detach().numpy(), x @ y, rtol=1e-12, atol=1e-12)
            g = sample(tuple(out.shape))
            out.backward(ow.tensor(g, dtype=dtype))
            gx = g * np.conj(y) if name == "dot" else np.outer(g, np.conj(y))  # PyTorch's conjugate convention
            gy = g * np.conj(x) if name == "dot" else np.conj(x).T @ g
            np.testing.assert_allclose(tx.grad.numpy(), gx, rtol=1e-10, atol=1e-12)
            np.testing.assert_allclose(ty.grad.numpy(), gy, rtol=1e-10, atol=1e-12)


DOUBLE = [
    lambda a, b: a * b,
    lambda a, b: a / b,
    lambda a, b: ow.add(a, b, alpha=2) ** 2,
    lambda a, b: a.abs() ** b,
    lambda a, b: ow.exp(a) * ow.tanh(b),
    lambda a, b: ow.sigmoid(a) + ow.sqrt(b.abs() + 1),
    lambda a, b: F.gelu(a) * F.silu(b),
    lambda a, b: F.softplus(a, beta=2.0) + F.elu(b),
    lambda a, b: F.mish(a) * F.logsigmoid(b),
    lambda a, b: F.selu(a - 1.2) * F.hardswish(b),
    lambda a, b: F.hardsigmoid(a) * F.relu6(b * 4) * a,
    lambda a, b: ow.where(a > 0, a * a, b).sum(0),
    lambda a, b: (a * b).mean(1),
    lambda a, b: ow.amax(a * b, [1]),
    lambda a, b: ow.addmm(a[0], a, b.t()),
    lambda a, b: (a @ b[0]) * (a[1] @ b[2]),
]


@pytest.mark.parametrize("index", range(len(DOUBLE)))
def test_double_backward(index):
    rng = np.random.default_rng(index)
    a = ow.tensor(rng.uniform(0.5, 2.0, (3, 3)), dtype=ow.float64, requires_grad=True)
    b = ow.tensor(rng.uniform(0.5, 2.0, (3, 3)), dtype=ow.float64, requires_grad=True)
    assert gradgradcheck(DOUBLE[index], (a, b))


def test_a_saved_operand_changed_in_place_raises_at_backward():
    x = ow.tensor([1.0, 2.0], dtype=ow.float64, requires_grad=True)
    b = x.clone()
    y = x * b
    b.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()
    z = x.clone()
    e = ow.exp(z)
    e.mul_(2.0)  # exp saves its output: writing into it is caught too
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        e.sum().backward()


def test_in_place_and_out_variants_keep_their_rules():
    x = ow.tensor([1.0, -2.0], dtype=ow.float64, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable"):
        x.mul_(2.0)
    with pytest.raises(RuntimeError, match="out=..."):
        ow.mul(x, 2.0, out=ow.empty(2, dtype=ow.float64))
    y = x.clone()
    v = y[1:]
    v.mul_(3.0)  # an in-place op on a view: the base's history is rewritten
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [1.0, 3.0])


def test_comparisons_and_like_factories_record_nothing():
    x = ow.tensor([1.0, -2.0], requires_grad=True)
    for out in (x > 0, x == x, ow.isnan(x), ow.ones_like(x), ow.zeros_like(x), ow.full_like(x, 2.0)):
        assert not out.requires_grad and out.grad_fn is None
    assert ow.ones_like(x, requires_grad=True).requires_grad
