"""``opweave.linalg`` and the torch-namespace linear algebra against NumPy/SciPy.

Values are compared with ``numpy.linalg``/``scipy.linalg`` formulas written here; factorisations
whose outputs are unique only up to signs or phases (QR, SVD, eig, eigh, LU) are checked by their
properties (reconstruction, orthogonality, triangularity). Hypothesis draws shapes, batch dims,
layouts and dtypes with small budgets; error cases check the exception type and that the message
names the op.
"""

from __future__ import annotations

import math

import numpy as np
import opweave as D
import pytest
import scipy.integrate as sint
import scipy.linalg as sla
from _rsi_support import layout_tensor
from hypothesis import given, settings
from hypothesis import strategies as st

LAPACK = [D.float32, D.float64, D.complex64, D.complex128]
LAYOUTS = ("contiguous", "transposed", "sliced")
TOL = {D.float32: 2e-4, D.complex64: 2e-4, D.float64: 1e-9, D.complex128: 1e-9}


def _rand(rng, shape, dtype):
    v = rng.uniform(-1, 1, shape)
    if dtype.is_complex:
        v = v + 1j * rng.uniform(-1, 1, shape)
    return v.astype(dtype.numpy)


def _mH(a):
    return np.conj(np.swapaxes(a, -1, -2))


def _well(rng, shape, dtype):
    return (_rand(rng, shape, dtype) + shape[-1] * np.eye(shape[-1])).astype(dtype.numpy)


def _spd(rng, shape, dtype):
    a = _rand(rng, shape, dtype)
    return (a @ _mH(a) + shape[-1] * np.eye(shape[-1])).astype(dtype.numpy)


def _t(arr, layout="contiguous"):
    return layout_tensor(np.asarray(arr), layout)[0]


def _close(actual, expected, dtype, scale=1.0):
    actual = actual.numpy() if isinstance(actual, D.Tensor) else np.asarray(actual)
    tol = TOL[dtype] * scale
    np.testing.assert_allclose(actual, expected, rtol=tol, atol=tol)


@st.composite
def matrices(draw, square=True, min_n=1, max_n=4, max_batch=2):
    """``(rng, dtype, shape, layout)`` for a batch of matrices."""
    dtype = draw(st.sampled_from(LAPACK))
    n = draw(st.integers(min_n, max_n))
    m = n if square else draw(st.integers(min_n, max_n))
    batch = tuple(draw(st.lists(st.integers(1, 2), max_size=max_batch)))
    layout = draw(st.sampled_from(LAYOUTS))
    rng = np.random.default_rng(draw(st.integers(0, 2**31)))
    return rng, dtype, batch + (m, n), layout


# -- determinants, inverses, solvers ------------------------------------------------------------------


@settings(max_examples=15)
@given(matrices())
def test_det_slogdet_logdet_inv(case):
    rng, dtype, shape, layout = case
    a = _well(rng, shape, dtype)
    x = _t(a, layout)
    _close(D.linalg.det(x), np.linalg.det(a.astype(np.complex128 if dtype.is_complex else np.float64)), dtype, 10)
    _close(D.det(x), np.linalg.det(a), dtype, 10)
    sign, logabs = D.linalg.slogdet(x)
    want_sign, want_log = np.linalg.slogdet(a)
    _close(sign, want_sign, dtype)
    _close(logabs, want_log, dtype, 10)
    _close(D.linalg.inv(x), np.linalg.inv(a), dtype, 10)
    _close(D.inverse(x), np.linalg.inv(a), dtype, 10)
    inverse, info = D.linalg.inv_ex(x)
    _close(inverse, np.linalg.inv(a), dtype, 10)
    assert info.dtype is D.int32 and not info.numpy().any()
    if not dtype.is_complex:
        expected = np.where(want_sign < 0, np.nan, want_log)
        _close(D.logdet(x), expected, dtype, 10)


def test_logdet_complex_and_singular():
    a = np.array([[2 + 1j, 0], [0, 1 - 3j]])
    assert np.allclose(D.logdet(_t(a)).numpy(), np.log(np.linalg.det(a)))
    assert D.logdet(_t(np.ones((2, 2)))).item() == -math.inf


def test_inv_ex_singular_gives_info_and_nan():
    a = np.stack([np.eye(3), np.array([[1.0, 2, 3], [2, 4, 6], [0, 0, 1]])])
    inverse, info = D.linalg.inv_ex(_t(a))
    assert info.tolist() == [0, 2]
    assert np.allclose(inverse.numpy()[0], np.eye(3)) and np.isnan(inverse.numpy()[1]).all()
    with pytest.raises(ValueError, match="linalg_inv_ex"):
        D.linalg.inv_ex(_t(a), check_errors=True)
    with pytest.raises(ValueError):
        D.linalg.inv(_t(a))


