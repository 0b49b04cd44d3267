"""opweave.nn.utils, and gradients through the layers: gradcheck in float64 and training-mode behaviour."""

from __future__ import annotations

import math

import numpy as np
import opweave
import pytest
from opweave import nn
from opweave.nn.utils import clip_grad_norm_, clip_grad_value_, parameters_to_vector, vector_to_parameters


def with_grads(grads):
    params = [nn.Parameter(opweave.zeros(len(g), dtype=opweave.float64)) for g in grads]
    for p, g in zip(params, grads):
        p.grad = opweave.tensor(g, dtype=opweave.float64)
    return params


@pytest.mark.parametrize("norm_type", [2.0, 1.0, math.inf])
def test_clip_grad_norm(norm_type):
    grads = [np.array([3.0, -4.0]), np.array([12.0])]
    params = with_grads(grads)
    flat = np.concatenate(grads)
    total = np.linalg.norm(flat, ord=norm_type)
    got = clip_grad_norm_(params, max_norm=2.0, norm_type=norm_type)
    assert math.isclose(got.item(), total, rel_tol=1e-12)
    scale = 2.0 / (total + 1e-6)
    for p, g in zip(params, grads):
        np.testing.assert_allclose(p.grad.numpy(), g * scale, rtol=1e-12)
    params = with_grads(grads)
    clip_grad_norm_(params, max_norm=100.0, norm_type=norm_type)
    np.testing.assert_array_equal(params[0].grad.numpy(), grads[0])


def test_clip_grad_norm_nonfinite_and_value():
    params = with_grads([np.array([np.inf, 1.0])])
    with pytest.raises(RuntimeError, match="non-finite"):
        clip_grad_norm_(params, 1.0, error_if_nonfinite=True)
    np.testing.assert_array_equal(params[0].grad.numpy(), [np.inf, 1.0])
    params = with_grads([np.array([-3.0, 0.5, 2.0])])
    clip_grad_value_(params, 1.0)
    np.testing.assert_array_equal(params[0].grad.numpy(), [-1.0, 0.5, 1.0])
    assert clip_grad_norm_([nn.Parameter(opweave.zeros(1))], 1.0).item() == 0.0


def test_parameters_vector_round_trip():
    lin = nn.Linear(3, 2)
    vec = parameters_to_vector(lin.parameters())
    expected = np.concatenate([lin.weight.detach().numpy().ravel(), lin.bias.detach().numpy()])
    np.testing.assert_array_equal(vec.detach().numpy(), expected)
    vector_to_parameters(opweave.arange(8, dtype=opweave.float32), lin.parameters())
    np.testing.assert_array_equal(lin.weight.detach().numpy(), np.arange(6).reshape(2, 3))
    with pytest.raises(ValueError, match="has 3 elements"):
        vector_to_parameters(opweave.zeros(3), lin.parameters())
    np.testing.assert_array_equal(lin.bias.detach().numpy(), [6.0, 7.0])


LAYERS = [
    ("Linear", lambda: nn.Linear(3, 2), (4, 3)),
    ("Conv2d", lambda: nn.Conv2d(2, 2, 3, padding=1, stride=2), (1, 2, 5, 5)),
    ("ConvTranspose1d", lambda: nn.ConvTranspose1d(2, 2, 3, stride=2), (1, 2, 3)),
    ("LayerNorm", lambda: nn.LayerNorm(4), (3, 4)),
    ("GroupNorm", lambda: nn.GroupNorm(2, 4), (2, 4, 3)),
    ("BatchNorm1d", lambda: nn.BatchNorm1d(3), (4, 3)),
    ("RNN", lambda: nn.RNN(2, 3), (3, 1, 2)),
    ("LSTM", lambda: nn.LSTM(2, 2), (3, 1, 2)),
    ("GRU", lambda: nn.GRU(2, 2, bidirectional=True), (3, 1, 2)),
    ("MultiheadAttention", lambda: nn.MultiheadAttention(4, 2), (3, 1, 4)),
    ("MaxPool2d", lambda: nn.MaxPool2d(2), (1, 1, 4, 4)),
]


@pytest.mark.parametrize(("name", "make", "shape"), LAYERS)
def test_layer_gradients_pass_gradcheck(name, make, shape):
    layer = make().double()
    params = list(layer.parameters())
    x = opweave.tensor(np.random.default_rng(0).standard_normal(shape), dtype=opweave.float64, requires_grad=True)

    def f(inp):
        out = layer(inp) if name != "MultiheadAttention" else layer(inp, inp, inp)[0]
        return out[0] if isinstance(out, tuple) else out

    assert opweave.autograd.gradcheck(f, (x,), eps=1e-6, atol=1e-5)
    # parameter gradients: backward of sum(out * w) against central differences of the same scalar
    rng = np.random.default_rng(1)
    out = f(x)
    weights = opweave.tensor(rng.standard_normal(tuple(out.shape)), dtype=opweave.float64)
    layer.zero_grad()
    (out * weights).sum().backward()
    for p in params[:2]:
        flat = p.detach().numpy().ravel()
        for k in rng.choice(flat.size, size=min(3, flat.size), replace=False):
            values = []
            for delta in (1e-6, -1e-6):
                with opweave.no_grad():
                    p.view(-1)[int(k)] += delta
                    values.append((f(x) * weights).sum().item())
                    p.view(-1)[int(k)] -= delta
            numeric = (values[0] - values[1]) / 2e-6
            assert math.isclose(p.grad.numpy().ravel()[k], numeric, rel_tol=1e-4, abs_tol=1e-6), (name, k)


def test_embedding_gradient_accumulates_rows_and_skips_padding():
    emb = nn.Embedding(4, 2, padding_idx=0).double()
    out = emb(opweave.tensor([[1, 0, 1], [3, 0, 2]]))
    out.sum().backward()
    np.testing.assert_array_equal(emb.weight.grad.numpy(), [[0, 0], [2, 2], [1, 1], [1, 1]])


def test_a_few_sgd_steps_reduce_a_regression_loss():
    opweave.manual_seed(0)
    rng = np.random.default_rng(0)
    x = opweave.tensor(rng.standard_normal((32, 3)), dtype=opweave.float32)
    y = x @ opweave.tensor([[1.0], [-2.0], [0.5]]) + 0.3
    model = nn.Linear(3, 1)
    opt = opweave.optim.SGD(model.parameters(), lr=0.1)
    losses = []
    for _ in range(30):
        opt.zero_grad()
        loss = nn.MSELoss()(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < 1e-2 * losses[0]
    np.testing.assert_allclose(model.weight.detach().numpy(), [[1.0, -2.0, 0.5]], atol=0.05)
