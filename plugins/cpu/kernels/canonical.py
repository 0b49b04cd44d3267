"""Direct CPU kernels for hot canonical ops.

Each handles the common case in one NumPy call — same dtype (float32 or
float64), same shape, no alpha — and hands everything else to the op's reference decomposition, so its
results agree with the decomposition (tests/test_cpu_direct.py checks that).
"""

from __future__ import annotations

import numpy as np
import opweave
from opweave import ops

from .._backend import wrap_same
from ._common import native, wrap

_FAST_DTYPES = frozenset({opweave.float32, opweave.float64})


def _binary(name: str, ufunc):
    op = getattr(ops, name).Tensor
    reference = op.decomposition

    def kernel(self, other, *rest):
        if rest and not (type(rest[0]) is int and rest[0] == 1):
            return reference(self, other, *rest)
        dtype = self._dtype
        if dtype is other._dtype and dtype in _FAST_DTYPES and self._shape == other._shape:
            a, b = self._native, other._native
            return wrap_same(ufunc(native(self) if a is None else a, native(other) if b is None else b), dtype)
        return reference(self, other, *rest)

    kernel.__doc__ = f"{name}.Tensor for same-dtype float32/float64 operands (else the decomposition)."
    return kernel


def _sum(self, dtype=None):
    """sum.default for float32/float64 without a dtype argument (else the decomposition)."""
    if dtype is None and self._dtype in _FAST_DTYPES:
        return wrap(np.asarray(native(self).sum(), self._dtype.numpy), self._dtype)
    return ops.sum.default.decomposition(self, dtype)


def _matmul(self, other):
    """matmul of two same-dtype float32/float64 matrices with matching inner size (else the decomposition)."""
    dtype = self._dtype
    a, b = self._shape, other._shape
    if dtype is other._dtype and dtype in _FAST_DTYPES and len(a) == 2 and len(b) == 2 and a[1] == b[0]:
        return wrap(np.matmul(native(self), native(other)), dtype)
    return ops.matmul.default.decomposition(self, other)


KERNELS = {
    "add.Tensor": _binary("add", np.add),
    "sub.Tensor": _binary("sub", np.subtract),
    "mul.Tensor": _binary("mul", np.multiply),
    "sum": _sum,
    "matmul": _matmul,
}
