"""Random prims from the core's Philox4x32-10 stream, bit for bit: ``random_bits``, ``uniform``, ``randint``,
``normal``, ``bernoulli`` and ``randperm`` are generated kernels (``codegen.philox``). They need
``cl_khr_fp64`` for the float64 arithmetic the specification prescribes; without it they run through the
CPU fallback, as does a ``bernoulli`` whose ``p`` holds a value outside [0, 1] (the CPU kernel raises the
prim's ValueError), and ``randint``/``randperm`` of float16 or complex dtypes.

``normal`` is Box-Muller in double on the device. Its random bits and its arithmetic (FP contraction
off) are those of the specification; ``log``, ``sin`` and ``cos`` are the device's, which differ from
NumPy's by one ulp in double now and then (on PoCL: about 7% of float64 normals differ from the CPU's in
the last bit; NumPy's own SIMD ``log`` differs from the C library's too, so float64 normals are only
equal "up to the accuracy of log/sin/cos", as ``opweave.philox`` specifies). A float32 or bfloat16
normal differs only if the double value lies within that ulp of a rounding boundary (odds about 2**-29
per float32 element); the tests check bit equality on 2**20 float32 and bfloat16 samples.
"""

from __future__ import annotations

import numpy as np
from opweave import philox

from ..codegen import philox as gen
from ..codegen.common import MAX_RANK
from ._common import backend_of, buf, dims, empty, kernel, launch, program_kernels, runtime_on


def _kernels(device, dtype):
    rt = runtime_on(device)
    if not rt.has_fp64:
        return None
    return program_kernels(rt, ("philox", dtype.name), lambda: gen.program(rt.dialect, dtype.name)), rt


def _key(seed: int, offset: int):
    k = philox.seed_to_key(seed)
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
    found = _kernels(device, dtype)
    if found is None:
        return NotImplemented
    low, high = float(low), float(high)
    out = empty(shape, dtype, device)
    n = out.numel()
    if n:
        top = np.array(high, dtype=dtype.numpy)
        limit = float(top) if float(top) < high else float(philox.largest_below(float(top), dtype.numpy))
        args = (np.float64(low), np.float64(high - low), np.float64(limit), np.int32(high > low))
        launch(found[1], found[0]["uniform"], n, buf(out), *args, *_key(seed, offset), np.int64(n))
    return out


@kernel("randint")
def randint(shape, low, high, seed, offset, dtype, device):
    """``low + V % (high - low)`` from 64-bit values ``V`` (two words per element)."""
    if dtype.name == "float16" or dtype.is_complex:
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


@kernel("normal")
def normal(shape, mean, std, seed, offset, dtype, device):
    """Box-Muller normals ``mean + std * z`` (element ``i`` from block ``i // 2``), computed in double."""
    found = _kernels(device, dtype)
    if found is None:
        return NotImplemented
    out = empty(shape, dtype, device)
    n = out.numel()
    if n:
        args = (np.float64(float(mean)), np.float64(float(std)))
        launch(found[1], found[0]["normal"], n, buf(out), *args, *_key(seed, offset), np.int64(n))
    return out


@kernel("bernoulli")
def bernoulli(p, seed, offset):
    """``u < p`` as ``p``'s dtype (``p`` read through its strides, elements in row-major order)."""
    found = _kernels(p.device, p.dtype)
    if found is None or p.ndim > MAX_RANK:
        return NotImplemented
    out = empty(p.shape, p.dtype, p.device)
    n = out.numel()
    if n == 0:
        return out
    kernels, rt = found
    flag = np.zeros(1, np.int32)
    err = backend_of(p.device).copy_from_host(flag, p.device)
    launch(
        rt, kernels["bernoulli"], n, buf(out), buf(p), np.int64(p.storage_offset()), dims(p.stride()),
        dims(p.shape), np.int32(p.ndim), err.handle.buffer, *_key(seed, offset), np.int64(n),
    )  # fmt: skip
    rt.copy_to_host(flag, err.handle.buffer)
    return NotImplemented if flag[0] else out


@kernel("randperm")
def randperm(n, seed, offset, dtype, device):
    """The stable argsort of ``n`` 64-bit Philox keys, by a bitonic sort of (key, index) pairs."""
    import opweave

    if dtype.name == "float16" or dtype.is_complex:
        return NotImplemented
    found = _kernels(device, dtype)
    if found is None:
        return NotImplemented
    kernels, rt = found
    out = empty((n,), dtype, device)
    if n == 0:
        return out
    m = max(1 << (n - 1).bit_length(), 2)
    keys = empty((m,), opweave.int64, device)
    idx = empty((m,), opweave.int64, device)
    launch(rt, kernels["perm_keys"], m, buf(keys), buf(idx), *_key(seed, offset), np.int64(n), np.int64(m))
    step = kernels["bitonic_step"]
    k = 2
    while k <= m:
        j = k // 2
        while j:
            launch(rt, step, m, buf(keys), buf(idx), np.int64(j), np.int64(k), np.int64(m))
            j //= 2
        k *= 2
    launch(rt, kernels["perm_store"], n, buf(out), buf(idx), np.int64(n))
    return out
