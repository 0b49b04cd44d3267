"""Grad mode: ``no_grad``, ``enable_grad``, ``set_grad_enabled``, ``inference_mode``.

Grad mode is thread-local (``_state``). Turning it off excludes the Autograd dispatch
key from every call of the thread, so ops on tensors that require grad record nothing
and cost what they cost without autograd.
"""

from __future__ import annotations

import functools

from .. import _keys
from .._state import local

AUTOGRAD_BIT = _keys.layer_bit(_keys.Layer.Autograd)


def is_grad_enabled() -> bool:
    """Whether operations of this thread record gradients."""
    return local().grad_enabled


def is_inference_mode_enabled() -> bool:
    """Whether this thread is inside ``inference_mode``."""
    return local().inference


def _set(enabled: bool) -> None:
    state = local()
    state.grad_enabled = enabled
    if enabled:
        state.excluded &= ~AUTOGRAD_BIT
    else:
        state.excluded |= AUTOGRAD_BIT


class _GradModeContext:
    """Base of the grad-mode context managers: usable as ``with`` blocks and as decorators."""

    _target: bool

    def __enter__(self):
        self._saved = local().grad_enabled
        _set(self._target)
        return self

    def __exit__(self, *exc) -> None:
        _set(self._saved)

    def __call__(self, fn):
        """Decorate ``fn`` so that it runs inside this mode."""

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.clone():
                return fn(*args, **kwargs)

        return wrapper

    def _copy_of(self, other):
        self.__dict__.update({k: v for k, v in other.__dict__.items() if k != "_saved"})
        return self

    def clone(self):
        """A fresh context manager with the same setting."""
        return self.__class__.__new__(self.__class__)._copy_of(self)


class no_grad(_GradModeContext):  # noqa: N801 - PyTorch's name
    """Disable gradient recording inside the block (or the decorated function; ``@no_grad`` or ``@no_grad()``)."""

    def __new__(cls, orig_func=None):
        self = super().__new__(cls)
        self._target = False
        return self if orig_func is None else self(orig_func)

    def __init__(self, orig_func=None):
        pass


class enable_grad(_GradModeContext):  # noqa: N801
    """Enable gradient recording inside the block (or the decorated function), even under ``no_grad``."""

    def __init__(self):
        self._target = True


class set_grad_enabled(_GradModeContext):  # noqa: N801
    """Set grad mode to ``mode``: takes effect at once, and as a context manager restores it on exit."""

    def __init__(self, mode: bool):
        if not isinstance(mode, bool):
            raise TypeError(f"set_grad_enabled(): argument 'mode' must be bool, not {type(mode).__name__}")
        self._target = mode
        self._saved = local().grad_enabled
        _set(mode)

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        _set(self._saved)


class inference_mode(_GradModeContext):  # noqa: N801
    """Disable gradient recording and version-counter bookkeeping of autograd (``mode=False``: no effect)."""

    def __init__(self, mode: bool = True):
        self._target = not mode
        self.mode = mode

    def __enter__(self):
        state = local()
        self._saved, self._saved_inference = state.grad_enabled, state.inference
        if self.mode:
            _set(False)
            state.inference = True
        return self

    def __exit__(self, *exc) -> None:
        _set(self._saved)
        local().inference = self._saved_inference
