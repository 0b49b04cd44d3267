"""The standard's ``linalg`` extension over opweave's linear algebra (``opweave.array_api.linalg``).

Differences from ``opweave.linalg``: ``matrix_rank``/``pinv`` take ``rtol``, ``matrix_norm`` and
``vector_norm`` use ``ord=``/``axis=``/``keepdims=``, ``diagonal`` and ``trace`` work on the last two axes,
``cross`` and ``vecdot`` promote by the standard's rules and do not broadcast the vector axis.
"""

from __future__ import annotations

import builtins
from typing import NamedTuple

import opweave as ow

from .._tensor import Tensor
from ._elementwise import operands
from ._linear_algebra import matmul, tensordot, vecdot
from ._manipulation import matrix_transpose
from ._reductions import axes

__all__ = [
    "cholesky",
    "cross",
    "det",
    "diagonal",
    "eigh",
    "eigvalsh",
    "inv",
    "matmul",
    "matrix_norm",
    "matrix_power",
    "matrix_rank",
    "matrix_transpose",
    "outer",
    "pinv",
    "qr",
    "slogdet",
    "solve",
    "svd",
    "svdvals",
    "tensordot",
    "trace",
    "vecdot",
    "vector_norm",
]


class EighResult(NamedTuple):
    """``eigh``'s result."""

    eigenvalues: Tensor
    eigenvectors: Tensor


class QRResult(NamedTuple):
    """``qr``'s result."""

    Q: Tensor
    R: Tensor


class SlogdetResult(NamedTuple):
    """``slogdet``'s result."""

    sign: Tensor
    logabsdet: Tensor


class SVDResult(NamedTuple):
    """``svd``'s result."""

    U: Tensor
    S: Tensor
    Vh: Tensor


def cholesky(x: Tensor, /, *, upper: builtins.bool = False) -> Tensor:
    """The lower (``upper=True``: upper) Cholesky factor of Hermitian positive-definite matrices."""
    return ow.linalg.cholesky(x, upper=upper)


def cross(x1: Tensor, x2: Tensor, /, *, axis: builtins.int = -1) -> Tensor:
    """The cross product of 3-vectors along ``axis``."""
    a, b = operands(x1, x2, "cross")
    if a.shape[axis] != 3 or b.shape[axis] != 3:
        raise ValueError("cross(): both arrays must have size 3 along axis")
    a, b = ow.broadcast_tensors(a, b)  # the standard broadcasts the other axes (and ranks); PyTorch's op does not
    return ow.linalg.cross(a, b, dim=axis)


def det(x: Tensor, /) -> Tensor:
    """The determinants of square matrices."""
    return ow.linalg.det(x)


def diagonal(x: Tensor, /, *, offset: builtins.int = 0) -> Tensor:
    """The ``offset`` diagonal of the last two axes."""
    return ow.diagonal(x, offset=offset, dim1=-2, dim2=-1)


def eigh(x: Tensor, /) -> EighResult:
    """Eigenvalues (ascending) and eigenvectors of Hermitian matrices."""
    w, v = ow.linalg.eigh(x)
    return EighResult(w, v)


def eigvalsh(x: Tensor, /) -> Tensor:
    """Eigenvalues (ascending) of Hermitian matrices."""
    return ow.linalg.eigvalsh(x)


def inv(x: Tensor, /) -> Tensor:
    """The inverses of square matrices."""
    return ow.linalg.inv(x)


def matrix_norm(x: Tensor, /, *, keepdims: builtins.bool = False, ord="fro") -> Tensor:  # noqa: A002
    """Matrix norms over the last two axes (``"fro"``, ``"nuc"``, ±1, ±2, ±inf)."""
    return ow.linalg.matrix_norm(x, ord=ord, dim=(-2, -1), keepdim=keepdims)


def matrix_power(x: Tensor, n: builtins.int, /) -> Tensor:
    """Square matrices raised to the integer power ``n`` (the inverse's power when negative)."""
    return ow.linalg.matrix_power(x, n)


