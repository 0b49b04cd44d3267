"""A leaf's ``.grad`` is its own tensor, laid out as the leaf (PyTorch's AccumulateGrad rule).

A gradient is stored as is only when nobody else holds it and it has the leaf's strides; otherwise
``.grad`` gets a copy. In-place work on one ``.grad`` (``clip_grad_norm_``, ``zero_``, item writes)
must never reach another leaf's ``.grad`` or the tensor the caller gave to ``backward``.
"""

from __future__ import annotations

import numpy as np
import opweave as ow


def test_leaves_sharing_one_gradient_get_their_own_tensors():
    a, b = ow.ones(3, requires_grad=True), ow.ones(3, requires_grad=True)
    (a + b).sum().backward()  # add's formula passes one tensor to both inputs
    assert a.grad is not b.grad
    a.grad.mul_(5.0)
    np.testing.assert_array_equal(b.grad.numpy(), np.ones(3, np.float32))


def test_clip_grad_norm_scales_each_gradient_once():
    a, b = ow.ones(3, requires_grad=True), ow.ones(3, requires_grad=True)
    (a + b).sum().backward()
    ow.nn.utils.clip_grad_norm_([a, b], 1.0)
    want = np.full(3, 1 / np.sqrt(6.0))  # the total norm is sqrt(6): each gradient of ones times 1/sqrt(6)
    np.testing.assert_allclose(a.grad.numpy(), want, rtol=1e-6)
    np.testing.assert_allclose(b.grad.numpy(), want, rtol=1e-6)


def test_an_expanded_gradient_is_stored_dense():
    c = ow.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    c.sum().backward()  # sum's formula expands a 0-dim gradient (stride 0)
    assert c.grad.stride() == c.stride()
    c.grad[0, 0] = 5.0
    np.testing.assert_array_equal(c.grad.numpy(), [[5.0, 1.0], [1.0, 1.0]])


def test_a_transposed_leaf_gets_its_own_strides():
    base = ow.zeros(3, 2)
    leaf = base.t().detach().requires_grad_()  # strides (1, 2)
    (leaf * 2.0).sum().backward()
    assert leaf.grad.stride() == leaf.stride()
    np.testing.assert_array_equal(leaf.grad.numpy(), np.full((2, 3), 2.0, np.float32))


def test_the_callers_gradient_is_not_stored():
    x = ow.ones(3, requires_grad=True)
    g = ow.tensor([1.0, 2.0, 3.0])
    x.backward(g)
    assert x.grad is not g
    g.mul_(10.0)
    np.testing.assert_array_equal(x.grad.numpy(), [1.0, 2.0, 3.0])


def test_retained_gradients_of_non_leaves_are_their_own():
    a = ow.ones(3, requires_grad=True)
    y = a * 1.0
    z = a * 1.0
    y.retain_grad()
    z.retain_grad()
    (y + z).sum().backward()
    assert y.grad is not z.grad
    y.grad.zero_()
    np.testing.assert_array_equal(z.grad.numpy(), np.ones(3, np.float32))
    np.testing.assert_array_equal(a.grad.numpy(), np.full(3, 2.0, np.float32))


def test_a_fresh_gradient_is_taken_without_a_copy_and_accumulation_adds():
    w = ow.ones(2, 2, requires_grad=True)
    x = ow.tensor([[1.0, 2.0], [3.0, 4.0]])
    (w * x).sum().backward()
    first = w.grad
    (w * x).sum().backward()
    np.testing.assert_array_equal(first.numpy(), [[1.0, 2.0], [3.0, 4.0]])  # accumulation made a new tensor
    np.testing.assert_array_equal(w.grad.numpy(), [[2.0, 4.0], [6.0, 8.0]])
