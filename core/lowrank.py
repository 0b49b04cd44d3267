"""``svd_lowrank`` and ``pca_lowrank``: randomized low-rank SVD and PCA (PyTorch's ``torch._lowrank``).

Algorithm 5.1 of Halko, Martinsson and Tropp (2009), as PyTorch implements it: a random
Gaussian sketch ``A R`` (``q`` columns, from opweave's generator) refined by ``niter`` power
iterations with QR re-orthonormalisation, then the exact SVD of the small projected matrix.
For a matrix of rank at most ``q`` the result is exact up to rounding; otherwise it
approximates the ``q`` leading singular triplets. Batched inputs are supported.
"""

from __future__ import annotations

from . import _dtype
from ._ops import canonical
from ._tensor import Tensor

__all__ = ["svd_lowrank", "pca_lowrank"]


def _mH(t: Tensor) -> Tensor:
    return canonical.mH(t)


def _approximate_basis(A: Tensor, q: int, niter: int, M) -> Tensor:
    dtype = A.dtype if (A.dtype.is_floating_point or A.dtype.is_complex) else _dtype.get_default_dtype()
    R = canonical.randn((A.shape[-1], q), dtype=dtype, device=A.device)
    X = canonical.matmul(A, R)
    if M is not None:
        X = canonical.sub(X, canonical.matmul(M, R))
    Q = canonical.linalg_qr(X)[0]
    for _ in range(niter):
        X = canonical.matmul(_mH(A), Q)
        if M is not None:
            X = canonical.sub(X, canonical.matmul(_mH(M), Q))
        Q = canonical.linalg_qr(X)[0]
        X = canonical.matmul(A, Q)
        if M is not None:
            X = canonical.sub(X, canonical.matmul(M, Q))
        Q = canonical.linalg_qr(X)[0]
    return Q


def svd_lowrank(A: Tensor, q: int | None = 6, niter: int = 2, M: Tensor | None = None) -> tuple[Tensor, Tensor, Tensor]:
    """``(U, S, V)`` with ``A - M ≈ U diag(S) Vᴴ``: ``q`` approximate leading singular triplets.

    ``M`` (broadcast to ``A``) is subtracted first, as in PyTorch; ``V`` (not ``Vᴴ``) is returned.
    """
    q = 6 if q is None else q
    if not isinstance(A, Tensor):
        raise TypeError(f"svd_lowrank: argument 'A' must be a Tensor, not {type(A).__name__}")
    if A.ndim < 2:
        raise ValueError(f"svd_lowrank: argument 'A' must have at least 2 dims, got {A.ndim}")
    m, n = A.shape[-2:]
    if M is not None:
        M = canonical.broadcast_to(M, tuple(A.shape))
    if m < n:
        A = _mH(A)
        if M is not None:
            M = _mH(M)
    Q = _approximate_basis(A, q, niter, M)
    B = canonical.matmul(_mH(Q), A)
    if M is not None:
        B = canonical.sub(B, canonical.matmul(_mH(Q), M))
    U, S, Vh = canonical.linalg_svd(B, full_matrices=False)
    V = _mH(Vh)
    U = canonical.matmul(Q, U)
    if m < n:
        U, V = V, U
    return U, S, V


def pca_lowrank(A: Tensor, q: int | None = None, center: bool = True, niter: int = 2) -> tuple[Tensor, Tensor, Tensor]:
    """``(U, S, V)``: principal components of ``A``'s rows (centred over dim -2 when ``center``), ``q`` of them.

    ``q`` defaults to ``min(6, m, n)``; ``S ** 2 / (m - 1)`` are the explained variances.
    """
    if not isinstance(A, Tensor):
        raise TypeError(f"pca_lowrank: argument 'A' must be a Tensor, not {type(A).__name__}")
    m, n = A.shape[-2:]
    if q is None:
        q = min(6, m, n)
    elif not (0 <= q <= min(m, n)):
        raise ValueError(f"q(={q}) must be non-negative integer and not greater than min(m, n)={min(m, n)}")
    if niter < 0:
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    if not center:
        return svd_lowrank(A, q, niter=niter)
    C = canonical.mean(A, [-2], True)
    return svd_lowrank(canonical.sub(A, C), q, niter=niter)


def install(namespace: dict) -> None:
    """Put ``svd_lowrank`` and ``pca_lowrank`` in ``namespace`` (``opweave``)."""
    namespace["svd_lowrank"] = svd_lowrank
    namespace["pca_lowrank"] = pca_lowrank
