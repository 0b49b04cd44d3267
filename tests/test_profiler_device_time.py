"""The profiler's device-time hook (``Backend.profiler_timer``) with a stand-in timed device.

The stand-in backend ``timedev`` holds no data: its kernels return tensors with metadata only,
and its timer's marks are the readings of a fake device clock that advances 1000 ns per mark.
So the device times are known exactly from the order of the marks: for one ``add.Tensor``
call (``add.Tensor -> [mul.Tensor -> prims::mul, prims::add]``, kernels registered here) the
marks are ``add(0) mul(1) pmul(2) /pmul(3) /mul(4) padd(5) /padd(6) /add(7)``, in thousands
of nanoseconds. The CUDA timer (events) is tested on a GPU only (``tests/cuda/test_gpu.py``).
"""

from __future__ import annotations

import types

import opweave
import pytest
from opweave import ops
from opweave.backends import Backend, Storage
from opweave.dispatch import registered
from opweave.profiler import ProfilerActivity, profile, record_function

NAME = "timedev"
DEV = opweave.device(NAME)
TICK = 1000


class FakeTimer:
    """Marks are readings of a clock advancing ``TICK`` ns per mark; it records how it is used."""

    def __init__(self):
        self.clock = 0
        self.resolved: list[tuple[int, int]] = []

    def record(self):
        """The clock's reading, then the clock advances."""
        mark = self.clock
        self.clock += TICK
        return mark

    def elapsed_ns(self, start, end):
        """End minus start, remembered."""
        self.resolved.append((start, end))
        return end - start


class TimedBackend(Backend):
    """A device without data whose timer is :class:`FakeTimer`."""

    name = NAME

    def __init__(self):
        self.timer = FakeTimer()
        self.asked: list[str] = []

    def allocate(self, nbytes, device):
        """A storage of ``nbytes`` holding nothing."""
        return Storage(None, nbytes, device, self)

    def copy_from_host(self, array, device):
        """Only the size is kept."""
        return Storage(None, array.nbytes, device, self)

    def copy_to_host(self, tensor):
        """Stand-in tensors have no data."""
        raise RuntimeError("timedev tensors have no data")

    def profiler_timer(self, device):
        """The one fake timer (and which device asked)."""
        self.asked.append(str(device))
        return self.timer


BACKEND = TimedBackend()


def _plugin():
    module = types.ModuleType("timedev_plugin")

    @opweave.hookimpl
    def opweave_register(registry):
        registry.backend(BACKEND)

    module.opweave_register = opweave_register
    return module


if NAME not in {s.name for s in opweave.backends.status(load_all=False) if s.loaded}:
    opweave.backends.register_plugin(_plugin(), name=NAME)


def _like(t):
    """A new timedev tensor of ``t``'s shape and dtype (24 bytes for the 2x3 float32 inputs)."""
    return BACKEND.empty_strided(t.shape, t.stride(), t.dtype, DEV)


@pytest.fixture
def timed_ops():
    """add.Tensor -> [mul.Tensor -> prims::mul, prims::add] on timedev; a fresh clock."""
    BACKEND.timer = FakeTimer()
    BACKEND.asked.clear()
    kernels = [
        (ops.prims.mul.default, lambda a, b: _like(a)),
        (ops.prims.add.default, lambda a, b: _like(a)),
        (ops.mul.Tensor, lambda a, b: ops.prims.mul(a, b)),
        (ops.add.Tensor, lambda a, b, alpha=1: ops.prims.add(ops.mul.Tensor(a, b), b)),
    ]
    with registered(*kernels[0], backend=NAME), registered(*kernels[1], backend=NAME):
        with registered(*kernels[2], backend=NAME), registered(*kernels[3], backend=NAME):
            yield


def _inputs():
    return tuple(BACKEND.empty_strided((2, 3), (3, 1), opweave.float32, DEV) for _ in range(2))


def _times(events):
    return [(e.name, e.device_time_total_ns, e.self_device_time_total_ns) for e in events]


ONE_ADD = [("add.Tensor", 7000, 3000), ("mul.Tensor", 3000, 2000), ("prims::mul", 1000, 1000)]
ONE_ADD += [("prims::add", 1000, 1000)]


def test_each_op_is_bracketed_by_marks_resolved_when_the_block_ends(timed_ops):
    x, y = _inputs()
    timer = BACKEND.timer
    with profile() as prof:
        x + y
        assert timer.clock == 8 * TICK and timer.resolved == [], "marks are queued per op, resolved at the end"
    assert sorted(timer.resolved) == [(0, 7000), (1000, 4000), (2000, 3000), (5000, 6000)]
    assert _times(prof.events()) == ONE_ADD
    assert BACKEND.asked == [f"{NAME}:0"], "the timer is asked for once per device"
    event = prof.events()[0]
    assert event.device_time_total == event.cuda_time_total == event.device_time == 7.0
    assert event.self_device_time_total == event.self_cuda_time_total == 3.0
    assert prof.self_device_time_total == 7.0, "the self times add up to the outermost op's time"


