"""Linear algebra with NumPy / SciPy (LAPACK), batched over leading dims."""

from __future__ import annotations

import functools
import warnings

import numpy as np
import scipy.linalg as sla

from ._common import native, wrap


def _c(a: np.ndarray) -> np.ndarray:
    """A fresh C-contiguous copy (LAPACK results may be views or Fortran-ordered)."""
    return np.array(a, copy=True, order="C")


def _out(a, dtype):
    return wrap(_c(np.asarray(a).astype(dtype.numpy, copy=False)), dtype)


def _mT(a: np.ndarray) -> np.ndarray:
    return np.swapaxes(a, -1, -2)


def _raise(op: str, what: str):
    raise ValueError(f"prims::{op}: {what}")


def mm(a, b):
    """Matrix product; float16/bfloat16 accumulate in float32; integers wrap."""
    x, y = native(a), native(b)
    if a.dtype.itemsize == 2 and a.dtype.is_floating_point:
        x, y = x.astype(np.float32), y.astype(np.float32)
    r = np.matmul(x, y)  # a fresh C-contiguous array: no copy unless the dtype changes
    return wrap(r if r.dtype == a.dtype.numpy else r.astype(a.dtype.numpy), a.dtype)


def svd(A, full_matrices):
    """U, S, Vh."""
    u, s, vh = np.linalg.svd(native(A), full_matrices=full_matrices)
    return _out(u, A.dtype), _out(s, A.dtype.to_real()), _out(vh, A.dtype)


def qr(A, mode):
    """Q, R (Q empty for mode "r")."""
    if mode == "r":
        return wrap(np.empty((0,), A.dtype.numpy), A.dtype), _out(np.linalg.qr(native(A), mode="r"), A.dtype)
    q, r = np.linalg.qr(native(A), mode=mode)
    return _out(q, A.dtype), _out(r, A.dtype)


def cholesky(A, upper):
    """Lower factor (or its conjugate transpose)."""
    try:
        low = np.linalg.cholesky(native(A))
    except np.linalg.LinAlgError:
        _raise("cholesky", "the input is not positive definite (the factorization could not be completed)")
    return _out(np.conj(_mT(low)) if upper else low, A.dtype)


def solve(A, B, left):
    """A X = B or X A = B."""
    a, b = native(A), native(B)
    try:
        x = np.linalg.solve(a, b) if left else _mT(np.linalg.solve(_mT(a), _mT(b)))
    except np.linalg.LinAlgError:
        _raise("solve", "the matrix 'A' is singular")
    return _out(x, B.dtype)


def eigh(A, UPLO):
    """Real eigenvalues, eigenvectors."""
    w, v = np.linalg.eigh(native(A), UPLO=UPLO)
    return _out(w, A.dtype.to_real()), _out(v, A.dtype)


def eig(A):
    """Complex eigenvalues and eigenvectors."""
    w, v = np.linalg.eig(native(A))
    c = A.dtype.to_complex()
    return _out(w, c), _out(v, c)


def _lu_nopivot(a: np.ndarray, op: str) -> np.ndarray:
    """Compact LU without pivoting (Doolittle), vectorised over the batch; ValueError on a zero pivot."""
    lu = np.array(a, copy=True)
    m, n = lu.shape[-2:]
    for j in range(min(m, n)):
        pivot = lu[..., j, j]
        if np.any(pivot == 0):
            _raise(op, f"zero pivot at position {j + 1}: LU without pivoting does not exist for this input")
        lu[..., j + 1 :, j] /= pivot[..., None]
        lu[..., j + 1 :, j + 1 :] -= lu[..., j + 1 :, j, None] * lu[..., j, None, j + 1 :]
    return lu


def _unpack(lu: np.ndarray):
    """L (unit lower, m×k) and U (upper, k×n) from a compact LU."""
    m, n = lu.shape[-2:]
    k = min(m, n)
    low = np.tril(lu[..., :, :k], -1) + np.eye(m, k, dtype=lu.dtype)
    return low, np.triu(lu[..., :k, :])


def lu(A, pivot):
    """P, L, U with A = P L U."""
    a = native(A)
    m, n = a.shape[-2:]
    if not pivot:
        low, up = _unpack(_lu_nopivot(a, "lu"))
        p = np.broadcast_to(np.eye(m, dtype=a.dtype), a.shape[:-2] + (m, m))
        return _out(p, A.dtype), _out(low, A.dtype), _out(up, A.dtype)
    if a.size == 0:
        k = min(m, n)
        p = np.broadcast_to(np.eye(m, dtype=a.dtype), a.shape[:-2] + (m, m))
        low = np.broadcast_to(np.eye(m, k, dtype=a.dtype), a.shape[:-2] + (m, k))
        return _out(p, A.dtype), _out(low, A.dtype), _out(np.zeros(a.shape[:-2] + (k, n), a.dtype), A.dtype)
    p, low, up = sla.lu(a, check_finite=False)
    return _out(p, A.dtype), _out(low, A.dtype), _out(up, A.dtype)


def lu_factor(A, pivot):
    """Compact LU and 1-based int32 pivots."""
    a = native(A)
    k = min(a.shape[-2:])
    if a.size == 0 or not pivot:
        lu_ = _lu_nopivot(a, "lu_factor") if a.size else a
        piv = np.broadcast_to(np.arange(1, k + 1, dtype=np.int32), a.shape[:-2] + (k,))
        return _out(lu_, A.dtype), wrap(_c(piv))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sla.LinAlgWarning)
        lu_, piv = sla.lu_factor(a, check_finite=False)
    return _out(lu_, A.dtype), wrap(_c(piv.astype(np.int32) + 1))


