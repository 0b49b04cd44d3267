"""A plugin that imports but fails while registering (for the isolation tests)."""

import opweave
from opweave.backends import Backend


class HalfBackend(Backend):
    """Declared, then registration fails."""

    name = "halfreg"


@opweave.hookimpl
def opweave_register(registry):
    """Declare a backend, then fail."""
    registry.backend(HalfBackend())
    raise RuntimeError("broken_register: device firmware not found")
