"""Optimizers: N steps with hand-set gradients against NumPy versions of PyTorch's documented algorithms."""

from __future__ import annotations

import math

import numpy as np
import opweave
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from opweave import nn, optim

STEPS = 6


# -- NumPy references (PyTorch's documented algorithms, written out) ---------------------------------


def sgd_ref(p, grads, lr, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False, maximize=False):
    buf = None
    for g in grads:
        g = -g if maximize else g
        if weight_decay:
            g = g + weight_decay * p
        if momentum:
            buf = g.copy() if buf is None else momentum * buf + (1 - dampening) * g
            g = g + momentum * buf if nesterov else buf
        p = p - lr * g
    return p


def adam_ref(
    p, grads, lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, amsgrad=False, maximize=False, decoupled=False
):
    b1, b2 = betas
    m = np.zeros_like(p)
    v = np.zeros_like(p)
    vmax = np.zeros_like(p)
    for t, g in enumerate(grads, 1):
        g = -g if maximize else g
        if weight_decay:
            if decoupled:
                p = p * (1 - lr * weight_decay)
            else:
                g = g + weight_decay * p
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        m_hat = m / (1 - b1**t)
        if amsgrad:
            vmax = np.maximum(vmax, v)
            v_hat = vmax / (1 - b2**t)
        else:
            v_hat = v / (1 - b2**t)
        p = p - lr * m_hat / (np.sqrt(v_hat) + eps)
    return p


def rmsprop_ref(p, grads, lr, alpha=0.99, eps=1e-8, weight_decay=0.0, momentum=0.0, centered=False, maximize=False):
    v = np.zeros_like(p)
    g_avg = np.zeros_like(p)
    buf = np.zeros_like(p)
    for g in grads:
        g = -g if maximize else g
        if weight_decay:
            g = g + weight_decay * p
        v = alpha * v + (1 - alpha) * g * g
        if centered:
            g_avg = alpha * g_avg + (1 - alpha) * g
            denom = np.sqrt(v - g_avg * g_avg) + eps
        else:
            denom = np.sqrt(v) + eps
        if momentum > 0:
            buf = momentum * buf + g / denom
            p = p - lr * buf
        else:
            p = p - lr * g / denom
    return p


def adagrad_ref(p, grads, lr, lr_decay=0.0, weight_decay=0.0, initial_accumulator_value=0.0, eps=1e-10, maximize=False):
    s = np.full_like(p, initial_accumulator_value)
    for t, g in enumerate(grads, 1):
        g = -g if maximize else g
        if weight_decay:
            g = g + weight_decay * p
        clr = lr / (1 + (t - 1) * lr_decay)
        s = s + g * g
        p = p - clr * g / (np.sqrt(s) + eps)
    return p


def run(opt_cls, p0, grads, dtype=opweave.float64, **kwargs):
    p = nn.Parameter(opweave.tensor(p0, dtype=dtype))
    opt = opt_cls([p], **kwargs)
    for g in grads:
        p.grad = opweave.tensor(g, dtype=dtype)
        opt.step()
    return p.detach().numpy(), opt


def data(seed, shape=(3, 4)):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(shape), [rng.standard_normal(shape) for _ in range(STEPS)]


seeds = st.integers(0, 2**32 - 1)


@settings(max_examples=15)
@given(
    seed=seeds,
    lr=st.sampled_from([0.01, 0.1]),
    momentum=st.sampled_from([0.0, 0.9]),
    dampening=st.sampled_from([0.0, 0.3]),
    weight_decay=st.sampled_from([0.0, 0.05]),
    nesterov=st.booleans(),
    maximize=st.booleans(),
)
def test_sgd_matches_reference(seed, lr, momentum, dampening, weight_decay, nesterov, maximize):
    if nesterov and (momentum == 0 or dampening != 0):
        return
    p0, grads = data(seed)
    kw = {"momentum": momentum, "dampening": dampening, "weight_decay": weight_decay, "nesterov": nesterov}
    got, _ = run(optim.SGD, p0, grads, lr=lr, maximize=maximize, **kw)
    np.testing.assert_allclose(got, sgd_ref(p0, grads, lr, maximize=maximize, **kw), rtol=1e-6, atol=1e-6)


