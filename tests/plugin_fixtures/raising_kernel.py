"""A backend whose ``prims::add`` kernel fails as a driver would: the error must name the op, backend and plugin."""

import opweave
from host_memory import HostMemory

BACKEND = HostMemory("raising")


def add(a, b):
    """prims::add that loses its device."""
    raise OSError("device lost (simulated driver failure)")


@opweave.hookimpl
def opweave_register(registry):
    """Declare the device and its failing kernel."""
    registry.backend(BACKEND)
    registry.impl("prims::add", add, backend="raising")
