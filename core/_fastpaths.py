"""Direct CPU paths of the indexing entry point: ``t[i:j]``, ``t[mask]``, ``t[index]``.

``Tensor.__getitem__`` parses its index, builds views with ``prims.as_strided`` and runs
advanced indices through ``prims.nonzero`` and ``prims.index``: tens of Python calls for
what NumPy does in one. :func:`getitem` takes the three everyday forms directly — one slice
(a view made from the strides), one boolean mask over the leading dims, one integer index
tensor (NumPy's boolean indexing and ``take``, one call each) — and returns None for
anything else, so the general path runs.

It applies only where nothing can tell the difference: a CPU tensor, not quantized, with no
autograd metadata (it neither requires grad nor has a history), and no mode on (the thread's
included and excluded key sets are empty — no profiler, autocast, deterministic mode or plan
being traced — and it is not in inference mode). Every other device keeps the general path.
An index the direct path cannot take as is (out of range, a mask of another shape) also
goes the general way, which raises PyTorch's error.
"""

from __future__ import annotations

import operator

import numpy as np

from . import _backends
from . import _dtype as _dt
from ._state import local
from ._tensor import Size, Tensor

_STATE = local()
_INDEX_DTYPES = frozenset({_dt.int64, _dt.int32})
_wrap = None  # ``native_wrapper`` of the CPU device (made on first use: it imports the kernel API)


def _cpu_wrap():
    global _wrap
    from ._device import device
    from .backends.kernel import native_wrapper

    _wrap = native_wrapper(device("cpu"))
    return _wrap


def _native(t: Tensor) -> np.ndarray:
    a = t._native
    return a if a is not None else _backends.get("cpu").host_view(t)


def getitem(self: Tensor, idx) -> Tensor | None:
    """``self[idx]`` by a direct path, or None where the general path must run (see the module docstring)."""
    if self._ag is not None or self._qparams is not None or self._device.type != "cpu":
        return None
    state = _STATE
    if state.included or state.excluded or state.inference:
        return None
    shape = self._shape
    if not shape:
        return None
    if type(idx) is slice:
        return _slice(self, idx, shape)
    if type(idx) is not Tensor or idx._device.type != "cpu" or idx._ag is not None or idx._qparams is not None:
        return None
    dtype = idx._dtype
    if dtype is _dt.bool:
        mask_shape = idx._shape
        if not mask_shape or mask_shape != shape[: len(mask_shape)]:
            return None
        values = _native(self)[_native(idx)]
    elif dtype in _INDEX_DTYPES:
        try:
            values = np.asarray(np.take(_native(self), _native(idx), axis=0))  # a 0-dim index gives a scalar
        except IndexError:  # out of range: the general path raises PyTorch's message
            return None
    else:
        return None
    return (_wrap or _cpu_wrap())(values, self._dtype)


def _slice(self: Tensor, s: slice, shape) -> Tensor | None:
    """``self[start:stop:step]`` along dim 0 as a view (what ``_indexing._apply`` computes)."""
    step = s.step
    if step is not None:
        step = operator.index(step)
        if step <= 0:
            return None  # the general path raises PyTorch's error
    size = shape[0]
    start, stop, step = s.indices(size)
    length = max(0, -(-(stop - start) // step))
    stride = self._stride if self._stride is not None else self.stride()
    view = Tensor._make(
        self._storage,
        Size((length, *shape[1:])),
        (stride[0] * step, *stride[1:]),
        self._offset + (start * stride[0] if length else 0),
        self._dtype,
        self._device,
        self._keys,
    )
    view._base = self if self._base is None else self._base
    return view
