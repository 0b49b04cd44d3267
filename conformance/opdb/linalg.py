"""Op database entries: linalg ops (``torch.linalg``, the torch-namespace solvers and products, einsum...).

Samples are well-conditioned matrices (a random part plus a multiple of the identity), Hermitian
positive-definite matrices, triangular matrices and low-rank products, in the four LAPACK dtypes
(float32, float64, complex64, complex128; products also int64), with transposed and strided
layouts and broadcast batch dims. Oracles are NumPy/SciPy (``numpy.linalg``, ``scipy.linalg``,
``scipy.integrate``) or formulas. Factorisations whose outputs are defined only up to signs or
phases (QR, SVD, eig, eigh, geqrf, LU) are compared with NumPy/SciPy's LAPACK results computed in
the op's own precision (``upcast=False``): the same algorithm fixes the same signs.
"""

from __future__ import annotations

import math

import numpy as np
import opweave as ow
import scipy.integrate as sint
import scipy.linalg as sla

from . import register
from ._core import COMPLEX, ErrorInput, OpInfo, SampleInput, arr
from ._core import Arr as A_

LAPACK = (ow.float32, ow.float64) + COMPLEX
PRODUCT = LAPACK + (ow.int64,)
TOL = {"float32": (2e-4, 2e-4), "complex64": (2e-4, 2e-4), "float64": (1e-7, 1e-7), "complex128": (1e-7, 1e-7)}
LOOSE = {"float32": (2e-3, 2e-3), "complex64": (2e-3, 2e-3), "float64": (1e-6, 1e-6), "complex128": (1e-6, 1e-6)}
C, T, S = "contiguous", "transposed", "strided"


# -- values ----------------------------------------------------------------------------------------------


def _np_dtype(dtype):
    return dtype.numpy


def _rand(rng, shape, dtype):
    v = rng.uniform(-1, 1, shape)
    if dtype.is_complex:
        v = v + 1j * rng.uniform(-1, 1, shape)
    if not (dtype.is_floating_point or dtype.is_complex):
        v = rng.integers(-3, 4, shape)
    return np.asarray(v).astype(_np_dtype(dtype))


def _mH(a):
    return np.conj(np.swapaxes(a, -1, -2))


def _wellcond(rng, shape, dtype):
    """A random square batch plus ``n`` times the identity (well conditioned, det far from 0)."""
    a = _rand(rng, shape, dtype)
    n = shape[-1]
    return (a + n * np.eye(n)).astype(_np_dtype(dtype))


def _spd(rng, shape, dtype):
    a = _rand(rng, shape, dtype)
    n = shape[-1]
    return (a @ _mH(a) + n * np.eye(n)).astype(_np_dtype(dtype))


def _lowrank(rng, shape, dtype, rank):
    m, n = shape[-2:]
    a = _rand(rng, tuple(shape[:-2]) + (m, rank), dtype)
    b = _rand(rng, tuple(shape[:-2]) + (rank, n), dtype)
    return (a @ b).astype(_np_dtype(dtype))


def M(value, dtype, layout=C):
    """An :class:`Arr` from ready values."""
    return A_(value, dtype, layout)


# -- generic sample generators --------------------------------------------------------------------------


def samples(*builders):
    """A generator yielding one sample per builder ``fn(rng, dtype) -> SampleInput``."""

    def gen(rng, dtype, device):
        for build in builders:
            sample = build(rng, dtype)
            if sample is not None:
                yield sample

    return gen


def one(kind, shape, layout=C, *extra_args, **kwargs):
    """A builder of a sample whose first argument is a matrix of ``kind`` (gen, well, spd, tri_u, tri_l)."""

    def build(rng, dtype):
        x = _make(kind, rng, shape, dtype)
        return SampleInput((M(x, dtype, layout),) + extra_args, dict(kwargs), f"{kind} {list(shape)} {layout}")

    return build


def _make(kind, rng, shape, dtype):
    if kind == "gen":
        return _rand(rng, shape, dtype)
    if kind == "well":
        return _wellcond(rng, shape, dtype)
    if kind == "spd":
        return _spd(rng, shape, dtype)
    if kind == "tri_u":
        return np.triu(_wellcond(rng, shape, dtype))
    if kind == "tri_l":
        return np.tril(_wellcond(rng, shape, dtype))
    if kind.startswith("rank"):
        return _lowrank(rng, shape, dtype, int(kind[4:]))
    raise ValueError(kind)


def _batched(fn, *arrays, out_batch=None):
    """Apply ``fn`` to each matrix of the (same) batch of ``arrays``; stacks each output."""
    batch = arrays[0].shape[:-2]
    if not batch:
        return fn(*arrays)
    results = [fn(*(a[idx] for a in arrays)) for idx in np.ndindex(*batch)]
    if isinstance(results[0], tuple):
        return tuple(np.stack(r).reshape(batch + np.shape(r[0])) for r in zip(*results))
    return np.stack(results).reshape(batch + np.shape(results[0]))


def _broadcast_mats(a, b):
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    return np.broadcast_to(a, batch + a.shape[-2:]), np.broadcast_to(b, batch + b.shape[-2:])


def _info(batch):
    return np.zeros(batch, np.int32)


def _err_square(name_args=()):
    def gen(rng, dtype):
        yield ErrorInput(SampleInput((M(_rand(rng, (2, 3), dtype), dtype),) + name_args), ValueError)
        yield ErrorInput(SampleInput((M(np.arange(9).reshape(3, 3), ow.int64),) + name_args), TypeError)

    return gen


def info(name, gen, oracle, dtypes=LAPACK, tol=TOL, errors=None, upcast=True, view=False):
    """One OpInfo."""
    return OpInfo(
        name=name,
        sample_inputs=gen,
        oracle=oracle,
        dtypes=tuple(dtypes),
        tolerances=dict(tol),
        error_inputs=errors,
        upcast=upcast,
        returns_view=view,
    )


SQUARE = (
    one("well", (3, 3)),
    one("well", (2, 4, 4), T),
    one("well", (1, 1)),
    one("well", (0, 0)),
    one("well", (3, 2, 2), S),
    one("well", (2, 0, 3, 3)),
)
SQUARE_NONEMPTY = SQUARE[:3] + SQUARE[4:5]
SPD = (one("spd", (3, 3)), one("spd", (2, 4, 4), T), one("spd", (1, 1)), one("spd", (3, 2, 2), S))
RECT = (
    one("gen", (3, 3)),
    one("gen", (4, 2), T),
    one("gen", (2, 3, 5)),
    one("gen", (2, 5, 3), S),
    one("gen", (1, 1)),
)


# -- determinants, inverses --------------------------------------------------------------------------


def _slogdet(a):
    sign, logabs = np.linalg.slogdet(a)
    return sign, logabs


def _logdet(a):
    sign, logabs = np.linalg.slogdet(a)
    if np.iscomplexobj(a):
        return np.log(sign) + logabs
    return np.where(sign < 0, np.nan, logabs)


