"""A ``Runtime`` for the host CPU: kernels in the C dialect, compiled by the system C compiler, run through cffi.

Programs are compiled to shared objects with ``$CC`` (default ``cc``) and
``-O3 -march=native -fopenmp -ffp-contract=off`` and loaded with cffi's ABI mode
(``ffi.dlopen``). ABI mode rather than API mode (``ffi.set_source``): every kernel
has the same C signature (``void name(void **args, const long *grid, const long
*block)``), so a one-line ``cdef`` per kernel is all cffi needs, and a program is a
plain shared object built by one compiler call: no Python headers, no extension
module per program, no setuptools in the loop. Objects are cached on disk under
:func:`~opweave_kernelgen.runtime.cache_dir` (``$OPWEAVE_KERNEL_CACHE``, else
``~/.cache/opweave/kernels``), keyed on the source, the compiler's identity and the
flags, and written atomically, so processes share them.

Memory is host memory: a buffer is a :class:`HostBuffer` (an aligned NumPy byte
array and its address). A subclass may place buffers elsewhere (an arena of its
own) by overriding :meth:`CRuntime.allocate` and :meth:`CRuntime.free`.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import tempfile
import threading

import numpy as np

from .dialect.c import C, program
from .runtime import DeviceProperties, Runtime, cache_dir, cache_key

#: Work items from which a launch runs its groups on every core: below, OpenMP's fork and join (and its
#: spinning threads on a busy machine) cost more than the kernel.
PARALLEL_MIN = 1 << 15
FLAGS = ("-O3", "-march=native", "-fopenmp", "-ffp-contract=off", "-fPIC", "-shared", "-std=gnu11")
ALIGN = 64
_ENTRY = re.compile(r"^void (\w+)\(void \*\*a, const long \*grid, const long \*block\)", re.M)


@functools.cache
def compiler() -> tuple[str | None, str]:
    """``(path, identity)`` of the C compiler, or ``(None, reason)`` when there is none that builds OpenMP code."""
    cc = shutil.which(os.environ.get("CC", "cc"))
    if cc is None:
        return None, f"no C compiler: {os.environ.get('CC', 'cc')!r} is not on the PATH"
    try:
        version = subprocess.run([cc, "--version"], capture_output=True, text=True, timeout=30).stdout.splitlines()
    except (OSError, subprocess.SubprocessError) as exc:
        return None, f"the C compiler {cc} does not run: {exc}"
    try:
        import cffi  # noqa: F401
    except ImportError:
        return None, "cffi is not installed (pip install cffi)"
    return cc, (version[0] if version else cc)


class HostBuffer:
    """``nbytes`` bytes of host memory aligned to 64 bytes; ``ptr`` is their address."""

    __slots__ = ("array", "ptr", "nbytes")

    def __init__(self, nbytes: int):
        self.array = np.empty(nbytes + ALIGN, np.uint8)
        start = -self.array.ctypes.data % ALIGN
        self.array = self.array[start : start + nbytes]
        self.ptr = self.array.ctypes.data
        self.nbytes = nbytes

    def view(self, offset: int, nbytes: int) -> np.ndarray:
        """The bytes ``[offset, offset + nbytes)`` as a NumPy view."""
        return self.array[offset : offset + nbytes]


class CRuntime(Runtime):
    """The host CPU as a kernel device: C dialect, system compiler, OpenMP across the cores."""

    dialect = C

    def __init__(self, name: str = "c"):
        super().__init__()
        import cffi

        self.device_name = name
        self.ffi = cffi.FFI()
        self._libs: list = []  # loaded programs stay loaded
        self._ffi_lock = threading.Lock()
        cores = os.cpu_count() or 1
        self.properties = DeviceProperties(
            is_cpu=True, max_work_group=1024, local_mem=64 * 1024, vector_bytes=32, has_fp64=True, subgroup_size=1
        )
        self.cores = cores
        self._gomp = None
        self._threads = threading.local()  # OpenMP's thread count is per calling thread

    # -- memory ----------------------------------------------------------------------------------

    def allocate(self, nbytes: int):
        """A :class:`HostBuffer` (``MemoryError`` when the host has no room)."""
        return HostBuffer(nbytes)

    def free(self, buffer) -> None:
        """Host buffers go with their last reference."""

    def copy_from_host(self, buffer, array, offset: int = 0) -> None:
        """``memcpy`` into the buffer."""
        src = np.ascontiguousarray(array).reshape(-1).view(np.uint8)
        buffer.view(offset, src.nbytes)[:] = src

    def copy_to_host(self, array, buffer, offset: int = 0) -> None:
        """``memcpy`` out of the buffer (kernels are synchronous)."""
        dst = array.reshape(-1).view(np.uint8)
        dst[:] = buffer.view(offset, dst.nbytes)

    def copy_device(self, dst, src, nbytes: int, dst_offset: int = 0, src_offset: int = 0) -> None:
        """``memmove`` between two buffers."""
        dst.view(dst_offset, nbytes)[:] = src.view(src_offset, nbytes)

    def fill_zero(self, buffer, nbytes: int, offset: int = 0) -> None:
        """``memset`` to zero."""
        buffer.view(offset, nbytes)[:] = 0

    # -- programs --------------------------------------------------------------------------------

    def build(self, source: str, options: tuple) -> dict:
        """Compile (or find in the disk cache) the shared object of ``source`` and load its kernels."""
        cc, ident = compiler()
        if cc is None:
            raise RuntimeError(f"{self.device_name}: {ident}")
        text = program(source)
        flags = FLAGS + tuple(options)
        folder = os.path.join(cache_dir(), "c")
        path = os.path.join(folder, cache_key(text, ident, " ".join(flags)) + ".so")
        if not os.path.exists(path):
            os.makedirs(folder, exist_ok=True)
            with tempfile.TemporaryDirectory(dir=folder) as tmp:
                src, out = os.path.join(tmp, "k.c"), os.path.join(tmp, "k.so")
                with open(src, "w") as f:
                    f.write(text)
                done = subprocess.run([cc, *flags, "-o", out, src, "-lm"], capture_output=True, text=True)
                if done.returncode:
                    raise RuntimeError(f"{self.device_name}: the C compiler failed:\n{done.stderr[-4000:]}")
                os.replace(out, path)
        names = _ENTRY.findall(text)
        with self._ffi_lock:
            self.ffi.cdef("".join(f"void {n}(void **, const long *, const long *);\n" for n in names), override=True)
            lib = self.ffi.dlopen(path)
            self._libs.append(lib)
        return {n: getattr(lib, n) for n in names}

    def launch(self, kernel, grid: tuple, block: tuple, args: tuple) -> None:
        """Call the kernel's entry with a pointer to each argument (buffers by address, values by bytes)."""
        ffi = self.ffi
        keep = []
        ptrs = ffi.new("void *[]", max(len(args), 1))
        for i, a in enumerate(args):
            if isinstance(a, HostBuffer):
                cell = ffi.new("uintptr_t *", a.ptr)
            elif type(a) is bytes:
                cell = ffi.from_buffer(a)
            elif isinstance(a, (np.generic, np.ndarray)):  # a scalar, or a struct's bytes as an array
                cell = ffi.from_buffer(np.ascontiguousarray(a).tobytes())
            elif a is None:
                cell = ffi.new("uintptr_t *", 0)
            else:
                raise TypeError(f"{self.device_name}: launch: cannot pass a {type(a).__name__} argument")
            keep.append(cell)
            ptrs[i] = ffi.cast("void *", cell)
        g = ffi.new("long[3]", [*grid, 1, 1][:3])
        b = ffi.new("long[3]", [*block, 1, 1][:3])
        work = 1
        for v in (*grid, *block):
            work *= v
        self._set_threads(self.cores if work >= PARALLEL_MIN else 1)
        kernel(ptrs, g, b)

    def _set_threads(self, n: int) -> None:
        if getattr(self._threads, "n", None) == n:
            return
        if self._gomp is None:
            with self._ffi_lock:
                self.ffi.cdef("void omp_set_num_threads(int);", override=True)
                self._gomp = self.ffi.dlopen("libgomp.so.1")  # the OpenMP run time the programs link
        self._gomp.omp_set_num_threads(n)
        self._threads.n = n

    def synchronize(self) -> None:
        """Nothing to wait for: launches return when their kernel has run."""
