"""The OpenCL backend's memory: round trips, views, the caching allocator, missing dtypes, availability."""

from __future__ import annotations

import os
import subprocess
import sys

import ml_dtypes
import numpy as np
import opweave as ow
import pytest

SPECIAL = [0.0, -0.0, 1.5, -2.25, np.inf, -np.inf, np.nan, 1e-30, 3e38]


def _arrays():
    yield np.array([True, False, True])
    for dt in (np.uint8, np.int8, np.int16, np.int32, np.int64):
        info = np.iinfo(dt)
        yield np.array([info.min, -1 if info.min else 0, 0, 1, info.max], dt)
    yield np.array(SPECIAL, np.float32)
    yield np.array(SPECIAL, np.float64)
    yield np.array(SPECIAL, np.float32).astype(ml_dtypes.bfloat16)
    yield np.array([1 + 2j, -0.0 - np.inf * 1j, np.nan], np.complex64)
    yield np.array([1 + 2j, -0.0 + 3e300j, np.nan], np.complex128)


@pytest.mark.parametrize("array", list(_arrays()), ids=lambda a: str(a.dtype))
def test_round_trip_is_exact_for_every_dtype(ocl, array):
    t = ow.tensor(array).to("opencl")
    assert t.device.type == "opencl"
    back = t.numpy(force=True)
    assert back.dtype == array.dtype
    assert back.tobytes() == array.tobytes()


def test_views_read_back_with_their_strides_and_offsets(ocl):
    x = np.arange(60, dtype=np.int32).reshape(3, 4, 5)
    t = ow.tensor(x).to("opencl")
    np.testing.assert_array_equal(t.transpose(0, 2).numpy(force=True), x.transpose(2, 1, 0))
    np.testing.assert_array_equal(t[1:, ::2, 3].numpy(force=True), x[1:, ::2, 3])
    np.testing.assert_array_equal(t.flip(1).numpy(force=True), x[:, ::-1])


def test_allocator_reuses_blocks_and_returns_to_baseline(ocl):
    ocl.synchronize()
    base = ocl.memory_stats()["allocated"]
    a = ow.ones(1000, device="opencl")
    after = ocl.memory_stats()
    assert after["allocated"] >= base + 4000
    assert after["peak"] >= after["allocated"]
    del a
    assert ocl.memory_stats()["allocated"] == base
    reuses = ocl.memory_stats()["num_reuses"]
    b = ow.empty(1000, device="opencl")
    assert ocl.memory_stats()["num_reuses"] > reuses  # served from the cache, not the driver
    del b
    ocl.empty_cache()
    stats = ocl.memory_stats()
    assert stats["cached"] == 0 and stats["reserved"] == stats["allocated"] == base


def test_a_buffer_larger_than_the_device_allows_is_out_of_memory(ocl):
    from opweave_opencl import _runtime

    too_big = _runtime.runtime(0).max_alloc + (1 << 20)
    before = ocl.memory_stats()["allocated"]
    with pytest.raises(ow.OutOfMemoryError, match="opencl"):
        ow.empty(too_big, dtype=ow.uint8, device="opencl")
    assert ocl.memory_stats()["allocated"] == before


def test_a_dtype_the_device_lacks_is_a_type_error_naming_the_op(ocl):
    from opweave_opencl import BACKEND

    missing = [d for d in (ow.float16, ow.float64) if d not in BACKEND.dtypes]
    if not missing:
        pytest.skip("this device has every dtype")
    with pytest.raises(TypeError, match=f"prims::full.*{missing[0].name}"):
        ow.ones(3, dtype=missing[0], device="opencl")
    x = ow.ones(3, device="opencl")
    with pytest.raises(TypeError, match=missing[0].name):
        x.to(missing[0])


def _python(code: str, **env) -> str:
    result = subprocess.run(
        [sys.executable, "-W", "ignore", "-c", code],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        check=True,
    )
    return result.stdout


def test_a_device_index_out_of_range_makes_the_backend_unavailable_with_the_reason(ocl):
    out = _python(
        "import opweave_opencl as o; print(o.is_available()); print(o.unavailable_reason())",
        OPWEAVE_OPENCL_DEVICE="99",
    )
    available, reason = out.splitlines()
    assert available == "False"
    assert "OPWEAVE_OPENCL_DEVICE" in reason


def test_programs_are_cached_on_disk(ocl, tmp_path):
    env = {"POCL_CACHE_DIR": str(tmp_path / "pocl"), "XDG_CACHE_HOME": str(tmp_path / "xdg")}
    code = "import opweave as ow; print(ow.full((5,), 3.0, device='opencl').numpy(force=True).sum())"
    assert _python(code, **env).strip() == "15.0"
    assert any((tmp_path / "pocl").rglob("*")) or any((tmp_path / "xdg").rglob("*"))
    assert _python(code, **env).strip() == "15.0"  # the second process builds from the cache


def test_allocating_beyond_device_memory_releases_the_cache_then_raises(ocl, monkeypatch):
    """Past the device's memory the cache goes first; what still does not fit is OutOfMemoryError, and the device
    keeps working. (The device's memory is narrowed to 64 MiB above what is live: a real one is gigabytes.)"""
    import gc

    from opweave_opencl import _runtime

    mib = 1 << 20
    gc.collect()
    ocl.empty_cache()
    base = ocl.memory_stats()["allocated"]
    monkeypatch.setattr(type(_runtime.runtime(0)), "global_mem", property(lambda self: base + 64 * mib))
    held = ow.empty(16 * mib, dtype=ow.uint8, device="opencl")
    cached = ow.empty(32 * mib, dtype=ow.uint8, device="opencl")
    del cached
    gc.collect()
    assert ocl.memory_stats()["cached"] == 32 * mib
    fits = ow.empty(40 * mib, dtype=ow.uint8, device="opencl")  # 16 + 40 live fit once the 32 cached are released
    assert ocl.memory_stats()["cached"] == 0
    del fits
    gc.collect()
    with pytest.raises(ow.OutOfMemoryError, match="out of memory.*cache released"):
        ow.empty(60 * mib, dtype=ow.uint8, device="opencl")  # 16 + 60 > 64 even without a cache
    stats = ocl.memory_stats()
    assert stats["cached"] == 0 and stats["allocated"] == base + 16 * mib
    x = ow.arange(1000, device="opencl")
    assert (x * 2).sum().item() == 999000
    del held
