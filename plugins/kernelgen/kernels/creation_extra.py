"""More factories: ``fill``, ``eye``, ``tril_indices``, ``triu_indices`` (``codegen.creation_extra``).

``fill`` converts the value on the host exactly as the CPU kernel does (floats
truncated toward zero for integer dtypes), uploads that one element and
broadcasts it with the copy kernel into the layout of the prim's meta function;
it moves raw bits, so every dtype (complex too) runs on the device. ``eye`` and
the triangle coordinates are computed from the element number (``eye`` writes
the bits of 1 in the dtype, so its programs depend on the element size only;
complex ``eye`` writes two values of the real dtype per element). Nothing here
falls back to the CPU.

``device_put``, ``item`` and ``resize`` need no kernel: the core implements
them once over the backend's copies and allocation.
"""

from __future__ import annotations

import numpy as np
import opweave
from opweave.prims.creation import tril_count

from ..codegen import creation_extra as gen
from ._common import buf, check_dtype, empty, from_host, i64, kernel, launch, program_kernels, runtime_on
from .data import copy_into


@kernel("fill")
def fill(a, value):
    """A tensor like ``a`` (same shape, dtype and dense layout) holding ``value`` everywhere."""
    spec = opweave.ops.lookup("prims::fill").meta(a, value)
    out = empty(spec.shape, spec.dtype, a.device, spec.stride())
    if out.numel():
        dtype = a.dtype
        if dtype.kind in ("int", "uint") and isinstance(value, float):
            value = int(value)
        copy_into(out, from_host(np.full((), value, dtype.numpy), out.device))
    return out


_RAW = {1: "uint8", 2: "int16", 4: "int32", 8: "int64"}


@kernel("eye")
def eye(n, m, dtype, device):
    """An ``n x m`` matrix of ``dtype`` with ones on the main diagonal."""
    check_dtype(dtype, device, "prims::eye")
    out = empty((n, m), dtype, device)
    if out.numel():
        part = dtype.to_real()
        parts = 2 if dtype.is_complex else 1
        raw = _RAW[part.itemsize]
        one = np.ones((), part.numpy).view(np.dtype(raw))
        rt = runtime_on(out.device)
        k = program_kernels(rt, ("eye", raw), lambda: gen.eye_program(rt.dialect, raw))["eye"]
        count = out.numel() * parts
        launch(rt, k, count, buf(out), i64(one), i64(m), np.int32(parts), i64(count))
    return out


def _tri_indices(row, col, offset, dtype, device, upper: bool):
    count = row * col - tril_count(row, col, offset - 1) if upper else tril_count(row, col, offset)
    out = empty((2, count), dtype, device)
    if count:
        rt = runtime_on(out.device)
        make = lambda: gen.tri_indices_program(rt.dialect, dtype.name)  # noqa: E731
        k = program_kernels(rt, ("tri_indices", dtype.name), make)["tri_indices"]
        launch(rt, k, count, buf(out), i64(row), i64(col), i64(offset), np.int32(upper), i64(count))
    return out


@kernel("tril_indices")
def tril_indices(row, col, offset, dtype, device):
    """Row-major coordinates (2 x N) of the lower triangle ``j - i <= offset`` of a ``row x col`` matrix."""
    return _tri_indices(row, col, offset, dtype, device, False)


@kernel("triu_indices")
def triu_indices(row, col, offset, dtype, device):
    """Row-major coordinates (2 x N) of the upper triangle ``j - i >= offset`` of a ``row x col`` matrix."""
    return _tri_indices(row, col, offset, dtype, device, True)
