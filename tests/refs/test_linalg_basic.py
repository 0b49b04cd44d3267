"""Matrix-product canonical ops (matmul in every rank combination, mm, bmm, mv, dot, vdot, inner, outer, linear,
addmm/addmv/addr/baddbmm/addbmm, trace, dist, allclose, equal) against NumPy: dtypes, layouts, empty sizes,
broadcast batches, in-place/out= variants, meta and errors."""

from __future__ import annotations

import numpy as np
import opweave as D
import pytest
from _rsi_support import (
    COMPLEX,
    FLOATING,
    FLOATS,
    INTS,
    LAYOUTS,
    NUMERIC,
    check,
    compute_dtype,
    layout_tensor,
    quiet,
    same_meta,
    sample,
    tensor,
)
from hypothesis import given, settings
from hypothesis import strategies as st

ops = D.ops
P = ops.prims


def _operand(data, dtype, shape, special=False):
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    arr = sample(rng, shape, dtype, special, low=-3, high=3)
    return layout_tensor(arr, data.draw(st.sampled_from(LAYOUTS)))


def _wide(values, dtype):
    return values.astype(compute_dtype(dtype))


def _batch(data, ndim):
    """Batch shape of ``ndim`` dims with sizes 0..2 (1s broadcast)."""
    return tuple(data.draw(st.lists(st.integers(0, 2), min_size=ndim, max_size=ndim)))


def _matmul_shapes(data, ra, rb):
    n, k, p = (data.draw(st.integers(0, 3)) for _ in range(3))
    batch = _batch(data, max(ra, rb) - 2) if max(ra, rb) > 2 else ()
    a_batch = tuple(1 if data.draw(st.booleans()) else s for s in batch[len(batch) - max(ra - 2, 0) :])
    b_batch = tuple(1 if data.draw(st.booleans()) else s for s in batch[len(batch) - max(rb - 2, 0) :])
    a_shape = (k,) if ra == 1 else a_batch + (n, k)
    b_shape = (k,) if rb == 1 else b_batch + (k, p)
    return a_shape, b_shape


RANKS = [(1, 1), (2, 1), (1, 2), (2, 2), (3, 1), (1, 3), (3, 2), (2, 3), (3, 3), (4, 3), (1, 4), (4, 2)]


@pytest.mark.parametrize("ranks", RANKS, ids=[f"{a}x{b}" for a, b in RANKS])
@pytest.mark.parametrize("dtype", [D.int64, D.float32, D.float64, D.complex64, D.float16])
@settings(max_examples=12, deadline=None)
@given(data=st.data())
def test_matmul_ranks(ranks, dtype, data):
    a_shape, b_shape = _matmul_shapes(data, *ranks)
    a, va = _operand(data, dtype, a_shape)
    b, vb = _operand(data, dtype, b_shape)
    want = np.matmul(_wide(va, dtype), _wide(vb, dtype))
    check(D.matmul(a, b), want, dtype)
    check(a @ b, want, dtype)


@pytest.mark.parametrize("dtype", NUMERIC)
@settings(max_examples=10, deadline=None)
@given(data=st.data())
def test_mm_bmm_mv(dtype, data):
    n, k, p, batch = (data.draw(st.integers(0, 3)) for _ in range(4))
    a, va = _operand(data, dtype, (n, k))
    b, vb = _operand(data, dtype, (k, p))
    v, vv = _operand(data, dtype, (k,))
    check(D.mm(a, b), _wide(va, dtype) @ _wide(vb, dtype), dtype)
    check(D.mv(a, v), _wide(va, dtype) @ _wide(vv, dtype), dtype)
    a3, va3 = _operand(data, dtype, (batch, n, k))
    b3, vb3 = _operand(data, dtype, (batch, k, p))
    check(D.bmm(a3, b3), np.matmul(_wide(va3, dtype), _wide(vb3, dtype)), dtype)


