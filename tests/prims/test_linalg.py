"""Linear-algebra prims: reconstruction identities checked with NumPy, meta shapes, errors."""

from __future__ import annotations

import math

import numpy as np
import opweave as ow
import pytest
from _prim_support import COMPLEXES, FLOATS, INTS, LAYOUTS, P, meta, randn, run_in_layout
from hypothesis import given, settings
from hypothesis import strategies as st

LA = [ow.float32, ow.float64, ow.complex64, ow.complex128]
NUMERIC = INTS + FLOATS + COMPLEXES
SETTINGS = settings(max_examples=12, deadline=None)


def tol(dtype):
    """Tolerance for identities on well-conditioned inputs (singular values in [0.5, 2])."""
    return {ow.float32: 2e-4, ow.complex64: 2e-4, ow.float64: 1e-10, ow.complex128: 1e-10}[dtype]


def close(actual, expected, dtype, scale=1.0):
    t = tol(dtype) * scale
    np.testing.assert_allclose(np.asarray(actual), np.asarray(expected), rtol=t, atol=t)


def H(a):
    return np.conj(np.swapaxes(a, -1, -2))


def eye_like(n, batch, dtype=np.float64):
    return np.broadcast_to(np.eye(n, dtype=dtype), batch + (n, n))


# --- inputs ------------------------------------------------------------------------------------------


def orthonormal(rng, batch, m, k, dtype):
    """(*, m, k) with orthonormal columns (k <= m)."""
    if m == 0 or k == 0:
        return np.zeros(batch + (m, k), dtype.numpy)
    q, _ = np.linalg.qr(randn(rng, batch + (m, m), dtype))
    return q[..., :k]


def well_conditioned(rng, batch, m, n, dtype):
    """U diag(s) Vᴴ with s in [0.5, 2]."""
    k = min(m, n)
    s = rng.uniform(0.5, 2.0, batch + (k,))
    u, v = orthonormal(rng, batch, m, k, dtype), orthonormal(rng, batch, n, k, dtype)
    return ((u * s[..., None, :]) @ H(v)).astype(dtype.numpy)


def hermitian_pd(rng, batch, n, dtype):
    return well_conditioned_sym(rng, batch, n, dtype, 0.5, 2.0)


def well_conditioned_sym(rng, batch, n, dtype, lo, hi):
    q = orthonormal(rng, batch, n, n, dtype)
    s = rng.uniform(lo, hi, batch + (n,))
    a = (q * s[..., None, :]) @ H(q)
    return ((a + H(a)) / 2).astype(dtype.numpy)


def call(op, arrays, layout, *args):
    """Run ``op`` on ``arrays`` in ``layout``; checks inputs are unchanged and the meta function agrees.

    "broadcast" repeats the first matrix over the batch dim 0, so it only applies to batched (3+ dim) arrays.
    """
    outs, values = run_in_layout(op, arrays, layout, *args, min_broadcast_ndim=3)
    assert all(o.device.type == "cpu" for o in outs)
    return tuple(o.numpy() for o in outs), values


batches = st.sampled_from([(), (2,), (0,), (2, 1)])
sizes = st.integers(0, 4)
layouts = st.sampled_from(LAYOUTS)


# --- mm / bmm ----------------------------------------------------------------------------------------


def int_or_float(rng, shape, dtype):
    if dtype.kind in ("int", "uint"):
        lo = 0 if dtype.kind == "uint" else -20
        return rng.integers(lo, 20, shape).astype(dtype.numpy)
    return randn(rng, shape, dtype).astype(dtype.numpy)


def matmul_oracle(a, b, dtype):
    if dtype.kind in ("int", "uint"):
        return np.matmul(a.astype(np.int64), b.astype(np.int64)).astype(dtype.numpy)  # wraps as torch
    return np.matmul(a.astype(np.complex128 if dtype.is_complex else np.float64), b.astype(np.complex128))


