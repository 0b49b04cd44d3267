"""One kernel generator for every C-like device language: prim kernels written once against two contracts.

- :class:`~opweave_kernelgen.runtime.Runtime`: what a device implements (memory, copies, compile, launch,
  synchronise, :class:`~opweave_kernelgen.runtime.DeviceProperties`);
- :class:`~opweave_kernelgen.dialect.Dialect`: the spellings of one kernel language.

A backend subclasses :class:`~opweave_kernelgen.backend.KernelBackend` (storages and copies over its runtimes)
and calls :func:`register_kernels` from its ``opweave_register`` hook; every prim the generator covers then
runs on it. ``docs/kernelgen.md`` describes the contracts with a complete example.
"""

from __future__ import annotations

from .backend import KernelBackend
from .dialect import Dialect
from .expectations import conformance_expectations
from .runtime import DeviceProperties, Runtime, cache_dir, cache_key


def register_kernels(registry, backend) -> None:
    """Register every generated prim kernel for ``backend`` (call it from ``opweave_register``)."""
    from .kernels import register_kernels as register

    register(registry, backend)


__all__ = [
    "DeviceProperties",
    "Dialect",
    "KernelBackend",
    "Runtime",
    "cache_dir",
    "cache_key",
    "conformance_expectations",
    "register_kernels",
]
