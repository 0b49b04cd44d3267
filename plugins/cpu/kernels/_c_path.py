"""Whether the CPU backend's compiled C kernels run, and from what size.

The kernels are :mod:`opweave_kernelgen.host_kernels`, built by the system C compiler on first use
(once per process; the compiled object is cached on disk for every later process). The path follows
``$OPWEAVE_CPU_KERNELS`` (:mod:`._onednn_path` reads it):

- ``c``: a C kernel for every call it takes, at any size; NumPy elsewhere (oneDNN off), so the
  conformance suite exercises every C kernel;
- ``auto`` (the default): the C kernel of an op only from the size in :data:`AUTO_MIN`, where it was
  measured faster than the NumPy (or oneDNN) kernel on a 2-core machine (``docs/cpu-kernels.md``);
  ops missing from the table keep their NumPy or oneDNN kernel;
- ``numpy`` and ``onednn``: no C kernels.

With no usable C compiler (``$CC``, default ``cc``), no cffi, or a failed build, every path runs
NumPy and :func:`describe` says why.
"""

from __future__ import annotations

import ctypes
import threading

from . import _onednn_path

#: ``auto``: the least number of elements from which each op's C kernel beats the kernel it replaces.
#: An op missing here stays on NumPy or oneDNN under ``auto``.
AUTO_MIN = {
    "prims::exp": 1 << 16,
    "prims::log": 1 << 18,
    "prims::sigmoid": 1 << 10,
    "prims::erf": 1 << 10,
    "prims::sqrt": 1 << 16,
    "prims::sum": 1 << 16,
    "prims::amax": 1 << 14,
    "prims::amin": 1 << 14,
    "prims::var": 1 << 12,
    "softmax": 1,
    "log_softmax": 1,
    "layer_norm": 1 << 18,
    "rms_norm": 1 << 10,
    "cross_entropy_loss": 1 << 10,
    "gelu": 1 << 10,
    "silu": 1 << 10,
}

OFF, AUTO, ALL = 0, 1, 2

_lock = threading.Lock()
_level: int | None = None
_reason = ""
_library = None
_pointer = None  # ``pointer(a)``: the address of a C-contiguous array's first byte as a cffi intptr_t


def _load():
    global _pointer
    from opweave_kernelgen.host_kernels import load

    ffi, lib = load()
    backend = ffi._backend  # cffi's C module: ffi.cast and ffi.from_buffer are Python wrappers around it
    cast, from_buffer = backend.cast, backend.from_buffer
    intptr, chars = ffi.typeof("intptr_t"), ffi.typeof("char[]")
    addressof, char_at = ctypes.addressof, ctypes.c_char.from_buffer

    def pointer(a):
        try:  # ctypes gives the address of a writable buffer as an int, a little faster than cffi
            return addressof(char_at(a))
        except TypeError:  # read-only
            return int(cast(intptr, from_buffer(chars, a, False)))  # an int: a cdata argument converts slower

    pointer.__doc__ = globals()["pointer"].__doc__
    _pointer = pointer
    globals()["pointer"] = pointer  # callers read ``_c_path.pointer``: the closure itself from now on
    return lib


def pointer(a):
    """The address of C-contiguous array ``a``'s first byte (an int), for an ``intptr_t`` argument of the library.

    Cheaper than ``a.__array_interface__["data"][0]`` (no dict is built); only valid once
    :func:`library` returned the library."""
    return _pointer(a)


def level() -> int:
    """``OFF``, ``AUTO`` or ``ALL``: how the C kernels are used on the requested path (nothing is built here)."""
    global _level, _reason
    if _level is None:
        requested = _onednn_path.path()
        if requested in ("numpy", "onednn"):
            _level, _reason = OFF, f"{_onednn_path.ENV}={requested}"
        else:
            _level = ALL if requested == "c" else AUTO
    return _level


def reset() -> None:
    """Decide again on next use (after the requested path changed)."""
    global _level
    _level = None


def library():
    """The compiled kernels (a cffi library), built on first use; None (and the path turned off) without them."""
    global _level, _reason, _library
    if _library is not None:
        return _library
    try:
        _library = _load()
        return _library
    except (RuntimeError, ImportError) as exc:
        with _lock:
            _level, _reason = OFF, (str(exc).splitlines() or [type(exc).__name__])[0]
        return None


def describe() -> str:
    """One phrase: which C kernels run, or why none do."""
    lv = level()
    if lv != OFF and library() is None:
        lv = OFF
    if lv == OFF:
        return f"compiled C kernels off ({_reason})"
    if lv == ALL:
        return "compiled C kernels (OpenMP) for every call they take"
    return "compiled C kernels (OpenMP) for " + ", ".join(
        name.removeprefix("prims::") + f" ≥ {n}" for name, n in AUTO_MIN.items()
    )
