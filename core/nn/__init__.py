"""``opweave.nn``: neural-network functions (``opweave.nn.functional``)."""

from . import functional

__all__ = ["functional"]