def test_labels_and_host_ops_add_up_their_nested_device_time(timed_ops):
    x, y = _inputs()
    with profile() as prof:
        with record_function("step"):
            x + y
            opweave.ones(2)  # a CPU op: not timed
            x + y
    events = prof.events()
    got = _times(events)
    assert got[0] == ("step", 14000, 0), "a label has no marks: its time is its nested events'"
    ops_on_cpu = [e for e in events if e.device == "cpu"]
    assert ops_on_cpu and all(e.device_time_total_ns == e.self_device_time_total_ns == 0 for e in ops_on_cpu)
    timed = [t for t, e in zip(got[1:], events[1:]) if e.device.startswith(NAME)]
    first, second = timed[:4], timed[4:]
    assert first == ONE_ADD and second == ONE_ADD
    averages = {a.key: a for a in prof.key_averages()}
    add = averages["add.Tensor"]
    assert (add.count, add.device_time_total_ns, add.self_device_time_total_ns) == (2, 14000, 6000)
    assert add.device_time == 7.0 and add.cuda_time == 7.0


def test_table_has_the_device_time_columns_named_after_the_device(timed_ops):
    x, y = _inputs()
    with profile(profile_memory=True) as prof:
        with record_function("step"):
            x + y
            x + y
    table = prof.key_averages().table(sort_by="self_device_time_total")
    lines = table.splitlines()
    header = lines[1]
    columns = ["Self TIMEDEV", "Self TIMEDEV %", "TIMEDEV total", "TIMEDEV time avg", "Device Mem"]
    assert all(c in header for c in columns)
    assert header.index("CPU time avg") < header.index("Self TIMEDEV") < header.index("CPU Mem")
    assert lines[-1] == "Self TIMEDEV time total: 14.000us"
    assert lines[-2].startswith("Self CPU time total: ")
    rows = {line.split()[0]: line for line in lines[3:-3]}
    assert [line.split()[0] for line in lines[3:7]] == ["add.Tensor", "mul.Tensor", "prims::mul", "prims::add"]
    #                    self     self %   total     avg
    expected = {
        "add.Tensor": ["6.000us", "42.86%", "14.000us", "7.000us"],
        "mul.Tensor": ["4.000us", "28.57%", "6.000us", "3.000us"],
        "prims::mul": ["2.000us", "14.29%", "2.000us", "1.000us"],
        "step": ["0.000us", "0.00%", "14.000us", "14.000us"],
    }
    for name, cells in expected.items():
        fields = rows[name].split()
        assert fields[6:10] == cells, name
    add_row = rows["prims::add"].split()
    assert add_row[6:10] == ["2.000us", "14.29%", "2.000us", "1.000us"]
    # each prims::mul and prims::add allocates a 2x3 float32 result on the device: 24 bytes
    assert "48 b" in rows["prims::mul"]


@pytest.mark.parametrize(
    ("activities", "timed"),
    [
        (None, True),
        ([ProfilerActivity.CPU, ProfilerActivity.PrivateUse1], True),
        ([ProfilerActivity.CPU], False),
        ([ProfilerActivity.CPU, ProfilerActivity.CUDA], False),  # timedev is not a cuda device
    ],
)
def test_activities_choose_the_timed_devices(timed_ops, activities, timed):
    x, y = _inputs()
    with profile(activities=activities) as prof:
        x + y
    assert [e.name for e in prof.events()] == [name for name, _, _ in ONE_ADD], "op events whatever the activities"
    if timed:
        assert _times(prof.events()) == ONE_ADD and "TIMEDEV total" in prof.table()
    else:
        assert BACKEND.timer.clock == 0 and all(e.device_time_total_ns == 0 for e in prof.events())
        assert "TIMEDEV" not in prof.table() and "Self CPU time total" in prof.table()


def test_an_op_that_raises_still_closes_its_marks(timed_ops):
    x, y = _inputs()

    def failing(a, b):
        ops.prims.mul(a, b)
        raise ValueError("mul.Tensor: stand-in failure")

    with registered(ops.mul.Tensor, failing, backend=NAME):
        with pytest.raises(ValueError, match="stand-in failure"), profile() as prof:
            x * y
    assert _times(prof.events()) == [("mul.Tensor", 3000, 2000), ("prims::mul", 1000, 1000)]
    assert len(BACKEND.timer.resolved) == 2


def test_activities_are_checked():
    with pytest.raises(TypeError, match="activities must be an iterable of ProfilerActivity"):
        profile(activities=ProfilerActivity.CUDA)
    with pytest.raises(TypeError, match="activities must hold ProfilerActivity values"):
        profile(activities=["cuda"])


def test_sort_keys_with_pytorch_device_names(timed_ops):
    x, y = _inputs()
    with profile() as prof:
        x + y
    averages = prof.key_averages()
    for key in ("device_time_total", "cuda_time_total", "self_cuda_time_total", "cuda_time", "device_time"):
        first = averages.table(sort_by=key).splitlines()[3].split()[0]
        assert first == "add.Tensor", key
