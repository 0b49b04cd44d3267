"""Linear algebra: ``torch.linalg`` and the torch-namespace decompositions, solvers and products.

The factorisations run on the linalg prims (``svd``, ``qr``, ``cholesky``, ``eigh``, ``eig``, ``lu``,
``lu_factor``, ``solve``, ``triangular_solve``, ``inverse``, ``det``, ``slogdet``, ``lstsq``,
``matrix_exp``, ``geqrf``, ``householder_product``); everything else (norms, pseudo-inverses, ranks,
condition numbers, LU solves, Cholesky solves, ``einsum``, ``kron``, ``tensordot``...) decomposes into
them and into other canonical ops.

Conventions, as torch: matrix arguments have shape ``(*, m, n)`` and their batch dims broadcast;
the factorisations accept float32, float64, complex64 and complex128 (TypeError otherwise, float16
included, as torch on the CPU); operands of one op must share a dtype (TypeError, no promotion).
Where torch raises ``torch.linalg.LinAlgError`` (a singular matrix, a matrix that is not positive
definite) opweave raises ValueError. Deviations, each forced by what a prim can express:

- ``linalg_lstsq``: ``residuals`` are returned whenever ``m > n`` and the driver is not ``gelsy``,
  also for rank-deficient matrices (torch returns an empty tensor there: a data-dependent shape).
- ``*_ex`` ops with ``check_errors=False``: the result for a singular (or not positive definite)
  matrix of the batch is NaN, where torch returns LAPACK's partial result; ``info`` is torch's.
"""

from __future__ import annotations

import math
import string

from .. import _dtype
from .._ops import canonical as ops
from .._ops import prims
from ._tensor_utils import (
    cast,
    expand,
    fill_like,
    is_floating,
    is_integral,
    numel,
    reshape,
    squeeze,
    transpose_last,
    unsqueeze,
)
from ._utils import broadcast_shapes, define_with_variants, keep_dims, reduction_dims, wrap_dim
from .reductions import _vector_norm

_LINALG = (_dtype.float32, _dtype.float64, _dtype.complex64, _dtype.complex128)
_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


# -- checks and small helpers ----------------------------------------------------------------------


def _check_dtype(op: str, name: str, t) -> None:
    if t.dtype not in _LINALG:
        raise TypeError(f"{op}: expected a float or complex tensor for argument '{name}', got {t.dtype.name}")


def _check_matrix(op: str, name: str, t, square: bool = False, dtype_check: bool = True) -> None:
    if dtype_check:
        _check_dtype(op, name, t)
    if t.ndim < 2:
        raise ValueError(f"{op}: argument '{name}' must have at least 2 dims, got shape {list(t.shape)}")
    if square and t.shape[-1] != t.shape[-2]:
        raise ValueError(f"{op}: argument '{name}' must be batches of square matrices, got shape {list(t.shape)}")


def _same_dtype(op: str, *named) -> None:
    first_name, first = named[0]
    for name, t in named[1:]:
        if t.dtype is not first.dtype:
            raise TypeError(
                f"{op}: expected '{first_name}' and '{name}' to have the same dtype, got {first.dtype.name} and "
                f"{t.dtype.name}"
            )


def _mT(t):
    order = list(range(t.ndim))
    order[-2], order[-1] = order[-1], order[-2]
    return prims.transpose(t, order)


def _mH(t):
    """Conjugate transpose of the last two dims."""
    t = _mT(t)
    return prims.conj_physical(t) if t.dtype.is_complex else t


def _contig(t):
    return t if t.is_contiguous() else prims.clone(t, memory_format="contiguous_format")


def _broadcast_batch(op: str, a, b, a_name="A", b_name="B"):
    """``a`` and ``b`` expanded to their common batch dims (everything but the last two)."""
    batch = broadcast_shapes(op, a.shape[:-2], b.shape[:-2])
    return expand(a, batch + tuple(a.shape[-2:])), expand(b, batch + tuple(b.shape[-2:]))


def _eye(n: int, batch, dtype, device):
    eye = ops.eye(n, dtype=dtype, device=device)
    return expand(eye, tuple(batch) + (n, n))


def _where_batch(mask, a, b):
    """``where(mask, a, b)`` with a batch ``mask`` (*,) applied to matrices (*, m, n)."""
    m = prims.expand_dims(mask, [mask.ndim, mask.ndim + 1])
    return ops.where.self(m, a, b)


def _info_from_diagonal(diag):
    """LAPACK's ``info``: 1 + the index of the first zero of ``diag`` (*, k), or 0 (int32)."""
    zero = prims.eq(diag, fill_like(0, diag))
    if diag.shape[-1] == 0:
        return prims.full(list(diag.shape[:-1]), 0, dtype=_dtype.int32, device=diag.device)
    first = ops.argmax(cast(zero, _dtype.int32), -1)
    found = ops.any.dim(zero, -1)
    info = ops.where.self(found, ops.add.Scalar(first, 1), fill_like(0, first))
    return cast(info, _dtype.int32)


def _lu_info(A):
    """``info`` of an LU factorisation with partial pivoting (the first zero pivot), without raising."""
    lu, _ = prims.lu_factor(A, True)
    return _info_from_diagonal(ops.diagonal(lu, 0, -2, -1))


def _safe(A, info):
    """``A`` with the failing matrices (``info > 0``) replaced by the identity."""
    bad = ops.gt.Scalar(info, 0)
    return bad, _where_batch(bad, _eye(A.shape[-1], A.shape[:-2], A.dtype, A.device), A)


def _nan_where(bad, result):
    return _where_batch(bad, fill_like(math.nan, result), result)


def _raise_if(op: str, info, what: str) -> None:
    if info.numel() and bool(prims.item(ops.any(ops.gt.Scalar(info, 0)))):
        raise ValueError(f"{op}: {what}")


def _leading_minor_info(A, positive: bool):
    """1 + the first ``k`` whose leading ``(k+1) x (k+1)`` minor is singular (or not positive), else 0."""
    n = A.shape[-1]
    batch = tuple(A.shape[:-2])
    info = prims.full(list(batch), 0, dtype=_dtype.int32, device=A.device)
    for k in range(n, 0, -1):
        minor = prims.slice_in_dim(prims.slice_in_dim(A, 0, k, 1, A.ndim - 2), 0, k, 1, A.ndim - 1)
        sign, logabs = prims.slogdet(_contig(minor))
        if positive:
            real = prims.real(sign) if sign.dtype.is_complex else sign
            bad = prims.le(real, fill_like(0, real))
        else:
            bad = prims.eq(sign, fill_like(0, sign))
        info = ops.where.self(bad, fill_like(k, info), info)
    return info


# -- determinants and inverses ---------------------------------------------------------------------


def linalg_det(A):
    """Determinant of square matrices (*, n, n); 1 for 0 x 0 matrices."""
    _check_matrix("linalg_det", "A", A, square=True)
    return prims.det(A)


def det(self):
    """Alias of ``linalg_det``."""
    _check_matrix("det", "self", self, square=True)
    return prims.det(self)


def linalg_slogdet(A):
    """``(sign, log|det A|)``: sign is 0 and logabsdet -inf for singular matrices."""
    _check_matrix("linalg_slogdet", "A", A, square=True)
    return prims.slogdet(A)


def slogdet(self):
    """Alias of ``linalg_slogdet``."""
    _check_matrix("slogdet", "self", self, square=True)
    return prims.slogdet(self)


def logdet(self):
    """``log(det(self))``: nan for a negative real determinant, -inf for a singular matrix."""
    _check_matrix("logdet", "self", self, square=True)
    sign, logabs = prims.slogdet(self)
    if self.dtype.is_complex:
        return ops.add.Tensor(ops.log(sign), logabs)
    return ops.where.self(ops.lt.Scalar(sign, 0), fill_like(math.nan, logabs), logabs)


def linalg_inv(A):
    """Inverse of square matrices; ValueError for a singular one."""
    _check_matrix("linalg_inv", "A", A, square=True)
    return prims.inverse(A)


def inverse(self):
    """Alias of ``linalg_inv``."""
    _check_matrix("inverse", "self", self, square=True)
    return prims.inverse(self)


def linalg_inv_ex(A, check_errors=False):
    """``(inverse, info)``; ``info`` (int32) is 0, or 1 + the index of the first zero pivot of A's LU."""
    op = "linalg_inv_ex"
    _check_matrix(op, "A", A, square=True)
    info = _lu_info(A)
    if check_errors:
        _raise_if(op, info, "the matrix is singular (a zero pivot in its LU factorization)")
    bad, safe = _safe(A, info)
    return _nan_where(bad, prims.inverse(safe)), info


# -- solvers ---------------------------------------------------------------------------------------


def _solve_operands(op: str, A, B, left: bool):
    """Checked and broadcast ``(A, B, vector_case)``; a vector ``B`` gets a trailing dim."""
    _check_matrix(op, "A", A, square=True)
    _check_dtype(op, "B", B)
    _same_dtype(op, ("A", A), ("B", B))
    vector = B.ndim == 1 or (left and B.ndim == A.ndim - 1 and tuple(B.shape) == tuple(A.shape[:-1]))
    if vector:
        B = unsqueeze(B, -1)
    if B.ndim < 2:
        raise ValueError(f"{op}: argument 'B' must have at least 1 dim, got shape {list(B.shape)}")
    A, B = _broadcast_batch(op, A, B)
    n = A.shape[-1]
    if (B.shape[-2] if left else B.shape[-1]) != n:
        raise ValueError(f"{op}: incompatible shapes of A {list(A.shape)} and B {list(B.shape)}")
    return A, B, vector


