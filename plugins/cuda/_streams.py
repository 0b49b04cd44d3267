"""Streams and events: ``opweave.cuda.Stream``, ``Event``, the current stream of each device in each thread.

As in PyTorch: each thread has a current stream per device, the legacy default stream
(handle 0) until ``with opweave.cuda.stream(s):`` or ``set_stream(s)`` chooses another;
kernels, device copies and allocations go on the current stream. New streams are
non-blocking with respect to the legacy default stream and come, as PyTorch's do, from a
pool of :data:`POOL` streams per device and priority handed out round-robin and never
destroyed: memory is freed on the stream it was allocated on, so a stream must outlive
every block allocated on it.
"""

from __future__ import annotations

import contextlib
import threading

from . import _driver

_state = threading.local()
#: Streams per device and priority (PyTorch's kStreamsPerPool).
POOL = 32
_pools: dict = {}  # (device index, priority) -> [handles, next position]
_pool_lock = threading.Lock()


def _pooled(rt, priority: int) -> int:
    """A raw stream of device ``rt`` with ``priority``: the pool's next one (created on first use)."""
    with _pool_lock:
        entry = _pools.setdefault((rt.index, priority), [[], 0])
        handles, position = entry
        if len(handles) < POOL:
            rt.enter()
            flags = rt.driver.CUstream_flags.CU_STREAM_NON_BLOCKING.value
            handles.append(int(_driver.call("cuStreamCreateWithPriority", flags, priority)))
            return handles[-1]
        entry[1] = (position + 1) % POOL
        return handles[position]


def current_handle(index: int) -> int:
    """The raw ``CUstream`` of the current stream of device ``index`` in this thread (0: legacy default)."""
    streams = getattr(_state, "streams", None)
    if not streams:
        return 0
    s = streams.get(index)
    return 0 if s is None else s.cuda_stream


def _set(index: int, stream) -> None:
    streams = getattr(_state, "streams", None)
    if streams is None:
        streams = _state.streams = {}
    streams[index] = stream


class Stream:
    """A CUDA stream of one device (``cuda_stream`` is its raw ``CUstream`` handle as an int)."""

    def __init__(self, device=None, priority: int = 0, *, stream_ptr: int | None = None):
        from . import _backend

        self.device_index = _backend.device_index(device)
        if stream_ptr is not None:
            self.cuda_stream = int(stream_ptr)
            return
        self.cuda_stream = _pooled(_backend.runtime_at(self.device_index), priority)

    @property
    def device(self):
        """The stream's device."""
        import opweave

        return opweave.device("cuda", self.device_index)

    def query(self) -> bool:
        """Whether all work queued on the stream has finished."""
        driver, _ = _driver.load()
        (err,) = driver.cuStreamQuery(self.cuda_stream)
        if err == driver.CUresult.CUDA_ERROR_NOT_READY:
            return False
        if err != driver.CUresult.CUDA_SUCCESS:
            raise RuntimeError(f"cuStreamQuery failed: {_driver.error_text(driver, err)}")
        return True

    def synchronize(self) -> None:
        """Wait for the work queued on the stream."""
        _driver.call("cuStreamSynchronize", self.cuda_stream)

    def wait_event(self, event: Event) -> None:
        """Make later work on this stream wait for ``event``."""
        _driver.call("cuStreamWaitEvent", self.cuda_stream, event.cuda_event, 0)

    def wait_stream(self, stream: Stream) -> None:
        """Make later work on this stream wait for the work queued on ``stream`` so far."""
        self.wait_event(stream.record_event())

    def record_event(self, event: Event | None = None) -> Event:
        """Record ``event`` (a new one if None) on this stream and return it."""
        event = Event() if event is None else event
        event.record(self)
        return event

    def __eq__(self, other) -> bool:
        return isinstance(other, Stream) and (self.cuda_stream, self.device_index) == (
            other.cuda_stream,
            other.device_index,
        )

    def __hash__(self) -> int:
        return hash((self.cuda_stream, self.device_index))

    def __repr__(self) -> str:
        return f"<opweave.cuda.Stream device=cuda:{self.device_index} cuda_stream={self.cuda_stream:#x}>"


