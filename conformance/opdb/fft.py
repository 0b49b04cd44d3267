"""Op database entries: fft ops."""

from __future__ import annotations

from . import register  # noqa: F401