@settings(max_examples=15)
@given(
    seed=seeds,
    lr=st.sampled_from([1e-3, 0.05]),
    weight_decay=st.sampled_from([0.0, 0.1]),
    amsgrad=st.booleans(),
    maximize=st.booleans(),
    betas=st.sampled_from([(0.9, 0.999), (0.5, 0.9)]),
)
def test_adam_and_adamw_match_reference(seed, lr, weight_decay, amsgrad, maximize, betas):
    p0, grads = data(seed)
    kw = {"betas": betas, "weight_decay": weight_decay, "amsgrad": amsgrad, "maximize": maximize}
    got, _ = run(optim.Adam, p0, grads, lr=lr, **kw)
    np.testing.assert_allclose(got, adam_ref(p0, grads, lr, **kw), rtol=1e-6, atol=1e-6)
    got, _ = run(optim.AdamW, p0, grads, lr=lr, **kw)
    np.testing.assert_allclose(got, adam_ref(p0, grads, lr, decoupled=True, **kw), rtol=1e-6, atol=1e-6)


@settings(max_examples=15)
@given(
    seed=seeds,
    lr=st.sampled_from([1e-3, 0.01]),
    alpha=st.sampled_from([0.99, 0.8]),
    weight_decay=st.sampled_from([0.0, 0.1]),
    momentum=st.sampled_from([0.0, 0.9]),
    centered=st.booleans(),
    maximize=st.booleans(),
)
def test_rmsprop_matches_reference(seed, lr, alpha, weight_decay, momentum, centered, maximize):
    p0, grads = data(seed)
    kw = {
        "alpha": alpha,
        "weight_decay": weight_decay,
        "momentum": momentum,
        "centered": centered,
        "maximize": maximize,
    }
    got, _ = run(optim.RMSprop, p0, grads, lr=lr, **kw)
    np.testing.assert_allclose(got, rmsprop_ref(p0, grads, lr, **kw), rtol=1e-6, atol=1e-6)


@settings(max_examples=15)
@given(
    seed=seeds,
    lr=st.sampled_from([0.01, 0.1]),
    lr_decay=st.sampled_from([0.0, 0.1]),
    weight_decay=st.sampled_from([0.0, 0.1]),
    initial_accumulator_value=st.sampled_from([0.0, 0.5]),
    maximize=st.booleans(),
)
def test_adagrad_matches_reference(seed, lr, lr_decay, weight_decay, initial_accumulator_value, maximize):
    p0, grads = data(seed)
    kw = {
        "lr_decay": lr_decay,
        "weight_decay": weight_decay,
        "initial_accumulator_value": initial_accumulator_value,
        "maximize": maximize,
    }
    got, _ = run(optim.Adagrad, p0, grads, lr=lr, **kw)
    np.testing.assert_allclose(got, adagrad_ref(p0, grads, lr, **kw), rtol=1e-6, atol=1e-6)


def test_float32_parameters_follow_the_reference_to_float32_precision():
    p0, grads = data(7)
    got, _ = run(optim.Adam, p0.astype(np.float32), [g.astype(np.float32) for g in grads], opweave.float32, lr=0.01)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, adam_ref(p0, grads, 0.01), rtol=1e-5, atol=1e-5)


def test_defaults_are_pytorchs():
    p = [nn.Parameter(opweave.zeros(1))]
    assert optim.SGD(p).defaults["lr"] == 1e-3
    adam = optim.Adam(p).defaults
    assert (adam["lr"], adam["betas"], adam["eps"], adam["weight_decay"]) == (1e-3, (0.9, 0.999), 1e-8, 0)
    assert optim.AdamW(p).defaults["weight_decay"] == 1e-2
    rms = optim.RMSprop(p).defaults
    assert (rms["lr"], rms["alpha"], rms["eps"]) == (1e-2, 0.99, 1e-8)
    ada = optim.Adagrad(p).defaults
    assert (ada["lr"], ada["eps"]) == (1e-2, 1e-10)


