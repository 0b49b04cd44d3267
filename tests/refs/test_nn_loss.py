"""Loss functions against NumPy formulas: every reduction, weights, ignore_index, label smoothing,
class-probability targets, broadcasting, out= variants, errors, and the F wrappers' string reductions."""

from __future__ import annotations

import math
import warnings

import _ew_support as S
import numpy as np
import opweave as ow
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

F = ow.nn.functional
C = ow.ops.canonical
LAYOUTS = ("contiguous", "transposed", "sliced", "broadcast")
REDUCTIONS = ("none", "mean", "sum")
TOL = {ow.float16: 5e-3, ow.bfloat16: 3e-2, ow.float32: 3e-5, ow.float64: 1e-10}


def _vals(t):
    return S.wide(np.array(t.numpy()))


def _close(actual, expected, dtype=None, tol=None):
    dtype = dtype or actual.dtype
    assert actual.dtype is dtype, (actual.dtype, dtype)
    tol = TOL[dtype] if tol is None else tol
    np.testing.assert_allclose(_vals(actual), np.asarray(expected, dtype=np.float64), rtol=tol, atol=tol)


def _reduce(loss, reduction):
    return {"none": loss, "mean": np.mean(loss), "sum": np.sum(loss)}[reduction]


def _log_softmax(x, axis):
    m = x.max(axis=axis, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=axis, keepdims=True))


# -- elementwise losses ----------------------------------------------------------------------------

PAIR = {
    "mse_loss": (lambda x, y: (x - y) ** 2, {}),
    "l1_loss": (lambda x, y: np.abs(x - y), {}),
    "smooth_l1_loss": (lambda x, y: np.where(np.abs(x - y) < 0.5, (x - y) ** 2, np.abs(x - y) - 0.25), {"beta": 0.5}),
    "huber_loss": (
        lambda x, y: np.where(np.abs(x - y) <= 2, 0.5 * (x - y) ** 2, 2 * (np.abs(x - y) - 1)),
        {"delta": 2.0},
    ),
    "soft_margin_loss": (lambda x, y: np.log1p(np.exp(-x * y)), {}),
}


@settings(max_examples=25)
@given(
    name=st.sampled_from(sorted(PAIR)),
    shape=st.sampled_from([(), (5,), (3, 4), (2, 3, 2), (0, 3)]),
    layout=st.sampled_from(LAYOUTS),
    reduction=st.sampled_from(REDUCTIONS),
    dtype=st.sampled_from([ow.float16, ow.bfloat16, ow.float32, ow.float64]),
    seed=st.integers(0, 2**16),
)
def test_pair_losses(name, shape, layout, reduction, dtype, seed):
    rng = np.random.default_rng(seed)
    x = S.make(rng.standard_normal(shape) * 2, dtype, layout)
    y = S.make(rng.standard_normal(shape) * 2, dtype)
    formula, kwargs = PAIR[name]
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        ref = _reduce(formula(_vals(x), _vals(y)), reduction)
    _close(getattr(F, name)(x, y, reduction=reduction, **kwargs), ref, dtype)


def test_pair_loss_broadcast_warns_and_out_variant():
    x, y = ow.randn(3, 4), ow.randn(4)
    with pytest.warns(UserWarning, match="target size"):
        out = F.mse_loss(x, y)
    _close(out, np.mean((x.numpy() - y.numpy()) ** 2))
    res = ow.empty(())
    C.mse_loss(x, ow.randn(3, 4), 2, out=res)
    assert res.shape == ()
    with pytest.raises(ValueError, match="mse_loss"):
        C.mse_loss(ow.randn(3, 4), ow.randn(2, 4))
    with pytest.raises(ValueError, match="reduction"):
        F.mse_loss(x, x, reduction="avg")
    with pytest.raises(ValueError, match="mse_loss.*reduction"):
        C.mse_loss(x, x, 5)
    with pytest.raises(TypeError, match="mse_loss"):
        C.mse_loss(ow.ones(3, dtype=ow.int64), ow.ones(3, dtype=ow.int64))
    with pytest.raises(ValueError, match="smooth_l1_loss.*beta"):
        C.smooth_l1_loss(x, x, 1, -1.0)
    with pytest.raises(ValueError, match="huber_loss.*delta"):
        C.huber_loss(x, x, 1, 0.0)


