"""Direct CPU kernels for hot canonical ops.

Each handles the common case in one NumPy call — same dtype (float32 or
float64), same shape, no alpha — and declines everything else (``raise Decline``), so the dispatcher
runs the op's reference decomposition and results agree with it (tests/test_cpu_direct.py checks that).
"""

from __future__ import annotations

import numpy as np
import opweave
from opweave.backends.kernel import Decline, same_kind_binary

from .._backend import wrap_same
from ._common import native, wrap

_FAST_DTYPES = frozenset({opweave.float32, opweave.float64})


def _binary(name: str, ufunc, result_dtype=None):
    kernel = same_kind_binary(ufunc, _FAST_DTYPES, wrap_same, native, f"{name}.Tensor", result_dtype)
    kernel.__doc__ = (
        f"{name}.Tensor for same-dtype float32/float64 operands, or one and a Python number (else the decomposition)."
    )
    return kernel


def _quiet(ufunc):
    """``ufunc`` with NumPy's floating-point warnings off (0/0, inf - inf give NaN silently, as in PyTorch)."""

    def compute(x, y):
        with np.errstate(all="ignore"):
            return ufunc(x, y)

    return compute


def _sum(self, dtype=None):
    """sum.default for float32/float64 without a dtype argument (else the decomposition)."""
    own = self.dtype
    if dtype is None and own in _FAST_DTYPES:
        return wrap(np.asarray(native(self).sum(), own.numpy), own)
    raise Decline("not float32/float64, or a dtype argument")


def _matmul(self, other):
    """matmul of two same-dtype float32/float64 matrices with matching inner size (else the decomposition)."""
    dtype = self.dtype
    a, b = self.shape, other.shape
    if dtype is other.dtype and dtype in _FAST_DTYPES and len(a) == 2 and len(b) == 2 and a[1] == b[0]:
        return wrap(np.matmul(native(self), native(other)), dtype)
    raise Decline("not two same-dtype float32/float64 matrices")


KERNELS = {
    "add.Tensor": _binary("add", np.add),
    "sub.Tensor": _binary("sub", np.subtract),
    "mul.Tensor": _binary("mul", np.multiply),
    "div.Tensor": _binary("div", _quiet(np.true_divide)),
    "eq.Tensor": _binary("eq", np.equal, opweave.bool),
    "ne.Tensor": _binary("ne", np.not_equal, opweave.bool),
    "lt.Tensor": _binary("lt", np.less, opweave.bool),
    "le.Tensor": _binary("le", np.less_equal, opweave.bool),
    "gt.Tensor": _binary("gt", np.greater, opweave.bool),
    "ge.Tensor": _binary("ge", np.greater_equal, opweave.bool),
    "sum": _sum,
    "matmul": _matmul,
}
