"""Run gradcheck over every canonical op of the op database and print the outcome per op.

Usage: ``python scripts/autograd_sweep.py [pattern]`` (a substring of op names).
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "autograd"))

import opdb_sweep  # noqa: E402


def main() -> None:
    """Sweep and print one line per op plus the totals."""
    pattern = sys.argv[1] if len(sys.argv) > 1 else ""
    totals = Counter()
    for name in opdb_sweep.candidates():
        if pattern not in name:
            continue
        status, detail = opdb_sweep.check(name)
        totals[status] += 1
        print(f"{status:5} {name} {detail}", flush=True)
    print(dict(totals))


if __name__ == "__main__":
    main()
