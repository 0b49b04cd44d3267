"""OpenCL run time: platforms and devices, one context and in-order queue per device, the program cache.

Devices are numbered in platform order, then device order within a platform
(``opencl:0`` is the first device of the first platform). ``OPWEAVE_OPENCL_DEVICE``
(an index into that list) makes one device ``opencl:0`` and hides the others.

Programs are cached in memory by (device, source, options). On disk, pyopencl
keeps built binaries under ``$XDG_CACHE_HOME/pyopencl`` and PoCL under
``$POCL_CACHE_DIR`` (default ``~/.cache/pocl``); both key on the source text, so
the generator emits a source that depends only on the kernels' specialisation
(op, dtypes), never on shapes or on anything that changes between runs.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field
from functools import cached_property

_lock = threading.RLock()
_devices: list | None = None
_reason: str | None = None


#: LLVM's names of the x86 CPUs with 512-bit vectors (AVX-512). PoCL compiles for the host CPU as its LLVM
#: knows it, named at the end of the device version's HSTR; an LLVM older than the CPU names an older one
#: (PoCL 3.0 on LLVM 14 compiles for "znver3" on a Zen 4), whose target has no AVX-512 though the CPU has.
#: PoCL still reports a preferred float vector width of 16 there, and LLVM aborts the process on some
#: 16-wide vector code, so the width comes from the target's name.
AVX512_TARGETS = frozenset(
    {"skylake-avx512", "cascadelake", "cooperlake", "cannonlake", "icelake-client", "icelake-server", "tigerlake",
     "rocketlake", "sapphirerapids", "emeraldrapids", "graniterapids", "graniterapids-d", "znver4", "znver5",
     "knl", "knm", "x86-64-v4"}
)  # fmt: skip


def vector_bytes(version: str, preferred_float_width: int) -> int:
    """Bytes in a vector register of the device's compile target (what ``float16``-style vectors map to).

    ``version`` is the device's version string: PoCL's names the target CPU (``HSTR: ...-znver3``); other
    drivers' widths come from ``preferred_float_width``.
    """
    if "HSTR:" in version:
        target = version.split("HSTR:", 1)[1].split()[0]
        return 64 if any(target.endswith("-" + cpu) for cpu in AVX512_TARGETS) else 32
    return max(16, 4 * preferred_float_width)


@dataclass
class DeviceRuntime:
    """One OpenCL device: its context, its queue, its capabilities and its built programs."""

    index: int
    device: object
    context: object
    queue: object
    extensions: frozenset
    programs: dict = field(default_factory=dict)  # (source hash, options) -> {kernel name: cl.Kernel}

    @property
    def has_fp64(self) -> bool:
        """Whether the device has double precision (``cl_khr_fp64``)."""
        return "cl_khr_fp64" in self.extensions

    @property
    def has_fp16(self) -> bool:
        """Whether the device has half precision arithmetic (``cl_khr_fp16``)."""
        return "cl_khr_fp16" in self.extensions

    @cached_property
    def vector_bytes(self) -> int:
        """Bytes in one vector register of the code the device compiles (see :func:`vector_bytes`; read once)."""
        return vector_bytes(self.device.version, self.device.preferred_vector_width_float)

    def lanes(self, dtype: str) -> int:
        """Elements of ``dtype`` (float32 or float64) in one vector register."""
        return self.vector_bytes // (4 if dtype == "float32" else 8)

    @property
    def is_cpu(self) -> bool:
        """Whether the device is a CPU (work items are loop iterations there: kernels pick blocked access)."""
        import pyopencl as cl

        return bool(self.device.type & cl.device_type.CPU)

    @property
    def max_alloc(self) -> int:
        """The largest single buffer the device accepts, in bytes."""
        return int(self.device.max_mem_alloc_size)

    @property
    def global_mem(self) -> int:
        """The device's memory, in bytes (the allocator keeps its live and cached blocks within it)."""
        return int(self.device.global_mem_size)

    @property
    def max_work_group(self) -> int:
        """The largest work-group size of the device."""
        return int(self.device.max_work_group_size)

    def kernels(self, source: str, options: tuple = ()) -> dict:
        """The kernels of ``source`` built for this device (built once, then from the cache)."""
        key = (source, options)
        found = self.programs.get(key)
        if found is None:
            import pyopencl as cl

            with _lock:
                found = self.programs.get(key)
                if found is None:
                    program = cl.Program(self.context, source).build(options=list(options))
                    found = {k.function_name: k for k in program.all_kernels()}
                    self.programs[key] = found
        return found


def _discover() -> list:
    global _devices, _reason
    if _devices is not None:
        return _devices
    with _lock:
        if _devices is not None:
            return _devices
        try:
            import pyopencl as cl
        except ImportError as exc:
            _reason = f"pyopencl is not installed ({exc})"
            _devices = []
            return _devices
        try:
            found = [d for p in cl.get_platforms() for d in p.get_devices()]
        except Exception as exc:  # no ICD loader, no platform: cl raises LogicError/RuntimeError
            _reason = f"no OpenCL platform: {type(exc).__name__}: {exc}"
            _devices = []
            return _devices
        chosen = os.environ.get("OPWEAVE_OPENCL_DEVICE")
        if chosen not in (None, ""):
            try:
                found = [found[int(chosen)]]
            except (ValueError, IndexError):
                _reason = f"OPWEAVE_OPENCL_DEVICE={chosen!r} does not name one of the {len(found)} OpenCL device(s)"
                _devices = []
                return _devices
        if not found:
            _reason = "no OpenCL device found (no platform reports a device)"
        runtimes = []
        for i, d in enumerate(found):
            ctx = cl.Context([d])
            queue = cl.CommandQueue(ctx, d)
            runtimes.append(DeviceRuntime(i, d, ctx, queue, frozenset(d.extensions.split())))
        _devices = runtimes
        return _devices


def devices() -> list:
    """Every usable OpenCL device, as :class:`DeviceRuntime` (empty when there is none)."""
    return _discover()


def unavailable_reason() -> str | None:
    """Why there is no OpenCL device (None when there is one)."""
    _discover()
    return _reason


def runtime(index: int | None) -> DeviceRuntime:
    """The run time of device ``opencl:index`` (None means 0)."""
    devs = _discover()
    i = index or 0
    if i >= len(devs):
        raise RuntimeError(f"opencl:{i} does not exist: {len(devs)} OpenCL device(s) ({_reason or 'see is_available'})")
    return devs[i]
