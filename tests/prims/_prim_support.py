"""Shared machinery of the prim tests (all but the elementwise ones, which use ``_elementwise_support``).

Generated cases (reductions, scans, indexing, sorting): ``cases`` draws a shape, a layout, a seeded NumPy
generator and whether to inject special values; ``sample`` makes the values (small integers and half-integers,
so ties are common) and ``layout_tensor`` lays them out. ``check`` compares a result with a NumPy oracle,
``check_meta`` with the meta function's outputs, ``unchanged`` checks an input was not written.

Memory layouts for the conv, fft, linalg and random tests: ``in_layout`` also returns the base array keeping
a tensor's memory alive (and differs from ``layout_tensor`` in its fallbacks and in the zeros between strided
elements, so each family keeps the inputs it was written with); ``check_meta_call`` runs a prim's meta function
on meta tensors with the same shapes, strides and dtypes; ``run_in_layout`` does both around one call of a prim.
"""

from __future__ import annotations

import numpy as np
import opweave as ow
from hypothesis import strategies as st

P = ow.ops.prims
BOOLS = [ow.bool]
INTS = [ow.uint8, ow.int8, ow.int16, ow.int32, ow.int64]
FLOATS = [ow.float16, ow.bfloat16, ow.float32, ow.float64]
COMPLEXES = [ow.complex64, ow.complex128]
ALL = BOOLS + INTS + FLOATS + COMPLEXES
RTOL = {ow.float16: 1e-3, ow.bfloat16: 1e-2, ow.float32: 1e-5, ow.float64: 1e-12}
RTOL |= {ow.complex64: 1e-5, ow.complex128: 1e-12}
LAYOUTS = ("contiguous", "transposed", "strided", "broadcast")


# -- generated cases -------------------------------------------------------------------------------------------


def sample(rng, shape, dtype, special=False):
    """Values of ``dtype``: small integers / half-integers (many ties), optionally nan, ±inf and -0.0."""
    shape = tuple(shape)
    if dtype.kind == "bool":
        return np.asarray(rng.random(shape) < 0.5)
    if dtype.kind in ("int", "uint"):
        return np.asarray(rng.integers(0 if dtype.kind == "uint" else -6, 7, shape)).astype(dtype.numpy)
    x = np.asarray(rng.integers(-8, 9, shape) / 2.0)
    if dtype.is_complex:
        x = x + 1j * np.asarray(rng.integers(-8, 9, shape) / 2.0)
    if special:
        x = np.where(rng.random(shape) < 0.3, rng.choice([np.nan, np.inf, -np.inf, -0.0], shape), x)
    return np.asarray(x).astype(dtype.numpy)


def layout_tensor(arr, layout):
    """``(tensor, values)``: a tensor holding a copy of ``arr``'s values in ``layout``, and those values.

    "broadcast" makes the values constant along dim 0. Layouts an array cannot take (a transposed 1-dim array,
    a broadcast of an empty dim 0) give a contiguous copy; the gaps of "strided" hold 3s.
    """
    nd = arr.ndim
    if layout == "transposed" and nd >= 2:
        perm = list(range(nd))[::-1]
        return P.transpose(ow.from_numpy(np.array(arr.transpose(perm), order="C")), perm), arr
    if layout == "strided" and nd >= 1:
        big = np.full([2 * n for n in arr.shape], 3).astype(arr.dtype)
        big[(slice(None, None, 2),) * nd] = arr
        return P.slice(ow.from_numpy(big), [0] * nd, list(big.shape), [2] * nd), arr
    if layout == "broadcast" and nd >= 1 and arr.shape[0] > 0:
        row = np.array(arr[0], copy=True)
        t = P.broadcast_in_dim(ow.from_numpy(row), list(arr.shape), list(range(1, nd)))
        return t, np.broadcast_to(row, arr.shape).copy()
    return ow.from_numpy(np.array(arr, copy=True)), arr


@st.composite
def cases(draw, min_ndim=0, max_ndim=3, max_size=4):
    """``(shape, layout, rng, special)`` for one generated input."""
    shape = tuple(draw(st.lists(st.integers(0, max_size), min_size=min_ndim, max_size=max_ndim)))
    layout = draw(st.sampled_from(LAYOUTS))
    return shape, layout, np.random.default_rng(draw(st.integers(0, 2**32 - 1))), draw(st.booleans())


@st.composite
def dim_for(draw, ndim):
    """A dim of an ``ndim``-dim tensor, possibly negative (0-dim tensors take 0 or -1)."""
    bound = max(ndim, 1)
    return draw(st.integers(-bound, bound - 1))


def contiguous_strides(shape):
    """The row-major strides of ``shape`` (in elements; size-0 dims count as size 1)."""
    out, acc = [], 1
    for n in reversed(shape):
        out.append(acc)
        acc *= max(n, 1)
    return out[::-1]


