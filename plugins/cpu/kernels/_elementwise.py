"""Helpers of the elementwise kernel modules: NumPy operands in, fresh tensors out.

float16 and bfloat16 operands are widened to float32 (PyTorch's "opmath" type)
and results are rounded back to the prim's output dtype by ``result``.
"""

from __future__ import annotations

import numpy as np
import opweave
from opweave.backends.kernel import Out

from .._backend import wrap_same
from ._common import native
from ._quiet import quiet

LOW_PRECISION = frozenset({opweave.float16, opweave.bfloat16})


def operand(t) -> np.ndarray:
    """The NumPy view of ``t``, widened to float32 for float16/bfloat16."""
    a = native(t)
    return a.astype(np.float32) if t.dtype in LOW_PRECISION else a


def out_dtype(dtype, rule: Out):
    """The output dtype of an elementwise prim whose first input has ``dtype``."""
    if rule is Out.ALWAYS_BOOL:
        return opweave.bool
    if rule is Out.COMPLEX_TO_FLOAT:
        return dtype.to_real()
    return dtype


def result(values, dtype, inputs=()):
    """A tensor of ``dtype`` owning ``values``; copies if ``values`` shares memory with an input."""
    return owned(values, dtype, [native(t) for t in inputs])


def owned(values, dtype, arrays) -> object:
    """``result`` given the inputs' NumPy arrays."""
    r = values if type(values) is np.ndarray else np.asarray(values)
    if r.dtype != dtype.numpy:
        r = quiet(r.astype, dtype.numpy)  # float32 -> float16 overflows to inf, as intended
    else:
        fresh = r.base is None and r.flags.owndata  # a fresh ufunc result owns its memory
        for a in arrays:
            if a is r:
                fresh = False
        if not fresh:
            for a in arrays:
                if np.may_share_memory(r, a):
                    r = r.copy()
                    break
    return wrap_same(r, dtype)


def elementwise(fn, rule: Out = Out.DEFAULT, widen: bool = True):
    """A kernel applying ``fn`` to the operands (widened unless ``widen`` is false) with warnings off."""

    def kernel(*tensors):
        args = []
        for t in tensors:
            a = native(t)
            if widen and t.dtype in LOW_PRECISION:
                a = a.astype(np.float32)
            args.append(a)
        dtype = tensors[0].dtype
        return owned(quiet(fn, *args), dtype if rule is Out.DEFAULT else out_dtype(dtype, rule), args)

    kernel.__doc__ = fn.__doc__
    return kernel


def is_integer(a: np.ndarray) -> bool:
    """Whether a NumPy array holds integers (bool excluded)."""
    return a.dtype.kind in "iu"


def check_nonzero_divisor(op: str, b: np.ndarray) -> None:
    """RuntimeError for an integer division by zero (PyTorch raises ZeroDivisionError)."""
    if is_integer(b) and np.any(b == 0):
        raise RuntimeError(f"prims::{op}: ZeroDivisionError: integer division by zero")