@pytest.mark.parametrize("dtype", NUMERIC)
@SETTINGS
@given(m=sizes, k=sizes, n=sizes, batch=st.sampled_from([None, 0, 1, 3]), layout=layouts, seed=st.integers(0, 99))
def test_mm_bmm(dtype, m, k, n, batch, layout, seed):
    rng = np.random.default_rng(seed)
    lead = () if batch is None else (batch,)
    a, b = int_or_float(rng, lead + (m, k), dtype), int_or_float(rng, lead + (k, n), dtype)
    (out,), (a, b) = call(P.mm if batch is None else P.bmm, [a, b], layout)
    expected = matmul_oracle(a, b, dtype)
    if dtype.kind in ("int", "uint"):
        np.testing.assert_array_equal(out, expected)
    else:
        t = {ow.float16: 2e-3, ow.bfloat16: 1e-2, ow.float32: 1e-5, ow.complex64: 1e-5}.get(dtype, 1e-12)
        np.testing.assert_allclose(out.astype(expected.dtype), expected, rtol=t, atol=t * max(k, 1) * 4)


# --- decompositions ------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", LA)
@SETTINGS
@given(batch=batches, m=sizes, n=sizes, full=st.booleans(), layout=layouts, seed=st.integers(0, 99))
def test_svd(dtype, batch, m, n, full, layout, seed):
    a = well_conditioned(np.random.default_rng(seed), batch, m, n, dtype)
    (u, s, vh), (a,) = call(P.svd, [a], layout, full)
    k = min(m, n)
    assert s.dtype == dtype.to_real().numpy
    assert u.shape == batch + (m, m if full else k) and vh.shape == batch + (n if full else k, n)
    close((u[..., :k] * s[..., None, :]) @ vh[..., :k, :], a, dtype)
    close(H(u) @ u, eye_like(u.shape[-1], batch), dtype)
    close(vh @ H(vh), eye_like(vh.shape[-2], batch), dtype)
    close(s, np.linalg.svd(a.astype(np.complex128), compute_uv=False), dtype)


@pytest.mark.parametrize("dtype", LA)
@pytest.mark.parametrize("mode", ["reduced", "complete", "r"])
@SETTINGS
@given(batch=batches, m=sizes, n=sizes, layout=layouts, seed=st.integers(0, 99))
def test_qr(dtype, mode, batch, m, n, layout, seed):
    a = well_conditioned(np.random.default_rng(seed), batch, m, n, dtype)
    (q, r), (a,) = call(P.qr, [a], layout, mode)
    np.testing.assert_array_equal(np.tril(r, -1), 0)
    if mode == "r":
        assert q.shape == (0,)
        close(H(r) @ r, H(a) @ a, dtype, 4)
        return
    close(q @ r, a, dtype)
    close(H(q) @ q, eye_like(q.shape[-1], batch), dtype)


@pytest.mark.parametrize("dtype", LA)
@pytest.mark.parametrize("upper", [False, True])
@SETTINGS
@given(batch=batches, n=sizes, layout=layouts, seed=st.integers(0, 99))
def test_cholesky(dtype, upper, batch, n, layout, seed):
    a = hermitian_pd(np.random.default_rng(seed), batch, n, dtype)
    (c,), (a,) = call(P.cholesky, [a], layout, upper)
    if upper:
        np.testing.assert_array_equal(np.tril(c, -1), 0)
        close(H(c) @ c, a, dtype)
    else:
        np.testing.assert_array_equal(np.triu(c, 1), 0)
        close(c @ H(c), a, dtype)


@pytest.mark.parametrize("dtype", LA)
def test_cholesky_reads_lower_triangle_and_rejects_indefinite(dtype):
    a = hermitian_pd(np.random.default_rng(0), (), 3, dtype)
    garbage = a + np.triu(np.full((3, 3), 7.0), 1).astype(dtype.numpy)
    low = P.cholesky(ow.from_numpy(garbage), False).numpy()
    close(low @ H(low), a, dtype)
    with pytest.raises(ValueError, match="prims::cholesky"):
        P.cholesky(ow.from_numpy(-np.eye(3, dtype=dtype.numpy)), False)


