"""Shared generators and checks for the reduction/scan/sorting/indexing/matmul canonical-op tests.

Inputs are NumPy arrays drawn from a hypothesis-chosen seed (small integers and
half-integers, so ties are common), optionally with nan/±inf/-0.0, put into a
layout: contiguous, transposed (non-contiguous), strided slice, or broadcast
(0-strides). Oracles are NumPy formulas written in the tests.
"""

from __future__ import annotations

import warnings

import numpy as np
import opweave as D
from hypothesis import strategies as st

P = D.ops.prims
BOOL = [D.bool]
INTS = [D.uint8, D.int8, D.int16, D.int32, D.int64]
FLOATS = [D.float16, D.bfloat16, D.float32, D.float64]
COMPLEX = [D.complex64, D.complex128]
REAL = INTS + FLOATS
ORDERED = BOOL + REAL
NUMERIC = REAL + COMPLEX
FLOATING = FLOATS + COMPLEX
ALL = BOOL + NUMERIC
RTOL = {
    D.float16: 2e-3,
    D.bfloat16: 2e-2,
    D.float32: 1e-5,
    D.float64: 1e-12,
    D.complex64: 1e-5,
    D.complex128: 1e-12,
}
LAYOUTS = ("contiguous", "transposed", "sliced", "broadcast")


def sample(rng, shape, dtype, special=False, low=-8, high=8):
    """Values of ``dtype``: small integers / half-integers (many ties); optionally nan, ±inf and -0.0."""
    shape = tuple(shape)
    if dtype.kind == "bool":
        return np.asarray(rng.random(shape) < 0.5)
    if dtype.kind in ("int", "uint"):
        lo = max(low, 0) if dtype.kind == "uint" else low
        return np.asarray(rng.integers(lo, high + 1, shape)).astype(dtype.numpy)
    x = np.asarray(rng.integers(2 * low, 2 * high + 1, shape) / 2.0)
    if dtype.is_complex:
        x = x + 1j * np.asarray(rng.integers(2 * low, 2 * high + 1, shape) / 2.0)
    if special:
        x = np.where(rng.random(shape) < 0.25, rng.choice([np.nan, np.inf, -np.inf, -0.0], shape), x)
    return np.asarray(x).astype(dtype.numpy)


def layout_tensor(arr, layout):
    """``(tensor, values)``: ``arr``'s values in ``layout`` ("broadcast" repeats ``arr[0]`` along dim 0)."""
    nd = arr.ndim
    if layout == "transposed" and nd >= 2:
        perm = list(range(nd))[::-1]
        return P.transpose(D.from_numpy(np.array(arr.transpose(perm), order="C")), perm), arr
    if layout == "sliced" and nd >= 1:
        big = np.zeros([2 * n for n in arr.shape], dtype=arr.dtype)
        big[(slice(None, None, 2),) * nd] = arr
        return P.slice(D.from_numpy(big), [0] * nd, list(big.shape), [2] * nd), arr
    if layout == "broadcast" and nd >= 1 and arr.shape[0] > 0:
        row = np.array(arr[0], copy=True)
        t = P.broadcast_in_dim(D.from_numpy(row), list(arr.shape), list(range(1, nd)))
        return t, np.broadcast_to(row, arr.shape).copy()
    return D.from_numpy(np.array(arr, copy=True)), arr


def tensor(arr, dtype=None):
    """A contiguous CPU tensor holding ``arr`` (converted to ``dtype``)."""
    arr = np.asarray(arr)
    if dtype is not None:
        arr = arr.astype(dtype.numpy)
    return D.from_numpy(np.array(arr, copy=True))


@st.composite
def cases(draw, min_ndim=0, max_ndim=3, max_size=4, min_size=0):
    """``(shape, layout, rng, special)`` for one generated input."""
    shape = tuple(draw(st.lists(st.integers(min_size, max_size), min_size=min_ndim, max_size=max_ndim)))
    layout = draw(st.sampled_from(LAYOUTS))
    return shape, layout, np.random.default_rng(draw(st.integers(0, 2**32 - 1))), draw(st.booleans())


