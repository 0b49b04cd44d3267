"""``opweave.profiler``: record every operator call of a block, as ``torch.profiler.profile`` does on the CPU.

The profiler is a boxed fallback at the Python layer for every backend. Entering a
``profile`` block adds the Python layer bit to the calling thread's included dispatch
keys, so each operator call of that thread first reaches the fallback: it times the
call, redispatches below the Python layer, and records an event. A canonical op whose
decomposition calls prims (or other ops) produces nested events, one per call; each
event knows its nesting depth and its self time (its time minus that of the events
nested in it). Other threads are not recorded. Leaving the block, also by an
exception, restores the thread's keys and stops recording.

    with opweave.profiler.profile(record_shapes=True, profile_memory=True) as prof:
        y = (x @ w).relu()
    print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=10))

With ``profile_memory``, every storage constructed by the thread (on any backend but
meta) is reported through the core's allocation hook
(``_hooks.add_allocation_observer``) and its death is watched with
``weakref.finalize``: each allocation and free is charged to the event innermost
open when it happens, or to a ``"[memory]"`` event when no op is running. Results
whose backend makes their storage lazily get it when their op returns. The hooks
are installed only while a memory profile is active.

``record_function("label")`` adds an event of the user's own around the ops it encloses.

Times are host (wall-clock) times from ``time.perf_counter_ns``; a backend that queues
work asynchronously is timed until its kernel returns, as PyTorch's CPU times are.

Device time: a backend whose ``Backend.profiler_timer(device)`` returns a :class:`DeviceTimer`
(CUDA: events) gets each op on its devices bracketed by two marks queued on the device's
current stream, as PyTorch's ``use_cuda`` profiler did with CUDA events; the marks are resolved
when the block ends (waiting for the device then, not per op). ``device_time_total`` is the
device time between an op's marks, ``self_device_time_total`` that minus its nested events'
(an event without marks of its own, a ``record_function`` label, gets the sum of its nested
events'). The table then has PyTorch's ``Self CUDA``/``CUDA total`` columns (named after the
device type). ``activities`` chooses which devices are timed: ``ProfilerActivity.CUDA`` the
``cuda`` devices, ``ProfilerActivity.PrivateUse1`` every other device type; the default times
every device whose backend has a timer. Op events are recorded whatever the activities.
"""

from __future__ import annotations

import enum
import functools
import os
import threading
import time
import traceback
import weakref
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from . import _backends, _hooks, _keys, _plugins, _state
from ._device import device as _device_type
from ._keys import Layer
from ._tensor import Tensor
from .library import core_library

__all__ = [
    "DeviceTimer",
    "EventList",
    "FunctionEvent",
    "FunctionEventAvg",
    "ProfilerActivity",
    "profile",
    "record_function",
]

_PYTHON_BIT = _keys.layer_bit(Layer.Python)
_BELOW_PYTHON = ~_keys.layers_at_and_above(Layer.Python)
_perf_counter_ns = time.perf_counter_ns


class ProfilerActivity(enum.Enum):
    """What a profile records (``torch.profiler.ProfilerActivity``): op events always, device time per activity.

    ``CUDA`` times ops on ``cuda`` devices; ``PrivateUse1`` on every other non-CPU device type.
    """

    CPU = "cpu"
    CUDA = "cuda"
    PrivateUse1 = "privateuse1"


class DeviceTimer:
    """What ``Backend.profiler_timer(device)`` returns: marks queued on a device, and the time between two.

    The interface (a timer may subclass it or only have the two methods).

    ``record()`` queues a mark on the device's current stream and returns it without waiting;
    ``elapsed_ns(start, end)`` waits for ``end`` and returns the device time from ``start`` to
    ``end`` in nanoseconds; the profile calls it once per pair of marks, when its block ends,
    after which the marks are not used again (the timer may reuse them).
    """

    def record(self) -> Any:
        """Queue a mark on the device's current stream; return it."""
        raise NotImplementedError

    def elapsed_ns(self, start: Any, end: Any) -> int:
        """The device time between two marks of this timer, in nanoseconds (waits for ``end``)."""
        raise NotImplementedError


class _Microseconds:
    """``cpu_time_total`` / ``self_cpu_time_total`` / ``device_time_total``... in microseconds, from ``*_ns``."""

    @property
    def cpu_time_total(self) -> float:
        """Inclusive wall time in microseconds."""
        return self.cpu_time_total_ns / 1000.0

    @property
    def self_cpu_time_total(self) -> float:
        """Self wall time in microseconds."""
        return self.self_cpu_time_total_ns / 1000.0

    @property
    def device_time_total(self) -> float:
        """Inclusive device time in microseconds (0 when the op's device was not timed)."""
        return self.device_time_total_ns / 1000.0

    @property
    def self_device_time_total(self) -> float:
        """Device time in microseconds minus that of the nested events."""
        return self.self_device_time_total_ns / 1000.0

    @property
    def device_time(self) -> float:
        """Average inclusive device time per call, microseconds."""
        return self.device_time_total / self.count if self.count else 0.0

    @property
    def cuda_time_total(self) -> float:
        """PyTorch's older name of :attr:`device_time_total`."""
        return self.device_time_total

    @property
    def self_cuda_time_total(self) -> float:
        """PyTorch's older name of :attr:`self_device_time_total`."""
        return self.self_device_time_total

    @property
    def cuda_time(self) -> float:
        """PyTorch's older name of :attr:`device_time`."""
        return self.device_time


