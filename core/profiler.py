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

Times are host (wall-clock) times from ``time.perf_counter_ns``; a backend that queues
work asynchronously is timed until its kernel returns, as PyTorch's CPU times are.
"""

from __future__ import annotations

import os
import time
import traceback
from dataclasses import dataclass, field

from . import _dispatch, _keys, _state
from ._keys import Layer
from ._tensor import Tensor

__all__ = ["EventList", "FunctionEvent", "FunctionEventAvg", "profile"]

_PYTHON_BIT = _keys.layer_bit(Layer.Python)
_BELOW_PYTHON = ~_keys.layers_at_and_above(Layer.Python)
_perf_counter_ns = time.perf_counter_ns


@dataclass
class FunctionEvent:
    """One recorded operator call.

    ``name`` is the overload's qualified name (``"add.Tensor"``, ``"prims::add"``),
    ``device`` the device of its first tensor argument (for factories, the backend's
    device type). Times are in microseconds, as in PyTorch (``*_ns`` fields hold the
    exact nanoseconds): ``cpu_time_total`` is inclusive, ``self_cpu_time_total``
    excludes the events nested in this one. ``cpu_memory_usage`` is the number of bytes
    of the output storages the call created (0 unless ``profile_memory``), and
    ``self_cpu_memory_usage`` that minus what nested events created. ``input_shapes``
    (with ``record_shapes``) has one entry per argument: a tensor's shape, a list of
    shapes for a tensor list, ``[]`` otherwise. ``stack`` (with ``with_stack``) lists the
    caller's frames outside opweave, innermost last, as ``"file(line): function"``.
    ``depth`` is 0 for a call made by the user, 1 for a call made by its kernel, ...
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
    thread: int = 0
    children_ns: int = field(default=0, repr=False)
    children_memory: int = field(default=0, repr=False)

    @property
    def cpu_time_total_ns(self) -> int:
        """Inclusive wall time in nanoseconds."""
        return self.end_ns - self.start_ns

    @property
    def self_cpu_time_total_ns(self) -> int:
        """Wall time in nanoseconds minus that of the nested events."""
        return self.cpu_time_total_ns - self.children_ns

    @property
    def cpu_time_total(self) -> float:
        """Inclusive wall time in microseconds."""
        return self.cpu_time_total_ns / 1000.0

    @property
    def self_cpu_time_total(self) -> float:
        """Self wall time in microseconds."""
        return self.self_cpu_time_total_ns / 1000.0

    @property
    def key(self) -> str:
        """The name events are grouped by (as in PyTorch)."""
        return self.name

    @property
    def count(self) -> int:
        """Always 1 (so that events and averages sort alike)."""
        return 1


class _Recorder:
    """The part of a profile that the fallback talks to; one per ``profile`` block."""

    __slots__ = ("events", "open", "record_shapes", "profile_memory", "with_stack", "thread")

    def __init__(self, record_shapes: bool, profile_memory: bool, with_stack: bool, thread: int):
        self.events: list[FunctionEvent] = []
        self.open: list[FunctionEvent] = []
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.thread = thread

    def begin(self, op, keyset: int, args: tuple) -> FunctionEvent:
        event = FunctionEvent(op.name, _device_of(keyset, args), len(self.open), thread=self.thread)
        if self.record_shapes:
            event.input_shapes = [_shape_of(a) for a in args]
        if self.with_stack:
            event.stack = _user_stack()
        self.events.append(event)
        self.open.append(event)
        return event

    def end(self, event: FunctionEvent, start: int, end: int, args: tuple, out) -> None:
        event.start_ns, event.end_ns = start, end
        if self.open and self.open[-1] is event:
            self.open.pop()
        if self.profile_memory and out is not None:
            event.cpu_memory_usage = _new_bytes(args, out)
            event.self_cpu_memory_usage = event.cpu_memory_usage - event.children_memory
        if self.open:
            parent = self.open[-1]
            parent.children_ns += end - start
            parent.children_memory += event.cpu_memory_usage


