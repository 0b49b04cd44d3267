"""A FAKE of the few Metal and MetalPerformanceShaders calls ``opweave_mps`` makes: for unit tests of its logic.

It is not Metal and verifies nothing about Apple GPUs. It records what the runtime asks for
(libraries compiled, pipelines created, buffers, encoders, dispatches, commits) in ``FakeMetal.log``
and does the memory operations Metal would do, at the time Metal would do them: a blit copy or fill and
an MPS matrix product run when their command buffer is committed (with NumPy), never when encoded.
Kernel dispatches are only recorded: no MSL runs here.
"""

from __future__ import annotations

import re
import types

import numpy as np


class FakeBuffer:
    """A shared-storage buffer: a bytearray that ``contents().as_buffer(n)`` exposes."""

    def __init__(self, device, nbytes: int):
        self.device, self.data = device, bytearray(nbytes)

    def contents(self):
        return types.SimpleNamespace(as_buffer=lambda n: memoryview(self.data)[:n])

    def length(self) -> int:
        return len(self.data)

    def __del__(self):
        self.device.live -= len(self.data)


class FakePipeline:
    def __init__(self, name: str):
        self.name = name

    def threadExecutionWidth(self) -> int:
        return 32

    def maxTotalThreadsPerThreadgroup(self) -> int:
        return 1024


class FakeLibrary:
    def __init__(self, source: str):
        self.names = re.findall(r"kernel void (\w+)\(", source)

    def functionNames(self):
        return list(self.names)

    def newFunctionWithName_(self, name: str):
        return name if name in self.names else None


class FakeEncoder:
    """A compute or blit encoder: calls are appended to its command buffer's list."""

    def __init__(self, cb, kind: str):
        self.cb, self.kind, self.args, self.pipeline = cb, kind, {}, None

    def setComputePipelineState_(self, pipeline):
        self.pipeline = pipeline

    def setBuffer_offset_atIndex_(self, buffer, offset, index):
        self.args[index] = ("buffer", buffer, offset)

    def setBytes_length_atIndex_(self, data, length, index):
        assert len(data) == length
        self.args[index] = ("bytes", bytes(data))

    def dispatchThreadgroups_threadsPerThreadgroup_(self, grid, block):
        args = [self.args[i] for i in sorted(self.args)]
        self.cb.ops.append(("dispatch", self.pipeline.name, grid, block, args))
        self.cb.log.append(("dispatch", self.pipeline.name))

    def copyFromBuffer_sourceOffset_toBuffer_destinationOffset_size_(self, src, so, dst, do, n):
        self.cb.ops.append(("copy", lambda: dst.data.__setitem__(slice(do, do + n), src.data[so : so + n])))

    def fillBuffer_range_value_(self, buffer, rng, value):
        start, n = rng
        self.cb.ops.append(("fill", lambda: buffer.data.__setitem__(slice(start, start + n), bytes([value]) * n)))

    def endEncoding(self):
        self.cb.log.append(("end", self.kind))
        self.cb.open = None


class FakeCommandBuffer:
    def __init__(self, log):
        self.log, self.ops, self.open, self.committed, self.completed = log, [], None, False, False

    def _encoder(self, kind):
        assert self.open is None, "an encoder is still open"
        assert not self.committed, "encoding into a committed command buffer"
        self.open = FakeEncoder(self, kind)
        self.log.append(("encoder", kind))
        return self.open

    def computeCommandEncoder(self):
        return self._encoder("compute")

    def blitCommandEncoder(self):
        return self._encoder("blit")

    def commit(self):
        assert self.open is None, "committed with an encoder open"
        self.committed = True
        self.log.append(("commit", sum(op[0] == "dispatch" for op in self.ops)))
        for op in self.ops:  # the GPU's work, done in order when the buffer is committed
            if op[0] != "dispatch":
                op[1]()
        self.completed = True

    def waitUntilCompleted(self):
        assert self.committed
        self.log.append(("wait",))

    def error(self):
        return None


class FakeDevice:
    def __init__(self, metal, max_buffer: int = 1 << 30, working_set: int = 1 << 32):
        self.metal, self.max_buffer, self.working_set, self.live = metal, max_buffer, working_set, 0

    def newCommandQueue(self):
        return types.SimpleNamespace(commandBuffer=lambda: FakeCommandBuffer(self.metal.log))

    def newBufferWithLength_options_(self, nbytes, options):
        self.metal.log.append(("buffer", nbytes, options))
        if nbytes > self.max_buffer:
            return None
        self.live += nbytes
        return FakeBuffer(self, nbytes)

    def newLibraryWithSource_options_error_(self, source, options, error):
        self.metal.log.append(("library", options.fast_math, options.version))
        if "#error" in source:
            return None, "program_source:1:2: error: planted"
        return FakeLibrary(source), None

    def newComputePipelineStateWithFunction_error_(self, function, error):
        self.metal.log.append(("pipeline", function))
        return FakePipeline(function), None

    def maxThreadgroupMemoryLength(self) -> int:
        return 32768

    def maxBufferLength(self) -> int:
        return self.max_buffer

    def recommendedMaxWorkingSetSize(self) -> int:
        return self.working_set

    def currentAllocatedSize(self) -> int:
        return self.live