def linalg_solve(A, B, left=True):
    """Solution ``X`` of ``A X = B`` (``left``) or ``X A = B``; ``B`` may be a vector; batch dims broadcast."""
    op = "linalg_solve"
    A, B, vector = _solve_operands(op, A, B, left)
    X = prims.solve(A, B, left)
    return squeeze(X, -1) if vector else X


def linalg_solve_ex(A, B, left=True, check_errors=False):
    """``(result, info)`` of ``linalg_solve``; NaN results and ``info > 0`` for singular matrices."""
    op = "linalg_solve_ex"
    A, B, vector = _solve_operands(op, A, B, left)
    info = _lu_info(A)
    if check_errors:
        _raise_if(op, info, "the matrix is singular (a zero pivot in its LU factorization)")
    bad, safe = _safe(A, info)
    X = _nan_where(bad, prims.solve(safe, B, left))
    return (squeeze(X, -1) if vector else X), info


def linalg_lstsq(self, b, rcond=None, driver=None):
    """Least-squares solution of ``self @ X = b``: ``(solution, residuals, rank, singular_values)``.

    ``driver`` ("gels", "gelsy" (default), "gelsd", "gelss") decides which outputs are empty, as
    torch on the CPU: ``rank`` for all but "gels", ``singular_values`` for "gelsd"/"gelss",
    ``residuals`` (``m > n`` only) for all but "gelsy".
    """
    op = "linalg_lstsq"
    _check_matrix(op, "self", self)
    _check_dtype(op, "b", b)
    _same_dtype(op, ("self", self), ("b", b))
    if driver is None:
        driver = "gelsy"
    if driver not in _DRIVERS:
        raise ValueError(f"{op}: argument 'driver' must be one of {list(_DRIVERS)}, got {driver!r}")
    if b.ndim < self.ndim - 1 or b.ndim > self.ndim:
        raise ValueError(f"{op}: 'b' {list(b.shape)} must have as many dims as 'self' {list(self.shape)} or one less")
    vector = b.ndim == self.ndim - 1
    if vector:
        b = unsqueeze(b, -1)
    A, B = _broadcast_batch(op, self, b, "self", "b")
    m, n = A.shape[-2:]
    if B.shape[-2] != m:
        raise ValueError(f"{op}: 'b' {list(b.shape)} must have {m} rows to match 'self' {list(self.shape)}")
    solution, residuals, rank, sv = prims.lstsq(_contig(A), _contig(B), rcond)
    real = A.dtype.to_real()
    empty = prims.full([0], 0, dtype=real, device=A.device)
    if driver == "gelsy" or not m > n:
        residuals = empty
    if driver == "gels":
        rank = prims.full([0], 0, dtype=_dtype.int64, device=A.device)
    if driver not in ("gelsd", "gelss"):
        sv = empty
    if vector:
        solution = squeeze(solution, -1)
        if residuals.numel() or residuals.ndim > 1:
            residuals = squeeze(residuals, -1)
    return solution, residuals, rank, sv


def _triangular(B, A, upper, left, unit):
    return prims.triangular_solve(_contig(B), _contig(A), upper, left, unit)


def linalg_solve_triangular(self, B, upper, left=True, unitriangular=False):
    """Solve ``A X = B`` (``left``) or ``X A = B`` with triangular ``A = self`` (only its triangle is read)."""
    op = "linalg_solve_triangular"
    _check_matrix(op, "self", self, square=True)
    _check_matrix(op, "B", B)
    _same_dtype(op, ("self", self), ("B", B))
    A, B = _broadcast_batch(op, self, B, "self", "B")
    n = A.shape[-1]
    if (B.shape[-2] if left else B.shape[-1]) != n:
        raise ValueError(f"{op}: incompatible shapes of self {list(self.shape)} and B {list(B.shape)}")
    return _triangular(B, A, upper, left, unitriangular)


def triangular_solve(self, A, upper=True, transpose=False, unitriangular=False):
    """Legacy ``torch.triangular_solve``: ``(solution of op(A) X = self, A broadcast)``; ``op`` transposes."""
    op = "triangular_solve"
    _check_matrix(op, "self", self)
    _check_matrix(op, "A", A, square=True)
    _same_dtype(op, ("self", self), ("A", A))
    A, B = _broadcast_batch(op, A, self, "A", "self")
    if B.shape[-2] != A.shape[-1]:
        raise ValueError(f"{op}: incompatible shapes of A {list(A.shape)} and self {list(self.shape)}")
    coefficient = _mT(A) if transpose else A
    X = _triangular(B, coefficient, upper != transpose, True, unitriangular)
    return X, prims.clone(A, memory_format="contiguous_format")


def _cholesky_solve(op, B, L, upper):
    _check_matrix(op, "self", B)
    _check_matrix(op, "input2", L, square=True)
    _same_dtype(op, ("self", B), ("input2", L))
    L, B = _broadcast_batch(op, L, B, "input2", "self")
    if B.shape[-2] != L.shape[-1]:
        raise ValueError(f"{op}: incompatible shapes of input2 {list(L.shape)} and self {list(B.shape)}")
    if upper:  # A = U^H U
        Y = _triangular(B, _mH(L), False, True, False)
        return _triangular(Y, L, True, True, False)
    Y = _triangular(B, L, False, True, False)
    return _triangular(Y, _mH(L), True, True, False)


def cholesky_solve(self, input2, upper=False):
    """Solve ``A X = self`` given the Cholesky factor ``input2`` of ``A`` (lower, or upper if ``upper``)."""
    return _cholesky_solve("cholesky_solve", self, input2, upper)


def cholesky_inverse(self, upper=False):
    """Inverse of ``A`` from its Cholesky factor ``self`` (``A = L L^H``, or ``U^H U`` if ``upper``)."""
    op = "cholesky_inverse"
    _check_matrix(op, "self", self, square=True)
    eye = _eye(self.shape[-1], self.shape[:-2], self.dtype, self.device)
    return _cholesky_solve(op, eye, self, upper)


# -- factorisations --------------------------------------------------------------------------------


def linalg_cholesky(self, upper=False):
    """Cholesky factor ``L`` (``A = L L^H``) or ``U = L^H``; ValueError if A is not positive definite."""
    _check_matrix("linalg_cholesky", "self", self, square=True)
    return prims.cholesky(self, upper)


def cholesky(self, upper=False):
    """Legacy ``torch.cholesky`` (same as ``linalg_cholesky``)."""
    _check_matrix("cholesky", "self", self, square=True)
    return prims.cholesky(self, upper)


def linalg_cholesky_ex(self, upper=False, check_errors=False):
    """``(L, info)``: ``info`` is 0, or the order of the first leading minor that is not positive definite."""
    op = "linalg_cholesky_ex"
    _check_matrix(op, "self", self, square=True)
    try:
        L = prims.cholesky(self, upper)
        return L, prims.full(list(self.shape[:-2]), 0, dtype=_dtype.int32, device=self.device)
    except ValueError:
        if check_errors:
            raise ValueError(f"{op}: the matrix is not positive definite") from None
    hermitian = ops.add.Tensor(ops.tril(self), _mH(ops.tril(self, -1)))  # the prim reads the lower triangle
    info = _leading_minor_info(hermitian, positive=True)
    bad, safe = _safe(self, info)
    return _nan_where(bad, prims.cholesky(safe, upper)), info


def linalg_qr(A, mode="reduced"):
    """QR decomposition; ``mode`` "reduced", "complete" or "r" (Q empty)."""
    op = "linalg_qr"
    _check_matrix(op, "A", A)
    if mode not in ("reduced", "complete", "r"):
        raise ValueError(f"{op}: argument 'mode' must be 'reduced', 'complete' or 'r', got {mode!r}")
    return prims.qr(A, mode)


def qr(self, some=True):
    """Legacy ``torch.qr``: reduced (``some``) or complete QR."""
    _check_matrix("qr", "self", self)
    return prims.qr(self, "reduced" if some else "complete")


def _check_driver(op: str, driver) -> None:
    if driver is not None:
        raise ValueError(f"{op}: argument 'driver' is only supported on CUDA inputs, got {driver!r}")


def linalg_svd(A, full_matrices=True, driver=None):
    """``(U, S, Vh)`` with ``A = U diag(S) Vh``, S real and descending."""
    _check_matrix("linalg_svd", "A", A)
    _check_driver("linalg_svd", driver)
    return prims.svd(A, full_matrices)


def linalg_svdvals(A, driver=None):
    """Singular values of ``A`` (real, descending)."""
    _check_matrix("linalg_svdvals", "A", A)
    _check_driver("linalg_svdvals", driver)
    return prims.svd(A, False)[1]


def svd(self, some=True, compute_uv=True):
    """Legacy ``torch.svd``: ``(U, S, V)`` with ``V = Vh^H``; zero-filled U (m x m) and V (n x n) without uv."""
    _check_matrix("svd", "self", self)
    U, S, Vh = prims.svd(self, not some)
    if compute_uv:
        return U, S, _contig(_mH(Vh))
    m, n = self.shape[-2:]
    batch = list(self.shape[:-2])
    zeros_u = prims.full(batch + [m, m], 0, dtype=self.dtype, device=self.device)
    zeros_v = prims.full(batch + [n, n], 0, dtype=self.dtype, device=self.device)
    return zeros_u, S, zeros_v


def linalg_eig(self):
    """Eigenvalues and eigenvectors (complex) of square matrices."""
    _check_matrix("linalg_eig", "self", self, square=True)
    return prims.eig(self)


def linalg_eigvals(self):
    """Eigenvalues (complex) of square matrices."""
    _check_matrix("linalg_eigvals", "self", self, square=True)
    return prims.eig(self)[0]


