"""``opweave.utils.data``: data-loading helpers in ``torch.utils.data``'s places (``DistributedSampler``)."""

from __future__ import annotations

from .distributed import DistributedSampler

__all__ = ["DistributedSampler"]
