"""The profiler with CUDA event timing and device memory (on a GPU; skipped without one), and the timer's
driver calls against a fake driver (everywhere)."""

from __future__ import annotations

import numpy as np
import opweave as ow
import pytest
from opweave.profiler import ProfilerActivity, profile

GPU = ow.cuda.is_available()
on_gpu = pytest.mark.skipif(not GPU, reason=f"no CUDA device: {ow.cuda.unavailable_reason()}")


class _FakeDriver:
    """``_driver.call`` stand-in: events are counters, each elapsed time 0.25 ms; calls are recorded."""

    def __init__(self):
        self.calls, self.created = [], 0

    def __call__(self, name, *args):
        self.calls.append((name, *args))
        if name == "cuEventCreate":
            self.created += 1
            return 100 + self.created
        if name == "cuEventElapsedTime":
            return 0.25
        return None


class _Runtime:
    index = 1
    entered = 0

    def enter(self):
        self.entered += 1


def test_the_event_timer_records_on_the_current_stream_and_reuses_resolved_events(monkeypatch):
    from opweave_cuda import _driver, _profiler_timer, _streams

    fake = _FakeDriver()
    monkeypatch.setattr(_driver, "call", fake)
    monkeypatch.setattr(_streams, "current_handle", lambda index: 0xABC0 + index)
    timer = _profiler_timer.EventTimer(_Runtime())
    start, end = timer.record(), timer.record()
    assert (start, end) == (101, 102)
    assert fake.calls == [
        ("cuEventCreate", 0),
        ("cuEventRecord", 101, 0xABC1),
        ("cuEventCreate", 0),
        ("cuEventRecord", 102, 0xABC1),
    ]
    fake.calls.clear()
    assert timer.elapsed_ns(start, end) == 250_000
    assert fake.calls == [("cuEventSynchronize", 102), ("cuEventElapsedTime", 101, 102)]
    fake.calls.clear()
    assert {timer.record(), timer.record()} == {101, 102} and fake.created == 2, "resolved events are reused"
    assert [c[0] for c in fake.calls] == ["cuEventRecord", "cuEventRecord"]


@on_gpu
def test_ops_on_cuda_get_event_times_and_device_memory():
    a = np.random.default_rng(0).standard_normal((2048, 2048)).astype(np.float32)
    x = ow.tensor(a, device="cuda")
    ow.cuda.synchronize()
    with profile(profile_memory=True, activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        y = (x * x).sum()
    assert y.item() == pytest.approx(float((a.astype(np.float64) ** 2).sum()), rel=1e-4)
    events = prof.events()
    mul = next(e for e in events if e.name == "mul.Tensor")
    assert mul.device.startswith("cuda") and mul.device_time_total > 0.0
    assert mul.device_memory_usage == 4 * a.size, "its result (alive when the op returns)"
    top = [e for e in events if e.depth == 0 and e.device.startswith("cuda")]
    assert all(e.device_time_total_ns >= e.self_device_time_total_ns for e in top)
    table = prof.key_averages().table(sort_by="cuda_time_total")
    assert "Self CUDA" in table and "CUDA total" in table and "Self CUDA time total:" in table
    assert "Device Mem" in table


@on_gpu
def test_without_the_cuda_activity_nothing_is_timed():
    x = ow.ones(1024, device="cuda")
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        x + x
    assert all(e.device_time_total_ns == 0 for e in prof.events()) and "CUDA" not in prof.table()


def test_the_event_timer_destroys_events_beyond_its_free_list(monkeypatch):
    from opweave_cuda import _driver, _profiler_timer, _streams

    fake = _FakeDriver()
    monkeypatch.setattr(_driver, "call", fake)
    monkeypatch.setattr(_streams, "current_handle", lambda index: 0)
    monkeypatch.setattr(_profiler_timer, "KEEP", 1)
    timer = _profiler_timer.EventTimer(_Runtime())
    start, end = timer.record(), timer.record()
    fake.calls.clear()
    timer.elapsed_ns(start, end)
    assert fake.calls[-1] == ("cuEventDestroy", end), "the free list holds one: the second event is destroyed"
    assert timer.record() == start
