"""The LDLᵀ (Bunch-Kaufman) factorisation: ``linalg_ldl_factor``, ``linalg_ldl_factor_ex``, ``linalg_ldl_solve``.

``P A Pᵀ = L D Lᵀ`` (``L D Lᴴ`` with ``hermitian=True``) for symmetric (Hermitian) matrices, with
LAPACK's ``sytf2``/``hetf2`` pivoting on the lower triangle, so the results are PyTorch's: ``LD``
holds the unit lower-triangular ``L`` below the diagonal and the 1×1 and 2×2 blocks of ``D`` on the
diagonal and first sub-diagonal (the upper triangle is zero); ``pivots`` (int32) are LAPACK's,
1-based: ``pivots[k] = p > 0`` swapped rows and columns ``k`` and ``p - 1`` for a 1×1 block,
``pivots[k] = pivots[k + 1] = -p`` swapped ``k + 1`` and ``p - 1`` for a 2×2 block. ``info`` is 1 +
the first exactly zero diagonal block, or 0.

The pivot choices depend on the values, so the factorisation and the solve run per matrix on the
host (NumPy, in float64/complex128 or the input's precision) and their results are copied to the
input's device; meta tensors raise ``NotImplementedError``.
"""

from __future__ import annotations

import math

import numpy as np

from .. import _dtype
from .._factories import tensor
from .._ops import canonical as ops
from ._utils import broadcast_shapes, define_with_variants

_LINALG = (_dtype.float32, _dtype.float64, _dtype.complex64, _dtype.complex128)
_ALPHA = (1.0 + math.sqrt(17.0)) / 8.0


def _cabs1(z):
    return np.abs(z.real) + np.abs(z.imag) if np.iscomplexobj(z) else np.abs(z)


def _first_max(values) -> int:
    """LAPACK's ``i?amax``: the first index of the largest value (NaN ranks above everything, as the first)."""
    nan = np.flatnonzero(np.isnan(values))
    return int(nan[0]) if nan.size else int(np.argmax(values))


def _swap(a, i, j) -> None:
    a[[i, j]] = a[[j, i]]


def factor_one(a: np.ndarray, hermitian: bool) -> tuple[np.ndarray, np.ndarray, int]:
    """``sytf2``/``hetf2`` (lower) on one square matrix: ``(LD, pivots, info)``; ``a`` is overwritten."""
    n = a.shape[0]
    herm = hermitian and np.iscomplexobj(a)
    conj = np.conj if herm else (lambda z: z)
    piv = np.zeros(n, dtype=np.int32)
    info = 0
    if herm:
        a[np.diag_indices(n)] = a.diagonal().real
    k = 0
    while k < n:
        kstep = 1
        absakk = abs(a[k, k].real) if herm else _cabs1(a[k, k])
        if k < n - 1:
            imax = k + 1 + _first_max(_cabs1(a[k + 1 :, k]))
            colmax = _cabs1(a[imax, k])
        else:
            imax, colmax = k, 0.0
        if max(absakk, colmax) == 0 or np.isnan(absakk):
            info = info or k + 1
            kp = k
            if herm:
                a[k, k] = a[k, k].real
        else:
            if absakk >= _ALPHA * colmax:
                kp = k
            else:
                row = _cabs1(a[imax, k:imax])
                rowmax = row.max() if row.size else 0.0
                if imax < n - 1:
                    rowmax = max(rowmax, _cabs1(a[imax + 1 :, imax]).max())
                akk_imax = abs(a[imax, imax].real) if herm else _cabs1(a[imax, imax])
                if absakk >= _ALPHA * colmax * (colmax / rowmax):
                    kp = k
                elif akk_imax >= _ALPHA * rowmax:
                    kp = imax
                else:
                    kp, kstep = imax, 2
            kk = k + kstep - 1
            if kp != kk:
                if kp < n - 1:
                    a[kp + 1 :, [kk, kp]] = a[kp + 1 :, [kp, kk]]
                between = slice(kk + 1, kp)
                col, row = a[between, kk].copy(), a[kp, between].copy()
                a[between, kk], a[kp, between] = conj(row), conj(col)
                if herm:
                    a[kp, kk] = np.conj(a[kp, kk])
                a[kk, kk], a[kp, kp] = a[kp, kp], a[kk, kk]
                if kstep == 2:
                    a[k + 1, k], a[kp, k] = a[kp, k], a[k + 1, k]
            if kstep == 1:
                if k < n - 1:
                    x = a[k + 1 :, k].copy()
                    d11 = 1.0 / (a[k, k].real if herm else a[k, k])
                    trailing = a[k + 1 :, k + 1 :]
                    trailing -= d11 * np.outer(x, conj(x))
                    a[k + 1 :, k] = d11 * x
                    if herm:
                        a[np.diag_indices(n)] = a.diagonal().real
            elif k < n - 2:
                if herm:
                    d = abs(a[k + 1, k])
                    d11 = a[k + 1, k + 1].real / d
                    d22 = a[k, k].real / d
                    tt = 1.0 / (d11 * d22 - 1.0)
                    d21 = a[k + 1, k] / d
                    d = tt / d
                    wk = d * (d11 * a[k + 2 :, k] - d21 * a[k + 2 :, k + 1])
                    wkp1 = d * (d22 * a[k + 2 :, k + 1] - np.conj(d21) * a[k + 2 :, k])
                else:
                    d21 = a[k + 1, k]
                    d11 = a[k + 1, k + 1] / d21
                    d22 = a[k, k] / d21
                    t = 1.0 / (d11 * d22 - 1.0)
                    d21 = t / d21
                    wk = d21 * (d11 * a[k + 2 :, k] - a[k + 2 :, k + 1])
                    wkp1 = d21 * (d22 * a[k + 2 :, k + 1] - a[k + 2 :, k])
                trailing = a[k + 2 :, k + 2 :]
                trailing -= np.outer(a[k + 2 :, k], conj(wk)) + np.outer(a[k + 2 :, k + 1], conj(wkp1))
                a[k + 2 :, k], a[k + 2 :, k + 1] = wk, wkp1
                if herm:
                    a[np.diag_indices(n)] = a.diagonal().real
        if kstep == 1:
            piv[k] = kp + 1
        else:
            piv[k] = piv[k + 1] = -(kp + 1)
        k += kstep
    return np.tril(a), piv, info


