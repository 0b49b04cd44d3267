"""The OpenCL factorisations and solvers against NumPy/SciPy, on the device (no CPU fallback)."""

from __future__ import annotations

import contextlib
import warnings

import numpy as np
import opweave as ow
import pytest
import scipy.linalg as sla
from hypothesis import given
from hypothesis import strategies as st

P = ow.ops.prims
FLOATS = [np.float32, np.float64]
TOL = {np.float32: 5e-4, np.float64: 1e-10}
PRIMS = ("cholesky", "lu", "lu_factor", "triangular_solve", "solve", "inverse", "det", "slogdet")


def dev(a):
    """A contiguous OpenCL tensor holding ``a``."""
    return ow.tensor(np.ascontiguousarray(a)).to("opencl")


def host(t):
    return t.numpy(force=True)


def laid_out(x: np.ndarray, layout: str):
    """``x`` on the device as a contiguous, transposed, strided, storage-offset or batch-broadcast view."""
    if layout == "transposed":
        return dev(np.swapaxes(x, -1, -2)).transpose(-1, -2)
    if layout == "strided":
        return dev(np.repeat(x, 2, axis=-1))[..., ::2]
    if layout == "offset":
        return dev(np.concatenate([np.zeros(5, x.dtype), x.ravel()]))[5:].view(*x.shape)
    if layout == "broadcast" and x.ndim == 3:
        return dev(x[:1]).expand(*x.shape) if (x == x[:1]).all() else dev(x)
    return dev(x)


def _fallbacks():
    from opweave import _fallback

    return sum(_fallback.calls[f"prims::{n}"] for n in PRIMS)


@contextlib.contextmanager
def on_device():
    """Fail if a prim runs through the CPU fallback, or warns."""
    before = _fallbacks()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield
    assert _fallbacks() == before


def close(got, expected, dtype, factor=1.0):
    got = host(got)
    assert got.shape == expected.shape
    scale = max(1.0, float(np.max(np.abs(expected)))) if expected.size else 1.0
    np.testing.assert_allclose(got, expected, rtol=0, atol=TOL[dtype] * scale * factor)


def well(rng, shape, dtype):
    """Random matrices plus ``n`` times the identity (well conditioned)."""
    n = shape[-1]
    return (rng.uniform(-1, 1, shape) + n * np.eye(n)).astype(dtype)


def spd(rng, shape, dtype):
    a = rng.uniform(-1, 1, shape)
    return (a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])).astype(dtype)


LAYOUTS = ["contiguous", "transposed", "strided", "offset"]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("n", [1, 4, 70])
def test_cholesky_reads_the_lower_triangle(ocl, dtype, layout, n):
    a = spd(np.random.default_rng(n), (2, n, n), dtype)
    junk = a + np.triu(np.full((n, n), 9.0), 1).astype(dtype)  # the upper triangle is never read
    with on_device():
        low = P.cholesky(laid_out(junk, layout), False)
        up = P.cholesky(laid_out(junk, layout), True)
    expected = np.linalg.cholesky(a.astype(np.float64))
    close(low, expected, dtype)
    close(up, np.swapaxes(expected, -1, -2), dtype)


