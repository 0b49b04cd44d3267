"""The Metal runtime's logic against ``fake_metal`` (a recording FAKE of Metal; no GPU runs here).

What these tests show: the runtime creates shared-storage buffers and copies through ``contents()``,
caches libraries and pipelines, batches dispatches into command buffers and commits them where the
host needs the data, refuses what Metal cannot do, and hands MPS matrix descriptors that describe the
operands' memory. What they cannot show: that Metal accepts the calls or that kernels compute correctly.
"""

from __future__ import annotations

import numpy as np
import opweave
import pytest
from fake_metal import FakeMetal
from hypothesis import given
from hypothesis import strategies as st
from opweave_kernelgen.allocator import CachingAllocator
from opweave_mps._runtime import BATCH, MetalRuntime

SOURCE = (
    "#include <metal_stdlib>\nkernel void first(device float* o [[buffer(0)]]) {}\n"
    "kernel void second(device float* o [[buffer(0)]]) {}\n"
)


@pytest.fixture
def fake():
    return FakeMetal()


@pytest.fixture
def rt(fake):
    runtime = MetalRuntime(fake, fake.MTLCreateSystemDefaultDevice())
    fake.log.clear()
    return runtime


def _entries(fake, kind):
    return [e for e in fake.log if e[0] == kind]


def test_properties_come_from_the_device_and_a_probe_pipeline(fake):
    runtime = MetalRuntime(fake, fake.MTLCreateSystemDefaultDevice())
    p = runtime.properties
    assert (p.subgroup_size, p.max_work_group, p.local_mem) == (32, 1024, 32768)
    assert not p.is_cpu and not p.has_fp64 and p.has_fp16 and p.max_alloc == 1 << 30
    assert runtime.dialect.name == "msl" and runtime.device_name == "mps:0"


def test_buffers_are_shared_and_host_copies_round_trip(rt, fake):
    buf = rt.allocate(64)
    assert _entries(fake, "buffer") == [("buffer", 64, fake.MTLResourceStorageModeShared)]
    data = np.arange(16, dtype=np.float32)
    rt.copy_from_host(buf, data.view(np.uint8), 0)
    out = np.empty(8, np.float32)
    rt.copy_to_host(out.view(np.uint8), buf, 32)
    np.testing.assert_array_equal(out, data[8:])


def test_device_copies_and_fills_are_encoded_and_seen_by_the_next_host_read(rt, fake):
    a, b = rt.allocate(32), rt.allocate(32)
    rt.copy_from_host(a, np.arange(32, dtype=np.uint8))
    rt.copy_from_host(b, np.full(32, 7, np.uint8))
    fake.log.clear()
    rt.copy_device(b, a, 8, dst_offset=4, src_offset=16)
    rt.fill_zero(b, 4, 28)
    assert _entries(fake, "commit") == []  # encoded, not yet run
    out = np.empty(32, np.uint8)
    rt.copy_to_host(out, b)
    expected = np.full(32, 7, np.uint8)
    expected[4:12] = np.arange(16, 24)
    expected[28:] = 0
    np.testing.assert_array_equal(out, expected)
    assert len(_entries(fake, "commit")) == 1 and _entries(fake, "wait")


def test_libraries_compile_once_with_fast_math_off_and_pipelines_are_made_at_first_launch(rt, fake):
    ks = rt.compile(SOURCE)
    assert rt.compile(SOURCE) is ks and set(ks) == {"first", "second"}
    assert _entries(fake, "library") == [("library", False, fake.MTLLanguageVersion3_1)]
    assert _entries(fake, "pipeline") == []
    buf = rt.allocate(16)
    for _ in range(3):
        rt.launch(ks["first"], (2,), (64,), (buf,))
    assert _entries(fake, "pipeline") == [("pipeline", "first")]


def test_a_compiler_error_raises_runtime_error_with_the_message(rt):
    with pytest.raises(RuntimeError, match="Metal compiler rejected.*planted"):
        rt.compile("#error planted\n")


def test_dispatches_batch_into_one_command_buffer_until_synchronised(rt, fake):
    k = rt.compile(SOURCE)["first"]
    buf = rt.allocate(16)
    for _ in range(10):
        rt.launch(k, (4,), (64,), (buf, np.int64(5)))
    assert _entries(fake, "commit") == [] and len(_entries(fake, "encoder")) == 1
    rt.synchronize()
    assert _entries(fake, "commit") == [("commit", 10)] and _entries(fake, "wait") == [("wait",)]
    rt.synchronize()  # nothing pending: no new command buffer
    assert len(_entries(fake, "commit")) == 1


def test_a_full_batch_is_committed_without_waiting(rt, fake):
    k = rt.compile(SOURCE)["first"]
    buf = rt.allocate(16)
    for _ in range(BATCH + 3):
        rt.launch(k, (1,), (64,), (buf,))
    assert _entries(fake, "commit") == [("commit", BATCH)] and _entries(fake, "wait") == []
    rt.synchronize()
    assert _entries(fake, "commit") == [("commit", BATCH), ("commit", 3)]


def test_host_writes_wait_for_the_work_that_may_use_the_buffer(rt, fake):
    k = rt.compile(SOURCE)["first"]
    buf = rt.allocate(16)
    rt.launch(k, (1,), (64,), (buf,))
    rt.copy_from_host(buf, np.zeros(16, np.uint8))
    assert [e[0] for e in fake.log if e[0] in ("dispatch", "commit", "wait")] == ["dispatch", "commit", "wait"]


