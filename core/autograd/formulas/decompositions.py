"""Derivatives of the matrix decompositions: svd, eig, qr, lu, lu_factor, lstsq, matrix_exp.

The formulas are PyTorch's (``FunctionsManual.cpp``: ``svd_backward``, ``linalg_eig_backward``,
``linalg_qr_backward``, ``linalg_lu_backward``, ``pinv_backward``, ``differential_analytic_matrix_function``),
written with canonical ops so that they differentiate again. They hold where the
decomposition is a smooth function of the input: distinct singular values (svd) and
eigenvalues (eig), full rank (qr, lu, lstsq).

Singular and eigen vectors are defined up to a phase (a sign for real inputs): a loss
that depends on that choice has no gradient. As in PyTorch, the formulas assume the
loss is invariant (e.g. ``U @ Vh``, ``abs(U)``, ``S``) and raise ``RuntimeError`` for
complex inputs when the incoming gradient shows it is not.
"""

from __future__ import annotations

from ._common import C, conj, formula

_SVD_PHASE = (
    "svd_backward: The singular vectors in the complex case are specified up to multiplication by e^{i phi}. "
    "The specified loss function depends on this phase term, making it ill-defined."
)
_EIG_PHASE = (
    "linalg_eig_backward: The eigenvectors in the complex case are specified up to multiplication by e^{i phi}. "
    "The specified loss function depends on this quantity, so it is ill-defined."
)


def _h(t):
    """Conjugate transpose of the last two dimensions."""
    return conj(C.transpose(t, -2, -1))


def _eye_mask(n: int, device):
    """A boolean (n, n) identity."""
    return C.eye(n, device=device) > 0.5


def _diag(t):
    return C.diagonal(t, 0, -2, -1)


def _off_diagonal_ones(t):
    """``t`` with its diagonal replaced by ones (the divisor of the off-diagonal terms)."""
    return C.where(_eye_mask(t.shape[-1], t.device), 1.0, t).to(t.dtype)


def _skew(t):
    return t - _h(t)


@formula("prims::svd", save=(), save_out=True, materialize=False)
def _svd(ctx, grads):
    """``svd_backward``: the full-matrix factors are narrowed to the k = min(m, n) singular vectors first."""
    g_u, g_s, g_vh = grads
    u, s, vh = ctx.outputs
    full_matrices = ctx.args[1]
    k = s.shape[-1]
    if full_matrices:
        u, vh = C.narrow(u, -1, 0, k), C.narrow(vh, -2, 0, k)
        g_u = None if g_u is None else C.narrow(g_u, -1, 0, k)
        g_vh = None if g_vh is None else C.narrow(g_vh, -2, 0, k)
    if g_u is None and g_vh is None and g_s is None:
        return (None,)
    m, n = u.shape[-2], vh.shape[-1]
    if g_u is None and g_vh is None:  # singular values only: U diag(gS) Vh
        g_s = g_s.to(u.dtype)
        return (C.matmul(u, C.unsqueeze(g_s, -1) * vh) if m >= n else C.matmul(u * C.unsqueeze(g_s, -2), vh),)
    complex_ = u.dtype.is_complex
    uhgu = _skew(C.matmul(_h(u), g_u)) if g_u is not None else None
    vhgv = _skew(C.matmul(vh, _h(g_vh))) if g_vh is not None else None
    if complex_:
        im_u = C.imag(_diag(uhgu)) if uhgu is not None else C.zeros_like(s)
        im_v = C.imag(_diag(vhgv)) if vhgv is not None else C.zeros_like(s)
        if not C.allclose(im_u, -im_v, rtol=1e-2, atol=1e-2):
            raise RuntimeError(_SVD_PHASE)
    s2 = s * s
    e = _off_diagonal_ones(C.unsqueeze(s2, -2) - C.unsqueeze(s2, -1))
    s_row, s_col = C.unsqueeze(s, -2), C.unsqueeze(s, -1)
    if uhgu is not None and vhgv is not None:
        inner = (uhgu * s_row + s_col * vhgv) / e
    elif uhgu is not None:
        inner = uhgu * s_row / e
    else:
        inner = s_col * vhgv / e
    if g_s is not None:
        inner = inner + C.diag_embed(g_s).to(inner.dtype)
    if complex_ and uhgu is not None:
        inner = inner + C.diag_embed(_diag(uhgu) / (2.0 * s))
    if m > k and g_u is not None:
        ga = C.matmul(u, inner)
        gu_sinv = g_u / s_row
        ga = ga + gu_sinv - C.matmul(u, C.matmul(_h(u), gu_sinv))
        return (C.matmul(ga, vh),)
    if n > k and g_vh is not None:
        ga = C.matmul(inner, vh)
        sinv_gvh = g_vh / s_col
        ga = ga + sinv_gvh - C.matmul(C.matmul(sinv_gvh, _h(vh)), vh)
        return (C.matmul(u, ga),)
    return (C.matmul(u, C.matmul(inner, vh)) if m >= n else C.matmul(C.matmul(u, inner), vh),)


