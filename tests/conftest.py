"""Shared test configuration: hypothesis profiles sized for CI, and fixtures."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

# Test helper modules (support code, plugin fixtures) import by plain name.
for _folder in ("prims", "refs", "plugin_fixtures"):
    sys.path.insert(0, str(Path(__file__).parent / _folder))

# ci: no example database (a fresh clone has none, and a draw that failed once must not fail every later run: the
# failure prints its seed and a reproduction blob instead); dev keeps the database to replay what failed.
_COMMON = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow], print_blob=True)
settings.register_profile("ci", max_examples=25, database=None, **_COMMON)
settings.register_profile("dev", max_examples=50, **_COMMON)
settings.register_profile("full", max_examples=500, **_COMMON)
settings.load_profile(os.environ.get("OPWEAVE_HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))


@pytest.fixture
def restore_default_dtype():
    """Restore the default dtype after a test that changes it."""
    import opweave

    saved = opweave.get_default_dtype()
    yield
    opweave.set_default_dtype(saved)