def test_cholesky_of_a_matrix_that_is_not_positive_definite_raises(ocl):
    a = dev(np.array([[[4.0, 0.0], [0.0, 1.0]], [[1.0, 2.0], [2.0, 1.0]]]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ValueError, match="prims::cholesky: the input is not positive definite"):
            P.cholesky(a, False)
    with on_device():
        assert np.isnan(host(P.cholesky(dev(np.array([[np.nan]])), False))).all()  # NaN propagates, as on the CPU


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(3, 3), (2, 5, 5), (4, 6), (6, 4), (2, 33, 33)])
@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
def test_lu_factor_and_lu_match_lapack_pivots(ocl, dtype, shape, layout):
    a = np.random.default_rng(1).uniform(-1, 1, shape).astype(dtype)
    with on_device():
        lu, piv = P.lu_factor(laid_out(a, layout), True)
        p, low, up = P.lu(laid_out(a, layout), True)
    flat = a.reshape((-1,) + a.shape[-2:])
    for i, m in enumerate(flat):
        e_lu, e_piv = sla.lu_factor(m)
        e_p, e_l, e_u = sla.lu(m)
        close(lu.reshape((-1,) + a.shape[-2:])[i], e_lu, dtype)
        np.testing.assert_array_equal(host(piv.reshape(flat.shape[0], -1)[i]), e_piv + 1)
        close(p.reshape((-1,) + p.shape[-2:])[i], e_p, dtype)
        close(low.reshape((-1,) + low.shape[-2:])[i], e_l, dtype)
        close(up.reshape((-1,) + up.shape[-2:])[i], e_u, dtype)
    assert piv.dtype == ow.int32


def test_lu_without_pivoting_and_its_zero_pivot_error(ocl):
    a = np.array([[2.0, 1.0, 1.0], [4.0, 3.0, 3.0], [8.0, 7.0, 9.0]])
    with on_device():
        lu, piv = P.lu_factor(dev(a), False)
        p, low, up = P.lu(dev(a), False)
    np.testing.assert_array_equal(host(piv), [1, 2, 3])
    np.testing.assert_allclose(host(low) @ host(up), a, atol=1e-12)
    np.testing.assert_array_equal(host(p), np.eye(3))
    np.testing.assert_allclose(host(lu), np.tril(host(low), -1) + host(up), atol=1e-12)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ValueError, match="zero pivot"):
            P.lu_factor(dev(np.array([[0.0, 1.0], [1.0, 0.0]])), False)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("upper", [True, False])
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("unit", [True, False])
def test_triangular_solve_every_flag(ocl, dtype, upper, left, unit):
    rng = np.random.default_rng(5)
    n, k = 6, 3
    a = well(rng, (2, n, n), dtype)
    tri = np.triu(a) if upper else np.tril(a)
    used = tri.copy()
    if unit:
        used[:, np.arange(n), np.arange(n)] = 1
    b = rng.uniform(-1, 1, (2, n, k) if left else (2, k, n)).astype(dtype)
    with on_device():
        x = P.triangular_solve(laid_out(b, "transposed"), laid_out(a, "strided"), upper, left, unit)
    u64 = used.astype(np.float64)
    if left:
        expected = np.linalg.solve(u64, b)
    else:
        expected = np.swapaxes(np.linalg.solve(np.swapaxes(u64, -1, -2), np.swapaxes(b, -1, -2)), -1, -2)
    close(x, expected, dtype, 10)


def test_triangular_solve_with_a_zero_on_the_diagonal_raises(ocl):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ValueError, match="prims::triangular_solve: the matrix 'A' is singular"):
            P.triangular_solve(dev(np.ones((2, 1))), dev(np.array([[1.0, 2.0], [0.0, 0.0]])), True, True, False)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("layout", LAYOUTS + ["broadcast"])
def test_solve_and_inverse(ocl, dtype, layout):
    rng = np.random.default_rng(9)
    a = well(rng, (3, 7, 7), dtype)
    if layout == "broadcast":
        a = np.broadcast_to(a[:1], a.shape).copy()
    b = rng.uniform(-1, 1, (3, 7, 2)).astype(dtype)
    with on_device():
        left = P.solve(laid_out(a, layout), laid_out(b, layout), True)
        right = P.solve(laid_out(a, layout), laid_out(np.swapaxes(b, -1, -2), layout), False)
        inv = P.inverse(laid_out(a, layout))
    a64 = a.astype(np.float64)
    close(left, np.linalg.solve(a64, b), dtype, 10)
    close(right, np.swapaxes(np.linalg.solve(np.swapaxes(a64, -1, -2), b), -1, -2), dtype, 10)
    close(inv, np.linalg.inv(a64), dtype, 10)


