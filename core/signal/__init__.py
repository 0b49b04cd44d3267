"""``opweave.signal``: signal processing (PyTorch's ``torch.signal``); the windows are in :mod:`.windows`."""

from . import windows

__all__ = ["windows"]
