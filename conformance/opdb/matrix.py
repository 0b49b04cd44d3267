"""Matrix ops and prims: ``linalg_basic`` (mm, matmul, addmm, dot, outer...), and the convolution, pooling,
FFT and linear-algebra prims.

Oracles are NumPy/SciPy formulas computed in float64/complex128 (``np.matmul``,
``np.fft``, ``scipy.linalg``), and explicit window loops for convolution and
pooling. Decompositions are compared where the result is unique: LU with partial
pivoting, Cholesky, QR and ``geqrf`` in LAPACK's Householder convention, the
eigenvalues of ``eigh`` and the singular values of ``svd`` (their vectors are
defined up to sign or phase, so the oracle leaves them out), the least-squares
solution of a full-rank system. ``eig`` keeps its schema-driven entry (the order
of its eigenvalues is unspecified). Matrices are well conditioned (a multiple of
the identity added, or positive definite) so float32 results are comparable.
"""

from __future__ import annotations

import itertools

import numpy as np
import opweave as ow
import scipy.linalg

from . import register
from ._cases import TA, Gen, K, S, T, entry
from ._core import COMPLEX, FLOAT, FLOATING, INT, Arr
from .reductions import TOL

MATMUL = INT + FLOATING
LINALG = (ow.float32, ow.float64) + COMPLEX
LTOL = {"float32": (1e-4, 1e-4), "float64": (1e-7, 1e-7), "complex64": (1e-4, 1e-4), "complex128": (1e-7, 1e-7)}
MTOL = {**TOL, "float16": (4e-3, 2e-2), "bfloat16": (2e-2, 0.25)}


def _well(*shape, spd=False, layout="contiguous"):
    """A well-conditioned (``spd``: Hermitian positive-definite) batch of square matrices of the dtype under test."""

    def fn(rng, dtype):
        n = shape[-1]
        a = rng.uniform(-1, 1, shape)
        if dtype.is_complex:
            a = a + 1j * rng.uniform(-1, 1, shape)
        if spd:
            a = a @ np.conj(np.swapaxes(a, -1, -2)) + n * np.eye(n)
        else:
            a = a + 2 * n * np.eye(n) * (1 if rng.random() < 0.5 else -1)
        return Arr(a.astype(dtype.numpy), dtype, layout)

    return Gen(fn)


def _mat(*shape, layout="contiguous"):
    """A random matrix with entries in (-1, 1) (complex: both parts)."""
    return TA(shape, layout, domain="unit")


# -- linalg_basic ------------------------------------------------------------------------------------


def _scaled(beta, self_, alpha, product):
    with np.errstate(all="ignore"):
        prod = alpha * product if alpha != 1 else product
        if beta == 0:
            return np.broadcast_to(prod, np.broadcast_shapes(np.shape(self_), prod.shape)) + 0
        return (beta * self_ if beta != 1 else self_) + prod


def _addmm(x, a, b, *, beta=1, alpha=1):
    return _scaled(beta, x, alpha, a @ b)


def _addbmm(x, a, b, *, beta=1, alpha=1):
    return _scaled(beta, x, alpha, (a @ b).sum(0))


def _addmv(x, a, v, *, beta=1, alpha=1):
    return _scaled(beta, x, alpha, a @ v)


def _addr(x, u, v, *, beta=1, alpha=1):
    return _scaled(beta, x, alpha, np.outer(u, v))


def _linear(x, w, b=None):
    out = x @ w.T
    return out if b is None else out + b


def _allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    return bool(np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan))


def _equal(a, b):
    return a.shape == b.shape and bool((a == b).all())


def _dist(a, b, p=2):
    d = np.abs(a - b).reshape(-1) if np.size(a - b) else np.zeros(0)
    if p == float("inf"):
        return d.max() if d.size else 0.0
    if p == 0:
        return float((d != 0).sum())
    return (d**p).sum() ** (1.0 / p)


def _trace(x):
    return np.trace(x).astype(np.int64) if x.dtype.kind in "biu" else np.trace(x)


# -- convolution and pooling ---------------------------------------------------------------------------


