"""Op database entries: nn misc ops."""

from __future__ import annotations

from . import register  # noqa: F401
