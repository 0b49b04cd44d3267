"""The plugin contract: pluggy hook specifications of project ``opweave``.

A plugin module (found through the entry point group ``opweave.backends``, or
passed to ``opweave.backends.register_plugin``) implements some of these with
``@opweave.hookimpl``.
"""

from __future__ import annotations

import pluggy

PROJECT = "opweave"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@hookspec
def opweave_register(registry):
    """Declare backends and register kernels, fallbacks and flags.

    ``registry`` is an :class:`opweave.backends.Registry` bound to the calling
    plugin: ``registry.backend(b)``, ``registry.impl(op, fn, backend=...)``,
    ``registry.fallback(layer, backend, fn)``. Raising here isolates the plugin.
    """


@hookspec(firstresult=True)
def opweave_conformance_config(backend):
    """Return the conformance expectations (tolerances, xfails, skipped dtypes) for ``backend``."""