def matrix_rank(x: Tensor, /, *, rtol=None) -> Tensor:
    """Rank: singular values above ``rtol`` times the largest (default ``max(M, N) * eps``)."""
    s = ow.linalg.svdvals(x)
    if rtol is None:
        eps = ow.finfo(s.dtype).eps
        tol = s.amax(dim=-1, keepdim=True) * builtins.max(x.shape[-2:]) * eps
    else:
        r = rtol if isinstance(rtol, Tensor) else ow.tensor(rtol, dtype=s.dtype, device=s.device)
        tol = s.amax(dim=-1, keepdim=True) * (r.unsqueeze(-1) if r.ndim else r)
    return ow.count_nonzero(s > tol, dim=-1)


def outer(x1: Tensor, x2: Tensor, /) -> Tensor:
    """The outer product of two vectors."""
    a, b = operands(x1, x2, "outer")
    if a.ndim != 1 or b.ndim != 1:
        raise ValueError("outer(): both arrays must be one-dimensional")
    return ow.outer(a, b)


def pinv(x: Tensor, /, *, rtol=None) -> Tensor:
    """The Moore-Penrose pseudo-inverse, dropping singular values below ``rtol`` times the largest."""
    if rtol is None:
        rtol = builtins.max(x.shape[-2:]) * ow.finfo(x.dtype.to_real() if x.dtype.is_complex else x.dtype).eps
    return ow.linalg.pinv(x, rtol=rtol)


def qr(x: Tensor, /, *, mode: str = "reduced") -> QRResult:
    """The QR factorisation (``mode`` ``"reduced"`` or ``"complete"``)."""
    q, r = ow.linalg.qr(x, mode=mode)
    return QRResult(q, r)


def slogdet(x: Tensor, /) -> SlogdetResult:
    """Sign (a unit complex number for complex input) and log of the absolute determinant."""
    sign, logabsdet = ow.linalg.slogdet(x)
    return SlogdetResult(sign, logabsdet)


def solve(x1: Tensor, x2: Tensor, /) -> Tensor:
    """``x1⁻¹ x2`` for square ``x1``; a 1-D ``x2`` is one right-hand side."""
    a, b = operands(x1, x2, "solve")
    return ow.linalg.solve(a, b)


def svd(x: Tensor, /, *, full_matrices: builtins.bool = True) -> SVDResult:
    """The singular value decomposition ``U diag(S) Vh``."""
    u, s, vh = ow.linalg.svd(x, full_matrices=full_matrices)
    return SVDResult(u, s, vh)


def svdvals(x: Tensor, /) -> Tensor:
    """The singular values, descending."""
    return ow.linalg.svdvals(x)


def trace(x: Tensor, /, *, offset: builtins.int = 0, dtype=None) -> Tensor:
    """The sum of the ``offset`` diagonal of the last two axes (integers accumulate in int64)."""
    d = ow.diagonal(x, offset=offset, dim1=-2, dim2=-1)
    if dtype is None and not (x.dtype.is_floating_point or x.dtype.is_complex):
        dtype = ow.int64
    return ow.sum(d, dim=-1, dtype=dtype or x.dtype)


def vector_norm(x: Tensor, /, *, axis=None, keepdims: builtins.bool = False, ord=2) -> Tensor:  # noqa: A002
    """The ``ord``-norm of vectors over ``axis`` (every axis when None; a tuple flattens those axes)."""
    ax = axes(axis, x.ndim, "vector_norm")
    if ax == ():
        return ow.abs(x).to(x.dtype.to_real() if x.dtype.is_complex else x.dtype)
    if x.ndim == 0:
        return ow.linalg.vector_norm(x, ord=ord)
    return ow.linalg.vector_norm(x, ord=ord, dim=list(range(x.ndim)) if ax is None else list(ax), keepdim=keepdims)
