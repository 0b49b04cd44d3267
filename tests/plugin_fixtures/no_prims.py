"""A backend with memory but no prim kernels: every op on it must raise NotImplementedError naming the plugin."""

import opweave
from host_memory import HostMemory

BACKEND = HostMemory("noprims")


@opweave.hookimpl
def opweave_register(registry):
    """Declare the device, register nothing else."""
    registry.backend(BACKEND)
