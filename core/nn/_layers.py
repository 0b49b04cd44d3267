"""nn.functional: convolution, pooling, unfold/fold, pixel shuffle, padding and resampling."""

from __future__ import annotations

__all__: list[str] = []
