"""OpenCL kernels, one module per prim family; each module fills ``KERNELS`` through ``@kernel``."""

from __future__ import annotations

import importlib
import pkgutil

from ._common import KERNELS, NONDETERMINISTIC


def register_all(registry) -> None:
    """Import every family module and register its kernels for the ``opencl`` backend."""
    for info in pkgutil.iter_modules(__path__):
        if not info.name.startswith("_"):
            importlib.import_module(f"{__name__}.{info.name}")
    for name, fn in KERNELS.items():
        registry.impl(name, fn, backend="opencl", deterministic=name not in NONDETERMINISTIC)
