"""Linear-algebra prims (tag ``linalg``), batched over leading dims.

A matrix argument has shape ``(*, m, n)``; ``*`` is a batch that every matrix
argument of a call shares exactly (prims do not broadcast). The decompositions
accept float32, float64, complex64 and complex128 (float16/bfloat16 and integer
dtypes raise TypeError); ``mm`` and ``bmm`` accept every numeric dtype. Outputs
are contiguous. Data-dependent failures (a singular matrix for ``solve``,
``inverse`` and ``triangular_solve``, a matrix that is not positive definite for
``cholesky``) raise ValueError from the backend kernel.
"""

from __future__ import annotations

from .. import _dtype
from .._meta import empty as meta_empty
from .._ops import define_prim
from ._utils import COMPLEX, NUMERIC, check_dtype, check_tensor, same_device

LINALG = frozenset({_dtype.float32, _dtype.float64}) | COMPLEX


def _matrix(op: str, name: str, a, square: bool = False, allowed=LINALG, ndim: int | None = None):
    """Validate a batch of matrices; returns ``(batch, m, n)``."""
    check_tensor(op, name, a)
    check_dtype(op, name, a, allowed)
    if ndim is not None and a.ndim != ndim:
        raise ValueError(f"{op}: argument '{name}' must be {ndim}-D, got shape {list(a.shape)}")
    if a.ndim < 2:
        raise ValueError(f"{op}: argument '{name}' must have at least 2 dims, got shape {list(a.shape)}")
    batch, m, n = tuple(a.shape[:-2]), a.shape[-2], a.shape[-1]
    if square and m != n:
        raise ValueError(f"{op}: argument '{name}' must be batches of square matrices, got shape {list(a.shape)}")
    return batch, m, n


def _same(op: str, names, tensors) -> None:
    """Same dtype (TypeError) and device (RuntimeError)."""
    first = tensors[0]
    for name, t in zip(names[1:], tensors[1:]):
        if t.dtype is not first.dtype:
            raise TypeError(
                f"{op}: expected '{names[0]}' and '{name}' to have the same dtype, got {first.dtype.name} "
                f"and {t.dtype.name}"
            )
    same_device(op, tensors)


def _same_batch(op: str, name_a: str, a, name_b: str, b) -> None:
    if a.ndim != b.ndim or a.shape[:-2] != b.shape[:-2]:
        raise ValueError(
            f"{op}: '{name_a}' {list(a.shape)} and '{name_b}' {list(b.shape)} must have the same batch dims"
        )


def _check_flag(op: str, name: str, value, choices) -> None:
    if value not in choices:
        raise ValueError(f"{op}: argument '{name}' must be one of {list(choices)}, got {value!r}")


def mm_meta(self, mat2):
    """Matrix product of 2-D ``self`` (m, k) and ``mat2`` (k, n); any numeric dtype (integers wrap)."""
    op = "prims::mm"
    _, m, k = _matrix(op, "self", self, allowed=NUMERIC, ndim=2)
    _, k2, n = _matrix(op, "mat2", mat2, allowed=NUMERIC, ndim=2)
    _same(op, ("self", "mat2"), (self, mat2))
    if k != k2:
        raise ValueError(f"{op}: inner sizes differ: 'self' is {list(self.shape)}, 'mat2' is {list(mat2.shape)}")
    return meta_empty((m, n), self.dtype)


def bmm_meta(self, mat2):
    """Batched matrix product of 3-D ``self`` (b, m, k) and ``mat2`` (b, k, n); any numeric dtype."""
    op = "prims::bmm"
    batch, m, k = _matrix(op, "self", self, allowed=NUMERIC, ndim=3)
    batch2, k2, n = _matrix(op, "mat2", mat2, allowed=NUMERIC, ndim=3)
    _same(op, ("self", "mat2"), (self, mat2))
    if batch != batch2:
        raise ValueError(f"{op}: batch sizes differ: {list(self.shape)} and {list(mat2.shape)}")
    if k != k2:
        raise ValueError(f"{op}: inner sizes differ: 'self' is {list(self.shape)}, 'mat2' is {list(mat2.shape)}")
    return meta_empty(batch + (m, n), self.dtype)


