"""Dense linear algebra on the device for float32, float64, complex64 and complex128: ``cholesky``,
``lu_factor``, ``lu``, ``triangular_solve``, ``solve``, ``inverse``, ``det``, ``slogdet``, ``geqrf``,
``householder_product``, ``qr`` (kernels of ``codegen.linalg``) and ``matrix_exp``.

One work group per matrix of the batch; batch, row and column strides are
arguments, so views are read in place and outputs are contiguous. ``X A = B``
is solved as ``Aᵀ Xᵀ = Bᵀ`` through swapped strides. The algorithms are
LAPACK's unblocked ones with LAPACK's conventions, so the results the
conformance oracle compares directly agree: partial pivoting picks the first
row of largest ``|re| + |im|`` (``i?amax``), Householder reflectors take
``beta = -sign(Re alpha) ||(alpha, x)||`` (``?larfg``), so ``Q``, ``R``, ``tau``
and the pivots are LAPACK's up to rounding. ``matrix_exp`` is scaling and
squaring of the Padé [13/13] approximant, on the ``bmm`` kernel and the LU solver.

Handed to the CPU fallback:

* the data-dependent errors, detected on the device: a matrix that is not
  positive definite (``cholesky``), a zero pivot (``solve``, ``inverse``,
  ``lu``/``lu_factor`` without pivoting), a zero on the diagonal
  (``triangular_solve``) -- the CPU kernel then raises its ValueError;
  a ``matrix_exp`` input holding nan or inf;
* batches whose dims do not merge into ``MAX_RANK`` dims.

``eigh`` and ``svd`` have no kernels: the conformance oracle compares eigen- and
singular vectors with LAPACK's signs, which a Jacobi method does not reproduce
(it would need LAPACK's tridiagonal/bidiagonal QR itself). ``eig`` (nonsymmetric)
and ``lstsq`` also stay on the CPU, as on PyTorch's MPS backend.
"""

from __future__ import annotations

import math

import numpy as np
import opweave

from ..codegen import linalg as gen
from ..codegen.common import MAX_RANK, coalesce
from ._common import backend_of, buf, empty, kernel, launch, program_kernels, runtime_of

P = opweave.ops.prims

_DTYPES = {"float32", "float64", "complex64", "complex128"}

_ARGS = np.dtype(
    [(f, np.int64, (MAX_RANK,)) for f in ("bshape", "ast", "bst")]
    + [(f, np.int64) for f in ("aoff", "ars", "acs", "boff", "brs", "bcs", "m", "n", "k", "xrs", "xcs", "batch")]
    + [(f, np.int32) for f in ("bndim", "upper", "unit", "pivot", "mode", "pad")],
    align=True,
)


def _kernels(a) -> dict:
    rt = runtime_of(a)
    d, fp64 = a.dtype.name, rt.has_fp64
    return program_kernels(rt, ("linalg", d, fp64), lambda: gen.program(rt.dialect, d, fp64))


def _args(a, b=None, transpose_a: bool = False, transpose_b: bool = False, **fields):
    """The ``la_args_t`` bytes for matrices ``a`` (and ``b``) of one batch; None if the batch is too deep."""
    batch = list(a.shape[:-2])
    ast = list(a.stride()[:-2])
    bst = list(b.stride()[:-2]) if b is not None else [0] * len(batch)
    bshape, (ast, bst) = coalesce(batch, [ast, bst])
    if len(bshape) > MAX_RANK:
        return None
    p = np.zeros((), _ARGS)
    p["bshape"][: len(bshape)] = bshape
    p["ast"][: len(ast)] = ast
    p["bst"][: len(bst)] = bst
    p["bndim"] = len(bshape)
    p["batch"] = math.prod(batch)
    p["aoff"] = a.storage_offset()
    rs, cs = a.stride()[-2:]
    p["ars"], p["acs"] = (cs, rs) if transpose_a else (rs, cs)
    if b is not None:
        p["boff"] = b.storage_offset()
        rs, cs = b.stride()[-2:]
        p["brs"], p["bcs"] = (cs, rs) if transpose_b else (rs, cs)
    for name, value in fields.items():
        p[name] = value
    return p.tobytes()


def _failed(info) -> bool:
    """Whether any matrix recorded a failure in ``info``."""
    return bool(info.numel()) and bool(np.any(backend_of(info.device).copy_to_host(info)))


def _batch(a) -> int:
    return math.prod(a.shape[:-2])


