"""A backend whose ``prims::add`` returns float64 for float32 inputs: the result check must catch it."""

import numpy as np
import opweave
from host_memory import HostMemory, new, view

BACKEND = HostMemory("wrongdtype")


def add(a, b):
    """prims::add computed in float64 and returned so (the bug)."""
    return new(BACKEND, view(a).astype(np.float64) + view(b).astype(np.float64))


@opweave.hookimpl
def opweave_register(registry):
    """Declare the device and its buggy kernel."""
    registry.backend(BACKEND)
    registry.impl("prims::add", add, backend="wrongdtype")
