"""CPU kernels, one module per prim family; each exposes ``KERNELS: dict[name, fn]``."""

from __future__ import annotations

import importlib
import pkgutil


def register_all(registry) -> None:
    """Register every family's kernels for the ``cpu`` backend."""
    for info in pkgutil.iter_modules(__path__):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        for name, fn in module.KERNELS.items():
            deterministic = name not in getattr(module, "NONDETERMINISTIC", ())
            registry.impl(name, fn, backend="cpu", deterministic=deterministic)