@pytest.mark.parametrize("dtype", LA)
@pytest.mark.parametrize("left", [True, False])
@SETTINGS
@given(batch=batches, n=sizes, k=sizes, layout=layouts, seed=st.integers(0, 99))
def test_solve(dtype, left, batch, n, k, layout, seed):
    rng = np.random.default_rng(seed)
    a = well_conditioned(rng, batch, n, n, dtype)
    b = randn(rng, batch + ((n, k) if left else (k, n)), dtype).astype(dtype.numpy)
    (x,), (a, b) = call(P.solve, [a, b], layout, left)
    close(a @ x if left else x @ a, b, dtype, 10)


@pytest.mark.parametrize("dtype", LA)
@pytest.mark.parametrize("uplo", ["L", "U"])
@SETTINGS
@given(batch=batches, n=sizes, layout=layouts, seed=st.integers(0, 99))
def test_eigh(dtype, uplo, batch, n, layout, seed):
    rng = np.random.default_rng(seed)
    a = well_conditioned_sym(rng, batch, n, dtype, -2.0, 2.0)
    if layout == "broadcast" and batch and batch[0]:
        a = np.broadcast_to(a[:1], a.shape).copy()
    other = np.triu if uplo == "L" else np.tril
    noisy = (a + other(np.full((n, n), 5.0), 1 if uplo == "L" else -1)).astype(dtype.numpy)  # ignored triangle
    (w, v), _ = call(P.eigh, [noisy], layout, uplo)
    assert w.dtype == dtype.to_real().numpy
    assert np.all(np.diff(w, axis=-1) >= 0)
    close(a @ v, v * w[..., None, :], dtype, 4)
    close(H(v) @ v, eye_like(n, batch), dtype)
    close(w, np.linalg.eigvalsh(a.astype(np.complex128)), dtype, 4)


@pytest.mark.parametrize("dtype", LA)
@SETTINGS
@given(batch=batches, n=sizes, layout=layouts, seed=st.integers(0, 99))
def test_eig(dtype, batch, n, layout, seed):
    a = well_conditioned(np.random.default_rng(seed), batch, n, n, dtype)
    (w, v), (a,) = call(P.eig, [a], layout)
    assert w.dtype == dtype.to_complex().numpy and v.dtype == dtype.to_complex().numpy
    close(a @ v, v * w[..., None, :], dtype, 20)
    np.testing.assert_allclose(np.linalg.norm(v, axis=-2), 1, rtol=tol(dtype) * 10)


@pytest.mark.parametrize("dtype", LA)
@pytest.mark.parametrize("pivot", [True, False])
@SETTINGS
@given(batch=batches, m=sizes, n=sizes, layout=layouts, seed=st.integers(0, 99))
def test_lu(dtype, pivot, batch, m, n, layout, seed):
    a = well_conditioned(np.random.default_rng(seed), batch, m, n, dtype)
    if not pivot:  # diagonally dominant: elimination without pivoting is stable
        a = a + (4 * np.eye(m, n)).astype(dtype.numpy)
    (p, low, up), (a,) = call(P.lu, [a], layout, pivot)
    k = min(m, n)
    assert p.shape == batch + (m, m) and low.shape == batch + (m, k) and up.shape == batch + (k, n)
    np.testing.assert_array_equal(np.triu(low, 1), 0)
    np.testing.assert_array_equal(np.diagonal(low, axis1=-2, axis2=-1), 1)
    np.testing.assert_array_equal(np.tril(up, -1), 0)
    assert np.all(np.sort(p.real, axis=-1)[..., :-1] == 0) and np.allclose(p.sum(axis=-1), 1)
    if not pivot:
        np.testing.assert_array_equal(p, eye_like(m, batch))
    close(p @ low @ up, a, dtype, 10)