@dataclass
class FunctionEvent(_Microseconds):
    """One recorded operator call (or ``record_function`` block, or ``[memory]`` record).

    ``name`` is the overload's qualified name (``"add.Tensor"``, ``"prims::add"``), the
    label of a :class:`record_function`, or ``"[memory]"``; ``kind`` is ``"op"``,
    ``"user_annotation"`` or ``"memory"``. ``device`` is the device of the op's first
    tensor argument (for factories, the backend's device type; for ``[memory]``, the
    storage's device; ``""`` for labels). Times are in microseconds, as in PyTorch
    (``*_ns`` fields hold the exact nanoseconds): ``cpu_time_total`` is inclusive,
    ``self_cpu_time_total`` excludes the events nested in this one.

    Memory (0 unless ``profile_memory``): ``allocated_bytes`` and ``freed_bytes`` are the
    bytes of the storages constructed and destroyed while the event was open (nested
    events included; ``self_*``: not in a nested event). ``cpu_memory_usage`` is
    allocated minus freed on the CPU, ``device_memory_usage`` the same on other devices;
    their ``self_*`` versions leave out nested events, so they can be negative.

    Device time (0 unless the op's device was timed, see the module's docstring):
    ``device_time_total_ns`` between the marks around the call, ``self_device_time_total_ns``
    minus the nested events' (microseconds: ``device_time_total``, ``self_device_time_total``).
    ``cpu_parent`` is the event this one is nested in (None at depth 0).
    ``peak_memory_usage`` is the most bytes alive at once while the event was open,
    counting the storages constructed since the profile started (for ``[memory]``: alive
    right after it).

    ``input_shapes`` (with ``record_shapes``) has one entry per argument: a tensor's
    shape, a list of shapes for a tensor list, ``[]`` otherwise. ``stack`` (with
    ``with_stack``) lists the caller's frames outside opweave, innermost last, as
    ``"file(line): function"``. ``depth`` is 0 for a call made by the user, 1 for a call
    made by its kernel (or inside a ``record_function`` block), ...
    """

    name: str
    device: str
    depth: int
    start_ns: int = 0
    end_ns: int = 0
    input_shapes: list | None = None
    stack: list | None = None
    cpu_memory_usage: int = 0
    self_cpu_memory_usage: int = 0
    device_memory_usage: int = 0
    self_device_memory_usage: int = 0
    allocated_bytes: int = 0
    freed_bytes: int = 0
    self_allocated_bytes: int = 0
    self_freed_bytes: int = 0
    peak_memory_usage: int = 0
    thread: int = 0
    kind: str = "op"
    user_args: str | None = None
    device_time_total_ns: int = 0
    self_device_time_total_ns: int = 0
    cpu_parent: FunctionEvent | None = field(default=None, repr=False, compare=False)
    children_ns: int = field(default=0, repr=False)
    children_memory: list = field(default_factory=lambda: [0, 0, 0, 0], repr=False)  # cpu, device, alloc, free

    @property
    def cpu_time_total_ns(self) -> int:
        """Inclusive wall time in nanoseconds."""
        return self.end_ns - self.start_ns

    @property
    def self_cpu_time_total_ns(self) -> int:
        """Wall time in nanoseconds minus that of the nested events."""
        return self.cpu_time_total_ns - self.children_ns

    @property
    def key(self) -> str:
        """The name events are grouped by (as in PyTorch)."""
        return self.name

    @property
    def count(self) -> int:
        """Always 1 (so that events and averages sort alike)."""
        return 1

    def _close_memory(self) -> None:
        """Set the inclusive memory figures from the self ones and those of the closed nested events."""
        cpu, dev, alloc, free = self.children_memory
        self.cpu_memory_usage = self.self_cpu_memory_usage + cpu
        self.device_memory_usage = self.self_device_memory_usage + dev
        self.allocated_bytes = self.self_allocated_bytes + alloc
        self.freed_bytes = self.self_freed_bytes + free


