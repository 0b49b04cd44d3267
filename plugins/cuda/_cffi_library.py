"""An NVIDIA library loaded once through cffi in ABI mode (what ``cublas.py`` and ``nccl.py`` share).

``cuda.pathfinder`` (part of ``cuda-bindings``) finds the library: the pip wheel's copy
(``nvidia-cublas``, ``nvidia-nccl-cu13``) or a toolkit's. Every declared function is resolved
at load, so a library lacking one fails there, not at its first call. A failure is kept and
raised again by later loads (one attempt per process).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any


class CffiLibrary:
    """``load()`` gives ``(ffi, lib, path)`` of library ``name`` declared by ``cdef``, or raises ``RuntimeError``.

    ``title`` names it in messages (``"cuBLAS"``); ``symbols()`` lists the functions to resolve at
    load; ``hint`` is appended to the failure message (how to install it).
    """

    def __init__(self, title: str, name: str, cdef: str, symbols: Callable[[], tuple[str, ...]], hint: str = ""):
        self.title, self.name, self.cdef, self.symbols, self.hint = title, name, cdef, symbols, hint
        self.loaded: tuple[Any, Any, str] | None = None  # (ffi, lib, path) once loaded
        self._error: str | None = None
        self._lock = threading.Lock()

    def load(self) -> tuple[Any, Any, str]:
        """``(ffi, lib, path)``, loading the library on the first call."""
        if self.loaded is not None:
            return self.loaded
        with self._lock:
            if self.loaded is not None:
                return self.loaded
            if self._error is not None:
                raise RuntimeError(self._error)
            try:
                import cffi
                from cuda.pathfinder import load_nvidia_dynamic_lib

                path = load_nvidia_dynamic_lib(self.name).abs_path
                ffi = cffi.FFI()
                ffi.cdef(self.cdef)
                lib = ffi.dlopen(path)
                for symbol in self.symbols():
                    getattr(lib, symbol)
            except Exception as exc:
                self._error = f"{self.title} could not be loaded: {type(exc).__name__}: {exc}{self.hint}"
                raise RuntimeError(self._error) from exc
            self.loaded = (ffi, lib, path)
            return self.loaded
