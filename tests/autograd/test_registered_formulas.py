"""The canonical ops with their own backward formula (linear, relu, cross_entropy): gradcheck in float64.

Each records one node instead of its decomposition's several; the calls a formula does not
cover (label smoothing, class-probability targets, a weight that requires grad) go through
the decomposition, and are checked too.
"""

from __future__ import annotations

import numpy as np
import opweave as ow
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from opweave.autograd import gradcheck, gradgradcheck

C = ow.ops.canonical
few = settings(max_examples=max(2, settings().max_examples // 4))


def _leaf(values, complex_=False):
    return ow.tensor(values, dtype=ow.complex128 if complex_ else ow.float64, requires_grad=True)


def _values(rng, shape, complex_=False):
    v = rng.standard_normal(shape)
    return v + 1j * rng.standard_normal(shape) if complex_ else v


@few
@given(
    seed=st.integers(0, 2**32 - 1),
    batch=st.sampled_from([(), (3,), (2, 2)]),
    features=st.integers(1, 3),
    out=st.sampled_from([None, 1, 2]),
    bias=st.booleans(),
    complex_=st.booleans(),
)
def test_linear(seed, batch, features, out, bias, complex_):
    rng = np.random.default_rng(seed)
    x = _leaf(_values(rng, batch + (features,), complex_), complex_)
    w = _leaf(_values(rng, (features,) if out is None else (out, features), complex_), complex_)
    inputs = (x, w)
    if bias:
        inputs += (_leaf(_values(rng, () if out is None else (out,), complex_), complex_),)
    assert gradcheck(lambda *a: C.linear(*a), inputs)
    if not complex_:
        assert gradgradcheck(lambda *a: C.linear(*a), inputs)
    assert C.linear(*inputs).grad_fn.name() == "LinearBackward0"


def test_relu_gradient_is_zero_where_the_output_is_not_positive():
    x = _leaf([-1.0, 0.0, 0.5, 2.0])
    ow.relu(x).backward(ow.tensor([1.0, 2.0, 3.0, 4.0], dtype=ow.float64))
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 0.0, 3.0, 4.0])
    y = _leaf(np.random.default_rng(0).uniform(0.1, 1.0, (2, 3)) * np.array([1, -1, 1]))
    assert gradcheck(ow.relu, (y,)) and gradgradcheck(ow.relu, (y,))


def _softmax(x, axis):
    e = np.exp(x - x.max(axis, keepdims=True))
    return e / e.sum(axis, keepdims=True)


@few
@given(
    seed=st.integers(0, 2**32 - 1),
    shape=st.sampled_from([(4,), (3, 4), (2, 4, 3)]),
    reduction=st.sampled_from(["none", "mean", "sum"]),
    weighted=st.booleans(),
    ignore=st.booleans(),
)
def test_cross_entropy_class_indices(seed, shape, reduction, weighted, ignore):
    rng = np.random.default_rng(seed)
    classes = shape[0] if len(shape) == 1 else shape[1]
    target_shape = () if len(shape) == 1 else (shape[0],) + shape[2:]
    target = rng.integers(0, classes, target_shape)
    if ignore and target.size > 1:
        target.flat[0] = -100
    weight = rng.uniform(0.5, 2.0, classes) if weighted else None
    x = _leaf(rng.standard_normal(shape))
    t, w = ow.tensor(target), None if weight is None else ow.tensor(weight)

    def fn(a):
        return ow.nn.functional.cross_entropy(a, t, w, reduction=reduction)

    assert gradcheck(fn, (x,))
    assert fn(x).grad_fn.name() == "CrossEntropyLossBackward0"
    # against the closed form: (softmax - onehot) * w[t] * upstream (/ sum of the weights for the mean)
    out = fn(x)
    upstream = rng.standard_normal(tuple(out.shape))
    out.backward(ow.tensor(upstream))
    cdim = 0 if len(shape) == 1 else 1
    xv = x.detach().numpy()
    probs = _softmax(xv, cdim)
    kept = target != -100
    safe = np.where(kept, target, 0)
    wt = (weight[safe] if weight is not None else np.ones(target.shape)) * kept
    coef = wt * upstream
    if reduction == "mean":
        coef = coef / wt.sum()
    onehot = np.moveaxis(np.eye(classes)[safe], -1, cdim)
    np.testing.assert_allclose(x.grad.numpy(), (probs - onehot) * np.expand_dims(coef, cdim), atol=1e-12)