class _Recorder:
    """The part of a profile that the fallback talks to; one per ``profile`` block.

    With ``profile_memory`` it also keeps the bytes alive (constructed since the start and
    not yet destroyed) per device and in all, with their peaks. Frees can come from any
    thread (the one dropping a storage's last reference), hence the lock.
    """

    __slots__ = (
        "events",
        "open",
        "record_shapes",
        "profile_memory",
        "with_stack",
        "thread",
        "active",
        "alive",
        "peak",
        "finalizers",
        "serial",
        "lock",
        "timed_types",
        "timers",
        "marks",
        "timed",
    )

    def __init__(
        self,
        record_shapes: bool,
        profile_memory: bool,
        with_stack: bool,
        thread: int,
        timed_types: Callable[[str], bool] | None = None,
    ):
        self.events: list[FunctionEvent] = []
        self.open: list[FunctionEvent] = []
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.thread = thread
        self.active = True
        self.alive: dict = {None: 0}  # None: all devices; "cpu", "vendor:0", ...: one device; "vendor": a type
        self.peak: dict = {None: 0}
        self.finalizers: dict = {}
        self.serial = 0
        self.lock = threading.RLock()
        self.timed_types = timed_types  # which device types get device time (None: none)
        self.timers: dict[str, Any] = {}  # device string -> its DeviceTimer or None
        self.marks: dict[int, tuple] = {}  # id(open event) -> (timer, start mark)
        self.timed: list[tuple] = []  # (event, timer, start mark, end mark), resolved when the profile ends

    def timer(self, device: str) -> Any:
        """The device timer of ``device`` ("cuda:0"), or None when it is not timed."""
        try:
            return self.timers[device]
        except KeyError:
            pass
        timer = None
        device_type = device.split(":")[0]
        if device_type not in ("", "cpu", "meta") and self.timed_types(device_type):
            timer = _backends.get(device_type).profiler_timer(_device_type(device))
        self.timers[device] = timer
        return timer

    def begin(self, name: str, device: str, args: tuple, kind: str = "op") -> FunctionEvent:
        parent = self.open[-1] if self.open else None
        event = FunctionEvent(name, device, len(self.open), thread=self.thread, kind=kind, cpu_parent=parent)
        if self.record_shapes:
            event.input_shapes = [_shape_of(a) for a in args]
        if self.with_stack:
            event.stack = _user_stack()
        if self.profile_memory:
            event.peak_memory_usage = self.alive[None]
        self.events.append(event)
        self.open.append(event)
        if self.timed_types is not None and device:
            timer = self.timer(device)
            if timer is not None:
                self.marks[id(event)] = (timer, timer.record())
        return event

    def end(self, event: FunctionEvent, start: int, end: int) -> None:
        event.start_ns, event.end_ns = start, end
        if self.marks:
            marked = self.marks.pop(id(event), None)
            if marked is not None:
                timer, mark = marked
                self.timed.append((event, timer, mark, timer.record()))
        if self.open and self.open[-1] is event:
            self.open.pop()
        if self.profile_memory:
            with self.lock:
                event._close_memory()
                if self.open:
                    parent = self.open[-1]
                    totals = parent.children_memory
                    totals[0] += event.cpu_memory_usage
                    totals[1] += event.device_memory_usage
                    totals[2] += event.allocated_bytes
                    totals[3] += event.freed_bytes
                    parent.peak_memory_usage = max(parent.peak_memory_usage, event.peak_memory_usage)
        if self.open:
            self.open[-1].children_ns += end - start

    # -- memory ------------------------------------------------------------------------

    def allocated(self, storage, nbytes: int, device: str, device_type: str) -> None:
        """Account a storage constructed on this recorder's thread and watch for its death."""
        with self.lock:
            self.serial += 1
            key = self.serial
            finalizer = weakref.finalize(storage, self.freed, key, nbytes, device, device_type)
            finalizer.atexit = False
            self.finalizers[key] = finalizer
            self._account(nbytes, device, device_type)

    def freed(self, key: int, nbytes: int, device: str, device_type: str) -> None:
        """Account the death of a storage this recorder saw constructed (a ``weakref.finalize`` callback)."""
        with self.lock:
            self.finalizers.pop(key, None)
            if self.active:
                self._account(-nbytes, device, device_type)

    def _account(self, delta: int, device: str, device_type: str) -> None:
        alive, peak = self.alive, self.peak
        for where in {None, device, device_type}:
            level = alive.get(where, 0) + delta
            alive[where] = level
            if level > peak.get(where, 0):
                peak[where] = level
        if self.open and threading.get_ident() == self.thread:
            event = self.open[-1]
        else:
            now = _perf_counter_ns()
            event = FunctionEvent("[memory]", device, 0, now, now, thread=threading.get_ident(), kind="memory")
            if self.record_shapes:
                event.input_shapes = []
            self.events.append(event)
        if delta > 0:
            event.self_allocated_bytes += delta
        else:
            event.self_freed_bytes -= delta
        if device_type == "cpu":
            event.self_cpu_memory_usage += delta
        else:
            event.self_device_memory_usage += delta
        event.peak_memory_usage = max(event.peak_memory_usage, alive[None])
        if event.kind == "memory":
            event._close_memory()

    def resolve_device_times(self) -> set:
        """Set the events' device times from their marks (waiting for the devices); return the device types timed."""
        timed, self.timed = self.timed, []
        self.marks.clear()
        if not timed:
            return set()
        marked = set()
        types = set()
        for event, timer, start, end in timed:
            event.device_time_total_ns = int(timer.elapsed_ns(start, end))
            marked.add(id(event))
            types.add(event.device.split(":")[0])
        nested: dict[int, int] = {}
        for event in reversed(self.events):  # nested events come after their parent
            inner = nested.pop(id(event), 0)
            if id(event) not in marked:
                event.device_time_total_ns = inner
            event.self_device_time_total_ns = event.device_time_total_ns - inner
            parent = event.cpu_parent
            if parent is not None and event.device_time_total_ns:
                nested[id(parent)] = nested.get(id(parent), 0) + event.device_time_total_ns
        return types

    def stop(self) -> None:
        """Stop recording frees and forget the storages still alive."""
        with self.lock:
            self.active = False
            finalizers, self.finalizers = self.finalizers, {}
        for finalizer in finalizers.values():
            finalizer.detach()


