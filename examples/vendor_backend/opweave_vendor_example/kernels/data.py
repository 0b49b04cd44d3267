"""Casts and copies: the output layout comes from the meta function, the cast from ``np.copyto``."""

from __future__ import annotations

import numpy as np

from .._backend import KERNELS, kernel, view


def _castable(x: np.ndarray, dtype) -> np.ndarray:
    """``x`` ready to be cast to ``dtype``: complex to real keeps the real part (as PyTorch)."""
    return x.real if x.dtype.kind == "c" and not dtype.is_complex else x


@kernel("convert_element_type", widen=False)
def convert_element_type(a, dtype):
    """C-style cast (float to int truncates toward zero)."""
    return _castable(a, dtype)


@kernel("clone", widen=False)
def clone(a, memory_format=None):
    """A copy, in the layout the meta function chose."""
    return a


@kernel("copy_strided", widen=False)
def copy_strided(a, stride):
    """A copy with the given strides."""
    return a


def copy_to(a, b):
    """Write ``b`` into ``a`` (converting), in place: the one prim that writes its input."""
    with np.errstate(all="ignore"):
        np.copyto(view(a, writable=True), _castable(view(b), a.dtype), casting="unsafe")
    return a


KERNELS["prims::copy_to"] = copy_to
