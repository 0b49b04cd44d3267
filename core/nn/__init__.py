"""``opweave.nn``: ``Module``, ``Parameter``, the layers, ``init`` and the functions of ``opweave.nn.functional``."""

from . import functional, init, modules, utils
from .modules import *  # noqa: F403
from .parameter import Buffer, Parameter

__all__ = ["functional", "init", "modules", "utils", "Parameter", "Buffer", *modules.__all__]


def __getattr__(name: str):
    """``opweave.nn.parallel`` (``DistributedDataParallel``), imported on first use."""
    if name == "parallel":
        import importlib

        return importlib.import_module(".parallel", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
