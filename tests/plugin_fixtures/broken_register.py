"""A plugin that imports but fails while registering (for the isolation tests).

Before failing it declares its device and overrides the CPU's ``prims::add``:
neither may stay once its hook has raised.
"""

import opweave
from opweave.backends import Backend


class HalfBackend(Backend):
    """Declared, then registration fails."""

    name = "halfreg"


def sabotaged_add(a, b):
    """A CPU prims::add that must never run (the plugin's registration failed)."""
    raise AssertionError("broken_register: a failed plugin's kernel ran")


@opweave.hookimpl
def opweave_register(registry):
    """Declare a backend and a kernel, then fail."""
    registry.backend(HalfBackend())
    registry.impl("prims::add", sabotaged_add, backend="cpu")
    raise RuntimeError("broken_register: device firmware not found")