def _python_layer_fallback(op, keyset: int, *args):
    """The boxed Python-layer kernel of every op: record into the thread's active profiles, run below."""
    recorders = _state.local().profilers
    below = keyset & _BELOW_PYTHON
    if not recorders:
        return op.redispatch(below, *args)
    events = [r.begin(op, keyset, args) for r in recorders]
    out = None
    start = _perf_counter_ns()
    try:
        out = op.redispatch(below, *args)
        return out
    finally:
        end = _perf_counter_ns()
        for recorder, event in zip(recorders, events):
            recorder.end(event, start, end, args, out)


_dispatch.register_fallback(Layer.Python, None, _python_layer_fallback, "opweave.profiler")


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


def _tensors(value):
    if isinstance(value, Tensor):
        yield value
    elif isinstance(value, (list, tuple)):
        for item in value:
            if isinstance(item, Tensor):
                yield item


def _new_bytes(args: tuple, out) -> int:
    """Bytes of the distinct output storages that are not storages of an input (meta storages count 0)."""
    seen = {id(t._storage) for a in args for t in _tensors(a)}
    total = 0
    for t in _tensors(out):
        storage = t._storage
        if id(storage) in seen:
            continue
        seen.add(id(storage))
        if t._device.type != "meta":
            total += storage.nbytes
    return total


_OPWEAVE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def _internal_dirs() -> tuple:
    """Folders whose frames are not user frames: opweave itself and the loaded backend plugins."""
    import sys

    dirs = [_OPWEAVE_DIR]
    for name in ("opweave_cpu",):
        module = sys.modules.get(name)
        path = getattr(module, "__file__", None)
        if path:
            dirs.append(os.path.dirname(os.path.abspath(path)) + os.sep)
    return tuple(dirs)


def _user_stack() -> list:
    internal = _internal_dirs()
    frames = traceback.extract_stack()
    return [
        f"{f.filename}({f.lineno}): {f.name}"
        for f in frames
        if not os.path.abspath(f.filename).startswith(internal) and not f.filename.startswith("<opweave op ")
    ]


# -- results --------------------------------------------------------------------------------


@dataclass
class FunctionEventAvg:
    """Events of one key (and input shapes, when grouped so) added up; times in microseconds."""

    key: str
    count: int = 0
    cpu_time_total_ns: int = 0
    self_cpu_time_total_ns: int = 0
    cpu_memory_usage: int = 0
    self_cpu_memory_usage: int = 0
    input_shapes: list | None = None
    device: str = ""

    def add(self, event) -> None:
        """Add one event (or another average) to the totals."""
        self.count += event.count
        self.cpu_time_total_ns += event.cpu_time_total_ns
        self.self_cpu_time_total_ns += event.self_cpu_time_total_ns
        self.cpu_memory_usage += event.cpu_memory_usage
        self.self_cpu_memory_usage += event.self_cpu_memory_usage

    @property
    def name(self) -> str:
        """Same as ``key``."""
        return self.key

    @property
    def cpu_time_total(self) -> float:
        """Total inclusive time, microseconds."""
        return self.cpu_time_total_ns / 1000.0

    @property
    def self_cpu_time_total(self) -> float:
        """Total self time, microseconds."""
        return self.self_cpu_time_total_ns / 1000.0

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
}


class EventList(list):
    """A list of events (or of averages) that prints as PyTorch's profiler table."""

    def __init__(self, items=(), *, profile_memory: bool = False, with_shapes: bool = False):
        super().__init__(items)
        self._profile_memory = profile_memory
        self._with_shapes = with_shapes

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
        return EventList(groups.values(), profile_memory=self._profile_memory, with_shapes=group_by_input_shape)

    @property
    def self_cpu_time_total(self) -> float:
        """Sum of the self times, microseconds (the total time profiled in operators)."""
        return sum(e.self_cpu_time_total_ns for e in self) / 1000.0

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
        ``"cpu_time"``, ``"count"``, ``"cpu_memory_usage"`` or ``"self_cpu_memory_usage"``.
        Columns: Name, Self CPU %, Self CPU, CPU total %, CPU total, CPU time avg, CPU Mem and
        Self CPU Mem (with ``profile_memory``), # of Calls, Input Shapes (when grouped by them).
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
            with_shapes=self._with_shapes,
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


