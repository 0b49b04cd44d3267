"""Function namespaces over the catalog: ``opweave.special``, ``opweave.linalg``, ``opweave.fft``.

ATen names these functions with a prefix (``special_erf``, ``linalg_norm``,
``fft_rfft``); the namespace module exposes each packet without it, looked up
when first asked for, so ops defined later (by plugins too) appear as well.
"""

from __future__ import annotations

from ._ops import canonical


def prefixed(module: str, prefix: str):
    """``(__getattr__, __dir__)`` for a module exposing the canonical packets named ``prefix + name``."""

    def __getattr__(name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        try:
            return getattr(canonical, prefix + name)
        except AttributeError:
            raise AttributeError(f"module '{module}' has no attribute '{name}'") from None

    def __dir__():
        return sorted(n[len(prefix) :] for n in dir(canonical) if n.startswith(prefix))

    return __getattr__, __dir__