def _python_layer_fallback(op, keyset: int, *args):
    """The boxed Python-layer kernel of every op: record into the thread's active profiles, run below."""
    recorders = _state.local().profilers
    below = keyset & _BELOW_PYTHON
    if not recorders:
        return op.redispatch(below, *args)
    device = _device_of(keyset, args)
    events = [r.begin(op.name, device, args) for r in recorders]
    out = None
    start = _perf_counter_ns()
    try:
        out = op.redispatch(below, *args)
        return out
    finally:
        end = _perf_counter_ns()
        if out is not None and _memory_hooks.count:
            _materialise_new_storages(args, out)
        for recorder, event in zip(recorders, events):
            recorder.end(event, start, end)


core_library("opweave.profiler").fallback(_python_layer_fallback, "Python")


# -- memory hooks -----------------------------------------------------------------------------
#
# A backend may give an op's result no Storage until someone asks for it (``Tensor._storage``
# calls ``Backend.storage_for``; the CPU backend's fast kernels do this). While a memory profile
# is active, the fallback makes the storages of an op's new results at once (so they are charged
# to that op), and a storage made lazily later (a tensor made before the profile, then viewed in
# it) is not reported: ``_hooks.making_lazy_storage()`` says it wraps memory that already existed.


class _HookCount:
    """How many memory profiles are active (all threads)."""

    count = 0
    lock = threading.Lock()


_memory_hooks = _HookCount()


def _install_memory_hooks() -> None:
    with _memory_hooks.lock:
        if _memory_hooks.count == 0:
            _hooks.add_allocation_observer(_observe_allocation)
        _memory_hooks.count += 1


def _remove_memory_hooks() -> None:
    with _memory_hooks.lock:
        _memory_hooks.count -= 1
        if _memory_hooks.count == 0:
            _hooks.remove_allocation_observer(_observe_allocation)


def _materialise_new_storages(args: tuple, out) -> None:
    """Make (and so report) the storages of ``out``'s tensors that have none yet and are not arguments."""
    if not any(r.profile_memory for r in _state.local().profilers):
        return
    given = None
    for t in _tensors(out):
        if t._st is None:
            if given is None:
                given = {id(a) for value in args for a in _tensors(value)}
            if id(t) not in given:  # a new result: its storage is this op's allocation
                t._st = _backends.get(t.device.type).storage_for(t)


def _tensors(value):
    if isinstance(value, Tensor):
        yield value
    elif isinstance(value, (list, tuple)):
        for item in value:
            if isinstance(item, Tensor):
                yield item


def _observe_allocation(storage) -> None:
    """The allocation hook while a memory profile is active: hand the storage to the thread's memory profiles."""
    recorders = _state.local().profilers
    if not recorders or _hooks.making_lazy_storage():
        return
    nbytes = storage.nbytes
    device = storage.device
    device_type = getattr(device, "type", None) or str(device).split(":")[0]
    if not nbytes or device_type == "meta":
        return
    name = str(device)
    for recorder in recorders:
        if recorder.profile_memory and recorder.active:
            recorder.allocated(storage, nbytes, name, device_type)


class record_function:
    """Add an event labelled ``name`` around a block (or each call of a decorated function).

    The ops called inside are recorded nested in it (one level deeper), so its self time
    and self memory are what the block spends outside those ops. Without an active
    profile on the calling thread it does nothing. ``args`` (a string) is kept in the
    Chrome trace. As in PyTorch: ``with record_function("attention"): ...`` or
    ``@record_function("step")``.
    """

    def __init__(self, name: str, args: str | None = None):
        if not isinstance(name, str):
            raise TypeError(f"record_function(): name must be a str, got {type(name).__name__}")
        if args is not None and not isinstance(args, str):
            raise TypeError(f"record_function(): args must be a str or None, got {type(args).__name__}")
        self.name = name
        self.args = args
        self._open: list = []  # one (recorders, events, start) per entry that has not exited

    def __enter__(self) -> record_function:
        recorders = _state.local().profilers
        events = [r.begin(self.name, "", (), kind="user_annotation") for r in recorders]
        for event in events:
            event.user_args = self.args
        self._open.append((recorders, events, _perf_counter_ns()))
        return self

    def __exit__(self, *exc: object) -> None:
        end = _perf_counter_ns()
        recorders, events, start = self._open.pop()
        for recorder, event in zip(recorders, events):
            recorder.end(event, start, end)

    def __call__(self, fn: Callable) -> Callable:
        """Use as a decorator: each call of ``fn`` runs inside its own ``record_function(name, args)``."""

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with record_function(self.name, self.args):
                return fn(*args, **kwargs)

        return wrapper