def test_singular_solve_and_inverse_raise(ocl):
    s = dev(np.array([[1.0, 2.0], [2.0, 4.0]]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ValueError, match="prims::inverse: the matrix 'A' is singular"):
            P.inverse(s)
        with pytest.raises(ValueError, match="prims::solve: the matrix 'A' is singular"):
            P.solve(s, dev(np.ones((2, 1))), True)


@pytest.mark.parametrize("dtype", FLOATS)
def test_det_and_slogdet(ocl, dtype):
    rng = np.random.default_rng(2)
    a = rng.uniform(-1, 1, (4, 5, 5)).astype(dtype)
    a[1] = 0  # singular
    a[2, :, 0] = np.nan
    with on_device():
        d = P.det(laid_out(a, "transposed"))
        sign, logabs = P.slogdet(dev(a))
        d0 = P.det(dev(np.zeros((2, 0, 0), dtype)))
        s0, l0 = P.slogdet(dev(np.zeros((0, 3, 3), dtype)))
    a64 = a.astype(np.float64)
    with np.errstate(invalid="ignore"):
        e_sign, e_log = np.linalg.slogdet(a64)
        e_det = np.linalg.det(a64)
    got_d = host(d)
    np.testing.assert_allclose(got_d, e_det, rtol=TOL[dtype] * 10, atol=TOL[dtype])
    assert np.isnan(got_d[2]) and got_d[1] == 0
    np.testing.assert_array_equal(host(sign)[[0, 1, 3]], e_sign[[0, 1, 3]])
    np.testing.assert_allclose(host(logabs)[[0, 3]], e_log[[0, 3]], rtol=TOL[dtype] * 10)
    assert host(logabs)[1] == -np.inf and np.isnan(host(logabs)[2])
    np.testing.assert_array_equal(host(d0), [1, 1])
    assert tuple(s0.shape) == (0,) and tuple(l0.shape) == (0,)


def test_empty_batches_and_matrices(ocl):
    with on_device():
        c = P.cholesky(dev(np.zeros((0, 3, 3), np.float32)), False)
        x = P.solve(dev(np.eye(3)), dev(np.zeros((3, 0))), True)
        lu, piv = P.lu_factor(dev(np.zeros((2, 3, 0))), True)
        p, low, up = P.lu(dev(np.zeros((2, 0, 3))), True)
    assert tuple(c.shape) == (0, 3, 3) and tuple(x.shape) == (3, 0)
    assert tuple(lu.shape) == (2, 3, 0) and tuple(piv.shape) == (2, 0)
    assert tuple(p.shape) == (2, 0, 0) and tuple(low.shape) == (2, 0, 0) and tuple(up.shape) == (2, 0, 3)


@given(st.integers(1, 12), st.integers(1, 4), st.sampled_from(LAYOUTS), st.integers(0, 2**31))
def test_solve_recovers_the_right_hand_side(ocl, n, k, layout, seed):
    rng = np.random.default_rng(seed)
    a = well(rng, (n, n), np.float64)
    b = rng.uniform(-1, 1, (n, k))
    with on_device():
        x = host(P.solve(laid_out(a, layout), laid_out(b, layout), True))
    np.testing.assert_allclose(a @ x, b, atol=1e-10)


def _qr_prims():
    from opweave import _fallback

    return sum(_fallback.calls[f"prims::{n}"] for n in ("qr", "geqrf", "householder_product", "matrix_exp"))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(3, 3), (2, 6, 4), (4, 7), (2, 40, 70), (1, 1)])
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "strided"])
def test_householder_qr_has_lapacks_signs(ocl, dtype, shape, layout):
    a = np.random.default_rng(4).uniform(-1, 1, shape).astype(dtype)
    before = _qr_prims()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        h, tau = P.geqrf(laid_out(a, layout))
        q, r = P.qr(laid_out(a, layout), "reduced")
        qc, rc = P.qr(laid_out(a, layout), "complete")
        q0, r0 = P.qr(laid_out(a, layout), "r")
        prod = P.householder_product(h, tau) if shape[-2] >= shape[-1] else None
    assert _qr_prims() == before
    a64 = a.astype(np.float64)
    e_h, e_tau = np.linalg.qr(a64, mode="raw")
    close(h, np.swapaxes(e_h, -1, -2), dtype, 10)
    close(tau, e_tau, dtype, 10)
    for mode, (gq, gr) in (("reduced", (q, r)), ("complete", (qc, rc))):
        e_q, e_r = np.linalg.qr(a64, mode=mode)
        close(gq, e_q, dtype, 10)
        close(gr, e_r, dtype, 10)
    assert tuple(q0.shape) == (0,)
    close(r0, np.linalg.qr(a64, mode="r"), dtype, 10)
    if prod is not None:
        close(prod, np.linalg.qr(a64)[0], dtype, 10)