def _logdet_samples():
    def negative(rng, dtype):
        a = _wellcond(rng, (3, 3), dtype)
        a[0] = -a[0]
        return SampleInput((M(a, dtype),), {}, "negative determinant")

    def singular(rng, dtype):
        a = _rand(rng, (3, 3), dtype)
        a[2] = a[1]
        return SampleInput((M(a, dtype),), {}, "singular")

    return samples(*SPD[:2], negative, *SPD[2:], singular)


def _singular_sample(extra=()):
    def build(rng, dtype):
        a = _wellcond(rng, (2, 3, 3), dtype)
        a[1, 2] = 0
        a[1, :, 2] = 0
        return SampleInput((M(a, dtype),) + extra, {}, "batch with a singular matrix")

    return build


def _inv_ex(a, check_errors=False):
    batch = a.shape[:-2]
    out, infos = np.empty_like(a), np.zeros(batch, np.int32)
    for idx in np.ndindex(*batch):
        lu, piv = sla.lu_factor(a[idx], check_finite=False) if a[idx].size else (a[idx], None)
        zero = np.flatnonzero(np.diag(lu) == 0) if a[idx].size else []
        if len(zero):
            infos[idx] = zero[0] + 1
            out[idx] = np.nan
        else:
            out[idx] = np.linalg.inv(a[idx])
    return out, infos


# -- solvers ---------------------------------------------------------------------------------------------


def _solve_vector(a, b):
    return b.ndim == 1 or (b.ndim == a.ndim - 1 and b.shape == a.shape[:-1])


def _solve(a, b, left=True):
    if _solve_vector(a, b) and left:
        a, b = _broadcast_mats(a, b[..., None])
        return np.linalg.solve(a, b)[..., 0]
    a, b = _broadcast_mats(a, b)
    if left:
        return np.linalg.solve(a, b)
    return np.swapaxes(np.linalg.solve(np.swapaxes(a, -1, -2), np.swapaxes(b, -1, -2)), -1, -2)


def _solve_samples():
    def pair(shape_a, shape_b, layout_a=C, layout_b=C, left=None, kind="well"):
        def build(rng, dtype):
            a = _make(kind, rng, shape_a, dtype)
            b = _rand(rng, shape_b, dtype)
            kwargs = {} if left is None else {"left": left}
            return SampleInput((M(a, dtype, layout_a), M(b, dtype, layout_b)), kwargs, f"A {shape_a}, B {shape_b}")

        return build

    return samples(
        pair((3, 3), (3, 2)),
        pair((2, 4, 4), (2, 4, 3), T, S),
        pair((3, 3), (3,)),
        pair((2, 3, 3), (2, 3)),
        pair((2, 3, 3), (2, 2, 3), left=False),
        pair((3, 3), (4, 3, 1)),
        pair((0, 0), (0, 2)),
    )


def _solve_errors(rng, dtype):
    a, b = _wellcond(rng, (3, 3), dtype), _rand(rng, (4, 2), dtype)
    yield ErrorInput(SampleInput((M(a, dtype), M(b, dtype))), ValueError)
    other = ow.float64 if dtype is not ow.float64 else ow.float32
    yield ErrorInput(SampleInput((M(a, dtype), M(_rand(rng, (3, 2), other), other))), TypeError)


def _lstsq_samples():
    def build(shape_a, k, driver, layout=C, rcond=None, vector=False):
        def make(rng, dtype):
            a = _wellcond(rng, shape_a[:-2] + (shape_a[-1], shape_a[-1]), dtype)
            extra = _rand(rng, shape_a[:-2] + (shape_a[-2] - shape_a[-1], shape_a[-1]), dtype)
            a = np.concatenate([a, extra], -2)
            b = _rand(rng, shape_a[:-1] if vector else shape_a[:-1] + (k,), dtype)
            kwargs = {} if driver is None else {"driver": driver}
            args = (M(a, dtype, layout), M(b, dtype)) + (() if rcond is None else (rcond,))
            return SampleInput(args, kwargs, f"A {shape_a}, driver {driver}")

        return make

    return samples(
        build((5, 3), 2, None),
        build((5, 3), 2, "gelsd", T),
        build((2, 4, 2), 3, "gels"),
        build((3, 3), 1, "gelss", rcond=1e-6),
        build((4, 4), 2, "gelsd", vector=True),
        build((2, 6, 3), 1, "gelsy", S),
    )


def _lstsq(a, b, rcond=None, driver=None):
    driver = driver or "gelsy"
    vector = b.ndim == a.ndim - 1
    if vector:
        b = b[..., None]
    a, b = _broadcast_mats(a, b)
    m, n = a.shape[-2:]
    solution = _batched(lambda x, y: np.linalg.lstsq(x, y, rcond=None)[0], a, b)
    res = np.sum(np.abs(a @ solution - b) ** 2, axis=-2)
    sv = np.linalg.svd(a, compute_uv=False)
    rank = np.sum(sv > (rcond if rcond is not None else np.finfo(np.float32).eps * max(m, n)) * sv[..., :1], -1)
    empty = np.empty(0)
    residuals = res if (m > n and driver != "gelsy") else empty
    if vector:
        solution = solution[..., 0]
        residuals = residuals[..., 0] if residuals.size else residuals
    rank_out = np.empty(0, np.int64) if driver == "gels" else rank.astype(np.int64)
    sv_out = sv if driver in ("gelsd", "gelss") else empty
    return solution, residuals, rank_out, sv_out


def _tri(a, upper, unit):
    t = (np.triu(a) if upper else np.tril(a)).copy()
    if unit:
        idx = np.arange(a.shape[-1])
        t[..., idx, idx] = 1
    return t


def _solve_triangular(a, b, upper, left=True, unitriangular=False):
    t = _tri(a, upper, unitriangular)
    return _solve(t, b, left)


def _solve_tri_samples():
    def build(shape_a, shape_b, upper, left=True, unit=False, la=C, lb=C):
        def make(rng, dtype):
            a = _wellcond(rng, shape_a, dtype)  # both triangles hold values: only one may be read
            b = _rand(rng, shape_b, dtype)
            kwargs = {"upper": upper, "left": left, "unitriangular": unit}
            return SampleInput((M(a, dtype, la), M(b, dtype, lb)), kwargs, f"upper={upper} left={left} unit={unit}")

        return make

    return samples(
        build((3, 3), (3, 2), True),
        build((2, 4, 4), (2, 4, 3), False, la=T),
        build((3, 3), (2, 3), True, left=False, unit=True),
        build((3, 3), (2, 3, 3), False, unit=True, lb=S),
        build((2, 2, 2), (2, 2, 1), True, left=True),
    )


def _triangular_solve_samples():
    def build(shape_a, shape_b, upper=None, transpose=None, unit=None, la=C):
        def make(rng, dtype):
            a, b = _wellcond(rng, shape_a, dtype), _rand(rng, shape_b, dtype)
            args = [M(b, dtype), M(a, dtype, la)]
            for v in (upper, transpose, unit):
                if v is None:
                    break
                args.append(v)
            return SampleInput(tuple(args), {}, f"A {shape_a}, b {shape_b}")

        return make

    return samples(
        build((3, 3), (3, 2)),
        build((3, 3), (3, 2), False, True),
        build((2, 4, 4), (2, 4, 1), True, True, True, T),
        build((3, 3), (2, 3, 2), False, False, True),
    )