@settings(max_examples=15)
@given(matrices(), st.integers(1, 3), st.booleans(), st.booleans())
def test_solve(case, k, left, vector):
    rng, dtype, shape, layout = case
    a = _well(rng, shape, dtype)
    n = shape[-1]
    if vector and left:
        b = _rand(rng, shape[:-1], dtype)
        want = np.linalg.solve(a, b[..., None])[..., 0]
    else:
        b = _rand(rng, shape[:-2] + ((n, k) if left else (k, n)), dtype)
        want = np.linalg.solve(a, b) if left else _mH(np.linalg.solve(_mH(a), _mH(b)))
    _close(D.linalg.solve(_t(a, layout), _t(b), left=left), want, dtype, 10)
    result, info = D.linalg.solve_ex(_t(a, layout), _t(b), left=left)
    _close(result, want, dtype, 10)
    assert not info.numpy().any()


def test_solve_broadcasts_batches_and_checks():
    rng = np.random.default_rng(0)
    a, b = _well(rng, (3, 3), D.float64), _rand(rng, (2, 3, 2), D.float64)
    assert np.allclose(D.linalg.solve(_t(a), _t(b)).numpy(), np.linalg.solve(a, b))
    with pytest.raises(TypeError, match="linalg_solve"):
        D.linalg.solve(_t(a), _t(b.astype(np.float32)))
    with pytest.raises(ValueError, match="linalg_solve"):
        D.linalg.solve(_t(a), _t(np.ones((4, 2))))
    with pytest.raises(TypeError, match="linalg_solve"):
        D.linalg.solve(_t(np.eye(2, dtype=np.int64)), _t(np.ones((2, 1), np.int64)))


@pytest.mark.parametrize("driver", [None, "gels", "gelsy", "gelsd", "gelss"])
def test_lstsq_outputs_by_driver(driver):
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((2, 5, 3)), rng.standard_normal((2, 5, 2))
    solution, residuals, rank, sv = D.linalg.lstsq(_t(a), _t(b), driver=driver)
    want = np.stack([np.linalg.lstsq(a[i], b[i], rcond=None)[0] for i in range(2)])
    assert np.allclose(solution.numpy(), want)
    res = np.sum((a @ want - b) ** 2, axis=-2)
    assert residuals.shape == ((0,) if driver in (None, "gelsy") else (2, 2))
    if residuals.numel():
        assert np.allclose(residuals.numpy(), res)
    assert rank.shape == ((0,) if driver == "gels" else (2,))
    assert sv.shape == ((2, 3) if driver in ("gelsd", "gelss") else (0,))
    if sv.numel():
        assert np.allclose(sv.numpy(), np.linalg.svd(a, compute_uv=False))
    with pytest.raises(ValueError, match="driver"):
        D.linalg.lstsq(_t(a), _t(b), driver="qr")


@settings(max_examples=15)
@given(matrices(), st.booleans(), st.booleans(), st.booleans())
def test_solve_triangular_and_legacy(case, upper, left, unit):
    rng, dtype, shape, layout = case
    a = _well(rng, shape, dtype)
    tri = np.triu(a) if upper else np.tril(a)
    if unit:
        idx = np.arange(shape[-1])
        tri[..., idx, idx] = 1
    n = shape[-1]
    b = _rand(rng, shape[:-2] + ((n, 2) if left else (2, n)), dtype)
    want = (
        np.linalg.solve(tri, b)
        if left
        else np.swapaxes(np.linalg.solve(np.swapaxes(tri, -1, -2), np.swapaxes(b, -1, -2)), -1, -2)
    )
    got = D.linalg.solve_triangular(_t(a, layout), _t(b), upper=upper, left=left, unitriangular=unit)
    _close(got, want, dtype, 10)
    if left:
        x, coefficient = D.triangular_solve(_t(b), _t(a, layout), upper, True, unit)
        _close(x, np.linalg.solve(np.swapaxes(tri, -1, -2), b), dtype, 10)
        assert np.array_equal(coefficient.numpy(), a)


@settings(max_examples=12)
@given(matrices(), st.booleans())
def test_cholesky_family(case, upper):
    rng, dtype, shape, layout = case
    a = _spd(rng, shape, dtype)
    lower = np.linalg.cholesky(a)
    factor = _mH(lower) if upper else lower
    _close(D.linalg.cholesky(_t(a, layout), upper=upper), factor, dtype, 10)
    _close(D.cholesky(_t(a, layout), upper), factor, dtype, 10)
    got, info = D.linalg.cholesky_ex(_t(a, layout), upper=upper)
    _close(got, factor, dtype, 10)
    assert not info.numpy().any()
    b = _rand(rng, shape[:-1] + (2,), dtype)
    _close(D.cholesky_solve(_t(b), _t(factor, layout), upper), np.linalg.solve(a, b), dtype, 100)
    _close(D.cholesky_inverse(_t(factor, layout), upper), np.linalg.inv(a), dtype, 100)


