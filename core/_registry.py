"""``Registry``: what a plugin's ``opweave_register`` hook receives, registration calls bound to one plugin.

It sits above the backend table (``_backends``), the ``Library`` and autocast in the layer
order; every call is a thin wrapper over one of them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from types import ModuleType

from . import _autocast, _backends
from ._backends import Backend, BackendClaimError
from ._dispatcher import Registration
from ._keys import Layer
from .library import Library, OpName

__all__ = ["BackendClaimError", "Registry"]


class Registry:
    """What ``opweave_register`` receives: registration calls bound to one plugin."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.library = Library("aten", "FRAGMENT", source=source)  # every kernel this plugin registers
        self.backends: list[str] = []
        self.features: list[tuple] = []
        self.device_modules: dict[str, ModuleType | object] = {}

    def feature(self, name: str, available: bool, reason: str | None = None) -> None:
        """Declare a feature without a device (a quantized engine, say): shown by ``status()`` with its reason."""
        self.features.append((name, bool(available), None if available else reason))

    def backend(self, backend: Backend) -> None:
        """Declare a device backend (its type gets a dispatch key bit).

        :class:`BackendClaimError` if another plugin already declared that device
        type, or an entry point of that name belongs to another plugin.
        """
        _backends.claim(backend, self.source)
        self.backends.append(backend.name)

    def device_module(self, name: str, module: ModuleType | object) -> None:
        """Make ``module`` the namespace ``opweave.<name>`` (``opweave.opencl.synchronize()``).

        ``name`` must be a device type this plugin declared with :meth:`backend`.
        As ``torch._register_device_module``: the module holds the device's
        functions (``is_available``, ``device_count``, ``synchronize``, ...).
        """
        if name not in self.backends:
            raise ValueError(
                f"{self.source}: device_module({name!r}): declare the backend '{name}' first "
                f"(this plugin declared: {', '.join(self.backends) or 'none'})"
            )
        self.device_modules[name] = module

    def impl(
        self, op: OpName, fn: Callable, *, backend: str | None, layer: Layer = Layer.Dense, deterministic: bool = True
    ) -> Registration:
        """Register ``fn`` as the kernel of ``op`` (an OpOverload or its name) at (layer, backend).

        A thin wrapper over ``self.library.impl(op, fn, (layer, backend), with_keyset=True)``.
        """
        return self.library.impl(op, fn, (layer, backend), with_keyset=True, deterministic=deterministic)

    def composite_explicit(self, op: OpName, fn: Callable, *, deterministic: bool = True) -> Registration:
        """Register one Dense kernel for ``op`` shared by all backends without their own."""
        return self.library.impl(op, fn, "CompositeExplicitAutograd", deterministic=deterministic)

    def fallback(self, layer: Layer, backend: str | None, fn: Callable) -> Registration:
        """Register a boxed kernel for every op at (layer, backend); see ``opweave.library.Library.fallback``."""
        return self.library.fallback(fn, (layer, backend))

    def deterministic_impl(
        self, op: OpName, fn: Callable, *, backend: str | None, layer: Layer = Layer.Dense
    ) -> Registration:
        """Register the kernel used for ``op`` in deterministic mode (when the regular one is not)."""
        return self.library.deterministic_impl(op, fn, (layer, backend))

    def autocast_policy(
        self,
        device_type: str,
        *,
        lower_precision: Iterable[str] = (),
        fp32: Iterable[str] = (),
        promote: Iterable[str] = (),
        remove: Iterable[str] = (),
        fp32_set_opt_dtype: Iterable[str] = (),
    ) -> None:
        """Extend or override ``device_type``'s autocast policy (op names; see ``opweave.autocast_policy``).

        ``lower_precision``, ``fp32``, ``promote`` and ``fp32_set_opt_dtype`` add ops (packet
        names or qualified overload names) to that category, moving them out of any
        other; ``remove`` takes them out of the policy. Later changes win.
        """
        _autocast.extend_policy(
            device_type,
            lower_precision=lower_precision,
            fp32=fp32,
            fp32_set_opt_dtype=fp32_set_opt_dtype,
            promote=promote,
            remove=remove,
            source=self.source,
        )
