"""The profiler: events of a small program (counts, nesting, self time, memory, shapes, stacks) and the table.

Memory is checked allocation by allocation (storages seen through the core's allocation hook,
frees through their finalizers, peaks), ``record_function`` labels nest around the ops they
enclose, and a small MLP's table and Chrome trace are checked against the calls it makes.

To know the exact events, the canonical ``add.Tensor`` and ``mul.Tensor`` get CPU kernels
inside the tests (``registered``) whose calls are written out here:
``add.Tensor -> [mul.Tensor -> prims::mul, prims::add]``.
"""

from __future__ import annotations

import collections
import json
import os
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
        made = opweave.full(shape, 0, dtype=dtype)  # full -> prims::full (zeros has a direct CPU kernel)
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
        opweave.full((10,), 0.0)  # full and its prims::full
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
        core = os.path.dirname(os.path.abspath(opweave.__file__)) + os.sep  # not "/core/": a checkout may be named so
        assert not any(core in frame or "opweave_cpu" in frame or "<opweave op" in frame for frame in e.stack)
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
    # With profile_memory, storages constructed or dropped outside any op are "[memory]" records, as in
    # PyTorch: the two from_numpy inputs (constructed, and dropped after the call: 4 records, net 0 bytes) and
    # 5 frees of 48 bytes (z and d rebound, program()'s locals at its return). With 9 records it sorts first.
    assert rows[0].split()[0] == "[memory]" and rows[0].split()[-1] == "9" and "-240 b" in rows[0]
    assert all(row.split()[-1] == "3" for row in rows[1:]), "sorted by count: the three-call ops next"
    assert {row.split()[0] for row in rows[1:]} <= {"add.Tensor", "mul.Tensor", "prims::mul", "prims::add"}
    assert re.fullmatch(r"Self CPU time total: \d+\.\d{3}(us|ms|s)", lines[-1])
    full = prof.key_averages().table(sort_by="self_cpu_time_total")
    names = [line.split()[0] for line in full.splitlines()[3:-2]]
    assert sorted(names) == [
        "[memory]",
        *("add.Tensor", "mul.Tensor", "prims::add", "prims::mul", "prims::sub", "prims::transpose"),
    ]
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


# -- memory through the allocation hook -------------------------------------------------------


def test_memory_allocated_freed_and_peak_per_event(scripted):
    """Every storage of ``program`` (3 x 4 float32: n = 48 bytes) is tracked from construction to death.

    Each add.Tensor allocates its mul.Tensor temporary (in prims::mul) and its output (in
    prims::add); the temporary dies inside add.Tensor, after prims::add returned, so it is
    add.Tensor's own free. Storages dropped between ops (z and d rebound, program()'s
    locals at its return) are "[memory]" records. Peaks count the storages made in the
    block (the inputs were made before it).
    """
    x, y = _inputs()
    a, b = opweave.from_numpy(x), opweave.from_numpy(y)
    with profile(profile_memory=True) as prof:
        program(a, b)
    n = 48
    # (name, depth, allocated, freed, cpu_memory_usage, self_cpu_memory_usage, peak_memory_usage)
    first_add = [
        ("add.Tensor", 0, 2 * n, n, n, -n, 2 * n),
        ("mul.Tensor", 1, n, 0, n, 0, n),
        ("prims::mul", 2, n, 0, n, n, n),
        ("prims::add", 1, n, 0, n, n, 2 * n),
    ]
    later_add = [  # one earlier result (z) is alive throughout
        ("add.Tensor", 0, 2 * n, n, n, -n, 3 * n),
        ("mul.Tensor", 1, n, 0, n, 0, 2 * n),
        ("prims::mul", 2, n, 0, n, n, 2 * n),
        ("prims::add", 1, n, 0, n, n, 3 * n),
    ]
    freed = [("[memory]", 0, 0, n, -n, -n)]  # the peak of a [memory] record: what is alive right after it
    expected = [
        *first_add,
        *later_add,
        (*freed[0], n),  # z = z + y dropped the first z
        *later_add,
        (*freed[0], n),
        ("prims::sub", 0, n, 0, n, n, 2 * n),
        ("prims::sub", 0, n, 0, n, n, 3 * n),
        (*freed[0], 2 * n),  # d rebound
        ("prims::transpose", 0, 0, 0, 0, 0, 2 * n),  # a view: no storage
        (*freed[0], n),  # program() returns: its locals die
        (*freed[0], 0),  # the returned view is dropped: the last storage dies
    ]
    got = [
        (e.name, e.depth, e.allocated_bytes, e.freed_bytes, e.cpu_memory_usage, e.self_cpu_memory_usage)
        + (e.peak_memory_usage,)
        for e in prof.events()
    ]
    assert got == expected
    assert all(e.self_allocated_bytes - e.self_freed_bytes == e.self_cpu_memory_usage for e in prof.events())
    assert all(e.device_memory_usage == 0 for e in prof.events())
    assert prof.peak_memory() == prof.peak_memory("cpu") == prof.peak_memory(opweave.device("cpu")) == 3 * n
    assert prof.peak_memory("meta") == 0
    averages = {a.key: a for a in prof.key_averages()}
    assert averages["add.Tensor"].cpu_memory_usage == 3 * n and averages["add.Tensor"].self_cpu_memory_usage == -3 * n
    assert averages["add.Tensor"].peak_memory_usage == 3 * n
    assert averages["[memory]"].count == 5 and averages["[memory]"].cpu_memory_usage == -5 * n