def test_cholesky_ex_reports_the_failing_minor():
    a = np.stack([np.eye(3) * 2, np.array([[4.0, 2, 0], [2, 1, 0], [0, 0, 1]])])
    L, info = D.linalg.cholesky_ex(_t(a))
    assert info.tolist() == [0, 2]
    assert np.allclose(L.numpy()[0], np.sqrt(2) * np.eye(3)) and np.isnan(L.numpy()[1]).all()
    with pytest.raises(ValueError, match="linalg_cholesky_ex"):
        D.linalg.cholesky_ex(_t(a), check_errors=True)
    with pytest.raises(ValueError):
        D.linalg.cholesky(_t(a))


# -- factorisations checked by their properties ----------------------------------------------------


def _eye_like(n, batch):
    return np.broadcast_to(np.eye(n), batch + (n, n))


@settings(max_examples=15)
@given(matrices(square=False), st.sampled_from(["reduced", "complete", "r"]))
def test_qr_properties(case, mode):
    rng, dtype, shape, layout = case
    a = _rand(rng, shape, dtype)
    q, r = D.linalg.qr(_t(a, layout), mode=mode)
    r = r.numpy()
    assert np.allclose(np.tril(r, -1), 0)
    if mode == "r":
        assert q.shape == (0,)
        _close(np.abs(r), np.abs(np.linalg.qr(a, mode="r")), dtype, 10)
        return
    q = q.numpy()
    _close(q @ r, a, dtype, 10)
    _close(_mH(q) @ q, _eye_like(q.shape[-1], q.shape[:-2]), dtype, 10)
    q2, r2 = D.qr(_t(a, layout), mode != "complete")
    _close(q2.numpy() @ r2.numpy(), a, dtype, 10)


@settings(max_examples=15)
@given(matrices(square=False), st.booleans())
def test_svd_properties(case, full):
    rng, dtype, shape, layout = case
    a = _rand(rng, shape, dtype)
    u, s, vh = (t.numpy() for t in D.linalg.svd(_t(a, layout), full_matrices=full))
    want_s = np.linalg.svd(a, compute_uv=False)
    _close(s, want_s, dtype, 10)
    k = s.shape[-1]
    _close((u[..., :, :k] * s[..., None, :]) @ vh[..., :k, :], a, dtype, 10)
    _close(_mH(u) @ u, _eye_like(u.shape[-1], u.shape[:-2]), dtype, 10)
    _close(D.linalg.svdvals(_t(a, layout)), want_s, dtype, 10)
    u2, s2, v2 = (t.numpy() for t in D.svd(_t(a, layout)))
    _close((u2 * s2[..., None, :]) @ _mH(v2), a, dtype, 10)
    zu, _, zv = D.svd(_t(a), compute_uv=False)
    assert zu.shape[-2:] == (shape[-2], shape[-2]) and not zu.numpy().any() and not zv.numpy().any()


@settings(max_examples=12)
@given(matrices())
def test_eig_and_eigh_properties(case):
    rng, dtype, shape, layout = case
    a = _rand(rng, shape, dtype) * 0.3 + np.diag(np.arange(1, shape[-1] + 1) * 2.0)
    a = a.astype(dtype.numpy)
    w, v = (t.numpy() for t in D.linalg.eig(_t(a, layout)))
    _close(a @ v, v * w[..., None, :], dtype, 20)
    _close(np.sort_complex(D.linalg.eigvals(_t(a, layout)).numpy()), np.sort_complex(np.linalg.eigvals(a)), dtype, 20)
    h = a + _mH(a)
    for uplo in ("L", "U"):
        w, v = (t.numpy() for t in D.linalg.eigh(_t(h, layout), uplo))
        _close(w, np.linalg.eigvalsh(h), dtype, 20)
        _close(h @ v, v * w[..., None, :], dtype, 20)
        _close(D.linalg.eigvalsh(_t(h, layout), uplo), np.linalg.eigvalsh(h), dtype, 20)


@settings(max_examples=12)
@given(matrices(square=False), st.booleans())
def test_lu_family(case, pivot):
    rng, dtype, shape, layout = case
    a = _rand(rng, shape, dtype)
    if not pivot:
        k = min(shape[-2:])
        a[..., np.arange(k), np.arange(k)] += 4
    p, low, up = (t.numpy() for t in D.linalg.lu(_t(a, layout), pivot=pivot))
    _close(p @ low @ up, a, dtype, 10)
    assert np.allclose(np.triu(low, 1), 0) and np.allclose(np.tril(up, -1), 0)
    lu, piv = D.linalg.lu_factor(_t(a, layout), pivot=pivot)
    p2, l2, u2 = (t.numpy() for t in D.lu_unpack(lu, piv))
    _close(p2 @ l2 @ u2, a, dtype, 10)
    assert piv.dtype is D.int32
    lu3, piv3, info = D.linalg.lu_factor_ex(_t(a, layout), pivot=pivot)
    assert np.array_equal(lu3.numpy(), lu.numpy()) and not info.numpy().any()
    if shape[-1] == shape[-2]:
        a = _well(rng, shape, dtype)
        lu, piv = D.linalg.lu_factor(_t(a))
        b = _rand(rng, shape[:-1] + (2,), dtype)
        _close(D.linalg.lu_solve(lu, piv, _t(b)), np.linalg.solve(a, b), dtype, 100)
        _close(D.linalg.lu_solve(lu, piv, _t(b), adjoint=True), np.linalg.solve(_mH(a), b), dtype, 100)
        bt = _mH(b)
        _close(D.linalg.lu_solve(lu, piv, _t(bt), left=False), _mH(np.linalg.solve(_mH(a), b)), dtype, 100)
        _close(D.lu_solve(_t(b), lu, piv), np.linalg.solve(a, b), dtype, 100)