def test_householder_product_of_strided_reflectors_and_zero_tau(ocl):
    rng = np.random.default_rng(8)
    v = rng.uniform(-1, 1, (2, 5, 3))
    tau = np.array([[1.2, 0.0, 0.7], [0.3, 1.1, 0.0]])
    expected = np.zeros((2, 5, 3))
    for b in range(2):
        q = np.eye(5)
        for i in range(3):
            w = v[b, :, i].copy()
            w[:i], w[i] = 0, 1
            q = q @ (np.eye(5) - tau[b, i] * np.outer(w, w))
        expected[b] = q[:, :3]
    before = _qr_prims()
    got = P.householder_product(laid_out(v, "transposed"), dev(np.repeat(tau, 2, axis=-1))[..., ::2])
    assert _qr_prims() == before
    close(got, expected, np.float64)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("scale", [0.0, 0.01, 1.0, 30.0])
def test_matrix_exp_against_its_series_and_eigen_decomposition(ocl, dtype, scale):
    rng = np.random.default_rng(6)
    s = rng.uniform(-1, 1, (3, 4, 4))
    sym = (s + np.swapaxes(s, -1, -2)) * scale / 2  # exp of a symmetric matrix: V diag(exp(w)) Vᵀ
    w, vec = np.linalg.eigh(sym)
    expected = vec @ (np.exp(w)[..., None] * np.swapaxes(vec, -1, -2))
    before = _qr_prims()
    got = P.matrix_exp(laid_out(sym.astype(dtype), "transposed"))
    assert _qr_prims() == before
    factor = 50 if dtype == np.float32 else 1e4
    close(got, expected, dtype, factor)
    e = P.matrix_exp(dev(np.zeros((2, 0, 0), dtype)))
    assert tuple(e.shape) == (2, 0, 0)


CTOL = {np.complex64: 5e-4, np.complex128: 1e-10}


def crand(rng, shape, dtype):
    return (rng.uniform(-1, 1, shape) + 1j * rng.uniform(-1, 1, shape)).astype(dtype)


