"""The Tensor side of autograd: flags, factories, detach, grad modes."""

from __future__ import annotations

import threading

import numpy as np
import opweave as ow
import pytest


def test_leaf_flags_and_factories():
    for make in (
        lambda: ow.zeros(2, 3, requires_grad=True),
        lambda: ow.ones([2], requires_grad=True),
        lambda: ow.empty(4, requires_grad=True),
        lambda: ow.rand(3, requires_grad=True),
        lambda: ow.randn(3, requires_grad=True),
        lambda: ow.full([2], 1.5, requires_grad=True),
        lambda: ow.arange(0.0, 3.0, requires_grad=True),
        lambda: ow.zeros_like(ow.ones(2), requires_grad=True),
        lambda: ow.tensor([1.0, 2.0], requires_grad=True),
        lambda: ow.linspace(0, 1, 5, requires_grad=True),
    ):
        t = make()
        assert t.requires_grad and t.is_leaf and t.grad_fn is None and t.grad is None
    t = ow.zeros(2)
    assert not t.requires_grad and t.is_leaf
    assert t.requires_grad_() is t and t.requires_grad
    t.requires_grad = False
    assert not t.requires_grad


def test_integer_tensors_cannot_require_grad():
    with pytest.raises(RuntimeError, match="only Tensors of floating point and complex dtype can require gradients"):
        ow.arange(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="floating point"):
        ow.tensor([1, 2]).requires_grad_()


def test_non_leaf_flags():
    x = ow.ones(3, requires_grad=True)
    y = x * 2
    assert y.requires_grad and not y.is_leaf and y.grad_fn is not None
    assert y.grad_fn.name() == "MulBackward0"
    assert y.grad_fn.next_functions[0][0].name() == "AccumulateGrad"
    assert y.grad_fn.next_functions[0][0].variable is x
    with pytest.raises(RuntimeError, match="you can only change requires_grad flags of leaf variables"):
        y.requires_grad = False


def test_detach_shares_storage_and_drops_history():
    x = ow.ones(3, requires_grad=True)
    y = x * 2
    d = y.detach()
    assert not d.requires_grad and d.is_leaf
    d.add_(1)  # a write through the detached view is visible in y
    np.testing.assert_array_equal(y.detach().numpy(), [3.0, 3.0, 3.0])
    y.detach_()
    assert not y.requires_grad and y.grad_fn is None


def test_grad_setter_checks():
    x = ow.ones(3, requires_grad=True)
    x.grad = ow.full([3], 2.0)
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 2.0, 2.0])
    with pytest.raises(RuntimeError, match="different size"):
        x.grad = ow.ones(4)
    with pytest.raises(RuntimeError, match="different type"):
        x.grad = ow.ones(3, dtype=ow.float64)
    x.grad = None
    assert x.grad is None


def test_no_grad_and_enable_grad():
    x = ow.ones(3, requires_grad=True)
    with ow.no_grad():
        assert not ow.is_grad_enabled()
        y = x * 2
        with ow.enable_grad():
            z = x * 2
    assert ow.is_grad_enabled()
    assert not y.requires_grad and y.grad_fn is None
    assert z.requires_grad

    @ow.no_grad()
    def f(t):
        return t * 2

    @ow.no_grad
    def g(t):
        return t * 2

    assert not f(x).requires_grad and not g(x).requires_grad


def test_set_grad_enabled_and_inference_mode():
    x = ow.ones(3, requires_grad=True)
    ow.set_grad_enabled(False)
    try:
        assert not (x * 2).requires_grad
    finally:
        ow.set_grad_enabled(True)
    with ow.set_grad_enabled(False):
        assert not ow.is_grad_enabled()
    assert ow.is_grad_enabled()
    with ow.inference_mode():
        assert ow.is_inference_mode_enabled() and not (x * 2).requires_grad
    with ow.inference_mode(False):
        assert (x * 2).requires_grad
    assert not ow.is_inference_mode_enabled()


def test_grad_mode_is_thread_local():
    seen = []
    with ow.no_grad():
        thread = threading.Thread(target=lambda: seen.append(ow.is_grad_enabled()))
        thread.start()
        thread.join()
    assert seen == [True]


def test_inplace_bumps_version():
    t = ow.zeros(3)
    v0 = t._version
    t.add_(1)
    assert t._version > v0
    view = t[1:]
    v1 = t._version
    view.mul_(2)
    assert t._version > v1 and view._version == t._version


def test_plain_tensors_do_not_enter_the_autograd_layer():
    a, b = ow.ones(3), ow.ones(3)
    keys = ow.dispatch.explain(ow.ops.add.Tensor, a, b).keyset
    assert not keys & (1 << 2)  # the Autograd layer bit


def test_data_property():
    x = ow.ones(2, requires_grad=True)
    d = x.data
    assert not d.requires_grad and d.is_leaf
    d.mul_(3)  # shares storage: no autograd error, visible in x
    np.testing.assert_array_equal(x.detach().numpy(), [3.0, 3.0])
    x.data = ow.full([3], 2.0)
    assert x.requires_grad and x.shape == (3,)
    (x * x).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [4.0, 4.0, 4.0])