def _triangular_solve(b, a, upper=True, transpose=False, unitriangular=False):
    t = _tri(a, upper, unitriangular)
    if transpose:
        t = np.swapaxes(t, -1, -2)
    t, b2 = _broadcast_mats(t, b)
    return np.linalg.solve(t, b2), np.broadcast_to(a, t.shape).copy()


def _chol_samples(second_shape):
    def build(shape, layout=C, upper=None):
        def make(rng, dtype):
            spd = _spd(rng, shape, dtype)
            factor = np.linalg.cholesky(spd)
            if upper:
                factor = _mH(factor)
            b = _rand(rng, shape[:-1] + (second_shape,), dtype)
            args = (M(b, dtype), M(factor, dtype, layout)) + (() if upper is None else (upper,))
            return SampleInput(args, {}, f"factor {shape}", oracle_kwargs={"A": spd})

        return make

    return samples(build((3, 3)), build((2, 4, 4), T, True), build((1, 1), C, False), build((3, 2, 2), S, True))


def _cholesky_solve(b, factor, upper=False, A=None):
    return np.linalg.solve(A, b)


def _cholesky_inverse_samples():
    def build(shape, layout=C, upper=None):
        def make(rng, dtype):
            spd = _spd(rng, shape, dtype)
            factor = np.linalg.cholesky(spd)
            if upper:
                factor = _mH(factor)
            args = (M(factor, dtype, layout),) + (() if upper is None else (upper,))
            return SampleInput(args, {}, f"factor {shape}", oracle_kwargs={"A": spd})

        return make

    return samples(build((3, 3)), build((2, 4, 4), T, True), build((1, 1), C, False), build((3, 2, 2), S, True))


# -- factorisations ----------------------------------------------------------------------------------


def _cholesky(a, upper=False):
    lower = np.linalg.cholesky(a)
    return _mH(lower) if upper else lower


def _cholesky_ex_samples():
    def not_pd(rng, dtype):
        a = _spd(rng, (2, 3, 3), dtype)
        a[1, 2, 2] = -10
        return SampleInput((M(a, dtype),), {}, "batch with a matrix that is not positive definite")

    return samples(
        one("spd", (3, 3)), one("spd", (2, 4, 4), T, upper=True), not_pd, one("spd", (1, 1)), one("spd", (0, 0))
    )


def _cholesky_ex(a, upper=False, check_errors=False):
    batch = a.shape[:-2]
    out, infos = np.empty_like(a), np.zeros(batch, np.int32)
    for idx in np.ndindex(*batch):
        m = a[idx]
        hermitian = np.tril(m) + _mH(np.tril(m, -1))
        bad = next((k for k in range(1, m.shape[-1] + 1) if np.linalg.det(hermitian[:k, :k]).real <= 0), 0)
        infos[idx] = bad
        out[idx] = np.nan if bad else _cholesky(hermitian, upper)
    return out, infos


def _qr(a, mode="reduced"):
    q, r = np.linalg.qr(a, mode="complete" if mode == "complete" else "reduced")
    if mode == "r":
        return np.empty(0, a.dtype), r
    return q, r


def _qr_legacy(a, some=True):
    return np.linalg.qr(a, mode="reduced" if some else "complete")


def _svd(a, full_matrices=True, driver=None):
    return np.linalg.svd(a, full_matrices=full_matrices)


def _svd_legacy(a, some=True, compute_uv=True):
    u, s, vh = np.linalg.svd(a, full_matrices=not some)
    if not compute_uv:
        m, n = a.shape[-2:]
        return np.zeros(a.shape[:-2] + (m, m), a.dtype), s, np.zeros(a.shape[:-2] + (n, n), a.dtype)
    return u, s, _mH(vh)


def _eig(a):
    return np.linalg.eig(a)


def _geqrf(a):
    def one_matrix(m):
        (qr, tau), _ = sla.qr(m, mode="raw")
        return qr, tau

    return _batched(one_matrix, a)


def _householder_q(a, tau):
    """``H_1 ... H_k`` applied to the identity: the full m x m Q of geqrf-style reflectors (a formula)."""
    m = a.shape[-2]
    q = np.eye(m, dtype=np.result_type(a, tau))
    for i in range(tau.shape[-1]):
        v = np.zeros(m, dtype=q.dtype)
        v[i] = 1
        v[i + 1 :] = a[i + 1 :, i]
        h = np.eye(m, dtype=q.dtype) - tau[i] * np.outer(v, np.conj(v))
        q = q @ h
    return q


def _householder_product(a, tau):
    def one_matrix(m, t):
        return _householder_q(m, t)[:, : m.shape[-1]]

    if a.ndim == 2:
        return one_matrix(a, tau)
    return np.stack([one_matrix(a[i], tau[i]) for i in np.ndindex(*a.shape[:-2])]).reshape(a.shape)


def _householder_samples(*, third=False):
    def build(shape, layout=C, left=None, transpose=None, cols=2):
        def make(rng, dtype):
            a = _rand(rng, shape, dtype)
            qr, tau = _geqrf(a.astype(np.complex128 if dtype.is_complex else np.float64))
            qr, tau = qr.astype(dtype.numpy), tau.astype(dtype.numpy)
            args = [M(qr, dtype, layout), M(tau, dtype)]
            if third:
                size = shape[-2]
                c_shape = shape[:-2] + ((size, cols) if left in (None, True) else (cols, size))
                args.append(M(_rand(rng, c_shape, dtype), dtype))
                args += [v for v in (left, transpose) if v is not None]
            return SampleInput(tuple(args), {}, f"reflectors {shape}")

        return make

    if third:
        return samples(
            build((4, 3)), build((3, 3), T, True, True), build((4, 2), C, False, False), build((4, 2), C, False, True)
        )
    return samples(build((4, 3)), build((3, 3), T), build((2, 5, 2)), build((3, 1), S))


def _ormqr(a, tau, c, left=True, transpose=False):
    size = a.shape[-2]
    full = a if a.shape[-1] >= size else np.concatenate([a, np.zeros((size, size - a.shape[-1]), a.dtype)], -1)
    q = _householder_q(full[:, :size], tau)
    if transpose:
        q = _mH(q)
    return q @ c if left else c @ q


def _lu(a, pivot=True):
    if not pivot:
        return _batched(_lu_nopivot, a)
    return _batched(lambda m: sla.lu(m), a)


def _lu_nopivot(m):
    """Doolittle elimination without pivoting: (I, L, U)."""
    rows, cols = m.shape
    k = min(rows, cols)
    u = m.astype(np.result_type(m, np.float64)).copy()
    low = np.eye(rows, k, dtype=u.dtype)
    for j in range(k):
        for i in range(j + 1, rows):
            factor = u[i, j] / u[j, j]
            low[i, j] = factor
            u[i] -= factor * u[j]
    return np.eye(rows, dtype=u.dtype), low, np.triu(u[:k])


