"""Shared machinery of the elementwise prim tests: inputs, layouts, the checked call.

Inputs are built from a NumPy generator seeded by hypothesis, in one of several
layouts (contiguous, transposed, sliced with a step, broadcast with 0 strides,
0-dim CPU scalar). ``check_call`` runs a prim, compares it with a NumPy/SciPy
oracle, checks the output's dtype and shape against the meta device and that
the inputs were not modified.
"""

from __future__ import annotations

import math

import numpy as np
import opweave
from hypothesis import strategies as st

P = opweave.ops.prims

BOOL = (opweave.bool,)
INT = (opweave.uint8, opweave.int8, opweave.int16, opweave.int32, opweave.int64)
FLOAT = (opweave.float16, opweave.bfloat16, opweave.float32, opweave.float64)
COMPLEX = (opweave.complex64, opweave.complex128)
INTEGRAL = INT + BOOL
REAL = INT + FLOAT
NUMERIC = REAL + COMPLEX
FLOATING = FLOAT + COMPLEX
ALL = BOOL + NUMERIC
LOW = (opweave.float16, opweave.bfloat16)

TOL = {
    opweave.float16: 1e-3,
    opweave.bfloat16: 1e-2,
    opweave.float32: 1e-5,
    opweave.float64: 1e-12,
    opweave.complex64: 1e-5,
    opweave.complex128: 1e-12,
}

SPECIALS = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 1.0, -1.0, 0.5, -2.0])
LAYOUTS = ("contiguous", "transposed", "sliced", "broadcast")

shapes = st.lists(st.integers(0, 4), min_size=0, max_size=3).map(tuple)
seeds = st.integers(0, 2**32 - 1)


def unsupported(allowed):
    """The dtypes (of ALL) a prim must reject."""
    return [d for d in ALL if d not in allowed]


def widen(a: np.ndarray) -> np.ndarray:
    """float16/bfloat16 arrays as float32 (the precision the kernels compute in)."""
    return a.astype(np.float32) if a.dtype.itemsize == 2 and a.dtype.kind not in "iu" else a


# ---------------------------------------------------------------- values


def floats(lo=None, hi=None, specials=SPECIALS, fraction=0.25):
    """A generator of real floating values: spread normals (or uniform in [lo, hi]) plus special values."""

    def gen(rng, shape, dtype):
        if lo is None:
            v = rng.standard_normal(shape) * 10.0 ** rng.integers(-1, 3, shape)
        else:
            v = rng.uniform(lo, hi, shape)
        v = np.asarray(v, np.float64)
        if len(specials):
            mask = rng.random(shape) < fraction
            v[mask] = rng.choice(specials, int(mask.sum()))
        return v

    return gen


def ints(lo=None, hi=None, small=0.5):
    """A generator of integers: the dtype's full range (or [lo, hi]) mixed with small values."""

    def gen(rng, shape, dtype):
        info = np.iinfo(dtype.numpy)
        a, b = (info.min, info.max) if lo is None else (max(lo, info.min), min(hi, info.max))
        v = rng.integers(a, b, shape, dtype=np.int64, endpoint=True)
        near = np.clip(rng.integers(-3, 4, shape), a, b)
        return np.where(rng.random(shape) < small, near, v)

    return gen


def values(rng, shape, dtype, real=None, integer=None):
    """An array of ``dtype`` drawn with the given generators (defaults: ``floats()`` / ``ints()``)."""
    real, integer = real or floats(), integer or ints()
    if dtype is opweave.bool:
        return rng.random(shape) < 0.5
    if dtype.kind in ("int", "uint"):
        return integer(rng, shape, dtype).astype(dtype.numpy)
    with np.errstate(over="ignore", invalid="ignore"):
        if dtype.is_complex:
            v = np.empty(shape, np.complex128)
            v.real, v.imag = real(rng, shape, dtype), real(rng, shape, dtype)
            return v.astype(dtype.numpy)
        return real(rng, shape, dtype).astype(dtype.numpy)


# ---------------------------------------------------------------- layouts


