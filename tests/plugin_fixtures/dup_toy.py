"""A second distribution's entry point named ``toy`` (already taken by toy_backend): it must be ignored, reported."""

import opweave
from host_memory import HostMemory

IMPORTED = True


@opweave.hookimpl
def opweave_register(registry):
    """Would declare the device type 'duptoy' (never called: the entry point name is taken)."""
    registry.backend(HostMemory("duptoy"))