@pytest.mark.parametrize("dtype", NUMERIC)
@settings(max_examples=10, deadline=None)
@given(data=st.data())
def test_dot_vdot_inner_outer(dtype, data):
    k, m = data.draw(st.integers(0, 4)), data.draw(st.integers(0, 3))
    x, vx = _operand(data, dtype, (k,))
    y, vy = _operand(data, dtype, (k,))
    z, vz = _operand(data, dtype, (m,))
    wx, wy, wz = _wide(vx, dtype), _wide(vy, dtype), _wide(vz, dtype)
    check(D.dot(x, y), np.dot(wx, wy), dtype)
    check(D.vdot(x, y), np.vdot(wx, wy), dtype)
    check(D.outer(x, z), np.outer(wx, wz), dtype)
    check(D.ger(x, z), np.outer(wx, wz), dtype)
    a, va = _operand(data, dtype, (m, 2, k))
    check(D.inner(a, y), np.inner(_wide(va, dtype), wy), dtype)
    check(D.inner(x, y), np.inner(wx, wy), dtype)
    check(D.inner(a, tensor(np.array(2), dtype)), _wide(va, dtype) * 2, dtype)


def test_outer_promotes_and_inner_scalar():
    check(D.outer(tensor([1, 2]), tensor([0.5, 1.5], D.float32)), np.outer([1, 2], [0.5, 1.5]), D.float32)
    check(D.inner(tensor(np.array(3.0)), tensor([1.0, 2.0])), np.array([3.0, 6.0]), D.float64)


@pytest.mark.parametrize("dtype", [D.float32, D.float64, D.bfloat16])
@pytest.mark.parametrize("input_ndim", [1, 2, 3])
@pytest.mark.parametrize("bias", ["none", "vector", "scalar"])
@settings(max_examples=6, deadline=None)
@given(data=st.data())
def test_linear(dtype, input_ndim, bias, data):
    k, out_features = data.draw(st.integers(1, 3)), data.draw(st.integers(0, 3))
    x, vx = _operand(data, dtype, tuple(data.draw(st.integers(0, 2)) for _ in range(input_ndim - 1)) + (k,))
    w, vw = _operand(data, dtype, (out_features, k))
    want = _wide(vx, dtype) @ _wide(vw, dtype).T
    if bias == "none":
        check(D.linear(x, w), want, dtype)
        return
    b, vb = _operand(data, dtype, (out_features,) if bias == "vector" else ())
    check(D.linear(x, w, b), want + _wide(vb, dtype), dtype)
    w1, vw1 = _operand(data, dtype, (k,))
    check(D.linear(x, w1), _wide(vx, dtype) @ _wide(vw1, dtype), dtype)


ADD_PRODUCTS = {
    # name: (operand shapes for (n, k, p, b), self shape, numpy product)
    "addmm": (lambda n, k, p, b: [(n, k), (k, p)], lambda n, k, p, b: (n, p), lambda x, y: x @ y),
    "addmv": (lambda n, k, p, b: [(n, k), (k,)], lambda n, k, p, b: (n,), lambda x, y: x @ y),
    "addr": (lambda n, k, p, b: [(n,), (p,)], lambda n, k, p, b: (n, p), np.outer),
    "baddbmm": (lambda n, k, p, b: [(b, n, k), (b, k, p)], lambda n, k, p, b: (b, n, p), np.matmul),
    "addbmm": (
        lambda n, k, p, b: [(b, n, k), (b, k, p)],
        lambda n, k, p, b: (n, p),
        lambda x, y: np.matmul(x, y).sum(0),
    ),
}