def _check_uplo(op: str, UPLO) -> None:
    if UPLO not in ("L", "U"):
        raise ValueError(f"{op}: argument 'UPLO' must be 'L' or 'U', got {UPLO!r}")


def linalg_eigh(self, UPLO="L"):
    """Eigenvalues (real, ascending) and eigenvectors of Hermitian matrices, reading the ``UPLO`` triangle."""
    _check_matrix("linalg_eigh", "self", self, square=True)
    _check_uplo("linalg_eigh", UPLO)
    return prims.eigh(self, UPLO)


def linalg_eigvalsh(self, UPLO="L"):
    """Eigenvalues (real, ascending) of Hermitian matrices."""
    _check_matrix("linalg_eigvalsh", "self", self, square=True)
    _check_uplo("linalg_eigvalsh", UPLO)
    return prims.eigh(self, UPLO)[0]


def geqrf(self):
    """LAPACK geqrf: ``(a, tau)`` with R and the Householder reflectors packed in ``a``."""
    _check_matrix("geqrf", "self", self)
    return prims.geqrf(self)


def _householder(op, A, tau, a_name):
    _check_matrix(op, a_name, A)
    _check_dtype(op, "tau", tau)
    _same_dtype(op, (a_name, A), ("tau", tau))
    if A.shape[-2] < A.shape[-1]:
        raise ValueError(f"{op}: '{a_name}' {list(A.shape)} must have at least as many rows as columns")
    if tau.ndim != A.ndim - 1 or tuple(tau.shape[:-1]) != tuple(A.shape[:-2]) or tau.shape[-1] > A.shape[-1]:
        raise ValueError(f"{op}: 'tau' {list(tau.shape)} must be (*, k) with k <= {A.shape[-1]} and A's batch dims")
    return prims.householder_product(A, tau)


def linalg_householder_product(input, tau):  # noqa: A002 - torch's argument name
    """The first n columns of ``H_1 ... H_k`` (the Q of a QR) from geqrf's reflectors."""
    return _householder("linalg_householder_product", input, tau, "input")


def orgqr(self, input2):
    """Alias of ``linalg_householder_product``."""
    return _householder("orgqr", self, input2, "self")


def ormqr(self, input2, input3, left=True, transpose=False):
    """``op(Q) @ input3`` (``left``) or ``input3 @ op(Q)``; Q from geqrf's reflectors ``(self, input2)``.

    ``op`` is the conjugate transpose when ``transpose``.
    """
    op = "ormqr"
    _check_matrix(op, "self", self)
    _check_matrix(op, "input3", input3)
    _check_dtype(op, "input2", input2)
    _same_dtype(op, ("self", self), ("input2", input2), ("input3", input3))
    size = input3.shape[-2] if left else input3.shape[-1]
    if self.shape[-2] != size:
        raise ValueError(f"{op}: 'self' {list(self.shape)} must have {size} rows to match 'input3'")
    k = input2.shape[-1]
    if k > self.shape[-1] or k > size:
        raise ValueError(f"{op}: 'input2' {list(input2.shape)} has more reflectors than 'self' holds")
    square = self
    if self.shape[-1] < size:
        square = ops.constant_pad_nd(self, [0, size - self.shape[-1]], 0)
    elif self.shape[-1] > size:
        square = prims.slice_in_dim(self, 0, size, 1, self.ndim - 1)
    Q = prims.householder_product(_contig(square), _contig(input2))
    if transpose:
        Q = _mH(Q)
    return ops.matmul(Q, input3) if left else ops.matmul(input3, Q)


# -- LU ----------------------------------------------------------------------------------------------


def linalg_lu(A, pivot=True):
    """``(P, L, U)`` with ``A = P L U``."""
    _check_matrix("linalg_lu", "A", A)
    return prims.lu(A, pivot)


def linalg_lu_factor(A, pivot=True):
    """Compact LU: ``(LU, pivots)`` (pivots int32, 1-based, LAPACK's convention)."""
    _check_matrix("linalg_lu_factor", "A", A)
    return prims.lu_factor(A, pivot)


def linalg_lu_factor_ex(A, pivot=True, check_errors=False):
    """``(LU, pivots, info)``: ``info`` is 0 or 1 + the index of the first zero pivot."""
    op = "linalg_lu_factor_ex"
    _check_matrix(op, "A", A)
    try:
        LU, pivots = prims.lu_factor(A, pivot)
    except ValueError:  # a zero pivot without pivoting
        if check_errors:
            raise ValueError(f"{op}: a zero pivot was met in the LU factorization without pivoting") from None
        k = min(A.shape[-2:])
        square = prims.slice_in_dim(prims.slice_in_dim(A, 0, k, 1, A.ndim - 2), 0, k, 1, A.ndim - 1)
        info = _leading_minor_info(square, positive=False)
        bad = ops.gt.Scalar(info, 0)
        eye = expand(ops.eye(A.shape[-2], A.shape[-1], dtype=A.dtype, device=A.device), A.shape)
        LU, pivots = prims.lu_factor(_where_batch(bad, eye, A), pivot)
        return _nan_where(bad, LU), pivots, info
    info = _info_from_diagonal(ops.diagonal(LU, 0, -2, -1))
    if check_errors:
        _raise_if(op, info, "the matrix is singular (a zero pivot in its LU factorization)")
    return LU, pivots, info


def _permutation(pivots, m: int):
    """The row permutation ``perm`` (int64, (*, m)) that LAPACK's sequential swaps ``pivots`` (*, k) apply.

    Swapping rows ``i`` and ``pivots[i] - 1`` for ``i = 0, 1, ...`` composes transpositions:
    ``perm = t_0 o t_1 o ... o t_(k-1)`` with ``(f o g)[r] = f[g[r]]`` (a gather). The k
    transpositions are built at once and composed pairwise, in ``log2(k)`` batched gathers.
    """
    batch = tuple(pivots.shape[:-1])
    k = pivots.shape[-1]
    rows = ops.arange(m, dtype=_dtype.int64, device=pivots.device)
    if k == 0:
        return _contig(expand(rows, batch + (m,)))
    steps = reshape(ops.arange(k, dtype=_dtype.int64, device=pivots.device), (k, 1))
    targets = unsqueeze(ops.sub.Scalar(cast(pivots, _dtype.int64), 1), -1)  # (*, k, 1)
    shape = batch + (k, m)
    r, i, j = expand(rows, shape), expand(steps, shape), expand(targets, shape)
    swaps = ops.where.self(ops.eq.Tensor(r, i), j, ops.where.self(ops.eq.Tensor(r, j), i, r))
    last = swaps.ndim - 2
    while swaps.shape[-2] > 1:
        count = swaps.shape[-2]
        if count % 2:
            identity = expand(reshape(rows, (1, m)), batch + (1, m))
            swaps = ops.cat([swaps, identity], last)
            count += 1
        outer = prims.slice(swaps, [0] * swaps.ndim, list(swaps.shape), [1] * last + [2, 1])
        inner = prims.slice(swaps, [0] * last + [1, 0], list(swaps.shape), [1] * last + [2, 1])
        swaps = ops.gather(outer, -1, inner)
    return _contig(squeeze(swaps, -2))


def _permutation_matrix(pivots, m: int, dtype):
    perm = _permutation(pivots, m)
    rows = reshape(ops.arange(m, dtype=_dtype.int64, device=pivots.device), (m, 1))
    return cast(ops.eq.Tensor(rows, unsqueeze(perm, -2)), dtype)  # P[perm[r], r] = 1


def _check_pivots(op: str, LU, pivots, lu_name="LU", piv_name="pivots"):
    if pivots.dtype is not _dtype.int32:
        raise TypeError(f"{op}: expected an int32 tensor for argument '{piv_name}', got {pivots.dtype.name}")
    k = min(LU.shape[-2:])
    if tuple(pivots.shape) != tuple(LU.shape[:-2]) + (k,):
        raise ValueError(
            f"{op}: '{piv_name}' {list(pivots.shape)} must have shape {list(LU.shape[:-2]) + [k]} to match "
            f"'{lu_name}' {list(LU.shape)}"
        )


def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True):
    """``(P, L, U)`` from a compact LU; the outputs not asked for are empty tensors."""
    op = "lu_unpack"
    _check_matrix(op, "LU_data", LU_data, dtype_check=False)
    _check_pivots(op, LU_data, LU_pivots, "LU_data", "LU_pivots")
    m, n = LU_data.shape[-2:]
    k = min(m, n)
    empty = prims.full([0], 0, dtype=LU_data.dtype, device=LU_data.device)
    if unpack_data:
        last = LU_data.ndim - 1
        lower = prims.slice_in_dim(ops.tril(LU_data, -1), 0, k, 1, last)
        eye = expand(ops.eye(m, k, dtype=LU_data.dtype, device=LU_data.device), lower.shape)
        L = ops.add.Tensor(lower, eye)
        U = _contig(prims.slice_in_dim(ops.triu(LU_data), 0, k, 1, last - 1))
    else:
        L = U = empty
    P = _permutation_matrix(LU_pivots, m, LU_data.dtype) if unpack_pivots else empty
    return P, L, U


def _lu_solve_left(LU, pivots, B, adjoint: bool):
    P, L, U = lu_unpack(LU, pivots)
    if not adjoint:  # A = P L U
        Y = ops.matmul(_mT(P), B)
        Y = _triangular(Y, L, False, True, True)
        return _triangular(Y, U, True, True, False)
    Y = _triangular(B, _mH(U), False, True, False)  # A^H = U^H L^H P^T
    Y = _triangular(Y, _mH(L), True, True, True)
    return ops.matmul(P, Y)


