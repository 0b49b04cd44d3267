"""The CUDA driver API through ``cuda-bindings``: loading it, and checking every call's result.

Every driver call returns ``(CUresult, *values)``; :func:`call` raises ``RuntimeError`` naming
the call and CUDA's error name and text when the result is not ``CUDA_SUCCESS`` (out of memory
raises ``MemoryError`` instead, which the caching allocator turns into a release-and-retry and
then :class:`opweave.OutOfMemoryError`).
"""

from __future__ import annotations

import functools


@functools.cache
def load():
    """``(cuda.bindings.driver, None)`` after a successful ``cuInit(0)``, or ``(None, reason)``."""
    try:
        from cuda.bindings import driver
    except ImportError as exc:
        return None, f"cuda-bindings is not installed ({exc}); pip install 'opweave[cuda]'"
    try:
        (err,) = driver.cuInit(0)
    except Exception as exc:  # no libcuda: cuda-pathfinder raises (a RuntimeError subclass)
        return None, f"cuInit failed: {type(exc).__name__}: {exc}"
    if err != driver.CUresult.CUDA_SUCCESS:
        return None, f"cuInit failed: {error_text(driver, err)}"
    return driver, None


def error_text(driver, err) -> str:
    """``NAME: description`` of a ``CUresult``."""
    _, name = driver.cuGetErrorName(err)
    _, text = driver.cuGetErrorString(err)
    name = name.decode() if isinstance(name, bytes) else str(err)
    text = text.decode() if isinstance(text, bytes) else ""
    return f"{name}: {text}"


def call(name: str, *args):
    """``driver.<name>(*args)``: its values (one value unwrapped, none as None), or the error raised."""
    driver, reason = load()
    if driver is None:
        raise RuntimeError(f"the CUDA driver is not available: {reason}")
    result = getattr(driver, name)(*args)
    if result[0]:  # a CUresult is an int: CUDA_SUCCESS is 0
        _raise(driver, name, result[0])
    n = len(result)
    return None if n == 1 else result[1] if n == 2 else result[1:]


def _raise(driver, name: str, err) -> None:
    message = f"{name} failed: {error_text(driver, err)}"
    if err == driver.CUresult.CUDA_ERROR_OUT_OF_MEMORY:
        raise MemoryError(message)
    raise RuntimeError(message)
