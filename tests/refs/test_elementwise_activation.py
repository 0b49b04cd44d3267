"""Activation functions against NumPy/SciPy formulas (PyTorch's CPU kernels' definitions).

Every activation on every dtype (values or TypeError, meta device), hypothesis
inputs for all of them (shapes incl. 0-dim/empty, layouts, nan/±inf/-0.0 where
the formula is defined), in-place and ``out=`` variants, argument errors.
"""

from __future__ import annotations

import math

import _ew_support as S
import numpy as np
import opweave as ow
import pytest
import scipy.special as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

SELU = (1.6732632423543772848170429916717, 1.0507009873554804934193349852946)


def _elu(x, alpha=1.0, scale=1.0, input_scale=1.0):
    return np.where(x <= 0, np.expm1(x * input_scale) * alpha * scale, x * scale)


def _gelu_tanh(x):
    inner = math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)
    return 0.5 * x * (1 + np.tanh(inner))


def _softshrink(x, lambd=0.5):
    return np.where(np.isnan(x), x, np.where(x > lambd, x - lambd, np.where(x < -lambd, x + lambd, 0.0)))


def _hardtanh(x, lo=-1, hi=1):
    return np.minimum(np.maximum(x, lo), hi)


# name -> (call, oracle, supported dtypes, specials allowed)
ACTIVATIONS = {
    "relu": (ow.relu, lambda x: np.where(x <= 0, 0, x), S.REAL, True),
    "relu6": (ow.relu6, lambda x: _hardtanh(x, 0, 6), S.REAL, True),
    "hardtanh": (ow.hardtanh, _hardtanh, S.REAL, True),
    "hardtanh_args": (lambda t: ow.hardtanh(t, -2, 3), lambda x: _hardtanh(x, -2, 3), S.REAL, True),
    "leaky_relu": (lambda t: ow.leaky_relu(t, 0.2), lambda x: np.where(x > 0, x, 0.2 * x), S.FLOAT, True),
    "threshold": (lambda t: ow.threshold(t, 1, 7), lambda x: np.where(x <= 1, 7, x), S.REAL, True),
    "hardshrink": (ow.hardshrink, lambda x: np.where((x >= -0.5) & (x <= 0.5), 0, x), S.FLOAT, True),
    "softshrink": (ow.softshrink, _softshrink, S.FLOAT, True),
    "hardsigmoid": (ow.hardsigmoid, lambda x: _hardtanh(x + 3, 0, 6) / 6, S.FLOAT, True),
    "hardswish": (ow.hardswish, lambda x: x * _hardtanh(x + 3, 0, 6) / 6, S.FLOAT, True),
    "elu": (ow.elu, _elu, S.FLOAT, True),
    "elu_args": (lambda t: ow.elu(t, 0.5, 2.0, 1.5), lambda x: _elu(x, 0.5, 2.0, 1.5), S.FLOAT, True),
    "selu": (ow.selu, lambda x: _elu(x, *SELU), S.FLOAT, True),
    "celu": (lambda t: ow.celu(t, 2.0), lambda x: _elu(x, 2.0, 1.0, 0.5), S.FLOAT, True),
    "gelu": (ow.gelu, lambda x: x * 0.5 * (1 + sp.erf(x / math.sqrt(2))), S.FLOAT, True),
    "gelu_tanh": (lambda t: ow.gelu(t, approximate="tanh"), _gelu_tanh, S.FLOAT, True),
    "silu": (ow.silu, lambda x: x / (1 + np.exp(-x)), S.FLOATING, True),
    "mish": (ow.mish, lambda x: x * np.tanh(np.log1p(np.exp(x))), S.FLOAT, True),
    "softplus": (ow.softplus, lambda x: np.where(x > 20, x, np.log1p(np.exp(x))), S.FLOAT, True),
    "softplus_args": (
        lambda t: ow.softplus(t, 2, 5),
        lambda x: np.where(2 * x > 5, x, np.log1p(np.exp(2 * x)) / 2),
        S.FLOAT,
        True,
    ),
    "log_sigmoid": (ow.log_sigmoid, lambda x: np.minimum(x, 0) - np.log1p(np.exp(-np.abs(x))), S.FLOAT, True),
    "tanhshrink": (ow.tanhshrink, lambda x: x - np.tanh(x), S.ALL, True),
}