def _device_of(keyset: int, args: tuple) -> str:
    for value in args:
        if isinstance(value, Tensor):
            return str(value._device)
        if isinstance(value, (list, tuple)):
            for item in value:
                if isinstance(item, Tensor):
                    return str(item._device)
    return _keys.highest_backend(keyset) or ""


def _shape_of(value) -> list:
    if isinstance(value, Tensor):
        return list(value._shape)
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, Tensor) for v in value):
        return [list(v._shape) for v in value]
    return []


_OPWEAVE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def _internal_dirs() -> tuple:
    """Folders and files whose frames are not user frames: opweave itself and every loaded plugin."""
    return (_OPWEAVE_DIR, *_plugins.source_paths())


def _user_stack() -> list:
    internal = _internal_dirs()
    frames = traceback.extract_stack()
    return [
        f"{f.filename}({f.lineno}): {f.name}"
        for f in frames
        if not os.path.abspath(f.filename).startswith(internal) and not f.filename.startswith("<opweave op ")
    ]


# -- results --------------------------------------------------------------------------------


_SUMMED_MEMORY = (
    "cpu_memory_usage",
    "self_cpu_memory_usage",
    "device_memory_usage",
    "self_device_memory_usage",
    "allocated_bytes",
    "freed_bytes",
    "self_allocated_bytes",
    "self_freed_bytes",
)


@dataclass
class FunctionEventAvg(_Microseconds):
    """Events of one key (and input shapes, when grouped so) added up; times in microseconds.

    Memory figures are sums, except ``peak_memory_usage``: the largest of the events'.
    """

    key: str
    count: int = 0
    cpu_time_total_ns: int = 0
    self_cpu_time_total_ns: int = 0
    cpu_memory_usage: int = 0
    self_cpu_memory_usage: int = 0
    device_memory_usage: int = 0
    self_device_memory_usage: int = 0
    allocated_bytes: int = 0
    freed_bytes: int = 0
    self_allocated_bytes: int = 0
    self_freed_bytes: int = 0
    peak_memory_usage: int = 0
    input_shapes: list | None = None
    device: str = ""
    device_time_total_ns: int = 0
    self_device_time_total_ns: int = 0

    def add(self, event: FunctionEvent) -> None:
        """Add one event (or another average) to the totals."""
        self.count += event.count
        self.cpu_time_total_ns += event.cpu_time_total_ns
        self.self_cpu_time_total_ns += event.self_cpu_time_total_ns
        self.device_time_total_ns += event.device_time_total_ns
        self.self_device_time_total_ns += event.self_device_time_total_ns
        for name in _SUMMED_MEMORY:
            setattr(self, name, getattr(self, name) + getattr(event, name))
        self.peak_memory_usage = max(self.peak_memory_usage, event.peak_memory_usage)

    @property
    def name(self) -> str:
        """Same as ``key``."""
        return self.key

    @property
    def cpu_time(self) -> float:
        """Average inclusive time per call, microseconds."""
        return self.cpu_time_total / self.count if self.count else 0.0


_SORT_KEYS = {
    "self_cpu_time_total": lambda e: e.self_cpu_time_total_ns,
    "cpu_time_total": lambda e: e.cpu_time_total_ns,
    "cpu_time": lambda e: e.cpu_time_total_ns / max(e.count, 1),
    "count": lambda e: e.count,
    "cpu_memory_usage": lambda e: e.cpu_memory_usage,
    "self_cpu_memory_usage": lambda e: e.self_cpu_memory_usage,
    "device_memory_usage": lambda e: e.device_memory_usage,
    "self_device_memory_usage": lambda e: e.self_device_memory_usage,
    "peak_memory_usage": lambda e: e.peak_memory_usage,
    "self_device_time_total": lambda e: e.self_device_time_total_ns,
    "device_time_total": lambda e: e.device_time_total_ns,
    "device_time": lambda e: e.device_time_total_ns / max(e.count, 1),
}
_SORT_KEYS["self_cuda_time_total"] = _SORT_KEYS["self_device_time_total"]
_SORT_KEYS["cuda_time_total"] = _SORT_KEYS["device_time_total"]
_SORT_KEYS["cuda_time"] = _SORT_KEYS["device_time"]