def test_allocation_hook_is_installed_only_while_a_memory_profile_runs():
    from opweave import _hooks
    from opweave.backends import Storage

    plain, plain_storage = Storage.__init__, opweave.Tensor.__dict__["_storage"]
    with profile():
        assert _hooks.observers == (), "a profile without profile_memory installs nothing"
    with pytest.raises(KeyError):
        with profile(profile_memory=True):
            assert len(_hooks.observers) == 1
            with profile(profile_memory=True):
                assert len(_hooks.observers) == 1, "one observer serves every memory profile"
            raise KeyError("leaving by an exception")
    assert _hooks.observers == ()
    assert Storage.__init__ is plain and opweave.Tensor.__dict__["_storage"] is plain_storage, "nothing is swapped"
    with pytest.raises(ValueError, match="not installed"):
        _hooks.remove_allocation_observer(print)


def test_results_whose_storage_is_made_lazily_are_charged_to_their_op():
    """The CPU's same-shape float32 add.Tensor kernel gives its result no Storage until one is asked for.

    Inside a memory profile such a result's storage is made when its op returns (and charged to
    it); a tensor made before the profile and first asked for its storage in it is not an allocation.
    """
    a, b = opweave.ones(3, 4), opweave.ones(3, 4)
    before = a + b
    assert before._st is None, "the CPU kernel this test relies on makes its results lazily"
    n = 48
    with profile(profile_memory=True) as prof:
        c = a + b
        ops.prims.view_of(before)  # asks for before's storage: made now, but not allocated now
        d = c + c
        d += c  # add_.Tensor: the CPU's direct in-place kernel, no temporary
        del c
    got = [(e.name, e.depth, e.allocated_bytes, e.freed_bytes, e.self_cpu_memory_usage) for e in prof.events()]
    assert got == [
        ("add.Tensor", 0, n, 0, n),
        ("prims::view_of", 0, 0, 0, 0),
        ("add.Tensor", 0, n, 0, n),
        ("add_.Tensor", 0, 0, 0, 0),
        ("[memory]", 0, 0, n, -n),
    ]
    assert prof.peak_memory() == 2 * n
    assert d._st is not None and before._st is not None
    np.testing.assert_array_equal(d.numpy(), np.full((3, 4), 6, np.float32))
    with profile() as plain:
        e = a + b
    assert e._st is None and len(plain.events()) == 1, "without profile_memory results stay lazy"


