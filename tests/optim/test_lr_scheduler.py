"""Learning-rate schedulers against PyTorch's documented (closed-form) schedules written in the tests."""

from __future__ import annotations

import math

import opweave
import pytest
from opweave import nn, optim
from opweave.optim import lr_scheduler as sched


def make_opt(lr=0.1, groups=1, cls=optim.SGD, **kw):
    params = [{"params": [nn.Parameter(opweave.zeros(1))]} for _ in range(groups)]
    return cls(params, lr=lr, **kw)


def trace(scheduler, opt, n):
    lrs = [opt.param_groups[0]["lr"]]
    for _ in range(n):
        opt.step()
        scheduler.step()
        lrs.append(opt.param_groups[0]["lr"])
    assert scheduler.get_last_lr() == [g["lr"] for g in opt.param_groups]
    return lrs


def close(a, b):
    assert len(a) == len(b)
    for i, (x, y) in enumerate(zip(a, b)):
        assert math.isclose(x, y, rel_tol=1e-12, abs_tol=1e-15), (i, x, y)


def test_step_lr():
    opt = make_opt()
    close(trace(sched.StepLR(opt, step_size=3, gamma=0.5), opt, 10), [0.1 * 0.5 ** (e // 3) for e in range(11)])


def test_multistep_lr_with_repeated_milestone():
    opt = make_opt()
    got = trace(sched.MultiStepLR(opt, milestones=[2, 5, 5], gamma=0.1), opt, 7)
    expected = [0.1 * 0.1 ** (int(e >= 2) + 2 * int(e >= 5)) for e in range(8)]
    close(got, expected)


def test_exponential_lr():
    opt = make_opt()
    close(trace(sched.ExponentialLR(opt, gamma=0.9), opt, 6), [0.1 * 0.9**e for e in range(7)])


@pytest.mark.parametrize("eta_min", [0.0, 0.01])
def test_cosine_annealing_lr_within_t_max(eta_min):
    opt = make_opt()
    t_max = 8
    got = trace(sched.CosineAnnealingLR(opt, T_max=t_max, eta_min=eta_min), opt, t_max)
    expected = [eta_min + (0.1 - eta_min) * (1 + math.cos(math.pi * e / t_max)) / 2 for e in range(t_max + 1)]
    for x, y in zip(got, expected):
        assert math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-12)


def test_cosine_annealing_restarts_upward_past_t_max():
    opt = make_opt()
    got = trace(sched.CosineAnnealingLR(opt, T_max=4), opt, 8)
    expected = [0.1 * (1 + math.cos(math.pi * e / 4)) / 2 for e in range(9)]
    for x, y in zip(got, expected):
        assert math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-12)


def test_lambda_lr_per_group():
    opt = make_opt(groups=2)
    s = sched.LambdaLR(opt, [lambda e: 0.5**e, lambda e: 1 / (e + 1)])
    for e in range(1, 5):
        opt.step()
        s.step()
        close([g["lr"] for g in opt.param_groups], [0.1 * 0.5**e, 0.1 / (e + 1)])
    with pytest.raises(ValueError, match="Expected 2 lr_lambdas"):
        sched.LambdaLR(opt, [lambda e: 1.0])


def test_linear_lr():
    opt = make_opt()
    got = trace(sched.LinearLR(opt, start_factor=0.25, end_factor=1.0, total_iters=4), opt, 7)
    expected = [0.1 * (0.25 + 0.75 * min(e, 4) / 4) for e in range(8)]
    for x, y in zip(got, expected):
        assert math.isclose(x, y, rel_tol=1e-12)
    with pytest.raises(ValueError, match="Starting multiplicative factor"):
        sched.LinearLR(make_opt(), start_factor=0)


def test_constant_and_polynomial_lr():
    opt = make_opt()
    close(trace(sched.ConstantLR(opt, factor=0.5, total_iters=3), opt, 5), [0.05, 0.05, 0.05, 0.1, 0.1, 0.1])
    opt = make_opt()
    got = trace(sched.PolynomialLR(opt, total_iters=4, power=2.0), opt, 6)
    expected = [0.1 * (1 - min(e, 4) / 4) ** 2 for e in range(7)]
    for x, y in zip(got, expected):
        assert math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-15)