def linalg_lu_solve(LU, pivots, B, left=True, adjoint=False):
    """Solve ``A X = B`` (``left``) or ``X A = B`` from A's compact LU; ``adjoint`` solves with ``A^H``."""
    op = "linalg_lu_solve"
    _check_matrix(op, "LU", LU, square=True)
    _check_pivots(op, LU, pivots)
    _check_matrix(op, "B", B)
    _same_dtype(op, ("LU", LU), ("B", B))
    n = LU.shape[-1]
    if (B.shape[-2] if left else B.shape[-1]) != n:
        raise ValueError(f"{op}: incompatible shapes of LU {list(LU.shape)} and B {list(B.shape)}")
    batch = broadcast_shapes(op, LU.shape[:-2], B.shape[:-2])
    LU = expand(LU, batch + (n, n))
    pivots = expand(pivots, batch + (n,))
    B = expand(B, batch + tuple(B.shape[-2:]))
    if left:
        return _lu_solve_left(LU, pivots, B, adjoint)
    # X A = B  <=>  A^H X^H = B^H
    return _contig(_mH(_lu_solve_left(LU, pivots, _mH(B), not adjoint)))


def lu_solve(self, LU_data, LU_pivots):
    """Legacy ``torch.lu_solve``: solve ``A X = self`` from A's compact LU."""
    op = "lu_solve"
    _check_matrix(op, "LU_data", LU_data, square=True)
    _check_pivots(op, LU_data, LU_pivots, "LU_data", "LU_pivots")
    _check_matrix(op, "self", self)
    return linalg_lu_solve(LU_data, LU_pivots, self)


# -- norms, rank, pseudo-inverse, condition number ---------------------------------------------------


def linalg_vector_norm(self, ord=2, dim=None, keepdim=False, dtype=None):  # noqa: A002
    """The vector ``ord``-norm over ``dim`` (all dims when None); real result."""
    op = "linalg_vector_norm"
    dims = reduction_dims(op, dim, self.ndim)
    if ord == 2 and dtype is None and self.dtype in (_dtype.float32, _dtype.float64) and self.numel():
        trailing = tuple(range(self.ndim - len(dims), self.ndim))
        if tuple(sorted(dims)) == trailing and self.is_contiguous():
            return _two_norm_trailing(self, len(dims), keepdim)
    return _vector_norm(op, self, ord, dims, keepdim, dtype)


def _two_norm_trailing(x, count: int, keepdim: bool):
    """The 2-norm over the last ``count`` dims of a contiguous real tensor, as row dot products (BLAS)."""
    kept = tuple(x.shape[: x.ndim - count])
    rows, k = numel(kept), numel(x.shape[x.ndim - count :])
    if rows == 1:
        flat = reshape(x, (1, k))
        squares = prims.mm(flat, transpose_last(flat))
    else:
        flat = reshape(x, (rows, 1, k))
        squares = prims.bmm(flat, _mT(flat))
    out = reshape(prims.sqrt(squares), kept)
    if keepdim:
        out = reshape(out, kept + (1,) * count)
    return out


_MATRIX_ORDS = ("fro", "nuc", math.inf, -math.inf, 1, -1, 2, -2)


def _matrix_norm(op: str, A, ord, dim, keepdim, dtype):  # noqa: A002
    if ord not in _MATRIX_ORDS or isinstance(ord, bool):
        raise ValueError(f"{op}: argument 'ord' must be one of {list(_MATRIX_ORDS)}, got {ord!r}")
    if A.ndim < 2:
        raise ValueError(f"{op}: argument 'self' must have at least 2 dims, got shape {list(A.shape)}")
    if len(dim) != 2:
        raise ValueError(f"{op}: argument 'dim' must be a 2-tuple, got {list(dim)}")
    d0, d1 = (wrap_dim(op, d, A.ndim) for d in dim)
    if d0 == d1:
        raise ValueError(f"{op}: argument 'dim' must name two different dims, got {list(dim)}")
    x = cast(A, dtype) if dtype is not None else A
    if not is_floating(x.dtype):
        raise TypeError(f"{op}: expected a floating point or complex tensor, got {x.dtype.name}")
    if ord == "fro":
        return _vector_norm(op, x, 2, (d0, d1), keepdim)
    if ord in (1, -1, math.inf, -math.inf):
        inner, outer = (d0, d1) if ord in (1, -1) else (d1, d0)
        sums = ops.sum.dim_IntList(ops.abs(x), [inner], True)
        reduce = ops.amax if ord > 0 else ops.amin
        out = reduce(sums, [outer], True)
        return out if keepdim else prims.squeeze(out, sorted([d0, d1]))
    _check_dtype(op, "self", x)
    moved = ops.movedim.intlist(x, [d0, d1], [-2, -1])
    sv = prims.svd(_contig(moved), False)[1]
    if ord == "nuc":
        out = ops.sum.dim_IntList(sv, [-1])
    else:
        out = (ops.amax if ord == 2 else ops.amin)(sv, [-1])
    return keep_dims(out, sorted([d0, d1]), A.ndim) if keepdim else out


def linalg_matrix_norm(self, ord, dim=(-2, -1), keepdim=False, dtype=None):  # noqa: A002
    """Matrix norm over the two ``dim`` dims: ord 1, -1, 2, -2, inf, -inf."""
    return _matrix_norm("linalg_matrix_norm", self, ord, dim, keepdim, dtype)


def linalg_matrix_norm_str(self, ord="fro", dim=(-2, -1), keepdim=False, dtype=None):  # noqa: A002
    """Matrix norm over the two ``dim`` dims: ord "fro" (Frobenius) or "nuc" (nuclear)."""
    if ord not in ("fro", "nuc"):
        raise ValueError(f"linalg_matrix_norm: argument 'ord' must be 'fro' or 'nuc', got {ord!r}")
    return _matrix_norm("linalg_matrix_norm", self, ord, dim, keepdim, dtype)


def linalg_norm(self, ord=None, dim=None, keepdim=False, dtype=None):  # noqa: A002
    """Vector norm (1 dim, or the flattened tensor when both ``ord`` and ``dim`` are None) or matrix norm (2 dims)."""
    op = "linalg_norm"
    if dim is not None:
        dims = [dim] if isinstance(dim, int) else list(dim)
        if len(dims) == 1:
            return _vector_norm(
                op, self, 2 if ord is None else ord, reduction_dims(op, dims, self.ndim), keepdim, dtype
            )
        if len(dims) == 2:
            return _matrix_norm(op, self, "fro" if ord is None else ord, dims, keepdim, dtype)
        raise ValueError(f"{op}: argument 'dim' must have 1 or 2 entries, got {dims}")
    if ord is None:
        return _vector_norm(op, self, 2, reduction_dims(op, None, self.ndim), keepdim, dtype)
    if self.ndim == 1:
        return _vector_norm(op, self, ord, (0,), keepdim, dtype)
    if self.ndim == 2:
        return _matrix_norm(op, self, ord, [0, 1], keepdim, dtype)
    raise ValueError(f"{op}: with 'ord' given and 'dim' None, the input must be 1-D or 2-D, got {self.ndim}-D")


def linalg_norm_str(self, ord, dim=None, keepdim=False, dtype=None):  # noqa: A002
    """Matrix norm "fro" or "nuc" over ``dim`` (the 2-D input's dims when None)."""
    op = "linalg_norm"
    if ord not in ("fro", "nuc"):
        raise ValueError(f"{op}: argument 'ord' must be 'fro' or 'nuc', got {ord!r}")
    if dim is None:
        if self.ndim != 2:
            raise ValueError(f"{op}: with a string 'ord' and 'dim' None, the input must be 2-D, got {self.ndim}-D")
        dim = [0, 1]
    return _matrix_norm(op, self, ord, list(dim), keepdim, dtype)


def _spectrum(op: str, A, hermitian: bool):
    """Singular values (or |eigenvalues| of a Hermitian A) and, for the pseudo-inverse, the factors."""
    if hermitian:
        w, Q = prims.eigh(A, "L")
        return ops.abs(w), w, Q
    U, S, Vh = prims.svd(A, False)
    return S, U, Vh


def _tolerances(op: str, A, S, atol, rtol):
    """``max(atol, rtol * max(S))`` (*, 1) with torch's defaults (rtol = eps * max(m, n) unless atol > 0)."""
    real = S.dtype
    default = _dtype.finfo(real).eps * max(A.shape[-2:])
    batch = tuple(S.shape[:-1])

    def as_tensor(value, name):
        if value is None:
            return None
        if isinstance(value, (int, float)):
            return prims.full(list(batch), float(value), dtype=real, device=S.device)
        if value.dtype.is_complex:
            raise TypeError(f"{op}: argument '{name}' must not be complex, got {value.dtype.name}")
        return expand(cast(value, real), broadcast_shapes(op, value.shape, batch))

    atol_t, rtol_t = as_tensor(atol, "atol"), as_tensor(rtol, "rtol")
    if rtol_t is None:
        rtol_t = prims.full(list(batch), default, dtype=real, device=S.device)
        if atol_t is not None:
            rtol_t = ops.where.self(ops.gt.Scalar(atol_t, 0), fill_like(0.0, atol_t), expand(rtol_t, atol_t.shape))
    if atol_t is None:
        atol_t = fill_like(0.0, rtol_t)
    smax = ops.amax(S, [-1]) if S.shape[-1] else prims.full(list(batch), 0.0, dtype=real, device=S.device)
    tol = ops.maximum(atol_t, ops.mul.Tensor(rtol_t, smax))
    return unsqueeze(tol, -1)


def _matrix_rank(op, A, atol, rtol, hermitian):
    _check_matrix(op, "input", A, square=hermitian)
    S = _spectrum(op, A, hermitian)[0]
    tol = _tolerances(op, A, S, atol, rtol)
    return ops.sum.dim_IntList(ops.gt.Tensor(S, tol), [-1])