def solve_one(ld: np.ndarray, piv: np.ndarray, b: np.ndarray, hermitian: bool) -> np.ndarray:
    """``sytrs``/``hetrs`` (lower): the solution of ``A X = B`` from ``A``'s factors; ``b`` is overwritten."""
    n = ld.shape[0]
    herm = hermitian and np.iscomplexobj(ld)
    conj = np.conj if herm else (lambda z: z)
    k = 0
    while k < n:  # L D Y = P B
        if piv[k] > 0:
            kp = piv[k] - 1
            if kp != k:
                _swap(b, k, kp)
            b[k + 1 :] -= np.outer(ld[k + 1 :, k], b[k])
            b[k] /= ld[k, k].real if herm else ld[k, k]
            k += 1
        else:
            kp = -piv[k] - 1
            if kp != k + 1:
                _swap(b, k + 1, kp)
            b[k + 2 :] -= np.outer(ld[k + 2 :, k], b[k]) + np.outer(ld[k + 2 :, k + 1], b[k + 1])
            akm1k = ld[k + 1, k]
            akm1 = ld[k, k] / conj(akm1k)
            ak = ld[k + 1, k + 1] / akm1k
            denom = akm1 * ak - 1.0
            bkm1 = b[k] / conj(akm1k)
            bk = b[k + 1] / akm1k
            b[k] = (ak * bkm1 - bk) / denom
            b[k + 1] = (akm1 * bk - bkm1) / denom
            k += 2
    k = n - 1
    while k >= 0:  # Lᵀ (Lᴴ) X = Y, then undo the interchanges
        if piv[k] > 0:
            b[k] -= conj(ld[k + 1 :, k]) @ b[k + 1 :]
            kp = piv[k] - 1
            if kp != k:
                _swap(b, k, kp)
            k -= 1
        else:
            b[k] -= conj(ld[k + 1 :, k]) @ b[k + 1 :]
            b[k - 1] -= conj(ld[k + 1 :, k - 1]) @ b[k + 1 :]
            kp = -piv[k] - 1
            if kp != k:
                _swap(b, k, kp)
            k -= 2
    return b


def _host(op: str, t) -> np.ndarray:
    if t.device.type == "meta":
        raise NotImplementedError(f"{op}: the pivoting depends on the values, which a meta tensor does not hold")
    return np.array(t.numpy(force=True), copy=True)  # any device: the pivoting runs on the host


def _check_square(op: str, name: str, t) -> None:
    if t.dtype not in _LINALG:
        raise TypeError(f"{op}: expected a float or complex tensor for argument '{name}', got {t.dtype.name}")
    if t.ndim < 2 or t.shape[-1] != t.shape[-2]:
        raise ValueError(f"{op}: '{name}' must be batches of square matrices, got shape {list(t.shape)}")


