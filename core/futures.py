"""``opweave.futures``: ``Future``, the result of asynchronous work (``torch.futures``).

A :class:`Future` holds a value (or an error) that becomes available later: the result of a
collective launched with ``async_op=True`` (``Work.get_future()``), or one a program sets
itself with :meth:`Future.set_result`. ``then`` chains a callback whose return value
completes a new Future; DDP's communication hooks return one per gradient bucket.

A Future may be driven by a source (``Work.get_future()``): asking it whether it is done
polls the source, and waiting waits for the source, so callbacks run in the thread that
asks or waits, once the source has completed.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, Generic, TypeVar

T = TypeVar("T")
S = TypeVar("S")

__all__ = ["Future", "collect_all", "wait_all"]


class Future(Generic[T]):
    """A value available later (``torch.futures.Future``).

    ``wait()`` blocks and returns the value (raising the error it completed with);
    ``done()`` asks; ``then(callback)`` returns a Future completed with ``callback(self)``;
    ``add_done_callback(callback)`` runs ``callback(self)`` on completion;
    ``set_result``/``set_exception`` complete it.
    """

    def __init__(self, *, devices: list | None = None) -> None:
        self._lock = threading.RLock()
        self._event = threading.Event()
        self._done = False
        self._value: Any = None
        self._exception: BaseException | None = None
        self._callbacks: list[Callable[[Future[T]], None]] = []
        self._poll: Callable[[], bool] | None = None  # source: non-blocking; True once it completed this Future
        self._block: Callable[[], None] | None = None  # source: blocks until it completed this Future
        self.devices = list(devices or [])

    @classmethod
    def _driven(cls, poll: Callable[[], bool], block: Callable[[], None]) -> Future:
        """A Future completed by a source: ``poll()`` (non-blocking) or ``block()`` complete it."""
        fut = cls()
        fut._poll, fut._block = poll, block
        return fut

    def done(self) -> bool:
        """Whether the Future has a value or an error (polls its source)."""
        if not self._done and self._poll is not None:
            self._poll()
        return self._done

    def wait(self) -> T:
        """Block until the Future is complete; its value, or raise the error it completed with."""
        if not self._done and self._block is not None:
            self._block()
        self._event.wait()
        if self._exception is not None:
            raise self._exception
        return self._value

    def value(self) -> T:
        """The value of a completed Future (raises the error it completed with; ``RuntimeError`` if not complete)."""
        if not self.done():
            raise RuntimeError("Future.value(): the Future is not completed yet; call wait() first")
        if self._exception is not None:
            raise self._exception
        return self._value

    def set_result(self, result: T) -> None:
        """Complete the Future with ``result`` and run its callbacks; ``RuntimeError`` if already complete."""
        self._complete(result, None)

    def set_exception(self, result: BaseException) -> None:
        """Complete the Future with the error ``result`` (raised by ``wait()``/``value()``)."""
        if not isinstance(result, BaseException):
            raise TypeError(f"Future.set_exception: expected an exception, got {type(result).__name__}")
        self._complete(None, result)

    def _complete(self, value, exception) -> None:
        with self._lock:
            if self._done:
                raise RuntimeError("Future can only be marked completed once.")
            self._value, self._exception, self._done = value, exception, True
            callbacks, self._callbacks = self._callbacks, []
        self._event.set()
        for callback in callbacks:
            callback(self)

    def add_done_callback(self, callback: Callable[[Future[T]], None]) -> None:
        """Run ``callback(self)`` once complete (now, if it is); its return value is ignored."""
        if not callable(callback):
            raise TypeError(f"Future.add_done_callback: callback must be callable, got {type(callback).__name__}")
        with self._lock:
            if not self._done:
                self._callbacks.append(callback)
                return
        callback(self)

    def then(self, callback: Callable[[Future[T]], S]) -> Future[S]:
        """A Future completed with ``callback(self)`` once this one completes (or with the error it raises)."""
        if not callable(callback):
            raise TypeError(f"Future.then: callback must be callable, got {type(callback).__name__}")
        child: Future[S] = Future._driven(self.done, self._wait_quietly)

        def run(parent: Future[T]) -> None:
            try:
                result = callback(parent)
            except BaseException as exc:  # handed to the child's wait()
                child.set_exception(exc)
            else:
                child.set_result(result)

        self.add_done_callback(run)
        return child

    def _wait_quietly(self) -> None:
        try:
            self.wait()
        except BaseException:
            if not self._done:  # the source failed without completing this Future: nothing carries the error
                raise

    def __repr__(self) -> str:
        return f"<opweave.futures.Future done={self._done}>"


def collect_all(futures: list[Future]) -> Future[list[Future]]:
    """A Future completed, with the list of ``futures``, once all of them are complete."""
    futures = list(futures)
    if not all(isinstance(f, Future) for f in futures):
        raise TypeError("collect_all: expected a list of opweave.futures.Future")

    def poll() -> bool:
        return all(f.done() for f in futures) and _finish()

    def block() -> None:
        for f in futures:
            f._wait_quietly()
        _finish()

    def _finish() -> bool:
        with combined._lock:
            if combined._done:
                return True
        try:
            combined.set_result(futures)
        except RuntimeError:  # completed meanwhile by another thread
            pass
        return True

    combined: Future[list[Future]] = Future._driven(poll, block)
    if not futures:
        combined.set_result([])
    return combined


def wait_all(futures: list[Future]) -> list:
    """Wait for every Future and return their values (raises the first error)."""
    return [f.wait() for f in collect_all(futures).wait()]
