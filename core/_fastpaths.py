"""Direct paths of the indexing entry point for host-storage tensors: ``t[i:j]``, ``t[mask]``, ``t[index]``.

``Tensor.__getitem__`` parses its index, builds views with ``prims.as_strided`` and runs
advanced indices through ``prims.nonzero`` and ``prims.index``: tens of Python calls for
what NumPy does in one. :func:`getitem` takes the three everyday forms directly — one slice
(a view made from the strides), one boolean mask over the leading dims, one integer index
tensor (NumPy's boolean indexing and ``take``, one call each) — and returns None for
anything else, so the general path runs.

It applies only where nothing can tell the difference: a tensor of a backend that declares
``Backend.host_storage`` (the CPU's; its elements are host memory NumPy reads) with only its Dense
key (not quantized, no Python subclass key), no autograd metadata (it neither requires grad nor
has a history), no mode on (the thread's included and excluded key sets are empty — no profiler,
autocast, deterministic mode or plan being traced — and it is not in inference mode), and the
kernels of the prims the general path would call still the core's or that backend's plugin's
(``_direct.Watch``). An index tensor must have the same key set. The result is made by the
backend's ``from_host_result``. Every other tensor keeps the general path. An index the direct
path cannot take as is (out of range, a mask of another shape) also goes the general way, which
raises PyTorch's error.
"""

from __future__ import annotations

import operator

import numpy as np

from . import _backends, _direct
from . import _dtype as _dt
from ._dispatcher import DISPATCHER
from ._state import local
from ._tensor import Size, Tensor

_STATE = local()
_INDEX_DTYPES = frozenset({_dt.int64, _dt.int32})
_HOST = _backends.host_storage_keys  # Dense key sets of the host-storage backends (updated in place)
#: The prims the general path calls for the forms taken here (any of them re-registered turns this off).
WATCH = _direct.Watch(("prims::as_strided", "prims::index", "prims::nonzero"))
_new = object.__new__
_CLAIMED = _backends._backends  # device type -> backend (a key set in _HOST is a claimed backend's)


def getitem(self: Tensor, idx) -> Tensor | None:
    """``self[idx]`` by a direct path, or None where the general path must run (see the module docstring)."""
    keys = self._keys
    if self._ag is not None or self._qparams is not None or keys not in _HOST:
        return None
    state = _STATE
    if state.included or state.excluded or state.inference:
        return None
    if WATCH.generation != DISPATCHER.plan_generation and not WATCH.refresh():
        return None
    shape = self._shape
    if not shape:
        return None
    if type(idx) is slice:
        return _slice(self, idx, shape)
    if type(idx) is not Tensor or idx._keys != keys or idx._ag is not None:
        return None
    device = self._device
    if idx._device is not device and idx._device != device:
        return None
    dtype = idx._dtype
    if dtype is not _dt.bool and dtype not in _INDEX_DTYPES:
        return None
    backend = _CLAIMED[device.type]
    a = self._native
    if a is None and (a := backend.host_view(self)) is None:
        return None
    i = idx._native
    if i is None and (i := backend.host_view(idx)) is None:
        return None
    if dtype is _dt.bool:
        mask_shape = idx._shape
        if not mask_shape or mask_shape != shape[: len(mask_shape)]:
            return None
        values = a[i]
    else:
        try:
            values = np.take(a, i, axis=0)
        except IndexError:  # out of range: the general path raises PyTorch's message
            return None
        if type(values) is not np.ndarray:  # a 0-dim index gives a NumPy scalar
            values = np.asarray(values)
    return backend.from_host_result(values, self._dtype, device)


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
    # What ``Tensor._make`` sets, without its checks (self's device and keys are settled). The same fields are
    # filled inline in ``_views._direct_method``: a shared function costs one Python call per view (+30 to
    # 60 ns, 3-6% of ``a[2:10]``, measured with bench/dispatch.py); tests/test_direct_view_slots.py
    # checks both set every slot of Tensor.
    view = _new(Tensor)
    view._st = self._storage
    view._shape = Size((length, *shape[1:]))
    view._stride = (stride[0] * step, *stride[1:])
    view._offset = self._offset + (start * stride[0] if length else 0)
    view._dtype, view._device, view._keys = self._dtype, self._device, self._keys
    view._native = None
    view._wrapped_number = False
    view._qparams = None
    view._ag = None
    base = self._base
    view._base = self if base is None else base
    return view
