"""NumPy calls with floating-point warnings off, cheaply.

``with np.errstate(all="ignore")`` costs several microseconds per use (more than a ufunc on
a small array). NumPy keeps its error state in a context variable, so each thread keeps one
:class:`contextvars.Context` copied inside ``errstate(all="ignore")`` and runs the NumPy call
in it (``Context.run`` costs next to nothing). A call made while that context already runs
(a kernel calling another) runs directly: it is quiet already.
"""

from __future__ import annotations

import contextvars
import re
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
_MESSAGES = r"(invalid value|overflow|divide by zero|underflow) encountered"
#: The filter as ``warnings.filterwarnings`` stores it (compiled patterns compare by pattern and flags).
_FILTER = ("ignore", re.compile(_MESSAGES, re.I), RuntimeWarning, re.compile(_DIRECT_KERNEL_MODULES), 0)


def silence_direct_kernel_warnings() -> None:
    """Turn off NumPy's floating-point RuntimeWarnings raised inside the CPU's kernels (PyTorch is silent).

    The direct kernels (``a + b``, ``a * 2.0``...) call NumPy ufuncs without :func:`quiet`, which would cost a
    third of a tiny ``a + b``; a warnings filter scoped to the kernels' modules costs nothing until a warning
    fires. NumPy code of the user's still warns; filters the user adds later (``simplefilter("error")``)
    come first, as the warnings module orders them.

    ``warnings.catch_warnings()`` puts back the filter list it saved on exit, so a filter added while the
    plugin loaded inside such a block would be lost; :func:`_keep_filter` puts it back whenever the warnings
    module announces a change of its filters (nothing runs per kernel call).
    """
    warnings.filterwarnings("ignore", message=_MESSAGES, category=RuntimeWarning, module=_DIRECT_KERNEL_MODULES)
    _keep_filter()


def _keep_filter() -> None:
    """Re-add the filter each time the warnings module reports its filters changed (once installed).

    ``catch_warnings.__exit__``, ``filterwarnings``, ``simplefilter`` and ``resetwarnings`` all end by calling
    the module's ``_filters_mutated`` hook (CPython 3.10 to 3.13; ``_filters_mutated_lock_held`` from 3.14);
    it is wrapped so that a list without the filter gets it back at the front. Where neither hook exists the
    filter is installed once, as before.
    """
    for hook in ("_filters_mutated", "_filters_mutated_lock_held"):
        original = getattr(warnings, hook, None)
        if original is None or getattr(original, "_opweave_cpu_filter", False):
            continue
        setattr(warnings, hook, _keeping(original))


def _keeping(original):
    def filters_mutated(*args, **kwargs):
        filters = warnings.filters
        if _FILTER not in filters:
            filters.insert(0, _FILTER)
        return original(*args, **kwargs)

    filters_mutated._opweave_cpu_filter = True  # type: ignore[attr-defined]
    filters_mutated.__doc__ = original.__doc__
    return filters_mutated
