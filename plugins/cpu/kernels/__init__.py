"""CPU kernels, one module per prim family; each exposes ``KERNELS: dict[name, fn]``."""

from __future__ import annotations

import importlib
import pkgutil


def _families():
    for info in pkgutil.iter_modules(__path__):
        if not info.name.startswith("_"):
            yield importlib.import_module(f"{__name__}.{info.name}")


def register_all(registry) -> None:
    """Register every family's kernels for the ``cpu`` backend, the compiled C kernels in front (``_c_kernels``)."""
    from ._c_kernels import C_ONLY, with_c

    done = set()
    for module in _families():
        for name, fn in module.KERNELS.items():
            deterministic = name not in getattr(module, "NONDETERMINISTIC", ())
            registry.impl(name, with_c(name, fn), backend="cpu", deterministic=deterministic)
            done.add(name)
    for name, fn in C_ONLY.items():
        if name not in done:
            registry.impl(name, fn, backend="cpu")


def kernel_table(prims_only: bool = True) -> dict:
    """Every family's kernels by op name (prims only by default)."""
    return {
        name: fn
        for module in _families()
        for name, fn in module.KERNELS.items()
        if not prims_only or name.startswith("prims::")
    }
