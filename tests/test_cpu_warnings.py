"""The CPU's kernels never print NumPy's floating-point warnings: PyTorch computes inf - inf silently.

The kernels run NumPy in a context whose error state is ``ignore``; the user's NumPy error state and
warnings filters are left as they are (the plugin adds one filter scoped to its own modules)."""

from __future__ import annotations

import subprocess
import sys
import threading

import numpy as np
import opweave as ow
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
warnings.resetwarnings()  # no filter at all: the kernels are quiet without one
np.testing.assert_array_equal((a - b).numpy(), want[0])
np.testing.assert_array_equal((a / b).numpy(), want[2])
np.testing.assert_array_equal(ow.log(b - 1).numpy(), want[3])
assert ow.ops.prims.prod(ow.tensor([300.0, 300.0], dtype=ow.float16), None).item() == inf  # cast past float16
"""


@pytest.mark.parametrize(("flag", "user"), [("error", "USER raises"), ("default", "USER inf")])
def test_kernels_stay_quiet_after_a_catch_warnings_block_the_plugin_loaded_in(flag, user):
    run = subprocess.run(
        [sys.executable, "-W", flag, "-c", _LOADED_IN_CATCH_WARNINGS], capture_output=True, text=True, timeout=300
    )
    assert run.returncode == 0, run.stderr
    assert user in run.stdout
    warned = [line for line in run.stderr.splitlines() if "RuntimeWarning" in line]
    assert len(warned) == (flag == "default") and all("<string>" in w for w in warned), run.stderr


_STATE_UNTOUCHED = """
import warnings
import numpy as np
import scipy.special  # adds a filter of its own on import
before, filters = np.geterr(), list(warnings.filters)
import opweave as ow
inf = float("inf")
x = ow.tensor([inf, 1.0]) - ow.tensor([inf, 0.0])
ow.exp(ow.tensor([1000.0])), ow.tensor([1.0]) / ow.tensor([0.0]), ow.tensor([3e38]) * 10
assert np.geterr() == before, (np.geterr(), before)
added = [f for f in warnings.filters if f not in filters]
assert len(added) == 1 and added[0][0] == "ignore" and "opweave_cpu" in added[0][3].pattern, added
print("OK")
"""


def test_importing_and_computing_leaves_the_users_numpy_error_state_alone():
    run = subprocess.run([sys.executable, "-c", _STATE_UNTOUCHED], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0 and "OK" in run.stdout, run.stderr


def test_the_users_errstate_raise_does_not_reach_the_kernels():
    inf = float("inf")
    a, b = ow.tensor([inf, 1.0, 0.0]), ow.tensor([inf, 0.0, 0.0])
    with np.errstate(all="raise"):
        got = [(a - b).numpy(), (a / b).numpy(), (a * 0.0).numpy(), ow.exp(ow.tensor([1000.0])).numpy()]
        with pytest.raises(FloatingPointError):  # the user's own NumPy code still follows the user's state
            np.float64(1.0) / np.float64(0.0)
    with np.errstate(all="ignore"):
        an, bn = a.numpy(), b.numpy()
        want = [an - bn, an / bn, an * np.float32(0.0), np.exp(np.array([1000.0], np.float32))]
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


def test_threads_computing_at_once_get_right_results():
    # Big operands: NumPy releases the GIL inside the loop, so threads meet inside the shared quiet context.
    n = 1 << 18
    base = np.linspace(-1.0, 1.0, n, dtype=np.float32)
    base[::7] = np.inf
    a, b = ow.tensor(base), ow.tensor(base[::-1].copy())
    with np.errstate(all="ignore"):
        want = {"add": base + base[::-1], "sub": base - base[::-1], "mul": base * base[::-1]}
    errors, results = [], []

    def work():
        try:
            for _ in range(20):
                results.append({"add": (a + b).numpy(), "sub": (a - b).numpy(), "mul": (a * b).numpy()})
        except Exception as e:  # noqa: BLE001 - any error fails the test below
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert len(results) == 80
    for r in results:
        for name, w in want.items():
            np.testing.assert_array_equal(r[name], w)