def current_stream(device=None) -> Stream:
    """The current stream of ``device`` (default: the current device) in this thread."""
    from . import _backend

    index = _backend.device_index(device)
    streams = getattr(_state, "streams", None) or {}
    found = streams.get(index)
    return found if found is not None else Stream(index, stream_ptr=0)


def default_stream(device=None) -> Stream:
    """The legacy default stream (handle 0) of ``device``."""
    from . import _backend

    return Stream(_backend.device_index(device), stream_ptr=0)


def set_stream(stream: Stream) -> None:
    """Make ``stream`` the current stream of its device in this thread."""
    _set(stream.device_index, stream)


@contextlib.contextmanager
def stream(s: Stream | None):
    """``with opweave.cuda.stream(s):`` -- ``s`` is the current stream of its device inside (None: no change)."""
    if s is None:
        yield None
        return
    previous = current_stream(s.device_index)
    _set(s.device_index, s)
    try:
        yield s
    finally:
        _set(s.device_index, previous)


class Event:
    """A CUDA event: ``record`` on a stream, ``synchronize``, ``query``, ``elapsed_time`` (milliseconds)."""

    def __init__(self, enable_timing: bool = False, blocking: bool = False, interprocess: bool = False):
        from . import _backend

        if interprocess:
            raise NotImplementedError("opweave.cuda.Event: interprocess events are not supported")
        rt = _backend.runtime_at(_backend.device_index(None))
        rt.enter()
        flags = rt.driver.CUevent_flags
        value = 0 if enable_timing else flags.CU_EVENT_DISABLE_TIMING.value
        if blocking:
            value |= flags.CU_EVENT_BLOCKING_SYNC.value
        self.enable_timing = enable_timing
        self._handle = _driver.call("cuEventCreate", value)
        self.cuda_event = int(self._handle)
        self._recorded = False

    def record(self, stream: Stream | None = None) -> None:
        """Record the event on ``stream`` (default: the current stream)."""
        handle = current_stream().cuda_stream if stream is None else stream.cuda_stream
        _driver.call("cuEventRecord", self.cuda_event, handle)
        self._recorded = True

    def wait(self, stream: Stream | None = None) -> None:
        """Make later work on ``stream`` (default: the current one) wait for this event."""
        (current_stream() if stream is None else stream).wait_event(self)

    def query(self) -> bool:
        """Whether the work before the event's record has finished (True if it was never recorded)."""
        driver, _ = _driver.load()
        (err,) = driver.cuEventQuery(self.cuda_event)
        if err == driver.CUresult.CUDA_ERROR_NOT_READY:
            return False
        if err != driver.CUresult.CUDA_SUCCESS:
            raise RuntimeError(f"cuEventQuery failed: {_driver.error_text(driver, err)}")
        return True

    def synchronize(self) -> None:
        """Wait until the event has completed."""
        _driver.call("cuEventSynchronize", self.cuda_event)

    def elapsed_time(self, end_event: Event) -> float:
        """Milliseconds between this event's record and ``end_event``'s (both recorded, with timing enabled)."""
        if not (self.enable_timing and end_event.enable_timing):
            raise RuntimeError("elapsed_time: both events must be created with enable_timing=True")
        if not (self._recorded and end_event._recorded):
            raise RuntimeError("elapsed_time: both events must be recorded first")
        return float(_driver.call("cuEventElapsedTime", self.cuda_event, end_event.cuda_event))

    def __del__(self):
        if getattr(self, "cuda_event", None):
            try:
                _driver.call("cuEventDestroy", self.cuda_event)
            except Exception:  # interpreter shutdown
                pass