def test_deprecated_size_average_and_reduce():
    x, y = ow.randn(3, 4), ow.randn(3, 4)
    with pytest.warns(UserWarning, match="size_average"):
        out = F.l1_loss(x, y, size_average=False)
    _close(out, np.abs(x.numpy() - y.numpy()).sum())
    with pytest.warns(UserWarning):
        assert F.l1_loss(x, y, reduce=False).shape == (3, 4)


# -- probabilistic losses -----------------------------------------------------------------------------


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_binary_cross_entropy(reduction):
    rng = np.random.default_rng(0)
    p = rng.uniform(0, 1, (4, 5))
    p[0, :2] = [0.0, 1.0]
    y = rng.uniform(0, 1, (4, 5))
    w = rng.uniform(0.5, 2, (5,))
    with np.errstate(divide="ignore"):
        ref = -(y * np.maximum(np.log(p), -100) + (1 - y) * np.maximum(np.log(1 - p), -100)) * w
    _close(
        F.binary_cross_entropy(ow.tensor(p), ow.tensor(y), ow.tensor(w), reduction=reduction), _reduce(ref, reduction)
    )
    with pytest.raises(ValueError, match="between 0 and 1"):
        C.binary_cross_entropy(ow.tensor([0.5, 1.5]), ow.tensor([1.0, 0.0]))
    with pytest.raises(ValueError, match="binary_cross_entropy"):
        F.binary_cross_entropy(ow.tensor(p), ow.tensor(y[0]))