class FakeCompileOptions:
    fast_math, version = True, None

    @classmethod
    def new(cls):
        return cls()

    def setFastMathEnabled_(self, value):
        self.fast_math = value

    def setLanguageVersion_(self, value):
        self.version = value


class FakeMetal(types.SimpleNamespace):
    """The ``Metal`` module as the runtime uses it; ``log`` records every call that matters."""

    MTLResourceStorageModeShared = 0
    MTLLanguageVersion3_1 = 196609
    MTLCompileOptions = FakeCompileOptions

    def __init__(self, **device_options):
        super().__init__(log=[])
        self.device = FakeDevice(self, **device_options)

    @staticmethod
    def MTLSizeMake(x, y, z):
        return (x, y, z)

    def MTLCreateSystemDefaultDevice(self):
        return self.device


# -- MetalPerformanceShaders: matrix descriptors and MPSMatrixMultiplication ---------------------------------

_NUMPY = {1: np.float32, 2: np.float16}


class _Alloc:
    @classmethod
    def alloc(cls):
        return cls()


class FakeMatrix(_Alloc):
    def initWithBuffer_offset_descriptor_(self, buffer, offset, desc):
        self.buffer, self.offset, self.desc = buffer, offset, desc
        return self

    def array(self) -> np.ndarray:
        """The matrices as a (matrices, rows, columns) view of the buffer, as MPS reads them."""
        d, item = self.desc, np.dtype(_NUMPY[self.desc.dataType]).itemsize
        assert d.rowBytes % item == 0 and d.matrixBytes % item == 0 and self.offset % item == 0
        assert d.rowBytes >= d.columns * item and d.matrixBytes >= d.rows * d.rowBytes
        flat = np.frombuffer(self.buffer.data, _NUMPY[d.dataType])
        return np.lib.stride_tricks.as_strided(
            flat[self.offset // item :], (d.matrices, d.rows, d.columns), (d.matrixBytes, d.rowBytes, item)
        )


class FakeMatrixMultiplication(_Alloc):
    def initWithDevice_transposeLeft_transposeRight_resultRows_resultColumns_interiorColumns_alpha_beta_(
        self, device, tl, tr, m, n, k, alpha, beta
    ):
        self.tl, self.tr, self.m, self.n, self.k, self.alpha, self.beta = tl, tr, m, n, k, alpha, beta
        self.batch_start, self.batch_size = 0, 1
        return self

    def setBatchStart_(self, value):
        self.batch_start = value

    def setBatchSize_(self, value):
        self.batch_size = value

    def encodeToCommandBuffer_leftMatrix_rightMatrix_resultMatrix_(self, cb, left, right, result):
        assert cb.open is None, "MPS encodes with no encoder open"

        def run():
            b = slice(self.batch_start, self.batch_start + self.batch_size)
            a, bb = left.array()[b], right.array()[b]
            a = a.transpose(0, 2, 1) if self.tl else a
            bb = bb.transpose(0, 2, 1) if self.tr else bb
            assert a.shape[1:] == (self.m, self.k) and bb.shape[1:] == (self.k, self.n)
            out = result.array()
            out[b] = self.alpha * (a.astype(np.float64) @ bb.astype(np.float64)) + self.beta * out[b]

        cb.ops.append(("mps", run))
        cb.log.append(("mps_matmul", self.m, self.n, self.k, self.batch_size))


def fake_mps():
    """The ``MetalPerformanceShaders`` module as ``opweave_mps.matmul`` uses it."""
    return types.SimpleNamespace(
        MPSDataTypeFloat32=1,
        MPSDataTypeFloat16=2,
        MPSMatrixDescriptor=types.SimpleNamespace(
            matrixDescriptorWithRows_columns_matrices_rowBytes_matrixBytes_dataType_=lambda r, c, m, rb, mb, t: (
                types.SimpleNamespace(rows=r, columns=c, matrices=m, rowBytes=rb, matrixBytes=mb, dataType=t)
            )
        ),
        MPSMatrix=FakeMatrix,
        MPSMatrixMultiplication=FakeMatrixMultiplication,
    )