def _run(name, t, v):
    call, oracle, supported, _ = ACTIVATIONS[name]
    out = call(t)
    if name == "tanhshrink":
        dtype = S.int_to_float(t.dtype)
    else:
        dtype = t.dtype
    x = S.wide(v)
    if S.category(dtype) >= 2 and x.dtype.kind in "bi":
        x = x.astype(np.float64)
    with S.oracle_errors():
        want = oracle(x)
    S.check(out, want, dtype, rtol=1e-4 if dtype in (ow.float32, ow.complex64) else None)
    return out


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_activation_every_dtype(name):
    call, _, supported, _ = ACTIVATIONS[name]
    for i, dtype in enumerate(S.ALL):
        rng = np.random.default_rng(i)
        t, v = S.generate(rng, (3, 4), dtype, S.LAYOUTS[i % 4], "any", specials=not dtype.is_complex)
        if dtype not in supported:
            with pytest.raises(TypeError):
                call(t)
            continue
        if name.startswith("hardtanh") and dtype is ow.uint8:
            with pytest.raises(ValueError, match="negative lower bound"):
                call(t)
            continue
        before = S.snapshot(t)
        out = _run(name, t, v)
        S.unchanged([t], before)
        m = call(S.meta_like(t))
        assert m.device.type == "meta" and m.shape == out.shape and m.dtype is out.dtype


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
@settings(max_examples=15, deadline=None)
@given(
    dtype=st.sampled_from(S.FLOAT),
    shape=hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4),
    layout=st.sampled_from(S.LAYOUTS),
    seed=st.integers(0, 2**32 - 1),
)
def test_activation_hypothesis(name, dtype, shape, layout, seed):
    t, v = S.generate(np.random.default_rng(seed), shape, dtype, layout)
    assert _run(name, t, v).shape == tuple(shape)


def test_special_values():
    x = ow.tensor([np.nan, -np.inf, np.inf, -0.0])
    assert np.isnan(ow.relu(x).numpy()[0]) and ow.relu(x).numpy()[1] == 0 and ow.relu(x).numpy()[2] == np.inf
    assert np.isnan(ow.hardtanh(x).numpy()[0]) and ow.hardtanh(x).numpy().tolist()[1:3] == [-1, 1]
    assert ow.elu(x).numpy()[1] == -1 and ow.softplus(x).numpy()[2] == np.inf
    assert ow.log_sigmoid(x).numpy()[1] == -np.inf and ow.gelu(x).numpy()[2] == np.inf
    assert np.isnan(ow.softshrink(x).numpy()[0])
    assert ow.relu(ow.tensor([-3, 0, 4], dtype=ow.int8)).tolist() == [0, 0, 4]
    assert ow.relu6(ow.tensor([-3, 9, 4])).tolist() == [0, 6, 4]
    assert ow.hardtanh(ow.tensor([-3, 9, 0], dtype=ow.uint8), 0, 5).tolist() == [5, 5, 0]
    assert ow.threshold(ow.tensor([1, 2, 3]), 2, 0).tolist() == [0, 0, 3]


def test_argument_errors():
    x = ow.tensor([1.0, -1.0])
    with pytest.raises(ValueError, match="approximate"):
        ow.gelu(x, approximate="fast")
    with pytest.raises(ValueError, match="celu"):
        ow.celu(x, 0.0)
    with pytest.raises(ValueError, match="softshrink"):
        ow.softshrink(x, -1.0)
    with pytest.raises(ValueError, match="hardtanh"):
        ow.hardtanh(ow.tensor([1], dtype=ow.uint8), -1, 1)
    with pytest.raises(TypeError, match="relu"):
        ow.relu(ow.tensor([True]))
    with pytest.raises(TypeError, match="gelu"):
        ow.gelu(ow.tensor([1, 2]))
    with pytest.raises(TypeError, match="mish"):
        ow.mish(ow.tensor([1j]))


VARIANTS = {
    "relu": (True, True),
    "relu6": (True, False),
    "hardtanh": (True, True),
    "leaky_relu": (True, True),
    "threshold": (True, True),
    "hardshrink": (False, True),
    "softshrink": (False, True),
    "hardsigmoid": (True, True),
    "hardswish": (True, True),
    "elu": (True, True),
    "selu": (True, False),
    "celu": (True, True),
    "gelu": (True, True),
    "silu": (True, True),
    "mish": (True, True),
    "softplus": (False, True),
    "log_sigmoid": (False, True),
    "tanhshrink": (False, True),
}


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_activation_variants(name):
    """In-place and out= variants exist where PyTorch has them and agree with the functional op."""
    inplace, out = VARIANTS[name]
    names = {o.name for o in ow.ops.catalog(kind="canonical")}
    assert (f"{name}_" in names) == inplace and (f"{name}.out" in names) == out
    extra = {"threshold": (0.5, -1.0)}.get(name, ())
    x = ow.tensor([[-2.0, -0.25, 0.0], [0.3, 1.5, 7.0]])
    want = np.array(getattr(ow, name)(x, *extra).numpy())
    if inplace:
        y = S.make(np.array(x.numpy()), ow.float32)
        assert getattr(y, f"{name}_")(*extra) is y
        S.check(y, want, ow.float32)
    if out:
        o = ow.empty([0])
        assert getattr(ow, name)(x, *extra, out=o) is o
        S.check(o, want, ow.float32)
