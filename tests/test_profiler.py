"""The profiler: events of a small program (counts, nesting, self time, memory, shapes, stacks) and the table.

To know the exact events, the canonical ``add.Tensor`` and ``mul.Tensor`` get CPU kernels
inside the tests (``registered``) whose calls are written out here:
``add.Tensor -> [mul.Tensor -> prims::mul, prims::add]``.
"""

from __future__ import annotations

import json
import re
import threading

import numpy as np
import opweave
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from opweave import ops
from opweave.dispatch import Layer, layer_bit, registered
from opweave.profiler import profile

PYTHON = layer_bit(Layer.Python)


def _mul(self, other):
    """mul.Tensor for same-shape float tensors: one prims::mul."""
    return ops.prims.mul(self, other)


def _add(self, other, alpha=1):
    """add.Tensor computing ``self * other + other`` (two nested calls, one of them nested again)."""
    return ops.prims.add(ops.mul.Tensor(self, other), other)


@pytest.fixture
def scripted():
    """add.Tensor and mul.Tensor with the CPU kernels above."""
    opweave.backends.get("cpu")  # load the CPU plugin first, or its registration would replace ours
    with registered(ops.mul.Tensor, _mul, backend="cpu"), registered(ops.add.Tensor, _add, backend="cpu"):
        yield


def _thread_included():
    from opweave import _state

    return _state.local().included


def program(x, y):
    """3 x add.Tensor (each: mul.Tensor -> prims::mul, then prims::add), 2 x prims::sub, 1 x prims::transpose."""
    z = x + y
    z = z + y
    z = opweave.ops.add.Tensor(z, x)
    d = ops.prims.sub(z, x)
    d = ops.prims.sub(d, y)
    return ops.prims.transpose(d, [1, 0])


def _inputs(shape=(3, 4)):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape).astype(np.float32)
    y = rng.standard_normal(shape).astype(np.float32)
    return x, y


def test_events_of_a_small_program_are_counted_exactly(scripted):
    x, y = _inputs()
    with profile() as prof:
        out = program(opweave.from_numpy(x), opweave.from_numpy(y))
    z = ((x * y + y) * y + y) * x + x
    np.testing.assert_allclose(out.numpy(), (z - x - y).T, rtol=1e-5)
    events = prof.events()
    one_add = [("add.Tensor", 0), ("mul.Tensor", 1), ("prims::mul", 2), ("prims::add", 1)]
    expected = one_add * 3 + [("prims::sub", 0), ("prims::sub", 0), ("prims::transpose", 0)]
    assert [(e.name, e.depth) for e in events] == expected
    assert all(e.device == "cpu" for e in events)
    counts = {a.key: a.count for a in prof.key_averages()}
    assert counts == {
        "add.Tensor": 3,
        "mul.Tensor": 3,
        "prims::mul": 3,
        "prims::add": 3,
        "prims::sub": 2,
        "prims::transpose": 1,
    }


def _children(events, i):
    """Indices of the events directly nested in event ``i`` (from the recorded order and depths)."""
    found, depth = [], events[i].depth
    for j in range(i + 1, len(events)):
        if events[j].depth <= depth:
            break
        if events[j].depth == depth + 1:
            found.append(j)
    return found


def test_self_time_is_total_minus_nested_events(scripted):
    x, y = _inputs()
    with profile() as prof:
        program(opweave.from_numpy(x), opweave.from_numpy(y))
    events = prof.events()
    for i, e in enumerate(events):
        kids = _children(events, i)
        assert e.self_cpu_time_total_ns == e.cpu_time_total_ns - sum(events[k].cpu_time_total_ns for k in kids)
        assert e.self_cpu_time_total_ns >= 0
        for k in kids:
            assert e.start_ns <= events[k].start_ns <= events[k].end_ns <= e.end_ns
        assert e.cpu_time_total == pytest.approx(e.cpu_time_total_ns / 1000)
    averages = {a.key: a for a in prof.key_averages()}
    for key, avg in averages.items():
        mine = [e for e in events if e.name == key]
        assert avg.cpu_time_total_ns == sum(e.cpu_time_total_ns for e in mine)
        assert avg.self_cpu_time_total_ns == sum(e.self_cpu_time_total_ns for e in mine)
        assert avg.cpu_time == pytest.approx(avg.cpu_time_total / len(mine))


