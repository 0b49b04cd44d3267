"""Op database entries: nn layers ops."""

from __future__ import annotations

from . import register  # noqa: F401
