"""Gradients of the linear-algebra decompositions: gradcheck (float64/complex128, finite differences).

Inputs are built well conditioned from hypothesis-drawn factors: singular values and
eigenvalues with gaps (svd, eig), full rank (qr, lu, lstsq, solves), positive definite
(cholesky). Singular and eigen vectors are defined up to a phase, so their losses are
gauge invariant (``U @ diag(S) @ Vh``, ``|U|``, ``V diag(λ) V⁻¹``), as PyTorch documents;
a phase-dependent loss of complex vectors raises.
"""

from __future__ import annotations

import numpy as np
import opweave as ow
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from opweave.autograd import gradcheck

C = ow.ops.canonical

seeds = st.integers(0, 2**32 - 1)
sizes = st.integers(1, 3)
#: gradcheck costs a forward pass per real input coordinate: a quarter of the profile's examples.
few = settings(max_examples=max(2, settings().max_examples // 4))


def _orthogonal(rng, n: int, complex_: bool) -> np.ndarray:
    a = rng.standard_normal((n, n))
    if complex_:
        a = a + 1j * rng.standard_normal((n, n))
    q, r = np.linalg.qr(a)
    return q * (np.diagonal(r) / np.abs(np.diagonal(r)))


def _spectrum(rng, k: int) -> np.ndarray:
    """k values in [1, 3k] at least 0.5 apart (distinct singular values/eigenvalues)."""
    return np.sort(1.0 + np.cumsum(rng.uniform(0.5, 1.5, k)))[::-1].copy()


def _matrix(rng, m: int, n: int, complex_: bool = False, batch: tuple = ()) -> np.ndarray:
    """Full rank with well separated singular values: U diag(s) Vᴴ."""
    out = np.empty(batch + (m, n), dtype=np.complex128 if complex_ else np.float64)
    for idx in np.ndindex(*batch):
        k = min(m, n)
        u = _orthogonal(rng, m, complex_)[:, :k]
        v = _orthogonal(rng, n, complex_)[:, :k]
        out[idx] = (u * _spectrum(rng, k)) @ v.conj().T
    return out


def _leaf(array: np.ndarray):
    dtype = ow.complex128 if np.iscomplexobj(array) else ow.float64
    return ow.tensor(array, dtype=dtype, requires_grad=True)


@few
@given(seed=seeds, m=sizes, n=sizes, complex_=st.booleans(), full=st.booleans())
def test_svd_gauge_invariant_losses(seed, m, n, complex_, full):
    rng = np.random.default_rng(seed)
    a = _leaf(_matrix(rng, m, n, complex_))
    k = min(m, n)

    def reconstruct(x):
        u, s, vh = C.linalg_svd(x, full)
        u, vh = u[..., :, :k], vh[..., :k, :]
        return C.matmul(u * C.unsqueeze(s, -2).to(u.dtype), vh), s, C.abs(u), C.abs(vh)

    assert gradcheck(reconstruct, (a,))
    assert gradcheck(lambda x: C.linalg_svdvals(x), (a,))


@few
@given(seed=seeds, n=sizes, batch=st.sampled_from([(), (2,)]))
def test_svd_batched_and_legacy(seed, n, batch):
    rng = np.random.default_rng(seed)
    a = _leaf(_matrix(rng, n + 1, n, batch=batch))

    def legacy(x):
        u, s, v = C.svd(x)
        return C.matmul(u * C.unsqueeze(s, -2), C.transpose(v, -2, -1)), C.abs(v)

    assert gradcheck(legacy, (a,))
    assert gradcheck(lambda x: C.linalg_pinv(x), (a,))


def test_svd_phase_dependent_loss_raises():
    a = _leaf(_matrix(np.random.default_rng(0), 3, 3, complex_=True))
    u, _, _ = C.linalg_svd(a, False)
    with pytest.raises(RuntimeError, match="phase"):
        C.real(u).sum().backward()


def _diagonalizable(rng, n: int, complex_: bool) -> np.ndarray:
    """V diag(λ) V⁻¹ with distinct eigenvalues and a well-conditioned V."""
    v = np.eye(n) + 0.3 * rng.uniform(-1, 1, (n, n))
    lam = _spectrum(rng, n) * rng.choice([-1.0, 1.0], n)
    if complex_:
        v = v + 0.3j * rng.uniform(-1, 1, (n, n))
        lam = lam * np.exp(1j * rng.uniform(-0.3, 0.3, n))
    return (v * lam) @ np.linalg.inv(v)


@few
@given(seed=seeds, n=sizes, complex_=st.booleans())
def test_eig_gauge_invariant_losses(seed, n, complex_):
    rng = np.random.default_rng(seed)
    a = _leaf(_diagonalizable(rng, n, complex_))

    def fn(x):
        values, vectors = C.linalg_eig(x)
        rebuilt = C.matmul(vectors * C.unsqueeze(values, -2), C.linalg_inv(vectors))
        return rebuilt, C.abs(vectors), C.linalg_eigvals(x)

    assert gradcheck(fn, (a,))


def test_eig_phase_dependent_loss_raises():
    a = _leaf(_diagonalizable(np.random.default_rng(1), 3, False))
    _, vectors = C.linalg_eig(a)
    with pytest.raises(RuntimeError, match="ill-defined"):
        C.imag(vectors).sum().backward()


def _hermitian(rng, n: int, complex_: bool) -> np.ndarray:
    q = _orthogonal(rng, n, complex_)
    return (q * _spectrum(rng, n)) @ q.conj().T


@few
@given(seed=seeds, n=sizes, complex_=st.booleans())
def test_eigh_through_a_symmetrizing_wrapper(seed, n, complex_):
    rng = np.random.default_rng(seed)
    a = _leaf(_hermitian(rng, n, complex_) * rng.choice([-1.0, 1.0]))

    def fn(x):
        sym = (x + C.transpose(x, -2, -1).conj()) * 0.5
        values, vectors = C.linalg_eigh(sym)
        return values, C.abs(vectors), C.linalg_eigvalsh(sym)

    assert gradcheck(fn, (a,))


@few
@given(seed=seeds, m=sizes, n=sizes, complex_=st.booleans())
def test_qr(seed, m, n, complex_):
    rng = np.random.default_rng(seed)
    a = _leaf(_matrix(rng, m, n, complex_))
    assert gradcheck(lambda x: tuple(C.linalg_qr(x)), (a,))
    if m <= n:
        assert gradcheck(lambda x: tuple(C.linalg_qr(x, "complete")), (a,))


def test_qr_modes_without_a_derivative_raise():
    a = _leaf(_matrix(np.random.default_rng(2), 3, 2))
    _, r = C.linalg_qr(a, "r")
    with pytest.raises(RuntimeError, match="mode='r'"):
        r.sum().backward()
    q, _ = C.linalg_qr(a, "complete")
    with pytest.raises(RuntimeError, match="mode='complete'"):
        q.sum().backward()


@few
@given(seed=seeds, m=sizes, n=sizes, complex_=st.booleans(), pivot=st.booleans())
def test_lu_and_lu_factor(seed, m, n, complex_, pivot):
    rng = np.random.default_rng(seed)
    values = _matrix(rng, m, n, complex_)
    if not pivot:  # no pivoting needs nonzero leading minors: make A diagonally dominant
        k = min(m, n)
        values[:k, :k] += np.eye(k) * 3 * np.abs(values).sum()
    a = _leaf(values)
    assert gradcheck(lambda x: tuple(C.linalg_lu(x, pivot=pivot)[1:]), (a,))
    assert gradcheck(lambda x: C.linalg_lu_factor(x, pivot=pivot)[0], (a,))


@few
@given(seed=seeds, n=sizes, k=sizes, complex_=st.booleans(), left=st.booleans(), adjoint=st.booleans())
def test_lu_solve(seed, n, k, complex_, left, adjoint):
    rng = np.random.default_rng(seed)
    a = _leaf(_matrix(rng, n, n, complex_))
    b = _leaf(_matrix(rng, n, k, complex_) if left else _matrix(rng, k, n, complex_))

    def fn(x, y):
        lu, pivots = C.linalg_lu_factor(x)
        return C.linalg_lu_solve(lu, pivots, y, left=left, adjoint=adjoint)

    assert gradcheck(fn, (a, b))


@few
@given(seed=seeds, n=sizes, extra=st.integers(0, 2), k=sizes, complex_=st.booleans())
def test_lstsq_solution(seed, n, extra, k, complex_):
    rng = np.random.default_rng(seed)
    a = _leaf(_matrix(rng, n + extra, n, complex_))
    b = _leaf(_matrix(rng, n + extra, k, complex_))
    assert gradcheck(lambda x, y: C.linalg_lstsq(x, y)[0], (a, b))
    solution, residuals, _, _ = C.linalg_lstsq(a, b)
    assert solution.requires_grad and not residuals.requires_grad


@few
@given(seed=seeds, n=sizes, complex_=st.booleans())
def test_matrix_exp(seed, n, complex_):
    rng = np.random.default_rng(seed)
    values = rng.uniform(-1, 1, (n, n)) + (1j * rng.uniform(-1, 1, (n, n)) if complex_ else 0)
    assert gradcheck(lambda x: C.linalg_matrix_exp(x), (_leaf(values),))


@few
@given(seed=seeds, n=sizes, k=sizes, complex_=st.booleans(), upper=st.booleans())
def test_cholesky_family(seed, n, k, complex_, upper):
    rng = np.random.default_rng(seed)
    spd = _hermitian(rng, n, complex_)
    factor = np.linalg.cholesky(spd)
    if upper:
        factor = factor.conj().T
    f, b = _leaf(factor), _leaf(_matrix(rng, n, k, complex_))
    mask = ow.tensor(np.triu(np.ones((n, n))) if upper else np.tril(np.ones((n, n))), dtype=ow.float64)

    def solve(x, y):
        return C.cholesky_solve(y, x * mask, upper)

    assert gradcheck(solve, (f, b))
    assert gradcheck(lambda x: C.cholesky_inverse(x * mask, upper), (f,))
    a = _leaf(spd)
    assert gradcheck(lambda x: C.linalg_cholesky((x + C.transpose(x, -2, -1).conj()) * 0.5, upper=upper), (a,))


@few
@given(seed=seeds, n=sizes, k=sizes, complex_=st.booleans(), left=st.booleans())
def test_inverse_det_and_solves(seed, n, k, complex_, left):
    rng = np.random.default_rng(seed)
    a = _leaf(_matrix(rng, n, n, complex_))
    b = _leaf(_matrix(rng, n, k, complex_) if left else _matrix(rng, k, n, complex_))
    assert gradcheck(lambda x: C.linalg_inv(x), (a,))
    assert gradcheck(lambda x: C.linalg_det(x), (a,))
    assert gradcheck(lambda x: tuple(C.linalg_slogdet(x)), (a,))
    assert gradcheck(lambda x, y: C.linalg_solve(x, y, left=left), (a, b))
    upper = bool(seed % 2)
    tri = ow.tensor(np.triu(np.ones((n, n))) if upper else np.tril(np.ones((n, n))), dtype=ow.float64)
    assert gradcheck(lambda x, y: C.linalg_solve_triangular(x * tri, y, upper=upper, left=left), (a, b))


@few
@given(seeds, st.integers(1, 4), st.integers(0, 3), st.booleans(), st.booleans())
def test_householder_product_gradient(seed, m, extra, complex_, batched):
    """householder_product (and orgqr/ormqr through it): gradcheck and gradgradcheck in both arguments."""
    rng = np.random.default_rng(seed)
    n = max(1, m - extra)
    k = int(rng.integers(0, n + 1))
    batch = (2,) if batched else ()
    a = _matrix(rng, m, n, complex_, batch)
    tau = rng.standard_normal(batch + (k,)) + (1j * rng.standard_normal(batch + (k,)) if complex_ else 0)
    A, T = ow.tensor(a, requires_grad=True), ow.tensor(tau, requires_grad=True)
    assert gradcheck(ow.linalg.householder_product, (A, T))
    assert ow.autograd.gradgradcheck(ow.linalg.householder_product, (A, T))
    other = ow.tensor(rng.standard_normal(batch + (m, 2)).astype(a.dtype), requires_grad=True)
    assert gradcheck(lambda x, t, c: C.ormqr(x, t, c), (A, T, other))