@settings(max_examples=20, deadline=None)
@given(
    shape=st.lists(st.integers(0, 5), min_size=0, max_size=3).map(tuple),
    dtype=st.sampled_from([opweave.float32, opweave.float64, opweave.int16, opweave.bool]),
)
def test_memory_is_the_bytes_of_new_outputs(shape, dtype):
    x = opweave.ones(shape, dtype=dtype)
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    with profile(profile_memory=True) as prof:
        made = opweave.zeros(shape, dtype=dtype)  # zeros -> prims::full
        summed = ops.prims.add(x, made) if dtype is not opweave.bool else ops.prims.bitwise_or(x, made)
        ops.prims.copy_to(made, summed)  # in place: writes into an input's storage
        ops.prims.view_of(made)  # a view: shares the input's storage
    events = prof.events()
    assert [e.depth for e in events] == [0, 1, 0, 0, 0]
    assert [e.cpu_memory_usage for e in events] == [nbytes, nbytes, nbytes, 0, 0]
    assert [e.self_cpu_memory_usage for e in events] == [0, nbytes, nbytes, 0, 0]
    assert summed.numel() * summed.dtype.itemsize == nbytes


def test_memory_is_not_recorded_without_profile_memory():
    with profile() as prof:
        opweave.zeros(10)
    assert [e.cpu_memory_usage for e in prof.events()] == [0, 0]
    assert "CPU Mem" not in prof.key_averages().table()


def test_meta_outputs_allocate_nothing():
    with profile(profile_memory=True) as prof:
        ops.prims.full([1000], 1.0, dtype=opweave.float32, device="meta")
    assert [(e.name, e.device, e.cpu_memory_usage) for e in prof.events()] == [("prims::full", "meta", 0)]


def test_input_shapes_are_recorded_per_argument():
    x, y = opweave.ones(2, 3), opweave.ones(1, 3)
    with profile(record_shapes=True) as prof:
        ops.prims.add(x, x)
        opweave.cat([x, y], 0)
        ops.prims.mul(x, x)
    events = prof.events()
    assert [(e.name, e.depth) for e in events][:2] == [("prims::add", 0), ("cat", 0)]
    top = [e.input_shapes for e in events if e.depth == 0]
    assert top == [[[2, 3], [2, 3]], [[[2, 3], [1, 3]], []], [[2, 3], [2, 3]]]
    with profile() as unrecorded:
        ops.prims.add(x, x)
    assert unrecorded.events()[0].input_shapes is None


def test_grouping_by_input_shape():
    a, b = opweave.ones(2, 2), opweave.ones(5)
    with profile(record_shapes=True) as prof:
        for _ in range(3):
            ops.prims.sin(a)
        ops.prims.sin(b)
    grouped = {(r.key, str(r.input_shapes)): r.count for r in prof.key_averages(group_by_input_shape=True)}
    assert grouped == {("prims::sin", "[[2, 2]]"): 3, ("prims::sin", "[[5]]"): 1}
    assert {r.key: r.count for r in prof.key_averages()} == {"prims::sin": 4}
    table = prof.key_averages(group_by_input_shape=True).table(sort_by="count")
    rows = [line for line in table.splitlines() if line.startswith("prims::sin")]
    assert re.search(r"\s3\s+\[\[2, 2\]\]\s*$", rows[0]) and re.search(r"\s1\s+\[\[5\]\]\s*$", rows[1])


def test_stack_lists_user_frames_only():
    x = opweave.ones(2)
    with profile(with_stack=True) as prof:
        x + x  # noqa: B018
    for e in prof.events():
        assert e.stack, e.name
        assert "test_stack_lists_user_frames_only" in e.stack[-1]
        assert not any("/core/" in frame or "opweave_cpu" in frame or "<opweave op" in frame for frame in e.stack)
    with profile() as plain:
        x + x  # noqa: B018
    assert all(e.stack is None for e in plain.events())


def test_recording_stops_on_exit_also_after_an_exception():
    x = opweave.ones(3)
    saved = _thread_included()
    y = opweave.ones(4)
    with pytest.raises(ValueError):
        with profile() as prof:
            ops.prims.sin(x)
            ops.prims.add(x, y)  # shape mismatch: raises inside the op
    assert [e.name for e in prof.events()] == ["prims::sin", "prims::add"], "a failing call is still an event"
    assert _thread_included() == saved and not _thread_included() & PYTHON
    ops.prims.sin(x)
    assert len(prof.events()) == 2, "nothing is recorded after the block"