def permutation_from_pivots(piv, m):
    """Rows of A in the order LU factors them: swap row i with row piv[i] - 1, in order."""
    perm = list(range(m))
    for i, p in enumerate(piv):
        perm[i], perm[p - 1] = perm[p - 1], perm[i]
    return perm


@pytest.mark.parametrize("dtype", LA)
@pytest.mark.parametrize("pivot", [True, False])
@SETTINGS
@given(batch=batches, m=sizes, n=sizes, layout=layouts, seed=st.integers(0, 99))
def test_lu_factor(dtype, pivot, batch, m, n, layout, seed):
    a = well_conditioned(np.random.default_rng(seed), batch, m, n, dtype)
    if not pivot:
        a = a + (4 * np.eye(m, n)).astype(dtype.numpy)
    (lu, piv), (a,) = call(P.lu_factor, [a], layout, pivot)
    k = min(m, n)
    assert piv.dtype == np.int32 and piv.shape == batch + (k,)
    for idx in np.ndindex(*batch):
        ll = np.tril(lu[idx][:, :k], -1) + np.eye(m, k)
        uu = np.triu(lu[idx][:k, :])
        pv = piv[idx].tolist()
        assert all(i + 1 <= p <= m for i, p in enumerate(pv))
        if not pivot:
            assert pv == list(range(1, k + 1))
        close(ll @ uu, a[idx][permutation_from_pivots(pv, m)], dtype, 10)


@pytest.mark.parametrize("dtype", LA)
@pytest.mark.parametrize("upper", [True, False])
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("unit", [True, False])
@settings(max_examples=6, deadline=None)
@given(batch=batches, n=sizes, k=sizes, layout=layouts, seed=st.integers(0, 99))
def test_triangular_solve(dtype, upper, left, unit, batch, n, k, layout, seed):
    rng = np.random.default_rng(seed)
    a = (randn(rng, batch + (n, n), dtype) * 0.3 + 2 * np.eye(n)).astype(dtype.numpy)
    b = randn(rng, batch + ((n, k) if left else (k, n)), dtype).astype(dtype.numpy)
    (x,), (b, a) = call(P.triangular_solve, [b, a], layout, upper, left, unit)
    tri = np.triu(a) if upper else np.tril(a)
    if unit:
        tri = tri - np.diagonal(tri, axis1=-2, axis2=-1)[..., None] * np.eye(n) + np.eye(n)
    close(tri @ x if left else x @ tri, b, dtype, 10)


def test_triangular_solve_reads_only_its_triangle():
    a = np.array([[2.0, 100.0], [1.0, 4.0]])
    b = np.array([[2.0], [9.0]])
    x = P.triangular_solve(ow.from_numpy(b), ow.from_numpy(a), False, True, False).numpy()
    np.testing.assert_allclose(x, [[1.0], [2.0]])
    with pytest.raises(ValueError, match="prims::triangular_solve"):
        P.triangular_solve(ow.from_numpy(b), ow.from_numpy(np.zeros((2, 2))), True, True, False)


# --- inverse, det, slogdet, lstsq, matrix_exp ------------------------------------------------------------


@pytest.mark.parametrize("dtype", LA)
@SETTINGS
@given(batch=batches, n=sizes, layout=layouts, seed=st.integers(0, 99))
def test_inverse_det_slogdet(dtype, batch, n, layout, seed):
    a = well_conditioned(np.random.default_rng(seed), batch, n, n, dtype)
    (inv,), (a,) = call(P.inverse, [a], layout)
    close(a @ inv, eye_like(n, batch), dtype, 10)
    (det,), _ = call(P.det, [a], layout)
    expected = np.linalg.det(a.astype(np.complex128))
    close(det, expected if dtype.is_complex else expected.real, dtype, 10)
    (sign, logabs), _ = call(P.slogdet, [a], layout)
    assert sign.dtype == dtype.numpy and logabs.dtype == dtype.to_real().numpy
    close(np.abs(sign), np.ones(batch), dtype)
    close(sign * np.exp(logabs), det, dtype, 10)