def linalg_matrix_rank_atol_rtol_tensor(input, atol=None, rtol=None, hermitian=False):  # noqa: A002
    """Numerical rank: singular values above ``max(atol, rtol * max(S))`` (int64)."""
    return _matrix_rank("linalg_matrix_rank", input, atol, rtol, hermitian)


def linalg_matrix_rank_atol_rtol_float(self, atol=None, rtol=None, hermitian=False):
    """Numerical rank with float tolerances."""
    return _matrix_rank("linalg_matrix_rank", self, atol, rtol, hermitian)


def linalg_matrix_rank(self, tol, hermitian=False):
    """Numerical rank: singular values above ``tol`` (an absolute tolerance)."""
    return _matrix_rank("linalg_matrix_rank", self, tol, 0.0, hermitian)


def linalg_matrix_rank_tol_tensor(input, tol, hermitian=False):  # noqa: A002
    """Numerical rank with a tensor absolute tolerance ``tol`` (broadcast over the batch)."""
    return _matrix_rank("linalg_matrix_rank", input, tol, 0.0, hermitian)


def _pinv(op, A, atol, rtol, hermitian):
    _check_matrix(op, "self", A, square=hermitian)
    S, left, right = _spectrum(op, A, hermitian)
    tol = _tolerances(op, A, S, atol, rtol)
    keep = ops.gt.Tensor(S, tol)
    if hermitian:
        w, Q = left, right
        inv = ops.where.self(keep, ops.reciprocal(w), fill_like(0.0, w))
        scaled = ops.mul.Tensor(Q, unsqueeze(cast(inv, Q.dtype), -2))
        return ops.matmul(scaled, _mH(Q))
    U, Vh = left, right
    inv = ops.where.self(keep, ops.reciprocal(S), fill_like(0.0, S))
    scaled = ops.mul.Tensor(_mH(Vh), unsqueeze(cast(inv, U.dtype), -2))
    return ops.matmul(scaled, _mH(U))


def linalg_pinv_atol_rtol_tensor(self, atol=None, rtol=None, hermitian=False):
    """Moore-Penrose pseudo-inverse, dropping singular values at or below ``max(atol, rtol * max(S))``."""
    return _pinv("linalg_pinv", self, atol, rtol, hermitian)


def linalg_pinv_atol_rtol_float(self, atol=None, rtol=None, hermitian=False):
    """Pseudo-inverse with float tolerances."""
    return _pinv("linalg_pinv", self, atol, rtol, hermitian)


def linalg_pinv(self, rcond, hermitian=False):
    """Pseudo-inverse with the relative tolerance ``rcond``."""
    return _pinv("linalg_pinv", self, 0.0, rcond, hermitian)


def linalg_pinv_rcond_tensor(self, rcond, hermitian=False):
    """Pseudo-inverse with a tensor relative tolerance ``rcond``."""
    return _pinv("linalg_pinv", self, 0.0, rcond, hermitian)


def pinverse(self, rcond=1e-15):
    """Legacy ``torch.pinverse``: pseudo-inverse with relative tolerance ``rcond``."""
    return _pinv("pinverse", self, 0.0, rcond, False)


def _cond(op: str, A, p):
    _check_matrix(op, "self", A)
    if p in (None, 2, -2):
        S = prims.svd(A, False)[1]
        hi, lo = ops.amax(S, [-1]), ops.amin(S, [-1])
        return ops.div.Tensor(hi, lo) if p in (None, 2) else ops.div.Tensor(lo, hi)
    if A.shape[-1] != A.shape[-2]:
        raise ValueError(f"{op}: p={p!r} needs square matrices, got shape {list(A.shape)}")
    info = _lu_info(A)
    bad, safe = _safe(A, info)
    inv = prims.inverse(safe)
    dims = [-2, -1]
    value = ops.mul.Tensor(_matrix_norm(op, A, p, dims, False, None), _matrix_norm(op, inv, p, dims, False, None))
    return ops.where.self(bad, fill_like(math.inf, value), value)


def linalg_cond(self, p=None):
    """Condition number ``norm(A, p) * norm(inv(A), p)`` (the ratio of extreme singular values for p = ±2)."""
    if p is not None and p not in (1, -1, 2, -2, math.inf, -math.inf):
        raise ValueError(f"linalg_cond: argument 'p' must be one of None, ±1, ±2, ±inf, 'fro', 'nuc', got {p!r}")
    return _cond("linalg_cond", self, p)


def linalg_cond_str(self, p):
    """Condition number in the Frobenius ("fro") or nuclear ("nuc") norm."""
    if p not in ("fro", "nuc"):
        raise ValueError(f"linalg_cond: argument 'p' must be 'fro' or 'nuc', got {p!r}")
    return _cond("linalg_cond", self, p)


# -- matrix functions ----------------------------------------------------------------------------------


def _matrix_power(op: str, A, n: int):
    if A.ndim < 2 or A.shape[-1] != A.shape[-2]:
        raise ValueError(f"{op}: argument 'self' must be batches of square matrices, got shape {list(A.shape)}")
    if n == 0:
        return _contig(_eye(A.shape[-1], A.shape[:-2], A.dtype, A.device))
    if n < 0:
        _check_dtype(op, "self", A)
        A, n = prims.inverse(A), -n
    result, base = None, A
    while n:
        if n & 1:
            result = base if result is None else ops.matmul(result, base)
        n >>= 1
        if n:
            base = ops.matmul(base, base)
    return prims.clone(result, memory_format="contiguous_format") if result is A else result


def linalg_matrix_power(self, n):
    """``self`` raised to the integer power ``n`` (repeated squaring; inverse first for n < 0)."""
    return _matrix_power("linalg_matrix_power", self, n)


def matrix_power(self, n):
    """Alias of ``linalg_matrix_power``."""
    return _matrix_power("matrix_power", self, n)


def linalg_matrix_exp(self):
    """Matrix exponential of square matrices."""
    _check_matrix("linalg_matrix_exp", "self", self, square=True)
    return prims.matrix_exp(self)


def matrix_exp(self):
    """Alias of ``linalg_matrix_exp``."""
    _check_matrix("matrix_exp", "self", self, square=True)
    return prims.matrix_exp(self)


# -- products ------------------------------------------------------------------------------------------


def _cross(op: str, a, b, dim):
    _same_dtype(op, ("self", a), ("other", b))
    if a.ndim != b.ndim:
        raise ValueError(
            f"{op}: inputs must have the same number of dimensions, got {list(a.shape)} and {list(b.shape)}"
        )
    shape = broadcast_shapes(op, a.shape, b.shape)
    if dim is None:
        dim = next((i for i, s in enumerate(shape) if s == 3), None)
        if dim is None:
            raise ValueError(f"{op}: no dim of size 3 in the inputs of shape {list(shape)}")
    d = wrap_dim(op, dim, len(shape))
    if not shape or a.shape[d] != 3 or b.shape[d] != 3:
        raise ValueError(
            f"{op}: argument 'dim': dim {dim} of the inputs must have size 3, got {list(a.shape)} and {list(b.shape)}"
        )
    a, b = expand(a, shape), expand(b, shape)

    def part(t, i):
        return prims.slice_in_dim(t, i, i + 1, 1, d)

    a0, a1, a2 = (part(a, i) for i in range(3))
    b0, b1, b2 = (part(b, i) for i in range(3))
    mul, sub = ops.mul.Tensor, ops.sub.Tensor
    c0 = sub(mul(a1, b2), mul(a2, b1))
    c1 = sub(mul(a2, b0), mul(a0, b2))
    c2 = sub(mul(a0, b1), mul(a1, b0))
    return ops.cat([c0, c1, c2], d)


def linalg_cross(self, other, dim=-1):
    """Cross product of 3-vectors along ``dim``; inputs broadcast and share a dtype."""
    return _cross("linalg_cross", self, other, dim)


def cross(self, other, dim=None):
    """``torch.cross``: like ``linalg_cross``, but ``dim=None`` picks the first dim of size 3."""
    return _cross("cross", self, other, dim)


def linalg_vecdot(x, y, dim=-1):
    """``sum(conj(x) * y, dim)``: the dot product of vectors along ``dim`` (broadcast; same dtype)."""
    op = "linalg_vecdot"
    _same_dtype(op, ("x", x), ("y", y))
    shape = broadcast_shapes(op, x.shape, y.shape)
    d = wrap_dim(op, dim, len(shape))
    if x.dtype.is_complex:
        x = prims.conj_physical(x)
    return ops.sum.dim_IntList(ops.mul.Tensor(x, y), [d])


def _chain_order(dims):
    """Optimal parenthesisation of a matrix chain with shapes ``dims[i] x dims[i+1]`` (split table)."""
    n = len(dims) - 1
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = math.inf
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k
    return split


def _multiply_chain(mats, split, i, j):
    if i == j:
        return mats[i]
    k = split[i][j]
    return ops.mm(_multiply_chain(mats, split, i, k), _multiply_chain(mats, split, k + 1, j))