def _factor(a, pivot: bool = True, transpose: bool = False):
    """Compact LU of ``a`` (or ``aᵀ``): ``(lu, piv, info)``, flat workspaces; None if the batch is too deep."""
    m, n = a.shape[-2:]
    if transpose:
        m, n = n, m
    nb = _batch(a)
    p = _args(a, transpose_a=transpose, m=m, n=n, pivot=int(pivot))
    if p is None:
        return None
    lu = empty((nb * m * n,), a.dtype, a.device)
    piv = empty((nb * min(m, n),), opweave.int32, a.device)
    info = empty((nb,), opweave.int32, a.device)
    launch(runtime_of(a), _kernels(a)["lu"], nb * gen.LOCAL, buf(lu), buf(piv), buf(info), buf(a), p, local=gen.LOCAL)
    return lu, piv, info


def _supported(*tensors) -> bool:
    return all(t.dtype.name in _DTYPES for t in tensors)


@kernel("cholesky")
def cholesky(A, upper):
    """Lower Cholesky factor of ``A`` (its lower triangle), or its transpose when ``upper``."""
    if not _supported(A):
        return NotImplemented
    n = A.shape[-1]
    out = empty(A.shape, A.dtype, A.device)
    if out.numel() == 0:
        return out
    xrs, xcs = (1, n) if upper else (n, 1)
    p = _args(A, n=n, xrs=xrs, xcs=xcs, upper=int(upper))
    if p is None:
        return NotImplemented
    nb = _batch(A)
    info = empty((nb,), opweave.int32, A.device)
    launch(runtime_of(A), _kernels(A)["chol"], nb * gen.LOCAL, buf(out), buf(info), buf(A), p, local=gen.LOCAL)
    return NotImplemented if _failed(info) else out


@kernel("lu_factor")
def lu_factor(A, pivot):
    """Compact LU (``L`` below the diagonal, ``U`` on and above) and 1-based int32 pivots."""
    if not _supported(A):
        return NotImplemented
    m, n = A.shape[-2:]
    batch = tuple(A.shape[:-2])
    if A.numel() == 0:
        return empty(A.shape, A.dtype, A.device), empty(batch + (min(m, n),), opweave.int32, A.device)
    found = _factor(A, pivot)
    if found is None or (not pivot and _failed(found[2])):
        return NotImplemented
    lu, piv, _ = found
    return lu.view(A.shape), piv.view(batch + (min(m, n),))


@kernel("lu")
def lu(A, pivot):
    """``P, L, U`` with ``A = P L U`` (``P`` the identity without pivoting)."""
    if not _supported(A):
        return NotImplemented
    m, n = A.shape[-2:]
    k = min(m, n)
    batch = tuple(A.shape[:-2])
    P = empty(batch + (m, m), A.dtype, A.device)
    L = empty(batch + (m, k), A.dtype, A.device)
    U = empty(batch + (k, n), A.dtype, A.device)
    nb = _batch(A)
    if nb == 0 or m == 0:
        return P, L, U
    found = _factor(A, pivot)
    if found is None or (not pivot and _failed(found[2])):
        return NotImplemented
    lu_, piv, _ = found
    perm = empty((nb * m,), opweave.int32, A.device)
    p = _args(A, m=m, n=n)
    launch(
        runtime_of(A), _kernels(A)["lu_unpack"], nb * gen.LOCAL,
        buf(P), buf(L), buf(U), buf(perm), buf(lu_), buf(piv), p, local=gen.LOCAL,
    )  # fmt: skip
    return P, L, U


@kernel("triangular_solve")
def triangular_solve(B, A, upper, left, unitriangular):
    """``X`` with ``A X = B`` (``left``) or ``X A = B``, ``A`` triangular (only its ``upper``/lower triangle read)."""
    if not _supported(A, B):
        return NotImplemented
    out = empty(B.shape, B.dtype, B.device)
    if out.numel() == 0:
        return out
    n = A.shape[-1]
    if left:
        k = B.shape[-1]
        p = _args(A, B, n=n, k=k, xrs=k, xcs=1, upper=int(upper), unit=int(unitriangular))
    else:
        k = B.shape[-2]
        p = _args(A, B, True, True, n=n, k=k, xrs=1, xcs=n, upper=int(not upper), unit=int(unitriangular))
    if p is None:
        return NotImplemented
    nb = _batch(A)
    info = empty((nb,), opweave.int32, A.device)
    launch(runtime_of(A), _kernels(A)["trsv"], nb * gen.LOCAL, buf(out), buf(info), buf(A), buf(B), p, local=gen.LOCAL)
    return NotImplemented if _failed(info) else out


