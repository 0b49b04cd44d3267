"""Random prims from the core's Philox4x32-10 stream, bit for bit: ``random_bits``, ``uniform`` (float32,
float64) and ``randint`` are generated kernels (they need ``cl_khr_fp64`` for the float64 arithmetic the
specification prescribes); ``normal``, ``bernoulli``, ``randperm`` and bfloat16 ``uniform`` run through
the CPU fallback.
"""

from __future__ import annotations

import numpy as np
from opweave import _philox

from ..codegen import philox as gen
from ._common import BACKEND, OPENCL, buf, empty, kernel, launch, program_kernels


def _kernels(device, dtype):
    rt = BACKEND.runtime(device)
    if not rt.has_fp64:
        return None
    return program_kernels(rt, ("philox", dtype.name), lambda: gen.program(OPENCL, dtype.name)), rt


def _key(seed: int, offset: int):
    k = _philox.seed_to_key(seed)
    return np.uint64(offset), np.uint32(k[0]), np.uint32(k[1])


@kernel("random_bits")
def random_bits(shape, seed, offset, device):
    """Philox words (uint32 values in int64)."""
    import opweave

    found = _kernels(device, opweave.int64)
    if found is None:
        return NotImplemented
    out = empty(shape, opweave.int64, device)
    n = out.numel()
    if n:
        launch(found[1], found[0]["random_bits"], n, buf(out), *_key(seed, offset), np.int64(n))
    return out


@kernel("uniform")
def uniform(shape, low, high, seed, offset, dtype, device):
    """Uniform values in ``[low, high)`` (float32 from 24 bits, float64 from 53 bits)."""
    if dtype.name not in ("float32", "float64"):
        return NotImplemented
    found = _kernels(device, dtype)
    if found is None:
        return NotImplemented
    low, high = float(low), float(high)
    out = empty(shape, dtype, device)
    n = out.numel()
    if n:
        top = np.array(high, dtype=dtype.numpy)
        limit = float(top) if float(top) < high else float(_philox._below(float(top), dtype.numpy))
        args = (np.float64(low), np.float64(high - low), np.float64(limit), np.int32(high > low))
        launch(found[1], found[0]["uniform"], n, buf(out), *args, *_key(seed, offset), np.int64(n))
    return out


@kernel("randint")
def randint(shape, low, high, seed, offset, dtype, device):
    """``low + V % (high - low)`` from 64-bit values ``V`` (two words per element)."""
    if dtype.name in ("bfloat16", "float16") or dtype.is_complex:
        return NotImplemented
    found = _kernels(device, dtype)
    if found is None:
        return NotImplemented
    out = empty(shape, dtype, device)
    n = out.numel()
    if n:
        span = high - low
        full = span >= 1 << 64
        args = (np.uint64(0 if full else span), np.uint64(low & ((1 << 64) - 1)), np.int32(full))
        launch(found[1], found[0]["randint"], n, buf(out), *args, *_key(seed, offset), np.int64(n))
    return out
