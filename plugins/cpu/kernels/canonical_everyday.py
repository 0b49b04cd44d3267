"""Direct CPU kernels for more everyday ops: cat, stack, mean.dim, clamp, where, linear, mse_loss, factories.

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
- ``where``: a bool condition and two tensors of one dtype, all of one shape (``prims::where``'s call);
- ``linear``: a 2-D float32/float64 input and weight (``mm``'s ``matmul``) and a 1-D bias (then ``add``);
- ``mse_loss``: two same-shape float32/float64 tensors (``d = x - y``, ``d * d``, then the sum over
  every dim, divided by the count for ``mean``);
- ``zeros``/``ones`` (and ``_like`` of a tensor with contiguous strides) of a plain dtype, strided and not pinned;
  ``arange(n)`` of a non-negative Python int (int64).
"""

from __future__ import annotations

import numpy as np
import opweave
from opweave.backends.kernel import Decline, contiguous_strides, is_wrapped_number

from .._backend import wrap_same
from ._common import native
from ._quiet import quiet, quiet_binary
from .elementwise_ternary import select

_FLOATS = frozenset({opweave.float32, opweave.float64})
_LARGEST = {dtype: float(np.finfo(dtype.numpy).max) for dtype in _FLOATS}  # each float dtype's largest finite value


def _same_layout_natives(tensors, what: str) -> list:
    """The NumPy arrays of ``tensors`` when they are C-contiguous, non-empty and of one dtype."""
    if not tensors:
        raise Decline(f"{what}: no tensors")
    dtype = tensors[0].dtype
    arrays = []
    for t in tensors:
        a = native(t)
        if t.dtype is not dtype or a.size == 0 or not a.flags.c_contiguous:  # the tensor's own layout, as NumPy sees it
            raise Decline(f"{what}: mixed dtypes, an empty or a non-contiguous tensor")
        arrays.append(a)
    return arrays


def _cat(tensors, dim=0):
    """cat of C-contiguous same-dtype tensors whose other dims agree (else the decomposition)."""
    arrays = _same_layout_natives(tensors, "cat")
    first = arrays[0].shape
    ndim = len(first)
    if ndim == 0 or not -ndim <= dim < ndim:
        raise Decline("cat: 0-dim tensor or dim out of range")
    axis = dim % ndim
    rest = first[axis + 1 :]
    for a in arrays:
        shape = a.shape
        if len(shape) != ndim or (axis and shape[:axis] != first[:axis]) or shape[axis + 1 :] != rest:
            raise Decline("cat: sizes differ outside the dim")
    return wrap_same(np.concatenate(arrays, axis), tensors[0].dtype)


def _stack(tensors, dim=0):
    """stack of C-contiguous same-dtype tensors of one shape (else the decomposition)."""
    arrays = _same_layout_natives(tensors, "stack")
    first = arrays[0].shape
    ndim = len(first) + 1
    if not -ndim <= dim < ndim:
        raise Decline("stack: dim out of range")
    for a in arrays:
        if a.shape != first:
            raise Decline("stack: shapes differ")
    axis = dim % ndim
    if axis == 0 and first:  # np.stack's result, from one C call (0-dim arrays do not concatenate)
        return wrap_same(np.concatenate(arrays).reshape((len(arrays), *first)), tensors[0].dtype)
    expanded = (*first[:axis], 1, *first[axis:])
    return wrap_same(np.concatenate([a.reshape(expanded) for a in arrays], axis=axis), tensors[0].dtype)  # np.stack


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
    return wrap_same(np.asarray(quiet(np.true_divide, total, scalar(count))), own)  # 0-dim: a NumPy scalar


def _bound(value, dtype):
    """A clamp bound as a Python number the dtype holds (None: none), else Decline."""
    if value is None:
        return None
    kind = type(value)
    if kind is not int and kind is not float:
        raise Decline("clamp: a bound that is not a Python int or float")
    largest = _LARGEST[dtype]
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
    return wrap_same(np.asarray(x), dtype)  # a 0-dim tensor's maximum is a NumPy scalar


def _where(condition, self, other):
    """where of a bool condition and two tensors of one dtype, all of one shape (else the decomposition)."""
    dtype = self.dtype
    shape = self.shape
    if (
        condition.dtype is not opweave.bool
        or other.dtype is not dtype
        or condition.shape != shape
        or other.shape != shape
        or is_wrapped_number(self)
        or is_wrapped_number(other)
    ):
        raise Decline("where: not a bool condition and two same-dtype tensors of one shape")
    return wrap_same(select(native(condition), native(self), native(other)), dtype)


_matmul, _add = quiet_binary(np.matmul), quiet_binary(np.add)