def _lu_factor_compact(m):
    lu, piv = sla.lu_factor(m)
    return lu, (piv + 1).astype(np.int32)


def _lu_factor(a, pivot=True):
    if not pivot:

        def compact(m):
            _, low, up = _lu_nopivot(m)
            return np.tril(low, -1) + up, np.arange(1, m.shape[-1] + 1, dtype=np.int32)

        return _batched(compact, a)
    return _batched(_lu_factor_compact, a)


def _lu_factor_ex(a, pivot=True, check_errors=False):
    lu, piv = _lu_factor(a, pivot)
    return lu, piv, _info(a.shape[:-2])


def _lu_samples():
    return samples(
        one("well", (3, 3)),
        one("gen", (2, 4, 4), T),
        one("well", (3, 3), C, pivot=False),
        one("gen", (3, 2, 2), S),
        one("gen", (1, 1)),
    )


def _rect_lu_samples():
    return samples(
        one("gen", (3, 3)),
        one("gen", (2, 4, 3), T),
        one("well", (3, 3), C, pivot=False),
        one("gen", (2, 3, 5), S),
        one("gen", (1, 1)),
    )


def _lu_solve_samples(legacy=False):
    def build(shape, k, layout=C, left=True, adjoint=False, b_batch=()):
        def make(rng, dtype):
            a = _rand(rng, shape, dtype) + 0.5 * shape[-1] * np.eye(shape[-1])
            a = a.astype(dtype.numpy)
            lu, piv = _batched(_lu_factor_compact, a)
            b_shape = b_batch + shape[:-2] + ((shape[-1], k) if left else (k, shape[-1]))
            b = _rand(rng, b_shape, dtype)
            ok = {"A": a}
            if legacy:
                return SampleInput((M(b, dtype), M(lu, dtype, layout), M(piv, ow.int32)), {}, "lu_solve", ok)
            kwargs = {"left": left, "adjoint": adjoint}
            return SampleInput((M(lu, dtype, layout), M(piv, ow.int32), M(b, dtype)), kwargs, "lu_solve", ok)

        return make

    if legacy:
        return samples(build((3, 3), 2), build((2, 4, 4), 1, T), build((1, 1), 3), build((2, 3, 3), 2, S))
    return samples(
        build((3, 3), 2),
        build((2, 4, 4), 1, T, adjoint=True),
        build((3, 3), 2, left=False),
        build((3, 3), 2, S, left=False, adjoint=True),
        build((3, 3), 2, b_batch=(2,)),
    )


def _lu_solve(lu, piv, b, left=True, adjoint=False, A=None):
    a = _mH(A) if adjoint else A
    return _solve(a, b, left)


def _lu_solve_legacy(b, lu, piv, A=None):
    return _solve(A, b)


def _lu_unpack_samples():
    def build(shape, layout=C, data=True, pivots=True):
        def make(rng, dtype):
            a = _rand(rng, shape, dtype)
            lu, piv = _batched(_lu_factor_rect, a)
            return SampleInput((M(lu, dtype, layout), M(piv, ow.int32), data, pivots), {}, f"LU {shape}")

        return make

    return samples(
        build((3, 3)), build((2, 4, 4), T), build((3, 5)), build((5, 3), S, True, False), build((2, 2), C, False)
    )


def _lu_factor_rect(m):
    p, low, up = sla.lu(m)
    rows, cols = m.shape
    k = min(rows, cols)
    compact = np.zeros((rows, cols), dtype=np.result_type(m, low))
    compact[:, :k] += np.tril(low, -1)
    compact[:k] += up
    # pivots from the permutation p (A = p L U): LAPACK's sequential swaps producing it
    perm = list(np.argmax(p, axis=0))  # row perm[r] of A is row r of L U
    order = list(range(rows))
    piv = []
    for i in range(k):
        j = order.index(perm[i])
        piv.append(j + 1)
        order[i], order[j] = order[j], order[i]
    return compact.astype(m.dtype), np.array(piv, np.int32)


def _lu_unpack(lu, piv, unpack_data=True, unpack_pivots=True):
    rows, cols = lu.shape[-2:]
    k = min(rows, cols)
    empty = np.empty(0, lu.dtype)
    if unpack_data:
        low = np.tril(lu, -1)[..., :, :k] + np.eye(rows, k)
        up = np.triu(lu)[..., :k, :]
    else:
        low = up = empty

    def perm_matrix(p):
        order = list(range(rows))
        for i, j in enumerate(p):
            order[i], order[j - 1] = order[j - 1], order[i]
        mat = np.zeros((rows, rows))
        for r, src in enumerate(order):
            mat[src, r] = 1
        return mat

    if unpack_pivots:
        batch = piv.shape[:-1]
        p = np.stack([perm_matrix(piv[i]) for i in np.ndindex(*batch)]).reshape(batch + (rows, rows))
    else:
        p = empty
    return p, low, up


# -- norms, rank, pseudo-inverse, condition ----------------------------------------------------------


def _vector_norm(x, ord=2, dim=None, keepdim=False, dtype=None):  # noqa: A002
    axis = None if dim is None else ((dim,) if isinstance(dim, int) else tuple(dim))
    if axis == ():
        axis = None
    a = np.abs(x)
    if ord == math.inf:
        r = np.max(a, axis=axis, keepdims=keepdim)
    elif ord == -math.inf:
        r = np.min(a, axis=axis, keepdims=keepdim)
    elif ord == 0:
        r = np.sum(a != 0, axis=axis, keepdims=keepdim).astype(np.float64)
    else:
        r = np.sum(a**ord, axis=axis, keepdims=keepdim) ** (1.0 / ord)
    return r


def _vector_norm_samples():
    def build(shape, ord, dim, keepdim, layout=C, dtype_kw=None):
        def make(rng, dtype):
            x = arr(rng, shape, dtype, layout, "any")
            kwargs = {"keepdim": keepdim} if keepdim else {}
            if dtype_kw is not None:
                kwargs["dtype"] = dtype_kw
            return SampleInput((x, ord, dim), kwargs, f"ord {ord} dim {dim}")

        return make

    return samples(
        build((3, 4), 2, None, False),
        build((2, 3, 4), 1, [0, 2], True, T),
        build((5,), math.inf, 0, False),
        build((3, 4), 0.5, [1], False, S),
        build((2, 3), -math.inf, -1, True),
        build((3, 4), 0, None, False),
        build((), 3, None, False),
        build((0, 3), 2, [1], False),
    )


def _matrix_norm(x, ord="fro", dim=(-2, -1), keepdim=False, dtype=None):  # noqa: A002
    return np.linalg.norm(x, ord, axis=tuple(dim), keepdims=keepdim)