def svd_meta(A, full_matrices):
    """Singular value decomposition ``A = U diag(S) Vh`` (S real, descending).

    With ``k = min(m, n)``: U is (*, m, m) if ``full_matrices`` else (*, m, k); S is (*, k);
    Vh is (*, n, n) if ``full_matrices`` else (*, k, n).
    """
    batch, m, n = _matrix("prims::svd", "A", A)
    k = min(m, n)
    u_cols, vh_rows = (m, n) if full_matrices else (k, k)
    return (
        meta_empty(batch + (m, u_cols), A.dtype),
        meta_empty(batch + (k,), A.dtype.to_real()),
        meta_empty(batch + (vh_rows, n), A.dtype),
    )


def qr_meta(A, mode):
    """QR decomposition ``A = Q R`` (Q with orthonormal columns, R upper triangular).

    ``mode``: "reduced" → Q (*, m, k), R (*, k, n) with ``k = min(m, n)``; "complete" →
    Q (*, m, m), R (*, m, n); "r" → Q is an empty (0,) tensor (as torch), R (*, k, n).
    """
    op = "prims::qr"
    batch, m, n = _matrix(op, "A", A)
    _check_flag(op, "mode", mode, ("reduced", "complete", "r"))
    k = min(m, n)
    if mode == "complete":
        return meta_empty(batch + (m, m), A.dtype), meta_empty(batch + (m, n), A.dtype)
    q = meta_empty((0,), A.dtype) if mode == "r" else meta_empty(batch + (m, k), A.dtype)
    return q, meta_empty(batch + (k, n), A.dtype)


def cholesky_meta(A, upper):
    """Cholesky factor of Hermitian positive-definite ``A``: L with ``A = L Lᴴ`` (or U = Lᴴ if ``upper``).

    Only the lower triangle of ``A`` is read. ValueError (from the kernel) if ``A`` is not
    positive definite.
    """
    batch, n, _ = _matrix("prims::cholesky", "A", A, square=True)
    return meta_empty(batch + (n, n), A.dtype)


def _solve_shapes(op: str, A, B, left) -> None:
    _, n, _ = _matrix(op, "A", A, square=True)
    _matrix(op, "B", B)
    _same(op, ("A", "B"), (A, B))
    _same_batch(op, "A", A, "B", B)
    size = B.shape[-2] if left else B.shape[-1]
    if size != n:
        side = "rows" if left else "columns"
        raise ValueError(f"{op}: 'B' {list(B.shape)} must have {n} {side} to match 'A' {list(A.shape)}")


def solve_meta(A, B, left):
    """Solve ``A X = B`` (``left``) or ``X A = B`` for X; A (*, n, n), B (*, n, k) or (*, k, n).

    ValueError (from the kernel) if ``A`` is singular.
    """
    _solve_shapes("prims::solve", A, B, left)
    return meta_empty(B.shape, B.dtype)


def eigh_meta(A, UPLO):
    """Eigen-decomposition of Hermitian ``A`` using its lower ("L") or upper ("U") triangle.

    Returns real eigenvalues (*, n) in ascending order and eigenvectors (*, n, n) as columns.
    """
    op = "prims::eigh"
    batch, n, _ = _matrix(op, "A", A, square=True)
    _check_flag(op, "UPLO", UPLO, ("L", "U"))
    return meta_empty(batch + (n,), A.dtype.to_real()), meta_empty(batch + (n, n), A.dtype)


def eig_meta(A):
    """Eigen-decomposition of a general square ``A``: complex eigenvalues (*, n) and eigenvectors (*, n, n)."""
    batch, n, _ = _matrix("prims::eig", "A", A, square=True)
    c = A.dtype.to_complex()
    return meta_empty(batch + (n,), c), meta_empty(batch + (n, n), c)


