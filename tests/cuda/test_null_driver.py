"""The CUDA backend's host path over the null driver (no GPU): what each tiny op asks of the driver.

``opweave_cuda._null_driver`` replaces ``cuda.bindings.driver`` with functions that return at once, so the
real runtime, allocator, streams and parameter packing run without a device (in a subprocess: the driver
must be in place before the backend lists its devices). A tiny op makes the launches the generator plans,
no host wait (a scalar operand is a queued memset, not a copy and a wait) and, once warm, no allocation
(the small-block cache hands the block of the previous call back).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytest.importorskip("cuda.bindings.driver")
_nvrtc = pytest.importorskip("opweave_cuda._nvrtc")
if _nvrtc.nvrtc()[0] is None:
    pytest.skip("NVRTC is not available (the backend lists no device without it)", allow_module_level=True)

SCRIPT = r"""
import json
from opweave_cuda._null_driver import install

null = install()
import numpy as np
import opweave as ow

a = ow.tensor(np.ones((4, 4), np.float32), device="cuda")
b = ow.tensor(np.full((4, 4), 2.0, np.float32), device="cuda")
ops = {
    "add": lambda: a + b,
    "mul": lambda: a * b,
    "sub scalar": lambda: a - 2.0,
    "exp": lambda: a.exp(),
    "sum": lambda: a.sum(),
    "slice": lambda: a[1:3],
    "clone": lambda: a.clone(),
    "to cpu": lambda: a.to("cpu"),
}
counts = {"device": ow.cuda.get_device_name()}
for name, op in ops.items():
    op()
    op()  # warm: kernels built, the small-block cache holds the previous call's blocks
    before = (null.launches, null.waits, null.allocations)
    op()
    counts[name] = [now - was for now, was in zip((null.launches, null.waits, null.allocations), before)]
print(json.dumps(counts))
"""


@pytest.fixture(scope="module")
def counts():
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=dict(os.environ), timeout=600
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_null_driver_makes_an_h100_like_device(counts):
    assert "null driver" in counts["device"]


@pytest.mark.parametrize("op", ["add", "mul", "sub scalar", "exp", "sum", "clone"])
def test_a_tiny_op_is_one_launch_without_host_waits_or_allocations(counts, op):
    launches, waits, allocations = counts[op]
    assert (launches, waits, allocations) == (1, 0, 0)


def test_a_view_launches_nothing_and_a_copy_to_the_host_waits_once(counts):
    assert counts["slice"] == [0, 0, 0]
    assert counts["to cpu"] == [0, 1, 0]
