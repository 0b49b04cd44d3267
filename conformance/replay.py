"""Replay failures from a JSON report: rebuild the recorded inputs and run the same checks again.

Every failing (op, dtype) in a report carries its first failing sample: the
inputs (values, dtype, layout), the sample index and the seed of its
generator. :func:`replay` rebuilds the inputs on the backend and runs the
same checks; :func:`sample_from_seed` regenerates the sample from the seed
instead (the same values as long as the op database has not changed).
"""

from __future__ import annotations

import fnmatch
import json
from dataclasses import dataclass

import numpy as np
import opweave as ow

from . import opdb
from .checks import CheckFailure, NotImplementedKernel
from .opdb._core import ErrorInput, take
from .tensors import decode_sample


@dataclass
class ReplayResult:
    """One replayed failure: whether it happened again, and what the checks say now."""

    op: str
    dtype: str | None
    sample_index: object
    reproduced: bool
    message: str

    def __str__(self):
        state = "REPRODUCED" if self.reproduced else "not reproduced"
        return f"{state:<14} {self.op} [{self.dtype or 'default'}] sample {self.sample_index}: {self.message}"


def _dtype(name):
    return None if name is None else getattr(ow, name)


def sample_from_seed(op: str, dtype: str | None, seed: int, index: int, backend: str = "cpu"):
    """The ``index``-th sample of ``op`` in ``dtype`` generated from ``seed`` (as recorded in a report)."""
    info = opdb.get(op)
    return take(info.sample_inputs(np.random.default_rng(seed), _dtype(dtype), backend), index + 1)[index]


def replay(report, backend: str | None = None, ops=None) -> list[ReplayResult]:
    """Re-run the recorded failures of ``report`` (a path or the loaded dict) on ``backend``.

    ``backend`` defaults to the report's; ``ops`` (fnmatch patterns, comma-separated)
    restricts which failures are replayed.
    """
    from .runner import Runner

    data = report
    if not isinstance(report, dict):
        with open(report) as f:
            data = json.load(f)
    backend = backend or data["backend"]
    patterns = [p.strip() for p in ops.split(",")] if isinstance(ops, str) else ops
    runner = Runner(backend, ops=[], profile=data.get("profile", "quick"), seed=data.get("seed", 0))
    results = []
    for entry in data.get("ops", []):
        if patterns and not any(fnmatch.fnmatchcase(entry["op"], p) for p in patterns):
            continue
        for d in entry.get("dtypes", []):
            if d.get("status") in ("fail", "xfail") and d.get("inputs"):
                results.append(_replay_one(runner, entry["op"], d))
    return results


def _replay_one(runner, op: str, d: dict) -> ReplayResult:
    """Replay one recorded failure; a nondeterminism failure gets several tries (it need not show every run)."""
    tries = 8 if d.get("check") in ("determinism", "deterministic") else 1
    for _ in range(tries):
        result = _replay_once(runner, op, d)
        if result.reproduced:
            break
    return result


def _replay_once(runner, op: str, d: dict) -> ReplayResult:
    info = opdb.get(op)
    sample = decode_sample(d["inputs"])
    index = d.get("sample_index")
    if isinstance(index, str) and index.startswith("error-"):
        from . import checks

        error = _builtin_error(d["inputs"].get("expected_error"))
        try:
            checks.check_error_input(runner.ctx, info, ErrorInput(sample, error))
            outcome = None
        except (CheckFailure, NotImplementedKernel) as exc:
            outcome = exc
    elif isinstance(index, str) and index.startswith("determinism-"):  # run twice, bits compared (no oracle)
        from . import checks

        try:
            checks.check_determinism_probe(runner.ctx, info, sample)
            outcome = None
        except (CheckFailure, NotImplementedKernel) as exc:
            outcome = exc
    else:
        position = index if isinstance(index, int) else 1  # "hypothesis", a probe: not the first sample
        outcome = runner.run_sample(info, _dtype(d.get("dtype")), sample, position)
    if outcome is None:
        return ReplayResult(op, d.get("dtype"), index, False, "every check passes now")
    return ReplayResult(op, d.get("dtype"), index, True, str(outcome))


def _builtin_error(name):
    import builtins

    return getattr(builtins, name or "Exception", Exception)
