"""``opweave.cpu``: the CPU device module (registered with ``registry.device_module``), as ``torch.cpu``."""

from __future__ import annotations

from ._backend import BACKEND

__all__ = ["current_device", "device_count", "is_available", "kernel_paths", "set_kernel_path", "synchronize"]


def is_available() -> bool:
    """Whether the CPU can be used (always)."""
    return BACKEND.is_available()


def device_count() -> int:
    """The number of CPU devices opweave shows (one: ``cpu``)."""
    return BACKEND.device_count()


def current_device() -> str:
    """The CPU device's name, ``"cpu"``, as ``torch.cpu.current_device()``."""
    return BACKEND.name


def synchronize(device=None) -> None:
    """Wait for queued CPU work (CPU kernels run synchronously: nothing to wait for)."""
    BACKEND.synchronize(device)


def kernel_paths() -> str:
    """Which CPU kernel paths run: oneDNN's float primitives (and for what), the compiled C kernels, NumPy; and why not.

    ``$OPWEAVE_CPU_KERNELS=numpy`` selects the pure NumPy kernels, ``c`` the C kernels wherever they take a call
    (``docs/cpu-kernels.md``); ``opweave doctor`` prints this line.
    """
    from .kernels._onednn_path import describe

    return describe()


def set_kernel_path(path: str | None) -> None:
    """Run the CPU kernels of ``path`` from now on: ``"auto"``, ``"c"``, ``"onednn"`` or ``"numpy"``.

    ``auto``: oneDNN where installed and the compiled C kernels where measured faster; ``c``: the C kernels
    wherever they take a call, NumPy elsewhere; ``onednn``: no C kernels; ``numpy``: the reference kernels.
    None goes back to ``$OPWEAVE_CPU_KERNELS`` (default ``auto``). ValueError for any other name.
    """
    from .kernels._onednn_path import set_path

    set_path(path)
