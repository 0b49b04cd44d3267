"""opweave.autograd.Function: both styles, ctx features, errors."""

from __future__ import annotations

import numpy as np
import opweave as ow
import pytest
from opweave.autograd import Function, once_differentiable


class Cube(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * 3 * x * x


class ScaledExp(Function):
    @staticmethod
    def forward(x, scale):
        return ow.exp(x) * scale

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, scale = inputs
        ctx.save_for_backward(output)
        ctx.scale = scale

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        assert ctx.needs_input_grad == (True, False)
        return g * y, None


class SortWithIndices(Function):
    @staticmethod
    def forward(ctx, x):
        values, indices = ow.sort(x)
        ctx.mark_non_differentiable(indices)
        ctx.save_for_backward(indices)
        ctx.n = x.shape[0]
        return values, indices

    @staticmethod
    @once_differentiable
    def backward(ctx, g_values, g_indices):
        (indices,) = ctx.saved_tensors
        assert not ow.is_grad_enabled()
        return ow.zeros(ctx.n, dtype=g_values.dtype).scatter(0, indices, g_values)


class WrongCount(Function):
    @staticmethod
    def forward(ctx, x, y):
        return x + y

    @staticmethod
    def backward(ctx, g):
        return (g,)


def test_old_style_forward_with_ctx():
    x_np = np.array([1.0, -2.0, 0.5])
    x = ow.tensor(x_np, dtype=ow.float64, requires_grad=True)
    y = Cube.apply(x)
    assert y.grad_fn.name() == "CubeBackward"
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 3 * x_np**2)
    assert ow.autograd.gradcheck(Cube.apply, (ow.tensor(x_np, dtype=ow.float64, requires_grad=True),))


def test_setup_context_style_and_non_tensor_arguments():
    x_np = np.array([0.1, 0.7])
    x = ow.tensor(x_np, dtype=ow.float64, requires_grad=True)
    ScaledExp.apply(x, 2.0).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.exp(x_np))


def test_non_differentiable_outputs_and_once_differentiable():
    x = ow.tensor([3.0, 1.0, 2.0], requires_grad=True)
    values, indices = SortWithIndices.apply(x)
    assert values.requires_grad and not indices.requires_grad
    (values * ow.tensor([1.0, 10.0, 100.0])).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [100.0, 1.0, 10.0])


def test_wrong_number_of_gradients():
    x = ow.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="returned an incorrect number of gradients"):
        WrongCount.apply(x, x).sum().backward()


def test_no_graph_without_grad():
    x = ow.ones(2)
    assert not Cube.apply(x).requires_grad
    with ow.no_grad():
        assert not Cube.apply(ow.ones(2, requires_grad=True)).requires_grad


def test_saved_tensor_modified_in_place():
    x = ow.ones(2, requires_grad=True)
    y = x * 1
    z = Cube.apply(y)
    y.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()


def test_gradcheck_detects_a_wrong_backward():
    class Wrong(Function):
        @staticmethod
        def forward(ctx, x):
            return x * x

        @staticmethod
        def backward(ctx, g):
            return g

    x = ow.tensor([1.0, 2.0], dtype=ow.float64, requires_grad=True)
    with pytest.raises(ow.autograd.GradcheckError, match="Jacobian mismatch"):
        ow.autograd.gradcheck(Wrong.apply, (x,))
    assert ow.autograd.gradcheck(Wrong.apply, (x,), raise_exception=False) is False
