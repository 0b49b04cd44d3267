"""gradcheck in float64 on the CPU over the canonical ops of the conformance op database.

Every canonical functional op is checked (see ``opdb_sweep``); the ones left out are listed
in ``opdb_sweep.EXCEPTIONS`` with their reasons. CI checks every sixth op (a fixed subset);
the ``full`` hypothesis profile (``OPWEAVE_HYPOTHESIS_PROFILE=full``) checks all of them.
``python scripts/autograd_sweep.py`` prints the outcome per op.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

import opdb_sweep  # noqa: E402

_ALL = opdb_sweep.candidates()
_FULL = os.environ.get("OPWEAVE_HYPOTHESIS_PROFILE") == "full"
_SELECTED = _ALL if _FULL else _ALL[::6]


@pytest.mark.parametrize("name", _SELECTED)
def test_gradcheck_matches_finite_differences(name):
    status, detail = opdb_sweep.check(name)
    assert status != "fail", f"{name}: {detail}"


def test_exceptions_name_existing_ops():
    bases = {n.split("::")[-1].split(".")[0] for n in _ALL} | set(_ALL)
    for reason, names in opdb_sweep.EXCEPTIONS.items():
        assert reason
        for name in names:
            assert name in bases, f"exception {name!r} names no canonical op"