def test_profiles_nest_and_restore():
    x = opweave.ones(3)
    with profile() as outer:
        ops.prims.sin(x)
        with profile() as inner:
            ops.prims.cos(x)
        assert _thread_included() & PYTHON, "the outer profile is still recording"
        ops.prims.tan(x)
    assert not _thread_included() & PYTHON
    assert [e.name for e in outer.events()] == ["prims::sin", "prims::cos", "prims::tan"]
    assert [e.name for e in inner.events()] == ["prims::cos"]
    with pytest.raises(RuntimeError, match="not reentrant"):
        with outer:
            with outer:
                pass
    assert not _thread_included() & PYTHON


def test_other_threads_are_not_recorded():
    x = opweave.ones(3)
    ready, done = threading.Event(), threading.Event()

    def worker():
        ready.wait(10)
        for _ in range(5):
            ops.prims.cos(x)
        done.set()

    thread = threading.Thread(target=worker)
    thread.start()
    with profile() as prof:
        ready.set()
        done.wait(10)
        ops.prims.sin(x)
    thread.join()
    assert [e.name for e in prof.events()] == ["prims::sin"]


def test_table_renders_expected_rows_and_columns(scripted):
    x, y = _inputs()
    with profile(profile_memory=True) as prof:
        program(opweave.from_numpy(x), opweave.from_numpy(y))
    table = prof.key_averages().table(sort_by="count", row_limit=3)
    lines = table.splitlines()
    header = lines[1]
    for column in ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg", "CPU Mem"]:
        assert column in header
    assert header.split()[-3:] == ["#", "of", "Calls"]
    assert lines[0] == lines[2] == lines[-2] and set(lines[0]) == {"-", " "}
    rows = lines[3:-2]
    assert len(rows) == 3, "row_limit"
    assert all(row.split()[-1] == "3" for row in rows), "sorted by count: the three-call ops first"
    assert {row.split()[0] for row in rows} <= {"add.Tensor", "mul.Tensor", "prims::mul", "prims::add"}
    assert re.fullmatch(r"Self CPU time total: \d+\.\d{3}(us|ms|s)", lines[-1])
    full = prof.key_averages().table(sort_by="self_cpu_time_total")
    names = [line.split()[0] for line in full.splitlines()[3:-2]]
    assert sorted(names) == ["add.Tensor", "mul.Tensor", "prims::add", "prims::mul", "prims::sub", "prims::transpose"]
    selfs = {a.key: a.self_cpu_time_total_ns for a in prof.key_averages()}
    assert [selfs[n] for n in names] == sorted(selfs.values(), reverse=True)
    mem = prof.key_averages().table(sort_by="cpu_memory_usage")
    first = mem.splitlines()[3].split()
    assert first[0] in {"add.Tensor", "mul.Tensor", "prims::mul", "prims::add"} and "144 b" in mem


def test_table_rejects_unknown_sort_keys():
    with profile() as prof:
        opweave.ones(1)
    with pytest.raises(ValueError, match="unknown sort_by 'speed'"):
        prof.key_averages().table(sort_by="speed")


def test_results_need_a_finished_run():
    with pytest.raises(RuntimeError, match="has not run"):
        profile().events()


def test_chrome_trace(tmp_path, scripted):
    x, y = _inputs()
    with profile(record_shapes=True) as prof:
        program(opweave.from_numpy(x), opweave.from_numpy(y))
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    trace = json.loads(path.read_text())["traceEvents"]
    assert [t["name"] for t in trace] == [e.name for e in prof.events()]
    assert all(t["ph"] == "X" and t["dur"] >= 0 for t in trace)


def test_profiling_does_not_change_results():
    x, y = _inputs((4, 5))
    a, b = opweave.from_numpy(x), opweave.from_numpy(y)
    plain = ((a * b).sum(1) + a.exp().mean()).numpy()
    with profile(profile_memory=True, record_shapes=True, with_stack=True):
        profiled = ((a * b).sum(1) + a.exp().mean()).numpy()
    assert plain.tobytes() == profiled.tobytes()
