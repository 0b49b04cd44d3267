"""NumPy calls with floating-point warnings off, cheaply.

``with np.errstate(all="ignore")`` costs several microseconds per use (more than a ufunc on
a small array). NumPy keeps its error state in a context variable, so each thread keeps one
:class:`contextvars.Context` copied inside ``errstate(all="ignore")`` and runs the NumPy call
in it (``Context.run`` costs next to nothing). A call made while that context already runs
(a kernel calling another) runs directly: it is quiet already.
"""

from __future__ import annotations

import contextvars
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


#: The modules whose NumPy calls run without :func:`quiet`: the direct kernels built by the core's
#: ``opweave.backends.kernel`` helpers and this plugin's own.
_DIRECT_KERNEL_MODULES = r"(opweave\.backends\.kernel|opweave_cpu\.)"


def silence_direct_kernel_warnings() -> None:
    """Turn off NumPy's floating-point RuntimeWarnings raised inside the CPU's kernels (PyTorch is silent).

    The direct kernels (``a + b``, ``a * 2.0``...) call NumPy ufuncs without :func:`quiet`, which would cost a
    third of a tiny ``a + b``; a warnings filter scoped to the kernels' modules costs nothing until a warning
    fires. NumPy code of the user's still warns; filters the user adds later (``simplefilter("error")``)
    come first, as the warnings module orders them.
    """
    warnings.filterwarnings(
        "ignore",
        message=r"(invalid value|overflow|divide by zero|underflow) encountered",
        category=RuntimeWarning,
        module=_DIRECT_KERNEL_MODULES,
    )
