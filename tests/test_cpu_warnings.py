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


_LOADED_IN_CATCH_WARNINGS = """
import warnings
import numpy as np
import opweave as ow
from opweave import _backends
assert "cpu" not in _backends._backends
with warnings.catch_warnings():
    ow.tensor([1.0])  # the CPU plugin registers here, inside the block
    assert "cpu" in _backends._backends
inf = float("inf")
a, b = ow.tensor([inf, 1.0, -1.0, 0.0]), ow.tensor([inf, 0.0, 0.0, 0.0])
with np.errstate(all="ignore"):
    an, bn = a.numpy(), b.numpy()
    want = [an - bn, an * bn, an / bn, np.log(bn - 1), np.float32(3e38) * np.float32(10)]
got = [a - b, a * b, a / b, ow.log(b - 1), ow.tensor([3e38]) * 10]
for g, w in zip(got, want):
    np.testing.assert_array_equal(g.numpy(), w)
try:
    print("USER", np.float64(1.0) / np.float64(0.0))
except RuntimeWarning:
    print("USER raises")
warnings.resetwarnings()  # an emptied filter list gets the plugin's filter back (no kernel warning printed)
np.testing.assert_array_equal((a - b).numpy(), want[0])
"""


@pytest.mark.parametrize(("flag", "user"), [("error", "USER raises"), ("default", "USER inf")])
def test_the_filter_outlives_a_catch_warnings_block_the_plugin_loaded_in(flag, user):
    run = subprocess.run(
        [sys.executable, "-W", flag, "-c", _LOADED_IN_CATCH_WARNINGS], capture_output=True, text=True, timeout=300
    )
    assert run.returncode == 0, run.stderr
    assert user in run.stdout
    warned = [line for line in run.stderr.splitlines() if "RuntimeWarning" in line]
    assert len(warned) == (flag == "default") and all("<string>" in w for w in warned), run.stderr
