"""NVRTC: CUDA C++ source to a cubin for one GPU architecture (runs without a GPU or a driver).

Programs are compiled straight to SASS (``--gpu-architecture=sm_XY``), never to PTX: a
cubin loads on any driver of the same CUDA major version, while PTX from a newer NVRTC
needs a driver at least as new to JIT it. ``--fmad=false`` keeps multiply and add
separately rounded, as NumPy's results and the CPU's Philox arithmetic are.
"""

from __future__ import annotations

import functools
import re

from opweave_kernelgen.dialect.cuda import program

#: Options of every compile (the architecture is added per call).
OPTIONS = ("--std=c++17", "--fmad=false", "--device-as-default-execution-space")

_KERNEL = re.compile(r'extern "C" __global__ void\s+(\w+)\s*\(')


@functools.cache
def nvrtc():
    """``(cuda.bindings.nvrtc, None)``, or ``(None, reason)`` when NVRTC cannot be loaded."""
    try:
        from cuda.bindings import nvrtc as module
    except ImportError as exc:
        return None, f"cuda-bindings is not installed ({exc}); pip install 'opweave[cuda]'"
    try:
        err, major, minor = module.nvrtcVersion()
    except Exception as exc:  # libnvrtc missing: cuda-pathfinder raises its DynamicLibNotFoundError
        return None, f"NVRTC cannot be loaded: {type(exc).__name__}: {exc} (pip install nvidia-cuda-nvrtc)"
    if err != module.nvrtcResult.NVRTC_SUCCESS:
        return None, f"nvrtcVersion failed: {err!r}"
    return module, None


def version() -> tuple[int, int]:
    """NVRTC's (major, minor) version."""
    module = _module()
    _, major, minor = module.nvrtcVersion()
    return int(major), int(minor)


def supported_archs() -> tuple[int, ...]:
    """The ``sm_XY`` numbers this NVRTC compiles for (``(75, 80, 86, ..., 90, ...)``)."""
    module = _module()
    err, n = module.nvrtcGetNumSupportedArchs()
    _check(module, err, "nvrtcGetNumSupportedArchs")
    err, archs = module.nvrtcGetSupportedArchs()
    _check(module, err, "nvrtcGetSupportedArchs")
    return tuple(int(a) for a in archs[:n])


def kernel_names(source: str) -> list[str]:
    """The names of the ``extern "C" __global__`` kernels of ``source``, in order."""
    return _KERNEL.findall(source)


def compile_cubin(source: str, arch: int, name: str = "opweave.cu") -> bytes:
    """The cubin of the generated ``source`` (the prelude is prepended) for ``sm_<arch>``.

    ``RuntimeError`` with NVRTC's log when the source does not compile.
    """
    module = _module()
    err, prog = module.nvrtcCreateProgram(program(source).encode(), name.encode(), 0, [], [])
    _check(module, err, "nvrtcCreateProgram")
    try:
        options = [o.encode() for o in (*OPTIONS, f"--gpu-architecture=sm_{arch}")]
        (err,) = module.nvrtcCompileProgram(prog, len(options), options)
        if err != module.nvrtcResult.NVRTC_SUCCESS:
            raise RuntimeError(f"NVRTC could not compile {name} for sm_{arch} ({err.name}):\n{_log(module, prog)}")
        err, size = module.nvrtcGetCUBINSize(prog)
        _check(module, err, "nvrtcGetCUBINSize")
        cubin = b" " * size
        (err,) = module.nvrtcGetCUBIN(prog, cubin)
        _check(module, err, "nvrtcGetCUBIN")
        return cubin
    finally:
        module.nvrtcDestroyProgram(prog)


def _log(module, prog) -> str:
    err, size = module.nvrtcGetProgramLogSize(prog)
    if err != module.nvrtcResult.NVRTC_SUCCESS or size <= 1:
        return ""
    log = b" " * size
    module.nvrtcGetProgramLog(prog, log)
    return log.rstrip(b"\0 ").decode(errors="replace")


def _module():
    module, reason = nvrtc()
    if module is None:
        raise RuntimeError(reason)
    return module


def _check(module, err, call: str) -> None:
    if err != module.nvrtcResult.NVRTC_SUCCESS:
        _, text = module.nvrtcGetErrorString(err)
        raise RuntimeError(f"{call} failed: {err.name}: {text.decode() if isinstance(text, bytes) else text}")


def cache_name() -> str:
    """What identifies the compiler in the disk cache's keys: NVRTC's version and the options."""
    major, minor = version()
    return f"nvrtc {major}.{minor} " + " ".join(OPTIONS)
