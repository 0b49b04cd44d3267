"""Casts and copies."""

from __future__ import annotations

import numpy as np

from ._common import native, wrap
from ._quiet import quiet


def convert_element_type(a, dtype):
    """Cast with NumPy's unsafe casting (float to int truncates toward zero, as C does)."""
    src = native(a)
    if a.dtype.is_complex and not dtype.is_complex:
        src = src.real
    return wrap(quiet(src.astype, dtype.numpy, "K"), dtype)


def clone(a, memory_format=None):
    """A copy, same layout when dense."""
    order = "C" if memory_format == "contiguous_format" else "K"
    return wrap(np.array(native(a), copy=True, order=order), a.dtype)


def copy_to(a, b):
    """Write ``b`` into ``a`` with conversion."""
    dst, src = native(a), native(b)
    if a.dtype.is_complex or not b.dtype.is_complex:
        quiet(np.copyto, dst, src, "unsafe")
    else:
        np.copyto(dst, src.real, casting="unsafe")
    return a


def copy_strided(a, stride):
    """A copy with the given strides."""
    from opweave import ops

    out = ops.prims.empty_strided(a.shape, stride, dtype=a.dtype, device=a.device)
    np.copyto(native(out), native(a))
    return out


KERNELS = {
    "prims::convert_element_type": convert_element_type,
    "prims::clone": clone,
    "prims::copy_to": copy_to,
    "prims::copy_strided": copy_strided,
}
