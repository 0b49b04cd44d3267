"""Run only the conformance suite's special-value probe and list every (op, dtype) it fails.

The conformance run stops an (op, dtype) at its first failing sample and runs every other
check too; this runs just the ``specials`` probe (``opweave_conformance.probes.special_samples``:
nan, -nan, ±inf, ±0.0, subnormals, ±max and ordinary values) of every selected functional op,
in every floating dtype the backend has, and prints each failure with its evidence::

    python scripts/special_values_sweep.py --backend cpu [--ops 'lgamma*,prims::i1*'] [--old]

``--old`` uses the probe as it was before subnormals, ±max and -nan came in (nan, ±inf, ±0.0
and three ordinary values; ``log1p`` and ``igamma`` excluded), to count what the new values find.
Backend xfails are listed but not counted as failures. Needs no torch.
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
from opweave_conformance import checks, probes, runner
from opweave_conformance.opdb._core import SampleInput


def _old_values(dtype, with_max: bool = True) -> np.ndarray:
    return np.array([math.nan, math.inf, -math.inf, 0.0, -0.0, 1.0, -2.5, 0.5], np.float64)


def sweep(backend: str, ops: str | None) -> tuple[list, list, int]:
    """``(failures, xfails, probes run)``: failures as ``(op, dtype, CheckFailure)``."""
    run = runner.Runner(backend, ops, "quick", 0, None, None, 0)
    failures, xfails, count = [], [], 0
    for name in run.names:
        info = runner.opdb.get(name)
        if info is None or info.variant is not None:
            continue
        for dtype in run.dtypes_for(info):
            if dtype is None or not (dtype.is_floating_point or dtype.is_complex):
                continue
            seed = runner.seed_for(run.seed, info.name, dtype.name)
            rng = np.random.default_rng(seed)
            try:
                samples = run._samples(info, dtype, rng)
            except Exception:
                continue
            probe_rng = np.random.default_rng(runner.seed_for(run.seed, info.name, dtype.name, "probes"))
            for sample in probes.special_samples(info, dtype, samples, probe_rng):
                if not isinstance(sample, SampleInput) or run._skipped(sample):
                    continue
                count += 1
                outcome = run.run_sample(info, dtype, sample, "specials-0")
                if outcome is None or (isinstance(outcome, checks.CheckFailure) and outcome.check == "sample"):
                    continue
                reason = info.known_failure_for(dtype) or run.config.xfail_reason(info.name, dtype)
                (xfails if reason else failures).append((name, dtype.name, outcome))
    return failures, xfails, count


def _evidence(outcome) -> str:
    details = getattr(outcome, "details", {}) or {}
    examples = (details.get("evidence") or details).get("examples", []) if isinstance(details, dict) else []
    parts = [f"{e.get('index')}: expected {e.get('expected')}, actual {e.get('actual')}" for e in examples[:3]]
    return "; ".join(parts)


def main() -> None:
    """Parse the command line and print the sweep."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default="cpu")
    parser.add_argument("--ops", default=None, help="comma-separated fnmatch patterns (default: every op)")
    parser.add_argument("--old", action="store_true", help="the probe before subnormals, max and -nan")
    args = parser.parse_args()
    if args.old:
        probes.special_values = _old_values
        probes.NO_SPECIALS = (*probes.NO_SPECIALS, "*log1p*", "*igamma*", "*gammainc*")
    start = time.process_time()
    failures, xfails, count = sweep(args.backend, args.ops)
    for name, dtype, outcome in failures:
        print(f"FAIL {name} [{dtype}] {outcome.check}: {outcome}")
        evidence = _evidence(outcome)
        if evidence:
            print(f"     {evidence}")
    for name, dtype, outcome in xfails:
        print(f"xfail {name} [{dtype}] {outcome.check}")
    cpu = time.process_time() - start
    print(f"{args.backend}: {count} special-value probes, {len(failures)} fail, {len(xfails)} xfail ({cpu:.1f} s CPU)")


if __name__ == "__main__":
    main()