@pytest.mark.parametrize("name", list(ADD_PRODUCTS))
@pytest.mark.parametrize("dtype", [D.int32, D.float32, D.float64, D.complex128, D.float16])
@settings(max_examples=8, deadline=None)
@given(data=st.data())
def test_add_products(name, dtype, data):
    operands, self_shape, product = ADD_PRODUCTS[name]
    sizes = [data.draw(st.integers(0, 3)) for _ in range(4)]
    (x, vx), (y, vy) = (_operand(data, dtype, s) for s in operands(*sizes))
    full_shape = self_shape(*sizes)
    shape = full_shape[data.draw(st.integers(0, len(full_shape))) :]  # self broadcasts
    s, vs = _operand(data, dtype, shape, special=dtype.is_floating_point)
    if dtype.is_floating_point or dtype.is_complex:
        beta, alpha = data.draw(st.sampled_from([(1, 1), (0, 1), (0.5, 2), (2, 0), (0, 0)]))
    else:
        beta, alpha = data.draw(st.sampled_from([(1, 1), (0, 3), (2, -1)]))
    prod = product(_wide(vx, dtype), _wide(vy, dtype))
    bias = np.broadcast_to(_wide(vs, dtype), full_shape)
    want = alpha * prod + (beta * bias if beta != 0 else 0)
    fn = getattr(D, name)
    check(fn(s, x, y, beta=beta, alpha=alpha), quiet(np.asarray, want), dtype)
    if shape == full_shape:
        target = tensor(vs)  # in-place needs a writable, non-overlapping self
        result = getattr(target, name + "_")(x, y, beta=beta, alpha=alpha)
        assert result is target
        check(target, want, dtype)


def test_add_products_coefficient_rules():
    i = tensor(np.ones((2, 2)), D.int64)
    with pytest.raises(TypeError, match="alpha"):
        D.addmm(i, i, i, alpha=0.5)
    with pytest.raises(TypeError, match="beta"):
        D.addmv(tensor([1, 1]), i, tensor([1, 2]), beta=1.5)
    f = tensor(np.ones((2, 2)), D.float32)
    with pytest.raises(TypeError, match="complex"):
        D.addmm(f, f, f, alpha=1j)
    with pytest.raises(ValueError, match="addmm"):
        D.addmm(tensor(np.ones(3), D.float32), f, f)
    with pytest.raises(ValueError):
        f.addmm_(tensor(np.ones((2, 1)), D.float32), tensor(np.ones((1, 3)), D.float32))
    with pytest.raises(TypeError, match="dtype"):
        D.addmm(tensor(np.ones((2, 2)), D.float64), f, f)
    nan_self = tensor(np.full((2, 2), np.nan), D.float32)
    check(D.addmm(nan_self, f, f, beta=0), np.full((2, 2), 2.0), D.float32)


@pytest.mark.parametrize("dtype", [D.bool, D.int8, D.int64, D.float16, D.float32, D.complex64])
@settings(max_examples=8, deadline=None)
@given(data=st.data())
def test_trace(dtype, data):
    shape = (data.draw(st.integers(0, 4)), data.draw(st.integers(0, 4)))
    t, values = _operand(data, dtype, shape)
    expected_dtype = D.int64 if dtype in INTS + [D.bool] else dtype
    check(D.trace(t), np.trace(values.astype(compute_dtype(dtype))), expected_dtype)


@pytest.mark.parametrize("dtype", FLOATING)
@pytest.mark.parametrize("p", [0, 1, 2, 3.5, float("inf")])
@settings(max_examples=8, deadline=None)
@given(data=st.data())
def test_dist(dtype, p, data):
    n = data.draw(st.integers(1, 4))
    a, va = _operand(data, dtype, (2, n))
    b, vb = _operand(data, dtype, (n,))
    diff = np.abs(_wide(va, dtype) - _wide(vb, dtype)).reshape(-1)
    if p == 0:
        want = np.count_nonzero(diff)
    elif p == float("inf"):
        want = diff.max()
    else:
        want = (diff**p).sum() ** (1 / p)
    real = dtype.to_real()
    check(D.dist(a, b, p), want, real, rtol={D.float16: 4e-3, D.bfloat16: 3e-2}.get(real), atol=1e-6)


def test_dist_rejects_integers():
    with pytest.raises(TypeError, match="dist"):
        D.dist(tensor([1, 2]), tensor([3, 4]))


