"""opweave.nn.init and the layers' default initialisation: bounds, statistics and PyTorch's gains."""

from __future__ import annotations

import math

import numpy as np
import opweave
import pytest
from opweave import nn
from opweave.nn import init


def values(t):
    return t.detach().numpy()


def test_calculate_gain():
    assert init.calculate_gain("linear") == 1.0
    assert init.calculate_gain("conv2d") == 1.0
    assert init.calculate_gain("sigmoid") == 1.0
    assert init.calculate_gain("tanh") == 5.0 / 3
    assert init.calculate_gain("relu") == math.sqrt(2.0)
    assert init.calculate_gain("leaky_relu") == math.sqrt(2.0 / (1 + 0.01**2))
    assert init.calculate_gain("leaky_relu", 0.2) == math.sqrt(2.0 / 1.04)
    assert init.calculate_gain("selu") == 0.75
    with pytest.raises(ValueError, match="Unsupported nonlinearity"):
        init.calculate_gain("swish")
    with pytest.raises(ValueError, match="not a valid number"):
        init.calculate_gain("leaky_relu", "x")


def test_uniform_normal_constant_fill_in_place_and_return_the_tensor():
    t = opweave.empty(200, 50)
    assert init.uniform_(t, -2.0, 3.0) is t
    v = values(t)
    assert v.min() >= -2.0 and v.max() <= 3.0
    assert abs(v.mean() - 0.5) < 6 * 5 / math.sqrt(12) / math.sqrt(v.size)
    init.normal_(t, 1.0, 2.0)
    v = values(t)
    assert abs(v.mean() - 1.0) < 6 * 2.0 / math.sqrt(v.size)
    assert abs(v.std() - 2.0) < 0.1
    np.testing.assert_array_equal(values(init.constant_(t, 0.3)), np.full((200, 50), 0.3, dtype=np.float32))
    np.testing.assert_array_equal(values(init.ones_(t)), np.ones((200, 50)))
    np.testing.assert_array_equal(values(init.zeros_(t)), np.zeros((200, 50)))


def test_init_does_not_record_gradients_on_parameters():
    p = nn.Parameter(opweave.empty(3, 4))
    init.kaiming_uniform_(p)
    init.trunc_normal_(p)
    init.orthogonal_(p)
    assert p.is_leaf and p.requires_grad and p.grad_fn is None


def test_eye_and_dirac():
    np.testing.assert_array_equal(values(init.eye_(opweave.empty(2, 3))), np.eye(2, 3))
    with pytest.raises(ValueError, match="2 dimensions"):
        init.eye_(opweave.empty(2))
    w = init.dirac_(opweave.empty(2, 2, 3))
    expected = np.zeros((2, 2, 3))
    expected[0, 0, 1] = expected[1, 1, 1] = 1
    np.testing.assert_array_equal(values(w), expected)


def test_trunc_normal_stays_within_bounds():
    t = init.trunc_normal_(opweave.empty(5000), mean=0.5, std=1.0, a=-1.0, b=1.5)
    v = values(t)
    assert v.min() >= -1.0 and v.max() <= 1.5
    assert abs(v.mean() - 0.3) < 0.1  # the truncated normal's mean is below 0.5 here (more mass cut above)


@pytest.mark.parametrize("shape", [(30, 20), (16, 4, 3, 3)])
def test_xavier_and_kaiming_bounds_and_spread(shape):
    fan_in = shape[1] * int(np.prod(shape[2:]))
    fan_out = shape[0] * int(np.prod(shape[2:]))
    t = opweave.empty(*shape)
    bound = math.sqrt(6.0 / (fan_in + fan_out))
    v = values(init.xavier_uniform_(t))
    assert np.abs(v).max() <= bound + 1e-7 and np.abs(v).max() > 0.8 * bound
    v = values(init.xavier_normal_(t, gain=2.0))
    assert abs(v.std() - 2.0 * math.sqrt(2.0 / (fan_in + fan_out))) < 0.25 * v.std()
    bound = math.sqrt(2.0) * math.sqrt(3.0 / fan_in)
    v = values(init.kaiming_uniform_(t, nonlinearity="relu"))
    assert np.abs(v).max() <= bound + 1e-7 and np.abs(v).max() > 0.8 * bound
    v = values(init.kaiming_normal_(t, mode="fan_out", nonlinearity="relu"))
    assert abs(v.std() - math.sqrt(2.0 / fan_out)) < 0.25 * v.std()
    with pytest.raises(ValueError, match="Mode fan_avg not supported"):
        init.kaiming_uniform_(t, mode="fan_avg")
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        init.xavier_uniform_(opweave.empty(3))


