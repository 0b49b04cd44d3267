"""A plugin whose entry point is ``fakecpu`` but whose backend claims the device type ``cpu``: it must be refused."""

import opweave
from host_memory import HostMemory


@opweave.hookimpl
def opweave_register(registry):
    """Declare a backend named 'cpu' (already the CPU plugin's)."""
    registry.backend(HostMemory("cpu"))