@st.composite
def dims_for(draw, ndim, allow_none=True, allow_list=True):
    """A ``dim`` argument for a tensor with ``ndim`` dims: None, an int (possibly negative) or a list."""
    bound = max(ndim, 1)
    kinds = ["int"] + (["none"] if allow_none else []) + (["list"] if allow_list else [])
    kind = draw(st.sampled_from(kinds))
    if kind == "none":
        return None
    if kind == "int":
        return draw(st.integers(-bound, bound - 1))
    picked = draw(st.lists(st.integers(0, bound - 1), unique=True, max_size=bound)) if ndim else []
    return [d - bound if draw(st.booleans()) else d for d in picked]


def np_axes(dim, ndim):
    """The NumPy ``axis`` tuple that a torch ``dim`` argument reduces (None/[]: every axis)."""
    if dim is None or (isinstance(dim, (list, tuple)) and not dim):
        return tuple(range(ndim))
    dims = dim if isinstance(dim, (list, tuple)) else [dim]
    return tuple(sorted(d % ndim for d in dims)) if ndim else ()


def meta_of(t, dtype=None):
    """A meta tensor with ``t``'s shape, strides and dtype."""
    return P.empty_strided(list(t.shape), list(t.stride()), dtype=dtype or t.dtype, device="meta")


def to_numpy(t):
    """A tensor's values as NumPy (16-bit floats widened to float64)."""
    a = np.array(t.numpy(), copy=True)
    if t.dtype in (D.float16, D.bfloat16):
        a = a.astype(np.float64)
    return a


def round_to(expected, dtype):
    """``expected`` rounded to ``dtype`` (compared in float64 for 16-bit floats)."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        if dtype.is_complex and not np.iscomplexobj(expected):
            expected = np.asarray(expected).astype(np.complex128)
        out = np.asarray(expected).astype(dtype.numpy)
    return out.astype(np.float64) if dtype in (D.float16, D.bfloat16) else out


def check(actual, expected, dtype=None, rtol=None, atol=0.0):
    """``actual`` (a tensor) has ``dtype`` and ``expected``'s shape and values (NaN equal, inf exact)."""
    expected = np.asarray(expected)
    if dtype is not None:
        assert actual.dtype is dtype, f"dtype {actual.dtype.name}, expected {dtype.name}"
    dtype = actual.dtype
    assert tuple(actual.shape) == expected.shape, f"shape {tuple(actual.shape)}, expected {expected.shape}"
    got = to_numpy(actual)
    want = round_to(expected, dtype)
    if dtype.is_floating_point or dtype.is_complex:
        rtol = RTOL[dtype] if rtol is None else rtol
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=True)
    else:
        np.testing.assert_array_equal(got, want)


def quiet(fn, *args, **kwargs):
    """Call a NumPy oracle with warnings (overflow, invalid value, empty slice) silenced."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


def compute_dtype(dtype):
    """The NumPy dtype an oracle computes in for ``dtype`` (float64/complex128 for floats, int64 for ints)."""
    if dtype.is_complex:
        return np.complex128
    if dtype.is_floating_point:
        return np.float64
    return np.int64


def shapes_and_strides(t):
    return tuple(t.shape), tuple(t.stride())


def same_meta(fn, *args, **kwargs):
    """Run ``fn`` on CPU ``args`` and on meta twins of their tensors; the outputs' shapes and dtypes agree."""
    cpu = fn(*args, **kwargs)
    twin = [meta_of(a) if isinstance(a, D.Tensor) and not a._wrapped_number else a for a in args]
    meta = fn(*twin, **kwargs)
    cpu = cpu if isinstance(cpu, tuple) else (cpu,)
    meta = meta if isinstance(meta, tuple) else (meta,)
    assert len(cpu) == len(meta)
    for c, m in zip(cpu, meta):
        assert m.device.type == "meta"
        assert tuple(c.shape) == tuple(m.shape) and c.dtype is m.dtype, (c.shape, m.shape, c.dtype, m.dtype)
    return cpu