@pytest.mark.parametrize("dtype", [D.bool, D.int32, D.float16, D.float32, D.float64, D.complex64])
@settings(max_examples=15, deadline=None)
@given(data=st.data())
def test_allclose_equal(dtype, data):
    shape = tuple(data.draw(st.lists(st.integers(0, 3), max_size=2)))
    a, va = _operand(data, dtype, shape, special=dtype.is_floating_point)
    noise = data.draw(st.sampled_from([0.0, 1e-9, 1e-3, 1.0]))
    vb = va.astype(compute_dtype(dtype)) + (noise if dtype.is_floating_point or dtype.is_complex else 0)
    vb = vb.astype(va.dtype) if dtype is not D.bool else va.copy()
    if data.draw(st.booleans()) and vb.size:
        vb.reshape(-1)[0] = vb.reshape(-1)[0] + (1 if dtype is not D.bool else True)
    b = tensor(vb)
    rtol, atol = data.draw(st.sampled_from([(1e-5, 1e-8), (0.0, 0.0), (1e-2, 0.0), (0.0, 1e-2)]))
    equal_nan = data.draw(st.booleans())
    wa, wb = va.astype(compute_dtype(dtype)), vb.astype(compute_dtype(dtype))
    if dtype.is_floating_point or dtype.is_complex:
        want = bool(quiet(np.allclose, wa, wb, rtol=rtol, atol=atol, equal_nan=equal_nan))
    else:
        want = bool(np.all(np.abs(wa - wb) <= atol + rtol * np.abs(wb)))
    got = D.allclose(a, b, rtol, atol, equal_nan)
    assert got is want
    assert D.equal(a, b) is bool(np.array_equal(va, vb))


def test_allclose_equal_rules():
    a = tensor([1.0, np.inf, -np.inf])
    assert D.allclose(a, a) and D.equal(a, a)
    assert not D.allclose(tensor([np.inf]), tensor([-np.inf]))
    assert D.allclose(tensor([1.0, 1.0]), tensor([1.0]))  # broadcasts
    assert D.equal(tensor([1.0, 2.0]), tensor([1.0])) is False  # shapes differ
    assert D.equal(tensor(np.zeros((0, 2))), tensor(np.zeros((0, 2))))
    assert not D.equal(tensor([np.nan]), tensor([np.nan]))
    with pytest.raises(TypeError, match="equal"):
        D.equal(tensor([1.0]), tensor([1.0], D.float32))
    with pytest.raises(TypeError, match="allclose"):
        D.allclose(tensor([1.0]), tensor([1]))
    with pytest.raises(ValueError, match="allclose"):
        D.allclose(tensor([1.0]), tensor([1.0]), rtol=-1.0)
    meta = P.empty_strided([2], [1], dtype=D.float32, device="meta")
    with pytest.raises(NotImplementedError):
        D.allclose(meta, meta)


def test_out_variants():
    a = tensor(np.arange(6.0).reshape(2, 3), D.float32)
    b = tensor(np.ones((3, 2)), D.float32)
    out = tensor(np.zeros((3, 3)), D.float32)
    with pytest.warns(UserWarning, match="resized"):
        assert ops.mm.out(a, b, out=out) is out
    check(out, np.arange(6.0).reshape(2, 3) @ np.ones((3, 2)), D.float32)
    out = tensor(np.zeros(0), D.float64)
    ops.matmul.out(a, b, out=out)
    check(out, np.arange(6.0).reshape(2, 3) @ np.ones((3, 2)), D.float64)
    with pytest.raises(TypeError, match="cast"):
        ops.mv.out(a, tensor(np.ones(3), D.float32), out=tensor([0, 0]))


META_CASES = [
    ("matmul 1x1", (4,), (4,), D.matmul),
    ("matmul 2x1", (3, 4), (4,), D.matmul),
    ("matmul 1x3", (4,), (2, 4, 5), D.matmul),
    ("matmul 3x1", (2, 3, 4), (4,), D.matmul),
    ("matmul 4x3", (2, 1, 3, 4), (5, 4, 2), D.matmul),
    ("matmul 3x2", (2, 3, 4), (4, 0), D.matmul),
    ("mm", (3, 4), (4, 2), D.mm),
    ("bmm", (2, 3, 4), (2, 4, 1), D.bmm),
    ("mv", (3, 4), (4,), D.mv),
    ("dot", (4,), (4,), D.dot),
    ("vdot", (0,), (0,), D.vdot),
    ("inner", (2, 4), (3, 4), D.inner),
    ("outer", (2,), (5,), D.outer),
    ("linear", (2, 3, 4), (5, 4), D.linear),
    ("trace", (3, 4), None, D.trace),
    ("dist", (3, 4), (4,), D.dist),
    ("addmm", (2, 4), (4, 3), lambda x, y: D.addmm(D.sum(y, 0), x, y, beta=2, alpha=3)),
    ("baddbmm", (2, 3, 4), (2, 4, 1), lambda x, y: D.baddbmm(D.sum(x, 2, True), x, y)),
    ("addbmm", (2, 3, 4), (2, 4, 1), lambda x, y: D.addbmm(D.sum(y, [0, 1]), x, y)),
    ("addmv", (3, 4), (4,), lambda x, y: D.addmv(D.sum(x, 1), x, y)),
    ("addr", (3,), (4,), lambda x, y: D.addr(D.outer(x, y), x, y, alpha=2)),
]