def lu_meta(A, pivot):
    """LU decomposition ``A = P L U``: P (*, m, m) permutation, L (*, m, k) unit lower, U (*, k, n).

    ``k = min(m, n)``. With ``pivot=False``, P is the identity (the CPU kernel eliminates
    without pivoting and raises ValueError on a zero pivot).
    """
    batch, m, n = _matrix("prims::lu", "A", A)
    k = min(m, n)
    return (
        meta_empty(batch + (m, m), A.dtype),
        meta_empty(batch + (m, k), A.dtype),
        meta_empty(batch + (k, n), A.dtype),
    )


def lu_factor_meta(A, pivot):
    """Compact LU factorisation (LAPACK getrf): LU (*, m, n) holds L (unit diagonal omitted) and U.

    ``pivots`` (*, k) int32, 1-based: row i was interchanged with row ``pivots[i]`` (LAPACK
    and torch convention). With ``pivot=False`` pivots are ``1..k``.
    """
    batch, m, n = _matrix("prims::lu_factor", "A", A)
    return meta_empty(batch + (m, n), A.dtype), meta_empty(batch + (min(m, n),), _dtype.int32)


def triangular_solve_meta(B, A, upper, left, unitriangular):
    """Solve ``A X = B`` (``left``) or ``X A = B`` with A triangular (only its ``upper``/lower triangle is read).

    ``unitriangular`` assumes a unit diagonal (the diagonal of A is not read). ValueError
    (from the kernel) if A has a zero on the diagonal.
    """
    _solve_shapes("prims::triangular_solve", A, B, left)
    return meta_empty(B.shape, B.dtype)


def inverse_meta(A):
    """Inverse of square ``A``; ValueError (from the kernel) if ``A`` is singular."""
    batch, n, _ = _matrix("prims::inverse", "A", A, square=True)
    return meta_empty(batch + (n, n), A.dtype)


def det_meta(A):
    """Determinant of square ``A``: shape (*,) and A's dtype (1 for a 0×0 matrix)."""
    batch, _, _ = _matrix("prims::det", "A", A, square=True)
    return meta_empty(batch, A.dtype)


def slogdet_meta(A):
    """Sign (A's dtype; a unit complex number for complex A; 0 if singular) and log|det A| (real; -inf if singular)."""
    batch, _, _ = _matrix("prims::slogdet", "A", A, square=True)
    return meta_empty(batch, A.dtype), meta_empty(batch, A.dtype.to_real())


def lstsq_meta(A, B, rcond):
    """Least-squares solution of ``A X = B`` (SVD-based, LAPACK gelsd): A (*, m, n), B (*, m, k).

    Returns ``solution`` (*, n, k); ``residuals`` (*, k) real, the squared norms of the
    columns of ``A X - B`` when ``m > n``, else an empty (0,) tensor (unlike torch, they are
    also given for rank-deficient A: torch's data-dependent shape is not a prim's);
    ``rank`` (*,) int64; ``singular_values`` (*, min(m, n)) real. Singular values below
    ``rcond * max(S)`` count as zero; ``rcond=None`` means ``eps(dtype) * max(m, n)``.
    ValueError (from the kernel) if an input holds nan or inf.
    """
    op = "prims::lstsq"
    batch, m, n = _matrix(op, "A", A)
    _matrix(op, "B", B)
    _same(op, ("A", "B"), (A, B))
    _same_batch(op, "A", A, "B", B)
    if B.shape[-2] != m:
        raise ValueError(f"{op}: 'B' {list(B.shape)} must have {m} rows to match 'A' {list(A.shape)}")
    k = B.shape[-1]
    real = A.dtype.to_real()
    residuals = meta_empty(batch + (k,), real) if m > n else meta_empty((0,), real)
    return (
        meta_empty(batch + (n, k), A.dtype),
        residuals,
        meta_empty(batch, _dtype.int64),
        meta_empty(batch + (min(m, n),), real),
    )