def _matrix_norm_samples(ords):
    def build(shape, ord, dim, keepdim, layout=C):
        def make(rng, dtype):
            x = arr(rng, shape, dtype, layout, "any")
            args = (x, ord) + (() if dim is None else (dim,))
            return SampleInput(args, {"keepdim": keepdim} if keepdim else {}, f"ord {ord} dim {dim}")

        return make

    shapes = [
        ((3, 4), None, False, C),
        ((2, 3, 4), [0, 2], True, T),
        ((2, 4, 3), [-1, -2], False, S),
        ((3, 3), [1, 0], True, C),
    ]
    builders = []
    for i, o in enumerate(ords):
        shape, dim, keep, layout = shapes[i % len(shapes)]
        builders.append(build(shape, o, dim, keep, layout))
    return samples(*builders)


def _norm(x, ord=None, dim=None, keepdim=False, dtype=None):  # noqa: A002
    if dim is None and ord is None:
        return np.linalg.norm(x.reshape(-1), keepdims=False).reshape((1,) * x.ndim if keepdim else ())
    axis = None if dim is None else ((dim,) if isinstance(dim, int) else tuple(dim))
    if axis is not None and len(axis) == 1:
        return _vector_norm(x, 2 if ord is None else ord, axis, keepdim)
    return np.linalg.norm(x, ord, axis=axis, keepdims=keepdim)


def _norm_samples(string_ord=False):
    def build(shape, ord, dim, keepdim=False, layout=C):
        def make(rng, dtype):
            x = arr(rng, shape, dtype, layout, "any")
            args = (x,) if ord is None and dim is None else (x, ord) + (() if dim is None else (dim,))
            return SampleInput(args, {"keepdim": keepdim} if keepdim else {}, f"ord {ord} dim {dim}")

        return make

    if string_ord:
        return samples(
            build((3, 4), "fro", None), build((2, 3, 4), "nuc", [0, 2], True, T), build((3, 3), "fro", [1, 0], False, S)
        )
    return samples(
        build((2, 3, 4), None, None),
        build((3, 4), 2, None, False, T),
        build((5,), 3, None),
        build((2, 3, 4), None, [2], True),
        build((2, 3, 4), math.inf, [0, 1], False, S),
        build((3, 4), -1, None, True),
    )


def _tol(s, m, n, atol, rtol, dtype):
    eps = np.finfo(dtype).eps
    default = eps * max(m, n)
    smax = s.max(-1) if s.shape[-1] else np.zeros(s.shape[:-1])
    atol_v = 0.0 if atol is None else np.asarray(atol, dtype=np.float64)
    if rtol is None:
        rtol_v = default if atol is None else np.where(np.asarray(atol) > 0, 0.0, default)
    else:
        rtol_v = np.asarray(rtol, dtype=np.float64)
    return np.maximum(atol_v, rtol_v * smax)[..., None]


def _rank_oracle(kind):
    def oracle(a, *args, atol=None, rtol=None, hermitian=False, real_dtype=np.float32):
        if kind == "tol":
            atol, rtol = args[0], 0.0
            hermitian = args[1] if len(args) > 1 else hermitian
        s = np.abs(np.linalg.eigvalsh(a)) if hermitian else np.linalg.svd(a, compute_uv=False)
        tol = _tol(s, *a.shape[-2:], atol, rtol, real_dtype)
        return np.sum(s > tol, -1).astype(np.int64)

    return oracle


def _pinv_oracle(kind):
    def oracle(a, *args, atol=None, rtol=None, hermitian=False, real_dtype=np.float32):
        if kind == "rcond":
            atol, rtol = 0.0, args[0]
            hermitian = args[1] if len(args) > 1 else hermitian
        if hermitian:
            w, q = np.linalg.eigh(a)
            s = np.abs(w)
            keep = s > _tol(s, *a.shape[-2:], atol, rtol, real_dtype)
            inv = np.where(keep, 1 / np.where(keep, w, 1), 0)
            return (q * inv[..., None, :]) @ _mH(q)
        u, s, vh = np.linalg.svd(a, full_matrices=False)
        keep = s > _tol(s, *a.shape[-2:], atol, rtol, real_dtype)
        inv = np.where(keep, 1 / np.where(keep, s, 1), 0)
        return (_mH(vh) * inv[..., None, :]) @ _mH(u)

    return oracle


def _rank_pinv_samples(kind, tensor_tol=False):
    """Samples with exact low rank, tolerances as floats or tensors per ``kind``."""

    def build(shape, rank, layout=C, herm=False, atol=None, rtol=None, positional=None):
        def make(rng, dtype):
            a = _lowrank(rng, shape, dtype, rank)
            if herm:
                a = (a @ _mH(a)).astype(dtype.numpy)
            real = dtype.to_real()
            okw = {"real_dtype": real.numpy}
            if kind == "rcond":
                value = positional if not tensor_tol else M(np.asarray(positional), real)
                return SampleInput((M(a, dtype, layout), value, herm), {}, f"rank {rank}", okw)
            kwargs = {"hermitian": herm}
            for name, v in (("atol", atol), ("rtol", rtol)):
                if v is not None:
                    kwargs[name] = M(np.asarray(v), real) if tensor_tol else v
            return SampleInput((M(a, dtype, layout),), kwargs, f"rank {rank}", okw)

        return make

    if kind == "rcond":
        return samples(
            build((4, 4), 2, positional=1e-3),
            build((2, 3, 5), 2, T, positional=0.01),
            build((3, 3), 2, herm=True, positional=1e-3),
            build((4, 3), 3, S, positional=0.5),
        )
    return samples(
        build((4, 4), 2),
        build((2, 3, 5), 2, T, atol=1e-3),
        build((3, 3), 2, herm=True, rtol=1e-3),
        build((4, 3), 3, S, atol=0.0, rtol=0.5),
        build((5, 4), 1, atol=0.5),
    )


def _cond(a, p=None):
    return np.linalg.cond(a, p)


# -- products -------------------------------------------------------------------------------------------


def _pair_samples(shapes, extra=None):
    """Samples of two same-dtype operands with the given shapes and layouts (``extra`` args appended)."""

    def build(sa, sb, la, lb, ex):
        def make(rng, dtype):
            a, b = arr(rng, sa, dtype, la), arr(rng, sb, dtype, lb)
            args, kwargs = ex if isinstance(ex, tuple) and len(ex) == 2 and isinstance(ex[1], dict) else (ex or (), {})
            return SampleInput((a, b) + tuple(args), dict(kwargs), f"{list(sa)} x {list(sb)}")

        return make

    return samples(*(build(*s) for s in shapes))


def _cross(a, b, dim=None):
    shape = np.broadcast_shapes(a.shape, b.shape)
    a, b = np.broadcast_to(a, shape), np.broadcast_to(b, shape)
    if dim is None:
        dim = next(i for i, s in enumerate(shape) if s == 3)
    return np.cross(a, b, axis=dim)


def _vecdot(x, y, dim=-1):
    return np.sum(np.conj(x) * y, axis=dim)