@pytest.mark.parametrize("name,a_shape,b_shape,fn", META_CASES, ids=[c[0] for c in META_CASES])
@pytest.mark.parametrize("dtype", [D.float32, D.complex64])
def test_meta(name, a_shape, b_shape, fn, dtype):
    a, _ = layout_tensor(np.ones(a_shape).astype(dtype.numpy), "transposed")
    if b_shape is None:
        same_meta(fn, a)
        return
    b, _ = layout_tensor(np.ones(b_shape).astype(dtype.numpy), "sliced")
    same_meta(fn, a, b)


def _f(*shape, dtype=D.float32):
    return tensor(np.ones(shape), dtype)


ERROR_CASES = [
    ("matmul 0-dim", lambda: D.matmul(_f(), _f(3)), ValueError),
    ("matmul inner", lambda: D.matmul(_f(2, 3), _f(4)), ValueError),
    ("matmul batch", lambda: D.matmul(_f(2, 2, 3), _f(3, 3, 1)), ValueError),
    ("matmul dtype", lambda: D.matmul(_f(2, 3), _f(3, 2, dtype=D.float64)), TypeError),
    ("mm rank", lambda: D.mm(_f(2, 3, 1), _f(3, 2)), ValueError),
    ("mm inner", lambda: D.mm(_f(2, 3), _f(2, 3)), ValueError),
    ("mm bool", lambda: D.mm(_f(2, 2, dtype=D.bool), _f(2, 2, dtype=D.bool)), TypeError),
    ("bmm batch", lambda: D.bmm(_f(2, 2, 2), _f(3, 2, 2)), ValueError),
    ("mv rank", lambda: D.mv(_f(2, 2), _f(2, 1)), ValueError),
    ("dot size", lambda: D.dot(_f(2), _f(3)), ValueError),
    ("dot dtype", lambda: D.dot(_f(2), _f(2, dtype=D.int64)), TypeError),
    ("dot rank", lambda: D.dot(_f(2, 1), _f(2)), ValueError),
    ("inner size", lambda: D.inner(_f(2, 3), _f(2)), ValueError),
    ("outer rank", lambda: D.outer(_f(2, 2), _f(2)), ValueError),
    ("linear weight", lambda: D.linear(_f(2, 3), _f(1, 1, 3)), ValueError),
    ("linear bias dtype", lambda: D.linear(_f(2, 3), _f(4, 3), _f(4, dtype=D.float64)), TypeError),
    ("trace rank", lambda: D.trace(_f(3)), ValueError),
    ("addbmm batch", lambda: D.addbmm(_f(2, 2), _f(2, 2, 3), _f(1, 3, 2)), ValueError),
]


@pytest.mark.parametrize("name,fn,exc", ERROR_CASES, ids=[c[0] for c in ERROR_CASES])
def test_errors(name, fn, exc):
    with pytest.raises(exc, match=name.split()[0]):
        fn()


@pytest.mark.parametrize("dtype", FLOATS + COMPLEX)
def test_matmul_transposed_views(dtype):
    values = np.arange(12.0).reshape(3, 4).astype(dtype.numpy)
    t, _ = layout_tensor(values, "transposed")
    wide = values.astype(np.complex128 if dtype.is_complex else np.float64)
    check(D.matmul(t, P.transpose(t, [1, 0])), wide @ wide.T, dtype, rtol=1e-2 if dtype is D.bfloat16 else None)