def test_parameters_without_grad_are_skipped_and_get_no_state():
    a = nn.Parameter(opweave.ones(2))
    b = nn.Parameter(opweave.ones(2))
    opt = optim.Adam([a, b], lr=0.1)
    a.grad = opweave.ones(2)
    opt.step()
    np.testing.assert_array_equal(b.detach().numpy(), [1.0, 1.0])
    assert b not in opt.state and a in opt.state


def test_param_groups_have_their_own_hyperparameters():
    a = nn.Parameter(opweave.zeros(2, dtype=opweave.float64))
    b = nn.Parameter(opweave.zeros(2, dtype=opweave.float64))
    opt = optim.SGD([{"params": [a]}, {"params": b, "lr": 0.5}], lr=0.1, momentum=0.9)
    assert opt.param_groups[1]["momentum"] == 0.9 and opt.param_groups[1]["lr"] == 0.5
    a.grad = opweave.ones(2, dtype=opweave.float64)
    b.grad = opweave.ones(2, dtype=opweave.float64)
    opt.step()
    np.testing.assert_allclose(a.detach().numpy(), [-0.1, -0.1])
    np.testing.assert_allclose(b.detach().numpy(), [-0.5, -0.5])
    c = nn.Parameter(opweave.zeros(1))
    opt.add_param_group({"params": [c], "nesterov": True})
    assert opt.param_groups[2]["lr"] == 0.1
    with pytest.raises(ValueError, match="more than one parameter group"):
        opt.add_param_group({"params": [a]})


def test_named_parameters_are_accepted():
    lin = nn.Linear(2, 2)
    opt = optim.SGD(lin.named_parameters(), lr=0.1)
    assert opt.param_groups[0]["param_names"] == ["weight", "bias"]
    assert opt.param_groups[0]["params"][0] is lin.weight


def test_bad_arguments_raise_pytorchs_errors():
    p = [nn.Parameter(opweave.zeros(1))]
    with pytest.raises(ValueError, match="Invalid learning rate"):
        optim.SGD(p, lr=-1)
    with pytest.raises(ValueError, match="Nesterov momentum requires a momentum and zero dampening"):
        optim.SGD(p, lr=0.1, nesterov=True)
    with pytest.raises(ValueError, match="Invalid beta parameter at index 0"):
        optim.Adam(p, betas=(1.0, 0.9))
    with pytest.raises(ValueError, match="empty parameter list"):
        optim.Adam([])
    with pytest.raises(TypeError, match="iterable of Tensors or dicts"):
        optim.Adam(opweave.zeros(1))
    with pytest.raises(ValueError, match="duplicate parameters"):
        optim.SGD(p + p, lr=0.1)
    with pytest.raises(TypeError, match="ordered collections"):
        optim.SGD([{"params": set(p)}], lr=0.1)
    with pytest.raises(ValueError, match="non-leaf"):
        optim.SGD([p[0] * 2], lr=0.1)


def test_zero_grad():
    p = nn.Parameter(opweave.ones(2))
    opt = optim.SGD([p], lr=0.1)
    p.grad = opweave.ones(2)
    opt.zero_grad(set_to_none=False)
    np.testing.assert_array_equal(p.grad.numpy(), [0.0, 0.0])
    opt.zero_grad()
    assert p.grad is None


def test_closure_is_called_and_its_loss_returned():
    p = nn.Parameter(opweave.ones(2))
    opt = optim.SGD([p], lr=0.1)
    calls = []

    def closure():
        calls.append(1)
        p.grad = opweave.ones(2)
        return 42.0

    assert opt.step(closure) == 42.0
    assert calls == [1]
    np.testing.assert_allclose(p.detach().numpy(), [0.9, 0.9], rtol=1e-6)


def test_updates_do_not_record_gradients():
    p = nn.Parameter(opweave.ones(2))
    opt = optim.Adam([p], lr=0.1)
    p.grad = opweave.ones(2)
    opt.step()
    assert p.is_leaf and p.grad_fn is None and p.requires_grad