@pytest.mark.parametrize("shape", [(4, 6), (6, 4), (3, 2, 2)])
def test_orthogonal_rows_or_columns_are_orthonormal(shape):
    v = values(init.orthogonal_(opweave.empty(*shape), gain=2.0)).reshape(shape[0], -1).astype(np.float64)
    gram = v @ v.T if v.shape[0] <= v.shape[1] else v.T @ v
    np.testing.assert_allclose(gram, 4.0 * np.eye(gram.shape[0]), atol=1e-5)


def test_initialisation_follows_opweaves_generator():
    opweave.manual_seed(123)
    a = nn.Linear(5, 3)
    opweave.manual_seed(123)
    b = nn.Linear(5, 3)
    np.testing.assert_array_equal(values(a.weight), values(b.weight))
    g1 = opweave.Generator().manual_seed(7)
    g2 = opweave.Generator().manual_seed(7)
    np.testing.assert_array_equal(
        values(init.normal_(opweave.empty(4), generator=g1)), values(init.normal_(opweave.empty(4), generator=g2))
    )


@pytest.mark.parametrize(
    ("make", "fan_in"),
    [
        (lambda: nn.Linear(40, 30), 40),
        (lambda: nn.Conv2d(4, 8, 3), 36),
        (lambda: nn.Conv1d(6, 4, 5, groups=2), 15),
        (lambda: nn.ConvTranspose2d(4, 6, 3), 6 * 9),
    ],
)
def test_linear_and_conv_defaults_are_kaiming_uniform_a_sqrt5(make, fan_in):
    layer = make()
    # kaiming_uniform(a=√5): bound = gain·√(3/fan_in) with gain = √(2/(1+5)) → 1/√fan_in; bias also U(±1/√fan_in)
    bound = 1 / math.sqrt(fan_in)
    w, b = values(layer.weight), values(layer.bias)
    assert np.abs(w).max() <= bound + 1e-7 and np.abs(w).max() > 0.7 * bound
    assert np.abs(b).max() <= bound + 1e-7


def test_other_layer_defaults():
    bn = nn.BatchNorm2d(3)
    np.testing.assert_array_equal(values(bn.weight), np.ones(3))
    np.testing.assert_array_equal(values(bn.bias), np.zeros(3))
    np.testing.assert_array_equal(values(bn.running_var), np.ones(3))
    assert bn.num_batches_tracked.dtype == opweave.int64 and int(bn.num_batches_tracked) == 0
    emb = nn.Embedding(1000, 8, padding_idx=2)
    w = values(emb.weight)
    np.testing.assert_array_equal(w[2], np.zeros(8))
    assert abs(w.std() - 1.0) < 0.1
    lstm = nn.LSTM(3, 5)
    bound = 1 / math.sqrt(5)
    assert all(np.abs(values(p)).max() <= bound for p in lstm.parameters())
    mha = nn.MultiheadAttention(8, 2)
    np.testing.assert_array_equal(values(mha.in_proj_bias), np.zeros(24))
    np.testing.assert_array_equal(values(mha.out_proj.bias), np.zeros(8))
    assert np.abs(values(mha.in_proj_weight)).max() <= math.sqrt(6 / (8 + 24))
    np.testing.assert_array_equal(values(nn.PReLU(3).weight), np.full(3, 0.25, dtype=np.float32))
