"""The CPU's kernels never print NumPy's floating-point warnings: PyTorch computes inf - inf silently."""

from __future__ import annotations

import subprocess
import sys

import pytest

_SCRIPT = """
import numpy as np
import opweave as ow
inf = float("inf")
a, b = ow.tensor([inf, 1.0, 0.0]), ow.tensor([inf, 0.0, 0.0])
results = [a - b, a + (-b), a * 0.0, a / b, b / b, ow.tensor([3e38]) * 10, ow.tensor([3e38]) + 3e38,
           ow.exp(ow.tensor([1000.0])), ow.log(b), a.sum(), (a - a).mean(), ow.sqrt(ow.tensor([-1.0])),
           ow.tensor([inf], dtype=ow.float16) - ow.tensor([inf], dtype=ow.float16),
           ow.add(a, -b, alpha=2), ow.sub(a, b, out=ow.empty(3)), ow.add(a, ow.tensor([1, 2, 3]))]
o = ow.empty(3)
ow.mul(a, b * 0, out=o)
a -= b
assert np.isnan(results[0].numpy()[0]) and results[3].numpy()[1] == inf
print("USER", np.float64(1.0) / np.float64(0.0))
"""


@pytest.mark.parametrize("flag", ["default", "always"])
def test_special_values_compute_silently_and_user_numpy_still_warns(flag):
    run = subprocess.run([sys.executable, "-W", flag, "-c", _SCRIPT], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert "USER inf" in run.stdout
    warned = [line for line in run.stderr.splitlines() if "RuntimeWarning" in line]
    assert len(warned) == 1 and "<string>" in warned[0], run.stderr  # only the user's own NumPy division
