"""What a backend's prim kernel did, checked: failures and wrong results name the op, the backend and the plugin.

Every prim kernel runs behind the prim's meta function (inputs are validated
identically on every backend, and the meta function says what the result must
be). :func:`guard` wraps a kernel so that

- a result whose dtype, shape or device differs from the meta function's raises
  :class:`KernelError` naming the op, the backend and the plugin;
- an exception of the kinds a kernel raises on purpose for bad input
  (``TypeError``, ``ValueError``, ``IndexError``, ``NotImplementedError``, or any
  exception whose message starts with the op's name) keeps its type and message
  and gains a note naming the backend and the plugin;
- any other exception becomes a :class:`KernelError` (a ``RuntimeError``) naming
  them, chained to the original.

The checks cost a few attribute comparisons per prim call; canonical ops a
backend implements directly (the CPU's ``add.Tensor``) are not wrapped.
"""

from __future__ import annotations

from ._tensor import Tensor

_ON_PURPOSE = (TypeError, ValueError, IndexError, NotImplementedError, OverflowError, MemoryError, KeyboardInterrupt)


class KernelError(RuntimeError):
    """A backend kernel failed, or returned a result that does not match its prim's meta function.

    ``mismatch`` is True for a wrong result (dtype, shape or device), False for an exception.
    """

    def __init__(self, message: str, *, mismatch: bool = False):
        super().__init__(message)
        self.mismatch = mismatch


def _who(backend: str | None, source: str) -> str:
    return f"the kernel of backend '{backend}' from plugin '{source}'"


def failure(op, backend: str | None, source: str, exc: BaseException) -> BaseException:
    """The exception to raise for ``exc`` from a kernel: ``exc`` itself with a note, or a :class:`KernelError`."""
    text = str(exc)
    if isinstance(exc, _ON_PURPOSE) or text.startswith(op.name) or type(exc).__module__.startswith("opweave"):
        if hasattr(exc, "add_note") and not getattr(exc, "_opweave_noted", False):
            exc.add_note(f"raised in {op.name} by {_who(backend, source)}")
            exc._opweave_noted = True
        return exc
    return KernelError(f"{op.name}: {_who(backend, source)} raised {type(exc).__name__}: {text}")


def _describe(t: Tensor) -> str:
    return f"a {t._dtype.name} tensor of shape {list(t._shape)} on {t._device}"


def _mismatch(op, backend, source, got, expected, shape_known: bool, device_known: bool) -> str | None:
    if type(got) is not Tensor:
        return None if type(expected) is not Tensor else f"returned {type(got).__name__}, not a tensor"
    if type(expected) is not Tensor:
        return None
    if (
        got._dtype is expected._dtype
        and (not shape_known or got._shape == expected._shape)
        and (not device_known or got._device.type == backend)
    ):
        return None
    want = f"dtype {expected._dtype.name}"
    if shape_known:
        want += f", shape {list(expected._shape)}"
    if device_known:
        want += f", device type {backend}"
    return f"returned {_describe(got)}, but the prim's meta function says {want}"


def guard(op, fn, meta, backend: str | None, source: str):
    """``fn``, a prim kernel of ``backend`` from plugin ``source``, behind ``meta``: failures and results checked."""
    shape_known = "dynamic_output_shape" not in op.tags
    device_known = backend is not None and not any(a.name == "device" for a in op.schema.arguments)

    def check(out, expected):
        problem = _mismatch(op, backend, source, out, expected, shape_known, device_known)
        if problem is None and type(out) is tuple and type(expected) is tuple:
            for got, want in zip(out, expected):
                problem = _mismatch(op, backend, source, got, want, shape_known, device_known)
                if problem is not None:
                    break
        if problem is not None:
            raise KernelError(f"{op.name}: {_who(backend, source)} {problem}", mismatch=True)

    def checked(*args):
        expected = meta(*args)
        try:
            out = fn(*args)
        except Exception as exc:
            raised = failure(op, backend, source, exc)
            if raised is exc:
                raise
            raise raised from exc
        if type(out) is Tensor and type(expected) is Tensor:
            if (
                out._dtype is not expected._dtype
                or (shape_known and out._shape != expected._shape)
                or (device_known and out._device.type != backend)
            ):
                check(out, expected)
        elif out is not expected:
            check(out, expected)
        return out

    checked.unchecked = fn  # what a per-signature plan calls (its meta ran when the plan was traced)
    return checked
