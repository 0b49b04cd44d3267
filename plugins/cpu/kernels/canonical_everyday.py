"""Direct CPU kernels for more everyday canonical ops: cat, stack, mean.dim, clamp, relu.

Like ``canonical``, each takes the common case in one or two NumPy calls and declines the
rest (``raise Decline``), so the op's reference decomposition runs those calls and raises
its errors. The common case computes what the decomposition computes, in the same dtype
and order, so results agree bit for bit (``tests/test_cpu_direct.py``):

- ``cat``/``stack``: C-contiguous tensors of one dtype, no empty one, the other dims equal
  (the decomposition's result is C-contiguous for them too);
- ``mean.dim``: a float32/float64 tensor, no ``dtype``, distinct dims, a non-empty reduction
  (``sum`` in the input's dtype, then a division by the count in that dtype);
- ``clamp``: a float32/float64 tensor and Python int/float bounds the dtype holds
  (``maximum`` then ``minimum``, as the decomposition);
- ``relu``: a float32/float64 tensor (``where(x <= 0, 0, x)``: NaN stays, -0.0 becomes 0).
"""

from __future__ import annotations

import numpy as np
import opweave
from opweave.backends.kernel import Decline

from ._common import native, wrap
from ._quiet import quiet

_FLOATS = frozenset({opweave.float32, opweave.float64})


def _same_layout_natives(tensors, what: str) -> list:
    """The NumPy arrays of ``tensors`` when they are C-contiguous, non-empty and of one dtype."""
    if not tensors:
        raise Decline(f"{what}: no tensors")
    dtype = tensors[0].dtype
    arrays = []
    for t in tensors:
        if t.dtype is not dtype or t.numel() == 0 or not t.is_contiguous():
            raise Decline(f"{what}: mixed dtypes, an empty or a non-contiguous tensor")
        arrays.append(native(t))
    return arrays


def _cat(tensors, dim=0):
    """cat of C-contiguous same-dtype tensors whose other dims agree (else the decomposition)."""
    arrays = _same_layout_natives(tensors, "cat")
    first = arrays[0].shape
    ndim = len(first)
    if ndim == 0 or not -ndim <= dim < ndim:
        raise Decline("cat: 0-dim tensor or dim out of range")
    axis = dim % ndim
    for a in arrays:
        shape = a.shape
        if len(shape) != ndim or shape[:axis] != first[:axis] or shape[axis + 1 :] != first[axis + 1 :]:
            raise Decline("cat: sizes differ outside the dim")
    return wrap(np.concatenate(arrays, axis=axis), tensors[0].dtype)


def _stack(tensors, dim=0):
    """stack of C-contiguous same-dtype tensors of one shape (else the decomposition)."""
    arrays = _same_layout_natives(tensors, "stack")
    first = arrays[0].shape
    ndim = len(first) + 1
    if not -ndim <= dim < ndim or any(a.shape != first for a in arrays):
        raise Decline("stack: shapes differ or dim out of range")
    return wrap(np.stack(arrays, axis=dim % ndim), tensors[0].dtype)


def _mean_dim(self, dim, keepdim=False, dtype=None):
    """mean over dims of a float32/float64 tensor without a dtype argument (else the decomposition)."""
    own = self.dtype
    shape = self.shape
    ndim = len(shape)
    if dtype is not None or own not in _FLOATS or ndim == 0:
        raise Decline("mean.dim: not float32/float64, a dtype argument or a 0-dim tensor")
    if dim is None:
        axes = tuple(range(ndim))
    else:
        if not dim or any(not -ndim <= d < ndim for d in dim):
            raise Decline("mean.dim: no dims or a dim out of range")
        axes = tuple(sorted({d % ndim for d in dim}))
        if len(axes) != len(dim):
            raise Decline("mean.dim: a dim repeated")
    count = 1
    for d in axes:
        count *= shape[d]
    if count == 0:
        raise Decline("mean.dim: an empty reduction")
    x = native(self)
    scalar = x.dtype.type
    total = quiet(np.add.reduce, x, axes, x.dtype, None, keepdim)  # what np.sum (the sum prim) runs
    return wrap(quiet(np.true_divide, total, scalar(count)), own)


def _bound(value, dtype):
    """A clamp bound as a Python number the dtype holds (None: none), else Decline."""
    if value is None:
        return None
    kind = type(value)
    if kind is not int and kind is not float:
        raise Decline("clamp: a bound that is not a Python int or float")
    largest = float(np.finfo(dtype.numpy).max)
    if not -largest <= value <= largest:  # NaN, inf or out of the dtype's range: the decomposition
        raise Decline("clamp: a bound out of the dtype's finite range")
    return value


def _clamp(self, min=None, max=None):
    """clamp of a float32/float64 tensor with Python number bounds (else the decomposition)."""
    dtype = self.dtype
    if dtype not in _FLOATS or (min is None and max is None):
        raise Decline("clamp: not float32/float64, or no bound")
    lo, hi = _bound(min, dtype), _bound(max, dtype)
    x = native(self)
    scalar = x.dtype.type
    if lo is not None:
        x = np.maximum(x, scalar(lo))
    if hi is not None:
        x = np.minimum(x, scalar(hi))
    return wrap(x, dtype)


def _relu(self):
    """relu of a float32/float64 tensor: ``where(x <= 0, 0, x)`` (else the decomposition)."""
    dtype = self.dtype
    if dtype not in _FLOATS:
        raise Decline("relu: not float32/float64")
    x = native(self)
    zero = x.dtype.type(0)
    return wrap(quiet(np.where, quiet(np.less_equal, x, zero), zero, x), dtype)


KERNELS = {
    "cat": _cat,
    "stack": _stack,
    "mean.dim": _mean_dim,
    "clamp": _clamp,
    "relu": _relu,
}
