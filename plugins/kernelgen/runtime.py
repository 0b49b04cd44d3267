"""The ``Runtime`` contract: what a device implements so that every generated prim kernel runs on it.

A runtime owns one device: its memory (buffers, copies), its compiler (source to
program, cached on disk keyed on source and device), its launches and the
properties the generator reads to choose launch geometry and algorithms
(:class:`DeviceProperties`). Spellings of the kernel language are the
:class:`~opweave_kernelgen.dialect.Dialect`'s business, never the runtime's.
"""

from __future__ import annotations

import hashlib
import os
import threading
from abc import ABC, abstractmethod
from dataclasses import dataclass


@dataclass(frozen=True)
class DeviceProperties:
    """What the generator may ask of a device (launch geometry and algorithm choices follow these)."""

    #: CPU-like: work items run as loop iterations, so kernels take blocks of elements per item.
    is_cpu: bool = True
    #: The largest work-group (thread-block) size.
    max_work_group: int = 256
    #: Bytes of work-group-shared (local/shared) memory.
    local_mem: int = 32 * 1024
    #: Bytes in one vector register of the compile target (16 floats of AVX-512 are 64).
    vector_bytes: int = 32
    has_fp16: bool = False
    has_fp64: bool = True
    has_bf16: bool = False
    #: Subgroup (warp) size; 1 where work items of a group do not run in lockstep.
    subgroup_size: int = 1
    #: The largest single buffer, and the device's memory, in bytes.
    max_alloc: int = 1 << 40
    global_mem: int = 1 << 40
    #: Grid-stride launches (dialects with ``grid_stride``): the most work items of a contiguous elementwise
    #: launch and their work-group size. 0: one work item per element, in groups of 64 (today's launches).
    grid_stride_items: int = 0
    grid_stride_local: int = 256
    #: Reductions: work-group size, and work groups per output when a few outputs reduce many elements.
    reduction_local: int = 64
    reduction_groups: int = 16


class Runtime(ABC):
    """One device, as the kernels see it. Subclasses implement the abstract methods.

    Buffers are opaque handles of the runtime (a ``cl.Buffer``, a device pointer); kernels pass
    them back as launch arguments. Offsets and sizes are in bytes.
    """

    #: The language its compiler reads.
    dialect = None
    #: What the generator may assume (set by the subclass, usually when the device is opened).
    properties: DeviceProperties = DeviceProperties()
    #: Names the device in messages and in the on-disk cache key (``"opencl:0 pthread-Intel(R) Xeon"``).
    device_name: str = "device"

    def __init__(self) -> None:
        self._programs: dict = {}
        self._compile_lock = threading.RLock()

    # -- memory ----------------------------------------------------------------------------------

    @abstractmethod
    def allocate(self, nbytes: int):
        """A new buffer of ``nbytes`` bytes (``MemoryError`` when the device refuses it)."""

    @abstractmethod
    def free(self, buffer) -> None:
        """Release ``buffer`` to the device."""

    @abstractmethod
    def copy_from_host(self, buffer, array, offset: int = 0) -> None:
        """Copy the bytes of the contiguous NumPy ``array`` into ``buffer`` at byte ``offset`` (blocking)."""

    @abstractmethod
    def copy_to_host(self, array, buffer, offset: int = 0) -> None:
        """Fill the contiguous NumPy ``array`` from ``buffer`` starting at byte ``offset`` (waits for kernels)."""

    @abstractmethod
    def copy_device(self, dst, src, nbytes: int, dst_offset: int = 0, src_offset: int = 0) -> None:
        """Copy ``nbytes`` bytes between two buffers of this device (ordered after enqueued kernels)."""

    def fill_zero(self, buffer, nbytes: int, offset: int = 0) -> None:
        """Set ``nbytes`` bytes of ``buffer`` at ``offset`` to zero (a host copy unless overridden)."""
        import numpy as np

        self.copy_from_host(buffer, np.zeros(nbytes, np.uint8), offset)

    # -- programs --------------------------------------------------------------------------------

    @abstractmethod
    def build(self, source: str, options: tuple) -> dict:
        """Compile ``source`` for this device: ``{kernel name: kernel}`` (the disk cache is the runtime's)."""

    def compile(self, source: str, options: tuple = ()) -> dict:
        """The kernels of ``source``, built once per runtime (then from memory)."""
        key = (source, options)
        found = self._programs.get(key)
        if found is None:
            with self._compile_lock:
                found = self._programs.get(key)
                if found is None:
                    found = self._programs[key] = self.build(source, tuple(options))
        return found

    kernels = compile  # the name the prim modules use

    @abstractmethod
    def launch(self, kernel, grid: tuple, block: tuple, args: tuple) -> None:
        """Run ``kernel`` over ``grid`` work groups of ``block`` work items each (per axis).

        ``args`` are buffers and by-value arguments: NumPy scalars, or ``bytes`` holding a struct.
        """

    @abstractmethod
    def synchronize(self) -> None:
        """Wait until every launch and copy issued so far has finished."""

    # -- conveniences the prim modules use -------------------------------------------------------

    @property
    def is_cpu(self) -> bool:
        """Whether the device is CPU-like (see :class:`DeviceProperties`)."""
        return self.properties.is_cpu

    @property
    def has_fp64(self) -> bool:
        """Whether the device has double precision."""
        return self.properties.has_fp64

    @property
    def has_fp16(self) -> bool:
        """Whether the device has half precision arithmetic."""
        return self.properties.has_fp16

    @property
    def vector_bytes(self) -> int:
        """Bytes in one vector register."""
        return self.properties.vector_bytes

    @property
    def max_alloc(self) -> int:
        """The largest single buffer, in bytes."""
        return self.properties.max_alloc

    @property
    def global_mem(self) -> int:
        """The device's memory, in bytes."""
        return self.properties.global_mem

    @property
    def max_work_group(self) -> int:
        """The largest work-group size."""
        return self.properties.max_work_group

    def lanes(self, dtype: str) -> int:
        """Elements of ``dtype`` (float32 or float64) in one vector register."""
        return self.vector_bytes // (4 if dtype == "float32" else 8)

    #: Device-specific kernels a runtime selects by name (``"packed_matmul"``, ``"vector_softmax"``): the
    #: generator's tuned variants for CPU devices with vector types; a runtime without them gets the portable ones.
    #: ``"group_softmax"``: a work group per softmax row (GPUs whose dialect has subgroup shuffles).
    overrides: frozenset = frozenset()


def cache_dir(env: str = "OPWEAVE_KERNEL_CACHE") -> str:
    """The directory compiled kernels are cached in: ``$OPWEAVE_KERNEL_CACHE``, else the user cache dir."""
    found = os.environ.get(env)
    if found:
        return found
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "opweave", "kernels")


def cache_key(*parts: str) -> str:
    """A file-name-safe digest of ``parts`` (source, compiler, flags, device)."""
    h = hashlib.sha256()
    for p in parts:
        h.update(p.encode())
        h.update(b"\0")
    return h.hexdigest()[:32]
