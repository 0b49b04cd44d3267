"""nn.functional: ``linear`` and ``bilinear`` (the canonical ops, with F's argument names)."""

from __future__ import annotations

from .._ops import canonical

__all__ = ["linear", "bilinear"]

linear = canonical.linear
bilinear = canonical.bilinear
