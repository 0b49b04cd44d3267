"""examples/train_digits.py: its first ten training losses against a NumPy forward/backward/SGD of the same model."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import opweave

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "train_digits.py"


def load_example():
    spec = importlib.util.spec_from_file_location("train_digits_example", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def im2col(x):
    """(B, 1, 8, 8) → (B, 64, 9): the 3×3 neighbourhood (zero padded) of every pixel."""
    b = x.shape[0]
    xp = np.pad(x[:, 0], ((0, 0), (1, 1), (1, 1)))
    cols = np.empty((b, 8, 8, 9))
    for di in range(3):
        for dj in range(3):
            cols[:, :, :, di * 3 + dj] = xp[:, di : di + 8, dj : dj + 8]
    return cols.reshape(b, 64, 9)


def numpy_step(params, buffers, x, y, lr=0.05, momentum=0.9):
    """Forward, backward and SGD-with-momentum of conv3×3(1→16)-ReLU-maxpool2-flatten-linear-ReLU-linear."""
    wc, bc, w1, b1, w2, b2 = params
    b = x.shape[0]
    cols = im2col(x)
    conv = (cols @ wc.reshape(16, 9).T + bc).transpose(0, 2, 1).reshape(b, 16, 8, 8)
    act = np.maximum(conv, 0)
    windows = act.reshape(b, 16, 4, 2, 4, 2).transpose(0, 1, 2, 4, 3, 5).reshape(b, 16, 4, 4, 4)
    arg = windows.argmax(-1)
    pooled = np.take_along_axis(windows, arg[..., None], -1)[..., 0]
    flat = pooled.reshape(b, 256)
    z1 = flat @ w1.T + b1
    h1 = np.maximum(z1, 0)
    logits = h1 @ w2.T + b2
    shifted = logits - logits.max(1, keepdims=True)
    logp = shifted - np.log(np.exp(shifted).sum(1, keepdims=True))
    loss = -logp[np.arange(b), y].mean()

    dlogits = np.exp(logp)
    dlogits[np.arange(b), y] -= 1
    dlogits /= b
    gw2, gb2 = dlogits.T @ h1, dlogits.sum(0)
    dz1 = (dlogits @ w2) * (z1 > 0)
    gw1, gb1 = dz1.T @ flat, dz1.sum(0)
    dpooled = (dz1 @ w1).reshape(b, 16, 4, 4)
    dwindows = np.zeros_like(windows)
    np.put_along_axis(dwindows, arg[..., None], dpooled[..., None], -1)
    dact = dwindows.reshape(b, 16, 4, 4, 2, 2).transpose(0, 1, 2, 4, 3, 5).reshape(b, 16, 8, 8)
    dconv = (dact * (conv > 0)).reshape(b, 16, 64)
    gwc = np.einsum("bcp,bpk->ck", dconv, cols).reshape(16, 1, 3, 3)
    gbc = dconv.sum((0, 2))
    grads = [gwc, gbc, gw1, gb1, gw2, gb2]
    new_params = []
    for i, (p, g) in enumerate(zip(params, grads)):
        buffers[i] = g.copy() if buffers[i] is None else momentum * buffers[i] + g
        new_params.append(p - lr * buffers[i])
    return loss, new_params


def test_first_ten_losses_match_a_numpy_reference():
    ex = load_example()
    opweave.manual_seed(0)
    x_train, y_train, _, _ = ex.load_data(0)
    model = ex.build_model()
    optimizer = ex.make_optimizer(model)
    loss_fn = opweave.nn.CrossEntropyLoss()
    params = [p.detach().numpy().astype(np.float64) for p in model.parameters()]
    assert [p.shape for p in params] == [(16, 1, 3, 3), (16,), (64, 256), (64,), (10, 64), (10,)]
    steps = ex.batches(len(y_train), 64, np.random.default_rng(0))[:10]
    xt, yt = opweave.tensor(x_train), opweave.tensor(y_train)
    got, expected = [], []
    buffers = [None] * 6
    for idx in steps:
        index = opweave.tensor(idx)
        got.append(ex.train_step(model, optimizer, loss_fn, xt[index], yt[index]))
        loss, params = numpy_step(params, buffers, x_train[idx].astype(np.float64), y_train[idx])
        expected.append(loss)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-5)
    assert expected[-1] < expected[0]  # it learns
    for p, ref in zip(model.parameters(), params):
        np.testing.assert_allclose(p.detach().numpy(), ref, rtol=0, atol=1e-5)