def linalg_ldl_factor_ex(self, hermitian=False, check_errors=False):
    """``(LD, pivots, info)`` of symmetric (Hermitian) matrices; ``check_errors`` raises for ``info > 0``."""
    op = "linalg_ldl_factor_ex"
    _check_square(op, "self", self)
    a = _host(op, self)
    n = a.shape[-1]
    batch = a.shape[:-2]
    flat = a.reshape((math.prod(batch), n, n))
    ld = np.zeros_like(flat)
    piv = np.zeros((flat.shape[0], n), dtype=np.int32)
    info = np.zeros(flat.shape[0], dtype=np.int32)
    for i in range(flat.shape[0]):
        ld[i], piv[i], info[i] = factor_one(flat[i], hermitian)
    if check_errors and info.any():
        raise ValueError(f"{op}: the factorization could not be completed: D has a zero diagonal block")
    dev = self.device
    return (
        tensor(ld.reshape(a.shape), dtype=self.dtype, device=dev),
        tensor(piv.reshape(batch + (n,)), dtype=_dtype.int32, device=dev),
        tensor(info.reshape(batch), dtype=_dtype.int32, device=dev),
    )


def linalg_ldl_factor(self, hermitian=False):
    """``(LD, pivots)`` of symmetric (Hermitian) matrices; ValueError when ``D`` is singular (as PyTorch)."""
    ld, piv, info = linalg_ldl_factor_ex(self, hermitian)
    if info.numel() and bool(ops.any(ops.gt(info, 0))):
        raise ValueError("linalg_ldl_factor: the factorization could not be completed because the input is singular")
    return ld, piv


def linalg_ldl_solve(LD, pivots, B, hermitian=False):  # noqa: N803 - ATen's argument names
    """The solution ``X`` of ``A X = B`` from ``linalg_ldl_factor``'s ``(LD, pivots)``; batches broadcast."""
    op = "linalg_ldl_solve"
    _check_square(op, "LD", LD)
    if B.dtype != LD.dtype:
        raise TypeError(f"{op}: 'B' ({B.dtype.name}) must have the dtype of 'LD' ({LD.dtype.name})")
    if pivots.dtype != _dtype.int32:
        raise TypeError(f"{op}: expected an int32 tensor for argument 'pivots', got {pivots.dtype.name}")
    n = LD.shape[-1]
    if tuple(pivots.shape) != tuple(LD.shape[:-1]):
        raise ValueError(f"{op}: 'pivots' {list(pivots.shape)} must have shape {list(LD.shape[:-1])}")
    if B.ndim < 2 or B.shape[-2] != n:
        raise ValueError(f"{op}: 'B' {list(B.shape)} must have {n} rows to match 'LD' {list(LD.shape)}")
    batch = tuple(broadcast_shapes(op, tuple(LD.shape[:-2]), tuple(B.shape[:-2])))
    count = math.prod(batch)
    ld = np.broadcast_to(_host(op, LD), batch + (n, n)).reshape(count, n, n)
    piv = np.broadcast_to(_host(op, pivots), batch + (n,)).reshape(count, n)
    b = np.array(np.broadcast_to(_host(op, B), batch + tuple(B.shape[-2:]))).reshape((count, *B.shape[-2:]))
    for i in range(b.shape[0]):
        if n and ((piv[i] == 0) | (np.abs(piv[i]) > n)).any():
            raise ValueError(f"{op}: 'pivots' must be LAPACK's 1-based pivots in [-{n}, -1] or [1, {n}]")
        solve_one(ld[i], piv[i], b[i], hermitian)
    return tensor(b.reshape(batch + tuple(B.shape[-2:])), dtype=B.dtype, device=B.device)


_TAGS = ("data_dependent_output",)
define_with_variants(
    "linalg_ldl_factor_ex(Tensor self, *, bool hermitian=False, bool check_errors=False) -> "
    "(Tensor LD, Tensor pivots, Tensor info)",
    linalg_ldl_factor_ex,
    tags=_TAGS,
    inplace=False,
    out=True,
)
define_with_variants(
    "linalg_ldl_factor(Tensor self, *, bool hermitian=False) -> (Tensor LD, Tensor pivots)",
    linalg_ldl_factor,
    tags=_TAGS,
    inplace=False,
    out=True,
)
define_with_variants(
    "linalg_ldl_solve(Tensor LD, Tensor pivots, Tensor B, *, bool hermitian=False) -> Tensor",
    linalg_ldl_solve,
    tags=_TAGS,
    inplace=False,
    out=True,
)