def matrix_exp_meta(A):
    """Matrix exponential of square ``A``."""
    batch, n, _ = _matrix("prims::matrix_exp", "A", A, square=True)
    return meta_empty(batch + (n, n), A.dtype)


def geqrf_meta(A):
    """LAPACK geqrf: ``a`` (*, m, n) holds R on and above the diagonal and the Householder vectors below it.

    ``tau`` (*, min(m, n)): ``Q = H_1 ... H_k`` with ``H_i = I - tau_i v_i v_iᴴ``, ``v_i`` having
    ``v_i[i] = 1``, zeros above and ``a[i+1:, i]`` below.
    """
    batch, m, n = _matrix("prims::geqrf", "A", A)
    return meta_empty(batch + (m, n), A.dtype), meta_empty(batch + (min(m, n),), A.dtype)


def householder_product_meta(A, tau):
    """The first n columns of ``H_1 ... H_k`` (LAPACK orgqr/ungqr) from geqrf-style ``A`` (*, m, n) and ``tau`` (*, k).

    Needs ``m >= n >= k``; ``tau`` has A's batch dims and dtype.
    """
    op = "prims::householder_product"
    batch, m, n = _matrix(op, "A", A)
    check_tensor(op, "tau", tau)
    check_dtype(op, "tau", tau, LINALG)
    _same(op, ("A", "tau"), (A, tau))
    if m < n:
        raise ValueError(f"{op}: 'A' {list(A.shape)} must have at least as many rows as columns")
    if tau.ndim != A.ndim - 1 or tuple(tau.shape[:-1]) != batch or tau.shape[-1] > n:
        raise ValueError(
            f"{op}: 'tau' {list(tau.shape)} must be (*, k) with k <= {n} and the batch dims of 'A' {list(A.shape)}"
        )
    return meta_empty(A.shape, A.dtype)


LINALG_PRIMS = [
    ("mm(Tensor self, Tensor mat2) -> Tensor", mm_meta),
    ("bmm(Tensor self, Tensor mat2) -> Tensor", bmm_meta),
    ("svd(Tensor A, bool full_matrices) -> (Tensor U, Tensor S, Tensor Vh)", svd_meta),
    ("qr(Tensor A, str mode) -> (Tensor Q, Tensor R)", qr_meta),
    ("cholesky(Tensor A, bool upper) -> Tensor", cholesky_meta),
    ("solve(Tensor A, Tensor B, bool left) -> Tensor", solve_meta),
    ("eigh(Tensor A, str UPLO) -> (Tensor eigenvalues, Tensor eigenvectors)", eigh_meta),
    ("eig(Tensor A) -> (Tensor eigenvalues, Tensor eigenvectors)", eig_meta),
    ("lu(Tensor A, bool pivot) -> (Tensor P, Tensor L, Tensor U)", lu_meta),
    ("lu_factor(Tensor A, bool pivot) -> (Tensor LU, Tensor pivots)", lu_factor_meta),
    (
        "triangular_solve(Tensor B, Tensor A, bool upper, bool left, bool unitriangular) -> Tensor",
        triangular_solve_meta,
    ),
    ("inverse(Tensor A) -> Tensor", inverse_meta),
    ("det(Tensor A) -> Tensor", det_meta),
    ("slogdet(Tensor A) -> (Tensor sign, Tensor logabsdet)", slogdet_meta),
    (
        "lstsq(Tensor A, Tensor B, float? rcond) -> (Tensor solution, Tensor residuals, Tensor rank, "
        "Tensor singular_values)",
        lstsq_meta,
    ),
    ("matrix_exp(Tensor A) -> Tensor", matrix_exp_meta),
    ("geqrf(Tensor A) -> (Tensor a, Tensor tau)", geqrf_meta),
    ("householder_product(Tensor A, Tensor tau) -> Tensor", householder_product_meta),
]


def _define():
    for schema, meta in LINALG_PRIMS:
        define_prim(schema, meta, tags=("linalg",))


_define()