def layout_tensor(make, shape, layout):
    """A tensor of ``shape`` whose data comes from ``make(shape)``, laid out as ``layout``."""
    nd = len(shape)
    if layout == "scalar":
        return opweave.from_numpy(np.asarray(make(())))
    if layout == "transposed" and nd >= 2:
        base = opweave.from_numpy(np.ascontiguousarray(make(shape[::-1])))
        return P.transpose(base, list(range(nd))[::-1])
    if layout == "sliced" and nd >= 1:
        big = shape[:-1] + (2 * shape[-1],)
        base = opweave.from_numpy(np.ascontiguousarray(make(big)))
        return P.slice(base, [0] * nd, list(big), [1] * (nd - 1) + [2])
    if layout == "broadcast" and nd >= 1:
        small = tuple(1 if i % 2 == 0 else s for i, s in enumerate(shape))
        base = opweave.from_numpy(np.ascontiguousarray(make(small)))
        return P.broadcast_in_dim(base, list(shape), list(range(nd)))
    return opweave.from_numpy(np.ascontiguousarray(make(shape)))


def make_inputs(seed, shape, dtypes, layouts, gens=None):
    """Tensors (one per dtype/layout) with values from a generator seeded by ``seed``."""
    rng = np.random.default_rng(seed)
    gens = gens or [None] * len(dtypes)
    out = []
    for dtype, layout, gen in zip(dtypes, layouts, gens):
        real, integer = gen if isinstance(gen, tuple) else (gen, None)

        def make(s, dtype=dtype, real=real, integer=integer):
            return values(rng, s, dtype, real, integer)

        out.append(layout_tensor(make, shape, layout))
    return out


# ---------------------------------------------------------------- checks


def snapshot(t) -> bytes:
    """The exact bytes of a tensor's elements (for the inputs-unchanged check)."""
    return np.ascontiguousarray(t.numpy()).tobytes()


def as_meta(t):
    """A meta tensor with ``t``'s shape and dtype (0-dim CPU scalars stay as they are)."""
    if t.ndim == 0 and t.device.type == "cpu":
        return t
    strides = [0] * t.ndim
    acc = 1
    for d in reversed(range(t.ndim)):
        strides[d] = acc
        acc *= max(t.shape[d], 1)
    return P.empty_strided(list(t.shape), strides, dtype=t.dtype, device="meta")


def condition_atol(oracle, args, extra, rtol):
    """Per element, ``rtol`` times the sum over the inputs of ``|x_i * df/dx_i|``.

    That is the error of a result computed from arguments perturbed by ``rtol`` relative: a backward-stable kernel's
    error, which no relative tolerance on the value bounds where ``f`` crosses zero (near a zero of ``J1`` the value
    is tiny and its digits are the argument's last ones).

    The derivatives are central differences of the oracle with a relative step ``2**-20``, on float64 arguments;
    where a step lands on an infinity or a pole the term is dropped (the value's own relative tolerance remains).
    """
    h = 2.0**-20
    wide = [np.asarray(a, np.float64) if np.asarray(a).dtype.kind == "f" else np.asarray(a) for a in args]
    total = 0.0
    with np.errstate(all="ignore"):
        for i, a in enumerate(wide):
            if a.dtype.kind != "f":
                continue
            up = [a * (1 + h) if j == i else b for j, b in enumerate(wide)]
            down = [a * (1 - h) if j == i else b for j, b in enumerate(wide)]
            term = np.abs(np.asarray(oracle(*up, *extra), np.float64) - np.asarray(oracle(*down, *extra), np.float64))
            total = total + np.where(np.isfinite(term), term, 0.0) / (2 * h)
    return rtol * np.asarray(total)


def _smallest_subnormal(dtype) -> float:
    info = opweave.finfo(dtype.to_real())
    return float(info.tiny) * float(info.eps)


