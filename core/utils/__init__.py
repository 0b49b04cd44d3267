"""``opweave.utils``: utilities in PyTorch's ``torch.utils`` places (``opweave.utils.deterministic``)."""

from __future__ import annotations

from . import deterministic

__all__ = ["deterministic"]
