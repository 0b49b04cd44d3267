"""OpenCL kernels, one module per prim family; each module fills ``KERNELS`` through ``@kernel``."""

from __future__ import annotations

import importlib
import pkgutil

import opweave
from opweave.backends.kernel import Decline

from ._common import KERNELS, NONDETERMINISTIC


def register_all(registry) -> None:
    """Import every family module and register its kernels for the ``opencl`` backend."""
    for info in pkgutil.iter_modules(__path__):
        if not info.name.startswith("_"):
            importlib.import_module(f"{__name__}.{info.name}")
    for name, fn in KERNELS.items():
        registry.impl(name, fn, backend="opencl", deterministic=name not in NONDETERMINISTIC)
    for name in NONDETERMINISTIC:  # deterministic mode: declines to the CPU kernel (as CUDA has sorted ones)
        registry.deterministic_impl(name, _on_cpu(name), backend="opencl")


def _on_cpu(name: str):
    op = opweave.ops.lookup(name)

    def run(*args):
        raise Decline(f"{op.name}: deterministic mode runs the CPU kernel")

    run.__name__ = run.__qualname__ = f"opencl_{op.name.split('::')[-1]}_deterministic"
    run.__doc__ = f"``{op.name}`` in deterministic mode: the CPU kernel, inputs and results copied."
    return run