@formula("prims::eig", save=(), save_out=True, materialize=False)
def _eig(ctx, grads):
    """``linalg_eig_backward`` (not Hermitian): V^-H (VᴴgV / conj(λⱼ - λᵢ) + diag(gλ)) Vᴴ."""
    g_l, g_v = grads
    values, vectors = ctx.outputs
    vh = _h(vectors)
    if g_v is None:
        if g_l is None:
            return (None,)
        return (C.linalg_solve(vh, C.unsqueeze(g_l, -1) * vh),)
    vhgv = C.matmul(vh, g_v)
    diag = _diag(vhgv)
    if not C.allclose(C.imag(diag), C.zeros_like(C.imag(diag)), rtol=1e-2, atol=1e-2):
        raise RuntimeError(_EIG_PHASE)
    vhgv = vhgv - C.matmul(vh, vectors * C.unsqueeze(C.real(diag), -2))
    lc = conj(values)
    inner = vhgv / _off_diagonal_ones(C.unsqueeze(lc, -2) - C.unsqueeze(lc, -1))
    if g_l is not None:
        inner = C.where(_eye_mask(values.shape[-1], values.device), C.diag_embed(g_l), inner)
    return (C.linalg_solve(vh, C.matmul(inner, vh)),)


def _syminvadj(t):
    """Adjoint of "the Hermitian matrix whose upper triangle is ``t``": t + tᴴ with the real diagonal halved."""
    ret = t + _h(t)
    return ret - 0.5 * C.diag_embed(C.real(_diag(ret))).to(ret.dtype)


def _qr_tall(q, r, g_q, g_r):
    """QR backward for m >= n: (gQ + Q syminvadj(triu(gR Rᴴ - Qᴴ gQ))) R^-H."""
    ga = C.matmul(g_r, _h(r)) if g_r is not None else None
    if g_q is not None:
        qhgq = C.matmul(_h(q), g_q)
        ga = -qhgq if ga is None else ga - qhgq
    ga = C.matmul(q, _syminvadj(C.triu(ga)))
    if g_q is not None:
        ga = ga + g_q
    return C.linalg_solve_triangular(_h(r), ga, upper=False, left=False)


@formula("prims::qr", save=(), save_out=True, materialize=False)
def _qr(ctx, grads):
    """``linalg_qr_backward``; a wide A = [X | Y] is X = Q R₁ (square) and Y = Q R₂."""
    g_q, g_r = grads
    mode = ctx.args[1]
    q, r = ctx.outputs
    if mode == "r":
        raise RuntimeError(
            "The derivative of linalg.qr depends on Q, which is not computed when mode='r'. Please use "
            "linalg.qr(A, mode='reduced') if you are going to differentiate through linalg.qr."
        )
    m, n = q.shape[-2], r.shape[-1]
    if mode == "complete" and m > n:
        raise RuntimeError("The QR decomposition is not differentiable when mode='complete' and nrows > ncols.")
    if g_q is None and g_r is None:
        return (None,)
    if m >= n:
        return (_qr_tall(q, r, g_q, g_r),)
    r1, r2 = C.narrow(r, -1, 0, m), C.narrow(r, -1, m, n - m)
    if g_r is None:
        return (C.cat([_qr_tall(q, r1, g_q, None), C.zeros_like(r2)], -1),)
    g_r1, g_r2 = C.narrow(g_r, -1, 0, m), C.narrow(g_r, -1, m, n - m)
    y_term = C.matmul(C.matmul(q, r2), _h(g_r2))
    g_q = y_term if g_q is None else g_q + y_term
    return (C.cat([_qr_tall(q, r1, g_q, g_r1), C.matmul(q, g_r2)], -1),)


def _lu_backward(g_l, g_u, p, lower, upper, pivot: bool):
    """``linalg_lu_backward`` for A = P L U (L m x k unit lower, U k x n upper)."""
    m, n = lower.shape[-2], upper.shape[-1]
    k = min(m, n)
    g_l = None if g_l is None else C.tril(g_l, -1)
    g_u = None if g_u is None else C.triu(g_u)
    if m == n:
        ga = C.tril(C.matmul(_h(lower), g_l), -1) if g_l is not None else None
        if g_u is not None:
            term = C.triu(C.matmul(g_u, _h(upper)))
            ga = term if ga is None else ga + term
        ga = C.linalg_solve_triangular(_h(upper), ga, upper=False, left=False)
        ga = C.linalg_solve_triangular(_h(lower), ga, upper=True, left=True, unitriangular=True)
    elif m < n:
        u1 = C.narrow(upper, -1, 0, k)
        ga = C.matmul(_h(lower), g_l) if g_l is not None else None
        if g_u is not None:
            term = C.matmul(g_u, _h(upper))
            ga = -term if ga is None else ga - term
        ga = C.linalg_solve_triangular(_h(u1), C.tril(ga, -1), upper=False, left=False)
        if g_u is not None:
            ga = C.cat([ga + C.narrow(g_u, -1, 0, k), C.narrow(g_u, -1, k, n - k)], -1)
        ga = C.linalg_solve_triangular(_h(lower), ga, upper=True, left=True, unitriangular=True)
        if g_u is None:
            ga = C.cat([ga, C.zeros_like(C.narrow(upper, -1, k, n - k))], -1)
    else:
        l1 = C.narrow(lower, -2, 0, k)
        ga = C.matmul(g_u, _h(upper)) if g_u is not None else None
        if g_l is not None:
            term = C.matmul(_h(lower), g_l)
            ga = -term if ga is None else ga - term
        ga = C.linalg_solve_triangular(_h(l1), C.triu(ga), upper=True, left=True, unitriangular=True)
        if g_l is not None:
            ga = C.cat([ga + C.narrow(g_l, -2, 0, k), C.narrow(g_l, -2, k, m - k)], -2)
        ga = C.linalg_solve_triangular(_h(upper), ga, upper=False, left=False)
        if g_l is None:
            ga = C.cat([ga, C.zeros_like(C.narrow(lower, -2, k, m - k))], -2)
    return C.matmul(p.to(ga.dtype), ga) if pivot else ga


