"""Threads and long runs: thread-local modes do not leak between threads, and loops leave the allocators at baseline.

Eight threads run the same mixed work (matmul, softmax, reductions, scans, sort, seeded random numbers), each under
its own mode (autocast, deterministic algorithms, a default device); every thread's results must equal, bit for bit,
what the same work gives run alone. The default dtype is process-wide, as in PyTorch (``torch.set_default_dtype``),
so it is set before the threads start and every thread must see it. Long loops on the CPU and OpenCL must leave the
live storages (allocation observers) and the OpenCL caching allocator's ``allocated`` bytes where they started.
"""

from __future__ import annotations

import contextlib
import gc
import threading
import weakref

import numpy as np
import opweave as ow
import pytest
from opweave import backends

AVAILABLE = {s.name for s in ow.backends.status() if s.available}
DEVICES = ["cpu"] + [d for d in ("vnpu", "opencl") if d in AVAILABLE]


def _work(device: str, seed: int) -> list[bytes]:
    """A fixed mix of ops on ``device`` under whatever modes the caller set; the results' bytes and dtypes."""
    x = ow.tensor(np.random.default_rng(seed).standard_normal((16, 24)), dtype=ow.float32).to(device)
    noise = ow.rand(8, generator=ow.Generator("cpu").manual_seed(seed), device="cpu")  # a thread's own generator
    w = ow.arange(24 * 8, device=device).reshape(24, 8).to(x.dtype) / 100
    y = (x @ w).softmax(-1)
    s = y.sum(0)
    c = ow.cumsum(x, 1)
    v, i = ow.sort(x[0])
    ints = ow.arange(1000, device=device) * 7 % 13
    floats = ow.arange(10.0, device=device) / 3  # in the default dtype
    out = [y, s, c, v, i, ints.sum(), ints.to(ow.float64).mean(), noise, floats]
    return [(str(t.dtype), np.ascontiguousarray(t.to("cpu").numpy()).tobytes()) for t in out]


def _modes():
    """(name, context factory, device) for each thread: the thread-local modes, one each and combined."""
    cases = [
        ("plain", contextlib.nullcontext, "cpu"),
        ("autocast", lambda: ow.autocast("cpu", dtype=ow.bfloat16), "cpu"),
        ("deterministic", lambda: _deterministic(), "cpu"),
        ("autocast+deterministic", lambda: _both(), "cpu"),
    ]
    for d in DEVICES[1:]:
        cases.append((f"default device {d}", lambda d=d: ow.device(d), d))
    while len(cases) < 8:
        cases.append((f"plain #{len(cases)}", contextlib.nullcontext, "cpu"))
    return cases[:8]


@contextlib.contextmanager
def _deterministic():
    saved = ow.are_deterministic_algorithms_enabled()
    ow.use_deterministic_algorithms(True)
    try:
        yield
    finally:
        ow.use_deterministic_algorithms(saved)


@contextlib.contextmanager
def _both():
    with ow.autocast("cpu", dtype=ow.bfloat16), _deterministic():
        yield


def _run(case, seed):
    name, mode, device = case
    with mode():
        return _work(device, seed)


def test_eight_threads_with_their_own_modes_match_serial_runs(restore_default_dtype):
    ow.set_default_dtype(ow.float64)  # process-wide: every thread computes its randn and arange in float64
    cases = _modes()
    serial = [_run(case, seed) for seed, case in enumerate(cases)]
    assert not ow.are_deterministic_algorithms_enabled() and not ow.is_autocast_enabled("cpu")
    results: dict = {}
    errors: list = []
    barrier = threading.Barrier(len(cases))

    def worker(k):
        try:
            barrier.wait()
            results[k] = [_run(cases[k], k) for _ in range(3)]
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append((cases[k][0], exc))

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(len(cases))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    for k, case in enumerate(cases):
        for rep in results[k]:
            assert rep == serial[k], f"thread {case[0]!r} differs from its serial run"
    # the modes really differ (autocast runs the matmul in bfloat16), so equal results are no accident
    assert serial[1][0] != serial[0][0]
    assert serial[0][-1][0] == "opweave.float64"


def _live_storages():
    """A counter of the storages constructed and still alive, through the public allocation observers."""
    alive = weakref.WeakSet()
    return alive, alive.add


@pytest.mark.parametrize("device", [d for d in DEVICES if d != "vnpu"])
def test_ten_thousand_iterations_leave_the_allocator_at_baseline(device):
    alive, observer = _live_storages()
    a = ow.ones(64, device=device)
    b = ow.arange(64, dtype=ow.float32, device=device)

    def stats():
        return backends.memory_stats(device).get("allocated", 0)

    for _ in range(50):  # warm up: kernels compiled, caches filled
        (a * b + 1).sum()
    gc.collect()
    base = stats()
    backends.add_allocation_observer(observer)
    try:
        for i in range(10_000):
            c = (a * b + i).sum()
            d = ow.where(b > 3, a, b)[::2]
        del c, d
        gc.collect()
        assert len(alive) == 0, f"{len(alive)} storages made in the loop are still alive"
    finally:
        backends.remove_allocation_observer(observer)
    assert stats() == base
