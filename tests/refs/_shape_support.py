"""Test support for the shape, view and creation ops: inputs in several layouts, NumPy oracles, comparisons."""

from __future__ import annotations

import numpy as np
import opweave as ow
from hypothesis import strategies as st
from opweave import ops

P = ops.prims

ALL_DTYPES = [
    ow.bool,
    ow.uint8,
    ow.int8,
    ow.int16,
    ow.int32,
    ow.int64,
    ow.float16,
    ow.bfloat16,
    ow.float32,
    ow.float64,
    ow.complex64,
    ow.complex128,
]
LAYOUTS = ["contiguous", "transposed", "sliced"]

seeds = st.integers(0, 2**32 - 1)
dtypes = st.sampled_from(ALL_DTYPES)
layouts = st.sampled_from(LAYOUTS)


def shapes(min_dims=0, max_dims=4, min_side=0, max_side=4):
    """Small shapes, 0-dim and empty included."""
    return st.lists(st.integers(min_side, max_side), min_size=min_dims, max_size=max_dims).map(tuple)


def values(rng, shape, dtype) -> np.ndarray:
    """Random values of ``dtype`` with special floats (nan, ±inf, -0.0) sprinkled in."""
    shape = tuple(shape)
    if dtype is ow.bool:
        return np.asarray(rng.random(shape) < 0.5)
    if dtype is ow.uint8:
        return np.asarray(rng.integers(0, 200, shape), dtype=np.uint8)
    if dtype.kind == "int":
        return np.asarray(rng.integers(-100, 100, shape)).astype(dtype.numpy)
    real = _floats(rng, shape)
    if dtype.is_complex:
        out = np.empty(shape, dtype.numpy)
        out.real, out.imag = real, _floats(rng, shape)
        return out
    return real.astype(dtype.numpy)


def _floats(rng, shape):
    x = np.asarray(rng.standard_normal(shape) * 10)
    if x.size:
        flat = x.reshape(-1)
        special = rng.random(flat.size) < 0.15
        flat[special] = rng.choice([np.nan, np.inf, -np.inf, -0.0], size=int(special.sum()))
    return x


def layout_of(array: np.ndarray, layout: str):
    """An opweave tensor holding ``array``'s values, laid out contiguous, transposed or strided-sliced."""
    if layout == "transposed" and array.ndim >= 2:
        perm = list(range(array.ndim))
        perm[-1], perm[-2] = perm[-2], perm[-1]
        base = ow.tensor(np.ascontiguousarray(array.transpose(perm)))
        return P.transpose(base, perm)
    if layout == "sliced" and array.ndim >= 1:
        big = np.zeros(array.shape[:-1] + (2 * array.shape[-1] + 1,), array.dtype)
        big[..., 1::2] = array
        base = ow.tensor(big)
        starts = [0] * (array.ndim - 1) + [1]
        steps = [1] * (array.ndim - 1) + [2]
        return P.slice(base, starts, list(big.shape[:-1]) + [2 * array.shape[-1] + 1], steps)
    return ow.tensor(array)


def make(rng, shape, dtype, layout="contiguous"):
    """``(tensor, array)``: random values of ``dtype`` as a tensor in ``layout`` and as NumPy."""
    array = values(rng, shape, dtype)
    t = layout_of(array, layout)
    assert t.shape == array.shape
    return t, array


def assert_same(t, expected, dtype=None):
    """``t`` equals ``expected`` bit for bit (shape, dtype and every byte; nan and -0.0 included)."""
    expected = np.asarray(expected)
    if dtype is not None:
        assert t.dtype is dtype, (t.dtype, dtype)
        expected = expected.astype(dtype.numpy)
    got = np.asarray(t.numpy())
    assert got.shape == expected.shape, (got.shape, expected.shape)
    assert got.dtype == expected.dtype, (got.dtype, expected.dtype)
    assert np.ascontiguousarray(got).tobytes() == np.ascontiguousarray(expected).tobytes(), (got, expected)


def shares(view, base) -> bool:
    """Whether two CPU tensors share memory (as NumPy sees their views)."""
    return np.shares_memory(view.numpy(), base.numpy())


def meta_like(t):
    """A meta tensor with ``t``'s shape, strides and dtype."""
    return P.empty_strided(list(t.shape), list(t.stride()), dtype=t.dtype, device="meta")


def check_meta(fn, cpu_result, *tensors, strides=False):
    """``fn`` on meta copies of ``tensors`` gives ``cpu_result``'s shapes and dtypes (and strides if asked)."""
    got = fn(*(meta_like(t) for t in tensors))
    want = cpu_result
    if isinstance(want, (list, tuple)):
        assert len(got) == len(want)
        pairs = list(zip(got, want))
    else:
        pairs = [(got, want)]
    for g, w in pairs:
        assert g.device.type == "meta"
        assert g.shape == w.shape and g.dtype is w.dtype, (g.shape, w.shape, g.dtype, w.dtype)
        if strides and w.numel():  # empty CPU tensors may carry 0 strides (the backend's NumPy layout)
            assert g.stride() == w.stride(), (g.stride(), w.stride())


def promote(a, b):
    """torch.promote_types, written out: bool < integers < floating < complex; widths decide within a kind."""
    if a is b:
        return a
    order = {"bool": 0, "uint": 1, "int": 1, "float": 2, "complex": 3}
    if a.is_complex or b.is_complex:
        real = promote(_real(a), _real(b))
        return ow.complex128 if real is ow.float64 else ow.complex64
    if order[a.kind] != order[b.kind]:
        return a if order[a.kind] > order[b.kind] else b
    if a.kind == "float":
        if {a, b} == {ow.float16, ow.bfloat16}:
            return ow.float32
        return a if a.itemsize > b.itemsize else b
    if ow.uint8 in (a, b):
        other = b if a is ow.uint8 else a
        return ow.int16 if other is ow.int8 else other
    return a if a.itemsize > b.itemsize else b


def _real(d):
    return {ow.complex64: ow.float32, ow.complex128: ow.float64}.get(d, d)


def result_type(pairs):
    """torch.result_type of tensors given as ``(ndim, dtype)``: 0-dim tensors only count when of a higher kind."""
    dims = [d for n, d in pairs if n > 0]
    zeros = [d for n, d in pairs if n == 0]
    higher = _promote_all(dims)
    lower = _promote_all(zeros)
    if higher is None or lower is None:
        return higher or lower
    if higher.is_complex:
        return higher
    if lower.is_complex:
        if higher.kind != "float":
            return lower
        return ow.complex128 if higher is ow.float64 else ow.complex64  # the complex type of higher's width
    if higher.kind == "float":
        return higher
    if higher is ow.bool or lower.kind == "float":
        return promote(higher, lower)
    return higher


def _promote_all(dts):
    out = None
    for d in dts:
        out = d if out is None else promote(out, d)
    return out
