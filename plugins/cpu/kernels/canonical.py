"""Direct CPU kernels for hot canonical ops.

Each handles the common case in one NumPy call — same dtype (float32 or
float64), same shape, no alpha — and declines everything else (``raise Decline``), so the dispatcher
runs the op's reference decomposition and results agree with it (tests/test_cpu_direct.py checks that).
Their arithmetic runs in NumPy's ``ignore`` error state (``inf - inf`` is NaN silently, as in PyTorch):
``a + b`` through :func:`._quiet.shared_quiet`, the rest through :func:`._quiet.quiet_binary` /
:func:`._quiet.quiet_ternary`.
"""

from __future__ import annotations

import numpy as np
import opweave
from opweave.backends.kernel import Decline, cached_native, is_wrapped_number, same_kind_binary

from .._backend import wrap_same
from ._common import native, wrap
from ._quiet import quiet_binary, quiet_ternary, shared_quiet

_FAST_DTYPES = frozenset({opweave.float32, opweave.float64})
_LARGEST = {dtype: float(np.finfo(dtype.numpy).max) for dtype in _FAST_DTYPES}  # each dtype's largest finite value
_SCALAR = {dtype: dtype.numpy.type for dtype in _FAST_DTYPES}  # its NumPy scalar type


def _binary(name: str, ufunc, result_dtype=None):
    """The ``.Tensor`` kernel of a binary op; arithmetic (no ``result_dtype``) runs quiet, comparisons as they are."""
    what = f"{name}.Tensor"
    if result_dtype is None:
        same_kind = same_kind_binary(shared_quiet(ufunc), _FAST_DTYPES, wrap_same, native, what)
        ufunc = quiet_binary(ufunc)
    else:
        same_kind = same_kind_binary(ufunc, _FAST_DTYPES, wrap_same, native, what, result_dtype)
    retry = same_kind_binary(ufunc, _FAST_DTYPES, wrap_same, native, what, result_dtype)

    def kernel(x, y, *rest):
        if rest and not (type(rest[0]) is int and rest[0] == 1):
            return _scaled(name, ufunc, x, y, rest[0], result_dtype)
        try:
            return same_kind(x, y)
        except Decline:
            pass
        except RuntimeError:  # the shared quiet context is in use by another thread (see ._quiet.shared_quiet)
            return retry(x, y)
        # Two same-shape tensors of different real dtypes that promote to float32/float64 (``a + i``):
        # both are converted to the promoted dtype and ``ufunc`` runs there, as the decomposition does.
        dtype, other = x.dtype, y.dtype
        if x.shape != y.shape or is_wrapped_number(x) or is_wrapped_number(y) or dtype.is_complex or other.is_complex:
            raise Decline(f"{name}.Tensor: not two same-shape real tensors")
        common = opweave.promote_types(dtype, other)
        if common not in _FAST_DTYPES:
            raise Decline(f"{name}.Tensor: the operands do not promote to float32/float64")
        return wrap_same(_promoted(ufunc, native(x), native(y), common.numpy), result_dtype or common)

    kernel.__doc__ = (
        f"{name}.Tensor for same-dtype float32/float64 operands (with any Python number alpha), one and a "
        "Python number, or two same-shape real tensors promoting to float32/float64 (else the decomposition)."
    )
    return kernel


def _scaled(name: str, ufunc, x, y, alpha, result_dtype):
    """``ufunc(x, y * alpha)`` for two same-shape tensors of one float dtype (the decomposition's ``mul``, then
    ``ufunc``), alpha a Python int or float the dtype holds."""
    dtype = x.dtype
    kind = type(alpha)
    shape = x.shape
    largest = _LARGEST.get(dtype)
    if (
        (kind is not int and kind is not float)
        or dtype is not y.dtype
        or largest is None
        or shape != y.shape
        or (not shape and (is_wrapped_number(x) or is_wrapped_number(y)))  # a wrapped number is 0-dim
    ):
        raise Decline(f"{name}.Tensor: alpha with operands that are not two same-shape float32/float64 tensors")
    if not -largest <= alpha <= largest:
        raise Decline(f"{name}.Tensor: alpha out of the dtype's finite range")
    return wrap_same(_times_then(ufunc, native(x), native(y), _SCALAR[dtype](alpha)), result_dtype or dtype)


_multiply = quiet_binary(np.multiply)


def _times_then(ufunc, a: np.ndarray, b: np.ndarray, alpha) -> np.ndarray:
    return np.asarray(ufunc(a, _multiply(b, alpha)))


def _binary_out(name: str, functional, ufunc=None):
    """The ``out=`` kernel of a binary op: ``functional``'s result copied into ``out`` when ``out`` is a
    C-contiguous tensor of the result's dtype and shape sharing no memory with the operands. Two same-shape
    tensors of ``out``'s float32/float64 dtype (alpha 1) are computed by ``ufunc`` straight into ``out``."""
    into = None if ufunc is None else quiet_ternary(ufunc)

    def kernel(x, y, *rest):  # (alpha, out) or (out,): mul and div have no alpha
        out = rest[-1]
        dtype = out.dtype
        alpha = rest[0] if len(rest) == 2 else 1
        if ufunc is not None and x.dtype is dtype and y.dtype is dtype and type(alpha) is int and alpha == 1:
            target, a, b = cached_native(out), cached_native(x), cached_native(y)  # None: not made yet
            if (
                target is not None
                and a is not None
                and b is not None
                and dtype in _FAST_DTYPES
                and a.shape == b.shape == target.shape
                and target.flags.c_contiguous
                and (a.ndim or not (is_wrapped_number(x) or is_wrapped_number(y)))  # a wrapped number is 0-dim
                and not np.may_share_memory(target, a)
                and not np.may_share_memory(target, b)
            ):
                into(a, b, target)
                return out
        result = functional(x, y, *rest[:-1])
        target = native(out)
        if out.dtype is not result.dtype or target.shape != result.shape or not target.flags.c_contiguous:
            raise Decline(f"{name}: out= of another dtype, shape or layout")
        if np.may_share_memory(target, native(x)) or np.may_share_memory(target, native(y)):
            raise Decline(f"{name}: out= shares memory with an operand")
        np.copyto(target, native(result))
        return out

    kernel.__doc__ = f"{name} into a fresh-layout out= tensor (else the decomposition)."
    return kernel