def _lu_solve(A, B, left: bool, out, identity: bool = False):
    """``out = A⁻¹ B`` (``left``) or ``B A⁻¹``; ``identity``: ``B`` is the identity. NotImplemented if singular."""
    found = _factor(A, True, transpose=not left)
    if found is None or _failed(found[2]):
        return NotImplemented
    lu_, piv, _ = found
    n = A.shape[-1]
    src = A if identity else B
    if left:
        k = src.shape[-1]
        p = _args(A, src, n=n, k=k, xrs=k, xcs=1, mode=int(identity))
    else:
        k = src.shape[-2]
        p = _args(A, src, False, True, n=n, k=k, xrs=1, xcs=n, mode=int(identity))
    nb = _batch(A)
    launch(
        runtime_of(A), _kernels(A)["lu_solve"], nb * gen.LOCAL,
        buf(out), buf(lu_), buf(piv), buf(src), p, local=gen.LOCAL,
    )  # fmt: skip
    return out


@kernel("solve")
def solve(A, B, left):
    """``X`` with ``A X = B`` (``left``) or ``X A = B`` (LU with partial pivoting, then substitution)."""
    if not _supported(A, B):
        return NotImplemented
    out = empty(B.shape, B.dtype, B.device)
    if out.numel() == 0:
        return out
    return _lu_solve(A, B, left, out)


@kernel("inverse")
def inverse(A):
    """``A⁻¹`` (LU with partial pivoting, then the identity solved column by column)."""
    if not _supported(A):
        return NotImplemented
    out = empty(A.shape, A.dtype, A.device)
    if out.numel() == 0:
        return out
    return _lu_solve(A, A, True, out, identity=True)


def _det(A, mode: int):
    """``det`` (mode 0) or ``(sign, logabsdet)`` (mode 1) from the LU factorisation."""
    batch = tuple(A.shape[:-2])
    out0 = empty(batch, A.dtype, A.device)
    out1 = empty(batch, A.dtype.to_real(), A.device) if mode else None
    nb = _batch(A)
    if nb:
        found = _factor(A, True)
        if found is None:
            return NotImplemented
        lu_, piv, _ = found
        p = _args(A, n=A.shape[-1], mode=mode)
        launch(
            runtime_of(A), _kernels(A)["lu_det"], nb,
            buf(out0), buf(out1) if mode else buf(out0), buf(lu_), buf(piv), p,
        )  # fmt: skip
    return (out0, out1) if mode else out0


@kernel("det")
def det(A):
    """Determinant: product of ``U``'s diagonal, negated once per row interchange (1 for a 0×0 matrix)."""
    if not _supported(A):
        return NotImplemented
    return _det(A, 0)


@kernel("slogdet")
def slogdet(A):
    """Sign (0 if singular) and ``log|det A|`` (``-inf`` if singular)."""
    if not _supported(A):
        return NotImplemented
    return _det(A, 1)


def _geqrf_into(A):
    """Householder QR of ``A`` into flat workspaces ``(a, tau)``; None if the batch is too deep."""
    m, n = A.shape[-2:]
    nb = _batch(A)
    p = _args(A, m=m, n=n)
    if p is None:
        return None
    qa = empty((nb * m * n,), A.dtype, A.device)
    tau = empty((nb * min(m, n),), A.dtype, A.device)
    launch(runtime_of(A), _kernels(A)["geqrf"], nb * gen.LOCAL, buf(qa), buf(tau), buf(A), p, local=gen.LOCAL)
    return qa, tau


def _orgqr(A, tau, cols: int, k: int):
    """The first ``cols`` columns of ``H_1 ... H_k`` from reflectors in ``A`` (*, m, >=k) and ``tau`` (*, >=k)."""
    m = A.shape[-2]
    out = empty(tuple(A.shape[:-2]) + (m, cols), A.dtype, A.device)
    if out.numel() == 0:
        return out
    p = _args(A, tau.unsqueeze(-1), m=m, n=cols, k=k, xrs=cols, xcs=1)
    if p is None:
        return None
    p = np.frombuffer(p, _ARGS).copy()
    p["bcs"] = tau.stride()[-1] if tau.ndim else 1
    nb = _batch(A)
    launch(
        runtime_of(A), _kernels(A)["orgqr"], nb * gen.LOCAL, buf(out), buf(A), buf(tau), p.tobytes(), local=gen.LOCAL
    )
    return out