def test_lu_unpack_matches_scipy_permutation():
    a = np.array([[1.0, 2, 3], [4, 5, 6], [7, 8, 10]])
    lu, piv = sla.lu_factor(a)
    p, low, up = D.lu_unpack(_t(lu), _t((piv + 1).astype(np.int32)))
    want_p, want_l, want_u = sla.lu(a)
    assert np.allclose(p.numpy(), want_p) and np.allclose(low.numpy(), want_l) and np.allclose(up.numpy(), want_u)
    with pytest.raises(TypeError, match="lu_unpack"):
        D.lu_unpack(_t(lu), _t(piv.astype(np.int64)))


def test_householder_geqrf_orgqr_ormqr():
    rng = np.random.default_rng(3)
    a = rng.standard_normal((5, 3))
    packed, tau = D.geqrf(_t(a))
    q = D.linalg.householder_product(packed, tau).numpy()
    r = np.triu(packed.numpy())[:3]
    assert np.allclose(q @ r, a) and np.allclose(q.T @ q, np.eye(3))
    assert np.allclose(D.orgqr(packed, tau).numpy(), q)
    full = np.linalg.qr(a, mode="complete")[0]
    # the complete Q from the formula H_1 H_2 H_3
    qf = np.eye(5)
    for i in range(3):
        v = np.zeros(5)
        v[i] = 1
        v[i + 1 :] = packed.numpy()[i + 1 :, i]
        qf = qf @ (np.eye(5) - tau.numpy()[i] * np.outer(v, v))
    assert np.allclose(np.abs(qf), np.abs(full))
    c = rng.standard_normal((5, 2))
    assert np.allclose(D.ormqr(packed, tau, _t(c)).numpy(), qf @ c)
    assert np.allclose(D.ormqr(packed, tau, _t(c), True, True).numpy(), qf.T @ c)
    assert np.allclose(D.ormqr(packed, tau, _t(c.T), False).numpy(), c.T @ qf)


# -- norms, ranks, pseudo-inverses, condition numbers ---------------------------------------------------