def _promoted(ufunc, a: np.ndarray, b: np.ndarray, target) -> np.ndarray:
    """``ufunc`` on ``a`` and ``b`` converted to ``target`` (no copy of one already in it)."""
    return np.asarray(ufunc(a.astype(target, copy=False), b.astype(target, copy=False)))


_add_reduce = quiet_binary(np.add.reduce)
_maximum_reduce = quiet_binary(np.maximum.reduce)
_matmul_quiet = quiet_binary(np.matmul)


def _sum(self, dtype=None):
    """sum.default for float32/float64 without a dtype argument (else the decomposition)."""
    own = self.dtype
    if dtype is None and own in _FAST_DTYPES:
        x = native(self)
        return wrap_same(np.asarray(_add_reduce(x, None)), own)  # what ndarray.sum() runs
    raise Decline("not float32/float64, or a dtype argument")


def _inplace(name: str, ufunc):
    """``self op= other`` for a C-contiguous float32/float64 ``self`` and a Python number (``.Scalar``), a
    wrapped one, or a same-dtype same-shape tensor that is ``self`` or shares no memory with it (``.Tensor``);
    alpha 1. The decomposition's functional op, then ``copy_to``, computes the same ufunc in the same dtype."""

    into = quiet_ternary(ufunc)

    def kernel(self, other, *rest):
        if rest and not (type(rest[0]) is int and rest[0] == 1):
            raise Decline(f"{name}: alpha != 1")
        dtype = self.dtype
        x = native(self)
        if dtype not in _FAST_DTYPES or not x.flags.c_contiguous or not x.flags.writeable:
            raise Decline(f"{name}: not a writable C-contiguous float32/float64 tensor")
        if type(other) is int or type(other) is float:
            operand = other
        elif isinstance(other, opweave.Tensor) and is_wrapped_number(other):
            operand = native(other).item()
            if type(operand) is not int and type(operand) is not float:
                raise Decline(f"{name}: a bool or complex number")
        elif (
            isinstance(other, opweave.Tensor)
            and other.dtype is dtype
            and other.shape == self.shape
            and (other is self or not np.may_share_memory(x, native(other)))
        ):
            operand = native(other)
        else:
            raise Decline(f"{name}: not a Python number or a same-dtype same-shape tensor apart from self")
        if type(operand) is not np.ndarray:
            largest = _LARGEST[dtype]
            if not -largest <= operand <= largest:
                raise Decline(f"{name}: a number out of the dtype's finite range")
        into(x, operand, x)
        return self

    kernel.__doc__ = f"{name} in place on a C-contiguous float32/float64 tensor (else the decomposition)."
    return kernel


def _max(self):
    """max of every element of a non-empty float32/float64 tensor, NaN-propagating (else the decomposition)."""
    own = self.dtype
    a = native(self)
    if own in _FAST_DTYPES and a.size:
        return wrap_same(np.asarray(_maximum_reduce(a, None)), own)  # every axis, as the amax prim's
    raise Decline("not a non-empty float32/float64 tensor")


def _matmul(self, other):
    """matmul of two same-dtype float32/float64 matrices with matching inner size (else the decomposition)."""
    dtype = self.dtype
    a, b = self.shape, other.shape
    if dtype is other.dtype and dtype in _FAST_DTYPES and len(a) == 2 and len(b) == 2 and a[1] == b[0]:
        return wrap(_matmul_quiet(native(self), native(other)), dtype)
    raise Decline("not two same-dtype float32/float64 matrices")


KERNELS = {
    "add.Tensor": _binary("add", np.add),
    "sub.Tensor": _binary("sub", np.subtract),
    "mul.Tensor": _binary("mul", np.multiply),
    "div.Tensor": _binary("div", np.true_divide),
    "eq.Tensor": _binary("eq", np.equal, opweave.bool),
    "ne.Tensor": _binary("ne", np.not_equal, opweave.bool),
    "lt.Tensor": _binary("lt", np.less, opweave.bool),
    "le.Tensor": _binary("le", np.less_equal, opweave.bool),
    "gt.Tensor": _binary("gt", np.greater, opweave.bool),
    "ge.Tensor": _binary("ge", np.greater_equal, opweave.bool),
    "add.out": _binary_out("add.out", _binary("add", np.add), np.add),
    "sub.out": _binary_out("sub.out", _binary("sub", np.subtract), np.subtract),
    "mul.out": _binary_out("mul.out", _binary("mul", np.multiply), np.multiply),
    "div.out": _binary_out("div.out", _binary("div", np.true_divide), np.true_divide),
    "add_.Scalar": _inplace("add_.Scalar", np.add),
    "sub_.Scalar": _inplace("sub_.Scalar", np.subtract),
    "sum": _sum,
    "max": _max,
    "matmul": _matmul,
}
