"""vnpu kernels, one module per prim family; each module registers its kernels with ``@kernel``."""

from __future__ import annotations

import importlib
import pkgutil

from .._backend import KERNELS, NAME

NONDETERMINISTIC: frozenset = frozenset()  # every vnpu kernel gives the same bits on every run


def register_all(registry) -> None:
    """Import every family module and register its kernels for the ``vnpu`` backend."""
    for info in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{info.name}")
    for name, fn in KERNELS.items():
        registry.impl(name, fn, backend=NAME, deterministic=name not in NONDETERMINISTIC)
