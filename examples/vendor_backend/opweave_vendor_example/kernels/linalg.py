"""Linear algebra through NumPy/SciPy (LAPACK), batched over leading dims.

LAPACK's failures (a singular or non positive-definite matrix, no convergence)
become ValueError naming the prim, as the prim contract asks.
"""

from __future__ import annotations

import functools
import warnings

import numpy as np
import scipy.linalg as sla

from .._backend import kernel


def _mT(a):
    return np.swapaxes(a, -1, -2)


def linalg(name: str):
    """``kernel(name)`` for a LAPACK-backed function: LinAlgError becomes ValueError naming the prim."""

    def register(fn):
        @functools.wraps(fn)
        def checked(*args):
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", sla.LinAlgWarning)
                    return fn(*args)
            except np.linalg.LinAlgError as exc:
                raise ValueError(f"prims::{name}: {exc}") from None

        return kernel(name)(checked)

    return register


def _eye_like(a, m, n):
    return np.broadcast_to(np.eye(m, n, dtype=a.dtype), a.shape[:-2] + (m, n))


SIMPLE = {
    "mm": np.matmul,  # integers wrap; float16/bfloat16 arrive widened to float32
    "bmm": np.matmul,
    "svd": lambda a, full: np.linalg.svd(a, full_matrices=full),
    "eigh": lambda a, uplo: np.linalg.eigh(a, UPLO=uplo),
    "eig": np.linalg.eig,
    "inverse": np.linalg.inv,
    "det": np.linalg.det,
    "slogdet": lambda a: tuple(np.linalg.slogdet(a)),
    "matrix_exp": lambda a: sla.expm(a) if a.size else a,
    "cholesky": lambda a, upper: np.conj(_mT(np.linalg.cholesky(a))) if upper else np.linalg.cholesky(a),
    "solve": lambda a, b, left: np.linalg.solve(a, b) if left else _mT(np.linalg.solve(_mT(a), _mT(b))),
}
for _name, _fn in SIMPLE.items():
    linalg(_name)(_fn)


@linalg("qr")
def qr(a, mode):
    """Q and R (Q empty for mode "r")."""
    if mode == "r":
        return np.empty((0,), a.dtype), np.linalg.qr(a, mode="r")
    return tuple(np.linalg.qr(a, mode=mode))


def _lu_nopivot(a):
    """Compact LU without pivoting (Doolittle), vectorised over the batch; LinAlgError on a zero pivot."""
    lu = np.array(a)
    m, n = lu.shape[-2:]
    for j in range(min(m, n)):
        if np.any(lu[..., j, j] == 0):
            raise np.linalg.LinAlgError(f"zero pivot at position {j + 1}: LU without pivoting does not exist")
        lu[..., j + 1 :, j] /= lu[..., j, j, None]
        lu[..., j + 1 :, j + 1 :] -= lu[..., j + 1 :, j, None] * lu[..., j, None, j + 1 :]
    return lu


@linalg("lu")
def lu(a, pivot):
    """P, L, U with A = P L U."""
    m, n = a.shape[-2:]
    k = min(m, n)
    if pivot and a.size:
        return sla.lu(a, check_finite=False)
    packed = _lu_nopivot(a) if a.size else np.zeros(a.shape, a.dtype)
    return _eye_like(a, m, m), np.tril(packed[..., :k], -1) + _eye_like(a, m, k), np.triu(packed[..., :k, :])


@linalg("lu_factor")
def lu_factor(a, pivot):
    """Compact LU and 1-based int32 pivots (LAPACK getrf)."""
    k = min(a.shape[-2:])
    if pivot and a.size:
        packed, piv = sla.lu_factor(a, check_finite=False)
        return packed, piv + 1
    return (_lu_nopivot(a) if a.size else a), np.broadcast_to(np.arange(1, k + 1), a.shape[:-2] + (k,))


@linalg("triangular_solve")
def triangular_solve(b, a, upper, left, unitriangular):
    """Triangular solve reading only the chosen triangle of A."""
    if b.size == 0 or a.size == 0:
        return np.zeros(b.shape, b.dtype)
    options = {"lower": not upper, "unit_diagonal": unitriangular, "check_finite": False}
    if left:
        return sla.solve_triangular(a, b, **options)
    return _mT(sla.solve_triangular(a, _mT(b), trans="T", **options))


@linalg("lstsq")
def lstsq(a, b, rcond):
    """Least squares per batch entry (gelsd): solution, squared residuals (m > n), rank, singular values."""
    if not (np.isfinite(a).all() and np.isfinite(b).all()):
        raise np.linalg.LinAlgError("the inputs must not contain nan or inf")
    (m, n), k, real = a.shape[-2:], b.shape[-1], np.finfo(a.dtype).dtype
    x, rank = np.zeros(a.shape[:-2] + (n, k), a.dtype), np.zeros(a.shape[:-2], np.int64)
    res, sv = np.zeros(a.shape[:-2] + (k,), real), np.zeros(a.shape[:-2] + (min(m, n),), real)
    cond = rcond if rcond is not None else np.finfo(real).eps * max(m, n)
    for i in np.ndindex(*a.shape[:-2]):
        if min(m, n) and k:
            x[i], _, rank[i], sv[i] = sla.lstsq(a[i], b[i], cond=cond, lapack_driver="gelsd", check_finite=False)
        elif min(m, n):
            sv[i] = np.linalg.svd(a[i], compute_uv=False)
            rank[i] = np.sum(sv[i] > cond * sv[i].max())
        res[i] = np.sum(np.abs(a[i] @ x[i] - b[i]) ** 2, axis=0)
    return x, (res if m > n else np.zeros((0,), real)), rank, sv


@linalg("geqrf")
def geqrf(a):
    """Householder QR in LAPACK's compact form (R above the diagonal, reflectors below) and tau."""
    if a.size == 0:
        return np.zeros(a.shape, a.dtype), np.zeros(a.shape[:-2] + (min(a.shape[-2:]),), a.dtype)
    h, tau = np.linalg.qr(a, mode="raw")
    return _mT(h), tau


@linalg("householder_product")
def householder_product(a, tau):
    """``H_1 ... H_k`` applied to the first n columns of the identity (``H_i = I - tau_i v_i v_i^H``)."""
    q = np.array(_eye_like(a, *a.shape[-2:]))
    for i in reversed(range(tau.shape[-1])):
        v = np.array(a[..., :, i])
        v[..., :i], v[..., i] = 0, 1
        w = np.einsum("...m,...mn->...n", np.conj(v), q)
        q -= tau[..., i, None, None] * v[..., :, None] * w[..., None, :]
    return q
