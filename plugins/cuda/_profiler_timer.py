"""``opweave.profiler``'s device timer on CUDA: timing events recorded on the current stream.

The profiler asks the backend for a timer per device (``Backend.profiler_timer``), records a
mark before and after each op and resolves the pairs when its block ends. A mark here is a
``CUevent`` recorded on the current stream of the op's device (``cuEventRecord``), as
PyTorch's ``use_cuda`` profiler did; resolving waits for the end event
(``cuEventSynchronize``) and reads ``cuEventElapsedTime`` (milliseconds, about half a
microsecond resolution). Resolved events go back to a free list for the next marks.
"""

from __future__ import annotations

from opweave.profiler import DeviceTimer

from . import _driver, _streams

#: Free events kept for reuse; beyond this, resolved events are destroyed.
KEEP = 4096


class EventTimer(DeviceTimer):
    """The device timer of one CUDA device's runtime."""

    def __init__(self, runtime):
        self.runtime = runtime
        self._free: list[int] = []

    def record(self) -> int:
        """Record a timing event on the device's current stream; return its handle."""
        rt = self.runtime
        rt.enter()
        event = self._free.pop() if self._free else int(_driver.call("cuEventCreate", 0))  # 0: timing enabled
        _driver.call("cuEventRecord", event, _streams.current_handle(rt.index))
        return event

    def elapsed_ns(self, start: int, end: int) -> int:
        """Nanoseconds between two recorded events (waits for ``end``); both may be reused afterwards."""
        self.runtime.enter()
        _driver.call("cuEventSynchronize", end)
        ms = float(_driver.call("cuEventElapsedTime", start, end))
        for event in (start, end):
            if len(self._free) < KEEP:
                self._free.append(event)
            else:
                _driver.call("cuEventDestroy", event)
        return round(ms * 1_000_000)
