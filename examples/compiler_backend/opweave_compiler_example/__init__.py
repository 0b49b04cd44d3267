"""The ``ccpu`` device: a compiler backend. Its runtime compiles the C dialect; its memory is an arena of its own.

Every prim kernel is ``opweave_kernelgen``'s: this package only says where memory
lives (:mod:`._arena`) and declares the backend.
"""

from __future__ import annotations

import opweave
from opweave_kernelgen import KernelBackend, conformance_expectations, register_kernels
from opweave_kernelgen.c_runtime import CRuntime, compiler

from ._arena import Arena

NAME = "ccpu"


class ArenaRuntime(CRuntime):
    """The C runtime with buffers carved out of one growing host arena."""

    def __init__(self):
        super().__init__(f"{NAME}:0")
        self.arena = Arena()

    def allocate(self, nbytes: int):
        """A block of the arena."""
        return self.arena.allocate(nbytes)

    def free(self, buffer) -> None:
        """Back to the arena's free list."""
        self.arena.free(buffer)


class CompilerBackend(KernelBackend):
    """One device, the host CPU through compiled C kernels."""

    name = NAME
    extra = None

    def __init__(self):
        super().__init__()
        self._runtimes: list | None = None

    def runtimes(self) -> list:
        """The one runtime (none without a C compiler)."""
        if self._runtimes is None:
            self._runtimes = [ArenaRuntime()] if compiler()[0] else []
        return self._runtimes

    def unavailable_reason(self) -> str | None:
        """Why there is no device: no C compiler (or no cffi)."""
        return None if compiler()[0] else compiler()[1]

    def data_ptr(self, storage) -> int:
        """The host address of the storage's first byte."""
        buffer = storage.handle.buffer
        return buffer.ptr if buffer is not None else 0


BACKEND = CompilerBackend()


@opweave.hookimpl
def opweave_register(registry):
    """Declare the ccpu backend and register every generated prim kernel for it."""
    registry.backend(BACKEND)
    if BACKEND.is_available():
        register_kernels(registry, BACKEND)


@opweave.hookimpl
def opweave_conformance_config(backend):
    """The conformance expectations of ccpu (None for other backends): the generator's (no float16 here)."""
    return conformance_expectations(BACKEND) if backend == NAME else None