def linalg_multi_dot(tensors):
    """Product of a chain of matrices in the cheapest order; the first and last may be vectors."""
    op = "linalg_multi_dot"
    if len(tensors) < 2:
        raise ValueError(f"{op}: expected at least 2 tensors, got {len(tensors)}")
    for i, t in enumerate(tensors):
        allowed = (1, 2) if i in (0, len(tensors) - 1) else (2,)
        if t.ndim not in allowed:
            raise ValueError(f"{op}: tensor {i} must be {' or '.join(f'{a}-D' for a in allowed)}, got {t.ndim}-D")
        if t.dtype is not tensors[0].dtype:
            raise TypeError(
                f"{op}: all tensors must have the same dtype, got {tensors[0].dtype.name} and {t.dtype.name}"
            )
    first_vector, last_vector = tensors[0].ndim == 1, tensors[-1].ndim == 1
    mats = list(tensors)
    if first_vector:
        mats[0] = unsqueeze(mats[0], 0)
    if last_vector:
        mats[-1] = unsqueeze(mats[-1], 1)
    for i in range(len(mats) - 1):
        if mats[i].shape[1] != mats[i + 1].shape[0]:
            raise ValueError(
                f"{op}: tensors {i} and {i + 1} with shapes {list(tensors[i].shape)} and "
                f"{list(tensors[i + 1].shape)} cannot be multiplied"
            )
    dims = [mats[0].shape[0]] + [m.shape[1] for m in mats]
    out = _multiply_chain(mats, _chain_order(dims), 0, len(mats) - 1)
    if first_vector and last_vector:
        return reshape(out, ())
    if first_vector:
        return squeeze(out, 0)
    if last_vector:
        return squeeze(out, 1)
    return out


def chain_matmul(matrices):
    """Product of a chain of 2-D matrices (legacy; ``linalg_multi_dot`` with matrices only)."""
    op = "chain_matmul"
    if not matrices:
        raise ValueError(f"{op}: expected a non-empty list of tensors")
    for i, t in enumerate(matrices):
        if t.ndim != 2:
            raise ValueError(f"{op}: tensor {i} must be 2-D, got {t.ndim}-D")
    if len(matrices) == 1:
        return prims.clone(matrices[0], memory_format="contiguous_format")
    return linalg_multi_dot(matrices)


def linalg_matmul(self, other):
    """Alias of ``matmul``."""
    return ops.matmul(self, other)


def linalg_diagonal(A, offset=0, dim1=-2, dim2=-1):
    """View of the diagonals of ``A`` over ``dim1``/``dim2`` (the last two dims by default)."""
    return ops.diagonal(A, offset, dim1, dim2)


def linalg_vander(x, N=None):
    """Vandermonde matrix ``x[..., i] ** j`` for ``j < N`` (default ``x.shape[-1]``), shape (*, n, N)."""
    op = "linalg_vander"
    if x.ndim < 1:  # a 0-d x is one point, as PyTorch
        x = reshape(x, (1,))
    if x.dtype is _dtype.bool_:
        raise TypeError(f"{op}: bool tensors are not supported")
    n = x.shape[-1] if N is None else N
    if n <= 1:
        raise ValueError(f"{op}: argument 'N' must be greater than 1, got {n}")
    dtype = _dtype.int64 if is_integral(x.dtype) else x.dtype
    x = cast(x, dtype)
    powers = ops.cumprod(expand(unsqueeze(x, -1), tuple(x.shape) + (n - 1,)), -1)
    ones = prims.full(list(x.shape) + [1], 1, dtype=dtype, device=x.device)
    return ops.cat([ones, powers], -1)


def tensordot(self, other, dims_self, dims_other):
    """Contract ``dims_self`` of ``self`` with ``dims_other`` of ``other`` (same dtype; sizes match, or one is 1
    and the other side is summed over that dim first, as PyTorch)."""
    op = "tensordot"
    _same_dtype(op, ("self", self), ("other", other))
    if len(dims_self) != len(dims_other):
        raise ValueError(f"{op}: both dim lists should have the same length, got {list(dims_self)} and {dims_other}")
    ds = [wrap_dim(op, d, self.ndim) for d in dims_self]
    do = [wrap_dim(op, d, other.ndim) for d in dims_other]
    for a, b in zip(ds, do):
        if other.shape[b] == 1 and self.shape[a] != 1:  # a broadcast dim: sum the other side right away (PyTorch)
            self = ops.sum(self, [a], True, dtype=self.dtype)
        elif self.shape[a] == 1 and other.shape[b] != 1:
            other = ops.sum(other, [b], True, dtype=other.dtype)
        elif self.shape[a] != other.shape[b]:
            raise ValueError(
                f"{op}: contracted dimensions need to match, but first has size {self.shape[a]} in dim {a} and "
                f"second has size {other.shape[b]} in dim {b}"
            )
    free_s = [d for d in range(self.ndim) if d not in ds]
    free_o = [d for d in range(other.ndim) if d not in do]
    k = numel([self.shape[d] for d in ds])
    a = reshape(prims.transpose(self, free_s + ds), (numel([self.shape[d] for d in free_s]), k))
    b = reshape(prims.transpose(other, do + free_o), (k, numel([other.shape[d] for d in free_o])))
    out = ops.mm(a, b)
    return reshape(out, tuple(self.shape[d] for d in free_s) + tuple(other.shape[d] for d in free_o))


def kron(self, other):
    """Kronecker product: block ``(i, j)`` is ``self[i, j] * other`` (leading dims padded with 1)."""
    nd = max(self.ndim, other.ndim)
    a = reshape(self, (1,) * (nd - self.ndim) + tuple(self.shape))
    b = reshape(other, (1,) * (nd - other.ndim) + tuple(other.shape))
    a_shape, b_shape = [], []
    for sa, sb in zip(a.shape, b.shape):
        a_shape += [sa, 1]
        b_shape += [1, sb]
    product = ops.mul.Tensor(reshape(a, a_shape), reshape(b, b_shape))
    return reshape(product, tuple(sa * sb for sa, sb in zip(a.shape, b.shape)))


# -- einsum ----------------------------------------------------------------------------------------------


def _parse_einsum(op: str, equation: str, tensors):
    """Operand subscripts (with ``...`` expanded to fresh letters) and the output subscripts."""
    eq = equation.replace(" ", "")
    if "->" in eq:
        lhs, rhs = eq.split("->", 1)
    else:
        lhs, rhs = eq, None
    terms = lhs.split(",")
    if len(terms) != len(tensors):
        raise ValueError(f"{op}: the equation has {len(terms)} operands but {len(tensors)} tensors were given")
    used = set(c for c in eq if c.isalpha())
    spare = [c for c in string.ascii_letters if c not in used]
    ell_dims = 0
    for term, t in zip(terms, tensors):
        letters = term.replace("...", "")
        if any(not c.isalpha() for c in letters):
            raise ValueError(f"{op}: invalid subscripts {term!r} in the equation {equation!r}")
        if "..." in term:
            ell_dims = max(ell_dims, t.ndim - len(letters))
        elif len(letters) != t.ndim:
            raise ValueError(f"{op}: subscripts {term!r} do not match an operand with {t.ndim} dims")
    ell = spare[:ell_dims]
    subs = []
    for term, t in zip(terms, tensors):
        if "..." in term:
            n = t.ndim - len(term.replace("...", ""))
            if n < 0:
                raise ValueError(f"{op}: subscripts {term!r} do not match an operand with {t.ndim} dims")
            term = term.replace("...", "".join(ell[ell_dims - n :]))
        subs.append(term)
    if rhs is None:
        counts = {}
        for s in subs:
            for c in s:
                counts[c] = counts.get(c, 0) + 1
        out = "".join(ell) + "".join(sorted(c for c, k in counts.items() if k == 1 and c not in ell))
    else:
        out = rhs.replace("...", "".join(ell))
        if any(not c.isalpha() for c in out) or len(set(out)) != len(out):
            raise ValueError(f"{op}: invalid output subscripts {rhs!r}")
        for c in out:
            if not any(c in s for s in subs):
                raise ValueError(f"{op}: output subscript {c!r} does not appear in the operands")
    return subs, out


def _einsum_diagonal(t, sub: str):
    """Take the diagonal of repeated subscripts of one operand: ``ii -> i``."""
    while len(set(sub)) != len(sub):
        c = next(c for c in sub if sub.count(c) > 1)
        i = sub.index(c)
        j = sub.index(c, i + 1)
        t = ops.diagonal(t, 0, i, j)  # the diagonal becomes the last dim
        sub = sub[:i] + sub[i + 1 : j] + sub[j + 1 :] + c
    return t, sub


def _einsum_sum(t, sub: str, keep: set):
    """Sum out the subscripts of ``t`` not in ``keep``."""
    drop = [i for i, c in enumerate(sub) if c not in keep]
    if not drop:
        return t, sub
    return ops.sum.dim_IntList(t, drop), "".join(c for c in sub if c in keep)


def _einsum_pair(a, sa: str, b, sb: str, keep: set):
    """Contract two operands with bmm; the result keeps the subscripts in ``keep``."""
    sizes = {}
    for t, s in ((a, sa), (b, sb)):
        for c, n in zip(s, t.shape):
            if sizes.get(c, 1) == 1:
                sizes[c] = n
    batch = [c for c in sa if c in sb and c in keep]
    contract = [c for c in sa if c in sb and c not in keep]
    left = [c for c in sa if c not in sb]
    right = [c for c in sb if c not in sa]

    def arrange(t, s, order):
        t = prims.transpose(t, [s.index(c) for c in order])
        shape = [sizes[c] for c in order]
        return expand(t, shape)

    a3 = arrange(a, sa, batch + left + contract)
    b3 = arrange(b, sb, batch + contract + right)
    nb, nl, nc, nr = (numel([sizes[c] for c in g]) for g in (batch, left, contract, right))
    out = prims.bmm(_contig(reshape(a3, (nb, nl, nc))), _contig(reshape(b3, (nb, nc, nr))))
    return reshape(out, [sizes[c] for c in batch + left + right]), "".join(batch + left + right)