@pytest.mark.parametrize("dtype", LA)
def test_singular_matrices(dtype):
    s = ow.from_numpy(np.array([[1.0, 2.0], [2.0, 4.0]]).astype(dtype.numpy))
    for name, fn in [("inverse", lambda: P.inverse(s)), ("solve", lambda: P.solve(s, s, True))]:
        with pytest.raises(ValueError, match=f"prims::{name}"):
            fn()
    sign, logabs = P.slogdet(s)
    assert sign.numpy() == 0 and logabs.numpy() == -np.inf
    assert abs(P.det(s).numpy()) < 1e-5
    assert P.det(ow.from_numpy(np.zeros((0, 0), dtype.numpy))).numpy() == 1


@pytest.mark.parametrize("dtype", LA)
@SETTINGS
@given(batch=batches, m=sizes, n=sizes, k=sizes, layout=layouts, seed=st.integers(0, 99))
def test_lstsq(dtype, batch, m, n, k, layout, seed):
    rng = np.random.default_rng(seed)
    a = well_conditioned(rng, batch, m, n, dtype)
    b = randn(rng, batch + (m, k), dtype).astype(dtype.numpy)
    (x, res, rank, sv), (a, b) = call(P.lstsq, [a, b], layout, None)
    wide = np.complex128
    expected = np.linalg.pinv(a.astype(wide)) @ b.astype(wide)  # minimum-norm least-squares solution
    close(x, expected if dtype.is_complex else expected.real, dtype, 10)
    np.testing.assert_array_equal(rank, np.full(batch, min(m, n)))
    close(sv, np.linalg.svd(a.astype(wide), compute_uv=False), dtype)
    if m > n:
        close(res, np.sum(np.abs(a.astype(wide) @ expected - b) ** 2, axis=-2), dtype, 100)
    else:
        assert res.shape == (0,)


def test_lstsq_rank_deficient_and_rcond():
    a = np.array([[1.0, 2.0], [2.0, 4.0], [3.0, 6.0]])
    b = np.array([[1.0], [2.0], [4.0]])
    x, res, rank, sv = (t.numpy() for t in P.lstsq(ow.from_numpy(a), ow.from_numpy(b), None))
    assert rank == 1
    np.testing.assert_allclose(x, np.linalg.pinv(a) @ b, rtol=1e-10)
    np.testing.assert_allclose(res, np.sum((a @ x - b) ** 2, axis=0), rtol=1e-10)
    full = np.array([[1.0, 0.0], [0.0, 1e-3], [0.0, 0.0]])
    assert P.lstsq(ow.from_numpy(full), ow.from_numpy(b), 1e-2)[2].numpy() == 1
    assert P.lstsq(ow.from_numpy(full), ow.from_numpy(b), None)[2].numpy() == 2


def taylor_exp(a):
    """exp(A) by its Taylor series (inputs of norm <= 1, so 30 terms are plenty)."""
    out = eye_like(a.shape[-1], a.shape[:-2], a.dtype).copy()
    term = out.copy()
    for i in range(1, 30):
        term = term @ a / i
        out = out + term
    return out


@pytest.mark.parametrize("dtype", LA)
@SETTINGS
@given(batch=batches, n=sizes, layout=layouts, seed=st.integers(0, 99))
def test_matrix_exp(dtype, batch, n, layout, seed):
    rng = np.random.default_rng(seed)
    a = (randn(rng, batch + (n, n), dtype) / (2 * max(n, 1))).astype(dtype.numpy)
    (e,), (a,) = call(P.matrix_exp, [a], layout)
    wide = np.complex128 if dtype.is_complex else np.float64
    close(e, taylor_exp(a.astype(wide)), dtype)


# --- geqrf / householder_product ------------------------------------------------------------------------


def reflectors_product(a, tau, ncols):
    """H_1 ... H_k applied to the first ``ncols`` columns of the identity (one matrix, NumPy)."""
    m = a.shape[0]
    q = np.eye(m, dtype=np.complex128)
    for i in range(tau.shape[0]):
        v = np.zeros(m, np.complex128)
        v[i] = 1
        v[i + 1 :] = a[i + 1 :, i]
        q = q @ (np.eye(m) - tau[i] * np.outer(v, np.conj(v)))
    return q[:, :ncols]