def _multi_dot_samples(legacy=False):
    def build(shapes, layouts):
        def make(rng, dtype):
            return SampleInput(([arr(rng, s, dtype, lay) for s, lay in zip(shapes, layouts)],), {}, f"{shapes}")

        return make

    if legacy:
        return samples(
            build([(2, 3), (3, 4)], [C, T]), build([(3, 3)], [C]), build([(2, 3), (3, 4), (4, 1), (1, 5)], [C, S, C, T])
        )
    return samples(
        build([(2, 3), (3, 4)], [C, T]),
        build([(3,), (3, 4), (4, 2)], [C, S, C]),
        build([(2, 3), (3, 4), (4,)], [T, C, C]),
        build([(5,), (5, 2), (2, 6), (6,)], [C, C, T, C]),
        build([(2, 30), (30, 3), (3, 40), (40, 1)], [C, C, C, C]),
    )


def _einsum_samples():
    def build(eq, shapes, layouts=None):
        layouts = layouts or [C] * len(shapes)

        def make(rng, dtype):
            return SampleInput((eq, [arr(rng, s, dtype, lay) for s, lay in zip(shapes, layouts)]), {}, eq)

        return make

    return samples(
        build("ij,jk->ik", [(2, 3), (3, 4)], [C, T]),
        build("bij,bjk->bik", [(2, 2, 3), (2, 3, 2)]),
        build("ii->i", [(3, 3)], [S]),
        build("...ij,...jk", [(2, 2, 3), (3, 4)]),
        build("i,j->ij", [(3,), (4,)]),
        build("ijk->", [(2, 3, 4)]),
        build("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]),
        build("bii,bi->b", [(2, 3, 3), (2, 3)]),
        build("ij->ji", [(2, 3)], [T]),
        build("i,i", [(0,), (0,)]),
    )


def _einsum(eq, tensors, path=None):
    return np.einsum(eq, *tensors)


def _trapz_samples(kind, scalar_float=False):
    def build(shape, layout=C, dim=None, dx=None, x_shape=None):
        def make(rng, dtype):
            y = arr(rng, shape, dtype, layout)
            kwargs = {} if dim is None else {"dim": dim}
            if kind == "x":
                d = (dim if dim is not None else -1) % len(shape)
                xs = x_shape or (shape[d],)
                x = _sorted_points(rng, xs, dtype)
                return SampleInput((y, x), kwargs, f"y {shape} x {xs}")
            if dx is not None:
                kwargs["dx"] = float(dx) if scalar_float else dx
            return SampleInput((y,), kwargs, f"y {shape} dx {dx}")

        return make

    return samples(
        build((3, 5)),
        build((4, 3), T, 0, 0.5),
        build((2, 3, 4), S, 1, 2),
        build((6,), C, None, 0.25),
        build((3, 4), C, -1, None, (3, 4)),
        build((2, 0)),
    )


def _sorted_points(rng, shape, dtype):
    """Increasing sample points (a real dtype; ints stay integers)."""
    dt = dtype if not dtype.is_complex else dtype.to_real()
    v = np.sort(_sorted_values(rng, shape, dt), axis=-1)
    return M(v, dt)


def _sorted_values(rng, shape, dtype):
    if dtype.is_floating_point:
        return rng.uniform(-2, 2, shape)
    return rng.integers(-5, 6, shape)


def _trapz(y, x=None, dx=1, dim=-1):
    if x is not None:
        if x.ndim == 1:
            return np.trapezoid(y, x, axis=dim)
        shape = np.broadcast_shapes(x.shape, y.shape)
        return np.trapezoid(np.broadcast_to(y, shape), np.broadcast_to(x, shape), axis=dim)
    return np.trapezoid(y, dx=dx, axis=dim)


def _cumtrapz(y, x=None, dx=1, dim=-1):
    if y.shape[dim] == 0:
        return np.zeros(y.shape)
    if x is not None:
        if x.ndim != 1:
            shape = np.broadcast_shapes(x.shape, y.shape)
            y, x = np.broadcast_to(y, shape), np.broadcast_to(x, shape)
        return sint.cumulative_trapezoid(y, x, axis=dim)
    return sint.cumulative_trapezoid(y, dx=dx, axis=dim)


def _vander(x, N=None):
    n = x.shape[-1] if N is None else N
    return x[..., :, None] ** np.arange(n)


def _kron(a, b):
    return np.kron(a, b)


def _tensordot(a, b, dims_self, dims_other):
    return np.tensordot(a, b, (list(dims_self), list(dims_other)))


def _matrix_power(a, n):
    return np.linalg.matrix_power(a, n)


def _matrix_exp(a):
    return _batched(sla.expm, a)


def _tensorinv_samples():
    def build(shape, ind, layout=C):
        def make(rng, dtype):
            rows = int(np.prod(shape[:ind]))
            a = _wellcond(rng, (rows, rows), dtype).reshape(shape)
            return SampleInput((M(a, dtype, layout), ind), {}, f"{shape} ind {ind}")

        return make

    return samples(build((4, 2, 2), 1), build((2, 3, 6), 2, T), build((2, 2, 2, 2), 2, S))


def _tensorsolve_samples():
    def build(a_shape, b_ndim, dims=None, layout=C):
        def make(rng, dtype):
            rows = int(np.prod(a_shape[:b_ndim]))
            a = _wellcond(rng, (rows, rows), dtype).reshape(a_shape)
            b = _rand(rng, a_shape[:b_ndim], dtype)
            if dims is not None:
                a = np.moveaxis(a, list(range(len(a_shape) - len(dims), len(a_shape))), dims)
            args = (M(a, dtype, layout), M(b, dtype)) + (() if dims is None else (dims,))
            return SampleInput(args, {}, f"{a_shape}")

        return make

    return samples(
        build((2, 3, 6), 2), build((4, 2, 2), 1, None, T), build((6, 2, 3), 1, [0]), build((2, 2, 4), 2, None, S)
    )


def _tensorsolve(a, b, dims=None):
    return np.linalg.tensorsolve(a, b, axes=dims)


def _cond_samples(p_values):
    return samples(
        *(
            one("well", shape, lay, p)
            for p, (shape, lay) in zip(p_values, [((3, 3), C), ((2, 4, 4), T), ((3, 3), S), ((2, 2, 2), C)] * 3)
        )
    )


def _inv_ex_samples():
    return samples(*SQUARE[:2], _singular_sample(), *SQUARE[2:4])


def _solve_ex_samples():
    def singular(rng, dtype):
        a = _wellcond(rng, (2, 3, 3), dtype)
        a[1, 2] = 0
        return SampleInput((M(a, dtype), M(_rand(rng, (2, 3, 2), dtype), dtype)), {}, "singular in the batch")

    base = _solve_samples()

    def gen(rng, dtype, device):
        yield from base(rng, dtype, device)
        yield singular(rng, dtype)

    return gen


def _solve_ex_full(a, b, left=True, check_errors=False):
    x = _solve_safe(a, b, left)
    vector = _solve_vector(a, b) and left
    batch = x.shape[:-1] if vector else x.shape[:-2]
    sing = _batched_singular(np.broadcast_to(a, batch + a.shape[-2:]))
    if sing.any():
        x = x.copy()
        x[sing] = np.nan
    return x, sing.astype(np.int32) * _first_zero(np.broadcast_to(a, batch + a.shape[-2:]))


def _solve_safe(a, b, left):
    a = a.copy()
    batch = a.shape[:-2]
    for idx in np.ndindex(*batch):
        if np.linalg.matrix_rank(a[idx]) < a.shape[-1]:
            a[idx] = np.eye(a.shape[-1])
    return _solve(a, b, left)


def _batched_singular(a):
    batch = a.shape[:-2]
    out = np.zeros(batch, bool)
    for idx in np.ndindex(*batch):
        out[idx] = a[idx].size and np.linalg.matrix_rank(a[idx]) < a.shape[-1]
    return out


def _first_zero(a):
    batch = a.shape[:-2]
    out = np.zeros(batch, np.int32)
    for idx in np.ndindex(*batch):
        if a[idx].size:
            lu, _ = sla.lu_factor(a[idx], check_finite=False)
            zero = np.flatnonzero(np.abs(np.diag(lu)) < 1e-12)
            out[idx] = zero[0] + 1 if len(zero) else 0
    return out


def _inv_ex_full(a, check_errors=False):
    return _inv_ex(a, check_errors)


def _eig_samples():
    def distinct(shape, layout=C):
        def make(rng, dtype):
            n = shape[-1]
            a = _rand(rng, shape, dtype) * 0.3 + np.diag(np.arange(1, n + 1) * 2.0)
            return SampleInput((M(a.astype(dtype.numpy), dtype, layout),), {}, f"distinct eigenvalues {shape}")

        return make

    return samples(distinct((3, 3)), distinct((2, 4, 4), T), distinct((1, 1)), distinct((3, 2, 2), S))


def _eigh_samples(uplo=True):
    def build(shape, layout=C, u=None):
        def make(rng, dtype):
            n = shape[-1]
            a = _rand(rng, shape, dtype) * 0.3
            a = a + _mH(a) + np.diag(np.arange(1, n + 1) * 2.0)
            args = (M(a.astype(dtype.numpy), dtype, layout),) + (() if u is None else (u,))
            return SampleInput(args, {}, f"Hermitian {shape} UPLO {u}")

        return make

    return samples(build((3, 3)), build((2, 4, 4), T, "U"), build((1, 1), C, "L"), build((3, 2, 2), S, "U"))


def _eigh(a, UPLO="L"):
    return np.linalg.eigh(a, UPLO)


# -- table ---------------------------------------------------------------------------------------------


def _lines():
    sq_err = _err_square()
    rank_tensor = _rank_pinv_samples("tol", tensor_tol=True)
    rank_float = _rank_pinv_samples("tol")
    lines = [
        info("linalg_det", samples(*SQUARE), np.linalg.det, errors=sq_err),
        info("det", samples(*SQUARE), np.linalg.det, errors=sq_err),
        info("linalg_slogdet", samples(*SQUARE), _slogdet, errors=sq_err),
        info("slogdet", samples(*SQUARE), _slogdet, errors=sq_err),
        info("logdet", _logdet_samples(), _logdet, errors=sq_err),
        info("linalg_inv", samples(*SQUARE), np.linalg.inv, errors=sq_err),
        info("inverse", samples(*SQUARE), np.linalg.inv, errors=sq_err),
        info("linalg_inv_ex", _inv_ex_samples(), _inv_ex_full, errors=sq_err),
        info("linalg_solve", _solve_samples(), _solve, errors=_solve_errors),
        info("linalg_solve_ex", _solve_ex_samples(), _solve_ex_full, errors=_solve_errors),
        info("linalg_lstsq", _lstsq_samples(), _lstsq, tol=LOOSE),
        info("linalg_solve_triangular", _solve_tri_samples(), _solve_triangular),
        info("triangular_solve", _triangular_solve_samples(), _triangular_solve),
        info("cholesky_solve", _chol_samples(2), _cholesky_solve, tol=LOOSE),
        info(
            "cholesky_inverse", _cholesky_inverse_samples(), lambda f, upper=False, A=None: np.linalg.inv(A), tol=LOOSE
        ),
        info("linalg_cholesky", samples(*SPD, one("spd", (3, 3), C, upper=True)), _cholesky, errors=sq_err),
        info("cholesky", samples(*SPD, one("spd", (3, 3), C, True)), _cholesky, errors=sq_err),
        info("linalg_cholesky_ex", _cholesky_ex_samples(), _cholesky_ex, errors=sq_err),
        info(
            "linalg_qr",
            samples(*RECT[:3], one("gen", (5, 3), C, "complete"), one("gen", (3, 4), T, "r")),
            _qr,
            upcast=False,
            tol=LOOSE,
        ),
        info("qr", samples(*RECT[:3], one("gen", (5, 3), C, False)), _qr_legacy, upcast=False, tol=LOOSE),
        info(
            "linalg_svd",
            samples(one("gen", (3, 3)), one("gen", (4, 2), T, False), one("gen", (2, 3, 5)), one("gen", (2, 2))),
            _svd,
            upcast=False,
            tol=LOOSE,
        ),
        info(
            "svd",
            samples(one("gen", (3, 3)), one("gen", (4, 2), T, False), one("gen", (2, 3, 5), C, True, False)),
            _svd_legacy,
            upcast=False,
            tol=LOOSE,
        ),
        info("linalg_svdvals", samples(*RECT), lambda a, driver=None: np.linalg.svd(a, compute_uv=False)),
        info("linalg_eig", _eig_samples(), _eig, upcast=False, tol=LOOSE),
        info("linalg_eigvals", _eig_samples(), lambda a: np.linalg.eigvals(a), upcast=False, tol=LOOSE),
        info("linalg_eigh", _eigh_samples(), _eigh, upcast=False, tol=LOOSE),
        info("linalg_eigvalsh", _eigh_samples(), lambda a, UPLO="L": np.linalg.eigvalsh(a, UPLO)),
        info("geqrf", samples(*RECT[:4]), _geqrf, upcast=False, tol=LOOSE),
        info("linalg_householder_product", _householder_samples(), _householder_product),
        info("orgqr", _householder_samples(), _householder_product),
        info("ormqr", _householder_samples(third=True), _ormqr),
        info("linalg_lu", _rect_lu_samples(), _lu, upcast=False, tol=LOOSE),
        info("linalg_lu_factor", _lu_samples(), _lu_factor, upcast=False, tol=LOOSE),
        info("linalg_lu_factor_ex", _lu_samples(), _lu_factor_ex, upcast=False, tol=LOOSE),
        info("linalg_lu_solve", _lu_solve_samples(), _lu_solve, tol=LOOSE),
        info("lu_solve", _lu_solve_samples(legacy=True), _lu_solve_legacy, tol=LOOSE),
        info("lu_unpack", _lu_unpack_samples(), _lu_unpack, upcast=False),
        info("linalg_vector_norm", _vector_norm_samples(), _vector_norm),
        info("linalg_matrix_norm", _matrix_norm_samples([1, -1, 2, -2, math.inf, -math.inf]), _matrix_norm),
        info("linalg_matrix_norm.str_ord", _matrix_norm_samples(["fro", "nuc", "fro", "nuc"]), _matrix_norm),
        info("linalg_norm", _norm_samples(), _norm),
        info("linalg_norm.ord_str", _norm_samples(string_ord=True), _norm),
        info("linalg_matrix_rank.atol_rtol_tensor", rank_tensor, _rank_oracle("kw")),
        info("linalg_matrix_rank.atol_rtol_float", rank_float, _rank_oracle("kw")),
        info("linalg_matrix_rank", _rank_pinv_samples("rcond"), _rank_oracle("tol")),
        info("linalg_matrix_rank.tol_tensor", _rank_pinv_samples("rcond", tensor_tol=True), _rank_oracle("tol")),
        info("linalg_pinv.atol_rtol_tensor", rank_tensor, _pinv_oracle("kw"), tol=LOOSE),
        info("linalg_pinv.atol_rtol_float", rank_float, _pinv_oracle("kw"), tol=LOOSE),
        info("linalg_pinv", _rank_pinv_samples("rcond"), _pinv_oracle("rcond"), tol=LOOSE),
        info(
            "linalg_pinv.rcond_tensor", _rank_pinv_samples("rcond", tensor_tol=True), _pinv_oracle("rcond"), tol=LOOSE
        ),
        info(
            "pinverse",
            samples(one("well", (3, 3)), one("gen", (2, 4, 3), T), one("gen", (3, 5), C, 1e-3)),
            lambda a, rcond=1e-15: np.linalg.pinv(a, rcond),
            tol=LOOSE,
        ),
        info("linalg_cond", _cond_samples([None, 1, -1, 2, -2, math.inf, -math.inf]), _cond, tol=LOOSE),
        info("linalg_cond.p_str", _cond_samples(["fro", "nuc"]), _cond, tol=LOOSE),
        info(
            "linalg_matrix_power",
            samples(
                one("gen", (3, 3), C, 3),
                one("gen", (2, 2, 2), T, 0),
                one("well", (3, 3), S, -2),
                one("gen", (4, 4), C, 1),
                one("gen", (2, 3, 3), C, 5),
            ),
            _matrix_power,
            dtypes=LAPACK,
            tol=LOOSE,
        ),
        info(
            "matrix_power",
            samples(one("gen", (3, 3), C, 2), one("gen", (2, 2, 2), T, 0), one("well", (3, 3), S, -1)),
            _matrix_power,
            dtypes=LAPACK,
            tol=LOOSE,
        ),
        info(
            "linalg_matrix_exp",
            samples(one("gen", (3, 3)), one("gen", (2, 2, 2), T), one("gen", (1, 1)), one("gen", (0, 0))),
            _matrix_exp,
            tol=LOOSE,
        ),
        info("matrix_exp", samples(one("gen", (3, 3)), one("gen", (2, 2, 2), T)), _matrix_exp, tol=LOOSE),
        info(
            "linalg_cross",
            _pair_samples(
                [((2, 3), (2, 3), C, T, ()), ((3, 4), (3, 1), C, C, ((), {"dim": 0})), ((4, 3), (1, 3), S, C, ())]
            ),
            _cross,
            dtypes=PRODUCT,
        ),
        info(
            "cross",
            _pair_samples([((2, 3), (2, 3), C, T, ()), ((3, 4), (3, 4), C, S, (0,)), ((4, 3), (1, 3), C, C, (-1,))]),
            _cross,
            dtypes=PRODUCT,
        ),
        info(
            "linalg_vecdot",
            _pair_samples(
                [((2, 3), (2, 3), C, T, ()), ((3, 4), (3, 1), S, C, ((), {"dim": 0})), ((4,), (2, 4), C, C, ())]
            ),
            _vecdot,
            dtypes=PRODUCT,
        ),
        info("linalg_multi_dot", _multi_dot_samples(), np.linalg.multi_dot, dtypes=PRODUCT, tol=LOOSE),
        info(
            "chain_matmul",
            _multi_dot_samples(legacy=True),
            lambda ms: np.linalg.multi_dot(ms) if len(ms) > 1 else ms[0],
            dtypes=PRODUCT,
            tol=LOOSE,
        ),
        info(
            "linalg_matmul",
            _pair_samples([((2, 3), (3, 4), C, T, ()), ((2, 2, 3), (3,), S, C, ()), ((3,), (3,), C, C, ())]),
            np.matmul,
            dtypes=PRODUCT,
        ),
        info(
            "linalg_diagonal",
            samples(one("gen", (3, 4)), one("gen", (2, 3, 3), T, offset=1), one("gen", (2, 3, 4), S, dim1=0, dim2=2)),
            lambda a, offset=0, dim1=-2, dim2=-1: np.diagonal(a, offset, dim1, dim2),
            dtypes=PRODUCT,
            view=True,
        ),
        info(
            "linalg_vander",
            samples(one_vec((4,)), one_vec((2, 3), N=5), one_vec((3,), S, N=2)),
            _vander,
            dtypes=PRODUCT,
        ),
        info(
            "tensordot",
            _pair_samples(
                [
                    ((2, 3, 4), (4, 3, 5), C, T, ([1, 2], [1, 0])),
                    ((3, 4), (4, 2), S, C, ([1], [0])),
                    ((2, 3), (4,), C, C, ([], [])),
                ]
            ),
            _tensordot,
            dtypes=PRODUCT,
        ),
        info(
            "kron",
            _pair_samples(
                [
                    ((2, 3), (3, 2), C, T, ()),
                    ((2,), (2, 3), C, S, ()),
                    ((2, 1, 2), (3, 2), C, C, ()),
                    ((), (2,), C, C, ()),
                ]
            ),
            _kron,
            dtypes=PRODUCT,
        ),
        info("einsum", _einsum_samples(), _einsum, dtypes=PRODUCT),
        info("trapezoid.x", _trapz_samples("x"), _trapz, dtypes=(ow.float32, ow.float64)),
        info("trapezoid.dx", _trapz_samples("dx"), _trapz, dtypes=(ow.float32, ow.float64, ow.int64)),
        info("trapz.x", _trapz_samples("x"), _trapz, dtypes=(ow.float32, ow.float64)),
        info("trapz.dx", _trapz_samples("dx", scalar_float=True), _trapz, dtypes=(ow.float32, ow.float64)),
        info("cumulative_trapezoid.x", _trapz_samples("x"), _cumtrapz, dtypes=(ow.float32, ow.float64)),
        info("cumulative_trapezoid.dx", _trapz_samples("dx"), _cumtrapz, dtypes=(ow.float32, ow.float64, ow.int64)),
        info("linalg_tensorinv", _tensorinv_samples(), lambda a, ind=2: np.linalg.tensorinv(a, ind), tol=LOOSE),
        info("linalg_tensorsolve", _tensorsolve_samples(), _tensorsolve, tol=LOOSE),
    ]
    return lines


def one_vec(shape, layout=C, **kwargs):
    """A builder of a sample whose first argument is a vector batch of small values."""

    def build(rng, dtype):
        x = arr(rng, shape, dtype, layout, "small")
        return SampleInput((x,), dict(kwargs), f"x {shape}")

    return build


register(*_lines())