def _linear(input, weight, bias=None):  # noqa: A002 - PyTorch's argument name
    """linear of a 2-D float32/float64 input and weight (and a 1-D bias) of one dtype (else the decomposition).

    ``input @ weight.T`` (the ``mm`` prim's NumPy call), then ``+ bias`` broadcast over the rows.
    """
    dtype = input.dtype
    x, w = native(input), native(weight)
    if dtype not in _FLOATS or weight.dtype is not dtype or x.ndim != 2 or w.ndim != 2 or x.shape[1] != w.shape[1]:
        raise Decline("linear: not a 2-D float32/float64 input and weight of one dtype and inner size")
    if bias is not None and (bias.dtype is not dtype or bias.shape != (w.shape[0],) or is_wrapped_number(bias)):
        raise Decline("linear: a bias that is not 1-D of the weight's rows and the input's dtype")
    out = _matmul(x, w.T)
    if bias is not None:
        out = _add(out, native(bias))
    return wrap_same(out, dtype)


def _mse_loss(self, target, reduction=1):
    """mse_loss of two same-shape float32/float64 tensors (else the decomposition).

    ``(self - target)²``, then for ``mean`` the sum over every dim divided by the count, for ``sum`` the sum.
    """
    dtype = self.dtype
    shape = self.shape
    if dtype not in _FLOATS or target.dtype is not dtype or target.shape != shape or not shape:
        raise Decline("mse_loss: not two same-shape float32/float64 tensors of at least one dim")
    if type(reduction) is not int or reduction not in (0, 1, 2) or self.numel() == 0:
        raise Decline("mse_loss: an empty tensor or a reduction that is not 0, 1 or 2")
    return wrap_same(quiet(_squared_error, native(self), native(target), reduction), dtype)


def _squared_error(x: np.ndarray, y: np.ndarray, reduction: int) -> np.ndarray:
    d = np.subtract(x, y)
    np.multiply(d, d, out=d)
    if reduction == 0:
        return d
    total = np.add.reduce(d, tuple(range(d.ndim)), d.dtype)
    return np.asarray(total if reduction == 2 else np.true_divide(total, d.dtype.type(d.size)))


def _plain(dtype, layout, pin_memory, what: str, device=None):
    """``dtype`` when a factory of it can be made by NumPy directly (strided, not pinned, a plain dtype, the CPU)."""
    if layout is not None or pin_memory or dtype.is_quantized or dtype.is_float8:
        raise Decline(f"{what}: a layout, pinned memory, or a quantized/float8 dtype")
    if device is not None and device.type != "cpu":  # ``zeros_like(t, device="meta")`` of a CPU tensor
        raise Decline(f"{what}: a result on another device")
    return dtype


def _full(shape, fill: int, dtype) -> np.ndarray:
    """``np.full`` without its Python wrapper: zeros from ``np.zeros``, else an empty array filled."""
    if fill == 0:
        return np.zeros(shape, dtype)
    a = np.empty(shape, dtype)
    a.fill(fill)
    return a


def _filled(fill: int, what: str):
    def factory(size, dtype=None, layout=None, device=None, pin_memory=None):
        if dtype is None:
            dtype = opweave.get_default_dtype()
        if layout is not None or pin_memory or device is not None or dtype.is_quantized or dtype.is_float8:
            dtype = _plain(dtype, layout, pin_memory, what, device)  # declines all but a CPU device
        for n in size:
            if n < 0:
                raise Decline(f"{what}: a negative size")
        if fill == 0:
            return wrap_same(np.zeros(size, dtype.numpy), dtype)
        return wrap_same(_full(size, fill, dtype.numpy), dtype)

    factory.__doc__ = f"{what} of a plain dtype on the CPU (else the decomposition)."
    return factory


def _filled_like(fill: int, what: str):
    def factory(self, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
        dtype = _plain(dtype or self.dtype, layout, pin_memory, what, device)
        shape = self.shape
        if memory_format not in (None, "preserve_format", "contiguous_format") or self.stride() != contiguous_strides(
            shape
        ):  # preserve_format keeps a dense tensor's strides exactly, size-1 dims included
            raise Decline(f"{what}: a memory format, or a tensor whose strides are not the contiguous ones")
        return wrap_same(_full(shape, fill, dtype.numpy), dtype)

    factory.__doc__ = f"{what} of a C-contiguous CPU tensor, a plain dtype (else the decomposition)."
    return factory


def _arange(end, dtype=None, layout=None, device=None, pin_memory=None):
    """arange of a non-negative Python int end as int64 (else the decomposition)."""
    if type(end) is not int or end < 0 or dtype not in (None, opweave.int64):
        raise Decline("arange: not a non-negative int end with an int64 result")
    _plain(opweave.int64, layout, pin_memory, "arange", device)
    return wrap_same(np.arange(end, dtype=np.int64), opweave.int64)


KERNELS = {
    "zeros": _filled(0, "zeros"),
    "ones": _filled(1, "ones"),
    "zeros_like": _filled_like(0, "zeros_like"),
    "ones_like": _filled_like(1, "ones_like"),
    "arange": _arange,
    "where.self": _where,
    "linear": _linear,
    "mse_loss": _mse_loss,
    "cat": _cat,
    "stack": _stack,
    "mean.dim": _mean_dim,
    "clamp": _clamp,
}
