"""What every CPU kernel module uses: NumPy views in, tensors out."""

from __future__ import annotations

from .._backend import native, wrap

__all__ = ["native", "wrap"]