@settings(max_examples=20)
@given(matrices(square=False, max_batch=1), st.sampled_from(["fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf]))
def test_matrix_norm_and_norm(case, ord):
    rng, dtype, shape, layout = case
    a = _rand(rng, shape, dtype)
    want = np.linalg.norm(a, ord, axis=(-2, -1))
    _close(D.linalg.matrix_norm(_t(a, layout), ord), want, dtype, 10)
    keep = D.linalg.matrix_norm(_t(a, layout), ord, dim=(-1, -2), keepdim=True)
    _close(keep, np.linalg.norm(a, ord, axis=(-1, -2), keepdims=True), dtype, 10)
    _close(D.linalg.norm(_t(a, layout), ord, dim=(-2, -1)), want, dtype, 10)
    if len(shape) == 2:
        _close(D.linalg.norm(_t(a, layout), ord), np.linalg.norm(a, ord), dtype, 10)


@settings(max_examples=20)
@given(
    st.sampled_from(LAPACK),
    st.sampled_from([2, 1, 0, 3.5, math.inf, -math.inf, -1]),
    st.sampled_from([None, 0, -1, (0, 1)]),
    st.booleans(),
    st.integers(0, 2**31),
)
def test_vector_norm(dtype, ord, dim, keepdim, seed):
    rng = np.random.default_rng(seed)
    x = _rand(rng, (3, 4), dtype)
    a = np.abs(x)
    axis = dim if dim is None or isinstance(dim, tuple) else (dim,)
    if ord == math.inf:
        want = a.max(axis=axis, keepdims=keepdim)
    elif ord == -math.inf:
        want = a.min(axis=axis, keepdims=keepdim)
    elif ord == 0:
        want = (a != 0).sum(axis=axis, keepdims=keepdim)
    else:
        want = (a**ord).sum(axis=axis, keepdims=keepdim) ** (1 / ord)
    got = D.linalg.vector_norm(_t(x, "transposed"), ord, dim, keepdim)
    assert got.dtype is dtype.to_real()
    _close(got, want, dtype, 10)


@pytest.mark.parametrize(
    "shape,dim", [((1000,), None), ((4, 50), -1), ((2, 3, 4), (1, 2)), ((), None), ((3, 4), (0, 1))]
)
@pytest.mark.parametrize("dtype", [D.float32, D.float64])
def test_vector_norm_two_norm_of_trailing_dims(shape, dim, dtype):
    """The 2-norm over trailing dims of contiguous real tensors (computed as row dot products)."""
    rng = np.random.default_rng(11)
    x = rng.standard_normal(shape).astype(dtype.numpy)
    if x.size > 4:
        x.reshape(-1)[:3] = [np.nan, np.inf, -np.inf]
    for keepdim in (False, True):
        want = np.sqrt(np.sum(x.astype(np.float64) ** 2, axis=dim, keepdims=keepdim))
        got = D.linalg.vector_norm(_t(x), 2, dim, keepdim)
        assert got.dtype is dtype and got.shape == want.shape
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-5)


def test_norm_defaults_and_errors():
    x = np.arange(24.0).reshape(2, 3, 4)
    assert np.isclose(D.linalg.norm(_t(x)).item(), np.linalg.norm(x.ravel()))
    assert np.allclose(D.linalg.norm(_t(x), dim=1).numpy(), np.linalg.norm(x, axis=1))
    assert np.allclose(D.linalg.norm(_t(x[0]), "nuc").numpy(), np.linalg.norm(x[0], "nuc"))
    with pytest.raises(ValueError, match="linalg_norm"):
        D.linalg.norm(_t(x), 2)
    with pytest.raises(ValueError, match="linalg_matrix_norm"):
        D.linalg.matrix_norm(_t(x), 3)
    with pytest.raises(TypeError, match="linalg_vector_norm"):
        D.linalg.vector_norm(_t(np.arange(3)))


def _tolerance(s, m, n, atol, rtol, eps):
    smax = s.max(-1) if s.shape[-1] else 0
    rtol = (eps * max(m, n) if (atol is None or atol <= 0) else 0.0) if rtol is None else rtol
    return np.maximum(0.0 if atol is None else atol, rtol * smax)


@settings(max_examples=15)
@given(
    matrices(square=False),
    st.integers(1, 3),
    st.sampled_from([None, 0.0, 1e-3]),
    st.sampled_from([None, 0.0, 0.3]),
    st.booleans(),
)
def test_matrix_rank_and_pinv(case, rank, atol, rtol, hermitian):
    rng, dtype, shape, layout = case
    m, n = shape[-2:]
    a = _rand(rng, shape[:-1] + (rank,), dtype) @ _rand(rng, shape[:-2] + (rank, n), dtype)
    if hermitian:
        a = a @ _mH(a)
    a = a.astype(dtype.numpy)
    eps = np.finfo(dtype.to_real().numpy).eps
    if hermitian:
        w, q = np.linalg.eigh(a)
        s = np.abs(w)
    else:
        s = np.linalg.svd(a, compute_uv=False)
    tol = _tolerance(s, *a.shape[-2:], atol, rtol, eps)
    kwargs = {"atol": atol, "rtol": rtol, "hermitian": hermitian}
    got = D.linalg.matrix_rank(_t(a, layout), **kwargs)
    assert got.dtype is D.int64
    keep = s > np.asarray(tol)[..., None]
    assert np.array_equal(got.numpy(), keep.sum(-1))
    if hermitian:
        inv = np.where(keep, 1 / np.where(keep, w, 1), 0)
        want = (q * inv[..., None, :]) @ _mH(q)
    else:
        u, s2, vh = np.linalg.svd(a, full_matrices=False)
        inv = np.where(keep, 1 / np.where(keep, s2, 1), 0)
        want = (_mH(vh) * inv[..., None, :]) @ _mH(u)
    _close(D.linalg.pinv(_t(a, layout), **kwargs), want, dtype, 1000)


def test_pinv_and_rank_positional_overloads():
    rng = np.random.default_rng(4)
    a = rng.standard_normal((4, 2)) @ rng.standard_normal((2, 5))
    assert np.allclose(D.linalg.pinv(_t(a), 1e-10).numpy(), np.linalg.pinv(a, rcond=1e-10))
    assert np.allclose(D.pinverse(_t(a)).numpy(), np.linalg.pinv(a, rcond=1e-15), atol=1e-6)
    assert np.allclose(D.linalg.pinv(_t(a), _t(np.array(1e-10))).numpy(), np.linalg.pinv(a, rcond=1e-10))
    assert D.linalg.matrix_rank(_t(a), 1e-8).item() == 2
    assert D.linalg.matrix_rank(_t(a), _t(np.array(1e-8))).item() == 2
    assert D.linalg.matrix_rank(_t(a), atol=_t(np.array(1e9))).item() == 0


@pytest.mark.parametrize("p", [None, "fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf])
def test_cond(p):
    rng = np.random.default_rng(5)
    a = _well(rng, (2, 3, 3), D.float64)
    assert np.allclose(D.linalg.cond(_t(a), p).numpy(), np.linalg.cond(a, p))
    if p not in (None, 2, -2):
        assert D.linalg.cond(_t(np.ones((3, 3))), p).item() == math.inf


# -- matrix functions and products -------------------------------------------------------------------


@settings(max_examples=15)
@given(matrices(max_n=3), st.integers(-3, 5))
def test_matrix_power_and_exp(case, n):
    rng, dtype, shape, layout = case
    a = _well(rng, shape, dtype) / shape[-1]
    want = np.linalg.matrix_power(a.astype(np.complex128 if dtype.is_complex else np.float64), n)
    _close(D.linalg.matrix_power(_t(a, layout), n), want, dtype, 100)
    _close(D.matrix_power(_t(a, layout), n), want, dtype, 100)
    expm = np.stack([sla.expm(m) for m in a.reshape((-1,) + shape[-2:])]).reshape(shape)
    _close(D.linalg.matrix_exp(_t(a, layout)), expm, dtype, 100)
    _close(D.matrix_exp(_t(a, layout)), expm, dtype, 100)


def test_matrix_power_integers_and_copy():
    a = np.array([[1, 1], [1, 0]])
    assert D.linalg.matrix_power(_t(a), 10).tolist() == np.linalg.matrix_power(a, 10).tolist()
    x = _t(np.eye(2))
    assert D.matrix_power(x, 1).untyped_storage() is not x.untyped_storage()
    with pytest.raises(TypeError, match="matrix_power"):
        D.matrix_power(_t(a), -1)


@settings(max_examples=20)
@given(
    st.sampled_from([D.float32, D.float64, D.complex128, D.int64]), st.integers(0, 2**31), st.sampled_from([0, 1, -1])
)
def test_cross_vecdot_kron_tensordot(dtype, seed, dim):
    rng = np.random.default_rng(seed)
    shape = [2, 2, 2]
    shape[dim] = 3
    a = (_rand(rng, shape, dtype) if dtype is not D.int64 else rng.integers(-4, 5, shape)).astype(dtype.numpy)
    b = (_rand(rng, shape, dtype) if dtype is not D.int64 else rng.integers(-4, 5, shape)).astype(dtype.numpy)
    tol = 1e-4
    assert np.allclose(D.linalg.cross(_t(a, "transposed"), _t(b), dim=dim).numpy(), np.cross(a, b, axis=dim), atol=tol)
    assert np.allclose(D.cross(_t(a), _t(b), dim).numpy(), np.cross(a, b, axis=dim), atol=tol)
    assert np.allclose(D.linalg.vecdot(_t(a), _t(b), dim=dim).numpy(), np.sum(np.conj(a) * b, axis=dim), atol=tol)
    assert np.allclose(D.kron(_t(a), _t(b[0])).numpy(), np.kron(a, b[0]), atol=tol)
    got = D.tensordot(_t(a, "sliced"), _t(b), [1, 2], [1, 2])
    assert np.allclose(got.numpy(), np.tensordot(a, b, ([1, 2], [1, 2])), atol=tol)
    # a contracted dim of size 1 broadcasts: the other operand is summed over it first (PyTorch)
    one = a[:, :1]
    got = D.tensordot(_t(one), _t(b), [1, 2], [1, 2])
    assert got.dtype == dtype
    assert np.allclose(got.numpy(), np.tensordot(one[:, 0], b.sum(1), ([1], [1])), atol=tol)


def test_cross_default_dim_and_errors():
    a, b = np.arange(9.0).reshape(3, 3), np.ones((3, 3))
    assert np.allclose(D.cross(_t(a), _t(b)).numpy(), np.cross(a, b, axis=0))
    with pytest.raises(ValueError, match="linalg_cross"):
        D.linalg.cross(_t(np.ones((2, 4))), _t(np.ones((2, 4))))
    with pytest.raises(TypeError, match="linalg_cross"):
        D.linalg.cross(_t(np.ones(3)), _t(np.ones(3, np.float32)))
    with pytest.raises(TypeError, match="linalg_vecdot"):
        D.linalg.vecdot(_t(np.ones(3)), _t(np.ones(3, np.float32)))
    # the dim of size 3 does not broadcast, nor do the inputs' ranks (PyTorch: RuntimeError)
    with pytest.raises(RuntimeError, match="dim -1"):
        D.linalg.cross(_t(np.ones((5, 3))), _t(np.ones((5, 1))))
    with pytest.raises(RuntimeError, match="same number of dimensions"):
        D.linalg.cross(_t(np.ones((5, 5, 3))), _t(np.ones((5, 3))))
    with pytest.raises(RuntimeError, match="same number of dimensions"):
        D.cross(_t(np.ones((2, 3))), _t(np.ones(3)), 1)
    a, b = np.arange(15.0).reshape(5, 3), np.array([[1.0, -2.0, 0.5]])
    np.testing.assert_allclose(D.linalg.cross(_t(a), _t(b)).numpy(), np.cross(a, b))  # other dims broadcast


def test_multi_dot_and_chain_matmul():
    rng = np.random.default_rng(6)
    mats = [rng.standard_normal(s) for s in [(5,), (5, 30), (30, 2), (2, 40), (40,)]]
    assert np.allclose(D.linalg.multi_dot([_t(m) for m in mats]).numpy(), np.linalg.multi_dot(mats))
    mats2 = [rng.standard_normal(s) for s in [(2, 3), (3, 4), (4, 2)]]
    assert np.allclose(D.chain_matmul([_t(m) for m in mats2]).numpy(), np.linalg.multi_dot(mats2))
    with pytest.raises(ValueError, match="linalg_multi_dot"):
        D.linalg.multi_dot([_t(mats2[0])])
    with pytest.raises(ValueError, match="chain_matmul"):
        D.chain_matmul([_t(mats[0])])


EINSUM = [
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("bij,bjk->bik", [(2, 2, 3), (2, 3, 2)]),
    ("ii->i", [(3, 3)]),
    ("ii", [(3, 3)]),
    ("...ij,...jk", [(2, 2, 3), (3, 4)]),
    ("i,j->ij", [(3,), (4,)]),
    ("ijk->", [(2, 3, 4)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]),
    ("bii,bi->b", [(2, 3, 3), (2, 3)]),
    ("ij->ji", [(2, 3)]),
    ("i,i", [(0,), (0,)]),
    ("ab,cd->abcd", [(2, 1), (1, 3)]),
    ("ij,ij->i", [(1, 3), (2, 3)]),
    ("...i,...i->...", [(2, 3, 4), (4,)]),
]


@pytest.mark.parametrize("equation,shapes", EINSUM, ids=[e for e, _ in EINSUM])
def test_einsum(equation, shapes):
    rng = np.random.default_rng(7)
    arrays = [rng.standard_normal(s) for s in shapes]
    got = D.einsum(equation, [_t(a, "transposed") for a in arrays])
    want = np.einsum(equation, *arrays)
    assert got.shape == want.shape and np.allclose(got.numpy(), want)
    assert all(got.untyped_storage() is not _t(a).untyped_storage() for a in arrays)


def test_einsum_errors():
    with pytest.raises(ValueError, match="einsum"):
        D.einsum("ij,jk", [_t(np.ones((2, 3)))])
    with pytest.raises(ValueError, match="einsum"):
        D.einsum("ij,jk->ik", [_t(np.ones((2, 3))), _t(np.ones((4, 2)))])
    with pytest.raises(TypeError, match="einsum"):
        D.einsum("i,i", [_t(np.ones(2)), _t(np.ones(2, np.float32))])


@settings(max_examples=15)
@given(st.integers(2, 6), st.sampled_from([0, 1, -1]), st.booleans(), st.integers(0, 2**31))
def test_trapezoid_family(n, dim, use_x, seed):
    rng = np.random.default_rng(seed)
    shape = [3, 3]
    shape[dim] = n
    y = rng.standard_normal(shape)
    if use_x:
        x = np.sort(rng.standard_normal(n))
        want = np.trapezoid(y, x, axis=dim)
        cum = sint.cumulative_trapezoid(y, x, axis=dim)
        got = D.trapezoid(_t(y, "transposed"), _t(x), dim=dim)
        got_z = D.trapz(_t(y), _t(x), dim=dim)
        got_c = D.cumulative_trapezoid(_t(y), _t(x), dim=dim)
    else:
        want = np.trapezoid(y, dx=0.5, axis=dim)
        cum = sint.cumulative_trapezoid(y, dx=0.5, axis=dim)
        got = D.trapezoid(_t(y, "transposed"), dx=0.5, dim=dim)
        got_z = D.trapz(_t(y), dx=0.5, dim=dim)
        got_c = D.cumulative_trapezoid(_t(y), dx=0.5, dim=dim)
    for g, w in ((got, want), (got_z, want), (got_c, cum)):
        assert np.allclose(g.numpy(), w)


def test_trapezoid_integers_and_empty():
    got = D.trapezoid(_t(np.arange(4)))
    assert got.dtype is D.float32 and got.item() == 4.5
    assert D.trapezoid(_t(np.zeros((2, 0)))).tolist() == [0.0, 0.0]


def test_vander_tensorinv_tensorsolve_diagonal_matmul():
    x = np.array([1.0, 2.0, 3.0])
    assert np.allclose(D.linalg.vander(_t(x)).numpy(), np.vander(x, increasing=True))
    assert D.linalg.vander(_t(np.arange(3)), N=4).tolist() == np.vander(np.arange(3), 4, increasing=True).tolist()
    with pytest.raises(ValueError, match="linalg_vander"):
        D.linalg.vander(_t(x), N=1)
    rng = np.random.default_rng(8)
    a = _well(rng, (6, 6), D.float64).reshape(2, 3, 6)
    assert np.allclose(D.linalg.tensorinv(_t(a)).numpy(), np.linalg.tensorinv(a))
    b = rng.standard_normal((2, 3))
    assert np.allclose(D.linalg.tensorsolve(_t(a), _t(b)).numpy(), np.linalg.tensorsolve(a, b))
    a2 = np.moveaxis(a, 2, 0)
    assert np.allclose(D.linalg.tensorsolve(_t(a2), _t(b), [0]).numpy(), np.linalg.tensorsolve(a2, b, axes=[0]))
    # only the sizes' products must agree (PyTorch): (2, 3, 6) with dims (0, 2) is (3, 2, 6) against b (2, 3)
    moved = np.moveaxis(a, [0, 2], [1, 2]).reshape(6, 6)
    want = np.linalg.solve(moved, b.reshape(6))
    assert np.allclose(D.linalg.tensorsolve(_t(a), _t(b), [0, 2]).numpy(), want)
    m = rng.standard_normal((2, 3, 4))
    d = D.linalg.diagonal(_t(m), offset=1)
    assert np.array_equal(d.numpy(), np.diagonal(m, 1, -2, -1))
    assert np.allclose(D.linalg.matmul(_t(m), _t(m[0].T)).numpy(), m @ m[0].T)


# -- variants, meta, errors --------------------------------------------------------------------------------


def test_out_variants():
    rng = np.random.default_rng(9)
    a = _well(rng, (3, 3), D.float64)
    out = D.empty((3, 3), dtype=D.float64)
    assert D.linalg.inv(_t(a), out=out) is out and np.allclose(out.numpy(), np.linalg.inv(a))
    sign, logabs = D.empty((), dtype=D.float64), D.empty((), dtype=D.float64)
    res = D.ops.linalg_slogdet.out(_t(a), sign=sign, logabsdet=logabs)
    assert res[0] is sign and np.isclose(logabs.item(), np.linalg.slogdet(a)[1])
    q, r = D.empty((3, 3), dtype=D.float64), D.empty((3, 3), dtype=D.float64)
    D.ops.linalg_qr.out(_t(a), Q=q, R=r)
    assert np.allclose(q.numpy() @ r.numpy(), a)
    out = D.empty((3,), dtype=D.float64)
    D.ops.linalg_vector_norm.out(_t(a), 2, [1], out=out)
    assert np.allclose(out.numpy(), np.linalg.norm(a, axis=1))


def test_meta_shapes():
    a = D.empty((2, 4, 3), device="meta")
    u, s, vh = D.linalg.svd(a, full_matrices=False)
    assert (u.shape, s.shape, vh.shape) == ((2, 4, 3), (2, 3), (2, 3, 3))
    assert D.linalg.pinv(a).shape == (2, 3, 4)
    assert D.linalg.matrix_norm(a, "nuc", keepdim=True).shape == (2, 1, 1)
    assert D.einsum("bij,bjk->bik", [a, D.empty((2, 3, 5), device="meta")]).shape == (2, 4, 5)


@pytest.mark.parametrize(
    "call,error,name",
    [
        (lambda: D.linalg.det(_t(np.ones((2, 3)))), ValueError, "linalg_det"),
        (lambda: D.linalg.inv(_t(np.ones(3))), ValueError, "linalg_inv"),
        (lambda: D.linalg.inv(_t(np.eye(2, dtype=np.float16))), TypeError, "linalg_inv"),
        (lambda: D.linalg.eigh(_t(np.eye(2)), "X"), ValueError, "linalg_eigh"),
        (lambda: D.linalg.qr(_t(np.eye(2)), "full"), ValueError, "linalg_qr"),
        (lambda: D.linalg.svd(_t(np.eye(2)), driver="gesvd"), ValueError, "linalg_svd"),
        (lambda: D.linalg.solve_triangular(_t(np.eye(2)), _t(np.ones((3, 1))), upper=True), ValueError, "triangular"),
        (lambda: D.linalg.tensorinv(_t(np.ones((2, 3))), 1), ValueError, "linalg_tensorinv"),
        (lambda: D.tensordot(_t(np.ones((2, 3))), _t(np.ones((2, 3))), [1], [1, 0]), ValueError, "tensordot"),
        (lambda: D.linalg.cond(_t(np.ones((2, 3))), 1), ValueError, "linalg_cond"),
        (lambda: D.linalg.matrix_power(_t(np.ones((2, 3))), 2), ValueError, "linalg_matrix_power"),
    ],
)
def test_errors_name_the_op(call, error, name):
    with pytest.raises(error, match=name):
        call()


def test_failing_call_leaves_inputs_intact():
    a = np.ones((2, 2))
    x = _t(a)
    with pytest.raises(ValueError):
        D.linalg.inv(x)
    assert np.array_equal(x.numpy(), a)


def test_vendor_backend_runs_the_decompositions():
    if not D.backends.is_available("vnpu"):
        pytest.skip("vnpu not installed")
    rng = np.random.default_rng(10)
    a = _well(rng, (2, 3, 3), D.float64)
    x = _t(a).to("vnpu")
    assert np.allclose(D.linalg.pinv(x).to("cpu").numpy(), np.linalg.pinv(a))
    lu, piv = D.linalg.lu_factor(x)
    b = rng.standard_normal((2, 3, 1))
    assert np.allclose(D.linalg.lu_solve(lu, piv, _t(b).to("vnpu")).to("cpu").numpy(), np.linalg.solve(a, b))