@pytest.mark.parametrize("dtype", LA)
@SETTINGS
@given(batch=batches, m=sizes, n=sizes, layout=layouts, seed=st.integers(0, 99))
def test_geqrf(dtype, batch, m, n, layout, seed):
    a = well_conditioned(np.random.default_rng(seed), batch, m, n, dtype)
    (h, tau), (a,) = call(P.geqrf, [a], layout)
    k = min(m, n)
    assert h.shape == a.shape and tau.shape == batch + (k,)
    for idx in np.ndindex(*batch):
        q = reflectors_product(h[idx], tau[idx], k)
        close(q @ np.triu(h[idx][:k, :]), a[idx], dtype, 10)


@pytest.mark.parametrize("dtype", LA)
@SETTINGS
@given(batch=batches, m=sizes, n=sizes, k=sizes, layout=layouts, seed=st.integers(0, 99))
def test_householder_product(dtype, batch, m, n, k, layout, seed):
    m, n = max(m, n), min(m, n)
    k = min(k, n)
    rng = np.random.default_rng(seed)
    a = randn(rng, batch + (m, n), dtype).astype(dtype.numpy)
    tau = (rng.uniform(0, 2, batch + (k,)) * (1 + (0.5j if dtype.is_complex else 0))).astype(dtype.numpy)
    (q,), (a, tau) = call(P.householder_product, [a, tau], layout)
    for idx in np.ndindex(*batch):
        close(q[idx], reflectors_product(a[idx], tau[idx], n), dtype, 10)


@pytest.mark.parametrize("dtype", LA)
def test_householder_product_of_geqrf_is_q(dtype):
    a = well_conditioned(np.random.default_rng(3), (2,), 5, 3, dtype)
    h, tau = P.geqrf(ow.from_numpy(a))
    q = P.householder_product(h, tau).numpy()
    close(q @ np.triu(h.numpy()[..., :3, :]), a, dtype, 10)
    close(H(q) @ q, eye_like(3, (2,)), dtype)


# --- meta-only and errors ---------------------------------------------------------------------------------


def test_meta_shapes():
    a = meta((3, 5, 2), ow.complex64)
    u, s, vh = P.svd(a, True)
    assert (tuple(u.shape), tuple(s.shape), tuple(vh.shape), s.dtype) == ((3, 5, 5), (3, 2), (3, 2, 2), ow.float32)
    q, r = P.qr(a, "complete")
    assert (tuple(q.shape), tuple(r.shape)) == ((3, 5, 5), (3, 5, 2))
    x, res, rank, sv = P.lstsq(a, meta((3, 5, 4), ow.complex64), None)
    assert [tuple(t.shape) for t in (x, res, rank, sv)] == [(3, 2, 4), (3, 4), (3,), (3, 2)]
    assert (res.dtype, rank.dtype, sv.dtype) == (ow.float32, ow.int64, ow.float32)
    w, v = P.eig(meta((4, 4), ow.float64))
    assert (w.dtype, v.dtype) == (ow.complex128, ow.complex128)
    lu, piv = P.lu_factor(meta((2, 3, 5)), True)
    assert tuple(piv.shape) == (2, 3) and piv.dtype == ow.int32


def test_tags():
    for name in ["mm", "bmm", "svd", "qr", "cholesky", "solve", "eigh", "eig", "lu", "lu_factor", "triangular_solve"]:
        assert "linalg" in getattr(P, name).default.tags
    for name in ["inverse", "det", "slogdet", "lstsq", "matrix_exp", "geqrf", "householder_product"]:
        assert "linalg" in getattr(P, name).default.tags