def assert_close(got: np.ndarray, expected, dtype, rtol_scale=1.0, atol=0.0):
    """Compare a result with the oracle's value, cast to ``dtype`` first (exact for bool/int).

    Floating values must satisfy ``|got - expected| <= rtol * |expected| + atol`` with ``rtol`` the dtype's tolerance
    times ``rtol_scale``; ``atol`` may be an array (per element, e.g. :func:`condition_atol`) and is never below the
    dtype's smallest subnormal (the oracle's value and the kernel's are rounded to the dtype separately, and one ulp of
    a subnormal is no relative tolerance). nan must match nan and infinities must be equal.
    """
    expected = np.asarray(expected)
    assert got.shape == expected.shape, (got.shape, expected.shape)
    with np.errstate(all="ignore"):
        if dtype.kind in ("bool", "int", "uint"):
            np.testing.assert_array_equal(got, expected.astype(dtype.numpy))
            return
        exp = expected.astype(dtype.numpy)
    rtol = TOL[dtype] * rtol_scale
    atol = np.maximum(np.broadcast_to(np.asarray(atol, np.float64), got.shape), _smallest_subnormal(dtype))
    pairs = [(got.real, exp.real), (got.imag, exp.imag)] if dtype.is_complex else [(got, exp)]
    for g, e in pairs:
        g, e = g.astype(np.float64), e.astype(np.float64)
        np.testing.assert_array_equal(np.isnan(g), np.isnan(e), err_msg="nan where the oracle has none, or not nan")
        inf = np.isinf(e) | np.isinf(g)
        np.testing.assert_array_equal(g[inf], e[inf], err_msg="infinities differ")
        fin = np.isfinite(e) & np.isfinite(g)
        with np.errstate(all="ignore"):
            err = np.abs(g - e)
            bound = rtol * np.abs(e) + atol
        bad = fin & ~(err <= bound)
        if bad.any():
            idx = np.argwhere(bad)[:5]
            rows = [
                f"{tuple(int(k) for k in i)}: got {g[tuple(i)]!r}, expected {e[tuple(i)]!r}, "
                f"|diff| {err[tuple(i)]:.3g} > {bound[tuple(i)]:.3g}"
                for i in idx
            ]
            raise AssertionError(f"{int(bad.sum())} of {bad.size} elements differ (rtol {rtol:g}):\n" + "\n".join(rows))


def check_call(op, tensors, oracle, out_dtype, extra=(), rtol_scale=1.0, atol=0.0, conditioned=False):
    """Run ``op(*tensors, *extra)`` and check it against ``oracle`` and the meta device.

    ``conditioned`` adds :func:`condition_atol` to ``atol``: for the special functions, whose kernels are accurate
    relative to the argument rather than to a value that crosses zero.
    """
    before = [snapshot(t) for t in tensors]
    got = op(*tensors, *extra)
    assert [snapshot(t) for t in tensors] == before, "an input was modified"
    metas = [as_meta(tensors[0])] + [as_meta(t) for t in tensors[1:]]
    if metas[0].device.type == "cpu":
        metas[0] = P.empty_strided([], [], dtype=tensors[0].dtype, device="meta")
    meta = op(*metas, *extra)
    assert got.dtype is out_dtype and meta.dtype is out_dtype, (got.dtype, meta.dtype, out_dtype)
    assert tuple(got.shape) == tuple(meta.shape)
    args = [widen(np.array(t.numpy())) for t in tensors]
    with np.errstate(all="ignore"):
        expected = oracle(*args, *extra)
    expected = np.broadcast_to(expected, tuple(got.shape)) if np.ndim(expected) == 0 else expected
    if conditioned:
        cond = condition_atol(oracle, args, extra, TOL[out_dtype] * rtol_scale)
        atol = np.asarray(atol, np.float64) + np.broadcast_to(cond, tuple(got.shape))
    assert_close(got.numpy(), expected, out_dtype, rtol_scale, atol)
    return got


# ---------------------------------------------------------------- integer oracles


def wrap_int(v: int, dtype) -> int:
    """``v`` reduced modulo 2**bits into ``dtype``'s range (two's complement wraparound)."""
    bits = dtype.numpy.itemsize * 8
    v %= 1 << bits
    if dtype.kind == "int" and v >= 1 << (bits - 1):
        v -= 1 << bits
    return v


def int_oracle(fn, dtype):
    """An oracle applying Python-int ``fn`` elementwise, wrapping results into ``dtype``."""

    def oracle(*arrays):
        arrays = np.broadcast_arrays(*arrays)
        flat = [a.reshape(-1).tolist() for a in arrays]
        out = [wrap_int(fn(*vals), dtype) for vals in zip(*flat)]
        return np.array(out, dtype=np.int64 if dtype.kind == "int" else np.uint64).reshape(arrays[0].shape)

    return oracle


def trunc_div(a: int, b: int) -> int:
    """C integer division (toward zero)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def c_mod(a: int, b: int) -> int:
    """C ``%`` (sign of the dividend)."""
    return a - trunc_div(a, b) * b


def python_gcd(a: int, b: int) -> int:
    """Non-negative gcd."""
    return math.gcd(a, b)
