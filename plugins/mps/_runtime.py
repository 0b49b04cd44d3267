"""The Metal ``Runtime``: one ``MTLDevice``, one command queue, shared-storage buffers, batched command buffers.

- **Memory** is unified: buffers are created in ``MTLResourceStorageModeShared``, and host copies are
  ``memcpy`` through ``contents()`` (no staging buffer). Before the host touches a buffer, the work
  encoded so far is committed and waited for (the GPU may still read or write it).
- **Programs** are compiled from MSL by ``newLibraryWithSource:options:error:`` (fast math off, so
  IEEE semantics and Philox rounding hold) and cached in memory by source (``Runtime.compile``);
  a kernel's compute pipeline is created at its first launch and kept.
- **Launches** are encoded into one command buffer (a serial compute encoder: each dispatch sees the
  writes of the one before); the command buffer is committed every ``BATCH`` dispatches, when the host
  reads or writes memory, and at ``synchronize()``.
"""

from __future__ import annotations

import threading

import numpy as np
from opweave_kernelgen import DeviceProperties, Runtime
from opweave_kernelgen.dialect.msl import MSL

#: Dispatches encoded into one command buffer before it is committed (the GPU starts while more are encoded).
BATCH = 64
#: A kernel compiled when the device is opened: its pipeline reports the SIMD width and threadgroup limit.
PROBE = (
    "#include <metal_stdlib>\nusing namespace metal;\n"
    "kernel void ow_probe(device uint* o [[buffer(0)]]) { o[0] = 1u; }\n"
)


class Buffer:
    """A shared-storage ``MTLBuffer`` and a NumPy byte view of its ``contents()``."""

    __slots__ = ("mtl", "host", "nbytes")

    def __init__(self, mtl, nbytes: int):
        self.mtl, self.nbytes = mtl, nbytes
        self.host = np.frombuffer(mtl.contents().as_buffer(nbytes), np.uint8)


class Kernel:
    """One kernel of a compiled library; its compute pipeline is created at the first launch."""

    __slots__ = ("library", "name", "pipeline")

    def __init__(self, library, name: str):
        self.library, self.name, self.pipeline = library, name, None