def test_every_backends_storages_are_seen_and_device_memory_has_its_columns():
    """Storages constructed directly (as any backend's allocate does), on a device that is not the CPU."""
    from opweave.backends import Storage

    dev = opweave.device("memdev")
    with profile(profile_memory=True) as prof:
        kept = Storage(bytearray(1000), 1000, dev, None)
        Storage(bytearray(3000), 3000, dev, None)  # dies at once
        Storage(None, 5000, opweave.device("meta"), None)  # meta has no memory: not counted
        ops.prims.full([10], 1.0, dtype=opweave.float64, device="cpu")  # 80 bytes, dropped after the call
    events = prof.events()
    got = [(e.name, e.device, e.self_allocated_bytes, e.self_freed_bytes, e.peak_memory_usage) for e in events]
    assert got == [
        ("[memory]", "memdev", 1000, 0, 1000),
        ("[memory]", "memdev", 3000, 0, 4000),
        ("[memory]", "memdev", 0, 3000, 1000),
        ("prims::full", "cpu", 80, 0, 1080),
        ("[memory]", "cpu", 0, 80, 1000),
    ]
    assert [e.device_memory_usage for e in events] == [1000, 3000, -3000, 0, 0]
    assert [e.cpu_memory_usage for e in events] == [0, 0, 0, 80, -80]
    assert prof.peak_memory() == 4000 and prof.peak_memory("memdev") == 4000 and prof.peak_memory("cpu") == 80
    table = prof.key_averages().table()
    assert "Device Mem" in table and "Self Device Mem" in table
    memory_row = next(line for line in table.splitlines() if line.startswith("[memory]"))
    assert "1000 b" in memory_row and "-80 b" in memory_row
    del kept  # after the block: not recorded
    assert len(prof.events()) == 5
    assert "Device Mem" not in _program_table_on_cpu()


def _program_table_on_cpu():
    with profile(profile_memory=True) as prof:
        kept = ops.prims.add(opweave.ones(2), opweave.ones(2))
    assert kept.numel() == 2
    return prof.key_averages().table()


def test_frees_after_the_block_or_in_other_threads():
    with profile(profile_memory=True) as prof:
        kept = opweave.zeros(4)  # 16 bytes, alive after the block
        other = opweave.zeros(8)  # 32 bytes, dropped by another thread

        def drop():
            nonlocal other
            other = None

        thread = threading.Thread(target=drop)
        thread.start()
        thread.join()
    frees = [e for e in prof.events() if e.kind == "memory"]
    assert [(e.self_freed_bytes, e.thread) for e in frees] == [(32, thread.ident)]
    assert prof._recorder.finalizers == {}, "watchers of the storages still alive are detached at exit"
    del kept
    assert len([e for e in prof.events() if e.kind == "memory"]) == 1
    with profile() as plain:
        opweave.zeros(4)
    with pytest.raises(RuntimeError, match="without profile_memory"):
        plain.peak_memory()
    with pytest.raises(TypeError, match="device must be"):
        prof.peak_memory(0)


# -- record_function --------------------------------------------------------------------------


def test_record_function_encloses_the_ops_called_inside():
    from opweave.profiler import record_function

    x = opweave.ones(3)  # 12 bytes per float32 result
    with profile(profile_memory=True, record_shapes=True) as prof:
        with record_function("block", "some args"):
            a = ops.prims.sin(x)
            with record_function("inner"):
                b = ops.prims.cos(a)
            del a
        ops.prims.tan(b)
    events = prof.events()
    assert [(e.name, e.kind, e.depth) for e in events] == [
        ("block", "user_annotation", 0),
        ("prims::sin", "op", 1),
        ("inner", "user_annotation", 1),
        ("prims::cos", "op", 2),
        ("prims::tan", "op", 0),
        ("[memory]", "memory", 0),  # tan's result is dropped at once
    ]
    block, sin, inner, cos, tan, _ = events
    assert block.self_cpu_time_total_ns == block.cpu_time_total_ns - sin.cpu_time_total_ns - inner.cpu_time_total_ns
    assert inner.self_cpu_time_total_ns == inner.cpu_time_total_ns - cos.cpu_time_total_ns
    assert all(e.self_cpu_time_total_ns >= 0 for e in events)
    assert block.start_ns <= sin.start_ns <= sin.end_ns <= inner.start_ns <= cos.start_ns
    assert cos.end_ns <= inner.end_ns <= block.end_ns <= tan.start_ns
    assert (block.allocated_bytes, block.freed_bytes, block.cpu_memory_usage, block.self_cpu_memory_usage) == (
        24,
        12,
        12,
        -12,  # the free of a (del a) happens in the block, outside its ops
    )
    assert block.input_shapes == [] and block.device == ""
    averages = {a.key: a.count for a in prof.key_averages()}
    assert averages == {"block": 1, "inner": 1, "prims::sin": 1, "prims::cos": 1, "prims::tan": 1, "[memory]": 1}


