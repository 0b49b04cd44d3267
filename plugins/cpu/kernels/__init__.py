"""CPU kernels, one module per prim family; each exposes ``KERNELS: dict[name, fn]``."""

from __future__ import annotations

import importlib
import pkgutil


def _families():
    for info in pkgutil.iter_modules(__path__):
        if not info.name.startswith("_"):
            yield importlib.import_module(f"{__name__}.{info.name}")


def register_all(registry) -> None:
    """Register every family's kernels for the ``cpu`` backend."""
    for module in _families():
        for name, fn in module.KERNELS.items():
            deterministic = name not in getattr(module, "NONDETERMINISTIC", ())
            registry.impl(name, fn, backend="cpu", deterministic=deterministic)


def kernel_table(prims_only: bool = True) -> dict:
    """Every family's kernels by op name (prims only by default)."""
    return {
        name: fn
        for module in _families()
        for name, fn in module.KERNELS.items()
        if not prims_only or name.startswith("prims::")
    }
