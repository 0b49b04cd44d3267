"""The prim kernels, one module per prim family; each module fills ``KERNELS`` through ``@kernel``."""

from __future__ import annotations

import importlib
import pkgutil

import opweave
from opweave.backends.kernel import Decline

from ._common import BACKENDS, KERNELS, NONDETERMINISTIC


def register_kernels(registry, backend) -> None:
    """Register every prim kernel for ``backend`` (a :class:`~opweave_kernelgen.backend.KernelBackend`).

    Imports each family module once; the same kernel functions serve every backend, finding a tensor's
    runtime through its device type.
    """
    for info in pkgutil.iter_modules(__path__):
        if not info.name.startswith("_"):
            importlib.import_module(f"{__name__}.{info.name}")
    BACKENDS[backend.name] = backend
    for name, fn in KERNELS.items():
        registry.impl(name, fn, backend=backend.name, deterministic=name not in NONDETERMINISTIC)
    for name in NONDETERMINISTIC:  # deterministic mode: declines to the CPU kernel (as CUDA has sorted ones)
        registry.deterministic_impl(name, _on_cpu(name), backend=backend.name)


def _on_cpu(name: str):
    op = opweave.ops.lookup(name)

    def run(*args):
        raise Decline(f"{op.name}: deterministic mode runs the CPU kernel")

    run.__name__ = run.__qualname__ = f"kernelgen_{op.name.split('::')[-1]}_deterministic"
    run.__doc__ = f"``{op.name}`` in deterministic mode: the CPU kernel, inputs and results copied."
    return run