class EventList(list):
    """A list of events (or of averages) that prints as PyTorch's profiler table."""

    def __init__(
        self,
        items: Iterable = (),
        *,
        profile_memory: bool = False,
        with_shapes: bool = False,
        device_time_label: str | None = None,
    ) -> None:
        super().__init__(items)
        self._profile_memory = profile_memory
        self._with_shapes = with_shapes
        self._device_time_label = device_time_label  # "CUDA": the events have device time, columns so named

    def key_averages(self, group_by_input_shape: bool = False) -> EventList:
        """One :class:`FunctionEventAvg` per name (per name and input shapes when ``group_by_input_shape``)."""
        groups: dict = {}
        for event in self:
            shapes = event.input_shapes if group_by_input_shape else None
            key = (event.key, repr(shapes) if group_by_input_shape else None)
            avg = groups.get(key)
            if avg is None:
                avg = groups[key] = FunctionEventAvg(event.key, input_shapes=shapes, device=event.device)
            avg.add(event)
        return EventList(
            groups.values(),
            profile_memory=self._profile_memory,
            with_shapes=group_by_input_shape,
            device_time_label=self._device_time_label,
        )

    @property
    def self_cpu_time_total(self) -> float:
        """Sum of the self times, microseconds (the total time profiled in operators)."""
        return sum(e.self_cpu_time_total_ns for e in self) / 1000.0

    @property
    def self_device_time_total(self) -> float:
        """Sum of the self device times, microseconds."""
        return sum(e.self_device_time_total_ns for e in self) / 1000.0

    def table(
        self,
        sort_by: str | None = None,
        row_limit: int = 100,
        max_name_column_width: int = 55,
        max_shapes_column_width: int = 80,
        header: str | None = None,
        top_level_events_only: bool = False,
    ) -> str:
        """The rows as a text table like PyTorch's, sorted (descending) by ``sort_by`` and cut to ``row_limit``.

        ``sort_by``: None (recorded order), ``"self_cpu_time_total"``, ``"cpu_time_total"``,
        ``"cpu_time"``, ``"count"``, ``"cpu_memory_usage"``, ``"self_cpu_memory_usage"``,
        ``"device_memory_usage"``, ``"self_device_memory_usage"``, ``"peak_memory_usage"``,
        ``"self_device_time_total"``, ``"device_time_total"``, ``"device_time"`` (or their ``cuda_``
        names). Columns: Name, Self CPU %, Self CPU, CPU total %, CPU total, CPU time avg, Self CUDA,
        Self CUDA %, CUDA total, CUDA time avg (when ops were timed on a device; named after its type), CPU Mem and
        Self CPU Mem (with ``profile_memory``), Device Mem and Self Device Mem (with
        ``profile_memory``, when some event has memory on a non-CPU device), # of Calls,
        Input Shapes (when grouped by them). The memory columns are allocated minus freed bytes.
        """
        if sort_by is not None and sort_by not in _SORT_KEYS:
            raise ValueError(f"table(): unknown sort_by {sort_by!r}; expected one of {', '.join(_SORT_KEYS)}")
        rows = list(self)
        if top_level_events_only:
            rows = [e for e in rows if getattr(e, "depth", 0) == 0]
        if sort_by is not None:
            rows.sort(key=_SORT_KEYS[sort_by], reverse=True)
        if row_limit is not None and row_limit > 0:
            rows = rows[:row_limit]
        return _build_table(
            rows,
            self.self_cpu_time_total,
            profile_memory=self._profile_memory,
            device_memory=self._profile_memory
            and any(e.device_memory_usage or e.self_device_memory_usage for e in self),
            with_shapes=self._with_shapes,
            device_time_label=self._device_time_label,
            total_self_device_us=self.self_device_time_total,
            max_name=max_name_column_width,
            max_shapes=max_shapes_column_width,
            header=header,
        )

    def __str__(self):
        return self.table()


def format_time(us: float) -> str:
    """Microseconds as PyTorch's profiler prints them (``"12.345us"``, ``"1.234ms"``, ``"1.000s"``)."""
    if us >= 1e6:
        return f"{us / 1e6:.3f}s"
    if us >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


def format_memory(nbytes: int) -> str:
    """Bytes as PyTorch's profiler prints them (``"48 b"``, ``"1.50 Kb"``, ``"2.00 Mb"``, ``"1.00 Gb"``)."""
    kb, mb, gb = 1024, 1024 * 1024, 1024 * 1024 * 1024
    if abs(nbytes) >= gb:
        return f"{nbytes / gb:.2f} Gb"
    if abs(nbytes) >= mb:
        return f"{nbytes / mb:.2f} Mb"
    if abs(nbytes) >= kb:
        return f"{nbytes / kb:.2f} Kb"
    return f"{nbytes} b"


def _percent(part: float, whole: float) -> str:
    return f"{100.0 * part / whole:.2f}%" if whole > 0 else "0.00%"