def test_sequential_lr_switches_at_milestones():
    opt = make_opt()
    warm = sched.LinearLR(opt, start_factor=0.5, total_iters=2)
    decay = sched.ExponentialLR(opt, gamma=0.5)
    s = sched.SequentialLR(opt, schedulers=[warm, decay], milestones=[3])
    got = trace(s, opt, 6)
    # warm-up: 0.05, 0.075, 0.1, 0.1; from epoch 3 the exponential schedule restarts at its epoch 0
    expected = [0.05, 0.075, 0.1, 0.1, 0.05, 0.025, 0.0125]
    close(got, expected)
    with pytest.raises(ValueError, match="one more than the number of milestone"):
        sched.SequentialLR(opt, schedulers=[warm, decay], milestones=[])


def test_one_cycle_lr_cosine_phases_and_momentum():
    opt = make_opt(lr=0.1, momentum=0.9)
    total, max_lr = 10, 1.0
    s = sched.OneCycleLR(opt, max_lr=max_lr, total_steps=total, pct_start=0.3)
    initial, min_lr = max_lr / 25.0, max_lr / 25.0 / 1e4

    def cos_anneal(start, end, pct):
        return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)

    end1 = 0.3 * total - 1
    lrs, moms = [], []
    for step in range(total):
        lrs.append(opt.param_groups[0]["lr"])
        moms.append(opt.param_groups[0]["momentum"])
        if step == 0:
            assert math.isclose(lrs[0], initial)
        opt.step()
        if step < total - 1:
            s.step()
    for step, (lr, mom) in enumerate(zip(lrs, moms)):
        if step <= end1:
            pct = step / end1
            exp_lr, exp_mom = cos_anneal(initial, max_lr, pct), cos_anneal(0.95, 0.85, pct)
        else:
            pct = (step - end1) / (total - 1 - end1)
            exp_lr, exp_mom = cos_anneal(max_lr, min_lr, pct), cos_anneal(0.85, 0.95, pct)
        assert math.isclose(lr, exp_lr, rel_tol=1e-9), step
        assert math.isclose(mom, exp_mom, rel_tol=1e-9), step
    with pytest.raises(ValueError, match="Tried to step"):
        s.step()
        s.step()


def test_one_cycle_lr_sets_adam_beta1():
    opt = make_opt(cls=optim.Adam)
    sched.OneCycleLR(opt, max_lr=0.01, total_steps=5, anneal_strategy="linear")
    assert opt.param_groups[0]["betas"] == (0.95, 0.999)
    with pytest.raises(ValueError, match="total_steps OR"):
        sched.OneCycleLR(make_opt(), max_lr=0.1)


def test_reduce_lr_on_plateau():
    opt = make_opt(lr=1.0)
    s = sched.ReduceLROnPlateau(opt, mode="min", factor=0.5, patience=2, cooldown=1, min_lr=0.2)
    metrics = [10, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9]
    lrs = []
    for m in metrics:
        s.step(m)
        lrs.append(opt.param_groups[0]["lr"])
    # improvements at 10 and 9; three bad epochs (>patience=2) halve the lr, then 1 cooldown epoch, down to min_lr
    assert lrs == [1.0, 1.0, 1.0, 1.0, 0.5, 0.5, 0.5, 0.5, 0.25, 0.25, 0.25]
    opt = make_opt(lr=1.0)
    s = sched.ReduceLROnPlateau(opt, mode="max", patience=0, threshold=0.1, threshold_mode="abs")
    s.step(1.0)
    s.step(1.05)
    assert opt.param_groups[0]["lr"] == pytest.approx(0.1)
    with pytest.raises(ValueError, match="Factor should be < 1.0"):
        sched.ReduceLROnPlateau(opt, factor=1.0)


def test_state_dict_round_trip_and_initial_lr():
    opt = make_opt()
    s = sched.StepLR(opt, step_size=2)
    assert opt.param_groups[0]["initial_lr"] == 0.1
    for _ in range(3):
        opt.step()
        s.step()
    state = s.state_dict()
    assert "optimizer" not in state and state["last_epoch"] == 3
    s2 = sched.StepLR(make_opt(), step_size=5)
    s2.load_state_dict(state)
    assert s2.step_size == 2 and s2.last_epoch == 3
    with pytest.raises(TypeError, match="is not an Optimizer"):
        sched.StepLR(object(), 1)
    with pytest.raises(KeyError, match="initial_lr"):
        sched.StepLR(make_opt(), 1, last_epoch=3)