class MetalRuntime(Runtime):
    """One Metal GPU, as the generated kernels see it. ``metal`` is PyObjC's ``Metal`` module (or a fake)."""

    dialect = MSL

    def __init__(self, metal, device, index: int = 0):
        super().__init__()
        self.metal, self.device, self.index = metal, device, index
        self.device_name = f"mps:{index}"
        self.queue = device.newCommandQueue()
        self._lock = threading.RLock()
        self._buffer = None  # the command buffer being encoded
        self._encoder = None  # its open encoder
        self._encoder_kind = None  # "compute" or "blit"
        self._dispatches = 0  # dispatches in the command buffer being encoded
        self._last = None  # the command buffer committed last (waited for at synchronisation)
        self.commits = 0
        self.created = 0  # bytes of buffers created and not released
        self.limit = 0  # bytes this process may hold in buffers (0: no limit; set_per_process_memory_fraction)
        probe = self.build(PROBE, ())["ow_probe"]
        pipeline = self._pipeline(probe)
        width = int(pipeline.threadExecutionWidth())
        self.properties = DeviceProperties(
            is_cpu=False,
            max_work_group=int(pipeline.maxTotalThreadsPerThreadgroup()),
            local_mem=int(device.maxThreadgroupMemoryLength()),
            vector_bytes=16,
            has_fp16=True,
            has_fp64=False,
            has_bf16=True,  # stored as raw bits and computed in float, as on every generated device
            subgroup_size=width,
            max_alloc=int(device.maxBufferLength()),
            global_mem=int(device.recommendedMaxWorkingSetSize()),
        )

    # -- memory ----------------------------------------------------------------------------------

    def allocate(self, nbytes: int) -> Buffer:
        """A shared-storage buffer (``MemoryError`` when Metal refuses it or the process limit is reached)."""
        if self.limit and self.created + nbytes > self.limit:
            raise MemoryError(f"the process limit of {self.limit} bytes (set_per_process_memory_fraction) is reached")
        mtl = self.device.newBufferWithLength_options_(nbytes, self.metal.MTLResourceStorageModeShared)
        if mtl is None:
            raise MemoryError(f"newBufferWithLength: Metal refused {nbytes} bytes")
        self.created += nbytes
        return Buffer(mtl, nbytes)

    def free(self, buffer: Buffer) -> None:
        """Release ``buffer`` (command buffers that use it keep their own reference until they complete)."""
        self.created -= buffer.nbytes
        buffer.mtl = buffer.host = None

    def copy_from_host(self, buffer: Buffer, array, offset: int = 0) -> None:
        """``memcpy`` into the shared buffer, once the work that may use it has finished."""
        self.synchronize()
        data = np.ascontiguousarray(array).reshape(-1).view(np.uint8)
        buffer.host[offset : offset + data.nbytes] = data

    def copy_to_host(self, array, buffer: Buffer, offset: int = 0) -> None:
        """``memcpy`` out of the shared buffer, once the work encoded so far has finished."""
        self.synchronize()
        out = array.reshape(-1).view(np.uint8)
        out[:] = buffer.host[offset : offset + out.nbytes]

    def copy_device(self, dst: Buffer, src: Buffer, nbytes: int, dst_offset: int = 0, src_offset: int = 0) -> None:
        """A blit copy, encoded after the earlier launches."""
        if nbytes:
            with self._lock:
                blit = self._encode("blit")
                blit.copyFromBuffer_sourceOffset_toBuffer_destinationOffset_size_(
                    src.mtl, src_offset, dst.mtl, dst_offset, nbytes
                )

    def fill_zero(self, buffer: Buffer, nbytes: int, offset: int = 0) -> None:
        """A blit fill with zero bytes, encoded after the earlier launches."""
        if nbytes:
            with self._lock:
                self._encode("blit").fillBuffer_range_value_(buffer.mtl, (offset, nbytes), 0)

    # -- programs --------------------------------------------------------------------------------

    def build(self, source: str, options: tuple) -> dict:
        """``newLibraryWithSource:options:error:`` (MSL 3.1 where the OS has it, fast math off): ``{name: Kernel}``."""
        opts = self.metal.MTLCompileOptions.new()
        opts.setFastMathEnabled_(False)
        version = getattr(self.metal, "MTLLanguageVersion3_1", None)
        if version is not None:
            opts.setLanguageVersion_(version)
        library, error = self.device.newLibraryWithSource_options_error_(source, opts, None)
        if library is None:
            raise RuntimeError(f"{self.device_name}: the Metal compiler rejected a generated program: {error}")
        return {str(name): Kernel(library, str(name)) for name in library.functionNames()}

    def _pipeline(self, kernel: Kernel):
        if kernel.pipeline is None:
            fn = kernel.library.newFunctionWithName_(kernel.name)
            pipeline, error = self.device.newComputePipelineStateWithFunction_error_(fn, None)
            if pipeline is None:
                raise RuntimeError(f"{self.device_name}: no compute pipeline for {kernel.name}: {error}")
            kernel.pipeline = pipeline
        return kernel.pipeline

    def launch(self, kernel: Kernel, grid: tuple, block: tuple, args: tuple) -> None:
        """Encode ``grid`` threadgroups of ``block`` threads; by-value arguments go in with ``setBytes``."""
        pipeline = self._pipeline(kernel)
        threads = int(np.prod(block))
        if threads > pipeline.maxTotalThreadsPerThreadgroup():
            raise RuntimeError(
                f"{self.device_name}: {kernel.name}: {threads} threads per threadgroup, "
                f"the pipeline allows {pipeline.maxTotalThreadsPerThreadgroup()}"
            )
        size = self.metal.MTLSizeMake
        with self._lock:
            enc = self._encode("compute")
            enc.setComputePipelineState_(pipeline)
            for i, a in enumerate(args):
                if isinstance(a, Buffer):
                    enc.setBuffer_offset_atIndex_(a.mtl, 0, i)
                else:
                    raw = a if type(a) is bytes else np.asarray(a).tobytes()
                    enc.setBytes_length_atIndex_(raw, len(raw), i)
            g, b = (tuple(grid) + (1, 1))[:3], (tuple(block) + (1, 1))[:3]
            enc.dispatchThreadgroups_threadsPerThreadgroup_(size(*g), size(*b))
            self._dispatches += 1
            if self._dispatches >= BATCH:
                self.commit()

    # -- command buffers -------------------------------------------------------------------------

    def command_buffer(self):
        """The command buffer being encoded, with no encoder open (MPS kernels encode their own)."""
        with self._lock:
            self._end_encoder()
            self._dispatches += 1
            return self._current()

    def _current(self):
        if self._buffer is None:
            self._buffer = self.queue.commandBuffer()
        return self._buffer

    def _encode(self, kind: str):
        with self._lock:
            if self._encoder_kind != kind:
                self._end_encoder()
                cb = self._current()
                self._encoder = cb.computeCommandEncoder() if kind == "compute" else cb.blitCommandEncoder()
                self._encoder_kind = kind
            return self._encoder

    def _end_encoder(self) -> None:
        if self._encoder is not None:
            self._encoder.endEncoding()
            self._encoder = self._encoder_kind = None

    def commit(self) -> None:
        """Commit the command buffer being encoded (the GPU starts on it; the host does not wait)."""
        with self._lock:
            self._end_encoder()
            if self._buffer is not None:
                self._buffer.commit()
                self._last, self._buffer, self._dispatches = self._buffer, None, 0
                self.commits += 1

    def synchronize(self) -> None:
        """Commit what is encoded and wait for every committed command buffer (the queue runs them in order)."""
        with self._lock:
            self.commit()
            last, self._last = self._last, None
        if last is not None:
            last.waitUntilCompleted()
            error = last.error()
            if error is not None:
                raise RuntimeError(f"{self.device_name}: a command buffer failed: {error}")