def _build_table(
    rows,
    total_self_us,
    *,
    profile_memory,
    device_memory,
    with_shapes,
    max_name,
    max_shapes,
    header,
    device_time_label=None,
    total_self_device_us=0.0,
) -> str:
    """Render ``rows`` (events or averages) like ``torch.autograd.profiler_util._build_table``."""
    names = [r.key for r in rows]
    name_width = min(max([len(n) for n in names] + [len("Name")]) + 4, max_name + 4)
    columns = ["Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg"]
    dev = device_time_label
    if dev:
        columns += [f"Self {dev}", f"Self {dev} %", f"{dev} total", f"{dev} time avg"]
    if profile_memory:
        columns += ["CPU Mem", "Self CPU Mem"]
    if device_memory:
        columns += ["Device Mem", "Self Device Mem"]
    columns.append("# of Calls")
    cell = 12
    shape_width = 0
    if with_shapes:
        shapes = [str(r.input_shapes) for r in rows]
        shape_width = min(max([len(s) for s in shapes] + [len("Input Shapes")]) + 4, max_shapes + 4)
    spacing = "  "
    widths = [name_width] + [max(cell, len(c)) for c in columns] + ([shape_width] if with_shapes else [])
    line = spacing.join("-" * w for w in widths) + spacing

    def fmt(values):
        parts = [f"{values[0]:<{widths[0]}}"]
        parts += [f"{v:>{w}}" for v, w in zip(values[1 : 1 + len(columns)], widths[1 : 1 + len(columns)])]
        if with_shapes:
            parts.append(f"{values[-1]:<{widths[-1]}}")
        return spacing.join(parts) + spacing

    def cut(text: str, limit: int) -> str:
        return text if len(text) <= limit else text[: limit - 3] + "..."

    out = []
    if header:
        out += ["=" * len(line), header]
    out += [line, fmt(["Name", *columns, *(["Input Shapes"] if with_shapes else [])]), line]
    for r in rows:
        count = r.count
        total_ns = r.cpu_time_total_ns
        values = [
            cut(r.key, max_name),
            _percent(r.self_cpu_time_total_ns / 1000.0, total_self_us),
            format_time(r.self_cpu_time_total_ns / 1000.0),
            _percent(total_ns / 1000.0, total_self_us),
            format_time(total_ns / 1000.0),
            format_time(total_ns / 1000.0 / count if count else 0.0),
        ]
        if dev:
            device_ns = r.device_time_total_ns
            values += [
                format_time(r.self_device_time_total_ns / 1000.0),
                _percent(r.self_device_time_total_ns / 1000.0, total_self_device_us),
                format_time(device_ns / 1000.0),
                format_time(device_ns / 1000.0 / count if count else 0.0),
            ]
        if profile_memory:
            values += [format_memory(r.cpu_memory_usage), format_memory(r.self_cpu_memory_usage)]
        if device_memory:
            values += [format_memory(r.device_memory_usage), format_memory(r.self_device_memory_usage)]
        values.append(str(count))
        if with_shapes:
            values.append(cut(str(r.input_shapes), max_shapes))
        out.append(fmt(values))
    out.append(line)
    out.append(f"Self CPU time total: {format_time(total_self_us)}")
    if dev:
        out.append(f"Self {dev} time total: {format_time(total_self_device_us)}")
    return "\n".join(out) + "\n"


# -- the context manager --------------------------------------------------------------------


