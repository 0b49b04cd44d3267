"""``nn.functional.ctc_loss`` / ``nn.CTCLoss`` against a NumPy forward algorithm written here."""

from __future__ import annotations

import numpy as np
import opweave as ow
import pytest
from hypothesis import given
from hypothesis import strategies as st
from opweave import nn
from opweave.nn import functional as F


def ctc_numpy(lp: np.ndarray, target: list[int], blank: int) -> float:
    """``-log p(target)`` for one sequence of log-probabilities (T, C): the forward algorithm in log space."""
    ext = [blank]
    for label in target:
        ext += [label, blank]
    steps, size = lp.shape[0], len(ext)
    if steps == 0:
        return 0.0 if not target else np.inf
    alpha = np.full(size, -np.inf)
    alpha[0] = lp[0, ext[0]]
    if size > 1:
        alpha[1] = lp[0, ext[1]]
    for t in range(1, steps):
        new = np.full(size, -np.inf)
        for s in range(size):
            terms = [alpha[s]]
            if s >= 1:
                terms.append(alpha[s - 1])
            if s >= 2 and ext[s] != blank and ext[s] != ext[s - 2]:
                terms.append(alpha[s - 2])
            new[s] = np.logaddexp.reduce(terms) + lp[t, ext[s]]
        alpha = new
    ends = [alpha[size - 1]] + ([alpha[size - 2]] if size > 1 else [])
    return -float(np.logaddexp.reduce(ends))


@st.composite
def ctc_cases(draw):
    steps = draw(st.integers(0, 6))
    batch = draw(st.integers(1, 3))
    classes = draw(st.integers(2, 5))
    blank = draw(st.integers(0, classes - 1))
    labels = [c for c in range(classes) if c != blank]
    width = draw(st.integers(0, 4))
    target_lengths = [draw(st.integers(0, width)) for _ in range(batch)]
    input_lengths = [draw(st.integers(0, steps)) for _ in range(batch)]
    targets = [[draw(st.sampled_from(labels)) for _ in range(width)] for _ in range(batch)]
    logits = draw(st.lists(st.floats(-4, 4), min_size=steps * batch * classes, max_size=steps * batch * classes))
    dtype = draw(st.sampled_from([np.float32, np.float64]))
    x = np.array(logits, dtype=np.float64).reshape(steps, batch, classes)
    lp = (x - np.logaddexp.reduce(x, axis=2, keepdims=True)).astype(dtype) if steps else x.astype(dtype)
    return lp, targets, input_lengths, target_lengths, blank


def expected_losses(lp, targets, input_lengths, target_lengths, blank):
    return np.array(
        [
            ctc_numpy(lp[: input_lengths[n], n].astype(np.float64), targets[n][: target_lengths[n]], blank)
            for n in range(len(targets))
        ]
    )


@given(ctc_cases(), st.sampled_from(["none", "sum", "mean"]), st.booleans(), st.booleans(), st.booleans())
def test_ctc_loss_matches_the_forward_algorithm(case, reduction, zero_infinity, concatenated, tensor_lengths):
    lp, targets, input_lengths, target_lengths, blank = case
    losses = expected_losses(lp, targets, input_lengths, target_lengths, blank)
    if zero_infinity:
        losses = np.where(np.isinf(losses), 0.0, losses)
    if reduction == "sum":
        want = losses.sum()
    elif reduction == "mean":
        want = (losses / np.maximum(np.array(target_lengths), 1)).mean()
    else:
        want = losses
    if concatenated:
        flat = [label for n, row in enumerate(targets) for label in row[: target_lengths[n]]]
        tg = ow.tensor(flat, dtype=ow.int64)
    else:
        tg = ow.tensor(targets, dtype=ow.int32).reshape(len(targets), -1)
    lengths = (
        (ow.tensor(input_lengths), ow.tensor(target_lengths)) if tensor_lengths else (input_lengths, target_lengths)
    )
    log_probs = ow.tensor(lp)
    saved = log_probs.clone()
    got = F.ctc_loss(log_probs, tg, *lengths, blank=blank, reduction=reduction, zero_infinity=zero_infinity)
    assert got.dtype == log_probs.dtype and tuple(got.shape) == np.shape(want)
    tol = 1e-4 if lp.dtype == np.float32 else 1e-10
    np.testing.assert_allclose(got.numpy(), want, rtol=tol, atol=tol * max(1, lp.shape[0]))
    assert ow.equal(log_probs, saved)
    module = nn.CTCLoss(blank=blank, reduction=reduction, zero_infinity=zero_infinity)
    np.testing.assert_allclose(module(log_probs, tg, *lengths).numpy(), got.numpy())


def test_unbatched_input_gives_a_scalar_loss():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(5, 4))
    lp = x - np.logaddexp.reduce(x, axis=1, keepdims=True)
    got = F.ctc_loss(ow.tensor(lp), ow.tensor([1, 2, 2]), [5], [3], reduction="none")
    assert got.shape == ()
    np.testing.assert_allclose(got.item(), ctc_numpy(lp, [1, 2, 2], 0), rtol=1e-12)


def test_bad_arguments_raise():
    lp = ow.zeros(4, 2, 3).log_softmax(2)
    tg = ow.tensor([[1, 2], [1, 1]])
    with pytest.raises(RuntimeError, match="input length"):
        F.ctc_loss(lp, tg, [5, 4], [2, 2])
    with pytest.raises(RuntimeError, match="blank"):
        F.ctc_loss(lp, tg, [4, 4], [2, 2], blank=3)
    with pytest.raises(RuntimeError, match="target length"):
        F.ctc_loss(lp, tg, [4, 4], [3, 2])
    with pytest.raises(RuntimeError, match="floating"):
        F.ctc_loss(ow.zeros(4, 2, 3, dtype=ow.int64), tg, [4, 4], [2, 2])
    with pytest.raises(ValueError, match="reduction"):
        F.ctc_loss(lp, tg, [4, 4], [2, 2], reduction="avg")
