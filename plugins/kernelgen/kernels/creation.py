"""Allocation and fills: ``empty_strided``, ``empty_permuted``, ``full``, ``scalar_tensor``.

A fill uploads the value once (one element, converted on the host exactly as
the CPU backend converts it) and broadcasts it with the copy kernel (stride 0).
"""

from __future__ import annotations

import numpy as np
from opweave.backends.kernel import contiguous_strides

from ._common import check_dtype, empty, from_host, kernel, runtime_on
from .data import copy_into


def _value(value, dtype):
    if dtype.kind == "bool":
        return bool(value)
    if dtype.kind in ("int", "uint") and isinstance(value, float):
        return int(value) if np.isfinite(value) else 0
    return value


@kernel("empty_strided")
def empty_strided(shape, strides, dtype, device):
    """Uninitialised device memory with the given strides."""
    check_dtype(dtype, device, "prims::empty_strided")
    return empty(shape, dtype, device, strides)


@kernel("empty_permuted")
def empty_permuted(shape, physical_layout, dtype, device):
    """Uninitialised dense device memory whose dims are laid out in ``physical_layout`` order."""
    check_dtype(dtype, device, "prims::empty_permuted")
    physical = contiguous_strides(tuple(shape[d] for d in physical_layout))
    strides = [0] * len(shape)
    for pos, d in enumerate(physical_layout):
        strides[d] = physical[pos]
    return empty(shape, dtype, device, strides)


def filled(shape, value, dtype, device):
    """A new contiguous device tensor of ``shape`` holding ``value`` everywhere."""
    check_dtype(dtype, device, "prims::full")
    out = empty(shape, dtype, device)
    if out.numel():
        one = from_host(np.full((), _value(value, dtype), dtype.numpy), out.device)
        copy_into(out, one)
    return out


@kernel("full")
def full(shape, fill_value, dtype, device):
    """A tensor filled with ``fill_value``."""
    return filled(shape, fill_value, dtype, device)


@kernel("scalar_tensor")
def scalar_tensor(s, dtype, device):
    """A 0-dim tensor holding ``s``."""
    return filled((), s, dtype, device)


@kernel("iota")
def iota(length, start, step, dtype, device):
    """``start + step * i`` for ``i < length``, computed in 64-bit integers and converted to ``dtype``."""
    from ..codegen import elementwise as gen
    from ._common import launch, program_kernels

    check_dtype(dtype, device, "prims::iota")
    out = empty((length,), dtype, device)
    if length == 0:
        return out
    d = dtype.name
    rt = runtime_on(out.device)
    ks = program_kernels(rt, ("iota", d), lambda: _iota_source(gen, rt.dialect, d))
    launch(
        rt, ks["iota"], length, out.untyped_storage().handle.buffer, np.int64(start), np.int64(step), np.int64(length)
    )
    return out


def _iota_source(gen, dialect, d):
    from ..codegen.common import header, store

    body = (
        f"    long g = {dialect.global_id(0)};\n    if (g >= n) return;\n"
        f"    out[g] = {store(dialect, d, '(start + step * g)')};"
    )
    params = [dialect.buffer(dialect.type_name(d), "out"), "long start", "long step", "long n"]
    return header(dialect, [d]) + dialect.kernel("iota", params, body)
