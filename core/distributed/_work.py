"""``Work``: the handle of a collective launched with ``async_op=True``."""

from __future__ import annotations

import datetime
import time


class DistError(RuntimeError):
    """An error of ``opweave.distributed`` (PyTorch's ``torch.distributed.DistError``)."""


class DistBackendError(DistError):
    """The communication engine failed or timed out (PyTorch's ``torch.distributed.DistBackendError``)."""


def seconds(timeout) -> float | None:
    """A timeout given as ``timedelta`` or seconds, in seconds (None: no limit)."""
    if timeout is None:
        return None
    if isinstance(timeout, datetime.timedelta):
        return timeout.total_seconds()
    return float(timeout)


class Work:
    """A launched collective: ``wait()`` blocks until it is done, ``is_completed()`` asks.

    ``requests`` are engine requests with ``Test()`` (MPI requests); ``finish`` runs once,
    after they complete (copying staged results into the tensors, dividing for AVG).
    ``timeout`` (seconds) bounds ``wait()`` unless ``wait`` is given its own.
    """

    def __init__(self, name: str, requests=(), finish=None, result=(), timeout: float | None = None, keep=()):
        self._name = name
        self._requests = list(requests)
        self._finish = finish
        self._result = list(result)
        self._timeout = timeout
        self._keep = keep  # buffers the engine reads or writes until completion
        self._done = not self._requests
        self._exception: BaseException | None = None
        if self._done:
            self._complete()

    def _complete(self) -> None:
        self._done = True
        self._keep = ()
        finish, self._finish = self._finish, None
        if finish is not None:
            try:
                finish()
            except BaseException as exc:
                self._exception = exc
                raise

    def _poll(self) -> bool:
        if self._done:
            return True
        pending = []
        for r in self._requests:
            if not r.Test():
                pending.append(r)
            elif getattr(r, "exception", None) is not None and self._exception is None:
                self._exception = r.exception
        self._requests = pending
        if not pending:
            if self._exception is not None:
                self._done = True
                self._finish = None
            else:
                self._complete()
        return self._done

    def is_completed(self) -> bool:
        """Whether the collective has finished (results are in their tensors)."""
        return self._poll()

    def is_success(self) -> bool:
        """Whether it finished without an error."""
        return self._poll() and self._exception is None

    def exception(self) -> BaseException | None:
        """The error it finished with, if any."""
        return self._exception

    def wait(self, timeout=None) -> bool:
        """Block until the collective is done; ``DistBackendError`` after ``timeout`` (``timedelta`` or seconds)."""
        limit = seconds(timeout) if timeout is not None else self._timeout
        deadline = None if limit is None else time.monotonic() + limit
        while not self._poll():
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is None or remaining > 0:
                waiter = getattr(self._requests[0], "wait_for", None)
                if waiter is not None:  # a launched collective: sleep on its event
                    waiter(remaining)
                continue
            if deadline is not None:
                raise DistBackendError(
                    f"{self._name}: timed out after {limit:g} s waiting for the other ranks "
                    "(a rank did not join the collective, or joined a different one)"
                )
        if self._exception is not None:
            raise self._exception
        return True

    def result(self) -> list:
        """The tensors the collective wrote (after ``wait()``)."""
        return list(self._result)

    def get_future(self):
        """An ``opweave.futures.Future`` completed with :meth:`result` (the written tensors) when the work is done.

        Asking the Future (``done()``, ``wait()``) polls or waits for this work; an error of the
        collective completes the Future with that error.
        """
        future = getattr(self, "_future", None)
        if future is not None:
            return future
        from ..futures import Future

        def settle() -> None:
            if future._done:
                return
            error = self.exception()
            try:
                if error is not None:
                    future.set_exception(error)
                else:
                    future.set_result(self.result())
            except RuntimeError:  # settled already (by another thread asking at the same time)
                pass

        def poll() -> bool:
            if self.is_completed():
                settle()
            return future._done

        def block() -> None:
            try:
                self.wait()
            except BaseException:  # settle() hands the collective's error to the Future
                if self.exception() is None:
                    raise
            settle()

        future = self._future = Future._driven(poll, block)
        return future

    def source_rank(self) -> int:
        """For a ``recv``/``irecv``: the rank the message came from."""
        self.wait()
        source = getattr(self, "_source", None)
        if source is None:
            raise ValueError(f"{self._name}: source_rank() is only defined for receives")
        return source() if callable(source) else source

    def __repr__(self) -> str:
        return f"<Work {self._name} completed={self._done}>"