@formula("prims::lu", save=(), save_out=True, materialize=False)
def _lu(ctx, grads):
    _, g_l, g_u = grads
    p, lower, upper = ctx.outputs
    if g_l is None and g_u is None:
        return (None,)
    return (_lu_backward(g_l, g_u, p, lower, upper, ctx.args[1]),)


@formula("prims::lu_factor", save=(), save_out=True)
def _lu_factor(ctx, grads):
    """The compact factor's gradient split into L's (strictly lower) and U's (upper) parts."""
    g = grads[0] if isinstance(grads, (list, tuple)) else grads
    lu, pivots = ctx.outputs
    pivot = ctx.args[1]
    p, lower, upper = C.lu_unpack(lu, pivots)
    m, n = lu.shape[-2], lu.shape[-1]
    k = min(m, n)
    return (_lu_backward(C.narrow(g, -1, 0, k), C.narrow(g, -2, 0, k), p, lower, upper, pivot),)


def _pinv_backward(g, pinv, a):
    """``pinv_backward``: the gradient of A from that of pinv(A) (A of full rank)."""
    m, n = a.shape[-2], a.shape[-1]
    pinv_h, g_h = _h(pinv), _h(g)
    if m <= n:
        k = C.matmul(g_h, pinv)
        k_pinv_h = C.matmul(k, pinv_h)
        return (
            -_h(C.matmul(pinv, k))
            + k_pinv_h
            - C.matmul(C.matmul(a, pinv), k_pinv_h)
            + C.matmul(C.matmul(pinv_h, pinv), g_h - C.matmul(k, a))
        )
    k = C.matmul(pinv, g_h)
    pinv_h_k = C.matmul(pinv_h, k)
    return (
        -_h(C.matmul(k, pinv))
        + C.matmul(C.matmul(g_h - C.matmul(a, k), pinv), pinv_h)
        + pinv_h_k
        - C.matmul(C.matmul(pinv_h_k, pinv), a)
    )


@formula("prims::lstsq", save=(0, 1), nondifferentiable=(1, 2, 3))
def _lstsq(ctx, grads):
    """``linalg_lstsq_backward``: X = pinv(A) B; residuals, rank and singular values carry no gradient."""
    g_x = grads[0]
    a, b, _ = ctx.args
    need = ctx.needs_input_grad
    pinv = C.linalg_pinv(a)
    g_a = _pinv_backward(C.matmul(g_x, _h(b)), pinv, a) if need[0] else None
    g_b = C.matmul(_h(pinv), g_x) if need[1] else None
    return (g_a, g_b)


@formula("prims::matrix_exp", save=(0,))
def _matrix_exp(ctx, g):
    """The Fréchet derivative of exp at Aᴴ applied to G: the top-right block of exp([[Aᴴ, G], [0, Aᴴ]])."""
    a = ctx.args[0]
    n = a.shape[-1]
    ah = _h(a)
    g = g.to(a.dtype)
    top = C.cat([ah, g], -1)
    bottom = C.cat([C.zeros_like(ah), ah], -1)
    big = C.linalg_matrix_exp(C.cat([top, bottom], -2))
    return (C.narrow(C.narrow(big, -2, 0, n), -1, n, n),)


def _not_implemented(name: str):
    def raise_at_backward(ctx, grads):
        raise RuntimeError(f"derivative for aten::{name} is not implemented")

    return raise_at_backward


# PyTorch has no derivative for the LDLᵀ factorization or its solve: their results require grad (so a loss
# built on them is not silently cut off from its inputs) and backward through them raises, as in PyTorch.
for _name, _outputs in (("linalg_ldl_factor_ex", (1, 2)), ("linalg_ldl_factor", (1,)), ("linalg_ldl_solve", ())):
    formula(_name, save=(), nondifferentiable=_outputs)(_not_implemented(_name))
