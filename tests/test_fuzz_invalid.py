"""Every operator, called with one argument broken, succeeds or raises a typed error naming it, on every backend.

The fuzz itself is ``fuzz_invalid.py`` (see there for the mutations and the checks); each backend runs in its own
Python process, seeded by hypothesis, so that a crash of the process fails the test and names the op it was running.
Budget: the ``ci`` profile breaks every op once on cpu, vnpu and the x86 int8 engine, and a third of the ops (a
different third per seed) on OpenCL, whose kernels compile on first use; ``full`` breaks every op five times on
every backend.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import opweave as ow
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

DRIVER = Path(__file__).with_name("fuzz_invalid.py")
FULL = os.environ.get("OPWEAVE_HYPOTHESIS_PROFILE") == "full"
# backend -> (rounds per op, shards: the op set is cut into this many parts and one part runs per seed)
BUDGET = {"cpu": (1, 1), "vnpu": (1, 1), "x86quant": (1, 1), "opencl": (1, 3)}
if FULL:
    BUDGET = {name: (5, 1) for name in BUDGET}


def _available(name: str) -> bool:
    if name == "x86quant":
        return "x86" in ow.backends.quantized.supported_engines
    return any(s.name == name and s.available for s in ow.backends.status())


# Far beyond a normal run (a minute or two on a loaded 2-core machine): only a hang reaches it.
HANG_SECONDS = 1500


@pytest.mark.parametrize("backend", sorted(BUDGET))
@settings(max_examples=1, deadline=None, database=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_invalid_arguments_raise_typed_errors_naming_the_op(backend, seed):
    if not _available(backend):
        pytest.skip(f"{backend} is not available here")
    rounds, shards = BUDGET[backend]
    try:
        run = subprocess.run(
            [sys.executable, str(DRIVER), backend, str(seed), str(rounds), str(shards)],
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONWARNINGS": "ignore"},
            timeout=HANG_SECONDS,
        )
    except subprocess.TimeoutExpired as exc:  # a deadlock must fail the test, not stall the suite
        tail = (exc.stdout or b"")[-2000:]
        pytest.fail(f"the fuzz process on {backend} (seed {seed}) hung for {HANG_SECONDS} s; its last output: {tail!r}")
    lines = [json.loads(line) for line in run.stdout.splitlines() if line.startswith("{")]
    if run.returncode != 0 or not lines or "done" not in lines[-1]:
        last = run.stderr.strip().splitlines()[-12:]
        pytest.fail(f"the fuzz process on {backend} died (exit {run.returncode}) at:\n" + "\n".join(last))
    problems = lines[:-1]
    assert lines[-1]["done"] > 0
    assert not problems, f"{len(problems)} calls on {backend} (seed {seed}):\n" + "\n".join(map(json.dumps, problems))