@pytest.mark.parametrize(
    ("cls", "kw"),
    [
        (optim.SGD, {"lr": 0.1, "momentum": 0.9}),
        (optim.Adam, {"lr": 0.01, "amsgrad": True}),
        (optim.AdamW, {"lr": 0.01}),
        (optim.RMSprop, {"lr": 0.01, "momentum": 0.5, "centered": True}),
        (optim.Adagrad, {"lr": 0.1}),
    ],
)
def test_state_dict_layout_and_resume_match_an_uninterrupted_run(cls, kw):
    p0, grads = data(3, (2, 2))
    full, _ = run(cls, p0, grads, **kw)

    p = nn.Parameter(opweave.tensor(p0, dtype=opweave.float64))
    q = nn.Parameter(opweave.tensor(p0[0], dtype=opweave.float64))
    opt = cls([{"params": [p]}, {"params": [q]}], **kw)
    for g in grads[:3]:
        p.grad = opweave.tensor(g, dtype=opweave.float64)
        opt.step()
    sd = opt.state_dict()
    assert set(sd) == {"state", "param_groups"}
    assert [g["params"] for g in sd["param_groups"]] == [[0], [1]]
    assert list(sd["state"]) == ([0, 1] if cls is optim.Adagrad else [0])
    assert all(k != "params" or isinstance(v, list) for g in sd["param_groups"] for k, v in g.items())
    if "step" in sd["state"][0]:
        assert float(sd["state"][0]["step"]) == 3.0

    p2 = nn.Parameter(opweave.tensor(p.detach().numpy(), dtype=opweave.float64))
    q2 = nn.Parameter(opweave.tensor(q.detach().numpy(), dtype=opweave.float64))
    opt2 = cls([{"params": [p2]}, {"params": [q2]}], **kw)
    opt2.load_state_dict(sd)
    assert opt2.state[p2].keys() == opt.state[p].keys()
    for g in grads[3:]:
        p2.grad = opweave.tensor(g, dtype=opweave.float64)
        opt2.step()
    np.testing.assert_allclose(p2.detach().numpy(), full, rtol=1e-12, atol=1e-12)


def test_load_state_dict_errors_and_casts_state_to_the_parameter_dtype():
    p = nn.Parameter(opweave.zeros(2, dtype=opweave.float64))
    opt = optim.Adam([p], lr=0.1)
    p.grad = opweave.ones(2, dtype=opweave.float64)
    opt.step()
    sd = opt.state_dict()
    q = nn.Parameter(opweave.zeros(2, dtype=opweave.float32))
    opt2 = optim.Adam([q], lr=0.1)
    opt2.load_state_dict(sd)
    assert opt2.state[q]["exp_avg"].dtype == opweave.float32
    assert opt2.state[q]["step"].dtype == opweave.float32
    assert opt2.param_groups[0]["params"][0] is q
    with pytest.raises(ValueError, match="different number of parameter groups"):
        optim.Adam([{"params": [q]}, {"params": [nn.Parameter(opweave.zeros(1))]}]).load_state_dict(sd)
    with pytest.raises(ValueError, match="doesn't match the size"):
        optim.Adam([q, nn.Parameter(opweave.zeros(1))]).load_state_dict(sd)


def test_repr_lists_groups():
    opt = optim.SGD([nn.Parameter(opweave.zeros(1))], lr=0.5)
    text = repr(opt)
    assert text.startswith("SGD (\nParameter Group 0\n") and "    lr: 0.5\n" in text


def test_bias_correction_uses_the_step_count():
    # After one Adam step with gradient g, the update is -lr * sign(g) (up to eps): PyTorch's bias correction.
    p = nn.Parameter(opweave.zeros(3, dtype=opweave.float64))
    opt = optim.Adam([p], lr=0.1, eps=0.0)
    p.grad = opweave.tensor([2.0, -0.5, 3.0], dtype=opweave.float64)
    opt.step()
    np.testing.assert_allclose(p.detach().numpy(), [-0.1, 0.1, -0.1], rtol=1e-12)
    assert math.isclose(float(opt.state[p]["step"]), 1.0)
