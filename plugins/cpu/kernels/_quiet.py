"""NumPy calls with floating-point warnings off, cheaply, without touching the user's NumPy or warnings state.

The warnings (``invalid value encountered in subtract``...) come from NumPy's floating-point error
reporting, whose state (``np.seterr``) NumPy keeps in a context variable. The plugin never changes it
where the user's code runs; its NumPy calls run in :class:`contextvars.Context` objects whose state is
``all="ignore"`` instead (``with np.errstate(...)`` costs several microseconds per use, more than a
ufunc on a small array; ``Context.run`` costs tens of nanoseconds):

- :func:`quiet` runs any call in this thread's quiet context (a kernel calling another runs directly:
  it is quiet already).
- :func:`quiet_binary` / :func:`quiet_ternary` wrap a ufunc for the direct kernels: they enter one
  shared context (about 50 ns in all) and fall back to :func:`quiet` when that context is already
  entered: ``Context.run`` raises ``RuntimeError`` when another thread is inside it (NumPy releases
  the GIL in its loops).
- :func:`shared_quiet` is the same without the Python call, for ``a + b`` itself (about 40 ns, 3% of a
  16-element ``a + b``; a module-scoped warnings filter cost nothing per call but had to be kept alive
  through ``warnings.catch_warnings()`` by wrapping a private hook of the warnings module): its caller
  catches the ``RuntimeError`` and retries through :func:`quiet_binary`.

The module-scoped warnings filter of :func:`silence_direct_kernel_warnings` is only a safety net for
any NumPy call of the plugin outside these; nothing depends on it surviving ``warnings.catch_warnings()``.
"""

from __future__ import annotations

import contextvars
import functools
import threading
import warnings

import numpy as np

_inside = contextvars.ContextVar("opweave_cpu_quiet", default=False)
_thread = threading.local()  # ``ctx``: this thread's quiet context (it goes with its thread)


def _context() -> contextvars.Context:
    with np.errstate(all="ignore"):
        ctx = contextvars.copy_context()
    ctx.run(_inside.set, True)
    _thread.ctx = ctx
    return ctx


def quiet(fn, *args):
    """``fn(*args)`` with NumPy's floating-point warnings off (overflow, 0/0, invalid)."""
    if _inside.get():
        return fn(*args)
    try:
        ctx = _thread.ctx
    except AttributeError:
        ctx = _context()
    return ctx.run(fn, *args)


def _shared_context() -> contextvars.Context:
    ctx = contextvars.Context()  # empty: it holds NumPy's error state and nothing of the caller's
    ctx.run(np.seterr, all="ignore")  # sets the state inside ``ctx`` only
    return ctx


_SHARED = _shared_context()


def shared_quiet(ufunc) -> functools.partial:
    """``ufunc(*args)`` run in the shared quiet context, at no cost over the bare call (a C-level partial).

    It raises ``RuntimeError`` when the shared context is entered already (another thread is inside it); the
    caller then runs the same call through :func:`quiet_binary`. For ufuncs on NumPy arrays and Python numbers
    only, which cannot raise ``RuntimeError`` themselves.
    """
    return functools.partial(_SHARED.run, ufunc)


def quiet_binary(ufunc):
    """``ufunc(x, y)`` with NumPy's floating-point warnings off, at the cost of a Python call (for ``a + b``)."""
    run = _SHARED.run

    def call(x, y):
        try:
            return run(ufunc, x, y)
        except RuntimeError:  # the shared context is entered already (another thread is inside it)
            return quiet(ufunc, x, y)

    call.__name__ = call.__qualname__ = getattr(ufunc, "__name__", "call")
    return call


def quiet_ternary(ufunc):
    """``ufunc(x, y, out)`` with NumPy's floating-point warnings off, as :func:`quiet_binary`."""
    run = _SHARED.run

    def call(x, y, out):
        try:
            return run(ufunc, x, y, out)
        except RuntimeError:
            return quiet(ufunc, x, y, out)

    call.__name__ = call.__qualname__ = getattr(ufunc, "__name__", "call")
    return call


#: The modules whose NumPy calls the safety-net filter covers: the core's ``opweave.backends.kernel``
#: helpers the plugin builds kernels with, and the plugin's own.
_DIRECT_KERNEL_MODULES = r"(opweave\.backends\.kernel|opweave_cpu\.)"
_MESSAGES = r"(invalid value|overflow|divide by zero|underflow) encountered"


def silence_direct_kernel_warnings() -> None:
    """Ignore NumPy's floating-point RuntimeWarnings raised inside the CPU plugin's modules (PyTorch is silent).

    A safety net only: the prim kernels and the hot direct kernels run NumPy in a quiet error state
    (:func:`quiet`, :func:`quiet_binary`) and do not depend on it. It is added with the public
    ``warnings.filterwarnings``, scoped to the plugin's modules, so NumPy code of the user's still warns
    and filters the user adds later (``simplefilter("error")``) come first. A ``warnings.catch_warnings()``
    block that the plugin was loaded in drops it on exit, as it drops every filter added inside it.
    """
    warnings.filterwarnings("ignore", message=_MESSAGES, category=RuntimeWarning, module=_DIRECT_KERNEL_MODULES)
