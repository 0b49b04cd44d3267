"""Schema-driven sample overrides for the nn layers ops (merged into :data:`.schema_samples.OVERRIDES`)."""

from __future__ import annotations

from .schema_samples import t  # noqa: F401  (spec builders: t, ints, bools, cplx, lst, value, spd, OnCpu)

OVERRIDES: dict[str, dict] = {}