def test_arguments_are_bound_by_index_and_by_value_ones_as_bytes(rt, fake):
    k = rt.compile(SOURCE)["second"]
    buf = rt.allocate(16)
    struct = np.arange(8, dtype=np.int64).tobytes()
    rt.launch(k, (3, 2), (8, 8), (buf, np.int64(-2), np.int32(7), struct))
    cb = rt._buffer
    _, name, grid, block, args = cb.ops[-1]
    assert (name, grid, block) == ("second", (3, 2, 1), (8, 8, 1))
    assert args[0] == ("buffer", buf.mtl, 0)
    assert args[1:] == [("bytes", np.int64(-2).tobytes()), ("bytes", np.int32(7).tobytes()), ("bytes", struct)]


def test_a_threadgroup_over_the_pipeline_limit_is_refused(rt):
    k = rt.compile(SOURCE)["first"]
    with pytest.raises(RuntimeError, match="2048 threads per threadgroup"):
        rt.launch(k, (1,), (2048,), (rt.allocate(16),))


def test_the_allocator_reuses_buffers_by_size_class(rt, fake):
    alloc = CachingAllocator(rt)
    first = alloc.malloc(1000)
    buffer = first.buffer
    del first
    second = alloc.malloc(900)  # the same 1024-byte class
    assert second.buffer is buffer
    assert alloc.stats()["num_allocs"] == 1 and alloc.stats()["num_reuses"] == 1
    assert _entries(fake, "buffer") == [("buffer", 1024, 0)]
    del second
    alloc.empty_cache()
    assert rt.created == 0


def test_the_process_limit_releases_the_cache_then_raises_out_of_memory(rt, fake):
    alloc = CachingAllocator(rt)
    rt.limit = 4096
    kept = alloc.malloc(3000)
    cached = alloc.malloc(512)
    del cached  # 512 bytes in the cache, 3584 created
    third = alloc.malloc(1000)  # over the limit: the cache is released and the allocation retried
    assert alloc.stats()["cached"] == 0 and third.size == 1024
    with pytest.raises(opweave.OutOfMemoryError, match="process limit"):
        alloc.malloc(600)
    del kept, third


def test_a_buffer_metal_refuses_is_out_of_memory():
    fake = FakeMetal(max_buffer=1 << 20)
    runtime = MetalRuntime(fake, fake.MTLCreateSystemDefaultDevice())
    with pytest.raises(MemoryError, match="refused"):
        runtime.allocate(2 << 20)
    with pytest.raises(opweave.OutOfMemoryError, match="largest buffer"):
        CachingAllocator(runtime).malloc(2 << 20)


class FakeBackedMPS:
    """The mps backend with its runtime over the fake (its storages, copies and dtype checks are the real code)."""

    def __new__(cls, metal):
        from opweave_mps._backend import MPSBackend

        backend = MPSBackend()
        backend._runtimes = [MetalRuntime(metal, metal.MTLCreateSystemDefaultDevice())]
        return backend


def _bytes(a) -> np.ndarray:
    return np.ascontiguousarray(a).reshape(-1).view(np.uint8)


_ROUND_TRIP = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "complex64"]


@given(
    st.sampled_from(_ROUND_TRIP),
    st.lists(st.integers(0, 4), min_size=0, max_size=3),
    st.data(),
)
def test_tensors_round_trip_through_shared_buffers_with_any_strides(name, shape, data):
    from opweave.backends.kernel import wrap_storage

    backend, dev = FakeBackedMPS(FakeMetal()), opweave.device("mps", 0)
    dtype = getattr(opweave, name)
    big = [2 * n + 1 for n in shape]  # room for steps of 2 and an offset in every dim
    bits = np.random.default_rng(len(shape)).integers(0, 256, size=int(np.prod(big)) * dtype.itemsize, dtype=np.uint8)
    host = (bits % 2).astype(bool) if name == "bool" else bits.view(dtype.numpy)
    host = host.reshape(big)
    t = backend.from_host(host, dev)
    np.testing.assert_array_equal(_bytes(backend.copy_to_host(t)), _bytes(host))
    # a view of the same storage: an offset, steps and an order of dims drawn at random
    index = tuple(slice(data.draw(st.integers(0, 1)), None, data.draw(st.sampled_from([1, 2]))) for _ in big)
    view = host[(*index, ...)][(*(slice(0, n) for n in shape), ...)]  # (..., so a 0-dim index gives a view)
    view = view.transpose(data.draw(st.permutations(range(len(shape)))))
    item = host.itemsize
    offset = (view.__array_interface__["data"][0] - host.__array_interface__["data"][0]) // item
    strides = tuple(s // item for s in view.strides)
    dview = wrap_storage(t.untyped_storage(), view.shape, strides, offset, dtype=dtype, device=dev)
    np.testing.assert_array_equal(_bytes(backend.copy_to_host(dview)), _bytes(view))


def test_the_backend_refuses_double_dtypes_naming_the_device():
    backend, dev = FakeBackedMPS(FakeMetal()), opweave.device("mps", 0)
    with pytest.raises(TypeError, match="mps device has no float64"):
        backend.from_host(np.zeros(3), dev)
    with pytest.raises(TypeError, match="mps device has no complex128"):
        backend.empty_strided((2,), (1,), opweave.complex128, dev)
    assert backend.empty_strided((2,), (1,), opweave.float16, dev).dtype is opweave.float16