class profile:
    """Record the operator calls of the calling thread inside a ``with`` block.

    ``profile_memory``: record the bytes allocated and freed per call (storages constructed
    and destroyed, seen through the core's allocation hook) and the peak
    (:meth:`peak_memory`); ``record_shapes``: record the input shapes; ``with_stack``:
    record the user's call stack; ``activities`` (an iterable of :class:`ProfilerActivity`,
    default every one): which devices' time is taken (see the module's docstring). Blocks nest
    (an inner block's events are recorded by every enclosing active profile too); the same
    object cannot be entered twice. After the block, :meth:`events` and :meth:`key_averages`
    give the results.
    """

    def __init__(
        self,
        profile_memory: bool = False,
        record_shapes: bool = False,
        with_stack: bool = False,
        *,
        activities: Iterable[ProfilerActivity] | None = None,
    ):
        self.profile_memory = bool(profile_memory)
        self.record_shapes = bool(record_shapes)
        self.with_stack = bool(with_stack)
        self.activities = _activities(activities)
        self._device_time_label: str | None = None
        self._recorder: _Recorder | None = None
        self._saved = None
        self._entered = False

    def __enter__(self) -> profile:
        if self._entered:
            raise RuntimeError("opweave.profiler.profile: this profiler is already recording (it is not reentrant)")
        state = _state.local()
        self._recorder = _Recorder(
            self.record_shapes,
            self.profile_memory,
            self.with_stack,
            threading.get_ident(),
            _timed_types(self.activities),
        )
        self._device_time_label = None
        if self.profile_memory:
            _install_memory_hooks()
        self._saved = state.included
        state.profilers = state.profilers + (self._recorder,)
        state.included = state.included | _PYTHON_BIT
        self._entered = True
        return self

    def __exit__(self, *exc: object) -> None:
        state = _state.local()
        included = self._saved
        remaining = tuple(r for r in state.profilers if r is not self._recorder)
        state.profilers = remaining
        # Keep mode bits changed inside the block (use_deterministic_algorithms); restore the Python bit
        # unless another profile of this thread is still recording.
        keep = (included & _PYTHON_BIT) or (_PYTHON_BIT if remaining else 0)
        state.included = (state.included & ~_PYTHON_BIT) | keep
        self._entered = False
        self._saved = None
        if self.profile_memory:
            self._recorder.stop()
            _remove_memory_hooks()
        types = self._recorder.resolve_device_times()
        if types:
            self._device_time_label = types.pop().upper() if len(types) == 1 else "Device"

    def peak_memory(self, device: _device_type | str | None = None) -> int:
        """The most bytes alive at once during the block, counting the storages constructed in it.

        ``device=None``: all devices together; a device (``"cpu"``, ``"vendor:0"``) or a
        device type without an index (``"vendor"``: all its devices together): that one.
        Storages that existed before the block are not counted. Needs ``profile_memory=True``.
        """
        recorder = self._require("peak_memory")
        if not self.profile_memory:
            raise RuntimeError(
                "opweave.profiler.profile.peak_memory(): the profile was made without profile_memory=True"
            )
        if device is None:
            return recorder.peak[None]
        if not isinstance(device, (str, _device_type)):
            raise TypeError(
                f"peak_memory(): device must be a str, an opweave.device or None, got {type(device).__name__}"
            )
        with recorder.lock:
            return recorder.peak.get(str(device), 0)

    def events(self) -> EventList:
        """Every recorded event, in the order the calls started."""
        recorder = self._require("events")
        return EventList(
            recorder.events,
            profile_memory=self.profile_memory,
            with_shapes=False,
            device_time_label=self._device_time_label,
        )

    def key_averages(self, group_by_input_shape: bool = False) -> EventList:
        """The events added up per op name (and per input shapes when ``group_by_input_shape``)."""
        return self.events().key_averages(group_by_input_shape)

    def table(self, *args: Any, **kwargs: Any) -> str:
        """``self.key_averages().table(...)``."""
        return self.key_averages().table(*args, **kwargs)

    @property
    def self_cpu_time_total(self) -> float:
        """Total self time of all events, microseconds."""
        return self.events().self_cpu_time_total

    @property
    def self_device_time_total(self) -> float:
        """Total self device time of all events, microseconds (0 when no device was timed)."""
        return self.events().self_device_time_total

    def export_chrome_trace(self, path: str) -> None:
        """Write the events as a Chrome trace (``chrome://tracing``, Perfetto) JSON file.

        Each op call and ``record_function`` block is one complete event (``"ph": "X"``,
        category ``"cpu_op"`` or ``"user_annotation"``); each ``[memory]`` record is an
        instant event (``"ph": "i"``) with its bytes (negative for frees) and the bytes then alive.
        """
        import json

        events = self._require("export_chrome_trace").events
        base = min((e.start_ns for e in events), default=0)
        pid = os.getpid()
        trace = []
        for e in list(events):
            ts = (e.start_ns - base) / 1000.0
            if e.kind == "memory":
                args = {"Device": e.device, "Bytes": e.self_allocated_bytes - e.self_freed_bytes}
                args["Total Allocated"] = e.peak_memory_usage
                trace.append(
                    {"name": e.name, "ph": "i", "s": "t", "cat": "cpu_instant_event", "ts": ts, "pid": pid}
                    | {"tid": e.thread, "args": args}
                )
                continue
            args = {"device": e.device, "depth": e.depth}
            if e.input_shapes is not None:
                args["Input Dims"] = e.input_shapes
            if e.user_args is not None:
                args["args"] = e.user_args
            if self.profile_memory:
                args |= {"Allocated Bytes": e.allocated_bytes, "Freed Bytes": e.freed_bytes}
            if self._device_time_label:
                args["Device Duration"] = e.device_time_total_ns / 1000.0
            category = "cpu_op" if e.kind == "op" else "user_annotation"
            trace.append(
                {"name": e.name, "ph": "X", "cat": category, "ts": ts, "dur": e.cpu_time_total_ns / 1000.0}
                | {"pid": pid, "tid": e.thread, "args": args}
            )
        with open(path, "w") as f:
            json.dump({"traceEvents": trace}, f)

    def _require(self, what: str) -> _Recorder:
        if self._recorder is None:
            raise RuntimeError(f"opweave.profiler.profile.{what}(): the profiler has not run (use it in a with block)")
        return self._recorder


def _activities(activities) -> frozenset:
    """``activities`` as a set of :class:`ProfilerActivity` (None: all), with a ``TypeError`` for anything else."""
    if activities is None:
        return frozenset(ProfilerActivity)
    if isinstance(activities, (str, ProfilerActivity)) or not isinstance(activities, Iterable):
        raise TypeError(
            f"profile(): activities must be an iterable of ProfilerActivity, got {type(activities).__name__}"
        )
    chosen = frozenset(activities)
    for activity in chosen:
        if not isinstance(activity, ProfilerActivity):
            raise TypeError(f"profile(): activities must hold ProfilerActivity values, got {activity!r}")
    return chosen


def _timed_types(activities: frozenset) -> Callable[[str], bool] | None:
    """Which device types get device time under ``activities`` (None: none)."""
    cuda = ProfilerActivity.CUDA in activities
    other = ProfilerActivity.PrivateUse1 in activities
    if not (cuda or other):
        return None
    return lambda device_type: cuda if device_type == "cuda" else other
