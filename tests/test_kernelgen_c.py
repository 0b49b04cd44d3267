"""The C dialect and CRuntime of opweave_kernelgen: compile, cache, launch geometry, barriers, no compiler."""

from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from opweave_kernelgen.c_runtime import CRuntime, HostBuffer, compiler
from opweave_kernelgen.dialect.c import C

pytestmark = pytest.mark.skipif(compiler()[0] is None, reason=f"no C compiler: {compiler()[1]}")

LOCAL = 8


def _group_reverse_source() -> str:
    """Each group reverses its slice of ``a`` through local memory (a barrier between the write and the read)."""
    body = f"""
    {C.local_array("float", "tile", LOCAL)}
    long l = {C.local_id()};
    long g = {C.global_id()};
    tile[l] = g < n ? a[g] : 0;
    {C.barrier()}
    long src = {C.group_id()} * {C.local_size()} + ({C.local_size()} - 1 - l);
    if (g < n) out[g] = src < n ? tile[{C.local_size()} - 1 - l] : -1;
"""
    params = [C.buffer("float", "out"), C.buffer("float", "a", const=True), "long n"]
    return C.kernel("group_reverse", params, body)


def _device_array(rt, values: np.ndarray) -> HostBuffer:
    b = rt.allocate(values.nbytes)
    rt.copy_from_host(b, values)
    return b


@pytest.fixture(scope="module")
def runtime(tmp_path_factory):
    old = os.environ.get("OPWEAVE_KERNEL_CACHE")
    os.environ["OPWEAVE_KERNEL_CACHE"] = str(tmp_path_factory.mktemp("kernels"))
    yield CRuntime("test")
    if old is None:
        os.environ.pop("OPWEAVE_KERNEL_CACHE")
    else:
        os.environ["OPWEAVE_KERNEL_CACHE"] = old


@given(n=st.integers(0, 5 * LOCAL), seed=st.integers(0, 2**32 - 1))
def test_barrier_kernels_see_every_item_of_their_group(runtime, n, seed):
    values = np.random.default_rng(seed).standard_normal(max(n, 1)).astype(np.float32)
    a = _device_array(runtime, values)
    out = _device_array(runtime, np.zeros_like(values))
    k = runtime.compile(_group_reverse_source())["group_reverse"]
    groups = -(-n // LOCAL)
    runtime.launch(k, (groups,), (LOCAL,), (out, a, np.int64(n)))
    got = np.zeros_like(values)
    runtime.copy_to_host(got, out)
    expected = np.zeros_like(values)
    for g in range(groups):
        for lid in range(LOCAL):
            i, src = g * LOCAL + lid, g * LOCAL + LOCAL - 1 - lid
            if i < n:
                expected[i] = values[src] if src < n else -1
    np.testing.assert_array_equal(got[:n], expected[:n])


def test_compiled_programs_are_cached_on_disk_by_source(runtime):
    folder = os.path.join(os.environ["OPWEAVE_KERNEL_CACHE"], "c")
    source = _group_reverse_source().replace("group_reverse", "cached_reverse")
    runtime.compile(source)
    files = sorted(os.listdir(folder))
    stamps = [os.stat(os.path.join(folder, f)).st_mtime_ns for f in files]
    CRuntime("another process").compile(source)  # a fresh runtime finds the object on disk
    assert sorted(os.listdir(folder)) == files
    assert [os.stat(os.path.join(folder, f)).st_mtime_ns for f in files] == stamps
    CRuntime("changed").compile(source + "\n/* another source */\n")
    assert len(os.listdir(folder)) == len(files) + 1


def test_compile_errors_name_the_device_and_show_the_compiler_output(runtime):
    with pytest.raises(RuntimeError, match="(?s)test: the C compiler failed.*undeclared"):
        runtime.compile(C.kernel("broken", ["long n"], "x = n;"))


def test_device_copies_and_zero_fill(runtime):
    src = _device_array(runtime, np.arange(16, dtype=np.uint8))
    dst = _device_array(runtime, np.full(16, 7, np.uint8))
    runtime.copy_device(dst, src, 8, dst_offset=4, src_offset=2)
    runtime.fill_zero(dst, 2, offset=14)
    got = np.empty(16, np.uint8)
    runtime.copy_to_host(got, dst)
    expected = np.full(16, 7, np.uint8)
    expected[4:12] = np.arange(2, 10)
    expected[14:] = 0
    np.testing.assert_array_equal(got, expected)


def test_no_compiler_is_reported_not_raised(monkeypatch):
    compiler.cache_clear()
    monkeypatch.setenv("CC", "no-such-compiler-anywhere")
    try:
        path, reason = compiler()
        assert path is None and "no-such-compiler-anywhere" in reason
    finally:
        compiler.cache_clear()