def einsum(equation, tensors, path=None):
    """Einstein summation (``"ij,jk->ik"``, ``...`` for broadcast dims, implicit output mode), pairwise with bmm.

    Operands are contracted left to right; ``path`` (opt_einsum's contraction order, which torch
    uses only for speed) is checked for form and otherwise does not change the result.
    """
    op = "einsum"
    if not tensors:
        raise ValueError(f"{op}: expected at least one operand")
    for t in tensors[1:]:
        if t.dtype is not tensors[0].dtype:
            raise TypeError(
                f"{op}: all operands must have the same dtype, got {tensors[0].dtype.name} and {t.dtype.name}"
            )
    subs, out = _parse_einsum(op, equation, tensors)
    sizes = {}
    for t, s in zip(tensors, subs):
        for c, n in zip(s, t.shape):
            if c in sizes and n != sizes[c] and 1 not in (n, sizes[c]):
                raise ValueError(f"{op}: subscript {c!r} has size {n} for one operand and {sizes[c]} for another")
            sizes[c] = n if sizes.get(c, 1) == 1 else sizes[c]
    ops_ = []
    for t, s in zip(tensors, subs):
        t, s = _einsum_diagonal(t, s)
        ops_.append((t, s))
    # Sum out subscripts that appear in one operand only and not in the output.
    for i, (t, s) in enumerate(ops_):
        others = set("".join(s2 for j, (_, s2) in enumerate(ops_) if j != i)) | set(out)
        ops_[i] = _einsum_sum(t, s, others)
    order = list(range(len(ops_))) if path is None else _path_order(op, path, len(ops_))
    current, cs = ops_[order[0]]
    rest = [ops_[i] for i in order[1:]]
    for k, (t, s) in enumerate(rest):
        later = set("".join(s2 for _, s2 in rest[k + 1 :])) | set(out)
        current, cs = _einsum_pair(current, cs, t, s, later)
    summed, cs = _einsum_sum(current, cs, set(out))
    current = expand(summed, [sizes[c] for c in cs])
    result = prims.transpose(current, [cs.index(c) for c in out]) if cs else current
    # A single operand that was only permuted or diagonalised is still a view of its input: copy it.
    return _copy(result) if any(_shares_storage(result, t) for t in tensors) else result


def _copy(t):
    return prims.clone(t, memory_format="contiguous_format")


def _shares_storage(a, b) -> bool:
    return a.untyped_storage() is b.untyped_storage()


def _path_order(op: str, path, n: int):
    """The operand order implied by an opt_einsum-style flat ``path`` (pairs of positions); left to right here."""
    if len(path) % 2:
        raise ValueError(f"{op}: argument 'path' must hold pairs of operand positions, got {list(path)}")
    return list(range(n))


# -- integration -----------------------------------------------------------------------------------------


def _trapz_float(y):
    return y if is_floating(y.dtype) else cast(y, _dtype.get_default_dtype())


def _pairs(y, d):
    n = y.shape[d]
    return prims.slice_in_dim(y, 1, n, 1, d), prims.slice_in_dim(y, 0, n - 1, 1, d)


def _spacing(op: str, y, x, d):
    """``diff(x)`` along ``d``, shaped to broadcast against the pair sums of ``y``."""
    if x.ndim == 1:
        if x.shape[0] != y.shape[d]:
            raise ValueError(f"{op}: 'x' has {x.shape[0]} points but 'y' has {y.shape[d]} along dim {d}")
        hi, lo = _pairs(x, 0)
        dx = ops.sub.Tensor(hi, lo)
        shape = [1] * y.ndim
        shape[d] = dx.shape[0]
        return reshape(dx, shape)
    shape = broadcast_shapes(op, x.shape, y.shape)
    x = expand(x, shape)
    dd = d + len(shape) - y.ndim
    hi, lo = _pairs(x, dd)
    return ops.sub.Tensor(hi, lo)


def _trapezoid(op: str, y, x, dx, dim, cumulative: bool):
    if y.ndim == 0:
        raise ValueError(f"{op}: argument 'y' must have at least 1 dim")
    d = wrap_dim(op, dim, y.ndim)
    if y.dtype is _dtype.bool_:
        y = cast(y, _dtype.int64)
    if y.shape[d] == 0:
        shape = list(y.shape) if cumulative else list(y.shape[:d]) + list(y.shape[d + 1 :])
        dtype = _trapz_float(y).dtype if x is None else _dtype.result_type(y, x)
        dtype = dtype if is_floating(dtype) else _dtype.get_default_dtype()
        return prims.full(shape, 0, dtype=dtype, device=y.device)
    hi, lo = _pairs(y, d)
    sums = ops.add.Tensor(hi, lo)
    if x is None:
        areas = ops.mul.Scalar(ops.div.Scalar(sums, 2), dx)
    else:
        areas = ops.div.Scalar(ops.mul.Tensor(_spacing(op, y, x, d), sums), 2)
    if cumulative:
        return ops.cumsum(areas, d + areas.ndim - y.ndim)
    return ops.sum.dim_IntList(areas, [d + areas.ndim - y.ndim])


def trapezoid_x(y, x, dim=-1):
    """Trapezoidal rule along ``dim`` with sample points ``x`` (1-D, or broadcastable to ``y``)."""
    return _trapezoid("trapezoid", y, x, None, dim, False)


def trapezoid_dx(y, dx=1, dim=-1):
    """Trapezoidal rule along ``dim`` with constant spacing ``dx``."""
    return _trapezoid("trapezoid", y, None, dx, dim, False)


def trapz_x(y, x, dim=-1):
    """Alias of ``trapezoid`` (sample points)."""
    return _trapezoid("trapz", y, x, None, dim, False)


def trapz_dx(y, dx=1, dim=-1):
    """Alias of ``trapezoid`` (constant spacing)."""
    return _trapezoid("trapz", y, None, dx, dim, False)


def cumulative_trapezoid_x(y, x, dim=-1):
    """Running trapezoidal integral along ``dim`` (one fewer point than ``y``)."""
    return _trapezoid("cumulative_trapezoid", y, x, None, dim, True)


def cumulative_trapezoid_dx(y, dx=1, dim=-1):
    """Running trapezoidal integral with constant spacing ``dx``."""
    return _trapezoid("cumulative_trapezoid", y, None, dx, dim, True)


# -- tensor inverse and solve ------------------------------------------------------------------------


def linalg_tensorinv(self, ind=2):
    """The tensor ``X`` with ``tensordot(self, X, ind) == I``: shape ``self.shape[ind:] + self.shape[:ind]``."""
    op = "linalg_tensorinv"
    if ind <= 0:
        raise ValueError(f"{op}: argument 'ind' must be a positive integer, got {ind}")
    rows, cols = numel(self.shape[:ind]), numel(self.shape[ind:])
    if rows != cols:
        raise ValueError(f"{op}: the product of the first {ind} dims {rows} must equal the product of the rest {cols}")
    _check_dtype(op, "self", self)
    inv = prims.inverse(_contig(reshape(self, (rows, cols))))
    return reshape(inv, tuple(self.shape[ind:]) + tuple(self.shape[:ind]))


def linalg_tensorsolve(self, other, dims=None):
    """The tensor ``X`` with ``tensordot(self, X, X.ndim) == other``; ``dims`` of ``self`` are moved last first."""
    op = "linalg_tensorsolve"
    _check_dtype(op, "self", self)
    _same_dtype(op, ("self", self), ("other", other))
    A = self
    if dims is not None:
        src = [wrap_dim(op, d, self.ndim) for d in dims]
        A = ops.movedim.intlist(self, src, list(range(self.ndim - len(src), self.ndim)))
    rows = numel(other.shape)
    rest = tuple(A.shape[other.ndim :])
    if numel(A.shape[: other.ndim]) != rows or numel(rest) != rows:  # sizes only multiply up, as PyTorch
        raise ValueError(f"{op}: 'self' {list(self.shape)} does not match 'other' {list(other.shape)}")
    X = prims.solve(_contig(reshape(A, (rows, rows))), _contig(reshape(other, (rows, 1))), True)
    return reshape(X, rest)


# -- definitions -------------------------------------------------------------------------------------------

L = ("linalg",)

