"""Direct CPU kernels for the everyday unary math ops on float32/float64 tensors.

For a float32/float64 tensor each of these canonical ops decomposes into its one prim
(``exp`` into ``prims::exp``...), whose CPU kernel applies a NumPy function
(``elementwise_unary.FUNCTIONS``). The direct kernel applies that same function to the
tensor's NumPy view, so it skips the plan (signature, replay) and the prim's generic
kernel; results are those of the decomposition bit for bit (``tests/test_cpu_direct.py``).
Any other dtype (integers promote, 16-bit floats compute in float32) declines.
"""

from __future__ import annotations

import numpy as np
import opweave
from opweave.backends.kernel import Decline

from .._backend import wrap_same
from ._common import native
from ._elementwise import owned
from ._quiet import quiet
from .elementwise_unary import FUNCTIONS

NAMES = (
    "exp", "expm1", "exp2", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "reciprocal",
    "sin", "cos", "tan", "tanh", "sinh", "cosh", "asin", "acos", "atan", "asinh", "acosh", "atanh",
    "sigmoid", "erf", "erfc", "abs", "neg", "floor", "ceil", "trunc", "round",
)  # fmt: skip
_F32, _F64 = opweave.float32, opweave.float64


def _direct(name: str):
    fn = FUNCTIONS[name]

    def kernel(self):
        dtype = self.dtype
        if dtype is not _F32 and dtype is not _F64:
            raise Decline(f"{name}: not float32/float64 (the decomposition promotes or widens)")
        a = native(self)
        r = quiet(fn, a)
        if type(r) is np.ndarray and r.base is None and r is not a and r.dtype is a.dtype:
            return wrap_same(r, dtype)  # a fresh array of the right dtype: nothing to copy or convert
        return owned(r, dtype, (a,))

    kernel.__name__ = name
    kernel.__doc__ = f"{name} of a float32/float64 tensor: the CPU's prims::{name} function on its view."
    return kernel


KERNELS = {name: _direct(name) for name in NAMES}
