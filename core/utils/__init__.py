"""``opweave.utils``: utilities in PyTorch's ``torch.utils`` places (``deterministic``; ``data`` on first use)."""

from __future__ import annotations

from . import deterministic

__all__ = ["deterministic"]


def __getattr__(name: str):
    """``opweave.utils.data`` (``DistributedSampler``), imported on first use."""
    if name == "data":
        import importlib

        return importlib.import_module(".data", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
