"""Op database entries: sorting ops."""

from __future__ import annotations

from . import register  # noqa: F401