@pytest.mark.parametrize("case", ["label_smoothing", "probabilities", "weight_requires_grad"])
def test_cross_entropy_calls_the_formula_does_not_cover(case):
    rng = np.random.default_rng(1)
    x = _leaf(rng.standard_normal((3, 4)))
    target = ow.tensor([0, 3, 1])
    weight = ow.tensor(rng.uniform(0.5, 2.0, 4), dtype=ow.float64)
    if case == "label_smoothing":
        inputs, fn = (x,), lambda a: ow.nn.functional.cross_entropy(a, target, label_smoothing=0.2)
    elif case == "probabilities":
        probs = ow.tensor(_softmax(rng.standard_normal((3, 4)), 1))
        inputs, fn = (x,), lambda a: ow.nn.functional.cross_entropy(a, probs)
    else:
        inputs, fn = (x, weight.requires_grad_()), lambda a, b: ow.nn.functional.cross_entropy(a, target, b)
    assert gradcheck(fn, inputs)
    assert fn(*inputs).grad_fn.name() != "CrossEntropyLossBackward0"


@few
@given(
    seed=st.integers(0, 2**32 - 1),
    reduce=st.sampled_from(["sum", "prod", "mean", "amax", "amin"]),
    include_self=st.booleans(),
    zero=st.booleans(),
    wider_src=st.booleans(),
)
def test_scatter_reduce_and_index_reduce(seed, reduce, include_self, zero, wider_src):
    rng = np.random.default_rng(seed)
    # values at least 0.05 apart so that amax/amin have no ties; one exact zero for prod
    values = rng.permutation(np.arange(1, 25) * 0.05 * rng.choice([-1.0, 1.0], 24))
    a, src = values[:12].reshape(3, 4), values[12:].reshape(2, 6)[:, : 5 if wider_src else 4]
    if zero and reduce == "prod":
        src = src.copy()
        src[0, 1] = 0.0
    index = ow.tensor(rng.integers(0, 3, (2, 4)))
    inputs = (_leaf(a), _leaf(src))
    assert gradcheck(lambda x, s: C.scatter_reduce(x, 0, index, s, reduce, include_self=include_self), inputs)
    if reduce != "sum":
        flat = ow.tensor(rng.integers(0, 3, 2))
        inputs = (_leaf(a), _leaf(src[:, :4]))
        assert gradcheck(lambda x, s: C.index_reduce(x, 0, flat, s, reduce, include_self=include_self), inputs)


@settings(max_examples=2, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
@pytest.mark.parametrize("complex_", [False, True])
def test_conv_nd_records_one_convolution_node(seed, complex_):
    """conv1d/conv2d (batched) record PyTorch's ConvolutionBackward0; complex gradients read the conjugates."""
    rng = np.random.default_rng(seed)
    x = _leaf(_values(rng, (2, 2, 4, 3), complex_), complex_)
    w = _leaf(_values(rng, (2, 1, 2, 2), complex_), complex_)
    b = _leaf(_values(rng, (2,), complex_), complex_)

    def conv(*a):
        return C.conv2d(*a, [2, 1], [1, 0], [1, 1], 2)

    assert conv(x, w, b).grad_fn.name() == "ConvolutionBackward0"
    assert gradcheck(conv, (x, w, b))
    x1 = _leaf(_values(rng, (1, 2, 5), complex_), complex_)
    w1 = _leaf(_values(rng, (2, 2, 2), complex_), complex_)
    assert gradcheck(lambda a, c: C.conv1d(a, c, None, [1], [1], [2]), (x1, w1))


def test_max_pool_and_reshapes_record_one_node():
    """max_pool2d_with_indices, flatten, view and reshape record one node each; gradients by gradcheck."""
    x = _leaf(np.random.default_rng(0).permutation(32).reshape(1, 2, 4, 4) / 7.0)  # distinct values: no ties
    values, _ = C.max_pool2d_with_indices(x, [2, 2])
    assert values.grad_fn.name() == "MaxPool2DWithIndicesBackward0"
    assert gradcheck(lambda t: C.max_pool2d_with_indices(t, [2, 2])[0], (x,))
    assert gradcheck(lambda t: C.max_pool2d_with_indices(t, [3, 3], [1, 1], [1, 1])[0], (x,))
    for fn in (lambda t: t.flatten(1), lambda t: t.view(2, 16), lambda t: t.transpose(0, 1).reshape(-1)):
        assert fn(x).grad_fn.name() == "ViewBackward0"
        assert gradcheck(fn, (x,)) and gradgradcheck(fn, (x,))
