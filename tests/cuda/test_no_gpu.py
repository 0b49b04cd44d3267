"""The CUDA plugin on a machine without a GPU or driver, and its pure parts (launch packing, GEMM layouts, cache)."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import numpy as np
import opweave as ow
import pytest
from hypothesis import given
from hypothesis import strategies as st
from opweave_cuda import _kernels, _launch, _nvrtc, _runtime
from opweave_kernelgen.dialect.cuda import CUDA

NO_DRIVER = not ow.cuda.is_available()


@pytest.mark.skipif(not NO_DRIVER, reason="a CUDA device is present")
def test_without_a_driver_the_backend_is_unavailable_with_the_reason_and_nothing_else_breaks():
    reason = ow.cuda.unavailable_reason()
    assert ow.cuda.is_available() is False and ow.cuda.device_count() == 0
    assert reason and ("cuInit" in reason or "cuda-bindings" in reason or "NVRTC" in reason), reason
    line = [row for row in ow.backends.status() if row.name == "cuda"][0] if hasattr(ow.backends, "status") else None
    if line is not None and hasattr(line, "available"):
        assert not line.available
    with pytest.raises(RuntimeError, match="cuInit|cuda-bindings|NVRTC|no device"):
        ow.cuda.get_device_name()
    with pytest.raises(RuntimeError):
        ow.cuda.synchronize()
    x = ow.tensor([1.0, 2.0]) * 3  # other devices keep working
    np.testing.assert_array_equal(x.numpy(), [3.0, 6.0])


@pytest.mark.skipif(not NO_DRIVER, reason="a CUDA device is present")
def test_doctor_explains_the_missing_driver():
    code = "import sys; from opweave.cli import main; sys.exit(main(['doctor']))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    text = out.stdout + out.stderr
    rows = [line for line in text.splitlines() if line.startswith("cuda ")]
    assert rows and "unavailable" in rows[0] and ow.cuda.unavailable_reason().split(":")[0] in rows[0], text


def test_device_strings_parse_for_cuda():
    assert ow.device("cuda").type == "cuda" and ow.device("cuda").index is None
    assert ow.device("cuda:1").index == 1


def test_launch_geometry_pads_to_three_dims_and_refuses_what_cuda_cannot_launch():
    assert _launch.geometry((5,), (64,)) == ((5, 1, 1), (64, 1, 1))
    assert _launch.geometry((2, 3, 4), (8, 8, 1)) == ((2, 3, 4), (8, 8, 1))
    assert _launch.geometry((2**31 - 1,), (1024,))[0][0] == 2**31 - 1
    with pytest.raises(RuntimeError, match="axis y"):
        _launch.geometry((1, 65536), (64,))
    with pytest.raises(RuntimeError, match="threads per block"):
        _launch.geometry((1,), (2048,))
    with pytest.raises(RuntimeError, match="empty launch"):
        _launch.geometry((0,), (64,))


def test_kernel_params_hold_each_argument_bytes_in_order():
    class Buf:
        ptr = 0x7F00_1234_5678

    struct = np.arange(5, dtype=np.int64).tobytes()
    params = _launch.Params([Buf(), np.int64(-3), np.int32(7), np.float32(1.5), struct, None])
    assert params.address != 0
    assert int.from_bytes(params.values(0, 8), "little") == Buf.ptr
    assert np.frombuffer(params.values(1, 8), np.int64)[0] == -3
    assert np.frombuffer(params.values(2, 4), np.int32)[0] == 7
    assert np.frombuffer(params.values(3, 4), np.float32)[0] == 1.5
    assert params.values(4, len(struct)) == struct
    assert params.values(5, 8) == bytes(8)  # an empty storage's buffer: a null pointer
    with pytest.raises(TypeError, match="kernel argument"):
        _launch.Params([1.5])


@given(
    rows=st.integers(1, 6),
    cols=st.integers(1, 6),
    order=st.sampled_from(["C", "F", "bcast_row", "bcast_col", "strided"]),
)
def test_gemm_layout_reads_the_same_matrix_or_asks_for_a_copy(rows, cols, order):
    base = np.arange(rows * cols * 4, dtype=np.float64)
    if order == "C":
        m = base[: rows * cols].reshape(rows, cols)
    elif order == "F":
        m = base[: rows * cols].reshape(cols, rows).T
    elif order == "bcast_row":
        m = np.broadcast_to(base[:cols], (rows, cols))
    elif order == "bcast_col":
        m = np.broadcast_to(base[:rows, None], (rows, cols))
    else:
        m = base.reshape(rows * 2, cols * 2)[::2, ::2]
    rs, cs = (s // 8 for s in m.strides)
    found = _kernels.gemm_layout(rows, cols, rs, cs)
    if found is None:
        assert not ((cs == 1 and rs >= cols) or (rs == 1 and cs >= rows))
        return
    r, c = found
    assert (c == 1 and r >= cols) or (r == 1 and c >= rows)  # cuBLAS's leading-dimension rule
    offsets = np.array([[i * rs + j * cs for j in range(cols)] for i in range(rows)])
    again = np.array([[i * r + j * c for j in range(cols)] for i in range(rows)])
    np.testing.assert_array_equal(again, offsets)  # the same elements, not only a valid layout


def test_the_dialect_spells_cuda():
    assert CUDA.global_id(0) == "((long)blockIdx.x * blockDim.x + threadIdx.x)"  # 64-bit ids
    assert CUDA.kernel("k", ["long n"], "").startswith('extern "C" __global__ void k(long n)')
    assert CUDA.local_array("float", "t", 64) == "__shared__ float t[64];"
    assert CUDA.barrier() == "__syncthreads();" and CUDA.function_prefix() == "__device__ inline"
    assert "atomicCAS((unsigned long long*)" in CUDA.atomic_cas(64, "p", "e", "v")
    assert CUDA.header(["float16", "float64"]) == ""  # the prelude is prepended once per program


def test_the_architecture_is_the_devices_own_or_refused():
    assert _runtime.choose_arch((9, 0), (80, 86, 90)) == 90
    with pytest.raises(RuntimeError, match="sm_75"):
        _runtime.choose_arch((7, 5), (80, 90))


@pytest.mark.skipif(_nvrtc.nvrtc()[0] is None, reason="NVRTC is not available")
def test_cubins_are_cached_on_disk_by_source_and_architecture(tmp_path, monkeypatch):
    monkeypatch.setenv("OPWEAVE_KERNEL_CACHE", str(tmp_path))
    src = CUDA.kernel(
        "twice", [CUDA.buffer("float", "x"), "long n"], f"long g = {CUDA.global_id()}; if (g < n) x[g] *= 2;"
    )
    first = _runtime.cached_cubin(src, 80)
    folder = tmp_path / "cuda"
    files = sorted(os.listdir(folder))
    stamps = [os.stat(folder / f).st_mtime_ns for f in files]
    assert len(files) == 1 and first[:4] == b"\x7fELF"
    assert _runtime.cached_cubin(src, 80) == first  # read back, not compiled again
    assert [os.stat(folder / f).st_mtime_ns for f in sorted(os.listdir(folder))] == stamps
    _runtime.cached_cubin(src, 90)
    assert len(os.listdir(folder)) == 2


def test_every_driver_call_the_plugin_makes_exists_in_cuda_bindings():
    driver = pytest.importorskip("cuda.bindings.driver")
    folder = os.path.dirname(_runtime.__file__)
    names = set()
    for name in os.listdir(folder):
        if name.endswith(".py"):
            text = open(os.path.join(folder, name)).read()
            names |= set(re.findall(r'call\(\s*"(\w+)"', text)) | set(re.findall(r"driver\.(cu\w+)\(", text))
    assert {"cuInit", "cuLaunchKernel", "cuMemAllocAsync", "cuMemFreeAsync", "cuMemPoolTrimTo"} <= names
    assert not [n for n in names if not hasattr(driver, n)]


class _FakeRuntime:
    """Allocations that fail ``failures`` times with ``MemoryError`` (a full pool), then succeed."""

    device_name = "cuda:0"

    def __init__(self, failures):
        self.failures, self.trims, self.live, self.current, self.next = failures, 0, {}, 0, 0x1000

    def stream(self):
        return self.current

    def allocate(self, nbytes):
        if self.failures:
            self.failures -= 1
            raise MemoryError("cuMemAllocAsync failed: CUDA_ERROR_OUT_OF_MEMORY: out of memory")
        buf = _runtime.DeviceBuffer(self.next, nbytes, self.current)
        self.next += 0x100000
        self.live[buf.ptr] = nbytes
        return buf

    def free(self, buffer):
        del self.live[buffer.ptr]

    def trim(self):
        self.trims += 1

    def pool_bytes(self, which="reserved"):
        return sum(self.live.values())


def test_the_pool_allocator_releases_the_cache_and_retries_once_before_out_of_memory():
    from opweave_cuda._allocator import PoolAllocator

    rt = _FakeRuntime(failures=1)
    alloc = PoolAllocator(rt)
    block = alloc.malloc(100)  # first try fails, the cache is trimmed, the retry succeeds
    assert rt.trims == 1 and alloc.stats()["allocated"] == 100 and alloc.stats()["peak"] == 100
    rt.failures = 2
    with pytest.raises(ow.OutOfMemoryError, match="(?s)cuda:0.*CUDA_ERROR_OUT_OF_MEMORY"):
        alloc.malloc(1 << 40)
    assert rt.trims == 2 and alloc.stats()["allocated"] == 100 and alloc.stats()["num_ooms"] == 1  # nothing leaked
    assert list(rt.live.values()) == [512]  # the small request, rounded to 512 bytes
    del block  # the last owner gone: a small block is kept for its stream, empty_cache returns it to the pool
    assert alloc.stats()["allocated"] == 0 and list(rt.live.values()) == [512]
    alloc.empty_cache()
    assert rt.live == {} and rt.trims == 3
    assert alloc.stats()["peak"] == 100
    alloc.reset_peak()
    assert alloc.stats()["peak"] == 0


def test_small_blocks_are_reused_on_their_own_stream_without_the_driver():
    """A freed block of up to 1 MiB is kept for its stream and size class (512-byte rounding) and handed to the
    next request of that class on that stream; another stream, another class or a large block asks the pool."""
    from opweave_cuda._allocator import SMALL, PoolAllocator

    rt = _FakeRuntime(failures=0)
    alloc = PoolAllocator(rt)
    first = alloc.malloc(64)
    ptr = first.buffer.ptr
    del first
    assert len(rt.live) == 1 and alloc.stats()["allocated"] == 0
    again = alloc.malloc(500)  # the same 512-byte class, the same stream: the kept block, no new allocation
    assert again.buffer.ptr == ptr and len(rt.live) == 1 and alloc.stats()["allocated"] == 500
    other = alloc.malloc(600)  # another class
    assert other.buffer.ptr != ptr and rt.live[other.buffer.ptr] == 1024
    del again
    rt.current = 7  # another stream: never the block freed on stream 0
    elsewhere = alloc.malloc(64)
    assert elsewhere.buffer.ptr != ptr and elsewhere.buffer.stream == 7
    big = alloc.malloc(SMALL + 1)
    big_ptr = big.buffer.ptr
    del big  # a large block goes straight back to the pool
    assert big_ptr not in rt.live
    del other, elsewhere
    assert alloc.stats()["allocated"] == 0 and alloc.stats()["num_allocs"] == alloc.stats()["num_frees"] == 5
    alloc.empty_cache()
    assert rt.live == {}


def test_driver_errors_name_the_call_and_out_of_memory_is_a_memory_error(monkeypatch):
    from opweave_cuda import _driver

    class CUresult:
        CUDA_SUCCESS, CUDA_ERROR_OUT_OF_MEMORY, CUDA_ERROR_INVALID_VALUE = 0, 2, 1

    class Fake:
        pass

    fake = Fake()
    fake.CUresult = CUresult
    fake.cuGetErrorName = lambda err: (0, {1: b"CUDA_ERROR_INVALID_VALUE", 2: b"CUDA_ERROR_OUT_OF_MEMORY"}[err])
    fake.cuGetErrorString = lambda err: (0, b"what the driver says")
    fake.cuMemAllocAsync = lambda n, s: (CUresult.CUDA_ERROR_OUT_OF_MEMORY, None)
    fake.cuStreamSynchronize = lambda s: (CUresult.CUDA_ERROR_INVALID_VALUE,)
    fake.cuDeviceGetCount = lambda: (CUresult.CUDA_SUCCESS, 3)
    monkeypatch.setattr(_driver, "load", lambda: (fake, None))
    assert _driver.call("cuDeviceGetCount") == 3
    with pytest.raises(MemoryError, match="cuMemAllocAsync failed: CUDA_ERROR_OUT_OF_MEMORY"):
        _driver.call("cuMemAllocAsync", 8, 0)
    with pytest.raises(RuntimeError, match="cuStreamSynchronize failed: CUDA_ERROR_INVALID_VALUE: what the driver"):
        _driver.call("cuStreamSynchronize", 0)


def test_cuda_autocast_is_pytorchs_cuda_table_with_float16_by_default():
    assert ow.get_autocast_dtype("cuda") == ow.float16
    policy = ow.autocast_policy("cuda")
    assert policy.category("mm") == "lower_precision" and policy.category("linear") == "lower_precision"
    assert policy.category("exp") == "fp32" and policy.category("softmax") == "fp32_set_opt_dtype"
    assert policy.category("addcmul") == "promote"
    with ow.autocast("cuda", dtype=ow.bfloat16):
        assert ow.get_autocast_dtype("cuda") == ow.bfloat16


def test_the_atomic_kernels_are_the_nondeterministic_ones():
    import opweave_kernelgen.kernels.scatter  # noqa: F401  (fills NONDETERMINISTIC)
    from opweave_kernelgen.kernels import NONDETERMINISTIC

    assert {"prims::scatter_add", "prims::index_add"} <= set(NONDETERMINISTIC)


@pytest.mark.skipif(not NO_DRIVER, reason="a CUDA device is present")
def test_from_dlpack_of_a_cuda_capsule_loads_the_cuda_plugin_and_names_the_missing_driver():
    class Foreign:
        def __dlpack__(self, **kwargs):
            raise AssertionError("no capsule is asked for without a device")

        def __dlpack_device__(self):
            return (2, 0)

    with pytest.raises(RuntimeError, match="cuda:0 does not exist"):
        ow.from_dlpack(Foreign())


def test_every_driver_call_passes_as_many_arguments_as_cuda_bindings_takes():
    """Each ``_driver.call("cuX", ...)`` against the signature line of ``cuda.bindings.driver.cuX``'s docstring."""
    import ast

    driver = pytest.importorskip("cuda.bindings.driver")
    folder = os.path.dirname(_runtime.__file__)
    checked = 0
    for name in sorted(os.listdir(folder)):
        if not name.endswith(".py"):
            continue
        tree = ast.parse(open(os.path.join(folder, name)).read())
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "call" and node.args):
                continue
            first = node.args[0]
            if not (isinstance(first, ast.Constant) and isinstance(first.value, str)):
                continue
            count = 0
            for arg in node.args[1:]:  # a starred launch dim tuple (*g, *b) stands for three values
                count += 3 if isinstance(arg, ast.Starred) else 1
            signature = getattr(driver, first.value).__doc__.strip().splitlines()[0]
            params = [p for p in signature[signature.index("(") + 1 : signature.rindex(")")].split(",") if p.strip()]
            assert count == len(params), f"{name}:{node.lineno}: {first.value} takes {signature}, given {count}"
            checked += 1
    assert checked >= 25