@kernel("geqrf")
def geqrf(A):
    """LAPACK geqrf: R on and above the diagonal, the Householder vectors below it, and ``tau``."""
    if not _supported(A):
        return NotImplemented
    m, n = A.shape[-2:]
    batch = tuple(A.shape[:-2])
    if A.numel() == 0:
        return empty(A.shape, A.dtype, A.device), empty(batch + (min(m, n),), A.dtype, A.device)
    found = _geqrf_into(A)
    if found is None:
        return NotImplemented
    qa, tau = found
    return qa.view(A.shape), tau.view(batch + (min(m, n),))


@kernel("householder_product")
def householder_product(A, tau):
    """The first n columns of ``H_1 ... H_k`` (LAPACK orgqr) from geqrf-style ``A`` and ``tau``."""
    if not _supported(A, tau):
        return NotImplemented
    out = _orgqr(A, tau, A.shape[-1], tau.shape[-1])
    return NotImplemented if out is None else out


@kernel("qr")
def qr(A, mode):
    """``Q, R`` from Householder QR (``Q`` the first ``k`` or all ``m`` columns; empty for mode "r")."""
    if not _supported(A):
        return NotImplemented
    m, n = A.shape[-2:]
    k = min(m, n)
    batch = tuple(A.shape[:-2])
    rows = m if mode == "complete" else k
    if A.numel() == 0:
        found = (empty((0,), A.dtype, A.device), empty((0,), A.dtype, A.device))
    else:
        found = _geqrf_into(A)
        if found is None:
            return NotImplemented
    qa, tau = (t.view(s) for t, s in zip(found, (batch + (m, n), batch + (k,))))
    R = empty(batch + (rows, n), A.dtype, A.device)
    if R.numel():
        p = _args(qa, m=rows, n=n)
        nb = _batch(A)
        launch(runtime_of(A), _kernels(A)["triu"], nb * gen.LOCAL, buf(R), buf(qa), p, local=gen.LOCAL)
    if mode == "r":
        return empty((0,), A.dtype, A.device), R
    Q = _orgqr(qa, tau, rows, k)
    return NotImplemented if Q is None else (Q, R)


#: Padé [13/13] coefficients and the 1-norm up to which it is accurate to double precision (Higham 2005).
_PADE13 = (
    64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0, 129060195264000.0,
    10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0, 40840800.0, 960960.0, 16380.0, 182.0, 1.0,
)  # fmt: skip
_THETA13 = 5.371920351148152


def _identity(A):
    """A batch of identity matrices shaped like square ``A`` (``H_1 ... H_k`` with no reflectors)."""
    return _orgqr(A, A, A.shape[-1], 0)


@kernel("matrix_exp")
def matrix_exp(A):
    """``exp(A)``: Padé [13/13] of ``A / 2^s`` (``s`` from the largest 1-norm of the batch), squared ``s`` times.

    Products run on the ``bmm`` kernel, the Padé quotient on the LU solver (one ``s`` for the whole
    batch); a batch holding nan or inf goes to the CPU kernel.
    """
    if not _supported(A):
        return NotImplemented
    if A.numel() == 0:
        return empty(A.shape, A.dtype, A.device)
    n = A.shape[-1]
    batch = tuple(A.shape[:-2])
    a = A.reshape((-1, n, n))
    norm = float(P.amax(P.sum(P.abs(a), [1]), [0, 1]).numpy(force=True))
    if not math.isfinite(norm):
        return NotImplemented
    s = max(0, math.ceil(math.log2(norm / _THETA13))) if norm > 0 else 0
    if s:
        a = a * (0.5**s)
    b = _PADE13
    eye = _identity(a)
    a2 = P.bmm(a, a)
    a4 = P.bmm(a2, a2)
    a6 = P.bmm(a4, a2)
    u = P.bmm(a6, a6 * b[13] + a4 * b[11] + a2 * b[9]) + a6 * b[7] + a4 * b[5] + a2 * b[3] + eye * b[1]
    u = P.bmm(a, u)
    v = P.bmm(a6, a6 * b[12] + a4 * b[10] + a2 * b[8]) + a6 * b[6] + a4 * b[4] + a2 * b[2] + eye * b[0]
    r = empty(v.shape, A.dtype, A.device)
    if _lu_solve(v - u, v + u, True, r) is NotImplemented:
        return NotImplemented
    for _ in range(s):
        r = P.bmm(r, r)
    return r.reshape(batch + (n, n))