# (schema, decomposition, out=): True for ".out", a string for another overload name, False for none
OPS = [
    ("linalg_det(Tensor A) -> Tensor", linalg_det, True),
    ("det(Tensor self) -> Tensor", det, False),
    ("linalg_slogdet(Tensor A) -> (Tensor sign, Tensor logabsdet)", linalg_slogdet, True),
    ("slogdet(Tensor self) -> (Tensor sign, Tensor logabsdet)", slogdet, True),
    ("logdet(Tensor self) -> Tensor", logdet, False),
    ("linalg_inv(Tensor A) -> Tensor", linalg_inv, True),
    ("inverse(Tensor self) -> Tensor", inverse, True),
    ("linalg_inv_ex(Tensor A, *, bool check_errors=False) -> (Tensor inverse, Tensor info)", linalg_inv_ex, "inverse"),
    ("linalg_solve(Tensor A, Tensor B, *, bool left=True) -> Tensor", linalg_solve, True),
    (
        "linalg_solve_ex(Tensor A, Tensor B, *, bool left=True, bool check_errors=False) -> (Tensor result, "
        "Tensor info)",
        linalg_solve_ex,
        True,
    ),
    (
        "linalg_lstsq(Tensor self, Tensor b, float? rcond=None, *, str? driver=None) -> (Tensor solution, "
        "Tensor residuals, Tensor rank, Tensor singular_values)",
        linalg_lstsq,
        True,
    ),
    (
        "linalg_solve_triangular(Tensor self, Tensor B, *, bool upper, bool left=True, bool unitriangular=False) "
        "-> Tensor",
        linalg_solve_triangular,
        True,
    ),
    (
        "triangular_solve(Tensor self, Tensor A, bool upper=True, bool transpose=False, bool unitriangular=False) "
        "-> (Tensor solution, Tensor cloned_coefficient)",
        triangular_solve,
        "X",
    ),
    ("cholesky_solve(Tensor self, Tensor input2, bool upper=False) -> Tensor", cholesky_solve, True),
    ("cholesky_inverse(Tensor self, bool upper=False) -> Tensor", cholesky_inverse, True),
    ("linalg_cholesky(Tensor self, *, bool upper=False) -> Tensor", linalg_cholesky, True),
    ("cholesky(Tensor self, bool upper=False) -> Tensor", cholesky, True),
    (
        "linalg_cholesky_ex(Tensor self, *, bool upper=False, bool check_errors=False) -> (Tensor L, Tensor info)",
        linalg_cholesky_ex,
        "L",
    ),
    ("linalg_qr(Tensor A, str mode='reduced') -> (Tensor Q, Tensor R)", linalg_qr, True),
    ("qr(Tensor self, bool some=True) -> (Tensor Q, Tensor R)", qr, "Q"),
    (
        "linalg_svd(Tensor A, bool full_matrices=True, *, str? driver=None) -> (Tensor U, Tensor S, Tensor Vh)",
        linalg_svd,
        "U",
    ),
    ("linalg_svdvals(Tensor A, *, str? driver=None) -> Tensor", linalg_svdvals, True),
    ("svd(Tensor self, bool some=True, bool compute_uv=True) -> (Tensor U, Tensor S, Tensor V)", svd, "U"),
    ("linalg_eig(Tensor self) -> (Tensor eigenvalues, Tensor eigenvectors)", linalg_eig, True),
    ("linalg_eigvals(Tensor self) -> Tensor", linalg_eigvals, True),
    ('linalg_eigh(Tensor self, str UPLO="L") -> (Tensor eigenvalues, Tensor eigenvectors)', linalg_eigh, "eigvals"),
    ('linalg_eigvalsh(Tensor self, str UPLO="L") -> Tensor', linalg_eigvalsh, True),
    ("geqrf(Tensor self) -> (Tensor a, Tensor tau)", geqrf, "a"),
    ("linalg_householder_product(Tensor input, Tensor tau) -> Tensor", linalg_householder_product, True),
    ("orgqr(Tensor self, Tensor input2) -> Tensor", orgqr, True),
    ("ormqr(Tensor self, Tensor input2, Tensor input3, bool left=True, bool transpose=False) -> Tensor", ormqr, True),
    ("linalg_lu(Tensor A, *, bool pivot=True) -> (Tensor P, Tensor L, Tensor U)", linalg_lu, True),
    ("linalg_lu_factor(Tensor A, *, bool pivot=True) -> (Tensor LU, Tensor pivots)", linalg_lu_factor, True),
    (
        "linalg_lu_factor_ex(Tensor A, *, bool pivot=True, bool check_errors=False) -> (Tensor LU, Tensor pivots, "
        "Tensor info)",
        linalg_lu_factor_ex,
        True,
    ),
    (
        "linalg_lu_solve(Tensor LU, Tensor pivots, Tensor B, *, bool left=True, bool adjoint=False) -> Tensor",
        linalg_lu_solve,
        True,
    ),
    (
        "lu_unpack(Tensor LU_data, Tensor LU_pivots, bool unpack_data=True, bool unpack_pivots=True) -> "
        "(Tensor P, Tensor L, Tensor U)",
        lu_unpack,
        True,
    ),
    ("lu_solve(Tensor self, Tensor LU_data, Tensor LU_pivots) -> Tensor", lu_solve, True),
    (
        "linalg_vector_norm(Tensor self, Scalar ord=2, int[1]? dim=None, bool keepdim=False, *, "
        "ScalarType? dtype=None) -> Tensor",
        linalg_vector_norm,
        True,
    ),
    (
        "linalg_matrix_norm(Tensor self, Scalar ord, int[] dim=[-2,-1], bool keepdim=False, *, "
        "ScalarType? dtype=None) -> Tensor",
        linalg_matrix_norm,
        True,
    ),
    (
        "linalg_matrix_norm.str_ord(Tensor self, str ord='fro', int[] dim=[-2,-1], bool keepdim=False, *, "
        "ScalarType? dtype=None) -> Tensor",
        linalg_matrix_norm_str,
        True,
    ),
    (
        "linalg_norm(Tensor self, Scalar? ord=None, int[1]? dim=None, bool keepdim=False, *, "
        "ScalarType? dtype=None) -> Tensor",
        linalg_norm,
        True,
    ),
    (
        "linalg_norm.ord_str(Tensor self, str ord, int[1]? dim=None, bool keepdim=False, *, "
        "ScalarType? dtype=None) -> Tensor",
        linalg_norm_str,
        True,
    ),
    (
        "linalg_matrix_rank.atol_rtol_tensor(Tensor input, *, Tensor? atol=None, Tensor? rtol=None, "
        "bool hermitian=False) -> Tensor",
        linalg_matrix_rank_atol_rtol_tensor,
        True,
    ),
    (
        "linalg_matrix_rank.atol_rtol_float(Tensor self, *, float? atol=None, float? rtol=None, "
        "bool hermitian=False) -> Tensor",
        linalg_matrix_rank_atol_rtol_float,
        True,
    ),
    ("linalg_matrix_rank(Tensor self, float tol, bool hermitian=False) -> Tensor", linalg_matrix_rank, True),
    (
        "linalg_matrix_rank.tol_tensor(Tensor input, Tensor tol, bool hermitian=False) -> Tensor",
        linalg_matrix_rank_tol_tensor,
        "out_tol_tensor",
    ),
    (
        "linalg_pinv.atol_rtol_tensor(Tensor self, *, Tensor? atol=None, Tensor? rtol=None, "
        "bool hermitian=False) -> Tensor",
        linalg_pinv_atol_rtol_tensor,
        True,
    ),
    (
        "linalg_pinv.atol_rtol_float(Tensor self, *, float? atol=None, float? rtol=None, bool hermitian=False) "
        "-> Tensor",
        linalg_pinv_atol_rtol_float,
        True,
    ),
    ("linalg_pinv(Tensor self, float rcond, bool hermitian=False) -> Tensor", linalg_pinv, True),
    (
        "linalg_pinv.rcond_tensor(Tensor self, Tensor rcond, bool hermitian=False) -> Tensor",
        linalg_pinv_rcond_tensor,
        "out_rcond_tensor",
    ),
    ("pinverse(Tensor self, float rcond=1e-15) -> Tensor", pinverse, False),
    ("linalg_cond(Tensor self, Scalar? p=None) -> Tensor", linalg_cond, True),
    ("linalg_cond.p_str(Tensor self, str p) -> Tensor", linalg_cond_str, True),
    ("linalg_matrix_power(Tensor self, int n) -> Tensor", linalg_matrix_power, True),
    ("matrix_power(Tensor self, int n) -> Tensor", matrix_power, True),
    ("linalg_matrix_exp(Tensor self) -> Tensor", linalg_matrix_exp, False),
    ("matrix_exp(Tensor self) -> Tensor", matrix_exp, False),
    ("linalg_cross(Tensor self, Tensor other, *, int dim=-1) -> Tensor", linalg_cross, True),
    ("cross(Tensor self, Tensor other, int? dim=None) -> Tensor", cross, True),
    ("linalg_vecdot(Tensor x, Tensor y, *, int dim=-1) -> Tensor", linalg_vecdot, True),
    ("linalg_multi_dot(Tensor[] tensors) -> Tensor", linalg_multi_dot, True),
    ("chain_matmul(Tensor[] matrices) -> Tensor", chain_matmul, True),
    ("linalg_matmul(Tensor self, Tensor other) -> Tensor", linalg_matmul, True),
    ("linalg_vander(Tensor x, *, SymInt? N=None) -> Tensor", linalg_vander, False),
    ("tensordot(Tensor self, Tensor other, int[] dims_self, int[] dims_other) -> Tensor", tensordot, True),
    ("kron(Tensor self, Tensor other) -> Tensor", kron, True),
    ("einsum(str equation, Tensor[] tensors, *, int[]? path=None) -> Tensor", einsum, False),
    ("trapezoid.x(Tensor y, Tensor x, *, int dim=-1) -> Tensor", trapezoid_x, False),
    ("trapezoid.dx(Tensor y, *, Scalar dx=1, int dim=-1) -> Tensor", trapezoid_dx, False),
    ("trapz.x(Tensor y, Tensor x, *, int dim=-1) -> Tensor", trapz_x, False),
    ("trapz.dx(Tensor y, *, float dx=1, int dim=-1) -> Tensor", trapz_dx, False),
    ("cumulative_trapezoid.x(Tensor y, Tensor x, *, int dim=-1) -> Tensor", cumulative_trapezoid_x, False),
    ("cumulative_trapezoid.dx(Tensor y, *, Scalar dx=1, int dim=-1) -> Tensor", cumulative_trapezoid_dx, False),
    ("linalg_tensorinv(Tensor self, int ind=2) -> Tensor", linalg_tensorinv, True),
    ("linalg_tensorsolve(Tensor self, Tensor other, int[]? dims=None) -> Tensor", linalg_tensorsolve, True),
]


def _define():
    for schema, decomposition, out in OPS:
        define_with_variants(schema, decomposition, tags=L, inplace=False, out=out)
    define_with_variants(
        "linalg_diagonal(Tensor(a) A, *, int offset=0, int dim1=-2, int dim2=-1) -> Tensor(a)",
        linalg_diagonal,
        tags=("view",),
        inplace=False,
        out=False,
    )


_define()