def _windows(xp, ks, stride, dilation, out):
    """For each kernel offset: the strided slice of the padded input ``xp`` that it multiplies."""
    nd = len(ks)
    for k in itertools.product(*(range(n) for n in ks)):
        index = [slice(None)] * (xp.ndim - nd)
        index += [
            slice(k[i] * dilation[i], k[i] * dilation[i] + (out[i] - 1) * stride[i] + 1, stride[i]) for i in range(nd)
        ]
        yield k, xp[tuple(index)]


def _per_dim(values, nd, default):
    """An int-list argument with one entry per spatial dim (one entry repeats; empty: ``default``)."""
    if not values:
        return [default] * nd
    return list(values) * nd if len(values) == 1 else list(values)


def _conv(x, w, bias, stride, padding, dilation, transposed, output_padding, groups):
    nd = w.ndim - 2
    stride, dilation = _per_dim(stride, nd, 1), _per_dim(dilation, nd, 1)
    padding, output_padding = _per_dim(padding, nd, 0), _per_dim(output_padding, nd, 0)
    if transposed:
        return _conv_transposed(x, w, bias, stride, padding, dilation, output_padding, groups)
    xp = np.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in padding])
    ks = w.shape[2:]
    out = [(xp.shape[2 + i] - dilation[i] * (ks[i] - 1) - 1) // stride[i] + 1 for i in range(nd)]
    cin, cout = x.shape[1] // groups, w.shape[0] // groups
    result = np.zeros((x.shape[0], w.shape[0], *out), dtype=np.result_type(x, w))
    for k, win in _windows(xp, ks, stride, dilation, out):
        for g in range(groups):
            part = win[:, g * cin : (g + 1) * cin]
            wk = w[(slice(g * cout, (g + 1) * cout), slice(None)) + k]
            result[:, g * cout : (g + 1) * cout] += np.einsum("nc...,oc->no...", part, wk)
    if bias is not None:
        result += bias.reshape((1, -1) + (1,) * nd)
    return result


def _conv_transposed(x, w, bias, stride, padding, dilation, output_padding, groups):
    nd = w.ndim - 2
    ks, ins = w.shape[2:], x.shape[2:]
    full = [(ins[i] - 1) * stride[i] + dilation[i] * (ks[i] - 1) + 1 + output_padding[i] for i in range(nd)]
    cin, cout = x.shape[1] // groups, w.shape[1]
    buf = np.zeros((x.shape[0], cout * groups, *full), dtype=np.result_type(x, w))
    for k in itertools.product(*(range(n) for n in ks)):
        index = [slice(None), slice(None)]
        index += [
            slice(k[i] * dilation[i], k[i] * dilation[i] + (ins[i] - 1) * stride[i] + 1, stride[i]) for i in range(nd)
        ]
        for g in range(groups):
            wk = w[(slice(g * cin, (g + 1) * cin), slice(None)) + k]
            contrib = np.einsum("nc...,co->no...", x[:, g * cin : (g + 1) * cin], wk)
            target = buf[:, g * cout : (g + 1) * cout]
            target[tuple(index)] += contrib
    crop = [slice(None), slice(None)] + [slice(padding[i], full[i] - padding[i]) for i in range(nd)]
    out = buf[tuple(crop)]
    if bias is not None:
        out = out + bias.reshape((1, -1) + (1,) * nd)
    return out


def _pool_geometry(shape, kernel_size, stride, padding, nd):
    ks = list(kernel_size) * nd if len(kernel_size) == 1 else list(kernel_size)
    st = ks if not stride else (list(stride) * nd if len(stride) == 1 else list(stride))
    pad = list(padding) * nd if len(padding) == 1 else list(padding)
    out = [(shape[i] + 2 * pad[i] - ks[i]) // st[i] + 1 for i in range(nd)]
    return ks, st, pad, out


def _avg_pool(x, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
    nd = len(kernel_size)
    spatial = x.shape[-nd:]
    ks, st, pad, out = _pool_geometry(spatial, kernel_size, stride, padding, nd)
    result = np.zeros(x.shape[:-nd] + tuple(out), dtype=np.float64 if x.dtype.kind == "f" else x.dtype)
    for pos in itertools.product(*(range(n) for n in out)):
        lo = [pos[i] * st[i] - pad[i] for i in range(nd)]
        hi = [min(lo[i] + ks[i], spatial[i] + pad[i]) for i in range(nd)]
        clipped = int(np.prod([hi[i] - lo[i] for i in range(nd)]))
        lo_in = [max(v, 0) for v in lo]
        hi_in = [min(hi[i], spatial[i]) for i in range(nd)]
        window = x[(Ellipsis,) + tuple(slice(a, b) for a, b in zip(lo_in, hi_in))]
        valid = int(np.prod([b - a for a, b in zip(lo_in, hi_in)]))
        div = divisor_override or (clipped if count_include_pad else valid)
        result[(Ellipsis,) + pos] = window.reshape(x.shape[:-nd] + (-1,)).sum(-1) / div
    return result


def _max_windows(x, nd, windows):
    """Max and flat argmax (within each spatial plane; first of equal maxima, NaN wins) of each window."""
    spatial = x.shape[-nd:]
    lead = x.shape[:-nd]
    flat = x.reshape(lead + (-1,))
    plane = np.arange(int(np.prod(spatial))).reshape(spatial)
    values, indices = [], []
    for sl in windows:
        idx = plane[sl].reshape(-1)
        vals = flat[..., idx].astype(np.float64)
        key = np.where(np.isnan(vals), np.inf, vals)
        at = np.where(np.isnan(vals).any(-1), np.argmax(np.isnan(vals), -1), np.argmax(key, -1))
        values.append(np.take_along_axis(flat[..., idx], at[..., None], -1)[..., 0])
        indices.append(idx[at])
    return np.stack(values, -1), np.stack(indices, -1).astype(np.int64)


def _max_pool(x, kernel_size, stride, padding, dilation, ceil_mode):
    nd = len(kernel_size)
    spatial = x.shape[-nd:]
    ks, st, pad, _ = _pool_geometry(spatial, kernel_size, stride, padding, nd)
    dil = list(dilation) * nd if len(dilation) == 1 else list(dilation)
    out = [(spatial[i] + 2 * pad[i] - dil[i] * (ks[i] - 1) - 1) // st[i] + 1 for i in range(nd)]
    windows = []
    for pos in itertools.product(*(range(n) for n in out)):
        ranges = []
        for i in range(nd):
            taps = [pos[i] * st[i] - pad[i] + k * dil[i] for k in range(ks[i])]
            ranges.append([t for t in taps if 0 <= t < spatial[i]])
        windows.append(np.ix_(*ranges))
    values, indices = _max_windows(x, nd, windows)
    shape = x.shape[:-nd] + tuple(out)
    return values.reshape(shape), indices.reshape(shape)


def _adaptive_windows(spatial, output_size):
    for pos in itertools.product(*(range(n) for n in output_size)):
        yield tuple(slice((p * n) // o, -((-(p + 1) * n) // o)) for p, n, o in zip(pos, spatial, output_size))


def _adaptive_avg(x, output_size):
    nd = len(output_size)
    lead = x.shape[:-nd]
    vals = [x[(Ellipsis,) + w].reshape(lead + (-1,)).mean(-1) for w in _adaptive_windows(x.shape[-nd:], output_size)]
    return np.stack(vals, -1).reshape(lead + tuple(output_size))


def _adaptive_max(x, output_size):
    nd = len(output_size)
    values, indices = _max_windows(x, nd, list(_adaptive_windows(x.shape[-nd:], output_size)))
    shape = x.shape[:-nd] + tuple(output_size)
    return values.reshape(shape), indices.reshape(shape)


# -- FFT -----------------------------------------------------------------------------------------------


def _norm(out, x_shape, dim, normalization):
    n = int(np.prod([x_shape[d] for d in dim]))
    return out / (np.sqrt(n) if normalization == 1 else n) if normalization and n else out


def _c2c(x, dim, normalization, forward):
    out = np.fft.fftn(x, axes=dim) if forward else np.fft.ifftn(x, axes=dim) * np.prod([x.shape[d] for d in dim])
    return _norm(out, x.shape, dim, normalization)


def _r2c(x, dim, normalization, onesided):
    out = np.fft.rfftn(x, axes=dim) if onesided else np.fft.fftn(x, axes=dim)
    return _norm(out, x.shape, dim, normalization)


def _c2r(x, dim, normalization, last_dim_size):
    sizes = [x.shape[d] for d in dim[:-1]] + [last_dim_size]
    out = np.fft.irfftn(x, s=sizes, axes=dim) * np.prod(sizes)
    shape = list(x.shape)
    shape[dim[-1]] = last_dim_size
    return _norm(out, shape, dim, normalization)


# -- linear algebra prims ----------------------------------------------------------------------------


def _batched(fn, nout=1):
    """Apply ``fn`` to each matrix of a batch and stack the results."""

    def oracle(a, *rest):
        if a.ndim == 2:
            return fn(a, *rest)
        outs = [
            fn(m, *[r[i] if isinstance(r, np.ndarray) and r.ndim > 1 else r for r in rest]) for i, m in enumerate(a)
        ]
        if nout == 1:
            return np.stack(outs)
        return tuple(None if o[0] is None else np.stack(o) for o in zip(*outs))

    return oracle


def _cholesky(a, upper):
    low = np.tril(a)
    full = low + np.conj(np.tril(a, -1)).swapaxes(-1, -2)
    out = np.linalg.cholesky(full)
    return np.conj(out.swapaxes(-1, -2)) if upper else out


def _slogdet(a):
    sign, logabs = np.linalg.slogdet(a)
    return sign, logabs


def _solve(a, b, left):
    if left:
        return np.linalg.solve(a, b)
    return np.swapaxes(np.linalg.solve(np.swapaxes(a, -1, -2), np.swapaxes(b, -1, -2)), -1, -2)


def _tri_solve(b, a, upper, left, unitriangular):
    t = np.triu(a) if upper else np.tril(a)
    if unitriangular:
        n = a.shape[-1]
        t = t - t * np.eye(n) + np.eye(n)
    return _solve(t, b, left)


def _lu(a, pivot):
    p, low, up = scipy.linalg.lu(a)
    return p, low, up


def _lu_factor(a, pivot):
    lu, piv = scipy.linalg.lu_factor(a)
    return lu, (piv + 1).astype(np.int32)


def _geqrf(a):
    h, tau = np.linalg.qr(a, mode="raw")
    return h.T, tau


def _householder(a, tau):
    m, n = a.shape
    q = np.eye(m, dtype=np.result_type(a, tau))
    for i in range(tau.shape[-1]):
        v = np.zeros(m, dtype=q.dtype)
        v[i] = 1
        v[i + 1 :] = a[i + 1 :, i]
        q = q @ (np.eye(m) - tau[i] * np.outer(v, np.conj(v)))
    return q[:, :n]


def _qr(a, mode):
    q, r = np.linalg.qr(a, mode="complete" if mode == "complete" else "reduced")
    return (np.zeros(0, a.dtype) if mode == "r" else q), r


def _eigh(a, uplo):
    return np.linalg.eigvalsh(a, UPLO=uplo), None


def _svd(a, full_matrices):
    return None, np.linalg.svd(a, compute_uv=False), None


def _adjoint(x):
    return np.conj(np.swapaxes(x, -1, -2))


def _orthonormality(q, what: str, tol: float) -> str | None:
    """``q``'s columns orthonormal (``QᴴQ = I``) within ``tol``."""
    gap = np.abs(_adjoint(q) @ q - np.eye(q.shape[-1])).max(initial=0.0)
    return None if gap <= tol else f"{what} are not orthonormal: max |QᴴQ - I| = {gap:.3g} > {tol:.3g}"


def _backward_error_tol(outputs, a) -> tuple[float, float]:
    """A backward-stable factorisation's error bound, ``(orthonormality, residual)``: 30·n·eps (·‖A‖)."""
    eps = max(float(np.finfo(o.dtype).eps) for o in outputs if isinstance(o, np.ndarray) and o.dtype.kind in "fc")
    bound = 30 * max(a.shape[-2:]) * eps
    return bound, bound * max(1.0, float(np.abs(a).max(initial=0.0)))


def _eigh_vectors(outputs, a, uplo):
    """``V`` orthonormal and ``A·V = V·diag(w)`` for the Hermitian ``A`` that ``uplo``'s triangle defines."""
    w, v = outputs
    tri = np.tril(a) if uplo == "L" else np.triu(a)
    herm = tri + _adjoint(tri) - np.einsum("...ii->...i", tri).real[..., None] * np.eye(a.shape[-1])
    ortho, resid = _backward_error_tol(outputs, herm)
    problem = _orthonormality(v, "eigenvectors", ortho)
    gap = np.abs(herm @ v - v * w[..., None, :]).max(initial=0.0)
    if problem is None and gap > resid:
        problem = f"A·V differs from V·diag(w) by {gap:.3g} > {resid:.3g} (wrong eigenvectors)"
    return problem


def _svd_vectors(outputs, a, full_matrices):
    """``U`` and ``Vᴴ`` orthonormal and ``U·diag(S)·Vᴴ = A``."""
    u, s, vh = outputs
    ortho, resid = _backward_error_tol(outputs, a)
    problem = _orthonormality(u, "left singular vectors", ortho)
    problem = problem or _orthonormality(_adjoint(vh), "right singular vectors", ortho)
    k = s.shape[-1]
    gap = np.abs((u[..., :, :k] * s[..., None, :]) @ vh[..., :k, :] - a).max(initial=0.0)
    if problem is None and gap > resid:
        problem = f"U·diag(S)·Vᴴ differs from A by {gap:.3g} > {resid:.3g} (wrong singular vectors)"
    return problem


def _lstsq(a, b, rcond):
    return np.linalg.lstsq(a, b, rcond=None)[0], None, None, None


# -- table -------------------------------------------------------------------------------------------


def _basic_lines():
    mm = [
        K(TA((3, 4), T), TA((4, 2))),
        K(TA((2, 3), S), TA((3, 5), T)),
        K(TA((0, 3)), TA((3, 4))),
        K(TA((3, 0)), TA((0, 2))),
    ]
    bmm = [K(TA((2, 3, 4), T), TA((2, 4, 2))), K(TA((3, 2, 3), S), TA((3, 3, 2))), K(TA((0, 2, 3)), TA((0, 3, 1)))]
    matmul = [
        K(TA((3, 4), T), TA((4, 2))),
        K(TA((4,), S), TA((4,))),
        K(TA((2, 3, 4)), TA((4,))),
        K(TA((3,)), TA((2, 3, 4), T)),
        K(TA((2, 1, 3, 4)), TA((3, 4, 2))),
        K(TA((0, 3)), TA((3,))),
    ]
    addmm = [
        K(TA((3, 2), T), TA((3, 4)), TA((4, 2)), beta=2, alpha=3),
        K(TA((2,)), TA((3, 4), S), TA((4, 2))),
        K(TA((3, 2), specials=True), TA((3, 4)), TA((4, 2)), beta=0),
        K(TA(()), TA((0, 4)), TA((4, 2))),
    ]
    addbmm = [
        K(TA((3, 2), T), TA((2, 3, 4)), TA((2, 4, 2)), beta=2, alpha=3),
        K(TA((2,)), TA((3, 3, 4), S), TA((3, 4, 2))),
    ]
    baddbmm = [
        K(TA((2, 3, 2), T), TA((2, 3, 4)), TA((2, 4, 2)), beta=2, alpha=3),
        K(TA((2,)), TA((3, 3, 4), S), TA((3, 4, 2))),
    ]
    addmv = [
        K(TA((3,)), TA((3, 4), T), TA((4,)), beta=2, alpha=3),
        K(TA(()), TA((2, 5), S), TA((5,))),
        K(TA((0,)), TA((0, 2)), TA((2,))),
    ]
    addr = [
        K(TA((3, 4), T), TA((3,)), TA((4,)), beta=2, alpha=3),
        K(TA((4,)), TA((2,), S), TA((4,))),
        K(TA(()), TA((0,)), TA((2,))),
    ]
    vecs = [K(TA((4,), S), TA((4,))), K(TA((3,)), TA((3,), S)), K(TA((0,)), TA((0,))), K(TA((1,)), TA((1,)))]
    outer = [K(TA((3,), S), TA((4,))), K(TA((2,)), TA((0,))), K(TA((1,)), TA((5,), S))]
    mv = [K(TA((3, 4), T), TA((4,))), K(TA((2, 5), S), TA((5,), S)), K(TA((0, 3)), TA((3,)))]
    inner = [K(TA((3, 4), T), TA((2, 4))), K(TA((4,)), TA((4,), S)), K(TA(()), TA((2, 3))), K(TA((2, 3)), TA((3,)))]
    linear = [K(TA((3, 4), T), TA((2, 4)), TA((2,))), K(TA((2, 3, 4)), TA((5, 4), S)), K(TA((4,)), TA((3, 4)), TA(()))]
    close = [
        K(TA((3, 4)), TA((3, 4))),
        K(TA((3,)), TA((3,)), 0.5, 3.0),
        K(TA((2, 3), specials=True), TA((2, 3), specials=True), equal_nan=True),
        K(TA((2, 1)), TA((1, 3)), 1.0, 9.0),
    ]
    same = Gen(lambda rng, d: TA((3, 4), T, domain="small").make(np.random.default_rng(7), d))
    equal = [
        K(same, same),
        K(TA((3, 4), domain="small"), TA((3, 4), domain="small")),
        K(TA((2,)), TA((3,))),
        K(TA(()), TA(())),
    ]
    dist = [
        K(TA((3, 4), T), TA((3, 4))),
        K(TA((3, 1)), TA((4,)), 1),
        K(TA((5,), S), TA((5,)), float("inf")),
        K(TA(()), TA(()), 3),
    ]
    trace = [K(TA((3, 4), T)), K(TA((4, 3), S)), K(TA((0, 2)))]
    return [
        entry("mm", lambda a, b: a @ b, mm, MATMUL, tolerances=MTOL),
        entry("prims::mm", lambda a, b: a @ b, mm, MATMUL, tolerances=MTOL),
        entry("bmm", lambda a, b: a @ b, bmm, MATMUL, tolerances=MTOL),
        entry("prims::bmm", lambda a, b: a @ b, bmm, MATMUL, tolerances=MTOL),
        entry("matmul", np.matmul, matmul, MATMUL, tolerances=MTOL),
        entry("addmm", _addmm, addmm, MATMUL, tolerances=MTOL),
        entry("addbmm", _addbmm, addbmm, MATMUL, tolerances=MTOL),
        entry("baddbmm", _addmm, baddbmm, MATMUL, tolerances=MTOL),
        entry("addmv", _addmv, addmv, MATMUL, tolerances=MTOL),
        entry("addr", _addr, addr, MATMUL, tolerances=MTOL),
        entry("dot", np.dot, vecs, MATMUL, tolerances=MTOL),
        entry("vdot", np.vdot, vecs, MATMUL, tolerances=MTOL),
        entry("inner", np.inner, inner, MATMUL, tolerances=MTOL),
        entry("outer", np.outer, outer, MATMUL, tolerances=MTOL),
        entry("ger", np.outer, outer, MATMUL, tolerances=MTOL),
        entry("mv", lambda a, v: a @ v, mv, MATMUL, tolerances=MTOL),
        entry("linear", _linear, linear, FLOATING, tolerances=MTOL),
        entry("allclose", _allclose, close, FLOAT),
        entry("equal", _equal, equal, MATMUL),
        entry("dist", _dist, dist, FLOATING, tolerances=MTOL),
        entry("trace", _trace, trace, MATMUL, tolerances=MTOL),
    ]


def _conv_lines():
    conv = [
        K(TA((2, 2, 6)), TA((3, 2, 3)), TA((3,)), [1], [0], [1], False, [0], 1),
        K(TA((1, 4, 5, 5), T), TA((4, 2, 3, 2)), None, [2, 1], [1, 0], [1, 2], False, [0, 0], 2),
        K(TA((2, 3, 4)), TA((3, 2, 3)), TA((2,)), [2], [1], [1], True, [1], 1),
        K(TA((1, 2, 3, 3), S), TA((2, 2, 2, 2)), None, [1, 2], [0, 1], [1, 1], True, [0, 1], 2),
        K(TA((1, 1, 3, 3, 3)), TA((2, 1, 2, 2, 2)), TA((2,)), [1], [1], [1], False, [0], 1),
    ]
    pool_x = TA((2, 3, 6, 5), T)
    avg = [
        K(pool_x, [2, 2], [2, 2], [0, 0], False, True, None),
        K(TA((1, 2, 7), S), [3], [2], [1], False, False, None),
        K(pool_x, [3, 2], [1, 2], [1, 1], False, True, None),
        K(TA((2, 5, 5)), [2, 3], [], [1, 1], False, False, 4),
        K(TA((1, 1, 4, 4, 4)), [2, 2, 2], [2], [0], False, True, None),
    ]

    def distinct(shape, layout="contiguous"):
        def fn(rng, dtype):
            n = int(np.prod(shape))
            return Arr(((rng.permutation(n) - n // 2) * 0.5).reshape(shape), dtype, layout)

        return Gen(fn)

    mx = [
        K(distinct((2, 3, 6, 5), T), [2, 2], [2, 2], [0, 0], [1, 1], False),
        K(distinct((1, 2, 7), S), [3], [2], [1], [1], False),
        K(distinct((2, 5, 6)), [2, 3], [1, 2], [1, 1], [2, 1], False),
        K(TA((1, 4, 4), specials=True), [2, 2], [], [0, 0], [1, 1], False),
    ]
    adaptive = [
        K(TA((2, 3, 6, 5), T), [3, 2]),
        K(TA((1, 2, 7), S), [3]),
        K(TA((2, 5, 5)), [5, 1]),
        K(TA((1, 2, 4, 4, 3)), [2, 3, 2]),
    ]
    adaptive_max = [
        K(distinct((2, 3, 6, 5), T), [3, 2]),
        K(distinct((1, 2, 7), S), [3]),
        K(distinct((2, 5, 5)), [5, 1]),
    ]
    ctol = {**MTOL, "float32": (1e-4, 1e-4), "complex64": (1e-4, 1e-4)}
    return [
        entry("prims::convolution", _conv, conv, FLOATING, tolerances=ctol),
        entry("prims::avg_pool", _avg_pool, avg, FLOAT, tolerances=MTOL),
        entry("prims::max_pool", _max_pool, mx, FLOAT + INT[1:]),
        entry("prims::adaptive_avg_pool", _adaptive_avg, adaptive, FLOAT, tolerances=MTOL),
        entry("prims::adaptive_max_pool", _adaptive_max, adaptive_max, FLOAT + INT[1:]),
    ]


def _fft_lines():
    c2c = [
        K(TA((4, 6), T), [1], 0, True),
        K(TA((3, 4, 5), S), [0, 2], 1, False),
        K(TA((8,)), [0], 2, True),
        K(TA((2, 3)), [0, 1], 0, False),
    ]
    r2c = [
        K(TA((4, 6), T), [1], 0, True),
        K(TA((3, 4, 5), S), [0, 2], 1, True),
        K(TA((8,)), [0], 2, False),
        K(TA((2, 5)), [0, 1], 0, True),
    ]
    c2r = [
        K(TA((4, 4), T), [1], 0, 6),
        K(TA((3, 4, 3), S), [0, 2], 1, 5),
        K(TA((5,)), [0], 2, 8),
        K(TA((2, 3)), [0, 1], 0, 4),
    ]
    ftol = {"float32": (1e-4, 1e-4), "float64": (1e-9, 1e-9), "complex64": (1e-4, 1e-4), "complex128": (1e-9, 1e-9)}
    return [
        entry("prims::fft_c2c", _c2c, c2c, COMPLEX, tolerances=ftol),
        entry("prims::fft_r2c", _r2c, r2c, (ow.float32, ow.float64), tolerances=ftol),
        entry("prims::fft_c2r", _c2r, c2r, COMPLEX, tolerances=ftol),
    ]


def _linalg_lines():
    sq, sq_t, batch = _well(3, 3), _well(4, 4, layout=T), _well(2, 3, 3)
    spd, spd_b = _well(3, 3, spd=True), _well(2, 4, 4, spd=True, layout=T)
    one = [K(sq), K(sq_t), K(batch), K(_well(1, 1))]
    lu = [K(sq, True), K(sq_t, True), K(batch, True), K(_mat(4, 3), True), K(_mat(2, 5, layout=T), True)]
    rect = [K(_mat(4, 3)), K(_mat(3, 5, layout=T)), K(sq), K(_mat(2, 4, 2))]
    hh = [
        K(_mat(4, 3), _mat(3)),
        K(_mat(5, 3, layout=T), _mat(2)),
        K(_mat(2, 4, 2), _mat(2, 2)),
        K(_mat(3, 0), _mat(0)),
    ]
    return [
        entry("prims::det", _batched(np.linalg.det), one, LINALG, tolerances=LTOL),
        entry("prims::inverse", _batched(np.linalg.inv), one, LINALG, tolerances=LTOL),
        entry("prims::slogdet", _batched(_slogdet, 2), one, LINALG, tolerances=LTOL),
        entry(
            "prims::matrix_exp",
            _batched(scipy.linalg.expm),
            [K(_mat(3, 3)), K(_mat(4, 4, layout=T)), K(_mat(2, 2, 2))],
            LINALG,
            tolerances=LTOL,
        ),
        entry(
            "prims::cholesky",
            _batched(_cholesky),
            [K(spd, False), K(spd_b, True), K(_well(1, 1, spd=True), False)],
            LINALG,
            tolerances=LTOL,
        ),
        entry(
            "prims::solve",
            _solve,
            [K(sq, _mat(3, 2), True), K(batch, _mat(2, 3, 4), True), K(sq_t, _mat(2, 4, layout=T), False)],
            LINALG,
            tolerances=LTOL,
        ),
        entry(
            "prims::triangular_solve",
            _tri_solve,
            [
                K(_mat(3, 2), sq, True, True, False),
                K(_mat(2, 4, layout=T), sq_t, False, False, False),
                K(_mat(2, 3, 2), batch, False, True, True),
            ],
            LINALG,
            tolerances=LTOL,
        ),
        entry("prims::lu", _batched(_lu, 3), lu[:3], LINALG, tolerances=LTOL),
        entry("prims::lu_factor", _batched(_lu_factor, 2), lu, LINALG, tolerances=LTOL),
        entry(
            "prims::qr",
            _qr,
            [K(_mat(4, 3), "reduced"), K(_mat(3, 5, layout=T), "complete"), K(_mat(2, 4, 2), "r")],
            LINALG,
            tolerances=LTOL,
        ),
        entry("prims::geqrf", _batched(_geqrf, 2), rect, LINALG, tolerances=LTOL),
        entry(
            "prims::eigh",
            _batched(_eigh, 2),
            [K(spd, "L"), K(spd_b, "U"), K(_mat(3, 3), "L")],
            LINALG,
            tolerances=LTOL,
            verify=_eigh_vectors,
        ),
        entry(
            "prims::svd",
            _batched(_svd, 3),
            [K(_mat(4, 3), False), K(_mat(3, 5, layout=T), True), K(_mat(2, 3, 3), False)],
            LINALG,
            tolerances=LTOL,
            verify=_svd_vectors,
        ),
        entry("prims::householder_product", _batched(_householder), hh, LINALG, tolerances=LTOL),
        entry(
            "prims::lstsq",
            _batched(_lstsq, 4),
            [K(_mat(5, 3), _mat(5, 2), None), K(_mat(4, 2, layout=T), _mat(4, 3), None)],
            LINALG,
            tolerances=LTOL,
        ),
    ]


register(*_basic_lines(), *_conv_lines(), *_fft_lines(), *_linalg_lines())
