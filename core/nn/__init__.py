"""``opweave.nn``: ``Module``, ``Parameter``, the layers, ``init`` and the functions of ``opweave.nn.functional``."""

from . import functional, init, modules, utils
from .modules import *  # noqa: F403
from .parameter import Buffer, Parameter

__all__ = ["functional", "init", "modules", "utils", "Parameter", "Buffer", *modules.__all__]