@settings(max_examples=15)
@given(reduction=st.sampled_from(REDUCTIONS), weighted=st.booleans(), pos=st.booleans(), seed=st.integers(0, 2**16))
def test_binary_cross_entropy_with_logits(reduction, weighted, pos, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((3, 4)) * 30  # large logits: the stable formula
    y = rng.uniform(0, 1, (3, 4))
    w = rng.uniform(0.5, 2, (3, 4)) if weighted else None
    pw = rng.uniform(0.5, 3, (4,)) if pos else None
    log_sig, log_1m = -np.logaddexp(0, -x), -np.logaddexp(0, x)
    ref = -((1 if pw is None else pw) * y * log_sig + (1 - y) * log_1m) * (1 if w is None else w)
    out = F.binary_cross_entropy_with_logits(
        ow.tensor(x),
        ow.tensor(y),
        None if w is None else ow.tensor(w),
        reduction=reduction,
        pos_weight=None if pw is None else ow.tensor(pw),
    )
    _close(out, _reduce(ref, reduction), tol=1e-9)


@pytest.mark.parametrize("log_target", [False, True])
@pytest.mark.parametrize("reduction", ["none", "mean", "sum", "batchmean"])
def test_kl_div(log_target, reduction):
    rng = np.random.default_rng(1)
    x = np.log(rng.dirichlet(np.ones(5), 3))
    t = rng.dirichlet(np.ones(5), 3)
    t[0, 0] = 0.0
    if log_target:
        t = np.log(t + 0.01)
        ref = np.exp(t) * (t - x)
    else:
        ref = np.where(t > 0, t * np.log(np.where(t > 0, t, 1)), 0) - t * x
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = F.kl_div(ow.tensor(x), ow.tensor(t), reduction=reduction, log_target=log_target)
    want = ref.sum() / 3 if reduction == "batchmean" else _reduce(ref, reduction)
    _close(out, want)


@pytest.mark.parametrize("log_input,full", [(True, False), (False, False), (True, True), (False, True)])
def test_poisson_nll_loss(log_input, full):
    rng = np.random.default_rng(2)
    x = rng.uniform(0.1, 3, (4, 5))
    y = rng.integers(0, 6, (4, 5)).astype(float)
    ref = np.exp(x) - y * x if log_input else x - y * np.log(x + 1e-8)
    if full:
        with np.errstate(all="ignore"):
            ref = ref + np.where(y > 1, y * np.log(y) - y + 0.5 * np.log(2 * np.pi * y), 0)
    _close(F.poisson_nll_loss(ow.tensor(x), ow.tensor(y), log_input, full, reduction="none"), ref)


@pytest.mark.parametrize("full", [False, True])
def test_gaussian_nll_loss(full):
    rng = np.random.default_rng(3)
    x, y = rng.standard_normal((4, 3)), rng.standard_normal((4, 3))
    var = rng.uniform(0.01, 2, (4, 1))
    ref = 0.5 * (np.log(np.maximum(var, 1e-6)) + (x - y) ** 2 / np.maximum(var, 1e-6))
    if full:
        ref = ref + 0.5 * math.log(2 * math.pi)
    _close(F.gaussian_nll_loss(ow.tensor(x), ow.tensor(y), ow.tensor(var), full=full), ref.mean())
    total = F.gaussian_nll_loss(ow.tensor(x), ow.tensor(y), ow.tensor(var[:, 0]), full=full, reduction="sum")
    _close(total, ref.sum())
    with pytest.raises(ValueError, match="negative"):
        F.gaussian_nll_loss(ow.tensor(x), ow.tensor(y), ow.tensor(-var))


# -- margin losses ------------------------------------------------------------------------------------


def test_margin_losses():
    rng = np.random.default_rng(4)
    a, b = rng.standard_normal(6), rng.standard_normal(6)
    y = np.array([1.0, -1, 1, -1, 1, -1])
    _close(
        F.margin_ranking_loss(ow.tensor(a), ow.tensor(b), ow.tensor(y), 0.3), np.maximum(0, -y * (a - b) + 0.3).mean()
    )
    ref = np.where(y == 1, a, np.maximum(0, 0.7 - a))
    _close(F.hinge_embedding_loss(ow.tensor(a), ow.tensor(y), 0.7, reduction="none"), ref)
    x1, x2 = rng.standard_normal((6, 4)), rng.standard_normal((6, 4))
    cos = (x1 * x2).sum(1) / np.sqrt(((x1**2).sum(1) + 1e-12) * ((x2**2).sum(1) + 1e-12))
    ref = np.where(y == 1, 1 - cos, np.maximum(0, cos - 0.1))
    _close(F.cosine_embedding_loss(ow.tensor(x1), ow.tensor(x2), ow.tensor(y), 0.1, reduction="sum"), ref.sum())
    with pytest.raises(ValueError, match="cosine_embedding_loss"):
        F.cosine_embedding_loss(ow.tensor(x1), ow.tensor(x2), ow.tensor(y[:3]))


@pytest.mark.parametrize("p", [1, 2])
@pytest.mark.parametrize("weighted", [False, True])
def test_multi_margin_loss(p, weighted):
    rng = np.random.default_rng(5)
    x = rng.standard_normal((4, 5))
    t = rng.integers(0, 5, 4)
    w = rng.uniform(0.5, 2, 5)
    ref = np.zeros(4)
    for i in range(4):
        for j in range(5):
            if j != t[i]:
                ref[i] += max(0, 0.8 - x[i, t[i]] + x[i, j]) ** p * (w[t[i]] if weighted else 1)
    ref /= 5
    out = F.multi_margin_loss(ow.tensor(x), ow.tensor(t), p, 0.8, ow.tensor(w) if weighted else None, reduction="none")
    _close(out, ref)
    with pytest.raises(ValueError, match="multi_margin_loss"):
        F.multi_margin_loss(ow.tensor(x), ow.tensor(t), p=3)
    with pytest.raises(ValueError, match="multi_margin_loss.*out of bounds"):
        F.multi_margin_loss(ow.tensor(x), ow.tensor([0, 1, 5, 2]))
    with pytest.raises(ValueError, match="multi_margin_loss.*weight"):  # checked before the target's dtype
        F.multi_margin_loss(ow.tensor(x), ow.tensor(t.astype(np.float64)), weight=ow.tensor(w[None]))
    with pytest.raises(RuntimeError, match="multi_margin_loss.*weight"):
        F.multi_margin_loss(ow.tensor(x), ow.tensor(t), weight=ow.tensor(w[:4]))
    # unreduced, the loss has the target's shape: 0-dim for a 0-dim target; a 0-dim input is one class
    row = F.multi_margin_loss(
        ow.tensor(x[0]), ow.tensor(t[0]), p, 0.8, ow.tensor(w) if weighted else None, reduction="none"
    )
    assert row.shape == ()
    _close(row, ref[0])
    assert F.multi_margin_loss(ow.tensor(x[0]), ow.tensor(t[:1]), p, 0.8, reduction="none").shape == (1,)
    single = F.multi_margin_loss(ow.tensor(x[0, 0]), ow.tensor(0), p, 0.8, reduction="none")
    assert single.shape == ()
    _close(single, 0.0)


def test_multilabel_margin_loss():
    x = np.array([[0.1, 0.2, 0.4, 0.8], [0.3, -0.2, 0.5, 0.1], [0.1, 0.2, 0.4, 0.8]])
    t = np.array([[3, 0, -1, 1], [1, 2, 3, -1], [3, 3, 0, -1]])  # a repeated target counts twice (PyTorch)
    ref = np.zeros(3)
    for i in range(3):
        targets = list(t[i][: list(t[i]).index(-1)])
        for j in targets:
            for k in range(4):
                if k not in targets:
                    ref[i] += max(0, 1 - (x[i, j] - x[i, k]))
    ref /= 4
    _close(F.multilabel_margin_loss(ow.tensor(x), ow.tensor(t), reduction="none"), ref)
    _close(F.multilabel_margin_loss(ow.tensor(x[0]), ow.tensor(t[0])), ref[0])


def test_multilabel_soft_margin_and_soft_margin():
    rng = np.random.default_rng(6)
    x = rng.standard_normal((3, 4))
    y = rng.integers(0, 2, (3, 4)).astype(float)
    ls = lambda v: -np.logaddexp(0, -v)  # noqa: E731
    ref = -(y * ls(x) + (1 - y) * ls(-x)).mean(1)
    _close(F.multilabel_soft_margin_loss(ow.tensor(x), ow.tensor(y), reduction="none"), ref)
    _close(F.soft_margin_loss(ow.tensor(x), ow.tensor(2 * y - 1)), np.log1p(np.exp(-x * (2 * y - 1))).mean())


@pytest.mark.parametrize("swap", [False, True])
@pytest.mark.parametrize("p", [1.0, 2.0])
def test_triplet_losses(swap, p):
    rng = np.random.default_rng(7)
    a, pos, neg = (rng.standard_normal((5, 3)) for _ in range(3))
    d = lambda u, v: np.linalg.norm(u - v + 1e-6, ord=p, axis=-1)  # noqa: E731
    dn = np.minimum(d(a, neg), d(pos, neg)) if swap else d(a, neg)
    ref = np.maximum(1.0 + d(a, pos) - dn, 0)
    args = [ow.tensor(v) for v in (a, pos, neg)]
    _close(F.triplet_margin_loss(*args, p=p, swap=swap, reduction="none"), ref)
    dist = lambda u, v: F.pairwise_distance(u, v, p)  # noqa: E731
    _close(F.triplet_margin_with_distance_loss(*args, distance_function=dist, swap=swap, reduction="sum"), ref.sum())


# -- nll and cross entropy ----------------------------------------------------------------------------------


def _nll_ref(logp, t, w, reduction, ignore_index=-100):
    cdim = 0 if logp.ndim == 1 else 1
    lp = np.moveaxis(logp, cdim, -1)
    ign = t == ignore_index
    safe = np.where(ign, 0, t)
    wt = np.where(ign, 0.0, (np.ones(lp.shape[-1]) if w is None else w)[safe])
    loss = np.where(ign, 0.0, -np.take_along_axis(lp, safe[..., None], -1)[..., 0] * wt)
    if reduction == "mean":
        return loss.sum() / wt.sum()
    return _reduce(loss, reduction)


@settings(max_examples=25)
@given(
    shape=st.sampled_from([(5,), (4, 3), (2, 3, 4), (2, 4, 2, 3)]),
    reduction=st.sampled_from(REDUCTIONS),
    weighted=st.booleans(),
    ignore=st.booleans(),
    smoothing=st.sampled_from([0.0, 0.2]),
    layout=st.sampled_from(LAYOUTS),
    seed=st.integers(0, 2**16),
)
def test_cross_entropy_class_indices(shape, reduction, weighted, ignore, smoothing, layout, seed):
    rng = np.random.default_rng(seed)
    cdim = 0 if len(shape) == 1 else 1
    classes = shape[cdim]
    x = S.make(rng.standard_normal(shape) * 3, ow.float64, layout)
    xv = _vals(x)
    tshape = shape[:cdim] + shape[cdim + 1 :]
    t = rng.integers(0, classes, tshape)
    if ignore and t.size > 1:
        t.flat[0] = -100
    w = rng.uniform(0.5, 2, classes) if weighted else None
    logp = _log_softmax(xv, cdim)
    nll = _nll_ref(logp, t, w, reduction)
    ign = t == -100
    wb = np.reshape(np.ones(classes) if w is None else w, [-1 if d == cdim else 1 for d in range(len(shape))])
    smooth = np.where(ign, 0, -(logp * wb).sum(cdim))
    if reduction == "mean":
        smooth = smooth.sum() / np.where(ign, 0, (np.ones(classes) if w is None else w)[np.where(ign, 0, t)]).sum()
    else:
        smooth = _reduce(smooth, reduction)
    ref = (1 - smoothing) * nll + smoothing / classes * smooth
    out = F.cross_entropy(
        x, ow.tensor(t), None if w is None else ow.tensor(w), reduction=reduction, label_smoothing=smoothing
    )
    _close(out, ref, tol=1e-9)
    if smoothing == 0:
        _close(
            F.nll_loss(F.log_softmax(x, cdim), ow.tensor(t), None if w is None else ow.tensor(w), reduction=reduction),
            nll,
            tol=1e-9,
        )


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("smoothing", [0.0, 0.3])
def test_cross_entropy_probabilities(reduction, smoothing):
    rng = np.random.default_rng(8)
    x = rng.standard_normal((3, 4, 2))
    y = rng.dirichlet(np.ones(4), (3, 2)).transpose(0, 2, 1)
    w = rng.uniform(0.5, 2, 4)
    ys = y * (1 - smoothing) + smoothing / 4
    loss = -(_log_softmax(x, 1) * ys * w[None, :, None]).sum(1)
    ref = loss.sum() / 6 if reduction == "mean" else _reduce(loss, reduction)
    out = F.cross_entropy(ow.tensor(x), ow.tensor(y), ow.tensor(w), reduction=reduction, label_smoothing=smoothing)
    _close(out, ref, tol=1e-9)


@pytest.mark.parametrize("dtype", [ow.float16, ow.bfloat16, ow.float32])
def test_cross_entropy_low_precision(dtype):
    rng = np.random.default_rng(9)
    x = ow.tensor(rng.standard_normal((8, 10)), dtype=dtype)
    t = rng.integers(0, 10, 8)
    ref = _nll_ref(_log_softmax(_vals(x), 1), t, None, "mean")
    _close(F.cross_entropy(x, ow.tensor(t)), ref, dtype)


def test_nll_variants_and_errors():
    rng = np.random.default_rng(10)
    x = rng.standard_normal((2, 3, 2, 2))
    t = rng.integers(0, 3, (2, 2, 2))
    ref = _nll_ref(x, t, None, "sum")
    _close(C.nll_loss2d(ow.tensor(x), ow.tensor(t), None, 2), ref)
    _close(C.nll_loss_nd(ow.tensor(x), ow.tensor(t), None, 2), ref)
    out = ow.empty(())
    C.nll_loss(ow.tensor(x[:, :, 0, 0]), ow.tensor(t[:, 0, 0]), out=out)
    _close(out, _nll_ref(x[:, :, 0, 0], t[:, 0, 0], None, "mean"))
    with pytest.raises(ValueError, match="nll_loss.*out of bounds"):
        C.nll_loss(ow.randn(2, 3), ow.tensor([0, 3]))
    with pytest.raises(TypeError, match="nll_loss.*int64"):
        C.nll_loss(ow.randn(2, 3), ow.tensor([0, 1], dtype=ow.int32))
    with pytest.raises(ValueError, match="nll_loss2d"):
        C.nll_loss2d(ow.randn(2, 3), ow.tensor([0, 1]))
    with pytest.raises(ValueError, match="cross_entropy_loss.*label_smoothing"):
        F.cross_entropy(ow.randn(2, 3), ow.tensor([0, 1]), label_smoothing=1.5)
    with pytest.raises(ValueError, match="weight"):
        F.cross_entropy(ow.randn(2, 3), ow.tensor([0, 1]), ow.ones(4))
    all_ignored = F.nll_loss(ow.randn(2, 3), ow.tensor([-100, -100]))
    assert math.isnan(all_ignored.item())


def test_losses_on_meta():
    x = ow.empty(4, 5, device="meta")
    t = ow.empty(4, dtype=ow.int64, device="meta")
    assert F.cross_entropy(x, t).shape == ()
    assert F.nll_loss(x, t, reduction="none").shape == (4,)
    assert F.mse_loss(x, x, reduction="none").shape == (4, 5)