def cclose(got, expected, dtype, factor=1.0):
    got = host(got)
    assert got.shape == expected.shape and got.dtype == dtype
    scale = max(1.0, float(np.max(np.abs(expected)))) if expected.size else 1.0
    np.testing.assert_allclose(got, expected, rtol=0, atol=CTOL[dtype] * scale * factor)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_factorisations_and_solvers(ocl, dtype):
    rng = np.random.default_rng(12)
    n = 6
    a = crand(rng, (2, n, n), dtype)
    well_c = (a + n * np.eye(n)).astype(dtype)
    herm = (a @ np.conj(np.swapaxes(a, -1, -2)) + n * np.eye(n)).astype(dtype)
    b = crand(rng, (2, n, 3), dtype)
    with on_device():
        low = P.cholesky(laid_out(herm, "transposed"), False)
        up = P.cholesky(dev(herm), True)
        lu, piv = P.lu_factor(laid_out(a, "strided"), True)
        x = P.solve(dev(well_c), dev(b), True)
        inv = P.inverse(laid_out(well_c, "transposed"))
        d = P.det(dev(a))
        sign, logabs = P.slogdet(dev(a))
        tri = P.triangular_solve(dev(np.swapaxes(b, -1, -2)), dev(np.triu(well_c)), True, False, False)
    h64 = herm.astype(np.complex128)
    e_low = np.linalg.cholesky(h64)
    cclose(low, e_low, dtype)
    cclose(up, np.conj(np.swapaxes(e_low, -1, -2)), dtype)
    for i in range(2):
        e_lu, e_piv = sla.lu_factor(a[i])  # pivots by |re| + |im|, as LAPACK's izamax
        cclose(lu[i], e_lu, dtype, 10)
        np.testing.assert_array_equal(host(piv[i]), e_piv + 1)
    w64 = well_c.astype(np.complex128)
    cclose(x, np.linalg.solve(w64, b), dtype, 10)
    cclose(inv, np.linalg.inv(w64), dtype, 10)
    e_sign, e_log = np.linalg.slogdet(a.astype(np.complex128))
    cclose(d, np.linalg.det(a.astype(np.complex128)), dtype, 10)
    cclose(sign, e_sign, dtype, 10)
    np.testing.assert_allclose(host(logabs), e_log, rtol=CTOL[dtype] * 10)
    assert logabs.dtype == (ow.float32 if dtype == np.complex64 else ow.float64)
    e_tri = np.swapaxes(np.linalg.solve(np.swapaxes(np.triu(w64), -1, -2), b), -1, -2)
    cclose(tri, e_tri, dtype, 10)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
@pytest.mark.parametrize("shape", [(5, 3), (2, 3, 5), (4, 4)])
def test_complex_householder_qr_has_lapacks_phases(ocl, dtype, shape):
    a = crand(np.random.default_rng(13), shape, dtype)
    before = _qr_prims()
    h, tau = P.geqrf(laid_out(a, "transposed"))
    q, r = P.qr(dev(a), "complete")
    prod = P.householder_product(h, tau) if shape[-2] >= shape[-1] else None
    assert _qr_prims() == before
    e_h, e_tau = np.linalg.qr(a, mode="raw")
    cclose(h, np.swapaxes(e_h, -1, -2), dtype, 10)
    cclose(tau, e_tau, dtype, 10)
    e_q, e_r = np.linalg.qr(a, mode="complete")
    cclose(q, e_q, dtype, 10)
    cclose(r, e_r, dtype, 10)
    if prod is not None:
        cclose(prod, np.linalg.qr(a)[0], dtype, 10)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128, np.float64])
def test_matrix_exp_of_hermitian_and_nilpotent_matrices(ocl, dtype):
    rng = np.random.default_rng(14)
    c = crand(rng, (2, 5, 5), np.complex128) if np.dtype(dtype).kind == "c" else rng.uniform(-1, 1, (2, 5, 5))
    herm = (c + np.conj(np.swapaxes(c, -1, -2))) * 2
    w, vec = np.linalg.eigh(herm)
    expected = vec @ (np.exp(w)[..., None] * np.conj(np.swapaxes(vec, -1, -2)))
    nil = np.triu(c[0], 1) * 3  # exp(N) = I + N + N^2/2 + ... (N^5 = 0)
    series = np.eye(5) + nil + nil @ nil / 2 + nil @ nil @ nil / 6 + nil @ nil @ nil @ nil / 24
    before = _qr_prims()
    got = P.matrix_exp(dev(herm.astype(dtype)))
    got_nil = P.matrix_exp(dev(nil.astype(dtype)))
    assert _qr_prims() == before
    tol = 5e-4 if dtype == np.complex64 else 1e-9
    scale = np.max(np.abs(expected))
    np.testing.assert_allclose(host(got), expected, rtol=0, atol=tol * scale)
    np.testing.assert_allclose(host(got_nil), series, rtol=0, atol=tol * np.max(np.abs(series)))