def _build_table(rows, total_self_us, *, profile_memory, with_shapes, max_name, max_shapes, header) -> str:
    """Render ``rows`` (events or averages) like ``torch.autograd.profiler_util._build_table``."""
    names = [r.key for r in rows]
    name_width = min(max([len(n) for n in names] + [len("Name")]) + 4, max_name + 4)
    columns = ["Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg"]
    if profile_memory:
        columns += ["CPU Mem", "Self CPU Mem"]
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
        if profile_memory:
            values += [format_memory(r.cpu_memory_usage), format_memory(r.self_cpu_memory_usage)]
        values.append(str(count))
        if with_shapes:
            values.append(cut(str(r.input_shapes), max_shapes))
        out.append(fmt(values))
    out.append(line)
    out.append(f"Self CPU time total: {format_time(total_self_us)}")
    return "\n".join(out) + "\n"


# -- the context manager --------------------------------------------------------------------


class profile:
    """Record the operator calls of the calling thread inside a ``with`` block.

    ``profile_memory``: record the bytes of new output storages per call;
    ``record_shapes``: record the input shapes; ``with_stack``: record the user's call
    stack. Blocks nest (an inner block's events are recorded by every enclosing active
    profile too); the same object cannot be entered twice. After the block,
    :meth:`events` and :meth:`key_averages` give the results.
    """

    def __init__(self, profile_memory: bool = False, record_shapes: bool = False, with_stack: bool = False):
        self.profile_memory = bool(profile_memory)
        self.record_shapes = bool(record_shapes)
        self.with_stack = bool(with_stack)
        self._recorder: _Recorder | None = None
        self._saved = None
        self._entered = False

    def __enter__(self) -> profile:
        if self._entered:
            raise RuntimeError("opweave.profiler.profile: this profiler is already recording (it is not reentrant)")
        import threading

        state = _state.local()
        self._recorder = _Recorder(self.record_shapes, self.profile_memory, self.with_stack, threading.get_ident())
        self._saved = state.included
        state.profilers = state.profilers + (self._recorder,)
        state.included = state.included | _PYTHON_BIT
        self._entered = True
        return self

    def __exit__(self, *exc) -> None:
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

    def events(self) -> EventList:
        """Every recorded event, in the order the calls started."""
        recorder = self._require("events")
        return EventList(recorder.events, profile_memory=self.profile_memory, with_shapes=False)

    def key_averages(self, group_by_input_shape: bool = False) -> EventList:
        """The events added up per op name (and per input shapes when ``group_by_input_shape``)."""
        return self.events().key_averages(group_by_input_shape)

    def table(self, *args, **kwargs) -> str:
        """``self.key_averages().table(...)``."""
        return self.key_averages().table(*args, **kwargs)

    @property
    def self_cpu_time_total(self) -> float:
        """Total self time of all events, microseconds."""
        return self.events().self_cpu_time_total

    def export_chrome_trace(self, path: str) -> None:
        """Write the events as a Chrome trace (``chrome://tracing``, Perfetto) JSON file."""
        import json

        events = self._require("export_chrome_trace").events
        base = min((e.start_ns for e in events), default=0)
        trace = [
            {
                "name": e.name,
                "ph": "X",
                "cat": "cpu_op",
                "ts": (e.start_ns - base) / 1000.0,
                "dur": e.cpu_time_total_ns / 1000.0,
                "pid": os.getpid(),
                "tid": e.thread,
                "args": {"device": e.device, "depth": e.depth}
                | ({"Input Dims": e.input_shapes} if e.input_shapes is not None else {}),
            }
            for e in events
        ]
        with open(path, "w") as f:
            json.dump({"traceEvents": trace}, f)

    def _require(self, what: str) -> _Recorder:
        if self._recorder is None:
            raise RuntimeError(f"opweave.profiler.profile.{what}(): the profiler has not run (use it in a with block)")
        return self._recorder
