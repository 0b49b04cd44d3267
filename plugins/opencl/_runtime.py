"""The OpenCL ``Runtime``: platforms and devices, one context and in-order queue per device.

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
from collections import OrderedDict

from opweave_kernelgen import DeviceProperties, Runtime
from opweave_kernelgen.devices import DeviceList

from .dialect import OPENCL

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


class DeviceRuntime(Runtime):
    """One OpenCL device: its context, its in-order queue, its properties and its built programs."""

    dialect = OPENCL

    def __init__(self, index: int, device, context, queue):
        import pyopencl as cl

        super().__init__()
        self.index, self.device, self.context, self.queue = index, device, context, queue
        self.extensions = frozenset(device.extensions.split())
        self.device_name = f"opencl:{index}"
        cpu = bool(device.type & cl.device_type.CPU)
        self.properties = DeviceProperties(
            is_cpu=cpu,
            max_work_group=int(device.max_work_group_size),
            local_mem=int(device.local_mem_size),
            vector_bytes=vector_bytes(device.version, device.preferred_vector_width_float),
            has_fp16="cl_khr_fp16" in self.extensions,
            has_fp64="cl_khr_fp64" in self.extensions,
            has_bf16="cl_intel_bfloat16_conversions" in self.extensions,
            subgroup_size=1 if cpu else 32,
            max_alloc=int(device.max_mem_alloc_size),
            global_mem=int(device.global_mem_size),
        )
        # PoCL's tuned kernels for CPU devices: vector types in the softmax rows, the packed matmul (its panels
        # need buffers aligned to 512 bytes)
        if cpu:
            self.overrides = frozenset(
                {"vector_softmax"} | ({"packed_matmul"} if device.mem_base_addr_align >= 512 else set())
            )
        self._bound: OrderedDict = OrderedDict()  # (kernel, by-value arguments) -> kernel object with them set
        self._seen: dict = {}  # (kernel, by-value arguments) -> launches so far, until hot
        self._launch_lock = threading.Lock()  # kernel arguments are state: one launch at a time sets them

    # -- memory ----------------------------------------------------------------------------------

    def allocate(self, nbytes: int):
        """A ``cl.Buffer`` (``MemoryError`` when the driver refuses it)."""
        import pyopencl as cl

        try:
            return cl.Buffer(self.context, cl.mem_flags.READ_WRITE, nbytes)
        except (cl.MemoryError, cl.RuntimeError) as exc:
            raise MemoryError(str(exc)) from None

    def free(self, buffer) -> None:
        """Release the ``cl.Buffer``."""
        buffer.release()

    def copy_from_host(self, buffer, array, offset: int = 0) -> None:
        """``enqueue_copy`` host -> device (blocking)."""
        import pyopencl as cl

        cl.enqueue_copy(self.queue, buffer, array, dst_offset=offset)

    def copy_to_host(self, array, buffer, offset: int = 0) -> None:
        """``enqueue_copy`` device -> host (blocking: the queue is in order)."""
        import pyopencl as cl

        cl.enqueue_copy(self.queue, array, buffer, src_offset=offset)

    def copy_device(self, dst, src, nbytes: int, dst_offset: int = 0, src_offset: int = 0) -> None:
        """``enqueue_copy`` between two buffers (queued)."""
        import pyopencl as cl

        cl.enqueue_copy(self.queue, dst, src, byte_count=nbytes, dst_offset=dst_offset, src_offset=src_offset)

    def fill_zero(self, buffer, nbytes: int, offset: int = 0) -> None:
        """``enqueue_fill_buffer`` with zero bytes (queued)."""
        import numpy as np
        import pyopencl as cl

        cl.enqueue_fill_buffer(self.queue, buffer, np.uint8(0), offset, nbytes)

    # -- programs --------------------------------------------------------------------------------

    def build(self, source: str, options: tuple) -> dict:
        """``cl.Program(source).build``: pyopencl and PoCL cache the binaries on disk, keyed on source and device."""
        import pyopencl as cl

        program = cl.Program(self.context, source).build(options=list(options))
        return {k.function_name: k for k in program.all_kernels()}

    def launch(self, kernel, grid: tuple, block: tuple, args: tuple) -> None:
        """Enqueue ``kernel`` over ``grid`` groups of ``block`` items.

        Setting a by-value kernel argument costs PoCL 10-18 us, a buffer argument under 1 us. So a kernel
        launched ``HOT`` times with the same by-value arguments (one layout in a loop) gets a kernel object
        of its own with those arguments set once; its launches then set only the buffers. The last
        ``BOUND`` such objects are kept.
        """
        import numpy as np
        import pyopencl as cl

        size = tuple(g * b for g, b in zip(grid, block))
        values = [a if type(a) is bytes else a.tobytes() if isinstance(a, np.generic) else None for a in args]
        key = (kernel, *values)
        with self._launch_lock:
            target = self._bound.get(key)
            if target is None:
                seen = self._seen.get(key, 0) + 1
                if seen < HOT:
                    if len(self._seen) > 8 * BOUND:
                        self._seen.clear()
                    self._seen[key] = seen
                    kernel.set_args(*args)
                    cl.enqueue_nd_range_kernel(self.queue, kernel, size, block)
                    return
                del self._seen[key]
                target = self._bound[key] = cl.Kernel(kernel.program, kernel.function_name)
                for i, (a, v) in enumerate(zip(args, values)):
                    if v is not None:
                        target.set_arg(i, a)
                if len(self._bound) > BOUND:
                    self._bound.popitem(last=False)
            else:
                self._bound.move_to_end(key)
            for i, (a, v) in enumerate(zip(args, values)):
                if v is None:
                    target.set_arg(i, a)
            cl.enqueue_nd_range_kernel(self.queue, target, size, block)

    def synchronize(self) -> None:
        """``queue.finish()``."""
        self.queue.finish()


HOT = 3
BOUND = 512


def _find() -> tuple[list, str | None]:
    """Every usable OpenCL device as a :class:`DeviceRuntime`, or ``([], why not)``."""
    try:
        import pyopencl as cl
    except ImportError as exc:
        return [], f"pyopencl is not installed ({exc})"
    try:
        found = [d for p in cl.get_platforms() for d in p.get_devices()]
    except Exception as exc:  # no ICD loader, no platform: cl raises LogicError/RuntimeError
        return [], f"no OpenCL platform: {type(exc).__name__}: {exc}"
    chosen = os.environ.get("OPWEAVE_OPENCL_DEVICE")
    if chosen not in (None, ""):
        try:
            found = [found[int(chosen)]]
        except (ValueError, IndexError):
            return [], f"OPWEAVE_OPENCL_DEVICE={chosen!r} does not name one of the {len(found)} OpenCL device(s)"
    runtimes = []
    for i, d in enumerate(found):
        ctx = cl.Context([d])
        runtimes.append(DeviceRuntime(i, d, ctx, cl.CommandQueue(ctx, d)))
    return runtimes, None if runtimes else "no OpenCL device found (no platform reports a device)"


_LIST = DeviceList(_find)
devices = _LIST.devices
unavailable_reason = _LIST.unavailable_reason


def runtime(index: int | None) -> DeviceRuntime:
    """The run time of device ``opencl:index`` (None means 0)."""
    devs = devices()
    i = index or 0
    if i >= len(devs):
        reason = unavailable_reason() or "see is_available"
        raise RuntimeError(f"opencl:{i} does not exist: {len(devs)} OpenCL device(s) ({reason})")
    return devs[i]