UNARY = [
    ("svd", lambda a: P.svd(a, False)),
    ("qr", lambda a: P.qr(a, "reduced")),
    ("cholesky", lambda a: P.cholesky(a, False)),
    ("eigh", lambda a: P.eigh(a, "L")),
    ("eig", lambda a: P.eig(a)),
    ("lu", lambda a: P.lu(a, True)),
    ("lu_factor", lambda a: P.lu_factor(a, True)),
    ("inverse", lambda a: P.inverse(a)),
    ("det", lambda a: P.det(a)),
    ("slogdet", lambda a: P.slogdet(a)),
    ("matrix_exp", lambda a: P.matrix_exp(a)),
    ("geqrf", lambda a: P.geqrf(a)),
]
SQUARE_ONLY = {"cholesky", "eigh", "eig", "inverse", "det", "slogdet", "matrix_exp"}


@pytest.mark.parametrize("name, fn", UNARY)
@pytest.mark.parametrize("device", ["cpu", "meta"])
def test_unary_errors(name, fn, device):
    def t(shape, dtype):
        if device == "meta":
            return meta(shape, dtype)
        return ow.from_numpy(np.ones(shape, dtype.numpy))

    for bad in (ow.float16, ow.bfloat16, ow.int64, ow.bool):
        with pytest.raises(TypeError, match=f"prims::{name}"):
            fn(t((2, 2), bad))
    with pytest.raises(ValueError, match=f"prims::{name}"):
        fn(t((3,), ow.float32))
    if name in SQUARE_ONLY:
        with pytest.raises(ValueError, match=f"prims::{name}"):
            fn(t((2, 3), ow.float32))


def test_binary_errors():
    f, d = meta((3, 3)), meta((3, 3), ow.float64)
    cases = [
        (TypeError, "mm", lambda: P.mm(f, d)),
        (TypeError, "mm", lambda: P.mm(meta((2, 2), ow.bool), meta((2, 2), ow.bool))),
        (ValueError, "mm", lambda: P.mm(meta((2, 3)), meta((2, 3)))),
        (ValueError, "mm", lambda: P.mm(meta((1, 2, 3)), meta((1, 3, 2)))),
        (ValueError, "bmm", lambda: P.bmm(meta((2, 2, 3)), meta((3, 3, 2)))),
        (ValueError, "bmm", lambda: P.bmm(meta((2, 2, 3)), meta((2, 2, 2)))),
        (ValueError, "qr", lambda: P.qr(f, "economic")),
        (ValueError, "eigh", lambda: P.eigh(f, "X")),
        (TypeError, "solve", lambda: P.solve(f, d, True)),
        (ValueError, "solve", lambda: P.solve(f, meta((2, 3)), True)),
        (ValueError, "solve", lambda: P.solve(f, meta((3, 2)), False)),
        (ValueError, "solve", lambda: P.solve(meta((2, 3, 3)), meta((3, 3, 1)), True)),
        (ValueError, "triangular_solve", lambda: P.triangular_solve(meta((2, 3)), f, True, True, False)),
        (ValueError, "lstsq", lambda: P.lstsq(meta((4, 3)), meta((3, 1)), None)),
        (TypeError, "lstsq", lambda: P.lstsq(f, d, None)),
        (ValueError, "householder_product", lambda: P.householder_product(meta((2, 3)), meta((2,)))),
        (ValueError, "householder_product", lambda: P.householder_product(meta((4, 3)), meta((4,)))),
        (TypeError, "householder_product", lambda: P.householder_product(f, meta((3,), ow.float64))),
    ]
    for exc, name, fn in cases:
        with pytest.raises(exc, match=f"prims::{name}"):
            fn()


def test_lu_without_pivoting_rejects_zero_pivot():
    a = ow.from_numpy(np.array([[0.0, 1.0], [1.0, 0.0]]))
    with pytest.raises(ValueError, match="prims::lu"):
        P.lu(a, False)
    p, low, up = (t.numpy() for t in P.lu(a, True))
    np.testing.assert_allclose(p @ low @ up, a.numpy())
    assert math.isclose(abs(P.det(a).numpy()), 1.0)