def test_record_function_as_decorator_reused_object_errors_and_no_profile():
    from opweave.profiler import record_function

    @record_function("step")
    def step(t):
        """One step."""
        return ops.prims.sin(t)

    label = record_function("twice")
    x, y = opweave.ones(2), opweave.ones(3)
    with profile() as prof:
        step(x)
        with label:
            with label:  # the same object nests
                step(x)
        with pytest.raises(ValueError):
            with record_function("failing"):
                ops.prims.add(x, y)  # shapes do not match
        ops.prims.cos(x)
    assert [(e.name, e.depth) for e in prof.events()] == [
        ("step", 0),
        ("prims::sin", 1),
        ("twice", 0),
        ("twice", 1),
        ("step", 2),
        ("prims::sin", 3),
        ("failing", 0),
        ("prims::add", 1),
        ("prims::cos", 0),
    ]
    assert step.__doc__ == "One step."
    np.testing.assert_array_equal(step(x).numpy(), np.sin(np.ones(2, np.float32)))  # no profile: just runs
    with record_function("alone"):
        ops.prims.cos(x)
    with pytest.raises(TypeError, match="name must be a str"):
        record_function(3)


# -- a small MLP ------------------------------------------------------------------------------


def test_mlp_forward_table_and_chrome_trace(tmp_path):
    """x @ W1 + b1 -> relu -> @ W2 + b2 -> softmax, float32 on the CPU; every intermediate is kept alive."""
    batch, d_in, hidden, d_out = 4, 8, 16, 3
    rng = np.random.default_rng(1)
    arrays = [rng.standard_normal(s).astype(np.float32) for s in [(batch, d_in), (d_in, hidden), (hidden,)]]
    arrays += [rng.standard_normal(s).astype(np.float32) for s in [(hidden, d_out), (d_out,)]]
    x, w1, b1, w2, b2 = (opweave.from_numpy(a) for a in arrays)
    with profile(profile_memory=True, record_shapes=True) as prof:
        h1 = x @ w1
        h2 = h1 + b1
        h3 = h2.relu()
        h4 = h3 @ w2
        h5 = h4 + b2
        y = h5.softmax(-1)
    xn, w1n, b1n, w2n, b2n = arrays
    logits = np.maximum(xn @ w1n + b1n, 0) @ w2n + b2n
    expected_y = np.exp(logits - logits.max(-1, keepdims=True))
    np.testing.assert_allclose(y.numpy(), expected_y / expected_y.sum(-1, keepdims=True), rtol=1e-5)

    events = prof.events()
    top = [e for e in events if e.depth == 0 and e.kind == "op"]
    assert [e.name for e in top] == ["matmul", "add.Tensor", "relu", "matmul", "add.Tensor", "softmax.int"]
    assert not [e for e in events if e.kind == "memory"], "nothing is dropped outside an op"
    assert all(e.cpu_time_total_ns > 0 and e.self_cpu_time_total_ns >= 0 for e in events)
    big, small = batch * hidden * 4, batch * d_out * 4  # float32 bytes of the hidden and the output activations
    assert [e.cpu_memory_usage for e in top] == [big, big, big, small, small, small], "the bytes of the outputs"
    assert [e.allocated_bytes - e.freed_bytes for e in top] == [big, big, big, small, small, small]
    assert [e.input_shapes[:2] for e in top] == [
        [[batch, d_in], [d_in, hidden]],
        [[batch, hidden], [hidden]],
        [[batch, hidden]],
        [[batch, hidden], [hidden, d_out]],
        [[batch, d_out], [d_out]],
        [[batch, d_out], []],
    ]
    kept = 3 * big + 3 * small
    assert prof.peak_memory() >= kept and prof.peak_memory() == max(e.peak_memory_usage for e in events)
    assert prof.peak_memory() <= sum(e.allocated_bytes for e in events if e.depth == 0)

    # the table: one row per op name, with its exact number of calls, its time and its bytes
    averages = prof.key_averages()
    calls = collections.Counter(e.name for e in events)
    assert {a.key: a.count for a in averages} == dict(calls)
    assert {k: calls[k] for k in ["matmul", "add.Tensor", "relu", "softmax.int"]} == {
        "matmul": 2,
        "add.Tensor": 2,
        "relu": 1,
        "softmax.int": 1,
    }
    table = averages.table(sort_by="cpu_time_total", row_limit=0)
    row = re.compile(
        r"^(\S+)\s+([\d.]+%)\s+(\S+)\s+([\d.]+%)\s+(\S+)\s+(\S+)\s+(-?[\d.]+ [KMG]?b)\s+(-?[\d.]+ [KMG]?b)\s+(\d+)\s*$"
    )
    rows = {m[1]: m for m in map(row.match, table.splitlines()[3:-2])}
    assert set(rows) == set(calls)
    own_bytes = {"matmul": big + small, "add.Tensor": big + small, "relu": big, "softmax.int": small}
    for name, nbytes in own_bytes.items():
        assert int(rows[name][9]) == calls[name]
        assert rows[name][7] == f"{nbytes} b"
        assert re.fullmatch(r"\d+\.\d{3}(us|ms|s)", rows[name][5]) and float(rows[name][5][:-2]) > 0

    # the Chrome trace: valid JSON, one complete event per op call
    path = tmp_path / "mlp.json"
    prof.export_chrome_trace(str(path))
    trace = json.loads(path.read_text())["traceEvents"]
    complete = [t for t in trace if t["ph"] == "X"]
    assert len(complete) == len(trace) == len(events)
    assert [t["name"] for t in complete] == [e.name for e in events]
    assert collections.Counter(t["name"] for t in complete if t["cat"] == "cpu_op") == calls
    assert all(t["dur"] > 0 and t["ts"] >= 0 and isinstance(t["tid"], int) for t in complete)
    matmuls = [t for t in complete if t["name"] == "matmul"]
    assert [t["args"]["Allocated Bytes"] for t in matmuls] == [big, small]
    assert matmuls[0]["args"]["Input Dims"] == [[batch, d_in], [d_in, hidden]]


def test_chrome_trace_marks_annotations_and_memory_records(tmp_path):
    from opweave.profiler import record_function

    with profile(profile_memory=True) as prof:
        with record_function("label", "extra"):
            ops.prims.cos(opweave.ones(2))  # the results die inside the label: its own frees
        ops.prims.sin(opweave.ones(2))  # ones: an op; its result and sin's die outside any op: [memory] records
    path = tmp_path / "t.json"
    prof.export_chrome_trace(str(path))
    trace = json.loads(path.read_text())["traceEvents"]
    kinds = [(t["name"], t["ph"], t["cat"]) for t in trace]
    ops_and_labels = [k for k in kinds if k[1] == "X"]
    assert ops_and_labels[0] == ("label", "X", "user_annotation")
    assert all(cat == "cpu_op" for _, _, cat in ops_and_labels[1:])
    instants = [t for t in trace if t["ph"] == "i"]
    assert [t["args"]["Bytes"] for t in instants] == [-8, -8]
    assert trace[0]["args"]["args"] == "extra"
