#!/usr/bin/env python
"""Run the Python array API standard's own test suite (data-apis/array-api-tests) on ``opweave.array_api``.

The suite is not vendored: clone it with its ``array-api`` submodule (the specification it reads the
signatures from) and point this script at the checkout::

    git clone --recursive https://github.com/data-apis/array-api-tests
    pip install -r array-api-tests/requirements.txt
    python scripts/array_api_tests.py array-api-tests --max-examples 50

It sets ``ARRAY_API_TESTS_MODULE=opweave.array_api``, skips the unsigned dtypes opweave does not
have (uint16, uint32, uint64), runs pytest over the suite and prints the pass/fail/skip counts and
the failing tests. A developer tool, not part of CI (the suite takes minutes).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    """Run the suite at ``suite`` and print its figures; the exit status is pytest's."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("suite", type=Path, help="a checkout of data-apis/array-api-tests (with its submodule)")
    parser.add_argument("--max-examples", type=int, default=50, help="hypothesis examples per test")
    parser.add_argument("--version", default="2024.12", help="the standard's version to test (2023.12, 2024.12)")
    parser.add_argument("pytest_args", nargs="*", help="extra pytest arguments (a test file, -k ...)")
    args = parser.parse_args(argv)
    tests = args.suite / "array_api_tests"
    if not tests.is_dir() or not any((args.suite / "array-api" / "src").glob("array_api_stubs")):
        print(f"{args.suite} is not an array-api-tests checkout with its array-api submodule", file=sys.stderr)
        return 2
    env = dict(
        os.environ,
        ARRAY_API_TESTS_MODULE="opweave.array_api",
        ARRAY_API_TESTS_VERSION=args.version,
        ARRAY_API_TESTS_SKIP_DTYPES="uint16,uint32,uint64",
    )
    cmd = [
        sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:warnings", "--tb=line", "-rf",
        f"--max-examples={args.max_examples}", str(tests), *args.pytest_args,
    ]  # fmt: skip
    proc = subprocess.run(cmd, cwd=args.suite, env=env, capture_output=True, text=True)
    failed = [line.split(" ", 1)[1] for line in proc.stdout.splitlines() if line.startswith("FAILED ")]
    counts = {k: int(v) for v, k in re.findall(r"(\d+) (passed|failed|skipped|error|errors)", proc.stdout)}
    passed, fails = counts.get("passed", 0), counts.get("failed", 0) + counts.get("error", 0) + counts.get("errors", 0)
    for name in failed:
        print("FAILED", name)
    total = passed + fails
    share = f"{100 * passed / total:.1f}%" if total else "-"
    print(f"array-api-tests ({args.version}): {passed} passed, {fails} failed, {counts.get('skipped', 0)} skipped; "
          f"{share} of the tests run pass")  # fmt: skip
    if proc.returncode not in (0, 1):
        print(proc.stdout[-3000:], proc.stderr[-3000:], file=sys.stderr)
    return proc.returncode


if __name__ == "__main__":
    sys.exit(main())