def triangular_solve(B, A, upper, left, unitriangular):
    """Triangular solve (only the chosen triangle of A is read)."""
    a, b = native(A), native(B)
    if b.size == 0 or a.size == 0:
        return _out(np.zeros(b.shape, b.dtype), B.dtype)
    lower = not upper
    try:
        if left:
            x = sla.solve_triangular(a, b, lower=lower, unit_diagonal=unitriangular, check_finite=False)
        else:
            x = _mT(
                sla.solve_triangular(a, _mT(b), trans="T", lower=lower, unit_diagonal=unitriangular, check_finite=False)
            )
    except np.linalg.LinAlgError:
        _raise("triangular_solve", "the matrix 'A' is singular (a zero on its diagonal)")
    return _out(x, B.dtype)


def inverse(A):
    """Matrix inverse."""
    try:
        return _out(np.linalg.inv(native(A)), A.dtype)
    except np.linalg.LinAlgError:
        _raise("inverse", "the matrix 'A' is singular")


def det(A):
    """Determinant."""
    return _out(np.linalg.det(native(A)), A.dtype)


def slogdet(A):
    """Sign and log|det|."""
    sign, logabs = np.linalg.slogdet(native(A))
    return _out(sign, A.dtype), _out(logabs, A.dtype.to_real())


def _lstsq_one(a, b, rcond, real):
    """Solution, squared residuals, rank and singular values of one problem (gelsd)."""
    m, n = a.shape
    cond = rcond if rcond is not None else np.finfo(real).eps * max(m, n)
    if min(m, n) == 0 or b.shape[1] == 0:
        s = np.linalg.svd(a, compute_uv=False) if min(m, n) else np.zeros((0,), real)
        rank = int(np.sum(s > cond * s.max())) if s.size else 0
        x = np.zeros((n, b.shape[1]), a.dtype)
    else:
        x, _, rank, s = sla.lstsq(a, b, cond=cond, lapack_driver="gelsd", check_finite=False)
    res = np.sum(np.abs(a @ x - b) ** 2, axis=0) if m > n else None
    return x, res, rank, s


def lstsq(A, B, rcond):
    """Batched least squares (loops over the batch)."""
    a, b = native(A), native(B)
    if not (np.isfinite(a).all() and np.isfinite(b).all()):
        _raise("lstsq", "the inputs must not contain nan or inf")
    batch, (m, n), k = a.shape[:-2], a.shape[-2:], b.shape[-1]
    real = A.dtype.to_real().numpy
    x = np.zeros(batch + (n, k), a.dtype)
    res = np.zeros(batch + (k,), real) if m > n else np.zeros((0,), real)
    rank = np.zeros(batch, np.int64)
    sv = np.zeros(batch + (min(m, n),), real)
    for idx in np.ndindex(*batch):
        x[idx], r, rank[idx], sv[idx] = _lstsq_one(a[idx], b[idx], rcond, real)
        if r is not None:
            res[idx] = r
    return _out(x, A.dtype), wrap(res), wrap(rank), wrap(sv)


def matrix_exp(A):
    """Matrix exponential (Padé scaling and squaring, scipy.linalg.expm).

    Single-precision inputs are computed in double precision and rounded once: scipy's expm in
    float32 loses several digits to the squarings on matrices of large norm.
    """
    a = native(A)
    if a.size == 0:
        return _out(np.zeros(a.shape, a.dtype), A.dtype)
    wide = {np.dtype(np.float32): np.float64, np.dtype(np.complex64): np.complex128}.get(a.dtype)
    return _out(sla.expm(a.astype(wide) if wide is not None else a).astype(a.dtype), A.dtype)


def geqrf(A):
    """Householder QR in LAPACK's compact form."""
    a = native(A)
    m, n = a.shape[-2:]
    if a.size == 0:
        return _out(np.zeros(a.shape, a.dtype), A.dtype), _out(np.zeros(a.shape[:-2] + (min(m, n),)), A.dtype)
    h, tau = np.linalg.qr(a, mode="raw")
    return _out(_mT(h), A.dtype), _out(tau, A.dtype)


def householder_product(A, tau):
    """``H_1 ... H_k`` applied to the first n columns of the identity, vectorised over the batch."""
    a, t = native(A), native(tau)
    m, n = a.shape[-2:]
    q = np.broadcast_to(np.eye(m, n, dtype=a.dtype), a.shape).copy()
    for i in reversed(range(t.shape[-1])):
        v = np.array(a[..., :, i], copy=True)
        v[..., :i] = 0
        v[..., i] = 1
        w = np.einsum("...m,...mn->...n", np.conj(v), q)
        q -= t[..., i, None, None] * v[..., :, None] * w[..., None, :]
    return _out(q, A.dtype)


def _named(name: str, fn):
    """Report LAPACK failures not handled above (e.g. no convergence on nan input) as ValueError naming the op."""

    @functools.wraps(fn)
    def kernel(*args):
        try:
            return fn(*args)
        except np.linalg.LinAlgError as exc:
            raise ValueError(f"{name}: {exc}") from None

    return kernel


_KERNELS = {
    "prims::mm": mm,
    "prims::bmm": mm,
    "prims::svd": svd,
    "prims::qr": qr,
    "prims::cholesky": cholesky,
    "prims::solve": solve,
    "prims::eigh": eigh,
    "prims::eig": eig,
    "prims::lu": lu,
    "prims::lu_factor": lu_factor,
    "prims::triangular_solve": triangular_solve,
    "prims::inverse": inverse,
    "prims::det": det,
    "prims::slogdet": slogdet,
    "prims::lstsq": lstsq,
    "prims::matrix_exp": matrix_exp,
    "prims::geqrf": geqrf,
    "prims::householder_product": householder_product,
}

KERNELS = {name: _named(name, fn) for name, fn in _KERNELS.items()}
