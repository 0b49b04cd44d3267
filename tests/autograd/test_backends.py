"""Gradients on the other backends: the same graph as on the CPU, no backend code for backward."""

from __future__ import annotations

import numpy as np
import opweave as ow
import opweave.nn.functional as F
import pytest


def _on(device: str, array: np.ndarray):
    try:
        return ow.tensor(array, dtype=ow.float32).to(device).requires_grad_()
    except (RuntimeError, NotImplementedError) as exc:  # plugin or device not available here
        pytest.skip(f"{device} unavailable: {exc}")


def _model(x, w, k):
    h = ow.tanh(x @ w)
    c = F.conv2d(h.reshape(1, 1, 4, 5), k, padding=1)
    return (F.log_softmax(c.reshape(4, 5), dim=1) * h).sum() + F.max_pool2d(c, 2).sum()


@pytest.mark.parametrize("device", ["opencl", "vnpu"])
def test_gradients_match_the_cpu(device):
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal((4, 3)), rng.standard_normal((3, 5)), rng.standard_normal((1, 1, 3, 3))]
    on_device = [_on(device, a) for a in arrays]
    on_cpu = [ow.tensor(a, dtype=ow.float32, requires_grad=True) for a in arrays]
    _model(*on_device).backward()
    _model(*on_cpu).backward()
    for d, c in zip(on_device, on_cpu):
        assert d.grad.device == d.device
        np.testing.assert_allclose(d.grad.cpu().numpy(), c.grad.numpy(), rtol=1e-4, atol=1e-5)