def test_a_scalar_upload_is_queued_memsets_and_larger_uploads_copy_then_wait(monkeypatch):
    """``copy_from_host`` of 1, 2, 4 or 8 bytes writes the value with cuMemsetD8/D16/D32Async on the current stream
    and does not wait (the value travels in the call); other sizes, or a misaligned address, copy and then wait."""
    from types import SimpleNamespace

    from opweave_cuda import _driver

    calls = []

    class Recorder:
        class CUresult:
            CUDA_SUCCESS, CUDA_ERROR_OUT_OF_MEMORY = 0, 2

        def __getattr__(self, name):
            return lambda *args: calls.append((name, *args)) or (0,)

    monkeypatch.setattr(_driver, "load", lambda: (Recorder(), None))
    rt = SimpleNamespace(enter=lambda: None, stream=lambda: 77)
    buffer = SimpleNamespace(ptr=0x1000)

    def upload(array, offset=0):
        calls.clear()
        _runtime.CudaRuntime.copy_from_host(rt, buffer, np.ascontiguousarray(array).reshape(-1).view(np.uint8), offset)
        return calls

    bits32 = int(np.array(1.5, np.float32).view(np.uint32))
    assert upload(np.array(1.5, np.float32)) == [("cuMemsetD32Async", 0x1000, bits32, 1, 77)]
    lo, hi = np.array([-2.25], np.float64).view(np.uint32)
    assert upload(np.array(-2.25, np.float64)) == [
        ("cuMemsetD32Async", 0x1000, int(lo), 1, 77),
        ("cuMemsetD32Async", 0x1004, int(hi), 1, 77),
    ]
    assert upload(np.array(-3, np.int16)) == [("cuMemsetD16Async", 0x1000, 0xFFFD, 1, 77)]
    assert upload(np.array(True)) == [("cuMemsetD8Async", 0x1000, 1, 1, 77)]
    for array, offset in ((np.arange(3, dtype=np.uint8), 0), (np.array(7, np.int32), 2), (np.arange(3.0), 0)):
        names = [c[0] for c in upload(array, offset)]
        assert names == ["cuMemcpyHtoDAsync", "cuStreamSynchronize"], (array, offset)