def meta_of(t, dtype=None):
    """A contiguous meta tensor with ``t``'s shape and dtype (or ``dtype``)."""
    return P.empty_strided(list(t.shape), contiguous_strides(t.shape), dtype=dtype or t.dtype, device="meta")


def check(actual, expected, dtype, rtol=None):
    """``actual`` has ``dtype`` and ``expected``'s shape and values (rounded to ``dtype``; NaN equal)."""
    assert actual.dtype is dtype, (actual.dtype, dtype)
    got, expected = actual.numpy(), np.asarray(expected)
    assert got.shape == expected.shape, (got.shape, expected.shape)
    if dtype.kind in ("bool", "int", "uint"):
        np.testing.assert_array_equal(got, expected.astype(dtype.numpy))
        return
    wide = np.complex128 if dtype.is_complex else np.float64
    with np.errstate(all="ignore"):
        want = expected.astype(dtype.numpy).astype(wide)
    tol = RTOL[dtype] if rtol is None else rtol
    np.testing.assert_allclose(got.astype(wide), want, rtol=tol, atol=tol, equal_nan=True)


def check_meta(out, meta_out):
    """Outputs and the meta function's outputs agree in shape and dtype."""
    outs = out if isinstance(out, tuple) else (out,)
    metas = meta_out if isinstance(meta_out, tuple) else (meta_out,)
    assert len(outs) == len(metas)
    for o, m in zip(outs, metas):
        assert m.device.type == "meta"
        assert (tuple(o.shape), o.dtype) == (tuple(m.shape), m.dtype)


def unchanged(t, before):
    """``t`` still holds exactly the bytes of ``before``."""
    assert t.numpy().tobytes() == before.tobytes()


# -- memory layouts with a keep-alive base ---------------------------------------------------------------------


def in_layout(a, layout, min_broadcast_ndim=1):
    """``(tensor, values, base)``: ``a``'s values in ``layout`` and the array keeping the tensor's memory alive.

    "broadcast" repeats ``a[0]`` over dim 0 (``values`` is ``a`` made constant along dim 0 to match); arrays with
    fewer than ``min_broadcast_ndim`` dims or an empty dim 0 get "strided" instead, whose gaps hold zeros.
    """
    if layout == "contiguous" or a.ndim == 0:
        base = np.ascontiguousarray(a)
        return ow.from_numpy(base), a, base
    if layout == "transposed":
        perm = list(range(a.ndim))[::-1]
        base = np.ascontiguousarray(a.transpose(perm))
        return P.transpose(ow.from_numpy(base), perm), a, base
    if layout == "strided" or a.ndim < min_broadcast_ndim or a.shape[0] == 0:
        base = np.zeros(tuple(2 * s for s in a.shape), a.dtype)
        base[tuple(slice(None, None, 2) for _ in a.shape)] = a
        return P.slice(ow.from_numpy(base), [0] * a.ndim, list(base.shape), [2] * a.ndim), a, base
    base = np.array(a[0], copy=True)
    t = P.broadcast_in_dim(ow.from_numpy(base), list(a.shape), list(range(1, a.ndim)))
    return t, np.broadcast_to(base, a.shape).copy(), base


def meta(shape, dtype=ow.float32):
    """A meta tensor of ``shape`` and ``dtype`` with all strides 0 (for error checks)."""
    return P.empty_strided(list(shape), [0] * len(shape), dtype=dtype, device="meta")


def check_meta_call(op, tensors, args, outs):
    """The meta function, on meta tensors of the same shapes/strides/dtypes, agrees with the CPU outputs."""
    metas = [
        None if t is None else P.empty_strided(list(t.shape), list(t.stride()), dtype=t.dtype, device="meta")
        for t in tensors
    ]
    m = op(*metas, *args)
    m = m if isinstance(m, tuple) else (m,)
    for o, mo in zip(outs, m):
        assert o.dtype == mo.dtype and tuple(o.shape) == tuple(mo.shape) and mo.device.type == "meta"


def run_in_layout(op, arrays, layout, *args, min_broadcast_ndim=1, same=np.testing.assert_array_equal):
    """Run ``op`` on ``arrays`` put ``in_layout``: ``(outputs, values)``, a tuple of tensors and the input values.

    Checks with ``same`` that the inputs still hold their values afterwards, and that the meta function agrees.
    """
    tensors, values, keep = zip(*(in_layout(a, layout, min_broadcast_ndim) for a in arrays))
    before = [t.numpy().copy() for t in tensors]
    out = op(*tensors, *args)
    outs = out if isinstance(out, tuple) else (out,)
    for t, b in zip(tensors, before):
        same(t.numpy(), b)
    check_meta_call(op, tensors, args, outs)
    del keep
    return outs, list(values)


def randn(rng, shape, dtype):
    """Standard normal float64 values (complex128, with a normal imaginary part, for complex ``dtype``)."""
    a = rng.standard_normal(shape)
    if dtype.is_complex:
        a = a + 1j * rng.standard_normal(shape)
    return a
